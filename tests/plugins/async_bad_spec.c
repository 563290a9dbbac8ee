/* ABI 1.3: a kernel must set exactly one of compute and compute_async; this
 * one sets both (ASYNC_BAD_NEITHER: neither), so the load must fail. */
#include <graphrt/c_api.h>
#include <string.h>
static void* Create(GR_KernelConstruction* kc, void* u) { (void)kc; (void)u; return (void*)1; }
static void Compute(void* k, GR_KernelContext* c) { (void)k; (void)c; }
static void Destroy(void* k) { (void)k; }
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  GR_KernelSpec k;
  memset(&k, 0, sizeof(k));
  k.struct_size = sizeof(k);
  k.op_name = "Identity";
  k.device_type = "CPU";
  k.create = Create;
#ifndef ASYNC_BAD_NEITHER
  k.compute = Compute;
  k.compute_async = Compute;
#endif
  k.destroy = Destroy;
  return args->api->register_kernel(args->registrar, &k);
}
