// CPU kernels of ConcatV2, Pack, Split, SplitV and Unpack. Each input
// (output) is a [outer, inner_i] block of rows placed at a column offset of
// the [outer, total_inner] output (input): contiguous runs are memcpy'd and
// big copies are split over the pool (copy_util.h). Dtype-agnostic.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::CopyBox;
using array::Dims;

// Copies a [outer, inner] block between row-major tensors whose rows are
// src_row and dst_row elements long, at the given element offsets.
void CopyBlock(OpKernelContext* ctx, int32_t dtype, int64_t outer, int64_t inner,
               const void* src, int64_t src_row, int64_t src_off, TensorView* dst,
               int64_t dst_row, int64_t dst_off) {
  CopyBox box;
  box.Add(outer, src_row, dst_row);
  box.Add(inner, 1, 1);
  array::StridedCopy(ctx, dtype, box, src, src_off, array::TargetOf(dst), dst_off);
}

// ---------------------------------------------------------------- Concat

class ConcatV2Op : public OpKernel {
 public:
  explicit ConcatV2Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const TensorView axis_t = ctx->input(n);
    OP_REQUIRES(ctx, axis_t.rank() == 0,
                errors::InvalidArgument("axis tensor should be a scalar integer, but got shape ",
                                        sf::ShapeString(axis_t)));
    const TensorView first = ctx->input(0);
    const int r = first.rank();
    OP_REQUIRES(ctx, array::Copyable(first.dtype()),
                array::UnsupportedDtype("ConcatV2", first.dtype()));
    OP_REQUIRES(ctx, r > 0,
                errors::InvalidArgument("ConcatOp : Can't concatenate scalars (use tf.stack "
                                        "instead)"));
    int64_t axis = array::IntAt(axis_t, 0);
    OP_REQUIRES(ctx, axis >= -r && axis < r,
                errors::InvalidArgument("ConcatOp : Expected concatenating dimensions in the "
                                        "range [",
                                        -r, ", ", r, "), but got ", axis));
    if (axis < 0) axis += r;
    Dims out_dims(r);
    for (int d = 0; d < r; ++d) out_dims[d] = first.dim(d);
    int64_t sum = 0;
    for (int i = 0; i < n; ++i) {
      const TensorView in = ctx->input(i);
      OP_REQUIRES(ctx, in.rank() == r,
                  errors::InvalidArgument("ConcatOp : Ranks of all input tensors should match: "
                                          "shape[0] = ",
                                          sf::ShapeString(first), " vs. shape[", i,
                                          "] = ", sf::ShapeString(in)));
      for (int d = 0; d < r; ++d) {
        OP_REQUIRES(ctx, d == axis || in.dim(d) == first.dim(d),
                    errors::InvalidArgument("ConcatOp : Dimension ", d,
                                            " in both shapes must be equal: shape[0] = ",
                                            sf::ShapeString(first), " vs. shape[", i,
                                            "] = ", sf::ShapeString(in)));
      }
      OP_REQUIRES_OK(ctx, sf::AddDims(sum, in.dim(static_cast<int>(axis)), &sum));
    }
    out_dims[static_cast<int>(axis)] = sum;
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const int64_t outer = array::Product(out_dims, 0, static_cast<int>(axis));
    const int64_t out_inner = out.NumElements() / outer;
    int64_t col = 0;
    for (int i = 0; i < n; ++i) {
      const TensorView in = ctx->input(i);
      if (in.NumElements() == 0) continue;
      const int64_t inner = in.NumElements() / outer;
      CopyBlock(ctx, in.dtype(), outer, inner, in.raw_data(), inner, 0, &out, out_inner, col);
      col += inner;
    }
  }
};

// ------------------------------------------------------------------ Pack

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const TensorView first = ctx->input(0);
    OP_REQUIRES(ctx, array::Copyable(first.dtype()),
                array::UnsupportedDtype("Pack", first.dtype()));
    const int r = first.rank() + 1;
    int64_t axis = axis_;
    OP_REQUIRES(ctx, axis >= -r && axis < r,
                errors::InvalidArgument("axis = ", axis_, " not in [", -r, ", ", r, ")"));
    if (axis < 0) axis += r;
    for (int i = 1; i < n; ++i) {
      const TensorView in = ctx->input(i);
      bool same = in.rank() == first.rank();
      for (int d = 0; same && d < in.rank(); ++d) same = in.dim(d) == first.dim(d);
      OP_REQUIRES(ctx, same,
                  errors::InvalidArgument("Shapes of all inputs must match: values[0].shape = ",
                                          sf::ShapeString(first), " != values[", i,
                                          "].shape = ", sf::ShapeString(in)));
    }
    Dims out_dims;
    for (int d = 0; d < first.rank(); ++d) {
      if (d == axis) out_dims.push_back(n);
      out_dims.push_back(first.dim(d));
    }
    if (axis == first.rank()) out_dims.push_back(n);
    if (n == 1) {
      Api().ctx_set_output_from_input(ctx->raw(), 0, 0, out_dims.size(), out_dims.data());
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const int64_t outer = array::Product(out_dims, 0, static_cast<int>(axis));
    const int64_t inner = first.NumElements() / outer;
    for (int i = 0; i < n; ++i) {
      CopyBlock(ctx, first.dtype(), outer, inner, ctx->input(i).raw_data(), inner, 0, &out,
                inner * n, inner * i);
    }
  }

 private:
  int64_t axis_ = 0;
};

// ----------------------------------------------------------------- Split

// Splits `in` along `axis` into outputs of the given sizes.
void SplitInto(OpKernelContext* ctx, const TensorView& in, int input_index, int axis,
               const int64_t* sizes, int num) {
  const int r = in.rank();
  if (num == 1) {
    ctx->set_output_from_input(0, input_index);
    return;
  }
  Dims dims(r);
  for (int d = 0; d < r; ++d) dims[d] = in.dim(d);
  const int64_t outer = array::Product(dims, 0, axis);
  const int64_t row = array::Product(dims, axis + 1);  // elements per index of `axis`
  const int64_t in_inner = dims[axis] * row;
  int64_t col = 0;
  for (int i = 0; i < num; ++i) {
    dims[axis] = sizes[i];
    // With nothing outside `axis`, each output is one run of the input.
    if (outer == 1 && ctx->set_output_from_input_range(i, input_index, col, dims.data(), r)) {
      col += sizes[i] * row;
      continue;
    }
    if (!ctx->ok()) return;
    TensorView out;
    if (!ctx->allocate_output(i, dims.data(), r, &out).ok()) return;
    const int64_t inner = sizes[i] * row;
    if (out.NumElements() > 0) {
      CopyBlock(ctx, in.dtype(), outer, inner, in.raw_data(), in_inner, col, &out, inner, 0);
    }
    col += inner;
  }
}

class SplitOp : public OpKernel {
 public:
  explicit SplitOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView axis_t = ctx->input(0);
    const TensorView in = ctx->input(1);
    OP_REQUIRES(ctx, axis_t.NumElements() == 1,
                errors::InvalidArgument("split_dim must be a scalar but has rank ",
                                        axis_t.rank()));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()), array::UnsupportedDtype("Split", in.dtype()));
    const int r = in.rank();
    int64_t axis = array::IntAt(axis_t, 0);
    const int num = ctx->num_outputs();
    OP_REQUIRES(ctx, axis >= -r && axis < r,
                errors::InvalidArgument("-input rank(-", r, ") <= split_dim < input rank (", r,
                                        "), but got ", axis));
    if (axis < 0) axis += r;
    const int64_t d = in.dim(static_cast<int>(axis));
    OP_REQUIRES(ctx, d % num == 0,
                errors::InvalidArgument("Number of ways to split should evenly divide the split "
                                        "dimension, but got split_dim ",
                                        axis, " (size = ", d, ") and num_split ", num));
    array::SmallVec<int64_t> sizes(num, d / num);
    SplitInto(ctx, in, 1, static_cast<int>(axis), sizes.data(), num);
  }
};

class SplitVOp : public OpKernel {
 public:
  explicit SplitVOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView sizes_t = ctx->input(1);
    const TensorView axis_t = ctx->input(2);
    const int num = ctx->num_outputs();
    OP_REQUIRES(ctx, axis_t.NumElements() == 1,
                errors::InvalidArgument("split_dim_tensor must have exactly one element."));
    OP_REQUIRES(ctx, sizes_t.rank() == 1 && sizes_t.NumElements() == num,
                errors::InvalidArgument("size_splits must be a vector with num_split = ", num,
                                        " elements, got shape ", sf::ShapeString(sizes_t)));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()), array::UnsupportedDtype("SplitV", in.dtype()));
    const int r = in.rank();
    int64_t axis = array::IntAt(axis_t, 0);
    OP_REQUIRES(ctx, axis >= -r && axis < r,
                errors::InvalidArgument("-input rank(-", r, ") <= split_dim < input rank (", r,
                                        "), but got ", axis));
    if (axis < 0) axis += r;
    const int64_t d = in.dim(static_cast<int>(axis));
    array::SmallVec<int64_t> sizes(num, 0);
    int neg = -1;
    int64_t total = 0;
    for (int i = 0; i < num; ++i) {
      sizes[i] = array::IntAt(sizes_t, i);
      if (sizes[i] == -1) {
        OP_REQUIRES(ctx, neg < 0,
                    errors::InvalidArgument("There can only be one -1 in the input."));
        neg = i;
      } else {
        OP_REQUIRES(ctx, sizes[i] >= 0,
                    errors::InvalidArgument("Split size at index ", i,
                                            " must be >= 0. Got: ", sizes[i]));
        // d is at most 2^58, so a total past that fails the check below.
        OP_REQUIRES(ctx, sf::AddDims(total, sizes[i], &total).ok(),
                    errors::InvalidArgument("Split sizes add up to more than 2^58"));
      }
    }
    OP_REQUIRES(ctx, (neg < 0 && total == d) || (neg >= 0 && total <= d),
                errors::InvalidArgument("Determined shape must either match input shape along "
                                        "split_dim exactly if fully specified, or be less than "
                                        "the size of the input along split_dim if not fully "
                                        "specified.  Got: ",
                                        total));
    if (neg >= 0) sizes[neg] = d - total;
    SplitInto(ctx, in, 0, static_cast<int>(axis), sizes.data(), num);
  }
};

// ---------------------------------------------------------------- Unpack

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const int num = ctx->num_outputs();
    const int r = in.rank();
    int64_t axis = axis_;
    OP_REQUIRES(ctx, axis >= -r && axis < r,
                errors::InvalidArgument("axis = ", axis_, " not in [", -r, ", ", r, ")"));
    if (axis < 0) axis += r;
    OP_REQUIRES(ctx, in.dim(static_cast<int>(axis)) == num,
                errors::InvalidArgument("Input shape axis ", axis, " must equal ", num,
                                        ", got shape ", sf::ShapeString(in)));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()), array::UnsupportedDtype("Unpack", in.dtype()));
    Dims out_dims;
    for (int d = 0; d < r; ++d)
      if (d != axis) out_dims.push_back(in.dim(d));
    if (num == 1) {
      Api().ctx_set_output_from_input(ctx->raw(), 0, 0, out_dims.size(), out_dims.data());
      return;
    }
    Dims dims(r);
    for (int d = 0; d < r; ++d) dims[d] = in.dim(d);
    const int64_t outer = array::Product(dims, 0, static_cast<int>(axis));
    const int64_t inner = array::Product(dims, static_cast<int>(axis) + 1);
    for (int i = 0; i < num; ++i) {
      // With nothing outside `axis`, each output is one run of the input.
      if (outer == 1 && ctx->set_output_from_input_range(i, 0, inner * i, out_dims.data(), out_dims.size())) {
        continue;
      }
      if (!ctx->ok()) return;
      TensorView out;
      if (!ctx->allocate_output(i, out_dims.data(), out_dims.size(), &out).ok()) return;
      if (out.NumElements() == 0) continue;
      CopyBlock(ctx, in.dtype(), outer, inner, in.raw_data(), inner * num, inner * i, &out, inner,
                0);
    }
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

REGISTER_KERNEL(Name("ConcatV2").Device(DEVICE_CPU).HostMemory("axis"), ConcatV2Op);
REGISTER_KERNEL(Name("Pack").Device(DEVICE_CPU), PackOp);
REGISTER_KERNEL(Name("Split").Device(DEVICE_CPU).HostMemory("split_dim"), SplitOp);
REGISTER_KERNEL(Name("SplitV").Device(DEVICE_CPU).HostMemory("size_splits").HostMemory("split_dim"),
                SplitVOp);
REGISTER_KERNEL(Name("Unpack").Device(DEVICE_CPU), UnpackOp);

}  // namespace sdk
}  // namespace graphrt
