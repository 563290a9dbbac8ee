// CPU kernels of the nn family: BiasAdd, Relu, Sigmoid, Softmax.
// All are element-wise or row-wise: Eigen-vectorized rows, outputs written
// in place of the input when nobody else holds it, big tensors split over
// the session's pool.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

#include <cstdint>
#include <string>
#include <utility>

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

struct ReluFn {
  static constexpr int64_t kCost = 1;
  template <typename T>
  static void Run(VecMap<T> o, const ConstVecMap<T>& x) {
    o = x.max(T(0));
  }
};

struct SigmoidFn {
  static constexpr int64_t kCost = 8;
  // 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving 0.
  template <typename T>
  static void Run(VecMap<T> o, const ConstVecMap<T>& x) {
    o = (T(1) + (-x).exp()).inverse();
  }
};

template <typename T, typename F>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    TensorView out;
    if (!SameShapeOutput(ctx, x, &out)) return;
    const int64_t n = x.NumElements();
    if (n == 0) return;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    ForRange(ctx, n, n, F::kCost, [=](int64_t b, int64_t e) {
      F::template Run<T>(VecMap<T>(op + b, e - b), ConstVecMap<T>(xp + b, e - b));
    });
  }
};

// --------------------------------------------------------------- Softmax

template <typename T>
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
        o = (in - m).exp();  // safe in place: element-wise
        o *= T(1) / o.sum();
      }
    });
  }
};

// --------------------------------------------------------------- BiasAdd

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format = "NHWC";
    if (c->HasAttr("data_format")) {
      Status s = c->GetAttr("data_format", &format);
      if (!s.ok()) {
        c->CtxFailure(s);
        return;
      }
    }
    if (format == "NCHW") {
      nchw_ = true;
    } else if (format != "NHWC") {
      c->CtxFailure(errors::InvalidArgument("Invalid data format: ", format));
    }
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

}  // namespace

#define GR_REGISTER_NN(OP, T, ...) \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), __VA_ARGS__)

GR_REGISTER_NN("Relu", float, UnaryOp<float, ReluFn>);
GR_REGISTER_NN("Relu", double, UnaryOp<double, ReluFn>);
GR_REGISTER_NN("Relu", int32_t, UnaryOp<int32_t, ReluFn>);
GR_REGISTER_NN("Relu", int64_t, UnaryOp<int64_t, ReluFn>);
GR_REGISTER_NN("Sigmoid", float, UnaryOp<float, SigmoidFn>);
GR_REGISTER_NN("Sigmoid", double, UnaryOp<double, SigmoidFn>);
GR_REGISTER_NN("BiasAdd", float, BiasAddOp<float>);
GR_REGISTER_NN("BiasAdd", double, BiasAddOp<double>);
GR_REGISTER_NN("BiasAdd", int32_t, BiasAddOp<int32_t>);
GR_REGISTER_NN("BiasAdd", int64_t, BiasAddOp<int64_t>);
// Softmax is row-wise but, like the element-wise kernels, splits big
// inputs over the pool itself, so running it inline costs nothing.
GR_REGISTER_NN("Softmax", float, SoftmaxOp<float>);
GR_REGISTER_NN("Softmax", double, SoftmaxOp<double>);

#undef GR_REGISTER_NN

}  // namespace sdk
}  // namespace graphrt
