#include "graphrt/model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "file_util.h"
#include "graphrt/client/graph_info.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "graphrt/shape_limits.h"

namespace graphrt {

struct Model::Loaded {
  SavedModelBundle bundle;
  std::string signature;
};

namespace {

Status LoadPlugins(const ModelOptions& options) {
  if (options.load_default_plugins)
    GR_RETURN_IF_ERROR(Runtime::Global().LoadDefaultPlugins().WithContext("loading the standard plugins"));
  for (const std::string& p : options.plugins) GR_RETURN_IF_ERROR(Runtime::Global().LoadPlugin(p));
  return Status::OK();
}

SessionOptions SessionOptionsFor(const ModelOptions& options) {
  SessionOptions so;
  if (options.threads > 0) {
    so.config.set_intra_op_parallelism_threads(options.threads);
    so.config.set_inter_op_parallelism_threads(options.threads);
  }
  return so;
}

std::string CanonicalTensor(const std::string& name) {
  return name.find(':') == std::string::npos ? name + ":0" : name;
}

Status SpecsOfSignature(const google::protobuf::Map<std::string, proto::TensorInfo>& infos,
                        std::vector<TensorSpec>* out) {
  std::vector<std::string> keys;
  for (const auto& [key, info] : infos) keys.push_back(key);
  std::sort(keys.begin(), keys.end());  // a stable order: the map's is not
  for (const std::string& key : keys) {
    const proto::TensorInfo& info = infos.at(key);
    TensorSpec spec;
    spec.name = key;
    spec.tensor = CanonicalTensor(info.name());
    GR_RETURN_IF_ERROR(ValidateDataType(info.dtype(), /*allow_ref=*/false, "signature key '" + key + "' dtype",
                                        &spec.dtype));
    if (info.has_tensor_shape())
      GR_RETURN_IF_ERROR(PartialTensorShape::FromProto(info.tensor_shape(), &spec.shape)
                             .WithContext("signature key '" + key + "' shape"));
    out->push_back(std::move(spec));
  }
  return Status::OK();
}

const proto::NodeDef* FindNode(const proto::GraphDef& def, const std::string& name) {
  for (const proto::NodeDef& n : def.node())
    if (n.name() == name) return &n;
  return nullptr;
}

// What a GraphDef says of its tensor `tensor` ("name:k"): the dtype and
// shape a Placeholder declares, else unknown (the session checks feeds and
// reports fetches' real types).
TensorSpec SpecOfGraphTensor(const proto::GraphDef& def, const std::string& tensor) {
  TensorSpec spec;
  spec.name = tensor;
  spec.tensor = CanonicalTensor(tensor);
  const std::string node = spec.tensor.substr(0, spec.tensor.rfind(':'));
  const proto::NodeDef* n = FindNode(def, node);
  if (n == nullptr) return spec;
  if (auto it = n->attr().find("dtype"); it != n->attr().end() && it->second.value_case() == proto::AttrValue::kType)
    ValidateDataType(it->second.type(), false, "", &spec.dtype).IgnoreError();
  else if (auto t = n->attr().find("T"); t != n->attr().end() && t->second.value_case() == proto::AttrValue::kType)
    ValidateDataType(t->second.type(), false, "", &spec.dtype).IgnoreError();
  if (auto it = n->attr().find("shape"); it != n->attr().end() && it->second.has_shape())
    PartialTensorShape::FromProto(it->second.shape(), &spec.shape).IgnoreError();
  return spec;
}

bool IsPlaceholder(const proto::NodeDef& n) {
  return n.op() == "Placeholder" || n.op() == "PlaceholderV2" || n.op() == "PlaceholderWithDefault";
}

}  // namespace

Model::Model() = default;

Model::~Model() {
  if (session_) session_->Close().IgnoreError();
  if (loaded_ && loaded_->bundle.session) loaded_->bundle.session->Close().IgnoreError();
}

Status Model::Load(const std::string& path, const ModelOptions& options, std::unique_ptr<Model>* out) {
  out->reset();
  GR_RETURN_IF_ERROR(LoadPlugins(options));
  std::unique_ptr<Model> m(new Model());
  if (client_internal::IsDirectory(path)) {
    auto loaded = std::make_unique<Loaded>();
    GR_RETURN_IF_ERROR(LoadSavedModel(SessionOptionsFor(options), path, options.tags, &loaded->bundle));
    const proto::SignatureDef* sig;
    GR_RETURN_IF_ERROR(loaded->bundle.GetSignature(options.signature, &sig));
    loaded->signature = options.signature;
    GR_RETURN_IF_ERROR(SpecsOfSignature(sig->inputs(), &m->inputs_).WithContext(path));
    GR_RETURN_IF_ERROR(SpecsOfSignature(sig->outputs(), &m->outputs_).WithContext(path));
    m->loaded_ = std::move(loaded);
  } else {
    proto::GraphDef def;
    GR_RETURN_IF_ERROR(ReadGraphDefFromFile(path, &def));
    GR_RETURN_IF_ERROR(NewSession(SessionOptionsFor(options), &m->session_));
    GR_RETURN_IF_ERROR(m->session_->Create(def).WithContext(path));
    std::vector<std::string> inputs = options.inputs;
    if (inputs.empty())
      for (const proto::NodeDef& n : def.node())
        if (IsPlaceholder(n)) inputs.push_back(n.name());
    std::vector<std::string> outputs = options.outputs;
    if (outputs.empty())
      for (const std::string& t : SinkOutputs(def, nullptr)) {
        const proto::NodeDef* n = FindNode(def, t.substr(0, t.rfind(':')));
        if (n == nullptr || !IsPlaceholder(*n)) outputs.push_back(t);
      }
    for (const std::string& t : inputs) m->inputs_.push_back(SpecOfGraphTensor(def, t));
    for (const std::string& t : outputs) m->outputs_.push_back(SpecOfGraphTensor(def, t));
  }
  for (const TensorSpec& s : m->outputs_) m->output_tensors_.push_back(s.tensor);
  *out = std::move(m);
  return Status::OK();
}

Status Model::Resolve(const std::string& name, bool input, const TensorSpec** out) const {
  const std::vector<TensorSpec>& specs = input ? inputs_ : outputs_;
  for (const TensorSpec& s : specs)
    if (s.name == name || s.tensor == name || s.tensor == CanonicalTensor(name)) {
      *out = &s;
      return Status::OK();
    }
  std::string known;
  for (const TensorSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
  return errors::NotFound("Model::Run: the model has no ", input ? "input" : "output", " '", name, "' (its ",
                          input ? "inputs" : "outputs", ": ", known.empty() ? "none" : known, ")");
}

Status Model::Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const {
  if (inputs.size() != inputs_.size())
    return errors::InvalidArgument("Model::Run: ", inputs.size(), " inputs given, the model has ", inputs_.size());
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(inputs_[i].tensor, inputs[i]);
  return session()->Run(feeds, output_tensors_, {}, outputs);
}

Status Model::Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                  const std::vector<std::string>& output_names, std::vector<Tensor>* outputs) const {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, value] : inputs) {
    const TensorSpec* spec;
    GR_RETURN_IF_ERROR(Resolve(name, true, &spec));
    feeds.emplace_back(loaded_ ? spec->name : spec->tensor, value);
  }
  std::vector<std::string> fetches;
  for (const std::string& name : output_names) {
    const TensorSpec* spec;
    GR_RETURN_IF_ERROR(Resolve(name, false, &spec));
    fetches.push_back(loaded_ ? spec->name : spec->tensor);
  }
  // A signature's inputs may have defaults: its runner fills them in.
  if (loaded_) return loaded_->bundle.RunSignature(loaded_->signature, feeds, fetches, outputs);
  return session_->Run(feeds, fetches.empty() ? output_tensors_ : fetches, {}, outputs);
}

Session* Model::session() const { return loaded_ ? loaded_->bundle.session.get() : session_.get(); }

namespace {

// A one-buffer allocator: hands the caller's memory to one TensorBuffer and
// gives it back through `release` when the buffer dies (TensorBuffer owns
// its memory through an Allocator; this adopts it without a copy).
class AdoptedMemory final : public Allocator {
 public:
  AdoptedMemory(void* data, size_t bytes, std::function<void(void*)> release)
      : data_(data), bytes_(bytes), release_(std::move(release)) {}
  const char* Name() const override { return "caller memory"; }
  void* Allocate(size_t bytes, size_t) override { return bytes == bytes_ ? data_ : nullptr; }
  void Deallocate(void*, size_t) override {
    if (release_) release_(data_);
    delete this;
  }

 private:
  void* data_;
  size_t bytes_;
  std::function<void(void*)> release_;
};

}  // namespace

Status TensorFromMemory(DataType dtype, const TensorShape& shape, void* data, size_t bytes,
                        std::function<void(void* data)> release, Tensor* out) {
  if (!DataTypeIsPod(dtype))
    return errors::InvalidArgument("TensorFromMemory: dtype ", DataTypeString(dtype),
                                   " has no fixed-size elements (build string tensors with Tensor's own API)");
  int64_t elements;
  if (gr_shape_num_elements(shape.data(), shape.dims(), &elements) != GR_OK)
    return errors::InvalidArgument("TensorFromMemory: shape ", shape.DebugString(),
                                   " has more than 2^58 elements or a negative dimension");
  // The size rule bounds elements to 2^58, so bytes cannot wrap.
  const size_t expected = DataTypeSize(dtype) * static_cast<size_t>(elements);
  if (bytes != expected)
    return errors::InvalidArgument("TensorFromMemory: ", bytes, " bytes given but a ", DataTypeString(dtype),
                                   " tensor of shape ", shape.DebugString(), " has ", expected);
  if (bytes > 0 && data == nullptr) return errors::InvalidArgument("TensorFromMemory: data is null");
  if (bytes == 0 || reinterpret_cast<uintptr_t>(data) % kTensorAlignment != 0) {
    // Kernels rely on 64-byte aligned data, so other memory is copied (as
    // TensorFlow's TF_NewTensor does).
    Tensor t;
    GR_RETURN_IF_ERROR(Tensor::Allocate(HostAllocator(), dtype, shape, &t));
    if (bytes > 0) std::memcpy(t.raw_data(), data, bytes);
    if (release) release(data);
    *out = std::move(t);
    return Status::OK();
  }
  // Nothing fails once the buffer adopts the memory: on failure the caller
  // keeps it and release must not run.
  auto adopted = std::make_unique<AdoptedMemory>(data, bytes, std::move(release));
  TensorBuffer* buf = TensorBuffer::Create(adopted.get(), bytes);
  if (buf == nullptr) return errors::Internal("TensorFromMemory: could not adopt the memory");
  adopted.release();  // the buffer's last Unref deletes it, running release
  *out = Tensor(dtype, shape, buf, buf->data());
  return Status::OK();
}

}  // namespace graphrt
