/* A device with its own memory (no GR_DEVICE_HOST_MEMORY) that has only the
 * ABI 1.0 functions: streams, copies and events but no query_event,
 * host_callback or stream_status. The core must refuse it. */
#include <graphrt/c_api.h>
#include <string.h>
static int32_t Create(void* s, int32_t o, void** d, GR_StatusSink* st) { (void)s; (void)o; (void)st; *d = (void*)1; return GR_OK; }
static void* Alloc(void* d, uint64_t b, uint64_t a) { (void)d; (void)b; (void)a; return NULL; }
static void Dealloc(void* d, void* p, uint64_t b) { (void)d; (void)p; (void)b; }
static int32_t MakeHandle(void* d, void** out, GR_StatusSink* st) { (void)d; (void)st; *out = NULL; return GR_OK; }
static void DropHandle(void* d, void* h) { (void)d; (void)h; }
static int32_t OnStream(void* d, void* s, GR_StatusSink* st) { (void)d; (void)s; (void)st; return GR_OK; }
static int32_t Copy(void* d, void* s, void* dst, const void* src, uint64_t n, GR_StatusSink* st) {
  (void)d; (void)s; (void)dst; (void)src; (void)n; (void)st;
  return GR_OK;
}
static int32_t OnEvent(void* d, void* s, void* e, GR_StatusSink* st) { (void)d; (void)s; (void)e; (void)st; return GR_OK; }
GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  GR_DeviceSpec s;
  memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  s.device_type = "HALFDONE";
  s.create_device = Create;
  s.allocate = Alloc;
  s.deallocate = Dealloc;
  s.create_stream = MakeHandle;
  s.destroy_stream = DropHandle;
  s.sync_stream = OnStream;
  s.copy_host_to_device = Copy;
  s.copy_device_to_host = Copy;
  s.copy_device_to_device = Copy;
  s.create_event = MakeHandle;
  s.destroy_event = DropHandle;
  s.record_event = OnEvent;
  s.stream_wait_event = OnEvent;
  s.sync_event = OnStream;
  return args->api->register_device(args->registrar, &s);
}
