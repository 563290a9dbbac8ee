// `graphrt inspect` and `graphrt dot`: looking at a GraphDef without running it.
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "observe.h"
#include "run_setup.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"

namespace graphrt {
namespace cli {
namespace {

// Parses "COMMAND GRAPH [options]"; returns false after --help.
bool ParseGraphCommand(const std::string& command, const std::vector<std::string>& args,
                       const std::string& usage, bool plugin_options, po::variables_map* vm) {
  po::options_description visible("options");
  if (plugin_options) AddPluginOptions(&visible);
  po::options_description hidden;
  hidden.add_options()("graph", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("graph", 1);
  if (!ParseArgs(command, args, visible, hidden, pos, usage, vm)) return false;
  if (!vm->count("graph"))
    throw UsageError(command + ": missing GRAPH (see 'graphrt " + command + " --help')");
  return true;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string AttrTypeString(const proto::NodeDef& n, const char* attr) {
  auto it = n.attr().find(attr);
  if (it == n.attr().end() || it->second.value_case() != proto::AttrValue::kType) return "?";
  return DataTypeValueString(it->second.type());
}

std::string AttrShapeString(const proto::NodeDef& n, const char* attr) {
  auto it = n.attr().find(attr);
  if (it == n.attr().end() || it->second.value_case() != proto::AttrValue::kShape)
    return "<unknown>";
  PartialTensorShape s;
  if (!PartialTensorShape::FromProto(it->second.shape(), &s).ok()) return "<bad shape>";
  return s.DebugString();
}

// A DOT double-quoted string's contents.
std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

int InspectCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt inspect GRAPH [options]\n"
      "\n"
      "Summarizes GRAPH (binary .pb or text .pbtxt): node count, producer version,\n"
      "placeholders with dtype and shape, every node with its op, inputs and device,\n"
      "and the ops the graph uses that no loaded plugin defines (load the plugin\n"
      "that does with --plugin to run it).\n";
  po::variables_map vm;
  if (!ParseGraphCommand("inspect", args, usage, true, &vm)) return 0;
  LoadPlugins(vm);
  const std::string path = vm["graph"].as<std::string>();
  const proto::GraphDef g = LoadGraph(path);

  std::set<std::string> functions;
  for (const auto& f : g.library().function()) functions.insert(f.signature().name());
  std::map<std::string, std::vector<std::string>> nodes_by_op;
  for (const proto::NodeDef& n : g.node()) nodes_by_op[n.op()].push_back(n.name());
  std::set<std::string> undefined;
  for (const auto& [op, nodes] : nodes_by_op)
    if (LookUpOpDef(op) == nullptr && !functions.count(op)) undefined.insert(op);

  std::cout << "graph:    " << path << "\n";
  std::cout << "nodes:    " << g.node_size() << "\n";
  std::cout << "producer: ";
  if (g.has_versions()) {
    std::cout << g.versions().producer() << " (min consumer " << g.versions().min_consumer() << ")";
  } else {
    std::cout << "(no versions)";
  }
  std::cout << "\n";
  if (!functions.empty()) std::cout << "functions: " << functions.size() << "\n";

  std::cout << "placeholders:\n";
  int placeholders = 0;
  for (const proto::NodeDef& n : g.node()) {
    if (n.op() != "Placeholder" && n.op() != "PlaceholderV2" && n.op() != "PlaceholderWithDefault") continue;
    ++placeholders;
    std::cout << "  " << n.name() << ": " << AttrTypeString(n, "dtype") << " "
              << AttrShapeString(n, "shape") << (n.op() == "PlaceholderWithDefault" ? " (has default)" : "")
              << "\n";
  }
  if (placeholders == 0) std::cout << "  (none)\n";

  std::cout << "nodes:\n";
  for (const proto::NodeDef& n : g.node()) {
    std::cout << "  " << n.name() << " = " << n.op() << "("
              << Join(std::vector<std::string>(n.input().begin(), n.input().end())) << ")";
    if (!n.device().empty()) std::cout << "  device: " << n.device();
    if (undefined.count(n.op())) std::cout << "  <-- UNDEFINED OP";
    std::cout << "\n";
  }

  std::cout << "ops used:";
  for (const auto& [op, nodes] : nodes_by_op) std::cout << " " << op << " (" << nodes.size() << ")";
  std::cout << "\n";
  if (undefined.empty()) {
    std::cout << "all " << nodes_by_op.size() << " ops used are defined by loaded plugins\n";
  } else {
    std::cout << "UNDEFINED OPS: " << undefined.size() << " op" << (undefined.size() == 1 ? "" : "s")
              << " used by this graph " << (undefined.size() == 1 ? "is" : "are")
              << " defined by no loaded plugin (load one with --plugin):\n";
    for (const std::string& op : undefined)
      std::cout << "  !! " << op << " (used by: " << Join(nodes_by_op[op]) << ")\n";
  }
  return 0;
}

namespace {

// Fill colours for devices, in order of their names (ColorBrewer's Set3,
// light enough for black text); past the last they repeat.
const char* const kDeviceColors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                     "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

// `placement` null: no colours. Otherwise nodes are filled with their
// device's colour; nodes it does not have (pruned from the run, or replaced
// by a rewrite) stay white, dashed; a legend cluster names the colours.
void PrintDot(const proto::GraphDef& g, const Placement* placement) {
  std::map<std::string, std::string> color_of_device;
  if (placement != nullptr) {
    for (const auto& [node, device] : placement->device_of) color_of_device.emplace(device, "");
    size_t i = 0;
    for (auto& [device, color] : color_of_device) color = kDeviceColors[i++ % std::size(kDeviceColors)];
  }
  std::cout << "digraph graphrt {\n";
  std::cout << "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  bool any_unplaced = false;
  for (const proto::NodeDef& n : g.node()) {
    std::cout << "  \"" << DotEscape(n.name()) << "\" [label=\"" << DotEscape(n.name()) << "\\n"
              << DotEscape(n.op()) << "\"";
    if (placement != nullptr) {
      auto it = placement->device_of.find(n.name());
      if (it != placement->device_of.end()) {
        std::cout << ", style=\"rounded,filled\", fillcolor=\"" << color_of_device[it->second]
                  << "\", tooltip=\"" << DotEscape(it->second) << "\"";
      } else {
        any_unplaced = true;
        std::cout << ", style=\"rounded,dashed\"";
      }
    }
    std::cout << "];\n";
  }
  for (const proto::NodeDef& n : g.node()) {
    for (const std::string& in : n.input()) {
      const bool control = !in.empty() && in[0] == '^';
      std::string src;
      int index = 0;
      if (control || !ParseTensorName(in, &src, &index)) {
        src = InputNodeName(in);
        index = 0;
      }
      std::cout << "  \"" << DotEscape(src) << "\" -> \"" << DotEscape(n.name()) << "\"";
      if (control) {
        std::cout << " [style=dashed]";
      } else if (index > 0) {
        std::cout << " [label=\"" << index << "\"]";
      }
      std::cout << ";\n";
    }
  }
  if (placement != nullptr) {
    // Legend node ids start with a space, which no node name the core
    // accepts can, so they cannot collide with the graph's.
    std::cout << "  subgraph cluster_legend {\n    label=\"devices\"; style=dashed; fontname=\"Helvetica\";\n";
    int k = 0;
    for (const auto& [device, color] : color_of_device)
      std::cout << "    \" legend " << k++ << "\" [label=\"" << DotEscape(device)
                << "\", style=\"rounded,filled\", fillcolor=\"" << color << "\"];\n";
    if (any_unplaced)
      std::cout << "    \" legend none\" [label=\"not run (pruned or rewritten)\", style=\"rounded,dashed\"];\n";
    std::cout << "  }\n";
  }
  std::cout << "}\n";
}

}  // namespace

int DotCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt dot GRAPH [--placed [RUN OPTIONS]]\n"
      "\n"
      "Prints GRAPH as a Graphviz digraph: each node labelled with its name and op;\n"
      "data edges solid (labelled with the output index when it is not 0), control\n"
      "edges dashed.\n"
      "\n"
      "With --placed, GRAPH is first run once (as 'graphrt run' would, with random\n"
      "values for the placeholders no --feed gives, as 'graphrt bench' makes them),\n"
      "and each node is filled with the colour of the device it ran on, with a\n"
      "legend; nodes the run did not execute are dashed.\n"
      "\n"
      "examples:\n"
      "  graphrt dot model.pb | dot -Tsvg > model.svg\n"
      "  graphrt dot model.pb --placed --shape x=1,28,28,1 | dot -Tsvg > placed.svg\n";
  po::options_description visible("options");
  visible.add_options()("placed", po::bool_switch(), "run once and colour the nodes by device");
  po::options_description run_options("with --placed");
  AddRunOptions(&run_options, /*generate_inputs=*/true);
  visible.add(run_options);
  po::options_description hidden;
  hidden.add_options()("graph", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("graph", 1);
  po::variables_map vm;
  if (!ParseArgs("dot", args, visible, hidden, pos, usage, &vm)) return 0;
  if (!vm.count("graph")) throw UsageError("dot: missing GRAPH (see 'graphrt dot --help')");
  if (!vm["placed"].as<bool>()) {
    for (const auto& opt : run_options.options())
      if (vm.count(opt->long_name()) && !vm[opt->long_name()].defaulted())
        throw UsageError("--" + opt->long_name() + " applies only with --placed");
    PrintDot(LoadGraph(vm["graph"].as<std::string>()), nullptr);
    return 0;
  }
  PreparedRun run;
  PrepareRun(vm, SessionOptionsFromArgs(vm), /*generate_inputs=*/true, &run);
  run.RunInits();
  proto::RunOptions options;
  options.set_trace_level(proto::RunOptions::FULL_TRACE);
  options.set_output_partition_graphs(true);
  proto::RunMetadata metadata;
  std::vector<Tensor> outputs;
  Check(run.session->Run(options, run.inputs, run.fetch_tensors, run.targets, &outputs, &metadata),
        "running " + run.graph_path + " to place it");
  const Placement placement = PlacementFromMetadata(metadata);
  PrintDot(run.graph, &placement);
  Check(run.session->Close(), "closing the session");
  return 0;
}

}  // namespace cli
}  // namespace graphrt
