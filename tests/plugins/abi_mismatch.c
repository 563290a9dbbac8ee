/* Claims a future ABI major: the core must refuse it and name both versions. */
#include <graphrt/c_api.h>
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR + 1;
  args->plugin_abi_minor = 7;
  return GR_FAILED_PRECONDITION;
}
