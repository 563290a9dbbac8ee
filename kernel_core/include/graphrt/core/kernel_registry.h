// Kernels registered by plugins, per (op, device type).
#ifndef GRAPHRT_CORE_KERNEL_REGISTRY_H_
#define GRAPHRT_CORE_KERNEL_REGISTRY_H_

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/node_def.pb.h"
#include "graphrt/proto/op_def.pb.h"

namespace graphrt {

// An owned copy of a plugin's GR_KernelSpec.
struct KernelRegistration {
  std::string op;
  std::string device_type;
  std::vector<std::pair<std::string, std::vector<DataType>>> constraints;
  std::vector<std::string> host_memory_args;
  std::string label;
  int32_t priority = 0;
  uint32_t flags = 0;
  void* user_data = nullptr;
  void* (*create)(GR_KernelConstruction*, void*) = nullptr;
  void (*compute)(void*, GR_KernelContext*) = nullptr;
  void (*compute_async)(void*, GR_KernelContext*) = nullptr;  // ABI 1.3; set instead of compute
  void (*destroy)(void*) = nullptr;
  std::string plugin;

  std::string DebugString() const;  // "device='CPU'; T in [DT_FLOAT, DT_INT32]"
};

class KernelRegistry {
 public:
  // The best kernel for `node` on `device_type` (constraints, "_kernel" label,
  // then priority). NotFound/InvalidArgument naming node, op and the kernels
  // that exist when none fits.
  Status FindKernel(const proto::NodeDef& node, const std::string& device_type,
                    const KernelRegistration** out) const;
  // Device types with at least one kernel for `op`.
  std::vector<std::string> DeviceTypesForOp(const std::string& op) const;
  std::vector<const KernelRegistration*> KernelsForOp(const std::string& op) const;

  void AddAll(std::vector<std::unique_ptr<KernelRegistration>> kernels);

 private:
  mutable std::shared_mutex mu_;
  std::multimap<std::string, std::unique_ptr<KernelRegistration>> kernels_;  // by op
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_KERNEL_REGISTRY_H_
