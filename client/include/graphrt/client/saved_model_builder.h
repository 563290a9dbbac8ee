// Writing a TF1 SavedModel that TensorFlow (Serving) loads: saved_model.pb
// (or .pbtxt), variables/variables.{index,data-*} written by the graph's
// saver (or a sharded Saver the builder adds), assets/ with the asset files.
// Everything is written into a temporary directory beside export_dir and
// renamed into place by Save(), so a crash never leaves a half SavedModel.
#ifndef GRAPHRT_CLIENT_SAVED_MODEL_BUILDER_H_
#define GRAPHRT_CLIENT_SAVED_MODEL_BUILDER_H_

#include <map>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/proto/graph.pb.h"
#include "graphrt/proto/meta_graph.pb.h"
#include "graphrt/proto/saved_model.pb.h"

namespace graphrt {

struct SavedModelAsset {
  // File copied to assets/<filename>.
  std::string source_path;
  // The graph's string tensor the loader feeds with the asset's path.
  std::string tensor_name;
  // Default: the source file's name.
  std::string filename;
};

struct MetaGraphExport {
  std::vector<std::string> tags;
  std::map<std::string, proto::SignatureDef> signatures;
  std::vector<SavedModelAsset> assets;
  // A node run after restoring (collection "saved_model_main_op"; with
  // legacy_init_op, "legacy_init_op" as TF < 1.12 wrote it). "" for none.
  std::string main_op;
  bool legacy_init_op = false;
  // Further collections, stored as given.
  std::map<std::string, proto::CollectionDef> collections;
};

class SavedModelBuilder {
 public:
  explicit SavedModelBuilder(std::string export_dir);
  ~SavedModelBuilder();
  SavedModelBuilder(const SavedModelBuilder&) = delete;
  SavedModelBuilder& operator=(const SavedModelBuilder&) = delete;

  // The first MetaGraphDef: `graph` must be `session`'s graph. Variables are
  // saved through `saver_def` when given (its nodes are in the graph), else
  // through a sharded Saver added to the session (when the graph has
  // variables). AlreadyExists when export_dir exists. `session_graph`, when
  // given, gets `graph` with the nodes added to the session (that Saver's),
  // for a caller that keeps a copy of the session's graph.
  Status AddMetaGraphAndVariables(Session* session, const proto::GraphDef& graph, const MetaGraphExport& meta,
                                  const proto::SaverDef* saver_def = nullptr,
                                  proto::GraphDef* session_graph = nullptr);
  // A further MetaGraphDef sharing those variables (another tag set).
  Status AddMetaGraph(const proto::GraphDef& graph, const MetaGraphExport& meta,
                      const proto::SaverDef* saver_def = nullptr);
  // Writes saved_model.pb (or .pbtxt) and moves the directory into place.
  Status Save(bool as_text = false);

 private:
  Status Prepare();
  Status BuildMetaGraph(const proto::GraphDef& graph, const MetaGraphExport& meta,
                        const proto::SaverDef* saver_def, proto::MetaGraphDef* out);

  std::string export_dir_;
  std::string tmp_dir_;
  bool have_variables_meta_graph_ = false;
  bool saved_ = false;
  proto::SavedModel saved_model_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_SAVED_MODEL_BUILDER_H_
