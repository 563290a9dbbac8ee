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

}  // namespace sdk
}  // namespace graphrt
