// Reading MetaGraphDefs (.meta files) and SavedModels (saved_model.pb /
// saved_model.pbtxt), and choosing a MetaGraphDef by tag set.
#ifndef GRAPHRT_CLIENT_META_GRAPH_H_
#define GRAPHRT_CLIENT_META_GRAPH_H_

#include <set>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/proto/meta_graph.pb.h"
#include "graphrt/proto/saved_model.pb.h"

namespace graphrt {

// TensorFlow's well-known names (tf_proto_facts.md §7).
inline constexpr char kSavedModelFilenamePb[] = "saved_model.pb";
inline constexpr char kSavedModelFilenamePbTxt[] = "saved_model.pbtxt";
inline constexpr char kSavedModelAssetsDirectory[] = "assets";
inline constexpr char kSavedModelAssetsExtraDirectory[] = "assets.extra";
inline constexpr char kSavedModelVariablesDirectory[] = "variables";
inline constexpr char kSavedModelVariablesFilename[] = "variables";
inline constexpr char kSavedModelTagServe[] = "serve";
inline constexpr char kSavedModelTagTrain[] = "train";
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";
inline constexpr char kSavedModelMainOpKey[] = "saved_model_main_op";
inline constexpr char kSavedModelLegacyInitOpKey[] = "legacy_init_op";
inline constexpr char kSavedModelInitOpSignatureKey[] = "__saved_model_init_op";
inline constexpr char kSavedModelAssetsKey[] = "saved_model_assets";
inline constexpr char kAssetFilepathsCollection[] = "asset_filepaths";
inline constexpr char kSaversCollection[] = "savers";
inline constexpr char kAssetFileDefTypeUrl[] = "type.googleapis.com/tensorflow.AssetFileDef";
inline constexpr char kSaverDefTypeUrl[] = "type.googleapis.com/tensorflow.SaverDef";
inline constexpr char kPredictMethodName[] = "tensorflow/serving/predict";
inline constexpr char kClassifyMethodName[] = "tensorflow/serving/classify";
inline constexpr char kRegressMethodName[] = "tensorflow/serving/regress";

// A binary or text proto file: binary first unless the name ends in .pbtxt /
// .txt, then the other format. Errors name the file.
Status ReadMetaGraphDefFromFile(const std::string& path, proto::MetaGraphDef* out);
Status ReadSavedModelFromFile(const std::string& path, proto::SavedModel* out);

// <export_dir>/saved_model.pb, else <export_dir>/saved_model.pbtxt; NotFound
// naming the directory when neither exists.
Status ReadSavedModelFromDirectory(const std::string& export_dir, proto::SavedModel* out);

// True when `dir` holds saved_model.pb or saved_model.pbtxt.
bool MaybeSavedModelDirectory(const std::string& dir);

// The first MetaGraphDef whose tags, as a set, equal `tags` (a superset
// does not match). NotFound listing the available tag sets otherwise.
Status FindMetaGraphDefByTags(const proto::SavedModel& saved_model, const std::set<std::string>& tags,
                              const proto::MetaGraphDef** out);

// "{ serve }", "{ serve, train }".
std::string TagSetString(const std::vector<std::string>& tags);

// The asset feeds TensorFlow's loader makes: from asset_file_def when it is
// non-empty, else from the "saved_model_assets" any_list collection. Each is
// (tensor name, <export_dir>/assets/<filename>).
Status GetAssetFileDefs(const proto::MetaGraphDef& meta_graph, std::vector<proto::AssetFileDef>* out);

// The init op to run after restoring: signature "__saved_model_init_op", else
// collection "saved_model_main_op", else "legacy_init_op"; "" when none.
// A collection with other than one node name is FailedPrecondition.
Status GetInitOp(const proto::MetaGraphDef& meta_graph, const std::string& where, std::string* init_op);

// The registered OpDefs of the op types `graph` uses (sorted by name), as
// TensorFlow's exporters fill MetaInfoDef.stripped_op_list. Unregistered
// ops are left out.
void FillStrippedOpList(const proto::GraphDef& graph, proto::OpList* out);

// "x:0" -> "x"; "^x" -> "x".
std::string TensorNameToNodeName(const std::string& tensor_name);

// A DataType value as TensorFlow names it ("DT_FLOAT", "DT_FLOAT_REF"), or
// the number when the value is not in the enum.
std::string DataTypeEnumName(int dtype);
// "[-1, 1]", "unknown rank", "[]".
std::string ShapeProtoString(const proto::TensorShapeProto& shape);

}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_META_GRAPH_H_
