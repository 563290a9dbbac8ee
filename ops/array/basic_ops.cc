// Op definitions of the array family, part 2: metadata ops (Rank, Size,
// ShapeN), identity-likes, ExpandDims/Squeeze, Fill/ZerosLike/OnesLike,
// Cast, Range, Where, Select/SelectV2, BroadcastTo, OneHot. TensorFlow's
// signatures, attrs, defaults and shape functions; REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cmath>
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

Status RankShape(InferenceContext* c) { return sf::ScalarShape(c); }

Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    const PartialShape in = c->input(i);
    c->set_output(i, PartialShape::Known({in.known_rank() ? in.rank : -1}));
  }
  return Status();
}

Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return Status();
}

Status ExpandDimsShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  int64_t dim = 0;
  std::vector<int64_t> dims;
  TensorView dv;
  if (!c->input_tensor(1, &dv)) {
    c->set_output(0, in.known_rank() ? UnknownOfRank(in.rank + 1) : PartialShape::Unknown());
    return Status();
  }
  if (!array::ReadIntVector(dv, &dims) || dims.size() != 1) {
    return errors::InvalidArgument("'dim' input must be a tensor with a single value");
  }
  dim = dims[0];
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int64_t r = in.rank;
  if (dim < -1 - r || dim > r) {
    return errors::InvalidArgument("Tried to expand dim index ", dim, " for tensor with ", r,
                                   " dimensions.");
  }
  if (dim < 0) dim += r + 1;
  std::vector<int64_t> out = in.dims;
  out.insert(out.begin() + dim, 1);
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

Status SqueezeShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  std::vector<int64_t> squeeze;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("squeeze_dims", &squeeze));
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int64_t r = in.rank;
  std::vector<bool> wanted(static_cast<size_t>(r), false);
  for (int64_t d : squeeze) {
    if (d < -r || d >= r) {
      return errors::InvalidArgument("Tried to squeeze dim index ", d, " for tensor with ", r,
                                     " dimensions.");
    }
    wanted[static_cast<size_t>(d < 0 ? d + r : d)] = true;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < r; ++i) {
    const int64_t d = in.dims[i];
    if (squeeze.empty()) {
      if (d == -1) {
        // Whether an unknown dim is 1 is unknowable: so is the rank.
        c->set_output(0, PartialShape::Unknown());
        return Status();
      }
      if (d != 1) out.push_back(d);
    } else if (wanted[static_cast<size_t>(i)]) {
      if (d != -1 && d != 1) {
        return errors::InvalidArgument("Can not squeeze dim[", i,
                                       "], expected a dimension of 1, got ", d);
      }
    } else {
      out.push_back(d);
    }
  }
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

Status FillShape(InferenceContext* c) {
  PartialShape value;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 0, &value));
  const PartialShape dims_shape = c->input(0);
  if (dims_shape.known_rank() && dims_shape.rank != 1) {
    return errors::InvalidArgument("dims must be a vector, got shape ",
                                   sf::ShapeString(dims_shape));
  }
  std::vector<int64_t> dims;
  if (ConstIntVector(c, 0, &dims)) {
    for (int64_t d : dims) {
      if (d < 0) return errors::InvalidArgument("Fill dimensions must be >= 0");
    }
    int64_t unused;
    GR_RETURN_IF_ERROR_SDK(NumElementsOf(dims, &unused));
    c->set_output(0, PartialShape::Known(dims));
    return Status();
  }
  const int64_t n = VectorLength(c, 0);
  c->set_output(0, n >= 0 ? UnknownOfRank(n) : PartialShape::Unknown());
  return Status();
}

using array::RangeSize;

Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) {
    PartialShape unused;
    const char* names[] = {"start", "limit", "delta"};
    Status s = sf::WithRank(c->input(i), 0, &unused);
    if (!s.ok()) return errors::InvalidArgument(names[i], " must be a scalar, not shape ",
                                                sf::ShapeString(c->input(i)));
  }
  TensorView sv, lv, dv;
  if (!c->input_tensor(0, &sv) || !c->input_tensor(1, &lv) || !c->input_tensor(2, &dv) ||
      sv.NumElements() != 1 || lv.NumElements() != 1 || dv.NumElements() != 1) {
    c->set_output(0, PartialShape::Known({-1}));
    return Status();
  }
  int64_t size = -1;
  switch (sv.dtype()) {
    case GR_INT32:
      GR_RETURN_IF_ERROR_SDK(RangeSize<int32_t>(sv.scalar<int32_t>(), lv.scalar<int32_t>(),
                                                dv.scalar<int32_t>(), &size));
      break;
    case GR_INT64:
      GR_RETURN_IF_ERROR_SDK(RangeSize<int64_t>(sv.scalar<int64_t>(), lv.scalar<int64_t>(),
                                                dv.scalar<int64_t>(), &size));
      break;
    case GR_FLOAT:
      GR_RETURN_IF_ERROR_SDK(
          RangeSize<float>(sv.scalar<float>(), lv.scalar<float>(), dv.scalar<float>(), &size));
      break;
    case GR_DOUBLE:
      GR_RETURN_IF_ERROR_SDK(RangeSize<double>(sv.scalar<double>(), lv.scalar<double>(),
                                               dv.scalar<double>(), &size));
      break;
    default:
      break;  // other dtypes: size known at run time only
  }
  const PartialShape out = PartialShape::Known({size});
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(sf::NumElements(out, &unused));
  c->set_output(0, out);
  return Status();
}

Status WhereShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  c->set_output(0, PartialShape::Known({-1, in.known_rank() ? in.rank : -1}));
  return Status();
}

Status SelectShape(InferenceContext* c) {
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(1), c->input(2), &out));
  const PartialShape cond = c->input(0);
  if (cond.known_rank() && out.known_rank()) {
    if (cond.rank == 0) {
      // A scalar condition picks one whole input.
    } else if (cond.rank == 1 && out.rank > 1) {
      int64_t d = -1;
      GR_RETURN_IF_ERROR_SDK(sf::MergeDim(cond.dims[0], out.dims[0], &d));
      out.dims[0] = d;
    } else {
      GR_RETURN_IF_ERROR_SDK(sf::Merge(cond, out, &out));
    }
  }
  c->set_output(0, out);
  return Status();
}

Status SelectV2Shape(InferenceContext* c) {
  PartialShape te, out;
  GR_RETURN_IF_ERROR_SDK(sf::BroadcastPartialShapes(c->input(1), c->input(2), &te));
  GR_RETURN_IF_ERROR_SDK(sf::BroadcastPartialShapes(c->input(0), te, &out));
  c->set_output(0, out);
  return Status();
}

Status BroadcastToShape(InferenceContext* c) {
  const PartialShape in = c->input(0);
  std::vector<int64_t> target;
  if (!ConstIntVector(c, 1, &target)) {
    const int64_t n = VectorLength(c, 1);
    c->set_output(0, n >= 0 ? UnknownOfRank(n) : PartialShape::Unknown());
    return Status();
  }
  for (int64_t d : target) {
    if (d < 0) return errors::InvalidArgument("BroadcastTo shape dimensions must be >= 0, got ",
                                              array::JoinInts(target));
  }
  if (in.known_rank()) {
    if (in.rank > static_cast<int32_t>(target.size())) {
      return errors::InvalidArgument("Rank of input (", in.rank,
                                     ") must be no greater than rank of output shape (",
                                     target.size(), ").");
    }
    const size_t off = target.size() - static_cast<size_t>(in.rank);
    for (int32_t i = 0; i < in.rank; ++i) {
      const int64_t d = in.dims[i], t = target[off + static_cast<size_t>(i)];
      if (d >= 0 && d != 1 && d != t) {
        return errors::InvalidArgument("Incompatible shapes: ", sf::ShapeString(in), " vs. ",
                                       sf::ShapeString(target));
      }
    }
  }
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(NumElementsOf(target, &unused));
  c->set_output(0, PartialShape::Known(target));
  return Status();
}

Status OneHotShape(InferenceContext* c) {
  int64_t axis = -1;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("axis", &axis));
  if (axis < -1) return errors::InvalidArgument("axis must be >= -1");
  for (int i = 1; i <= 3; ++i) {
    PartialShape unused;
    GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(i), 0, &unused));
  }
  const PartialShape indices = c->input(0);
  int64_t depth = -1;
  if (ConstIntScalar(c, 1, &depth) && depth < 0) {
    return errors::InvalidArgument("depth must be non-negative, got: ", depth);
  }
  if (!indices.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  if (axis > indices.rank) {
    return errors::InvalidArgument("Expected axis to be -1 or between [0, ", indices.rank + 1,
                                   "). But received: ", axis);
  }
  std::vector<int64_t> out = indices.dims;
  out.insert(out.begin() + (axis == -1 ? indices.rank : axis), depth);
  const PartialShape result = PartialShape::Known(out);
  int64_t unused;
  GR_RETURN_IF_ERROR_SDK(sf::NumElements(result, &unused));  // a huge depth
  c->set_output(0, result);
  return Status();
}

}  // namespace

REGISTER_OP("Rank")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: type")
    .SetShapeFn(RankShape)
    .Doc("Returns the rank of a tensor.");

REGISTER_OP("Size")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Returns the size of a tensor.");

REGISTER_OP("ShapeN")
    .Input("input: N * T")
    .Output("output: N * out_type")
    .Attr("N: int")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeNShape)
    .Doc("Returns shape of tensors.");

REGISTER_OP("IdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type)")
    .SetShapeFn(IdentityNShape)
    .Doc("Returns a list of tensors with the same shapes and contents as the input tensors.");

REGISTER_OP("StopGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Stops gradient computation.");

REGISTER_OP("PreventGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("message: string = ''")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("An identity op that triggers an error if a gradient is requested.");

REGISTER_OP("ExpandDims")
    .Input("input: T")
    .Input("dim: Tdim")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tdim: {int32, int64} = DT_INT32")
    .SetShapeFn(ExpandDimsShape)
    .Doc("Inserts a dimension of 1 into a tensor's shape.");

REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) >= 0 = []")
    .SetShapeFn(SqueezeShape)
    .Doc("Removes dimensions of size 1 from the shape of a tensor.");

REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {int32, int64} = DT_INT32")
    .SetShapeFn(FillShape)
    .Doc("Creates a tensor filled with a scalar value.");

REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Returns a tensor of zeros with the same shape and type as x.");

REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
          "uint64, complex64, complex128, bool}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Returns a tensor of ones with the same shape and type as x.");

REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: type")
    .Attr("DstT: type")
    .Attr("Truncate: bool = false")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Cast x of type SrcT to y of DstT.");

REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32} = "
          "DT_INT32")
    .SetShapeFn(RangeShape)
    .Doc("Creates a sequence of numbers.");

REGISTER_OP("Where")
    .Input("input: T")
    .Attr("T: {numbertype, bool} = DT_BOOL")
    .Output("index: int64")
    .SetShapeFn(WhereShape)
    .Doc("Returns locations of nonzero / true values in a tensor.");

REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(SelectShape)
    .Doc("Selects elements from t or e, depending on condition.");

REGISTER_OP("SelectV2")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(SelectV2Shape)
    .Doc("Selects elements from t or e with numpy broadcasting of all three inputs.");

REGISTER_OP("BroadcastTo")
    .Input("input: T")
    .Input("shape: Tidx")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastToShape)
    .Doc("Broadcast an array for a compatible shape.");

REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Attr("axis: int = -1")
    .Output("output: T")
    .Attr("T: type")
    .Attr("TI: {uint8, int8, int32, int64} = DT_INT64")
    .SetShapeFn(OneHotShape)
    .Doc("Returns a one-hot tensor.");

}  // namespace sdk
}  // namespace graphrt
