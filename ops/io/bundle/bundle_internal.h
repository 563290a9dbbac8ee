// Internals of graphrt_bundle shared by its source files.
#ifndef GRAPHRT_BUNDLE_INTERNAL_H_
#define GRAPHRT_BUNDLE_INTERNAL_H_

#include <leveldb/table.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/bundle/bundle.h"
#include "graphrt/bundle/bundle.pb.h"

namespace graphrt {
namespace bundle {

constexpr int kMaxRank = 254;  // TensorFlow's TensorShape limit
constexpr int kBundleVersion = 1;

// An SSTable (.index or a V1 file) held in memory and opened with LevelDB.
class Table {
 public:
  ~Table();
  // Checks the layout first (footer, block handles, Snappy lengths): LevelDB
  // allocates blocks by the sizes the file states and trusts them.
  static Status Open(std::string bytes, const std::string& what, std::unique_ptr<Table>* out);
  // Calls fn(key, value) for every entry in order; stops on a non-OK status.
  Status ForEach(const std::function<Status(const std::string&, const std::string&)>& fn) const;
  // NotFound if absent.
  Status Get(const std::string& key, std::string* value) const;

 private:
  Table() = default;
  std::string what_;
  std::unique_ptr<std::string> bytes_;
  std::unique_ptr<leveldb::RandomAccessFile> file_;
  leveldb::Table* table_ = nullptr;
};

// Builds a table of sorted (key, value) pairs with TensorFlow's options:
// 256 KiB blocks, restart interval 16, no compression.
Status BuildTable(const std::vector<std::pair<std::string, std::string>>& sorted, std::string* out);

// Files.
Status ReadFileToString(const std::string& path, std::string* out);
bool FileExists(const std::string& path);
Status SyncDirOf(const std::string& path);
std::string UniqueTempSuffix();
Status ErrnoStatus(const std::string& what, const std::string& path);
// Called before every write, fsync, rename and unlink of a save: the
// fault-injection point of the crash tests (SetFileStepHookForTesting,
// GRAPHRT_TEST_CRASH_AT).
void FileStep(const char* what);

// Overwriting a prefix in place (see BundleWriter in bundle.h): the new
// files go to "<file>.pending" names, the pending index is the commit
// point, then they are renamed over the old ones.
constexpr const char kPendingSuffix[] = ".pending";
// Moves each (from, to) data file to to.pending, writes `index_bytes` as
// the pending index (the commit), then renames all into place; `to` names
// are the prefix's data files.
Status CommitBundle(const std::string& prefix, const std::vector<std::pair<std::string, std::string>>& data_moves,
                    int num_shards, const std::string& index_bytes);

// Proto <-> plain types.
Status DimsFromProto(const TensorShapeProto& p, const std::string& what, std::vector<int64_t>* dims);
void DimsToProto(const std::vector<int64_t>& dims, TensorShapeProto* p);
Status SliceFromProto(const TensorSliceProto& p, const std::string& what, TensorSlice* s);
void SliceToProto(const TensorSlice& s, TensorSliceProto* p);
Status CheckVersion(const VersionDef& v, const std::string& what);

// Fills `out` (dtype set, dims set) from a V1 TensorProto's typed values.
Status ValuesFromTensorProto(const TensorProto& p, int64_t n, const std::string& what, TensorValue* out);
void ValuesToTensorProto(const TensorValue& t, TensorProto* p);

// Checks that the stored slices of `e` lie inside its shape and do not
// overlap (DataLoss naming `what`): slice lookups count covered elements.
// O(n log n) in the number of slices when they vary in at most two
// dimensions (partitioned variables vary in one).
Status CheckSlicesDisjoint(const EntryInfo& e, const std::string& what);
// Whether two slices (inside `full_dims`) share an element.
bool SlicesOverlap(const TensorSlice& a, const TensorSlice& b, const std::vector<int64_t>& full_dims);

}  // namespace bundle
}  // namespace graphrt

#endif  // GRAPHRT_BUNDLE_INTERNAL_H_
