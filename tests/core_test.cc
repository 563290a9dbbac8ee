// Core data structures: OpDef spec parsing, tensors, GraphDef import.
#include <gtest/gtest.h>

#include "graphrt/core/graph.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/tensor.pb.h"
#include "test_util.h"

namespace graphrt {
namespace {

Status Build(std::vector<const char*> inputs, std::vector<const char*> outputs, std::vector<const char*> attrs,
             proto::OpDef* out) {
  GR_OpSpec spec{};
  spec.struct_size = sizeof(spec);
  spec.name = "Test";
  spec.inputs = inputs.data();
  spec.num_inputs = static_cast<int32_t>(inputs.size());
  spec.outputs = outputs.data();
  spec.num_outputs = static_cast<int32_t>(outputs.size());
  spec.attrs = attrs.data();
  spec.num_attrs = static_cast<int32_t>(attrs.size());
  return BuildOpDef(spec, out);
}

TEST(OpDefBuilder, ParsesAttrKindsWithWhitespace) {
  proto::OpDef d;
  ASSERT_TRUE(Build({}, {}, {"a:string", "A: int", "a1 :float", "a_a : bool", "aB  :  type", "aB_3\t: shape",
                             "t: tensor", "XYZ\t:\tlist(type)", "f: func"},
                    &d)
                  .ok());
  ASSERT_EQ(d.attr_size(), 9);
  EXPECT_EQ(d.attr(1).name(), "A");
  EXPECT_EQ(d.attr(1).type(), "int");
  EXPECT_EQ(d.attr(5).type(), "shape");
  EXPECT_EQ(d.attr(7).type(), "list(type)");
}

TEST(OpDefBuilder, RestrictionsMinimaAndDefaults) {
  proto::OpDef d;
  Status s = Build({}, {}, {"a:{string,int32}", "b: {'X', \"yz\"}", "i: int >= -5", "f: float = 1.25",
                            "s: string = 'foo'", "l: list(int) = [0, -1, 2]", "e: list(int) = [ ]",
                            "sh: shape = { dim { size: -1 } dim { size: 4 } }", "n: numbertype"},
                   &d);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(d.attr(0).type(), "type");
  ASSERT_EQ(d.attr(0).allowed_values().list().type_size(), 2);
  EXPECT_EQ(d.attr(0).allowed_values().list().type(1), proto::DT_INT32);
  EXPECT_EQ(d.attr(1).type(), "string");
  EXPECT_EQ(d.attr(1).allowed_values().list().s(1), "yz");
  EXPECT_TRUE(d.attr(2).has_minimum());
  EXPECT_EQ(d.attr(2).minimum(), -5);
  EXPECT_FLOAT_EQ(d.attr(3).default_value().f(), 1.25f);
  EXPECT_EQ(d.attr(4).default_value().s(), "foo");
  EXPECT_EQ(d.attr(5).default_value().list().i(1), -1);
  EXPECT_TRUE(d.attr(6).default_value().has_list());
  EXPECT_EQ(d.attr(6).default_value().list().i_size(), 0);
  EXPECT_EQ(d.attr(7).default_value().shape().dim(1).size(), 4);
  EXPECT_GT(d.attr(8).allowed_values().list().type_size(), 10);
}

TEST(OpDefBuilder, ArgsNumberAndListAttrs) {
  proto::OpDef d;
  ASSERT_TRUE(Build({"a: T", "b: N * int32", "c: Tl", "d: Ref(bool)"}, {"o: T"},
                    {"T: type", "N: int", "Tl: list(type)"}, &d)
                  .ok());
  EXPECT_EQ(d.input_arg(0).type_attr(), "T");
  EXPECT_EQ(d.input_arg(1).number_attr(), "N");
  EXPECT_EQ(d.input_arg(1).type(), proto::DT_INT32);
  EXPECT_EQ(d.input_arg(2).type_list_attr(), "Tl");
  EXPECT_TRUE(d.input_arg(3).is_ref());
  EXPECT_EQ(d.input_arg(3).type(), proto::DT_BOOL);
  // Counted and listed args imply a minimum of one.
  EXPECT_TRUE(d.attr(1).has_minimum());
  EXPECT_EQ(d.attr(1).minimum(), 1);
  EXPECT_EQ(d.attr(2).minimum(), 1);
}

TEST(OpDefBuilder, ErrorsNameTheProblem) {
  proto::OpDef d;
  auto msg = [&](std::vector<const char*> in, std::vector<const char*> attrs) {
    Status s = Build(in, {}, attrs, &d);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  EXPECT_NE(msg({}, {"_:string"}).find("Trouble parsing '<name>:'"), std::string::npos);
  EXPECT_NE(msg({}, {"9:string"}).find("Trouble parsing"), std::string::npos);
  EXPECT_NE(msg({}, {"a:invalid"}).find("Trouble parsing type string at 'invalid'"), std::string::npos);
  EXPECT_NE(msg({}, {"a:{}"}).find("Trouble parsing type string at '}'"), std::string::npos);
  EXPECT_NE(msg({}, {"a:{invalid}"}).find("Unrecognized type string 'invalid'"), std::string::npos);
  EXPECT_NE(msg({}, {"i: int >= a"}).find("Could not parse integer lower limit after '>='"), std::string::npos);
  EXPECT_NE(msg({}, {"i: int >= 9223372036854775808"}).find("Could not parse integer lower limit"),
            std::string::npos);
  EXPECT_NE(msg({}, {"a:int=\"foo\""}).find("Could not parse default value '\"foo\"'"), std::string::npos);
  EXPECT_NE(msg({"a: x"}, {}).find("Reference to unknown attr 'x'"), std::string::npos);
  EXPECT_NE(msg({"a: x"}, {"x: int"}).find("that isn't type or list(type)"), std::string::npos);
  EXPECT_NE(msg({"a: Ref(int32"}, {}).find("Did not find closing ')' for 'Ref('"), std::string::npos);
  EXPECT_NE(msg({"CAPS: int32"}, {}).find("Trouble parsing 'name:'"), std::string::npos);
}

TEST(DataTypes, ElementSizesAreTensorFlows) {
  // Element sizes of TensorFlow's fixed-size dtypes; 0 for the others.
  const std::pair<DataType, size_t> sizes[] = {
      {GR_FLOAT, 4},     {GR_DOUBLE, 8},     {GR_INT32, 4},   {GR_UINT8, 1},     {GR_INT16, 2},
      {GR_INT8, 1},      {GR_STRING, 0},     {GR_COMPLEX64, 8}, {GR_INT64, 8},   {GR_BOOL, 1},
      {GR_QINT8, 1},     {GR_QUINT8, 1},     {GR_QINT32, 4},  {GR_BFLOAT16, 2},  {GR_QINT16, 2},
      {GR_QUINT16, 2},   {GR_UINT16, 2},     {GR_COMPLEX128, 16}, {GR_HALF, 2},  {GR_RESOURCE, 0},
      {GR_VARIANT, 0},   {GR_UINT32, 4},     {GR_UINT64, 8},  {GR_INVALID, 0}};
  for (const auto& [dtype, size] : sizes) {
    EXPECT_EQ(DataTypeSize(dtype), size) << DataTypeString(dtype);
    EXPECT_EQ(DataTypeIsPod(dtype), size > 0) << DataTypeString(dtype);
  }
}

// Reference types are base + 100 (types.proto): each has its enumerator,
// its names, and no element size of its own.
TEST(DataTypes, ReferenceTypesRoundTrip) {
  EXPECT_EQ(MakeRefType(GR_FLOAT), GR_FLOAT_REF);
  EXPECT_EQ(MakeRefType(GR_UINT64), GR_UINT64_REF);
  EXPECT_EQ(BaseType(GR_INT32_REF), GR_INT32);
  EXPECT_TRUE(IsRefType(GR_BOOL_REF));
  EXPECT_FALSE(IsRefType(GR_UINT64));
  EXPECT_EQ(DataTypeString(GR_FLOAT_REF), "float_ref");
  EXPECT_EQ(DataTypeEnumName(GR_HALF_REF), "DT_HALF_REF");
  DataType parsed = GR_INVALID;
  ASSERT_TRUE(DataTypeFromString("DT_INT64_REF", &parsed));
  EXPECT_EQ(parsed, GR_INT64_REF);
}

TEST(TensorShape, CopyMoveAndHeapRanks) {
  const TensorShape small({2, 3, 4});
  TensorShape moved(TensorShape({2, 3, 4}));
  EXPECT_EQ(moved, small);
  EXPECT_EQ(moved.num_elements(), 24);
  const std::vector<int64_t> big_dims = {2, 1, 3, 1, 2, 1, 2, 5};  // rank 8 > inline rank
  TensorShape big(big_dims);
  TensorShape big_copy = big;
  EXPECT_EQ(big_copy.dim_sizes(), big_dims);
  EXPECT_EQ(big_copy.num_elements(), 120);
  TensorShape big_moved = std::move(big_copy);
  EXPECT_EQ(big_moved.dim_sizes(), big_dims);
  EXPECT_EQ(big_copy.rank(), 0);  // NOLINT: a moved-from shape is a scalar
  EXPECT_EQ(big_copy.num_elements(), 1);
  big_moved = small;  // heap -> inline
  EXPECT_EQ(big_moved, small);
  moved = big;  // inline -> heap
  EXPECT_EQ(moved.dim_sizes(), big_dims);
}

TEST(Tensor, FromProtoRepeatsLastValueAndChecksSizes) {
  proto::TensorProto p;
  p.set_dtype(proto::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(5);
  p.add_float_val(1.5f);
  p.add_float_val(2.5f);
  Tensor t;
  ASSERT_TRUE(Tensor::FromProto(p, &t).ok());
  EXPECT_EQ(testing::ToVector<float>(t), (std::vector<float>{1.5f, 2.5f, 2.5f, 2.5f, 2.5f}));

  proto::TensorProto c;
  c.set_dtype(proto::DT_INT32);
  c.mutable_tensor_shape()->add_dim()->set_size(2);
  c.set_tensor_content(std::string("\x01\x00\x00\x00\x02\x00\x00", 7));
  Status s = Tensor::FromProto(c, &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("7 bytes"), std::string::npos);

  proto::TensorProto zeros;
  zeros.set_dtype(proto::DT_INT64);
  zeros.mutable_tensor_shape()->add_dim()->set_size(3);
  ASSERT_TRUE(Tensor::FromProto(zeros, &t).ok());
  EXPECT_EQ(testing::ToVector<int64_t>(t), (std::vector<int64_t>{0, 0, 0}));
}

TEST(Tensor, ProtoRoundTripAndStrings) {
  Tensor t = testing::MakeTensor<double>(GR_DOUBLE, {2, 2}, {1, -2, 3.5, 4});
  proto::TensorProto p;
  t.AsProtoTensorContent(&p);
  Tensor back;
  ASSERT_TRUE(Tensor::FromProto(p, &back).ok());
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(testing::ToVector<double>(back), testing::ToVector<double>(t));

  Tensor s(GR_STRING, TensorShape({2}));
  s.set_string(0, "hello");
  s.set_string(1, std::string("a\0b", 3));
  s.AsProtoTensorContent(&p);
  ASSERT_TRUE(Tensor::FromProto(p, &back).ok());
  EXPECT_EQ(back.string_at(0), "hello");
  EXPECT_EQ(back.string_at(1), std::string("a\0b", 3));
}

TEST(Tensor, ReshapeAndSliceShareTheBuffer) {
  Tensor t = testing::MakeTensor<float>(GR_FLOAT, {3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor r;
  ASSERT_TRUE(t.Reshaped(TensorShape({2, 3}), &r).ok());
  EXPECT_TRUE(r.SharesBufferWith(t));
  EXPECT_FALSE(t.Reshaped(TensorShape({4}), &r).ok());
  Tensor s = t.Slice(1, 3);
  EXPECT_EQ(s.shape(), TensorShape({2, 2}));
  EXPECT_EQ(testing::ToVector<float>(s), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
}

class GraphImport : public ::testing::Test {
 protected:
  void SetUp() override { testing::LoadStandardPlugins(); }
  Status Import(const std::string& text, Graph* g) {
    proto::GraphDef def;
    Status s = ParseGraphDefText(text, &def);
    if (!s.ok()) return s;
    return ConvertGraphDefToGraph(def, g);
  }
  Graph graph_{&Runtime::Global().ops()};
};

constexpr char kPh[] = "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } } ";

TEST_F(GraphImport, SourceSinkAndRoundTrip) {
  Graph empty(&Runtime::Global().ops());
  EXPECT_EQ(empty.num_node_ids(), 2);
  EXPECT_EQ(empty.source_node()->name(), "_SOURCE");
  EXPECT_EQ(empty.sink_node()->id(), 1);
  ASSERT_TRUE(Import(std::string(kPh) +
                         "node { name: 'b' op: 'Neg' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } } "
                         "node { name: 'c' op: 'NoOp' input: '^b' }",
                     &graph_)
                  .ok());
  EXPECT_EQ(graph_.num_op_nodes(), 3);
  proto::GraphDef out;
  graph_.ToGraphDef(&out);
  ASSERT_EQ(out.node_size(), 3);
  EXPECT_EQ(out.node(1).input(0), "a");
  EXPECT_EQ(out.node(2).input(0), "^b");
  // Defaults were filled in (Placeholder's shape).
  EXPECT_TRUE(out.node(0).attr().count("shape"));
}

TEST_F(GraphImport, ErrorsNameTheNode) {
  auto err = [&](const std::string& text) {
    Graph g(&Runtime::Global().ops());
    Status s = Import(text, &g);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  EXPECT_NE(err("node { name: 'a:b' op: 'NoOp' }").find("Node 'a:b': Node name contains invalid characters"),
            std::string::npos);
  EXPECT_NE(err("node { name: '_abc' op: 'NoOp' }").find("invalid characters"), std::string::npos);
  EXPECT_NE(err(std::string(kPh) + "node { name: 'n' op: 'Neg' input: 'W999' attr { key: 'T' value { type: DT_FLOAT } } }")
                .find("Unknown input node 'W999'"),
            std::string::npos);
  EXPECT_NE(err(std::string(kPh) + "node { name: 'n' op: 'Neg' input: 'a:1' attr { key: 'T' value { type: DT_FLOAT } } }")
                .find("Connecting to invalid output 1 of source node a"),
            std::string::npos);
  EXPECT_NE(err(std::string(kPh) + "node { name: 'n' op: 'Neg' input: 'a' attr { key: 'T' value { type: DT_INT32 } } }")
                .find("Input 0 of node n was passed float from a:0 incompatible with expected int32."),
            std::string::npos);
  EXPECT_NE(err(std::string(kPh) + "node { name: 'n' op: 'AddV2' input: 'a' input: '^a' input: 'a' "
                                   "attr { key: 'T' value { type: DT_FLOAT } } }")
                .find("Control dependencies must come after regular dependencies"),
            std::string::npos);
  EXPECT_NE(err("node { name: 't1' op: 'Neg' input: 't2' attr { key: 'T' value { type: DT_FLOAT } } }"
                "node { name: 't2' op: 'Neg' input: 't1' attr { key: 'T' value { type: DT_FLOAT } } }")
                .find("cycle"),
            std::string::npos);
  EXPECT_NE(err("node { name: 'x' op: 'NoSuchOp' }").find("Op type not registered 'NoSuchOp'"), std::string::npos);
  EXPECT_NE(err("node { name: 'x' op: 'Neg' attr { key: 'T' value { type: DT_STRING } } }")
                .find("not in the list of allowed values"),
            std::string::npos);
  EXPECT_NE(err("node { name: 'x' op: 'Neg' }").find("missing attr 'T'"), std::string::npos);
  EXPECT_NE(err("versions { producer: -1 }").find("GraphDef version -1 is no longer supported"), std::string::npos);
}

TEST_F(GraphImport, EmptyGraphAndHyphenNamesAreFine) {
  EXPECT_TRUE(Import("", &graph_).ok());
  EXPECT_TRUE(Import("node { name: 'a-bc_' op: 'NoOp' }", &graph_).ok());
}

// Graphs built node by node (the TF C API's TF_FinishOperation path).
class GraphBuild : public GraphImport {
 protected:
  static proto::NodeDef Def(const std::string& name, const std::string& op,
                            std::initializer_list<std::pair<const char*, proto::DataType>> types = {}) {
    proto::NodeDef d;
    d.set_name(name);
    d.set_op(op);
    for (const auto& [attr, t] : types) (*d.mutable_attr())[attr].set_type(t);
    return d;
  }
  Node* Add(proto::NodeDef d, std::vector<std::pair<Node*, int>> in = {}, std::vector<Node*> control = {}) {
    Node* n = nullptr;
    Status s = AddNodeWithInputs(std::move(d), in, control, &graph_, &n);
    EXPECT_TRUE(s.ok()) << s;
    return n;
  }
  Status TryAdd(proto::NodeDef d, std::vector<std::pair<Node*, int>> in) {
    Node* n;
    return AddNodeWithInputs(std::move(d), in, {}, &graph_, &n);
  }
};

TEST_F(GraphBuild, WiresEdgesSourceAndSinkAndFillsInputs) {
  Node* a = Add(Def("a", "Placeholder", {{"dtype", proto::DT_FLOAT}}));
  Node* b = Add(Def("b", "Neg", {{"T", proto::DT_FLOAT}}), {{a, 0}});
  Node* c = Add(Def("c", "NoOp"), {}, {b});
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(b->def().input(0), "a");
  EXPECT_EQ(c->def().input(0), "^b");
  EXPECT_EQ(b->input_edge(0)->src(), a);
  // a hangs from _SOURCE, c (no inputs but a control one) does not; all reach _SINK.
  auto has_edge = [](Node* from, Node* to) {
    for (const Edge* e : from->out_edges())
      if (e->dst() == to) return true;
    return false;
  };
  EXPECT_TRUE(has_edge(graph_.source_node(), a));
  EXPECT_FALSE(has_edge(graph_.source_node(), c));
  EXPECT_TRUE(has_edge(c, graph_.sink_node()));
  // Defaults were added (Placeholder's shape), and the graph converts back.
  EXPECT_TRUE(a->def().attr().count("shape"));
  proto::GraphDef out;
  graph_.ToGraphDef(&out);
  Graph again(&Runtime::Global().ops());
  EXPECT_TRUE(ConvertGraphDefToGraph(out, &again).ok());
  EXPECT_EQ(again.num_op_nodes(), 3);
}

TEST_F(GraphBuild, RefusesWithoutChangingTheGraph) {
  Node* a = Add(Def("a", "Placeholder", {{"dtype", proto::DT_FLOAT}}));
  const int before = graph_.num_op_nodes();
  EXPECT_NE(TryAdd(Def("bad name", "NoOp"), {}).message().find("invalid characters"), std::string::npos);
  EXPECT_NE(TryAdd(Def("n", "Neg", {{"T", proto::DT_INT32}}), {{a, 0}})
                .message()
                .find("Input 0 of node n was passed float from a:0 incompatible with expected int32."),
            std::string::npos);
  EXPECT_NE(TryAdd(Def("n", "Neg", {{"T", proto::DT_FLOAT}}), {}).message().find("expects 1 inputs but has 0"),
            std::string::npos);
  EXPECT_NE(TryAdd(Def("n", "Neg", {{"T", proto::DT_FLOAT}}), {{a, 1}}).message().find("invalid output 1"),
            std::string::npos);
  EXPECT_NE(TryAdd(Def("n", "NoSuchOp"), {}).message().find("Op type not registered 'NoSuchOp'"), std::string::npos);
  EXPECT_EQ(graph_.num_op_nodes(), before);
  EXPECT_EQ(a->out_edges().size(), 1u);  // its _SINK edge only
}

TEST_F(GraphBuild, ArgRangesOfListsAndSingles) {
  Node* a = Add(Def("a", "Placeholder", {{"dtype", proto::DT_FLOAT}}));
  proto::NodeDef cd = Def("c", "Const", {{"dtype", proto::DT_INT32}});
  Tensor axis = testing::MakeTensor<int32_t>(GR_INT32, {}, {0});
  axis.AsProtoTensorContent((*cd.mutable_attr())["value"].mutable_tensor());
  Node* c = Add(cd);
  proto::NodeDef concat = Def("cat", "ConcatV2", {{"T", proto::DT_FLOAT}, {"Tidx", proto::DT_INT32}});
  (*concat.mutable_attr())["N"].set_i(3);
  Node* cat = Add(concat, {{a, 0}, {a, 0}, {a, 0}, {c, 0}});
  int begin = -1, end = -1;
  ASSERT_TRUE(NodeArgRange(*cat, "values", false, &begin, &end).ok());
  EXPECT_EQ(begin, 0);
  EXPECT_EQ(end, 3);
  ASSERT_TRUE(NodeArgRange(*cat, "axis", false, &begin, &end).ok());
  EXPECT_EQ(begin, 3);
  EXPECT_EQ(end, 4);
  ASSERT_TRUE(NodeArgRange(*cat, "output", true, &begin, &end).ok());
  EXPECT_EQ(end - begin, 1);
  EXPECT_NE(NodeArgRange(*cat, "nope", false, &begin, &end).message().find("no input arg named 'nope'"),
            std::string::npos);
}

TEST_F(GraphBuild, OneNodeShapeInferenceReadsConstInputs) {
  Node* x = Add(Def("x", "Placeholder", {{"dtype", proto::DT_FLOAT}}));
  proto::NodeDef cd = Def("shape", "Const", {{"dtype", proto::DT_INT32}});
  testing::MakeTensor<int32_t>(GR_INT32, {2}, {3, -1}).AsProtoTensorContent((*cd.mutable_attr())["value"].mutable_tensor());
  Node* shape = Add(cd);
  Node* r = Add(Def("r", "Reshape", {{"T", proto::DT_FLOAT}, {"Tshape", proto::DT_INT32}}), {{x, 0}, {shape, 0}});
  std::unique_ptr<Tensor> value = ConstValueForShapeInference(*shape);
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(ConstValueForShapeInference(*x), nullptr);
  std::vector<PartialTensorShape> out;
  // [2,3] reshaped to [3,-1] is [3,2] (the shape function reads the Const).
  ASSERT_TRUE(InferNodeShapes(graph_, *r, {PartialTensorShape({2, 3}), PartialTensorShape({2})},
                              {nullptr, value.get()}, HostAllocator(), &out)
                  .ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].DebugString(), "[3,2]");
  // Without the value only the rank is known.
  ASSERT_TRUE(InferNodeShapes(graph_, *r, {PartialTensorShape({2, 3}), PartialTensorShape({2})}, {nullptr, nullptr},
                              HostAllocator(), &out)
                  .ok());
  EXPECT_EQ(out[0].DebugString(), "[?,?]");
  // 6 elements do not reshape to [4,-1]: the error names the node.
  proto::NodeDef bad = cd;
  bad.set_name("bad_shape");
  testing::MakeTensor<int32_t>(GR_INT32, {2}, {4, -1}).AsProtoTensorContent((*bad.mutable_attr())["value"].mutable_tensor());
  Node* bad_shape = Add(bad);
  std::unique_ptr<Tensor> bad_value = ConstValueForShapeInference(*bad_shape);
  Status s = InferNodeShapes(graph_, *r, {PartialTensorShape({2, 3}), PartialTensorShape({2})},
                             {nullptr, bad_value.get()}, HostAllocator(), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Node 'r'"), std::string::npos) << s;
}

TEST(PartialTensorShapeMerge, TakesWhatEitherKnowsAndNamesConflicts) {
  PartialTensorShape out;
  ASSERT_TRUE(PartialTensorShape({-1, 5}).MergeWith(PartialTensorShape({3, -1}), &out).ok());
  EXPECT_EQ(out.DebugString(), "[3,5]");
  ASSERT_TRUE(PartialTensorShape().MergeWith(PartialTensorShape({2}), &out).ok());
  EXPECT_EQ(out.DebugString(), "[2]");
  ASSERT_TRUE(PartialTensorShape({2}).MergeWith(PartialTensorShape(), &out).ok());
  EXPECT_EQ(out.DebugString(), "[2]");
  Status s = PartialTensorShape({-1, 5}).MergeWith(PartialTensorShape({3, 6}), &out);
  EXPECT_NE(s.message().find("Dimension 1 in both shapes must be equal, but are 5 and 6. Shapes are [?,5] and [3,6]."),
            std::string::npos)
      << s;
  s = PartialTensorShape({1}).MergeWith(PartialTensorShape({1, 1}), &out);
  EXPECT_NE(s.message().find("Shapes must be equal rank, but are 1 and 2"), std::string::npos) << s;
}

}  // namespace
}  // namespace graphrt
