// TensorFlow's functional control flow (If/StatelessIf, Case/StatelessCase,
// While/StatelessWhile, as tf.cond / tf.switch_case / tf.while_loop emit
// them under control flow v2) runs through its lowering to Switch/Merge/
// Enter/Exit at graph import: predicate truthiness, Case's default branch,
// loops with several loop variables, nested loops, conds in loop bodies,
// control edges into and out of the lowered construct, and the errors of
// malformed nodes. Answers are computed by hand (or by a plain C++ loop).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"
#include "op_test_util.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;

// ------------------------------------------------------------ text helpers

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// A function body's Const (scalar).
std::string BodyConst(const std::string& name, const std::string& dtype, const std::string& value_field,
                      const std::string& value) {
  return "node_def { name: " + Quote(name) + " op: \"Const\" attr { key: \"dtype\" value { type: " + dtype +
         " } } attr { key: \"value\" value { tensor { dtype: " + dtype + " tensor_shape {} " + value_field + ": " +
         value + " } } } }\n";
}
std::string FloatConst(const std::string& name, float v) {
  return BodyConst(name, "DT_FLOAT", "float_val", std::to_string(v));
}
std::string IntConst(const std::string& name, int v) {
  return BodyConst(name, "DT_INT32", "int_val", std::to_string(v));
}

// A function body's binary op on dtype `t`.
std::string Binary(const std::string& name, const std::string& op, const std::string& a, const std::string& b,
                   const std::string& t) {
  return "node_def { name: " + Quote(name) + " op: " + Quote(op) + " input: " + Quote(a) + " input: " + Quote(b) +
         " attr { key: \"T\" value { type: " + t + " } } }\n";
}

// signature args: {"name", "DT_..."}.
using Args = std::vector<std::pair<std::string, std::string>>;
// `control_outputs`: body nodes that are the function's control outputs.
std::string Function(const std::string& name, const Args& in, const Args& out, const std::string& body,
                     const std::vector<std::string>& rets, const std::vector<std::string>& control_outputs = {}) {
  std::string s = "function { signature { name: " + Quote(name);
  for (const auto& [n, t] : in) s += " input_arg { name: " + Quote(n) + " type: " + t + " }";
  for (const auto& [n, t] : out) s += " output_arg { name: " + Quote(n) + " type: " + t + " }";
  for (const std::string& c : control_outputs) s += " control_output: " + Quote(c);
  s += " }\n" + body;
  for (size_t i = 0; i < out.size(); ++i)
    s += "ret { key: " + Quote(out[i].first) + " value: " + Quote(rets[i]) + " }\n";
  for (const std::string& c : control_outputs) s += "control_ret { key: " + Quote(c) + " value: " + Quote(c) + " }\n";
  return s + "}\n";
}

std::string TypeList(const std::vector<std::string>& types) {
  std::string s = "list {";
  for (const std::string& t : types) s += " type: " + t;
  return s + " }";
}

std::string TypeListAttr(const std::string& key, const std::vector<std::string>& types) {
  return "attr { key: " + Quote(key) + " value { " + TypeList(types) + " } } ";
}

std::string FuncAttr(const std::string& key, const std::string& f) {
  return "attr { key: " + Quote(key) + " value { func { name: " + Quote(f) + " } } } ";
}

std::string Placeholder(const std::string& name, const std::string& type) {
  return testing::PlaceholderNode(name, type);
}

// A scalar Const of the graph.
std::string GraphConst(const std::string& name, const std::string& dtype, const std::string& field,
                       const std::string& value) {
  return testing::ConstNode(name, dtype, {}, field, {value});
}

std::string IfNode(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                   const std::string& tcond, const std::vector<std::string>& tin, const std::vector<std::string>& tout,
                   const std::string& then_f, const std::string& else_f) {
  return testing::NodeText(name, op, inputs,
                           testing::TypeAttr("Tcond", tcond) + TypeListAttr("Tin", tin) + TypeListAttr("Tout", tout) +
                               FuncAttr("then_branch", then_f) + FuncAttr("else_branch", else_f));
}

std::string CaseNode(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& tin, const std::vector<std::string>& tout,
                     const std::vector<std::string>& branches) {
  std::string funcs = "attr { key: \"branches\" value { list {";
  for (const std::string& b : branches) funcs += " func { name: " + Quote(b) + " }";
  return testing::NodeText(name, op, inputs, TypeListAttr("Tin", tin) + TypeListAttr("Tout", tout) + funcs + " } } } ");
}

std::string WhileAttrs(const std::vector<std::string>& types, const std::string& cond, const std::string& body) {
  return TypeListAttr("T", types) + FuncAttr("cond", cond) + FuncAttr("body", body);
}
std::string WhileNode(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& types, const std::string& cond, const std::string& body) {
  return testing::NodeText(name, op, inputs, WhileAttrs(types, cond, body));
}

// ------------------------------------------------------------ the library

const std::string& Library() {
  static const std::string kLib = [] {
    const Args x_f = {{"x", "DT_FLOAT"}}, y_f = {{"y", "DT_FLOAT"}};
    const Args sum_vars = {{"i", "DT_INT32"}, {"acc", "DT_INT32"}, {"n", "DT_INT32"}};
    std::string l = "library {\n";
    // Float branches, each with different ops.
    l += Function("AddOne", x_f, y_f, FloatConst("one", 1) + Binary("add", "Add", "x", "one:output:0", "DT_FLOAT"),
                  {"add:z:0"});
    l += Function("TimesTwo", x_f, y_f, FloatConst("two", 2) + Binary("mul", "Mul", "x", "two:output:0", "DT_FLOAT"),
                  {"mul:z:0"});
    l += Function("Square", x_f, y_f, Binary("sq", "Mul", "x", "x", "DT_FLOAT"), {"sq:z:0"});
    // A branch that calls another function.
    l += Function("AddOneViaCall", x_f, y_f,
                  "node_def { name: \"pc\" op: \"PartitionedCall\" input: \"x\""
                  " attr { key: \"f\" value { func { name: \"AddOne\" } } }"
                  " attr { key: \"Tin\" value { list { type: DT_FLOAT } } }"
                  " attr { key: \"Tout\" value { list { type: DT_FLOAT } } } }\n",
                  {"pc:output:0"});
    // Branches without inputs.
    l += Function("Ten", {}, y_f, FloatConst("c", 10), {"c:output:0"});
    l += Function("Twenty", {}, y_f, FloatConst("c", 20), {"c:output:0"});
    // Two outputs of two dtypes: (a + b, 1) and (a * b, 2).
    const Args ab = {{"a", "DT_FLOAT"}, {"b", "DT_FLOAT"}}, two_out = {{"v", "DT_FLOAT"}, {"tag", "DT_INT32"}};
    l += Function("SumTagged", ab, two_out, Binary("s", "Add", "a", "b", "DT_FLOAT") + IntConst("tag", 1),
                  {"s:z:0", "tag:output:0"});
    l += Function("ProductTagged", ab, two_out, Binary("p", "Mul", "a", "b", "DT_FLOAT") + IntConst("tag", 2),
                  {"p:z:0", "tag:output:0"});
    // sum of 1..n: (i, acc, n) -> (i + 1, acc + i, n) while i <= n.
    l +=
        Function("SumCond", sum_vars, {{"go", "DT_BOOL"}}, Binary("le", "LessEqual", "i", "n", "DT_INT32"), {"le:z:0"});
    l += Function("SumBody", sum_vars, {{"i2", "DT_INT32"}, {"acc2", "DT_INT32"}, {"n2", "DT_INT32"}},
                  IntConst("one", 1) + Binary("inc", "Add", "i", "one:output:0", "DT_INT32") +
                      Binary("acc_plus", "Add", "acc", "i", "DT_INT32"),
                  {"inc:z:0", "acc_plus:z:0", "n"});
    // factorial: (i: int32, f: float) -> (i - 1, f * i) while i (an int32: non-zero is true).
    const Args fact_vars = {{"i", "DT_INT32"}, {"f", "DT_FLOAT"}};
    l += Function("FactCond", fact_vars, {{"go", "DT_INT32"}}, "", {"i"});
    l +=
        Function("FactBody", fact_vars, {{"i2", "DT_INT32"}, {"f2", "DT_FLOAT"}},
                 IntConst("one", 1) + Binary("dec", "Sub", "i", "one:output:0", "DT_INT32") +
                     "node_def { name: \"fi\" op: \"Cast\" input: \"i\" attr { key: \"SrcT\" value { type: DT_INT32 } }"
                     " attr { key: \"DstT\" value { type: DT_FLOAT } } }\n" +
                     Binary("mul", "Mul", "f", "fi:y:0", "DT_FLOAT"),
                 {"dec:z:0", "mul:z:0"});
    // Nested loops: total += sum(1..i) for i in 1..n (an inner While in the body).
    const Args outer_vars = {{"i", "DT_INT32"}, {"n", "DT_INT32"}, {"total", "DT_INT32"}};
    l += Function("OuterCond", outer_vars, {{"go", "DT_BOOL"}}, Binary("le", "LessEqual", "i", "n", "DT_INT32"),
                  {"le:z:0"});
    l += Function("OuterBody", outer_vars, {{"i2", "DT_INT32"}, {"n2", "DT_INT32"}, {"total2", "DT_INT32"}},
                  IntConst("one", 1) + IntConst("zero", 0) +
                      "node_def { name: \"inner\" op: \"StatelessWhile\" input: \"one:output:0\""
                      " input: \"zero:output:0\" input: \"i\" " +
                      WhileAttrs({"DT_INT32", "DT_INT32", "DT_INT32"}, "SumCond", "SumBody") + " }\n" +
                      Binary("t", "Add", "total", "inner:output:1", "DT_INT32") +
                      Binary("inc", "Add", "i", "one:output:0", "DT_INT32"),
                  {"inc:z:0", "n", "t:z:0"});
    // Collatz: (x, steps) -> (x even ? x / 2 : 3x + 1, steps + 1) while x != 1 (an If in the body).
    const Args collatz_vars = {{"x", "DT_INT32"}, {"steps", "DT_INT32"}};
    l += Function("Half", {{"x", "DT_INT32"}}, {{"y", "DT_INT32"}},
                  IntConst("two", 2) + Binary("d", "FloorDiv", "x", "two:output:0", "DT_INT32"), {"d:z:0"});
    l += Function("TriplePlusOne", {{"x", "DT_INT32"}}, {{"y", "DT_INT32"}},
                  IntConst("three", 3) + IntConst("one", 1) + Binary("m", "Mul", "x", "three:output:0", "DT_INT32") +
                      Binary("a", "Add", "m:z:0", "one:output:0", "DT_INT32"),
                  {"a:z:0"});
    l += Function("CollatzCond", collatz_vars, {{"go", "DT_BOOL"}},
                  IntConst("one", 1) + Binary("ne", "NotEqual", "x", "one:output:0", "DT_INT32"), {"ne:z:0"});
    l += Function("CollatzBody", collatz_vars, {{"x2", "DT_INT32"}, {"steps2", "DT_INT32"}},
                  IntConst("one", 1) + IntConst("two", 2) + IntConst("zero", 0) +
                      Binary("rem", "FloorMod", "x", "two:output:0", "DT_INT32") +
                      Binary("even", "Equal", "rem:z:0", "zero:output:0", "DT_INT32") +
                      "node_def { name: \"step\" op: \"StatelessIf\" input: \"even:z:0\" input: \"x\""
                      " attr { key: \"Tcond\" value { type: DT_BOOL } }"
                      " attr { key: \"Tin\" value { list { type: DT_INT32 } } }"
                      " attr { key: \"Tout\" value { list { type: DT_INT32 } } }"
                      " attr { key: \"then_branch\" value { func { name: \"Half\" } } }"
                      " attr { key: \"else_branch\" value { func { name: \"TriplePlusOne\" } } } }\n" +
                      Binary("s", "Add", "steps", "one:output:0", "DT_INT32"),
                  {"step:output:0", "s:z:0"});
    // A loop inside a branch: sum of 1..n; the other branch: -n.
    l += Function("SumToN", {{"n", "DT_INT32"}}, {{"s", "DT_INT32"}},
                  IntConst("one", 1) + IntConst("zero", 0) +
                      "node_def { name: \"w\" op: \"While\" input: \"one:output:0\" input: \"zero:output:0\""
                      " input: \"n\" " +
                      WhileAttrs({"DT_INT32", "DT_INT32", "DT_INT32"}, "SumCond", "SumBody") + " }\n",
                  {"w:output:1"});
    l += Function("Negate", {{"n", "DT_INT32"}}, {{"m", "DT_INT32"}},
                  "node_def { name: \"neg\" op: \"Neg\" input: \"n\" attr { key: \"T\" value { type: DT_INT32 } } }\n",
                  {"neg:y:0"});
    // A polymorphic branch: x + x for x of type T.
    l += "function { signature { name: \"PolyDouble\" input_arg { name: \"x\" type_attr: \"T\" }"
         " output_arg { name: \"y\" type_attr: \"T\" } attr { name: \"T\" type: \"type\" } }\n"
         "node_def { name: \"sum\" op: \"Add\" input: \"x\" input: \"x\" attr { key: \"T\" value { placeholder: \"T\" "
         "} } }\n"
         "ret { key: \"y\" value: \"sum:z:0\" } }\n";
    // A loop body with a constant Case index and a constant If predicate
    // (constants inside a loop frame): acc -> 2 * acc + 1.
    l += Function("IntDouble", {{"x", "DT_INT32"}}, {{"y", "DT_INT32"}}, Binary("d", "Add", "x", "x", "DT_INT32"),
                  {"d:z:0"});
    l += Function(
        "ConstPredBody", sum_vars, {{"i2", "DT_INT32"}, {"acc2", "DT_INT32"}, {"n2", "DT_INT32"}},
        IntConst("one", 1) + BodyConst("yes", "DT_BOOL", "bool_val", "true") +
            Binary("inc", "Add", "i", "one:output:0", "DT_INT32") +
            "node_def { name: \"case\" op: \"Case\" input: \"one:output:0\" input: \"acc\" " +
            TypeListAttr("Tin", {"DT_INT32"}) + TypeListAttr("Tout", {"DT_INT32"}) +
            "attr { key: \"branches\" value { list { func { name: \"Negate\" } func { name: \"IntDouble\" } } } } }\n"
            "node_def { name: \"if\" op: \"StatelessIf\" input: \"yes:output:0\" input: \"case:output:0\" " +
            testing::TypeAttr("Tcond", "DT_BOOL") + TypeListAttr("Tin", {"DT_INT32"}) +
            TypeListAttr("Tout", {"DT_INT32"}) + FuncAttr("then_branch", "IntAddOne") +
            FuncAttr("else_branch", "Negate") + "}\n",
        {"inc:z:0", "if:output:0", "n"});
    // A loop that never ends: cond is always true.
    l += Function("AlwaysTrue", {{"i", "DT_INT32"}}, {{"go", "DT_BOOL"}}, BodyConst("t", "DT_BOOL", "bool_val", "true"),
                  {"t:output:0"});
    l += Function("IntAddOne", {{"i", "DT_INT32"}}, {{"j", "DT_INT32"}},
                  IntConst("one", 1) + Binary("a", "Add", "i", "one:output:0", "DT_INT32"), {"a:z:0"});
    l += Function("TwoOutputs", {{"i", "DT_INT32"}}, {{"a", "DT_BOOL"}, {"b", "DT_BOOL"}},
                  BodyConst("t", "DT_BOOL", "bool_val", "true"), {"t:output:0", "t:output:0"});
    // Side effects only: h += 1, and nothing.
    l += Function("Increment", {{"h", "DT_RESOURCE"}}, {},
                  FloatConst("one", 1) +
                      "node_def { name: \"assign\" op: \"AssignAddVariableOp\" input: \"h\" input: \"one:output:0\""
                      " attr { key: \"dtype\" value { type: DT_FLOAT } } }\n",
                  {}, {"assign"});
    l += Function("Nothing", {{"h", "DT_RESOURCE"}}, {}, "", {});
    return l + "}\n";
  }();
  return kLib;
}

std::unique_ptr<Session> Open(const std::string& nodes, int threads = 1) {
  return testing::CreateSession(testing::ParseGraph(nodes + Library()), threads);
}

Status CreateStatus(const std::string& graph_text) {
  testing::LoadStandardPlugins();
  std::unique_ptr<Session> s;
  Status st = NewSession(testing::OpTestOptions(), &s);
  if (!st.ok()) return st;
  return s->Create(testing::ParseGraph(graph_text));
}

Tensor F(float v) { return MakeTensor<float>(GR_FLOAT, {}, {v}); }
Tensor I(int32_t v) { return MakeTensor<int32_t>(GR_INT32, {}, {v}); }
Tensor B(bool v) { return MakeTensor<bool>(GR_BOOL, {}, {v}); }

float RunFloat(Session* s, const std::vector<std::pair<std::string, Tensor>>& feeds, const std::string& fetch) {
  std::vector<Tensor> out;
  Status st = s->Run(feeds, {fetch}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? out[0].scalar<float>() : -1e30f;
}

// ------------------------------------------------------------ If

const std::vector<std::string> kIfOps = {"If", "StatelessIf"};

TEST(FunctionalIf, ScalarPredicatesOfEveryKind) {
  // then: x + 1, else: x * 2; x = 5 -> 6 or 10.
  struct Case {
    std::string dtype;
    Tensor value;
    bool truth;
  };
  const Tensor empty_string = Tensor::StringScalar("");
  const Tensor a_string = Tensor::StringScalar("a");
  const std::vector<Case> cases = {
      {"DT_BOOL", B(true), true},    {"DT_BOOL", B(false), false},
      {"DT_FLOAT", F(0.5f), true},   {"DT_FLOAT", F(0.0f), false},
      {"DT_FLOAT", F(-0.0f), false}, {"DT_INT32", I(-3), true},
      {"DT_INT32", I(0), false},     {"DT_INT64", MakeTensor<int64_t>(GR_INT64, {}, {1LL << 40}), true},
      {"DT_STRING", a_string, true}, {"DT_STRING", empty_string, false},
  };
  for (const std::string& op : kIfOps) {
    for (const Case& c : cases) {
      auto s = Open(Placeholder("p", c.dtype) + Placeholder("x", "DT_FLOAT") +
                    IfNode("if", op, {"p", "x"}, c.dtype, {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOne", "TimesTwo"));
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(RunFloat(s.get(), {{"p", c.value}, {"x", F(5)}}, "if:0"), c.truth ? 6.0f : 10.0f)
          << op << " " << c.dtype << " expected " << c.truth;
    }
  }
}

TEST(FunctionalIf, NonScalarPredicateIsTrueIffItHasElements) {
  auto s = Open(Placeholder("p", "DT_FLOAT") + Placeholder("x", "DT_FLOAT") +
                IfNode("if", "If", {"p", "x"}, "DT_FLOAT", {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOne", "TimesTwo"));
  // One zero element: still true (it has elements); no elements: false.
  EXPECT_EQ(RunFloat(s.get(), {{"p", MakeTensor<float>(GR_FLOAT, {1}, {0.0f})}, {"x", F(5)}}, "if:0"), 6.0f);
  EXPECT_EQ(RunFloat(s.get(), {{"p", MakeTensor<float>(GR_FLOAT, {2, 2}, {0, 0, 0, 0})}, {"x", F(5)}}, "if:0"), 6.0f);
  EXPECT_EQ(RunFloat(s.get(), {{"p", MakeTensor<float>(GR_FLOAT, {0}, {})}, {"x", F(5)}}, "if:0"), 10.0f);
  EXPECT_EQ(RunFloat(s.get(), {{"p", MakeTensor<float>(GR_FLOAT, {3, 0}, {})}, {"x", F(5)}}, "if:0"), 10.0f);
  auto sb = Open(Placeholder("p", "DT_BOOL") + Placeholder("x", "DT_FLOAT") +
                 IfNode("if", "If", {"p", "x"}, "DT_BOOL", {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOne", "TimesTwo"));
  EXPECT_EQ(RunFloat(sb.get(), {{"p", MakeTensor<bool>(GR_BOOL, {2}, {false, false})}, {"x", F(5)}}, "if:0"), 6.0f);
}

TEST(FunctionalIf, BranchesWithoutInputsCallsInBranchesAndTwoOutputs) {
  auto s = Open(Placeholder("p", "DT_BOOL") + Placeholder("a", "DT_FLOAT") + Placeholder("b", "DT_FLOAT") +
                IfNode("consts", "StatelessIf", {"p"}, "DT_BOOL", {}, {"DT_FLOAT"}, "Ten", "Twenty") +
                IfNode("via_call", "If", {"p", "a"}, "DT_BOOL", {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOneViaCall", "Square") +
                IfNode("pair", "If", {"p", "a", "b"}, "DT_BOOL", {"DT_FLOAT", "DT_FLOAT"}, {"DT_FLOAT", "DT_INT32"},
                       "SumTagged", "ProductTagged") +
                // Consumers of the If's outputs read the lowered values.
                "node { name: \"use\" op: \"Mul\" input: \"pair\" input: \"consts:0\""
                " attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  for (bool p : {true, false}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"p", B(p)}, {"a", F(3)}, {"b", F(4)}}, {"consts:0", "via_call:0", "pair:0", "pair:1", "use:0"},
                       {}, &out)
                    .ok());
    EXPECT_EQ(out[0].scalar<float>(), p ? 10.0f : 20.0f);
    EXPECT_EQ(out[1].scalar<float>(), p ? 4.0f : 9.0f);
    EXPECT_EQ(out[2].scalar<float>(), p ? 7.0f : 12.0f);
    EXPECT_EQ(out[3].scalar<int32_t>(), p ? 1 : 2);
    EXPECT_EQ(out[4].scalar<float>(), p ? 70.0f : 240.0f);
  }
}

// The untaken branch's loop never starts (its Enters are dead); the taken
// one runs to the end. Nodes named "<if>/..." (TF 2 puts "cond/Identity"
// after a "cond" node) do not collide with the lowered ones.
TEST(FunctionalIf, LoopInABranchAndTF2NodeNames) {
  auto s =
      Open(Placeholder("p", "DT_BOOL") + Placeholder("n", "DT_INT32") +
               IfNode("cond", "StatelessIf", {"p", "n"}, "DT_BOOL", {"DT_INT32"}, {"DT_INT32"}, "SumToN", "Negate") +
               "node { name: \"cond/Identity\" op: \"Identity\" input: \"cond\""
               " attr { key: \"T\" value { type: DT_INT32 } } }\n",
           2);
  ASSERT_NE(s, nullptr);
  for (int rep = 0; rep < 10; ++rep) {
    const bool p = rep % 2 == 0;
    const int n = 3 + rep;
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"p", B(p)}, {"n", I(n)}}, {"cond/Identity:0"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), p ? n * (n + 1) / 2 : -n) << "rep " << rep;
  }
}

// A branch function's attrs travel with it (then_branch { name attr { T } }).
TEST(FunctionalIf, PolymorphicBranchTakesTheAttrsOfItsFunc) {
  auto s = Open(Placeholder("p", "DT_BOOL") + Placeholder("i", "DT_INT32") +
                "node { name: \"if\" op: \"If\" input: \"p\" input: \"i\""
                " attr { key: \"Tcond\" value { type: DT_BOOL } }"
                " attr { key: \"Tin\" value { list { type: DT_INT32 } } }"
                " attr { key: \"Tout\" value { list { type: DT_INT32 } } }"
                " attr { key: \"then_branch\" value { func { name: \"PolyDouble\""
                " attr { key: \"T\" value { type: DT_INT32 } } } } }"
                " attr { key: \"else_branch\" value { func { name: \"Negate\" } } } }\n");
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"p", B(true)}, {"i", I(21)}}, {"if:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
  ASSERT_TRUE(s->Run({{"p", B(false)}, {"i", I(21)}}, {"if:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), -21);
}

// A variable set to 10 before the If (a control input of the If), incremented
// by the then-branch (an If with no outputs), read after it (a control edge
// from the If): 11 when the predicate is true, 10 when false, every run.
TEST(FunctionalIf, ControlEdgesGateTheWholeIfAndFollowItsSideEffects) {
  const std::string graph =
      Placeholder("p", "DT_BOOL") +
      "node { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
      " attr { key: \"shape\" value { shape {} } } attr { key: \"shared_name\" value { s: \"v\" } } }\n" +
      GraphConst("ten", "DT_FLOAT", "float_val", "10") +
      "node { name: \"init\" op: \"AssignVariableOp\" input: \"v\" input: \"ten\""
      " attr { key: \"dtype\" value { type: DT_FLOAT } } }\n" +
      IfNode("if", "If", {"p", "v", "^init"}, "DT_BOOL", {"DT_RESOURCE"}, {}, "Increment", "Nothing") +
      "node { name: \"read\" op: \"ReadVariableOp\" input: \"v\" input: \"^if\""
      " attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
  for (int threads : {1, 4}) {
    auto s = Open(graph, threads);
    ASSERT_NE(s, nullptr);
    for (int rep = 0; rep < 20; ++rep) {
      const bool p = rep % 3 != 0;
      EXPECT_EQ(RunFloat(s.get(), {{"p", B(p)}}, "read:0"), p ? 11.0f : 10.0f) << "rep " << rep;
    }
  }
}

// ------------------------------------------------------------ Case

TEST(FunctionalCase, IndexPicksTheBranchAndAnyOtherIndexRunsTheLast) {
  for (const std::string op : {"Case", "StatelessCase"}) {
    auto s = Open(Placeholder("k", "DT_INT32") + Placeholder("x", "DT_FLOAT") +
                  CaseNode("case", op, {"k", "x"}, {"DT_FLOAT"}, {"DT_FLOAT"}, {"AddOne", "TimesTwo", "Square"}) +
                  CaseNode("one", op, {"k", "x"}, {"DT_FLOAT"}, {"DT_FLOAT"}, {"TimesTwo"}) +
                  CaseNode("no_inputs", op, {"k"}, {}, {"DT_FLOAT"}, {"Ten", "Twenty"}));
    ASSERT_NE(s, nullptr);
    // x = 3: branch 0 -> 4, branch 1 -> 6, branch 2 -> 9.
    const std::vector<std::pair<int, float>> expected = {{0, 4}, {1, 6}, {2, 9}, {3, 9}, {100, 9}, {-1, 9}, {-7, 9}};
    for (const auto& [k, want] : expected) {
      std::vector<Tensor> out;
      ASSERT_TRUE(s->Run({{"k", I(k)}, {"x", F(3)}}, {"case:0", "one:0", "no_inputs:0"}, {}, &out).ok());
      EXPECT_EQ(out[0].scalar<float>(), want) << op << " index " << k;
      EXPECT_EQ(out[1].scalar<float>(), 6.0f) << op << " index " << k;
      EXPECT_EQ(out[2].scalar<float>(), k == 0 ? 10.0f : 20.0f) << op << " index " << k;
    }
  }
}

// ------------------------------------------------------------ While

std::string SumLoop(const std::string& op) {
  return Placeholder("n", "DT_INT32") + GraphConst("one", "DT_INT32", "int_val", "1") +
         GraphConst("zero", "DT_INT32", "int_val", "0") +
         WhileNode("w", op, {"one", "zero", "n"}, {"DT_INT32", "DT_INT32", "DT_INT32"}, "SumCond", "SumBody");
}

TEST(FunctionalWhile, SumOfOneToNIncludingZeroIterations) {
  for (const std::string op : {"While", "StatelessWhile"}) {
    for (int threads : {1, 4}) {
      auto s = Open(SumLoop(op), threads);
      ASSERT_NE(s, nullptr);
      for (int n : {0, 1, 2, 10, 100}) {
        std::vector<Tensor> out;
        ASSERT_TRUE(s->Run({{"n", I(n)}}, {"w:0", "w:1", "w:2"}, {}, &out).ok());
        EXPECT_EQ(out[0].scalar<int32_t>(), n + 1) << op << " n=" << n;  // i after the loop
        EXPECT_EQ(out[1].scalar<int32_t>(), n * (n + 1) / 2) << op << " n=" << n;
        EXPECT_EQ(out[2].scalar<int32_t>(), n) << op << " n=" << n;
      }
      // Zero iterations: the loop vars come out as they went in.
      std::vector<Tensor> out;
      ASSERT_TRUE(s->Run({{"n", I(-5)}}, {"w:0", "w:1"}, {}, &out).ok());
      EXPECT_EQ(out[0].scalar<int32_t>(), 1);
      EXPECT_EQ(out[1].scalar<int32_t>(), 0);
    }
  }
}

TEST(FunctionalWhile, FactorialWithLoopVarsOfTwoDtypesAndAnIntCondition) {
  auto s = Open(Placeholder("n", "DT_INT32") + GraphConst("f0", "DT_FLOAT", "float_val", "1") +
                WhileNode("fact", "While", {"n", "f0"}, {"DT_INT32", "DT_FLOAT"}, "FactCond", "FactBody"));
  float want = 1;
  for (int n = 0; n <= 12; ++n) {
    if (n > 0) want *= static_cast<float>(n);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"n", I(n)}}, {"fact:0", "fact:1"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), 0);
    EXPECT_EQ(out[1].scalar<float>(), want) << "n=" << n;
  }
}

TEST(FunctionalWhile, NestedWhileInAWhileBody) {
  auto s = Open(Placeholder("n", "DT_INT32") + GraphConst("one", "DT_INT32", "int_val", "1") +
                    GraphConst("zero", "DT_INT32", "int_val", "0") +
                    WhileNode("outer", "StatelessWhile", {"one", "n", "zero"}, {"DT_INT32", "DT_INT32", "DT_INT32"},
                              "OuterCond", "OuterBody"),
                2);
  for (int n : {0, 1, 4, 9}) {
    int want = 0;
    for (int i = 1; i <= n; ++i) want += i * (i + 1) / 2;  // 1 + 3 + 6 + 10 = 20 for n = 4
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"n", I(n)}}, {"outer:2"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), want) << "n=" << n;
  }
}

TEST(FunctionalWhile, IfInAWhileBody) {
  auto s = Open(Placeholder("x", "DT_INT32") + GraphConst("zero", "DT_INT32", "int_val", "0") +
                WhileNode("collatz", "While", {"x", "zero"}, {"DT_INT32", "DT_INT32"}, "CollatzCond", "CollatzBody"));
  auto steps = [](int x) {
    int n = 0;
    for (; x != 1; ++n) x = x % 2 == 0 ? x / 2 : 3 * x + 1;
    return n;
  };
  for (int x : {1, 2, 6, 7, 27}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", I(x)}}, {"collatz:0", "collatz:1"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), 1);
    EXPECT_EQ(out[1].scalar<int32_t>(), steps(x)) << "x=" << x;  // 8 for 6, 111 for 27
  }
}

TEST(FunctionalWhile, ConstantPredicatesInsideTheLoop) {
  auto s = Open(
      Placeholder("n", "DT_INT32") + GraphConst("one", "DT_INT32", "int_val", "1") +
      GraphConst("zero", "DT_INT32", "int_val", "0") +
      WhileNode("w", "While", {"one", "zero", "n"}, {"DT_INT32", "DT_INT32", "DT_INT32"}, "SumCond", "ConstPredBody"));
  for (int n : {0, 1, 5, 20}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"n", I(n)}}, {"w:1"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), (1 << n) - 1) << "n=" << n;
  }
}

TEST(FunctionalWhile, OneSessionRunsTheLoopManyTimes) {
  auto s = Open(SumLoop("While"), 2);
  for (int n = 0; n < 60; ++n) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"n", I(n)}}, {"w:1"}, {}, &out).ok());
    ASSERT_EQ(out[0].scalar<int32_t>(), n * (n + 1) / 2) << "n=" << n;
  }
}

TEST(FunctionalWhile, EndlessLoopEndsAtTheRunTimeoutAndTheSessionGoesOn) {
  auto s = Open(GraphConst("start", "DT_INT32", "int_val", "0") + GraphConst("other", "DT_INT32", "int_val", "42") +
                    WhileNode("endless", "While", {"start"}, {"DT_INT32"}, "AlwaysTrue", "IntAddOne"),
                2);
  proto::RunOptions options;
  options.set_timeout_in_ms(50);
  std::vector<Tensor> out;
  const auto start = std::chrono::steady_clock::now();
  Status st = s->Run(options, {}, {"endless:0"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), Code::kDeadlineExceeded) << st;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(s->Run({}, {"other:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 42);
}

// ------------------------------------------------------------ errors

void ExpectError(const Status& st, Code code, const std::vector<std::string>& mentions) {
  EXPECT_EQ(st.code(), code) << st;
  for (const std::string& m : mentions) EXPECT_NE(st.message().find(m), std::string::npos) << st << "\nwants: " << m;
}

TEST(FunctionalErrors, MissingFunctionIsNotFoundNamingNodeAndFunction) {
  const std::string p = Placeholder("p", "DT_BOOL") + Placeholder("x", "DT_FLOAT");
  ExpectError(
      CreateStatus(p + IfNode("my_if", "If", {"p", "x"}, "DT_BOOL", {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOne", "Nope") +
                   Library()),
      Code::kNotFound, {"'my_if'", "'Nope'", "else_branch"});
  // No library at all.
  ExpectError(CreateStatus(p + IfNode("my_if", "StatelessIf", {"p", "x"}, "DT_BOOL", {"DT_FLOAT"}, {"DT_FLOAT"},
                                      "AddOne", "TimesTwo")),
              Code::kNotFound, {"'my_if'", "'AddOne'"});
  ExpectError(CreateStatus(SumLoop("While").substr(0, SumLoop("While").rfind("node {")) +
                           WhileNode("w", "While", {"one", "zero", "n"}, {"DT_INT32", "DT_INT32", "DT_INT32"},
                                     "SumCond", "Missing") +
                           Library()),
              Code::kNotFound, {"'w'", "'Missing'", "body"});
  ExpectError(CreateStatus(Placeholder("k", "DT_INT32") +
                           CaseNode("c", "Case", {"k"}, {}, {"DT_FLOAT"}, {"Ten", "Gone"}) + Library()),
              Code::kNotFound, {"'c'", "'Gone'", "branches[1]"});
  // Inside a function body (a loop body calling an If with a missing branch).
  std::string lib = Library();
  const size_t at = lib.find("\"TriplePlusOne\" } }");
  lib.replace(at, std::string("\"TriplePlusOne\"").size(), "\"NoSuchBranch\"");
  ExpectError(
      CreateStatus(
          Placeholder("x", "DT_INT32") + GraphConst("zero", "DT_INT32", "int_val", "0") +
          WhileNode("collatz", "While", {"x", "zero"}, {"DT_INT32", "DT_INT32"}, "CollatzCond", "CollatzBody") + lib),
      Code::kNotFound, {"collatz/_body/step", "'NoSuchBranch'"});
}

TEST(FunctionalErrors, InputsAndOutputsThatDoNotMatchTheAttrsAreInvalidArgument) {
  const std::string p = Placeholder("p", "DT_BOOL") + Placeholder("x", "DT_FLOAT");
  // Two data inputs after the predicate, but Tin lists one.
  ExpectError(
      CreateStatus(
          p + IfNode("bad_if", "If", {"p", "x", "x"}, "DT_BOOL", {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOne", "TimesTwo") +
          Library()),
      Code::kInvalidArgument, {"'bad_if'", "3 data inputs"});
  // Tout says two outputs; the branches return one.
  ExpectError(CreateStatus(p +
                           IfNode("bad_if", "If", {"p", "x"}, "DT_BOOL", {"DT_FLOAT"}, {"DT_FLOAT", "DT_FLOAT"},
                                  "AddOne", "TimesTwo") +
                           Library()),
              Code::kInvalidArgument, {"'bad_if'", "'AddOne'", "returns"});
  // Tin's dtype is not what the branch takes.
  ExpectError(
      CreateStatus(Placeholder("p", "DT_BOOL") + Placeholder("i", "DT_INT32") +
                   IfNode("bad_if", "If", {"p", "i"}, "DT_BOOL", {"DT_INT32"}, {"DT_FLOAT"}, "AddOne", "TimesTwo") +
                   Library()),
      Code::kInvalidArgument, {"'bad_if'", "takes"});
  // A Case whose branches disagree with Tout.
  ExpectError(
      CreateStatus(Placeholder("k", "DT_INT32") + Placeholder("x", "DT_FLOAT") +
                   CaseNode("bad_case", "Case", {"k", "x"}, {"DT_FLOAT"}, {"DT_INT32"}, {"AddOne"}) + Library()),
      Code::kInvalidArgument, {"'bad_case'"});
  // While: loop vars vs T, a cond with two outputs, a body returning the wrong dtypes.
  const std::string vars = Placeholder("n", "DT_INT32") + GraphConst("f0", "DT_FLOAT", "float_val", "1");
  ExpectError(
      CreateStatus(vars +
                   WhileNode("bad_w", "While", {"n", "f0", "n"}, {"DT_INT32", "DT_FLOAT"}, "FactCond", "FactBody") +
                   Library()),
      Code::kInvalidArgument, {"'bad_w'"});
  ExpectError(
      CreateStatus(vars + WhileNode("bad_w", "While", {"n"}, {"DT_INT32"}, "TwoOutputs", "IntAddOne") + Library()),
      Code::kInvalidArgument, {"'bad_w'", "'TwoOutputs'", "one tensor"});
  ExpectError(
      CreateStatus(vars + WhileNode("bad_w", "While", {"n", "f0"}, {"DT_INT32", "DT_FLOAT"}, "FactCond", "SumBody") +
                   Library()),
      Code::kInvalidArgument, {"'bad_w'", "'SumBody'"});
  // A missing attr.
  ExpectError(CreateStatus(Placeholder("n", "DT_INT32") +
                           "node { name: \"no_body\" op: \"While\" input: \"n\""
                           " attr { key: \"T\" value { list { type: DT_INT32 } } }"
                           " attr { key: \"cond\" value { func { name: \"AlwaysTrue\" } } } }\n" +
                           Library()),
              Code::kInvalidArgument, {"'no_body'", "body"});
}

TEST(FunctionalErrors, PredicateWithoutATruthValueFailsTheRunNotTheProcess) {
  // A scalar resource handle has no truth value.
  auto s = Open(
      "node { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
      " attr { key: \"shape\" value { shape {} } } }\n" +
      Placeholder("x", "DT_FLOAT") +
      IfNode("if", "If", {"v", "x"}, "DT_RESOURCE", {"DT_FLOAT"}, {"DT_FLOAT"}, "AddOne", "TimesTwo") +
      GraphConst("other", "DT_FLOAT", "float_val", "3"));
  std::vector<Tensor> out;
  Status st = s->Run({{"x", F(1)}}, {"if:0"}, {}, &out);
  ExpectError(st, Code::kInvalidArgument, {"if/_pred", "resource"});
  EXPECT_EQ(RunFloat(s.get(), {}, "other:0"), 3.0f);
}

}  // namespace
}  // namespace graphrt
