// Op definitions of the math family's segment reductions (SegmentSum ...
// UnsortedSegmentProd) and of the element-wise gradients of Sqrt, Rsqrt and
// Reciprocal, which tf.gradients emits (TensorFlow's signatures, attrs and
// shape functions). REGISTER_OP only, no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <vector>

#include "array/array_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// data rank >= 1, segment_ids a vector; output [?] + data.shape[1:] (the
// row count is the last segment id + 1, known only when run).
Status SegmentReductionShape(InferenceContext* c) {
  PartialShape data, ids;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), 1, &data));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &ids));
  if (!data.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  data.dims[0] = -1;
  c->set_output(0, data);
  return Status();
}

// num_segments a scalar; data's shape starts with segment_ids' shape;
// output [num_segments] + data.shape[rank(segment_ids):].
Status UnsortedSegmentReductionShape(InferenceContext* c) {
  PartialShape num_segments_shape;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(2), 0, &num_segments_shape));
  const PartialShape ids = c->input(1);
  if (!ids.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  int64_t num_segments = -1;
  if (array::ConstIntScalar(c, 2, &num_segments) && num_segments < 0) {
    return errors::InvalidArgument("Dimension size, given by scalar input 2, must be non-negative but is ",
                                   num_segments);
  }
  PartialShape data;
  GR_RETURN_IF_ERROR_SDK(sf::WithRankAtLeast(c->input(0), ids.rank, &data));
  if (!data.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  for (int32_t i = 0; i < ids.rank; ++i) {
    const Status s = sf::MergeDim(data.dims[i], ids.dims[i], &data.dims[i]);
    if (!s.ok()) {
      return errors::InvalidArgument(s.message(), ": data.shape = ", sf::ShapeString(c->input(0)),
                                     " does not start with segment_ids.shape = ", sf::ShapeString(ids));
    }
  }
  std::vector<int64_t> out{num_segments};
  out.insert(out.end(), data.dims.begin() + ids.rank, data.dims.end());
  const PartialShape result = PartialShape::Known(out);
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(sf::NumElements(result, &unused));  // a huge num_segments
  c->set_output(0, result);
  return Status();
}

// TensorFlow's MergeBothInputsShapeFn.
Status MergeBothInputsShape(InferenceContext* c) {
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(0), c->input(1), &out));
  c->set_output(0, out);
  return Status();
}

}  // namespace

#define GR_SEGMENT_OP(NAME, TYPES)                \
  REGISTER_OP(NAME)                               \
      .Input("data: T")                           \
      .Input("segment_ids: Tindices")             \
      .Output("output: T")                        \
      .Attr("T: " TYPES)                          \
      .Attr("Tindices: {int32,int64}")            \
      .SetShapeFn(SegmentReductionShape)

GR_SEGMENT_OP("SegmentSum", "numbertype")
    .Doc("Computes the sum along sorted segments of a tensor (0 for an empty segment).");
GR_SEGMENT_OP("SegmentMean", "numbertype")
    .Doc("Computes the mean along sorted segments of a tensor (0 for an empty segment).");
GR_SEGMENT_OP("SegmentProd", "numbertype")
    .Doc("Computes the product along sorted segments of a tensor (1 for an empty segment).");
GR_SEGMENT_OP("SegmentMax", "realnumbertype")
    .Doc("Computes the maximum along sorted segments of a tensor (0 for an empty segment).");
GR_SEGMENT_OP("SegmentMin", "realnumbertype")
    .Doc("Computes the minimum along sorted segments of a tensor (0 for an empty segment).");

#define GR_UNSORTED_SEGMENT_OP(NAME, TYPES)               \
  REGISTER_OP(NAME)                                       \
      .Input("data: T")                                   \
      .Input("segment_ids: Tindices")                     \
      .Input("num_segments: Tnumsegments")                \
      .Output("output: T")                                \
      .Attr("T: " TYPES)                                  \
      .Attr("Tindices: {int32,int64}")                    \
      .Attr("Tnumsegments: {int32,int64} = DT_INT32")     \
      .SetShapeFn(UnsortedSegmentReductionShape)

GR_UNSORTED_SEGMENT_OP("UnsortedSegmentSum", "numbertype")
    .Doc("Computes the sum along segments of a tensor; negative segment ids are dropped.");
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentProd", "numbertype")
    .Doc("Computes the product along segments of a tensor (1 for an empty segment).");
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentMax", "realnumbertype")
    .Doc("Computes the maximum along segments of a tensor (the lowest value for an empty segment).");
GR_UNSORTED_SEGMENT_OP("UnsortedSegmentMin", "realnumbertype")
    .Doc("Computes the minimum along segments of a tensor (the highest value for an empty segment).");

#undef GR_UNSORTED_SEGMENT_OP
#undef GR_SEGMENT_OP

// Gradients of y = f(x) in terms of y: inputs (y, dy).
#define GR_UNARY_GRAD_OP(NAME)                                                   \
  REGISTER_OP(NAME)                                                              \
      .Input("y: T")                                                             \
      .Input("dy: T")                                                            \
      .Output("z: T")                                                            \
      .Attr("T: {bfloat16, half, float, double, complex64, complex128}")        \
      .SetShapeFn(MergeBothInputsShape)

GR_UNARY_GRAD_OP("SqrtGrad").Doc("Computes the gradient for the sqrt of `x` wrt its input: `dy * 0.5 / y`.");
GR_UNARY_GRAD_OP("RsqrtGrad").Doc("Computes the gradient for the rsqrt of `x` wrt its input: `dy * -0.5 * y^3`.");
GR_UNARY_GRAD_OP("ReciprocalGrad").Doc("Computes the gradient for the inverse of `x` wrt its input: `-dy * y * y`.");
GR_UNARY_GRAD_OP("InvGrad").Doc("Computes the gradient for the inverse of `x` wrt its input: `-dy * y * y`.");

#undef GR_UNARY_GRAD_OP

}  // namespace sdk
}  // namespace graphrt
