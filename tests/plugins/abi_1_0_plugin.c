/* A plugin compiled against the frozen ABI 1.0 header (abi_1_0/graphrt/c_api.h),
 * in plain C: op Abi10AddOne (y = x + 1, float) with a shape function and a
 * kernel that uses only 1.0 services. The current core must load and run it. */
#include <graphrt/c_api.h>
#include <string.h>

static const GR_CoreApi* g_api;

static int32_t Shape(GR_ShapeContext* sc, void* user) {
  int64_t dims[8];
  int32_t rank = g_api->sc_input_rank(sc, 0);
  (void)user;
  if (rank > 8) rank = -1;
  if (rank > 0) g_api->sc_input_dims(sc, 0, dims, rank);
  g_api->sc_set_output(sc, 0, rank, dims);
  return GR_OK;
}

static void* Create(GR_KernelConstruction* kc, void* user) {
  (void)kc;
  (void)user;
  return (void*)&g_api;
}

static void Compute(void* kernel, GR_KernelContext* ctx) {
  GR_TensorView in, out;
  int64_t i;
  (void)kernel;
  memset(&in, 0, sizeof(in));
  in.struct_size = sizeof(in);
  memset(&out, 0, sizeof(out));
  out.struct_size = sizeof(out);
  if (g_api->ctx_input(ctx, 0, &in) != GR_OK) {
    g_api->ctx_set_error(ctx, GR_INTERNAL, "no input");
    return;
  }
  if (g_api->ctx_allocate_output(ctx, 0, in.rank, in.dims, &out) != GR_OK) return;
  for (i = 0; i < in.num_elements; ++i) ((float*)out.data)[i] = ((const float*)in.data)[i] + 1.0f;
}

static void Destroy(void* kernel) { (void)kernel; }

GR_EXPORT int32_t graphrt_plugin_init(GR_PluginInitArgs* args) {
  static const char* inputs[] = {"x: float"};
  static const char* outputs[] = {"y: float"};
  static const int32_t allowed[] = {GR_FLOAT};
  GR_OpSpec op;
  GR_KernelSpec k;
  int32_t rc;
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  args->plugin_name = "test_abi_1_0";
  args->plugin_version = "1.0";
  if (args->core_abi_major != GR_ABI_MAJOR) return GR_FAILED_PRECONDITION;
  g_api = args->api;
  memset(&op, 0, sizeof(op));
  op.struct_size = sizeof(op);
  op.name = "Abi10AddOne";
  op.inputs = inputs;
  op.num_inputs = 1;
  op.outputs = outputs;
  op.num_outputs = 1;
  op.shape_fn = Shape;
  rc = g_api->register_op(args->registrar, &op);
  if (rc != GR_OK) return rc;
  memset(&k, 0, sizeof(k));
  k.struct_size = sizeof(k);
  k.op_name = "Abi10AddOne";
  k.device_type = "CPU";
  k.create = Create;
  k.compute = Compute;
  k.destroy = Destroy;
  (void)allowed;
  return g_api->register_kernel(args->registrar, &k);
}
