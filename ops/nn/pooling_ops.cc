// Op definitions of the nn family's 2-D pooling ops (TensorFlow's
// signatures and shape functions). REGISTER_OP only, no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cpu/conv_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
namespace cu = conv_util;

// The pooled shape of a 4-D input (TensorFlow's MaxPool/AvgPool shape
// functions). `op` names the op in messages; explicit_paddings is read when
// the op has it; `depth_pooling_allowed` pools the channel dim by its
// window too (MaxPool).
Status PoolShapeFromLists(InferenceContext* c, const char* op, const std::vector<int64_t>& ksize,
                          const std::vector<int64_t>& strides, bool depth_pooling_allowed,
                          PartialShape* pooled = nullptr) {
  std::string format = "NHWC";
  if (!c->GetAttr("data_format", &format).ok()) format = "NHWC";
  cu::Format f = cu::Format::kNHWC;
  GR_RETURN_IF_ERROR_SDK(cu::ParseFormat(format, &f));
  const int dim_h = cu::DimIndex(f, 'H'), dim_w = cu::DimIndex(f, 'W'), dim_c = cu::DimIndex(f, 'C');
  PartialShape in;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &in));
  if (strides.size() != 4) {
    return errors::InvalidArgument(op, " requires the stride attribute to contain 4 values, but got: ",
                                   strides.size());
  }
  if (ksize.size() != 4) {
    return errors::InvalidArgument(op, " requires the ksize attribute to contain 4 values, but got: ",
                                   ksize.size());
  }
  std::string padding_str;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("padding", &padding_str));
  cu::Padding padding = cu::Padding::kValid;
  GR_RETURN_IF_ERROR_SDK(cu::ParsePadding(padding_str, &padding));
  std::vector<int64_t> explicit_paddings;
  if (!c->GetAttr("explicit_paddings", &explicit_paddings).ok()) explicit_paddings.clear();
  GR_RETURN_IF_ERROR_SDK(cu::CheckValidPadding(padding, explicit_paddings, f));
  auto pad = [&](int dim, int side) -> int64_t {
    return padding == cu::Padding::kExplicit ? explicit_paddings[2 * dim + side] : 0;
  };
  PartialShape out = in;
  GR_RETURN_IF_ERROR_SDK(cu::WindowedOutputDim(in.dims[dim_h], ksize[dim_h], strides[dim_h], padding,
                                               pad(dim_h, 0), pad(dim_h, 1), &out.dims[dim_h]));
  GR_RETURN_IF_ERROR_SDK(cu::WindowedOutputDim(in.dims[dim_w], ksize[dim_w], strides[dim_w], padding,
                                               pad(dim_w, 0), pad(dim_w, 1), &out.dims[dim_w]));
  if (depth_pooling_allowed) {
    GR_RETURN_IF_ERROR_SDK(cu::WindowedOutputDim(in.dims[dim_c], ksize[dim_c], strides[dim_c],
                                                 padding == cu::Padding::kExplicit ? cu::Padding::kValid
                                                                                   : padding,
                                                 0, 0, &out.dims[dim_c]));
  }
  c->set_output(0, out);
  if (pooled) *pooled = out;
  return Status();
}

Status PoolShape(InferenceContext* c, const char* op, bool depth_pooling_allowed, PartialShape* pooled = nullptr) {
  std::vector<int64_t> ksize, strides;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("strides", &strides));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("ksize", &ksize));
  return PoolShapeFromLists(c, op, ksize, strides, depth_pooling_allowed, pooled);
}

Status MaxPoolShape(InferenceContext* c) { return PoolShape(c, "MaxPool", true); }
Status AvgPoolShape(InferenceContext* c) { return PoolShape(c, "AvgPool", false); }

// A 1-D int32 constant of 4 values, or false when not known at load.
Status ReadConstList(InferenceContext* c, int input, bool* known, std::vector<int64_t>* v) {
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(input), 1, &s));
  if (s.dims[0] >= 0 && s.dims[0] != 4) {
    return errors::InvalidArgument("Dimension must be 4 but is ", s.dims[0]);
  }
  TensorView t;
  *known = c->input_tensor(input, &t);
  if (!*known) return Status();
  v->clear();
  for (int64_t i = 0; i < t.NumElements(); ++i) v->push_back(t.data<int32_t>()[i]);
  return Status();
}

// MaxPoolV2 (lists_input 1) and MaxPoolGradGradV2 (lists_input 3).
Status MaxPoolV2ShapeFrom(InferenceContext* c, int lists_input, PartialShape* pooled) {
  PartialShape in;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &in));
  bool known_k = false, known_s = false;
  std::vector<int64_t> ksize, strides;
  GR_RETURN_IF_ERROR_SDK(ReadConstList(c, lists_input, &known_k, &ksize));
  GR_RETURN_IF_ERROR_SDK(ReadConstList(c, lists_input + 1, &known_s, &strides));
  if (!known_k || !known_s) {
    *pooled = PartialShape::Known({-1, -1, -1, -1});
    c->set_output(0, *pooled);
    return Status();
  }
  return PoolShapeFromLists(c, "MaxPool", ksize, strides, true, pooled);
}

Status MaxPoolV2Shape(InferenceContext* c) {
  PartialShape unused;
  return MaxPoolV2ShapeFrom(c, 1, &unused);
}

// MaxPoolGradGrad(V2): the pooled shape of orig_input, which must merge
// with orig_output; grad is shaped like orig_input.
Status MergeGradGradShape(InferenceContext* c, const PartialShape& pooled) {
  PartialShape unused, out;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(0), c->input(2), &unused));
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(1), pooled, &out));
  c->set_output(0, out);
  return Status();
}
Status MaxPoolGradGradShape(InferenceContext* c) {
  PartialShape pooled;
  GR_RETURN_IF_ERROR_SDK(PoolShape(c, "MaxPoolGradGrad", true, &pooled));
  return MergeGradGradShape(c, pooled);
}
Status MaxPoolGradGradV2Shape(InferenceContext* c) {
  PartialShape pooled;
  GR_RETURN_IF_ERROR_SDK(MaxPoolV2ShapeFrom(c, 3, &pooled));
  return MergeGradGradShape(c, pooled);
}

Status UnchangedShapeWithRank4(InferenceContext* c) {
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &s));
  c->set_output(0, s);
  return Status();
}

// The output is shaped by the constant orig_input_shape, else rank 4.
Status AvgPoolGradShape(InferenceContext* c) {
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &s));
  TensorView t;
  if (!c->input_tensor(0, &t)) {
    c->set_output(0, PartialShape::Known({-1, -1, -1, -1}));
    return Status();
  }
  if (t.NumElements() != 4) {
    return errors::InvalidArgument("Shape must be rank 4 but is rank ", t.NumElements());
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < 4; ++i) {
    const int32_t d = t.data<int32_t>()[i];
    if (d < -1) return errors::InvalidArgument("Dimension ", i, " of orig_input_shape is negative: ", d);
    dims.push_back(d);
  }
  c->set_output(0, PartialShape::Known(dims));
  return Status();
}

}  // namespace

REGISTER_OP("MaxPool")
    .Attr(
        "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8} = "
        "DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Input("input: T")
    .Output("output: T")
    .SetShapeFn(MaxPoolShape)
    .Doc("Performs max pooling on the input.");

REGISTER_OP("MaxPoolV2")
    .Attr(
        "T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8} = "
        "DT_FLOAT")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Input("input: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .SetShapeFn(MaxPoolV2Shape)
    .Doc("Performs max pooling on the input; ksize and strides are inputs.");

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(AvgPoolShape)
    .Doc("Performs average pooling on the input.");

// The signature MaxPoolGrad and _MaxPoolGradReluGrad share (the optimizer
// copies a MaxPoolGrad's attrs into the _MaxPoolGradReluGrad it makes), with
// `t_attr` as the type attr.
static OpDefBuilder& MaxPoolGradSignature(OpDefBuilder& b, const char* t_attr) {
  return b.Attr("ksize: list(int) >= 4")
      .Attr("strides: list(int) >= 4")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Input("orig_input: T")
      .Input("orig_output: T")
      .Input("grad: T")
      .Output("output: T")
      .Attr(t_attr)
      .SetShapeFn(UnchangedShapeWithRank4);
}

[[maybe_unused]] static OpDefBuilder& max_pool_grad_op =
    MaxPoolGradSignature(detail::AddOp("MaxPoolGrad"), "T: realnumbertype = DT_FLOAT")
        .Doc("Computes gradients of the maxpooling function.");

// graphrt's own internal op, made by the CPU graph pass nn.fuse_pool_grad_relu
// from ReluGrad(MaxPoolGrad(x, y, grad), x): the gradient through a Relu
// whose output x was max-pooled, as TensorFlow's gradients of
// relu -> max_pool build it. One pass over x's shape instead of two. Not
// TensorFlow's; not meant to be written by hand.
[[maybe_unused]] static OpDefBuilder& max_pool_grad_relu_grad_op =
    MaxPoolGradSignature(detail::AddOp("_MaxPoolGradReluGrad"), "T: {float, double}")
        .Doc("ReluGrad(MaxPoolGrad(orig_input, orig_output, grad), orig_input) (internal; made by graphrt's "
             "optimizer).");

REGISTER_OP("MaxPoolGradV2")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr("T: realnumbertype = DT_FLOAT")
    .SetShapeFn(UnchangedShapeWithRank4)
    .Doc("Computes gradients of the maxpooling function; ksize and strides are inputs.");

REGISTER_OP("MaxPoolGradGrad")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("T: realnumbertype")
    .SetShapeFn(MaxPoolGradGradShape)
    .Doc("Computes second-order gradients of the maxpooling function.");

REGISTER_OP("MaxPoolGradGradV2")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr("T: realnumbertype")
    .SetShapeFn(MaxPoolGradGradV2Shape)
    .Doc("Computes second-order gradients of the maxpooling function; ksize and strides are inputs.");

REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(AvgPoolGradShape)
    .Doc("Computes gradients of the average pooling function.");

}  // namespace sdk
}  // namespace graphrt
