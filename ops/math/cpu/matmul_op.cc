// CPU MatMul: oneDNN's sgemm for float, oneDNN's matmul primitive for
// bfloat16 (f32 accumulation, bf16 result), Eigen for double/int32/int64.
// Float with a constant B (`_weights_const`) big enough to gain (see
// UsePackedWeights) runs on oneDNN's matmul primitive with B packed once
// per shape: W2 (MLP 784-512-512-10, batch 64) at 1 thread 0.390 vs 0.404
// ms/batch on sgemm (GRAPHRT_MATMUL_IMPL=sgemm), medians of 5 alternating
// runs on an idle machine; at 2 threads equal within noise (more in
// matmul_common.h).
//
// Threads: each oneDNN call runs single-threaded (see common/cpu/dnnl_util.h)
// and the product is split into blocks of rows (or of columns, when the
// output is wide) over the session's parallel_for.
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

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("transpose_a", &transpose_a_);
    if (s.ok()) s = c->GetAttr("transpose_b", &transpose_b_);
    if (s.ok() && c->HasAttr("_weights_const")) s = c->GetAttr("_weights_const", &weights_const_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0);
    const TensorView b = ctx->input(1);
    const bool ta = transpose_a_, tb = transpose_b_;
    int64_t m, k, n;
    if (!CheckMatMulInputs(ctx, a, b, ta, tb, &m, &k, &n)) return;
    const int64_t out_dims[2] = {m, n};
    TensorView out;
    if (!ctx->allocate_output(0, out_dims, 2, &out).ok()) return;  // core recorded why
    if (m == 0 || n == 0) return;
    T* c = out.data<T>();
    if (k == 0) {  // an empty sum
      std::fill(c, c + m * n, T(0));
      return;
    }
    const T* ap = a.data<T>();
    const T* bp = b.data<T>();
    const Split split = PlanSplit(ctx->num_threads(), m, n, k);

    if constexpr (std::is_same_v<T, float>) {
      if (UsePackedWeights(weights_const_, m, n, k)) {
        const bool ok = packed_.Run(ctx, weights_const_, ta, tb, m, n, k, ap, bp, nullptr,
                                    Activation::kNone, 0.0f, c);
        OP_REQUIRES(ctx, ok,
                    errors::Internal("oneDNN matmul (packed weights) failed for MatMul of ",
                                     a.ShapeString(), " and ", b.ShapeString()));
        return;
      }
      if (m * n * k >= kSgemmMinMacs) {
        std::atomic<bool> ok{true};  // blocks may fail on several threads
        RunBlocks(ctx, split, m, n, k, [&](const Block& blk) {
          if (!SgemmBlock(ta, tb, m, n, k, ap, bp, c, blk))
            ok.store(false, std::memory_order_relaxed);
        });
        OP_REQUIRES(ctx, ok.load(),
                    errors::Internal("oneDNN sgemm failed for MatMul of ", a.ShapeString(),
                                     " and ", b.ShapeString()));
        return;
      }
    }
    RunBlocks(ctx, split, m, n, k,
              [&](const Block& blk) { EigenGemmBlock<T>(ta, tb, m, n, k, ap, bp, c, blk); });
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  bool weights_const_ = false;  // B comes from a Const (graph pass)
  PackedMatMul packed_;         // float only
};

// bfloat16 on oneDNN's matmul primitive: bf16 inputs, f32 accumulation,
// bf16 output (AVX-512 BF16 where the CPU has it). One primitive per block
// shape, cached by the kernel instance. Where oneDNN has none (no
// AVX-512), computed in float (Bf16MatMulInFloat, matmul_common.h).
class MatMulBf16Op : public OpKernel {
 public:
  explicit MatMulBf16Op(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("transpose_a", &transpose_a_);
    if (s.ok()) s = c->GetAttr("transpose_b", &transpose_b_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0);
    const TensorView b = ctx->input(1);
    const bool ta = transpose_a_, tb = transpose_b_;
    int64_t m, k, n;
    if (!CheckMatMulInputs(ctx, a, b, ta, tb, &m, &k, &n)) return;
    const int64_t out_dims[2] = {m, n};
    TensorView out;
    if (!ctx->allocate_output(0, out_dims, 2, &out).ok()) return;
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::memset(out.raw_data(), 0, static_cast<size_t>(m * n) * sizeof(bf16));
      return;
    }
    const Split split = PlanSplit(ctx->num_threads(), m, n, k, /*row_grain=*/16);
    const std::vector<std::shared_ptr<DnnlMatMul>> prims = Bf16MatMulPrims(
        &cache_, split, ta, tb, m, n, k, /*bias=*/false, Activation::kNone, 0.0f);
    if (prims.empty()) {
      OP_REQUIRES(ctx,
                  Bf16MatMulInFloat(ctx, ta, tb, m, n, k, a.data<bf16>(), b.data<bf16>(), nullptr,
                                    Activation::kNone, 0.0f, out.data<bf16>()),
                  errors::Internal("oneDNN sgemm failed for bfloat16 MatMul (in float) of ",
                                   a.ShapeString(), " and ", b.ShapeString()));
      return;
    }
    std::atomic<bool> ok{true};
    RunBlocks(ctx, split, m, n, k, [&](const Block& blk) {
      const DnnlMatMul& p = *prims[static_cast<size_t>(split.index(blk))];
      if (!DnnlMatMulBlock(p, ta, tb, n, k, a.raw_data(), b.raw_data(), nullptr, out.raw_data(),
                           sizeof(bf16), blk)) {
        ok.store(false, std::memory_order_relaxed);
      }
    });
    OP_REQUIRES(ctx, ok.load(),
                errors::Internal("oneDNN matmul failed for bfloat16 MatMul of ", a.ShapeString(),
                                 " and ", b.ShapeString()));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  ShapeKeyedCache<DnnlMatMul> cache_;
};

}  // namespace

REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"), MatMulOp<float>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<double>("T"), MatMulOp<double>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), MatMulOp<int32_t>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), MatMulOp<int64_t>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint("T", {GR_BFLOAT16}), MatMulBf16Op);

}  // namespace sdk
}  // namespace graphrt
