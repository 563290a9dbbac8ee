// Asynchronous kernels in the executor (ABI 1.3): a kernel that completes
// on another thread, before compute_async returns, with an error, inside a
// while loop, at 1 and 2 threads; and step cancellation: a node's error,
// the Run's deadline and Session::Close end a kernel that waits. The
// kernels are in tests/plugins/async_plugin.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

// The core's registry (header-only) behind ctx_on_cancel, tested directly
// for the header's contract.
#include "../kernel_core/src/cancellation.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ToVector;

std::string TestPlugin(const std::string& name) {
  return std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_" + name + ".so";
}

void LoadAsyncPlugin() {
  testing::LoadStandardPlugins();
  static const Status loaded = Runtime::Global().LoadPlugin(TestPlugin("async"));
  ASSERT_TRUE(loaded.ok()) << loaded;
}

std::string Attr(const std::string& key, const std::string& value) {
  return " attr { key: \"" + key + "\" value { " + value + " } }";
}
std::string Node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& attrs = "") {
  std::string s = "node { name: \"" + name + "\" op: \"" + op + "\"";
  for (const std::string& in : inputs) s += " input: \"" + in + "\"";
  return s + attrs + " }\n";
}
std::string I32(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                const std::string& attrs = "") {
  return Node(name, op, inputs, Attr("T", "type: DT_INT32") + attrs);
}
std::string IntConst(const std::string& name, const std::vector<int>& values, const std::vector<std::string>& ctrl = {}) {
  std::string vals;
  for (int v : values) vals += " int_val: " + std::to_string(v);
  const std::string shape = values.size() == 1 ? "tensor_shape {}"
                                               : "tensor_shape { dim { size: " + std::to_string(values.size()) + " } }";
  return Node(name, "Const", ctrl,
              Attr("dtype", "type: DT_INT32") + Attr("value", "tensor { dtype: DT_INT32 " + shape + vals + " }"));
}
std::string Delay(const std::string& name, const std::string& input, int ms, bool fail = false) {
  return I32(name, "TestAsyncDelay", {input},
             Attr("delay_ms", "i: " + std::to_string(ms)) + Attr("fail", fail ? "b: true" : "b: false"));
}

std::unique_ptr<Session> Open(const std::string& pbtxt, int threads) {
  LoadAsyncPlugin();
  return testing::CreateSession(testing::ParseGraph(pbtxt), threads);
}

// x -> d1 (async) -> sum = d1 + x; x -> d2 (async, in parallel) -> sum2 = d2 + sum.
std::string FanGraph(int ms) {
  return IntConst("x", {1, 2, 3}) + Delay("d1", "x", ms) + Delay("d2", "x", ms) + I32("sum", "Add", {"d1", "x"}) +
         I32("sum2", "Add", {"d2", "sum"});
}

TEST(AsyncKernel, CompletesOnAnotherThread) {
  for (int threads : {1, 2}) {
    for (int ms : {0, 5}) {
      auto s = Open(FanGraph(ms), threads);
      std::vector<Tensor> out;
      ASSERT_TRUE(s->Run({}, {"sum2:0", "d1:0"}, {}, &out).ok()) << threads;
      EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{3, 6, 9}));
      EXPECT_EQ(ToVector<int32_t>(out[1]), (std::vector<int32_t>{1, 2, 3}));
    }
  }
}

TEST(AsyncKernel, DoneBeforeComputeAsyncReturns) {
  for (int threads : {1, 2}) {
    auto s = Open(FanGraph(-1), threads);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"sum2:0"}, {}, &out).ok());
    EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{3, 6, 9}));
  }
}

TEST(AsyncKernel, ErrorFailsTheStepNamingTheNodeAndTheSessionGoesOn) {
  for (int threads : {1, 2}) {
    for (int ms : {-1, 2}) {
      auto s = Open(IntConst("x", {4}) + Delay("bad", "x", ms, true) + I32("after", "Add", {"bad", "x"}), threads);
      std::vector<Tensor> out;
      Status st = s->Run({}, {"after:0"}, {}, &out);
      EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
      EXPECT_NE(st.message().find("Node 'bad'"), std::string::npos) << st;
      EXPECT_NE(st.message().find("failed on purpose"), std::string::npos) << st;
      ASSERT_TRUE(s->Run({}, {"x:0"}, {}, &out).ok());
      EXPECT_EQ(out[0].scalar<int32_t>(), 4);
    }
  }
}

TEST(AsyncKernel, StepStatsCoverTheWholeAsynchronousCall) {
  for (int threads : {1, 2}) {
    // opt_level L0: d1 and d2 are equal, CSE would merge them.
    LoadAsyncPlugin();
    SessionOptions l0 = testing::OpTestOptions(threads);
    l0.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0);
    std::unique_ptr<Session> s;
    ASSERT_TRUE(NewSession(l0, &s).ok());
    ASSERT_TRUE(s->Create(testing::ParseGraph(FanGraph(20))).ok());
    proto::RunOptions options;
    options.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
    proto::RunMetadata md;
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run(options, {}, {"sum2:0"}, {}, &out, &md).ok());
    int found = 0;
    for (const auto& dev : md.step_stats().dev_stats())
      for (const auto& ns : dev.node_stats()) {
        if (ns.node_name() != "d1" && ns.node_name() != "d2") continue;
        ++found;
        EXPECT_GE(ns.all_end_rel_nanos(), 20'000'000) << ns.node_name();  // until done, not until return
        ASSERT_EQ(ns.output_size(), 1);
        EXPECT_EQ(ns.output(0).tensor_description().shape().dim(0).size(), 3);
      }
    EXPECT_EQ(found, 2);
  }
}

TEST(AsyncKernel, ManyConcurrentRuns) {
  auto s = Open(FanGraph(0), 2);
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        std::vector<Tensor> out;
        if (s->Run({}, {"sum2:0"}, {}, &out).ok() && ToVector<int32_t>(out[0]) == std::vector<int32_t>{3, 6, 9}) ++ok;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(ok.load(), 100);
}

// i = 0; while i < 5: i = TestAsyncDelay(i + 1)
std::string AsyncLoop(int ms) {
  auto enter = [](const std::string& name, const std::string& in) {
    return I32(name, "Enter", {in}, Attr("frame_name", "s: \"w/ctx\"") + Attr("is_constant", "b: false"));
  };
  std::string g = IntConst("start", {0}) + IntConst("limit", {5});
  g += enter("w/Enter", "start");
  g += I32("w/limit", "Enter", {"limit"}, Attr("frame_name", "s: \"w/ctx\"") + Attr("is_constant", "b: true"));
  g += I32("w/Merge", "Merge", {"w/Enter", "w/Next"}, Attr("N", "i: 2"));
  g += I32("w/Less", "Less", {"w/Merge", "w/limit"});
  g += Node("w/LoopCond", "LoopCond", {"w/Less"});
  g += I32("w/Switch", "Switch", {"w/Merge", "w/LoopCond"});
  g += I32("w/Ident", "Identity", {"w/Switch:1"});
  g += IntConst("w/one", {1}, {"^w/Ident"});
  g += I32("w/plus", "Add", {"w/Ident", "w/one"});
  g += Delay("w/delay", "w/plus", ms);
  g += I32("w/Next", "NextIteration", {"w/delay"});
  g += I32("w/Exit", "Exit", {"w/Switch"});
  return g;
}

TEST(AsyncKernel, InsideAWhileLoop) {
  for (int threads : {1, 2}) {
    for (int ms : {-1, 0, 1}) {
      auto s = Open(AsyncLoop(ms), threads);
      std::vector<Tensor> out;
      ASSERT_TRUE(s->Run({}, {"w/Exit:0"}, {}, &out).ok()) << threads << " " << ms;
      EXPECT_EQ(out[0].scalar<int32_t>(), 5);
    }
  }
}

TEST(AsyncKernel, LoopBodyErrorFailsTheStep) {
  std::string g = AsyncLoop(1);
  const std::string good = Delay("w/delay", "w/plus", 1);
  g.replace(g.find(good), good.size(), Delay("w/delay", "w/plus", 1, true));
  for (int threads : {1, 2}) {
    auto s = Open(g, threads);
    std::vector<Tensor> out;
    Status st = s->Run({}, {"w/Exit:0"}, {}, &out);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
    EXPECT_NE(st.message().find("Node 'w/delay'"), std::string::npos) << st;
  }
}

// ------------------------------------------------------------ cancellation

std::string WaitGraph() {
  return IntConst("x", {7}) + I32("wait", "TestAsyncWait", {"x"}) + I32("after", "Add", {"wait", "x"}) +
         Node("live", "TestAsyncLive", {});
}

TEST(AsyncCancellation, AnotherNodesErrorEndsAWaitingKernel) {
  for (int threads : {1, 2}) {
    for (int ms : {-1, 10}) {
      auto s = Open(WaitGraph() + Delay("bad", "x", ms, true), threads);
      std::vector<Tensor> out;
      const auto start = std::chrono::steady_clock::now();
      Status st = s->Run({}, {"after:0", "bad:0"}, {}, &out);
      // The first error is the step's; the waiting kernel's CANCELLED is not.
      EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
      EXPECT_NE(st.message().find("failed on purpose"), std::string::npos) << st;
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    }
  }
}

TEST(AsyncCancellation, RunTimeoutEndsAWaitingKernelWithDeadlineExceeded) {
  for (int threads : {1, 2}) {
    auto s = Open(WaitGraph(), threads);
    proto::RunOptions options;
    options.set_timeout_in_ms(20);
    std::vector<Tensor> out;
    const auto start = std::chrono::steady_clock::now();
    Status st = s->Run(options, {}, {"after:0"}, {}, &out, nullptr);
    EXPECT_EQ(st.code(), Code::kDeadlineExceeded) << st;
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, std::chrono::milliseconds(20));
    EXPECT_LT(took, std::chrono::seconds(5));
    // The session goes on.
    ASSERT_TRUE(s->Run({}, {"x:0"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), 7);
  }
}

TEST(AsyncCancellation, OperationTimeoutThenCloseIsOk) {
  LoadAsyncPlugin();
  SessionOptions options = testing::OpTestOptions(1);
  options.config.set_operation_timeout_in_ms(100);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(options, &s).ok());
  ASSERT_TRUE(s->Create(testing::ParseGraph(WaitGraph())).ok());
  std::vector<Tensor> out;
  EXPECT_EQ(s->Run({}, {"after:0"}, {}, &out).code(), Code::kDeadlineExceeded);
  EXPECT_TRUE(s->Close().ok());
}

TEST(AsyncCancellation, CloseEndsARunThatWaitsPromptly) {
  for (int threads : {1, 2}) {
    auto s = Open(WaitGraph(), threads);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"live:0"}, {}, &out).ok());
    const int64_t before = out[0].scalar<int64_t>();
    Status st;
    std::thread runner([&] {
      std::vector<Tensor> r;
      st = s->Run({}, {"after:0"}, {}, &r);
    });
    // Until the kernel waits (polled through another Run of the session).
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(s->Run({}, {"live:0"}, {}, &out).ok());
      if (out[0].scalar<int64_t>() > before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_GT(out[0].scalar<int64_t>(), before);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(s->Close().ok());
    runner.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ(st.code(), Code::kCancelled) << st;
    EXPECT_NE(st.message().find("Session has been closed"), std::string::npos) << st;
  }
}

TEST(AsyncCancellation, TimeoutInsideAWhileLoop) {
  std::string g = AsyncLoop(0);
  const std::string body = Delay("w/delay", "w/plus", 0);
  g.replace(g.find(body), body.size(), I32("w/delay", "TestAsyncWait", {"w/plus"}));
  for (int threads : {1, 2}) {
    auto s = Open(g, threads);
    proto::RunOptions options;
    options.set_timeout_in_ms(20);
    std::vector<Tensor> out;
    EXPECT_EQ(s->Run(options, {}, {"w/Exit:0"}, {}, &out, nullptr).code(), Code::kDeadlineExceeded);
  }
}

// ---------------------------------------------------- cancellation registry

TEST(CancellationRegistry, CallbacksRunOnceAndNotAfterRemove) {
  CancellationRegistry r;
  int runs[2] = {0, 0};
  auto count = [](void* arg) { ++*static_cast<int*>(arg); };
  int64_t t0 = -1, t1 = -1;
  ASSERT_TRUE(r.Add(count, &runs[0], &t0));
  ASSERT_TRUE(r.Add(count, &runs[1], &t1));
  EXPECT_NE(t0, t1);
  EXPECT_TRUE(r.Remove(t1));  // had not run, never will
  EXPECT_FALSE(r.cancelled());
  r.Cancel();
  r.Cancel();
  EXPECT_TRUE(r.cancelled());
  EXPECT_EQ(runs[0], 1);
  EXPECT_EQ(runs[1], 0);
  EXPECT_FALSE(r.Remove(t0));  // ran
  int64_t t2 = -1;
  EXPECT_FALSE(r.Add(count, &runs[1], &t2));  // cancelled already: not kept
  r.Reset();
  EXPECT_FALSE(r.cancelled());
  EXPECT_TRUE(r.Add(count, &runs[1], &t2));
}

TEST(CancellationRegistry, RemoveWaitsForACallbackRunningOnAnotherThread) {
  CancellationRegistry r;
  struct State {
    std::atomic<bool> started{false}, finished{false};
  } st;
  int64_t token = -1;
  ASSERT_TRUE(r.Add(
      [](void* arg) {
        auto* s = static_cast<State*>(arg);
        s->started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        s->finished = true;
      },
      &st, &token));
  std::thread canceller([&] { r.Cancel(); });
  while (!st.started) std::this_thread::yield();
  EXPECT_FALSE(r.Remove(token));
  EXPECT_TRUE(st.finished.load());  // Remove returned only after the callback
  canceller.join();
}

TEST(CancellationRegistry, ACallbackMayRemoveAnotherThatHasNotRun) {
  CancellationRegistry r;
  struct State {
    CancellationRegistry* r;
    int64_t other = -1;
    int other_runs = 0;
    bool removed = false;
  } st{&r};
  auto first = [](void* arg) {
    auto* s = static_cast<State*>(arg);
    s->removed = s->r->Remove(s->other);  // on the cancelling thread: no wait
  };
  auto second = [](void* arg) { ++static_cast<State*>(arg)->other_runs; };
  int64_t t = -1;
  ASSERT_TRUE(r.Add(first, &st, &t));
  ASSERT_TRUE(r.Add(second, &st, &st.other));  // a later token: runs after `first`
  r.Cancel();
  EXPECT_TRUE(st.removed);
  EXPECT_EQ(st.other_runs, 0);
}

// ------------------------------------------------------------- registration

TEST(AsyncKernel, LoadRefusesKernelsWithBothOrNeitherComputeFunction) {
  testing::LoadStandardPlugins();
  for (const char* p : {"async_both", "async_neither"}) {
    Status st = Runtime::Global().LoadPlugin(TestPlugin(p));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << p << ": " << st;
    EXPECT_NE(st.message().find("exactly one of compute and compute_async"), std::string::npos) << st;
  }
}

}  // namespace
}  // namespace graphrt
