// The data_flow family: TensorArray V3 and Stack V2 as per-step resources.
// Values are worked out by hand from TensorFlow's documented semantics
// (tensor_array.h, stack.cc); error texts are TensorFlow's. Ops on one
// array are ordered by their flow (or control) edges, as TF1 graphs do.
// The real TF graph is DL4J's tensor_array/unstack (tf_testdata README
// item 28).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "graphrt/core/graph_def_io.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

// ------------------------------------------------------------ graph text

std::string ShapeAttr(const std::string& key, const Dims& dims) {
  return "attr { key: \"" + key + "\" value { shape " + ShapeProto(dims) + " } } ";
}

std::string I32(const std::string& name, int32_t v) { return ConstOf(name, IntScalar(v)); }
std::string Floats(const std::string& name, const Dims& dims, const std::vector<float>& v) {
  return ConstFloat(name, dims, v);
}

// TensorArrayV3 `name` of `dt` and size `size` (a Const "<name>/size").
std::string Ta(const std::string& name, DataType dt, int32_t size, const std::string& attrs = "") {
  return I32(name + "/size", size) + NodeText(name, "TensorArrayV3", {name + "/size"}, TAttr(dt, "dtype") + attrs);
}
// Write `value` at `index` (a Const "<name>/index"), after `flow`.
std::string Write(const std::string& name, const std::string& ta, int32_t index, const std::string& value,
                  const std::string& flow, DataType dt) {
  return I32(name + "/index", index) +
         NodeText(name, "TensorArrayWriteV3", {ta, name + "/index", value, flow}, TAttr(dt));
}
std::string Read(const std::string& name, const std::string& ta, int32_t index, const std::string& flow, DataType dt,
                 const std::vector<std::string>& after = {}) {
  std::vector<std::string> inputs = {ta, name + "/index", flow};
  for (const auto& a : after) inputs.push_back("^" + a);
  return I32(name + "/index", index) + NodeText(name, "TensorArrayReadV3", inputs, TAttr(dt, "dtype"));
}
std::string Size(const std::string& name, const std::string& ta, const std::string& flow) {
  return NodeText(name, "TensorArraySizeV3", {ta, flow}, "");
}
std::string Gather(const std::string& name, const std::string& ta, const std::vector<int64_t>& indices,
                   const std::string& flow, DataType dt, const std::string& attrs = "") {
  return ConstOf(name + "/indices", Vec(indices)) +
         NodeText(name, "TensorArrayGatherV3", {ta, name + "/indices", flow}, TAttr(dt, "dtype") + attrs);
}
std::string Scatter(const std::string& name, const std::string& ta, const std::vector<int64_t>& indices,
                    const std::string& value, const std::string& flow, DataType dt) {
  return ConstOf(name + "/indices", Vec(indices)) +
         NodeText(name, "TensorArrayScatterV3", {ta, name + "/indices", value, flow}, TAttr(dt));
}
std::string Split(const std::string& name, const std::string& ta, const std::string& value,
                  const std::vector<int64_t>& lengths, const std::string& flow, DataType dt) {
  return ConstOf(name + "/lengths", Vec(lengths, GR_INT64)) +
         NodeText(name, "TensorArraySplitV3", {ta, value, name + "/lengths", flow}, TAttr(dt));
}
std::string Concat(const std::string& name, const std::string& ta, const std::string& flow, DataType dt,
                   const std::string& attrs = "") {
  return NodeText(name, "TensorArrayConcatV3", {ta, flow}, TAttr(dt, "dtype") + attrs);
}

std::unique_ptr<Session> Make(const std::string& graph) { return CreateSession(ParseGraph(graph), 2); }

Status RunOn(Session* s, const std::vector<std::string>& fetches, std::vector<Tensor>* out,
             const std::vector<std::string>& targets = {}, const Feeds& feeds = {}) {
  out->clear();
  return s->Run(feeds, fetches, targets, out);
}

std::vector<Tensor> MustRun(Session* s, const std::vector<std::string>& fetches) {
  std::vector<Tensor> out;
  const Status st = RunOn(s, fetches, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

// A fresh session on `graph`; the Run's status.
Status TryGraph(const std::string& graph, const std::vector<std::string>& fetches, std::vector<Tensor>* out = nullptr,
                const std::vector<std::string>& targets = {}, const Feeds& feeds = {}) {
  auto s = Make(graph);
  if (!s) return Status(Code::kInternal, "no session");
  std::vector<Tensor> local;
  return RunOn(s.get(), fetches, out ? out : &local, targets, feeds);
}

// A fed input `name` holding `t`: shape inference cannot see its shape, so
// the kernel's own checks run.
std::string Fed(const std::string& name, const Tensor& t, Feeds* feeds) {
  feeds->emplace_back(name + ":0", t);
  return PlaceholderNode(name, DtEnum(t.dtype()));
}

std::vector<float> F(const Tensor& t) { return ToVector<float>(t); }

// Three float [2] elements written at 0, 1, 2 (values 1,2 / 3,4 / 5,6),
// flows chained w0 -> w1 -> w2.
std::string ThreeWritten(const std::string& ta_attrs = "") {
  return Ta("ta", GR_FLOAT, 3, ta_attrs) + Floats("v0", {2}, {1, 2}) + Floats("v1", {2}, {3, 4}) +
         Floats("v2", {2}, {5, 6}) + Write("w0", "ta", 0, "v0", "ta:1", GR_FLOAT) +
         Write("w1", "ta", 1, "v1", "w0", GR_FLOAT) + Write("w2", "ta", 2, "v2", "w1", GR_FLOAT);
}

// ------------------------------------------------------------ TensorArray

TEST(TensorArrayTest, WriteReadSizeAndFlow) {
  const std::string g = ThreeWritten() + Read("r2", "ta", 2, "w2", GR_FLOAT) + Read("r0", "ta", 0, "w2", GR_FLOAT) +
                        Size("size", "ta", "w2");
  auto s = Make(g);
  ASSERT_TRUE(s);
  auto out = MustRun(s.get(), {"r2:0", "r0:0", "size:0", "ta:1", "w2:0"});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(F(out[0]), (std::vector<float>{5, 6}));
  EXPECT_EQ(F(out[1]), (std::vector<float>{1, 2}));
  EXPECT_EQ(DimsOf(out[1]), (Dims{2}));
  EXPECT_EQ(out[2].dtype(), GR_INT32);
  EXPECT_EQ(out[2].scalar<int32_t>(), 3);
  // The flow is a float scalar 0.0 that only orders the ops.
  for (int i : {3, 4}) {
    EXPECT_EQ(out[i].dtype(), GR_FLOAT);
    EXPECT_EQ(DimsOf(out[i]), Dims{});
    EXPECT_EQ(out[i].scalar<float>(), 0.0f);
  }
}

TEST(TensorArrayTest, UnwrittenElementReadsAsZerosOnlyWithAFullShape) {
  std::vector<Tensor> out;
  const std::string known = Ta("ta", GR_FLOAT, 3, ShapeAttr("element_shape", {2, 1})) + Floats("v", {2, 1}, {7, 8}) +
                            Write("w", "ta", 0, "v", "ta:1", GR_FLOAT) + Read("r", "ta", 1, "w", GR_FLOAT);
  ASSERT_TRUE(TryGraph(known, {"r:0"}, &out).ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 1}));
  EXPECT_EQ(F(out[0]), (std::vector<float>{0, 0}));
  const std::string partial =
      Ta("ta", GR_FLOAT, 3, "attr { key: \"element_shape\" value { shape { dim { size: -1 } } } } ") +
      Read("r", "ta", 1, "ta:1", GR_FLOAT);
  EXPECT_ERROR(TryGraph(partial, {"r:0"}), Code::kInvalidArgument, "TensorArray ta_0",
               "Could not read from TensorArray index 1.  Furthermore, the element shape is not fully defined: [?]");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 3) + Read("r", "ta", 0, "ta:1", GR_FLOAT), {"r:0"}), Code::kInvalidArgument,
               "the element shape is not fully defined: <unknown>");
}

TEST(TensorArrayTest, ClearAfterReadAllowsOneRead) {
  const std::string twice = Read("a", "ta", 1, "w2", GR_FLOAT) + Read("b", "ta", 1, "w2", GR_FLOAT, {"a"});
  auto s = Make(ThreeWritten() + twice);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_ERROR(RunOn(s.get(), {"b:0"}, &out), Code::kInvalidArgument, "b",
               "TensorArray ta_0: Could not read index 1 twice because it was cleared after a previous read "
               "(perhaps try setting clear_after_read = false?).");
  // The session goes on; each Run has its own array.
  out = MustRun(s.get(), {"a:0"});
  EXPECT_EQ(F(out[0]), (std::vector<float>{3, 4}));
  // Without clear_after_read, any number of reads.
  s = Make(ThreeWritten(BoolAttr("clear_after_read", false)) + twice);
  ASSERT_TRUE(s);
  out = MustRun(s.get(), {"a:0", "b:0"});
  EXPECT_EQ(F(out[0]), (std::vector<float>{3, 4}));
  EXPECT_EQ(F(out[1]), (std::vector<float>{3, 4}));
}

TEST(TensorArrayTest, WriteErrors) {
  const std::string base = Ta("ta", GR_FLOAT, 2, ShapeAttr("element_shape", {2})) + Floats("v", {2}, {1, 2}) +
                           Floats("v3", {3}, {1, 2, 3}) + ConstOf("iv", Vec({1, 2}));
  EXPECT_ERROR(TryGraph(base + Write("w", "ta", 2, "v", "ta:1", GR_FLOAT), {"w:0"}), Code::kInvalidArgument,
               "TensorArray ta_0: Tried to write to index 2 but array is not resizeable and size is: 2");
  EXPECT_ERROR(TryGraph(base + Write("w", "ta", -1, "v", "ta:1", GR_FLOAT), {"w:0"}), Code::kInvalidArgument,
               "Tried to write to index -1 but array is not resizeable and size is: 2");
  EXPECT_ERROR(TryGraph(base + Write("w", "ta", 0, "iv", "ta:1", GR_INT32), {"w:0"}), Code::kInvalidArgument,
               "Could not write to TensorArray index 0 because the value dtype is int32 but TensorArray dtype is "
               "float.");
  EXPECT_ERROR(TryGraph(base + Write("w", "ta", 0, "v3", "ta:1", GR_FLOAT), {"w:0"}), Code::kInvalidArgument,
               "Could not write to TensorArray index 0 because the value shape is [3] which is incompatible with the "
               "TensorArray's inferred element shape: [2] (consider setting infer_shape=False).");
  EXPECT_ERROR(
      TryGraph(base + Write("w", "ta", 0, "v", "ta:1", GR_FLOAT) + Write("w2", "ta", 0, "v", "w", GR_FLOAT), {"w2:0"}),
      Code::kInvalidArgument, "Could not write to TensorArray index 0 because it has already been written to.");
  EXPECT_ERROR(TryGraph(base + Write("w", "ta", 0, "v", "ta:1", GR_FLOAT) + Read("r", "ta", 0, "w", GR_FLOAT) +
                            NodeText("w2", "TensorArrayWriteV3", {"ta", "w/index", "v", "w", "^r"}, TAttr(GR_FLOAT)),
                        {"w2:0"}),
               Code::kInvalidArgument, "Could not write to TensorArray index 0 because it has already been read.");
  Feeds feeds;
  const std::string matrix_index = Fed("i2", IntTensor(GR_INT32, {1, 1}, {0}), &feeds);
  EXPECT_ERROR(
      TryGraph(base + matrix_index + NodeText("w", "TensorArrayWriteV3", {"ta", "i2", "v", "ta:1"}, TAttr(GR_FLOAT)),
               {"w:0"}, nullptr, {}, feeds),
      Code::kInvalidArgument, "TensorArray index must be scalar, but had shape: [1,1]");
  // Shape inference rejects what it can see.
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(OpTestOptions(1), &session).ok());
  EXPECT_ERROR(
      session->Create(ParseGraph(base + ConstOf("i3", IntTensor(GR_INT32, {1, 1}, {0})) +
                                 NodeText("w", "TensorArrayWriteV3", {"ta", "i3", "v", "ta:1"}, TAttr(GR_FLOAT)))),
      Code::kInvalidArgument, "Node 'w'", "Shape must be rank 0 but is rank 2");
}

TEST(TensorArrayTest, IdenticalElementShapesFixesTheShapeAtTheFirstWrite) {
  const std::string g = Ta("ta", GR_FLOAT, 2, BoolAttr("identical_element_shapes", true)) + Floats("v", {2}, {1, 2}) +
                        Floats("v3", {3}, {1, 2, 3}) + Write("w0", "ta", 0, "v", "ta:1", GR_FLOAT);
  EXPECT_ERROR(TryGraph(g + Write("w1", "ta", 1, "v3", "w0", GR_FLOAT), {"w1:0"}), Code::kInvalidArgument,
               "the value shape is [3] which is incompatible with the TensorArray's inferred element shape: [2]");
  // ... and an unwritten element then reads as zeros of that shape.
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g + Read("r", "ta", 1, "w0", GR_FLOAT), {"r:0"}, &out).ok());
  EXPECT_EQ(F(out[0]), (std::vector<float>{0, 0}));
}

TEST(TensorArrayTest, ReadErrors) {
  EXPECT_ERROR(TryGraph(ThreeWritten() + Read("r", "ta", 3, "w2", GR_FLOAT), {"r:0"}), Code::kInvalidArgument,
               "Tried to read from index 3 but array size is: 3");
  EXPECT_ERROR(TryGraph(ThreeWritten() + Read("r", "ta", -1, "w2", GR_FLOAT), {"r:0"}), Code::kInvalidArgument,
               "Tried to read from index -1 but array size is: 3");
  EXPECT_ERROR(TryGraph(ThreeWritten() + Read("r", "ta", 0, "w2", GR_INT32), {"r:0"}), Code::kInvalidArgument,
               "TensorArray dtype is float but Op requested dtype int32.");
}

TEST(TensorArrayTest, DynamicSizeGrows) {
  const std::string g = Ta("ta", GR_FLOAT, 0, BoolAttr("dynamic_size", true)) + Floats("v", {1}, {9}) +
                        Size("s0", "ta", "ta:1") + Write("w", "ta", 4, "v", "ta:1", GR_FLOAT) + Size("s1", "ta", "w") +
                        Write("w1", "ta", 1, "v", "w", GR_FLOAT) + Size("s2", "ta", "w1") +
                        Read("r", "ta", 4, "w1", GR_FLOAT);
  auto s = Make(g);
  ASSERT_TRUE(s);
  auto out = MustRun(s.get(), {"s0:0", "s1:0", "s2:0", "r:0"});
  EXPECT_EQ(out[0].scalar<int32_t>(), 0);
  EXPECT_EQ(out[1].scalar<int32_t>(), 5);
  EXPECT_EQ(out[2].scalar<int32_t>(), 5);
  EXPECT_EQ(F(out[3]), (std::vector<float>{9}));
}

TEST(TensorArrayTest, NegativeSizeFails) {
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, -1), {"ta:1"}), Code::kInvalidArgument, "ta", "Size should be >= 0.");
}

TEST(TensorArrayTest, Gather) {
  auto s = Make(ThreeWritten() + Gather("g", "ta", {2, 0}, "w2", GR_FLOAT));
  ASSERT_TRUE(s);
  auto out = MustRun(s.get(), {"g:0"});
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  EXPECT_EQ(F(out[0]), (std::vector<float>{5, 6, 1, 2}));
  // An index twice reads it twice: cleared the second time.
  EXPECT_ERROR(TryGraph(ThreeWritten() + Gather("g", "ta", {1, 1}, "w2", GR_FLOAT), {"g:0"}), Code::kInvalidArgument,
               "Could not read index 1 twice");
  // Unwritten elements of a fully known element shape are zeros.
  const std::string g2 = Ta("ta", GR_FLOAT, 3, ShapeAttr("element_shape", {2})) + Floats("v", {2}, {1, 2}) +
                         Write("w", "ta", 1, "v", "ta:1", GR_FLOAT) + Gather("g", "ta", {0, 1, 2}, "w", GR_FLOAT);
  std::vector<Tensor> o2;
  ASSERT_TRUE(TryGraph(g2, {"g:0"}, &o2).ok());
  EXPECT_EQ(F(o2[0]), (std::vector<float>{0, 0, 1, 2, 0, 0}));
}

TEST(TensorArrayTest, GatherZeroIndicesAndShapeChecks) {
  const std::string empty = ConstOf("none", IntTensor(GR_INT32, {0}, {}));
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(Ta("ta", GR_FLOAT, 0) + empty +
                           NodeText("g", "TensorArrayGatherV3", {"ta", "none", "ta:1"},
                                    TAttr(GR_FLOAT, "dtype") + ShapeAttr("element_shape", {3})),
                       {"g:0"}, &out)
                  .ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 3}));
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 0) + empty +
                            NodeText("g", "TensorArrayGatherV3", {"ta", "none", "ta:1"}, TAttr(GR_FLOAT, "dtype")),
                        {"g:0"}),
               Code::kUnimplemented,
               "TensorArray has size zero, but element shape <unknown> is not fully defined. Currently only static "
               "shapes are supported when packing zero-size TensorArrays.");
  // Elements of different shapes cannot be stacked.
  const std::string mixed = Ta("ta", GR_FLOAT, 2) + Floats("a", {2}, {1, 2}) + Floats("b", {1}, {3}) +
                            Write("w0", "ta", 0, "a", "ta:1", GR_FLOAT) + Write("w1", "ta", 1, "b", "w0", GR_FLOAT);
  EXPECT_ERROR(TryGraph(mixed + Gather("g", "ta", {0, 1}, "w1", GR_FLOAT), {"g:0"}), Code::kInvalidArgument,
               "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 has shape: [1]");
  // The op's element_shape must fit the elements.
  EXPECT_ERROR(TryGraph(mixed + Gather("g", "ta", {1}, "w1", GR_FLOAT, ShapeAttr("element_shape", {2})), {"g:0"}),
               Code::kInvalidArgument,
               "TensorArray was passed element_shape [2] which does not match the Tensor at "
               "index 0: [1]");
  Feeds feeds;
  const std::string bad = Fed("m", IntTensor(GR_INT32, {1, 1}, {0}), &feeds);
  EXPECT_ERROR(TryGraph(mixed + bad + NodeText("g", "TensorArrayGatherV3", {"ta", "m", "w1"}, TAttr(GR_FLOAT, "dtype")),
                        {"g:0"}, nullptr, {}, feeds),
               Code::kInvalidArgument, "Expected indices to be a vector, but received shape: [1,1]");
}

TEST(TensorArrayTest, ScatterThenGather) {
  // Rows of [[1,2],[3,4],[5,6]] go to elements 2, 0, 1.
  const std::string g = Ta("ta", GR_FLOAT, 3) + Floats("v", {3, 2}, {1, 2, 3, 4, 5, 6}) +
                        Scatter("sc", "ta", {2, 0, 1}, "v", "ta:1", GR_FLOAT) +
                        Gather("g", "ta", {0, 1, 2}, "sc", GR_FLOAT);
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g, {"g:0", "sc:0"}, &out).ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{3, 2}));
  EXPECT_EQ(F(out[0]), (std::vector<float>{3, 4, 5, 6, 1, 2}));
  EXPECT_EQ(out[1].scalar<float>(), 0.0f);
}

TEST(TensorArrayTest, ScatterErrors) {
  const std::string v = Floats("v", {2, 2}, {1, 2, 3, 4});
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 2) + v + Scatter("sc", "ta", {0, 1, 2}, "v", "ta:1", GR_FLOAT), {"sc:0"}),
               Code::kInvalidArgument, "Expected len(indices) == values.shape[0], but saw: 3 vs. 2");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 2) + v + Scatter("sc", "ta", {0, 5}, "v", "ta:1", GR_FLOAT), {"sc:0"}),
               Code::kInvalidArgument, "Max scatter index must be < array size (5 vs. 2)");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 2) + v + Scatter("sc", "ta", {0, -1}, "v", "ta:1", GR_FLOAT), {"sc:0"}),
               Code::kInvalidArgument, "Tried to write to index -1");
  Feeds feeds;
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 2) + Fed("s", MakeTensor<float>(GR_FLOAT, {}, {1}), &feeds) +
                            Scatter("sc", "ta", {}, "s", "ta:1", GR_FLOAT),
                        {"sc:0"}, nullptr, {}, feeds),
               Code::kInvalidArgument, "Input value for unpack must be at least a vector but received shape: []");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_INT32, 2) + v + Scatter("sc", "ta", {0, 1}, "v", "ta:1", GR_FLOAT), {"sc:0"}),
               Code::kInvalidArgument, "TensorArray dtype is int32 but Op is trying to write dtype float.");
  // A dynamic array grows to the largest index.
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(Ta("ta", GR_FLOAT, 0, BoolAttr("dynamic_size", true)) + v +
                           Scatter("sc", "ta", {4, 1}, "v", "ta:1", GR_FLOAT) + Size("n", "ta", "sc") +
                           Read("r", "ta", 4, "sc", GR_FLOAT),
                       {"n:0", "r:0"}, &out)
                  .ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 5);
  EXPECT_EQ(F(out[1]), (std::vector<float>{1, 2}));
}

TEST(TensorArrayTest, SplitThenConcat) {
  // [5,2] split into rows 2 / 0 / 3.
  const std::string g = Ta("ta", GR_FLOAT, 3) + Floats("v", {5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) +
                        Split("sp", "ta", "v", {2, 0, 3}, "ta:1", GR_FLOAT) +
                        Concat("c", "ta", "sp", GR_FLOAT, ShapeAttr("element_shape_except0", {2}));
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g, {"c:0", "c:1"}, &out).ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{5, 2}));
  EXPECT_EQ(F(out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(out[1].dtype(), GR_INT64);
  EXPECT_EQ(ToVector<int64_t>(out[1]), (std::vector<int64_t>{2, 0, 3}));
  // Element 2 alone: the last three rows.
  ASSERT_TRUE(
      TryGraph(g + Read("r", "ta", 2, "sp", GR_FLOAT) + Read("r1", "ta", 1, "sp", GR_FLOAT), {"r:0", "r1:0"}, &out)
          .ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{3, 2}));
  EXPECT_EQ(F(out[0]), (std::vector<float>{5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(DimsOf(out[1]), (Dims{0, 2}));
}

TEST(TensorArrayTest, SplitErrors) {
  const std::string v = Floats("v", {3, 1}, {1, 2, 3});
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 2) + v + Split("sp", "ta", "v", {1, 1}, "ta:1", GR_FLOAT), {"sp:0"}),
               Code::kInvalidArgument,
               "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is 2 and value's shape is: "
               "[3,1]");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 3) + v + Split("sp", "ta", "v", {2, 1}, "ta:1", GR_FLOAT), {"sp:0"}),
               Code::kInvalidArgument,
               "TensorArray's size is not equal to the size of lengths (3 vs. 2), and the TensorArray is not marked "
               "as dynamically resizeable");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 2) + v + Split("sp", "ta", "v", {4, -1}, "ta:1", GR_FLOAT), {"sp:0"}),
               Code::kInvalidArgument, "lengths[1] = -1 is negative");
  EXPECT_ERROR(
      TryGraph(Ta("ta", GR_FLOAT, 1) + Floats("s", {}, {1}) + Split("sp", "ta", "s", {1}, "ta:1", GR_FLOAT), {"sp:0"}),
      Code::kInvalidArgument, "Expected value to be at least a vector, but received shape: []");
  // A dynamic array takes the number of lengths.
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(Ta("ta", GR_FLOAT, 0, BoolAttr("dynamic_size", true)) + v +
                           Split("sp", "ta", "v", {1, 2}, "ta:1", GR_FLOAT) + Size("n", "ta", "sp"),
                       {"n:0"}, &out)
                  .ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 2);
}

TEST(TensorArrayTest, ConcatErrorsAndEmpty) {
  std::vector<Tensor> out;
  ASSERT_TRUE(
      TryGraph(Ta("ta", GR_FLOAT, 0) + Concat("c", "ta", "ta:1", GR_FLOAT, ShapeAttr("element_shape_except0", {4})),
               {"c:0", "c:1"}, &out)
          .ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 4}));
  EXPECT_EQ(DimsOf(out[1]), (Dims{0}));
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 0) + Concat("c", "ta", "ta:1", GR_FLOAT), {"c:0"}), Code::kUnimplemented,
               "TensorArray has size zero, but element_shape_except0 <unknown> is not fully defined.");
  const std::string scalars = Ta("ta", GR_FLOAT, 1) + Floats("s", {}, {1}) + Write("w", "ta", 0, "s", "ta:1", GR_FLOAT);
  EXPECT_ERROR(TryGraph(scalars + Concat("c", "ta", "w", GR_FLOAT), {"c:0"}), Code::kInvalidArgument,
               "Concat saw a scalar shape at index 0 but requires at least vectors.  Did you mean to call pack?");
  const std::string mixed = Ta("ta", GR_FLOAT, 2) + Floats("a", {1, 2}, {1, 2}) + Floats("b", {1, 3}, {3, 4, 5}) +
                            Write("w0", "ta", 0, "a", "ta:1", GR_FLOAT) + Write("w1", "ta", 1, "b", "w0", GR_FLOAT);
  EXPECT_ERROR(TryGraph(mixed + Concat("c", "ta", "w1", GR_FLOAT), {"c:0"}), Code::kInvalidArgument,
               "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: [2] but index 1 has "
               "(excepting dimension 0) shape: [3]");
}

TEST(TensorArrayTest, CloseMakesLaterUsesFail) {
  const std::string g = ThreeWritten() + NodeText("close", "TensorArrayCloseV3", {"ta", "^w2"}, "") +
                        NodeText("n", "TensorArraySizeV3", {"ta", "w2", "^close"}, "") + I32("ri", 0) +
                        NodeText("r", "TensorArrayReadV3", {"ta", "ri", "w2", "^close"}, TAttr(GR_FLOAT, "dtype"));
  auto s = Make(g);
  ASSERT_TRUE(s);
  std::vector<Tensor> out;
  EXPECT_ERROR(RunOn(s.get(), {"n:0"}, &out), Code::kInvalidArgument, "TensorArray ta_0 has already been closed.");
  EXPECT_ERROR(RunOn(s.get(), {"r:0"}, &out), Code::kInvalidArgument, "TensorArray ta_0 has already been closed.");
  EXPECT_TRUE(RunOn(s.get(), {}, &out, {"close"}).ok());
}

TEST(TensorArrayTest, ResourcesLastOneStep) {
  // Each Run makes its own array: a dynamic array written at 0 has size 1
  // every time, and the name counter starts over (ta_0 each time).
  const std::string g = Ta("ta", GR_FLOAT, 0, BoolAttr("dynamic_size", true)) + Floats("v", {1}, {1}) +
                        Write("w", "ta", 0, "v", "ta:1", GR_FLOAT) + Size("n", "ta", "w") +
                        Write("again", "ta", 0, "v", "w", GR_FLOAT);
  auto s = Make(g);
  ASSERT_TRUE(s);
  for (int run = 0; run < 3; ++run) {
    auto out = MustRun(s.get(), {"n:0"});
    EXPECT_EQ(out[0].scalar<int32_t>(), 1) << "run " << run;
    std::vector<Tensor> o;
    EXPECT_ERROR(RunOn(s.get(), {"again:0"}, &o), Code::kInvalidArgument, "TensorArray ta_0:", "already been written");
  }
  // tensor_array_name names the array.
  EXPECT_ERROR(
      TryGraph(Ta("ta", GR_FLOAT, 1, StrAttr("tensor_array_name", "mine")) + Read("r", "ta", 5, "ta:1", GR_FLOAT),
               {"r:0"}),
      Code::kInvalidArgument, "TensorArray mine_0:");
}

TEST(TensorArrayTest, TwoArraysOfOneNameStayApart) {
  // Two nodes with one tensor_array_name get distinct arrays.
  const std::string name = StrAttr("tensor_array_name", "same");
  const std::string g = Ta("a", GR_FLOAT, 1, name) + Ta("b", GR_FLOAT, 1, name) + Floats("x", {1}, {1}) +
                        Floats("y", {1}, {2}) + Write("wa", "a", 0, "x", "a:1", GR_FLOAT) +
                        Write("wb", "b", 0, "y", "b:1", GR_FLOAT) + Read("ra", "a", 0, "wa", GR_FLOAT) +
                        Read("rb", "b", 0, "wb", GR_FLOAT);
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g, {"ra:0", "rb:0"}, &out).ok());
  EXPECT_EQ(F(out[0]), (std::vector<float>{1}));
  EXPECT_EQ(F(out[1]), (std::vector<float>{2}));
}

// Forward array: size 2, element 0 = [1,2] written; gradient array for
// source "gradients".
std::string ForwardAndGrad(const std::string& fwd_attrs = "") {
  return Ta("ta", GR_FLOAT, 2, fwd_attrs) + Floats("v", {2}, {1, 2}) + Write("w", "ta", 0, "v", "ta:1", GR_FLOAT) +
         NodeText("grad", "TensorArrayGradV3", {"ta", "w"}, StrAttr("source", "gradients"));
}

TEST(TensorArrayTest, GradientArrayAddsWrites) {
  const std::string g = ForwardAndGrad() + Floats("g1", {2}, {1, 1}) + Floats("g2", {2}, {2, 3}) +
                        Write("gw1", "grad", 0, "g1", "grad:1", GR_FLOAT) +
                        Write("gw2", "grad", 0, "g2", "gw1", GR_FLOAT) + Read("gr", "grad", 0, "gw2", GR_FLOAT) +
                        Size("gn", "grad", "grad:1") + Read("unwritten", "grad", 1, "grad:1", GR_FLOAT);
  auto s = Make(g);
  ASSERT_TRUE(s);
  auto out = MustRun(s.get(), {"gr:0", "gn:0", "grad:1"});
  EXPECT_EQ(F(out[0]), (std::vector<float>{3, 4}));  // [1,1] + [2,3]
  EXPECT_EQ(out[1].scalar<int32_t>(), 2);            // the forward array's size
  EXPECT_EQ(out[2].scalar<float>(), 0.0f);
  // Forward element 1 was never written and no element shape is known:
  // its gradient cannot be made up.
  std::vector<Tensor> o;
  EXPECT_ERROR(RunOn(s.get(), {"unwritten:0"}, &o), Code::kInvalidArgument, "TensorArray ta_0@gradients",
               "the element shape is not fully defined");
  // A gradient of a written forward element that nobody wrote reads as
  // zeros of that element's shape.
  s = Make(ForwardAndGrad() + Read("gz", "grad", 0, "grad:1", GR_FLOAT));
  ASSERT_TRUE(s);
  out = MustRun(s.get(), {"gz:0"});
  EXPECT_EQ(F(out[0]), (std::vector<float>{0, 0}));
  // Summed shapes must agree.
  EXPECT_ERROR(
      TryGraph(ForwardAndGrad() + Floats("g3", {3}, {1, 1, 1}) + Floats("g1", {2}, {1, 1}) +
                   Write("gw1", "grad", 1, "g1", "grad:1", GR_FLOAT) + Write("gw2", "grad", 1, "g3", "gw1", GR_FLOAT),
               {"gw2:0"}),
      Code::kInvalidArgument,
      "Could not aggregate to TensorArray index 1 because the existing shape is [2] but the new input shape "
      "is [3].");
}

TEST(TensorArrayTest, GradientArrayIsFoundAgainAndStopsForwardGrowth) {
  // A second GradV3 for the same source finds the same array.
  const std::string g = ForwardAndGrad(BoolAttr("dynamic_size", true)) + Floats("g1", {2}, {5, 6}) +
                        Write("gw", "grad", 1, "g1", "grad:1", GR_FLOAT) +
                        NodeText("grad2", "TensorArrayGradV3", {"ta", "gw"}, StrAttr("source", "gradients")) +
                        Read("gr", "grad2", 1, "grad2:1", GR_FLOAT) +
                        NodeText("other", "TensorArrayGradV3", {"ta", "gw"}, StrAttr("source", "gradients_1")) +
                        Size("on", "other", "other:1") + Write("grow", "ta", 3, "v", "grad:1", GR_FLOAT);
  auto s = Make(g);
  ASSERT_TRUE(s);
  auto out = MustRun(s.get(), {"gr:0", "on:0"});
  EXPECT_EQ(F(out[0]), (std::vector<float>{5, 6}));
  EXPECT_EQ(out[1].scalar<int32_t>(), 2);
  // After a gradient exists the forward array no longer grows.
  std::vector<Tensor> o;
  EXPECT_ERROR(RunOn(s.get(), {"grow:0"}, &o), Code::kInvalidArgument,
               "Tried to write to index 3 but array is not resizeable and size is: 2");
}

TEST(TensorArrayTest, GradWithShapePrependsToTheElementShape) {
  const std::string g = ForwardAndGrad() + ConstOf("pre", Vec({3})) +
                        NodeText("gs", "TensorArrayGradWithShape", {"ta", "w", "pre"}, StrAttr("source", "s")) +
                        Read("gz", "gs", 0, "gs:1", GR_FLOAT);
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g, {"gz:0"}, &out).ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{3, 2}));
  EXPECT_EQ(F(out[0]), std::vector<float>(6, 0.0f));
}

TEST(TensorArrayTest, GradientConcatReadsTheForwardSplitSize) {
  // Forward: split [3,1] into rows 1 / 2, then one more element written
  // (size 3). The gradient of the split is a Concat of the gradient array,
  // which covers the 2 split elements only (TF's marked size).
  const std::string g =
      Ta("ta", GR_FLOAT, 0, BoolAttr("dynamic_size", true)) + Floats("v", {3, 1}, {1, 2, 3}) +
      Split("sp", "ta", "v", {1, 2}, "ta:1", GR_FLOAT) + Floats("x", {1, 1}, {9}) +
      Write("w", "ta", 2, "x", "sp", GR_FLOAT) +
      NodeText("grad", "TensorArrayGradV3", {"ta", "w"}, StrAttr("source", "gradients")) + Floats("d0", {1, 1}, {10}) +
      Floats("d1", {2, 1}, {20, 30}) + Write("gw0", "grad", 0, "d0", "grad:1", GR_FLOAT) +
      Write("gw1", "grad", 1, "d1", "gw0", GR_FLOAT) + Concat("c", "grad", "gw1", GR_FLOAT) + Size("n", "grad", "gw1");
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g, {"c:0", "c:1", "n:0"}, &out).ok());
  EXPECT_EQ(F(out[0]), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(ToVector<int64_t>(out[1]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(out[2].scalar<int32_t>(), 3);
}

TEST(TensorArrayTest, NoGradientOfAnArrayThatSummedWrites) {
  const std::string g = ForwardAndGrad() + Floats("g1", {2}, {1, 1}) +
                        Write("gw1", "grad", 0, "g1", "grad:1", GR_FLOAT) +
                        Write("gw2", "grad", 0, "g1", "gw1", GR_FLOAT) +
                        NodeText("gg", "TensorArrayGradV3", {"grad", "gw2"}, StrAttr("source", "again"));
  EXPECT_ERROR(TryGraph(g, {"gg:1"}), Code::kInvalidArgument,
               "Unable to create a gradients TensorArray for ta_0@gradients.  Perhaps you used the "
               "multiple_writes_aggregate flag on a previous write?");
}

TEST(TensorArrayTest, StringBoolAndInt64Elements) {
  const std::string strs = Ta("ta", GR_STRING, 2) +
                           ConstNode("a", "DT_STRING", {2}, "string_val", {"\"x\"", "\"yz\""}) +
                           ConstNode("b", "DT_STRING", {2}, "string_val", {"\"\"", "\"long enough\""}) +
                           Write("w0", "ta", 0, "a", "ta:1", GR_STRING) + Write("w1", "ta", 1, "b", "w0", GR_STRING) +
                           Gather("g", "ta", {1, 0}, "w1", GR_STRING);
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(strs, {"g:0"}, &out).ok());
  ASSERT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  EXPECT_EQ(out[0].string_at(0), "");
  EXPECT_EQ(out[0].string_at(1), "long enough");
  EXPECT_EQ(out[0].string_at(2), "x");
  EXPECT_EQ(out[0].string_at(3), "yz");
  const std::string bools = Ta("ta", GR_BOOL, 2) + ConstOf("v", BoolTensor({2, 2}, {true, false, false, true})) +
                            Split("sp", "ta", "v", {1, 1}, "ta:1", GR_BOOL) + Read("r", "ta", 1, "sp", GR_BOOL);
  ASSERT_TRUE(TryGraph(bools, {"r:0"}, &out).ok());
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 2}));
  EXPECT_FALSE(out[0].data<bool>()[0]);
  EXPECT_TRUE(out[0].data<bool>()[1]);
  const std::string ints = Ta("ta", GR_INT64, 2) + ConstOf("v", Vec({1LL << 40, -7}, GR_INT64)) +
                           Scatter("sc", "ta", {1, 0}, "v", "ta:1", GR_INT64) +
                           Concat("c", "ta", "sc", GR_INT64);  // scalars: an error, then Gather instead
  EXPECT_ERROR(TryGraph(ints, {"c:0"}), Code::kInvalidArgument, "Concat saw a scalar shape");
  ASSERT_TRUE(TryGraph(ints + Gather("g", "ta", {0, 1}, "sc", GR_INT64), {"g:0"}, &out).ok());
  EXPECT_EQ(ToVector<int64_t>(out[0]), (std::vector<int64_t>{-7, 1LL << 40}));
  // Adding needs numbers.
  EXPECT_ERROR(TryGraph(Ta("ta", GR_BOOL, 1) + ConstOf("v", BoolTensor({1}, {true})) +
                            Write("w", "ta", 0, "v", "ta:1", GR_BOOL) +
                            NodeText("grad", "TensorArrayGradV3", {"ta", "w"}, StrAttr("source", "g")) +
                            Write("g1", "grad", 0, "v", "grad:1", GR_BOOL) + Write("g2", "grad", 0, "v", "g1", GR_BOOL),
                        {"g2:0"}),
               Code::kInvalidArgument, "bool values cannot be added");
}

TEST(TensorArrayTest, ManyUnorderedWritesThenGather) {
  // 64 writes with no order among them, run on two threads, then a gather
  // after all of them.
  std::string g = Ta("ta", GR_INT32, 64);
  std::vector<std::string> after;
  std::vector<int64_t> all;
  for (int i = 0; i < 64; ++i) {
    const std::string n = "w" + std::to_string(i);
    g += ConstOf(n + "/v", Vec({i * 10})) + Write(n, "ta", i, n + "/v", "ta:1", GR_INT32);
    after.push_back("^" + n);
    all.push_back(63 - i);
  }
  g += ConstOf("idx", Vec(all));
  std::vector<std::string> inputs = {"ta", "idx", "ta:1"};
  inputs.insert(inputs.end(), after.begin(), after.end());
  g += NodeText("g", "TensorArrayGatherV3", inputs, TAttr(GR_INT32, "dtype"));
  std::vector<Tensor> out;
  ASSERT_TRUE(TryGraph(g, {"g:0"}, &out).ok());
  ASSERT_EQ(DimsOf(out[0]), (Dims{64, 1}));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[0].data<int32_t>()[i], (63 - i) * 10);
}

// The DL4J graph (README item 28): Scatter of stack(in_0, in_1, in_2) into a
// dynamic int32 array of element shape [2,3], then three reads.
TEST(TensorArrayTest, Dl4jUnstackGraph) {
  const std::string path = SharedPath(
      "tf_testdata/dl4j-test-resources/tf_graphs/examples/tensor_array/unstack_sz3-1_int32_dynamic_name_shape/"
      "frozen_model.pb");
  if (path.empty()) GTEST_SKIP() << "tf_testdata not present";
  proto::GraphDef graph;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &graph).ok());
  // A fourth read of index 0 after the first: cleared, so it must fail.
  proto::NodeDef* again = graph.add_node();
  again->set_name("read_again");
  again->set_op("TensorArrayReadV3");
  for (const char* in : {"TensorArray", "TensorArrayReadV3/index",
                         "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3", "^TensorArrayReadV3"})
    again->add_input(in);
  (*again->mutable_attr())["dtype"].set_type(proto::DT_INT32);
  auto s = CreateSession(graph, 2);
  ASSERT_TRUE(s);
  const std::vector<std::string> reads = {"TensorArrayReadV3:0", "TensorArrayReadV3_1:0", "TensorArrayReadV3_2:0"};
  for (int run = 0; run < 2; ++run) {
    auto out = MustRun(s.get(), reads);
    ASSERT_EQ(out.size(), 3u);
    for (const Tensor& t : out) EXPECT_EQ(DimsOf(t), (Dims{2, 3}));
    EXPECT_EQ(ToVector<int32_t>(out[0]), (std::vector<int32_t>{7, 2, 9, 4, 3, 3}));
    EXPECT_EQ(ToVector<int32_t>(out[1]), (std::vector<int32_t>{8, 7, 0, 0, 6, 8}));
    EXPECT_EQ(ToVector<int32_t>(out[2]), (std::vector<int32_t>{7, 9, 0, 1, 1, 4}));
    std::vector<Tensor> o;
    EXPECT_ERROR(RunOn(s.get(), {"read_again:0"}, &o), Code::kInvalidArgument, "read_again",
                 "Could not read index 0 twice because it was cleared after a previous read");
  }
}

// ----------------------------------------------------------------- Stack

std::string StackNode(const std::string& name, DataType dt, int32_t max_size, const std::string& attrs = "") {
  return I32(name + "/max", max_size) + NodeText(name, "StackV2", {name + "/max"}, TAttr(dt, "elem_type") + attrs);
}
std::string Push(const std::string& name, const std::string& stack, const std::string& value, DataType dt,
                 const std::vector<std::string>& after = {}) {
  std::vector<std::string> inputs = {stack, value};
  for (const auto& a : after) inputs.push_back("^" + a);
  return NodeText(name, "StackPushV2", inputs, TAttr(dt) + BoolAttr("swap_memory", true));
}
std::string Pop(const std::string& name, const std::string& stack, DataType dt, const std::vector<std::string>& after) {
  std::vector<std::string> inputs = {stack};
  for (const auto& a : after) inputs.push_back("^" + a);
  return NodeText(name, "StackPopV2", inputs, TAttr(dt, "elem_type"));
}

// Pushes 1, [2,3], 4 (in that order) onto stack "st".
std::string ThreePushed(int32_t max_size = -1) {
  return StackNode("st", GR_FLOAT, max_size) + Floats("a", {}, {1}) + Floats("b", {2}, {2, 3}) + Floats("c", {}, {4}) +
         Push("p1", "st", "a", GR_FLOAT) + Push("p2", "st", "b", GR_FLOAT, {"p1"}) +
         Push("p3", "st", "c", GR_FLOAT, {"p2"});
}

TEST(StackTest, PushesAndPopsLastInFirstOut) {
  const std::string g = ThreePushed() + Pop("q1", "st", GR_FLOAT, {"p3"}) + Pop("q2", "st", GR_FLOAT, {"q1"}) +
                        Pop("q3", "st", GR_FLOAT, {"q2"}) + Pop("q4", "st", GR_FLOAT, {"q3"});
  auto s = Make(g);
  ASSERT_TRUE(s);
  for (int run = 0; run < 2; ++run) {  // a fresh stack each Run
    auto out = MustRun(s.get(), {"q1:0", "q2:0", "q3:0", "p2:0"});
    EXPECT_EQ(F(out[0]), (std::vector<float>{4}));
    EXPECT_EQ(F(out[1]), (std::vector<float>{2, 3}));
    EXPECT_EQ(DimsOf(out[1]), (Dims{2}));
    EXPECT_EQ(F(out[2]), (std::vector<float>{1}));
    EXPECT_EQ(F(out[3]), (std::vector<float>{2, 3}));  // a push outputs what it pushed
    std::vector<Tensor> o;
    EXPECT_ERROR(RunOn(s.get(), {"q4:0"}, &o), Code::kInvalidArgument, "q4",
                 "Stack[st_0] is empty when calling Pop().");
  }
}

TEST(StackTest, Errors) {
  EXPECT_ERROR(TryGraph(ThreePushed(2), {"p3:0"}), Code::kInvalidArgument, "Stack[st_0] overflowed its max_size (2)");
  std::vector<Tensor> out;
  EXPECT_TRUE(TryGraph(ThreePushed(3), {"p3:0"}, &out).ok());
  EXPECT_ERROR(
      TryGraph(StackNode("st", GR_FLOAT, -1) + ConstOf("i", IntScalar(1)) + Push("p", "st", "i", GR_INT32), {"p:0"}),
      Code::kInvalidArgument, "Must have type float but got int32");
  EXPECT_ERROR(TryGraph(ThreePushed() + Pop("q", "st", GR_INT32, {"p3"}), {"q:0"}), Code::kInvalidArgument,
               "Must have type int32 but got float");
  const std::string closed = ThreePushed() + NodeText("close", "StackCloseV2", {"st", "^p3"}, "") +
                             Pop("q", "st", GR_FLOAT, {"close"}) + Push("p", "st", "a", GR_FLOAT, {"close"});
  auto s = Make(closed);
  ASSERT_TRUE(s);
  EXPECT_ERROR(RunOn(s.get(), {"q:0"}, &out), Code::kInvalidArgument, "Stack[st_0] has already been closed.");
  EXPECT_ERROR(RunOn(s.get(), {"p:0"}, &out), Code::kInvalidArgument, "Stack[st_0] has already been closed.");
  EXPECT_TRUE(RunOn(s.get(), {}, &out, {"close"}).ok());
  // stack_name names it; a TensorArray handle is no stack.
  EXPECT_ERROR(
      TryGraph(StackNode("st", GR_FLOAT, 1, StrAttr("stack_name", "mine")) + Pop("q", "st", GR_FLOAT, {}), {"q:0"}),
      Code::kInvalidArgument, "Stack[mine_0] is empty");
  EXPECT_ERROR(TryGraph(Ta("ta", GR_FLOAT, 1) + Pop("q", "ta", GR_FLOAT, {}), {"q:0"}), Code::kInvalidArgument,
               "is a TensorArray, not a Stack");
}

}  // namespace
}  // namespace graphrt
