#include "placer.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>

#include "executor.h"
#include "graphrt/core/device_name.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/runtime.h"
#include "node_def_util.h"

namespace graphrt {

namespace {

// In a local placement job, replica and task are checked (IsLocalProcess)
// before matching and dropped from the spec.
bool Matches(const DeviceNameParts& spec, const PlacementDevice& d) {
  return (!spec.has_type || spec.type == d.type) && (!spec.has_id || spec.id == d.id) &&
         (!spec.has_job || spec.job == d.parts.job) && (!spec.has_replica || spec.replica == d.parts.replica) &&
         (!spec.has_task || spec.task == d.parts.task);
}

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

// One colocation group: the merged device spec of its members, and the
// member whose spec set each field (for error messages).
struct Group {
  std::vector<Node*> members;
  DeviceNameParts spec;
  const Node* type_from = nullptr;
  const Node* id_from = nullptr;
  const Node* task_from = nullptr;  // set job, replica or task
  const PlacementDevice* assigned = nullptr;
};

Status MergeSpec(Node* n, const DeviceNameParts& s, Group* g) {
  auto conflict = [&](const Node* other) {
    return errors::InvalidArgument(NodePrefix(n->def()), ": cannot be colocated with '", other->name(),
                                   "': their device specifications '", n->requested_device(), "' and '",
                                   other->requested_device(), "' are incompatible");
  };
  if (s.has_type) {
    if (g->spec.has_type && g->spec.type != s.type) return conflict(g->type_from);
    g->spec.has_type = true;
    g->spec.type = s.type;
    g->type_from = n;
  }
  if (s.has_id) {
    if (g->spec.has_id && g->spec.id != s.id) return conflict(g->id_from);
    g->spec.has_id = true;
    g->spec.id = s.id;
    g->id_from = n;
  }
  if (s.has_job || s.has_replica || s.has_task) {
    if ((s.has_job && g->spec.has_job && g->spec.job != s.job) ||
        (s.has_replica && g->spec.has_replica && g->spec.replica != s.replica) ||
        (s.has_task && g->spec.has_task && g->spec.task != s.task))
      return conflict(g->task_from);
    if (s.has_job) g->spec.has_job = true, g->spec.job = s.job;
    if (s.has_replica) g->spec.has_replica = true, g->spec.replica = s.replica;
    if (s.has_task) g->spec.has_task = true, g->spec.task = s.task;
    g->task_from = n;
  }
  return Status::OK();
}

// Whether `d` has kernels for every member whose op has kernels somewhere.
bool Supports(const PlacementDevice& d, const Group& g) {
  const KernelRegistry& kernels = Runtime::Global().kernels();
  for (const Node* n : g.members) {
    const std::vector<std::string> types = kernels.DeviceTypesForOp(n->op());
    if (!types.empty() && std::find(types.begin(), types.end(), d.type) == types.end()) return false;
  }
  return true;
}

}  // namespace

std::vector<PlacementDevice> PlacementDevicesOf(const std::vector<Device*>& devices) {
  std::vector<PlacementDevice> out(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    out[i].name = devices[i]->name();
    ParseDeviceName(out[i].name, &out[i].parts).IgnoreError();  // the core names its devices
    out[i].type = devices[i]->type();
    out[i].id = devices[i]->ordinal();
    out[i].host_memory = devices[i]->host_memory();
  }
  return out;
}

Status PlaceGraph(const std::vector<Device*>& devices, const PlacementOptions& options, Graph* g) {
  return PlaceGraph(PlacementDevicesOf(devices), options, g);
}

Status PlaceClientGraph(const std::vector<Device*>& devices, const PlacementOptions& options, Graph* g) {
  return PlaceClientGraph(PlacementDevicesOf(devices), options, g);
}

Status PlaceGraph(const std::vector<PlacementDevice>& devices, const PlacementOptions& options, Graph* g) {
  const bool allow_soft_placement = options.allow_soft_placement;
  if (devices.empty()) return errors::FailedPrecondition("No devices are registered");
  std::unordered_map<std::string, const PlacementDevice*> by_name;
  for (const PlacementDevice& d : devices) by_name[d.name] = &d;
  const std::unordered_map<std::string, Node*> index = g->BuildNameIndex();

  // Core-internal nodes (feeds, fetches) have no OpDef; their caller places them.
  std::vector<Node*> nodes;
  for (Node* n : g->op_nodes())
    if (n->op_def() != nullptr) nodes.push_back(n);

  UnionFind uf(g->num_node_ids());
  for (Node* n : nodes) {
    if (const proto::AttrValue* cls = FindAttr(n->def(), "_class")) {
      for (const std::string& loc : cls->list().s()) {
        if (loc.rfind("loc:@", 0) != 0) continue;
        auto it = index.find(loc.substr(5));
        if (it != index.end() && it->second->op_def() != nullptr) uf.Union(n->id(), it->second->id());
      }
    }
    // A node that writes through a ref must run where the ref lives.
    for (const Edge* e : n->in_edges())
      if (!e->IsControlEdge() && e->src()->op_def() != nullptr && IsRefType(n->input_type(e->dst_input())))
        uf.Union(n->id(), e->src()->id());
  }

  std::unordered_map<int, Group> groups;
  std::vector<Node*> placed;  // by this call, for the log
  for (Node* n : nodes) {
    Group& grp = groups[uf.Find(n->id())];
    grp.members.push_back(n);
    if (!n->assigned_device().empty()) {
      auto it = by_name.find(n->assigned_device());
      if (it == by_name.end())
        return errors::Internal(NodePrefix(n->def()), ": Assigned device '", n->assigned_device(),
                                "' does not match any device");
      grp.assigned = it->second;
      continue;
    }
    placed.push_back(n);
    DeviceNameParts spec;
    Status s = ParseDeviceName(n->requested_device(), &spec);
    if (!s.ok()) return Status(s.code(), NodePrefix(n->def()) + ": " + s.message());
    if (!options.cluster && !IsLocalProcess(spec)) {
      // Another process's device: this one cannot run the node (a distributed
      // target would route it there). TensorFlow's soft placement ignores it.
      if (!allow_soft_placement)
        return errors::InvalidArgument(
            NodePrefix(n->def()), ": Could not satisfy explicit device specification '", n->requested_device(),
            "' because it names a job, replica or task other than this process's (/job:localhost/replica:0/task:0). "
            "Set allow_soft_placement to place it here.");
    }
    if (!options.cluster) spec.has_job = spec.has_replica = spec.has_task = false;
    // Under soft placement colocation wins over a conflicting device spec.
    Status merged = MergeSpec(n, spec, &grp);
    if (!merged.ok() && !allow_soft_placement) return merged;
  }

  // A named reference, not a structured binding: clang 14 cannot capture those.
  for (auto& group : groups) {
    auto& grp = group.second;
    const PlacementDevice* chosen = grp.assigned;
    for (const PlacementDevice& d : devices) {
      if (chosen != nullptr) break;
      if (Matches(grp.spec, d) && Supports(d, grp)) chosen = &d;
    }
    if (chosen == nullptr) {
      const Node* n = grp.id_from     ? grp.id_from
                      : grp.type_from ? grp.type_from
                      : grp.task_from ? grp.task_from
                                      : grp.members.front();
      if (!allow_soft_placement) {
        std::string names;
        for (const PlacementDevice& d : devices) names += (names.empty() ? "" : ", ") + d.name;
        const bool matched_some = std::any_of(devices.begin(), devices.end(),
                                              [&](const PlacementDevice& d) { return Matches(grp.spec, d); });
        return errors::InvalidArgument(
            NodePrefix(n->def()), ": Could not satisfy explicit device specification '", n->requested_device(), "' ",
            matched_some      ? "because no supported kernel for the ops of its colocation group is available there"
            : options.cluster ? "because no devices matching that specification are in the cluster (or the "
                                "session's device_filters leave them out)"
                              : "because no devices matching that specification are registered in this process",
            "; available devices: ", names, ". Set allow_soft_placement to place it elsewhere.");
      }
      // Soft placement: the spec's device type and index give way first,
      // then its task.
      DeviceNameParts task_only = grp.spec;
      task_only.has_type = task_only.has_id = false;
      for (const PlacementDevice& d : devices)
        if (chosen == nullptr && Matches(task_only, d) && Supports(d, grp)) chosen = &d;
      for (const PlacementDevice& d : devices)
        if (chosen == nullptr && Supports(d, grp)) chosen = &d;
      if (chosen == nullptr) chosen = &devices.front();  // no kernels anywhere: the kernel lookup will say so
    }
    for (Node* n : grp.members)
      if (n->assigned_device().empty()) n->set_assigned_device(chosen->name);
  }
  if (options.log_device_placement) {
    // One write, so that lines of concurrent placements do not interleave.
    std::string log;
    for (const Node* n : placed) log += n->name() + ": (" + n->op() + "): " + n->assigned_device() + "\n";
    std::fputs(log.c_str(), stderr);
  }
  return Status::OK();
}

Status PlaceClientGraph(const std::vector<PlacementDevice>& devices, const PlacementOptions& options, Graph* g) {
  GR_RETURN_IF_ERROR(PlaceGraph(devices, options, g));
  // Feeds and fetches are host memory: an _Arg or _Retval goes beside its
  // neighbour when that device works in host memory, else to the first
  // device that does (the value then crosses through a transfer).
  const PlacementDevice* host = &devices.front();
  for (const PlacementDevice& d : devices)
    if (d.host_memory) {
      host = &d;
      break;
    }
  auto in_host_memory = [&](const std::string& name) {
    for (const PlacementDevice& d : devices)
      if (d.name == name) return d.host_memory ? name : host->name;
    return host->name;
  };
  for (Node* n : g->op_nodes()) {
    if (n->op() != kArgOp) continue;
    std::string device = n->assigned_device();
    for (const Edge* e : n->out_edges())
      if (device.empty() && e->dst()->IsOp()) device = e->dst()->assigned_device();
    n->set_assigned_device(in_host_memory(device));
  }
  for (Node* n : g->op_nodes()) {
    if (n->op() != kRetvalOp) continue;
    const Edge* in = n->input_edge(0);
    n->set_assigned_device(in_host_memory(in ? in->src()->assigned_device() : std::string()));
  }
  return Status::OK();
}

}  // namespace graphrt
