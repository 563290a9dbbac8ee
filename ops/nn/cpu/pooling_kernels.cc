// CPU kernels of the 2-D pooling ops: MaxPool, MaxPoolV2, AvgPool,
// MaxPoolGrad, MaxPoolGradGrad (and their V2 forms), AvgPoolGrad, for NHWC
// and NCHW.
//
// Window rules are TensorFlow's (common/cpu/conv_util.h): padded positions
// never take part, so SAME average pooling divides by the number of valid
// elements of each window, and the max of a window is over its valid
// elements. MaxPoolGrad sends each output's gradient to the first maximum
// of its window in row-major (h, w) order, as TensorFlow does.
//
// Forward float pooling runs on oneDNN's pooling primitives or on the
// direct loops below, whichever bench/pool_bench.cc showed faster for the
// layout (see kUseDnnl*). oneDNN calls run single-threaded
// (common/cpu/dnnl_util.h) on slices of the batch split over the session's
// pool; primitives are cached per kernel instance by shape.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/conv_util.h"
#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"
#include "nn/cpu/pooling.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
namespace cu = conv_util;

template <typename T>
using VecMap = EigenVecMap<T>;
template <typename T>
using ConstVecMap = EigenConstVecMap<T>;

// Which float forward paths go through oneDNN, chosen by bench/pool_bench.cc
// on [8,64,224,224]-sized inputs, 2x2 windows, stride 2, VALID, 2-thread
// session (2 shared cores, so the figures are noisy): MaxPool NHWC direct
// 21 ms vs oneDNN 27 ms, AvgPool NHWC 23 vs 30 ms; NCHW direct 16-21 ms vs
// oneDNN 355-466 ms (its plain-layout pooling is a reference loop). The
// direct loops win everywhere; the oneDNN path stays for other machines
// (GRAPHRT_NN_POOL_IMPL=dnnl) and passes the same tests.
constexpr bool kUseDnnlNhwc = false;
constexpr bool kUseDnnlNchw = false;

// For benchmarks only: GRAPHRT_NN_POOL_IMPL=dnnl or =direct forces one
// implementation of float forward pooling; unset, the defaults above.
struct PoolImpl {
  bool dnnl_nhwc = kUseDnnlNhwc;
  bool dnnl_nchw = kUseDnnlNchw;
  static PoolImpl FromEnv() {
    PoolImpl p;
    const char* v = std::getenv("GRAPHRT_NN_POOL_IMPL");
    if (v != nullptr && std::strcmp(v, "dnnl") == 0) p.dnnl_nhwc = p.dnnl_nchw = true;
    if (v != nullptr && std::strcmp(v, "direct") == 0) p.dnnl_nhwc = p.dnnl_nchw = false;
    return p;
  }
};


// Rough ns per input element visited, for the pool's cost model.
constexpr int64_t kCostPerTap = 1;

// A scratch row per thread, reused across runs (no per-run allocation).
template <typename T>
T* ScratchRow(int64_t n) {
  thread_local std::vector<T> row;
  if (static_cast<int64_t>(row.size()) < n) row.resize(static_cast<size_t>(n));
  return row.data();
}

// ------------------------------------------------------ direct forward

enum class PoolKind { kMax, kAvg };

// NHWC: each output pixel combines its window's C-channel vectors. kC > 0
// is C known at compile time: the channel loops then unroll into a few
// vector registers, which is what makes small C fast (3-4x over a runtime
// loop at C = 6, LeNet's first pooling); kC == 0 reads C from g.
template <typename T, PoolKind K, int kC>
void PoolNhwcRows(const PoolGeometry& g, const T* in, T* out, int64_t row_begin, int64_t row_end) {
  const int64_t C = kC > 0 ? kC : g.depth;
  const int64_t row_len = g.in_w * C;
  // With kC fixed the accumulator is a local array the compiler keeps in
  // registers (it cannot for `out`, which may alias `in` as far as it knows).
  T local[kC > 0 ? kC : 1];
  auto combine = [](const T* x, int64_t n, T* acc) {
    for (int64_t c = 0; c < n; ++c) {
      if constexpr (K == PoolKind::kMax) {
        acc[c] = x[c] > acc[c] ? x[c] : acc[c];
      } else {
        acc[c] += x[c];
      }
    }
  };
  for (int64_t u = row_begin; u < row_end; ++u) {  // u = n * out_h + oh
    const int64_t n = u / g.out_h, oh = u % g.out_h;
    int64_t h0, h1;
    g.Rows(oh, &h0, &h1);
    const T* img = in + n * g.in_h * row_len;
    T* orow = out + u * g.out_w * C;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      int64_t w0, w1;
      g.Cols(ow, &w0, &w1);
      T* o = orow + ow * C;
      if (h1 - h0 == 2 && w1 - w0 == 2) {
        // The common 2x2 window, whole: a tree over four independent loads
        // instead of a dependent chain of combines.
        const T* a = img + h0 * row_len + w0 * C;
        const T* b = a + row_len;
        for (int64_t c = 0; c < C; ++c) {
          if constexpr (K == PoolKind::kMax) {
            const T top = a[c + C] > a[c] ? a[c + C] : a[c];
            const T bottom = b[c + C] > b[c] ? b[c + C] : b[c];
            o[c] = bottom > top ? bottom : top;
          } else {
            o[c] = ((a[c] + a[c + C]) + (b[c] + b[c + C])) * T(0.25);
          }
        }
        continue;
      }
      T* acc = kC > 0 ? local : o;
      const T* first_row = img + h0 * row_len;
      for (int64_t c = 0; c < C; ++c) acc[c] = first_row[w0 * C + c];
      for (int64_t w = w0 + 1; w < w1; ++w) combine(first_row + w * C, C, acc);
      for (int64_t h = h0 + 1; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) combine(img + h * row_len + w * C, C, acc);
      if constexpr (K == PoolKind::kAvg) {
        const T scale = T(1) / static_cast<T>((h1 - h0) * (w1 - w0));
        for (int64_t c = 0; c < C; ++c) acc[c] *= scale;
      }
      if constexpr (kC > 0) {
        for (int64_t c = 0; c < C; ++c) o[c] = acc[c];
      }
    }
  }
}

// PoolNhwcRows with C fixed at compile time where the channel count is one
// of the small ones networks use.
template <typename T, PoolKind K>
using PoolRowsFn = void (*)(const PoolGeometry&, const T*, T*, int64_t, int64_t);

template <typename T, PoolKind K>
PoolRowsFn<T, K> NhwcRowsFor(int64_t depth) {
  if constexpr (std::is_same_v<T, float>) {
    switch (depth) {
      case 1: return &PoolNhwcRows<T, K, 1>;
      case 2: return &PoolNhwcRows<T, K, 2>;
      case 3: return &PoolNhwcRows<T, K, 3>;
      case 4: return &PoolNhwcRows<T, K, 4>;
      case 6: return &PoolNhwcRows<T, K, 6>;
      case 8: return &PoolNhwcRows<T, K, 8>;
      case 16: return &PoolNhwcRows<T, K, 16>;
      case 32: return &PoolNhwcRows<T, K, 32>;
      default: break;
    }
  }
  return &PoolNhwcRows<T, K, 0>;
}

template <typename T, PoolKind K>
void PoolNchwPlanes(const PoolGeometry& g, const T* in, T* out, int64_t plane_begin,
                    int64_t plane_end) {
  const int64_t W = g.in_w;
  T* acc = ScratchRow<T>(W);
  for (int64_t p = plane_begin; p < plane_end; ++p) {  // p = n * C + c
    const T* plane = in + p * g.in_h * W;
    T* o = out + p * g.out_h * g.out_w;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      int64_t h0, h1;
      g.Rows(oh, &h0, &h1);
      // Combine the window's rows column by column (vectorized) ...
      const T* row = plane + h0 * W;
      if (h1 - h0 > 1) {
        VecMap<T> a(acc, W);
        a = ConstVecMap<T>(row, W);
        for (int64_t h = h0 + 1; h < h1; ++h) {
          if constexpr (K == PoolKind::kMax) {
            a = a.max(ConstVecMap<T>(plane + h * W, W));
          } else {
            a += ConstVecMap<T>(plane + h * W, W);
          }
        }
        row = acc;
      }
      // ... then the columns of each window.
      T* orow = o + oh * g.out_w;
      if (g.k_w == 2 && g.s_w == 2 && g.pad_left == 0 && 2 * g.out_w <= W) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const T x0 = row[2 * ow], x1 = row[2 * ow + 1];
          if constexpr (K == PoolKind::kMax) {
            orow[ow] = x1 > x0 ? x1 : x0;
          } else {
            orow[ow] = (x0 + x1) / static_cast<T>(2 * (h1 - h0));
          }
        }
        continue;
      }
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t w0, w1;
        g.Cols(ow, &w0, &w1);
        T m = row[w0];
        for (int64_t w = w0 + 1; w < w1; ++w) {
          if constexpr (K == PoolKind::kMax) {
            m = row[w] > m ? row[w] : m;
          } else {
            m += row[w];
          }
        }
        if constexpr (K == PoolKind::kAvg) m /= static_cast<T>((h1 - h0) * (w1 - w0));
        orow[ow] = m;
      }
    }
  }
}

// Max over groups of depth_window consecutive channels.
template <typename T>
void DepthwiseMaxPool(OpKernelContext* ctx, const PoolGeometry& g, const T* in, T* out) {
  const int64_t k = g.depth_window;
  const int64_t spatial = g.in_h * g.in_w;
  const int64_t total = g.batch * spatial * g.depth;
  if (!g.nchw) {
    // Rows of `depth` channels, one per (n, h, w).
    ForRange(ctx, g.batch * spatial, total, g.depth, [=](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* x = in + r * g.depth;
        T* o = out + r * g.out_depth;
        for (int64_t oc = 0; oc < g.out_depth; ++oc) {
          T m = x[oc * k];
          for (int64_t j = 1; j < k; ++j) m = x[oc * k + j] > m ? x[oc * k + j] : m;
          o[oc] = m;
        }
      }
    });
    return;
  }
  // NCHW: output plane (n, oc) is the max of k consecutive input planes.
  ForRange(ctx, g.batch * g.out_depth, total, k * spatial, [=](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / g.out_depth, oc = p % g.out_depth;
      const T* x = in + (n * g.depth + oc * k) * spatial;
      VecMap<T> o(out + p * spatial, spatial);
      o = ConstVecMap<T>(x, spatial);
      for (int64_t j = 1; j < k; ++j) o = o.max(ConstVecMap<T>(x + j * spatial, spatial));
    }
  });
}

// ------------------------------------------------------- oneDNN forward

struct DnnlPool {
  dnnl::pooling_forward prim;
  dnnl::memory::desc src_md, dst_md;
};

// The batch split: `parts` slices of `chunk` images (the last may be short).
struct BatchSplit {
  int64_t chunk = 0, parts = 0;
};

BatchSplit SplitBatch(OpKernelContext* ctx, int64_t batch, int64_t elements) {
  BatchSplit s;
  const int64_t threads = elements >= kParallelMinElements ? std::max(1, ctx->num_threads()) : 1;
  s.parts = std::min(batch, threads);
  s.chunk = (batch + s.parts - 1) / s.parts;
  s.parts = (batch + s.chunk - 1) / s.chunk;
  return s;
}

class DnnlPoolCache {
 public:
  // The primitive for `nb` images of geometry g, or null if oneDNN cannot
  // build one.
  std::shared_ptr<DnnlPool> Get(const PoolGeometry& g, int64_t nb, dnnl::algorithm alg) {
    const ShapeKeyedCache<DnnlPool>::Key key = {nb,      g.depth,   g.in_h,    g.in_w,
                                                g.k_h,   g.k_w,     g.s_h,     g.s_w,
                                                g.pad_top, g.pad_bottom, g.pad_left,
                                                g.pad_right, g.nchw ? 1 : 0,
                                                static_cast<int64_t>(alg)};
    return cache_.GetOrCreate(key, [&]() -> std::shared_ptr<DnnlPool> {
      using tag = dnnl::memory::format_tag;
      const tag t = g.nchw ? tag::nchw : tag::nhwc;
      try {
        SingleOmpThread one_thread;
        auto p = std::make_shared<DnnlPool>();
        p->src_md = dnnl::memory::desc({nb, g.depth, g.in_h, g.in_w}, dnnl::memory::data_type::f32, t);
        p->dst_md =
            dnnl::memory::desc({nb, g.depth, g.out_h, g.out_w}, dnnl::memory::data_type::f32, t);
        dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, p->src_md, p->dst_md,
                                      {g.s_h, g.s_w}, {g.k_h, g.k_w}, {g.pad_top, g.pad_left},
                                      {g.pad_bottom, g.pad_right});
        p->prim = dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(d, DnnlCpuEngine()));
        return p;
      } catch (const dnnl::error&) {
        return nullptr;
      }
    });
  }

 private:
  ShapeKeyedCache<DnnlPool> cache_;
};

// Pools with oneDNN, the batch split over the pool. False if oneDNN could
// not build a primitive for the shape (the caller falls back).
bool DnnlPoolForward(OpKernelContext* ctx, DnnlPoolCache* cache, const PoolGeometry& g,
                     dnnl::algorithm alg, const float* in, float* out) {
  const int64_t in_image = g.depth * g.in_h * g.in_w;
  const int64_t out_image = g.depth * g.out_h * g.out_w;
  const BatchSplit split = SplitBatch(ctx, g.batch, g.batch * in_image);
  const int64_t last = g.batch - (split.parts - 1) * split.chunk;
  std::shared_ptr<DnnlPool> full = cache->Get(g, split.chunk, alg);
  std::shared_ptr<DnnlPool> tail = last == split.chunk ? full : cache->Get(g, last, alg);
  if (!full || !tail) return false;
  std::atomic<bool> ok{true};
  auto run = [&](int64_t b, int64_t e) {
    SingleOmpThread one_thread;
    for (int64_t part = b; part < e; ++part) {
      const DnnlPool& p = part == split.parts - 1 ? *tail : *full;
      const int64_t n0 = part * split.chunk;
      try {
        dnnl::memory src(p.src_md, DnnlCpuEngine(), const_cast<float*>(in + n0 * in_image));
        dnnl::memory dst(p.dst_md, DnnlCpuEngine(), out + n0 * out_image);
        dnnl::stream& s = DnnlThreadStream();
        p.prim.execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        s.wait();
      } catch (const dnnl::error&) {
        ok.store(false, std::memory_order_relaxed);
      }
    }
  };
  if (split.parts == 1) {
    run(0, 1);
  } else {
    ctx->parallel_for(split.parts, split.chunk * in_image * kCostPerTap, run);
  }
  return ok.load();
}

// --------------------------------------------------------- forward ops

template <typename T, PoolKind K>
void PoolForward(OpKernelContext* ctx, const PoolGeometry& g, const PoolImpl& impl,
                 DnnlPoolCache* dnnl_cache, const T* in, T* out) {
  const int64_t taps = g.batch * g.out_h * g.out_w * g.depth * g.k_h * g.k_w;
  if constexpr (std::is_same_v<T, float>) {
    if (g.nchw ? impl.dnnl_nchw : impl.dnnl_nhwc) {
      const dnnl::algorithm alg = K == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                                      : dnnl::algorithm::pooling_avg_exclude_padding;
      if (DnnlPoolForward(ctx, dnnl_cache, g, alg, in, out)) return;
    }
  }
  if (g.nchw) {
    const int64_t planes = g.batch * g.depth;
    ForRange(ctx, planes, taps, std::max<int64_t>(1, taps / planes) * kCostPerTap,
             [=](int64_t b, int64_t e) { PoolNchwPlanes<T, K>(g, in, out, b, e); });
  } else {
    const int64_t rows = g.batch * g.out_h;
    const PoolRowsFn<T, K> pool_rows = NhwcRowsFor<T, K>(g.depth);
    ForRange(ctx, rows, taps, std::max<int64_t>(1, taps / rows) * kCostPerTap,
             [=](int64_t b, int64_t e) { pool_rows(g, in, out, b, e); });
  }
}

// ksize or strides of MaxPoolV2 / MaxPoolGradV2, read from input `t`.
Status ReadList(const TensorView& t, const char* name, std::vector<int64_t>* v) {
  if (t.rank() != 1 || t.NumElements() != 4)
    return errors::InvalidArgument("Sliding window ", name, " field must specify 4 dimensions");
  v->assign(t.data<int32_t>(), t.data<int32_t>() + 4);
  return Status();
}

// The lists of ops that take them as inputs 'first', 'first + 1'.
Status ReadListInputs(OpKernelContext* ctx, int first, conv_util::Format f, std::vector<int64_t>* ksize,
                      std::vector<int64_t>* strides) {
  GR_RETURN_IF_ERROR_SDK(ReadList(ctx->input(first), "ksize", ksize));
  GR_RETURN_IF_ERROR_SDK(ReadList(ctx->input(first + 1), "stride", strides));
  return PoolAttrs::CheckLists(*ksize, *strides, f);
}

template <typename T, PoolKind K, bool kListsAreInputs>
class PoolOp : public OpKernel {
 public:
  explicit PoolOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(attrs_.Read(c, !kListsAreInputs));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    std::vector<int64_t> ksize = attrs_.ksize, strides = attrs_.strides;
    if constexpr (kListsAreInputs) OP_REQUIRES_OK(ctx, ReadListInputs(ctx, 1, attrs_.format, &ksize, &strides));
    PoolGeometry g;
    OP_REQUIRES_OK(ctx, MakeGeometry(attrs_, ksize, strides, x.dims_data(), x.rank(),
                                     K == PoolKind::kMax, &g));
    const std::vector<int64_t> od = g.OutputDims();
    TensorView out;
    if (!ctx->allocate_output(0, od, &out).ok()) return;
    if (out.NumElements() == 0) return;
    const T* in = x.data<T>();
    T* o = out.data<T>();
    if (g.depth_window > 1) {
      DepthwiseMaxPool<T>(ctx, g, in, o);
      return;
    }
    PoolForward<T, K>(ctx, g, impl_, &dnnl_cache_, in, o);
  }

 private:
  PoolAttrs attrs_;
  const PoolImpl impl_ = PoolImpl::FromEnv();
  DnnlPoolCache dnnl_cache_;
};

// ------------------------------------------------------------ gradients

// Zero-filled output of the original input's shape.
template <typename T>
bool ZeroOutput(OpKernelContext* ctx, int index, const std::vector<int64_t>& dims, TensorView* out) {
  if (!ctx->allocate_output(index, dims, out).ok()) return false;
  std::fill(out->data<T>(), out->data<T>() + out->NumElements(), T(0));
  return true;
}

bool DimsEqual(const TensorView& t, const std::vector<int64_t>& d) {
  return t.dims() == d;
}

// Calls visit(out, in) for every output position `out` of a max pooling
// of `in` (flat indices) with `in` the first maximum of its window in
// row-major (h, w) order, as TensorFlow picks it. Windows overlap within
// an image (NHWC) or a plane (NCHW), never across: the work is split over
// images or planes, so a visit may write anywhere in its own image/plane.
template <typename T, typename Visit>
void ForEachWindowMax(OpKernelContext* ctx, const PoolGeometry& g, const T* in, Visit visit) {
  const int64_t taps = g.batch * g.out_h * g.out_w * g.depth * g.k_h * g.k_w;
  if (g.nchw) {
    const int64_t planes = g.batch * g.depth;
    ForRange(ctx, planes, taps, taps / planes * kCostPerTap, [=](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const int64_t in0 = p * g.in_h * g.in_w, out0 = p * g.out_h * g.out_w;
        const T* xp = in + in0;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t h0, h1;
          g.Rows(oh, &h0, &h1);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            int64_t w0, w1;
            g.Cols(ow, &w0, &w1);
            int64_t best = h0 * g.in_w + w0;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w)
                if (xp[h * g.in_w + w] > xp[best]) best = h * g.in_w + w;
            visit(out0 + oh * g.out_w + ow, in0 + best);
          }
        }
      }
    });
    return;
  }
  const int64_t C = g.depth;
  ForRange(ctx, g.batch, taps, taps / g.batch * kCostPerTap, [=](int64_t b, int64_t e) {
    for (int64_t n = b; n < e; ++n) {
      const int64_t in0 = n * g.in_h * g.in_w * C, out0 = n * g.out_h * g.out_w * C;
      const T* xp = in + in0;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        int64_t h0, h1;
        g.Rows(oh, &h0, &h1);
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          int64_t w0, w1;
          g.Cols(ow, &w0, &w1);
          const int64_t out = out0 + (oh * g.out_w + ow) * C;
          // One channel at a time, its running maximum and position in
          // registers and updated by selects: a branch on the comparison
          // mispredicts on real data (LeNet's first MaxPoolGrad, C = 6,
          // took 2.5x as long that way).
          for (int64_t c = 0; c < C; ++c) {
            int64_t best = (h0 * g.in_w + w0) * C + c;
            T best_value = xp[best];
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const int64_t pos = (h * g.in_w + w) * C + c;
                const T v = xp[pos];
                const bool greater = v > best_value;
                best_value = greater ? v : best_value;
                best = greater ? pos : best;
              }
            }
            visit(out + c, in0 + best);
          }
        }
      }
    }
  });
}

// Whether the windows tile the input exactly (no padding, strides equal to
// the window, sizes that divide: the common 2x2/2 pooling of even sizes),
// so that every input element lies in exactly one window.
bool WindowsTileInput(const PoolGeometry& g) {
  return g.pad_top == 0 && g.pad_bottom == 0 && g.pad_left == 0 && g.pad_right == 0 && g.k_h == g.s_h &&
         g.k_w == g.s_w && g.in_h == g.out_h * g.k_h && g.in_w == g.out_w * g.k_w && g.depth_window == 1;
}

// pick ? a : b through bit masks: GCC makes a branch of a plain select
// here, which mispredicts on gradients (half the Relu outputs are zero).
template <typename T>
inline T SelectBits(bool pick, T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  static_assert(sizeof(T) == sizeof(Bits), "4- or 8-byte types");
  Bits ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const Bits mask = Bits{0} - static_cast<Bits>(pick);
  const Bits r = (ua & mask) | (ub & ~mask);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

// One window of MaxPoolGradTiledNhwc, channels [c0, c1), one at a time:
// its maximum and the tap holding it in registers (selects, not branches,
// which mispredict on real data).
template <typename T, bool kReluGrad>
inline void TiledWindowScalar(const T* xw, const T* gw, T* dw, const int64_t* offsets, int32_t taps, int64_t c0,
                              int64_t c1) {
  for (int64_t c = c0; c < c1; ++c) {
    T best_value = xw[c];
    int32_t best_tap = 0;
    for (int32_t t = 1; t < taps; ++t) {
      const T v = xw[offsets[t] + c];
      const bool greater = v > best_value;
      best_value = greater ? v : best_value;
      best_tap = greater ? t : best_tap;
    }
    const T g = T(0) + gw[c];
    for (int32_t t = 0; t < taps; ++t) {
      T d = SelectBits(best_tap == t, g, T(0));
      if constexpr (kReluGrad) {
        // ReluGrad's product: d * 0 where x <= 0 (-0 or NaN stay so).
        d = SelectBits(xw[offsets[t] + c] > T(0), d, d * T(0));
      }
      dw[offsets[t] + c] = d;
    }
  }
}

// The same for float, 8 channels per vector; returns the channels done.
template <bool kReluGrad>
inline int64_t TiledWindowFloat8(const float* xw, const float* gw, float* dw, const int64_t* offsets, int32_t taps,
                                 int64_t channels) {
  typedef float F8 __attribute__((vector_size(32)));
  typedef int32_t I8 __attribute__((vector_size(32)));
  int64_t c = 0;
  for (; c + 8 <= channels; c += 8) {
    F8 best_value;
    std::memcpy(&best_value, xw + c, sizeof(F8));
    I8 best_tap = I8{};
    for (int32_t t = 1; t < taps; ++t) {
      F8 v;
      std::memcpy(&v, xw + offsets[t] + c, sizeof(F8));
      const I8 greater = v > best_value;
      best_value = greater ? v : best_value;
      best_tap = greater ? I8{} + t : best_tap;
    }
    F8 g;
    std::memcpy(&g, gw + c, sizeof(F8));
    g = F8{} + g;
    for (int32_t t = 0; t < taps; ++t) {
      F8 d = best_tap == t ? g : F8{};
      if constexpr (kReluGrad) {
        F8 x;
        std::memcpy(&x, xw + offsets[t] + c, sizeof(F8));
        d = d * (x > 0.f ? F8{} + 1.f : F8{});
      }
      std::memcpy(dw + offsets[t] + c, &d, sizeof(F8));
    }
  }
  return c;
}

// MaxPoolGrad (NHWC) where the windows tile the input: each input element
// is written once (its window's gradient where it is the window's first
// maximum, else zero) with no zero fill before and no scatter. kReluGrad
// multiplies by (x > 0) as ReluGrad against the pooling's input does
// (_MaxPoolGradReluGrad). The gradient is added to a zero, as the general
// path's scatter does (-0 becomes +0).
// Below this many channels a window's channels are too few for the
// vectors: the zero fill, scatter (and ReluGrad's product) are faster
// (LeNet's first pooling, 6 channels: 0.94 ms tiled against 0.55).
constexpr int64_t kTiledMinDepth = 8;

template <typename T, bool kReluGrad>
void MaxPoolGradTiledNhwc(OpKernelContext* ctx, const PoolGeometry& g, const T* x, const T* grad, T* dx) {
  const int64_t C = g.depth;
  const int32_t taps = static_cast<int32_t>(g.k_h * g.k_w);
  const int64_t window_rows = g.batch * g.out_h;
  const int64_t per_row = g.out_w * taps * C;
  ForRange(ctx, window_rows, window_rows * per_row, per_row * kCostPerTap, [=](int64_t b, int64_t e) {
    int64_t* offsets = ScratchRow<int64_t>(taps);  // of each tap from the window's first element
    for (int32_t t = 0; t < taps; ++t) offsets[t] = ((t / g.k_w) * g.in_w + t % g.k_w) * C;
    for (int64_t row = b; row < e; ++row) {
      const int64_t n = row / g.out_h, oh = row % g.out_h;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t base = ((n * g.in_h + oh * g.k_h) * g.in_w + ow * g.k_w) * C;
        const T* gw = grad + (row * g.out_w + ow) * C;
        int64_t c = 0;
        if constexpr (std::is_same_v<T, float>) c = TiledWindowFloat8<kReluGrad>(x + base, gw, dx + base, offsets, taps, C);
        TiledWindowScalar<T, kReluGrad>(x + base, gw, dx + base, offsets, taps, c, C);
      }
    }
  });
}

// MaxPoolGrad and MaxPoolGradGrad, and their V2 forms (kListsAreInputs:
// ksize and strides are inputs 3 and 4). Inputs orig_input x, orig_output
// y, and a gradient: MaxPoolGrad's is shaped like y and goes to x's shape
// (each output's gradient to the maximum of its window); MaxPoolGradGrad's
// is shaped like x and goes to y's shape (each output takes the gradient
// at the maximum of its window). kReluGrad: _MaxPoolGradReluGrad, the
// gradient then multiplied by (orig_input > 0) as ReluGrad does.
template <typename T, bool kGradGrad, bool kListsAreInputs = false, bool kReluGrad = false>
class MaxPoolGradOp : public OpKernel {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(attrs_.Read(c, !kListsAreInputs));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const TensorView y = ctx->input(1);
    const TensorView dy = ctx->input(2);
    std::vector<int64_t> ksize = attrs_.ksize, strides = attrs_.strides;
    if constexpr (kListsAreInputs) OP_REQUIRES_OK(ctx, ReadListInputs(ctx, 3, attrs_.format, &ksize, &strides));
    OP_REQUIRES(ctx, x.rank() == 4, errors::InvalidArgument("tensor_in must be 4-dimensional"));
    OP_REQUIRES(ctx, y.rank() == 4, errors::InvalidArgument("tensor_out must be 4-dimensional"));
    OP_REQUIRES(ctx, dy.rank() == 4, errors::InvalidArgument("out_backprop must be 4-dimensional"));
    PoolGeometry g;
    OP_REQUIRES_OK(ctx, MakeGeometry(attrs_, ksize, strides, x.dims_data(), 4,
                                     /*depth_pooling_allowed=*/false, &g));
    const std::vector<int64_t> od = g.OutputDims();
    const std::vector<int64_t> id = g.InputDims();
    OP_REQUIRES(ctx, DimsEqual(y, od),
                errors::InvalidArgument("Expected orig_output shape to be ", sf::ShapeString(od),
                                        ", but got ", sf::ShapeString(y)));
    const std::vector<int64_t>& grad_dims = kGradGrad ? id : od;
    OP_REQUIRES(ctx, DimsEqual(dy, grad_dims),
                errors::InvalidArgument("Expected grad shape to be ", sf::ShapeString(grad_dims),
                                        ", but got ", sf::ShapeString(dy)));
    const T* grad = dy.data<T>();
    TensorView out;
    if constexpr (kGradGrad) {
      if (!ctx->allocate_output(0, od, &out).ok() || out.NumElements() == 0) return;
      T* o = out.data<T>();
      ForEachWindowMax(ctx, g, x.data<T>(), [=](int64_t out_i, int64_t in_i) { o[out_i] = grad[in_i]; });
    } else if (!g.nchw && g.depth >= kTiledMinDepth && WindowsTileInput(g)) {
      if (!ctx->allocate_output(0, id, &out).ok()) return;
      MaxPoolGradTiledNhwc<T, kReluGrad>(ctx, g, x.data<T>(), grad, out.data<T>());
    } else {
      if (!ZeroOutput<T>(ctx, 0, id, &out)) return;
      if (dy.NumElements() == 0) return;
      T* o = out.data<T>();
      const T* xd = x.data<T>();
      if (kReluGrad && g.k_h <= g.s_h && g.k_w <= g.s_w) {
        // Windows apart: each element gets at most one gradient, so
        // ReluGrad's product can be taken as it is written.
        ForEachWindowMax(ctx, g, xd, [=](int64_t out_i, int64_t in_i) {
          o[in_i] = (o[in_i] + grad[out_i]) * static_cast<T>(xd[in_i] > T(0));
        });
        return;
      }
      ForEachWindowMax(ctx, g, xd, [=](int64_t out_i, int64_t in_i) { o[in_i] += grad[out_i]; });
      if constexpr (kReluGrad) {
        const int64_t size = out.NumElements();
        ForRange(ctx, size, size, 1, [=](int64_t b, int64_t e) {
          VecMap<T>(o + b, e - b) =
              VecMap<T>(o + b, e - b) * (ConstVecMap<T>(x.data<T>() + b, e - b) > T(0)).template cast<T>();
        });
      }
    }
  }

 private:
  PoolAttrs attrs_;
};

template <typename T>
class AvgPoolGradOp : public OpKernel {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(attrs_.Read(c, true)); }

  void Compute(OpKernelContext* ctx) override {
    const TensorView shape = ctx->input(0);
    const TensorView dy = ctx->input(1);
    OP_REQUIRES(ctx, shape.rank() == 1 && shape.NumElements() == 4,
                errors::InvalidArgument("orig_input_shape must be 1-dimensional and 4 elements"));
    OP_REQUIRES(ctx, dy.rank() == 4, errors::InvalidArgument("out_backprop must be 4-dimensional"));
    int64_t dims[4];
    for (int i = 0; i < 4; ++i) {
      dims[i] = shape.data<int32_t>()[i];
      OP_REQUIRES(ctx, dims[i] >= 0,
                  errors::InvalidArgument("orig_input_shape has a negative dimension: ",
                                          sf::ShapeString(std::vector<int64_t>(dims, dims + i + 1))));
    }
    PoolGeometry g;
    OP_REQUIRES_OK(ctx, MakeGeometry(attrs_, attrs_.ksize, attrs_.strides, dims, 4,
                                     /*depth_pooling_allowed=*/false, &g));
    const std::vector<int64_t> od = g.OutputDims();
    OP_REQUIRES(ctx, DimsEqual(dy, od),
                errors::InvalidArgument("Expected grad shape to be ", sf::ShapeString(od),
                                        ", but got ", sf::ShapeString(dy)));
    TensorView out;
    if (!ZeroOutput<T>(ctx, 0, g.InputDims(), &out)) return;
    if (dy.NumElements() == 0) return;
    const T* grad = dy.data<T>();
    T* o = out.data<T>();
    const int64_t taps = g.batch * g.out_h * g.out_w * g.depth * g.k_h * g.k_w;
    if (g.nchw) {
      const int64_t planes = g.batch * g.depth;
      ForRange(ctx, planes, taps, taps / planes * kCostPerTap, [=](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          T* op = o + p * g.in_h * g.in_w;
          const T* gp = grad + p * g.out_h * g.out_w;
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            int64_t h0, h1;
            g.Rows(oh, &h0, &h1);
            for (int64_t ow = 0; ow < g.out_w; ++ow) {
              int64_t w0, w1;
              g.Cols(ow, &w0, &w1);
              const T share = gp[oh * g.out_w + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w) op[h * g.in_w + w] += share;
            }
          }
        }
      });
      return;
    }
    const int64_t C = g.depth;
    ForRange(ctx, g.batch, taps, taps / g.batch * kCostPerTap, [=](int64_t b, int64_t e) {
      T* share = ScratchRow<T>(C);
      for (int64_t n = b; n < e; ++n) {
        T* op = o + n * g.in_h * g.in_w * C;
        const T* gp = grad + n * g.out_h * g.out_w * C;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t h0, h1;
          g.Rows(oh, &h0, &h1);
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            int64_t w0, w1;
            g.Cols(ow, &w0, &w1);
            VecMap<T> s(share, C);
            s = ConstVecMap<T>(gp + (oh * g.out_w + ow) * C, C) /
                static_cast<T>((h1 - h0) * (w1 - w0));
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) VecMap<T>(op + (h * g.in_w + w) * C, C) += s;
          }
        }
      }
    });
  }

 private:
  PoolAttrs attrs_;
};

}  // namespace

Status MakeGeometry(const PoolAttrs& a, const std::vector<int64_t>& ksize,
                    const std::vector<int64_t>& strides, const int64_t* dims, int rank,
                    bool depth_pooling_allowed, PoolGeometry* g) {
  if (rank != 4) return errors::InvalidArgument("tensor_in must be 4-dimensional");
  const cu::Format f = a.format;
  const int dim_n = cu::DimIndex(f, 'N'), dim_h = cu::DimIndex(f, 'H');
  const int dim_w = cu::DimIndex(f, 'W'), dim_c = cu::DimIndex(f, 'C');
  g->nchw = f == cu::Format::kNCHW;
  g->batch = dims[dim_n];
  g->in_h = dims[dim_h];
  g->in_w = dims[dim_w];
  g->depth = dims[dim_c];
  g->k_h = ksize[dim_h];
  g->k_w = ksize[dim_w];
  g->s_h = strides[dim_h];
  g->s_w = strides[dim_w];
  g->depth_window = ksize[dim_c];
  const int64_t depth_stride = strides[dim_c];
  if (g->depth_window != 1) {
    if (!depth_pooling_allowed)
      return errors::Unimplemented("Non-spatial pooling is not yet supported.");
    if (g->k_h != 1 || g->k_w != 1)
      return errors::Unimplemented(
          "MaxPooling supports exactly one of pooling across depth or pooling across "
          "width/height.");
    if (g->depth % g->depth_window != 0)
      return errors::Unimplemented(
          "Depthwise max pooling requires the depth window to evenly divide the input depth");
    if (depth_stride != g->depth_window)
      return errors::Unimplemented(
          "Depthwise max pooling requires the depth window to equal the depth stride");
    if (g->s_h != 1 || g->s_w != 1)
      return errors::Unimplemented(
          "Depthwise max pooling requires the row and column strides to be 1");
    g->out_h = g->in_h;
    g->out_w = g->in_w;
    g->out_depth = g->depth / g->depth_window;
    return Status();
  }
  if (depth_stride != 1)
    return errors::Unimplemented("Pooling with a depth stride of ", depth_stride,
                                 " and a depth window of 1 is not supported.");
  if (a.padding == cu::Padding::kExplicit) {
    g->pad_top = a.explicit_paddings[2 * dim_h];
    g->pad_bottom = a.explicit_paddings[2 * dim_h + 1];
    g->pad_left = a.explicit_paddings[2 * dim_w];
    g->pad_right = a.explicit_paddings[2 * dim_w + 1];
    GR_RETURN_IF_ERROR_SDK(cu::CheckPaddingSize(g->k_h, g->k_w, g->pad_top, g->pad_bottom,
                                                g->pad_left, g->pad_right));
  }
  GR_RETURN_IF_ERROR_SDK(cu::WindowedOutputSize(g->in_h, g->k_h, 1, g->s_h, a.padding, &g->out_h,
                                                &g->pad_top, &g->pad_bottom));
  GR_RETURN_IF_ERROR_SDK(cu::WindowedOutputSize(g->in_w, g->k_w, 1, g->s_w, a.padding, &g->out_w,
                                                &g->pad_left, &g->pad_right));
  g->out_depth = g->depth;
  return Status();
}

void PoolForwardFloat(OpKernelContext* ctx, bool max, const PoolGeometry& g, const float* in, float* out) {
  const PoolImpl direct{false, false};
  if (max) {
    PoolForward<float, PoolKind::kMax>(ctx, g, direct, nullptr, in, out);
  } else {
    PoolForward<float, PoolKind::kAvg>(ctx, g, direct, nullptr, in, out);
  }
}

void PoolNhwcRowsFloat(bool max, const PoolGeometry& g, const float* in, float* out, int64_t row_begin,
                       int64_t row_end) {
  if (max) {
    NhwcRowsFor<float, PoolKind::kMax>(g.depth)(g, in, out, row_begin, row_end);
  } else {
    NhwcRowsFor<float, PoolKind::kAvg>(g.depth)(g, in, out, row_begin, row_end);
  }
}

#define GR_REGISTER_POOL(OP, T, ...) \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint<T>("T"), __VA_ARGS__)

GR_REGISTER_POOL("MaxPool", float, PoolOp<float, PoolKind::kMax, false>);
GR_REGISTER_POOL("MaxPool", double, PoolOp<double, PoolKind::kMax, false>);
GR_REGISTER_POOL("MaxPool", int32_t, PoolOp<int32_t, PoolKind::kMax, false>);
GR_REGISTER_POOL("MaxPool", int64_t, PoolOp<int64_t, PoolKind::kMax, false>);
REGISTER_KERNEL(Name("MaxPoolV2").Device(DEVICE_CPU).TypeConstraint<float>("T").HostMemory("ksize").HostMemory("strides"),
                PoolOp<float, PoolKind::kMax, true>);
REGISTER_KERNEL(Name("MaxPoolV2").Device(DEVICE_CPU).TypeConstraint<double>("T").HostMemory("ksize").HostMemory("strides"),
                PoolOp<double, PoolKind::kMax, true>);
REGISTER_KERNEL(Name("MaxPoolV2").Device(DEVICE_CPU).TypeConstraint<int32_t>("T").HostMemory("ksize").HostMemory("strides"),
                PoolOp<int32_t, PoolKind::kMax, true>);
REGISTER_KERNEL(Name("MaxPoolV2").Device(DEVICE_CPU).TypeConstraint<int64_t>("T").HostMemory("ksize").HostMemory("strides"),
                PoolOp<int64_t, PoolKind::kMax, true>);
GR_REGISTER_POOL("AvgPool", float, PoolOp<float, PoolKind::kAvg, false>);
GR_REGISTER_POOL("AvgPool", double, PoolOp<double, PoolKind::kAvg, false>);
#define GR_REGISTER_MAX_POOL_GRADS(T)                                                                    \
  GR_REGISTER_POOL("MaxPoolGrad", T, MaxPoolGradOp<T, false>);                                           \
  GR_REGISTER_POOL("MaxPoolGradGrad", T, MaxPoolGradOp<T, true>);                                        \
  REGISTER_KERNEL(Name("MaxPoolGradV2").Device(DEVICE_CPU).TypeConstraint<T>("T").HostMemory("ksize").HostMemory( \
                      "strides"),                                                                        \
                  MaxPoolGradOp<T, false, true>);                                                        \
  REGISTER_KERNEL(Name("MaxPoolGradGradV2").Device(DEVICE_CPU).TypeConstraint<T>("T").HostMemory("ksize")        \
                      .HostMemory("strides"),                                                            \
                  MaxPoolGradOp<T, true, true>)
REGISTER_KERNEL(Name("_MaxPoolGradReluGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                MaxPoolGradOp<float, false, false, true>);
REGISTER_KERNEL(Name("_MaxPoolGradReluGrad").Device(DEVICE_CPU).TypeConstraint<double>("T"),
                MaxPoolGradOp<double, false, false, true>);
GR_REGISTER_MAX_POOL_GRADS(float);
GR_REGISTER_MAX_POOL_GRADS(double);
GR_REGISTER_MAX_POOL_GRADS(int32_t);
GR_REGISTER_MAX_POOL_GRADS(int64_t);
#undef GR_REGISTER_MAX_POOL_GRADS
REGISTER_KERNEL(Name("AvgPoolGrad").Device(DEVICE_CPU).TypeConstraint<float>("T").HostMemory("orig_input_shape"),
                AvgPoolGradOp<float>);
REGISTER_KERNEL(Name("AvgPoolGrad").Device(DEVICE_CPU).TypeConstraint<double>("T").HostMemory("orig_input_shape"),
                AvgPoolGradOp<double>);

#undef GR_REGISTER_POOL

}  // namespace sdk
}  // namespace graphrt
