// Reading MetaGraphDefs and SavedModels; tag-set selection; assets and init
// ops as TensorFlow's TF1 loader finds them (tf_proto_facts.md §7).
#include "graphrt/client/meta_graph.h"

#include <algorithm>

#include "file_util.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "graphrt/proto/types.pb.h"

namespace graphrt {

using client_internal::FileExists;
using client_internal::JoinPath;

Status ReadMetaGraphDefFromFile(const std::string& path, proto::MetaGraphDef* out) {
  return client_internal::ReadProtoFromFile(path, out);
}

Status ReadSavedModelFromFile(const std::string& path, proto::SavedModel* out) {
  return client_internal::ReadProtoFromFile(path, out);
}

bool MaybeSavedModelDirectory(const std::string& dir) {
  return FileExists(JoinPath(dir, kSavedModelFilenamePb)) || FileExists(JoinPath(dir, kSavedModelFilenamePbTxt));
}

Status ReadSavedModelFromDirectory(const std::string& export_dir, proto::SavedModel* out) {
  const std::string pb = JoinPath(export_dir, kSavedModelFilenamePb);
  if (FileExists(pb)) return ReadSavedModelFromFile(pb, out);
  const std::string pbtxt = JoinPath(export_dir, kSavedModelFilenamePbTxt);
  if (FileExists(pbtxt)) return ReadSavedModelFromFile(pbtxt, out);
  return errors::NotFound("Could not find SavedModel .pb or .pbtxt at supplied export directory path: ",
                          export_dir);
}

std::string TagSetString(const std::vector<std::string>& tags) {
  std::set<std::string> sorted(tags.begin(), tags.end());
  std::string s = "{ ";
  bool first = true;
  for (const std::string& t : sorted) {
    if (!first) s += ", ";
    s += t;
    first = false;
  }
  return s + (sorted.empty() ? "}" : " }");
}

Status FindMetaGraphDefByTags(const proto::SavedModel& saved_model, const std::set<std::string>& tags,
                              const proto::MetaGraphDef** out) {
  *out = nullptr;
  std::string available;
  for (const proto::MetaGraphDef& m : saved_model.meta_graphs()) {
    const auto& t = m.meta_info_def().tags();
    const std::set<std::string> have(t.begin(), t.end());
    if (have == tags) {
      *out = &m;
      return Status::OK();
    }
    if (!available.empty()) available += ", ";
    available += TagSetString(std::vector<std::string>(t.begin(), t.end()));
  }
  return errors::NotFound("Could not find meta graph def matching supplied tags: ",
                          TagSetString(std::vector<std::string>(tags.begin(), tags.end())),
                          available.empty() ? std::string(" (the SavedModel has no MetaGraphDefs)")
                                            : " (available tag sets: " + available + ")");
}

Status GetAssetFileDefs(const proto::MetaGraphDef& meta_graph, std::vector<proto::AssetFileDef>* out) {
  out->clear();
  if (meta_graph.asset_file_def_size() > 0) {
    out->assign(meta_graph.asset_file_def().begin(), meta_graph.asset_file_def().end());
    return Status::OK();
  }
  auto it = meta_graph.collection_def().find(kSavedModelAssetsKey);
  if (it == meta_graph.collection_def().end()) return Status::OK();
  if (it->second.kind_case() != proto::CollectionDef::kAnyList)
    return errors::InvalidArgument("collection '", kSavedModelAssetsKey, "' is not an any_list");
  for (const auto& any : it->second.any_list().value()) {
    proto::AssetFileDef def;
    // The type_url names TensorFlow's message; ours has the same wire form.
    if (!def.ParseFromString(any.value()))
      return errors::DataLoss("collection '", kSavedModelAssetsKey, "' holds an AssetFileDef that does not parse (",
                              any.type_url(), ")");
    out->push_back(std::move(def));
  }
  return Status::OK();
}

Status GetInitOp(const proto::MetaGraphDef& meta_graph, const std::string& where, std::string* init_op) {
  init_op->clear();
  auto sig = meta_graph.signature_def().find(kSavedModelInitOpSignatureKey);
  if (sig != meta_graph.signature_def().end()) {
    for (const auto& [key, info] : sig->second.outputs()) {
      *init_op = TensorNameToNodeName(info.name());
      return Status::OK();
    }
  }
  for (const char* key : {kSavedModelMainOpKey, kSavedModelLegacyInitOpKey}) {
    auto it = meta_graph.collection_def().find(key);
    if (it == meta_graph.collection_def().end()) continue;
    if (it->second.kind_case() != proto::CollectionDef::kNodeList || it->second.node_list().value_size() != 1)
      return errors::FailedPrecondition("Expected exactly one main op in : ", where, " (collection '", key, "')");
    *init_op = TensorNameToNodeName(it->second.node_list().value(0));
    return Status::OK();
  }
  return Status::OK();
}

void FillStrippedOpList(const proto::GraphDef& graph, proto::OpList* out) {
  out->Clear();
  std::set<std::string> ops;
  for (const proto::NodeDef& n : graph.node()) ops.insert(n.op());
  for (const auto& f : graph.library().function())
    for (const proto::NodeDef& n : f.node_def()) ops.insert(n.op());
  const OpRegistry& registry = Runtime::Global().ops();
  for (const std::string& op : ops) {
    if (const OpRegistrationData* d = registry.LookUp(op)) *out->add_op() = d->op_def;
  }
}

std::string TensorNameToNodeName(const std::string& tensor_name) {
  std::string s = tensor_name;
  if (!s.empty() && s[0] == '^') s.erase(0, 1);
  const size_t colon = s.rfind(':');
  if (colon != std::string::npos && colon + 1 < s.size() &&
      std::all_of(s.begin() + colon + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    s.resize(colon);
  return s;
}

std::string DataTypeEnumName(int dtype) {
  const auto* d = proto::DataType_descriptor()->FindValueByNumber(dtype);
  return d ? d->name() : std::to_string(dtype);
}

std::string ShapeProtoString(const proto::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "unknown rank";
  std::string s = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape.dim(i).size());
  }
  return s + "]";
}

}  // namespace graphrt
