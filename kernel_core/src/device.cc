#include "graphrt/core/device.h"

#include <algorithm>

#include "core_api_internal.h"

namespace graphrt {
namespace {

// Tensor memory from a plugin's device backend.
class BackendAllocator final : public Allocator {
 public:
  BackendAllocator(const GR_DeviceSpec* spec, void* device, bool host, std::string name)
      : spec_(spec), device_(device), host_(host), name_(std::move(name)) {}
  const char* Name() const override { return name_.c_str(); }
  void* Allocate(size_t bytes, size_t alignment) override { return spec_->allocate(device_, bytes, alignment); }
  void Deallocate(void* ptr, size_t bytes) override { spec_->deallocate(device_, ptr, bytes); }
  bool IsHost() const override { return host_; }

 private:
  const GR_DeviceSpec* spec_;
  void* device_;
  bool host_;
  std::string name_;
};

}  // namespace

Device::Device(const GR_DeviceSpec& spec, std::string plugin, int ordinal, void* handle)
    : spec_(spec), plugin_(std::move(plugin)), type_(spec.device_type), ordinal_(ordinal), handle_(handle) {
  name_ = "/job:localhost/replica:0/task:0/device:" + type_ + ":" + std::to_string(ordinal);
  allocator_ = std::make_unique<BackendAllocator>(&spec_, handle_, host_memory(), type_ + ":" + std::to_string(ordinal));
  if (spec_.create_stream) {
    GR_StatusSink sink;
    if (spec_.create_stream(handle_, &default_stream_, &sink) != GR_OK) default_stream_ = nullptr;
  }
}

Device::~Device() {
  if (default_stream_ && spec_.destroy_stream) spec_.destroy_stream(handle_, default_stream_);
  if (spec_.destroy_device) spec_.destroy_device(handle_);
}

std::string Device::description() const {
  return spec_.describe ? spec_.describe(handle_) : type_;
}

Status Device::MemoryInfo(int64_t* total, int64_t* free) const {
  if (!spec_.memory_info) return errors::Unimplemented("device ", name_, " does not report memory");
  GR_DeviceMemoryInfo info{};
  info.struct_size = sizeof(info);
  GR_StatusSink sink;
  if (spec_.memory_info(handle_, &info, &sink) != GR_OK) return sink.status;
  *total = info.total_bytes;
  *free = info.free_bytes;
  return Status::OK();
}

Status Device::CopyHostToDevice(const void* src, void* dst, size_t bytes) {
  if (host_memory() && !spec_.copy_host_to_device) {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::OK();
  }
  GR_StatusSink sink;
  if (spec_.copy_host_to_device(handle_, default_stream_, dst, src, bytes, &sink) != GR_OK) return sink.status;
  return Synchronize();
}

Status Device::CopyDeviceToHost(const void* src, void* dst, size_t bytes) {
  if (host_memory() && !spec_.copy_device_to_host) {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::OK();
  }
  GR_StatusSink sink;
  if (spec_.copy_device_to_host(handle_, default_stream_, dst, src, bytes, &sink) != GR_OK) return sink.status;
  return Synchronize();
}

Status Device::Synchronize() {
  if (!spec_.sync_stream) return Status::OK();
  GR_StatusSink sink;
  if (spec_.sync_stream(handle_, default_stream_, &sink) != GR_OK)
    return sink.status.ok() ? errors::Internal("sync failed on ", name_) : sink.status;
  return Status::OK();
}

std::vector<std::string> DeviceRegistry::DeviceTypes() const {
  std::lock_guard<std::mutex> lock(mu_);
  auto b = backends_;
  std::stable_sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.first.priority > y.first.priority; });
  std::vector<std::string> types;
  for (const auto& [spec, plugin] : b) types.push_back(spec.device_type);
  return types;
}

Status DeviceRegistry::GetDevices(std::vector<Device*>* out) { return GetDevices({}, out); }

Status DeviceRegistry::GetDevices(const std::map<std::string, int>& counts, std::vector<Device*>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->clear();
  auto b = backends_;
  std::stable_sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.first.priority > y.first.priority; });
  for (const auto& [spec, plugin] : b) {
    int n = spec.device_count ? spec.device_count(spec.backend_state) : 1;
    if (auto c = counts.find(spec.device_type); c != counts.end())
      n = (spec.flags & GR_DEVICE_HOST_MEMORY) ? std::max(c->second, 0) : std::clamp(c->second, 0, n);
    auto& devs = devices_[spec.device_type];
    for (int i = static_cast<int>(devs.size()); i < n; ++i) {
      void* handle = nullptr;
      GR_StatusSink sink;
      if (spec.create_device(spec.backend_state, i, &handle, &sink) != GR_OK)
        return (sink.status.ok() ? errors::Internal("device creation failed") : sink.status)
            .WithContext("creating " + std::string(spec.device_type) + ":" + std::to_string(i) + " (plugin " +
                         plugin + ")");
      devs.push_back(std::make_unique<Device>(spec, plugin, i, handle));
    }
    for (int i = 0; i < n; ++i) out->push_back(devs[i].get());
  }
  return Status::OK();
}

Status DeviceRegistry::CheckAll(const std::vector<std::pair<GR_DeviceSpec, std::string>>& specs) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < specs.size(); ++i) {
    const GR_DeviceSpec& s = specs[i].first;
    if (s.device_type == nullptr || s.create_device == nullptr || s.allocate == nullptr || s.deallocate == nullptr)
      return errors::InvalidArgument("device backend from plugin '", specs[i].second,
                                     "' lacks device_type, create_device, allocate or deallocate");
    if (!(s.flags & GR_DEVICE_HOST_MEMORY) &&
        (!s.copy_host_to_device || !s.copy_device_to_host || !s.sync_stream))
      return errors::InvalidArgument("device backend '", s.device_type, "' from plugin '", specs[i].second,
                                     "' has device memory but no copy or sync functions");
    for (const auto& [existing, plugin] : backends_)
      if (std::string(existing.device_type) == s.device_type)
        return errors::AlreadyExists("device type '", s.device_type, "' is already provided by plugin '", plugin, "'");
  }
  return Status::OK();
}

void DeviceRegistry::AddAll(std::vector<std::pair<GR_DeviceSpec, std::string>> specs) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : specs) backends_.push_back(std::move(s));
}

DeviceRegistry::~DeviceRegistry() = default;

}  // namespace graphrt
