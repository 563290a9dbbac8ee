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

// ---------------------------------------------------------------- functions

// f0 .. f_depth: f_k(x) = f_{k+1}(f_{k+1}(x)), f_depth = Identity: calling
// f0 inlines 2^depth Identities from a library of a few hundred bytes (the
// probe's fn_fanout). "call" = f0(x), x = 1.
proto::GraphDef FanOutGraph(int depth) {
  proto::GraphDef g;
  AddFloatConst(&g, "x", 1);
  AddNode(&g, "call", "f0", {"x"});
  for (int k = 0; k <= depth; ++k) {
    proto::FunctionDef* f = g.mutable_library()->add_function();
    f->mutable_signature()->set_name("f" + std::to_string(k));
    proto::OpDef::ArgDef* in = f->mutable_signature()->add_input_arg();
    in->set_name("x");
    in->set_type(proto::DT_FLOAT);
    proto::OpDef::ArgDef* out = f->mutable_signature()->add_output_arg();
    out->set_name("y");
    out->set_type(proto::DT_FLOAT);
    if (k == depth) {
      proto::NodeDef* i = f->add_node_def();
      i->set_name("i");
      i->set_op("Identity");
      i->add_input("x");
      SetType(i, "T");
      (*f->mutable_ret())["y"] = "i:output:0";
      continue;
    }
    const std::string callee = "f" + std::to_string(k + 1);
    proto::NodeDef* a = f->add_node_def();
    a->set_name("a");
    a->set_op(callee);
    a->add_input("x");
    proto::NodeDef* b = f->add_node_def();
    b->set_name("b");
    b->set_op(callee);
    b->add_input("a:y:0");
    (*f->mutable_ret())["y"] = "b:y:0";
  }
  return g;
}

SessionOptions WithLimits(int64_t max_graph_nodes, int64_t memory_limit = 0) {
  SessionOptions o = testing::OpTestOptions(1);
  if (max_graph_nodes > 0) o.config.mutable_graphrt_options()->set_max_graph_nodes(max_graph_nodes);
  if (memory_limit > 0) o.config.mutable_graphrt_options()->set_session_memory_limit_bytes(memory_limit);
  return o;
}

Status CreateWith(const SessionOptions& o, const proto::GraphDef& g, std::unique_ptr<Session>* s) {
  GR_RETURN_IF_ERROR(NewSession(o, s));
  return (*s)->Create(g);
}

// 2^31 calls (the probe's 2 KB file that allocated until out of memory):
// refused before any inlining, naming the call, the function and a count.
TEST_F(InputBounds, FunctionFanOutIsRefusedBeforeInlining) {
  std::unique_ptr<Session> s;
  // A memory limit large enough that the node limit binds on any machine.
  const Status st = CreateWith(WithLimits(0, int64_t{64} << 30), FanOutGraph(31), &s);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_TRUE(Contains(st, "'call'")) << st;
  EXPECT_TRUE(Contains(st, "function 'f0'")) << st;
  // The lower bound, 2 nodes per call besides its body: L(f31) = 1,
  // L(f_k) = 2 * (2 + L(f_k+1)) = 5 * 2^(31-k) - 4, and 2 for the call.
  EXPECT_TRUE(Contains(st, "at least 10737418238 nodes")) << st;
  EXPECT_TRUE(Contains(st, "4194304")) << st;  // the default limit
  EXPECT_TRUE(Contains(st, "max_graph_nodes")) << st;
  EXPECT_LT(MaxRssBytes(), int64_t{1} << 30);
}

// The exact count of what inlining makes, per call: an Identity per
// argument, the input NoOp and the output node besides the body. Depth 2:
// f2 = 1, f1 = 2 * (3 + 1) = 8, f0 = 2 * (3 + 8) = 22, the call 3 + 22, and
// x: 26 nodes. The lower bound checked first is 18 for the call (see
// below), 19 with x.
TEST_F(InputBounds, FunctionInliningStopsAtTheNodeLimit) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(CreateWith(WithLimits(26), FanOutGraph(2), &s).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"call"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>{1});

  // Past the lower bound: refused up front.
  Status st = CreateWith(WithLimits(18), FanOutGraph(2), &s);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_TRUE(Contains(st, "at least 18 nodes")) << st;
  // Within the bound but not the count: refused while inlining.
  st = CreateWith(WithLimits(25), FanOutGraph(2), &s);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_TRUE(Contains(st, "Node 'call'")) << st;
  EXPECT_TRUE(Contains(st, "(function 'f0')")) << st;
  EXPECT_TRUE(Contains(st, "makes more than 25 nodes")) << st;
}

// The memory limit bounds the graph too (about 4 KiB a node): 64 KiB
// allows 16 nodes, 1 MiB 256, and depth 4 makes 110.
TEST_F(InputBounds, FunctionInliningRespectsTheMemoryLimit) {
  std::unique_ptr<Session> s;
  const Status st = CreateWith(WithLimits(0, 64 << 10), FanOutGraph(4), &s);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_TRUE(Contains(st, "function 'f0'")) << st;
  EXPECT_TRUE(Contains(st, "session_memory_limit_bytes")) << st;
  ASSERT_TRUE(CreateWith(WithLimits(0, 1 << 20), FanOutGraph(4), &s).ok());
}

// A deep fan-out that fits: 2^12 Identities through 8k calls, the value
// passed through all of them.
TEST_F(InputBounds, FunctionFanOutWithinTheLimitRuns) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(CreateWith(testing::OpTestOptions(1), FanOutGraph(12), &s).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"call"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>{1});
}

// A plain GraphDef is held to the same node limit, with Extend counting
// the nodes already there.
TEST_F(InputBounds, GraphNodeLimitCountsPlainNodesAndExtend) {
  proto::GraphDef g;
  for (int i = 0; i < 6; ++i) AddFloatConst(&g, "c" + std::to_string(i), 1);
  std::unique_ptr<Session> s;
  Status st = CreateWith(WithLimits(5), g, &s);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_TRUE(Contains(st, "the GraphDef has 6 nodes; the graph may have 5")) << st;
  proto::GraphDef first, second;
  for (int i = 0; i < 3; ++i) *first.add_node() = g.node(i);
  for (int i = 3; i < 6; ++i) *second.add_node() = g.node(i);
  ASSERT_TRUE(CreateWith(WithLimits(5), first, &s).ok());
  st = s->Extend(second);
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_TRUE(Contains(st, "has 3")) << st;
  second.mutable_node()->RemoveLast();
  EXPECT_TRUE(s->Extend(second).ok());
}

// ---------------------------------------------------------- special files

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/graphrt_bounds_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// /dev/zero (an endless file), a FIFO (would block) and a directory are
// refused by their type, naming the file, before anything is read.
TEST_F(InputBounds, SpecialFilesAreRefusedByType) {
  proto::GraphDef g;
  Status s = ReadGraphDefFromFile("/dev/zero", &g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "/dev/zero: is a character device, not a regular file")) << s;
  Tensor t;
  s = ReadNpy("/dev/zero", &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "/dev/zero")) << s;

  TempDir dir;
  const std::string fifo = dir / "graph.pb";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  s = ReadGraphDefFromFile(fifo, &g);  // no writer: would block if opened for reading plainly
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, fifo + ": is a FIFO (named pipe), not a regular file")) << s;

  // A symlink to /dev/zero is what it points at.
  const std::string link = dir / "feed.npy";
  fs::create_symlink("/dev/zero", link);
  s = ReadNpy(link, &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, link + ": is a character device")) << s;

  s = ReadGraphDefFromFile(dir / "", &g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "is a directory")) << s;
  s = ReadGraphDefFromFile(dir / "missing.pb", &g);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;

  // A regular file still reads.
  proto::GraphDef small;
  AddFloatConst(&small, "c", 1);
  ASSERT_TRUE(WriteGraphDefToFile(dir / "ok.pb", small, false).ok());
  ASSERT_TRUE(ReadGraphDefFromFile(dir / "ok.pb", &g).ok());
  EXPECT_EQ(g.node_size(), 1);
  EXPECT_LT(MaxRssBytes(), int64_t{1} << 30);
}

// ------------------------------------------------------------------- rank

TEST_F(InputBounds, RankIsCappedAt254) {
  std::vector<int64_t> dims(254, 1);
  TensorShape shape;
  ASSERT_TRUE(TensorShape::FromDims(dims.data(), 254, &shape).ok());
  EXPECT_EQ(shape.rank(), 254);
  dims.push_back(1);
  Status s = TensorShape::FromDims(dims.data(), 255, &shape);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "shape has rank 255, more than the 254 dimensions")) << s;

  proto::TensorShapeProto p;
  for (int i = 0; i < 20000; ++i) p.add_dim()->set_size(1);
  s = TensorShape::FromProto(p, &shape);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "rank 20000")) << s;
  PartialTensorShape partial;
  s = PartialTensorShape::FromProto(p, &partial);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "rank 20000")) << s;

  // A Const of rank 300 is refused at Create, naming the node; a Reshape to
  // rank 300 when it runs (its shape comes from a tensor), naming the node.
  proto::GraphDef g;
  AddFloatConst(&g, "c", 1);
  (*g.mutable_node(0)->mutable_attr())["value"].mutable_tensor()->mutable_tensor_shape()->mutable_dim()->Clear();
  for (int i = 0; i < 300; ++i)
    (*g.mutable_node(0)->mutable_attr())["value"].mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(1);
  std::unique_ptr<Session> session;
  s = CreateWith(testing::OpTestOptions(1), g, &session);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "'c'")) << s;
  EXPECT_TRUE(Contains(s, "rank 300")) << s;

  proto::GraphDef r;
  AddNode(&r, "x", "Placeholder");
  SetType(r.mutable_node(0), "dtype");
  proto::NodeDef* shape_const = AddNode(&r, "shape", "Const");
  (*shape_const->mutable_attr())["dtype"].set_type(proto::DT_INT32);
  proto::TensorProto* st = (*shape_const->mutable_attr())["value"].mutable_tensor();
  st->set_dtype(proto::DT_INT32);
  st->mutable_tensor_shape()->add_dim()->set_size(300);
  st->add_int_val(1);
  SetType(AddNode(&r, "reshaped", "Reshape", {"x", "shape"}), "T");
  std::unique_ptr<Session> rs;
  s = CreateWith(testing::OpTestOptions(1), r, &rs);
  std::vector<Tensor> out;
  if (s.ok()) s = rs->Run({{"x", MakeTensor<float>(GR_FLOAT, {1}, {5})}}, {"reshaped"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_TRUE(Contains(s, "reshaped")) << s;
  EXPECT_TRUE(Contains(s, "254")) << s;
}

// --------------------------------------------------------- TensorProtoPrefix

TEST_F(InputBounds, TensorProtoPrefixMakesOnlyThePrefix) {
  // 136 bytes of event file asked for 4 GiB this way.
  proto::TensorProto big;
  big.set_dtype(proto::DT_FLOAT);
  big.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 30);
  big.add_float_val(1.5f);
  TensorShape shape;
  Tensor head;
  ASSERT_TRUE(TensorProtoPrefix(big, 10, &shape, &head).ok());
  EXPECT_EQ(shape, TensorShape({int64_t{1} << 30}));
  EXPECT_EQ(ToVector<float>(head), std::vector<float>(10, 1.5f));
  EXPECT_LT(MaxRssBytes(), int64_t{1} << 30);

  // Values given, then the last repeated; the shape stays the proto's.
  proto::TensorProto p;
  p.set_dtype(proto::DT_INT32);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  for (int v : {7, 8, 9}) p.add_int_val(v);
  ASSERT_TRUE(TensorProtoPrefix(p, 5, &shape, &head).ok());
  EXPECT_EQ(shape, TensorShape({2, 3}));
  EXPECT_EQ(ToVector<int32_t>(head), (std::vector<int32_t>{7, 8, 9, 9, 9}));
  ASSERT_TRUE(TensorProtoPrefix(p, 100, &shape, &head).ok());
  EXPECT_EQ(ToVector<int32_t>(head), (std::vector<int32_t>{7, 8, 9, 9, 9, 9}));
  ASSERT_TRUE(TensorProtoPrefix(p, 0, &shape, &head).ok());
  EXPECT_EQ(head.NumElements(), 0);

  // tensor_content: the first bytes.
  Tensor full = MakeTensor<int64_t>(GR_INT64, {4}, {10, 20, 30, 40});
  proto::TensorProto content;
  full.AsProtoTensorContent(&content);
  ASSERT_TRUE(TensorProtoPrefix(content, 3, &shape, &head).ok());
  EXPECT_EQ(ToVector<int64_t>(head), (std::vector<int64_t>{10, 20, 30}));

  // complex64: two values an element; the prefix is what FromProto makes.
  proto::TensorProto c;
  c.set_dtype(proto::DT_COMPLEX64);
  c.mutable_tensor_shape()->add_dim()->set_size(1000);
  for (float v : {1.f, 2.f, 3.f, 4.f}) c.add_scomplex_val(v);
  ASSERT_TRUE(TensorProtoPrefix(c, 3, &shape, &head).ok());
  ASSERT_EQ(head.NumElements(), 3);
  Tensor whole;
  ASSERT_TRUE(Tensor::FromProto(c, &whole).ok());
  const float* z = reinterpret_cast<const float*>(head.raw_data());
  const float* w = reinterpret_cast<const float*>(whole.raw_data());
  EXPECT_EQ(std::vector<float>(z, z + 6), std::vector<float>(w, w + 6));
  EXPECT_EQ(std::vector<float>(z, z + 4), (std::vector<float>{1, 2, 3, 4}));

  // Strings: the last value repeats.
  proto::TensorProto s;
  s.set_dtype(proto::DT_STRING);
  s.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  s.add_string_val("a");
  s.add_string_val("bc");
  ASSERT_TRUE(TensorProtoPrefix(s, 3, &shape, &head).ok());
  EXPECT_EQ(head.string_at(0), "a");
  EXPECT_EQ(head.string_at(1), "bc");
  EXPECT_EQ(head.string_at(2), "bc");

  // An invalid proto fails as FromProto does.
  p.add_int_val(1);
  p.add_int_val(2);
  p.add_int_val(3);
  p.add_int_val(4);
  const Status st = TensorProtoPrefix(p, 3, &shape, &head);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
  EXPECT_EQ(st.message(), Tensor::FromProto(p, &full).message());
}

}  // namespace
}  // namespace graphrt
