// Partitioning a placed graph by device (TensorFlow's graph_partition_test,
// restated) on graphs over the standard ops, placed by the first letter of
// each node's name: A -> CPU:0, B -> CPU:1, X -> a fake XPU:0 (a device type
// no plugin provides: partitioning needs only the device names). Then the
// partition graphs as a session reports them.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/partition.h"
#include "graphrt/core/rendezvous.h"
#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ToVector;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kXpu0[] = "/job:localhost/replica:0/task:0/device:XPU:0";

std::string DeviceFor(const std::string& node) {
  switch (node[0]) {
    case 'A': return kCpu0;
    case 'B': return kCpu1;
    default: return kXpu0;
  }
}

std::string ConstNode(const std::string& name, float v) {
  return "node { name: '" + name +
         "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { "
         "dtype: DT_FLOAT tensor_shape {} float_val: " + std::to_string(v) + " } } } }\n";
}
std::string UnaryNode(const std::string& name, const std::string& op, const std::string& input) {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + input +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}
std::string AddNode(const std::string& name, const std::string& x, const std::string& y) {
  return "node { name: '" + name + "' op: 'AddV2' input: '" + x + "' input: '" + y +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}
std::string NoOpNode(const std::string& name, const std::vector<std::string>& inputs) {
  std::string s = "node { name: '" + name + "' op: 'NoOp'";
  for (const std::string& i : inputs) s += " input: '" + i + "'";
  return s + " }\n";
}

// i = 0; while (i < 5) i += 1, the loop on B-nodes, fed from and read back
// by A-nodes.
constexpr char kLoop[] = R"(
node { name: 'A_init' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
  attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
node { name: 'B_enter' op: 'Enter' input: 'A_init' attr { key: 'T' value { type: DT_INT32 } }
  attr { key: 'frame_name' value { s: 'loop' } } }
node { name: 'B_merge' op: 'Merge' input: 'B_enter' input: 'B_next'
  attr { key: 'T' value { type: DT_INT32 } } attr { key: 'N' value { i: 2 } } }
node { name: 'B_limit' op: 'Const' input: '^B_merge' attr { key: 'dtype' value { type: DT_INT32 } }
  attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 5 } } } }
node { name: 'B_less' op: 'Less' input: 'B_merge' input: 'B_limit' attr { key: 'T' value { type: DT_INT32 } } }
node { name: 'B_cond' op: 'LoopCond' input: 'B_less' }
node { name: 'B_switch' op: 'Switch' input: 'B_merge' input: 'B_cond' attr { key: 'T' value { type: DT_INT32 } } }
node { name: 'B_body' op: 'Identity' input: 'B_switch:1' attr { key: 'T' value { type: DT_INT32 } } }
node { name: 'B_one' op: 'Const' input: '^B_body' attr { key: 'dtype' value { type: DT_INT32 } }
  attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
node { name: 'B_add' op: 'AddV2' input: 'B_body' input: 'B_one' attr { key: 'T' value { type: DT_INT32 } } }
node { name: 'B_next' op: 'NextIteration' input: 'B_add' attr { key: 'T' value { type: DT_INT32 } } }
node { name: 'B_exit' op: 'Exit' input: 'B_switch' attr { key: 'T' value { type: DT_INT32 } } }
node { name: 'A_out' op: 'Identity' input: 'B_exit' attr { key: 'T' value { type: DT_INT32 } } }
)";

class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::LoadStandardPlugins(); }

  // Builds `pbtxt` placed by DeviceFor and partitions it.
  Status Run(const std::string& pbtxt) {
    proto::GraphDef def = testing::ParseGraph("versions { producer: 27 min_consumer: 3 }\n" + pbtxt);
    graph_ = std::make_unique<Graph>(&Runtime::Global().ops());
    Status s = ConvertGraphDefToGraph(def, graph_.get());
    if (!s.ok()) return s;
    for (Node* n : graph_->op_nodes()) n->set_assigned_device(DeviceFor(n->name()));
    return Partition(options_, *graph_, &parts_);
  }

  // The partition of `device` as a GraphDef, node by name.
  std::map<std::string, proto::NodeDef> Nodes(const std::string& device) {
    std::map<std::string, proto::NodeDef> out;
    auto it = parts_.find(device);
    if (it == parts_.end()) return out;
    proto::GraphDef def;
    PartitionToGraphDef(*it->second, &def);
    for (const proto::NodeDef& n : def.node()) out[n.name()] = n;
    return out;
  }

  static std::vector<proto::NodeDef> OfOp(const std::map<std::string, proto::NodeDef>& nodes, const std::string& op) {
    std::vector<proto::NodeDef> out;
    for (const auto& [name, n] : nodes)
      if (n.op() == op) out.push_back(n);
    return out;
  }

  PartitionOptions options_;
  std::unique_ptr<Graph> graph_;
  std::map<std::string, std::unique_ptr<Graph>> parts_;
};

TEST_F(PartitionTest, SingleDeviceIsOnePartitionLikeTheInput) {
  ASSERT_TRUE(Run(ConstNode("A1", 1) + UnaryNode("A2", "Identity", "A1") + NoOpNode("A3", {"^A2"})).ok());
  ASSERT_EQ(parts_.size(), 1u);
  auto nodes = Nodes(kCpu0);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes["A2"].input(0), "A1");
  EXPECT_EQ(nodes["A3"].input(0), "^A2");
  EXPECT_EQ(nodes["A2"].device(), kCpu0);  // the assigned device, reported
  EXPECT_EQ(parts_.begin()->second->versions().producer(), 27);
  EXPECT_EQ(parts_.begin()->second->versions().min_consumer(), 3);
}

TEST_F(PartitionTest, CrossDeviceDataBecomesOneSendRecvPair) {
  options_.get_incarnation = [](const std::string& device) { return device == kCpu0 ? 0x1ed2u : 99u; };
  ASSERT_TRUE(Run(ConstNode("A1", 1) + UnaryNode("B1", "Identity", "A1")).ok());
  ASSERT_EQ(parts_.size(), 2u);
  auto cpu0 = Nodes(kCpu0), cpu1 = Nodes(kCpu1);
  ASSERT_EQ(cpu0.size(), 2u);
  ASSERT_EQ(cpu1.size(), 2u);
  auto sends = OfOp(cpu0, "_Send");
  auto recvs = OfOp(cpu1, "_Recv");
  ASSERT_EQ(sends.size(), 1u);
  ASSERT_EQ(recvs.size(), 1u);
  const proto::NodeDef& send = sends[0];
  const proto::NodeDef& recv = recvs[0];
  EXPECT_EQ(send.input(0), "A1");
  EXPECT_EQ(send.attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(send.attr().at("send_device").s(), kCpu0);
  EXPECT_EQ(send.attr().at("recv_device").s(), kCpu1);
  EXPECT_EQ(send.attr().at("send_device_incarnation").i(), 0x1ed2);
  EXPECT_FALSE(send.attr().at("client_terminated").b());
  EXPECT_EQ(send.device(), kCpu0);
  // TensorFlow's naming: "edge_<edge id>_<producer>", the same on both sides.
  EXPECT_EQ(send.attr().at("tensor_name").s().rfind("edge_", 0), 0u);
  EXPECT_NE(send.attr().at("tensor_name").s().find("_A1"), std::string::npos);
  EXPECT_EQ(recv.attr().at("tensor_name").s(), send.attr().at("tensor_name").s());
  EXPECT_EQ(recv.attr().at("tensor_type").type(), proto::DT_FLOAT);
  EXPECT_EQ(recv.attr().at("send_device").s(), kCpu0);
  EXPECT_EQ(recv.attr().at("recv_device").s(), kCpu1);
  EXPECT_EQ(recv.attr().at("send_device_incarnation").i(), 0x1ed2);
  EXPECT_EQ(recv.device(), kCpu1);
  EXPECT_EQ(recv.input_size(), 0);
  EXPECT_EQ(cpu1["B1"].input(0), recv.name());
  EXPECT_FALSE(recv.attr().count(kRecvOnHostAttr));
}

TEST_F(PartitionTest, OneTransferPerTensorPerDestinationDevice) {
  // A1 read twice on CPU:1 and once on XPU:0; A1:0 and A2 are different tensors.
  ASSERT_TRUE(Run(ConstNode("A1", 1) + ConstNode("A2", 2) + UnaryNode("B1", "Identity", "A1") +
                  UnaryNode("B2", "Neg", "A1") + AddNode("B3", "A1", "A2") + UnaryNode("X1", "Identity", "A1"))
                  .ok());
  ASSERT_EQ(parts_.size(), 3u);
  auto cpu0 = Nodes(kCpu0), cpu1 = Nodes(kCpu1), xpu = Nodes(kXpu0);
  auto sends = OfOp(cpu0, "_Send");
  ASSERT_EQ(sends.size(), 3u);  // A1 -> CPU:1, A2 -> CPU:1, A1 -> XPU:0
  std::map<std::string, int> per_destination;
  for (const auto& s : sends) ++per_destination[s.attr().at("recv_device").s() + " " + s.input(0)];
  EXPECT_EQ(per_destination[std::string(kCpu1) + " A1"], 1);
  EXPECT_EQ(per_destination[std::string(kCpu1) + " A2"], 1);
  EXPECT_EQ(per_destination[std::string(kXpu0) + " A1"], 1);
  auto recvs1 = OfOp(cpu1, "_Recv");
  ASSERT_EQ(recvs1.size(), 2u);
  // B1, B2 and B3's first input read the one _Recv of A1.
  EXPECT_EQ(cpu1["B1"].input(0), cpu1["B2"].input(0));
  EXPECT_EQ(cpu1["B3"].input(0), cpu1["B1"].input(0));
  EXPECT_NE(cpu1["B3"].input(1), cpu1["B1"].input(0));
  EXPECT_EQ(cpu1[cpu1["B3"].input(1)].op(), "_Recv");
  ASSERT_EQ(OfOp(xpu, "_Recv").size(), 1u);
  EXPECT_EQ(xpu["X1"].input(0), OfOp(xpu, "_Recv")[0].name());
  // Every _Send's name pairs with exactly one _Recv's.
  std::map<std::string, int> names;
  for (const auto& s : sends) ++names[s.attr().at("tensor_name").s()];
  for (const auto& r : recvs1) --names[r.attr().at("tensor_name").s()];
  for (const auto& r : OfOp(xpu, "_Recv")) --names[r.attr().at("tensor_name").s()];
  for (const auto& [name, count] : names) EXPECT_EQ(count, 0) << name;
}

TEST_F(PartitionTest, CrossDeviceControlSendsADummyOncePerDestination) {
  ASSERT_TRUE(Run(ConstNode("A1", 1) + NoOpNode("B1", {"^A1"}) + NoOpNode("B2", {"^A1"})).ok());
  auto cpu0 = Nodes(kCpu0), cpu1 = Nodes(kCpu1);
  auto consts = OfOp(cpu0, "Const");
  ASSERT_EQ(consts.size(), 2u);  // A1 and the dummy
  const proto::NodeDef& dummy = consts[0].name() == "A1" ? consts[1] : consts[0];
  EXPECT_EQ(dummy.name().rfind("A1/ctrl/_", 0), 0u) << dummy.name();
  ASSERT_EQ(dummy.input_size(), 1);
  EXPECT_EQ(dummy.input(0), "^A1");
  EXPECT_EQ(dummy.attr().at("value").tensor().tensor_shape().dim(0).size(), 0);  // empty: nothing real is sent
  auto sends = OfOp(cpu0, "_Send");
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].input(0), dummy.name());
  auto recvs = OfOp(cpu1, "_Recv");
  ASSERT_EQ(recvs.size(), 1u);
  EXPECT_EQ(cpu1["B1"].input(0), "^" + recvs[0].name());
  EXPECT_EQ(cpu1["B2"].input(0), "^" + recvs[0].name());
}

TEST_F(PartitionTest, DataAndControlToOneDeviceAreTwoPairs) {
  ASSERT_TRUE(Run(ConstNode("A1", 1) + UnaryNode("B1", "Identity", "A1") + NoOpNode("B2", {"^A1"})).ok());
  EXPECT_EQ(OfOp(Nodes(kCpu0), "_Send").size(), 2u);
  EXPECT_EQ(OfOp(Nodes(kCpu1), "_Recv").size(), 2u);
}

TEST_F(PartitionTest, HostMemoryInputsGetTheirOwnTransfer) {
  // B2's input 1 is declared HostMemory: A1 goes to CPU:1 twice, once into
  // device memory (B1) and once into host memory (B2:1); A2's output is a
  // host-memory output of its kernel.
  options_.input_on_host = [](const Node& n, int slot) { return n.name() == "B2" && slot == 1; };
  options_.output_on_host = [](const Node& n, int slot) { return n.name() == "A2"; };
  ASSERT_TRUE(
      Run(ConstNode("A1", 1) + ConstNode("A2", 2) + UnaryNode("B1", "Identity", "A1") + AddNode("B2", "A2", "A1"))
          .ok());
  auto cpu0 = Nodes(kCpu0), cpu1 = Nodes(kCpu1);
  ASSERT_EQ(OfOp(cpu0, "_Send").size(), 3u);
  const proto::NodeDef& host_recv = cpu1[cpu1["B2"].input(1)];
  ASSERT_EQ(host_recv.op(), "_Recv");
  EXPECT_TRUE(host_recv.attr().at(kRecvOnHostAttr).b());
  const proto::NodeDef& device_recv = cpu1[cpu1["B1"].input(0)];
  EXPECT_NE(device_recv.name(), host_recv.name());
  EXPECT_FALSE(device_recv.attr().count(kRecvOnHostAttr));
  for (const auto& s : OfOp(cpu0, "_Send"))
    EXPECT_EQ(s.attr().count(kSendFromHostAttr) == 1, s.input(0) == "A2") << s.name();
}

TEST_F(PartitionTest, EachRecvMeetsItsSendInTheRendezvous) {
  // The key each side builds from its own attrs (at the root frame's first
  // iteration) must be the same, so every value sent reaches exactly one _Recv.
  options_.get_incarnation = [](const std::string& device) { return std::hash<std::string>{}(device); };
  ASSERT_TRUE(Run(ConstNode("A1", 1) + ConstNode("A2", 2) + UnaryNode("B1", "Identity", "A1") +
                  AddNode("B2", "A1", "A2") + UnaryNode("X1", "Neg", "B2") + NoOpNode("A3", {"^X1", "^B1"}))
                  .ok());
  auto key_of = [](const proto::NodeDef& n) {
    Rendezvous::ParsedKey k;
    EXPECT_TRUE(Rendezvous::ParseKey(
                    Rendezvous::CreateKey(n.attr().at("send_device").s(),
                                          static_cast<uint64_t>(n.attr().at("send_device_incarnation").i()),
                                          n.attr().at("recv_device").s(), n.attr().at("tensor_name").s(), 0, 0),
                    &k)
                    .ok());
    return k;
  };
  LocalRendezvous rendezvous;
  int sent = 0;
  for (const char* device : {kCpu0, kCpu1, kXpu0})
    for (const auto& send : OfOp(Nodes(device), "_Send")) {
      ASSERT_TRUE(rendezvous.Send(key_of(send), MakeTensor<float>(GR_FLOAT, {}, {1.0f * sent}), false).ok());
      ++sent;
    }
  EXPECT_EQ(sent, 5);  // A1, A2 -> CPU:1; B2 -> XPU:0; X1, B1 -> CPU:0 (control)
  int received = 0;
  for (const char* device : {kCpu0, kCpu1, kXpu0})
    for (const auto& recv : OfOp(Nodes(device), "_Recv")) {
      bool called = false;
      rendezvous.RecvAsync(key_of(recv), [&](const Status& st, const Tensor&, bool) {
        EXPECT_TRUE(st.ok()) << st;
        called = true;
      });
      EXPECT_TRUE(called) << recv.name() << " found no value";  // sent already
      ++received;
    }
  EXPECT_EQ(received, sent);
}

TEST_F(PartitionTest, PartitionGraphDefsAreValidGraphs) {
  ASSERT_TRUE(Run(ConstNode("A1", 1) + UnaryNode("B1", "Identity", "A1") + NoOpNode("B2", {"^A1"})).ok());
  for (const auto& [device, part] : parts_) {
    proto::GraphDef def;
    PartitionToGraphDef(*part, &def);
    Graph g(&Runtime::Global().ops());
    Status s = ConvertGraphDefToGraph(def, &g);  // _Send/_Recv validate against the core's OpDefs
    EXPECT_TRUE(s.ok()) << device << ": " << s;
  }
}

TEST_F(PartitionTest, LoopOnOneDevicePartitions) {

  const std::string loop = kLoop;
  ASSERT_TRUE(Run(loop).ok());
  auto cpu0 = Nodes(kCpu0), cpu1 = Nodes(kCpu1);
  EXPECT_EQ(OfOp(cpu0, "_Send").size(), 1u);  // A_init
  EXPECT_EQ(OfOp(cpu1, "_Recv").size(), 1u);
  EXPECT_EQ(OfOp(cpu1, "_Send").size(), 1u);  // B_exit
  EXPECT_EQ(cpu1[cpu1["B_enter"].input(0)].op(), "_Recv");
  EXPECT_EQ(cpu0[cpu0["A_out"].input(0)].op(), "_Recv");

  // The same loop with its increment on CPU:0: the frame spans two devices.
  std::string split = loop;
  auto rename = [&split](const std::string& from, const std::string& to) {
    for (size_t p = split.find(from); p != std::string::npos; p = split.find(from, p + to.size()))
      split.replace(p, from.size(), to);
  };
  rename("B_add", "A_add");
  rename("B_one", "A_one");
  Status s = Run(split);
  EXPECT_EQ(s.code(), Code::kUnimplemented) << s;
  EXPECT_NE(s.message().find("'loop'"), std::string::npos) << s;
  EXPECT_NE(s.message().find(kCpu0), std::string::npos) << s;
  EXPECT_NE(s.message().find(kCpu1), std::string::npos) << s;
}

TEST_F(PartitionTest, UnplacedNodeIsAnError) {
  proto::GraphDef def = testing::ParseGraph(ConstNode("A1", 1));
  Graph g(&Runtime::Global().ops());
  ASSERT_TRUE(ConvertGraphDefToGraph(def, &g).ok());
  Status s = Partition(options_, g, &parts_);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'A1'"), std::string::npos) << s;
}

TEST_F(PartitionTest, HostMemoryArgsFollowTheKernelRegistration) {
  ASSERT_TRUE(Run(ConstNode("A1", 1) + ConstNode("A2", 2) + AddNode("A3", "A1", "A2")).ok());
  const Node* add = graph_->BuildNameIndex().at("A3");
  KernelRegistration reg;
  reg.op = "AddV2";
  reg.host_memory_args = {"y", "z"};  // AddV2(x, y) -> z
  EXPECT_FALSE(IsHostMemoryArg(reg, *add, 0, /*input=*/true));
  EXPECT_TRUE(IsHostMemoryArg(reg, *add, 1, /*input=*/true));
  EXPECT_TRUE(IsHostMemoryArg(reg, *add, 0, /*input=*/false));
  reg.host_memory_args.clear();
  EXPECT_FALSE(IsHostMemoryArg(reg, *add, 1, /*input=*/true));
}

// The MinusAX fixture (direct_session_test.cc) across CPU:0 and CPU:1.
constexpr char kTwoCpuMinusAX[] = R"(
node { name: 'a' op: 'Const' device: '/cpu:0' attr { key: 'dtype' value { type: DT_FLOAT } }
  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
    float_val: 3 float_val: 2 float_val: -1 float_val: 0 } } } }
node { name: 'x' op: 'Const' device: '/cpu:1' attr { key: 'dtype' value { type: DT_FLOAT } }
  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 1 } }
    float_val: 1 } } } }
node { name: 'y' op: 'MatMul' input: 'a' input: 'x' device: '/cpu:0' attr { key: 'T' value { type: DT_FLOAT } } }
node { name: 'y_neg' op: 'Neg' input: 'y' device: '/cpu:1' attr { key: 'T' value { type: DT_FLOAT } } }
)";

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

TEST(SessionPartitionGraphs, ReportedPerDeviceWithTheTransfers) {
  std::unique_ptr<Session> s = TwoCpuSession(/*fold=*/false);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Create(testing::ParseGraph(kTwoCpuMinusAX)).ok());
  proto::RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(run_options, {}, {"y_neg:0"}, {}, &out, &md).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{-5, 1}));
  ASSERT_EQ(md.partition_graphs_size(), 2);
  std::map<std::string, std::map<std::string, int>> ops;  // device -> op -> count
  for (const proto::GraphDef& g : md.partition_graphs())
    for (const proto::NodeDef& n : g.node()) ++ops[n.device()][n.op()];
  // x travels CPU:1 -> CPU:0 into y, y travels back into y_neg; the fetch's
  // _Retval is on y_neg's device.
  EXPECT_EQ(ops[kCpu0]["_Send"], 1);
  EXPECT_EQ(ops[kCpu0]["_Recv"], 1);
  EXPECT_EQ(ops[kCpu1]["_Send"], 1);
  EXPECT_EQ(ops[kCpu1]["_Recv"], 1);
  EXPECT_EQ(ops[kCpu0]["MatMul"], 1);
  EXPECT_EQ(ops[kCpu1]["Neg"], 1);
  EXPECT_EQ(ops[kCpu1]["_Retval"], 1);

  // Without the option, none; a one-device step reports one partition.
  ASSERT_TRUE(s->Run(proto::RunOptions(), {}, {"y_neg:0"}, {}, &out, &md).ok());
  EXPECT_EQ(md.partition_graphs_size(), 0);
  ASSERT_TRUE(s->Run(run_options, {}, {"x:0"}, {}, &out, &md).ok());
  ASSERT_EQ(md.partition_graphs_size(), 1);
  for (const proto::NodeDef& n : md.partition_graphs(0).node()) {
    EXPECT_EQ(n.device(), kCpu1);
    EXPECT_NE(n.op(), "_Send");
  }
}

// kLoop with each node pinned by the first letter of its name.
std::string PinnedLoop() {
  std::string g = kLoop;
  for (size_t p = g.find("name: '"); p != std::string::npos; p = g.find("name: '", p + 1)) {
    const size_t start = p + 7;
    const std::string device = g[start] == 'A' ? "/cpu:0" : "/cpu:1";
    const size_t end = g.find('\'', start);
    g.insert(end + 1, " device: '" + device + "'");
  }
  return g;
}

TEST(SessionPartitionGraphs, ALoopAcrossCpusRunsButCannotBePartitioned) {
  std::unique_ptr<Session> s = TwoCpuSession();
  ASSERT_NE(s, nullptr);
  std::string g = PinnedLoop();
  // The increment on CPU:0, the rest of the loop on CPU:1.
  for (const std::string name : {"'B_add'", "'B_one'"}) {
    const size_t p = g.find("name: " + name);
    ASSERT_NE(p, std::string::npos);
    g.replace(g.find("/cpu:1", p), 6, "/cpu:0");
  }
  ASSERT_TRUE(s->Create(testing::ParseGraph(g)).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"A_out:0"}, {}, &out).ok());  // one executor runs it, as before
  EXPECT_EQ(out[0].scalar<int32_t>(), 5);
  proto::RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  proto::RunMetadata md;
  Status st = s->Run(run_options, {}, {"A_out:0"}, {}, &out, &md);
  EXPECT_EQ(st.code(), Code::kUnimplemented) << st;
  EXPECT_NE(st.message().find("'loop'"), std::string::npos) << st;
}

TEST(SessionPartitionGraphs, ALoopOnOneCpuIsPartitioned) {
  std::unique_ptr<Session> s = TwoCpuSession();
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Create(testing::ParseGraph(PinnedLoop())).ok());
  proto::RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(run_options, {}, {"A_out:0"}, {}, &out, &md).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 5);
  ASSERT_EQ(md.partition_graphs_size(), 2);
  int sends = 0;
  for (const proto::GraphDef& p : md.partition_graphs())
    for (const proto::NodeDef& n : p.node()) sends += n.op() == "_Send";
  EXPECT_EQ(sends, 2);  // A_init in, B_exit out
}

}  // namespace
}  // namespace graphrt
