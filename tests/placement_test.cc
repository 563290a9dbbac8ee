// Placement fidelity (TensorFlow's placer_test, restated): device names in
// all their forms, partial specs merged through colocation, specs naming
// another process, soft placement, log_device_placement.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "graphrt/core/device_name.h"
#include "graphrt/core/session.h"
#include "test_util.h"

namespace graphrt {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

TEST(DeviceName, FullPartialAndLegacyForms) {
  DeviceNameParts p;
  ASSERT_TRUE(ParseDeviceName("/job:worker/replica:2/task:3/device:GPU:1", &p).ok());
  EXPECT_TRUE(p.has_job && p.has_replica && p.has_task && p.has_type && p.has_id);
  EXPECT_EQ(p.job, "worker");
  EXPECT_EQ(p.replica, 2);
  EXPECT_EQ(p.task, 3);
  EXPECT_EQ(p.type, "GPU");
  EXPECT_EQ(p.id, 1);
  EXPECT_EQ(p.ToString(), "/job:worker/replica:2/task:3/device:GPU:1");

  ASSERT_TRUE(ParseDeviceName("/cpu:0", &p).ok());  // legacy
  EXPECT_FALSE(p.has_job);
  EXPECT_EQ(p.type, "CPU");
  EXPECT_TRUE(p.has_id);
  EXPECT_EQ(p.id, 0);
  ASSERT_TRUE(ParseDeviceName("/gpu:1", &p).ok());
  EXPECT_EQ(p.type, "GPU");
  EXPECT_EQ(p.id, 1);
  ASSERT_TRUE(ParseDeviceName("/job:localhost/replica:0/task:0/cpu:1", &p).ok());
  EXPECT_EQ(p.type, "CPU");
  EXPECT_EQ(p.id, 1);

  ASSERT_TRUE(ParseDeviceName("/device:CPU:*", &p).ok());  // wildcard id
  EXPECT_TRUE(p.has_type);
  EXPECT_FALSE(p.has_id);
  ASSERT_TRUE(ParseDeviceName("/job:*/device:XPU", &p).ok());
  EXPECT_FALSE(p.has_job);
  EXPECT_EQ(p.type, "XPU");
  EXPECT_FALSE(p.has_id);
  ASSERT_TRUE(ParseDeviceName("CPU:1", &p).ok());  // no leading slash
  EXPECT_EQ(p.type, "CPU");
  EXPECT_EQ(p.id, 1);
  ASSERT_TRUE(ParseDeviceName("/job:a", &p).ok());
  EXPECT_TRUE(p.has_job);
  EXPECT_FALSE(p.has_type);
  ASSERT_TRUE(ParseDeviceName("", &p).ok());
  EXPECT_FALSE(p.has_job || p.has_type || p.has_id);
}

TEST(DeviceName, MalformedSpecs) {
  for (const char* bad : {"/foo:bar", "/device:CPU:x", "/job:", "/replica:a", "/task:-1", "/device:1CPU:0",
                          "/job:a//device:CPU:0", "cpu", "/device:CPU:0:1", "/replica:99999999999"}) {
    DeviceNameParts p;
    Status s = ParseDeviceName(bad, &p);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find(std::string("Malformed device specification '") + bad + "'"), std::string::npos) << s;
  }
}

TEST(DeviceName, LocalProcess) {
  DeviceNameParts p;
  for (const char* local : {"", "/job:localhost", "/job:localhost/replica:0/task:0/device:CPU:0", "/replica:0",
                            "/device:CPU:1"}) {
    ASSERT_TRUE(ParseDeviceName(local, &p).ok());
    EXPECT_TRUE(IsLocalProcess(p)) << local;
  }
  for (const char* remote : {"/job:foo", "/job:localhost/replica:1", "/job:localhost/replica:0/task:1/cpu:0",
                             "/job:ps/device:CPU:0"}) {
    ASSERT_TRUE(ParseDeviceName(remote, &p).ok());
    EXPECT_FALSE(IsLocalProcess(p)) << remote;
  }
}

std::string ConstOn(const std::string& name, const std::string& device, const std::string& colocate_with = "") {
  std::string s = "node { name: '" + name + "' op: 'Const' device: '" + device +
                  "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { "
                  "dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } ";
  if (!colocate_with.empty()) s += "attr { key: '_class' value { list { s: 'loc:@" + colocate_with + "' } } } ";
  return s + "}\n";
}

std::unique_ptr<Session> TwoCpuSession(bool soft = false, bool log = false) {
  testing::LoadStandardPlugins();
  SessionOptions opts;
  (*opts.config.mutable_device_count())["CPU"] = 2;
  opts.config.set_allow_soft_placement(soft);
  opts.config.set_log_device_placement(log);
  std::unique_ptr<Session> s;
  EXPECT_TRUE(NewSession(opts, &s).ok());
  return s;
}

// node -> assigned device, from the step's reported partition graphs.
std::map<std::string, std::string> Placement(Session* s, const std::vector<std::string>& fetches) {
  proto::RunOptions opts;
  opts.set_output_partition_graphs(true);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  Status st = s->Run(opts, {}, fetches, {}, &out, &md);
  EXPECT_TRUE(st.ok()) << st;
  std::map<std::string, std::string> device_of;
  for (const proto::GraphDef& g : md.partition_graphs())
    for (const proto::NodeDef& n : g.node()) device_of[n.name()] = n.device();
  return device_of;
}

TEST(Placement, EveryFormOfASpecPlacesTheNode) {
  auto s = TwoCpuSession();
  ASSERT_TRUE(s->Create(testing::ParseGraph(ConstOn("legacy", "/cpu:1") + ConstOn("full", kCpu1) +
                                            ConstOn("partial", "/job:localhost/device:CPU:1") +
                                            ConstOn("bare", "CPU:1") + ConstOn("lower", "/device:cpu:1") +
                                            ConstOn("wildcard", "/device:CPU:*") + ConstOn("none", "")))
                  .ok());
  auto device_of = Placement(s.get(), {"legacy:0", "full:0", "partial:0", "bare:0", "lower:0", "wildcard:0", "none:0"});
  for (const char* n : {"legacy", "full", "partial", "bare", "lower"}) EXPECT_EQ(device_of[n], kCpu1) << n;
  EXPECT_EQ(device_of["wildcard"], kCpu0);  // the first CPU
  EXPECT_EQ(device_of["none"], kCpu0);
}

TEST(Placement, PartialSpecsMergeThroughColocation) {
  // a says only its job, b (colocated with a) only its device: together CPU:1.
  auto s = TwoCpuSession();
  ASSERT_TRUE(s->Create(testing::ParseGraph(ConstOn("a", "/job:localhost") + ConstOn("b", "/device:CPU:1", "a"))).ok());
  auto device_of = Placement(s.get(), {"a:0", "b:0"});
  EXPECT_EQ(device_of["a"], kCpu1);
  EXPECT_EQ(device_of["b"], kCpu1);
}

TEST(Placement, AnotherProcessesDeviceIsAnErrorUnlessSoft) {
  for (const char* spec : {"/job:foo", "/job:localhost/replica:1/device:CPU:0", "/job:localhost/replica:0/task:2",
                           "/job:ps/replica:0/task:0/device:CPU:0"}) {
    auto s = TwoCpuSession();
    Status st = s->Create(testing::ParseGraph(ConstOn("c", spec)));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << spec;
    EXPECT_NE(st.message().find("'c'"), std::string::npos) << st;
    EXPECT_NE(st.message().find(std::string("Could not satisfy explicit device specification '") + spec + "'"),
              std::string::npos)
        << st;

    // Soft placement ignores the job/replica/task and keeps the rest.
    auto soft = TwoCpuSession(/*soft=*/true);
    ASSERT_TRUE(soft->Create(testing::ParseGraph(ConstOn("c", spec) + ConstOn("d", "/job:foo/device:CPU:1"))).ok());
    auto device_of = Placement(soft.get(), {"c:0", "d:0"});
    EXPECT_EQ(device_of["c"], kCpu0) << spec;
    EXPECT_EQ(device_of["d"], kCpu1);
  }
}

TEST(Placement, PlacePrunedGraphDefersTheRemoteSpecError) {
  testing::LoadStandardPlugins();
  SessionOptions opts;
  opts.config.mutable_graph_options()->set_place_pruned_graph(true);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(opts, &s).ok());
  ASSERT_TRUE(s->Create(testing::ParseGraph(ConstOn("here", "") + ConstOn("there", "/job:worker/task:1"))).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"here:0"}, {}, &out).ok());
  Status st = s->Run({}, {"there:0"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("/job:worker/task:1"), std::string::npos) << st;
}

TEST(Placement, LogDevicePlacementWritesTensorFlowsLines) {
  auto s = TwoCpuSession(/*soft=*/false, /*log=*/true);
  ::testing::internal::CaptureStderr();
  Status st = s->Create(testing::ParseGraph(ConstOn("a", "/cpu:1") + ConstOn("b", "")));
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_NE(log.find(std::string("a: (Const): ") + kCpu1 + "\n"), std::string::npos) << log;
  EXPECT_NE(log.find(std::string("b: (Const): ") + kCpu0 + "\n"), std::string::npos) << log;

  // Off by default.
  auto quiet = TwoCpuSession();
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(quiet->Create(testing::ParseGraph(ConstOn("a", "/cpu:1"))).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("(Const)"), std::string::npos);
}

}  // namespace
}  // namespace graphrt
