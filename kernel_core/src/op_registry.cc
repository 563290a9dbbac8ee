#include "graphrt/core/op_registry.h"

#include <google/protobuf/util/message_differencer.h>

#include <mutex>

namespace graphrt {
namespace {

// Two OpDefs define the same op when they differ at most in documentation.
bool SameDefinition(const proto::OpDef& a, const proto::OpDef& b) {
  proto::OpDef x = a, y = b;
  x.clear_summary();
  x.clear_description();
  y.clear_summary();
  y.clear_description();
  return google::protobuf::util::MessageDifferencer::Equals(x, y);
}

}  // namespace

const OpRegistrationData* OpRegistry::LookUp(const std::string& op) const {
  std::shared_lock lock(mu_);
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : it->second.get();
}

Status OpRegistry::LookUpOpDef(const std::string& op, const proto::OpDef** out) const {
  const OpRegistrationData* d = LookUp(op);
  if (d == nullptr)
    return errors::NotFound("Op type not registered '", op,
                            "'. Load the plugin that defines it (graphrt --plugin FILE, or "
                            "Runtime::LoadPlugin).");
  *out = &d->op_def;
  return Status::OK();
}

std::vector<const OpRegistrationData*> OpRegistry::ListOps() const {
  std::shared_lock lock(mu_);
  std::vector<const OpRegistrationData*> v;
  for (const auto& [name, data] : ops_) v.push_back(data.get());
  return v;
}

Status OpRegistry::CheckAll(const std::vector<std::unique_ptr<OpRegistrationData>>& ops) const {
  std::shared_lock lock(mu_);
  std::map<std::string, const proto::OpDef*> batch;
  for (const auto& d : ops) {
    const std::string& name = d->op_def.name();
    auto it = ops_.find(name);
    if (it != ops_.end() && !SameDefinition(it->second->op_def, d->op_def))
      return errors::AlreadyExists("Op '", name, "' is already defined differently by plugin '",
                                   it->second->plugin, "'");
    auto [bit, inserted] = batch.emplace(name, &d->op_def);
    if (!inserted && !SameDefinition(*bit->second, d->op_def))
      return errors::AlreadyExists("Op '", name, "' is defined twice, differently, by plugin '", d->plugin, "'");
  }
  return Status::OK();
}

Status OpRegistry::AddAll(std::vector<std::unique_ptr<OpRegistrationData>> ops) {
  GR_RETURN_IF_ERROR(CheckAll(ops));
  std::unique_lock lock(mu_);
  for (auto& d : ops) {
    const std::string name = d->op_def.name();
    if (ops_.count(name) == 0) ops_.emplace(name, std::move(d));
  }
  return Status::OK();
}

}  // namespace graphrt
