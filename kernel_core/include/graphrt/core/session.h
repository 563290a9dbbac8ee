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
  // Later Runs fail with CANCELLED "Session has been closed.".
  virtual Status Close() = 0;
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
