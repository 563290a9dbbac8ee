#include "shape_inference.h"

#include <memory>
#include <unordered_map>

#include "core_api_internal.h"
#include "node_def_util.h"

namespace graphrt {
namespace {
constexpr int64_t kMaxConstElementsForShapeInference = int64_t{1} << 16;
}  // namespace

std::unique_ptr<Tensor> ConstValueForShapeInference(const Node& n) {
  if (n.op() != "Const") return nullptr;
  const proto::AttrValue* v = FindAttr(n.def(), "value");
  TensorShape shape;
  if (v == nullptr || !TensorShape::FromProto(v->tensor().tensor_shape(), &shape).ok() ||
      shape.num_elements() > kMaxConstElementsForShapeInference)
    return nullptr;
  auto t = std::make_unique<Tensor>();
  if (!Tensor::FromProto(v->tensor(), t.get()).ok()) return nullptr;
  return t;
}

Status InferNodeShapes(const Graph& g, const Node& n, const std::vector<PartialTensorShape>& input_shapes,
                       const std::vector<const Tensor*>& input_values, Allocator* attr_allocator,
                       std::vector<PartialTensorShape>* outputs) {
  outputs->assign(n.num_outputs(), PartialTensorShape());
  const OpRegistrationData* reg = n.op_def() ? g.op_registry()->LookUp(n.op()) : nullptr;
  if (reg == nullptr || reg->shape_fn == nullptr) return Status::OK();
  if (static_cast<int>(input_shapes.size()) != n.num_inputs() ||
      static_cast<int>(input_values.size()) != n.num_inputs())
    return errors::Internal(NodePrefix(n.def()), ": shape inference got ", input_shapes.size(), " input shapes and ",
                            input_values.size(), " values for ", n.num_inputs(), " inputs");
  GR_ShapeContext sc{GR_Attrs{&n.def(), attr_allocator, nullptr}, &n.def(), &input_shapes, &input_values,
                     std::move(*outputs), Status()};
  sc.attrs.error = &sc.status;
  sc.graph_def_version = g.versions().producer();
  int32_t rc = GR_OK;
  // SDK shape functions catch their own exceptions; a raw C-ABI one's must not escape.
  Status thrown = StatusFromExceptions("shape function", [&] {
    rc = reg->shape_fn(&sc, reg->shape_fn_user_data);
    return Status::OK();
  });
  if (!thrown.ok() && sc.status.ok()) sc.status = std::move(thrown);
  if (rc != GR_OK || !sc.status.ok()) {
    outputs->assign(n.num_outputs(), PartialTensorShape());
    Status s = sc.status.ok() ? errors::Internal("shape function failed") : sc.status;
    return Status(s.code(), NodePrefix(n.def()) + ": " + s.message());
  }
  *outputs = std::move(sc.outputs);
  return Status::OK();
}

Status InferShapes(const Graph& g, std::vector<std::vector<PartialTensorShape>>* out, Allocator* attr_allocator) {
  out->assign(g.num_node_ids(), {});
  // Const values, parsed once, so shape fns (e.g. Reshape's) can read them.
  std::unordered_map<int, std::unique_ptr<Tensor>> const_values;
  for (Node* n : g.TopologicalOrder()) {
    if (!n->IsOp()) continue;
    if (auto value = ConstValueForShapeInference(*n)) const_values[n->id()] = std::move(value);
    std::vector<PartialTensorShape> inputs(n->num_inputs());
    std::vector<const Tensor*> values(n->num_inputs(), nullptr);
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) continue;
      // A while loop's back edge comes from a node not inferred yet: unknown.
      const std::vector<PartialTensorShape>& src_shapes = (*out)[e->src()->id()];
      if (static_cast<size_t>(e->src_output()) < src_shapes.size())
        inputs[e->dst_input()] = src_shapes[e->src_output()];
      auto it = const_values.find(e->src()->id());
      if (it != const_values.end() && e->src_output() == 0) values[e->dst_input()] = it->second.get();
    }
    GR_RETURN_IF_ERROR(InferNodeShapes(g, *n, inputs, values, attr_allocator, &(*out)[n->id()]));
  }
  return Status::OK();
}

}  // namespace graphrt
