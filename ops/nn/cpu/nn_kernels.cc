// CPU kernels of the nn family's element-wise and row-wise ops: BiasAdd,
// BiasAddGrad, the activations (Relu, Relu6, Elu, Selu, LeakyRelu, Softplus,
// Softsign, Sigmoid) and their gradients (+ SigmoidGrad, TanhGrad), Softmax and
// LogSoftmax. Eigen-vectorized rows, outputs written in place of a dying
// input when nobody else holds it, big tensors split over the session's
// pool.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/cwise_grad.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;


template <typename T>
using Arr = EigenArr<T>;
template <typename T>
using VecMap = EigenVecMap<T>;
template <typename T>
using ConstVecMap = EigenConstVecMap<T>;

// Output 0 shaped like input 0, in place when possible. False on failure
// (the core has recorded the error).
bool SameShapeOutput(OpKernelContext* ctx, const TensorView& in, TensorView* out) {
  return ctx->forward_input_or_allocate_output(0, 0, in.dims_data(), in.rank(), out).ok();
}

// ----------------------------------------------------------- activations

// Each functor: kCost (rough ns per element), a constructor from the
// kernel's construction (attrs), and Run(out, x) on one contiguous chunk.
// `out` may alias `x` (in-place): every expression is element-wise.

struct ReluFn {
  static constexpr int64_t kCost = 1;
  explicit ReluFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    o = x.max(T(0));
  }
};

struct Relu6Fn {
  static constexpr int64_t kCost = 1;
  explicit Relu6Fn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    o = x.max(T(0)).min(T(6));
  }
};

struct SigmoidFn {
  static constexpr int64_t kCost = 8;
  explicit SigmoidFn(OpKernelConstruction*) {}
  // 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving 0.
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    o = (T(1) + (-x).exp()).inverse();
  }
};

struct EluFn {
  static constexpr int64_t kCost = 8;
  explicit EluFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    o = (x < T(0)).select(x.exp() - T(1), x);
  }
};

// SELU's constants (Klambauer et al. 2017), as TensorFlow uses them.
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

struct SeluFn {
  static constexpr int64_t kCost = 8;
  explicit SeluFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    const T scale(kSeluScale), scale_alpha(kSeluScale * kSeluAlpha);
    o = (x < T(0)).select(scale_alpha * (x.exp() - T(1)), scale * x);
  }
};

// Reads the float attr `alpha` (LeakyRelu and its gradient).
float ReadAlpha(OpKernelConstruction* c) {
  float alpha = 0.2f;
  Status s = c->GetAttr("alpha", &alpha);
  if (!s.ok()) c->CtxFailure(s);
  return alpha;
}

struct LeakyReluFn {
  static constexpr int64_t kCost = 1;
  explicit LeakyReluFn(OpKernelConstruction* c) : alpha(ReadAlpha(c)) {}
  float alpha;
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    o = (x > T(0)).select(x, x * static_cast<T>(alpha));
  }
};

// log(1 + e^x) without overflow or loss of precision: x itself where e^x
// dwarfs 1, e^x where 1 dwarfs it, log1p(e^x) in between.
struct SoftplusFn {
  static constexpr int64_t kCost = 12;
  explicit SoftplusFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    const T threshold = std::log(std::numeric_limits<T>::epsilon()) + T(2);
    o = (x > -threshold).select(x, (x < threshold).select(x.exp(), x.exp().log1p()));
  }
};

struct SoftsignFn {
  static constexpr int64_t kCost = 3;
  explicit SoftsignFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& x) const {
    o = x / (x.abs() + T(1));
  }
};

template <typename T, typename F>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c), f_(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    TensorView out;
    if (!SameShapeOutput(ctx, x, &out)) return;
    const int64_t n = x.NumElements();
    if (n == 0) return;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const F& f = f_;
    ForRange(ctx, n, n, F::kCost, [=, &f](int64_t b, int64_t e) {
      f.template Run<T>(VecMap<T>(op + b, e - b), ConstVecMap<T>(xp + b, e - b));
    });
  }

 private:
  const F f_;
};

// ------------------------------------------------------------ gradients

// Binary element-wise gradients out = f(a, b) over inputs 0 and 1
// (common/cpu/cwise_grad.h). Each functor also says which input the output
// may reuse and how a shape mismatch is reported.

using cwise::BinaryGradOp;
using cwise::CwiseGrad;
using cwise::ReluFamilyGrad;

struct ReluGradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 1;
  explicit ReluGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& f) const {
    // A product, not a select, as TensorFlow: a NaN gradient stays NaN.
    o = g * (f > T(0)).template cast<T>();
  }
};

struct Relu6GradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 1;
  explicit Relu6GradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& f) const {
    o = g * (f > T(0) && f < T(6)).template cast<T>();
  }
};

// In terms of the Elu's outputs y: dy/dx = y + 1 where y < 0.
struct EluGradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 2;
  explicit EluGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& y) const {
    o = (y < T(0)).select(g * (y + T(1)), g);
  }
};

// In terms of the Selu's outputs y: dy/dx = y + scale * alpha where y < 0,
// scale elsewhere.
struct SeluGradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 2;
  explicit SeluGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& y) const {
    const T scale(kSeluScale), scale_alpha(kSeluScale * kSeluAlpha);
    o = (y < T(0)).select(g * (y + scale_alpha), g * scale);
  }
};

struct LeakyReluGradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 1;
  explicit LeakyReluGradFn(OpKernelConstruction* c) : alpha(ReadAlpha(c)) {}
  float alpha;
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& f) const {
    o = (f > T(0)).select(g, g * static_cast<T>(alpha));
  }
};

// d softplus(x)/dx = sigmoid(x).
struct SoftplusGradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 10;
  explicit SoftplusGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& f) const {
    o = g / ((-f).exp() + T(1));
  }
};

// d softsign(x)/dx = 1 / (1 + |x|)^2.
struct SoftsignGradFn : ReluFamilyGrad {
  static constexpr int64_t kCost = 3;
  explicit SoftsignGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& g, const ConstVecMap<T>& f) const {
    o = g / (f.abs() + T(1)).square();
  }
};

// SigmoidGrad and TanhGrad are TensorFlow cwise ops: inputs (y, dy).
struct SigmoidGradFn : CwiseGrad {
  static constexpr int64_t kCost = 2;
  explicit SigmoidGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& y, const ConstVecMap<T>& dy) const {
    o = dy * y * (T(1) - y);
  }
};

struct TanhGradFn : CwiseGrad {
  static constexpr int64_t kCost = 2;
  explicit TanhGradFn(OpKernelConstruction*) {}
  template <typename T>
  void Run(VecMap<T> o, const ConstVecMap<T>& y, const ConstVecMap<T>& dy) const {
    o = dy * (T(1) - y * y);
  }
};

// --------------------------------------------------------------- Softmax

// Eigen rows, not oneDNN: bench/nn_bench.cc (2-vCPU AMD EPYC Zen 4, shared;
// one run, interleaved, medians of 5; `build/bin/graphrt_bench_nn
// --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
// --benchmark_min_time=0.2`) timed this kernel through a session against
// oneDNN 2.6's softmax_forward / logsoftmax_forward (jit:avx512_core) called
// directly, split over threads by us / on its own OpenMP threads. Ratios
// graphrt / oneDNN, 1 thread:
//   Softmax    [64,10] 1.18 / 1.01 (2.7 us vs 2.3-2.7 us, a Run's overhead)
//              [256,1000] 0.60 / 0.64, [32,32000] 0.56 / 0.55
//   LogSoftmax [64,10] 0.84 / 0.73, [256,1000] 0.69 / 0.64,
//              [32,32000] 0.63 / 0.63
// On 2 threads the session took at most 0.98 of either oneDNN variant (the
// OpenMP barriers suffer most from the shared cores). Ours is faster where
// it matters, so no oneDNN path.
template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    OP_REQUIRES(
        ctx, x.rank() >= 1,
        errors::InvalidArgument("logits must have >= 1 dimension, got ", sf::ShapeString(x)));
    TensorView out;
    if (!SameShapeOutput(ctx, x, &out)) return;
    const int64_t total = x.NumElements();
    if (total == 0) return;
    const int64_t cols = x.dim(x.rank() - 1);
    const int64_t rows = total / cols;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    ForRange(ctx, rows, total, cols * 10, [=](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        ConstVecMap<T> in(xp + r * cols, cols);
        VecMap<T> o(op + r * cols, cols);
        // Subtracting the row max keeps exp() from overflowing; the result
        // is the same mathematically.
        const T m = in.maxCoeff();
        if constexpr (kLog) {
          o = in - m;  // safe in place: element-wise
          const T log_sum = std::log(o.exp().sum());
          o -= log_sum;
        } else {
          o = (in - m).exp();  // safe in place: element-wise
          o *= T(1) / o.sum();
        }
      }
    });
  }
};

// --------------------------------------------------------------- BiasAdd

// BiasAdd's and BiasAddGrad's data_format: NHWC (the default) or NCHW.
Status ReadBiasFormat(OpKernelConstruction* c, bool* nchw) {
  std::string format = "NHWC";
  if (c->HasAttr("data_format")) GR_RETURN_IF_ERROR_SDK(c->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW") return errors::InvalidArgument("Invalid data format: ", format);
  *nchw = format == "NCHW";
  return Status();
}

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadBiasFormat(c, &nchw_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView value = ctx->input(0);
    const TensorView bias = ctx->input(1);
    OP_REQUIRES(
        ctx, value.rank() >= 2,
        errors::InvalidArgument("Input tensor must be at least 2D: ", sf::ShapeString(value)));
    OP_REQUIRES(ctx, bias.rank() == 1,
                errors::InvalidArgument("Biases must be 1D: ", sf::ShapeString(bias)));
    const int channel_dim = nchw_ ? 1 : value.rank() - 1;
    const int64_t channels = value.dim(channel_dim);
    OP_REQUIRES(
        ctx, bias.dim(0) == channels,
        errors::InvalidArgument("Must provide as many biases as the ", nchw_ ? "channel" : "last",
                                " dimension of the input tensor: ", sf::ShapeString(bias), " vs. ",
                                sf::ShapeString(value)));
    TensorView out;
    if (!SameShapeOutput(ctx, value, &out)) return;
    const int64_t total = value.NumElements();
    if (total == 0) return;
    const T* vp = value.data<T>();
    const T* bp = bias.data<T>();
    T* op = out.data<T>();

    if (!nchw_) {
      // Rows of `channels` elements, each plus the whole bias vector.
      const int64_t rows = total / channels;
      ForRange(ctx, rows, total, channels, [=](int64_t b, int64_t e) {
        const ConstVecMap<T> bv(bp, channels);
        for (int64_t r = b; r < e; ++r) {
          VecMap<T>(op + r * channels, channels) = ConstVecMap<T>(vp + r * channels, channels) + bv;
        }
      });
      return;
    }
    // NCHW: rows of `inner` (= H*W*...) elements, each plus one bias value;
    // row r belongs to channel r % channels.
    const int64_t inner = total / (value.dim(0) * channels);
    const int64_t rows = total / inner;
    ForRange(ctx, rows, total, inner, [=](int64_t b, int64_t e) {
      int64_t ch = b % channels;
      for (int64_t r = b; r < e; ++r) {
        VecMap<T>(op + r * inner, inner) = ConstVecMap<T>(vp + r * inner, inner) + bp[ch];
        if (++ch == channels) ch = 0;
      }
    });
  }

 private:
  bool nchw_ = false;
};

// ----------------------------------------------------------- BiasAddGrad

// The sum of out_backprop over every dim but the channel one. The sum is
// split into a fixed number of blocks whatever the pool does, so results do
// not depend on scheduling.
template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadBiasFormat(c, &nchw_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView g = ctx->input(0);
    OP_REQUIRES(ctx, g.rank() >= 2,
                errors::InvalidArgument("Input tensor must be at least 2D: ", sf::ShapeString(g)));
    const int channel_dim = nchw_ ? 1 : g.rank() - 1;
    const int64_t channels = g.dim(channel_dim);
    TensorView out;
    if (!ctx->allocate_output(0, &channels, 1, &out).ok()) return;
    T* op = out.data<T>();
    std::fill(op, op + channels, T(0));
    const int64_t total = g.NumElements();
    if (total == 0) return;
    const T* gp = g.data<T>();

    if (nchw_) {
      // Rows of `inner` elements; row r = (n, c) belongs to channel r % C.
      // Split over channels: each output element has one writer.
      const int64_t batch = g.dim(0);
      const int64_t inner = total / (batch * channels);
      ForRange(ctx, channels, total, batch * inner, [=](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          T acc = T(0);
          for (int64_t n = 0; n < batch; ++n)
            acc += ConstVecMap<T>(gp + (n * channels + c) * inner, inner).sum();
          op[c] = acc;
        }
      });
      return;
    }
    // NHWC: rows of `channels` elements, summed into per-block partial
    // vectors, then the partials in block order.
    const int64_t rows = total / channels;
    const int64_t blocks =
        total < kParallelMinElements ? 1 : std::min<int64_t>(rows, 4 * std::max(1, ctx->num_threads()));
    const int64_t rows_per_block = (rows + blocks - 1) / blocks;
    if (blocks == 1) {
      SumRows(gp, rows, channels, op);
      return;
    }
    std::vector<T> partial(static_cast<size_t>(blocks * channels), T(0));
    T* pp = partial.data();
    ctx->parallel_for(blocks, rows_per_block * channels, [=](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t r0 = blk * rows_per_block, r1 = std::min(rows, r0 + rows_per_block);
        if (r1 > r0) SumRows(gp + r0 * channels, r1 - r0, channels, pp + blk * channels);
      }
    });
    VecMap<T> acc(op, channels);
    for (int64_t blk = 0; blk < blocks; ++blk) acc += ConstVecMap<T>(pp + blk * channels, channels);
  }

  // sum[c] += the sum of g[r * C + c] over rows r. Few channels make short
  // rows, where a loop per row costs more than the adds: then whole periods
  // of `period` elements (a multiple of C and of 8) are added into a
  // period-long vector first, which is folded into C sums at the end
  // (LeNet's first bias gradient, C = 6: 0.25 -> 0.03 ms).
  static void SumRows(const T* g, int64_t rows, int64_t C, T* sum) {
    constexpr int64_t kMinPeriod = 64;
    int64_t r = 0;
    if (C < kMinPeriod) {
      int64_t period = C * 8 / std::gcd<int64_t>(C, 8);  // lcm(C, 8)
      while (period < kMinPeriod) period *= 2;
      const int64_t rows_per_period = period / C;
      const int64_t periods = rows / rows_per_period;
      if (periods > 1) {
        T wide[2 * kMinPeriod * 8];  // period < 2 * kMinPeriod * 8 for C < 64
        VecMap<T> acc(wide, period);
        acc.setZero();
        for (int64_t i = 0; i < periods; ++i) acc += ConstVecMap<T>(g + i * period, period);
        for (int64_t k = 0; k < rows_per_period; ++k) VecMap<T>(sum, C) += ConstVecMap<T>(wide + k * C, C);
        r = periods * rows_per_period;
      }
    }
    VecMap<T> acc(sum, C);
    for (; r < rows; ++r) acc += ConstVecMap<T>(g + r * C, C);
  }

 private:
  bool nchw_ = false;
};

}  // namespace

#define GR_REGISTER_NN(OP, T, ...) \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), __VA_ARGS__)

// Element-wise and row-wise kernels split big inputs over the pool
// themselves, so running them inline costs nothing.
#define GR_REGISTER_NN_FLOATS(OP, KERNEL, FN) \
  GR_REGISTER_NN(OP, float, KERNEL<float, FN>); \
  GR_REGISTER_NN(OP, double, KERNEL<double, FN>)
#define GR_REGISTER_NN_REALS(OP, KERNEL, FN) \
  GR_REGISTER_NN_FLOATS(OP, KERNEL, FN);     \
  GR_REGISTER_NN(OP, int32_t, KERNEL<int32_t, FN>); \
  GR_REGISTER_NN(OP, int64_t, KERNEL<int64_t, FN>)

GR_REGISTER_NN_REALS("Relu", UnaryOp, ReluFn);
GR_REGISTER_NN_REALS("Relu6", UnaryOp, Relu6Fn);
GR_REGISTER_NN_FLOATS("Sigmoid", UnaryOp, SigmoidFn);
GR_REGISTER_NN_FLOATS("Elu", UnaryOp, EluFn);
GR_REGISTER_NN_FLOATS("Selu", UnaryOp, SeluFn);
GR_REGISTER_NN_FLOATS("LeakyRelu", UnaryOp, LeakyReluFn);
GR_REGISTER_NN_FLOATS("Softplus", UnaryOp, SoftplusFn);
GR_REGISTER_NN_FLOATS("Softsign", UnaryOp, SoftsignFn);

GR_REGISTER_NN_REALS("ReluGrad", BinaryGradOp, ReluGradFn);
GR_REGISTER_NN_REALS("Relu6Grad", BinaryGradOp, Relu6GradFn);
GR_REGISTER_NN_FLOATS("EluGrad", BinaryGradOp, EluGradFn);
GR_REGISTER_NN_FLOATS("SeluGrad", BinaryGradOp, SeluGradFn);
GR_REGISTER_NN_FLOATS("LeakyReluGrad", BinaryGradOp, LeakyReluGradFn);
GR_REGISTER_NN_FLOATS("SoftplusGrad", BinaryGradOp, SoftplusGradFn);
GR_REGISTER_NN_FLOATS("SoftsignGrad", BinaryGradOp, SoftsignGradFn);
GR_REGISTER_NN_FLOATS("SigmoidGrad", BinaryGradOp, SigmoidGradFn);
GR_REGISTER_NN_FLOATS("TanhGrad", BinaryGradOp, TanhGradFn);

GR_REGISTER_NN("BiasAdd", float, BiasAddOp<float>);
GR_REGISTER_NN("BiasAdd", double, BiasAddOp<double>);
GR_REGISTER_NN("BiasAdd", int32_t, BiasAddOp<int32_t>);
GR_REGISTER_NN("BiasAdd", int64_t, BiasAddOp<int64_t>);
GR_REGISTER_NN("BiasAddGrad", float, BiasAddGradOp<float>);
GR_REGISTER_NN("BiasAddGrad", double, BiasAddGradOp<double>);
GR_REGISTER_NN("BiasAddGrad", int32_t, BiasAddGradOp<int32_t>);
GR_REGISTER_NN("BiasAddGrad", int64_t, BiasAddGradOp<int64_t>);
GR_REGISTER_NN("Softmax", float, SoftmaxOp<float, false>);
GR_REGISTER_NN("Softmax", double, SoftmaxOp<double, false>);
GR_REGISTER_NN("LogSoftmax", float, SoftmaxOp<float, true>);
GR_REGISTER_NN("LogSoftmax", double, SoftmaxOp<double, true>);

#undef GR_REGISTER_NN_REALS
#undef GR_REGISTER_NN_FLOATS
#undef GR_REGISTER_NN

}  // namespace sdk
}  // namespace graphrt
