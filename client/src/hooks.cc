// The standard hooks (basic_session_run_hooks.py as tf_behaviours.md §15
// restates it) and MonitoredTrainingSession.
#include "graphrt/client/hooks.h"

#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "file_util.h"

namespace graphrt {

namespace {

double SteadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The global step's tensor, or FailedPrecondition naming the hook.
Status RequireGlobalStep(const Scaffold& scaffold, const char* hook, std::string* tensor) {
  std::string node;
  GR_RETURN_IF_ERROR(GetGlobalStep(scaffold.meta_graph(), &node));
  if (node.empty()) return errors::FailedPrecondition("Global step should be created to use ", hook, ".");
  *tensor = node + ":0";
  return Status::OK();
}

Status StepOf(const SessionRunValues& values, int64_t* step) {
  if (values.results.size() != 1 || values.results[0].NumElements() != 1)
    return errors::Internal("the global step fetch gave no scalar");
  const Tensor& t = values.results[0];
  if (t.dtype() == GR_INT64) {
    *step = t.data<int64_t>()[0];
  } else if (t.dtype() == GR_INT32) {
    *step = t.data<int32_t>()[0];
  } else {
    return errors::InvalidArgument("the global step is ", DataTypeString(t.dtype()), ", not an integer");
  }
  return Status::OK();
}

bool HasNaN(const Tensor& t) {
  const int64_t n = t.NumElements();
  if (t.dtype() == GR_FLOAT) {
    for (int64_t i = 0; i < n; ++i)
      if (std::isnan(t.data<float>()[i])) return true;
  } else if (t.dtype() == GR_DOUBLE) {
    for (int64_t i = 0; i < n; ++i)
      if (std::isnan(t.data<double>()[i])) return true;
  }
  return false;
}

// TF's pattern for hooks that follow the global step: the value fetched with
// a Run may predate that Run's own increment, so when `due(fetched + 1)` the
// step is read again into *fresh; else *fresh stays empty.
Status FreshStepIfDue(SessionRunContext* context, const SessionRunValues& values, const std::string& global_step,
                      const std::function<bool(int64_t)>& due, std::optional<int64_t>* fresh) {
  fresh->reset();
  int64_t stale = 0;
  GR_RETURN_IF_ERROR(StepOf(values, &stale));
  if (!due(stale + 1)) return Status::OK();
  int64_t step = 0;
  GR_RETURN_IF_ERROR(ReadInt64Scalar(context->session(), global_step, &step));
  *fresh = step;
  return Status::OK();
}

}  // namespace

void LogToStderr(const std::string& line) { std::cerr << "INFO: " << line << "\n"; }

// -------------------------------------------------------- SecondOrStepTimer

SecondOrStepTimer::SecondOrStepTimer(double every_secs, int64_t every_steps, Clock clock)
    : every_secs_(every_secs), every_steps_(every_steps), clock_(std::move(clock)) {}

Status SecondOrStepTimer::Validate() const {
  if ((every_secs_ > 0) == (every_steps_ > 0))
    return errors::InvalidArgument("Either every_secs or every_steps should be provided (exactly one), got every_secs=",
                                   every_secs_, ", every_steps=", every_steps_);
  return Status::OK();
}

double SecondOrStepTimer::Now() const { return clock_ ? clock_() : SteadyNow(); }

bool SecondOrStepTimer::ShouldTriggerForStep(int64_t step) const {
  if (!last_step_) return true;
  if (*last_step_ == step) return false;
  if (every_secs_ > 0 && Now() >= last_time_ + every_secs_) return true;
  if (every_steps_ > 0 && step >= *last_step_ + every_steps_) return true;
  return false;
}

std::optional<std::pair<double, int64_t>> SecondOrStepTimer::UpdateLastTriggeredStep(int64_t step) {
  const double now = Now();
  std::optional<std::pair<double, int64_t>> since;
  if (last_step_) since = std::make_pair(now - last_time_, step - *last_step_);
  last_step_ = step;
  last_time_ = now;
  return since;
}

// ------------------------------------------------------ CheckpointSaverHook

CheckpointSaverHook::CheckpointSaverHook(Options options)
    : options_(std::move(options)), timer_(options_.save_secs, options_.save_steps, options_.clock) {
  // The Saver writes paths into the state file as given, and readers join a
  // relative one with the directory: a relative directory would name
  // <dir>/<dir>/model.ckpt-N. Absolute paths read back from anywhere.
  std::error_code ec;
  if (!options_.checkpoint_dir.empty()) {
    const std::filesystem::path abs = std::filesystem::absolute(options_.checkpoint_dir, ec);
    if (!ec) options_.checkpoint_dir = abs.string();
  }
}

Status CheckpointSaverHook::Begin(Scaffold* scaffold) {
  GR_RETURN_IF_ERROR(timer_.Validate().WithContext("CheckpointSaverHook"));
  if (options_.checkpoint_dir.empty()) return errors::InvalidArgument("CheckpointSaverHook needs a checkpoint_dir");
  scaffold_ = scaffold;
  GR_RETURN_IF_ERROR(RequireGlobalStep(*scaffold, "CheckpointSaverHook", &global_step_));
  for (const auto& l : options_.listeners) l->Begin();
  return Status::OK();
}

Status CheckpointSaverHook::AfterCreateSession(Session* session, Coordinator*) {
  if (!client_internal::IsDirectory(options_.checkpoint_dir)) {
    std::error_code ec;
    std::filesystem::create_directories(options_.checkpoint_dir, ec);
    if (ec)
      return errors::NotFound("CheckpointSaverHook: cannot create ", options_.checkpoint_dir, ": ", ec.message());
  }
  if (!graph_written_) {
    // The graph as TF writes it beside the checkpoints (graph.pbtxt).
    std::string text;
    if (!google::protobuf::TextFormat::PrintToString(scaffold_->graph(), &text))
      return errors::Internal("CheckpointSaverHook: the graph does not print as text");
    GR_RETURN_IF_ERROR(client_internal::WriteFileAtomically(
        client_internal::JoinPath(options_.checkpoint_dir, "graph.pbtxt"), text));
    graph_written_ = true;
  }
  // A fresh run saves its initial state (step 0); a recovered one its
  // restored step.
  int64_t step = 0;
  GR_RETURN_IF_ERROR(ReadInt64Scalar(session, global_step_, &step));
  bool unused_stop = false;
  GR_RETURN_IF_ERROR(Save(session, step, &unused_stop));
  timer_.UpdateLastTriggeredStep(step);
  return Status::OK();
}

Status CheckpointSaverHook::BeforeRun(SessionRunContext*, SessionRunArgs* args) {
  args->fetches.push_back(global_step_);
  return Status::OK();
}

Status CheckpointSaverHook::AfterRun(SessionRunContext* context, const SessionRunValues& values) {
  auto due = [this](int64_t step) { return timer_.ShouldTriggerForStep(step); };
  std::optional<int64_t> step;
  GR_RETURN_IF_ERROR(FreshStepIfDue(context, values, global_step_, due, &step));
  if (!step || !due(*step)) return Status::OK();
  timer_.UpdateLastTriggeredStep(*step);
  bool stop = false;
  GR_RETURN_IF_ERROR(Save(context->session(), *step, &stop));
  if (stop) context->RequestStop();
  return Status::OK();
}

Status CheckpointSaverHook::End(Session* session) {
  int64_t step = 0;
  GR_RETURN_IF_ERROR(ReadInt64Scalar(session, global_step_, &step));
  if (timer_.last_triggered_step() != step) {
    bool unused_stop = false;
    GR_RETURN_IF_ERROR(Save(session, step, &unused_stop));
  }
  for (const auto& l : options_.listeners) l->End(session, step);
  // The last CHECKPOINT event may come after the summary hook's flush.
  if (options_.summary_writer != nullptr) GR_RETURN_IF_ERROR(options_.summary_writer->Flush());
  return Status::OK();
}

Status CheckpointSaverHook::Save(Session* session, int64_t step, bool* request_stop) {
  Saver* saver = options_.saver ? options_.saver.get() : scaffold_->saver.get();
  if (saver == nullptr) return errors::FailedPrecondition("CheckpointSaverHook: no saver (the graph has no variables)");
  const std::string prefix = client_internal::JoinPath(options_.checkpoint_dir, options_.checkpoint_basename);
  options_.log("Saving checkpoints for " + std::to_string(step) + " into " + prefix + "-" + std::to_string(step) + ".");
  for (const auto& l : options_.listeners) l->BeforeSave(session, step);
  std::string path;
  GR_RETURN_IF_ERROR(saver->Save(session, prefix, step, &path));
  if (options_.summary_writer != nullptr) {
    proto::Event event;
    event.set_step(step);
    event.mutable_session_log()->set_status(proto::SessionLog::CHECKPOINT);
    event.mutable_session_log()->set_checkpoint_path(path);
    GR_RETURN_IF_ERROR(options_.summary_writer->WriteEvent(event));
  }
  for (const auto& l : options_.listeners)
    if (l->AfterSave(session, step)) *request_stop = true;
  return Status::OK();
}

// ---------------------------------------------------------- StepCounterHook

StepCounterHook::StepCounterHook(Options options)
    : options_(std::move(options)),
      timer_(options_.every_n_secs, options_.every_n_secs > 0 ? 0 : options_.every_n_steps, options_.clock) {}

Status StepCounterHook::Begin(Scaffold* scaffold) {
  GR_RETURN_IF_ERROR(timer_.Validate().WithContext("StepCounterHook"));
  GR_RETURN_IF_ERROR(RequireGlobalStep(*scaffold, "StepCounterHook", &global_step_));
  tag_ = global_step_.substr(0, global_step_.find(':')) + "/sec";
  return Status::OK();
}

Status StepCounterHook::BeforeRun(SessionRunContext*, SessionRunArgs* args) {
  args->fetches.push_back(global_step_);
  return Status::OK();
}

Status StepCounterHook::AfterRun(SessionRunContext*, const SessionRunValues& values) {
  int64_t step = 0;
  GR_RETURN_IF_ERROR(StepOf(values, &step));
  if (!timer_.ShouldTriggerForStep(step)) return Status::OK();
  const auto since = timer_.UpdateLastTriggeredStep(step);
  if (!since) return Status::OK();
  const auto [secs, steps] = *since;
  if (steps <= 0) {
    options_.log("It seems that global step has not been increased. Current value (could be stable): " +
                 std::to_string(step));
    return Status::OK();
  }
  if (secs <= 0) return Status::OK();
  const double rate = static_cast<double>(steps) / secs;
  char line[96];
  std::snprintf(line, sizeof(line), "%s: %.6g", tag_.c_str(), rate);
  options_.log(line);
  if (options_.add_scalar) GR_RETURN_IF_ERROR(options_.add_scalar(tag_, rate, step));
  return Status::OK();
}

// ----------------------------------------------------------- StopAtStepHook

StopAtStepHook::StopAtStepHook(std::optional<int64_t> num_steps, std::optional<int64_t> last_step)
    : num_steps_(num_steps), last_step_(last_step) {}

Status StopAtStepHook::Begin(Scaffold* scaffold) {
  if (!num_steps_ && !last_step_) return errors::InvalidArgument("One of num_steps or last_step must be specified.");
  if (num_steps_ && last_step_) return errors::InvalidArgument("Only one of num_steps or last_step can be specified.");
  return RequireGlobalStep(*scaffold, "StopAtStepHook", &global_step_);
}

Status StopAtStepHook::AfterCreateSession(Session* session, Coordinator*) {
  if (last_step_) return Status::OK();  // given, or fixed at the first creation
  int64_t step = 0;
  GR_RETURN_IF_ERROR(ReadInt64Scalar(session, global_step_, &step));
  last_step_ = step + *num_steps_;
  return Status::OK();
}

Status StopAtStepHook::BeforeRun(SessionRunContext*, SessionRunArgs* args) {
  args->fetches.push_back(global_step_);
  return Status::OK();
}

Status StopAtStepHook::AfterRun(SessionRunContext* context, const SessionRunValues& values) {
  auto due = [this](int64_t step) { return step >= *last_step_; };
  std::optional<int64_t> step;
  GR_RETURN_IF_ERROR(FreshStepIfDue(context, values, global_step_, due, &step));
  if (step && due(*step)) context->RequestStop();
  return Status::OK();
}

// ------------------------------------------------------------ NanTensorHook

NanTensorHook::NanTensorHook(std::string loss_tensor, bool fail_on_nan_loss, LogSink log)
    : loss_(std::move(loss_tensor)), fail_(fail_on_nan_loss), log_(std::move(log)) {}

Status NanTensorHook::BeforeRun(SessionRunContext*, SessionRunArgs* args) {
  args->fetches.push_back(loss_);
  return Status::OK();
}

Status NanTensorHook::AfterRun(SessionRunContext* context, const SessionRunValues& values) {
  if (values.results.size() != 1 || !HasNaN(values.results[0])) return Status::OK();
  if (fail_) {
    log_("Model diverged with loss = NaN.");
    return errors::InvalidArgument("NaN loss during training. (", loss_, ")");
  }
  log_("Model diverged with loss = NaN. Requesting a stop.");
  context->RequestStop();
  return Status::OK();
}

// --------------------------------------------------------- SummarySaverHook

SummarySaverHook::SummarySaverHook(Options options)
    : options_(std::move(options)), timer_(options_.save_secs, options_.save_steps, options_.clock) {}

Status SummarySaverHook::Begin(Scaffold* scaffold) {
  GR_RETURN_IF_ERROR(timer_.Validate().WithContext("SummarySaverHook"));
  GR_RETURN_IF_ERROR(RequireGlobalStep(*scaffold, "SummarySaverHook", &global_step_));
  // Neither given: the scaffold's summary op, known once it is finalized
  // (TF reads it lazily too).
  if (options_.summary_op.empty() && options_.scalars.empty()) scaffold_ = scaffold;
  if (options_.writer == nullptr) {
    if (options_.output_dir.empty())
      return errors::InvalidArgument("SummarySaverHook needs an output_dir or a writer");
    std::unique_ptr<EventFileWriter> w;
    GR_RETURN_IF_ERROR(EventFileWriter::Create(options_.output_dir, "", &w));
    options_.writer = std::move(w);
  }
  return Status::OK();
}

Status SummarySaverHook::AfterCreateSession(Session*, Coordinator*) {
  if (scaffold_ != nullptr) options_.summary_op = scaffold_->summary_op;
  return Status::OK();
}

Status SummarySaverHook::BeforeRun(SessionRunContext*, SessionRunArgs* args) {
  request_summary_ = !next_step_ || timer_.ShouldTriggerForStep(*next_step_);
  args->fetches.push_back(global_step_);
  if (request_summary_) {
    for (const std::string& t : options_.summary_op) args->fetches.push_back(t);
    for (const auto& [tag, t] : options_.scalars) args->fetches.push_back(t);
  }
  return Status::OK();
}

Status SummarySaverHook::AfterRun(SessionRunContext* context, const SessionRunValues& values) {
  if (values.results.empty()) return errors::Internal("SummarySaverHook: no global step fetched");
  SessionRunValues step_value;
  step_value.results = {values.results[0]};
  int64_t step = 0;
  GR_RETURN_IF_ERROR(StepOf(step_value, &step));
  ++step;  // the fetched value may predate this Run's increment: re-read when writing
  if (!next_step_ || request_summary_) GR_RETURN_IF_ERROR(ReadInt64Scalar(context->session(), global_step_, &step));
  if (!next_step_) {
    proto::Event start;
    start.set_step(step);
    start.mutable_session_log()->set_status(proto::SessionLog::START);
    GR_RETURN_IF_ERROR(options_.writer->WriteEvent(start));
  }
  if (request_summary_) {
    if (values.results.size() != 1 + options_.summary_op.size() + options_.scalars.size())
      return errors::Internal("SummarySaverHook: got ", values.results.size(), " values for its fetches");
    timer_.UpdateLastTriggeredStep(step);
    size_t k = 1;
    for (const std::string& name : options_.summary_op) {
      const Tensor& t = values.results[k++];
      if (t.dtype() != GR_STRING)
        return errors::InvalidArgument("summary tensor ", name, " is ", DataTypeString(t.dtype()),
                                       ", not a serialized Summary (string)");
      for (int64_t i = 0; i < t.NumElements(); ++i)
        GR_RETURN_IF_ERROR(options_.writer->AddSummary(std::string(t.string_at(i)), step).WithContext("summary " + name));
    }
    for (const auto& [tag, name] : options_.scalars) {
      const Tensor& t = values.results[k++];
      double v;
      if (t.NumElements() != 1) return errors::InvalidArgument("scalar summary ", tag, ": ", name, " is not a scalar");
      switch (t.dtype()) {
        case GR_FLOAT: v = t.data<float>()[0]; break;
        case GR_DOUBLE: v = t.data<double>()[0]; break;
        case GR_INT32: v = t.data<int32_t>()[0]; break;
        case GR_INT64: v = static_cast<double>(t.data<int64_t>()[0]); break;
        default:
          return errors::InvalidArgument("scalar summary ", tag, ": ", name, " is ", DataTypeString(t.dtype()),
                                         ", not a number");
      }
      GR_RETURN_IF_ERROR(options_.writer->AddScalar(tag, v, step));
    }
  }
  next_step_ = step + 1;
  return Status::OK();
}

Status SummarySaverHook::End(Session*) { return options_.writer->Flush(); }

// -------------------------------------------------------- LoggingTensorHook

LoggingTensorHook::LoggingTensorHook(Options options)
    : options_(std::move(options)),
      timer_(options_.every_n_secs, options_.every_n_secs > 0 ? 0 : options_.every_n_iter, options_.clock) {}

Status LoggingTensorHook::Begin(Scaffold*) {
  const bool secs = options_.every_n_secs > 0, iters = options_.every_n_iter > 0;
  if (options_.every_n_iter < 0 || options_.every_n_secs < 0 || (secs && iters) || (!secs && !iters && !options_.at_end))
    return errors::InvalidArgument(
        "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.");
  if (options_.tensors.empty()) return errors::InvalidArgument("LoggingTensorHook: no tensors to log");
  return Status::OK();
}

Status LoggingTensorHook::BeforeRun(SessionRunContext*, SessionRunArgs* args) {
  const bool periodic = options_.every_n_iter > 0 || options_.every_n_secs > 0;
  should_trigger_ = periodic && timer_.ShouldTriggerForStep(iter_count_);
  if (should_trigger_)
    for (const auto& [tag, tensor] : options_.tensors) args->fetches.push_back(tensor);
  return Status::OK();
}

Status LoggingTensorHook::AfterRun(SessionRunContext*, const SessionRunValues& values) {
  if (should_trigger_) {
    const auto since = timer_.UpdateLastTriggeredStep(iter_count_);
    Log(values.results, since ? std::optional<double>(since->first) : std::nullopt);
  }
  ++iter_count_;
  return Status::OK();
}

Status LoggingTensorHook::End(Session* session) {
  if (!options_.at_end) return Status::OK();
  std::vector<std::string> fetches;
  for (const auto& [tag, tensor] : options_.tensors) fetches.push_back(tensor);
  std::vector<Tensor> values;
  GR_RETURN_IF_ERROR(session->Run({}, fetches, {}, &values).WithContext("LoggingTensorHook at end"));
  Log(values, std::nullopt);
  return Status::OK();
}

void LoggingTensorHook::Log(const std::vector<Tensor>& values, std::optional<double> elapsed) {
  std::string line;
  if (options_.formatter) {
    std::vector<std::pair<std::string, Tensor>> tagged;
    for (size_t i = 0; i < values.size() && i < options_.tensors.size(); ++i)
      tagged.emplace_back(options_.tensors[i].first, values[i]);
    line = options_.formatter(tagged);
  } else {
    for (size_t i = 0; i < values.size() && i < options_.tensors.size(); ++i)
      line += (i ? ", " : "") + options_.tensors[i].first + " = " + values[i].SummarizeValue(10);
    if (elapsed) {
      char secs[48];
      std::snprintf(secs, sizeof(secs), " (%.3f sec)", *elapsed);
      line += secs;
    }
  }
  options_.log(line);
}

// ------------------------------------------------ MonitoredTrainingSession

Status NewMonitoredTrainingSession(std::shared_ptr<Scaffold> scaffold, const MonitoredTrainingSessionOptions& options,
                                   std::unique_ptr<MonitoredSession>* out) {
  std::vector<std::shared_ptr<SessionRunHook>> hooks = options.chief_only_hooks;
  const std::string summary_dir = options.summary_dir.empty() ? options.checkpoint_dir : options.summary_dir;
  // One event file for the hooks that write summaries (TF's
  // SummaryWriterCache gives them one writer per directory).
  std::shared_ptr<EventFileWriter> writer;
  auto get_writer = [&]() -> Status {
    if (writer != nullptr) return Status::OK();
    std::unique_ptr<EventFileWriter> w;
    GR_RETURN_IF_ERROR(EventFileWriter::Create(summary_dir, "", &w));
    writer = std::move(w);
    return Status::OK();
  };
  if (!summary_dir.empty() && options.log_step_count_steps > 0) {
    GR_RETURN_IF_ERROR(get_writer());
    StepCounterHook::Options step_counter;
    step_counter.every_n_steps = options.log_step_count_steps;
    step_counter.add_scalar = [writer](const std::string& tag, double v, int64_t step) {
      return writer->AddScalar(tag, v, step);
    };
    hooks.push_back(std::make_shared<StepCounterHook>(step_counter));
  }
  if (!summary_dir.empty() && options.save_summaries_steps > 0) {
    // Only when the graph has summaries (TF: a scaffold whose summary_op is None writes nothing).
    const auto& collections = scaffold->meta_graph().collection_def();
    if (!scaffold->summary_op.empty() || collections.count(kSummaryOpCollection) || collections.count(kSummariesCollection)) {
      GR_RETURN_IF_ERROR(get_writer());
      SummarySaverHook::Options summaries;
      summaries.save_steps = options.save_summaries_steps;
      summaries.writer = writer;
      hooks.push_back(std::make_shared<SummarySaverHook>(summaries));
    }
  }
  if (!options.checkpoint_dir.empty()) {
    CheckpointSaverHook::Options ckpt;
    ckpt.checkpoint_dir = options.checkpoint_dir;
    ckpt.save_steps = options.save_checkpoint_steps;
    ckpt.save_secs = options.save_checkpoint_steps > 0 ? 0 : options.save_checkpoint_secs;
    if (options.save_checkpoint_steps <= 0 && options.save_checkpoint_secs <= 0) ckpt.save_secs = 600;
    if (options.checkpoint_dir == summary_dir) ckpt.summary_writer = writer;
    hooks.push_back(std::make_shared<CheckpointSaverHook>(ckpt));
  }
  hooks.insert(hooks.end(), options.hooks.begin(), options.hooks.end());
  return MonitoredSession::Create(
      std::make_unique<ChiefSessionCreator>(std::move(scaffold), options.session_options, options.checkpoint_dir),
      std::move(hooks), out, options.recoverable);
}

}  // namespace graphrt
