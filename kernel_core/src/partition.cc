#include "graphrt/core/partition.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "control_flow_ops.h"
#include "graphrt/core/control_flow.h"
#include "node_def_util.h"

namespace graphrt {

Status RegisterSendRecvOps(OpRegistry* ops) {
  // Stateful, as in TensorFlow: a transfer must never be merged with another
  // or folded away.
  static const std::vector<CoreOpSpec> kSpecs = {
      {kSendOp,
       {"tensor: T"},
       {},
       {"T: type", "tensor_name: string", "send_device: string", "send_device_incarnation: int", "recv_device: string",
        "client_terminated: bool = false"},
       GR_OP_STATEFUL,
       nullptr},
      {kRecvOp,
       {},
       {"tensor: tensor_type"},
       {"tensor_type: type", "tensor_name: string", "send_device: string", "send_device_incarnation: int",
        "recv_device: string", "client_terminated: bool = false"},
       GR_OP_STATEFUL,
       nullptr},
  };
  return RegisterCoreOps(kSpecs, ops);
}

namespace {

// Refuses loops whose nodes span devices: their transfers would need
// TensorFlow's per-partition control-loop state (not built here).
Status CheckFramesOnOneDevice(const Graph& g) {
  if (!HasControlFlow(g)) return Status::OK();
  FrameLayout frames;
  GR_RETURN_IF_ERROR(ComputeFrameLayout(g, &frames));
  // A frame's nodes: those that run in it, and its Enters (whose outputs are in it).
  std::vector<std::set<std::string>> devices(frames.frames.size());
  for (const Node* n : g.op_nodes()) {
    for (int f : {frames.frame_of[n->id()], frames.OutputFrame(*n)})
      if (f > 0) devices[f].insert(n->assigned_device());
  }
  for (size_t f = 1; f < devices.size(); ++f) {
    if (devices[f].size() < 2) continue;
    std::string names;
    for (const std::string& d : devices[f]) names += (names.empty() ? "" : ", ") + d;
    return errors::Unimplemented("While loop frame '", frames.frames[f].name, "' has nodes on several devices (",
                                 names, "); partitioning a loop across devices is not supported: place all of its "
                                 "nodes on one device");
  }
  return Status::OK();
}

// Builds the partitions' transfer nodes with names unique in the graph.
class TransferBuilder {
 public:
  TransferBuilder(const PartitionOptions& options, const Graph& g) : options_(options) {
    for (const Node* n : g.op_nodes()) names_.insert(n->name());
  }

  // TensorFlow's naming of added nodes: "<prefix>/_<counter>".
  std::string NewName(const std::string& prefix) {
    std::string name;
    do name = prefix + "/_" + std::to_string(counter_++);
    while (!names_.insert(name).second);
    return name;
  }

  // A _Send in `send_part` of output `slot` of `src` and its _Recv in
  // `recv_part`; returns the _Recv.
  Status AddPair(Graph* send_part, Node* src, int slot, const std::string& tensor_name, const std::string& send_device,
                 Graph* recv_part, const std::string& recv_device, bool send_from_host, bool recv_on_host,
                 const std::string& name_prefix, Node** recv) {
    const DataType type = BaseType(src->output_type(slot));
    const int64_t incarnation =
        static_cast<int64_t>(options_.get_incarnation ? options_.get_incarnation(send_device) : 0);
    auto common = [&](proto::NodeDef* d) {
      auto& attr = *d->mutable_attr();
      attr["tensor_name"].set_s(tensor_name);
      attr["send_device"].set_s(send_device);
      attr["send_device_incarnation"].set_i(incarnation);
      attr["recv_device"].set_s(recv_device);
      attr["client_terminated"].set_b(false);
    };
    proto::NodeDef send_def;
    send_def.set_name(NewName(name_prefix));
    send_def.set_op(kSendOp);
    send_def.set_device(send_device);
    (*send_def.mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
    common(&send_def);
    if (send_from_host) (*send_def.mutable_attr())[kSendFromHostAttr].set_b(true);
    Node* send;
    GR_RETURN_IF_ERROR(AddTransferNode(send_part, std::move(send_def), send_device, &send));
    send_part->AddEdge(src, slot, send, 0);
    send_part->AddControlEdge(send, send_part->sink_node());

    proto::NodeDef recv_def;
    recv_def.set_name(NewName(name_prefix));
    recv_def.set_op(kRecvOp);
    recv_def.set_device(recv_device);
    (*recv_def.mutable_attr())["tensor_type"].set_type(static_cast<proto::DataType>(type));
    common(&recv_def);
    if (recv_on_host) (*recv_def.mutable_attr())[kRecvOnHostAttr].set_b(true);
    // The receiver must know where the value it gets lives, to copy it.
    if (send_from_host) (*recv_def.mutable_attr())[kSendFromHostAttr].set_b(true);
    GR_RETURN_IF_ERROR(AddTransferNode(recv_part, std::move(recv_def), recv_device, recv));
    recv_part->AddControlEdge(recv_part->source_node(), *recv);
    return Status::OK();
  }

  // The empty float tensor a control edge sends (TensorFlow's dummy), run
  // once `src` has run.
  Status AddDummy(Graph* part, Node* src, const std::string& device, Node** out) {
    proto::NodeDef d;
    d.set_name(NewName(src->name() + "/ctrl"));
    d.set_op("Const");
    d.set_device(device);
    auto& attr = *d.mutable_attr();
    attr["dtype"].set_type(proto::DT_FLOAT);
    proto::TensorProto* value = attr["value"].mutable_tensor();
    value->set_dtype(proto::DT_FLOAT);
    value->mutable_tensor_shape()->add_dim()->set_size(0);
    GR_RETURN_IF_ERROR(AddTransferNode(part, std::move(d), device, out));
    part->AddControlEdge(src, *out);
    return Status::OK();
  }

 private:
  static Status AddTransferNode(Graph* part, proto::NodeDef def, const std::string& device, Node** out) {
    const std::string op = def.op();
    Status s = part->AddNode(std::move(def), out);
    if (!s.ok())
      return errors::Internal("Partitioning needs op '", op, "' (for a transfer to ", device, "): ", s.message());
    (*out)->set_assigned_device(device);
    return Status::OK();
  }

  const PartitionOptions& options_;
  std::unordered_set<std::string> names_;
  int64_t counter_ = 0;
};

}  // namespace

Status Partition(const PartitionOptions& options, const Graph& g,
                 std::map<std::string, std::unique_ptr<Graph>>* partitions) {
  partitions->clear();
  for (const Node* n : g.op_nodes())
    if (n->assigned_device().empty())
      return errors::InvalidArgument(NodePrefix(n->def()), ": has no assigned device; only a placed graph can be "
                                     "partitioned");
  GR_RETURN_IF_ERROR(CheckFramesOnOneDevice(g));

  // loc[id]: the partition node id goes to.
  std::vector<std::string> loc(g.num_node_ids());
  for (const Node* n : g.op_nodes()) loc[n->id()] = options.node_to_loc ? options.node_to_loc(*n) : n->assigned_device();
  // Each partition starts as a copy of the graph less the other partitions'
  // nodes (their edges go with them); copy[id] is node id's copy in its own.
  std::vector<Node*> copy(g.num_node_ids(), nullptr);
  std::map<std::string, Graph*> part_of;
  for (const Node* n : g.op_nodes()) part_of[loc[n->id()]] = nullptr;
  for (auto& [location, part] : part_of) {
    auto p = std::make_unique<Graph>(g.op_registry());
    CopyGraph(g, p.get());
    const auto index = p->BuildNameIndex();
    std::vector<Node*> elsewhere;
    for (const Node* n : g.op_nodes()) {
      Node* c = index.at(n->name());
      if (loc[n->id()] == location)
        copy[n->id()] = c;
      else
        elsewhere.push_back(c);
    }
    p->RemoveNodes(elsewhere);
    part = p.get();
    (*partitions)[location] = std::move(p);
  }
  if (partitions->empty()) {  // no op nodes: one empty graph is still the step
    auto p = std::make_unique<Graph>(g.op_registry());
    CopyGraph(g, p.get());
    (*partitions)[""] = std::move(p);
    return Status::OK();
  }

  TransferBuilder builder(options, g);
  // (source node id, output or kControlSlot, destination device, lands in host memory) -> _Recv
  std::map<std::tuple<int, int, std::string, bool>, Node*> recvs;
  for (const Node* dst : g.op_nodes()) {
    const std::string& dst_device = dst->assigned_device();
    Graph* dst_part = part_of[loc[dst->id()]];
    for (const Edge* e : dst->in_edges()) {
      Node* src = e->src();
      if (!src->IsOp() || loc[src->id()] == loc[dst->id()]) continue;
      const std::string& src_device = src->assigned_device();
      Graph* src_part = part_of[loc[src->id()]];
      const bool control = e->IsControlEdge();
      const bool on_host = !control && options.input_on_host && options.input_on_host(*dst, e->dst_input());
      Node*& recv = recvs[{src->id(), e->src_output(), dst_device, on_host}];
      if (recv == nullptr) {
        Node* sent = copy[src->id()];
        int slot = e->src_output();
        bool from_host = false;
        if (control) {
          GR_RETURN_IF_ERROR(builder.AddDummy(src_part, sent, src_device, &sent));
          slot = 0;
        } else {
          from_host = options.output_on_host && options.output_on_host(*src, slot);
        }
        const std::string tensor_name = "edge_" + std::to_string(e->id()) + "_" + src->name();
        GR_RETURN_IF_ERROR(builder.AddPair(src_part, sent, slot, tensor_name, src_device, dst_part, dst_device,
                                           from_host, on_host, src->name(), &recv));
      }
      if (control)
        dst_part->AddControlEdge(recv, copy[dst->id()]);
      else
        dst_part->AddEdge(recv, 0, copy[dst->id()], e->dst_input());
    }
  }
  return Status::OK();
}

Status InsertTransfers(const PartitionOptions& options,
                       const std::function<bool(const std::string& src_device, const std::string& dst_device)>&
                           needs_transfer,
                       Graph* g, int* num_transfers) {
  *num_transfers = 0;
  auto output_on_host = [&](const Node& n, int slot) { return options.output_on_host && options.output_on_host(n, slot); };
  auto input_on_host = [&](const Node& n, int slot) { return options.input_on_host && options.input_on_host(n, slot); };
  std::vector<const Edge*> crossing;
  for (const Node* dst : g->op_nodes())
    for (const Edge* e : dst->in_edges()) {
      if (e->IsControlEdge() || !e->src()->IsOp()) continue;
      const std::string& from = e->src()->assigned_device();
      const std::string& to = dst->assigned_device();
      if (!needs_transfer(from, to)) continue;
      // Within one device with its own memory, only a host-memory arg read
      // as device memory (or the reverse) needs a copy (TensorFlow's
      // memory types).
      if (from == to && output_on_host(*e->src(), e->src_output()) == input_on_host(*dst, e->dst_input())) continue;
      crossing.push_back(e);
    }
  if (crossing.empty()) return Status::OK();
  if (HasControlFlow(*g)) {
    FrameLayout frames;
    GR_RETURN_IF_ERROR(ComputeFrameLayout(*g, &frames));
    for (const Edge* e : crossing) {
      const int f = frames.frame_of[e->dst()->id()];
      if (f > 0 || frames.OutputFrame(*e->src()) > 0)
        return errors::Unimplemented(
            "While loop frame '", frames.frames[std::max(f, frames.OutputFrame(*e->src()))].name, "': the edge ",
            e->src()->name(), ":", e->src_output(), " -> ", e->dst()->name(), " crosses from ",
            e->src()->assigned_device(), " to ", e->dst()->assigned_device(),
            ", devices that do not share memory; a transfer inside a loop is not supported: place the loop's nodes "
            "on one device");
    }
  }
  TransferBuilder builder(options, *g);
  // (source node id, output, destination device, lands in host memory) -> _Recv
  std::map<std::tuple<int, int, std::string, bool>, Node*> recvs;
  for (const Edge* e : crossing) {
    Node* src = e->src();
    Node* dst = e->dst();
    const int slot = e->src_output(), input = e->dst_input();
    const std::string& src_device = src->assigned_device();
    const std::string& dst_device = dst->assigned_device();
    const bool on_host = input_on_host(*dst, input);
    const std::string tensor_name = "edge_" + std::to_string(e->id()) + "_" + src->name();
    Node*& recv = recvs[{src->id(), slot, dst_device, on_host}];
    g->RemoveEdge(e);
    if (recv == nullptr) {
      const bool from_host = output_on_host(*src, slot);
      GR_RETURN_IF_ERROR(builder.AddPair(g, src, slot, tensor_name, src_device, g, dst_device, from_host, on_host,
                                         src->name(), &recv));
      ++*num_transfers;
    }
    g->AddEdge(recv, 0, dst, input);
  }
  return Status::OK();
}

bool IsHostMemoryArg(const KernelRegistration& reg, const Node& n, int slot, bool input) {
  if (reg.host_memory_args.empty() || n.op_def() == nullptr) return false;
  DataTypeVector inputs, outputs;
  std::vector<ArgRange> input_ranges, output_ranges;
  if (!InputOutputTypes(n.def(), *n.op_def(), &inputs, &outputs, &input_ranges, &output_ranges).ok()) return false;
  for (const ArgRange& r : input ? input_ranges : output_ranges)
    if (slot >= r.begin && slot < r.end)
      return std::find(reg.host_memory_args.begin(), reg.host_memory_args.end(), r.name) !=
             reg.host_memory_args.end();
  return false;
}

void PartitionToGraphDef(const Graph& partition, proto::GraphDef* out) {
  partition.ToGraphDef(out);
  std::unordered_map<std::string, const Node*> index;
  for (const Node* n : partition.op_nodes()) index.emplace(n->name(), n);
  for (proto::NodeDef& d : *out->mutable_node()) {
    auto it = index.find(d.name());
    if (it != index.end() && !it->second->assigned_device().empty()) d.set_device(it->second->assigned_device());
  }
}

}  // namespace graphrt
