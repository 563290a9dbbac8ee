// The core's generic graph rewrites, TensorFlow 1's GraphOptimizer at
// OptimizerOptions L1: Identity removal, constant folding and
// common-subexpression elimination. Generic: they know no public op but
// Const (what a folded value becomes) and Identity (what the first one
// removes). Each keeps the results of every Run as they were.
#ifndef GRAPHRT_CORE_SRC_GENERIC_PASSES_H_
#define GRAPHRT_CORE_SRC_GENERIC_PASSES_H_

#include <cstdint>

#include "graphrt/core/device.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/status.h"

namespace graphrt {

// TensorFlow's cap on a folded constant when max_folded_constant_in_bytes is 0.
constexpr int64_t kDefaultMaxFoldedConstantBytes = int64_t{10} << 20;

struct GenericPassOptions {
  // An Identity outside loops, not fed by a Switch, not fetched, on its
  // input's device: its consumers read its input (and wait for its control
  // inputs) instead.
  bool remove_identity = false;
  // Stateless nodes whose data inputs are all (transitively) Consts, outside
  // loops, are evaluated once on `host` with their CPU kernels; the tensors
  // that non-constant nodes read become Consts of at most
  // `max_folded_constant_bytes` on the producer's device, waiting for the
  // control inputs of the subgraph that made them. Not folded: async
  // kernels, and subgraphs whose tensors need more than 4 times the cap at
  // once while they are evaluated.
  bool constant_folding = false;
  int64_t max_folded_constant_bytes = kDefaultMaxFoldedConstantBytes;
  // Stateless nodes with the same op, attrs, assigned device and inputs
  // (data in order, control as a set) are merged into the first.
  bool cse = false;
};

// Runs the enabled passes in that order on the placed client graph `g`.
// `host` is the CPU device folding evaluates on (null: no folding). A
// failure while evaluating leaves the graph unfolded (the error surfaces
// when the step runs, as it would have); errors returned are the core's.
// A control edge src -> dst unless dst already waits for src (the passes'
// rewiring would otherwise pile up duplicates).
void AddControlEdgeOnce(Graph* g, Node* src, Node* dst);

Status RunGenericPasses(const GenericPassOptions& options, const GraphPassServices& services, Device* host, Graph* g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_GENERIC_PASSES_H_
