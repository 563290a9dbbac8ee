// Shared pieces of the CPU matrix-product kernels (MatMul, BatchMatMul,
// BatchMatMulV2, _FusedMatMul): how a product is split into blocks over the
// session's pool, one block on oneDNN's sgemm or on Eigen, the oneDNN
// matmul primitive for bfloat16, and for float with constant (packed)
// weights.
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
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
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
  // The index i of block(i, ...) == blk.
  int64_t index(const Block& blk) const {
    return count == 1 ? 0 : (by_rows ? blk.r0 : blk.c0) / chunk;
  }
};

// Rows of C in one block per thread, a multiple of `row_grain` each.
inline void SplitRows(int threads, int64_t m, int64_t row_grain, Split* s) {
  s->by_rows = true;
  s->chunk = (m + threads - 1) / threads;
  s->chunk = (s->chunk + row_grain - 1) / row_grain * row_grain;
  s->count = (m + s->chunk - 1) / s->chunk;
}

// One block per thread, along the longer side of C (rows unless C is
// wide); a single block below kParallelMinMacs or on one thread.
// `row_grain` keeps row blocks a multiple of it (for primitives whose cache
// key includes the block size).
inline Split PlanSplit(int threads, int64_t m, int64_t n, int64_t k, int64_t row_grain = 1) {
  Split s;
  s.chunk = m;
  if (m * n * k < kParallelMinMacs || threads <= 1) return s;
  if (m >= n) {
    SplitRows(threads, m, row_grain, &s);
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
  bool no_primitive = false;  // bfloat16: oneDNN has none (Bf16MatMulPrims)
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
// `packed_b`: B in the layout the primitive prefers (format any; b_md is
// then that layout, and B must be reordered into it, see PackedPlan).
inline std::shared_ptr<DnnlMatMul> MakeDnnlMatMul(dnnl::memory::data_type dt, bool ta, bool tb,
                                                  int64_t m, int64_t n, int64_t k, int64_t rows,
                                                  int64_t cols, bool bias, Activation act,
                                                  float leaky_alpha, bool packed_b = false) {
  using md = dnnl::memory::desc;
  using dims = dnnl::memory::dims;
  auto p = std::make_shared<DnnlMatMul>();
  p->a_md = md({rows, k}, dt, ta ? dims{1, m} : dims{k, 1});
  p->b_md = packed_b ? md({k, cols}, dt, dnnl::memory::format_tag::any)
                     : md({k, cols}, dt, tb ? dims{1, k} : dims{n, 1});
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
    if (packed_b) p->b_md = pd.weights_desc();
    p->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return p;
}

// Runs block `blk` of the product with primitive `p` (made for the block's
// size); false if oneDNN failed. `b_is_block`: b is already this block's
// weights (packed), not the whole of B.
inline bool DnnlMatMulBlock(const DnnlMatMul& p, bool ta, bool tb, int64_t n, int64_t k,
                            const void* a, const void* b, const void* bias, void* c,
                            size_t elem_size, const Block& blk, bool b_is_block = false) {
  const auto* ac = static_cast<const char*>(a);
  const auto* bc = static_cast<const char*>(b);
  auto* cc = static_cast<char*>(c);
  const int64_t a_off = ta ? blk.r0 : blk.r0 * k;
  const int64_t b_off = b_is_block ? 0 : tb ? blk.c0 * k : blk.c0;
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

// ------------------------------------------ bfloat16 computed in float
//
// oneDNN implements bf16 matmul only on CPUs with AVX-512 (Debian's oneDNN
// 2.6 has no bf16 implementation at all without it), so creating the
// primitive fails elsewhere. There the bf16 kernels compute in float:
// inputs widened (exact), the float product (sgemm, Eigen when small) with
// bias and activation as for float, the result rounded to nearest even (as
// TensorFlow's cast to bfloat16). The outcome is cached per block shape
// like a primitive, so a failing creation is tried once per shape.

// The bf16 primitive of every block of `split`, created on a miss; empty
// when oneDNN has none for some block (compute in float then).
inline std::vector<std::shared_ptr<DnnlMatMul>> Bf16MatMulPrims(
    ShapeKeyedCache<DnnlMatMul>* cache, const Split& split, bool ta, bool tb, int64_t m,
    int64_t n, int64_t k, bool bias, Activation act, float leaky_alpha) {
  std::vector<std::shared_ptr<DnnlMatMul>> prims;
  prims.reserve(static_cast<size_t>(split.count));
  for (int64_t i = 0; i < split.count; ++i) {
    const Block blk = split.block(i, m, n);
    const int64_t rows = blk.r1 - blk.r0, cols = blk.c1 - blk.c0;
    std::shared_ptr<DnnlMatMul> p = cache->GetOrCreate({rows, cols, m, n, k}, [&] {
      std::shared_ptr<DnnlMatMul> made = MakeDnnlMatMul(dnnl::memory::data_type::bf16, ta, tb, m,
                                                        n, k, rows, cols, bias, act, leaky_alpha);
      if (!made) {  // cached as such: not tried again for this shape
        made = std::make_shared<DnnlMatMul>();
        made->no_primitive = true;
      }
      return made;
    });
    if (p->no_primitive) return {};
    prims.push_back(std::move(p));
  }
  return prims;
}

// A float copy of `count` bfloat16 values (exact).
inline std::unique_ptr<float[]> WidenBf16(const bf16* src, int64_t count) {
  std::unique_ptr<float[]> dst(new float[static_cast<size_t>(count)]);
  Bf16BitsToFloat(reinterpret_cast<const uint16_t*>(src), count, dst.get());
  return dst;
}

// Block `blk` of a float product as the float kernels compute it: sgemm,
// Eigen below kSgemmMinMacs; false if oneDNN failed.
inline bool FloatGemmBlock(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                           const float* b, float* c, const Block& blk) {
  if (m * n * k >= kSgemmMinMacs) return SgemmBlock(ta, tb, m, n, k, a, b, c, blk);
  EigenGemmBlock<float>(ta, tb, m, n, k, a, b, c, blk);
  return true;
}

// Block `blk` of the float product `cf` (ld n): bias and activation when
// `bias` is given, then rounded into `c`.
inline void FinishBf16Block(float* cf, const float* bias, Activation act, float leaky_alpha,
                            bf16* c, int64_t n, const Block& blk) {
  const int64_t rows = blk.r1 - blk.r0, cols = blk.c1 - blk.c0;
  float* cb = cf + blk.r0 * n + blk.c0;
  if (bias != nullptr) BiasActivationBlock(cb, rows, cols, n, bias + blk.c0, act, leaky_alpha);
  for (int64_t r = 0; r < rows; ++r) {
    FloatToBf16Bits(cb + r * n, cols,
                    reinterpret_cast<uint16_t*>(c + (blk.r0 + r) * n + blk.c0));
  }
}

// c = act(op(A) op(B) [+ bias]) for bfloat16 A, B, bias and c (k > 0),
// computed in float; false if oneDNN failed.
inline bool Bf16MatMulInFloat(OpKernelContext* ctx, bool ta, bool tb, int64_t m, int64_t n,
                              int64_t k, const bf16* a, const bf16* b, const bf16* bias,
                              Activation act, float leaky_alpha, bf16* c) {
  const std::unique_ptr<float[]> af = WidenBf16(a, m * k), bf = WidenBf16(b, k * n);
  const std::unique_ptr<float[]> biasf = bias != nullptr ? WidenBf16(bias, n) : nullptr;
  const std::unique_ptr<float[]> cf(new float[static_cast<size_t>(m * n)]);
  std::atomic<bool> ok{true};  // blocks may fail on several threads
  RunBlocks(ctx, PlanSplit(ctx->num_threads(), m, n, k), m, n, k, [&](const Block& blk) {
    if (!FloatGemmBlock(ta, tb, m, n, k, af.get(), bf.get(), cf.get(), blk)) {
      ok.store(false, std::memory_order_relaxed);
      return;
    }
    FinishBf16Block(cf.get(), biasf.get(), act, leaky_alpha, c, n, blk);
  });
  return ok.load();
}

// ------------------------------------- float with packed (constant) weights
//
// dnnl_sgemm packs B into its blocked layout again on every call. When B is
// a constant (`_weights_const`, set by the graph pass for MatMul and
// _FusedMatMul whose B comes from a Const), the float kernels instead run
// oneDNN's matmul primitive with B reordered ONCE into the layout the
// primitive prefers, and bias + activation as post-ops.
//
// When it wins, measured single-threaded on a 2-core AVX-512 machine
// (oneDNN 2.6 brgemm matmul with packed B vs dnnl_sgemm, time ratio, m x k x n):
// 64x784x512 0.92, 64x512x512 0.94, 256^3 0.91, 128x1024x1024 0.91,
// 8x784x512 0.97, 1x784x512 0.98; but 32x256x256 1.06, 64x120x84 1.08,
// 8x128x1000 1.02 (small products: the primitive's fixed cost) and
// 1024^3 1.01 (tall: sgemm's packing is amortized over many rows). Hence
// the rule: at least kPackedMinMacs multiply-adds and at most
// kPackedMaxRows rows; sgemm elsewhere. Through a session (1 thread, Const
// B, graphrt_bench_matmul --benchmark_filter=ConstB, vs
// GRAPHRT_MATMUL_IMPL=sgemm): 64x784x512 0.98, 64x512x512 0.97, 256^3
// 0.99, 128x1024x1024 0.92 (the session's fixed cost per Run dilutes it).
// Below the rule, narrow outputs go either way (2026-11-24, _FusedMatMul
// + Relu, 1 thread): 64x512x10 0.78 and 256x512x10 0.69, but 64x84x10
// 1.12, 64x1024x16 1.58, 64x120x84 1.05, 8x128x1000 1.07: no simple rule
// picks the winners, and W2's 64x512x10 head is 2% of W2, so sgemm stays.
constexpr int64_t kPackedMinMacs = int64_t{4} << 20;
constexpr int64_t kPackedMaxRows = 512;

// GRAPHRT_MATMUL_IMPL=packed runs every float product with k > 0 on the
// packed primitive (B reordered every Run when it is not constant), =sgemm
// never: for tests (the packed path on every shape) and benchmarks.
enum class FloatImpl { kAuto, kSgemm, kPacked };
inline FloatImpl FloatImplFromEnv() {
  static const FloatImpl impl = [] {
    const char* v = std::getenv("GRAPHRT_MATMUL_IMPL");
    if (v != nullptr && std::strcmp(v, "packed") == 0) return FloatImpl::kPacked;
    if (v != nullptr && std::strcmp(v, "sgemm") == 0) return FloatImpl::kSgemm;
    return FloatImpl::kAuto;
  }();
  return impl;
}

inline bool UsePackedWeights(bool weights_const, int64_t m, int64_t n, int64_t k) {
  if (k == 0) return false;
  switch (FloatImplFromEnv()) {
    case FloatImpl::kPacked: return true;
    case FloatImpl::kSgemm: return false;
    case FloatImpl::kAuto: break;
  }
  return weights_const && m <= kPackedMaxRows && m * n * k >= kPackedMinMacs;
}

// B's columns [c0, c0 + cols) in a primitive's packed layout. Every block
// of every plan of one kernel that reads these columns in this layout shares
// one: the row blocks of a split, and the plans of other batch sizes m
// (oneDNN picks B's layout from n and k), so a kernel keeps one packed copy
// of its constant weights however many batch sizes it sees.
struct PackedWeights {
  int64_t c0 = 0, cols = 0;
  dnnl::memory::desc md;
  AlignedBuffer buf;  // constant weights, reordered once
  std::mutex mu;      // the one-time reorder
  std::atomic<bool> ready{false};
};

// Everything one (m, n, k, threads) needs: the split, one primitive per
// block, the packed weights. Built once per shape by the kernel.
struct PackedPlan {
  Split split;
  std::vector<std::shared_ptr<DnnlMatMul>> prims;       // per block
  std::vector<std::shared_ptr<PackedWeights>> weights;  // per block (shared)
};

// The kernel's packed weights by (columns, layout).
class PackedWeightsStore {
 public:
  std::shared_ptr<PackedWeights> FindOrAdd(int64_t c0, int64_t cols, const dnnl::memory::desc& md) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : all_)
      if (w->c0 == c0 && w->cols == cols && w->md == md) return w;
    auto w = std::make_shared<PackedWeights>();
    w->c0 = c0;
    w->cols = cols;
    w->md = md;
    all_.push_back(w);
    return w;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return all_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<PackedWeights>> all_;
};

// A packed product splits by rows wherever each block keeps at least
// kColumnGrain rows, so that every block reads the one packed B (W2 at 2
// threads: 0.2285 ms by rows vs 0.2340 ms by columns, medians of 6 runs;
// column blocks pack their own parts of B, 64 columns at a time).
inline Split PackedSplit(int threads, int64_t m, int64_t n, int64_t k) {
  Split s = PlanSplit(threads, m, n, k);
  if (s.count > 1 && !s.by_rows && m >= kColumnGrain * threads) SplitRows(threads, m, 1, &s);
  return s;
}

inline std::shared_ptr<PackedPlan> MakePackedPlan(const Split& split, bool ta, bool tb, int64_t m,
                                                  int64_t n, int64_t k, bool bias, Activation act,
                                                  float leaky_alpha, PackedWeightsStore* store) {
  auto plan = std::make_shared<PackedPlan>();
  plan->split = split;
  for (int64_t i = 0; i < split.count; ++i) {
    const Block blk = split.block(i, m, n);
    const int64_t cols = blk.c1 - blk.c0;
    std::shared_ptr<DnnlMatMul> p =
        MakeDnnlMatMul(dnnl::memory::data_type::f32, ta, tb, m, n, k, blk.r1 - blk.r0, cols, bias,
                       act, leaky_alpha, /*packed_b=*/true);
    if (!p) return nullptr;
    plan->weights.push_back(store->FindOrAdd(blk.c0, cols, p->b_md));
    plan->prims.push_back(std::move(p));
  }
  return plan;
}

// Reorders B's columns of `w` (B row-major, k x n, or n x k when
// transposed) into `dst` (w.md.get_size() bytes); false if oneDNN failed.
inline bool PackWeights(const PackedWeights& w, bool tb, int64_t n, int64_t k, const float* b,
                        char* dst) {
  using dims = dnnl::memory::dims;
  const dnnl::memory::desc src_md({k, w.cols}, dnnl::memory::data_type::f32,
                                  tb ? dims{1, k} : dims{n, 1});
  const float* src = tb ? b + w.c0 * k : b + w.c0;
  const dnnl::engine& eng = DnnlCpuEngine();
  SingleOmpThread one_thread;
  try {
    dnnl::memory sm(src_md, eng, const_cast<float*>(src));
    dnnl::memory dm(w.md, eng, dst);
    dnnl::stream& s = DnnlThreadStream();
    dnnl::reorder(sm, dm).execute(s, sm, dm);
    s.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

// Packs constant weights `w` once (the first caller does; the rest wait).
inline bool EnsurePacked(PackedWeights* w, bool tb, int64_t n, int64_t k, const float* b) {
  if (w->ready.load(std::memory_order_acquire)) return true;
  std::lock_guard<std::mutex> lock(w->mu);
  if (w->ready.load(std::memory_order_relaxed)) return true;
  if (!PackWeights(*w, tb, n, k, b, w->buf.Get(w->md.get_size()))) return false;
  w->ready.store(true, std::memory_order_release);
  return true;
}

// The float product c = act(op(A) op(B) [+ bias]) on packed plans, one per
// (m, n, k, threads), cached by the kernel instance.
class PackedMatMul {
 public:
  // false if oneDNN failed (the caller reports the op and shapes).
  bool Run(OpKernelContext* ctx, bool weights_const, bool ta, bool tb, int64_t m, int64_t n,
           int64_t k, const float* a, const float* b, const float* bias, Activation act,
           float leaky_alpha, float* c) {
    const int threads = std::max(1, ctx->num_threads());
    const std::shared_ptr<PackedPlan> plan = cache_.GetOrCreate({m, n, k, threads}, [&] {
      return MakePackedPlan(PackedSplit(threads, m, n, k), ta, tb, m, n, k, bias != nullptr, act,
                            leaky_alpha, &weights_);
    });
    if (!plan) return false;
    if (weights_const)
      for (const auto& w : plan->weights)  // blocks sharing one pack it once
        if (!EnsurePacked(w.get(), tb, n, k, b)) return false;
    const Split& split = plan->split;
    std::atomic<bool> ok{true};  // blocks may fail on several threads
    RunBlocks(ctx, split, m, n, k, [&](const Block& blk) {
      const int64_t i = split.count == 1 ? 0 : (split.by_rows ? blk.r0 : blk.c0) / split.chunk;
      const DnnlMatMul& p = *plan->prims[static_cast<size_t>(i)];
      const PackedWeights& w = *plan->weights[static_cast<size_t>(i)];
      auto run = [&](const char* wp) {
        if (!DnnlMatMulBlock(p, ta, tb, n, k, a, wp, bias, c, sizeof(float), blk,
                             /*b_is_block=*/true))
          ok.store(false, std::memory_order_relaxed);
      };
      if (weights_const) {
        run(w.buf.data());
        return;
      }
      // B is not constant (GRAPHRT_MATMUL_IMPL=packed only): pack it anew.
      BufferPool::Lease lease = pool_.Acquire();
      char* packed = lease.Get(w.md.get_size());
      if (!PackWeights(w, tb, n, k, b, packed)) {
        ok.store(false, std::memory_order_relaxed);
        return;
      }
      run(packed);
    });
    return ok.load();
  }

 private:
  ShapeKeyedCache<PackedPlan> cache_;
  PackedWeightsStore weights_;
  BufferPool pool_;  // packed copies of a B that is not constant
};

}  // namespace matmul
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_MATH_CPU_MATMUL_COMMON_H_
