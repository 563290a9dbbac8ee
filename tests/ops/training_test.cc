// Optimizer updates (ops/training): ApplyGradientDescent on ref variables and
// ResourceApplyGradientDescent on resource variables, var -= alpha * delta
// (tf_behaviours.md §11), checked against hand-computed values, with the
// shape and initialization errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT

std::string Graph() {
  const std::string shape = "attr { key: 'shape' value { shape { dim { size: 3 } } } } ";
  return NodeText("v", "VariableV2", {}, TypeAttr("dtype", "DT_FLOAT") + shape) +
         NodeText("h", "VarHandleOp", {}, TypeAttr("dtype", "DT_FLOAT") + shape +
                                              "attr { key: 'shared_name' value { s: 'h' } } ") +
         ConstFloat("init_value", {3}, {1, 2, 3}) + PlaceholderNode("alpha", "DT_FLOAT") +
         PlaceholderNode("delta", "DT_FLOAT") +
         NodeText("init", "Assign", {"v", "init_value"}, TypeAttr("T", "DT_FLOAT")) +
         NodeText("init_h", "AssignVariableOp", {"h", "init_value"}, TypeAttr("dtype", "DT_FLOAT")) +
         NodeText("step", "ApplyGradientDescent", {"v", "alpha", "delta"}, TypeAttr("T", "DT_FLOAT")) +
         NodeText("step_h", "ResourceApplyGradientDescent", {"h", "alpha", "delta"}, TypeAttr("T", "DT_FLOAT")) +
         NodeText("read_h", "ReadVariableOp", {"h"}, TypeAttr("dtype", "DT_FLOAT"));
}

Feeds StepFeeds(std::vector<int64_t> alpha_dims, std::vector<float> alpha, std::vector<float> delta) {
  return {{"alpha", MakeTensor<float>(GR_FLOAT, alpha_dims, alpha)},
          {"delta", MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(delta.size())}, delta)}};
}

TEST(GradientDescentTest, RefAndResourceFormsSubtractAlphaTimesDelta) {
  auto s = CreateSession(ParseGraph(Graph()));
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run(StepFeeds({}, {0.5f}, {1, 1, 1}), {"step"}, {}, &out), Code::kFailedPrecondition,
               "uninitialized value v");
  EXPECT_ERROR(s->Run(StepFeeds({}, {0.5f}, {1, 1, 1}), {}, {"step_h"}, &out), Code::kFailedPrecondition,
               "Attempting to use uninitialized variables: h");
  ASSERT_TRUE(s->Run({}, {}, {"init", "init_h"}, nullptr).ok());
  ASSERT_TRUE(s->Run(StepFeeds({}, {0.5f}, {2, -4, 0.25f}), {"step"}, {"step_h"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0, 4, 2.875f}));
  ASSERT_TRUE(s->Run({}, {"read_h"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0, 4, 2.875f}));
  EXPECT_ERROR(s->Run(StepFeeds({1}, {0.5f}, {1, 1, 1}), {"step"}, {}, &out), Code::kInvalidArgument,
               "alpha is not a scalar: [1]");
  EXPECT_ERROR(s->Run(StepFeeds({}, {0.5f}, {1, 1}), {}, {"step_h"}, &out), Code::kInvalidArgument,
               "var and delta do not have the same shape");
  ASSERT_TRUE(s->Run({}, {"v"}, {}, &out).ok());  // the failed steps changed nothing
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0, 4, 2.875f}));
}

}  // namespace
}  // namespace graphrt
