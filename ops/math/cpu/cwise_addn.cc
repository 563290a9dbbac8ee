// CPU kernel of AddN: the element-wise sum of N same-shaped tensors.
//
// The sum is written in place of one of the inputs when one can be reused
// (nobody else holds it). Inputs are summed up to four per pass over
// cache-sized blocks, so the output block stays in cache across passes;
// blocks are split over the pool when the tensors are large.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/cpu/cwise_bcast.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

namespace graphrt {
namespace sdk {
namespace {

template <typename T>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* c) : OpKernel(c) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const TensorView in0 = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      const TensorView in = ctx->input(i);
      OP_REQUIRES(ctx,
                  in.rank() == in0.rank() &&
                      cwise::SameDims(in.dims_data(), in0.dims_data(), in0.rank()),
                  errors::InvalidArgument("Inputs to operation ", ctx->node_name(),
                                          " of type AddN must have the same size and shape.  "
                                          "Input 0: ",
                                          shape_fns::ShapeString(in0), " != input ", i, ": ",
                                          shape_fns::ShapeString(in)));
    }
    if (n == 1) {  // zero copy
      ctx->set_output_from_input(0, 0);
      return;
    }
    // The first input whose buffer can be taken becomes the output.
    TensorView out;
    int fwd = -1;
    {
      constexpr int kMaxCandidates = 16;  // on the stack; later inputs are not tried
      int candidates[kMaxCandidates];
      const int count = std::min(n, kMaxCandidates);
      for (int i = 0; i < count; ++i) candidates[i] = i;
      if (!ctx->forward_input_or_allocate_output(candidates, count, 0, in0.dims_data(), in0.rank(), &out, &fwd).ok())
        return;
    }
    const int64_t total = in0.NumElements();
    if (total == 0) return;
    // Inputs in summation order: the forwarded one (if any) first, so that
    // its elements are read before the output overwrites them.
    InputPtrs ptrs(n);
    const T** in = ptrs.data();
    const int first = fwd < 0 ? 0 : fwd;
    in[0] = ctx->input(first).template data<T>();
    for (int i = 0, k = 1; i < n; ++i) {
      if (i != first) in[k++] = ctx->input(i).template data<T>();
    }
    T* op = out.data<T>();
    const int64_t blocks = (total + kBlock - 1) / kBlock;
    ForRange(ctx, blocks, total * n, static_cast<int64_t>(n) * kBlock / 2,
             [in, n, total, op](int64_t b, int64_t e) {
               for (int64_t blk = b; blk < e; ++blk) {
                 const int64_t begin = blk * kBlock;
                 SumBlock(in, n, op + begin, begin, std::min(kBlock, total - begin));
               }
             });
  }

 private:
  static constexpr int64_t kBlock = 4096;  // elements per block: L1/L2-sized

  // Input pointers: up to 16 on the stack, more on the heap (rare).
  class InputPtrs {
   public:
    explicit InputPtrs(int n) {
      if (n > kInline) heap_.resize(static_cast<size_t>(n));
      p_ = n > kInline ? heap_.data() : inline_;
    }
    const T** data() { return p_; }

   private:
    static constexpr int kInline = 16;
    const T* inline_[kInline];
    std::vector<const T*> heap_;
    const T** p_;
  };

  static void SumBlock(const T* const* inputs, int n, T* o, int64_t begin, int64_t len) {
    auto in = [&](int k) { return EigenConstVecMap<T>(inputs[k] + begin, len); };
    EigenVecMap<T> out(o, len);
    int k;
    if (n >= 4) {
      out = in(0) + in(1) + in(2) + in(3);
      k = 4;
    } else if (n == 3) {
      out = in(0) + in(1) + in(2);
      k = 3;
    } else {
      out = in(0) + in(1);
      k = 2;
    }
    for (; k + 3 <= n; k += 3) out += in(k) + in(k + 1) + in(k + 2);
    if (n - k == 2) out += in(k) + in(k + 1);
    if (n - k == 1) out += in(k);
  }
};

}  // namespace

#define GR_REGISTER_ADDN(T) \
  REGISTER_KERNEL(Name("AddN").Device(DEVICE_CPU).TypeConstraint<T>("T").Inexpensive(), AddNOp<T>)

GR_REGISTER_ADDN(float);
GR_REGISTER_ADDN(double);
GR_REGISTER_ADDN(int32_t);
GR_REGISTER_ADDN(int64_t);

#undef GR_REGISTER_ADDN

}  // namespace sdk
}  // namespace graphrt
