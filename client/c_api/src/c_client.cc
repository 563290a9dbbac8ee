// The C client API (graphrt/c_client.h) over the C++ Session, Runtime and
// SavedModel APIs. Every entry point catches C++ exceptions and answers a
// status instead, so none crosses into C.
#include "graphrt/c_client.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "c_api_internal.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/model.h"
#include "graphrt/core/device.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"

namespace {

using graphrt::Code;
using graphrt::Status;
namespace errors = graphrt::errors;

// The header's enums repeat the core's numbers (TensorFlow's); keep them equal.
#define GRC_SAME_(a, b) static_assert(static_cast<int>(a) == static_cast<int>(b), #a " != " #b)
GRC_SAME_(GRC_OK, GR_OK);
GRC_SAME_(GRC_CANCELLED, GR_CANCELLED);
GRC_SAME_(GRC_INVALID_ARGUMENT, GR_INVALID_ARGUMENT);
GRC_SAME_(GRC_NOT_FOUND, GR_NOT_FOUND);
GRC_SAME_(GRC_FAILED_PRECONDITION, GR_FAILED_PRECONDITION);
GRC_SAME_(GRC_UNAUTHENTICATED, GR_UNAUTHENTICATED);
GRC_SAME_(GRC_FLOAT, GR_FLOAT);
GRC_SAME_(GRC_STRING, GR_STRING);
GRC_SAME_(GRC_BOOL, GR_BOOL);
GRC_SAME_(GRC_HALF, GR_HALF);
GRC_SAME_(GRC_RESOURCE, GR_RESOURCE);
GRC_SAME_(GRC_UINT64, GR_UINT64);
GRC_SAME_(GRC_FLOAT_REF, GR_FLOAT_REF);
#undef GRC_SAME_

}  // namespace

struct GRC_Status {
  GRC_Code code = GRC_OK;
  std::string message;
};

struct GRC_Tensor {
  graphrt::Tensor tensor;
};

struct GRC_Buffer {
  std::string bytes;
};

struct GRC_Graph {
  graphrt::proto::GraphDef def;
};

struct GRC_SessionOptions {
  graphrt::SessionOptions options;
};

struct GRC_Session {
  std::unique_ptr<graphrt::Session> owned;  // null for a SavedModel's session
  graphrt::Session* session = nullptr;
};

namespace {

struct Spec {
  std::string key;
  std::string name;
  int dtype = 0;
  int rank = -1;
  std::vector<int64_t> dims;
};

}  // namespace

struct GRC_Signature {
  std::string method_name;
  std::vector<Spec> inputs;   // sorted by key
  std::vector<Spec> outputs;  // sorted by key
};

struct GRC_SavedModel {
  graphrt::SavedModelBundle bundle;
  GRC_Session session;  // borrows bundle.session
  std::vector<std::string> keys;
  std::map<std::string, GRC_Signature> signatures;
};

struct GRC_DeviceList {
  struct Info {
    std::string name, type, plugin, description;
    int64_t memory_bytes = -1;
  };
  std::vector<Info> devices;
};

namespace {

using graphrt::c_api_internal::Call;
using graphrt::c_api_internal::LoadDefaultPlugins;
using graphrt::c_api_internal::NullArgument;
using graphrt::c_api_internal::ParseProto;
using graphrt::c_api_internal::ShapeOf;

Status DataTypeOf(const char* fn, GRC_DataType dtype, graphrt::DataType* out) {
  return graphrt::ValidateDataType(static_cast<int64_t>(dtype), /*allow_ref=*/false,
                                   std::string(fn) + " dtype", out);
}

GRC_Tensor* Wrap(graphrt::Tensor t) {
  auto* out = new GRC_Tensor;
  out->tensor = std::move(t);
  return out;
}

Status CheckNames(const char* fn, const char* what, const char* const* names, int n) {
  if (n < 0) return errors::InvalidArgument(fn, ": the number of ", what, " is negative (", n, ")");
  if (n > 0 && names == nullptr) return errors::InvalidArgument(fn, ": ", what, " is NULL");
  for (int i = 0; i < n; ++i) {
    if (names[i] == nullptr) return errors::InvalidArgument(fn, ": ", what, "[", i, "] is NULL");
  }
  return Status::OK();
}

Status Feeds(const char* fn, const char* const* names, GRC_Tensor* const* tensors, int n,
             std::vector<std::pair<std::string, graphrt::Tensor>>* out) {
  GR_RETURN_IF_ERROR(CheckNames(fn, "input names", names, n));
  if (n > 0 && tensors == nullptr) return NullArgument(fn, "inputs");
  out->reserve(n);
  for (int i = 0; i < n; ++i) {
    if (tensors[i] == nullptr) return errors::InvalidArgument(fn, ": input ", i, " ('", names[i], "') is NULL");
    out->emplace_back(names[i], tensors[i]->tensor);
  }
  return Status::OK();
}

// Hands the run's results to the caller's array (all or nothing).
Status Hand(const char* fn, std::vector<graphrt::Tensor>* results, GRC_Tensor** outputs, int n) {
  if (static_cast<int>(results->size()) != n) {
    return errors::Internal(fn, ": the run returned ", results->size(), " tensors for ", n, " outputs");
  }
  std::vector<std::unique_ptr<GRC_Tensor>> made;
  made.reserve(n);
  for (auto& t : *results) made.push_back(std::unique_ptr<GRC_Tensor>(Wrap(std::move(t))));
  for (int i = 0; i < n; ++i) outputs[i] = made[i].release();
  return Status::OK();
}

Status PrepareOutputs(const char* fn, const char* const* names, GRC_Tensor** outputs, int n, const char* what) {
  GR_RETURN_IF_ERROR(CheckNames(fn, what, names, n));
  if (n > 0 && outputs == nullptr) return NullArgument(fn, "outputs");
  for (int i = 0; i < n; ++i) outputs[i] = nullptr;
  return Status::OK();
}

void FillSpec(const Spec& s, GRC_TensorSpec* out) {
  const size_t n = out->struct_size;
  if (GRC_SIZE_THROUGH(GRC_TensorSpec, key) <= n) out->key = s.key.c_str();
  if (GRC_SIZE_THROUGH(GRC_TensorSpec, name) <= n) out->name = s.name.c_str();
  if (GRC_SIZE_THROUGH(GRC_TensorSpec, dtype) <= n) out->dtype = static_cast<GRC_DataType>(s.dtype);
  if (GRC_SIZE_THROUGH(GRC_TensorSpec, num_dims) <= n) out->num_dims = s.rank;
  if (GRC_SIZE_THROUGH(GRC_TensorSpec, dims) <= n) out->dims = s.dims.empty() ? nullptr : s.dims.data();
}

std::vector<Spec> Specs(const google::protobuf::Map<std::string, graphrt::proto::TensorInfo>& m) {
  std::vector<Spec> out;
  for (const auto& [key, info] : m) {
    Spec s;
    s.key = key;
    // Sparse tensors are named by their values tensor.
    s.name = info.has_coo_sparse() ? info.coo_sparse().values_tensor_name() : info.name();
    s.dtype = static_cast<int>(info.dtype());
    if (info.has_tensor_shape() && !info.tensor_shape().unknown_rank()) {
      s.rank = info.tensor_shape().dim_size();
      for (const auto& d : info.tensor_shape().dim()) s.dims.push_back(d.size() < 0 ? -1 : d.size());
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const Spec& a, const Spec& b) { return a.key < b.key; });
  return out;
}

bool SignatureSpec(const std::vector<Spec>& specs, const char* fn, int i, GRC_TensorSpec* spec, GRC_Status* status) {
  return Call(status, fn, [&]() -> Status {
    if (spec == nullptr) return NullArgument(fn, "spec");
    if (i < 0 || i >= static_cast<int>(specs.size())) {
      return errors::OutOfRange(fn, ": index ", i, " is outside [0, ", specs.size(), ")");
    }
    FillSpec(specs[i], spec);
    return Status::OK();
  });
}

const graphrt::SessionOptions& OptionsOf(const GRC_SessionOptions* o) {
  static const graphrt::SessionOptions* const kDefault = new graphrt::SessionOptions();
  return o ? o->options : *kDefault;
}

}  // namespace

extern "C" {

void GRC_Version(int* major, int* minor) {
  if (major) *major = GRC_API_MAJOR;
  if (minor) *minor = GRC_API_MINOR;
}

// ---- Status ----

GRC_Status* GRC_NewStatus(void) { return new (std::nothrow) GRC_Status; }
void GRC_DeleteStatus(GRC_Status* s) { delete s; }
GRC_Code GRC_GetCode(const GRC_Status* s) { return s ? s->code : GRC_OK; }
const char* GRC_Message(const GRC_Status* s) { return s ? s->message.c_str() : ""; }

void GRC_SetStatus(GRC_Status* s, GRC_Code code, const char* message) {
  graphrt::c_api_internal::SetCodeAndMessage(s, code, message, GRC_OK);
}

const char* GRC_CodeName(GRC_Code code) {
  if (code < GRC_OK || code > GRC_UNAUTHENTICATED) return "UNKNOWN_CODE";
  return graphrt::CodeName(static_cast<Code>(code));
}

// ---- Tensors ----

size_t GRC_DataTypeSize(GRC_DataType dtype) { return graphrt::c_api_internal::DataTypeSizeOfValue(dtype); }

GRC_Tensor* GRC_NewTensor(GRC_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
                          GRC_Deallocator deallocator, void* deallocator_arg, GRC_Status* status) {
  static const char* fn = "GRC_NewTensor";
  GRC_Tensor* result = nullptr;
  Call(status, fn, [&]() -> Status {
    graphrt::DataType dt;
    GR_RETURN_IF_ERROR(DataTypeOf(fn, dtype, &dt));
    if (!graphrt::DataTypeIsPod(dt)) {
      return errors::InvalidArgument(fn, ": dtype ", graphrt::DataTypeString(dt),
                                     " has no fixed-size elements (use GRC_NewStringTensor for strings)");
    }
    graphrt::TensorShape shape;
    GR_RETURN_IF_ERROR(ShapeOf(fn, dims, num_dims, &shape));
    graphrt::Tensor t;
    GR_RETURN_IF_ERROR(graphrt::c_api_internal::TensorOverCallerMemory(fn, dt, shape, data, len, deallocator,
                                                                       deallocator_arg, &t));
    result = Wrap(std::move(t));
    return Status::OK();
  });
  return result;
}

GRC_Tensor* GRC_NewAllocatedTensor(GRC_DataType dtype, const int64_t* dims, int num_dims, GRC_Status* status) {
  static const char* fn = "GRC_NewAllocatedTensor";
  GRC_Tensor* result = nullptr;
  Call(status, fn, [&]() -> Status {
    graphrt::DataType dt;
    GR_RETURN_IF_ERROR(DataTypeOf(fn, dtype, &dt));
    if (!graphrt::DataTypeIsPod(dt) && dt != GR_STRING) {
      return errors::InvalidArgument(fn, ": cannot make a tensor of dtype ", graphrt::DataTypeString(dt));
    }
    graphrt::TensorShape shape;
    GR_RETURN_IF_ERROR(ShapeOf(fn, dims, num_dims, &shape));
    graphrt::Tensor t;
    GR_RETURN_IF_ERROR(graphrt::Tensor::Allocate(graphrt::HostAllocator(), dt, shape, &t));
    if (dt != GR_STRING && t.TotalBytes() > 0) std::memset(t.raw_data(), 0, t.TotalBytes());
    result = Wrap(std::move(t));
    return Status::OK();
  });
  return result;
}

GRC_Tensor* GRC_NewStringTensor(const int64_t* dims, int num_dims, const char* const* strings,
                                const size_t* lengths, GRC_Status* status) {
  static const char* fn = "GRC_NewStringTensor";
  GRC_Tensor* result = nullptr;
  Call(status, fn, [&]() -> Status {
    graphrt::TensorShape shape;
    GR_RETURN_IF_ERROR(ShapeOf(fn, dims, num_dims, &shape));
    const int64_t n = shape.num_elements();
    if (n > 0 && (strings == nullptr || lengths == nullptr)) return NullArgument(fn, "strings or lengths");
    graphrt::Tensor t;
    GR_RETURN_IF_ERROR(graphrt::Tensor::Allocate(graphrt::HostAllocator(), GR_STRING, shape, &t));
    for (int64_t i = 0; i < n; ++i) {
      if (strings[i] == nullptr && lengths[i] > 0) return errors::InvalidArgument(fn, ": strings[", i, "] is NULL");
      t.set_string(i, std::string_view(strings[i] ? strings[i] : "", lengths[i]));
    }
    result = Wrap(std::move(t));
    return Status::OK();
  });
  return result;
}

void GRC_DeleteTensor(GRC_Tensor* t) { delete t; }

GRC_DataType GRC_TensorType(const GRC_Tensor* t) {
  return static_cast<GRC_DataType>(t ? static_cast<int>(t->tensor.dtype()) : 0);
}
int GRC_TensorNumDims(const GRC_Tensor* t) { return graphrt::c_api_internal::TensorDims(t ? &t->tensor : nullptr); }
int64_t GRC_TensorDim(const GRC_Tensor* t, int i) {
  return graphrt::c_api_internal::TensorDim(t ? &t->tensor : nullptr, i);
}
int64_t GRC_TensorElementCount(const GRC_Tensor* t) {
  return graphrt::c_api_internal::TensorElements(t ? &t->tensor : nullptr);
}
size_t GRC_TensorByteSize(const GRC_Tensor* t) {
  return graphrt::c_api_internal::TensorBytes(t ? &t->tensor : nullptr);
}
void* GRC_TensorData(const GRC_Tensor* t) { return graphrt::c_api_internal::TensorData(t ? &t->tensor : nullptr); }

namespace {
Status StringIndex(const char* fn, const GRC_Tensor* t, int64_t index) {
  if (t == nullptr) return NullArgument(fn, "tensor");
  if (t->tensor.dtype() != GR_STRING) {
    return errors::InvalidArgument(fn, ": the tensor is ", graphrt::DataTypeString(t->tensor.dtype()),
                                   ", not string");
  }
  if (index < 0 || index >= t->tensor.NumElements()) {
    return errors::OutOfRange(fn, ": index ", index, " is outside [0, ", t->tensor.NumElements(), ")");
  }
  return Status::OK();
}
}  // namespace

int GRC_TensorStringAt(const GRC_Tensor* t, int64_t index, const char** data, size_t* length, GRC_Status* status) {
  static const char* fn = "GRC_TensorStringAt";
  return Call(status, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(StringIndex(fn, t, index));
    if (data == nullptr || length == nullptr) return NullArgument(fn, "data or length");
    const std::string_view s = t->tensor.string_at(index);
    *data = s.data() ? s.data() : "";
    *length = s.size();
    return Status::OK();
  });
}

int GRC_TensorSetString(GRC_Tensor* t, int64_t index, const char* data, size_t length, GRC_Status* status) {
  static const char* fn = "GRC_TensorSetString";
  return Call(status, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(StringIndex(fn, t, index));
    if (data == nullptr && length > 0) return NullArgument(fn, "data");
    t->tensor.set_string(index, std::string_view(data ? data : "", length));
    return Status::OK();
  });
}

// ---- Buffers ----

GRC_Buffer* GRC_NewBuffer(void) { return new (std::nothrow) GRC_Buffer; }
void GRC_DeleteBuffer(GRC_Buffer* b) { delete b; }
const void* GRC_BufferData(const GRC_Buffer* b) { return b ? b->bytes.data() : nullptr; }
size_t GRC_BufferLength(const GRC_Buffer* b) { return b ? b->bytes.size() : 0; }

// ---- Graphs ----

GRC_Graph* GRC_NewGraphFromBinary(const void* data, size_t len, GRC_Status* status) {
  static const char* fn = "GRC_NewGraphFromBinary";
  GRC_Graph* result = nullptr;
  Call(status, fn, [&]() -> Status {
    auto g = std::make_unique<GRC_Graph>();
    GR_RETURN_IF_ERROR(ParseProto(fn, data, len, "data", &g->def));
    result = g.release();
    return Status::OK();
  });
  return result;
}

GRC_Graph* GRC_NewGraphFromText(const char* text, size_t len, GRC_Status* status) {
  static const char* fn = "GRC_NewGraphFromText";
  GRC_Graph* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (text == nullptr && len > 0) return NullArgument(fn, "text");
    auto g = std::make_unique<GRC_Graph>();
    GR_RETURN_IF_ERROR(graphrt::ParseGraphDefText(std::string(text ? text : "", len), &g->def)
                           .WithContext(std::string(fn) + ": "));
    result = g.release();
    return Status::OK();
  });
  return result;
}

GRC_Graph* GRC_NewGraphFromFile(const char* path, GRC_Status* status) {
  static const char* fn = "GRC_NewGraphFromFile";
  GRC_Graph* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (path == nullptr) return NullArgument(fn, "path");
    auto g = std::make_unique<GRC_Graph>();
    GR_RETURN_IF_ERROR(graphrt::ReadGraphDefFromFile(path, &g->def));
    result = g.release();
    return Status::OK();
  });
  return result;
}

void GRC_DeleteGraph(GRC_Graph* g) { delete g; }
int GRC_GraphNumNodes(const GRC_Graph* g) { return g ? g->def.node_size() : 0; }
const char* GRC_GraphNodeName(const GRC_Graph* g, int i) {
  if (g == nullptr || i < 0 || i >= g->def.node_size()) return nullptr;
  return g->def.node(i).name().c_str();
}
const char* GRC_GraphNodeOp(const GRC_Graph* g, int i) {
  if (g == nullptr || i < 0 || i >= g->def.node_size()) return nullptr;
  return g->def.node(i).op().c_str();
}

// ---- Sessions ----

GRC_SessionOptions* GRC_NewSessionOptions(void) { return new (std::nothrow) GRC_SessionOptions; }
void GRC_DeleteSessionOptions(GRC_SessionOptions* o) { delete o; }

int GRC_SetConfig(GRC_SessionOptions* o, const void* config_proto, size_t len, GRC_Status* status) {
  static const char* fn = "GRC_SetConfig";
  return Call(status, fn, [&]() -> Status {
    if (o == nullptr) return NullArgument(fn, "options");
    graphrt::proto::ConfigProto c;
    GR_RETURN_IF_ERROR(ParseProto(fn, config_proto, len, "config_proto", &c));
    o->options.config = std::move(c);
    return Status::OK();
  });
}

int GRC_SetThreads(GRC_SessionOptions* o, int intra_op_threads, int inter_op_threads, GRC_Status* status) {
  static const char* fn = "GRC_SetThreads";
  return Call(status, fn, [&]() -> Status {
    if (o == nullptr) return NullArgument(fn, "options");
    if (intra_op_threads < 0 || inter_op_threads < 0) {
      return errors::InvalidArgument(fn, ": thread counts must be >= 0 (got ", intra_op_threads, ", ",
                                     inter_op_threads, ")");
    }
    o->options.config.set_intra_op_parallelism_threads(intra_op_threads);
    o->options.config.set_inter_op_parallelism_threads(inter_op_threads);
    return Status::OK();
  });
}

int GRC_AllowDirectory(GRC_SessionOptions* o, const char* dir, GRC_Status* status) {
  static const char* fn = "GRC_AllowDirectory";
  return Call(status, fn, [&]() -> Status {
    if (o == nullptr) return NullArgument(fn, "options");
    if (dir == nullptr) return NullArgument(fn, "dir");
    if (dir[0] == '\0') return errors::InvalidArgument(fn, ": dir is empty");
    o->options.config.mutable_graphrt_options()->add_allowed_directories(dir);
    return Status::OK();
  });
}

GRC_Session* GRC_NewSession(const GRC_Graph* graph, const GRC_SessionOptions* options, GRC_Status* status) {
  static const char* fn = "GRC_NewSession";
  GRC_Session* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (graph == nullptr) return NullArgument(fn, "graph");
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    auto s = std::make_unique<GRC_Session>();
    GR_RETURN_IF_ERROR(graphrt::NewSession(OptionsOf(options), &s->owned));
    GR_RETURN_IF_ERROR(s->owned->Create(graph->def));
    s->session = s->owned.get();
    result = s.release();
    return Status::OK();
  });
  return result;
}

int GRC_SessionRun(GRC_Session* session, const void* run_options, size_t run_options_len,
                   const char* const* input_names, GRC_Tensor* const* inputs, int num_inputs,
                   const char* const* output_names, GRC_Tensor** outputs, int num_outputs,
                   const char* const* target_names, int num_targets, GRC_Buffer* run_metadata,
                   GRC_Status* status) {
  static const char* fn = "GRC_SessionRun";
  return Call(status, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(PrepareOutputs(fn, output_names, outputs, num_outputs, "output names"));
    if (session == nullptr || session->session == nullptr) return NullArgument(fn, "session");
    std::vector<std::pair<std::string, graphrt::Tensor>> feeds;
    GR_RETURN_IF_ERROR(Feeds(fn, input_names, inputs, num_inputs, &feeds));
    GR_RETURN_IF_ERROR(CheckNames(fn, "target names", target_names, num_targets));
    graphrt::proto::RunOptions opts;
    GR_RETURN_IF_ERROR(ParseProto(fn, run_options, run_options_len, "run_options", &opts));
    const std::vector<std::string> fetches(output_names, output_names + num_outputs);
    const std::vector<std::string> targets(target_names, target_names + num_targets);
    std::vector<graphrt::Tensor> results;
    graphrt::proto::RunMetadata metadata;
    GR_RETURN_IF_ERROR(session->session->Run(opts, feeds, fetches, targets, &results,
                                             run_metadata ? &metadata : nullptr));
    if (run_metadata != nullptr) {
      std::string bytes;
      if (!metadata.SerializeToString(&bytes)) return errors::Internal(fn, ": could not serialize the RunMetadata");
      run_metadata->bytes = std::move(bytes);
    }
    return Hand(fn, &results, outputs, num_outputs);
  });
}

int GRC_CloseSession(GRC_Session* session, GRC_Status* status) {
  static const char* fn = "GRC_CloseSession";
  return Call(status, fn, [&]() -> Status {
    if (session == nullptr || session->session == nullptr) return NullArgument(fn, "session");
    return session->session->Close();
  });
}

void GRC_DeleteSession(GRC_Session* session) {
  if (session == nullptr || session->owned == nullptr) return;  // a SavedModel's: the model owns it
  session->owned->Close().IgnoreError();  // the destructor would close too; failures have no one to go to
  delete session;
}

// ---- SavedModels ----

GRC_SavedModel* GRC_LoadSavedModel(const char* export_dir, const char* const* tags, int num_tags,
                                   const GRC_SessionOptions* options, GRC_Status* status) {
  static const char* fn = "GRC_LoadSavedModel";
  GRC_SavedModel* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (export_dir == nullptr) return NullArgument(fn, "export_dir");
    GR_RETURN_IF_ERROR(CheckNames(fn, "tags", tags, num_tags));
    std::set<std::string> tag_set(tags, tags + num_tags);
    if (tag_set.empty()) tag_set.insert("serve");
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    auto m = std::make_unique<GRC_SavedModel>();
    GR_RETURN_IF_ERROR(graphrt::LoadSavedModel(OptionsOf(options), export_dir, tag_set, &m->bundle));
    m->session.session = m->bundle.session.get();
    for (const auto& [key, def] : m->bundle.meta_graph_def.signature_def()) {
      GRC_Signature sig;
      sig.method_name = def.method_name();
      sig.inputs = Specs(def.inputs());
      sig.outputs = Specs(def.outputs());
      m->signatures.emplace(key, std::move(sig));
      m->keys.push_back(key);
    }
    std::sort(m->keys.begin(), m->keys.end());
    result = m.release();
    return Status::OK();
  });
  return result;
}

void GRC_DeleteSavedModel(GRC_SavedModel* model) {
  if (model == nullptr) return;
  if (model->bundle.session) model->bundle.session->Close().IgnoreError();
  delete model;
}

GRC_Session* GRC_SavedModelSession(GRC_SavedModel* model) { return model ? &model->session : nullptr; }

int GRC_SavedModelNumSignatures(const GRC_SavedModel* model) {
  return model ? static_cast<int>(model->keys.size()) : 0;
}

const char* GRC_SavedModelSignatureKey(const GRC_SavedModel* model, int i) {
  if (model == nullptr || i < 0 || i >= static_cast<int>(model->keys.size())) return nullptr;
  return model->keys[i].c_str();
}

const GRC_Signature* GRC_SavedModelSignature(const GRC_SavedModel* model, const char* key, GRC_Status* status) {
  static const char* fn = "GRC_SavedModelSignature";
  const GRC_Signature* result = nullptr;
  Call(status, fn, [&]() -> Status {
    if (model == nullptr) return NullArgument(fn, "model");
    if (key == nullptr) return NullArgument(fn, "key");
    const graphrt::proto::SignatureDef* def = nullptr;
    GR_RETURN_IF_ERROR(model->bundle.GetSignature(key, &def));  // its NotFound lists the keys
    auto it = model->signatures.find(key);
    if (it == model->signatures.end()) return errors::Internal(fn, ": signature '", key, "' was not indexed");
    result = &it->second;
    return Status::OK();
  });
  return result;
}

const char* GRC_SignatureMethodName(const GRC_Signature* sig) { return sig ? sig->method_name.c_str() : nullptr; }
int GRC_SignatureNumInputs(const GRC_Signature* sig) { return sig ? static_cast<int>(sig->inputs.size()) : 0; }
int GRC_SignatureNumOutputs(const GRC_Signature* sig) { return sig ? static_cast<int>(sig->outputs.size()) : 0; }

int GRC_SignatureInput(const GRC_Signature* sig, int i, GRC_TensorSpec* spec, GRC_Status* status) {
  if (sig == nullptr) return Call(status, "GRC_SignatureInput", [] { return NullArgument("GRC_SignatureInput", "sig"); });
  return SignatureSpec(sig->inputs, "GRC_SignatureInput", i, spec, status);
}

int GRC_SignatureOutput(const GRC_Signature* sig, int i, GRC_TensorSpec* spec, GRC_Status* status) {
  if (sig == nullptr) return Call(status, "GRC_SignatureOutput", [] { return NullArgument("GRC_SignatureOutput", "sig"); });
  return SignatureSpec(sig->outputs, "GRC_SignatureOutput", i, spec, status);
}

int GRC_SavedModelRunSignature(GRC_SavedModel* model, const char* key, const char* const* input_keys,
                               GRC_Tensor* const* inputs, int num_inputs, const char* const* output_keys,
                               GRC_Tensor** outputs, int num_outputs, GRC_Status* status) {
  static const char* fn = "GRC_SavedModelRunSignature";
  return Call(status, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(PrepareOutputs(fn, output_keys, outputs, num_outputs, "output keys"));
    if (model == nullptr) return NullArgument(fn, "model");
    if (key == nullptr) return NullArgument(fn, "key");
    // The C++ API reads no keys as "every output"; here the caller must say
    // which, since it gives the slots.
    if (num_outputs == 0) return errors::InvalidArgument(fn, ": signature '", key, "': no output keys given");
    std::vector<std::pair<std::string, graphrt::Tensor>> feeds;
    GR_RETURN_IF_ERROR(Feeds(fn, input_keys, inputs, num_inputs, &feeds));
    const std::vector<std::string> keys(output_keys, output_keys + num_outputs);
    std::vector<graphrt::Tensor> results;
    GR_RETURN_IF_ERROR(model->bundle.RunSignature(key, feeds, keys, &results));
    return Hand(fn, &results, outputs, num_outputs);
  });
}

// ---- Plugins and devices ----

int GRC_LoadDefaultPlugins(GRC_Status* status) {
  return Call(status, "GRC_LoadDefaultPlugins", [] { return LoadDefaultPlugins(); });
}

int GRC_LoadPlugin(const char* path, GRC_Status* status) {
  static const char* fn = "GRC_LoadPlugin";
  return Call(status, fn, [&]() -> Status {
    if (path == nullptr) return NullArgument(fn, "path");
    return graphrt::Runtime::Global().LoadPlugin(path);
  });
}

GRC_DeviceList* GRC_NewDeviceList(GRC_Status* status) {
  static const char* fn = "GRC_NewDeviceList";
  GRC_DeviceList* result = nullptr;
  Call(status, fn, [&]() -> Status {
    GR_RETURN_IF_ERROR(LoadDefaultPlugins());
    std::vector<graphrt::Device*> devices;
    GR_RETURN_IF_ERROR(graphrt::Runtime::Global().devices().GetDevices(&devices));
    auto list = std::make_unique<GRC_DeviceList>();
    for (graphrt::Device* d : devices) {
      GRC_DeviceList::Info info;
      info.name = d->name();
      info.type = d->type();
      info.plugin = d->plugin();
      info.description = d->description();
      int64_t total = 0, free = -1;
      // Memory is informational: a device that cannot say is listed as unknown.
      if (d->MemoryInfo(&total, &free).ok() && total > 0) info.memory_bytes = total;
      list->devices.push_back(std::move(info));
    }
    result = list.release();
    return Status::OK();
  });
  return result;
}

void GRC_DeleteDeviceList(GRC_DeviceList* list) { delete list; }
int GRC_DeviceListCount(const GRC_DeviceList* list) { return list ? static_cast<int>(list->devices.size()) : 0; }

int GRC_DeviceListGet(const GRC_DeviceList* list, int i, GRC_DeviceInfo* info, GRC_Status* status) {
  static const char* fn = "GRC_DeviceListGet";
  return Call(status, fn, [&]() -> Status {
    if (list == nullptr) return NullArgument(fn, "list");
    if (info == nullptr) return NullArgument(fn, "info");
    if (i < 0 || i >= static_cast<int>(list->devices.size())) {
      return errors::OutOfRange(fn, ": index ", i, " is outside [0, ", list->devices.size(), ")");
    }
    const GRC_DeviceList::Info& d = list->devices[i];
    const size_t n = info->struct_size;
    if (GRC_SIZE_THROUGH(GRC_DeviceInfo, name) <= n) info->name = d.name.c_str();
    if (GRC_SIZE_THROUGH(GRC_DeviceInfo, type) <= n) info->type = d.type.c_str();
    if (GRC_SIZE_THROUGH(GRC_DeviceInfo, plugin) <= n) info->plugin = d.plugin.c_str();
    if (GRC_SIZE_THROUGH(GRC_DeviceInfo, description) <= n) info->description = d.description.c_str();
    if (GRC_SIZE_THROUGH(GRC_DeviceInfo, memory_bytes) <= n) info->memory_bytes = d.memory_bytes;
    return Status::OK();
  });
}

}  // extern "C"
