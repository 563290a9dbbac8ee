// TensorFlow's C API for building graphs operation by operation and for
// inspecting them (graphrt/tf_c_api.h): descriptions, attr setters and
// getters, TF_FinishOperation with TensorFlow's NodeBuilder attr inference
// and the ops' shape functions (its shape refiner), tensor shapes, inputs,
// consumers and control edges, OpDefs. Every entry point catches C++
// exceptions and answers a status (or NULL) instead.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "c_api_internal.h"
#include "graphrt/core/gradients.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/op_def.pb.h"
#include "tf_c_internal.h"

// Operation being built: TF_FinishOperation turns it into a node.
struct TF_OperationDescription {
  TF_Graph* graph = nullptr;
  graphrt::proto::NodeDef def;  // name, op, device and the attrs set
  // One per TF_AddInput (single) or TF_AddInputList (list) call, in order:
  // they are matched to the OpDef's input args at TF_FinishOperation.
  struct InputArg {
    bool is_list = false;
    std::vector<TF_Output> tensors;
  };
  std::vector<InputArg> inputs;
  std::vector<TF_Operation*> control_inputs;
  std::set<std::string> colocate_with;  // operation names
  graphrt::Status error;               // the first failure of a setter without a status
};

namespace {

using graphrt::Node;
using graphrt::Status;
using graphrt::c_api_internal::Call;
using graphrt::c_api_internal::LoadDefaultPlugins;
using graphrt::c_api_internal::NullArgument;
using graphrt::c_api_internal::ParseProto;
using graphrt::proto::AttrValue;
using graphrt::tf_c::FillBuffer;
using graphrt::tf_c::kNoStatus;
namespace errors = graphrt::errors;

// "Node 'name' (op 'Op')", as the core names nodes in its errors.
std::string NodeText(const graphrt::proto::NodeDef& def) {
  return "Node '" + def.name() + "' (op '" + def.op() + "')";
}

TF_DataType ToTF(graphrt::DataType t) { return static_cast<TF_DataType>(static_cast<int>(t)); }

// ---- Descriptions ----

// Records a setter's failure for TF_FinishOperation (the first one wins).
void Fail(TF_OperationDescription* desc, Status s) {
  if (desc->error.ok()) desc->error = std::move(s);
}

// Sets attr `attr_name` to what make(AttrValue*) builds; failures go to
// `status`, or to the description when the setter has no status.
template <typename F>
void SetAttr(TF_OperationDescription* desc, const char* fn, const char* attr_name, TF_Status* status, F&& make) {
  if (desc == nullptr) {
    Call(status, fn, [&] { return NullArgument(fn, "desc"); });
    return;
  }
  const Status s = graphrt::StatusFromExceptions(fn, [&]() -> Status {
    if (attr_name == nullptr) return NullArgument(fn, "attr_name");
    AttrValue v;
    GR_RETURN_IF_ERROR(make(&v));
    (*desc->def.mutable_attr())[attr_name] = std::move(v);
    return Status::OK();
  });
  if (status != nullptr) {
    Call(status, fn, [&] { return s; });
  } else if (!s.ok()) {
    Fail(desc, Status(s.code(), s.message() + " (attr '" + (attr_name ? attr_name : "") + "' of node '" +
                                    desc->def.name() + "')"));
  }
}

// A list argument: NULL values only when there are none.
Status CheckList(const char* fn, const void* values, int num_values) {
  if (num_values < 0) return errors::InvalidArgument(fn, ": num_values is negative (", num_values, ")");
  if (num_values > 0 && values == nullptr) return NullArgument(fn, "values");
  return Status::OK();
}

// A shape from TF_SetAttrShape / TF_GraphSetTensorShape's arguments.
Status ShapeFromDims(const char* fn, const int64_t* dims, int num_dims, graphrt::PartialTensorShape* out) {
  if (num_dims < 0) {
    *out = graphrt::PartialTensorShape();
    return Status::OK();
  }
  if (num_dims > graphrt::TensorShape::kMaxRank)
    return errors::InvalidArgument(fn, ": rank ", num_dims, " is over the limit of ", graphrt::TensorShape::kMaxRank);
  if (num_dims > 0 && dims == nullptr) return NullArgument(fn, "dims");
  std::vector<int64_t> d(dims, dims + num_dims);
  for (int i = 0; i < num_dims; ++i) {
    if (d[i] < -1) return errors::InvalidArgument(fn, ": dimension ", i, " is ", d[i], " (-1 means unknown)");
  }
  *out = graphrt::PartialTensorShape(std::move(d));
  return Status::OK();
}

// The operation `oper` of graph `g`, or an error naming what the caller
// passed (an operation of another graph is refused, as TensorFlow does).
Status CheckOperation(const char* fn, const TF_Graph* g, const TF_Operation* oper, const std::string& what) {
  if (oper == nullptr) return errors::InvalidArgument(fn, ": ", what, " has a NULL operation");
  auto it = g->by_name.find(oper->node->name());
  if (it == g->by_name.end() || it->second != oper)
    return errors::InvalidArgument(fn, ": ", what, ": operation '", oper->node->name(),
                                   "' is not in the graph it is used with");
  return Status::OK();
}

// Sets attr `name` of `def` to `value`, or checks that the value already
// set agrees (TensorFlow's NodeBuilder: "Inconsistent values for attr").
Status SetOrCheckAttr(graphrt::proto::NodeDef* def, const std::string& name, const AttrValue& value,
                      const std::string& (*show)(const AttrValue&, std::string*)) {
  auto it = def->attr().find(name);
  if (it == def->attr().end()) {
    (*def->mutable_attr())[name] = value;
    return Status::OK();
  }
  if (it->second.SerializeAsString() == value.SerializeAsString()) return Status::OK();
  std::string a, b;
  return errors::InvalidArgument(NodeText(*def), ": Inconsistent values for attr '", name, "' ", show(it->second, &a),
                                 " vs. ", show(value, &b));
}

const std::string& ShowAttr(const AttrValue& v, std::string* scratch) {
  switch (v.value_case()) {
    case AttrValue::kType:
      *scratch = graphrt::DataTypeEnumName(static_cast<graphrt::DataType>(v.type()));
      break;
    case AttrValue::kI:
      *scratch = std::to_string(v.i());
      break;
    case AttrValue::kList: {
      *scratch = "[";
      for (int i = 0; i < v.list().type_size(); ++i) {
        if (i) *scratch += ", ";
        *scratch += graphrt::DataTypeEnumName(static_cast<graphrt::DataType>(v.list().type(i)));
      }
      *scratch += "]";
      break;
    }
    default:
      *scratch = v.ShortDebugString();
  }
  return *scratch;
}

// Matches the description's inputs to the OpDef's input args and infers
// the type, length and type-list attrs they determine (TensorFlow's
// NodeBuilder); `flat` gets the inputs in order.
Status InferAttrsFromInputs(const graphrt::proto::OpDef& op, const TF_OperationDescription& d,
                            graphrt::proto::NodeDef* def, std::vector<std::pair<Node*, int>>* flat) {
  if (static_cast<int>(d.inputs.size()) != op.input_arg_size())
    return errors::InvalidArgument(NodeText(*def), ": ", d.inputs.size(), " inputs specified of ",
                                   op.input_arg_size(), " inputs in Op");
  for (int i = 0; i < op.input_arg_size(); ++i) {
    const graphrt::proto::OpDef::ArgDef& arg = op.input_arg(i);
    const TF_OperationDescription::InputArg& in = d.inputs[i];
    const bool list_arg = !arg.number_attr().empty() || !arg.type_list_attr().empty();
    if (list_arg && !in.is_list)
      return errors::InvalidArgument(NodeText(*def), ": Single tensor passed to '", arg.name(),
                                     "', expected list (TF_AddInputList)");
    if (!list_arg && in.is_list)
      return errors::InvalidArgument(NodeText(*def), ": List provided to input '", arg.name(),
                                     "' when single Tensor expected (TF_AddInput)");
    AttrValue types;
    for (const TF_Output& t : in.tensors) {
      if (t.index < 0 || t.index >= t.oper->node->num_outputs())
        return errors::InvalidArgument(NodeText(*def), ": input '", arg.name(), "' names output ", t.index,
                                       " of '", t.oper->node->name(), "', which has ",
                                       t.oper->node->num_outputs(), " outputs");
      // A ref output feeds a value input of its base type; the attr is that.
      types.mutable_list()->add_type(
          static_cast<graphrt::proto::DataType>(graphrt::BaseType(t.oper->node->output_type(t.index))));
      flat->emplace_back(t.oper->node, t.index);
    }
    if (!arg.number_attr().empty()) {
      AttrValue n;
      n.set_i(static_cast<int64_t>(in.tensors.size()));
      GR_RETURN_IF_ERROR(SetOrCheckAttr(def, arg.number_attr(), n, ShowAttr));
    }
    if (!arg.type_attr().empty()) {
      for (int k = 0; k < types.list().type_size(); ++k) {
        AttrValue t;
        t.set_type(types.list().type(k));
        GR_RETURN_IF_ERROR(SetOrCheckAttr(def, arg.type_attr(), t, ShowAttr));
      }
    }
    if (!arg.type_list_attr().empty()) GR_RETURN_IF_ERROR(SetOrCheckAttr(def, arg.type_list_attr(), types, ShowAttr));
  }
  return Status::OK();
}

// ---- Attr getters ----

// The attr `attr_name` of `oper`; errors name both.
Status FindAttr(const char* fn, TF_Operation* oper, const char* attr_name, const AttrValue** out) {
  if (oper == nullptr) return NullArgument(fn, "oper");
  if (attr_name == nullptr) return NullArgument(fn, "attr_name");
  const auto& attrs = oper->node->def().attr();
  auto it = attrs.find(attr_name);
  if (it == attrs.end())
    return errors::InvalidArgument("Operation '", oper->node->name(), "' has no attr named '", attr_name, "'.");
  *out = &it->second;
  return Status::OK();
}

Status WrongKind(TF_Operation* oper, const char* attr_name, const char* want) {
  return errors::InvalidArgument("Attr '", attr_name, "' of operation '", oper->node->name(), "' is not ", want);
}

// Runs get(const AttrValue&) on a scalar attr of value case `kind`.
template <typename F>
void GetScalar(const char* fn, TF_Operation* oper, const char* attr_name, AttrValue::ValueCase kind, const char* want,
               TF_Status* status, F&& get) {
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (v->value_case() != kind) return WrongKind(oper, attr_name, want);
    get(*v);
    return Status::OK();
  });
}

// Runs get(const AttrValue::ListValue&) on a list attr.
template <typename F>
void GetList(const char* fn, TF_Operation* oper, const char* attr_name, const void* values, int max_values,
             TF_Status* status, F&& get) {
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (v->value_case() != AttrValue::kList) return WrongKind(oper, attr_name, "a list");
    GR_RETURN_IF_ERROR(CheckList(fn, values, max_values));
    return get(v->list());
  });
}

// The OpDef's type of attr `name` of `oper` ("list(int)" -> TF_ATTR_INT),
// for an empty list, whose value says nothing of its elements.
TF_AttrType ListElementType(const TF_Operation* oper, const std::string& name) {
  static const std::pair<const char*, TF_AttrType> kTypes[] = {
      {"list(string)", TF_ATTR_STRING}, {"list(int)", TF_ATTR_INT},     {"list(float)", TF_ATTR_FLOAT},
      {"list(bool)", TF_ATTR_BOOL},     {"list(type)", TF_ATTR_TYPE},   {"list(shape)", TF_ATTR_SHAPE},
      {"list(tensor)", TF_ATTR_TENSOR}, {"list(func)", TF_ATTR_FUNC}};
  const graphrt::proto::OpDef* op = oper->node->op_def();
  if (op != nullptr) {
    for (const auto& a : op->attr()) {
      if (a.name() != name) continue;
      for (const auto& [text, type] : kTypes)
        if (a.type() == text) return type;
    }
  }
  return TF_ATTR_STRING;  // "_class" and other internal attrs are string lists
}

// A TF_Output the caller gave, checked against the graph: an operation of
// it and one of its outputs.
Status CheckOutput(const char* fn, const TF_Graph* g, const TF_Output& out) {
  GR_RETURN_IF_ERROR(CheckOperation(fn, g, out.oper, "output"));
  const Node* n = out.oper->node;
  if (out.index < 0 || out.index >= n->num_outputs())
    return errors::OutOfRange(fn, ": operation '", n->name(), "' (", n->op(), ") has ", n->num_outputs(),
                              " outputs, not an output ", out.index);
  return Status::OK();
}

}  // namespace

namespace graphrt::tf_c {

Status AdoptAddedNodes(TF_Graph* g, const std::vector<Node*>& added) {
  if (g->shapes.size() < static_cast<size_t>(g->graph->num_node_ids())) g->shapes.resize(g->graph->num_node_ids());
  std::vector<int> consts;
  Status s;
  for (Node* n : added) {
    if (auto value = ConstValueForShapeInference(*n)) {
      g->const_values[n->id()] = std::move(value);
      consts.push_back(n->id());
    }
    std::vector<PartialTensorShape> inputs(n->num_inputs());
    std::vector<const Tensor*> values(n->num_inputs(), nullptr);
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) continue;
      // A while loop's back edge comes from a node not inferred yet: unknown.
      const std::vector<PartialTensorShape>& src = g->shapes[e->src()->id()];
      if (static_cast<size_t>(e->src_output()) < src.size()) inputs[e->dst_input()] = src[e->src_output()];
      auto it = g->const_values.find(e->src()->id());
      if (it != g->const_values.end() && e->src_output() == 0) values[e->dst_input()] = it->second.get();
    }
    s = InferNodeShapes(*g->graph, *n, inputs, values, HostAllocator(), &g->shapes[n->id()]);
    if (!s.ok()) break;
  }
  if (!s.ok()) {
    for (int id : consts) g->const_values.erase(id);
    for (Node* n : added) g->shapes[n->id()].clear();
    g->graph->RemoveNodes(added);
    return s;
  }
  // TF_GraphNextOperation walks them in the order they were added.
  std::vector<Node*> by_id = added;
  std::sort(by_id.begin(), by_id.end(), [](const Node* a, const Node* b) { return a->id() < b->id(); });
  for (Node* n : by_id) {
    auto op = std::make_unique<TF_Operation>(TF_Operation{n, g});
    g->by_name[n->name()] = op.get();
    g->ops.push_back(std::move(op));
  }
  return Status::OK();
}

}  // namespace graphrt::tf_c

extern "C" {

// ---- Building operations ----

TF_OperationDescription* TF_NewOperation(TF_Graph* graph, const char* op_type, const char* oper_name) {
  if (graph == nullptr) return nullptr;
  TF_OperationDescription* result = nullptr;
  Call(kNoStatus, "TF_NewOperation", [&]() -> Status {
    auto d = std::make_unique<TF_OperationDescription>();
    d->graph = graph;
    if (op_type == nullptr) Fail(d.get(), NullArgument("TF_NewOperation", "op_type"));
    if (oper_name == nullptr) Fail(d.get(), NullArgument("TF_NewOperation", "oper_name"));
    d->def.set_op(op_type ? op_type : "");
    d->def.set_name(oper_name ? oper_name : "");
    result = d.release();
    return Status::OK();
  });
  return result;
}

void TF_SetDevice(TF_OperationDescription* desc, const char* device) {
  if (desc == nullptr) return;
  Call(kNoStatus, "TF_SetDevice", [&]() -> Status {
    desc->def.set_device(device ? device : "");
    return Status::OK();
  });
}

void TF_AddInput(TF_OperationDescription* desc, TF_Output input) {
  if (desc == nullptr) return;
  Call(kNoStatus, "TF_AddInput", [&]() -> Status {
    if (input.oper == nullptr) {
      Fail(desc, errors::InvalidArgument(NodeText(desc->def), ": TF_AddInput: input ", desc->inputs.size(),
                                         " has a NULL operation"));
    }
    desc->inputs.push_back({false, {input}});
    return Status::OK();
  });
}

void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs, int num_inputs) {
  if (desc == nullptr) return;
  Call(kNoStatus, "TF_AddInputList", [&]() -> Status {
    const Status s = CheckList("TF_AddInputList", inputs, num_inputs);
    if (!s.ok()) {
      Fail(desc, s);
      return Status::OK();
    }
    TF_OperationDescription::InputArg arg{true, {}};
    for (int i = 0; i < num_inputs; ++i) {
      if (inputs[i].oper == nullptr) {
        Fail(desc, errors::InvalidArgument(NodeText(desc->def), ": TF_AddInputList: inputs[", i,
                                           "] has a NULL operation"));
      }
      arg.tensors.push_back(inputs[i]);
    }
    desc->inputs.push_back(std::move(arg));
    return Status::OK();
  });
}

void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input) {
  if (desc == nullptr) return;
  Call(kNoStatus, "TF_AddControlInput", [&]() -> Status {
    if (input == nullptr) {
      Fail(desc, errors::InvalidArgument(NodeText(desc->def), ": TF_AddControlInput: a NULL operation"));
    } else {
      desc->control_inputs.push_back(input);
    }
    return Status::OK();
  });
}

void TF_ColocateWith(TF_OperationDescription* desc, TF_Operation* op) {
  if (desc == nullptr) return;
  Call(kNoStatus, "TF_ColocateWith", [&]() -> Status {
    if (op == nullptr) {
      Fail(desc, errors::InvalidArgument(NodeText(desc->def), ": TF_ColocateWith: a NULL operation"));
    } else {
      desc->colocate_with.insert(op->node->name());
    }
    return Status::OK();
  });
}

void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name, const void* value, size_t length) {
  static const char* fn = "TF_SetAttrString";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    if (value == nullptr && length > 0) return NullArgument(fn, "value");
    v->set_s(length > 0 ? std::string(static_cast<const char*>(value), length) : std::string());
    return Status::OK();
  });
}

void TF_SetAttrStringList(TF_OperationDescription* desc, const char* attr_name, const void* const* values,
                          const size_t* lengths, int num_values) {
  static const char* fn = "TF_SetAttrStringList";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, values, num_values));
    if (num_values > 0 && lengths == nullptr) return NullArgument(fn, "lengths");
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      if (values[i] == nullptr && lengths[i] > 0) return errors::InvalidArgument(fn, ": values[", i, "] is NULL");
      list->add_s(lengths[i] > 0 ? std::string(static_cast<const char*>(values[i]), lengths[i]) : std::string());
    }
    return Status::OK();
  });
}

void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name, int64_t value) {
  SetAttr(desc, "TF_SetAttrInt", attr_name, kNoStatus, [&](AttrValue* v) {
    v->set_i(value);
    return Status::OK();
  });
}

void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name, const int64_t* values, int num_values) {
  static const char* fn = "TF_SetAttrIntList";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_i(values[i]);
    return Status::OK();
  });
}

void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name, float value) {
  SetAttr(desc, "TF_SetAttrFloat", attr_name, kNoStatus, [&](AttrValue* v) {
    v->set_f(value);
    return Status::OK();
  });
}

void TF_SetAttrFloatList(TF_OperationDescription* desc, const char* attr_name, const float* values,
                         int num_values) {
  static const char* fn = "TF_SetAttrFloatList";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_f(values[i]);
    return Status::OK();
  });
}

void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name, unsigned char value) {
  SetAttr(desc, "TF_SetAttrBool", attr_name, kNoStatus, [&](AttrValue* v) {
    v->set_b(value != 0);
    return Status::OK();
  });
}

void TF_SetAttrBoolList(TF_OperationDescription* desc, const char* attr_name, const unsigned char* values,
                        int num_values) {
  static const char* fn = "TF_SetAttrBoolList";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_b(values[i] != 0);
    return Status::OK();
  });
}

void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name, TF_DataType value) {
  static const char* fn = "TF_SetAttrType";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    graphrt::DataType dt;
    GR_RETURN_IF_ERROR(graphrt::ValidateDataType(static_cast<int64_t>(value), /*allow_ref=*/false,
                                                 std::string(fn) + " value", &dt));
    v->set_type(static_cast<graphrt::proto::DataType>(dt));
    return Status::OK();
  });
}

void TF_SetAttrTypeList(TF_OperationDescription* desc, const char* attr_name, const TF_DataType* values,
                        int num_values) {
  static const char* fn = "TF_SetAttrTypeList";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      graphrt::DataType dt;
      GR_RETURN_IF_ERROR(graphrt::ValidateDataType(static_cast<int64_t>(values[i]), /*allow_ref=*/false,
                                                   std::string(fn) + " values[" + std::to_string(i) + "]", &dt));
      list->add_type(static_cast<graphrt::proto::DataType>(dt));
    }
    return Status::OK();
  });
}

void TF_SetAttrPlaceholder(TF_OperationDescription* desc, const char* attr_name, const char* placeholder) {
  static const char* fn = "TF_SetAttrPlaceholder";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    if (placeholder == nullptr) return NullArgument(fn, "placeholder");
    v->set_placeholder(placeholder);
    return Status::OK();
  });
}

void TF_SetAttrFuncName(TF_OperationDescription* desc, const char* attr_name, const char* value, size_t length) {
  static const char* fn = "TF_SetAttrFuncName";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    if (value == nullptr && length > 0) return NullArgument(fn, "value");
    v->mutable_func()->set_name(length > 0 ? std::string(value, length) : std::string());
    return Status::OK();
  });
}

void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name, const int64_t* dims, int num_dims) {
  static const char* fn = "TF_SetAttrShape";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    graphrt::PartialTensorShape shape;
    GR_RETURN_IF_ERROR(ShapeFromDims(fn, dims, num_dims, &shape));
    shape.AsProto(v->mutable_shape());
    return Status::OK();
  });
}

void TF_SetAttrShapeList(TF_OperationDescription* desc, const char* attr_name, const int64_t* const* dims,
                         const int* num_dims, int num_shapes) {
  static const char* fn = "TF_SetAttrShapeList";
  SetAttr(desc, fn, attr_name, kNoStatus, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, dims, num_shapes));
    if (num_shapes > 0 && num_dims == nullptr) return NullArgument(fn, "num_dims");
    auto* list = v->mutable_list();
    for (int i = 0; i < num_shapes; ++i) {
      graphrt::PartialTensorShape shape;
      GR_RETURN_IF_ERROR(ShapeFromDims(fn, dims[i], num_dims[i], &shape));
      shape.AsProto(list->add_shape());
    }
    return Status::OK();
  });
}

void TF_SetAttrTensorShapeProto(TF_OperationDescription* desc, const char* attr_name, const void* proto,
                                size_t proto_len, TF_Status* status) {
  static const char* fn = "TF_SetAttrTensorShapeProto";
  SetAttr(desc, fn, attr_name, status, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(ParseProto(fn, proto, proto_len, "proto", v->mutable_shape()));
    graphrt::PartialTensorShape checked;
    return graphrt::PartialTensorShape::FromProto(v->shape(), &checked).WithContext(std::string(fn) + ": ");
  });
}

void TF_SetAttrTensorShapeProtoList(TF_OperationDescription* desc, const char* attr_name,
                                    const void* const* protos, const size_t* proto_lens, int num_shapes,
                                    TF_Status* status) {
  static const char* fn = "TF_SetAttrTensorShapeProtoList";
  SetAttr(desc, fn, attr_name, status, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, protos, num_shapes));
    if (num_shapes > 0 && proto_lens == nullptr) return NullArgument(fn, "proto_lens");
    auto* list = v->mutable_list();
    for (int i = 0; i < num_shapes; ++i) {
      auto* shape = list->add_shape();
      GR_RETURN_IF_ERROR(ParseProto(fn, protos[i], proto_lens[i], "protos[i]", shape));
      graphrt::PartialTensorShape checked;
      GR_RETURN_IF_ERROR(graphrt::PartialTensorShape::FromProto(*shape, &checked)
                             .WithContext(std::string(fn) + ": protos[" + std::to_string(i) + "]: "));
    }
    return Status::OK();
  });
}

void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* value, TF_Status* status) {
  static const char* fn = "TF_SetAttrTensor";
  SetAttr(desc, fn, attr_name, status, [&](AttrValue* v) -> Status {
    if (value == nullptr) return NullArgument(fn, "value");
    value->tensor.AsProtoTensorContent(v->mutable_tensor());
    return Status::OK();
  });
}

void TF_SetAttrTensorList(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* const* values,
                          int num_values, TF_Status* status) {
  static const char* fn = "TF_SetAttrTensorList";
  SetAttr(desc, fn, attr_name, status, [&](AttrValue* v) -> Status {
    GR_RETURN_IF_ERROR(CheckList(fn, values, num_values));
    auto* list = v->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      if (values[i] == nullptr) return errors::InvalidArgument(fn, ": values[", i, "] is NULL");
      values[i]->tensor.AsProtoTensorContent(list->add_tensor());
    }
    return Status::OK();
  });
}

void TF_SetAttrValueProto(TF_OperationDescription* desc, const char* attr_name, const void* proto, size_t proto_len,
                          TF_Status* status) {
  static const char* fn = "TF_SetAttrValueProto";
  SetAttr(desc, fn, attr_name, status, [&](AttrValue* v) { return ParseProto(fn, proto, proto_len, "proto", v); });
}

TF_Operation* TF_FinishOperation(TF_OperationDescription* desc, TF_Status* status) {
  static const char* fn = "TF_FinishOperation";
  std::unique_ptr<TF_OperationDescription> d(desc);
  TF_Operation* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (d == nullptr) return NullArgument(fn, "desc");
    if (!d->error.ok()) return d->error;
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    const graphrt::proto::OpDef* op_def;
    const Status found = graphrt::Runtime::Global().ops().LookUpOpDef(d->def.op(), &op_def);
    if (!found.ok()) return Status(found.code(), NodeText(d->def) + ": " + found.message());
    TF_Graph* g = d->graph;
    std::lock_guard<std::mutex> l(g->mu);
    if (g->by_name.count(d->def.name()))
      return errors::InvalidArgument("Duplicate node name in graph: '", d->def.name(), "'");
    for (size_t i = 0; i < d->inputs.size(); ++i) {
      for (const TF_Output& t : d->inputs[i].tensors)
        GR_RETURN_IF_ERROR(CheckOperation(fn, g, t.oper, NodeText(d->def) + ": input " + std::to_string(i)));
    }
    std::vector<Node*> control;
    for (TF_Operation* c : d->control_inputs) {
      GR_RETURN_IF_ERROR(CheckOperation(fn, g, c, NodeText(d->def) + ": a control input"));
      control.push_back(c->node);
    }
    std::vector<std::pair<Node*, int>> inputs;
    GR_RETURN_IF_ERROR(InferAttrsFromInputs(*op_def, *d, &d->def, &inputs));
    if (!d->colocate_with.empty()) {
      auto* cls = (*d->def.mutable_attr())["_class"].mutable_list();
      cls->clear_s();
      for (const std::string& name : d->colocate_with) cls->add_s("loc:@" + name);
    }
    Node* n;
    GR_RETURN_IF_ERROR(graphrt::AddNodeWithInputs(std::move(d->def), inputs, control, g->graph.get(), &n));
    GR_RETURN_IF_ERROR(graphrt::tf_c::AdoptAddedNodes(g, {n}));
    graphrt::proto::GraphDef added;
    *added.add_node() = n->def();
    g->additions.push_back(std::move(added));
    result = g->by_name.at(n->name());
    return Status::OK();
  });
  return result;
}

// ---- Shapes ----

void TF_GraphSetTensorShape(TF_Graph* graph, TF_Output output, const int64_t* dims, const int num_dims,
                            TF_Status* status) {
  static const char* fn = "TF_GraphSetTensorShape";
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    graphrt::PartialTensorShape given;
    GR_RETURN_IF_ERROR(ShapeFromDims(fn, dims, num_dims, &given));
    std::lock_guard<std::mutex> l(graph->mu);
    GR_RETURN_IF_ERROR(CheckOutput(fn, graph, output));
    graphrt::PartialTensorShape& known = graph->shapes[output.oper->node->id()][output.index];
    graphrt::PartialTensorShape merged;
    GR_RETURN_IF_ERROR(known.MergeWith(given, &merged).WithContext(
        std::string(fn) + ": output " + std::to_string(output.index) + " of '" + output.oper->node->name() + "': "));
    known = std::move(merged);
    return Status::OK();
  });
}

int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output, TF_Status* status) {
  static const char* fn = "TF_GraphGetTensorNumDims";
  int rank = -1;
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    std::lock_guard<std::mutex> l(graph->mu);
    GR_RETURN_IF_ERROR(CheckOutput(fn, graph, output));
    rank = graph->shapes[output.oper->node->id()][output.index].rank();
    return Status::OK();
  });
  return rank;
}

void TF_GraphGetTensorShape(TF_Graph* graph, TF_Output output, int64_t* dims, int num_dims, TF_Status* status) {
  static const char* fn = "TF_GraphGetTensorShape";
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    std::lock_guard<std::mutex> l(graph->mu);
    GR_RETURN_IF_ERROR(CheckOutput(fn, graph, output));
    const graphrt::PartialTensorShape& known = graph->shapes[output.oper->node->id()][output.index];
    if (num_dims != known.rank())
      return errors::InvalidArgument(fn, ": Expected rank is ", known.rank(), " but actual rank is ", num_dims,
                                     " (output ", output.index, " of '", output.oper->node->name(), "')");
    if (num_dims > 0 && dims == nullptr) return NullArgument(fn, "dims");
    for (int i = 0; i < num_dims; ++i) dims[i] = known.dim_size(i) < 0 ? -1 : known.dim_size(i);
    return Status::OK();
  });
}

// ---- Inspecting operations ----

int TF_OperationOutputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status) {
  static const char* fn = "TF_OperationOutputListLength";
  int length = -1;
  Call(status, fn, [&]() -> Status {
    if (oper == nullptr) return NullArgument(fn, "oper");
    if (arg_name == nullptr) return NullArgument(fn, "arg_name");
    int begin, end;
    GR_RETURN_IF_ERROR(graphrt::NodeArgRange(*oper->node, arg_name, /*output=*/true, &begin, &end));
    length = end - begin;
    return Status::OK();
  });
  return length;
}

int TF_OperationInputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status) {
  static const char* fn = "TF_OperationInputListLength";
  int length = -1;
  Call(status, fn, [&]() -> Status {
    if (oper == nullptr) return NullArgument(fn, "oper");
    if (arg_name == nullptr) return NullArgument(fn, "arg_name");
    int begin, end;
    GR_RETURN_IF_ERROR(graphrt::NodeArgRange(*oper->node, arg_name, /*output=*/false, &begin, &end));
    length = end - begin;
    return Status::OK();
  });
  return length;
}

TF_DataType TF_OperationInputType(TF_Input oper_in) {
  if (oper_in.oper == nullptr || oper_in.index < 0 || oper_in.index >= oper_in.oper->node->num_inputs())
    return static_cast<TF_DataType>(0);
  return ToTF(oper_in.oper->node->input_type(oper_in.index));
}

TF_Output TF_OperationInput(TF_Input oper_in) {
  TF_Output result{nullptr, -1};
  if (oper_in.oper == nullptr || oper_in.index < 0 || oper_in.index >= oper_in.oper->node->num_inputs()) return result;
  TF_Graph* g = oper_in.oper->graph;
  std::lock_guard<std::mutex> l(g->mu);
  const graphrt::Edge* e = oper_in.oper->node->input_edge(oper_in.index);
  if (e == nullptr) return result;
  auto it = g->by_name.find(e->src()->name());
  if (it != g->by_name.end()) result = TF_Output{it->second, e->src_output()};
  return result;
}

void TF_OperationAllInputs(TF_Operation* oper, TF_Output* inputs, int max_inputs) {
  if (oper == nullptr || inputs == nullptr) return;
  const int n = std::min(max_inputs, oper->node->num_inputs());
  for (int i = 0; i < n; ++i) inputs[i] = TF_OperationInput(TF_Input{oper, i});
}

int TF_OperationOutputNumConsumers(TF_Output oper_out) { return TF_OperationOutputConsumers(oper_out, nullptr, 0); }

int TF_OperationOutputConsumers(TF_Output oper_out, TF_Input* consumers, int max_consumers) {
  if (oper_out.oper == nullptr) return 0;
  TF_Graph* g = oper_out.oper->graph;
  std::lock_guard<std::mutex> l(g->mu);
  int count = 0;
  for (const graphrt::Edge* e : oper_out.oper->node->out_edges()) {
    if (e->IsControlEdge() || e->src_output() != oper_out.index || !e->dst()->IsOp()) continue;
    if (consumers != nullptr && count < max_consumers) {
      auto it = g->by_name.find(e->dst()->name());
      consumers[count] = TF_Input{it == g->by_name.end() ? nullptr : it->second, e->dst_input()};
    }
    ++count;
  }
  return count;
}

int TF_OperationNumControlInputs(TF_Operation* oper) { return TF_OperationGetControlInputs(oper, nullptr, 0); }

int TF_OperationGetControlInputs(TF_Operation* oper, TF_Operation** control_inputs, int max_control_inputs) {
  if (oper == nullptr) return 0;
  TF_Graph* g = oper->graph;
  std::lock_guard<std::mutex> l(g->mu);
  int count = 0;
  for (const graphrt::Edge* e : oper->node->in_edges()) {
    if (!e->IsControlEdge() || !e->src()->IsOp()) continue;
    if (control_inputs != nullptr && count < max_control_inputs) control_inputs[count] = g->by_name.at(e->src()->name());
    ++count;
  }
  return count;
}

int TF_OperationNumControlOutputs(TF_Operation* oper) { return TF_OperationGetControlOutputs(oper, nullptr, 0); }

int TF_OperationGetControlOutputs(TF_Operation* oper, TF_Operation** control_outputs, int max_control_outputs) {
  if (oper == nullptr) return 0;
  TF_Graph* g = oper->graph;
  std::lock_guard<std::mutex> l(g->mu);
  int count = 0;
  for (const graphrt::Edge* e : oper->node->out_edges()) {
    if (!e->IsControlEdge() || !e->dst()->IsOp()) continue;
    if (control_outputs != nullptr && count < max_control_outputs)
      control_outputs[count] = g->by_name.at(e->dst()->name());
    ++count;
  }
  return count;
}

TF_AttrMetadata TF_OperationGetAttrMetadata(TF_Operation* oper, const char* attr_name, TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrMetadata";
  TF_AttrMetadata m{0, -1, TF_ATTR_STRING, -1};
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    switch (v->value_case()) {
      case AttrValue::kS:
        m.type = TF_ATTR_STRING;
        m.total_size = static_cast<int64_t>(v->s().size());
        break;
      case AttrValue::kI:
        m.type = TF_ATTR_INT;
        break;
      case AttrValue::kF:
        m.type = TF_ATTR_FLOAT;
        break;
      case AttrValue::kB:
        m.type = TF_ATTR_BOOL;
        break;
      case AttrValue::kType:
        m.type = TF_ATTR_TYPE;
        break;
      case AttrValue::kShape:
        m.type = TF_ATTR_SHAPE;
        m.total_size = v->shape().unknown_rank() ? -1 : v->shape().dim_size();
        break;
      case AttrValue::kTensor:
        m.type = TF_ATTR_TENSOR;
        break;
      case AttrValue::kPlaceholder:
        m.type = TF_ATTR_PLACEHOLDER;
        break;
      case AttrValue::kFunc:
        m.type = TF_ATTR_FUNC;
        break;
      case AttrValue::kList: {
        const auto& l = v->list();
        m.is_list = 1;
        const std::pair<int, TF_AttrType> kinds[] = {
            {l.s_size(), TF_ATTR_STRING}, {l.i_size(), TF_ATTR_INT},       {l.f_size(), TF_ATTR_FLOAT},
            {l.b_size(), TF_ATTR_BOOL},   {l.type_size(), TF_ATTR_TYPE},   {l.shape_size(), TF_ATTR_SHAPE},
            {l.tensor_size(), TF_ATTR_TENSOR}, {l.func_size(), TF_ATTR_FUNC}};
        m.list_size = 0;
        m.type = ListElementType(oper, attr_name);
        for (const auto& [size, type] : kinds) {
          if (size == 0) continue;
          m.list_size = size;
          m.type = type;
          break;
        }
        if (m.type == TF_ATTR_STRING) {
          m.total_size = 0;
          for (const std::string& s : l.s()) m.total_size += static_cast<int64_t>(s.size());
        } else if (m.type == TF_ATTR_SHAPE) {
          m.total_size = 0;
          for (const auto& s : l.shape()) m.total_size += s.unknown_rank() ? 0 : s.dim_size();
        }
        break;
      }
      default:
        return errors::InvalidArgument("Attr '", attr_name, "' of operation '", oper->node->name(), "' has no value");
    }
    return Status::OK();
  });
  return m;
}

void TF_OperationGetAttrString(TF_Operation* oper, const char* attr_name, void* value, size_t max_length,
                               TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrString";
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (v->value_case() != AttrValue::kS) return WrongKind(oper, attr_name, "a string");
    const size_t n = std::min(v->s().size(), max_length);
    if (n > 0 && value == nullptr) return NullArgument(fn, "value");
    if (n > 0) std::memcpy(value, v->s().data(), n);
    return Status::OK();
  });
}

void TF_OperationGetAttrStringList(TF_Operation* oper, const char* attr_name, void** values, size_t* lengths,
                                   int max_values, void* storage, size_t storage_size, TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrStringList";
  GetList(fn, oper, attr_name, values, max_values, status, [&](const AttrValue::ListValue& l) -> Status {
    if (max_values > 0 && lengths == nullptr) return NullArgument(fn, "lengths");
    const int n = std::min(max_values, l.s_size());
    char* at = static_cast<char*>(storage);
    size_t left = storage_size;
    for (int i = 0; i < n; ++i) {
      const std::string& s = l.s(i);
      if (s.size() > left)
        return errors::InvalidArgument(fn, ": not enough storage to hold the requested list of strings (attr '",
                                       attr_name, "' of operation '", oper->node->name(), "')");
      if (!s.empty()) std::memcpy(at, s.data(), s.size());
      values[i] = at;
      lengths[i] = s.size();
      at += s.size();
      left -= s.size();
    }
    return Status::OK();
  });
}

void TF_OperationGetAttrInt(TF_Operation* oper, const char* attr_name, int64_t* value, TF_Status* status) {
  GetScalar("TF_OperationGetAttrInt", oper, attr_name, AttrValue::kI, "an int", status,
            [&](const AttrValue& v) { *value = v.i(); });
}

void TF_OperationGetAttrIntList(TF_Operation* oper, const char* attr_name, int64_t* values, int max_values,
                                TF_Status* status) {
  GetList("TF_OperationGetAttrIntList", oper, attr_name, values, max_values, status,
          [&](const AttrValue::ListValue& l) {
            for (int i = 0; i < std::min(max_values, l.i_size()); ++i) values[i] = l.i(i);
            return Status::OK();
          });
}

void TF_OperationGetAttrFloat(TF_Operation* oper, const char* attr_name, float* value, TF_Status* status) {
  GetScalar("TF_OperationGetAttrFloat", oper, attr_name, AttrValue::kF, "a float", status,
            [&](const AttrValue& v) { *value = v.f(); });
}

void TF_OperationGetAttrFloatList(TF_Operation* oper, const char* attr_name, float* values, int max_values,
                                  TF_Status* status) {
  GetList("TF_OperationGetAttrFloatList", oper, attr_name, values, max_values, status,
          [&](const AttrValue::ListValue& l) {
            for (int i = 0; i < std::min(max_values, l.f_size()); ++i) values[i] = l.f(i);
            return Status::OK();
          });
}

void TF_OperationGetAttrBool(TF_Operation* oper, const char* attr_name, unsigned char* value, TF_Status* status) {
  GetScalar("TF_OperationGetAttrBool", oper, attr_name, AttrValue::kB, "a bool", status,
            [&](const AttrValue& v) { *value = v.b() ? 1 : 0; });
}

void TF_OperationGetAttrBoolList(TF_Operation* oper, const char* attr_name, unsigned char* values, int max_values,
                                 TF_Status* status) {
  GetList("TF_OperationGetAttrBoolList", oper, attr_name, values, max_values, status,
          [&](const AttrValue::ListValue& l) {
            for (int i = 0; i < std::min(max_values, l.b_size()); ++i) values[i] = l.b(i) ? 1 : 0;
            return Status::OK();
          });
}

void TF_OperationGetAttrType(TF_Operation* oper, const char* attr_name, TF_DataType* value, TF_Status* status) {
  GetScalar("TF_OperationGetAttrType", oper, attr_name, AttrValue::kType, "a type", status,
            [&](const AttrValue& v) { *value = static_cast<TF_DataType>(v.type()); });
}

void TF_OperationGetAttrTypeList(TF_Operation* oper, const char* attr_name, TF_DataType* values, int max_values,
                                 TF_Status* status) {
  GetList("TF_OperationGetAttrTypeList", oper, attr_name, values, max_values, status,
          [&](const AttrValue::ListValue& l) {
            for (int i = 0; i < std::min(max_values, l.type_size()); ++i) values[i] = static_cast<TF_DataType>(l.type(i));
            return Status::OK();
          });
}

void TF_OperationGetAttrShape(TF_Operation* oper, const char* attr_name, int64_t* value, int num_dims,
                              TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrShape";
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (v->value_case() != AttrValue::kShape) return WrongKind(oper, attr_name, "a shape");
    if (v->shape().unknown_rank()) return Status::OK();
    const int n = std::min(num_dims, v->shape().dim_size());
    if (n > 0 && value == nullptr) return NullArgument(fn, "value");
    for (int i = 0; i < n; ++i) value[i] = v->shape().dim(i).size();
    return Status::OK();
  });
}

void TF_OperationGetAttrShapeList(TF_Operation* oper, const char* attr_name, int64_t** dims, int* num_dims,
                                  int num_shapes, int64_t* storage, int storage_size, TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrShapeList";
  GetList(fn, oper, attr_name, dims, num_shapes, status, [&](const AttrValue::ListValue& l) -> Status {
    if (num_shapes > 0 && num_dims == nullptr) return NullArgument(fn, "num_dims");
    const int n = std::min(num_shapes, l.shape_size());
    int64_t* at = storage;
    int left = storage_size;
    for (int i = 0; i < n; ++i) {
      const auto& s = l.shape(i);
      num_dims[i] = s.unknown_rank() ? -1 : s.dim_size();
      dims[i] = nullptr;
      if (num_dims[i] <= 0) continue;
      if (num_dims[i] > left)
        return errors::InvalidArgument(fn, ": not enough storage to hold the requested list of shapes (attr '",
                                       attr_name, "' of operation '", oper->node->name(), "')");
      dims[i] = at;
      for (int k = 0; k < num_dims[i]; ++k) at[k] = s.dim(k).size();
      at += num_dims[i];
      left -= num_dims[i];
    }
    return Status::OK();
  });
}

void TF_OperationGetAttrTensorShapeProto(TF_Operation* oper, const char* attr_name, TF_Buffer* value,
                                         TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrTensorShapeProto";
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (v->value_case() != AttrValue::kShape) return WrongKind(oper, attr_name, "a shape");
    if (value == nullptr) return NullArgument(fn, "value");
    return FillBuffer(fn, v->shape(), value);
  });
}

void TF_OperationGetAttrTensorShapeProtoList(TF_Operation* oper, const char* attr_name, TF_Buffer** values,
                                             int max_values, TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrTensorShapeProtoList";
  GetList(fn, oper, attr_name, values, max_values, status, [&](const AttrValue::ListValue& l) -> Status {
    const int n = std::min(max_values, l.shape_size());
    std::vector<std::unique_ptr<TF_Buffer, void (*)(TF_Buffer*)>> made;
    for (int i = 0; i < n; ++i) {
      made.emplace_back(TF_NewBuffer(), TF_DeleteBuffer);
      if (made.back() == nullptr) return errors::ResourceExhausted(fn, ": out of memory for a buffer");
      GR_RETURN_IF_ERROR(FillBuffer(fn, l.shape(i), made.back().get()));
    }
    for (int i = 0; i < n; ++i) values[i] = made[i].release();
    return Status::OK();
  });
}

void TF_OperationGetAttrTensor(TF_Operation* oper, const char* attr_name, TF_Tensor** value, TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrTensor";
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (v->value_case() != AttrValue::kTensor) return WrongKind(oper, attr_name, "a tensor");
    if (value == nullptr) return NullArgument(fn, "value");
    auto t = std::make_unique<TF_Tensor>();
    GR_RETURN_IF_ERROR(graphrt::Tensor::FromProto(v->tensor(), &t->tensor));
    *value = t.release();
    return Status::OK();
  });
}

void TF_OperationGetAttrTensorList(TF_Operation* oper, const char* attr_name, TF_Tensor** values, int max_values,
                                   TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrTensorList";
  GetList(fn, oper, attr_name, values, max_values, status, [&](const AttrValue::ListValue& l) -> Status {
    const int n = std::min(max_values, l.tensor_size());
    std::vector<std::unique_ptr<TF_Tensor>> made;
    for (int i = 0; i < n; ++i) {
      made.push_back(std::make_unique<TF_Tensor>());
      GR_RETURN_IF_ERROR(graphrt::Tensor::FromProto(l.tensor(i), &made.back()->tensor));
    }
    for (int i = 0; i < n; ++i) values[i] = made[i].release();
    return Status::OK();
  });
}

void TF_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name, TF_Buffer* output_attr_value,
                                   TF_Status* status) {
  static const char* fn = "TF_OperationGetAttrValueProto";
  Call(status, fn, [&]() -> Status {
    const AttrValue* v;
    GR_RETURN_IF_ERROR(FindAttr(fn, oper, attr_name, &v));
    if (output_attr_value == nullptr) return NullArgument(fn, "output_attr_value");
    return FillBuffer(fn, *v, output_attr_value);
  });
}

void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def, TF_Status* status) {
  static const char* fn = "TF_OperationToNodeDef";
  Call(status, fn, [&]() -> Status {
    if (oper == nullptr) return NullArgument(fn, "oper");
    if (output_node_def == nullptr) return NullArgument(fn, "output_node_def");
    return FillBuffer(fn, oper->node->def(), output_node_def);
  });
}

// ---- Gradients ----

void TF_AddGradients(TF_Graph* g, TF_Output* y, int ny, TF_Output* x, int nx, TF_Output* dx, TF_Status* status,
                     TF_Output* dy) {
  TF_AddGradientsWithPrefix(g, nullptr, y, ny, x, nx, dx, status, dy);
}

void TF_AddGradientsWithPrefix(TF_Graph* g, const char* prefix, TF_Output* y, int ny, TF_Output* x, int nx,
                               TF_Output* dx, TF_Status* status, TF_Output* dy) {
  static const char* fn = "TF_AddGradientsWithPrefix";
  Call(status, fn, [&]() -> Status {
    if (g == nullptr) return NullArgument(fn, "g");
    if (ny < 1 || nx < 1) return errors::InvalidArgument(fn, ": needs at least one y and one x (ny ", ny, ", nx ", nx, ")");
    if (y == nullptr || x == nullptr || dy == nullptr) return NullArgument(fn, "y, x or dy");
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    std::lock_guard<std::mutex> l(g->mu);
    auto outputs = [&](const TF_Output* t, int n, const char* what, std::vector<graphrt::GraphOutput>* out) {
      for (int i = 0; i < n; ++i) {
        GR_RETURN_IF_ERROR(CheckOutput(fn, g, t[i]).WithContext(std::string(what) + "[" + std::to_string(i) + "]: "));
        out->emplace_back(t[i].oper->node, t[i].index);
      }
      return Status::OK();
    };
    std::vector<graphrt::GraphOutput> ys, xs, grad_ys;
    GR_RETURN_IF_ERROR(outputs(y, ny, "y", &ys));
    GR_RETURN_IF_ERROR(outputs(x, nx, "x", &xs));
    if (dx != nullptr) GR_RETURN_IF_ERROR(outputs(dx, ny, "dx", &grad_ys));
    std::string scope;
    if (prefix == nullptr) {
      scope = "gradients";
      for (int k = 1; graphrt::tf_c::NameInUse(*g, scope); ++k) scope = "gradients_" + std::to_string(k);
    } else {
      scope = prefix;
      if (!graphrt::IsValidNodeName(scope))
        return errors::InvalidArgument(fn, ": prefix '", scope, "' is not a valid node name");
      if (graphrt::tf_c::NameInUse(*g, scope))
        return errors::InvalidArgument(fn, ": prefix '", scope, "' is already used in the graph");
    }
    // An x no y depends on is an error (TensorFlow's); one whose gradient
    // is stopped on the way (by an op that is not differentiable) gets none.
    std::vector<char> reaches_y(g->graph->num_node_ids(), 0);
    std::vector<Node*> stack;
    for (const auto& t : ys) stack.push_back(t.first);
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (reaches_y[n->id()]) continue;
      reaches_y[n->id()] = 1;
      for (const graphrt::Edge* e : n->in_edges())
        if (!e->IsControlEdge()) stack.push_back(e->src());
    }
    for (const auto& t : xs) {
      if (!reaches_y[t.first->id()])
        return errors::InvalidArgument("Cannot compute the partial derivative for node '", t.first->name(),
                                       "' as it's unreachable from the output node(s).");
    }
    auto find = [&](const std::string& name) -> Node* {
      auto it = g->by_name.find(name);
      return it == g->by_name.end() ? nullptr : it->second->node;
    };
    std::vector<graphrt::GraphOutput> dxs;
    std::vector<Node*> added;
    Status s = graphrt::AddSymbolicGradients(g->graph.get(), graphrt::Runtime::Global().gradients(), ys, xs,
                                             grad_ys, scope, find, &dxs, &added);
    if (!s.ok()) {
      g->graph->RemoveNodes(added);
      return s;
    }
    GR_RETURN_IF_ERROR(graphrt::tf_c::AdoptAddedNodes(g, added));
    graphrt::proto::GraphDef addition;
    for (Node* n : added) *addition.add_node() = n->def();
    g->additions.push_back(std::move(addition));
    for (int i = 0; i < nx; ++i) {
      dy[i] = dxs[i].first == nullptr ? TF_Output{nullptr, -1}
                                      : TF_Output{g->by_name.at(dxs[i].first->name()), dxs[i].second};
    }
    return Status::OK();
  });
}

// ---- Op definitions ----

void TF_GraphGetOpDef(TF_Graph* graph, const char* op_name, TF_Buffer* output_op_def, TF_Status* status) {
  static const char* fn = "TF_GraphGetOpDef";
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    if (op_name == nullptr) return NullArgument(fn, "op_name");
    if (output_op_def == nullptr) return NullArgument(fn, "output_op_def");
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    const graphrt::proto::OpDef* def;
    GR_RETURN_IF_ERROR(graphrt::Runtime::Global().ops().LookUpOpDef(op_name, &def));
    return FillBuffer(fn, *def, output_op_def);
  });
}

void TF_GraphVersions(TF_Graph* graph, TF_Buffer* output_version_def, TF_Status* status) {
  static const char* fn = "TF_GraphVersions";
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    if (output_version_def == nullptr) return NullArgument(fn, "output_version_def");
    graphrt::proto::VersionDef v;
    {
      std::lock_guard<std::mutex> l(graph->mu);
      v = graph->graph->versions();
    }
    return FillBuffer(fn, v, output_version_def);
  });
}

TF_Buffer* TF_GetAllOpList(void) {
  static const char* fn = "TF_GetAllOpList";
  TF_Buffer* result = nullptr;
  Call(kNoStatus, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    graphrt::proto::OpList list;
    for (const graphrt::OpRegistrationData* op : graphrt::Runtime::Global().ops().ListOps()) *list.add_op() = op->op_def;
    std::unique_ptr<TF_Buffer, void (*)(TF_Buffer*)> b(TF_NewBuffer(), TF_DeleteBuffer);
    if (b == nullptr) return errors::ResourceExhausted(fn, ": out of memory for a buffer");
    GR_RETURN_IF_ERROR(FillBuffer(fn, list, b.get()));
    result = b.release();
    return Status::OK();
  });
  return result;
}

}  // extern "C"
