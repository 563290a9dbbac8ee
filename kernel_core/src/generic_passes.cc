#include "generic_passes.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core_api_internal.h"
#include "executor.h"
#include "file_access.h"
#include "graphrt/core/control_flow.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "memory_budget.h"
#include "node_def_util.h"

namespace graphrt {
namespace {

constexpr const char* kConstOp = "Const";
constexpr const char* kIdentityOp = "Identity";
constexpr const char* kHostType = "CPU";
// Folding holds at most this many times the cap in tensors at once.
constexpr int64_t kFoldMemoryFactor = 4;
constexpr int64_t kMaxFoldedConstantBytes = int64_t{1} << 58;

// Per node id: whether the node runs outside every while loop. False when
// the loops cannot be laid out (the executor reports that; no pass touches
// such a graph).
std::vector<bool> RootFrameNodes(const Graph& g) {
  std::vector<bool> root(g.num_node_ids(), true);
  if (!HasControlFlow(g)) return root;
  FrameLayout layout;
  if (!ComputeFrameLayout(g, &layout).ok()) return std::vector<bool>(g.num_node_ids(), false);
  for (Node* n : g.op_nodes()) root[n->id()] = layout.frame_of[n->id()] == 0;
  return root;
}

bool RefOrResource(const std::vector<DataType>& types) {
  for (DataType t : types)
    if (IsRefType(t) || t == GR_RESOURCE) return true;
  return false;
}

bool FeedsRetval(const Node& n) {
  for (const Edge* e : n.out_edges())
    if (e->dst()->op() == kRetvalOp) return true;
  return false;
}

bool HasEdgeToSink(const Node& n) {
  for (const Edge* e : n.out_edges())
    if (e->dst()->IsSink()) return true;
  return false;
}

// An out edge remembered across the removal of its source.
struct Consumer {
  Node* dst;
  int src_output;  // kControlSlot for a control edge
  int dst_input;
};

std::vector<Consumer> ConsumersOf(const Node& n) {
  std::vector<Consumer> out;
  for (const Edge* e : n.out_edges()) out.push_back({e->dst(), e->src_output(), e->dst_input()});
  return out;
}

// Removes `n`; what read or waited for it reads or waits for `by` instead
// (output `by_output`, or when -1 the output it read of `n`), and waits for
// `waits_for` too.
void ReplaceNode(Graph* g, Node* n, Node* by, int by_output, const std::vector<Node*>& waits_for = {}) {
  const std::vector<Consumer> consumers = ConsumersOf(*n);
  g->RemoveNode(n);
  for (const Consumer& c : consumers) {
    if (c.src_output == kControlSlot)
      AddControlEdgeOnce(g, by, c.dst);
    else
      g->AddEdge(by, by_output >= 0 ? by_output : c.src_output, c.dst, c.dst_input);
    for (Node* w : waits_for) AddControlEdgeOnce(g, w, c.dst);
  }
}

// ------------------------------------------------------------ Identity removal

void RemoveIdentities(Graph* g) {
  const std::vector<bool> root = RootFrameNodes(*g);
  for (Node* n : g->op_nodes()) {
    if (n->op() != kIdentityOp || n->op_def() == nullptr || !root[n->id()]) continue;
    const Edge* in = n->input_edge(0);
    if (in == nullptr) continue;
    Node* src = in->src();
    const int slot = in->src_output();
    // A ref input is read when the Identity runs (a snapshot of the
    // variable); a Switch's output is live or dead by branch, and the
    // Identity is the branch's pivot.
    if (IsRefType(n->input_type(0)) || IsRefType(src->output_type(slot)) ||
        ControlFlowOpOf(src->op()) == ControlFlowOp::kSwitch || src->assigned_device() != n->assigned_device())
      continue;
    bool waits = false;
    for (const Edge* e : n->in_edges()) waits |= e->IsControlEdge() && e->src()->IsOp();
    bool reads = false, keep = false;
    for (const Edge* e : n->out_edges()) {
      // A fetch or a target keeps its node; one whose output is fed has no
      // data consumers left (they read the feed's _Arg). A Merge is not
      // dead by a dead control input, as its readers are: the Identity of
      // a cond branch (waiting for the pivot) stays.
      keep |= e->dst()->IsSink() || e->dst()->op() == kRetvalOp ||
              (waits && ControlFlowOpOf(e->dst()->op()) != ControlFlowOp::kNone);
      reads |= !e->IsControlEdge();
    }
    if (keep || !reads) continue;
    std::vector<Node*> waits_for;
    for (const Edge* e : n->in_edges())
      if (e->IsControlEdge() && e->src()->IsOp()) waits_for.push_back(e->src());
    ReplaceNode(g, n, src, slot, waits_for);
  }
}

// ------------------------------------------------------------ constant folding

// Whether `n` may be evaluated at build time when its inputs are constant.
bool MayFold(const Node& n, const std::vector<bool>& root) {
  if (n.op_def() == nullptr || n.IsStateful() || !root[n.id()] || n.num_outputs() == 0 ||
      ControlFlowOpOf(n.op()) != ControlFlowOp::kNone || RefOrResource(n.input_types()))
    return false;
  // A folded value must fit a Const's TensorProto.
  for (DataType t : n.output_types())
    if (IsRefType(t) || (t != GR_STRING && !DataTypeIsPod(t))) return false;
  // An asynchronous kernel may wait for what only a step provides.
  const KernelRegistration* reg;
  return Runtime::Global().kernels().FindKernel(n.def(), kHostType, &reg).ok() && reg->compute_async == nullptr;
}

proto::NodeDef ConstDef(const std::string& name, const std::string& device, DataType dtype) {
  proto::NodeDef d;
  d.set_name(name);
  d.set_op(kConstOp);
  d.set_device(device);
  (*d.mutable_attr())["dtype"].set_type(static_cast<proto::DataType>(dtype));
  return d;
}

// The bytes a folded value weighs against the cap.
int64_t ValueBytes(const Tensor& t) {
  if (t.dtype() != GR_STRING) return static_cast<int64_t>(t.TotalBytes());
  int64_t bytes = 0;
  for (int64_t i = 0; i < t.NumElements(); ++i) bytes += static_cast<int64_t>(t.string_at(i).size());
  return bytes;
}

// The CPU kernel of a node being folded, its attr tensors from
// `allocator`. (What the session does for its own kernels, without the
// shared stateful kernels folding never runs.)
Status CreateHostKernel(const Node& n, Device* device, Allocator* allocator, const KernelRegistration** reg,
                        void** kernel, bool* owned) {
  *owned = true;
  *kernel = nullptr;
  GR_RETURN_IF_ERROR(Runtime::Global().kernels().FindKernel(n.def(), device->type(), reg));
  return ConstructKernel(n, device, allocator, **reg, kernel);
}

// Evaluates the tensors `wanted` (node, output) of the constant nodes of
// `g` on `host`: a graph of the nodes they need, with a _Retval each. Its
// tensors may hold at most `memory_limit` bytes at once (a hostile graph's
// huge intermediate fails here, unfolded, and meets the session's budget
// when it runs).
Status Evaluate(const Graph& g, const std::vector<Node*>& order, const std::vector<std::pair<Node*, int>>& wanted,
                Device* host, int64_t memory_limit, std::vector<bool>* evaluated, std::vector<Tensor>* values) {
  std::vector<Node*> stack;
  for (const auto& [n, slot] : wanted)
    if (!(*evaluated)[n->id()]) {
      (*evaluated)[n->id()] = true;
      stack.push_back(n);
    }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges())
      if (!e->IsControlEdge() && !(*evaluated)[e->src()->id()]) {
        (*evaluated)[e->src()->id()] = true;
        stack.push_back(e->src());
      }
  }
  Graph eval(g.op_registry());
  std::vector<Node*> copy(g.num_node_ids(), nullptr);
  for (Node* n : order) {
    if (!n->IsOp() || !(*evaluated)[n->id()]) continue;
    proto::NodeDef d = n->def();
    d.clear_input();
    Node* c;
    GR_RETURN_IF_ERROR(eval.AddNode(std::move(d), &c));
    c->set_assigned_device(host->name());
    copy[n->id()] = c;
    for (const Edge* e : n->in_edges())
      if (!e->IsControlEdge()) eval.AddEdge(copy[e->src()->id()], e->src_output(), c, e->dst_input());
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& [n, slot] = wanted[i];
    const DataType type = n->output_type(slot);
    proto::NodeDef r;
    r.set_name("_folded_" + std::to_string(i));
    r.set_op(kRetvalOp);
    (*r.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    (*r.mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
    eval.AddEdge(copy[n->id()], slot, eval.AddInternalNode(std::move(r), {type}, {}), 0);
  }
  // The budget lives until its last tensor is freed; this scope owns it.
  MemoryBudget* budget = new MemoryBudget(memory_limit);
  Allocator* allocator = budget->AllocatorFor(host->allocator());
  Status s = [&] {
    std::unique_ptr<Executor> executor;
    GR_RETURN_IF_ERROR(Executor::Create(
        eval, [host](const Node&) { return host; }, [allocator](Device*) { return allocator; },
        [allocator](const Node& n, Device* d, const KernelRegistration** reg, void** kernel, bool* owned) {
          return CreateHostKernel(n, d, allocator, reg, kernel, owned);
        },
        &executor));
    const std::vector<Tensor> no_feeds;
    values->assign(wanted.size(), Tensor());
    RunArgs args;
    args.feeds = &no_feeds;
    args.fetches = values;
    // A folded value is computed once, at Create: no file may feed it (a
    // plugin op that reads files without being stateful stays unfolded).
    args.file_access = FileAccessPolicy::DenyAll();
    return executor->Run(args);
  }();
  budget->ReleaseOwner();
  GR_RETURN_IF_ERROR(s);
  for (const Tensor& t : *values)
    if (!t.IsInitialized()) return errors::Internal("a folded value has no value");
  return Status::OK();
}

void FoldConstants(const GenericPassOptions& options, const GraphPassServices& services, Device* host, Graph* g) {
  if (host == nullptr || g->op_registry()->LookUp(kConstOp) == nullptr) return;
  const std::vector<bool> root = RootFrameNodes(*g);
  const std::vector<Node*> order = g->TopologicalOrder();
  // constant[id]: the node's outputs are known now. deps[id]: the
  // non-constant nodes its constant inputs waited for (a Const in a cond
  // branch waits for the branch's pivot, and so must its folded value).
  std::vector<bool> constant(g->num_node_ids(), false);
  std::vector<std::vector<Node*>> deps(g->num_node_ids());
  for (Node* n : order) {
    if (!n->IsOp() || !MayFold(*n, root)) continue;
    bool known = true;
    int data_inputs = 0;
    std::vector<Node*> d;
    for (const Edge* e : n->in_edges()) {
      Node* src = e->src();
      if (!src->IsOp()) continue;
      if (constant[src->id()]) {
        d.insert(d.end(), deps[src->id()].begin(), deps[src->id()].end());
      } else if (e->IsControlEdge()) {
        d.push_back(src);
      } else {
        known = false;
        break;
      }
      data_inputs += !e->IsControlEdge();
    }
    // Of the nodes without inputs only a Const is known (not a Placeholder).
    if (!known || (data_inputs == 0 && n->op() != kConstOp)) continue;
    std::sort(d.begin(), d.end(), [](const Node* a, const Node* b) { return a->id() < b->id(); });
    d.erase(std::unique(d.begin(), d.end()), d.end());
    constant[n->id()] = true;
    deps[n->id()] = std::move(d);
  }
  // The tensors that non-constant nodes read, where a Const can hold them.
  std::vector<std::pair<Node*, int>> wanted;
  for (Node* n : order) {
    if (!n->IsOp() || !constant[n->id()] || n->op() == kConstOp) continue;
    std::set<int> slots;
    for (const Edge* e : n->out_edges())
      if (!e->IsControlEdge() && !constant[e->dst()->id()]) slots.insert(e->src_output());
    for (int slot : slots)
      if (services.kernel_available(ConstDef(n->name(), n->requested_device(), n->output_type(slot)),
                                    n->assigned_device()))
        wanted.emplace_back(n, slot);
  }
  if (wanted.empty()) return;
  std::vector<bool> evaluated(g->num_node_ids(), false);
  std::vector<Tensor> values;
  // A kernel that fails here fails in the step too, unless it is in a
  // branch the step does not take: either way the graph stays as it was.
  const int64_t limit = std::min(options.max_folded_constant_bytes, kMaxFoldedConstantBytes) * kFoldMemoryFactor;
  if (!Evaluate(*g, order, wanted, host, limit, &evaluated, &values).ok()) return;

  std::set<std::pair<int, int>> replaced;  // (node id, output)
  std::map<int, int> consts_of;            // node id -> its replaced outputs
  for (size_t i = 0; i < wanted.size(); ++i)
    if (ValueBytes(values[i]) <= options.max_folded_constant_bytes) {
      replaced.emplace(wanted[i].first->id(), wanted[i].second);
      ++consts_of[wanted[i].first->id()];
    }
  if (replaced.empty()) return;
  // Evaluated nodes whose every reader is gone or replaced go (a target
  // among them ran without error and has no effect).
  std::vector<bool> removed(g->num_node_ids(), false);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    if (!n->IsOp() || !evaluated[n->id()]) continue;
    bool unread = true;
    for (const Edge* e : n->out_edges()) {
      Node* dst = e->dst();
      if (dst->IsSink() || (constant[dst->id()] && removed[dst->id()])) continue;
      unread &= !e->IsControlEdge() && !constant[dst->id()] && replaced.count({n->id(), e->src_output()});
    }
    removed[n->id()] = unread;
  }

  struct Fold {
    std::string name, device, assigned;
    bool to_sink;
    std::vector<Consumer> readers;
    std::vector<Node*> deps;
    Tensor value;
  };
  std::vector<Fold> folds;
  std::unordered_map<std::string, Node*> names = g->BuildNameIndex();
  for (size_t i = 0; i < wanted.size(); ++i) {
    Node* n = wanted[i].first;
    const int slot = wanted[i].second;
    if (!replaced.count({n->id(), slot})) continue;
    Fold f;
    // The one value of a node that goes keeps its name (a fetch's, a
    // step's trace); others get a fresh one.
    const bool rename = removed[n->id()] && consts_of[n->id()] == 1;
    f.name = n->name();
    if (!rename) {
      f.name += "/_cf_" + std::to_string(slot);
      for (int k = 1; names.count(f.name); ++k) f.name = n->name() + "/_cf_" + std::to_string(slot) + "_" + std::to_string(k);
    }
    names.emplace(f.name, nullptr);
    f.device = n->requested_device();
    f.assigned = n->assigned_device();
    f.to_sink = removed[n->id()] && HasEdgeToSink(*n);
    for (const Edge* e : n->out_edges())
      if (!e->IsControlEdge() && e->src_output() == slot && !constant[e->dst()->id()])
        f.readers.push_back({e->dst(), slot, e->dst_input()});
    f.deps = deps[n->id()];
    f.value = std::move(values[i]);
    folds.push_back(std::move(f));
  }
  std::vector<Node*> doomed;
  for (Node* n : order)
    if (n->IsOp() && removed[n->id()]) doomed.push_back(n);
  g->RemoveNodes(doomed);
  for (Fold& f : folds) {
    proto::NodeDef d = ConstDef(f.name, f.device, f.value.dtype());
    f.value.AsProtoTensorContent((*d.mutable_attr())["value"].mutable_tensor());
    f.value = Tensor();
    Node* c;
    // Cannot fail: Const is registered and the attrs are its own.
    if (!g->AddNode(std::move(d), &c).ok()) continue;
    c->set_assigned_device(f.assigned);
    for (const Consumer& r : f.readers) {
      if (const Edge* old = r.dst->input_edge(r.dst_input)) g->RemoveEdge(old);
      g->AddEdge(c, 0, r.dst, r.dst_input);
    }
    if (f.deps.empty()) g->AddControlEdge(g->source_node(), c);
    for (Node* w : f.deps) g->AddControlEdge(w, c);
    if (f.to_sink) g->AddControlEdge(c, g->sink_node());
  }
}

// ------------------------------------------------------------ CSE

bool MayMerge(const Node& n) {
  return n.op_def() != nullptr && !n.IsStateful() && n.num_outputs() > 0 &&
         ControlFlowOpOf(n.op()) == ControlFlowOp::kNone && !RefOrResource(n.input_types()) &&
         !RefOrResource(n.output_types());
}

std::vector<int> ControlInputIds(const Node& n) {
  std::vector<int> ids;
  for (const Edge* e : n.in_edges())
    if (e->IsControlEdge()) ids.push_back(e->src()->id());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void HashCombine(size_t* h, size_t v) { *h ^= v + 0x9e3779b97f4a7c15ULL + (*h << 6) + (*h >> 2); }

// n's data in-edges by input (null where none), in one pass: input_edge(i)
// scans all of n's edges, so calling it per input is quadratic in a node
// with many inputs (an AddN or Pack of thousands).
std::vector<const Edge*> DataInputs(const Node& n) {
  std::vector<const Edge*> in(n.num_inputs(), nullptr);
  for (const Edge* e : n.in_edges())
    if (!e->IsControlEdge() && e->dst_input() < n.num_inputs() && in[e->dst_input()] == nullptr) in[e->dst_input()] = e;
  return in;
}

// Equal for nodes MergeKey calls equal.
size_t HashOf(const Node& n) {
  std::hash<std::string_view> hs;
  size_t h = hs(n.op());
  HashCombine(&h, hs(n.assigned_device()));
  for (const Edge* e : DataInputs(n))
    HashCombine(&h, e != nullptr ? static_cast<size_t>(e->src()->id()) * 1021 + e->src_output() : 0);
  for (int id : ControlInputIds(n)) HashCombine(&h, static_cast<size_t>(id));
  // Attrs in any order; a Const's value by its bytes, without copying them.
  size_t attrs = 0;
  for (const auto& [name, value] : n.def().attr()) {
    size_t a = hs(name);
    HashCombine(&a, value.ByteSizeLong());
    if (value.has_tensor()) HashCombine(&a, hs(value.tensor().tensor_content()));
    attrs += a;
  }
  HashCombine(&h, attrs);
  return h;
}

bool SameNode(const Node& a, const Node& b) {
  if (a.op() != b.op() || a.assigned_device() != b.assigned_device() || a.num_inputs() != b.num_inputs() ||
      a.def().attr_size() != b.def().attr_size())
    return false;
  const std::vector<const Edge*> xs = DataInputs(a), ys = DataInputs(b);
  for (int i = 0; i < a.num_inputs(); ++i) {
    const Edge* x = xs[i];
    const Edge* y = ys[i];
    if (x == nullptr || y == nullptr || x->src() != y->src() || x->src_output() != y->src_output()) return false;
  }
  if (ControlInputIds(a) != ControlInputIds(b)) return false;
  for (const auto& [name, value] : a.def().attr()) {
    auto it = b.def().attr().find(name);
    if (it == b.def().attr().end() || !google::protobuf::util::MessageDifferencer::Equals(value, it->second))
      return false;
  }
  return true;
}

void EliminateCommonSubexpressions(Graph* g) {
  std::unordered_multimap<size_t, Node*> seen;
  // In topological order, rewiring at once: the readers of merged nodes
  // become equal in turn and merge later in the same sweep.
  for (Node* n : g->TopologicalOrder()) {
    if (!n->IsOp() || !MayMerge(*n)) continue;
    const size_t h = HashOf(*n);
    Node* same = nullptr;
    for (auto [it, end] = seen.equal_range(h); it != end && same == nullptr; ++it)
      if (SameNode(*it->second, *n)) same = it->second;
    if (same == nullptr) {
      seen.emplace(h, n);
      continue;
    }
    if (FeedsRetval(*n)) continue;  // a fetched node keeps its name
    ReplaceNode(g, n, same, -1);
  }
}

}  // namespace

void AddControlEdgeOnce(Graph* g, Node* src, Node* dst) {
  g->AddControlEdge(src, dst);  // which skips a duplicate (scanning the shorter edge list)
}

Status RunGenericPasses(const GenericPassOptions& options, const GraphPassServices& services, Device* host,
                        Graph* g) {
  if (options.remove_identity) RemoveIdentities(g);
  if (options.constant_folding) FoldConstants(options, services, host, g);
  if (options.cse) EliminateCommonSubexpressions(g);
  return Status::OK();
}

}  // namespace graphrt
