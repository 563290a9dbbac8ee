#include "placer.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <unordered_map>

#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/runtime.h"
#include "node_def_util.h"

namespace graphrt {

Status ParseDeviceSpec(const std::string& s, DeviceSpec* out) {
  *out = DeviceSpec();
  if (s.empty()) return Status::OK();
  auto malformed = [&] { return errors::InvalidArgument("Malformed device specification '", s, "'"); };
  size_t pos = 0;
  std::string rest = s;
  if (rest[0] != '/') rest = "/" + rest;
  while (pos < rest.size()) {
    if (rest[pos] != '/') return malformed();
    size_t next = rest.find('/', pos + 1);
    std::string part = rest.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    pos = next == std::string::npos ? rest.size() : next;
    size_t c = part.find(':');
    if (c == std::string::npos) return malformed();
    std::string key = part.substr(0, c), val = part.substr(c + 1);
    if (key == "job" || key == "replica" || key == "task") continue;
    std::string type, id;
    if (key == "device") {
      size_t c2 = val.find(':');
      type = val.substr(0, c2);
      id = c2 == std::string::npos ? "*" : val.substr(c2 + 1);
    } else if (key == "cpu" || key == "gpu" || key == "CPU" || key == "GPU") {
      type = key;
      id = val;
    } else {
      return malformed();
    }
    for (char& ch : type) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out->type = type;
    if (id == "*" || id.empty()) {
      out->id = -1;
    } else if (std::all_of(id.begin(), id.end(), ::isdigit) && id.size() < 9) {
      out->id = std::stoi(id);
    } else {
      return malformed();
    }
  }
  return Status::OK();
}

namespace {

bool Matches(const DeviceSpec& spec, const Device& d) {
  return (spec.type.empty() || spec.type == d.type()) && (spec.id < 0 || spec.id == d.ordinal());
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
  DeviceSpec spec;
  const Node* type_from = nullptr;
  const Node* id_from = nullptr;
  Device* assigned = nullptr;
};

Status MergeSpec(Node* n, const DeviceSpec& s, Group* g) {
  auto conflict = [&](const Node* other) {
    return errors::InvalidArgument(NodePrefix(n->def()), ": cannot be colocated with '", other->name(),
                                   "': their device specifications '", n->requested_device(), "' and '",
                                   other->requested_device(), "' are incompatible");
  };
  if (!s.type.empty()) {
    if (!g->spec.type.empty() && g->spec.type != s.type) return conflict(g->type_from);
    g->spec.type = s.type;
    g->type_from = n;
  }
  if (s.id >= 0) {
    if (g->spec.id >= 0 && g->spec.id != s.id) return conflict(g->id_from);
    g->spec.id = s.id;
    g->id_from = n;
  }
  return Status::OK();
}

// Whether `d` has kernels for every member whose op has kernels somewhere.
bool Supports(const Device& d, const Group& g) {
  const KernelRegistry& kernels = Runtime::Global().kernels();
  for (const Node* n : g.members) {
    const std::vector<std::string> types = kernels.DeviceTypesForOp(n->op());
    if (!types.empty() && std::find(types.begin(), types.end(), d.type()) == types.end()) return false;
  }
  return true;
}

}  // namespace

Status PlaceGraph(const std::vector<Device*>& devices, bool allow_soft_placement, Graph* g) {
  if (devices.empty()) return errors::FailedPrecondition("No devices are registered");
  std::unordered_map<std::string, Device*> by_name;
  for (Device* d : devices) by_name[d->name()] = d;
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
    DeviceSpec spec;
    Status s = ParseDeviceSpec(n->requested_device(), &spec);
    if (!s.ok()) return Status(s.code(), NodePrefix(n->def()) + ": " + s.message());
    // Under soft placement colocation wins over a conflicting device spec.
    Status merged = MergeSpec(n, spec, &grp);
    if (!merged.ok() && !allow_soft_placement) return merged;
  }

  // A named reference, not a structured binding: clang 14 cannot capture those.
  for (auto& group : groups) {
    auto& grp = group.second;
    Device* chosen = grp.assigned;
    for (Device* d : devices) {
      if (chosen != nullptr) break;
      if (Matches(grp.spec, *d) && Supports(*d, grp)) chosen = d;
    }
    if (chosen == nullptr) {
      const Node* n = grp.id_from ? grp.id_from : grp.type_from ? grp.type_from : grp.members.front();
      if (!allow_soft_placement) {
        std::string names;
        for (Device* d : devices) names += (names.empty() ? "" : ", ") + d->name();
        const bool matched_some = std::any_of(devices.begin(), devices.end(),
                                              [&](Device* d) { return Matches(grp.spec, *d); });
        return errors::InvalidArgument(
            NodePrefix(n->def()), ": Could not satisfy explicit device specification '", n->requested_device(), "' ",
            matched_some ? "because no supported kernel for the ops of its colocation group is available there"
                         : "because no devices matching that specification are registered in this process",
            "; available devices: ", names, ". Set allow_soft_placement to place it elsewhere.");
      }
      for (Device* d : devices)
        if (chosen == nullptr && Supports(*d, grp)) chosen = d;
      if (chosen == nullptr) chosen = devices.front();  // no kernels anywhere: the kernel lookup will say so
    }
    for (Node* n : grp.members)
      if (n->assigned_device().empty()) n->set_assigned_device(chosen->name());
  }
  return Status::OK();
}

}  // namespace graphrt
