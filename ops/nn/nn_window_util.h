// Sliding-window geometry of the nn family's pooling ops (TensorFlow's
// rules): padding kinds, data formats, output sizes and the padding each
// window sees. Shared by the op definitions (shape functions) and the CPU
// kernels, so it depends on the SDK only.
//
// Note: the convolution ops are written separately and may carry their own
// copy of these rules (ops/common/cpu/conv_util.h); the two can be merged.
#ifndef GRAPHRT_OPS_NN_NN_WINDOW_UTIL_H_
#define GRAPHRT_OPS_NN_NN_WINDOW_UTIL_H_

#include <graphrt/sdk/sdk.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace nn_window {

enum class Padding { kSame, kValid, kExplicit };

inline Status ParsePadding(const std::string& s, Padding* p) {
  if (s == "SAME") {
    *p = Padding::kSame;
  } else if (s == "VALID") {
    *p = Padding::kValid;
  } else if (s == "EXPLICIT") {
    *p = Padding::kExplicit;
  } else {
    return errors::InvalidArgument("Unknown padding type: ", s);
  }
  return Status();
}

// Positions of N, H, W, C in a 4-D tensor (and in 4-element ksize/strides
// lists) for one data format.
struct Layout4 {
  bool nchw = false;
  int n() const { return 0; }
  int h() const { return nchw ? 2 : 1; }
  int w() const { return nchw ? 3 : 2; }
  int c() const { return nchw ? 1 : 3; }
};

// NHWC or NCHW; anything else (e.g. NCHW_VECT_C) is reported as unsupported.
inline Status ParseLayout4(const std::string& s, Layout4* l) {
  if (s == "NHWC") {
    l->nchw = false;
  } else if (s == "NCHW") {
    l->nchw = true;
  } else {
    return errors::InvalidArgument("Invalid data format: ", s,
                                   " (only NHWC and NCHW are supported on this device)");
  }
  return Status();
}

// TensorFlow's CheckValidPadding for 4-D tensors.
inline Status CheckValidPadding(Padding padding, const std::vector<int64_t>& explicit_paddings,
                                const Layout4& l) {
  if (padding == Padding::kExplicit) {
    if (explicit_paddings.size() != 8) {
      return errors::InvalidArgument("explicit_paddings attribute must contain 8 values, but got: ",
                                     explicit_paddings.size());
    }
    for (int64_t v : explicit_paddings) {
      if (v < 0) {
        return errors::InvalidArgument("All elements of explicit_paddings must be nonnegative");
      }
    }
    if (explicit_paddings[2 * l.n()] != 0 || explicit_paddings[2 * l.n() + 1] != 0 ||
        explicit_paddings[2 * l.c()] != 0 || explicit_paddings[2 * l.c() + 1] != 0) {
      return errors::InvalidArgument(
          "Nonzero explicit padding in the batch or depth dimensions is not supported");
    }
  } else if (!explicit_paddings.empty()) {
    return errors::InvalidArgument(
        "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
  }
  return Status();
}

// Output size of one windowed dim and the padding before/after it.
// For kExplicit, *pad_before/*pad_after are inputs.
inline Status WindowedOutputSize(int64_t in, int64_t k, int64_t stride, Padding padding,
                                 int64_t* out, int64_t* pad_before, int64_t* pad_after) {
  if (stride <= 0) return errors::InvalidArgument("Stride must be > 0, but got ", stride);
  if (k <= 0) return errors::InvalidArgument("Window size must be > 0, but got ", k);
  switch (padding) {
    case Padding::kValid:
      *out = (in - k + stride) / stride;
      *pad_before = *pad_after = 0;
      break;
    case Padding::kSame: {
      *out = (in + stride - 1) / stride;
      const int64_t needed = (*out - 1) * stride + k - in;
      const int64_t total = needed > 0 ? needed : 0;
      *pad_before = total / 2;
      *pad_after = total - *pad_before;
      break;
    }
    case Padding::kExplicit:
      *out = (in + *pad_before + *pad_after - k + stride) / stride;
      break;
  }
  if (*out < 0) {
    return errors::InvalidArgument("Computed output size would be negative: ", *out,
                                   " [input_size: ", in, ", effective_filter_size: ", k,
                                   ", stride: ", stride, "]");
  }
  return Status();
}

// Same rule on possibly unknown (-1) input sizes, as TensorFlow's shape
// inference does it: VALID/EXPLICIT need the (padded) input to hold one
// window.
inline Status WindowedOutputDim(int64_t in, int64_t k, int64_t stride, Padding padding,
                                int64_t pad_before, int64_t pad_after, int64_t* out) {
  if (stride <= 0) return errors::InvalidArgument("Stride must be > 0, but got ", stride);
  if (k <= 0) return errors::InvalidArgument("Window size must be > 0, but got ", k);
  if (in < 0) {
    *out = -1;
    return Status();
  }
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

// TensorFlow's CheckPaddingSize: explicit padding must be smaller than the
// window (a window made only of padding has no maximum).
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

}  // namespace nn_window
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_NN_NN_WINDOW_UTIL_H_
