// Device placement: assigns every op node of a graph a device.
#ifndef GRAPHRT_CORE_SRC_PLACER_H_
#define GRAPHRT_CORE_SRC_PLACER_H_

#include <string>
#include <vector>

#include "graphrt/core/device.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"

namespace graphrt {

// A parsed device spec ("/job:x/replica:0/task:0/device:GPU:1", "/cpu:0",
// "GPU:1"); empty fields match anything.
struct DeviceSpec {
  std::string type;  // "CPU", "GPU"
  int id = -1;
};
Status ParseDeviceSpec(const std::string& s, DeviceSpec* out);

// Places the op nodes of `g` that have no assigned device yet on `devices`
// (highest placement priority first). Nodes are placed in colocation
// groups: a node with `_class: "loc:@x"` goes where x goes, and so does a
// node that consumes another's ref output. A group goes to the first device
// that matches every member's device spec and has kernels for every member
// (ops with no kernel anywhere do not constrain it: their error comes when
// the kernel is created); a member already assigned fixes the group's
// device. With `allow_soft_placement`, a group whose spec no device meets
// goes to the first device with kernels for it instead, and a member whose
// spec conflicts with its group's follows the group. Errors name the node.
Status PlaceGraph(const std::vector<Device*>& devices, bool allow_soft_placement, Graph* g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_PLACER_H_
