// A direct float convolution for few output channels, and its filter
// gradient, vectorised along the output width instead of across channels.
//
// oneDNN's convolution kernels put output channels in the vector lanes, so
// with fewer than 16 of them most lanes idle: LeNet's first layer (1 -> 6
// channels, 5x5, 28x28) ran at a third of the machine's speed there. This
// kernel keeps, for one or two vectors of output columns of one or two
// output rows, one vector accumulator per row and output channel and
// streams each filter tap's input columns through them (bench/conv_bench.cc
// against oneDNN). A following 2x2 pooling can be applied to the two rows
// in registers.
//
// The kernel is blocked for the CPU's register file: 8-float vectors and 16
// registers (AVX2), or 16-float vectors and 32 registers where the CPU has
// AVX-512 (that code is compiled for AVX-512 separately; the rest of the
// build stays x86-64-v3). GRAPHRT_NARROW_CONV_ISA=avx2 or =avx512 forces one
// blocking; avx512 on a CPU without it runs the 16-float blocking compiled
// for the build's instruction set, so that tests cover it on any machine.
//
// Scope: float, groups == 1, stride and dilation 1 along W (any along H),
// NHWC or NCHW. ConvForwardOp picks it through NarrowConvApplies.
#ifndef GRAPHRT_OPS_NN_CPU_NARROW_CONV_H_
#define GRAPHRT_OPS_NN_CPU_NARROW_CONV_H_

#include <cstddef>
#include <cstdint>

#include "nn/cpu/conv_act.h"

namespace graphrt {
namespace sdk {

struct NarrowConvProblem {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t oc = 0, oh = 0, ow = 0;      // output
  int64_t kh = 0, kw = 0;
  int64_t sh = 1, dh = 1;  // along W both are 1
  int64_t pt = 0, pl = 0;  // padding before the first row / column
  bool nchw = false;       // layout of input and output (else NHWC)
};

// y = act(conv * scale + shift) per output channel; scale and shift may be
// null (1 and 0).
struct NarrowConvEpilogue {
  const float* scale = nullptr;
  const float* shift = nullptr;
  Act act = Act::kNone;
  float alpha = 0.f;  // LeakyRelu
};

// Whether the kernel serves a convolution, and beats oneDNN on it (few
// output channels, fewer still with AVX2's blocking; output rows wide
// enough to fill the vectors).
bool NarrowConvApplies(int64_t oc, int64_t groups, int64_t stride_w, int64_t dilation_w, int64_t ow);

// Bytes of scratch ComputeNarrowConvRows and ComputeNarrowConvPooledRows
// need (per calling thread).
size_t NarrowConvScratchBytes(const NarrowConvProblem& p);

// Where output rows go. NHWC: row r (= image * oh + output row) at
// data + (r - first_row) * ow * oc, so `data` may hold only a band of rows
// starting at first_row. NCHW: `data` is the whole output (first_row 0).
struct NarrowConvOutput {
  float* data = nullptr;
  int64_t first_row = 0;
};

// Computes output rows [row_begin, row_end), row = image * oh + output row.
// `filter` is HWIO ([kh, kw, c, oc]); `scratch` holds
// NarrowConvScratchBytes(p) bytes, 64-byte aligned.
void ComputeNarrowConvRows(const NarrowConvProblem& p, const float* in, const float* filter,
                           const NarrowConvEpilogue& e, const NarrowConvOutput& out,
                           int64_t row_begin, int64_t row_end, void* scratch);

// A 2x2 pooling with stride 2 and no padding, applied to the convolution's
// rows while they are in registers.
enum class NarrowPool { kMax, kAvg };

// The convolution followed by `pool`: pooled output rows [row_begin,
// row_end) (row = image * (oh / 2) + pooled row) of `out`, the whole pooled
// tensor (NHWC or NCHW as the input; oh / 2 x ow / 2: a last odd row or
// column is dropped, as VALID pooling does). The epilogue applies before
// the pooling.
void ComputeNarrowConvPooledRows(const NarrowConvProblem& p, const float* in, const float* filter,
                                 const NarrowConvEpilogue& e, NarrowPool pool, float* out,
                                 int64_t row_begin, int64_t row_end, void* scratch);

// The convolution's filter gradient over images [n_begin, n_end):
// filter_grad (HWIO, [kh, kw, c, oc]) = the sum over those images, output
// rows and columns of input x output gradient, as Conv2DBackpropFilter
// defines it; `out_grad` is laid out like the convolution's output.
// Overwrites filter_grad. The scope is the convolution's
// (NarrowConvApplies); `scratch` holds NarrowConvFilterGradScratchBytes(p)
// bytes, 64-byte aligned. The order of the sums is fixed within a call, so
// a caller that splits the batch into fixed chunks gets the same bits on
// any number of threads.
size_t NarrowConvFilterGradScratchBytes(const NarrowConvProblem& p);
void ComputeNarrowConvFilterGrad(const NarrowConvProblem& p, const float* in, const float* out_grad,
                                 int64_t n_begin, int64_t n_end, float* filter_grad, void* scratch);

}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_NN_CPU_NARROW_CONV_H_
