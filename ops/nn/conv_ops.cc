// Op definitions of the 2-d convolutions (TensorFlow's signatures, attrs,
// defaults and shape functions): Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, DepthwiseConv2dNative and the fused _FusedConv2D.
// Shared by every device plugin of the nn family: REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/conv_util.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
namespace cu = conv_util;

// Output dim of one spatial axis; -1 when the input dim is unknown.
Status SpatialOut(int64_t in, int64_t filter, int64_t dilation, int64_t stride, cu::Padding padding,
                  int64_t pad_before, int64_t pad_after, int64_t* out) {
  if (in < 0 || filter < 0) {
    *out = -1;
    return Status();
  }
  return cu::WindowedOutputSize(in, filter, dilation, stride, padding, out, &pad_before,
                                &pad_after);
}

PartialShape MakeShape(cu::Format f, int64_t n, int64_t h, int64_t w, int64_t c) {
  if (f == cu::Format::kNHWC) return PartialShape::Known({n, h, w, c});
  return PartialShape::Known({n, c, h, w});
}

// Conv2D / _FusedConv2D (TensorFlow's Conv2DShapeWithExplicitPadding), and
// DepthwiseConv2dNative when `depthwise`: the output shape into *out.
Status ConvOutputShape(InferenceContext* c, const char* op, bool depthwise, PartialShape* out) {
  PartialShape input, filter;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &input));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 4, &filter));
  cu::Conv2DWindow win;
  GR_RETURN_IF_ERROR_SDK(win.Init(*c, op));
  const cu::Format f = win.format;
  const int64_t n = input.dims[cu::DimIndex(f, 'N')];
  const int64_t in_h = input.dims[cu::DimIndex(f, 'H')];
  const int64_t in_w = input.dims[cu::DimIndex(f, 'W')];
  const int64_t in_c = input.dims[cu::DimIndex(f, 'C')];
  const int64_t f_h = filter.dims[0], f_w = filter.dims[1];
  const int64_t f_in = filter.dims[2], f_out = filter.dims[3];
  int64_t out_c = -1;
  if (depthwise) {
    int64_t merged = -1;
    Status s = sf::MergeDim(in_c, f_in, &merged);
    if (!s.ok()) {
      return errors::InvalidArgument(s.message(), " for the input depth and filter dim 2",
                                     ", with input shapes: ", sf::ShapeString(input), ", ",
                                     sf::ShapeString(filter), ".");
    }
    GR_RETURN_IF_ERROR_SDK(sf::MultiplyPartialDims(merged, f_out, &out_c));
  } else {
    if (in_c >= 0 && f_in >= 0) {
      if (f_in == 0) return errors::InvalidArgument("Depth of filter must not be 0");
      if (in_c % f_in != 0) {
        return errors::InvalidArgument("Depth of input (", in_c,
                                       ") is not a multiple of input depth of filter (", f_in,
                                       ")");
      }
      const int64_t groups = in_c / f_in;
      if (groups == 0) return errors::InvalidArgument("Number of groups must not be 0");
      if (f_out >= 0 && f_out % groups != 0) {
        return errors::InvalidArgument("Depth of output (", f_out,
                                       ") is not a multiple of the number of groups (", groups,
                                       ")");
      }
    }
    out_c = f_out;
  }
  int64_t out_h = -1, out_w = -1;
  GR_RETURN_IF_ERROR_SDK(SpatialOut(in_h, f_h, win.dilation_h, win.stride_h, win.padding,
                                    win.pad_top, win.pad_bottom, &out_h));
  GR_RETURN_IF_ERROR_SDK(SpatialOut(in_w, f_w, win.dilation_w, win.stride_w, win.padding,
                                    win.pad_left, win.pad_right, &out_w));
  *out = MakeShape(f, n, out_h, out_w, out_c);
  return Status();
}

Status ConvShape(InferenceContext* c, const char* op, bool depthwise) {
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(ConvOutputShape(c, op, depthwise, &out));
  c->set_output(0, out);
  return Status();
}

// _FusedConv2DPool: the convolution's shape, pooled by pool_ksize /
// pool_strides / pool_padding over H and W (MaxPool's shape rules).
Status ConvPoolShape(InferenceContext* c) {
  PartialShape conv;
  GR_RETURN_IF_ERROR_SDK(ConvOutputShape(c, "Conv2D", false, &conv));
  std::string format = "NHWC", padding_str;
  if (!c->GetAttr("data_format", &format).ok()) format = "NHWC";
  cu::Format f = cu::Format::kNHWC;
  GR_RETURN_IF_ERROR_SDK(cu::ParseFormat(format, &f));
  std::vector<int64_t> ksize, strides;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("pool_ksize", &ksize));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("pool_strides", &strides));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("pool_padding", &padding_str));
  if (ksize.size() != 4 || strides.size() != 4) {
    return errors::InvalidArgument("_FusedConv2DPool requires pool_ksize and pool_strides of 4 values");
  }
  cu::Padding padding = cu::Padding::kValid;
  GR_RETURN_IF_ERROR_SDK(cu::ParsePadding(padding_str, &padding));
  PartialShape out = conv;
  for (char d : {'H', 'W'}) {
    const int i = cu::DimIndex(f, d);
    GR_RETURN_IF_ERROR_SDK(cu::WindowedOutputDim(conv.dims[i], ksize[i], strides[i], padding, 0, 0, &out.dims[i]));
  }
  c->set_output(0, out);
  return Status();
}

// A 4-d shape from the int32 shape tensor at input `i`; rank 4 of unknown
// dims when its value is not known.
Status ShapeFromSizes(InferenceContext* c, int i, const char* what, PartialShape* out) {
  PartialShape sizes;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(i), 1, &sizes));
  TensorView v;
  if (!c->input_tensor(i, &v)) {
    *out = PartialShape::Known({-1, -1, -1, -1});
    return Status();
  }
  if (v.dtype() != GR_INT32 || v.NumElements() != 4) {
    return errors::InvalidArgument(what, " must be a 4-element int32 vector, but got ",
                                   v.NumElements(), " values");
  }
  std::vector<int64_t> d(4);
  for (int k = 0; k < 4; ++k) {
    d[k] = v.data<int32_t>()[k];
    if (d[k] < 0) return errors::InvalidArgument("Dimension ", k, " must be >= 0, got ", d[k]);
  }
  *out = PartialShape::Known(d);
  return Status();
}

Status Conv2DBackpropInputShape(InferenceContext* c) {
  cu::Conv2DWindow win;
  GR_RETURN_IF_ERROR_SDK(win.Init(*c, "Conv2DBackpropInput"));
  PartialShape sizes, filter, out_backprop;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &sizes));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 4, &filter));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 4, &out_backprop));
  if (sizes.dims[0] >= 0 && sizes.dims[0] != 4 && sizes.dims[0] != 2) {
    return errors::InvalidArgument(
        "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: ",
        sizes.dims[0]);
  }
  TensorView v;
  if (!c->input_tensor(0, &v)) {
    c->set_output(0, PartialShape::Known({-1, -1, -1, -1}));
    return Status();
  }
  if (v.dtype() != GR_INT32 || (v.NumElements() != 4 && v.NumElements() != 2)) {
    return errors::InvalidArgument(
        "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: ",
        v.NumElements());
  }
  const int32_t* p = v.data<int32_t>();
  for (int64_t k = 0; k < v.NumElements(); ++k) {
    if (p[k] < 0) return errors::InvalidArgument("Dimension ", k, " must be >= 0, got ", p[k]);
  }
  if (v.NumElements() == 4) {
    c->set_output(0, PartialShape::Known({p[0], p[1], p[2], p[3]}));
  } else {
    // Only the spatial sizes: batch from out_backprop, depth from the filter.
    const int64_t n = out_backprop.dims[cu::DimIndex(win.format, 'N')];
    c->set_output(0, MakeShape(win.format, n, p[0], p[1], filter.dims[2]));
  }
  return Status();
}

Status Conv2DBackpropFilterShape(InferenceContext* c) {
  cu::Conv2DWindow win;
  GR_RETURN_IF_ERROR_SDK(win.Init(*c, "Conv2DBackpropFilter"));
  PartialShape input, out_backprop, s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &input));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 4, &out_backprop));
  GR_RETURN_IF_ERROR_SDK(ShapeFromSizes(c, 1, "filter_sizes", &s));
  c->set_output(0, s);
  return Status();
}

// Backprops of DepthwiseConv2dNative: the output's shape is the value of
// input_sizes / filter_sizes.
Status SizesShape(InferenceContext* c, int sizes_input, const char* what) {
  cu::Conv2DWindow win;
  GR_RETURN_IF_ERROR_SDK(win.Init(*c, "DepthwiseConv2D"));
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(ShapeFromSizes(c, sizes_input, what, &s));
  c->set_output(0, s);
  return Status();
}

}  // namespace

REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ConvShape(c, "Conv2D", false); })
    .Doc("Computes a 2-D convolution given 4-D `input` and `filter` tensors.");

REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropInputShape)
    .Doc("Computes the gradients of convolution with respect to the input.");

REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropFilterShape)
    .Doc("Computes the gradients of convolution with respect to the filter.");

REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return ConvShape(c, "DepthwiseConv2D", true); })
    .Doc("Computes a 2-D depthwise convolution given 4-D `input` and `filter` tensors.");

REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return SizesShape(c, 0, "input_sizes"); })
    .Doc("Computes the gradients of depthwise convolution with respect to the input.");

REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn([](InferenceContext* c) { return SizesShape(c, 1, "filter_sizes"); })
    .Doc("Computes the gradients of depthwise convolution with respect to the filter.");

// The signature _FusedConv2D and _FusedConv2DPool share (the optimizer
// copies a _FusedConv2D's attrs into the _FusedConv2DPool it makes, so the
// two must not drift apart), with `t_attr` as the type attr.
static OpDefBuilder& FusedConvSignature(OpDefBuilder& b, const char* t_attr) {
  return b.Input("input: T")
      .Input("filter: T")
      .Input("args: num_args * T")
      .Output("output: T")
      .Attr(t_attr)
      .Attr("num_args: int >= 0")
      .Attr("strides: list(int)")
      .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]")
      .Attr("use_cudnn_on_gpu: bool = true")
      .Attr("fused_ops: list(string) = []")
      .Attr("epsilon: float = 0.0001")
      .Attr("leakyrelu_alpha: float = 0.2");
}

// TensorFlow's internal op, created by a graph rewrite (Conv2D + BiasAdd
// [+ activation]); not meant to be written by hand. TensorFlow lists T as
// {half, float, double}; bfloat16 is accepted here as well. (Registered
// through detail::AddOp, which REGISTER_OP wraps, to start from the shared
// signature.)
[[maybe_unused]] static OpDefBuilder& fused_conv2d_op =
    FusedConvSignature(detail::AddOp("_FusedConv2D"), "T: {half, float, double, bfloat16}")
        .SetShapeFn([](InferenceContext* c) { return ConvShape(c, "Conv2D", false); })
        .Doc("Conv2D fused with BiasAdd and an activation (internal; made by a graph pass).");

// graphrt's own internal op, made by the graph optimizer from a float
// _FusedConv2D whose only consumer is a MaxPool or AvgPool (SAME or VALID,
// pooling H and W only) in the same data_format: the kernel pools the
// convolution's rows while they are in cache. Not TensorFlow's; not meant
// to be written by hand.
[[maybe_unused]] static OpDefBuilder& fused_conv2d_pool_op =
    FusedConvSignature(detail::AddOp("_FusedConv2DPool"), "T: {float}")
        .Attr("pool_op: {'MaxPool', 'AvgPool'}")
        .Attr("pool_ksize: list(int) >= 4")
        .Attr("pool_strides: list(int) >= 4")
        .Attr("pool_padding: {'SAME', 'VALID'}")
        .SetShapeFn(ConvPoolShape)
        .Doc("_FusedConv2D followed by MaxPool or AvgPool (internal; made by graphrt's optimizer).");

}  // namespace sdk
}  // namespace graphrt
