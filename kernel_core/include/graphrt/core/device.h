// Device backends (from plugins) and the device instances made from them.
#ifndef GRAPHRT_CORE_DEVICE_H_
#define GRAPHRT_CORE_DEVICE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"

namespace graphrt {

class Device {
 public:
  Device(const GR_DeviceSpec& spec, std::string plugin, int ordinal, void* handle);
  ~Device();
  // "/job:localhost/replica:0/task:0/device:CPU:0"
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  int ordinal() const { return ordinal_; }
  const std::string& plugin() const { return plugin_; }
  std::string description() const;
  bool host_memory() const { return (spec_.flags & GR_DEVICE_HOST_MEMORY) != 0; }
  Allocator* allocator() { return allocator_.get(); }
  void* handle() const { return handle_; }
  const GR_DeviceSpec& spec() const { return spec_; }
  Status MemoryInfo(int64_t* total, int64_t* free) const;
  // Copies between host and this device (memcpy for host-memory devices).
  Status CopyHostToDevice(const void* src, void* dst, size_t bytes);
  Status CopyDeviceToHost(const void* src, void* dst, size_t bytes);
  Status Synchronize();

 private:
  GR_DeviceSpec spec_;
  std::string plugin_;
  std::string type_;
  std::string name_;
  int ordinal_;
  void* handle_;
  void* default_stream_ = nullptr;
  std::unique_ptr<Allocator> allocator_;
};

class DeviceRegistry {
 public:
  // Registered backend types, highest placement priority first.
  std::vector<std::string> DeviceTypes() const;
  // All devices of all backends, created on first use and kept for the
  // process. `counts` (ConfigProto.device_count) caps the devices of a type;
  // a host-memory backend (CPU) also makes as many virtual devices as asked.
  Status GetDevices(std::vector<Device*>* out);
  Status GetDevices(const std::map<std::string, int>& counts, std::vector<Device*>* out);
  // Adds backends of one plugin; ALREADY_EXISTS if a type is taken.
  Status CheckAll(const std::vector<std::pair<GR_DeviceSpec, std::string>>& specs) const;
  void AddAll(std::vector<std::pair<GR_DeviceSpec, std::string>> specs);
  ~DeviceRegistry();

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<GR_DeviceSpec, std::string>> backends_;  // spec, plugin name
  std::map<std::string, std::vector<std::unique_ptr<Device>>> devices_;  // by type
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_DEVICE_H_
