// CPU kernels for the element-wise math ops: Add, AddV2, Sub, Mul, RealDiv
// (numpy broadcasting) and Neg.
//
// Speed matters here at both ends:
//  - tiny tensors (a chain of 1000 AddV2 on [4]): no heap allocation, few
//    ABI calls, the input buffer reused in place when nobody else holds it;
//  - large tensors: Eigen-vectorized loops, split over the session's pool.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Most dims the general broadcasting path handles after merging adjacent
// dims that broadcast alike (any realistic pair of shapes fits).
constexpr int kMaxBcastDims = 8;

template <typename T>
using Arr = EigenArr<T>;
template <typename T>
using VecMap = EigenVecMap<T>;
template <typename T>
using ConstVecMap = EigenConstVecMap<T>;

// Binary functors: assign op(x, y) to `o`, where x and y are Eigen array
// expressions of equal length (a map, or a constant for a broadcast scalar).
struct AddFn {
  static constexpr int64_t kCost = 1;  // rough ns per element
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x + y;
  }
};
struct SubFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x - y;
  }
};
struct MulFn {
  static constexpr int64_t kCost = 1;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x * y;
  }
};
struct DivFn {
  static constexpr int64_t kCost = 4;
  template <typename O, typename X, typename Y>
  static void Run(O&& o, const X& x, const Y& y) {
    o = x / y;
  }
};

// o[0..n) = op(x[0..n), y[0..n)).
template <typename T, typename F>
inline void VecVec(T* o, const T* x, const T* y, int64_t n) {
  F::Run(VecMap<T>(o, n), ConstVecMap<T>(x, n), ConstVecMap<T>(y, n));
}
// o[0..n) = op(x[0..n), y).
template <typename T, typename F>
inline void VecScalar(T* o, const T* x, T y, int64_t n) {
  F::Run(VecMap<T>(o, n), ConstVecMap<T>(x, n), Arr<T>::Constant(n, y));
}
// o[0..n) = op(x, y[0..n)).
template <typename T, typename F>
inline void ScalarVec(T* o, T x, const T* y, int64_t n) {
  F::Run(VecMap<T>(o, n), Arr<T>::Constant(n, x), ConstVecMap<T>(y, n));
}

inline bool SameDims(const int64_t* a, const int64_t* b, int rank) {
  return rank == 0 || std::memcmp(a, b, sizeof(int64_t) * static_cast<size_t>(rank)) == 0;
}

// Dims of up to 8 entries on the stack, more on the heap (rare).
class DimBuffer {
 public:
  explicit DimBuffer(int rank) : rank_(rank) {
    if (rank > kInline) heap_.resize(static_cast<size_t>(rank));
  }
  int64_t* data() { return rank_ > kInline ? heap_.data() : inline_; }
  int rank() const { return rank_; }

 private:
  static constexpr int kInline = 8;
  int rank_;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
};

// The general broadcasting plan: the output viewed as `rank` merged dims,
// with per-input element strides (0 where the input is broadcast).
struct BcastPlan {
  int rank = 0;
  int64_t dims[kMaxBcastDims];
  int64_t sx[kMaxBcastDims];
  int64_t sy[kMaxBcastDims];
};

// Fills `out_dims` (rank max(rx, ry)) with the broadcast shape; false if
// the shapes are incompatible.
inline bool BroadcastDims(const TensorView& x, const TensorView& y, int64_t* out_dims) {
  const int rx = x.rank(), ry = y.rank();
  const int ro = std::max(rx, ry);
  for (int i = 0; i < ro; ++i) {
    const int64_t dx = i < ro - rx ? 1 : x.dim(i - (ro - rx));
    const int64_t dy = i < ro - ry ? 1 : y.dim(i - (ro - ry));
    if (dx == dy || dy == 1) {
      out_dims[i] = dx;
    } else if (dx == 1) {
      out_dims[i] = dy;
    } else {
      return false;
    }
  }
  return true;
}

// Merges adjacent output dims in which each input is either broadcast in
// both or in neither; dims of size 1 drop out. False if the merged rank
// exceeds kMaxBcastDims. Assumes compatible, non-empty shapes.
inline bool MakePlan(const TensorView& x, const TensorView& y, BcastPlan* p) {
  const int rx = x.rank(), ry = y.rank();
  const int ro = std::max(rx, ry);
  bool bx[kMaxBcastDims], by[kMaxBcastDims];
  int g = -1;
  for (int i = 0; i < ro; ++i) {
    const int64_t dx = i < ro - rx ? 1 : x.dim(i - (ro - rx));
    const int64_t dy = i < ro - ry ? 1 : y.dim(i - (ro - ry));
    const int64_t d = std::max(dx, dy);
    if (d == 1) continue;
    const bool cbx = dx == 1, cby = dy == 1;
    if (g >= 0 && bx[g] == cbx && by[g] == cby) {
      p->dims[g] *= d;
    } else {
      if (++g >= kMaxBcastDims) return false;
      p->dims[g] = d;
      bx[g] = cbx;
      by[g] = cby;
    }
  }
  p->rank = g + 1;
  int64_t ax = 1, ay = 1;
  for (int i = p->rank - 1; i >= 0; --i) {
    p->sx[i] = bx[i] ? 0 : ax;
    p->sy[i] = by[i] ? 0 : ay;
    if (!bx[i]) ax *= p->dims[i];
    if (!by[i]) ay *= p->dims[i];
  }
  return true;
}

// Output rows [r0, r1) of the plan, a row being the innermost merged dim.
// The outer index is an odometer: one division per chunk, none per row.
template <typename T, typename F>
void RunPlanRows(const BcastPlan& p, const T* x, const T* y, T* o, int64_t r0, int64_t r1) {
  const int outer = p.rank - 1;
  const int64_t n = p.dims[outer];
  const bool x_vec = p.sx[outer] != 0, y_vec = p.sy[outer] != 0;
  int64_t idx[kMaxBcastDims];
  int64_t ox = 0, oy = 0;
  int64_t rem = r0;
  for (int g = outer - 1; g >= 0; --g) {
    idx[g] = rem % p.dims[g];
    rem /= p.dims[g];
    ox += idx[g] * p.sx[g];
    oy += idx[g] * p.sy[g];
  }
  for (int64_t r = r0; r < r1; ++r) {
    T* orow = o + r * n;
    if (x_vec && y_vec) {
      VecVec<T, F>(orow, x + ox, y + oy, n);
    } else if (x_vec) {
      VecScalar<T, F>(orow, x + ox, y[oy], n);
    } else {
      ScalarVec<T, F>(orow, x[ox], y + oy, n);
    }
    for (int g = outer - 1; g >= 0; --g) {
      ox += p.sx[g];
      oy += p.sy[g];
      if (++idx[g] < p.dims[g]) break;
      ox -= p.sx[g] * p.dims[g];
      oy -= p.sy[g] * p.dims[g];
      idx[g] = 0;
    }
  }
}

template <typename T, typename F>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const TensorView y = ctx->input(1);
    const int rx = x.rank(), ry = y.rank();
    const int64_t nx = x.NumElements(), ny = y.NumElements();
    TensorView out;

    if (rx == ry && SameDims(x.dims_data(), y.dims_data(), rx)) {
      if (!Output(ctx, 0, x, &out) || nx == 0) return;
      const T* xp = x.data<T>();
      const T* yp = y.data<T>();
      T* op = out.data<T>();
      ForRange(ctx, nx, nx, F::kCost,
               [=](int64_t b, int64_t e) { VecVec<T, F>(op + b, xp + b, yp + b, e - b); });
      return;
    }
    if (ny == 1 && ry <= rx) {  // y broadcasts as a scalar; output shape = x's
      if (!Output(ctx, 0, x, &out) || nx == 0) return;
      const T* xp = x.data<T>();
      const T ys = y.data<T>()[0];
      T* op = out.data<T>();
      ForRange(ctx, nx, nx, F::kCost,
               [=](int64_t b, int64_t e) { VecScalar<T, F>(op + b, xp + b, ys, e - b); });
      return;
    }
    if (nx == 1 && rx <= ry) {  // x broadcasts as a scalar; output shape = y's
      if (!Output(ctx, 1, y, &out) || ny == 0) return;
      const T xs = x.data<T>()[0];
      const T* yp = y.data<T>();
      T* op = out.data<T>();
      ForRange(ctx, ny, ny, F::kCost,
               [=](int64_t b, int64_t e) { ScalarVec<T, F>(op + b, xs, yp + b, e - b); });
      return;
    }
    General(ctx, x, y);
  }

 private:
  // Output 0 with `like`'s shape, reusing input `index`'s buffer if possible.
  static bool Output(OpKernelContext* ctx, int index, const TensorView& like, TensorView* out) {
    // On failure the core has recorded the error already.
    return ctx->forward_input_or_allocate_output(index, 0, like.dims_data(), like.rank(), out).ok();
  }

  static void General(OpKernelContext* ctx, const TensorView& x, const TensorView& y) {
    const int ro = std::max(x.rank(), y.rank());
    DimBuffer od(ro);
    int64_t* out_dims = od.data();
    OP_REQUIRES(ctx, BroadcastDims(x, y, out_dims),
                errors::InvalidArgument("Incompatible shapes: ", sf::ShapeString(x), " vs. ",
                                        sf::ShapeString(y)));
    int64_t total = 1;
    for (int i = 0; i < ro; ++i) total *= out_dims[i];

    // Reuse an input's buffer when the output has its exact shape.
    TensorView out;
    Status s;
    if (x.rank() == ro && SameDims(x.dims_data(), out_dims, ro)) {
      s = ctx->forward_input_or_allocate_output(0, 0, out_dims, ro, &out);
    } else if (y.rank() == ro && SameDims(y.dims_data(), out_dims, ro)) {
      s = ctx->forward_input_or_allocate_output(1, 0, out_dims, ro, &out);
    } else {
      s = ctx->allocate_output(0, out_dims, ro, &out);
    }
    if (!s.ok() || total == 0) return;

    BcastPlan plan;
    OP_REQUIRES(ctx, MakePlan(x, y, &plan),
                errors::Unimplemented("Broadcast between ", sf::ShapeString(x), " and ",
                                      sf::ShapeString(y), " is not supported yet: more than ",
                                      kMaxBcastDims, " dims after merging"));
    const T* xp = x.data<T>();
    const T* yp = y.data<T>();
    T* op = out.data<T>();
    if (plan.rank == 0) {  // every dim is 1
      VecVec<T, F>(op, xp, yp, 1);
      return;
    }
    const int64_t row = plan.dims[plan.rank - 1];
    const int64_t rows = total / row;
    ForRange(ctx, rows, total, F::kCost * row + 5, [&plan, xp, yp, op](int64_t b, int64_t e) {
      RunPlanRows<T, F>(plan, xp, yp, op, b, e);
    });
  }
};

// ------------------------------------------------------------------- Neg

template <typename T>
class NegOp : public OpKernel {
 public:
  explicit NegOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    TensorView out;
    if (!ctx->forward_input_or_allocate_output(0, 0, x.dims_data(), x.rank(), &out).ok()) return;
    const int64_t n = x.NumElements();
    if (n == 0) return;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    ForRange(ctx, n, n, 1, [=](int64_t b, int64_t e) {
      VecMap<T>(op + b, e - b) = -ConstVecMap<T>(xp + b, e - b);
    });
  }
};

#define GR_REGISTER_BINARY(OP, T, F) \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), BinaryOp<T, F>)

#define GR_REGISTER_BINARY_ALL(OP, F) \
  GR_REGISTER_BINARY(OP, float, F);   \
  GR_REGISTER_BINARY(OP, double, F);  \
  GR_REGISTER_BINARY(OP, int32_t, F); \
  GR_REGISTER_BINARY(OP, int64_t, F)

}  // namespace

GR_REGISTER_BINARY_ALL("Add", AddFn);
GR_REGISTER_BINARY_ALL("AddV2", AddFn);
GR_REGISTER_BINARY_ALL("Sub", SubFn);
GR_REGISTER_BINARY_ALL("Mul", MulFn);
// Integer division has its own ops (FloorDiv, TruncateDiv); RealDiv is for
// floating point here.
GR_REGISTER_BINARY("RealDiv", float, DivFn);
GR_REGISTER_BINARY("RealDiv", double, DivFn);

REGISTER_KERNEL(Name("Neg").Device(DEVICE_CPU).TypeConstraint<float>("T").Inexpensive(),
                NegOp<float>);
REGISTER_KERNEL(Name("Neg").Device(DEVICE_CPU).TypeConstraint<double>("T").Inexpensive(),
                NegOp<double>);
REGISTER_KERNEL(Name("Neg").Device(DEVICE_CPU).TypeConstraint<int32_t>("T").Inexpensive(),
                NegOp<int32_t>);
REGISTER_KERNEL(Name("Neg").Device(DEVICE_CPU).TypeConstraint<int64_t>("T").Inexpensive(),
                NegOp<int64_t>);

#undef GR_REGISTER_BINARY_ALL
#undef GR_REGISTER_BINARY

}  // namespace sdk
}  // namespace graphrt
