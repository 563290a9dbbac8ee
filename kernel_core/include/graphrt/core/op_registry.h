// OpDefs registered by plugins, keyed by op name.
#ifndef GRAPHRT_CORE_OP_REGISTRY_H_
#define GRAPHRT_CORE_OP_REGISTRY_H_

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/proto/op_def.pb.h"

namespace graphrt {

struct OpRegistrationData {
  proto::OpDef op_def;
  GR_ShapeFn shape_fn = nullptr;
  void* shape_fn_user_data = nullptr;
  std::string plugin;  // name of the plugin that first defined it
};

// Parses TensorFlow's REGISTER_OP spec strings into an OpDef
// ("x: T", "T: {float, int32} = DT_FLOAT", "N: int >= 1", "values: N * T").
Status BuildOpDef(const GR_OpSpec& spec, proto::OpDef* out);

class OpRegistry {
 public:
  // nullptr when no plugin defined `op`.
  const OpRegistrationData* LookUp(const std::string& op) const;
  // NotFound naming the op when missing.
  Status LookUpOpDef(const std::string& op, const proto::OpDef** out) const;
  // Sorted by name.
  std::vector<const OpRegistrationData*> ListOps() const;

  // Adds all or nothing. Identical re-definitions are accepted; a different
  // definition under an existing name is ALREADY_EXISTS.
  Status AddAll(std::vector<std::unique_ptr<OpRegistrationData>> ops);
  // Would AddAll succeed? (no change)
  Status CheckAll(const std::vector<std::unique_ptr<OpRegistrationData>>& ops) const;

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<OpRegistrationData>> ops_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_OP_REGISTRY_H_
