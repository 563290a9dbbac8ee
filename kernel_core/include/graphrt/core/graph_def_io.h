// Reading and writing GraphDefs: binary (.pb) or text (.pbtxt).
#ifndef GRAPHRT_CORE_GRAPH_DEF_IO_H_
#define GRAPHRT_CORE_GRAPH_DEF_IO_H_

#include <string>

#include "graphrt/core/status.h"
#include "graphrt/proto/graph.pb.h"

namespace graphrt {

// Binary first unless the name ends in .pbtxt/.txt; falls back to the other
// format. Errors name the file.
Status ReadGraphDefFromFile(const std::string& path, proto::GraphDef* out);
Status ParseGraphDefText(const std::string& text, proto::GraphDef* out);
Status WriteGraphDefToFile(const std::string& path, const proto::GraphDef& g, bool text);
Status ReadFileToString(const std::string& path, std::string* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_GRAPH_DEF_IO_H_
