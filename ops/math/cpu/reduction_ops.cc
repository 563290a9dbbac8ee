// CPU kernels of the reductions Sum, Mean, Prod, Max, Min, All, Any.
//
// The input is first viewed as a few "runs" of adjacent dims that are either
// all reduced or all kept (TensorFlow's simplification: size-1 dims join the
// run before them, leading size-1 dims drop out), so any reduction becomes
// one of two shapes:
//  A. the innermost run is reduced: every output element reduces some
//     contiguous segments (row reduce; the full reduce is the one-output case);
//  B. the innermost run is kept: every output row accumulates contiguous
//     [D, L] blocks column-wise (column reduce).
// Both are Eigen-vectorized. Big reductions are split over the session's
// pool by outputs, or, when there are few outputs, by pieces of each
// output's reduction whose partial results are combined in a fixed order
// (results do not depend on timing).
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// ----------------------------------------------------------------- reducers
//
// A reducer over input type T accumulating in Acc:
//   Identity()            the value of an empty reduction (before Finalize)
//   Row(p, n)             the reduction of p[0..n)
//   Accum(acc, p, n)      acc[i] = op(acc[i], p[i]) for i < n
//   AccumAcc(acc, p, n)   the same for partial results of type Acc
//   Combine(a, b)         op(a, b)

template <typename T, typename Acc>
struct SumReducer {
  using AccT = Acc;
  static Acc Identity() { return Acc(0); }
  static Acc Combine(Acc a, Acc b) { return a + b; }
  static Acc Row(const T* p, int64_t n) {
    if constexpr (std::is_same_v<T, Acc>) {
      return EigenConstVecMap<T>(p, n).sum();
    } else {
      return EigenConstVecMap<T>(p, n).template cast<Acc>().sum();
    }
  }
  static void Accum(Acc* acc, const T* p, int64_t n) {
    if constexpr (std::is_same_v<T, Acc>) {
      EigenVecMap<Acc>(acc, n) += EigenConstVecMap<T>(p, n);
    } else {
      EigenVecMap<Acc>(acc, n) += EigenConstVecMap<T>(p, n).template cast<Acc>();
    }
  }
  static void AccumAcc(Acc* acc, const Acc* p, int64_t n) {
    EigenVecMap<Acc>(acc, n) += EigenConstVecMap<Acc>(p, n);
  }
};

template <typename T>
struct ProdReducer {
  using AccT = T;
  static T Identity() { return T(1); }
  static T Combine(T a, T b) { return a * b; }
  static T Row(const T* p, int64_t n) { return EigenConstVecMap<T>(p, n).prod(); }
  static void Accum(T* acc, const T* p, int64_t n) {
    EigenVecMap<T>(acc, n) *= EigenConstVecMap<T>(p, n);
  }
  static void AccumAcc(T* acc, const T* p, int64_t n) { Accum(acc, p, n); }
};

// Max and Min propagate NaN (TensorFlow's CPU kernels use Eigen's
// PropagateNaN reducers); the empty reduction is -inf / +inf for floating
// types and lowest() / max() for integers, as Eigen's reducers start from.
template <typename T, bool kIsMax>
struct MinMaxReducer {
  using AccT = T;
  static constexpr bool kFloat = std::is_floating_point_v<T>;
  using Op = std::conditional_t<kIsMax,
                                Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>,
                                Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>>;
  static T Identity() {
    if constexpr (kFloat) {
      return kIsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return kIsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  static T Combine(T a, T b) {
    if constexpr (kFloat) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return kIsMax ? (a < b ? b : a) : (b < a ? b : a);
  }
  static T Row(const T* p, int64_t n) {
    if constexpr (kIsMax) {
      return EigenConstVecMap<T>(p, n).template maxCoeff<Eigen::PropagateNaN>();
    } else {
      return EigenConstVecMap<T>(p, n).template minCoeff<Eigen::PropagateNaN>();
    }
  }
  static void Accum(T* acc, const T* p, int64_t n) {
    EigenVecMap<T> a(acc, n);
    a = a.binaryExpr(EigenConstVecMap<T>(p, n), Op());
  }
  static void AccumAcc(T* acc, const T* p, int64_t n) { Accum(acc, p, n); }
};

// All / Any on bool data viewed as bytes 0/1: min / max, vectorized.
template <bool kIsAll>
struct LogicalReducer {
  using AccT = uint8_t;
  static uint8_t Identity() { return kIsAll ? 1 : 0; }
  static uint8_t Combine(uint8_t a, uint8_t b) {
    return kIsAll ? std::min(a, b) : std::max(a, b);
  }
  static uint8_t Row(const uint8_t* p, int64_t n) {
    EigenConstVecMap<uint8_t> m(p, n);
    return kIsAll ? m.minCoeff() : m.maxCoeff();
  }
  static void Accum(uint8_t* acc, const uint8_t* p, int64_t n) {
    EigenVecMap<uint8_t> a(acc, n);
    if constexpr (kIsAll) {
      a = a.min(EigenConstVecMap<uint8_t>(p, n));
    } else {
      a = a.max(EigenConstVecMap<uint8_t>(p, n));
    }
  }
  static void AccumAcc(uint8_t* acc, const uint8_t* p, int64_t n) { Accum(acc, p, n); }
};

// ---------------------------------------------------------------- finalizers
//
// Turn the accumulated values (count = elements reduced per output) into
// the output; Empty() is what an output over no elements holds.

template <typename T>
struct NoFinalize {
  template <typename Acc>
  static void Run(const Acc*, T*, int64_t, int64_t) {}  // acc is the output
  static constexpr bool kInPlace = true;
};

// Mean = sum / count in the accumulation type (integer division for
// integers, as TensorFlow: int32 sums in int64 and divides there).
template <typename T>
struct MeanFinalize {
  static constexpr bool kInPlace = std::is_floating_point_v<T> || std::is_same_v<T, int64_t>;
  template <typename Acc>
  static void Run(const Acc* acc, T* out, int64_t n, int64_t count) {
    const Acc c = static_cast<Acc>(count);
    if constexpr (std::is_floating_point_v<T>) {
      EigenVecMap<T>(out, n) = EigenConstVecMap<Acc>(acc, n) / c;
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(acc[i] / c);
    }
  }
  // TensorFlow fills an empty mean with NaN (0 for integers).
  static T Empty() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
    return T(0);
  }
};

// ------------------------------------------------------------- small vectors

// Up to 16 entries inline, more on the heap (ranks above 16 are rare).
template <typename V>
class SmallVec {
 public:
  explicit SmallVec(int64_t n) : n_(n) {
    if (n > kInline) heap_.resize(static_cast<size_t>(n));
  }
  V& operator[](int64_t i) { return data()[i]; }
  const V& operator[](int64_t i) const { return data()[i]; }
  V* data() { return n_ > kInline ? heap_.data() : inline_; }
  const V* data() const { return n_ > kInline ? heap_.data() : inline_; }

 private:
  static constexpr int64_t kInline = 16;
  int64_t n_;
  V inline_[kInline] = {};
  std::vector<V> heap_;
};

// ------------------------------------------------------------------ the plan

// Reads the axes, checks them as TensorFlow does, and fills `bitmap`.
template <typename Tidx>
Status ReadAxes(const TensorView& axes, int rank, uint8_t* bitmap) {
  const Tidx* a = axes.data<Tidx>();
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t index = static_cast<int64_t>(a[i]);
    if (index < -rank || index >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension (", index, " for input with ",
                                     rank, " dimension(s)");
    }
    const int64_t wrapped = index < 0 ? index + rank : index;
    if (bitmap[wrapped]) {
      return errors::InvalidArgument(
          "Invalid reduction arguments: Axes contains duplicate dimension: ", wrapped);
    }
    bitmap[wrapped] = 1;
  }
  return Status();
}

// Offsets of multi-indices over a list of (dim, input stride) pairs, walked
// as an odometer (no division per step).
class Odometer {
 public:
  Odometer(const int64_t* dims, const int64_t* strides, int n, int64_t start)
      : dims_(dims), strides_(strides), n_(n), idx_(n) {
    for (int i = n - 1; i >= 0; --i) {
      idx_[i] = start % dims[i];
      start /= dims[i];
      offset_ += idx_[i] * strides[i];
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (int i = n_ - 1; i >= 0; --i) {
      offset_ += strides_[i];
      if (++idx_[i] < dims_[i]) return;
      offset_ -= strides_[i] * dims_[i];
      idx_[i] = 0;
    }
  }

 private:
  const int64_t* dims_;
  const int64_t* strides_;
  int n_;
  SmallVec<int64_t> idx_;
  int64_t offset_ = 0;
};

// Pieces per output below this many elements of work are not worth it.
constexpr int64_t kMinPieceElements = 16 * 1024;
// Column accumulation: rows shorter than this are folded several at a time
// into one wide accumulator of about kWideWidth elements.
constexpr int64_t kWideWidth = 256;

template <typename T, typename R>
class Reduction {
 public:
  using Acc = typename R::AccT;
  // The input is given as `m` runs (dims d, reduced flags alternate starting
  // with `reduce_first`); `in` points at the data, viewed as R's input type.
  Reduction(const int64_t* d, int m, bool reduce_first)
      : kept_dims_(m), kept_strides_(m), red_dims_(m), red_strides_(m) {
    int64_t stride = 1;
    SmallVec<int64_t> strides(m);
    for (int i = m - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= d[i];
    }
    inner_reduced_ = ((m - 1) % 2 == 0) == reduce_first;
    L_ = d[m - 1];
    // Runs taking part in the odometers: kept runs and reduced runs, minus
    // the innermost run (A) or the innermost two (B).
    const int last_kept = inner_reduced_ ? m - 1 : m - 2;  // runs [0, last_kept) walk
    out_units_ = 1;
    groups_ = 1;
    for (int i = 0; i < last_kept; ++i) {
      const bool reduced = (i % 2 == 0) == reduce_first;
      if (reduced) {
        red_dims_[n_red_] = d[i];
        red_strides_[n_red_++] = strides[i];
        groups_ *= d[i];
      } else {
        kept_dims_[n_kept_] = d[i];
        kept_strides_[n_kept_++] = strides[i];
        out_units_ *= d[i];
      }
    }
    if (inner_reduced_) {
      D_ = 1;
    } else {
      D_ = d[m - 2];
    }
  }

  bool inner_reduced() const { return inner_reduced_; }
  int64_t out_units() const { return out_units_; }
  // Elements of the reduction of one output unit, in "steps": elements for
  // A, rows of L for B.
  int64_t steps() const { return inner_reduced_ ? groups_ * L_ : groups_ * D_; }
  int64_t unit_width() const { return inner_reduced_ ? 1 : L_; }

  // A: the reduction of unit u over steps [b, e).
  Acc ReduceA(const T* in, int64_t u, int64_t b, int64_t e) const {
    const int64_t base = KeptOffset(u);
    Odometer odo(red_dims_.data(), red_strides_.data(), n_red_, b / L_);
    int64_t off = b % L_;
    Acc acc = R::Identity();
    while (b < e) {
      const int64_t n = std::min(L_ - off, e - b);
      acc = R::Combine(acc, R::Row(in + base + odo.offset() + off, n));
      b += n;
      off = 0;
      odo.Next();
    }
    return acc;
  }

  // B: accumulates rows [b, e) of unit u into acc[0..L).
  void AccumB(const T* in, int64_t u, int64_t b, int64_t e, Acc* acc) const {
    const int64_t base = KeptOffset(u);
    Odometer odo(red_dims_.data(), red_strides_.data(), n_red_, b / D_);
    int64_t j = b % D_;
    while (b < e) {
      const int64_t n = std::min(D_ - j, e - b);
      Columns(in + base + odo.offset() + j * L_, n, acc);
      b += n;
      j = 0;
      odo.Next();
    }
  }

 private:
  int64_t KeptOffset(int64_t u) const {
    int64_t off = 0;
    for (int i = n_kept_ - 1; i >= 0; --i) {
      off += (u % kept_dims_[i]) * kept_strides_[i];
      u /= kept_dims_[i];
    }
    return off;
  }

  // acc[0..L) op= rows p[0..rows) of length L.
  void Columns(const T* p, int64_t rows, Acc* acc) const {
    const int64_t L = L_;
    if (L * 2 > kWideWidth || rows < 4) {
      for (int64_t i = 0; i < rows; ++i) R::Accum(acc, p + i * L, L);
      return;
    }
    // Short rows: g consecutive rows are one contiguous stretch of g*L.
    const int64_t g = kWideWidth / L;
    const int64_t w = g * L;
    Acc wide[kWideWidth];
    std::fill(wide, wide + w, R::Identity());
    int64_t i = 0;
    for (; i + g <= rows; i += g) R::Accum(wide, p + i * L, w);
    for (; i < rows; ++i) R::Accum(acc, p + i * L, L);
    for (int64_t k = 0; k < g; ++k) R::AccumAcc(acc, wide + k * L, L);
  }

  bool inner_reduced_ = true;
  int64_t L_ = 1, D_ = 1;
  int64_t out_units_ = 1, groups_ = 1;
  int n_kept_ = 0, n_red_ = 0;
  SmallVec<int64_t> kept_dims_, kept_strides_, red_dims_, red_strides_;
};

// ----------------------------------------------------------------- the kernel

template <typename T, typename R, typename Fin>
class ReductionOp : public OpKernel {
 public:
  using Acc = typename R::AccT;
  // Bool data is reduced as bytes.
  using In = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView data = ctx->input(0);
    const TensorView axes = ctx->input(1);
    const int rank = data.rank();
    SmallVec<uint8_t> bitmap(rank);
    OP_REQUIRES_OK(ctx, axes.dtype() == GR_INT32 ? ReadAxes<int32_t>(axes, rank, bitmap.data())
                                                 : ReadAxes<int64_t>(axes, rank, bitmap.data()));
    // Output dims, and the runs (TensorFlow's simplification).
    SmallVec<int64_t> out_dims(rank), runs(rank);
    int out_rank = 0, m = 0;
    bool reduce_first = true;
    int i = 0;
    for (int k = 0; k < rank; ++k) {
      if (!bitmap[k]) {
        out_dims[out_rank++] = data.dim(k);
      } else if (keep_dims_) {
        out_dims[out_rank++] = 1;
      }
    }
    for (; i < rank && data.dim(i) == 1; ++i) {
    }
    if (i < rank) {
      reduce_first = bitmap[i] != 0;
      runs[m++] = data.dim(i);
      bool prev = reduce_first;
      for (++i; i < rank; ++i) {
        const int64_t size = data.dim(i);
        const bool cur = size == 1 ? prev : bitmap[i] != 0;
        if (cur != prev) {
          runs[m++] = size;
        } else {
          runs[m - 1] *= size;
        }
        prev = cur;
      }
    }
    // Nothing to reduce: the output is the input, reshaped.
    if (m == 0 || (m == 1 && !reduce_first)) {
      // (The core records the error, if any.)
      Api().ctx_set_output_from_input(ctx->raw(), 0, 0, out_rank, out_dims.data());
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), out_rank, &out).ok()) return;
    const int64_t n_out = out.NumElements();
    if (n_out == 0) return;
    T* o = out.data<T>();
    const int64_t n_in = data.NumElements();
    if (n_in == 0) {  // every output reduces nothing
      const T empty = EmptyValue();
      std::fill(o, o + n_out, empty);
      return;
    }
    const In* in = static_cast<const In*>(data.raw_data());
    const int64_t count = n_in / n_out;

    const Reduction<In, R> plan(runs.data(), m, reduce_first);
    // The accumulator: the output itself unless the finalizer needs another type.
    std::vector<Acc> acc_heap;
    Acc* acc;
    if constexpr (Fin::kInPlace && sizeof(Acc) == sizeof(T)) {
      acc = reinterpret_cast<Acc*>(o);
    } else {
      acc_heap.resize(static_cast<size_t>(n_out));
      acc = acc_heap.data();
    }

    const int64_t units = plan.out_units();
    const int64_t steps = plan.steps();
    const int64_t width = plan.unit_width();
    // Pieces per unit: 1 unless few units share a big reduction.
    int64_t pieces = 1;
    const int threads = ctx->num_threads();
    if (threads > 1 && n_in >= kParallelMinElements && units < 4 * threads) {
      pieces = (4 * threads + units - 1) / units;
      pieces = std::min(pieces, std::max<int64_t>(1, n_in / units / kMinPieceElements));
      pieces = std::min(pieces, steps);
    }
    const int64_t items = units * pieces;
    const int64_t cost = std::max<int64_t>(1, n_in / items);  // ~1 ns per element
    if (pieces == 1) {
      ForRange(ctx, items, n_in, cost, [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
          if (plan.inner_reduced()) {
            acc[u] = plan.ReduceA(in, u, 0, steps);
          } else {
            Acc* row = acc + u * width;
            std::fill(row, row + width, R::Identity());
            plan.AccumB(in, u, 0, steps, row);
          }
        }
      });
    } else {
      // Partial results per (unit, piece), combined below in piece order.
      std::vector<Acc> partial(static_cast<size_t>(items * width), R::Identity());
      ForRange(ctx, items, n_in, cost, [&](int64_t b, int64_t e) {
                 for (int64_t it = b; it < e; ++it) {
                   const int64_t u = it / pieces, p = it % pieces;
                   const int64_t s0 = steps * p / pieces, s1 = steps * (p + 1) / pieces;
                   if (plan.inner_reduced()) {
                     partial[static_cast<size_t>(it)] = plan.ReduceA(in, u, s0, s1);
                   } else {
                     plan.AccumB(in, u, s0, s1, partial.data() + it * width);
                   }
                 }
               });
      for (int64_t u = 0; u < units; ++u) {
        Acc* row = acc + u * width;
        const Acc* first = partial.data() + u * pieces * width;
        std::copy(first, first + width, row);
        for (int64_t p = 1; p < pieces; ++p) R::AccumAcc(row, first + p * width, width);
      }
    }
    Fin::Run(acc, o, n_out, count);
  }

 private:
  static T EmptyValue() {
    if constexpr (std::is_same_v<Fin, MeanFinalize<T>>) {
      return Fin::Empty();
    } else {
      return static_cast<T>(R::Identity());
    }
  }

  bool keep_dims_ = false;
};

template <typename T>
using SumOp = ReductionOp<T, SumReducer<T, T>, NoFinalize<T>>;
template <typename T>
using MeanOp = ReductionOp<
    T, SumReducer<T, std::conditional_t<std::is_same_v<T, int32_t>, int64_t, T>>, MeanFinalize<T>>;
template <typename T>
using ProdOp = ReductionOp<T, ProdReducer<T>, NoFinalize<T>>;
template <typename T>
using MaxOp = ReductionOp<T, MinMaxReducer<T, true>, NoFinalize<T>>;
template <typename T>
using MinOp = ReductionOp<T, MinMaxReducer<T, false>, NoFinalize<T>>;
using AllOp = ReductionOp<bool, LogicalReducer<true>, NoFinalize<bool>>;
using AnyOp = ReductionOp<bool, LogicalReducer<false>, NoFinalize<bool>>;

#define GR_REGISTER_REDUCTION(NAME, OP, T)                                    \
  REGISTER_KERNEL(Name(NAME)                                                  \
                      .Device(DEVICE_CPU)                                     \
                      .TypeConstraint<T>("T")                                 \
                      .TypeConstraint("Tidx", {GR_INT32, GR_INT64})           \
                      .HostMemory("reduction_indices"),                       \
                  OP<T>)

#define GR_REGISTER_REDUCTIONS(T)              \
  GR_REGISTER_REDUCTION("Sum", SumOp, T);      \
  GR_REGISTER_REDUCTION("Mean", MeanOp, T);    \
  GR_REGISTER_REDUCTION("Prod", ProdOp, T);    \
  GR_REGISTER_REDUCTION("Max", MaxOp, T);      \
  GR_REGISTER_REDUCTION("Min", MinOp, T)

GR_REGISTER_REDUCTIONS(float);
GR_REGISTER_REDUCTIONS(double);
GR_REGISTER_REDUCTIONS(int32_t);
GR_REGISTER_REDUCTIONS(int64_t);

#undef GR_REGISTER_REDUCTIONS
#undef GR_REGISTER_REDUCTION

REGISTER_KERNEL(Name("All")
                    .Device(DEVICE_CPU)
                    .TypeConstraint("Tidx", {GR_INT32, GR_INT64})
                    .HostMemory("reduction_indices"),
                AllOp);
REGISTER_KERNEL(Name("Any")
                    .Device(DEVICE_CPU)
                    .TypeConstraint("Tidx", {GR_INT32, GR_INT64})
                    .HostMemory("reduction_indices"),
                AnyOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
