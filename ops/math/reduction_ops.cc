// Op definitions of the math family's reductions and scans (TensorFlow's
// signatures): Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin, Cumsum, Cumprod.
// Shared by every device plugin of the family, so: REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Reads element i of a constant int16/int32/int64 tensor.
int64_t IndexAt(const TensorView& t, int64_t i) {
  switch (t.dtype()) {
    case GR_INT16: return t.data<int16_t>()[i];
    case GR_INT32: return t.data<int32_t>()[i];
    default: return t.data<int64_t>()[i];
  }
}

// TensorFlow's ReductionShape: the reduced dims drop out (or become 1 with
// keep_dims); axes are checked against the input's rank when both are known.
// Duplicate axes are only rejected by the kernel, as in TensorFlow.
Status ReductionShape(InferenceContext* c) {
  const PartialShape input = c->input(0);
  const PartialShape indices = c->input(1);
  if (indices.known_rank() && indices.rank > 1) {
    return errors::InvalidArgument("Shape must be at most rank 1 but is rank ", indices.rank,
                                   " for 'reduction_indices'");
  }
  bool keep_dims = false;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("keep_dims", &keep_dims));
  TensorView axes;
  const bool known_axes = c->input_tensor(1, &axes);
  if (!known_axes || !input.known_rank()) {
    if (keep_dims && input.known_rank()) {
      c->set_output(0, PartialShape::Known(std::vector<int64_t>(input.rank, -1)));
    } else {
      c->set_output(0, PartialShape::Unknown());
    }
    return Status();
  }
  const int64_t rank = input.rank;
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t a = IndexAt(axes, i);
    if (a < -rank || a >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension ", a, " for input with ", rank,
                                     " dimensions.");
    }
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[static_cast<size_t>(i)]) {
      dims.push_back(input.dims[static_cast<size_t>(i)]);
    } else if (keep_dims) {
      dims.push_back(1);
    }
  }
  c->set_output(0, PartialShape::Known(std::move(dims)));
  return Status();
}

// TensorFlow's ArgOpShape: `dimension` is a scalar; the output drops it.
Status ArgOpShape(InferenceContext* c) {
  const PartialShape dim_shape = c->input(1);
  if (dim_shape.known_rank() && dim_shape.rank != 0) {
    return errors::InvalidArgument("Shape must be rank 0 but is rank ", dim_shape.rank,
                                   " for 'dimension'");
  }
  const PartialShape input = c->input(0);
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int64_t rank = input.rank;
  if (rank <= 1) {  // a scalar or a vector reduces to a scalar
    c->set_output(0, PartialShape::Known({}));
    return Status();
  }
  TensorView dim_t;
  if (!c->input_tensor(1, &dim_t) || dim_t.NumElements() != 1) {
    c->set_output(0, PartialShape::Known(std::vector<int64_t>(static_cast<size_t>(rank - 1), -1)));
    return Status();
  }
  const int64_t dim = IndexAt(dim_t, 0);
  const int64_t axis = dim < 0 ? dim + rank : dim;
  if (axis < 0 || axis >= rank) {
    return errors::InvalidArgument("Dimension (", dim, ") must be in the range [", -rank, ", ",
                                   rank, "), where ", rank,
                                   " is the number of dimensions in the input.");
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != axis) dims.push_back(input.dims[static_cast<size_t>(i)]);
  }
  c->set_output(0, PartialShape::Known(std::move(dims)));
  return Status();
}

}  // namespace

REGISTER_OP("Sum")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the sum of elements across dimensions of a tensor.");

REGISTER_OP("Mean")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the mean of elements across dimensions of a tensor.");

REGISTER_OP("Prod")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the product of elements across dimensions of a tensor.");

REGISTER_OP("Max")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {realnumbertype, quantizedtype}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the maximum of elements across dimensions of a tensor.");

REGISTER_OP("Min")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {realnumbertype, quantizedtype}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the minimum of elements across dimensions of a tensor.");

REGISTER_OP("All")
    .Input("input: bool")
    .Input("reduction_indices: Tidx")
    .Output("output: bool")
    .Attr("keep_dims: bool = false")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the \"logical and\" of elements across dimensions of a tensor.");

REGISTER_OP("Any")
    .Input("input: bool")
    .Input("reduction_indices: Tidx")
    .Output("output: bool")
    .Attr("keep_dims: bool = false")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Computes the \"logical or\" of elements across dimensions of a tensor.");

REGISTER_OP("ArgMax")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {numbertype, bool}")
    .Attr("Tidx: {int16, int32, int64} = DT_INT32")
    .Attr("output_type: {int16, uint16, int32, int64} = DT_INT64")
    .SetShapeFn(ArgOpShape)
    .Doc("Returns the index with the largest value across dimensions of a tensor.");

REGISTER_OP("ArgMin")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {numbertype, bool}")
    .Attr("Tidx: {int16, int32, int64} = DT_INT32")
    .Attr("output_type: {int16, uint16, int32, int64} = DT_INT64")
    .SetShapeFn(ArgOpShape)
    .Doc("Returns the index with the smallest value across dimensions of a tensor.");

REGISTER_OP("Cumsum")
    .Input("x: T")
    .Input("axis: Tidx")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Output("out: T")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Compute the cumulative sum of the tensor `x` along `axis`.");

// Prod's gradient in TensorFlow 1 is built from two exclusive Cumprods.
REGISTER_OP("Cumprod")
    .Input("x: T")
    .Input("axis: Tidx")
    .Attr("exclusive: bool = false")
    .Attr("reverse: bool = false")
    .Output("out: T")
    .Attr("T: numbertype")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Compute the cumulative product of the tensor `x` along `axis`.");

}  // namespace sdk
}  // namespace graphrt
