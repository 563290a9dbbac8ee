// `graphrt bench`: latency statistics of a graph's Runs, with random inputs
// for the placeholders no --feed gives.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "run_setup.h"

namespace graphrt {
namespace cli {
namespace {

const char kUsage[] =
    "usage: graphrt bench GRAPH [--feed NAME=FILE.npy]... [--shape NAME=D0,D1,...]... [options]\n"
    "\n"
    "Times Runs of GRAPH (as 'graphrt run' takes it: a GraphDef, SavedModel or .meta)\n"
    "in one session. Each Placeholder the run needs that no --feed gives gets random\n"
    "values of its dtype and shape (floats in [-1, 1), integers in [0, 10)); its\n"
    "unknown dims come from --shape. --warmup runs come first and are not timed\n"
    "(the first one pays the session's one-time set-up); then --runs N runs, or runs\n"
    "for --time SECONDS. Prints the latency per run (min, median, p90, p99, max:\n"
    "nearest-rank percentiles, and the mean) and the throughput in runs/s.\n"
    "\n"
    "examples:\n"
    "  graphrt bench examples/graphs/mlp.pbtxt --runs 1000\n"
    "  graphrt bench model.pb --shape input=1,224,224,3 --time 10 --threads 2\n";

// The value at `p` percent of `sorted` (ascending, not empty), by nearest
// rank: the smallest value with at least p% of the values at or below it.
double Percentile(const std::vector<double>& sorted, double p) {
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

int BenchCommand(const std::vector<std::string>& args) {
  po::options_description visible("options");
  visible.add_options()
      ("warmup", po::value<int>()->default_value(1)->value_name("N"), "untimed runs first")
      ("runs", po::value<int>()->value_name("N"), "timed runs (default: as many as --time allows)")
      ("time", po::value<double>()->value_name("SECONDS"),
       "run for this long (default 1 when --runs is not given)");
  AddRunOptions(&visible, /*generate_inputs=*/true);
  po::options_description hidden;
  hidden.add_options()("graph", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("graph", 1);
  po::variables_map vm;
  if (!ParseArgs("bench", args, visible, hidden, pos, kUsage, &vm)) return 0;
  if (!vm.count("graph")) throw UsageError("bench: missing GRAPH (see 'graphrt bench --help')");
  const int warmup = vm["warmup"].as<int>();
  if (warmup < 0) throw UsageError("--warmup must be 0 or more, got " + std::to_string(warmup));
  if (vm.count("runs") && vm.count("time")) throw UsageError("give --runs or --time, not both");
  const int runs = vm.count("runs") ? vm["runs"].as<int>() : 0;
  if (vm.count("runs") && runs < 1) throw UsageError("--runs must be at least 1, got " + std::to_string(runs));
  const double seconds = vm.count("time") ? vm["time"].as<double>() : (runs > 0 ? 0.0 : 1.0);
  if (!(seconds >= 0) || seconds > 1e6 || (vm.count("time") && seconds <= 0))
    throw UsageError("--time must be a positive number of seconds");
  // A latency per run is kept; this bounds that memory for --time.
  constexpr size_t kMaxTimedRuns = 10'000'000;

  PreparedRun run;
  PrepareRun(vm, SessionOptionsFromArgs(vm), /*generate_inputs=*/true, &run);
  run.RunInits();

  std::cout << "graph:   " << run.graph_path << "\n";
  for (const std::string& g : run.generated) std::cout << "input:   " << g << "\n";
  std::cout << "fetches: " << run.fetch_tensors.size() << ", targets: " << run.targets.size() << "\n";

  using Clock = std::chrono::steady_clock;
  std::vector<Tensor> outputs;
  auto run_once = [&](const std::string& what) {
    outputs.clear();
    const auto start = Clock::now();
    Check(run.session->Run(run.inputs, run.fetch_tensors, run.targets, &outputs), what + " of " + run.graph_path);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int i = 0; i < warmup; ++i) {
    const double ms = run_once("warm-up run " + std::to_string(i + 1));
    if (i == 0) std::printf("warm-up: %d run%s, the first %.3f ms\n", warmup, warmup == 1 ? "" : "s", ms);
  }
  std::vector<double> latencies_ms;
  const auto begin = Clock::now();
  const auto deadline = begin + std::chrono::duration<double>(seconds);
  while (runs > 0 ? latencies_ms.size() < static_cast<size_t>(runs)
                  : (latencies_ms.empty() || (Clock::now() < deadline && latencies_ms.size() < kMaxTimedRuns)))
    latencies_ms.push_back(run_once("timed run " + std::to_string(latencies_ms.size() + 1)));
  const double total_s = std::chrono::duration<double>(Clock::now() - begin).count();

  std::vector<double> sorted = latencies_ms;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double ms : sorted) sum += ms;
  std::printf("timed:   %zu runs in %.6g s\n", sorted.size(), total_s);
  std::printf("latency per run (ms):\n");
  std::printf("  min     %12.4f\n", sorted.front());
  std::printf("  median  %12.4f\n", Percentile(sorted, 50));
  std::printf("  p90     %12.4f\n", Percentile(sorted, 90));
  std::printf("  p99     %12.4f\n", Percentile(sorted, 99));
  std::printf("  max     %12.4f\n", sorted.back());
  std::printf("  mean    %12.4f\n", sum / static_cast<double>(sorted.size()));
  std::printf("throughput: %.2f runs/s\n", static_cast<double>(sorted.size()) / total_s);
  std::fflush(stdout);
  Check(run.session->Close(), "closing the session");
  return 0;
}

}  // namespace cli
}  // namespace graphrt
