// CPU kernels of BroadcastGradientArgs and DynamicStitch.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::Dims;

// r0/r1: the output dims (of the broadcast shape, ascending) that s0/s1's
// gradient must be summed over: where that side is 1 (or missing) and the
// other is not, and where both are 1.
template <typename T>
class BroadcastGradientArgsOp : public OpKernel {
 public:
  explicit BroadcastGradientArgsOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView s0 = ctx->input(0), s1 = ctx->input(1);
    OP_REQUIRES(ctx, s0.rank() == 1,
                errors::InvalidArgument("In[0] must be a vector.", sf::ShapeString(s0)));
    OP_REQUIRES(ctx, s1.rank() == 1,
                errors::InvalidArgument("In[1] must be a vector.", sf::ShapeString(s1)));
    const int64_t n0 = s0.NumElements(), n1 = s1.NumElements();
    const int64_t n = std::max(n0, n1);
    Dims r0, r1;
    for (int64_t i = 0; i < n; ++i) {
      // Right-aligned; missing leading dims are 1.
      const int64_t a = i < n - n0 ? 1 : static_cast<int64_t>(s0.data<T>()[i - (n - n0)]);
      const int64_t b = i < n - n1 ? 1 : static_cast<int64_t>(s1.data<T>()[i - (n - n1)]);
      if (a == b) {
        if (a == 1) {
          r0.push_back(i);
          r1.push_back(i);
        }
      } else if (a == 1) {
        r0.push_back(i);
      } else if (b == 1) {
        r1.push_back(i);
      } else {
        std::vector<int64_t> x(static_cast<size_t>(n0)), y(static_cast<size_t>(n1));
        for (int64_t k = 0; k < n0; ++k) x[k] = s0.data<T>()[k];
        for (int64_t k = 0; k < n1; ++k) y[k] = s1.data<T>()[k];
        OP_REQUIRES(ctx, false,
                    errors::InvalidArgument("Incompatible shapes: [", array::JoinInts(x), "] vs. [",
                                            array::JoinInts(y), "]"));
      }
    }
    const Dims* rs[2] = {&r0, &r1};
    for (int k = 0; k < 2; ++k) {
      const int64_t dims[1] = {rs[k]->size()};
      TensorView out;
      if (!ctx->allocate_output(k, dims, 1, &out).ok()) return;
      for (int j = 0; j < rs[k]->size(); ++j) out.data<T>()[j] = static_cast<T>((*rs[k])[j]);
    }
  }
};

// merged[indices[m][i...], ...] = data[m][i..., ...]; later pieces win.
class DynamicStitchOp : public OpKernel {
 public:
  explicit DynamicStitchOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    const TensorView idx0 = ctx->input(0), data0 = ctx->input(n);
    OP_REQUIRES(ctx, array::Copyable(data0.dtype()),
                array::UnsupportedDtype("DynamicStitch", data0.dtype()));
    int64_t max_index = -1;
    for (int m = 0; m < n; ++m) {
      const TensorView idx = ctx->input(m), data = ctx->input(n + m);
      bool prefix = data.rank() >= idx.rank() && data.rank() - idx.rank() == data0.rank() - idx0.rank();
      for (int d = 0; prefix && d < idx.rank(); ++d) prefix = idx.dim(d) == data.dim(d);
      for (int d = 0; prefix && d < data.rank() - idx.rank(); ++d) {
        prefix = data.dim(idx.rank() + d) == data0.dim(idx0.rank() + d);
      }
      OP_REQUIRES(ctx, prefix,
                  errors::InvalidArgument("data[", m, "].shape = ", sf::ShapeString(data),
                                          " does not start with indices[", m,
                                          "].shape = ", sf::ShapeString(idx),
                                          ", or its remaining dims do not match data[0]'s"));
      const int32_t* v = idx.data<int32_t>();
      for (int64_t i = 0; i < idx.NumElements(); ++i) {
        OP_REQUIRES(ctx, v[i] >= 0,
                    errors::InvalidArgument("indices[", m, "][", i, "] = ", v[i],
                                            " is negative"));
        max_index = std::max<int64_t>(max_index, v[i]);
      }
    }
    Dims out_dims;
    out_dims.push_back(max_index + 1);
    int64_t slice = 1;
    for (int d = idx0.rank(); d < data0.rank(); ++d) {
      out_dims.push_back(data0.dim(d));
      slice *= data0.dim(d);
    }
    TensorView out;
    if (!ctx->allocate_output(0, out_dims.data(), out_dims.size(), &out).ok()) return;
    if (out.NumElements() == 0) return;
    const int32_t dtype = data0.dtype();
    const int es = array::ElementSize(dtype);
    if (dtype != GR_STRING) {
      // Rows no index names are zero (strings start empty).
      std::memset(out.raw_data(), 0, static_cast<size_t>(out.NumElements() * es));
    }
    for (int m = 0; m < n; ++m) {
      const TensorView idx = ctx->input(m), data = ctx->input(n + m);
      const int32_t* v = idx.data<int32_t>();
      for (int64_t i = 0; i < idx.NumElements(); ++i) {
        if (dtype == GR_STRING) {
          const GR_StringElem* s = data.data<GR_StringElem>() + i * slice;
          for (int64_t k = 0; k < slice; ++k) {
            Api().string_assign(out.raw(), v[i] * slice + k, s[k].data, s[k].size);
          }
        } else {
          std::memcpy(static_cast<char*>(out.raw_data()) + v[i] * slice * es,
                      static_cast<const char*>(data.raw_data()) + i * slice * es,
                      static_cast<size_t>(slice * es));
        }
      }
    }
  }
};

}  // namespace

REGISTER_KERNEL(Name("BroadcastGradientArgs")
                    .Device(DEVICE_CPU)
                    .TypeConstraint<int32_t>("T")
                    .HostMemory("s0")
                    .HostMemory("s1")
                    .HostMemory("r0")
                    .HostMemory("r1")
                    .Inexpensive(),
                BroadcastGradientArgsOp<int32_t>);
REGISTER_KERNEL(Name("BroadcastGradientArgs")
                    .Device(DEVICE_CPU)
                    .TypeConstraint<int64_t>("T")
                    .HostMemory("s0")
                    .HostMemory("s1")
                    .HostMemory("r0")
                    .HostMemory("r1")
                    .Inexpensive(),
                BroadcastGradientArgsOp<int64_t>);
REGISTER_KERNEL(Name("DynamicStitch").Device(DEVICE_CPU).HostMemory("indices"), DynamicStitchOp);

}  // namespace sdk
}  // namespace graphrt
