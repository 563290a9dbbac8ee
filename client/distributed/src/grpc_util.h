// What the master, the workers and the grpc:// session share: gRPC status
// conversion (TensorFlow's error codes are gRPC's), channels with
// TensorFlow's message limits, deadlines, and the cluster's addresses.
#ifndef GRAPHRT_DISTRIBUTED_SRC_GRPC_UTIL_H_
#define GRAPHRT_DISTRIBUTED_SRC_GRPC_UTIL_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <thread>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/distributed/server.h"
#include "graphrt/proto/cluster.pb.h"
#include "graphrt/tensorflow/services.grpc.pb.h"

namespace graphrt {
namespace distributed {

// TensorFlow's codes and gRPC's have the same numbers.
inline grpc::Status ToGrpcStatus(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), s.message());
}
inline Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return Status::OK();
  return Status(static_cast<Code>(s.error_code()), s.error_message());
}
// `s` with each byte that is not part of valid UTF-8 replaced by '?': the
// messages' string fields (status_error_message) must be UTF-8, and an
// error may quote a graph's bytes.
std::string Utf8(const std::string& s);

// A failed call to `task` (or `address`): the code gRPC gave, the message
// naming whom it could not reach.
Status CallError(const grpc::Status& s, const std::string& method, const std::string& task);

// TensorFlow's method paths of the calls made with raw bytes (facts §2).
constexpr char kRecvTensorMethod[] = "/tensorflow.WorkerService/RecvTensor";
constexpr char kRunGraphMethod[] = "/tensorflow.WorkerService/RunGraph";
constexpr char kRunStepMethod[] = "/tensorflow.MasterService/RunStep";

// The HTTP/2 stream window of channels and servers: large tensors
// (RecvTensor, RunGraph feeds and fetches) stream without waiting for a
// window update every 64 KiB.
constexpr int kStreamWindowBytes = 16 << 20;

// gRPC's credentials from TLS files (plaintext for none); InvalidArgument
// naming a file that cannot be read or is empty, or the flags that are
// missing when only some are given.
Status ChannelCredentialsFor(const TlsFiles& tls, std::shared_ptr<grpc::ChannelCredentials>* out);
Status ServerCredentialsFor(const TlsFiles& tls, std::shared_ptr<grpc::ServerCredentials>* out);
// What this process's clients use (SetClientTls, else GRAPHRT_TLS_*).
Status ClientCredentials(std::shared_ptr<grpc::ChannelCredentials>* out);

// A channel to "host:port" that sends and receives messages up to 2 GiB
// (protobuf's limit; gRPC's default receive limit is 4 MB).
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          const std::shared_ptr<grpc::ChannelCredentials>& credentials);

// A raw call to `method` that waits for its answer.
grpc::Status CallAndWait(grpc::GenericStub* stub, grpc::ClientContext* ctx, const char* method,
                         const grpc::ByteBuffer& request, grpc::ByteBuffer* response);

// A call's deadline from a timeout in milliseconds (<= 0: none).
void SetDeadline(grpc::ClientContext* ctx, int64_t timeout_ms);

// steady_clock nanoseconds of a server call's deadline; 0 when it has none.
int64_t DeadlineNanos(const grpc::ServerContextBase* ctx);
int64_t NowSteadyNanos();

// The tasks of a cluster: "/job:J/replica:0/task:T" -> "host:port".
std::map<std::string, std::string> TasksOf(const proto::ClusterDef& cluster);
std::string TaskName(const std::string& job, int task);

// Stubs to the tasks of a cluster, made on first use and shared.
class WorkerCache {
 public:
  WorkerCache(std::map<std::string, std::string> addresses, std::shared_ptr<grpc::ChannelCredentials> credentials)
      : addresses_(std::move(addresses)), credentials_(std::move(credentials)) {}
  // NOT_FOUND naming the task when the cluster has no such task.
  Status Stub(const std::string& task, tensorflow::WorkerService::Stub** out);
  // A stub over the same channel for calls made with raw bytes
  // (RecvTensor: tensor_coding.h).
  Status GenericStub(const std::string& task, grpc::GenericStub** out);
  std::map<std::string, std::string> addresses() const;
  // Where a server that took a free port reaches itself; before any Stub().
  void SetAddresses(std::map<std::string, std::string> addresses);

  // Cluster health: a call to `task` succeeded now; `incarnation` (when not
  // 0) is what its GetStatus reported for its first device.
  void Contacted(const std::string& task, uint64_t incarnation = 0);
  struct TaskHealth {
    std::string task, address;
    uint64_t incarnation = 0;       // 0: never asked
    int64_t last_contact_nanos = 0;  // steady clock; 0: never
  };
  std::vector<TaskHealth> Health() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> addresses_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  struct Stubs {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<tensorflow::WorkerService::Stub> typed;
    std::unique_ptr<grpc::GenericStub> generic;
  };
  // The stubs of `task` (under mu_).
  Status StubsOf(const std::string& task, Stubs** out);
  std::map<std::string, Stubs> stubs_;
  std::map<std::string, TaskHealth> health_;  // by task, under mu_
};

// Threads for calls that block (RunGraph runs a partition to the end,
// RunStep a step): gRPC's callback threads must not. As many threads as
// have run at once, kept for the next calls. Destruction waits for the
// work under way.
class BlockingCallThreads {
 public:
  BlockingCallThreads() = default;
  ~BlockingCallThreads();
  BlockingCallThreads(const BlockingCallThreads&) = delete;
  BlockingCallThreads& operator=(const BlockingCallThreads&) = delete;
  // Runs `work` on an idle thread, or a new one. Throws std::system_error
  // when no thread can be made.
  void Run(std::function<void()> work);

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // under mu_
  size_t idle_ = 0;                          // under mu_
  bool stop_ = false;                        // under mu_
  std::vector<std::thread> threads_;         // under mu_
};

// 16 lower-case hex digits: TensorFlow's form of graph handles and
// incarnations.
std::string Hex16(uint64_t v);
// Hex16 of a random 64-bit number (session handles).
std::string RandomHandle();

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_SRC_GRPC_UTIL_H_
