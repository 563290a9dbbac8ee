// Runs the ops' shape functions over a graph in topological order.
#ifndef GRAPHRT_CORE_SRC_SHAPE_INFERENCE_H_
#define GRAPHRT_CORE_SRC_SHAPE_INFERENCE_H_

#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/tensor.h"
#include "graphrt/core/tensor_shape.h"

namespace graphrt {

// out[node id][output] = inferred shape (unknown where no shape fn).
// Errors name the node whose shape function failed.
// Tensors that shape functions read from attrs come from `attr_allocator`
// (the session's budgeted host allocator), so a huge Const fails within
// the budget at Create instead of taking the machine.
Status InferShapes(const Graph& g, std::vector<std::vector<PartialTensorShape>>* out, Allocator* attr_allocator);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_SHAPE_INFERENCE_H_
