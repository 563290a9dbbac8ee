// Op definitions of the image family (TensorFlow's signatures and shape
// functions): the resize ops and their gradients, CropAndResize and the
// non-max suppression ops of detection post-processing. REGISTER_OP only,
// no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// A known dim must equal `value` (TensorFlow's InferenceContext::WithValue).
Status DimWithValue(int64_t dim, int64_t value) {
  if (dim >= 0 && dim != value) return errors::InvalidArgument("Dimension must be ", value, " but is ", dim);
  return Status();
}

// The [height, width] int32 vector of input `index`: rank 1 with 2 elements;
// its values when it is a constant, unknown dims otherwise. A non-positive
// size stays unknown here so that the kernel reports it with its own message.
Status SizeFromInput(InferenceContext* c, int index, int64_t* height, int64_t* width) {
  PartialShape size;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(index), 1, &size));
  GR_RETURN_IF_ERROR_SDK(DimWithValue(size.dims[0], 2));
  *height = *width = -1;
  TensorView t;
  if (c->input_tensor(index, &t) && t.dtype() == GR_INT32 && t.NumElements() == 2) {
    const int32_t* v = t.data<int32_t>();
    if (v[0] > 0) *height = v[0];
    if (v[1] > 0) *width = v[1];
  }
  return Status();
}

// [batch, height, width, channels] with height and width from input
// `size_index` (TensorFlow's SetOutputToSizedImage).
Status SetOutputToSizedImage(InferenceContext* c, int64_t batch, int size_index, int64_t channels) {
  int64_t height = -1, width = -1;
  GR_RETURN_IF_ERROR_SDK(SizeFromInput(c, size_index, &height, &width));
  c->set_output(0, PartialShape::Known({batch, height, width, channels}));
  return Status();
}

// ResizeBilinear, ResizeNearestNeighbor: images [b,h,w,c] and size [2];
// ResizeNearestNeighborGrad: grads [b,h,w,c] and the original size.
Status ResizeShape(InferenceContext* c) {
  PartialShape in;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &in));
  return SetOutputToSizedImage(c, in.dims[0], 1, in.dims[3]);
}

// The gradient has the original image's shape.
Status OriginalImageShape(InferenceContext* c) {
  c->set_output(0, c->input(1));
  return Status();
}

Status CropAndResizeShape(InferenceContext* c) {
  PartialShape image, boxes, box_ind;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 4, &image));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 2, &boxes));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 1, &box_ind));
  int64_t num_boxes;
  GR_RETURN_IF_ERROR_SDK(sf::MergeDim(boxes.dims[0], box_ind.dims[0], &num_boxes));
  GR_RETURN_IF_ERROR_SDK(DimWithValue(boxes.dims[1], 4));
  return SetOutputToSizedImage(c, num_boxes, 3, image.dims[3]);
}

// The image's gradient: the shape image_size holds (a 4-vector).
Status CropAndResizeGradImageShape(InferenceContext* c) {
  PartialShape size;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(3), 1, &size));
  std::vector<int64_t> dims(4, -1);
  TensorView value;
  if (c->input_tensor(3, &value)) {
    if (value.NumElements() != 4) return errors::InvalidArgument("image_size must have 4 elements");
    for (int i = 0; i < 4; ++i) dims[i] = value.data<int32_t>()[i] >= 0 ? value.data<int32_t>()[i] : -1;
  }
  c->set_output(0, PartialShape::Known(dims));
  return Status();
}

// The boxes' gradient: the boxes' shape.
Status CropAndResizeGradBoxesShape(InferenceContext* c) {
  PartialShape boxes;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 2, &boxes));
  c->set_output(0, boxes);
  return Status();
}

// boxes [n,4], scores [n], and `scalars` scalar inputs after them.
Status NmsInputs(InferenceContext* c, int scalars) {
  PartialShape boxes, scores, scalar;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 2, &boxes));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &scores));
  for (int i = 0; i < scalars; ++i) GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2 + i), 0, &scalar));
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(sf::MergeDim(boxes.dims[0], scores.dims[0], &unused));
  GR_RETURN_IF_ERROR_SDK(DimWithValue(boxes.dims[1], 4));
  c->set_output(0, PartialShape::Known({-1}));
  return Status();
}

Status NmsV2Shape(InferenceContext* c) { return NmsInputs(c, 2); }
Status NmsV3Shape(InferenceContext* c) { return NmsInputs(c, 3); }

Status NmsV4Shape(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(NmsInputs(c, 3));
  bool pad = false;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("pad_to_max_output_size", &pad));
  if (pad) {
    // Padded: exactly max_output_size indices, when that is a known constant.
    int64_t size = -1;
    TensorView t;
    if (c->input_tensor(2, &t) && t.dtype() == GR_INT32 && t.NumElements() == 1 && t.data<int32_t>()[0] >= 0)
      size = t.data<int32_t>()[0];
    c->set_output(0, PartialShape::Known({size}));
  }
  c->set_output(1, PartialShape::Known({}));
  return Status();
}

}  // namespace

REGISTER_OP("ResizeBilinear")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShape)
    .Doc("Resize `images` to `size` using bilinear interpolation.");

REGISTER_OP("ResizeBilinearGrad")
    .Input("grads: float")
    .Input("original_image: T")
    .Output("output: T")
    .Attr("T: {float, bfloat16, half, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(OriginalImageShape)
    .Doc("Computes the gradient of bilinear interpolation.");

REGISTER_OP("ResizeNearestNeighbor")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: T")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShape)
    .Doc("Resize `images` to `size` using nearest neighbor interpolation.");

REGISTER_OP("ResizeNearestNeighborGrad")
    .Input("grads: T")
    .Input("size: int32")
    .Output("output: T")
    .Attr("T: {uint8, int8, int32, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShape)
    .Doc("Computes the gradient of nearest neighbor interpolation.");

REGISTER_OP("CropAndResize")
    .Input("image: T")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Input("crop_size: int32")
    .Output("crops: float")
    .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
    .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
    .Attr("extrapolation_value: float = 0")
    .SetShapeFn(CropAndResizeShape)
    .Doc("Extracts crops from the input image tensor and resizes them.");

// The gradients tf.image.crop_and_resize's backprop builds.
REGISTER_OP("CropAndResizeGradImage")
    .Input("grads: float")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Input("image_size: int32")
    .Output("output: T")
    .Attr("T: {float, half, double}")
    .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
    .SetShapeFn(CropAndResizeGradImageShape)
    .Doc("Computes the gradient of the crop_and_resize op wrt the input image tensor.");

REGISTER_OP("CropAndResizeGradBoxes")
    .Input("grads: float")
    .Input("image: T")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Output("output: float")
    .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
    .Attr("method: {'bilinear'} = 'bilinear'")
    .SetShapeFn(CropAndResizeGradBoxesShape)
    .Doc("Computes the gradient of the crop_and_resize op wrt the input boxes tensor.");

REGISTER_OP("NonMaxSuppressionV2")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .SetShapeFn(NmsV2Shape)
    .Doc("Greedily selects a subset of bounding boxes in descending order of score.");

REGISTER_OP("NonMaxSuppressionV3")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .SetShapeFn(NmsV3Shape)
    .Doc("Greedily selects a subset of bounding boxes in descending order of score.");

REGISTER_OP("NonMaxSuppressionV4")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .SetShapeFn(NmsV4Shape)
    .Doc("Greedily selects a subset of bounding boxes in descending order of score.");

}  // namespace sdk
}  // namespace graphrt
