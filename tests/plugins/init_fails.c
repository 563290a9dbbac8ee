/* Registers an op, then fails: nothing it registered may survive. */
#include <graphrt/c_api.h>
#include <string.h>
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  args->plugin_name = "init_fails";
  const char* outputs[] = {"y: float"};
  GR_OpSpec spec;
  memset(&spec, 0, sizeof(spec));
  spec.struct_size = sizeof(spec);
  spec.name = "ShouldNotSurvive";
  spec.outputs = outputs;
  spec.num_outputs = 1;
  args->api->register_op(args->registrar, &spec);
  args->api->registrar_set_error(args->registrar, GR_UNAVAILABLE, "license server unreachable");
  return GR_UNAVAILABLE;
}
