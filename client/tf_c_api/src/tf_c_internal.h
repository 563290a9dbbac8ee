// The structs behind graphrt/tf_c_api.h's handles and what the library's
// source files share (tf_c_api.cc: tensors, imports, sessions;
// tf_c_graph.cc: building and inspecting graphs). Nothing here is exported.
#ifndef GRAPHRT_CLIENT_TF_C_INTERNAL_H_
#define GRAPHRT_CLIENT_TF_C_INTERNAL_H_

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <google/protobuf/message_lite.h>

#include "graphrt/core/graph.h"
#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/tf_c_api.h"

namespace graphrt {
struct SavedModelBundle;
}

struct TF_Status {
  TF_Code code = TF_OK;
  std::string message;
};

struct TF_Tensor {
  graphrt::Tensor tensor;
};

struct TF_Operation {
  graphrt::Node* node;  // owned by its graph's Graph; never moves
  TF_Graph* graph;      // whose mutex guards the node's edges
};

// A graph only grows, by import or by TF_FinishOperation. `graph` holds the
// validated, typed nodes the TF_Operations point into; `additions` keeps
// what each step added as a GraphDef (an import's, renamed; or the one node
// an operation added), which sessions replay into their own graphs.
struct TF_Graph {
  std::mutex mu;
  std::unique_ptr<graphrt::Graph> graph;
  std::vector<graphrt::proto::GraphDef> additions;
  std::vector<std::unique_ptr<TF_Operation>> ops;  // creation order
  std::unordered_map<std::string, TF_Operation*> by_name;
  // TensorFlow's shape refiner: what is known of each node's output shapes
  // (by node id), and the values of small Consts shape functions read.
  std::vector<std::vector<graphrt::PartialTensorShape>> shapes;
  std::unordered_map<int, std::unique_ptr<graphrt::Tensor>> const_values;
  int sessions = 0;              // live sessions on the graph
  bool delete_requested = false;  // TF_DeleteGraph came while sessions lived
};

struct TF_SessionOptions {
  graphrt::SessionOptions options;
};

struct TF_Session {
  TF_Graph* graph = nullptr;
  std::unique_ptr<graphrt::Session> owned;
  std::unique_ptr<graphrt::SavedModelBundle> bundle;  // a SavedModel's: owns the session
  graphrt::Session* session = nullptr;
  std::mutex extend_mu;
  bool created = false;  // Create has run
  size_t applied = 0;    // graph->additions the session has
};

struct TF_Library {
  std::string op_list;  // serialized OpList
  TF_Buffer buffer{};   // over op_list
};

namespace graphrt::tf_c {

// For the functions without a status parameter: failures answer NULL.
inline constexpr TF_Status* kNoStatus = nullptr;

// Serializes `m` into the caller's empty buffer, in malloc'd memory the
// buffer's deallocator frees (TensorFlow's rule: a filled buffer is refused).
Status FillBuffer(const char* fn, const google::protobuf::MessageLite& m, TF_Buffer* out);

// The RunOptions in `run_options` (NULL: the defaults), and `out`, a buffer
// the call will fill, empty (TensorFlow refuses a filled one).
Status BufferArguments(const char* fn, const TF_Buffer* run_options, proto::RunOptions* opts, const TF_Buffer* out,
                       const char* out_name);

// Whether `name` is an operation of the graph or a name scope of one.
bool NameInUse(const TF_Graph& g, const std::string& name);

// An empty graph with the versions of graphs built here.
std::unique_ptr<Graph> EmptyGraph();

// Adds `add` (renamed already) to g, all or nothing; its nodes' shapes are
// inferred. Call with g->mu held.
Status Import(TF_Graph* g, proto::GraphDef add);

// Infers the output shapes of op nodes just added to g->graph (given in an
// order where producers come first) and keeps them, with the values of
// small Consts among them; then makes their TF_Operations, in id order. On a shape error the
// nodes are removed from the graph again, nothing is kept, and the error
// names the node. Call with g->mu held.
Status AdoptAddedNodes(TF_Graph* g, const std::vector<Node*>& added);

}  // namespace graphrt::tf_c

#endif  // GRAPHRT_CLIENT_TF_C_INTERNAL_H_
