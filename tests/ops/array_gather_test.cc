// GatherV2 (axis, batch_dims), GatherNd, ScatterNd and OneHot against
// naive references written here (index arithmetic by division), on random
// inputs with fixed seeds, every index dtype, several data dtypes, empty and
// scalar cases, large inputs on 1- and 2-thread sessions, and every error.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

std::vector<int64_t> RandomIndices(int64_t n, int64_t limit, std::mt19937* rng) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(limit > 0 ? static_cast<int64_t>((*rng)() % limit) : 0);
  return v;
}

int64_t IndexValue(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case GR_INT16: return t.data<int16_t>()[i];
    case GR_INT32: return t.data<int32_t>()[i];
    default: return t.data<int64_t>()[i];
  }
}

// ============================================================== GatherV2

// out[p0.., b.., i.., q..] = params[p0.., indices[b.., i..], q..] where the
// first batch_dims dims of params and indices are shared.
std::vector<Ref> RefGather(const Dims& pd, const Tensor& indices, int axis, int bd, Dims* out) {
  const Dims id = DimsOf(indices);
  out->assign(pd.begin(), pd.begin() + axis);
  out->insert(out->end(), id.begin() + bd, id.end());
  out->insert(out->end(), pd.begin() + axis + 1, pd.end());
  std::vector<Ref> ref;
  for (int64_t f = 0; f < NumElements(*out); ++f) {
    const Dims oi = Unravel(f, *out);
    // Index tuple into `indices`: the batch dims, then its own dims.
    Dims ii(oi.begin(), oi.begin() + bd);
    ii.insert(ii.end(), oi.begin() + axis, oi.begin() + axis + (id.size() - bd));
    Dims pi(oi.begin(), oi.begin() + axis);
    pi.push_back(IndexValue(indices, Ravel(ii, id)));
    pi.insert(pi.end(), oi.begin() + axis + (id.size() - bd), oi.end());
    ref.push_back({0, Ravel(pi, pd)});
  }
  return ref;
}

TEST(GatherV2Test, RandomAxesBatchDimsAndDtypes) {
  std::mt19937 rng(7);
  int case_no = 0;
  const std::vector<DataType> dts = {GR_FLOAT, GR_DOUBLE, GR_INT32, GR_INT64, GR_BOOL,
                                     GR_INT8,  GR_BFLOAT16, GR_COMPLEX128, GR_STRING};
  for (DataType dt : dts) {
    for (int rep = 0; rep < 8; ++rep, ++case_no) {
      const int pr = 1 + static_cast<int>(rng() % 4);
      const int bd = static_cast<int>(rng() % pr);  // 0..pr-1
      const int axis = bd + static_cast<int>(rng() % (pr - bd));
      Dims pd;
      for (int d = 0; d < pr; ++d) pd.push_back(1 + static_cast<int64_t>(rng() % 4));
      Dims id(pd.begin(), pd.begin() + bd);
      const int extra = static_cast<int>(rng() % 3);
      for (int d = 0; d < extra; ++d) id.push_back(static_cast<int64_t>(rng() % 4));
      const DataType idt = rep % 3 == 0 ? GR_INT64 : (rep % 3 == 1 ? GR_INT32 : GR_INT16);
      const Tensor indices = IntTensor(idt, id, RandomIndices(NumElements(id), pd[axis], &rng));
      const Tensor params = Random(dt, pd, 2000 + case_no);
      // Negative axis / batch_dims spellings, constant or fed axis.
      const int64_t axis_arg = rep % 2 ? axis - pr : axis;
      // (A negative batch_dims counts from the end of indices' dims.)
      const int64_t bd_arg = (rep % 4 == 3 && extra > 0) ? bd - static_cast<int64_t>(id.size()) : bd;
      std::vector<Tensor> out =
          RunOp("GatherV2", {Fed(params), Fed(indices), Arg{IntScalar(axis_arg, rep % 2 ? GR_INT64 : GR_INT32), rep % 3 == 0}},
                TypeAttr("Tparams", DtEnum(dt)) + TypeAttr("Tindices", DtEnum(idt)) +
                    TypeAttr("Taxis", rep % 2 ? "DT_INT64" : "DT_INT32") + IntAttr("batch_dims", bd_arg));
      ASSERT_EQ(out.size(), 1u);
      Dims want;
      const std::vector<Ref> ref = RefGather(pd, indices, axis, bd, &want);
      ExpectGathered(out[0], want, {&params}, ref, nullptr, "case " + std::to_string(case_no));
    }
  }
}

TEST(GatherV2Test, LargeEmbeddingLookup) {
  // An embedding table lookup big enough to split over the pool.
  std::mt19937 rng(8);
  const Dims pd = {1000, 64};
  const Tensor params = Random(GR_FLOAT, pd, 9);
  const Tensor indices = IntTensor(GR_INT32, {30, 40}, RandomIndices(1200, 1000, &rng));
  Dims want;
  const std::vector<Ref> ref = RefGather(pd, indices, 0, 0, &want);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out =
        RunOp("GatherV2", {Fed(params), Fed(indices), Konst(IntScalar(0))},
              TypeAttr("Tparams", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32") + TypeAttr("Taxis", "DT_INT32"),
              1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], want, {&params}, ref);
  }
}

TEST(GatherV2Test, ScalarIndexAndEmpty) {
  const Tensor params = Random(GR_INT64, {4, 3}, 10);
  const std::string attrs =
      TypeAttr("Tparams", "DT_INT64") + TypeAttr("Tindices", "DT_INT32") + TypeAttr("Taxis", "DT_INT32");
  std::vector<Tensor> out = RunOp("GatherV2", {Fed(params), Fed(IntScalar(2)), Fed(IntScalar(1))}, attrs);
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {4}, {&params}, {{0, 2}, {0, 5}, {0, 8}, {0, 11}});
  out = RunOp("GatherV2", {Fed(params), Fed(IntTensor(GR_INT32, {0, 2}, {})), Fed(IntScalar(0))}, attrs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{0, 2, 3}));
}

TEST(GatherV2Test, Errors) {
  const Tensor params = Random(GR_FLOAT, {5, 3}, 11);
  const std::string attrs =
      TypeAttr("Tparams", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32") + TypeAttr("Taxis", "DT_INT32");
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(IntTensor(GR_INT32, {2, 2}, {0, 1, 4, 7})), Fed(IntScalar(0))},
                     attrs, 1, &out),
               Code::kInvalidArgument, "indices[1,1] = 7 is not in [0, 5)");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(Vec({-1})), Fed(IntScalar(1))}, attrs, 1, &out),
               Code::kInvalidArgument, "indices[0] = -1 is not in [0, 3)");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(Vec({0})), Fed(IntScalar(2))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected axis in the range [-2, 2), but got 2");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(Vec({0})), Konst(IntScalar(-3))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected axis in the range [-2, 2), but got -3");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(IntTensor(GR_INT32, {5, 1}, {0, 0, 0, 0, 0})), Fed(IntScalar(0))},
                     attrs + IntAttr("batch_dims", 1), 1, &out),
               Code::kInvalidArgument, "batch_dims (1) must be less than or equal to axis (0).");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(IntTensor(GR_INT32, {4, 1}, {0, 0, 0, 0})), Fed(IntScalar(1))},
                     attrs + IntAttr("batch_dims", 1), 1, &out),
               Code::kInvalidArgument, "params.shape[0]: 5 should be equal to indices.shape[0]: 4");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(params), Fed(Vec({0})), Fed(IntScalar(1))}, attrs + IntAttr("batch_dims", 2), 1,
                     &out),
               Code::kInvalidArgument, "Expected batch_dims in the range [-1, 1], but got 2");
  EXPECT_ERROR(TryOp("GatherV2", {Fed(Random(GR_FLOAT, {}, 1)), Fed(Vec({0})), Fed(IntScalar(0))}, attrs, 1, &out),
               Code::kInvalidArgument, "params must be at least 1 dimensional");
}

// ============================================================== GatherNd

std::vector<Ref> RefGatherNd(const Dims& pd, const Tensor& indices, Dims* out) {
  const Dims id = DimsOf(indices);
  const int64_t k = id.back();
  out->assign(id.begin(), id.end() - 1);
  out->insert(out->end(), pd.begin() + k, pd.end());
  std::vector<Ref> ref;
  for (int64_t f = 0; f < NumElements(*out); ++f) {
    const Dims oi = Unravel(f, *out);
    const size_t outer = id.size() - 1;
    Dims pos(oi.begin(), oi.begin() + outer);
    Dims pi;
    for (int64_t j = 0; j < k; ++j) {
      Dims at = pos;
      at.push_back(j);
      pi.push_back(IndexValue(indices, Ravel(at, id)));
    }
    pi.insert(pi.end(), oi.begin() + outer, oi.end());
    ref.push_back({0, Ravel(pi, pd)});
  }
  return ref;
}

TEST(GatherNdTest, RandomDepthsAndDtypes) {
  std::mt19937 rng(17);
  int case_no = 0;
  for (DataType dt : {GR_FLOAT, GR_INT64, GR_BOOL, GR_HALF, GR_STRING, GR_COMPLEX128}) {
    for (int rep = 0; rep < 8; ++rep, ++case_no) {
      const int pr = 1 + static_cast<int>(rng() % 3);
      Dims pd;
      for (int d = 0; d < pr; ++d) pd.push_back(1 + static_cast<int64_t>(rng() % 4));
      const int64_t k = static_cast<int64_t>(rng() % (pr + 1));
      Dims id;
      const int outer = static_cast<int>(rng() % 3);
      for (int d = 0; d < outer; ++d) id.push_back(static_cast<int64_t>(rng() % 4));
      id.push_back(k);
      std::vector<int64_t> v;
      for (int64_t i = 0; i < NumElements(id); ++i) v.push_back(static_cast<int64_t>(rng() % pd[i % k]));
      const DataType idt = rep % 2 ? GR_INT64 : GR_INT32;
      const Tensor indices = IntTensor(idt, id, v);
      const Tensor params = Random(dt, pd, 3000 + case_no);
      std::vector<Tensor> out = RunOp("GatherNd", {Fed(params), Arg{indices, rep % 3 == 0}},
                                      TypeAttr("Tparams", DtEnum(dt)) + TypeAttr("Tindices", DtEnum(idt)));
      ASSERT_EQ(out.size(), 1u);
      Dims want;
      const std::vector<Ref> ref = RefGatherNd(pd, indices, &want);
      ExpectGathered(out[0], want, {&params}, ref, nullptr, "case " + std::to_string(case_no));
    }
  }
}

TEST(GatherNdTest, LargeAndErrors) {
  std::mt19937 rng(18);
  const Dims pd = {50, 40, 30};
  const Tensor params = Random(GR_FLOAT, pd, 19);
  std::vector<int64_t> v;
  for (int i = 0; i < 2000; ++i) {
    v.push_back(static_cast<int64_t>(rng() % 50));
    v.push_back(static_cast<int64_t>(rng() % 40));
  }
  const Tensor indices = IntTensor(GR_INT64, {2000, 2}, v);
  Dims want;
  const std::vector<Ref> ref = RefGatherNd(pd, indices, &want);
  const std::string attrs = TypeAttr("Tparams", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT64");
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("GatherNd", {Fed(params), Fed(indices)}, attrs, 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], want, {&params}, ref);
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("GatherNd", {Fed(params), Fed(IntTensor(GR_INT64, {2, 2}, {0, 0, 3, 40}))}, attrs, 1, &out),
               Code::kInvalidArgument, "indices[1] = [3, 40] does not index into param shape [50,40,30]");
  EXPECT_ERROR(TryOp("GatherNd", {Fed(params), Fed(IntTensor(GR_INT64, {1, 4}, {0, 0, 0, 0}))}, attrs, 1, &out),
               Code::kInvalidArgument, "index innermost dimension length must be <= params rank; saw: 4 vs. 3");
  EXPECT_ERROR(TryOp("GatherNd", {Fed(params), Konst(IntTensor(GR_INT64, {1, 4}, {0, 0, 0, 0}))}, attrs, 1, &out),
               Code::kInvalidArgument, "index innermost dimension length must be <= params rank");
  EXPECT_ERROR(TryOp("GatherNd", {Fed(params), Fed(IntTensor(GR_INT64, {}, {0}))}, attrs, 1, &out),
               Code::kInvalidArgument, "indices must be at least a vector");
}

// ============================================================= ScatterNd

// out = zeros(shape); out[indices[i]] += updates[i] (double accumulation).
template <typename V>
std::vector<double> RefScatterNd(const Tensor& indices, const std::vector<V>& updates, const Dims& shape) {
  const Dims id = DimsOf(indices);
  const int64_t k = id.back();
  const int64_t rows = NumElements(Dims(id.begin(), id.end() - 1));
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(k); d < shape.size(); ++d) slice *= shape[d];
  std::vector<double> out(static_cast<size_t>(NumElements(shape)), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    Dims pos;
    for (int64_t j = 0; j < k; ++j) pos.push_back(IndexValue(indices, i * k + j));
    int64_t base = 0;
    for (int64_t j = 0; j < k; ++j) base = base * shape[j] + pos[j];
    for (int64_t c = 0; c < slice; ++c) out[base * slice + c] += static_cast<double>(updates[i * slice + c]);
  }
  return out;
}

TEST(ScatterNdTest, DuplicatesAccumulateAcrossDtypes) {
  std::mt19937 rng(27);
  for (int rep = 0; rep < 12; ++rep) {
    const int r = 1 + static_cast<int>(rng() % 3);
    Dims shape;
    for (int d = 0; d < r; ++d) shape.push_back(1 + static_cast<int64_t>(rng() % 4));
    const int64_t k = 1 + static_cast<int64_t>(rng() % r);
    const int64_t n = static_cast<int64_t>(rng() % 6);
    Dims id = {n, k};
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n * k; ++i) v.push_back(static_cast<int64_t>(rng() % shape[i % k]));
    const DataType idt = rep % 2 ? GR_INT64 : GR_INT32;
    const Tensor indices = IntTensor(idt, id, v);
    Dims ud = {n};
    for (int d = static_cast<int>(k); d < r; ++d) ud.push_back(shape[d]);
    const bool konst = rep % 3 == 0;
    // float, double, int32, int64.
    {
      std::vector<float> u = RandomValues<float>(NumElements(ud), &rng);
      std::vector<Tensor> out = RunOp("ScatterNd",
                                      {Fed(indices), Fed(MakeTensor<float>(GR_FLOAT, ud, u)), Arg{Vec(shape, idt), konst}},
                                      TAttr(GR_FLOAT) + TypeAttr("Tindices", DtEnum(idt)));
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(DimsOf(out[0]), shape);
      const std::vector<double> want = RefScatterNd(indices, u, shape);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0].data<float>()[i], want[i], 1e-4) << i;
    }
    {
      std::vector<int64_t> u = RandomValues<int64_t>(NumElements(ud), &rng);
      std::vector<Tensor> out = RunOp("ScatterNd",
                                      {Fed(indices), Fed(MakeTensor<int64_t>(GR_INT64, ud, u)), Arg{Vec(shape, idt), konst}},
                                      TAttr(GR_INT64) + TypeAttr("Tindices", DtEnum(idt)));
      ASSERT_EQ(out.size(), 1u);
      const std::vector<double> want = RefScatterNd(indices, u, shape);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[0].data<int64_t>()[i], static_cast<int64_t>(want[i])) << i;
    }
    {
      std::vector<int32_t> u = RandomValues<int32_t>(NumElements(ud), &rng);
      std::vector<double> du;
      for (int32_t x : u) du.push_back(x * 0.25);
      std::vector<Tensor> out = RunOp("ScatterNd",
                                      {Fed(indices), Fed(MakeTensor<double>(GR_DOUBLE, ud, du)), Fed(Vec(shape, idt))},
                                      TAttr(GR_DOUBLE) + TypeAttr("Tindices", DtEnum(idt)));
      ASSERT_EQ(out.size(), 1u);
      const std::vector<double> want = RefScatterNd(indices, du, shape);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(out[0].data<double>()[i], want[i]) << i;
      out = RunOp("ScatterNd", {Fed(indices), Fed(MakeTensor<int32_t>(GR_INT32, ud, u)), Fed(Vec(shape, idt))},
                  TAttr(GR_INT32) + TypeAttr("Tindices", DtEnum(idt)));
      ASSERT_EQ(out.size(), 1u);
      const std::vector<double> wi = RefScatterNd(indices, u, shape);
      for (size_t i = 0; i < wi.size(); ++i) EXPECT_EQ(out[0].data<int32_t>()[i], static_cast<int32_t>(wi[i])) << i;
    }
  }
}

TEST(ScatterNdTest, BoolOrsAndLargeSlices) {
  // bool: duplicates OR together.
  const Tensor indices = IntTensor(GR_INT32, {3, 1}, {1, 1, 3});
  std::vector<Tensor> out =
      RunOp("ScatterNd", {Fed(indices), Fed(BoolTensor({3}, {false, true, true})), Fed(Vec({4}))},
            TAttr(GR_BOOL) + TypeAttr("Tindices", "DT_INT32"));
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<bool>(out[0], {false, true, false, true});
  // Wide slices split over the pool by columns; duplicates still add up.
  std::mt19937 rng(28);
  const Dims shape = {6, 9000};
  const Tensor idx = IntTensor(GR_INT64, {5, 1}, {2, 0, 2, 5, 2});
  std::vector<float> u = RandomValues<float>(5 * 9000, &rng);
  const std::vector<double> want = RefScatterNd(idx, u, shape);
  for (int threads : {1, 2}) {
    out = RunOp("ScatterNd", {Fed(idx), Fed(MakeTensor<float>(GR_FLOAT, {5, 9000}, u)), Fed(Vec(shape, GR_INT64))},
                TAttr(GR_FLOAT) + TypeAttr("Tindices", "DT_INT64"), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(out[0].data<float>()[i], want[i], 1e-4) << i;
  }
}

TEST(ScatterNdTest, Errors) {
  const std::string attrs = TAttr(GR_FLOAT) + TypeAttr("Tindices", "DT_INT32");
  const Tensor u = MakeTensor<float>(GR_FLOAT, {2}, {1, 2});
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ScatterNd", {Fed(IntTensor(GR_INT32, {2, 1}, {0, 4})), Fed(u), Fed(Vec({4}))}, attrs, 1, &out),
               Code::kInvalidArgument, "indices[1] = [4] does not index into shape [4]");
  EXPECT_ERROR(TryOp("ScatterNd", {Fed(IntTensor(GR_INT32, {2, 1}, {0, -1})), Fed(u), Fed(Vec({4}))}, attrs, 1, &out),
               Code::kInvalidArgument, "indices[1] = [-1] does not index into shape [4]");
  EXPECT_ERROR(TryOp("ScatterNd", {Fed(IntTensor(GR_INT32, {3, 1}, {0, 1, 2})), Fed(u), Fed(Vec({4}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Dimensions [0,1) of indices[shape=[3,1]] must match dimensions [0,1) of updates[shape=[2]]");
  EXPECT_ERROR(TryOp("ScatterNd", {Fed(IntTensor(GR_INT32, {2, 1}, {0, 1})), Fed(MakeTensor<float>(GR_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6})),
                                   Fed(Vec({4, 2}))},
                     attrs, 1, &out),
               Code::kInvalidArgument, "Dimensions [1,2) of input[shape=[4,2]] must match dimensions [1,2) of updates");
  EXPECT_ERROR(TryOp("ScatterNd", {Fed(IntTensor(GR_INT32, {2, 1}, {0, 1})), Fed(u), Fed(Vec({}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Output must be at least 1-D");
  EXPECT_ERROR(TryOp("ScatterNd", {Fed(IntTensor(GR_INT32, {2, 1}, {0, 1})), Fed(u), Konst(Vec({}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Output must be at least 1-D");
}

// ================================================================ OneHot

TEST(OneHotTest, AxesIndexTypesAndOutOfRange) {
  std::mt19937 rng(37);
  int case_no = 0;
  for (DataType ti : {GR_INT32, GR_INT64, GR_UINT8, GR_INT8}) {
    for (DataType dt : {GR_FLOAT, GR_INT64, GR_BOOL, GR_STRING, GR_BFLOAT16}) {
      for (int rep = 0; rep < 3; ++rep, ++case_no) {
        const int r = static_cast<int>(rng() % 3);
        Dims id;
        for (int d = 0; d < r; ++d) id.push_back(1 + static_cast<int64_t>(rng() % 4));
        const int64_t depth = static_cast<int64_t>(rng() % 5);
        std::vector<int64_t> v;
        for (int64_t i = 0; i < NumElements(id); ++i) {
          // In range, past the end, and (signed types) negative: off value.
          int64_t x = static_cast<int64_t>(rng() % (depth + 2));
          if (ti != GR_UINT8 && rng() % 5 == 0) x = -1;
          v.push_back(x);
        }
        const Tensor indices = IntTensor(ti, id, v);
        const int axis = static_cast<int>(rng() % (r + 2)) - 1;  // -1..r
        const Tensor on = Random(dt, {}, 4000 + case_no), off = Random(dt, {}, 5000 + case_no);
        std::vector<Tensor> out =
            RunOp("OneHot", {Fed(indices), Arg{IntScalar(depth), rep == 0}, Fed(on), Fed(off)},
                  TAttr(dt) + TypeAttr("TI", DtEnum(ti)) + IntAttr("axis", axis));
        ASSERT_EQ(out.size(), 1u);
        const int a = axis == -1 ? r : axis;
        Dims want = id;
        want.insert(want.begin() + a, depth);
        std::vector<Ref> ref;
        for (int64_t f = 0; f < NumElements(want); ++f) {
          Dims oi = Unravel(f, want);
          const int64_t dpos = oi[a];
          oi.erase(oi.begin() + a);
          const int64_t x = v[static_cast<size_t>(Ravel(oi, id))];
          ref.push_back(x == dpos ? Ref{0, 0} : Ref{1, 0});
        }
        ExpectGathered(out[0], want, {&on, &off}, ref, nullptr, "case " + std::to_string(case_no));
      }
    }
  }
}

TEST(OneHotTest, LargeAndErrors) {
  std::mt19937 rng(38);
  std::vector<int64_t> v = RandomIndices(4000, 12, &rng);
  const Tensor indices = IntTensor(GR_INT64, {4000}, v);
  const Tensor on = Tensor::Scalar<float>(GR_FLOAT, 1.5f), off = Tensor::Scalar<float>(GR_FLOAT, -0.5f);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("OneHot", {Fed(indices), Fed(IntScalar(10)), Fed(on), Fed(off)},
                                    TAttr(GR_FLOAT) + IntAttr("axis", 0), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(DimsOf(out[0]), (Dims{10, 4000}));
    for (int64_t d = 0; d < 10; ++d)
      for (int64_t i = 0; i < 4000; ++i)
        ASSERT_EQ(out[0].data<float>()[d * 4000 + i], v[i] == d ? 1.5f : -0.5f);
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("OneHot", {Fed(indices), Fed(IntScalar(-1)), Fed(on), Fed(off)}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "depth must be non-negative, got: -1");
  EXPECT_ERROR(TryOp("OneHot", {Fed(indices), Konst(IntScalar(-1)), Fed(on), Fed(off)}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "depth must be non-negative, got: -1");
  EXPECT_ERROR(TryOp("OneHot", {Fed(indices), Fed(IntScalar(3)), Fed(Random(GR_FLOAT, {2}, 1)), Fed(off)},
                     TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "on_value must be a scalar");
  EXPECT_ERROR(TryOp("OneHot", {Fed(indices), Fed(IntScalar(3)), Fed(on), Fed(off)}, TAttr(GR_FLOAT) + IntAttr("axis", 3),
                     1, &out),
               Code::kInvalidArgument, "Expected axis to be -1 or between [0, 2). But received: 3");
}

}  // namespace
}  // namespace graphrt
