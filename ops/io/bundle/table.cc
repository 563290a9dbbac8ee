// SSTables through LevelDB (the .index of a V2 bundle, a V1 checkpoint file:
// TensorFlow's table format is LevelDB's), plus the file helpers.
#include <fcntl.h>
#include <leveldb/comparator.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table_builder.h>
#include <snappy.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "bundle_internal.h"

namespace graphrt {
namespace bundle {

namespace {

constexpr uint64_t kFooterSize = 48;
constexpr uint64_t kBlockTrailerSize = 5;  // type byte + masked crc

class MemoryFile : public leveldb::RandomAccessFile {
 public:
  explicit MemoryFile(const std::string* bytes) : bytes_(bytes) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result, char*) const override {
    if (offset > bytes_->size()) return leveldb::Status::IOError("read past the end of the table");
    const size_t avail = bytes_->size() - static_cast<size_t>(offset);
    *result = leveldb::Slice(bytes_->data() + offset, n < avail ? n : avail);
    return leveldb::Status::OK();
  }

 private:
  const std::string* bytes_;
};

class StringSink : public leveldb::WritableFile {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    out_->append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }

 private:
  std::string* out_;
};

bool GetVarint64(const char** p, const char* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *p < end; shift += 7) {
    const uint64_t byte = static_cast<unsigned char>(**p);
    ++*p;
    result |= (byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *v = result;
      return true;
    }
  }
  return false;
}

struct Handle {
  uint64_t offset = 0, size = 0;
};

// The layout check that LevelDB leaves to its callers (it allocates a
// block's buffer, and a Snappy block's output, by sizes read from the file):
// every block handle lies inside the file and every compressed block is
// valid Snappy, so no allocation is larger than what the file really holds.
class LayoutChecker {
 public:
  LayoutChecker(const std::string& bytes, const std::string& what) : b_(bytes), what_(what) {}

  Status Check() {
    if (b_.size() < kFooterSize)
      return Corrupt("file is too short to be an sstable (" + std::to_string(b_.size()) + " bytes)");
    const char* footer = b_.data() + b_.size() - kFooterSize;
    static const unsigned char kMagic[8] = {0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb};
    if (std::memcmp(footer + 40, kMagic, 8) != 0) return Corrupt("not an sstable (bad magic number)");
    const char* p = footer;
    Handle meta, index;
    if (!GetHandle(&p, footer + 40, &meta) || !GetHandle(&p, footer + 40, &index))
      return Corrupt("bad block handle in the footer");
    Status s = CheckHandle(meta, "metaindex");
    if (!s.ok()) return s;
    s = CheckHandle(index, "index");
    if (!s.ok()) return s;
    std::string index_block;
    s = BlockContents(index, &index_block);
    if (!s.ok()) return s;
    // Every value of the index block is the handle of a data block.
    return ForEachValue(index_block, [&](const char* v, const char* vend) {
      Handle h;
      if (!GetHandle(&v, vend, &h)) return Corrupt("bad data block handle in the index block");
      Status st = CheckHandle(h, "data");
      if (!st.ok()) return st;
      return ValidateCompressed(h);
    });
  }

 private:
  Status Corrupt(const std::string& why) const { return MakeStatus(kDataLoss, what_ + ": " + why); }

  static bool GetHandle(const char** p, const char* end, Handle* h) {
    return GetVarint64(p, end, &h->offset) && GetVarint64(p, end, &h->size);
  }

  Status CheckHandle(const Handle& h, const char* kind) const {
    const uint64_t limit = b_.size() - kFooterSize;
    if (h.offset > limit || h.size > limit - h.offset || kBlockTrailerSize > limit - h.offset - h.size)
      return Corrupt(std::string(kind) + " block [" + std::to_string(h.offset) + ", +" + std::to_string(h.size) +
                     ") lies outside the file");
    return Status();
  }

  Status ValidateCompressed(const Handle& h) const {
    const char type = b_[static_cast<size_t>(h.offset + h.size)];
    if (type == 0) return Status();
    if (type != 1) return Corrupt("unknown block compression type " + std::to_string(static_cast<int>(type)));
    if (!snappy::IsValidCompressedBuffer(b_.data() + h.offset, static_cast<size_t>(h.size)))
      return Corrupt("corrupted Snappy-compressed block");
    return Status();
  }

  Status BlockContents(const Handle& h, std::string* out) const {
    Status s = ValidateCompressed(h);
    if (!s.ok()) return s;
    const char* data = b_.data() + h.offset;
    if (b_[static_cast<size_t>(h.offset + h.size)] == 1) {
      if (!snappy::Uncompress(data, static_cast<size_t>(h.size), out)) return Corrupt("corrupted Snappy-compressed block");
    } else {
      out->assign(data, static_cast<size_t>(h.size));
    }
    return Status();
  }

  template <typename Fn>
  Status ForEachValue(const std::string& block, Fn fn) const {
    if (block.size() < 4) return Corrupt("block too short");
    uint32_t num_restarts = 0;
    std::memcpy(&num_restarts, block.data() + block.size() - 4, 4);  // fixed32, little-endian host
    if (num_restarts > (block.size() - 4) / 4) return Corrupt("bad restart array in a block");
    const char* p = block.data();
    const char* end = block.data() + block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
    // LevelDB seeks from the restart points: each must be the start of an
    // entry of this sequential parse, or it would decode values never checked.
    std::vector<uint32_t> restarts(num_restarts);
    if (num_restarts) std::memcpy(restarts.data(), end, 4 * static_cast<size_t>(num_restarts));
    size_t next_restart = 0;
    while (p < end) {
      const uint32_t at = static_cast<uint32_t>(p - block.data());
      if (next_restart < restarts.size() && restarts[next_restart] < at)
        return Corrupt("a block's restart point is not at an entry");
      const bool is_restart = next_restart < restarts.size() && restarts[next_restart] == at;
      if (is_restart) ++next_restart;
      uint64_t shared = 0, non_shared = 0, value_len = 0;
      if (!GetVarint64(&p, end, &shared) || !GetVarint64(&p, end, &non_shared) ||
          !GetVarint64(&p, end, &value_len) || non_shared > static_cast<uint64_t>(end - p) ||
          value_len > static_cast<uint64_t>(end - p) - non_shared)
        return Corrupt("bad entry in a block");
      if (is_restart && shared != 0) return Corrupt("a block's restart entry shares a key prefix");
      p += non_shared;
      Status s = fn(p, p + value_len);
      if (!s.ok()) return s;
      p += value_len;
    }
    // (An empty block has one restart point, 0.)
    const bool empty_block = p == block.data() && restarts.size() == 1 && restarts[0] == 0;
    if (next_restart != restarts.size() && !empty_block) return Corrupt("a block's restart point is not at an entry");
    return Status();
  }

  const std::string& b_;
  const std::string& what_;
};

Status FromLevelDb(const leveldb::Status& s, const std::string& what) {
  if (s.ok()) return Status();
  if (s.IsNotFound()) return MakeStatus(kNotFound, what + ": " + s.ToString());
  if (s.IsCorruption()) return MakeStatus(kDataLoss, what + ": " + s.ToString());
  return MakeStatus(kDataLoss, what + ": " + s.ToString());
}

leveldb::Options TableOptions() {
  leveldb::Options o;
  o.comparator = leveldb::BytewiseComparator();
  o.paranoid_checks = true;
  o.block_size = 262144;
  o.block_restart_interval = 16;
  o.compression = leveldb::kNoCompression;
  return o;
}

}  // namespace

Table::~Table() { delete table_; }

Status Table::Open(std::string bytes, const std::string& what, std::unique_ptr<Table>* out) {
  std::unique_ptr<Table> t(new Table());
  t->what_ = what;
  t->bytes_ = std::make_unique<std::string>(std::move(bytes));
  Status s = LayoutChecker(*t->bytes_, what).Check();
  if (!s.ok()) return s;
  t->file_ = std::make_unique<MemoryFile>(t->bytes_.get());
  s = FromLevelDb(leveldb::Table::Open(TableOptions(), t->file_.get(), t->bytes_->size(), &t->table_), what);
  if (!s.ok()) return s;
  *out = std::move(t);
  return Status();
}

Status Table::ForEach(const std::function<Status(const std::string&, const std::string&)>& fn) const {
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table_->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    Status s = fn(it->key().ToString(), it->value().ToString());
    if (!s.ok()) return s;
  }
  return FromLevelDb(it->status(), what_);
}

Status Table::Get(const std::string& key, std::string* value) const {
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table_->NewIterator(ro));
  it->Seek(key);
  if (it->Valid() && it->key() == leveldb::Slice(key)) {
    *value = it->value().ToString();
    return Status();
  }
  Status s = FromLevelDb(it->status(), what_);
  if (!s.ok()) return s;
  return MakeStatus(kNotFound, "key not in " + what_);
}

Status BuildTable(const std::vector<std::pair<std::string, std::string>>& sorted, std::string* out) {
  out->clear();
  StringSink sink(out);
  leveldb::TableBuilder builder(TableOptions(), &sink);
  for (const auto& kv : sorted) builder.Add(kv.first, kv.second);
  const leveldb::Status s = builder.Finish();
  if (!s.ok()) return MakeStatus(kInternal, "building a table: " + s.ToString());
  return Status();
}

Status BuildIndexTable(const std::vector<std::pair<std::string, std::string>>& sorted, std::string* out) {
  for (size_t i = 1; i < sorted.size(); ++i)
    if (!(sorted[i - 1].first < sorted[i].first))
      return MakeStatus(kInvalidArgument, "table keys must be strictly increasing");
  return BuildTable(sorted, out);
}

// ------------------------------------------------------------------- files

namespace {
std::atomic<uint64_t> g_file_steps{0};
std::function<void(uint64_t, const char*)>& StepHook() {
  static std::function<void(uint64_t, const char*)> hook;
  return hook;
}
}  // namespace

void SetFileStepHookForTesting(std::function<void(uint64_t step, const char* what)> hook) {
  StepHook() = std::move(hook);
}

void FileStep(const char* what) {
  const uint64_t n = ++g_file_steps;
  if (StepHook()) StepHook()(n, what);
  // Fault injection for end-to-end tests (a Saver in Python or the CLI):
  // SIGKILL at the process's Nth file step, as a crash would stop it.
  static const uint64_t crash_at = [] {
    const char* e = std::getenv("GRAPHRT_TEST_CRASH_AT");
    return e ? std::strtoull(e, nullptr, 10) : 0ull;
  }();
  if (crash_at != 0 && n == crash_at) ::raise(SIGKILL);
}

Status ErrnoStatus(const std::string& what, const std::string& path) {
  const int e = errno;
  return MakeStatus(e == ENOENT ? kNotFound : kFailedPrecondition,
                    what + " " + path + ": " + std::strerror(e));
}

Status ReadFileToString(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = ErrnoStatus("cannot stat", path);
    ::close(fd);
    return s;
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out->size()) {
    const ssize_t r = ::pread(fd, &(*out)[got], out->size() - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      Status s = r < 0 ? ErrnoStatus("cannot read", path) : MakeStatus(kDataLoss, "file shrank while reading " + path);
      ::close(fd);
      return s;
    }
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return Status();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status SyncDirOf(const std::string& path) {
  FileStep("fsync directory");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open directory", dir);
  const int r = ::fsync(fd);
  Status s = r == 0 ? Status() : ErrnoStatus("cannot fsync directory", dir);
  ::close(fd);
  return s;
}

std::string UniqueTempSuffix() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  const uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                     static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  char buf[64];
  std::snprintf(buf, sizeof(buf), ".tempstate%016llx%d%llu", static_cast<unsigned long long>(r),
                static_cast<int>(::getpid()), static_cast<unsigned long long>(counter++));
  return buf;
}

Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + UniqueTempSuffix();
  FileStep("create");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    FileStep("write");
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      Status s = ErrnoStatus("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(w);
  }
  FileStep("fsync");
  if (::fsync(fd) != 0) {
    Status s = ErrnoStatus("cannot fsync", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  ::close(fd);
  FileStep("rename");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoStatus("cannot rename " + tmp + " to", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return SyncDirOf(path);
}

}  // namespace bundle
}  // namespace graphrt
