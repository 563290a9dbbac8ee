// Array ops that move elements between positions: Slice, StridedSlice,
// ConcatV2, Split, SplitV, Pack, Unpack, Transpose, Tile, BroadcastTo, Pad,
// PadV2, MirrorPad, ReverseV2, Reverse.
//
// Each reference below is written independently of the kernels: for every
// output element it computes, by index arithmetic with division, which input
// element it must hold (ExpectGathered compares bytes, or strings). Inputs
// are random with fixed seeds; every dtype class (1, 2, 4, 8, 16 bytes, bool,
// string) is covered, plus empty and scalar tensors, large inputs (split over
// the pool of a 2-thread session) and 1-thread sessions.
#include <gtest/gtest.h>

#include <algorithm>
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

// ================================================================ Slice

// Reference Slice: out[i] = in[begin + i].
std::vector<Ref> RefSlice(const Dims& in, const Dims& begin, const Dims& size, Dims* out) {
  out->clear();
  for (size_t d = 0; d < in.size(); ++d) out->push_back(size[d] == -1 ? in[d] - begin[d] : size[d]);
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(*out); ++i) {
    Dims idx = Unravel(i, *out);
    for (size_t d = 0; d < in.size(); ++d) idx[d] += begin[d];
    ref.push_back({0, Ravel(idx, in)});
  }
  return ref;
}

TEST(SliceTest, RandomBoxesAllDtypes) {
  std::mt19937 rng(11);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int rep = 0; rep < 6; ++rep) {
      const int rank = 1 + static_cast<int>(rng() % 4);
      Dims dims, begin, size;
      for (int d = 0; d < rank; ++d) {
        dims.push_back(1 + static_cast<int64_t>(rng() % 6));
        begin.push_back(static_cast<int64_t>(rng() % (dims[d] + 1)));
        const int64_t left = dims[d] - begin[d];
        size.push_back(rng() % 4 == 0 ? -1 : static_cast<int64_t>(rng() % (left + 1)));
      }
      const Tensor x = Random(dt, dims, 100 + case_no);
      const DataType idx_dt = rep % 2 ? GR_INT64 : GR_INT32;
      for (bool konst : {false, true}) {
        std::vector<Tensor> out =
            RunOp("Slice", {Fed(x), Arg{Vec(begin, idx_dt), konst}, Arg{Vec(size, idx_dt), konst}},
                  TAttr(dt) + TAttr(idx_dt, "Index"));
        if (out.empty()) return;
        Dims want;
        const std::vector<Ref> ref = RefSlice(dims, begin, size, &want);
        ExpectGathered(out[0], want, {&x}, ref, nullptr, "case " + std::to_string(case_no));
      }
      ++case_no;
    }
  }
}

TEST(SliceTest, WholeInputSharesBufferScalarAndEmpty) {
  const Tensor x = Random(GR_FLOAT, {3, 4}, 1);
  std::vector<Tensor> out =
      RunOp("Slice", {Fed(x), Fed(Vec({0, 0})), Fed(Vec({-1, 4}))}, TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  // Rank 0: empty begin/size.
  const Tensor s = Random(GR_INT64, {}, 2);
  out = RunOp("Slice", {Fed(s), Fed(Vec({})), Fed(Vec({}))}, TAttr(GR_INT64) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {}, {&s}, {{0, 0}});
  // Empty input dims: begin 0, size 0 or -1.
  const Tensor e = Random(GR_FLOAT, {2, 0, 3}, 3);
  out = RunOp("Slice", {Fed(e), Fed(Vec({1, 0, 1})), Fed(Vec({1, -1, 2}))},
              TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 0, 2}));
}

TEST(SliceTest, LargeSplitsOverPoolAndOneThread) {
  const Dims dims = {301, 257};
  const Tensor x = Random(GR_FLOAT, dims, 4);
  const Dims begin = {5, 3}, size = {290, 250};
  Dims want;
  const std::vector<Ref> ref = RefSlice(dims, begin, size, &want);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("Slice", {Fed(x), Konst(Vec(begin)), Konst(Vec(size))},
                                    TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], want, {&x}, ref);
  }
}

TEST(SliceTest, Errors) {
  const Tensor x = Random(GR_FLOAT, {3, 4}, 5);
  const std::string attrs = TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index");
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Slice", {Fed(x), Fed(Vec({0})), Fed(Vec({1}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected begin and size arguments to be 1-D tensors of size 2");
  EXPECT_ERROR(TryOp("Slice", {Fed(x), Fed(Vec({4, 0})), Fed(Vec({1, 1}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected begin[0] in [0, 3], but got 4");
  EXPECT_ERROR(TryOp("Slice", {Fed(x), Fed(Vec({1, -1})), Fed(Vec({1, 1}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected begin[1] in [0, 4], but got -1");
  EXPECT_ERROR(TryOp("Slice", {Fed(x), Fed(Vec({1, 2})), Fed(Vec({1, 3}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected size[1] in [0, 2], but got 3");
  EXPECT_ERROR(TryOp("Slice", {Fed(x), Fed(Vec({1, 2})), Fed(Vec({-2, 1}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected size[0] in [0, 2], but got -2");
  // Constant arguments: caught by the shape function when the graph loads.
  EXPECT_ERROR(TryOp("Slice", {Fed(x), Konst(Vec({1, 2})), Konst(Vec({1, 3}))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected size[1] in [0, 2], but got 3");
}

// ========================================================= StridedSlice

// A Python-style index item: x[1], x[a:b:c], x[...], x[tf.newaxis].
struct Item {
  enum Kind { kIndex, kRange, kEllipsis, kNewAxis } kind;
  int64_t index = 0;  // kIndex
  bool has_begin = false, has_end = false;
  int64_t begin = 0, end = 0, stride = 1;  // kRange
};

// Python's slice.indices(): the start and element count of begin:end:stride
// on a dim of `n`.
void PyRange(const Item& it, int64_t n, int64_t* start, int64_t* count) {
  const int64_t s = it.stride;
  int64_t b, e;
  if (s > 0) {
    b = it.has_begin ? (it.begin < 0 ? std::max<int64_t>(0, it.begin + n) : std::min(it.begin, n)) : 0;
    e = it.has_end ? (it.end < 0 ? std::max<int64_t>(0, it.end + n) : std::min(it.end, n)) : n;
    *count = e > b ? (e - b + s - 1) / s : 0;
  } else {
    b = it.has_begin ? (it.begin < 0 ? std::max<int64_t>(-1, it.begin + n) : std::min(it.begin, n - 1))
                     : n - 1;
    e = it.has_end ? (it.end < 0 ? std::max<int64_t>(-1, it.end + n) : std::min(it.end, n - 1)) : -1;
    *count = b > e ? (b - e + (-s) - 1) / (-s) : 0;
  }
  *start = b;
}

// numpy semantics of x[items] on a tensor of `dims`.
std::vector<Ref> RefStridedSlice(const Dims& dims, const std::vector<Item>& items, Dims* out) {
  int consumed = 0;
  bool has_ellipsis = false;
  for (const Item& it : items) {
    if (it.kind == Item::kIndex || it.kind == Item::kRange) ++consumed;
    if (it.kind == Item::kEllipsis) has_ellipsis = true;
  }
  std::vector<Item> full = items;
  if (!has_ellipsis) full.push_back(Item{Item::kEllipsis});
  // Output axes: (input dim or -1 for a new axis, start, step).
  struct Axis {
    int dim;
    int64_t start, step;
  };
  std::vector<Axis> axes;
  Dims fixed(dims.size(), 0);  // input index of every dim not in an output axis
  out->clear();
  int d = 0;
  for (const Item& it : full) {
    switch (it.kind) {
      case Item::kNewAxis:
        axes.push_back({-1, 0, 0});
        out->push_back(1);
        break;
      case Item::kIndex:
        fixed[d] = it.index < 0 ? it.index + dims[d] : it.index;
        ++d;
        break;
      case Item::kRange: {
        int64_t start, count;
        PyRange(it, dims[d], &start, &count);
        axes.push_back({d, start, it.stride});
        out->push_back(count);
        ++d;
        break;
      }
      case Item::kEllipsis: {
        const int span = static_cast<int>(dims.size()) - consumed;
        for (int k = 0; k < span; ++k, ++d) {
          axes.push_back({d, 0, 1});
          out->push_back(dims[d]);
        }
        break;
      }
    }
  }
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(*out); ++i) {
    const Dims oi = Unravel(i, *out);
    Dims ii = fixed;
    for (size_t a = 0; a < axes.size(); ++a)
      if (axes[a].dim >= 0) ii[axes[a].dim] = axes[a].start + oi[a] * axes[a].step;
    ref.push_back({0, Ravel(ii, dims)});
  }
  return ref;
}

// TensorFlow's encoding of `items` into begin/end/strides and the masks.
std::string EncodeStridedSlice(const std::vector<Item>& items, Dims* b, Dims* e, Dims* s) {
  int64_t bm = 0, em = 0, elm = 0, nam = 0, sam = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const int64_t bit = int64_t{1} << i;
    int64_t bb = 0, ee = 0, ss = 1;
    if (it.kind == Item::kIndex) {
      bb = it.index;
      ee = it.index + 1;
      sam |= bit;
    } else if (it.kind == Item::kRange) {
      bb = it.begin;
      ee = it.end;
      ss = it.stride;
      if (!it.has_begin) bm |= bit;
      if (!it.has_end) em |= bit;
    } else if (it.kind == Item::kEllipsis) {
      elm |= bit;
    } else {
      nam |= bit;
    }
    b->push_back(bb);
    e->push_back(ee);
    s->push_back(ss);
  }
  return IntAttr("begin_mask", bm) + IntAttr("end_mask", em) + IntAttr("ellipsis_mask", elm) +
         IntAttr("new_axis_mask", nam) + IntAttr("shrink_axis_mask", sam);
}

std::vector<Item> RandomItems(const Dims& dims, std::mt19937* rng) {
  std::vector<Item> items;
  const bool ellipsis = (*rng)() % 3 == 0;
  int budget = static_cast<int>(dims.size());
  if (ellipsis) budget = static_cast<int>((*rng)() % (dims.size() + 1));
  const int ellipsis_at = ellipsis ? static_cast<int>((*rng)() % (budget + 1)) : -1;
  int d = 0;
  for (int k = 0; k <= budget; ++k) {
    if (k == ellipsis_at) items.push_back(Item{Item::kEllipsis});
    if ((*rng)() % 6 == 0) items.push_back(Item{Item::kNewAxis});
    if (k == budget) break;
    // Which input dim this item will consume (for a valid index).
    const int dim_index = ellipsis && k >= ellipsis_at
                              ? static_cast<int>(dims.size()) - (budget - k)
                              : d;
    const int64_t n = dims[dim_index];
    ++d;
    Item it{Item::kRange};
    if (n > 0 && (*rng)() % 4 == 0) {
      it.kind = Item::kIndex;
      it.index = static_cast<int64_t>((*rng)() % (2 * n)) - n;
    } else {
      static const int64_t kStrides[] = {1, 1, 2, 3, -1, -2, -3};
      it.stride = kStrides[(*rng)() % 7];
      it.has_begin = (*rng)() % 3 != 0;
      it.has_end = (*rng)() % 3 != 0;
      it.begin = static_cast<int64_t>((*rng)() % (2 * n + 5)) - n - 2;
      it.end = static_cast<int64_t>((*rng)() % (2 * n + 5)) - n - 2;
    }
    items.push_back(it);
  }
  return items;
}

TEST(StridedSliceTest, RandomSpecsAgainstNumpySemantics) {
  std::mt19937 rng(21);
  for (int rep = 0; rep < 300; ++rep) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    Dims dims;
    for (int d = 0; d < rank; ++d) dims.push_back(static_cast<int64_t>(rng() % 6));
    const std::vector<Item> items = RandomItems(dims, &rng);
    Dims b, e, s;
    const std::string masks = EncodeStridedSlice(items, &b, &e, &s);
    const DataType dt = rep % 3 == 0 ? GR_INT64 : GR_FLOAT;
    const Tensor x = Random(dt, dims, 1000 + rep);
    const bool konst = rep % 2 == 0;
    const DataType idx = rep % 4 < 2 ? GR_INT32 : GR_INT64;
    std::vector<Tensor> out =
        RunOp("StridedSlice",
              {Fed(x), Arg{Vec(b, idx), konst}, Arg{Vec(e, idx), konst}, Arg{Vec(s, idx), konst}},
              TAttr(dt) + TAttr(idx, "Index") + masks);
    if (out.empty()) {
      ADD_FAILURE() << "rep " << rep;
      return;
    }
    Dims want;
    const std::vector<Ref> ref = RefStridedSlice(dims, items, &want);
    ExpectGathered(out[0], want, {&x}, ref, nullptr, "rep " + std::to_string(rep));
  }
}

TEST(StridedSliceTest, AllDtypesAndNamedCases) {
  // x[1:-1, ::-2, tf.newaxis, 2] on [5, 7, 4]: every mask kind at once.
  const Dims dims = {5, 7, 4};
  std::vector<Item> items(4);
  items[0] = Item{Item::kRange, 0, true, true, 1, -1, 1};
  items[1] = Item{Item::kRange, 0, false, false, 0, 0, -2};
  items[2] = Item{Item::kNewAxis};
  items[3] = Item{Item::kIndex, 2};
  Dims b, e, s;
  const std::string masks = EncodeStridedSlice(items, &b, &e, &s);
  Dims want;
  const std::vector<Ref> ref = RefStridedSlice(dims, items, &want);
  EXPECT_EQ(want, (Dims{3, 4, 1}));
  for (DataType dt : MovementDtypes()) {
    const Tensor x = Random(dt, dims, 7);
    std::vector<Tensor> out =
        RunOp("StridedSlice", {Fed(x), Konst(Vec(b)), Konst(Vec(e)), Konst(Vec(s))},
              TAttr(dt) + TAttr(GR_INT32, "Index") + masks);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], want, {&x}, ref, nullptr, DtEnum(dt));
  }
}

TEST(StridedSliceTest, IdentityAndShrinkToScalarAndLarge) {
  const Tensor x = Random(GR_FLOAT, {4, 3}, 8);
  // x[...] shares the buffer; x[tf.newaxis] too (new dims, same data).
  std::vector<Tensor> out = RunOp(
      "StridedSlice", {Fed(x), Fed(Vec({0})), Fed(Vec({0})), Fed(Vec({1}))},
      TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index") + IntAttr("ellipsis_mask", 1));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  EXPECT_EQ(DimsOf(out[0]), (Dims{4, 3}));
  out = RunOp("StridedSlice", {Fed(x), Fed(Vec({0})), Fed(Vec({0})), Fed(Vec({1}))},
              TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index") + IntAttr("new_axis_mask", 1));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 4, 3}));
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  // x[-1, 2] is a scalar.
  out = RunOp("StridedSlice", {Fed(x), Fed(Vec({-1, 2})), Fed(Vec({0, 3})), Fed(Vec({1, 1}))},
              TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index") + IntAttr("shrink_axis_mask", 3));
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {}, {&x}, {{0, 11}});
  // Large reversed slice over a 2-thread and a 1-thread session.
  const Dims big = {257, 300};
  const Tensor y = Random(GR_FLOAT, big, 9);
  std::vector<Item> items(2);
  items[0] = Item{Item::kRange, 0, false, false, 0, 0, -1};
  items[1] = Item{Item::kRange, 0, true, true, 2, 299, 1};
  Dims b, e, s;
  const std::string masks = EncodeStridedSlice(items, &b, &e, &s);
  Dims want;
  const std::vector<Ref> ref = RefStridedSlice(big, items, &want);
  for (int threads : {1, 2}) {
    out = RunOp("StridedSlice", {Fed(y), Fed(Vec(b)), Fed(Vec(e)), Fed(Vec(s))},
                TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index") + masks, 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], want, {&y}, ref);
  }
}

TEST(StridedSliceTest, Errors) {
  const Tensor x = Random(GR_FLOAT, {4, 3}, 10);
  const std::string attrs = TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index");
  std::vector<Tensor> out;
  for (bool konst : {false, true}) {
    EXPECT_ERROR(TryOp("StridedSlice",
                       {Fed(x), Arg{Vec({0}), konst}, Arg{Vec({1}), konst}, Arg{Vec({0}), konst}},
                       attrs, 1, &out),
                 Code::kInvalidArgument, "strides[0] must be non-zero");
    EXPECT_ERROR(TryOp("StridedSlice",
                       {Fed(x), Arg{Vec({5}), konst}, Arg{Vec({6}), konst}, Arg{Vec({1}), konst}},
                       attrs + IntAttr("shrink_axis_mask", 1), 1, &out),
                 Code::kInvalidArgument, "slice index 5 of dimension 0 out of bounds.");
    EXPECT_ERROR(TryOp("StridedSlice",
                       {Fed(x), Arg{Vec({-5}), konst}, Arg{Vec({-4}), konst}, Arg{Vec({1}), konst}},
                       attrs + IntAttr("shrink_axis_mask", 1), 1, &out),
                 Code::kInvalidArgument, "slice index -1 of dimension 0 out of bounds.");
    EXPECT_ERROR(TryOp("StridedSlice",
                       {Fed(x), Arg{Vec({0, 0}), konst}, Arg{Vec({1, 1}), konst},
                        Arg{Vec({1, 1}), konst}},
                       attrs + IntAttr("ellipsis_mask", 3), 1, &out),
                 Code::kInvalidArgument, "Multiple ellipses in slice spec not allowed");
    EXPECT_ERROR(TryOp("StridedSlice",
                       {Fed(x), Arg{Vec({0, 0, 0}), konst}, Arg{Vec({1, 1, 1}), konst},
                        Arg{Vec({1, 1, 1}), konst}},
                       attrs, 1, &out),
                 Code::kInvalidArgument, "Index out of range using input dim 2");
    EXPECT_ERROR(TryOp("StridedSlice",
                       {Fed(x), Arg{Vec({1}), konst}, Arg{Vec({0}), konst}, Arg{Vec({-1}), konst}},
                       attrs + IntAttr("shrink_axis_mask", 1), 1, &out),
                 Code::kInvalidArgument, "only stride 1 allowed on non-range indexing.");
  }
  EXPECT_ERROR(TryOp("StridedSlice", {Fed(x), Fed(Vec({0})), Fed(Vec({1, 1})), Fed(Vec({1}))},
                     attrs, 1, &out),
               Code::kInvalidArgument, "Expected begin, end, and strides to be 1D equal size");
}

// ================================================== ConcatV2, Pack, Split

// Reference concat of inputs along `axis`.
std::vector<Ref> RefConcat(const std::vector<Dims>& ins, int axis, Dims* out) {
  *out = ins[0];
  (*out)[axis] = 0;
  std::vector<int64_t> offset;
  for (const Dims& d : ins) {
    offset.push_back((*out)[axis]);
    (*out)[axis] += d[axis];
  }
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(*out); ++i) {
    Dims idx = Unravel(i, *out);
    int k = 0;
    while (idx[axis] >= offset[k] + ins[k][axis]) ++k;
    idx[axis] -= offset[k];
    ref.push_back({k, Ravel(idx, ins[k])});
  }
  return ref;
}

TEST(ConcatV2Test, RandomAxesAllDtypes) {
  std::mt19937 rng(31);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int rep = 0; rep < 4; ++rep, ++case_no) {
      const int rank = 1 + static_cast<int>(rng() % 4);
      const int axis = static_cast<int>(rng() % rank);
      Dims base;
      for (int d = 0; d < rank; ++d) base.push_back(1 + static_cast<int64_t>(rng() % 4));
      const int n = 2 + static_cast<int>(rng() % 3);
      std::vector<Dims> shapes;
      std::vector<Tensor> ts;
      std::vector<Arg> args;
      for (int i = 0; i < n; ++i) {
        Dims d = base;
        d[axis] = static_cast<int64_t>(rng() % 4);  // including empty pieces
        shapes.push_back(d);
        ts.push_back(Random(dt, d, 300 + case_no * 10 + i));
      }
      for (const Tensor& t : ts) args.push_back(Fed(t));
      const bool negative = rep % 2 == 1;
      const DataType idx = rep % 3 == 0 ? GR_INT64 : GR_INT32;
      args.push_back(Arg{IntScalar(negative ? axis - rank : axis, idx), rep % 2 == 0});
      std::vector<Tensor> out =
          RunOp("ConcatV2", args, TAttr(dt) + IntAttr("N", n) + TAttr(idx, "Tidx"));
      ASSERT_EQ(out.size(), 1u);
      Dims want;
      const std::vector<Ref> ref = RefConcat(shapes, axis, &want);
      std::vector<const Tensor*> srcs;
      for (const Tensor& t : ts) srcs.push_back(&t);
      ExpectGathered(out[0], want, srcs, ref, nullptr, "case " + std::to_string(case_no));
    }
  }
}

TEST(ConcatV2Test, LargeAlongBothAxes) {
  const Tensor a = Random(GR_FLOAT, {200, 130}, 41), b = Random(GR_FLOAT, {200, 170}, 42);
  const Tensor c = Random(GR_FLOAT, {100, 130}, 43);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("ConcatV2", {Fed(a), Fed(b), Konst(IntScalar(1))},
                                    TAttr(GR_FLOAT) + IntAttr("N", 2), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    Dims want;
    ExpectGathered(out[0], {200, 300}, {&a, &b}, RefConcat({{200, 130}, {200, 170}}, 1, &want));
    out = RunOp("ConcatV2", {Fed(a), Fed(c), Konst(IntScalar(0))}, TAttr(GR_FLOAT) + IntAttr("N", 2),
                1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], {300, 130}, {&a, &c}, RefConcat({{200, 130}, {100, 130}}, 0, &want));
  }
}

TEST(ConcatV2Test, Errors) {
  const Tensor a = Random(GR_FLOAT, {2, 3}, 1), b = Random(GR_FLOAT, {2, 4}, 2);
  const Tensor r3 = Random(GR_FLOAT, {2, 3, 1}, 3), s = Random(GR_FLOAT, {}, 4);
  const std::string attrs = TAttr(GR_FLOAT) + IntAttr("N", 2);
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ConcatV2", {Fed(a), Fed(b), Fed(IntScalar(0))}, attrs, 1, &out),
               Code::kInvalidArgument, "ConcatOp : Dimension 1 in both shapes must be equal",
               "shape[0] = [2,3] vs. shape[1] = [2,4]");
  EXPECT_ERROR(TryOp("ConcatV2", {Fed(a), Fed(r3), Fed(IntScalar(0))}, attrs, 1, &out),
               Code::kInvalidArgument, "Ranks of all input tensors should match");
  EXPECT_ERROR(TryOp("ConcatV2", {Fed(a), Fed(a), Fed(IntScalar(2))}, attrs, 1, &out),
               Code::kInvalidArgument,
               "Expected concatenating dimensions in the range [-2, 2), but got 2");
  EXPECT_ERROR(TryOp("ConcatV2", {Fed(s), Fed(s), Fed(IntScalar(0))}, attrs, 1, &out),
               Code::kInvalidArgument, "Can't concatenate scalars");
  // Known at graph load: constant axis out of range.
  EXPECT_ERROR(TryOp("ConcatV2", {Fed(a), Fed(a), Konst(IntScalar(-3))}, attrs, 1, &out),
               Code::kInvalidArgument, "Expected concatenating dimensions in the range [-2, 2)");
}

TEST(PackTest, AxesDtypesAndSingleInput) {
  std::mt19937 rng(51);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    const Dims dims = {2, 3};
    for (int axis = -3; axis <= 2; ++axis, ++case_no) {
      const int n = 1 + static_cast<int>(rng() % 3);
      std::vector<Tensor> ts;
      std::vector<Arg> args;
      for (int i = 0; i < n; ++i) ts.push_back(Random(dt, dims, 500 + case_no * 5 + i));
      for (const Tensor& t : ts) args.push_back(Fed(t));
      std::vector<Tensor> out = RunOp("Pack", args, TAttr(dt) + IntAttr("N", n) + IntAttr("axis", axis));
      ASSERT_EQ(out.size(), 1u);
      // Reference: out[..., i, ...] = values[i][...].
      const int a = axis < 0 ? axis + 3 : axis;
      Dims want = dims;
      want.insert(want.begin() + a, n);
      std::vector<Ref> ref;
      for (int64_t f = 0; f < NumElements(want); ++f) {
        Dims idx = Unravel(f, want);
        const int k = static_cast<int>(idx[a]);
        idx.erase(idx.begin() + a);
        ref.push_back({k, Ravel(idx, dims)});
      }
      std::vector<const Tensor*> srcs;
      for (const Tensor& t : ts) srcs.push_back(&t);
      ExpectGathered(out[0], want, srcs, ref, nullptr, DtEnum(dt) + " axis " + std::to_string(axis));
    }
  }
  // Scalars stack into a vector.
  const Tensor s0 = Random(GR_INT32, {}, 1), s1 = Random(GR_INT32, {}, 2);
  std::vector<Tensor> out = RunOp("Pack", {Fed(s0), Fed(s1)}, TAttr(GR_INT32) + IntAttr("N", 2));
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {2}, {&s0, &s1}, {{0, 0}, {1, 0}});
}

TEST(PackTest, Errors) {
  const Tensor a = Random(GR_FLOAT, {2, 3}, 1), b = Random(GR_FLOAT, {3, 2}, 2);
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Pack", {Fed(a), Fed(b)}, TAttr(GR_FLOAT) + IntAttr("N", 2), 1, &out),
               Code::kInvalidArgument,
               "Shapes of all inputs must match: values[0].shape = [2,3] != values[1].shape = [3,2]");
  EXPECT_ERROR(TryOp("Pack", {Fed(a), Fed(a)}, TAttr(GR_FLOAT) + IntAttr("N", 2) + IntAttr("axis", 3),
                     1, &out),
               Code::kInvalidArgument, "axis = 3 not in [-3, 3)");
}

// Reference split of `dims` along `axis` into pieces of `sizes`.
std::vector<std::vector<Ref>> RefSplit(const Dims& dims, int axis, const Dims& sizes,
                                       std::vector<Dims>* outs) {
  std::vector<std::vector<Ref>> refs;
  int64_t off = 0;
  outs->clear();
  for (int64_t sz : sizes) {
    Dims d = dims;
    d[axis] = sz;
    outs->push_back(d);
    std::vector<Ref> ref;
    for (int64_t i = 0; i < NumElements(d); ++i) {
      Dims idx = Unravel(i, d);
      idx[axis] += off;
      ref.push_back({0, Ravel(idx, dims)});
    }
    refs.push_back(ref);
    off += sz;
  }
  return refs;
}

TEST(SplitTest, EvenSplitsAllDtypes) {
  std::mt19937 rng(61);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int rep = 0; rep < 3; ++rep, ++case_no) {
      const int rank = 1 + static_cast<int>(rng() % 3);
      const int axis = static_cast<int>(rng() % rank);
      const int num = 1 + static_cast<int>(rng() % 3);
      Dims dims;
      for (int d = 0; d < rank; ++d) dims.push_back(1 + static_cast<int64_t>(rng() % 3));
      dims[axis] = num * static_cast<int64_t>(rng() % 3);
      const Tensor x = Random(dt, dims, 600 + case_no);
      std::vector<Tensor> out = RunOp("Split", {Arg{IntScalar(rep == 1 ? axis - rank : axis), rep == 2}, Fed(x)},
                                      TAttr(dt) + IntAttr("num_split", num), num);
      ASSERT_EQ(out.size(), static_cast<size_t>(num));
      std::vector<Dims> want;
      const auto refs = RefSplit(dims, axis, Dims(num, dims[axis] / num), &want);
      for (int i = 0; i < num; ++i) ExpectGathered(out[i], want[i], {&x}, refs[i], nullptr, DtEnum(dt));
    }
  }
}

TEST(SplitVTest, SizesWithMinusOneAndLarge) {
  const Tensor x = Random(GR_FLOAT, {7, 5}, 71);
  for (DataType len_dt : {GR_INT32, GR_INT64, GR_INT8}) {
    std::vector<Tensor> out =
        RunOp("SplitV", {Fed(x), Konst(Vec({2, -1, 0, 1}, len_dt)), Konst(IntScalar(1))},
              TAttr(GR_FLOAT) + IntAttr("num_split", 4) + TAttr(len_dt, "Tlen"), 4);
    ASSERT_EQ(out.size(), 4u);
    std::vector<Dims> want;
    const auto refs = RefSplit({7, 5}, 1, {2, 2, 0, 1}, &want);
    for (int i = 0; i < 4; ++i) ExpectGathered(out[i], want[i], {&x}, refs[i]);
  }
  const Tensor big = Random(GR_DOUBLE, {401, 160}, 72);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("SplitV", {Fed(big), Fed(Vec({100, 301}, GR_INT64)), Fed(IntScalar(0))},
                                    TAttr(GR_DOUBLE) + IntAttr("num_split", 2), 2, threads);
    ASSERT_EQ(out.size(), 2u);
    std::vector<Dims> want;
    const auto refs = RefSplit({401, 160}, 0, {100, 301}, &want);
    for (int i = 0; i < 2; ++i) ExpectGathered(out[i], want[i], {&big}, refs[i]);
  }
}

TEST(SplitTest, Errors) {
  const Tensor x = Random(GR_FLOAT, {5, 4}, 1);
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Split", {Fed(IntScalar(0)), Fed(x)}, TAttr(GR_FLOAT) + IntAttr("num_split", 2), 2, &out),
               Code::kInvalidArgument,
               "Number of ways to split should evenly divide the split dimension, but got split_dim 0 "
               "(size = 5) and num_split 2");
  EXPECT_ERROR(TryOp("Split", {Fed(IntScalar(2)), Fed(x)}, TAttr(GR_FLOAT) + IntAttr("num_split", 2), 2, &out),
               Code::kInvalidArgument, "-input rank(-2) <= split_dim < input rank (2), but got 2");
  EXPECT_ERROR(TryOp("Split", {Konst(IntScalar(0)), Fed(x)}, TAttr(GR_FLOAT) + IntAttr("num_split", 3), 3, &out),
               Code::kInvalidArgument, "Number of ways to split should evenly divide");
  const std::string v = TAttr(GR_FLOAT) + IntAttr("num_split", 2) + TAttr(GR_INT32, "Tlen");
  EXPECT_ERROR(TryOp("SplitV", {Fed(x), Fed(Vec({2, 2})), Fed(IntScalar(0))}, v, 2, &out),
               Code::kInvalidArgument, "Determined shape must either match input shape along split_dim exactly");
  EXPECT_ERROR(TryOp("SplitV", {Fed(x), Fed(Vec({-1, -1})), Fed(IntScalar(0))}, v, 2, &out),
               Code::kInvalidArgument, "-1");
  EXPECT_ERROR(TryOp("SplitV", {Fed(x), Konst(Vec({4, 2})), Konst(IntScalar(0))}, v, 2, &out),
               Code::kInvalidArgument, "Determined shape must either match input shape");
}

TEST(UnpackTest, AxesAndDtypes) {
  for (DataType dt : MovementDtypes()) {
    const Dims dims = {3, 2, 4};
    const Tensor x = Random(dt, dims, 80);
    for (int axis = -3; axis < 3; ++axis) {
      const int a = axis < 0 ? axis + 3 : axis;
      const int num = static_cast<int>(dims[a]);
      std::vector<Tensor> out = RunOp("Unpack", {Fed(x)}, TAttr(dt) + IntAttr("num", num) + IntAttr("axis", axis), num);
      ASSERT_EQ(out.size(), static_cast<size_t>(num));
      Dims od = dims;
      od.erase(od.begin() + a);
      for (int k = 0; k < num; ++k) {
        std::vector<Ref> ref;
        for (int64_t i = 0; i < NumElements(od); ++i) {
          Dims idx = Unravel(i, od);
          idx.insert(idx.begin() + a, k);
          ref.push_back({0, Ravel(idx, dims)});
        }
        ExpectGathered(out[k], od, {&x}, ref, nullptr, DtEnum(dt));
      }
    }
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Unpack", {Fed(Random(GR_FLOAT, {3, 2}, 1))}, TAttr(GR_FLOAT) + IntAttr("num", 2), 2, &out),
               Code::kInvalidArgument, "Input shape axis 0 must equal 2, got shape [3,2]");
}

// ============================================= zero-copy contiguous parts

// Where an output is one contiguous run of the input that starts 64-byte
// aligned, Split, SplitV, Unpack, Slice and StridedSlice share the input's
// buffer instead of copying (ABI 1.1 ctx_set_output_from_input_range);
// elsewhere they copy. Values are checked either way.
const char* ElemAt(const Tensor& t, int64_t elems) {
  return static_cast<const char*>(t.raw_data()) + elems * static_cast<int64_t>(ElemSize(t.dtype()));
}

TEST(ZeroCopyTest, ContiguousAlignedPartsShareTheInput) {
  const Tensor x = Random(GR_FLOAT, {8, 16}, 90);  // rows of 64 bytes
  std::vector<Tensor> out = RunOp("Split", {Konst(IntScalar(0)), Fed(x)}, TAttr(GR_FLOAT) + IntAttr("num_split", 4), 4);
  ASSERT_EQ(out.size(), 4u);
  std::vector<Dims> want;
  auto refs = RefSplit({8, 16}, 0, {2, 2, 2, 2}, &want);
  for (int i = 0; i < 4; ++i) {
    ExpectGathered(out[i], want[i], {&x}, refs[i]);
    EXPECT_TRUE(out[i].SharesBufferWith(x)) << i;
    EXPECT_EQ(out[i].raw_data(), ElemAt(x, 32 * i)) << i;
  }
  // Split along axis 1 of one row: still one run per output.
  const Tensor row = Random(GR_INT64, {1, 32}, 91);
  out = RunOp("SplitV", {Fed(row), Konst(Vec({8, -1})), Konst(IntScalar(1))},
              TAttr(GR_INT64) + IntAttr("num_split", 2) + TAttr(GR_INT32, "Tlen"), 2);
  ASSERT_EQ(out.size(), 2u);
  refs = RefSplit({1, 32}, 1, {8, 24}, &want);
  for (int i = 0; i < 2; ++i) {
    ExpectGathered(out[i], want[i], {&row}, refs[i]);
    EXPECT_TRUE(out[i].SharesBufferWith(row)) << i;
  }
  out = RunOp("Unpack", {Fed(x)}, TAttr(GR_FLOAT) + IntAttr("num", 8) + IntAttr("axis", 0), 8);
  ASSERT_EQ(out.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(out[k].raw_data(), ElemAt(x, 16 * k)) << k;
    EXPECT_EQ(std::memcmp(out[k].raw_data(), ElemAt(x, 16 * k), 16 * sizeof(float)), 0) << k;
  }
  // Slice rows [2, 5): offset 32 elements (128 bytes).
  out = RunOp("Slice", {Fed(x), Konst(Vec({2, 0})), Konst(Vec({3, -1}))}, TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {3, 16}, {&x}, RefSlice({8, 16}, {2, 0}, {3, 16}, &want[0]));
  EXPECT_EQ(out[0].raw_data(), ElemAt(x, 32));
  // StridedSlice x[3] (shrink axis 0) and x[4:6].
  const std::string ss = TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index");
  out = RunOp("StridedSlice", {Fed(x), Konst(Vec({3})), Konst(Vec({4})), Konst(Vec({1}))},
              ss + IntAttr("shrink_axis_mask", 1));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{16}));
  EXPECT_EQ(out[0].raw_data(), ElemAt(x, 48));
  out = RunOp("StridedSlice", {Fed(x), Konst(Vec({4, 0})), Konst(Vec({6, 16})), Konst(Vec({1, 1}))}, ss);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{2, 16}));
  EXPECT_EQ(out[0].raw_data(), ElemAt(x, 64));
  // Strings share their elements too (the buffer owns the strings).
  const Tensor words = Random(GR_STRING, {4, 16}, 92);
  out = RunOp("Split", {Konst(IntScalar(0)), Fed(words)}, TAttr(GR_STRING) + IntAttr("num_split", 2), 2);
  ASSERT_EQ(out.size(), 2u);
  refs = RefSplit({4, 16}, 0, {2, 2}, &want);
  for (int i = 0; i < 2; ++i) ExpectGathered(out[i], want[i], {&words}, refs[i], nullptr, "strings");
}

TEST(ZeroCopyTest, UnalignedOrStridedPartsAreCopies) {
  // Rows of 12 bytes: the second part would start 24 bytes in.
  const Tensor x = Random(GR_FLOAT, {8, 3}, 93);
  std::vector<Tensor> out = RunOp("Split", {Konst(IntScalar(0)), Fed(x)}, TAttr(GR_FLOAT) + IntAttr("num_split", 4), 4);
  ASSERT_EQ(out.size(), 4u);
  std::vector<Dims> want;
  auto refs = RefSplit({8, 3}, 0, {2, 2, 2, 2}, &want);
  for (int i = 0; i < 4; ++i) ExpectGathered(out[i], want[i], {&x}, refs[i]);
  EXPECT_TRUE(out[0].SharesBufferWith(x));  // starts at the (aligned) start
  EXPECT_FALSE(out[1].SharesBufferWith(x));
  // Split along axis 1 with two rows: each part is two runs.
  const Tensor y = Random(GR_FLOAT, {2, 32}, 94);
  out = RunOp("Split", {Konst(IntScalar(1)), Fed(y)}, TAttr(GR_FLOAT) + IntAttr("num_split", 2), 2);
  ASSERT_EQ(out.size(), 2u);
  refs = RefSplit({2, 32}, 1, {16, 16}, &want);
  for (int i = 0; i < 2; ++i) {
    ExpectGathered(out[i], want[i], {&y}, refs[i]);
    EXPECT_FALSE(out[i].SharesBufferWith(y)) << i;
  }
  // A box of half rows, and every other row.
  const Tensor z = Random(GR_FLOAT, {8, 16}, 95);
  out = RunOp("Slice", {Fed(z), Konst(Vec({2, 0})), Konst(Vec({3, 8}))}, TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(out.size(), 1u);
  Dims wd;
  ExpectGathered(out[0], {3, 8}, {&z}, RefSlice({8, 16}, {2, 0}, {3, 8}, &wd));
  EXPECT_FALSE(out[0].SharesBufferWith(z));
  out = RunOp("StridedSlice", {Fed(z), Konst(Vec({0})), Konst(Vec({8})), Konst(Vec({2}))},
              TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{4, 16}));
  EXPECT_FALSE(out[0].SharesBufferWith(z));
  for (int64_t i = 0; i < 4 * 16; ++i) EXPECT_EQ(out[0].data<float>()[i], z.data<float>()[(i / 16) * 32 + i % 16]) << i;
}

// Shared parts of a buffer the graph made, each read by an op that may
// reuse a dying input in place: no part overwrites another.
TEST(ZeroCopyTest, InPlaceConsumersOfSharedPartsStayApart) {
  const Tensor x = Random(GR_FLOAT, {4, 32}, 96);
  const std::string f = TAttr(GR_FLOAT);
  std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstFloat("one", {}, {1.0f}) + ConstFloat("two", {}, {2.0f}) +
                  ConstInt32("axis", {0}) + NodeText("x2", "Mul", {"x", "two"}, f) +
                  NodeText("parts", "Split", {"axis", "x2"}, f + IntAttr("num_split", 2)) +
                  NodeText("a", "AddV2", {"parts:0", "one"}, f) + NodeText("b", "AddV2", {"parts:1", "two"}, f) +
                  NodeText("c", "Neg", {"a"}, f);
  for (int threads : {1, 2}) {
    const std::vector<Tensor> out = RunOps(g, {{"x:0", x}}, {"c:0", "b:0"}, threads);
    ASSERT_EQ(out.size(), 2u);
    for (int64_t i = 0; i < 64; ++i) {
      EXPECT_EQ(out[0].data<float>()[i], -(2.0f * x.data<float>()[i] + 1.0f)) << i;
      EXPECT_EQ(out[1].data<float>()[i], 2.0f * x.data<float>()[64 + i] + 2.0f) << i;
    }
  }
}

// ============================================================ Transpose

std::vector<Ref> RefTranspose(const Dims& dims, const Dims& perm, Dims* out) {
  out->clear();
  for (int64_t p : perm) out->push_back(dims[p]);
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(*out); ++i) {
    const Dims oi = Unravel(i, *out);
    Dims ii(dims.size());
    for (size_t k = 0; k < perm.size(); ++k) ii[perm[k]] = oi[k];
    ref.push_back({0, Ravel(ii, dims)});
  }
  return ref;
}

TEST(TransposeTest, AllPermutationsRank3AndDtypes) {
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    Dims perm = {0, 1, 2};
    do {
      const Dims dims = {3, 5, 2};
      const Tensor x = Random(dt, dims, 900 + case_no++);
      const bool konst = case_no % 2 == 0;
      std::vector<Tensor> out = RunOp("Transpose", {Fed(x), Arg{Vec(perm, GR_INT64), konst}},
                                      TAttr(dt) + TAttr(GR_INT64, "Tperm"));
      ASSERT_EQ(out.size(), 1u);
      Dims want;
      const std::vector<Ref> ref = RefTranspose(dims, perm, &want);
      ExpectGathered(out[0], want, {&x}, ref, nullptr, DtEnum(dt));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(TransposeTest, BlockedPathsLargeAndOdd) {
  // 2-D, batched last-two-dims, NHWC<->NCHW, and a rank-4 general perm, with
  // odd sizes that leave partial tiles, and narrow innermost dims; big
  // enough to split over the pool.
  struct Case {
    Dims dims, perm;
    DataType dt;
  };
  const std::vector<Case> cases = {
      {{257, 301}, {1, 0}, GR_FLOAT},       {{3, 67, 129}, {0, 2, 1}, GR_FLOAT},
      {{2, 17, 19, 33}, {0, 3, 1, 2}, GR_FLOAT}, {{2, 33, 17, 19}, {0, 2, 3, 1}, GR_DOUBLE},
      {{31, 9, 65}, {2, 1, 0}, GR_INT8},    {{129, 130}, {1, 0}, GR_BFLOAT16},
      {{40, 41}, {1, 0}, GR_COMPLEX128},    {{5, 300, 40}, {1, 0, 2}, GR_INT32},
      {{23, 29}, {1, 0}, GR_STRING},
      // Narrow innermost dims (NCHW -> NHWC of 3 channels, 2 and 5 columns).
      {{3, 3, 37, 41}, {0, 2, 3, 1}, GR_FLOAT}, {{2, 300, 2}, {0, 2, 1}, GR_INT8}, {{2, 5, 300}, {0, 2, 1}, GR_INT64},
      {{5, 600}, {1, 0}, GR_HALF}};
  int n = 0;
  for (const Case& c : cases) {
    const Tensor x = Random(c.dt, c.dims, 950 + n++);
    Dims want;
    const std::vector<Ref> ref = RefTranspose(c.dims, c.perm, &want);
    for (int threads : {1, 2}) {
      std::vector<Tensor> out = RunOp("Transpose", {Fed(x), Fed(Vec(c.perm))}, TAttr(c.dt), 1, threads);
      ASSERT_EQ(out.size(), 1u);
      ExpectGathered(out[0], want, {&x}, ref, nullptr, "case " + std::to_string(n));
    }
  }
}

TEST(TransposeTest, LayoutPreservingSharesBufferAndErrors) {
  const Tensor x = Random(GR_FLOAT, {4, 1, 3}, 1);
  std::vector<Tensor> out = RunOp("Transpose", {Fed(x), Fed(Vec({1, 0, 2}))}, TAttr(GR_FLOAT));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 4, 3}));
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  const Tensor s = Random(GR_FLOAT, {}, 2);
  out = RunOp("Transpose", {Fed(s), Fed(Vec({}))}, TAttr(GR_FLOAT));
  ASSERT_EQ(out.size(), 1u);
  ExpectGathered(out[0], {}, {&s}, {{0, 0}});
  EXPECT_ERROR(TryOp("Transpose", {Fed(x), Fed(Vec({0, 1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "transpose expects a vector of size 3. But input(1) is a vector of size 2");
  EXPECT_ERROR(TryOp("Transpose", {Fed(x), Fed(Vec({0, 1, 3}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "3 is out of range [0 .. 3)");
  EXPECT_ERROR(TryOp("Transpose", {Fed(x), Fed(Vec({0, 1, 1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "2 is missing from {0,1,1}.");
  EXPECT_ERROR(TryOp("Transpose", {Fed(x), Konst(Vec({0, 1, 1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "duplicated");
}

// ================================================== Tile and BroadcastTo

TEST(TileTest, RandomMultiplesAllDtypes) {
  std::mt19937 rng(101);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int rep = 0; rep < 3; ++rep, ++case_no) {
      const int rank = static_cast<int>(rng() % 4);
      Dims dims, mult;
      for (int d = 0; d < rank; ++d) {
        dims.push_back(static_cast<int64_t>(rng() % 4));
        mult.push_back(static_cast<int64_t>(rng() % 4));
      }
      const Tensor x = Random(dt, dims, 1100 + case_no);
      std::vector<Tensor> out = RunOp("Tile", {Fed(x), Arg{Vec(mult, rep ? GR_INT64 : GR_INT32), rep == 2}},
                                      TAttr(dt) + TAttr(rep ? GR_INT64 : GR_INT32, "Tmultiples"));
      ASSERT_EQ(out.size(), 1u);
      Dims want;
      for (int d = 0; d < rank; ++d) want.push_back(dims[d] * mult[d]);
      std::vector<Ref> ref;
      for (int64_t i = 0; i < NumElements(want); ++i) {
        Dims idx = Unravel(i, want);
        for (int d = 0; d < rank; ++d) idx[d] %= dims[d];
        ref.push_back({0, Ravel(idx, dims)});
      }
      ExpectGathered(out[0], want, {&x}, ref, nullptr, "case " + std::to_string(case_no));
    }
  }
}

TEST(TileTest, LargeAndErrors) {
  const Tensor x = Random(GR_FLOAT, {3, 70}, 5);
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("Tile", {Fed(x), Fed(Vec({120, 3}))}, TAttr(GR_FLOAT), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    const Dims want = {360, 210};
    std::vector<Ref> ref;
    for (int64_t i = 0; i < NumElements(want); ++i) {
      const Dims idx = Unravel(i, want);
      ref.push_back({0, (idx[0] % 3) * 70 + idx[1] % 70});
    }
    ExpectGathered(out[0], want, {&x}, ref);
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Tile", {Fed(x), Fed(Vec({1}))}, TAttr(GR_FLOAT), 1, &out), Code::kInvalidArgument,
               "Expected multiples argument to be a vector of length 2 but got length 1");
  EXPECT_ERROR(TryOp("Tile", {Fed(x), Fed(Vec({1, -1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Expected multiples[1] >= 0, but got -1");
  EXPECT_ERROR(TryOp("Tile", {Fed(x), Konst(Vec({1, -1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Expected multiples[1] >= 0, but got -1");
}

TEST(BroadcastToTest, ShapesDtypesAndErrors) {
  struct Case {
    Dims in, shape;
  };
  const std::vector<Case> cases = {{{3}, {2, 3}}, {{2, 1}, {2, 4}}, {{1}, {3, 1, 2}},
                                   {{}, {2, 2}},  {{4, 1, 3}, {2, 4, 5, 3}}, {{2, 3}, {2, 3}},
                                   {{1, 3}, {0, 3}}, {{300, 1}, {300, 200}}};
  int n = 0;
  for (DataType dt : {GR_FLOAT, GR_INT64, GR_BOOL, GR_STRING, GR_HALF}) {
    for (const Case& c : cases) {
      const Tensor x = Random(dt, c.in, 1200 + n++);
      std::vector<Tensor> out = RunOp("BroadcastTo", {Fed(x), Arg{Vec(c.shape), n % 2 == 0}}, TAttr(dt));
      ASSERT_EQ(out.size(), 1u);
      std::vector<Ref> ref;
      for (int64_t i = 0; i < NumElements(c.shape); ++i) {
        const Dims oi = Unravel(i, c.shape);
        Dims ii;
        for (size_t d = 0; d < c.in.size(); ++d) {
          const int64_t k = oi[d + c.shape.size() - c.in.size()];
          ii.push_back(c.in[d] == 1 ? 0 : k);
        }
        ref.push_back({0, Ravel(ii, c.in)});
      }
      ExpectGathered(out[0], c.shape, {&x}, ref, nullptr, DtEnum(dt) + " case " + std::to_string(n));
      if (NumElements(c.in) == NumElements(c.shape) && NumElements(c.in) > 0) {
        EXPECT_TRUE(out[0].SharesBufferWith(x));
      }
    }
  }
  std::vector<Tensor> out;
  const Tensor x = Random(GR_FLOAT, {2, 3}, 1);
  EXPECT_ERROR(TryOp("BroadcastTo", {Fed(x), Fed(Vec({4, 3}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4,3]");
  EXPECT_ERROR(TryOp("BroadcastTo", {Fed(x), Fed(Vec({3}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Rank of input (2) must be no greater than rank of output shape (1).");
  EXPECT_ERROR(TryOp("BroadcastTo", {Fed(x), Konst(Vec({4, 3}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Incompatible shapes");
}

// ============================================================ Pad family

// Reference constant pad: source element or -1 (fill).
std::vector<Ref> RefPad(const Dims& dims, const Dims& before, const Dims& after, Dims* out) {
  out->clear();
  for (size_t d = 0; d < dims.size(); ++d) out->push_back(dims[d] + before[d] + after[d]);
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(*out); ++i) {
    Dims idx = Unravel(i, *out);
    bool inside = true;
    for (size_t d = 0; d < dims.size(); ++d) {
      idx[d] -= before[d];
      inside = inside && idx[d] >= 0 && idx[d] < dims[d];
    }
    ref.push_back(inside ? Ref{0, Ravel(idx, dims)} : Ref{-1, 0});
  }
  return ref;
}

TEST(PadTest, PadAndPadV2AllDtypes) {
  std::mt19937 rng(121);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int rep = 0; rep < 3; ++rep, ++case_no) {
      const int rank = static_cast<int>(rng() % 4);
      Dims dims, before, after;
      for (int d = 0; d < rank; ++d) {
        dims.push_back(static_cast<int64_t>(rng() % 4));
        before.push_back(static_cast<int64_t>(rng() % 3));
        after.push_back(static_cast<int64_t>(rng() % 3));
      }
      const Tensor x = Random(dt, dims, 1300 + case_no);
      const DataType pdt = rep == 1 ? GR_INT64 : GR_INT32;
      Dims want;
      const std::vector<Ref> ref = RefPad(dims, before, after, &want);
      // Pad: zeros (empty strings).
      std::vector<Tensor> out = RunOp("Pad", {Fed(x), Arg{Paddings(before, after, pdt), rep == 2}},
                                      TAttr(dt) + TAttr(pdt, "Tpaddings"));
      ASSERT_EQ(out.size(), 1u);
      Tensor zero(dt, TensorShape({}));
      if (dt != GR_STRING) std::memset(zero.raw_data(), 0, ElemSize(dt));
      ExpectGathered(out[0], want, {&x}, ref, &zero, "Pad " + DtEnum(dt));
      // PadV2: a given constant.
      const Tensor c = Random(dt, {}, 77 + case_no);
      out = RunOp("PadV2", {Fed(x), Arg{Paddings(before, after, pdt), rep == 2}, Fed(c)},
                  TAttr(dt) + TAttr(pdt, "Tpaddings"));
      ASSERT_EQ(out.size(), 1u);
      ExpectGathered(out[0], want, {&x}, ref, &c, "PadV2 " + DtEnum(dt));
    }
  }
}

// Reference mirror pad: offset 1 = REFLECT, 0 = SYMMETRIC.
std::vector<Ref> RefMirrorPad(const Dims& dims, const Dims& before, const Dims& after, int offset,
                              Dims* out) {
  out->clear();
  for (size_t d = 0; d < dims.size(); ++d) out->push_back(dims[d] + before[d] + after[d]);
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(*out); ++i) {
    Dims idx = Unravel(i, *out);
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t k = idx[d] - before[d];
      if (k < 0) k = -k - 1 + offset;
      if (k >= dims[d]) k = 2 * dims[d] - k - 1 - offset;
      idx[d] = k;
    }
    ref.push_back({0, Ravel(idx, dims)});
  }
  return ref;
}

TEST(MirrorPadTest, ReflectAndSymmetricAllDtypes) {
  std::mt19937 rng(131);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int mode = 0; mode < 2; ++mode) {
      for (int rep = 0; rep < 3; ++rep, ++case_no) {
        const int rank = 1 + static_cast<int>(rng() % 3);
        Dims dims, before, after;
        for (int d = 0; d < rank; ++d) {
          dims.push_back(1 + mode + static_cast<int64_t>(rng() % 4));
          const int64_t lim = dims[d] - mode;  // REFLECT (mode 1): < dim
          before.push_back(static_cast<int64_t>(rng() % (lim + 1)));
          after.push_back(static_cast<int64_t>(rng() % (lim + 1)));
        }
        const Tensor x = Random(dt, dims, 1400 + case_no);
        std::vector<Tensor> out =
            RunOp("MirrorPad", {Fed(x), Arg{Paddings(before, after), rep == 1}},
                  TAttr(dt) + StrAttr("mode", mode ? "REFLECT" : "SYMMETRIC"));
        ASSERT_EQ(out.size(), 1u);
        Dims want;
        const std::vector<Ref> ref = RefMirrorPad(dims, before, after, mode, &want);
        ExpectGathered(out[0], want, {&x}, ref, nullptr, DtEnum(dt) + (mode ? " REFLECT" : " SYMMETRIC"));
      }
    }
  }
}

TEST(PadTest, LargeOneAndTwoThreads) {
  const Dims dims = {150, 211};
  const Tensor x = Random(GR_FLOAT, dims, 140);
  const Dims before = {3, 7}, after = {5, 2};
  for (int threads : {1, 2}) {
    Dims want;
    std::vector<Tensor> out = RunOp("MirrorPad", {Fed(x), Fed(Paddings(before, after))},
                                    TAttr(GR_FLOAT) + StrAttr("mode", "REFLECT"), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], {158, 220}, {&x}, RefMirrorPad(dims, before, after, 1, &want));
    const Tensor c = Tensor::Scalar<float>(GR_FLOAT, -7.5f);
    out = RunOp("PadV2", {Fed(x), Fed(Paddings(before, after)), Fed(c)}, TAttr(GR_FLOAT), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], {158, 220}, {&x}, RefPad(dims, before, after, &want), &c);
  }
}

TEST(PadTest, Errors) {
  const Tensor x = Random(GR_FLOAT, {3, 4}, 1);
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("Pad", {Fed(x), Fed(Paddings({1, -1}, {0, 0}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "Paddings must be non-negative: -1 0");
  EXPECT_ERROR(TryOp("Pad", {Fed(x), Fed(Paddings({1}, {0}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "The first dimension of paddings must be the rank of inputs");
  EXPECT_ERROR(TryOp("Pad", {Fed(x), Fed(Vec({1, 1, 1, 1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "paddings must be a matrix with 2 columns");
  EXPECT_ERROR(TryOp("PadV2", {Fed(x), Fed(Paddings({1, 1}, {0, 0})), Fed(Random(GR_FLOAT, {2}, 3))},
                     TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "constant_values must be a scalar");
  EXPECT_ERROR(TryOp("MirrorPad", {Fed(x), Fed(Paddings({3, 0}, {0, 0}))},
                     TAttr(GR_FLOAT) + StrAttr("mode", "REFLECT"), 1, &out),
               Code::kInvalidArgument, "paddings must be less than the dimension size: 3, 0 not less than 3");
  EXPECT_ERROR(TryOp("MirrorPad", {Fed(x), Fed(Paddings({0, 0}, {0, 5}))},
                     TAttr(GR_FLOAT) + StrAttr("mode", "SYMMETRIC"), 1, &out),
               Code::kInvalidArgument, "paddings must be no greater than the dimension size: 0, 5 greater than 4");
  EXPECT_ERROR(TryOp("MirrorPad", {Fed(x), Konst(Paddings({3, 0}, {0, 0}))},
                     TAttr(GR_FLOAT) + StrAttr("mode", "REFLECT"), 1, &out),
               Code::kInvalidArgument, "paddings must be less than the dimension size");
}

// ============================================================== Reverse

TEST(ReverseTest, ReverseV2AndReverseAllDtypes) {
  std::mt19937 rng(151);
  int case_no = 0;
  for (DataType dt : MovementDtypes()) {
    for (int rep = 0; rep < 3; ++rep, ++case_no) {
      const int rank = static_cast<int>(rng() % 4);
      Dims dims;
      std::vector<bool> rev;
      Dims axes;
      for (int d = 0; d < rank; ++d) {
        dims.push_back(static_cast<int64_t>(rng() % 5));
        rev.push_back(rng() % 2 == 1);
        if (rev.back()) axes.push_back(rng() % 2 ? d : d - rank);
      }
      const Tensor x = Random(dt, dims, 1500 + case_no);
      std::vector<Ref> ref;
      for (int64_t i = 0; i < NumElements(dims); ++i) {
        Dims idx = Unravel(i, dims);
        for (int d = 0; d < rank; ++d)
          if (rev[d]) idx[d] = dims[d] - 1 - idx[d];
        ref.push_back({0, Ravel(idx, dims)});
      }
      const DataType adt = rep == 1 ? GR_INT64 : GR_INT32;
      std::vector<Tensor> out = RunOp("ReverseV2", {Fed(x), Arg{Vec(axes, adt), rep == 2}},
                                      TAttr(dt) + TAttr(adt, "Tidx"));
      ASSERT_EQ(out.size(), 1u);
      ExpectGathered(out[0], dims, {&x}, ref, nullptr, "ReverseV2 " + DtEnum(dt));
      out = RunOp("Reverse", {Fed(x), Fed(BoolTensor({rank}, rev))}, TAttr(dt));
      ASSERT_EQ(out.size(), 1u);
      ExpectGathered(out[0], dims, {&x}, ref, nullptr, "Reverse " + DtEnum(dt));
    }
  }
}

TEST(ReverseTest, LargeAndErrors) {
  const Dims dims = {130, 300};
  const Tensor x = Random(GR_FLOAT, dims, 160);
  std::vector<Ref> ref;
  for (int64_t i = 0; i < NumElements(dims); ++i) {
    const Dims idx = Unravel(i, dims);
    ref.push_back({0, Ravel({129 - idx[0], 299 - idx[1]}, dims)});
  }
  for (int threads : {1, 2}) {
    std::vector<Tensor> out = RunOp("ReverseV2", {Fed(x), Fed(Vec({0, 1}))}, TAttr(GR_FLOAT), 1, threads);
    ASSERT_EQ(out.size(), 1u);
    ExpectGathered(out[0], dims, {&x}, ref);
  }
  std::vector<Tensor> out;
  EXPECT_ERROR(TryOp("ReverseV2", {Fed(x), Fed(Vec({2}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "'axis'[0] = 2 is out of valid range [0, 1");
  EXPECT_ERROR(TryOp("ReverseV2", {Fed(x), Fed(Vec({1, -1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "axis 1 specified more than once.");
  EXPECT_ERROR(TryOp("ReverseV2", {Fed(x), Konst(Vec({1, -1}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "axis 1 specified more than once.");
  EXPECT_ERROR(TryOp("Reverse", {Fed(x), Fed(BoolTensor({3}, {true, false, true}))}, TAttr(GR_FLOAT), 1, &out),
               Code::kInvalidArgument, "'dims' must have the same number of values as 'input' has dimensions");
}

// A failed Run leaves the session usable.
TEST(ArraySessionTest, ErrorThenSuccessInOneSession) {
  Feeds unused;
  const std::string g =
      PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("b", "DT_INT32") + PlaceholderNode("s", "DT_INT32") +
      NodeText("op", "Slice", {"x", "b", "s"}, TAttr(GR_FLOAT) + TAttr(GR_INT32, "Index"));
  LoadStandardPlugins();
  std::unique_ptr<Session> sess = CreateSession(ParseGraph(g), 2);
  ASSERT_NE(sess, nullptr);
  const Tensor x = Random(GR_FLOAT, {4}, 1);
  std::vector<Tensor> out;
  EXPECT_ERROR(sess->Run({{"x:0", x}, {"b:0", Vec({3})}, {"s:0", Vec({2})}}, {"op:0"}, {}, &out),
               Code::kInvalidArgument, "Expected size[0] in [0, 1], but got 2");
  ASSERT_TRUE(sess->Run({{"x:0", x}, {"b:0", Vec({1})}, {"s:0", Vec({2})}}, {"op:0"}, {}, &out).ok());
  ExpectGathered(out[0], {2}, {&x}, {{0, 1}, {0, 2}});
}

}  // namespace
}  // namespace graphrt
