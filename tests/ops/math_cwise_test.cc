// Element-wise math ops of the math plugin, run through real sessions:
// broadcasting binary arithmetic (Div, FloorDiv, FloorMod, Maximum,
// Minimum, Pow, SquaredDifference, and the older Add/Sub/Mul/RealDiv),
// comparisons, logical ops, unary math and AddN.
//
// Expected values come from naive references written here (plain loops,
// output index -> input index by division, double/long double arithmetic),
// never from the kernels' helpers. Inputs are random with fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT: the op-test vocabulary

// ------------------------------------------------------------- helpers

// dtype enum and GraphDef name, bool included.
template <typename T>
struct Ty {
  static constexpr DataType value = Dt<T>::value;
  static constexpr const char* name = Dt<T>::name;
};
template <>
struct Ty<bool> {
  static constexpr DataType value = GR_BOOL;
  static constexpr const char* name = "DT_BOOL";
};

std::string DimsText(const Dims& d) { return TensorShape(d).DebugString(); }

// x, y placeholders of `dt` and node `name` = op(x, y) with `attrs`.
std::string BinaryGraph(const std::string& op, const std::string& dt, const std::string& attrs,
                        const std::string& name = "z") {
  return PlaceholderNode("x", dt) + PlaceholderNode("y", dt) +
         NodeText(name, op, {"x", "y"}, attrs);
}
std::string TypedBinaryGraph(const std::string& op, const std::string& dt,
                             const std::string& name = "z") {
  return BinaryGraph(op, dt, TypeAttr("T", dt), name);
}
std::string UnaryGraph(const std::string& op, const std::string& dt, const std::string& name = "z",
                       bool typed = true) {
  return PlaceholderNode("x", dt) + NodeText(name, op, {"x"}, typed ? TypeAttr("T", dt) : "");
}

// Runs a one-fetch graph; an empty tensor on failure (the test has failed).
Tensor RunOne(const std::string& g, const Feeds& feeds, const std::string& fetch,
              int threads = 2) {
  std::vector<Tensor> out = RunOps(g, feeds, {fetch}, threads);
  if (out.size() != 1) {
    ADD_FAILURE() << "no output";
    return Tensor();
  }
  return out[0];
}

// The numpy broadcast of x and y under f, by plain index arithmetic: each
// output index is split into coordinates by division, and every input
// reads coordinate 0 along its size-1 (or missing) dims.
template <typename In, typename Out, typename F>
std::vector<Out> RefBcast(const std::vector<In>& x, const Dims& xd, const std::vector<In>& y,
                          const Dims& yd, F f, Dims* out_dims) {
  const size_t r = std::max(xd.size(), yd.size());
  Dims od(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t a = i + xd.size() >= r ? xd[i + xd.size() - r] : 1;
    const int64_t b = i + yd.size() >= r ? yd[i + yd.size() - r] : 1;
    od[i] = a == 1 ? b : a;
  }
  *out_dims = od;
  int64_t n = 1;
  for (int64_t d : od) n *= d;
  std::vector<Out> out(static_cast<size_t>(n));
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t fx = 0, fy = 0, mx = 1, my = 1, rem = flat;
    for (size_t k = r; k-- > 0;) {
      const int64_t c = rem % od[k];
      rem /= od[k];
      const size_t kx = k + xd.size(), ky = k + yd.size();
      if (kx >= r) {
        const int64_t dx = xd[kx - r];
        fx += (dx == 1 ? 0 : c) * mx;
        mx *= dx;
      }
      if (ky >= r) {
        const int64_t dy = yd[ky - r];
        fy += (dy == 1 ? 0 : c) * my;
        my *= dy;
      }
    }
    out[static_cast<size_t>(flat)] = static_cast<Out>(f(x[static_cast<size_t>(fx)], y[static_cast<size_t>(fy)]));
  }
  return out;
}

// Random values: uniform reals in [lo, hi], or integers in [lo, hi].
template <typename T>
std::vector<T> Uniform(int64_t n, std::mt19937* rng, double lo, double hi) {
  std::vector<T> v(static_cast<size_t>(n));
  if constexpr (std::is_same_v<T, bool>) {
    std::bernoulli_distribution d(0.5);
    for (size_t i = 0; i < v.size(); ++i) v[i] = d(*rng);
  } else if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(*rng));
  } else {
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
    for (auto& x : v) x = static_cast<T>(d(*rng));
  }
  return v;
}

// Nonzero values in [-hi, -lo] U [lo, hi].
template <typename T>
std::vector<T> NonZero(int64_t n, std::mt19937* rng, double lo, double hi) {
  std::vector<T> v = Uniform<T>(n, rng, lo, hi);
  std::bernoulli_distribution neg(0.5);
  for (auto& x : v)
    if (neg(*rng)) x = static_cast<T>(-x);
  return v;
}

// Compares values; `tol` is relative to max(1, |want|) for floating types.
// NaN must match NaN.
template <typename T>
void ExpectNear(const Tensor& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  ASSERT_EQ(got.dtype(), Ty<T>::value);
  for (size_t i = 0; i < want.size(); ++i) {
    const T g = got.data<T>()[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want[i])) {
        ASSERT_TRUE(std::isnan(g)) << "at flat index " << i << ": got " << g << ", want NaN";
      } else if (std::isinf(want[i])) {
        ASSERT_EQ(g, want[i]) << "at flat index " << i;
      } else {
        const double t = tol * std::max(1.0, std::fabs(static_cast<double>(want[i])));
        ASSERT_NEAR(g, want[i], t) << "at flat index " << i;
      }
    } else {
      ASSERT_EQ(g, want[i]) << "at flat index " << i;
    }
  }
}

void ExpectBools(const Tensor& got, const std::vector<char>& want) {
  ASSERT_EQ(got.dtype(), GR_BOOL);
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got.data<bool>()[i], want[i] != 0) << "at flat index " << i;
}

// Shape pairs: odd sizes, scalars, every broadcasting corner, empties, and
// sizes above kParallelMinElements for every path (same shape, scalar,
// bias-like rows, columns, outer product, few long rows, rank-1 plans).
const std::vector<std::pair<Dims, Dims>>& BroadcastCases() {
  static const std::vector<std::pair<Dims, Dims>> cases = {
      {{17, 33}, {17, 33}},                      // same shape, odd sizes
      {{}, {}},                                  // scalars
      {{}, {5}},                                 // scalar + vector
      {{5}, {}},                                 // vector + scalar
      {{1}, {6}},                                // one-element vector
      {{6}, {1}},                                //
      {{2, 1, 3}, {4, 1}},                       // both sides broadcast
      {{4, 1}, {2, 1, 3}},                       // mirrored
      {{1, 1, 3}, {3}},                          // rank grows, size-1 dims
      {{3}, {1, 1, 3}},                          //
      {{5, 1, 1}, {1}},                          // all-ones other side
      {{7, 1}, {1, 9}},                          // outer product pattern
      {{2, 3, 4, 5}, {3, 1, 5}},                 // rank 4
      {{2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2}},  // alternating, rank 6
      {{2, 1, 1, 1, 1, 1, 1, 1, 1, 3}, {4, 1}},  // rank 10 output
      {{1, 1}, {1}},                             // every dim 1
      {{0, 3}, {3}},                             // empty
      {{3, 1}, {1, 0}},                          // empty by broadcasting
      {{0}, {}},                                 // empty + scalar
      {{}, {0}},                                 // scalar + empty
      {{7, 5}, {5}},                             // short rows (tiled)
      {{1, 3}, {9, 3}},                          //
      {{400, 3}, {3}},                           // short rows, several tiles
      {{4, 1, 6}, {4, 50, 1}},                   // short rows, no repeated row
      {{300, 200}, {200}},                       // bias-like, parallel
      {{20001, 5}, {5}},                         // short rows, parallel
      {{64}, {600, 64}},                         //
      {{300, 200}, {300, 1}},                    // column broadcast, parallel
      {{1, 200}, {300, 1}},                      // outer product, parallel
      {{2, 50001}, {50001}},                     // few long rows: column blocks
      {{3, 1}, {3, 40007}},                      // few long column-broadcast rows
      {{1, 100003}, {100003}},                   // one merged dim, parallel
      {{100003}, {100003}},                      // same shape, parallel, odd
      {{100003}, {}},                            // scalar, parallel
      {{}, {100003}},                            //
  };
  return cases;
}

// op(x, y) against `ref` on random x, y from the generators.
template <typename T, typename Out = T, typename Gen, typename Ref>
void CheckBinary(const std::string& op, const Dims& xd, const Dims& yd, Gen gen_x, Gen gen_y,
                 Ref ref, double tol, int threads = 2) {
  SCOPED_TRACE(op + " " + Ty<T>::name + " " + DimsText(xd) + " vs " + DimsText(yd) +
               " threads=" + std::to_string(threads));
  const std::vector<T> xv = gen_x(NumElements(xd));
  const std::vector<T> yv = gen_y(NumElements(yd));
  Dims want_dims;
  const std::vector<Out> want = RefBcast<T, Out>(xv, xd, yv, yd, ref, &want_dims);
  Tensor x = MakeTensor<T>(Ty<T>::value, xd, xv);
  Tensor y = MakeTensor<T>(Ty<T>::value, yd, yv);
  const std::string g = std::is_same_v<T, bool> && std::is_same_v<Out, bool> &&
                                (op == "LogicalAnd" || op == "LogicalOr")
                            ? BinaryGraph(op, "DT_BOOL", "")
                            : TypedBinaryGraph(op, Ty<T>::name);
  Tensor z = RunOne(g, {{"x:0", x}, {"y:0", y}}, "z:0", threads);
  EXPECT_EQ(z.dtype(), Ty<Out>::value);
  EXPECT_EQ(DimsOf(z), want_dims);
  if constexpr (std::is_same_v<Out, bool>) {
    ExpectBools(z, std::vector<char>(want.begin(), want.end()));
  } else {
    ExpectNear<Out>(z, want, tol);
  }
  // Fed tensors belong to the caller: never written in place.
  for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(x.data<T>()[i], xv[i]) << "x modified";
  for (size_t i = 0; i < yv.size(); ++i) ASSERT_EQ(y.data<T>()[i], yv[i]) << "y modified";
}

template <typename T>
std::function<std::vector<T>(int64_t)> UniformGen(std::mt19937* rng, double lo, double hi) {
  return [rng, lo, hi](int64_t n) { return Uniform<T>(n, rng, lo, hi); };
}
template <typename T>
std::function<std::vector<T>(int64_t)> NonZeroGen(std::mt19937* rng, double lo, double hi) {
  return [rng, lo, hi](int64_t n) { return NonZero<T>(n, rng, lo, hi); };
}

// ============================================================ arithmetic

template <typename T>
void CheckArithmetic(uint32_t seed) {
  std::mt19937 rng(seed);
  constexpr bool kFloat = std::is_floating_point_v<T>;
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-13;
  auto any = UniformGen<T>(&rng, -100, 100);
  auto divisor = kFloat ? NonZeroGen<T>(&rng, 0.5, 50) : NonZeroGen<T>(&rng, 1, 30);
  using LD = long double;
  for (const auto& [xd, yd] : BroadcastCases()) {
    CheckBinary<T>("Add", xd, yd, any, any, [](T a, T b) { return static_cast<T>(LD(a) + LD(b)); },
                   tol);
    CheckBinary<T>("Sub", xd, yd, any, any, [](T a, T b) { return static_cast<T>(LD(a) - LD(b)); },
                   tol);
    CheckBinary<T>("Mul", xd, yd, any, any, [](T a, T b) { return static_cast<T>(LD(a) * LD(b)); },
                   tol);
    CheckBinary<T>("Maximum", xd, yd, any, any, [](T a, T b) { return a < b ? b : a; }, 0);
    CheckBinary<T>("Minimum", xd, yd, any, any, [](T a, T b) { return b < a ? b : a; }, 0);
    CheckBinary<T>("SquaredDifference", xd, yd, any, any,
                   [](T a, T b) { return static_cast<T>((LD(a) - LD(b)) * (LD(a) - LD(b))); }, tol);
    // Div truncates on integers.
    CheckBinary<T>("Div", xd, yd, any, divisor,
                   [](T a, T b) {
                     if constexpr (kFloat) return static_cast<T>(a / b);
                     return static_cast<T>(std::trunc(LD(a) / LD(b)));
                   },
                   tol);
    // FloorDiv: floor of the quotient (the quotient rounded to T first).
    CheckBinary<T>("FloorDiv", xd, yd, any, divisor,
                   [](T a, T b) {
                     if constexpr (kFloat) return std::floor(static_cast<T>(a / b));
                     return static_cast<T>(std::floor(LD(a) / LD(b)));
                   },
                   tol);
    // FloorMod: x - floor(x / y) * y, exact in long double for these inputs
    // (integers) or via the remainder (floating).
    CheckBinary<T>("FloorMod", xd, yd, any, divisor,
                   [](T a, T b) {
                     if constexpr (kFloat) {
                       LD r = std::fmod(LD(a), LD(b));
                       if (r != 0 && (r < 0) != (b < 0)) r += LD(b);
                       return static_cast<T>(r);
                     }
                     return static_cast<T>(LD(a) - std::floor(LD(a) / LD(b)) * LD(b));
                   },
                   tol);
    if constexpr (kFloat) {
      CheckBinary<T>("RealDiv", xd, yd, any, divisor, [](T a, T b) { return static_cast<T>(a / b); },
                     tol);
      CheckBinary<T>("Pow", xd, yd, UniformGen<T>(&rng, 0.25, 4), UniformGen<T>(&rng, -3, 3),
                     [](T a, T b) { return static_cast<T>(std::pow(double(a), double(b))); },
                     std::is_same_v<T, float> ? 1e-5 : 1e-12);
    } else {
      CheckBinary<T>("Pow", xd, yd, UniformGen<T>(&rng, -6, 6), UniformGen<T>(&rng, 0, 6),
                     [](T a, T b) {
                       int64_t p = 1;
                       for (T k = 0; k < b; ++k) p *= a;
                       return static_cast<T>(p);
                     },
                     0);
    }
  }
}

TEST(MathCwiseArithmeticTest, Float) { CheckArithmetic<float>(101); }
TEST(MathCwiseArithmeticTest, Double) { CheckArithmetic<double>(102); }
TEST(MathCwiseArithmeticTest, Int32) { CheckArithmetic<int32_t>(103); }
TEST(MathCwiseArithmeticTest, Int64) { CheckArithmetic<int64_t>(104); }

// The parallel paths again in a 1-thread session (inline) and a 2-thread one.
TEST(MathCwiseArithmeticTest, OneAndTwoThreadSessions) {
  std::mt19937 rng(105);
  auto any = UniformGen<float>(&rng, -10, 10);
  auto divisor = NonZeroGen<float>(&rng, 0.5, 5);
  for (int threads : {1, 2}) {
    for (const auto& [xd, yd] : std::vector<std::pair<Dims, Dims>>{{{300, 200}, {200}},
                                                                   {{2, 50001}, {50001}},
                                                                   {{100003}, {}},
                                                                   {{20001, 5}, {5}},
                                                                   {{1, 200}, {300, 1}}}) {
      CheckBinary<float>("FloorMod", xd, yd, any, divisor,
                         [](float a, float b) {
                           double r = std::fmod(double(a), double(b));
                           if (r != 0 && (r < 0) != (b < 0)) r += b;
                           return static_cast<float>(r);
                         },
                         1e-6, threads);
      CheckBinary<float>("Maximum", xd, yd, any, any, [](float a, float b) { return a < b ? b : a; },
                         0, threads);
    }
    std::mt19937 irng(106);
    auto iany = UniformGen<int32_t>(&irng, -1000, 1000);
    auto idiv = NonZeroGen<int32_t>(&irng, 1, 40);
    CheckBinary<int32_t>("FloorDiv", {3, 40000}, {40000}, iany, idiv,
                         [](int32_t a, int32_t b) {
                           return static_cast<int32_t>(std::floor(double(a) / double(b)));
                         },
                         0, threads);
  }
}

// Hand-checked signs: Python's // and % for FloorDiv/FloorMod, C's
// truncation for Div.
TEST(MathCwiseArithmeticTest, DivisionSignsByHand) {
  const std::vector<int32_t> x = {7, -7, 7, -7, 6, -6, 0, 1};
  const std::vector<int32_t> y = {3, 3, -3, -3, 3, -3, 5, -5};
  auto run = [&](const std::string& op) {
    return RunOne(TypedBinaryGraph(op, "DT_INT32"),
                  {{"x:0", MakeTensor<int32_t>(GR_INT32, {8}, x)},
                   {"y:0", MakeTensor<int32_t>(GR_INT32, {8}, y)}},
                  "z:0");
  };
  ExpectNear<int32_t>(run("Div"), {2, -2, -2, 2, 2, 2, 0, 0}, 0);
  ExpectNear<int32_t>(run("FloorDiv"), {2, -3, -3, 2, 2, 2, 0, -1}, 0);
  ExpectNear<int32_t>(run("FloorMod"), {1, 2, -2, -1, 0, 0, 0, -4}, 0);

  const std::vector<float> fx = {7.5f, -7.5f, 7.5f, -7.5f, 6.f, -0.f, 1.f};
  const std::vector<float> fy = {2.f, 2.f, -2.f, -2.f, 3.f, 3.f, 0.f};
  auto runf = [&](const std::string& op) {
    return RunOne(TypedBinaryGraph(op, "DT_FLOAT"),
                  {{"x:0", MakeTensor<float>(GR_FLOAT, {7}, fx)},
                   {"y:0", MakeTensor<float>(GR_FLOAT, {7}, fy)}},
                  "z:0");
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectNear<float>(runf("FloorDiv"), {3, -4, -4, 3, 2, -0.f, inf}, 0);
  ExpectNear<float>(runf("FloorMod"), {1.5f, 0.5f, -0.5f, -1.5f, 0, 0, nan}, 0);
  ExpectNear<float>(runf("Div"), {3.75f, -3.75f, -3.75f, 3.75f, 2, -0.f, inf}, 0);
}

// FloorMod on floats: the result has the divisor's sign, is smaller than
// it in magnitude, and (x - r) / y is an integer.
TEST(MathCwiseArithmeticTest, FloorModFloatProperties) {
  std::mt19937 rng(107);
  const Dims d = {5000};
  const std::vector<double> xv = Uniform<double>(5000, &rng, -1e4, 1e4);
  const std::vector<double> yv = NonZero<double>(5000, &rng, 0.01, 100);
  Tensor z = RunOne(TypedBinaryGraph("FloorMod", "DT_DOUBLE"),
                    {{"x:0", MakeTensor<double>(GR_DOUBLE, d, xv)},
                     {"y:0", MakeTensor<double>(GR_DOUBLE, d, yv)}},
                    "z:0");
  ASSERT_EQ(z.NumElements(), 5000);
  for (size_t i = 0; i < xv.size(); ++i) {
    const double r = z.data<double>()[i];
    ASSERT_TRUE(r == 0 || (r < 0) == (yv[i] < 0)) << i;
    ASSERT_LE(std::fabs(r), std::fabs(yv[i])) << i;
    const double q = (xv[i] - r) / yv[i];
    ASSERT_NEAR(q, std::round(q), 1e-6 * std::max(1.0, std::fabs(q))) << i;
  }
}

template <typename T>
void CheckIntegerEdges() {
  SCOPED_TRACE(Ty<T>::name);
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  const std::vector<T> x = {mn, mn, mx, mn, 5, -5, mn};
  const std::vector<T> y = {-1, 1, -1, mx, -1, -1, mn};
  auto run = [&](const std::string& op) {
    return RunOne(TypedBinaryGraph(op, Ty<T>::name),
                  {{"x:0", MakeTensor<T>(Ty<T>::value, {7}, x)},
                   {"y:0", MakeTensor<T>(Ty<T>::value, {7}, y)}},
                  "z:0");
  };
  // INT_MIN / -1 wraps to INT_MIN instead of trapping.
  ExpectNear<T>(run("Div"), {mn, mn, static_cast<T>(-mx), -1, -5, 5, 1}, 0);
  ExpectNear<T>(run("FloorDiv"), {mn, mn, static_cast<T>(-mx), -2, -5, 5, 1}, 0);
  ExpectNear<T>(run("FloorMod"), {0, 0, 0, static_cast<T>(mx - 1), 0, 0, 0}, 0);
  // Scalar -1 divisor over a tensor (the scalar fast path).
  Tensor z = RunOne(TypedBinaryGraph("FloorDiv", Ty<T>::name),
                    {{"x:0", MakeTensor<T>(Ty<T>::value, {3}, {mn, 7, -7})},
                     {"y:0", MakeTensor<T>(Ty<T>::value, {}, {-1})}},
                    "z:0");
  ExpectNear<T>(z, {mn, -7, 7}, 0);
}

TEST(MathCwiseArithmeticTest, IntegerMinByMinusOneDoesNotTrap) {
  CheckIntegerEdges<int32_t>();
  CheckIntegerEdges<int64_t>();
}

TEST(MathCwiseArithmeticTest, IntegerPowEdges) {
  Tensor z = RunOne(TypedBinaryGraph("Pow", "DT_INT64"),
                    {{"x:0", MakeTensor<int64_t>(GR_INT64, {6}, {2, -3, 0, 0, 7, -1})},
                     {"y:0", MakeTensor<int64_t>(GR_INT64, {6}, {40, 3, 0, 5, 1, 7})}},
                    "z:0");
  ExpectNear<int64_t>(z, {1LL << 40, -27, 1, 0, 7, -1}, 0);
  // Overflow wraps (no UB): 2^33 in int32 is 0, 3^21 wraps mod 2^32.
  z = RunOne(TypedBinaryGraph("Pow", "DT_INT32"),
             {{"x:0", MakeTensor<int32_t>(GR_INT32, {2}, {2, 3})},
              {"y:0", MakeTensor<int32_t>(GR_INT32, {2}, {33, 21})}},
             "z:0");
  uint32_t p = 1;
  for (int i = 0; i < 21; ++i) p *= 3u;
  ExpectNear<int32_t>(z, {0, static_cast<int32_t>(p)}, 0);
}

TEST(MathCwiseArithmeticTest, FloatPowSpecials) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-2, -2, 0, 0, 4, -8, 1, 2};
  const std::vector<float> y = {3, 2, 0, -1, 0.5f, 1.f / 3, nan, -2};
  Tensor z = RunOne(TypedBinaryGraph("Pow", "DT_FLOAT"),
                    {{"x:0", MakeTensor<float>(GR_FLOAT, {8}, x)},
                     {"y:0", MakeTensor<float>(GR_FLOAT, {8}, y)}},
                    "z:0");
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(std::pow(x[i], y[i]));
  EXPECT_TRUE(std::isnan(want[5]));
  EXPECT_EQ(want[3], inf);
  ExpectNear<float>(z, want, 1e-6);
}

TEST(MathCwiseArithmeticTest, MaximumMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {nan, 1, nan, -3, 2};
  const std::vector<float> y = {1, nan, nan, 4, 2};
  for (const char* op : {"Maximum", "Minimum"}) {
    Tensor z = RunOne(TypedBinaryGraph(op, "DT_FLOAT"),
                      {{"x:0", MakeTensor<float>(GR_FLOAT, {5}, x)},
                       {"y:0", MakeTensor<float>(GR_FLOAT, {5}, y)}},
                      "z:0");
    const float m = std::string(op) == "Maximum" ? 4 : -3;
    ExpectNear<float>(z, {nan, nan, nan, m, 2}, 0);
    // NaN as a broadcast scalar on either side.
    z = RunOne(TypedBinaryGraph(op, "DT_FLOAT"),
               {{"x:0", MakeTensor<float>(GR_FLOAT, {}, {nan})},
                {"y:0", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})}},
               "z:0");
    ExpectNear<float>(z, {nan, nan, nan}, 0);
  }
}

// Runs `g` on one session: the error, then a good run on the same session.
void ExpectErrorThenRecovery(const std::string& g, const Feeds& bad, const Feeds& good,
                             const std::string& fetch, const std::string& message) {
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run(bad, {fetch}, {}, &out), Code::kInvalidArgument, message,
               fetch.substr(0, fetch.find(':')));
  out.clear();
  const Status st = s->Run(good, {fetch}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(out.size(), 1u);
}

template <typename T>
void CheckDivisionByZero() {
  SCOPED_TRACE(Ty<T>::name);
  for (const char* op : {"Div", "FloorDiv", "FloorMod"}) {
    SCOPED_TRACE(op);
    const std::string g = TypedBinaryGraph(op, Ty<T>::name, "my_div");
    const Feeds good = {{"x:0", MakeTensor<T>(Ty<T>::value, {3}, {1, 2, 3})},
                        {"y:0", MakeTensor<T>(Ty<T>::value, {3}, {1, 2, 3})}};
    // Same shape, scalar divisor, broadcast divisor, scalar dividend.
    for (const Feeds& bad : std::vector<Feeds>{
             {{"x:0", MakeTensor<T>(Ty<T>::value, {3}, {1, 2, 3})},
              {"y:0", MakeTensor<T>(Ty<T>::value, {3}, {1, 0, 3})}},
             {{"x:0", MakeTensor<T>(Ty<T>::value, {3}, {1, 2, 3})},
              {"y:0", MakeTensor<T>(Ty<T>::value, {}, {0})}},
             {{"x:0", MakeTensor<T>(Ty<T>::value, {2, 2}, {1, 2, 3, 4})},
              {"y:0", MakeTensor<T>(Ty<T>::value, {2, 1}, {5, 0})}},
             {{"x:0", MakeTensor<T>(Ty<T>::value, {}, {7})},
              {"y:0", MakeTensor<T>(Ty<T>::value, {2}, {0, 1})}}}) {
      ExpectErrorThenRecovery(g, bad, good, "my_div:0", "Integer division by zero");
    }
    // No element is divided when the output is empty: no error.
    Tensor z = RunOne(g,
                      {{"x:0", MakeTensor<T>(Ty<T>::value, {0, 2}, {})},
                       {"y:0", MakeTensor<T>(Ty<T>::value, {2}, {0, 0})}},
                      "my_div:0");
    EXPECT_EQ(DimsOf(z), (Dims{0, 2}));
  }
}

TEST(MathCwiseArithmeticTest, IntegerDivisionByZeroFails) {
  CheckDivisionByZero<int32_t>();
  CheckDivisionByZero<int64_t>();
}

TEST(MathCwiseArithmeticTest, IntegerNegativePowerFails) {
  for (const char* dt : {"DT_INT32", "DT_INT64"}) {
    SCOPED_TRACE(dt);
    const std::string g = TypedBinaryGraph("Pow", dt, "my_pow");
    auto feeds = [&](std::vector<int64_t> x, Dims xd, std::vector<int64_t> y, Dims yd) {
      if (std::string(dt) == "DT_INT32") {
        return Feeds{{"x:0", MakeTensor<int32_t>(GR_INT32, xd, {x.begin(), x.end()})},
                     {"y:0", MakeTensor<int32_t>(GR_INT32, yd, {y.begin(), y.end()})}};
      }
      return Feeds{{"x:0", MakeTensor<int64_t>(GR_INT64, xd, x)},
                   {"y:0", MakeTensor<int64_t>(GR_INT64, yd, y)}};
    };
    ExpectErrorThenRecovery(g, feeds({5, 2}, {2}, {-2, 3}, {2}), feeds({5, 2}, {2}, {2, 3}, {2}),
                            "my_pow:0", "Integers to negative integer powers are not allowed");
    ExpectErrorThenRecovery(g, feeds({5, 2}, {2}, {-1}, {}), feeds({5, 2}, {2}, {1}, {}),
                            "my_pow:0", "Integers to negative integer powers are not allowed");
  }
}

TEST(MathCwiseArithmeticTest, IncompatibleShapesFail) {
  for (const char* op : {"Div", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow",
                         "SquaredDifference", "Less", "Equal"}) {
    SCOPED_TRACE(op);
    Tensor x(GR_FLOAT, TensorShape({2, 3}));
    Tensor y(GR_FLOAT, TensorShape({4}));
    EXPECT_ERROR(TryRun(TypedBinaryGraph(op, "DT_FLOAT", "my_op"), {{"x:0", x}, {"y:0", y}},
                        {"my_op:0"}),
                 Code::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4]", "my_op");
    // Known at load time from constants.
    const std::string g = ConstFloat("a", {2, 3}, {1, 2, 3, 4, 5, 6}) +
                          ConstFloat("b", {4}, {1, 2, 3, 4}) +
                          NodeText("bad_op", op, {"a", "b"}, TypeAttr("T", "DT_FLOAT"));
    EXPECT_ERROR(TryRun(g, {}, {"bad_op:0"}), Code::kInvalidArgument, "Incompatible shapes",
                 "bad_op");
  }
}

// More than 8 dims left after merging: refused, not mis-computed.
TEST(MathCwiseArithmeticTest, TooManyAlternatingBroadcastDimsIsUnimplemented) {
  const Dims xd = {2, 1, 2, 1, 2, 1, 2, 1, 2};
  const Dims yd = {1, 2, 1, 2, 1, 2, 1, 2, 1};
  Tensor x(GR_FLOAT, TensorShape(xd)), y(GR_FLOAT, TensorShape(yd));
  EXPECT_ERROR(TryRun(TypedBinaryGraph("Maximum", "DT_FLOAT", "big"), {{"x:0", x}, {"y:0", y}},
                      {"big:0"}),
               Code::kUnimplemented, "is not supported yet");
}

// x_{i+1} = op(x_i, b), 1000 times on [4]: the in-place path along a chain.
TEST(MathCwiseArithmeticTest, ChainOf1000) {
  std::string g = PlaceholderNode("x0", "DT_FLOAT") + PlaceholderNode("b", "DT_FLOAT");
  const char* ops[] = {"Maximum", "SquaredDifference", "Minimum", "Div"};
  for (int i = 0; i < 1000; ++i) {
    g += NodeText("x" + std::to_string(i + 1), ops[i % 4], {"x" + std::to_string(i), "b"},
                  TypeAttr("T", "DT_FLOAT"));
  }
  const std::vector<float> x0 = {1, -2, 3, 0.5f}, b = {1.5f, 2, -1, 0.25f};
  std::vector<double> want(x0.begin(), x0.end());
  for (int i = 0; i < 1000; ++i) {
    for (size_t k = 0; k < 4; ++k) {
      const double v = want[k], c = b[k];
      switch (i % 4) {
        case 0: want[k] = std::max(v, c); break;
        case 1: want[k] = static_cast<float>((v - c) * (v - c)); break;
        case 2: want[k] = std::min(v, c); break;
        default: want[k] = static_cast<float>(v / c); break;
      }
    }
  }
  Tensor z = RunOne(g,
                    {{"x0:0", MakeTensor<float>(GR_FLOAT, {4}, x0)},
                     {"b:0", MakeTensor<float>(GR_FLOAT, {4}, b)}},
                    "x1000:0");
  ExpectNear<float>(z, {want.begin(), want.end()}, 1e-5);
}

// y feeds several consumers (in-place candidates); none may see another's
// result.
TEST(MathCwiseArithmeticTest, FanOutIsNotClobberedByInPlaceReuse) {
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("b", "DT_FLOAT") +
                        NodeText("y", "AddV2", {"x", "b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z1", "Maximum", {"y", "b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z2", "Pow", {"y", "b"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z3", "Square", {"y"}, TypeAttr("T", "DT_FLOAT")) +
                        NodeText("z4", "Less", {"y", "x"}, TypeAttr("T", "DT_FLOAT"));
  const std::vector<float> x = {1, 2, 3}, b = {2, -3, 2};
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOps(g,
                                     {{"x:0", MakeTensor<float>(GR_FLOAT, {3}, x)},
                                      {"b:0", MakeTensor<float>(GR_FLOAT, {3}, b)}},
                                     {"y:0", "z1:0", "z2:0", "z3:0", "z4:0"}, threads);
    ASSERT_EQ(out.size(), 5u);
    ExpectNear<float>(out[0], {3, -1, 5}, 0);
    ExpectNear<float>(out[1], {3, -1, 5}, 0);
    ExpectNear<float>(out[2], {9, -1, 25}, 1e-6);
    ExpectNear<float>(out[3], {9, 1, 25}, 0);
    ExpectBools(out[4], {0, 1, 0});
  }
}

// A binary op takes over whichever same-shape operand is dying (here the
// second: the first is a feed the caller holds), and AddN any of its
// inputs: the trace shows the output at the operand's address.
TEST(MathCwiseArithmeticTest, InPlaceReuseOfAnyDyingOperand) {
  const std::string f = TypeAttr("T", "DT_FLOAT");
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("b", "DT_FLOAT") +
                        NodeText("y", "Neg", {"b"}, f) + NodeText("z", "AddV2", {"x", "y"}, f) +
                        NodeText("w", "Neg", {"x"}, f) +
                        NodeText("n", "AddN", {"x", "b", "w"}, f + "attr { key: 'N' value { i: 3 } } ");
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 1);
  ASSERT_TRUE(s);
  const std::vector<float> x = {1, 2, 3, 4}, b = {10, 20, 30, 40};
  proto::RunOptions ro;
  ro.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  const Status st = s->Run(ro, {{"x:0", MakeTensor<float>(GR_FLOAT, {4}, x)}, {"b:0", MakeTensor<float>(GR_FLOAT, {4}, b)}},
                           {"z:0", "n:0"}, {}, &out, &md);
  ASSERT_TRUE(st.ok()) << st;
  ExpectNear<float>(out[0], {-9, -18, -27, -36}, 0);
  ExpectNear<float>(out[1], {10, 20, 30, 40}, 0);
  const std::map<std::string, uint64_t> ptr = TracedOutputPtrs(md);
  ASSERT_TRUE(ptr.count("y") && ptr.count("z") && ptr.count("w") && ptr.count("n"));
  EXPECT_NE(ptr.at("y"), 0u);
  EXPECT_EQ(ptr.at("z"), ptr.at("y"));
  EXPECT_EQ(ptr.at("n"), ptr.at("w"));
  EXPECT_EQ(reinterpret_cast<uint64_t>(out[0].raw_data()), ptr.at("z"));
}

// ============================================================ comparisons

template <typename T>
void CheckComparisons(uint32_t seed) {
  std::mt19937 rng(seed);
  // Few distinct values, so that equal pairs are common.
  auto gen = UniformGen<T>(&rng, -3, 3);
  for (const auto& [xd, yd] : BroadcastCases()) {
    CheckBinary<T, bool>("Less", xd, yd, gen, gen, [](T a, T b) { return a < b; }, 0);
    CheckBinary<T, bool>("LessEqual", xd, yd, gen, gen, [](T a, T b) { return a <= b; }, 0);
    CheckBinary<T, bool>("Greater", xd, yd, gen, gen, [](T a, T b) { return a > b; }, 0);
    CheckBinary<T, bool>("GreaterEqual", xd, yd, gen, gen, [](T a, T b) { return a >= b; }, 0);
    CheckBinary<T, bool>("Equal", xd, yd, gen, gen, [](T a, T b) { return a == b; }, 0);
    CheckBinary<T, bool>("NotEqual", xd, yd, gen, gen, [](T a, T b) { return a != b; }, 0);
  }
}

// Floats take whole values in [-3, 3] so that ties happen.
template <typename T>
std::function<std::vector<T>(int64_t)> SmallWholeGen(std::mt19937* rng) {
  return [rng](int64_t n) {
    std::vector<T> v = Uniform<T>(n, rng, -3, 3);
    for (auto& x : v) x = static_cast<T>(std::round(x));
    return v;
  };
}

TEST(MathCwiseCompareTest, Float) { CheckComparisons<float>(201); }
TEST(MathCwiseCompareTest, Double) { CheckComparisons<double>(202); }
TEST(MathCwiseCompareTest, Int32) { CheckComparisons<int32_t>(203); }
TEST(MathCwiseCompareTest, Int64) { CheckComparisons<int64_t>(204); }

TEST(MathCwiseCompareTest, FloatTies) {
  std::mt19937 rng(205);
  auto gen = SmallWholeGen<float>(&rng);
  for (const auto& [xd, yd] : std::vector<std::pair<Dims, Dims>>{{{17, 33}, {33}}, {{}, {9}}}) {
    CheckBinary<float, bool>("Equal", xd, yd, gen, gen, [](float a, float b) { return a == b; }, 0);
    CheckBinary<float, bool>("LessEqual", xd, yd, gen, gen,
                             [](float a, float b) { return a <= b; }, 0);
  }
}

TEST(MathCwiseCompareTest, Bool) {
  std::mt19937 rng(206);
  auto gen = UniformGen<bool>(&rng, 0, 1);
  for (const auto& [xd, yd] : BroadcastCases()) {
    CheckBinary<bool, bool>("Equal", xd, yd, gen, gen, [](bool a, bool b) { return a == b; }, 0);
    CheckBinary<bool, bool>("NotEqual", xd, yd, gen, gen, [](bool a, bool b) { return a != b; },
                            0);
  }
}

TEST(MathCwiseCompareTest, NaNComparesUnequal) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {nan, nan, 1};
  const std::vector<float> y = {nan, 1, nan};
  const Feeds feeds = {{"x:0", MakeTensor<float>(GR_FLOAT, {3}, x)},
                       {"y:0", MakeTensor<float>(GR_FLOAT, {3}, y)}};
  ExpectBools(RunOne(TypedBinaryGraph("Equal", "DT_FLOAT"), feeds, "z:0"), {0, 0, 0});
  ExpectBools(RunOne(TypedBinaryGraph("NotEqual", "DT_FLOAT"), feeds, "z:0"), {1, 1, 1});
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual"})
    ExpectBools(RunOne(TypedBinaryGraph(op, "DT_FLOAT"), feeds, "z:0"), {0, 0, 0});
}

std::string EqualityGraph(const std::string& op, bool strict, const std::string& x = "x",
                          const std::string& y = "y") {
  return NodeText("z", op, {x, y},
                  TypeAttr("T", "DT_FLOAT") +
                      "attr { key: \"incompatible_shape_error\" value { b: " +
                      (strict ? "true" : "false") + " } } ");
}

TEST(MathCwiseCompareTest, IncompatibleShapeErrorFalseGivesScalar) {
  const Feeds bad = {{"x:0", Tensor(GR_FLOAT, TensorShape({2, 3}))},
                     {"y:0", Tensor(GR_FLOAT, TensorShape({4}))}};
  const std::string ph = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("y", "DT_FLOAT");
  Tensor z = RunOne(ph + EqualityGraph("Equal", false), bad, "z:0");
  EXPECT_EQ(z.dims(), 0);
  ExpectBools(z, {0});
  z = RunOne(ph + EqualityGraph("NotEqual", false), bad, "z:0");
  EXPECT_EQ(z.dims(), 0);
  ExpectBools(z, {1});
  // Explicit true behaves as the default.
  EXPECT_ERROR(TryRun(ph + EqualityGraph("Equal", true), bad, {"z:0"}), Code::kInvalidArgument,
               "Incompatible shapes: [2,3] vs. [4]");
  // Compatible shapes still broadcast with the attr false.
  z = RunOne(ph + EqualityGraph("NotEqual", false),
             {{"x:0", MakeTensor<float>(GR_FLOAT, {2, 2}, {1, 2, 3, 4})},
              {"y:0", MakeTensor<float>(GR_FLOAT, {2}, {1, 4})}},
             "z:0");
  EXPECT_EQ(DimsOf(z), (Dims{2, 2}));
  ExpectBools(z, {0, 1, 1, 0});
  // Constants known not to broadcast: the graph loads (scalar shape).
  const std::string consts =
      ConstFloat("a", {2, 3}, {1, 2, 3, 4, 5, 6}) + ConstFloat("b", {4}, {1, 2, 3, 4});
  z = RunOne(consts + EqualityGraph("Equal", false, "a", "b"), {}, "z:0");
  EXPECT_EQ(z.dims(), 0);
  ExpectBools(z, {0});
  EXPECT_ERROR(TryRun(consts + EqualityGraph("Equal", true, "a", "b"), {}, {"z:0"}),
               Code::kInvalidArgument, "Incompatible shapes");
}

// ================================================================ logical

TEST(MathCwiseLogicalTest, AndOrBroadcast) {
  std::mt19937 rng(301);
  auto gen = UniformGen<bool>(&rng, 0, 1);
  for (const auto& [xd, yd] : BroadcastCases()) {
    CheckBinary<bool, bool>("LogicalAnd", xd, yd, gen, gen, [](bool a, bool b) { return a && b; },
                            0);
    CheckBinary<bool, bool>("LogicalOr", xd, yd, gen, gen, [](bool a, bool b) { return a || b; },
                            0);
  }
  // 1-thread session over the parallel sizes.
  CheckBinary<bool, bool>("LogicalAnd", {300, 200}, {200}, gen, gen,
                          [](bool a, bool b) { return a && b; }, 0, 1);
}

TEST(MathCwiseLogicalTest, Not) {
  std::mt19937 rng(302);
  for (const Dims& d : {Dims{17, 33}, Dims{}, Dims{0}, Dims{100003}}) {
    const std::vector<bool> xv = Uniform<bool>(NumElements(d), &rng, 0, 1);
    std::vector<char> want;
    for (bool b : xv) want.push_back(!b);
    for (int threads : {1, 2}) {
      Tensor z = RunOne(UnaryGraph("LogicalNot", "DT_BOOL", "z", false),
                        {{"x:0", MakeTensor<bool>(GR_BOOL, d, xv)}}, "z:0", threads);
      EXPECT_EQ(DimsOf(z), d);
      ExpectBools(z, want);
    }
  }
}

TEST(MathCwiseLogicalTest, IncompatibleShapesFail) {
  Tensor x(GR_BOOL, TensorShape({3})), y(GR_BOOL, TensorShape({2}));
  EXPECT_ERROR(TryRun(BinaryGraph("LogicalOr", "DT_BOOL", "", "my_or"), {{"x:0", x}, {"y:0", y}},
                      {"my_or:0"}),
               Code::kInvalidArgument, "Incompatible shapes: [3] vs. [2]", "my_or");
}

// ================================================================== unary

template <typename T, typename Ref>
void CheckUnary(const std::string& op, const std::vector<T>& xv, const Dims& d, Ref ref,
                double tol, int threads = 2) {
  SCOPED_TRACE(op + " " + Ty<T>::name + " " + DimsText(d) + " threads=" +
               std::to_string(threads));
  std::vector<T> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) want[i] = static_cast<T>(ref(xv[i]));
  Tensor x = MakeTensor<T>(Ty<T>::value, d, xv);
  Tensor z = RunOne(UnaryGraph(op, Ty<T>::name), {{"x:0", x}}, "z:0", threads);
  EXPECT_EQ(DimsOf(z), d);
  ExpectNear<T>(z, want, tol);
  for (size_t i = 0; i < xv.size(); ++i) ASSERT_EQ(x.data<T>()[i], xv[i]) << "x modified";
}

const std::vector<Dims>& UnaryShapes() {
  static const std::vector<Dims> shapes = {{17, 33}, {}, {0}, {3, 0, 2}, {100003}};
  return shapes;
}

template <typename T>
void CheckRealUnary(uint32_t seed) {
  std::mt19937 rng(seed);
  const bool f32 = std::is_same_v<T, float>;
  // Exact ops, and ops whose Eigen versions are approximations.
  const double exact = f32 ? 1e-7 : 1e-15;
  const double approx = f32 ? 4e-6 : 1e-13;
  for (const Dims& d : UnaryShapes()) {
    const int64_t n = NumElements(d);
    const std::vector<T> any = Uniform<T>(n, &rng, -10, 10);
    const std::vector<T> pos = Uniform<T>(n, &rng, 1e-3, 100);
    const std::vector<T> gt_m1 = Uniform<T>(n, &rng, -0.999, 50);
    const std::vector<T> nz = NonZero<T>(n, &rng, 0.01, 100);
    const std::vector<T> small = Uniform<T>(n, &rng, -4, 4);
    using D = double;
    CheckUnary<T>("Neg", any, d, [](T v) { return -D(v); }, 0);
    CheckUnary<T>("Abs", any, d, [](T v) { return std::fabs(D(v)); }, 0);
    CheckUnary<T>("Sign", any, d, [](T v) { return D(v > 0) - D(v < 0); }, 0);
    CheckUnary<T>("Square", any, d, [](T v) { return D(v) * D(v); }, exact);
    CheckUnary<T>("Reciprocal", nz, d, [](T v) { return 1.0 / D(v); }, exact);
    CheckUnary<T>("Inv", nz, d, [](T v) { return 1.0 / D(v); }, exact);
    CheckUnary<T>("Floor", any, d, [](T v) { return std::floor(D(v)); }, 0);
    CheckUnary<T>("Ceil", any, d, [](T v) { return std::ceil(D(v)); }, 0);
    CheckUnary<T>("Round", any, d, [](T v) { return std::nearbyint(D(v)); }, 0);
    // Eigen's fast-math float sqrt may be 1 ulp off.
    CheckUnary<T>("Sqrt", pos, d, [](T v) { return std::sqrt(D(v)); }, approx);
    CheckUnary<T>("Rsqrt", pos, d, [](T v) { return 1.0 / std::sqrt(D(v)); }, approx);
    CheckUnary<T>("Exp", any, d, [](T v) { return std::exp(D(v)); }, approx);
    CheckUnary<T>("Log", pos, d, [](T v) { return std::log(D(v)); }, approx);
    CheckUnary<T>("Log1p", gt_m1, d, [](T v) { return std::log1p(D(v)); }, approx);
    CheckUnary<T>("Tanh", small, d, [](T v) { return std::tanh(D(v)); }, approx);
    CheckUnary<T>("Erf", small, d, [](T v) { return std::erf(D(v)); }, approx);
    CheckUnary<T>("Sin", any, d, [](T v) { return std::sin(D(v)); }, approx);
    CheckUnary<T>("Cos", any, d, [](T v) { return std::cos(D(v)); }, approx);
  }
}

TEST(MathCwiseUnaryTest, Float) { CheckRealUnary<float>(401); }
TEST(MathCwiseUnaryTest, Double) { CheckRealUnary<double>(402); }

template <typename T>
void CheckIntUnary(uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Dims& d : UnaryShapes()) {
    const std::vector<T> any = Uniform<T>(NumElements(d), &rng, -1000, 1000);
    using L = int64_t;
    CheckUnary<T>("Neg", any, d, [](T v) { return -L(v); }, 0);
    CheckUnary<T>("Abs", any, d, [](T v) { return v < 0 ? -L(v) : L(v); }, 0);
    CheckUnary<T>("Sign", any, d, [](T v) { return L(v > 0) - L(v < 0); }, 0);
    CheckUnary<T>("Square", any, d, [](T v) { return L(v) * L(v); }, 0);
    CheckUnary<T>("Round", any, d, [](T v) { return v; }, 0);
  }
  // The extremes wrap instead of overflowing (no UB).
  const T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
  CheckUnary<T>("Neg", {mn, mx, 0}, {3}, [](T v) { return v == std::numeric_limits<T>::min() ? v : static_cast<T>(-v); }, 0);
  CheckUnary<T>("Abs", {mn, mx, -mx}, {3}, [](T v) { return v == std::numeric_limits<T>::min() ? v : static_cast<T>(v < 0 ? -v : v); }, 0);
  CheckUnary<T>("Sign", {mn, mx, 0}, {3}, [](T v) { return T(v > 0) - T(v < 0); }, 0);
}

TEST(MathCwiseUnaryTest, Int32) { CheckIntUnary<int32_t>(403); }
TEST(MathCwiseUnaryTest, Int64) { CheckIntUnary<int64_t>(404); }

TEST(MathCwiseUnaryTest, OneThreadSession) {
  std::mt19937 rng(405);
  const std::vector<float> v = Uniform<float>(100003, &rng, -5, 5);
  CheckUnary<float>("Tanh", v, {100003}, [](float x) { return std::tanh(double(x)); }, 4e-6, 1);
  CheckUnary<float>("Abs", v, {100003}, [](float x) { return std::fabs(double(x)); }, 0, 1);
}

TEST(MathCwiseUnaryTest, RoundHalfToEven) {
  const std::vector<float> x = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, 2.4f, -2.6f, 1e7f + 1};
  Tensor z = RunOne(UnaryGraph("Round", "DT_FLOAT"), {{"x:0", MakeTensor<float>(GR_FLOAT, {10}, x)}},
                    "z:0");
  ExpectNear<float>(z, {-2, -2, -0.f, 0, 2, 2, 4, 2, -3, 1e7f + 1}, 0);
  Tensor zd = RunOne(UnaryGraph("Round", "DT_DOUBLE"),
                     {{"x:0", MakeTensor<double>(GR_DOUBLE, {4}, {0.5, 1.5, -4.5, 4.50001})}}, "z:0");
  ExpectNear<double>(zd, {0, 2, -4, 5}, 0);
}

TEST(MathCwiseUnaryTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto run = [&](const std::string& op, const std::vector<float>& x) {
    return RunOne(UnaryGraph(op, "DT_FLOAT"),
                  {{"x:0", MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(x.size())}, x)}},
                  "z:0");
  };
  ExpectNear<float>(run("Sqrt", {-1, 0, inf}), {nan, 0, inf}, 0);
  ExpectNear<float>(run("Rsqrt", {-1, 0, inf, 4}), {nan, inf, 0, 0.5f}, 1e-6);
  ExpectNear<float>(run("Log", {-1, 0, inf, 1}), {nan, -inf, inf, 0}, 0);
  ExpectNear<float>(run("Log1p", {-2, -1, 0}), {nan, -inf, 0}, 0);
  ExpectNear<float>(run("Exp", {-inf, inf, 0, 200}), {0, inf, 1, inf}, 0);
  ExpectNear<float>(run("Reciprocal", {0, -0.f, inf}), {inf, -inf, 0}, 0);
  ExpectNear<float>(run("Sign", {nan, 0, -0.f, -inf, inf}), {nan, 0, 0, -1, 1}, 0);
  ExpectNear<float>(run("Abs", {-inf, nan}), {inf, nan}, 0);
  ExpectNear<float>(run("Tanh", {-inf, inf, 30, -30, nan}), {-1, 1, 1, -1, nan}, 1e-7);
  ExpectNear<float>(run("Erf", {-inf, inf, 10, nan}), {-1, 1, 1, nan}, 1e-7);
  ExpectNear<float>(run("Floor", {nan, -inf, -0.5f}), {nan, -inf, -1}, 0);
  ExpectNear<float>(run("Ceil", {nan, inf, -0.5f}), {nan, inf, -0.f}, 0);
}

// Many unary ops in a chain on [4]: in-place along the chain, fetch of an
// intermediate (held by the fetch) not clobbered.
TEST(MathCwiseUnaryTest, ChainAndFanOut) {
  std::string g = PlaceholderNode("x0", "DT_DOUBLE");
  const char* ops[] = {"Square", "Sqrt", "Exp", "Log", "Neg", "Abs"};
  for (int i = 0; i < 600; ++i) {
    g += NodeText("x" + std::to_string(i + 1), ops[i % 6], {"x" + std::to_string(i)},
                  TypeAttr("T", "DT_DOUBLE"));
  }
  const std::vector<double> x0 = {1.25, -2, 0.5, 3};
  std::vector<Tensor> out = RunOps(g, {{"x0:0", MakeTensor<double>(GR_DOUBLE, {4}, x0)}},
                                   {"x600:0", "x3:0"});
  ASSERT_EQ(out.size(), 2u);
  ExpectNear<double>(out[0], {1.25, 2, 0.5, 3}, 1e-9);
  ExpectNear<double>(out[1], {std::exp(1.25), std::exp(2.0), std::exp(0.5), std::exp(3.0)}, 1e-12);
}

// =================================================================== AddN

std::string AddNGraph(int n, const std::string& dt, const std::string& name = "s") {
  std::string g;
  std::vector<std::string> inputs;
  for (int i = 0; i < n; ++i) {
    g += PlaceholderNode("in" + std::to_string(i), dt);
    inputs.push_back("in" + std::to_string(i));
  }
  return g + NodeText(name, "AddN", inputs,
                      TypeAttr("T", dt) + "attr { key: \"N\" value { i: " + std::to_string(n) +
                          " } } ");
}

template <typename T>
void CheckAddN(uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Dims& d : {Dims{17, 33}, Dims{}, Dims{0, 3}, Dims{100003}}) {
    for (int n : {1, 2, 3, 4, 5, 6, 7, 9, 20}) {
      for (int threads : {1, 2}) {
        if (threads == 1 && NumElements(d) < 1000) continue;
        SCOPED_TRACE(std::string(Ty<T>::name) + " " + DimsText(d) + " N=" + std::to_string(n) +
                     " threads=" + std::to_string(threads));
        Feeds feeds;
        std::vector<long double> sum(static_cast<size_t>(NumElements(d)), 0);
        std::vector<long double> mag(sum.size(), 0);
        for (int i = 0; i < n; ++i) {
          const std::vector<T> v = Uniform<T>(NumElements(d), &rng, -100, 100);
          for (size_t k = 0; k < v.size(); ++k) {
            sum[k] += v[k];
            mag[k] += std::fabs(static_cast<long double>(v[k]));
          }
          feeds.push_back({"in" + std::to_string(i) + ":0", MakeTensor<T>(Ty<T>::value, d, v)});
        }
        Tensor z = RunOne(AddNGraph(n, Ty<T>::name), feeds, "s:0", threads);
        EXPECT_EQ(DimsOf(z), d);
        ASSERT_EQ(z.NumElements(), NumElements(d));
        // Float sums: error bounded by n roundings of partial sums <= mag.
        const double eps = std::is_same_v<T, float> ? 1.2e-7 : std::is_same_v<T, double> ? 2.3e-16 : 0;
        for (size_t k = 0; k < sum.size(); ++k) {
          ASSERT_NEAR(static_cast<double>(z.data<T>()[k]), static_cast<double>(sum[k]),
                      eps * n * static_cast<double>(mag[k]))
              << "at flat index " << k;
        }
      }
    }
  }
}

TEST(MathCwiseAddNTest, Float) { CheckAddN<float>(501); }
TEST(MathCwiseAddNTest, Double) { CheckAddN<double>(502); }
TEST(MathCwiseAddNTest, Int32) { CheckAddN<int32_t>(503); }
TEST(MathCwiseAddNTest, Int64) { CheckAddN<int64_t>(504); }

// Inputs that are intermediates (in-place candidates), one of them also
// fetched and one used twice: the sum is right and nothing is clobbered.
TEST(MathCwiseAddNTest, InPlaceCandidatesAndRepeatedInput) {
  const std::string g =
      PlaceholderNode("x", "DT_FLOAT") +
      NodeText("a", "Neg", {"x"}, TypeAttr("T", "DT_FLOAT")) +
      NodeText("b", "Square", {"x"}, TypeAttr("T", "DT_FLOAT")) +
      NodeText("c", "Abs", {"x"}, TypeAttr("T", "DT_FLOAT")) +
      NodeText("s", "AddN", {"a", "b", "c", "a"},
               TypeAttr("T", "DT_FLOAT") + "attr { key: \"N\" value { i: 4 } } ") +
      NodeText("t", "AddN", {"b", "c"}, TypeAttr("T", "DT_FLOAT") + "attr { key: \"N\" value { i: 2 } } ");
  const std::vector<float> x = {1, -2, 3, -4.5f};
  for (int threads : {1, 2}) {
    std::vector<Tensor> out =
        RunOps(g, {{"x:0", MakeTensor<float>(GR_FLOAT, {4}, x)}}, {"s:0", "t:0", "b:0"}, threads);
    ASSERT_EQ(out.size(), 3u);
    std::vector<float> s, t, b;
    for (float v : x) {
      s.push_back(-v + v * v + std::fabs(v) - v);
      t.push_back(v * v + std::fabs(v));
      b.push_back(v * v);
    }
    ExpectNear<float>(out[0], s, 1e-6);
    ExpectNear<float>(out[1], t, 1e-6);
    ExpectNear<float>(out[2], b, 0);
  }
}

TEST(MathCwiseAddNTest, ShapeMismatchFails) {
  const Feeds bad = {{"in0:0", Tensor(GR_FLOAT, TensorShape({2, 3}))},
                     {"in1:0", Tensor(GR_FLOAT, TensorShape({2, 3}))},
                     {"in2:0", Tensor(GR_FLOAT, TensorShape({3, 2}))}};
  EXPECT_ERROR(TryRun(AddNGraph(3, "DT_FLOAT", "my_sum"), bad, {"my_sum:0"}),
               Code::kInvalidArgument, "must have the same size and shape", "Input 0: [2,3]",
               "input 2: [3,2]", "my_sum");
  const Feeds bad_rank = {{"in0:0", Tensor(GR_FLOAT, TensorShape({6}))},
                          {"in1:0", Tensor(GR_FLOAT, TensorShape({1, 6}))}};
  EXPECT_ERROR(TryRun(AddNGraph(2, "DT_FLOAT", "my_sum"), bad_rank, {"my_sum:0"}),
               Code::kInvalidArgument, "must have the same size and shape");
  // Constants: caught at load by the shape function.
  const std::string g = ConstFloat("a", {2}, {1, 2}) + ConstFloat("b", {3}, {1, 2, 3}) +
                        NodeText("bad_sum", "AddN", {"a", "b"},
                                 TypeAttr("T", "DT_FLOAT") + "attr { key: \"N\" value { i: 2 } } ");
  EXPECT_ERROR(TryRun(g, {}, {"bad_sum:0"}), Code::kInvalidArgument, "From merging shape 0",
               "bad_sum");
}

}  // namespace
}  // namespace graphrt
