// Shared pieces of the CPU matrix-product kernels (MatMul, BatchMatMul,
// BatchMatMulV2, _FusedMatMul): how a product is split into blocks over the
// session's pool, one block on oneDNN's sgemm or on Eigen, and the oneDNN
// matmul primitive for bfloat16.
//
// Threads: every oneDNN call runs under SingleOmpThread (see
// common/cpu/dnnl_util.h); the kernels split the work over parallel_for.
#ifndef GRAPHRT_OPS_MATH_CPU_MATMUL_COMMON_H_
#define GRAPHRT_OPS_MATH_CPU_MATMUL_COMMON_H_

#include <graphrt/sdk/sdk.h>

#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/scratch.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace graphrt {
namespace sdk {
namespace matmul {

// Below this many multiply-adds a product is not worth splitting.
constexpr int64_t kParallelMinMacs = int64_t{1} << 20;
// Below this many multiply-adds, Eigen's small-matrix path beats the fixed
// cost of an sgemm call.
constexpr int64_t kSgemmMinMacs = 16 * 1024;
// Column blocks stay multiples of one AVX-512 register of floats.
constexpr int64_t kColumnGrain = 16;
// Rough multiply-adds per nanosecond of one core, to give parallel_for a
// cost estimate in ns.
constexpr int64_t kMacsPerNs = 32;

// bfloat16 storage: the upper half of a float.
struct bf16 {
  uint16_t bits;
};
inline float Bf16ToFloat(bf16 v) { return Bf16BitsToFloat(v.bits); }
inline bf16 FloatToBf16(float f) { return bf16{FloatToBf16Bits(f)}; }

// The product split into blocks: rows [r0, r1) x cols [c0, c1) of C.
struct Block {
  int64_t r0, r1, c0, c1;
};

struct Split {
  bool by_rows = true;
  int64_t chunk = 0;  // rows or columns per block
  int64_t count = 1;  // number of blocks
  Block block(int64_t i, int64_t m, int64_t n) const {
    const int64_t b = i * chunk;
    if (by_rows) return {b, std::min(m, b + chunk), 0, n};
    return {0, m, b, std::min(n, b + chunk)};
  }
};

// One block per thread, along the longer side of C (rows unless C is
// wide); a single block below kParallelMinMacs or on one thread.
// `row_grain` keeps row blocks a multiple of it (for primitives whose cache
// key includes the block size).
inline Split PlanSplit(int threads, int64_t m, int64_t n, int64_t k, int64_t row_grain = 1) {
  Split s;
  s.chunk = m;
  if (m * n * k < kParallelMinMacs || threads <= 1) return s;
  if (m >= n) {
    s.by_rows = true;
    s.chunk = (m + threads - 1) / threads;
    s.chunk = (s.chunk + row_grain - 1) / row_grain * row_grain;
    s.count = (m + s.chunk - 1) / s.chunk;
  } else {
    s.by_rows = false;
    s.chunk = (n + threads - 1) / threads;
    s.chunk = (s.chunk + kColumnGrain - 1) / kColumnGrain * kColumnGrain;
    s.count = (n + s.chunk - 1) / s.chunk;
  }
  return s;
}

template <typename Fn>
void RunBlocks(OpKernelContext* ctx, const Split& s, int64_t m, int64_t n, int64_t k, Fn&& fn) {
  if (s.count == 1) {
    fn(Block{0, m, 0, n});
    return;
  }
  const int64_t cost = std::max<int64_t>(1, m * n * k / s.count / kMacsPerNs);
  ctx->parallel_for(s.count, cost, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(s.block(i, m, n));
  });
}

// Row-major A (m x k, or k x m when transposed) times B into C (m x n),
// block `blk` of C only.
template <typename T>
void EigenGemmBlock(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c,
                    const Block& blk) {
  using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMat> A(a, ta ? k : m, ta ? m : k);
  Eigen::Map<const RowMat> B(b, tb ? n : k, tb ? k : n);
  Eigen::Map<RowMat> C(c, m, n);
  const int64_t rows = blk.r1 - blk.r0, cols = blk.c1 - blk.c0;
  auto run = [&](const auto& opa, const auto& opb) {
    C.block(blk.r0, blk.c0, rows, cols).noalias() =
        opa.middleRows(blk.r0, rows) * opb.middleCols(blk.c0, cols);
  };
  if (!ta && !tb) {
    run(A, B);
  } else if (!ta) {
    run(A, B.transpose());
  } else if (!tb) {
    run(A.transpose(), B);
  } else {
    run(A.transpose(), B.transpose());
  }
}

// Same contract on oneDNN's row-major sgemm; false if oneDNN failed.
inline bool SgemmBlock(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                       const float* b, float* c, const Block& blk) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
  // Row r of op(A) starts at a + r*lda (plain) or at column r (transposed);
  // column j of op(B) likewise.
  const float* ab = ta ? a + blk.r0 : a + blk.r0 * lda;
  const float* bb = tb ? b + blk.c0 * ldb : b + blk.c0;
  float* cb = c + blk.r0 * ldc + blk.c0;
  SingleOmpThread one_thread;
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', blk.r1 - blk.r0, blk.c1 - blk.c0, k, 1.0f, ab,
                    lda, bb, ldb, 0.0f, cb, ldc) == dnnl_success;
}

// Checks MatMul's inputs as TensorFlow's kernel does and gives the product's
// m, k, n; false (error recorded on ctx) if they do not fit.
inline bool CheckMatMulInputs(OpKernelContext* ctx, const TensorView& a, const TensorView& b,
                              bool ta, bool tb, int64_t* m, int64_t* k, int64_t* n) {
  if (a.rank() != 2) {
    ctx->CtxFailure(errors::InvalidArgument("In[0] is not a matrix. Instead it has shape ",
                                            a.ShapeString()));
    return false;
  }
  if (b.rank() != 2) {
    ctx->CtxFailure(errors::InvalidArgument("In[1] is not a matrix. Instead it has shape ",
                                            b.ShapeString()));
    return false;
  }
  *m = a.dim(ta ? 1 : 0);
  *k = a.dim(ta ? 0 : 1);
  *n = b.dim(tb ? 0 : 1);
  if (*k != b.dim(tb ? 1 : 0)) {
    ctx->CtxFailure(errors::InvalidArgument("Matrix size-incompatible: In[0]: ", a.ShapeString(),
                                            ", In[1]: ", b.ShapeString()));
    return false;
  }
  return true;
}

// ------------------------------------------------------------- activations

// The element-wise tail of a fused product (_FusedMatMul's fused_ops).
enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

// y = act(y + bias) over a row-major block (rows x cols, leading dim ld),
// bias[0..cols) matching the block's columns. Formulas as TensorFlow's
// kernels: Relu max(x,0), Relu6 min(max(x,0),6), Elu x<0 ? exp(x)-1 : x,
// LeakyRelu x>0 ? x : alpha*x, Tanh, Sigmoid 1/(1+exp(-x)).
inline void BiasActivationBlock(float* y, int64_t rows, int64_t cols, int64_t ld,
                                const float* bias, Activation act, float alpha) {
  using Arr = Eigen::Array<float, Eigen::Dynamic, 1>;
  Eigen::Map<const Arr> bv(bias, cols);
  for (int64_t r = 0; r < rows; ++r) {
    Eigen::Map<Arr> v(y + r * ld, cols);
    v += bv;
    switch (act) {
      case Activation::kNone: break;
      case Activation::kRelu: v = v.max(0.0f); break;
      case Activation::kRelu6: v = v.max(0.0f).min(6.0f); break;
      case Activation::kElu: v = (v < 0.0f).select(v.exp() - 1.0f, v); break;
      case Activation::kLeakyRelu: v = (v > 0.0f).select(v, v * alpha); break;
      case Activation::kTanh: v = v.tanh(); break;
      case Activation::kSigmoid: v = v.logistic(); break;
    }
  }
}

// ------------------------------------------------- oneDNN matmul (bf16)

// A matmul primitive for one block shape: C[rows x cols] (ld n) =
// op(A)[rows x k] * op(B)[k x cols], element type `dt`, optional bias and
// activation post-op. Data pointers are bound per execution.
// The primitive keeps no scratch memory of its own (user scratchpad mode):
// each execution passes a per-thread buffer, so one primitive can run on
// several threads at once.
struct DnnlMatMul {
  dnnl::matmul prim;
  dnnl::memory::desc a_md, b_md, c_md, bias_md, scratch_md;
  bool has_bias = false;
};

inline dnnl::algorithm DnnlActivation(Activation act, float* alpha, float* beta) {
  *beta = 0.0f;
  switch (act) {
    case Activation::kRelu: *alpha = 0.0f; return dnnl::algorithm::eltwise_relu;
    case Activation::kRelu6: *alpha = 0.0f; *beta = 6.0f; return dnnl::algorithm::eltwise_clip;
    case Activation::kElu: *alpha = 1.0f; return dnnl::algorithm::eltwise_elu;
    case Activation::kLeakyRelu: return dnnl::algorithm::eltwise_relu;  // alpha = slope
    case Activation::kTanh: return dnnl::algorithm::eltwise_tanh;
    case Activation::kSigmoid: return dnnl::algorithm::eltwise_logistic;
    case Activation::kNone: break;
  }
  return dnnl::algorithm::undef;
}

// m, n: the full product's rows/cols (for strides); rows, cols: the block.
inline std::shared_ptr<DnnlMatMul> MakeDnnlMatMul(dnnl::memory::data_type dt, bool ta, bool tb,
                                                  int64_t m, int64_t n, int64_t k, int64_t rows,
                                                  int64_t cols, bool bias, Activation act,
                                                  float leaky_alpha) {
  using md = dnnl::memory::desc;
  using dims = dnnl::memory::dims;
  auto p = std::make_shared<DnnlMatMul>();
  p->a_md = md({rows, k}, dt, ta ? dims{1, m} : dims{k, 1});
  p->b_md = md({k, cols}, dt, tb ? dims{1, k} : dims{n, 1});
  p->c_md = md({rows, cols}, dt, dims{n, 1});
  p->has_bias = bias;
  if (bias) p->bias_md = md({1, cols}, dt, dims{n, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (act != Activation::kNone) {
    float alpha = leaky_alpha, beta = 0.0f;
    const dnnl::algorithm alg = DnnlActivation(act, &alpha, &beta);
    dnnl::post_ops po;
    po.append_eltwise(1.0f, alg, alpha, beta);
    attr.set_post_ops(po);
  }
  SingleOmpThread one_thread;
  try {
    auto desc = bias ? dnnl::matmul::desc(p->a_md, p->b_md, p->bias_md, p->c_md)
                     : dnnl::matmul::desc(p->a_md, p->b_md, p->c_md);
    dnnl::matmul::primitive_desc pd(desc, attr, DnnlCpuEngine());
    p->scratch_md = pd.scratchpad_desc();
    p->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

// Runs block `blk` of the product with primitive `p` (made for the block's
// size); false if oneDNN failed.
inline bool DnnlMatMulBlock(const DnnlMatMul& p, bool ta, bool tb, int64_t n, int64_t k,
                            const void* a, const void* b, const void* bias, void* c,
                            size_t elem_size, const Block& blk) {
  const auto* ac = static_cast<const char*>(a);
  const auto* bc = static_cast<const char*>(b);
  auto* cc = static_cast<char*>(c);
  const int64_t a_off = ta ? blk.r0 : blk.r0 * k;
  const int64_t b_off = tb ? blk.c0 * k : blk.c0;
  const int64_t c_off = blk.r0 * n + blk.c0;
  const dnnl::engine& eng = DnnlCpuEngine();
  SingleOmpThread one_thread;
  try {
    dnnl::memory am(p.a_md, eng, const_cast<char*>(ac + a_off * elem_size));
    dnnl::memory bm(p.b_md, eng, const_cast<char*>(bc + b_off * elem_size));
    dnnl::memory cm(p.c_md, eng, cc + c_off * elem_size);
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    if (p.has_bias) {
      const auto* biasc = static_cast<const char*>(bias);
      args.emplace(DNNL_ARG_BIAS,
                   dnnl::memory(p.bias_md, eng, const_cast<char*>(biasc + blk.c0 * elem_size)));
    }
    const size_t scratch_bytes = p.scratch_md.get_size();
    if (scratch_bytes > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   dnnl::memory(p.scratch_md, eng, ThreadScratch().Get(scratch_bytes)));
    }
    dnnl::stream& s = DnnlThreadStream();
    p.prim.execute(s, args);
    s.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

}  // namespace matmul
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_MATH_CPU_MATMUL_COMMON_H_
