// Window geometry shared by convolutions and poolings (TensorFlow's rules):
// padding / data_format attrs, explicit_paddings validation, and the
// windowed output size with the padding it implies (known sizes for kernels,
// possibly unknown ones for shape functions). No oneDNN, no Eigen:
// usable from op definitions (shape functions) and from kernels alike.
//
//   #include "common/cpu/conv_util.h"
#ifndef GRAPHRT_OPS_COMMON_CPU_CONV_UTIL_H_
#define GRAPHRT_OPS_COMMON_CPU_CONV_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace conv_util {

enum class Padding { kValid, kSame, kExplicit };
enum class Format { kNHWC, kNCHW };

inline Status ParsePadding(const std::string& s, Padding* p) {
  if (s == "VALID") {
    *p = Padding::kValid;
  } else if (s == "SAME") {
    *p = Padding::kSame;
  } else if (s == "EXPLICIT") {
    *p = Padding::kExplicit;
  } else {
    return errors::InvalidArgument("Invalid padding: ", s);
  }
  return Status();
}

inline Status ParseFormat(const std::string& s, Format* f) {
  if (s == "NHWC") {
    *f = Format::kNHWC;
  } else if (s == "NCHW") {
    *f = Format::kNCHW;
  } else {
    return errors::InvalidArgument("Invalid data format: ", s,
                                   " (only NHWC and NCHW are supported on this device)");
  }
  return Status();
}

// Index of dim 'N', 'C', 'H' or 'W' in a 4-d tensor of `f`.
inline int DimIndex(Format f, char dim) {
  const bool nhwc = f == Format::kNHWC;
  switch (dim) {
    case 'N': return 0;
    case 'C': return nhwc ? 3 : 1;
    case 'H': return nhwc ? 1 : 2;
    default: return nhwc ? 2 : 3;  // 'W'
  }
}

// TensorFlow's CheckValidPadding for a 4-d window.
inline Status CheckValidPadding(Padding padding, const std::vector<int64_t>& explicit_paddings,
                                Format f) {
  if (padding == Padding::kExplicit) {
    if (explicit_paddings.size() != 8) {
      return errors::InvalidArgument("explicit_paddings attribute must contain 8 values, but got: ",
                                     explicit_paddings.size());
    }
    for (int64_t p : explicit_paddings) {
      if (p < 0) {
        return errors::InvalidArgument("All elements of explicit_paddings must be nonnegative");
      }
    }
    const int n = DimIndex(f, 'N'), c = DimIndex(f, 'C');
    if (explicit_paddings[2 * n] != 0 || explicit_paddings[2 * n + 1] != 0 ||
        explicit_paddings[2 * c] != 0 || explicit_paddings[2 * c + 1] != 0) {
      return errors::InvalidArgument(
          "Nonzero explicit padding in the batch or depth dimensions is not supported");
    }
  } else if (!explicit_paddings.empty()) {
    return errors::InvalidArgument(
        "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
  }
  return Status();
}

// Window sizes, strides, dilations and explicit paddings come from attrs
// (or small input tensors) and may be anything an int64 holds. Each must be
// in [0, 2^58], the largest valid dim (graphrt/shape_limits.h), and so must
// (window - 1) * dilation: then every sum and product below, and the
// row/column arithmetic of the kernels that use the result, stays far
// inside int64.
inline Status CheckWindowValue(const char* what, int64_t v) {
  if (v < 0 || v > GR_MAX_TENSOR_ELEMENTS) {
    return errors::InvalidArgument(what, " ", v, " is not in [0, 2^58]");
  }
  return Status();
}

// TensorFlow's GetWindowedOutputSizeVerbose: output size along one spatial
// dim, and the padding before/after it. For kExplicit, *pad_before and
// *pad_after are inputs.
inline Status WindowedOutputSize(int64_t input, int64_t filter, int64_t dilation, int64_t stride,
                                 Padding padding, int64_t* output, int64_t* pad_before,
                                 int64_t* pad_after) {
  if (stride <= 0) return errors::InvalidArgument("Stride must be > 0, but got ", stride);
  if (filter <= 0) return errors::InvalidArgument("Window size must be > 0, but got ", filter);
  if (dilation < 1) {
    return errors::InvalidArgument("Dilation rate must be >= 1, but got ", dilation);
  }
  GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Input size", input));
  GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Window size", filter));
  GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Stride", stride));
  int64_t span = 0;  // (filter - 1) * dilation, within 2^58
  if (!gr_mul_dims(filter - 1, dilation, &span)) {
    return errors::InvalidArgument("Effective filter size (", filter, " - 1) * ", dilation,
                                   " + 1 exceeds 2^58");
  }
  const int64_t effective = span + 1;
  switch (padding) {
    case Padding::kValid:
      *output = (input - effective + stride) / stride;
      *pad_before = *pad_after = 0;
      break;
    case Padding::kExplicit:
      GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Padding", *pad_before));
      GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Padding", *pad_after));
      *output = (input + *pad_before + *pad_after - effective + stride) / stride;
      break;
    case Padding::kSame: {
      *output = (input + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>(0, (*output - 1) * stride + effective - input);
      // An odd total puts the extra row/column after (bottom/right).
      *pad_before = needed / 2;
      *pad_after = needed - *pad_before;
      break;
    }
  }
  if (*output < 0) {
    return errors::InvalidArgument("Computed output size would be negative: ", *output,
                                   " [input_size: ", input, ", effective_filter_size: ", effective,
                                   ", stride: ", stride, "]");
  }
  return Status();
}

// The same rule on a possibly unknown (-1) input size, as TensorFlow's
// pooling shape functions apply it: VALID/EXPLICIT need the (padded) input
// to hold one window.
inline Status WindowedOutputDim(int64_t in, int64_t k, int64_t stride, Padding padding,
                                int64_t pad_before, int64_t pad_after, int64_t* out) {
  if (stride <= 0) return errors::InvalidArgument("Stride must be > 0, but got ", stride);
  if (k <= 0) return errors::InvalidArgument("Window size must be > 0, but got ", k);
  GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Window size", k));
  GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Stride", stride));
  if (padding == Padding::kExplicit) {
    GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Padding", pad_before));
    GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Padding", pad_after));
  }
  if (in < 0) {
    *out = -1;
    return Status();
  }
  GR_RETURN_IF_ERROR_SDK(CheckWindowValue("Input size", in));
  if (padding == Padding::kSame) {
    *out = (in + stride - 1) / stride;
    return Status();
  }
  const int64_t padded = padding == Padding::kExplicit ? in + pad_before + pad_after : in;
  if (padded < k) {
    return errors::InvalidArgument("Negative dimension size caused by subtracting ", k,
                                   " from ", padded);
  }
  *out = (padded - k + stride) / stride;
  return Status();
}

// TensorFlow's CheckPaddingSize for pooling: explicit padding must be
// smaller than the window (a window of padding only has no maximum).
inline Status CheckPaddingSize(int64_t window_rows, int64_t window_cols, int64_t top,
                               int64_t bottom, int64_t left, int64_t right) {
  if (top < 0 || top >= window_rows)
    return errors::InvalidArgument("Top padding ", top,
                                   " needs to be smaller than the window size ", window_rows);
  if (bottom < 0 || bottom >= window_rows)
    return errors::InvalidArgument("Bottom padding ", bottom,
                                   " needs to be smaller than the window size ", window_rows);
  if (left < 0 || left >= window_cols)
    return errors::InvalidArgument("Left padding ", left,
                                   " needs to be smaller than the window size ", window_cols);
  if (right < 0 || right >= window_cols)
    return errors::InvalidArgument("Right padding ", right,
                                   " needs to be smaller than the window size ", window_cols);
  return Status();
}

// The window attrs of a 4-d convolution (strides, dilations, padding,
// explicit_paddings, data_format), read and validated the way TensorFlow's
// kernels do. `Ctx` is an InferenceContext or an OpKernelConstruction.
struct Conv2DWindow {
  Format format = Format::kNHWC;
  Padding padding = Padding::kValid;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  // Explicit paddings (kExplicit only): top, bottom, left, right.
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;

  // `op` names the op in shape-function messages ("Conv2D requires ...").
  template <typename Ctx>
  Status Init(const Ctx& c, const char* op, bool has_dilations = true) {
    std::string fmt = "NHWC", pad;
    if (!c.GetAttr("data_format", &fmt).ok()) fmt = "NHWC";
    GR_RETURN_IF_ERROR_SDK(ParseFormat(fmt, &format));
    GR_RETURN_IF_ERROR_SDK(c.GetAttr("padding", &pad));
    GR_RETURN_IF_ERROR_SDK(ParsePadding(pad, &padding));
    std::vector<int64_t> strides, dilations = {1, 1, 1, 1}, explicit_paddings;
    GR_RETURN_IF_ERROR_SDK(c.GetAttr("strides", &strides));
    if (strides.size() != 4) {
      return errors::InvalidArgument(op, " requires the stride attribute to contain 4 values, but got: ",
                                     strides.size());
    }
    if (has_dilations && !c.GetAttr("dilations", &dilations).ok()) dilations = {1, 1, 1, 1};
    if (dilations.size() != 4) {
      return errors::InvalidArgument(op, " requires the dilation attribute to contain 4 values, but got: ",
                                     dilations.size());
    }
    const int n = DimIndex(format, 'N'), ch = DimIndex(format, 'C');
    const int h = DimIndex(format, 'H'), w = DimIndex(format, 'W');
    if (strides[n] != 1 || strides[ch] != 1) {
      return errors::InvalidArgument(
          "Current implementation does not yet support strides in the batch and depth dimensions.");
    }
    stride_h = strides[h];
    stride_w = strides[w];
    if (stride_h <= 0 || stride_w <= 0) {
      return errors::InvalidArgument("Row and column strides should be larger than 0.");
    }
    if (dilations[n] != 1 || dilations[ch] != 1) {
      return errors::InvalidArgument(
          "Current implementation does not yet support dilations in the batch and depth "
          "dimensions.");
    }
    dilation_h = dilations[h];
    dilation_w = dilations[w];
    if (dilation_h <= 0 || dilation_w <= 0) {
      return errors::InvalidArgument("Dilated rates should be larger than 0.");
    }
    if (!c.GetAttr("explicit_paddings", &explicit_paddings).ok()) explicit_paddings.clear();
    GR_RETURN_IF_ERROR_SDK(CheckValidPadding(padding, explicit_paddings, format));
    if (padding == Padding::kExplicit) {
      pad_top = explicit_paddings[2 * h];
      pad_bottom = explicit_paddings[2 * h + 1];
      pad_left = explicit_paddings[2 * w];
      pad_right = explicit_paddings[2 * w + 1];
    }
    return Status();
  }

  // Output rows/cols and the padding each side for an input of in_h x in_w
  // and a filter of f_h x f_w.
  Status OutputSize(int64_t in_h, int64_t in_w, int64_t f_h, int64_t f_w, int64_t* out_h,
                    int64_t* out_w, int64_t* pt, int64_t* pb, int64_t* pl, int64_t* pr) const {
    *pt = pad_top;
    *pb = pad_bottom;
    *pl = pad_left;
    *pr = pad_right;
    GR_RETURN_IF_ERROR_SDK(WindowedOutputSize(in_h, f_h, dilation_h, stride_h, padding, out_h, pt, pb));
    return WindowedOutputSize(in_w, f_w, dilation_w, stride_w, padding, out_w, pl, pr);
  }
};

}  // namespace conv_util
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_COMMON_CPU_CONV_UTIL_H_
