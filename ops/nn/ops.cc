// Op definitions of the nn family (TensorFlow's signatures). Shared by
// every device plugin of the family, so: REGISTER_OP only, no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

Status BiasAddShape(InferenceContext* c) {
  std::string data_format = "NHWC";
  if (!c->GetAttr("data_format", &data_format).ok()) data_format = "NHWC";
  PartialShape value, bias;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), 2, &value));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &bias));
  if (!value.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  // The bias runs along the channel dim: last for NHWC, 1 for NCHW.
  const int channel = data_format == "NCHW" ? 1 : value.rank - 1;
  Status s = sf::MergeDim(value.dims[channel], bias.dims[0], &value.dims[channel]);
  if (!s.ok()) {
    // The core prefixes the node and op.
    return errors::InvalidArgument(s.message(),
                                   ", with input shapes: ", sf::ShapeString(c->input(0)), ", ",
                                   sf::ShapeString(c->input(1)), ".");
  }
  c->set_output(0, value);
  return Status();
}

Status SoftmaxShape(InferenceContext* c) {
  PartialShape logits;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), 1, &logits));
  c->set_output(0, logits);
  return Status();
}

// Output 0 = input 0 merged with input 1 (TensorFlow's
// MergeBothInputsShapeFn), for the element-wise gradients.
Status MergeBothInputsShape(InferenceContext* c) {
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(0), c->input(1), &out));
  c->set_output(0, out);
  return Status();
}

Status BiasAddGradShape(InferenceContext* c) {
  std::string data_format = "NHWC";
  if (!c->GetAttr("data_format", &data_format).ok()) data_format = "NHWC";
  PartialShape in;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), 2, &in));
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::Known({-1}));
    return Status();
  }
  c->set_output(0, PartialShape::Known({in.dims[data_format == "NCHW" ? 1 : in.rank - 1]}));
  return Status();
}

// loss [batch], backprop [batch, classes]; labels and features may
// broadcast to a matrix.
Status SoftmaxXentShape(InferenceContext* c) {
  PartialShape in;
  if (sf::WithRank(c->input(0), 2, &in).ok() && sf::Merge(in, c->input(1), &in).ok()) {
    c->set_output(0, PartialShape::Known({in.dims[0]}));
    c->set_output(1, in);
    return Status();
  }
  PartialShape b;
  GR_RETURN_IF_ERROR_SDK(sf::BroadcastPartialShapes(c->input(0), c->input(1), &b));
  if (!b.known_rank()) {
    return errors::InvalidArgument(
        "Shape must be broadcasted with rank 2, but is rank is unknown.");
  }
  if (b.rank != 2) {
    return errors::InvalidArgument("Shape must be broadcasted with rank 2, but is rank ", b.rank);
  }
  c->set_output(0, PartialShape::Known({b.dims[0]}));
  c->set_output(1, b);
  return Status();
}

Status SparseSoftmaxXentShape(InferenceContext* c) {
  PartialShape features, labels;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 2, &features));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &labels));
  int64_t batch = -1;
  Status s = sf::MergeDim(features.dims[0], labels.dims[0], &batch);
  if (!s.ok()) {
    return errors::InvalidArgument(s.message(), " for the batch size of features ",
                                   sf::ShapeString(features), " and labels ",
                                   sf::ShapeString(labels));
  }
  features.dims[0] = batch;
  c->set_output(0, PartialShape::Known({batch}));
  c->set_output(1, features);
  return Status();
}

}  // namespace

REGISTER_OP("BiasAdd")
    .Attr("T: numbertype")
    .Input("value: T")
    .Input("bias: T")
    .Attr("data_format: { 'NHWC', 'NCHW' } = 'NHWC' ")
    .Output("output: T")
    .SetShapeFn(BiasAddShape)
    .Doc("Adds `bias` to `value`.");

// TensorFlow spells the list "{realnumbertypes, qint8}"; written out here so
// that it does not depend on type classes nested inside a list.
REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
        "uint32, uint64, qint8}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes rectified linear: `max(features, 0)`.");

REGISTER_OP("Sigmoid")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes sigmoid of `x` element-wise.");

REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxShape)
    .Doc("Computes softmax activations.");

REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxShape)
    .Doc("Computes log softmax activations.");

REGISTER_OP("BiasAddGrad")
    .Attr("T: numbertype")
    .Input("out_backprop: T")
    .Attr("data_format: { 'NHWC', 'NCHW' } = 'NHWC' ")
    .Output("output: T")
    .SetShapeFn(BiasAddGradShape)
    .Doc("The backward operation for BiasAdd on the bias tensor.");

// ------------------------------------------------------------ activations

REGISTER_OP("Relu6")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: realnumbertype")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes rectified linear 6: `min(max(features, 0), 6)`.");

REGISTER_OP("Elu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes the exponential linear function: `exp(features) - 1` if < 0, `features` otherwise.");

REGISTER_OP("Selu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes the scaled exponential linear function.");

REGISTER_OP("LeakyRelu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes rectified linear with a leak: `features` if > 0, `alpha * features` otherwise.");

REGISTER_OP("Softplus")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes softplus: `log(exp(features) + 1)`.");

REGISTER_OP("Softsign")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes softsign: `features / (abs(features) + 1)`.");

// -------------------------------------------------- activation gradients

REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: realnumbertype")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes rectified linear gradients for a Relu operation.");

REGISTER_OP("Relu6Grad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: realnumbertype")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes rectified linear 6 gradients for a Relu6 operation.");

REGISTER_OP("EluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes gradients for the exponential linear (Elu) operation.");

REGISTER_OP("SeluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes gradients for the scaled exponential linear (Selu) operation.");

REGISTER_OP("LeakyReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes rectified linear gradients for a LeakyRelu operation.");

REGISTER_OP("SoftplusGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes softplus gradients for a softplus operation.");

REGISTER_OP("SoftsignGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes softsign gradients for a softsign operation: `gradients / (1 + abs(features))^2`.");

// TensorFlow declares these two in math_ops.cc; they are the gradients of
// Sigmoid and Tanh and live with the activations here.
REGISTER_OP("SigmoidGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes the gradient of the sigmoid of `x` wrt its input: `dy * y * (1 - y)`.");

REGISTER_OP("TanhGrad")
    .Input("y: T")
    .Input("dy: T")
    .Output("z: T")
    .Attr("T: {bfloat16, half, float, double, complex64, complex128}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("Computes the gradient for the tanh of `x` wrt its input: `dy * (1 - y * y)`.");

// ------------------------------------------------------------------ losses

REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(sf::ScalarShape)
    .Doc("L2 Loss: `sum(t ** 2) / 2`, without the square root.");

REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxXentShape)
    .Doc("Computes softmax cross entropy cost and gradients to backpropagate.");

REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .SetShapeFn(SparseSoftmaxXentShape)
    .Doc("Computes softmax cross entropy cost and gradients to backpropagate.");

}  // namespace sdk
}  // namespace graphrt
