// Device backends (from plugins) and the device instances made from them.
#ifndef GRAPHRT_CORE_DEVICE_H_
#define GRAPHRT_CORE_DEVICE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"

namespace graphrt {

// What a backend's allocator reports (GR_DeviceMemoryInfo); -1 = unknown.
struct DeviceMemoryStats {
  int64_t total_bytes = -1;
  int64_t free_bytes = -1;
  int64_t bytes_in_use = -1;
  int64_t peak_bytes_in_use = -1;
  int64_t bytes_limit = -1;
};

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
  // The stream a step enqueues this device's kernels and transfers on: one
  // per device, shared by every step (TensorFlow's compute stream), so work
  // on one device runs in the order the executor issued it. Null for a
  // synchronous host-memory device.
  void* compute_stream() const { return default_stream_; }
  // Total/free and, from ABI 1.3 backends, bytes in use, peak and limit.
  Status MemoryStats(DeviceMemoryStats* stats) const;

  // ---- Streams, events and asynchronous copies: the backend's own handles
  // and functions (ABI 1.3 requires them of devices with their own memory).
  // A host-memory device that lacks them is synchronous: null handles,
  // copies are memcpy, events are always done, callbacks run at once.
  // Every copy is ordered on `stream` and returns before it runs; the host
  // side of a copy must stay valid until the stream has run it.
  Status CreateStream(void** stream);
  void DestroyStream(void* stream);
  Status SyncStream(void* stream);
  // OK, or the first error of work on the stream (a failed stream stays so).
  Status StreamStatus(void* stream);
  Status CopyHostToDeviceAsync(void* stream, const void* src, void* dst, size_t bytes);
  Status CopyDeviceToHostAsync(void* stream, const void* src, void* dst, size_t bytes);
  // `src` or `dst` may be memory of another device of the same backend.
  Status CopyDeviceToDeviceAsync(void* stream, const void* src, void* dst, size_t bytes);
  Status CreateEvent(void** event);
  void DestroyEvent(void* event);
  Status RecordEvent(void* stream, void* event);
  // Work enqueued on `stream` after this waits for the work recorded before `event`.
  Status StreamWaitEvent(void* stream, void* event);
  Status SyncEvent(void* event);
  // *done once the work recorded before `event` has completed; the work's
  // error (with *done) if it failed.
  Status QueryEvent(void* event, bool* done);
  // fn(arg, code) on a backend thread once the work enqueued on `stream`
  // so far has completed; fn must not block.
  Status HostCallback(void* stream, GR_HostCallbackFn fn, void* arg);
  // The same with the stream's status (its message included).
  Status HostCallback(void* stream, std::function<void(const Status&)> fn);

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
