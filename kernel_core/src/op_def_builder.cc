// Parses REGISTER_OP spec strings (TensorFlow's syntax) into OpDefs.
#include <google/protobuf/text_format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <string_view>

#include "graphrt/core/op_registry.h"
#include "graphrt/core/types.h"

namespace graphrt {
namespace {

using proto::OpDef;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  *s = Trim(*s);
  return true;
}

bool IsAttrName(std::string_view n) {
  if (n.empty() || !std::isalpha(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool IsArgName(std::string_view n) {
  if (n.empty() || !std::islower(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

const std::vector<DataType>* NamedTypeSet(std::string_view name) {
  static const std::vector<DataType> kNumber = {
      GR_FLOAT, GR_DOUBLE, GR_INT32, GR_UINT8, GR_INT16, GR_INT8, GR_COMPLEX64, GR_INT64, GR_QINT8, GR_QUINT8,
      GR_QINT32, GR_BFLOAT16, GR_QINT16, GR_QUINT16, GR_UINT16, GR_COMPLEX128, GR_HALF, GR_UINT32, GR_UINT64};
  static const std::vector<DataType> kRealNumber = {GR_FLOAT, GR_DOUBLE, GR_INT32, GR_UINT8, GR_INT16, GR_INT8,
                                                    GR_INT64, GR_BFLOAT16, GR_UINT16, GR_HALF, GR_UINT32, GR_UINT64};
  static const std::vector<DataType> kQuantized = {GR_QINT8, GR_QUINT8, GR_QINT32, GR_QINT16, GR_QUINT16};
  static const std::vector<DataType> kFloatingPoint = {GR_HALF, GR_BFLOAT16, GR_FLOAT, GR_DOUBLE};
  if (name == "numbertype") return &kNumber;
  if (name == "realnumbertype") return &kRealNumber;
  if (name == "quantizedtype") return &kQuantized;
  if (name == "floatingpointtype") return &kFloatingPoint;
  return nullptr;
}

class SpecParser {
 public:
  explicit SpecParser(std::string op) : op_(std::move(op)) {}

  Status ParseAttr(std::string_view spec, OpDef::AttrDef* attr) {
    const std::string where = "Attr(\"" + std::string(spec) + "\") for Op " + op_;
    std::string_view s = Trim(spec);
    size_t colon = s.find(':');
    std::string_view name = colon == std::string_view::npos ? std::string_view() : Trim(s.substr(0, colon));
    if (colon == std::string_view::npos || !IsAttrName(name))
      return errors::InvalidArgument("Trouble parsing '<name>:' from ", where);
    attr->set_name(std::string(name));
    s = Trim(s.substr(colon + 1));

    // Split off "= default" (the first '=' not inside braces/quotes/brackets).
    std::string_view default_text;
    {
      int depth = 0;
      char quote = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (quote) {
          if (c == '\\') ++i;
          else if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '{' || c == '[' || c == '(') {
          ++depth;
        } else if (c == '}' || c == ']' || c == ')') {
          --depth;
        } else if (c == '=' && depth == 0 && (i + 1 >= s.size() || s[i + 1] != '=') &&
                   (i == 0 || (s[i - 1] != '>' && s[i - 1] != '<'))) {
          default_text = Trim(s.substr(i + 1));
          s = Trim(s.substr(0, i));
          break;
        }
      }
    }

    // Minimum: "int >= 2" / "list(type) >= 1".
    size_t ge = s.find(">=");
    if (ge != std::string_view::npos) {
      std::string_view num = s.substr(ge + 2);
      std::string num_str(Trim(num));
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(num_str.c_str(), &end, 10);
      if (num_str.empty() || *end != '\0' || errno == ERANGE)
        return errors::InvalidArgument("Could not parse integer lower limit after '>=', found '",
                                       std::string(num), "' instead from ", where);
      attr->set_has_minimum(true);
      attr->set_minimum(v);
      s = Trim(s.substr(0, ge));
    }

    bool is_list = false;
    std::string_view type = s;
    if (ConsumePrefix(&type, "list(")) {
      if (type.empty() || type.back() != ')') return errors::InvalidArgument("Trouble parsing type string at '", std::string(s), "' from ", where);
      type = Trim(type.substr(0, type.size() - 1));
      is_list = true;
    }
    std::string kind;
    if (!type.empty() && type.front() == '{') {
      GR_RETURN_IF_ERROR(ParseAllowed(type, where, attr, &kind));
    } else if (const std::vector<DataType>* set = NamedTypeSet(type)) {
      kind = "type";
      for (DataType t : *set) attr->mutable_allowed_values()->mutable_list()->add_type(static_cast<proto::DataType>(t));
    } else if (type == "string" || type == "int" || type == "float" || type == "bool" || type == "type" ||
               type == "shape" || type == "tensor" || type == "func") {
      kind = std::string(type);
    } else {
      return errors::InvalidArgument("Trouble parsing type string at '", std::string(type), "' from ", where);
    }
    if (attr->has_minimum() && kind != "int" && !is_list)
      return errors::InvalidArgument("Cannot use '>=' with attr of type ", kind, " in ", where);
    attr->set_type(is_list ? "list(" + kind + ")" : kind);

    if (!default_text.empty()) GR_RETURN_IF_ERROR(ParseDefault(default_text, kind, is_list, where, attr));
    return Status::OK();
  }

  // "x: T", "x: float", "values: N * T", "r: Ref(float)", "l: Tlist".
  Status ParseArg(std::string_view spec, bool is_input, const OpDef& def, OpDef::ArgDef* arg) {
    const std::string where =
        std::string(is_input ? "Input" : "Output") + "(\"" + std::string(spec) + "\") for Op " + op_;
    std::string_view s = Trim(spec);
    size_t colon = s.find(':');
    std::string_view name = colon == std::string_view::npos ? std::string_view() : Trim(s.substr(0, colon));
    if (colon == std::string_view::npos || !IsArgName(name))
      return errors::InvalidArgument("Trouble parsing 'name:' from ", where);
    arg->set_name(std::string(name));
    s = Trim(s.substr(colon + 1));
    if (ConsumePrefix(&s, "Ref(")) {
      if (s.empty() || s.back() != ')') return errors::InvalidArgument("Did not find closing ')' for 'Ref(' in ", where);
      s = Trim(s.substr(0, s.size() - 1));
      arg->set_is_ref(true);
    }
    size_t star = s.find('*');
    if (star != std::string_view::npos) {
      std::string_view n = Trim(s.substr(0, star));
      const OpDef::AttrDef* a = FindAttr(def, n);
      if (a == nullptr) return errors::InvalidArgument("Reference to unknown attr '", std::string(n), "' from ", where);
      if (a->type() != "int")
        return errors::InvalidArgument("Reference to attr '", std::string(n), "' with type ", a->type(),
                                       " that isn't int from ", where);
      arg->set_number_attr(std::string(n));
      s = Trim(s.substr(star + 1));
    }
    DataType dt;
    if (DataTypeFromString(s, &dt) && !IsRefType(dt)) {
      arg->set_type(static_cast<proto::DataType>(dt));
      return Status::OK();
    }
    const OpDef::AttrDef* a = FindAttr(def, s);
    if (a == nullptr) return errors::InvalidArgument("Reference to unknown attr '", std::string(s), "' from ", where);
    if (a->type() == "type") {
      arg->set_type_attr(std::string(s));
    } else if (a->type() == "list(type)" && arg->number_attr().empty()) {
      arg->set_type_list_attr(std::string(s));
    } else {
      return errors::InvalidArgument("Reference to attr '", std::string(s), "' with type ", a->type(),
                                     " that isn't type or list(type) from ", where);
    }
    return Status::OK();
  }

  static OpDef::AttrDef* FindAttr(OpDef& def, std::string_view name) {
    for (auto& a : *def.mutable_attr())
      if (a.name() == name) return &a;
    return nullptr;
  }
  static const OpDef::AttrDef* FindAttr(const OpDef& def, std::string_view name) {
    for (const auto& a : def.attr())
      if (a.name() == name) return &a;
    return nullptr;
  }

 private:
  // "{float, int32}" (types) or "{'a', "b"}" (strings).
  Status ParseAllowed(std::string_view s, const std::string& where, OpDef::AttrDef* attr, std::string* kind) {
    if (s.back() != '}') return errors::InvalidArgument("Trouble parsing type string at '", std::string(s), "' from ", where);
    std::string_view body = Trim(s.substr(1, s.size() - 2));
    if (body.empty()) return errors::InvalidArgument("Trouble parsing type string at '}' from ", where);
    auto* list = attr->mutable_allowed_values()->mutable_list();
    const bool strings = body.front() == '"' || body.front() == '\'';
    *kind = strings ? "string" : "type";
    while (!body.empty()) {
      size_t comma = body.find(',');
      std::string_view item = Trim(body.substr(0, comma));
      body = comma == std::string_view::npos ? std::string_view() : Trim(body.substr(comma + 1));
      if (strings) {
        if (item.size() < 2 || (item.front() != '"' && item.front() != '\'') || item.back() != item.front())
          return errors::InvalidArgument("Trouble parsing allowed string at '", std::string(item), "' from ", where);
        list->add_s(std::string(item.substr(1, item.size() - 2)));
      } else {
        DataType dt;
        if (const std::vector<DataType>* set = NamedTypeSet(item)) {
          for (DataType t : *set) list->add_type(static_cast<proto::DataType>(t));
        } else if (DataTypeFromString(item, &dt) && !IsRefType(dt)) {
          list->add_type(static_cast<proto::DataType>(dt));
        } else {
          return errors::InvalidArgument("Unrecognized type string '", std::string(item), "' from ", where);
        }
      }
    }
    return Status::OK();
  }

  Status ParseScalarDefault(std::string_view v, const std::string& kind, const std::string& where,
                            proto::AttrValue* out, proto::AttrValue::ListValue* list) {
    auto fail = [&]() {
      return errors::InvalidArgument("Could not parse default value '", std::string(v), "' from ", where);
    };
    std::string str(v);
    if (kind == "string") {
      if (v.size() < 2 || (v.front() != '"' && v.front() != '\'') || v.back() != v.front()) return fail();
      std::string s(v.substr(1, v.size() - 2));
      list ? list->add_s(s) : out->set_s(s);
    } else if (kind == "int") {
      char* end = nullptr;
      errno = 0;
      long long x = std::strtoll(str.c_str(), &end, 10);
      if (str.empty() || *end != '\0' || errno == ERANGE) return fail();
      list ? list->add_i(x) : out->set_i(x);
    } else if (kind == "float") {
      char* end = nullptr;
      float x = std::strtof(str.c_str(), &end);
      if (str.empty() || *end != '\0') return fail();
      list ? list->add_f(x) : out->set_f(x);
    } else if (kind == "bool") {
      if (v != "true" && v != "false") return fail();
      list ? list->add_b(v == "true") : out->set_b(v == "true");
    } else if (kind == "type") {
      DataType dt;
      if (!DataTypeFromString(v, &dt)) return fail();
      list ? list->add_type(static_cast<proto::DataType>(dt)) : out->set_type(static_cast<proto::DataType>(dt));
    } else if (kind == "shape" || kind == "tensor") {
      std::string body = str;
      if (!body.empty() && body.front() == '{' && body.back() == '}') body = body.substr(1, body.size() - 2);
      google::protobuf::Message* m;
      if (kind == "shape") m = list ? list->add_shape() : out->mutable_shape();
      else m = list ? list->add_tensor() : out->mutable_tensor();
      if (!google::protobuf::TextFormat::ParseFromString(body, m)) return fail();
    } else {
      return errors::InvalidArgument("Attr of type ", kind, " cannot have a default, in ", where);
    }
    return Status::OK();
  }

  Status ParseDefault(std::string_view v, const std::string& kind, bool is_list, const std::string& where,
                      OpDef::AttrDef* attr) {
    proto::AttrValue* out = attr->mutable_default_value();
    if (!is_list) return ParseScalarDefault(v, kind, where, out, nullptr);
    if (v.size() < 2 || v.front() != '[' || v.back() != ']')
      return errors::InvalidArgument("Could not parse default value '", std::string(v), "' from ", where);
    auto* list = out->mutable_list();
    std::string_view body = Trim(v.substr(1, v.size() - 2));
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
      if (i < body.size() && (body[i] == '{' || body[i] == '[')) ++depth;
      if (i < body.size() && (body[i] == '}' || body[i] == ']')) --depth;
      if (i == body.size() || (body[i] == ',' && depth == 0)) {
        std::string_view item = Trim(body.substr(start, i - start));
        if (!item.empty()) GR_RETURN_IF_ERROR(ParseScalarDefault(item, kind, where, nullptr, list));
        start = i + 1;
      }
    }
    return Status::OK();
  }

  std::string op_;
};

}  // namespace

Status BuildOpDef(const GR_OpSpec& spec, proto::OpDef* out) {
  if (spec.name == nullptr || spec.name[0] == '\0') return errors::InvalidArgument("op spec without a name");
  const std::string name = spec.name;
  if (!std::isupper(static_cast<unsigned char>(name[0])) && name[0] != '_')
    return errors::InvalidArgument("Op name '", name, "' must start with an upper-case letter");
  OpDef def;
  def.set_name(name);
  SpecParser p(name);
  std::set<std::string> seen;
  for (int i = 0; i < spec.num_attrs; ++i) {
    OpDef::AttrDef a;
    GR_RETURN_IF_ERROR(p.ParseAttr(spec.attrs[i], &a));
    if (!seen.insert(a.name()).second)
      return errors::InvalidArgument("Duplicate name '", a.name(), "' in Op ", name);
    *def.add_attr() = std::move(a);
  }
  auto add_args = [&](const char* const* specs, int n, bool is_input) -> Status {
    for (int i = 0; i < n; ++i) {
      OpDef::ArgDef arg;
      GR_RETURN_IF_ERROR(p.ParseArg(specs[i], is_input, def, &arg));
      if (!seen.insert(arg.name()).second)
        return errors::InvalidArgument("Duplicate name '", arg.name(), "' in Op ", name);
      // A counted or listed arg needs at least one element.
      if (!arg.number_attr().empty()) {
        OpDef::AttrDef* a = SpecParser::FindAttr(def, arg.number_attr());
        if (!a->has_minimum()) { a->set_has_minimum(true); a->set_minimum(1); }
      }
      if (!arg.type_list_attr().empty()) {
        OpDef::AttrDef* a = SpecParser::FindAttr(def, arg.type_list_attr());
        if (!a->has_minimum()) { a->set_has_minimum(true); a->set_minimum(1); }
      }
      if (is_input && arg.type() == proto::DT_RESOURCE) def.set_is_stateful(true);
      *(is_input ? def.add_input_arg() : def.add_output_arg()) = std::move(arg);
    }
    return Status::OK();
  };
  GR_RETURN_IF_ERROR(add_args(spec.inputs, spec.num_inputs, true));
  GR_RETURN_IF_ERROR(add_args(spec.outputs, spec.num_outputs, false));
  if (spec.flags & GR_OP_STATEFUL) def.set_is_stateful(true);
  if (spec.flags & GR_OP_COMMUTATIVE) def.set_is_commutative(true);
  if (spec.flags & GR_OP_AGGREGATE) def.set_is_aggregate(true);
  if (spec.flags & GR_OP_ALLOWS_UNINITIALIZED_INPUT) def.set_allows_uninitialized_input(true);
  if (spec.summary) def.set_summary(spec.summary);
  *out = std::move(def);
  return Status::OK();
}

}  // namespace graphrt
