// CPU kernels of Transpose, Tile, BroadcastTo, ReverseV2, Reverse, Pad,
// PadV2 and MirrorPad: each is one or a few strided copies (copy_util.h)
// over the input's and output's layouts. Dtype-agnostic; a no-op
// transformation shares the input's buffer.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::CopyBox;
using array::Dims;

// ------------------------------------------------------------- Transpose

class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView perm_t = ctx->input(1);
    OP_REQUIRES(ctx, perm_t.rank() == 1,
                errors::InvalidArgument("perm must be a vector, not ", sf::ShapeString(perm_t)));
    const int r = in.rank();
    OP_REQUIRES(ctx, perm_t.NumElements() == r,
                errors::InvalidArgument("transpose expects a vector of size ", r,
                                        ". But input(1) is a vector of size ",
                                        perm_t.NumElements()));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("Transpose", in.dtype()));
    Dims perm(r);
    uint64_t seen[4] = {0, 0, 0, 0};
    OP_REQUIRES(ctx, r <= 256, errors::InvalidArgument("Transpose supports rank <= 256"));
    for (int i = 0; i < r; ++i) {
      const int64_t d = array::IntAt(perm_t, i);
      OP_REQUIRES(ctx, d >= 0 && d < r,
                  errors::InvalidArgument(d, " is out of range [0 .. ", r, ")"));
      perm[i] = d;
      seen[d / 64] |= uint64_t{1} << (d % 64);
    }
    for (int i = 0; i < r; ++i) {
      if (!((seen[i / 64] >> (i % 64)) & 1)) {
        std::string list;
        for (int k = 0; k < r; ++k) list += (k ? "," : "") + std::to_string(perm[k]);
        OP_REQUIRES(ctx, false,
                    errors::InvalidArgument(i, " is missing from {", list, "}."));
      }
    }
    Dims out_dims(r);
    // A permutation that keeps the order of the dims larger than 1 leaves
    // the memory layout unchanged: share the buffer.
    int64_t last = -1;
    bool same_layout = true;
    for (int i = 0; i < r; ++i) {
      out_dims[i] = in.dim(static_cast<int>(perm[i]));
      if (out_dims[i] != 1) {
        if (perm[i] < last) same_layout = false;
        last = perm[i];
      }
    }
    if (same_layout) {
      Api().ctx_set_output_from_input(ctx->raw(), 0, 0, r, out_dims.data());
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const Dims in_strides = array::RowMajorStrides(in.dims_data(), r);
    const Dims out_strides = array::RowMajorStrides(out_dims.data(), r);
    CopyBox box;
    for (int i = 0; i < r; ++i) box.Add(out_dims[i], in_strides[perm[i]], out_strides[i]);
    array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), 0, array::TargetOf(&out), 0);
  }
};

// ------------------------------------------------------------------ Tile

class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView m = ctx->input(1);
    const int r = in.rank();
    OP_REQUIRES(ctx, m.rank() == 1 && m.NumElements() == r,
                errors::InvalidArgument("Expected multiples argument to be a vector of length ",
                                        r, " but got length ",
                                        m.rank() == 1 ? m.dim(0) : m.NumElements()));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()), array::UnsupportedDtype("Tile", in.dtype()));
    Dims out_dims(r);
    bool identity = true;
    for (int i = 0; i < r; ++i) {
      const int64_t k = array::IntAt(m, i);
      OP_REQUIRES(ctx, k >= 0,
                  errors::InvalidArgument("Expected multiples[", i, "] >= 0, but got ", k));
      OP_REQUIRES_OK(ctx, MultiplyDims(in.dim(i), k, &out_dims[i]));
      identity = identity && k == 1;
    }
    if (identity) {
      ctx->set_output_from_input(0, 0);
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const Dims in_strides = array::RowMajorStrides(in.dims_data(), r);
    const Dims out_strides = array::RowMajorStrides(out_dims.data(), r);
    CopyBox box;
    for (int i = 0; i < r; ++i) {
      const int64_t d = in.dim(i);
      box.Add(out_dims[i] / d, 0, d * out_strides[i]);
      box.Add(d, in_strides[i], out_strides[i]);
    }
    array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), 0, array::TargetOf(&out), 0);
  }
};

// ----------------------------------------------------------- BroadcastTo

class BroadcastToOp : public OpKernel {
 public:
  explicit BroadcastToOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView shape_t = ctx->input(1);
    OP_REQUIRES(ctx, shape_t.rank() == 1,
                errors::InvalidArgument("shape must be a vector, got shape ",
                                        sf::ShapeString(shape_t)));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("BroadcastTo", in.dtype()));
    const int r = static_cast<int>(shape_t.NumElements());
    Dims out_dims(r);
    for (int i = 0; i < r; ++i) {
      out_dims[i] = array::IntAt(shape_t, i);
      OP_REQUIRES(ctx, out_dims[i] >= 0,
                  errors::InvalidArgument("Dimension ", out_dims[i], " must be >= 0"));
    }
    const int ir = in.rank();
    OP_REQUIRES(ctx, ir <= r,
                errors::InvalidArgument("Rank of input (", ir,
                                        ") must be no greater than rank of output shape (", r,
                                        ")."));
    const Dims in_strides = array::RowMajorStrides(in.dims_data(), ir);
    CopyBox box;
    for (int i = 0; i < r; ++i) {
      const int k = i - (r - ir);
      const int64_t d = k >= 0 ? in.dim(k) : 1;
      OP_REQUIRES(ctx, d == out_dims[i] || d == 1,
                  errors::InvalidArgument("Incompatible shapes: ", sf::ShapeString(in), " vs. ",
                                          sf::ShapeString(out_dims.data(), r)));
      box.Add(out_dims[i], d == 1 ? 0 : in_strides[k], 0);
    }
    int64_t out_elements = 0;
    OP_REQUIRES_OK(ctx, NumElementsOf(out_dims.data(), r, &out_elements));
    if (in.NumElements() == out_elements) {
      Api().ctx_set_output_from_input(ctx->raw(), 0, 0, r, out_dims.data());
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), r, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const Dims out_strides = array::RowMajorStrides(out_dims.data(), r);
    for (int i = 0; i < r; ++i) box.dst_strides[i] = out_strides[i];
    array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), 0, array::TargetOf(&out), 0);
  }
};

// --------------------------------------------------------------- Reverse

// Output = input with the dims flagged in `rev` reversed.
void ReverseDims(OpKernelContext* ctx, const TensorView& in, const bool* rev) {
  const int r = in.rank();
  bool any = false;
  for (int i = 0; i < r; ++i) any = any || (rev[i] && in.dim(i) > 1);
  if (!any) {
    ctx->set_output_from_input(0, 0);
    return;
  }
  TensorView out;
  if (!ctx->allocate_output(0, in.dims_data(), r, &out).ok()) return;
  if (out.NumElements() == 0) return;
  const Dims strides = array::RowMajorStrides(in.dims_data(), r);
  CopyBox box;
  int64_t base = 0;
  for (int i = 0; i < r; ++i) {
    if (rev[i]) {
      base += (in.dim(i) - 1) * strides[i];
      box.Add(in.dim(i), -strides[i], strides[i]);
    } else {
      box.Add(in.dim(i), strides[i], strides[i]);
    }
  }
  array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), base, array::TargetOf(&out), 0);
}

class ReverseV2Op : public OpKernel {
 public:
  explicit ReverseV2Op(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView axis_t = ctx->input(1);
    OP_REQUIRES(ctx, axis_t.rank() == 1,
                errors::InvalidArgument("'axis' must be 1-D, not ", sf::ShapeString(axis_t)));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("ReverseV2", in.dtype()));
    const int r = in.rank();
    array::SmallVec<bool> rev(r, false);
    for (int64_t i = 0; i < axis_t.NumElements(); ++i) {
      int64_t a = array::IntAt(axis_t, i);
      OP_REQUIRES(ctx, a >= -r && a < r,
                  errors::InvalidArgument("'axis'[", i, "] = ", a, " is out of valid range [0, ",
                                          r - 1));
      if (a < 0) a += r;
      OP_REQUIRES(ctx, !rev[static_cast<int>(a)],
                  errors::InvalidArgument("axis ", a, " specified more than once."));
      rev[static_cast<int>(a)] = true;
    }
    ReverseDims(ctx, in, rev.data());
  }
};

class ReverseOp : public OpKernel {
 public:
  explicit ReverseOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView dims = ctx->input(1);
    OP_REQUIRES(ctx, dims.rank() == 1,
                errors::InvalidArgument("'dims' must be 1-dimension, not ",
                                        sf::ShapeString(dims)));
    OP_REQUIRES(ctx, dims.NumElements() == in.rank(),
                errors::InvalidArgument("'dims' must have the same number of values as 'input' "
                                        "has dimensions. 'input' has ",
                                        in.rank(), "'dims' has ", dims.NumElements(), " values"));
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("Reverse", in.dtype()));
    ReverseDims(ctx, in, dims.data<bool>());
  }
};

// ------------------------------------------------------------------- Pad

// Reads and checks paddings ([rank, 2]) into before/after.
Status ReadPaddings(const TensorView& in, const TensorView& p, int mirror_offset, Dims* before,
                    Dims* after) {
  const int r = in.rank();
  if (p.rank() != 2 || p.dim(1) != 2) {
    return errors::InvalidArgument("paddings must be a matrix with 2 columns: ",
                                   sf::ShapeString(p));
  }
  if (p.dim(0) != r) {
    return errors::InvalidArgument("The first dimension of paddings must be the rank of inputs",
                                   sf::ShapeString(p), " ", sf::ShapeString(in));
  }
  before->resize(r);
  after->resize(r);
  for (int i = 0; i < r; ++i) {
    (*before)[i] = array::IntAt(p, 2 * i);
    (*after)[i] = array::IntAt(p, 2 * i + 1);
    GR_RETURN_IF_ERROR_SDK(array::CheckPadding((*before)[i], (*after)[i], in.dim(i), mirror_offset));
  }
  return Status();
}

// Allocates the padded output and copies the input into its interior.
// Returns false (output possibly set) when nothing more is to be done.
bool PadInterior(OpKernelContext* ctx, const TensorView& in, const Dims& before,
                 const Dims& after, const void* fill_value, TensorView* out) {
  const int r = in.rank();
  bool any = false;
  Dims out_dims(r);
  for (int i = 0; i < r; ++i) {
    Status s = sf::AddDims(in.dim(i), before[i], &out_dims[i]);
    if (s.ok()) s = sf::AddDims(out_dims[i], after[i], &out_dims[i]);
    if (!s.ok()) {
      ctx->CtxFailure(s);
      return false;
    }
    any = any || before[i] || after[i];
  }
  if (!any) {
    ctx->set_output_from_input(0, 0);
    return false;
  }
  if (!ctx->allocate_output(0, out_dims.data(), r, out).ok()) return false;
  if (out->NumElements() == 0) return false;
  if (fill_value) array::FillElements(ctx, out, 0, out->NumElements(), fill_value);
  if (in.NumElements() == 0) return true;
  const Dims in_strides = array::RowMajorStrides(in.dims_data(), r);
  const Dims out_strides = array::RowMajorStrides(out_dims.data(), r);
  CopyBox box;
  int64_t dst_base = 0;
  for (int i = 0; i < r; ++i) {
    box.Add(in.dim(i), in_strides[i], out_strides[i]);
    dst_base += before[i] * out_strides[i];
  }
  array::StridedCopy(ctx, in.dtype(), box, in.raw_data(), 0, array::TargetOf(out), dst_base);
  return true;
}

class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    OP_REQUIRES(ctx, array::Copyable(in.dtype()), array::UnsupportedDtype("Pad", in.dtype()));
    const void* value = zero_;
    if (ctx->num_inputs() == 3) {
      const TensorView cv = ctx->input(2);
      OP_REQUIRES(ctx, cv.NumElements() == 1 && cv.rank() == 0,
                  errors::InvalidArgument("constant_values must be a scalar. Got: ",
                                          sf::ShapeString(cv)));
      value = cv.raw_data();
    } else if (in.dtype() == GR_STRING) {
      value = nullptr;  // new string tensors already hold empty strings
    }
    Dims before, after;
    OP_REQUIRES_OK(ctx, ReadPaddings(in, ctx->input(1), -1, &before, &after));
    TensorView out;
    PadInterior(ctx, in, before, after, value, &out);
  }

 private:
  const unsigned char zero_[16] = {};
};

class MirrorPadOp : public OpKernel {
 public:
  explicit MirrorPadOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(array::ReadMirrorPadMode(c, &offset_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("MirrorPad", in.dtype()));
    Dims before, after;
    OP_REQUIRES_OK(ctx, ReadPaddings(in, ctx->input(1), offset_, &before, &after));
    TensorView out;
    if (!PadInterior(ctx, in, before, after, nullptr, &out)) return;
    // Fill the pads dim by dim, innermost first, from the output itself:
    // the pad of dim d mirrors the already padded data of the dims after d.
    const int r = in.rank();
    Dims out_dims(r);
    for (int i = 0; i < r; ++i) out_dims[i] = out.dim(i);
    const Dims os = array::RowMajorStrides(out_dims.data(), r);
    const array::CopyTarget target = array::TargetOf(&out);
    for (int d = r - 1; d >= 0; --d) {
      for (int side = 0; side < 2; ++side) {
        const int64_t n = side == 0 ? before[d] : after[d];
        if (n == 0) continue;
        CopyBox box;
        int64_t base = 0;  // offset of the region's first element, dims != d
        for (int k = 0; k < r; ++k) {
          if (k == d) {
            box.Add(n, -os[k], os[k]);
          } else if (k < d) {
            box.Add(in.dim(k), os[k], os[k]);
            base += before[k] * os[k];
          } else {
            box.Add(out_dims[k], os[k], os[k]);
          }
        }
        const int64_t dst_pos = side == 0 ? 0 : before[d] + in.dim(d);
        const int64_t src_pos = side == 0 ? 2 * before[d] - (1 - offset_)
                                          : before[d] + in.dim(d) - 1 - offset_;
        array::StridedCopy(ctx, in.dtype(), box, out.raw_data(), base + src_pos * os[d], target,
                           base + dst_pos * os[d]);
      }
    }
  }

 private:
  int offset_ = 0;
};

}  // namespace

REGISTER_KERNEL(Name("Transpose").Device(DEVICE_CPU).HostMemory("perm"), TransposeOp);
REGISTER_KERNEL(Name("Tile").Device(DEVICE_CPU).HostMemory("multiples"), TileOp);
REGISTER_KERNEL(Name("BroadcastTo").Device(DEVICE_CPU).HostMemory("shape"), BroadcastToOp);
REGISTER_KERNEL(Name("ReverseV2").Device(DEVICE_CPU).HostMemory("axis"), ReverseV2Op);
REGISTER_KERNEL(Name("Reverse").Device(DEVICE_CPU).HostMemory("dims"), ReverseOp);
REGISTER_KERNEL(Name("Pad").Device(DEVICE_CPU).HostMemory("paddings"), PadOp);
REGISTER_KERNEL(Name("PadV2").Device(DEVICE_CPU).HostMemory("paddings"), PadOp);
REGISTER_KERNEL(Name("MirrorPad").Device(DEVICE_CPU).HostMemory("paddings"), MirrorPadOp);

}  // namespace sdk
}  // namespace graphrt
