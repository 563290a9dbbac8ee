// What a client learns from a GraphDef before running it: how many outputs
// a node has, and which tensors a run fetches by default.
#ifndef GRAPHRT_CLIENT_GRAPH_INFO_H_
#define GRAPHRT_CLIENT_GRAPH_INFO_H_

#include <string>
#include <vector>

#include "graphrt/proto/graph.pb.h"

namespace graphrt {

// Outputs `node` has according to its registered OpDef, or -1 when that
// depends on something unknown (an unregistered op, a missing list attr).
int NumOutputsOfNode(const proto::NodeDef& node);

// Every output ("name:k") of every node that no node reads (by data or
// control edge), outside while loops, sorted by node name. Sinks without
// outputs (NoOps, train ops) go to `no_output_sinks` when it is not null.
// A node whose output count is unknown contributes output 0 (the session
// then names the problem).
std::vector<std::string> SinkOutputs(const proto::GraphDef& g, std::vector<std::string>* no_output_sinks);

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_GRAPH_INFO_H_
