// Writes one TF1-style training GraphDef of bench/train_workloads.h to a
// file, byte-identical on every run and machine, so that an example or a
// test can check in a reproducible graph.
//
//   graphrt_make_train_graph W6|W7|W8|mlp OUT.pb [--batch=N] [--mlp=IN,HIDDEN,CLASSES]
//                            [--optimizer=adam|momentum|gd] [--lr=X] [--momentum=X]
//                            [--labels=int32|int64] [--seed=N]
//
// W6/W7/W8 are the benchmark nets (their optimizers unless --optimizer is
// given); `mlp` is W6's MLP with the sizes of --mlp (default 784,512,10).
// OUT ending in .pbtxt gets the text format, anything else the binary one.
// The graph has Placeholders `x` (float) and `labels`, the loss `Mean`, the
// targets `init` (run once) and `train` (one step); the program prints them.
#include <google/protobuf/text_format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "train_workloads.h"
#include "workload_runner.h"

namespace {

using namespace graphrt::bench;

int Usage(const char* why) {
  std::fprintf(stderr,
               "graphrt_make_train_graph: %s\n"
               "usage: graphrt_make_train_graph W6|W7|W8|mlp OUT.pb [--batch=N] [--mlp=IN,HIDDEN,CLASSES]\n"
               "         [--optimizer=adam|momentum|gd] [--lr=X] [--momentum=X] [--labels=int32|int64] [--seed=N]\n",
               why);
  return 2;
}

// A positive integer flag value, or -1.
int64_t Positive(const char* s) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  return (end != s && *end == '\0' && v > 0 && v <= (1 << 20)) ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage("want a workload and an output file");
  const std::string which = argv[1], out = argv[2];
  int64_t batch = 0;
  std::vector<int64_t> mlp = {784, 512, 10};
  std::string optimizer, labels = "int32";
  float lr = -1, momentum = 0.9f;
  uint64_t seed = 0;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--batch") {
      if ((batch = Positive(value.c_str())) < 0) return Usage("--batch wants a positive integer");
    } else if (key == "--mlp") {
      const std::vector<std::string> parts = Split(value);
      if (parts.size() != 3) return Usage("--mlp wants IN,HIDDEN,CLASSES");
      for (int k = 0; k < 3; ++k)
        if ((mlp[k] = Positive(parts[k].c_str())) < 0) return Usage("--mlp wants positive integers");
    } else if (key == "--optimizer" && (value == "adam" || value == "momentum" || value == "gd")) {
      optimizer = value;
    } else if (key == "--lr" || key == "--momentum") {
      char* end = nullptr;
      const float v = std::strtof(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !(v > 0)) return Usage("--lr and --momentum want a positive number");
      (key == "--lr" ? lr : momentum) = v;
    } else if (key == "--labels" && (value == "int32" || value == "int64")) {
      labels = value;
    } else if (key == "--seed") {
      seed = std::strtoull(value.c_str(), nullptr, 10);
    } else {
      return Usage(("unknown or malformed flag " + a).c_str());
    }
  }

  // The builder holds every weight's initial value in memory: keep each
  // MLP weight matrix under 2^28 floats (1 GiB). Each size is <= 2^20, so
  // the products cannot overflow.
  if (mlp[0] * mlp[1] > (int64_t{1} << 28) || mlp[1] * mlp[1] > (int64_t{1} << 28) ||
      mlp[1] * mlp[2] > (int64_t{1} << 28))
    return Usage("--mlp: a weight matrix would exceed 2^28 elements");
  NetSpec net;
  TrainWorkload base;
  if (which == "W6" || which == "mlp") base = MlpTrain(batch ? batch : 64, mlp[0], mlp[1], mlp[2]);
  else if (which == "W7") base = LeNet5Train(batch ? batch : 64);
  else if (which == "W8") base = SmallCnnTrain(batch ? batch : 8);
  else return Usage(("unknown workload " + which).c_str());
  // Rebuild from the workload's own spec with the flags applied.
  net.name = which == "mlp" ? "mlp_train" : base.name;
  net.input_dims = base.x.dims;
  net.classes = base.classes;
  net.layers = base.layers;
  net.seed = seed ? seed : (which == "W7" ? 5 : which == "W8" ? 4 : 2);
  net.optimizer = base.optimizer;
  if (optimizer == "adam") net.optimizer = Adam(lr > 0 ? lr : 1e-3f);
  else if (optimizer == "momentum") net.optimizer = Momentum(lr > 0 ? lr : 0.01f, momentum);
  else if (optimizer == "gd") net.optimizer = GradientDescent(lr > 0 ? lr : 0.01f);
  else if (lr > 0) net.optimizer.learning_rate = lr;
  net.label_dtype = labels == "int64" ? graphrt::proto::DT_INT64 : graphrt::proto::DT_INT32;
  const TrainWorkload w = BuildTrainWorkload(net);

  std::string bytes;
  const bool text = out.size() > 6 && out.compare(out.size() - 6, 6, ".pbtxt") == 0;
  if (text) {
    google::protobuf::TextFormat::Printer printer;
    if (!printer.PrintToString(w.graph, &bytes)) {
      std::fprintf(stderr, "graphrt_make_train_graph: cannot print the graph as text\n");
      return 1;
    }
  } else {
    bytes = SerializeDeterministic(w.graph);
  }
  const graphrt::Status s = WriteFile(out, bytes);
  if (!s.ok()) {
    std::fprintf(stderr, "graphrt_make_train_graph: %s\n", s.ToString().c_str());
    return 1;
  }
  std::string dims;
  for (int64_t d : w.x.dims) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  std::printf("wrote %s: %s, %d nodes, %zu trainable variables\n", out.c_str(), w.name.c_str(), w.graph.node_size(),
              w.variables.size());
  std::printf("feeds: x float [%s], labels %s [%lld] (classes 0..%lld); fetch: %s; targets: %s (once), %s (a step)\n",
              dims.c_str(), labels.c_str(), static_cast<long long>(w.labels.dims[0]),
              static_cast<long long>(w.classes - 1), w.loss.c_str(), w.init.c_str(), w.train.c_str());
  return 0;
}
