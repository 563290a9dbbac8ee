// LRN's two CPU paths (ops/nn/cpu/norm_kernels.cc): oneDNN's across-channel
// LRN (chosen by default where oneDNN has a jit kernel: beta 0.75 or 1 on
// this library) and the direct loops (every other beta, or forced), each
// against a naive reference written here (plain loops, index arithmetic by
// division, double). GRAPHRT_NN_NORM_IMPL=dnnl|direct, read when a kernel is
// built (a session's first Run), forces one path, so every case also runs
// on the path the default rule does not pick.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
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

// Sets GRAPHRT_NN_NORM_IMPL for its scope ("" leaves it unset).
class ImplScope {
 public:
  explicit ImplScope(const std::string& impl) {
    if (impl.empty()) {
      unsetenv("GRAPHRT_NN_NORM_IMPL");
    } else {
      setenv("GRAPHRT_NN_NORM_IMPL", impl.c_str(), 1);
    }
  }
  ~ImplScope() { unsetenv("GRAPHRT_NN_NORM_IMPL"); }
  ImplScope(const ImplScope&) = delete;
  ImplScope& operator=(const ImplScope&) = delete;
};

struct Lrn {
  int64_t radius;
  float bias, alpha, beta;
  std::string Attrs() const {
    return TypeAttr("T", "DT_FLOAT") + IntAttr("depth_radius", radius) + FloatAttr("bias", bias) +
           FloatAttr("alpha", alpha) + FloatAttr("beta", beta);
  }
  std::string Name() const {
    return "r=" + std::to_string(radius) + " bias=" + FloatText(bias) + " alpha=" + FloatText(alpha) +
           " beta=" + FloatText(beta);
  }
};

// out[n,h,w,c] = x / (bias + alpha * sum_{|c'-c|<=r, 0<=c'<C} x[n,h,w,c']^2)^beta.
std::vector<double> NaiveLrn(const Lrn& p, const Dims& d, const std::vector<double>& x) {
  const int64_t C = d[3];
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t pixel = static_cast<int64_t>(i) / C;
    const int64_t c = static_cast<int64_t>(i) % C;
    double sum = 0;
    for (int64_t k = c - p.radius; k <= c + p.radius; ++k) {
      if (k < 0 || k >= C) continue;
      const double v = x[static_cast<size_t>(pixel * C + k)];
      sum += v * v;
    }
    out[i] = x[i] / std::pow(double(p.bias) + double(p.alpha) * sum, double(p.beta));
  }
  return out;
}

// Runs LRN on random x of dims d with `impl` forced ("" = the default
// rule) and compares with the naive reference.
void CheckLrn(const Lrn& p, const Dims& d, const std::string& impl, int threads, std::mt19937* rng) {
  SCOPED_TRACE(p.Name() + " " + TensorShape(d).DebugString() + " impl=" + (impl.empty() ? "default" : impl) +
               " threads=" + std::to_string(threads));
  std::vector<double> x = Uniform(NumElements(d), -3, 3, rng);
  for (double& v : x) v = static_cast<double>(static_cast<float>(v));
  std::vector<Tensor> out;
  {
    ImplScope scope(impl);
    out = RunNode("LRN", {MakeT<float>(d, x)}, p.Attrs(), 1, threads);
  }
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectClose<float>(out[0], NaiveLrn(p, d, x), 2e-5, 1e-6);
}

// Shapes: odd channel counts, a single channel, a window wider than the
// depth, and sizes above kParallelMinElements (32 Ki) whose pixel rows do
// not split evenly over 2 threads (a short last part).
const std::vector<Dims> kShapes = {{1, 1, 1, 1},   {2, 3, 5, 7},    {3, 5, 7, 37},  {1, 9, 11, 1},
                                   {5, 17, 19, 64}, {3, 31, 29, 13}, {1, 1, 601, 96}};

TEST(LrnDnnlPathTest, JitBetasOnEveryPathAgainstNaive) {
  // beta 0.75 (AlexNet's) and 1: oneDNN's jit kernel, the default path.
  std::mt19937 rng(11);
  const std::vector<Lrn> params = {{2, 1, 1e-4f, 0.75f}, {2, 2, 1e-4f, 0.75f}, {5, 1, 1, 0.75f},
                                   {0, 1, 0.5f, 0.75f},  {1, 0.5f, 0.3f, 1},   {20, 1, 0.1f, 1},
                                   {3, 3, 2, 0.75f}};
  for (const Lrn& p : params)
    for (const Dims& d : kShapes)
      for (const char* impl : {"", "direct"})
        for (int threads : {1, 2}) CheckLrn(p, d, impl, threads, &rng);
}

TEST(LrnDnnlPathTest, OtherBetasOnEveryPathAgainstNaive) {
  // Default: the direct loops (oneDNN has only its reference loop for these
  // betas); forced: oneDNN's reference loop, which must agree as well. The
  // direct loops special-case 0.5 and 1 and take exp/log for the others.
  std::mt19937 rng(12);
  const std::vector<Lrn> params = {{5, 1, 1, 0.5f}, {2, 1, 1e-4f, 0.5f}, {3, 0.5f, 0.2f, 0.3f},
                                   {1, 2, 0.7f, 1.6f}, {4, 1, 0.5f, 0}, {2, 1.5f, 0.25f, -0.5f}};
  for (const Lrn& p : params)
    for (const Dims& d : {Dims{2, 3, 5, 7}, Dims{3, 5, 7, 37}, Dims{3, 31, 29, 13}, Dims{1, 1, 601, 96}})
      for (const char* impl : {"", "dnnl", "direct"})
        for (int threads : {1, 2}) CheckLrn(p, d, impl, threads, &rng);
}

TEST(LrnDnnlPathTest, DefaultsAndEmptyTensors) {
  // TF's defaults (depth_radius 5, bias 1, alpha 1, beta 0.5).
  std::mt19937 rng(13);
  for (const char* impl : {"", "dnnl", "direct"}) {
    ImplScope scope(impl);
    const Dims d = {2, 7, 9, 21};
    std::vector<double> x = Uniform(NumElements(d), -3, 3, &rng);
    for (double& v : x) v = static_cast<double>(static_cast<float>(v));
    std::vector<Tensor> out = RunNode("LRN", {MakeT<float>(d, x)}, TypeAttr("T", "DT_FLOAT"));
    ASSERT_EQ(out.size(), 1u);
    ExpectClose<float>(out[0], NaiveLrn(Lrn{5, 1, 1, 0.5f}, d, x), 2e-5, 1e-6);
    for (const Dims& e : {Dims{0, 3, 3, 8}, Dims{2, 0, 3, 5}, Dims{2, 3, 3, 0}}) {
      std::vector<Tensor> o = RunNode("LRN", {MakeT<float>(e, {})}, Lrn{2, 1, 1e-4f, 0.75f}.Attrs());
      ASSERT_EQ(o.size(), 1u);
      EXPECT_EQ(DimsOf(o[0]), e);
    }
  }
}

// One session, several shapes (primitives cached by shape, full and short
// parts), an error in between, then the first shape again.
TEST(LrnDnnlPathTest, ShapesChangeAndErrorsInOneSession) {
  const Lrn p{2, 1, 1e-4f, 0.75f};
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    std::unique_ptr<Session> s =
        CreateSession(ParseGraph(OneNodeGraph("LRN", {GR_FLOAT}, p.Attrs())), threads);
    ASSERT_TRUE(s);
    std::mt19937 rng(14);
    auto run = [&](const Dims& d) {
      std::vector<double> x = Uniform(NumElements(d), -3, 3, &rng);
      for (double& v : x) v = static_cast<double>(static_cast<float>(v));
      std::vector<Tensor> out;
      Status st = s->Run(FeedsFor({MakeT<float>(d, x)}), {"n:0"}, {}, &out);
      ASSERT_TRUE(st.ok()) << st;
      ASSERT_EQ(out.size(), 1u);
      ExpectClose<float>(out[0], NaiveLrn(p, d, x), 2e-5, 1e-6);
    };
    run({4, 23, 25, 64});
    run({3, 23, 25, 64});
    run({1, 2, 3, 5});
    std::vector<Tensor> out;
    EXPECT_ERROR(s->Run(FeedsFor({MakeT<float>({4, 64}, std::vector<double>(256))}), {"n:0"}, {}, &out),
                 Code::kInvalidArgument, "in must be 4-dimensional");
    run({4, 23, 25, 64});
  }
}

// LRNGrad takes the forward output: the pair must still be consistent when
// the forward runs on oneDNN (dx against the naive derivative).
TEST(LrnDnnlPathTest, GradientOfDnnlForward) {
  const Lrn p{2, 2, 0.1f, 0.75f};
  std::mt19937 rng(15);
  const Dims d = {2, 5, 7, 19};
  const int64_t C = d[3];
  std::vector<double> x = Uniform(NumElements(d), -2, 2, &rng);
  std::vector<double> dy = Uniform(NumElements(d), -1, 1, &rng);
  for (double& v : x) v = static_cast<double>(static_cast<float>(v));
  for (double& v : dy) v = static_cast<double>(static_cast<float>(v));
  std::vector<Tensor> y = RunNode("LRN", {MakeT<float>(d, x)}, p.Attrs());
  ASSERT_EQ(y.size(), 1u);
  std::vector<Tensor> dx = RunNode("LRNGrad", {MakeT<float>(d, dy), MakeT<float>(d, x), y[0]}, p.Attrs());
  ASSERT_EQ(dx.size(), 1u);
  // d/dx_i of sum_j dy_j x_j N_j^-beta, N_j = bias + alpha sum_{|k-j|<=r} x_k^2.
  std::vector<double> want(x.size());
  auto norm = [&](int64_t pixel, int64_t c) {
    double s = 0;
    for (int64_t k = std::max<int64_t>(0, c - p.radius); k <= std::min(C - 1, c + p.radius); ++k)
      s += x[pixel * C + k] * x[pixel * C + k];
    return double(p.bias) + double(p.alpha) * s;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t pixel = static_cast<int64_t>(i) / C, c = static_cast<int64_t>(i) % C;
    double g = dy[i] * std::pow(norm(pixel, c), -double(p.beta));
    for (int64_t j = std::max<int64_t>(0, c - p.radius); j <= std::min(C - 1, c + p.radius); ++j) {
      const double nj = norm(pixel, j);
      g += dy[pixel * C + j] * x[pixel * C + j] * -double(p.beta) * std::pow(nj, -double(p.beta) - 1) *
           double(p.alpha) * 2 * x[i];
    }
    want[i] = g;
  }
  ExpectClose<float>(dx[0], want, 1e-4, 1e-5);
}

}  // namespace
}  // namespace graphrt
