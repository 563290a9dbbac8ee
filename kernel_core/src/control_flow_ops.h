// The core's definitions of the control-flow primitives' ops.
#ifndef GRAPHRT_CORE_SRC_CONTROL_FLOW_OPS_H_
#define GRAPHRT_CORE_SRC_CONTROL_FLOW_OPS_H_

#include <vector>

#include "graphrt/core/control_flow.h"
#include "graphrt/core/op_registry.h"

namespace graphrt {

// An op the core defines for itself (the control-flow primitives, _Send
// and _Recv), in op_def_builder's spec strings.
struct CoreOpSpec {
  const char* name;
  std::vector<const char*> inputs, outputs, attrs;
  uint32_t flags;
  GR_ShapeFn shape_fn;
};

// Adds the OpDefs (with their shape functions) of `specs` to `ops`, as
// defined by "graphrt_core".
Status RegisterCoreOps(const std::vector<CoreOpSpec>& specs, OpRegistry* ops);

// Adds the primitives' OpDefs (with their shape functions) to `ops`.
Status RegisterControlFlowOps(OpRegistry* ops);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_CONTROL_FLOW_OPS_H_
