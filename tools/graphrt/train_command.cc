// `graphrt train`: runs a training op in a loop under a MonitoredSession
// (libgraphrt_client): initialise or resume from the latest checkpoint,
// checkpoints every N steps and at the end (and on Ctrl-C), the loss as a
// scalar summary, a progress line.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "feeds.h"
#include "graphrt/client/hooks.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/monitored_session.h"
#include "graphrt/client/saver.h"
#include "model_source.h"
#include "session_config.h"

namespace graphrt {
namespace cli {
namespace {

const char kUsage[] =
    "usage: graphrt train GRAPH --train-op NODE --steps N [--loss TENSOR] [--feed NAME=FILE.npy]...\n"
    "                     [--checkpoint-dir DIR [--save-every N]] [--summary-dir DIR [--summary-every N]]\n"
    "\n"
    "Runs NODE (e.g. a GradientDescent update) with the feeds until the global step\n"
    "reaches N, under a MonitoredSession.\n"
    "\n"
    "  GRAPH is a GraphDef (.pb/.pbtxt), a .meta file (with --checkpoint PREFIX to\n"
    "  start from that checkpoint) or a SavedModel directory (--tag, default serve).\n"
    "  Start: with --checkpoint-dir holding a checkpoint, training resumes from the\n"
    "  latest one (weights and global step). Else the --init nodes run (with the\n"
    "  feeds); without --init the graph's init op (collection init_op, else its\n"
    "  variables' initializers) runs, and a SavedModel or .meta --checkpoint then\n"
    "  restores its saved weights over them.\n"
    "  The global step: the graph's (collection global_step, or a variable named\n"
    "  global_step), which the train op must increment. A graph without one gets\n"
    "  an int64 variable global_step that each step increments and that the\n"
    "  checkpoints hold, so a restarted run continues the count.\n"
    "  Checkpoints: DIR/model.ckpt-<step> at the start, every --save-every steps,\n"
    "  at the end and on Ctrl-C (the 5 newest are kept). --summary-dir writes the\n"
    "  loss (scalar 'loss') and the graph's summaries every --summary-every steps\n"
    "  to a TensorBoard event file. A NaN loss stops training with an error.\n"
    "  Progress: one line rewritten in place on a terminal; else a line every\n"
    "  --log-every steps.\n"
    "\n"
    "examples:\n"
    "  graphrt train model.pb --train-op train --loss loss:0 --feed x:0=x.npy --feed y:0=y.npy \\\n"
    "      --init init --steps 1000 --checkpoint-dir ckpt/ --save-every 100\n"
    "  graphrt train saved_model_dir/ --tag train,serve --train-op train --loss Mean:0 --steps 200 ...\n";

std::atomic<bool> g_interrupted{false};

extern "C" void OnSigint(int) { g_interrupted = true; }

// Ctrl-C asks the loop to stop after the current step; restored on exit.
class SigintGuard {
 public:
  SigintGuard() {
    struct sigaction sa = {};
    sa.sa_handler = OnSigint;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGINT, &sa, &old_) == 0;
  }
  ~SigintGuard() {
    if (installed_) sigaction(SIGINT, &old_, nullptr);
  }

 private:
  struct sigaction old_ = {};
  bool installed_ = false;
};

std::vector<std::string> Strings(const po::variables_map& vm, const char* key) {
  return vm.count(key) ? vm[key].as<std::vector<std::string>>() : std::vector<std::string>();
}

// Prints progress: on a terminal one line rewritten at most 10 times a
// second; else a line every `log_every` steps. Fails when a step leaves the
// global step where it was (the loop would never reach --steps).
class ProgressHook : public SessionRunHook {
 public:
  ProgressHook(std::string global_step, std::string loss, int64_t last_step, bool tty, int64_t log_every)
      : global_step_(std::move(global_step)), loss_(std::move(loss)), last_step_(last_step), tty_(tty),
        log_every_(log_every) {}

  Status AfterCreateSession(Session* session, Coordinator*) override {
    GR_RETURN_IF_ERROR(ReadInt64Scalar(session, global_step_, &step_));
    if (!start_step_) start_step_ = step_;
    mark_step_ = step_;
    mark_time_ = Now();
    return Status::OK();
  }
  Status BeforeRun(SessionRunContext*, SessionRunArgs* args) override {
    if (!loss_.empty()) args->fetches.push_back(loss_);
    return Status::OK();
  }
  Status AfterRun(SessionRunContext* context, const SessionRunValues& values) override {
    const int64_t before = step_;
    GR_RETURN_IF_ERROR(ReadInt64Scalar(context->session(), global_step_, &step_));
    if (step_ <= before)
      return errors::FailedPrecondition("the global step (", global_step_, ") stayed at ", before,
                                        " after a training step: the train op must increment it");
    if (!values.results.empty() && values.results[0].NumElements() == 1) {
      const Tensor& t = values.results[0];
      if (t.dtype() == GR_FLOAT) loss_value_ = t.data<float>()[0];
      if (t.dtype() == GR_DOUBLE) loss_value_ = t.data<double>()[0];
    }
    const double now = Now();
    const bool last = step_ >= last_step_;
    if (tty_ ? (now - printed_ >= 0.1 || last) : (step_ % log_every_ == 0 || last)) {
      Print(now);
      printed_ = now;
    }
    return Status::OK();
  }
  // Ends the progress line on a terminal.
  void Finish() {
    if (tty_ && printed_ > 0) std::cout << "\n" << std::flush;
  }
  // A line from elsewhere (checkpoint saves): on its own line.
  void Log(const std::string& line) {
    if (tty_ && printed_ > 0) std::cout << "\r\033[K";
    std::cout << line << "\n" << std::flush;
    if (tty_ && printed_ > 0) Print(Now());
  }
  int64_t step() const { return step_; }
  int64_t start_step() const { return start_step_.value_or(step_); }
  std::optional<double> loss() const { return loss_value_; }

 private:
  static double Now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void Print(double now) {
    const double secs = now - mark_time_;
    char rate[64] = "";
    if (secs > 0 && step_ > mark_step_) std::snprintf(rate, sizeof(rate), ", %.1f steps/s", (step_ - mark_step_) / secs);
    char loss[64] = "";
    if (loss_value_) std::snprintf(loss, sizeof(loss), ", loss %.6g", *loss_value_);
    std::string line = "step " + std::to_string(step_) + "/" + std::to_string(last_step_) + rate + loss;
    if (tty_) {
      std::cout << "\r\033[K" << line << std::flush;
      // The rate over about the last second, not since the start.
      if (now - mark_time_ >= 1.0) {
        mark_step_ = step_;
        mark_time_ = now;
      }
    } else {
      std::cout << line << "\n" << std::flush;
      mark_step_ = step_;
      mark_time_ = now;
    }
  }

  std::string global_step_;
  std::string loss_;
  int64_t last_step_;
  bool tty_;
  int64_t log_every_;
  int64_t step_ = 0;
  std::optional<int64_t> start_step_;
  std::optional<double> loss_value_;
  int64_t mark_step_ = 0;
  double mark_time_ = 0;
  double printed_ = 0;
};

}  // namespace

int TrainCommand(const std::vector<std::string>& args) {
  po::options_description visible("options");
  visible.add_options()
      ("train-op", po::value<std::string>()->value_name("NODE"), "the node to run each step (required)")
      ("steps", po::value<int64_t>()->value_name("N"), "train until the global step reaches N (required)")
      ("loss", po::value<std::string>()->value_name("TENSOR"),
       "a float scalar to show, to write as summary 'loss' and to check for NaN")
      ("feed", po::value<std::vector<std::string>>()->composing()->value_name("NAME=FILE.npy"),
       "feed tensor NAME from a .npy file each step (repeatable)")
      ("init", po::value<std::vector<std::string>>()->composing()->value_name("NODE"),
       "run NODE to initialise when there is no checkpoint to resume from (repeatable)")
      ("checkpoint-dir", po::value<std::string>()->value_name("DIR"),
       "resume from DIR's latest checkpoint; save DIR/model.ckpt-<step>")
      ("save-every", po::value<int64_t>()->default_value(100)->value_name("N"), "checkpoint every N steps")
      ("summary-dir", po::value<std::string>()->value_name("DIR"), "write TensorBoard summaries to DIR")
      ("summary-every", po::value<int64_t>()->default_value(100)->value_name("N"), "write summaries every N steps")
      ("log-every", po::value<int64_t>()->default_value(100)->value_name("N"),
       "when stdout is not a terminal: a progress line every N steps");
  AddSessionConfigOptions(&visible);
  AddModelOptions(&visible, /*for_run=*/true);
  AddPluginOptions(&visible);
  po::options_description hidden;
  hidden.add_options()("graph", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("graph", 1);
  po::variables_map vm;
  if (!ParseArgs("train", args, visible, hidden, pos, kUsage, &vm)) return 0;
  if (!vm.count("graph")) throw UsageError("train: missing GRAPH (see 'graphrt train --help')");
  if (!vm.count("train-op")) throw UsageError("train: --train-op NODE is required");
  if (!vm.count("steps")) throw UsageError("train: --steps N is required");
  const std::string graph_path = vm["graph"].as<std::string>();
  const std::string train_op = vm["train-op"].as<std::string>();
  const int64_t steps = vm["steps"].as<int64_t>();
  if (steps < 1) throw UsageError("--steps must be at least 1, got " + std::to_string(steps));
  for (const char* flag : {"save-every", "summary-every", "log-every"})
    if (vm[flag].as<int64_t>() < 1)
      throw UsageError(std::string("--") + flag + " must be at least 1, got " + std::to_string(vm[flag].as<int64_t>()));
  std::vector<Feed> feeds = ParseFeedSpecs(Strings(vm, "feed"));
  const std::vector<std::string> inits = Strings(vm, "init");
  const std::string checkpoint_dir = vm.count("checkpoint-dir") ? vm["checkpoint-dir"].as<std::string>() : "";
  const std::string summary_dir = vm.count("summary-dir") ? vm["summary-dir"].as<std::string>() : "";

  const SessionOptions options = SessionOptionsFromArgs(vm);
  LoadPlugins(vm);

  // The graph, with its collections when it comes from a model.
  proto::MetaGraphDef meta;
  std::string loss = vm.count("loss") ? vm["loss"].as<std::string>() : "";
  std::function<Status(Session*)> restore_model;  // the model's own saved weights
  if (IsModelPath(graph_path)) {
    ModelSource model(vm, graph_path, options);
    meta = model.meta_graph_def();
    for (Feed& f : feeds) f.name = model.FeedTensor(f.name);
    if (!loss.empty()) loss = model.FetchTensor(loss);
    std::string prefix;
    if (IsMetaGraphFile(graph_path)) {
      if (vm.count("checkpoint")) prefix = vm["checkpoint"].as<std::string>();
    } else if (MaybeSavedModelDirectory(graph_path)) {
      prefix = graph_path + "/" + kSavedModelVariablesDirectory + "/" + kSavedModelVariablesFilename;
      if (!CheckpointExists(prefix)) prefix.clear();
    }
    if (!prefix.empty() && !meta.saver_def().restore_op_name().empty()) {
      std::unique_ptr<Saver> s;
      Check(Saver::FromSaverDef(meta.saver_def(), nullptr, SaverOptions(), &s), graph_path);
      std::shared_ptr<Saver> saver = std::move(s);
      restore_model = [saver, prefix](Session* session) { return saver->Restore(session, prefix); };
    }
  } else if (vm.count("tag") || vm.count("signature") || vm.count("checkpoint")) {
    throw UsageError("--tag, --signature and --checkpoint need a SavedModel directory or a .meta file");
  } else {
    *meta.mutable_graph_def() = LoadGraph(graph_path);
  }
  const proto::GraphDef& graph = meta.graph_def();
  CheckNodeName(graph, "--train-op", train_op, graph_path);
  for (const std::string& name : inits) CheckNodeName(graph, "--init", name, graph_path);
  if (!loss.empty()) CheckTensorName(graph, "--loss", loss, graph_path);
  ReadFeeds(graph, graph_path, &feeds);
  FeedList feed_list;
  for (const Feed& f : feeds) feed_list.emplace_back(f.name, f.value);

  // The global step: the graph's, else one added here and stepped with the
  // train op. Its checkpoints must hold it, so the graph's own saver (which
  // does not know it) gives way to a new one over every variable.
  std::string global_step;
  Check(GetGlobalStep(meta, &global_step), graph_path);
  std::vector<std::string> targets = {train_op};
  std::vector<std::string> extra_init;
  if (global_step.empty()) {
    Check(GetOrCreateGlobalStep(&meta, nullptr, &global_step), graph_path);
    std::string increment;
    Check(AddGlobalStepIncrement(&meta, nullptr, global_step, &increment), graph_path);
    targets.push_back(increment);
    extra_init.push_back(global_step + "/Assign");
    meta.mutable_collection_def()->erase(kSaversCollection);
  }
  const std::string step_tensor = global_step + ":0";

  auto scaffold = std::make_shared<Scaffold>(meta);
  if (!inits.empty()) {
    scaffold->init_op = inits;
    scaffold->init_op.insert(scaffold->init_op.end(), extra_init.begin(), extra_init.end());
  } else if (restore_model) {
    scaffold->init_fn = restore_model;
  }
  // Initializers may read placeholders (a variable initialised from a fed value).
  scaffold->init_feed_dict = feed_list;
  std::string main_op;
  Check(GetInitOp(meta, graph_path, &main_op), graph_path);
  if (!main_op.empty()) scaffold->local_init_op = {main_op};  // tables, assets: as the loader runs them
  Check(scaffold->Finalize(), graph_path);

  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  auto progress = std::make_shared<ProgressHook>(step_tensor, loss, steps, tty, vm["log-every"].as<int64_t>());
  std::vector<std::shared_ptr<SessionRunHook>> hooks;
  // First, so that a NaN step fails before it is shown or counted.
  if (!loss.empty()) hooks.push_back(std::make_shared<NanTensorHook>(loss, true, [](const std::string&) {}));
  hooks.push_back(progress);
  std::shared_ptr<EventFileWriter> writer;
  if (!summary_dir.empty()) {
    std::unique_ptr<EventFileWriter> w;
    Check(EventFileWriter::Create(summary_dir, "", &w), "--summary-dir");
    writer = std::move(w);
    SummarySaverHook::Options summaries;
    summaries.save_steps = vm["summary-every"].as<int64_t>();
    summaries.writer = writer;
    summaries.summary_op = scaffold->summary_op;
    if (!loss.empty()) summaries.scalars = {{"loss", loss}};
    if (!summaries.summary_op.empty() || !summaries.scalars.empty())
      hooks.push_back(std::make_shared<SummarySaverHook>(summaries));
  }
  if (!checkpoint_dir.empty()) {
    CheckpointSaverHook::Options ckpt;
    ckpt.checkpoint_dir = checkpoint_dir;
    ckpt.save_steps = vm["save-every"].as<int64_t>();
    ckpt.log = [progress](const std::string& line) { progress->Log(line); };
    if (summary_dir == checkpoint_dir) ckpt.summary_writer = writer;
    hooks.push_back(std::make_shared<CheckpointSaverHook>(ckpt));
  }
  hooks.push_back(std::make_shared<StopAtStepHook>(std::nullopt, steps));

  auto creator = std::make_unique<ChiefSessionCreator>(scaffold, options, checkpoint_dir);
  const ChiefSessionCreator* chief = creator.get();
  std::unique_ptr<MonitoredSession> session;
  Check(MonitoredSession::Create(std::move(creator), hooks, &session), "starting " + graph_path);
  if (!chief->restored_from().empty())
    progress->Log("resumed from " + chief->restored_from() + " at step " + std::to_string(progress->start_step()));

  const auto start = std::chrono::steady_clock::now();
  SigintGuard sigint;
  g_interrupted = false;
  Status status;
  while (progress->step() < steps && !session->ShouldStop() && !g_interrupted) {
    status = session->Run(feed_list, {}, targets, nullptr);
    if (!status.ok()) break;
  }
  progress->Finish();
  if (!status.ok()) {
    // A failed step: no end-of-training checkpoint (TF: end() is not called
    // while an exception propagates); the last periodic one stays.
    session->Close().IgnoreError();
    Check(status, "step " + std::to_string(progress->step() + 1));
  }
  Check(session->Close(), "finishing");  // end hooks: the final checkpoint
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t trained = progress->step() - progress->start_step();
  char line[160];
  std::snprintf(line, sizeof(line), "%s at step %lld: %lld step%s in %.2f s", g_interrupted ? "interrupted" : "done",
                static_cast<long long>(progress->step()), static_cast<long long>(trained), trained == 1 ? "" : "s",
                secs);
  std::cout << line;
  if (progress->loss()) std::cout << ", loss " << *progress->loss();
  std::cout << "\n";
  if (!checkpoint_dir.empty()) std::cout << "checkpoint: " << LatestCheckpoint(checkpoint_dir) << "\n";
  if (writer != nullptr) std::cout << "summaries: " << writer->filename() << "\n";
  return g_interrupted ? 130 : 0;
}

}  // namespace cli
}  // namespace graphrt
