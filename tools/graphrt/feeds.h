// --feed NAME=FILE.npy and tensor/node name checks, shared by `graphrt run`
// and `graphrt train` (defined in run_command.cc).
#ifndef GRAPHRT_TOOLS_GRAPHRT_FEEDS_H_
#define GRAPHRT_TOOLS_GRAPHRT_FEEDS_H_

#include <string>
#include <vector>

#include "cli.h"

namespace graphrt {
namespace cli {

struct Feed {
  std::string name;  // as the user wrote it ("x" or "x:0")
  std::string file;
  Tensor value;
};

// Each "NAME=FILE.npy"; UsageError otherwise. Nothing is read yet.
std::vector<Feed> ParseFeedSpecs(const std::vector<std::string>& specs);
// Checks each feed's name against `g` (and that none is given twice), reads
// its .npy file and checks it against the placeholder's dtype and shape.
void ReadFeeds(const proto::GraphDef& g, const std::string& graph_path, std::vector<Feed>* feeds);

// Throws unless `name` is "node" or "node:k" with `node` in the graph and k
// below its output count (when we can know it).
void CheckTensorName(const proto::GraphDef& g, const std::string& flag, const std::string& name,
                     const std::string& graph_path);
// Throws unless `name` is a node of `g`.
void CheckNodeName(const proto::GraphDef& g, const std::string& flag, const std::string& name,
                   const std::string& graph_path);

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_FEEDS_H_
