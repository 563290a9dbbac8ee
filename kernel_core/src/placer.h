// Device placement: assigns every op node of a graph a device.
#ifndef GRAPHRT_CORE_SRC_PLACER_H_
#define GRAPHRT_CORE_SRC_PLACER_H_

#include <string>
#include <vector>

#include "graphrt/core/device.h"
#include "graphrt/core/device_name.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"

namespace graphrt {

struct PlacementOptions {
  // A group whose spec no device meets goes where its kernels are; a spec
  // that names another job, replica or task is ignored.
  bool allow_soft_placement = false;
  // Each node placed is written to stderr as TensorFlow writes it:
  // "name: (Op): /job:localhost/replica:0/task:0/device:CPU:0".
  bool log_device_placement = false;
  // The devices span a cluster's tasks (a distributed master): a spec's
  // job, replica and task choose among them instead of having to name
  // this process.
  bool cluster = false;
};

// A device as placement sees it: a local Device or a cluster's.
struct PlacementDevice {
  std::string name;  // full name
  DeviceNameParts parts;
  std::string type;
  int id = 0;
  bool host_memory = true;
};
std::vector<PlacementDevice> PlacementDevicesOf(const std::vector<Device*>& devices);

// Places the op nodes of `g` that have no assigned device yet on `devices`
// (highest placement priority first). Nodes are placed in colocation
// groups: a node with `_class: "loc:@x"` goes where x goes, and so does a
// node that consumes another's ref output. A group goes to the first device
// that matches every member's device spec (device_name.h: full, partial,
// legacy, wildcards; the fields members set are merged) and has kernels for
// every member (ops with no kernel anywhere do not constrain it: their error
// comes when the kernel is created); a member already assigned fixes the
// group's device. A spec naming a job, replica or task other than this
// process's (/job:localhost/replica:0/task:0) is InvalidArgument naming the
// node and the spec. With soft placement such a spec is ignored, a group
// whose spec no device meets goes to the first device with kernels for it
// instead, and a member whose spec conflicts with its group's follows the
// group. Errors name the node.
Status PlaceGraph(const std::vector<PlacementDevice>& devices, const PlacementOptions& options, Graph* g);
Status PlaceGraph(const std::vector<Device*>& devices, const PlacementOptions& options, Graph* g);

// The placement stage of a step: PlaceGraph for the op nodes not placed
// yet, then a feed's _Arg on the device of the node it replaces (its first
// consumer's) and a fetch's _Retval on its producer's device.
Status PlaceClientGraph(const std::vector<PlacementDevice>& devices, const PlacementOptions& options, Graph* g);
Status PlaceClientGraph(const std::vector<Device*>& devices, const PlacementOptions& options, Graph* g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_PLACER_H_
