#include "resource_mgr.h"

#include <unordered_set>
#include <vector>

namespace graphrt {

Status ResourceMgr::Delete(std::string_view container, std::string_view name, std::string_view type_name) {
  Key key = MakeKey(container, name);
  ResourceBase* r = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = resources_.find(key);
    if (it == resources_.end() || it->second->type_name() != type_name)
      return errors::NotFound("Resource ", key.first, "/", key.second, " of type ", type_name,
                              " does not exist.");
    r = it->second;
    resources_.erase(it);
  }
  r->Unref();  // outside the lock: a plugin's destroy may take its own locks
  return Status::OK();
}

void ResourceMgr::Cleanup(std::string_view container) {
  std::vector<ResourceBase*> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string c(container);
    for (auto it = resources_.lower_bound({c, std::string()}); it != resources_.end() && it->first.first == c;) {
      dropped.push_back(it->second);
      it = resources_.erase(it);
    }
  }
  for (ResourceBase* r : dropped) r->Unref();
}

void ResourceMgr::Clear() {
  std::map<Key, ResourceBase*> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(resources_);
  }
  for (auto& [key, r] : all) r->Unref();
}

const char* InternString(std::string_view s) {
  static std::mutex mu;
  static auto* strings = new std::unordered_set<std::string>();  // never freed: handles may outlive statics
  std::lock_guard<std::mutex> lock(mu);
  return strings->emplace(s).first->c_str();
}

}  // namespace graphrt
