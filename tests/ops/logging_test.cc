// Assert: a true condition lets the step go on; a false one fails it with
// InvalidArgument "assertion failed: [..] [..]" (TensorFlow's summary of
// each data tensor, hand written here), naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

Tensor Str(const std::string& s) { return Tensor::StringScalar(s); }

// Runs Assert(cond, data...) as a target; data are fed placeholders.
Status RunAssert(bool cond, const std::vector<Tensor>& data, int64_t summarize = 3) {
  LoadStandardPlugins();
  Feeds feeds{{"cond:0", MakeTensor<bool>(GR_BOOL, {}, {cond})}};
  std::string g = PlaceholderNode("cond", "DT_BOOL");
  std::vector<std::string> inputs = {"cond"};
  std::vector<DataType> types;
  for (size_t i = 0; i < data.size(); ++i) {
    const std::string name = "d" + std::to_string(i);
    g += PlaceholderNode(name, DtEnum(data[i].dtype()));
    feeds.emplace_back(name + ":0", data[i]);
    inputs.push_back(name);
    types.push_back(data[i].dtype());
  }
  g += NodeText("check/Assert", "Assert", inputs, TypeListAttr("T", types) + IntAttr("summarize", summarize));
  proto::GraphDef graph;
  GR_RETURN_IF_ERROR(ParseGraphDefText(g, &graph));
  std::unique_ptr<Session> s;
  GR_RETURN_IF_ERROR(NewSession(OpTestOptions(1), &s));
  GR_RETURN_IF_ERROR(s->Create(graph));
  std::vector<Tensor> out;
  return s->Run(feeds, {}, {"check/Assert"}, &out);
}

std::string Message(const Status& s) { return s.message(); }

TEST(AssertTest, TrueConditionPasses) {
  EXPECT_TRUE(RunAssert(true, {Str("never printed"), IntTensor(GR_INT32, {3}, {1, 2, 3})}).ok());
}

TEST(AssertTest, FalseConditionSummarizesData) {
  // TensorFlow's own example: tf.Assert(x > 0, ["x is", x]) with summarize 3.
  Status s = RunAssert(false, {Str("x is"), IntTensor(GR_INT32, {5}, {1, 2, 3, 4, 5})});
  EXPECT_ERROR(s, Code::kInvalidArgument, "check/Assert", "assertion failed: [x is] [1 2 3...]");
  // Everything fits: no "...".
  s = RunAssert(false, {IntTensor(GR_INT64, {3}, {-1, 0, 9})});
  EXPECT_ERROR(s, Code::kInvalidArgument, "assertion failed: [-1 0 9]");
  EXPECT_FALSE(Contains(Message(s), "..."));
  // summarize -1: every element.
  s = RunAssert(false, {IntTensor(GR_INT32, {5}, {1, 2, 3, 4, 5})}, -1);
  EXPECT_ERROR(s, Code::kInvalidArgument, "assertion failed: [1 2 3 4 5]");
  // As in TensorFlow, data holds at least one tensor (T: list(type) has minimum 1).
  EXPECT_ERROR(RunAssert(false, {}), Code::kInvalidArgument, "'T' has length 0");
}

TEST(AssertTest, NestedBracketsForMatrices) {
  const Tensor m = IntTensor(GR_INT32, {2, 2}, {1, 2, 3, 4});
  EXPECT_ERROR(RunAssert(false, {m}), Code::kInvalidArgument, "assertion failed: [[1 2][3...]...]");
  EXPECT_ERROR(RunAssert(false, {m}, 10), Code::kInvalidArgument, "assertion failed: [[1 2][3 4]]");
  EXPECT_ERROR(RunAssert(false, {m}, 2), Code::kInvalidArgument, "assertion failed: [[1 2]...]");
  const Tensor t3 = IntTensor(GR_INT32, {2, 1, 2}, {1, 2, 3, 4});
  EXPECT_ERROR(RunAssert(false, {t3}), Code::kInvalidArgument, "assertion failed: [[[1 2]][[3...]]...]");
  // Empty tensors print nothing.
  EXPECT_ERROR(RunAssert(false, {IntTensor(GR_INT32, {0}, {}), Str("end")}), Code::kInvalidArgument,
               "assertion failed: [] [end]");
}

TEST(AssertTest, ElementFormats) {
  const Tensor f = MakeTensor<float>(GR_FLOAT, {5}, {0.1f, 1.f, -2.5f, 1e10f, std::nanf("")});
  EXPECT_ERROR(RunAssert(false, {f}, 5), Code::kInvalidArgument, "assertion failed: [0.1 1 -2.5 1e+10 nan]");
  // A float that needs 9 digits to read back.
  const Tensor g = MakeTensor<float>(GR_FLOAT, {1}, {16777217.f /* rounds to 16777216 */ + 0.f});
  EXPECT_ERROR(RunAssert(false, {g}), Code::kInvalidArgument, "assertion failed: [16777216]");
  const Tensor d = MakeTensor<double>(GR_DOUBLE, {2}, {0.1, 1.0 / 3});
  EXPECT_ERROR(RunAssert(false, {d}), Code::kInvalidArgument, "assertion failed: [0.1 0.33333333333333331]");
  EXPECT_ERROR(RunAssert(false, {BoolTensor({2}, {true, false})}), Code::kInvalidArgument, "assertion failed: [1 0]");
  EXPECT_ERROR(RunAssert(false, {Str("quote\" newline\n")}), Code::kInvalidArgument,
               "assertion failed: [quote\\\" newline\\n]");
}

TEST(AssertTest, ConditionMustBeScalar) {
  const std::string g = PlaceholderNode("cond", "DT_BOOL") + ConstNode("msg", "DT_STRING", {}, "string_val", {"\"m\""}) +
                        NodeText("a", "Assert", {"cond", "msg"}, TypeListAttr("T", {GR_STRING}) + IntAttr("summarize", 3));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"cond:0", BoolTensor({2}, {true, true})}}, {}, {"a"}, &out), Code::kInvalidArgument, "a",
               "In[0] should be a scalar: [2]");
  // The session is intact: the next Run works.
  EXPECT_TRUE(s->Run({{"cond:0", BoolTensor({}, {true})}}, {}, {"a"}, &out).ok());
}

// TF1's pattern: a value guarded by a control dependency on the Assert.
// A constant false condition must not be folded away (Assert is stateful).
TEST(AssertTest, GuardsAValueThroughAControlEdgeAndIsNotFolded) {
  const std::string g = ConstFloat("x", {2}, {1, -1}) + ConstNode("cond", "DT_BOOL", {}, "bool_val", {"false"}) +
                        NodeText("check", "Assert", {"cond", "x"}, TypeListAttr("T", {GR_FLOAT}) + IntAttr("summarize", 3)) +
                        NodeText("y", "Identity", {"x", "^check"}, TypeAttr("T", "DT_FLOAT"));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g));
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({}, {"y:0"}, {}, &out), Code::kInvalidArgument, "check", "assertion failed: [1 -1]");
  // Feeding the condition true lets y through.
  ASSERT_TRUE(s->Run({{"cond:0", BoolTensor({}, {true})}}, {"y:0"}, {}, &out).ok());
  ExpectValuesEq<float>(out[0], {1, -1});
}

}  // namespace
}  // namespace graphrt
