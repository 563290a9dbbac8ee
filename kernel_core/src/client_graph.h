// The first stage of a step: the session's graph rewritten for one
// signature (TensorFlow's subgraph rewriting). Each feed `name:k` becomes an
// _Arg (index = its position in `feeds`) that replaces that output for its
// consumers; each fetch becomes a _Retval (index = its position in
// `fetches`) reading the tensor, or the feed's _Arg when the tensor is fed;
// targets get a control edge to _SINK; then everything the fetches and
// targets do not need is pruned. Errors are TensorFlow's: NotFound for an
// unknown feed, fetch or target, InvalidArgument for a malformed name, an
// output index out of range, a feed given twice, a fetch of a node that has
// no outputs.
#ifndef GRAPHRT_CORE_SRC_CLIENT_GRAPH_H_
#define GRAPHRT_CORE_SRC_CLIENT_GRAPH_H_

#include <string>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"
#include "graphrt/core/types.h"

namespace graphrt {

struct ClientGraphFeeds {
  std::vector<DataType> types;   // the type each _Arg yields, in `feeds` order
  std::vector<std::string> names;  // canonical "node:k", in `feeds` order
};

// Copies `full` into the empty `out` and rewrites it for the signature.
// Nodes keep the devices `full` assigned them; the _Arg of a feed takes the
// assigned device of the node it replaces, _Retvals have none yet.
Status BuildClientGraph(const Graph& full, const std::vector<std::string>& feeds,
                        const std::vector<std::string>& fetches, const std::vector<std::string>& targets, Graph* out,
                        ClientGraphFeeds* feed_info);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_CLIENT_GRAPH_H_
