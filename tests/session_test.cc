// DirectSession behaviours (TensorFlow's direct_session/subgraph/executor tests, restated).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "graphrt/core/device.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ToVector;

// y = a * x, y_neg = -y, z = Identity(y_neg)
constexpr char kMinusAX[] = R"(
node { name: 'a' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
    float_val: 3 float_val: 2 float_val: -1 float_val: 0 } } } }
node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 1 } }
    float_val: 1 } } } }
node { name: 'y' op: 'MatMul' input: 'a' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
node { name: 'y_neg' op: 'Neg' input: 'y' attr { key: 'T' value { type: DT_FLOAT } } }
node { name: 'z' op: 'Identity' input: 'y_neg' attr { key: 'T' value { type: DT_FLOAT } } }
)";

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session_ = testing::CreateSession(testing::ParseGraph(kMinusAX));
    ASSERT_NE(session_, nullptr);
  }
  std::unique_ptr<Session> session_;
};

TEST_F(SessionTest, RunSimpleNetwork) {
  std::vector<Tensor> out;
  ASSERT_TRUE(session_->Run({}, {"y:0"}, {"y_neg"}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 5.0f);
  EXPECT_FLOAT_EQ(out[0].data<float>()[1], -1.0f);
}

TEST_F(SessionTest, FeedOverridesAConstAndBareNamesMeanOutputZero) {
  std::vector<Tensor> out;
  Tensor x = MakeTensor<float>(GR_FLOAT, {2, 1}, {5, 6});
  ASSERT_TRUE(session_->Run({{"x", x}}, {"y:0", "z"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{27, -5}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{-27, 5}));
}

TEST_F(SessionTest, FetchOrderAndDuplicatesFollowTheRequest) {
  std::vector<Tensor> out;
  ASSERT_TRUE(session_->Run({}, {"z:0", "y:0", "z:0"}, {}, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], -5.0f);
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], 5.0f);
  EXPECT_FLOAT_EQ(out[2].data<float>()[0], -5.0f);
}

TEST_F(SessionTest, PruningErrorsAndTheSessionKeepsWorking) {
  std::vector<Tensor> out;
  Tensor x = MakeTensor<float>(GR_FLOAT, {2, 1}, {1, 1});
  struct Case {
    std::vector<std::pair<std::string, Tensor>> feeds;
    std::vector<std::string> fetches, targets;
    Code code;
    std::string message;
  } cases[] = {
      {{}, {}, {}, Code::kInvalidArgument, "Must specify at least one target to fetch or execute."},
      {{{"foo:0", x}}, {"y:0"}, {}, Code::kNotFound, "FeedInputs: unable to find feed output foo:0"},
      {{}, {"foo:0"}, {}, Code::kNotFound, "FetchOutputs node foo:0: not found"},
      {{}, {}, {"foo"}, Code::kNotFound, "PruneForTargets: Some target nodes not found: foo"},
      {{}, {}, {"y:0"}, Code::kNotFound, "Some target nodes not found: y:0"},
      {{{"x:0", x}, {"x", x}}, {"y:0"}, {}, Code::kInvalidArgument, "Endpoint \"x:0\" fed more than once."},
      {{{"x:1", x}}, {"y:0"}, {}, Code::kInvalidArgument, "FeedInputs: x:1 should have output index < 1"},
      {{}, {"y:3"}, {}, Code::kInvalidArgument, "FetchOutputs y:3: output index too large, must be < 1"},
      {{{"x", MakeTensor<int32_t>(GR_INT32, {1}, {1})}}, {"y:0"}, {}, Code::kInvalidArgument, "dtype int32"},
      {{{"x", MakeTensor<float>(GR_FLOAT, {3, 1}, {1, 1, 1})}}, {"y:0"}, {}, Code::kInvalidArgument, "Node 'y'"},
  };
  for (const Case& c : cases) {
    Status s = session_->Run(c.feeds, c.fetches, c.targets, &out);
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
    ASSERT_TRUE(session_->Run({}, {"y:0"}, {}, &out).ok());
    EXPECT_FLOAT_EQ(out[0].data<float>()[0], 5.0f);
  }
}

TEST_F(SessionTest, FetchingANoOutputNodeExplainsTargets) {
  auto s = testing::CreateSession(testing::ParseGraph("node { name: 'n' op: 'NoOp' }"));
  std::vector<Tensor> out;
  Status st = s->Run({}, {"n"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("Tried to fetch data for 'n', which produces no output."), std::string::npos);
  EXPECT_TRUE(s->Run({}, {}, {"n"}, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST_F(SessionTest, CreateTwiceFailsAndRunWithoutCreateFails) {
  EXPECT_FALSE(session_->Create(testing::ParseGraph(kMinusAX)).ok());
  std::unique_ptr<Session> fresh;
  ASSERT_TRUE(NewSession(SessionOptions(), &fresh).ok());
  std::vector<Tensor> out;
  Status s = fresh->Run({}, {"y:0"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("Session was not created with a graph before Run()!"), std::string::npos);
}

TEST_F(SessionTest, CloseCancelsLaterRuns) {
  ASSERT_TRUE(session_->Close().ok());
  std::vector<Tensor> out;
  Status s = session_->Run({}, {"y:0"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kCancelled);
  EXPECT_NE(s.message().find("Session has been closed."), std::string::npos);
}

TEST_F(SessionTest, ExtendAddsNodes) {
  ASSERT_TRUE(session_
                  ->Extend(testing::ParseGraph(
                      "node { name: 'w' op: 'AddV2' input: 'z' input: 'y' attr { key: 'T' value { type: DT_FLOAT } } }"))
                  .ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session_->Run({}, {"w:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{0, 0}));
  // A failed Extend (name clash) leaves the graph as it was.
  EXPECT_FALSE(session_->Extend(testing::ParseGraph("node { name: 'w' op: 'NoOp' }")).ok());
  ASSERT_TRUE(session_->Run({}, {"w:0"}, {}, &out).ok());
}

TEST_F(SessionTest, TracingFillsStepStats) {
  proto::RunOptions opts;
  opts.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  // x is fed: of an all-constant graph, constant folding leaves one Const.
  const std::vector<std::pair<std::string, Tensor>> feed = {{"x", MakeTensor<float>(GR_FLOAT, {2, 1}, {1, 1})}};
  ASSERT_TRUE(session_->Run(opts, feed, {"z:0"}, {}, &out, &md).ok());
  ASSERT_EQ(md.step_stats().dev_stats_size(), 1);
  EXPECT_NE(md.step_stats().dev_stats(0).device().find("CPU:0"), std::string::npos);
  int kernels = 0;
  for (const auto& ns : md.step_stats().dev_stats(0).node_stats()) {
    EXPECT_LE(ns.all_start_nanos(), ns.all_start_nanos() + ns.op_end_rel_nanos());
    if (ns.node_name() == "y" || ns.node_name() == "z") ++kernels;
  }
  EXPECT_EQ(kernels, 2);
  ASSERT_TRUE(session_->Run(proto::RunOptions(), feed, {"z:0"}, {}, &out, &md).ok());
  EXPECT_EQ(md.step_stats().dev_stats_size(), 0);
}

TEST(SessionConcurrency, ManyThreadsRunOneSession) {
  for (int threads : {1, 2}) {
    auto s = testing::CreateSession(testing::ParseGraph(kMinusAX), threads);
    std::vector<std::thread> workers;
    std::atomic<int> bad{0};
    for (int t = 0; t < 4; ++t) {
      workers.emplace_back([&] {
        for (int i = 0; i < 500; ++i) {
          std::vector<Tensor> out;
          if (!s->Run({}, {"z:0"}, {}, &out).ok() || out[0].data<float>()[0] != -5.0f) ++bad;
        }
      });
    }
    for (auto& w : workers) w.join();
    EXPECT_EQ(bad.load(), 0);
  }
}

// 4096 Identity copies of one input summed by a binary tree of AddV2: wide
// graphs with arbitrary ready order, inline and on the pool.
TEST(Executor, WideTreeOfAdds) {
  std::string g = "node { name: 'in' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  std::vector<std::string> level;
  for (int i = 0; i < 4096; ++i) {
    std::string n = "id" + std::to_string(i);
    g += "node { name: '" + n + "' op: 'Identity' input: 'in' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    level.push_back(n);
  }
  int k = 0;
  while (level.size() > 1) {
    std::vector<std::string> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      std::string n = "add" + std::to_string(k++);
      g += "node { name: '" + n + "' op: 'AddV2' input: '" + level[i] + "' input: '" + level[i + 1] +
           "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
      next.push_back(n);
    }
    level = next;
  }
  for (int threads : {1, 2}) {
    auto s = testing::CreateSession(testing::ParseGraph(g), threads);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"in", MakeTensor<float>(GR_FLOAT, {}, {1.0f})}}, {level[0]}, {}, &out).ok());
    EXPECT_FLOAT_EQ(out[0].scalar<float>(), 4096.0f);
  }
}

// v_i = v_{i-1} + v_{i-1}, ten times: a node consuming one tensor twice must
// not reuse its buffer in place.
TEST(Executor, SelfAddDoesNotForwardASharedInput) {
  std::string g = "node { name: 'v0' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  for (int i = 1; i <= 10; ++i) {
    std::string p = "v" + std::to_string(i - 1);
    g += "node { name: 'v" + std::to_string(i) + "' op: 'AddV2' input: '" + p + "' input: '" + p +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  }
  auto s = testing::CreateSession(testing::ParseGraph(g));
  std::vector<Tensor> out;
  Tensor in = MakeTensor<float>(GR_FLOAT, {2}, {1.0f, 2.0f});
  ASSERT_TRUE(s->Run({{"v0", in}}, {"v10", "v3"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{1024.0f, 2048.0f}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{8.0f, 16.0f}));
  EXPECT_EQ(ToVector<float>(in), (std::vector<float>{1.0f, 2.0f}));  // the feed is untouched
}

// One node making several expensive nodes ready at once on a 2-thread pool:
// all but one are handed to the pool as tasks that outlive the runner that
// spawned them (ASan checks they hold no reference into its stack frame).
TEST(Executor, FanOutOfExpensiveNodesOnAPool) {
  std::string g = "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
  const int kFan = 6;
  for (int i = 0; i < kFan; ++i)
    g += "node { name: 'm" + std::to_string(i) +
         "' op: 'MatMul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  std::string sum = "m0";
  for (int i = 1; i < kFan; ++i) {
    g += "node { name: 's" + std::to_string(i) + "' op: 'AddV2' input: '" + sum + "' input: 'm" + std::to_string(i) +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    sum = "s" + std::to_string(i);
  }
  const int n = 96;  // big enough for MatMul to be split over the pool
  std::vector<float> x(n * n);
  for (int i = 0; i < n * n; ++i) x[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
  std::vector<double> want(n * n, 0.0);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      double acc = 0;
      for (int k = 0; k < n; ++k) acc += static_cast<double>(x[r * n + k]) * x[k * n + c];
      want[r * n + c] = kFan * acc;
    }
  auto s = testing::CreateSession(testing::ParseGraph(g), 2);
  ASSERT_NE(s, nullptr);
  for (int run = 0; run < 20; ++run) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", MakeTensor<float>(GR_FLOAT, {n, n}, x)}}, {sum + ":0"}, {}, &out).ok());
    for (int i = 0; i < n * n; ++i) ASSERT_NEAR(out[0].data<float>()[i], want[i], 1e-3) << i;
  }
}

TEST(Placement, UnknownDeviceNeedsSoftPlacement) {
  testing::LoadStandardPlugins();
  auto g = testing::ParseGraph(
      "node { name: 'c' op: 'Const' device: '/device:GPU:0' attr { key: 'dtype' value { type: DT_FLOAT } }"
      " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 7 } } } }");
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(SessionOptions(), &s).ok());
  Status st = s->Create(g);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("Could not satisfy explicit device specification '/device:GPU:0'"), std::string::npos);

  SessionOptions soft;
  soft.config.set_allow_soft_placement(true);
  ASSERT_TRUE(NewSession(soft, &s).ok());
  ASSERT_TRUE(s->Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"c:0"}, {}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].scalar<float>(), 7.0f);

  auto bad = testing::ParseGraph("node { name: 'n' op: 'NoOp' device: '/foo:bar' }");
  ASSERT_TRUE(NewSession(SessionOptions(), &s).ok());
  st = s->Create(bad);
  EXPECT_NE(st.message().find("Malformed device specification '/foo:bar'"), std::string::npos);
}

// Callables (direct_session_test's RunSimpleNetwork_Callable and friends).
proto::CallableOptions CallableFor(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                                   const std::vector<std::string>& targets) {
  proto::CallableOptions o;
  for (const auto& f : feeds) o.add_feed(f);
  for (const auto& f : fetches) o.add_fetch(f);
  for (const auto& t : targets) o.add_target(t);
  return o;
}

TEST_F(SessionTest, CallableRunsItsSignatureRepeatedly) {
  Session::CallableHandle h;
  ASSERT_TRUE(session_->MakeCallable(CallableFor({}, {"y:0"}, {"y_neg"}), &h).ok());
  for (int i = 0; i < 2; ++i) {
    std::vector<Tensor> out;
    ASSERT_TRUE(session_->RunCallable(h, {}, &out, nullptr).ok());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{5, -1}));
  }
}

TEST_F(SessionTest, CallableFeedsAndFetchesFollowItsOwnOrder) {
  // Feeds and fetches deliberately out of sorted order.
  Session::CallableHandle h;
  ASSERT_TRUE(session_->MakeCallable(CallableFor({"x:0", "a:0"}, {"z:0", "y:0"}, {}), &h).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session_
                  ->RunCallable(h, {MakeTensor<float>(GR_FLOAT, {2, 1}, {5, 6}),
                                    MakeTensor<float>(GR_FLOAT, {2, 2}, {1, 2, 3, 4})},
                                &out, nullptr)
                  .ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{-17, -39}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{17, 39}));
  // A feed of the wrong dtype names the feed; a wrong count is refused.
  Status st = session_->RunCallable(h, {MakeTensor<int32_t>(GR_INT32, {2, 1}, {5, 6}),
                                        MakeTensor<float>(GR_FLOAT, {2, 2}, {1, 2, 3, 4})},
                                    &out, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("Feed 'x:0'"), std::string::npos) << st;
  st = session_->RunCallable(h, {MakeTensor<float>(GR_FLOAT, {2, 1}, {5, 6})}, &out, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("Invalid number of feed tensors"), std::string::npos) << st;
}

TEST_F(SessionTest, CallableErrors) {
  Session::CallableHandle h;
  ASSERT_TRUE(session_->MakeCallable(CallableFor({}, {"y:0"}, {}), &h).ok());
  Status st = session_->RunCallable(h, {}, nullptr, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("`fetch_tensors` must be provided"), std::string::npos) << st;
  std::vector<Tensor> out;
  st = session_->RunCallable(h + 100, {}, &out, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("No such callable handle"), std::string::npos) << st;
  ASSERT_TRUE(session_->ReleaseCallable(h).ok());
  st = session_->RunCallable(h, {}, &out, nullptr);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("Attempted to run callable after handle was released"), std::string::npos) << st;
  EXPECT_EQ(session_->ReleaseCallable(h + 100).code(), Code::kInvalidArgument);
  // Bad signatures fail at MakeCallable, as Run would.
  st = session_->MakeCallable(CallableFor({}, {"nope:0"}, {}), &h);
  EXPECT_EQ(st.code(), Code::kNotFound) << st;
  st = session_->MakeCallable(CallableFor({}, {}, {}), &h);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  // A callable made before Close is cancelled after it.
  ASSERT_TRUE(session_->MakeCallable(CallableFor({}, {"y:0"}, {}), &h).ok());
  ASSERT_TRUE(session_->Close().ok());
  st = session_->RunCallable(h, {}, &out, nullptr);
  EXPECT_EQ(st.code(), Code::kCancelled);
  EXPECT_NE(st.message().find("Session has been closed."), std::string::npos) << st;
}

TEST_F(SessionTest, CallableHonoursItsRunOptions) {
  proto::CallableOptions o = CallableFor({}, {"y:0"}, {});
  o.mutable_run_options()->set_output_partition_graphs(true);
  o.mutable_run_options()->set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  Session::CallableHandle h;
  ASSERT_TRUE(session_->MakeCallable(o, &h).ok());
  std::vector<Tensor> out;
  proto::RunMetadata md;
  ASSERT_TRUE(session_->RunCallable(h, {}, &out, &md).ok());
  EXPECT_EQ(md.partition_graphs_size(), 1);
  EXPECT_GT(md.step_stats().dev_stats_size(), 0);
}

TEST_F(SessionTest, FinalizeKeepsBuiltSignaturesAndRefusesNewOnes) {
  std::vector<Tensor> out;
  ASSERT_TRUE(session_->Run({}, {"y:0"}, {"y_neg"}, &out).ok());
  Session::CallableHandle h;
  ASSERT_TRUE(session_->MakeCallable(CallableFor({}, {"z:0"}, {}), &h).ok());
  ASSERT_TRUE(session_->Finalize().ok());
  ASSERT_TRUE(session_->Run({}, {"y:0"}, {"y_neg"}, &out).ok());  // the same signature again
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 5.0f);
  ASSERT_TRUE(session_->RunCallable(h, {}, &out, nullptr).ok());
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], -5.0f);
  ASSERT_TRUE(session_->Run({}, {"z:0"}, {}, &out).ok());  // the callable's signature, built
  Status st = session_->Run({}, {"a:0"}, {}, &out);       // a new signature
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("Session has been finalized."), std::string::npos) << st;
  st = session_->Extend(testing::ParseGraph("node { name: 'n' op: 'NoOp' }"));
  EXPECT_EQ(st.code(), Code::kFailedPrecondition) << st;
  st = session_->MakeCallable(CallableFor({}, {"x:0"}, {}), &h);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition) << st;
}

// TensorFlow's MinusAX fixture as direct_session_test.cc builds it: a and y
// on cpu:0; x, y_neg and z on cpu:1 of a session with device_count {CPU: 2}.
std::string TwoCpuMinusAX(const std::string& x_device) {
  std::string g = kMinusAX;
  auto pin = [&g](const std::string& node, const std::string& device) {
    const std::string key = "name: '" + node + "' ";
    g.replace(g.find(key), key.size(), key + "device: '" + device + "' ");
  };
  pin("a", "/job:localhost/replica:0/task:0/cpu:0");
  pin("y", "/job:localhost/replica:0/task:0/cpu:0");
  pin("x", x_device);
  pin("y_neg", "/job:localhost/replica:0/task:0/cpu:1");
  pin("z", "/job:localhost/replica:0/task:0/cpu:1");
  return g;
}

// fold = false: opt_level L0, for an all-constant graph meant to run on
// both devices (constant folding would compute it at build time).
std::unique_ptr<Session> TwoCpuSession(bool fold = true) {
  testing::LoadStandardPlugins();
  SessionOptions opts;
  (*opts.config.mutable_device_count())["CPU"] = 2;
  if (!fold) opts.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0);
  std::unique_ptr<Session> s;
  EXPECT_TRUE(NewSession(opts, &s).ok());
  return s;
}

TEST(MultiDevice, OneStepRunsOnTwoCpuDevices) {
  auto s = TwoCpuSession();
  ASSERT_TRUE(s->Create(testing::ParseGraph(TwoCpuMinusAX("/job:localhost/replica:0/task:0/cpu:1"))).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"y:0", "z:0"}, {"y_neg"}, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{5, -1}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{-5, 1}));
  // Feeding x (on cpu:1) into y (on cpu:0).
  ASSERT_TRUE(s->Run({{"x", MakeTensor<float>(GR_FLOAT, {2, 1}, {5, 6})}}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{27, -5}));
}

TEST(MultiDevice, TracingReportsEachDeviceThatRan) {
  auto s = TwoCpuSession(/*fold=*/false);
  ASSERT_TRUE(s->Create(testing::ParseGraph(TwoCpuMinusAX("/job:localhost/replica:0/task:0/cpu:1"))).ok());
  proto::RunOptions opts;
  opts.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(opts, {}, {"z:0"}, {}, &out, &md).ok());
  ASSERT_EQ(md.step_stats().dev_stats_size(), 2);
  std::map<std::string, std::string> device_of;  // node -> device it ran on
  for (const auto& dev : md.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats()) device_of[ns.node_name()] = dev.device();
  EXPECT_EQ(device_of["a"], "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(device_of["y"], "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(device_of["x"], "/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_EQ(device_of["y_neg"], "/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_EQ(device_of["z"], "/job:localhost/replica:0/task:0/device:CPU:1");
}

TEST(MultiDevice, InvalidDeviceFailsCreateAndAFixedGraphRuns) {
  auto s = TwoCpuSession();
  Status st = s->Create(testing::ParseGraph(TwoCpuMinusAX("/job:localhost/replica:0/task:0/cpu:2")));
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("cpu:2"), std::string::npos) << st;
  ASSERT_TRUE(s->Create(testing::ParseGraph(TwoCpuMinusAX("/job:localhost/replica:0/task:0/cpu:1"))).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{5, -1}));
}

TEST(MultiDevice, ASecondCpuNeedsDeviceCount) {
  testing::LoadStandardPlugins();
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(SessionOptions(), &s).ok());  // one CPU device by default
  Status st = s->Create(testing::ParseGraph(TwoCpuMinusAX("/job:localhost/replica:0/task:0/cpu:1")));
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("CPU:0"), std::string::npos) << "lists the available devices: " << st;
}

// Two Consts, `b` colocated with `a` through TensorFlow's `_class` attr
// unless `colocate` is false.
std::string Colocated(const std::string& a_device, const std::string& b_device, bool colocate = true) {
  auto node = [](const std::string& name, const std::string& device, const std::string& extra) {
    return "node { name: '" + name + "' op: 'Const' device: '" + device +
           "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
           "tensor_shape {} float_val: 1 } } } " + extra + "}\n";
  };
  return node("a", a_device, "") +
         node("b", b_device, colocate ? "attr { key: '_class' value { list { s: 'loc:@a' } } } " : "");
}

std::map<std::string, std::string> DevicesThatRan(Session* s, const std::vector<std::string>& fetches) {
  proto::RunOptions opts;
  opts.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  Status st = s->Run(opts, {}, fetches, {}, &out, &md);
  EXPECT_TRUE(st.ok()) << st;
  std::map<std::string, std::string> device_of;
  for (const auto& dev : md.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats()) device_of[ns.node_name()] = dev.device();
  return device_of;
}

TEST(Colocation, ClassAttrPlacesANodeWithItsTarget) {
  auto s = TwoCpuSession();
  ASSERT_TRUE(s->Create(testing::ParseGraph(Colocated("/cpu:1", ""))).ok());
  auto device_of = DevicesThatRan(s.get(), {"a:0", "b:0"});
  EXPECT_EQ(device_of["a"], "/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_EQ(device_of["b"], "/job:localhost/replica:0/task:0/device:CPU:1");
  // Fetching b alone (a pruned away) keeps b where the whole graph put it.
  device_of = DevicesThatRan(s.get(), {"b:0"});
  EXPECT_EQ(device_of["b"], "/job:localhost/replica:0/task:0/device:CPU:1");
}

TEST(Colocation, ConflictingSpecsFailUnlessSoftPlacement) {
  auto s = TwoCpuSession();
  Status st = s->Create(testing::ParseGraph(Colocated("/cpu:0", "/cpu:1")));
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("cannot be colocated with"), std::string::npos) << st;
  EXPECT_NE(st.message().find("'a'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("'b'"), std::string::npos) << st;

  SessionOptions soft;
  (*soft.config.mutable_device_count())["CPU"] = 2;
  soft.config.set_allow_soft_placement(true);
  ASSERT_TRUE(NewSession(soft, &s).ok());
  ASSERT_TRUE(s->Create(testing::ParseGraph(Colocated("/cpu:0", "/cpu:1"))).ok());
  auto device_of = DevicesThatRan(s.get(), {"a:0", "b:0"});
  EXPECT_EQ(device_of["a"], device_of["b"]);
}

TEST(Colocation, PlacePrunedGraphPlacesOnlyWhatAStepRuns) {
  testing::LoadStandardPlugins();
  SessionOptions opts;
  opts.config.mutable_graph_options()->set_place_pruned_graph(true);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(opts, &s).ok());
  // 'b' asks for a device that does not exist; only a step that runs it fails.
  ASSERT_TRUE(s->Create(testing::ParseGraph(Colocated("/cpu:0", "/device:GPU:0", /*colocate=*/false))).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"a:0"}, {}, &out).ok());
  Status st = s->Run({}, {"b:0"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("'/device:GPU:0'"), std::string::npos) << st;
  ASSERT_TRUE(s->Run({}, {"a:0"}, {}, &out).ok());  // the session still works
}

TEST(CpuDevice, LargeBlocksAreReusedWithinTheirSizeClass) {
  testing::LoadStandardPlugins();
  std::vector<Device*> devices;
  ASSERT_TRUE(Runtime::Global().devices().GetDevices(&devices).ok());
  Allocator* a = devices.front()->allocator();
  const size_t big = (1 << 20) + 1;  // class: 1 MiB + 128 KiB
  auto* p = static_cast<char*>(a->Allocate(big, 64));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, big);
  a->Deallocate(p, big);
  // A request of the same class gets the block back, whole (ASan checks the
  // write of its full size).
  const size_t same_class = (1 << 20) + 100 * 1024;
  auto* q = static_cast<char*>(a->Allocate(same_class, 64));
  EXPECT_EQ(q, p);
  std::memset(q, 2, same_class);
  // A larger alignment than the cache keeps gets a fresh, aligned block.
  auto* r = static_cast<char*>(a->Allocate(same_class, 4096));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r) % 4096, 0u);
  EXPECT_NE(r, q);
  std::memset(r, 3, same_class);
  a->Deallocate(r, same_class);
  a->Deallocate(q, same_class);
  // A request of another class does not get a cached block of this one.
  auto* s = static_cast<char*>(a->Allocate(2 << 20, 64));
  EXPECT_NE(s, p);
  EXPECT_NE(s, r);
  std::memset(s, 4, 2 << 20);
  a->Deallocate(s, 2 << 20);
}

}  // namespace
}  // namespace graphrt
