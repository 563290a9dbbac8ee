// A Session that records what the client library asks of it (the graph it
// builds, the Runs it makes) and fakes what SaveV2/MergeV2Checkpoints would
// leave on disk, so the Saver's graph and file handling are tested without
// the checkpoint kernels.
#ifndef GRAPHRT_TESTS_CLIENT_FAKE_SESSION_H_
#define GRAPHRT_TESTS_CLIENT_FAKE_SESSION_H_

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"

namespace graphrt {
namespace testing {

class FakeSession : public Session {
 public:
  struct RunCall {
    std::map<std::string, std::string> string_feeds;
    std::vector<std::string> fetches;
    std::vector<std::string> targets;
    int64_t timeout_in_ms = -1;  // -1: the Run without RunOptions
  };

  Status Create(const proto::GraphDef& graph) override {
    graph_ = graph;
    return Status::OK();
  }
  Status Extend(const proto::GraphDef& graph) override {
    if (!extend_status_.ok()) return extend_status_;
    std::set<std::string> names;
    for (const auto& n : graph_.node()) names.insert(n.name());
    for (const auto& n : graph.node())
      if (names.count(n.name())) return errors::AlreadyExists("node ", n.name(), " already exists");
    for (const auto& n : graph.node()) *graph_.add_node() = n;
    return Status::OK();
  }
  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs, const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs) override {
    RunCall call;
    for (const auto& [name, t] : inputs)
      if (t.dtype() == GR_STRING && t.NumElements() == 1) call.string_feeds[name] = std::string(t.string_at(0));
    call.fetches = output_names;
    call.targets = target_nodes;
    runs_.push_back(call);
    outputs->clear();
    if (!run_status_.ok()) return run_status_;
    // A save: write the files a V2 bundle has and return the prefix.
    if (!output_names.empty() && !call.string_feeds.empty()) {
      const std::string prefix = call.string_feeds.begin()->second;
      std::ofstream(prefix + ".index") << "index";
      std::ofstream(prefix + ".data-00000-of-00001") << "data";
      outputs->push_back(Tensor::StringScalar(prefix));
    }
    return Status::OK();
  }
  Status Run(const proto::RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& target_nodes,
             std::vector<Tensor>* outputs, proto::RunMetadata*) override {
    Status s = Run(inputs, output_names, target_nodes, outputs);
    runs_.back().timeout_in_ms = options.timeout_in_ms();
    return s;
  }
  Status Close() override { return Status::OK(); }

  const proto::GraphDef& graph() const { return graph_; }
  const std::vector<RunCall>& runs() const { return runs_; }
  void set_extend_status(Status s) { extend_status_ = std::move(s); }
  void set_run_status(Status s) { run_status_ = std::move(s); }

  const proto::NodeDef* Node(const std::string& name) const {
    for (const auto& n : graph_.node())
      if (n.name() == name) return &n;
    return nullptr;
  }

 private:
  proto::GraphDef graph_;
  std::vector<RunCall> runs_;
  Status extend_status_;
  Status run_status_;
};

// Sessions for target "fake://": each new one is a FakeSession, the last
// one created is reachable through last() (tests are single-threaded).
class FakeSessionFactory : public SessionFactory {
 public:
  static FakeSession* last() { return last_; }
  // What the Runs of sessions created from now on return.
  static void set_next_run_status(Status s) { next_run_status_ = std::move(s); }
  static void RegisterOnce() {
    static bool done = [] {
      RegisterSessionFactory("fake://", std::make_unique<FakeSessionFactory>());
      return true;
    }();
    (void)done;
  }
  Status NewSession(const SessionOptions&, std::unique_ptr<Session>* out) override {
    auto s = std::make_unique<FakeSession>();
    s->set_run_status(next_run_status_);
    last_ = s.get();
    *out = std::move(s);
    return Status::OK();
  }

 private:
  static inline FakeSession* last_ = nullptr;
  static inline Status next_run_status_;
};

}  // namespace testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_CLIENT_FAKE_SESSION_H_
