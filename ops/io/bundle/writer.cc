// Writing checkpoints: the V2 BundleWriter, merging bundles, V1 files.
#include <fcntl.h>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "bundle_internal.h"

namespace graphrt {
namespace bundle {

namespace {

void AppendVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

Status CheckValue(const TensorValue& t, const std::string& what, int64_t* n) {
  if (!DTypeSupported(t.dtype))
    return MakeStatus(kUnimplemented, what + ": dtype " + DTypeName(t.dtype) + " cannot be saved");
  Status s = NumElements(t.dims, what, n);
  if (!s.ok()) return s;
  if (t.dtype == DT_STRING ? t.strings.size() != static_cast<uint64_t>(*n)
                           : t.bytes.size() != static_cast<uint64_t>(*n) * static_cast<uint64_t>(DTypeSize(t.dtype)))
    return MakeStatus(kInvalidArgument, what + ": value does not match its shape " + ShapeString(t.dims));
  return Status();
}

std::string HeaderBytes(int num_shards, int endianness) {
  BundleHeaderProto h;
  h.set_num_shards(num_shards);
  h.set_endianness(endianness);
  h.mutable_version()->set_producer(kBundleVersion);
  return h.SerializeAsString();
}

}  // namespace

struct BundleWriter::Sliced {
  int dtype = 0;
  std::vector<int64_t> full_dims;
  std::vector<TensorSlice> slices;
};

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {
  // As TensorFlow's writer does, make the prefix's directory (a sharded
  // Saver's "<prefix>_temp/part" shards live in a fresh one).
  const std::filesystem::path dir = std::filesystem::path(prefix_).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) {
    status_ = MakeStatus(kNotFound, "cannot create directory " + dir.string() + ": " + ec.message());
    return;
  }
  // Finish an interrupted overwrite first, so that this save starts from
  // one consistent checkpoint and leaves no stale files behind.
  status_ = RecoverBundle(prefix_);
  if (!status_.ok()) return;
  data_tmp_ = DataFilename(prefix_, 0, 1) + UniqueTempSuffix();
  FileStep("create");
  data_fd_ = ::open(data_tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (data_fd_ < 0) status_ = ErrnoStatus("cannot create", data_tmp_);
}

BundleWriter::~BundleWriter() {
  if (data_fd_ >= 0) ::close(data_fd_);
  if (!finished_) ::unlink(data_tmp_.c_str());
}

namespace {
Status WriteAll(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    FileStep("write");
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return ErrnoStatus("cannot write", path);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status();
}
}  // namespace

Status BundleWriter::AddEntry(int dtype, const std::vector<int64_t>& dims, const char* data, size_t data_size,
                              const std::vector<std::string>* strings, std::string* entry_bytes) {
  BundleEntryProto e;
  e.set_dtype(dtype);
  DimsToProto(dims, e.mutable_shape());
  e.set_offset(offset_);
  uint32_t crc = 0;
  uint64_t size = 0;
  if (dtype == DT_STRING) {
    // varint64 lengths, masked crc32c of the lengths (each as a
    // little-endian uint32, or uint64 above 4 GiB), the bytes; the entry's
    // checksum runs over the fixed-width lengths, the 4 crc bytes, the bytes.
    std::string head;
    uint32_t len_crc = 0;
    for (const std::string& s : *strings) {
      AppendVarint64(&head, s.size());
      const uint64_t len = s.size();
      if (len > 0xffffffffull) {
        len_crc = Crc32cExtend(len_crc, reinterpret_cast<const char*>(&len), 8);
      } else {
        const uint32_t l32 = static_cast<uint32_t>(len);
        len_crc = Crc32cExtend(len_crc, reinterpret_cast<const char*>(&l32), 4);
      }
    }
    const uint32_t masked = MaskCrc(len_crc);
    char mbytes[4];
    std::memcpy(mbytes, &masked, 4);
    head.append(mbytes, 4);
    crc = Crc32cExtend(len_crc, mbytes, 4);
    Status s = WriteAll(data_fd_, head.data(), head.size(), data_tmp_);
    size = head.size();
    for (const std::string& str : *strings) {
      if (!s.ok()) break;
      s = WriteAll(data_fd_, str.data(), str.size(), data_tmp_);
      crc = Crc32cExtend(crc, str.data(), str.size());
      size += str.size();
    }
    if (!s.ok()) return s;
  } else {
    Status s = WriteAll(data_fd_, data, data_size, data_tmp_);
    if (!s.ok()) return s;
    crc = Crc32c(data, data_size);
    size = data_size;
  }
  e.set_size(static_cast<int64_t>(size));
  e.set_crc32c(MaskCrc(crc));
  offset_ += static_cast<int64_t>(size);
  *entry_bytes = e.SerializeAsString();
  return Status();
}

Status BundleWriter::Add(const std::string& name, int dtype, const std::vector<int64_t>& dims, const char* data,
                         size_t size) {
  if (!status_.ok()) return status_;
  if (finished_) return MakeStatus(kFailedPrecondition, "BundleWriter for " + prefix_ + " is already finished");
  if (name.empty()) return status_ = MakeStatus(kInvalidArgument, "a tensor name may not be empty (" + prefix_ + ")");
  if (entries_.count(name) || sliced_.count(name))
    return status_ = MakeStatus(kInvalidArgument, "Adding duplicate key: " + name);
  if (DTypeSize(dtype) == 0)
    return status_ = MakeStatus(kInvalidArgument, "tensor " + name + ": dtype " + DTypeName(dtype) +
                                                      " has no fixed element size");
  int64_t n = 0;
  Status s = NumElements(dims, "tensor " + name, &n);
  if (!s.ok()) return status_ = s;
  if (size != static_cast<uint64_t>(n) * static_cast<uint64_t>(DTypeSize(dtype)))
    return status_ = MakeStatus(kInvalidArgument, "tensor " + name + ": " + std::to_string(size) +
                                                      " bytes do not match its shape " + ShapeString(dims));
  std::string bytes;
  s = AddEntry(dtype, dims, data, size, nullptr, &bytes);
  if (!s.ok()) return status_ = s;
  entries_[name] = std::move(bytes);
  return Status();
}

Status BundleWriter::Add(const std::string& name, const TensorValue& t) {
  if (!status_.ok()) return status_;
  if (finished_) return MakeStatus(kFailedPrecondition, "BundleWriter for " + prefix_ + " is already finished");
  if (name.empty()) return status_ = MakeStatus(kInvalidArgument, "a tensor name may not be empty (" + prefix_ + ")");
  if (entries_.count(name) || sliced_.count(name))
    return status_ = MakeStatus(kInvalidArgument, "Adding duplicate key: " + name);
  int64_t n = 0;
  Status s = CheckValue(t, "tensor " + name, &n);
  if (!s.ok()) return status_ = s;
  std::string bytes;
  s = AddEntry(t.dtype, t.dims, t.bytes.data(), t.bytes.size(), &t.strings, &bytes);
  if (!s.ok()) return status_ = s;
  entries_[name] = std::move(bytes);
  return Status();
}

Status BundleWriter::AddSlice(const std::string& name, const std::vector<int64_t>& full_dims,
                              const TensorSlice& slice, const TensorValue& t) {
  if (!status_.ok()) return status_;
  if (finished_) return MakeStatus(kFailedPrecondition, "BundleWriter for " + prefix_ + " is already finished");
  if (name.empty()) return status_ = MakeStatus(kInvalidArgument, "a tensor name may not be empty (" + prefix_ + ")");
  if (entries_.count(name)) return status_ = MakeStatus(kInvalidArgument, "Adding duplicate key: " + name);
  int64_t n = 0;
  Status s = CheckValue(t, "slice " + slice.DebugString() + " of tensor " + name, &n);
  if (!s.ok()) return status_ = s;
  // Every extent explicit in rank (a full one stays "-"), so the key has
  // the tensor's rank as TensorFlow's does.
  TensorSlice ts = slice;
  if (ts.extents.empty()) ts.extents.resize(full_dims.size());
  std::vector<int64_t> dims;
  s = SliceDims(ts, full_dims, &dims);
  if (!s.ok()) return status_ = MakeStatus(kInvalidArgument, "tensor " + name + ": " + s.message);
  if (dims != t.dims)
    return status_ = MakeStatus(kInvalidArgument, "tensor " + name + ": slice " + ts.DebugString() + " of " +
                                                      ShapeString(full_dims) + " has shape " + ShapeString(dims) +
                                                      " but the value has shape " + ShapeString(t.dims));
  auto& sl = sliced_[name];
  if (!sl) {
    sl = std::make_unique<Sliced>();
    sl->dtype = t.dtype;
    sl->full_dims = full_dims;
  } else if (sl->dtype != t.dtype || sl->full_dims != full_dims) {
    return status_ = MakeStatus(kInvalidArgument, "tensor " + name + ": slices disagree on dtype or shape (" +
                                                      DTypeName(sl->dtype) + " " + ShapeString(sl->full_dims) +
                                                      " vs " + DTypeName(t.dtype) + " " + ShapeString(full_dims) + ")");
  }
  // Only the new slice against the earlier ones: O(n) per slice.
  for (const TensorSlice& old : sl->slices)
    if (SlicesOverlap(old, ts, full_dims))
      return status_ = MakeStatus(kInvalidArgument, prefix_ + ": slices " + old.DebugString() + " and " +
                                                        ts.DebugString() + " of tensor " + name + " overlap");
  std::string bytes;
  s = AddEntry(t.dtype, t.dims, t.bytes.data(), t.bytes.size(), &t.strings, &bytes);
  if (!s.ok()) return status_ = s;
  entries_[EncodeTensorNameSlice(name, ts, static_cast<int>(ts.extents.size()))] = std::move(bytes);
  sl->slices.push_back(ts);
  return Status();
}

Status BundleWriter::Finish() {
  if (finished_) return MakeStatus(kFailedPrecondition, "BundleWriter for " + prefix_ + " is already finished");
  if (!status_.ok()) return status_;
  for (const auto& kv : sliced_) {
    BundleEntryProto e;
    e.set_dtype(kv.second->dtype);
    DimsToProto(kv.second->full_dims, e.mutable_shape());
    for (const TensorSlice& ts : kv.second->slices) SliceToProto(ts, e.add_slices());
    entries_[kv.first] = e.SerializeAsString();
  }
  FileStep("fsync");
  if (::fsync(data_fd_) != 0) return status_ = ErrnoStatus("cannot fsync", data_tmp_);
  ::close(data_fd_);
  data_fd_ = -1;
  std::vector<std::pair<std::string, std::string>> sorted;
  sorted.reserve(entries_.size() + 1);
  sorted.emplace_back("", HeaderBytes(1, 0));
  for (auto& kv : entries_) sorted.emplace_back(kv.first, std::move(kv.second));
  std::string table;
  Status s = BuildTable(sorted, &table);
  if (!s.ok()) return status_ = s;
  s = CommitBundle(prefix_, {{data_tmp_, DataFilename(prefix_, 0, 1)}}, 1, table);
  if (!s.ok()) return status_ = s;
  finished_ = true;
  return Status();
}

// ------------------------------------------------------------ committing

namespace {

Status PendingHeaderShards(std::string bytes, const std::string& what, int* num_shards) {
  std::unique_ptr<Table> t;
  Status s = Table::Open(std::move(bytes), what, &t);
  if (!s.ok()) return s;
  std::string header;
  s = t->Get("", &header);
  if (!s.ok()) return s;
  BundleHeaderProto h;
  if (!h.ParseFromString(header) || h.num_shards() < 1 || h.num_shards() > (1 << 20))
    return MakeStatus(kDataLoss, what + ": corrupt bundle header");
  *num_shards = h.num_shards();
  return Status();
}

// Data files first, then the index: until the index is renamed, readers
// take the pending index and every data file from .pending or, once
// renamed, its final name. The directory sync between them keeps that
// order on disk (a power cut must not keep the index rename alone). None
// after the index rename: the commit was durable already, and a power cut
// that loses the renames leaves the pending files, which read the same.
Status RollForward(const std::string& prefix, int num_shards) {
  for (int i = 0; i < num_shards; ++i) {
    const std::string to = DataFilename(prefix, i, num_shards);
    const std::string from = to + kPendingSuffix;
    FileStep("rename");
    if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
      return ErrnoStatus("cannot rename " + from + " to", to);
  }
  Status s = SyncDirOf(prefix);
  if (!s.ok()) return s;
  const std::string index = IndexFilename(prefix);
  const std::string pending = index + kPendingSuffix;
  FileStep("rename");
  if (::rename(pending.c_str(), index.c_str()) != 0) return ErrnoStatus("cannot rename " + pending + " to", index);
  return Status();
}

// "<digits>-of-<digits>" at the start of `s`; its length, or 0.
size_t ShardSpecLength(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || s.compare(i, 4, "-of-") != 0) return 0;
  size_t j = i + 4;
  const size_t k = j;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  return j == k ? 0 : j;
}

}  // namespace

Status RecoverBundle(const std::string& prefix) {
  const std::string pending_index = IndexFilename(prefix) + kPendingSuffix;
  std::string bytes;
  Status s = ReadFileToString(pending_index, &bytes);
  if (s.ok()) {
    int num_shards = 0;
    // A pending index that does not open was never committed by a writer
    // (they fsync it before the rename); it goes with the leftovers below.
    if (PendingHeaderShards(std::move(bytes), pending_index, &num_shards).ok()) {
      s = RollForward(prefix, num_shards);
      if (!s.ok()) return s;
    }
  } else if (s.code != kNotFound) {
    return s;
  }
  // Leftovers of saves of this prefix that crashed: their temporaries and
  // uncommitted pending files. Other prefixes' files never match.
  const std::filesystem::path p(prefix);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const std::string base = p.filename().string();
  const std::string index_base = base + ".index";
  const std::string data_base = base + ".data-";
  std::error_code ec;
  std::vector<std::string> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::string rest;
    if (name.compare(0, index_base.size(), index_base) == 0) {
      rest = name.substr(index_base.size());
    } else if (name.compare(0, data_base.size(), data_base) == 0) {
      const size_t n = ShardSpecLength(name.substr(data_base.size()));
      if (n == 0) continue;
      rest = name.substr(data_base.size() + n);
    } else {
      continue;
    }
    // The file pending, or a temporary of it or of its pending name.
    const bool pending = rest.compare(0, sizeof(kPendingSuffix) - 1, kPendingSuffix) == 0;
    if (pending) rest.erase(0, sizeof(kPendingSuffix) - 1);
    if ((pending && rest.empty()) || rest.compare(0, 10, ".tempstate") == 0) stale.push_back((dir / name).string());
  }
  if (ec) return MakeStatus(kFailedPrecondition, "cannot list directory " + dir.string() + ": " + ec.message());
  for (const std::string& f : stale) {
    FileStep("unlink");
    if (::unlink(f.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("cannot remove stale file", f);
  }
  return Status();
}

Status CommitBundle(const std::string& prefix, const std::vector<std::pair<std::string, std::string>>& data_moves,
                    int num_shards, const std::string& index_bytes) {
  for (const auto& [from, to] : data_moves) {
    const std::string pending = to + kPendingSuffix;
    FileStep("rename");
    if (::rename(from.c_str(), pending.c_str()) != 0) return ErrnoStatus("cannot rename " + from + " to", pending);
  }
  Status s = SyncDirOf(prefix);
  if (!s.ok()) return s;
  // The commit: once the pending index exists, the new checkpoint is the
  // prefix's (readers use it; a crash from here on rolls forward).
  s = WriteFileAtomically(IndexFilename(prefix) + kPendingSuffix, index_bytes);
  if (!s.ok()) return s;
  return RollForward(prefix, num_shards);
}

// ------------------------------------------------------------------ merge

Status MergeBundles(const std::vector<std::string>& prefixes, const std::string& dest, bool delete_old_dirs,
                    bool allow_missing_files) {
  struct Input {
    std::string prefix;
    int num_shards = 0;
  };
  std::vector<Input> inputs;
  std::map<std::string, BundleEntryProto> merged;
  int total = 0;
  int endianness = -1;
  for (const std::string& prefix : prefixes) {
    const std::string index = IndexFilename(prefix);
    if (allow_missing_files && !FileExists(index)) continue;
    std::string bytes;
    Status s = ReadFileToString(index, &bytes);
    if (!s.ok()) return s;
    std::unique_ptr<Table> t;
    s = Table::Open(std::move(bytes), index, &t);
    if (!s.ok()) return s;
    Input in;
    in.prefix = prefix;
    s = t->ForEach([&](const std::string& key, const std::string& value) -> Status {
      if (key.empty()) {
        BundleHeaderProto h;
        if (!h.ParseFromString(value) || h.num_shards() < 1 || h.num_shards() > (1 << 20))
          return MakeStatus(kDataLoss, index + ": corrupt bundle header");
        Status vs = CheckVersion(h.version(), index);
        if (!vs.ok()) return vs;
        if (endianness >= 0 && h.endianness() != endianness)
          return MakeStatus(kUnimplemented, "merging bundles of different endianness: " + index);
        endianness = h.endianness();
        in.num_shards = h.num_shards();
        // Shard numbers are printed with %05d and summed in an int.
        if (total + in.num_shards > (1 << 20)) return MakeStatus(kInvalidArgument, "too many shards to merge into " + dest);
        return Status();
      }
      if (in.num_shards == 0) return MakeStatus(kDataLoss, index + ": the bundle header is missing");
      BundleEntryProto e;
      if (!e.ParseFromString(value)) return MakeStatus(kDataLoss, index + ": corrupt entry for key " + key);
      auto it = merged.find(key);
      if (e.slices_size() == 0) {
        if (it != merged.end())
          return MakeStatus(kInvalidArgument, "Duplicate tensor keyed by " + key + " encountered, when merging prefix: " + prefix);
        if (e.shard_id() < 0 || e.shard_id() >= in.num_shards)
          return MakeStatus(kDataLoss, index + ": entry " + key + " names shard " + std::to_string(e.shard_id()));
        e.set_shard_id(e.shard_id() + total);
        merged[key] = e;
      } else if (it == merged.end()) {
        merged[key] = e;
      } else {
        // A partitioned tensor saved by several shards: one entry, all slices.
        if (it->second.dtype() != e.dtype() || it->second.shape().SerializeAsString() != e.shape().SerializeAsString() ||
            it->second.slices_size() == 0)
          return MakeStatus(kInvalidArgument, "Conflicting entries for partitioned tensor " + key + " when merging prefix: " + prefix);
        for (const auto& sl : e.slices()) *it->second.add_slices() = sl;
      }
      return Status();
    });
    if (!s.ok()) return s;
    if (in.num_shards == 0) return MakeStatus(kDataLoss, index + ": the bundle header is missing");
    total += in.num_shards;
    inputs.push_back(in);
  }
  if (inputs.empty()) return MakeStatus(kInvalidArgument, "no checkpoint to merge into " + dest);
  std::vector<std::pair<std::string, std::string>> sorted;
  sorted.emplace_back("", HeaderBytes(total, endianness < 0 ? 0 : endianness));
  for (const auto& kv : merged) sorted.emplace_back(kv.first, kv.second.SerializeAsString());
  std::string table;
  Status s = BuildTable(sorted, &table);
  if (!s.ok()) return s;
  // The data files move to `dest`'s names and the merged index commits, as
  // a BundleWriter's save does (atomic over an existing `dest`).
  s = RecoverBundle(dest);
  if (!s.ok()) return s;
  std::vector<std::pair<std::string, std::string>> moves;
  int base = 0;
  for (const Input& in : inputs) {
    for (int j = 0; j < in.num_shards; ++j) {
      const std::string from = DataFilename(in.prefix, j, in.num_shards);
      const std::string to = DataFilename(dest, base + j, total);
      if (from != to) moves.emplace_back(from, to);
    }
    base += in.num_shards;
  }
  s = CommitBundle(dest, moves, total, table);
  if (!s.ok()) return s;
  for (const Input& in : inputs) {
    if (in.prefix != dest) ::unlink(IndexFilename(in.prefix).c_str());
    if (delete_old_dirs) {
      const size_t slash = in.prefix.rfind('/');
      // Best effort, as in TensorFlow: only an emptied directory goes.
      if (slash != std::string::npos && slash > 0) ::rmdir(in.prefix.substr(0, slash).c_str());
    }
  }
  return Status();
}

// --------------------------------------------------------------------- V1

Status WriteV1Checkpoint(const std::string& filename, const std::vector<V1Item>& items) {
  SavedTensorSlices meta_msg;
  SavedTensorSliceMeta* meta = meta_msg.mutable_meta();
  meta->mutable_versions()->set_producer(kBundleVersion);
  std::map<std::string, int> meta_index;
  std::map<std::string, EntryInfo> seen;
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const V1Item& it : items) {
    const std::string what = "tensor " + it.name + " for " + filename;
    if (it.name.empty()) return MakeStatus(kInvalidArgument, "a tensor name may not be empty (" + filename + ")");
    int64_t n = 0;
    Status s = CheckValue(it.value, what, &n);
    if (!s.ok()) return s;
    s = NumElements(it.full_dims, what, &n);
    if (!s.ok()) return s;
    TensorSlice ts = it.slice;
    if (ts.extents.empty()) ts.extents.resize(it.full_dims.size());
    std::vector<int64_t> dims;
    s = SliceDims(ts, it.full_dims, &dims);
    if (!s.ok()) return MakeStatus(kInvalidArgument, what + ": " + s.message);
    if (dims != it.value.dims)
      return MakeStatus(kInvalidArgument, what + ": slice " + ts.DebugString() + " has shape " + ShapeString(dims) +
                                              " but the value has shape " + ShapeString(it.value.dims));
    auto& info = seen[it.name];
    if (info.name.empty()) {
      info.name = it.name;
      info.dtype = it.value.dtype;
      info.dims = it.full_dims;
      meta_index[it.name] = meta->tensor_size();
      SavedSliceMeta* m = meta->add_tensor();
      m->set_name(it.name);
      DimsToProto(it.full_dims, m->mutable_shape());
      m->set_type(it.value.dtype);
    } else if (info.dtype != it.value.dtype || info.dims != it.full_dims) {
      return MakeStatus(kInvalidArgument, what + ": saved twice with different dtypes or shapes");
    }
    for (const TensorSlice& old : info.slices)
      if (SlicesOverlap(old, ts, it.full_dims))
        return MakeStatus(kInvalidArgument, filename + ": slices " + old.DebugString() + " and " + ts.DebugString() +
                                                " of tensor " + it.name + " overlap");
    info.slices.push_back(ts);
    SliceToProto(ts, meta->mutable_tensor(meta_index[it.name])->add_slice());
    SavedTensorSlices data;
    SavedSlice* d = data.mutable_data();
    d->set_name(it.name);
    SliceToProto(ts, d->mutable_slice());
    ValuesToTensorProto(it.value, d->mutable_data());
    if (data.ByteSizeLong() > static_cast<size_t>(INT32_MAX))
      return MakeStatus(kInvalidArgument, what + ": too large for one V1 checkpoint record (2 GiB); use SaveV2");
    sorted.emplace_back(EncodeTensorNameSlice(it.name, ts, static_cast<int>(ts.extents.size())), data.SerializeAsString());
  }
  sorted.emplace_back("", meta_msg.SerializeAsString());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string table;
  Status s = BuildTable(sorted, &table);
  if (!s.ok()) return s;
  return WriteFileAtomically(filename, table);
}

}  // namespace bundle
}  // namespace graphrt
