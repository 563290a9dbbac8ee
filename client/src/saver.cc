// The client-side Saver: builds TensorFlow's save/restore graph pattern
// (tf_proto_facts.md §8 "Saver graph pattern") and runs it; checkpoint state
// file and checkpoint retention as checkpoint_management.py does
// (tf_behaviours.md §13).
#include "graphrt/client/saver.h"

#include <glob.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "file_util.h"
#include "graphrt/bundle/bundle.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/tensor.h"

namespace graphrt {

namespace fs = std::filesystem;
using client_internal::BaseName;
using client_internal::DirName;
using client_internal::FileExists;
using client_internal::JoinPath;

namespace {

struct VarInfo {
  const proto::NodeDef* node;
  int dtype;  // base dtype
  bool resource;
};

proto::NodeDef* AddNode(proto::GraphDef* g, const std::string& name, const std::string& op,
                        std::vector<std::string> inputs = {}) {
  proto::NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (std::string& in : inputs) n->add_input(std::move(in));
  return n;
}

void SetType(proto::NodeDef* n, const std::string& key, int dtype) {
  (*n->mutable_attr())[key].set_type(static_cast<proto::DataType>(dtype));
}
void SetBool(proto::NodeDef* n, const std::string& key, bool v) { (*n->mutable_attr())[key].set_b(v); }
void SetInt(proto::NodeDef* n, const std::string& key, int64_t v) { (*n->mutable_attr())[key].set_i(v); }
void SetString(proto::NodeDef* n, const std::string& key, const std::string& v) {
  (*n->mutable_attr())[key].set_s(v);
}
void SetTypeList(proto::NodeDef* n, const std::string& key, const std::vector<int>& types) {
  auto* list = (*n->mutable_attr())[key].mutable_list();
  for (int t : types) list->add_type(static_cast<proto::DataType>(t));
}
void SetColocation(proto::NodeDef* n, const std::string& node) {
  (*n->mutable_attr())["_class"].mutable_list()->add_s("loc:@" + node);
}

// Const of strings: a scalar when `scalar`, else a vector.
proto::NodeDef* AddStringConst(proto::GraphDef* g, const std::string& name, const std::vector<std::string>& values,
                               bool scalar) {
  proto::NodeDef* n = AddNode(g, name, "Const");
  SetType(n, "dtype", proto::DT_STRING);
  proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(proto::DT_STRING);
  if (!scalar) t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (const std::string& v : values) t->add_string_val(v);
  return n;
}

proto::NodeDef* AddInt32Const(proto::GraphDef* g, const std::string& name, int32_t value) {
  proto::NodeDef* n = AddNode(g, name, "Const");
  SetType(n, "dtype", proto::DT_INT32);
  proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(proto::DT_INT32);
  t->add_int_val(value);
  return n;
}

// Adds the save nodes of one shard (or of the whole non-sharded saver):
// SaveV2 writing `vars` to `prefix_tensor`; returns the SaveV2 node name.
std::string AddSaveV2(proto::GraphDef* g, const std::string& scope, const std::string& suffix,
                      const std::string& prefix_tensor, const std::vector<VarInfo>& vars, int* read_counter) {
  std::vector<std::string> names;
  std::vector<int> dtypes;
  std::vector<std::string> tensors;
  for (const VarInfo& v : vars) {
    names.push_back(v.node->name());
    dtypes.push_back(v.dtype);
    if (v.resource) {
      // A resource variable is read into a tensor first, as TF's
      // ResourceVariable saveable does.
      const int k = (*read_counter)++;
      const std::string read = scope + "/Read" + (k ? "_" + std::to_string(k) : "") + "/ReadVariableOp";
      proto::NodeDef* r = AddNode(g, read, "ReadVariableOp", {v.node->name()});
      SetType(r, "dtype", v.dtype);
      r->set_device(v.node->device());
      tensors.push_back(read);
    } else {
      tensors.push_back(v.node->name());
    }
  }
  const std::string save = scope + "/SaveV2" + suffix;
  AddStringConst(g, save + "/tensor_names", names, false);
  AddStringConst(g, save + "/shape_and_slices", std::vector<std::string>(vars.size(), ""), false);
  proto::NodeDef* s = AddNode(g, save, "SaveV2", {prefix_tensor, save + "/tensor_names", save + "/shape_and_slices"});
  for (const std::string& t : tensors) s->add_input(t);
  SetTypeList(s, "dtypes", dtypes);
  return save;
}

// RestoreV2 of `vars` from the scope's filename tensor, then one Assign (or
// AssignVariableOp) per variable; returns the assign node names.
std::vector<std::string> AddRestore(proto::GraphDef* g, const std::string& scope, const std::string& suffix,
                                    const std::string& filename, const std::vector<VarInfo>& vars,
                                    int* assign_counter) {
  std::vector<std::string> names;
  std::vector<int> dtypes;
  for (const VarInfo& v : vars) {
    names.push_back(v.node->name());
    dtypes.push_back(v.dtype);
  }
  const std::string restore = scope + "/RestoreV2" + suffix;
  AddStringConst(g, restore + "/tensor_names", names, false);
  AddStringConst(g, restore + "/shape_and_slices", std::vector<std::string>(vars.size(), ""), false);
  proto::NodeDef* r = AddNode(g, restore, "RestoreV2", {filename, restore + "/tensor_names", restore + "/shape_and_slices"});
  SetTypeList(r, "dtypes", dtypes);
  std::vector<std::string> assigns;
  for (size_t i = 0; i < vars.size(); ++i) {
    const VarInfo& v = vars[i];
    const int k = (*assign_counter)++;
    const std::string value = restore + (i ? ":" + std::to_string(i) : "");
    proto::NodeDef* a;
    if (v.resource) {
      a = AddNode(g, scope + "/AssignVariableOp" + (k ? "_" + std::to_string(k) : ""), "AssignVariableOp",
                  {v.node->name(), value});
      SetType(a, "dtype", v.dtype);
    } else {
      a = AddNode(g, scope + "/Assign" + (k ? "_" + std::to_string(k) : ""), "Assign", {v.node->name(), value});
      SetType(a, "T", v.dtype);
      SetBool(a, "validate_shape", true);
      SetBool(a, "use_locking", true);
      SetColocation(a, v.node->name());
    }
    a->set_device(v.node->device());
    assigns.push_back(a->name());
  }
  return assigns;
}

Status CollectVariables(const proto::GraphDef& graph, const std::vector<std::string>& var_names,
                        std::vector<VarInfo>* out) {
  std::map<std::string, const proto::NodeDef*> by_name;
  for (const proto::NodeDef& n : graph.node()) by_name[n.name()] = &n;
  auto info = [](const proto::NodeDef& n, VarInfo* v) -> bool {
    const bool ref = n.op() == "VariableV2" || n.op() == "Variable";
    const bool resource = n.op() == "VarHandleOp";
    if (!ref && !resource) return false;
    auto dt = n.attr().find("dtype");
    v->node = &n;
    v->dtype = dt == n.attr().end() ? 0 : dt->second.type();
    v->resource = resource;
    return true;
  };
  out->clear();
  if (var_names.empty()) {
    for (const proto::NodeDef& n : graph.node()) {
      VarInfo v;
      if (info(n, &v)) out->push_back(v);
    }
    if (out->empty()) return errors::InvalidArgument("No variables to save: the graph has no VariableV2, Variable or VarHandleOp node");
    return Status::OK();
  }
  std::set<std::string> seen;
  for (const std::string& name : var_names) {
    if (!seen.insert(name).second)
      return errors::InvalidArgument("At least two variables have the same name: ", name);
    auto it = by_name.find(name);
    if (it == by_name.end()) return errors::NotFound("Saver: no variable node named '", name, "' in the graph");
    VarInfo v;
    if (!info(*it->second, &v))
      return errors::InvalidArgument("Saver: node '", name, "' is a ", it->second->op(),
                                     ", not a variable (VariableV2, Variable or VarHandleOp)");
    out->push_back(v);
  }
  return Status::OK();
}

std::string UniqueScope(const proto::GraphDef& graph, const std::string& base) {
  std::set<std::string> taken;
  for (const proto::NodeDef& n : graph.node()) {
    const size_t slash = n.name().find('/');
    taken.insert(slash == std::string::npos ? n.name() : n.name().substr(0, slash));
  }
  if (!taken.count(base)) return base;
  for (int i = 1;; ++i) {
    const std::string s = base + "_" + std::to_string(i);
    if (!taken.count(s)) return s;
  }
}

bool IsV1Shard(const std::string& rest) { return rest.size() == 15 && rest[0] == '-' && rest.substr(6, 4) == "-of-"; }

// Every file of checkpoint `prefix`: V2 (.index, .data-*, and what an
// interrupted save left: .index.pending, temporaries), V1 (prefix,
// prefix-?????-of-?????) and the .meta file (and its temporaries).
std::vector<std::string> CheckpointFiles(const std::string& prefix, bool include_meta) {
  std::vector<std::string> files;
  std::string dir = DirName(prefix);
  const std::string base = BaseName(prefix);
  if (dir.empty()) dir = ".";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, base.size(), base) != 0) continue;
    const std::string rest = name.substr(base.size());
    if (rest.empty() || rest.rfind(".index", 0) == 0 || rest.rfind(".data-", 0) == 0 || IsV1Shard(rest) ||
        (include_meta && (rest == ".meta" || rest.rfind(".meta.tmp", 0) == 0)))
      files.push_back(JoinPath(DirName(prefix), name));
  }
  return files;
}

// The step of a checkpoint named "<base>-<digits>" followed by `*rest`, or -1.
int64_t StepOf(const std::string& name, const std::string& base, std::string* rest) {
  if (name.size() <= base.size() + 1 || name.compare(0, base.size(), base) != 0 || name[base.size()] != '-') return -1;
  size_t i = base.size() + 1;
  int64_t step = 0;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    if (step > (INT64_MAX - 9) / 10) return -1;
    step = step * 10 + (name[i] - '0');
  }
  if (i == base.size() + 1) return -1;
  *rest = name.substr(i);
  return step;
}

}  // namespace

std::vector<std::string> MatchingFiles(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g;
  if (::glob(pattern.c_str(), GLOB_NOSORT | GLOB_NOESCAPE, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

bool CheckpointExists(const std::string& prefix) {
  if (bundle::V2BundleExists(prefix)) return true;
  // A V1 pattern as the V1 Saver reports sharded checkpoints
  // ("<prefix>-?????-of-00002").
  if (prefix.find_first_of("?*[") != std::string::npos) return !MatchingFiles(prefix).empty();
  for (const std::string& f : CheckpointFiles(prefix, false)) {
    // V1: the prefix itself, or one of its shards.
    if (f == prefix || IsV1Shard(f.substr(std::min(f.size(), prefix.size()))))
      return !client_internal::IsDirectory(f);
  }
  return false;
}

Status GetCheckpointState(const std::string& dir, proto::CheckpointState* state, const std::string& latest_filename) {
  state->Clear();
  const std::string path = JoinPath(dir, latest_filename);
  std::string text;
  GR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  std::string error;
  if (!client_internal::ParseTextProto(text, state, &error)) {
    state->Clear();
    return errors::DataLoss("Could not parse checkpoint state file ", path, " as a text CheckpointState (", error, ")");
  }
  if (state->model_checkpoint_path().empty()) {
    state->Clear();
    return errors::InvalidArgument("Invalid checkpoint state loaded from ", dir);
  }
  auto absolute = [&](const std::string& p) { return p.empty() || p[0] == '/' ? p : JoinPath(dir, p); };
  state->set_model_checkpoint_path(absolute(state->model_checkpoint_path()));
  for (std::string& p : *state->mutable_all_model_checkpoint_paths()) p = absolute(p);
  return Status::OK();
}

Status UpdateCheckpointState(const std::string& dir, const std::string& model_checkpoint_path,
                             const std::vector<std::string>& all_paths, bool save_relative_paths,
                             const std::string& latest_filename) {
  const std::string state_path = JoinPath(dir, latest_filename);
  if (model_checkpoint_path == state_path)
    return errors::InvalidArgument("Save path '", model_checkpoint_path,
                                   "' conflicts with path used for checkpoint state.  Please use a different save path.");
  // A relative path is written relative to the (relative) directory even
  // without save_relative_paths, as TensorFlow's generate_checkpoint_state_proto
  // does: readers join state-file paths with the directory.
  const bool relative_dir = !fs::path(dir).is_absolute();
  auto maybe_relative = [&](const std::string& p) {
    if (!save_relative_paths && !(relative_dir && !fs::path(p).is_absolute())) return p;
    std::error_code ec;
    const fs::path rel = fs::relative(p, dir.empty() ? "." : dir, ec);
    return ec || rel.empty() ? p : rel.string();
  };
  proto::CheckpointState state;
  state.set_model_checkpoint_path(maybe_relative(model_checkpoint_path));
  for (const std::string& p : all_paths) state.add_all_model_checkpoint_paths(maybe_relative(p));
  if (all_paths.empty() || all_paths.back() != model_checkpoint_path)
    state.add_all_model_checkpoint_paths(state.model_checkpoint_path());
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(state, &text))
    return errors::Internal("could not print the checkpoint state for ", state_path);
  return client_internal::WriteFileAtomically(state_path, text);
}

std::string LatestCheckpoint(const std::string& dir, const std::string& latest_filename) {
  proto::CheckpointState state;
  if (!GetCheckpointState(dir, &state, latest_filename).ok()) return "";
  return CheckpointExists(state.model_checkpoint_path()) ? state.model_checkpoint_path() : "";
}

Status Saver::Create(Session* session, proto::GraphDef* graph, const SaverOptions& options,
                     std::unique_ptr<Saver>* out) {
  out->reset();
  if (options.max_to_keep < 0) return errors::InvalidArgument("Saver: max_to_keep must be >= 0, got ", options.max_to_keep);
  std::vector<VarInfo> vars;
  GR_RETURN_IF_ERROR(CollectVariables(*graph, options.var_names, &vars));
  for (const VarInfo& v : vars)
    if (v.dtype <= 0 || v.dtype >= 100)
      return errors::InvalidArgument("Saver: variable '", v.node->name(), "' has no valid dtype attr");
  const std::string scope = UniqueScope(*graph, options.name.empty() ? "save" : options.name);

  proto::GraphDef added;
  // The filename tensor: a PlaceholderWithDefault over a Const "model", as
  // TF >= 1.13 writes it, so callers feed the checkpoint prefix.
  AddStringConst(&added, scope + "/filename/input", {"model"}, true);
  proto::NodeDef* filename = AddNode(&added, scope + "/filename", "PlaceholderWithDefault", {scope + "/filename/input"});
  SetType(filename, "dtype", proto::DT_STRING);
  (*filename->mutable_attr())["shape"].mutable_shape();
  proto::NodeDef* cst = AddNode(&added, scope + "/Const", "PlaceholderWithDefault", {scope + "/filename"});
  SetType(cst, "dtype", proto::DT_STRING);
  (*cst->mutable_attr())["shape"].mutable_shape();
  const std::string filename_tensor = scope + "/Const";

  proto::SaverDef def;
  def.set_filename_tensor_name(filename_tensor + ":0");
  def.set_restore_op_name(scope + "/restore_all");
  def.set_max_to_keep(options.max_to_keep);
  def.set_sharded(options.sharded);
  def.set_keep_checkpoint_every_n_hours(static_cast<float>(options.keep_checkpoint_every_n_hours));
  def.set_version(proto::SaverDef::V2);

  int reads = 0, assigns = 0;
  std::string temp_suffix;
  if (!options.sharded) {
    const std::string save = AddSaveV2(&added, scope, "", filename_tensor, vars, &reads);
    proto::NodeDef* dep = AddNode(&added, scope + "/control_dependency", "Identity", {filename_tensor, "^" + save});
    SetType(dep, "T", proto::DT_STRING);
    SetColocation(dep, filename_tensor);
    def.set_save_tensor_name(dep->name() + ":0");
    const std::vector<std::string> assign_nodes = AddRestore(&added, scope, "", filename_tensor, vars, &assigns);
    proto::NodeDef* all = AddNode(&added, scope + "/restore_all", "NoOp");
    for (const std::string& a : assign_nodes) all->add_input("^" + a);
  } else {
    // One shard per device, in order of first appearance.
    std::vector<std::string> devices;
    std::map<std::string, std::vector<VarInfo>> by_device;
    for (const VarInfo& v : vars) {
      if (!by_device.count(v.node->device())) devices.push_back(v.node->device());
      by_device[v.node->device()].push_back(v);
    }
    const int num_shards = static_cast<int>(devices.size());
    temp_suffix = "_temp_" + client_internal::RandomHex();
    AddStringConst(&added, scope + "/StringJoin/inputs_1", {temp_suffix + "/part"}, true);
    proto::NodeDef* join = AddNode(&added, scope + "/StringJoin", "StringJoin", {filename_tensor, scope + "/StringJoin/inputs_1"});
    SetInt(join, "N", 2);
    SetString(join, "separator", "");
    AddInt32Const(&added, scope + "/num_shards", num_shards);
    std::vector<std::string> shard_files;
    std::vector<std::string> restore_shards;
    for (int k = 0; k < num_shards; ++k) {
      const std::string suffix = k ? "_" + std::to_string(k) : "";
      const std::string sharded = scope + "/ShardedFilename" + suffix;
      AddInt32Const(&added, sharded + "/shard", k);
      AddNode(&added, sharded, "ShardedFilename", {join->name(), sharded + "/shard", scope + "/num_shards"});
      const std::string save = AddSaveV2(&added, scope, suffix, sharded, by_device[devices[k]], &reads);
      proto::NodeDef* dep = AddNode(&added, scope + "/control_dependency" + suffix, "Identity", {sharded, "^" + save});
      SetType(dep, "T", proto::DT_STRING);
      SetColocation(dep, sharded);
      shard_files.push_back(dep->name());
      const std::vector<std::string> assign_nodes =
          AddRestore(&added, scope, suffix, filename_tensor, by_device[devices[k]], &assigns);
      proto::NodeDef* rs = AddNode(&added, scope + "/restore_shard" + suffix, "NoOp");
      for (const std::string& a : assign_nodes) rs->add_input("^" + a);
      restore_shards.push_back(rs->name());
    }
    proto::NodeDef* pack = AddNode(&added, scope + "/MergeV2Checkpoints/checkpoint_prefixes", "Pack", shard_files);
    SetInt(pack, "N", num_shards);
    SetType(pack, "T", proto::DT_STRING);
    SetInt(pack, "axis", 0);
    proto::NodeDef* merge = AddNode(&added, scope + "/MergeV2Checkpoints", "MergeV2Checkpoints",
                                    {pack->name(), filename_tensor});
    SetBool(merge, "delete_old_dirs", true);
    proto::NodeDef* id = AddNode(&added, scope + "/Identity", "Identity", {filename_tensor, "^" + merge->name()});
    for (const std::string& f : shard_files) id->add_input("^" + f);
    SetType(id, "T", proto::DT_STRING);
    def.set_save_tensor_name(id->name() + ":0");
    proto::NodeDef* all = AddNode(&added, scope + "/restore_all", "NoOp");
    for (const std::string& r : restore_shards) all->add_input("^" + r);
  }

  GR_RETURN_IF_ERROR(session->Extend(added).WithContext("Saver: adding the " + scope + "/ nodes to the session"));
  for (const proto::NodeDef& n : added.node()) *graph->add_node() = n;

  std::unique_ptr<Saver> saver(new Saver());
  saver->saver_def_ = def;
  saver->options_ = options;
  saver->temp_suffix_ = temp_suffix;
  *saver->meta_graph_.mutable_graph_def() = *graph;
  *saver->meta_graph_.mutable_saver_def() = def;
  FillStrippedOpList(*graph, saver->meta_graph_.mutable_meta_info_def()->mutable_stripped_op_list());
  saver->next_keep_time_ = saver->Now() + options.keep_checkpoint_every_n_hours * 3600.0;
  *out = std::move(saver);
  return Status::OK();
}

Status Saver::FromSaverDef(const proto::SaverDef& saver_def, const proto::MetaGraphDef* meta_graph,
                           SaverOptions options, std::unique_ptr<Saver>* out) {
  out->reset();
  if (saver_def.filename_tensor_name().empty() || saver_def.restore_op_name().empty())
    return errors::InvalidArgument("SaverDef lacks filename_tensor_name or restore_op_name");
  std::unique_ptr<Saver> saver(new Saver());
  saver->saver_def_ = saver_def;
  options.sharded = saver_def.sharded();
  options.max_to_keep = saver_def.max_to_keep();
  options.keep_checkpoint_every_n_hours = saver_def.keep_checkpoint_every_n_hours();
  if (meta_graph != nullptr) {
    saver->meta_graph_ = *meta_graph;
    *saver->meta_graph_.mutable_saver_def() = saver_def;
  } else {
    options.write_meta_graph = false;
  }
  saver->options_ = std::move(options);
  saver->next_keep_time_ = saver->Now() + saver->options_.keep_checkpoint_every_n_hours * 3600.0;
  *out = std::move(saver);
  return Status::OK();
}

double Saver::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> Saver::last_checkpoints() const {
  std::vector<std::string> out;
  for (const auto& [p, t] : last_checkpoints_) out.push_back(p);
  return out;
}

void Saver::RecoverLastCheckpoints(const std::vector<std::string>& paths) {
  const double now = Now();
  for (const std::string& p : paths)
    if (CheckpointExists(p)) last_checkpoints_.emplace_back(p, now);
}

Status Saver::Save(Session* session, const std::string& prefix, int64_t global_step, std::string* path) {
  if (saver_def_.save_tensor_name().empty())
    return errors::FailedPrecondition("SaverDef has no save_tensor_name: this saver can only restore");
  const std::string checkpoint_file = global_step >= 0 ? prefix + "-" + std::to_string(global_step) : prefix;
  const std::string dir = DirName(checkpoint_file);
  if (!dir.empty() && !client_internal::IsDirectory(dir))
    return errors::NotFound("Parent directory of ", checkpoint_file, " doesn't exist, can't save.");
  if (!options_.latest_filename.empty() && checkpoint_file == JoinPath(dir, options_.latest_filename))
    return errors::InvalidArgument("Save path '", checkpoint_file,
                                   "' conflicts with path used for checkpoint state.  Please use a different save path.");
  // The shards' directory. TensorFlow's SaveV2 creates its prefix's parent
  // directory itself; the io plugin's does not (yet), so the Saver makes
  // the one it named, and removes it if the save fails (MergeV2Checkpoints
  // removes it after a good one).
  std::string temp_dir;
  if (!temp_suffix_.empty()) {
    temp_dir = checkpoint_file + temp_suffix_;
    std::error_code ec;
    fs::create_directory(temp_dir, ec);
  }
  std::vector<Tensor> outputs;
  Status saved = session
                     ->Run({{saver_def_.filename_tensor_name(), Tensor::StringScalar(checkpoint_file)}},
                           {saver_def_.save_tensor_name()}, {}, &outputs)
                     .WithContext("Saver: saving " + checkpoint_file);
  if (!temp_dir.empty()) {
    std::error_code ec;
    if (!saved.ok() || fs::exists(temp_dir, ec)) fs::remove_all(temp_dir, ec);
  }
  GR_RETURN_IF_ERROR(saved);
  std::string written = checkpoint_file;
  if (outputs.size() == 1 && outputs[0].dtype() == GR_STRING && outputs[0].NumElements() == 1)
    written = std::string(outputs[0].string_at(0));
  if (options_.write_meta_graph) {
    std::string bytes;
    if (!meta_graph_.SerializeToString(&bytes))
      return errors::InvalidArgument("Saver: the MetaGraphDef for ", written, " does not serialize (over 2 GiB?)");
    GR_RETURN_IF_ERROR(client_internal::WriteFileAtomically(written + ".meta", bytes));
  }
  if (scanned_.insert(prefix).second) AdoptEarlierCheckpoints(prefix, global_step >= 0, written);
  // Record it (moving an existing entry to the end), evict past max_to_keep.
  std::vector<std::string> evicted;
  if (options_.max_to_keep > 0) {
    last_checkpoints_.erase(std::remove_if(last_checkpoints_.begin(), last_checkpoints_.end(),
                                           [&](const auto& e) { return e.first == written; }),
                            last_checkpoints_.end());
    last_checkpoints_.emplace_back(written, Now());
    while (static_cast<int>(last_checkpoints_.size()) > options_.max_to_keep) {
      const auto [old_path, saved_at] = last_checkpoints_.front();
      last_checkpoints_.erase(last_checkpoints_.begin());
      // keep_checkpoint_every_n_hours: one checkpoint per period stays on
      // disk (but leaves the state file's list).
      if (options_.keep_checkpoint_every_n_hours > 0 && saved_at >= next_keep_time_) {
        next_keep_time_ += options_.keep_checkpoint_every_n_hours * 3600.0;
        continue;
      }
      evicted.push_back(old_path);
    }
  }
  if (!options_.latest_filename.empty())
    GR_RETURN_IF_ERROR(UpdateCheckpointState(dir, written, last_checkpoints(), options_.save_relative_paths,
                                             options_.latest_filename));
  for (const std::string& old : evicted) {
    for (const std::string& f : CheckpointFiles(old, true)) {
      std::error_code ec;
      fs::remove(f, ec);  // a file someone else removed is no error
    }
  }
  if (path != nullptr) *path = written;
  return Status::OK();
}

void Saver::AdoptEarlierCheckpoints(const std::string& prefix, bool stepped, const std::string& written) {
  const std::string dir = DirName(prefix);
  const std::string base = BaseName(prefix);
  // A crashed save's .meta temporary or sharded save's _temp_ directory
  // (this save's own are gone by now).
  auto crash_leftover = [](const std::string& rest) {
    return rest.rfind(".meta.tmp", 0) == 0 || rest.rfind("_temp_", 0) == 0;
  };
  std::map<std::string, int64_t> found;  // "<prefix>-<n>" -> n
  std::vector<std::string> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::string rest;
    const int64_t step = stepped ? StepOf(name, base, &rest) : -1;
    if (step < 0) {
      // The state file's temporaries (client_internal::WriteFileAtomically).
      if ((!options_.latest_filename.empty() && name.rfind(options_.latest_filename + ".tmp", 0) == 0) ||
          (!stepped && name.compare(0, base.size(), base) == 0 && crash_leftover(name.substr(base.size()))))
        stale.push_back(JoinPath(dir, name));
      continue;
    }
    if (crash_leftover(rest)) {
      stale.push_back(JoinPath(dir, name));
      continue;
    }
    found[JoinPath(dir, name.substr(0, name.size() - rest.size()))] = step;
  }
  for (const std::string& f : stale) {
    std::error_code e;
    fs::remove_all(f, e);  // best effort: a file someone else removed is no error
  }
  std::set<std::string> tracked;
  for (const auto& entry : last_checkpoints_) tracked.insert(entry.first);
  std::vector<std::tuple<fs::file_time_type, int64_t, std::string>> adopt;
  for (const auto& [p, step] : found) {
    if (p == written) continue;
    // Completes an overwrite a crash interrupted, removes its temporaries.
    bundle::RecoverBundle(p);
    if (options_.max_to_keep == 0 || tracked.count(p) || !bundle::V2BundleExists(p)) continue;
    std::error_code e;
    const fs::file_time_type t = fs::last_write_time(p + ".index", e);
    if (!e) adopt.emplace_back(t, step, p);
  }
  std::sort(adopt.begin(), adopt.end());
  const double now = Now();
  std::vector<std::pair<std::string, double>> earlier;
  for (const auto& a : adopt) earlier.emplace_back(std::get<2>(a), now);
  last_checkpoints_.insert(last_checkpoints_.begin(), earlier.begin(), earlier.end());
}

namespace {
// "node:3" -> ("node", 3); "node" -> ("node", 0).
std::pair<std::string, int> SplitTensorName(const std::string& t) {
  const size_t colon = t.rfind(':');
  if (colon == std::string::npos || colon + 1 == t.size() ||
      t.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return {t, 0};
  if (t.size() - colon - 1 > 9) return {t.substr(0, colon), -1};
  return {t.substr(0, colon), std::stoi(t.substr(colon + 1))};
}

std::vector<std::string> ConstStrings(const proto::NodeDef* n, bool* ok) {
  std::vector<std::string> out;
  *ok = n != nullptr && n->op() == "Const" && n->attr().count("value");
  if (*ok)
    for (const std::string& v : n->attr().at("value").tensor().string_val()) out.push_back(v);
  return out;
}

std::string DimsText(const std::vector<int64_t>& dims) { return bundle::ShapeString(dims); }
}  // namespace

Status Saver::CheckRestorable(const std::string& prefix) const {
  const proto::GraphDef& graph = meta_graph_.graph_def();
  std::map<std::string, const proto::NodeDef*> nodes;
  for (const proto::NodeDef& n : graph.node()) nodes[n.name()] = &n;
  auto node = [&](const std::string& input) -> const proto::NodeDef* {
    auto it = nodes.find(TensorNameToNodeName(input));
    return it == nodes.end() ? nullptr : it->second;
  };
  // The assigns the restore op runs, through its NoOps (restore_shard).
  std::vector<const proto::NodeDef*> assigns;
  std::set<const proto::NodeDef*> seen;
  std::vector<const proto::NodeDef*> todo = {node(saver_def_.restore_op_name())};
  while (!todo.empty()) {
    const proto::NodeDef* n = todo.back();
    todo.pop_back();
    if (n == nullptr || !seen.insert(n).second) continue;
    if (n->op() == "NoOp") {
      for (const std::string& in : n->input()) todo.push_back(node(in));
    } else if ((n->op() == "Assign" || n->op() == "AssignVariableOp") && n->input_size() == 2) {
      assigns.push_back(n);
    }
  }
  if (assigns.empty()) return Status::OK();
  std::unique_ptr<bundle::CheckpointReader> reader;
  // A checkpoint this cannot read fails in the restore kernels, before
  // any assign runs.
  if (!bundle::CheckpointReader::Open(prefix, &reader).ok()) return Status::OK();

  // What each restore node's outputs will hold.
  struct Restored {
    std::string key;
    std::vector<int64_t> dims;
    bool known = false;
  };
  std::map<const proto::NodeDef*, std::vector<Restored>> restores;
  std::vector<std::string> missing, wrong;
  for (const proto::NodeDef* a : assigns) {
    const proto::NodeDef* r = node(a->input(1));
    if (r == nullptr || r->op() != "RestoreV2" || r->input_size() < 3 || restores.count(r)) continue;
    bool names_ok = false, slices_ok = false;
    const std::vector<std::string> names = ConstStrings(node(r->input(1)), &names_ok);
    const std::vector<std::string> specs = ConstStrings(node(r->input(2)), &slices_ok);
    auto dt = r->attr().find("dtypes");
    std::vector<Restored>& out = restores[r];
    if (!names_ok || !slices_ok || dt == r->attr().end() || specs.size() != names.size() ||
        dt->second.list().type_size() != static_cast<int>(names.size()))
      continue;
    out.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      out[i].key = names[i];
      const bundle::EntryInfo* e = reader->Find(names[i]);
      if (e == nullptr) {
        missing.push_back("Key " + names[i] + " not found in checkpoint " + prefix);
        continue;
      }
      const int want = dt->second.list().type(static_cast<int>(i));
      if (e->dtype != want) {
        wrong.push_back("tensor " + names[i] + " is " + bundle::DTypeName(e->dtype) + " in the checkpoint, the restore expects " +
                        bundle::DTypeName(want));
        continue;
      }
      bool has_shape = false;
      std::vector<int64_t> full;
      bundle::TensorSlice slice;
      if (!bundle::ParseShapeAndSlice(specs[i], &has_shape, &full, &slice).ok()) continue;
      if (!has_shape) {
        out[i].dims = e->dims;
        out[i].known = true;
      } else if (full == e->dims && bundle::SliceDims(slice, full, &out[i].dims).ok()) {
        out[i].known = true;
      }
    }
  }
  // Assign's validate_shape compares with the variable's shape: the declared
  // one where it is fully defined.
  for (const proto::NodeDef* a : assigns) {
    if (a->op() != "Assign") continue;
    auto vs = a->attr().find("validate_shape");
    if (vs != a->attr().end() && !vs->second.b()) continue;
    const proto::NodeDef* var = node(a->input(0));
    const auto [restore_name, index] = SplitTensorName(a->input(1));
    auto r = restores.find(node(restore_name));
    if (var == nullptr || (var->op() != "VariableV2" && var->op() != "Variable") || r == restores.end() ||
        index < 0 || static_cast<size_t>(index) >= r->second.size() || !r->second[static_cast<size_t>(index)].known)
      continue;
    auto shape = var->attr().find("shape");
    if (shape == var->attr().end() || shape->second.shape().unknown_rank()) continue;
    std::vector<int64_t> declared;
    bool defined = true;
    for (const auto& d : shape->second.shape().dim()) {
      defined = defined && d.size() >= 0;
      declared.push_back(d.size());
    }
    const Restored& got = r->second[static_cast<size_t>(index)];
    if (defined && declared != got.dims)
      wrong.push_back("variable " + var->name() + " has shape " + DimsText(declared) + " but tensor " + got.key +
                      " in the checkpoint has shape " + DimsText(got.dims));
  }
  if (missing.empty() && wrong.empty()) return Status::OK();
  std::string all;
  for (const auto* list : {&missing, &wrong})
    for (const std::string& m : *list) all += (all.empty() ? "" : "; ") + m;
  all += " (no variable was changed)";
  return missing.empty() ? errors::InvalidArgument(all) : errors::NotFound(all);
}

Status Saver::Restore(Session* session, const std::string& prefix) {
  if (!CheckpointExists(prefix))
    return errors::NotFound("The passed save_path is not a valid checkpoint: ", prefix);
  GR_RETURN_IF_ERROR(CheckRestorable(prefix).WithContext("Saver: restoring from " + prefix));
  std::vector<Tensor> outputs;
  return session
      ->Run({{saver_def_.filename_tensor_name(), Tensor::StringScalar(prefix)}}, {},
            {TensorNameToNodeName(saver_def_.restore_op_name())}, &outputs)
      .WithContext("Saver: restoring from " + prefix);
}

}  // namespace graphrt
