// A Saver for sessions whose graph has no save/restore nodes: like
// TensorFlow's Python tf.train.Saver it extends the graph with a `save/`
// scope (filename tensor, SaveV2 + tensor_names/shape_and_slices, RestoreV2
// + one Assign per variable, a restore_all NoOp; sharded: ShardedFilename
// per device and MergeV2Checkpoints) and runs those nodes. It also keeps
// the `checkpoint` state file (CheckpointState, text format), deletes old
// checkpoints past max_to_keep (sparing one per
// keep_checkpoint_every_n_hours) and finds the latest checkpoint.
#ifndef GRAPHRT_CLIENT_SAVER_H_
#define GRAPHRT_CLIENT_SAVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/proto/graph.pb.h"
#include "graphrt/proto/meta_graph.pb.h"
#include "graphrt/proto/saver.pb.h"

namespace graphrt {

struct SaverOptions {
  // Variable node names (VariableV2, Variable or VarHandleOp) to save; each
  // is saved under its node name. Empty: every variable in the graph.
  std::vector<std::string> var_names;
  // One SaveV2 per device, merged by MergeV2Checkpoints (as SavedModels do).
  bool sharded = false;
  // Checkpoints kept on disk; 0 keeps everything (and no history).
  int max_to_keep = 5;
  double keep_checkpoint_every_n_hours = 10000.0;
  // Name scope of the nodes; "save_1", "save_2", ... when taken.
  std::string name = "save";
  // Write paths in the state file relative to its directory.
  bool save_relative_paths = false;
  // Write <path>.meta (MetaGraphDef with graph and saver_def) on Save.
  bool write_meta_graph = true;
  // Name of the state file in the checkpoint directory ("" writes none).
  std::string latest_filename = "checkpoint";
  // Seconds since the epoch (tests set it to control keep_checkpoint_every_n_hours).
  std::function<double()> clock;
};

class Saver {
 public:
  // Adds the save/restore nodes for the variables in `*graph` (which must be
  // the session's graph) to `session` with Extend, and to `*graph`.
  // InvalidArgument when there are no variables or a named one is missing.
  static Status Create(Session* session, proto::GraphDef* graph, const SaverOptions& options,
                       std::unique_ptr<Saver>* out);
  // A Saver over nodes that already exist (a MetaGraphDef's saver_def).
  // `meta_graph` (may be null) is what Save writes as <path>.meta.
  static Status FromSaverDef(const proto::SaverDef& saver_def, const proto::MetaGraphDef* meta_graph,
                             SaverOptions options, std::unique_ptr<Saver>* out);

  // Saves to `prefix` (prefix-<global_step> when global_step >= 0); *path gets
  // the checkpoint prefix written. Updates the state file and deletes
  // checkpoints past max_to_keep. The first save to a prefix removes what
  // crashed saves left (the state file's and .meta temporaries, _temp_
  // shard directories); with a global_step it also finds the earlier
  // checkpoints "<prefix>-<n>" in the directory (a former run's, or ones a
  // crash kept out of the state file), cleans up after their crashed saves
  // and, with max_to_keep, takes them into the rotation, oldest (by file
  // time) first.
  Status Save(Session* session, const std::string& prefix, int64_t global_step = -1,
              std::string* path = nullptr);
  // Restores every saved variable from checkpoint `prefix` (V2, or V1 when
  // the restore kernels read it). NotFound when no checkpoint is there.
  // All or nothing where the Saver knows its graph (Create, or FromSaverDef
  // with the meta graph): every tensor's presence, dtype and shape (against
  // the variable's declared shape, as Assign's validate_shape does) is
  // checked against the checkpoint's index before any variable changes.
  Status Restore(Session* session, const std::string& prefix);

  const proto::SaverDef& saver_def() const { return saver_def_; }
  // The graph with the saver's nodes (Create only; else the given meta graph's).
  const proto::MetaGraphDef& meta_graph_def() const { return meta_graph_; }
  // Checkpoints this Saver keeps track of, oldest first.
  std::vector<std::string> last_checkpoints() const;
  // Adopts checkpoints written earlier (e.g. from the state file) so that
  // max_to_keep also deletes them; ones whose files are gone are dropped.
  void RecoverLastCheckpoints(const std::vector<std::string>& paths);

 private:
  Saver() = default;
  double Now() const;
  Status DeleteOldCheckpoints();
  void AdoptEarlierCheckpoints(const std::string& prefix, bool stepped, const std::string& written);
  Status CheckRestorable(const std::string& prefix) const;

  proto::SaverDef saver_def_;
  proto::MetaGraphDef meta_graph_;
  SaverOptions options_;
  // Sharded savers built here: "_temp_<hex>", the directory the shards go
  // to beside the prefix before MergeV2Checkpoints.
  std::string temp_suffix_;
  std::vector<std::pair<std::string, double>> last_checkpoints_;  // (path, time)
  double next_keep_time_ = 0;
  std::set<std::string> scanned_;  // prefixes whose earlier checkpoints were looked for
};

// Reads <dir>/<latest_filename>. NotFound when the file is missing,
// DataLoss when it does not parse, InvalidArgument ("Invalid checkpoint
// state loaded from <dir>") when model_checkpoint_path is empty. Relative
// paths come back joined with `dir`.
Status GetCheckpointState(const std::string& dir, proto::CheckpointState* state,
                          const std::string& latest_filename = "checkpoint");
// Writes the state file atomically (temporary file, fsync, rename).
// all_paths should end with model_checkpoint_path (it is appended if not).
Status UpdateCheckpointState(const std::string& dir, const std::string& model_checkpoint_path,
                             const std::vector<std::string>& all_paths, bool save_relative_paths = false,
                             const std::string& latest_filename = "checkpoint");
// The newest checkpoint named by the state file if its files exist, else "".
std::string LatestCheckpoint(const std::string& dir, const std::string& latest_filename = "checkpoint");
// A V2 prefix with <prefix>.index, or a V1 checkpoint file <prefix> or
// <prefix>-?????-of-?????, or a glob pattern (V1) matching a file.
bool CheckpointExists(const std::string& prefix);
// The files a glob pattern matches, sorted.
std::vector<std::string> MatchingFiles(const std::string& pattern);

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_SAVER_H_
