// Trains the MLP whose TensorFlow 1-style training graph is checked in beside
// this file (mlp_train.pbtxt: 8 inputs, two hidden ReLU layers of 32, 4
// classes, mean sparse softmax cross-entropy, Adam), the way a TF1 Python
// script does with tf.train.MonitoredTrainingSession:
//
//   train_mlp CHECKPOINT_DIR [--steps N] [--graph FILE]
//
// The first run initialises the variables; every later run resumes from the
// latest checkpoint in CHECKPOINT_DIR (also after the process was killed)
// and trains until the global step reaches N. Checkpoints are written every
// 50 steps and at the end, the loss every 10 steps as a TensorBoard scalar
// summary (events.out.tfevents.* in CHECKPOINT_DIR), and the loss curve is
// printed every 25 steps.
//
// The data is four Gaussian blobs in 8 dimensions from a fixed-seed
// generator, cut into 8 minibatches of 64 taken in turn by global step, so a
// resumed run sees exactly the batches an uninterrupted one would.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/client/hooks.h"
#include "graphrt/client/monitored_session.h"
#include "graphrt/client/saver.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"

namespace {

constexpr int kFeatures = 8, kClasses = 4, kBatch = 64, kBatches = 8;

// splitmix64 and Box-Muller: a generator whose output is the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  double Uniform() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  double Normal() { return std::sqrt(-2 * std::log(1 - Uniform())) * std::cos(2 * M_PI * Uniform()); }

 private:
  uint64_t state_;
};

struct Batch {
  graphrt::Tensor x, labels;
};

std::vector<Batch> MakeData() {
  Rng rng(42);
  std::vector<std::vector<double>> centers(kClasses, std::vector<double>(kFeatures));
  for (auto& c : centers)
    for (double& v : c) v = 0.6 * rng.Normal();  // overlapping classes: a curve worth printing
  std::vector<Batch> batches;
  for (int b = 0; b < kBatches; ++b) {
    graphrt::Tensor x(GR_FLOAT, graphrt::TensorShape({kBatch, kFeatures}));
    graphrt::Tensor labels(GR_INT32, graphrt::TensorShape({kBatch}));
    for (int i = 0; i < kBatch; ++i) {
      const int label = static_cast<int>(rng.Uniform() * kClasses);
      labels.data<int32_t>()[i] = label;
      for (int f = 0; f < kFeatures; ++f)
        x.data<float>()[i * kFeatures + f] = static_cast<float>(centers[label][f] + rng.Normal());
    }
    batches.push_back({std::move(x), std::move(labels)});
  }
  return batches;
}

int Fail(const std::string& what, const graphrt::Status& s) {
  std::fprintf(stderr, "train_mlp: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string checkpoint_dir, graph_path = TRAIN_MLP_DEFAULT_GRAPH;
  int64_t last_step = 400;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      last_step = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--graph") == 0 && i + 1 < argc) {
      graph_path = argv[++i];
    } else if (argv[i][0] != '-' && checkpoint_dir.empty()) {
      checkpoint_dir = argv[i];
    } else {
      checkpoint_dir.clear();
      break;
    }
  }
  if (checkpoint_dir.empty() || last_step <= 0) {
    std::fprintf(stderr, "usage: train_mlp CHECKPOINT_DIR [--steps N] [--graph FILE]\n");
    return 2;
  }

  // The standard op plugins installed beside the library.
  graphrt::Status s = graphrt::Runtime::Global().LoadDefaultPlugins();
  if (!s.ok()) return Fail("loading the op plugins", s);
  graphrt::proto::MetaGraphDef meta_graph;
  s = graphrt::ReadGraphDefFromFile(graph_path, meta_graph.mutable_graph_def());
  if (!s.ok()) return Fail("reading " + graph_path, s);

  const std::string resume_from = graphrt::LatestCheckpoint(checkpoint_dir);
  if (!resume_from.empty()) std::printf("resuming from %s\n", resume_from.c_str());

  graphrt::MonitoredTrainingSessionOptions options;
  options.session_options.config.set_intra_op_parallelism_threads(1);  // bit-reproducible runs
  options.checkpoint_dir = checkpoint_dir;
  options.save_checkpoint_steps = 50;
  options.save_summaries_steps = 10;
  options.log_step_count_steps = 0;
  options.hooks.push_back(std::make_shared<graphrt::StopAtStepHook>(std::nullopt, last_step));
  options.hooks.push_back(std::make_shared<graphrt::NanTensorHook>("Mean:0"));
  graphrt::SummarySaverHook::Options summaries;
  summaries.save_steps = 10;
  summaries.output_dir = checkpoint_dir;
  summaries.scalars = {{"loss", "Mean:0"}};
  options.hooks.push_back(std::make_shared<graphrt::SummarySaverHook>(summaries));
  std::unique_ptr<graphrt::MonitoredSession> session;
  s = graphrt::NewMonitoredTrainingSession(std::make_shared<graphrt::Scaffold>(meta_graph), options, &session);
  if (!s.ok()) return Fail("creating the session", s);

  const std::vector<Batch> data = MakeData();
  int64_t step = 0;
  s = graphrt::ReadInt64Scalar(session->raw_session(), "global_step:0", &step);
  if (!s.ok()) return Fail("reading global_step", s);
  std::printf("starting at step %lld, training to step %lld\n", static_cast<long long>(step),
              static_cast<long long>(last_step));
  while (!session->ShouldStop()) {
    const Batch& batch = data[step % kBatches];
    std::vector<graphrt::Tensor> out;
    s = session->Run({{"x:0", batch.x}, {"labels:0", batch.labels}}, {"Mean:0"}, {"train"}, &out);
    if (!s.ok()) return Fail("step " + std::to_string(step + 1), s);
    ++step;
    if (step % 25 == 0 || step == last_step || step == 1)
      std::printf("step %5lld  loss %.6f\n", static_cast<long long>(step), out[0].scalar<float>());
  }
  s = session->Close();
  if (!s.ok()) return Fail("closing", s);
  std::printf("done at step %lld; checkpoints and summaries in %s\n", static_cast<long long>(step),
              checkpoint_dir.c_str());
  return 0;
}
