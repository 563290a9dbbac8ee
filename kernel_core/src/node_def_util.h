// NodeDef validation against OpDefs, and the dtypes of a node's inputs/outputs.
#ifndef GRAPHRT_CORE_SRC_NODE_DEF_UTIL_H_
#define GRAPHRT_CORE_SRC_NODE_DEF_UTIL_H_

#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/node_def.pb.h"
#include "graphrt/proto/op_def.pb.h"

namespace graphrt {

using DataTypeVector = std::vector<DataType>;

// "Node 'name' (op 'Op')" — the prefix of every node-level error.
std::string NodePrefix(const proto::NodeDef& n);

// Fills missing attrs with the OpDef's defaults, then checks every attr
// (kind, allowed values, minimum) and rejects attrs the op does not have
// (unless they start with '_').
Status AddDefaultsAndValidate(const proto::OpDef& op, proto::NodeDef* node);

// Per-arg [begin, end) of the node's flat input/output indices.
struct ArgRange {
  std::string name;
  int begin;
  int end;
};
Status InputOutputTypes(const proto::NodeDef& node, const proto::OpDef& op, DataTypeVector* inputs,
                        DataTypeVector* outputs, std::vector<ArgRange>* input_ranges = nullptr,
                        std::vector<ArgRange>* output_ranges = nullptr);

// Attr lookup helpers.
const proto::AttrValue* FindAttr(const proto::NodeDef& node, const std::string& name);
std::string SummarizeAttrValue(const proto::AttrValue& v);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_NODE_DEF_UTIL_H_
