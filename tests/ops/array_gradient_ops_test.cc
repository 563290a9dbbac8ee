// Array ops that TensorFlow 1's tf.gradients emits: InvertPermutation,
// Gather (v1), ConcatOffset, ReverseSequence, SparseToDense, Unique,
// UniqueV2, BroadcastArgs, StridedSliceGrad, MirrorPadGrad and
// TensorScatterUpdate/Add/Sub.
//
// Answers come from TensorFlow's documented examples (the op docs' worked
// examples), from naive references written here, and, for the two gradient
// kernels, from their defining property: StridedSliceGrad and MirrorPadGrad
// are the adjoints of StridedSlice and MirrorPad, so for random x and dy
// sum(dy * F(x)) == sum(x * F'(dy)), exactly on integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "array_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;              // NOLINT
using namespace ::graphrt::testing::array_test;  // NOLINT

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v.push_back(t.dtype() == GR_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i]);
  }
  return v;
}

std::vector<std::string> StringsOf(const Tensor& t) {
  std::vector<std::string> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.emplace_back(t.string_at(i));
  return v;
}

// Random int64 values in [-50, 50]: products and their sums stay exact.
Tensor SmallInts(const Dims& dims, std::mt19937* rng) {
  Tensor t(GR_INT64, TensorShape(dims));
  for (int64_t i = 0; i < t.NumElements(); ++i)
    t.data<int64_t>()[i] = static_cast<int64_t>((*rng)() % 101) - 50;
  return t;
}

int64_t Dot(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.NumElements(), b.NumElements());
  int64_t s = 0;
  for (int64_t i = 0; i < a.NumElements() && i < b.NumElements(); ++i)
    s += a.data<int64_t>()[i] * b.data<int64_t>()[i];
  return s;
}

// A Placeholder with a known shape, so that shape functions see it.
std::string ShapedPlaceholder(const std::string& name, const std::string& dt, const Dims& dims) {
  return NodeText(
      name, "Placeholder", {},
      TypeAttr("dtype", dt) + "attr { key: \"shape\" value { shape " + ShapeProto(dims) + " } } ");
}

// A MatMul consumer whose shape function reports the dims it was given
// ("[.,5] x [4,7]" fails with "5 and 4"): how inferred shapes are observed.
std::string MatMulAfter(const std::string& src) {
  return ConstFloat("w", {4, 7}, std::vector<float>(28, 1.0f)) +
         NodeText("mm", "MatMul", {src, "w"}, TypeAttr("T", "DT_FLOAT"));
}

// ===================================================== InvertPermutation

TEST(InvertPermutationTest, DocExampleAndRandom) {
  // TensorFlow's doc: x = [3, 4, 0, 2, 1] -> y = [2, 4, 3, 0, 1].
  for (DataType dt : {GR_INT32, GR_INT64}) {
    std::vector<Tensor> out =
        RunOp("InvertPermutation", {Fed(Vec({3, 4, 0, 2, 1}, dt))}, TAttr(dt));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), dt);
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{2, 4, 3, 0, 1}));
  }
  std::mt19937 rng(3);
  std::vector<int64_t> perm(1000);
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<Tensor> out = RunOp("InvertPermutation", {Fed(Vec(perm))}, TAttr(GR_INT32));
  ASSERT_EQ(out.size(), 1u);
  const std::vector<int64_t> y = Ints(out[0]);
  for (size_t i = 0; i < perm.size(); ++i) ASSERT_EQ(y[perm[i]], static_cast<int64_t>(i));
  // Empty permutation.
  out = RunOp("InvertPermutation", {Fed(Vec({}))}, TAttr(GR_INT32));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].NumElements(), 0);
}

TEST(InvertPermutationTest, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("InvertPermutation", {Fed(Vec({0, 3, 1}))}, TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "x[1] = 3 is not between 0 and 3");
  EXPECT_ERROR(
      TryOp("InvertPermutation", {Fed(Vec({0, -1, 1}, GR_INT64))}, TAttr(GR_INT64), 1, &out),
      Code::kInvalidArgument, "x[1] = -1 is not between 0 and 3");
  EXPECT_ERROR(TryOp("InvertPermutation", {Fed(Vec({2, 0, 2}))}, TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "2 is duplicated in the input (x[0] and x[2])");
  EXPECT_ERROR(TryOp("InvertPermutation", {Fed(IntTensor(GR_INT32, {2, 2}, {0, 1, 2, 3}))},
                     TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "invert_permutation expects a 1D vector");
  // A constant of the wrong rank is caught by the shape function.
  EXPECT_ERROR(TryOp("InvertPermutation", {Konst(IntTensor(GR_INT32, {2, 2}, {0, 1, 2, 3}))},
                     TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "rank");
}

// ================================================================ Gather

TEST(GatherTest, AxisZeroAllDtypesAgainstReference) {
  std::mt19937 rng(5);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (DataType idx_dt : {GR_INT32, GR_INT64}) {
      const Dims pdims = {5, 1 + static_cast<int64_t>(rng() % 3), 2};
      const Dims idims = {2, 3};
      std::vector<int64_t> iv;
      for (int i = 0; i < 6; ++i) iv.push_back(static_cast<int64_t>(rng() % 5));
      const Tensor params = Random(dt, pdims, 40 + case_no);
      const Tensor indices = IntTensor(idx_dt, idims, iv);
      for (bool validate : {true, false}) {
        std::vector<Tensor> out = RunOp("Gather", {Fed(params), Fed(indices)},
                                        TAttr(dt, "Tparams") + TAttr(idx_dt, "Tindices") +
                                            BoolAttr("validate_indices", validate));
        ASSERT_EQ(out.size(), 1u);
        // out[i, j, ...] = params[indices[i, j], ...].
        const int64_t inner = pdims[1] * pdims[2];
        std::vector<Ref> ref;
        for (size_t k = 0; k < iv.size(); ++k)
          for (int64_t e = 0; e < inner; ++e) ref.push_back({0, iv[k] * inner + e});
        ExpectGathered(out[0], {2, 3, pdims[1], 2}, {&params}, ref, nullptr,
                       "case " + std::to_string(case_no));
      }
      ++case_no;
    }
  }
}

TEST(GatherTest, ScalarIndexErrorsAndShape) {
  // A scalar index drops the leading dim: params[2] of [[1,2],[3,4],[5,6]].
  const Tensor params = IntTensor(GR_INT32, {3, 2}, {1, 2, 3, 4, 5, 6});
  const std::string attrs = TAttr(GR_INT32, "Tparams") + TAttr(GR_INT32, "Tindices");
  std::vector<Tensor> out = RunOp("Gather", {Fed(params), Fed(IntScalar(2))}, attrs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2}));
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{5, 6}));
  // Bad indices are errors whether validate_indices is set or not.
  for (bool validate : {true, false}) {
    EXPECT_ERROR(TryOp("Gather", {Fed(params), Fed(Vec({0, 3}))},
                       attrs + BoolAttr("validate_indices", validate), 1, &out),
                 Code::kInvalidArgument, "indices[1] = 3 is not in [0, 3)");
  }
  EXPECT_ERROR(TryOp("Gather", {Fed(params), Fed(Vec({-1}))}, attrs, 1, &out),
               Code::kInvalidArgument, "indices[0] = -1 is not in [0, 3)");
  EXPECT_ERROR(TryOp("Gather", {Fed(IntScalar(4)), Fed(Vec({0}))}, attrs, 1, &out),
               Code::kInvalidArgument, "params must be at least 1 dimensional");
  // Shape function: indices [2] + params [3,5][1:] = [2,5].
  const std::string g =
      ShapedPlaceholder("p", "DT_FLOAT", {3, 5}) + ConstInt32("i", {0, 2}) +
      NodeText("r", "Gather", {"p", "i"},
               TypeAttr("Tparams", "DT_FLOAT") + TypeAttr("Tindices", "DT_INT32")) +
      MatMulAfter("r");
  EXPECT_ERROR(TryRun(g, {{"p:0", Tensor(GR_FLOAT, TensorShape({3, 5}))}}, {"mm:0"}),
               Code::kInvalidArgument, "5 and 4");
}

// ========================================================== ConcatOffset

TEST(ConcatOffsetTest, DocExample) {
  // TensorFlow's doc: x [2,2,7], y [2,3,7], z [2,5,7] concatenated along
  // dim 1 (the doc writes 2, but only dim 1 differs) -> offsets [0,0,0],
  // [0,2,0], [0,5,0].
  for (int64_t axis : {1, -2}) {
    std::vector<Tensor> out =
        RunOp("ConcatOffset",
              {Fed(IntScalar(axis)), Fed(Vec({2, 2, 7})), Fed(Vec({2, 3, 7})), Fed(Vec({2, 5, 7}))},
              IntAttr("N", 3), 3);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 0, 0}));
    EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 2, 0}));
    EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{0, 5, 0}));
  }
}

TEST(ConcatOffsetTest, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ConcatOffset", {Fed(IntScalar(3)), Fed(Vec({2, 2})), Fed(Vec({2, 3}))},
                     IntAttr("N", 2), 2, &out),
               Code::kInvalidArgument, "Concat dim is out of range: 3 vs. 2");
  EXPECT_ERROR(TryOp("ConcatOffset", {Fed(IntScalar(1)), Fed(Vec({2, 2})), Fed(Vec({3, 3}))},
                     IntAttr("N", 2), 2, &out),
               Code::kInvalidArgument,
               "All dimensions except 1 must match. Input 1 has shape [3,3]",
               "input 0 with shape [2,2]");
  EXPECT_ERROR(TryOp("ConcatOffset", {Fed(IntScalar(0)), Fed(Vec({2, 2})), Fed(Vec({2, 3, 1}))},
                     IntAttr("N", 2), 2, &out),
               Code::kInvalidArgument, "input 1 should contain 2 elements, but got 3");
  EXPECT_ERROR(TryOp("ConcatOffset", {Fed(Vec({0})), Fed(Vec({2})), Fed(Vec({3}))}, IntAttr("N", 2),
                     2, &out),
               Code::kInvalidArgument, "Concat dim tensor should be a scalar integer");
  EXPECT_ERROR(
      TryOp("ConcatOffset",
            {Fed(IntScalar(0)), Fed(Vec({2000000000})), Fed(Vec({2000000000})), Fed(Vec({1}))},
            IntAttr("N", 3), 3, &out),
      Code::kInvalidArgument, "more than int32 holds");
}

// ======================================================= ReverseSequence

// out[idx] = in[idx with idx[sd] reversed within the first lens[idx[bd]]].
std::vector<Ref> RefReverseSequence(const Dims& dims, int bd, int sd,
                                    const std::vector<int64_t>& lens) {
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(dims); ++i) {
    Dims idx = Unravel(i, dims);
    const int64_t l = lens[idx[bd]];
    if (idx[sd] < l) idx[sd] = l - 1 - idx[sd];
    ref.push_back({0, Ravel(idx, dims)});
  }
  return ref;
}

TEST(ReverseSequenceTest, DocExamplesAllDtypes) {
  // TensorFlow's doc, first example: batch_dim 0, seq_dim 1, input dims
  // (4, 8, ...), seq_lengths [7, 2, 3, 5]; second: batch_dim 2, seq_dim 0,
  // input dims (8, ?, 4, ...).
  struct Case {
    Dims dims;
    int bd, sd;
  };
  const std::vector<int64_t> lens = {7, 2, 3, 5};
  int case_no = 0;
  for (const Case& c : {Case{{4, 8, 3}, 0, 1}, Case{{8, 2, 4, 2}, 2, 0}}) {
    for (DataType dt : MovementDtypes()) {
      for (DataType len_dt : {GR_INT64, GR_INT32}) {
        const Tensor x = Random(dt, c.dims, 70 + case_no++);
        std::vector<Tensor> out = RunOp("ReverseSequence", {Fed(x), Fed(Vec(lens, len_dt))},
                                        TAttr(dt) + TAttr(len_dt, "Tlen") +
                                            IntAttr("batch_dim", c.bd) + IntAttr("seq_dim", c.sd));
        ASSERT_EQ(out.size(), 1u);
        ExpectGathered(out[0], c.dims, {&x}, RefReverseSequence(c.dims, c.bd, c.sd, lens), nullptr,
                       "case " + std::to_string(case_no));
      }
    }
  }
}

TEST(ReverseSequenceTest, RandomAndLarge) {
  std::mt19937 rng(9);
  for (int rep = 0; rep < 20; ++rep) {
    const int rank = 2 + static_cast<int>(rng() % 3);
    Dims dims;
    for (int d = 0; d < rank; ++d) dims.push_back(1 + static_cast<int64_t>(rng() % 5));
    const int bd = static_cast<int>(rng() % rank);
    int sd = static_cast<int>(rng() % (rank - 1));
    if (sd >= bd) ++sd;
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < dims[bd]; ++b)
      lens.push_back(static_cast<int64_t>(rng() % (dims[sd] + 1)));
    const Tensor x = Random(GR_FLOAT, dims, 200 + rep);
    std::vector<Tensor> out =
        RunOp("ReverseSequence", {Fed(x), Fed(Vec(lens, GR_INT64))},
              TAttr(GR_FLOAT) + IntAttr("batch_dim", bd) + IntAttr("seq_dim", sd));
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], dims, {&x}, RefReverseSequence(dims, bd, sd, lens), nullptr,
                   "rep " + std::to_string(rep));
  }
  // Big enough for the copies to split over the pool; one thread too.
  const Dims dims = {3, 200, 300};
  const std::vector<int64_t> lens = {200, 17, 0};
  const Tensor x = Random(GR_INT32, dims, 5);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("ReverseSequence", {Fed(x), Fed(Vec(lens, GR_INT64))},
                                    TAttr(GR_INT32) + IntAttr("seq_dim", 1), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], dims, {&x}, RefReverseSequence(dims, 0, 1, lens));
  }
}

TEST(ReverseSequenceTest, Errors) {
  const Tensor x = Random(GR_FLOAT, {2, 3}, 1);
  const std::string attrs = TAttr(GR_FLOAT) + IntAttr("seq_dim", 1);
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ReverseSequence", {Fed(x), Fed(Vec({1, 4}, GR_INT64))}, attrs, 1, &out),
               Code::kInvalidArgument, "seq_lengths[1] = 4 is not in [0, 3]");
  EXPECT_ERROR(TryOp("ReverseSequence", {Fed(x), Fed(Vec({-1, 2}, GR_INT64))}, attrs, 1, &out),
               Code::kInvalidArgument, "seq_lengths[0] = -1 is not in [0, 3]");
  EXPECT_ERROR(TryOp("ReverseSequence", {Fed(x), Fed(Vec({1, 2, 3}, GR_INT64))}, attrs, 1, &out),
               Code::kInvalidArgument, "Length of seq_lengths != input.dims(0), (3 vs. 2)");
  EXPECT_ERROR(TryOp("ReverseSequence", {Fed(x), Fed(Vec({1, 2}, GR_INT64))},
                     TAttr(GR_FLOAT) + IntAttr("seq_dim", 0), 1, &out),
               Code::kInvalidArgument, "batch_dim == seq_dim == 0");
  EXPECT_ERROR(TryOp("ReverseSequence", {Fed(x), Fed(Vec({1, 2}, GR_INT64))},
                     TAttr(GR_FLOAT) + IntAttr("seq_dim", 2), 1, &out),
               Code::kInvalidArgument, "seq_dim must be < input rank");
  EXPECT_ERROR(TryOp("ReverseSequence", {Fed(x), Fed(Vec({1, 2}, GR_INT64))},
                     TAttr(GR_FLOAT) + IntAttr("seq_dim", 1) + IntAttr("batch_dim", -1), 1, &out),
               Code::kInvalidArgument, "Invalid batch_dim -1");
  // Known shapes: the shape function checks the dims and merges the batch.
  const std::string g = ShapedPlaceholder("x", "DT_FLOAT", {2, 3}) +
                        NodeText("r", "ReverseSequence", {"x", "l"},
                                 attrs + TAttr(GR_INT32, "Tlen") + IntAttr("batch_dim", 2)) +
                        ConstInt32("l", {1, 1});
  EXPECT_ERROR(TryRun(g, {{"x:0", x}}, {"r:0"}), Code::kInvalidArgument,
               "batch_dim must be < input rank: 2 vs. 2");
}

// ========================================================= SparseToDense

TEST(SparseToDenseTest, ScalarVectorMatrixIndices) {
  const std::string i32 = TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices");
  // Scalar index: dense[i] = (i == 2 ? 7 : 0).
  std::vector<Tensor> out =
      RunOp("SparseToDense",
            {Fed(IntScalar(2)), Fed(Vec({5})), Fed(IntScalar(7)), Fed(IntScalar(0))}, i32);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 0, 7, 0, 0}));
  // Vector indices: dense[indices[i]] = values[i], int64 indices.
  out = RunOp(
      "SparseToDense",
      {Fed(Vec({0, 3}, GR_INT64)), Fed(Vec({5}, GR_INT64)), Fed(Vec({4, 9})), Fed(IntScalar(-1))},
      TAttr(GR_INT32) + TAttr(GR_INT64, "Tindices"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{4, -1, -1, 9, -1}));
  // Matrix indices with one scalar value for all of them.
  out = RunOp("SparseToDense",
              {Fed(IntTensor(GR_INT32, {2, 2}, {0, 1, 1, 0})), Fed(Vec({2, 3})), Fed(IntScalar(5)),
               Fed(IntScalar(1))},
              i32);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 3}));
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1, 5, 1, 5, 1, 1}));
  // TensorFlow's sparse_tensor_to_dense doc example, with strings: [0,1] a,
  // [0,3] b, [2,0] c in a [3,5] of "x".
  out = RunOp("SparseToDense",
              {Fed(IntTensor(GR_INT64, {3, 2}, {0, 1, 0, 3, 2, 0})), Fed(Vec({3, 5}, GR_INT64)),
               Fed(Strings({3}, {"a", "b", "c"})), Fed(Strings({}, {"x"}))},
              TAttr(GR_STRING) + TAttr(GR_INT64, "Tindices"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(StringsOf(out[0]), (std::vector<std::string>{"x", "a", "x", "b", "x", "x", "x", "x",
                                                         "x", "x", "c", "x", "x", "x", "x"}));
  // No indices at all: all default; float values.
  Tensor def(GR_FLOAT, TensorShape({}));
  def.data<float>()[0] = 2.5f;
  out = RunOp("SparseToDense",
              {Fed(IntTensor(GR_INT32, {0, 2}, {})), Fed(Vec({2, 2})),
               Fed(Tensor(GR_FLOAT, TensorShape({0}))), Fed(def)},
              TAttr(GR_FLOAT) + TAttr(GR_INT32, "Tindices"));
  ASSERT_EQ(out.size(), 1u);
  ExpectValuesEq<float>(out[0], {2.5f, 2.5f, 2.5f, 2.5f});
}

TEST(SparseToDenseTest, RandomAgainstReference) {
  std::mt19937 rng(17);
  for (int rep = 0; rep < 20; ++rep) {
    const Dims shape = {1 + static_cast<int64_t>(rng() % 4), 1 + static_cast<int64_t>(rng() % 4),
                        2};
    const int64_t total = NumElements(shape);
    // Distinct positions, sorted (what validate_indices demands).
    std::vector<int64_t> flat;
    for (int64_t i = 0; i < total; ++i)
      if (rng() % 3 == 0) flat.push_back(i);
    std::vector<int64_t> iv;
    for (int64_t f : flat) {
      const Dims idx = Unravel(f, shape);
      iv.insert(iv.end(), idx.begin(), idx.end());
    }
    const int64_t n = static_cast<int64_t>(flat.size());
    const Tensor values = Random(GR_DOUBLE, {n}, 300 + rep);
    const Tensor def = Random(GR_DOUBLE, {}, 400 + rep);
    std::vector<Tensor> out = RunOp(
        "SparseToDense",
        {Fed(IntTensor(GR_INT64, {n, 3}, iv)), Fed(Vec(shape, GR_INT64)), Fed(values), Fed(def)},
        TAttr(GR_DOUBLE) + TAttr(GR_INT64, "Tindices"));
    ASSERT_EQ(out.size(), 1u);
    std::vector<Ref> ref(static_cast<size_t>(total), Ref{1, 0});
    for (int64_t k = 0; k < n; ++k) ref[flat[k]] = {0, k};
    ExpectGathered(out[0], shape, {&values, &def}, ref, nullptr, "rep " + std::to_string(rep));
  }
}

TEST(SparseToDenseTest, ValidateIndicesOrderAndRepeats) {
  const std::string attrs = TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices");
  const Tensor unsorted = IntTensor(GR_INT32, {3, 2}, {0, 1, 2, 0, 1, 4});
  const Tensor repeated = IntTensor(GR_INT32, {3, 2}, {0, 1, 1, 4, 1, 4});
  const Tensor vals = Vec({10, 20, 30});
  std::vector<Tensor> out;
  EXPECT_ERROR(
      TryOp("SparseToDense", {Fed(unsorted), Fed(Vec({3, 5})), Fed(vals), Fed(IntScalar(0))}, attrs,
            1, &out),
      Code::kInvalidArgument, "indices[2] = [1,4] is out of order");
  EXPECT_ERROR(
      TryOp("SparseToDense", {Fed(repeated), Fed(Vec({3, 5})), Fed(vals), Fed(IntScalar(0))}, attrs,
            1, &out),
      Code::kInvalidArgument, "indices[2] = [1,4] is repeated");
  // validate_indices false: any order; a repeated index keeps its last value.
  const std::string lax = attrs + BoolAttr("validate_indices", false);
  out =
      RunOp("SparseToDense", {Fed(unsorted), Fed(Vec({3, 5})), Fed(vals), Fed(IntScalar(0))}, lax);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 10, 0, 0, 0, 0, 0, 0, 0, 30, 20, 0, 0, 0, 0}));
  out =
      RunOp("SparseToDense", {Fed(repeated), Fed(Vec({3, 5})), Fed(vals), Fed(IntScalar(0))}, lax);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 10, 0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0, 0}));
  // Out of bounds is an error either way.
  for (const std::string& a : {attrs, lax}) {
    EXPECT_ERROR(TryOp("SparseToDense",
                       {Fed(IntTensor(GR_INT32, {2, 2}, {0, 1, 3, 0})), Fed(Vec({3, 5})),
                        Fed(IntScalar(1)), Fed(IntScalar(0))},
                       a, 1, &out),
                 Code::kInvalidArgument,
                 "indices[1] = [3,0] is out of bounds: need 0 <= index < [3,5]");
    EXPECT_ERROR(
        TryOp("SparseToDense",
              {Fed(Vec({-1})), Fed(Vec({3})), Fed(IntScalar(1)), Fed(IntScalar(0))}, a, 1, &out),
        Code::kInvalidArgument, "indices[0] = [-1] is out of bounds");
  }
}

TEST(SparseToDenseTest, ShapeErrors) {
  const std::string attrs = TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices");
  const Tensor idx = IntTensor(GR_INT32, {2, 2}, {0, 1, 1, 0});
  std::vector<Tensor> out;
  EXPECT_ERROR(
      TryOp("SparseToDense", {Fed(idx), Fed(Vec({2, 2})), Fed(Vec({1, 2, 3})), Fed(IntScalar(0))},
            attrs, 1, &out),
      Code::kInvalidArgument, "sparse_values has incorrect shape [3], should be [] or [2]");
  EXPECT_ERROR(
      TryOp("SparseToDense", {Fed(idx), Fed(Vec({2, 2, 2})), Fed(IntScalar(1)), Fed(IntScalar(0))},
            attrs, 1, &out),
      Code::kInvalidArgument, "output_shape has incorrect number of elements: 3 should be: 2");
  EXPECT_ERROR(
      TryOp("SparseToDense", {Fed(idx), Fed(Vec({2, 2})), Fed(IntScalar(1)), Fed(Vec({0}))}, attrs,
            1, &out),
      Code::kInvalidArgument, "default_value should be a scalar");
  EXPECT_ERROR(
      TryOp("SparseToDense", {Fed(idx), Fed(Vec({2, -2})), Fed(IntScalar(1)), Fed(IntScalar(0))},
            attrs, 1, &out),
      Code::kInvalidArgument, "negative dimension");
  EXPECT_ERROR(TryOp("SparseToDense",
                     {Fed(IntTensor(GR_INT32, {1, 1, 2}, {0, 0})), Fed(Vec({2, 2})),
                      Fed(IntScalar(1)), Fed(IntScalar(0))},
                     attrs, 1, &out),
               Code::kInvalidArgument, "sparse_indices should be a scalar, vector, or matrix");
  // A huge constant shape is refused by the shape function, before any
  // allocation.
  EXPECT_ERROR(
      TryOp("SparseToDense",
            {Fed(IntTensor(GR_INT64, {2, 2}, {0, 1, 1, 0})),
             Konst(Vec({1 << 30, 1 << 30}, GR_INT64)), Fed(IntScalar(1)), Fed(IntScalar(0))},
            TAttr(GR_INT32) + TAttr(GR_INT64, "Tindices"), 1, &out),
      Code::kInvalidArgument, "more than 2^58 elements");
}

// ================================================================ Unique

TEST(UniqueTest, DocExample) {
  // TensorFlow's doc: x = [1, 1, 2, 4, 4, 4, 7, 8, 8] -> y = [1, 2, 4, 7, 8],
  // idx = [0, 0, 1, 2, 2, 2, 3, 4, 4].
  for (DataType out_idx : {GR_INT32, GR_INT64}) {
    std::vector<Tensor> out = RunOp("Unique", {Fed(Vec({1, 1, 2, 4, 4, 4, 7, 8, 8}))},
                                    TAttr(GR_INT32) + TAttr(out_idx, "out_idx"), 2);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1, 2, 4, 7, 8}));
    EXPECT_EQ(out[1].dtype(), out_idx);
    EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 0, 1, 2, 2, 2, 3, 4, 4}));
  }
  // First-occurrence order, not sorted order.
  std::vector<Tensor> out =
      RunOp("Unique", {Fed(Vec({5, 3, 5, 1, 3}, GR_INT64))}, TAttr(GR_INT64), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 1, 0, 2, 1}));
}

TEST(UniqueTest, StringsFloatsAndRandom) {
  std::vector<Tensor> out =
      RunOp("Unique", {Fed(Strings({6}, {"b", "a", "b", "", "a", std::string(30, 'z')}))},
            TAttr(GR_STRING), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(StringsOf(out[0]), (std::vector<std::string>{"b", "a", "", std::string(30, 'z')}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 1, 0, 2, 1, 3}));
  // Floats compare by value: -0 equals 0; a NaN equals nothing.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  out = RunOp("Unique", {Fed(MakeTensor<float>(GR_FLOAT, {5}, {0.0f, -0.0f, nan, 1.5f, nan}))},
              TAttr(GR_FLOAT), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].NumElements(), 4);
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 0, 1, 2, 3}));
  // Random values of several dtypes against an O(n^2) reference.
  std::mt19937 rng(23);
  for (DataType dt :
       {GR_INT8, GR_UINT8, GR_INT16, GR_INT32, GR_INT64, GR_BOOL, GR_HALF, GR_DOUBLE}) {
    const int64_t n = 200;
    Tensor x = Random(dt, {n}, static_cast<uint32_t>(rng()));
    // Few distinct values: copy element (i % 7) of itself around.
    const size_t es = ElemSize(dt);
    for (int64_t i = 7; i < n; ++i) {
      const int64_t from = static_cast<int64_t>(rng() % 7);
      std::memcpy(static_cast<char*>(x.raw_data()) + i * es,
                  static_cast<char*>(x.raw_data()) + from * es, es);
    }
    out = RunOp("Unique", {Fed(x)}, TAttr(dt) + TAttr(GR_INT64, "out_idx"), 2);
    ASSERT_EQ(out.size(), 2u);
    std::vector<Ref> yref;
    std::vector<int64_t> want_idx;
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = 0;
      while (k < static_cast<int64_t>(yref.size()) && !SameElement(x, yref[k].second, x, i)) ++k;
      if (k == static_cast<int64_t>(yref.size())) yref.push_back({0, i});
      want_idx.push_back(k);
    }
    ExpectGathered(out[0], {static_cast<int64_t>(yref.size())}, {&x}, yref, nullptr, DtEnum(dt));
    EXPECT_EQ(Ints(out[1]), want_idx) << DtEnum(dt);
  }
}

TEST(UniqueV2Test, AxisDocExamples) {
  // TensorFlow's doc (tf.unique with axis): x = [[1, 0, 0], [1, 0, 0],
  // [2, 0, 0]]; axis 0 -> y = [[1, 0, 0], [2, 0, 0]], idx = [0, 0, 1];
  // axis 1 -> y = [[1, 0], [1, 0], [2, 0]], idx = [0, 1, 1].
  const Tensor x = IntTensor(GR_INT32, {3, 3}, {1, 0, 0, 1, 0, 0, 2, 0, 0});
  for (DataType axis_dt : {GR_INT64, GR_INT32}) {
    std::vector<Tensor> out = RunOp("UniqueV2", {Fed(x), Fed(Vec({0}, axis_dt))},
                                    TAttr(GR_INT32) + TAttr(axis_dt, "Taxis"), 2);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(DimsOf(out[0]), (Dims{2, 3}));
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1, 0, 0, 2, 0, 0}));
    EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 0, 1}));
    out = RunOp("UniqueV2", {Fed(x), Fed(Vec({1}, axis_dt))},
                TAttr(GR_INT32) + TAttr(axis_dt, "Taxis"), 2);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(DimsOf(out[0]), (Dims{3, 2}));
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1, 0, 1, 0, 2, 0}));
    EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 1, 1}));
  }
  // Negative axis; string slices.
  const Tensor s = Strings({2, 3}, {"a", "b", "a", "c", "d", "c"});
  std::vector<Tensor> out =
      RunOp("UniqueV2", {Fed(s), Fed(Vec({-1}, GR_INT64))}, TAttr(GR_STRING), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
  EXPECT_EQ(StringsOf(out[0]), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 1, 0}));
  // An empty axis is Unique over a vector.
  out = RunOp("UniqueV2", {Fed(Vec({4, 4, 2})), Fed(Vec({}, GR_INT64))}, TAttr(GR_INT32), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 0, 1}));
}

TEST(UniqueTest, Errors) {
  std::vector<Tensor> out;
  EXPECT_ERROR(
      TryOp("Unique", {Fed(IntTensor(GR_INT32, {2, 2}, {1, 2, 3, 4}))}, TAttr(GR_INT32), 2, &out),
      Code::kInvalidArgument, "unique expects a 1D vector");
  const Tensor x = IntTensor(GR_INT32, {2, 2}, {1, 2, 3, 4});
  EXPECT_ERROR(TryOp("UniqueV2", {Fed(x), Fed(Vec({2}, GR_INT64))}, TAttr(GR_INT32), 2, &out),
               Code::kInvalidArgument, "axis 2 is not in [-2, 2)");
  EXPECT_ERROR(TryOp("UniqueV2", {Fed(x), Fed(Vec({0, 1}, GR_INT64))}, TAttr(GR_INT32), 2, &out),
               Code::kInvalidArgument,
               "axis does not support input tensors larger than 1 elements");
  EXPECT_ERROR(TryOp("UniqueV2", {Fed(x), Fed(IntScalar(0, GR_INT64))}, TAttr(GR_INT32), 2, &out),
               Code::kInvalidArgument, "axis expects a 1D vector");
  EXPECT_ERROR(TryOp("UniqueV2", {Fed(x), Fed(Vec({}, GR_INT64))}, TAttr(GR_INT32), 2, &out),
               Code::kInvalidArgument, "unique expects a 1D vector");
}

// ============================================================== ListDiff

TEST(ListDiffTest, DocExampleStringsAndErrors) {
  // TensorFlow's doc: x = [1, 2, 3, 4, 5, 6], y = [1, 3, 5] -> out = [2, 4, 6],
  // idx = [1, 3, 5]. Duplicates in x are kept; duplicates in y do not matter.
  for (DataType out_idx : {GR_INT32, GR_INT64}) {
    std::vector<Tensor> out = RunOp("ListDiff", {Fed(Vec({1, 2, 3, 4, 5, 6})), Fed(Vec({1, 3, 5}))},
                                    TAttr(GR_INT32) + TAttr(out_idx, "out_idx"), 2);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{2, 4, 6}));
    EXPECT_EQ(out[1].dtype(), out_idx);
    EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{1, 3, 5}));
  }
  std::vector<Tensor> out =
      RunOp("ListDiff", {Fed(Vec({7, 2, 7, 9}, GR_INT64)), Fed(Vec({9, 9}, GR_INT64))}, TAttr(GR_INT64), 2);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{7, 2, 7}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{0, 1, 2}));
  out = RunOp("ListDiff", {Fed(Strings({4}, {"a", "bb", "", "a"})), Fed(Strings({1}, {"a"}))}, TAttr(GR_STRING), 2);
  EXPECT_EQ(StringsOf(out[0]), (std::vector<std::string>{"bb", ""}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{1, 2}));
  out = RunOp("ListDiff", {Fed(Vec({1, 2})), Fed(Vec({2, 1}))}, TAttr(GR_INT32), 2);
  EXPECT_EQ(out[0].NumElements(), 0);
  EXPECT_EQ(out[1].NumElements(), 0);
  EXPECT_ERROR(TryOp("ListDiff", {Fed(IntTensor(GR_INT32, {2, 2}, {1, 2, 3, 4})), Fed(Vec({1}))}, TAttr(GR_INT32), 2,
                     &out),
               Code::kInvalidArgument, "x should be a 1D vector");
  EXPECT_ERROR(TryOp("ListDiff", {Fed(Vec({1})), Fed(IntScalar(1))}, TAttr(GR_INT32), 2, &out),
               Code::kInvalidArgument, "y should be a 1D vector");
}

// ========================================================= BroadcastArgs

TEST(BroadcastArgsTest, ShapesAndErrors) {
  struct Case {
    std::vector<int64_t> a, b, want;
  };
  for (DataType dt : {GR_INT32, GR_INT64}) {
    for (const Case& c : {Case{{2, 3, 1}, {3, 4}, {2, 3, 4}}, Case{{1}, {5, 1}, {5, 1}},
                          Case{{}, {4, 2}, {4, 2}}, Case{{0, 1}, {3}, {0, 3}}, Case{{}, {}, {}}}) {
      std::vector<Tensor> out =
          RunOp("BroadcastArgs", {Fed(Vec(c.a, dt)), Fed(Vec(c.b, dt))}, TAttr(dt));
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].dtype(), dt);
      EXPECT_EQ(Ints(out[0]), c.want);
    }
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(
      TryOp("BroadcastArgs", {Fed(Vec({2, 3})), Fed(Vec({4, 3}))}, TAttr(GR_INT32), 1, &out),
      Code::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4,3]");
  EXPECT_ERROR(TryOp("BroadcastArgs", {Fed(IntScalar(2)), Fed(Vec({4}))}, TAttr(GR_INT32), 1, &out),
               Code::kInvalidArgument, "In[0] must be a vector");
}

// ====================================================== StridedSliceGrad

struct SliceSpec {
  Dims begin, end, strides;
  int64_t masks[5] = {0, 0, 0, 0, 0};  // begin, end, ellipsis, new_axis, shrink_axis
  std::string Attrs() const {
    return IntAttr("begin_mask", masks[0]) + IntAttr("end_mask", masks[1]) +
           IntAttr("ellipsis_mask", masks[2]) + IntAttr("new_axis_mask", masks[3]) +
           IntAttr("shrink_axis_mask", masks[4]);
  }
};

// A random spec over a tensor of `dims`: any mix of masks, indices a little
// past either end, strides of either sign. Some are invalid, on purpose.
SliceSpec RandomSpec(const Dims& dims, std::mt19937* rng) {
  SliceSpec s;
  const int n = static_cast<int>((*rng)() % (dims.size() + 2));
  const int ellipsis_at = (*rng)() % 3 == 0 && n > 0 ? static_cast<int>((*rng)() % n) : -1;
  for (int i = 0; i < n; ++i) {
    const int64_t d = i < static_cast<int>(dims.size()) ? dims[i] : 3;
    auto pick = [&] { return static_cast<int64_t>((*rng)() % (2 * d + 5)) - d - 2; };
    s.begin.push_back(pick());
    s.end.push_back(pick());
    const int64_t mag = 1 + static_cast<int64_t>((*rng)() % 3);
    s.strides.push_back((*rng)() % 3 == 0 ? -mag : mag);
    const int64_t bit = int64_t{1} << i;
    if (i == ellipsis_at) {
      s.masks[2] |= bit;
      continue;
    }
    if ((*rng)() % 3 == 0) s.masks[0] |= bit;
    if ((*rng)() % 3 == 0) s.masks[1] |= bit;
    if ((*rng)() % 6 == 0) s.masks[3] |= bit;
    if ((*rng)() % 5 == 0) {
      s.masks[4] |= bit;
      s.strides.back() = 1;
    }
  }
  return s;
}

// StridedSliceGrad(shape(x), spec, dy) is the adjoint of StridedSlice(x,
// spec): sum(dy * slice(x)) == sum(x * grad(dy)), checked exactly on
// integers; the grad rejects exactly the specs the slice rejects.
TEST(StridedSliceGradTest, AdjointOfStridedSliceOnRandomSpecs) {
  std::mt19937 rng(29);
  int valid = 0;
  for (int rep = 0; rep < 300; ++rep) {
    const int rank = static_cast<int>(rng() % 4);
    Dims dims;
    for (int d = 0; d < rank; ++d)
      dims.push_back(static_cast<int64_t>(rng() % 5) + (rep % 10 == 0 ? 0 : 1));
    const SliceSpec s = RandomSpec(dims, &rng);
    const DataType idx_dt = rep % 2 ? GR_INT64 : GR_INT32;
    const std::string attrs = s.Attrs() + TAttr(GR_INT64) + TAttr(idx_dt, "Index");
    const Tensor x = SmallInts(dims, &rng);
    std::vector<Tensor> y;
    const Status st = TryOp(
        "StridedSlice",
        {Fed(x), Fed(Vec(s.begin, idx_dt)), Fed(Vec(s.end, idx_dt)), Fed(Vec(s.strides, idx_dt))},
        attrs, 1, &y);
    std::vector<Tensor> g;
    if (!st.ok()) {
      // The same spec fails the grad with the same message (after the
      // "Node 'op' (op 'StridedSlice'): " prefix).
      const std::string msg = st.message().substr(st.message().find("): ") + 3);
      EXPECT_ERROR(
          TryOp("StridedSliceGrad",
                {Fed(Vec(dims, idx_dt)), Fed(Vec(s.begin, idx_dt)), Fed(Vec(s.end, idx_dt)),
                 Fed(Vec(s.strides, idx_dt)), Fed(SmallInts({1}, &rng))},
                attrs, 1, &g),
          st.code(), msg, "StridedSliceGrad");
      continue;
    }
    ++valid;
    ASSERT_EQ(y.size(), 1u);
    const Tensor dy = SmallInts(DimsOf(y[0]), &rng);
    g = RunOp("StridedSliceGrad",
              {Fed(Vec(dims, idx_dt)), Fed(Vec(s.begin, idx_dt)), Fed(Vec(s.end, idx_dt)),
               Fed(Vec(s.strides, idx_dt)), Fed(dy)},
              attrs);
    ASSERT_EQ(g.size(), 1u);
    ASSERT_EQ(DimsOf(g[0]), dims) << "rep " << rep;
    ASSERT_EQ(Dot(dy, y[0]), Dot(x, g[0])) << "rep " << rep;
    // And with x = e_k for every k: grad(dy)[k] = sum of dy over the output
    // positions that read x[k] (at most one), which pins every element.
    if (rep % 10 == 1 && x.NumElements() <= 60) {
      for (int64_t k = 0; k < x.NumElements(); ++k) {
        Tensor e(GR_INT64, TensorShape(dims));
        for (int64_t i = 0; i < e.NumElements(); ++i) e.data<int64_t>()[i] = i == k ? 1 : 0;
        std::vector<Tensor> ye = RunOp("StridedSlice",
                                       {Fed(e), Fed(Vec(s.begin, idx_dt)), Fed(Vec(s.end, idx_dt)),
                                        Fed(Vec(s.strides, idx_dt))},
                                       attrs);
        ASSERT_EQ(ye.size(), 1u);
        ASSERT_EQ(g[0].data<int64_t>()[k], Dot(dy, ye[0])) << "rep " << rep << " element " << k;
      }
    }
  }
  EXPECT_GE(valid, 150);
}

TEST(StridedSliceGradTest, NamedCaseDtypesAndShape) {
  // x[1:3, ::2] of a [3,4]: dy [[1,2],[3,4]] lands at (1,0),(1,2),(2,0),(2,2).
  std::vector<Tensor> out =
      RunOp("StridedSliceGrad",
            {Fed(Vec({3, 4})), Fed(Vec({1, 0})), Fed(Vec({3, 0})), Fed(Vec({1, 2})),
             Fed(IntTensor(GR_INT32, {2, 2}, {1, 2, 3, 4}))},
            TAttr(GR_INT32) + TAttr(GR_INT32, "Index") + IntAttr("begin_mask", 2) +
                IntAttr("end_mask", 2));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0}));
  // Every dtype, strings included (unselected elements empty): x[::-2] of
  // a [5, 2] with a shrunk, reversed second axis x[::-2, 1].
  for (DataType dt : MovementDtypes()) {
    const Tensor dy = Random(dt, {3}, 90);
    out = RunOp("StridedSliceGrad",
                {Fed(Vec({5, 2})), Fed(Vec({0, 1})), Fed(Vec({0, 2})), Fed(Vec({-2, 1})), Fed(dy)},
                TAttr(dt) + TAttr(GR_INT32, "Index") + IntAttr("begin_mask", 1) +
                    IntAttr("end_mask", 1) + IntAttr("shrink_axis_mask", 2));
    ASSERT_EQ(out.size(), 1u);
    Tensor zero = dt == GR_STRING ? Strings({}, {""}) : Tensor(dt, TensorShape({}));
    if (dt != GR_STRING) std::memset(zero.raw_data(), 0, ElemSize(dt));
    std::vector<Ref> ref(10, Ref{-1, 0});
    ref[9] = {0, 0};  // x[4, 1]
    ref[5] = {0, 1};  // x[2, 1]
    ref[1] = {0, 2};  // x[0, 1]
    ExpectGathered(out[0], {5, 2}, {&dy}, ref, &zero, DtEnum(dt));
  }
  // Identity slice: the output is dy itself.
  const Tensor dy = Random(GR_FLOAT, {2, 3}, 91);
  out = RunOp("StridedSliceGrad",
              {Fed(Vec({2, 3})), Fed(Vec({0})), Fed(Vec({0})), Fed(Vec({1})), Fed(dy)},
              TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index") + IntAttr("begin_mask", 1) +
                  IntAttr("end_mask", 1));
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {2, 3}, {&dy}, {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}});
  // A big one, split over the pool.
  std::mt19937 rng(31);
  const Tensor big = SmallInts({2, 300, 200}, &rng);
  std::vector<Tensor> yb =
      RunOp("StridedSlice",
            {Fed(big), Fed(Vec({1, 299, 3})), Fed(Vec({2, 0, 200})), Fed(Vec({1, -1, 3}))},
            TAttr(GR_INT64) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(yb.size(), 1u);
  const Tensor dyb = SmallInts(DimsOf(yb[0]), &rng);
  std::vector<Tensor> gb = RunOp("StridedSliceGrad",
                                 {Fed(Vec({2, 300, 200})), Fed(Vec({1, 299, 3})),
                                  Fed(Vec({2, 0, 200})), Fed(Vec({1, -1, 3})), Fed(dyb)},
                                 TAttr(GR_INT64) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(gb.size(), 1u);
  EXPECT_EQ(Dot(dyb, yb[0]), Dot(big, gb[0]));
  // Shape function: the output has the constant `shape`.
  const std::string g = ConstInt32("shape", {3, 5}) + ConstInt32("b", {0}) + ConstInt32("e", {1}) +
                        ConstInt32("s", {1}) + PlaceholderNode("dy", "DT_FLOAT") +
                        NodeText("r", "StridedSliceGrad", {"shape", "b", "e", "s", "dy"},
                                 TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index")) +
                        MatMulAfter("r");
  EXPECT_ERROR(TryRun(g, {{"dy:0", Tensor(GR_FLOAT, TensorShape({1, 5}))}}, {"mm:0"}),
               Code::kInvalidArgument, "5 and 4");
}

TEST(StridedSliceGradTest, Errors) {
  const std::string attrs = TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index");
  const Tensor dy = Random(GR_FLOAT, {2}, 1);
  std::vector<Tensor> out;
  EXPECT_ERROR(
      TryOp("StridedSliceGrad",
            {Fed(Vec({4})), Fed(Vec({0})), Fed(Vec({3})), Fed(Vec({1})), Fed(dy)}, attrs, 1, &out),
      Code::kInvalidArgument, "shape of dy was [2] instead of [3]");
  EXPECT_ERROR(
      TryOp("StridedSliceGrad",
            {Fed(Vec({4})), Fed(Vec({0})), Fed(Vec({3})), Fed(Vec({0})), Fed(dy)}, attrs, 1, &out),
      Code::kInvalidArgument, "strides[0] must be non-zero");
  EXPECT_ERROR(
      TryOp("StridedSliceGrad",
            {Fed(Vec({-4})), Fed(Vec({0})), Fed(Vec({3})), Fed(Vec({1})), Fed(dy)}, attrs, 1, &out),
      Code::kInvalidArgument, "negative dimension");
  EXPECT_ERROR(TryOp("StridedSliceGrad",
                     {Fed(Vec({1 << 30, 1 << 30, 1 << 30})), Fed(Vec({0})), Fed(Vec({2})),
                      Fed(Vec({1})), Fed(dy)},
                     attrs, 1, &out),
               Code::kInvalidArgument, "more than 2^58 elements");
  EXPECT_ERROR(TryOp("StridedSliceGrad",
                     {Fed(Vec({4})), Fed(Vec({5})), Fed(Vec({6})), Fed(Vec({1})), Fed(dy)},
                     attrs + IntAttr("shrink_axis_mask", 1), 1, &out),
               Code::kInvalidArgument, "slice index 5 of dimension 0 out of bounds");
  EXPECT_ERROR(TryOp("StridedSliceGrad",
                     {Fed(IntTensor(GR_INT32, {1, 1}, {4})), Fed(Vec({0})), Fed(Vec({2})),
                      Fed(Vec({1})), Fed(dy)},
                     attrs, 1, &out),
               Code::kInvalidArgument, "shape must be 1-D");
  EXPECT_ERROR(TryOp("StridedSliceGrad",
                     {Fed(Vec({4})), Fed(Vec({0, 0})), Fed(Vec({2})), Fed(Vec({1})), Fed(dy)},
                     attrs, 1, &out),
               Code::kInvalidArgument,
               "Expected begin, end, and strides to be 1D equal size tensors");
}

// ========================================================= MirrorPadGrad

TEST(MirrorPadGradTest, DocExample) {
  // TensorFlow's doc: t = [[1, 2, 3], [4, 5, 6], [7, 8, 9]], paddings
  // [[0, 1], [0, 1]], SYMMETRIC -> [[1, 5], [11, 28]].
  for (DataType dt : {GR_INT32, GR_INT64}) {
    std::vector<Tensor> out =
        RunOp("MirrorPadGrad",
              {Fed(IntTensor(GR_INT32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})),
               Fed(Paddings({0, 0}, {1, 1}, dt))},
              TAttr(GR_INT32) + TAttr(dt, "Tpaddings") + StrAttr("mode", "SYMMETRIC"));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), (Dims{2, 2}));
    EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{1, 5, 11, 28}));
  }
  // REFLECT by hand: [a,b,c] padded [1,2] reads [b,a,b,c,b,a]; folding
  // [1,10,100,1000,10000,100000] gives a = 10+100000, b = 1+100+10000, c = 1000.
  std::vector<Tensor> out =
      RunOp("MirrorPadGrad", {Fed(Vec({1, 10, 100, 1000, 10000, 100000})), Fed(Paddings({1}, {2}))},
            TAttr(GR_INT32) + StrAttr("mode", "REFLECT"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{100010, 10101, 1000}));
}

TEST(MirrorPadGradTest, IntegersWrapAsTwosComplement) {
  // 2^31 - 1 folded onto 1 wraps to -2^31 (no undefined overflow).
  std::vector<Tensor> out = RunOp("MirrorPadGrad", {Fed(Vec({1, 2147483647})), Fed(Paddings({0}, {1}))},
                                  TAttr(GR_INT32) + StrAttr("mode", "SYMMETRIC"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{-2147483647 - 1}));
}

// MirrorPadGrad is the adjoint of MirrorPad: sum(dy * pad(x)) ==
// sum(x * fold(dy)), exactly on integers, for random shapes, paddings and
// modes.
TEST(MirrorPadGradTest, AdjointOfMirrorPad) {
  std::mt19937 rng(37);
  for (int rep = 0; rep < 60; ++rep) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    const bool reflect = rng() % 2 == 0;
    Dims dims, before, after;
    for (int d = 0; d < rank; ++d) {
      dims.push_back(1 + static_cast<int64_t>(rng() % 4) + (reflect ? 1 : 0));
      const int64_t limit = reflect ? dims[d] - 1 : dims[d];
      before.push_back(static_cast<int64_t>(rng() % (limit + 1)));
      after.push_back(static_cast<int64_t>(rng() % (limit + 1)));
    }
    const DataType pdt = rep % 2 ? GR_INT64 : GR_INT32;
    const std::string attrs = TAttr(GR_INT64) + TAttr(pdt, "Tpaddings") +
                              StrAttr("mode", reflect ? "REFLECT" : "SYMMETRIC");
    const Tensor x = SmallInts(dims, &rng);
    std::vector<Tensor> y = RunOp("MirrorPad", {Fed(x), Fed(Paddings(before, after, pdt))}, attrs);
    ASSERT_EQ(y.size(), 1u);
    const Tensor dy = SmallInts(DimsOf(y[0]), &rng);
    std::vector<Tensor> g =
        RunOp("MirrorPadGrad", {Fed(dy), Fed(Paddings(before, after, pdt))}, attrs);
    ASSERT_EQ(g.size(), 1u);
    ASSERT_EQ(DimsOf(g[0]), dims) << "rep " << rep;
    ASSERT_EQ(Dot(dy, y[0]), Dot(x, g[0])) << "rep " << rep;
  }
  // Large (split over the pool) and one thread; float values that are
  // small integers add exactly too.
  const Dims dims = {70, 60, 9};
  const Dims before = {3, 0, 8}, after = {5, 59, 2};
  Tensor xf(GR_FLOAT, TensorShape(dims));
  for (int64_t i = 0; i < xf.NumElements(); ++i)
    xf.data<float>()[i] = static_cast<float>(rng() % 9) - 4;
  const std::string attrs = TAttr(GR_FLOAT) + StrAttr("mode", "SYMMETRIC");
  std::vector<Tensor> y = RunOp("MirrorPad", {Fed(xf), Fed(Paddings(before, after))}, attrs);
  ASSERT_EQ(y.size(), 1u);
  Tensor dy(GR_FLOAT, y[0].shape());
  for (int64_t i = 0; i < dy.NumElements(); ++i)
    dy.data<float>()[i] = static_cast<float>(rng() % 9) - 4;
  double lhs = 0;
  for (int64_t i = 0; i < dy.NumElements(); ++i)
    lhs += double(dy.data<float>()[i]) * y[0].data<float>()[i];
  for (int threads : {1, 2}) {
    std::vector<Tensor> g =
        RunOp("MirrorPadGrad", {Fed(dy), Fed(Paddings(before, after))}, attrs, 1, threads);
    ASSERT_EQ(g.size(), 1u);
    double rhs = 0;
    for (int64_t i = 0; i < xf.NumElements(); ++i)
      rhs += double(xf.data<float>()[i]) * g[0].data<float>()[i];
    EXPECT_EQ(lhs, rhs);
  }
}

TEST(MirrorPadGradTest, ErrorsAndShape) {
  const Tensor dy = Random(GR_FLOAT, {5, 4}, 3);
  const std::string reflect = TAttr(GR_FLOAT) + StrAttr("mode", "REFLECT");
  const std::string symmetric = TAttr(GR_FLOAT) + StrAttr("mode", "SYMMETRIC");
  std::vector<Tensor> out;
  // [5] folded by 2 + 2 is [1]: REFLECT needs paddings < 1.
  EXPECT_ERROR(TryOp("MirrorPadGrad", {Fed(dy), Fed(Paddings({2, 0}, {2, 0}))}, reflect, 1, &out),
               Code::kInvalidArgument,
               "paddings must be less than the output dimension size: 2, 2 not less than 1");
  EXPECT_ERROR(TryOp("MirrorPadGrad", {Fed(dy), Fed(Paddings({2, 0}, {2, 0}))}, symmetric, 1, &out),
               Code::kInvalidArgument,
               "paddings must be no greater than the output dimension size: 2, 2 greater than 1");
  EXPECT_ERROR(
      TryOp("MirrorPadGrad", {Fed(dy), Fed(Paddings({-1, 0}, {0, 0}))}, symmetric, 1, &out),
      Code::kInvalidArgument, "Paddings must be non-negative: -1, 0");
  EXPECT_ERROR(TryOp("MirrorPadGrad", {Fed(dy), Fed(Paddings({0, 3}, {0, 3}))}, symmetric, 1, &out),
               Code::kInvalidArgument, "paddings 3, 3 of dimension 1 exceed its size 4");
  EXPECT_ERROR(TryOp("MirrorPadGrad", {Fed(dy), Fed(Paddings({0}, {0}))}, symmetric, 1, &out),
               Code::kInvalidArgument,
               "The first dimension of paddings must be the rank of inputs");
  EXPECT_ERROR(TryOp("MirrorPadGrad", {Fed(Random(GR_STRING, {3}, 1)), Fed(Paddings({1}, {0}))},
                     TAttr(GR_STRING) + StrAttr("mode", "SYMMETRIC"), 1, &out),
               Code::kUnimplemented, "MirrorPadGrad does not support dtype string");
  // Shape function: [6,7] minus paddings [[1,1],[1,1]] is [4,5].
  const std::string g = ShapedPlaceholder("x", "DT_FLOAT", {6, 7}) +
                        ConstNode("p", "DT_INT32", {2, 2}, "int_val", {"1", "1", "1", "1"}) +
                        NodeText("r", "MirrorPadGrad", {"x", "p"}, reflect) + MatMulAfter("r");
  EXPECT_ERROR(TryRun(g, {{"x:0", Tensor(GR_FLOAT, TensorShape({6, 7}))}}, {"mm:0"}),
               Code::kInvalidArgument, "5 and 4");
}

// ========================================= TensorScatterUpdate/Add/Sub

TEST(TensorScatterTest, DocExamples) {
  // TensorFlow's docs: tensor = ones([8]), indices [[4], [3], [1], [7]],
  // updates [9, 10, 11, 12].
  struct Case {
    const char* op;
    std::vector<int64_t> want;
  };
  for (DataType idx_dt : {GR_INT32, GR_INT64}) {
    for (const Case& c : {Case{"TensorScatterUpdate", {1, 11, 1, 10, 9, 1, 1, 12}},
                          Case{"TensorScatterAdd", {1, 12, 1, 11, 10, 1, 1, 13}},
                          Case{"TensorScatterSub", {1, -10, 1, -9, -8, 1, 1, -11}}}) {
      const Tensor ones = Vec(std::vector<int64_t>(8, 1));
      std::vector<Tensor> out = RunOp(
          c.op,
          {Fed(ones), Fed(IntTensor(idx_dt, {4, 1}, {4, 3, 1, 7})), Fed(Vec({9, 10, 11, 12}))},
          TAttr(GR_INT32) + TAttr(idx_dt, "Tindices"));
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(Ints(out[0]), c.want) << c.op;
      EXPECT_EQ(Ints(ones), std::vector<int64_t>(8, 1)) << "the fed tensor is left as it was";
    }
  }
  // The rank-3 example: tensor ones([4,4,4]), indices [[0], [2]], updates
  // two [4,4] slices of rows 5, 6, 7, 8: slices 0 and 2 become 6..9.
  std::vector<int64_t> upd;
  for (int m = 0; m < 2; ++m)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) upd.push_back(5 + r);
  std::vector<Tensor> out =
      RunOp("TensorScatterAdd",
            {Fed(IntTensor(GR_INT32, {4, 4, 4}, std::vector<int64_t>(64, 1))),
             Fed(IntTensor(GR_INT32, {2, 1}, {0, 2})), Fed(IntTensor(GR_INT32, {2, 4, 4}, upd))},
            TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices"));
  ASSERT_EQ(out.size(), 1u);
  const std::vector<int64_t> got = Ints(out[0]);
  for (int64_t i = 0; i < 64; ++i) {
    const int64_t slice = i / 16, row = i / 4 % 4;
    ASSERT_EQ(got[i], slice % 2 == 0 ? 6 + row : 1) << i;
  }
}

TEST(TensorScatterTest, RandomAgainstReferenceAndStrings) {
  std::mt19937 rng(41);
  for (int rep = 0; rep < 12; ++rep) {
    const Dims shape = {1 + static_cast<int64_t>(rng() % 4), 1 + static_cast<int64_t>(rng() % 4),
                        3};
    const int64_t k = 1 + static_cast<int64_t>(rng() % 2);
    const int64_t n = 1 + static_cast<int64_t>(rng() % 6);
    std::vector<int64_t> iv;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t d = 0; d < k; ++d) iv.push_back(static_cast<int64_t>(rng() % shape[d]));
    Dims udims = {n};
    for (size_t d = static_cast<size_t>(k); d < shape.size(); ++d) udims.push_back(shape[d]);
    const int64_t slice = NumElements(udims) / n;
    const Tensor x = SmallInts(shape, &rng), u = SmallInts(udims, &rng);
    const Tensor idx = IntTensor(GR_INT64, {n, k}, iv);
    // Reference: repeated indices accumulate (Add, Sub); the last one wins
    // (Update).
    for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub"}) {
      std::vector<int64_t> want = Ints(x);
      for (int64_t i = 0; i < n; ++i) {
        int64_t base = 0;
        for (int64_t d = 0; d < k; ++d) base = base * shape[d] + iv[i * k + d];
        for (int64_t c = 0; c < slice; ++c) {
          int64_t& w = want[base * slice + c];
          const int64_t v = u.data<int64_t>()[i * slice + c];
          w = op[13] == 'U' ? v : op[13] == 'A' ? w + v : w - v;
        }
      }
      std::vector<Tensor> out =
          RunOp(op, {Fed(x), Fed(idx), Fed(u)}, TAttr(GR_INT64) + TAttr(GR_INT64, "Tindices"));
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(Ints(out[0]), want) << op << " rep " << rep;
    }
  }
  // Update moves strings.
  const Tensor s = Strings({3, 2}, {"a", "b", "c", "d", "e", "f"});
  std::vector<Tensor> out = RunOp("TensorScatterUpdate",
                                  {Fed(s), Fed(IntTensor(GR_INT32, {1, 1}, {1})),
                                   Fed(Strings({1, 2}, {"x", std::string(40, 'y')}))},
                                  TAttr(GR_STRING) + TAttr(GR_INT32, "Tindices"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(StringsOf(out[0]),
            (std::vector<std::string>{"a", "b", "x", std::string(40, 'y'), "e", "f"}));
}

TEST(TensorScatterTest, Errors) {
  const std::string attrs = TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices");
  const Tensor t = Vec({1, 2, 3, 4});
  std::vector<Tensor> out;
  EXPECT_ERROR(
      TryOp("TensorScatterAdd",
            {Fed(t), Fed(IntTensor(GR_INT32, {2, 1}, {0, 4})), Fed(Vec({1, 1}))}, attrs, 1, &out),
      Code::kInvalidArgument, "indices[1] = [4] does not index into shape [4]");
  EXPECT_ERROR(
      TryOp("TensorScatterUpdate",
            {Fed(t), Fed(IntTensor(GR_INT32, {2, 1}, {-1, 0})), Fed(Vec({1, 1}))}, attrs, 1, &out),
      Code::kInvalidArgument, "indices[0] = [-1] does not index into shape [4]");
  EXPECT_ERROR(TryOp("TensorScatterSub",
                     {Fed(t), Fed(IntTensor(GR_INT32, {2, 1}, {0, 1})), Fed(Vec({1, 1, 1}))}, attrs,
                     1, &out),
               Code::kInvalidArgument,
               "Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of updates");
  EXPECT_ERROR(TryOp("TensorScatterUpdate",
                     {Fed(IntScalar(1)), Fed(IntTensor(GR_INT32, {1, 1}, {0})), Fed(Vec({1}))},
                     attrs, 1, &out),
               Code::kInvalidArgument, "Input shape must have rank at least one");
  EXPECT_ERROR(TryOp("TensorScatterAdd",
                     {Fed(Strings({2}, {"a", "b"})), Fed(IntTensor(GR_INT32, {1, 1}, {0})),
                      Fed(Strings({1}, {"c"}))},
                     TAttr(GR_STRING) + TAttr(GR_INT32, "Tindices"), 1, &out),
               Code::kUnimplemented, "TensorScatterAdd does not support dtype string");
  // Known shapes: the shape function checks updates against the tensor.
  const std::string g = ShapedPlaceholder("t", "DT_INT32", {4, 3}) +
                        ConstNode("i", "DT_INT32", {2, 1}, "int_val", {"0", "1"}) +
                        ShapedPlaceholder("u", "DT_INT32", {2, 2}) +
                        NodeText("r", "TensorScatterUpdate", {"t", "i", "u"}, attrs);
  EXPECT_ERROR(TryRun(g, {}, {"r:0"}), Code::kInvalidArgument,
               "Dimensions [1,2) of input[shape=[4,3]]");
}

// ============================================ as tf.gradients wires them

// The gradient graphs TensorFlow builds for ConcatV2 (ConcatOffset +
// Slice per input), Transpose (a Transpose by InvertPermutation(perm)) and
// StridedSlice (Shape + StridedSliceGrad), in one graph: each gradient
// piece must be the matching part of dy.
TEST(GradientGraphTest, ConcatTransposeAndStridedSliceGradients) {
  const std::string f = TypeAttr("T", "DT_FLOAT");
  const std::string g =
      ShapedPlaceholder("a", "DT_FLOAT", {2, 3}) + ShapedPlaceholder("b", "DT_FLOAT", {2, 2}) +
      ShapedPlaceholder("dy", "DT_FLOAT", {2, 5}) + ConstOf("axis", IntScalar(1)) +
      NodeText("sa", "Shape", {"a"}, f) + NodeText("sb", "Shape", {"b"}, f) +
      NodeText("off", "ConcatOffset", {"axis", "sa", "sb"}, IntAttr("N", 2)) +
      NodeText("ga", "Slice", {"dy", "off:0", "sa"}, f + TypeAttr("Index", "DT_INT32")) +
      NodeText("gb", "Slice", {"dy", "off:1", "sb"}, f + TypeAttr("Index", "DT_INT32")) +
      ConstInt32("perm", {1, 0}) + NodeText("t", "Transpose", {"ga", "perm"}, f) +
      NodeText("inv", "InvertPermutation", {"perm"}, TypeAttr("T", "DT_INT32")) +
      NodeText("back", "Transpose", {"t", "inv"}, f) + ConstInt32("b0", {0, 1}) +
      ConstInt32("e0", {2, 5}) + ConstInt32("s0", {1, 2}) + NodeText("sdy", "Shape", {"dy"}, f) +
      ShapedPlaceholder("dslice", "DT_FLOAT", {2, 2}) +
      NodeText("gs", "StridedSliceGrad", {"sdy", "b0", "e0", "s0", "dslice"},
               f + TypeAttr("Index", "DT_INT32"));
  const Tensor a = Random(GR_FLOAT, {2, 3}, 1), b = Random(GR_FLOAT, {2, 2}, 2),
               dy = Random(GR_FLOAT, {2, 5}, 3);
  const Tensor dslice = Random(GR_FLOAT, {2, 2}, 4);
  std::vector<Tensor> out = RunOps(g, {{"a:0", a}, {"b:0", b}, {"dy:0", dy}, {"dslice:0", dslice}},
                                   {"ga:0", "gb:0", "back:0", "t:0", "gs:0"});
  ASSERT_EQ(out.size(), 5u);
  ExpectGathered(out[0], {2, 3}, {&dy}, {{0, 0}, {0, 1}, {0, 2}, {0, 5}, {0, 6}, {0, 7}});
  ExpectGathered(out[1], {2, 2}, {&dy}, {{0, 3}, {0, 4}, {0, 8}, {0, 9}});
  ExpectGathered(out[2], {2, 3}, {&dy}, {{0, 0}, {0, 1}, {0, 2}, {0, 5}, {0, 6}, {0, 7}});
  ExpectGathered(out[3], {3, 2}, {&dy}, {{0, 0}, {0, 5}, {0, 1}, {0, 6}, {0, 2}, {0, 7}});
  // dy[0:2, 1:5:2] = dslice: columns 1 and 3 of each row.
  Tensor zero(GR_FLOAT, TensorShape({}));
  zero.data<float>()[0] = 0;
  ExpectGathered(
      out[4], {2, 5}, {&dslice},
      {{-1, 0}, {0, 0}, {-1, 0}, {0, 1}, {-1, 0}, {-1, 0}, {0, 2}, {-1, 0}, {0, 3}, {-1, 0}},
      &zero);
}

// =========================================== errors leave the session usable

TEST(TrainingSupportErrorsTest, SessionRunsAgainAfterEachError) {
  struct Case {
    std::string op, attrs;
    std::vector<Tensor> bad, good;
    std::vector<int64_t> want;  // output 0 of the good run, as integers
  };
  const std::vector<Case> cases = {
      {"InvertPermutation", TAttr(GR_INT32), {Vec({0, 0})}, {Vec({1, 0})}, {1, 0}},
      {"Gather",
       TAttr(GR_INT32, "Tparams") + TAttr(GR_INT32, "Tindices"),
       {Vec({7, 8}), Vec({2})},
       {Vec({7, 8}), Vec({1})},
       {8}},
      {"ReverseSequence",
       TAttr(GR_INT32) + TAttr(GR_INT32, "Tlen") + IntAttr("seq_dim", 1),
       {IntTensor(GR_INT32, {1, 3}, {1, 2, 3}), Vec({4})},
       {IntTensor(GR_INT32, {1, 3}, {1, 2, 3}), Vec({2})},
       {2, 1, 3}},
      {"SparseToDense",
       TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices"),
       {Vec({1, 1}), Vec({3}), Vec({5, 6}), IntScalar(0)},
       {Vec({0, 2}), Vec({3}), Vec({5, 6}), IntScalar(0)},
       {5, 0, 6}},
      {"StridedSliceGrad",
       TAttr(GR_INT32) + TAttr(GR_INT32, "Index"),
       {Vec({3}), Vec({0}), Vec({2}), Vec({1}), Vec({1})},
       {Vec({3}), Vec({0}), Vec({2}), Vec({1}), Vec({4, 5})},
       {4, 5, 0}},
      {"MirrorPadGrad",
       TAttr(GR_INT32) + StrAttr("mode", "REFLECT"),
       {Vec({1, 2, 3}), Paddings({1}, {1})},
       {Vec({1, 2, 3, 4}), Paddings({1}, {1})},
       {2 + 4, 1 + 3}},
      {"TensorScatterAdd",
       TAttr(GR_INT32) + TAttr(GR_INT32, "Tindices"),
       {Vec({1, 2}), IntTensor(GR_INT32, {1, 1}, {2}), Vec({5})},
       {Vec({1, 2}), IntTensor(GR_INT32, {1, 1}, {1}), Vec({5})},
       {1, 7}},
  };
  for (const Case& c : cases) {
    std::vector<Arg> args;
    for (const Tensor& t : c.good) args.push_back(Fed(t));
    Feeds unused;
    const std::string g = OpGraph(c.op, args, c.attrs, &unused);
    std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 2);
    ASSERT_NE(s, nullptr) << c.op;
    auto feeds = [](const std::vector<Tensor>& v) {
      Feeds f;
      for (size_t i = 0; i < v.size(); ++i) f.emplace_back("in" + std::to_string(i) + ":0", v[i]);
      return f;
    };
    std::vector<Tensor> out;
    const Status st = s->Run(feeds(c.bad), {"op:0"}, {}, &out);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << c.op << ": " << st;
    EXPECT_TRUE(Contains(st.message(), c.op)) << st;
    ASSERT_TRUE(s->Run(feeds(c.good), {"op:0"}, {}, &out).ok()) << c.op;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(Ints(out[0]), c.want) << c.op;
  }
}

}  // namespace
}  // namespace graphrt
