#include "session_state.h"

#include <algorithm>
#include <thread>

#include "graphrt/core/cluster_step.h"
#include "graphrt/core/runtime.h"
#include "transfer_kernels.h"

namespace graphrt {

SessionState::SessionState(const proto::ConfigProto& c, std::unique_ptr<FileAccessPolicy> file_access,
                           std::shared_ptr<ResourceMgr> shared_resources)
    : file_access_(std::move(file_access)),
      resources_(shared_resources ? std::move(shared_resources) : std::make_shared<ResourceMgr>()),
      owns_resources_(resources_.use_count() == 1) {
  int threads = std::max(c.intra_op_parallelism_threads(), c.inter_op_parallelism_threads());
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // More threads than cores only adds contention (and TBB would cap it anyway).
  if (threads <= 0 || threads > cores) threads = cores;
  num_threads_ = threads;
  if (threads > 1) arena_ = std::make_unique<tbb::task_arena>(threads);
  budget_ = new MemoryBudget(SessionMemoryLimit(c));
  host_allocator_ = budget_->AllocatorFor(HostAllocator());
}

SessionState::~SessionState() {
  Clear();
  budget_->ReleaseOwner();
}

Allocator* SessionState::AllocatorFor(Device* d) {
  if (d == nullptr || !d->host_memory()) return d ? d->allocator() : host_allocator_;
  std::lock_guard<std::mutex> lock(budget_mu_);
  return budget_->AllocatorFor(d->allocator());
}

Status SessionState::CreateKernel(const Node& n, Device* device, const KernelRegistration** reg, void** kernel) {
  *reg = TransferKernel(n.op());
  if (*reg == nullptr) GR_RETURN_IF_ERROR(Runtime::Global().kernels().FindKernel(n.def(), device->type(), reg));
  return ConstructKernel(n, device, host_allocator_, **reg, kernel);
}

Status SessionState::GetKernel(const Node& n, Device* device, const KernelRegistration** reg, void** kernel,
                               bool* owned) {
  if (!n.IsStateful() || TransferKernel(n.op()) != nullptr) {
    *owned = true;
    return CreateKernel(n, device, reg, kernel);
  }
  *owned = false;
  std::lock_guard<std::mutex> lock(kernel_mu_);
  auto it = stateful_kernels_.find(n.name());
  if (it == stateful_kernels_.end()) {
    SharedKernel k;
    GR_RETURN_IF_ERROR(CreateKernel(n, device, &k.reg, &k.kernel));
    it = stateful_kernels_.emplace(n.name(), k).first;
  }
  *reg = it->second.reg;
  *kernel = it->second.kernel;
  return Status::OK();
}

void SessionState::Clear() {
  cancellation_.Cancel();
  {
    std::lock_guard<std::mutex> lock(kernel_mu_);
    for (auto& [name, k] : stateful_kernels_) k.reg->destroy(k.kernel);
    stateful_kernels_.clear();
  }
  if (owns_resources_) resources_->Clear();
}

PartitionOptions TransferPartitionOptions(const DeviceLookupFn& device_named) {
  PartitionOptions p;
  p.get_incarnation = [](const std::string& device) { return DeviceIncarnation(device); };
  auto host_memory_arg = [device_named](const Node& n, int slot, bool input) {
    Device* d = device_named(n.assigned_device());
    const KernelRegistration* reg;
    if (d == nullptr || !Runtime::Global().kernels().FindKernel(n.def(), d->type(), &reg).ok()) return false;
    return IsHostMemoryArg(*reg, n, slot, input);
  };
  p.input_on_host = [host_memory_arg](const Node& n, int slot) { return host_memory_arg(n, slot, true); };
  p.output_on_host = [host_memory_arg](const Node& n, int slot) { return host_memory_arg(n, slot, false); };
  return p;
}

Status InsertStepTransfers(const DeviceLookupFn& device_named, Graph* g, int* num_transfers) {
  // Devices that share host memory hand tensors over directly; others get
  // TensorFlow's _Send/_Recv pairs.
  return InsertTransfers(
      TransferPartitionOptions(device_named),
      [&](const std::string& src, const std::string& dst) {
        Device* a = device_named(src);
        Device* b = device_named(dst);
        return a == nullptr || b == nullptr || !a->host_memory() || !b->host_memory();
      },
      g, num_transfers);
}

std::vector<Device*> StreamedDevices(const Executor& executor) {
  std::vector<Device*> out;
  for (Device* d : executor.devices())
    if (d != nullptr && !d->host_memory() && d->compute_stream() != nullptr) out.push_back(d);
  return out;
}

Status SyncStreams(const std::vector<Device*>& devices, Status step) {
  for (Device* d : devices) {
    Status synced = d->SyncStream(d->compute_stream());
    if (step.ok() && !synced.ok())
      step = Status(synced.code(), "work the step enqueued on " + d->name() + " failed: " + synced.message());
  }
  return step;
}

}  // namespace graphrt
