// Element-wise CPU kernels with numpy broadcasting, for any op family:
// one implementation of the broadcasting machinery shared by every binary
// op (Add ... Pow, comparisons, logical ops, gradients of activations), and
// the matching unary kernel.
//
// A binary op is a functor F used as BinaryOp<In, Out, F>:
//
//   struct MyFn {
//     static constexpr int64_t kCost = 1;              // rough ns per element
//     template <typename O, typename X, typename Y>    // Eigen array expressions
//     static void Run(O&& o, const X& x, const Y& y) { o = x + y; }
//
//     // Optional: checked before any output is written, only when the
//     // output is non-empty; a non-null message fails the step with
//     // InvalidArgument (integer division by zero and the like).
//     static const char* Check(const In* x, int64_t nx, const In* y, int64_t ny);
//
//     // Optional (Equal/NotEqual): with the node's incompatible_shape_error
//     // attr false, incompatible shapes give this value as a scalar.
//     static constexpr Out kIncompatibleResult = false;
//   };
//
// x and y in Run are equal-length Eigen array expressions: a map of a
// contiguous run of an input, or a constant where that input is broadcast
// along the run. Run is called on runs of the output (whole or part of the
// innermost merged dim), so F needs no knowledge of shapes.
//
// Speed, the two ends:
//  - tiny tensors (a chain of ops on [4]): no heap allocation, few ABI
//    calls, the output written in place of a dying input;
//  - big tensors: same-shape, tensor-scalar and row/column (bias-like)
//    broadcasting run Eigen-vectorized over contiguous runs, split over
//    the session's pool (rows, or column blocks when rows are few).
#ifndef GRAPHRT_OPS_COMMON_CPU_CWISE_BCAST_H_
#define GRAPHRT_OPS_COMMON_CPU_CWISE_BCAST_H_

#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"
#include "common/cpu/wrapping.h"

namespace graphrt {
namespace sdk {
namespace cwise {

// Most dims the general broadcasting path handles after merging adjacent
// dims that broadcast alike (any realistic pair of shapes fits).
constexpr int kMaxBcastDims = 8;

// A loop, not memcmp: ranks are small and this runs once per node (the libc
// call was 4% of W1's per-node time).
inline bool SameDims(const int64_t* a, const int64_t* b, int rank) {
  for (int i = 0; i < rank; ++i)
    if (a[i] != b[i]) return false;
  return true;
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

// Fills `out_dims` (rank max(rx, ry)) with the numpy broadcast of the two
// shapes; false if they are incompatible.
inline bool BroadcastDims(const int64_t* xd, int rx, const int64_t* yd, int ry, int64_t* out_dims) {
  const int ro = std::max(rx, ry);
  for (int i = 0; i < ro; ++i) {
    const int64_t dx = i < ro - rx ? 1 : xd[i - (ro - rx)];
    const int64_t dy = i < ro - ry ? 1 : yd[i - (ro - ry)];
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

// The general broadcasting plan: the output viewed as `rank` merged dims,
// with per-input element strides (0 where the input is broadcast).
struct BcastPlan {
  int rank = 0;
  int64_t dims[kMaxBcastDims];
  int64_t sx[kMaxBcastDims];
  int64_t sy[kMaxBcastDims];
};

// Merges adjacent output dims in which each input is either broadcast in
// both or in neither; dims of size 1 drop out. False if the merged rank
// exceeds kMaxBcastDims. Assumes compatible shapes.
inline bool MakePlan(const int64_t* xd, int rx, const int64_t* yd, int ry, BcastPlan* p) {
  const int ro = std::max(rx, ry);
  bool bx[kMaxBcastDims], by[kMaxBcastDims];
  int g = -1;
  for (int i = 0; i < ro; ++i) {
    const int64_t dx = i < ro - rx ? 1 : xd[i - (ro - rx)];
    const int64_t dy = i < ro - ry ? 1 : yd[i - (ro - ry)];
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

// o[0..n) = op(x[0..n), y[0..n)), and the variants with one side a scalar.
template <typename In, typename Out, typename F>
inline void VecVec(Out* o, const In* x, const In* y, int64_t n) {
  F::Run(EigenVecMap<Out>(o, n), EigenConstVecMap<In>(x, n), EigenConstVecMap<In>(y, n));
}
template <typename In, typename Out, typename F>
inline void VecScalar(Out* o, const In* x, In y, int64_t n) {
  F::Run(EigenVecMap<Out>(o, n), EigenConstVecMap<In>(x, n), EigenArr<In>::Constant(n, y));
}
template <typename In, typename Out, typename F>
inline void ScalarVec(Out* o, In x, const In* y, int64_t n) {
  F::Run(EigenVecMap<Out>(o, n), EigenArr<In>::Constant(n, x), EigenConstVecMap<In>(y, n));
}

// Work units [u0, u1) of a plan of rank >= 1. A row is the innermost merged
// dim; each row is cut into `blocks` column blocks of `col_block` elements
// (blocks = 1 unless rows are too few to keep the pool busy). Unit u is
// block u % blocks of row u / blocks. The outer index is an odometer: one
// division per call, none per row.
template <typename In, typename Out, typename F>
void RunPlanUnits(const BcastPlan& p, int64_t blocks, int64_t col_block, const In* x, const In* y,
                  Out* o, int64_t u0, int64_t u1) {
  const int inner = p.rank - 1;
  const int64_t n = p.dims[inner];
  const bool x_vec = p.sx[inner] != 0, y_vec = p.sy[inner] != 0;
  int64_t row = u0 / blocks;
  int64_t idx[kMaxBcastDims];
  int64_t ox = 0, oy = 0;
  int64_t rem = row;
  for (int g = inner - 1; g >= 0; --g) {
    idx[g] = rem % p.dims[g];
    rem /= p.dims[g];
    ox += idx[g] * p.sx[g];
    oy += idx[g] * p.sy[g];
  }
  int64_t u = u0;
  while (u < u1) {
    const int64_t b0 = u - row * blocks;
    const int64_t b1 = std::min(blocks, b0 + (u1 - u));
    const int64_t c0 = b0 * col_block;
    const int64_t c1 = std::min(n, b1 * col_block);
    const int64_t len = c1 - c0;
    Out* orow = o + row * n + c0;
    if (x_vec && y_vec) {
      VecVec<In, Out, F>(orow, x + ox + c0, y + oy + c0, len);
    } else if (x_vec) {
      VecScalar<In, Out, F>(orow, x + ox + c0, y[oy], len);
    } else {
      ScalarVec<In, Out, F>(orow, x[ox], y + oy + c0, len);
    }
    u += b1 - b0;
    if (u >= u1) break;
    ++row;
    for (int g = inner - 1; g >= 0; --g) {
      ox += p.sx[g];
      oy += p.sy[g];
      if (++idx[g] < p.dims[g]) break;
      ox -= p.sx[g] * p.dims[g];
      oy -= p.sy[g] * p.dims[g];
      idx[g] = 0;
    }
  }
}

template <typename F>
concept HasCheck = requires { &F::Check; };
template <typename F>
concept HasIncompatibleResult = requires { F::kIncompatibleResult; };

template <typename In, typename Out, typename F>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* c) : OpKernel(c) {
    if constexpr (HasIncompatibleResult<F>) {
      bool strict = true;
      if (c->GetAttr("incompatible_shape_error", &strict).ok()) strict_ = strict;
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const TensorView y = ctx->input(1);
    const int rx = x.rank(), ry = y.rank();
    const int64_t nx = x.NumElements(), ny = y.NumElements();
    const In* xp = x.data<In>();
    const In* yp = y.data<In>();
    TensorView out;

    if (rx == ry && SameDims(x.dims_data(), y.dims_data(), rx)) {
      if (nx > 0 && !Check(ctx, xp, nx, yp, ny)) return;
      if (!SameShapeOutput(ctx, x.dims_data(), rx, &out) || nx == 0) return;
      Out* op = out.data<Out>();
      ForRange(ctx, nx, nx, F::kCost, [=](int64_t b, int64_t e) {
        VecVec<In, Out, F>(op + b, xp + b, yp + b, e - b);
      });
      return;
    }
    if (ny == 1 && ry <= rx) {  // y broadcasts as a scalar; output shape = x's
      if (nx > 0 && !Check(ctx, xp, nx, yp, ny)) return;
      if (!Output(ctx, 0, x.dims_data(), rx, &out) || nx == 0) return;
      const In ys = yp[0];
      Out* op = out.data<Out>();
      ForRange(ctx, nx, nx, F::kCost, [=](int64_t b, int64_t e) {
        VecScalar<In, Out, F>(op + b, xp + b, ys, e - b);
      });
      return;
    }
    if (nx == 1 && rx <= ry) {  // x broadcasts as a scalar; output shape = y's
      if (ny > 0 && !Check(ctx, xp, nx, yp, ny)) return;
      if (!Output(ctx, 1, y.dims_data(), ry, &out) || ny == 0) return;
      const In xs = xp[0];
      Out* op = out.data<Out>();
      ForRange(ctx, ny, ny, F::kCost, [=](int64_t b, int64_t e) {
        ScalarVec<In, Out, F>(op + b, xs, yp + b, e - b);
      });
      return;
    }
    General(ctx, x, y);
  }

 private:
  // Runs F::Check if F has one; false (and the step failed) on an error.
  static bool Check(OpKernelContext* ctx, const In* x, int64_t nx, const In* y, int64_t ny) {
    if constexpr (HasCheck<F>) {
      const char* err = F::Check(x, nx, y, ny);
      if (err != nullptr) {
        ctx->CtxFailure(errors::InvalidArgument(err));
        return false;
      }
    }
    return true;
  }

  // Output 0 of shape `dims`, in place of input `index` if it can be (same
  // element type and nobody else holds it); index -1 always allocates.
  static bool Output(OpKernelContext* ctx, int index, const int64_t* dims, int rank,
                     TensorView* out) {
    // On failure the core has recorded the error already.
    if constexpr (std::is_same_v<In, Out>) {
      if (index >= 0) return ctx->forward_input_or_allocate_output(index, 0, dims, rank, out).ok();
    }
    return ctx->allocate_output(0, dims, rank, out).ok();
  }
  // Same-shape operands: in place of either (element i reads only x[i], y[i]).
  static bool SameShapeOutput(OpKernelContext* ctx, const int64_t* dims, int rank, TensorView* out) {
    if constexpr (std::is_same_v<In, Out>) return ctx->forward_input_or_allocate_output({0, 1}, 0, dims, rank, out).ok();
    return ctx->allocate_output(0, dims, rank, out).ok();
  }

  void General(OpKernelContext* ctx, const TensorView& x, const TensorView& y) {
    const int rx = x.rank(), ry = y.rank();
    const int ro = std::max(rx, ry);
    DimBuffer od(ro);
    int64_t* out_dims = od.data();
    if (!BroadcastDims(x.dims_data(), rx, y.dims_data(), ry, out_dims)) {
      if constexpr (HasIncompatibleResult<F>) {
        if (!strict_) {
          TensorView out;
          const int64_t no_dims[1] = {0};
          if (!ctx->allocate_output(0, no_dims, 0, &out).ok()) return;
          *out.data<Out>() = F::kIncompatibleResult;
          return;
        }
      }
      ctx->CtxFailure(errors::InvalidArgument("Incompatible shapes: ", shape_fns::ShapeString(x),
                                              " vs. ", shape_fns::ShapeString(y)));
      return;
    }
    // Two valid shapes can broadcast to one past the size rule ([2^40,1]
    // and [1,2^40]); refuse it before anything multiplies its dims.
    int64_t total = 0;
    OP_REQUIRES_OK(ctx, NumElementsOf(out_dims, ro, &total));
    const In* xp = x.data<In>();
    const In* yp = y.data<In>();
    if (total > 0 && !Check(ctx, xp, x.NumElements(), yp, y.NumElements())) return;

    // Reuse an input's buffer when the output has its exact shape.
    int fwd = -1;
    if (rx == ro && SameDims(x.dims_data(), out_dims, ro)) {
      fwd = 0;
    } else if (ry == ro && SameDims(y.dims_data(), out_dims, ro)) {
      fwd = 1;
    }
    TensorView out;
    if (!Output(ctx, fwd, out_dims, ro, &out) || total == 0) return;

    BcastPlan plan;
    OP_REQUIRES(ctx, MakePlan(x.dims_data(), rx, y.dims_data(), ry, &plan),
                errors::Unimplemented("Broadcast between ", shape_fns::ShapeString(x), " and ",
                                      shape_fns::ShapeString(y),
                                      " is not supported yet: more than ", kMaxBcastDims,
                                      " dims after merging"));
    Out* op = out.data<Out>();
    if (plan.rank == 0) {  // every dim is 1
      VecVec<In, Out, F>(op, xp, yp, 1);
      return;
    }
    const int64_t row = plan.dims[plan.rank - 1];
    const int64_t rows = total / row;
    if (plan.rank == 2 && row <= kShortRow && plan.sx[1] != 0 && plan.sy[1] != 0 &&
        (plan.sx[0] == 0) != (plan.sy[0] == 0)) {
      ShortRows(ctx, plan.sx[0] == 0, row, rows, xp, yp, op);
      return;
    }
    // Few long rows (e.g. [2, 1e5] + [1e5]): cut rows into column blocks so
    // every thread of the pool gets work.
    constexpr int64_t kTargetUnits = 64, kMinBlock = 4096;
    int64_t blocks = 1;
    if (total >= kParallelMinElements && rows < kTargetUnits && row >= 2 * kMinBlock) {
      blocks = std::min((row + kMinBlock - 1) / kMinBlock, (kTargetUnits + rows - 1) / rows);
    }
    int64_t col_block = (row + blocks - 1) / blocks;
    col_block = (col_block + 15) / 16 * 16;  // whole vectors per block
    blocks = (row + col_block - 1) / col_block;
    ForRange(ctx, rows * blocks, total, F::kCost * col_block + 5,
             [&plan, blocks, col_block, xp, yp, op](int64_t b, int64_t e) {
               RunPlanUnits<In, Out, F>(plan, blocks, col_block, xp, yp, op, b, e);
             });
  }

  // Short rows against one repeated row ([N, C] + [C] with small C, either
  // side): one vector op per row would be mostly call overhead, so the
  // repeated row is tiled into a stack buffer and up to kTile elements
  // (whole rows) go through one vectorized op.
  static constexpr int64_t kShortRow = 64, kTile = 1024;
  static void ShortRows(OpKernelContext* ctx, bool x_repeats, int64_t row, int64_t rows,
                        const In* xp, const In* yp, Out* op) {
    const int64_t group = kTile / row;  // rows per vector op
    const int64_t groups = (rows + group - 1) / group;
    ForRange(ctx, groups, rows * row, F::kCost * group * row + 10,
             [=](int64_t g0, int64_t g1) {
               alignas(64) In tile[kTile];
               const In* rep = x_repeats ? xp : yp;
               const int64_t fill = std::min(group, rows);
               for (int64_t r = 0; r < fill; ++r) std::copy(rep, rep + row, tile + r * row);
               for (int64_t g = g0; g < g1; ++g) {
                 const int64_t r0 = g * group;
                 const int64_t len = (std::min(rows, r0 + group) - r0) * row;
                 const int64_t off = r0 * row;
                 if (x_repeats) {
                   VecVec<In, Out, F>(op + off, tile, yp + off, len);
                 } else {
                   VecVec<In, Out, F>(op + off, xp + off, tile, len);
                 }
               }
             });
  }

  bool strict_ = true;  // incompatible_shape_error (Equal/NotEqual)
};

// A unary op is a functor F used as UnaryOp<T, F> (or UnaryOp<T, F, Out>):
//   static constexpr int64_t kCost;
//   template <typename O, typename X> static void Run(O&& o, const X& x);
// The output is written in place of the input when nobody else holds it.
template <typename T, typename F, typename Out = T>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    TensorView out;
    Status s;
    if constexpr (std::is_same_v<T, Out>) {
      s = ctx->forward_input_or_allocate_output(0, 0, x.dims_data(), x.rank(), &out);
    } else {
      s = ctx->allocate_output(0, x.dims_data(), x.rank(), &out);
    }
    if (!s.ok()) return;
    const int64_t n = x.NumElements();
    if (n == 0) return;
    const T* xp = x.data<T>();
    Out* op = out.data<Out>();
    ForRange(ctx, n, n, F::kCost, [=](int64_t b, int64_t e) {
      F::Run(EigenVecMap<Out>(op + b, e - b), EigenConstVecMap<T>(xp + b, e - b));
    });
  }
};

}  // namespace cwise
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_CWISE_BCAST_H_
