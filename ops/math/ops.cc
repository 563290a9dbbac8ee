// Op definitions of the math family (TensorFlow's signatures). Shared by
// every device plugin of the family, so: REGISTER_OP only, no kernels.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// Equal/NotEqual: numpy broadcasting; with incompatible_shape_error=false
// shapes known not to broadcast give a scalar (the kernel's answer), and a
// pair that might not broadcast an unknown shape.
Status EqualityShape(InferenceContext* c) {
  bool strict = true;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("incompatible_shape_error", &strict));
  if (strict) return sf::BroadcastBinaryOpShape(c);
  const PartialShape x = c->input(0), y = c->input(1);
  if (!x.known_rank() || !y.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  const int32_t r = std::max(x.rank, y.rank);
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int32_t i = 0; i < r; ++i) {
    const int64_t dx = i < r - x.rank ? 1 : x.dims[i - (r - x.rank)];
    const int64_t dy = i < r - y.rank ? 1 : y.dims[i - (r - y.rank)];
    if (dx < 0 || dy < 0) {
      if (dx == 1) {
        dims[i] = dy;
      } else if (dy == 1) {
        dims[i] = dx;
      } else {  // may or may not broadcast
        c->set_output(0, PartialShape::Unknown());
        return Status();
      }
    } else if (dx == dy || dy == 1) {
      dims[i] = dx;
    } else if (dx == 1) {
      dims[i] = dy;
    } else {
      c->set_output(0, PartialShape::Known({}));
      return Status();
    }
  }
  c->set_output(0, PartialShape::Known(std::move(dims)));
  return Status();
}

// AddN: every input has the same shape (merged from the last input back).
Status AddNShape(InferenceContext* c) {
  const int n = c->num_inputs();
  PartialShape cur = c->input(n - 1);
  for (int i = n - 2; i >= 0; --i) {
    const Status s = sf::Merge(c->input(i), cur, &cur);
    if (!s.ok()) {
      return Status(s.code(), errors::StrCat(s.message(), "\n\tFrom merging shape ", i,
                                             " with other shapes."));
    }
  }
  c->set_output(0, cur);
  return Status();
}

}  // namespace

// ------------------------------------------------------ element-wise ops

// Type lists of TensorFlow's element-wise op families.
#define GR_BINARY_MORE_TYPES                                                   \
  "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, " \
  "complex64, complex128, uint32, uint64}"
#define GR_BINARY_FEWER_TYPES "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}"
#define GR_UNARY_TYPES \
  "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}"
#define GR_UNARY_REAL_TYPES "T: {bfloat16, half, float, double}"
#define GR_UNARY_COMPLEX_TYPES "T: {bfloat16, half, float, double, complex64, complex128}"

// A broadcasting binary op x: T, y: T -> z: OUT with the type list TYPES.
#define GR_BINARY_OP(NAME, TYPES, OUT)                                                  \
  REGISTER_OP(NAME).Input("x: T").Input("y: T").Output("z: " OUT).Attr(TYPES).SetShapeFn( \
      sf::BroadcastBinaryOpShape)
// An element-wise unary op x: T -> y: T.
#define GR_UNARY_OP(NAME, TYPES) \
  REGISTER_OP(NAME).Input("x: T").Output("y: T").Attr(TYPES).SetShapeFn(sf::UnchangedShape)

GR_BINARY_OP("Add", "T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
                    "complex64, complex128, string}", "T")
    .Doc("Returns x + y element-wise.");
GR_BINARY_OP("AddV2", "T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, "
                      "int16, int32, int64, complex64, complex128}", "T")
    .SetIsCommutative()
    .SetIsAggregate()
    .Doc("Returns x + y element-wise.");
GR_BINARY_OP("Sub", GR_BINARY_MORE_TYPES, "T").Doc("Returns x - y element-wise.");
GR_BINARY_OP("Mul", GR_BINARY_MORE_TYPES, "T")
    .SetIsCommutative()
    .Doc("Returns x * y element-wise.");
GR_BINARY_OP("RealDiv", GR_BINARY_MORE_TYPES, "T")
    .Doc("Returns x / y element-wise for real types.");
GR_BINARY_OP("Div", GR_BINARY_MORE_TYPES, "T")
    .Doc("Returns x / y element-wise (integers: truncating division).");
GR_BINARY_OP("FloorDiv", GR_BINARY_MORE_TYPES, "T")
    .Doc("Returns x // y element-wise (rounds toward the most negative integer).");
GR_BINARY_OP("FloorMod", "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                         "bfloat16, half, float, double}", "T")
    .Doc("Returns element-wise remainder of division, with the sign of the divisor.");
GR_BINARY_OP("Maximum", "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
                        "uint32, int64, uint64}", "T")
    .Doc("Returns the max of x and y (i.e. x > y ? x : y) element-wise.");
GR_BINARY_OP("Minimum", "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
                        "uint32, int64, uint64}", "T")
    .Doc("Returns the min of x and y (i.e. x < y ? x : y) element-wise.");
GR_BINARY_OP("Pow", "T: {bfloat16, float, half, double, int8, int16, int32, int64, complex64, "
                    "complex128}", "T")
    .Doc("Computes the power of one value to another.");
GR_BINARY_OP("SquaredDifference", GR_BINARY_FEWER_TYPES, "T")
    .SetIsCommutative()
    .Doc("Returns (x - y)(x - y) element-wise.");

// Comparisons: bool output.
GR_BINARY_OP("Less", "T: realnumbertype", "bool").Doc("Returns the truth value of (x < y).");
GR_BINARY_OP("LessEqual", "T: realnumbertype", "bool").Doc("Returns the truth value of (x <= y).");
GR_BINARY_OP("Greater", "T: realnumbertype", "bool").Doc("Returns the truth value of (x > y).");
GR_BINARY_OP("GreaterEqual", "T: realnumbertype", "bool")
    .Doc("Returns the truth value of (x >= y).");

// Equal/NotEqual take any type; with incompatible_shape_error=false,
// shapes that cannot broadcast give a scalar instead of an error.
#define GR_EQUALITY_OP(NAME)                                  \
  REGISTER_OP(NAME)                                           \
      .Input("x: T")                                          \
      .Input("y: T")                                          \
      .Output("z: bool")                                      \
      .SetIsCommutative()                                     \
      .Attr("T: type")                                        \
      .Attr("incompatible_shape_error: bool = true")          \
      .SetShapeFn(EqualityShape)
GR_EQUALITY_OP("Equal").Doc("Returns the truth value of (x == y) element-wise.");
GR_EQUALITY_OP("NotEqual").Doc("Returns the truth value of (x != y) element-wise.");

REGISTER_OP("LogicalAnd")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns the truth value of x AND y element-wise.");
REGISTER_OP("LogicalOr")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(sf::BroadcastBinaryOpShape)
    .Doc("Returns the truth value of x OR y element-wise.");
REGISTER_OP("LogicalNot")
    .Input("x: bool")
    .Output("y: bool")
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Returns the truth value of NOT x element-wise.");

GR_UNARY_OP("Neg", GR_UNARY_TYPES).Doc("Computes numerical negative value element-wise.");
GR_UNARY_OP("Abs", "T: {bfloat16, half, float, double, int8, int16, int32, int64}")
    .Doc("Computes the absolute value of a tensor.");
GR_UNARY_OP("Sign", GR_UNARY_TYPES)
    .Doc("Returns an element-wise indication of the sign of a number.");
GR_UNARY_OP("Square", "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, "
                      "uint16, uint32, uint64, complex64, complex128}")
    .Doc("Computes square of x element-wise.");
GR_UNARY_OP("Reciprocal", GR_UNARY_TYPES).Doc("Computes the reciprocal of x element-wise.");
GR_UNARY_OP("Inv", GR_UNARY_TYPES).Doc("Computes the reciprocal of x element-wise.");
GR_UNARY_OP("Round", GR_UNARY_TYPES)
    .Doc("Rounds the values of a tensor to the nearest integer, element-wise (half to even).");
GR_UNARY_OP("Exp", GR_UNARY_COMPLEX_TYPES).Doc("Computes exponential of x element-wise.");
GR_UNARY_OP("Log", GR_UNARY_COMPLEX_TYPES).Doc("Computes natural logarithm of x element-wise.");
GR_UNARY_OP("Log1p", GR_UNARY_COMPLEX_TYPES)
    .Doc("Computes natural logarithm of (1 + x) element-wise.");
GR_UNARY_OP("Sqrt", GR_UNARY_COMPLEX_TYPES).Doc("Computes square root of x element-wise.");
GR_UNARY_OP("Rsqrt", GR_UNARY_COMPLEX_TYPES)
    .Doc("Computes reciprocal of square root of x element-wise.");
GR_UNARY_OP("Tanh", GR_UNARY_COMPLEX_TYPES).Doc("Computes hyperbolic tangent of x element-wise.");
GR_UNARY_OP("Sin", GR_UNARY_COMPLEX_TYPES).Doc("Computes sine of x element-wise.");
GR_UNARY_OP("Cos", GR_UNARY_COMPLEX_TYPES).Doc("Computes cos of x element-wise.");
GR_UNARY_OP("Erf", GR_UNARY_REAL_TYPES).Doc("Computes the Gauss error function of x element-wise.");
GR_UNARY_OP("Floor", GR_UNARY_REAL_TYPES)
    .Doc("Returns element-wise largest integer not greater than x.");
GR_UNARY_OP("Ceil", GR_UNARY_REAL_TYPES)
    .Doc("Returns element-wise smallest integer not less than x.");

REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr("T: {numbertype, variant}")
    .SetIsCommutative()
    .SetIsAggregate()
    .SetShapeFn(AddNShape)
    .Doc("Add all input tensors element wise.");

#undef GR_EQUALITY_OP
#undef GR_UNARY_OP
#undef GR_BINARY_OP
#undef GR_UNARY_COMPLEX_TYPES
#undef GR_UNARY_REAL_TYPES
#undef GR_UNARY_TYPES
#undef GR_BINARY_FEWER_TYPES
#undef GR_BINARY_MORE_TYPES

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
