#include "client_graph.h"

#include <unordered_map>
#include <unordered_set>

#include "executor.h"
#include "graphrt/core/op_registry.h"

namespace graphrt {
namespace {

std::string CanonicalTensorName(const std::string& name, int index) { return name + ":" + std::to_string(index); }

// Marks in `marked` (by node id) `roots` and every op node they depend on,
// through data and control edges.
void MarkAncestors(std::vector<const Node*> roots, std::vector<bool>* marked) {
  for (const Node* n : roots) (*marked)[n->id()] = true;
  while (!roots.empty()) {
    const Node* n = roots.back();
    roots.pop_back();
    for (const Edge* e : n->in_edges()) {
      const Node* src = e->src();
      if (!src->IsOp() || (*marked)[src->id()]) continue;
      (*marked)[src->id()] = true;
      roots.push_back(src);
    }
  }
}

// An out edge remembered across its removal.
struct Consumer {
  Node* dst;
  int dst_input;
  bool is_control;
};

}  // namespace

Status BuildClientGraph(const Graph& full, const std::vector<std::string>& feeds,
                        const std::vector<std::string>& fetches, const std::vector<std::string>& targets, Graph* out,
                        ClientGraphFeeds* feed_info) {
  Graph& g = *out;
  // Only what the feeds, fetches and targets can reach backwards is copied
  // (the pruning below then cuts at the feeds): a signature that does not
  // use a large constant does not copy it. Names that are not nodes are
  // left for the checks below to report.
  {
    const auto full_index = full.BuildNameIndex();
    std::vector<const Node*> roots;
    for (const auto* names : {&feeds, &fetches, &targets})
      for (const std::string& tensor : *names) {
        std::string name;
        int slot;
        bool control;
        if (!ParseTensorName(tensor, &name, &slot, &control)) continue;
        if (auto it = full_index.find(name); it != full_index.end()) roots.push_back(it->second);
      }
    std::vector<bool> needed(full.num_node_ids(), false);
    MarkAncestors(std::move(roots), &needed);
    CopyGraph(full, needed, &g);
  }
  auto index = g.BuildNameIndex();
  std::vector<Node*> keep;  // roots of the reverse traversal
  std::unordered_set<std::string> fed;
  std::unordered_map<std::string, Node*> arg_nodes;

  for (size_t i = 0; i < feeds.size(); ++i) {
    std::string name;
    int slot;
    bool control;
    if (!ParseTensorName(feeds[i], &name, &slot, &control) || control)
      return errors::InvalidArgument("Malformed feed name '", feeds[i], "'");
    const std::string canonical = CanonicalTensorName(name, slot);
    if (!fed.insert(canonical).second)
      return errors::InvalidArgument("Endpoint \"", canonical, "\" fed more than once.");
    auto it = index.find(name);
    if (it == index.end() || !it->second->IsOp())
      return errors::NotFound("FeedInputs: unable to find feed output ", canonical);
    Node* n = it->second;
    if (slot >= n->num_outputs())
      return errors::InvalidArgument("FeedInputs: ", canonical, " should have output index < ", n->num_outputs());
    const DataType type = BaseType(n->output_type(slot));
    proto::NodeDef d;
    d.set_name("_arg_" + name + "_" + std::to_string(slot));
    d.set_op(kArgOp);
    (*d.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    (*d.mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
    d.set_device(n->requested_device());
    Node* arg = g.AddInternalNode(std::move(d), {}, {type});
    arg->set_assigned_device(n->assigned_device());
    std::vector<const Edge*> rewire;
    for (const Edge* e : n->out_edges())
      if (e->src_output() == slot ||
          (e->IsControlEdge() && (n->op() == "Placeholder" || n->op() == "PlaceholderV2")))
        rewire.push_back(e);
    // Removed together: one by one costs n's out-degree each.
    std::vector<Consumer> consumers;
    for (const Edge* e : rewire) consumers.push_back({e->dst(), e->dst_input(), e->IsControlEdge()});
    g.RemoveEdges(rewire);
    for (const Consumer& c : consumers) {
      if (c.is_control)
        g.AddControlEdge(arg, c.dst);
      else
        g.AddEdge(arg, 0, c.dst, c.dst_input);
    }
    g.AddControlEdge(g.source_node(), arg);
    arg_nodes[canonical] = arg;
    feed_info->types.push_back(type);
    feed_info->names.push_back(canonical);
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    std::string name;
    int slot;
    bool control;
    if (!ParseTensorName(fetches[i], &name, &slot, &control) || control)
      return errors::InvalidArgument("Malformed fetch name '", fetches[i], "'");
    const std::string canonical = CanonicalTensorName(name, slot);
    auto it = index.find(name);
    if (it == index.end() || !it->second->IsOp())
      return errors::NotFound("FetchOutputs node ", canonical, ": not found");
    Node* n = it->second;
    if (n->num_outputs() == 0)
      return errors::InvalidArgument(
          "Tried to fetch data for '", fetches[i], "', which produces no output.  To run to a node but not fetch "
          "any data, pass '", fetches[i], "' as an argument to the 'target_node_names' argument of the "
          "Session::Run API.");
    if (slot >= n->num_outputs())
      return errors::InvalidArgument("FetchOutputs ", canonical, ": output index too large, must be < ",
                                     n->num_outputs());
    Node* src = n;
    int src_slot = slot;
    if (auto a = arg_nodes.find(canonical); a != arg_nodes.end()) {
      // A fed tensor is fetched straight back from its _Arg.
      src = a->second;
      src_slot = 0;
    }
    const DataType type = BaseType(src->output_type(src_slot));
    proto::NodeDef d;
    d.set_name("_retval_" + name + "_" + std::to_string(slot) + "_" + std::to_string(i));
    d.set_op(kRetvalOp);
    (*d.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    (*d.mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
    Node* ret = g.AddInternalNode(std::move(d), {type}, {});
    g.AddEdge(src, src_slot, ret, 0);
    g.AddControlEdge(ret, g.sink_node());
    keep.push_back(ret);
  }
  std::string missing;
  for (const std::string& t : targets) {
    auto it = index.find(t);
    if (it == index.end() || !it->second->IsOp()) {
      missing += (missing.empty() ? "" : ", ") + t;
      continue;
    }
    keep.push_back(it->second);
    // A target's edge to the sink keeps it live through graph rewrites
    // that drop nodes nothing reads any more.
    g.AddControlEdge(it->second, g.sink_node());
  }
  if (!missing.empty()) return errors::NotFound("PruneForTargets: Some target nodes not found: ", missing);

  // Prune to what the fetches and targets need.
  std::vector<bool> live(g.num_node_ids(), false);
  MarkAncestors(std::vector<const Node*>(keep.begin(), keep.end()), &live);
  std::vector<Node*> dead;
  for (Node* n : g.op_nodes())
    if (!live[n->id()]) dead.push_back(n);
  g.RemoveNodes(dead);
  return Status::OK();
}

}  // namespace graphrt
