// CPU kernel of ToBool, the predicate of lowered If and While nodes:
// TensorFlow's truthiness of a tensor. A non-scalar is true iff it has
// elements (whatever their values); a scalar number iff it is non-zero
// (-0.0 is zero, NaN is not); a scalar string iff it is non-empty.
#include <graphrt/sdk/sdk.h>

#include <cstdint>

#include "state/cpu/state_util.h"

namespace graphrt {
namespace sdk {
namespace {

class ToBoolOp : public OpKernel {
 public:
  explicit ToBoolOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    bool value = in.NumElements() > 0;
    if (in.IsScalar()) {
      const DataType dt = in.dtype();
      const bool numeric = state::DispatchNumeric(dt, [&](auto zero) { value = in.scalar<decltype(zero)>() != zero; });
      if (!numeric) {
        switch (dt) {
          case GR_BOOL:
            value = in.scalar<bool>();
            break;
          case GR_STRING:
            value = in.scalar<GR_StringElem>().size > 0;
            break;
          // The quantized types are plain integers of their width.
          case GR_QINT8:
          case GR_QUINT8:
            value = in.scalar<uint8_t>() != 0;
            break;
          case GR_QINT16:
          case GR_QUINT16:
            value = in.scalar<uint16_t>() != 0;
            break;
          case GR_QINT32:
            value = in.scalar<int32_t>() != 0;
            break;
          default:
            ctx->SetStatus(errors::InvalidArgument("a scalar ", DataTypeName(dt),
                                                   " has no truth value (expected a number, bool or string)"));
            return;
        }
      }
    }
    TensorView out;
    if (!ctx->allocate_output(0, nullptr, 0, &out).ok()) return;
    *out.data<bool>() = value;
  }
};

}  // namespace

// The predicate is read on the host by Switch and LoopCond.
REGISTER_KERNEL(Name("ToBool").Device(DEVICE_CPU).HostMemory("output").Inexpensive(), ToBoolOp);

}  // namespace sdk
}  // namespace graphrt
