// MonitoredSession and its parts, as TensorFlow 1.x's
// tf.train.MonitoredSession (tf_behaviours.md §15):
//  - Scaffold: the graph (a MetaGraphDef) and the ops that initialise, check
//    and save it, taken from the graph's collections or built;
//  - SessionCreator / ChiefSessionCreator: a new session restored from the
//    latest checkpoint, or initialised, then checked for readiness;
//  - SessionRunHook: code called around session creation and every Run,
//    which may add fetches, feeds and targets and request a stop;
//  - MonitoredSession: runs through the hooks, and (recoverable) re-creates
//    the session after an Aborted or Unavailable Run and retries it;
//  - NewMonitoredTrainingSession: the chief's standard hooks around that.
//
// graphrt builds graphs as GraphDefs: the Scaffold owns the MetaGraphDef,
// hooks add nodes to it in Begin, Finalize completes it, and every session
// the creator makes is created on that same graph.
#ifndef GRAPHRT_CLIENT_MONITORED_SESSION_H_
#define GRAPHRT_CLIENT_MONITORED_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/client/coordinator.h"
#include "graphrt/client/saver.h"
#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/meta_graph.pb.h"

namespace graphrt {

// Collection names the Scaffold and hooks use (tf_proto_facts.md §7).
inline constexpr char kGlobalVariablesCollection[] = "variables";
inline constexpr char kLocalVariablesCollection[] = "local_variables";
inline constexpr char kTrainableVariablesCollection[] = "trainable_variables";
inline constexpr char kGlobalStepCollection[] = "global_step";
inline constexpr char kInitOpCollection[] = "init_op";
inline constexpr char kLocalInitOpCollection[] = "local_init_op";
inline constexpr char kReadyOpCollection[] = "ready_op";
inline constexpr char kReadyForLocalInitOpCollection[] = "ready_for_local_init_op";
inline constexpr char kSummaryOpCollection[] = "summary_op";
inline constexpr char kSummariesCollection[] = "summaries";
inline constexpr char kTableInitializerCollection[] = "table_initializer";
inline constexpr char kTrainOpCollection[] = "train_op";

using FeedList = std::vector<std::pair<std::string, Tensor>>;

// ------------------------------------------------------------ graph helpers

// A node of `graph` by name, or nullptr.
const proto::NodeDef* FindGraphNode(const proto::GraphDef& graph, const std::string& name);

// The global step's variable node name: the `global_step` collection's
// single variable, else a variable node named "global_step"; "" when
// there is none. More than one item in the collection is InvalidArgument.
Status GetGlobalStep(const proto::MetaGraphDef& meta_graph, std::string* node_name);

// TF's get_or_create_global_step: when the graph has no global step, adds
// an int64 scalar VariableV2 "global_step", its initializer
// global_step/Initializer/zeros + global_step/Assign, and records it in the
// `global_step` and `variables` collections (VariableDef). With a session,
// the new nodes are also added to it with Extend. *node_name gets the step.
Status GetOrCreateGlobalStep(proto::MetaGraphDef* meta_graph, Session* session, std::string* node_name);

// Adds "<global_step>/increment" (AssignAdd of an int64 1) for training
// loops whose train op does not step the global step itself (TF's
// optimizers take global_step= for that); run it as a target each step.
// With a session, also Extend it. *node_name gets the node's name.
Status AddGlobalStepIncrement(proto::MetaGraphDef* meta_graph, Session* session, const std::string& global_step,
                              std::string* node_name);

// Reads an int32/int64 scalar tensor (e.g. "global_step:0") with a Run.
Status ReadInt64Scalar(Session* session, const std::string& tensor, int64_t* value);

// ---------------------------------------------------------------- Scaffold

class Scaffold {
 public:
  explicit Scaffold(proto::MetaGraphDef meta_graph = {});

  // The pieces; set any of them before Finalize to override the default.
  // Ops are node names (several: all run as targets). "" / empty: default.
  std::vector<std::string> init_op;
  std::vector<std::string> local_init_op;
  // A 1-D string tensor listing what is not ready (TF's ready_op); when
  // empty, readiness is checked with one IsVariableInitialized (or
  // VarIsInitializedOp) per variable fetched in one Run, since graphrt has
  // no ReportUninitializedVariables op.
  std::string ready_op;
  std::string ready_for_local_init_op;
  // Serialized-Summary string tensors (several: each is written).
  std::vector<std::string> summary_op;
  std::shared_ptr<Saver> saver;
  FeedList init_feed_dict;
  std::function<Status(Session*)> init_fn;
  // For a built Saver: how it saves (TF's Scaffold saver is sharded; one
  // SaveV2 is the default here, the graphs having one device). Paths in the
  // state file are relative to it, as TF's Scaffold saver writes them.
  SaverOptions saver_options;

  // The graph: mutable (hooks' Begin adds nodes) until Finalize.
  const proto::MetaGraphDef& meta_graph() const { return meta_graph_; }
  const proto::GraphDef& graph() const { return meta_graph_.graph_def(); }
  // nullptr once finalized (TF: "Graph is finalized and cannot be modified").
  proto::MetaGraphDef* mutable_meta_graph() { return finalized_ ? nullptr : &meta_graph_; }
  bool finalized() const { return finalized_; }

  // Fills each piece not set from its collection (exactly one item, else
  // InvalidArgument "More than one item in collection <name>") or builds it
  // (tf_behaviours.md §15 table), adding the nodes it needs to the graph.
  // A second call does nothing.
  Status Finalize();

  // Variables checked by ready_op (global + local) and by
  // ready_for_local_init_op (global), with their readiness tensors (built).
  struct VariableCheck {
    std::string variable;
    std::string is_initialized_tensor;
  };
  const std::vector<VariableCheck>& ready_variables() const { return ready_variables_; }
  const std::vector<VariableCheck>& ready_for_local_init_variables() const { return ready_for_local_variables_; }

 private:
  proto::MetaGraphDef meta_graph_;
  bool finalized_ = false;
  std::vector<VariableCheck> ready_variables_;
  std::vector<VariableCheck> ready_for_local_variables_;
};

// Runs a readiness check: *not_ready lists what is uninitialized ("" entries
// never). `report_tensor` (a ready_op) when given, else the variable checks.
// A FailedPrecondition mentioning "uninitialized" counts as not ready (its
// message becomes the entry), as TF's SessionManager does.
Status ReportUninitialized(Session* session, const std::string& report_tensor,
                           const std::vector<Scaffold::VariableCheck>& checks, std::vector<std::string>* not_ready);

// ---------------------------------------------------------- session creators

class SessionCreator {
 public:
  virtual ~SessionCreator() = default;
  virtual Status CreateSession(std::unique_ptr<Session>* out) = 0;
  virtual Scaffold* scaffold() = 0;
};

// TF's ChiefSessionCreator + SessionManager.prepare_session: finalizes the
// scaffold, makes a session on its graph, restores the latest checkpoint of
// checkpoint_dir (or checkpoint_filename_with_path; both → InvalidArgument)
// else runs init_op (with init_feed_dict) and init_fn; runs local_init_op
// once ready_for_local_init reports nothing missing; then checks ready_op.
// Not ready → FailedPrecondition "Init operations did not make model ready.
// Variables not initialized: a, b".
class ChiefSessionCreator : public SessionCreator {
 public:
  ChiefSessionCreator(std::shared_ptr<Scaffold> scaffold, SessionOptions options = {},
                      std::string checkpoint_dir = "", std::string checkpoint_filename_with_path = "");
  Status CreateSession(std::unique_ptr<Session>* out) override;
  Scaffold* scaffold() override { return scaffold_.get(); }
  // The checkpoint the last CreateSession restored ("" when it initialised).
  const std::string& restored_from() const { return restored_from_; }

 private:
  std::shared_ptr<Scaffold> scaffold_;
  SessionOptions options_;
  std::string checkpoint_dir_;
  std::string checkpoint_path_;
  std::string restored_from_;
};

// ------------------------------------------------------------------- hooks

// What a hook adds to a Run (TF's SessionRunArgs).
struct SessionRunArgs {
  std::vector<std::string> fetches;
  FeedList feeds;
  std::vector<std::string> targets;
};

// The caller's request and the stop switch, given to before_run/after_run.
class SessionRunContext {
 public:
  SessionRunContext(const SessionRunArgs* original_args, Session* session)
      : original_args_(original_args), session_(session) {}
  const SessionRunArgs& original_args() const { return *original_args_; }
  Session* session() const { return session_; }
  void RequestStop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  const SessionRunArgs* original_args_;
  Session* session_;
  bool stop_requested_ = false;
};

// A hook's own fetches' values, in the order it asked for them (TF's
// SessionRunValues.results; empty when it asked for none).
struct SessionRunValues {
  std::vector<Tensor> results;
};

// TF's SessionRunHook. A non-OK Status from a hook ends the call it was made
// in (as an exception does in TF).
class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;
  // Before the graph is finalized: may add nodes to scaffold's graph.
  virtual Status Begin(Scaffold* scaffold) { return Status::OK(); }
  // After every session creation (again after a recovery).
  virtual Status AfterCreateSession(Session* session, Coordinator* coord) { return Status::OK(); }
  virtual Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) { return Status::OK(); }
  virtual Status AfterRun(SessionRunContext* context, const SessionRunValues& values) { return Status::OK(); }
  // At Close, unless a Run or hook failed.
  virtual Status End(Session* session) { return Status::OK(); }
};

// ------------------------------------------------------- MonitoredSession

// Not thread-safe: one thread calls Run (hooks keep per-step state); other
// threads coordinate through coordinator().
class MonitoredSession {
 public:
  // Calls every hook's Begin, finalizes the scaffold, creates the session,
  // then calls every hook's AfterCreateSession. `recoverable`: Runs failing
  // with Aborted or Unavailable re-create the session (restoring the latest
  // checkpoint) and are retried (TF's MonitoredSession; false is
  // SingularMonitoredSession).
  static Status Create(std::unique_ptr<SessionCreator> creator, std::vector<std::shared_ptr<SessionRunHook>> hooks,
                       std::unique_ptr<MonitoredSession>* out, bool recoverable = true);
  ~MonitoredSession();  // Close()
  MonitoredSession(const MonitoredSession&) = delete;
  MonitoredSession& operator=(const MonitoredSession&) = delete;

  // The run protocol (tf_behaviours.md §15): FailedPrecondition "Run called
  // even after should_stop requested." once stopped; before_run of every
  // hook, merged feeds (a tensor fed twice → InvalidArgument "Same tensor is
  // fed by two hooks." / "... by a SessionRunHook and user."), one Run,
  // after_run of every hook, and only the caller's fetches in *outputs.
  Status Run(const FeedList& feeds, const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs);
  // A hook requested a stop, or the coordinator was asked to stop.
  bool ShouldStop() const;
  // End() of every hook (unless a Run or hook failed), stops and joins the
  // coordinator, closes the session. Returns the first error of those
  // (a coordinator-recorded error included). A second call does nothing.
  Status Close();

  Session* raw_session() const { return session_.get(); }
  Coordinator* coordinator() { return &coord_; }
  Scaffold* scaffold() { return creator_->scaffold(); }
  // Sessions created so far (1 + recoveries).
  int sessions_created() const { return sessions_created_; }

 private:
  MonitoredSession() = default;
  Status CreateSessionAndCallHooks();
  Status RunOnce(const FeedList& feeds, const std::vector<std::string>& fetches,
                 const std::vector<std::string>& targets, std::vector<Tensor>* outputs);

  std::unique_ptr<SessionCreator> creator_;
  std::vector<std::shared_ptr<SessionRunHook>> hooks_;
  bool recoverable_ = true;
  std::unique_ptr<Session> session_;
  Coordinator coord_;
  bool stop_requested_ = false;
  bool failed_ = false;
  bool closed_ = false;
  int sessions_created_ = 0;
};

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_MONITORED_SESSION_H_
