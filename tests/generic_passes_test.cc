// The core's generic graph passes (kernel_core/src/generic_passes.h):
// constant folding, common-subexpression elimination and Identity removal,
// switched by ConfigProto.graph_options as TensorFlow 1 switches them.
// Each rewrite is shown on the step graph a session runs (its partition
// graphs, RunMetadata), and results are checked through a Session with the
// passes on and off against hand-computed answers.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "op_test_util.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::ConstFloat;
using testing::ConstInt32;
using testing::ConstNode;
using testing::Feeds;
using testing::MakeTensor;
using testing::NodeText;
using testing::PlaceholderNode;
using testing::ToVector;
using testing::TypeAttr;

using Configure = std::function<void(proto::GraphOptions*)>;

void L0(proto::GraphOptions* o) { o->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0); }
void L1(proto::GraphOptions*) {}

std::string Float(const std::string& name, const std::string& op, const std::vector<std::string>& inputs) {
  return NodeText(name, op, inputs, TypeAttr("T", "DT_FLOAT"));
}
std::string Int(const std::string& name, const std::string& op, const std::vector<std::string>& inputs) {
  return NodeText(name, op, inputs, TypeAttr("T", "DT_INT32"));
}
// A float scalar Const, with control inputs.
std::string Scalar(const std::string& name, float v, const std::vector<std::string>& control = {}) {
  return NodeText(name, "Const", control,
                  TypeAttr("dtype", "DT_FLOAT") + "attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
                                                  "tensor_shape {} float_val: " + testing::FloatText(v) + " } } } ");
}
std::string IntScalar(const std::string& name, int v, const std::vector<std::string>& control = {}) {
  return NodeText(name, "Const", control,
                  TypeAttr("dtype", "DT_INT32") + "attr { key: \"value\" value { tensor { dtype: DT_INT32 "
                                                  "tensor_shape {} int_val: " + std::to_string(v) + " } } } ");
}

Tensor Floats(const std::vector<float>& v) {
  return MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(v.size())}, v);
}

Feeds ScalarX() { return {{"x", MakeTensor<float>(GR_FLOAT, {}, {3})}}; }

std::unique_ptr<Session> Open(const std::string& pbtxt, const Configure& configure, int cpus = 1) {
  testing::LoadStandardPlugins();
  SessionOptions o = testing::OpTestOptions();
  configure(o.config.mutable_graph_options());
  (*o.config.mutable_device_count())["CPU"] = cpus;
  std::unique_ptr<Session> s;
  Status st = NewSession(o, &s);
  EXPECT_TRUE(st.ok()) << st;
  if (st.ok()) st = s->Create(testing::ParseGraph(pbtxt));
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? std::move(s) : nullptr;
}

// The step graph a session with `configure`d GraphOptions (and `cpus` CPU
// devices) runs for these feeds, fetches and targets, after the graph
// passes: the nodes of the partition graphs of a Run (RunMetadata), after
// the `first` targets ran once. Fails the test if the Run fails.
proto::GraphDef StepGraph(const std::string& pbtxt, const Feeds& feeds, const std::vector<std::string>& fetches,
                          const Configure& configure = L1, const std::vector<std::string>& targets = {}, int cpus = 1,
                          const std::vector<std::string>& first = {}) {
  proto::GraphDef out;
  std::unique_ptr<Session> s = Open(pbtxt, configure, cpus);
  if (!s) return out;
  std::vector<Tensor> values;
  if (!first.empty()) {
    EXPECT_TRUE(s->Run({}, {}, first, &values).ok());
  }
  proto::RunOptions ro;
  ro.set_output_partition_graphs(true);
  proto::RunMetadata md;
  Status st = s->Run(ro, feeds, fetches, targets, &values, &md);
  EXPECT_TRUE(st.ok()) << st;
  for (const proto::GraphDef& p : md.partition_graphs())
    for (const proto::NodeDef& n : p.node()) *out.add_node() = n;
  return out;
}

const proto::NodeDef* Find(const proto::GraphDef& g, const std::string& name) {
  for (const proto::NodeDef& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

// The op of node `name`, or "(absent)".
std::string OpOf(const proto::GraphDef& g, const std::string& name) {
  const proto::NodeDef* n = Find(g, name);
  return n != nullptr ? n->op() : "(absent)";
}

int CountOp(const proto::GraphDef& g, const std::string& op) {
  int k = 0;
  for (const proto::NodeDef& n : g.node()) k += n.op() == op;
  return k;
}

std::vector<std::string> InputsOf(const proto::GraphDef& g, const std::string& name) {
  const proto::NodeDef* n = Find(g, name);
  EXPECT_NE(n, nullptr) << name << " is not in the step graph";
  return n != nullptr ? std::vector<std::string>(n->input().begin(), n->input().end()) : std::vector<std::string>();
}

// The value of the Const `name` of a step graph.
std::vector<float> ConstValue(const proto::GraphDef& g, const std::string& name) {
  const proto::NodeDef* n = Find(g, name);
  if (n == nullptr || n->op() != "Const") {
    ADD_FAILURE() << name << " is not a Const of the step graph";
    return {};
  }
  Tensor t;
  Status s = Tensor::FromProto(n->attr().at("value").tensor(), &t);
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? ToVector<float>(t) : std::vector<float>();
}

// Runs one fetch in a fresh session; fails the test on error.
std::vector<float> RunOnce(const std::string& pbtxt, const Configure& configure, const Feeds& feeds,
                       const std::string& fetch, int cpus = 1) {
  std::unique_ptr<Session> s = Open(pbtxt, configure, cpus);
  std::vector<Tensor> out;
  Status st = s ? s->Run(feeds, {fetch}, {}, &out) : errors::Internal("no session");
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? ToVector<float>(out[0]) : std::vector<float>();
}

// ------------------------------------------------------------ constant folding

// sum = a + b = [4, 6]; sq = sum * sum = [16, 36]; y = x * sq.
const std::string kConstChain = ConstFloat("a", {2}, {1, 2}) + ConstFloat("b", {2}, {3, 4}) +
                                Float("sum", "Add", {"a", "b"}) + Float("sq", "Mul", {"sum", "sum"}) +
                                PlaceholderNode("x", "DT_FLOAT") + Float("y", "Mul", {"x", "sq"});

TEST(ConstantFoldingTest, ConstantSubgraphBecomesOneConstNamedAfterItsLastNode) {
  const proto::GraphDef g = StepGraph(kConstChain, {{"x", Floats({1, -1})}}, {"y"});
  EXPECT_EQ(CountOp(g, "Add"), 0);
  EXPECT_EQ(Find(g, "sum"), nullptr);
  EXPECT_EQ(Find(g, "a"), nullptr);
  EXPECT_EQ(ConstValue(g, "sq"), (std::vector<float>{16, 36}));
  EXPECT_EQ(InputsOf(g, "y"), (std::vector<std::string>{"_arg_x_0", "sq"}));
  ASSERT_NE(Find(g, "sq"), nullptr);
  EXPECT_EQ(Find(g, "sq")->device(), "/job:localhost/replica:0/task:0/device:CPU:0");

  const proto::GraphDef off = StepGraph(kConstChain, {{"x", Floats({1, -1})}}, {"y"}, L0);
  EXPECT_EQ(CountOp(off, "Add"), 1);
  EXPECT_EQ(OpOf(off, "sq"), "Mul");

  for (const Configure& c : {Configure(L1), Configure(L0)})
    EXPECT_EQ(RunOnce(kConstChain, c, {{"x", Floats({1, -1})}}, "y"), (std::vector<float>{16, -36}));
}

TEST(ConstantFoldingTest, FetchedNodeKeepsItsNameAndValue) {
  const proto::GraphDef g = StepGraph(kConstChain, {}, {"sq", "sum"});
  EXPECT_EQ(ConstValue(g, "sq"), (std::vector<float>{16, 36}));
  EXPECT_EQ(ConstValue(g, "sum"), (std::vector<float>{4, 6}));
  for (const Configure& c : {Configure(L1), Configure(L0)}) {
    EXPECT_EQ(RunOnce(kConstChain, c, {}, "sq"), (std::vector<float>{16, 36}));
    EXPECT_EQ(RunOnce(kConstChain, c, {}, "sum"), (std::vector<float>{4, 6}));
  }
}

TEST(ConstantFoldingTest, AFedNodeIsNotFolded) {
  // x is a Placeholder; sq is constant but fed: the fed value wins.
  EXPECT_EQ(CountOp(StepGraph(kConstChain, {{"x", Floats({1, -1})}}, {"y"}), "Placeholder"), 0);
  const proto::GraphDef g = StepGraph(kConstChain, {{"x", Floats({2, 3})}, {"sq", Floats({1, 10})}}, {"y"});
  EXPECT_EQ(InputsOf(g, "y"), (std::vector<std::string>{"_arg_x_0", "_arg_sq_0"}));
  EXPECT_EQ(Find(g, "sum"), nullptr);  // pruned: nothing reads it any more
  EXPECT_EQ(RunOnce(kConstChain, L1, {{"x", Floats({2, 3})}, {"sq", Floats({1, 10})}}, "y"),
            (std::vector<float>{2, 30}));
  // Placeholder + Const: nothing to fold.
  const std::string add = PlaceholderNode("p", "DT_FLOAT") + ConstFloat("c", {2}, {1, 1}) +
                          Float("z", "Add", {"p", "c"});
  EXPECT_EQ(OpOf(StepGraph(add, {{"p", Floats({2, 3})}}, {"z"}), "z"), "Add");
  EXPECT_EQ(RunOnce(add, L1, {{"p", Floats({2, 3})}}, "z"), (std::vector<float>{3, 4}));
}

TEST(ConstantFoldingTest, TheFoldedConstWaitsForTheControlInputsOfItsSubgraph) {
  const std::string pbtxt = PlaceholderNode("x", "DT_FLOAT") + Float("gate", "Neg", {"x"}) +
                            NodeText("a", "Const", {"^gate"},
                                     TypeAttr("dtype", "DT_FLOAT") +
                                         "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim "
                                         "{ size: 2 } } float_val: 1 float_val: 2 } } } ") +
                            ConstFloat("b", {2}, {3, 4}) + Float("sum", "Add", {"a", "b"}) +
                            Float("y", "Mul", {"x", "sum"});
  // gate is fetched too (else, read only through a control edge, the
  // removal of control-only nodes drops it).
  const proto::GraphDef g = StepGraph(pbtxt, {{"x", Floats({1, 2})}}, {"y", "gate"});
  EXPECT_EQ(ConstValue(g, "sum"), (std::vector<float>{4, 6}));
  EXPECT_EQ(InputsOf(g, "sum"), (std::vector<std::string>{"^gate"}));
  EXPECT_EQ(RunOnce(pbtxt, L1, {{"x", Floats({1, 2})}}, "y"), (std::vector<float>{4, 12}));
}

// cond(pred, 1 + 2, 10 + 20) in TF1's form: each branch's constants wait
// for the branch's pivot, so its folded value is dead when the branch is
// not taken (else the Merge would see two live inputs).
const std::string kCond =
    PlaceholderNode("pred", "DT_BOOL") + NodeText("sw", "Switch", {"pred", "pred"}, TypeAttr("T", "DT_BOOL")) +
    NodeText("switch_f", "Identity", {"sw:0"}, TypeAttr("T", "DT_BOOL")) +
    NodeText("switch_t", "Identity", {"sw:1"}, TypeAttr("T", "DT_BOOL")) + Scalar("t1", 1, {"^switch_t"}) +
    Scalar("t2", 2, {"^switch_t"}) + Float("t", "Add", {"t1", "t2"}) + Scalar("f1", 10, {"^switch_f"}) +
    Scalar("f2", 20, {"^switch_f"}) + Float("f", "Add", {"f1", "f2"}) +
    NodeText("merge", "Merge", {"f", "t"}, TypeAttr("T", "DT_FLOAT") + "attr { key: \"N\" value { i: 2 } } ");

TEST(ConstantFoldingTest, ConstantsInACondBranchStayInTheirBranch) {
  const proto::GraphDef g = StepGraph(kCond, {{"pred", MakeTensor<bool>(GR_BOOL, {}, {true})}}, {"merge"});
  EXPECT_EQ(ConstValue(g, "t"), (std::vector<float>{3}));
  EXPECT_EQ(InputsOf(g, "t"), (std::vector<std::string>{"^switch_t"}));
  EXPECT_EQ(ConstValue(g, "f"), (std::vector<float>{30}));
  EXPECT_EQ(InputsOf(g, "f"), (std::vector<std::string>{"^switch_f"}));
  // The pivots are Switch-fed Identities: kept.
  EXPECT_EQ(OpOf(g, "switch_t"), "Identity");
  EXPECT_EQ(OpOf(g, "switch_f"), "Identity");
  for (const Configure& c : {Configure(L1), Configure(L0)}) {
    std::unique_ptr<Session> s = Open(kCond, c);
    ASSERT_TRUE(s);
    for (bool pred : {true, false}) {
      std::vector<Tensor> out;
      ASSERT_TRUE(s->Run({{"pred", MakeTensor<bool>(GR_BOOL, {}, {pred})}}, {"merge"}, {}, &out).ok());
      EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{pred ? 3.0f : 30.0f}));
    }
  }
}

TEST(ConstantFoldingTest, StatefulRandomOpsAreNeitherFoldedNorMerged) {
  const std::string pbtxt =
      ConstInt32("shape", {4}) + Scalar("two", 2) +
      NodeText("r1", "RandomUniform", {"shape"}, TypeAttr("dtype", "DT_FLOAT") + TypeAttr("T", "DT_INT32")) +
      NodeText("r2", "RandomUniform", {"shape"}, TypeAttr("dtype", "DT_FLOAT") + TypeAttr("T", "DT_INT32")) +
      Float("y1", "Mul", {"r1", "two"}) + Float("y2", "Mul", {"r2", "two"}) + Float("d", "Sub", {"y1", "y2"});
  const proto::GraphDef g = StepGraph(pbtxt, {}, {"d"});
  EXPECT_EQ(CountOp(g, "RandomUniform"), 2);
  EXPECT_EQ(CountOp(g, "Mul"), 2);
  std::unique_ptr<Session> s = Open(pbtxt, L1);
  ASSERT_TRUE(s);
  std::vector<Tensor> a, b;
  ASSERT_TRUE(s->Run({}, {"y1", "y2"}, {}, &a).ok());
  ASSERT_TRUE(s->Run({}, {"y1"}, {}, &b).ok());
  EXPECT_NE(ToVector<float>(a[0]), ToVector<float>(a[1]));  // two generators
  EXPECT_NE(ToVector<float>(a[0]), ToVector<float>(b[0]));  // new numbers each step
  for (float v : ToVector<float>(a[0])) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 2.0f);
  }
}

// x * fill([1000], 0.5): the fill's value is 4000 bytes.
const std::string kBigFill = ConstInt32("dims", {1000}) + Scalar("half", 0.5f) +
                             NodeText("fill", "Fill", {"dims", "half"},
                                      TypeAttr("T", "DT_FLOAT") + TypeAttr("index_type", "DT_INT32")) +
                             PlaceholderNode("x", "DT_FLOAT") + Float("y", "Mul", {"x", "fill"});

TEST(ConstantFoldingTest, AValueOverTheCapIsNotFolded) {
  auto cap = [](int64_t bytes) {
    return [bytes](proto::GraphOptions* o) { o->mutable_optimizer_options()->set_max_folded_constant_in_bytes(bytes); };
  };
  EXPECT_EQ(OpOf(StepGraph(kBigFill, ScalarX(), {"y"}, cap(3999)), "fill"), "Fill");
  EXPECT_EQ(OpOf(StepGraph(kBigFill, ScalarX(), {"y"}, cap(4000)), "fill"), "Const");
  EXPECT_EQ(OpOf(StepGraph(kBigFill, ScalarX(), {"y"}), "fill"), "Const");  // 0: TF's 10 MiB
  for (int64_t bytes : {3999, 4000}) {
    const std::vector<float> y = RunOnce(kBigFill, cap(bytes), {{"x", MakeTensor<float>(GR_FLOAT, {}, {3})}}, "y");
    ASSERT_EQ(y.size(), 1000u);
    EXPECT_EQ(y[0], 1.5f);
    EXPECT_EQ(y[999], 1.5f);
  }
}

TEST(ConstantFoldingTest, ASubgraphThatNeedsMoreThanFourTimesTheCapIsNotFolded) {
  // s = sum(fill([1000], 0.5)): a 4-byte result of a 4000-byte intermediate.
  const std::string pbtxt = ConstInt32("dims", {1000}) + Scalar("half", 0.5f) +
                            NodeText("fill", "Fill", {"dims", "half"},
                                     TypeAttr("T", "DT_FLOAT") + TypeAttr("index_type", "DT_INT32")) +
                            ConstInt32("axis", {0}) +
                            NodeText("s", "Sum", {"fill", "axis"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tidx", "DT_INT32")) +
                            PlaceholderNode("x", "DT_FLOAT") + Float("y", "Mul", {"x", "s"});
  auto cap = [](int64_t bytes) {
    return [bytes](proto::GraphOptions* o) { o->mutable_optimizer_options()->set_max_folded_constant_in_bytes(bytes); };
  };
  EXPECT_EQ(OpOf(StepGraph(pbtxt, ScalarX(), {"y"}, cap(100)), "s"), "Sum");
  EXPECT_EQ(ConstValue(StepGraph(pbtxt, ScalarX(), {"y"}, cap(2000)), "s"), (std::vector<float>{500}));
  for (int64_t bytes : {100, 2000})
    EXPECT_EQ(RunOnce(pbtxt, cap(bytes), {{"x", MakeTensor<float>(GR_FLOAT, {}, {2})}}, "y"),
              (std::vector<float>{1000}));
}

TEST(ConstantFoldingTest, AsynchronousKernelsAreNotFolded) {
  // An asynchronous kernel may wait for what only a step provides.
  testing::LoadStandardPlugins();
  static const Status loaded =
      Runtime::Global().LoadPlugin(std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_async.so");
  ASSERT_TRUE(loaded.ok()) << loaded;
  const std::string pbtxt = ConstInt32("c", {1, 2}) +
                            NodeText("d", "TestAsyncDelay", {"c"},
                                     TypeAttr("T", "DT_INT32") + "attr { key: \"delay_ms\" value { i: 0 } } ") +
                            Int("n", "Neg", {"d"});
  const proto::GraphDef g = StepGraph(pbtxt, {}, {"n"});
  EXPECT_EQ(OpOf(g, "d"), "TestAsyncDelay");
  EXPECT_EQ(OpOf(g, "n"), "Neg");
  std::unique_ptr<Session> s = Open(pbtxt, L1);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"n"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{-1, -2}));
}

// i = 0; while i < 12: i += 2 + 3. The loop body's 2 + 3 runs in the loop's
// frame and is not folded; start = 7 - 7, outside, is.
const std::string kLoop =
    IntScalar("seven", 7) + IntScalar("seven_b", 7) + Int("start", "Sub", {"seven", "seven_b"}) +
    IntScalar("twelve", 12) +
    NodeText("w/Enter_i", "Enter", {"start"},
             TypeAttr("T", "DT_INT32") + "attr { key: \"frame_name\" value { s: \"w/ctx\" } } ") +
    NodeText("w/limit", "Enter", {"twelve"},
             TypeAttr("T", "DT_INT32") +
                 "attr { key: \"frame_name\" value { s: \"w/ctx\" } } attr { key: \"is_constant\" value { b: true } } ") +
    NodeText("w/Merge_i", "Merge", {"w/Enter_i", "w/Next_i"},
             TypeAttr("T", "DT_INT32") + "attr { key: \"N\" value { i: 2 } } ") +
    Int("w/Less", "Less", {"w/Merge_i", "w/limit"}) + NodeText("w/LoopCond", "LoopCond", {"w/Less"}, "") +
    Int("w/Switch_i", "Switch", {"w/Merge_i", "w/LoopCond"}) + Int("w/Ident_i", "Identity", {"w/Switch_i:1"}) +
    IntScalar("w/two", 2, {"^w/Ident_i"}) + IntScalar("w/three", 3, {"^w/Ident_i"}) +
    Int("w/five", "Add", {"w/two", "w/three"}) + Int("w/Add_i", "Add", {"w/Ident_i", "w/five"}) +
    Int("w/Next_i", "NextIteration", {"w/Add_i"}) + Int("w/Exit_i", "Exit", {"w/Switch_i"});

TEST(ConstantFoldingTest, NothingInsideAWhileLoopIsFoldedOrRemoved) {
  const proto::GraphDef g = StepGraph(kLoop, {}, {"w/Exit_i"});
  EXPECT_EQ(OpOf(g, "w/five"), "Add");
  EXPECT_EQ(OpOf(g, "w/Ident_i"), "Identity");
  EXPECT_EQ(OpOf(g, "start"), "Const");
  for (const Configure& c : {Configure(L1), Configure(L0)}) {
    std::unique_ptr<Session> s = Open(kLoop, c);
    ASSERT_TRUE(s);
    std::vector<Tensor> out;
    Status st = s->Run({}, {"w/Exit_i"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{15}));
  }
}

TEST(ConstantFoldingTest, AKernelErrorLeavesTheGraphUnfoldedAndSurfacesAtRun) {
  // An integer division by zero: only the kernel knows (shapes are fine).
  const std::string pbtxt = ConstInt32("num", {4}) + ConstInt32("zero", {0}) + Int("bad", "FloorDiv", {"num", "zero"}) +
                            NodeText("badf", "Cast", {"bad"},
                                     TypeAttr("SrcT", "DT_INT32") + TypeAttr("DstT", "DT_FLOAT")) +
                            PlaceholderNode("x", "DT_FLOAT") + Float("y", "Mul", {"x", "badf"}) +
                            ConstFloat("ok", {1}, {2}) + Float("ok2", "Neg", {"ok"}) + Float("z", "Mul", {"x", "ok2"});
  for (const Configure& c : {Configure(L1), Configure(L0)}) {
    std::unique_ptr<Session> s = Open(pbtxt, c);
    ASSERT_TRUE(s);
    std::vector<Tensor> out;
    Status st = s->Run({{"x", Floats({1})}}, {"y"}, {}, &out);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("'bad'"), std::string::npos) << st;
    // The session goes on working.
    st = s->Run({{"x", Floats({1, 3})}}, {"z"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{-2, -6}));
  }
}

TEST(ConstantFoldingTest, StringValuesFold) {
  const std::string pbtxt =
      ConstNode("h", "DT_STRING", {}, "string_val", {"\"ab\""}) +
      ConstNode("t", "DT_STRING", {}, "string_val", {"\"cd\""}) +
      NodeText("j", "StringJoin", {"h", "t"}, "attr { key: \"N\" value { i: 2 } } ") +
      PlaceholderNode("p", "DT_STRING") +
      NodeText("k", "StringJoin", {"j", "p"}, "attr { key: \"N\" value { i: 2 } } ");
  const proto::GraphDef g = StepGraph(pbtxt, {{"p", Tensor::StringScalar("!")}}, {"k"});
  ASSERT_EQ(OpOf(g, "j"), "Const");
  EXPECT_EQ(Find(g, "j")->attr().at("value").tensor().string_val(0), "abcd");
  for (const Configure& c : {Configure(L1), Configure(L0)}) {
    std::unique_ptr<Session> s = Open(pbtxt, c);
    ASSERT_TRUE(s);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"p", Tensor::StringScalar("!")}}, {"k"}, {}, &out).ok());
    EXPECT_EQ(out[0].string_at(0), "abcd!");
  }
}

// ------------------------------------------------------------ switches

TEST(GenericPassSwitchesTest, FollowTensorFlowsOptimizerOptions) {
  // y = (x + c1) * (x + c2) with c1 == c2; k = 2 + 3 read by y2.
  const std::string pbtxt = PlaceholderNode("x", "DT_FLOAT") + Scalar("c1", 1) + Scalar("c2", 1) +
                            Float("a1", "Add", {"x", "c1"}) + Float("a2", "Add", {"x", "c2"}) +
                            Float("y", "Mul", {"a1", "a2"}) + Scalar("two", 2) + Scalar("three", 3) +
                            Float("k", "Add", {"two", "three"}) + Float("y2", "Mul", {"y", "k"});
  struct Case {
    const char* what;
    Configure configure;
    bool folds, merges;
  };
  const Case cases[] = {
      {"L1 (default)", L1, true, true},
      {"L0", L0, false, false},
      {"L0 + do_constant_folding",
       [](proto::GraphOptions* o) {
         L0(o);
         o->mutable_optimizer_options()->set_do_constant_folding(true);
       },
       true, false},
      {"L0 + do_common_subexpression_elimination",
       [](proto::GraphOptions* o) {
         L0(o);
         o->mutable_optimizer_options()->set_do_common_subexpression_elimination(true);
       },
       false, true},
      // L1 overrides the flags (TF: to turn a pass off, use L0).
      {"L1 + do_* false",
       [](proto::GraphOptions* o) {
         o->mutable_optimizer_options()->set_do_constant_folding(false);
         o->mutable_optimizer_options()->set_do_common_subexpression_elimination(false);
       },
       true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const proto::GraphDef g = StepGraph(pbtxt, ScalarX(), {"y2"}, c.configure);
    EXPECT_EQ(OpOf(g, "k"), c.folds ? "Const" : "Add");
    EXPECT_EQ(CountOp(g, "Add"), (c.merges ? 1 : 2) + (c.folds ? 0 : 1));
    // (3 + 1)^2 * 5
    EXPECT_EQ(RunOnce(pbtxt, c.configure, {{"x", MakeTensor<float>(GR_FLOAT, {}, {3})}}, "y2"),
              (std::vector<float>{80}));
  }
}

// ------------------------------------------------------------ CSE

TEST(CseTest, EqualNodesMergeAlongAChain) {
  // c1 == c2, so a1 == a2, so n1 == n2: y = n * n = (x + 1)^2.
  const std::string pbtxt = PlaceholderNode("x", "DT_FLOAT") + Scalar("c1", 1) + Scalar("c2", 1) +
                            Float("a1", "Add", {"x", "c1"}) + Float("a2", "Add", {"x", "c2"}) +
                            Float("n1", "Neg", {"a1"}) + Float("n2", "Neg", {"a2"}) + Float("y", "Mul", {"n1", "n2"});
  const proto::GraphDef g = StepGraph(pbtxt, {{"x", Floats({1, -3})}}, {"y"});
  EXPECT_EQ(CountOp(g, "Const"), 1);
  EXPECT_EQ(CountOp(g, "Add"), 1);
  EXPECT_EQ(CountOp(g, "Neg"), 1);
  EXPECT_EQ(InputsOf(g, "y"), (std::vector<std::string>{"n1", "n1"}));
  for (const Configure& c : {Configure(L1), Configure(L0)})
    EXPECT_EQ(RunOnce(pbtxt, c, {{"x", Floats({1, -3})}}, "y"), (std::vector<float>{4, 4}));
}

TEST(CseTest, NodesThatDifferAreKept) {
  // Different values, inputs, input order, attrs, control inputs or
  // devices: nothing merges. One of two equal nodes that is fetched stays.
  const std::string dev0 = "device: \"/device:CPU:0\" ";
  const std::string dev1 = "device: \"/device:CPU:1\" ";
  const std::string pbtxt =
      PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("z", "DT_FLOAT") + Scalar("c1", 1) + Scalar("c3", 3) +
      Float("a1", "Add", {"x", "c1"}) + Float("a3", "Add", {"x", "c3"}) + Float("s1", "Sub", {"x", "z"}) +
      Float("s2", "Sub", {"z", "x"}) + Float("g1", "Neg", {"x", "^s1"}) + Float("g2", "Neg", {"x", "^s2"}) +
      NodeText("d0", "Neg", {"z"}, TypeAttr("T", "DT_FLOAT") + dev0) +
      NodeText("d1", "Neg", {"z"}, TypeAttr("T", "DT_FLOAT") + dev1) +
      NodeText("m0", "Sum", {"x", "axis"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tidx", "DT_INT32")) +
      NodeText("m1", "Sum", {"x", "axis"},
               TypeAttr("T", "DT_FLOAT") + TypeAttr("Tidx", "DT_INT32") +
                   "attr { key: \"keep_dims\" value { b: true } } ") +
      ConstInt32("axis", {0}) + Float("mm", "Add", {"m0", "m1"}) + Float("f1", "Square", {"z"}) +
      Float("f2", "Square", {"z"}) +
      NodeText("out", "AddN", {"a1", "a3", "s1", "s2", "g1", "g2", "d0", "d1", "mm", "f2"},
               TypeAttr("T", "DT_FLOAT") + "attr { key: \"N\" value { i: 10 } } ");
  const std::vector<std::string> fetches = {"out", "f1"};
  const proto::GraphDef g = StepGraph(pbtxt, {{"x", Floats({2})}, {"z", Floats({5})}}, fetches, L1, {}, 2);
  for (const char* n : {"a1", "a3", "s1", "s2", "g1", "g2", "d0", "d1", "m0", "m1"})
    EXPECT_NE(Find(g, n), nullptr) << n;
  // f2 merges into f1 (f1 is fetched and stays; f2 is not).
  EXPECT_EQ(Find(g, "f2"), nullptr);
  EXPECT_NE(Find(g, "f1"), nullptr);
  EXPECT_EQ(InputsOf(g, "out").back(), "f1");
  // x = [2], z = [5]: 3 + 5 - 3 + 3 - 2 - 2 - 5 - 5 + (2 + 2) + 25 = 23
  for (const Configure& c : {Configure(L1), Configure(L0)})
    EXPECT_EQ(RunOnce(pbtxt, c, {{"x", Floats({2})}, {"z", Floats({5})}}, "out", 2), (std::vector<float>{23}));
}

// ------------------------------------------------------------ Identity removal

TEST(IdentityRemovalTest, ReadersReadTheInputAndWaitForTheControlInputs) {
  const std::string pbtxt = PlaceholderNode("x", "DT_FLOAT") + Float("n", "Neg", {"x"}) +
                            Float("gate", "Square", {"x"}) + Float("i", "Identity", {"n", "^gate"}) +
                            Float("y", "Mul", {"i", "x"});
  const proto::GraphDef g = StepGraph(pbtxt, {{"x", Floats({2, -1})}}, {"y", "gate"});
  EXPECT_EQ(Find(g, "i"), nullptr);
  EXPECT_EQ(InputsOf(g, "y"), (std::vector<std::string>{"n", "_arg_x_0", "^gate"}));
  const auto no_dependency_optimization = [](proto::GraphOptions* o) {
    o->mutable_rewrite_options()->set_dependency_optimization(proto::RewriterConfig::OFF);
  };
  for (const Configure& c : {Configure(L0), Configure(no_dependency_optimization)})
    EXPECT_EQ(OpOf(StepGraph(pbtxt, {{"x", Floats({2, -1})}}, {"y"}, c), "i"), "Identity");
  for (const Configure& c : {Configure(L1), Configure(L0)})
    EXPECT_EQ(RunOnce(pbtxt, c, {{"x", Floats({2, -1})}}, "y"), (std::vector<float>{-4, -1}));
}

TEST(IdentityRemovalTest, ABranchIdentityThatWaitsForThePivotStays) {
  // merge = pred ? t : f with t = Identity(x, ^switch_t): x is live either
  // way, t is dead when the branch is not taken, and a Merge takes its
  // first live input.
  const std::string pbtxt =
      PlaceholderNode("pred", "DT_BOOL") + PlaceholderNode("x", "DT_FLOAT") +
      NodeText("sw", "Switch", {"pred", "pred"}, TypeAttr("T", "DT_BOOL")) +
      NodeText("switch_f", "Identity", {"sw:0"}, TypeAttr("T", "DT_BOOL")) +
      NodeText("switch_t", "Identity", {"sw:1"}, TypeAttr("T", "DT_BOOL")) + Float("t", "Identity", {"x", "^switch_t"}) +
      Float("f", "Neg", {"x", "^switch_f"}) +
      NodeText("merge", "Merge", {"t", "f"}, TypeAttr("T", "DT_FLOAT") + "attr { key: \"N\" value { i: 2 } } ");
  const Feeds feeds = {{"pred", MakeTensor<bool>(GR_BOOL, {}, {false})}, {"x", Floats({7})}};
  EXPECT_EQ(OpOf(StepGraph(pbtxt, feeds, {"merge"}), "t"), "Identity");
  std::unique_ptr<Session> s = Open(pbtxt, L1);
  ASSERT_TRUE(s);
  for (bool pred : {true, false}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"pred", MakeTensor<bool>(GR_BOOL, {}, {pred})}, {"x", Floats({7})}}, {"merge"}, {}, &out).ok());
    EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{pred ? 7.0f : -7.0f}));
  }
}

TEST(IdentityRemovalTest, FetchedTargetedAndRefIdentitiesStay) {
  const std::string pbtxt =
      PlaceholderNode("x", "DT_FLOAT") + Float("n", "Neg", {"x"}) + Float("i", "Identity", {"n"}) +
      Float("y", "Mul", {"i", "x"}) + Float("t", "Identity", {"n"}) + Float("u", "Square", {"t"}) +
      NodeText("v", "VariableV2", {},
               TypeAttr("dtype", "DT_FLOAT") + "attr { key: \"shape\" value { shape { dim { size: 2 } } } } ") +
      ConstFloat("init", {2}, {5, 7}) + Float("assign", "Assign", {"v", "init"}) + Float("read", "Identity", {"v"}) +
      Float("vy", "Mul", {"read", "x"});
  // Fetched.
  const proto::GraphDef fetched = StepGraph(pbtxt, {{"x", Floats({2, 3})}}, {"y", "i"});
  EXPECT_EQ(OpOf(fetched, "i"), "Identity");
  // A target.
  EXPECT_EQ(OpOf(StepGraph(pbtxt, {{"x", Floats({2, 3})}}, {"u"}, L1, {"t"}), "t"), "Identity");
  // The value of a ref variable when it runs.
  EXPECT_EQ(OpOf(StepGraph(pbtxt, {{"x", Floats({2, 3})}}, {"vy"}, L1, {}, 1, {"assign"}), "read"), "Identity");
  std::unique_ptr<Session> s = Open(pbtxt, L1);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {}, {"assign"}, &out).ok());
  ASSERT_TRUE(s->Run({{"x", Floats({2, 3})}}, {"vy", "y", "i"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{10, 21}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{-4, -9}));
  EXPECT_EQ(ToVector<float>(out[2]), (std::vector<float>{-2, -3}));
}

}  // namespace
}  // namespace graphrt
