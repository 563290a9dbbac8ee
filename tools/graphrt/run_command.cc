// `graphrt run`: feeds .npy files into a graph, runs it, prints/saves fetches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "graphrt/client/graph_info.h"
#include "feeds.h"
#include "graphrt/core/npy.h"
#include "graphrt/core/session.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"
#include "model_source.h"
#include "observe.h"
#include "run_setup.h"

namespace graphrt {
namespace cli {
namespace {

constexpr int64_t kMaxPrintedValues = 10;

const char kUsage[] =
    "usage: graphrt run GRAPH [--feed NAME=FILE.npy]... [--fetch TENSOR]... [options]\n"
    "\n"
    "Runs GRAPH (a binary .pb or text .pbtxt GraphDef) in one session and prints\n"
    "each fetched tensor: name, dtype, shape and its first values.\n"
    "\n"
    "  GRAPH may also be a SavedModel directory (loaded with --tag, variables\n"
    "  restored, init op run), a SessionBundle directory (export.meta + export\n"
    "  checkpoint) or a .meta file (variables restored from --checkpoint\n"
    "  PREFIX). Then --feed and --fetch take the --signature's input and output\n"
    "  keys as well as tensor names, and without --fetch the signature's\n"
    "  outputs are fetched.\n"
    "\n"
    "  --init nodes run once first (e.g. variable initializers); then the feeds,\n"
    "  fetches and targets run --runs times, and the last run's fetches are shown.\n"
    "  With neither --fetch nor --target, every output of every sink node (a node\n"
    "  with outputs that no other node consumes, outside while loops) is fetched,\n"
    "  sorted by name, so\n"
    "  'graphrt run model.pb --feed x:0=x.npy' shows the model's results.\n"
    "\n"
    "examples:\n"
    "  graphrt run add.pbtxt --feed a:0=a.npy --feed b:0=b.npy --fetch sum:0\n"
    "  graphrt run model.pb --feed x:0=x.npy --runs 100 --out results/\n"
    "  graphrt run model.pb --feed x:0=x.npy --runs 100 --profile\n"
    "  graphrt run model.pb --feed x:0=x.npy --trace run.json --log-placement\n"
    "  graphrt run saved_model_dir/ --signature regress_x_to_y --feed inputs=examples.npy\n"
    "  graphrt run export.meta --checkpoint export --feed x:0=x.npy --fetch y:0\n";

// "x:0" -> "x_0", "scope/y" -> "scope_y": a tensor name as a file name.
std::string FileNameFor(const std::string& tensor) {
  std::string s = tensor;
  std::replace(s.begin(), s.end(), ':', '_');
  std::replace(s.begin(), s.end(), '/', '_');
  return s + ".npy";
}

}  // namespace

void CheckTensorName(const proto::GraphDef& g, const std::string& flag, const std::string& name,
                     const std::string& graph_path) {
  std::string node;
  int index;
  if (!ParseTensorName(name, &node, &index))
    throw UsageError(flag + " '" + name + "': not a tensor name (expected NODE or NODE:INDEX)");
  const proto::NodeDef* n = FindNode(g, node);
  if (n == nullptr)
    throw CliError(flag + " '" + name + "': no node named '" + node + "' in " + graph_path);
  const int outputs = NumOutputsOfNode(*n);
  if (outputs >= 0 && index >= outputs)
    throw CliError(flag + " '" + name + "': node '" + node + "' (" + n->op() + ") has " +
                   std::to_string(outputs) + " output" + (outputs == 1 ? "" : "s"));
}

void CheckNodeName(const proto::GraphDef& g, const std::string& flag, const std::string& name,
                   const std::string& graph_path) {
  if (FindNode(g, name) == nullptr)
    throw CliError(flag + " '" + name + "': no node named '" + name + "' in " + graph_path);
}

namespace {

// The numpy spelling of a dtype, for hints.
std::string NumpyTypeName(DataType t) {
  switch (t) {
    case GR_FLOAT: return "float32";
    case GR_DOUBLE: return "float64";
    case GR_HALF: return "float16";
    case GR_BOOL: return "bool_";
    case GR_STRING: return "bytes_";
    default: return DataTypeString(t);
  }
}

// numpy saves float64 by default; catching a dtype or shape mismatch with the
// placeholder here gives a far clearer message than the session could.
void CheckFeedAgainstPlaceholder(const proto::GraphDef& g, const Feed& f) {
  std::string node_name;
  int index;
  if (!ParseTensorName(f.name, &node_name, &index)) return;
  const proto::NodeDef* n = FindNode(g, node_name);
  if (n == nullptr || (n->op() != "Placeholder" && n->op() != "PlaceholderV2" && n->op() != "PlaceholderWithDefault")) return;
  auto dt = n->attr().find("dtype");
  // An invalid dtype is left for Session::Create to name.
  if (dt != n->attr().end() && dt->second.value_case() == proto::AttrValue::kType &&
      IsSupportedDataTypeValue(dt->second.type())) {
    const DataType want = static_cast<DataType>(dt->second.type());
    if (want != f.value.dtype())
      throw CliError("--feed " + f.name + ": " + f.file + " holds " +
                     DataTypeString(f.value.dtype()) + " but placeholder '" + node_name +
                     "' expects " + DataTypeString(want) + " (in numpy: a.astype(np." +
                     NumpyTypeName(want) + "))");
  }
  auto sh = n->attr().find("shape");
  if (sh != n->attr().end() && sh->second.value_case() == proto::AttrValue::kShape) {
    PartialTensorShape want;
    // Before GraphDef version 22 an empty shape meant "unknown", as TensorFlow reads it.
    const bool old_unknown = g.versions().producer() <= 21 && !sh->second.shape().unknown_rank() &&
                             sh->second.shape().dim_size() == 0;
    if (!old_unknown && PartialTensorShape::FromProto(sh->second.shape(), &want).ok() &&
        !want.IsCompatibleWith(f.value.shape()))
      throw CliError("--feed " + f.name + ": " + f.file + " has shape " +
                     f.value.shape().DebugString() + " but placeholder '" + node_name +
                     "' expects " + want.DebugString());
  }
}

}  // namespace

std::vector<Feed> ParseFeedSpecs(const std::vector<std::string>& specs) {
  std::vector<Feed> feeds;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--feed '" + spec + "': expected NAME=FILE.npy");
    feeds.push_back({spec.substr(0, eq), spec.substr(eq + 1), Tensor()});
  }
  return feeds;
}

void ReadFeeds(const proto::GraphDef& graph, const std::string& graph_path, std::vector<Feed>* feeds) {
  std::set<std::string> fed;
  for (Feed& f : *feeds) {
    CheckTensorName(graph, "--feed", f.name, graph_path);
    if (!fed.insert(f.name).second) throw UsageError("--feed '" + f.name + "' given twice");
    Check(ReadNpy(f.file, &f.value), "--feed " + f.name);
    CheckFeedAgainstPlaceholder(graph, f);
  }
}

namespace {

// Per-node kernel times summed over the traced runs, for --profile.
struct NodeProfile {
  std::string op;
  std::string device;
  int64_t nanos = 0;
  int64_t count = 0;
};

void AddStepStats(const proto::StepStats& stats, std::map<std::string, NodeProfile>* by_node) {
  for (const proto::DeviceStepStats& dev : stats.dev_stats()) {
    for (const proto::NodeExecStats& ns : dev.node_stats()) {
      NodeProfile& p = (*by_node)[ns.node_name()];
      if (p.count == 0) {
        p.op = OpOfTimelineLabel(ns.timeline_label());
        p.device = dev.device();
      }
      p.nanos += ns.all_end_rel_nanos();
      ++p.count;
    }
  }
}

// Two tables: time per op type, then the `max_nodes` slowest nodes.
void PrintProfile(const std::map<std::string, NodeProfile>& by_node, int runs, size_t max_nodes) {
  int64_t total = 0;
  std::map<std::string, std::pair<int64_t, int>> by_op;  // op -> (nanos, nodes)
  for (const auto& [name, p] : by_node) {
    total += p.nanos;
    by_op[p.op].first += p.nanos;
    ++by_op[p.op].second;
  }
  if (total == 0) total = 1;
  auto us_per_run = [runs](int64_t nanos) { return nanos / 1e3 / runs; };
  char line[512];
  std::vector<std::pair<std::string, std::pair<int64_t, int>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::printf("profile: kernel time per run, mean over %d traced run%s (tracing adds a little to each node)\n",
              runs, runs == 1 ? "" : "s");
  std::printf("%12s %7s %6s  %s\n", "us/run", "share", "nodes", "op");
  for (const auto& [op, t] : ops) {
    std::snprintf(line, sizeof(line), "%12.2f %6.1f%% %6d  %s", us_per_run(t.first), 100.0 * t.first / total,
                  t.second, op.c_str());
    std::cout << line << "\n";
  }
  std::snprintf(line, sizeof(line), "%12.2f %6.1f%% %6zu  (all nodes)", us_per_run(total), 100.0, by_node.size());
  std::cout << line << "\n\n";
  std::vector<std::pair<std::string, const NodeProfile*>> nodes;
  for (const auto& [name, p] : by_node) nodes.emplace_back(name, &p);
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const auto& a, const auto& b) { return a.second->nanos > b.second->nanos; });
  if (nodes.size() > max_nodes) nodes.resize(max_nodes);
  std::printf("%12s %7s  %-40s %-24s %s\n", "us/run", "share", "node", "op", "device");
  for (const auto& [name, p] : nodes) {
    std::snprintf(line, sizeof(line), "%12.2f %6.1f%%  %-40s %-24s %s", us_per_run(p->nanos),
                  100.0 * p->nanos / total, name.c_str(), p->op.c_str(), p->device.c_str());
    std::cout << line << "\n";
  }
  std::cout << "\n";
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  po::options_description visible("options");
  visible.add_options()
      ("runs", po::value<int>()->default_value(1)->value_name("N"),
       "run N times and report the mean wall time per run after the first (which "
       "pays one-time set-up and is reported on its own)")
      ("out", po::value<std::string>()->value_name("DIR"),
       "also write each fetched tensor to DIR/<name>.npy (':' and '/' become '_'), replacing "
       "what is there (saved_model_cli's --outdir)")
      ("overwrite", po::bool_switch(), "accepted for saved_model_cli's sake: --out always replaces files")
      ("profile", po::bool_switch(),
       "trace the timed runs and print the kernel time per op type and per node "
       "(the 20 slowest)")
      ("trace", po::value<std::string>()->value_name("FILE.json"),
       "trace the last run and write it as a Chrome trace-event file (open it in "
       "https://ui.perfetto.dev or chrome://tracing): a process per device, a track "
       "per stream, an event per node")
      ("log-placement", po::bool_switch(),
       "log device placement (ConfigProto.log_device_placement) and print the device "
       "each node of the last run was placed on");
  AddRunOptions(&visible, /*generate_inputs=*/false);
  po::options_description hidden;
  hidden.add_options()("graph", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("graph", 1);
  po::variables_map vm;
  if (!ParseArgs("run", args, visible, hidden, pos, kUsage, &vm)) return 0;
  if (!vm.count("graph")) throw UsageError("run: missing GRAPH (see 'graphrt run --help')");
  const int runs = vm["runs"].as<int>();
  if (runs < 1) throw UsageError("--runs must be at least 1, got " + std::to_string(runs));
  const bool profile = vm["profile"].as<bool>();
  const std::string trace_path = vm.count("trace") ? vm["trace"].as<std::string>() : "";
  const bool log_placement = vm["log-placement"].as<bool>();

  SessionOptions options = SessionOptionsFromArgs(vm);
  if (log_placement) options.config.set_log_device_placement(true);
  PreparedRun run;
  PrepareRun(vm, options, /*generate_inputs=*/false, &run);
  const std::string& graph_path = run.graph_path;
  const std::vector<std::string>& fetches = run.fetches;
  const std::vector<std::string>& fetch_tensors = run.fetch_tensors;
  Session* session = run.session.get();
  run.RunInits();

  std::vector<Tensor> outputs;
  std::map<std::string, NodeProfile> node_profiles;
  proto::RunMetadata last_metadata;
  using Clock = std::chrono::steady_clock;
  double rest_ms = 0, first_ms = 0;
  for (int r = 0; r < runs; ++r) {
    const bool last = r == runs - 1;
    // Only the runs whose stats we use are traced: tracing costs a little per node.
    proto::RunOptions run_options;
    if (profile || (last && (!trace_path.empty() || log_placement)))
      run_options.set_trace_level(proto::RunOptions::FULL_TRACE);
    if (last && log_placement) run_options.set_output_partition_graphs(true);
    outputs.clear();
    proto::RunMetadata metadata;
    const bool want_metadata = run_options.trace_level() != proto::RunOptions::NO_TRACE;
    const auto start = Clock::now();
    Check(session->Run(run_options, run.inputs, fetch_tensors, run.targets, &outputs,
                       want_metadata ? &metadata : nullptr),
          runs > 1 ? "run " + std::to_string(r + 1) + " of " + graph_path : "running " + graph_path);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    (r == 0 ? first_ms : rest_ms) += ms;
    // The first run pays one-time set-up (weight re-layout, primitive
    // creation); profile the steady state when there is one.
    if (profile && (r > 0 || runs == 1)) AddStepStats(metadata.step_stats(), &node_profiles);
    if (last) last_metadata = std::move(metadata);
  }
  if (outputs.size() != fetches.size())
    throw CliError("the session returned " + std::to_string(outputs.size()) + " tensors for " +
                   std::to_string(fetches.size()) + " fetches");

  if (vm.count("out")) {
    const std::string dir = vm["out"].as<std::string>();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw CliError("--out " + dir + ": cannot create directory: " + ec.message());
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    const Tensor& t = outputs[i];
    std::cout << fetches[i] << (fetch_tensors[i] != fetches[i] ? " (" + fetch_tensors[i] + ")" : "") << ": dtype=" << DataTypeString(t.dtype())
              << " shape=" << t.shape().DebugString()
              << " values=" << TensorValuesString(t, kMaxPrintedValues);
    if (t.NumElements() > kMaxPrintedValues) std::cout << " (" << t.NumElements() << " values)";
    std::cout << "\n";
    if (vm.count("out")) {
      const std::string path =
          (std::filesystem::path(vm["out"].as<std::string>()) / FileNameFor(fetches[i])).string();
      Check(WriteNpy(path, t), "--out: writing " + fetches[i]);
      std::cout << "  wrote " << path << "\n";
    }
  }
  if (runs > 1) {
    char line[160];
    const std::string later = runs == 2 ? "run 2" : "runs 2 to " + std::to_string(runs);
    std::snprintf(line, sizeof(line), "mean wall time per run: %.3f ms over %s (first run %.3f ms, with set-up)",
                  rest_ms / (runs - 1), later.c_str(), first_ms);
    std::cout << line << "\n";
  }
  if (profile) {
    std::cout << "\n";
    PrintProfile(node_profiles, runs > 1 ? runs - 1 : 1, 20);
  }
  if (log_placement) {
    std::cout << "\n";
    PrintPlacement(PlacementFromMetadata(last_metadata), std::cout);
  }
  if (!trace_path.empty()) {
    WriteChromeTrace(last_metadata.step_stats(), trace_path);
    std::cout << "wrote trace of the last run to " << trace_path << "\n";
  }
  Check(session->Close(), "closing the session");
  return 0;
}

}  // namespace cli
}  // namespace graphrt
