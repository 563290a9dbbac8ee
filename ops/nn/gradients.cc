// Gradients of the nn family's ops (plugin ABI 1.5), as TensorFlow's
// gradient functions compute them; checked against central differences in
// tests/gradients_test.cc.
#include <graphrt/sdk/gradient.h>

#include <string>
#include <vector>

#include "common/gradients.h"

namespace graphrt {
namespace sdk {
namespace {

using grad::Binary;
using grad::Shape;
using grad::T;
using grad::Unary;

// ReluGrad and its kin take (gradients, features).
template <const char* kGradOp, bool kFromOutput>
Status ActivationGrad(GradientContext& g) {
  g.SetGrad(0, Binary(g, kGradOp, kGradOp, g.grad(0), kFromOutput ? g.output(0) : g.input(0), g.input_type(0)));
  return Status();
}
constexpr char kReluGrad[] = "ReluGrad";
constexpr char kRelu6Grad[] = "Relu6Grad";
constexpr char kEluGrad[] = "EluGrad";

Status LeakyReluGrad(GradientContext& g) {
  g.SetGrad(0, g.Add("LeakyReluGrad", "LeakyReluGrad", {g.grad(0), g.input(0)},
                     {T(g.input_type(0)), FloatAttr("alpha", g.Attr<float>("alpha"))}));
  return Status();
}

// SigmoidGrad(y, dy).
Status SigmoidGrad(GradientContext& g) {
  g.SetGrad(0, Binary(g, "SigmoidGrad", "SigmoidGrad", g.output(0), g.grad(0), g.input_type(0)));
  return Status();
}

std::string KeptSum(GradientContext& g, const std::string& name, const std::string& x, DataType t) {
  return grad::Sum(g, name, x, g.IntConst(name + "/reduction_indices", {-1}), t, /*keep_dims=*/true);
}

// (dy - sum(dy * y, -1)) * y.
Status SoftmaxGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string y = g.output(0);
  const std::string dot = KeptSum(g, "Sum", Binary(g, "mul", "Mul", g.grad(0), y, t), t);
  g.SetGrad(0, Binary(g, "mul_1", "Mul", Binary(g, "sub", "Sub", g.grad(0), dot, t), y, t));
  return Status();
}

// dy - exp(y) * sum(dy, -1).
Status LogSoftmaxGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string sum = KeptSum(g, "Sum", g.grad(0), t);
  g.SetGrad(0, Binary(g, "sub", "Sub", g.grad(0),
                      Binary(g, "mul", "Mul", Unary(g, "Exp", "Exp", g.output(0), t), sum, t), t));
  return Status();
}

Status BiasAddGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  g.SetGrad(0, g.grad(0));
  g.SetGrad(1, g.Add("BiasAddGrad", "BiasAddGrad", {g.grad(0)},
                     {T(t), StringAttr("data_format", g.Attr<std::string>("data_format"))}));
  return Status();
}

// The loss's gradient times the backprop output (the softmax minus the
// labels); the labels' gradient is -log_softmax(logits) times it.
Status SoftmaxXentGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string dloss =
      g.Add("ExpandDims", "ExpandDims", {g.grad(0), g.IntConst("ExpandDims/dim", {-1}, true)},
            {T(t), TypeAttr("Tdim", GR_INT32)});
  g.SetGrad(0, Binary(g, "mul", "Mul", dloss, g.output(1), t));
  const std::string log_softmax = g.Add("LogSoftmax", "LogSoftmax", {g.input(0)}, {T(t)});
  g.SetGrad(1, Binary(g, "mul_1", "Mul", dloss, Unary(g, "Neg", "Neg", log_softmax, t), t));
  return Status();
}

Status SparseSoftmaxXentGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string dloss =
      g.Add("ExpandDims", "ExpandDims", {g.grad(0), g.IntConst("ExpandDims/dim", {-1}, true)},
            {T(t), TypeAttr("Tdim", GR_INT32)});
  g.SetGrad(0, Binary(g, "mul", "Mul", dloss, g.output(1), t));
  return Status();  // the labels are integers: no gradient
}

Status L2LossGrad(GradientContext& g) {
  g.SetGrad(0, Binary(g, "mul", "Mul", g.input(0), g.grad(0), g.input_type(0)));
  return Status();
}

// The attrs a convolution or pooling gradient op takes from its forward op.
std::vector<AttrText> WindowAttrs(GradientContext& g, std::initializer_list<const char*> int_lists,
                                  std::initializer_list<const char*> strings) {
  std::vector<AttrText> attrs{T(g.input_type(0))};
  for (const char* name : int_lists) attrs.push_back(IntListAttr(name, g.Attr<std::vector<int64_t>>(name)));
  for (const char* name : strings) attrs.push_back(StringAttr(name, g.Attr<std::string>(name)));
  return attrs;
}

Status Conv2DGrad(GradientContext& g) {
  std::vector<AttrText> attrs =
      WindowAttrs(g, {"strides", "explicit_paddings", "dilations"}, {"padding", "data_format"});
  attrs.push_back(BoolAttr("use_cudnn_on_gpu", g.Attr<bool>("use_cudnn_on_gpu")));
  const DataType t = g.input_type(0);
  g.SetGrad(0, g.Add("Conv2DBackpropInput", "Conv2DBackpropInput",
                     {Shape(g, "Shape", g.input(0), t), g.input(1), g.grad(0)}, attrs));
  g.SetGrad(1, g.Add("Conv2DBackpropFilter", "Conv2DBackpropFilter",
                     {g.input(0), Shape(g, "Shape_1", g.input(1), t), g.grad(0)}, attrs));
  return Status();
}

Status MaxPoolGrad(GradientContext& g) {
  g.SetGrad(0, g.Add("MaxPoolGrad", "MaxPoolGrad", {g.input(0), g.output(0), g.grad(0)},
                     WindowAttrs(g, {"ksize", "strides"}, {"padding", "data_format"})));
  return Status();
}

Status AvgPoolGrad(GradientContext& g) {
  g.SetGrad(0, g.Add("AvgPoolGrad", "AvgPoolGrad", {Shape(g, "Shape", g.input(0), g.input_type(0)), g.grad(0)},
                     WindowAttrs(g, {"ksize", "strides"}, {"padding", "data_format"})));
  return Status();
}

REGISTER_GRADIENT("Relu", (ActivationGrad<kReluGrad, false>));
REGISTER_GRADIENT("Relu6", (ActivationGrad<kRelu6Grad, false>));
REGISTER_GRADIENT("Elu", (ActivationGrad<kEluGrad, true>));
REGISTER_GRADIENT("LeakyRelu", LeakyReluGrad);
REGISTER_GRADIENT("Sigmoid", SigmoidGrad);
REGISTER_GRADIENT("Softmax", SoftmaxGrad);
REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGrad);
REGISTER_GRADIENT("BiasAdd", BiasAddGrad);
REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", SoftmaxXentGrad);
REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxXentGrad);
REGISTER_GRADIENT("L2Loss", L2LossGrad);
REGISTER_GRADIENT("Conv2D", Conv2DGrad);
REGISTER_GRADIENT("MaxPool", MaxPoolGrad);
REGISTER_GRADIENT("AvgPool", AvgPoolGrad);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
