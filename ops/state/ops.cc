// Op definitions of the state family: ref variables (VariableV2 and the
// ops that read and update them through Ref(T) inputs) and resource
// variables (VarHandleOp and the ops that take its handle). TensorFlow's
// signatures, attrs and defaults (state_ops.cc, resource_variable_ops.cc).
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

Status VariableShape(InferenceContext* c) {
  PartialShape shape;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return Status();
}

// Assign with validate_shape: the value's shape (merged with the ref's);
// without it, the value's shape too (the variable takes it).
Status AssignShape(InferenceContext* c) {
  bool validate = true;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("validate_shape", &validate));
  PartialShape out = c->input(1);
  if (validate) GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(0), c->input(1), &out));
  c->set_output(0, out);
  return Status();
}

Status UpdateShape(InferenceContext* c) {
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(0), c->input(1), &out));
  c->set_output(0, out);
  return Status();
}


// VariableV2 and the legacy Variable: the same op under two names.
[[maybe_unused]] const bool kVariablesRegistered = [] {
  for (const char* op : {"VariableV2", "Variable"})
    detail::AddOp(op)
        .Output("ref: Ref(dtype)")
        .Attr("shape: shape")
        .Attr("dtype: type")
        .Attr("container: string = ''")
        .Attr("shared_name: string = ''")
        .SetIsStateful()
        .SetShapeFn(VariableShape);
  return true;
}();

REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetAllowsUninitializedInput()
    .SetShapeFn(AssignShape);

REGISTER_OP("AssignAdd")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: numbertype")
    .Attr("use_locking: bool = false")
    .SetShapeFn(UpdateShape);

REGISTER_OP("AssignSub")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: numbertype")
    .Attr("use_locking: bool = false")
    .SetShapeFn(UpdateShape);

REGISTER_OP("RefIdentity")
    .Input("input: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(sf::UnchangedShape);

REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(sf::ScalarShape);

// Scatter*, ScatterNd* on a ref: (ref, indices, updates) -> output_ref.
void RefScatterOp(const char* op, const char* t, bool use_locking) {
  detail::AddOp(op)
      .Input("ref: Ref(T)")
      .Input("indices: Tindices")
      .Input("updates: T")
      .Output("output_ref: Ref(T)")
      .Attr(std::string("T: ") + t)
      .Attr("Tindices: {int32, int64}")
      .Attr(std::string("use_locking: bool = ") + (use_locking ? "true" : "false"))
      .SetShapeFn(sf::UnchangedShape);
}

// ResourceScatter*: (resource, indices, updates) -> ().
void ResourceScatterOp(const char* op, const char* t) {
  detail::AddOp(op)
      .Input("resource: resource")
      .Input("indices: Tindices")
      .Input("updates: dtype")
      .Attr(std::string("dtype: ") + t)
      .Attr("Tindices: {int32, int64}")
      .SetShapeFn(sf::NoOutputs);
}

constexpr const char* kMinMaxTypes = "{half, bfloat16, float, double, int32, int64}";

[[maybe_unused]] const bool kScatterRegistered = [] {
  RefScatterOp("ScatterUpdate", "type", true);
  for (const char* op : {"ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv"}) RefScatterOp(op, "numbertype", false);
  for (const char* op : {"ScatterMin", "ScatterMax"}) RefScatterOp(op, kMinMaxTypes, false);
  RefScatterOp("ScatterNdUpdate", "type", true);
  for (const char* op : {"ScatterNdAdd", "ScatterNdSub"}) RefScatterOp(op, "numbertype", false);
  ResourceScatterOp("ResourceScatterUpdate", "type");
  for (const char* op : {"ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul", "ResourceScatterDiv"})
    ResourceScatterOp(op, "numbertype");
  for (const char* op : {"ResourceScatterMin", "ResourceScatterMax"}) ResourceScatterOp(op, kMinMaxTypes);
  return true;
}();

}  // namespace

REGISTER_OP("CountUpTo")
    .Input("ref: Ref(T)")
    .Output("output: T")
    .Attr("limit: int")
    .Attr("T: {int32, int64}")
    .SetShapeFn(sf::ScalarShape);

// ------------------------------------------------------ resource variables

REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("debug_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("allowed_devices: list(string) = []")
    .SetIsStateful()
    .SetShapeFn(sf::ScalarShape);

REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(sf::UnknownShape);

REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .Attr("validate_shape: bool = false")
    .SetShapeFn(sf::NoOutputs);

REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(sf::NoOutputs);

REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(sf::NoOutputs);

REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetShapeFn(sf::ScalarShape);

REGISTER_OP("VariableShape")
    .Input("input: resource")
    .Output("output: out_type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialShape::Known({-1}));
      return Status();
    });

REGISTER_OP("DestroyResourceOp")
    .Input("resource: resource")
    .Attr("ignore_lookup_error: bool = true")
    .SetIsStateful()
    .SetShapeFn(sf::NoOutputs);

REGISTER_OP("ResourceGather")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Output("output: dtype")
    .Attr("batch_dims: int = 0")
    .Attr("validate_indices: bool = true")
    .Attr("dtype: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn(sf::UnknownShape);

}  // namespace sdk
}  // namespace graphrt
