// Runs the ops' shape functions over a graph in topological order.
#ifndef GRAPHRT_CORE_SRC_SHAPE_INFERENCE_H_
#define GRAPHRT_CORE_SRC_SHAPE_INFERENCE_H_

#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/tensor_shape.h"

namespace graphrt {

// out[node id][output] = inferred shape (unknown where no shape fn).
// Errors name the node whose shape function failed.
Status InferShapes(const Graph& g, std::vector<std::vector<PartialTensorShape>>* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_SHAPE_INFERENCE_H_
