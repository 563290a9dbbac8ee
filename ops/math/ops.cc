// Op definitions of the math family (TensorFlow's signatures). Shared by
// every device plugin of the family, so: REGISTER_OP only, no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Shape errors name the input shapes, as TensorFlow's do (the core adds the
// node and op): "Dimensions must be equal, but are 3 and 4, with input
// shapes: [2,3], [4,5]."
Status WithMatMulContext(InferenceContext* c, const Status& s) {
  if (s.ok()) return s;
  return Status(s.code(),
                errors::StrCat(s.message(), ", with input shapes: ", sf::ShapeString(c->input(0)),
                               ", ", sf::ShapeString(c->input(1)), "."));
}

Status MatMulShape(InferenceContext* c) {
  PartialShape a, b;
  GR_RETURN_IF_ERROR_SDK(WithMatMulContext(c, sf::WithRank(c->input(0), 2, &a)));
  GR_RETURN_IF_ERROR_SDK(WithMatMulContext(c, sf::WithRank(c->input(1), 2, &b)));
  bool transpose_a = false, transpose_b = false;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("transpose_a", &transpose_a));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("transpose_b", &transpose_b));
  const int64_t rows = a.dims[transpose_a ? 1 : 0];
  const int64_t cols = b.dims[transpose_b ? 0 : 1];
  int64_t inner;
  GR_RETURN_IF_ERROR_SDK(WithMatMulContext(
      c, sf::MergeDim(a.dims[transpose_a ? 0 : 1], b.dims[transpose_b ? 1 : 0], &inner)));
  c->set_output(0, PartialShape::Known({rows, cols}));
  return Status();
}

}  // namespace

// Element-wise binary ops broadcast like numpy.
REGISTER_OP("Add")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
        "complex128, string}")
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns x + y element-wise.");

REGISTER_OP("AddV2")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, "
        "int32, int64, complex64, complex128}")
    .SetIsCommutative()
    .SetIsAggregate()
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns x + y element-wise.");

REGISTER_OP("Sub")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, "
        "complex64, complex128, uint32, uint64}")
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns x - y element-wise.");

REGISTER_OP("Mul")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, "
        "complex64, complex128, uint32, uint64}")
    .SetIsCommutative()
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns x * y element-wise.");

REGISTER_OP("RealDiv")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr(
        "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, "
        "complex64, complex128, uint32, uint64}")
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns x / y element-wise for real types.");

REGISTER_OP("Neg")
    .Input("x: T")
    .Output("y: T")
    .Attr(
        "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, "
        "complex128}")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Computes numerical negative value element-wise.");

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr(
        "T: {bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, uint64, "
        "complex64, complex128}")
    .Attr("grad_a: bool = false")
    .Attr("grad_b: bool = false")
    .SetShapeFn(MatMulShape)
    .Doc("Multiply the matrix \"a\" by the matrix \"b\".");

}  // namespace sdk
}  // namespace graphrt
