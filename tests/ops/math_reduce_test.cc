// Reductions (Sum, Mean, Prod, Max, Min, All, Any), ArgMax/ArgMin and
// Cumsum on the CPU, through real sessions.
//
// Expected values come from naive references in this file: plain loops over
// every input element, multi-indices by division, double (or int64)
// accumulation. Inputs are random with fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <set>
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

// ------------------------------------------------------------------ helpers

// op_test_util's dtype map, plus bool data held as one byte per element.
template <typename T>
struct DtOf : Dt<T> {};
template <>
struct DtOf<uint8_t> {  // bool data, one byte per element
  static constexpr DataType value = GR_BOOL;
  static constexpr const char* name = "DT_BOOL";
};

std::string BoolAttr(const std::string& key, bool v) {
  return "attr { key: \"" + key + "\" value { b: " + (v ? "true" : "false") + " } } ";
}

std::string IndexConst(const std::string& name, const std::vector<int64_t>& v, bool int64,
                       bool scalar = false) {
  std::vector<std::string> s;
  for (int64_t x : v) s.push_back(std::to_string(x));
  const Dims dims = scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())};
  return ConstNode(name, int64 ? "DT_INT64" : "DT_INT32", dims, int64 ? "int64_val" : "int_val", s);
}

Tensor IndexTensor(const std::vector<int64_t>& v, bool int64, bool scalar = false) {
  const Dims dims = scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())};
  if (int64) return MakeTensor<int64_t>(GR_INT64, dims, v);
  return MakeTensor<int32_t>(GR_INT32, dims, std::vector<int32_t>(v.begin(), v.end()));
}

// Multi-index of flat index i in dims.
Dims Unflatten(int64_t i, const Dims& dims) {
  Dims idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}

// A Placeholder whose shape attr lets shape functions see the rank.
std::string ShapedPlaceholder(const std::string& name, const std::string& dt, const Dims& dims) {
  return NodeText(name, "Placeholder", {},
                  TypeAttr("dtype", dt) + "attr { key: \"shape\" value { shape " + ShapeProto(dims) +
                      " } } ");
}

// Replaces the first node (the unshaped Placeholder "x") of a graph text.
std::string WithShapedX(const std::string& g, const std::string& dt, const Dims& dims) {
  return ShapedPlaceholder("x", dt, dims) + g.substr(g.find('\n') + 1);
}

std::vector<Tensor> RunWith(const std::string& g, const Feeds& feeds,
                            const std::vector<std::string>& fetches, int threads) {
  return RunOps(g, feeds, fetches, threads);
}

// =============================================================== reductions

enum class Red { kSum, kMean, kProd, kMax, kMin, kAll, kAny };

const char* RedName(Red r) {
  switch (r) {
    case Red::kSum: return "Sum";
    case Red::kMean: return "Mean";
    case Red::kProd: return "Prod";
    case Red::kMax: return "Max";
    case Red::kMin: return "Min";
    case Red::kAll: return "All";
    case Red::kAny: return "Any";
  }
  return "";
}

// The reference: out dims and, per output, the value and a magnitude (sum
// of |x| over the reduced elements) for the float tolerance.
template <typename T>
struct RefResult {
  Dims dims;
  std::vector<T> values;
  std::vector<double> magnitude;
};

template <typename T>
RefResult<T> RefReduce(Red op, const std::vector<T>& x, const Dims& xd,
                       const std::set<int64_t>& axes, bool keep_dims) {
  RefResult<T> r;
  Dims kept_dims;  // output dims without the kept 1s
  for (size_t d = 0; d < xd.size(); ++d) {
    if (!axes.count(static_cast<int64_t>(d))) {
      r.dims.push_back(xd[d]);
      kept_dims.push_back(xd[d]);
    } else if (keep_dims) {
      r.dims.push_back(1);
    }
  }
  const int64_t n_out = NumElements(kept_dims);
  std::vector<double> acc_d(static_cast<size_t>(n_out));
  std::vector<int64_t> acc_i(static_cast<size_t>(n_out));
  std::vector<bool> nan(static_cast<size_t>(n_out), false);
  std::vector<int64_t> count(static_cast<size_t>(n_out), 0);
  r.magnitude.assign(static_cast<size_t>(n_out), 0.0);
  for (int64_t o = 0; o < n_out; ++o) {
    double d0 = 0;
    int64_t i0 = 0;
    switch (op) {
      case Red::kSum: case Red::kMean: case Red::kAny: d0 = 0; i0 = 0; break;
      case Red::kProd: case Red::kAll: d0 = 1; i0 = 1; break;
      case Red::kMax:
        d0 = -std::numeric_limits<double>::infinity();
        i0 = std::numeric_limits<int64_t>::min();
        break;
      case Red::kMin:
        d0 = std::numeric_limits<double>::infinity();
        i0 = std::numeric_limits<int64_t>::max();
        break;
    }
    acc_d[static_cast<size_t>(o)] = d0;
    acc_i[static_cast<size_t>(o)] = i0;
  }
  const int64_t n_in = NumElements(xd);
  for (int64_t i = 0; i < n_in; ++i) {
    const Dims idx = Unflatten(i, xd);
    int64_t o = 0;
    for (size_t d = 0; d < xd.size(); ++d) {
      if (!axes.count(static_cast<int64_t>(d))) o = o * xd[d] + idx[d];
    }
    const size_t so = static_cast<size_t>(o);
    const T v = x[static_cast<size_t>(i)];
    ++count[so];
    r.magnitude[so] += std::fabs(static_cast<double>(v));
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(static_cast<double>(v))) nan[so] = true;
    }
    const double dv = static_cast<double>(v);
    // Floats accumulate in acc_d only: NaN or inf cast to int64 is UB
    // (clang's -fsanitize=undefined checks it).
    int64_t iv = 0;
    if constexpr (!std::is_floating_point_v<T>) iv = static_cast<int64_t>(v);
    switch (op) {
      case Red::kSum: case Red::kMean: acc_d[so] += dv; acc_i[so] += iv; break;
      case Red::kProd: acc_d[so] *= dv; acc_i[so] *= iv; break;
      case Red::kMax: case Red::kAny:
        acc_d[so] = std::max(acc_d[so], dv);
        acc_i[so] = std::max(acc_i[so], iv);
        break;
      case Red::kMin: case Red::kAll:
        acc_d[so] = std::min(acc_d[so], dv);
        acc_i[so] = std::min(acc_i[so], iv);
        break;
    }
  }
  r.values.resize(static_cast<size_t>(n_out));
  for (size_t o = 0; o < static_cast<size_t>(n_out); ++o) {
    T v;
    if constexpr (std::is_floating_point_v<T>) {
      double d = acc_d[o];
      if (op == Red::kMean) d = count[o] ? d / static_cast<double>(count[o]) : std::nan("");
      if (nan[o] && (op == Red::kMax || op == Red::kMin)) d = std::nan("");
      v = static_cast<T>(d);
    } else {
      int64_t w = acc_i[o];
      if (op == Red::kMean) w = count[o] ? w / count[o] : 0;  // truncating, as C++ and TF
      if (count[o] == 0 && op == Red::kMax) w = std::numeric_limits<T>::lowest();
      if (count[o] == 0 && op == Red::kMin) w = std::numeric_limits<T>::max();
      v = static_cast<T>(w);
    }
    r.values[o] = v;
    // Float tolerance scale: sums err with the sum of |x|, products with
    // their size times the count, Max/Min are exact.
    const double cnt = static_cast<double>(std::max<int64_t>(1, count[o]));
    if (op == Red::kMean) r.magnitude[o] /= cnt;
    if (op == Red::kProd) r.magnitude[o] = std::fabs(static_cast<double>(v)) * cnt;
    if (op == Red::kMax || op == Red::kMin) r.magnitude[o] = 0;
  }
  return r;
}

template <typename T>
void ExpectReduced(const Tensor& got, const RefResult<T>& want) {
  ASSERT_EQ(got.dtype(), DtOf<T>::value);
  ASSERT_EQ(DimsOf(got), want.dims);
  for (size_t i = 0; i < want.values.size(); ++i) {
    const T g = got.data<T>()[i];
    const T w = want.values[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(w)) {
        ASSERT_TRUE(std::isnan(g)) << "at " << i << ": got " << g << ", want NaN";
        continue;
      }
      if (std::isinf(w)) {
        ASSERT_EQ(g, w) << "at " << i;
        continue;
      }
      const double eps = std::is_same_v<T, float> ? 2e-6 : 1e-13;
      const double tol = eps * want.magnitude[i];
      if (tol == 0) {
        ASSERT_EQ(g, w) << "at flat index " << i;
      } else {
        ASSERT_NEAR(g, w, tol) << "at flat index " << i;
      }
    } else {
      ASSERT_EQ(g, w) << "at flat index " << i;
    }
  }
}

std::string ReduceGraph(Red op, const std::string& dt, const std::vector<int64_t>& axes,
                        bool keep_dims, bool tidx64, bool axes_fed, bool scalar_axis = false) {
  std::string g = PlaceholderNode("x", dt);
  g += axes_fed ? PlaceholderNode("axes", tidx64 ? "DT_INT64" : "DT_INT32")
                : IndexConst("axes", axes, tidx64, scalar_axis);
  std::string attrs = TypeAttr("Tidx", tidx64 ? "DT_INT64" : "DT_INT32") +
                      BoolAttr("keep_dims", keep_dims);
  if (op != Red::kAll && op != Red::kAny) attrs += TypeAttr("T", dt);
  return g + NodeText("r", RedName(op), {"x", "axes"}, attrs);
}

template <typename T>
std::vector<T> ValuesFor(Red op, int64_t n, std::mt19937* rng) {
  if (op == Red::kProd) {  // products that neither overflow nor vanish
    std::vector<T> v(static_cast<size_t>(n));
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> mag(0.95, 1.05);
      std::bernoulli_distribution neg(0.5);
      for (auto& x : v) x = static_cast<T>(neg(*rng) ? -mag(*rng) : mag(*rng));
    } else {
      std::uniform_int_distribution<int> pick(0, 99);
      for (auto& x : v) {
        const int p = pick(*rng);
        x = static_cast<T>(p < 45 ? -1 : (p < 98 || n > 40 ? 1 : 2));
      }
    }
    return v;
  }
  return RandomValues<T>(n, rng);
}

// Runs op over x with the given axes and checks against the reference;
// axes either constant (shape function sees them) or fed (it does not).
template <typename T>
void CheckReduce(Red op, const Dims& xd, const std::vector<int64_t>& axes, std::mt19937* rng,
                 int threads = 2) {
  const int rank = static_cast<int>(xd.size());
  std::set<int64_t> norm;
  for (int64_t a : axes) norm.insert(a < 0 ? a + rank : a);
  const std::vector<T> x = ValuesFor<T>(op, NumElements(xd), rng);
  const Tensor xt = MakeTensor<T>(DtOf<T>::value, xd, x);
  for (bool keep : {false, true}) {
    const RefResult<T> want = RefReduce<T>(op, x, xd, norm, keep);
    for (int variant = 0; variant < 3; ++variant) {
      const bool tidx64 = variant == 1, fed = variant == 2;
      SCOPED_TRACE(std::string(RedName(op)) + " " + TensorShape(xd).DebugString() + " axes " +
                   ::testing::PrintToString(axes) + (keep ? " keep_dims" : "") +
                   (tidx64 ? " Tidx=int64" : "") + (fed ? " fed axes" : "") + " threads " +
                   std::to_string(threads));
      Feeds feeds = {{"x:0", xt}};
      if (fed) feeds.push_back({"axes:0", IndexTensor(axes, false)});
      const std::vector<Tensor> out =
          RunWith(ReduceGraph(op, DtOf<T>::name, axes, keep, tidx64, fed), feeds, {"r:0"}, threads);
      ASSERT_EQ(out.size(), 1u);
      ExpectReduced<T>(out[0], want);
    }
  }
}

struct Case {
  Dims dims;
  std::vector<int64_t> axes;
};

// Small and odd shapes: every simplification (size-1 dims, leading 1s,
// alternating runs), negative axes, scalars, empty axes lists.
const std::vector<Case>& SmallCases() {
  static const std::vector<Case> cases = {
      {{}, {}},
      {{5}, {}},
      {{5}, {0}},
      {{7}, {-1}},
      {{1}, {0}},
      {{3, 4}, {0}},
      {{3, 4}, {1}},
      {{3, 4}, {0, 1}},
      {{3, 4}, {-1, 0}},
      {{2, 3, 5}, {1}},
      {{2, 3, 5}, {0, 2}},
      {{2, 3, 5}, {-3}},
      {{2, 3, 5}, {2, 1}},
      {{1, 5, 1, 3}, {1}},
      {{1, 5, 1, 3}, {2}},
      {{1, 5, 1, 3}, {0, 3}},
      {{2, 1, 3, 1, 5}, {1, 4}},
      {{3, 1, 1}, {1, 2}},
      {{2, 3, 4, 5}, {0, 2}},
      {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {0, 1, 3}},
      {{2, 3, 2, 3, 2}, {0, 2, 4}},
      {{4, 70}, {0}},    // column reduce, wide accumulator with rows of 70
      {{37, 3}, {0}},    // column reduce, short rows folded
      {{9, 37, 5}, {1}},
      {{6, 3, 2, 4}, {0, 1}},
  };
  return cases;
}

// Big enough for the pool (>= 32K elements): many outputs, few outputs
// (pieces of one reduction), full reduces, column reduces.
const std::vector<Case>& LargeCases() {
  static const std::vector<Case> cases = {
      {{300, 257}, {1}},     // many rows
      {{300, 257}, {0}},     // many columns
      {{300, 257}, {0, 1}},  // full reduce, split in pieces
      {{3, 40001}, {1}},     // few rows, split in pieces
      {{40001, 3}, {0}},     // few columns, split in pieces
      {{20011, 5}, {0}},
      {{64, 33, 40}, {0, 2}},
      {{64, 33, 40}, {1}},
      {{2, 9000, 3}, {1}},
      {{5, 7, 11, 101}, {0, 2}},
  };
  return cases;
}

template <typename T>
void CheckAllCases(Red op, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Case& c : SmallCases()) CheckReduce<T>(op, c.dims, c.axes, &rng);
  for (const Case& c : LargeCases()) CheckReduce<T>(op, c.dims, c.axes, &rng);
  // One thread: the same big cases inline.
  for (size_t i = 0; i < LargeCases().size(); i += 3)
    CheckReduce<T>(op, LargeCases()[i].dims, LargeCases()[i].axes, &rng, /*threads=*/1);
}

#define REDUCTION_TESTS(OP)                                                      \
  TEST(ReductionTest, OP##Float) { CheckAllCases<float>(Red::k##OP, 100); }      \
  TEST(ReductionTest, OP##Double) { CheckAllCases<double>(Red::k##OP, 101); }    \
  TEST(ReductionTest, OP##Int32) { CheckAllCases<int32_t>(Red::k##OP, 102); }    \
  TEST(ReductionTest, OP##Int64) { CheckAllCases<int64_t>(Red::k##OP, 103); }

REDUCTION_TESTS(Sum)
REDUCTION_TESTS(Mean)
REDUCTION_TESTS(Prod)
REDUCTION_TESTS(Max)
REDUCTION_TESTS(Min)

// All / Any on bools (bytes 0/1): mostly-true and mostly-false data so both
// answers occur.
void CheckLogical(Red op, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Case> cases = SmallCases();
  cases.insert(cases.end(), LargeCases().begin(), LargeCases().end());
  for (const Case& c : cases) {
    for (double p_true : {0.02, 0.5, 0.98, 1.0, 0.0}) {
      std::bernoulli_distribution bit(p_true);
      std::vector<uint8_t> x(static_cast<size_t>(NumElements(c.dims)));
      for (auto& v : x) v = bit(rng) ? 1 : 0;
      const int rank = static_cast<int>(c.dims.size());
      std::set<int64_t> norm;
      for (int64_t a : c.axes) norm.insert(a < 0 ? a + rank : a);
      const bool keep = p_true > 0.4;
      const RefResult<uint8_t> want = RefReduce<uint8_t>(op, x, c.dims, norm, keep);
      SCOPED_TRACE(std::string(RedName(op)) + " " + TensorShape(c.dims).DebugString() + " p " +
                   std::to_string(p_true));
      const std::vector<Tensor> out =
          RunOps(ReduceGraph(op, "DT_BOOL", c.axes, keep, false, false),
                 {{"x:0", MakeTensor<uint8_t>(GR_BOOL, c.dims, x)}}, {"r:0"});
      ASSERT_EQ(out.size(), 1u);
      ExpectReduced<uint8_t>(out[0], want);
    }
  }
}

TEST(ReductionTest, All) { CheckLogical(Red::kAll, 200); }
TEST(ReductionTest, Any) { CheckLogical(Red::kAny, 201); }

// Reductions over no elements give each op's identity (TensorFlow: Sum 0,
// Prod 1, Max -inf / lowest, Min +inf / max, Mean NaN / 0, All true, Any
// false); an empty output stays empty.
template <typename T>
void CheckEmpty(Red op, T want) {
  SCOPED_TRACE(std::string(RedName(op)) + " " + DtOf<T>::name);
  const Tensor x(DtOf<T>::value, TensorShape({0, 3}));
  std::vector<Tensor> out =
      RunOps(ReduceGraph(op, DtOf<T>::name, {0}, false, false, false), {{"x:0", x}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), (Dims{3}));
  for (int i = 0; i < 3; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[0].data<T>()[i]));
        continue;
      }
    }
    EXPECT_EQ(out[0].data<T>()[i], want);
  }
  // Reducing the non-empty axis leaves an empty output.
  out = RunOps(ReduceGraph(op, DtOf<T>::name, {1}, true, false, false), {{"x:0", x}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 1}));
}

TEST(ReductionTest, EmptyReductionsGiveIdentities) {
  const double inf = std::numeric_limits<double>::infinity();
  CheckEmpty<float>(Red::kSum, 0.0f);
  CheckEmpty<float>(Red::kProd, 1.0f);
  CheckEmpty<float>(Red::kMax, static_cast<float>(-inf));
  CheckEmpty<float>(Red::kMin, static_cast<float>(inf));
  CheckEmpty<float>(Red::kMean, std::nanf(""));
  CheckEmpty<double>(Red::kMean, std::nan(""));
  CheckEmpty<double>(Red::kMax, -inf);
  CheckEmpty<int32_t>(Red::kSum, 0);
  CheckEmpty<int32_t>(Red::kProd, 1);
  CheckEmpty<int32_t>(Red::kMax, std::numeric_limits<int32_t>::lowest());
  CheckEmpty<int32_t>(Red::kMin, std::numeric_limits<int32_t>::max());
  CheckEmpty<int32_t>(Red::kMean, 0);
  CheckEmpty<int64_t>(Red::kMean, 0);
  CheckEmpty<int64_t>(Red::kMax, std::numeric_limits<int64_t>::lowest());
  CheckEmpty<uint8_t>(Red::kAll, 1);
  CheckEmpty<uint8_t>(Red::kAny, 0);
}

// Integer Mean divides like C++ (toward zero), and int32 sums in int64.
TEST(ReductionTest, IntegerMeanTruncatesAndDoesNotOverflow) {
  std::vector<Tensor> out = RunOps(ReduceGraph(Red::kMean, "DT_INT32", {1}, false, false, false),
                                   {{"x:0", MakeTensor<int32_t>(GR_INT32, {3, 2},
                                                                {-3, -4, 3, 4, 2000000000,
                                                                 2000000000})}},
                                   {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<int32_t>(out[0], {-3, 3, 2000000000});
}

// Max and Min propagate NaN (TensorFlow's PropagateNaN reducers), on the
// vectorized row path, the column path and the split path.
TEST(ReductionTest, MaxMinPropagateNaN) {
  const float nan = std::nanf("");
  for (Red op : {Red::kMax, Red::kMin}) {
    std::vector<Tensor> out =
        RunOps(ReduceGraph(op, "DT_FLOAT", {1}, false, false, false),
               {{"x:0", MakeTensor<float>(GR_FLOAT, {2, 3}, {1, nan, 3, 4, 5, 6})}}, {"r:0"});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(std::isnan(out[0].data<float>()[0]));
    EXPECT_EQ(out[0].data<float>()[1], op == Red::kMax ? 6.0f : 4.0f);
    for (const Case& c : {Case{{3, 40001}, {1}}, Case{{40001, 3}, {0}}, Case{{300, 257}, {0, 1}},
                          Case{{300, 257}, {0}}}) {
      std::mt19937 rng(7);
      std::vector<float> x = RandomValues<float>(NumElements(c.dims), &rng);
      x[x.size() / 2 + 1] = nan;
      const std::set<int64_t> axes(c.axes.begin(), c.axes.end());
      const RefResult<float> want = RefReduce<float>(op, x, c.dims, axes, false);
      out = RunOps(ReduceGraph(op, "DT_FLOAT", c.axes, false, false, false),
                   {{"x:0", MakeTensor<float>(GR_FLOAT, c.dims, x)}}, {"r:0"});
      ASSERT_EQ(out.size(), 1u);
      ExpectReduced<float>(out[0], want);
    }
  }
}

// The scalar form of reduction_indices works like a 1-element vector.
TEST(ReductionTest, ScalarAxis) {
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + IndexConst("axes", {-1}, false, true) +
                        NodeText("r", "Sum", {"x", "axes"},
                                 TypeAttr("T", "DT_FLOAT") + TypeAttr("Tidx", "DT_INT32"));
  std::vector<Tensor> out =
      RunOps(g, {{"x:0", MakeTensor<float>(GR_FLOAT, {2, 2}, {1, 2, 3, 4})}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2}));
  ExpectValuesEq<float>(out[0], {3, 7});
}

// A reduction over nothing hands the input through unchanged (reshaped
// when keep_dims drops nothing).
TEST(ReductionTest, NoAxesIsIdentity) {
  std::vector<Tensor> out =
      RunOps(ReduceGraph(Red::kMean, "DT_INT32", {}, false, false, false),
             {{"x:0", MakeTensor<int32_t>(GR_INT32, {2, 2}, {1, -2, 3, 4})}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  ExpectValuesEq<int32_t>(out[0], {1, -2, 3, 4});
}

TEST(ReductionTest, ErrorsNameTheProblemAndSessionSurvives) {
  const Tensor x = MakeTensor<float>(GR_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6});
  // Constant axes: caught by the shape function at graph load.
  EXPECT_ERROR(TryRun(WithShapedX(ReduceGraph(Red::kSum, "DT_FLOAT", {2}, false, false, false),
                                  "DT_FLOAT", {2, 3}),
                      {{"x:0", x}}, {"r:0"}),
               Code::kInvalidArgument, "Invalid reduction dimension 2 for input with 2 dimensions");
  EXPECT_ERROR(TryRun(WithShapedX(ReduceGraph(Red::kMax, "DT_FLOAT", {-3}, false, true, false),
                                  "DT_FLOAT", {2, 3}),
                      {{"x:0", x}}, {"r:0"}),
               Code::kInvalidArgument, "Invalid reduction dimension -3 for input with 2 dimensions");
  // Without a known rank the kernel finds the same problem.
  EXPECT_ERROR(TryRun(ReduceGraph(Red::kSum, "DT_FLOAT", {2}, false, false, false), {{"x:0", x}},
                      {"r:0"}),
               Code::kInvalidArgument, "Invalid reduction dimension (2 for input with 2 dimension(s)");
  // Fed axes: caught by the kernel, on a session that keeps working.
  std::unique_ptr<Session> s =
      testing::CreateSession(testing::ParseGraph(ReduceGraph(Red::kSum, "DT_FLOAT", {}, false,
                                                             false, true)),
                             2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"x:0", x}, {"axes:0", IndexTensor({2}, false)}}, {"r:0"}, {}, &out),
               Code::kInvalidArgument, "Invalid reduction dimension (2 for input with 2 dimension(s)",
               "r");
  EXPECT_ERROR(s->Run({{"x:0", x}, {"axes:0", IndexTensor({1, -1}, false)}}, {"r:0"}, {}, &out),
               Code::kInvalidArgument,
               "Invalid reduction arguments: Axes contains duplicate dimension: 1");
  ASSERT_TRUE(s->Run({{"x:0", x}, {"axes:0", IndexTensor({1}, false)}}, {"r:0"}, {}, &out).ok());
  ExpectValuesEq<float>(out[0], {6, 15});
  // Duplicates in constant axes pass the shape function and fail in the kernel.
  EXPECT_ERROR(TryRun(ReduceGraph(Red::kProd, "DT_FLOAT", {0, 0}, false, false, false),
                      {{"x:0", x}}, {"r:0"}),
               Code::kInvalidArgument, "Axes contains duplicate dimension: 0");
  // reduction_indices of rank 2.
  const std::string g2 =
      PlaceholderNode("x", "DT_FLOAT") +
      ConstNode("axes", "DT_INT32", {1, 1}, "int_val", {"0"}) +
      NodeText("r", "Sum", {"x", "axes"}, TypeAttr("T", "DT_FLOAT") + TypeAttr("Tidx", "DT_INT32"));
  EXPECT_ERROR(TryRun(g2, {{"x:0", x}}, {"r:0"}), Code::kInvalidArgument,
               "Shape must be at most rank 1 but is rank 2");
}

// ============================================================ ArgMax/ArgMin

// Reference: first index of the largest (smallest) non-NaN value, 0 when
// every value is NaN.
template <typename T>
std::vector<int64_t> RefArg(bool is_max, const std::vector<T>& x, const Dims& xd, int axis,
                            Dims* out_dims) {
  out_dims->clear();
  for (size_t d = 0; d < xd.size(); ++d)
    if (static_cast<int>(d) != axis) out_dims->push_back(xd[d]);
  const int64_t n_out = NumElements(*out_dims);
  std::vector<int64_t> best(static_cast<size_t>(n_out), -1);
  const int64_t n_in = NumElements(xd);
  for (int64_t i = 0; i < n_in; ++i) {
    const Dims idx = Unflatten(i, xd);
    int64_t o = 0;
    for (size_t d = 0; d < xd.size(); ++d)
      if (static_cast<int>(d) != axis) o = o * xd[d] + idx[d];
    const T v = x[static_cast<size_t>(i)];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) continue;
    }
    int64_t& b = best[static_cast<size_t>(o)];
    if (b < 0) {
      b = idx[static_cast<size_t>(axis)];
      continue;
    }
    Dims bidx = idx;
    bidx[static_cast<size_t>(axis)] = b;
    int64_t bflat = 0;
    for (size_t d = 0; d < xd.size(); ++d) bflat = bflat * xd[d] + bidx[d];
    const T bv = x[static_cast<size_t>(bflat)];
    if (is_max ? v > bv : v < bv) b = idx[static_cast<size_t>(axis)];
  }
  for (auto& b : best) b = std::max<int64_t>(b, 0);
  return best;
}

std::string ArgGraph(bool is_max, const std::string& dt, const std::string& out_type, int64_t axis,
                     bool tidx64, bool fed) {
  std::string g = PlaceholderNode("x", dt);
  g += fed ? PlaceholderNode("dim", tidx64 ? "DT_INT64" : "DT_INT32")
           : IndexConst("dim", {axis}, tidx64, true);
  return g + NodeText("r", is_max ? "ArgMax" : "ArgMin", {"x", "dim"},
                      TypeAttr("T", dt) + TypeAttr("Tidx", tidx64 ? "DT_INT64" : "DT_INT32") +
                          TypeAttr("output_type", out_type));
}

template <typename T>
void CheckArg(const Dims& xd, int axis, std::mt19937* rng, int threads = 2) {
  const int rank = static_cast<int>(xd.size());
  std::vector<T> x(static_cast<size_t>(NumElements(xd)));
  if constexpr (std::is_same_v<T, uint8_t>) {
    std::bernoulli_distribution bit(0.3);
    for (auto& v : x) v = bit(*rng);
  } else {
    // Few distinct values: ties are common.
    std::uniform_int_distribution<int> pick(-6, 6);
    for (auto& v : x) v = static_cast<T>(pick(*rng));
  }
  const int norm = axis < 0 ? axis + rank : axis;
  for (bool is_max : {true, false}) {
    Dims want_dims;
    const std::vector<int64_t> want = RefArg<T>(is_max, x, xd, norm, &want_dims);
    for (int variant = 0; variant < 3; ++variant) {
      const bool out32 = variant == 1, fed = variant == 2, tidx64 = variant == 2;
      SCOPED_TRACE(std::string(is_max ? "ArgMax " : "ArgMin ") + DtOf<T>::name + " " +
                   TensorShape(xd).DebugString() + " axis " + std::to_string(axis) +
                   (out32 ? " int32 out" : "") + (fed ? " fed" : ""));
      Feeds feeds = {{"x:0", MakeTensor<T>(DtOf<T>::value, xd, x)}};
      if (fed) feeds.push_back({"dim:0", IndexTensor({axis}, true, true)});
      std::vector<Tensor> out =
          RunOps(ArgGraph(is_max, DtOf<T>::name, out32 ? "DT_INT32" : "DT_INT64", axis, tidx64, fed),
                 feeds, {"r:0"}, threads);
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(DimsOf(out[0]), want_dims);
      if (out32) {
        ASSERT_EQ(out[0].dtype(), GR_INT32);
        ExpectValuesEq<int32_t>(out[0], std::vector<int32_t>(want.begin(), want.end()));
      } else {
        ASSERT_EQ(out[0].dtype(), GR_INT64);
        ExpectValuesEq<int64_t>(out[0], want);
      }
    }
  }
}

template <typename T>
void CheckArgCases(uint32_t seed) {
  std::mt19937 rng(seed);
  CheckArg<T>({1}, 0, &rng);
  CheckArg<T>({7}, 0, &rng);
  CheckArg<T>({7}, -1, &rng);
  CheckArg<T>({3, 4}, 0, &rng);
  CheckArg<T>({3, 4}, 1, &rng);
  CheckArg<T>({3, 4}, -2, &rng);
  CheckArg<T>({2, 3, 5}, 1, &rng);
  CheckArg<T>({2, 1, 5}, 1, &rng);
  CheckArg<T>({2, 3, 5}, 2, &rng);
  CheckArg<T>({0, 3}, 1, &rng);      // empty output
  CheckArg<T>({300, 400}, 0, &rng);  // strided, split over the pool
  CheckArg<T>({300, 400}, 1, &rng);  // contiguous, split
  CheckArg<T>({3, 600, 37}, 1, &rng);
  CheckArg<T>({1300, 40}, 0, &rng, /*threads=*/1);
}

TEST(ArgMinMaxTest, Float) { CheckArgCases<float>(300); }
TEST(ArgMinMaxTest, Double) { CheckArgCases<double>(301); }
TEST(ArgMinMaxTest, Int32) { CheckArgCases<int32_t>(302); }
TEST(ArgMinMaxTest, Int64) { CheckArgCases<int64_t>(303); }
TEST(ArgMinMaxTest, Bool) { CheckArgCases<uint8_t>(304); }

// NaN never wins (TensorFlow's CPU ArgMax ignores it); all-NaN gives 0;
// ties give the first index; infinities compare as values.
TEST(ArgMinMaxTest, NaNTiesAndInfinities) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  auto run = [&](bool is_max, const std::vector<float>& v) {
    std::vector<Tensor> out =
        RunOps(ArgGraph(is_max, "DT_FLOAT", "DT_INT64", 0, false, false),
               {{"x:0", MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(v.size())}, v)}},
               {"r:0"});
    return out.empty() ? int64_t{-1} : out[0].scalar<int64_t>();
  };
  EXPECT_EQ(run(true, {4, 5.5f, nan}), 1);
  EXPECT_EQ(run(true, {nan, 1, 2}), 2);
  EXPECT_EQ(run(true, {nan, nan, nan}), 0);
  EXPECT_EQ(run(false, {nan, 3, -2, nan}), 2);
  EXPECT_EQ(run(true, {1, 7, 3, 7}), 1);
  EXPECT_EQ(run(false, {1, 0, 3, 0}), 1);
  EXPECT_EQ(run(true, {-inf, -inf, 2}), 2);
  EXPECT_EQ(run(false, {5, inf, -inf}), 2);
  // Strided path: NaN in a column.
  std::vector<Tensor> out = RunOps(
      ArgGraph(true, "DT_FLOAT", "DT_INT32", 0, false, false),
      {{"x:0", MakeTensor<float>(GR_FLOAT, {3, 2}, {nan, 1, 2, nan, 1, 0})}}, {"r:0"});
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<int32_t>(out[0], {1, 0});
}

TEST(ArgMinMaxTest, ErrorsNameTheProblem) {
  const Tensor x = MakeTensor<float>(GR_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6});
  // Constant dimension: the shape function.
  EXPECT_ERROR(TryRun(WithShapedX(ArgGraph(true, "DT_FLOAT", "DT_INT64", 2, false, false),
                                  "DT_FLOAT", {2, 3}),
                      {{"x:0", x}}, {"r:0"}),
               Code::kInvalidArgument, "Dimension (2) must be in the range [-2, 2)");
  // Fed dimension: the kernel; the session keeps working.
  std::unique_ptr<Session> s = testing::CreateSession(
      testing::ParseGraph(ArgGraph(false, "DT_FLOAT", "DT_INT64", 0, false, true)), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"x:0", x}, {"dim:0", IndexTensor({-3}, false, true)}}, {"r:0"}, {}, &out),
               Code::kInvalidArgument, "Expected dimension in the range [-2, 2), but got -3");
  EXPECT_ERROR(s->Run({{"x:0", x}, {"dim:0", IndexTensor({0}, false)}}, {"r:0"}, {}, &out),
               Code::kInvalidArgument, "dim must be a scalar, but received tensor of shape: [1]");
  EXPECT_ERROR(s->Run({{"x:0", Tensor(GR_FLOAT, TensorShape({0, 3}))},
                       {"dim:0", IndexTensor({0}, false, true)}},
                      {"r:0"}, {}, &out),
               Code::kInvalidArgument, "Reduction axis 0 is empty in shape [0,3]");
  EXPECT_ERROR(s->Run({{"x:0", Tensor::Scalar<float>(GR_FLOAT, 1.0f)},
                       {"dim:0", IndexTensor({0}, false, true)}},
                      {"r:0"}, {}, &out),
               Code::kInvalidArgument, "Expected dimension in the range [0, 0), but got 0");
  ASSERT_TRUE(s->Run({{"x:0", x}, {"dim:0", IndexTensor({1}, false, true)}}, {"r:0"}, {}, &out)
                  .ok());
  ExpectValuesEq<int64_t>(out[0], {0, 0});
}

// =========================================================== Cumsum, Cumprod

template <typename T>
std::vector<T> RefScan(const std::vector<T>& x, const Dims& xd, int axis, bool exclusive,
                       bool reverse, bool product) {
  // Each output recomputed alone from its slice along the axis (O(n * len),
  // no running state shared with its neighbours); elements of one slice are
  // `stride` apart. (No per-element allocation: under ASan that made the
  // cases over the pool take 25 s.)
  std::vector<T> out(x.size());
  const int64_t n = NumElements(xd);
  const int64_t len = xd[static_cast<size_t>(axis)];
  int64_t stride = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < xd.size(); ++d) stride *= xd[d];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t me = (i / stride) % len;
    const int64_t first = i - me * stride;
    double acc = product ? 1 : 0;
    for (int64_t j = 0; j < len; ++j) {
      const bool take = reverse ? (exclusive ? j > me : j >= me) : (exclusive ? j < me : j <= me);
      if (!take) continue;
      const double v = static_cast<double>(x[static_cast<size_t>(first + j * stride)]);
      acc = product ? acc * v : acc + v;
    }
    out[static_cast<size_t>(i)] = static_cast<T>(acc);
  }
  return out;
}

// x is fed through Neg(Neg(x)) when `in_place`: the Cumsum input is then a
// dying intermediate whose buffer the kernel may write into.
std::string CumsumGraph(const std::string& dt, int64_t axis, bool exclusive, bool reverse,
                        bool tidx64, bool in_place, bool fed_axis = false, const char* op = "Cumsum") {
  std::string g = PlaceholderNode("x", dt);
  std::string src = "x";
  if (in_place) {
    g += NodeText("n1", "Neg", {"x"}, TypeAttr("T", dt)) +
         NodeText("n2", "Neg", {"n1"}, TypeAttr("T", dt));
    src = "n2";
  }
  g += fed_axis ? PlaceholderNode("axis", tidx64 ? "DT_INT64" : "DT_INT32")
                : IndexConst("axis", {axis}, tidx64, true);
  return g + NodeText("r", op, {src, "axis"},
                      TypeAttr("T", dt) + TypeAttr("Tidx", tidx64 ? "DT_INT64" : "DT_INT32") +
                          BoolAttr("exclusive", exclusive) + BoolAttr("reverse", reverse));
}

template <typename T>
void CheckCumsum(const Dims& xd, int axis, std::mt19937* rng, int threads = 2, bool product = false) {
  const int rank = static_cast<int>(xd.size());
  std::vector<T> x = RandomValues<T>(NumElements(xd), rng);
  // Products of up to 700 factors stay finite and exact enough: factors near
  // 1 for floats, +-1 for integers.
  if (product) {
    for (T& v : x) {
      if constexpr (std::is_floating_point_v<T>) {
        v = T(1 + v / 500);
      } else {
        v = T(v % 2 == 0 ? 1 : -1);
      }
    }
  }
  const int norm = axis < 0 ? axis + rank : axis;
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      const std::vector<T> want = RefScan<T>(x, xd, norm, exclusive, reverse, product);
      for (bool in_place : {false, true}) {
        const bool tidx64 = in_place;
        SCOPED_TRACE(std::string(product ? "Cumprod " : "Cumsum ") + DtOf<T>::name + " " + TensorShape(xd).DebugString() +
                     " axis " + std::to_string(axis) + (exclusive ? " exclusive" : "") +
                     (reverse ? " reverse" : "") + (in_place ? " in place" : ""));
        std::vector<Tensor> out = RunOps(
            CumsumGraph(DtOf<T>::name, axis, exclusive, reverse, tidx64, in_place, false,
                        product ? "Cumprod" : "Cumsum"),
            {{"x:0", MakeTensor<T>(DtOf<T>::value, xd, x)}}, {"r:0"}, threads);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(DimsOf(out[0]), xd);
        const int64_t len = xd[static_cast<size_t>(norm)];
        ExpectValuesEq<T>(out[0], want, std::is_same_v<T, float> ? 2e-6 * (len + 1) : 1e-11);
      }
    }
  }
}

template <typename T>
void CheckCumsumCases(uint32_t seed, bool product = false) {
  std::mt19937 rng(seed);
  CheckCumsum<T>({1}, 0, &rng, 2, product);
  CheckCumsum<T>({9}, 0, &rng, 2, product);
  CheckCumsum<T>({9}, -1, &rng, 2, product);
  CheckCumsum<T>({0, 4}, 1, &rng, 2, product);
  CheckCumsum<T>({3, 4}, 0, &rng, 2, product);
  CheckCumsum<T>({3, 4}, 1, &rng, 2, product);
  CheckCumsum<T>({2, 3, 5}, 1, &rng, 2, product);
  CheckCumsum<T>({2, 3, 5}, -3, &rng, 2, product);
  CheckCumsum<T>({2, 3, 700}, 1, &rng, 2, product);  // inner split in chunks of columns
  if (product) return;  // the larger cases run the combiner paths Cumsum already covers
  CheckCumsum<T>({200, 300}, 0, &rng, 2, product);   // strided, over the pool
  CheckCumsum<T>({300, 200}, 1, &rng, 2, product);   // contiguous, over the pool
  CheckCumsum<T>({150, 300}, 0, &rng, /*threads=*/1, product);
}

TEST(CumsumTest, Float) { CheckCumsumCases<float>(400); }
TEST(CumsumTest, Double) { CheckCumsumCases<double>(401); }
TEST(CumsumTest, Int32) { CheckCumsumCases<int32_t>(402); }
TEST(CumsumTest, Int64) { CheckCumsumCases<int64_t>(403); }
TEST(CumprodTest, Float) { CheckCumsumCases<float>(404, /*product=*/true); }
TEST(CumprodTest, Double) { CheckCumsumCases<double>(405, true); }
TEST(CumprodTest, Int32) { CheckCumsumCases<int32_t>(406, true); }
TEST(CumprodTest, Int64) { CheckCumsumCases<int64_t>(407, true); }

// TensorFlow's documented examples: tf.math.cumprod([a, b, c]) = [a, ab, abc],
// exclusive [1, a, ab], reverse [abc, bc, c], both [bc, c, 1]; and integer
// products wrap as two's complement rather than overflow.
TEST(CumprodTest, DocumentedExamplesAndWrap) {
  const Tensor x = MakeTensor<int64_t>(GR_INT64, {3}, {2, 3, 5});
  const std::vector<std::vector<int64_t>> want = {{2, 6, 30}, {1, 2, 6}, {30, 15, 5}, {15, 5, 1}};
  for (bool reverse : {false, true}) {
    for (bool exclusive : {false, true}) {
      std::vector<Tensor> out = RunOps(CumsumGraph("DT_INT64", 0, exclusive, reverse, false, false, false, "Cumprod"),
                                       {{"x:0", x}}, {"r:0"}, 1);
      ExpectValuesEq<int64_t>(out[0], want[static_cast<size_t>(reverse ? 2 + exclusive : exclusive)]);
    }
  }
  std::vector<Tensor> out = RunOps(CumsumGraph("DT_INT32", 0, false, false, false, false, false, "Cumprod"),
                                   {{"x:0", MakeTensor<int32_t>(GR_INT32, {3}, {65536, 65536, 3})}}, {"r:0"}, 1);
  ExpectValuesEq<int32_t>(out[0], {65536, 0, 0});
}

TEST(CumsumTest, ErrorsNameTheProblem) {
  const Tensor x = MakeTensor<float>(GR_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::unique_ptr<Session> s = testing::CreateSession(
      testing::ParseGraph(CumsumGraph("DT_FLOAT", 0, false, false, false, false, true)), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"x:0", x}, {"axis:0", IndexTensor({2}, false, true)}}, {"r:0"}, {}, &out),
               Code::kInvalidArgument, "ScanOp: Expected scan axis in the range [-2, 2), but got 2",
               "r");
  EXPECT_ERROR(s->Run({{"x:0", x}, {"axis:0", IndexTensor({0, 1}, false)}}, {"r:0"}, {}, &out),
               Code::kInvalidArgument, "ScanOp: axis must be a scalar, not [2]");
  EXPECT_ERROR(s->Run({{"x:0", Tensor::Scalar<float>(GR_FLOAT, 1.0f)},
                       {"axis:0", IndexTensor({0}, false, true)}},
                      {"r:0"}, {}, &out),
               Code::kInvalidArgument, "ScanOp: Expected scan axis in the range [0, 0)");
  ASSERT_TRUE(
      s->Run({{"x:0", x}, {"axis:0", IndexTensor({-1}, false, true)}}, {"r:0"}, {}, &out).ok());
  ExpectValuesEq<float>(out[0], {1, 3, 6, 4, 9, 15});
}

}  // namespace
}  // namespace graphrt

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT

// Inferred shapes, observed through a MatMul consumer whose shape function
// reports the dims it was given: "[2,5] x [4,7]" fails with "5 and 4".
std::string MatMulAfter(const std::string& src) {
  return ConstFloat("w", {4, 7}, std::vector<float>(28, 1.0f)) +
         NodeText("mm", "MatMul", {src, "w"}, TypeAttr("T", "DT_FLOAT"));
}

TEST(ReductionShapeTest, InferredShapesReachConsumers) {
  const Tensor x(GR_FLOAT, TensorShape({2, 3, 5}));
  // Sum over axis 1 of [2,3,5] = [2,5].
  EXPECT_ERROR(TryRun(WithShapedX(ReduceGraph(Red::kSum, "DT_FLOAT", {1}, false, false, false),
                                  "DT_FLOAT", {2, 3, 5}) +
                          MatMulAfter("r"),
                      {{"x:0", x}}, {"mm:0"}),
               Code::kInvalidArgument, "Dimensions must be equal, but are 5 and 4");
  // keep_dims keeps the rank: [2,1,5] is no matrix.
  EXPECT_ERROR(TryRun(WithShapedX(ReduceGraph(Red::kMean, "DT_FLOAT", {-2}, true, true, false),
                                  "DT_FLOAT", {2, 3, 5}) +
                          MatMulAfter("r"),
                      {{"x:0", x}}, {"mm:0"}),
               Code::kInvalidArgument, "Shape must be rank 2 but is rank 3");
  // ArgMax over axis 2 of [2,3,5] = [2,3] (int64, so an int64 MatMul).
  const std::string w64 =
      ConstNode("w", "DT_INT64", {4, 7}, "int64_val", std::vector<std::string>(28, "1")) +
      NodeText("mm", "MatMul", {"r", "w"}, TypeAttr("T", "DT_INT64"));
  EXPECT_ERROR(TryRun(WithShapedX(ArgGraph(true, "DT_FLOAT", "DT_INT64", 2, false, false),
                                  "DT_FLOAT", {2, 3, 5}) +
                          w64,
                      {{"x:0", x}}, {"mm:0"}),
               Code::kInvalidArgument, "Dimensions must be equal, but are 3 and 4");
}

}  // namespace
}  // namespace graphrt
