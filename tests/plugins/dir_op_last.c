/* Defines op TestDirOp (y: int32), whose kernel dir_kernels_first.c provides. */
#include <graphrt/c_api.h>
#include <string.h>
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  args->plugin_name = "test_dir_op";
  const char* out[] = {"y: int32"};
  GR_OpSpec s;
  memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.name = "TestDirOp";
  s.outputs = out;
  s.num_outputs = 1;
  s.flags = GR_OP_STATEFUL; /* never folded: the test asks the kernel each time */
  return args->api->register_op(args->registrar, &s);
}
