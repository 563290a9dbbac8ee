// The 2-D pooling kernels' attrs and window geometry, and their float
// forward pooling, for the nn family's kernels that pool inside another op
// (_FusedConv2DPool in conv_kernels.cc). Implemented in pooling_kernels.cc.
#ifndef GRAPHRT_OPS_NN_CPU_POOLING_H_
#define GRAPHRT_OPS_NN_CPU_POOLING_H_

#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cpu/conv_util.h"

namespace graphrt {
namespace sdk {

// The attrs every pooling op shares. ksize/strides may instead come from
// inputs (MaxPoolV2). `prefix` names them for an op that holds a pooling
// among other attrs (_FusedConv2DPool: "pool_ksize", "pool_strides",
// "pool_padding"; its data_format is the convolution's).
struct PoolAttrs {
  std::vector<int64_t> ksize, strides, explicit_paddings;
  conv_util::Padding padding = conv_util::Padding::kValid;
  conv_util::Format format = conv_util::Format::kNHWC;

  Status Read(OpKernelConstruction* c, bool lists_are_attrs, const std::string& prefix = "") {
    std::string format_str = "NHWC", padding_str;
    if (c->HasAttr("data_format")) GR_RETURN_IF_ERROR_SDK(c->GetAttr("data_format", &format_str));
    GR_RETURN_IF_ERROR_SDK(conv_util::ParseFormat(format_str, &format));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr((prefix + "padding").c_str(), &padding_str));
    GR_RETURN_IF_ERROR_SDK(conv_util::ParsePadding(padding_str, &padding));
    const std::string explicit_name = prefix + "explicit_paddings";
    if (c->HasAttr(explicit_name.c_str())) {
      GR_RETURN_IF_ERROR_SDK(c->GetAttr(explicit_name.c_str(), &explicit_paddings));
    }
    GR_RETURN_IF_ERROR_SDK(conv_util::CheckValidPadding(padding, explicit_paddings, format));
    if (!lists_are_attrs) return Status();
    GR_RETURN_IF_ERROR_SDK(c->GetAttr((prefix + "ksize").c_str(), &ksize));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr((prefix + "strides").c_str(), &strides));
    return CheckLists(ksize, strides, format);
  }

  static Status CheckLists(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                           conv_util::Format f) {
    if (ksize.size() != 4)
      return errors::InvalidArgument("Sliding window ksize field must specify 4 dimensions");
    if (strides.size() != 4)
      return errors::InvalidArgument("Sliding window stride field must specify 4 dimensions");
    for (int i = 0; i < 4; ++i) {
      if (ksize[i] <= 0)
        return errors::InvalidArgument("Sliding window ksize for dimension ", i, " was ",
                                       ksize[i], "; it must be > 0.");
      if (strides[i] <= 0)
        return errors::InvalidArgument("Sliding window stride for dimension ", i, " was ",
                                       strides[i], "; it must be > 0.");
    }
    const int n = conv_util::DimIndex(f, 'N');
    if (ksize[n] != 1 || strides[n] != 1)
      return errors::Unimplemented("Pooling is not yet supported on the batch dimension.");
    return Status();
  }
};

// Where each window of one pooling lies.
struct PoolGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, depth = 0;
  int64_t k_h = 1, k_w = 1, s_h = 1, s_w = 1;
  int64_t out_h = 0, out_w = 0, out_depth = 0;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t depth_window = 1;  // > 1: max pooling across channels instead
  bool nchw = false;

  std::vector<int64_t> InputDims() const {
    return nchw ? std::vector<int64_t>{batch, depth, in_h, in_w}
                : std::vector<int64_t>{batch, in_h, in_w, depth};
  }
  std::vector<int64_t> OutputDims() const {
    return nchw ? std::vector<int64_t>{batch, out_depth, out_h, out_w}
                : std::vector<int64_t>{batch, out_h, out_w, out_depth};
  }
  // Valid input rows [*h0, *h1) of output row oh; columns likewise.
  void Rows(int64_t oh, int64_t* h0, int64_t* h1) const {
    const int64_t start = oh * s_h - pad_top;
    *h0 = std::max<int64_t>(start, 0);
    *h1 = std::min(start + k_h, in_h);
  }
  void Cols(int64_t ow, int64_t* w0, int64_t* w1) const {
    const int64_t start = ow * s_w - pad_left;
    *w0 = std::max<int64_t>(start, 0);
    *w1 = std::min(start + k_w, in_w);
  }
};

// The geometry of pooling an input of `dims` (TensorFlow's PoolParameters).
Status MakeGeometry(const PoolAttrs& a, const std::vector<int64_t>& ksize,
                    const std::vector<int64_t>& strides, const int64_t* dims, int rank,
                    bool depth_pooling_allowed, PoolGeometry* g);

// Max (or average) pooling of a whole float tensor, split over the pool as
// the MaxPool / AvgPool kernels do (their direct loops).
void PoolForwardFloat(OpKernelContext* ctx, bool max, const PoolGeometry& g, const float* in, float* out);

// NHWC output rows [row_begin, row_end) (row = image * out_h + output row),
// on the calling thread.
void PoolNhwcRowsFloat(bool max, const PoolGeometry& g, const float* in, float* out, int64_t row_begin,
                       int64_t row_end);

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_NN_CPU_POOLING_H_
