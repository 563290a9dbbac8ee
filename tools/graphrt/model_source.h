// SavedModel directories and .meta files for `graphrt run` and `graphrt
// show`: the options (--tag, --signature, --checkpoint), loading through
// libgraphrt_client, and signature keys turned into tensor names.
#ifndef GRAPHRT_TOOLS_GRAPHRT_MODEL_SOURCE_H_
#define GRAPHRT_TOOLS_GRAPHRT_MODEL_SOURCE_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "graphrt/client/saved_model.h"

namespace graphrt {
namespace cli {

// --tag and --signature; for run also --checkpoint.
void AddModelOptions(po::options_description* desc, bool for_run);
// "serve,train" -> {serve, train}; "" -> {serve}.
std::set<std::string> ParseTags(const std::string& spec);
bool IsMetaGraphFile(const std::string& path);
// A directory (SavedModel) or a .meta file: what `run` loads as a model.
bool IsModelPath(const std::string& path);

// A loaded model and the signature that names its feeds and fetches.
class ModelSource {
 public:
  // Loads `path` (IsModelPath) with the options in `vm`; throws CliError.
  ModelSource(const po::variables_map& vm, const std::string& path, const SessionOptions& options);
  const proto::GraphDef& graph() const { return bundle_.meta_graph_def.graph_def(); }
  const proto::MetaGraphDef& meta_graph_def() const { return bundle_.meta_graph_def; }
  std::unique_ptr<Session> TakeSession() { return std::move(bundle_.session); }
  // A signature input key -> its tensor name; anything else unchanged.
  std::string FeedTensor(const std::string& name) const;
  std::string FetchTensor(const std::string& name) const;
  // The signature's output keys (sorted); throws when there is no signature.
  std::vector<std::string> DefaultFetches() const;

 private:
  SavedModelBundle bundle_;
  std::string path_;
  std::string signature_key_;
  const proto::SignatureDef* signature_ = nullptr;
  std::string no_signature_reason_;
};

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_MODEL_SOURCE_H_
