// Rewrites shared by the families' device passes: contraction + BiasAdd
// [+ activation] fusions (TensorFlow's remapper patterns), replacing a chain
// of nodes by one, and the constant-weights hint.
#ifndef GRAPHRT_OPS_COMMON_GRAPH_PASS_FUSION_H_
#define GRAPHRT_OPS_COMMON_GRAPH_PASS_FUSION_H_

#include <string>
#include <unordered_set>
#include <vector>

#include "common/graph_pass/graph_view.h"

namespace graphrt {
namespace passes {

struct Endpoint {
  Node* node;
  int slot;
};

// The sources of `n`'s first `count` data inputs; false if any is missing.
bool DataInputs(const Node& n, int count, std::vector<Endpoint>* inputs);

// Copies the attrs of `from` that `op` declares into `def`.
void CopyDeclaredAttrs(const Node& from, const pp::OpDef& op, pp::NodeDef* def);

// Replaces `chain` (nodes feeding each other; `last` the one whose output
// 0 the rest of the graph reads) by one node built from `def` reading
// `data_in`, on `last`'s device, with the union of the chain's outside
// control edges. The caller has checked the device has a kernel for it.
Node* ReplaceNodes(const std::vector<Node*>& chain, const Node* last, const std::vector<Endpoint>& data_in,
                   pp::NodeDef def, Graph* g);

// Fuses `contraction` (MatMul, Conv2D) -> BiasAdd [-> one of `activations`]
// chains on devices of `device_type` into `fused_op` (_FusedMatMul,
// _FusedConv2D), named after the chain's last node, where the device has a
// kernel for the fused node (without the activation, if only that has
// one). With `same_data_format`, the BiasAdd's data_format must be the
// contraction's (a convolution's bias runs along its channel dim; a
// matrix's is its last dim whatever BiasAdd says). Returns whether it
// changed anything.
bool FuseBiasActivation(PassEnv& env, Graph* g, const std::string& device_type, const std::string& contraction,
                        const std::string& fused_op, const std::unordered_set<std::string>& activations,
                        bool same_data_format);

// Marks the nodes of `ops` on devices of `device_type` whose weights
// (input 1: a convolution's filter, a product's B) come from a Const,
// through Identity nodes and a while loop's constant Enters, with
// `_weights_const: true`: a kernel may re-lay the weights out once per
// session instead of every Run. Returns whether it marked any.
bool MarkConstantWeights(PassEnv& env, Graph* g, const std::string& device_type,
                         const std::unordered_set<std::string>& ops);

}  // namespace passes
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_GRAPH_PASS_FUSION_H_
