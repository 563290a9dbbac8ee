// TensorFlow's functional control flow (If/StatelessIf, Case/StatelessCase,
// While/StatelessWhile) lowered at graph import to the executor's dataflow
// primitives, as TensorFlow's "lower functional ops" pass does:
//
//   If:    pred = ToBool(cond); a Switch per input on pred; the then-branch
//          called on the true outputs, the else-branch on the false ones; a
//          Merge per output.
//   Case:  one predicate per branch (index == k; the last branch takes every
//          other index, TensorFlow's default-branch rule), a Switch per
//          input and branch, a Merge per output: the same as nested Ifs.
//   While: Enter (frame named after the node) -> Merge <- NextIteration;
//          cond called on the Merges -> ToBool -> LoopCond -> Switch; body
//          called on the true outputs -> NextIteration; Exit on the false.
//
// The node's own name becomes a forwarding node (IdentityN, Identity or
// NoOp) over the lowered outputs, so "node:k" reads them and "^node" means
// "after all of it". The branch/cond/body calls are emitted as
// PartitionedCall nodes, which the function inliner then inlines.
// ToBool and the forwarding ops come from the standard array family, Case's
// comparisons (Equal, Less, GreaterEqual, LogicalOr) from the math family.
#ifndef GRAPHRT_CORE_SRC_FUNCTIONAL_LOWERING_H_
#define GRAPHRT_CORE_SRC_FUNCTIONAL_LOWERING_H_

#include <functional>
#include <string>
#include <vector>

#include "graphrt/core/op_registry.h"
#include "graphrt/core/status.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/graph.pb.h"

namespace graphrt {

// Whether `op` is one of the functional control-flow ops lowered here.
bool IsFunctionalControlFlowOp(const std::string& op);

// What the lowering needs from the function inliner.
struct FunctionalLoweringHooks {
  // The library function named `name`, or null.
  std::function<const proto::FunctionDef*(const std::string& name)> find_function;
  // The flat dtypes of `f`'s inputs and outputs when called with `attrs`.
  std::function<Status(const proto::FunctionDef& f, const google::protobuf::Map<std::string, proto::AttrValue>& attrs,
                       const std::string& where, std::vector<DataType>* in, std::vector<DataType>* out)>
      signature_types;
  // Adds a node to the graph being built (inlining it if it is a call).
  std::function<Status(const proto::NodeDef& n)> emit;
};

// Emits the lowered form of `node` (IsFunctionalControlFlowOp(node.op())).
// Errors name the node: NotFound for a function the library lacks,
// InvalidArgument for inputs, outputs or signatures that do not match the
// node's attrs.
Status LowerFunctionalControlFlow(const proto::NodeDef& node, const OpRegistry& ops,
                                  const FunctionalLoweringHooks& hooks);

// A node named `name` that forwards `tensors` (of `types`) as its outputs
// "name:k": NoOp when there are none, Identity for one, IdentityN for more.
proto::NodeDef ForwardingNode(const std::string& name, const std::string& device,
                              const std::vector<std::string>& tensors, const std::vector<DataType>& types);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_FUNCTIONAL_LOWERING_H_
