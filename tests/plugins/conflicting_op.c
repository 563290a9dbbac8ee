/* Redefines AddV2 with another signature, plus a new op: all-or-nothing. */
#include <graphrt/c_api.h>
#include <string.h>
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  const char* in[] = {"x: int32"};
  const char* out[] = {"y: int32"};
  GR_OpSpec s;
  memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.name = "FreshOpFromConflictingPlugin";
  s.inputs = in;
  s.num_inputs = 1;
  s.outputs = out;
  s.num_outputs = 1;
  int32_t rc = args->api->register_op(args->registrar, &s);
  if (rc) return rc;
  s.name = "AddV2";
  return args->api->register_op(args->registrar, &s);
}
