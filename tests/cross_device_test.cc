// Sessions whose steps span CPU:0 and the toy device's XPU:0 and XPU:1
// (examples/toy_device: its own memory, asynchronous streams): tensors
// cross through _Send/_Recv pairs and the backends' copies, device kernels
// run on the device's stream, and answers equal the CPU-only run's.
//
// The toy streams run every command 100 us late (set before the plugin
// loads), so a copy or kernel that is not ordered on its stream reads
// stale memory and the comparisons fail.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ParseGraph;
using testing::ToVector;

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kXpu0[] = "/job:localhost/replica:0/task:0/device:XPU:0";
constexpr char kXpu1[] = "/job:localhost/replica:0/task:0/device:XPU:1";

const bool kToyEnvironment = [] {
  setenv("GRAPHRT_TOY_XPU_COMMAND_DELAY_US", "100", /*overwrite=*/0);
  setenv("GRAPHRT_TOY_XPU_MEMORY_LIMIT", "64M", /*overwrite=*/0);
  return true;
}();

class CrossDeviceTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    testing::LoadStandardPlugins();
    for (const PluginInfo& p : Runtime::Global().Plugins())
      for (const std::string& t : p.devices)
        if (t == "XPU") return;
    Status s = Runtime::Global().LoadPlugin(GRAPHRT_TOY_DEVICE_PLUGIN);
    ASSERT_TRUE(s.ok()) << s;
  }

  // A session over CPU:0, XPU:0 and XPU:1 with GetParam() threads.
  std::unique_ptr<Session> NewXpuSession(const proto::GraphDef& g, bool soft = false) {
    SessionOptions options = testing::OpTestOptions(GetParam());
    (*options.config.mutable_device_count())["XPU"] = 2;
    options.config.set_allow_soft_placement(soft);
    std::unique_ptr<Session> s;
    EXPECT_TRUE(NewSession(options, &s).ok());
    Status st = s->Create(g);
    EXPECT_TRUE(st.ok()) << st;
    return s;
  }

  // The same graph with every device request removed: all on CPU.
  static std::vector<Tensor> RunOnCpu(proto::GraphDef g, const std::vector<std::pair<std::string, Tensor>>& feeds,
                                      const std::vector<std::string>& fetches) {
    for (proto::NodeDef& n : *g.mutable_node()) n.clear_device();
    std::unique_ptr<Session> s = testing::CreateSession(g);
    std::vector<Tensor> out;
    Status st = s->Run(feeds, fetches, {}, &out);
    EXPECT_TRUE(st.ok()) << st;
    return out;
  }

  // Runs with a full trace; returns how many _Recv nodes ran per device.
  static std::map<std::string, int> RecvsPerDevice(Session* s,
                                                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                   const std::vector<std::string>& fetches, std::vector<Tensor>* out) {
    proto::RunOptions options;
    options.set_trace_level(proto::RunOptions::FULL_TRACE);
    proto::RunMetadata metadata;
    Status st = s->Run(options, feeds, fetches, {}, out, &metadata);
    EXPECT_TRUE(st.ok()) << st;
    std::map<std::string, int> recvs;
    for (const auto& dev : metadata.step_stats().dev_stats())
      for (const auto& ns : dev.node_stats())
        if (ns.timeline_label().ends_with("= _Recv")) ++recvs[dev.device()];
    return recvs;
  }
};

std::string Placeholder(const std::string& name) {
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
}

std::string Binary(const std::string& name, const std::string& op, const std::string& a, const std::string& b,
                   const std::string& device) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' input: '" + b + "' device: '" + device +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

std::string Unary(const std::string& name, const std::string& op, const std::string& x, const std::string& device) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + x + "' device: '" + device +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}

Tensor Matrix(int64_t rows, int64_t cols, float scale) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return MakeTensor<float>(GR_FLOAT, {rows, cols}, v);
}

void ExpectSame(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape().DebugString(), b.shape().DebugString());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(ToVector<float>(a), ToVector<float>(b));
}

// x, w fed on the host; MatMul on XPU:0, Relu on XPU:1, AddV2 with x·w's
// transpose-free partner back on CPU:0.
TEST_P(CrossDeviceTest, ChainOverCpuAndBothXpusMatchesTheCpuRun) {
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Placeholder("w") +
                                       "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' device: '/device:XPU:0' "
                                       "attr { key: 'T' value { type: DT_FLOAT } } }\n" +
                                       Unary("relu", "Relu", "mm", "/device:XPU:1") +
                                       Binary("sum", "AddV2", "relu", "mm", "/device:CPU:0"));
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Matrix(16, 32, 0.5f)}, {"w", Matrix(32, 8, -1.f)}};
  const std::vector<Tensor> want = RunOnCpu(g, feeds, {"sum", "relu", "mm"});
  auto s = NewXpuSession(g);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> got;
    ASSERT_TRUE(s->Run(feeds, {"sum", "relu", "mm"}, {}, &got).ok());
    ASSERT_EQ(got.size(), 3u);
    for (int i = 0; i < 3; ++i) ExpectSame(got[i], want[i]);
  }
}

TEST_P(CrossDeviceTest, OneTransferPerTensorPerDestinationDevice) {
  // x is read by two nodes on XPU:0 and one on XPU:1; mm (XPU:0) by relu
  // on XPU:1 and by the fetch and sum on CPU:0.
  const proto::GraphDef g = ParseGraph(
      Placeholder("x") + Binary("a", "AddV2", "x", "x", "/device:XPU:0") +
      Unary("r", "Relu", "x", "/device:XPU:0") + Binary("mm", "AddV2", "a", "r", "/device:XPU:0") +
      Unary("b", "Relu", "x", "/device:XPU:1") + Unary("relu", "Relu", "mm", "/device:XPU:1") +
      Binary("sum", "AddV2", "mm", "relu", "/device:CPU:0") + Binary("all", "AddV2", "sum", "b", "/device:CPU:0"));
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Matrix(4, 5, 1.5f)}};
  const std::vector<Tensor> want = RunOnCpu(g, feeds, {"all", "mm"});
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  const std::map<std::string, int> recvs = RecvsPerDevice(s.get(), feeds, {"all", "mm"}, &got);
  ASSERT_EQ(got.size(), 2u);
  ExpectSame(got[0], want[0]);
  ExpectSame(got[1], want[1]);
  // XPU:0 receives x; XPU:1 receives x and mm; CPU:0 receives mm (read by
  // sum and the fetch), relu and b.
  EXPECT_EQ(recvs.count(kXpu0) ? recvs.at(kXpu0) : 0, 1);
  EXPECT_EQ(recvs.count(kXpu1) ? recvs.at(kXpu1) : 0, 2);
  EXPECT_EQ(recvs.count(kCpu) ? recvs.at(kCpu) : 0, 3);
}

TEST_P(CrossDeviceTest, AllOnOneXpuFetchesThroughTheHost) {
  // Cast both ways and BiasAdd on XPU:0 only; feeds and fetches cross.
  const proto::GraphDef g = ParseGraph(
      Placeholder("x") + Placeholder("bias") +
      "node { name: 'ba' op: 'BiasAdd' input: 'x' input: 'bias' device: '/device:XPU:0' "
      "attr { key: 'T' value { type: DT_FLOAT } } }\n"
      "node { name: 'i' op: 'Cast' input: 'ba' device: '/device:XPU:0' attr { key: 'SrcT' value { type: DT_FLOAT } } "
      "attr { key: 'DstT' value { type: DT_INT32 } } }\n"
      "node { name: 'f' op: 'Cast' input: 'i' device: '/device:XPU:0' attr { key: 'SrcT' value { type: DT_INT32 } } "
      "attr { key: 'DstT' value { type: DT_FLOAT } } }\n");
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  ASSERT_TRUE(s->Run({{"x", MakeTensor<float>(GR_FLOAT, {2, 3}, {0.5f, -1.5f, 2.25f, 3.f, -0.75f, 9.5f})},
                      {"bias", MakeTensor<float>(GR_FLOAT, {3}, {1.f, 0.25f, -2.f})}},
                     {"ba", "i", "f"}, {}, &got)
                  .ok());
  EXPECT_EQ(ToVector<float>(got[0]), (std::vector<float>{1.5f, -1.25f, 0.25f, 4.f, -0.5f, 7.5f}));
  EXPECT_EQ(ToVector<int32_t>(got[1]), (std::vector<int32_t>{1, -1, 0, 4, 0, 7}));  // truncation
  EXPECT_EQ(ToVector<float>(got[2]), (std::vector<float>{1.f, -1.f, 0.f, 4.f, 0.f, 7.f}));
}

TEST_P(CrossDeviceTest, LongXpuChainIsOrderedOnTheStream) {
  // 200 dependent adds on XPU:0, each of the previous result and x: the
  // executor does not wait between them, the stream orders them.
  std::string text = Placeholder("x") + Binary("n0", "AddV2", "x", "x", "/device:XPU:0");
  for (int i = 1; i < 200; ++i)
    text += Binary("n" + std::to_string(i), "AddV2", "n" + std::to_string(i - 1), "x", "/device:XPU:0");
  auto s = NewXpuSession(ParseGraph(text));
  std::vector<Tensor> got;
  ASSERT_TRUE(s->Run({{"x", MakeTensor<float>(GR_FLOAT, {3}, {1.f, -2.f, 0.5f})}}, {"n199"}, {}, &got).ok());
  EXPECT_EQ(ToVector<float>(got[0]), (std::vector<float>{201.f, -402.f, 100.5f}));
}

TEST_P(CrossDeviceTest, CondAcrossDevicesSendsDeadBranches) {
  // Switch on the CPU; each branch's work on another XPU; Merge on the CPU.
  // The untaken branch's transfers carry a dead value (no hang).
  const proto::GraphDef g = ParseGraph(
      Placeholder("x") +
      "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
      "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      Binary("t", "AddV2", "sw:1", "sw:1", "/device:XPU:0") + Unary("f", "Relu", "sw:0", "/device:XPU:1") +
      "node { name: 'm' op: 'Merge' input: 'f' input: 't' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'N' value { i: 2 } } }\n");
  auto s = NewXpuSession(g);
  const Tensor x = MakeTensor<float>(GR_FLOAT, {3}, {1.f, -2.f, 3.f});
  for (bool p : {true, false, true}) {
    std::vector<Tensor> got;
    Tensor pred(GR_BOOL, TensorShape({}));
    *pred.data<bool>() = p;
    Status st = s->Run({{"x", x}, {"p", pred}}, {"m"}, {}, &got);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(ToVector<float>(got[0]), p ? (std::vector<float>{2.f, -4.f, 6.f}) : (std::vector<float>{1.f, 0.f, 3.f}));
  }
}

TEST_P(CrossDeviceTest, DeviceKernelErrorEndsTheStepAndTheSessionKeepsWorking) {
  // mm fails its shape check on XPU:1 while CPU:0 waits to receive it.
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Placeholder("w") +
                                       "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' device: '/device:XPU:1' "
                                       "attr { key: 'T' value { type: DT_FLOAT } } }\n" +
                                       Unary("out", "Relu", "mm", "/device:CPU:0"));
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  Status st = s->Run({{"x", Matrix(2, 3, 1.f)}, {"w", Matrix(4, 2, 1.f)}}, {"out"}, {}, &got);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("'mm'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("Matrix size-incompatible"), std::string::npos) << st;
  const std::vector<std::pair<std::string, Tensor>> good = {{"x", Matrix(2, 3, 1.f)}, {"w", Matrix(3, 2, 1.f)}};
  const std::vector<Tensor> want = RunOnCpu(g, good, {"out"});
  st = s->Run(good, {"out"}, {}, &got);
  ASSERT_TRUE(st.ok()) << st;
  ExpectSame(got[0], want[0]);
}

TEST_P(CrossDeviceTest, OutOfDeviceMemoryNamesNodeAndDeviceAndKeepsWorking) {
  // 64 MiB per XPU: a 80 MiB feed cannot land on XPU:0.
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Unary("r", "Relu", "x", "/device:XPU:0"));
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  Status st = s->Run({{"x", Tensor(GR_FLOAT, TensorShape({20, 1024, 1024}))}}, {"r"}, {}, &got);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_NE(st.message().find("XPU:0"), std::string::npos) << st;
  EXPECT_NE(st.message().find("83886080"), std::string::npos) << st;  // the bytes asked for
  st = s->Run({{"x", MakeTensor<float>(GR_FLOAT, {2}, {-1.f, 2.f})}}, {"r"}, {}, &got);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(ToVector<float>(got[0]), (std::vector<float>{0.f, 2.f}));
}

TEST_P(CrossDeviceTest, PinnedNodeWithoutDeviceKernelFailsUnlessSoftPlaced) {
  // The toy device has no Sub kernel.
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Binary("d", "Sub", "x", "x", "/device:XPU:0") +
                                       Unary("r", "Relu", "d", "/device:XPU:0"));
  SessionOptions options = testing::OpTestOptions(GetParam());
  (*options.config.mutable_device_count())["XPU"] = 2;
  std::unique_ptr<Session> hard;
  ASSERT_TRUE(NewSession(options, &hard).ok());
  Status st = hard->Create(g);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("'d'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("Could not satisfy explicit device specification"), std::string::npos) << st;

  auto soft = NewXpuSession(g, /*soft=*/true);
  std::vector<Tensor> got;
  st = soft->Run({{"x", MakeTensor<float>(GR_FLOAT, {2}, {-1.f, 2.f})}}, {"r"}, {}, &got);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(ToVector<float>(got[0]), (std::vector<float>{0.f, 0.f}));
}

TEST_P(CrossDeviceTest, LoopSpanningDevicesIsRefusedNamingTheFrame) {
  // i = 0; while (i < 5) i = i + 1 on XPU:0 — the body's add is on another
  // device than the loop's control on the CPU.
  const proto::GraphDef g = ParseGraph(R"(
    node { name: 'zero' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
    node { name: 'enter' op: 'Enter' input: 'zero' attr { key: 'T' value { type: DT_FLOAT } }
           attr { key: 'frame_name' value { s: 'loop' } } }
    node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' attr { key: 'T' value { type: DT_FLOAT } }
           attr { key: 'N' value { i: 2 } } }
    node { name: 'five' op: 'Const' input: '^merge' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 5 } } } }
    node { name: 'less' op: 'Less' input: 'merge' input: 'five' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'cond' op: 'LoopCond' input: 'less' }
    node { name: 'switch' op: 'Switch' input: 'merge' input: 'cond' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'body' op: 'Identity' input: 'switch:1' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'one' op: 'Const' input: '^body' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
    node { name: 'add' op: 'AddV2' input: 'body' input: 'one' device: '/device:XPU:0'
           attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'next' op: 'NextIteration' input: 'add' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'exit' op: 'Exit' input: 'switch' attr { key: 'T' value { type: DT_FLOAT } } }
  )");
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  Status st = s->Run({}, {"exit"}, {}, &got);
  EXPECT_EQ(st.code(), Code::kUnimplemented) << st;
  EXPECT_NE(st.message().find("'loop'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("add"), std::string::npos) << st;
}

TEST_P(CrossDeviceTest, ManyClientThreadsShareTheDevices) {
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Binary("a", "AddV2", "x", "x", "/device:XPU:0") +
                                       Unary("r", "Relu", "a", "/device:XPU:1") +
                                       Binary("out", "AddV2", "r", "x", "/device:CPU:0"));
  auto s = NewXpuSession(g);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const float v = static_cast<float>(t * 100 + i) - 150.f;
        std::vector<Tensor> got;
        Status st = s->Run({{"x", MakeTensor<float>(GR_FLOAT, {2}, {v, -v})}}, {"out"}, {}, &got);
        const float want0 = (v > 0 ? 2 * v : 0) + v, want1 = (-v > 0 ? -2 * v : 0) - v;
        if (!st.ok() || ToVector<float>(got[0]) != std::vector<float>{want0, want1}) ++failures[t];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST_P(CrossDeviceTest, CallableAcrossDevices) {
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Unary("r", "Relu", "x", "/device:XPU:0"));
  auto s = NewXpuSession(g);
  proto::CallableOptions co;
  co.add_feed("x");
  co.add_fetch("r");
  Session::CallableHandle h;
  ASSERT_TRUE(s->MakeCallable(co, &h).ok());
  std::vector<Tensor> got;
  ASSERT_TRUE(s->RunCallable(h, {MakeTensor<float>(GR_FLOAT, {3}, {-1.f, 0.5f, 2.f})}, &got, nullptr).ok());
  EXPECT_EQ(ToVector<float>(got[0]), (std::vector<float>{0.f, 0.5f, 2.f}));
  ASSERT_TRUE(s->ReleaseCallable(h).ok());
}

// The toy Shape kernel's output is HostMemory (and it refuses XPU memory);
// Cast on the same XPU reads it as device memory, so a copy must come
// between them (toy kernels refuse inputs outside their XPU's memory).
TEST_P(CrossDeviceTest, HostMemoryOutputsOfDeviceKernelsLiveOnTheHost) {
  const proto::GraphDef g = ParseGraph(
      Placeholder("x") + Unary("r", "Relu", "x", "/device:XPU:0") +
      "node { name: 'shape' op: 'Shape' input: 'r' device: '/device:XPU:0' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'out_type' value { type: DT_INT32 } } }\n"
      "node { name: 'n' op: 'Cast' input: 'shape' device: '/device:XPU:0' attr { key: 'SrcT' value { type: DT_INT32 } } "
      "attr { key: 'DstT' value { type: DT_FLOAT } } }\n" +
      Binary("sum", "AddV2", "r", "n", "/device:XPU:0"));
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  Status st = s->Run({{"x", MakeTensor<float>(GR_FLOAT, {3}, {-1.f, 0.5f, 2.f})}}, {"shape", "sum"}, {}, &got);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(ToVector<int32_t>(got[0]), std::vector<int32_t>{3});
  EXPECT_EQ(ToVector<float>(got[1]), (std::vector<float>{3.f, 3.5f, 5.f}));
}

// Reshape's `shape` is HostMemory on the XPU (the toy Reshape refuses XPU
// memory there): a CPU constant passes through its _Recv as it is; dims
// computed on XPU:1 are copied into host memory, not into XPU:0's.
TEST_P(CrossDeviceTest, HostMemoryInputsOfDeviceKernelsArriveInHostMemory) {
  const proto::GraphDef g = ParseGraph(
      Placeholder("x") + Unary("r", "Relu", "x", "/device:XPU:0") +
      "node { name: 'dims' op: 'Const' device: '/device:CPU:0' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 3 } } } }\n"
      "node { name: 'wide' op: 'Reshape' input: 'r' input: 'dims' device: '/device:XPU:0' "
      "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tshape' value { type: DT_INT32 } } }\n"
      "node { name: 'fdims' op: 'Const' device: '/device:CPU:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 3 float_val: 2 } } } }\n"
      "node { name: 'xdims' op: 'Cast' input: 'fdims' device: '/device:XPU:1' attr { key: 'SrcT' value { type: DT_FLOAT } } "
      "attr { key: 'DstT' value { type: DT_INT32 } } }\n"
      "node { name: 'tall' op: 'Reshape' input: 'wide' input: 'xdims' device: '/device:XPU:0' "
      "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tshape' value { type: DT_INT32 } } }\n" +
      Binary("sum", "AddV2", "tall", "tall", "/device:XPU:0"));
  auto s = NewXpuSession(g);
  std::vector<Tensor> got;
  Status st = s->Run({{"x", MakeTensor<float>(GR_FLOAT, {6}, {-1.f, 0.5f, 2.f, -3.f, 4.f, 0.25f})}},
                     {"wide", "sum"}, {}, &got);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(got[0].shape().DebugString(), TensorShape({2, 3}).DebugString());
  EXPECT_EQ(got[1].shape().DebugString(), TensorShape({3, 2}).DebugString());
  EXPECT_EQ(ToVector<float>(got[1]), (std::vector<float>{0.f, 1.f, 4.f, 0.f, 8.f, 0.5f}));
}

TEST_P(CrossDeviceTest, StepStatsReportEachDevicesNodesAndMemory) {
  const proto::GraphDef g = ParseGraph(Placeholder("x") + Unary("r", "Relu", "x", "/device:XPU:0") +
                                       Unary("out", "Relu", "r", "/device:CPU:0"));
  auto s = NewXpuSession(g);
  proto::RunOptions options;
  options.set_trace_level(proto::RunOptions::FULL_TRACE);
  proto::RunMetadata metadata;
  std::vector<Tensor> got;
  ASSERT_TRUE(s->Run(options, {{"x", Tensor(GR_FLOAT, TensorShape({1024}))}}, {"out"}, {}, &got, &metadata).ok());
  const proto::NodeExecStats* relu = nullptr;
  const proto::NodeExecStats* out = nullptr;
  for (const auto& dev : metadata.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats()) {
      if (ns.node_name() == "r") {
        EXPECT_EQ(dev.device(), kXpu0);
        relu = &ns;
      }
      if (ns.node_name() == "out") {
        EXPECT_EQ(dev.device(), kCpu);
        out = &ns;
      }
    }
  ASSERT_NE(relu, nullptr);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(relu->memory_size(), 1);
  EXPECT_EQ(relu->memory(0).total_bytes(), 4096);
  // r's output (x's buffer, forwarded) is live on XPU:0 when r has run.
  EXPECT_GE(relu->memory(0).allocator_bytes_in_use(), 4096);
  EXPECT_GE(relu->memory(0).peak_bytes(), relu->memory(0).allocator_bytes_in_use());
  ASSERT_EQ(out->memory_size(), 1);
  EXPECT_EQ(out->memory(0).total_bytes(), 4096);
}

// An XPU node waits for a value from a CPU dequeue that never comes: the
// deadline ends the step, every wait included; Close ends one that has no
// deadline.
TEST_P(CrossDeviceTest, DeadlineAndCloseEndStepsWaitingForATransfer) {
  const proto::GraphDef g = ParseGraph(R"(
    node { name: 'q' op: 'FIFOQueueV2' attr { key: 'component_types' value { list { type: DT_FLOAT } } } }
    node { name: 'deq' op: 'QueueDequeueV2' input: 'q'
           attr { key: 'component_types' value { list { type: DT_FLOAT } } } }
    node { name: 'r' op: 'Relu' input: 'deq' device: '/device:XPU:0' attr { key: 'T' value { type: DT_FLOAT } } }
  )");
  auto s = NewXpuSession(g);
  proto::RunOptions options;
  options.set_timeout_in_ms(50);
  std::vector<Tensor> got;
  Status st = s->Run(options, {}, {"r"}, {}, &got, nullptr);
  EXPECT_EQ(st.code(), Code::kDeadlineExceeded) << st;

  Status blocked;
  std::thread runner([&] { blocked = s->Run({}, {"r"}, {}, &got); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(s->Close().ok());
  runner.join();
  EXPECT_EQ(blocked.code(), Code::kCancelled) << blocked;
}

INSTANTIATE_TEST_SUITE_P(Threads, CrossDeviceTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "Threads"; });

}  // namespace
}  // namespace graphrt
