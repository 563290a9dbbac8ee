// graphrt_bundle: TensorFlow checkpoints without the core.
//
// Reads and writes TensorFlow's V2 tensor bundle (`P.index` + `P.data-*`),
// reads (and, for the V1 Save ops, writes) V1 TensorSlice checkpoints. Plain
// types only: a tensor is a TensorFlow DataType number, dims and either raw
// little-endian bytes or, for DT_STRING, a vector of strings. Formats:
// /work/shared/tf_proto_facts.md §4, §5, §8.
//
// Sizes read from a file are checked before anything is allocated from them:
// dims follow graphrt's size rule (graphrt/shape_limits.h), entry offsets and
// sizes must lie inside the data file, and table block handles inside the
// table file.
#ifndef GRAPHRT_BUNDLE_BUNDLE_H_
#define GRAPHRT_BUNDLE_BUNDLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace graphrt {
namespace bundle {

// Canonical status codes (the same numbers as GR_Code / TensorFlow's).
enum Code : int {
  kOk = 0,
  kInvalidArgument = 3,
  kNotFound = 5,
  kAlreadyExists = 6,
  kFailedPrecondition = 9,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kDataLoss = 15,
};

struct Status {
  int code = kOk;
  std::string message;
  bool ok() const { return code == kOk; }
  static Status OK() { return Status(); }
};
Status MakeStatus(int code, std::string message);

// TensorFlow DataType numbers used here.
enum DType : int {
  DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 5, DT_INT8 = 6,
  DT_STRING = 7, DT_COMPLEX64 = 8, DT_INT64 = 9, DT_BOOL = 10, DT_QINT8 = 11,
  DT_QUINT8 = 12, DT_QINT32 = 13, DT_BFLOAT16 = 14, DT_QINT16 = 15, DT_QUINT16 = 16,
  DT_UINT16 = 17, DT_COMPLEX128 = 18, DT_HALF = 19, DT_UINT32 = 22, DT_UINT64 = 23,
};
// Bytes per element of a fixed-size dtype; 0 for strings and unsupported types.
int DTypeSize(int dtype);
// True for the dtypes a checkpoint here can hold (fixed-size ones and strings).
bool DTypeSupported(int dtype);
// "float", "int32", ... (TensorFlow's spelling), or "dtype <n>".
std::string DTypeName(int dtype);
std::string ShapeString(const std::vector<int64_t>& dims);

// Element count under the size rule (dims >= 0, product of nonzero dims <=
// 2^58); InvalidArgument naming `what` otherwise.
Status NumElements(const std::vector<int64_t>& dims, const std::string& what, int64_t* n);

struct TensorValue {
  int dtype = 0;
  std::vector<int64_t> dims;
  std::string bytes;                 // fixed-size dtypes: row-major, little-endian
  std::vector<std::string> strings;  // DT_STRING
};

// One dimension of a slice: `length` -1 = the whole dimension.
struct Extent {
  int64_t start = 0;
  int64_t length = -1;
  bool full() const { return length < 0; }
};
// A slice of a tensor; no extents = the whole tensor (any rank).
struct TensorSlice {
  std::vector<Extent> extents;
  bool IsFull() const;
  std::string DebugString() const;  // "-:0,10:14,1"
};

// "start,length" / "-" per dim, separated by ':' (TensorFlow's slice spec).
Status ParseSlice(const std::string& spec, TensorSlice* out);
// A shape_and_slices item: "" (whole, *full_dims untouched, *has_shape =
// false) or "d0 d1 ... slice".
Status ParseShapeAndSlice(const std::string& spec, bool* has_shape, std::vector<int64_t>* full_dims,
                          TensorSlice* slice);
// Checks `slice` against `full_dims` and gives the slice's dims; a slice
// with no extents means the whole tensor.
Status SliceDims(const TensorSlice& slice, const std::vector<int64_t>& full_dims,
                 std::vector<int64_t>* dims);
// `slice` with every extent made explicit (full ones -> 0, dim).
TensorSlice Canonical(const TensorSlice& slice, const std::vector<int64_t>& full_dims);

// Key of a slice entry (V1 data keys, V2 partitioned entries): OrderedCode
// of (0, name, rank, start/length per dim).
std::string EncodeTensorNameSlice(const std::string& name, const TensorSlice& slice,
                                  int rank);

// CRC32C (Castagnoli) and TensorFlow's masking.
uint32_t Crc32c(const char* data, size_t n);
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);
uint32_t MaskCrc(uint32_t crc);
uint32_t UnmaskCrc(uint32_t masked);

// Copies the part of `src` (slice `src_slice` of a tensor of `full_dims`)
// that lies inside `dst_slice` into `dst` (shaped as dst_slice). Returns the
// number of elements copied.
int64_t CopySliceOverlap(const TensorValue& src, const TensorSlice& src_slice, TensorValue* dst,
                         const TensorSlice& dst_slice, const std::vector<int64_t>& full_dims);

// ----------------------------------------------------------------- reading

struct EntryInfo {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> dims;          // the full tensor's shape
  std::vector<TensorSlice> slices;    // the slices stored (one full slice if whole)
  // V2, a tensor stored whole: where its bytes are (-1 otherwise).
  int shard_id = -1;
  int64_t offset = -1;
};

class CheckpointReader {
 public:
  virtual ~CheckpointReader() = default;
  // Opens a V2 bundle (`prefix.index` exists) or else a V1 checkpoint
  // (`prefix` itself, a glob pattern, or `prefix-?????-of-?????`).
  static Status Open(const std::string& prefix, std::unique_ptr<CheckpointReader>* out);
  static Status OpenV2(const std::string& prefix, std::unique_ptr<CheckpointReader>* out);
  static Status OpenV1(const std::string& pattern, std::unique_ptr<CheckpointReader>* out);
  // V2 from in-memory index and data-shard bytes (fuzzing, tests).
  static Status OpenV2FromMemory(const std::string& index, std::vector<std::string> shards,
                                 std::unique_ptr<CheckpointReader>* out);
  // V1 from the bytes of one file (fuzzing, tests).
  static Status OpenV1FromMemory(const std::string& file, std::unique_ptr<CheckpointReader>* out);

  bool is_v1() const { return v1_; }
  const std::string& prefix() const { return prefix_; }
  // Every tensor, sorted by name.
  const std::vector<EntryInfo>& entries() const { return entries_; }
  const EntryInfo* Find(const std::string& name) const;
  // The whole tensor.
  Status Lookup(const std::string& name, TensorValue* out);
  // A slice of it (checked against the stored shape).
  Status LookupSlice(const std::string& name, const TensorSlice& slice, TensorValue* out);
  // The whole tensor of a fixed-size dtype, read straight into the buffer
  // `alloc(dims, &dst)` provides (dst: exactly the tensor's bytes) without
  // an intermediate copy where the checkpoint allows.
  using Allocator = std::function<Status(const std::vector<int64_t>& dims, char** dst)>;
  Status LookupInto(const std::string& name, const Allocator& alloc);

 protected:
  CheckpointReader() = default;
  // Reads stored slice `index` of `entry` (shaped as that slice).
  virtual Status ReadStored(const EntryInfo& entry, size_t index, TensorValue* out) = 0;
  // A whole, unsliced fixed-size tensor into alloc's buffer; by default
  // through ReadStored and a copy.
  virtual Status ReadWholeInto(const EntryInfo& entry, const Allocator& alloc);
  Status NotFoundError(const std::string& name) const;

  bool v1_ = false;
  std::string prefix_;
  std::vector<EntryInfo> entries_;
};

// ----------------------------------------------------------------- writing

std::string DataFilename(const std::string& prefix, int shard, int num_shards);
std::string IndexFilename(const std::string& prefix);

// Writes a V2 bundle. Crash-safe: data and index go to temporary files and
// are fsynced; a prefix saved for the first time gets its index last, so a
// reader never sees a half-written checkpoint, and other prefixes (earlier
// checkpoints) are never touched. Overwriting an existing prefix is atomic
// too, beyond TensorFlow (whose data-then-index renames leave new data
// beside the old index when a crash falls between them): the new files are
// first renamed to "<file>.pending", the pending index is renamed last (the
// commit point), and only then are they renamed over the old files. A crash
// before the commit leaves the old checkpoint as it was; after it, readers
// (CheckpointReader::Open) read the pending files, and the next save of
// the prefix completes the renames. That save also removes what crashed
// saves of the prefix left. One writer per prefix at a time.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();  // abandons (removes temporaries) unless Finish succeeded
  const Status& status() const { return status_; }
  Status Add(const std::string& name, const TensorValue& t);
  // A fixed-size dtype's bytes without copying them into a TensorValue.
  Status Add(const std::string& name, int dtype, const std::vector<int64_t>& dims, const char* data, size_t size);
  // A slice of the tensor `name` of shape `full_dims` (partitioned variables).
  Status AddSlice(const std::string& name, const std::vector<int64_t>& full_dims,
                  const TensorSlice& slice, const TensorValue& t);
  Status Finish();

 private:
  Status AddEntry(int dtype, const std::vector<int64_t>& dims, const char* data, size_t size,
                  const std::vector<std::string>* strings, std::string* entry_bytes);
  std::string prefix_;
  std::string data_tmp_, index_tmp_;
  int data_fd_ = -1;
  int64_t offset_ = 0;
  bool finished_ = false;
  Status status_;
  std::map<std::string, std::string> entries_;  // key -> serialized BundleEntryProto
  struct Sliced;
  std::map<std::string, std::unique_ptr<Sliced>> sliced_;
};

// Merges V2 bundles into `dest` (MergeV2Checkpoints): data files are renamed
// and renumbered, the merged index is written last, the input indexes are
// removed; with delete_old_dirs each input's directory is removed if empty.
Status MergeBundles(const std::vector<std::string>& prefixes, const std::string& dest,
                    bool delete_old_dirs, bool allow_missing_files);

// Writes a V1 checkpoint file (Save / SaveSlices): each tensor whole or one
// slice of it. Crash-safe in the same way (temporary file, fsync, rename).
struct V1Item {
  std::string name;
  std::vector<int64_t> full_dims;
  TensorSlice slice;  // no extents = whole tensor
  TensorValue value;  // shaped as the slice
};
Status WriteV1Checkpoint(const std::string& filename, const std::vector<V1Item>& items);

// An SSTable of (key, value) pairs sorted bytewise, with TensorFlow's table
// options (the .index / V1 file format); for tools and tests that need a
// hand-made index.
Status BuildIndexTable(const std::vector<std::pair<std::string, std::string>>& sorted, std::string* out);

// Writes `bytes` to `path` through a temporary file, fsync and rename.
Status WriteFileAtomically(const std::string& path, const std::string& bytes);

// True when `prefix` holds a committed V2 bundle: its .index, or the
// pending index of an overwrite that a crash interrupted (readable).
bool V2BundleExists(const std::string& prefix);

// Completes a committed overwrite of `prefix` that a crash interrupted (the
// pending files renamed into place), then removes what crashed saves of it
// left (temporaries, uncommitted pending files). Every save of `prefix`
// does this first; a Saver also does it for earlier checkpoints it finds.
Status RecoverBundle(const std::string& prefix);

// Tests: `hook(n, what)` runs before the process's nth file step of a save
// (each write, fsync, rename, unlink; `what` names it), e.g. to kill the
// process there. Empty: none. The environment variable
// GRAPHRT_TEST_CRASH_AT=N raises SIGKILL at step N (end-to-end tests).
void SetFileStepHookForTesting(std::function<void(uint64_t step, const char* what)> hook);

}  // namespace bundle
}  // namespace graphrt

#endif  // GRAPHRT_BUNDLE_BUNDLE_H_
