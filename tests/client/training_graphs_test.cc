// TensorFlow 1 training graphs written by TensorFlow itself (tf_testdata
// README, acceptance cases 5, 6 and 10) trained by graphrt. Expected values
// come from the README or, where it gives none, from a central difference of
// the graph's own loss, independent of the gradient ops under test.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "client_test_util.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using Feeds = std::vector<std::pair<std::string, Tensor>>;

std::unique_ptr<Session> SessionFor(const std::string& graph_path) {
  testing::LoadStandardPlugins();
  proto::GraphDef graph;
  Status s = ReadGraphDefFromFile(graph_path, &graph);
  EXPECT_TRUE(s.ok()) << s;
  std::unique_ptr<Session> session;
  s = NewSession(testing::OpTestOptions(1), &session);
  EXPECT_TRUE(s.ok()) << s;
  s = session->Create(graph);
  EXPECT_TRUE(s.ok()) << s;
  return session;
}

float FetchScalar(Session* session, const Feeds& feeds, const std::string& name) {
  std::vector<Tensor> out;
  Status s = session->Run(feeds, {name}, {}, &out);
  EXPECT_TRUE(s.ok()) << name << ": " << s;
  return s.ok() ? out[0].data<float>()[0] : NAN;
}

Feeds LineFeeds(const std::string& x_name, const std::string& y_name, const std::vector<float>& x) {
  std::vector<float> y;
  for (float v : x) y.push_back(0.1f * v + 0.3f);
  const int64_t n = static_cast<int64_t>(x.size());
  return {{x_name, MakeTensor<float>(GR_FLOAT, {n}, x)}, {y_name, MakeTensor<float>(GR_FLOAT, {n}, y)}};
}

// rust/examples/regression: `init` then 201 `train` steps on y = 0.1x + 0.3
// bring w to 0.1 and b to 0.3 (README case 5/6, tolerance 1e-5).
TEST(TrainingGraphsTest, RustRegressionConverges) {
  GRAPHRT_TESTDATA(path, "rust/examples/regression/model.pb");
  auto session = SessionFor(path);
  ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
  const Feeds feeds = LineFeeds("x:0", "y:0", {-1, -0.5f, 0, 0.5f, 1});
  for (int step = 0; step < 201; ++step) ASSERT_TRUE(session->Run(feeds, {}, {"train"}, nullptr).ok());
  EXPECT_NEAR(FetchScalar(session.get(), {}, "w:0"), 0.1f, 1e-5);
  EXPECT_NEAR(FetchScalar(session.get(), {}, "b:0"), 0.3f, 1e-5);
}

// rust/examples/regression_checkpoint: train, save through the graph's own
// non-sharded Saver, train on, restore: the saved values come back exactly.
TEST(TrainingGraphsTest, RustRegressionCheckpointSavesAndRestores) {
  GRAPHRT_TESTDATA(path, "rust/examples/regression_checkpoint/model.pb");
  testing::ScopedTempDir dir;
  auto session = SessionFor(path);
  ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
  const Feeds feeds = LineFeeds("x:0", "y:0", {-1, -0.5f, 0, 0.5f, 1});
  for (int step = 0; step < 5; ++step) ASSERT_TRUE(session->Run(feeds, {}, {"train"}, nullptr).ok());
  const float w_saved = FetchScalar(session.get(), {}, "w:0");
  const float b_saved = FetchScalar(session.get(), {}, "b:0");
  const Feeds save_path = {{"save/Const:0", Tensor::StringScalar(dir.path() + "/saved.ckpt")}};
  Status s = session->Run(save_path, {}, {"save/control_dependency"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  for (int step = 0; step < 5; ++step) ASSERT_TRUE(session->Run(feeds, {}, {"train"}, nullptr).ok());
  ASSERT_NE(FetchScalar(session.get(), {}, "w:0"), w_saved);
  s = session->Run(save_path, {}, {"save/restore_all"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(FetchScalar(session.get(), {}, "w:0"), w_saved);
  EXPECT_EQ(FetchScalar(session.get(), {}, "b:0"), b_saved);
  // A fresh session restores the same values without running `init`.
  auto fresh = SessionFor(path);
  s = fresh->Run(save_path, {}, {"save/restore_all"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(FetchScalar(fresh.get(), {}, "w:0"), w_saved);
  EXPECT_EQ(FetchScalar(fresh.get(), {}, "b:0"), b_saved);
}

// tf2onnx regression (TF 1.11): cost = sum((X*W + b - Y)^2) / c with a
// GradientDescent train op whose gradient runs through Pow's gradient
// (Greater/Select/Log/ZerosLike) and RealDiv's. One step from the restored
// checkpoint must equal W - lr * dcost/dW with the derivative taken by a
// central difference of `truediv` (the cost) with W/read and b/read fed.
TEST(TrainingGraphsTest, Tf2OnnxRegressionOneStepMatchesFiniteDifference) {
  GRAPHRT_TESTDATA(dir, "tf2onnx/models/regression/checkpoint");
  SavedModelBundle bundle;
  testing::LoadStandardPlugins();
  Status s = LoadMetaGraphAndCheckpoint(testing::OpTestOptions(1), dir + "/model.meta", dir + "/model", &bundle);
  ASSERT_TRUE(s.ok()) << s;
  Session* session = bundle.session.get();
  const Feeds data = {{"X:0", MakeTensor<float>(GR_FLOAT, {4}, {1, 2, 3, 4})},
                      {"Y:0", MakeTensor<float>(GR_FLOAT, {4}, {3.0f, 2.0f, 4.5f, 5.0f})}};
  const float w = FetchScalar(session, {}, "W:0");
  const float b = FetchScalar(session, {}, "b:0");
  EXPECT_NEAR(w, 0.21396178f, 1e-7);
  EXPECT_NEAR(b, 1.0495254f, 1e-7);
  const float lr = FetchScalar(session, {}, "GradientDescent/learning_rate:0");
  auto cost_at = [&](double wv, double bv) {
    Feeds feeds = data;
    feeds.emplace_back("W/read:0", MakeTensor<float>(GR_FLOAT, {}, {static_cast<float>(wv)}));
    feeds.emplace_back("b/read:0", MakeTensor<float>(GR_FLOAT, {}, {static_cast<float>(bv)}));
    return static_cast<double>(FetchScalar(session, feeds, "truediv:0"));
  };
  const double h = 1.0 / 64;  // exact in float; the cost is quadratic, so the difference is exact up to rounding
  const double dw = (cost_at(w + h, b) - cost_at(w - h, b)) / (2 * h);
  const double db = (cost_at(w, b + h) - cost_at(w, b - h)) / (2 * h);
  ASSERT_GT(std::abs(lr * dw), 1e-3);  // the step moves W well beyond the tolerance
  ASSERT_GT(std::abs(lr * db), 1e-3);
  s = session->Run(data, {}, {"GradientDescent"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NEAR(FetchScalar(session, {}, "W:0"), w - lr * dw, 1e-5);
  EXPECT_NEAR(FetchScalar(session, {}, "b:0"), b - lr * db, 1e-5);
}

}  // namespace
}  // namespace graphrt
