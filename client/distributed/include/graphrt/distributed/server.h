// graphrt's distributed runtime (TensorFlow 1's, over gRPC at its method
// paths and with its messages): a server hosts a Master and a Worker on
// one port; a Session whose target is "grpc://host:port" runs its graph
// on the cluster behind that master. Linking libgraphrt_distributed
// registers the grpc:// session target.
#ifndef GRAPHRT_DISTRIBUTED_SERVER_H_
#define GRAPHRT_DISTRIBUTED_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/distributed/grpc_session.h"
#include "graphrt/proto/cluster.pb.h"
#include "graphrt/proto/device_attributes.pb.h"
#include "graphrt/proto/tensorflow_server.pb.h"

namespace graphrt {
namespace distributed {

// Mutual TLS through gRPC's SSL credentials, from PEM files: this side's
// certificate chain and private key, and the CA certificates that the other
// side's certificate must chain to. All three or none (plaintext). Beyond
// TensorFlow, whose servers and clients have no TLS.
struct TlsFiles {
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  bool empty() const { return cert_file.empty() && key_file.empty() && ca_file.empty(); }
};

struct ServerOptions {
  proto::ServerDef server_def;
  // With TLS the server accepts only clients with a certificate its CA
  // signed, and reaches the cluster's other tasks with its own.
  TlsFiles tls;
  // Serve on an address that is not a loopback address without TLS: anyone
  // who reaches the port can then run any graph (file reads and writes
  // included). Without it (or `tls`) such a server refuses to start.
  bool insecure = false;
  // A step's rendezvous that no call used for this long is dropped (its
  // master never sent CleanupGraph); 0: never.
  int64_t step_idle_seconds = 600;
  // A worker session no call used for this long is deleted; 0: never.
  int64_t session_idle_seconds = 0;
  // Every this many seconds the server writes a line of cluster health to
  // stderr: each task's address, incarnation and the last call to it that
  // succeeded, and this task's sessions and steps; 0: never.
  int64_t status_seconds = 0;
};

class GrpcServer {
 public:
  // Starts serving: this task's address comes from server_def.cluster
  // (job_name, task_index), its port from server_def.port when that is set;
  // port 0 takes a free one. InvalidArgument for a task the cluster lacks
  // or an address without a port; UNKNOWN "Could not start gRPC server"
  // when the port is taken.
  static Status Create(const ServerOptions& options, std::unique_ptr<GrpcServer>* out);
  // Stop() first, if it was not called.
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // "grpc://localhost:<port>"
  const std::string& target() const;
  int port() const;
  // "/job:worker/replica:0/task:0"
  const std::string& task() const;
  // Ends the steps in progress (ABORTED), closes the master's sessions and
  // stops serving; returns once no call is left. Safe to call twice.
  void Stop();
  // Returns once Stop() has finished (from another thread or a signal).
  void Join();

  struct Impl;

 private:
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The TLS of this process's clients: grpc:// sessions and
// ListClusterDevices made after the call. Until it is called, the files
// that the environment variables GRAPHRT_TLS_CERT, GRAPHRT_TLS_KEY and
// GRAPHRT_TLS_CA name. InvalidArgument naming a file that cannot be read,
// or when only some of the three are given.
Status SetClientTls(const TlsFiles& tls);

// The devices of the cluster behind the master at `target`
// ("grpc://host:port"; MasterService.ListDevices): `local` those of the
// master's own task, `remote` the other tasks', each with its incarnation.
// Fails naming the task that did not answer within `timeout_ms`.
Status ListClusterDevices(const std::string& target, int64_t timeout_ms,
                          std::vector<proto::DeviceAttributes>* local, std::vector<proto::DeviceAttributes>* remote);

// A cluster from TF_CONFIG's JSON (as Kubeflow's TFJob, SageMaker and
// Vertex AI set it): {"cluster": {"ps": ["h:p", ...], "worker": [...]},
// "task": {"type": "worker", "index": 0}}. A job's tasks may also be an
// object {"0": "h:p", "2": "h:p"} (sparse). InvalidArgument names what is
// malformed.
Status ParseTfConfig(const std::string& json, proto::ClusterDef* cluster, std::string* job_name, int* task_index);

// Adds one job from "name=host:port,host:port,..." (the --cluster flag).
Status AddJobFromFlag(const std::string& flag, proto::ClusterDef* cluster);

}  // namespace distributed
}  // namespace graphrt

#endif  // GRAPHRT_DISTRIBUTED_SERVER_H_
