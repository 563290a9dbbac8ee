// A raw C-ABI plugin (no SDK, so nothing catches for it) whose code throws
// C++ exceptions at the core: from init (THROW_IN_INIT), and from kernel
// creation and compute of op ThrowingOp (attr `where`: "create", "compute",
// "bad_alloc" or "none"; y = x otherwise). The core must turn each into a
// Status naming the plugin or the node.
#include <graphrt/c_api.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace {

const GR_CoreApi* api = nullptr;

#ifndef THROW_IN_INIT  // the init-throwing build registers no kernel
void* Create(GR_KernelConstruction* kc, void*) {
  const char* where = nullptr;
  uint64_t size = 0;
  api->attr_string(api->kc_attrs(kc), "where", &where, &size);
  const std::string w(where, size);
  if (w == "create") throw std::runtime_error("thrown by ThrowingOp's create");
  return new std::string(w);
}

void Compute(void* kernel, GR_KernelContext* ctx) {
  const std::string& w = *static_cast<std::string*>(kernel);
  if (w == "compute") throw std::runtime_error("thrown by ThrowingOp's compute");
  if (w == "bad_alloc") throw std::bad_alloc();
  api->ctx_set_output_from_input(ctx, 0, 0, -1, nullptr);
}

void Destroy(void* kernel) { delete static_cast<std::string*>(kernel); }
#endif

}  // namespace

extern "C" GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
#ifdef THROW_IN_INIT
  args->plugin_name = "graphrt_test_init_throws";
  throw std::runtime_error("thrown by the plugin's init");
#else
  args->plugin_name = "graphrt_test_throwing";
  api = args->api;
  const char* inputs[] = {"x: float"};
  const char* outputs[] = {"y: float"};
  const char* attrs[] = {"where: string"};
  GR_OpSpec op;
  std::memset(&op, 0, sizeof(op));
  op.struct_size = sizeof(op);
  op.name = "ThrowingOp";
  op.inputs = inputs;
  op.num_inputs = 1;
  op.outputs = outputs;
  op.num_outputs = 1;
  op.attrs = attrs;
  op.num_attrs = 1;
  int32_t rc = api->register_op(args->registrar, &op);
  if (rc != GR_OK) return rc;
  GR_KernelSpec k;
  std::memset(&k, 0, sizeof(k));
  k.struct_size = sizeof(k);
  k.op_name = "ThrowingOp";
  k.device_type = "CPU";
  k.create = Create;
  k.compute = Compute;
  k.destroy = Destroy;
  return api->register_kernel(args->registrar, &k);
#endif
}
