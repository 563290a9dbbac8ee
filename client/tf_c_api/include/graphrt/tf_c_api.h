/* TensorFlow's C API names over graphrt: the session-side subset of
 * TensorFlow 1.x's C API (tensorflow/c/c_api.h, tf_tensor.h, tf_status.h),
 * so that programs and language bindings written against it can load a
 * GraphDef or SavedModel and run it on graphrt.
 *
 * Library: libgraphrt_tf_c.so. It exports exactly the TF_* functions
 * declared here and nothing of graphrt's C++ ABI. This header is graphrt's
 * own (plain C99); the names, signatures, struct layouts (TF_Output,
 * TF_Input, TF_Buffer) and enum values (TF_DataType, TF_Code) are
 * TensorFlow's, so code compiled against TensorFlow's headers links
 * against this library unchanged for the functions below.
 *
 * WHAT IS HERE. Status, buffers, tensors of fixed-size element types,
 * graphs filled by TF_GraphImportGraphDef (optionally under a prefix),
 * operation lookup and inspection, TF_GraphToGraphDef, session options,
 * sessions (new, run, close, delete), TF_LoadSessionFromSavedModel, and
 * TF_LoadLibrary / TF_GetOpList mapped onto graphrt's op plugins.
 *
 * WHAT IS NOT. Building graphs operation by operation (TF_NewOperation,
 * TF_SetAttr*, TF_FinishOperation, ...), gradients, functions, while
 * loops, partial runs (TF_SessionPRun*), device lists, the eager API, and
 * TF_STRING tensors (TensorFlow 2's TF_TString element layout is not
 * implemented: TF_NewTensor/TF_AllocateTensor refuse TF_STRING, and a
 * string tensor a run returns has TF_TensorData() == NULL and
 * TF_TensorByteSize() == 0; graphrt's own graphrt/c_client.h handles
 * strings). A graph only grows by import, so the same graph can be
 * imported into several times and sessions see the added operations.
 *
 * SEMANTICS (as TensorFlow's C API):
 * - Every function with a TF_Status* sets it: TF_OK on success, otherwise
 *   a TF_Code and a message naming the operation, tensor, file or argument.
 *   Functions returning a pointer return NULL on failure.
 * - TF_NewTensor adopts the caller's memory without copying when it is
 *   64-byte aligned; the deallocator runs exactly once, when the last
 *   reference dies (which may be after TF_DeleteTensor, when a run still
 *   holds the tensor or returned a tensor sharing it). Unaligned memory is
 *   copied and the deallocator runs before TF_NewTensor returns.
 * - The tensors TF_SessionRun writes to output_values belong to the
 *   caller (TF_DeleteTensor each); on failure every slot is NULL.
 * - A session extends itself with operations imported into its graph after
 *   it was created, on its next run.
 * - TF_DeleteGraph may be called while sessions on the graph live; the
 *   graph is freed with the last of them.
 * - TF_CloseSession ends the session: later runs fail (TF_CANCELLED). It
 *   may be called while runs are in progress; they end early. TF_DeleteSession
 *   closes the session first if needed.
 * - TF_SessionRun may be called from many threads on one session at once.
 *   Importing into a graph while runs on its sessions go on is allowed
 *   (a run sees the graph before or after the import).
 * - Buffers the library fills (TF_GraphToGraphDef, run_metadata,
 *   meta_graph_def) must be empty (data == NULL) and get memory the buffer's
 *   data_deallocator frees.
 */
#ifndef GRAPHRT_TF_C_API_H_
#define GRAPHRT_TF_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ---- */

/* The TensorFlow version whose C API this library follows, with graphrt's
 * own version as a suffix: "1.15.0-graphrt.<major>.<minor>.<patch>". */
const char* TF_Version(void);

/* ---- Status (tf_status.h) ---- */

typedef enum TF_Code {
  TF_OK = 0,
  TF_CANCELLED = 1,
  TF_UNKNOWN = 2,
  TF_INVALID_ARGUMENT = 3,
  TF_DEADLINE_EXCEEDED = 4,
  TF_NOT_FOUND = 5,
  TF_ALREADY_EXISTS = 6,
  TF_PERMISSION_DENIED = 7,
  TF_UNAUTHENTICATED = 16,
  TF_RESOURCE_EXHAUSTED = 8,
  TF_FAILED_PRECONDITION = 9,
  TF_ABORTED = 10,
  TF_OUT_OF_RANGE = 11,
  TF_UNIMPLEMENTED = 12,
  TF_INTERNAL = 13,
  TF_UNAVAILABLE = 14,
  TF_DATA_LOSS = 15,
  /* graphrt's, not TensorFlow's: every int is a value of the enum, so an
   * out-of-range value from a caller is defined (and refused); the enum is
   * int-sized either way. */
  TF_CODE_INT_RANGE_ = 0x7fffffff
} TF_Code;

typedef struct TF_Status TF_Status;

/* A new status, TF_OK. */
TF_Status* TF_NewStatus(void);
void TF_DeleteStatus(TF_Status* s);
/* Sets code and message (copied); TF_OK clears the message. */
void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg);
TF_Code TF_GetCode(const TF_Status* s);
/* "" for TF_OK; valid until the status is next changed or deleted. */
const char* TF_Message(const TF_Status* s);

/* ---- Buffers ---- */

/* Bytes, usually a serialized protocol buffer. data_deallocator, when not
 * NULL, frees data when the buffer is deleted. */
typedef struct TF_Buffer {
  const void* data;
  size_t length;
  void (*data_deallocator)(void* data, size_t length);
} TF_Buffer;

/* An empty buffer (all fields zero). */
TF_Buffer* TF_NewBuffer(void);
/* A buffer holding a copy of proto[0, proto_len). */
TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len);
/* Runs data_deallocator (if any), then frees the buffer. */
void TF_DeleteBuffer(TF_Buffer* buffer);
TF_Buffer TF_GetBuffer(TF_Buffer* buffer);

/* ---- Tensors (tf_datatype.h, tf_tensor.h) ---- */

typedef enum TF_DataType {
  TF_FLOAT = 1,
  TF_DOUBLE = 2,
  TF_INT32 = 3,
  TF_UINT8 = 4,
  TF_INT16 = 5,
  TF_INT8 = 6,
  TF_STRING = 7,
  TF_COMPLEX64 = 8,
  TF_COMPLEX = 8,
  TF_INT64 = 9,
  TF_BOOL = 10,
  TF_QINT8 = 11,
  TF_QUINT8 = 12,
  TF_QINT32 = 13,
  TF_BFLOAT16 = 14,
  TF_QINT16 = 15,
  TF_QUINT16 = 16,
  TF_UINT16 = 17,
  TF_COMPLEX128 = 18,
  TF_HALF = 19,
  TF_RESOURCE = 20,
  TF_VARIANT = 21,
  TF_UINT32 = 22,
  TF_UINT64 = 23,
  TF_DATATYPE_INT_RANGE_ = 0x7fffffff /* graphrt's: as TF_CODE_INT_RANGE_ */
} TF_DataType;

/* Bytes per element; 0 for types without a fixed size (TF_STRING,
 * TF_RESOURCE, TF_VARIANT) and unknown values. */
size_t TF_DataTypeSize(TF_DataType dt);

typedef struct TF_Tensor TF_Tensor;

/* A tensor over data[0, len) (see SEMANTICS for copying and the
 * deallocator). len must equal TF_DataTypeSize(dtype) times the number of
 * elements. Returns NULL on bad arguments (unknown or variable-size dtype,
 * negative dims, a wrong len), without calling the deallocator: the caller
 * keeps the memory then. */
TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
                        void (*deallocator)(void* data, size_t len, void* arg), void* deallocator_arg);
/* A tensor with uninitialized (library-owned, 64-byte aligned) memory;
 * len must be the shape's byte size. NULL on bad arguments. */
TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len);
void TF_DeleteTensor(TF_Tensor* t);
TF_DataType TF_TensorType(const TF_Tensor* t);
int TF_NumDims(const TF_Tensor* t);
/* The size of dimension dim_index; -1 when out of range. */
int64_t TF_Dim(const TF_Tensor* t, int dim_index);
size_t TF_TensorByteSize(const TF_Tensor* t);
void* TF_TensorData(const TF_Tensor* t);
int64_t TF_TensorElementCount(const TF_Tensor* t);

/* ---- Graphs and operations ---- */

typedef struct TF_Graph TF_Graph;
typedef struct TF_Operation TF_Operation;

/* Output `index` of an operation, and input `index` of one. */
typedef struct TF_Output {
  TF_Operation* oper;
  int index;
} TF_Output;

typedef struct TF_Input {
  TF_Operation* oper;
  int index;
} TF_Input;

TF_Graph* TF_NewGraph(void);
/* Frees the graph now, or with its last session (SEMANTICS). */
void TF_DeleteGraph(TF_Graph* graph);

typedef struct TF_ImportGraphDefOptions TF_ImportGraphDefOptions;

TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void);
void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts);
/* Imported nodes are named "<prefix>/<name>" (and their inputs and
 * colocation attributes renamed to match). */
void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts, const char* prefix);
/* The device of imported nodes that request none. */
void TF_ImportGraphDefOptionsSetDefaultDevice(TF_ImportGraphDefOptions* opts, const char* device);

/* Adds the nodes of a serialized GraphDef to the graph. All or nothing:
 * bytes that are not a GraphDef are TF_INVALID_ARGUMENT, and so is a name
 * that already exists in the graph; an unknown op or a bad input leaves the
 * graph unchanged too. */
void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
                            TF_Status* status);

/* The operation named oper_name, or NULL. The pointer lives as long as the
 * graph. */
TF_Operation* TF_GraphOperationByName(TF_Graph* graph, const char* oper_name);
/* Operations in import order: start with *pos == 0; NULL after the last. */
TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos);
/* The graph as a serialized GraphDef into an empty output_graph_def. */
void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output_graph_def, TF_Status* status);

const char* TF_OperationName(TF_Operation* oper);
const char* TF_OperationOpType(TF_Operation* oper);
/* The device the node requested ("" when none). */
const char* TF_OperationDevice(TF_Operation* oper);
int TF_OperationNumOutputs(TF_Operation* oper);
/* The dtype of an output (its reference type, e.g. a Variable's, is
 * reported as the base type plus 100, as in TensorFlow); 0 when the index
 * is out of range. */
TF_DataType TF_OperationOutputType(TF_Output oper_out);
int TF_OperationNumInputs(TF_Operation* oper);

/* ---- Sessions ---- */

typedef struct TF_SessionOptions TF_SessionOptions;

TF_SessionOptions* TF_NewSessionOptions(void);
/* "" (the default) or "direct://" runs in-process; other targets select
 * the session factory registered for them. */
void TF_SetTarget(TF_SessionOptions* options, const char* target);
/* A serialized ConfigProto. */
void TF_SetConfig(TF_SessionOptions* options, const void* proto, size_t proto_len, TF_Status* status);
void TF_DeleteSessionOptions(TF_SessionOptions* options);

typedef struct TF_Session TF_Session;

/* A session running `graph` (opts may be NULL for the defaults). Loads
 * graphrt's standard op plugins first. */
TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts, TF_Status* status);

/* Runs the graph: feeds inputs[i] with input_values[i], computes
 * outputs[] into output_values[] (caller-owned) and runs target_opers.
 * run_options is a serialized RunOptions or NULL; run_metadata, when not
 * NULL, must be empty and receives a serialized RunMetadata. An input or
 * output naming no operation of the session's graph, an index out of
 * range, or an input tensor whose dtype is not the output's is
 * TF_INVALID_ARGUMENT naming the operation. */
void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
                   TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                   TF_Tensor** output_values, int noutputs, const TF_Operation* const* target_opers, int ntargets,
                   TF_Buffer* run_metadata, TF_Status* status);

void TF_CloseSession(TF_Session* session, TF_Status* status);
/* Closes the session if it is not, then frees it. */
void TF_DeleteSession(TF_Session* session, TF_Status* status);

/* Loads the SavedModel in export_dir with the MetaGraphDef tagged `tags`
 * (all of them), restores its variables and runs its main op. `graph` must
 * be empty; it receives the MetaGraphDef's graph. meta_graph_def, when not
 * NULL, must be empty and receives the serialized MetaGraphDef. run_options
 * (a serialized RunOptions or NULL) applies to the restore runs. */
TF_Session* TF_LoadSessionFromSavedModel(const TF_SessionOptions* session_options, const TF_Buffer* run_options,
                                         const char* export_dir, const char* const* tags, int tags_len,
                                         TF_Graph* graph, TF_Buffer* meta_graph_def, TF_Status* status);

/* ---- Op libraries ---- */

typedef struct TF_Library TF_Library;

/* Loads a graphrt op plugin (a shared library with graphrt's plugin ABI,
 * graphrt/c_api.h; TensorFlow's custom-op libraries are not that). The
 * handle's TF_GetOpList is a serialized OpList of the OpDefs the plugin
 * defines. Loading the same file again succeeds and lists them again. */
TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status);
/* Borrowed from the handle: valid until TF_DeleteLibraryHandle. */
TF_Buffer TF_GetOpList(TF_Library* lib_handle);
/* Frees the handle; the plugin stays loaded (as in TensorFlow). */
void TF_DeleteLibraryHandle(TF_Library* lib_handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAPHRT_TF_C_API_H_ */
