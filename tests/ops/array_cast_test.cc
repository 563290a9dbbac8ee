// Cast between every pair of bool, int8..int64, uint8..uint64, half,
// bfloat16, float, double, complex64 and complex128, against a reference
// model written here: each source element is decoded to an exact value
// (integers exactly, floating values as double) and encoded into the
// destination with TensorFlow's rules (x86-64): truncation toward zero for
// floating -> integer with the "integer indefinite" value for NaN and
// overflow, two's complement wrap between integers, round-to-nearest-even
// (or truncation with Truncate=true) into bfloat16 and half.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

const std::vector<DataType> kCastTypes = {GR_BOOL,   GR_INT8,   GR_UINT8,  GR_INT16,    GR_UINT16,
                                          GR_INT32,  GR_UINT32, GR_INT64,  GR_UINT64,   GR_HALF,
                                          GR_BFLOAT16, GR_FLOAT, GR_DOUBLE, GR_COMPLEX64, GR_COMPLEX128};

bool IsSigned(DataType dt) { return dt == GR_INT8 || dt == GR_INT16 || dt == GR_INT32 || dt == GR_INT64; }
bool IsUnsigned(DataType dt) { return dt == GR_UINT8 || dt == GR_UINT16 || dt == GR_UINT32 || dt == GR_UINT64; }

// An exact source value.
struct Value {
  enum Kind { kInt, kUInt, kReal } kind = kInt;
  int64_t i = 0;
  uint64_t u = 0;
  double re = 0, im = 0;
};

double HalfBitsToDouble(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  double v;
  if (exp == 31) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), -24);
  } else {
    v = std::ldexp(static_cast<double>(man + 1024), exp - 25);
  }
  return sign ? -v : v;
}

double Bf16BitsToDouble(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Value Decode(const Tensor& t, int64_t k) {
  const char* p = static_cast<const char*>(t.raw_data()) + k * ElemSize(t.dtype());
  Value v;
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  switch (t.dtype()) {
    case GR_BOOL: v.i = get(uint8_t{}) ? 1 : 0; break;
    case GR_INT8: v.i = get(int8_t{}); break;
    case GR_INT16: v.i = get(int16_t{}); break;
    case GR_INT32: v.i = get(int32_t{}); break;
    case GR_INT64: v.i = get(int64_t{}); break;
    case GR_UINT8: v.kind = Value::kUInt; v.u = get(uint8_t{}); break;
    case GR_UINT16: v.kind = Value::kUInt; v.u = get(uint16_t{}); break;
    case GR_UINT32: v.kind = Value::kUInt; v.u = get(uint32_t{}); break;
    case GR_UINT64: v.kind = Value::kUInt; v.u = get(uint64_t{}); break;
    case GR_HALF: v.kind = Value::kReal; v.re = HalfBitsToDouble(get(uint16_t{})); break;
    case GR_BFLOAT16: v.kind = Value::kReal; v.re = Bf16BitsToDouble(get(uint16_t{})); break;
    case GR_FLOAT: v.kind = Value::kReal; v.re = get(float{}); break;
    case GR_DOUBLE: v.kind = Value::kReal; v.re = get(double{}); break;
    case GR_COMPLEX64: {
      v.kind = Value::kReal;
      float c[2];
      std::memcpy(c, p, 8);
      v.re = c[0];
      v.im = c[1];
      break;
    }
    case GR_COMPLEX128: {
      v.kind = Value::kReal;
      double c[2];
      std::memcpy(c, p, 16);
      v.re = c[0];
      v.im = c[1];
      break;
    }
    default: ADD_FAILURE() << "Decode"; break;
  }
  return v;
}

// Value as float, the way C++ converts each kind (the real part of complex).
float AsFloat(const Value& v) {
  switch (v.kind) {
    case Value::kInt: return static_cast<float>(v.i);
    case Value::kUInt: return static_cast<float>(v.u);
    default: return static_cast<float>(v.re);
  }
}
double AsDouble(const Value& v) {
  switch (v.kind) {
    case Value::kInt: return static_cast<double>(v.i);
    case Value::kUInt: return static_cast<double>(v.u);
    default: return v.re;
  }
}

uint16_t RefBf16(float f, bool truncate) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>(((bits >> 16) & 0x8000) | 0x7fc0);
  if (truncate) return static_cast<uint16_t>(bits >> 16);
  const uint32_t lsb = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7fff + lsb) >> 16);
}

// IEEE half, round to nearest even, by arithmetic on the exact value.
uint16_t RefHalf(float f, bool truncate) {
  if (std::isnan(f)) return 0x7e00;
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(f));
  if (truncate && std::isfinite(f)) {
    // Drop the float mantissa bits half does not keep (13 of 23).
    uint32_t bits;
    float af = static_cast<float>(a);
    std::memcpy(&bits, &af, 4);
    bits &= ~uint32_t{0x1fff};
    std::memcpy(&af, &bits, 4);
    a = af;
  }
  if (std::isinf(a) || a >= 65520.0) return sign | 0x7c00;
  auto rne = [](double q) {
    const double fl = std::floor(q);
    const double frac = q - fl;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(fl, 2.0) != 0)) return fl + 1;
    return fl;
  };
  if (a < std::ldexp(1.0, -14)) {  // subnormal (or zero)
    const double m = rne(a / std::ldexp(1.0, -24));
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
  }
  int e = static_cast<int>(std::floor(std::log2(a)));
  if (std::ldexp(1.0, e) > a) --e;
  if (std::ldexp(1.0, e + 1) <= a) ++e;
  double m = rne(a / std::ldexp(1.0, e - 10));
  if (m >= 2048) {
    m /= 2;
    ++e;
  }
  if (e + 15 >= 31) return sign | 0x7c00;
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | (static_cast<uint16_t>(m) - 1024));
}

// Floating -> integer as x86-64 converts: NaN or out of range gives the
// "integer indefinite" of the 32- or 64-bit conversion, narrowed.
uint64_t RefFloatToIntBits(double x, DataType dst) {
  const bool wide = dst == GR_INT64 || dst == GR_UINT64 || dst == GR_UINT32;
  if (dst == GR_UINT64 && x >= 9223372036854775808.0 && x < 18446744073709551616.0) {
    return static_cast<uint64_t>(x);
  }
  if (wide) {
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return uint64_t{1} << 63;
    return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(x)));
  }
  if (!(x >= -2147483648.0 && x < 2147483648.0)) return static_cast<uint64_t>(int64_t{INT32_MIN});
  return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(x)));
}

// Expected destination bytes (little endian) of `v`.
std::vector<unsigned char> Encode(const Value& v, DataType dst, bool truncate) {
  std::vector<unsigned char> out(ElemSize(dst), 0);
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof(x)); };
  if (dst == GR_BOOL) {
    bool b = v.kind == Value::kInt ? v.i != 0 : v.kind == Value::kUInt ? v.u != 0 : (v.re != 0 || v.im != 0);
    out[0] = b ? 1 : 0;
  } else if (IsSigned(dst) || IsUnsigned(dst)) {
    const uint64_t bits = v.kind == Value::kInt    ? static_cast<uint64_t>(v.i)
                          : v.kind == Value::kUInt ? v.u
                                                   : RefFloatToIntBits(v.re, dst);
    std::memcpy(out.data(), &bits, out.size());  // low bytes: two's complement wrap
  } else if (dst == GR_FLOAT) {
    put(AsFloat(v));
  } else if (dst == GR_DOUBLE) {
    put(AsDouble(v));
  } else if (dst == GR_BFLOAT16) {
    put(RefBf16(AsFloat(v), truncate));
  } else if (dst == GR_HALF) {
    put(RefHalf(AsFloat(v), truncate));
  } else if (dst == GR_COMPLEX64) {
    const float c[2] = {AsFloat(v), static_cast<float>(v.im)};
    std::memcpy(out.data(), c, 8);
  } else if (dst == GR_COMPLEX128) {
    const double c[2] = {AsDouble(v), v.im};
    std::memcpy(out.data(), c, 16);
  }
  return out;
}

bool IsNanBits(const unsigned char* p, DataType dt) {
  auto nan16 = [&](uint16_t exp_mask, uint16_t man_mask) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return (b & exp_mask) == exp_mask && (b & man_mask) != 0;
  };
  if (dt == GR_HALF) return nan16(0x7c00, 0x03ff);
  if (dt == GR_BFLOAT16) return nan16(0x7f80, 0x007f);
  if (dt == GR_FLOAT || dt == GR_COMPLEX64) {
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
  }
  if (dt == GR_DOUBLE || dt == GR_COMPLEX128) {
    double d;
    std::memcpy(&d, p, 8);
    return std::isnan(d);
  }
  return false;
}

// Source values that stress each conversion: extremes, fractions, signs,
// NaN/inf/denormals, values just inside and outside integer ranges.
Tensor Sources(DataType dt) {
  std::vector<double> reals = {0.0, -0.0, 1.0, -1.0, 2.7, -2.7, 0.5, -0.5, 1.5, 2.5, 255.9, 256.0,
                               300.7, -129.5, 32767.5, 65535.0, 65536.5, 2147483520.0, -2147483648.0,
                               3e9, -3e9, 4294967296.0, 9.3e18, -9.3e18, 1.2e19, 1e20, 1e-40, 1.00048828125,
                               1.000732421875, 65519.0, 65520.0, 6e-8,
                               std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::quiet_NaN()};
  std::vector<int64_t> ints = {0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, -32768, 65535, 65536, INT32_MAX,
                               INT32_MIN, int64_t{1} << 40, -(int64_t{1} << 53) - 1, INT64_MAX, INT64_MIN, 16777217};
  std::mt19937 rng(static_cast<uint32_t>(dt));
  if (dt == GR_BOOL) return BoolTensor({4}, {true, false, false, true});
  if (dt == GR_HALF || dt == GR_BFLOAT16) {
    Tensor t(dt, TensorShape({40}));
    uint16_t* p = static_cast<uint16_t*>(t.raw_data());
    const uint16_t fixed[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x7bff, 0x3e00};
    for (int i = 0; i < 40; ++i) p[i] = i < 10 ? fixed[i] : static_cast<uint16_t>(rng());
    return t;
  }
  if (dt == GR_FLOAT || dt == GR_DOUBLE || dt == GR_COMPLEX64 || dt == GR_COMPLEX128) {
    const int64_t n = static_cast<int64_t>(reals.size());
    Tensor t(dt, TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) {
      const double im = (i % 3 == 0) ? 0.0 : 0.25 * static_cast<double>(i);
      if (dt == GR_FLOAT) t.data<float>()[i] = static_cast<float>(reals[i]);
      if (dt == GR_DOUBLE) t.data<double>()[i] = reals[i];
      if (dt == GR_COMPLEX64) {
        t.data<float>()[2 * i] = static_cast<float>(reals[i]);
        t.data<float>()[2 * i + 1] = static_cast<float>(im);
      }
      if (dt == GR_COMPLEX128) {
        t.data<double>()[2 * i] = reals[i];
        t.data<double>()[2 * i + 1] = im;
      }
    }
    return t;
  }
  const int64_t n = static_cast<int64_t>(ints.size());
  Tensor t(dt, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = static_cast<uint64_t>(ints[i]);
    std::memcpy(static_cast<char*>(t.raw_data()) + i * ElemSize(dt), &bits, ElemSize(dt));
  }
  return t;
}

void CheckCast(const Tensor& x, DataType dst, bool truncate, int threads = 2) {
  const DataType src = x.dtype();
  std::vector<Tensor> out =
      RunOp("Cast", {Fed(x)}, TAttr(src, "SrcT") + TAttr(dst, "DstT") + BoolAttr("Truncate", truncate), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), dst);
  ASSERT_EQ(DimsOf(out[0]), DimsOf(x));
  const size_t es = ElemSize(dst);
  for (int64_t k = 0; k < x.NumElements(); ++k) {
    const std::vector<unsigned char> want = Encode(Decode(x, k), dst, truncate);
    const unsigned char* got = static_cast<const unsigned char*>(out[0].raw_data()) + k * es;
    // NaN payloads may differ; compare NaN-ness per component.
    const size_t parts = (dst == GR_COMPLEX64 || dst == GR_COMPLEX128) ? 2 : 1;
    const size_t ps = es / parts;
    for (size_t c = 0; c < parts; ++c) {
      const bool want_nan = IsNanBits(want.data() + c * ps, dst);
      if (want_nan) {
        EXPECT_TRUE(IsNanBits(got + c * ps, dst)) << DtEnum(src) << "->" << DtEnum(dst) << " element " << k;
      } else {
        EXPECT_EQ(std::memcmp(got + c * ps, want.data() + c * ps, ps), 0)
            << DtEnum(src) << "->" << DtEnum(dst) << " element " << k << ": got " << ElementText(out[0], k)
            << " source " << ElementText(x, k);
      }
    }
  }
}

TEST(CastTest, EveryPairOfTypes) {
  for (DataType src : kCastTypes) {
    const Tensor x = Sources(src);
    for (DataType dst : kCastTypes) CheckCast(x, dst, false);
  }
}

TEST(CastTest, TruncateIntoBfloat16AndHalf) {
  for (DataType src : {GR_FLOAT, GR_DOUBLE, GR_INT32}) {
    const Tensor x = Sources(src);
    CheckCast(x, GR_BFLOAT16, true);
  }
  // Half truncation within half's normal range.
  const Tensor x = MakeTensor<float>(GR_FLOAT, {6}, {1.00048828125f, 1.0009765f, -3.14159f, 100.7f, 0.333f, 65504.f});
  CheckCast(x, GR_HALF, true);
  // Spot values: 1 + 2^-8 rounds to 1 in bfloat16 (tie to even) but
  // 1 + 3 * 2^-9 rounds up; truncation always rounds toward zero.
  std::vector<Tensor> out = RunOp("Cast", {Fed(MakeTensor<float>(GR_FLOAT, {2}, {1.00390625f, 1.005859375f}))},
                                  TAttr(GR_FLOAT, "SrcT") + TAttr(GR_BFLOAT16, "DstT"));
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<uint16_t>(out[0], {0x3f80, 0x3f81});
  out = RunOp("Cast", {Fed(MakeTensor<float>(GR_FLOAT, {2}, {1.00390625f, 1.005859375f}))},
              TAttr(GR_FLOAT, "SrcT") + TAttr(GR_BFLOAT16, "DstT") + BoolAttr("Truncate", true));
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<uint16_t>(out[0], {0x3f80, 0x3f80});
}

TEST(CastTest, LargeEmptyScalarAndSameType) {
  std::mt19937 rng(1);
  std::vector<float> v(100000);
  for (auto& x : v) x = static_cast<float>(static_cast<int>(rng() % 2000001) - 1000000) / 7.0f;
  const Tensor big = MakeTensor<float>(GR_FLOAT, {250, 400}, v);
  for (int threads : {1, 2}) {
    CheckCast(big, GR_INT32, false, threads);
    CheckCast(big, GR_BFLOAT16, false, threads);
    CheckCast(big, GR_DOUBLE, false, threads);
  }
  CheckCast(Random(GR_INT64, {0, 4}, 1), GR_FLOAT, false);
  CheckCast(Random(GR_DOUBLE, {}, 2), GR_INT8, false);
  const Tensor x = Random(GR_FLOAT, {3}, 3);
  std::vector<Tensor> out = RunOp("Cast", {Fed(x)}, TAttr(GR_FLOAT, "SrcT") + TAttr(GR_FLOAT, "DstT"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].SharesBufferWith(x));
}

TEST(CastTest, UnsupportedTypeFailsAtConstruction) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Cast", {Fed(Random(GR_STRING, {2}, 1))}, TAttr(GR_STRING, "SrcT") + TAttr(GR_FLOAT, "DstT"), 1, &out),
               Code::kUnimplemented, "Cast string to float is not supported");
}

}  // namespace
}  // namespace graphrt
