/* graphrt plugin ABI: the only contract between libgraphrt_core and a plugin.
 *
 * Rules (see DESIGN.md; every minor bump is listed in plugin_api/CHANGELOG.md):
 *  - Plain C. Nothing here owns C++ objects; no exceptions cross.
 *  - Sizes. Every struct that crosses begins with `struct_size`. The writer
 *    sets it to sizeof() of the struct it was compiled with. A reader touches
 *    a field only when GR_SIZE_THROUGH(type, field) <= struct_size: the size a
 *    version knows is the end of the last field that version has. New fields
 *    are only ever appended.
 *  - Errors. A fallible call returns a GR_Code (GR_OK on success) and
 *    describes the failure on the handle it was given: the registrar, the
 *    kernel construction or context, the shape context, or a GR_StatusSink.
 *    Functions documented as returning 0/1 or a pointer report nothing.
 *  - A minor bump appends functions to GR_CoreApi or fields to structs. A
 *    major bump is anything else; the core refuses plugins of another major.
 *  - One exported symbol per plugin: GR_PLUGIN_ENTRY_SYMBOL.
 */
#ifndef GRAPHRT_C_API_H_
#define GRAPHRT_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GR_ABI_MAJOR 1
#define GR_ABI_MINOR 5

#define GR_PLUGIN_ENTRY_SYMBOL "graphrt_plugin_init"

/* The struct_size a reader needs before it touches `field` of `type`. */
#define GR_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

#if defined(_WIN32)
#define GR_EXPORT __declspec(dllexport)
#else
#define GR_EXPORT __attribute__((visibility("default")))
#endif

/* Canonical status codes (same numbers as TensorFlow / gRPC). */
typedef enum GR_Code {
  GR_OK = 0,
  GR_CANCELLED = 1,
  GR_UNKNOWN = 2,
  GR_INVALID_ARGUMENT = 3,
  GR_DEADLINE_EXCEEDED = 4,
  GR_NOT_FOUND = 5,
  GR_ALREADY_EXISTS = 6,
  GR_PERMISSION_DENIED = 7,
  GR_RESOURCE_EXHAUSTED = 8,
  GR_FAILED_PRECONDITION = 9,
  GR_ABORTED = 10,
  GR_OUT_OF_RANGE = 11,
  GR_UNIMPLEMENTED = 12,
  GR_INTERNAL = 13,
  GR_UNAVAILABLE = 14,
  GR_DATA_LOSS = 15,
  GR_UNAUTHENTICATED = 16
} GR_Code;

/* DataType values are TensorFlow's (types.proto). *_REF = base + 100. */
typedef enum GR_DataType {
  GR_INVALID = 0,
  GR_FLOAT = 1,
  GR_DOUBLE = 2,
  GR_INT32 = 3,
  GR_UINT8 = 4,
  GR_INT16 = 5,
  GR_INT8 = 6,
  GR_STRING = 7,
  GR_COMPLEX64 = 8,
  GR_INT64 = 9,
  GR_BOOL = 10,
  GR_QINT8 = 11,
  GR_QUINT8 = 12,
  GR_QINT32 = 13,
  GR_BFLOAT16 = 14,
  GR_QINT16 = 15,
  GR_QUINT16 = 16,
  GR_UINT16 = 17,
  GR_COMPLEX128 = 18,
  GR_HALF = 19,
  GR_RESOURCE = 20,
  GR_VARIANT = 21,
  GR_UINT32 = 22,
  GR_UINT64 = 23,
  /* Reference types (a ref-typed input or output, e.g. of Variable): listed
   * so that every value the runtime stores in a GR_DataType is one of its
   * enumerators (C++ gives an enum only the range its enumerators need). */
  GR_FLOAT_REF = 101,
  GR_DOUBLE_REF = 102,
  GR_INT32_REF = 103,
  GR_UINT8_REF = 104,
  GR_INT16_REF = 105,
  GR_INT8_REF = 106,
  GR_STRING_REF = 107,
  GR_COMPLEX64_REF = 108,
  GR_INT64_REF = 109,
  GR_BOOL_REF = 110,
  GR_QINT8_REF = 111,
  GR_QUINT8_REF = 112,
  GR_QINT32_REF = 113,
  GR_BFLOAT16_REF = 114,
  GR_QINT16_REF = 115,
  GR_QUINT16_REF = 116,
  GR_UINT16_REF = 117,
  GR_COMPLEX128_REF = 118,
  GR_HALF_REF = 119,
  GR_RESOURCE_REF = 120,
  GR_VARIANT_REF = 121,
  GR_UINT32_REF = 122,
  GR_UINT64_REF = 123
} GR_DataType;

/* One element of a GR_STRING tensor. Bytes are owned by the tensor; plugins
 * read them directly and write them only through GR_CoreApi.string_assign. */
typedef struct GR_StringElem {
  char* data;
  uint64_t size;
} GR_StringElem;

/* A plain-data view of a tensor, valid while the tensor is alive (for a
 * kernel's inputs and outputs: for the duration of the compute call). */
typedef struct GR_TensorView {
  size_t struct_size;
  int32_t dtype;          /* GR_DataType */
  int32_t rank;
  const int64_t* dims;    /* rank entries */
  void* data;             /* NULL for empty tensors */
  int64_t num_elements;
  uint64_t byte_size;
} GR_TensorView;

/* Opaque handles. All are owned by the core. */
typedef struct GR_Registrar GR_Registrar;             /* staging area of one plugin load */
typedef struct GR_Attrs GR_Attrs;                     /* attrs of one node */
typedef struct GR_KernelConstruction GR_KernelConstruction;
typedef struct GR_KernelContext GR_KernelContext;
typedef struct GR_ShapeContext GR_ShapeContext;
typedef struct GR_Tensor GR_Tensor;                   /* refcounted core tensor */
typedef struct GR_StatusSink GR_StatusSink;          /* where a callee reports an error */
typedef struct GR_Variable GR_Variable;               /* ABI 1.2: a variable (refcounted) */
typedef struct GR_Resource GR_Resource;               /* ABI 1.2: a plugin resource (refcounted) */

/* ABI 1.2. One element of a GR_RESOURCE tensor: names a resource in the
 * session's resource manager. The strings are interned by the core and stay
 * valid for the life of the process, so handles copy as plain data. */
typedef struct GR_ResourceHandle {
  const char* container;
  const char* name;
  const char* type_name; /* GR_VARIABLE_TYPE_NAME for variables */
} GR_ResourceHandle;

#define GR_VARIABLE_TYPE_NAME "Var"

/* ABI 1.2. Makes a plugin resource's object, or returns NULL after
 * describing the failure on `status`. */
typedef void* (*GR_ResourceCreateFn)(void* arg, GR_StatusSink* status);

/* ---------------------------------------------------------------- ops */

enum {
  GR_OP_STATEFUL = 1u << 0,
  GR_OP_COMMUTATIVE = 1u << 1,
  GR_OP_AGGREGATE = 1u << 2,
  GR_OP_ALLOWS_UNINITIALIZED_INPUT = 1u << 3
};

/* Returns GR_OK or an error code after calling GR_CoreApi.sc_set_error. */
typedef int32_t (*GR_ShapeFn)(GR_ShapeContext* ctx, void* user_data);

/* An op definition in TensorFlow's REGISTER_OP spec syntax:
 *   inputs/outputs: "x: T", "values: N * T", "out: list(type)", "r: Ref(float)"
 *   attrs: "T: {float, int32} = DT_FLOAT", "N: int >= 1", "transpose_a: bool = false" */
typedef struct GR_OpSpec {
  size_t struct_size;
  const char* name;
  const char* const* inputs;
  int32_t num_inputs;
  const char* const* outputs;
  int32_t num_outputs;
  const char* const* attrs;
  int32_t num_attrs;
  uint32_t flags; /* GR_OP_* */
  const char* summary;
  GR_ShapeFn shape_fn; /* may be NULL: outputs get unknown shapes */
  void* shape_fn_user_data;
} GR_OpSpec;

/* ------------------------------------------------------------ kernels */

typedef struct GR_TypeConstraint {
  size_t struct_size;
  const char* attr_name;
  const int32_t* allowed; /* GR_DataType values */
  int32_t num_allowed;
} GR_TypeConstraint;

enum {
  /* Cheap kernels run inline on the executor's thread, never dispatched. */
  GR_KERNEL_INEXPENSIVE = 1u << 0
};

typedef struct GR_KernelSpec {
  size_t struct_size;
  const char* op_name;
  const char* device_type; /* "CPU", "GPU", ... */
  const GR_TypeConstraint* constraints;
  int32_t num_constraints;
  const char* const* host_memory_args; /* input/output arg names kept in host memory */
  int32_t num_host_memory_args;
  const char* label;   /* matched against the node's "_kernel" attr; NULL = default */
  int32_t priority;    /* higher wins among matches */
  uint32_t flags;      /* GR_KERNEL_* */
  void* user_data;
  /* Returns the kernel instance, or NULL after reporting through
   * GR_CoreApi.kc_set_error. Called once per node per executor. */
  void* (*create)(GR_KernelConstruction* kc, void* user_data);
  /* Reports errors through GR_CoreApi.ctx_set_error. May run concurrently
   * on one instance from several steps. */
  void (*compute)(void* kernel, GR_KernelContext* ctx);
  void (*destroy)(void* kernel);
  /* ABI 1.3. An asynchronous kernel sets this and leaves `compute` NULL:
   * it starts the work and returns at once; the work ends with exactly one
   * GR_CoreApi.ctx_async_done(ctx) call, from any thread, possibly before
   * compute_async returns. Until then ctx, the inputs and the outputs stay
   * valid; after it the kernel must not touch ctx. For kernels that wait on
   * something other than the pool (a queue, a Recv, I/O, a device's host
   * callback) without holding a thread. Kernels that only enqueue work on
   * the stream the executor hands them are ordinary `compute` kernels. */
  void (*compute_async)(void* kernel, GR_KernelContext* ctx);
} GR_KernelSpec;

/* ------------------------------------------------------------ devices */

enum {
  /* Device memory is ordinary host memory (a CPU-like device). */
  GR_DEVICE_HOST_MEMORY = 1u << 0
};

typedef struct GR_DeviceMemoryInfo {
  size_t struct_size;
  int64_t total_bytes;
  int64_t free_bytes; /* -1 when unknown */
  /* ABI 1.3: what the backend's allocator has handed out now and at most
   * since the device was created, and the most it will hand out (its
   * memory limit). -1 when unknown. */
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  int64_t bytes_limit;
} GR_DeviceMemoryInfo;

/* ABI 1.3. Called by a backend once the work before it on a stream has
 * completed: `code` is GR_OK, or the stream's first error. Runs on a backend
 * thread; it must not block and must not enqueue on the same stream and
 * wait for it. */
typedef void (*GR_HostCallbackFn)(void* arg, int32_t code);

/* A device backend: every function receives the `device` pointer that
 * create_device returned. Functions returning int32_t return GR_Code and
 * describe failures through GR_CoreApi.status_set on `status`. Streams and
 * events are opaque to the core. Optional functions may be NULL on devices
 * with GR_DEVICE_HOST_MEMORY (copies then default to memcpy, streams to
 * synchronous execution). */
typedef struct GR_DeviceSpec {
  size_t struct_size;
  const char* device_type; /* "CPU", "GPU", ... */
  int32_t priority;        /* placement preference: higher first */
  uint32_t flags;          /* GR_DEVICE_* */
  void* backend_state;

  int32_t (*device_count)(void* backend_state);
  int32_t (*create_device)(void* backend_state, int32_t ordinal, void** device_out,
                           GR_StatusSink* status);
  void (*destroy_device)(void* device);
  /* Short human-readable description ("AVX-512 host, 2 cores"). */
  const char* (*describe)(void* device);

  void* (*allocate)(void* device, uint64_t bytes, uint64_t alignment);
  void (*deallocate)(void* device, void* ptr, uint64_t bytes);
  int32_t (*memory_info)(void* device, GR_DeviceMemoryInfo* info, GR_StatusSink* status);

  int32_t (*create_stream)(void* device, void** stream_out, GR_StatusSink* status);
  void (*destroy_stream)(void* device, void* stream);
  int32_t (*sync_stream)(void* device, void* stream, GR_StatusSink* status);

  int32_t (*copy_host_to_device)(void* device, void* stream, void* dst, const void* src,
                                 uint64_t bytes, GR_StatusSink* status);
  int32_t (*copy_device_to_host)(void* device, void* stream, void* dst, const void* src,
                                 uint64_t bytes, GR_StatusSink* status);
  int32_t (*copy_device_to_device)(void* device, void* stream, void* dst, const void* src,
                                   uint64_t bytes, GR_StatusSink* status);

  int32_t (*create_event)(void* device, void** event_out, GR_StatusSink* status);
  void (*destroy_event)(void* device, void* event);
  int32_t (*record_event)(void* device, void* stream, void* event, GR_StatusSink* status);
  int32_t (*stream_wait_event)(void* device, void* stream, void* event, GR_StatusSink* status);
  int32_t (*sync_event)(void* device, void* event, GR_StatusSink* status);

  /* ---- ABI 1.3: what an asynchronous executor needs (required, with the
   * 1.0 stream, event and copy functions, of devices without
   * GR_DEVICE_HOST_MEMORY). Every copy and kernel launch is ordered on the
   * stream it is given: it starts after the work enqueued there before it,
   * and the call returns without waiting for it. */
  /* GR_OK when all work recorded before `event` has completed;
   * GR_UNAVAILABLE (not recorded) while some is pending; the work's error
   * (recorded) when it failed. */
  int32_t (*query_event)(void* device, void* event, GR_StatusSink* status);
  /* Calls fn(arg, code) once everything enqueued on `stream` before this
   * call has completed (or failed). The executor wakes host-side readers
   * of device results this way rather than by blocking a thread. */
  int32_t (*host_callback)(void* device, void* stream, GR_HostCallbackFn fn, void* arg,
                           GR_StatusSink* status);
  /* GR_OK, or the first error of work on the stream (recorded). A stream
   * that failed stays failed. */
  int32_t (*stream_status)(void* device, void* stream, GR_StatusSink* status);
} GR_DeviceSpec;

/* ------------------------------------------------------- core services */

typedef void (*GR_ParallelForFn)(void* arg, int64_t begin, int64_t end);

enum { GR_LOG_DEBUG = 0, GR_LOG_INFO = 1, GR_LOG_WARNING = 2, GR_LOG_ERROR = 3 };

/* ABI 1.4. What a kernel asks of a file through ctx_check_file_access. */
enum {
  GR_FILE_READ = 1u << 0,
  GR_FILE_WRITE = 1u << 1,
  /* The path is a glob pattern (a V1 checkpoint's file_pattern): wildcards
   * only in its last component; each file it matches is checked. */
  GR_FILE_PATTERN = 1u << 2
};

/* ------------------------------------------- graph passes (ABI 1.3) */

/* One run of a plugin graph pass: what the core offers the pass while it
 * runs (GR_CoreApi.pass_*). Valid only during the pass's `run` call. */
typedef struct GR_GraphPassContext GR_GraphPassContext;

/* Which ConfigProto.graph_options switch turns a pass off (besides
 * OptimizerOptions.opt_level L0, which turns every plugin pass off).
 * A RewriterConfig toggle turns a pass off only when set to OFF. */
typedef enum GR_GraphPassToggle {
  GR_PASS_TOGGLE_NONE = 0,             /* only opt_level L0 */
  GR_PASS_TOGGLE_LAYOUT_OPTIMIZER = 1, /* RewriterConfig.layout_optimizer */
  GR_PASS_TOGGLE_REMAPPING = 2         /* RewriterConfig.remapping (fusions) */
} GR_GraphPassToggle;

/* A device graph pass (as TensorFlow's pluggable TP_Optimizer): a rewrite
 * that knows particular ops and what one device type prefers (its layouts,
 * its fused kernels). The core runs it on each pruned, placed client graph
 * once per executor build (never per Run), after its own generic passes and
 * before partitioning, and only when some node is assigned a device of
 * `device_type`. Passes run in ascending `order`, ties by name.
 *
 * The graph crosses as a serialized GraphDef (TensorFlow's wire format,
 * graph.proto): every NodeDef's `device` is the full name of the device the
 * node was assigned; the core's own nodes (_Arg, _Retval) are in it too.
 * A plugin parses it with protobuf classes of its own (a lite copy of the
 * messages under a C++ package of its own, hidden visibility: the core's
 * graphrt::proto classes must not be linked twice).
 *
 * `run` returns GR_OK after GR_CoreApi.pass_set_output (the rewritten
 * graph), or GR_OK without it (nothing to change), or an error code after
 * pass_set_error; the session then fails the Run with an error naming the
 * pass and its plugin, and the next Run tries again. The pass may change,
 * add and remove only nodes assigned to devices of `device_type` (new nodes
 * name such a device); it may rewire the inputs of other nodes. Nodes the
 * step runs as targets (pass_is_target) must stay. The core checks all of
 * this and validates the result as it validates a client's GraphDef.
 * `run` may be called from several threads at once (one session per
 * thread): it keeps no state across calls. */
typedef struct GR_GraphPassSpec {
  size_t struct_size;
  const char* name;        /* unique in the process ("nn.nhwc_layout") */
  const char* device_type; /* "CPU", "GPU", ... */
  int32_t toggle;          /* GR_GraphPassToggle */
  int32_t order;           /* lower runs first */
  void* user_data;
  int32_t (*run)(void* user_data, GR_GraphPassContext* ctx, const char* graph_def,
                 uint64_t size);
} GR_GraphPassSpec;

/* ---- gradients (ABI 1.5) ----
 *
 * The plugin that defines an op says how its inputs' gradients are computed
 * (TensorFlow's gradient functions): when the core differentiates a graph
 * (TF_AddGradients, graphrt.compat.v1's tf.gradients), it calls the op's
 * GR_GradientFn once per node on the path from the differentiated tensors
 * back to the variables. The function adds ordinary nodes to the graph that
 * read the node's inputs, outputs and the gradients arriving at its outputs
 * (grad_input, grad_output, grad_output_gradient), and names the tensor that
 * is each input's gradient (grad_set_input_gradient); inputs it gives none
 * (an integer axis, a shape) get no gradient. It runs while the graph is
 * built, never in a step; it must not keep the names it was given. A spec
 * with fn == NULL declares the op not differentiable (TensorFlow's
 * NotDifferentiable: no gradient flows through it, and it is no error).
 * A gradient is registered once per op in the process. */
typedef struct GR_GradientContext GR_GradientContext;

/* Returns GR_OK, or an error code after grad_set_error. */
typedef int32_t (*GR_GradientFn)(GR_GradientContext* ctx, void* user_data);

typedef struct GR_GradientSpec {
  size_t struct_size;
  const char* op;
  GR_GradientFn fn; /* NULL: not differentiable */
  void* user_data;
} GR_GradientSpec;

typedef struct GR_CoreApi {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;

  /* Registration (valid only during the plugin's init call). */
  int32_t (*register_op)(GR_Registrar* reg, const GR_OpSpec* spec);
  int32_t (*register_kernel)(GR_Registrar* reg, const GR_KernelSpec* spec);
  int32_t (*register_device)(GR_Registrar* reg, const GR_DeviceSpec* spec);
  void (*registrar_set_error)(GR_Registrar* reg, int32_t code, const char* msg);

  void (*status_set)(GR_StatusSink* status, int32_t code, const char* msg);
  void (*log)(int32_t level, const char* file, int32_t line, const char* msg);

  /* Attrs. Return GR_OK, GR_NOT_FOUND (no such attr) or GR_INVALID_ARGUMENT
   * (attr of another kind). Returned pointers stay valid as long as the
   * GR_Attrs handle does. */
  int32_t (*attr_int)(const GR_Attrs* a, const char* name, int64_t* out);
  int32_t (*attr_float)(const GR_Attrs* a, const char* name, float* out);
  int32_t (*attr_bool)(const GR_Attrs* a, const char* name, int32_t* out);
  int32_t (*attr_type)(const GR_Attrs* a, const char* name, int32_t* out);
  int32_t (*attr_string)(const GR_Attrs* a, const char* name, const char** data, uint64_t* size);
  /* rank -1 = unknown rank; dims of -1 = unknown. Writes at most `capacity` dims. */
  int32_t (*attr_shape)(const GR_Attrs* a, const char* name, int32_t* rank, int64_t* dims,
                        int32_t capacity);
  int32_t (*attr_int_list)(const GR_Attrs* a, const char* name, const int64_t** values,
                           int32_t* count);
  int32_t (*attr_float_list)(const GR_Attrs* a, const char* name, const float** values,
                             int32_t* count);
  int32_t (*attr_type_list)(const GR_Attrs* a, const char* name, const int32_t** values,
                            int32_t* count);
  int32_t (*attr_list_size)(const GR_Attrs* a, const char* name, int32_t* count);
  int32_t (*attr_string_list_item)(const GR_Attrs* a, const char* name, int32_t index,
                                   const char** data, uint64_t* size);
  /* A new reference the caller releases with tensor_release. Errors describe
   * a malformed TensorProto; `status` may be NULL. */
  int32_t (*attr_tensor)(const GR_Attrs* a, const char* name, GR_Tensor** out,
                         GR_StatusSink* status);

  /* Kernel construction. */
  const GR_Attrs* (*kc_attrs)(const GR_KernelConstruction* kc);
  const char* (*kc_node_name)(const GR_KernelConstruction* kc);
  const char* (*kc_op_name)(const GR_KernelConstruction* kc);
  int32_t (*kc_num_inputs)(const GR_KernelConstruction* kc);
  int32_t (*kc_num_outputs)(const GR_KernelConstruction* kc);
  int32_t (*kc_input_type)(const GR_KernelConstruction* kc, int32_t index);
  int32_t (*kc_output_type)(const GR_KernelConstruction* kc, int32_t index);
  void (*kc_set_error)(GR_KernelConstruction* kc, int32_t code, const char* msg);
  void* (*kc_device)(const GR_KernelConstruction* kc);

  /* Kernel execution. */
  int32_t (*ctx_num_inputs)(const GR_KernelContext* ctx);
  int32_t (*ctx_num_outputs)(const GR_KernelContext* ctx);
  /* Fills a view of input `index`. Returns GR_OK, or GR_OUT_OF_RANGE. */
  int32_t (*ctx_input)(const GR_KernelContext* ctx, int32_t index, GR_TensorView* view);
  /* Allocates output `index` with the node's output dtype and `dims`. */
  int32_t (*ctx_allocate_output)(GR_KernelContext* ctx, int32_t index, int32_t rank,
                                 const int64_t* dims, GR_TensorView* view);
  /* Reuses input `input_index`'s buffer in place when nobody else holds it
   * and its dtype and size match; otherwise allocates. *forwarded says which. */
  int32_t (*ctx_forward_input_or_allocate_output)(GR_KernelContext* ctx, int32_t input_index,
                                                  int32_t output_index, int32_t rank,
                                                  const int64_t* dims, GR_TensorView* view,
                                                  int32_t* forwarded);
  /* Output `output_index` shares input `input_index`'s buffer (zero copy), with
   * new dims when rank >= 0 (the element count must match). */
  int32_t (*ctx_set_output_from_input)(GR_KernelContext* ctx, int32_t output_index,
                                       int32_t input_index, int32_t rank,
                                       const int64_t* dims);
  /* Output `output_index` becomes a new reference to `tensor`. */
  int32_t (*ctx_set_output_tensor)(GR_KernelContext* ctx, int32_t output_index,
                                   GR_Tensor* tensor);
  void (*ctx_set_error)(GR_KernelContext* ctx, int32_t code, const char* msg);
  const char* (*ctx_node_name)(const GR_KernelContext* ctx);
  void* (*ctx_device)(const GR_KernelContext* ctx);
  void* (*ctx_stream)(const GR_KernelContext* ctx);
  int64_t (*ctx_step_id)(const GR_KernelContext* ctx);
  /* Splits [0, total) into chunks on the session's pool and waits.
   * cost_per_unit (rough ns per element) decides how finely to split. */
  void (*ctx_parallel_for)(GR_KernelContext* ctx, int64_t total, int64_t cost_per_unit,
                           GR_ParallelForFn fn, void* arg);
  int32_t (*ctx_num_threads)(const GR_KernelContext* ctx);

  /* Core tensors held by plugins (a Const's value, a temp buffer). */
  GR_Tensor* (*tensor_new)(int32_t dtype, int32_t rank, const int64_t* dims);
  void (*tensor_retain)(GR_Tensor* t);
  void (*tensor_release)(GR_Tensor* t);
  void (*tensor_view)(const GR_Tensor* t, GR_TensorView* view);
  /* Sets element `index` of a GR_STRING tensor view's buffer. */
  void (*string_assign)(GR_TensorView* view, int64_t index, const char* data, uint64_t size);

  /* Shape inference. Ranks: -1 unknown. Dims: -1 unknown. */
  const GR_Attrs* (*sc_attrs)(const GR_ShapeContext* sc);
  int32_t (*sc_num_inputs)(const GR_ShapeContext* sc);
  int32_t (*sc_num_outputs)(const GR_ShapeContext* sc);
  int32_t (*sc_input_rank)(const GR_ShapeContext* sc, int32_t index);
  /* Copies min(rank, capacity) dims of input `index`. */
  int32_t (*sc_input_dims)(const GR_ShapeContext* sc, int32_t index, int64_t* dims,
                           int32_t capacity);
  /* 1 and a view when the input's value is known (a constant), else 0. */
  int32_t (*sc_input_tensor)(const GR_ShapeContext* sc, int32_t index, GR_TensorView* view);
  void (*sc_set_output)(GR_ShapeContext* sc, int32_t index, int32_t rank, const int64_t* dims);
  void (*sc_set_error)(GR_ShapeContext* sc, int32_t code, const char* msg);
  const char* (*sc_node_name)(const GR_ShapeContext* sc);

  /* ---- ABI 1.1. A 1.0 core has none of these: check struct_size first. */

  /* Output `output_index` becomes the `dims`-shaped run of input
   * `input_index`'s elements that starts `offset` elements in, sharing the
   * input's buffer (zero copy: Split, Unpack, Slice of contiguous parts).
   * GR_OK when shared. GR_UNAVAILABLE, with nothing recorded and the output
   * untouched, when the run would not start 64-byte aligned (every buffer a
   * kernel sees is) or the input is a reference (a variable's storage, which
   * may change under the output): the kernel then copies. A run that is not
   * inside the input is an error (GR_OUT_OF_RANGE, recorded). */
  int32_t (*ctx_set_output_from_input_range)(GR_KernelContext* ctx, int32_t output_index,
                                             int32_t input_index, int64_t offset, int32_t rank,
                                             const int64_t* dims);
  /* As ctx_forward_input_or_allocate_output, but never allocates: 1 (and
   * *view) when output `output_index` took input `input_index`'s buffer, else
   * 0. A kernel tries several inputs this way before it allocates. */
  int32_t (*ctx_forward_input)(GR_KernelContext* ctx, int32_t input_index, int32_t output_index,
                               int32_t rank, const int64_t* dims, GR_TensorView* view);

  /* ---- ABI 1.2: state. A 1.1 core has none of these: check struct_size.
   *
   * Resources live in the session's resource manager, keyed by (container,
   * name); an empty container means the session's default ("localhost").
   * They survive across Runs and are destroyed by Session::Close, by
   * ctx_delete_resource, or, in the step's container (ctx_step_container),
   * when the step ends. Variables are the core's own resource type: ref
   * variables (VariableV2) and resource variables (VarHandleOp) alike.
   *
   * A variable's value is changed only under its exclusive lock; reading it
   * takes the shared lock. Writes never change a buffer that a tensor
   * outside the variable still shares (variable_prepare_update copies
   * first), so a value read earlier never changes under its reader. */

  /* Looks up the variable `container`/`name`; when it does not exist and
   * `create` is nonzero, creates it uninitialized with `dtype`. Returns a new
   * reference (variable_release). NOT_FOUND when absent and not created,
   * NOT recorded on ctx (the kernel words or ignores it); INVALID_ARGUMENT
   * (recorded) when it exists with another dtype or as another type of
   * resource. `dtype` may be GR_INVALID when not creating (no dtype check). */
  int32_t (*ctx_lookup_variable)(GR_KernelContext* ctx, const char* container, const char* name,
                                 int32_t dtype, int32_t create, GR_Variable** out);
  void (*variable_retain)(GR_Variable* v);
  void (*variable_release)(GR_Variable* v);
  /* The variable's readers-writer lock: exclusive != 0 to write. */
  void (*variable_lock)(GR_Variable* v, int32_t exclusive);
  void (*variable_unlock)(GR_Variable* v, int32_t exclusive);
  /* With the lock held: 1 and a view of the value when initialized, else 0. */
  int32_t (*variable_view)(GR_Variable* v, GR_TensorView* view);
  /* With the lock held: the value as a new tensor reference sharing its
   * buffer (a read), or NULL when uninitialized. */
  GR_Tensor* (*variable_value)(GR_Variable* v);
  const char* (*variable_name)(const GR_Variable* v);
  int32_t (*variable_dtype)(const GR_Variable* v);
  /* With the exclusive lock held: the value becomes `value` (shared, not
   * copied). `value` must have the variable's dtype. */
  int32_t (*ctx_variable_assign)(GR_KernelContext* ctx, GR_Variable* v, GR_Tensor* value);
  /* With the exclusive lock held: makes the value writable in place (copies
   * it first when another tensor shares its buffer) and fills *view.
   * FAILED_PRECONDITION when uninitialized. */
  int32_t (*ctx_variable_prepare_update)(GR_KernelContext* ctx, GR_Variable* v, GR_TensorView* view);
  /* With the exclusive lock held: the value becomes a new uninitialized
   * tensor of `dims` (from the session's memory budget); fills *view. */
  int32_t (*ctx_variable_allocate)(GR_KernelContext* ctx, GR_Variable* v, int32_t rank, const int64_t* dims,
                                   GR_TensorView* view);

  /* Ref inputs and outputs (ops declaring "Ref(T)" args). The variable
   * behind ref input `index` (borrowed for the call), or NULL (recorded) when
   * the input is not a ref. A kernel reads it with the lock held. */
  GR_Variable* (*ctx_input_ref)(GR_KernelContext* ctx, int32_t index);
  /* Ref output `index` refers to `v` (Variable, Assign, Identity on refs). */
  int32_t (*ctx_set_output_ref)(GR_KernelContext* ctx, int32_t index, GR_Variable* v);
  /* Input `index` (not a ref input) as a new tensor reference sharing its
   * buffer, for a kernel that keeps or assigns it; NULL when out of range. */
  GR_Tensor* (*ctx_input_tensor)(GR_KernelContext* ctx, int32_t index);

  /* Resource handles: output `index` (dtype resource) becomes a scalar handle
   * naming container/name/type_name. */
  int32_t (*ctx_set_output_resource_handle)(GR_KernelContext* ctx, int32_t index, const char* container,
                                            const char* name, const char* type_name);
  /* The container of this step's per-step resources (destroyed when the
   * step ends). Valid during the call. */
  const char* (*ctx_step_container)(const GR_KernelContext* ctx);

  /* Plugin resources: looks up container/name of `type_name`; when absent
   * and `create` is not NULL, makes it with create(arg) and owns it
   * (destroy(object) runs when the last reference goes). A new reference
   * (resource_release). NOT_FOUND (not recorded) when absent and create is
   * NULL; INVALID_ARGUMENT (recorded) when the name holds another type. */
  int32_t (*ctx_lookup_resource)(GR_KernelContext* ctx, const char* container, const char* name,
                                 const char* type_name, GR_ResourceCreateFn create, void* arg,
                                 void (*destroy)(void* object), GR_Resource** out);
  void* (*resource_object)(GR_Resource* r);
  void (*resource_release)(GR_Resource* r);
  /* Removes container/name of `type_name` (variables too) from the manager;
   * holders of references keep the object until they release it.
   * NOT_FOUND (not recorded) when absent. */
  int32_t (*ctx_delete_resource)(GR_KernelContext* ctx, const char* container, const char* name,
                                 const char* type_name);
  /* The GraphDef producer version of the graph being inferred (old graphs
   * meant other things by some attrs: a Placeholder's `shape {}` before 22
   * is "unknown"). */
  int32_t (*sc_graph_def_version)(const GR_ShapeContext* sc);
  /* Item `index` of a list(shape) attr, as attr_shape reads a shape attr
   * (attr_list_size counts the items). GR_OUT_OF_RANGE past the end. */
  int32_t (*attr_shape_list_item)(const GR_Attrs* a, const char* name, int32_t index, int32_t* rank,
                                  int64_t* dims, int32_t capacity);

  /* ---- ABI 1.3: asynchronous kernels and cancellation. A 1.2 core has
   * none of these: check struct_size. */

  /* Ends an asynchronous kernel's call (GR_KernelSpec.compute_async): its
   * outputs are set or its error recorded on ctx. Exactly once per call. */
  void (*ctx_async_done)(GR_KernelContext* ctx);
  /* 1 once the step is being cancelled (Session::Close, its deadline,
   * another node's error), else 0. A kernel that waits checks it. */
  int32_t (*ctx_cancelled)(const GR_KernelContext* ctx);
  /* Asks for fn(arg) when the step is cancelled, so that a kernel waiting
   * for something can stop waiting. GR_OK and a token; GR_CANCELLED (not
   * recorded, fn not kept) when the step is cancelled already. fn runs on
   * the cancelling thread, at most once, and must not block. */
  int32_t (*ctx_on_cancel)(GR_KernelContext* ctx, void (*fn)(void* arg), void* arg, int64_t* token);
  /* Drops a registration: 1 when fn had not run and never will, 0 when it
   * ran (if it is running on another thread, after it has returned). */
  int32_t (*ctx_remove_on_cancel)(GR_KernelContext* ctx, int64_t token);

  /* ---- ABI 1.3: plugin graph passes. A core without them has a smaller
   * struct_size: a plugin then registers no pass (its kernels still work).
   * GR_GraphPassSpec says when a pass runs and what it may change. */

  /* Registration (valid only during the plugin's init call). The spec's
   * strings are copied. */
  int32_t (*register_graph_pass)(GR_Registrar* reg, const GR_GraphPassSpec* spec);
  /* The pass's result: a serialized GraphDef (copied). A later call
   * replaces an earlier one. */
  int32_t (*pass_set_output)(GR_GraphPassContext* ctx, const char* graph_def, uint64_t size);
  void (*pass_set_error)(GR_GraphPassContext* ctx, int32_t code, const char* msg);
  /* The type ("CPU") of the device named `device` as a NodeDef.device of
   * the graph says it; NULL for a name the session does not have. Valid
   * during the pass call. */
  const char* (*pass_device_type)(GR_GraphPassContext* ctx, const char* device);
  /* 1 when device `device` has a kernel for the serialized NodeDef `node_def`
   * (its OpDef's attr defaults are filled in first; inputs are not looked
   * at), 0 when not or when the node is not valid for its op. A rewrite
   * that makes a node of another op asks this first. */
  int32_t (*pass_kernel_available)(GR_GraphPassContext* ctx, const char* node_def, uint64_t size,
                                   const char* device);
  /* The serialized OpDef (op_def.proto) of op `op`: GR_OK with *data and
   * *size valid during the pass call, or GR_NOT_FOUND (not recorded) for an
   * op no plugin defines (the core's _Arg, _Retval). */
  int32_t (*pass_op_def)(GR_GraphPassContext* ctx, const char* op, const char** data, uint64_t* size);
  /* 1 when the step runs node `node` as a target (nothing may read it, but
   * it must stay), else 0. */
  int32_t (*pass_is_target)(GR_GraphPassContext* ctx, const char* node);

  /* ---- ABI 1.4: the session's file-access policy. A 1.3 core has none
   * (and no policy): check struct_size. */

  /* GR_OK when the session lets this kernel touch `path` as `access` says
   * (GR_FILE_READ | GR_FILE_WRITE, maybe | GR_FILE_PATTERN). A session with
   * allowed directories (ConfigProto.graphrt_options.allowed_directories;
   * the model loaders set them) allows only paths inside them, compared
   * after resolving symlinks; a session without allows everything.
   * GR_PERMISSION_DENIED (recorded, naming the path and the allowed
   * directories) otherwise. Every kernel that opens, creates, renames or
   * deletes a file named by its inputs or attrs calls it for each such path
   * before touching it. */
  int32_t (*ctx_check_file_access)(GR_KernelContext* ctx, const char* path, uint32_t access);

  /* ---- ABI 1.5: gradients (see GR_GradientSpec). A 1.4 core has none:
   * check struct_size. */

  int32_t (*register_gradient)(GR_Registrar* reg, const GR_GradientSpec* spec);
  /* The attrs of the node being differentiated (its OpDef's defaults
   * filled in), for the attr_* functions. */
  const GR_Attrs* (*grad_attrs)(const GR_GradientContext* ctx);
  int32_t (*grad_num_inputs)(const GR_GradientContext* ctx);
  int32_t (*grad_num_outputs)(const GR_GradientContext* ctx);
  /* GR_DataType of input / output `index` (a ref input's base type). */
  int32_t (*grad_input_type)(const GR_GradientContext* ctx, int32_t index);
  int32_t (*grad_output_type)(const GR_GradientContext* ctx, int32_t index);
  /* Tensor names ("node:index") the added nodes may read: the node's input
   * `index`, its output `index`, and the gradient arriving at its output
   * `index` (a zeros_like of the output where none arrives). Valid during
   * the call; NULL for an index out of range. */
  const char* (*grad_input)(const GR_GradientContext* ctx, int32_t index);
  const char* (*grad_output)(const GR_GradientContext* ctx, int32_t index);
  const char* (*grad_output_gradient)(const GR_GradientContext* ctx, int32_t index);
  /* Adds a node: `node_def_text` is a NodeDef in protobuf text format
   * without a name (op, input: tensor names, device, attr { key value });
   * its attrs are checked against the op's OpDef (defaults added) and its
   * input types against its inputs. It is named `name` (a valid node name)
   * under the node's gradient scope ("gradients/MatMul_grad/MatMul_1"), made
   * unique; *out_name gets the final name, valid during the call. GR_OK, or
   * an error recorded on ctx naming the added node. */
  int32_t (*grad_add_node)(GR_GradientContext* ctx, const char* name, const char* node_def_text,
                           const char** out_name);
  /* The gradient of input `index` is tensor `tensor` ("node:index"), of the
   * input's type. GR_OK or an error recorded on ctx. */
  int32_t (*grad_set_input_gradient)(GR_GradientContext* ctx, int32_t index, const char* tensor);
  void (*grad_set_error)(GR_GradientContext* ctx, int32_t code, const char* msg);
} GR_CoreApi;

/* --------------------------------------------------------- entry point */

typedef struct GR_PluginInitArgs {
  size_t struct_size;
  /* In: what the core speaks. */
  uint32_t core_abi_major;
  uint32_t core_abi_minor;
  const GR_CoreApi* api;
  GR_Registrar* registrar;
  /* Out: what the plugin was built against, and who it is. The plugin must
   * set plugin_abi_* before anything else and, if the majors differ, return
   * GR_FAILED_PRECONDITION without touching `api`. */
  uint32_t plugin_abi_major;
  uint32_t plugin_abi_minor;
  const char* plugin_name;    /* static storage in the plugin */
  const char* plugin_version; /* static storage in the plugin */
} GR_PluginInitArgs;

/* The one exported symbol: returns GR_OK, or an error code after
 * registrar_set_error. Registrations are applied only if it returns GR_OK. */
typedef int32_t (*GR_PluginInitFn)(GR_PluginInitArgs* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAPHRT_C_API_H_ */
