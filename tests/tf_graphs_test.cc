// Real TensorFlow-written graphs from ../shared/tf_testdata with the outputs
// its README lists.
#include <gtest/gtest.h>

#include <numeric>

#include "graphrt/core/graph_def_io.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ToVector;

std::unique_ptr<Session> Load(const std::string& rel) {
  const std::string path = testing::SharedPath("tf_testdata/" + rel);
  if (path.empty()) return nullptr;
  proto::GraphDef g;
  Status s = ReadGraphDefFromFile(path, &g);
  EXPECT_TRUE(s.ok()) << s;
  return testing::CreateSession(g);
}

#define LOAD_OR_SKIP(var, rel)                                  \
  auto var = Load(rel);                                         \
  if (!var) GTEST_SKIP() << "../shared/tf_testdata/" rel " not present"

TEST(TfGraphs, RustAdditionInt32) {
  LOAD_OR_SKIP(s, "rust/examples/addition/model.pb");
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x", MakeTensor<int32_t>(GR_INT32, {}, {2})}, {"y", MakeTensor<int32_t>(GR_INT32, {}, {3})}},
                     {"z:0"}, {}, &out)
                  .ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 5);
}

// Ref variables in TensorFlow's own graphs (init path; the checkpoint path
// needs RestoreV2): the serving counter's whole sequence, as the README
// lists it, including the uninitialized error and ref-typed fetches.
TEST(TfGraphs, CounterSequence) {
  LOAD_OR_SKIP(s, "derived/counter.graphdef.pb");
  std::vector<Tensor> out;
  Status before = s->Run({}, {"counter:0"}, {}, &out);
  EXPECT_EQ(before.code(), Code::kFailedPrecondition) << before;
  EXPECT_NE(before.message().find("Attempting to use uninitialized value counter"), std::string::npos) << before;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, nullptr).ok());
  auto fetch = [&](const std::vector<std::pair<std::string, Tensor>>& feeds, const std::string& name) {
    std::vector<Tensor> o;
    Status st = s->Run(feeds, {name}, {}, &o);
    EXPECT_TRUE(st.ok()) << name << ": " << st;
    return st.ok() ? o[0].scalar<float>() : -1.0f;
  };
  EXPECT_EQ(fetch({}, "counter:0"), 0.0f);
  EXPECT_EQ(fetch({}, "incr_counter_op/AssignAdd:0"), 1.0f);
  EXPECT_EQ(fetch({}, "incr_counter_op/AssignAdd:0"), 2.0f);
  EXPECT_EQ(fetch({{"delta:0", MakeTensor<float>(GR_FLOAT, {}, {2.5f})}}, "incr_counter_by_op/AssignAdd:0"), 4.5f);
  EXPECT_EQ(fetch({}, "reset_counter_op/Assign:0"), 0.0f);
  EXPECT_EQ(fetch({}, "counter:0"), 0.0f);
}

// y = a*x + b with a, b, c variables initialised by `init` (VariableV2 in
// the TF 1.14 and 1.0 exports).
void ExpectHalfPlus(Session* s, float b, float c, bool has_x2_placeholder) {
  std::vector<Tensor> out;
  Status before = s->Run({{"x:0", MakeTensor<float>(GR_FLOAT, {3, 1}, {1, 2, 5})}}, {"y:0"}, {}, &out);
  EXPECT_EQ(before.code(), Code::kFailedPrecondition) << before;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, nullptr).ok());
  ASSERT_TRUE(s->Run({{"x:0", MakeTensor<float>(GR_FLOAT, {3, 1}, {1, 2, 5})}}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0.5f + b, 1 + b, 2.5f + b}));
  if (has_x2_placeholder) {
    ASSERT_TRUE(s->Run({{"x2:0", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 5})}}, {"y2:0"}, {}, &out).ok());
    EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0.5f + c, 1 + c, 2.5f + c}));
  }
}

TEST(TfGraphs, HalfPlusTwoCpuInitPath) {
  LOAD_OR_SKIP(s, "derived/half_plus_two_cpu.graphdef.pb");
  ExpectHalfPlus(s.get(), 2, 3, false);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x2:0", MakeTensor<float>(GR_FLOAT, {3, 1}, {1, 2, 5})}}, {"y3:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{3.5f, 4.0f, 5.5f}));
}

TEST(TfGraphs, HalfPlusThreeInitPath) {
  LOAD_OR_SKIP(s, "derived/half_plus_three.graphdef.pb");
  ExpectHalfPlus(s.get(), 3, 3, true);
}

TEST(TfGraphs, MatrixHalfPlusTwo) {
  LOAD_OR_SKIP(s, "derived/matrix_half_plus_two.graphdef.pb");
  std::vector<Tensor> out;
  Tensor x = MakeTensor<float>(GR_FLOAT, {1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ASSERT_TRUE(s->Run({{"x:0", x}}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5}));
  EXPECT_EQ(out[0].shape(), TensorShape({1, 3, 3}));
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());  // empty NoOp
}

TEST(TfGraphs, Tf2OnnxRegressionFrozenWithoutVersions) {
  LOAD_OR_SKIP(s, "tf2onnx/models/regression/graphdef/frozen.pb");
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"X:0", MakeTensor<float>(GR_FLOAT, {1}, {1})}}, {"pred:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].data<float>()[0], 1.2634872f, 1e-6);
  ASSERT_TRUE(s->Run({{"X:0", MakeTensor<float>(GR_FLOAT, {2}, {2, 3})}}, {"pred:0"}, {}, &out).ok());
  EXPECT_NEAR(out[0].data<float>()[0], 1.4774489f, 1e-6);
  EXPECT_NEAR(out[0].data<float>()[1], 1.6914107f, 1e-6);
}

// Feeds X:0 = ramp * scale ([1,784]) and compares the first values of
// output:0 and the sum over all of it (1e-4 relative, as the README says).
void ExpectFrozenNet(Session* s, float scale, size_t out_size, const std::vector<double>& want_first,
                     double want_sum) {
  std::vector<float> ramp(784);
  for (int i = 0; i < 784; ++i) ramp[i] = static_cast<float>(i + 1) * scale;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"X:0", MakeTensor<float>(GR_FLOAT, {1, 784}, ramp)}}, {"output:0"}, {}, &out).ok());
  std::vector<float> got = ToVector<float>(out[0]);
  ASSERT_EQ(got.size(), out_size);
  for (size_t i = 0; i < want_first.size(); ++i)
    EXPECT_NEAR(got[i], want_first[i], std::abs(want_first[i]) * 1e-4) << i;
  EXPECT_NEAR(std::accumulate(got.begin(), got.end(), 0.0), want_sum, std::abs(want_sum) * 1e-4);
}

TEST(TfGraphs, Tf2OnnxFcLayers) {
  LOAD_OR_SKIP(s, "tf2onnx/models/fc-layers/frozen.pb");
  ExpectFrozenNet(s.get(), 1.0f, 10,
                  {-9757.53, -2871.289, 7155.592, 1267.367, -12316.45, -3547.959, -14339.29, -4228.1, -3446.947,
                   -13547.02},
                  -55631.64);
  ExpectFrozenNet(s.get(), 1.0f / 784.0f, 10,
                  {-11.35731, -4.619522, 8.97691, 1.548684, -15.4279, -4.322704, -17.94526, -6.049786, -2.820791,
                   -16.78896},
                  -68.80664);
}

TEST(TfGraphs, Tf2OnnxAutoencoderAe0) {
  LOAD_OR_SKIP(s, "tf2onnx/models/ae0/frozen.pb");
  ExpectFrozenNet(s.get(), 1.0f, 784,
                  {0.009989675, 0.008569391, 0.008143927, 0.00897425, 0.01093423, 0.009925126, 0.00812442,
                   0.01027221, 0.01089093, 0.009987145},
                  178.0778);
  ExpectFrozenNet(s.get(), 1.0f / 784.0f, 784,
                  {0.009832659, 0.008577843, 0.00791168, 0.009150209, 0.0111102, 0.009969053, 0.007840979,
                   0.01048595, 0.01123524, 0.009768935},
                  171.4495);
}

TEST(TfGraphs, ConstValuesTensorContentPbtxt) {
  LOAD_OR_SKIP(s, "tensorflow/graphdef2mlir/const-values.pbtxt");
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"x", "y", "z"}, {}, &out).ok());
  EXPECT_EQ(out[0].dtype(), GR_FLOAT);
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out[1].dtype(), GR_INT64);
  EXPECT_EQ(ToVector<int64_t>(out[1]), (std::vector<int64_t>{1, 3, 2, 5, 4, 7}));
  EXPECT_EQ(out[2].dtype(), GR_INT32);
  EXPECT_EQ(ToVector<int32_t>(out[2]), (std::vector<int32_t>{1, 3, 2, 5, 4, 7}));
  EXPECT_EQ(out[2].shape(), TensorShape({2, 3}));
}

}  // namespace
}  // namespace graphrt
