#include "run_setup.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "feeds.h"
#include "generated_inputs.h"
#include "graphrt/client/graph_info.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/types.h"

namespace graphrt {
namespace cli {
namespace {

// Generated inputs may take at most this much without --memory-limit: a
// typo in --shape should not make the machine swap.
constexpr int64_t kDefaultMaxGeneratedBytes = int64_t{4} << 30;

std::vector<std::string> Strings(const po::variables_map& vm, const char* key) {
  return vm.count(key) ? vm[key].as<std::vector<std::string>>() : std::vector<std::string>();
}

}  // namespace

void AddRunOptions(po::options_description* desc, bool generate_inputs) {
  desc->add_options()
      ("feed", po::value<std::vector<std::string>>()->composing()->value_name("NAME=FILE.npy"),
       "feed tensor NAME (node or node:index) from a .npy file (repeatable)")
      ("fetch", po::value<std::vector<std::string>>()->composing()->value_name("TENSOR"),
       "fetch TENSOR (repeatable); default: the graph's sink outputs")
      ("target", po::value<std::vector<std::string>>()->composing()->value_name("NODE"),
       "run NODE without fetching it (repeatable); --target grpc://HOST:PORT instead runs the session on the "
       "cluster behind that master (a `graphrt server`, or TensorFlow's)")
      ("init", po::value<std::vector<std::string>>()->composing()->value_name("NODE"),
       "run NODE once (with the feeds) before the timed runs, e.g. an initializer "
       "(repeatable)");
  if (generate_inputs)
    desc->add_options()
        ("shape", po::value<std::vector<std::string>>()->composing()->value_name("NAME=D0,D1,..."),
         "the shape of the random values generated for placeholder NAME, for its unknown dims "
         "(e.g. x=1,224,224,3); also generates a PlaceholderWithDefault (repeatable)");
  AddSessionConfigOptions(desc);
  AddModelOptions(desc, /*for_run=*/true);
  AddPluginOptions(desc);
}

void PreparedRun::RunInits() {
  if (inits.empty()) return;
  std::vector<Tensor> outputs;
  Check(session->Run(inputs, {}, inits, &outputs), "running --init");
}

void PrepareRun(const po::variables_map& vm, const SessionOptions& options, bool generate_inputs,
                PreparedRun* out) {
  if (!vm.count("graph")) throw UsageError("missing GRAPH");
  const std::string& graph_path = out->graph_path = vm["graph"].as<std::string>();
  // Parse the command line completely before doing any slow work.
  std::vector<Feed> feeds = ParseFeedSpecs(Strings(vm, "feed"));
  std::map<std::string, std::vector<int64_t>> shapes;
  if (generate_inputs) shapes = ParseShapeSpecs(Strings(vm, "shape"));
  out->fetches = Strings(vm, "fetch");
  for (const std::string& t : Strings(vm, "target"))
    if (!IsSessionTarget(t)) out->targets.push_back(t);
  out->inits = Strings(vm, "init");

  LoadPlugins(vm);
  // A SavedModel directory or .meta file: loaded (and restored) by the client
  // library; its signature keys stand for tensor names (model_source.h).
  if (IsModelPath(graph_path)) {
    out->model = std::make_unique<ModelSource>(vm, graph_path, options);
    for (Feed& f : feeds) f.name = out->model->FeedTensor(f.name);
    if (out->fetches.empty() && out->targets.empty()) out->fetches = out->model->DefaultFetches();
    std::map<std::string, std::vector<int64_t>> by_tensor;
    for (auto& [name, dims] : shapes) by_tensor[InputNodeName(out->model->FeedTensor(name))] = dims;
    shapes = std::move(by_tensor);
  } else if (vm.count("tag") || vm.count("signature") || vm.count("checkpoint")) {
    throw UsageError("--tag, --signature and --checkpoint need a SavedModel directory or a .meta file");
  }
  out->fetch_tensors = out->fetches;
  if (out->model)
    std::transform(out->fetches.begin(), out->fetches.end(), out->fetch_tensors.begin(),
                   [&](const std::string& f) { return out->model->FetchTensor(f); });
  out->graph = out->model ? out->model->graph() : LoadGraph(graph_path);
  const proto::GraphDef& graph = out->graph;

  ReadFeeds(graph, graph_path, &feeds);
  for (const std::string& name : out->fetch_tensors) CheckTensorName(graph, "--fetch", name, graph_path);
  for (const std::string& name : out->targets) CheckNodeName(graph, "--target", name, graph_path);
  for (const std::string& name : out->inits) CheckNodeName(graph, "--init", name, graph_path);
  if (out->fetches.empty() && out->targets.empty()) {
    std::vector<std::string> no_output_sinks;
    out->fetches = out->fetch_tensors = SinkOutputs(graph, &no_output_sinks);
    if (out->fetches.empty()) {
      std::string hint;
      for (size_t i = 0; i < no_output_sinks.size() && i < 5; ++i)
        hint += (i ? ", " : " (its sinks have no outputs: ") + no_output_sinks[i];
      if (!hint.empty()) hint += no_output_sinks.size() > 5 ? ", ...)" : ")";
      throw CliError(graph_path + " has no sink node with outputs" + hint +
                     "; name what to run with --fetch or --target");
    }
  }

  for (const Feed& f : feeds) out->inputs.emplace_back(f.name, f.value);
  if (generate_inputs) {
    std::set<std::string> fed_nodes;
    for (const Feed& f : feeds) fed_nodes.insert(InputNodeName(f.name));
    std::vector<std::string> roots = out->targets;
    roots.insert(roots.end(), out->inits.begin(), out->inits.end());
    const std::set<std::string> needed = NodesNeeded(graph, out->fetch_tensors, roots, fed_nodes);
    const int64_t limit = options.config.graphrt_options().session_memory_limit_bytes();
    for (GeneratedInput& g : GenerateInputs(graph, graph_path, needed, fed_nodes, shapes,
                                            limit > 0 ? limit : kDefaultMaxGeneratedBytes, /*seed=*/1)) {
      out->generated.push_back(g.tensor + " (generated " + DataTypeString(g.value.dtype()) + " " +
                               g.value.shape().DebugString() + ")");
      out->inputs.emplace_back(g.tensor, std::move(g.value));
    }
  }

  if (out->model) {
    out->session = out->model->TakeSession();
  } else {
    Check(NewSession(options, &out->session), "creating a session");
    Check(out->session->Create(graph), "loading " + graph_path);
  }
}

}  // namespace cli
}  // namespace graphrt
