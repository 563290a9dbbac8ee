// CPU kernel of CropAndResize: crops [n, crop_h, crop_w, depth] (float)
// sampled from image [batch, h, w, depth] inside normalized boxes
// (y1, x1, y2, x2), bilinear or nearest, as TensorFlow computes them:
// - crop row y samples image row y1 * (h - 1) + y * (y2 - y1) * (h - 1) /
//   (crop_h - 1); a one-row crop samples the box centre 0.5 * (y1 + y2) *
//   (h - 1) (columns alike); y1 > y2 flips the crop;
// - positions outside [0, h - 1] take extrapolation_value;
// - nearest rounds half away from zero.
// Boxes must be finite and box_ind in [0, batch), both checked before any
// work (TensorFlow's errors).
//
// And its gradients, as TensorFlow's CPU kernels compute them:
// CropAndResizeGradImage adds each crop element's gradient into the image
// pixels it was interpolated from, with the interpolation weights (nearest:
// into the one pixel); CropAndResizeGradBoxes (bilinear) sums, over every
// sampled position, the gradient times the bilinear surface's slope along
// y and x times d(position)/d(coordinate); a position on a whole pixel has
// no slope along that axis (its floor and ceiling are the same pixel), as
// in TensorFlow. Crop positions outside the image contribute nothing to
// either.
#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cpu/parallel.h"
#include "image/cpu/image_util.h"

namespace graphrt {
namespace sdk {
namespace {

using image::ToFloat;

struct Geometry {
  int64_t height, width, depth, crop_h, crop_w;
};

// The 4-D image input's batch and geometry (crop size left 0), with
// TensorFlow's messages.
Status ImageGeometry(const TensorView& image, int64_t* batch, Geometry* g) {
  if (image.rank() != 4) return errors::InvalidArgument("input image must be 4-D", image.ShapeString());
  *batch = image.dim(0);
  *g = Geometry{image.dim(1), image.dim(2), image.dim(3), 0, 0};
  if (g->height <= 0 || g->width <= 0) return errors::InvalidArgument("image dimensions must be positive");
  return Status();
}

// TensorFlow's shape checks of boxes and box_ind, with its messages.
Status CheckBoxes(const TensorView& boxes, const TensorView& box_ind, int64_t* num_boxes) {
  if (boxes.rank() != 2) return errors::InvalidArgument("boxes must be 2-D, got: ", boxes.ShapeString());
  if (box_ind.rank() != 1)
    return errors::InvalidArgument("box_indices must be rank 1 but is shape ", box_ind.ShapeString());
  *num_boxes = 0;
  if (boxes.NumElements() == 0 && box_ind.NumElements() == 0) return Status();
  *num_boxes = boxes.dim(0);
  if (boxes.dim(1) != 4) return errors::InvalidArgument("boxes must have 4 columns");
  if (box_ind.dim(0) != *num_boxes) return errors::InvalidArgument("box_index has incompatible shape");
  return Status();
}

// box_ind in [0, batch) and finite boxes, checked before any work.
Status CheckBoxValues(const TensorView& boxes, const TensorView& box_ind, int64_t num_boxes, int64_t batch) {
  const int32_t* ind = box_ind.data<int32_t>();
  for (int64_t b = 0; b < num_boxes; ++b) {
    if (ind[b] < 0 || ind[b] >= batch) return errors::OutOfRange("box_index has values outside [0, batch_size)");
  }
  const float* bx = boxes.data<float>();
  for (int64_t i = 0; i < num_boxes * 4; ++i) {
    // Non-finite boxes would turn into out-of-range (or undefined) indices.
    if (!std::isfinite(bx[i])) return errors::InvalidArgument("Boxes contains at least one element that is not finite");
  }
  return Status();
}

// Image position of crop index i along an axis of `size` pixels, in float
// as TensorFlow computes it.
float Position(int64_t i, int64_t crop, int64_t size, float lo, float hi, float scale) {
  if (crop > 1) return lo * static_cast<float>(size - 1) + static_cast<float>(i) * scale;
  return static_cast<float>(0.5 * (lo + hi) * static_cast<double>(size - 1));
}

// The sampling of one box along one axis: the scale between crop steps.
float AxisScale(int64_t crop, int64_t size, float lo, float hi) {
  return crop > 1 ? (hi - lo) * static_cast<float>(size - 1) / static_cast<float>(crop - 1) : 0;
}

bool Inside(float pos, int64_t size) { return pos >= 0 && pos <= static_cast<float>(size - 1); }

// One sampled crop position of one box: the image pixels around it and the
// interpolation weights (bilinear), or the nearest pixel.
struct Sample {
  int64_t top, bottom, left, right, nearest_y, nearest_x;
  float y_lerp, x_lerp;
};

// Calls f(y, x, sample) for each crop position of `box` that lies inside
// the image, in row-major crop order.
template <typename F>
void ForEachSample(const Geometry& g, const float* box, F&& f) {
  const float y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];
  const float h_scale = AxisScale(g.crop_h, g.height, y1, y2);
  const float w_scale = AxisScale(g.crop_w, g.width, x1, x2);
  for (int64_t y = 0; y < g.crop_h; ++y) {
    const float in_y = Position(y, g.crop_h, g.height, y1, y2, h_scale);
    if (!Inside(in_y, g.height)) continue;
    Sample s;
    s.top = static_cast<int64_t>(std::floor(in_y));
    s.bottom = static_cast<int64_t>(std::ceil(in_y));
    s.nearest_y = static_cast<int64_t>(std::round(in_y));
    s.y_lerp = in_y - static_cast<float>(s.top);
    for (int64_t x = 0; x < g.crop_w; ++x) {
      const float in_x = Position(x, g.crop_w, g.width, x1, x2, w_scale);
      if (!Inside(in_x, g.width)) continue;
      s.left = static_cast<int64_t>(std::floor(in_x));
      s.right = static_cast<int64_t>(std::ceil(in_x));
      s.nearest_x = static_cast<int64_t>(std::round(in_x));
      s.x_lerp = in_x - static_cast<float>(s.left);
      f(y, x, s);
    }
  }
}

// The `method` attr of CropAndResize and CropAndResizeGradImage: whether it
// is "bilinear" (else "nearest"; anything else is refused).
Status ReadBilinear(OpKernelConstruction* c, bool* bilinear) {
  std::string method;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("method", &method));
  if (method != "bilinear" && method != "nearest")
    return errors::InvalidArgument("method must be 'bilinear' or 'nearest', not '", method, "'");
  *bilinear = method == "bilinear";
  return Status();
}

class CropAndResizeOp : public OpKernel {
 public:
  explicit CropAndResizeOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadBilinear(c, &bilinear_));
    OP_REQUIRES_OK(c, c->GetAttr("extrapolation_value", &extrapolation_value_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView image = ctx->input(0);
    const TensorView boxes = ctx->input(1);
    const TensorView box_ind = ctx->input(2);
    const TensorView crop_size = ctx->input(3);
    int64_t batch = 0;
    Geometry g{};
    OP_REQUIRES_OK(ctx, ImageGeometry(image, &batch, &g));
    const int64_t height = g.height, width = g.width, depth = g.depth;
    int64_t num_boxes = 0;
    OP_REQUIRES_OK(ctx, CheckBoxes(boxes, box_ind, &num_boxes));
    OP_REQUIRES(ctx, crop_size.rank() == 1, errors::InvalidArgument("crop_size must be 1-D", crop_size.ShapeString()));
    OP_REQUIRES(ctx, crop_size.dim(0) == 2,
                errors::InvalidArgument("crop_size must have two elements", crop_size.ShapeString()));
    const int64_t crop_h = crop_size.data<int32_t>()[0], crop_w = crop_size.data<int32_t>()[1];
    OP_REQUIRES(ctx, crop_h > 0 && crop_w > 0, errors::InvalidArgument("crop dimensions must be positive"));
    g.crop_h = crop_h;
    g.crop_w = crop_w;
    const std::vector<int64_t> dims = {num_boxes, crop_h, crop_w, depth};
    int64_t n = 0;
    TensorView out;
    OP_REQUIRES_OK(ctx, image::AllocateChecked(ctx, 0, dims, &out, &n));
    OP_REQUIRES_OK(ctx, CheckBoxValues(boxes, box_ind, num_boxes, batch));
    const int32_t* ind = box_ind.data<int32_t>();
    const float* bx = boxes.data<float>();
    if (n == 0) return;
    const bool ok = DispatchReal(image.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* img = image.data<T>();
      float* o = out.data<float>();
      ForRange(ctx, num_boxes, n, crop_h * crop_w * depth * 8, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          CropBox(g, img + ind[b] * height * width * depth, bx + 4 * b, o + b * crop_h * crop_w * depth);
        }
      });
    });
    OP_REQUIRES(ctx, ok, image::UnsupportedType("image", image.dtype()));
  }

 private:
  // Positions outside the image keep extrapolation_value.
  template <typename T>
  void CropBox(const Geometry& g, const T* img, const float* box, float* out) const {
    const int64_t D = g.depth;
    std::fill_n(out, g.crop_h * g.crop_w * D, extrapolation_value_);
    const bool bilinear = bilinear_;
    ForEachSample(g, box, [&](int64_t y, int64_t x, const Sample& s) {
      float* o = out + (y * g.crop_w + x) * D;
      if (!bilinear) {
        const T* src = img + (s.nearest_y * g.width + s.nearest_x) * D;
        for (int64_t d = 0; d < D; ++d) o[d] = ToFloat(src[d]);
        return;
      }
      const T* tl = img + (s.top * g.width + s.left) * D;
      const T* tr = img + (s.top * g.width + s.right) * D;
      const T* bl = img + (s.bottom * g.width + s.left) * D;
      const T* br = img + (s.bottom * g.width + s.right) * D;
      for (int64_t d = 0; d < D; ++d) {
        const float t = ToFloat(tl[d]) + (ToFloat(tr[d]) - ToFloat(tl[d])) * s.x_lerp;
        const float bt = ToFloat(bl[d]) + (ToFloat(br[d]) - ToFloat(bl[d])) * s.x_lerp;
        o[d] = t + (bt - t) * s.y_lerp;
      }
    });
  }

  bool bilinear_ = true;
  float extrapolation_value_ = 0;
};


// grads [num_boxes, crop_h, crop_w, depth] (float), checked against the
// boxes and `depth`; *g gets the crop geometry.
Status CheckGrads(const TensorView& grads, int64_t num_boxes, int64_t depth, Geometry* g) {
  if (grads.rank() != 4) return errors::InvalidArgument("grads image must be 4-D", grads.ShapeString());
  if (grads.dim(1) <= 0 || grads.dim(2) <= 0) return errors::InvalidArgument("grads dimensions must be positive");
  if (grads.dim(0) != num_boxes) return errors::InvalidArgument("boxes and grads have incompatible shape");
  if (grads.dim(3) != depth) return errors::InvalidArgument("image_size and grads are incompatible");
  g->crop_h = grads.dim(1);
  g->crop_w = grads.dim(2);
  g->depth = depth;
  return Status();
}

// CropAndResizeGradImage: the image's gradient, [batch, h, w, depth] as
// image_size says, of element type T.
class CropAndResizeGradImageOp : public OpKernel {
 public:
  explicit CropAndResizeGradImageOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadBilinear(c, &bilinear_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView grads = ctx->input(0);
    const TensorView boxes = ctx->input(1);
    const TensorView box_ind = ctx->input(2);
    const TensorView image_size = ctx->input(3);
    OP_REQUIRES(ctx, image_size.rank() == 1 && image_size.NumElements() == 4,
                errors::InvalidArgument("image_size must be 1-D with 4 elements", image_size.ShapeString()));
    const int32_t* size = image_size.data<int32_t>();
    const int64_t batch = size[0];
    Geometry g{size[1], size[2], size[3], 0, 0};
    OP_REQUIRES(ctx, batch > 0 && g.height > 0 && g.width > 0 && g.depth > 0,
                errors::InvalidArgument("image dimensions must be positive"));
    int64_t num_boxes = 0;
    OP_REQUIRES_OK(ctx, CheckBoxes(boxes, box_ind, &num_boxes));
    OP_REQUIRES_OK(ctx, CheckGrads(grads, num_boxes, g.depth, &g));
    OP_REQUIRES_OK(ctx, CheckBoxValues(boxes, box_ind, num_boxes, batch));
    int64_t n = 0;
    TensorView out;
    OP_REQUIRES_OK(ctx, image::AllocateChecked(ctx, 0, {batch, g.height, g.width, g.depth}, &out, &n));
    bool ok = true;
    switch (out.dtype()) {
      case GR_FLOAT: Run<float>(ctx, g, grads, boxes, box_ind, n, out.data<float>()); break;
      case GR_DOUBLE: Run<double>(ctx, g, grads, boxes, box_ind, n, out.data<double>()); break;
      case GR_HALF: Run<Eigen::half>(ctx, g, grads, boxes, box_ind, n, out.data<Eigen::half>()); break;
      default: ok = false;
    }
    OP_REQUIRES(ctx, ok, image::UnsupportedType("output", out.dtype()));
  }

 private:
  // Channels split over the pool (every box writes any pixel): each task
  // adds all boxes into its channels, in TensorFlow's order (box, row,
  // column), in T for float and double; half adds in float and rounds once.
  template <typename T>
  void Run(OpKernelContext* ctx, const Geometry& g, const TensorView& grads, const TensorView& boxes,
           const TensorView& box_ind, int64_t n, T* out) const {
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const int64_t D = g.depth, num_boxes = grads.dim(0);
    const float* gr = grads.data<float>();
    const float* bx = boxes.data<float>();
    const int32_t* ind = box_ind.data<int32_t>();
    const bool bilinear = bilinear_;
    const int64_t work = num_boxes * g.crop_h * g.crop_w * D * 4 + n;
    ForRange(ctx, D, work, work / D + 1, [&](int64_t d0, int64_t d1) {
      std::vector<Acc> buffer;
      Acc* acc;
      int64_t stride;  // between pixels of acc
      if constexpr (std::is_same_v<T, Acc>) {
        acc = reinterpret_cast<Acc*>(out) + d0;
        stride = D;
        for (int64_t p = 0; p < n / D; ++p) std::fill_n(acc + p * D, d1 - d0, Acc(0));
      } else {
        buffer.assign(static_cast<size_t>(n / D * (d1 - d0)), Acc(0));
        acc = buffer.data();
        stride = d1 - d0;
      }
      const int64_t channels = d1 - d0;
      for (int64_t b = 0; b < num_boxes; ++b) {
        Acc* image = acc + ind[b] * g.height * g.width * stride;
        const float* box_grads = gr + b * g.crop_h * g.crop_w * D + d0;
        ForEachSample(g, bx + 4 * b, [&](int64_t y, int64_t x, const Sample& s) {
          const float* gd = box_grads + (y * g.crop_w + x) * D;
          if (!bilinear) {
            Acc* px = image + (s.nearest_y * g.width + s.nearest_x) * stride;
            for (int64_t d = 0; d < channels; ++d) px[d] += static_cast<Acc>(gd[d]);
            return;
          }
          Acc* tl = image + (s.top * g.width + s.left) * stride;
          Acc* tr = image + (s.top * g.width + s.right) * stride;
          Acc* bl = image + (s.bottom * g.width + s.left) * stride;
          Acc* br = image + (s.bottom * g.width + s.right) * stride;
          for (int64_t d = 0; d < channels; ++d) {
            const float dtop = (1 - s.y_lerp) * gd[d];
            tl[d] += static_cast<Acc>((1 - s.x_lerp) * dtop);
            tr[d] += static_cast<Acc>(s.x_lerp * dtop);
            const float dbottom = s.y_lerp * gd[d];
            bl[d] += static_cast<Acc>((1 - s.x_lerp) * dbottom);
            br[d] += static_cast<Acc>(s.x_lerp * dbottom);
          }
        });
      }
      if constexpr (!std::is_same_v<T, Acc>) {
        for (int64_t p = 0; p < n / D; ++p)
          for (int64_t d = 0; d < channels; ++d) out[p * D + d0 + d] = static_cast<T>(acc[p * stride + d]);
      }
    });
  }

  bool bilinear_ = true;
};

// CropAndResizeGradBoxes (bilinear): the boxes' gradient [num_boxes, 4].
class CropAndResizeGradBoxesOp : public OpKernel {
 public:
  explicit CropAndResizeGradBoxesOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string method;
    OP_REQUIRES_OK(c, c->GetAttr("method", &method));
    OP_REQUIRES(c, method == "bilinear", errors::InvalidArgument("method must be 'bilinear', not '", method, "'"));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView grads = ctx->input(0);
    const TensorView image = ctx->input(1);
    const TensorView boxes = ctx->input(2);
    const TensorView box_ind = ctx->input(3);
    int64_t batch = 0;
    Geometry g{};
    OP_REQUIRES_OK(ctx, ImageGeometry(image, &batch, &g));
    int64_t num_boxes = 0;
    OP_REQUIRES_OK(ctx, CheckBoxes(boxes, box_ind, &num_boxes));
    OP_REQUIRES_OK(ctx, CheckGrads(grads, num_boxes, g.depth, &g));
    OP_REQUIRES_OK(ctx, CheckBoxValues(boxes, box_ind, num_boxes, batch));
    TensorView out;
    int64_t n = 0;
    OP_REQUIRES_OK(ctx, image::AllocateChecked(ctx, 0, {num_boxes, 4}, &out, &n));
    float* o = out.data<float>();
    std::fill_n(o, n, 0.f);
    const bool ok = DispatchReal(image.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* img = image.data<T>();
      const float* gr = grads.data<float>();
      const float* bx = boxes.data<float>();
      const int32_t* ind = box_ind.data<int32_t>();
      const int64_t per_box = g.crop_h * g.crop_w * g.depth;
      ForRange(ctx, num_boxes, num_boxes * per_box, per_box * 8, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) BoxGrad(g, img + ind[b] * g.height * g.width * g.depth, bx + 4 * b,
                                                  gr + b * per_box, o + 4 * b);
      });
    });
    OP_REQUIRES(ctx, ok, image::UnsupportedType("image", image.dtype()));
  }

 private:
  // d(crop)/d(box): the bilinear surface's slopes along y and x at each
  // sample, times the gradient, times d(position)/d(coordinate): for
  // position = y1 (h - 1) + y (y2 - y1) (h - 1) / (crop_h - 1), that is
  // (h - 1) - y r for y1 and y r for y2 (r = (h - 1) / (crop_h - 1)); a
  // one-row crop samples 0.5 (y1 + y2) (h - 1), so (h - 1) / 2 for both.
  template <typename T>
  static void BoxGrad(const Geometry& g, const T* img, const float* box, const float* grads, float* out) {
    const float h_ratio = g.crop_h > 1 ? static_cast<float>(g.height - 1) / static_cast<float>(g.crop_h - 1) : 0;
    const float w_ratio = g.crop_w > 1 ? static_cast<float>(g.width - 1) / static_cast<float>(g.crop_w - 1) : 0;
    const int64_t D = g.depth;
    ForEachSample(g, box, [&](int64_t y, int64_t x, const Sample& s) {
      const T* tl = img + (s.top * g.width + s.left) * D;
      const T* tr = img + (s.top * g.width + s.right) * D;
      const T* bl = img + (s.bottom * g.width + s.left) * D;
      const T* br = img + (s.bottom * g.width + s.right) * D;
      const float* gd = grads + (y * g.crop_w + x) * D;
      for (int64_t d = 0; d < D; ++d) {
        const float top_left = ToFloat(tl[d]), top_right = ToFloat(tr[d]);
        const float bottom_left = ToFloat(bl[d]), bottom_right = ToFloat(br[d]);
        const float slope_y = ((1 - s.x_lerp) * (bottom_left - top_left) + s.x_lerp * (bottom_right - top_right)) * gd[d];
        const float slope_x = ((1 - s.y_lerp) * (top_right - top_left) + s.y_lerp * (bottom_right - bottom_left)) * gd[d];
        if (g.crop_h > 1) {
          out[0] += slope_y * (static_cast<float>(g.height - 1) - static_cast<float>(y) * h_ratio);
          out[2] += slope_y * (static_cast<float>(y) * h_ratio);
        } else {
          out[0] += slope_y * 0.5f * static_cast<float>(g.height - 1);
          out[2] += slope_y * 0.5f * static_cast<float>(g.height - 1);
        }
        if (g.crop_w > 1) {
          out[1] += slope_x * (static_cast<float>(g.width - 1) - static_cast<float>(x) * w_ratio);
          out[3] += slope_x * (static_cast<float>(x) * w_ratio);
        } else {
          out[1] += slope_x * 0.5f * static_cast<float>(g.width - 1);
          out[3] += slope_x * 0.5f * static_cast<float>(g.width - 1);
        }
      }
    });
  }
};

REGISTER_KERNEL(Name("CropAndResize").Device(DEVICE_CPU).HostMemory("crop_size"), CropAndResizeOp);
REGISTER_KERNEL(Name("CropAndResizeGradImage").Device(DEVICE_CPU).HostMemory("image_size"), CropAndResizeGradImageOp);
REGISTER_KERNEL(Name("CropAndResizeGradBoxes").Device(DEVICE_CPU), CropAndResizeGradBoxesOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
