// SavedModelBuilder: writes the TF1 layout (tf_proto_facts.md §7
// "Directory layout") the way TensorFlow's builder does: variables through
// a sharded saver, assets copied and recorded both as asset_file_def and in
// the "saved_model_assets" / "asset_filepaths" collections (TF1 loaders
// read the collection, newer ones asset_file_def), schema version 1.
#include "graphrt/client/saved_model_builder.h"

#include <google/protobuf/text_format.h>

#include <filesystem>

#include "file_util.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/saver.h"
#include "graphrt/core/graph_def_io.h"

namespace graphrt {

namespace fs = std::filesystem;
using client_internal::JoinPath;

SavedModelBuilder::SavedModelBuilder(std::string export_dir) : export_dir_(std::move(export_dir)) {
  while (export_dir_.size() > 1 && export_dir_.back() == '/') export_dir_.pop_back();
}

SavedModelBuilder::~SavedModelBuilder() {
  // An unfinished export leaves nothing behind.
  if (!saved_ && !tmp_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(tmp_dir_, ec);
  }
}

Status SavedModelBuilder::Prepare() {
  if (saved_) return errors::FailedPrecondition("SavedModelBuilder: ", export_dir_, " was already saved");
  std::error_code ec;
  if (fs::exists(export_dir_, ec))
    return errors::AlreadyExists("Export directory already exists, and isn't empty. Please choose a different "
                                 "export directory, or delete all the contents of the specified directory: ",
                                 export_dir_);
  if (!tmp_dir_.empty()) return Status::OK();
  const std::string tmp = export_dir_ + ".tmp-" + client_internal::RandomHex().substr(0, 12);
  if (!fs::create_directories(tmp, ec) || ec)
    return errors::NotFound("SavedModelBuilder: cannot create ", tmp, ": ", ec ? ec.message() : "exists");
  tmp_dir_ = tmp;
  return Status::OK();
}

Status SavedModelBuilder::BuildMetaGraph(const proto::GraphDef& graph, const MetaGraphExport& meta,
                                         const proto::SaverDef* saver_def, proto::MetaGraphDef* out) {
  out->Clear();
  if (meta.tags.empty()) return errors::InvalidArgument("SavedModelBuilder: a MetaGraphDef needs at least one tag");
  const std::set<std::string> tags(meta.tags.begin(), meta.tags.end());
  for (const proto::MetaGraphDef& m : saved_model_.meta_graphs()) {
    const std::set<std::string> have(m.meta_info_def().tags().begin(), m.meta_info_def().tags().end());
    if (have == tags)
      return errors::AlreadyExists("SavedModelBuilder: a MetaGraphDef with tags ", TagSetString(meta.tags),
                                   " was already added");
  }
  proto::MetaGraphDef::MetaInfoDef* info = out->mutable_meta_info_def();
  for (const std::string& t : meta.tags) info->add_tags(t);
  FillStrippedOpList(graph, info->mutable_stripped_op_list());
  *out->mutable_graph_def() = graph;
  if (saver_def != nullptr) *out->mutable_saver_def() = *saver_def;
  for (const auto& [key, sig] : meta.signatures) {
    for (const auto* m : {&sig.inputs(), &sig.outputs()})
      for (const auto& [k, info_] : *m)
        if (info_.encoding_case() == proto::TensorInfo::kName && TensorNameToNodeName(info_.name()).empty())
          return errors::InvalidArgument("signature '", key, "' key '", k, "' names no tensor");
    (*out->mutable_signature_def())[key] = sig;
  }
  for (const auto& [key, c] : meta.collections) (*out->mutable_collection_def())[key] = c;
  if (!meta.main_op.empty()) {
    (*out->mutable_collection_def())[meta.legacy_init_op ? kSavedModelLegacyInitOpKey : kSavedModelMainOpKey]
        .mutable_node_list()
        ->add_value(meta.main_op);
  }
  const std::string assets_dir = JoinPath(tmp_dir_, kSavedModelAssetsDirectory);
  for (const SavedModelAsset& a : meta.assets) {
    const std::string filename = a.filename.empty() ? client_internal::BaseName(a.source_path) : a.filename;
    if (filename.empty() || filename.find('/') != std::string::npos || filename == "." || filename == "..")
      return errors::InvalidArgument("SavedModelBuilder: asset file name '", filename, "' is not a plain file name");
    if (a.tensor_name.empty())
      return errors::InvalidArgument("SavedModelBuilder: asset '", filename, "' names no tensor to feed");
    std::error_code ec;
    fs::create_directories(assets_dir, ec);
    const std::string dest = JoinPath(assets_dir, filename);
    // The same file from an earlier MetaGraphDef is shared.
    if (!fs::exists(dest, ec)) {
      fs::copy_file(a.source_path, dest, ec);
      if (ec) return errors::NotFound("SavedModelBuilder: cannot copy asset ", a.source_path, ": ", ec.message());
    }
    proto::AssetFileDef def;
    def.mutable_tensor_info()->set_name(a.tensor_name);
    def.mutable_tensor_info()->set_dtype(proto::DT_STRING);
    def.set_filename(filename);
    *out->add_asset_file_def() = def;
    auto* any = (*out->mutable_collection_def())[kSavedModelAssetsKey].mutable_any_list()->add_value();
    any->set_type_url(kAssetFileDefTypeUrl);
    def.SerializeToString(any->mutable_value());
    (*out->mutable_collection_def())[kAssetFilepathsCollection].mutable_node_list()->add_value(a.tensor_name);
  }
  return Status::OK();
}

Status SavedModelBuilder::AddMetaGraphAndVariables(Session* session, const proto::GraphDef& graph,
                                                   const MetaGraphExport& meta, const proto::SaverDef* saver_def,
                                                   proto::GraphDef* session_graph) {
  if (have_variables_meta_graph_)
    return errors::FailedPrecondition("SavedModelBuilder: AddMetaGraphAndVariables was already called; use AddMetaGraph");
  GR_RETURN_IF_ERROR(Prepare());
  proto::GraphDef full = graph;
  proto::SaverDef def;
  std::unique_ptr<Saver> saver;
  SaverOptions options;
  options.write_meta_graph = false;  // the SavedModel holds the graph
  options.latest_filename = "";      // and no checkpoint state file
  options.max_to_keep = 0;
  if (saver_def != nullptr) {
    def = *saver_def;
    GR_RETURN_IF_ERROR(Saver::FromSaverDef(def, nullptr, options, &saver));
  } else {
    bool has_variables = false;
    for (const proto::NodeDef& n : graph.node())
      has_variables |= n.op() == "VariableV2" || n.op() == "Variable" || n.op() == "VarHandleOp";
    if (has_variables) {
      options.sharded = true;
      GR_RETURN_IF_ERROR(Saver::Create(session, &full, options, &saver));
      def = saver->saver_def();
    }
  }
  if (saver) {
    const std::string var_dir = JoinPath(tmp_dir_, kSavedModelVariablesDirectory);
    std::error_code ec;
    fs::create_directories(var_dir, ec);
    if (ec) return errors::NotFound("SavedModelBuilder: cannot create ", var_dir, ": ", ec.message());
    GR_RETURN_IF_ERROR(saver->Save(session, JoinPath(var_dir, kSavedModelVariablesFilename)));
  }
  proto::MetaGraphDef m;
  GR_RETURN_IF_ERROR(BuildMetaGraph(full, meta, saver ? &def : nullptr, &m));
  *saved_model_.add_meta_graphs() = std::move(m);
  have_variables_meta_graph_ = true;
  if (session_graph != nullptr) *session_graph = std::move(full);
  return Status::OK();
}

Status SavedModelBuilder::AddMetaGraph(const proto::GraphDef& graph, const MetaGraphExport& meta,
                                       const proto::SaverDef* saver_def) {
  if (!have_variables_meta_graph_)
    return errors::FailedPrecondition("SavedModelBuilder: call AddMetaGraphAndVariables before AddMetaGraph");
  GR_RETURN_IF_ERROR(Prepare());
  proto::MetaGraphDef m;
  GR_RETURN_IF_ERROR(BuildMetaGraph(graph, meta, saver_def, &m));
  *saved_model_.add_meta_graphs() = std::move(m);
  return Status::OK();
}

Status SavedModelBuilder::Save(bool as_text) {
  if (!have_variables_meta_graph_)
    return errors::FailedPrecondition("SavedModelBuilder: nothing to save (call AddMetaGraphAndVariables first)");
  GR_RETURN_IF_ERROR(Prepare());
  saved_model_.set_saved_model_schema_version(1);
  std::string bytes;
  if (as_text) {
    if (!google::protobuf::TextFormat::PrintToString(saved_model_, &bytes))
      return errors::Internal("SavedModelBuilder: cannot print the SavedModel as text");
  } else if (!saved_model_.SerializeToString(&bytes)) {
    return errors::InvalidArgument("SavedModelBuilder: the SavedModel does not serialize (over 2 GiB?)");
  }
  GR_RETURN_IF_ERROR(client_internal::WriteFileAtomically(
      JoinPath(tmp_dir_, as_text ? kSavedModelFilenamePbTxt : kSavedModelFilenamePb), bytes));
  std::error_code ec;
  fs::rename(tmp_dir_, export_dir_, ec);
  if (ec) return errors::AlreadyExists("SavedModelBuilder: cannot move ", tmp_dir_, " to ", export_dir_, ": ", ec.message());
  saved_ = true;
  return Status::OK();
}

}  // namespace graphrt
