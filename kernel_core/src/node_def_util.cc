#include "node_def_util.h"

#include <google/protobuf/text_format.h>

#include "graphrt/core/tensor.h"

namespace graphrt {
namespace {

using proto::AttrValue;

// The kind an AttrValue holds: "int", "list(type)", ... ("list" when empty list).
std::string ValueKind(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    case AttrValue::kList: {
      const auto& l = v.list();
      if (l.s_size()) return "list(string)";
      if (l.i_size()) return "list(int)";
      if (l.f_size()) return "list(float)";
      if (l.b_size()) return "list(bool)";
      if (l.type_size()) return "list(type)";
      if (l.shape_size()) return "list(shape)";
      if (l.tensor_size()) return "list(tensor)";
      if (l.func_size()) return "list(func)";
      return "list";
    }
    case AttrValue::VALUE_NOT_SET: return "";
  }
  return "";
}

int ListLength(const AttrValue& v) {
  const auto& l = v.list();
  return l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() + l.shape_size() + l.tensor_size() +
         l.func_size();
}

Status CheckAttr(const proto::NodeDef& node, const proto::OpDef::AttrDef& def, const AttrValue& v) {
  const std::string kind = ValueKind(v);
  const bool def_is_list = def.type().rfind("list(", 0) == 0;
  if (kind.empty())
    return errors::InvalidArgument(NodePrefix(node), ": attr '", def.name(), "' has no value");
  if (kind != def.type() && !(kind == "list" && def_is_list))
    return errors::InvalidArgument(NodePrefix(node), ": attr '", def.name(), "' is ", kind, " but the op wants ",
                                   def.type());
  // Values from the file are checked before anything casts or prints them
  // as a DataType or builds a tensor from them.
  DataType checked;
  const std::string where = NodePrefix(node) + ": attr '" + def.name() + "'";
  if (kind == "type") GR_RETURN_IF_ERROR(ValidateDataType(v.type(), /*allow_ref=*/false, where, &checked));
  for (int t : v.list().type()) GR_RETURN_IF_ERROR(ValidateDataType(t, /*allow_ref=*/false, where, &checked));
  if (kind == "tensor") GR_RETURN_IF_ERROR(ValidateTensorProto(v.tensor()).WithContext(where));
  for (const auto& t : v.list().tensor()) GR_RETURN_IF_ERROR(ValidateTensorProto(t).WithContext(where));
  if (def.has_minimum()) {
    const int64_t got = def_is_list ? ListLength(v) : v.i();
    if (got < def.minimum())
      return errors::InvalidArgument(NodePrefix(node), ": attr '", def.name(), "' ",
                                     def_is_list ? "has length " : "is ", got, ", less than its minimum ",
                                     def.minimum());
  }
  if (def.has_allowed_values()) {
    const auto& allowed = def.allowed_values().list();
    auto check_type = [&](int t) -> Status {
      for (int a : allowed.type())
        if (a == t) return Status::OK();
      std::string names;
      for (int a : allowed.type()) names += (names.empty() ? "" : ", ") + DataTypeString(static_cast<DataType>(a));
      return errors::InvalidArgument(NodePrefix(node), ": value for attr '", def.name(), "' of ",
                                     DataTypeString(static_cast<DataType>(t)),
                                     " is not in the list of allowed values: ", names);
    };
    auto check_string = [&](const std::string& s) -> Status {
      for (const auto& a : allowed.s())
        if (a == s) return Status::OK();
      return errors::InvalidArgument(NodePrefix(node), ": value for attr '", def.name(), "' of \"", s,
                                     "\" is not in the list of allowed values");
    };
    if (def.type() == "type") GR_RETURN_IF_ERROR(check_type(v.type()));
    if (def.type() == "list(type)")
      for (int t : v.list().type()) GR_RETURN_IF_ERROR(check_type(t));
    if (def.type() == "string") GR_RETURN_IF_ERROR(check_string(v.s()));
    if (def.type() == "list(string)")
      for (const auto& s : v.list().s()) GR_RETURN_IF_ERROR(check_string(s));
  }
  return Status::OK();
}

Status ArgTypes(const proto::NodeDef& node, const proto::OpDef::ArgDef& arg, DataTypeVector* out) {
  auto attr = [&](const std::string& name) -> const AttrValue* { return FindAttr(node, name); };
  auto ref = [&](DataType t) { return arg.is_ref() ? MakeRefType(t) : t; };
  if (!arg.type_list_attr().empty()) {
    const AttrValue* v = attr(arg.type_list_attr());
    if (v == nullptr) return errors::InvalidArgument(NodePrefix(node), ": missing attr '", arg.type_list_attr(), "'");
    for (int t : v->list().type()) out->push_back(ref(static_cast<DataType>(t)));
    return Status::OK();
  }
  DataType t;
  if (!arg.type_attr().empty()) {
    const AttrValue* v = attr(arg.type_attr());
    if (v == nullptr) return errors::InvalidArgument(NodePrefix(node), ": missing attr '", arg.type_attr(), "'");
    t = static_cast<DataType>(v->type());
  } else {
    t = static_cast<DataType>(arg.type());
  }
  int64_t n = 1;
  if (!arg.number_attr().empty()) {
    const AttrValue* v = attr(arg.number_attr());
    if (v == nullptr) return errors::InvalidArgument(NodePrefix(node), ": missing attr '", arg.number_attr(), "'");
    n = v->i();
    if (n < 0 || n > (1 << 20))
      return errors::InvalidArgument(NodePrefix(node), ": attr '", arg.number_attr(), "' = ", n, " is out of range");
  }
  for (int64_t i = 0; i < n; ++i) out->push_back(ref(t));
  return Status::OK();
}

}  // namespace

std::string NodePrefix(const proto::NodeDef& n) { return "Node '" + n.name() + "' (op '" + n.op() + "')"; }

const proto::AttrValue* FindAttr(const proto::NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  return it == node.attr().end() ? nullptr : &it->second;
}

std::string SummarizeAttrValue(const proto::AttrValue& v) {
  std::string s;
  google::protobuf::TextFormat::Printer p;
  p.SetSingleLineMode(true);
  p.PrintToString(v, &s);
  return s;
}

Status AddDefaultsAndValidate(const proto::OpDef& op, proto::NodeDef* node) {
  auto* attrs = node->mutable_attr();
  for (const auto& def : op.attr()) {
    auto it = attrs->find(def.name());
    if (it == attrs->end()) {
      if (!def.has_default_value())
        return errors::InvalidArgument(NodePrefix(*node), ": missing attr '", def.name(), "' (", def.type(),
                                       ") that has no default");
      (*attrs)[def.name()] = def.default_value();
      continue;
    }
    GR_RETURN_IF_ERROR(CheckAttr(*node, def, it->second));
  }
  for (const auto& [name, value] : *attrs) {
    if (name.empty() || name[0] == '_') continue;
    bool known = false;
    for (const auto& def : op.attr()) known |= def.name() == name;
    if (!known)
      return errors::InvalidArgument(NodePrefix(*node), ": attr '", name, "' is not an attr of op '", op.name(),
                                     "' (a newer TensorFlow op version, or a typo?)");
  }
  return Status::OK();
}

Status InputOutputTypes(const proto::NodeDef& node, const proto::OpDef& op, DataTypeVector* inputs,
                        DataTypeVector* outputs, std::vector<ArgRange>* input_ranges,
                        std::vector<ArgRange>* output_ranges) {
  inputs->clear();
  outputs->clear();
  for (const auto& arg : op.input_arg()) {
    int begin = static_cast<int>(inputs->size());
    GR_RETURN_IF_ERROR(ArgTypes(node, arg, inputs));
    if (input_ranges) input_ranges->push_back({arg.name(), begin, static_cast<int>(inputs->size())});
  }
  for (const auto& arg : op.output_arg()) {
    int begin = static_cast<int>(outputs->size());
    GR_RETURN_IF_ERROR(ArgTypes(node, arg, outputs));
    if (output_ranges) output_ranges->push_back({arg.name(), begin, static_cast<int>(outputs->size())});
  }
  return Status::OK();
}

}  // namespace graphrt
