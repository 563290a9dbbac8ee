// Option parsing, plugin loading and graph helpers shared by the commands.
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"

namespace graphrt {
namespace cli {

void Check(const Status& s, const std::string& context) {
  if (s.ok()) return;
  throw CliError(context.empty() ? s.message() : context + ": " + s.message());
}

std::string OneLine(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  // Control bytes (from a file's contents quoted in a message) could break
  // the line or the terminal; UTF-8 passes through.
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') {
      c = ' ';
    } else if (static_cast<unsigned char>(c) < 32 || c == 127) {
      c = '?';
    }
  }
  return s;
}

void AddPluginOptions(po::options_description* desc) {
  desc->add_options()
      ("plugin", po::value<std::vector<std::string>>()->composing()->value_name("FILE"),
       "load a plugin library (repeatable)")
      ("plugin-dir", po::value<std::vector<std::string>>()->composing()->value_name("DIR"),
       "load every lib*.so in DIR (repeatable)")
      ("no-default-plugins", po::bool_switch(),
       "do not load the standard plugins or GRAPHRT_PLUGIN_PATH");
}

void LoadPlugins(const po::variables_map& vm) {
  Runtime& rt = Runtime::Global();
  if (!vm["no-default-plugins"].as<bool>()) {
    Check(rt.LoadDefaultPlugins(), "loading the standard plugins");
  }
  if (vm.count("plugin-dir")) {
    for (const std::string& dir : vm["plugin-dir"].as<std::vector<std::string>>())
      Check(rt.LoadPluginDirectory(dir));  // the core's messages name the file
  }
  if (vm.count("plugin")) {
    for (const std::string& file : vm["plugin"].as<std::vector<std::string>>())
      Check(rt.LoadPlugin(file));
  }
}

namespace {

// TensorFlow's tools spell flags with underscores (--allow_soft_placement,
// saved_model_cli's --tag_set), graphrt's with dashes: both are accepted.
// saved_model_cli's names for graphrt's options: --tag_set, --signature_def,
// --outdir, and --dir for the model (the command's first positional).
std::vector<std::string> NormalizeFlags(const std::vector<std::string>& args,
                                        const po::positional_options_description& pos) {
  std::vector<std::string> out;
  out.reserve(args.size());
  bool positional_only = false;  // after "--"
  for (const std::string& arg : args) {
    positional_only = positional_only || arg == "--";
    if (positional_only || arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      out.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    for (char& c : name)
      if (c == '_') c = '-';
    if (name == "tag-set") name = "tag";
    if (name == "signature-def") name = "signature";
    if (name == "outdir") name = "out";
    if (name == "dir" && pos.max_total_count() > 0) name = pos.name_for_position(0);
    out.push_back("--" + name + (eq == std::string::npos ? "" : arg.substr(eq)));
  }
  return out;
}

}  // namespace

bool ParseArgs(const std::string& command, const std::vector<std::string>& args,
               const po::options_description& visible, const po::options_description& hidden,
               const po::positional_options_description& pos, const std::string& usage,
               po::variables_map* vm) {
  po::options_description shown(visible);
  shown.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(shown).add(hidden);
  try {
    po::store(po::command_line_parser(NormalizeFlags(args, pos)).options(all).positional(pos).run(), *vm);
    if (vm->count("help")) {
      std::cout << usage << "\n" << shown;
      return false;
    }
    po::notify(*vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + " (see 'graphrt " + command + " --help')");
  }
  return true;
}

proto::GraphDef LoadGraph(const std::string& path) {
  proto::GraphDef g;
  Check(ReadGraphDefFromFile(path, &g));
  return g;
}

bool ParseTensorName(const std::string& name, std::string* node, int* index) {
  if (name.empty() || name[0] == '^') return false;
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos) {
    *node = name;
    *index = 0;
    return true;
  }
  const std::string digits = name.substr(colon + 1);
  if (colon == 0 || digits.empty() || digits.size() > 9) return false;
  for (char c : digits)
    if (c < '0' || c > '9') return false;
  *node = name.substr(0, colon);
  *index = std::stoi(digits);
  return true;
}

const proto::NodeDef* FindNode(const proto::GraphDef& g, const std::string& name) {
  for (const proto::NodeDef& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

std::string InputNodeName(const std::string& input) {
  std::string s = input;
  if (!s.empty() && s[0] == '^') s.erase(0, 1);
  std::string node;
  int index;
  if (ParseTensorName(s, &node, &index)) return node;
  return s;
}

const proto::OpDef* LookUpOpDef(const std::string& op) {
  const OpRegistrationData* r = Runtime::Global().ops().LookUp(op);
  return r ? &r->op_def : nullptr;
}

}  // namespace cli
}  // namespace graphrt
