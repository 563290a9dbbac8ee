// See narrow_conv.h.
#include "nn/cpu/narrow_conv.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace graphrt {
namespace sdk {
namespace {

// The kernel is written once for GCC/Clang vector extensions and built for
// two register files (NarrowConvIsa): 8-float vectors with 16 registers
// (AVX2) and 16-float vectors with 32 registers (AVX-512). Blocking a
// 16-float vector over AVX2's 16 registers spills: LeNet's first layer ran
// 5x slower than oneDNN that way.
template <int kLanes>
struct VectorOf;
template <>
struct VectorOf<8> {
  typedef float Type __attribute__((vector_size(8 * sizeof(float))));
};
template <>
struct VectorOf<16> {
  typedef float Type __attribute__((vector_size(16 * sizeof(float))));
};

// One register file: floats per vector; the vector accumulators a step of
// the convolution may hold (the other registers hold input vectors and a
// broadcast weight); the filter gradient's blocking, taps by output
// channels of accumulators (plus a gradient vector per channel and an
// input vector).
template <int kLanesArg, int kAccumulatorsArg, int kGradTapsArg, int kGradChannelsArg>
struct RegisterFile {
  static constexpr int kLanes = kLanesArg;
  static constexpr int kMaxAccumulators = kAccumulatorsArg;
  static constexpr int kGradTaps = kGradTapsArg;
  static constexpr int kGradChannels = kGradChannelsArg;
  using Vec = typename VectorOf<kLanes>::Type;
};
using Avx2Registers = RegisterFile<8, 12, 3, 3>;
using Avx512Registers = RegisterFile<16, 24, 4, 4>;

constexpr int kMaxBlocks = 2;         // vectors of output columns per step
constexpr int kMaxChannelBlock = 8;   // output channels per step
constexpr int64_t kRowGroup = 8;      // output rows per staging of the input
constexpr int64_t kGradRowGroup = 32;  // the same for the filter gradient:
                                       // its per-band sums cost more
constexpr int kWidestLanes = 16;      // staged rows are padded for the widest vector

// The input rows a group of output rows reads, staged per channel with zero
// padding around them, so the inner loops never test bounds. The same for
// every register file, so the scratch size does not depend on the CPU.
struct Staging {
  int64_t rows = 0;   // staged rows per channel
  int64_t width = 0;  // floats per staged row
  int64_t RowsFor(const NarrowConvProblem& p, int64_t out_rows) const {
    return (out_rows - 1) * p.sh + (p.kh - 1) * p.dh + 1;
  }
};

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

Staging StagingOf(const NarrowConvProblem& p, int64_t row_group = kRowGroup) {
  Staging s;
  s.rows = s.RowsFor(p, std::min(row_group, p.oh));
  // A vector step reads columns [ow0 + kw_i, ow0 + kw_i + lanes * blocks).
  s.width = RoundUp(p.ow, kWidestLanes * kMaxBlocks) + p.kw - 1;
  return s;
}

// Copies input rows [ih0, ih0 + rows) of image `n` into `dst` ([c][rows][width],
// column pl + iw holds input column iw), zeros outside the input.
void Stage(const NarrowConvProblem& p, const Staging& s, const float* in, int64_t n, int64_t ih0,
           int64_t rows, float* dst) {
  std::fill(dst, dst + p.c * rows * s.width, 0.f);
  const int64_t cols = std::min(p.w, s.width - p.pl);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t ih = ih0 + r;
    if (ih < 0 || ih >= p.h) continue;
    if (p.nchw || p.c == 1) {  // rows of one channel lie contiguous
      for (int64_t ci = 0; ci < p.c; ++ci) {
        const float* src = in + ((n * p.c + ci) * p.h + ih) * p.w;
        std::memcpy(dst + (ci * rows + r) * s.width + p.pl, src, cols * sizeof(float));
      }
    } else {
      const float* src = in + (n * p.h + ih) * p.w * p.c;
      for (int64_t ci = 0; ci < p.c; ++ci) {
        float* d = dst + (ci * rows + r) * s.width + p.pl;
        for (int64_t iw = 0; iw < cols; ++iw) d[iw] = src[iw * p.c + ci];
      }
    }
  }
}

struct RowArgs {
  const NarrowConvProblem* p;
  const float* staged;  // [c][staged_rows][width]
  int64_t staged_rows, width;
  int64_t local_row;  // first output row within the staged group
  const float* filter;
  const NarrowConvEpilogue* e;
  // Plain: output (n, oh, 0, 0) in NHWC, (n, 0, oh, 0) in NCHW, and the
  // floats from one row to the next. Pooled: the pooled row, likewise.
  float* out_row;
  int64_t out_stride;
  NarrowPool pool;
};

// Output rows computed together: each filter tap's weights, broadcast once,
// serve two rows where the accumulators fit, so the loads per FMA fall. The
// 2x2 pooling needs two.
template <class R>
constexpr int RowsPerStep(int channels, int blocks) {
  return 2 * channels * blocks <= R::kMaxAccumulators ? 2 : 1;
}

// The vector code below is always inlined into the entry points of each
// register file (RowBlockFor), so that the AVX-512 entry points compile it
// for AVX-512 while the rest of the file keeps the build's instruction set.
#define GRAPHRT_NARROW_INLINE [[gnu::always_inline]] inline

// Scale, shift and activation on one row's accumulators.
template <class R, int kChannels, int kBlocks>
GRAPHRT_NARROW_INLINE void Epilogue(const NarrowConvEpilogue& e, int64_t oc0,
                                    typename R::Vec (&acc)[kBlocks][kChannels]) {
  using Vec = typename R::Vec;
  for (int j = 0; j < kChannels; ++j) {
    const float scale = e.scale ? e.scale[oc0 + j] : 1.f;
    const float shift = e.shift ? e.shift[oc0 + j] : 0.f;
    for (int b = 0; b < kBlocks; ++b) {
      Vec v = acc[b][j] * scale + shift;
      switch (e.act) {
        case Act::kRelu: v = v > 0.f ? v : Vec{}; break;
        case Act::kRelu6: v = v > 0.f ? (v < 6.f ? v : Vec{} + 6.f) : Vec{}; break;
        case Act::kLeakyRelu: v = v > 0.f ? v : v * e.alpha; break;
        case Act::kElu:  // expm1 has no vector form here
          for (int l = 0; l < R::kLanes; ++l) v[l] = ApplyAct(v[l], Act::kElu, 0.f);
          break;
        case Act::kNone: break;
      }
      acc[b][j] = v;
    }
  }
}

// Stores `cols` columns from lane 0 of tile's rows: NCHW one copy per
// channel (`plane` floats apart), NHWC interleaved (`pixel` floats apart).
template <int kChannels, int kCols>
GRAPHRT_NARROW_INLINE void StoreTile(const float (&tile)[kChannels][kCols], bool nchw, float* out,
                                     int64_t plane, int64_t pixel, int64_t cols) {
  if (nchw) {
    for (int j = 0; j < kChannels; ++j) std::memcpy(out + j * plane, tile[j], cols * sizeof(float));
  } else {
    for (int64_t t = 0; t < cols; ++t, out += pixel)
      for (int j = 0; j < kChannels; ++j) out[j] = tile[j][t];
  }
}

// The even and odd lanes of the columns in v[0..kBlocks): with two blocks,
// all of them; with one, its lanes twice over (the upper half unused).
template <class R, int kBlocks, size_t... kI>
GRAPHRT_NARROW_INLINE void SplitEvenOdd(const typename R::Vec (&v)[kBlocks], typename R::Vec* even,
                                        typename R::Vec* odd, std::index_sequence<kI...>) {
  constexpr int kSecond = kBlocks == 2 ? 1 : 0;
  constexpr int kWrap = kBlocks == 2 ? 2 * R::kLanes : R::kLanes;
  *even = __builtin_shufflevector(v[0], v[kSecond], static_cast<int>((2 * kI) % kWrap)...);
  *odd = __builtin_shufflevector(v[0], v[kSecond], static_cast<int>((2 * kI + 1) % kWrap)...);
}

// kRows output rows, output channels [oc0, oc0 + kChannels), kBlocks vectors
// of columns per step. kPooled: the two rows are pooled 2x2 (stride 2) into
// one pooled row before anything is stored.
template <class R, int kChannels, int kBlocks, int kRows, bool kPooled>
GRAPHRT_NARROW_INLINE void RowBlock(const RowArgs& a, int64_t oc0) {
  static_assert(!kPooled || kRows == 2, "2x2 pooling takes two convolution rows");
  using Vec = typename R::Vec;
  constexpr int kLanes = R::kLanes;
  const NarrowConvProblem& p = *a.p;
  const NarrowConvEpilogue& e = *a.e;
  constexpr int64_t kStep = kLanes * kBlocks;
  for (int64_t ow0 = 0; ow0 < p.ow; ow0 += kStep) {
    Vec acc[kRows][kBlocks][kChannels];
    for (int r = 0; r < kRows; ++r)
      for (int b = 0; b < kBlocks; ++b)
        for (int j = 0; j < kChannels; ++j) acc[r][b][j] = Vec{};
    for (int64_t ci = 0; ci < p.c; ++ci) {
      const float* plane = a.staged + ci * a.staged_rows * a.width;
      for (int64_t i = 0; i < p.kh; ++i) {
        const float* x_row = plane + (a.local_row * p.sh + i * p.dh) * a.width + ow0;
        const float* w_row = a.filter + ((i * p.kw) * p.c + ci) * p.oc + oc0;
        for (int64_t k = 0; k < p.kw; ++k) {
          Vec x[kRows][kBlocks];
          // memcpy: an unaligned vector load (no vector-returning helper,
          // whose ABI GCC warns about when the vector is wider than the
          // instruction set's). Unrolled, or GCC may make the loads a copy
          // loop through the stack (the pooled kernel ran 4x slower so).
#pragma GCC unroll 4
          for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
            for (int b = 0; b < kBlocks; ++b)
              std::memcpy(&x[r][b], x_row + r * p.sh * a.width + k + b * kLanes, sizeof(Vec));
          const float* wv = w_row + k * p.c * p.oc;
          for (int j = 0; j < kChannels; ++j) {
            const float w = wv[j];
            for (int r = 0; r < kRows; ++r)
              for (int b = 0; b < kBlocks; ++b) acc[r][b][j] += x[r][b] * w;
          }
        }
      }
    }
    for (int r = 0; r < kRows; ++r) Epilogue<R, kChannels, kBlocks>(e, oc0, acc[r]);
    if constexpr (kPooled) {
      // Pooled columns [ow0 / 2, ow0 / 2 + cols); a last odd column is not
      // pooled (VALID).
      const int64_t pw = p.ow / 2, poh = p.oh / 2;
      const int64_t cols = std::min<int64_t>(kStep / 2, pw - ow0 / 2);
      if (cols <= 0) break;
      const bool max = a.pool == NarrowPool::kMax;
      alignas(64) float tile[kChannels][kLanes];
      for (int j = 0; j < kChannels; ++j) {
        Vec v[kBlocks];
        for (int b = 0; b < kBlocks; ++b) {
          const Vec& top = acc[0][b][j];
          const Vec& bottom = acc[1][b][j];
          v[b] = max ? (top > bottom ? top : bottom) : top + bottom;
        }
        Vec even, odd;
        SplitEvenOdd<R, kBlocks>(v, &even, &odd, std::make_index_sequence<kLanes>());
        const Vec pooled = max ? (even > odd ? even : odd) : (even + odd) * 0.25f;
        std::memcpy(tile[j], &pooled, sizeof(Vec));
      }
      const int64_t plane = poh * pw;
      float* out = a.out_row + (p.nchw ? oc0 * plane + ow0 / 2 : ow0 / 2 * p.oc + oc0);
      StoreTile<kChannels, kLanes>(tile, p.nchw, out, plane, p.oc, cols);
    } else {
      const int64_t cols = std::min(kStep, p.ow - ow0);
      const int64_t plane = p.oh * p.ow;
      for (int r = 0; r < kRows; ++r) {
        alignas(64) float tile[kChannels][kStep];
        for (int j = 0; j < kChannels; ++j)
          for (int b = 0; b < kBlocks; ++b) std::memcpy(&tile[j][b * kLanes], &acc[r][b][j], sizeof(Vec));
        float* row = a.out_row + r * a.out_stride;
        float* out = row + (p.nchw ? oc0 * plane + ow0 : ow0 * p.oc + oc0);
        StoreTile<kChannels, kStep>(tile, p.nchw, out, plane, p.oc, cols);
      }
    }
  }
}

// The filter gradient (ComputeNarrowConvFilterGrad) of one band of output
// rows: staged input rows as the forward stages them, and the band's output
// gradient staged per channel ([oc][rows][dy_width], zero beyond ow).
struct GradArgs {
  const NarrowConvProblem* p;
  const float* staged;  // [c][staged_rows][width]
  int64_t staged_rows, width;
  const float* dy;  // [oc][rows][dy_width]
  int64_t rows, dy_width;
  float* filter_grad;  // HWIO, accumulated into
};

// Filter taps (i, k0 .. k0 + kTaps) of input channel ci against output
// channels j0 .. j0 + kChannels: kTaps x kChannels vector accumulators over
// the band, each input vector loaded once for kChannels products and each
// gradient vector once for kTaps.
template <class R, int kTaps, int kChannels>
GRAPHRT_NARROW_INLINE void GradBlock(const GradArgs& a, int64_t ci, int64_t i, int64_t k0, int64_t j0) {
  using Vec = typename R::Vec;
  const NarrowConvProblem& p = *a.p;
  Vec acc[kTaps][kChannels];
  for (int t = 0; t < kTaps; ++t)
    for (int j = 0; j < kChannels; ++j) acc[t][j] = Vec{};
  const int64_t dy_plane = a.rows * a.dy_width;
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* x_row = a.staged + (ci * a.staged_rows + r * p.sh + i * p.dh) * a.width + k0;
    const float* d_row = a.dy + j0 * dy_plane + r * a.dy_width;
    for (int64_t col = 0; col < a.dy_width; col += R::kLanes) {
      Vec d[kChannels];
      // Unrolled, or GCC makes the loads a copy loop through the stack.
#pragma GCC unroll 8
      for (int j = 0; j < kChannels; ++j) std::memcpy(&d[j], d_row + j * dy_plane + col, sizeof(Vec));
      for (int t = 0; t < kTaps; ++t) {
        Vec x;
        std::memcpy(&x, x_row + col + t, sizeof(Vec));
        for (int j = 0; j < kChannels; ++j) acc[t][j] += x * d[j];
      }
    }
  }
  // Lanes summed from memory (indexing the accumulators' lanes would keep
  // them in memory through the loop above), all accumulators side by side
  // rather than one dependent chain each.
  constexpr int kSums = kTaps * kChannels;
  alignas(64) float lanes[kSums][R::kLanes];
  std::memcpy(lanes, acc, sizeof(acc));
  float sums[kSums] = {};
  for (int l = 0; l < R::kLanes; ++l)
    for (int q = 0; q < kSums; ++q) sums[q] += lanes[q][l];
  for (int t = 0; t < kTaps; ++t) {
    float* g = a.filter_grad + ((i * p.kw + k0 + t) * p.c + ci) * p.oc + j0;
    for (int j = 0; j < kChannels; ++j) g[j] += sums[t * kChannels + j];
  }
}

#undef GRAPHRT_NARROW_INLINE

using RowBlockFn = void (*)(const RowArgs&, int64_t);

// The entry points: RowBlock compiled for the build's instruction set, and
// (x86-64) for AVX-512, called only where the CPU has it.
template <class R, int kChannels, int kBlocks, int kRows, bool kPooled>
void RowBlockBase(const RowArgs& a, int64_t oc0) {
  RowBlock<R, kChannels, kBlocks, kRows, kPooled>(a, oc0);
}
template <class R, int kTaps, int kChannels>
void GradBlockBase(const GradArgs& a, int64_t ci, int64_t i, int64_t k0, int64_t j0) {
  GradBlock<R, kTaps, kChannels>(a, ci, i, k0, j0);
}
#if defined(__x86_64__)
template <class R, int kChannels, int kBlocks, int kRows, bool kPooled>
__attribute__((target("avx512f"))) void RowBlockAvx512(const RowArgs& a, int64_t oc0) {
  RowBlock<R, kChannels, kBlocks, kRows, kPooled>(a, oc0);
}
template <class R, int kTaps, int kChannels>
__attribute__((target("avx512f"))) void GradBlockAvx512(const GradArgs& a, int64_t ci, int64_t i, int64_t k0,
                                                        int64_t j0) {
  GradBlock<R, kTaps, kChannels>(a, ci, i, k0, j0);
}
#endif

using GradBlockFn = void (*)(const GradArgs&, int64_t, int64_t, int64_t, int64_t);

constexpr int kGradBlock = 4;  // the largest filter-gradient blocking: table size

template <class R, bool kAvx512, int kTaps, int kChannels>
constexpr GradBlockFn GradBlockFor() {
#if defined(__x86_64__)
  if constexpr (kAvx512) return &GradBlockAvx512<R, kTaps, kChannels>;
#endif
  return &GradBlockBase<R, kTaps, kChannels>;
}

template <class R, bool kAvx512, int kTaps, int... kChannelsMinus1>
constexpr std::array<GradBlockFn, kGradBlock> GradRow(std::integer_sequence<int, kChannelsMinus1...>) {
  // Entries beyond the register file's blocking stay null: never chosen.
  return {(kTaps <= R::kGradTaps && kChannelsMinus1 < R::kGradChannels
               ? GradBlockFor<R, kAvx512, kTaps, kChannelsMinus1 + 1>()
               : nullptr)...};
}

// One channel block's kernels: `rows` output rows at a time, one, and
// (null where the registers do not hold two rows) two rows pooled.
struct RowBlockFns {
  RowBlockFn step, one, pooled;
  int rows;
};

template <class R, bool kAvx512, int kChannels, int kBlocks, int kRows, bool kPooled>
constexpr RowBlockFn RowBlockFor() {
#if defined(__x86_64__)
  if constexpr (kAvx512) return &RowBlockAvx512<R, kChannels, kBlocks, kRows, kPooled>;
#endif
  return &RowBlockBase<R, kChannels, kBlocks, kRows, kPooled>;
}

template <class R, bool kAvx512, int kChannels, int kBlocks>
constexpr RowBlockFns FnsFor() {
  constexpr int rows = RowsPerStep<R>(kChannels, kBlocks);
  RowBlockFns f{RowBlockFor<R, kAvx512, kChannels, kBlocks, rows, false>(),
                RowBlockFor<R, kAvx512, kChannels, kBlocks, 1, false>(), nullptr, rows};
  if constexpr (rows == 2) f.pooled = RowBlockFor<R, kAvx512, kChannels, kBlocks, 2, true>();
  return f;
}

template <class R, bool kAvx512, int kBlocks, int... kChannelsMinus1>
constexpr std::array<RowBlockFns, sizeof...(kChannelsMinus1)> Table(
    std::integer_sequence<int, kChannelsMinus1...>) {
  return {FnsFor<R, kAvx512, kChannelsMinus1 + 1, kBlocks>()...};
}

// A register file's kernels: fns[blocks - 1][channels - 1] for the
// convolution, grad[taps - 1][channels - 1] for its filter gradient.
struct Kernels {
  int lanes, max_accumulators;
  std::array<std::array<RowBlockFns, kMaxChannelBlock>, kMaxBlocks> fns;
  int grad_taps, grad_channels;
  std::array<std::array<GradBlockFn, kGradBlock>, kGradBlock> grad;

  // One vector of columns when one covers the row: two would waste half.
  int BlocksFor(const NarrowConvProblem& p) const { return p.ow <= lanes ? 1 : 2; }
  // Output channels per step: as many as the accumulators of `rows` rows hold.
  int64_t ChannelBlock(int blocks, int rows) const {
    return std::min<int64_t>(kMaxChannelBlock, max_accumulators / (rows * blocks));
  }
};

template <class R, bool kAvx512>
constexpr Kernels KernelsFor() {
  constexpr auto channels = std::make_integer_sequence<int, kGradBlock>();
  return {R::kLanes,
          R::kMaxAccumulators,
          {Table<R, kAvx512, 1>(std::make_integer_sequence<int, kMaxChannelBlock>()),
           Table<R, kAvx512, 2>(std::make_integer_sequence<int, kMaxChannelBlock>())},
          R::kGradTaps,
          R::kGradChannels,
          {GradRow<R, kAvx512, 1>(channels), GradRow<R, kAvx512, 2>(channels), GradRow<R, kAvx512, 3>(channels),
           GradRow<R, kAvx512, 4>(channels)}};
}

constexpr Kernels kAvx2Kernels = KernelsFor<Avx2Registers, false>();
// The AVX-512 blocking compiled for the build's instruction set: forced on
// a CPU without AVX-512 (GRAPHRT_NARROW_CONV_ISA=avx512; tests do).
constexpr Kernels kAvx512BlockingKernels = KernelsFor<Avx512Registers, false>();
#if defined(__x86_64__)
constexpr Kernels kAvx512Kernels = KernelsFor<Avx512Registers, true>();
#endif

// The kernels for this process: by the CPU, or by GRAPHRT_NARROW_CONV_ISA
// (narrow_conv.h).
const Kernels& ChooseKernels() {
#if defined(__x86_64__)
  const bool cpu_has_avx512 = __builtin_cpu_supports("avx512f");
#else
  const bool cpu_has_avx512 = false;
#endif
  const char* forced = std::getenv("GRAPHRT_NARROW_CONV_ISA");
  const bool avx512_blocking =
      forced != nullptr ? std::strcmp(forced, "avx512") == 0 : cpu_has_avx512;
  if (!avx512_blocking) return kAvx2Kernels;
#if defined(__x86_64__)
  if (cpu_has_avx512) return kAvx512Kernels;
#endif
  return kAvx512BlockingKernels;
}

const Kernels& KernelsInUse() {
  static const Kernels& kernels = ChooseKernels();
  return kernels;
}

}  // namespace

bool NarrowConvApplies(int64_t oc, int64_t groups, int64_t stride_w, int64_t dilation_w, int64_t ow) {
  if (!(oc > 0 && oc < 16 && groups == 1 && stride_w == 1 && dilation_w == 1 && ow >= 12)) return false;
  // oneDNN puts output channels in its vector lanes. With 16-float vectors
  // fewer than 16 channels leave lanes idle. With AVX2's 8 it wins once it
  // fills more than 3/4 of its lanes (bench/conv_bench.cc, 1 thread: 16->8
  // at 56x56 took the narrow kernel 1.5x oneDNN's time, 32->15 at 28x28
  // 1.6x; 8->12 0.85x, LeNet's 1->6 0.47x).
  if (KernelsInUse().lanes == 16) return true;
  const int64_t lanes_used_by_onednn = (oc + 7) / 8 * 8;
  return 4 * oc <= 3 * lanes_used_by_onednn;
}

size_t NarrowConvScratchBytes(const NarrowConvProblem& p) {
  const Staging s = StagingOf(p);
  return static_cast<size_t>(p.c * s.rows * s.width) * sizeof(float);
}

void ComputeNarrowConvRows(const NarrowConvProblem& p, const float* in, const float* filter,
                           const NarrowConvEpilogue& e, const NarrowConvOutput& out,
                           int64_t row_begin, int64_t row_end, void* scratch) {
  const Staging s = StagingOf(p);
  float* staged = static_cast<float*>(scratch);
  const Kernels& kernels = KernelsInUse();
  const int blocks = kernels.BlocksFor(p);
  const auto& fns = kernels.fns[blocks - 1];
  const int64_t channel_block = kernels.ChannelBlock(blocks, 1);
  for (int64_t row = row_begin; row < row_end;) {
    const int64_t n = row / p.oh, oh0 = row % p.oh;
    const int64_t group = std::min({kRowGroup, p.oh - oh0, row_end - row});
    const int64_t rows = s.RowsFor(p, group);
    Stage(p, s, in, n, oh0 * p.sh - p.pt, rows, staged);
    const int64_t out_stride = p.nchw ? p.ow : p.ow * p.oc;
    float* first_out = p.nchw ? out.data + n * p.oc * p.oh * p.ow + oh0 * p.ow
                              : out.data + (n * p.oh + oh0 - out.first_row) * p.ow * p.oc;
    for (int64_t oc0 = 0; oc0 < p.oc; oc0 += channel_block) {
      const int64_t channels = std::min(channel_block, p.oc - oc0);
      const RowBlockFns& f = fns[channels - 1];
      for (int64_t r = 0; r < group;) {
        const RowArgs a{&p, staged, rows, s.width, r, filter, &e, first_out + r * out_stride, out_stride,
                        NarrowPool::kMax};
        if (group - r >= f.rows) {
          f.step(a, oc0);
          r += f.rows;
        } else {
          f.one(a, oc0);
          ++r;
        }
      }
    }
    row += group;
  }
}

void ComputeNarrowConvPooledRows(const NarrowConvProblem& p, const float* in, const float* filter,
                                 const NarrowConvEpilogue& e, NarrowPool pool, float* out,
                                 int64_t row_begin, int64_t row_end, void* scratch) {
  const Staging s = StagingOf(p);
  float* staged = static_cast<float*>(scratch);
  const Kernels& kernels = KernelsInUse();
  const int blocks = kernels.BlocksFor(p);
  const auto& fns = kernels.fns[blocks - 1];
  // Channel blocks small enough for two rows of accumulators.
  const int64_t channel_block = kernels.ChannelBlock(blocks, 2);
  const int64_t poh = p.oh / 2, pw = p.ow / 2;
  for (int64_t row = row_begin; row < row_end;) {
    const int64_t n = row / poh, ph0 = row % poh;
    const int64_t group = std::min({kRowGroup / 2, poh - ph0, row_end - row});  // pooled rows
    const int64_t rows = s.RowsFor(p, 2 * group);
    Stage(p, s, in, n, 2 * ph0 * p.sh - p.pt, rows, staged);
    const int64_t out_stride = p.nchw ? pw : pw * p.oc;
    float* first_out = p.nchw ? out + n * p.oc * poh * pw + ph0 * pw : out + row * pw * p.oc;
    for (int64_t oc0 = 0; oc0 < p.oc; oc0 += channel_block) {
      const int64_t channels = std::min(channel_block, p.oc - oc0);
      const RowBlockFn fn = fns[channels - 1].pooled;
      for (int64_t r = 0; r < group; ++r) {
        fn({&p, staged, rows, s.width, 2 * r, filter, &e, first_out + r * out_stride, out_stride, pool}, oc0);
      }
    }
    row += group;
  }
}

size_t NarrowConvFilterGradScratchBytes(const NarrowConvProblem& p) {
  const Staging s = StagingOf(p, kGradRowGroup);
  const int64_t dy_width = RoundUp(p.ow, kWidestLanes);
  return static_cast<size_t>(p.c * s.rows * s.width + p.oc * kGradRowGroup * dy_width) * sizeof(float);
}

void ComputeNarrowConvFilterGrad(const NarrowConvProblem& p, const float* in, const float* out_grad,
                                 int64_t n_begin, int64_t n_end, float* filter_grad, void* scratch) {
  const Staging s = StagingOf(p, kGradRowGroup);
  const Kernels& kernels = KernelsInUse();
  const int64_t dy_width = RoundUp(p.ow, kernels.lanes);
  float* staged = static_cast<float*>(scratch);
  float* dy = staged + p.c * s.rows * s.width;
  std::fill(filter_grad, filter_grad + p.kh * p.kw * p.c * p.oc, 0.f);
  for (int64_t n = n_begin; n < n_end; ++n) {
    for (int64_t oh0 = 0; oh0 < p.oh; oh0 += kGradRowGroup) {
      const int64_t rows = std::min(kGradRowGroup, p.oh - oh0);
      const int64_t staged_rows = s.RowsFor(p, rows);
      Stage(p, s, in, n, oh0 * p.sh - p.pt, staged_rows, staged);
      // The band's output gradient, one plane per channel; columns beyond
      // ow are zero, so the vectors past the row add nothing.
      std::fill(dy, dy + p.oc * rows * dy_width, 0.f);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < p.oc; ++j) {
          float* d = dy + (j * rows + r) * dy_width;
          if (p.nchw) {
            std::memcpy(d, out_grad + ((n * p.oc + j) * p.oh + oh0 + r) * p.ow, p.ow * sizeof(float));
          } else {
            const float* src = out_grad + ((n * p.oh + oh0 + r) * p.ow) * p.oc + j;
            for (int64_t w = 0; w < p.ow; ++w) d[w] = src[w * p.oc];
          }
        }
      }
      const GradArgs a{&p, staged, staged_rows, s.width, dy, rows, dy_width, filter_grad};
      for (int64_t ci = 0; ci < p.c; ++ci) {
        for (int64_t i = 0; i < p.kh; ++i) {
          for (int64_t k0 = 0; k0 < p.kw; k0 += kernels.grad_taps) {
            const int64_t taps = std::min<int64_t>(kernels.grad_taps, p.kw - k0);
            for (int64_t j0 = 0; j0 < p.oc; j0 += kernels.grad_channels) {
              const int64_t channels = std::min<int64_t>(kernels.grad_channels, p.oc - j0);
              kernels.grad[taps - 1][channels - 1](a, ci, i, k0, j0);
            }
          }
        }
      }
    }
  }
}

}  // namespace sdk
}  // namespace graphrt
