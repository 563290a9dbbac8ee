// CPU _FusedMatMul: MatMul + BiasAdd [+ Relu | Relu6 | Elu | LeakyRelu |
// Tanh | Sigmoid] in one kernel.
//
// float: each block of the product runs on oneDNN's sgemm in stripes of
// rows, and the bias and activation are applied to each stripe right after
// its sgemm, while it is still in cache. Float with a constant B
// (`_weights_const`) big enough to gain (see UsePackedWeights), and
// bfloat16: oneDNN's matmul primitive with the bias and an eltwise post-op,
// float with B packed once per shape (W2 at 1 thread: 0.390 vs 0.404
// ms/batch on sgemm; fused 64x784x512 + Relu 260 vs 270 us). bfloat16
// where oneDNN has no bf16 primitive (no AVX-512): computed in float
// (Bf16MatMulInFloat, matmul_common.h).
#include <graphrt/sdk/sdk.h>

#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"
#include "matmul_common.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

using namespace matmul;  // NOLINT: this file's vocabulary

// Output elements per stripe: the stripe's result stays in L2 for the
// epilogue. Stripes are never shorter than kMinStripeRows (sgemm packs B
// again on every call, which short stripes would repeat too often).
constexpr int64_t kStripeElements = 64 * 1024;
constexpr int64_t kMinStripeRows = 96;

std::string JoinOps(const std::vector<std::string>& ops) {
  std::string s = "[";
  for (size_t i = 0; i < ops.size(); ++i) s += (i ? "," : "") + ops[i];
  return s + "]";
}

template <typename T>
class FusedMatMulOp : public OpKernel {
 public:
  static constexpr bool kBf16 = std::is_same_v<T, bf16>;

  explicit FusedMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<std::string> ops;
    int64_t num_args = 0;
    Status s = c->GetAttr("transpose_a", &transpose_a_);
    if (s.ok()) s = c->GetAttr("transpose_b", &transpose_b_);
    if (s.ok()) s = c->GetAttr("fused_ops", &ops);
    if (s.ok()) s = c->GetAttr("num_args", &num_args);
    if (s.ok()) s = c->GetAttr("leakyrelu_alpha", &leaky_alpha_);
    if (s.ok() && c->HasAttr("_weights_const")) s = c->GetAttr("_weights_const", &weights_const_);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    if (ops.empty()) {
      c->SetStatus(errors::InvalidArgument("Fused MatMul must have at least one fused op."));
      return;
    }
    static const struct {
      const char* name;
      Activation act;
    } kActs[] = {{"Relu", Activation::kRelu},   {"Relu6", Activation::kRelu6},
                 {"Elu", Activation::kElu},     {"LeakyRelu", Activation::kLeakyRelu},
                 {"Tanh", Activation::kTanh},   {"Sigmoid", Activation::kSigmoid}};
    bool known = ops[0] == "BiasAdd" && ops.size() <= 2;
    if (known && ops.size() == 2) {
      known = false;
      for (const auto& a : kActs) {
        if (ops[1] == a.name) {
          act_ = a.act;
          known = true;
        }
      }
    }
    if (!known) {
      c->SetStatus(errors::Unimplemented("Fusion is not implemented: ", JoinOps(ops),
                                         " (supported: [BiasAdd] optionally followed by one of "
                                         "Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid)"));
      return;
    }
    if (num_args != 1) {
      c->SetStatus(errors::InvalidArgument(
          "Fused MatMul with BiasAdd must have one extra argument: bias (got num_args = ",
          num_args, ")"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0);
    const TensorView b = ctx->input(1);
    const TensorView bias = ctx->input(2);
    const bool ta = transpose_a_, tb = transpose_b_;
    int64_t m, k, n;
    if (!CheckMatMulInputs(ctx, a, b, ta, tb, &m, &k, &n)) return;
    OP_REQUIRES(ctx, bias.rank() == 1,
                errors::InvalidArgument("bias must be 1-dimensional: ", bias.ShapeString()));
    OP_REQUIRES(ctx, bias.dim(0) == n,
                errors::InvalidArgument("bias size ", bias.dim(0),
                                        " must equal the number of columns of the product, ", n,
                                        " (a: ", a.ShapeString(), ", b: ", b.ShapeString(), ")"));
    const int64_t out_dims[2] = {m, n};
    TensorView out;
    if (!ctx->allocate_output(0, out_dims, 2, &out).ok()) return;
    if (m == 0 || n == 0) return;
    if constexpr (kBf16) {
      ComputeBf16(ctx, a, b, bias, &out, m, k, n);
    } else {
      ComputeFloat(ctx, a, b, bias, &out, m, k, n);
    }
  }

 private:
  void ComputeFloat(OpKernelContext* ctx, const TensorView& a, const TensorView& b,
                    const TensorView& bias, TensorView* out, int64_t m, int64_t k, int64_t n) {
    const bool ta = transpose_a_, tb = transpose_b_;
    const float* ap = a.data<float>();
    const float* bp = b.data<float>();
    const float* biasp = bias.data<float>();
    float* c = out->data<float>();
    const Activation act = act_;
    const float alpha = leaky_alpha_;
    if (UsePackedWeights(weights_const_, m, n, k)) {
      const bool ok = packed_.Run(ctx, weights_const_, ta, tb, m, n, k, ap, bp, biasp, act, alpha, c);
      OP_REQUIRES(ctx, ok,
                  errors::Internal("oneDNN matmul (packed weights) failed for _FusedMatMul of ",
                                   a.ShapeString(), " and ", b.ShapeString()));
      return;
    }
    const Split split = PlanSplit(ctx->num_threads(), m, n, k);
    std::atomic<bool> ok{true};
    RunBlocks(ctx, split, m, n, k, [&](const Block& blk) {
      const int64_t cols = blk.c1 - blk.c0;
      const int64_t stripe =
          std::max<int64_t>(kMinStripeRows, kStripeElements / std::max<int64_t>(1, cols));
      for (int64_t r0 = blk.r0; r0 < blk.r1; r0 += stripe) {
        const Block s{r0, std::min(blk.r1, r0 + stripe), blk.c0, blk.c1};
        float* cs = c + s.r0 * n + s.c0;
        if (k == 0) {
          for (int64_t r = s.r0; r < s.r1; ++r)
            std::fill(c + r * n + s.c0, c + r * n + s.c1, 0.0f);
        } else if (m * n * k >= kSgemmMinMacs) {
          if (!SgemmBlock(ta, tb, m, n, k, ap, bp, c, s)) {
            ok.store(false, std::memory_order_relaxed);
            return;
          }
        } else {
          EigenGemmBlock<float>(ta, tb, m, n, k, ap, bp, c, s);
        }
        BiasActivationBlock(cs, s.r1 - s.r0, cols, n, biasp + s.c0, act, alpha);
      }
    });
    OP_REQUIRES(ctx, ok.load(),
                errors::Internal("oneDNN sgemm failed for _FusedMatMul of ", a.ShapeString(),
                                 " and ", b.ShapeString()));
  }

  void ComputeBf16(OpKernelContext* ctx, const TensorView& a, const TensorView& b,
                   const TensorView& bias, TensorView* out, int64_t m, int64_t k, int64_t n) {
    const bool ta = transpose_a_, tb = transpose_b_;
    if (k == 0) {
      // Every row is act(0 + bias): computed in float, rounded to bf16.
      std::vector<float> bias_f(static_cast<size_t>(n)), y(static_cast<size_t>(n), 0.0f);
      const bf16* bp = bias.data<bf16>();
      for (int64_t j = 0; j < n; ++j) bias_f[static_cast<size_t>(j)] = Bf16ToFloat(bp[j]);
      BiasActivationBlock(y.data(), 1, n, n, bias_f.data(), act_, leaky_alpha_);
      bf16* o = out->data<bf16>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) o[i * n + j] = FloatToBf16(y[static_cast<size_t>(j)]);
      return;
    }
    const Split split = PlanSplit(ctx->num_threads(), m, n, k, /*row_grain=*/16);
    const std::vector<std::shared_ptr<DnnlMatMul>> prims =
        Bf16MatMulPrims(&cache_, split, ta, tb, m, n, k, /*bias=*/true, act_, leaky_alpha_);
    if (prims.empty()) {
      OP_REQUIRES(ctx,
                  Bf16MatMulInFloat(ctx, ta, tb, m, n, k, a.data<bf16>(), b.data<bf16>(),
                                    bias.data<bf16>(), act_, leaky_alpha_, out->data<bf16>()),
                  errors::Internal("oneDNN sgemm failed for bfloat16 _FusedMatMul (in float) of ",
                                   a.ShapeString(), " and ", b.ShapeString()));
      return;
    }
    std::atomic<bool> ok{true};
    RunBlocks(ctx, split, m, n, k, [&](const Block& blk) {
      const DnnlMatMul& p = *prims[static_cast<size_t>(split.index(blk))];
      if (!DnnlMatMulBlock(p, ta, tb, n, k, a.raw_data(), b.raw_data(), bias.raw_data(),
                           out->raw_data(), sizeof(bf16), blk)) {
        ok.store(false, std::memory_order_relaxed);
      }
    });
    OP_REQUIRES(ctx, ok.load(),
                errors::Internal("oneDNN matmul failed for bfloat16 _FusedMatMul of ",
                                 a.ShapeString(), " and ", b.ShapeString()));
  }

  bool transpose_a_ = false;
  bool transpose_b_ = false;
  float leaky_alpha_ = 0.2f;
  Activation act_ = Activation::kNone;
  bool weights_const_ = false;         // B comes from a Const (graph pass)
  ShapeKeyedCache<DnnlMatMul> cache_;  // bfloat16 only
  PackedMatMul packed_;                // float only
};

REGISTER_KERNEL(Name("_FusedMatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                FusedMatMulOp<float>);
REGISTER_KERNEL(Name("_FusedMatMul").Device(DEVICE_CPU).TypeConstraint("T", {GR_BFLOAT16}),
                FusedMatMulOp<bf16>);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
