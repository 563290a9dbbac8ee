// LoadSavedModel / LoadMetaGraphAndCheckpoint and signature runs, in the
// order of TensorFlow's TF1 loader (tf_proto_facts.md §7 "TF1 loader").
#include <algorithm>
#include <map>

#include "file_util.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/client/saver.h"

namespace graphrt {

using client_internal::FileExists;
using client_internal::JoinPath;

namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

Status AssetFeeds(const proto::MetaGraphDef& meta, const std::string& export_dir, Feeds* feeds) {
  std::vector<proto::AssetFileDef> assets;
  GR_RETURN_IF_ERROR(GetAssetFileDefs(meta, &assets));
  const std::string assets_dir = JoinPath(export_dir, kSavedModelAssetsDirectory);
  for (const proto::AssetFileDef& a : assets) {
    if (a.tensor_info().name().empty())
      return errors::InvalidArgument("an AssetFileDef for '", a.filename(), "' names no tensor");
    feeds->emplace_back(a.tensor_info().name(), Tensor::StringScalar(JoinPath(assets_dir, a.filename())));
  }
  return Status::OK();
}

Status RunInitOp(Session* session, const proto::RunOptions& run_options, const proto::MetaGraphDef& meta,
                 const std::string& where, const Feeds& feeds) {
  std::string init_op;
  GR_RETURN_IF_ERROR(GetInitOp(meta, where, &init_op));
  if (init_op.empty()) return Status::OK();
  std::vector<Tensor> outputs;
  return session->Run(run_options, feeds, {}, {init_op}, &outputs, nullptr)
      .WithContext("running the init op '" + init_op + "'");
}

std::string KeyList(const google::protobuf::Map<std::string, proto::TensorInfo>& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

Status TensorNameOf(const std::string& signature, const char* what, const std::string& key,
                    const google::protobuf::Map<std::string, proto::TensorInfo>& m, std::string* name) {
  auto it = m.find(key);
  if (it == m.end())
    return errors::InvalidArgument("signature '", signature, "' has no ", what, " '", key, "' (its ", what,
                                   "s: ", KeyList(m), ")");
  if (it->second.encoding_case() != proto::TensorInfo::kName)
    return errors::Unimplemented("signature '", signature, "' ", what, " '", key,
                                 "' is a sparse or composite tensor; only dense tensors are supported");
  *name = it->second.name();
  return Status::OK();
}

void Reset(SavedModelBundle* bundle) {
  if (bundle->session) bundle->session->Close().IgnoreError();
  bundle->session.reset();
  bundle->meta_graph_def.Clear();
  bundle->source.clear();
}

}  // namespace

Status SavedModelBundle::GetSignature(const std::string& key, const proto::SignatureDef** out) const {
  *out = nullptr;
  const auto& sigs = meta_graph_def.signature_def();
  auto it = sigs.find(key);
  if (it != sigs.end()) {
    *out = &it->second;
    return Status::OK();
  }
  if (sigs.empty())
    return errors::NotFound("signature '", key, "' not found: the MetaGraphDef loaded from ", source,
                            " has no signatures (run its tensors by name instead)");
  std::vector<std::string> keys;
  for (const auto& [k, v] : sigs) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::string list;
  for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
  return errors::NotFound("signature '", key, "' not found in the MetaGraphDef loaded from ", source,
                          " (available signatures: ", list, ")");
}

Status SavedModelBundle::RunSignature(const std::string& key, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                      const std::vector<std::string>& output_keys, std::vector<Tensor>* outputs,
                                      std::vector<std::string>* output_keys_used) const {
  outputs->clear();
  if (!session) return errors::FailedPrecondition("RunSignature: no model is loaded");
  const proto::SignatureDef* sig;
  GR_RETURN_IF_ERROR(GetSignature(key, &sig));
  Feeds feeds;
  for (const auto& [input_key, value] : inputs) {
    std::string name;
    GR_RETURN_IF_ERROR(TensorNameOf(key, "input", input_key, sig->inputs(), &name));
    feeds.emplace_back(name, value);
  }
  // SignatureDef.defaults: values for inputs the caller did not feed.
  for (const auto& [input_key, proto_value] : sig->defaults()) {
    // clang 14 cannot capture a structured binding in a lambda (the
    // sanitizer build): compare through a plain reference.
    const std::string& wanted = input_key;
    if (std::any_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in.first == wanted; })) continue;
    std::string name;
    GR_RETURN_IF_ERROR(TensorNameOf(key, "input", input_key, sig->inputs(), &name));
    Tensor value;
    // In the session's memory: a ~60-byte default can describe gigabytes.
    GR_RETURN_IF_ERROR(session->TensorFromProto(proto_value, &value)
                           .WithContext("signature '" + key + "' default for input '" + input_key + "'"));
    feeds.emplace_back(name, std::move(value));
  }
  std::vector<std::string> keys = output_keys;
  if (keys.empty()) {
    for (const auto& [k, v] : sig->outputs()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
  }
  std::vector<std::string> fetches;
  for (const std::string& k : keys) {
    std::string name;
    GR_RETURN_IF_ERROR(TensorNameOf(key, "output", k, sig->outputs(), &name));
    fetches.push_back(name);
  }
  if (output_keys_used != nullptr) *output_keys_used = keys;
  return session->Run(feeds, fetches, {}, outputs).WithContext("running signature '" + key + "'");
}

Status LoadSavedModel(const SessionOptions& session_options, const std::string& export_dir,
                      const std::set<std::string>& tags, SavedModelBundle* bundle) {
  return LoadSavedModel(session_options, proto::RunOptions(), export_dir, tags, bundle);
}

Status LoadSavedModel(const SessionOptions& session_options, const proto::RunOptions& run_options,
                      const std::string& export_dir, const std::set<std::string>& tags, SavedModelBundle* bundle) {
  Reset(bundle);
  Status s = StatusFromExceptions("LoadSavedModel", [&]() -> Status {
    proto::SavedModel saved_model;
    GR_RETURN_IF_ERROR(ReadSavedModelFromDirectory(export_dir, &saved_model));
    const proto::MetaGraphDef* meta;
    GR_RETURN_IF_ERROR(FindMetaGraphDefByTags(saved_model, tags, &meta));
    bundle->meta_graph_def = *meta;
    bundle->source = export_dir;
    GR_RETURN_IF_ERROR(NewSession(session_options, &bundle->session));
    GR_RETURN_IF_ERROR(bundle->session->Create(meta->graph_def()));
    Feeds asset_feeds;
    GR_RETURN_IF_ERROR(AssetFeeds(*meta, export_dir, &asset_feeds));
    const std::string variables_prefix =
        JoinPath(JoinPath(export_dir, kSavedModelVariablesDirectory), kSavedModelVariablesFilename);
    // No variables index: a model without variables; nothing to restore.
    if (FileExists(variables_prefix + ".index")) {
      const proto::SaverDef& saver = meta->saver_def();
      if (saver.restore_op_name().empty() || saver.filename_tensor_name().empty())
        return errors::FailedPrecondition(export_dir, " has variables but its MetaGraphDef has no saver_def to restore them");
      Feeds feeds = asset_feeds;
      feeds.emplace_back(saver.filename_tensor_name(), Tensor::StringScalar(variables_prefix));
      std::vector<Tensor> outputs;
      GR_RETURN_IF_ERROR(bundle->session
                             ->Run(run_options, feeds, {}, {TensorNameToNodeName(saver.restore_op_name())}, &outputs,
                                   nullptr)
                             .WithContext("restoring the variables from " + variables_prefix));
    }
    return RunInitOp(bundle->session.get(), run_options, *meta, export_dir, asset_feeds);
  });
  if (!s.ok()) {
    Reset(bundle);
    return s.WithContext("loading SavedModel " + export_dir);
  }
  return Status::OK();
}

Status LoadMetaGraphAndCheckpoint(const SessionOptions& session_options, const std::string& meta_graph_path,
                                  const std::string& checkpoint_prefix, SavedModelBundle* bundle) {
  Reset(bundle);
  Status s = StatusFromExceptions("LoadMetaGraphAndCheckpoint", [&]() -> Status {
    GR_RETURN_IF_ERROR(ReadMetaGraphDefFromFile(meta_graph_path, &bundle->meta_graph_def));
    bundle->source = meta_graph_path;
    GR_RETURN_IF_ERROR(NewSession(session_options, &bundle->session));
    GR_RETURN_IF_ERROR(bundle->session->Create(bundle->meta_graph_def.graph_def()));
    if (checkpoint_prefix.empty()) return Status::OK();
    // import_meta_graph's order: the file's saver_def, else the "savers"
    // collection, else a Saver over every variable of the graph.
    proto::SaverDef saver_def = bundle->meta_graph_def.saver_def();
    if (saver_def.restore_op_name().empty()) {
      auto it = bundle->meta_graph_def.collection_def().find(kSaversCollection);
      if (it != bundle->meta_graph_def.collection_def().end() &&
          it->second.kind_case() == proto::CollectionDef::kBytesList && it->second.bytes_list().value_size() > 0 &&
          !saver_def.ParseFromString(it->second.bytes_list().value(0)))
        return errors::DataLoss("the '", kSaversCollection, "' collection holds a SaverDef that does not parse");
    }
    std::unique_ptr<Saver> saver;
    if (!saver_def.restore_op_name().empty()) {
      GR_RETURN_IF_ERROR(Saver::FromSaverDef(saver_def, &bundle->meta_graph_def, SaverOptions(), &saver));
    } else {
      SaverOptions options;
      GR_RETURN_IF_ERROR(Saver::Create(bundle->session.get(), bundle->meta_graph_def.mutable_graph_def(), options, &saver));
      *bundle->meta_graph_def.mutable_saver_def() = saver->saver_def();
    }
    return saver->Restore(bundle->session.get(), checkpoint_prefix);
  });
  if (!s.ok()) {
    Reset(bundle);
    return s.WithContext("loading " + meta_graph_path);
  }
  return Status::OK();
}

bool MaybeSessionBundleDirectory(const std::string& dir) { return FileExists(JoinPath(dir, "export.meta")); }

Status LoadSessionBundle(const SessionOptions& session_options, const std::string& export_dir,
                         SavedModelBundle* bundle) {
  const std::string meta = JoinPath(export_dir, "export.meta");
  if (!FileExists(meta)) return errors::NotFound("No SessionBundle at ", export_dir, ": ", meta, " does not exist");
  std::string prefix = JoinPath(export_dir, "export");
  // The prefix itself only when it is a V2 bundle or a whole V1 file; V1
  // shards are named by their files (the restore kernel gets a real name).
  if (!FileExists(prefix + ".index") && !(FileExists(prefix) && !client_internal::IsDirectory(prefix))) {
    // V1 shards; one shard is named as itself, so the restore kernel need
    // not expand patterns.
    const std::vector<std::string> shards = MatchingFiles(prefix + "-?????-of-?????");
    if (shards.empty())
      return errors::NotFound("No checkpoint beside ", meta, " (looked for ", prefix, ".index, ", prefix, " and ",
                              prefix, "-?????-of-?????)");
    prefix = shards.size() == 1 ? shards[0] : prefix + "-?????-of-?????";
  }
  GR_RETURN_IF_ERROR(LoadMetaGraphAndCheckpoint(session_options, meta, prefix, bundle));
  // SessionBundle's own init op and assets (collections "serving_init_op",
  // node_list, and "serving_assets", any_list of AssetFile, whose wire form
  // {tensor_binding {tensor_name #1} #1, filename #2} is AssetFileDef's).
  Status s = StatusFromExceptions("LoadSessionBundle", [&]() -> Status {
    const auto& collections = bundle->meta_graph_def.collection_def();
    auto init = collections.find("serving_init_op");
    if (init == collections.end()) return Status::OK();
    if (init->second.kind_case() != proto::CollectionDef::kNodeList || init->second.node_list().value_size() != 1)
      return errors::FailedPrecondition("Expected exactly one serving init op in : ", export_dir);
    Feeds feeds;
    auto assets = collections.find("serving_assets");
    if (assets != collections.end() && assets->second.kind_case() == proto::CollectionDef::kAnyList) {
      for (const auto& any : assets->second.any_list().value()) {
        proto::AssetFileDef def;
        if (!def.ParseFromString(any.value()) || def.tensor_info().name().empty())
          return errors::DataLoss("collection 'serving_assets' holds an AssetFile that does not parse");
        feeds.emplace_back(def.tensor_info().name(),
                           Tensor::StringScalar(JoinPath(JoinPath(export_dir, kSavedModelAssetsDirectory), def.filename())));
      }
    }
    const std::string op = TensorNameToNodeName(init->second.node_list().value(0));
    std::vector<Tensor> outputs;
    return bundle->session->Run(feeds, {}, {op}, &outputs).WithContext("running the init op '" + op + "'");
  });
  if (!s.ok()) {
    Reset(bundle);
    return s.WithContext("loading SessionBundle " + export_dir);
  }
  return Status::OK();
}

}  // namespace graphrt
