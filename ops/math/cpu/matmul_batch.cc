// CPU BatchMatMulV2 (batch dims broadcast like numpy) and BatchMatMul (batch
// dims must match): float on oneDNN's sgemm, bfloat16 on oneDNN's matmul
// primitive (in float where oneDNN has none: no AVX-512, see
// matmul_common.h), double/int32/int64 on Eigen.
//
// Work split: with at least as many batches as threads, whole products go
// to the pool; with fewer, each product is also cut into row (or column)
// blocks, so one big product still uses every thread.
#include <graphrt/sdk/sdk.h>

#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"
#include "matmul_common.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

using namespace matmul;  // NOLINT: this file's vocabulary

constexpr int kMaxRank = 64;

template <typename T, bool kBroadcast>
class BatchMatMulOp : public OpKernel {
 public:
  static constexpr bool kBf16 = std::is_same_v<T, bf16>;

  explicit BatchMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("adj_x", &adj_x_);
    if (s.ok()) s = c->GetAttr("adj_y", &adj_y_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView x = ctx->input(0);
    const TensorView y = ctx->input(1);
    const int rx = x.rank(), ry = y.rank();
    if constexpr (kBroadcast) {
      OP_REQUIRES(ctx, rx >= 2, errors::InvalidArgument("In[0] ndims must be >= 2: ", rx));
      OP_REQUIRES(ctx, ry >= 2, errors::InvalidArgument("In[1] ndims must be >= 2: ", ry));
    } else {
      OP_REQUIRES(ctx, rx == ry,
                  errors::InvalidArgument("In[0] and In[1] has different ndims: ", x.ShapeString(),
                                          " vs. ", y.ShapeString()));
      OP_REQUIRES(ctx, rx >= 2,
                  errors::InvalidArgument("In[0] and In[1] ndims must be >= 2: ", rx));
      for (int i = 0; i < rx - 2; ++i) {
        OP_REQUIRES(ctx, x.dim(i) == y.dim(i),
                    errors::InvalidArgument("In[0].dim(", i, ") and In[1].dim(", i,
                                            ") must be the same: ", x.ShapeString(), " vs ",
                                            y.ShapeString()));
      }
    }
    OP_REQUIRES(ctx, rx <= kMaxRank && ry <= kMaxRank,
                errors::InvalidArgument("BatchMatMul supports inputs up to rank ", kMaxRank));
    // Output batch dims (numpy broadcasting of all but the last two dims).
    const int rb = std::max(rx, ry) - 2;
    int64_t out_dims[kMaxRank];
    int64_t xs[kMaxRank], ys[kMaxRank];  // batch strides in matrices, 0 if broadcast
    int64_t batches = 1;
    {
      int64_t sx = 1, sy = 1;
      for (int i = rb - 1; i >= 0; --i) {
        const int ix = i - (rb - (rx - 2)), iy = i - (rb - (ry - 2));
        const int64_t dx = ix >= 0 ? x.dim(ix) : 1;
        const int64_t dy = iy >= 0 ? y.dim(iy) : 1;
        OP_REQUIRES(ctx, dx == dy || dx == 1 || dy == 1,
                    errors::InvalidArgument(
                        "In[0] and In[1] must have compatible batch dimensions: ", x.ShapeString(),
                        " vs. ", y.ShapeString()));
        out_dims[i] = dx == 1 ? dy : dx;
        xs[i] = dx == 1 ? 0 : sx;
        ys[i] = dy == 1 ? 0 : sy;
        sx *= dx;  // products of one input's dims: within the size rule
        sy *= dy;
        // Broadcast batch dims of two valid inputs may together exceed it.
        OP_REQUIRES_OK(ctx, MultiplyDims(batches, out_dims[i], &batches));
      }
    }
    int64_t d0 = x.dim(rx - 2), d1 = x.dim(rx - 1);
    int64_t d2 = y.dim(ry - 2), d3 = y.dim(ry - 1);
    const bool ta = adj_x_, tb = adj_y_;
    if (ta) std::swap(d0, d1);
    if (tb) std::swap(d2, d3);
    OP_REQUIRES(ctx, d1 == d2,
                errors::InvalidArgument("Matrix size-incompatible: In[0]: ", x.ShapeString(),
                                        ", In[1]: ", y.ShapeString()));
    const int64_t m = d0, k = d1, n = d3;
    out_dims[rb] = m;
    out_dims[rb + 1] = n;
    TensorView out;
    if (!ctx->allocate_output(0, out_dims, rb + 2, &out).ok()) return;
    if (out.NumElements() == 0) return;
    T* c = out.data<T>();
    if (k == 0) {
      std::memset(static_cast<void*>(c), 0, static_cast<size_t>(out.NumElements()) * sizeof(T));
      return;
    }
    const T* xp = x.data<T>();
    const T* yp = y.data<T>();
    const int64_t x_mat = m * k, y_mat = k * n, c_mat = m * n;
    // Matrix index of x and y for output batch `bi`.
    auto sources = [&](int64_t bi, int64_t* xi, int64_t* yi) {
      int64_t ox = 0, oy = 0;
      for (int i = rb - 1; i >= 0; --i) {
        const int64_t idx = bi % out_dims[i];
        bi /= out_dims[i];
        ox += idx * xs[i];
        oy += idx * ys[i];
      }
      *xi = ox;
      *yi = oy;
    };

    const int threads = ctx->num_threads();
    const int64_t macs = m * n * k;
    const int64_t total_macs = macs * batches;
    // Blocks per product: 1 when the batches alone fill the threads.
    Split split;
    split.chunk = m;
    if (batches < threads) {
      split = PlanSplit(static_cast<int>((threads + batches - 1) / batches), m, n, k,
                        kBf16 ? 16 : 1);
    }
    const int64_t items = batches * split.count;
    // bfloat16: a primitive per block of `split`, or the inputs and the
    // product in float where oneDNN has no bf16 primitive.
    std::vector<std::shared_ptr<DnnlMatMul>> prims;
    std::unique_ptr<float[]> xf, yf, cf;
    if constexpr (kBf16) {
      prims = Bf16MatMulPrims(&cache_, split, ta, tb, m, n, k, /*bias=*/false, Activation::kNone,
                              0.0f);
      if (prims.empty()) {
        xf = WidenBf16(xp, x.NumElements());
        yf = WidenBf16(yp, y.NumElements());
        cf.reset(new float[static_cast<size_t>(out.NumElements())]);
      }
    }
    std::atomic<bool> ok{true};
    auto run = [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t bi = it / split.count;
        const Block blk = split.count == 1 ? Block{0, m, 0, n} : split.block(it % split.count, m, n);
        int64_t xi, yi;
        sources(bi, &xi, &yi);
        const T* a = xp + xi * x_mat;
        const T* bm = yp + yi * y_mat;
        T* cm = c + bi * c_mat;
        if constexpr (kBf16) {
          if (cf) {
            float* cfm = cf.get() + bi * c_mat;
            if (FloatGemmBlock(ta, tb, m, n, k, xf.get() + xi * x_mat, yf.get() + yi * y_mat, cfm,
                               blk)) {
              FinishBf16Block(cfm, nullptr, Activation::kNone, 0.0f, cm, n, blk);
            } else {
              ok.store(false, std::memory_order_relaxed);
            }
          } else {
            const DnnlMatMul& p = *prims[static_cast<size_t>(it % split.count)];
            if (!DnnlMatMulBlock(p, ta, tb, n, k, a, bm, nullptr, cm, sizeof(bf16), blk))
              ok.store(false, std::memory_order_relaxed);
          }
        } else if constexpr (std::is_same_v<T, float>) {
          if (macs >= kSgemmMinMacs) {
            if (!SgemmBlock(ta, tb, m, n, k, a, bm, cm, blk))
              ok.store(false, std::memory_order_relaxed);
          } else {
            EigenGemmBlock<float>(ta, tb, m, n, k, a, bm, cm, blk);
          }
        } else {
          EigenGemmBlock<T>(ta, tb, m, n, k, a, bm, cm, blk);
        }
      }
    };
    if (items > 1 && threads > 1 && total_macs >= kParallelMinMacs) {
      ctx->parallel_for(items, std::max<int64_t>(1, total_macs / items / kMacsPerNs), run);
    } else {
      run(0, items);
    }
    OP_REQUIRES(ctx, ok.load(),
                errors::Internal("oneDNN failed for the batched product of ", x.ShapeString(),
                                 " and ", y.ShapeString()));
  }

 private:
  bool adj_x_ = false;
  bool adj_y_ = false;
  ShapeKeyedCache<DnnlMatMul> cache_;  // bfloat16 only
};

#define GR_REGISTER_BMM(T, DT)                                                               \
  REGISTER_KERNEL(Name("BatchMatMulV2").Device(DEVICE_CPU).TypeConstraint("T", {DT}),        \
                  BatchMatMulOp<T, true>);                                                   \
  REGISTER_KERNEL(Name("BatchMatMul").Device(DEVICE_CPU).TypeConstraint("T", {DT}),          \
                  BatchMatMulOp<T, false>)

GR_REGISTER_BMM(float, GR_FLOAT);
GR_REGISTER_BMM(double, GR_DOUBLE);
GR_REGISTER_BMM(int32_t, GR_INT32);
GR_REGISTER_BMM(int64_t, GR_INT64);
GR_REGISTER_BMM(bf16, GR_BFLOAT16);

#undef GR_REGISTER_BMM

}  // namespace
}  // namespace sdk
}  // namespace graphrt
