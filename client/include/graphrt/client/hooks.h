// The standard SessionRunHooks (TensorFlow's basic_session_run_hooks.py,
// tf_behaviours.md §15) and MonitoredTrainingSession.
//
// Hooks that log take a LogSink (default: stderr, "INFO: <line>"); tests
// pass one that records the lines.
#ifndef GRAPHRT_CLIENT_HOOKS_H_
#define GRAPHRT_CLIENT_HOOKS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/client/event_writer.h"
#include "graphrt/client/monitored_session.h"

namespace graphrt {

using LogSink = std::function<void(const std::string&)>;
// Writes "INFO: <line>" to stderr.
void LogToStderr(const std::string& line);

// Triggers every `every_secs` seconds or every `every_steps` steps (exactly
// one > 0; else Validate() is InvalidArgument). The first query triggers; a
// step never triggers twice.
class SecondOrStepTimer {
 public:
  using Clock = std::function<double()>;  // seconds
  SecondOrStepTimer(double every_secs, int64_t every_steps, Clock clock = nullptr);
  Status Validate() const;
  bool ShouldTriggerForStep(int64_t step) const;
  // Records a trigger at `step`; the seconds and steps since the previous
  // one (nullopt the first time).
  std::optional<std::pair<double, int64_t>> UpdateLastTriggeredStep(int64_t step);
  std::optional<int64_t> last_triggered_step() const { return last_step_; }
  void Reset() { last_step_.reset(); }

 private:
  double Now() const;
  double every_secs_;
  int64_t every_steps_;
  Clock clock_;
  std::optional<int64_t> last_step_;
  double last_time_ = 0;
};

// Called around each checkpoint CheckpointSaverHook writes.
class CheckpointSaverListener {
 public:
  virtual ~CheckpointSaverListener() = default;
  virtual void Begin() {}
  virtual void BeforeSave(Session* session, int64_t global_step) {}
  // True requests a stop of the training loop.
  virtual bool AfterSave(Session* session, int64_t global_step) { return false; }
  virtual void End(Session* session, int64_t global_step) {}
};

// Saves <checkpoint_dir>/<basename>-<global_step> with the scaffold's saver
// (or the given one): once right after every session creation (a fresh run
// saves step 0), when the timer triggers, and at End unless that step was
// just saved. Writes <checkpoint_dir>/graph.pbtxt once. Needs a global
// step (FailedPrecondition "Global step should be created to use
// CheckpointSaverHook." in Begin).
class CheckpointSaverHook : public SessionRunHook {
 public:
  struct Options {
    std::string checkpoint_dir;
    double save_secs = 0;
    int64_t save_steps = 0;
    std::shared_ptr<Saver> saver;  // null: the scaffold's
    std::string checkpoint_basename = "model.ckpt";
    std::vector<std::shared_ptr<CheckpointSaverListener>> listeners;
    LogSink log = LogToStderr;
    SecondOrStepTimer::Clock clock;  // null: steady clock
    // Given: each save also writes a SessionLog CHECKPOINT event there.
    std::shared_ptr<EventFileWriter> summary_writer;
  };
  explicit CheckpointSaverHook(Options options);
  Status Begin(Scaffold* scaffold) override;
  Status AfterCreateSession(Session* session, Coordinator* coord) override;
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override;
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override;
  Status End(Session* session) override;

 private:
  Status Save(Session* session, int64_t step, bool* request_stop);
  Options options_;
  SecondOrStepTimer timer_;
  Scaffold* scaffold_ = nullptr;
  std::string global_step_;  // tensor name
  bool graph_written_ = false;
};

// Logs "global_step/sec: <rate>" every N steps or seconds; with a summary
// callback (an EventFileWriter's AddScalar) also records it as scalar
// `global_step/sec` at the global step.
class StepCounterHook : public SessionRunHook {
 public:
  struct Options {
    int64_t every_n_steps = 100;
    double every_n_secs = 0;  // > 0: instead of steps
    // Receives (tag, value, step) for each rate (an event writer's AddScalar).
    std::function<Status(const std::string&, double, int64_t)> add_scalar;
    LogSink log = LogToStderr;
    SecondOrStepTimer::Clock clock;
  };
  explicit StepCounterHook(Options options);
  Status Begin(Scaffold* scaffold) override;
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override;
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override;

 private:
  Options options_;
  SecondOrStepTimer timer_;
  std::string global_step_;
  std::string tag_;
};

// Requests a stop once the global step reaches last_step (given, or the
// global step at the first session creation + num_steps). Exactly one of
// the two (InvalidArgument in Begin otherwise, with TF's messages).
class StopAtStepHook : public SessionRunHook {
 public:
  StopAtStepHook(std::optional<int64_t> num_steps, std::optional<int64_t> last_step);
  Status Begin(Scaffold* scaffold) override;
  Status AfterCreateSession(Session* session, Coordinator* coord) override;
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override;
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override;
  std::optional<int64_t> last_step() const { return last_step_; }

 private:
  std::optional<int64_t> num_steps_;
  std::optional<int64_t> last_step_;
  std::string global_step_;
};

// Fetches `loss` every step; a NaN (any element) logs "Model diverged with
// loss = NaN." and fails the Run with InvalidArgument "NaN loss during
// training." (fail_on_nan_loss) or requests a stop.
class NanTensorHook : public SessionRunHook {
 public:
  NanTensorHook(std::string loss_tensor, bool fail_on_nan_loss = true, LogSink log = LogToStderr);
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override;
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override;

 private:
  std::string loss_;
  bool fail_;
  LogSink log_;
};

// Writes summaries to an event file every N steps or seconds (exactly one;
// InvalidArgument in Begin otherwise): the serialized-Summary tensors of
// summary_op (default: the scaffold's summary op), and scalar tensors as
// simple values under their tags; each at the global step after the Run.
// The first Run also writes a SessionLog START event; End flushes.
class SummarySaverHook : public SessionRunHook {
 public:
  struct Options {
    int64_t save_steps = 0;
    double save_secs = 0;
    std::string output_dir;                        // used when no writer is given
    std::shared_ptr<EventFileWriter> writer;
    std::vector<std::string> summary_op;           // string tensors of serialized Summaries
    std::vector<std::pair<std::string, std::string>> scalars;  // (tag, numeric scalar tensor)
    SecondOrStepTimer::Clock clock;
  };
  explicit SummarySaverHook(Options options);
  Status Begin(Scaffold* scaffold) override;
  Status AfterCreateSession(Session* session, Coordinator* coord) override;
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override;
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override;
  Status End(Session* session) override;
  EventFileWriter* writer() const { return options_.writer.get(); }

 private:
  Options options_;
  SecondOrStepTimer timer_;
  Scaffold* scaffold_ = nullptr;  // set when the summary op is the scaffold's
  std::string global_step_;
  std::optional<int64_t> next_step_;
  bool request_summary_ = false;
};

// Logs tensors every N of its own iterations or every N seconds, and/or at
// the end: "tag = value, tag2 = value2 (0.123 sec)" (tags in the order given).
class LoggingTensorHook : public SessionRunHook {
 public:
  struct Options {
    std::vector<std::pair<std::string, std::string>> tensors;  // (tag, tensor)
    int64_t every_n_iter = 0;
    double every_n_secs = 0;
    bool at_end = false;
    // Replaces the default line (values in `tensors` order).
    std::function<std::string(const std::vector<std::pair<std::string, Tensor>>&)> formatter;
    LogSink log = LogToStderr;
    SecondOrStepTimer::Clock clock;
  };
  explicit LoggingTensorHook(Options options);
  Status Begin(Scaffold* scaffold) override;
  Status BeforeRun(SessionRunContext* context, SessionRunArgs* args) override;
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override;
  Status End(Session* session) override;

 private:
  void Log(const std::vector<Tensor>& values, std::optional<double> elapsed);
  Options options_;
  SecondOrStepTimer timer_;
  int64_t iter_count_ = 0;
  bool should_trigger_ = false;
};

// TF's MonitoredTrainingSession(is_chief=True): a ChiefSessionCreator over
// `scaffold` (restoring from checkpoint_dir) and, in TF 1.x's order, the
// chief_only_hooks, then the standard hooks, each only when its setting is
// > 0 and summary_dir (default checkpoint_dir) or checkpoint_dir is set:
// StepCounterHook(log_step_count_steps) and SummarySaverHook(
// save_summaries_steps, when the scaffold has a summary op) writing to one
// event file in summary_dir, CheckpointSaverHook(save_checkpoint_steps,
// else save_checkpoint_secs; TF's 600 s when neither is given); then
// `hooks`.
struct MonitoredTrainingSessionOptions {
  SessionOptions session_options;
  std::string checkpoint_dir;
  std::string summary_dir;  // "" = checkpoint_dir
  int64_t save_checkpoint_steps = 0;
  double save_checkpoint_secs = 0;  // 0 and no steps: 600
  int64_t save_summaries_steps = 100;
  int64_t log_step_count_steps = 100;
  std::vector<std::shared_ptr<SessionRunHook>> hooks;
  std::vector<std::shared_ptr<SessionRunHook>> chief_only_hooks;
  bool recoverable = true;
};
Status NewMonitoredTrainingSession(std::shared_ptr<Scaffold> scaffold, const MonitoredTrainingSessionOptions& options,
                                   std::unique_ptr<MonitoredSession>* out);


}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_HOOKS_H_
