// graphrt's embedding API: load a model, see its inputs and outputs, make
// tensors over your own memory, run. This header and the ones it includes
// (graphrt/core/{status,tensor,tensor_shape,types}.h, graphrt/c_api.h) use
// no protobuf type, so an application needs no protobuf headers for the
// common path. Session, GraphDef and the rest of the TensorFlow-style API
// (graphrt/core/session.h) stay available to those who want them.
//
//   std::unique_ptr<graphrt::Model> model;
//   graphrt::Status s = graphrt::Model::Load("saved_model_dir", {}, &model);
//   graphrt::Tensor x;  // e.g. graphrt::TensorFromMemory(...) over your buffer
//   std::vector<graphrt::Tensor> y;
//   if (s.ok()) s = model->Run({x}, &y);  // in inputs() / outputs() order
// (examples/embed is a complete program.)
#ifndef GRAPHRT_MODEL_H_
#define GRAPHRT_MODEL_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"

namespace graphrt {

class Session;

// One input or output of a model.
struct TensorSpec {
  std::string name;    // the signature's key, or the tensor name for a GraphDef
  std::string tensor;  // the graph tensor it is ("x:0")
  DataType dtype = GR_INVALID;
  PartialTensorShape shape;  // unknown rank or dims (-1) where the model does not say
};

struct ModelOptions {
  // A SavedModel directory: the MetaGraphDef tagged exactly so, and the
  // signature to expose.
  std::set<std::string> tags{"serve"};
  std::string signature = "serving_default";
  // A GraphDef file (.pb or .pbtxt): its inputs ("name" or "name:k";
  // empty: every Placeholder) and outputs (empty: every output of each node
  // that no node reads, outside while loops, Placeholders aside: what
  // `graphrt run` fetches).
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Threads (0: one per core) for the session's pool.
  int threads = 0;
  // Plugins: the standard ones (CPU device and the op library) and more.
  bool load_default_plugins = true;
  std::vector<std::string> plugins;
};

class Model {
 public:
  // `path` is a SavedModel directory (saved_model.pb or .pbtxt inside) or a
  // GraphDef file. Errors name the file, tag set or signature.
  static Status Load(const std::string& path, const ModelOptions& options, std::unique_ptr<Model>* out);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }

  // `inputs` in inputs() order; *outputs in outputs() order. Thread-safe:
  // many threads may Run one model at once.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const;
  // Inputs by name (a spec's name or tensor), and the outputs named (empty:
  // all, in outputs() order).
  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs, const std::vector<std::string>& output_names,
             std::vector<Tensor>* outputs) const;

  // The session behind the model, for the full API (graphrt/core/session.h).
  Session* session() const;

 private:
  Model();
  struct Loaded;
  Status Resolve(const std::string& name, bool input, const TensorSpec** out) const;

  std::unique_ptr<Session> session_;
  std::unique_ptr<Loaded> loaded_;  // the SavedModel's bundle, when it is one
  std::vector<TensorSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::vector<std::string> output_tensors_;  // outputs_' tensors, for Run
};

// A tensor over the caller's memory, without copying when `data` is 64-byte
// aligned (the alignment kernels rely on): release(data) runs when the last
// tensor sharing it is gone. Unaligned memory is copied and released at
// once. POD dtypes only; `bytes` must be the shape's size.
Status TensorFromMemory(DataType dtype, const TensorShape& shape, void* data, size_t bytes,
                        std::function<void(void* data)> release, Tensor* out);

}  // namespace graphrt

#endif  // GRAPHRT_MODEL_H_
