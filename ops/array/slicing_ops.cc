// Op definitions of the array family, part 3: ops that move data between
// positions: ConcatV2, Split, SplitV, Slice, StridedSlice, Pack, Unpack,
// Transpose, Tile, Pad, PadV2, MirrorPad, ReverseV2, Reverse, GatherV2,
// GatherNd, ScatterNd, TensorScatterUpdate/Add/Sub. TensorFlow's
// signatures, attrs, defaults and shape functions; REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>
#include <vector>

#include "array/array_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::ConstIntScalar;
using array::ConstIntVector;
using array::UnknownOfRank;
using array::VectorLength;

// ---------------------------------------------------------------- Concat

Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  PartialShape axis_shape;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(n), 0, &axis_shape));
  int32_t rank = -1;
  for (int i = 0; i < n; ++i) {
    const PartialShape s = c->input(i);
    if (!s.known_rank()) continue;
    if (s.rank == 0) {
      return errors::InvalidArgument("Can't concatenate scalars (use tf.stack instead)");
    }
    if (rank >= 0 && s.rank != rank) {
      return errors::InvalidArgument("Shape must be rank ", rank, " but is rank ", s.rank,
                                     " for input ", i);
    }
    rank = s.rank;
  }
  if (rank < 0) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  int64_t axis = 0;
  if (!ConstIntScalar(c, n, &axis)) {
    c->set_output(0, UnknownOfRank(rank));
    return Status();
  }
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument("ConcatOp : Expected concatenating dimensions in the range [",
                                   -rank, ", ", rank, "), but got ", axis);
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> out(static_cast<size_t>(rank), -1);
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    const PartialShape s = c->input(i);
    if (!s.known_rank()) {
      sum = -1;
      continue;
    }
    for (int32_t d = 0; d < rank; ++d) {
      if (d == axis) {
        GR_RETURN_IF_ERROR_SDK(sf::AddDims(sum, s.dims[d], &sum));
      } else {
        int64_t m = -1;
        Status st = sf::MergeDim(out[d], s.dims[d], &m);
        if (!st.ok()) {
          return errors::InvalidArgument("ConcatOp : Dimension ", d,
                                         " in both shapes must be equal, but are ", out[d],
                                         " and ", s.dims[d], " (input ", i, ")");
        }
        out[d] = m;
      }
    }
  }
  out[axis] = sum;
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

// ----------------------------------------------------------------- Split

Status SplitShape(InferenceContext* c) {
  int64_t num_split = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("num_split", &num_split));
  const PartialShape in = c->input(1);
  int64_t axis = 0;
  const bool axis_known = ConstIntScalar(c, 0, &axis);
  if (!in.known_rank()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape::Unknown());
    return Status();
  }
  if (!axis_known) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, UnknownOfRank(in.rank));
    return Status();
  }
  const int64_t r = in.rank;
  if (axis < -r || axis >= r) {
    return errors::InvalidArgument("-input rank(-", r, ") <= split_dim < input rank (", r,
                                   "), but got ", axis);
  }
  if (axis < 0) axis += r;
  std::vector<int64_t> out = in.dims;
  const int64_t d = in.dims[axis];
  if (d >= 0) {
    if (d % num_split != 0) {
      return errors::InvalidArgument(
          "Number of ways to split should evenly divide the split dimension, but got split_dim ",
          axis, " (size = ", d, ") and num_split ", num_split);
    }
    out[axis] = d / num_split;
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape::Known(out));
  return Status();
}

Status SplitVShape(InferenceContext* c) {
  int64_t num_split = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("num_split", &num_split));
  const PartialShape in = c->input(0);
  int64_t axis = 0;
  const bool axis_known = ConstIntScalar(c, 2, &axis);
  if (!in.known_rank()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape::Unknown());
    return Status();
  }
  const int64_t r = in.rank;
  if (axis_known && (axis < -r || axis >= r)) {
    return errors::InvalidArgument("-input rank(-", r, ") <= split_dim < input rank (", r,
                                   "), but got ", axis);
  }
  std::vector<int64_t> sizes;
  if (!axis_known || !ConstIntVector(c, 1, &sizes)) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, UnknownOfRank(r));
    return Status();
  }
  if (axis < 0) axis += r;
  if (static_cast<int64_t>(sizes.size()) != num_split) {
    return errors::InvalidArgument("Length of size_splits should be equal to num_outputs: ",
                                   sizes.size(), " vs. ", num_split);
  }
  int neg = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (neg >= 0) {
        return errors::InvalidArgument("Only one dimensions can have a value of -1. Second one "
                                       "found at dimension ", i);
      }
      neg = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return errors::InvalidArgument("Split size at index ", i,
                                     " must be >= 0. Got: ", sizes[i]);
    } else if (!sf::AddDims(total, sizes[i], &total).ok()) {
      return errors::InvalidArgument("Split sizes ", array::JoinInts(sizes),
                                     " add up to more than 2^58");
    }
  }
  const int64_t d = in.dims[axis];
  if (d >= 0) {
    if ((neg < 0 && total != d) || (neg >= 0 && total > d)) {
      return errors::InvalidArgument(
          "Determined shape must either match input shape along split_dim exactly if fully "
          "specified, or be less than the size of the input along split_dim if not fully "
          "specified.  Got: ", total);
    }
    if (neg >= 0) sizes[neg] = d - total;
  } else if (neg >= 0) {
    sizes[neg] = -1;
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    std::vector<int64_t> out = in.dims;
    out[axis] = sizes[i];
    c->set_output(i, PartialShape::Known(out));
  }
  return Status();
}

// ----------------------------------------------------------------- Slice

Status SliceShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape bs, ss;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &bs));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 1, &ss));
  int64_t n = -1;
  GR_RETURN_IF_ERROR_SDK(sf::MergeDim(bs.dims[0], ss.dims[0], &n));
  if (in.known_rank() && n >= 0 && n != in.rank) {
    return errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of size ",
                                   in.rank, ", but got shapes ", sf::ShapeString(bs), " and ",
                                   sf::ShapeString(ss), " instead.");
  }
  const int64_t rank = in.known_rank() ? in.rank : n;
  if (rank < 0) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  std::vector<int64_t> begin, size;
  const bool begin_known = ConstIntVector(c, 1, &begin);
  const bool size_known = ConstIntVector(c, 2, &size);
  std::vector<int64_t> out(static_cast<size_t>(rank), -1);
  if (size_known) {
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t dim = in.known_rank() ? in.dims[i] : -1;
      int64_t s = size[i];
      if (s < -1) {
        return errors::InvalidArgument("Expected size[", i, "] in [0, ", dim, "], but got ", s);
      }
      if (begin_known) {
        const int64_t b = begin[i];
        if (dim >= 0) {
          if (b < 0 || b > dim) {
            return errors::InvalidArgument("Expected begin[", i, "] in [0, ", dim, "], but got ", b);
          }
          if (s == -1) s = dim - b;
          if (s < 0 || s > dim - b) {  // not b + s > dim: that can overflow
            return errors::InvalidArgument("Expected size[", i, "] in [0, ", dim - b,
                                           "], but got ", s);
          }
        }
      }
      out[i] = s;
    }
  }
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

Status StridedSliceShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape bs, es, ss, m;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &bs));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 1, &es));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(3), 1, &ss));
  GR_RETURN_IF_ERROR_SDK(sf::Merge(bs, es, &m));
  GR_RETURN_IF_ERROR_SDK(sf::Merge(m, ss, &m));
  std::vector<int64_t> begin, end, strides;
  if (!in.known_rank() || m.dims[0] < 0 || !ConstIntVector(c, 3, &strides)) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const bool begin_known = ConstIntVector(c, 1, &begin);
  const bool end_known = ConstIntVector(c, 2, &end);
  array::StridedSliceMasks masks;
  GR_RETURN_IF_ERROR_SDK(masks.Read(c));
  array::StridedSliceSpec spec;
  GR_RETURN_IF_ERROR_SDK(array::ValidateStridedSlice(in, begin, begin_known, end, end_known,
                                                     strides, masks.begin, masks.end,
                                                     masks.ellipsis, masks.new_axis,
                                                     masks.shrink_axis, &spec));
  c->set_output(0, PartialShape::Known(spec.final_shape));
  return Status();
}

// ------------------------------------------------------------ Pack/Unpack

Status PackShape(InferenceContext* c) {
  int64_t axis = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("axis", &axis));
  PartialShape cur = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    Status s = sf::Merge(cur, c->input(i), &cur);
    if (!s.ok()) {
      return errors::InvalidArgument("Shapes of all inputs must match: values[0].shape = ",
                                     sf::ShapeString(c->input(0)), " != values[", i,
                                     "].shape = ", sf::ShapeString(c->input(i)));
    }
  }
  if (!cur.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int64_t r = cur.rank + 1;
  if (axis < -r || axis >= r) {
    return errors::InvalidArgument("Invalid axis: ", axis, "; must be in [", -r, ",", r, ")");
  }
  if (axis < 0) axis += r;
  std::vector<int64_t> out = cur.dims;
  out.insert(out.begin() + axis, c->num_inputs());
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

Status UnpackShape(InferenceContext* c) {
  int64_t axis = 0, num = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("axis", &axis));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("num", &num));
  const PartialShape in = c->input(0);
  if (!in.known_rank()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape::Unknown());
    return Status();
  }
  const int64_t r = in.rank;
  if (axis < -r || axis >= r) {
    return errors::InvalidArgument("Invalid axis: ", axis, "; must be in [", -r, ",", r, ")");
  }
  if (axis < 0) axis += r;
  if (in.dims[axis] >= 0 && in.dims[axis] != num) {
    return errors::InvalidArgument("Dimension must be ", num, " but is ", in.dims[axis]);
  }
  std::vector<int64_t> out = in.dims;
  out.erase(out.begin() + axis);
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape::Known(out));
  return Status();
}

// ------------------------------------------------------------- Transpose

Status TransposeShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape ps;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &ps));
  int64_t rank = in.known_rank() ? in.rank : ps.dims[0];
  if (in.known_rank() && ps.dims[0] >= 0 && ps.dims[0] != in.rank) {
    return errors::InvalidArgument("Dimension must be ", in.rank, " but is ", ps.dims[0]);
  }
  std::vector<int64_t> perm;
  if (!ConstIntVector(c, 1, &perm)) {
    c->set_output(0, rank >= 0 ? UnknownOfRank(rank) : PartialShape::Unknown());
    return Status();
  }
  rank = static_cast<int64_t>(perm.size());
  std::vector<bool> seen(perm.size(), false);
  std::vector<int64_t> out(perm.size(), -1);
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = perm[i];
    if (p < 0 || p >= rank) {
      return errors::InvalidArgument("perm dim ", p, " is out of range of input rank ", rank);
    }
    if (seen[static_cast<size_t>(p)]) {
      return errors::InvalidArgument(p, " is duplicated in perm {", array::JoinInts(perm), "}");
    }
    seen[static_cast<size_t>(p)] = true;
    if (in.known_rank()) out[i] = in.dims[p];
  }
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

// ---------------------------------------------------------- Tile and Pad

Status TileShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape ms;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &ms));
  if (in.known_rank() && ms.dims[0] >= 0 && ms.dims[0] != in.rank) {
    return errors::InvalidArgument("Expected multiples argument to be a vector of length ",
                                   in.rank, " but got length ", ms.dims[0]);
  }
  const int64_t rank = in.known_rank() ? in.rank : ms.dims[0];
  std::vector<int64_t> m;
  if (!ConstIntVector(c, 1, &m)) {
    c->set_output(0, rank >= 0 ? UnknownOfRank(rank) : PartialShape::Unknown());
    return Status();
  }
  std::vector<int64_t> out(m.size(), -1);
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 0) {
      return errors::InvalidArgument("Expected multiples[", i, "] >= 0, but got ", m[i]);
    }
    if (in.known_rank()) GR_RETURN_IF_ERROR_SDK(sf::MultiplyPartialDims(in.dims[i], m[i], &out[i]));
  }
  PartialShape result = PartialShape::Known(out);
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(sf::NumElements(result, &unused));
  c->set_output(0, result);
  return Status();
}

// Shape of Pad, PadV2 and MirrorPad; `mirror_offset` is -1 for constant
// padding, 0 for SYMMETRIC, 1 for REFLECT.
Status PadShapeImpl(InferenceContext* c, int mirror_offset) {
  const PartialShape in = c->input(0);
  const PartialShape ps = c->input(1);
  if (ps.known_rank()) {
    if (ps.rank != 2 || (ps.dims[1] >= 0 && ps.dims[1] != 2)) {
      return errors::InvalidArgument("paddings must be a matrix with 2 columns: ",
                                     sf::ShapeString(ps));
    }
    if (in.known_rank() && ps.dims[0] >= 0 && ps.dims[0] != in.rank) {
      return errors::InvalidArgument("The first dimension of paddings must be the rank of inputs",
                                     sf::ShapeString(ps), " ", sf::ShapeString(in));
    }
  }
  const int64_t rank = in.known_rank() ? in.rank : (ps.known_rank() ? ps.dims[0] : -1);
  std::vector<int64_t> pads;
  if (rank < 0 || !ConstIntVector(c, 1, &pads)) {
    c->set_output(0, rank >= 0 ? UnknownOfRank(rank) : PartialShape::Unknown());
    return Status();
  }
  std::vector<int64_t> out(static_cast<size_t>(rank), -1);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t before = pads[2 * i], after = pads[2 * i + 1];
    const int64_t d = in.known_rank() ? in.dims[i] : -1;
    GR_RETURN_IF_ERROR_SDK(array::CheckPadding(before, after, d, mirror_offset));
    GR_RETURN_IF_ERROR_SDK(sf::AddDims(d, before, &out[i]));
    GR_RETURN_IF_ERROR_SDK(sf::AddDims(out[i], after, &out[i]));
  }
  PartialShape result = PartialShape::Known(out);
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(sf::NumElements(result, &unused));
  c->set_output(0, result);
  return Status();
}

Status PadShape(InferenceContext* c) { return PadShapeImpl(c, -1); }

Status PadV2Shape(InferenceContext* c) {
  PartialShape unused;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 0, &unused));
  return PadShapeImpl(c, -1);
}

Status MirrorPadShape(InferenceContext* c) {
  int offset = 0;
  GR_RETURN_IF_ERROR_SDK(array::ReadMirrorPadMode(c, &offset));
  return PadShapeImpl(c, offset);
}

// --------------------------------------------------------------- Reverse

Status ReverseV2Shape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape as;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &as));
  std::vector<int64_t> axes;
  if (in.known_rank() && ConstIntVector(c, 1, &axes)) {
    std::vector<bool> seen(static_cast<size_t>(in.rank), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (a < -in.rank || a >= in.rank) {
        return errors::InvalidArgument("'axis'[", i, "] = ", a, " is out of valid range [", 0,
                                       ", ", in.rank - 1);
      }
      if (a < 0) a += in.rank;
      if (seen[static_cast<size_t>(a)]) {
        return errors::InvalidArgument("axis ", a, " specified more than once.");
      }
      seen[static_cast<size_t>(a)] = true;
    }
  }
  c->set_output(0, in);
  return Status();
}

Status ReverseShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape ds;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &ds));
  if (in.known_rank() && ds.dims[0] >= 0 && ds.dims[0] != in.rank) {
    return errors::InvalidArgument("'dims' must have the same number of values as 'input' has "
                                   "dimensions. 'input' has ",
                                   in.rank, "'dims' has ", ds.dims[0], " values");
  }
  c->set_output(0, in);
  return Status();
}

// ---------------------------------------------------------------- Gather

Status GatherV2Shape(InferenceContext* c) {
  const PartialShape params = c->input(0);
  const PartialShape indices = c->input(1);
  PartialShape unused;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 0, &unused));
  int64_t batch_dims = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("batch_dims", &batch_dims));
  if (params.known_rank() && params.rank == 0) {
    return errors::InvalidArgument("params must be at least 1 dimensional");
  }
  int64_t axis = 0;
  if (!params.known_rank() || !indices.known_rank() || !ConstIntScalar(c, 2, &axis)) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int64_t pr = params.rank, ir = indices.rank;
  if (axis < -pr || axis >= pr) {
    return errors::InvalidArgument("Expected axis in the range [", -pr, ", ", pr, "), but got ",
                                   axis);
  }
  if (axis < 0) axis += pr;
  if (batch_dims < -ir || batch_dims > ir) {
    return errors::InvalidArgument("Expected batch_dims in the range [", -ir, ", ", ir,
                                   "], but got ", batch_dims);
  }
  if (batch_dims < 0) batch_dims += ir;
  if (batch_dims != 0) {
    if (batch_dims >= pr) {
      return errors::InvalidArgument("batch_dims (", batch_dims,
                                     ") must be less than rank(params) (", pr, ").");
    }
    if (axis < batch_dims) {
      return errors::InvalidArgument("batch_dims (", batch_dims,
                                     ") must be less than or equal to axis (", axis, ").");
    }
  }
  std::vector<int64_t> out(params.dims.begin(), params.dims.begin() + axis);
  for (int64_t i = 0; i < batch_dims; ++i) {
    int64_t m;
    Status s = sf::MergeDim(out[i], indices.dims[i], &m);
    if (!s.ok()) {
      return errors::InvalidArgument("params.shape[", i, "]: ", out[i],
                                     " should be equal to indices.shape[", i,
                                     "]: ", indices.dims[i]);
    }
    out[i] = m;
  }
  out.insert(out.end(), indices.dims.begin() + batch_dims, indices.dims.end());
  out.insert(out.end(), params.dims.begin() + axis + 1, params.dims.end());
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

Status GatherNdShape(InferenceContext* c) {
  const PartialShape params = c->input(0);
  const PartialShape indices = c->input(1);
  if (indices.known_rank() && indices.rank < 1) {
    return errors::InvalidArgument("indices must be at least a vector");
  }
  if (!params.known_rank() || !indices.known_rank() || indices.dims.back() < 0) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int64_t k = indices.dims.back();
  if (k > params.rank) {
    return errors::InvalidArgument("index innermost dimension length must be <= params rank; saw: ",
                                   k, " vs. ", params.rank);
  }
  std::vector<int64_t> out(indices.dims.begin(), indices.dims.end() - 1);
  out.insert(out.end(), params.dims.begin() + k, params.dims.end());
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

// ScatterNd's rules between indices [n..., k], updates [n..., shape[k:]...]
// and the `shape` scattered into (whose dims may be -1, unknown).
Status CheckScatterNdShapes(const PartialShape& indices, const PartialShape& updates,
                            const std::vector<int64_t>& shape) {
  if (!indices.known_rank() || !updates.known_rank() || indices.rank < 1 ||
      indices.dims.back() < 0) {
    return Status();
  }
  const int64_t outer = indices.rank - 1;
  const int64_t k = indices.dims.back();
  if (k > static_cast<int64_t>(shape.size())) {
    return errors::InvalidArgument("Output must have at least ", k, " dimensions, got shape: ",
                                   sf::ShapeString(PartialShape::Known(shape)));
  }
  const int64_t want_rank = outer + static_cast<int64_t>(shape.size()) - k;
  if (updates.rank != want_rank) {
    return errors::InvalidArgument("The outer ", outer,
                                   " dimensions of indices.shape=", sf::ShapeString(indices),
                                   " must match the outer ", outer,
                                   " dimensions of updates.shape=", sf::ShapeString(updates));
  }
  for (int64_t i = 0; i < outer; ++i) {
    int64_t m = -1;
    if (!sf::MergeDim(indices.dims[i], updates.dims[i], &m).ok()) {
      return errors::InvalidArgument("Dimensions [0,", outer, ") of indices[shape=",
                                     sf::ShapeString(indices),
                                     "] must match dimensions [0,", outer, ") of updates[shape=",
                                     sf::ShapeString(updates), "]");
    }
  }
  for (int64_t i = k; i < static_cast<int64_t>(shape.size()); ++i) {
    const int64_t u = updates.dims[outer + i - k];
    if (u >= 0 && shape[i] >= 0 && u != shape[i]) {
      return errors::InvalidArgument(
          "Dimensions [", k, ",", shape.size(), ") of input[shape=",
          sf::ShapeString(PartialShape::Known(shape)), "] must match dimensions [", outer, ",",
          updates.rank, ") of updates[shape=", sf::ShapeString(updates), "]");
    }
  }
  return Status();
}

Status ScatterNdShape(InferenceContext* c) {
  PartialShape ss;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 1, &ss));
  std::vector<int64_t> shape;
  if (!ConstIntVector(c, 2, &shape)) {
    c->set_output(0, ss.dims[0] >= 0 ? UnknownOfRank(ss.dims[0]) : PartialShape::Unknown());
    return Status();
  }
  if (shape.empty()) {
    return errors::InvalidArgument("Output must be at least 1-D, got shape: []");
  }
  GR_RETURN_IF_ERROR_SDK(CheckScatterNdShapes(c->input(0), c->input(1), shape));
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(NumElementsOf(shape, &unused));
  c->set_output(0, PartialShape::Known(shape));
  return Status();
}

// TensorScatter*: the output has the tensor's shape.
Status TensorScatterShape(InferenceContext* c) {
  PartialShape tensor, unused;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), 1, &tensor));
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(1), 1, &unused));
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(2), 1, &unused));
  if (tensor.known_rank()) {
    GR_RETURN_IF_ERROR_SDK(CheckScatterNdShapes(c->input(1), c->input(2), tensor.dims));
  }
  c->set_output(0, tensor);
  return Status();
}

}  // namespace

REGISTER_OP("ConcatV2")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ConcatV2Shape)
    .Doc("Concatenates tensors along one dimension.");

REGISTER_OP("Split")
    .Input("split_dim: int32")
    .Input("value: T")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .SetShapeFn(SplitShape)
    .Doc("Splits a tensor into num_split tensors along one dimension.");

REGISTER_OP("SplitV")
    .Input("value: T")
    .Input("size_splits: Tlen")
    .Input("split_dim: int32")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Attr("Tlen: {int8, int32, int64} = DT_INT64")
    .SetShapeFn(SplitVShape)
    .Doc("Splits a tensor into num_split tensors of the given sizes along one dimension.");

REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .SetShapeFn(SliceShape)
    .Doc("Return a slice from 'input'.");

REGISTER_OP("StridedSlice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceShape)
    .Doc("Return a strided slice from `input`.");

REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(PackShape)
    .Doc("Packs a list of N rank-R tensors into one rank-(R+1) tensor.");

REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 0")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(UnpackShape)
    .Doc("Unpacks a given dimension of a rank-R tensor into num rank-(R-1) tensors.");

REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32")
    .SetShapeFn(TransposeShape)
    .Doc("Shuffle dimensions of x according to a permutation.");

REGISTER_OP("Tile")
    .Input("input: T")
    .Input("multiples: Tmultiples")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tmultiples: {int32, int64} = DT_INT32")
    .SetShapeFn(TileShape)
    .Doc("Constructs a tensor by tiling a given tensor.");

REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadShape)
    .Doc("Pads a tensor with zeros.");

REGISTER_OP("PadV2")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Input("constant_values: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadV2Shape)
    .Doc("Pads a tensor with a constant value.");

REGISTER_OP("MirrorPad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .SetShapeFn(MirrorPadShape)
    .Doc("Pads a tensor with mirrored values.");

REGISTER_OP("ReverseV2")
    .Input("tensor: T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, "
          "float, double, complex64, complex128, string}")
    .SetShapeFn(ReverseV2Shape)
    .Doc("Reverses specific dimensions of a tensor.");

REGISTER_OP("Reverse")
    .Input("tensor: T")
    .Input("dims: bool")
    .Output("output: T")
    .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, half, bfloat16, "
          "float, double, complex64, complex128, string}")
    .SetShapeFn(ReverseShape)
    .Doc("Reverses specific dimensions of a tensor.");

REGISTER_OP("GatherV2")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Input("axis: Taxis")
    .Attr("batch_dims: int = 0")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("Taxis: {int32, int64}")
    .SetShapeFn(GatherV2Shape)
    .Doc("Gather slices from params axis according to indices.");

REGISTER_OP("GatherNd")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .SetShapeFn(GatherNdShape)
    .Doc("Gather slices from params into a Tensor with shape specified by indices.");

REGISTER_OP("ScatterNd")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Input("shape: Tindices")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tindices: {int16, int32, int64}")
    .SetShapeFn(ScatterNdShape)
    .Doc("Scatters updates into a tensor of the given shape according to indices.");

// TensorScatterUpdate, TensorScatterAdd, TensorScatterSub: one signature.
#define GR_TENSOR_SCATTER_OP(NAME, DOC) \
  REGISTER_OP(NAME)                      \
      .Input("tensor: T")                \
      .Input("indices: Tindices")        \
      .Input("updates: T")               \
      .Output("output: T")               \
      .Attr("T: type")                   \
      .Attr("Tindices: {int16, int32, int64}") \
      .SetShapeFn(TensorScatterShape)    \
      .Doc(DOC)
GR_TENSOR_SCATTER_OP("TensorScatterUpdate", "Scatter updates into an existing tensor according to indices.");
GR_TENSOR_SCATTER_OP("TensorScatterAdd", "Adds sparse updates to an existing tensor according to indices.");
GR_TENSOR_SCATTER_OP("TensorScatterSub", "Subtracts sparse updates from an existing tensor according to indices.");
#undef GR_TENSOR_SCATTER_OP

}  // namespace sdk
}  // namespace graphrt
