// The standard CPU op plugins (array, math, nn) run through real sessions.
//
// Expected values come from naive reference code in this file (plain loops,
// index arithmetic by division, double accumulation), never from the
// kernels' own helpers. Inputs are random with fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
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

// ============================================================== array ops

TEST(ConstOpTest, FloatMatrix) {
  const std::string g = ConstFloat("c", {2, 3}, {1, 2, 3, 4, 5, 6.5f});
  std::vector<Tensor> out = RunOps(g, {}, {"c:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), GR_FLOAT);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 3}));
  ExpectValuesEq<float>(out[0], {1, 2, 3, 4, 5, 6.5f});
}

TEST(ConstOpTest, Int64Scalar) {
  const std::string g = ConstNode("c", "DT_INT64", {}, "int64_val", {"-1234567890123"});
  std::vector<Tensor> out = RunOps(g, {}, {"c:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), GR_INT64);
  EXPECT_EQ(out[0].dims(), 0);
  EXPECT_EQ(out[0].scalar<int64_t>(), -1234567890123LL);
}

TEST(ConstOpTest, Empty) {
  const std::string g = ConstNode("c", "DT_FLOAT", {0, 4}, "float_val", {});
  std::vector<Tensor> out = RunOps(g, {}, {"c:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 4}));
  EXPECT_EQ(out[0].NumElements(), 0);
}

TEST(ConstOpTest, DtypeMismatchFails) {
  // dtype says int32, the value is float.
  const std::string t = "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 }";
  const std::string g =
      NodeText("bad_const", "Const", {},
               TypeAttr("dtype", "DT_INT32") + "attr { key: \"value\" value { " + t + " } } ");
  const Status s = TryRun(g, {}, {"bad_const:0"});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
}

// The Const's buffer is handed out every run; a consumer must never write
// into it (Neg would otherwise flip the constant on each run).
TEST(ConstOpTest, ValueSurvivesRepeatedRunsThroughInPlaceConsumer) {
  const std::string g =
      ConstFloat("c", {4}, {1, -2, 3, -4}) + NodeText("n", "Neg", {"c"}, TypeAttr("T", "DT_FLOAT"));
  std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(g), 2);
  ASSERT_NE(s, nullptr);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"n:0", "c:0"}, {}, &out).ok());
    ExpectValuesEq<float>(out[0], {-1, 2, -3, 4});
    ExpectValuesEq<float>(out[1], {1, -2, 3, -4});
  }
}

TEST(PlaceholderOpTest, ReturnsFedValue) {
  const std::string g = PlaceholderNode("x", "DT_FLOAT") +
                        NodeText("y", "Identity", {"x"}, TypeAttr("T", "DT_FLOAT"));
  Tensor x = testing::MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3});
  std::vector<Tensor> out = RunOps(g, {{"x:0", x}}, {"y:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<float>(out[0], {1, 2, 3});
}

TEST(PlaceholderOpTest, UnfedFailsNamingTheNodeAndDtype) {
  const std::string g = PlaceholderNode("my_input", "DT_FLOAT") +
                        NodeText("y", "Identity", {"my_input"}, TypeAttr("T", "DT_FLOAT"));
  EXPECT_ERROR(TryRun(g, {}, {"y:0"}), Code::kInvalidArgument,
               "You must feed a value for placeholder tensor 'my_input' with dtype float");
}

TEST(PlaceholderOpTest, UnfedInt32WithShapeMentionsShape) {
  const std::string g =
      NodeText("p", "Placeholder", {},
               TypeAttr("dtype", "DT_INT32") +
                   "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: -1 } } } } ");
  EXPECT_ERROR(TryRun(g, {}, {"p:0"}), Code::kInvalidArgument,
               "You must feed a value for placeholder tensor 'p' with dtype int32",
               "and shape [2,?]");
}

TEST(PlaceholderWithDefaultOpTest, DefaultAndFed) {
  const std::string g =
      ConstFloat("d", {2}, {7, 8}) +
      NodeText("p", "PlaceholderWithDefault", {"d"},
               TypeAttr("dtype", "DT_FLOAT") +
                   "attr { key: \"shape\" value { shape { dim { size: -1 } } } } ") +
      NodeText("y", "Identity", {"p"}, TypeAttr("T", "DT_FLOAT"));
  std::vector<Tensor> out = RunOps(g, {}, {"y:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<float>(out[0], {7, 8});
  out = RunOps(g, {{"p:0", testing::MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})}}, {"y:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<float>(out[0], {1, 2, 3});
}

TEST(IdentityOpTest, ManyDtypesAndEmpty) {
  const std::string g = PlaceholderNode("a", "DT_INT64") +
                        NodeText("ia", "Identity", {"a"}, TypeAttr("T", "DT_INT64")) +
                        PlaceholderNode("b", "DT_DOUBLE") +
                        NodeText("ib", "Identity", {"b"}, TypeAttr("T", "DT_DOUBLE")) +
                        PlaceholderNode("s", "DT_STRING") +
                        NodeText("is", "Identity", {"s"}, TypeAttr("T", "DT_STRING"));
  Feeds feeds = {{"a:0", testing::MakeTensor<int64_t>(GR_INT64, {2, 2}, {1, -2, 3, 1LL << 40})},
                 {"b:0", testing::MakeTensor<double>(GR_DOUBLE, {0, 3}, {})},
                 {"s:0", Tensor::StringScalar("hello")}};
  std::vector<Tensor> out = RunOps(g, feeds, {"ia:0", "ib:0", "is:0"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  ExpectValuesEq<int64_t>(out[0], {1, -2, 3, 1LL << 40});
  EXPECT_EQ(DimsOf(out[1]), (Dims{0, 3}));
  EXPECT_EQ(out[2].dtype(), GR_STRING);
  EXPECT_EQ(out[2].string_at(0), "hello");
}

TEST(NoOpTest, RunsAsTarget) {
  const std::string g = ConstFloat("c", {1}, {1}) + NodeText("noop", "NoOp", {"^c"}, "");
  std::unique_ptr<Session> s = testing::CreateSession(testing::ParseGraph(g), 1);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  Status st = s->Run({}, {}, {"noop"}, &out);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_TRUE(out.empty());
}

TEST(ShapeOpTest, Int32AndInt64) {
  const std::string g =
      PlaceholderNode("x", "DT_FLOAT") +
      NodeText("s32", "Shape", {"x"}, TypeAttr("T", "DT_FLOAT")) +
      NodeText("s64", "Shape", {"x"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("out_type", "DT_INT64"));
  Tensor x(GR_FLOAT, TensorShape({2, 3, 4}));
  std::vector<Tensor> out = RunOps(g, {{"x:0", x}}, {"s32:0", "s64:0"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dtype(), GR_INT32);
  EXPECT_EQ(DimsOf(out[0]), (Dims{3}));
  ExpectValuesEq<int32_t>(out[0], {2, 3, 4});
  EXPECT_EQ(out[1].dtype(), GR_INT64);
  ExpectValuesEq<int64_t>(out[1], {2, 3, 4});
}

TEST(ShapeOpTest, ScalarAndEmpty) {
  const std::string g =
      PlaceholderNode("x", "DT_FLOAT") + NodeText("s", "Shape", {"x"}, TypeAttr("T", "DT_FLOAT"));
  std::vector<Tensor> out = RunOps(g, {{"x:0", Tensor::Scalar<float>(GR_FLOAT, 1.f)}}, {"s:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{0}));
  out = RunOps(g, {{"x:0", Tensor(GR_FLOAT, TensorShape({0, 5}))}}, {"s:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<int32_t>(out[0], {0, 5});
}

// x (fed) reshaped to the constant `sizes`.
std::string ReshapeGraph(const std::vector<int32_t>& sizes, const std::string& name = "r") {
  return PlaceholderNode("x", "DT_FLOAT") + ConstInt32("sizes", sizes) +
         NodeText(name, "Reshape", {"x", "sizes"}, TypeAttr("T", "DT_FLOAT"));
}

TEST(ReshapeOpTest, KeepsValuesAndInfersMinusOne) {
  std::vector<float> v = {0, 1, 2, 3, 4, 5};
  Tensor x = testing::MakeTensor<float>(GR_FLOAT, {2, 3}, v);
  struct Case {
    std::vector<int32_t> sizes;
    Dims want;
  };
  for (const Case& c : {Case{{3, 2}, {3, 2}}, Case{{-1}, {6}}, Case{{2, -1, 1}, {2, 3, 1}},
                        Case{{1, 6}, {1, 6}}, Case{{-1, 2}, {3, 2}}}) {
    std::vector<Tensor> out = RunOps(ReshapeGraph(c.sizes), {{"x:0", x}}, {"r:0"});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), c.want);
    ExpectValuesEq<float>(out[0], v);
  }
}

TEST(ReshapeOpTest, Int64ShapeScalarsAndEmpty) {
  // int64 `shape` input, from a placeholder (value unknown at load).
  const std::string g64 = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("sizes", "DT_INT64") +
                          NodeText("r", "Reshape", {"x", "sizes"},
                                   TypeAttr("T", "DT_FLOAT") + TypeAttr("Tshape", "DT_INT64"));
  Tensor x = testing::MakeTensor<float>(GR_FLOAT, {4}, {1, 2, 3, 4});
  std::vector<Tensor> out = RunOps(
      g64, {{"x:0", x}, {"sizes:0", testing::MakeTensor<int64_t>(GR_INT64, {2}, {2, 2})}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  ExpectValuesEq<float>(out[0], {1, 2, 3, 4});

  // [1] -> scalar, scalar -> [1,1].
  out =
      RunOps(ReshapeGraph({}), {{"x:0", testing::MakeTensor<float>(GR_FLOAT, {1}, {9})}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims(), 0);
  ExpectValuesEq<float>(out[0], {9});
  out = RunOps(ReshapeGraph({1, 1}), {{"x:0", Tensor::Scalar<float>(GR_FLOAT, 4.f)}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 1}));

  // Empty tensors.
  Tensor e(GR_FLOAT, TensorShape({0, 6}));
  out = RunOps(ReshapeGraph({3, 0}), {{"x:0", e}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{3, 0}));
  out = RunOps(ReshapeGraph({0, -1}), {{"x:0", e}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 6}));
}

TEST(ReshapeOpTest, ElementCountMismatchFails) {
  Tensor x = testing::MakeTensor<float>(GR_FLOAT, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_ERROR(TryRun(ReshapeGraph({4}, "my_reshape"), {{"x:0", x}}, {"my_reshape:0"}),
               Code::kInvalidArgument,
               "Input to reshape is a tensor with 6 values, but the requested shape has 4",
               "my_reshape", "[2,3]", "[4]");
  EXPECT_ERROR(TryRun(ReshapeGraph({4, -1}, "my_reshape"), {{"x:0", x}}, {"my_reshape:0"}),
               Code::kInvalidArgument, "requested shape requires a multiple of 4", "my_reshape");
  EXPECT_ERROR(TryRun(ReshapeGraph({-1, -1}, "my_reshape"), {{"x:0", x}}, {"my_reshape:0"}),
               Code::kInvalidArgument, "Only one input size may be -1", "my_reshape");
  EXPECT_ERROR(TryRun(ReshapeGraph({-2, 3}, "my_reshape"), {{"x:0", x}}, {"my_reshape:0"}),
               Code::kInvalidArgument, "must be non-negative", "my_reshape");
}

TEST(ReshapeOpTest, MismatchOfConstantsFailsAtLoad) {
  const std::string g =
      ConstFloat("x", {2, 3}, {0, 1, 2, 3, 4, 5}) + ConstInt32("sizes", {4}) +
      NodeText("bad_reshape", "Reshape", {"x", "sizes"}, TypeAttr("T", "DT_FLOAT"));
  EXPECT_ERROR(TryRun(g, {}, {"bad_reshape:0"}), Code::kInvalidArgument, "bad_reshape");
}

// =============================================================== math ops

std::string BinaryGraph(const std::string& op, const std::string& dt,
                        const std::string& name = "z") {
  return PlaceholderNode("x", dt) + PlaceholderNode("y", dt) +
         NodeText(name, op, {"x", "y"}, TypeAttr("T", dt));
}

template <typename T, typename F>
void CheckBinary(const std::string& op, F f, const Dims& xd, const Dims& yd, std::mt19937* rng,
                 bool divide = false) {
  SCOPED_TRACE(op + " " + Dt<T>::name + " " + TensorShape(xd).DebugString() + " vs " +
               TensorShape(yd).DebugString());
  const std::vector<T> xv = RandomValues<T>(NumElements(xd), rng);
  const std::vector<T> yv = RandomValues<T>(NumElements(yd), rng, divide);
  Dims want_dims;
  const std::vector<T> want = RefBinary<T>(xv, xd, yv, yd, f, &want_dims);
  Tensor x = testing::MakeTensor<T>(Dt<T>::value, xd, xv);
  Tensor y = testing::MakeTensor<T>(Dt<T>::value, yd, yv);
  std::vector<Tensor> out = RunOps(BinaryGraph(op, Dt<T>::name), {{"x:0", x}, {"y:0", y}}, {"z:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), Dt<T>::value);
  EXPECT_EQ(DimsOf(out[0]), want_dims);
  ExpectValuesEq<T>(out[0], want, 1e-6);
  // Fed tensors are held by the caller: they must not have been written.
  for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(x.data<T>()[i], xv[i]);
  for (size_t i = 0; i < yv.size(); ++i) ASSERT_EQ(y.data<T>()[i], yv[i]);
}

const std::vector<std::pair<Dims, Dims>>& BroadcastCases() {
  static const std::vector<std::pair<Dims, Dims>> cases = {
      {{17, 33}, {17, 33}},                      // same shape, odd sizes
      {{}, {}},                                  // scalars
      {{}, {5}},                                 // scalar + vector
      {{5}, {}},                                 // vector + scalar
      {{2, 1, 3}, {4, 1}},                       // both sides broadcast
      {{4, 1}, {2, 1, 3}},                       // mirrored
      {{1, 1, 3}, {3}},                          // rank grows, size-1 dims
      {{3}, {1, 1, 3}},                          //
      {{1}, {6}},                                // one-element vector
      {{5, 1, 1}, {1}},                          // all-ones other side
      {{7, 1}, {1, 9}},                          // outer product pattern
      {{2, 3, 4, 5}, {3, 1, 5}},                 // rank 4
      {{2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2}},  // alternating, rank 6
      {{2, 1, 1, 1, 1, 1, 1, 1, 1, 3}, {4, 1}},  // rank 10 output
      {{0, 3}, {3}},                             // empty
      {{3, 1}, {1, 0}},                          // empty by broadcasting
      {{0}, {}},                                 // empty + scalar
      {{}, {0}},                                 // scalar + empty
      {{300, 200}, {200}},                       // bias-like, parallel
      {{300, 200}, {300, 1}},                    // column broadcast, parallel
      {{1, 200}, {300, 1}},                      // outer product, parallel
      {{100003}, {100003}},                      // same shape, parallel, odd
      {{100003}, {}},                            // scalar, parallel
      {{}, {100003}},                            //
  };
  return cases;
}

template <typename T>
void CheckAllBinaryOps(uint32_t seed) {
  std::mt19937 rng(seed);
  for (const auto& [xd, yd] : BroadcastCases()) {
    CheckBinary<T>(
        "Add", [](T a, T b) { return static_cast<T>(a + b); }, xd, yd, &rng);
    CheckBinary<T>(
        "AddV2", [](T a, T b) { return static_cast<T>(a + b); }, xd, yd, &rng);
    CheckBinary<T>(
        "Sub", [](T a, T b) { return static_cast<T>(a - b); }, xd, yd, &rng);
    CheckBinary<T>(
        "Mul", [](T a, T b) { return static_cast<T>(a * b); }, xd, yd, &rng);
    if constexpr (std::is_floating_point_v<T>) {
      CheckBinary<T>(
          "RealDiv", [](T a, T b) { return static_cast<T>(a / b); }, xd, yd, &rng,
          /*divide=*/true);
    }
  }
}

TEST(BinaryOpsTest, Float) { CheckAllBinaryOps<float>(1); }
TEST(BinaryOpsTest, Double) { CheckAllBinaryOps<double>(2); }
TEST(BinaryOpsTest, Int32) { CheckAllBinaryOps<int32_t>(3); }
TEST(BinaryOpsTest, Int64) { CheckAllBinaryOps<int64_t>(4); }

TEST(BinaryOpsTest, SingleThreadSession) {
  std::mt19937 rng(5);
  const Dims big = {100003};
  const std::vector<float> xv = RandomValues<float>(big[0], &rng);
  const std::vector<float> yv = RandomValues<float>(1, &rng);
  std::vector<float> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) want[i] = xv[i] * yv[0];
  std::vector<Tensor> out = RunOps(BinaryGraph("Mul", "DT_FLOAT"),
                                   {{"x:0", testing::MakeTensor<float>(GR_FLOAT, big, xv)},
                                    {"y:0", testing::MakeTensor<float>(GR_FLOAT, {}, yv)}},
                                   {"z:0"}, /*threads=*/1);
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<float>(out[0], want, 1e-6);
}

TEST(BinaryOpsTest, IncompatibleShapesFailAtRunTime) {
  Tensor x(GR_FLOAT, TensorShape({2, 3}));
  Tensor y(GR_FLOAT, TensorShape({4}));
  EXPECT_ERROR(
      TryRun(BinaryGraph("AddV2", "DT_FLOAT", "my_add"), {{"x:0", x}, {"y:0", y}}, {"my_add:0"}),
      Code::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4]", "my_add");
  EXPECT_ERROR(
      TryRun(BinaryGraph("Mul", "DT_FLOAT", "my_mul"), {{"x:0", y}, {"y:0", x}}, {"my_mul:0"}),
      Code::kInvalidArgument, "Incompatible shapes: [4] vs. [2,3]", "my_mul");
}

TEST(BinaryOpsTest, IncompatibleConstantsFailAtLoad) {
  const std::string g = ConstFloat("a", {2, 3}, {1, 2, 3, 4, 5, 6}) +
                        ConstFloat("b", {4}, {1, 2, 3, 4}) +
                        NodeText("bad_add", "Add", {"a", "b"}, TypeAttr("T", "DT_FLOAT"));
  EXPECT_ERROR(TryRun(g, {}, {"bad_add:0"}), Code::kInvalidArgument,
               "Incompatible shapes: [2,3] vs. [4]", "bad_add");
}

// x_{i+1} = x_i + b, 1000 times: exercises in-place reuse along a chain.
template <typename T>
void CheckAddChain(int n) {
  std::string g = PlaceholderNode("x0", Dt<T>::name) + PlaceholderNode("b", Dt<T>::name);
  for (int i = 0; i < n; ++i) {
    g += NodeText("x" + std::to_string(i + 1), "AddV2", {"x" + std::to_string(i), "b"},
                  TypeAttr("T", Dt<T>::name));
  }
  const std::vector<T> x0 = {T(1), T(-2), T(3), T(4)};
  const std::vector<T> b = {T(1), T(2), T(-3), T(0)};
  std::vector<T> want = x0;
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < want.size(); ++k) want[k] = static_cast<T>(want[k] + b[k]);
  std::vector<Tensor> out = RunOps(g,
                                   {{"x0:0", testing::MakeTensor<T>(Dt<T>::value, {4}, x0)},
                                    {"b:0", testing::MakeTensor<T>(Dt<T>::value, {4}, b)}},
                                   {"x" + std::to_string(n) + ":0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<T>(out[0], want);
}

TEST(BinaryOpsTest, AddV2ChainOf1000) {
  CheckAddChain<float>(1000);
  CheckAddChain<int32_t>(1000);
}

// y feeds three consumers; none may see another's in-place result.
TEST(BinaryOpsTest, FanOutIsNotClobberedByInPlaceReuse) {
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("b", "DT_FLOAT") +
                        NodeText("y", "AddV2", {"x", "b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z1", "AddV2", {"y", "b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z2", "Mul", {"y", "b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z3", "Neg", {"y"}, TypeAttr("T", "DT_FLOAT"));
  const std::vector<float> x = {1, 2, 3}, b = {10, 20, 30};
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOps(g,
                                     {{"x:0", testing::MakeTensor<float>(GR_FLOAT, {3}, x)},
                                      {"b:0", testing::MakeTensor<float>(GR_FLOAT, {3}, b)}},
                                     {"y:0", "z1:0", "z2:0", "z3:0"}, threads);
    ASSERT_EQ(out.size(), 4u);
    ExpectValuesEq<float>(out[0], {11, 22, 33});
    ExpectValuesEq<float>(out[1], {21, 42, 63});
    ExpectValuesEq<float>(out[2], {110, 440, 990});
    ExpectValuesEq<float>(out[3], {-11, -22, -33});
  }
}

template <typename T>
void CheckNeg(const Dims& d, std::mt19937* rng) {
  const std::vector<T> xv = RandomValues<T>(NumElements(d), rng);
  std::vector<T> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) want[i] = static_cast<T>(-xv[i]);
  const std::string g =
      PlaceholderNode("x", Dt<T>::name) + NodeText("n", "Neg", {"x"}, TypeAttr("T", Dt<T>::name));
  std::vector<Tensor> out =
      RunOps(g, {{"x:0", testing::MakeTensor<T>(Dt<T>::value, d, xv)}}, {"n:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectValuesEq<T>(out[0], want);
}

TEST(NegOpTest, AllTypesAndShapes) {
  std::mt19937 rng(6);
  for (const Dims& d : {Dims{17, 33}, Dims{}, Dims{0}, Dims{100003}}) {
    CheckNeg<float>(d, &rng);
    CheckNeg<double>(d, &rng);
    CheckNeg<int32_t>(d, &rng);
    CheckNeg<int64_t>(d, &rng);
  }
}

// ------------------------------------------------------------------ MatMul

std::string MatMulGraph(const std::string& dt, bool ta, bool tb, const std::string& name = "m") {
  const std::string attrs =
      TypeAttr("T", dt) + "attr { key: \"transpose_a\" value { b: " + (ta ? "true" : "false") +
      " } } " + "attr { key: \"transpose_b\" value { b: " + (tb ? "true" : "false") + " } } ";
  return PlaceholderNode("a", dt) + PlaceholderNode("b", dt) +
         NodeText(name, "MatMul", {"a", "b"}, attrs);
}

template <typename T>
void CheckMatMul(int64_t m, int64_t k, int64_t n, bool ta, bool tb, std::mt19937* rng,
                 int threads = 2) {
  SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n) +
               " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " " + Dt<T>::name);
  // Small integers keep integer products exact and float sums well conditioned.
  std::uniform_int_distribution<int> small(-10, 10);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  auto gen = [&](int64_t count) {
    std::vector<T> v(static_cast<size_t>(count));
    for (auto& x : v) {
      if constexpr (std::is_floating_point_v<T>) {
        x = static_cast<T>(real(*rng));
      } else {
        x = static_cast<T>(small(*rng));
      }
    }
    return v;
  };
  const Dims ad = ta ? Dims{k, m} : Dims{m, k};
  const Dims bd = tb ? Dims{n, k} : Dims{k, n};
  const std::vector<T> av = gen(m * k), bv = gen(k * n);
  // op(A)[i][p] and op(B)[p][j] read through the stored layout.
  auto A = [&](int64_t i, int64_t p) { return ta ? av[p * m + i] : av[i * k + p]; };
  auto B = [&](int64_t p, int64_t j) { return tb ? bv[j * k + p] : bv[p * n + j]; };

  std::vector<Tensor> out = RunOps(MatMulGraph(Dt<T>::name, ta, tb),
                                   {{"a:0", testing::MakeTensor<T>(Dt<T>::value, ad, av)},
                                    {"b:0", testing::MakeTensor<T>(Dt<T>::value, bd, bv)}},
                                   {"m:0"}, threads);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), (Dims{m, n}));
  const T* got = out[0].data<T>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_floating_point_v<T>) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(A(i, p)) * static_cast<double>(B(p, j));
          mag += std::fabs(static_cast<double>(A(i, p)) * static_cast<double>(B(p, j)));
        }
        const double eps = std::is_same_v<T, float> ? 1e-6 : 1e-13;
        ASSERT_NEAR(got[i * n + j], sum, 8 * eps * (mag + 1)) << "at (" << i << "," << j << ")";
      } else {
        T sum = 0;
        for (int64_t p = 0; p < k; ++p) sum = static_cast<T>(sum + A(i, p) * B(p, j));
        ASSERT_EQ(got[i * n + j], sum) << "at (" << i << "," << j << ")";
      }
    }
  }
}

template <typename T>
void CheckMatMulAllTransposes(uint32_t seed) {
  std::mt19937 rng(seed);
  struct Mkn {
    int64_t m, k, n;
  };
  for (const Mkn& s :
       {Mkn{1, 1, 1}, Mkn{2, 3, 4}, Mkn{17, 33, 9}, Mkn{64, 100, 10}, Mkn{33, 40, 65}}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) CheckMatMul<T>(s.m, s.k, s.n, ta, tb, &rng);
  }
}

TEST(MatMulOpTest, FloatAllTransposes) { CheckMatMulAllTransposes<float>(10); }
TEST(MatMulOpTest, DoubleAllTransposes) { CheckMatMulAllTransposes<double>(11); }
TEST(MatMulOpTest, Int32AllTransposes) { CheckMatMulAllTransposes<int32_t>(12); }
TEST(MatMulOpTest, Int64AllTransposes) { CheckMatMulAllTransposes<int64_t>(13); }

// Large enough to be split over threads: by columns (wide), by rows (tall).
TEST(MatMulOpTest, LargeSplitProducts) {
  std::mt19937 rng(14);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckMatMul<float>(70, 300, 513, ta, tb, &rng);
      CheckMatMul<float>(515, 64, 100, ta, tb, &rng);
    }
  }
  CheckMatMul<double>(70, 200, 300, false, true, &rng);
  CheckMatMul<int32_t>(300, 50, 70, true, false, &rng);
  CheckMatMul<float>(200, 300, 256, false, false, &rng, /*threads=*/1);
}

TEST(MatMulOpTest, EmptyOperands) {
  std::mt19937 rng(15);
  CheckMatMul<float>(3, 0, 4, false, false, &rng);  // empty sum: zeros
  CheckMatMul<float>(3, 0, 4, true, true, &rng);
  CheckMatMul<float>(0, 5, 3, false, false, &rng);
  CheckMatMul<float>(2, 5, 0, false, true, &rng);
  CheckMatMul<int32_t>(3, 0, 2, false, false, &rng);
  CheckMatMul<double>(0, 0, 0, true, false, &rng);
}

TEST(MatMulOpTest, SizeMismatchFailsAtRunTime) {
  Tensor a(GR_FLOAT, TensorShape({2, 3}));
  Tensor b(GR_FLOAT, TensorShape({4, 5}));
  EXPECT_ERROR(TryRun(MatMulGraph("DT_FLOAT", false, false, "my_matmul"), {{"a:0", a}, {"b:0", b}},
                      {"my_matmul:0"}),
               Code::kInvalidArgument, "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]",
               "my_matmul");
  // With transpose_a, [3,2]^T x [4,5] still has 3 != 4.
  Tensor at(GR_FLOAT, TensorShape({3, 2}));
  EXPECT_ERROR(TryRun(MatMulGraph("DT_FLOAT", true, false, "my_matmul"), {{"a:0", at}, {"b:0", b}},
                      {"my_matmul:0"}),
               Code::kInvalidArgument, "Matrix size-incompatible: In[0]: [3,2], In[1]: [4,5]");
}

TEST(MatMulOpTest, NonMatrixFailsAtRunTime) {
  Tensor a(GR_FLOAT, TensorShape({2, 3, 4}));
  Tensor b(GR_FLOAT, TensorShape({4, 5}));
  EXPECT_ERROR(TryRun(MatMulGraph("DT_FLOAT", false, false, "my_matmul"), {{"a:0", a}, {"b:0", b}},
                      {"my_matmul:0"}),
               Code::kInvalidArgument, "In[0] is not a matrix", "my_matmul");
}

TEST(MatMulOpTest, MismatchOfConstantsFailsAtLoad) {
  const std::string g = ConstFloat("a", {2, 3}, {1, 2, 3, 4, 5, 6}) +
                        ConstFloat("b", {4, 1}, {1, 2, 3, 4}) +
                        NodeText("bad_matmul", "MatMul", {"a", "b"}, TypeAttr("T", "DT_FLOAT"));
  EXPECT_ERROR(TryRun(g, {}, {"bad_matmul:0"}), Code::kInvalidArgument, "bad_matmul");
}

// ================================================================= nn ops

std::string BiasAddGraph(const std::string& dt, const std::string& format,
                         const std::string& name = "ba") {
  return PlaceholderNode("v", dt) + PlaceholderNode("bias", dt) +
         NodeText(
             name, "BiasAdd", {"v", "bias"},
             TypeAttr("T", dt) + "attr { key: \"data_format\" value { s: \"" + format + "\" } } ");
}

template <typename T>
void CheckBiasAdd(const Dims& vd, bool nchw, std::mt19937* rng) {
  SCOPED_TRACE(TensorShape(vd).DebugString() + (nchw ? " NCHW" : " NHWC"));
  const int64_t c = nchw ? vd[1] : vd.back();
  const std::vector<T> v = RandomValues<T>(NumElements(vd), rng);
  const std::vector<T> bias = RandomValues<T>(c, rng);
  // Channel of flat index i: divide by the product of the dims after it.
  int64_t after = 1;
  if (nchw)
    for (size_t d = 2; d < vd.size(); ++d) after *= vd[d];
  std::vector<T> want(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t ch = nchw ? (static_cast<int64_t>(i) / after) % c : static_cast<int64_t>(i) % c;
    want[i] = static_cast<T>(v[i] + bias[ch]);
  }
  std::vector<Tensor> out = RunOps(BiasAddGraph(Dt<T>::name, nchw ? "NCHW" : "NHWC"),
                                   {{"v:0", testing::MakeTensor<T>(Dt<T>::value, vd, v)},
                                    {"bias:0", testing::MakeTensor<T>(Dt<T>::value, {c}, bias)}},
                                   {"ba:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), vd);
  ExpectValuesEq<T>(out[0], want, 1e-6);
}

TEST(BiasAddOpTest, NhwcAndNchw) {
  std::mt19937 rng(20);
  CheckBiasAdd<float>({2, 3, 4}, false, &rng);
  CheckBiasAdd<float>({5, 3}, false, &rng);
  CheckBiasAdd<float>({2, 3, 4, 5}, true, &rng);
  CheckBiasAdd<float>({5, 3}, true, &rng);
  CheckBiasAdd<float>({300, 300}, false, &rng);      // parallel
  CheckBiasAdd<float>({4, 64, 17, 19}, true, &rng);  // parallel, odd inner size
  CheckBiasAdd<double>({3, 7}, false, &rng);
  CheckBiasAdd<int32_t>({2, 2, 3}, false, &rng);
  CheckBiasAdd<int64_t>({2, 3, 2}, true, &rng);
  CheckBiasAdd<float>({0, 4}, false, &rng);  // empty
}

TEST(BiasAddOpTest, DefaultFormatIsNhwc) {
  const std::string g = PlaceholderNode("v", "DT_FLOAT") + PlaceholderNode("bias", "DT_FLOAT") +
                        NodeText("ba", "BiasAdd", {"v", "bias"}, TypeAttr("T", "DT_FLOAT"));
  std::vector<Tensor> out =
      RunOps(g,
             {{"v:0", testing::MakeTensor<float>(GR_FLOAT, {2, 2}, {1, 2, 3, 4})},
              {"bias:0", testing::MakeTensor<float>(GR_FLOAT, {2}, {10, 20})}},
             {"ba:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<float>(out[0], {11, 22, 13, 24});
}

TEST(BiasAddOpTest, BadBiasFailsAtRunTime) {
  Tensor v(GR_FLOAT, TensorShape({2, 3}));
  EXPECT_ERROR(TryRun(BiasAddGraph("DT_FLOAT", "NHWC", "my_bias"),
                      {{"v:0", v}, {"bias:0", Tensor(GR_FLOAT, TensorShape({4}))}}, {"my_bias:0"}),
               Code::kInvalidArgument, "Must provide as many biases as", "[4] vs. [2,3]",
               "my_bias");
  EXPECT_ERROR(TryRun(BiasAddGraph("DT_FLOAT", "NCHW", "my_bias"),
                      {{"v:0", Tensor(GR_FLOAT, TensorShape({2, 3, 4}))},
                       {"bias:0", Tensor(GR_FLOAT, TensorShape({4}))}},
                      {"my_bias:0"}),
               Code::kInvalidArgument, "Must provide as many biases as", "my_bias");
  EXPECT_ERROR(TryRun(BiasAddGraph("DT_FLOAT", "NHWC", "my_bias"),
                      {{"v:0", Tensor(GR_FLOAT, TensorShape({3}))},
                       {"bias:0", Tensor(GR_FLOAT, TensorShape({3}))}},
                      {"my_bias:0"}),
               Code::kInvalidArgument, "at least 2D", "my_bias");
}

template <typename T, typename F>
void CheckUnary(const std::string& op, F ref, const std::vector<T>& xv, const Dims& d,
                double rel_tol) {
  const std::string g =
      PlaceholderNode("x", Dt<T>::name) + NodeText("u", op, {"x"}, TypeAttr("T", Dt<T>::name));
  std::vector<T> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) want[i] = static_cast<T>(ref(xv[i]));
  std::vector<Tensor> out =
      RunOps(g, {{"x:0", testing::MakeTensor<T>(Dt<T>::value, d, xv)}}, {"u:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectValuesEq<T>(out[0], want, rel_tol);
}

TEST(ReluOpTest, Types) {
  std::mt19937 rng(21);
  auto relu = [](auto x) { return x > 0 ? x : decltype(x)(0); };
  for (const Dims& d : {Dims{17, 33}, Dims{}, Dims{0, 3}, Dims{100003}}) {
    CheckUnary<float>("Relu", relu, RandomValues<float>(NumElements(d), &rng), d, 0);
    CheckUnary<double>("Relu", relu, RandomValues<double>(NumElements(d), &rng), d, 0);
    CheckUnary<int32_t>("Relu", relu, RandomValues<int32_t>(NumElements(d), &rng), d, 0);
    CheckUnary<int64_t>("Relu", relu, RandomValues<int64_t>(NumElements(d), &rng), d, 0);
  }
}

TEST(SigmoidOpTest, FloatAndDouble) {
  std::mt19937 rng(22);
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  std::vector<float> extremes = {0.f, 1.f, -1.f, 20.f, -20.f, 100.f, -100.f, 1000.f, -1000.f};
  CheckUnary<float>("Sigmoid", sigmoid, extremes, {3, 3}, 2e-6);
  CheckUnary<double>("Sigmoid", sigmoid, std::vector<double>(extremes.begin(), extremes.end()), {9},
                     1e-13);
  for (const Dims& d : {Dims{17, 33}, Dims{0}, Dims{100003}}) {
    CheckUnary<float>("Sigmoid", sigmoid, RandomValues<float>(NumElements(d), &rng), d, 2e-6);
    CheckUnary<double>("Sigmoid", sigmoid, RandomValues<double>(NumElements(d), &rng), d, 1e-13);
  }
}

template <typename T>
void CheckSoftmax(const Dims& d, const std::vector<T>& xv, double tol) {
  SCOPED_TRACE(TensorShape(d).DebugString());
  const int64_t cols = d.back();
  const int64_t rows = cols == 0 ? 0 : NumElements(d) / cols;
  std::vector<T> want(xv.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, static_cast<double>(xv[r * cols + c]));
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(xv[r * cols + c]) - mx);
    for (int64_t c = 0; c < cols; ++c)
      want[r * cols + c] =
          static_cast<T>(std::exp(static_cast<double>(xv[r * cols + c]) - mx) / sum);
  }
  const std::string g = PlaceholderNode("x", Dt<T>::name) +
                        NodeText("sm", "Softmax", {"x"}, TypeAttr("T", Dt<T>::name));
  std::vector<Tensor> out =
      RunOps(g, {{"x:0", testing::MakeTensor<T>(Dt<T>::value, d, xv)}}, {"sm:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), d);
  ExpectValuesEq<T>(out[0], want, tol);
}

TEST(SoftmaxOpTest, MatchesNaiveReference) {
  std::mt19937 rng(23);
  for (const Dims& d : {Dims{5, 7}, Dims{1}, Dims{3, 1}, Dims{2, 3, 4}, Dims{17, 33},
                        Dims{300, 200}, Dims{0, 5}, Dims{4, 0}}) {
    CheckSoftmax<float>(d, RandomValues<float>(NumElements(d), &rng), 2e-6);
    CheckSoftmax<double>(d, RandomValues<double>(NumElements(d), &rng), 1e-13);
  }
}

TEST(SoftmaxOpTest, NumericallyStableForLargeLogits) {
  CheckSoftmax<float>({2, 3}, {1000.f, 1001.f, 1002.f, -1000.f, -1001.f, -1002.f}, 2e-6);
  CheckSoftmax<double>({1, 4}, {800.0, 800.0, 800.0, 800.0}, 1e-13);
}

TEST(SoftmaxOpTest, ScalarLogitsFail) {
  const std::string g = PlaceholderNode("x", "DT_FLOAT") +
                        NodeText("my_softmax", "Softmax", {"x"}, TypeAttr("T", "DT_FLOAT"));
  EXPECT_ERROR(TryRun(g, {{"x:0", Tensor::Scalar<float>(GR_FLOAT, 1.f)}}, {"my_softmax:0"}),
               Code::kInvalidArgument, "logits must have >= 1 dimension", "my_softmax");
}

// An MLP layer end to end: Softmax(Relu(x W + b) V + c), against loops.
TEST(NnOpsTest, SmallMlp) {
  std::mt19937 rng(24);
  const int64_t batch = 8, in = 20, hidden = 16, classes = 5;
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto gen = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = u(rng);
    return v;
  };
  const auto x = gen(batch * in), w = gen(in * hidden), b = gen(hidden), v = gen(hidden * classes),
             c = gen(classes);
  const std::string f = "DT_FLOAT";
  const std::string g = PlaceholderNode("x", f) + ConstFloat("w", {in, hidden}, w) +
                        ConstFloat("b", {hidden}, b) + ConstFloat("v", {hidden, classes}, v) +
                        ConstFloat("c", {classes}, c) +
                        NodeText("h0", "MatMul", {"x", "w"}, TypeAttr("T", f)) +
                        NodeText("h1", "BiasAdd", {"h0", "b"}, TypeAttr("T", f)) +
                        NodeText("h2", "Relu", {"h1"}, TypeAttr("T", f)) +
                        NodeText("o0", "MatMul", {"h2", "v"}, TypeAttr("T", f)) +
                        NodeText("o1", "BiasAdd", {"o0", "c"}, TypeAttr("T", f)) +
                        NodeText("p", "Softmax", {"o1"}, TypeAttr("T", f));
  std::vector<double> want(static_cast<size_t>(batch * classes));
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<double> h(static_cast<size_t>(hidden));
    for (int64_t j = 0; j < hidden; ++j) {
      double s = b[j];
      for (int64_t p = 0; p < in; ++p) s += static_cast<double>(x[r * in + p]) * w[p * hidden + j];
      h[j] = s > 0 ? s : 0;
    }
    std::vector<double> logits(static_cast<size_t>(classes));
    double mx = -1e300;
    for (int64_t k = 0; k < classes; ++k) {
      double s = c[k];
      for (int64_t j = 0; j < hidden; ++j) s += h[j] * v[j * classes + k];
      logits[k] = s;
      mx = std::max(mx, s);
    }
    double sum = 0;
    for (double l : logits) sum += std::exp(l - mx);
    for (int64_t k = 0; k < classes; ++k) want[r * classes + k] = std::exp(logits[k] - mx) / sum;
  }
  std::vector<Tensor> out =
      RunOps(g, {{"x:0", testing::MakeTensor<float>(GR_FLOAT, {batch, in}, x)}}, {"p:0"});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), (Dims{batch, classes}));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0].data<float>()[i], want[i], 1e-5);
}

}  // namespace
}  // namespace graphrt
