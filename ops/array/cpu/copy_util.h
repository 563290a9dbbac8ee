// Data movement for the array family's CPU kernels, by element size (the
// kernels are dtype-agnostic) or through string_assign for DT_STRING.
//
// The workhorse is StridedCopy: dst[dst_base + sum(i_d * dst_stride_d)] =
// src[src_base + sum(i_d * src_stride_d)] over an index box `dims`. Strides
// are in elements and may be 0 (broadcast) or negative (reverse). Slice,
// StridedSlice, Transpose, Tile, BroadcastTo, Reverse, Pad, MirrorPad,
// Concat and Split are all such copies. Adjacent dims that are contiguous in
// both tensors are merged, so the innermost loop is a memcpy wherever the
// data allows; a transposing copy takes a cache-blocked path; large copies
// are split over the session's pool.
#ifndef GRAPHRT_OPS_ARRAY_CPU_COPY_UTIL_H_
#define GRAPHRT_OPS_ARRAY_CPU_COPY_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "array/array_util.h"
#include "common/cpu/parallel.h"

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace array {

// A small vector with inline storage for the usual ranks: kernels build
// their index boxes without touching the heap.
template <typename T, int N = 12>
class SmallVec {
 public:
  SmallVec() = default;
  explicit SmallVec(int n, T v = T()) { resize(n, v); }
  SmallVec(const SmallVec& o) { *this = o; }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      resize(o.size_);
      std::copy(o.data(), o.data() + o.size_, data());
    }
    return *this;
  }
  void resize(int n, T v = T()) {
    if (n > capacity()) {
      const int cap = std::max(n, 2 * capacity());
      std::unique_ptr<T[]> grown(new T[static_cast<size_t>(cap)]);
      std::copy(data(), data() + size_, grown.get());
      heap_ = std::move(grown);
      heap_capacity_ = cap;
    }
    for (int i = size_; i < n; ++i) data()[i] = v;
    size_ = n;
  }
  void push_back(T v) {
    resize(size_ + 1);
    data()[size_ - 1] = v;
  }
  void clear() { size_ = 0; }
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  T& operator[](int i) { return data()[i]; }
  const T& operator[](int i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

 private:
  int capacity() const { return heap_ ? heap_capacity_ : N; }
  T inline_[N] = {};
  std::unique_ptr<T[]> heap_;
  int heap_capacity_ = 0;
  int size_ = 0;
};

using Dims = SmallVec<int64_t>;

// The product of d[from, to). For the dims of a valid shape only: the size
// rule bounds every partial product then; check other dims with
// NumElementsOf first.
inline int64_t Product(const Dims& d, int from = 0, int to = -1) {
  if (to < 0) to = d.size();
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= d[i];
  return n;
}

// Row-major strides (in elements) of `dims`.
inline Dims RowMajorStrides(const int64_t* dims, int rank) {
  Dims s(rank, 1);
  for (int i = rank - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// A 16-byte element (complex128) for typed copies.
struct Elem16 {
  uint64_t a, b;
};

// Where elements go: a plain buffer, or a string tensor's output view.
struct CopyTarget {
  void* data = nullptr;
  GR_TensorView* string_view = nullptr;  // set for DT_STRING outputs
};

struct CopyBox {
  Dims dims, src_strides, dst_strides;
  void Add(int64_t d, int64_t s, int64_t t) {
    dims.push_back(d);
    src_strides.push_back(s);
    dst_strides.push_back(t);
  }
  int64_t NumElements() const { return Product(dims); }
};

// Drops size-1 dims and merges neighbours that are contiguous in both
// tensors. Returns false when the box is empty (some dim is 0).
inline bool Simplify(CopyBox* box) {
  CopyBox out;
  for (int i = 0; i < box->dims.size(); ++i) {
    if (box->dims[i] == 0) return false;
    if (box->dims[i] == 1) continue;
    if (!out.dims.empty()) {
      const int k = out.dims.size() - 1;
      if (out.src_strides[k] == box->src_strides[i] * box->dims[i] &&
          out.dst_strides[k] == box->dst_strides[i] * box->dims[i]) {
        out.dims[k] *= box->dims[i];
        out.src_strides[k] = box->src_strides[i];
        out.dst_strides[k] = box->dst_strides[i];
        continue;
      }
    }
    out.Add(box->dims[i], box->src_strides[i], box->dst_strides[i]);
  }
  if (out.dims.empty()) out.Add(1, 1, 1);
  *box = out;
  return true;
}

// Whether a non-empty box reads one contiguous run of the source in the
// order it writes (a zero-copy candidate).
inline bool IsContiguousRun(CopyBox box) {
  return Simplify(&box) && box.dims.size() == 1 && box.src_strides[0] == 1 && box.dst_strides[0] == 1;
}

template <typename E>
inline void CopyRun(const E* src, int64_t ss, E* dst, int64_t ds, int64_t n) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(E));
  } else if (ss == 0) {
    const E v = *src;
    for (int64_t i = 0; i < n; ++i) dst[i * ds] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * ds] = src[i * ss];
  }
}

inline void CopyStringRun(const GR_StringElem* src, int64_t ss, GR_TensorView* view,
                          int64_t dst_index, int64_t ds, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const GR_StringElem& e = src[i * ss];
    Api().string_assign(view, dst_index + i * ds, e.data, e.size);
  }
}

// Copies units [unit_begin, unit_end) of a simplified box. A unit is a
// chunk of at most `chunk` elements of one row (the innermost dim), so that
// a few long rows still split over the pool. E is the element type, or
// GR_StringElem for strings.
template <typename E>
void CopyUnits(const CopyBox& box, const E* src, int64_t src_base, const CopyTarget& dst,
               int64_t dst_base, int64_t chunk, int64_t unit_begin, int64_t unit_end) {
  const int r = box.dims.size();
  const int64_t inner = box.dims[r - 1];
  const int64_t per_row = (inner + chunk - 1) / chunk;
  const int64_t ss = box.src_strides[r - 1], ds = box.dst_strides[r - 1];
  Dims idx(r - 1, 0);
  int64_t so = src_base, dof = dst_base;
  int64_t row = unit_begin / per_row;
  int64_t rem = row;
  for (int d = r - 2; d >= 0; --d) {
    idx[d] = rem % box.dims[d];
    rem /= box.dims[d];
    so += idx[d] * box.src_strides[d];
    dof += idx[d] * box.dst_strides[d];
  }
  for (int64_t u = unit_begin; u < unit_end; ++u) {
    const int64_t c = u - row * per_row;
    if (c == per_row) {
      // Next row: advance the odometer over the outer dims.
      ++row;
      for (int d = r - 2; d >= 0; --d) {
        so += box.src_strides[d];
        dof += box.dst_strides[d];
        if (++idx[d] < box.dims[d]) break;
        so -= box.src_strides[d] * box.dims[d];
        dof -= box.dst_strides[d] * box.dims[d];
        idx[d] = 0;
      }
      --u;
      continue;
    }
    const int64_t lo = c * chunk, n = std::min(inner, lo + chunk) - lo;
    if constexpr (std::is_same_v<E, GR_StringElem>) {
      CopyStringRun(src + so + lo * ss, ss, dst.string_view, dof + lo * ds, ds, n);
    } else {
      CopyRun(src + so + lo * ss, ss, static_cast<E*>(dst.data) + dof + lo * ds, ds, n);
    }
  }
}

// A transposing copy: dim `a` is contiguous in the source (stride 1), the
// innermost dim b contiguous in the destination (stride 1). A unit is a
// band of kBand indices of b (for one index of the other dims), swept along
// a in kBand x kBand blocks: each block is read as kBand contiguous source
// runs and written as kBand contiguous destination runs through a small
// buffer. A band keeps only kBand source streams live, which stays clear of
// cache-set conflicts even for power-of-two row strides.
constexpr int64_t kBand = 8;

template <typename E>
void CopyTransposed(const CopyBox& box, int a, const E* src, int64_t src_base, E* dst,
                    int64_t dst_base, int64_t unit_begin, int64_t unit_end) {
  const int r = box.dims.size();
  const int64_t na = box.dims[a], nb = box.dims[r - 1];
  const int64_t sb = box.src_strides[r - 1], da = box.dst_strides[a];
  const int64_t bands = (nb + kBand - 1) / kBand;
  for (int64_t u = unit_begin; u < unit_end; ++u) {
    const int64_t band = u % bands;
    int64_t rem = u / bands;
    int64_t so = src_base, dof = dst_base;
    for (int d = r - 2; d >= 0; --d) {
      if (d == a) continue;
      const int64_t i = rem % box.dims[d];
      rem /= box.dims[d];
      so += i * box.src_strides[d];
      dof += i * box.dst_strides[d];
    }
    const int64_t b0 = band * kBand;
    const int64_t bn = std::min(kBand, nb - b0);
    const E* s = src + so + b0 * sb;
    E* t = dst + dof + b0;
    int64_t a0 = 0;
    if (bn == kBand) {
      E buf[kBand][kBand];
      for (; a0 + kBand <= na; a0 += kBand) {
        for (int64_t j = 0; j < kBand; ++j) {
          const E* row = s + j * sb + a0;
          for (int64_t i = 0; i < kBand; ++i) buf[i][j] = row[i];
        }
        for (int64_t i = 0; i < kBand; ++i) {
          E* out = t + (a0 + i) * da;
          for (int64_t j = 0; j < kBand; ++j) out[j] = buf[i][j];
        }
      }
    }
    for (; a0 < na; ++a0) {
      for (int64_t j = 0; j < bn; ++j) t[a0 * da + j] = s[j * sb + a0];
    }
  }
}

template <typename E>
void StridedCopyTyped(OpKernelContext* ctx, CopyBox box, const E* src, int64_t src_base,
                      const CopyTarget& dst, int64_t dst_base) {
  if (!Simplify(&box)) return;
  const int r = box.dims.size();
  const int64_t total = box.NumElements();
  if constexpr (!std::is_same_v<E, GR_StringElem>) {
    // Transposing copy: the innermost dim is strided in the source, and
    // another dim is contiguous there. A narrow innermost dim (NCHW -> NHWC
    // with 3 channels) is swept along `a` too: a few source streams, one
    // contiguous destination, instead of rows of 3 elements.
    if (r >= 2 && box.dst_strides[r - 1] == 1 && box.src_strides[r - 1] != 1 &&
        box.src_strides[r - 1] != 0) {
      int a = -1;
      for (int d = 0; d < r - 1; ++d)
        if (box.src_strides[d] == 1 && box.dims[d] >= 8) a = d;
      if (a >= 0) {
        const int64_t units = total / (box.dims[a] * box.dims[r - 1]) *
                              ((box.dims[r - 1] + kBand - 1) / kBand);
        E* d = static_cast<E*>(dst.data);
        ForRange(ctx, units, total, kBand * box.dims[a], [&](int64_t b, int64_t e) {
          CopyTransposed<E>(box, a, src, src_base, d, dst_base, b, e);
        });
        return;
      }
    }
  }
  const int64_t inner = box.dims[r - 1];
  constexpr bool kString = std::is_same_v<E, GR_StringElem>;
  const int64_t chunk = kString ? 4096 : 64 * 1024;
  const int64_t units = total / inner * ((inner + chunk - 1) / chunk);
  const int64_t cost = kString ? 40 * std::min(inner, chunk) : 1 + std::min(inner, chunk) / 4;
  ForRange(ctx, units, kString ? total * 16 : total, cost, [&](int64_t b, int64_t e) {
    CopyUnits<E>(box, src, src_base, dst, dst_base, chunk, b, e);
  });
}

// Strided copy of elements of `dtype` (any plain-data dtype or string).
// Returns false for dtypes without a fixed element layout.
inline bool StridedCopy(OpKernelContext* ctx, int32_t dtype, const CopyBox& box, const void* src,
                        int64_t src_base, const CopyTarget& dst, int64_t dst_base) {
  if (dtype == GR_STRING) {
    StridedCopyTyped<GR_StringElem>(ctx, box, static_cast<const GR_StringElem*>(src), src_base,
                                    dst, dst_base);
    return true;
  }
  switch (ElementSize(dtype)) {
    case 1: StridedCopyTyped<uint8_t>(ctx, box, static_cast<const uint8_t*>(src), src_base, dst, dst_base); return true;
    case 2: StridedCopyTyped<uint16_t>(ctx, box, static_cast<const uint16_t*>(src), src_base, dst, dst_base); return true;
    case 4: StridedCopyTyped<uint32_t>(ctx, box, static_cast<const uint32_t*>(src), src_base, dst, dst_base); return true;
    case 8: StridedCopyTyped<uint64_t>(ctx, box, static_cast<const uint64_t*>(src), src_base, dst, dst_base); return true;
    case 16: StridedCopyTyped<Elem16>(ctx, box, static_cast<const Elem16*>(src), src_base, dst, dst_base); return true;
    default: return false;
  }
}

inline CopyTarget TargetOf(TensorView* out) {
  CopyTarget t;
  t.data = out->raw_data();
  if (out->dtype() == GR_STRING) t.string_view = out->raw();
  return t;
}

// The box of a strided slice (StridedSlice's spec) of a row-major tensor of
// `dims`: the slice's processing shape, with the tensor's strides times the
// slice's on the tensor side and a contiguous slice on the other side.
// `tensor_is_src`: StridedSlice reads the tensor; StridedSliceGrad writes
// it. *base: the tensor-side offset of the slice's first element.
inline CopyBox StridedSliceBox(const int64_t* dims, int r, const StridedSliceSpec& spec,
                               bool tensor_is_src, int64_t* base) {
  const Dims tensor_strides = RowMajorStrides(dims, r);
  const Dims slice_strides = RowMajorStrides(spec.processing_shape.data(), r);
  CopyBox box;
  *base = 0;
  for (int i = 0; i < r; ++i) {
    *base += spec.begin[i] * tensor_strides[i];
    // A stride only matters where the slice has two or more elements, and
    // then |stride| < dim; a huge one (2^62 for one element) would
    // overflow times the tensor's stride.
    const int64_t step = spec.processing_shape[i] > 1 ? spec.strides[i] * tensor_strides[i] : 0;
    if (tensor_is_src) {
      box.Add(spec.processing_shape[i], step, slice_strides[i]);
    } else {
      box.Add(spec.processing_shape[i], slice_strides[i], step);
    }
  }
  return box;
}

// Error for dtypes the data-movement kernels cannot copy.
inline Status UnsupportedDtype(const char* op, int32_t dtype) {
  return errors::Unimplemented(op, " does not support dtype ", DataTypeName(dtype));
}

// True when the dtype can be copied by the kernels here.
inline bool Copyable(int32_t dtype) { return dtype == GR_STRING || ElementSize(dtype) > 0; }

// Copies `n` whole elements of `dtype` (element size `es`) from `src` at
// element `src_off` to `dst` at element `dst_off`; strings one by one.
inline void CopyElements(int32_t dtype, int es, const void* src, int64_t src_off, TensorView* dst,
                         int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (dtype == GR_STRING) {
    const GR_StringElem* s = static_cast<const GR_StringElem*>(src) + src_off;
    for (int64_t i = 0; i < n; ++i) Api().string_assign(dst->raw(), dst_off + i, s[i].data, s[i].size);
  } else {
    std::memcpy(static_cast<char*>(dst->raw_data()) + dst_off * es,
                static_cast<const char*>(src) + src_off * es, static_cast<size_t>(n * es));
  }
}

// Fills `n` elements of `out` starting at `offset` with the element at
// `value` (same dtype), split over the pool when large.
inline void FillElements(OpKernelContext* ctx, TensorView* out, int64_t offset, int64_t n,
                         const void* value) {
  if (n <= 0) return;
  if (out->dtype() == GR_STRING) {
    const GR_StringElem* v = static_cast<const GR_StringElem*>(value);
    ForRange(ctx, n, n * 16, 40, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) Api().string_assign(out->raw(), offset + i, v->data, v->size);
    });
    return;
  }
  const int es = ElementSize(out->dtype());
  char* base = static_cast<char*>(out->raw_data()) + offset * es;
  auto fill = [&](auto tag) {
    using E = decltype(tag);
    E v;
    std::memcpy(&v, value, sizeof(E));
    E* p = reinterpret_cast<E*>(base);
    ForRange(ctx, n, n, 1, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
  };
  switch (es) {
    case 1: fill(uint8_t{}); break;
    case 2: fill(uint16_t{}); break;
    case 4: fill(uint32_t{}); break;
    case 8: fill(uint64_t{}); break;
    case 16: fill(Elem16{}); break;
    default: break;
  }
}

}  // namespace array
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_ARRAY_CPU_COPY_UTIL_H_
