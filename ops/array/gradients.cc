// Gradients of the array family's ops (plugin ABI 1.5), as TensorFlow's
// gradient functions compute them; checked against central differences in
// tests/gradients_test.cc.
#include <graphrt/sdk/gradient.h>

#include <string>
#include <vector>

#include "common/gradients.h"

namespace graphrt {
namespace sdk {
namespace {

using grad::Reshape;
using grad::Shape;
using grad::T;

Status IdentityGrad(GradientContext& g) {
  g.SetGrad(0, g.grad(0));
  return Status();
}

Status IdentityNGrad(GradientContext& g) {
  for (int i = 0; i < g.num_inputs(); ++i) g.SetGrad(i, g.grad(i));
  return Status();
}

// The gradient has the input's shape again (Reshape, ExpandDims, Squeeze).
Status ReshapeGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  g.SetGrad(0, Reshape(g, "Reshape", g.grad(0), Shape(g, "Shape", g.input(0), t), t));
  return Status();
}

bool IsFloating(DataType t) {
  return t == GR_FLOAT || t == GR_DOUBLE || t == GR_HALF || t == GR_BFLOAT16 || t == GR_COMPLEX64 ||
         t == GR_COMPLEX128;
}

// Back to the source type; none flows to or from an integer.
Status CastGrad(GradientContext& g) {
  const DataType src = g.input_type(0), dst = g.output_type(0);
  if (!IsFloating(src) || !IsFloating(dst)) return Status();
  g.SetGrad(0, g.Add("Cast", "Cast", {g.grad(0)}, {TypeAttr("SrcT", dst), TypeAttr("DstT", src),
                                                   BoolAttr("Truncate", false)}));
  return Status();
}

Status TransposeGrad(GradientContext& g) {
  const DataType tperm = g.input_type(1);
  const std::string inverse = g.Add("InvertPermutation", "InvertPermutation", {g.input(1)}, {T(tperm)});
  g.SetGrad(0, g.Add("transpose", "Transpose", {g.grad(0), inverse}, {T(g.input_type(0)), TypeAttr("Tperm", tperm)}));
  return Status();
}

Status PackGrad(GradientContext& g) {
  const int n = g.num_inputs();
  const std::string parts = g.Add("unstack", "Unpack", {g.grad(0)}, {T(g.input_type(0)), IntAttr("num", n),
                                                                      IntAttr("axis", g.Attr<int64_t>("axis"))});
  for (int i = 0; i < n; ++i) g.SetGrad(i, GradientContext::Out(parts, i));
  return Status();
}

Status UnpackGrad(GradientContext& g) {
  std::vector<std::string> grads;
  for (int i = 0; i < g.num_outputs(); ++i) grads.push_back(g.grad(i));
  g.SetGrad(0, g.Add("stack", "Pack", grads, {T(g.input_type(0)), IntAttr("N", g.num_outputs()),
                                              IntAttr("axis", g.Attr<int64_t>("axis"))}));
  return Status();
}

// Each input's slice of the gradient, at the offsets ConcatOffset gives.
Status ConcatV2Grad(GradientContext& g) {
  const int n = g.num_inputs() - 1;  // the values, then the axis
  const DataType t = g.input_type(0);
  std::vector<std::string> shapes;
  for (int i = 0; i < n; ++i) shapes.push_back(Shape(g, i == 0 ? "Shape" : "Shape_" + std::to_string(i), g.input(i), t));
  std::string axis = g.input(n);
  if (g.input_type(n) != GR_INT32)
    axis = g.Add("Cast", "Cast", {axis}, {TypeAttr("SrcT", g.input_type(n)), TypeAttr("DstT", GR_INT32),
                                          BoolAttr("Truncate", false)});
  const std::string rank = g.Add("Rank", "Rank", {g.input(0)}, {T(t)});
  const std::string axis_mod = grad::Binary(g, "mod", "FloorMod", axis, rank, GR_INT32);
  std::vector<std::string> offset_inputs{axis_mod};
  offset_inputs.insert(offset_inputs.end(), shapes.begin(), shapes.end());
  const std::string offsets = g.Add("ConcatOffset", "ConcatOffset", offset_inputs, {IntAttr("N", n)});
  for (int i = 0; i < n; ++i) {
    g.SetGrad(i, g.Add("Slice", "Slice", {g.grad(0), GradientContext::Out(offsets, i), shapes[i]},
                       {T(t), TypeAttr("Index", GR_INT32)}));
  }
  return Status();
}

// The gradient where the condition chose each branch, zeros elsewhere.
Status SelectGrad(GradientContext& g) {
  const DataType t = g.input_type(1);
  const std::string zeros = g.Add("zeros_like", "ZerosLike", {g.grad(0)}, {T(t)});
  g.SetGrad(1, g.Add("Select", "Select", {g.input(0), g.grad(0), zeros}, {T(t)}));
  g.SetGrad(2, g.Add("Select_1", "Select", {g.input(0), zeros, g.grad(0)}, {T(t)}));
  return Status();
}

Status BroadcastToGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string sx = Shape(g, "Shape", g.input(0), t);
  std::string target = g.input(1);
  if (g.input_type(1) != GR_INT32)
    target = g.Add("Cast", "Cast", {target}, {TypeAttr("SrcT", g.input_type(1)), TypeAttr("DstT", GR_INT32),
                                              BoolAttr("Truncate", false)});
  const std::string r = g.Add("BroadcastGradientArgs", "BroadcastGradientArgs", {sx, target}, {T(GR_INT32)});
  g.SetGrad(0, Reshape(g, "Reshape", grad::Sum(g, "Sum", g.grad(0), r, t, /*keep_dims=*/true), sx, t));
  return Status();
}

Status PreventGradientGrad(GradientContext& g) {
  std::string message;
  (void)g.GetAttr("message", &message);
  return Status(GR_INVALID_ARGUMENT, "Gradient explicitly disabled. Reason: " + message);
}

REGISTER_GRADIENT("Identity", IdentityGrad);
REGISTER_GRADIENT("IdentityN", IdentityNGrad);
REGISTER_GRADIENT("Reshape", ReshapeGrad);
REGISTER_GRADIENT("ExpandDims", ReshapeGrad);
REGISTER_GRADIENT("Squeeze", ReshapeGrad);
REGISTER_GRADIENT("Cast", CastGrad);
REGISTER_GRADIENT("Transpose", TransposeGrad);
REGISTER_GRADIENT("Pack", PackGrad);
REGISTER_GRADIENT("Unpack", UnpackGrad);
REGISTER_GRADIENT("ConcatV2", ConcatV2Grad);
REGISTER_GRADIENT("Select", SelectGrad);
REGISTER_GRADIENT("BroadcastTo", BroadcastToGrad);
REGISTER_GRADIENT("PreventGradient", PreventGradientGrad);
REGISTER_NO_GRADIENT("StopGradient");
REGISTER_NO_GRADIENT("Shape");
REGISTER_NO_GRADIENT("ShapeN");
REGISTER_NO_GRADIENT("Size");
REGISTER_NO_GRADIENT("Rank");
REGISTER_NO_GRADIENT("ZerosLike");
REGISTER_NO_GRADIENT("OnesLike");
REGISTER_NO_GRADIENT("OneHot");
REGISTER_NO_GRADIENT("Range");
REGISTER_NO_GRADIENT("BroadcastGradientArgs");
REGISTER_NO_GRADIENT("ConcatOffset");
REGISTER_NO_GRADIENT("InvertPermutation");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
