// Random inputs for `graphrt bench` and `graphrt dot --placed`: a value for
// each Placeholder a run needs that no --feed gives, of the placeholder's
// dtype and shape, with unknown dims taken from --shape NAME=D0,D1,...
#ifndef GRAPHRT_TOOLS_GRAPHRT_GENERATED_INPUTS_H_
#define GRAPHRT_TOOLS_GRAPHRT_GENERATED_INPUTS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli.h"

namespace graphrt {
namespace cli {

// Each "NAME=D0,D1,..." ("NAME=" or "NAME=[]" for a scalar; brackets
// optional) by NAME as written; UsageError for anything else.
std::map<std::string, std::vector<int64_t>> ParseShapeSpecs(const std::vector<std::string>& specs);

struct GeneratedInput {
  std::string tensor;  // "x:0"
  Tensor value;
};

// The nodes whose outputs a run of `fetches` (tensor names) and `targets`
// (node names) computes, not looking past `fed_nodes`: every node they
// reach through data and control inputs.
std::set<std::string> NodesNeeded(const proto::GraphDef& g, const std::vector<std::string>& fetches,
                                  const std::vector<std::string>& targets,
                                  const std::set<std::string>& fed_nodes);

// A random value for every Placeholder in `needed` that is not in
// `fed_nodes`, and for every PlaceholderWithDefault that `shapes` names
// (keys are node names). Its shape is the placeholder's `shape` attr with
// the --shape dims for unknown ones; a dim still unknown is an error naming
// the placeholder and --shape. Floating-point values are uniform in
// [-1, 1), integers in [0, 10) (placeholders of integers are often indices
// or labels), bools either; the same for a given `seed`. Errors for shapes
// that contradict the attr, --shape names that are no placeholder, dtypes
// that cannot be generated, and inputs past `max_bytes` in all.
std::vector<GeneratedInput> GenerateInputs(const proto::GraphDef& g, const std::string& graph_path,
                                           const std::set<std::string>& needed,
                                           const std::set<std::string>& fed_nodes,
                                           const std::map<std::string, std::vector<int64_t>>& shapes,
                                           int64_t max_bytes, uint32_t seed);

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_GENERATED_INPUTS_H_
