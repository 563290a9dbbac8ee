// Reading checkpoints: the common slice logic, the V2 bundle reader and the
// V1 TensorSlice reader.
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <queue>
#include <set>

#include "bundle_internal.h"

namespace graphrt {
namespace bundle {

// --------------------------------------------------------- proto helpers

Status DimsFromProto(const TensorShapeProto& p, const std::string& what, std::vector<int64_t>* dims) {
  if (p.unknown_rank()) return MakeStatus(kDataLoss, what + ": stored shape has unknown rank");
  if (p.dim_size() > kMaxRank) return MakeStatus(kDataLoss, what + ": stored shape has rank " + std::to_string(p.dim_size()));
  dims->clear();
  for (const auto& d : p.dim()) dims->push_back(d.size());
  int64_t n = 0;
  Status s = NumElements(*dims, what, &n);
  if (!s.ok()) return MakeStatus(kDataLoss, s.message);
  return Status();
}

void DimsToProto(const std::vector<int64_t>& dims, TensorShapeProto* p) {
  p->Clear();
  for (int64_t d : dims) p->add_dim()->set_size(d);
}

Status SliceFromProto(const TensorSliceProto& p, const std::string& what, TensorSlice* s) {
  if (p.extent_size() > kMaxRank) return MakeStatus(kDataLoss, what + ": stored slice has too many dimensions");
  s->extents.clear();
  for (const auto& e : p.extent()) {
    Extent x;
    if (e.has_length_case() == TensorSliceProto::Extent::kLength) {
      x.start = e.start();
      x.length = e.length();
      if (x.start < 0 || x.length < 0) return MakeStatus(kDataLoss, what + ": stored slice has a negative extent");
    } else if (e.start() != 0) {
      return MakeStatus(kDataLoss, what + ": stored slice has a full extent with a start");
    }
    s->extents.push_back(x);
  }
  return Status();
}

void SliceToProto(const TensorSlice& s, TensorSliceProto* p) {
  p->Clear();
  for (const Extent& e : s.extents) {
    auto* x = p->add_extent();
    if (!e.full()) {
      x->set_start(e.start);
      x->set_length(e.length);
    }
  }
}

Status CheckVersion(const VersionDef& v, const std::string& what) {
  if (v.producer() < 0)
    return MakeStatus(kInvalidArgument, "Checkpoint producer version " + std::to_string(v.producer()) +
                                            " below min producer 0 supported by TensorFlow (" + what + ")");
  if (v.min_consumer() > kBundleVersion)
    return MakeStatus(kInvalidArgument, "Checkpoint min consumer version " + std::to_string(v.min_consumer()) +
                                            " above current version " + std::to_string(kBundleVersion) +
                                            " for TensorFlow (" + what + ")");
  for (int32_t b : v.bad_consumers())
    if (b == kBundleVersion)
      return MakeStatus(kInvalidArgument, "Checkpoint disallows consumer version " + std::to_string(b) +
                                              ".  Please upgrade TensorFlow: this version is likely buggy. (" +
                                              what + ")");
  return Status();
}

namespace {
int64_t SliceElements(const TensorSlice& s, const std::vector<int64_t>& full_dims) {
  const TensorSlice c = Canonical(s, full_dims);
  int64_t n = 1;
  for (const Extent& e : c.extents) n *= e.length;  // within the size rule: a sub-box of full_dims
  return n;
}

int64_t OverlapElements(const TensorSlice& a, const TensorSlice& b, const std::vector<int64_t>& full_dims) {
  const TensorSlice x = Canonical(a, full_dims), y = Canonical(b, full_dims);
  int64_t n = 1;
  for (size_t i = 0; i < full_dims.size(); ++i) {
    const int64_t lo = std::max(x.extents[i].start, y.extents[i].start);
    const int64_t hi = std::min(x.extents[i].start + x.extents[i].length, y.extents[i].start + y.extents[i].length);
    if (hi <= lo) return 0;
    n *= hi - lo;
  }
  return n;
}
}  // namespace

bool SlicesOverlap(const TensorSlice& a, const TensorSlice& b, const std::vector<int64_t>& full_dims) {
  const TensorSlice x = Canonical(a, full_dims), y = Canonical(b, full_dims);
  for (size_t i = 0; i < full_dims.size(); ++i) {
    const int64_t lo = std::max(x.extents[i].start, y.extents[i].start);
    const int64_t hi = std::min(x.extents[i].start + x.extents[i].length, y.extents[i].start + y.extents[i].length);
    if (hi <= lo) return false;
  }
  return true;
}

Status CheckSlicesDisjoint(const EntryInfo& e, const std::string& what) {
  for (const TensorSlice& s : e.slices) {
    std::vector<int64_t> d;
    Status st = SliceDims(s, e.dims, &d);
    if (!st.ok()) return MakeStatus(kDataLoss, what + ": stored slice of tensor " + e.name + ": " + st.message);
  }
  const size_t rank = e.dims.size();
  // Boxes [lo, hi) per dimension; empty ones overlap nothing.
  std::vector<size_t> boxes;
  std::vector<int64_t> lo, hi;
  lo.reserve(e.slices.size() * rank);
  hi.reserve(e.slices.size() * rank);
  for (size_t i = 0; i < e.slices.size(); ++i) {
    const TensorSlice c = Canonical(e.slices[i], e.dims);
    bool empty = false;
    for (const Extent& x : c.extents) empty = empty || x.length == 0;
    if (empty) continue;
    boxes.push_back(i);
    for (const Extent& x : c.extents) {
      lo.push_back(x.start);
      hi.push_back(x.start + x.length);
    }
  }
  const size_t n = boxes.size();
  if (n < 2) return Status();
  auto L = [&](size_t b, size_t d) { return lo[b * rank + d]; };
  auto H = [&](size_t b, size_t d) { return hi[b * rank + d]; };
  auto overlap_error = [&](size_t a, size_t b) {
    return MakeStatus(kDataLoss, what + ": stored slices " + e.slices[boxes[a]].DebugString() + " and " +
                                     e.slices[boxes[b]].DebugString() + " of tensor " + e.name + " overlap");
  };
  // A dimension in which every box has the same extent separates no two
  // boxes: only the others matter (a partitioned variable varies in one).
  std::vector<size_t> dims;
  for (size_t d = 0; d < rank; ++d)
    for (size_t b = 1; b < n; ++b)
      if (L(b, d) != L(0, d) || H(b, d) != H(0, d)) {
        dims.push_back(d);
        break;
      }
  if (dims.empty()) return overlap_error(0, 1);  // identical boxes
  // Sweep along the dimension where the fewest boxes overlap one point.
  size_t sweep = dims[0];
  if (dims.size() > 2) {
    size_t best = SIZE_MAX;
    for (size_t d : dims) {
      std::vector<std::pair<int64_t, int>> ev;
      ev.reserve(2 * n);
      for (size_t b = 0; b < n; ++b) {
        ev.emplace_back(L(b, d), 1);
        ev.emplace_back(H(b, d), -1);
      }
      std::sort(ev.begin(), ev.end());  // an end sorts before a start at the same point
      size_t depth = 0, max_depth = 0;
      for (const auto& x : ev) {
        depth = static_cast<size_t>(static_cast<int64_t>(depth) + x.second);
        max_depth = std::max(max_depth, depth);
      }
      if (max_depth < best) {
        best = max_depth;
        sweep = d;
      }
    }
  }
  std::vector<size_t> order(n);
  for (size_t b = 0; b < n; ++b) order[b] = b;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return L(a, sweep) < L(b, sweep); });
  // The active boxes contain the sweep point; being disjoint, they are
  // disjoint in the other dimensions. Expired by their end (min-heap).
  using End = std::pair<int64_t, size_t>;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
  if (dims.size() == 1) {
    // One dimension: each box must start at or after every earlier end.
    size_t last = order[0];
    for (size_t k = 1; k < n; ++k) {
      const size_t b = order[k];
      if (L(b, sweep) < H(last, sweep)) return overlap_error(last, b);
      if (H(b, sweep) > H(last, sweep)) last = b;
    }
    return Status();
  }
  const size_t other = dims[0] == sweep ? dims[1] : dims[0];
  // Two dimensions: the active boxes' extents in the other one are
  // disjoint, so a new box can only meet its two neighbours there
  // (O(n log n)). More dimensions: the new box is checked against every
  // active one (O(n log n + n * most boxes over one point)).
  std::map<int64_t, size_t> by_start;  // two dimensions: start in `other` -> box
  std::set<size_t> active;             // more
  for (size_t b : order) {
    while (!ends.empty() && ends.top().first <= L(b, sweep)) {
      const size_t gone = ends.top().second;
      ends.pop();
      if (dims.size() == 2) {
        by_start.erase(L(gone, other));
      } else {
        active.erase(gone);
      }
    }
    if (dims.size() == 2) {
      auto it = by_start.lower_bound(L(b, other));
      if (it != by_start.end() && L(it->second, other) < H(b, other)) return overlap_error(it->second, b);
      if (it != by_start.begin() && H(std::prev(it)->second, other) > L(b, other))
        return overlap_error(std::prev(it)->second, b);
      by_start.emplace(L(b, other), b);
    } else {
      for (size_t a : active) {
        bool meet = true;
        for (size_t d : dims) meet = meet && L(a, d) < H(b, d) && L(b, d) < H(a, d);
        if (meet) return overlap_error(a, b);
      }
      active.insert(b);
    }
    ends.emplace(H(b, sweep), b);
  }
  return Status();
}

// ------------------------------------------------------ CheckpointReader

const EntryInfo* CheckpointReader::Find(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const EntryInfo& e, const std::string& n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

Status CheckpointReader::NotFoundError(const std::string& name) const {
  return MakeStatus(kNotFound, "Key " + name + " not found in checkpoint " + prefix_);
}

Status CheckpointReader::Lookup(const std::string& name, TensorValue* out) {
  return LookupSlice(name, TensorSlice(), out);
}

Status CheckpointReader::LookupSlice(const std::string& name, const TensorSlice& slice, TensorValue* out) {
  const EntryInfo* e = Find(name);
  if (!e) return NotFoundError(name);
  if (!DTypeSupported(e->dtype))
    return MakeStatus(kUnimplemented, "tensor " + name + " in checkpoint " + prefix_ + " has dtype " +
                                          DTypeName(e->dtype) + ", which graphrt cannot read");
  std::vector<int64_t> want;
  Status s = SliceDims(slice, e->dims, &want);
  if (!s.ok())
    return MakeStatus(kInvalidArgument, "requested slice " + slice.DebugString() + " of tensor " + name +
                                            " does not fit its shape " + ShapeString(e->dims) +
                                            " in checkpoint " + prefix_ + ": " + s.message);
  // Fast path: the tensor is stored whole and wanted whole.
  if (e->slices.size() == 1 && e->slices[0].IsFull() && slice.IsFull()) return ReadStored(*e, 0, out);

  int64_t n = 0;
  s = NumElements(want, "slice of " + name, &n);
  if (!s.ok()) return s;
  // Read the overlapping stored slices first (each read is bounded by the
  // file's real contents), check that they cover the request, then copy.
  std::vector<std::pair<size_t, TensorValue>> parts;
  int64_t covered = 0;
  for (size_t i = 0; i < e->slices.size(); ++i) {
    const int64_t k = OverlapElements(e->slices[i], slice, e->dims);
    if (k == 0) continue;
    TensorValue v;
    s = ReadStored(*e, i, &v);
    if (!s.ok()) return s;
    covered += k;
    parts.emplace_back(i, std::move(v));
  }
  if (covered != n)
    return MakeStatus(kNotFound, "the slices of tensor " + name + " stored in checkpoint " + prefix_ +
                                     " do not cover the requested slice " +
                                     (slice.extents.empty() ? std::string("(whole tensor)") : slice.DebugString()));
  out->dtype = e->dtype;
  out->dims = want;
  out->bytes.clear();
  out->strings.clear();
  if (e->dtype == DT_STRING) {
    out->strings.resize(static_cast<size_t>(n));
  } else {
    out->bytes.resize(static_cast<size_t>(n) * static_cast<size_t>(DTypeSize(e->dtype)));
  }
  for (const auto& p : parts) CopySliceOverlap(p.second, e->slices[p.first], out, slice, e->dims);
  return Status();
}

Status CheckpointReader::LookupInto(const std::string& name, const Allocator& alloc) {
  const EntryInfo* e = Find(name);
  if (!e) return NotFoundError(name);
  if (DTypeSize(e->dtype) == 0)
    return MakeStatus(kInvalidArgument, "tensor " + name + " in checkpoint " + prefix_ + " has dtype " +
                                            DTypeName(e->dtype) + ", not a fixed-size one");
  if (e->slices.size() == 1 && e->slices[0].IsFull()) return ReadWholeInto(*e, alloc);
  TensorValue v;
  Status s = Lookup(name, &v);
  if (!s.ok()) return s;
  char* dst = nullptr;
  s = alloc(v.dims, &dst);
  if (!s.ok()) return s;
  if (!v.bytes.empty()) std::memcpy(dst, v.bytes.data(), v.bytes.size());
  return Status();
}

Status CheckpointReader::ReadWholeInto(const EntryInfo& e, const Allocator& alloc) {
  TensorValue v;
  Status s = ReadStored(e, 0, &v);
  if (!s.ok()) return s;
  char* dst = nullptr;
  s = alloc(v.dims, &dst);
  if (!s.ok()) return s;
  if (!v.bytes.empty()) std::memcpy(dst, v.bytes.data(), v.bytes.size());
  return Status();
}

// ------------------------------------------------------------- V2 reader

namespace {

struct Shard {
  bool opened = false;
  int fd = -1;
  const std::string* mem = nullptr;
  uint64_t size = 0;
  std::string path;
  Status open_status;
};

uint32_t LoadLe32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void SwapBytes(char* data, size_t size, int dtype) {
  int unit = DTypeSize(dtype);
  if (dtype == DT_COMPLEX64 || dtype == DT_COMPLEX128) unit /= 2;
  if (unit <= 1) return;
  for (size_t i = 0; i + static_cast<size_t>(unit) <= size; i += static_cast<size_t>(unit))
    std::reverse(data + i, data + i + unit);
}

class V2Reader : public CheckpointReader {
 public:
  ~V2Reader() override {
    for (auto& kv : shards_)
      if (kv.second.fd >= 0) ::close(kv.second.fd);
  }

  Status Init(const std::string& prefix, std::string index_bytes, const std::string& index_name) {
    prefix_ = prefix;
    index_name_ = index_name;
    Status s = Table::Open(std::move(index_bytes), index_name, &table_);
    if (!s.ok()) return s;
    bool have_header = false;
    s = table_->ForEach([&](const std::string& key, const std::string& value) -> Status {
      if (key.empty()) {
        BundleHeaderProto h;
        if (!h.ParseFromString(value)) return MakeStatus(kDataLoss, index_name + ": corrupt bundle header");
        if (h.num_shards() < 1) return MakeStatus(kDataLoss, index_name + ": bundle header has num_shards " + std::to_string(h.num_shards()));
        if (h.endianness() != 0 && h.endianness() != 1)
          return MakeStatus(kDataLoss, index_name + ": bundle header has endianness " + std::to_string(h.endianness()));
        Status vs = CheckVersion(h.version(), index_name);
        if (!vs.ok()) return vs;
        num_shards_ = h.num_shards();
        big_endian_ = h.endianness() == 1;
        have_header = true;
        return Status();
      }
      if (!have_header) return MakeStatus(kDataLoss, index_name + ": the bundle header is missing");
      if (key[0] == '\0') return Status();  // the entry of one stored slice; reached through its tensor
      BundleEntryProto p;
      const std::string what = "tensor " + key + " in " + index_name;
      if (!p.ParseFromString(value)) return MakeStatus(kDataLoss, what + ": corrupt BundleEntryProto");
      EntryInfo e;
      e.name = key;
      e.dtype = p.dtype();
      Status es = DimsFromProto(p.shape(), what, &e.dims);
      if (!es.ok()) return es;
      if (p.slices_size() == 0) {
        e.slices.emplace_back();
        e.shard_id = p.shard_id();
        e.offset = p.offset();
      } else {
        for (const auto& sp : p.slices()) {
          TensorSlice ts;
          es = SliceFromProto(sp, what, &ts);
          if (!es.ok()) return es;
          e.slices.push_back(ts);
        }
      }
      es = CheckSlicesDisjoint(e, index_name);
      if (!es.ok()) return es;
      entries_.push_back(std::move(e));
      return Status();
    });
    if (!s.ok()) return s;
    if (!have_header) return MakeStatus(kDataLoss, index_name + ": the bundle header is missing");
    return Status();
  }

  void SetPending() { pending_ = true; }

  void SetMemoryShards(std::vector<std::string> shards) {
    mem_shards_ = std::move(shards);
    in_memory_ = true;
  }

 protected:
  Status ReadStored(const EntryInfo& e, size_t index, TensorValue* out) override {
    BundleEntryProto p;
    std::string what;
    std::vector<int64_t> dims;
    Status s = LoadEntry(e, index, &p, &what, &dims);
    if (!s.ok()) return s;
    return ReadData(p, what, dims, out);
  }

  Status ReadWholeInto(const EntryInfo& e, const Allocator& alloc) override {
    BundleEntryProto p;
    std::string what;
    std::vector<int64_t> dims;
    Status s = LoadEntry(e, 0, &p, &what, &dims);
    if (!s.ok()) return s;
    Shard* sh = nullptr;
    uint64_t off = 0, size = 0;
    int64_t n = 0;
    std::string where;
    s = Locate(p, what, dims, &sh, &off, &size, &n, &where);
    if (!s.ok()) return s;
    s = CheckPodSize(p, dims, n, size, where);
    if (!s.ok()) return s;
    char* dst = nullptr;
    s = alloc(dims, &dst);
    if (!s.ok()) return s;
    return ReadPod(p, sh, off, size, where, dst);
  }

 private:
  // The BundleEntryProto of stored slice `index` of `e` (of the tensor
  // itself when it is stored whole), checked against what the index listed.
  Status LoadEntry(const EntryInfo& e, size_t index, BundleEntryProto* p, std::string* what,
                   std::vector<int64_t>* dims) {
    std::string key = e.name;
    *dims = e.dims;
    const bool sliced = !(e.slices.size() == 1 && e.slices[0].IsFull());
    if (sliced) {
      const TensorSlice& ts = e.slices[index];
      key = EncodeTensorNameSlice(e.name, ts, static_cast<int>(ts.extents.size()));
      Status s = SliceDims(ts, e.dims, dims);
      if (!s.ok()) return MakeStatus(kDataLoss, s.message);
    }
    std::string value;
    Status s = table_->Get(key, &value);
    if (s.code == kNotFound)
      return MakeStatus(kDataLoss, "slice " + e.slices[index].DebugString() + " of tensor " + e.name +
                                       " is listed but not stored in " + index_name_);
    if (!s.ok()) return s;
    *what = "tensor " + e.name + (sliced ? " (slice " + e.slices[index].DebugString() + ")" : "");
    if (!p->ParseFromString(value)) return MakeStatus(kDataLoss, *what + " in " + index_name_ + ": corrupt BundleEntryProto");
    std::vector<int64_t> stored;
    s = DimsFromProto(p->shape(), *what + " in " + index_name_, &stored);
    if (!s.ok()) return s;
    if (p->dtype() != e.dtype || stored != *dims)
      return MakeStatus(kDataLoss, *what + " in " + index_name_ + ": stored as " + DTypeName(p->dtype()) + " " +
                                       ShapeString(stored) + ", expected " + DTypeName(e.dtype) + " " + ShapeString(*dims));
    return Status();
  }

  Status GetShard(int id, Shard** out) {
    Shard& sh = shards_[id];
    if (!sh.opened) {
      sh.opened = true;
      sh.path = DataFilename(prefix_, id, num_shards_);
      if (in_memory_) {
        if (static_cast<size_t>(id) >= mem_shards_.size()) {
          sh.open_status = MakeStatus(kNotFound, "no data shard " + std::to_string(id));
        } else {
          sh.mem = &mem_shards_[static_cast<size_t>(id)];
          sh.size = sh.mem->size();
        }
      } else {
        // The pending index of an interrupted overwrite pairs with the
        // pending data files, or with the final ones once renamed.
        if (pending_) {
          const std::string pending = sh.path + kPendingSuffix;
          sh.fd = ::open(pending.c_str(), O_RDONLY | O_CLOEXEC);
          if (sh.fd >= 0) sh.path = pending;
        }
        if (sh.fd < 0) sh.fd = ::open(sh.path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (sh.fd < 0) {
          sh.open_status = ErrnoStatus("cannot open data file", sh.path);
        } else if (::fstat(sh.fd, &st) != 0) {
          sh.open_status = ErrnoStatus("cannot stat data file", sh.path);
        } else {
          sh.size = static_cast<uint64_t>(st.st_size);
        }
      }
    }
    *out = &sh;
    return sh.open_status;
  }

  Status ReadAt(Shard* sh, uint64_t offset, uint64_t n, char* dst, const std::string& what) {
    if (sh->mem) {
      std::memcpy(dst, sh->mem->data() + offset, static_cast<size_t>(n));
      return Status();
    }
    uint64_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(sh->fd, dst + got, static_cast<size_t>(n - got), static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return ErrnoStatus("reading " + what + " from", sh->path);
      if (r == 0)
        return MakeStatus(kDataLoss, "Requested " + std::to_string(n) + " bytes but read " + std::to_string(got) +
                                         " bytes (" + what + " in " + sh->path + ")");
      got += static_cast<uint64_t>(r);
    }
    return Status();
  }

  // The shard, byte range and element count of an entry, all checked
  // against the data file before anything is allocated.
  Status Locate(const BundleEntryProto& p, const std::string& what, const std::vector<int64_t>& dims, Shard** sh,
                uint64_t* off, uint64_t* size, int64_t* n, std::string* where) {
    if (!DTypeSupported(p.dtype()))
      return MakeStatus(kUnimplemented, what + " in " + index_name_ + " has dtype " + DTypeName(p.dtype()) +
                                            ", which graphrt cannot read");
    if (p.shard_id() < 0 || p.shard_id() >= num_shards_)
      return MakeStatus(kDataLoss, what + " in " + index_name_ + ": shard_id " + std::to_string(p.shard_id()) +
                                       " outside [0, " + std::to_string(num_shards_) + ")");
    Status s = GetShard(p.shard_id(), sh);
    if (!s.ok()) return MakeStatus(s.code, what + ": " + s.message);
    *where = what + " in " + (*sh)->path;
    if (p.offset() < 0 || p.size() < 0) return MakeStatus(kDataLoss, *where + ": negative offset or size");
    *off = static_cast<uint64_t>(p.offset());
    *size = static_cast<uint64_t>(p.size());
    const uint64_t fsize = (*sh)->size;
    if (*off > fsize || *size > fsize - *off)
      return MakeStatus(kDataLoss, "Requested " + std::to_string(*size) + " bytes but read " +
                                       std::to_string(*off > fsize ? 0 : fsize - *off) + " bytes (" + *where +
                                       ": the data file is truncated)");
    s = NumElements(dims, *where, n);
    if (!s.ok()) return MakeStatus(kDataLoss, s.message);
    return Status();
  }

  Status CheckPodSize(const BundleEntryProto& p, const std::vector<int64_t>& dims, int64_t n, uint64_t size,
                      const std::string& where) {
    const uint64_t want = static_cast<uint64_t>(n) * static_cast<uint64_t>(DTypeSize(p.dtype()));
    if (want != size)
      return MakeStatus(kDataLoss, where + ": entry holds " + std::to_string(size) + " bytes, but " +
                                       DTypeName(p.dtype()) + " " + ShapeString(dims) + " needs " + std::to_string(want));
    return Status();
  }

  Status ReadPod(const BundleEntryProto& p, Shard* sh, uint64_t off, uint64_t size, const std::string& where,
                 char* dst) {
    Status s = ReadAt(sh, off, size, dst, where);
    if (!s.ok()) return s;
    if (MaskCrc(Crc32c(dst, static_cast<size_t>(size))) != p.crc32c())
      return MakeStatus(kDataLoss, "Checksum does not match: stored " + std::to_string(p.crc32c()) +
                                       " vs. calculated on the restored bytes (" + where + ")");
    if (big_endian_) SwapBytes(dst, static_cast<size_t>(size), p.dtype());
    return Status();
  }

  Status ReadData(const BundleEntryProto& p, const std::string& what, const std::vector<int64_t>& dims,
                  TensorValue* out) {
    Shard* sh = nullptr;
    uint64_t off = 0, size = 0;
    int64_t n = 0;
    std::string where;
    Status s = Locate(p, what, dims, &sh, &off, &size, &n, &where);
    if (!s.ok()) return s;
    out->dtype = p.dtype();
    out->dims = dims;
    out->bytes.clear();
    out->strings.clear();
    if (p.dtype() != DT_STRING) {
      s = CheckPodSize(p, dims, n, size, where);
      if (!s.ok()) return s;
      out->bytes.resize(static_cast<size_t>(size));
      return ReadPod(p, sh, off, size, where, out->bytes.empty() ? nullptr : &out->bytes[0]);
    }
    // Strings: varint64 lengths, masked crc32c of the lengths, the bytes.
    // Each string needs at least its one-byte length, so n <= size.
    if (static_cast<uint64_t>(n) > size || size - static_cast<uint64_t>(n) < 4)
      return MakeStatus(kDataLoss, where + ": entry of " + std::to_string(size) + " bytes is too short for " +
                                       std::to_string(n) + " strings");
    std::string buf(static_cast<size_t>(size), '\0');
    s = ReadAt(sh, off, size, buf.empty() ? nullptr : &buf[0], where);
    if (!s.ok()) return s;
    const char* q = buf.data();
    const char* end = buf.data() + buf.size();
    std::vector<uint64_t> lens(static_cast<size_t>(n));
    uint32_t len_crc = 0;
    uint64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t len = 0;
      int shift = 0;
      bool done = false;
      while (q < end && shift <= 63) {
        const uint64_t byte = static_cast<unsigned char>(*q++);
        len |= (byte & 0x7f) << shift;
        shift += 7;
        if (!(byte & 0x80)) {
          done = true;
          break;
        }
      }
      if (!done) return MakeStatus(kDataLoss, where + ": bad string length");
      lens[static_cast<size_t>(i)] = len;
      if (len > 0xffffffffull) {
        len_crc = Crc32cExtend(len_crc, reinterpret_cast<const char*>(&len), 8);
      } else {
        const uint32_t l32 = static_cast<uint32_t>(len);
        len_crc = Crc32cExtend(len_crc, reinterpret_cast<const char*>(&l32), 4);
      }
      if (len > static_cast<uint64_t>(end - q) || total > static_cast<uint64_t>(end - q) - len)
        return MakeStatus(kDataLoss, where + ": string lengths exceed the entry");
      total += len;
    }
    if (end - q < 4) return MakeStatus(kDataLoss, where + ": missing the length checksum");
    const uint32_t stored_len_crc = LoadLe32(q);
    if (MaskCrc(len_crc) != stored_len_crc)
      return MakeStatus(kDataLoss, "The length checksum does not match (" + where + ")");
    uint32_t crc = Crc32cExtend(len_crc, q, 4);
    q += 4;
    if (static_cast<uint64_t>(end - q) != total)
      return MakeStatus(kDataLoss, where + ": string bytes do not match the lengths");
    out->strings.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const size_t len = static_cast<size_t>(lens[static_cast<size_t>(i)]);
      out->strings[static_cast<size_t>(i)].assign(q, len);
      q += len;
    }
    crc = Crc32cExtend(crc, end - total, static_cast<size_t>(total));
    if (MaskCrc(crc) != p.crc32c()) return MakeStatus(kDataLoss, "Checksum does not match (" + where + ")");
    return Status();
  }

  std::string index_name_;
  std::unique_ptr<Table> table_;
  int num_shards_ = 1;
  bool big_endian_ = false;
  bool in_memory_ = false;
  bool pending_ = false;
  std::vector<std::string> mem_shards_;
  std::map<int, Shard> shards_;
};

// ------------------------------------------------------------- V1 reader

class V1Reader : public CheckpointReader {
 public:
  Status Init(const std::string& pattern) {
    prefix_ = pattern;
    v1_ = true;
    std::vector<std::string> files;
    const bool is_glob = pattern.find_first_of("*?[") != std::string::npos;
    if (!is_glob && FileExists(pattern)) {
      files.push_back(pattern);
    } else {
      glob_t g;
      std::memset(&g, 0, sizeof(g));
      const std::string pat = is_glob ? pattern : pattern + "-?" "????" "-of-?" "????";
      if (::glob(pat.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) files.push_back(g.gl_pathv[i]);
      ::globfree(&g);
    }
    if (files.empty())
      return MakeStatus(kNotFound, "Unsuccessful TensorSliceReader constructor: Failed to find any matching files for " +
                                       pattern);
    std::vector<std::pair<std::string, std::string>> contents;
    for (const std::string& f : files) {
      std::string bytes;
      Status s = ReadFileToString(f, &bytes);
      if (!s.ok()) return s;
      contents.emplace_back(f, std::move(bytes));
    }
    return InitFromContents(pattern, std::move(contents));
  }

  // (file name, bytes) of each V1 file.
  Status InitFromContents(const std::string& pattern, std::vector<std::pair<std::string, std::string>> contents) {
    prefix_ = pattern;
    v1_ = true;
    std::map<std::string, EntryInfo> merged;
    for (auto& [f, bytes] : contents) {
      std::unique_ptr<Table> t;
      Status s = Table::Open(std::move(bytes), f, &t);
      if (!s.ok()) return s;
      std::string meta_bytes;
      s = t->Get("", &meta_bytes);
      if (s.code == kNotFound) return MakeStatus(kDataLoss, f + ": V1 checkpoint without its metadata entry");
      if (!s.ok()) return s;
      SavedTensorSlices sts;
      if (!sts.ParseFromString(meta_bytes) || !sts.has_meta())
        return MakeStatus(kDataLoss, f + ": corrupt SavedTensorSliceMeta");
      s = CheckVersion(sts.meta().versions(), f);
      if (!s.ok()) return s;
      const size_t file_index = tables_.size();
      for (const auto& m : sts.meta().tensor()) {
        const std::string what = "tensor " + m.name() + " in " + f;
        std::vector<int64_t> dims;
        s = DimsFromProto(m.shape(), what, &dims);
        if (!s.ok()) return s;
        auto it = merged.find(m.name());
        if (it == merged.end()) {
          EntryInfo e;
          e.name = m.name();
          e.dtype = m.type();
          e.dims = dims;
          it = merged.emplace(m.name(), std::move(e)).first;
        } else if (it->second.dtype != m.type() || it->second.dims != dims) {
          return MakeStatus(kDataLoss, what + ": stored as " + DTypeName(m.type()) + " " + ShapeString(dims) +
                                           " but elsewhere as " + DTypeName(it->second.dtype) + " " +
                                           ShapeString(it->second.dims));
        }
        for (const auto& sp : m.slice()) {
          TensorSlice ts;
          s = SliceFromProto(sp, what, &ts);
          if (!s.ok()) return s;
          it->second.slices.push_back(ts);
          slice_files_[m.name()].push_back(file_index);
        }
      }
      tables_.push_back(std::move(t));
      file_names_.push_back(f);
    }
    for (auto& kv : merged) {
      Status s = CheckSlicesDisjoint(kv.second, pattern);
      if (!s.ok()) return s;
      entries_.push_back(std::move(kv.second));
    }
    return Status();
  }

 protected:
  Status ReadStored(const EntryInfo& e, size_t index, TensorValue* out) override {
    const size_t fi = slice_files_[e.name][index];
    const TensorSlice& ts = e.slices[index];
    const std::string what = "tensor " + e.name + " (slice " + ts.DebugString() + ") in " + file_names_[fi];
    std::string value;
    Status s = tables_[fi]->Get(EncodeTensorNameSlice(e.name, ts, static_cast<int>(ts.extents.size())), &value);
    if (s.code == kNotFound) return MakeStatus(kDataLoss, what + ": listed in the metadata but not stored");
    if (!s.ok()) return s;
    SavedTensorSlices sts;
    if (!sts.ParseFromString(value) || sts.data().name() != e.name)
      return MakeStatus(kDataLoss, what + ": corrupt SavedSlice");
    std::vector<int64_t> dims;
    s = SliceDims(ts, e.dims, &dims);
    if (!s.ok()) return MakeStatus(kDataLoss, what + ": " + s.message);
    out->dtype = e.dtype;
    out->dims = dims;
    return ValuesFromTensorProto(sts.data().data(), SliceElements(ts, e.dims), what, out);
  }

 private:
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::string> file_names_;
  std::map<std::string, std::vector<size_t>> slice_files_;
};

}  // namespace

// ------------------------------------------------- V1 TensorProto values

namespace {
template <typename Dst, typename Field>
void PutAll(const Field& f, std::string* bytes) {
  bytes->resize(static_cast<size_t>(f.size()) * sizeof(Dst));
  for (int i = 0; i < f.size(); ++i) {
    const Dst v = static_cast<Dst>(f.Get(i));
    std::memcpy(&(*bytes)[static_cast<size_t>(i) * sizeof(Dst)], &v, sizeof(Dst));
  }
}
}  // namespace

Status ValuesFromTensorProto(const TensorProto& p, int64_t n, const std::string& what, TensorValue* out) {
  out->bytes.clear();
  out->strings.clear();
  const int dt = out->dtype;
  const int esize = DTypeSize(dt);
  auto count_error = [&](int64_t got) {
    return MakeStatus(kDataLoss, what + ": holds " + std::to_string(got) + " values, expected " + std::to_string(n));
  };
  if (dt == DT_STRING) {
    if (p.string_val_size() != n) return count_error(p.string_val_size());
    out->strings.assign(p.string_val().begin(), p.string_val().end());
    return Status();
  }
  if (!p.tensor_content().empty()) {
    if (p.tensor_content().size() != static_cast<uint64_t>(n) * static_cast<uint64_t>(esize))
      return MakeStatus(kDataLoss, what + ": tensor_content has " + std::to_string(p.tensor_content().size()) + " bytes");
    out->bytes = p.tensor_content();
    return Status();
  }
  int64_t got = 0;
  switch (dt) {
    case DT_FLOAT: got = p.float_val_size(); if (got == n) PutAll<float>(p.float_val(), &out->bytes); break;
    case DT_DOUBLE: got = p.double_val_size(); if (got == n) PutAll<double>(p.double_val(), &out->bytes); break;
    case DT_INT32: case DT_QINT32: got = p.int_val_size(); if (got == n) PutAll<int32_t>(p.int_val(), &out->bytes); break;
    case DT_INT16: case DT_QINT16: got = p.int_val_size(); if (got == n) PutAll<int16_t>(p.int_val(), &out->bytes); break;
    case DT_UINT16: case DT_QUINT16: got = p.int_val_size(); if (got == n) PutAll<uint16_t>(p.int_val(), &out->bytes); break;
    case DT_INT8: case DT_QINT8: got = p.int_val_size(); if (got == n) PutAll<int8_t>(p.int_val(), &out->bytes); break;
    case DT_UINT8: case DT_QUINT8: got = p.int_val_size(); if (got == n) PutAll<uint8_t>(p.int_val(), &out->bytes); break;
    case DT_INT64: got = p.int64_val_size(); if (got == n) PutAll<int64_t>(p.int64_val(), &out->bytes); break;
    case DT_UINT32: got = p.uint32_val_size(); if (got == n) PutAll<uint32_t>(p.uint32_val(), &out->bytes); break;
    case DT_UINT64: got = p.uint64_val_size(); if (got == n) PutAll<uint64_t>(p.uint64_val(), &out->bytes); break;
    case DT_BOOL: got = p.bool_val_size(); if (got == n) PutAll<uint8_t>(p.bool_val(), &out->bytes); break;
    case DT_HALF: case DT_BFLOAT16: got = p.half_val_size(); if (got == n) PutAll<uint16_t>(p.half_val(), &out->bytes); break;
    case DT_COMPLEX64:
      got = p.scomplex_val_size() / 2;
      if (p.scomplex_val_size() % 2 == 0 && got == n) PutAll<float>(p.scomplex_val(), &out->bytes); else got = -1;
      break;
    case DT_COMPLEX128:
      got = p.dcomplex_val_size() / 2;
      if (p.dcomplex_val_size() % 2 == 0 && got == n) PutAll<double>(p.dcomplex_val(), &out->bytes); else got = -1;
      break;
    default:
      return MakeStatus(kUnimplemented, what + ": dtype " + DTypeName(dt) + " is not supported");
  }
  if (got != n) return count_error(got);
  return Status();
}

namespace {
template <typename Src, typename Field>
void GetAll(const std::string& bytes, Field* f) {
  const size_t n = bytes.size() / sizeof(Src);
  f->Reserve(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    Src v;
    std::memcpy(&v, bytes.data() + i * sizeof(Src), sizeof(Src));
    f->Add(v);
  }
}
}  // namespace

void ValuesToTensorProto(const TensorValue& t, TensorProto* p) {
  switch (t.dtype) {
    case DT_STRING: for (const auto& s : t.strings) p->add_string_val(s); break;
    case DT_FLOAT: GetAll<float>(t.bytes, p->mutable_float_val()); break;
    case DT_DOUBLE: GetAll<double>(t.bytes, p->mutable_double_val()); break;
    case DT_INT32: case DT_QINT32: GetAll<int32_t>(t.bytes, p->mutable_int_val()); break;
    case DT_INT16: case DT_QINT16: GetAll<int16_t>(t.bytes, p->mutable_int_val()); break;
    case DT_UINT16: case DT_QUINT16: GetAll<uint16_t>(t.bytes, p->mutable_int_val()); break;
    case DT_INT8: case DT_QINT8: GetAll<int8_t>(t.bytes, p->mutable_int_val()); break;
    case DT_UINT8: case DT_QUINT8: GetAll<uint8_t>(t.bytes, p->mutable_int_val()); break;
    case DT_INT64: GetAll<int64_t>(t.bytes, p->mutable_int64_val()); break;
    case DT_UINT32: GetAll<uint32_t>(t.bytes, p->mutable_uint32_val()); break;
    case DT_UINT64: GetAll<uint64_t>(t.bytes, p->mutable_uint64_val()); break;
    case DT_BOOL: {
      for (char c : t.bytes) p->add_bool_val(c != 0);
      break;
    }
    case DT_HALF: case DT_BFLOAT16: GetAll<uint16_t>(t.bytes, p->mutable_half_val()); break;
    case DT_COMPLEX64: GetAll<float>(t.bytes, p->mutable_scomplex_val()); break;
    case DT_COMPLEX128: GetAll<double>(t.bytes, p->mutable_dcomplex_val()); break;
    default: break;
  }
}

// ------------------------------------------------------------- opening

std::string DataFilename(const std::string& prefix, int shard, int num_shards) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + buf;
}
std::string IndexFilename(const std::string& prefix) { return prefix + ".index"; }

bool V2BundleExists(const std::string& prefix) {
  return FileExists(IndexFilename(prefix)) || FileExists(IndexFilename(prefix) + kPendingSuffix);
}

Status CheckpointReader::OpenV2(const std::string& prefix, std::unique_ptr<CheckpointReader>* out) {
  std::string bytes;
  auto r = std::make_unique<V2Reader>();
  // A pending index is a committed overwrite that a crash interrupted
  // (BundleWriter): it, not the older .index, is the checkpoint.
  std::string index = IndexFilename(prefix) + kPendingSuffix;
  Status s = ReadFileToString(index, &bytes);
  if (s.ok()) {
    r->SetPending();
  } else if (s.code == kNotFound) {
    index = IndexFilename(prefix);
    s = ReadFileToString(index, &bytes);
  }
  if (!s.ok()) return s;
  s = r->Init(prefix, std::move(bytes), index);
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status();
}

Status CheckpointReader::OpenV2FromMemory(const std::string& index, std::vector<std::string> shards,
                                          std::unique_ptr<CheckpointReader>* out) {
  auto r = std::make_unique<V2Reader>();
  r->SetMemoryShards(std::move(shards));
  Status s = r->Init("<memory>", index, "<memory>.index");
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status();
}

Status CheckpointReader::OpenV1(const std::string& pattern, std::unique_ptr<CheckpointReader>* out) {
  auto r = std::make_unique<V1Reader>();
  Status s = r->Init(pattern);
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status();
}

Status CheckpointReader::OpenV1FromMemory(const std::string& file, std::unique_ptr<CheckpointReader>* out) {
  auto r = std::make_unique<V1Reader>();
  Status s = r->InitFromContents("<memory>", {{"<memory>", file}});
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status();
}

Status CheckpointReader::Open(const std::string& prefix, std::unique_ptr<CheckpointReader>* out) {
  if (V2BundleExists(prefix)) return OpenV2(prefix, out);
  Status s = OpenV1(prefix, out);
  if (s.code == kNotFound)
    return MakeStatus(kNotFound, "no checkpoint at " + prefix + " (neither " + IndexFilename(prefix) +
                                     " nor a V1 checkpoint file matching it was found)");
  return s;
}

}  // namespace bundle
}  // namespace graphrt
