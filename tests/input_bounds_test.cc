// No small input buys unbounded work: function libraries that double the
// graph per call level, nodes with very many edges, many loop frames,
// special files given as files, shapes of absurd rank, TensorProtos whose
// last value repeats over a huge shape. Each case has a small input that
// used to cost minutes or gigabytes; here each must end in a clean Status
// naming what is wrong (or, where the input is legitimate, work as before).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "graphrt/core/control_flow.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/npy.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/proto/function.pb.h"
#include "test_util.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;
using testing::MakeTensor;
using testing::ToVector;

class InputBounds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::LoadStandardPlugins(); }
};

int64_t MaxRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

bool Contains(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

proto::NodeDef* AddNode(proto::GraphDef* g, const std::string& name, const std::string& op,
                        const std::vector<std::string>& inputs = {}) {
  proto::NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  return n;
}

void SetType(proto::NodeDef* n, const char* attr) { (*n->mutable_attr())[attr].set_type(proto::DT_FLOAT); }

void AddFloatConst(proto::GraphDef* g, const std::string& name, float v) {
  proto::NodeDef* c = AddNode(g, name, "Const");
  SetType(c, "dtype");
  proto::TensorProto* t = (*c->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(proto::DT_FLOAT);
  t->add_float_val(v);
}

// ------------------------------------------------------- many edges, frames

Node* Named(const Graph& g, const std::string& name) {
  for (Node* n : g.op_nodes())
    if (n->name() == name) return n;
  return nullptr;
}

std::vector<std::string> Sources(const Node* n) {
  std::vector<std::string> v;
  for (const Edge* e : n->in_edges()) v.push_back(e->src()->name());
  return v;
}
std::vector<std::string> Destinations(const Node* n) {
  std::vector<std::string> v;
  for (const Edge* e : n->out_edges()) v.push_back(e->dst()->name());
  return v;
}

// AddControlEdge finds a duplicate whichever of the two lists is shorter,
// and a GraphDef's repeated "^x" becomes one edge.
TEST_F(InputBounds, ControlEdgesAreAddedOnce) {
  proto::GraphDef def;
  for (const char* name : {"a", "b", "c", "d", "e"}) AddNode(&def, name, "NoOp");
  AddNode(&def, "w", "NoOp", {"^a", "^b", "^a", "^c", "^b"});
  Graph g(&Runtime::Global().ops());
  ASSERT_TRUE(ConvertGraphDefToGraph(def, &g).ok());
  Node* w = Named(g, "w");
  EXPECT_EQ(Sources(w), (std::vector<std::string>{"a", "b", "c"}));
  Node* a = Named(g, "a");
  Node* d = Named(g, "d");
  Node* e = Named(g, "e");
  // w has 3 in-edges, a 1 out-edge (to w): a's list is scanned.
  EXPECT_EQ(g.AddControlEdge(a, w), nullptr);
  // a now gets more out-edges than d has in-edges: d's list is scanned.
  ASSERT_NE(g.AddControlEdge(a, d), nullptr);
  ASSERT_NE(g.AddControlEdge(a, e), nullptr);
  EXPECT_EQ(g.AddControlEdge(a, d), nullptr);
  EXPECT_EQ(g.AddControlEdge(a, e), nullptr);
  EXPECT_EQ(Sources(d), (std::vector<std::string>{"_SOURCE", "a"}));
  EXPECT_EQ(Destinations(a), (std::vector<std::string>{"w", "d", "e"}));
}

// RemoveNodes keeps the survivors' edges in order and drops edges between
// two removed nodes exactly once.
TEST_F(InputBounds, RemoveNodesKeepsEdgeOrder) {
  proto::GraphDef def;
  AddFloatConst(&def, "c", 1);
  std::vector<std::string> controls;
  for (int i = 0; i < 8; ++i) {
    SetType(AddNode(&def, "n" + std::to_string(i), "Identity", {"c"}), "T");
    controls.push_back("^n" + std::to_string(i));
  }
  AddNode(&def, "sink", "NoOp", controls);
  Graph g(&Runtime::Global().ops());
  ASSERT_TRUE(ConvertGraphDefToGraph(def, &g).ok());
  const int before = g.num_op_nodes();
  g.RemoveNodes({Named(g, "n1"), Named(g, "n4"), Named(g, "n6"), Named(g, "n4")});
  EXPECT_EQ(g.num_op_nodes(), before - 3);
  EXPECT_EQ(Destinations(Named(g, "c")), (std::vector<std::string>{"n0", "n2", "n3", "n5", "n7"}));
  EXPECT_EQ(Sources(Named(g, "sink")), (std::vector<std::string>{"n0", "n2", "n3", "n5", "n7"}));
  // The sink and a producer together: the edge between them goes once.
  g.RemoveNodes({Named(g, "sink"), Named(g, "n0")});
  EXPECT_EQ(Destinations(Named(g, "c")), (std::vector<std::string>{"n2", "n3", "n5", "n7"}));
  proto::GraphDef out;
  g.ToGraphDef(&out);
  EXPECT_EQ(out.node_size(), 5);
  for (const auto& n : out.node())
    for (const auto& in : n.input()) EXPECT_TRUE(in == "c") << n.name() << " reads " << in;
}

// The probe's wide, fan-out and fan-in graphs (quadratic before), small:
// one Const read by N Identities that one NoOp waits for.
TEST_F(InputBounds, WideGraphsRun) {
  const int n = 20000;
  proto::GraphDef def;
  AddFloatConst(&def, "c", 3);
  std::vector<std::string> controls;
  for (int i = 0; i < n; ++i) {
    SetType(AddNode(&def, "n" + std::to_string(i), "Identity", {"c"}), "T");
    controls.push_back("^n" + std::to_string(i));
  }
  AddNode(&def, "sink", "NoOp", controls);
  std::unique_ptr<Session> s = testing::CreateSession(def);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"n7"}, {}, &out).ok());  // prunes all but one Identity
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>{3});
  ASSERT_TRUE(s->Run({}, {"n19999"}, {"sink"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>{3});
}

// Many separate loop frames (Enter -> Exit each): frames are found by name.
TEST_F(InputBounds, ManyFramesAreLaidOutByName) {
  const int n = 2000;
  proto::GraphDef def;
  AddFloatConst(&def, "c", 2);
  std::vector<std::string> controls;
  for (int i = 0; i < n; ++i) {
    proto::NodeDef* enter = AddNode(&def, "enter_" + std::to_string(i), "Enter", {"c"});
    SetType(enter, "T");
    (*enter->mutable_attr())["frame_name"].set_s("frame_" + std::to_string(i));
    SetType(AddNode(&def, "exit_" + std::to_string(i), "Exit", {"enter_" + std::to_string(i)}), "T");
    controls.push_back("^exit_" + std::to_string(i));
  }
  AddNode(&def, "sink", "NoOp", controls);
  Graph g(&Runtime::Global().ops());
  ASSERT_TRUE(ConvertGraphDefToGraph(def, &g).ok());
  FrameLayout layout;
  ASSERT_TRUE(ComputeFrameLayout(g, &layout).ok());
  ASSERT_EQ(layout.frames.size(), static_cast<size_t>(n + 1));
  const int f = layout.FrameNamed("frame_1234");
  ASSERT_GT(f, 0);
  EXPECT_EQ(layout.frames[f].name, "frame_1234");
  EXPECT_EQ(layout.frames[f].parent, 0);
  EXPECT_EQ(layout.FrameNamed("frame_2000"), -1);
  EXPECT_EQ(layout.OutputFrame(*Named(g, "enter_1234")), f);
  EXPECT_EQ(layout.frame_of[Named(g, "exit_1234")->id()], f);
  std::unique_ptr<Session> s = testing::CreateSession(def);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"exit_1999"}, {"sink"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>{2});
}

}  // namespace
}  // namespace graphrt
