// CPU MatMul: oneDNN's sgemm for float, Eigen for double/int32/int64.
//
// Threads: each oneDNN call runs single-threaded (see common/cpu/dnnl_util.h)
// and the product is split into blocks of rows (or of columns, when the
// output is wide) over the session's parallel_for.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include "common/cpu/dnnl_util.h"
#include "common/cpu/eigen.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

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

Split PlanSplit(OpKernelContext* ctx, int64_t m, int64_t n, int64_t k) {
  Split s;
  s.chunk = m;
  const int64_t macs = m * n * k;
  if (macs < kParallelMinMacs) return s;
  const int64_t threads = ctx->num_threads();
  if (threads <= 1) return s;
  if (m >= n) {
    s.by_rows = true;
    s.chunk = (m + threads - 1) / threads;
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
bool SgemmBlock(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b,
                float* c, const Block& blk) {
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

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    Status s = c->GetAttr("transpose_a", &transpose_a_);
    if (s.ok()) s = c->GetAttr("transpose_b", &transpose_b_);
    if (!s.ok()) c->CtxFailure(s);
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView a = ctx->input(0);
    const TensorView b = ctx->input(1);
    OP_REQUIRES(ctx, a.rank() == 2,
                errors::InvalidArgument("In[0] is not a matrix. Instead it has shape ",
                                        sf::ShapeString(a)));
    OP_REQUIRES(ctx, b.rank() == 2,
                errors::InvalidArgument("In[1] is not a matrix. Instead it has shape ",
                                        sf::ShapeString(b)));
    const bool ta = transpose_a_, tb = transpose_b_;
    const int64_t m = a.dim(ta ? 1 : 0), k = a.dim(ta ? 0 : 1);
    const int64_t kb = b.dim(tb ? 1 : 0), n = b.dim(tb ? 0 : 1);
    OP_REQUIRES(ctx, k == kb,
                errors::InvalidArgument("Matrix size-incompatible: In[0]: ", sf::ShapeString(a),
                                        ", In[1]: ", sf::ShapeString(b)));
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
    const Split split = PlanSplit(ctx, m, n, k);

    if constexpr (std::is_same_v<T, float>) {
      if (m * n * k >= kSgemmMinMacs) {
        std::atomic<bool> ok{true};  // blocks may fail on several threads
        RunBlocks(ctx, split, m, n, k, [&](const Block& blk) {
          if (!SgemmBlock(ta, tb, m, n, k, ap, bp, c, blk))
            ok.store(false, std::memory_order_relaxed);
        });
        OP_REQUIRES(ctx, ok.load(),
                    errors::Internal("oneDNN sgemm failed for MatMul of ", sf::ShapeString(a),
                                     " and ", sf::ShapeString(b)));
        return;
      }
    }
    RunBlocks(ctx, split, m, n, k,
              [&](const Block& blk) { EigenGemmBlock<T>(ta, tb, m, n, k, ap, bp, c, blk); });
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

}  // namespace

REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<float>("T"), MatMulOp<float>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<double>("T"), MatMulOp<double>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), MatMulOp<int32_t>);
REGISTER_KERNEL(Name("MatMul").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), MatMulOp<int64_t>);

}  // namespace sdk
}  // namespace graphrt
