// The client API: a Session runs a GraphDef with feeds, fetches and targets.
#ifndef GRAPHRT_CORE_SESSION_H_
#define GRAPHRT_CORE_SESSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/config.pb.h"
#include "graphrt/proto/graph.pb.h"

namespace graphrt {

struct SessionOptions {
  // "" (or "direct://") selects the in-process DirectSession.
  std::string target;
  proto::ConfigProto config;
};

// Thread safety and lifetime:
// - Run may be called from many threads at once; Create and Extend may run
//   concurrently with Runs (a Run sees the graph before or after).
// - Close() stops new calls (they return CANCELLED "Session has been
//   closed."), makes the Runs in progress end early (nodes not yet started
//   do not run; those Runs return CANCELLED) and returns only once every
//   Run that had started has returned. After Close() has returned the
//   session may be destroyed. Destroying it while another thread may still
//   call into it is the caller's error; the destructor does Close() first.
// - Tensors a Run returned stay valid after the session is destroyed.
// - No C++ exception leaves these methods: failures, out-of-memory
//   included, are a Status naming the node, op or file involved.
// Memory: the tensors of one session together may hold at most
// ConfigProto.graphrt_options' session memory limit (default: a quarter of
// physical memory); past it an allocation fails with RESOURCE_EXHAUSTED
// naming the node and the sizes, and the session keeps working.
// Executors are cached per sorted (feeds, fetches, targets) signature, the
// least recently used dropped past graphrt_options.executor_cache_capacity.
class Session {
 public:
  virtual ~Session() = default;
  // Once per session; validates every node against the registered OpDefs.
  virtual Status Create(const proto::GraphDef& graph) = 0;
  // Adds nodes to the session's graph (names must be new).
  virtual Status Extend(const proto::GraphDef& graph) = 0;
  // inputs: {"name" or "name:k", value}; outputs follow output_names' order.
  virtual Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_names,
                     const std::vector<std::string>& target_nodes,
                     std::vector<Tensor>* outputs) = 0;
  virtual Status Run(const proto::RunOptions& run_options,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_names,
                     const std::vector<std::string>& target_nodes,
                     std::vector<Tensor>* outputs, proto::RunMetadata* run_metadata) = 0;
  // See above: stops new calls, cancels and waits for Runs in progress.
  virtual Status Close() = 0;

  // Callables (TensorFlow 1's DirectSession contract): a signature resolved
  // once, run many times with its feeds in CallableOptions.feed's order and
  // its fetches in .fetch's order; .run_options apply to every call.
  // Unknown or released handles are INVALID_ARGUMENT.
  using CallableHandle = int64_t;
  virtual Status MakeCallable(const proto::CallableOptions& options, CallableHandle* out_handle) {
    (void)options;
    (void)out_handle;
    return errors::Unimplemented("This Session does not support callables");
  }
  virtual Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                             std::vector<Tensor>* fetch_tensors, proto::RunMetadata* run_metadata) {
    (void)handle, (void)feed_tensors, (void)fetch_tensors, (void)run_metadata;
    return errors::Unimplemented("This Session does not support callables");
  }
  virtual Status ReleaseCallable(CallableHandle handle) {
    (void)handle;
    return errors::Unimplemented("This Session does not support callables");
  }
  // After Finalize, Extend fails and Runs whose signature needs a new
  // executor fail with FAILED_PRECONDITION "Session has been finalized."
  virtual Status Finalize() { return errors::Unimplemented("This Session does not support Finalize"); }

  // Makes a tensor the client adds to a Run from a TensorProto (e.g. a
  // SignatureDef default) in the session's memory, within its memory limit:
  // a few bytes of proto may describe gigabytes. RESOURCE_EXHAUSTED past
  // it. This default, for sessions without a limit, uses host memory.
  virtual Status TensorFromProto(const proto::TensorProto& p, Tensor* out) { return Tensor::FromProto(p, out); }
};

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;
  virtual Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* out) = 0;
};

// Sessions are chosen by the longest registered prefix of options.target.
void RegisterSessionFactory(const std::string& target_prefix, std::unique_ptr<SessionFactory> f);
Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SESSION_H_
