// The nn family's device graph passes for CPU besides the layout pass
// (layout_pass.cc): Conv2D + BiasAdd [+ activation] -> _FusedConv2D
// (oneDNN post-ops: one pass over the output while it is hot), then a
// _FusedConv2D that alone feeds a MaxPool / AvgPool -> _FusedConv2DPool
// (the kernel pools rows while they are in cache), ReluGrad(MaxPoolGrad)
// -> _MaxPoolGradReluGrad (one pass over the gradient instead of two), and
// the constant-weights hint the convolution kernels use. Orders: layout 10, fusions 20,
// conv+pool 30, weights hints 40 (the math family's passes share them).
#include <graphrt/sdk/graph_pass.h>

#include "common/graph_pass/fusion.h"

namespace graphrt {
namespace sdk {
namespace {

using passes::Graph;
using passes::Node;
using passes::PassEnv;
namespace pp = passes::pp;

Status FuseConv(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, [](PassEnv& env, Graph* g) {
    // The activations _FusedConv2D takes after its BiasAdd (TensorFlow's
    // remapper patterns).
    return passes::FuseBiasActivation(env, g, DEVICE_CPU, "Conv2D", "_FusedConv2D",
                                      {"Relu", "Relu6", "Elu", "LeakyRelu"}, /*same_data_format=*/true);
  });
}

std::string DataFormat(const Node& n) {
  const std::string f = passes::StringAttr(n, "data_format");
  return f.empty() ? "NHWC" : f;
}

// A 4-value pooling list (ksize / strides) that leaves the batch and channel
// dims alone.
bool SpatialPoolList(const Node& pool, const char* name, const std::string& format) {
  const pp::AttrValue* v = pool.attr(name);
  if (v == nullptr || v->list().i_size() != 4) return false;
  const int c = format == "NCHW" ? 1 : 3;
  return v->list().i(0) == 1 && v->list().i(c) == 1;
}

// _FusedConv2D -> MaxPool / AvgPool (SAME or VALID, spatial, same format).
bool FuseConvPoolNodes(PassEnv& env, Graph* g) {
  const pp::OpDef* fused_op = env.OpDef("_FusedConv2DPool");
  if (fused_op == nullptr) return false;
  bool changed = false;
  for (int id : g->TopologicalIds()) {
    Node* conv = g->FindNodeId(id);
    if (conv == nullptr || conv->op() != "_FusedConv2D" || env.DeviceType(conv->device()) != DEVICE_CPU) continue;
    Node* pool = passes::SoleConsumer(env, *conv);
    if (pool == nullptr || (pool->op() != "MaxPool" && pool->op() != "AvgPool") || pool->device() != conv->device() ||
        passes::TypeAttr(*pool) != passes::TypeAttr(*conv))
      continue;
    const std::string format = DataFormat(*conv);
    const std::string padding = passes::StringAttr(*pool, "padding");
    if (DataFormat(*pool) != format || (padding != "SAME" && padding != "VALID") ||
        !SpatialPoolList(*pool, "ksize", format) || !SpatialPoolList(*pool, "strides", format))
      continue;
    pp::NodeDef def;
    def.set_name(pool->name());
    def.set_op(fused_op->name());
    def.set_device(conv->device());
    passes::CopyDeclaredAttrs(*conv, *fused_op, &def);
    auto& attrs = *def.mutable_attr();
    attrs["pool_op"].set_s(pool->op());
    attrs["pool_ksize"] = *pool->attr("ksize");
    attrs["pool_strides"] = *pool->attr("strides");
    attrs["pool_padding"].set_s(padding);
    if (!env.KernelAvailable(def, conv->device())) continue;
    std::vector<passes::Endpoint> data_in;
    if (!passes::DataInputs(*conv, conv->num_inputs(), &data_in)) continue;
    passes::ReplaceNodes({conv, pool}, pool, data_in, std::move(def), g);
    changed = true;
  }
  return changed;
}

Status FuseConvPool(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, FuseConvPoolNodes);
}

// ReluGrad(MaxPoolGrad(x, y, grad), x) -> _MaxPoolGradReluGrad(x, y, grad):
// the gradient of relu -> max_pool as tf.gradients builds it (ReluGrad
// takes the Relu's output, which is what was pooled).
bool FusePoolGradReluNodes(PassEnv& env, Graph* g) {
  const pp::OpDef* fused_op = env.OpDef("_MaxPoolGradReluGrad");
  if (fused_op == nullptr) return false;
  bool changed = false;
  for (int id : g->TopologicalIds()) {
    Node* pool_grad = g->FindNodeId(id);
    if (pool_grad == nullptr || pool_grad->op() != "MaxPoolGrad" ||
        env.DeviceType(pool_grad->device()) != DEVICE_CPU)
      continue;
    Node* relu_grad = passes::SoleConsumer(env, *pool_grad);
    if (relu_grad == nullptr || relu_grad->op() != "ReluGrad" || relu_grad->device() != pool_grad->device() ||
        passes::TypeAttr(*relu_grad) != passes::TypeAttr(*pool_grad))
      continue;
    const passes::Edge* features = relu_grad->input_edge(1);
    const passes::Edge* pooled = pool_grad->input_edge(0);
    if (features == nullptr || pooled == nullptr || features->src() != pooled->src() ||
        features->src_output() != pooled->src_output())
      continue;
    pp::NodeDef def;
    def.set_name(relu_grad->name());
    def.set_op(fused_op->name());
    def.set_device(pool_grad->device());
    passes::CopyDeclaredAttrs(*pool_grad, *fused_op, &def);
    if (!env.KernelAvailable(def, pool_grad->device())) continue;
    std::vector<passes::Endpoint> data_in;
    if (!passes::DataInputs(*pool_grad, 3, &data_in)) continue;
    passes::ReplaceNodes({pool_grad, relu_grad}, relu_grad, data_in, std::move(def), g);
    changed = true;
  }
  return changed;
}

Status FusePoolGradRelu(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, FusePoolGradReluNodes);
}

Status MarkConvWeights(GraphPassContext& ctx, const std::string& in, std::string* out, bool* changed) {
  return passes::RunRewrite(ctx, in, out, changed, [](PassEnv& env, Graph* g) {
    return passes::MarkConstantWeights(env, g, DEVICE_CPU,
                                       {"Conv2D", "_FusedConv2D", "_FusedConv2DPool", "DepthwiseConv2dNative"});
  });
}

}  // namespace

REGISTER_GRAPH_PASS(GraphPass("nn.fuse_conv_bias_activation").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_REMAPPING).Order(20),
                    FuseConv);
REGISTER_GRAPH_PASS(GraphPass("nn.fuse_conv_pool").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_REMAPPING).Order(30),
                    FuseConvPool);
REGISTER_GRAPH_PASS(GraphPass("nn.fuse_pool_grad_relu").Device(DEVICE_CPU).Toggle(GR_PASS_TOGGLE_REMAPPING).Order(20),
                    FusePoolGradRelu);
REGISTER_GRAPH_PASS(GraphPass("nn.conv_constant_weights").Device(DEVICE_CPU).Order(40), MarkConvWeights);

}  // namespace sdk
}  // namespace graphrt
