// CPU kernels of the 2-d convolutions: Conv2D, DepthwiseConv2dNative,
// _FusedConv2D, Conv2DBackpropInput, Conv2DBackpropFilter and the depthwise
// backprops DepthwiseConv2dNativeBackpropInput / ...BackpropFilter.
//
// float32 and bfloat16 run on oneDNN (forward, backward-data and
// backward-weights convolution primitives; grouped convolution for
// depthwise and grouped filters; bias and activations as post-ops).
// bfloat16 where oneDNN has no bf16 convolution (no AVX-512): the f32
// primitives on float copies, the result rounded to bfloat16 (GetPlan).
// float64 and int32 run on a direct im2col + Eigen GEMM implementation.
//
// oneDNN use: conv_plan.h. Buffers that must outlive a parallel_for come
// from a per-kernel pool; nothing is allocated in a steady state.

#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/conv_util.h"
#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"
#include "common/cpu/scratch.h"
#include "nn/cpu/conv_act.h"
#include "nn/cpu/conv_plan.h"
#include "nn/cpu/narrow_conv.h"
#include "nn/cpu/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

using namespace conv_plan;  // NOLINT: this file is the plans' one user
namespace sf = shape_fns;

// Convolution rows per band when _FusedConv2DPool pools while the rows are
// in cache.
constexpr int64_t kNarrowBandRows = 8;
// ------------------------------------------------------------ geometry

// Geometry of a forward convolution from its input and filter; the error
// messages are TensorFlow's.
Status ForwardGeom(const cu::Conv2DWindow& win, const TensorView& in, const TensorView& filter,
                   bool depthwise, ConvGeom* g) {
  if (in.rank() != 4) {
    return errors::InvalidArgument("input must be 4-dimensional", sf::ShapeString(in));
  }
  if (filter.rank() != 4) {
    return errors::InvalidArgument("filter must be 4-dimensional: ", sf::ShapeString(filter));
  }
  const cu::Format f = win.format;
  g->format = f;
  g->n = in.dim(cu::DimIndex(f, 'N'));
  g->c = in.dim(cu::DimIndex(f, 'C'));
  g->h = in.dim(cu::DimIndex(f, 'H'));
  g->w = in.dim(cu::DimIndex(f, 'W'));
  g->kh = filter.dim(0);
  g->kw = filter.dim(1);
  if (depthwise) {
    if (filter.dim(2) != g->c) {
      return errors::InvalidArgument("input and filter must have the same depth: ", g->c, " vs ",
                                     filter.dim(2));
    }
    if (g->kh == 0 || g->kw == 0) {
      return errors::InvalidArgument(
          "filter must not have zero elements (i.e. all dimensions must be non-zero)");
    }
    g->groups = g->c;
    // Input depth times the filter's multiplier: two tensors' dims.
    GR_RETURN_IF_ERROR_SDK(MultiplyDims(g->c, filter.dim(3), &g->oc));
  } else {
    if (filter.NumElements() == 0) {
      return errors::InvalidArgument(
          "filter must not have zero elements (i.e. all dimensions must be non-zero)");
    }
    const int64_t patch_depth = filter.dim(2);
    if (g->c % patch_depth != 0) {
      return errors::InvalidArgument("input depth must be evenly divisible by filter depth: ",
                                     g->c, " vs ", patch_depth);
    }
    g->groups = g->c / patch_depth;
    g->oc = filter.dim(3);
    if (g->groups == 0 || g->oc % g->groups != 0) {
      return errors::InvalidArgument(
          "output depth must be evenly divisible by number of groups: ", g->oc, " vs ",
          g->groups);
    }
  }
  if (g->groups == 0) g->groups = 1;  // depthwise with no channels: nothing to compute
  g->sh = win.stride_h;
  g->sw = win.stride_w;
  g->dh = win.dilation_h;
  g->dw = win.dilation_w;
  return win.OutputSize(g->h, g->w, g->kh, g->kw, &g->oh, &g->ow, &g->pt, &g->pb, &g->pl, &g->pr);
}

// Geometry of a backward convolution from the forward input's shape, the
// filter's and out_backprop's (TensorFlow's ConvBackpropComputeDimensions).
Status BackpropGeom(const char* label, const cu::Conv2DWindow& win,
                    const std::vector<int64_t>& input_shape,
                    const std::vector<int64_t>& filter_shape, const TensorView& out_backprop,
                    bool depthwise, ConvGeom* g) {
  if (input_shape.size() != 4) {
    return errors::InvalidArgument(label, ": input must be 4-dimensional");
  }
  if (filter_shape.size() != 4) {
    return errors::InvalidArgument(label, ": filter must be 4-dimensional");
  }
  if (out_backprop.rank() != 4) {
    return errors::InvalidArgument(label, ": out_backprop must be 4-dimensional");
  }
  // The sizes come from an input tensor: hold them to the size rule before
  // any arithmetic on them.
  int64_t unused;
  Status valid = NumElementsOf(input_shape, &unused);
  if (!valid.ok()) return errors::InvalidArgument(label, ": input_sizes: ", valid.message());
  valid = NumElementsOf(filter_shape, &unused);
  if (!valid.ok()) return errors::InvalidArgument(label, ": filter_sizes: ", valid.message());
  const cu::Format f = win.format;
  const int nd = cu::DimIndex(f, 'N'), cd = cu::DimIndex(f, 'C');
  const int hd = cu::DimIndex(f, 'H'), wd = cu::DimIndex(f, 'W');
  g->format = f;
  g->n = input_shape[nd];
  if (g->n != out_backprop.dim(nd)) {
    return errors::InvalidArgument(label, ": input and out_backprop must have the same batch size.",
                                   " Input batch: ", g->n,
                                   ", outbackprop batch: ", out_backprop.dim(nd),
                                   ", batch_dim: ", nd);
  }
  g->c = input_shape[cd];
  g->h = input_shape[hd];
  g->w = input_shape[wd];
  g->kh = filter_shape[0];
  g->kw = filter_shape[1];
  if (depthwise) {
    // Filter [kh, kw, c, multiplier]: one group per input channel.
    if (filter_shape[2] != g->c) {
      return errors::InvalidArgument(label, ": input and filter must have the same depth: ", g->c,
                                     " vs ", filter_shape[2]);
    }
    g->groups = std::max<int64_t>(g->c, 1);
    GR_RETURN_IF_ERROR_SDK(MultiplyDims(g->c, filter_shape[3], &g->oc));
  } else {
    const int64_t patch_depth = filter_shape[2];
    if (patch_depth <= 0 || g->c % patch_depth != 0) {
      return errors::InvalidArgument(label,
                                     ": input depth must be evenly divisible by filter depth");
    }
    g->groups = g->c / patch_depth;
    g->oc = filter_shape[3];
  }
  if (g->oc != out_backprop.dim(cd)) {
    return errors::InvalidArgument(label, ": filter and out_backprop must have the same out_depth");
  }
  if (!depthwise && (g->groups == 0 || g->oc % g->groups != 0)) {
    return errors::InvalidArgument(label,
                                   ": output depth must be evenly divisible by number of groups: ",
                                   g->oc, " vs ", g->groups);
  }
  g->sh = win.stride_h;
  g->sw = win.stride_w;
  g->dh = win.dilation_h;
  g->dw = win.dilation_w;
  GR_RETURN_IF_ERROR_SDK(
      win.OutputSize(g->h, g->w, g->kh, g->kw, &g->oh, &g->ow, &g->pt, &g->pb, &g->pl, &g->pr));
  const int64_t got_h = out_backprop.dim(hd), got_w = out_backprop.dim(wd);
  const int64_t spatial[2][5] = {{got_h, g->oh, g->h, g->kh, g->sh}, {got_w, g->ow, g->w, g->kw, g->sw}};
  for (int i = 0; i < 2; ++i) {
    if (spatial[i][0] != spatial[i][1]) {
      return errors::InvalidArgument(label, ": Size of out_backprop doesn't match computed: ",
                                     "actual = ", spatial[i][0], ", computed = ", spatial[i][1],
                                     " spatial_dim: ", i + 1, " input: ", spatial[i][2],
                                     " filter: ", spatial[i][3], " output: ", spatial[i][0],
                                     " stride: ", spatial[i][4],
                                     " dilation: ", i == 0 ? g->dh : g->dw);
    }
  }
  return Status();
}

// A 1-d int32 shape tensor (input_sizes / filter_sizes) as dims.
Status ReadSizes(const char* op, const char* what, const TensorView& t,
                 std::vector<int64_t>* out) {
  if (t.rank() != 1) {
    return errors::InvalidArgument(op, ": ", what, " input must be 1-dim, not ", t.rank());
  }
  out->clear();
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const int64_t d = t.data<int32_t>()[i];
    if (d < 0) return errors::InvalidArgument("Dimension ", i, " must be >= 0, got ", d);
    out->push_back(d);
  }
  return Status();
}

// ---------------------------------------------------------- activations

// ------------------------------------------------------- direct (f64, i32)

template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using StridedMap = Eigen::Map<RowMat<T>, 0, Eigen::OuterStride<>>;
template <typename T>
using ConstStridedMap = Eigen::Map<const RowMat<T>, 0, Eigen::OuterStride<>>;

// NCHW <-> NHWC copies for the direct path (which works in NHWC).
template <typename T>
void NchwToNhwc(const T* src, int64_t n, int64_t c, int64_t hw, T* dst) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) dst[(b * hw + p) * c + ch] = src[(b * c + ch) * hw + p];
}
template <typename T>
void NhwcToNchw(const T* src, int64_t n, int64_t c, int64_t hw, T* dst) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) dst[(b * c + ch) * hw + p] = src[(b * hw + p) * c + ch];
}

// Patches of output row `oy` of image `b`, group `gi`: [ow x (kh*kw*icg)],
// zero where the window reads padding. `in` is NHWC.
template <typename T>
void Im2ColRow(const ConvGeom& g, const T* in, int64_t b, int64_t oy, int64_t gi, T* patch) {
  const int64_t icg = g.icg(), k = g.kh * g.kw * icg;
  for (int64_t ox = 0; ox < g.ow; ++ox) {
    T* row = patch + ox * k;
    for (int64_t fy = 0; fy < g.kh; ++fy) {
      const int64_t iy = oy * g.sh - g.pt + fy * g.dh;
      for (int64_t fx = 0; fx < g.kw; ++fx) {
        const int64_t ix = ox * g.sw - g.pl + fx * g.dw;
        T* dst = row + (fy * g.kw + fx) * icg;
        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {
          std::fill(dst, dst + icg, T(0));
        } else {
          const T* src = in + ((b * g.h + iy) * g.w + ix) * g.c + gi * icg;
          std::copy(src, src + icg, dst);
        }
      }
    }
  }
}

// The adjoint of Im2ColRow: adds the patches back into `in` (NHWC).
template <typename T>
void Col2ImRowAdd(const ConvGeom& g, const T* patch, int64_t b, int64_t oy, int64_t gi, T* in) {
  const int64_t icg = g.icg(), k = g.kh * g.kw * icg;
  for (int64_t ox = 0; ox < g.ow; ++ox) {
    const T* row = patch + ox * k;
    for (int64_t fy = 0; fy < g.kh; ++fy) {
      const int64_t iy = oy * g.sh - g.pt + fy * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (int64_t fx = 0; fx < g.kw; ++fx) {
        const int64_t ix = ox * g.sw - g.pl + fx * g.dw;
        if (ix < 0 || ix >= g.w) continue;
        const T* src = row + (fy * g.kw + fx) * icg;
        T* dst = in + ((b * g.h + iy) * g.w + ix) * g.c + gi * icg;
        for (int64_t i = 0; i < icg; ++i) dst[i] += src[i];
      }
    }
  }
}

// out (NHWC) = conv(in (NHWC), filter (HWIO)); rows [r0, r1) of n*oh.
template <typename T>
void DirectForwardRows(const ConvGeom& g, const T* in, const T* filter, T* out, int64_t r0,
                       int64_t r1) {
  const int64_t icg = g.icg(), ocg = g.ocg(), k = g.kh * g.kw * icg;
  // Runs start to end on this thread: the thread scratch is free.
  T* patch = reinterpret_cast<T*>(ThreadScratch().Get(static_cast<size_t>(g.ow * k) * sizeof(T)));
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.oh, oy = r % g.oh;
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      Im2ColRow(g, in, b, oy, gi, patch);
      ConstStridedMap<T> P(patch, g.ow, k, Eigen::OuterStride<>(k));
      ConstStridedMap<T> F(filter + gi * ocg, k, ocg, Eigen::OuterStride<>(g.oc));
      StridedMap<T> O(out + r * g.ow * g.oc + gi * ocg, g.ow, ocg, Eigen::OuterStride<>(g.oc));
      O.noalias() = P * F;
    }
  }
}

// in_grad (NHWC, zeroed) += conv^T(out_grad (NHWC), filter); images [b0, b1).
template <typename T>
void DirectBackpropInputImages(const ConvGeom& g, const T* out_grad, const T* filter, T* in_grad,
                               int64_t b0, int64_t b1) {
  const int64_t icg = g.icg(), ocg = g.ocg(), k = g.kh * g.kw * icg;
  // Runs start to end on this thread: the thread scratch is free.
  T* patch = reinterpret_cast<T*>(ThreadScratch().Get(static_cast<size_t>(g.ow * k) * sizeof(T)));
  for (int64_t b = b0; b < b1; ++b) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t r = b * g.oh + oy;
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        ConstStridedMap<T> D(out_grad + r * g.ow * g.oc + gi * ocg, g.ow, ocg,
                             Eigen::OuterStride<>(g.oc));
        ConstStridedMap<T> F(filter + gi * ocg, k, ocg, Eigen::OuterStride<>(g.oc));
        StridedMap<T> P(patch, g.ow, k, Eigen::OuterStride<>(k));
        P.noalias() = D * F.transpose();
        Col2ImRowAdd(g, patch, b, oy, gi, in_grad);
      }
    }
  }
}

// filter_grad (HWIO, zeroed) += patches^T * out_grad over images [b0, b1):
// one product per band of output rows (rows of one image or several: the
// out_grad rows of a band are contiguous), the band as many rows as keep
// its patches within kFilterGradBandBytes, so that the product's depth
// (pixels) is long while its operands stay in L2.
constexpr size_t kFilterGradBandBytes = 256 << 10;
template <typename T>
void DirectBackpropFilterImages(const ConvGeom& g, const T* in, const T* out_grad, T* filter_grad,
                                int64_t b0, int64_t b1) {
  const int64_t icg = g.icg(), ocg = g.ocg(), k = g.kh * g.kw * icg;
  const int64_t row_bytes = g.ow * k * static_cast<int64_t>(sizeof(T));
  const int64_t band = std::max<int64_t>(1, static_cast<int64_t>(kFilterGradBandBytes) / std::max<int64_t>(row_bytes, 1));
  // Runs start to end on this thread: the thread scratch is free.
  T* patch = reinterpret_cast<T*>(ThreadScratch().Get(static_cast<size_t>(band * g.ow * k) * sizeof(T)));
  const int64_t r_end = b1 * g.oh;
  for (int64_t gi = 0; gi < g.groups; ++gi) {
    for (int64_t r0 = b0 * g.oh; r0 < r_end; r0 += band) {
      const int64_t rows = std::min(band, r_end - r0);
      for (int64_t r = r0; r < r0 + rows; ++r) Im2ColRow(g, in, r / g.oh, r % g.oh, gi, patch + (r - r0) * g.ow * k);
      ConstStridedMap<T> P(patch, rows * g.ow, k, Eigen::OuterStride<>(k));
      ConstStridedMap<T> D(out_grad + r0 * g.ow * g.oc + gi * ocg, rows * g.ow, ocg, Eigen::OuterStride<>(g.oc));
      StridedMap<T> F(filter_grad + gi * ocg, k, ocg, Eigen::OuterStride<>(g.oc));
      F.noalias() += P.transpose() * D;
    }
  }
}

// Number of chunks a batch of `n` images is split into.
int64_t BatchChunks(OpKernelContext* ctx, int64_t n, int64_t macs) {
  if (macs < kParallelMinMacs) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(n, ctx->num_threads()));
}

// The narrow kernels' (narrow_conv.h) view of a convolution.
NarrowConvProblem NarrowProblem(const ConvGeom& g) {
  NarrowConvProblem p;
  p.n = g.n, p.c = g.c, p.h = g.h, p.w = g.w;
  p.oc = g.oc, p.oh = g.oh, p.ow = g.ow;
  p.kh = g.kh, p.kw = g.kw, p.sh = g.sh, p.dh = g.dh, p.pt = g.pt, p.pl = g.pl;
  p.nchw = g.format == cu::Format::kNCHW;
  return p;
}

// ------------------------------------------------------------- kernels

// float and bfloat16 (stored as uint16_t) run on oneDNN, the rest direct.
template <typename T>
constexpr bool kOnDnnl = std::is_same_v<T, float> || std::is_same_v<T, uint16_t>;
template <typename T>
constexpr memory::data_type DnnlDt() {
  return std::is_same_v<T, float> ? memory::data_type::f32 : memory::data_type::bf16;
}

template <typename T>
float ToFloat(T v) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    return Bf16BitsToFloat(v);
  } else {
    return static_cast<float>(v);
  }
}

// Common attrs and caches of the convolution kernels.
class ConvKernelBase : public OpKernel {
 public:
  ConvKernelBase(OpKernelConstruction* c, const char* op, bool depthwise) : OpKernel(c) {
    Status s = win_.Init(*c, op);
    if (!s.ok()) {
      c->CtxFailure(s);
      return;
    }
    if (depthwise && win_.stride_h != win_.stride_w) {
      c->CtxFailure(errors::InvalidArgument(
          "Current implementation only supports equal length strides in the row and column "
          "dimensions."));
      return;
    }
    if (c->HasAttr("_weights_const")) {
      bool v = false;
      if (c->GetAttr("_weights_const", &v).ok()) weights_const_ = v;
    }
  }

 protected:
  // `pool`: a pooled plan (null when oneDNN cannot pool the output).
  std::shared_ptr<Plan> GetPlan(OpKernelContext* ctx, Kind kind, const ConvGeom& g,
                                memory::data_type dt, const FusedSpec* fused,
                                const PoolGeometry* pool = nullptr, bool pool_max = true) {
    PlanRequest req;
    req.kind = kind;
    req.g = g;
    req.dt = dt;
    req.fused = fused;
    req.threads = std::max(1, ctx->num_threads());
    req.pool = pool;
    req.pool_max = pool_max;
    return cache_.GetOrCreate(PlanKey(g, req.threads, dt, pool != nullptr), [&] {
      std::shared_ptr<Plan> plan = BuildPlan(req);
      // oneDNN implements bf16 convolutions only on CPUs with AVX-512
      // (Debian's 2.6 has none without it). A bf16 kernel then gets the f32
      // plan, cached under its bf16 key so that the failing creation is
      // tried once per shape, and computes in float (plan->dt tells it).
      if (!plan && dt == memory::data_type::bf16 && pool == nullptr) {
        req.dt = memory::data_type::f32;
        plan = BuildPlan(req);
      }
      return plan;
    });
  }

  // Whether a kernel of element type T runs `plan` on float copies: bf16 on
  // the f32 plan GetPlan gave it.
  template <typename T>
  static bool OnFloatCopies(const Plan& plan) {
    return std::is_same_v<T, uint16_t> && plan.dt == memory::data_type::f32;
  }

  // Float arrays of `counts[i]` elements each, carved from `lease`.
  static std::vector<float*> FloatArrays(BufferPool::Lease* lease, std::initializer_list<int64_t> counts) {
    size_t total = 0;
    for (int64_t c : counts) total += AlignUp(static_cast<size_t>(c) * sizeof(float));
    char* p = lease->Get(total);
    std::vector<float*> arrays;
    for (int64_t c : counts) {
      arrays.push_back(reinterpret_cast<float*>(p));
      p += AlignUp(static_cast<size_t>(c) * sizeof(float));
    }
    return arrays;
  }

  // The filter in the plan's weights layout: the filter itself, the plan's
  // cached copy for a constant filter, or a copy in `lease`.
  const char* PlanWeights(const Plan& plan_c, const void* filter, BufferPool::Lease* lease) {
    Plan& plan = const_cast<Plan&>(plan_c);
    if (!plan.reorder_w) return static_cast<const char*>(filter);
    if (weights_const_) {
      if (!plan.const_ready.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(plan.const_mu);
        if (!plan.const_ready.load(std::memory_order_relaxed)) {
          ReorderWeights(plan, filter, plan.const_w.Get(plan.w_bytes));
          plan.const_ready.store(true, std::memory_order_release);
        }
      }
      return plan.const_w.data();
    }
    char* w = lease->Get(plan.w_bytes);
    ReorderWeights(plan, filter, w);
    return w;
  }

  static Status NoPrimitive(const char* op, const ConvGeom& g) {
    return errors::Unimplemented("oneDNN has no ", op, " implementation for input ",
                                 sf::ShapeString(g.InputDims()), " and filter ",
                                 sf::ShapeString(g.FilterDims()));
  }

  cu::Conv2DWindow win_;
  bool weights_const_ = false;
  ShapeKeyedCache<Plan> cache_;
  BufferPool pool_;
};

// Folds the batch-norm args into y = conv * scale + shift (float).
template <typename T>
void FoldBatchNorm(OpKernelContext* ctx, int64_t oc, float epsilon, float* scale, float* shift) {
  const T* gamma = ctx->input(2).data<T>();
  const T* beta = ctx->input(3).data<T>();
  const T* mean = ctx->input(4).data<T>();
  const T* var = ctx->input(5).data<T>();
  for (int64_t i = 0; i < oc; ++i) {
    const double a = ToFloat(gamma[i]) / std::sqrt(static_cast<double>(ToFloat(var[i])) + epsilon);
    scale[i] = static_cast<float>(a);
    shift[i] = static_cast<float>(ToFloat(beta[i]) - ToFloat(mean[i]) * a);
  }
}

// Conv2D (kDepthwise false, kFused false), DepthwiseConv2dNative and
// _FusedConv2D.
template <typename T, bool kDepthwise, bool kFused>
class ConvForwardOp : public ConvKernelBase {
 public:
  explicit ConvForwardOp(OpKernelConstruction* c)
      : ConvKernelBase(c, kDepthwise ? "DepthwiseConv2D" : "Conv2D", kDepthwise) {
    if (!c->ok()) return;
    if (kFused) c->SetStatus(ParseFusion(c));
    if (c->ok() && c->HasAttr("pool_op")) c->SetStatus(ParsePool(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    const TensorView filter = ctx->input(1);
    ConvGeom g;
    OP_REQUIRES_OK(ctx, ForwardGeom(win_, in, filter, kDepthwise, &g));
    if (kFused) OP_REQUIRES_OK(ctx, CheckArgs(ctx, g.oc));
    if constexpr (std::is_same_v<T, float>) {
      if (pooled_) {
        ComputePooled(ctx, g, in, filter);
        return;
      }
    }
    TensorView out;
    if (!ctx->allocate_output(0, g.OutputDims(), &out).ok()) return;
    if (out.NumElements() == 0) return;
    if constexpr (kOnDnnl<T>) {
      ComputeDnnl(ctx, g, in, filter, out.raw_data());
    } else {
      ComputeDirect(ctx, g, in, filter, out);
    }
  }

 private:
  Status ParseFusion(OpKernelConstruction* c) {
    std::vector<std::string> ops;
    int32_t num_args = 0;
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("fused_ops", &ops));
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("num_args", &num_args));
    if (!c->GetAttr("epsilon", &spec_.epsilon).ok()) spec_.epsilon = 1e-4f;
    if (!c->GetAttr("leakyrelu_alpha", &spec_.alpha).ok()) spec_.alpha = 0.2f;
    std::string joined;
    for (size_t i = 0; i < ops.size(); ++i) joined += (i ? "," : "") + ops[i];
    const Status unimplemented = errors::Unimplemented("Fusion is not implemented: [", joined, "]");
    if (ops.empty() || ops.size() > 2) return unimplemented;
    if (ops[0] == "BiasAdd") {
      spec_.fusion = Fusion::kBias;
    } else if (ops[0] == "FusedBatchNorm") {
      spec_.fusion = Fusion::kBatchNorm;
    } else {
      return unimplemented;
    }
    if (ops.size() == 2) {
      if (ops[1] == "Relu") {
        spec_.act = Act::kRelu;
      } else if (ops[1] == "Relu6") {
        spec_.act = Act::kRelu6;
      } else if (ops[1] == "Elu") {
        spec_.act = Act::kElu;
      } else if (ops[1] == "LeakyRelu") {
        spec_.act = Act::kLeakyRelu;
      } else {
        return unimplemented;
      }
    }
    if (spec_.fusion == Fusion::kBias && num_args != 1) {
      return errors::InvalidArgument("Fused Conv2D must have one extra argument: bias.");
    }
    if (spec_.fusion == Fusion::kBatchNorm && num_args != 4) {
      return errors::InvalidArgument(
          "Fused Conv2D with batch norm must have four extra arguments: scale, offset, mean, "
          "variance.");
    }
    return Status();
  }

  // _FusedConv2DPool: the pooling that follows the convolution.
  Status ParsePool(OpKernelConstruction* c) {
    std::string pool_op;
    GR_RETURN_IF_ERROR_SDK(c->GetAttr("pool_op", &pool_op));
    if (pool_op != "MaxPool" && pool_op != "AvgPool") {
      return errors::InvalidArgument("pool_op must be MaxPool or AvgPool, got ", pool_op);
    }
    pool_max_ = pool_op == "MaxPool";
    GR_RETURN_IF_ERROR_SDK(pool_attrs_.Read(c, true, "pool_"));
    pooled_ = true;
    return Status();
  }

  Status CheckArgs(OpKernelContext* ctx, int64_t oc) const {
    static const char* const kBnNames[] = {"scale", "offset", "estimated_mean", "estimated_variance"};
    const int n = spec_.fusion == Fusion::kBias ? 1 : 4;
    for (int i = 0; i < n; ++i) {
      const TensorView a = ctx->input(2 + i);
      const char* what = spec_.fusion == Fusion::kBias ? "bias" : kBnNames[i];
      if (a.rank() != 1) {
        return errors::InvalidArgument(what, " must be 1-dimensional", sf::ShapeString(a));
      }
      if (a.dim(0) != oc) {
        return errors::InvalidArgument(what, " must have the same size as the output depth: ",
                                       a.dim(0), " vs ", oc);
      }
    }
    return Status();
  }

  // The convolution into `y` (the output, or a buffer the pooling reads);
  // with `pool`, the pooled convolution into `y` (the pooled output), or
  // false and nothing done when oneDNN cannot pool it.
  bool ComputeDnnl(OpKernelContext* ctx, const ConvGeom& g, const TensorView& in,
                   const TensorView& filter, void* y, const PoolGeometry* pool = nullptr) {
    if constexpr (std::is_same_v<T, float>) {
      if (!pool && NarrowConvApplies(g.oc, g.groups, g.sw, g.dw, g.ow)) {
        ComputeNarrow(ctx, g, in, filter, {static_cast<float*>(y), 0}, 0, g.n * g.oh);
        return true;
      }
    }
    const char* op = kFused ? "_FusedConv2D" : kDepthwise ? "DepthwiseConv2dNative" : "Conv2D";
    std::shared_ptr<Plan> plan =
        GetPlan(ctx, Kind::kForward, g, DnnlDt<T>(), kFused ? &spec_ : nullptr, pool, pool_max_);
    if (pool && !plan) return false;
    if (!plan) {
      ctx->CtxFailure(NoPrimitive(op, g));
      return true;
    }
    BufferPool::Lease w_lease = pool_.Acquire();
    BufferPool::Lease bn_lease = pool_.Acquire();
    std::optional<BufferPool::Lease> f32_lease;  // bf16 on the f32 plan only
    const bool with_bias = kFused && spec_.fusion == Fusion::kBias;
    const void* x = in.raw_data();
    const void* f = filter.raw_data();
    const void* bias = with_bias ? ctx->input(2).raw_data() : nullptr;
    float* y_f32 = nullptr;
    const int64_t y_elems = g.n * g.oh * g.ow * g.oc;
    if constexpr (std::is_same_v<T, uint16_t>) {
      if (OnFloatCopies<T>(*plan)) {  // rounded into y after the run
        BufferPool::Lease* lease = &f32_lease.emplace(pool_.Acquire());
        const std::vector<float*> fa =
            FloatArrays(lease, {in.NumElements(), filter.NumElements(), with_bias ? g.oc : 0, y_elems});
        Bf16BitsToFloat(in.data<uint16_t>(), in.NumElements(), fa[0]);
        Bf16BitsToFloat(filter.data<uint16_t>(), filter.NumElements(), fa[1]);
        if (with_bias) Bf16BitsToFloat(ctx->input(2).data<uint16_t>(), g.oc, fa[2]);
        x = fa[0];
        f = fa[1];
        if (with_bias) bias = fa[2];
        y_f32 = fa[3];
      }
    }
    RunArgs args;
    args.elem = y_f32 ? sizeof(float) : sizeof(T);
    args.a = static_cast<const char*>(x);
    (pool ? args.pooled : args.b) = y_f32 ? reinterpret_cast<char*>(y_f32) : static_cast<char*>(y);
    try {
      args.w = PlanWeights(*plan, f, &w_lease);
    } catch (const std::exception& e) {
      ctx->CtxFailure(errors::Internal(op, ": oneDNN weights reorder failed: ", e.what()));
      return true;
    }
    args.bias = bias;
    if (kFused && spec_.fusion == Fusion::kBatchNorm) {
      float* p = reinterpret_cast<float*>(bn_lease.Get(static_cast<size_t>(2 * g.oc) * sizeof(float)));
      FoldBatchNorm<T>(ctx, g.oc, spec_.epsilon, p, p + g.oc);
      args.bn_scale = p;
      args.bn_shift = p + g.oc;
    }
    if (!RunPlan(ctx, *plan, args)) {
      ctx->CtxFailure(errors::Internal(op, ": oneDNN convolution failed for input ", sf::ShapeString(in),
                                       " and filter ", sf::ShapeString(filter)));
      return true;
    }
    if (y_f32) FloatToBf16Bits(y_f32, y_elems, static_cast<uint16_t*>(y));
    return true;
  }

  // The fused bias / batch norm and activation; folded batch-norm factors
  // go to `bn_lease`.
  NarrowConvEpilogue NarrowEpilogue(OpKernelContext* ctx, int64_t oc, BufferPool::Lease* bn_lease) const {
    NarrowConvEpilogue e;
    if (!kFused) return e;
    e.act = spec_.act;
    e.alpha = spec_.alpha;
    if (spec_.fusion == Fusion::kBias) {
      e.shift = ctx->input(2).data<float>();
    } else {
      float* bn = reinterpret_cast<float*>(bn_lease->Get(static_cast<size_t>(2 * oc) * sizeof(float)));
      FoldBatchNorm<T>(ctx, oc, spec_.epsilon, bn, bn + oc);
      e.scale = bn;
      e.shift = bn + oc;
    }
    return e;
  }

  // Few output channels (narrow_conv.h): output rows [r0, r1) into `out`,
  // split over the pool.
  void ComputeNarrow(OpKernelContext* ctx, const ConvGeom& g, const TensorView& in,
                     const TensorView& filter, const NarrowConvOutput& out, int64_t r0, int64_t r1) {
    const NarrowConvProblem p = NarrowProblem(g);
    BufferPool::Lease bn_lease = pool_.Acquire();
    const NarrowConvEpilogue e = NarrowEpilogue(ctx, g.oc, &bn_lease);
    const float* x = in.data<float>();
    const float* f = filter.data<float>();
    const int64_t rows = r1 - r0;
    const int64_t macs = rows * g.ow * g.oc * g.kh * g.kw * g.c;
    const size_t scratch_bytes = NarrowConvScratchBytes(p);
    ForRange(ctx, rows, macs >= kParallelMinMacs ? macs : 0, macs / rows / kMacsPerNs + 1,
             [&](int64_t b, int64_t end) {
               ComputeNarrowConvRows(p, x, f, e, out, r0 + b, r0 + end, ThreadScratch().Get(scratch_bytes));
             });
  }

  // _FusedConv2DPool: the convolution's full output is never written where
  //  * few output channels (narrow_conv.h) and 2x2 windows of stride 2
  //    without padding: pooled in registers;
  //  * few output channels, NHWC, other windows that tile the rows without
  //    padding or overlap: pooled from a per-thread band of rows;
  //  * on oneDNN: pooled by oneDNN from each chunk's output (a few images,
  //    or a band of rows of one) while it is in cache (conv_plan.cc,
  //    PooledSplit); NCHW reorders only the pooled output.
  // Otherwise (oneDNN has no pooling for it) the convolution goes to a
  // buffer the pooling then reads.
  void ComputePooled(OpKernelContext* ctx, const ConvGeom& g, const TensorView& in,
                     const TensorView& filter) {
    const std::vector<int64_t> conv_dims = g.OutputDims();
    PoolGeometry pg;
    OP_REQUIRES_OK(ctx, MakeGeometry(pool_attrs_, pool_attrs_.ksize, pool_attrs_.strides, conv_dims.data(), 4, false, &pg));
    TensorView out;
    if (!ctx->allocate_output(0, pg.OutputDims(), &out).ok()) return;
    if (out.NumElements() == 0) return;
    float* y = out.data<float>();
    const bool unpadded = pg.pad_top == 0 && pg.pad_bottom == 0 && pg.pad_left == 0 && pg.pad_right == 0;
    const bool narrow = NarrowConvApplies(g.oc, g.groups, g.sw, g.dw, g.ow);
    if (narrow && unpadded && pg.k_h == 2 && pg.k_w == 2 && pg.s_h == 2 && pg.s_w == 2) {
      ComputeNarrowPooled2x2(ctx, g, in, filter, y);
      return;
    }
    if (narrow && unpadded && g.format == cu::Format::kNHWC && pg.k_h <= pg.s_h) {
      ComputeNarrowBanded(ctx, g, in, filter, pg, y);
      return;
    }
    if (!narrow && ComputeDnnl(ctx, g, in, filter, y, &pg)) return;
    BufferPool::Lease conv_lease = pool_.Acquire();
    float* conv =
        reinterpret_cast<float*>(conv_lease.Get(static_cast<size_t>(g.n * g.oh * g.ow * g.oc) * sizeof(float)));
    ComputeDnnl(ctx, g, in, filter, conv);
    if (!ctx->ok()) return;
    PoolForwardFloat(ctx, pool_max_, pg, conv, y);
  }

  // Each task computes the convolution rows of a few pooled rows into a
  // per-thread band and pools them while they are in cache.
  void ComputeNarrowBanded(OpKernelContext* ctx, const ConvGeom& g, const TensorView& in,
                           const TensorView& filter, const PoolGeometry& pg, float* y) {
    const NarrowConvProblem p = NarrowProblem(g);
    BufferPool::Lease bn_lease = pool_.Acquire();
    const NarrowConvEpilogue e = NarrowEpilogue(ctx, g.oc, &bn_lease);
    // A band: the convolution rows of `group` pooled rows of one image.
    const int64_t group = std::max<int64_t>(1, kNarrowBandRows / pg.s_h);
    PoolGeometry band = pg;
    band.batch = 1;
    band.in_h = (group - 1) * pg.s_h + pg.k_h;
    band.out_h = group;
    const size_t band_bytes = AlignUp(static_cast<size_t>(band.in_h * g.ow * g.oc) * sizeof(float));
    const size_t scratch_bytes = NarrowConvScratchBytes(p);
    const float* x = in.data<float>();
    const float* f = filter.data<float>();
    const int64_t pooled_rows = pg.batch * pg.out_h;
    const int64_t macs = pooled_rows * pg.k_h * g.ow * g.oc * g.kh * g.kw * g.c;
    ForRange(ctx, pooled_rows, macs >= kParallelMinMacs ? macs : 0, macs / pooled_rows / kMacsPerNs + 1,
             [&](int64_t b, int64_t end) {
               char* buf = ThreadScratch().Get(band_bytes + scratch_bytes);
               float* band_rows = reinterpret_cast<float*>(buf);
               for (int64_t u = b; u < end;) {
                 const int64_t n = u / pg.out_h, ph = u % pg.out_h;
                 const int64_t count = std::min({group, pg.out_h - ph, end - u});
                 const int64_t first = n * g.oh + ph * pg.s_h;  // first convolution row
                 const int64_t conv_rows = (count - 1) * pg.s_h + pg.k_h;
                 ComputeNarrowConvRows(p, x, f, e, {band_rows, first}, first, first + conv_rows,
                                       buf + band_bytes);
                 PoolNhwcRowsFloat(pool_max_, band, band_rows, y + u * pg.out_w * g.oc, 0, count);
                 u += count;
               }
             });
  }

  // The commonest pooling (2x2, stride 2) after a narrow convolution: pooled
  // in registers, two convolution rows at a time (narrow_conv.h).
  void ComputeNarrowPooled2x2(OpKernelContext* ctx, const ConvGeom& g, const TensorView& in,
                              const TensorView& filter, float* y) {
    const NarrowConvProblem p = NarrowProblem(g);
    BufferPool::Lease bn_lease = pool_.Acquire();
    const NarrowConvEpilogue e = NarrowEpilogue(ctx, g.oc, &bn_lease);
    const NarrowPool pool = pool_max_ ? NarrowPool::kMax : NarrowPool::kAvg;
    const float* x = in.data<float>();
    const float* f = filter.data<float>();
    const int64_t pooled_rows = g.n * (g.oh / 2);
    const int64_t macs = pooled_rows * 2 * g.ow * g.oc * g.kh * g.kw * g.c;
    const size_t scratch_bytes = NarrowConvScratchBytes(p);
    ForRange(ctx, pooled_rows, macs >= kParallelMinMacs ? macs : 0, macs / pooled_rows / kMacsPerNs + 1,
             [&](int64_t b, int64_t end) {
               ComputeNarrowConvPooledRows(p, x, f, e, pool, y, b, end, ThreadScratch().Get(scratch_bytes));
             });
  }

  void ComputeDirect(OpKernelContext* ctx, const ConvGeom& g, const TensorView& in,
                     const TensorView& filter, const TensorView& out) {
    const bool nchw = g.format == cu::Format::kNCHW;
    BufferPool::Lease lease = pool_.Acquire();
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const int64_t in_elems = in.NumElements(), out_elems = out.NumElements();
    if (nchw) {
      T* buf = reinterpret_cast<T*>(lease.Get(static_cast<size_t>(in_elems + out_elems) * sizeof(T)));
      NchwToNhwc(x, g.n, g.c, g.h * g.w, buf);
      x = buf;
      y = buf + in_elems;
    }
    const T* f = filter.data<T>();
    const int64_t rows = g.n * g.oh;
    const int64_t row_macs = std::max<int64_t>(1, g.Macs() / std::max<int64_t>(rows, 1));
    ForRange(ctx, rows, g.Macs() >= kParallelMinMacs ? g.Macs() : 0, row_macs / kMacsPerNs + 1,
             [&](int64_t r0, int64_t r1) {
               DirectForwardRows(g, x, f, y, r0, r1);
               if (kFused) Epilogue(ctx, g, y, r0, r1);
             });
    if (nchw) NhwcToNchw(y, g.n, g.oc, g.oh * g.ow, out.data<T>());
  }

  // Bias / batch norm and activation on output rows [r0, r1) (NHWC).
  void Epilogue(OpKernelContext* ctx, const ConvGeom& g, T* y, int64_t r0, int64_t r1) const {
    if constexpr (!kOnDnnl<T>) {
      const T* p0 = ctx->input(2).data<T>();
      const T* p1 = spec_.fusion == Fusion::kBatchNorm ? ctx->input(3).data<T>() : nullptr;
      const T* p2 = spec_.fusion == Fusion::kBatchNorm ? ctx->input(4).data<T>() : nullptr;
      const T* p3 = spec_.fusion == Fusion::kBatchNorm ? ctx->input(5).data<T>() : nullptr;
      for (int64_t i = r0 * g.ow; i < r1 * g.ow; ++i) {
        T* px = y + i * g.oc;
        for (int64_t o = 0; o < g.oc; ++o) {
          T v = px[o];
          if (spec_.fusion == Fusion::kBias) {
            v += p0[o];
          } else {
            v = (v - p2[o]) * (p0[o] / static_cast<T>(std::sqrt(p3[o] + static_cast<T>(spec_.epsilon)))) + p1[o];
          }
          px[o] = ApplyAct(v, spec_.act, spec_.alpha);
        }
      }
    }
  }

  FusedSpec spec_;
  // _FusedConv2DPool only.
  bool pooled_ = false;
  bool pool_max_ = true;
  PoolAttrs pool_attrs_;
};

// Conv2DBackpropInput, and DepthwiseConv2dNativeBackpropInput when kDepthwise.
template <typename T, bool kDepthwise>
class Conv2DBackpropInputOp : public ConvKernelBase {
 public:
  static constexpr const char* kOp =
      kDepthwise ? "DepthwiseConv2dNativeBackpropInput" : "Conv2DBackpropInput";
  explicit Conv2DBackpropInputOp(OpKernelConstruction* c) : ConvKernelBase(c, kOp, kDepthwise) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = kOp;
    const TensorView sizes = ctx->input(0);
    const TensorView filter = ctx->input(1);
    const TensorView dout = ctx->input(2);
    std::vector<int64_t> input_shape;
    OP_REQUIRES_OK(ctx, ReadSizes(op, "input_sizes", sizes, &input_shape));
    OP_REQUIRES(ctx, input_shape.size() == 4 || input_shape.size() == 2,
                errors::InvalidArgument(op, " requires input_sizes to contain 4 values or 2 "
                                        "values, but got: ", input_shape.size()));
    OP_REQUIRES(ctx, filter.rank() == 4,
                errors::InvalidArgument(op, ": filter must be 4-dimensional"));
    OP_REQUIRES(ctx, dout.rank() == 4,
                errors::InvalidArgument(op, ": out_backprop must be 4-dimensional"));
    if (input_shape.size() == 2) {
      // Spatial sizes only: batch from out_backprop, depth from the filter.
      const int64_t n = dout.dim(cu::DimIndex(win_.format, 'N'));
      ConvGeom tmp;
      tmp.format = win_.format;
      input_shape = tmp.ActDims(n, filter.dim(2), input_shape[0], input_shape[1]);
    }
    ConvGeom g;
    OP_REQUIRES_OK(ctx, BackpropGeom(op, win_, input_shape, filter.dims(), dout, kDepthwise, &g));
    TensorView out;
    if (!ctx->allocate_output(0, input_shape, &out).ok()) return;
    if (out.NumElements() == 0) return;
    if (dout.NumElements() == 0 || filter.NumElements() == 0) {
      std::memset(out.raw_data(), 0, out.ByteSize());
      return;
    }
    if constexpr (kOnDnnl<T>) {
      std::shared_ptr<Plan> plan = GetPlan(ctx, Kind::kBackwardData, g, DnnlDt<T>(), nullptr);
      OP_REQUIRES(ctx, plan != nullptr, NoPrimitive(op, g));
      BufferPool::Lease w_lease = pool_.Acquire();
      std::optional<BufferPool::Lease> f32_lease;  // bf16 on the f32 plan only
      const void* d = dout.raw_data();
      const void* f = filter.raw_data();
      float* x_f32 = nullptr;  // bf16 on the f32 plan: rounded into out after the run
      if constexpr (std::is_same_v<T, uint16_t>) {
        if (OnFloatCopies<T>(*plan)) {
          BufferPool::Lease* lease = &f32_lease.emplace(pool_.Acquire());
          const std::vector<float*> fa =
              FloatArrays(lease, {dout.NumElements(), filter.NumElements(), out.NumElements()});
          Bf16BitsToFloat(dout.data<uint16_t>(), dout.NumElements(), fa[0]);
          Bf16BitsToFloat(filter.data<uint16_t>(), filter.NumElements(), fa[1]);
          d = fa[0];
          f = fa[1];
          x_f32 = fa[2];
        }
      }
      RunArgs args;
      args.elem = x_f32 ? sizeof(float) : sizeof(T);
      args.a = static_cast<const char*>(d);
      args.b = x_f32 ? reinterpret_cast<char*>(x_f32) : static_cast<char*>(out.raw_data());
      try {
        args.w = PlanWeights(*plan, f, &w_lease);
      } catch (const std::exception& e) {
        OP_REQUIRES(ctx, false, errors::Internal(op, ": oneDNN weights reorder failed: ", e.what()));
      }
      OP_REQUIRES(ctx, RunPlan(ctx, *plan, args),
                  errors::Internal(op, ": oneDNN backward-data convolution failed"));
      if (x_f32) FloatToBf16Bits(x_f32, out.NumElements(), out.data<uint16_t>());
    } else {
      const bool nchw = g.format == cu::Format::kNCHW;
      BufferPool::Lease lease = pool_.Acquire();
      const T* d = dout.data<T>();
      T* x = out.data<T>();
      const int64_t d_elems = dout.NumElements(), x_elems = out.NumElements();
      if (nchw) {
        T* buf = reinterpret_cast<T*>(lease.Get(static_cast<size_t>(d_elems + x_elems) * sizeof(T)));
        NchwToNhwc(d, g.n, g.oc, g.oh * g.ow, buf);
        d = buf;
        x = buf + d_elems;
      }
      std::fill(x, x + x_elems, T(0));
      const T* f = filter.data<T>();
      const int64_t macs = g.Macs();
      ForRange(ctx, g.n, macs >= kParallelMinMacs ? macs : 0,
               macs / std::max<int64_t>(g.n, 1) / kMacsPerNs + 1,
               [&](int64_t b0, int64_t b1) { DirectBackpropInputImages(g, d, f, x, b0, b1); });
      if (nchw) NhwcToNchw(x, g.n, g.c, g.h * g.w, out.data<T>());
    }
  }
};

// Conv2DBackpropFilter, and DepthwiseConv2dNativeBackpropFilter when kDepthwise.
template <typename T, bool kDepthwise>
class Conv2DBackpropFilterOp : public ConvKernelBase {
 public:
  static constexpr const char* kOp =
      kDepthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter";
  explicit Conv2DBackpropFilterOp(OpKernelConstruction* c) : ConvKernelBase(c, kOp, kDepthwise) {}

  void Compute(OpKernelContext* ctx) override {
    const char* op = kOp;
    const TensorView in = ctx->input(0);
    const TensorView sizes = ctx->input(1);
    const TensorView dout = ctx->input(2);
    std::vector<int64_t> filter_shape;
    OP_REQUIRES_OK(ctx, ReadSizes(op, "filter_sizes", sizes, &filter_shape));
    ConvGeom g;
    OP_REQUIRES_OK(ctx, BackpropGeom(op, win_, in.dims(), filter_shape, dout, kDepthwise, &g));
    TensorView out;
    if (!ctx->allocate_output(0, filter_shape, &out).ok()) return;
    const int64_t w_elems = out.NumElements();
    if (w_elems == 0) return;
    if (dout.NumElements() == 0 || in.NumElements() == 0) {
      std::memset(out.raw_data(), 0, out.ByteSize());
      return;
    }
    BufferPool::Lease lease = pool_.Acquire();
    if constexpr (std::is_same_v<T, float> && !kDepthwise) {
      if (NarrowConvApplies(g.oc, g.groups, g.sw, g.dw, g.ow)) {
        ComputeNarrow(ctx, g, in.data<float>(), dout.data<float>(), out.data<float>(), &lease);
        return;
      }
      if (FilterGradOnGemm(g)) {
        ComputeGemmFilterGrad(ctx, g, in.data<float>(), dout.data<float>(), out.data<float>(), &lease);
        return;
      }
    }
    if constexpr (kOnDnnl<T>) {
      std::shared_ptr<Plan> plan = GetPlan(ctx, Kind::kBackwardWeights, g, DnnlDt<T>(), nullptr);
      OP_REQUIRES(ctx, plan != nullptr, NoPrimitive(op, g));
      // One f32 partial sum per chunk; a float output takes the first.
      const size_t chunks = plan->chunks.size();
      const size_t stride = AlignUp(static_cast<size_t>(w_elems) * sizeof(float));
      char* base = lease.Get(stride * chunks);
      std::vector<float*> partials(chunks);
      for (size_t i = 0; i < chunks; ++i) partials[i] = reinterpret_cast<float*>(base + i * stride);
      if (std::is_same_v<T, float>) partials[0] = out.data<float>();
      std::optional<BufferPool::Lease> f32_lease;  // bf16 on the f32 plan only
      RunArgs args;
      args.elem = sizeof(T);
      args.a = static_cast<const char*>(in.raw_data());
      args.b = static_cast<char*>(dout.raw_data());
      if constexpr (std::is_same_v<T, uint16_t>) {
        if (OnFloatCopies<T>(*plan)) {  // bf16 on the f32 plan: float inputs
          BufferPool::Lease* lease = &f32_lease.emplace(pool_.Acquire());
          const std::vector<float*> fa = FloatArrays(lease, {in.NumElements(), dout.NumElements()});
          Bf16BitsToFloat(in.data<uint16_t>(), in.NumElements(), fa[0]);
          Bf16BitsToFloat(dout.data<uint16_t>(), dout.NumElements(), fa[1]);
          args.elem = sizeof(float);
          args.a = reinterpret_cast<const char*>(fa[0]);
          args.b = reinterpret_cast<char*>(fa[1]);
        }
      }
      args.w_partials = &partials;
      OP_REQUIRES(ctx, RunPlan(ctx, *plan, args),
                  errors::Internal(op, ": oneDNN backward-weights convolution failed"));
      float* sum = partials[0];
      for (size_t i = 1; i < chunks; ++i) {
        EigenVecMap<float>(sum, w_elems) += EigenConstVecMap<float>(partials[i], w_elems);
      }
      if constexpr (std::is_same_v<T, uint16_t>) FloatToBf16Bits(sum, w_elems, out.data<uint16_t>());
    } else {
      const bool nchw = g.format == cu::Format::kNCHW;
      const T* x = in.data<T>();
      const T* d = dout.data<T>();
      const int64_t x_elems = in.NumElements(), d_elems = dout.NumElements();
      const int64_t chunks = BatchChunks(ctx, g.n, g.Macs());
      const size_t part_bytes = static_cast<size_t>(w_elems * (chunks - 1)) * sizeof(T);
      char* buf = lease.Get(part_bytes + static_cast<size_t>(nchw ? x_elems + d_elems : 0) * sizeof(T) + 64);
      T* parts = reinterpret_cast<T*>(buf);
      if (nchw) {
        T* t = parts + w_elems * (chunks - 1);
        NchwToNhwc(x, g.n, g.c, g.h * g.w, t);
        NchwToNhwc(d, g.n, g.oc, g.oh * g.ow, t + x_elems);
        x = t;
        d = t + x_elems;
      }
      T* o = out.data<T>();
      std::fill(o, o + w_elems, T(0));
      std::fill(parts, parts + w_elems * (chunks - 1), T(0));
      auto fn = [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          T* dst = c == 0 ? o : parts + (c - 1) * w_elems;
          DirectBackpropFilterImages(g, x, d, dst, g.n * c / chunks, g.n * (c + 1) / chunks);
        }
      };
      if (chunks == 1) {
        fn(0, 1);
      } else {
        ctx->parallel_for(chunks, g.Macs() / chunks / kMacsPerNs + 1, fn);
      }
      for (int64_t c = 1; c < chunks; ++c) {
        EigenVecMap<T>(o, w_elems) += EigenConstVecMap<T>(parts + (c - 1) * w_elems, w_elems);
      }
    }
  }

 private:
  // Long patches into many output channels with a small filter gradient
  // (NHWC, float): im2col + Eigen's GEMM (DirectBackpropFilterImages) beat
  // oneDNN 2.6's AVX2 backward-weights kernels, blocked layout included, on
  // W8's 64->128 3x3 at 112x112: 177 against 208 ms (ceiling 192) at 1
  // thread, 95 against 112 at 2 (bench/conv_backprop_bench.cc). Short
  // patches lose (W8's 3->64: 54 against 50 ms; LeNet's 6->16 5x5: 3.0
  // against 1.0), and a filter gradient that leaves the cache, or bands of
  // few pixels, would make each product re-read it.
  static bool FilterGradOnGemm(const ConvGeom& g) {
    const int64_t k = g.kh * g.kw * g.icg();
    const int64_t band_rows = static_cast<int64_t>(kFilterGradBandBytes) / (g.ow * k * 4 + 1);
    return g.format == cu::Format::kNHWC && g.groups == 1 && k >= 256 && g.oc >= 64 &&
           k * g.oc * 4 <= (512 << 10) && std::max<int64_t>(band_rows, 1) * g.ow >= 64;
  }

  // dw = the sum over fixed chunks of the batch (8 at most) of
  // chunk(b0, b1, partial), which writes its images' partial sum; added in
  // chunk order, so the bits do not depend on the number of threads.
  template <typename Chunk>
  void SumOverBatchChunks(OpKernelContext* ctx, const ConvGeom& g, float* dw, BufferPool::Lease* lease,
                          Chunk chunk) {
    constexpr int64_t kChunks = 8;
    const int64_t w_elems = g.kh * g.kw * g.icg() * g.oc;
    const int64_t chunks = std::min(kChunks, g.n);
    const size_t stride = AlignUp(static_cast<size_t>(w_elems) * sizeof(float));
    char* parts = lease->Get(stride * static_cast<size_t>(chunks - 1) + 64);
    auto part = [&](int64_t c) { return c == 0 ? dw : reinterpret_cast<float*>(parts + (c - 1) * stride); };
    ForRange(ctx, chunks, g.Macs() >= kParallelMinMacs ? g.Macs() : 0, g.Macs() / chunks / kMacsPerNs + 1,
             [&](int64_t c0, int64_t c1) {
               for (int64_t c = c0; c < c1; ++c) chunk(g.n * c / chunks, g.n * (c + 1) / chunks, part(c));
             });
    for (int64_t c = 1; c < chunks; ++c) EigenVecMap<float>(dw, w_elems) += EigenConstVecMap<float>(part(c), w_elems);
  }

  void ComputeGemmFilterGrad(OpKernelContext* ctx, const ConvGeom& g, const float* x, const float* dy, float* dw,
                             BufferPool::Lease* lease) {
    const int64_t w_elems = g.kh * g.kw * g.icg() * g.oc;
    SumOverBatchChunks(ctx, g, dw, lease, [&](int64_t b0, int64_t b1, float* partial) {
      std::fill(partial, partial + w_elems, 0.f);
      DirectBackpropFilterImages(g, x, dy, partial, b0, b1);
    });
  }

  // Few output channels (narrow_conv.h). oneDNN's AVX2 backward kernels put
  // output channels in the vector lanes too: LeNet's 1->6 filter gradient
  // took 2.0 ms there.
  void ComputeNarrow(OpKernelContext* ctx, const ConvGeom& g, const float* x, const float* dy, float* dw,
                     BufferPool::Lease* lease) {
    const NarrowConvProblem p = NarrowProblem(g);
    const size_t scratch_bytes = NarrowConvFilterGradScratchBytes(p);
    SumOverBatchChunks(ctx, g, dw, lease, [&](int64_t b0, int64_t b1, float* partial) {
      ComputeNarrowConvFilterGrad(p, x, dy, b0, b1, partial, ThreadScratch().Get(scratch_bytes));
    });
  }
};

}  // namespace

#define GR_REGISTER_CONV(OP, T, DTYPE, ...) \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint("T", {DTYPE}), __VA_ARGS__);

GR_REGISTER_CONV("Conv2D", float, GR_FLOAT, ConvForwardOp<float, false, false>)
GR_REGISTER_CONV("Conv2D", bf16, GR_BFLOAT16, ConvForwardOp<uint16_t, false, false>)
GR_REGISTER_CONV("Conv2D", double, GR_DOUBLE, ConvForwardOp<double, false, false>)
GR_REGISTER_CONV("Conv2D", int32, GR_INT32, ConvForwardOp<int32_t, false, false>)
GR_REGISTER_CONV("DepthwiseConv2dNative", float, GR_FLOAT, ConvForwardOp<float, true, false>)
GR_REGISTER_CONV("DepthwiseConv2dNative", bf16, GR_BFLOAT16, ConvForwardOp<uint16_t, true, false>)
GR_REGISTER_CONV("DepthwiseConv2dNative", double, GR_DOUBLE, ConvForwardOp<double, true, false>)
GR_REGISTER_CONV("_FusedConv2D", float, GR_FLOAT, ConvForwardOp<float, false, true>)
GR_REGISTER_CONV("_FusedConv2D", bf16, GR_BFLOAT16, ConvForwardOp<uint16_t, false, true>)
GR_REGISTER_CONV("_FusedConv2D", double, GR_DOUBLE, ConvForwardOp<double, false, true>)
GR_REGISTER_CONV("_FusedConv2DPool", float, GR_FLOAT, ConvForwardOp<float, false, true>)
GR_REGISTER_CONV("Conv2DBackpropInput", float, GR_FLOAT, Conv2DBackpropInputOp<float, false>)
GR_REGISTER_CONV("Conv2DBackpropInput", bf16, GR_BFLOAT16, Conv2DBackpropInputOp<uint16_t, false>)
GR_REGISTER_CONV("Conv2DBackpropInput", double, GR_DOUBLE, Conv2DBackpropInputOp<double, false>)
GR_REGISTER_CONV("Conv2DBackpropInput", int32, GR_INT32, Conv2DBackpropInputOp<int32_t, false>)
GR_REGISTER_CONV("Conv2DBackpropFilter", float, GR_FLOAT, Conv2DBackpropFilterOp<float, false>)
GR_REGISTER_CONV("Conv2DBackpropFilter", bf16, GR_BFLOAT16, Conv2DBackpropFilterOp<uint16_t, false>)
GR_REGISTER_CONV("Conv2DBackpropFilter", double, GR_DOUBLE, Conv2DBackpropFilterOp<double, false>)
GR_REGISTER_CONV("DepthwiseConv2dNativeBackpropInput", float, GR_FLOAT, Conv2DBackpropInputOp<float, true>)
GR_REGISTER_CONV("DepthwiseConv2dNativeBackpropInput", bf16, GR_BFLOAT16, Conv2DBackpropInputOp<uint16_t, true>)
GR_REGISTER_CONV("DepthwiseConv2dNativeBackpropInput", double, GR_DOUBLE, Conv2DBackpropInputOp<double, true>)
GR_REGISTER_CONV("DepthwiseConv2dNativeBackpropFilter", float, GR_FLOAT, Conv2DBackpropFilterOp<float, true>)
GR_REGISTER_CONV("DepthwiseConv2dNativeBackpropFilter", bf16, GR_BFLOAT16, Conv2DBackpropFilterOp<uint16_t, true>)
GR_REGISTER_CONV("DepthwiseConv2dNativeBackpropFilter", double, GR_DOUBLE, Conv2DBackpropFilterOp<double, true>)

#undef GR_REGISTER_CONV

}  // namespace sdk
}  // namespace graphrt
