// Op definitions of the nn family's normalisations: FusedBatchNorm (V1, V2,
// V3) and its gradients, LRN and LRNGrad (TensorFlow's signatures and shape
// functions). REGISTER_OP only, no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Rank (4 or 5) and channel index of a batch-norm data_format.
Status BatchNormFormat(InferenceContext* c, int* rank, bool* channels_first) {
  std::string format;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("data_format", &format));
  if (format == "NHWC" || format == "NDHWC") {
    *channels_first = false;
  } else if (format == "NCHW" || format == "NCDHW") {
    *channels_first = true;
  } else {
    return errors::InvalidArgument("Invalid data format string: ", format);
  }
  *rank = (format == "NDHWC" || format == "NCDHW") ? 5 : 4;
  return Status();
}

// Merges the length of the 1-D input `i` into *channels.
Status MergeChannelVector(InferenceContext* c, int i, int64_t* channels) {
  PartialShape v;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(i), 1, &v));
  return sf::MergeDim(*channels, v.dims[0], channels);
}

Status FusedBatchNormShape(InferenceContext* c) {
  int rank = 4;
  bool channels_first = false;
  GR_RETURN_IF_ERROR_SDK(BatchNormFormat(c, &rank, &channels_first));
  PartialShape x;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), rank, &x));
  bool is_training = true;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("is_training", &is_training));
  float factor = 1.0f;
  if (!c->GetAttr("exponential_avg_factor", &factor).ok()) factor = 1.0f;
  // mean and variance are read in inference, and in training when they are
  // blended with the batch statistics.
  const int inputs = (is_training && factor == 1.0f) ? 3 : 5;
  const int channel_index = channels_first ? 1 : rank - 1;
  int64_t channels = x.dims[channel_index];
  for (int i = 1; i < inputs; ++i) GR_RETURN_IF_ERROR_SDK(MergeChannelVector(c, i, &channels));
  x.dims[channel_index] = channels;
  c->set_output(0, x);
  for (int i = 1; i < 5; ++i) c->set_output(i, PartialShape::Known({channels}));
  return Status();
}

Status FusedBatchNormV3Shape(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(FusedBatchNormShape(c));
  c->set_output(5, PartialShape::Unknown());
  return Status();
}

Status FusedBatchNormGradShape(InferenceContext* c) {
  int rank = 4;
  bool channels_first = false;
  GR_RETURN_IF_ERROR_SDK(BatchNormFormat(c, &rank, &channels_first));
  PartialShape dy, x;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), rank, &dy));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), rank, &x));
  const int channel_index = channels_first ? 1 : rank - 1;
  int64_t channels = dy.dims[channel_index];
  GR_RETURN_IF_ERROR_SDK(sf::MergeDim(channels, x.dims[channel_index], &channels));
  // scale, reserve_space_1, reserve_space_2
  for (int i = 2; i < 5; ++i) GR_RETURN_IF_ERROR_SDK(MergeChannelVector(c, i, &channels));
  dy.dims[channel_index] = channels;
  c->set_output(0, dy);
  c->set_output(1, PartialShape::Known({channels}));
  c->set_output(2, PartialShape::Known({channels}));
  c->set_output(3, PartialShape::Known({0}));
  c->set_output(4, PartialShape::Known({0}));
  return Status();
}

Status LrnShape(InferenceContext* c) {
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &s));
  c->set_output(0, s);
  return Status();
}

Status LrnGradShape(InferenceContext* c) {
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &s));
  GR_RETURN_IF_ERROR_SDK(sf::Merge(s, c->input(1), &s));
  GR_RETURN_IF_ERROR_SDK(sf::Merge(s, c->input(2), &s));
  c->set_output(0, s);
  return Status();
}

}  // namespace

REGISTER_OP("FusedBatchNorm")
    .Input("x: T")
    .Input("scale: T")
    .Input("offset: T")
    .Input("mean: T")
    .Input("variance: T")
    .Output("y: T")
    .Output("batch_mean: T")
    .Output("batch_variance: T")
    .Output("reserve_space_1: T")
    .Output("reserve_space_2: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("Batch normalization.");

REGISTER_OP("FusedBatchNormV2")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("Batch normalization.");

REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {bfloat16, float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormV3Shape)
    .Doc("Batch normalization.");

REGISTER_OP("FusedBatchNormGrad")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: T")
    .Input("reserve_space_1: T")
    .Input("reserve_space_2: T")
    .Output("x_backprop: T")
    .Output("scale_backprop: T")
    .Output("offset_backprop: T")
    .Output("reserve_space_3: T")
    .Output("reserve_space_4: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("Gradient for batch normalization.");

REGISTER_OP("FusedBatchNormGradV2")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_3: U")
    .Output("reserve_space_4: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("Gradient for batch normalization.");

REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("Gradient for batch normalization.");

REGISTER_OP("LRN")
    .Input("input: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
    .SetShapeFn(LrnShape)
    .Doc("Local Response Normalization over the last (depth) dimension.");

REGISTER_OP("LRNGrad")
    .Input("input_grads: T")
    .Input("input_image: T")
    .Input("output_image: T")
    .Output("output: T")
    .Attr("depth_radius: int = 5")
    .Attr("bias: float = 1.0")
    .Attr("alpha: float = 1.0")
    .Attr("beta: float = 0.5")
    .Attr("T: {half, bfloat16, float} = DT_FLOAT")
    .SetShapeFn(LrnGradShape)
    .Doc("Gradients for Local Response Normalization.");

}  // namespace sdk
}  // namespace graphrt
