/* A second CPU kernel for the standard op Relu (T = float), with priority
 * PRIO: 1 replaces ops_math_cpu's kernel, 0 is shadowed by it and never
 * used. Its compute fails with "test kernel_override ran", so a run tells
 * which kernel was chosen. */
#include <graphrt/c_api.h>
#include <string.h>
#ifndef PRIO
#define PRIO 1
#endif
static const GR_CoreApi* api;
static void* Create(GR_KernelConstruction* kc, void* u) { (void)kc; (void)u; return (void*)1; }
static void Compute(void* k, GR_KernelContext* ctx) {
  (void)k;
  api->ctx_set_error(ctx, GR_INTERNAL, "test kernel_override ran");
}
static void Destroy(void* k) { (void)k; }
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  args->plugin_name = PRIO ? "test_relu_override" : "test_relu_shadowed";
  api = args->api;
  static const int32_t f32[] = {GR_FLOAT};
  GR_TypeConstraint tc;
  memset(&tc, 0, sizeof(tc));
  tc.struct_size = sizeof(tc);
  tc.attr_name = "T";
  tc.allowed = f32;
  tc.num_allowed = 1;
  GR_KernelSpec k;
  memset(&k, 0, sizeof(k));
  k.struct_size = sizeof(k);
  k.op_name = "Relu";
  k.device_type = "CPU";
  k.constraints = &tc;
  k.num_constraints = 1;
  k.priority = PRIO;
  k.create = Create;
  k.compute = Compute;
  k.destroy = Destroy;
  return args->api->register_kernel(args->registrar, &k);
}
