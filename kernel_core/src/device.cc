#include "graphrt/core/device.h"

#include <algorithm>
#include <cstring>

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
  // For an out-of-memory message: the device, and its allocator's use and limit.
  std::string Describe() const override {
    if (!spec_->memory_info) return name_;
    GR_DeviceMemoryInfo info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    info.bytes_in_use = info.bytes_limit = -1;
    GR_StatusSink sink;
    if (spec_->memory_info(device_, &info, &sink) != GR_OK || info.bytes_in_use < 0 || info.bytes_limit < 0)
      return name_;
    return name_ + " (" + std::to_string(info.bytes_in_use) + " of its " + std::to_string(info.bytes_limit) +
           " bytes in use)";
  }

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

Status Device::MemoryStats(DeviceMemoryStats* stats) const {
  *stats = DeviceMemoryStats();
  if (!spec_.memory_info) return errors::Unimplemented("device ", name_, " does not report memory");
  GR_DeviceMemoryInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  // What an older backend does not write stays unknown.
  info.total_bytes = info.free_bytes = info.bytes_in_use = info.peak_bytes_in_use = info.bytes_limit = -1;
  GR_StatusSink sink;
  if (spec_.memory_info(handle_, &info, &sink) != GR_OK)
    return sink.status.ok() ? errors::Internal("memory_info failed on ", name_) : sink.status;
  stats->total_bytes = info.total_bytes;
  stats->free_bytes = info.free_bytes;
  stats->bytes_in_use = info.bytes_in_use;
  stats->peak_bytes_in_use = info.peak_bytes_in_use;
  stats->bytes_limit = info.bytes_limit;
  return Status::OK();
}

namespace {
// The status of a backend call: its recorded error, or one naming the call
// when the backend failed without a message.
Status Checked(int32_t code, const GR_StatusSink& sink, const char* fn, const std::string& device) {
  if (code == GR_OK) return Status::OK();
  if (!sink.status.ok()) return sink.status;
  return Status(static_cast<Code>(code), std::string(fn) + " failed on " + device + " without a message");
}

// Calls an optional backend function (absent: nothing to do, OK).
template <typename... Params, typename... Args>
Status CallOptional(int32_t (*fn)(void*, Params...), const char* what, const std::string& device, void* handle,
                    Args... args) {
  if (fn == nullptr) return Status::OK();
  GR_StatusSink sink;
  return Checked(fn(handle, args..., &sink), sink, what, device);
}
}  // namespace

Status Device::CreateStream(void** stream) {
  *stream = nullptr;
  return CallOptional(spec_.create_stream, "create_stream", name_, handle_, stream);
}

void Device::DestroyStream(void* stream) {
  if (spec_.destroy_stream) spec_.destroy_stream(handle_, stream);
}

Status Device::SyncStream(void* stream) {
  return CallOptional(spec_.sync_stream, "sync_stream", name_, handle_, stream);
}

Status Device::StreamStatus(void* stream) {
  return CallOptional(spec_.stream_status, "stream_status", name_, handle_, stream);
}

Status Device::CopyHostToDeviceAsync(void* stream, const void* src, void* dst, size_t bytes) {
  if (!spec_.copy_host_to_device) {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::OK();
  }
  return CallOptional(spec_.copy_host_to_device, "copy_host_to_device", name_, handle_, stream, dst, src, uint64_t{bytes});
}

Status Device::CopyDeviceToHostAsync(void* stream, const void* src, void* dst, size_t bytes) {
  if (!spec_.copy_device_to_host) {
    if (bytes) std::memcpy(dst, src, bytes);
    return Status::OK();
  }
  return CallOptional(spec_.copy_device_to_host, "copy_device_to_host", name_, handle_, stream, dst, src, uint64_t{bytes});
}

Status Device::CopyDeviceToDeviceAsync(void* stream, const void* src, void* dst, size_t bytes) {
  if (!spec_.copy_device_to_device) {
    if (!host_memory()) return errors::Unimplemented("device ", name_, " cannot copy between device memories");
    if (bytes) std::memmove(dst, src, bytes);
    return Status::OK();
  }
  return CallOptional(spec_.copy_device_to_device, "copy_device_to_device", name_, handle_, stream, dst, src,
                      uint64_t{bytes});
}

Status Device::CreateEvent(void** event) {
  *event = nullptr;
  return CallOptional(spec_.create_event, "create_event", name_, handle_, event);
}

void Device::DestroyEvent(void* event) {
  if (spec_.destroy_event) spec_.destroy_event(handle_, event);
}

Status Device::RecordEvent(void* stream, void* event) {
  return CallOptional(spec_.record_event, "record_event", name_, handle_, stream, event);
}

Status Device::StreamWaitEvent(void* stream, void* event) {
  return CallOptional(spec_.stream_wait_event, "stream_wait_event", name_, handle_, stream, event);
}

Status Device::SyncEvent(void* event) {
  return CallOptional(spec_.sync_event, "sync_event", name_, handle_, event);
}

Status Device::QueryEvent(void* event, bool* done) {
  *done = true;
  if (!spec_.query_event) return Status::OK();
  GR_StatusSink sink;
  const int32_t code = spec_.query_event(handle_, event, &sink);
  if (code == GR_UNAVAILABLE && sink.status.ok()) {  // pending, not an error
    *done = false;
    return Status::OK();
  }
  return Checked(code, sink, "query_event", name_);
}

Status Device::HostCallback(void* stream, GR_HostCallbackFn fn, void* arg) {
  if (!spec_.host_callback) {  // synchronous: everything before has completed
    fn(arg, GR_OK);
    return Status::OK();
  }
  GR_StatusSink sink;
  return Checked(spec_.host_callback(handle_, stream, fn, arg, &sink), sink, "host_callback", name_);
}

Status Device::HostCallback(void* stream, std::function<void(const Status&)> fn) {
  struct Call {
    Device* device;
    void* stream;
    std::function<void(const Status&)> fn;
  };
  auto* call = new Call{this, stream, std::move(fn)};
  Status s = HostCallback(
      stream,
      [](void* arg, int32_t code) {
        std::unique_ptr<Call> c(static_cast<Call*>(arg));
        Status st;
        if (code != GR_OK) {  // the stream's recorded error has the message
          st = c->device->StreamStatus(c->stream);
          if (st.ok()) st = Status(static_cast<Code>(code), "work on " + c->device->name() + " failed");
        }
        c->fn(st);
      },
      call);
  if (!s.ok()) delete call;
  return s;
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
    if (!(s.flags & GR_DEVICE_HOST_MEMORY)) {
      // The core reaches a device's own memory only through these (ABI 1.3).
      const std::pair<bool, const char*> required[] = {
          {s.create_stream != nullptr, "create_stream"},
          {s.destroy_stream != nullptr, "destroy_stream"},
          {s.sync_stream != nullptr, "sync_stream"},
          {s.copy_host_to_device != nullptr, "copy_host_to_device"},
          {s.copy_device_to_host != nullptr, "copy_device_to_host"},
          {s.copy_device_to_device != nullptr, "copy_device_to_device"},
          {s.create_event != nullptr, "create_event"},
          {s.destroy_event != nullptr, "destroy_event"},
          {s.record_event != nullptr, "record_event"},
          {s.stream_wait_event != nullptr, "stream_wait_event"},
          {s.sync_event != nullptr, "sync_event"},
          {s.query_event != nullptr, "query_event"},
          {s.host_callback != nullptr, "host_callback"},
          {s.stream_status != nullptr, "stream_status"},
      };
      std::string missing;
      for (const auto& [present, fn] : required)
        if (!present) missing += (missing.empty() ? "" : ", ") + std::string(fn);
      if (!missing.empty())
        return errors::InvalidArgument("device backend '", s.device_type, "' from plugin '", specs[i].second,
                                       "' has its own memory (no GR_DEVICE_HOST_MEMORY) but lacks ", missing,
                                       " (graphrt ABI 1.3 requires them of such devices)");
    }
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
