// CPU kernels of Select (TensorFlow 1 semantics: condition of the same
// shape, a scalar, or a vector over dim 0) and SelectV2 (numpy broadcasting
// of condition, t and e). Dtype-agnostic: elements move by size.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"
#include "common/cpu/parallel.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::Dims;

bool SameShape(const TensorView& a, const TensorView& b) {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.dim(i) != b.dim(i)) return false;
  return true;
}

// out[i*os] = c[i*cs] ? t[i*ts] : e[i*es] for i in [0, n), E the element
// type (GR_StringElem: strings, assigned into `out_view` at `out_index`).
template <typename E>
inline void SelectRun(const bool* c, int64_t cs, const E* t, int64_t ts, const E* e, int64_t es,
                      E* out, GR_TensorView* out_view, int64_t out_index, int64_t n) {
  if constexpr (std::is_same_v<E, GR_StringElem>) {
    for (int64_t i = 0; i < n; ++i) {
      const GR_StringElem& v = c[i * cs] ? t[i * ts] : e[i * es];
      Api().string_assign(out_view, out_index + i, v.data, v.size);
    }
  } else if (cs == 1 && ts == 1 && es == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? t[i] : e[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i * cs] ? t[i * ts] : e[i * es];
  }
}

// A broadcast select over `dims` (rank >= 1); strides in elements per input
// (0 where broadcast). Rows of the innermost dim are split over the pool.
template <typename E>
void BroadcastSelect(OpKernelContext* ctx, const Dims& dims, const Dims* strides,
                     const bool* c, const E* t, const E* e, TensorView* out) {
  const int r = dims.size();
  const int64_t inner = dims[r - 1];
  const int64_t rows = array::Product(dims) / inner;
  E* o = static_cast<E*>(out->raw_data());
  GR_TensorView* ov = out->raw();
  ForRange(ctx, rows, rows * inner, inner + 5, [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      int64_t rem = row, off[3] = {0, 0, 0};
      for (int d = r - 2; d >= 0; --d) {
        const int64_t i = rem % dims[d];
        rem /= dims[d];
        for (int k = 0; k < 3; ++k) off[k] += i * strides[k][d];
      }
      SelectRun<E>(c + off[0], strides[0][r - 1], t + off[1], strides[1][r - 1], e + off[2],
                   strides[2][r - 1], o + row * inner, ov, row * inner, inner);
    }
  });
}

template <typename Fn>
bool DispatchBySize(int32_t dtype, Fn&& fn) {
  if (dtype == GR_STRING) {
    fn(GR_StringElem{});
    return true;
  }
  switch (array::ElementSize(dtype)) {
    case 1: fn(uint8_t{}); return true;
    case 2: fn(uint16_t{}); return true;
    case 4: fn(uint32_t{}); return true;
    case 8: fn(uint64_t{}); return true;
    case 16: fn(array::Elem16{}); return true;
    default: return false;
  }
}

// Output 0 for a select of `dims` shape: in place of t or e when possible
// (each element is read before it is written).
bool AllocateSelectOutput(OpKernelContext* ctx, const TensorView& t, const int64_t* dims, int rank,
                          TensorView* out) {
  if (t.dtype() == GR_STRING) return ctx->allocate_output(0, dims, rank, out).ok();
  return ctx->forward_input_or_allocate_output({1, 2}, 0, dims, rank, out).ok();
}

class SelectOp : public OpKernel {
 public:
  explicit SelectOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView cond = ctx->input(0);
    const TensorView t = ctx->input(1);
    const TensorView e = ctx->input(2);
    OP_REQUIRES(ctx, array::Copyable(t.dtype()), array::UnsupportedDtype("Select", t.dtype()));
    if (cond.rank() == 0) {
      OP_REQUIRES(ctx, SameShape(t, e),
                  errors::InvalidArgument("'then' and 'else' must have the same size.  but "
                                          "received: ",
                                          sf::ShapeString(t), " vs. ", sf::ShapeString(e)));
      ctx->set_output_from_input(0, *cond.data<bool>() ? 1 : 2);
      return;
    }
    const bool batch = cond.rank() == 1 && t.rank() != 1;
    Dims dims(t.rank());
    for (int i = 0; i < t.rank(); ++i) dims[i] = t.dim(i);
    Dims strides[3];
    if (batch) {
      OP_REQUIRES(ctx, t.rank() >= 1,
                  errors::InvalidArgument("'then' must be at least a vector, but saw shape: ",
                                          sf::ShapeString(t)));
      OP_REQUIRES(ctx, t.dim(0) == cond.NumElements(),
                  errors::InvalidArgument("Number of batches of 'then' must match size of "
                                          "'cond', but saw: ",
                                          t.dim(0), " vs. ", cond.NumElements()));
      OP_REQUIRES(ctx, SameShape(t, e),
                  errors::InvalidArgument("'then' and 'else' must have the same size.  but "
                                          "received: ",
                                          sf::ShapeString(t), " vs. ", sf::ShapeString(e)));
      // As a [batch, row] select with the condition broadcast along rows.
      const int64_t row = t.NumElements() / std::max<int64_t>(t.dim(0), 1);
      dims = Dims(2);
      dims[0] = t.dim(0);
      dims[1] = row;
      strides[0] = Dims(2);
      strides[0][0] = 1;
      strides[0][1] = 0;
      for (int k = 1; k < 3; ++k) {
        strides[k] = Dims(2);
        strides[k][0] = row;
        strides[k][1] = 1;
      }
    } else {
      OP_REQUIRES(ctx, SameShape(cond, t) && SameShape(t, e),
                  errors::InvalidArgument("Inputs to operation ", ctx->node_name(),
                                          " of type Select must have the same size and shape.  "
                                          "Input 0: ",
                                          sf::ShapeString(cond), " != input ",
                                          SameShape(cond, t) ? 2 : 1, ": ",
                                          sf::ShapeString(SameShape(cond, t) ? e : t)));
      dims = Dims(1);
      dims[0] = t.NumElements();
      for (int k = 0; k < 3; ++k) strides[k] = Dims(1, 1);
    }
    TensorView out;
    if (!AllocateSelectOutput(ctx, t, t.dims_data(), t.rank(), &out)) return;
    if (out.NumElements() == 0) return;
    DispatchBySize(t.dtype(), [&](auto tag) {
      using E = decltype(tag);
      BroadcastSelect<E>(ctx, dims, strides, cond.data<bool>(), t.data<E>(), e.data<E>(), &out);
    });
  }
};

class SelectV2Op : public OpKernel {
 public:
  explicit SelectV2Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView cond = ctx->input(0);
    const TensorView t = ctx->input(1);
    const TensorView e = ctx->input(2);
    OP_REQUIRES(ctx, array::Copyable(t.dtype()), array::UnsupportedDtype("SelectV2", t.dtype()));
    const TensorView* in[3] = {&cond, &t, &e};
    int r = 0;
    for (const TensorView* v : in) r = std::max(r, v->rank());
    Dims dims(r, 1);
    for (const TensorView* v : in) {
      for (int i = 0; i < v->rank(); ++i) {
        const int k = i + r - v->rank();
        const int64_t d = v->dim(i);
        if (d == dims[k] || d == 1) continue;
        OP_REQUIRES(ctx, dims[k] == 1,
                    errors::InvalidArgument("condition ", sf::ShapeString(cond), ", then ",
                                            sf::ShapeString(t), ", and else ",
                                            sf::ShapeString(e), " must be broadcastable"));
        dims[k] = d;
      }
    }
    // A scalar condition over equal shapes picks a whole input.
    if (cond.NumElements() == 1 && cond.rank() <= r && SameShape(t, e) && t.rank() == r) {
      ctx->set_output_from_input(0, *cond.data<bool>() ? 1 : 2);
      return;
    }
    TensorView out;
    if (!AllocateSelectOutput(ctx, t, dims.data(), r, &out)) return;
    if (out.NumElements() == 0) return;
    Dims strides[3];
    for (int k = 0; k < 3; ++k) {
      const TensorView* v = in[k];
      strides[k] = Dims(std::max(r, 1), 0);
      int64_t s = 1;
      for (int i = v->rank() - 1; i >= 0; --i) {
        const int kk = i + r - v->rank();
        strides[k][kk] = v->dim(i) == 1 ? 0 : s;
        s *= v->dim(i);
      }
    }
    Dims bdims = r == 0 ? Dims(1, 1) : dims;
    DispatchBySize(t.dtype(), [&](auto tag) {
      using E = decltype(tag);
      BroadcastSelect<E>(ctx, bdims, strides, cond.data<bool>(), t.data<E>(), e.data<E>(), &out);
    });
  }
};

}  // namespace

REGISTER_KERNEL(Name("Select").Device(DEVICE_CPU), SelectOp);
REGISTER_KERNEL(Name("SelectV2").Device(DEVICE_CPU), SelectV2Op);

}  // namespace sdk
}  // namespace graphrt
