#include "graphrt/core/kernel_registry.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "node_def_util.h"

namespace graphrt {

std::string KernelRegistration::DebugString() const {
  std::string s = "device='" + device_type + "'";
  if (!label.empty()) s += "; label='" + label + "'";
  for (const auto& [attr, types] : constraints) {
    s += "; " + attr + " in [";
    for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + DataTypeEnumName(types[i]);
    s += "]";
  }
  return s;
}

namespace {

bool Matches(const KernelRegistration& k, const proto::NodeDef& node, const std::string& label) {
  if (k.label != label) return false;
  // Named references, not a structured binding: clang 14 cannot capture those.
  for (const auto& constraint : k.constraints) {
    const auto& attr = constraint.first;
    const auto& allowed = constraint.second;
    const proto::AttrValue* v = FindAttr(node, attr);
    if (v == nullptr) return false;
    auto ok = [&](int t) {
      return std::find(allowed.begin(), allowed.end(), static_cast<DataType>(t)) != allowed.end();
    };
    if (v->value_case() == proto::AttrValue::kType) {
      if (!ok(v->type())) return false;
    } else if (v->value_case() == proto::AttrValue::kList) {
      for (int t : v->list().type())
        if (!ok(t)) return false;
    } else {
      return false;
    }
  }
  return true;
}

std::string NodeTypeAttrs(const proto::NodeDef& node) {
  std::string s;
  for (const auto& [name, v] : node.attr()) {
    if (v.value_case() == proto::AttrValue::kType)
      s += (s.empty() ? "" : "; ") + name + "=" + DataTypeEnumName(static_cast<DataType>(v.type()));
  }
  return s;
}

}  // namespace

Status KernelRegistry::FindKernel(const proto::NodeDef& node, const std::string& device_type,
                                  const KernelRegistration** out) const {
  std::shared_lock lock(mu_);
  std::string label;
  if (const proto::AttrValue* v = FindAttr(node, "_kernel")) label = v->s();
  const KernelRegistration* best = nullptr;
  std::string registered;
  auto range = kernels_.equal_range(node.op());
  for (auto it = range.first; it != range.second; ++it) {
    const KernelRegistration& k = *it->second;
    registered += "\n  " + k.DebugString() + " (plugin " + k.plugin + ")";
    if (k.device_type != device_type || !Matches(k, node, label)) continue;
    if (best == nullptr || k.priority > best->priority) best = &k;
  }
  if (best == nullptr) {
    if (range.first == range.second)
      return errors::InvalidArgument(NodePrefix(node), ": No OpKernel was registered to support Op '", node.op(),
                                     "'; load a plugin that provides its kernels");
    return errors::InvalidArgument(NodePrefix(node), ": No OpKernel was registered to support Op '", node.op(),
                                   "' on device ", device_type, " with these attrs [", NodeTypeAttrs(node),
                                   "]. Registered kernels:", registered);
  }
  *out = best;
  return Status::OK();
}

std::vector<std::string> KernelRegistry::DeviceTypesForOp(const std::string& op) const {
  std::shared_lock lock(mu_);
  std::set<std::string> types;
  auto range = kernels_.equal_range(op);
  for (auto it = range.first; it != range.second; ++it) types.insert(it->second->device_type);
  return std::vector<std::string>(types.begin(), types.end());
}

std::vector<const KernelRegistration*> KernelRegistry::KernelsForOp(const std::string& op) const {
  std::shared_lock lock(mu_);
  std::vector<const KernelRegistration*> v;
  auto range = kernels_.equal_range(op);
  for (auto it = range.first; it != range.second; ++it) v.push_back(it->second.get());
  return v;
}

void KernelRegistry::AddAll(std::vector<std::unique_ptr<KernelRegistration>> kernels) {
  std::unique_lock lock(mu_);
  for (auto& k : kernels) {
    std::string op = k->op;
    kernels_.emplace(std::move(op), std::move(k));
  }
}

}  // namespace graphrt
