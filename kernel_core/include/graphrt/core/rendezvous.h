// The meeting point of a step's _Send/_Recv pairs: a table of tensors keyed
// by TensorFlow's rendezvous key. `Rendezvous` is the interface (a future
// grpc:// worker implements it between processes); `LocalRendezvous` is the
// in-process one, one per step.
#ifndef GRAPHRT_CORE_RENDEZVOUS_H_
#define GRAPHRT_CORE_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "graphrt/core/device_name.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"

namespace graphrt {

class Rendezvous {
 public:
  // "<src_device>;<incarnation: 16 lower-case hex digits>;<dst_device>;<tensor_name>;<frame_id>:<iter_id>"
  static std::string CreateKey(const std::string& src_device, uint64_t src_incarnation,
                               const std::string& dst_device, const std::string& tensor_name, uint64_t frame_id,
                               int64_t iter_id);

  struct ParsedKey {
    std::string full_key;
    std::string src_device;
    DeviceNameParts src;
    uint64_t src_incarnation = 0;
    std::string dst_device;
    DeviceNameParts dst;
    std::string edge_name;  // the tensor_name
    std::string frame_iter;  // "<frame_id>:<iter_id>"
  };
  // InvalidArgument "Invalid rendezvous key: <key>" unless the key has five
  // ';'-separated parts, full device names with a job, replica, task and
  // device type on both sides, a hex incarnation, a non-empty tensor name
  // and "<frame>:<iter>".
  static Status ParseKey(const std::string& key, ParsedKey* out);

  // status, the sent value (empty when status is not OK or the value is
  // dead), is_dead.
  using DoneCallback = std::function<void(const Status& status, const Tensor& value, bool is_dead)>;

  virtual ~Rendezvous() = default;
  // Never blocks. Fails once the rendezvous is aborted, and (TensorFlow 1's
  // rule) when a value sent on `key` has not been received yet: Aborted
  // "Duplicated send: <key>".
  virtual Status Send(const ParsedKey& key, const Tensor& value, bool is_dead) = 0;
  // Calls `done` exactly once: when the value for `key` arrives (at once if
  // it is there), or with the abort status. Waiters on one key are served
  // in the order they asked. `done` may run on the sender's thread.
  virtual void RecvAsync(const ParsedKey& key, DoneCallback done) = 0;
  // Wakes every waiter with `status` (the first abort's status wins) and
  // makes every later Send and Recv fail with it; values never received
  // are released. `status` must not be OK.
  virtual void StartAbort(const Status& status) = 0;

  // Blocks until RecvAsync calls back (no busy wait).
  Status Recv(const ParsedKey& key, Tensor* value, bool* is_dead);
};

class LocalRendezvous final : public Rendezvous {
 public:
  LocalRendezvous();
  // Waiters still pending are called with Aborted.
  ~LocalRendezvous() override;
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  Status Send(const ParsedKey& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const ParsedKey& key, DoneCallback done) override;
  void StartAbort(const Status& status) override;

 private:
  struct Item;
  std::mutex mu_;
  Status status_;  // the abort status, once aborted
  std::unordered_map<std::string, std::unique_ptr<Item>> table_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_RENDEZVOUS_H_
