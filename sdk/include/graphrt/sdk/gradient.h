// graphrt plugin SDK: gradient functions (ABI 1.5) in C++.
//
//   sdk::Status ReluGrad(sdk::GradientContext& g) {
//     g.SetGrad(0, g.Add("ReluGrad", "ReluGrad", {g.grad(0), g.input(0)}, {sdk::TypeAttr("T", g.input_type(0))}));
//     return sdk::Status();
//   }
//   REGISTER_GRADIENT("Relu", ReluGrad);
//   REGISTER_NO_GRADIENT("Shape");   // not differentiable: no gradient flows through it
//
// A gradient function adds ordinary nodes that read the node's inputs
// (input(i)), outputs (output(i)) and the gradients arriving at its outputs
// (grad(i)), and names each input's gradient (SetGrad); see
// GR_GradientSpec in c_api.h. Nodes cross as NodeDef text, so the SDK stays
// free of protobuf. Add returns the new node's output 0 ("name:0"); Out(t, k)
// names its output k.
#ifndef GRAPHRT_SDK_GRADIENT_H_
#define GRAPHRT_SDK_GRADIENT_H_

#include <graphrt/sdk/sdk.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {

// One attr of a node a gradient function adds, as NodeDef text.
struct AttrText {
  std::string text;
};

inline std::string QuoteForText(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline AttrText ValueAttr(const std::string& name, const std::string& value_text) {
  return {"attr { key: " + QuoteForText(name) + " value { " + value_text + " } }"};
}
inline AttrText TypeAttr(const std::string& name, DataType t) {
  return ValueAttr(name, "type: " + std::to_string(static_cast<int>(t)));
}
inline AttrText BoolAttr(const std::string& name, bool b) { return ValueAttr(name, b ? "b: true" : "b: false"); }
inline AttrText IntAttr(const std::string& name, int64_t i) { return ValueAttr(name, "i: " + std::to_string(i)); }
inline AttrText FloatAttr(const std::string& name, float f) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "f: %.9g", static_cast<double>(f));
  return ValueAttr(name, buf);
}
inline AttrText StringAttr(const std::string& name, const std::string& s) {
  return ValueAttr(name, "s: " + QuoteForText(s));
}
inline AttrText IntListAttr(const std::string& name, const std::vector<int64_t>& v) {
  std::string t = "list {";
  for (int64_t i : v) t += " i: " + std::to_string(i);
  return ValueAttr(name, t + " }");
}
// A scalar or 1-D constant's value (for a Const node's "value").
inline AttrText TensorAttr(const std::string& name, DataType t, const std::vector<int64_t>& dims,
                           const std::string& values_field, const std::vector<std::string>& values) {
  std::string text = "tensor { dtype: " + std::to_string(static_cast<int>(t)) + " tensor_shape {";
  for (int64_t d : dims) text += " dim { size: " + std::to_string(d) + " }";
  text += " }";
  for (const std::string& v : values) text += " " + values_field + ": " + v;
  return ValueAttr(name, text + " }");
}

// What the core offers a running gradient function (GR_CoreApi.grad_*).
class GradientContext {
 public:
  explicit GradientContext(GR_GradientContext* c) : c_(c) {}

  int num_inputs() const { return Api().grad_num_inputs(c_); }
  int num_outputs() const { return Api().grad_num_outputs(c_); }
  DataType input_type(int i) const { return static_cast<DataType>(Api().grad_input_type(c_, i)); }
  DataType output_type(int i) const { return static_cast<DataType>(Api().grad_output_type(c_, i)); }
  std::string input(int i) const { return Name(Api().grad_input(c_, i)); }
  std::string output(int i) const { return Name(Api().grad_output(c_, i)); }
  // The gradient arriving at output i (zeros where none arrives).
  std::string grad(int i) const { return Name(Api().grad_output_gradient(c_, i)); }

  template <typename T>
  Status GetAttr(const char* name, T* v) const {
    return AttrReader(Api().grad_attrs(c_)).Get(name, v);
  }
  template <typename T>
  T Attr(const char* name) const {
    T v{};
    Status s = GetAttr(name, &v);
    if (!s.ok()) throw std::runtime_error(s.message());
    return v;
  }

  // Adds node `op` named `name` (under the gradient's scope) reading
  // `inputs`; returns its output 0. Throws on failure (the SDK turns it
  // into the function's error).
  std::string Add(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                  const std::vector<AttrText>& attrs = {}) {
    std::string text = "op: " + QuoteForText(op);
    for (const std::string& in : inputs) text += " input: " + QuoteForText(in);
    for (const AttrText& a : attrs) text += " " + a.text;
    const char* out = nullptr;
    if (Api().grad_add_node(c_, name.c_str(), text.c_str(), &out) != GR_OK) throw Failed();
    return std::string(out) + ":0";
  }
  // Output k of the node whose output 0 is `t`.
  static std::string Out(const std::string& t, int k) { return t.substr(0, t.rfind(':')) + ":" + std::to_string(k); }

  // A Const node: an int32 vector or scalar ("Const" of the values given).
  std::string IntConst(const std::string& name, const std::vector<int32_t>& values, bool scalar = false) {
    std::vector<std::string> v;
    for (int32_t x : values) v.push_back(std::to_string(x));
    return Add(name, "Const", {},
               {TypeAttr("dtype", GR_INT32),
                TensorAttr("value", GR_INT32, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{
                                                            static_cast<int64_t>(values.size())},
                           "int_val", v)});
  }
  // A scalar Const of type t: float or double as given; another type is a
  // float Const cast to it ("<name>/Cast"... named by the core).
  std::string ScalarConst(const std::string& name, DataType t, double value) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", value);
    const DataType as = t == GR_DOUBLE ? GR_DOUBLE : GR_FLOAT;
    std::string c = Add(name, "Const", {},
                        {TypeAttr("dtype", as), TensorAttr("value", as, {}, as == GR_DOUBLE ? "double_val" : "float_val",
                                                           {buf})});
    if (t == as) return c;
    return Add(name + "_cast", "Cast", {c}, {TypeAttr("SrcT", as), TypeAttr("DstT", t), BoolAttr("Truncate", false)});
  }

  void SetGrad(int input, const std::string& tensor) {
    if (Api().grad_set_input_gradient(c_, input, tensor.c_str()) != GR_OK) throw Failed();
  }

  GR_GradientContext* raw() const { return c_; }

  // Thrown when the core refused a call and recorded why on the context.
  struct Failed {};

 private:
  static std::string Name(const char* s) { return s ? s : ""; }
  GR_GradientContext* c_;
};

using GradientFn = Status (*)(GradientContext& g);

namespace detail {

struct GradientEntry {
  std::string op;
  GradientFn fn;  // null: not differentiable
};

inline std::deque<GradientEntry>& PluginGradients() {
  static std::deque<GradientEntry> gradients;  // hidden: one per plugin
  return gradients;
}

// The C entry: exceptions become errors on the context, never cross.
inline int32_t RunGradient(GR_GradientContext* c, void* user_data) {
  auto* e = static_cast<GradientEntry*>(user_data);
  GradientContext ctx(c);
  Status s;
  try {
    s = e->fn(ctx);
  } catch (const GradientContext::Failed&) {
    return GR_INVALID_ARGUMENT;  // recorded on the context already
  } catch (const std::exception& ex) {
    s = Status(GR_INTERNAL, std::string("exception: ") + ex.what());
  } catch (...) {
    s = Status(GR_INTERNAL, "unknown exception");
  }
  if (!s.ok()) {
    Api().grad_set_error(c, s.code(), s.message().c_str());
    return s.code();
  }
  return GR_OK;
}

inline int32_t RegisterGradients(GR_PluginInitArgs* args) {
  if (!GRAPHRT_CORE_HAS(register_gradient)) {
    g_api->log(GR_LOG_INFO, __FILE__, __LINE__,
               "this graphrt core predates plugin gradients (ABI 1.5); the plugin's gradients are not used");
    return GR_OK;
  }
  for (GradientEntry& e : PluginGradients()) {
    GR_GradientSpec spec;
    std::memset(&spec, 0, sizeof(spec));
    spec.struct_size = sizeof(spec);
    spec.op = e.op.c_str();
    spec.fn = e.fn ? &RunGradient : nullptr;
    spec.user_data = &e;
    int32_t code = g_api->register_gradient(args->registrar, &spec);
    if (code != GR_OK) return code;
  }
  return GR_OK;
}

inline bool AddGradient(const char* op, GradientFn fn) {
  if (PluginGradients().empty()) GetPluginRegistry().init_hooks.push_back(&RegisterGradients);
  PluginGradients().push_back({op, fn});
  return true;
}

}  // namespace detail

}  // namespace sdk
}  // namespace graphrt

#define REGISTER_GRADIENT(op, fn)                                  \
  [[maybe_unused]] static const bool GR_SDK_UNIQUE(gr_gradient_) = \
      ::graphrt::sdk::detail::AddGradient(op, fn)

#define REGISTER_NO_GRADIENT(op)                                   \
  [[maybe_unused]] static const bool GR_SDK_UNIQUE(gr_gradient_) = \
      ::graphrt::sdk::detail::AddGradient(op, nullptr)

#pragma GCC visibility pop

#endif  // GRAPHRT_SDK_GRADIENT_H_
