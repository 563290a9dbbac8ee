/* An op spec whose struct_size stops before shape_fn_user_data, the last
 * field register_op reads: the core must refuse it (it once accepted it). */
#include <graphrt/c_api.h>
#include <string.h>
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  static const char* outputs[] = {"y: float"};
  GR_OpSpec op;
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  memset(&op, 0, sizeof(op));
  op.struct_size = offsetof(GR_OpSpec, shape_fn_user_data);
  op.name = "ShortSpecOp";
  op.outputs = outputs;
  op.num_outputs = 1;
  return args->api->register_op(args->registrar, &op);
}
