// See narrow_conv.h.
#include "nn/cpu/narrow_conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace graphrt {
namespace sdk {
namespace {

// GCC/Clang vector extensions: with -march=native on an AVX-512 machine one
// Vec is one zmm register; elsewhere the compiler splits it, still correct.
constexpr int kLanes = 16;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

constexpr int kMaxBlocks = 2;         // vectors of output columns per step
constexpr int kMaxChannelBlock = 8;   // accumulators per vector of columns
constexpr int64_t kRowGroup = 8;      // output rows per staging of the input

// The input rows a group of output rows reads, staged per channel with zero
// padding around them, so the inner loops never test bounds.
struct Staging {
  int64_t rows = 0;   // staged rows per channel
  int64_t width = 0;  // floats per staged row
  int64_t RowsFor(const NarrowConvProblem& p, int64_t out_rows) const {
    return (out_rows - 1) * p.sh + (p.kh - 1) * p.dh + 1;
  }
};

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

Staging StagingOf(const NarrowConvProblem& p) {
  Staging s;
  s.rows = s.RowsFor(p, std::min(kRowGroup, p.oh));
  // A vector step reads columns [ow0 + kw_i, ow0 + kw_i + kLanes * blocks).
  s.width = RoundUp(p.ow, kLanes * kMaxBlocks) + p.kw - 1;
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
  int64_t local_row;  // output row within the staged group
  const float* filter;
  const NarrowConvEpilogue* e;
  float* out_row;  // output (n, oh, 0, 0) in NHWC, (n, 0, oh, 0) in NCHW
};

// One output row, output channels [oc0, oc0 + kChannels), kBlocks vectors of
// columns per step.
template <int kChannels, int kBlocks>
void RowBlock(const RowArgs& a, int64_t oc0) {
  const NarrowConvProblem& p = *a.p;
  const NarrowConvEpilogue& e = *a.e;
  constexpr int64_t kStep = kLanes * kBlocks;
  for (int64_t ow0 = 0; ow0 < p.ow; ow0 += kStep) {
    Vec acc[kBlocks][kChannels];
    for (int b = 0; b < kBlocks; ++b)
      for (int j = 0; j < kChannels; ++j) acc[b][j] = Vec{};
    for (int64_t ci = 0; ci < p.c; ++ci) {
      const float* plane = a.staged + ci * a.staged_rows * a.width;
      for (int64_t i = 0; i < p.kh; ++i) {
        const float* x_row = plane + (a.local_row * p.sh + i * p.dh) * a.width + ow0;
        const float* w_row = a.filter + ((i * p.kw) * p.c + ci) * p.oc + oc0;
        for (int64_t k = 0; k < p.kw; ++k) {
          Vec x[kBlocks];
          // memcpy: an unaligned vector load (no vector-returning helper,
          // whose ABI GCC warns about when AVX-512 is not enabled).
          for (int b = 0; b < kBlocks; ++b) std::memcpy(&x[b], x_row + k + b * kLanes, sizeof(Vec));
          const float* wv = w_row + k * p.c * p.oc;
          for (int j = 0; j < kChannels; ++j) {
            const float w = wv[j];
            for (int b = 0; b < kBlocks; ++b) acc[b][j] += x[b] * w;
          }
        }
      }
    }
    // Epilogue on whole vectors; Elu (expm1) per element at the store.
    for (int j = 0; j < kChannels; ++j) {
      const float scale = e.scale ? e.scale[oc0 + j] : 1.f;
      const float shift = e.shift ? e.shift[oc0 + j] : 0.f;
      for (int b = 0; b < kBlocks; ++b) {
        Vec v = acc[b][j] * scale + shift;
        switch (e.act) {
          case Act::kRelu: v = v > 0.f ? v : Vec{}; break;
          case Act::kRelu6: v = v > 0.f ? (v < 6.f ? v : Vec{} + 6.f) : Vec{}; break;
          case Act::kLeakyRelu: v = v > 0.f ? v : v * e.alpha; break;
          case Act::kNone:
          case Act::kElu: break;
        }
        acc[b][j] = v;
      }
    }
    alignas(64) float tile[kChannels][kStep];
    for (int j = 0; j < kChannels; ++j)
      for (int b = 0; b < kBlocks; ++b) std::memcpy(&tile[j][b * kLanes], &acc[b][j], sizeof(Vec));
    if (e.act == Act::kElu) {
      for (int j = 0; j < kChannels; ++j)
        for (int64_t t = 0; t < kStep; ++t) tile[j][t] = ApplyAct(tile[j][t], Act::kElu, 0.f);
    }
    const int64_t valid = std::min(kStep, p.ow - ow0);
    if (p.nchw) {
      for (int j = 0; j < kChannels; ++j)
        std::memcpy(a.out_row + (oc0 + j) * p.oh * p.ow + ow0, tile[j], valid * sizeof(float));
    } else {
      float* o = a.out_row + ow0 * p.oc + oc0;
      for (int64_t t = 0; t < valid; ++t, o += p.oc)
        for (int j = 0; j < kChannels; ++j) o[j] = tile[j][t];
    }
  }
}

using RowBlockFn = void (*)(const RowArgs&, int64_t);

template <int kBlocks, int... kChannels>
constexpr std::array<RowBlockFn, sizeof...(kChannels)> Table(std::integer_sequence<int, kChannels...>) {
  return {&RowBlock<kChannels + 1, kBlocks>...};
}

// kRowBlocks[blocks - 1][channels - 1].
constexpr std::array<std::array<RowBlockFn, kMaxChannelBlock>, kMaxBlocks> kRowBlocks = {
    Table<1>(std::make_integer_sequence<int, kMaxChannelBlock>()),
    Table<2>(std::make_integer_sequence<int, kMaxChannelBlock>())};

}  // namespace

bool NarrowConvApplies(int64_t oc, int64_t groups, int64_t stride_w, int64_t dilation_w, int64_t ow) {
  return oc > 0 && oc < 16 && groups == 1 && stride_w == 1 && dilation_w == 1 && ow >= 12;
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
  // One vector of columns when one covers the row: two would waste half.
  const int blocks = p.ow <= kLanes ? 1 : 2;
  const auto& fns = kRowBlocks[blocks - 1];
  for (int64_t row = row_begin; row < row_end;) {
    const int64_t n = row / p.oh, oh0 = row % p.oh;
    const int64_t group = std::min({kRowGroup, p.oh - oh0, row_end - row});
    const int64_t rows = s.RowsFor(p, group);
    Stage(p, s, in, n, oh0 * p.sh - p.pt, rows, staged);
    for (int64_t r = 0; r < group; ++r) {
      const int64_t oh = oh0 + r;
      float* out_row = p.nchw ? out.data + n * p.oc * p.oh * p.ow + oh * p.ow
                              : out.data + (n * p.oh + oh - out.first_row) * p.ow * p.oc;
      RowArgs a{&p, staged, rows, s.width, r, filter, &e, out_row};
      for (int64_t oc0 = 0; oc0 < p.oc; oc0 += kMaxChannelBlock) {
        const int64_t channels = std::min<int64_t>(kMaxChannelBlock, p.oc - oc0);
        fns[channels - 1](a, oc0);
      }
    }
    row += group;
  }
}

}  // namespace sdk
}  // namespace graphrt
