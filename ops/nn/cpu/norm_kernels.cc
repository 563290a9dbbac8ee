// CPU kernels of the normalisations: FusedBatchNorm (V1, V2, V3),
// FusedBatchNormGrad (V1, V2, V3), LRN and LRNGrad.
//
// Batch norm sees x as [outer, C, inner]: channels-last formats (NHWC,
// NDHWC) have inner = 1, channels-first ones (NCHW, NCDHW) outer = N. Per
// channel sums are accumulated in double, in a fixed block order, so the
// result does not depend on how the pool schedules the blocks; the
// element-wise passes are Eigen rows split over the pool.
//
// oneDNN or ours, as bench/nn_bench.cc decides (2-vCPU AMD EPYC (Zen 4,
// AVX-512), shared with other work; one run, interleaved, medians of 5;
// `build/bin/graphrt_bench_nn --benchmark_repetitions=5
// --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2`;
// ratio = graphrt session time / direct oneDNN 2.6 time, oneDNN split by us
// (1 OpenMP thread per call) / on its own OpenMP threads; float, eps 1e-3):
//
//   FusedBatchNormV3, 1 thread            inference       training
//     NHWC [8,112,112,64]                 1.03 / 0.96     1.16 / 1.21
//     NHWC [32,28,28,256]                 0.64 / 0.88     0.95 / 0.63
//     NCHW [8,64,112,112]                 0.22 / 0.25     0.92 / 1.00
//     NCHW [32,256,28,28]                 0.24 / 0.23     0.85 / 0.86
//
// oneDNN's plain-NCHW batch norm is not a jit kernel (ncsp_bnorm); in NHWC
// it is at best on par with the loops here in inference and mixed in
// training (an earlier run gave 1.06 / 0.95 and 0.52 / 0.55 for the two
// training shapes). On 2 threads training cannot be split by us (the
// statistics need the whole batch; a channel-block view makes oneDNN fall
// back to bnorm_ref, 40-70x slower) and oneDNN's own OpenMP team was 5-40x
// slower than our 2-thread session here. So batch norm (and its gradient,
// not measured) stays on the loops below: nothing clearly faster to gain,
// and our statistics are summed in double.
//
//   LRN [8,56,56,64] NHWC, 1 thread            ours      oneDNN      ratio
//     r 5, bias 1, alpha 1, beta 0.5 (TF)      3.8 ms    38 ms ref   0.10
//     r 2, bias 1, alpha 1e-4, beta 0.75       3.9 ms    0.80 ms jit 4.8
//     r 2, bias 2, alpha 1e-4, beta 0.75       4.0 ms    0.87 ms jit 4.6
//     r 5, bias 1, alpha 1e-4, beta 0.75       4.0 ms    0.95 ms jit 4.2
// (2 threads: the kernel's oneDNN path 0.85-0.94 ms vs its direct loops
// 4.1-4.3 ms.) oneDNN 2.6 has a jit LRN only for beta 0.75 and 1 (any window
// size); for other betas it runs a reference loop. So float LRN runs on
// oneDNN (rows split over the pool, primitives cached per kernel by shape)
// when oneDNN offers a jit kernel for the attrs and the radius is at most
// kMaxDnnlLrnRadius, and on the direct loops otherwise (TF's default beta
// 0.5 among them). Before this the direct loops took 15 ms on these shapes
// (a scalar pow per element); norm^-beta is now vectorised (LrnNegPow).
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

template <typename T>
using VecMap = EigenVecMap<T>;
template <typename T>
using ConstVecMap = EigenConstVecMap<T>;
using DVec = Eigen::Map<Eigen::ArrayXd>;
using ConstDVec = Eigen::Map<const Eigen::ArrayXd>;

struct ChannelLayout {
  int64_t outer = 0, channels = 0, inner = 1;
  int64_t size() const { return outer * channels * inner; }
};

// Per-channel sums: acc[c] = sum of the terms of channel c. With inner ==
// 1, last(a, r) adds row r's C terms into the double vector a; otherwise
// first(c, o) returns the sum of the terms of row (o, c) (inner elements).
template <typename Last, typename First>
void ReduceChannels(OpKernelContext* ctx, const ChannelLayout& l, double* acc, const Last& last,
                    const First& first) {
  const int64_t C = l.channels;
  std::fill(acc, acc + C, 0.0);
  if (l.size() == 0) return;
  if (l.inner == 1) {
    const int64_t rows = l.outer;
    const int64_t blocks =
        l.size() < kParallelMinElements ? 1 : std::min<int64_t>(rows, 4 * std::max(1, ctx->num_threads()));
    const int64_t per = (rows + blocks - 1) / blocks;
    std::vector<double> partial(static_cast<size_t>(blocks * C), 0.0);
    double* pp = partial.data();
    auto run = [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        DVec a(pp + blk * C, C);
        const int64_t r1 = std::min(rows, (blk + 1) * per);
        for (int64_t r = blk * per; r < r1; ++r) last(a, r);
      }
    };
    if (blocks == 1) {
      run(0, 1);
    } else {
      ctx->parallel_for(blocks, per * C * 2, run);
    }
    DVec out(acc, C);
    for (int64_t blk = 0; blk < blocks; ++blk) out += ConstDVec(pp + blk * C, C);
    return;
  }
  ForRange(ctx, C, l.size(), l.outer * l.inner * 2, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0;
      for (int64_t o = 0; o < l.outer; ++o) s += first(c, o);
      acc[c] = s;
    }
  });
}

// out = p[c] * a + q[c] * b + r[c] element-wise (b may be null: q unused).
template <typename T>
void ApplyChannels(OpKernelContext* ctx, const ChannelLayout& l, const T* a, const T* b,
                   const T* p, const T* q, const T* r, T* out) {
  const int64_t C = l.channels;
  if (l.size() == 0) return;
  if (l.inner == 1) {
    ForRange(ctx, l.outer, l.size(), C * 2, [=](int64_t lo, int64_t hi) {
      ConstVecMap<T> P(p, C), Q(q, C), R(r, C);
      for (int64_t row = lo; row < hi; ++row) {
        VecMap<T> o(out + row * C, C);
        if (b != nullptr) {
          o = ConstVecMap<T>(a + row * C, C) * P + ConstVecMap<T>(b + row * C, C) * Q + R;
        } else {
          o = ConstVecMap<T>(a + row * C, C) * P + R;
        }
      }
    });
    return;
  }
  const int64_t I = l.inner;
  ForRange(ctx, l.outer * C, l.size(), I * 2, [=](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t c = row % C;
      VecMap<T> o(out + row * I, I);
      if (b != nullptr) {
        o = ConstVecMap<T>(a + row * I, I) * p[c] + ConstVecMap<T>(b + row * I, I) * q[c] + r[c];
      } else {
        o = ConstVecMap<T>(a + row * I, I) * p[c] + r[c];
      }
    }
  });
}

// Reads data_format (NHWC, NCHW, NDHWC, NCDHW) into channels_first.
Status ReadBatchNormFormat(OpKernelConstruction* c, bool* channels_first) {
  std::string format = "NHWC";
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("data_format", &format));
  if (format == "NHWC" || format == "NDHWC") {
    *channels_first = false;
  } else if (format == "NCHW" || format == "NCDHW") {
    *channels_first = true;
  } else {
    return errors::InvalidArgument("Invalid data format: ", format);
  }
  return Status();
}

ChannelLayout LayoutOf(const TensorView& x, bool channels_first) {
  ChannelLayout l;
  const int r = x.rank();
  if (channels_first) {
    l.outer = x.dim(0);
    l.channels = x.dim(1);
    l.inner = 1;
    for (int i = 2; i < r; ++i) l.inner *= x.dim(i);
  } else {
    l.channels = x.dim(r - 1);
    l.outer = 1;
    for (int i = 0; i < r - 1; ++i) l.outer *= x.dim(i);
  }
  return l;
}

// -------------------------------------------------------- FusedBatchNorm

template <typename T, typename U>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("epsilon", &epsilon_);
    if (s.ok() && c->HasAttr("exponential_avg_factor")) s = c->GetAttr("exponential_avg_factor", &factor_);
    if (s.ok()) s = c->GetAttr("is_training", &is_training_);
    if (s.ok()) s = ReadBatchNormFormat(c, &channels_first_);
    has_reserve_3_ = c->num_outputs() == 6;
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const TensorView scale = ctx->input(1);
    const TensorView offset = ctx->input(2);
    const TensorView mean_in = ctx->input(3);
    const TensorView var_in = ctx->input(4);
    OP_REQUIRES(ctx, x.rank() == 4 || x.rank() == 5,
                errors::InvalidArgument("input must be 4 or 5-dimensional", sf::ShapeString(x)));
    OP_REQUIRES(ctx, scale.rank() == 1,
                errors::InvalidArgument("scale must be 1-dimensional", sf::ShapeString(scale)));
    OP_REQUIRES(ctx, offset.rank() == 1,
                errors::InvalidArgument("offset must be 1-dimensional", sf::ShapeString(offset)));
    OP_REQUIRES(ctx, mean_in.rank() == 1,
                errors::InvalidArgument("estimated_mean must be 1-dimensional",
                                        sf::ShapeString(mean_in)));
    OP_REQUIRES(ctx, var_in.rank() == 1,
                errors::InvalidArgument("estimated_variance must be 1-dimensional",
                                        sf::ShapeString(var_in)));
    const ChannelLayout l = LayoutOf(x, channels_first_);
    const int64_t C = l.channels;
    OP_REQUIRES(ctx, scale.NumElements() == C,
                errors::InvalidArgument(
                    "scale must have the same number of elements as the channels of x, got ",
                    scale.NumElements(), " and ", C));
    OP_REQUIRES(ctx, offset.NumElements() == C,
                errors::InvalidArgument(
                    "offset must have the same number of elements as the channels of x, got ",
                    offset.NumElements(), " and ", C));
    const bool blend = is_training_ && factor_ != 1.0f;
    if (!is_training_ || blend) {
      const char* prefix = is_training_ ? "When exponential_avg_factor != 1" : "When is_training=false";
      OP_REQUIRES(ctx, mean_in.NumElements() == C,
                  errors::InvalidArgument(prefix,
                                          ", mean must have the same number of elements as the "
                                          "channels of x, got ",
                                          mean_in.NumElements(), " and ", C));
      OP_REQUIRES(ctx, var_in.NumElements() == C,
                  errors::InvalidArgument(prefix,
                                          ", variance must have the same number of elements as "
                                          "the channels of x, got ",
                                          var_in.NumElements(), " and ", C));
    }

    TensorView y, batch_mean, batch_var, saved_mean, saved_var;
    if (!ctx->forward_input_or_allocate_output(0, 0, x.dims_data(), x.rank(), &y).ok()) return;
    if (!ctx->allocate_output(1, &C, 1, &batch_mean).ok()) return;
    if (!ctx->allocate_output(2, &C, 1, &batch_var).ok()) return;
    if (!ctx->allocate_output(3, &C, 1, &saved_mean).ok()) return;
    if (!ctx->allocate_output(4, &C, 1, &saved_var).ok()) return;
    if (has_reserve_3_) {
      TensorView reserve;
      if (!ctx->allocate_output(5, nullptr, 0, &reserve).ok()) return;
      *reserve.data<U>() = U(0);
    }
    U* bm = batch_mean.data<U>();
    U* bv = batch_var.data<U>();
    U* sm = saved_mean.data<U>();
    U* sv = saved_var.data<U>();
    if (l.size() == 0) {
      // TensorFlow's answer for an empty batch: NaN statistics.
      const U nan = std::numeric_limits<U>::quiet_NaN();
      std::fill(bm, bm + C, nan);
      std::fill(bv, bv + C, nan);
      std::fill(sm, sm + C, nan);
      std::fill(sv, sv + C, nan);
      return;
    }
    const T* xp = x.data<T>();
    const U* sp = scale.data<U>();
    const U* op = offset.data<U>();
    std::vector<double> mean(static_cast<size_t>(C)), var(static_cast<size_t>(C));
    if (is_training_) {
      BatchMoments(ctx, l, xp, mean.data(), var.data());
    } else {
      const U* mi = mean_in.data<U>();
      const U* vi = var_in.data<U>();
      for (int64_t c = 0; c < C; ++c) {
        mean[c] = mi[c];
        var[c] = vi[c];
      }
    }
    // y = x * a + b with a = scale / sqrt(var + eps), b = offset - mean * a.
    std::vector<T> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      const double inv = 1.0 / std::sqrt(var[c] + static_cast<double>(epsilon_));
      a[c] = static_cast<T>(sp[c] * inv);
      b[c] = static_cast<T>(op[c] - mean[c] * sp[c] * inv);
    }
    ApplyChannels<T>(ctx, l, xp, nullptr, a.data(), nullptr, b.data(), y.data<T>());

    if (!is_training_) {
      std::copy(mean_in.data<U>(), mean_in.data<U>() + C, bm);
      std::copy(var_in.data<U>(), var_in.data<U>() + C, bv);
      std::copy(mean_in.data<U>(), mean_in.data<U>() + C, sm);
      std::copy(var_in.data<U>(), var_in.data<U>() + C, sv);
      return;
    }
    // The running variance is Bessel-corrected; normalisation and the
    // saved variance use the biased one.
    const double n = static_cast<double>(l.outer * l.inner);
    const double bessel = n > 1 ? n / (n - 1) : 1.0;
    const double f = factor_;
    for (int64_t c = 0; c < C; ++c) {
      sm[c] = static_cast<U>(mean[c]);
      sv[c] = static_cast<U>(var[c]);
      if (blend) {
        bm[c] = static_cast<U>((1 - f) * mean_in.data<U>()[c] + f * mean[c]);
        bv[c] = static_cast<U>((1 - f) * var_in.data<U>()[c] + f * bessel * var[c]);
      } else {
        bm[c] = static_cast<U>(mean[c]);
        bv[c] = static_cast<U>(bessel * var[c]);
      }
    }
  }

 private:
  // Biased per-channel mean and variance (two passes).
  static void BatchMoments(OpKernelContext* ctx, const ChannelLayout& l, const T* x, double* mean,
                           double* var) {
    const int64_t C = l.channels, I = l.inner;
    const double inv_n = 1.0 / static_cast<double>(l.outer * l.inner);
    ReduceChannels(
        ctx, l, mean,
        [&](DVec& a, int64_t r) { a += ConstVecMap<T>(x + r * C, C).template cast<double>(); },
        [&](int64_t c, int64_t o) {
          return ConstVecMap<T>(x + (o * C + c) * I, I).template cast<double>().sum();
        });
    for (int64_t c = 0; c < C; ++c) mean[c] *= inv_n;
    const double* m = mean;
    ReduceChannels(
        ctx, l, var,
        [&](DVec& a, int64_t r) {
          a += (ConstVecMap<T>(x + r * C, C).template cast<double>() - ConstDVec(m, C)).square();
        },
        [&](int64_t c, int64_t o) {
          return (ConstVecMap<T>(x + (o * C + c) * I, I).template cast<double>() - m[c])
              .square()
              .sum();
        });
    for (int64_t c = 0; c < C; ++c) var[c] *= inv_n;
  }

  float epsilon_ = 1e-4f;
  float factor_ = 1.0f;
  bool is_training_ = true;
  bool channels_first_ = false;
  bool has_reserve_3_ = false;
};

// ---------------------------------------------------- FusedBatchNormGrad

template <typename T, typename U>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("epsilon", &epsilon_);
    if (s.ok()) s = c->GetAttr("is_training", &is_training_);
    if (s.ok()) s = ReadBatchNormFormat(c, &channels_first_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView dy = ctx->input(0);
    const TensorView x = ctx->input(1);
    const TensorView scale = ctx->input(2);
    const TensorView mean_in = ctx->input(3);  // batch mean, or population mean
    const TensorView var_in = ctx->input(4);   // batch variance, or population one
    OP_REQUIRES(ctx, dy.rank() == 4 || dy.rank() == 5,
                errors::InvalidArgument("input must be 4 or 5-dimensional", sf::ShapeString(dy)));
    OP_REQUIRES(ctx, x.rank() == 4 || x.rank() == 5,
                errors::InvalidArgument("input must be 4 or 5-dimensional", sf::ShapeString(x)));
    OP_REQUIRES(ctx, scale.rank() == 1,
                errors::InvalidArgument("scale must be 1-dimensional", sf::ShapeString(scale)));
    OP_REQUIRES(ctx, mean_in.rank() == 1,
                errors::InvalidArgument("saved mean must be 1-dimensional", sf::ShapeString(mean_in)));
    OP_REQUIRES(ctx, var_in.rank() == 1,
                errors::InvalidArgument("saved variance must be 1-dimensional",
                                        sf::ShapeString(var_in)));
    OP_REQUIRES(ctx, x.dims() == dy.dims(),
                errors::InvalidArgument("x and y_backprop must have same shape, but x has shape ",
                                        sf::ShapeString(x), " and y_backprop has shape ",
                                        sf::ShapeString(dy)));
    const ChannelLayout l = LayoutOf(x, channels_first_);
    const int64_t C = l.channels;
    OP_REQUIRES(ctx, scale.NumElements() == C,
                errors::InvalidArgument(
                    "scale must have the same number of elements as the channels of x, got ",
                    scale.NumElements(), " and ", C));
    OP_REQUIRES(ctx, mean_in.NumElements() == C,
                errors::InvalidArgument("reserve_space_1 must have the same number of elements as "
                                        "the channels of x, got ",
                                        mean_in.NumElements(), " and ", C));
    OP_REQUIRES(ctx, var_in.NumElements() == C,
                errors::InvalidArgument("reserve_space_2 must have the same number of elements as "
                                        "the channels of x, got ",
                                        var_in.NumElements(), " and ", C));

    TensorView dx, dscale, doffset, r4, r5;
    if (!ctx->forward_input_or_allocate_output(0, 0, x.dims_data(), x.rank(), &dx).ok()) return;
    if (!ctx->allocate_output(1, &C, 1, &dscale).ok()) return;
    if (!ctx->allocate_output(2, &C, 1, &doffset).ok()) return;
    const int64_t zero = 0;
    if (!ctx->allocate_output(3, &zero, 1, &r4).ok()) return;
    if (!ctx->allocate_output(4, &zero, 1, &r5).ok()) return;
    U* ds = dscale.data<U>();
    U* dof = doffset.data<U>();
    if (l.size() == 0) {
      std::fill(ds, ds + C, U(0));
      std::fill(dof, dof + C, U(0));
      return;
    }
    const T* dyp = dy.data<T>();
    const T* xp = x.data<T>();
    const U* sp = scale.data<U>();
    const U* mp = mean_in.data<U>();
    const U* vp = var_in.data<U>();
    const int64_t I = l.inner;
    std::vector<double> mean(static_cast<size_t>(C)), sum_dy(static_cast<size_t>(C)),
        sum_dy_xc(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) mean[c] = mp[c];
    const double* m = mean.data();
    ReduceChannels(
        ctx, l, sum_dy.data(),
        [&](DVec& a, int64_t r) { a += ConstVecMap<T>(dyp + r * C, C).template cast<double>(); },
        [&](int64_t c, int64_t o) {
          return ConstVecMap<T>(dyp + (o * C + c) * I, I).template cast<double>().sum();
        });
    ReduceChannels(
        ctx, l, sum_dy_xc.data(),
        [&](DVec& a, int64_t r) {
          a += ConstVecMap<T>(dyp + r * C, C).template cast<double>() *
               (ConstVecMap<T>(xp + r * C, C).template cast<double>() - ConstDVec(m, C));
        },
        [&](int64_t c, int64_t o) {
          return (ConstVecMap<T>(dyp + (o * C + c) * I, I).template cast<double>() *
                  (ConstVecMap<T>(xp + (o * C + c) * I, I).template cast<double>() - m[c]))
              .sum();
        });
    // dx = p * dy + q * x + r per channel.
    const double n = static_cast<double>(l.outer * l.inner);
    std::vector<T> p(static_cast<size_t>(C)), q(static_cast<size_t>(C)), r(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      const double inv = 1.0 / std::sqrt(static_cast<double>(vp[c]) + epsilon_);
      const double k = sp[c] * inv;
      dof[c] = static_cast<U>(sum_dy[c]);
      ds[c] = static_cast<U>(sum_dy_xc[c] * inv);
      if (is_training_) {
        // k * (dy - mean(dy) - (x - mean) * inv^2 * mean(dy * (x - mean)))
        const double coef = inv * inv * sum_dy_xc[c] / n;
        p[c] = static_cast<T>(k);
        q[c] = static_cast<T>(-k * coef);
        r[c] = static_cast<T>(k * (-sum_dy[c] / n + m[c] * coef));
      } else {
        p[c] = static_cast<T>(k);
        q[c] = T(0);
        r[c] = T(0);
      }
    }
    ApplyChannels<T>(ctx, l, dyp, xp, p.data(), q.data(), r.data(), dx.data<T>());
  }

 private:
  float epsilon_ = 1e-4f;
  bool is_training_ = true;
  bool channels_first_ = false;
};

// ------------------------------------------------------------------- LRN

struct LrnAttrs {
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;
  Status Read(OpKernelConstruction* c) {
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("depth_radius", &radius));
    if (radius < 0 || radius >= std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument("depth_radius = ", radius, " is not in [0, 2^31 - 1)");
    }
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("bias", &bias));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("alpha", &alpha));
    return c->GetAttr("beta", &beta);
  }
};

// norm[d] = bias + alpha * sum of x[j]^2 for |j - d| <= radius, over one
// row of `depth` values (a running window sum in double).
template <typename T>
void LrnNorms(const LrnAttrs& a, const T* x, int64_t depth, T* norm) {
  double window = 0;
  const int64_t r = a.radius;
  for (int64_t j = 0; j < std::min(depth, r); ++j) window += double(x[j]) * x[j];
  for (int64_t d = 0; d < depth; ++d) {
    if (d + r < depth) window += double(x[d + r]) * x[d + r];
    if (d - r - 1 >= 0) window -= double(x[d - r - 1]) * x[d - r - 1];
    norm[d] = static_cast<T>(a.bias + a.alpha * std::max(window, 0.0));
  }
}

// norm[d] = norm[d]^-beta over one row, vectorised: TF's exponents
// (0.5, 0.75, 1) by square roots and reciprocals, any other one as
// exp(-beta * log(norm)). Zero and negative norms give inf and NaN as pow.
template <typename T>
void LrnNegPow(const LrnAttrs& a, T* norm, int64_t depth) {
  VecMap<T> n(norm, depth);
  if (a.beta == 0.5f) {
    n = n.rsqrt();
  } else if (a.beta == 1.0f) {
    n = n.inverse();
  } else if (a.beta == 0.75f) {
    n = n.rsqrt();
    n = n * n.sqrt();
  } else if (a.beta == 0.0f) {
    n = T(1);
  } else {
    n = (n.log() * static_cast<T>(-a.beta)).exp();
  }
}

template <typename T>
T* LrnScratch(int64_t n) {
  thread_local std::vector<T> buf;
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

// ------------------------------------------------------- oneDNN LRN

// oneDNN's across-channel LRN is dst = src / (k + alpha' / n * sum)^beta
// with n = local_size, the sum over the n channels centred on d (clipped at
// the edges, still divided by n): TF's LRN with n = 2r + 1, alpha' = alpha *
// n, k = bias.
//
// The tensor is seen as rows of `depth` channels ([rows, depth, 1, 1],
// nhwc): every row is independent, so the rows are split over the session's
// pool, each part one single-threaded primitive call.
constexpr int64_t kMaxDnnlLrnRadius = 64;

struct DnnlLrn {
  dnnl::lrn_forward prim;
  dnnl::memory::desc md;
  bool jit = false;  // false: oneDNN's reference loop (slower than ours)
};

class DnnlLrnCache {
 public:
  // The primitive for `rows` rows of `depth`, or null if oneDNN has none.
  std::shared_ptr<DnnlLrn> Get(int64_t rows, int64_t depth, const LrnAttrs& a) {
    return cache_.GetOrCreate({rows, depth}, [&]() -> std::shared_ptr<DnnlLrn> {
      const int64_t n = 2 * a.radius + 1;
      try {
        SingleOmpThread one_thread;
        auto p = std::make_shared<DnnlLrn>();
        p->md = dnnl::memory::desc({rows, depth, 1, 1}, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::nhwc);
        dnnl::lrn_forward::desc d(dnnl::prop_kind::forward_inference,
                                  dnnl::algorithm::lrn_across_channels, p->md, n,
                                  static_cast<float>(double(a.alpha) * double(n)), a.beta, a.bias);
        dnnl::lrn_forward::primitive_desc pd(d, DnnlCpuEngine());
        p->jit = std::strncmp(pd.impl_info_str(), "lrn_ref", 7) != 0;
        p->prim = dnnl::lrn_forward(pd);
        return p;
      } catch (const dnnl::error&) {
        return nullptr;
      }
    });
  }

 private:
  ShapeKeyedCache<DnnlLrn> cache_;
};

// For benchmarks and tests: GRAPHRT_NN_NORM_IMPL=dnnl makes LRN use oneDNN
// even where it has only its reference loop, =direct never; read when the
// kernel is built. Unset: oneDNN where it has a jit kernel (header comment).
enum class NormImpl { kDefault, kDnnl, kDirect };
NormImpl NormImplFromEnv() {
  const char* v = std::getenv("GRAPHRT_NN_NORM_IMPL");
  if (v != nullptr && std::strcmp(v, "dnnl") == 0) return NormImpl::kDnnl;
  if (v != nullptr && std::strcmp(v, "direct") == 0) return NormImpl::kDirect;
  return NormImpl::kDefault;
}

// LRN through oneDNN, rows split over the pool. False when the rule says
// no or oneDNN cannot do it: the caller then runs the direct loops, which
// write all of `out`.
bool DnnlLrnForward(OpKernelContext* ctx, DnnlLrnCache* cache, NormImpl impl, const LrnAttrs& a,
                    int64_t rows, int64_t depth, const float* in, float* out) {
  // Windows wider than any real depth stay on the direct loops (oneDNN's
  // local_size and alpha * n must stay small).
  if (impl == NormImpl::kDirect || a.radius > kMaxDnnlLrnRadius) return false;
  const int64_t threads = rows * depth >= kParallelMinElements ? std::max(1, ctx->num_threads()) : 1;
  int64_t parts = std::min(rows, threads);
  const int64_t chunk = (rows + parts - 1) / parts;
  parts = (rows + chunk - 1) / chunk;
  const int64_t last = rows - (parts - 1) * chunk;
  std::shared_ptr<DnnlLrn> full = cache->Get(chunk, depth, a);
  std::shared_ptr<DnnlLrn> tail = last == chunk ? full : cache->Get(last, depth, a);
  if (!full || !tail) return false;
  if (impl == NormImpl::kDefault && !(full->jit && tail->jit)) return false;
  std::atomic<bool> ok{true};
  auto run = [&](int64_t b, int64_t e) {
    SingleOmpThread one_thread;
    for (int64_t part = b; part < e; ++part) {
      const DnnlLrn& p = part == parts - 1 ? *tail : *full;
      const int64_t r0 = part * chunk;
      try {
        dnnl::memory src(p.md, DnnlCpuEngine(), const_cast<float*>(in + r0 * depth));
        dnnl::memory dst(p.md, DnnlCpuEngine(), out + r0 * depth);
        dnnl::stream& s = DnnlThreadStream();
        p.prim.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        s.wait();
      } catch (const dnnl::error&) {
        ok.store(false, std::memory_order_relaxed);
      }
    }
  };
  if (parts == 1) {
    run(0, 1);
  } else {
    ctx->parallel_for(parts, chunk * depth * 2, run);
  }
  return ok.load();
}

template <typename T>
class LrnOp : public OpKernel {
 public:
  explicit LrnOp(OpKernelConstruction* c) : OpKernel(c), impl_(NormImplFromEnv()) {
    c->SetStatus(attrs_.Read(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    OP_REQUIRES(ctx, x.rank() == 4, errors::InvalidArgument("in must be 4-dimensional"));
    TensorView out;
    if (!ctx->allocate_output(0, x.dims_data(), 4, &out).ok()) return;
    const int64_t total = x.NumElements();
    if (total == 0) return;
    const int64_t depth = x.dim(3);
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const LrnAttrs a = attrs_;
    if constexpr (std::is_same_v<T, float>) {
      if (DnnlLrnForward(ctx, &dnnl_cache_, impl_, a, total / depth, depth, xp, op)) return;
    }
    ForRange(ctx, total / depth, total, depth * 20, [=](int64_t b, int64_t e) {
      T* norm = LrnScratch<T>(depth);
      for (int64_t row = b; row < e; ++row) {
        LrnNorms<T>(a, xp + row * depth, depth, norm);
        LrnNegPow<T>(a, norm, depth);
        VecMap<T>(op + row * depth, depth) =
            ConstVecMap<T>(xp + row * depth, depth) * ConstVecMap<T>(norm, depth);
      }
    });
  }

 private:
  LrnAttrs attrs_;
  const NormImpl impl_;
  DnnlLrnCache dnnl_cache_;
};

// With N_j the norm of position j and y_j = x_j N_j^-beta:
// dx_i = dy_i N_i^-beta - 2 alpha beta x_i sum_{|j-i|<=r} dy_j y_j / N_j.
template <typename T>
class LrnGradOp : public OpKernel {
 public:
  explicit LrnGradOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(attrs_.Read(c)); }

  void Compute(OpKernelContext* ctx) override {
    const TensorView dy = ctx->input(0);
    const TensorView x = ctx->input(1);
    const TensorView y = ctx->input(2);
    OP_REQUIRES(ctx, dy.rank() == 4 && x.rank() == 4 && y.rank() == 4,
                errors::InvalidArgument("inputs must be 4-dimensional"));
    OP_REQUIRES(ctx, dy.dims() == x.dims() && y.dims() == x.dims(),
                errors::InvalidArgument(
                    "input_grads, input_image, and out_image should have the same shape: ",
                    sf::ShapeString(dy), ", ", sf::ShapeString(x), ", ", sf::ShapeString(y)));
    TensorView out;
    if (!ctx->allocate_output(0, x.dims_data(), 4, &out).ok()) return;
    const int64_t total = x.NumElements();
    if (total == 0) return;
    const int64_t depth = x.dim(3);
    const T* dyp = dy.data<T>();
    const T* xp = x.data<T>();
    const T* yp = y.data<T>();
    T* op = out.data<T>();
    const LrnAttrs a = attrs_;
    ForRange(ctx, total / depth, total, depth * 30, [=](int64_t b, int64_t e) {
      T* scratch = LrnScratch<T>(2 * depth);
      T* norm = scratch;
      T* t = scratch + depth;
      const int64_t r = a.radius;
      const double k = -2.0 * a.alpha * a.beta;
      for (int64_t row = b; row < e; ++row) {
        const T* xr = xp + row * depth;
        const T* dr = dyp + row * depth;
        const T* yr = yp + row * depth;
        T* o = op + row * depth;
        LrnNorms<T>(a, xr, depth, norm);
        for (int64_t j = 0; j < depth; ++j) t[j] = dr[j] * yr[j] / norm[j];
        double window = 0;
        for (int64_t j = 0; j < std::min(depth, r); ++j) window += t[j];
        for (int64_t i = 0; i < depth; ++i) {
          if (i + r < depth) window += t[i + r];
          if (i - r - 1 >= 0) window -= t[i - r - 1];
          o[i] = static_cast<T>(dr[i] * std::pow(double(norm[i]), -double(a.beta)) +
                                k * xr[i] * window);
        }
      }
    });
  }

 private:
  LrnAttrs attrs_;
};

}  // namespace

REGISTER_KERNEL(Name("FusedBatchNorm").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                FusedBatchNormOp<float, float>);
REGISTER_KERNEL(Name("FusedBatchNormV2").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
                FusedBatchNormOp<float, float>);
REGISTER_KERNEL(Name("FusedBatchNormV3").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
                FusedBatchNormOp<float, float>);
REGISTER_KERNEL(Name("FusedBatchNormGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                FusedBatchNormGradOp<float, float>);
REGISTER_KERNEL(Name("FusedBatchNormGradV2").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
                FusedBatchNormGradOp<float, float>);
REGISTER_KERNEL(Name("FusedBatchNormGradV3").Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"),
                FusedBatchNormGradOp<float, float>);
REGISTER_KERNEL(Name("LRN").Device(DEVICE_CPU).TypeConstraint<float>("T"), LrnOp<float>);
REGISTER_KERNEL(Name("LRNGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"), LrnGradOp<float>);

}  // namespace sdk
}  // namespace graphrt
