// Symbolic differentiation of graphs (TensorFlow's AddSymbolicGradients)
// with the gradient functions the op plugins register (GR_GradientSpec,
// plugin ABI 1.5).
#ifndef GRAPHRT_CORE_GRADIENTS_H_
#define GRAPHRT_CORE_GRADIENTS_H_

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/c_api.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"

namespace graphrt {

struct GradientRegistration {
  std::string op;
  GR_GradientFn fn = nullptr;  // null: the op is not differentiable
  void* user_data = nullptr;
  std::string plugin;  // the plugin that registered it
};

class GradientRegistry {
 public:
  // nullptr when no plugin registered a gradient (or its absence) for `op`.
  const GradientRegistration* LookUp(const std::string& op) const;
  // Whether `staged` can be added: one registration per op in the process.
  Status CheckAll(const std::vector<std::unique_ptr<GradientRegistration>>& staged) const;
  void AddAll(std::vector<std::unique_ptr<GradientRegistration>> staged);

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<GradientRegistration>> grads_;
};

// Output `second` of node `first`.
using GraphOutput = std::pair<Node*, int>;

// Adds to `g` the nodes that compute the gradients of
// sum_i <ys[i], grad_ys[i]> with respect to each of `xs`, by the chain rule
// backwards over the nodes on paths from xs to ys, calling each one's
// registered gradient function (TensorFlow's AddSymbolicGradients):
// - grad_ys: one per y (the gradients flowing into them), or empty for
//   ones (OnesLike) of each y's shape; of the y's type.
// - Gradients arriving at one tensor from several consumers are summed
//   (AddN); an output with none gets zeros where its node needs it.
// - dxs[i]: the gradient of xs[i], or {nullptr, -1} when no gradient flows
//   from the ys to it (unconnected, or only through ops that are not
//   differentiable).
// - Nodes are named under `scope` ("gradients": "gradients/MatMul_grad/
//   MatMul_1"), unique among the graph's names, which `find_node` answers
//   (nullptr: free) along with the ones added here. `added` gets every node
//   added, in the order added (producers first).
// Errors name the node: an op on the path with no registered gradient, a
// gradient function's failure, a node it adds that is invalid, loops and
// conditionals (not differentiated yet). On failure the added nodes stay in
// `added` for the caller to remove.
Status AddSymbolicGradients(Graph* g, const GradientRegistry& registry, const std::vector<GraphOutput>& ys,
                            const std::vector<GraphOutput>& xs, const std::vector<GraphOutput>& grad_ys,
                            const std::string& scope, const std::function<Node*(const std::string&)>& find_node,
                            std::vector<GraphOutput>* dxs, std::vector<Node*>* added);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_GRADIENTS_H_
