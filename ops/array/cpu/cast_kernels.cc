// CPU kernel of Cast between bool, the integer types (int8..int64,
// uint8..uint64), half, bfloat16, float, double, complex64 and complex128.
//
// Semantics follow TensorFlow on x86-64 without undefined behaviour:
// - floating -> integer truncates toward zero; NaN and values outside the
//   int32 range (int64 range for 64-bit and uint32 targets) give the x86
//   "integer indefinite" value (INT_MIN / INT64_MIN) narrowed to the target,
//   exactly what TensorFlow's static_cast compiles to there;
// - integer -> narrower integer wraps (two's complement);
// - anything -> bool is `!= 0`; complex -> real takes the real part;
// - float -> bfloat16/half rounds to nearest even, or with Truncate=true
//   drops the extra mantissa bits (NaN stays NaN).
#include <graphrt/sdk/sdk.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "array/array_util.h"
#include "common/cpu/eigen.h"
#include "common/cpu/parallel.h"

namespace graphrt {
namespace sdk {
namespace {

using bf16 = Eigen::bfloat16;
using half = Eigen::half;

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

template <typename T>
constexpr bool kIsLowFloat = std::is_same_v<T, bf16> || std::is_same_v<T, half>;

template <typename D>
D FloatToInt(double v) {
  if constexpr (sizeof(D) == 8 || std::is_same_v<D, uint32_t>) {
    if constexpr (std::is_same_v<D, uint64_t>) {
      if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<D>(v);
    }
    const int64_t x = (v >= -9223372036854775808.0 && v < 9223372036854775808.0)
                          ? static_cast<int64_t>(v)
                          : INT64_MIN;
    return static_cast<D>(x);
  } else {
    const int32_t x = (v >= -2147483648.0 && v < 2147483648.0) ? static_cast<int32_t>(v) : INT32_MIN;
    return static_cast<D>(x);
  }
}

inline bf16 FloatToBf16(float f, bool truncate) {
  if (!truncate) return bf16(f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t top = static_cast<uint16_t>(bits >> 16);
  if (std::isnan(f)) top = static_cast<uint16_t>((top & 0x8000) | 0x7fc0);
  return Eigen::numext::bit_cast<bf16>(top);
}

inline half FloatToHalf(float f, bool truncate) {
  if (truncate && std::isfinite(f)) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits &= ~uint32_t{0x1fff};  // keep the 10 mantissa bits half has
    std::memcpy(&f, &bits, 4);
  }
  return half(f);
}

template <typename D, typename S>
inline D Conv(S s, bool truncate) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (IsComplex<S>::value) {
      return s.real() != 0 || s.imag() != 0;
    } else if constexpr (kIsLowFloat<S>) {
      return static_cast<float>(s) != 0.0f;
    } else {
      return s != S(0);
    }
  } else if constexpr (std::is_same_v<S, bool>) {
    return Conv<D, uint8_t>(s ? 1 : 0, truncate);
  } else if constexpr (IsComplex<D>::value) {
    using R = typename D::value_type;
    if constexpr (IsComplex<S>::value) {
      return D(static_cast<R>(s.real()), static_cast<R>(s.imag()));
    } else {
      return D(Conv<R, S>(s, truncate), R(0));
    }
  } else if constexpr (IsComplex<S>::value) {
    return Conv<D, typename S::value_type>(s.real(), truncate);
  } else if constexpr (kIsLowFloat<S>) {
    return Conv<D, float>(static_cast<float>(s), truncate);
  } else if constexpr (std::is_same_v<D, bf16>) {
    return FloatToBf16(static_cast<float>(s), truncate);
  } else if constexpr (std::is_same_v<D, half>) {
    return FloatToHalf(static_cast<float>(s), truncate);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    return FloatToInt<D>(static_cast<double>(s));
  } else {
    return static_cast<D>(s);
  }
}

template <typename S, typename D>
void CastLoop(OpKernelContext* ctx, const S* in, D* out, int64_t n, bool truncate) {
  ForRange(ctx, n, n, 2, [&](int64_t b, int64_t e) {
    if (truncate) {
      for (int64_t i = b; i < e; ++i) out[i] = Conv<D, S>(in[i], true);
    } else {
      for (int64_t i = b; i < e; ++i) out[i] = Conv<D, S>(in[i], false);
    }
  });
}

// Calls fn(T{}) with the C++ type of `dt`; false for unsupported dtypes.
template <typename Fn>
bool DispatchType(int32_t dt, Fn&& fn) {
  switch (dt) {
    case GR_BOOL: fn(bool{}); return true;
    case GR_INT8: fn(int8_t{}); return true;
    case GR_UINT8: fn(uint8_t{}); return true;
    case GR_INT16: fn(int16_t{}); return true;
    case GR_UINT16: fn(uint16_t{}); return true;
    case GR_INT32: fn(int32_t{}); return true;
    case GR_UINT32: fn(uint32_t{}); return true;
    case GR_INT64: fn(int64_t{}); return true;
    case GR_UINT64: fn(uint64_t{}); return true;
    case GR_HALF: fn(half{}); return true;
    case GR_BFLOAT16: fn(bf16{}); return true;
    case GR_FLOAT: fn(float{}); return true;
    case GR_DOUBLE: fn(double{}); return true;
    case GR_COMPLEX64: fn(std::complex<float>{}); return true;
    case GR_COMPLEX128: fn(std::complex<double>{}); return true;
    default: return false;
  }
}

bool Castable(int32_t dt) {
  return DispatchType(dt, [](auto) {});
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    src_ = c->input_type(0);
    dst_ = c->output_type(0);
    if (c->HasAttr("Truncate")) c->SetStatus(c->GetAttr("Truncate", &truncate_));
    if (!Castable(src_) || !Castable(dst_)) {
      c->SetStatus(errors::Unimplemented("Cast ", array::DataTypeName(src_), " to ",
                                         array::DataTypeName(dst_), " is not supported"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    if (src_ == dst_) {
      ctx->set_output_from_input(0, 0);
      return;
    }
    TensorView out;
    if (!ctx->allocate_output(0, in.dims_data(), in.rank(), &out).ok()) return;
    const int64_t n = in.NumElements();
    if (n == 0) return;
    const bool truncate = truncate_;
    DispatchType(src_, [&](auto s) {
      using S = decltype(s);
      DispatchType(dst_, [&](auto d) {
        using D = decltype(d);
        CastLoop<S, D>(ctx, in.data<S>(), out.data<D>(), n, truncate);
      });
    });
  }

 private:
  DataType src_ = GR_INVALID, dst_ = GR_INVALID;
  bool truncate_ = false;
};

}  // namespace

REGISTER_KERNEL(Name("Cast").Device(DEVICE_CPU), CastOp);

}  // namespace sdk
}  // namespace graphrt
