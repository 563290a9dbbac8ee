// CPU kernels of the array family: metadata (Rank, Size, ShapeN),
// identity-likes (IdentityN, StopGradient, PreventGradient), zero-copy
// reshapes (ExpandDims, Squeeze), Fill, ZerosLike, OnesLike, Range, Where.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::Dims;
using array::ElementSize;

// ------------------------------------------------------------ Rank, Size

class RankOp : public OpKernel {
 public:
  explicit RankOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    TensorView out;
    if (!ctx->allocate_output(0, nullptr, 0, &out).ok()) return;
    *out.data<int32_t>() = ctx->input(0).rank();
  }
};

template <typename OutT>
class SizeOp : public OpKernel {
 public:
  explicit SizeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->input(0).NumElements();
    OP_REQUIRES(ctx, n <= static_cast<int64_t>(std::numeric_limits<OutT>::max()),
                errors::InvalidArgument("Number of elements was larger than representable by "
                                        "32-bit output type"));
    TensorView out;
    if (!ctx->allocate_output(0, nullptr, 0, &out).ok()) return;
    *out.data<OutT>() = static_cast<OutT>(n);
  }
};

template <typename OutT>
class ShapeNOp : public OpKernel {
 public:
  explicit ShapeNOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const TensorView in = ctx->input(i);
      const int64_t dims[1] = {in.rank()};
      TensorView out;
      if (!ctx->allocate_output(i, dims, 1, &out).ok()) return;
      for (int d = 0; d < in.rank(); ++d) {
        OP_REQUIRES(ctx, in.dim(d) <= static_cast<int64_t>(std::numeric_limits<OutT>::max()),
                    errors::InvalidArgument("Shape output type is 32-bit but dim ", d, " is ",
                                            in.dim(d)));
        out.data<OutT>()[d] = static_cast<OutT>(in.dim(d));
      }
    }
  }
};

// ------------------------------------------------------- identity-likes

// Every output shares the buffer of the input of the same index.
class ForwardAllOp : public OpKernel {
 public:
  explicit ForwardAllOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      if (!ctx->set_output_from_input(i, i).ok()) return;
    }
  }
};

// ------------------------------------------------------ ExpandDims, Squeeze

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView dim_t = ctx->input(1);
    OP_REQUIRES(ctx, dim_t.NumElements() == 1,
                errors::InvalidArgument("'dim' must be a tensor with a single value"));
    int64_t dim = array::IntAt(dim_t, 0);
    const int r = in.rank();
    OP_REQUIRES(ctx, dim >= -1 - r && dim <= r,
                errors::InvalidArgument("Tried to expand dim index ", dim, " for tensor with ", r,
                                        " dimensions."));
    if (dim < 0) dim += r + 1;
    Dims out;
    for (int i = 0; i < r; ++i) {
      if (i == dim) out.push_back(1);
      out.push_back(in.dim(i));
    }
    if (dim == r) out.push_back(1);
    Api().ctx_set_output_from_input(ctx->raw(), 0, 0, out.size(), out.data());
  }
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<int64_t> dims;
    c->SetStatus(c->GetAttr("squeeze_dims", &dims));
    squeeze_ = dims;
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const int r = in.rank();
    uint64_t wanted_bits[4] = {0, 0, 0, 0};  // ranks up to 256
    OP_REQUIRES(ctx, r <= 256, errors::InvalidArgument("Squeeze supports rank <= 256"));
    for (int64_t d : squeeze_) {
      OP_REQUIRES(ctx, d >= -r && d < r,
                  errors::InvalidArgument("Tried to squeeze dim index ", d, " for tensor with ",
                                          r, " dimensions."));
      const int64_t k = d < 0 ? d + r : d;
      wanted_bits[k / 64] |= uint64_t{1} << (k % 64);
    }
    Dims out;
    for (int i = 0; i < r; ++i) {
      const bool wanted = (wanted_bits[i / 64] >> (i % 64)) & 1;
      if (squeeze_.empty()) {
        if (in.dim(i) != 1) out.push_back(in.dim(i));
      } else if (wanted) {
        OP_REQUIRES(ctx, in.dim(i) == 1,
                    errors::InvalidArgument("Can not squeeze dim[", i,
                                            "], expected a dimension of 1, got ", in.dim(i)));
      } else {
        out.push_back(in.dim(i));
      }
    }
    Api().ctx_set_output_from_input(ctx->raw(), 0, 0, out.size(), out.data());
  }

 private:
  std::vector<int64_t> squeeze_;
};

// ----------------------------------------------------- Fill and friends

class FillOp : public OpKernel {
 public:
  explicit FillOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView dims_t = ctx->input(0);
    const TensorView value = ctx->input(1);
    OP_REQUIRES(ctx, dims_t.rank() == 1,
                errors::InvalidArgument("dims must be a vector, got shape ",
                                        sf::ShapeString(dims_t)));
    OP_REQUIRES(ctx, value.rank() == 0,
                errors::InvalidArgument("value must be a scalar, got shape ",
                                        sf::ShapeString(value)));
    OP_REQUIRES(ctx, array::Copyable(value.dtype()),
                array::UnsupportedDtype("Fill", value.dtype()));
    Dims dims(static_cast<int>(dims_t.NumElements()));
    for (int i = 0; i < dims.size(); ++i) {
      dims[i] = array::IntAt(dims_t, i);
      OP_REQUIRES(ctx, dims[i] >= 0,
                  errors::InvalidArgument("Dimension ", dims[i], " must be >= 0"));
    }
    TensorView out;
    if (!ctx->allocate_output(0, dims.data(), dims.size(), &out).ok()) return;
    array::FillElements(ctx, &out, 0, out.NumElements(), value.raw_data());
  }
};

class ZerosLikeOp : public OpKernel {
 public:
  explicit ZerosLikeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    OP_REQUIRES(ctx, array::Copyable(in.dtype()),
                array::UnsupportedDtype("ZerosLike", in.dtype()));
    TensorView out;
    if (in.dtype() == GR_STRING) {
      // Freshly allocated string tensors hold empty strings.
      ctx->allocate_output(0, in.dims_data(), in.rank(), &out);
      return;
    }
    if (!ctx->forward_input_or_allocate_output(0, 0, in.dims_data(), in.rank(), &out).ok()) return;
    char* p = static_cast<char*>(out.raw_data());
    const int64_t bytes = static_cast<int64_t>(out.ByteSize());
    ForRange(ctx, bytes / 4096 + 1, bytes, 100, [&](int64_t b, int64_t e) {
      const int64_t lo = b * 4096, hi = std::min(bytes, e * 4096);
      if (hi > lo) std::memset(p + lo, 0, static_cast<size_t>(hi - lo));
    });
  }
};

// The bytes of the value 1 in `dtype` (up to 16 bytes); false if none.
bool OneOf(int32_t dtype, unsigned char* bytes) {
  std::memset(bytes, 0, 16);
  auto put = [&](auto v) { std::memcpy(bytes, &v, sizeof(v)); };
  switch (dtype) {
    case GR_FLOAT: put(1.0f); return true;
    case GR_DOUBLE: put(1.0); return true;
    case GR_COMPLEX64: put(1.0f); return true;
    case GR_COMPLEX128: put(1.0); return true;
    case GR_BFLOAT16: put(uint16_t{0x3F80}); return true;
    case GR_HALF: put(uint16_t{0x3C00}); return true;
    case GR_INT8: case GR_UINT8: case GR_BOOL: put(uint8_t{1}); return true;
    case GR_INT16: case GR_UINT16: put(uint16_t{1}); return true;
    case GR_INT32: case GR_UINT32: put(uint32_t{1}); return true;
    case GR_INT64: case GR_UINT64: put(uint64_t{1}); return true;
    default: return false;
  }
}

class OnesLikeOp : public OpKernel {
 public:
  explicit OnesLikeOp(OpKernelConstruction* c) : OpKernel(c) {
    if (!OneOf(c->input_type(0), one_)) {
      c->SetStatus(array::UnsupportedDtype("OnesLike", c->input_type(0)));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    TensorView out;
    if (!ctx->forward_input_or_allocate_output(0, 0, in.dims_data(), in.rank(), &out).ok()) return;
    array::FillElements(ctx, &out, 0, out.NumElements(), one_);
  }

 private:
  unsigned char one_[16];
};

// ----------------------------------------------------------------- Range

template <typename T>
class RangeOp : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const char* names[3] = {"start", "limit", "delta"};
    T v[3];
    for (int i = 0; i < 3; ++i) {
      const TensorView t = ctx->input(i);
      // TensorFlow also accepts one-element vectors here.
      OP_REQUIRES(ctx, t.rank() == 0 || (t.rank() == 1 && t.NumElements() == 1),
                  errors::InvalidArgument(names[i], " must be a scalar, not shape ",
                                          sf::ShapeString(t)));
      v[i] = *t.data<T>();
    }
    int64_t size = 0;
    OP_REQUIRES_OK(ctx, array::RangeSize<T>(v[0], v[1], v[2], &size));
    const int64_t dims[1] = {size};
    TensorView out;
    if (!ctx->allocate_output(0, dims, 1, &out).ok()) return;
    T* o = out.data<T>();
    const T start = v[0], delta = v[2];
    ForRange(ctx, size, size, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = array::RangeValue<T>(start, delta, i);
    });
  }
};

// ----------------------------------------------------------------- Where

template <typename T>
inline bool Truthy(T v) {
  return v != T(0);
}
// bfloat16 and half are nonzero unless +-0 (the sign bit aside).
template <>
inline bool Truthy<Eigen::bfloat16>(Eigen::bfloat16 v) {
  return (Eigen::numext::bit_cast<uint16_t>(v) & 0x7fff) != 0;
}
template <>
inline bool Truthy<Eigen::half>(Eigen::half v) {
  return (Eigen::numext::bit_cast<uint16_t>(v) & 0x7fff) != 0;
}

template <typename T>
class WhereOp : public OpKernel {
 public:
  explicit WhereOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const T* x = in.data<T>();
    const int64_t n = in.NumElements();
    // Pass 1: count per block (blocks are fixed, so the two passes agree).
    constexpr int64_t kBlock = 16 * 1024;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    constexpr int64_t kInlineBlocks = 64;
    int64_t inline_counts[kInlineBlocks + 1];
    std::vector<int64_t> heap_counts;
    int64_t* counts = inline_counts;
    if (blocks > kInlineBlocks) {
      heap_counts.resize(static_cast<size_t>(blocks + 1));
      counts = heap_counts.data();
    }
    ForRange(ctx, blocks, n, kBlock, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        int64_t c = 0;
        const int64_t hi = std::min(n, (blk + 1) * kBlock);
        for (int64_t i = blk * kBlock; i < hi; ++i) c += Truthy(x[i]) ? 1 : 0;
        counts[blk + 1] = c;
      }
    });
    counts[0] = 0;
    for (int64_t blk = 0; blk < blocks; ++blk) counts[blk + 1] += counts[blk];
    const int64_t found = counts[blocks];
    const int r = in.rank();
    const int64_t dims[2] = {found, r};
    TensorView out;
    if (!ctx->allocate_output(0, dims, 2, &out).ok()) return;
    if (found == 0 || r == 0) return;
    int64_t* o = out.data<int64_t>();
    const int64_t* shape = in.dims_data();
    // Pass 2: write coordinates, each block from its prefix offset.
    ForRange(ctx, blocks, n, 2 * kBlock, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        int64_t row = counts[blk];
        const int64_t lo = blk * kBlock, hi = std::min(n, (blk + 1) * kBlock);
        Dims idx(r, 0);
        int64_t rem = lo;
        for (int d = r - 1; d >= 0; --d) {
          idx[d] = rem % shape[d];
          rem /= shape[d];
        }
        for (int64_t i = lo; i < hi; ++i) {
          if (Truthy(x[i])) {
            int64_t* dst = o + row * r;
            for (int d = 0; d < r; ++d) dst[d] = idx[d];
            ++row;
          }
          for (int d = r - 1; d >= 0; --d) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
          }
        }
      }
    });
  }
};

}  // namespace

REGISTER_KERNEL(Name("Rank").Device(DEVICE_CPU).HostMemory("output").Inexpensive(), RankOp);
REGISTER_KERNEL(Name("Size").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type").HostMemory("output").Inexpensive(),
                SizeOp<int32_t>);
REGISTER_KERNEL(Name("Size").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type").HostMemory("output").Inexpensive(),
                SizeOp<int64_t>);
REGISTER_KERNEL(Name("ShapeN").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type").HostMemory("output").Inexpensive(),
                ShapeNOp<int32_t>);
REGISTER_KERNEL(Name("ShapeN").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type").HostMemory("output").Inexpensive(),
                ShapeNOp<int64_t>);
REGISTER_KERNEL(Name("IdentityN").Device(DEVICE_CPU).Inexpensive(), ForwardAllOp);
REGISTER_KERNEL(Name("StopGradient").Device(DEVICE_CPU).Inexpensive(), ForwardAllOp);
REGISTER_KERNEL(Name("PreventGradient").Device(DEVICE_CPU).Inexpensive(), ForwardAllOp);
REGISTER_KERNEL(Name("ExpandDims").Device(DEVICE_CPU).HostMemory("dim").Inexpensive(), ExpandDimsOp);
REGISTER_KERNEL(Name("Squeeze").Device(DEVICE_CPU).Inexpensive(), SqueezeOp);
REGISTER_KERNEL(Name("Fill").Device(DEVICE_CPU).HostMemory("dims"), FillOp);
REGISTER_KERNEL(Name("ZerosLike").Device(DEVICE_CPU), ZerosLikeOp);
REGISTER_KERNEL(Name("OnesLike").Device(DEVICE_CPU), OnesLikeOp);

#define GR_RANGE(T) \
  REGISTER_KERNEL(Name("Range").Device(DEVICE_CPU).TypeConstraint<T>("Tidx").HostMemory("start").HostMemory("limit").HostMemory("delta"), RangeOp<T>)
GR_RANGE(float);
GR_RANGE(double);
GR_RANGE(int32_t);
GR_RANGE(int64_t);
GR_RANGE(int8_t);
GR_RANGE(int16_t);
GR_RANGE(uint16_t);
GR_RANGE(uint32_t);
#undef GR_RANGE

#define GR_WHERE(T, DT) REGISTER_KERNEL(Name("Where").Device(DEVICE_CPU).TypeConstraint("T", {DT}), WhereOp<T>)
GR_WHERE(bool, GR_BOOL);
GR_WHERE(float, GR_FLOAT);
GR_WHERE(double, GR_DOUBLE);
GR_WHERE(int8_t, GR_INT8);
GR_WHERE(uint8_t, GR_UINT8);
GR_WHERE(int16_t, GR_INT16);
GR_WHERE(uint16_t, GR_UINT16);
GR_WHERE(int32_t, GR_INT32);
GR_WHERE(uint32_t, GR_UINT32);
GR_WHERE(int64_t, GR_INT64);
GR_WHERE(uint64_t, GR_UINT64);
GR_WHERE(Eigen::bfloat16, GR_BFLOAT16);
GR_WHERE(Eigen::half, GR_HALF);
#undef GR_WHERE

}  // namespace sdk
}  // namespace graphrt
