// The embedding API (graphrt/model.h): loading SavedModels and GraphDefs,
// their input/output specs, running, and tensors over caller memory.
#include "graphrt/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <thread>

#include "client_test_util.h"
#include "graphrt/core/session.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ToVector;

Tensor Floats(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  return MakeTensor<float>(GR_FLOAT, dims, values);
}

std::string MlpPath() { return std::string(GRAPHRT_SOURCE_DIR) + "/examples/graphs/mlp.pbtxt"; }

// mlp.pbtxt's weights, and its function computed naively:
// probs = Softmax(Relu(x @ W + b) @ W2).
std::vector<float> MlpReference(const std::vector<float>& x) {
  const float W[3][4] = {{0.5f, -1.0f, 0.25f, 1.0f}, {-0.5f, 0.75f, 0.5f, 0.0f}, {1.0f, 0.25f, -0.25f, 0.5f}};
  const float b[4] = {0.1f, 0.2f, -0.3f, 0.0f};
  const float W2[4][2] = {{1.0f, -1.0f}, {0.5f, 0.5f}, {-1.0f, 1.0f}, {0.25f, 0.75f}};
  float hidden[4];
  for (int j = 0; j < 4; ++j) {
    float s = b[j];
    for (int i = 0; i < 3; ++i) s += x[i] * W[i][j];
    hidden[j] = std::max(s, 0.0f);
  }
  float logits[2] = {0, 0};
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 4; ++j) logits[k] += hidden[j] * W2[j][k];
  const float m = std::max(logits[0], logits[1]);
  const float e0 = std::exp(logits[0] - m), e1 = std::exp(logits[1] - m);
  return {e0 / (e0 + e1), e1 / (e0 + e1)};
}

TEST(ModelTest, GraphDefSpecsDefaultToPlaceholdersAndSinks) {
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Load(MlpPath(), {}, &model).ok());
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].tensor, "x:0");
  EXPECT_EQ(model->inputs()[0].dtype, GR_FLOAT);
  EXPECT_EQ(model->inputs()[0].shape.DebugString(), "[?,3]");
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].tensor, "probs:0");

  const std::vector<float> x = {1, 2, 3};
  std::vector<Tensor> out;
  ASSERT_TRUE(model->Run({Floats({1, 3}, x)}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), TensorShape({1, 2}));
  const std::vector<float> want = MlpReference(x), got = ToVector<float>(out[0]);
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(got[k], want[k], 1e-6);

  // By name, with an explicit output: hidden layer values.
  ModelOptions options;
  options.outputs = {"hidden"};
  ASSERT_TRUE(Model::Load(MlpPath(), options, &model).ok());
  ASSERT_TRUE(model->Run({{"x:0", Floats({1, 3}, {0, 0, 0})}}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0.1f, 0.2f, 0.0f, 0.0f}));  // Relu(b)
}

TEST(ModelTest, ErrorsNameTheProblemAndTheModelKeepsWorking) {
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Load(MlpPath(), {}, &model).ok());
  std::vector<Tensor> out;
  Status s = model->Run({}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("0 inputs given, the model has 1"), std::string::npos) << s.ToString();
  s = model->Run({{"nope", Floats({1, 3}, {1, 2, 3})}}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("no input 'nope' (its inputs: x)"), std::string::npos) << s.ToString();
  s = model->Run({MakeTensor<int32_t>(GR_INT32, {1, 3}, {1, 2, 3})}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("x:0"), std::string::npos) << s.ToString();
  EXPECT_TRUE(model->Run({Floats({1, 3}, {1, 2, 3})}, &out).ok());

  s = Model::Load("/nonexistent/model.pb", {}, &model);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/model.pb"), std::string::npos) << s.ToString();
  EXPECT_EQ(model, nullptr);
}

TEST(ModelTest, SavedModelSignature) {
  GRAPHRT_TESTDATA(dir, "serving/saved_model_half_plus_two_cpu/00000123");
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::Load(dir, {}, &model).ok());
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].tensor, "x:0");
  EXPECT_EQ(model->inputs()[0].shape.DebugString(), "[?,1]");
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].name, "y");
  std::vector<Tensor> out;
  ASSERT_TRUE(model->Run({Floats({3, 1}, {1, 2, 5})}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{2.5f, 3.0f, 4.5f}));  // 0.5 x + 2
  ASSERT_TRUE(model->Run({{"x", Floats({1, 1}, {4})}}, {"y"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{4.0f}));

  // Many threads on one model.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::vector<Tensor> o;
        const float x = static_cast<float>(t * 100 + i);
        if (!model->Run({Floats({1, 1}, {x})}, &o).ok() || ToVector<float>(o[0])[0] != 0.5f * x + 2)
          ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);

  ModelOptions options;
  options.signature = "no_such_signature";
  Status s = Model::Load(dir, options, &model);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("serving_default"), std::string::npos) << s.ToString();  // lists the keys
}

TEST(TensorFromMemoryTest, AlignedMemoryIsAdoptedAndReleasedWithTheLastTensor) {
  auto* data = static_cast<float*>(std::aligned_alloc(64, 64));
  for (int i = 0; i < 4; ++i) data[i] = static_cast<float>(i);
  int released = 0;
  {
    Tensor t;
    ASSERT_TRUE(TensorFromMemory(GR_FLOAT, TensorShape({2, 2}), data, 16,
                                 [&released](void* p) {
                                   ++released;
                                   std::free(p);
                                 },
                                 &t)
                    .ok());
    EXPECT_EQ(t.data<float>(), data);  // no copy
    Tensor copy = t;
    t = Tensor();
    EXPECT_EQ(released, 0);
    EXPECT_EQ(ToVector<float>(copy), (std::vector<float>{0, 1, 2, 3}));
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorFromMemoryTest, UnalignedMemoryIsCopiedAndReleasedAtOnce) {
  alignas(64) float buf[5] = {9, 1, 2, 3, 4};
  int released = 0;
  Tensor t;
  ASSERT_TRUE(TensorFromMemory(GR_FLOAT, TensorShape({4}), buf + 1, 16, [&released](void*) { ++released; }, &t).ok());
  EXPECT_EQ(released, 1);
  EXPECT_NE(t.data<float>(), buf + 1);
  buf[1] = 100;  // the tensor holds its own copy
  EXPECT_EQ(ToVector<float>(t), (std::vector<float>{1, 2, 3, 4}));
}

TEST(TensorFromMemoryTest, BadArgumentsAreRefusedAndTheMemoryKept) {
  alignas(64) float buf[4] = {};
  int released = 0;
  auto release = [&released](void*) { ++released; };
  Tensor t;
  Status s = TensorFromMemory(GR_FLOAT, TensorShape({3}), buf, 16, release, &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("16 bytes given but a float tensor of shape [3] has 12"), std::string::npos)
      << s.ToString();
  s = TensorFromMemory(GR_STRING, TensorShape({1}), buf, 16, release, &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  s = TensorFromMemory(GR_FLOAT, TensorShape({4}), nullptr, 16, release, &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(released, 0);
}

}  // namespace
}  // namespace graphrt
