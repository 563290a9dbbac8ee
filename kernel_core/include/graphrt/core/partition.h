// Partitioning a placed graph by device, TensorFlow's way: one Graph per
// device, and every edge between devices replaced by a _Send/_Recv pair that
// meet in the step's Rendezvous (rendezvous.h). The same partitions are what
// a distributed target hands to its workers.
#ifndef GRAPHRT_CORE_PARTITION_H_
#define GRAPHRT_CORE_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "graphrt/core/graph.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/status.h"

namespace graphrt {

// The core's transfer ops (defined by RegisterSendRecvOps; TensorFlow's
// signatures). Attrs: tensor_name (the transfer's name, the same on both
// sides), send_device, send_device_incarnation, recv_device,
// client_terminated, and the dtype (_Send: T, _Recv: tensor_type).
constexpr const char* kSendOp = "_Send";
constexpr const char* kRecvOp = "_Recv";
// Internal attrs (bool) marking a transfer whose value is in host memory:
// on a _Send, the output it sends is a host-memory output of its producer's
// kernel; on a _Recv, an input of a consumer's kernel is declared
// HostMemory, so the value must land in host memory on the receiving device.
constexpr const char* kSendFromHostAttr = "_send_from_host";
constexpr const char* kRecvOnHostAttr = "_recv_on_host";
// Internal attr (string) of a _Recv in a worker's graph: the local name of
// the sending device, whose name in the key is the cluster's
// ("/job:worker/replica:0/task:1/device:GPU:0").
constexpr const char* kSendDeviceLocalAttr = "_send_device_local";

Status RegisterSendRecvOps(OpRegistry* ops);

struct PartitionOptions {
  // The device's incarnation (a number fixed when the device is created,
  // so that a restarted device's stale transfers are told apart); 0 if
  // unset.
  std::function<uint64_t(const std::string& device)> get_incarnation;
  // Whether output `slot` of `n` / input `slot` of `n` is declared HostMemory
  // by the kernel that runs it on its device; false if unset.
  std::function<bool(const Node& n, int slot)> output_on_host;
  std::function<bool(const Node& n, int slot)> input_on_host;
  // The partition a node goes to (TensorFlow's node_to_loc): by default its
  // assigned device; a distributed master partitions by task
  // ("/job:ps/replica:0/task:0") and each worker then runs one graph that
  // may span its devices. Transfers still name the devices at both ends.
  std::function<std::string(const Node& n)> node_to_loc;
};

// Splits `g`, whose op nodes all have an assigned device, into one graph per
// device (keyed by the full device name; per options.node_to_loc if set), each with the original's versions
// and its nodes' edges, _SOURCE/_SINK edges included. For every data edge
// between devices, the source device gets a `_Send` of the tensor and the
// destination device a `_Recv` that feeds the consumer; one pair per tensor
// and destination device (and host-memory flag), however many consumers
// read it there, named "edge_<edge id>_<producer>". A control edge between
// devices becomes a dummy Const (an empty float, control-dependent on the
// source) sent to the destination, whose _Recv is a control input of every
// dependent there: one pair per source node and destination device.
// Graphs with while loops partition when each loop frame's nodes are all on
// one device (the transfers then all happen in the root frame); otherwise
// Unimplemented naming the frame and its devices. Errors name the node.
Status Partition(const PartitionOptions& options, const Graph& g,
                 std::map<std::string, std::unique_ptr<Graph>>* partitions);

// Rewrites `g` (placed) so that one process can run all of its devices in
// one executor: every data edge between two devices for which
// `needs_transfer(src device, dst device)` holds (they do not share memory)
// becomes a _Send/_Recv pair, and so does an edge within one device for
// which needs_transfer(d, d) holds (d has its own memory) when one end is a
// HostMemory arg and the other is not. The pairs are made and deduplicated
// exactly as Partition makes them, with both nodes in `g`; the _Recv also
// carries
// `_send_from_host` when the value it receives is in host memory. Other
// edges, control edges included, stay as they are (one executor orders
// them itself). Adds *num_transfers pairs. A transfer inside a loop frame
// is Unimplemented, naming the frame and the edge.
Status InsertTransfers(const PartitionOptions& options,
                       const std::function<bool(const std::string& src_device, const std::string& dst_device)>&
                           needs_transfer,
                       Graph* g, int* num_transfers);

// Whether `reg` (the kernel `n` runs with) declares input (or output) `slot`
// of `n` HostMemory: its arg's name is in reg.host_memory_args.
bool IsHostMemoryArg(const KernelRegistration& reg, const Node& n, int slot, bool input);

// A partition as a GraphDef for RunMetadata.partition_graphs: every node's
// `device` is its assigned device.
void PartitionToGraphDef(const Graph& partition, proto::GraphDef* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_PARTITION_H_
