// graphrt plugin SDK: device graph passes (ABI 1.3) in C++.
//
//   sdk::Status MyPass(sdk::GraphPassContext& ctx, const std::string& graph_def,
//                      std::string* rewritten, bool* changed);
//   REGISTER_GRAPH_PASS(GraphPass("mine.fuse_foo").Device(DEVICE_CPU)
//                           .Toggle(GR_PASS_TOGGLE_REMAPPING).Order(20), MyPass);
//
// The graph crosses as a serialized GraphDef; the plugin parses it with
// protobuf classes of its own (see GR_GraphPassSpec in c_api.h for what a
// pass may change). The SDK stays free of protobuf so that any plugin can
// include it. A pass that sets *changed = false leaves the graph as it was.
#ifndef GRAPHRT_SDK_GRAPH_PASS_H_
#define GRAPHRT_SDK_GRAPH_PASS_H_

#include <graphrt/sdk/sdk.h>

#include <deque>
#include <string>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {

// What the core offers a running pass (GR_CoreApi.pass_*).
class GraphPassContext {
 public:
  explicit GraphPassContext(GR_GraphPassContext* c) : c_(c) {}
  // The type ("CPU") of the device a NodeDef.device names; empty when the
  // session has no such device.
  std::string DeviceType(const std::string& device) const {
    const char* t = Api().pass_device_type(c_, device.c_str());
    return t ? t : "";
  }
  // Whether `device` has a kernel for the serialized NodeDef (attr defaults
  // of its OpDef filled in by the core).
  bool KernelAvailable(const std::string& node_def, const std::string& device) const {
    return Api().pass_kernel_available(c_, node_def.data(), node_def.size(), device.c_str()) != 0;
  }
  // The serialized OpDef of `op`; false for ops no plugin defines.
  bool OpDef(const std::string& op, std::string* serialized) const {
    const char* data = nullptr;
    uint64_t size = 0;
    if (Api().pass_op_def(c_, op.c_str(), &data, &size) != GR_OK) return false;
    serialized->assign(data, size);
    return true;
  }
  // Whether the step runs `node` as a target: it must stay.
  bool IsTarget(const std::string& node) const { return Api().pass_is_target(c_, node.c_str()) != 0; }
  GR_GraphPassContext* raw() const { return c_; }

 private:
  GR_GraphPassContext* c_;
};

using GraphPassFn = Status (*)(GraphPassContext& ctx, const std::string& graph_def, std::string* rewritten,
                               bool* changed);

class GraphPass {
 public:
  explicit GraphPass(const char* name) : name_(name) {}
  GraphPass& Device(const char* device_type) {
    device_ = device_type;
    return *this;
  }
  GraphPass& Toggle(GR_GraphPassToggle toggle) {
    toggle_ = toggle;
    return *this;
  }
  GraphPass& Order(int32_t order) {
    order_ = order;
    return *this;
  }

  void ToSpec(GraphPassFn fn, GR_GraphPassSpec* spec) {
    fn_ = fn;
    std::memset(spec, 0, sizeof(*spec));
    spec->struct_size = sizeof(*spec);
    spec->name = name_.c_str();
    spec->device_type = device_.c_str();
    spec->toggle = toggle_;
    spec->order = order_;
    spec->user_data = this;
    spec->run = &Run;
  }

 private:
  // The C entry: exceptions become errors on the context, never cross.
  static int32_t Run(void* user_data, GR_GraphPassContext* c, const char* data, uint64_t size) {
    auto* self = static_cast<GraphPass*>(user_data);
    GraphPassContext ctx(c);
    Status s;
    std::string out;
    bool changed = false;
    try {
      s = self->fn_(ctx, std::string(data, size), &out, &changed);
    } catch (const std::exception& e) {
      s = Status(GR_INTERNAL, std::string("exception: ") + e.what());
    } catch (...) {
      s = Status(GR_INTERNAL, "unknown exception");
    }
    if (!s.ok()) {
      Api().pass_set_error(c, s.code(), s.message().c_str());
      return s.code();
    }
    return changed ? Api().pass_set_output(c, out.data(), out.size()) : GR_OK;
  }

  std::string name_;
  std::string device_ = DEVICE_CPU;
  int32_t toggle_ = GR_PASS_TOGGLE_NONE;
  int32_t order_ = 0;
  GraphPassFn fn_ = nullptr;
};

namespace detail {

struct PassEntry {
  GraphPass pass;
  GraphPassFn fn;
};

inline std::deque<PassEntry>& PluginPasses() {
  static std::deque<PassEntry> passes;  // hidden: one per plugin
  return passes;
}

inline int32_t RegisterPasses(GR_PluginInitArgs* args) {
  if (!GRAPHRT_CORE_HAS(register_graph_pass)) {
    // An older core runs no plugin passes; the plugin's kernels still work.
    g_api->log(GR_LOG_INFO, __FILE__, __LINE__,
               "this graphrt core predates plugin graph passes (ABI 1.3); the plugin's passes are not used");
    return GR_OK;
  }
  for (PassEntry& e : PluginPasses()) {
    GR_GraphPassSpec spec;
    e.pass.ToSpec(e.fn, &spec);
    int32_t code = g_api->register_graph_pass(args->registrar, &spec);
    if (code != GR_OK) return code;
  }
  return GR_OK;
}

inline bool AddGraphPass(GraphPass pass, GraphPassFn fn) {
  if (PluginPasses().empty()) GetPluginRegistry().init_hooks.push_back(&RegisterPasses);
  PluginPasses().push_back({std::move(pass), fn});
  return true;
}

}  // namespace detail

}  // namespace sdk
}  // namespace graphrt

// REGISTER_GRAPH_PASS(GraphPass("name").Device(DEVICE_CPU).Toggle(...).Order(n), Fn)
#define REGISTER_GRAPH_PASS(builder, fn)                            \
  [[maybe_unused]] static const bool GR_SDK_UNIQUE(gr_graph_pass_) = \
      ::graphrt::sdk::detail::AddGraphPass(builder, fn)

#pragma GCC visibility pop

#endif  // GRAPHRT_SDK_GRAPH_PASS_H_
