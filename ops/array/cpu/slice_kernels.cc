// CPU kernels of Slice and StridedSlice (dtype-agnostic strided copies; a
// slice that is one contiguous, aligned run of the input shares its buffer).
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

// ----------------------------------------------------------------- Slice

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView begin_t = ctx->input(1);
    const TensorView size_t_ = ctx->input(2);
    const int r = in.rank();
    OP_REQUIRES(ctx,
                begin_t.rank() == 1 && size_t_.rank() == 1 && begin_t.NumElements() == r &&
                    size_t_.NumElements() == r,
                errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of "
                                        "size ",
                                        r, ", but got shapes ", sf::ShapeString(begin_t), " and ",
                                        sf::ShapeString(size_t_), " instead."));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()), array::UnsupportedDtype("Slice", in.dtype()));
    Dims out_dims(r);
    const Dims strides = array::RowMajorStrides(in.dims_data(), r);
    CopyBox box;
    int64_t base = 0;
    bool identity = true;
    for (int i = 0; i < r; ++i) {
      const int64_t dim = in.dim(i);
      const int64_t b = array::IntAt(begin_t, i);
      int64_t s = array::IntAt(size_t_, i);
      if (dim == 0) {
        if (s == -1) s = 0;
        OP_REQUIRES(ctx, b == 0 && s == 0,
                    errors::InvalidArgument("Expected begin[", i, "] == 0 (got ", b, ") and size[",
                                            i, "] == 0 (got ", s, ") when input.dim_size(", i,
                                            ") == 0"));
      } else {
        OP_REQUIRES(ctx, b >= 0 && b <= dim,
                    errors::InvalidArgument("Expected begin[", i, "] in [0, ", dim,
                                            "], but got ", b));
        if (s == -1) s = dim - b;
        OP_REQUIRES(ctx, s >= 0 && s <= dim - b,  // b + s could overflow
                    errors::InvalidArgument("Expected size[", i, "] in [0, ", dim - b,
                                            "], but got ", s));
      }
      out_dims[i] = s;
      identity = identity && b == 0 && s == dim;
      base += b * strides[i];
      box.Add(s, strides[i], 0);
    }
    if (identity) {
      ctx->set_output_from_input(0, 0);
      return;
    }
    const Dims dst_strides = array::RowMajorStrides(out_dims.data(), r);
    for (int i = 0; i < r; ++i) box.dst_strides[i] = dst_strides[i];
    if (array::IsContiguousRun(box) && ctx->set_output_from_input_range(0, 0, base, out_dims.data(), r)) return;
    if (!ctx->ok()) return;
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), base, array::TargetOf(&out), 0);
  }
};

// ---------------------------------------------------------- StridedSlice

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(masks_.Read(c)); }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    array::StridedSliceSpec spec;
    OP_REQUIRES_OK(ctx, array::StridedSliceSpecOf(ctx->input(1), ctx->input(2), ctx->input(3),
                                                  in.dims(), masks_, &spec));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("StridedSlice", in.dtype()));
    const std::vector<int64_t>& final_shape = spec.final_shape;
    if (spec.is_identity) {
      ctx->set_output_from_input(0, 0, final_shape);
      return;
    }
    int64_t base = 0;
    const CopyBox box = array::StridedSliceBox(in.dims_data(), in.rank(), spec, true, &base);
    if (array::IsContiguousRun(box) &&
        ctx->set_output_from_input_range(0, 0, base, final_shape.data(), static_cast<int>(final_shape.size()))) {
      return;
    }
    if (!ctx->ok()) return;
    TensorView out;
    if (!ctx->allocate_output(0, final_shape, &out).ok()) return;
    if (out.NumElements() == 0) return;
    array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), base, array::TargetOf(&out), 0);
  }

 private:
  array::StridedSliceMasks masks_;
};

}  // namespace

REGISTER_KERNEL(Name("Slice").Device(DEVICE_CPU).HostMemory("begin").HostMemory("size"), SliceOp);
REGISTER_KERNEL(Name("StridedSlice")
                    .Device(DEVICE_CPU)
                    .HostMemory("begin")
                    .HostMemory("end")
                    .HostMemory("strides"),
                StridedSliceOp);

}  // namespace sdk
}  // namespace graphrt
