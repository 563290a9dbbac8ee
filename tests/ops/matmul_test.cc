// Matrix products on the CPU through real sessions: MatMul (float, double,
// int32, int64, bfloat16), BatchMatMulV2 (broadcast batch dims),
// BatchMatMul, and _FusedMatMul (bias + activation).
//
// Expected values come from naive references in this file (triple loops,
// double accumulation, indices by division). Inputs are random with fixed
// seeds; bfloat16 inputs are rounded first and the reference uses the
// rounded values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT: the op-test vocabulary

// ---------------------------------------------------------------- helpers

// bfloat16 values in tests: a distinct type so that templates can tell it
// from uint16_t data.
struct Bf16 {
  uint16_t bits;
};

uint16_t ToBf16Bits(float f) {  // round to nearest, ties to even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return static_cast<uint16_t>(u >> 16);
}
float FromBf16Bits(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// op_test_util's dtype map, plus bfloat16.
template <typename T>
struct TypeInfo : Dt<T> {};
template <>
struct TypeInfo<Bf16> {
  static constexpr DataType value = GR_BFLOAT16;
  static constexpr const char* name = "DT_BFLOAT16";
};

// Random values as doubles, exactly representable in T (bf16-rounded for
// bfloat16, small integers for integer types).
template <typename T>
std::vector<double> RandomFor(int64_t n, std::mt19937* rng) {
  std::vector<double> v(static_cast<size_t>(n));
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> d(-9, 9);
    for (auto& x : v) x = d(*rng);
  } else {
    std::uniform_real_distribution<double> d(-2.0, 2.0);
    for (auto& x : v) {
      x = d(*rng);
      if constexpr (std::is_same_v<T, Bf16>) x = FromBf16Bits(ToBf16Bits(static_cast<float>(x)));
      if constexpr (std::is_same_v<T, float>) x = static_cast<float>(x);
    }
  }
  return v;
}

template <typename T>
Tensor ToTensor(const Dims& dims, const std::vector<double>& v) {
  Tensor t(TypeInfo<T>::value, TensorShape(dims));
  EXPECT_EQ(t.NumElements(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, Bf16>) {
      t.data<uint16_t>()[i] = ToBf16Bits(static_cast<float>(v[i]));
    } else {
      t.data<T>()[i] = static_cast<T>(v[i]);
    }
  }
  return t;
}

template <typename T>
double ValueAt(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, Bf16>) {
    return FromBf16Bits(t.data<uint16_t>()[i]);
  } else {
    return static_cast<double>(t.data<T>()[i]);
  }
}

// want[i] with a scale for the tolerance (sum of |a||b| of the dot product).
struct Expected {
  Dims dims;
  std::vector<double> values;
  std::vector<double> scale;
};

template <typename T>
void ExpectClose(const Tensor& got, const Expected& want, double rel) {
  ASSERT_EQ(got.dtype(), TypeInfo<T>::value);
  ASSERT_EQ(DimsOf(got), want.dims);
  for (size_t i = 0; i < want.values.size(); ++i) {
    const double g = ValueAt<T>(got, static_cast<int64_t>(i));
    if constexpr (std::is_integral_v<T>) {
      ASSERT_EQ(g, want.values[i]) << "at flat index " << i;
    } else {
      // Accumulation error grows with the sum of |terms|; bfloat16 adds the
      // rounding of the result itself (2^-9 relative).
      const double result_rel = std::is_same_v<T, Bf16> ? 4e-3 : rel;
      ASSERT_NEAR(g, want.values[i], rel * want.scale[i] + result_rel * std::fabs(want.values[i]))
          << "at flat index " << i;
    }
  }
}

template <typename T>
constexpr double Tolerance() {
  if constexpr (std::is_same_v<T, float>) return 1e-5;
  if constexpr (std::is_same_v<T, double>) return 1e-12;
  if constexpr (std::is_same_v<T, Bf16>) return 1e-5;  // f32 accumulation (see ExpectClose)
  return 0;
}

// Element (i, j) of op(M) for row-major M of `rows` x `cols` as stored.
double At(const std::vector<double>& m, int64_t cols, bool transposed, int64_t i, int64_t j) {
  return transposed ? m[static_cast<size_t>(j * cols + i)] : m[static_cast<size_t>(i * cols + j)];
}

std::string BoolAttr(const std::string& key, bool v) {
  return "attr { key: \"" + key + "\" value { b: " + (v ? "true" : "false") + " } } ";
}

std::string ShapedPlaceholder(const std::string& name, const std::string& dt, const Dims& dims) {
  return NodeText(name, "Placeholder", {},
                  TypeAttr("dtype", dt) + "attr { key: \"shape\" value { shape " + ShapeProto(dims) +
                      " } } ");
}

// =================================================================== MatMul

std::string MatMulGraph(const std::string& dt, bool ta, bool tb) {
  return PlaceholderNode("a", dt) + PlaceholderNode("b", dt) +
         NodeText("mm", "MatMul", {"a", "b"},
                  TypeAttr("T", dt) + BoolAttr("transpose_a", ta) + BoolAttr("transpose_b", tb));
}

// C = op(A) op(B) with A stored (ta ? k x m : m x k), B (tb ? n x k : k x n).
Expected RefGemm(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t k,
                 int64_t n, bool ta, bool tb) {
  Expected e;
  e.dims = {m, n};
  e.values.assign(static_cast<size_t>(m * n), 0.0);
  e.scale.assign(static_cast<size_t>(m * n), 0.0);
  const int64_t a_cols = ta ? m : k, b_cols = tb ? k : n;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = At(a, a_cols, ta, i, p) * At(b, b_cols, tb, p, j);
        s += x;
        mag += std::fabs(x);
      }
      e.values[static_cast<size_t>(i * n + j)] = s;
      e.scale[static_cast<size_t>(i * n + j)] = mag;
    }
  }
  return e;
}

template <typename T>
void CheckMatMul(int64_t m, int64_t k, int64_t n, bool ta, bool tb, std::mt19937* rng,
                 int threads = 2) {
  SCOPED_TRACE(std::string("MatMul ") + TypeInfo<T>::name + " m=" + std::to_string(m) +
               " k=" + std::to_string(k) + " n=" + std::to_string(n) + (ta ? " ta" : "") +
               (tb ? " tb" : "") + " threads=" + std::to_string(threads));
  const std::vector<double> a = RandomFor<T>(m * k, rng);
  const std::vector<double> b = RandomFor<T>(k * n, rng);
  const Dims ad = ta ? Dims{k, m} : Dims{m, k};
  const Dims bd = tb ? Dims{n, k} : Dims{k, n};
  const std::vector<Tensor> out =
      RunOps(MatMulGraph(TypeInfo<T>::name, ta, tb),
             {{"a:0", ToTensor<T>(ad, a)}, {"b:0", ToTensor<T>(bd, b)}}, {"mm:0"}, threads);
  ASSERT_EQ(out.size(), 1u);
  ExpectClose<T>(out[0], RefGemm(a, b, m, k, n, ta, tb), Tolerance<T>());
}

template <typename T>
void CheckMatMulCases(uint32_t seed) {
  std::mt19937 rng(seed);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckMatMul<T>(1, 1, 1, ta, tb, &rng);
      CheckMatMul<T>(3, 5, 7, ta, tb, &rng);
      CheckMatMul<T>(17, 33, 65, ta, tb, &rng);  // float: sgemm, one block
      CheckMatMul<T>(130, 64, 129, ta, tb, &rng);  // split by rows
      CheckMatMul<T>(20, 40, 2001, ta, tb, &rng);  // wide: split by columns
      CheckMatMul<T>(3, 0, 4, ta, tb, &rng);       // empty sum: zeros
      CheckMatMul<T>(0, 5, 3, ta, tb, &rng);
    }
  }
  CheckMatMul<T>(150, 70, 140, false, true, &rng, /*threads=*/1);
}

TEST(MatMulTest, Float) { CheckMatMulCases<float>(1); }
TEST(MatMulTest, Double) { CheckMatMulCases<double>(2); }
TEST(MatMulTest, Int32) { CheckMatMulCases<int32_t>(3); }
TEST(MatMulTest, Int64) { CheckMatMulCases<int64_t>(4); }
TEST(MatMulTest, Bfloat16) { CheckMatMulCases<Bf16>(5); }

// Repeated runs of one session hit the bf16 primitive cache; results stay right.
TEST(MatMulTest, Bfloat16RepeatedRunsAndShapes) {
  std::mt19937 rng(6);
  std::unique_ptr<Session> s =
      testing::CreateSession(testing::ParseGraph(MatMulGraph("DT_BFLOAT16", false, true)), 2);
  ASSERT_NE(s, nullptr);
  for (int run = 0; run < 4; ++run) {
    const int64_t m = run % 2 ? 64 : 200, k = 48, n = 120;
    const std::vector<double> a = RandomFor<Bf16>(m * k, &rng), b = RandomFor<Bf16>(k * n, &rng);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"a:0", ToTensor<Bf16>({m, k}, a)}, {"b:0", ToTensor<Bf16>({n, k}, b)}},
                       {"mm:0"}, {}, &out)
                    .ok());
    ExpectClose<Bf16>(out[0], RefGemm(a, b, m, k, n, false, true), Tolerance<Bf16>());
  }
}

TEST(MatMulTest, ErrorsNameTheProblem) {
  EXPECT_ERROR(TryRun(MatMulGraph("DT_BFLOAT16", false, false),
                      {{"a:0", Tensor(GR_BFLOAT16, TensorShape({2, 3}))},
                       {"b:0", Tensor(GR_BFLOAT16, TensorShape({4, 5}))}},
                      {"mm:0"}),
               Code::kInvalidArgument, "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]");
  EXPECT_ERROR(TryRun(MatMulGraph("DT_FLOAT", false, false),
                      {{"a:0", Tensor(GR_FLOAT, TensorShape({2}))},
                       {"b:0", Tensor(GR_FLOAT, TensorShape({4, 5}))}},
                      {"mm:0"}),
               Code::kInvalidArgument, "In[0] is not a matrix. Instead it has shape [2]");
}

// ============================================================ BatchMatMul

std::string BatchMatMulGraph(const std::string& op, const std::string& dt, bool adj_x, bool adj_y,
                             const std::string& x_node = "", const std::string& y_node = "") {
  return (x_node.empty() ? PlaceholderNode("x", dt) : x_node) +
         (y_node.empty() ? PlaceholderNode("y", dt) : y_node) +
         NodeText("bmm", op, {"x", "y"},
                  TypeAttr("T", dt) + BoolAttr("adj_x", adj_x) + BoolAttr("adj_y", adj_y));
}

// Reference: every output batch index maps to x's and y's by numpy
// broadcasting of the batch dims; each product by RefGemm.
Expected RefBatchMatMul(const std::vector<double>& x, const Dims& xd, const std::vector<double>& y,
                        const Dims& yd, bool adj_x, bool adj_y) {
  const Dims xb(xd.begin(), xd.end() - 2), yb(yd.begin(), yd.end() - 2);
  const Dims ob = RefBroadcastShape(xb, yb);
  const int64_t xr = xd[xd.size() - 2], xc = xd.back(), yr = yd[yd.size() - 2], yc = yd.back();
  const int64_t m = adj_x ? xc : xr, k = adj_x ? xr : xc, n = adj_y ? yr : yc;
  Expected e;
  e.dims = ob;
  e.dims.push_back(m);
  e.dims.push_back(n);
  const int64_t batches = NumElements(ob);
  for (int64_t bi = 0; bi < batches; ++bi) {
    Dims idx(ob.size());
    int64_t rem = bi;
    for (size_t d = ob.size(); d-- > 0;) {
      idx[d] = rem % ob[d];
      rem /= ob[d];
    }
    const int64_t xi = xb.empty() ? 0 : RefSourceIndex(xb, idx);
    const int64_t yi = yb.empty() ? 0 : RefSourceIndex(yb, idx);
    const std::vector<double> xm(x.begin() + xi * xr * xc, x.begin() + (xi + 1) * xr * xc);
    const std::vector<double> ym(y.begin() + yi * yr * yc, y.begin() + (yi + 1) * yr * yc);
    const Expected one = RefGemm(xm, ym, m, k, n, adj_x, adj_y);
    e.values.insert(e.values.end(), one.values.begin(), one.values.end());
    e.scale.insert(e.scale.end(), one.scale.begin(), one.scale.end());
  }
  return e;
}

template <typename T>
void CheckBatchMatMul(const std::string& op, const Dims& xd, const Dims& yd, bool adj_x,
                      bool adj_y, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE(op + " " + TypeInfo<T>::name + " " + TensorShape(xd).DebugString() + " x " +
               TensorShape(yd).DebugString() + (adj_x ? " adj_x" : "") + (adj_y ? " adj_y" : "") +
               " threads=" + std::to_string(threads));
  const std::vector<double> x = RandomFor<T>(NumElements(xd), rng);
  const std::vector<double> y = RandomFor<T>(NumElements(yd), rng);
  const std::vector<Tensor> out =
      RunOps(BatchMatMulGraph(op, TypeInfo<T>::name, adj_x, adj_y),
             {{"x:0", ToTensor<T>(xd, x)}, {"y:0", ToTensor<T>(yd, y)}}, {"bmm:0"}, threads);
  ASSERT_EQ(out.size(), 1u);
  ExpectClose<T>(out[0], RefBatchMatMul(x, xd, y, yd, adj_x, adj_y), Tolerance<T>());
}

// Shapes given as [batch..., rows, cols] before adjoints: with adj the
// stored matrix is the transpose.
Dims Stored(Dims d, bool adj) {
  if (adj) std::swap(d[d.size() - 1], d[d.size() - 2]);
  return d;
}

template <typename T>
void CheckBatchMatMulCases(uint32_t seed) {
  std::mt19937 rng(seed);
  struct C {
    Dims x, y;  // op(x), op(y) shapes
    bool v1_ok;  // same batch dims (BatchMatMul accepts it too)
  };
  const std::vector<C> cases = {
      {{3, 4}, {4, 5}, true},                 // no batch dims
      {{2, 3, 4}, {2, 4, 5}, true},
      {{1, 1, 1}, {1, 1, 1}, true},
      {{2, 3, 7, 5}, {2, 3, 5, 6}, true},
      {{2, 1, 3, 4}, {5, 4, 6}, false},       // broadcast both ways, ranks differ
      {{3, 4}, {6, 4, 5}, false},             // x broadcast over y's batch
      {{4, 2, 3}, {3, 5}, false},
      {{1, 3, 4}, {7, 4, 2}, false},
      {{0, 3, 4}, {0, 4, 5}, true},           // empty batch
      {{2, 3, 0}, {2, 0, 5}, true},           // empty sum
      {{64, 32, 32}, {64, 32, 32}, true},     // many batches over the pool
      {{1, 130, 70}, {1, 70, 129}, true},     // one big product, split in blocks
      {{3, 1, 40, 60}, {1, 2, 60, 50}, false},
      {{2, 1, 3, 4}, {2, 3, 4, 5}, false},    // one side broadcast inside matching dims
      {{2, 3, 3, 4}, {2, 1, 4, 5}, false},
      {{3, 1, 2, 2, 3}, {1, 4, 1, 3, 2}, false},
  };
  for (const C& c : cases) {
    for (bool adj_x : {false, true}) {
      for (bool adj_y : {false, true}) {
        const Dims xs = Stored(c.x, adj_x), ys = Stored(c.y, adj_y);
        CheckBatchMatMul<T>("BatchMatMulV2", xs, ys, adj_x, adj_y, &rng);
        if (c.v1_ok) CheckBatchMatMul<T>("BatchMatMul", xs, ys, adj_x, adj_y, &rng);
      }
    }
  }
  CheckBatchMatMul<T>("BatchMatMulV2", {4, 100, 60}, {60, 90}, false, false, &rng, /*threads=*/1);
}

TEST(BatchMatMulTest, Float) { CheckBatchMatMulCases<float>(11); }
TEST(BatchMatMulTest, Double) { CheckBatchMatMulCases<double>(12); }
TEST(BatchMatMulTest, Int32) { CheckBatchMatMulCases<int32_t>(13); }
TEST(BatchMatMulTest, Int64) { CheckBatchMatMulCases<int64_t>(14); }
TEST(BatchMatMulTest, Bfloat16) { CheckBatchMatMulCases<Bf16>(15); }

TEST(BatchMatMulTest, KernelErrorsNameTheProblem) {
  auto run = [](const std::string& op, const Dims& xd, const Dims& yd) {
    return TryRun(BatchMatMulGraph(op, "DT_FLOAT", false, false),
                  {{"x:0", Tensor(GR_FLOAT, TensorShape(xd))},
                   {"y:0", Tensor(GR_FLOAT, TensorShape(yd))}},
                  {"bmm:0"});
  };
  EXPECT_ERROR(run("BatchMatMulV2", {2, 3, 4}, {3, 4, 5}), Code::kInvalidArgument,
               "In[0] and In[1] must have compatible batch dimensions: [2,3,4] vs. [3,4,5]", "bmm");
  EXPECT_ERROR(run("BatchMatMulV2", {4}, {4, 5}), Code::kInvalidArgument,
               "In[0] ndims must be >= 2: 1");
  EXPECT_ERROR(run("BatchMatMulV2", {3, 4}, {5}), Code::kInvalidArgument,
               "In[1] ndims must be >= 2: 1");
  EXPECT_ERROR(run("BatchMatMulV2", {2, 3, 4}, {2, 5, 6}), Code::kInvalidArgument,
               "Matrix size-incompatible: In[0]: [2,3,4], In[1]: [2,5,6]");
  EXPECT_ERROR(run("BatchMatMul", {2, 3, 4}, {4, 5}), Code::kInvalidArgument,
               "In[0] and In[1] has different ndims: [2,3,4] vs. [4,5]");
  EXPECT_ERROR(run("BatchMatMul", {2, 3, 4}, {1, 4, 5}), Code::kInvalidArgument,
               "In[0].dim(0) and In[1].dim(0) must be the same: [2,3,4] vs [1,4,5]");
  EXPECT_ERROR(run("BatchMatMul", {4}, {4}), Code::kInvalidArgument,
               "In[0] and In[1] ndims must be >= 2: 1");
}

// Shape functions: known shapes fail at graph load, and the inferred output
// shape reaches consumers (a MatMul after a rank-3 result must fail).
TEST(BatchMatMulTest, ShapeFunctions) {
  auto load = [](const std::string& op, const Dims& xd, const Dims& yd, bool adj_x,
                 const std::string& tail) {
    return TryRun(BatchMatMulGraph(op, "DT_FLOAT", adj_x, false,
                                   ShapedPlaceholder("x", "DT_FLOAT", xd),
                                   ShapedPlaceholder("y", "DT_FLOAT", yd)) +
                      tail,
                  {{"x:0", Tensor(GR_FLOAT, TensorShape(xd))},
                   {"y:0", Tensor(GR_FLOAT, TensorShape(yd))}},
                  {tail.empty() ? "bmm:0" : "mm:0"});
  };
  EXPECT_ERROR(load("BatchMatMulV2", {2, 3, 4}, {3, 4, 5}, false, ""), Code::kInvalidArgument,
               "Dimensions must be equal, but are 2 and 3", "with input shapes: [2,3,4], [3,4,5]");
  EXPECT_ERROR(load("BatchMatMulV2", {2, 3, 4}, {2, 5, 6}, false, ""), Code::kInvalidArgument,
               "Dimensions must be equal, but are 4 and 5");
  EXPECT_ERROR(load("BatchMatMul", {2, 3, 4}, {1, 4, 5}, false, ""), Code::kInvalidArgument,
               "bmm");
  EXPECT_ERROR(load("BatchMatMulV2", {4}, {4, 5}, false, ""), Code::kInvalidArgument,
               "Shape must be at least rank 2 but is rank 1");
  const std::string mm = ConstFloat("w", {4, 7}, std::vector<float>(28, 1.0f)) +
                         NodeText("mm", "MatMul", {"bmm", "w"}, TypeAttr("T", "DT_FLOAT"));
  // [2,1,3,4] x [5,4,6] -> [2,5,3,6]: rank 4.
  EXPECT_ERROR(load("BatchMatMulV2", {2, 1, 3, 4}, {5, 4, 6}, false, mm), Code::kInvalidArgument,
               "Shape must be rank 2 but is rank 4");
  // adj_x: [5,3]^T x [5,6] -> [3,6]; MatMul with [4,7] sees 6 vs 4.
  EXPECT_ERROR(load("BatchMatMulV2", {5, 3}, {5, 6}, true, mm), Code::kInvalidArgument,
               "Dimensions must be equal, but are 6 and 4");
}

// ============================================================ _FusedMatMul

const char* const kActivations[] = {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};

double RefActivation(const std::string& act, double x, double alpha) {
  if (act == "Relu") return std::max(x, 0.0);
  if (act == "Relu6") return std::min(std::max(x, 0.0), 6.0);
  if (act == "Elu") return x < 0 ? std::exp(x) - 1 : x;
  if (act == "LeakyRelu") return x > 0 ? x : alpha * x;
  if (act == "Tanh") return std::tanh(x);
  if (act == "Sigmoid") return 1 / (1 + std::exp(-x));
  return x;
}

std::string FusedOpsAttr(const std::vector<std::string>& ops) {
  std::string s = "attr { key: \"fused_ops\" value { list { ";
  for (const auto& o : ops) s += "s: \"" + o + "\" ";
  return s + "} } } ";
}

std::string FusedGraph(const std::string& dt, bool ta, bool tb, const std::vector<std::string>& ops,
                       int num_args = 1, float alpha = -1) {
  std::vector<std::string> inputs = {"a", "b"};
  std::string g = PlaceholderNode("a", dt) + PlaceholderNode("b", dt);
  for (int i = 0; i < num_args; ++i) {
    const std::string name = i == 0 ? "bias" : "arg" + std::to_string(i);
    g += PlaceholderNode(name, dt);
    inputs.push_back(name);
  }
  std::string attrs = TypeAttr("T", dt) + BoolAttr("transpose_a", ta) +
                      BoolAttr("transpose_b", tb) + FusedOpsAttr(ops) +
                      "attr { key: \"num_args\" value { i: " + std::to_string(num_args) + " } } ";
  if (alpha >= 0)
    attrs += "attr { key: \"leakyrelu_alpha\" value { f: " + FloatText(alpha) + " } } ";
  return g + NodeText("fmm", "_FusedMatMul", inputs, attrs);
}

template <typename T>
void CheckFused(int64_t m, int64_t k, int64_t n, bool ta, bool tb, const std::string& act,
                std::mt19937* rng, int threads = 2, float alpha = -1) {
  SCOPED_TRACE(std::string("_FusedMatMul ") + TypeInfo<T>::name + " m=" + std::to_string(m) +
               " k=" + std::to_string(k) + " n=" + std::to_string(n) + (ta ? " ta" : "") +
               (tb ? " tb" : "") + " act=" + act + " threads=" + std::to_string(threads));
  const std::vector<double> a = RandomFor<T>(m * k, rng);
  const std::vector<double> b = RandomFor<T>(k * n, rng);
  const std::vector<double> bias = RandomFor<T>(n, rng);
  std::vector<std::string> ops = {"BiasAdd"};
  if (!act.empty()) ops.push_back(act);
  const Dims ad = ta ? Dims{k, m} : Dims{m, k};
  const Dims bd = tb ? Dims{n, k} : Dims{k, n};
  const std::vector<Tensor> out = RunOps(
      FusedGraph(TypeInfo<T>::name, ta, tb, ops, 1, alpha),
      {{"a:0", ToTensor<T>(ad, a)}, {"b:0", ToTensor<T>(bd, b)}, {"bias:0", ToTensor<T>({n}, bias)}},
      {"fmm:0"}, threads);
  ASSERT_EQ(out.size(), 1u);
  Expected e = RefGemm(a, b, m, k, n, ta, tb);
  const double al = alpha >= 0 ? alpha : 0.2;  // the attr's default
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t f = static_cast<size_t>(i * n + j);
      e.scale[f] += std::fabs(bias[static_cast<size_t>(j)]);
      e.values[f] = RefActivation(act, e.values[f] + bias[static_cast<size_t>(j)], al);
    }
  }
  ExpectClose<T>(out[0], e, Tolerance<T>());
}

TEST(FusedMatMulTest, FloatEveryActivation) {
  std::mt19937 rng(21);
  for (const char* act : kActivations) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckFused<float>(3, 4, 5, ta, tb, act, &rng);      // Eigen path
        CheckFused<float>(37, 29, 41, ta, tb, act, &rng);   // one sgemm block
        CheckFused<float>(150, 60, 130, ta, tb, act, &rng);  // split by rows
      }
    }
    CheckFused<float>(20, 30, 1500, false, false, act, &rng);  // split by columns
    CheckFused<float>(2100, 20, 64, false, true, act, &rng);   // several stripes per block
    CheckFused<float>(2100, 20, 64, true, false, act, &rng, /*threads=*/1);
    CheckFused<float>(4, 0, 6, false, false, act, &rng);       // empty sum: act(bias)
    CheckFused<float>(0, 3, 6, false, false, act, &rng);
  }
  CheckFused<float>(50, 40, 30, false, false, "LeakyRelu", &rng, 2, 0.01f);
  CheckFused<float>(50, 40, 30, true, true, "LeakyRelu", &rng, 2, 1.7f);
}

TEST(FusedMatMulTest, Bfloat16EveryActivation) {
  std::mt19937 rng(22);
  for (const char* act : kActivations) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckFused<Bf16>(5, 7, 9, ta, tb, act, &rng);
        CheckFused<Bf16>(150, 60, 130, ta, tb, act, &rng);
      }
    }
    CheckFused<Bf16>(4, 0, 6, false, false, act, &rng);
  }
  CheckFused<Bf16>(50, 40, 30, false, false, "LeakyRelu", &rng, 2, 0.3f);
}

// The fused kernel agrees with the unfused ops a graph rewrite replaces.
TEST(FusedMatMulTest, MatchesUnfusedGraph) {
  std::mt19937 rng(23);
  for (const std::string act : {"", "Relu", "Sigmoid"}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int64_t m = 150, k = 70, n = 90;
        const std::vector<double> a = RandomFor<float>(m * k, &rng), b = RandomFor<float>(k * n, &rng),
                                  bias = RandomFor<float>(n, &rng);
        std::vector<std::string> ops = {"BiasAdd"};
        if (!act.empty()) ops.push_back(act);
        std::string g = FusedGraph("DT_FLOAT", ta, tb, ops) +
                        NodeText("mm", "MatMul", {"a", "b"},
                                 TypeAttr("T", "DT_FLOAT") + BoolAttr("transpose_a", ta) +
                                     BoolAttr("transpose_b", tb)) +
                        NodeText("ba", "BiasAdd", {"mm", "bias"}, TypeAttr("T", "DT_FLOAT"));
        std::string last = "ba";
        if (!act.empty()) {
          g += NodeText("act", act, {"ba"}, TypeAttr("T", "DT_FLOAT"));
          last = "act";
        }
        const Dims ad = ta ? Dims{k, m} : Dims{m, k};
        const Dims bd = tb ? Dims{n, k} : Dims{k, n};
        const std::vector<Tensor> out =
            RunOps(g,
                   {{"a:0", ToTensor<float>(ad, a)},
                    {"b:0", ToTensor<float>(bd, b)},
                    {"bias:0", ToTensor<float>({n}, bias)}},
                   {"fmm:0", last + ":0"});
        ASSERT_EQ(out.size(), 2u);
        ASSERT_EQ(DimsOf(out[0]), DimsOf(out[1]));
        for (int64_t i = 0; i < out[0].NumElements(); ++i) {
          const float f = out[0].data<float>()[i], u = out[1].data<float>()[i];
          ASSERT_NEAR(f, u, 1e-5f * (1 + std::fabs(u))) << act << " at " << i;
        }
      }
    }
  }
}

TEST(FusedMatMulTest, ErrorsNameTheProblem) {
  const Tensor a(GR_FLOAT, TensorShape({2, 3})), b(GR_FLOAT, TensorShape({3, 4}));
  const Tensor bias(GR_FLOAT, TensorShape({4}));
  const Feeds feeds = {{"a:0", a}, {"b:0", b}, {"bias:0", bias}};
  EXPECT_ERROR(TryRun(FusedGraph("DT_FLOAT", false, false, {"BiasAdd", "Add"}), feeds, {"fmm:0"}),
               Code::kUnimplemented, "Fusion is not implemented: [BiasAdd,Add]", "fmm");
  EXPECT_ERROR(TryRun(FusedGraph("DT_FLOAT", false, false, {"Relu"}), feeds, {"fmm:0"}),
               Code::kUnimplemented, "Fusion is not implemented: [Relu]");
  EXPECT_ERROR(TryRun(FusedGraph("DT_FLOAT", false, false, {"BiasAdd", "Relu", "Tanh"}), feeds,
                      {"fmm:0"}),
               Code::kUnimplemented, "Fusion is not implemented: [BiasAdd,Relu,Tanh]");
  EXPECT_ERROR(TryRun(FusedGraph("DT_BFLOAT16", false, false, {"BiasAdd", "Softplus"}),
                      {{"a:0", Tensor(GR_BFLOAT16, TensorShape({2, 3}))},
                       {"b:0", Tensor(GR_BFLOAT16, TensorShape({3, 4}))},
                       {"bias:0", Tensor(GR_BFLOAT16, TensorShape({4}))}},
                      {"fmm:0"}),
               Code::kUnimplemented, "Fusion is not implemented: [BiasAdd,Softplus]");
  EXPECT_ERROR(TryRun(FusedGraph("DT_FLOAT", false, false, {}), feeds, {"fmm:0"}),
               Code::kInvalidArgument, "Fused MatMul must have at least one fused op.");
  Feeds two_args = feeds;
  two_args.push_back({"arg1:0", bias});
  EXPECT_ERROR(TryRun(FusedGraph("DT_FLOAT", false, false, {"BiasAdd"}, 2), two_args, {"fmm:0"}),
               Code::kInvalidArgument, "Fused MatMul with BiasAdd must have one extra argument");
  // Run-time shape errors, and the session goes on working.
  std::unique_ptr<Session> s = testing::CreateSession(
      testing::ParseGraph(FusedGraph("DT_FLOAT", false, false, {"BiasAdd", "Relu"})), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"a:0", a}, {"b:0", b}, {"bias:0", Tensor(GR_FLOAT, TensorShape({5}))}},
                      {"fmm:0"}, {}, &out),
               Code::kInvalidArgument, "bias size 5 must equal the number of columns", "fmm");
  EXPECT_ERROR(s->Run({{"a:0", a}, {"b:0", b}, {"bias:0", Tensor(GR_FLOAT, TensorShape({1, 4}))}},
                      {"fmm:0"}, {}, &out),
               Code::kInvalidArgument, "bias must be 1-dimensional: [1,4]");
  EXPECT_ERROR(s->Run({{"a:0", a}, {"b:0", a}, {"bias:0", bias}}, {"fmm:0"}, {}, &out),
               Code::kInvalidArgument, "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]");
  const Tensor a1 = MakeTensor<float>(GR_FLOAT, {1, 1}, {2});
  const Tensor b1 = MakeTensor<float>(GR_FLOAT, {1, 2}, {3, -4});
  const Tensor bias1 = MakeTensor<float>(GR_FLOAT, {2}, {1, 1});
  ASSERT_TRUE(s->Run({{"a:0", a1}, {"b:0", b1}, {"bias:0", bias1}}, {"fmm:0"}, {}, &out).ok());
  ExpectValuesEq<float>(out[0], {7, 0});
}

// ============================================ constant weights (packed B)
//
// A float MatMul / _FusedMatMul whose B comes from a Const is marked
// `_weights_const` by the graph pass; products the kernels' rule finds big
// enough (m * n * k >= 4M multiply-adds, m <= 512) then run on oneDNN's
// matmul primitive with B packed once per shape, the others on sgemm.
// GRAPHRT_MATMUL_IMPL=packed (the ctest matmul_test_packed) sends every
// float product to the packed primitive.

bool PackedForced() {
  const char* v = std::getenv("GRAPHRT_MATMUL_IMPL");
  return v != nullptr && std::string(v) == "packed";
}

// What the kernels' rule picks for a constant B.
bool RulePacked(int64_t m, int64_t k, int64_t n) {
  return PackedForced() || (k > 0 && m <= 512 && m * n * k >= (int64_t{4} << 20));
}

std::vector<float> ToFloats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// x (fed, m varies) times Const w (k x n, or n x k with tb), then
// optionally BiasAdd with Const bias and activation `act` (the optimizer
// fuses them into _FusedMatMul). Runs several batches through one session.
struct ConstWeightsCase {
  int64_t k, n;
  std::vector<int64_t> batches;  // m of each Run, in order
  bool ta, tb;
  bool bias;
  std::string act;
  int threads;
};

void CheckConstWeights(const ConstWeightsCase& c, std::mt19937* rng) {
  std::string desc = "k=" + std::to_string(c.k) + " n=" + std::to_string(c.n) +
                     (c.ta ? " ta" : "") + (c.tb ? " tb" : "") + (c.bias ? " bias" : "") +
                     " act=" + c.act + " threads=" + std::to_string(c.threads);
  SCOPED_TRACE(desc);
  const std::vector<double> w = RandomFor<float>(c.k * c.n, rng);
  const std::vector<double> bias = RandomFor<float>(c.n, rng);
  const std::string f = TypeAttr("T", "DT_FLOAT");
  std::string g = PlaceholderNode("x", "DT_FLOAT") +
                  ConstFloat("w", c.tb ? Dims{c.n, c.k} : Dims{c.k, c.n}, ToFloats(w)) +
                  NodeText("w_read", "Identity", {"w"}, f) +
                  NodeText("mm", "MatMul", {"x", "w_read"},
                           f + BoolAttr("transpose_a", c.ta) + BoolAttr("transpose_b", c.tb));
  std::string last = "mm";
  if (c.bias) {
    g += ConstFloat("bias", {c.n}, ToFloats(bias)) + NodeText("ba", "BiasAdd", {"mm", "bias"}, f);
    last = "ba";
    if (!c.act.empty()) {
      std::string attrs = f;
      if (c.act == "LeakyRelu") attrs += "attr { key: 'alpha' value { f: 0.3 } } ";
      g += NodeText("act", c.act, {"ba"}, attrs);
      last = "act";
    }
  }
  std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(g), c.threads);
  ASSERT_NE(s, nullptr);
  for (size_t run = 0; run < c.batches.size(); ++run) {
    const int64_t m = c.batches[run];
    SCOPED_TRACE("run " + std::to_string(run) + " m=" + std::to_string(m) +
                 (RulePacked(m, c.k, c.n) ? " (packed)" : " (sgemm)"));
    const std::vector<double> x = RandomFor<float>(m * c.k, rng);
    std::map<std::string, std::string> ops;
    const Tensor got =
        RunTraced(s.get(), {{"x:0", ToTensor<float>(c.ta ? Dims{c.k, m} : Dims{m, c.k}, x)}}, last + ":0", &ops);
    ASSERT_TRUE(got.IsInitialized());
    EXPECT_EQ(ops[last], c.bias ? "_FusedMatMul" : "MatMul");
    Expected e = RefGemm(x, w, m, c.k, c.n, c.ta, c.tb);
    if (c.bias) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          const size_t at = static_cast<size_t>(i * c.n + j);
          e.scale[at] += std::fabs(bias[static_cast<size_t>(j)]);
          e.values[at] = RefActivation(c.act, e.values[at] + bias[static_cast<size_t>(j)], 0.3);
        }
      }
    }
    ExpectClose<float>(got, e, Tolerance<float>());
  }
}

// Shapes (k, n, batches): the first batches hit the packed path (on 2
// threads by rows when there are at least 16 rows per thread, else by
// columns, blocks of unequal width), the later ones the sgemm path (too
// small, or m > 512), then packed again with the weights packed earlier.
struct ConstShape {
  int64_t k, n;
  std::vector<int64_t> batches;
};
const ConstShape kConstShapes[] = {
    {300, 300, {48, 48, 64, 16, 48}},       // 2 threads: by rows; 16 rows: sgemm
    {600, 600, {24, 24, 8, 24}},            // 2 threads: by columns (304 + 296); 8 rows: sgemm
    {120, 100, {400, 400, 360, 600, 400}},  // by rows; 600 rows: sgemm
};

TEST(ConstWeightsTest, MatMulPackedAndSgemmPaths) {
  std::mt19937 rng(31);
  for (const ConstShape& sh : kConstShapes)
    for (int threads : {1, 2})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          CheckConstWeights({sh.k, sh.n, sh.batches, ta, tb, false, "", threads}, &rng);
  // A small product: sgemm / Eigen whatever the weights.
  CheckConstWeights({20, 30, {5, 7}, false, false, false, "", 2}, &rng);
}

TEST(ConstWeightsTest, FusedMatMulEveryActivation) {
  std::mt19937 rng(32);
  for (const char* act : kActivations) {
    for (const ConstShape& sh : kConstShapes)
      CheckConstWeights({sh.k, sh.n, sh.batches, false, false, true, act, 2}, &rng);
    CheckConstWeights({300, 300, {48, 64}, true, true, true, act, 1}, &rng);
  }
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      CheckConstWeights({120, 100, {400, 16}, ta, tb, true, "Relu", 2}, &rng);
}

// `_weights_const` promises that B never changes, so a kernel on the packed
// path reads B once per shape and then keeps its packed copy. Feeding a
// different B to a node marked by hand breaks the promise on purpose: the
// packed path then still computes with the first B, the sgemm path with the
// new one. This shows which path each shape takes.
TEST(ConstWeightsTest, MarkedWeightsAreReadOncePerShapeOnThePackedPath) {
  std::mt19937 rng(33);
  for (const std::string op : {"MatMul", "_FusedMatMul"}) {
    for (int threads : {1, 2}) {
      const int64_t k = 300, n = 300;
      const std::string f = TypeAttr("T", "DT_FLOAT");
      std::string g = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("w", "DT_FLOAT");
      std::vector<std::string> in = {"x", "w"};
      std::string attrs = f + BoolAttr("_weights_const", true);
      if (op == "_FusedMatMul") {
        g += ConstFloat("bias", {n}, std::vector<float>(static_cast<size_t>(n), 0.0f));
        in.push_back("bias");
        attrs += FusedOpsAttr({"BiasAdd"}) + "attr { key: \"num_args\" value { i: 1 } } ";
      }
      g += NodeText("mm", op, in, attrs);
      std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(g), threads);
      ASSERT_NE(s, nullptr);
      const std::vector<double> w1 = RandomFor<float>(k * n, &rng);
      for (int64_t m : {48, 16}) {  // packed, sgemm (unless forced)
        SCOPED_TRACE(op + " threads=" + std::to_string(threads) + " m=" + std::to_string(m));
        const std::vector<double> x = RandomFor<float>(m * k, &rng);
        const std::vector<double> w2 = RandomFor<float>(k * n, &rng);
        std::vector<Tensor> out;
        ASSERT_TRUE(s->Run({{"x:0", ToTensor<float>({m, k}, x)}, {"w:0", ToTensor<float>({k, n}, w1)}},
                           {"mm:0"}, {}, &out)
                        .ok());
        ExpectClose<float>(out[0], RefGemm(x, w1, m, k, n, false, false), Tolerance<float>());
        ASSERT_TRUE(s->Run({{"x:0", ToTensor<float>({m, k}, x)}, {"w:0", ToTensor<float>({k, n}, w2)}},
                           {"mm:0"}, {}, &out)
                        .ok());
        const bool packed = RulePacked(m, k, n);
        EXPECT_EQ(packed, m == 48 || PackedForced());
        ExpectClose<float>(out[0], RefGemm(x, packed ? w1 : w2, m, k, n, false, false),
                           Tolerance<float>());
      }
    }
  }
}

}  // namespace
}  // namespace graphrt
