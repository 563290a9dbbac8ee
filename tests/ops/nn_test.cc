// nn ops on CPU: activations, their gradients, LogSoftmax, BiasAddGrad and
// the softmax cross-entropy losses, through real sessions.
//
// Expected values come from naive references written here (plain loops,
// double arithmetic), and gradients are also checked against central finite
// differences of the naive forward functions. Inputs are random with fixed
// seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
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

using Fn = std::function<double(double)>;

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

double RefRelu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
double RefElu(double x) { return x < 0 ? std::expm1(x) : x; }
double RefSelu(double x) { return x < 0 ? kSeluScale * kSeluAlpha * std::expm1(x) : kSeluScale * x; }
Fn RefLeaky(double alpha) {
  return [alpha](double x) { return x > 0 ? x : alpha * x; };
}
// log(1 + e^x), stable for any x.
double RefSoftplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
double RefSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The shapes every element-wise op is run on: odd sizes, a scalar, empty
// tensors, and one above the parallel threshold.
const std::vector<Dims>& ElementwiseShapes() {
  static const std::vector<Dims> shapes = {Dims{7}, Dims{3, 5}, Dims{}, Dims{0}, Dims{2, 0, 3},
                                           Dims{5, 3, 2, 7}, Dims{211, 173}};
  return shapes;
}

template <typename T>
void CheckActivation(const std::string& op, const Fn& ref, const std::string& attrs,
                     std::mt19937* rng, int threads = 2) {
  const std::string tattr = TypeAttr("T", DtName(Dt<T>::value)) + attrs;
  for (const Dims& d : ElementwiseShapes()) {
    SCOPED_TRACE(op + " " + TensorShape(d).DebugString());
    std::vector<double> x = Uniform(NumElements(d), -8, 8, rng);
    if (!x.empty()) x[0] = 0;  // the kink of every piecewise function
    std::vector<double> want;
    for (double v : x) want.push_back(ref(static_cast<double>(static_cast<T>(v))));
    std::vector<Tensor> out = RunNode(op, {MakeT<T>(d, x)}, tattr, 1, threads);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), Dt<T>::value);
    EXPECT_EQ(DimsOf(out[0]), d);
    ExpectClose<T>(out[0], want, RelTol<T>(), RelTol<T>());
  }
}

TEST(ActivationTest, Relu6AllTypes) {
  std::mt19937 rng(100);
  CheckActivation<float>("Relu6", RefRelu6, "", &rng);
  CheckActivation<double>("Relu6", RefRelu6, "", &rng);
  CheckActivation<int32_t>("Relu6", RefRelu6, "", &rng);
  CheckActivation<int64_t>("Relu6", RefRelu6, "", &rng);
}

TEST(ActivationTest, EluSeluSoftplus) {
  std::mt19937 rng(101);
  CheckActivation<float>("Elu", RefElu, "", &rng);
  CheckActivation<double>("Elu", RefElu, "", &rng);
  CheckActivation<float>("Selu", RefSelu, "", &rng);
  CheckActivation<double>("Selu", RefSelu, "", &rng);
  CheckActivation<float>("Softplus", RefSoftplus, "", &rng);
  CheckActivation<double>("Softplus", RefSoftplus, "", &rng);
}

TEST(ActivationTest, LeakyReluDefaultAndCustomAlpha) {
  std::mt19937 rng(102);
  // alpha is a float attr: double kernels see 0.2f, not 0.2.
  CheckActivation<float>("LeakyRelu", RefLeaky(double(0.2f)), "", &rng);  // default alpha
  CheckActivation<double>("LeakyRelu", RefLeaky(double(0.2f)), "", &rng);
  CheckActivation<float>("LeakyRelu", RefLeaky(double(0.01f)), FloatAttr("alpha", 0.01f), &rng);
  CheckActivation<double>("LeakyRelu", RefLeaky(double(1.5f)), FloatAttr("alpha", 1.5f), &rng);
}

TEST(ActivationTest, SingleThreadSession) {
  std::mt19937 rng(103);
  CheckActivation<float>("Elu", RefElu, "", &rng, 1);
  CheckActivation<float>("Relu6", RefRelu6, "", &rng, 1);
}

TEST(ActivationTest, SoftplusIsStableAtExtremes) {
  const std::vector<double> x = {-1000, -100, -30, -15, -13, 13, 15, 30, 100, 1000, 88, -88};
  for (bool dbl : {false, true}) {
    std::vector<Tensor> out = dbl ? RunNode("Softplus", {MakeT<double>({12}, x)}, TypeAttr("T", "DT_DOUBLE"))
                                  : RunNode("Softplus", {MakeT<float>({12}, x)}, TypeAttr("T", "DT_FLOAT"));
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> want;
    for (double v : x) want.push_back(RefSoftplus(v));
    if (dbl) {
      ExpectClose<double>(out[0], want, 1e-12, 1e-300);
    } else {
      ExpectClose<float>(out[0], want, 2e-6, 1e-38);
    }
    const std::vector<double> got = dbl ? Doubles<double>(out[0]) : Doubles<float>(out[0]);
    for (double g : got) EXPECT_TRUE(std::isfinite(g));
    // e^-1000 underflows to 0, but never below.
    for (double g : got) EXPECT_GE(g, 0.0);
  }
}

TEST(ActivationTest, ReusesADyingInputBuffer) {
  // Relu6(Neg(x)): Neg's output dies into Relu6, which may write in place;
  // the values must be right either way, over several runs.
  const std::string g = PlaceholderNode("x", "DT_FLOAT") +
                        NodeText("neg", "Neg", {"x"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("r", "Relu6", {"neg"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("e", "Elu", {"r"}, TypeAttr("T", "DT_FLOAT"));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 2);
  ASSERT_NE(s, nullptr);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out;
    Tensor x = MakeT<float>({4}, {-7, -3, 0.5, 2});
    ASSERT_TRUE(s->Run({{"x:0", x}}, {"e:0"}, {}, &out).ok());
    ExpectClose<float>(out[0], {6, 3, 0, 0}, 0);
    ExpectClose<float>(x, {-7, -3, 0.5, 2}, 0);  // the fed value is untouched
  }
}

// ------------------------------------------------------------ gradients

// Gradient op `op`(a, b) against ref(a, b), where the inputs come from
// make(x) for random x (e.g. b = f(x) for the ops taking outputs).
struct GradCase {
  std::string op;
  std::string attrs;
  // Inputs from a random gradient g and a random point x.
  std::function<void(double g, double x, double* in0, double* in1)> inputs;
  std::function<double(double in0, double in1)> ref;
  // The same gradient from a central finite difference of the naive
  // forward (for an input away from kinks), or null.
  std::function<double(double g, double x)> numeric;
};

double CentralDiff(const Fn& f, double x) {
  const double h = 1e-6 * std::max(1.0, std::fabs(x));
  return (f(x + h) - f(x - h)) / (2 * h);
}

std::vector<GradCase> GradCases() {
  auto gx = [](double g, double x, double* a, double* b) { *a = g; *b = x; };
  auto gy = [](const Fn& f) {
    return [f](double g, double x, double* a, double* b) { *a = g; *b = f(x); };
  };
  auto fd = [](const Fn& f) {
    return [f](double g, double x) { return g * CentralDiff(f, x); };
  };
  std::vector<GradCase> c;
  c.push_back({"ReluGrad", "", gx, [](double g, double x) { return x > 0 ? g : 0.0; },
               fd([](double x) { return std::max(x, 0.0); })});
  c.push_back({"Relu6Grad", "", gx, [](double g, double x) { return x > 0 && x < 6 ? g : 0.0; },
               fd(RefRelu6)});
  c.push_back({"EluGrad", "", gy(RefElu),
               [](double g, double y) { return y < 0 ? g * (y + 1) : g; }, fd(RefElu)});
  c.push_back({"SeluGrad", "", gy(RefSelu),
               [](double g, double y) {
                 return y < 0 ? g * (y + kSeluScale * kSeluAlpha) : g * kSeluScale;
               },
               fd(RefSelu)});
  c.push_back({"LeakyReluGrad", "", gx, [](double g, double x) { return x > 0 ? g : double(0.2f) * g; },
               fd(RefLeaky(double(0.2f)))});
  c.push_back({"LeakyReluGrad", FloatAttr("alpha", 0.3f), gx,
               [](double g, double x) { return x > 0 ? g : double(0.3f) * g; },
               fd(RefLeaky(double(0.3f)))});
  c.push_back({"SoftplusGrad", "", gx, [](double g, double x) { return g / (1 + std::exp(-x)); },
               fd(RefSoftplus)});
  // SigmoidGrad / TanhGrad take (y, dy).
  c.push_back({"SigmoidGrad", "",
               [](double g, double x, double* a, double* b) { *a = RefSigmoid(x); *b = g; },
               [](double y, double dy) { return dy * y * (1 - y); },
               [](double g, double x) { return g * CentralDiff(RefSigmoid, x); }});
  c.push_back({"TanhGrad", "",
               [](double g, double x, double* a, double* b) { *a = std::tanh(x); *b = g; },
               [](double y, double dy) { return dy * (1 - y * y); },
               [](double g, double x) {
                 return g * CentralDiff([](double v) { return std::tanh(v); }, x);
               }});
  return c;
}

template <typename T>
void CheckGrad(const GradCase& c, std::mt19937* rng, int threads = 2) {
  const std::string attrs = TypeAttr("T", DtName(Dt<T>::value)) + c.attrs;
  for (const Dims& d : ElementwiseShapes()) {
    SCOPED_TRACE(c.op + c.attrs + " " + TensorShape(d).DebugString());
    const int64_t n = NumElements(d);
    const std::vector<double> g = Uniform(n, -3, 3, rng), x = Uniform(n, -8, 8, rng);
    std::vector<double> a(n), b(n), want(n), numeric(n);
    for (int64_t i = 0; i < n; ++i) {
      c.inputs(g[i], x[i], &a[i], &b[i]);
      // The kernel sees the inputs rounded to T; so does the reference.
      a[i] = static_cast<double>(static_cast<T>(a[i]));
      b[i] = static_cast<double>(static_cast<T>(b[i]));
      want[i] = c.ref(a[i], b[i]);
    }
    std::vector<Tensor> out = RunNode(c.op, {MakeT<T>(d, a), MakeT<T>(d, b)}, attrs, 1, threads);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), d);
    ExpectClose<T>(out[0], want, RelTol<T>(), RelTol<T>());
    if constexpr (std::is_same_v<T, double>) {
      // Against the finite difference of the forward at the exact x (away
      // from the kinks at 0 and 6, which finite differences straddle).
      if (!c.numeric) continue;
      std::vector<double> a2(n), b2(n), fd_want;
      std::vector<int64_t> keep;
      for (int64_t i = 0; i < n; ++i) {
        if (std::fabs(x[i]) < 1e-3 || std::fabs(x[i] - 6) < 1e-3) continue;
        keep.push_back(i);
      }
      std::vector<double> ka, kb;
      for (int64_t i : keep) {
        double p, q;
        c.inputs(g[i], x[i], &p, &q);
        ka.push_back(p);
        kb.push_back(q);
        fd_want.push_back(c.numeric(g[i], x[i]));
      }
      const Dims kd = {static_cast<int64_t>(keep.size())};
      std::vector<Tensor> out2 = RunNode(c.op, {MakeT<T>(kd, ka), MakeT<T>(kd, kb)}, attrs, 1, threads);
      ASSERT_EQ(out2.size(), 1u);
      ExpectClose<T>(out2[0], fd_want, 1e-6, 1e-7);
    }
  }
}

TEST(ActivationGradTest, FloatAndDoubleAgainstReferenceAndFiniteDifferences) {
  std::mt19937 rng(110);
  for (const GradCase& c : GradCases()) {
    CheckGrad<float>(c, &rng);
    CheckGrad<double>(c, &rng);
  }
}

TEST(ActivationGradTest, IntegerReluGrads) {
  std::mt19937 rng(111);
  const std::vector<GradCase> cases = GradCases();
  for (const GradCase& c : cases) {
    if (c.op != "ReluGrad" && c.op != "Relu6Grad") continue;
    CheckGrad<int32_t>(c, &rng);
    CheckGrad<int64_t>(c, &rng);
  }
}

TEST(ActivationGradTest, SingleThreadSession) {
  std::mt19937 rng(112);
  for (const GradCase& c : GradCases()) CheckGrad<float>(c, &rng, 1);
}

TEST(ActivationGradTest, ShapeMismatchFails) {
  const Tensor a = MakeT<float>({2, 3}, std::vector<double>(6, 1));
  const Tensor b = MakeT<float>({3, 2}, std::vector<double>(6, 1));
  const Tensor c = MakeT<float>({5}, std::vector<double>(5, 1));
  for (const char* op : {"ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "LeakyReluGrad",
                         "SoftplusGrad"}) {
    SCOPED_TRACE(op);
    EXPECT_ERROR(TryNode(op, {a, b}, TypeAttr("T", "DT_FLOAT"), "my_grad"), Code::kInvalidArgument,
                 "g and a must be the same size", "my_grad");
  }
  for (const char* op : {"SigmoidGrad", "TanhGrad"}) {
    SCOPED_TRACE(op);
    EXPECT_ERROR(TryNode(op, {a, c}, TypeAttr("T", "DT_FLOAT"), "my_grad"), Code::kInvalidArgument,
                 "must have same number of elements", "my_grad");
  }
}

TEST(ActivationGradTest, ReluGradsMultiplyLikeTensorFlow) {
  // gradients * (features > 0): a NaN or infinite gradient at a closed
  // unit gives NaN, not 0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* op : {"ReluGrad", "Relu6Grad"}) {
    SCOPED_TRACE(op);
    std::vector<Tensor> out = RunNode(op, {MakeT<float>({4}, {nan, inf, 2, nan}), MakeT<float>({4}, {-1, -1, -1, 1})},
                                      TypeAttr("T", "DT_FLOAT"));
    ASSERT_EQ(out.size(), 1u);
    ExpectClose<float>(out[0], {nan, nan, 0, nan}, 0);
  }
}

TEST(ActivationGradTest, IncompatibleConstantShapesFailAtLoad) {
  const std::string g = ConstFloat("a", {2, 3}, std::vector<float>(6, 1)) +
                        ConstFloat("b", {3, 2}, std::vector<float>(6, 1)) +
                        NodeText("bad", "ReluGrad", {"a", "b"}, TypeAttr("T", "DT_FLOAT"));
  EXPECT_ERROR(TryRun(g, {}, {"bad:0"}), Code::kInvalidArgument, "Dimension 0 in both shapes must be equal");
}

// ------------------------------------------------------------ LogSoftmax

template <typename T>
void CheckLogSoftmax(const Dims& d, const std::vector<double>& x, int threads = 2) {
  SCOPED_TRACE(TensorShape(d).DebugString());
  const int64_t cols = d.back();
  const int64_t rows = cols == 0 ? 0 : NumElements(d) / cols;
  std::vector<double> xs(x.size()), want(x.size());
  for (size_t i = 0; i < x.size(); ++i) xs[i] = static_cast<double>(static_cast<T>(x[i]));
  for (int64_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xs[r * cols + c]);
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xs[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = xs[r * cols + c] - m - std::log(s);
  }
  std::vector<Tensor> out =
      RunNode("LogSoftmax", {MakeT<T>(d, x)}, TypeAttr("T", DtName(Dt<T>::value)), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectClose<T>(out[0], want, RelTol<T>(), 4 * RelTol<T>());
}

TEST(LogSoftmaxTest, MatchesNaiveReference) {
  std::mt19937 rng(120);
  for (const Dims& d : {Dims{5, 7}, Dims{1}, Dims{3, 1}, Dims{2, 3, 4}, Dims{300, 200}, Dims{0, 5},
                        Dims{4, 0}}) {
    CheckLogSoftmax<float>(d, Uniform(NumElements(d), -10, 10, &rng));
    CheckLogSoftmax<double>(d, Uniform(NumElements(d), -10, 10, &rng));
  }
  CheckLogSoftmax<float>({300, 200}, Uniform(60000, -10, 10, &rng), 1);
}

TEST(LogSoftmaxTest, StableForLargeLogits) {
  CheckLogSoftmax<float>({2, 3}, {1000, 1001, 1002, -1000, -1001, -1002});
  CheckLogSoftmax<double>({1, 4}, {800, 800, 800, 800});
  std::vector<Tensor> out = RunNode("LogSoftmax", {MakeT<float>({1, 2}, {0, -200})}, TypeAttr("T", "DT_FLOAT"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::isfinite(out[0].data<float>()[1]));  // log of an underflowed exp
  EXPECT_NEAR(out[0].data<float>()[1], -200.0, 1e-3);
}

TEST(LogSoftmaxTest, ScalarFails) {
  EXPECT_ERROR(TryNode("LogSoftmax", {Tensor::Scalar<float>(GR_FLOAT, 1.f)}, TypeAttr("T", "DT_FLOAT"),
                       "my_lsm"),
               Code::kInvalidArgument, "logits must have >= 1 dimension", "my_lsm");
}

// ----------------------------------------------------------- BiasAddGrad

template <typename T>
void CheckBiasAddGrad(const Dims& d, bool nchw, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(TensorShape(d).DebugString() + (nchw ? " NCHW" : " NHWC"));
  const int ch_dim = nchw ? 1 : static_cast<int>(d.size()) - 1;
  const int64_t C = d[ch_dim];
  std::vector<double> x = Uniform(NumElements(d), -5, 5, rng);
  if constexpr (!std::is_floating_point_v<T>)
    for (double& v : x) v = std::round(v * 10);
  std::vector<double> want(static_cast<size_t>(C), 0.0);
  for (int64_t i = 0; i < NumElements(d); ++i) {
    // The channel of flat index i: divide by the dims after the channel.
    int64_t after = 1;
    for (size_t k = ch_dim + 1; k < d.size(); ++k) after *= d[k];
    want[(i / after) % C] += static_cast<double>(static_cast<T>(x[i]));
  }
  std::vector<Tensor> out =
      RunNode("BiasAddGrad", {MakeT<T>(d, x)},
              TypeAttr("T", DtName(Dt<T>::value)) + StrAttr("data_format", nchw ? "NCHW" : "NHWC"), 1,
              threads);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{C}));
  ExpectClose<T>(out[0], want, sizeof(T) == 4 ? 1e-5 : 1e-12, sizeof(T) == 4 ? 1e-3 : 1e-9);
}

TEST(BiasAddGradTest, AllFormatsRanksAndTypes) {
  std::mt19937 rng(130);
  for (bool nchw : {false, true}) {
    for (const Dims& d : {Dims{5, 3}, Dims{2, 3, 4}, Dims{2, 3, 4, 5}, Dims{2, 3, 1, 4, 3},
                          Dims{0, 4}, Dims{3, 0, 2}, Dims{64, 37, 5, 3}, Dims{3, 50, 33, 17},
                          // NHWC with few channels sums whole periods of rows first (a
                          // multiple of C and of 8 elements): rows left over, C = 1, the
                          // longest period (C = 63) and the plain path (C = 64).
                          Dims{7, 13, 11, 6}, Dims{5, 7, 11, 1}, Dims{9, 9, 7, 63}, Dims{4, 9, 9, 64}}) {
      CheckBiasAddGrad<float>(d, nchw, &rng);
      CheckBiasAddGrad<double>(d, nchw, &rng);
    }
    CheckBiasAddGrad<int32_t>({4, 3, 5}, nchw, &rng);
    CheckBiasAddGrad<int32_t>({7, 13, 11, 6}, nchw, &rng);
    CheckBiasAddGrad<int64_t>({2, 3, 4, 5}, nchw, &rng);
    CheckBiasAddGrad<float>({64, 37, 5, 3}, nchw, &rng, 1);
  }
}

TEST(BiasAddGradTest, DefaultIsNhwcAndRank1Fails) {
  std::vector<Tensor> out =
      RunNode("BiasAddGrad", {MakeT<float>({2, 2}, {1, 2, 3, 4})}, TypeAttr("T", "DT_FLOAT"));
  ASSERT_EQ(out.size(), 1u);
  ExpectClose<float>(out[0], {4, 6}, 0);
  EXPECT_ERROR(TryNode("BiasAddGrad", {MakeT<float>({3}, {1, 2, 3})}, TypeAttr("T", "DT_FLOAT"), "bg"),
               Code::kInvalidArgument, "Input tensor must be at least 2D", "bg");
}

// ----------------------------------------------------------------- losses

// Dense softmax cross entropy over [rows, cols] after broadcasting; the
// inputs are indexed as numpy would.
void RefXent(const std::vector<double>& f, const Dims& fd, const std::vector<double>& l,
             const Dims& ld, const Dims& od, std::vector<double>* loss, std::vector<double>* bp) {
  const int64_t rows = od[0], cols = od[1];
  loss->assign(rows, 0);
  bp->assign(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> z(cols), lab(cols);
    for (int64_t c = 0; c < cols; ++c) {
      z[c] = f[RefSourceIndex(fd, {r, c})];
      lab[c] = l[RefSourceIndex(ld, {r, c})];
    }
    const double m = *std::max_element(z.begin(), z.end());
    double s = 0;
    for (double v : z) s += std::exp(v - m);
    for (int64_t c = 0; c < cols; ++c) {
      const double logp = z[c] - m - std::log(s);
      (*loss)[r] -= lab[c] * logp;
      (*bp)[r * cols + c] = std::exp(logp) - lab[c];
    }
  }
}

template <typename T>
void CheckXent(const Dims& fd, const Dims& ld, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(TensorShape(fd).DebugString() + " vs " + TensorShape(ld).DebugString());
  std::vector<double> f = Uniform(NumElements(fd), -6, 6, rng);
  std::vector<double> l = Uniform(NumElements(ld), 0, 1, rng);
  for (double& v : f) v = static_cast<double>(static_cast<T>(v));
  for (double& v : l) v = static_cast<double>(static_cast<T>(v));
  const Dims od = RefBroadcastShape(fd, ld);
  std::vector<double> loss, bp;
  RefXent(f, fd, l, ld, od, &loss, &bp);
  std::vector<Tensor> out = RunNode("SoftmaxCrossEntropyWithLogits", {MakeT<T>(fd, f), MakeT<T>(ld, l)},
                                    TypeAttr("T", DtName(Dt<T>::value)), 2, threads);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{od[0]}));
  EXPECT_EQ(DimsOf(out[1]), od);
  ExpectClose<T>(out[0], loss, 10 * RelTol<T>(), 10 * RelTol<T>());
  ExpectClose<T>(out[1], bp, RelTol<T>(), RelTol<T>());
}

TEST(SoftmaxXentTest, SameShapesAndBroadcasting) {
  std::mt19937 rng(140);
  for (auto [fd, ld] : std::vector<std::pair<Dims, Dims>>{
           {{4, 5}, {4, 5}}, {{1, 7}, {1, 7}}, {{3, 1}, {3, 1}}, {{6, 4}, {4}}, {{6, 4}, {1, 4}},
           {{1, 4}, {6, 4}}, {{6, 1}, {6, 4}}, {{6, 4}, {6, 1}}, {{5, 3}, {}}, {{0, 3}, {0, 3}},
           {{600, 70}, {600, 70}}, {{600, 70}, {70}}}) {
    CheckXent<float>(fd, ld, &rng);
    CheckXent<double>(fd, ld, &rng);
  }
  CheckXent<float>({600, 70}, {600, 70}, &rng, 1);
}

TEST(SoftmaxXentTest, HandCheckedValues) {
  // logits [0, ln 3]: p = [1/4, 3/4]; labels [1, 0]: loss = ln 4.
  std::vector<Tensor> out = RunNode("SoftmaxCrossEntropyWithLogits",
                                    {MakeT<float>({1, 2}, {0, std::log(3.0)}), MakeT<float>({1, 2}, {1, 0})},
                                    TypeAttr("T", "DT_FLOAT"), 2);
  ASSERT_EQ(out.size(), 2u);
  ExpectClose<float>(out[0], {std::log(4.0)}, 1e-6);
  ExpectClose<float>(out[1], {-0.75, 0.75}, 1e-6);
}

TEST(SoftmaxXentTest, StableForLargeLogits) {
  std::vector<Tensor> out = RunNode("SoftmaxCrossEntropyWithLogits",
                                    {MakeT<float>({2, 2}, {1000, 0, -1000, 0}), MakeT<float>({2, 2}, {0, 1, 1, 0})},
                                    TypeAttr("T", "DT_FLOAT"), 2);
  ASSERT_EQ(out.size(), 2u);
  ExpectClose<float>(out[0], {1000, 1000}, 1e-6);
  ExpectClose<float>(out[1], {1, -1, -1, 1}, 1e-6);
}

TEST(SoftmaxXentTest, BadShapesFail) {
  const std::string t = TypeAttr("T", "DT_FLOAT");
  EXPECT_ERROR(TryNode("SoftmaxCrossEntropyWithLogits",
                       {MakeT<float>({2, 3}, std::vector<double>(6)), MakeT<float>({2, 4}, std::vector<double>(8))},
                       t, "xent"),
               Code::kInvalidArgument, "logits and labels must be broadcastable", "xent");
  EXPECT_ERROR(TryNode("SoftmaxCrossEntropyWithLogits",
                       {MakeT<float>({3}, std::vector<double>(3)), MakeT<float>({3}, std::vector<double>(3))},
                       t, "xent"),
               Code::kInvalidArgument, "must be either 2-dimensional", "xent");
  // Known at load: constant operands of rank 3.
  const std::string g = ConstFloat("f", {1, 2, 2}, {1, 2, 3, 4}) + ConstFloat("l", {1, 2, 2}, {1, 0, 0, 1}) +
                        NodeText("xent", "SoftmaxCrossEntropyWithLogits", {"f", "l"}, t);
  EXPECT_ERROR(TryRun(g, {}, {"xent:0"}), Code::kInvalidArgument, "broadcasted with rank 2");
}

template <typename T, typename Index>
void CheckSparseXent(int64_t rows, int64_t cols, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
  std::vector<double> f = Uniform(rows * cols, -6, 6, rng);
  for (double& v : f) v = static_cast<double>(static_cast<T>(v));
  std::uniform_int_distribution<int64_t> pick(0, std::max<int64_t>(cols - 1, 0));
  std::vector<Index> labels(rows);
  std::vector<double> onehot(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r) {
    labels[r] = static_cast<Index>(pick(*rng));
    onehot[r * cols + labels[r]] = 1;
  }
  std::vector<double> loss, bp;
  RefXent(f, {rows, cols}, onehot, {rows, cols}, {rows, cols}, &loss, &bp);
  std::vector<Tensor> out = RunNode(
      "SparseSoftmaxCrossEntropyWithLogits",
      {MakeT<T>({rows, cols}, f), MakeTensor<Index>(Dt<Index>::value, {rows}, labels)},
      TypeAttr("T", DtName(Dt<T>::value)) + TypeAttr("Tlabels", DtName(Dt<Index>::value)), 2, threads);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{rows}));
  EXPECT_EQ(DimsOf(out[1]), (Dims{rows, cols}));
  ExpectClose<T>(out[0], loss, 10 * RelTol<T>(), 10 * RelTol<T>());
  ExpectClose<T>(out[1], bp, RelTol<T>(), RelTol<T>());
}

TEST(SparseSoftmaxXentTest, AllTypes) {
  std::mt19937 rng(150);
  for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{4, 5}, {1, 1}, {7, 3}, {0, 4}, {600, 70}}) {
    CheckSparseXent<float, int32_t>(r, c, &rng);
    CheckSparseXent<float, int64_t>(r, c, &rng);
    CheckSparseXent<double, int32_t>(r, c, &rng);
    CheckSparseXent<double, int64_t>(r, c, &rng);
  }
  CheckSparseXent<float, int64_t>(600, 70, &rng, 1);
}

TEST(SparseSoftmaxXentTest, DefaultLabelTypeIsInt64) {
  const std::string g = PlaceholderNode("in0", "DT_FLOAT") + PlaceholderNode("in1", "DT_INT64") +
                        NodeText("n", "SparseSoftmaxCrossEntropyWithLogits", {"in0", "in1"},
                                 TypeAttr("T", "DT_FLOAT"));
  std::vector<Tensor> out = RunOps(g,
                                   {{"in0:0", MakeT<float>({1, 2}, {0, std::log(3.0)})},
                                    {"in1:0", MakeTensor<int64_t>(GR_INT64, {1}, {1})}},
                                   {"n:0", "n:1"});
  ASSERT_EQ(out.size(), 2u);
  ExpectClose<float>(out[0], {std::log(4.0 / 3.0)}, 1e-6);
  ExpectClose<float>(out[1], {0.25, -0.25}, 1e-6);
}

TEST(SparseSoftmaxXentTest, LabelOutOfRangeFailsAndSessionSurvives) {
  const std::string attrs = TypeAttr("T", "DT_FLOAT") + TypeAttr("Tlabels", "DT_INT32");
  const Tensor f = MakeT<float>({3, 4}, std::vector<double>(12, 0.5));
  EXPECT_ERROR(TryNode("SparseSoftmaxCrossEntropyWithLogits",
                       {f, MakeTensor<int32_t>(GR_INT32, {3}, {0, 4, 1})}, attrs, "sxent", 2),
               Code::kInvalidArgument, "Received a label value of 4",
               "which is outside the valid range of [0, 4)", "sxent");
  EXPECT_ERROR(TryNode("SparseSoftmaxCrossEntropyWithLogits",
                       {f, MakeTensor<int32_t>(GR_INT32, {3}, {0, -1, 7})}, attrs, "sxent", 2),
               Code::kInvalidArgument, "Received a label value of -1", "[0, 4)");
  // The same session runs again after the error.
  std::vector<DataType> dts = {GR_FLOAT, GR_INT32};
  std::unique_ptr<Session> s =
      CreateSession(ParseGraph(OneNodeGraph("SparseSoftmaxCrossEntropyWithLogits", dts, attrs)), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_FALSE(s->Run(FeedsFor({f, MakeTensor<int32_t>(GR_INT32, {3}, {9, 0, 0})}), {"n:0"}, {}, &out).ok());
  ASSERT_TRUE(s->Run(FeedsFor({f, MakeTensor<int32_t>(GR_INT32, {3}, {3, 0, 0})}), {"n:0"}, {}, &out).ok());
  ExpectClose<float>(out[0], std::vector<double>(3, std::log(4.0)), 1e-6);
}

TEST(SparseSoftmaxXentTest, BadShapesFail) {
  const std::string attrs = TypeAttr("T", "DT_FLOAT") + TypeAttr("Tlabels", "DT_INT32");
  EXPECT_ERROR(TryNode("SparseSoftmaxCrossEntropyWithLogits",
                       {MakeT<float>({3}, {1, 2, 3}), MakeTensor<int32_t>(GR_INT32, {3}, {0, 0, 0})}, attrs,
                       "sx", 2),
               Code::kInvalidArgument, "logits must be 2-D");
  EXPECT_ERROR(TryNode("SparseSoftmaxCrossEntropyWithLogits",
                       {MakeT<float>({3, 2}, std::vector<double>(6)), MakeTensor<int32_t>(GR_INT32, {2}, {0, 0})},
                       attrs, "sx", 2),
               Code::kInvalidArgument, "logits and labels must have the same first dimension");
  EXPECT_ERROR(TryNode("SparseSoftmaxCrossEntropyWithLogits",
                       {MakeT<float>({2, 0}, {}), MakeTensor<int32_t>(GR_INT32, {2}, {0, 0})}, attrs, "sx", 2),
               Code::kInvalidArgument, "Must have at least one class");
}

}  // namespace
}  // namespace graphrt
