// Calls of the graph's library functions (a node whose op is a function's
// name, or PartitionedCall / StatefulPartitionedCall with attr `f`) become
// the function's body, as TensorFlow's inliner makes them: the body's nodes
// named "<call>/<node>", one Identity per argument, and a node named like
// the call (Identity, IdentityN or NoOp) giving its outputs, so the rest of
// the graph and the client's fetches read "<call>:k" as before. The
// Identity/IdentityN/NoOp ops come from the standard array family.
// Functional control flow (If, Case, While and their Stateless forms) is
// lowered to Switch/Merge/Enter/Exit on the way (functional_lowering.h).
#ifndef GRAPHRT_CORE_SRC_FUNCTION_INLINE_H_
#define GRAPHRT_CORE_SRC_FUNCTION_INLINE_H_

#include "graphrt/core/op_registry.h"
#include "graphrt/core/status.h"
#include "graphrt/proto/graph.pb.h"

namespace graphrt {

// `out` gets `in`'s nodes with every function call inlined (nested calls
// too) and no library. Errors name the call and the function. Past
// `max_nodes` nodes in `out` it stops with RESOURCE_EXHAUSTED (`limit_hint`
// says which setting raises it): functions that call each other twice per
// level double the graph per level, so a few hundred bytes of library could
// ask for billions of nodes. Such a library is refused before any work, and
// the work done otherwise is linear in the nodes made, at most max_nodes.
Status InlineFunctionCalls(const proto::GraphDef& in, const OpRegistry& ops, int64_t max_nodes,
                           const std::string& limit_hint, proto::GraphDef* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_FUNCTION_INLINE_H_
