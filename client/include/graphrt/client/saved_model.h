// Loading a SavedModel (or a .meta file with a checkpoint) into a session,
// and running its signatures by key. TensorFlow's TF1 loader order
// (tf_proto_facts.md §7): read, pick the MetaGraphDef by tags, create the
// session, restore variables through saver_def (feeding asset paths), run
// the main op / legacy init op.
#ifndef GRAPHRT_CLIENT_SAVED_MODEL_H_
#define GRAPHRT_CLIENT_SAVED_MODEL_H_

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/config.pb.h"
#include "graphrt/proto/meta_graph.pb.h"

namespace graphrt {

// One loaded model: the session holding its graph and variables, and the
// MetaGraphDef it came from (signatures, collections).
struct SavedModelBundle {
  std::unique_ptr<Session> session;
  proto::MetaGraphDef meta_graph_def;
  // The export directory, or the .meta file, it was loaded from.
  std::string source;

  // The signature named `key`; NotFound listing the available keys (or
  // saying there are none) otherwise.
  Status GetSignature(const std::string& key, const proto::SignatureDef** out) const;

  // Runs signature `key`: `inputs` by input key (every key must exist in the
  // signature; an input not given takes the signature's default value
  // when it has one), `output_keys` by output key (empty: every output, sorted by
  // key, and *output_keys_used says which). Errors name the signature and key.
  Status RunSignature(const std::string& key, const std::vector<std::pair<std::string, Tensor>>& inputs,
                      const std::vector<std::string>& output_keys, std::vector<Tensor>* outputs,
                      std::vector<std::string>* output_keys_used = nullptr) const;
};

// Loads the MetaGraphDef of `export_dir` tagged exactly `tags` into a new
// session (see above). On failure *bundle is left empty.
// Loading runs the model's ops, and a graph is a program: the session's
// file ops may touch files only in `export_dir` and the directories
// session_options.config.graphrt_options().allowed_directories() lists
// (README, "Trust model"). Asset file names that are absolute or climb out
// of assets/ are refused.
Status LoadSavedModel(const SessionOptions& session_options, const std::string& export_dir,
                      const std::set<std::string>& tags, SavedModelBundle* bundle);
// The same, with RunOptions for the restore and init-op runs (TensorFlow's
// overload).
Status LoadSavedModel(const SessionOptions& session_options, const proto::RunOptions& run_options,
                      const std::string& export_dir, const std::set<std::string>& tags, SavedModelBundle* bundle);

// import_meta_graph + Saver.restore: a .meta file's graph in a new session,
// its variables restored from `checkpoint_prefix` through the file's
// saver_def (else the "savers" collection's first SaverDef, else a Saver the
// loader adds for every variable). An empty prefix skips the restore. Then
// the main op / legacy init op, if any, runs. Confined only as
// session_options asks (allowed_directories): a .meta file and its
// checkpoint may lie anywhere.
Status LoadMetaGraphAndCheckpoint(const SessionOptions& session_options, const std::string& meta_graph_path,
                                  const std::string& checkpoint_prefix, SavedModelBundle* bundle);

// TensorFlow Serving's older SessionBundle layout: <dir>/export.meta with
// the checkpoint <dir>/export (V2 index or V1 file) or its V1 shards
// <dir>/export-?????-of-?????. Loaded as LoadMetaGraphAndCheckpoint does,
// confined to `export_dir` (and the allowed directories) as LoadSavedModel is.
bool MaybeSessionBundleDirectory(const std::string& dir);
Status LoadSessionBundle(const SessionOptions& session_options, const std::string& export_dir,
                         SavedModelBundle* bundle);

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_SAVED_MODEL_H_
