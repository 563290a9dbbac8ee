// CPU kernels of ArgMax, ArgMin, Cumsum and Cumprod: one axis of the input, viewed
// as [outer, D, inner] around it.
//
// ArgMax/ArgMin follow Eigen's (and so TensorFlow's) arg reducers walked in
// order: the running best starts as (index 0, lowest value) for ArgMax
// ((0, highest) for ArgMin) and is replaced only by a strictly greater
// (smaller) value. Ties keep the first index, NaN never wins, and a slice
// with nothing above lowest() (all NaN, say) gives 0.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"
#include "common/cpu/wrapping.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Inner columns handled together by one work item (a stack buffer each).
constexpr int64_t kColumnChunk = 512;

int64_t ScalarIndex(const TensorView& t) {
  switch (t.dtype()) {
    case GR_INT16: return t.data<int16_t>()[0];
    case GR_INT32: return t.data<int32_t>()[0];
    default: return t.data<int64_t>()[0];
  }
}

// ------------------------------------------------------------- ArgMax/ArgMin

template <typename T, bool kIsMax>
struct ArgCompare {
  static T Start() {
    if constexpr (std::is_same_v<T, bool>) return !kIsMax;
    return kIsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  static bool Better(T v, T best) { return kIsMax ? v > best : v < best; }
};

template <typename T, typename Tout, bool kIsMax>
class ArgOp : public OpKernel {
 public:
  using Cmp = ArgCompare<T, kIsMax>;
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView input = ctx->input(0);
    const TensorView dimension = ctx->input(1);
    OP_REQUIRES(ctx, dimension.rank() == 0,
                errors::InvalidArgument("dim must be a scalar, but received tensor of shape: ",
                                        sf::ShapeString(dimension)));
    const int64_t dim = ScalarIndex(dimension);
    const int rank = input.rank();
    const int64_t axis = dim < 0 ? dim + rank : dim;
    OP_REQUIRES(ctx, axis >= 0 && axis < rank,
                errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                        "), but got ", dim));
    OP_REQUIRES(ctx, input.dim(static_cast<int>(axis)) > 0,
                errors::InvalidArgument("Reduction axis ", dim, " is empty in shape ",
                                        sf::ShapeString(input)));
    int64_t out_dims[64];
    OP_REQUIRES(ctx, rank <= 64,
                errors::InvalidArgument("ArgMax/ArgMin supports inputs up to rank 64, got rank ",
                                        rank));
    int64_t outer = 1, inner = 1;
    int out_rank = 0;
    for (int i = 0; i < rank; ++i) {
      if (i < axis) outer *= input.dim(i);
      if (i > axis) inner *= input.dim(i);
      if (i != axis) out_dims[out_rank++] = input.dim(i);
    }
    const int64_t D = input.dim(static_cast<int>(axis));
    OP_REQUIRES(ctx, D - 1 <= static_cast<int64_t>(std::numeric_limits<Tout>::max()),
                errors::InvalidArgument("Reduction axis ", dim, " of size ", D,
                                        " does not fit the output type"));
    TensorView out;
    if (!ctx->allocate_output(0, out_dims, out_rank, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const T* in = input.data<T>();
    Tout* o = out.data<Tout>();
    const int64_t n = input.NumElements();

    if (inner == 1) {  // contiguous slices
      ForRange(ctx, outer, n, D, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) o[r] = static_cast<Tout>(Slice(in + r * D, D));
      });
      return;
    }
    // Strided slices: a chunk of inner columns walks the D rows together.
    const int64_t chunks = (inner + kColumnChunk - 1) / kColumnChunk;
    ForRange(ctx, outer * chunks, n, D * std::min(inner, kColumnChunk), [&](int64_t b, int64_t e) {
      T best[kColumnChunk];
      for (int64_t it = b; it < e; ++it) {
        const int64_t r = it / chunks, c0 = (it % chunks) * kColumnChunk;
        const int64_t w = std::min(kColumnChunk, inner - c0);
        const T* base = in + r * D * inner + c0;
        Tout* ob = o + r * inner + c0;
        std::fill(best, best + w, Cmp::Start());
        std::fill(ob, ob + w, Tout(0));
        for (int64_t d = 0; d < D; ++d) {
          const T* row = base + d * inner;
          const Tout di = static_cast<Tout>(d);
          for (int64_t j = 0; j < w; ++j) {
            const bool better = Cmp::Better(row[j], best[j]);
            best[j] = better ? row[j] : best[j];
            ob[j] = better ? di : ob[j];
          }
        }
      }
    });
  }

 private:
  static int64_t Slice(const T* p, int64_t n) {
    T best = Cmp::Start();
    int64_t index = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (Cmp::Better(p[i], best)) {
        best = p[i];
        index = i;
      }
    }
    return index;
  }
};

#define GR_REGISTER_ARG(T)                                                                 \
  REGISTER_KERNEL(Name("ArgMax")                                                           \
                      .Device(DEVICE_CPU)                                                  \
                      .TypeConstraint<T>("T")                                              \
                      .TypeConstraint("Tidx", {GR_INT16, GR_INT32, GR_INT64})              \
                      .TypeConstraint<int64_t>("output_type")                              \
                      .HostMemory("dimension"),                                            \
                  ArgOp<T, int64_t, true>);                                                \
  REGISTER_KERNEL(Name("ArgMax")                                                           \
                      .Device(DEVICE_CPU)                                                  \
                      .TypeConstraint<T>("T")                                              \
                      .TypeConstraint("Tidx", {GR_INT16, GR_INT32, GR_INT64})              \
                      .TypeConstraint<int32_t>("output_type")                              \
                      .HostMemory("dimension"),                                            \
                  ArgOp<T, int32_t, true>);                                                \
  REGISTER_KERNEL(Name("ArgMin")                                                           \
                      .Device(DEVICE_CPU)                                                  \
                      .TypeConstraint<T>("T")                                              \
                      .TypeConstraint("Tidx", {GR_INT16, GR_INT32, GR_INT64})              \
                      .TypeConstraint<int64_t>("output_type")                              \
                      .HostMemory("dimension"),                                            \
                  ArgOp<T, int64_t, false>);                                               \
  REGISTER_KERNEL(Name("ArgMin")                                                           \
                      .Device(DEVICE_CPU)                                                  \
                      .TypeConstraint<T>("T")                                              \
                      .TypeConstraint("Tidx", {GR_INT16, GR_INT32, GR_INT64})              \
                      .TypeConstraint<int32_t>("output_type")                              \
                      .HostMemory("dimension"),                                            \
                  ArgOp<T, int32_t, false>)

GR_REGISTER_ARG(float);
GR_REGISTER_ARG(double);
GR_REGISTER_ARG(int32_t);
GR_REGISTER_ARG(int64_t);
GR_REGISTER_ARG(bool);

#undef GR_REGISTER_ARG

// ---------------------------------------------------------- Cumsum, Cumprod

// One scan, two combiners: Cumsum adds from 0, Cumprod multiplies from 1.
// Integers wrap (two's complement) instead of overflowing, which is undefined.
struct ScanSum {
  template <typename T>
  static T Identity() { return T(0); }
  template <typename T>
  static void Combine(T& acc, T v) { acc = cwise::WrappingAdd(acc, v); }
  template <typename A, typename B>
  static void CombineRows(A&& acc, const B& v) { acc += v; }
};
struct ScanProduct {
  template <typename T>
  static T Identity() { return T(1); }
  template <typename T>
  static void Combine(T& acc, T v) { acc = cwise::WrappingMul(acc, v); }
  template <typename A, typename B>
  static void CombineRows(A&& acc, const B& v) { acc *= v; }
};

template <typename T, typename Scan>
class ScanOp : public OpKernel {
 public:
  explicit ScanOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("exclusive", &exclusive_);
    if (s.ok()) s = c->GetAttr("reverse", &reverse_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView input = ctx->input(0);
    const TensorView axis_t = ctx->input(1);
    OP_REQUIRES(ctx, axis_t.rank() == 0,
                errors::InvalidArgument("ScanOp: axis must be a scalar, not ",
                                        sf::ShapeString(axis_t)));
    const int64_t axis_arg = ScalarIndex(axis_t);
    const int rank = input.rank();
    const int64_t axis = axis_arg < 0 ? axis_arg + rank : axis_arg;
    OP_REQUIRES(ctx, axis >= 0 && axis < rank,
                errors::InvalidArgument("ScanOp: Expected scan axis in the range [", -rank, ", ",
                                        rank, "), but got ", axis));
    TensorView out;
    if (!ctx->forward_input_or_allocate_output(0, 0, input.dims_data(), rank, &out).ok()) return;
    const int64_t n = input.NumElements();
    if (n == 0) return;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < rank; ++i) {
      if (i < axis) outer *= input.dim(i);
      if (i > axis) inner *= input.dim(i);
    }
    const int64_t D = input.dim(static_cast<int>(axis));
    const T* in = input.data<T>();
    T* o = out.data<T>();  // may be `in` itself: every element is read before written
    const bool exclusive = exclusive_, reverse = reverse_;
    // Row d of the scan order (reverse walks the axis backwards).
    auto row = [=](int64_t d) { return reverse ? D - 1 - d : d; };

    if (inner == 1) {
      ForRange(ctx, outer, n, D, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* x = in + r * D;
          T* y = o + r * D;
          T acc = Scan::template Identity<T>();
          for (int64_t d = 0; d < D; ++d) {
            const int64_t k = row(d);
            const T v = x[k];
            if (exclusive) {
              y[k] = acc;
              Scan::Combine(acc, v);
            } else {
              Scan::Combine(acc, v);
              y[k] = acc;
            }
          }
        }
      });
      return;
    }
    const int64_t chunks = (inner + kColumnChunk - 1) / kColumnChunk;
    ForRange(ctx, outer * chunks, n, D * std::min(inner, kColumnChunk), [&](int64_t b, int64_t e) {
      T acc[kColumnChunk];
      for (int64_t it = b; it < e; ++it) {
        const int64_t r = it / chunks, c0 = (it % chunks) * kColumnChunk;
        const int64_t w = std::min(kColumnChunk, inner - c0);
        EigenVecMap<T> a(acc, w);
        a.setConstant(Scan::template Identity<T>());
        for (int64_t d = 0; d < D; ++d) {
          const int64_t off = (r * D + row(d)) * inner + c0;
          if (exclusive) {
            // y may alias x: keep x's row in the accumulator's wake.
            T* y = o + off;
            const T* x = in + off;
            for (int64_t j = 0; j < w; ++j) {
              const T v = x[j];
              y[j] = acc[j];
              Scan::Combine(acc[j], v);
            }
          } else {
            if constexpr (std::is_floating_point_v<T>) {
              Scan::CombineRows(a, EigenConstVecMap<T>(in + off, w));
            } else {
              for (int64_t j = 0; j < w; ++j) Scan::Combine(acc[j], in[off + j]);
            }
            EigenVecMap<T>(o + off, w) = a;
          }
        }
      }
    });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

#define GR_REGISTER_SCAN(name, T, Scan)                            \
  REGISTER_KERNEL(Name(name)                                      \
                      .Device(DEVICE_CPU)                         \
                      .TypeConstraint<T>("T")                     \
                      .TypeConstraint("Tidx", {GR_INT32, GR_INT64}) \
                      .HostMemory("axis"),                        \
                  ScanOp<T, Scan>)
#define GR_REGISTER_SCANS(T)                   \
  GR_REGISTER_SCAN("Cumsum", T, ScanSum);      \
  GR_REGISTER_SCAN("Cumprod", T, ScanProduct)

GR_REGISTER_SCANS(float);
GR_REGISTER_SCANS(double);
GR_REGISTER_SCANS(int32_t);
GR_REGISTER_SCANS(int64_t);

#undef GR_REGISTER_SCANS
#undef GR_REGISTER_SCAN

}  // namespace
}  // namespace sdk
}  // namespace graphrt
