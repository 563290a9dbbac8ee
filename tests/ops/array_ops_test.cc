// Array ops: metadata (Rank, Size, ShapeN), identity-likes (IdentityN,
// StopGradient, PreventGradient), ExpandDims, Squeeze, Fill, ZerosLike,
// OnesLike, Range, Where, Select, SelectV2.
//
// References are written here independently of the kernels (plain loops,
// index arithmetic by division). Random inputs use fixed seeds; empty and
// scalar tensors, several dtypes, large inputs on 1- and 2-thread sessions
// and every error path are covered.
#include <gtest/gtest.h>

#include <algorithm>
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

// ============================================================= metadata

TEST(MetadataTest, RankSizeShapeN) {
  for (const Dims& d : std::vector<Dims>{{}, {0}, {3, 1, 4}, {2, 0, 5}}) {
    const Tensor x = Random(GR_FLOAT, d, 1);
    std::vector<Tensor> out = RunOp("Rank", {Fed(x)}, TAttr(GR_FLOAT));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), GR_INT32);
    EXPECT_EQ(out[0].dims(), 0);
    EXPECT_EQ(out[0].scalar<int32_t>(), static_cast<int32_t>(d.size()));
    out = RunOp("Size", {Fed(x)}, TAttr(GR_FLOAT));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].scalar<int32_t>(), NumElements(d));
    out = RunOp("Size", {Fed(x)}, TAttr(GR_FLOAT) + TAttr(GR_INT64, "out_type"));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), GR_INT64);
    EXPECT_EQ(out[0].scalar<int64_t>(), NumElements(d));
  }
  const Tensor a = Random(GR_STRING, {2, 3}, 1), b = Random(GR_STRING, {}, 2), c = Random(GR_STRING, {4, 0, 1}, 3);
  for (DataType ot : {GR_INT32, GR_INT64}) {
    std::vector<Tensor> out =
        RunOp("ShapeN", {Fed(a), Fed(b), Fed(c)}, TAttr(GR_STRING) + IntAttr("N", 3) + TAttr(ot, "out_type"), 3);
    ASSERT_EQ(out.size(), 3u);
    const std::vector<Dims> want = {{2, 3}, {}, {4, 0, 1}};
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(out[i].dtype(), ot);
      ASSERT_EQ(out[i].NumElements(), static_cast<int64_t>(want[i].size()));
      for (size_t k = 0; k < want[i].size(); ++k) {
        const int64_t got = ot == GR_INT32 ? out[i].data<int32_t>()[k] : out[i].data<int64_t>()[k];
        EXPECT_EQ(got, want[i][k]);
      }
    }
  }
}

TEST(IdentityLikeTest, IdentityNStopGradientPreventGradientShareBuffers) {
  const Tensor a = Random(GR_FLOAT, {2, 3}, 1), b = Random(GR_STRING, {2}, 2), c = Random(GR_BOOL, {}, 3);
  std::vector<Tensor> out =
      RunOp("IdentityN", {Fed(a), Fed(b), Fed(c)}, TypeListAttr("T", {GR_FLOAT, GR_STRING, GR_BOOL}), 3);
  ASSERT_EQ(out.size(), 3u);
  ExpectGathered(out[0], {2, 3}, {&a}, {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}});
  EXPECT_TRUE(out[0].SharesBufferWith(a));
  ExpectGathered(out[1], {2}, {&b}, {{0, 0}, {0, 1}});
  ExpectGathered(out[2], {}, {&c}, {{0, 0}});
  for (const std::string op : {"StopGradient", "PreventGradient"}) {
    const std::string attrs = TAttr(GR_INT64) + (op == "PreventGradient" ? StrAttr("message", "no grad") : "");
    const Tensor x = Random(GR_INT64, {3, 0}, 4), y = Random(GR_INT64, {4}, 5);
    out = RunOp(op, {Fed(y)}, attrs);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], {4}, {&y}, {{0, 0}, {0, 1}, {0, 2}, {0, 3}});
    EXPECT_TRUE(out[0].SharesBufferWith(y));
    out = RunOp(op, {Fed(x)}, attrs);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), (Dims{3, 0}));
  }
}

// ================================================== ExpandDims, Squeeze

TEST(ExpandDimsTest, EveryPositionZeroCopy) {
  for (DataType dt : {GR_FLOAT, GR_STRING, GR_BOOL}) {
    const Dims dims = {2, 3};
    const Tensor x = Random(dt, dims, 1);
    for (int64_t dim = -3; dim <= 2; ++dim) {
      for (DataType idx : {GR_INT32, GR_INT64}) {
        std::vector<Tensor> out =
            RunOp("ExpandDims", {Fed(x), Arg{IntScalar(dim, idx), dim % 2 == 0}}, TAttr(dt) + TAttr(idx, "Tdim"));
        ASSERT_EQ(out.size(), 1u);
        Dims want = dims;
        want.insert(want.begin() + (dim < 0 ? dim + 3 : dim), 1);
        EXPECT_EQ(DimsOf(out[0]), want);
        EXPECT_TRUE(out[0].SharesBufferWith(x));
        for (int64_t i = 0; i < 6; ++i) EXPECT_TRUE(SameElement(out[0], i, x, i));
      }
    }
  }
  // Scalar -> [1]; a one-element vector `dim` is accepted too.
  const Tensor s = Random(GR_INT32, {}, 2);
  std::vector<Tensor> out = RunOp("ExpandDims", {Fed(s), Fed(Vec({-1}))}, TAttr(GR_INT32));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{1}));
  EXPECT_ERROR(TryOp("ExpandDims", {Fed(s), Fed(IntScalar(2))}, TAttr(GR_INT32), 1, &out), Code::kInvalidArgument,
               "Tried to expand dim index 2 for tensor with 0 dimensions.");
  EXPECT_ERROR(TryOp("ExpandDims", {Fed(s), Konst(IntScalar(-3))}, TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "Tried to expand dim index -3 for tensor with 0 dimensions.");
  EXPECT_ERROR(TryOp("ExpandDims", {Fed(s), Fed(Vec({0, 1}))}, TAttr(GR_INT32), 1, &out), Code::kInvalidArgument,
               "'dim' must be a tensor with a single value");
}

TEST(SqueezeTest, AllOrListedDims) {
  const Tensor x = Random(GR_DOUBLE, {1, 3, 1, 2, 1}, 1);
  struct Case {
    std::vector<int64_t> squeeze;
    Dims want;
  };
  for (const Case& c : {Case{{}, {3, 2}}, Case{{0}, {3, 1, 2, 1}}, Case{{-1, 2}, {1, 3, 2}},
                        Case{{0, 2, 4}, {3, 2}}}) {
    std::vector<Tensor> out = RunOp("Squeeze", {Fed(x)}, TAttr(GR_DOUBLE) + IntListAttr("squeeze_dims", c.squeeze));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), c.want);
    EXPECT_TRUE(out[0].SharesBufferWith(x));
    for (int64_t i = 0; i < 6; ++i) EXPECT_TRUE(SameElement(out[0], i, x, i));
  }
  std::vector<Tensor> out = RunOp("Squeeze", {Fed(Random(GR_STRING, {1, 1}, 2))}, TAttr(GR_STRING));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{}));
  EXPECT_ERROR(TryOp("Squeeze", {Fed(x)}, TAttr(GR_DOUBLE) + IntListAttr("squeeze_dims", {1}), 1, &out),
               Code::kInvalidArgument, "Can not squeeze dim[1], expected a dimension of 1, got 3");
  EXPECT_ERROR(TryOp("Squeeze", {Fed(x)}, TAttr(GR_DOUBLE) + IntListAttr("squeeze_dims", {5}), 1, &out),
               Code::kInvalidArgument, "Tried to squeeze dim index 5 for tensor with 5 dimensions.");
}

// ========================================== Fill, ZerosLike, OnesLike

TEST(FillTest, DtypesShapesAndErrors) {
  for (DataType dt : MovementDtypes()) {
    const Tensor v = Random(dt, {}, 5);
    for (const Dims& d : std::vector<Dims>{{}, {3}, {2, 0}, {4, 1, 3}, {200, 300}}) {
      std::vector<Tensor> out = RunOp("Fill", {Arg{Vec(d, GR_INT64), d.size() == 2}, Fed(v)},
                                      TAttr(dt) + TAttr(GR_INT64, "index_type"));
      ASSERT_EQ(out.size(), 1u);
      ExpectGathered(out[0], d, {&v}, std::vector<Ref>(NumElements(d), Ref{0, 0}), nullptr, DtEnum(dt));
    }
  }
  std::vector<Tensor> out;
  const Tensor v = Tensor::Scalar<float>(GR_FLOAT, 1.f);
  EXPECT_ERROR(TryOp("Fill", {Fed(Vec({2, -1})), Fed(v)}, TAttr(GR_FLOAT), 1, &out), Code::kInvalidArgument,
               "Dimension -1 must be >= 0");
  EXPECT_ERROR(TryOp("Fill", {Fed(Vec({2})), Fed(Random(GR_FLOAT, {1}, 1))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "value must be a scalar, got shape [1]");
  EXPECT_ERROR(TryOp("Fill", {Fed(IntScalar(2)), Fed(v)}, TAttr(GR_FLOAT), 1, &out), Code::kInvalidArgument,
               "dims must be a vector, got shape []");
  EXPECT_ERROR(TryOp("Fill", {Konst(Vec({2, -1})), Fed(v)}, TAttr(GR_FLOAT), 1, &out), Code::kInvalidArgument,
               "must be >= 0");
}

TEST(ZerosOnesLikeTest, Dtypes) {
  struct Case {
    DataType dt;
    std::vector<unsigned char> one;  // little-endian bytes of 1
  };
  const std::vector<Case> cases = {
      {GR_FLOAT, {0, 0, 0x80, 0x3f}}, {GR_DOUBLE, {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
      {GR_INT32, {1, 0, 0, 0}},       {GR_INT64, {1, 0, 0, 0, 0, 0, 0, 0}},
      {GR_BOOL, {1}},                 {GR_INT8, {1}},
      {GR_UINT8, {1}},                {GR_INT16, {1, 0}},
      {GR_BFLOAT16, {0x80, 0x3f}},    {GR_HALF, {0x00, 0x3c}},
      {GR_COMPLEX128, {0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0}}};
  for (const Case& c : cases) {
    for (const Dims& d : std::vector<Dims>{{}, {0, 3}, {5, 7}, {300, 200}}) {
      const Tensor x = Random(c.dt, d, 9);
      std::vector<Tensor> out = RunOp("OnesLike", {Fed(x)}, TAttr(c.dt));
      ASSERT_EQ(out.size(), 1u);
      Tensor one(c.dt, TensorShape({}));
      std::memcpy(one.raw_data(), c.one.data(), c.one.size());
      ExpectGathered(out[0], d, {&x}, std::vector<Ref>(NumElements(d), Ref{-1, 0}), &one, "OnesLike " + DtEnum(c.dt));
      out = RunOp("ZerosLike", {Fed(x)}, TAttr(c.dt));
      ASSERT_EQ(out.size(), 1u);
      Tensor zero(c.dt, TensorShape({}));
      std::memset(zero.raw_data(), 0, c.one.size());
      ExpectGathered(out[0], d, {&x}, std::vector<Ref>(NumElements(d), Ref{-1, 0}), &zero, "ZerosLike " + DtEnum(c.dt));
    }
  }
  std::vector<Tensor> out = RunOp("ZerosLike", {Fed(Random(GR_STRING, {3}, 1))}, TAttr(GR_STRING));
  ASSERT_EQ(out.size(), 1u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[0].string_at(i), "");
}

// ================================================================ Range

template <typename T>
void CheckRange(T start, T limit, T delta, DataType dt, bool konst, int threads = 2) {
  std::vector<Tensor> out =
      RunOp("Range",
            {Arg{MakeTensor<T>(dt, {}, {start}), konst}, Arg{MakeTensor<T>(dt, {}, {limit}), konst},
             Arg{MakeTensor<T>(dt, {}, {delta}), konst}},
            TAttr(dt, "Tidx"), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  // Reference: count by repeated stepping in double, values start + i*delta.
  std::vector<T> want;
  for (int64_t i = 0;; ++i) {
    const double v = static_cast<double>(start) + static_cast<double>(i) * static_cast<double>(delta);
    if (delta > 0 ? v >= static_cast<double>(limit) : v <= static_cast<double>(limit)) break;
    want.push_back(static_cast<T>(start + static_cast<T>(i) * delta));
  }
  EXPECT_EQ(DimsOf(out[0]), (Dims{static_cast<int64_t>(want.size())}));
  ExpectValuesEq<T>(out[0], want, 1e-6);
}

TEST(RangeTest, TypesDirectionsAndLarge) {
  for (bool konst : {false, true}) {
    CheckRange<int32_t>(0, 10, 3, GR_INT32, konst);
    CheckRange<int32_t>(10, -7, -4, GR_INT32, konst);
    CheckRange<int32_t>(5, 5, 1, GR_INT32, konst);
    CheckRange<int64_t>(-(int64_t{1} << 40), -(int64_t{1} << 40) + 100, 7, GR_INT64, konst);
    CheckRange<float>(0.5f, 3.0f, 0.3f, GR_FLOAT, konst);
    CheckRange<float>(1.0f, -2.0f, -0.75f, GR_FLOAT, konst);
    CheckRange<double>(-1.0, 1.0, 0.125, GR_DOUBLE, konst);
  }
  for (int threads : {1, 2}) CheckRange<int64_t>(3, 100003, 1, GR_INT64, false, threads);
  std::vector<Tensor> out =
      RunOp("Range", {Fed(IntTensor(GR_INT16, {}, {-3})), Fed(IntTensor(GR_INT16, {}, {4})), Fed(IntTensor(GR_INT16, {}, {2}))},
            TAttr(GR_INT16, "Tidx"));
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<int16_t>(out[0], {-3, -1, 1, 3});
}

TEST(RangeTest, Errors) {
  std::vector<Tensor> out;
  for (bool konst : {false, true}) {
    EXPECT_ERROR(TryOp("Range", {Arg{IntScalar(0), konst}, Arg{IntScalar(5), konst}, Arg{IntScalar(0), konst}},
                       TAttr(GR_INT32, "Tidx"), 1, &out),
                 Code::kInvalidArgument, "Requires delta != 0: 0");
    EXPECT_ERROR(TryOp("Range", {Arg{IntScalar(5), konst}, Arg{IntScalar(1), konst}, Arg{IntScalar(1), konst}},
                       TAttr(GR_INT32, "Tidx"), 1, &out),
                 Code::kInvalidArgument, "Requires start <= limit when delta > 0: 5/1");
    EXPECT_ERROR(TryOp("Range", {Arg{IntScalar(1), konst}, Arg{IntScalar(5), konst}, Arg{IntScalar(-1), konst}},
                       TAttr(GR_INT32, "Tidx"), 1, &out),
                 Code::kInvalidArgument, "Requires start >= limit when delta < 0: 1/5");
  }
  EXPECT_ERROR(TryOp("Range", {Fed(Vec({1, 2})), Fed(IntScalar(5)), Fed(IntScalar(1))}, TAttr(GR_INT32, "Tidx"), 1, &out),
               Code::kInvalidArgument, "start must be a scalar, not shape [2]");
}

// ================================================================ Where

template <typename T>
void CheckWhere(DataType dt, const Dims& dims, const std::vector<T>& v, int threads = 2) {
  std::vector<Tensor> out = RunOp("Where", {Fed(MakeTensor<T>(dt, dims, v))}, TAttr(dt), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  std::vector<int64_t> want;
  int64_t n = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    bool truthy;
    if constexpr (std::is_floating_point_v<T>) {
      truthy = !(v[i] == 0);  // NaN is true, -0 false
    } else if (dt == GR_BFLOAT16 || dt == GR_HALF) {
      truthy = (static_cast<uint16_t>(v[i]) & 0x7fff) != 0;  // +-0 are false
    } else {
      truthy = v[i] != T(0);
    }
    if (!truthy) continue;
    ++n;
    const Dims idx = Unravel(static_cast<int64_t>(i), dims);
    want.insert(want.end(), idx.begin(), idx.end());
  }
  EXPECT_EQ(out[0].dtype(), GR_INT64);
  EXPECT_EQ(DimsOf(out[0]), (Dims{n, static_cast<int64_t>(dims.size())}));
  ExpectValuesEq<int64_t>(out[0], want);
}

TEST(WhereTest, DtypesShapesAndLarge) {
  std::mt19937 rng(3);
  std::vector<bool> bv;
  for (int i = 0; i < 24; ++i) bv.push_back(rng() % 3 == 0);
  {
    std::vector<Tensor> out = RunOp("Where", {Fed(BoolTensor({2, 3, 4}, bv))}, TAttr(GR_BOOL));
    ASSERT_EQ(out.size(), 1u);
    std::vector<int64_t> want;
    int64_t n = 0;
    for (int i = 0; i < 24; ++i)
      if (bv[i]) {
        ++n;
        want.insert(want.end(), {i / 12, (i / 4) % 3, i % 4});
      }
    EXPECT_EQ(DimsOf(out[0]), (Dims{n, 3}));
    ExpectValuesEq<int64_t>(out[0], want);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CheckWhere<float>(GR_FLOAT, {2, 4}, {0.f, -0.f, 1.f, nan, 0.f, -2.5f, 0.f, 1e-30f});
  CheckWhere<double>(GR_DOUBLE, {5}, {0, 3, 0, 0, -1});
  CheckWhere<int32_t>(GR_INT32, {3, 1, 2}, {0, 1, -1, 0, 0, 7});
  CheckWhere<int64_t>(GR_INT64, {}, {5});
  CheckWhere<int64_t>(GR_INT64, {}, {0});
  CheckWhere<int8_t>(GR_INT8, {0, 3}, {});
  // bfloat16 -0 (0x8000) is false, 0x0001 (a denormal) true.
  CheckWhere<uint16_t>(GR_BFLOAT16, {4}, {0x8000, 0x0001, 0x0000, 0x3f80});
  // Large: counted and written in blocks over the pool.
  std::vector<int32_t> big(200000);
  for (auto& x : big) x = rng() % 7 == 0 ? 1 : 0;
  for (int threads : {1, 2}) CheckWhere<int32_t>(GR_INT32, {400, 500}, big, threads);
}

// ======================================================= Select, SelectV2

TEST(SelectTest, ElementwiseScalarAndBatchAllDtypes) {
  std::mt19937 rng(4);
  int n = 0;
  for (DataType dt : MovementDtypes()) {
    const Dims dims = {3, 4};
    const Tensor t = Random(dt, dims, 10 + n), e = Random(dt, dims, 20 + n);
    ++n;
    std::vector<bool> cv;
    for (int i = 0; i < 12; ++i) cv.push_back(rng() % 2 == 1);
    // Same shape.
    std::vector<Tensor> out = RunOp("Select", {Fed(BoolTensor(dims, cv)), Fed(t), Fed(e)}, TAttr(dt));
    ASSERT_EQ(out.size(), 1u);
    std::vector<Ref> ref;
    for (int i = 0; i < 12; ++i) ref.push_back({cv[i] ? 0 : 1, i});
    ExpectGathered(out[0], dims, {&t, &e}, ref, nullptr, "elementwise " + DtEnum(dt));
    // Vector condition picks rows.
    const std::vector<bool> rows = {true, false, true};
    out = RunOp("Select", {Fed(BoolTensor({3}, rows)), Fed(t), Fed(e)}, TAttr(dt));
    ASSERT_EQ(out.size(), 1u);
    ref.clear();
    for (int i = 0; i < 12; ++i) ref.push_back({rows[i / 4] ? 0 : 1, i});
    ExpectGathered(out[0], dims, {&t, &e}, ref, nullptr, "batch " + DtEnum(dt));
    // Scalar condition.
    for (bool c : {true, false}) {
      out = RunOp("Select", {Fed(BoolTensor({}, {c})), Fed(t), Fed(e)}, TAttr(dt));
      ASSERT_EQ(out.size(), 1u);
      ref.clear();
      for (int i = 0; i < 12; ++i) ref.push_back({c ? 0 : 1, i});
      ExpectGathered(out[0], dims, {&t, &e}, ref, nullptr, "scalar " + DtEnum(dt));
    }
  }
}

TEST(SelectTest, LargeInPlaceAndErrors) {
  std::mt19937 rng(5);
  const Dims dims = {300, 200};
  std::vector<bool> cv;
  for (int i = 0; i < 60000; ++i) cv.push_back(rng() % 2 == 1);
  const Tensor t = Random(GR_FLOAT, dims, 1), e = Random(GR_FLOAT, dims, 2);
  std::vector<Ref> ref;
  for (int i = 0; i < 60000; ++i) ref.push_back({cv[i] ? 0 : 1, i});
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("Select", {Fed(BoolTensor(dims, cv)), Fed(t), Fed(e)}, TAttr(GR_FLOAT), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], dims, {&t, &e}, ref);
  }
  std::vector<Tensor> out;
  const Tensor t2 = Random(GR_FLOAT, {2, 3}, 3), e2 = Random(GR_FLOAT, {2, 4}, 4);
  EXPECT_ERROR(TryOp("Select", {Fed(BoolTensor({}, {true})), Fed(t2), Fed(e2)}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "'then' and 'else' must have the same size.  but received: [2,3] vs. [2,4]");
  EXPECT_ERROR(TryOp("Select", {Fed(BoolTensor({3}, {true, true, false})), Fed(t2), Fed(t2)}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Number of batches of 'then' must match size of 'cond', but saw: 2 vs. 3");
  EXPECT_ERROR(TryOp("Select", {Fed(BoolTensor({3, 2}, {true, true, false, true, true, true})), Fed(t2), Fed(t2)},
                     TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "must have the same size and shape");
}

// The output takes over whichever of 'then' / 'else' dies there (here
// 'else', computed in the graph; the fed 'then' is held by the caller).
TEST(SelectTest, OutputReusesADyingElseInPlace) {
  const std::string f = TAttr(GR_FLOAT);
  for (const std::string op : {"Select", "SelectV2"}) {
    const std::string g = NodeText("c", "Placeholder", {}, TypeAttr("dtype", "DT_BOOL")) +
                          NodeText("t", "Placeholder", {}, TypeAttr("dtype", "DT_FLOAT")) +
                          NodeText("b", "Placeholder", {}, TypeAttr("dtype", "DT_FLOAT")) +
                          NodeText("e", "Neg", {"b"}, f) + NodeText("s", op, {"c", "t", "e"}, f);
    std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 1);
    ASSERT_TRUE(s);
    proto::RunOptions ro;
    ro.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
    proto::RunMetadata md;
    std::vector<Tensor> out;
    const Status st = s->Run(ro,
                             {{"c", BoolTensor({4}, {true, false, false, true})},
                              {"t", MakeTensor<float>(GR_FLOAT, {4}, {1, 2, 3, 4})},
                              {"b", MakeTensor<float>(GR_FLOAT, {4}, {10, 20, 30, 40})}},
                             {"s:0"}, {}, &out, &md);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(ToVector<float>(out[0]), (std::vector<float>{1, -20, -30, 4})) << op;
    const std::map<std::string, uint64_t> ptr = TracedOutputPtrs(md);
    ASSERT_TRUE(ptr.count("e") && ptr.count("s")) << op;
    EXPECT_EQ(ptr.at("s"), ptr.at("e")) << op;
  }
}

TEST(SelectV2Test, BroadcastingAllThree) {
  std::mt19937 rng(6);
  struct Case {
    Dims c, t, e;
  };
  const std::vector<Case> cases = {{{2, 3}, {2, 3}, {2, 3}}, {{}, {2, 3}, {2, 3}},  {{3}, {2, 3}, {}},
                                   {{2, 1}, {1, 3}, {2, 3}}, {{1}, {4}, {1}},       {{2, 1, 4}, {3, 1}, {1, 1, 4}},
                                   {{}, {}, {}},             {{0, 3}, {1, 3}, {3}}, {{1, 200}, {300, 1}, {300, 200}}};
  int n = 0;
  for (DataType dt : {GR_FLOAT, GR_INT64, GR_STRING, GR_BOOL, GR_HALF, GR_COMPLEX128}) {
    for (const Case& c : cases) {
      ++n;
      std::vector<bool> cv;
      for (int64_t i = 0; i < NumElements(c.c); ++i) cv.push_back(rng() % 2 == 1);
      const Tensor t = Random(dt, c.t, 100 + n), e = Random(dt, c.e, 200 + n);
      std::vector<Tensor> out = RunOp("SelectV2", {Fed(BoolTensor(c.c, cv)), Fed(t), Fed(e)}, TAttr(dt));
      ASSERT_EQ(out.size(), 1u);
      const Dims want = RefBroadcastShape(RefBroadcastShape(c.c, c.t), c.e);
      std::vector<Ref> ref;
      for (int64_t i = 0; i < NumElements(want); ++i) {
        const Dims idx = Unravel(i, want);
        const bool pick = cv[static_cast<size_t>(RefSourceIndex(c.c, idx))];
        ref.push_back(pick ? Ref{0, RefSourceIndex(c.t, idx)} : Ref{1, RefSourceIndex(c.e, idx)});
      }
      ExpectGathered(out[0], want, {&t, &e}, ref, nullptr, DtEnum(dt) + " case " + std::to_string(n));
    }
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("SelectV2", {Fed(BoolTensor({2}, {true, false})), Fed(Random(GR_FLOAT, {3}, 1)),
                                  Fed(Random(GR_FLOAT, {3}, 2))},
                     TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "condition [2], then [3], and else [3] must be broadcastable");
}

// ============================================ gradient support ops

// Reference: the reduction axes of each side of a broadcast, computed from
// the right-aligned shapes.
void RefGradArgs(const Dims& a, const Dims& b, Dims* r0, Dims* r1) {
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i + a.size() < n ? 1 : a[i + a.size() - n];
    const int64_t y = i + b.size() < n ? 1 : b[i + b.size() - n];
    if (x == 1 && (y != 1 || x == y)) r0->push_back(static_cast<int64_t>(i));
    if (y == 1 && (x != 1 || x == y)) r1->push_back(static_cast<int64_t>(i));
  }
}

TEST(BroadcastGradientArgsTest, ReductionAxes) {
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{2, 3}, {3}}, {{2, 1, 4}, {5, 1}}, {{1}, {1}}, {{}, {4, 2}}, {{3, 1}, {3, 1}}, {{0, 1}, {1, 7}}, {{}, {}}};
  for (DataType dt : {GR_INT32, GR_INT64}) {
    for (const auto& c : cases) {
      std::vector<Tensor> out = RunOp("BroadcastGradientArgs", {Fed(Vec(c.first, dt)), Fed(Vec(c.second, dt))}, TAttr(dt), 2);
      ASSERT_EQ(out.size(), 2u);
      Dims r0, r1;
      RefGradArgs(c.first, c.second, &r0, &r1);
      for (int k = 0; k < 2; ++k) {
        const Dims& want = k == 0 ? r0 : r1;
        ASSERT_EQ(out[k].dtype(), dt);
        ASSERT_EQ(out[k].NumElements(), static_cast<int64_t>(want.size()));
        for (size_t j = 0; j < want.size(); ++j) {
          EXPECT_EQ(dt == GR_INT32 ? out[k].data<int32_t>()[j] : out[k].data<int64_t>()[j], want[j]);
        }
      }
    }
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("BroadcastGradientArgs", {Fed(Vec({2, 3})), Fed(Vec({4}))}, TAttr(GR_INT32), 2, &out),
               Code::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4]");
}

TEST(DynamicStitchTest, MergesLaterPiecesWin) {
  for (DataType dt : {GR_FLOAT, GR_INT64, GR_STRING, GR_BOOL}) {
    // indices {[0, 4], [[1, 3], [4, 2]]}; data rows of 3 elements; row 4 is
    // written twice (the later piece wins), row 5 never (zero / empty).
    const Tensor i0 = IntTensor(GR_INT32, {2}, {0, 4}), i1 = IntTensor(GR_INT32, {2, 2}, {1, 3, 4, 2});
    const Tensor d0 = Random(dt, {2, 3}, 1), d1 = Random(dt, {2, 2, 3}, 2);
    const Tensor i2 = IntTensor(GR_INT32, {1}, {6}), d2 = Random(dt, {1, 3}, 3);
    std::vector<Tensor> out = RunOp("DynamicStitch", {Fed(i0), Fed(i1), Konst(i2), Fed(d0), Fed(d1), Fed(d2)},
                                    TAttr(dt) + IntAttr("N", 3));
    ASSERT_EQ(out.size(), 1u);
    // row -> (piece, flat row in piece)
    const std::vector<Ref> rows = {{0, 0}, {1, 0}, {1, 3}, {1, 1}, {1, 2}, {-1, 0}, {2, 0}};
    std::vector<Ref> ref;
    for (const Ref& r : rows)
      for (int64_t k = 0; k < 3; ++k) ref.push_back(r.first < 0 ? Ref{-1, 0} : Ref{r.first, r.second * 3 + k});
    Tensor zero(dt, TensorShape({}));
    if (dt != GR_STRING) std::memset(zero.raw_data(), 0, ElemSize(dt));
    ExpectGathered(out[0], {7, 3}, {&d0, &d1, &d2}, ref, &zero, DtEnum(dt));
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("DynamicStitch", {Fed(IntTensor(GR_INT32, {2}, {0, 1})), Fed(Random(GR_FLOAT, {3}, 1))},
                     TAttr(GR_FLOAT) + IntAttr("N", 1), 1, &out),
               Code::kInvalidArgument, "does not start with indices[0].shape = [2]");
  EXPECT_ERROR(TryOp("DynamicStitch", {Fed(IntTensor(GR_INT32, {2}, {0, -1})), Fed(Random(GR_FLOAT, {2}, 1))},
                     TAttr(GR_FLOAT) + IntAttr("N", 1), 1, &out),
               Code::kInvalidArgument, "indices[0][1] = -1 is negative");
}

}  // namespace
}  // namespace graphrt
