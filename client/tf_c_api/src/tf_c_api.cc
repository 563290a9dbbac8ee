// TensorFlow's C API names (graphrt/tf_c_api.h) over graphrt's C++ Graph,
// Session and SavedModel APIs. Every entry point catches C++ exceptions and
// answers a status (or NULL) instead, so none crosses into C.
#include "graphrt/tf_c_api.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "c_api_internal.h"
#include "tf_c_internal.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"
#include "graphrt/distributed/grpc_session.h"
#include "graphrt/model.h"
#include "graphrt/proto/op_def.pb.h"

namespace {

using graphrt::Status;
namespace errors = graphrt::errors;

// TF_Code and TF_DataType are TensorFlow's numbers, as are graphrt's.
#define TF_SAME_(a, b) static_assert(static_cast<int>(a) == static_cast<int>(b), #a " != " #b)
TF_SAME_(TF_CANCELLED, graphrt::Code::kCancelled);
TF_SAME_(TF_INVALID_ARGUMENT, graphrt::Code::kInvalidArgument);
TF_SAME_(TF_NOT_FOUND, graphrt::Code::kNotFound);
TF_SAME_(TF_FAILED_PRECONDITION, graphrt::Code::kFailedPrecondition);
TF_SAME_(TF_UNAUTHENTICATED, graphrt::Code::kUnauthenticated);
TF_SAME_(TF_FLOAT, GR_FLOAT);
TF_SAME_(TF_STRING, GR_STRING);
TF_SAME_(TF_BOOL, GR_BOOL);
TF_SAME_(TF_HALF, GR_HALF);
TF_SAME_(TF_RESOURCE, GR_RESOURCE);
TF_SAME_(TF_UINT64, GR_UINT64);
#undef TF_SAME_

}  // namespace

namespace {

using graphrt::c_api_internal::Call;
using graphrt::c_api_internal::LoadDefaultPlugins;
using graphrt::c_api_internal::NullArgument;
using graphrt::c_api_internal::ParseProto;

using graphrt::tf_c::FillBuffer;
using graphrt::tf_c::kNoStatus;

void FreeBytes(void* data, size_t) { std::free(data); }

}  // namespace

namespace graphrt::tf_c {

Status FillBuffer(const char* fn, const google::protobuf::MessageLite& m, TF_Buffer* out) {
  if (out->data != nullptr) return errors::InvalidArgument(fn, ": passing a non-empty TF_Buffer is invalid");
  const size_t n = m.ByteSizeLong();
  if (n > static_cast<size_t>(INT_MAX)) return errors::InvalidArgument(fn, ": the ", m.GetTypeName(), " is over 2 GiB");
  void* p = std::malloc(n > 0 ? n : 1);
  if (p == nullptr) return errors::ResourceExhausted(fn, ": cannot allocate ", n, " bytes for a ", m.GetTypeName());
  if (!m.SerializeToArray(p, static_cast<int>(n))) {
    std::free(p);
    return errors::Internal(fn, ": could not serialize the ", m.GetTypeName());
  }
  out->data = p;
  out->length = n;
  out->data_deallocator = FreeBytes;
  return Status::OK();
}

Status BufferArguments(const char* fn, const TF_Buffer* run_options, proto::RunOptions* opts, const TF_Buffer* out,
                       const char* out_name) {
  if (out != nullptr && out->data != nullptr) {
    return errors::InvalidArgument(fn, ": passing a non-empty TF_Buffer as ", out_name, " is invalid");
  }
  if (run_options == nullptr) return Status::OK();
  return ParseProto(fn, run_options->data, run_options->length, "run_options", opts);
}

}  // namespace graphrt::tf_c

namespace {

using graphrt::tf_c::BufferArguments;

// dtype and shape of a tensor the caller describes, checked: a known
// fixed-size type, non-negative dims within the size rule, and len equal to
// the shape's bytes.
Status TensorSpecOf(const char* fn, TF_DataType dtype, const int64_t* dims, int num_dims, size_t len,
                    graphrt::DataType* dt, graphrt::TensorShape* shape) {
  GR_RETURN_IF_ERROR(graphrt::ValidateDataType(static_cast<int64_t>(dtype), /*allow_ref=*/false,
                                               std::string(fn) + " dtype", dt));
  if (!graphrt::DataTypeIsPod(*dt)) {
    return errors::Unimplemented(fn, ": dtype ", graphrt::DataTypeString(*dt),
                                 " has no fixed-size elements (not supported by this library)");
  }
  GR_RETURN_IF_ERROR(graphrt::c_api_internal::ShapeOf(fn, dims, num_dims, shape));
  return graphrt::c_api_internal::CheckByteLength(fn, *dt, *shape, len);
}

// A new tensor of a checked dtype, shape and len, made by
// fill(dtype, shape, tensor*); NULL when refused (TF_NewTensor and
// TF_AllocateTensor have no status).
template <typename F>
TF_Tensor* NewTensorWith(const char* fn, TF_DataType dtype, const int64_t* dims, int num_dims, size_t len, F&& fill) {
  TF_Tensor* result = nullptr;
  Call(kNoStatus, fn, [&]() -> Status {
    graphrt::DataType dt;
    graphrt::TensorShape shape;
    GR_RETURN_IF_ERROR(TensorSpecOf(fn, dtype, dims, num_dims, len, &dt, &shape));
    auto t = std::make_unique<TF_Tensor>();
    GR_RETURN_IF_ERROR(fill(dt, shape, &t->tensor));
    result = t.release();
    return Status::OK();
  });
  return result;
}

// Empties the graph (a failed TF_LoadSessionFromSavedModel leaves it so).
void ResetGraph(TF_Graph* g) {
  g->graph = graphrt::tf_c::EmptyGraph();
  g->additions.clear();
  g->ops.clear();
  g->by_name.clear();
  g->shapes.clear();
  g->const_values.clear();
}

// additions[begin, end) as one GraphDef (a function two of them define
// once).
graphrt::proto::GraphDef MergeAdditions(const TF_Graph& g, size_t begin, size_t end) {
  graphrt::proto::GraphDef merged;
  std::set<std::string> functions;
  for (size_t i = begin; i < end; ++i) {
    const graphrt::proto::GraphDef& d = g.additions[i];
    for (const auto& n : d.node()) *merged.add_node() = n;
    for (const auto& f : d.library().function()) {
      if (functions.insert(f.signature().name()).second) *merged.mutable_library()->add_function() = f;
    }
  }
  return merged;
}

// Brings the session's graph up to date with its TF_Graph (TensorFlow
// extends a session with what was added to its graph on the next run):
// everything added since in one Extend.
Status ExtendSession(TF_Session* s) {
  graphrt::proto::GraphDef pending;
  size_t upto;
  {
    std::lock_guard<std::mutex> g(s->graph->mu);
    upto = s->graph->additions.size();
    if (upto == s->applied && s->created) return Status::OK();
    pending = MergeAdditions(*s->graph, s->applied, upto);
    if (!s->created) *pending.mutable_versions() = s->graph->graph->versions();
  }
  GR_RETURN_IF_ERROR(s->created ? s->session->Extend(pending) : s->session->Create(pending));
  s->created = true;
  s->applied = upto;
  return Status::OK();
}

// An operation the caller gave as `what`[i] must be one of the session's
// graph (not another graph's, not NULL).
Status CheckInGraph(const char* fn, const TF_Session* s, const char* what, int i, const TF_Operation* oper) {
  if (oper == nullptr) return errors::InvalidArgument(fn, ": ", what, "[", i, "] has a NULL operation");
  std::lock_guard<std::mutex> g(s->graph->mu);
  auto it = s->graph->by_name.find(oper->node->name());
  if (it == s->graph->by_name.end() || it->second != oper) {
    return errors::InvalidArgument(fn, ": ", what, "[", i, "]: operation '", oper->node->name(),
                                   "' is not in the session's graph");
  }
  return Status::OK();
}

// "name:index" of a TF_Output the caller gave as `what`[i], checked: an
// operation of the session's graph and one of its outputs.
Status TensorName(const char* fn, const TF_Session* s, const char* what, int i, const TF_Output& out,
                  std::string* name) {
  GR_RETURN_IF_ERROR(CheckInGraph(fn, s, what, i, out.oper));
  const graphrt::Node* n = out.oper->node;
  if (out.index < 0 || out.index >= n->num_outputs()) {
    return errors::InvalidArgument(fn, ": ", what, "[", i, "]: operation '", n->name(), "' (", n->op(), ") has ",
                                   n->num_outputs(), " outputs, not an output ", out.index);
  }
  *name = n->name() + ":" + std::to_string(out.index);
  return Status::OK();
}

}  // namespace

extern "C" {

const char* TF_Version(void) { return "1.15.0-graphrt." GRAPHRT_VERSION_STRING; }

// ---- Status ----

TF_Status* TF_NewStatus(void) { return new (std::nothrow) TF_Status; }
void TF_DeleteStatus(TF_Status* s) { delete s; }
TF_Code TF_GetCode(const TF_Status* s) { return s ? s->code : TF_OK; }
const char* TF_Message(const TF_Status* s) { return s ? s->message.c_str() : ""; }

void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg) {
  graphrt::c_api_internal::SetCodeAndMessage(s, code, msg, TF_OK);
}

// ---- Buffers ----

TF_Buffer* TF_NewBuffer(void) { return new (std::nothrow) TF_Buffer{}; }

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  if (proto == nullptr && proto_len > 0) return nullptr;
  void* copy = std::malloc(proto_len > 0 ? proto_len : 1);
  if (copy == nullptr) return nullptr;
  if (proto_len > 0) std::memcpy(copy, proto, proto_len);
  TF_Buffer* b = new (std::nothrow) TF_Buffer{copy, proto_len, FreeBytes};
  if (b == nullptr) std::free(copy);
  return b;
}

void TF_DeleteBuffer(TF_Buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->data_deallocator != nullptr) buffer->data_deallocator(const_cast<void*>(buffer->data), buffer->length);
  delete buffer;
}

TF_Buffer TF_GetBuffer(TF_Buffer* buffer) { return buffer ? *buffer : TF_Buffer{}; }

// ---- Tensors ----

size_t TF_DataTypeSize(TF_DataType dt) { return graphrt::c_api_internal::DataTypeSizeOfValue(dt); }

TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
                        void (*deallocator)(void* data, size_t len, void* arg), void* deallocator_arg) {
  static const char* fn = "TF_NewTensor";
  // A refused tensor leaves the memory the caller's (no deallocator call).
  return NewTensorWith(fn, dtype, dims, num_dims, len,
                       [&](graphrt::DataType dt, const graphrt::TensorShape& shape, graphrt::Tensor* out) {
                         return graphrt::c_api_internal::TensorOverCallerMemory(fn, dt, shape, data, len, deallocator,
                                                                                deallocator_arg, out);
                       });
}

TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len) {
  return NewTensorWith("TF_AllocateTensor", dtype, dims, num_dims, len,
                       [](graphrt::DataType dt, const graphrt::TensorShape& shape, graphrt::Tensor* out) {
                         return graphrt::Tensor::Allocate(graphrt::HostAllocator(), dt, shape, out);
                       });
}

void TF_DeleteTensor(TF_Tensor* t) { delete t; }

TF_DataType TF_TensorType(const TF_Tensor* t) {
  return static_cast<TF_DataType>(t ? static_cast<int>(t->tensor.dtype()) : 0);
}
int TF_NumDims(const TF_Tensor* t) { return graphrt::c_api_internal::TensorDims(t ? &t->tensor : nullptr); }
int64_t TF_Dim(const TF_Tensor* t, int dim_index) {
  return graphrt::c_api_internal::TensorDim(t ? &t->tensor : nullptr, dim_index);
}
int64_t TF_TensorElementCount(const TF_Tensor* t) {
  return graphrt::c_api_internal::TensorElements(t ? &t->tensor : nullptr);
}
size_t TF_TensorByteSize(const TF_Tensor* t) { return graphrt::c_api_internal::TensorBytes(t ? &t->tensor : nullptr); }
void* TF_TensorData(const TF_Tensor* t) { return graphrt::c_api_internal::TensorData(t ? &t->tensor : nullptr); }

// ---- Graphs ----

TF_Graph* TF_NewGraph(void) {
  TF_Graph* result = nullptr;
  Call(kNoStatus, "TF_NewGraph", [&]() -> Status {
    auto g = std::make_unique<TF_Graph>();
    g->graph = graphrt::tf_c::EmptyGraph();
    result = g.release();
    return Status::OK();
  });
  return result;
}

void TF_DeleteGraph(TF_Graph* graph) {
  if (graph == nullptr) return;
  {
    std::lock_guard<std::mutex> l(graph->mu);
    if (graph->sessions > 0) {
      graph->delete_requested = true;  // the last session frees it
      return;
    }
  }
  delete graph;
}

TF_Operation* TF_GraphOperationByName(TF_Graph* graph, const char* oper_name) {
  if (graph == nullptr || oper_name == nullptr) return nullptr;
  TF_Operation* result = nullptr;
  Call(kNoStatus, "TF_GraphOperationByName", [&]() -> Status {
    std::lock_guard<std::mutex> l(graph->mu);
    auto it = graph->by_name.find(oper_name);
    if (it != graph->by_name.end()) result = it->second;
    return Status::OK();
  });
  return result;
}

TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos) {
  if (graph == nullptr || pos == nullptr) return nullptr;
  std::lock_guard<std::mutex> l(graph->mu);
  if (*pos >= graph->ops.size()) return nullptr;
  return graph->ops[(*pos)++].get();
}

void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output_graph_def, TF_Status* status) {
  static const char* fn = "TF_GraphToGraphDef";
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    if (output_graph_def == nullptr) return NullArgument(fn, "output_graph_def");
    graphrt::proto::GraphDef def;
    {
      std::lock_guard<std::mutex> l(graph->mu);
      def = MergeAdditions(*graph, 0, graph->additions.size());
      *def.mutable_versions() = graph->graph->versions();
    }
    return FillBuffer(fn, def, output_graph_def);
  });
}

const char* TF_OperationName(TF_Operation* oper) { return oper ? oper->node->name().c_str() : nullptr; }
const char* TF_OperationOpType(TF_Operation* oper) { return oper ? oper->node->op().c_str() : nullptr; }
const char* TF_OperationDevice(TF_Operation* oper) { return oper ? oper->node->requested_device().c_str() : nullptr; }
int TF_OperationNumOutputs(TF_Operation* oper) { return oper ? oper->node->num_outputs() : 0; }
int TF_OperationNumInputs(TF_Operation* oper) { return oper ? oper->node->num_inputs() : 0; }

TF_DataType TF_OperationOutputType(TF_Output oper_out) {
  if (oper_out.oper == nullptr || oper_out.index < 0 || oper_out.index >= oper_out.oper->node->num_outputs()) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(static_cast<int>(oper_out.oper->node->output_type(oper_out.index)));
}

// ---- Sessions ----

TF_SessionOptions* TF_NewSessionOptions(void) { return new (std::nothrow) TF_SessionOptions; }
void TF_DeleteSessionOptions(TF_SessionOptions* options) { delete options; }

void TF_SetTarget(TF_SessionOptions* options, const char* target) {
  if (options == nullptr) return;
  Call(kNoStatus, "TF_SetTarget", [&]() -> Status {
    options->options.target = target ? target : "";
    return Status::OK();
  });
}

void TF_SetConfig(TF_SessionOptions* options, const void* proto, size_t proto_len, TF_Status* status) {
  static const char* fn = "TF_SetConfig";
  Call(status, fn, [&]() -> Status {
    if (options == nullptr) return NullArgument(fn, "options");
    graphrt::proto::ConfigProto c;
    GR_RETURN_IF_ERROR(ParseProto(fn, proto, proto_len, "config", &c));
    // Swap, not a move assignment: clang emits that one here, and the
    // version script would leave it in the dynamic symbol table.
    options->options.config.Swap(&c);
    return Status::OK();
  });
}

TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts, TF_Status* status) {
  static const char* fn = "TF_NewSession";
  TF_Session* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    auto s = std::make_unique<TF_Session>();
    graphrt::distributed::RegisterGrpcSessionFactory();  // TF_SetTarget("grpc://...")
    GR_RETURN_IF_ERROR(graphrt::NewSession(opts ? opts->options : graphrt::SessionOptions(), &s->owned));
    s->session = s->owned.get();
    s->graph = graph;
    std::lock_guard<std::mutex> l(graph->mu);
    ++graph->sessions;
    result = s.release();
    return Status::OK();
  });
  return result;
}

void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
                   TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                   TF_Tensor** output_values, int noutputs, const TF_Operation* const* target_opers, int ntargets,
                   TF_Buffer* run_metadata, TF_Status* status) {
  static const char* fn = "TF_SessionRun";
  Call(status, fn, [&]() -> Status {
    if (noutputs < 0 || ninputs < 0 || ntargets < 0) return errors::InvalidArgument(fn, ": a count is negative");
    if (noutputs > 0 && (outputs == nullptr || output_values == nullptr)) return NullArgument(fn, "outputs");
    for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
    if (session == nullptr) return NullArgument(fn, "session");
    if (ninputs > 0 && (inputs == nullptr || input_values == nullptr)) return NullArgument(fn, "inputs");
    if (ntargets > 0 && target_opers == nullptr) return NullArgument(fn, "target_opers");
    graphrt::proto::RunOptions opts;
    GR_RETURN_IF_ERROR(BufferArguments(fn, run_options, &opts, run_metadata, "run_metadata"));
    {
      std::lock_guard<std::mutex> l(session->extend_mu);
      GR_RETURN_IF_ERROR(ExtendSession(session));
    }
    std::vector<std::pair<std::string, graphrt::Tensor>> feeds(ninputs);
    for (int i = 0; i < ninputs; ++i) {
      GR_RETURN_IF_ERROR(TensorName(fn, session, "inputs", i, inputs[i], &feeds[i].first));
      if (input_values[i] == nullptr) return errors::InvalidArgument(fn, ": input_values[", i, "] is NULL");
      const graphrt::DataType want = graphrt::BaseType(inputs[i].oper->node->output_type(inputs[i].index));
      const graphrt::DataType got = input_values[i]->tensor.dtype();
      if (got != want) {
        return errors::InvalidArgument(fn, ": input '", feeds[i].first, "' is ", graphrt::DataTypeString(want),
                                       " but the tensor fed is ", graphrt::DataTypeString(got));
      }
      feeds[i].second = input_values[i]->tensor;
    }
    std::vector<std::string> fetches(noutputs);
    for (int i = 0; i < noutputs; ++i) GR_RETURN_IF_ERROR(TensorName(fn, session, "outputs", i, outputs[i], &fetches[i]));
    std::vector<std::string> targets(ntargets);
    for (int i = 0; i < ntargets; ++i) {
      GR_RETURN_IF_ERROR(CheckInGraph(fn, session, "target_opers", i, target_opers[i]));
      targets[i] = target_opers[i]->node->name();
    }
    std::vector<graphrt::Tensor> results;
    graphrt::proto::RunMetadata metadata;
    GR_RETURN_IF_ERROR(
        session->session->Run(opts, feeds, fetches, targets, &results, run_metadata ? &metadata : nullptr));
    if (static_cast<int>(results.size()) != noutputs) {
      return errors::Internal(fn, ": the run returned ", results.size(), " tensors for ", noutputs, " outputs");
    }
    if (run_metadata != nullptr) GR_RETURN_IF_ERROR(FillBuffer(fn, metadata, run_metadata));
    // All or nothing: wrap every result before handing any out.
    std::vector<std::unique_ptr<TF_Tensor>> made;
    made.reserve(noutputs);
    for (auto& t : results) made.push_back(std::make_unique<TF_Tensor>(TF_Tensor{std::move(t)}));
    for (int i = 0; i < noutputs; ++i) output_values[i] = made[i].release();
    return Status::OK();
  });
}

void TF_CloseSession(TF_Session* session, TF_Status* status) {
  static const char* fn = "TF_CloseSession";
  Call(status, fn, [&]() -> Status {
    if (session == nullptr) return NullArgument(fn, "session");
    return session->session->Close();
  });
}

void TF_DeleteSession(TF_Session* session, TF_Status* status) {
  static const char* fn = "TF_DeleteSession";
  Call(status, fn, [&]() -> Status {
    if (session == nullptr) return Status::OK();
    const Status closed = session->session->Close();
    TF_Graph* graph = session->graph;
    delete session;
    bool free_graph = false;
    {
      std::lock_guard<std::mutex> l(graph->mu);
      free_graph = --graph->sessions == 0 && graph->delete_requested;
    }
    if (free_graph) delete graph;
    return closed;
  });
}

TF_Session* TF_LoadSessionFromSavedModel(const TF_SessionOptions* session_options, const TF_Buffer* run_options,
                                         const char* export_dir, const char* const* tags, int tags_len,
                                         TF_Graph* graph, TF_Buffer* meta_graph_def, TF_Status* status) {
  static const char* fn = "TF_LoadSessionFromSavedModel";
  TF_Session* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (export_dir == nullptr) return NullArgument(fn, "export_dir");
    if (graph == nullptr) return NullArgument(fn, "graph");
    if (tags_len < 0) return errors::InvalidArgument(fn, ": tags_len is negative (", tags_len, ")");
    if (tags_len > 0 && tags == nullptr) return NullArgument(fn, "tags");
    std::set<std::string> tag_set;
    for (int i = 0; i < tags_len; ++i) {
      if (tags[i] == nullptr) return errors::InvalidArgument(fn, ": tags[", i, "] is NULL");
      tag_set.insert(tags[i]);
    }
    graphrt::proto::RunOptions opts;
    GR_RETURN_IF_ERROR(BufferArguments(fn, run_options, &opts, meta_graph_def, "meta_graph_def"));
    {
      std::lock_guard<std::mutex> l(graph->mu);
      if (!graph->ops.empty()) return errors::InvalidArgument(fn, ": the graph must be empty (it has ",
                                                              graph->ops.size(), " operations)");
    }
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    auto s = std::make_unique<TF_Session>();
    s->bundle = std::make_unique<graphrt::SavedModelBundle>();
    GR_RETURN_IF_ERROR(graphrt::LoadSavedModel(session_options ? session_options->options : graphrt::SessionOptions(),
                                               opts, export_dir, tag_set, s->bundle.get()));
    std::lock_guard<std::mutex> l(graph->mu);
    if (!graph->ops.empty()) return errors::FailedPrecondition(fn, ": the graph was imported into while loading");
    GR_RETURN_IF_ERROR(graphrt::tf_c::Import(graph, s->bundle->meta_graph_def.graph_def()).WithContext(std::string(fn) + ": "));
    if (meta_graph_def != nullptr) {
      const Status st = FillBuffer(fn, s->bundle->meta_graph_def, meta_graph_def);
      if (!st.ok()) {  // leave the graph empty, as on any other failure
        ResetGraph(graph);
        return st;
      }
    }
    // The loader created the session from that graph.
    s->session = s->bundle->session.get();
    s->graph = graph;
    s->created = true;
    s->applied = graph->additions.size();
    ++graph->sessions;
    result = s.release();
    return Status::OK();
  });
  return result;
}

// ---- Op libraries ----

TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status) {
  static const char* fn = "TF_LoadLibrary";
  TF_Library* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (library_filename == nullptr) return NullArgument(fn, "library_filename");
    graphrt::Runtime& rt = graphrt::Runtime::Global();
    graphrt::PluginInfo plugin;
    GR_RETURN_IF_ERROR(rt.LoadPlugin(library_filename, &plugin));
    graphrt::proto::OpList list;
    for (const std::string& op : plugin.ops) {
      const graphrt::proto::OpDef* def = nullptr;
      GR_RETURN_IF_ERROR(rt.ops().LookUpOpDef(op, &def));
      *list.add_op() = *def;
    }
    auto lib = std::make_unique<TF_Library>();
    if (!list.SerializeToString(&lib->op_list)) return errors::Internal(fn, ": could not serialize the OpList");
    lib->buffer = TF_Buffer{lib->op_list.data(), lib->op_list.size(), nullptr};
    result = lib.release();
    return Status::OK();
  });
  return result;
}

TF_Buffer TF_GetOpList(TF_Library* lib_handle) { return lib_handle ? lib_handle->buffer : TF_Buffer{}; }

void TF_DeleteLibraryHandle(TF_Library* lib_handle) { delete lib_handle; }

}  // extern "C"
