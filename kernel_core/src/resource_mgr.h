// The session's resources: variables and plugin objects keyed by
// (container, name), alive across Runs until deleted or the session closes.
#ifndef GRAPHRT_CORE_SRC_RESOURCE_MGR_H_
#define GRAPHRT_CORE_SRC_RESOURCE_MGR_H_

#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"

namespace graphrt {

// Refcounted base of every resource. GR_Variable and GR_Resource handles
// are pointers to these.
class ResourceBase {
 public:
  explicit ResourceBase(std::string type_name, std::string name)
      : type_name_(std::move(type_name)), name_(std::move(name)) {}
  virtual ~ResourceBase() = default;
  void Ref() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  const std::string& type_name() const { return type_name_; }
  const std::string& name() const { return name_; }

 private:
  mutable std::atomic<int32_t> refs_{1};
  const std::string type_name_;
  const std::string name_;
};

constexpr const char* kVariableTypeName = "Var";

// A variable: a value (uninitialized until first assigned) and the lock
// that orders its reads and writes.
class Var final : public ResourceBase {
 public:
  Var(std::string name, DataType dtype) : ResourceBase(kVariableTypeName, std::move(name)), dtype_(dtype) {}
  DataType dtype() const { return dtype_; }
  std::shared_mutex& mu() { return mu_; }
  // Guarded by mu().
  Tensor& value() { return value_; }
  bool initialized() const { return value_.IsInitialized(); }

 private:
  const DataType dtype_;
  std::shared_mutex mu_;
  Tensor value_;
};

// A plugin's object, destroyed by the plugin's function with the last
// reference.
class PluginResource final : public ResourceBase {
 public:
  PluginResource(std::string type_name, std::string name, void* object, void (*destroy)(void*))
      : ResourceBase(std::move(type_name), std::move(name)), object_(object), destroy_(destroy) {}
  ~PluginResource() override {
    if (destroy_) destroy_(object_);
  }
  void* object() const { return object_; }

 private:
  void* object_;
  void (*destroy_)(void*);
};

class ResourceMgr {
 public:
  // The container an empty container name means (TensorFlow's default).
  static constexpr const char* kDefaultContainer = "localhost";

  ResourceMgr() = default;
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;
  ~ResourceMgr() { Clear(); }

  // *out = a new reference to container/name of `type_name`, made by
  // `create` (which returns a new reference or sets a Status) when absent
  // and `create` is set. NotFound / InvalidArgument (another type) otherwise.
  template <typename Create>
  Status LookupOrCreate(std::string_view container, std::string_view name, std::string_view type_name,
                        Create&& create, bool may_create, ResourceBase** out);
  Status Delete(std::string_view container, std::string_view name, std::string_view type_name);
  // Drops every resource of `container` (a step's container at step end).
  void Cleanup(std::string_view container);
  // Drops everything (Session::Close).
  void Clear();

 private:
  using Key = std::pair<std::string, std::string>;
  static Key MakeKey(std::string_view container, std::string_view name) {
    return {container.empty() ? std::string(kDefaultContainer) : std::string(container), std::string(name)};
  }
  std::mutex mu_;
  std::map<Key, ResourceBase*> resources_;  // each holds one reference
};

template <typename Create>
Status ResourceMgr::LookupOrCreate(std::string_view container, std::string_view name, std::string_view type_name,
                                   Create&& create, bool may_create, ResourceBase** out) {
  Key key = MakeKey(container, name);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resources_.find(key);
  if (it != resources_.end()) {
    if (it->second->type_name() != type_name)
      return errors::InvalidArgument("Resource ", key.first, "/", key.second, " is a ", it->second->type_name(),
                                     ", not a ", type_name);
    it->second->Ref();
    *out = it->second;
    return Status::OK();
  }
  if (!may_create)
    return errors::NotFound("Resource ", key.first, "/", key.second, " of type ", type_name,
                            " does not exist.");
  ResourceBase* r = nullptr;
  GR_RETURN_IF_ERROR(create(&r));
  r->Ref();  // one for the manager, one for the caller
  resources_.emplace(std::move(key), r);
  *out = r;
  return Status::OK();
}

// Interned copy of `s`, valid for the life of the process (resource handle
// strings are plain pointers).
const char* InternString(std::string_view s);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_RESOURCE_MGR_H_
