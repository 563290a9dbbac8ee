// Op definitions of the batched and fused matrix products (TensorFlow's
// signatures): BatchMatMulV2, BatchMatMul and the internal _FusedMatMul
// (MatMul itself is defined in ops.cc). REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Shape errors name the input shapes, as TensorFlow's do (the core adds the
// node and op).
Status WithInputShapes(InferenceContext* c, const Status& s) {
  if (s.ok()) return s;
  return Status(s.code(),
                errors::StrCat(s.message(), ", with input shapes: ", sf::ShapeString(c->input(0)),
                               ", ", sf::ShapeString(c->input(1)), "."));
}

// Dim i counted from the end (-1 = last) of a shape of known rank.
int64_t DimFromEnd(const PartialShape& s, int i) { return s.dims[static_cast<size_t>(s.rank + i)]; }

// TensorFlow's MatMulShape, for _FusedMatMul.
Status FusedMatMulShape(InferenceContext* c) {
  PartialShape a, b;
  GR_RETURN_IF_ERROR_SDK(WithInputShapes(c, sf::WithRank(c->input(0), 2, &a)));
  GR_RETURN_IF_ERROR_SDK(WithInputShapes(c, sf::WithRank(c->input(1), 2, &b)));
  bool transpose_a = false, transpose_b = false;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("transpose_a", &transpose_a));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("transpose_b", &transpose_b));
  int64_t inner;
  GR_RETURN_IF_ERROR_SDK(WithInputShapes(
      c, sf::MergeDim(a.dims[transpose_a ? 0 : 1], b.dims[transpose_b ? 1 : 0], &inner)));
  c->set_output(0, PartialShape::Known({a.dims[transpose_a ? 1 : 0], b.dims[transpose_b ? 0 : 1]}));
  return Status();
}

// Batch dims of a and b (all dims but the last two): merged (BatchMatMul)
// or broadcast (BatchMatMulV2). Unknown rank on either side gives unknown.
Status BatchDims(InferenceContext* c, const PartialShape& a, const PartialShape& b, bool broadcast,
                 PartialShape* out) {
  if (!a.known_rank() || !b.known_rank()) {
    *out = PartialShape::Unknown();
    return Status();
  }
  const PartialShape ab =
      PartialShape::Known(std::vector<int64_t>(a.dims.begin(), a.dims.end() - 2));
  const PartialShape bb =
      PartialShape::Known(std::vector<int64_t>(b.dims.begin(), b.dims.end() - 2));
  if (!broadcast) return WithInputShapes(c, sf::Merge(ab, bb, out));
  // Numpy broadcasting; two known dims > 1 that differ are an error.
  const int32_t r = std::max(ab.rank, bb.rank);
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int32_t i = 0; i < r; ++i) {
    const int64_t dx = i < r - ab.rank ? 1 : ab.dims[static_cast<size_t>(i - (r - ab.rank))];
    const int64_t dy = i < r - bb.rank ? 1 : bb.dims[static_cast<size_t>(i - (r - bb.rank))];
    int64_t d;
    if (dx == 1) {
      d = dy;
    } else if (dy == 1) {
      d = dx;
    } else if (dx < 0 || dy < 0) {
      d = dx > 1 ? dx : (dy > 1 ? dy : -1);
    } else if (dx == dy) {
      d = dx;
    } else {
      return WithInputShapes(
          c, errors::InvalidArgument("Dimensions must be equal, but are ", dx, " and ", dy));
    }
    dims[static_cast<size_t>(i)] = d;
  }
  *out = PartialShape::Known(std::move(dims));
  return Status();
}

// TensorFlow's BatchMatMulShape (broadcast = false) and BatchMatMulV2Shape.
Status BatchMatMulShapeImpl(InferenceContext* c, bool broadcast) {
  PartialShape a, b;
  GR_RETURN_IF_ERROR_SDK(WithInputShapes(c, sf::WithRankAtLeast(c->input(0), 2, &a)));
  GR_RETURN_IF_ERROR_SDK(WithInputShapes(c, sf::WithRankAtLeast(c->input(1), 2, &b)));
  bool adj_x = false, adj_y = false;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("adj_x", &adj_x));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("adj_y", &adj_y));
  const int64_t rows = a.known_rank() ? DimFromEnd(a, adj_x ? -1 : -2) : -1;
  const int64_t cols = b.known_rank() ? DimFromEnd(b, adj_y ? -2 : -1) : -1;
  if (a.known_rank() && b.known_rank()) {
    int64_t inner;
    GR_RETURN_IF_ERROR_SDK(WithInputShapes(
        c, sf::MergeDim(DimFromEnd(a, adj_x ? -2 : -1), DimFromEnd(b, adj_y ? -1 : -2), &inner)));
  }
  PartialShape batch;
  GR_RETURN_IF_ERROR_SDK(BatchDims(c, a, b, broadcast, &batch));
  if (!batch.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  batch.dims.push_back(rows);
  batch.dims.push_back(cols);
  batch.rank += 2;
  c->set_output(0, batch);
  return Status();
}

Status BatchMatMulShape(InferenceContext* c) { return BatchMatMulShapeImpl(c, false); }
Status BatchMatMulV2Shape(InferenceContext* c) { return BatchMatMulShapeImpl(c, true); }

}  // namespace

REGISTER_OP("BatchMatMul")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .SetShapeFn(BatchMatMulShape)
    .Doc("Multiplies slices of two tensors in batches.");

REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr(
        "T: {bfloat16, half, float, double, int16, int32, int64, complex64, "
        "complex128}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .Attr("grad_x: bool = false")
    .Attr("grad_y: bool = false")
    .SetShapeFn(BatchMatMulV2Shape)
    .Doc("Multiplies slices of two tensors in batches, broadcasting the batch dims.");

// TensorFlow's internal fused op (a graph rewrite makes it from MatMul +
// BiasAdd [+ activation]); `args` holds the bias.
REGISTER_OP("_FusedMatMul")
    .Input("a: T")
    .Input("b: T")
    .Input("args: num_args * T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {bfloat16, half, float}")
    .Attr("num_args: int >= 0")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn(FusedMatMulShape)
    .Doc("MatMul followed by the element-wise ops in fused_ops, in one kernel.");

}  // namespace sdk
}  // namespace graphrt
