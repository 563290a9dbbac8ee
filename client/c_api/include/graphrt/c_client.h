/* graphrt C client API: run TensorFlow 1.x graphs and SavedModels from C
 * (and from the languages that bind C: Go, Rust, C#, Java, ...).
 *
 * Library: libgraphrt_c.so, which exports exactly the functions declared
 * here and nothing of graphrt's C++ ABI. This header is plain C99 and
 * self-contained (no C++, no protobuf types); protocol buffers cross as
 * serialized bytes.
 *
 * VERSIONING. GRC_API_MAJOR/GRC_API_MINOR are the version this header
 * describes; GRC_Version() answers the library's. A minor bump only appends
 * functions, enum values and struct fields; anything else is a major bump.
 * Every struct the caller and library exchange begins with `struct_size`:
 * the caller sets it to sizeof() of the struct it was compiled with, and the
 * library writes only the fields that fit (GRC_SIZE_THROUGH(type, field) <=
 * struct_size), so an older caller keeps working with a newer library.
 *
 * ERRORS (one rule). Every function that can fail takes a `GRC_Status*` as
 * its last argument. On success it sets the status to GRC_OK; on failure it
 * sets a code (TensorFlow's canonical codes, below) and a message that names
 * the node, tensor, signature, file or argument involved, and it returns
 * NULL (functions returning a pointer) or 0 (functions returning int). The
 * status may be NULL when the caller does not want the details. No function
 * aborts or throws on bad input: a NULL object argument is GRC_INVALID_ARGUMENT
 * for the functions that take a status; GRC_Delete* ignore NULL, and the
 * accessors without a status answer 0, -1 or NULL for it.
 *
 * OWNERSHIP (one rule). What a function named GRC_New* or GRC_Load*
 * returns, and every tensor a run writes into the caller's `outputs` array,
 * belongs to the caller, who frees it with the matching GRC_Delete* (each
 * exactly once). Every other pointer the library returns (strings, data
 * pointers, signatures, the session of a SavedModel) is borrowed from the
 * object it came from and stays valid until that object is deleted. The
 * library never takes ownership of the caller's arguments; it copies what it
 * keeps. The one exception is the memory given to GRC_NewTensor, which the
 * tensor adopts and hands back through the caller's deallocator.
 *
 * THREADS. Different objects may be used from different threads freely. On
 * one GRC_Session, GRC_SessionRun may run from many threads at once, and
 * GRC_CloseSession may be called while runs are in progress (they end early
 * with GRC_CANCELLED; Close returns once they have). The same holds for
 * GRC_SavedModelRunSignature on one GRC_SavedModel. Tensors, graphs,
 * options and statuses are not locked: share one between threads only for
 * reading (a tensor may be fed to runs on several threads at once). Plugin
 * loading and device listing are thread-safe. GRC_Delete* must not race
 * with any other use of the same object.
 */
#ifndef GRAPHRT_C_CLIENT_H_
#define GRAPHRT_C_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRC_API_MAJOR 1
#define GRC_API_MINOR 1

/* The struct_size needed before `field` of `type` may be touched. */
#define GRC_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

/* The library's version (which may be newer than this header's). */
void GRC_Version(int* major, int* minor);

/* ---- Status ------------------------------------------------------------ */

/* TensorFlow's canonical error codes (error_codes.proto), same numbers. */
typedef enum GRC_Code {
  GRC_OK = 0,
  GRC_CANCELLED = 1,
  GRC_UNKNOWN = 2,
  GRC_INVALID_ARGUMENT = 3,
  GRC_DEADLINE_EXCEEDED = 4,
  GRC_NOT_FOUND = 5,
  GRC_ALREADY_EXISTS = 6,
  GRC_PERMISSION_DENIED = 7,
  GRC_RESOURCE_EXHAUSTED = 8,
  GRC_FAILED_PRECONDITION = 9,
  GRC_ABORTED = 10,
  GRC_OUT_OF_RANGE = 11,
  GRC_UNIMPLEMENTED = 12,
  GRC_INTERNAL = 13,
  GRC_UNAVAILABLE = 14,
  GRC_DATA_LOSS = 15,
  GRC_UNAUTHENTICATED = 16,
  /* Not a code: makes the enum int-sized and every int a value of it, so a
   * caller's out-of-range number is an unknown code, not undefined
   * behaviour in the library's C++. */
  GRC_CODE_INT_RANGE_ = 0x7fffffff
} GRC_Code;

typedef struct GRC_Status GRC_Status;

/* A new status, GRC_OK with an empty message. */
GRC_Status* GRC_NewStatus(void);
void GRC_DeleteStatus(GRC_Status* s);
/* GRC_OK for a NULL status. */
GRC_Code GRC_GetCode(const GRC_Status* s);
/* The message ("" when OK); borrowed until the status is set again. */
const char* GRC_Message(const GRC_Status* s);
/* For bindings that pass statuses around: sets code and message (copied). */
void GRC_SetStatus(GRC_Status* s, GRC_Code code, const char* message);
/* "INVALID_ARGUMENT", ...; "UNKNOWN_CODE" for other values. Static string. */
const char* GRC_CodeName(GRC_Code code);

/* ---- Tensors ----------------------------------------------------------- */

/* TensorFlow's DataType numbers (types.proto). */
typedef enum GRC_DataType {
  GRC_FLOAT = 1,
  GRC_DOUBLE = 2,
  GRC_INT32 = 3,
  GRC_UINT8 = 4,
  GRC_INT16 = 5,
  GRC_INT8 = 6,
  GRC_STRING = 7,
  GRC_COMPLEX64 = 8,
  GRC_INT64 = 9,
  GRC_BOOL = 10,
  GRC_QINT8 = 11,
  GRC_QUINT8 = 12,
  GRC_QINT32 = 13,
  GRC_BFLOAT16 = 14,
  GRC_QINT16 = 15,
  GRC_QUINT16 = 16,
  GRC_UINT16 = 17,
  GRC_COMPLEX128 = 18,
  GRC_HALF = 19,
  GRC_RESOURCE = 20,
  GRC_VARIANT = 21,
  GRC_UINT32 = 22,
  GRC_UINT64 = 23,
  /* Reference types (signature inputs/outputs of ref variables) are the
   * base type + 100, e.g. 101 = float_ref; tensors never have one. */
  GRC_FLOAT_REF = 101,
  /* Not a type: as GRC_CODE_INT_RANGE_, for out-of-range numbers. */
  GRC_DATATYPE_INT_RANGE_ = 0x7fffffff
} GRC_DataType;

/* Bytes per element of a fixed-size dtype; 0 for string, resource, variant
 * and values that are not a DataType. */
size_t GRC_DataTypeSize(GRC_DataType dtype);

typedef struct GRC_Tensor GRC_Tensor;

typedef void (*GRC_Deallocator)(void* data, size_t len, void* arg);

/* A tensor over the caller's memory `data` of `len` bytes, without a copy:
 * `len` must be exactly the byte size of dtype and dims (dims: num_dims
 * entries >= 0). The tensor adopts the memory; `deallocator(data, len, arg)`
 * (may be NULL) runs exactly once, when the last user lets go of it: the
 * tensor was deleted and no session, output tensor or variable still uses
 * the buffer. The caller must not write to the memory until then.
 * Kernels expect 64-byte aligned data: memory that is not 64-byte aligned,
 * or of zero bytes, is copied and the deallocator runs before this returns.
 * On failure (bad dtype or dims, len mismatch) the deallocator is not
 * called and the memory stays the caller's. Not for GRC_STRING (see
 * GRC_NewStringTensor). */
GRC_Tensor* GRC_NewTensor(GRC_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
                          GRC_Deallocator deallocator, void* deallocator_arg, GRC_Status* status);

/* A new tensor with memory from the library, zero-filled (strings empty). */
GRC_Tensor* GRC_NewAllocatedTensor(GRC_DataType dtype, const int64_t* dims, int num_dims, GRC_Status* status);

/* A GRC_STRING tensor holding copies of `strings[i]` (`lengths[i]` bytes,
 * any bytes), as many as dims' element count. */
GRC_Tensor* GRC_NewStringTensor(const int64_t* dims, int num_dims, const char* const* strings,
                                const size_t* lengths, GRC_Status* status);

void GRC_DeleteTensor(GRC_Tensor* t);

GRC_DataType GRC_TensorType(const GRC_Tensor* t);
int GRC_TensorNumDims(const GRC_Tensor* t);
/* Size of dimension `i`; -1 when i is out of range. */
int64_t GRC_TensorDim(const GRC_Tensor* t, int i);
int64_t GRC_TensorElementCount(const GRC_Tensor* t);
/* Bytes of the data: element count * GRC_DataTypeSize (0 for strings). */
size_t GRC_TensorByteSize(const GRC_Tensor* t);
/* The elements, row-major; NULL for GRC_STRING tensors and empty tensors.
 * Writable: a tensor the caller owns may be filled before it is fed (do not
 * write to a tensor while a run that was fed it is in progress). */
void* GRC_TensorData(const GRC_Tensor* t);
/* Element `index` of a GRC_STRING tensor: *data (borrowed, not
 * NUL-terminated) and *length. */
int GRC_TensorStringAt(const GRC_Tensor* t, int64_t index, const char** data, size_t* length, GRC_Status* status);
/* Sets element `index` of a GRC_STRING tensor to a copy of the bytes. */
int GRC_TensorSetString(GRC_Tensor* t, int64_t index, const char* data, size_t length, GRC_Status* status);

/* ---- Byte buffers (serialized protos going out) ------------------------ */

typedef struct GRC_Buffer GRC_Buffer;
GRC_Buffer* GRC_NewBuffer(void);
void GRC_DeleteBuffer(GRC_Buffer* b);
/* Borrowed; valid until the buffer is written again or deleted. */
const void* GRC_BufferData(const GRC_Buffer* b);
size_t GRC_BufferLength(const GRC_Buffer* b);

/* ---- Graphs ------------------------------------------------------------ */

typedef struct GRC_Graph GRC_Graph;

/* A GraphDef from its binary serialization. */
GRC_Graph* GRC_NewGraphFromBinary(const void* data, size_t len, GRC_Status* status);
/* A GraphDef from protobuf text format (`len` bytes, no NUL needed). */
GRC_Graph* GRC_NewGraphFromText(const char* text, size_t len, GRC_Status* status);
/* A GraphDef file: binary, or text for names ending in .pbtxt/.txt (each
 * falls back to the other format). */
GRC_Graph* GRC_NewGraphFromFile(const char* path, GRC_Status* status);
void GRC_DeleteGraph(GRC_Graph* g);
int GRC_GraphNumNodes(const GRC_Graph* g);
/* Node `i`'s name and op type (borrowed); NULL when i is out of range. */
const char* GRC_GraphNodeName(const GRC_Graph* g, int i);
const char* GRC_GraphNodeOp(const GRC_Graph* g, int i);

/* ---- Sessions ---------------------------------------------------------- */

typedef struct GRC_SessionOptions GRC_SessionOptions;

GRC_SessionOptions* GRC_NewSessionOptions(void);
void GRC_DeleteSessionOptions(GRC_SessionOptions* o);
/* Replaces the whole configuration with a serialized ConfigProto. */
int GRC_SetConfig(GRC_SessionOptions* o, const void* config_proto, size_t len, GRC_Status* status);
/* ConfigProto's intra_op / inter_op_parallelism_threads (0: the default). */
int GRC_SetThreads(GRC_SessionOptions* o, int intra_op_threads, int inter_op_threads, GRC_Status* status);
/* 1.1. Lets the session's file ops (SaveV2, RestoreV2, ...) touch files in
 * `dir` and below (appends to ConfigProto.graphrt_options.allowed_directories;
 * call it again for more; a later GRC_SetConfig replaces the list). A
 * session with none may touch any file; a SavedModel loaded with
 * GRC_LoadSavedModel only its own folder and these (a model's graph is a
 * program: README, "Trust model"). */
int GRC_AllowDirectory(GRC_SessionOptions* o, const char* dir, GRC_Status* status);

typedef struct GRC_Session GRC_Session;

/* A session running `graph` (copied; the graph may be deleted after).
 * options may be NULL (defaults). Loads the standard plugins first (see
 * GRC_LoadDefaultPlugins) and checks every node against the loaded ops. */
GRC_Session* GRC_NewSession(const GRC_Graph* graph, const GRC_SessionOptions* options, GRC_Status* status);

/* One step. Feeds: `num_inputs` pairs of a tensor name ("x" or "x:0") and
 * a tensor. Fetches: `num_outputs` tensor names; on success outputs[i] is a
 * new tensor the caller owns (on failure every outputs[i] is NULL).
 * Targets: `num_targets` node names run for their effects.
 * run_options (may be NULL) is a serialized RunOptions; when run_metadata
 * is not NULL it receives a serialized RunMetadata. */
int GRC_SessionRun(GRC_Session* session, const void* run_options, size_t run_options_len,
                   const char* const* input_names, GRC_Tensor* const* inputs, int num_inputs,
                   const char* const* output_names, GRC_Tensor** outputs, int num_outputs,
                   const char* const* target_names, int num_targets, GRC_Buffer* run_metadata,
                   GRC_Status* status);

/* Stops the session: later runs fail with GRC_CANCELLED, runs in progress
 * are cancelled and waited for. Closing twice is fine. */
int GRC_CloseSession(GRC_Session* session, GRC_Status* status);
/* Closes (if needed) and frees. Not for the session of a GRC_SavedModel,
 * which its model owns (deleting it does nothing). */
void GRC_DeleteSession(GRC_Session* session);

/* ---- SavedModels ------------------------------------------------------- */

typedef struct GRC_SavedModel GRC_SavedModel;
typedef struct GRC_Signature GRC_Signature;

/* Loads the MetaGraphDef of `export_dir` tagged exactly `tags` (NULL/0:
 * {"serve"}) into a new session, restores its variables and runs its init
 * op. Loads the standard plugins first. The model's ops may touch files only
 * in `export_dir` and the directories `options` allows (GRC_AllowDirectory):
 * others fail with GRC_PERMISSION_DENIED naming the node, op and path. */
GRC_SavedModel* GRC_LoadSavedModel(const char* export_dir, const char* const* tags, int num_tags,
                                   const GRC_SessionOptions* options, GRC_Status* status);
void GRC_DeleteSavedModel(GRC_SavedModel* model);
/* The model's session (borrowed), for runs by tensor name. */
GRC_Session* GRC_SavedModelSession(GRC_SavedModel* model);

/* Signature keys, sorted. */
int GRC_SavedModelNumSignatures(const GRC_SavedModel* model);
const char* GRC_SavedModelSignatureKey(const GRC_SavedModel* model, int i);
/* The signature named `key` (borrowed from the model); GRC_NOT_FOUND
 * listing the available keys otherwise. */
const GRC_Signature* GRC_SavedModelSignature(const GRC_SavedModel* model, const char* key, GRC_Status* status);

/* One input or output of a signature. Strings and dims are borrowed from
 * the signature. */
typedef struct GRC_TensorSpec {
  size_t struct_size;   /* set by the caller: sizeof(GRC_TensorSpec) */
  const char* key;      /* the signature's key for it, e.g. "x" */
  const char* name;     /* the graph tensor, e.g. "x:0" */
  GRC_DataType dtype;   /* may be a reference type (base + 100) */
  int num_dims;         /* -1: unknown rank */
  const int64_t* dims;  /* num_dims entries; -1: unknown size */
} GRC_TensorSpec;

const char* GRC_SignatureMethodName(const GRC_Signature* sig);
int GRC_SignatureNumInputs(const GRC_Signature* sig);
int GRC_SignatureNumOutputs(const GRC_Signature* sig);
/* Fills *spec with input (output) `i`, in key order; 0 with
 * GRC_OUT_OF_RANGE for a bad index. */
int GRC_SignatureInput(const GRC_Signature* sig, int i, GRC_TensorSpec* spec, GRC_Status* status);
int GRC_SignatureOutput(const GRC_Signature* sig, int i, GRC_TensorSpec* spec, GRC_Status* status);

/* Runs signature `key`: inputs by input key (an input not given takes its
 * default when the graph has one), outputs by output key (at least one);
 * outputs[i] as for GRC_SessionRun. */
int GRC_SavedModelRunSignature(GRC_SavedModel* model, const char* key, const char* const* input_keys,
                               GRC_Tensor* const* inputs, int num_inputs, const char* const* output_keys,
                               GRC_Tensor** outputs, int num_outputs, GRC_Status* status);

/* ---- Plugins and devices ----------------------------------------------- */

/* Loads, once per process, the standard plugins (<libdir>/graphrt/plugins
 * beside the library) and the directories of GRAPHRT_PLUGIN_PATH. Later
 * calls return the first result. */
int GRC_LoadDefaultPlugins(GRC_Status* status);
/* Loads one plugin file (ops, kernels, devices); a failed load changes
 * nothing. */
int GRC_LoadPlugin(const char* path, GRC_Status* status);

typedef struct GRC_DeviceList GRC_DeviceList;

typedef struct GRC_DeviceInfo {
  size_t struct_size;       /* set by the caller: sizeof(GRC_DeviceInfo) */
  const char* name;         /* "/job:localhost/replica:0/task:0/device:CPU:0" */
  const char* type;         /* "CPU" */
  const char* plugin;       /* the plugin that provides it */
  const char* description;
  int64_t memory_bytes;     /* total memory; -1 when unknown */
} GRC_DeviceInfo;

/* The devices of the loaded device plugins (loads the standard plugins
 * first). */
GRC_DeviceList* GRC_NewDeviceList(GRC_Status* status);
void GRC_DeleteDeviceList(GRC_DeviceList* list);
int GRC_DeviceListCount(const GRC_DeviceList* list);
/* Fills *info (strings borrowed from the list); 0 with GRC_OUT_OF_RANGE for
 * a bad index. */
int GRC_DeviceListGet(const GRC_DeviceList* list, int i, GRC_DeviceInfo* info, GRC_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAPHRT_C_CLIENT_H_ */
