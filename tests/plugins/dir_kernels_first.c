/* A kernel-only plugin whose init starts a thread that runs this library's
 * code (as a device or I/O plugin would), for op OP_NAME, which another
 * plugin defines. Built as liba_kernels_first.so into a directory beside
 * libz_op_last.so (dir_op_last.c), which sorts after it; and alone, for an
 * op nobody defines. The kernel outputs how often init ran. If the library
 * is ever unloaded, its destructor creates the file named by
 * GRAPHRT_TEST_UNLOAD_MARKER (the loader must never unload a library whose
 * init ran: the thread would jump into unmapped code). */
#define _DEFAULT_SOURCE /* usleep */
#include <graphrt/c_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OP_NAME
#define OP_NAME "TestDirOp"
#endif

static const GR_CoreApi* api;
static int init_calls;
static volatile long ticks;

static void* Worker(void* arg) {
  (void)arg;
  for (;;) {
    ++ticks;
    usleep(1000);
  }
  return NULL;
}

__attribute__((destructor)) static void Unloaded(void) {
  const char* marker = getenv("GRAPHRT_TEST_UNLOAD_MARKER");
  if (marker != NULL) {
    FILE* f = fopen(marker, "w");
    if (f != NULL) fclose(f);
  }
}

static void* Create(GR_KernelConstruction* kc, void* u) { (void)kc; (void)u; return (void*)1; }
static void Compute(void* k, GR_KernelContext* ctx) {
  (void)k;
  GR_TensorView v;
  memset(&v, 0, sizeof(v));
  v.struct_size = sizeof(v);
  if (api->ctx_allocate_output(ctx, 0, 0, NULL, &v) != GR_OK) return;
  *(int32_t*)v.data = init_calls;
}
static void Destroy(void* k) { (void)k; }

GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  args->plugin_name = "test_" OP_NAME "_kernels";
  api = args->api;
  if (init_calls++ == 0) {
    pthread_t t;
    pthread_create(&t, NULL, Worker, NULL);
    pthread_detach(t);
  }
  GR_KernelSpec k;
  memset(&k, 0, sizeof(k));
  k.struct_size = sizeof(k);
  k.op_name = OP_NAME;
  k.device_type = "CPU";
  k.create = Create;
  k.compute = Compute;
  k.destroy = Destroy;
  return args->api->register_kernel(args->registrar, &k);
}
