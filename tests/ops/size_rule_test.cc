// Ops under graphrt's size rule (graphrt/shape_limits.h: dims >= 0, the
// nonzero dims' product at most 2^58): shape functions and kernels that
// multiply or add dims, or do arithmetic on values a graph supplies, answer
// a clean InvalidArgument naming the node instead of overflowing, and the
// session runs a valid feed afterwards. Empty tensors with huge dims that
// obey the rule ([0, 2^50, 4]) still work.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace testing {
namespace {

using namespace array_test;  // NOLINT: the array suites' graph helpers

constexpr int64_t k2p50 = int64_t{1} << 50;
constexpr int64_t k2p57 = int64_t{1} << 57;
constexpr int64_t k2p58 = int64_t{1} << 58;
constexpr int64_t k2p62 = int64_t{1} << 62;
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();

Status CreateSessionOn(const std::string& pbtxt, std::unique_ptr<Session>* s) {
  LoadStandardPlugins();
  proto::GraphDef g;
  GR_RETURN_IF_ERROR(ParseGraphDefText(pbtxt, &g));
  GR_RETURN_IF_ERROR(NewSession(OpTestOptions(2), s));
  return (*s)->Create(g);
}

std::unique_ptr<Session> MustCreate(const std::string& pbtxt) {
  std::unique_ptr<Session> s;
  const Status st = CreateSessionOn(pbtxt, &s);
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? std::move(s) : nullptr;
}

Status CreateStatus(const std::string& pbtxt) {
  std::unique_ptr<Session> s;
  return CreateSessionOn(pbtxt, &s);
}

// The error names the node (the core's "Node 'x' (op 'Y')" prefix) and says
// `what`.
#define EXPECT_NODE_ERROR(STATUS, NODE, OP, WHAT) \
  EXPECT_ERROR(STATUS, Code::kInvalidArgument, "Node '" NODE "' (op '" OP "')", WHAT)

Status RunOn(Session* s, const Feeds& feeds, const std::string& fetch, std::vector<Tensor>* out) {
  out->clear();
  return s->Run(feeds, {fetch}, {}, out);
}

Tensor EmptyFloat(const Dims& dims) { return Tensor(GR_FLOAT, TensorShape(dims)); }

Tensor Floats(const Dims& dims, const std::vector<float>& v) { return MakeTensor<float>(GR_FLOAT, dims, v); }

std::string FloatPlaceholder(const std::string& name) { return PlaceholderNode(name, "DT_FLOAT"); }

// ---------------------------------------------------------------- Reshape

std::string ReshapeNode(const std::string& name, const std::string& x, const std::string& s,
                        const std::string& tshape = "DT_INT64") {
  return NodeText(name, "Reshape", {x, s}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tshape", tshape));
}

TEST(SizeRuleTest, ReshapeShapeFnRejectsHugeRequestedShape) {
  // The probe's graph: 6 elements to [2^63-1, 2^63-1, 0].
  const std::string g = ConstFloat("x", {6}, {1, 2, 3, 4, 5, 6}) +
                        ConstOf("s", Vec({kMax64, kMax64, 0}, GR_INT64)) + ReshapeNode("r", "x", "s");
  EXPECT_NODE_ERROR(CreateStatus(g), "r", "Reshape", "Requested shape");
}

TEST(SizeRuleTest, ReshapeKernelEmptyInputHugeDims) {
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("s", "DT_INT64") + ReshapeNode("r", "x", "s"));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  // [0] to [0, 2^62, 4]: no valid shape (the probe's UBSan case).
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", EmptyFloat({0})}, {"s", Vec({0, k2p62, 4}, GR_INT64)}}, "r", &out), "r",
                    "Reshape", "Requested shape [0,4611686018427387904,4] has more than 2^58 elements");
  // [0] to [0, 2^50, 4] is valid and empty.
  ASSERT_TRUE(RunOn(s.get(), {{"x", EmptyFloat({0})}, {"s", Vec({0, k2p50, 4}, GR_INT64)}}, "r", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({0, k2p50, 4}));
  // TensorFlow infers -1 from the input's nonzero dims when a size is 0:
  // [0, 2^50, 4] to [-1, 0] is [2^52, 0].
  ASSERT_TRUE(RunOn(s.get(), {{"x", EmptyFloat({0, k2p50, 4})}, {"s", Vec({-1, 0}, GR_INT64)}}, "r", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({int64_t{1} << 52, 0}));
  // And an ordinary reshape still works on the same session.
  ASSERT_TRUE(RunOn(s.get(), {{"x", Floats({6}, {1, 2, 3, 4, 5, 6})}, {"s", Vec({2, -1}, GR_INT64)}}, "r", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({2, 3}));
  ExpectValuesEq<float>(out[0], {1, 2, 3, 4, 5, 6});
}

// TensorFlow's rule for -1 with an empty input (reshape_op.h): the missing
// size is the input's element count over the product of the specified
// sizes, where, if a specified size is 0, the input's zero dims are left
// out of its count. So [0] to [-1, 5] is [0, 5], [0, 2] to [0, -1] is
// [0, 2], and [0] to [-1, 0] is [1, 0] (not an error: the "cannot infer
// the missing input size for an empty tensor" error is only in TensorFlow's
// first release and in SparseReshape).
TEST(SizeRuleTest, ReshapeEmptyWithMinusOneFollowsTensorFlow) {
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("s", "DT_INT32") + ReshapeNode("r", "x", "s", "DT_INT32"));
  ASSERT_TRUE(s);
  struct Case {
    Dims in, sizes, want;
  };
  for (const Case& c : {Case{{0}, {-1, 5}, {0, 5}}, Case{{0, 2}, {0, -1}, {0, 2}}, Case{{0}, {-1, 0}, {1, 0}},
                        Case{{3, 0}, {-1, 0, 2}, {1, 0, 2}}}) {
    std::vector<Tensor> out;
    const Status st = RunOn(s.get(), {{"x", EmptyFloat(c.in)}, {"s", Vec(c.sizes)}}, "r", &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(DimsOf(out[0]), c.want);
  }
  // An empty input cannot fill a nonempty shape.
  std::vector<Tensor> out;
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", EmptyFloat({0})}, {"s", Vec({2, 3})}}, "r", &out), "r", "Reshape",
                    "requested shape has 6");
}

// ------------------------------------------------------------------ Range

TEST(SizeRuleTest, RangeInt32ValuesNearTheLimits) {
  // Range(-2^31, 2^31-1, 2^31-1) has 3 values; 2 * delta is past int32.
  const std::string consts = ConstOf("a", IntScalar(std::numeric_limits<int32_t>::min())) +
                             ConstOf("b", IntScalar(std::numeric_limits<int32_t>::max())) +
                             ConstOf("d", IntScalar(std::numeric_limits<int32_t>::max()));
  const std::string g = consts + NodeText("r", "Range", {"a", "b", "d"}, TypeAttr("Tidx", "DT_INT32"));
  const std::vector<Tensor> out = RunOps(g, {}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), Dims({3}));
  ExpectValuesEq<int32_t>(out[0], {std::numeric_limits<int32_t>::min(), -1, std::numeric_limits<int32_t>::max() - 1});
}

TEST(SizeRuleTest, RangeInt64FedValuesAndErrors) {
  const std::string g = PlaceholderNode("a", "DT_INT64") + PlaceholderNode("b", "DT_INT64") +
                        PlaceholderNode("d", "DT_INT64") +
                        NodeText("r", "Range", {"a", "b", "d"}, TypeAttr("Tidx", "DT_INT64"));
  auto s = MustCreate(g);
  ASSERT_TRUE(s);
  auto feeds = [](int64_t a, int64_t b, int64_t d) {
    return Feeds{{"a", IntScalar(a, GR_INT64)}, {"b", IntScalar(b, GR_INT64)}, {"d", IntScalar(d, GR_INT64)}};
  };
  std::vector<Tensor> out;
  // ceil((2^64 - 1) / 2^62) = 4 values; 3 * 2^62 is past int64.
  ASSERT_TRUE(RunOn(s.get(), feeds(kMin64, kMax64, k2p62), "r", &out).ok());
  ExpectValuesEq<int64_t>(out[0], {kMin64, -k2p62, 0, k2p62});
  // Downwards from the top: 2^63-1, 2^62-1, -1, -2^62-1.
  ASSERT_TRUE(RunOn(s.get(), feeds(kMax64, kMin64, -k2p62), "r", &out).ok());
  ExpectValuesEq<int64_t>(out[0], {kMax64, k2p62 - 1, -1, -k2p62 - 1});
  EXPECT_NODE_ERROR(RunOn(s.get(), feeds(0, 5, 0), "r", &out), "r", "Range", "Requires delta != 0");
  EXPECT_NODE_ERROR(RunOn(s.get(), feeds(5, 0, 1), "r", &out), "r", "Range", "Requires start <= limit when delta > 0");
  EXPECT_NODE_ERROR(RunOn(s.get(), feeds(0, 5, -1), "r", &out), "r", "Range", "Requires start >= limit when delta < 0");
  // 2^62 values: more than the size rule allows.
  EXPECT_ERROR(RunOn(s.get(), feeds(0, k2p62, 1), "r", &out), Code::kInvalidArgument, "Node 'r' (op 'Range')",
               "2^58");
  ASSERT_TRUE(RunOn(s.get(), feeds(3, 12, 4), "r", &out).ok());
  ExpectValuesEq<int64_t>(out[0], {3, 7, 11});
}

// ------------------------------------------------------------------- Tile

std::string TileNode(const std::string& name, const std::string& x, const std::string& m,
                     const std::string& tm = "DT_INT64") {
  return NodeText(name, "Tile", {x, m}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tmultiples", tm));
}

TEST(SizeRuleTest, TileShapeFnRejectsHugeMultiples) {
  const std::string g = ConstFloat("x", {6}, {1, 2, 3, 4, 5, 6}) + ConstOf("m", Vec({k2p62}, GR_INT64)) +
                        TileNode("t", "x", "m");
  EXPECT_NODE_ERROR(CreateStatus(g), "t", "Tile", "exceeds 2^58");
}

TEST(SizeRuleTest, TileKernelHugeMultiplesAndEmptyInputs) {
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("m", "DT_INT64") + TileNode("t", "x", "m"));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", Floats({6}, {1, 2, 3, 4, 5, 6})}, {"m", Vec({k2p62}, GR_INT64)}}, "t", &out),
                    "t", "Tile", "exceeds 2^58");
  // Empty input, huge dims: [0, 2^50, 4] tiled [1, 2, 1] is [0, 2^51, 4].
  ASSERT_TRUE(RunOn(s.get(), {{"x", EmptyFloat({0, k2p50, 4})}, {"m", Vec({1, 2, 1}, GR_INT64)}}, "t", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({0, int64_t{1} << 51, 4}));
  // ... but [0, 4] tiled [1, 2^57] would have a nonzero dim of 2^59.
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", EmptyFloat({0, 4})}, {"m", Vec({1, k2p57}, GR_INT64)}}, "t", &out), "t",
                    "Tile", "exceeds 2^58");
  ASSERT_TRUE(RunOn(s.get(), {{"x", Floats({2}, {1, 2})}, {"m", Vec({3}, GR_INT64)}}, "t", &out).ok());
  ExpectValuesEq<float>(out[0], {1, 2, 1, 2, 1, 2});
}

// --------------------------------------------------------------- ConcatV2

std::string ConcatOf(const std::string& name, const std::vector<std::string>& ins, const std::string& axis) {
  std::vector<std::string> inputs = ins;
  inputs.push_back(axis);
  return NodeText(name, "ConcatV2", inputs,
                  TypeAttr("T", "DT_FLOAT") + IntAttr("N", static_cast<int64_t>(ins.size())) +
                      TypeAttr("Tidx", "DT_INT32"));
}

TEST(SizeRuleTest, ConcatSumOfDimsIsChecked) {
  // 32 empty [0, 2^58] inputs along axis 1: the sum, 2^63, is past int64.
  std::vector<std::string> ins(32, "p");
  auto s = MustCreate(FloatPlaceholder("p") + ConstOf("a", IntScalar(1)) + ConcatOf("c", ins, "a"));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"p", EmptyFloat({0, k2p58})}}, "c", &out), "c", "ConcatV2", "exceeds 2^58");
  // [0, 2^50] thirty-two times is [0, 2^55].
  ASSERT_TRUE(RunOn(s.get(), {{"p", EmptyFloat({0, k2p50})}}, "c", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({0, int64_t{1} << 55}));
  ASSERT_TRUE(RunOn(s.get(), {{"p", Floats({1, 2}, {1, 2})}}, "c", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({1, 64}));

  // The shape function adds the same dims when it knows them.
  const std::string g = ConstNode("k", "DT_FLOAT", {0, k2p58}, "float_val", {}) + ConstOf("a", IntScalar(1)) +
                        ConcatOf("c", std::vector<std::string>(32, "k"), "a");
  EXPECT_NODE_ERROR(CreateStatus(g), "c", "ConcatV2", "exceeds 2^58");
}

// ----------------------------------------------------------- StridedSlice

std::string StridedSliceNode(const std::string& attrs = "") {
  return NodeText("t", "StridedSlice", {"p", "b", "e", "st"},
                  TypeAttr("T", "DT_FLOAT") + TypeAttr("Index", "DT_INT64") + attrs);
}

TEST(SizeRuleTest, StridedSliceHugeDimsAndValues) {
  auto s = MustCreate(FloatPlaceholder("p") + PlaceholderNode("b", "DT_INT64") + PlaceholderNode("e", "DT_INT64") +
                      PlaceholderNode("st", "DT_INT64") + StridedSliceNode());
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  // The probe's slice, on an empty input whose dims obey the rule.
  ASSERT_TRUE(RunOn(s.get(),
                  {{"p", EmptyFloat({0, k2p50, 4})},
                   {"b", Vec({0, 0, 0}, GR_INT64)},
                   {"e", Vec({0, 2147483647, 2147483647}, GR_INT64)},
                   {"st", Vec({1, 1, 1}, GR_INT64)}},
                  "t", &out)
                  .ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({0, 2147483647, 4}));
  // A stride of 2^62 takes one element per dim: row 0 of [[1,2,3],[4,5,6]].
  ASSERT_TRUE(RunOn(s.get(),
                  {{"p", Floats({2, 3}, {1, 2, 3, 4, 5, 6})},
                   {"b", Vec({0, 0}, GR_INT64)},
                   {"e", Vec({2, 3}, GR_INT64)},
                   {"st", Vec({k2p62, 1}, GR_INT64)}},
                  "t", &out)
                  .ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({1, 3}));
  ExpectValuesEq<float>(out[0], {1, 2, 3});
  // Negative huge stride: from the last row backwards, one row.
  ASSERT_TRUE(RunOn(s.get(),
                  {{"p", Floats({2, 3}, {1, 2, 3, 4, 5, 6})},
                   {"b", Vec({-1, 0}, GR_INT64)},
                   {"e", Vec({kMin64, 3}, GR_INT64)},
                   {"st", Vec({kMin64 + 1, 1}, GR_INT64)}},
                  "t", &out)
                  .ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({1, 3}));
  ExpectValuesEq<float>(out[0], {4, 5, 6});
}

TEST(SizeRuleTest, StridedSliceShrinkAtInt64Max) {
  auto s = MustCreate(FloatPlaceholder("p") + PlaceholderNode("b", "DT_INT64") + PlaceholderNode("e", "DT_INT64") +
                      PlaceholderNode("st", "DT_INT64") + StridedSliceNode(IntAttr("shrink_axis_mask", 1)));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  auto feeds = [](int64_t b) {
    return Feeds{{"p", Floats({3}, {7, 8, 9})},
                 {"b", Vec({b}, GR_INT64)},
                 {"e", Vec({0}, GR_INT64)},
                 {"st", Vec({1}, GR_INT64)}};
  };
  EXPECT_NODE_ERROR(RunOn(s.get(), feeds(kMax64), "t", &out), "t", "StridedSlice", "out of bounds");
  ASSERT_TRUE(RunOn(s.get(), feeds(-1), "t", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({}));
  ExpectValuesEq<float>(out[0], {9});
}

// ---------------------------------------------------------------- MaxPool

std::string PoolNode(const std::string& name, const std::string& in, const std::vector<int64_t>& ksize,
                     const std::vector<int64_t>& strides, const std::string& padding) {
  return NodeText(name, "MaxPool", {in},
                  TypeAttr("T", "DT_FLOAT") + IntListAttr("ksize", ksize) + IntListAttr("strides", strides) +
                      StrAttr("padding", padding));
}

TEST(SizeRuleTest, MaxPoolOnReshapedEmptyTensor) {
  // The probe's graph: Reshape of an empty feed to [0, d, 2, 1], then MaxPool.
  auto s = MustCreate(FloatPlaceholder("p") + PlaceholderNode("s4", "DT_INT64") + ReshapeNode("p4", "p", "s4") +
                      PoolNode("t", "p4", {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME"));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"p", EmptyFloat({0})}, {"s4", Vec({0, k2p62, 2, 1}, GR_INT64)}}, "t", &out), "p4",
                    "Reshape", "Requested shape [0,4611686018427387904,2,1] has more than 2^58 elements");
  ASSERT_TRUE(RunOn(s.get(), {{"p", EmptyFloat({0})}, {"s4", Vec({0, k2p50, 2, 1}, GR_INT64)}}, "t", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({0, k2p50, 2, 1}));
  ASSERT_TRUE(RunOn(s.get(), {{"p", Floats({4}, {1, 5, 3, 2})}, {"s4", Vec({1, 2, 2, 1}, GR_INT64)}}, "t", &out).ok());
  ExpectValuesEq<float>(out[0], {5, 5, 3, 2});
}

TEST(SizeRuleTest, PoolAndConvWindowAttrsAreChecked) {
  // Strides and windows from attrs may be any int64; the shape function
  // refuses such attrs whatever the input's shape.
  const Tensor x = Floats({1, 2, 2, 1}, {1, 5, 3, 2});
  EXPECT_NODE_ERROR(CreateStatus(FloatPlaceholder("p") + PoolNode("t", "p", {1, 1, 1, 1}, {1, kMax64, 1, 1}, "SAME")),
                    "t", "MaxPool", "Stride 9223372036854775807 is not in [0, 2^58]");
  EXPECT_NODE_ERROR(CreateStatus(ConstFloat("k", {1, 2, 2, 1}, {1, 5, 3, 2}) +
                                 PoolNode("t", "k", {1, kMax64, 1, 1}, {1, 1, 1, 1}, "VALID")),
                    "t", "MaxPool", "Window size 9223372036854775807 is not in [0, 2^58]");
  std::vector<Tensor> out;

  // Conv2D: (filter - 1) * dilation + 1 is past int64.
  const std::string conv = NodeText("c", "Conv2D", {"p", "f"},
                                    TypeAttr("T", "DT_FLOAT") + IntListAttr("strides", {1, 1, 1, 1}) +
                                        StrAttr("padding", "SAME") + IntListAttr("dilations", {1, kMax64, 1, 1}));
  auto c = MustCreate(FloatPlaceholder("p") + FloatPlaceholder("f") + conv);
  ASSERT_TRUE(c);
  const Tensor f = Floats({2, 2, 1, 1}, {1, 1, 1, 1});
  EXPECT_NODE_ERROR(RunOn(c.get(), {{"p", x}, {"f", f}}, "c", &out), "c", "Conv2D", "Effective filter size");
  auto ok = MustCreate(FloatPlaceholder("p") + FloatPlaceholder("f") +
                       NodeText("c", "Conv2D", {"p", "f"},
                                TypeAttr("T", "DT_FLOAT") + IntListAttr("strides", {1, 1, 1, 1}) +
                                    StrAttr("padding", "VALID")));
  ASSERT_TRUE(ok);
  ASSERT_TRUE(RunOn(ok.get(), {{"p", x}, {"f", f}}, "c", &out).ok());
  ExpectValuesEq<float>(out[0], {11});
}

// ------------------------------------------------------------ Split(V)

// The OpDefs say `num_split: int >= 1`; the core enforces attr minimums
// at Create, before Split's shape function could divide by 0.
TEST(SizeRuleTest, SplitNeedsAtLeastOneOutput) {
  for (const char* op : {"Split", "SplitV"}) {
    std::string g = ConstFloat("x", {4}, {1, 2, 3, 4}) + ConstOf("axis", IntScalar(0));
    if (std::string(op) == "Split") {
      g += NodeText("s", op, {"axis", "x"}, TypeAttr("T", "DT_FLOAT") + IntAttr("num_split", 0));
    } else {
      g += ConstOf("sizes", Vec({}, GR_INT64)) +
           NodeText("s", op, {"x", "sizes", "axis"},
                    TypeAttr("T", "DT_FLOAT") + TypeAttr("Tlen", "DT_INT64") + IntAttr("num_split", 0));
    }
    const Status st = CreateStatus(g);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << op << ": " << st;
    EXPECT_TRUE(Contains(st.message(), "num_split")) << st;
    EXPECT_TRUE(Contains(st.message(), std::string("(op '") + op + "')")) << st;
  }
}

TEST(SizeRuleTest, SplitVSizesThatOverflow) {
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("sizes", "DT_INT64") + ConstOf("axis", IntScalar(0)) +
                      NodeText("s", "SplitV", {"x", "sizes", "axis"},
                               TypeAttr("T", "DT_FLOAT") + TypeAttr("Tlen", "DT_INT64") + IntAttr("num_split", 3)));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  // 2^62 + 2^62 + 2^62 wraps past int64 to a negative total.
  EXPECT_NODE_ERROR(s->Run({{"x", Floats({4}, {1, 2, 3, 4})}, {"sizes", Vec({k2p62, k2p62, k2p62}, GR_INT64)}},
                           {"s:0"}, {}, &out),
                    "s", "SplitV", "more than 2^58");
  ASSERT_TRUE(s->Run({{"x", Floats({4}, {1, 2, 3, 4})}, {"sizes", Vec({1, -1, 2}, GR_INT64)}}, {"s:0", "s:1", "s:2"},
                     {}, &out)
                  .ok());
  ExpectValuesEq<float>(out[1], {2});
  ExpectValuesEq<float>(out[2], {3, 4});
}

// ------------------------------------------------------------- Pad, Slice

TEST(SizeRuleTest, PadWithHugePaddings) {
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("p", "DT_INT64") +
                      NodeText("t", "Pad", {"x", "p"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tpaddings", "DT_INT64")));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  const Tensor x = Floats({2}, {7, 8});
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", x}, {"p", IntTensor(GR_INT64, {1, 2}, {k2p62, k2p62})}}, "t", &out), "t",
                    "Pad", "exceeds 2^58");
  ASSERT_TRUE(RunOn(s.get(), {{"x", x}, {"p", IntTensor(GR_INT64, {1, 2}, {1, 2})}}, "t", &out).ok());
  ExpectValuesEq<float>(out[0], {0, 7, 8, 0, 0});
  // The shape function's sum.
  EXPECT_NODE_ERROR(CreateStatus(ConstFloat("x", {2}, {7, 8}) + ConstOf("p", IntTensor(GR_INT64, {1, 2}, {k2p62, k2p62})) +
                                 NodeText("t", "Pad", {"x", "p"},
                                          TypeAttr("T", "DT_FLOAT") + TypeAttr("Tpaddings", "DT_INT64"))),
                    "t", "Pad", "exceeds 2^58");
}

TEST(SizeRuleTest, SliceSizeNearInt64Max) {
  const std::string slice =
      NodeText("t", "Slice", {"x", "b", "z"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Index", "DT_INT64"));
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("b", "DT_INT64") + PlaceholderNode("z", "DT_INT64") + slice);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  const Tensor x = Floats({4}, {1, 2, 3, 4});
  // begin + size wraps negative and would pass a "<= dim" test.
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", x}, {"b", Vec({1}, GR_INT64)}, {"z", Vec({kMax64}, GR_INT64)}}, "t", &out), "t",
                    "Slice", "Expected size[0] in [0, 3]");
  ASSERT_TRUE(RunOn(s.get(), {{"x", x}, {"b", Vec({1}, GR_INT64)}, {"z", Vec({2}, GR_INT64)}}, "t", &out).ok());
  ExpectValuesEq<float>(out[0], {2, 3});
  EXPECT_NODE_ERROR(CreateStatus(ConstFloat("x", {4}, {1, 2, 3, 4}) + ConstOf("b", Vec({1}, GR_INT64)) +
                                 ConstOf("z", Vec({kMax64}, GR_INT64)) + slice),
                    "t", "Slice", "Expected size[0] in [0, 3]");
}

// ------------------------------------------------- BroadcastTo, ScatterNd

TEST(SizeRuleTest, ShapesGivenAsValuesAreChecked) {
  auto s = MustCreate(FloatPlaceholder("x") + PlaceholderNode("shape", "DT_INT64") +
                      NodeText("t", "BroadcastTo", {"x", "shape"},
                               TypeAttr("T", "DT_FLOAT") + TypeAttr("Tidx", "DT_INT64")));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  const Tensor one = Floats({1}, {3});
  // [2^40, 2^40, 2^40]: 2^120 elements, 0 modulo 2^64.
  const int64_t big = int64_t{1} << 40;
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", one}, {"shape", Vec({big, big, big}, GR_INT64)}}, "t", &out), "t",
                    "BroadcastTo", "more than 2^58 elements");
  ASSERT_TRUE(RunOn(s.get(), {{"x", one}, {"shape", Vec({2, 2}, GR_INT64)}}, "t", &out).ok());
  ExpectValuesEq<float>(out[0], {3, 3, 3, 3});

  auto sc = MustCreate(PlaceholderNode("i", "DT_INT32") + FloatPlaceholder("u") + PlaceholderNode("shape", "DT_INT32") +
                       NodeText("t", "ScatterNd", {"i", "u", "shape"},
                                TypeAttr("T", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32")));
  ASSERT_TRUE(sc);
  // [1, (2^31-1) five times]: about 2^155 elements, a product that wraps.
  const int64_t m = std::numeric_limits<int32_t>::max();
  EXPECT_NODE_ERROR(RunOn(sc.get(),
                        {{"i", IntTensor(GR_INT32, {1, 1}, {0})},
                         {"u", Floats({1, 1, 1, 1, 1}, {1})},
                         {"shape", Vec({1, m, m, m, m, m})}},
                        "t", &out),
                    "t", "ScatterNd", "more than 2^58 elements");
  ASSERT_TRUE(RunOn(sc.get(),
                  {{"i", IntTensor(GR_INT32, {1, 1}, {1})}, {"u", Floats({1}, {5})}, {"shape", Vec({3})}},
                  "t", &out)
                  .ok());
  ExpectValuesEq<float>(out[0], {0, 5, 0});
}

// ----------------------------------------------------- cwise broadcasting

TEST(SizeRuleTest, BroadcastOfTwoValidShapesPastTheRule) {
  auto s = MustCreate(FloatPlaceholder("x") + FloatPlaceholder("y") +
                      NodeText("t", "Add", {"x", "y"}, TypeAttr("T", "DT_FLOAT")));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  // [2^40, 1, 0] + [1, 2^40, 0] is [2^40, 2^40, 0]: 2^80 nonzero.
  const int64_t big = int64_t{1} << 40;
  EXPECT_NODE_ERROR(RunOn(s.get(), {{"x", EmptyFloat({big, 1, 0})}, {"y", EmptyFloat({1, big, 0})}}, "t", &out), "t",
                    "Add", "more than 2^58 elements");
  // [0, 2^50, 1] + [1, 1, 4] is [0, 2^50, 4].
  ASSERT_TRUE(RunOn(s.get(), {{"x", EmptyFloat({0, k2p50, 1})}, {"y", Floats({1, 1, 4}, {1, 2, 3, 4})}}, "t", &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({0, k2p50, 4}));
  ASSERT_TRUE(RunOn(s.get(), {{"x", Floats({2, 1}, {1, 2})}, {"y", Floats({1, 2}, {10, 20})}}, "t", &out).ok());
  ExpectValuesEq<float>(out[0], {11, 21, 12, 22});
  // The shape function says so at Create when it knows both shapes.
  EXPECT_NODE_ERROR(CreateStatus(ConstNode("x", "DT_FLOAT", {big, 1, 0}, "float_val", {}) +
                                 ConstNode("y", "DT_FLOAT", {1, big, 0}, "float_val", {}) +
                                 NodeText("t", "Add", {"x", "y"}, TypeAttr("T", "DT_FLOAT"))),
                    "t", "Add", "more than 2^58 elements");
}

}  // namespace
}  // namespace testing
}  // namespace graphrt
