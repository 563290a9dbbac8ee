// Variables: ref variables (VariableV2 and the ops on Ref(T) inputs) and
// resource variables (VarHandleOp family), against TensorFlow's documented
// semantics (../shared/tf_behaviours.md §10, tf_proto_facts.md §12): state
// across Runs, reads at the reader's run time, uninitialized errors, shared
// names, scatter updates against a naive reference, error texts, snapshots,
// and concurrent updates and reads on one session.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT

std::string ShapeAttr(const Dims& dims) { return "attr { key: \"shape\" value { shape " + ShapeProto(dims) + " } } "; }
std::string BoolAttr(const std::string& k, bool v) {
  return "attr { key: \"" + k + "\" value { b: " + (v ? "true" : "false") + " } } ";
}
std::string StrAttr(const std::string& k, const std::string& v) {
  return "attr { key: \"" + k + "\" value { s: \"" + v + "\" } } ";
}
std::string IntAttr(const std::string& k, int64_t v) {
  return "attr { key: \"" + k + "\" value { i: " + std::to_string(v) + " } } ";
}

std::string Var(const std::string& name, const std::string& dt, const Dims& dims, const std::string& shared = "") {
  return NodeText(name, "VariableV2", {}, TypeAttr("dtype", dt) + ShapeAttr(dims) + StrAttr("shared_name", shared));
}
std::string Op2(const std::string& name, const std::string& op, const std::string& a, const std::string& b,
                const std::string& dt, const std::string& extra = "") {
  return NodeText(name, op, {a, b}, TypeAttr("T", dt) + extra);
}

std::unique_ptr<Session> Open(const std::string& pbtxt, int threads = 1) {
  return CreateSession(ParseGraph(pbtxt), threads);
}

std::vector<float> Fetch(Session* s, const std::string& name, Status* status = nullptr) {
  std::vector<Tensor> out;
  Status st = s->Run({}, {name}, {}, &out);
  if (status) *status = st;
  else EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? ToVector<float>(out[0]) : std::vector<float>{};
}

Status Target(Session* s, const std::string& name) { return s->Run({}, {}, {name}, nullptr); }

// v [2] float, initialised by `init`, read by `read`, bumped by `add`.
std::string Counter() {
  return Var("v", "DT_FLOAT", {2}) + ConstFloat("one_two", {2}, {1, 2}) + ConstFloat("ten", {2}, {10, 20}) +
         Op2("init", "Assign", "v", "one_two", "DT_FLOAT") + NodeText("read", "Identity", {"v"}, TypeAttr("T", "DT_FLOAT")) +
         Op2("add", "AssignAdd", "v", "ten", "DT_FLOAT") +
         NodeText("is_init", "IsVariableInitialized", {"v"}, TypeAttr("dtype", "DT_FLOAT"));
}

TEST(RefVariableTest, StateAcrossRunsAndUninitializedError) {
  auto s = Open(Counter());
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  EXPECT_ERROR(s->Run({}, {"read"}, {}, &out), Code::kFailedPrecondition, "Attempting to use uninitialized value v",
               "read");
  // AssignAdd does not allow an uninitialized input either.
  EXPECT_ERROR(s->Run({}, {"add"}, {}, &out), Code::kFailedPrecondition, "Attempting to use uninitialized value v");
  // The session keeps working.
  ASSERT_TRUE(Target(s.get(), "init").ok());
  ASSERT_TRUE(s->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_TRUE(out[0].scalar<bool>());
  EXPECT_EQ(Fetch(s.get(), "read"), (std::vector<float>{1, 2}));
  // Fetching a ref output gives the value (AssignAdd:0 after the update).
  EXPECT_EQ(Fetch(s.get(), "add"), (std::vector<float>{11, 22}));
  EXPECT_EQ(Fetch(s.get(), "add"), (std::vector<float>{21, 42}));
  EXPECT_EQ(Fetch(s.get(), "v"), (std::vector<float>{21, 42}));
  EXPECT_EQ(Fetch(s.get(), "init"), (std::vector<float>{1, 2}));
  // Close frees the state; a new session starts uninitialized.
  ASSERT_TRUE(s->Close().ok());
  auto s2 = Open(Counter());
  Status st;
  Fetch(s2.get(), "read", &st);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition) << st;
}

TEST(RefVariableTest, ReaderSeesValueAfterItsControlDependencies) {
  // y = v + 1 with ^add: TensorFlow reads the ref when y runs, after add.
  auto s = Open(Counter() + ConstFloat("one", {}, {1}) +
                NodeText("y", "Add", {"v", "one", "^add"}, TypeAttr("T", "DT_FLOAT")) +
                // z reads before the update: a snapshot the update must not change.
                NodeText("z", "Identity", {"v"}, TypeAttr("T", "DT_FLOAT")) +
                NodeText("add_after_z", "AssignAdd", {"v", "ten", "^z"}, TypeAttr("T", "DT_FLOAT")));
  ASSERT_TRUE(Target(s.get(), "init").ok());
  EXPECT_EQ(Fetch(s.get(), "y"), (std::vector<float>{12, 23}));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"z", "add_after_z"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{11, 22}));
  EXPECT_EQ(ToVector<float>(out[1]), (std::vector<float>{21, 42}));
}

TEST(RefVariableTest, AssignValidatesShapeUnlessTold) {
  const std::string g = Var("v", "DT_FLOAT", {2}) + ConstFloat("a", {2}, {1, 2}) + PlaceholderNode("p", "DT_FLOAT") +
                        Op2("init", "Assign", "v", "a", "DT_FLOAT") + Op2("set", "Assign", "v", "p", "DT_FLOAT") +
                        Op2("reshape", "Assign", "v", "p", "DT_FLOAT", BoolAttr("validate_shape", false));
  auto s = Open(g);
  ASSERT_TRUE(Target(s.get(), "init").ok());
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"p", MakeTensor<float>(GR_FLOAT, {3}, {7, 8, 9})}}, {"set"}, {}, &out),
               Code::kInvalidArgument, "Assign requires shapes of both tensors to match. lhs shape= [2] rhs shape= [3]");
  EXPECT_EQ(Fetch(s.get(), "v"), (std::vector<float>{1, 2}));
  ASSERT_TRUE(s->Run({{"p", MakeTensor<float>(GR_FLOAT, {3}, {7, 8, 9})}}, {"reshape"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(Fetch(s.get(), "v"), (std::vector<float>{7, 8, 9}));
}

TEST(RefVariableTest, SharedNameSharesStateAndNodeNameIsDefault) {
  const std::string g = Var("a", "DT_FLOAT", {1}, "shared") + Var("b", "DT_FLOAT", {1}, "shared") +
                        Var("c", "DT_FLOAT", {1}) + ConstFloat("k", {1}, {5}) + Op2("set_a", "Assign", "a", "k", "DT_FLOAT") +
                        NodeText("read_b", "Identity", {"b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("read_c", "Identity", {"c"}, TypeAttr("T", "DT_FLOAT"));
  auto s = Open(g);
  ASSERT_TRUE(Target(s.get(), "set_a").ok());
  EXPECT_EQ(Fetch(s.get(), "read_b"), (std::vector<float>{5}));
  Status st;
  Fetch(s.get(), "read_c", &st);
  EXPECT_ERROR(st, Code::kFailedPrecondition, "uninitialized value c");
}

TEST(RefVariableTest, CountUpToReturnsValueBeforeIncrement) {
  const std::string g = Var("n", "DT_INT64", {}) + ConstNode("zero", "DT_INT64", {}, "int64_val", {"0"}) +
                        Op2("init", "Assign", "n", "zero", "DT_INT64") +
                        NodeText("count", "CountUpTo", {"n"}, TypeAttr("T", "DT_INT64") + IntAttr("limit", 3));
  auto s = Open(g);
  ASSERT_TRUE(Target(s.get(), "init").ok());
  for (int64_t want = 0; want < 3; ++want) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({}, {"count"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int64_t>(), want);
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({}, {"count"}, {}, &out), Code::kOutOfRange, "Reached limit of 3");
}

TEST(RefVariableTest, RefIdentityForwardsTheVariable) {
  auto s = Open(Counter() + NodeText("r", "RefIdentity", {"v"}, TypeAttr("T", "DT_FLOAT")) +
                Op2("add_r", "AssignAdd", "r", "ten", "DT_FLOAT"));
  ASSERT_TRUE(Target(s.get(), "init").ok());
  EXPECT_EQ(Fetch(s.get(), "add_r"), (std::vector<float>{11, 22}));
  EXPECT_EQ(Fetch(s.get(), "read"), (std::vector<float>{11, 22}));
}

// ---------------------------------------------------------------- scatter

// Scatter<op> of `updates` rows into a [4,2] variable at `indices`, against
// a naive loop applying every occurrence in order.
void CheckScatter(const std::string& op, const std::vector<int32_t>& indices) {
  const std::vector<float> init = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> updates;
  for (size_t i = 0; i < indices.size() * 2; ++i) updates.push_back(static_cast<float>(i % 3) + 2.0f);
  std::vector<float> want = init;
  for (size_t i = 0; i < indices.size(); ++i)
    for (int j = 0; j < 2; ++j) {
      float& d = want[indices[i] * 2 + j];
      const float u = updates[i * 2 + j];
      if (op == "ScatterUpdate") d = u;
      if (op == "ScatterAdd") d += u;
      if (op == "ScatterSub") d -= u;
      if (op == "ScatterMul") d *= u;
      if (op == "ScatterDiv") d /= u;
      if (op == "ScatterMin") d = std::min(d, u);
      if (op == "ScatterMax") d = std::max(d, u);
    }
  const std::string g = Var("v", "DT_FLOAT", {4, 2}) + ConstFloat("init_value", {4, 2}, init) +
                        Op2("init", "Assign", "v", "init_value", "DT_FLOAT") + ConstInt32("idx", indices) +
                        ConstFloat("upd", {static_cast<int64_t>(indices.size()), 2}, updates) +
                        NodeText("scatter", op, {"v", "idx", "upd"},
                                 TypeAttr("T", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32"));
  auto s = Open(g);
  ASSERT_TRUE(Target(s.get(), "init").ok());
  EXPECT_EQ(Fetch(s.get(), "scatter"), want) << op;
  EXPECT_EQ(Fetch(s.get(), "v"), want) << op;
}

TEST(ScatterTest, EveryOpAppliesEveryOccurrenceOfDuplicates) {
  for (const char* op : {"ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax"})
    CheckScatter(op, {3, 0, 3, 1, 3});
  CheckScatter("ScatterUpdate", {2, 0});
}

TEST(ScatterTest, BadIndicesAndShapesAreErrorsAndLeaveTheVariable) {
  const std::string g = Var("v", "DT_FLOAT", {3}) + ConstFloat("z", {3}, {1, 2, 3}) +
                        Op2("init", "Assign", "v", "z", "DT_FLOAT") + PlaceholderNode("idx", "DT_INT32") +
                        PlaceholderNode("upd", "DT_FLOAT") +
                        NodeText("scatter", "ScatterAdd", {"v", "idx", "upd"},
                                 TypeAttr("T", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32"));
  auto s = Open(g);
  ASSERT_TRUE(Target(s.get(), "init").ok());
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"idx", MakeTensor<int32_t>(GR_INT32, {2}, {0, 5})},
                       {"upd", MakeTensor<float>(GR_FLOAT, {2}, {1, 1})}},
                      {"scatter"}, {}, &out),
               Code::kInvalidArgument, "indices[1] = 5 is not in [0, 3)", "scatter");
  EXPECT_ERROR(s->Run({{"idx", MakeTensor<int32_t>(GR_INT32, {2}, {0, 1})},
                       {"upd", MakeTensor<float>(GR_FLOAT, {3}, {1, 1, 1})}},
                      {"scatter"}, {}, &out),
               Code::kInvalidArgument, "Must have updates.shape = indices.shape + params.shape[1:]");
  EXPECT_EQ(Fetch(s.get(), "v"), (std::vector<float>{1, 2, 3}));
  // A scalar update is broadcast (newer TensorFlow).
  ASSERT_TRUE(s->Run({{"idx", MakeTensor<int32_t>(GR_INT32, {2}, {0, 2})}, {"upd", Tensor::Scalar<float>(GR_FLOAT, 10)}},
                     {"scatter"}, {}, &out)
                  .ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{11, 2, 13}));
}

// Integer scatters wrap as two's complement instead of overflowing (undefined
// behaviour; UBSan checks it), and lowest / -1 wraps instead of trapping.
TEST(ScatterTest, IntegerOverflowWrapsAndLowestOverMinusOneDoesNotTrap) {
  const std::string base = Var("v", "DT_INT32", {3}) +
                           ConstNode("z", "DT_INT32", {3}, "int_val", {"2147483647", "-2147483648", "65536"}) +
                           Op2("init", "Assign", "v", "z", "DT_INT32") +
                           ConstNode("idx", "DT_INT32", {3}, "int_val", {"0", "1", "2"});
  struct Case {
    const char* op;
    std::vector<std::string> updates;
    std::vector<int32_t> want;
  };
  const Case cases[] = {
      {"ScatterAdd", {"1", "-1", "0"}, {-2147483647 - 1, 2147483647, 65536}},
      {"ScatterSub", {"-1", "1", "0"}, {-2147483647 - 1, 2147483647, 65536}},
      {"ScatterMul", {"2", "-1", "65536"}, {-2, -2147483647 - 1, 0}},
      {"ScatterDiv", {"-1", "-1", "-2"}, {-2147483647, -2147483647 - 1, -32768}},
  };
  for (const Case& c : cases) {
    auto s = Open(base + ConstNode("upd", "DT_INT32", {3}, "int_val", c.updates) +
                  NodeText("scatter", c.op, {"v", "idx", "upd"},
                           TypeAttr("T", "DT_INT32") + TypeAttr("Tindices", "DT_INT32")));
    ASSERT_TRUE(Target(s.get(), "init").ok());
    std::vector<Tensor> out;
    Status st = s->Run({}, {"scatter"}, {}, &out);
    ASSERT_TRUE(st.ok()) << c.op << ": " << st;
    EXPECT_EQ(ToVector<int32_t>(out[0]), c.want) << c.op;
  }
}

TEST(ScatterTest, ScatterNdUpdateAndAdd) {
  // v [2,3]; indices [[1,2],[0,0],[1,2]]: element updates, Add accumulates.
  const std::string base = Var("v", "DT_INT32", {2, 3}) +
                           ConstNode("z", "DT_INT32", {2, 3}, "int_val", {"0", "0", "0", "0", "0", "0"}) +
                           Op2("init", "Assign", "v", "z", "DT_INT32") +
                           ConstNode("idx", "DT_INT32", {3, 2}, "int_val", {"1", "2", "0", "0", "1", "2"}) +
                           ConstNode("upd", "DT_INT32", {3}, "int_val", {"5", "7", "9"}) +
                           ConstNode("rows", "DT_INT32", {1, 1}, "int_val", {"1"}) +
                           ConstNode("row", "DT_INT32", {1, 3}, "int_val", {"4", "5", "6"});
  auto nd = [](const std::string& name, const std::string& op, const std::string& idx, const std::string& upd) {
    return NodeText(name, op, {"v", idx, upd}, TypeAttr("T", "DT_INT32") + TypeAttr("Tindices", "DT_INT32"));
  };
  auto s = Open(base + nd("add", "ScatterNdAdd", "idx", "upd") + nd("set_row", "ScatterNdUpdate", "rows", "row"));
  ASSERT_TRUE(Target(s.get(), "init").ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"add"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{7, 0, 0, 0, 0, 14}));
  ASSERT_TRUE(s->Run({}, {"set_row"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{7, 0, 0, 4, 5, 6}));
}

// ----------------------------------------------------- resource variables

std::string Handle(const std::string& name, const std::string& shared, const std::string& dt = "DT_FLOAT") {
  return NodeText(name, "VarHandleOp", {}, TypeAttr("dtype", dt) + ShapeAttr({2}) + StrAttr("shared_name", shared));
}
std::string Read(const std::string& name, const std::string& h, const std::string& dt = "DT_FLOAT") {
  return NodeText(name, "ReadVariableOp", {h}, TypeAttr("dtype", dt));
}

std::string ResourceGraph() {
  return Handle("h", "x") + Handle("h2", "x") + ConstFloat("a", {2}, {3, 4}) + ConstFloat("d", {2}, {1, 1}) +
         NodeText("assign", "AssignVariableOp", {"h", "a"}, TypeAttr("dtype", "DT_FLOAT")) +
         NodeText("add", "AssignAddVariableOp", {"h2", "d"}, TypeAttr("dtype", "DT_FLOAT")) +
         NodeText("sub", "AssignSubVariableOp", {"h", "d"}, TypeAttr("dtype", "DT_FLOAT")) + Read("read", "h") +
         Read("read2", "h2") + NodeText("inited", "VarIsInitializedOp", {"h"}, "") +
         NodeText("destroy", "DestroyResourceOp", {"h"}, "") +
         NodeText("destroy_strict", "DestroyResourceOp", {"h"}, BoolAttr("ignore_lookup_error", false)) +
         Read("read_int", "h", "DT_INT32") +
         NodeText("shape", "VariableShape", {"h"}, "");
}

TEST(ResourceVariableTest, LifecycleAndErrorTexts) {
  auto s = Open(ResourceGraph());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"inited"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  EXPECT_ERROR(s->Run({}, {"read"}, {}, &out), Code::kFailedPrecondition,
               "Error while reading resource variable x from Container: localhost. This could mean that the variable "
               "was uninitialized.");
  EXPECT_ERROR(Target(s.get(), "add"), Code::kFailedPrecondition, "Error while reading resource variable x");
  ASSERT_TRUE(Target(s.get(), "assign").ok());
  ASSERT_TRUE(s->Run({}, {"inited"}, {}, &out).ok());
  EXPECT_TRUE(out[0].scalar<bool>());
  // Two handles with one shared_name address one variable.
  ASSERT_TRUE(Target(s.get(), "add").ok());
  EXPECT_EQ(Fetch(s.get(), "read"), (std::vector<float>{4, 5}));
  ASSERT_TRUE(Target(s.get(), "sub").ok());
  EXPECT_EQ(Fetch(s.get(), "read2"), (std::vector<float>{3, 4}));
  ASSERT_TRUE(s->Run({}, {"shape"}, {}, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{2}));
  EXPECT_ERROR(s->Run({}, {"read_int"}, {}, &out), Code::kInvalidArgument,
               "Trying to read variable x from Container: localhost with wrong dtype. Expected int32 got float");
  // A read is a snapshot: an update in the same step after it does not change it.
  ASSERT_TRUE(s->Run({}, {"read", "read2"}, {"add"}, &out).ok());
  ASSERT_TRUE(Target(s.get(), "destroy").ok());
  EXPECT_ERROR(s->Run({}, {"read"}, {}, &out), Code::kFailedPrecondition, "uninitialized");
  ASSERT_TRUE(Target(s.get(), "destroy").ok());  // ignore_lookup_error defaults to true
  EXPECT_ERROR(Target(s.get(), "destroy_strict"), Code::kNotFound, "Resource localhost/x/Var does not exist.");
}

TEST(ResourceVariableTest, ReadIsASnapshot) {
  auto s = Open(ResourceGraph() + NodeText("add_after", "AssignAddVariableOp", {"h", "d", "^read"},
                                           TypeAttr("dtype", "DT_FLOAT")));
  ASSERT_TRUE(Target(s.get(), "assign").ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"read"}, {"add_after"}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{3, 4}));
  EXPECT_EQ(Fetch(s.get(), "read"), (std::vector<float>{4, 5}));
}

TEST(ResourceVariableTest, AssignDtypeMismatchAndFedHandlesAreErrors) {
  auto s = Open(ResourceGraph() + ConstNode("i", "DT_INT32", {2}, "int_val", {"1", "2"}) +
                NodeText("assign_int", "AssignVariableOp", {"h", "i"}, TypeAttr("dtype", "DT_INT32")));
  ASSERT_TRUE(Target(s.get(), "assign").ok());
  EXPECT_ERROR(Target(s.get(), "assign_int"), Code::kInvalidArgument,
               "Trying to assign variable with wrong dtype. Expected float got int32");
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"h"}, {}, &out).ok());
  EXPECT_EQ(out[0].dtype(), GR_RESOURCE);
  EXPECT_TRUE(Contains(out[0].DebugString(), "localhost/x")) << out[0].DebugString();
  EXPECT_ERROR(s->Run({{"h", out[0]}}, {"read"}, {}, &out), Code::kInvalidArgument, "handles cannot be fed");
  EXPECT_EQ(Fetch(s.get(), "read"), (std::vector<float>{3, 4}));
}

TEST(ResourceVariableTest, GatherAndScatter) {
  const std::string g =
      NodeText("h", "VarHandleOp", {}, TypeAttr("dtype", "DT_FLOAT") + ShapeAttr({3, 2}) + StrAttr("shared_name", "t")) +
      ConstFloat("a", {3, 2}, {1, 2, 3, 4, 5, 6}) +
      NodeText("assign", "AssignVariableOp", {"h", "a"}, TypeAttr("dtype", "DT_FLOAT")) +
      ConstInt32("idx", {2, 0, 2}) + ConstFloat("upd", {3, 2}, {1, 1, 10, 10, 100, 100}) +
      NodeText("gather", "ResourceGather", {"h", "idx"}, TypeAttr("dtype", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32")) +
      NodeText("scatter", "ResourceScatterAdd", {"h", "idx", "upd"},
               TypeAttr("dtype", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32")) +
      Read("read", "h");
  auto s = Open(g);
  ASSERT_TRUE(Target(s.get(), "assign").ok());
  EXPECT_EQ(Fetch(s.get(), "gather"), (std::vector<float>{5, 6, 1, 2, 5, 6}));
  ASSERT_TRUE(Target(s.get(), "scatter").ok());
  EXPECT_EQ(Fetch(s.get(), "read"), (std::vector<float>{11, 12, 3, 4, 106, 107}));
}

// ------------------------------------------------------------ concurrency

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

TEST(VariableConcurrencyTest, LockedAssignAddFromEightThreadsCountsExactly) {
  const int per_thread = EnvInt("GRAPHRT_STATE_STRESS_RUNS", 10000);
  const std::string g = Var("n", "DT_INT64", {}) + ConstNode("zero", "DT_INT64", {}, "int64_val", {"0"}) +
                        ConstNode("one", "DT_INT64", {}, "int64_val", {"1"}) + Op2("init", "Assign", "n", "zero", "DT_INT64") +
                        Op2("inc", "AssignAdd", "n", "one", "DT_INT64", BoolAttr("use_locking", true));
  auto s = Open(g, 2);
  ASSERT_TRUE(Target(s.get(), "init").ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < per_thread; ++i)
        if (!Target(s.get(), "inc").ok()) ++failures;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"n"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 8 * static_cast<int64_t>(per_thread));
}

TEST(VariableConcurrencyTest, ReadersNeverSeeATornValue) {
  // A 4096-element variable: writers alternately assign all-1 / all-2 and add
  // 1 everywhere; readers (ref deref and a resource read) must always see
  // every element equal.
  const int n = 4096;
  const int runs = EnvInt("GRAPHRT_STATE_STRESS_RUNS", 10000) / 5;
  const std::string g = Var("v", "DT_FLOAT", {n}) + ConstFloat("ones", {n}, std::vector<float>(n, 1)) +
                        ConstFloat("twos", {n}, std::vector<float>(n, 2)) + Op2("set1", "Assign", "v", "ones", "DT_FLOAT") +
                        Op2("set2", "Assign", "v", "twos", "DT_FLOAT") +
                        Op2("bump", "AssignAdd", "v", "ones", "DT_FLOAT", BoolAttr("use_locking", true)) +
                        NodeText("read", "Identity", {"v"}, TypeAttr("T", "DT_FLOAT"));
  auto s = Open(g, 2);
  ASSERT_TRUE(Target(s.get(), "set1").ok());
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, errors{0};
  std::thread writer([&] {
    for (int i = 0; i < runs; ++i)
      if (!Target(s.get(), i % 3 == 0 ? "set1" : i % 3 == 1 ? "bump" : "set2").ok()) ++errors;
    stop = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&] {
      while (!stop) {
        std::vector<Tensor> out;
        if (!s->Run({}, {"read"}, {}, &out).ok()) {
          ++errors;
          continue;
        }
        const float* p = out[0].data<float>();
        for (int i = 1; i < n; ++i)
          if (p[i] != p[0]) {
            ++torn;
            break;
          }
      }
    });
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(torn.load(), 0);
}

}  // namespace
}  // namespace graphrt
