// Normalisations on CPU: FusedBatchNorm (V1/V2/V3) and its gradients, LRN
// and LRNGrad, through real sessions.
//
// References are plain loops in double written here; gradients are also
// checked against central finite differences of the naive forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "nn_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;     // NOLINT: the op-test vocabulary
using namespace ::graphrt::nn_testing;  // NOLINT

// ------------------------------------------------------------ batch norm

// The channel of flat index i of a tensor of dims d.
int64_t ChannelOf(const Dims& d, bool channels_first, int64_t i) {
  if (!channels_first) return i % d.back();
  int64_t after = 1;
  for (size_t k = 2; k < d.size(); ++k) after *= d[k];
  return (i / after) % d[1];
}

struct BnRef {
  std::vector<double> y, mean, var;  // var: biased
};

// y = (x - mean) / sqrt(var + eps) * scale + offset, with the batch
// statistics (training) or the given ones.
BnRef RefBatchNorm(const Dims& d, bool cf, const std::vector<double>& x,
                   const std::vector<double>& scale, const std::vector<double>& offset,
                   const std::vector<double>* mean_in, const std::vector<double>* var_in, double eps) {
  const int64_t C = cf ? d[1] : d.back();
  BnRef r;
  r.mean.assign(C, 0);
  r.var.assign(C, 0);
  std::vector<double> count(C, 0);
  if (mean_in) {
    r.mean = *mean_in;
    r.var = *var_in;
  } else {
    for (size_t i = 0; i < x.size(); ++i) {
      r.mean[ChannelOf(d, cf, i)] += x[i];
      count[ChannelOf(d, cf, i)] += 1;
    }
    for (int64_t c = 0; c < C; ++c) r.mean[c] /= count[c];
    for (size_t i = 0; i < x.size(); ++i) {
      const double dv = x[i] - r.mean[ChannelOf(d, cf, i)];
      r.var[ChannelOf(d, cf, i)] += dv * dv;
    }
    for (int64_t c = 0; c < C; ++c) r.var[c] /= count[c];
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = ChannelOf(d, cf, i);
    r.y.push_back((x[i] - r.mean[c]) / std::sqrt(r.var[c] + eps) * scale[c] + offset[c]);
  }
  return r;
}

std::string FormatFor(const Dims& d, bool cf) {
  if (d.size() == 5) return cf ? "NCDHW" : "NDHWC";
  return cf ? "NCHW" : "NHWC";
}

std::string BnAttrs(const std::string& op, const Dims& d, bool cf, bool training, float eps,
                    float factor) {
  std::string a = TypeAttr("T", "DT_FLOAT") + StrAttr("data_format", FormatFor(d, cf)) +
                  BoolAttr("is_training", training) + FloatAttr("epsilon", eps);
  if (op != "FusedBatchNorm") a += TypeAttr("U", "DT_FLOAT");
  if (factor != 1.0f) a += FloatAttr("exponential_avg_factor", factor);
  return a;
}

std::vector<double> Floats(std::vector<double> v) {
  for (double& x : v) x = static_cast<double>(static_cast<float>(x));
  return v;
}

void CheckBatchNorm(const std::string& op, const Dims& d, bool cf, bool training, float factor,
                    std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(op + " " + TensorShape(d).DebugString() + " " + FormatFor(d, cf) +
               (training ? " training" : " inference") + " factor " + std::to_string(factor));
  const int64_t C = cf ? d[1] : d.back();
  const float eps = 0.001f;
  const std::vector<double> x = Floats(Uniform(NumElements(d), -3, 5, rng));
  const std::vector<double> scale = Floats(Uniform(C, 0.5, 2, rng));
  const std::vector<double> offset = Floats(Uniform(C, -1, 1, rng));
  const std::vector<double> mean_in = Floats(Uniform(C, -1, 1, rng));
  const std::vector<double> var_in = Floats(Uniform(C, 0.5, 3, rng));
  const BnRef r = RefBatchNorm(d, cf, x, scale, offset, training ? nullptr : &mean_in,
                               training ? nullptr : &var_in, double(eps));
  std::vector<double> want_mean = r.mean, want_var = r.var;
  if (training) {
    const double n = static_cast<double>(NumElements(d) / C);
    const double f = double(factor);
    for (int64_t c = 0; c < C; ++c) {
      const double unbiased = r.var[c] * n / std::max(n - 1, 1.0);
      want_mean[c] = f == 1 ? r.mean[c] : (1 - f) * mean_in[c] + f * r.mean[c];
      want_var[c] = f == 1 ? unbiased : (1 - f) * var_in[c] + f * unbiased;
    }
  }
  const int outputs = op == "FusedBatchNormV3" ? 6 : 5;
  std::vector<Tensor> out = RunNode(
      op,
      {MakeT<float>(d, x), MakeT<float>({C}, scale), MakeT<float>({C}, offset), MakeT<float>({C}, mean_in),
       MakeT<float>({C}, var_in)},
      BnAttrs(op, d, cf, training, eps, factor), outputs, threads);
  ASSERT_EQ(out.size(), static_cast<size_t>(outputs));
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectClose<float>(out[0], r.y, 2e-5, 2e-5);
  ExpectClose<float>(out[1], want_mean, 1e-5, 1e-6);
  ExpectClose<float>(out[2], want_var, 1e-5, 1e-6);
  ExpectClose<float>(out[3], r.mean, 1e-5, 1e-6);
  ExpectClose<float>(out[4], r.var, 1e-5, 1e-6);
  if (outputs == 6) {
    // reserve_space_3: a zero scalar on CPU, as in TensorFlow.
    EXPECT_EQ(out[5].dtype(), GR_FLOAT);
    EXPECT_EQ(DimsOf(out[5]), Dims{});
    ExpectClose<float>(out[5], {0}, 0);
  }
}

TEST(FusedBatchNormTest, TrainingAndInferenceAllFormats) {
  std::mt19937 rng(300);
  for (const std::string op : {"FusedBatchNormV3", "FusedBatchNormV2", "FusedBatchNorm"}) {
    for (bool cf : {false, true}) {
      for (bool training : {true, false}) {
        CheckBatchNorm(op, cf ? Dims{2, 5, 3, 4} : Dims{2, 3, 4, 5}, cf, training, 1.0f, &rng);
        CheckBatchNorm(op, cf ? Dims{3, 1, 1, 1} : Dims{3, 1, 1, 1}, cf, training, 1.0f, &rng);
        CheckBatchNorm(op, Dims{1, 7, 1, 3}, cf, training, 1.0f, &rng);
      }
    }
  }
}

TEST(FusedBatchNormTest, ExponentialAverageFactorBlendsRunningStats) {
  std::mt19937 rng(301);
  for (const std::string op : {"FusedBatchNormV3", "FusedBatchNorm"}) {
    for (bool cf : {false, true}) {
      CheckBatchNorm(op, cf ? Dims{2, 5, 3, 4} : Dims{2, 3, 4, 5}, cf, true, 0.25f, &rng);
      // Inference ignores the factor.
      CheckBatchNorm(op, cf ? Dims{2, 5, 3, 4} : Dims{2, 3, 4, 5}, cf, false, 0.25f, &rng);
    }
  }
}

TEST(FusedBatchNormTest, FiveDimsParallelAndSingleThread) {
  std::mt19937 rng(302);
  for (bool cf : {false, true}) {
    CheckBatchNorm("FusedBatchNormV3", cf ? Dims{2, 3, 2, 3, 2} : Dims{2, 2, 3, 2, 3}, cf, true, 1.0f, &rng);
    for (int threads : {2, 1}) {
      CheckBatchNorm("FusedBatchNormV3", cf ? Dims{8, 32, 16, 17} : Dims{8, 16, 17, 32}, cf, true, 1.0f, &rng,
                     threads);
      CheckBatchNorm("FusedBatchNormV3", cf ? Dims{8, 32, 16, 17} : Dims{8, 16, 17, 32}, cf, false, 1.0f, &rng,
                     threads);
    }
  }
}

TEST(FusedBatchNormTest, HandCheckedSmallCases) {
  // Training: one channel over x = [1, 3]: mean 2, biased variance 1, the
  // running variance gets Bessel's correction (2).
  std::vector<Tensor> out = RunNode(
      "FusedBatchNormV3",
      {MakeT<float>({2, 1, 1, 1}, {1, 3}), MakeT<float>({1}, {2}), MakeT<float>({1}, {1}), MakeT<float>({0}, {}),
       MakeT<float>({0}, {})},
      TypeAttr("T", "DT_FLOAT") + TypeAttr("U", "DT_FLOAT") + FloatAttr("epsilon", 0), 6);
  ASSERT_EQ(out.size(), 6u);
  ExpectClose<float>(out[0], {-1, 3}, 1e-6);
  ExpectClose<float>(out[1], {2}, 0);
  ExpectClose<float>(out[2], {2}, 0);
  ExpectClose<float>(out[3], {2}, 0);
  ExpectClose<float>(out[4], {1}, 0);
  // Inference: the given mean 1 and variance 3 (+ epsilon 1).
  out = RunNode("FusedBatchNormV3",
                {MakeT<float>({2, 1, 1, 1}, {1, 3}), MakeT<float>({1}, {2}), MakeT<float>({1}, {0}),
                 MakeT<float>({1}, {1}), MakeT<float>({1}, {3})},
                TypeAttr("T", "DT_FLOAT") + TypeAttr("U", "DT_FLOAT") + FloatAttr("epsilon", 1) +
                    BoolAttr("is_training", false),
                6);
  ASSERT_EQ(out.size(), 6u);
  ExpectClose<float>(out[0], {0, 2}, 1e-6);
  ExpectClose<float>(out[1], {1}, 0);
  ExpectClose<float>(out[2], {3}, 0);
}

TEST(FusedBatchNormTest, EmptyInputGivesNanStatistics) {
  std::vector<Tensor> out = RunNode(
      "FusedBatchNormV3",
      {MakeT<float>({0, 2, 2, 3}, {}), MakeT<float>({3}, {1, 1, 1}), MakeT<float>({3}, {0, 0, 0}),
       MakeT<float>({0}, {}), MakeT<float>({0}, {})},
      TypeAttr("T", "DT_FLOAT") + TypeAttr("U", "DT_FLOAT"), 6);
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 2, 2, 3}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ExpectClose<float>(out[1], {nan, nan, nan}, 0);
  ExpectClose<float>(out[2], {nan, nan, nan}, 0);
}

TEST(FusedBatchNormTest, ErrorsNameTheProblem) {
  const Tensor x = MakeT<float>({1, 2, 2, 3}, std::vector<double>(12, 1));
  const Tensor c3 = MakeT<float>({3}, {1, 1, 1});
  const Tensor c2 = MakeT<float>({2}, {1, 1});
  const std::string a = TypeAttr("T", "DT_FLOAT") + TypeAttr("U", "DT_FLOAT");
  EXPECT_ERROR(TryNode("FusedBatchNormV3", {MakeT<float>({2, 3}, std::vector<double>(6)), c3, c3, c3, c3}, a, "bn"),
               Code::kInvalidArgument, "input must be 4 or 5-dimensional", "bn");
  EXPECT_ERROR(TryNode("FusedBatchNormV3", {x, c2, c3, c3, c3}, a, "bn"), Code::kInvalidArgument,
               "scale must have the same number of elements as the channels of x, got 2 and 3");
  EXPECT_ERROR(TryNode("FusedBatchNormV3", {x, c3, c2, c3, c3}, a, "bn"), Code::kInvalidArgument,
               "offset must have the same number of elements");
  EXPECT_ERROR(TryNode("FusedBatchNormV3", {x, c3, c3, c2, c3}, a + BoolAttr("is_training", false), "bn"),
               Code::kInvalidArgument, "When is_training=false, mean must have the same number of elements");
  EXPECT_ERROR(TryNode("FusedBatchNormV3", {x, c3, c3, c3, c2}, a + FloatAttr("exponential_avg_factor", 0.5f),
                       "bn"),
               Code::kInvalidArgument, "When exponential_avg_factor != 1, variance must have");
  // Known at load: a constant scale of the wrong length.
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstFloat("s", {2}, {1, 1}) +
                        ConstFloat("o", {3}, {0, 0, 0}) + ConstFloat("m", {0}, {}) +
                        NodeText("x4", "Reshape", {"x", "shape"}, TypeAttr("T", "DT_FLOAT")) +
                        ConstInt32("shape", {1, 2, 2, 3}) +
                        NodeText("bn", "FusedBatchNormV3", {"x4", "s", "o", "m", "m"}, a);
  EXPECT_ERROR(TryRun(g, {{"x:0", x}}, {"bn:0"}), Code::kInvalidArgument, "Dimensions must be equal");
}

// ------------------------------------------------------- batch norm grad

struct BnGradRef {
  std::vector<double> dx, dscale, doffset;
};

BnGradRef RefBatchNormGrad(const Dims& d, bool cf, const std::vector<double>& dy,
                           const std::vector<double>& x, const std::vector<double>& scale,
                           const std::vector<double>& mean, const std::vector<double>& var, double eps,
                           bool training) {
  const int64_t C = scale.size();
  BnGradRef r;
  r.dscale.assign(C, 0);
  r.doffset.assign(C, 0);
  std::vector<double> count(C, 0), sum_dy_xhat(C, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = ChannelOf(d, cf, i);
    const double xhat = (x[i] - mean[c]) / std::sqrt(var[c] + eps);
    r.doffset[c] += dy[i];
    r.dscale[c] += dy[i] * xhat;
    count[c] += 1;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = ChannelOf(d, cf, i);
    const double inv = 1 / std::sqrt(var[c] + eps);
    const double xhat = (x[i] - mean[c]) * inv;
    if (training) {
      r.dx.push_back(scale[c] * inv *
                     (dy[i] - r.doffset[c] / count[c] - xhat * r.dscale[c] / count[c]));
    } else {
      r.dx.push_back(dy[i] * scale[c] * inv);
    }
  }
  return r;
}

// d/dx of sum(dy * y(x)) for the naive training forward (batch statistics
// of x), by central differences.
std::vector<double> NumericBnGrad(const Dims& d, bool cf, const std::vector<double>& dy, std::vector<double> x,
                                  const std::vector<double>& scale, double eps) {
  const std::vector<double> offset(scale.size(), 0);
  std::vector<double> out;
  const double h = 1e-5;
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    double f[2];
    for (int s = 0; s < 2; ++s) {
      x[i] = keep + (s ? -h : h);
      const BnRef r = RefBatchNorm(d, cf, x, scale, offset, nullptr, nullptr, eps);
      f[s] = 0;
      for (size_t k = 0; k < x.size(); ++k) f[s] += dy[k] * r.y[k];
    }
    x[i] = keep;
    out.push_back((f[0] - f[1]) / (2 * h));
  }
  return out;
}

void CheckBatchNormGrad(const std::string& op, const Dims& d, bool cf, bool training, std::mt19937* rng,
                        bool numeric, int threads = 2) {
  SCOPED_TRACE(op + " " + TensorShape(d).DebugString() + " " + FormatFor(d, cf) +
               (training ? " training" : " inference"));
  const int64_t C = cf ? d[1] : d.back();
  const float eps = 0.001f;
  const std::vector<double> x = Floats(Uniform(NumElements(d), -3, 5, rng));
  const std::vector<double> dy = Floats(Uniform(NumElements(d), -1, 1, rng));
  const std::vector<double> scale = Floats(Uniform(C, 0.5, 2, rng));
  std::vector<double> mean, var;
  if (training) {
    // The forward's reserve spaces: the batch mean and biased variance.
    const BnRef r = RefBatchNorm(d, cf, x, scale, scale, nullptr, nullptr, eps);
    mean = Floats(r.mean);
    var = Floats(r.var);
  } else {
    mean = Floats(Uniform(C, -1, 1, rng));
    var = Floats(Uniform(C, 0.5, 3, rng));
  }
  const BnGradRef r = RefBatchNormGrad(d, cf, dy, x, scale, mean, var, double(eps), training);
  std::vector<Tensor> in = {MakeT<float>(d, dy), MakeT<float>(d, x), MakeT<float>({C}, scale),
                            MakeT<float>({C}, mean), MakeT<float>({C}, var)};
  if (op == "FusedBatchNormGradV3") in.push_back(MakeT<float>({}, {0}));
  std::vector<Tensor> out = RunNode(op, in, BnAttrs(op == "FusedBatchNormGrad" ? "FusedBatchNorm" : op, d, cf,
                                                    training, eps, 1.0f),
                                    5, threads);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectClose<float>(out[0], r.dx, 1e-4, 1e-5);
  ExpectClose<float>(out[1], r.dscale, 1e-4, 1e-4);
  ExpectClose<float>(out[2], r.doffset, 1e-4, 1e-4);
  EXPECT_EQ(DimsOf(out[3]), (Dims{0}));
  EXPECT_EQ(DimsOf(out[4]), (Dims{0}));
  if (numeric && training) ExpectClose<float>(out[0], NumericBnGrad(d, cf, dy, x, scale, double(eps)), 1e-3, 1e-4);
}

TEST(FusedBatchNormGradTest, TrainingAndInferenceAllVersions) {
  std::mt19937 rng(310);
  for (const std::string op : {"FusedBatchNormGradV3", "FusedBatchNormGradV2", "FusedBatchNormGrad"}) {
    for (bool cf : {false, true}) {
      for (bool training : {true, false}) {
        CheckBatchNormGrad(op, cf ? Dims{2, 3, 3, 2} : Dims{2, 3, 2, 3}, cf, training, &rng, true);
        CheckBatchNormGrad(op, Dims{1, 5, 1, 4}, cf, training, &rng, false);
      }
    }
  }
}

TEST(FusedBatchNormGradTest, FiveDimsParallelAndSingleThread) {
  std::mt19937 rng(311);
  for (bool cf : {false, true}) {
    CheckBatchNormGrad("FusedBatchNormGradV3", cf ? Dims{2, 3, 2, 2, 2} : Dims{2, 2, 2, 2, 3}, cf, true, &rng,
                       true);
    for (int threads : {2, 1}) {
      for (bool training : {true, false}) {
        CheckBatchNormGrad("FusedBatchNormGradV3", cf ? Dims{8, 32, 16, 17} : Dims{8, 16, 17, 32}, cf, training,
                           &rng, false, threads);
      }
    }
  }
}

TEST(FusedBatchNormGradTest, ErrorsNameTheProblem) {
  const Tensor x = MakeT<float>({1, 2, 2, 3}, std::vector<double>(12, 1));
  const Tensor c3 = MakeT<float>({3}, {1, 1, 1});
  const Tensor c2 = MakeT<float>({2}, {1, 1});
  const Tensor r3 = MakeT<float>({}, {0});
  const std::string a = TypeAttr("T", "DT_FLOAT") + TypeAttr("U", "DT_FLOAT");
  EXPECT_ERROR(TryNode("FusedBatchNormGradV3", {MakeT<float>({1, 2, 3, 2}, std::vector<double>(12)), x, c3, c3, c3, r3},
                       a, "bng"),
               Code::kInvalidArgument, "x and y_backprop must have same shape", "bng");
  EXPECT_ERROR(TryNode("FusedBatchNormGradV3", {x, x, c2, c3, c3, r3}, a, "bng"), Code::kInvalidArgument,
               "scale must have the same number of elements as the channels of x");
  EXPECT_ERROR(TryNode("FusedBatchNormGradV3", {x, x, c3, c2, c3, r3}, a, "bng"), Code::kInvalidArgument,
               "reserve_space_1 must have the same number of elements");
  EXPECT_ERROR(TryNode("FusedBatchNormGradV3", {x, x, c3, c3, c2, r3}, a, "bng"), Code::kInvalidArgument,
               "reserve_space_2 must have the same number of elements");
}

// ------------------------------------------------------------------- LRN

struct LrnParams {
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;
  std::string Attrs(bool defaults) const {
    std::string a = TypeAttr("T", "DT_FLOAT");
    if (!defaults) {
      a += IntAttr("depth_radius", radius) + FloatAttr("bias", bias) + FloatAttr("alpha", alpha) +
           FloatAttr("beta", beta);
    }
    return a;
  }
};

// The norm of element i: bias + alpha * sum of squares over its depth window.
double RefNorm(const LrnParams& p, const std::vector<double>& x, int64_t depth, int64_t i) {
  const int64_t row = i / depth, d = i % depth;
  double s = 0;
  for (int64_t j = std::max<int64_t>(0, d - p.radius); j <= std::min(depth - 1, d + p.radius); ++j)
    s += x[row * depth + j] * x[row * depth + j];
  return double(p.bias) + double(p.alpha) * s;
}

std::vector<double> RefLrn(const LrnParams& p, const std::vector<double>& x, int64_t depth) {
  std::vector<double> y;
  for (size_t i = 0; i < x.size(); ++i) y.push_back(x[i] * std::pow(RefNorm(p, x, depth, i), -double(p.beta)));
  return y;
}

void CheckLrn(const LrnParams& p, bool defaults, const Dims& d, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(TensorShape(d).DebugString() + " r=" + std::to_string(p.radius));
  const std::vector<double> x = Floats(Uniform(NumElements(d), -2, 2, rng));
  std::vector<Tensor> out = RunNode("LRN", {MakeT<float>(d, x)}, p.Attrs(defaults), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectClose<float>(out[0], RefLrn(p, x, d.back()), 2e-5, 1e-6);
}

TEST(LrnTest, DefaultsAndCustomParams) {
  std::mt19937 rng(320);
  CheckLrn(LrnParams{}, true, {2, 3, 4, 16}, &rng);
  for (const LrnParams& p : {LrnParams{0, 1, 1, 0.5f}, LrnParams{2, 2.0f, 0.1f, 0.75f},
                             LrnParams{3, 0.5f, 1e-3f, 1.0f}, LrnParams{20, 1, 0.5f, 0.5f}}) {
    for (const Dims& d : {Dims{1, 1, 1, 1}, Dims{2, 3, 2, 7}, Dims{1, 2, 2, 11}, Dims{0, 2, 2, 4}}) {
      CheckLrn(p, false, d, &rng);
    }
  }
  CheckLrn(LrnParams{2, 2.0f, 0.1f, 0.75f}, false, {4, 20, 20, 40}, &rng);
  CheckLrn(LrnParams{2, 2.0f, 0.1f, 0.75f}, false, {4, 20, 20, 40}, &rng, 1);
}

void CheckLrnGrad(const LrnParams& p, const Dims& d, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(TensorShape(d).DebugString() + " r=" + std::to_string(p.radius));
  const int64_t depth = d.back();
  std::vector<double> x = Floats(Uniform(NumElements(d), -2, 2, rng));
  const std::vector<double> dy = Floats(Uniform(NumElements(d), -1, 1, rng));
  const std::vector<double> y = Floats(RefLrn(p, x, depth));
  // Naive: dx_i = sum_j dy_j dy_j/dx_i, straight from the definition.
  std::vector<double> want(x.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t row = i / depth, di = i % depth;
    for (int64_t dj = 0; dj < depth; ++dj) {
      const int64_t j = row * depth + dj;
      const double nj = RefNorm(p, x, depth, j);
      double dyj_dxi = 0;
      if (dj == di) dyj_dxi += std::pow(nj, -double(p.beta));
      if (std::abs(dj - di) <= p.radius)
        dyj_dxi -= 2 * double(p.alpha) * double(p.beta) * x[i] * x[j] * std::pow(nj, -double(p.beta) - 1);
      want[i] += dy[j] * dyj_dxi;
    }
  }
  std::vector<Tensor> out =
      RunNode("LRNGrad", {MakeT<float>(d, dy), MakeT<float>(d, x), MakeT<float>(d, y)}, p.Attrs(false), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectClose<float>(out[0], want, 1e-4, 1e-5);
  // Central finite differences of sum(dy * LRN(x)).
  if (x.size() > 200) return;
  std::vector<double> numeric;
  const double h = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    double f[2];
    for (int s = 0; s < 2; ++s) {
      x[i] = keep + (s ? -h : h);
      const std::vector<double> yy = RefLrn(p, x, depth);
      f[s] = 0;
      for (size_t k = 0; k < x.size(); ++k) f[s] += dy[k] * yy[k];
    }
    x[i] = keep;
    numeric.push_back((f[0] - f[1]) / (2 * h));
  }
  ExpectClose<float>(out[0], numeric, 1e-3, 1e-4);
}

TEST(LrnGradTest, AgainstDefinitionAndFiniteDifferences) {
  std::mt19937 rng(321);
  for (const LrnParams& p : {LrnParams{}, LrnParams{0, 1, 1, 0.5f}, LrnParams{2, 2.0f, 0.1f, 0.75f},
                             LrnParams{1, 0.5f, 0.3f, 1.0f}}) {
    for (const Dims& d : {Dims{1, 1, 1, 1}, Dims{2, 2, 1, 7}, Dims{1, 1, 2, 12}, Dims{0, 1, 1, 3}}) {
      CheckLrnGrad(p, d, &rng);
    }
  }
  CheckLrnGrad(LrnParams{2, 2.0f, 0.1f, 0.75f}, {4, 20, 20, 40}, &rng);
  CheckLrnGrad(LrnParams{2, 2.0f, 0.1f, 0.75f}, {4, 20, 20, 40}, &rng, 1);
}

TEST(LrnTest, Errors) {
  EXPECT_ERROR(TryNode("LRN", {MakeT<float>({2, 3}, std::vector<double>(6))}, TypeAttr("T", "DT_FLOAT"), "lrn"),
               Code::kInvalidArgument, "in must be 4-dimensional", "lrn");
  EXPECT_ERROR(TryNode("LRN", {MakeT<float>({1, 1, 1, 2}, {1, 2})},
                       TypeAttr("T", "DT_FLOAT") + IntAttr("depth_radius", -1), "lrn"),
               Code::kInvalidArgument, "depth_radius = -1");
  const Tensor a = MakeT<float>({1, 1, 2, 3}, std::vector<double>(6, 1));
  const Tensor b = MakeT<float>({1, 2, 1, 3}, std::vector<double>(6, 1));
  EXPECT_ERROR(TryNode("LRNGrad", {a, a, b}, TypeAttr("T", "DT_FLOAT"), "lrng"), Code::kInvalidArgument,
               "input_grads, input_image, and out_image should have the same shape", "lrng");
  EXPECT_ERROR(TryNode("LRNGrad", {a, a, MakeT<float>({6}, std::vector<double>(6))}, TypeAttr("T", "DT_FLOAT"),
                       "lrng"),
               Code::kInvalidArgument, "inputs must be 4-dimensional");
}

}  // namespace
}  // namespace graphrt
