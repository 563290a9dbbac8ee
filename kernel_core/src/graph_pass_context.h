// The core's side of GR_GraphPassContext: one run of one plugin graph pass.
#ifndef GRAPHRT_CORE_SRC_GRAPH_PASS_CONTEXT_H_
#define GRAPHRT_CORE_SRC_GRAPH_PASS_CONTEXT_H_

#include <map>
#include <string>
#include <unordered_set>

#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/status.h"

struct GR_GraphPassContext {
  const graphrt::GraphPassRegistration* pass = nullptr;
  const graphrt::GraphPassServices* services = nullptr;
  const graphrt::OpRegistry* ops = nullptr;
  const std::unordered_set<std::string>* targets = nullptr;
  // Answers handed out as pointers, kept for the call (std::map: stable).
  std::map<std::string, std::string> device_types;  // device name -> type
  std::map<std::string, std::string> op_defs;       // op -> serialized OpDef
  bool has_output = false;
  std::string output;
  graphrt::Status status;
};

#endif  // GRAPHRT_CORE_SRC_GRAPH_PASS_CONTEXT_H_
