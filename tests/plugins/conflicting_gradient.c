/* Registers a new op and a gradient for MatMul, whose gradient the math
 * plugin registered already: refused, all or nothing. With
 * SHORT_GRADIENT_SPEC, a GR_GradientSpec too small to hold its fields. */
#include <graphrt/c_api.h>
#include <string.h>

static int32_t Nothing(GR_GradientContext* ctx, void* user_data) {
  (void)ctx;
  (void)user_data;
  return GR_OK;
}

GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  const char* in[] = {"x: float"};
  const char* out[] = {"y: float"};
  GR_OpSpec s;
  memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.name = "OpOfTheGradientConflict";
  s.inputs = in;
  s.num_inputs = 1;
  s.outputs = out;
  s.num_outputs = 1;
  int32_t rc = args->api->register_op(args->registrar, &s);
  if (rc) return rc;
  GR_GradientSpec g;
  memset(&g, 0, sizeof(g));
  g.struct_size = sizeof(g);
#ifdef SHORT_GRADIENT_SPEC
  g.struct_size = sizeof(size_t) + sizeof(const char*);
#endif
  g.op = "MatMul";
  g.fn = Nothing;
  return args->api->register_gradient(args->registrar, &g);
}
