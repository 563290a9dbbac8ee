// Shared by the data_flow kernels: per-step resources reached through
// their handles, and names unique within a step.
#ifndef GRAPHRT_OPS_DATA_FLOW_CPU_DATA_FLOW_UTIL_H_
#define GRAPHRT_OPS_DATA_FLOW_CPU_DATA_FLOW_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "state/cpu/state_util.h"

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace data_flow {

// One reference to a plugin resource, released at scope end.
template <typename T>
class ResourceRef {
 public:
  ResourceRef() = default;
  explicit ResourceRef(GR_Resource* r) : r_(r) {}
  ResourceRef(const ResourceRef&) = delete;
  ResourceRef& operator=(const ResourceRef&) = delete;
  ~ResourceRef() {
    if (r_) Api().resource_release(r_);
  }
  GR_Resource** out() { return &r_; }
  T* get() const { return static_cast<T*>(Api().resource_object(r_)); }
  T* operator->() const { return get(); }

 private:
  GR_Resource* r_ = nullptr;
};

// The destroy function the core calls when the last reference goes.
template <typename T>
void DestroyObject(void* object) {
  delete static_cast<T*>(object);
}

// Stores `object` (taken over) as `container`/`name` of `type`; it must not
// exist yet (a name from StepUniqueName never does). Holds a reference.
template <typename T>
Status CreateResource(OpKernelContext* ctx, const std::string& container, const std::string& name, const char* type,
                      T* object, ResourceRef<T>* out) {
  bool used = false;
  auto make = [](void* arg, GR_StatusSink*) -> void* {
    auto* p = static_cast<std::pair<T*, bool*>*>(arg);
    *p->second = true;
    return p->first;
  };
  std::pair<T*, bool*> arg{object, &used};
  const int32_t code = Api().ctx_lookup_resource(ctx->raw(), container.c_str(), name.c_str(), type, make, &arg,
                                                 &DestroyObject<T>, out->out());
  if (!used) delete object;
  if (code != GR_OK) return Status(code, "creating " + std::string(type) + " " + name + " failed");
  if (!used) return Status(GR_ALREADY_EXISTS, std::string(type) + " " + name + " already exists in this step");
  return Status();
}

// The resource named by the scalar handle in input `index`, which must be
// of `type` ("TensorArray", "Stack", "Queue"). `missing` says why one may be
// gone: per-step resources are once their step ends.
template <typename T>
Status LookupHandle(OpKernelContext* ctx, int index, const char* type, ResourceRef<T>* out,
                    const GR_ResourceHandle** handle_out = nullptr,
                    const char* missing = "it lives only for the step that made it") {
  const TensorView h = ctx->input(index);
  if (h.dtype() != GR_RESOURCE || h.NumElements() != 1 || !state::IsSet(*h.data<GR_ResourceHandle>()))
    return errors::InvalidArgument("input ", index, " must be one ", type, " handle, got shape ", h.ShapeString());
  const GR_ResourceHandle* handle = h.data<GR_ResourceHandle>();
  if (std::strcmp(handle->type_name, type) != 0)
    return errors::InvalidArgument("resource ", handle->name, " is a ", handle->type_name, ", not a ", type);
  const int32_t code = Api().ctx_lookup_resource(ctx->raw(), handle->container, handle->name, type, nullptr, nullptr,
                                                 nullptr, out->out());
  if (code == GR_NOT_FOUND)
    return errors::NotFound(type, " ", handle->name, " does not exist (", missing, ")");
  if (code != GR_OK) return Status(code, std::string("looking up ") + type + " " + handle->name + " failed");
  if (handle_out) *handle_out = handle;
  return Status();
}

// `base` + "_" + k, where k counts this step's earlier calls for `base`: a
// node inside a while loop makes one resource per iteration, each with its
// own name. The counter is a per-step resource too, so the names repeat
// from step to step (the core interns handle strings for good).
inline Status StepUniqueName(OpKernelContext* ctx, const std::string& base, std::string* out) {
  struct Counter {
    std::atomic<int64_t> next{0};
  };
  auto make = [](void*, GR_StatusSink*) -> void* { return new Counter(); };
  ResourceRef<Counter> counter;
  const std::string key = "__data_flow_name_counter/" + base;
  const int32_t code = Api().ctx_lookup_resource(ctx->raw(), ctx->step_container(), key.c_str(), "DataFlowNameCounter",
                                                 make, nullptr, &DestroyObject<Counter>, counter.out());
  if (code != GR_OK) return Status(code, "making a unique name for " + base + " failed");
  *out = base + "_" + std::to_string(counter->next.fetch_add(1));
  return Status();
}

}  // namespace data_flow
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_DATA_FLOW_CPU_DATA_FLOW_UTIL_H_
