// TensorFlow's C API for importing GraphDefs into a TF_Graph
// (graphrt/tf_c_api.h): options (prefix, default device, unique names,
// input and control mappings, control dependencies, returned outputs and
// operations), TF_GraphImportGraphDef*, and the import's results.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "c_api_internal.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/status.h"
#include "tf_c_internal.h"

struct TF_ImportGraphDefOptions {
  std::string prefix;
  std::string default_device;
  bool uniquify_names = false;
  bool uniquify_prefix = false;
  // (name, index) of a tensor of the GraphDef -> a tensor of the graph.
  std::map<std::pair<std::string, int>, TF_Output> input_map;
  // "^name" of the GraphDef -> "^" an operation of the graph.
  std::map<std::string, TF_Operation*> control_map;
  std::vector<TF_Operation*> control_dependencies;
  std::vector<std::pair<std::string, int>> return_outputs;
  std::vector<std::string> return_operations;
};

struct TF_ImportGraphDefResults {
  std::vector<TF_Output> return_outputs;
  std::vector<TF_Operation*> return_operations;
  std::vector<std::string> missing_names;  // unused input mappings
  std::vector<const char*> missing_name_pointers;
  std::vector<int> missing_indexes;
};

namespace {

using graphrt::Status;
using graphrt::c_api_internal::Call;
using graphrt::c_api_internal::LoadDefaultPlugins;
using graphrt::c_api_internal::NullArgument;
using graphrt::c_api_internal::ParseProto;
using graphrt::tf_c::kNoStatus;
using graphrt::tf_c::NameInUse;
namespace errors = graphrt::errors;

std::string TensorText(const std::string& name, int index) {
  return index == 0 ? name : name + ":" + std::to_string(index);
}

// Rewrites `def` as `opts` ask before it joins `g` (TensorFlow's
// ImportGraphDef): names under the prefix (made unique where asked),
// inputs through the input and control mappings, control dependencies on
// the nodes with no input from `def` itself, the default device.
// `renamed` maps each node of `def` to its name in the graph; `used` gets
// the input mappings some input went through.
Status RewriteForImport(const TF_Graph& g, const TF_ImportGraphDefOptions& opts, graphrt::proto::GraphDef* def,
                        std::map<std::string, std::string>* renamed, std::set<std::pair<std::string, int>>* used) {
  std::string prefix = opts.prefix;
  if (!prefix.empty() && opts.uniquify_prefix && NameInUse(g, prefix)) {
    for (int k = 1;; ++k) {
      const std::string candidate = prefix + "_" + std::to_string(k);
      if (!NameInUse(g, candidate)) {
        prefix = candidate;
        break;
      }
    }
  }
  const std::string scope = prefix.empty() ? "" : prefix + "/";
  std::set<std::string> taken;
  for (const graphrt::proto::NodeDef& n : def->node()) {
    std::string name = scope + n.name();
    if (opts.uniquify_names && (g.by_name.count(name) || taken.count(name))) {
      for (int k = 1;; ++k) {
        const std::string candidate = name + "_" + std::to_string(k);
        if (!g.by_name.count(candidate) && !taken.count(candidate)) {
          name = candidate;
          break;
        }
      }
    }
    taken.insert(name);
    (*renamed)[n.name()] = name;
  }
  auto new_name = [&](const std::string& old) {
    auto it = renamed->find(old);
    return it != renamed->end() ? it->second : scope + old;
  };
  static const std::string kLoc = "loc:@";
  for (graphrt::proto::NodeDef& n : *def->mutable_node()) {
    bool has_imported_input = false;
    std::set<std::string> controls;
    for (std::string& in : *n.mutable_input()) {
      std::string src;
      int index;
      bool control;
      if (!graphrt::ParseTensorName(in, &src, &index, &control))
        return errors::InvalidArgument("Node '", n.name(), "': malformed input '", in, "'");
      if (control) {
        auto mapped = opts.control_map.find(src);
        in = "^" + (mapped != opts.control_map.end() ? mapped->second->node->name() : new_name(src));
        has_imported_input |= mapped == opts.control_map.end();
        controls.insert(in.substr(1));
        continue;
      }
      auto mapped = opts.input_map.find({src, index});
      if (mapped != opts.input_map.end()) {
        used->insert(mapped->first);
        in = TensorText(mapped->second.oper->node->name(), mapped->second.index);
      } else {
        in = new_name(src) + in.substr(src.size());  // keeps ":index" as written
        has_imported_input = true;
      }
    }
    if (!has_imported_input) {
      for (TF_Operation* dep : opts.control_dependencies) {
        if (controls.insert(dep->node->name()).second) n.add_input("^" + dep->node->name());
      }
    }
    n.set_name(new_name(n.name()));
    if (n.device().empty() && !opts.default_device.empty()) n.set_device(opts.default_device);
    auto cls = n.mutable_attr()->find("_class");
    if (cls == n.mutable_attr()->end() || !cls->second.has_list()) continue;
    for (std::string& s : *cls->second.mutable_list()->mutable_s()) {
      if (s.compare(0, kLoc.size(), kLoc) == 0) s = kLoc + new_name(s.substr(kLoc.size()));
    }
  }
  return Status::OK();
}

// Every operation the options name must be one of `g`'s.
Status CheckOptionOperations(const char* fn, const TF_Graph& g, const TF_ImportGraphDefOptions& opts) {
  auto check = [&](const TF_Operation* op, const std::string& what) -> Status {
    auto it = g.by_name.find(op->node->name());
    if (it == g.by_name.end() || it->second != op)
      return errors::InvalidArgument(fn, ": ", what, " '", op->node->name(), "' is not an operation of the graph");
    return Status::OK();
  };
  for (const auto& [key, dst] : opts.input_map) {
    GR_RETURN_IF_ERROR(check(dst.oper, "the input mapping of '" + TensorText(key.first, key.second) + "' names"));
    if (dst.index < 0 || dst.index >= dst.oper->node->num_outputs())
      return errors::InvalidArgument(fn, ": the input mapping of '", TensorText(key.first, key.second),
                                     "' names output ", dst.index, " of '", dst.oper->node->name(), "', which has ",
                                     dst.oper->node->num_outputs());
  }
  for (const auto& [src, dst] : opts.control_map) GR_RETURN_IF_ERROR(check(dst, "the control mapping of '" + src + "' names"));
  for (const TF_Operation* dep : opts.control_dependencies) GR_RETURN_IF_ERROR(check(dep, "the control dependency"));
  return Status::OK();
}

// Removes what the last import added (its operations are those past the
// first `ops_before`); no session has seen it while g->mu was held.
void UndoImport(TF_Graph* g, size_t ops_before) {
  std::vector<graphrt::Node*> nodes;
  for (size_t i = ops_before; i < g->ops.size(); ++i) {
    graphrt::Node* n = g->ops[i]->node;
    nodes.push_back(n);
    g->by_name.erase(n->name());
    g->shapes[n->id()].clear();
    g->const_values.erase(n->id());
  }
  g->ops.resize(ops_before);
  g->additions.pop_back();
  if (ops_before == 0) {
    g->graph = graphrt::tf_c::EmptyGraph();  // the import had set its versions
  } else {
    g->graph->RemoveNodes(nodes);
  }
}

// Imports a serialized GraphDef as `options` ask; `results` (may be null)
// gets what they asked returned.
Status ImportBuffer(const char* fn, TF_Graph* graph, const TF_Buffer* graph_def,
                    const TF_ImportGraphDefOptions* options, TF_ImportGraphDefResults* results) {
  if (graph == nullptr) return NullArgument(fn, "graph");
  if (graph_def == nullptr) return NullArgument(fn, "graph_def");
  static const TF_ImportGraphDefOptions kDefaults;
  const TF_ImportGraphDefOptions& opts = options ? *options : kDefaults;
  graphrt::proto::GraphDef def;
  GR_RETURN_IF_ERROR(ParseProto(fn, graph_def->data, graph_def->length, "graph_def", &def));
  GR_RETURN_IF_ERROR(LoadDefaultPlugins());
  std::lock_guard<std::mutex> l(graph->mu);
  GR_RETURN_IF_ERROR(CheckOptionOperations(fn, *graph, opts));
  std::map<std::string, std::string> renamed;
  std::set<std::pair<std::string, int>> used;
  GR_RETURN_IF_ERROR(RewriteForImport(*graph, opts, &def, &renamed, &used));
  // What is to be returned must exist before anything is added.
  for (const auto& [name, index] : opts.return_outputs) {
    if (opts.input_map.count({name, index})) continue;
    if (!renamed.count(name))
      return errors::InvalidArgument(fn, ": Requested return tensor '", name, ":", index,
                                     "' not found in graph def");
  }
  for (const std::string& name : opts.return_operations) {
    if (!renamed.count(name))
      return errors::InvalidArgument(fn, ": Requested return node '", name, "' not found in graph def");
  }
  const size_t ops_before = graph->ops.size();
  GR_RETURN_IF_ERROR(graphrt::tf_c::Import(graph, std::move(def)).WithContext(std::string(fn) + ": "));
  std::vector<TF_Output> outputs;
  for (const auto& [name, index] : opts.return_outputs) {
    auto mapped = opts.input_map.find({name, index});
    if (mapped != opts.input_map.end()) {
      outputs.push_back(mapped->second);
      continue;
    }
    TF_Operation* op = graph->by_name.at(renamed.at(name));
    const int num_outputs = op->node->num_outputs();
    if (index < 0 || index >= num_outputs) {
      // Only known once the node is typed: take the import back.
      UndoImport(graph, ops_before);
      return errors::InvalidArgument(fn, ": Invalid return output ", index, " of node '", name, "', which has ",
                                     num_outputs, " output(s)");
    }
    outputs.push_back(TF_Output{op, index});
  }
  if (results == nullptr) return Status::OK();
  results->return_outputs = std::move(outputs);
  for (const std::string& name : opts.return_operations)
    results->return_operations.push_back(graph->by_name.at(renamed.at(name)));
  for (const auto& [key, dst] : opts.input_map) {
    if (used.count(key)) continue;
    results->missing_names.push_back(key.first);
    results->missing_indexes.push_back(key.second);
  }
  for (const std::string& n : results->missing_names) results->missing_name_pointers.push_back(n.c_str());
  return Status::OK();
}

}  // namespace

namespace graphrt::tf_c {

bool NameInUse(const TF_Graph& g, const std::string& name) {
  if (g.by_name.count(name)) return true;
  const std::string scope = name + "/";
  for (const auto& [op, unused] : g.by_name) {
    if (op.compare(0, scope.size(), scope) == 0) return true;
  }
  return false;
}

std::unique_ptr<Graph> EmptyGraph() {
  auto g = std::make_unique<Graph>(&Runtime::Global().ops());
  proto::VersionDef v;
  // TensorFlow 1.11/1.12's GraphDef version (tf_proto_facts.md): what a
  // TensorFlow 1.x of that age or later reads, and what the shape
  // functions' version-dependent checks take as "current".
  v.set_producer(27);
  g->set_versions(v);
  return g;
}

Status Import(TF_Graph* g, proto::GraphDef add) {
  for (const proto::NodeDef& n : add.node()) {
    if (g->by_name.count(n.name())) {
      return errors::InvalidArgument("Node name '", n.name(), "' already exists in the Graph");
    }
  }
  const bool first = g->ops.empty();
  // The first import sets the producer version; later ones take it.
  if (!first) add.clear_versions();
  // Built on a copy first, so that a bad node leaves g as it was; existing
  // nodes keep their addresses (TF_Operation points at them).
  auto trial = std::make_unique<Graph>(&Runtime::Global().ops());
  if (first) {
    GR_RETURN_IF_ERROR(ConvertGraphDefToGraph(add, trial.get()));
  } else {
    CopyGraph(*g->graph, trial.get());
    GR_RETURN_IF_ERROR(ExtendGraph(add, trial.get()));
  }
  const int before = first ? 0 : g->graph->num_node_ids();
  if (first) {
    g->graph = std::move(trial);
  } else {
    GR_RETURN_IF_ERROR(ExtendGraph(add, g->graph.get()));  // as it did on the copy
  }
  std::vector<Node*> added;
  for (Node* n : g->graph->TopologicalOrder()) {
    if (n->IsOp() && n->id() >= before) added.push_back(n);
  }
  const Status adopted = AdoptAddedNodes(g, added);
  if (!adopted.ok()) {
    if (first) g->graph = EmptyGraph();
    return adopted;
  }
  g->additions.push_back(std::move(add));
  return Status::OK();
}

}  // namespace graphrt::tf_c

extern "C" {

TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void) { return new (std::nothrow) TF_ImportGraphDefOptions; }
void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts) { delete opts; }

void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts, const char* prefix) {
  if (opts == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsSetPrefix", [&]() -> Status {
    opts->prefix = prefix ? prefix : "";
    return Status::OK();
  });
}

void TF_ImportGraphDefOptionsSetDefaultDevice(TF_ImportGraphDefOptions* opts, const char* device) {
  if (opts == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsSetDefaultDevice", [&]() -> Status {
    opts->default_device = device ? device : "";
    return Status::OK();
  });
}

void TF_ImportGraphDefOptionsSetUniquifyNames(TF_ImportGraphDefOptions* opts, unsigned char uniquify_names) {
  if (opts != nullptr) opts->uniquify_names = uniquify_names != 0;
}

void TF_ImportGraphDefOptionsSetUniquifyPrefix(TF_ImportGraphDefOptions* opts, unsigned char uniquify_prefix) {
  if (opts != nullptr) opts->uniquify_prefix = uniquify_prefix != 0;
}

void TF_ImportGraphDefOptionsAddInputMapping(TF_ImportGraphDefOptions* opts, const char* src_name, int src_index,
                                            TF_Output dst) {
  if (opts == nullptr || src_name == nullptr || dst.oper == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsAddInputMapping", [&]() -> Status {
    opts->input_map[{src_name, src_index}] = dst;
    return Status::OK();
  });
}

void TF_ImportGraphDefOptionsRemapControlDependency(TF_ImportGraphDefOptions* opts, const char* src_name,
                                                   TF_Operation* dst) {
  if (opts == nullptr || src_name == nullptr || dst == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsRemapControlDependency", [&]() -> Status {
    opts->control_map[src_name] = dst;
    return Status::OK();
  });
}

void TF_ImportGraphDefOptionsAddControlDependency(TF_ImportGraphDefOptions* opts, TF_Operation* oper) {
  if (opts == nullptr || oper == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsAddControlDependency", [&]() -> Status {
    opts->control_dependencies.push_back(oper);
    return Status::OK();
  });
}

void TF_ImportGraphDefOptionsAddReturnOutput(TF_ImportGraphDefOptions* opts, const char* oper_name, int index) {
  if (opts == nullptr || oper_name == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsAddReturnOutput", [&]() -> Status {
    opts->return_outputs.emplace_back(oper_name, index);
    return Status::OK();
  });
}

int TF_ImportGraphDefOptionsNumReturnOutputs(const TF_ImportGraphDefOptions* opts) {
  return opts ? static_cast<int>(opts->return_outputs.size()) : 0;
}

void TF_ImportGraphDefOptionsAddReturnOperation(TF_ImportGraphDefOptions* opts, const char* oper_name) {
  if (opts == nullptr || oper_name == nullptr) return;
  Call(kNoStatus, "TF_ImportGraphDefOptionsAddReturnOperation", [&]() -> Status {
    opts->return_operations.emplace_back(oper_name);
    return Status::OK();
  });
}

int TF_ImportGraphDefOptionsNumReturnOperations(const TF_ImportGraphDefOptions* opts) {
  return opts ? static_cast<int>(opts->return_operations.size()) : 0;
}

void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
                            TF_Status* status) {
  static const char* fn = "TF_GraphImportGraphDef";
  Call(status, fn, [&] { return ImportBuffer(fn, graph, graph_def, options, nullptr); });
}

TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResults(TF_Graph* graph, const TF_Buffer* graph_def,
                                                            const TF_ImportGraphDefOptions* options,
                                                            TF_Status* status) {
  static const char* fn = "TF_GraphImportGraphDefWithResults";
  TF_ImportGraphDefResults* result = nullptr;
  Call(status, fn, [&]() -> Status {
    auto r = std::make_unique<TF_ImportGraphDefResults>();
    GR_RETURN_IF_ERROR(ImportBuffer(fn, graph, graph_def, options, r.get()));
    result = r.release();
    return Status::OK();
  });
  return result;
}

void TF_GraphImportGraphDefWithReturnOutputs(TF_Graph* graph, const TF_Buffer* graph_def,
                                             const TF_ImportGraphDefOptions* options, TF_Output* return_outputs,
                                             int num_return_outputs, TF_Status* status) {
  static const char* fn = "TF_GraphImportGraphDefWithReturnOutputs";
  Call(status, fn, [&]() -> Status {
    const int want = TF_ImportGraphDefOptionsNumReturnOutputs(options);
    if (num_return_outputs != want)
      return errors::InvalidArgument(fn, ": Expected 'num_return_outputs' to be ", want, ", got ",
                                     num_return_outputs);
    if (want > 0 && return_outputs == nullptr) return NullArgument(fn, "return_outputs");
    TF_ImportGraphDefResults r;
    GR_RETURN_IF_ERROR(ImportBuffer(fn, graph, graph_def, options, &r));
    for (int i = 0; i < want; ++i) return_outputs[i] = r.return_outputs[i];
    return Status::OK();
  });
}

void TF_ImportGraphDefResultsReturnOutputs(TF_ImportGraphDefResults* results, int* num_outputs, TF_Output** outputs) {
  if (results == nullptr || num_outputs == nullptr || outputs == nullptr) return;
  *num_outputs = static_cast<int>(results->return_outputs.size());
  *outputs = results->return_outputs.data();
}

void TF_ImportGraphDefResultsReturnOperations(TF_ImportGraphDefResults* results, int* num_opers,
                                              TF_Operation*** opers) {
  if (results == nullptr || num_opers == nullptr || opers == nullptr) return;
  *num_opers = static_cast<int>(results->return_operations.size());
  *opers = results->return_operations.data();
}

void TF_ImportGraphDefResultsMissingUnusedInputMappings(TF_ImportGraphDefResults* results,
                                                        int* num_missing_unused_input_mappings,
                                                        const char*** src_names, int** src_indexes) {
  if (results == nullptr || num_missing_unused_input_mappings == nullptr || src_names == nullptr ||
      src_indexes == nullptr)
    return;
  *num_missing_unused_input_mappings = static_cast<int>(results->missing_names.size());
  *src_names = results->missing_name_pointers.data();
  *src_indexes = results->missing_indexes.data();
}

void TF_DeleteImportGraphDefResults(TF_ImportGraphDefResults* results) { delete results; }

}  // extern "C"
