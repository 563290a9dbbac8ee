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
 * graphs filled by TF_GraphImportGraphDef* (prefix, unique names, input
 * and control mappings, control dependencies, returned outputs) and
 * built operation by operation (TF_NewOperation ... TF_FinishOperation,
 * with TensorFlow's attr inference and the ops' shape functions),
 * gradients (TF_AddGradients, with the plugins' gradient functions), tensor
 * shapes, operation lookup and inspection (inputs, consumers, control
 * edges, attrs, NodeDefs), OpDefs, TF_GraphToGraphDef, session options,
 * sessions (new, run, close, delete), the older TF_DeprecatedSession /
 * TF_ExtendGraph / TF_Run, TF_LoadSessionFromSavedModel, and
 * TF_LoadLibrary / TF_GetOpList mapped onto graphrt's op plugins.
 *
 * WHAT IS NOT (yet). Gradients through loops and conditionals, functions,
 * while loops, partial runs (TF_SessionPRun* and TF_PRun* answer
 * TF_UNIMPLEMENTED), device lists, the eager API, and
 * TF_STRING tensors (TensorFlow 2's TF_TString element layout is not
 * implemented: TF_NewTensor/TF_AllocateTensor refuse TF_STRING, and a
 * string tensor a run returns has TF_TensorData() == NULL and
 * TF_TensorByteSize() == 0; graphrt's own graphrt/c_client.h handles
 * strings). A graph only grows (by import or TF_FinishOperation), and
 * sessions see the added operations on their next run.
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

/* A name that exists already gets "_1", "_2", ... instead of failing
 * (uniquify_names); a prefix in use (an operation or a name scope of one)
 * gets the same (uniquify_prefix). Both off by default. */
void TF_ImportGraphDefOptionsSetUniquifyNames(TF_ImportGraphDefOptions* opts, unsigned char uniquify_names);
void TF_ImportGraphDefOptionsSetUniquifyPrefix(TF_ImportGraphDefOptions* opts, unsigned char uniquify_prefix);
/* Inputs "src_name:src_index" of the GraphDef's nodes read `dst`, a tensor
 * of the graph, instead (src_name as in the GraphDef, before the prefix). */
void TF_ImportGraphDefOptionsAddInputMapping(TF_ImportGraphDefOptions* opts, const char* src_name, int src_index,
                                            TF_Output dst);
/* Control inputs "^src_name" become "^dst". */
void TF_ImportGraphDefOptionsRemapControlDependency(TF_ImportGraphDefOptions* opts, const char* src_name,
                                                   TF_Operation* dst);
/* `oper` becomes a control input of every imported node with no input
 * (data or control) from the imported GraphDef itself. */
void TF_ImportGraphDefOptionsAddControlDependency(TF_ImportGraphDefOptions* opts, TF_Operation* oper);
/* Outputs and operations of the GraphDef (named as in it) the import
 * returns (TF_ImportGraphDefResults); a mapped output returns its mapping. */
void TF_ImportGraphDefOptionsAddReturnOutput(TF_ImportGraphDefOptions* opts, const char* oper_name, int index);
int TF_ImportGraphDefOptionsNumReturnOutputs(const TF_ImportGraphDefOptions* opts);
void TF_ImportGraphDefOptionsAddReturnOperation(TF_ImportGraphDefOptions* opts, const char* oper_name);
int TF_ImportGraphDefOptionsNumReturnOperations(const TF_ImportGraphDefOptions* opts);

/* Adds the nodes of a serialized GraphDef to the graph, as `options` (may
 * be NULL) ask. All or nothing: bytes that are not a GraphDef are
 * TF_INVALID_ARGUMENT, and so is a name that already exists in the graph
 * (without uniquify_names), a return output or operation the GraphDef does
 * not have, or an option naming an operation of another graph; an unknown
 * op, a bad input or a shape error leaves the graph unchanged too. */
void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
                            TF_Status* status);

typedef struct TF_ImportGraphDefResults TF_ImportGraphDefResults;

/* As TF_GraphImportGraphDef; the results (TF_DeleteImportGraphDefResults
 * them) hold the return outputs and operations, and the input mappings no
 * input went through. NULL on failure. */
TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResults(TF_Graph* graph, const TF_Buffer* graph_def,
                                                            const TF_ImportGraphDefOptions* options,
                                                            TF_Status* status);
/* As TF_GraphImportGraphDef, writing the return outputs to return_outputs
 * (num_return_outputs must be the options' count). */
void TF_GraphImportGraphDefWithReturnOutputs(TF_Graph* graph, const TF_Buffer* graph_def,
                                             const TF_ImportGraphDefOptions* options, TF_Output* return_outputs,
                                             int num_return_outputs, TF_Status* status);
/* Arrays owned by the results, valid until they are deleted. */
void TF_ImportGraphDefResultsReturnOutputs(TF_ImportGraphDefResults* results, int* num_outputs, TF_Output** outputs);
void TF_ImportGraphDefResultsReturnOperations(TF_ImportGraphDefResults* results, int* num_opers,
                                              TF_Operation*** opers);
void TF_ImportGraphDefResultsMissingUnusedInputMappings(TF_ImportGraphDefResults* results,
                                                        int* num_missing_unused_input_mappings,
                                                        const char*** src_names, int** src_indexes);
void TF_DeleteImportGraphDefResults(TF_ImportGraphDefResults* results);

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

/* ---- Building graphs operation by operation ----
 *
 * As TensorFlow's C API (and its Python front end, which sits on it):
 * TF_NewOperation starts a description; inputs, control inputs, device,
 * colocation and attrs are added to it; TF_FinishOperation validates it
 * against the op's OpDef and adds it to the graph, or fails and leaves the
 * graph unchanged. Either way the description is freed.
 *
 * - Inputs are matched to the OpDef's input args in order: TF_AddInput for
 *   a single-tensor arg, TF_AddInputList for a list arg (`N * T` or a type
 *   list), even of one tensor. Type attrs (`T`), list lengths (`N`) and
 *   type lists are inferred from the inputs, as TensorFlow's NodeBuilder
 *   does; an attr set explicitly must agree with them (otherwise
 *   TF_INVALID_ARGUMENT "Inconsistent values for attr 'T' ..."). A ref
 *   output feeds a value input (a read); a value output cannot feed a ref
 *   input.
 * - Attrs not set and not inferred take the OpDef's defaults; an attr with
 *   no default left unset, an attr the op does not have, a value outside
 *   the attr's allowed values or below its minimum is TF_INVALID_ARGUMENT
 *   naming the node, the op and the attr.
 * - The node name must be unique in the graph and a valid TensorFlow node
 *   name ([A-Za-z0-9.][A-Za-z0-9_.\-/>]*).
 * - The op's registered shape function runs on the input shapes (and on
 *   the values of small constant inputs), as TensorFlow's shape refiner
 *   does: TF_GraphGetTensorShape answers what it inferred; a shape error is
 *   TF_INVALID_ARGUMENT naming the node, and the operation is not added.
 * - Setter errors (a NULL name, a bad shape proto) are reported by
 *   TF_FinishOperation, or by the setter itself where it has a status (a
 *   NULL status, which TensorFlow does not allow, defers them to
 *   TF_FinishOperation too).
 * - An operation whose inputs live in another graph is TF_INVALID_ARGUMENT.
 * - Sessions on the graph see the added operations on their next run. */

typedef struct TF_OperationDescription TF_OperationDescription;

TF_OperationDescription* TF_NewOperation(TF_Graph* graph, const char* op_type, const char* oper_name);
void TF_SetDevice(TF_OperationDescription* desc, const char* device);
void TF_AddInput(TF_OperationDescription* desc, TF_Output input);
void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs, int num_inputs);
void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input);
/* Places the operation with `op` (TensorFlow's "_class" attr, "loc:@op"). */
void TF_ColocateWith(TF_OperationDescription* desc, TF_Operation* op);

void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name, const void* value, size_t length);
void TF_SetAttrStringList(TF_OperationDescription* desc, const char* attr_name, const void* const* values,
                          const size_t* lengths, int num_values);
void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name, int64_t value);
void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name, const int64_t* values, int num_values);
void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name, float value);
void TF_SetAttrFloatList(TF_OperationDescription* desc, const char* attr_name, const float* values, int num_values);
void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name, unsigned char value);
void TF_SetAttrBoolList(TF_OperationDescription* desc, const char* attr_name, const unsigned char* values,
                        int num_values);
void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name, TF_DataType value);
void TF_SetAttrTypeList(TF_OperationDescription* desc, const char* attr_name, const TF_DataType* values,
                        int num_values);
/* A function body's reference to an attr of the function ("$T"). */
void TF_SetAttrPlaceholder(TF_OperationDescription* desc, const char* attr_name, const char* placeholder);
/* A `func` attr naming a function of the graph's library. */
void TF_SetAttrFuncName(TF_OperationDescription* desc, const char* attr_name, const char* value, size_t length);
/* num_dims == -1: unknown rank; a dim of -1: unknown. */
void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name, const int64_t* dims, int num_dims);
void TF_SetAttrShapeList(TF_OperationDescription* desc, const char* attr_name, const int64_t* const* dims,
                         const int* num_dims, int num_shapes);
/* A serialized TensorShapeProto (each). */
void TF_SetAttrTensorShapeProto(TF_OperationDescription* desc, const char* attr_name, const void* proto,
                                size_t proto_len, TF_Status* status);
void TF_SetAttrTensorShapeProtoList(TF_OperationDescription* desc, const char* attr_name,
                                    const void* const* protos, const size_t* proto_lens, int num_shapes,
                                    TF_Status* status);
/* The value is copied; the tensors stay the caller's (TensorFlow 1.15's
 * rule: not adopted, TF_DeleteTensor them). */
void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* value, TF_Status* status);
void TF_SetAttrTensorList(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* const* values,
                          int num_values, TF_Status* status);
/* A serialized AttrValue. */
void TF_SetAttrValueProto(TF_OperationDescription* desc, const char* attr_name, const void* proto, size_t proto_len,
                          TF_Status* status);

/* Adds the operation (see above) and frees `desc`; NULL on failure. */
TF_Operation* TF_FinishOperation(TF_OperationDescription* desc, TF_Status* status);

/* ---- Shapes of a graph's tensors (inferred, or set and merged) ---- */

/* Merges the given shape into what is known of `output`'s (num_dims -1:
 * unknown rank; a dim of -1: unknown). Incompatible shapes are
 * TF_INVALID_ARGUMENT naming both. */
void TF_GraphSetTensorShape(TF_Graph* graph, TF_Output output, const int64_t* dims, const int num_dims,
                            TF_Status* status);
/* The rank, or -1 when unknown. */
int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output, TF_Status* status);
/* num_dims must be the rank; unknown dims are -1. */
void TF_GraphGetTensorShape(TF_Graph* graph, TF_Output output, int64_t* dims, int num_dims, TF_Status* status);

/* ---- Inspecting operations ---- */

/* How many tensors the input or output arg `arg_name` has (1 for a single
 * tensor; N for a list). */
int TF_OperationOutputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status);
int TF_OperationInputListLength(TF_Operation* oper, const char* arg_name, TF_Status* status);
TF_DataType TF_OperationInputType(TF_Input oper_in);
/* The output feeding `oper_in` ({NULL, -1} when the index is out of range). */
TF_Output TF_OperationInput(TF_Input oper_in);
/* The first max_inputs inputs' producers, in input order. */
void TF_OperationAllInputs(TF_Operation* oper, TF_Output* inputs, int max_inputs);
/* The operations' inputs that `oper_out` feeds now (adding operations may
 * add more). TF_OperationOutputConsumers writes at most max_consumers and
 * returns how many there are. */
int TF_OperationOutputNumConsumers(TF_Output oper_out);
int TF_OperationOutputConsumers(TF_Output oper_out, TF_Input* consumers, int max_consumers);
int TF_OperationNumControlInputs(TF_Operation* oper);
int TF_OperationGetControlInputs(TF_Operation* oper, TF_Operation** control_inputs, int max_control_inputs);
int TF_OperationNumControlOutputs(TF_Operation* oper);
int TF_OperationGetControlOutputs(TF_Operation* oper, TF_Operation** control_outputs, int max_control_outputs);

typedef enum TF_AttrType {
  TF_ATTR_STRING = 0,
  TF_ATTR_INT = 1,
  TF_ATTR_FLOAT = 2,
  TF_ATTR_BOOL = 3,
  TF_ATTR_TYPE = 4,
  TF_ATTR_SHAPE = 5,
  TF_ATTR_TENSOR = 6,
  TF_ATTR_PLACEHOLDER = 7,
  TF_ATTR_FUNC = 8
} TF_AttrType;

/* is_list: whether the value is a list; list_size: its length (-1 when not
 * a list); type: of the value or its elements; total_size: for a string the
 * byte length, for a list of strings the sum of theirs, for a shape its
 * rank (-1 unknown), for a list of shapes the sum of their ranks; otherwise
 * -1. */
typedef struct TF_AttrMetadata {
  unsigned char is_list;
  int64_t list_size;
  TF_AttrType type;
  int64_t total_size;
} TF_AttrMetadata;

TF_AttrMetadata TF_OperationGetAttrMetadata(TF_Operation* oper, const char* attr_name, TF_Status* status);
/* The getters below fail with TF_INVALID_ARGUMENT when the attr is missing
 * (naming it and the operation) or of another type. List getters write at
 * most max_values elements. */
void TF_OperationGetAttrString(TF_Operation* oper, const char* attr_name, void* value, size_t max_length,
                               TF_Status* status);
/* values[i] point into `storage` (storage_size bytes, at least the
 * metadata's total_size for the values asked); too small is an error. */
void TF_OperationGetAttrStringList(TF_Operation* oper, const char* attr_name, void** values, size_t* lengths,
                                   int max_values, void* storage, size_t storage_size, TF_Status* status);
void TF_OperationGetAttrInt(TF_Operation* oper, const char* attr_name, int64_t* value, TF_Status* status);
void TF_OperationGetAttrIntList(TF_Operation* oper, const char* attr_name, int64_t* values, int max_values,
                                TF_Status* status);
void TF_OperationGetAttrFloat(TF_Operation* oper, const char* attr_name, float* value, TF_Status* status);
void TF_OperationGetAttrFloatList(TF_Operation* oper, const char* attr_name, float* values, int max_values,
                                  TF_Status* status);
void TF_OperationGetAttrBool(TF_Operation* oper, const char* attr_name, unsigned char* value, TF_Status* status);
void TF_OperationGetAttrBoolList(TF_Operation* oper, const char* attr_name, unsigned char* values, int max_values,
                                 TF_Status* status);
void TF_OperationGetAttrType(TF_Operation* oper, const char* attr_name, TF_DataType* value, TF_Status* status);
void TF_OperationGetAttrTypeList(TF_Operation* oper, const char* attr_name, TF_DataType* values, int max_values,
                                 TF_Status* status);
/* num_dims must be the shape's rank. */
void TF_OperationGetAttrShape(TF_Operation* oper, const char* attr_name, int64_t* value, int num_dims,
                              TF_Status* status);
/* dims[i] point into `storage` (storage_size int64s); num_dims[i] is -1
 * for an unknown rank. */
void TF_OperationGetAttrShapeList(TF_Operation* oper, const char* attr_name, int64_t** dims, int* num_dims,
                                  int num_shapes, int64_t* storage, int storage_size, TF_Status* status);
/* Serialized TensorShapeProtos into empty buffers (TF_NewBuffer'd by the
 * list getter; the caller TF_DeleteBuffers them). */
void TF_OperationGetAttrTensorShapeProto(TF_Operation* oper, const char* attr_name, TF_Buffer* value,
                                         TF_Status* status);
void TF_OperationGetAttrTensorShapeProtoList(TF_Operation* oper, const char* attr_name, TF_Buffer** values,
                                             int max_values, TF_Status* status);
/* New tensors the caller owns (TF_DeleteTensor). */
void TF_OperationGetAttrTensor(TF_Operation* oper, const char* attr_name, TF_Tensor** value, TF_Status* status);
void TF_OperationGetAttrTensorList(TF_Operation* oper, const char* attr_name, TF_Tensor** values, int max_values,
                                   TF_Status* status);
/* A serialized AttrValue into an empty buffer. */
void TF_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name, TF_Buffer* output_attr_value,
                                   TF_Status* status);
/* The operation's NodeDef (inputs as "name:index" and "^name", defaults
 * filled in) into an empty buffer. */
void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def, TF_Status* status);

/* ---- Gradients ---- */

/* Adds the nodes that compute the partial derivatives of sum(y[i] * dx[i])
 * with respect to each x (TensorFlow's AddSymbolicGradients), with the
 * gradient functions the op plugins register, and writes them to
 * dy[0..nx). dx (ny initial gradients) may be NULL: ones of each y's shape.
 * The nodes are named under `prefix` ("prefix/MatMul_grad/MatMul_1"),
 * which must not be in use; NULL: "gradients", made unique ("gradients_1",
 * ...). An x no y depends on is TF_INVALID_ARGUMENT ("Cannot compute the
 * partial derivative for node 'x' as it's unreachable from the output
 * node(s)."); an x whose gradient is stopped on the way (StopGradient, an
 * integer input) gets dy[i] = {NULL, -1}. An op on the path whose plugin
 * registers no gradient is TF_NOT_FOUND naming the node; loops and
 * conditionals are TF_UNIMPLEMENTED for now. On failure the graph is left
 * as it was. */
void TF_AddGradients(TF_Graph* g, TF_Output* y, int ny, TF_Output* x, int nx, TF_Output* dx, TF_Status* status,
                     TF_Output* dy);
void TF_AddGradientsWithPrefix(TF_Graph* g, const char* prefix, TF_Output* y, int ny, TF_Output* x, int nx,
                               TF_Output* dx, TF_Status* status, TF_Output* dy);

/* ---- Op definitions ---- */

/* The serialized OpDef of op_name (TF_NOT_FOUND when no plugin defines
 * it) into an empty buffer. */
void TF_GraphGetOpDef(TF_Graph* graph, const char* op_name, TF_Buffer* output_op_def, TF_Status* status);
/* The graph's VersionDef (producer and min_consumer) into an empty buffer. */
void TF_GraphVersions(TF_Graph* graph, TF_Buffer* output_version_def, TF_Status* status);
/* Every registered op as a serialized OpList (the standard plugins loaded
 * first), sorted by name; TF_DeleteBuffer it. NULL on failure. */
TF_Buffer* TF_GetAllOpList(void);

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

/* ---- The older session API (TensorFlow's TF_DeprecatedSession) ----
 *
 * A session fed serialized GraphDefs (TF_ExtendGraph: the first creates
 * its graph, later ones add to it) and run with tensors named by strings
 * ("x:0"; targets by node name). TF_Run's outputs become the caller's
 * (TF_DeleteTensor each; NULL on failure); its inputs stay the caller's.
 * Running before any TF_ExtendGraph is TF_FAILED_PRECONDITION. */
typedef struct TF_DeprecatedSession TF_DeprecatedSession;

TF_DeprecatedSession* TF_NewDeprecatedSession(const TF_SessionOptions* opts, TF_Status* status);
void TF_CloseDeprecatedSession(TF_DeprecatedSession* session, TF_Status* status);
void TF_DeleteDeprecatedSession(TF_DeprecatedSession* session, TF_Status* status);
void TF_ExtendGraph(TF_DeprecatedSession* session, const void* proto, size_t proto_len, TF_Status* status);
void TF_Run(TF_DeprecatedSession* session, const TF_Buffer* run_options, const char** input_names,
            TF_Tensor** inputs, int ninputs, const char** output_names, TF_Tensor** outputs, int noutputs,
            const char** target_oper_names, int ntargets, TF_Buffer* run_metadata, TF_Status* status);

/* Partial runs: graphrt's sessions have none, so these answer
 * TF_UNIMPLEMENTED (saying so), set *handle to NULL and every output to
 * NULL. They exist so that bindings which link them load. */
void TF_PRunSetup(TF_DeprecatedSession* session, const char** input_names, int ninputs, const char** output_names,
                  int noutputs, const char** target_oper_names, int ntargets, const char** handle,
                  TF_Status* status);
void TF_PRun(TF_DeprecatedSession* session, const char* handle, const char** input_names, TF_Tensor** inputs,
             int ninputs, const char** output_names, TF_Tensor** outputs, int noutputs,
             const char** target_oper_names, int ntargets, TF_Status* status);
void TF_SessionPRunSetup(TF_Session* session, const TF_Output* inputs, int ninputs, const TF_Output* outputs,
                         int noutputs, const TF_Operation* const* target_opers, int ntargets, const char** handle,
                         TF_Status* status);
void TF_SessionPRun(TF_Session* session, const char* handle, const TF_Output* inputs, TF_Tensor* const* input_values,
                    int ninputs, const TF_Output* outputs, TF_Tensor** output_values, int noutputs,
                    const TF_Operation* const* target_opers, int ntargets, TF_Status* status);
void TF_DeletePRunHandle(const char* handle);

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
