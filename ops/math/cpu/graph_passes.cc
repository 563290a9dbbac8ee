// The math family's device graph passes for CPU: MatMul + BiasAdd
// [+ activation] -> _FusedMatMul (one pass over the product while it is
// hot in cache), and the constant-weights hint the packed-B matmul kernels
// use. Orders: layout 10, fusions 20, conv+pool 30, weights hints 40.
#include <graphrt/sdk/graph_pass.h>

#include "common/graph_pass/fusion.h"

namespace graphrt {
namespace sdk {
namespace {

Status FuseMatMul(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, [](passes::PassEnv& env, passes::Graph* g) {
    // The activations _FusedMatMul takes after its BiasAdd (TensorFlow's
    // remapper patterns).
    return passes::FuseBiasActivation(env, g, DEVICE_CPU, "MatMul", "_FusedMatMul",
                                      {"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"},
                                      /*same_data_format=*/false);
  });
}

Status MarkMatMulWeights(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, [](passes::PassEnv& env, passes::Graph* g) {
    return passes::MarkConstantWeights(env, g, DEVICE_CPU, {"MatMul", "_FusedMatMul"});
  });
}

}  // namespace

REGISTER_GRAPH_PASS(GraphPass("math.fuse_matmul_bias_activation").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_REMAPPING).Order(20),
                    FuseMatMul);
REGISTER_GRAPH_PASS(GraphPass("math.matmul_constant_weights").Device(DEVICE_CPU).Order(40), MarkMatMulWeights);

}  // namespace sdk
}  // namespace graphrt
