// Op definitions of array-family ops that TensorFlow 1's tf.gradients emits
// (and a few it needs around them): InvertPermutation (Transpose's
// gradient), Gather (v1), ConcatOffset (Concat's gradient), ReverseSequence,
// SparseToDense, Unique, UniqueV2, ListDiff, BroadcastArgs, StridedSliceGrad and
// MirrorPadGrad. TensorFlow's signatures, attrs, defaults and shape
// functions; REGISTER_OP only (kernels in cpu/training_support_kernels.cc).
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "array/array_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using array::ConstIntVector;
using array::UnknownOfRank;

// Output 0 from the 1-D shape tensor at input `i` (TensorFlow's
// MakeShapeFromShapeTensor): its value when constant (-1 = unknown dim),
// else as many unknown dims as it has elements, when that is known.
Status ShapeFromShapeTensor(InferenceContext* c, int i) {
  PartialShape s;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(i), 1, &s));
  std::vector<int64_t> dims;
  if (ConstIntVector(c, i, &dims)) {
    bool known = true;
    for (int64_t d : dims) {
      if (d < -1)
        return errors::InvalidArgument("Dimension ", d, " in the shape tensor must be >= -1");
      known = known && d >= 0;
    }
    int64_t unused;
    if (known) GR_RETURN_IF_ERROR_SDK(NumElementsOf(dims, &unused));
    c->set_output(0, PartialShape::Known(dims));
    return Status();
  }
  c->set_output(0, s.dims[0] >= 0 ? UnknownOfRank(s.dims[0]) : PartialShape::Unknown());
  return Status();
}

Status InvertPermutationShape(InferenceContext* c) {
  PartialShape x;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &x));
  c->set_output(0, x);
  return Status();
}

// indices.shape + params.shape[1:].
Status GatherShape(InferenceContext* c) {
  PartialShape params;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), 1, &params));
  const PartialShape indices = c->input(1);
  if (!params.known_rank() || !indices.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  std::vector<int64_t> out = indices.dims;
  out.insert(out.end(), params.dims.begin() + 1, params.dims.end());
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

// Offset i has the shape of shape i.
Status ConcatOffsetShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) c->set_output(i - 1, c->input(i));
  return Status();
}

Status ReverseSequenceShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  PartialShape lens;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &lens));
  int64_t seq_dim = 0, batch_dim = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("seq_dim", &seq_dim));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("batch_dim", &batch_dim));
  if (batch_dim < 0) return errors::InvalidArgument("Invalid batch_dim ", batch_dim);
  if (seq_dim < 0) return errors::InvalidArgument("Invalid seq_dim ", seq_dim);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  if (batch_dim >= in.rank) {
    return errors::InvalidArgument("batch_dim must be < input rank: ", batch_dim, " vs. ", in.rank);
  }
  if (seq_dim >= in.rank) {
    return errors::InvalidArgument("seq_dim must be < input rank: ", seq_dim, " vs. ", in.rank);
  }
  std::vector<int64_t> out = in.dims;
  int64_t b = -1;
  GR_RETURN_IF_ERROR_SDK(sf::MergeDim(out[batch_dim], lens.dims[0], &b));
  out[batch_dim] = b;
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

Status SparseToDenseShape(InferenceContext* c) { return ShapeFromShapeTensor(c, 1); }

// y is a vector of unknown length; idx has x's (1-D) shape.
Status UniqueShape(InferenceContext* c) {
  PartialShape x;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &x));
  c->set_output(0, PartialShape::Known({-1}));
  c->set_output(1, x);
  return Status();
}

// TensorFlow says y = [?] and idx = x's shape, which is right for a 1-D x
// only; along an axis of a rank-r x, y has rank r and idx is a vector of
// x.shape[axis]. This says what is known of that.
Status UniqueV2Shape(InferenceContext* c) {
  const PartialShape x = c->input(0);
  if (x.known_rank() && x.rank == 1) return UniqueShape(c);
  c->set_output(0, x.known_rank() ? UnknownOfRank(x.rank) : PartialShape::Unknown());
  c->set_output(1, PartialShape::Known({-1}));
  return Status();
}

Status BroadcastArgsShape(InferenceContext* c) {
  PartialShape a, b;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &a));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &b));
  if (a.dims[0] < 0 || b.dims[0] < 0) {
    c->set_output(0, PartialShape::Known({-1}));
  } else {
    c->set_output(0, PartialShape::Known({std::max(a.dims[0], b.dims[0])}));
  }
  return Status();
}

Status StridedSliceGradShape(InferenceContext* c) { return ShapeFromShapeTensor(c, 0); }

// Each dim is the padded input's minus its two paddings.
Status MirrorPadGradShape(InferenceContext* c) {
  PartialShape ps;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 2, &ps));
  if (ps.dims[1] >= 0 && ps.dims[1] != 2) {
    return errors::InvalidArgument("paddings must be a matrix with 2 columns: ",
                                   sf::ShapeString(ps));
  }
  const int64_t rank = ps.dims[0];
  if (rank < 0) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  if (rank > 64)
    return errors::InvalidArgument("paddings has ", rank, " rows; at most 64 are supported");
  PartialShape in;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), static_cast<int32_t>(rank), &in));
  std::vector<int64_t> pads;
  if (!ConstIntVector(c, 1, &pads) || static_cast<int64_t>(pads.size()) != 2 * rank) {
    c->set_output(0, UnknownOfRank(rank));
    return Status();
  }
  std::vector<int64_t> out(static_cast<size_t>(rank), -1);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t before = pads[2 * i], after = pads[2 * i + 1];
    if (before < 0 || after < 0) {
      return errors::InvalidArgument("Paddings must be non-negative: ", before, ", ", after);
    }
    const int64_t d = in.dims[i];
    if (d < 0) continue;
    // Subtract one at a time: before + after may overflow.
    if (before > d || after > d - before) {
      return errors::InvalidArgument("Negative dimension size caused by subtracting paddings ",
                                     before, " and ", after, " from dimension ", i, " of size ", d);
    }
    out[i] = d - before - after;
  }
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

}  // namespace

REGISTER_OP("InvertPermutation")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(InvertPermutationShape)
    .Doc("Computes the inverse permutation of a tensor: y[x[i]] = i.");

REGISTER_OP("Gather")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Attr("validate_indices: bool = true")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn(GatherShape)
    .Doc("Gather slices from params along axis 0 according to indices.");

REGISTER_OP("ConcatOffset")
    .Input("concat_dim: int32")
    .Input("shape: N * int32")
    .Output("offset: N * int32")
    .Attr("N: int >= 2")
    .SetShapeFn(ConcatOffsetShape)
    .Doc("Computes offsets of concat inputs within its output.");

REGISTER_OP("ReverseSequence")
    .Input("input: T")
    .Input("seq_lengths: Tlen")
    .Output("output: T")
    .Attr("seq_dim: int")
    .Attr("batch_dim: int = 0")
    .Attr("T: type")
    .Attr("Tlen: {int32, int64} = DT_INT64")
    .SetShapeFn(ReverseSequenceShape)
    .Doc("Reverses variable length slices.");

REGISTER_OP("SparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Output("dense: T")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn(SparseToDenseShape)
    .Doc("Converts a sparse representation into a dense tensor.");

REGISTER_OP("Unique")
    .Input("x: T")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .SetShapeFn(UniqueShape)
    .Doc("Finds unique elements in a 1-D tensor, in the order of their first occurrence.");

// tf.setdiff1d; Prod's gradient in TensorFlow 1 uses it for the axes kept.
REGISTER_OP("ListDiff")
    .Input("x: T")
    .Input("y: T")
    .Output("out: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .SetShapeFn([](InferenceContext* c) {
      PartialShape x, y;
      GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &x));
      GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &y));
      c->set_output(0, PartialShape::Known({-1}));
      c->set_output(1, PartialShape::Known({-1}));
      return Status();
    })
    .Doc("The values of x that are not in y, in x's order (duplicates kept), and their positions in x.");

REGISTER_OP("UniqueV2")
    .Input("x: T")
    .Input("axis: Taxis")
    .Output("y: T")
    .Output("idx: out_idx")
    .Attr("T: type")
    .Attr("Taxis: {int32, int64} = DT_INT64")
    .Attr("out_idx: {int32, int64} = DT_INT32")
    .SetShapeFn(UniqueV2Shape)
    .Doc("Finds unique elements (or slices along an axis) of a tensor.");

REGISTER_OP("BroadcastArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastArgsShape)
    .Doc("Return the shape of s0 op s1 with broadcast.");

REGISTER_OP("StridedSliceGrad")
    .Input("shape: Index")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Input("dy: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceGradShape)
    .Doc("Returns the gradient of StridedSlice.");

REGISTER_OP("MirrorPadGrad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .SetShapeFn(MirrorPadGradShape)
    .Doc("Gradient op for MirrorPad: folds a mirror-padded tensor.");

}  // namespace sdk
}  // namespace graphrt
