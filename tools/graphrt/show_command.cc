// `graphrt show`: what a SavedModel (or a .meta file) holds, in the layout
// of `saved_model_cli show --all`: each tag set, its signatures with their
// inputs and outputs (dtype, shape, tensor name) and method names; then
// what the loader will do (variables to restore, assets, init op).
#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/client/saver.h"
#include "model_source.h"

namespace graphrt {
namespace cli {
namespace {

const char kShowUsage[] =
    "usage: graphrt show PATH [--tag TAGS] [--signature KEY]\n"
    "\n"
    "Shows a SavedModel directory (saved_model.pb or .pbtxt), a SessionBundle\n"
    "directory (export.meta) or a MetaGraphDef (.meta) file: every tag set, its signatures (inputs and outputs with dtype,\n"
    "shape and tensor name; method name), the saver, assets and init op.\n"
    "--tag (comma-separated, e.g. serve,train) and --signature narrow it down.\n"
    "\n"
    "examples:\n"
    "  graphrt show saved_model_half_plus_two_cpu/00000123\n"
    "  graphrt show export.meta --signature serving_default\n";

// saved_model_cli's spelling: "(-1, 1)", "()", "unknown_rank".
std::string ShapeText(const proto::TensorShapeProto& s) {
  if (s.unknown_rank()) return "unknown_rank";
  std::string out = "(";
  for (int i = 0; i < s.dim_size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s.dim(i).size());
  }
  if (s.dim_size() == 1) out += ",";
  return out + ")";
}

void PrintTensorInfos(const char* which, const google::protobuf::Map<std::string, proto::TensorInfo>& m) {
  std::cout << "  The given SavedModel SignatureDef contains the following " << which << "(s):\n";
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  const std::string prefix = std::string(which) + "s";
  for (const std::string& k : keys) {
    const proto::TensorInfo& info = m.at(k);
    std::cout << "    " << prefix << "['" << k << "'] tensor_info:\n"
              << "        dtype: " << DataTypeEnumName(info.dtype()) << "\n"
              << "        shape: " << ShapeText(info.tensor_shape()) << "\n";
    if (info.encoding_case() == proto::TensorInfo::kCooSparse) {
      std::cout << "        sparse: values " << info.coo_sparse().values_tensor_name() << ", indices "
                << info.coo_sparse().indices_tensor_name() << ", dense_shape "
                << info.coo_sparse().dense_shape_tensor_name() << "\n";
    } else {
      std::cout << "        name: " << info.name() << "\n";
    }
  }
}

void ShowMetaGraph(const proto::MetaGraphDef& meta, const std::string& signature_filter) {
  const auto& tags = meta.meta_info_def().tags();
  std::string tag_set;
  for (const std::string& t : tags) tag_set += (tag_set.empty() ? "" : ", ") + t;
  const auto& sigs = meta.signature_def();
  if (!signature_filter.empty() && !sigs.count(signature_filter)) {
    std::string list;
    for (const auto& [k, v] : sigs) list += (list.empty() ? "" : ", ") + k;
    throw CliError("--signature '" + signature_filter + "': no such signature in tag-set '" + tag_set +
                   "' (available: " + (list.empty() ? "none" : list) + ")");
  }
  // A .meta file's MetaGraphDef usually has no tags.
  std::cout << (tags.empty() ? std::string("MetaGraphDef (no tag-set)") : "MetaGraphDef with tag-set: '" + tag_set + "'")
            << " contains the following SignatureDefs:\n";
  if (sigs.empty()) std::cout << "\n(no signatures: run its tensors by name)\n";
  std::vector<std::string> keys;
  for (const auto& [k, v] : sigs) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const std::string& k : keys) {
    if (!signature_filter.empty() && k != signature_filter) continue;
    const proto::SignatureDef& sig = sigs.at(k);
    std::cout << "\nsignature_def['" << k << "']:\n";
    PrintTensorInfos("input", sig.inputs());
    PrintTensorInfos("output", sig.outputs());
    std::cout << "  Method name is: " << sig.method_name() << "\n";
  }
  // What loading it does, beyond saved_model_cli's listing.
  std::cout << "\n  graph: " << meta.graph_def().node_size() << " nodes";
  if (!meta.meta_info_def().tensorflow_version().empty())
    std::cout << ", written by TensorFlow " << meta.meta_info_def().tensorflow_version();
  std::cout << "\n";
  if (!meta.saver_def().restore_op_name().empty()) {
    const proto::SaverDef& s = meta.saver_def();
    std::cout << "  saver: feed " << s.filename_tensor_name() << ", restore " << s.restore_op_name() << ", save "
              << s.save_tensor_name() << (s.sharded() ? " (sharded)" : "") << "\n";
  }
  std::vector<proto::AssetFileDef> assets;
  if (GetAssetFileDefs(meta, &assets).ok())
    for (const auto& a : assets)
      std::cout << "  asset: " << a.filename() << " -> " << a.tensor_info().name() << "\n";
  std::string init_op;
  if (GetInitOp(meta, "", &init_op).ok() && !init_op.empty()) std::cout << "  init op: " << init_op << "\n";
}

}  // namespace

int ShowCommand(const std::vector<std::string>& args) {
  po::options_description visible("options");
  AddModelOptions(&visible, /*for_run=*/false);
  visible.add_options()("all", po::bool_switch(),
                        "show every tag set and signature (the default; saved_model_cli's --all)");
  po::options_description hidden;
  hidden.add_options()("path", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("path", 1);
  po::variables_map vm;
  if (!ParseArgs("show", args, visible, hidden, pos, kShowUsage, &vm)) return 0;
  if (!vm.count("path")) throw UsageError("show: missing PATH (see 'graphrt show --help')");
  if (vm["all"].as<bool>() && (vm.count("tag") || vm.count("signature")))
    throw UsageError("show: --all shows every tag set and signature; leave out --tag and --signature");
  const std::string path = vm["path"].as<std::string>();
  const std::string signature = vm.count("signature") ? vm["signature"].as<std::string>() : "";
  const bool tag_given = vm.count("tag") > 0;
  const std::set<std::string> tags = ParseTags(tag_given ? vm["tag"].as<std::string>() : "");

  const bool session_bundle = !IsMetaGraphFile(path) && !MaybeSavedModelDirectory(path) &&
                              MaybeSessionBundleDirectory(path);
  if (IsMetaGraphFile(path) || session_bundle) {
    proto::MetaGraphDef meta;
    Check(ReadMetaGraphDefFromFile(session_bundle ? path + "/export.meta" : path, &meta));
    ShowMetaGraph(meta, signature);
    return 0;
  }
  proto::SavedModel saved_model;
  Check(ReadSavedModelFromDirectory(path, &saved_model));
  if (tag_given) {
    const proto::MetaGraphDef* meta;
    Check(FindMetaGraphDefByTags(saved_model, tags, &meta));
    ShowMetaGraph(*meta, signature);
  } else {
    if (saved_model.meta_graphs_size() == 0) throw CliError(path + ": the SavedModel has no MetaGraphDefs");
    std::cout << "The given SavedModel contains the following tag-sets:\n";
    for (const auto& m : saved_model.meta_graphs()) {
      std::string tag_set;
      for (const std::string& t : m.meta_info_def().tags()) tag_set += (tag_set.empty() ? "" : ", ") + t;
      std::cout << "'" << tag_set << "'\n";
    }
    bool shown = false;
    for (const auto& m : saved_model.meta_graphs()) {
      // With --signature and no --tag: the tag sets that have it.
      if (!signature.empty() && !m.signature_def().count(signature)) continue;
      std::cout << "\n";
      ShowMetaGraph(m, signature);
      shown = true;
    }
    if (!shown && !signature.empty())
      throw CliError("--signature '" + signature + "': no tag-set of " + path + " has that signature");
  }
  const std::string variables = path + "/variables/variables";
  std::cout << "\nvariables: "
            << (CheckpointExists(variables) ? variables : std::string("none (nothing to restore)")) << "\n";
  return 0;
}

}  // namespace cli
}  // namespace graphrt
