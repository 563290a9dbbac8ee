// CPU kernel of ImageSummary: up to max_images images of a [batch, height,
// width, channels] tensor as PNG (libpng) in Summary.Image values, with
// TensorFlow's tags, float normalization and bad_color for non-finite
// pixels (kernels/summary_image_op.cc; tf_proto_facts.md §10).
#include <graphrt/sdk/sdk.h>
#include <png.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/summary/summary.pb.h"
#include "summary/cpu/summary_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace pb = ::graphrt::summary;

// PNG of an 8-bit image of `channels` (1 gray, 3 RGB, 4 RGBA) interleaved
// samples per pixel, through libpng's simplified API (zlib's default level,
// as TensorFlow).
Status EncodePng(const uint8_t* pixels, int width, int height, int channels, std::string* out) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = channels == 1 ? PNG_FORMAT_GRAY : channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels, 0, nullptr))
    return errors::Internal("PNG encoding failed: ", image.message);
  out->resize(size);
  if (!png_image_write_to_memory(&image, out->data(), &size, 0, pixels, 0, nullptr))
    return errors::Internal("PNG encoding failed: ", image.message);
  out->resize(size);
  return Status();
}

// TensorFlow's mapping of a float image into uint8: values all >= 0 scale by
// 255 / max; otherwise by 127 / max|v| around 128; a (near-)zero range maps
// to 0 (or 128). The range ignores pixels with a non-finite channel, which
// become bad_color. The arithmetic is done in T, as TensorFlow's.
template <typename T>
void NormalizeImage(const T* values, int64_t hw, int depth, const uint8_t* bad_color, uint8_t* out) {
  auto finite_pixel = [&](int64_t i) {
    for (int j = 0; j < depth; ++j)
      if (!std::isfinite(static_cast<float>(values[i * depth + j]))) return false;
    return true;
  };
  float image_min = INFINITY, image_max = -INFINITY;
  for (int64_t i = 0; i < hw; ++i) {
    if (!finite_pixel(i)) continue;
    for (int j = 0; j < depth; ++j) {
      const float v = static_cast<float>(values[i * depth + j]);
      image_min = std::min(image_min, v);
      image_max = std::max(image_max, v);
    }
  }
  constexpr float kZeroThreshold = 1e-6f;
  T scale, offset;
  if (image_min < 0) {
    const float max_val = std::max(std::abs(image_min), std::abs(image_max));
    scale = T(max_val < kZeroThreshold ? 0.0f : 127.0f / max_val);
    offset = T(128.0f);
  } else {
    scale = T(image_max < kZeroThreshold ? 0.0f : 255.0f / image_max);
    offset = T(0.0f);
  }
  for (int64_t i = 0; i < hw; ++i) {
    const bool finite = finite_pixel(i);
    for (int j = 0; j < depth; ++j) {
      if (!finite) {
        out[i * depth + j] = bad_color[j];
        continue;
      }
      const T scaled = values[i * depth + j] * scale + offset;
      // Truncated as TensorFlow's cast; the clamp only guards the cast
      // against a rounding just past 255.
      const float f = std::min(255.0f, std::max(0.0f, static_cast<float>(scaled)));
      out[i * depth + j] = static_cast<uint8_t>(f);
    }
  }
}

class ImageSummaryOp : public OpKernel {
 public:
  explicit ImageSummaryOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t max_images = 3;
    OP_REQUIRES_OK(c, c->GetAttr("max_images", &max_images));
    OP_REQUIRES(c, max_images >= 1 && max_images <= INT32_MAX,
                errors::InvalidArgument("max_images must be in [1, 2^31), got ", max_images));
    max_images_ = max_images;
    Tensor bad;
    OP_REQUIRES_OK(c, c->GetAttr("bad_color", &bad));
    const TensorView v = bad.view();
    OP_REQUIRES(c, v.dtype() == GR_UINT8 && v.rank() == 1,
                errors::InvalidArgument("bad_color must be a uint8 vector, got ", DataTypeName(v.dtype()), " ",
                                        v.ShapeString()));
    bad_color_.assign(v.data<uint8_t>(), v.data<uint8_t>() + v.NumElements());
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView tag = ctx->input(0);
    const TensorView tensor = ctx->input(1);
    OP_REQUIRES(ctx, tag.IsScalar(), errors::InvalidArgument("Tags must be a scalar"));
    OP_REQUIRES(ctx, tensor.rank() == 4 && (tensor.dim(3) == 1 || tensor.dim(3) == 3 || tensor.dim(3) == 4),
                errors::InvalidArgument("Tensor must be 4-D with last dim 1, 3, or 4, not ", tensor.ShapeString()));
    int64_t hw = 0;
    OP_REQUIRES_OK(ctx, MultiplyDims(tensor.dim(1), tensor.dim(2), &hw));
    // TensorFlow's limits (PNG and int arithmetic).
    OP_REQUIRES(ctx, tensor.dim(0) < (int64_t{1} << 31) && tensor.dim(1) < (int64_t{1} << 31) &&
                         tensor.dim(2) < (int64_t{1} << 31) && hw < (int64_t{1} << 29),
                errors::InvalidArgument("Tensor too large for summary ", tensor.ShapeString()));
    const int depth = static_cast<int>(tensor.dim(3));
    OP_REQUIRES(ctx, hw > 0, errors::InvalidArgument("input tensor must have non-zero dims. Found: [", tensor.dim(0), ", ",
                                                     tensor.dim(1), ", ", tensor.dim(2), ", ", depth, "]."));
    const DataType dt = tensor.dtype();
    OP_REQUIRES(ctx, dt == GR_UINT8 || dt == GR_FLOAT || dt == GR_HALF || dt == GR_DOUBLE,
                errors::InvalidArgument("ImageSummary does not take ", DataTypeName(dt), " images"));
    if (dt != GR_UINT8) {
      OP_REQUIRES(ctx, static_cast<int64_t>(bad_color_.size()) >= depth,
                  errors::InvalidArgument("expected depth <= bad_color.size, got depth = ", depth,
                                          ", bad_color.size = ", bad_color_.size()));
    }
    const std::string_view base = summary_util::StringAt(tag, 0);
    const int64_t n = std::min(max_images_, tensor.dim(0));
    const int64_t image_elems = hw * depth;  // < 2^31: checked above
    std::vector<uint8_t> pixels(dt == GR_UINT8 ? 0 : static_cast<size_t>(image_elems));
    pb::Summary s;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* image = nullptr;
      switch (dt) {
        case GR_UINT8: image = tensor.data<uint8_t>() + i * image_elems; break;
        case GR_FLOAT: NormalizeImage(tensor.data<float>() + i * image_elems, hw, depth, bad_color_.data(), pixels.data()); break;
        case GR_DOUBLE: NormalizeImage(tensor.data<double>() + i * image_elems, hw, depth, bad_color_.data(), pixels.data()); break;
        default: NormalizeImage(tensor.data<Eigen::half>() + i * image_elems, hw, depth, bad_color_.data(), pixels.data()); break;
      }
      if (image == nullptr) image = pixels.data();
      pb::Summary::Value* v = s.add_value();
      // The tag depends on max_images, not on how many images there are.
      v->set_tag(std::string(base) + (max_images_ > 1 ? "/image/" + std::to_string(i) : "/image"));
      pb::Summary::Image* si = v->mutable_image();
      si->set_height(static_cast<int32_t>(tensor.dim(1)));
      si->set_width(static_cast<int32_t>(tensor.dim(2)));
      si->set_colorspace(depth);
      OP_REQUIRES_OK(ctx, EncodePng(image, static_cast<int>(tensor.dim(2)), static_cast<int>(tensor.dim(1)), depth,
                                    si->mutable_encoded_image_string()));
    }
    summary_util::OutputSummary(ctx, s);
  }

 private:
  int64_t max_images_ = 3;
  std::vector<uint8_t> bad_color_;
};

REGISTER_KERNEL(Name("ImageSummary").Device(DEVICE_CPU), ImageSummaryOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
