// Gradients of the math family's ops (plugin ABI 1.5), as TensorFlow's
// gradient functions compute them; checked against central differences in
// tests/gradients_test.cc.
#include <graphrt/sdk/gradient.h>

#include <string>
#include <vector>

#include "common/gradients.h"

namespace graphrt {
namespace sdk {
namespace {

using grad::Binary;
using grad::Reshape;
using grad::Shape;
using grad::T;
using grad::Unary;
using grad::Unbroadcast;

Status AddGrad(GradientContext& g) {
  auto [dx, dy] = Unbroadcast(g, g.grad(0), g.grad(0));
  g.SetGrad(0, dx);
  g.SetGrad(1, dy);
  return Status();
}

Status SubGrad(GradientContext& g) {
  auto [dx, dy] = Unbroadcast(g, g.grad(0), Unary(g, "Neg", "Neg", g.grad(0), g.input_type(0)));
  g.SetGrad(0, dx);
  g.SetGrad(1, dy);
  return Status();
}

Status MulGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  auto [dx, dy] = Unbroadcast(g, Binary(g, "Mul", "Mul", g.grad(0), g.input(1), t),
                              Binary(g, "Mul_1", "Mul", g.input(0), g.grad(0), t));
  g.SetGrad(0, dx);
  g.SetGrad(1, dy);
  return Status();
}

// d(x/y) = dz / y, and dz * (-x / y) / y.
Status DivGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string gx = Binary(g, "RealDiv", "RealDiv", g.grad(0), g.input(1), t);
  const std::string neg_x = Unary(g, "Neg", "Neg", g.input(0), t);
  const std::string q = Binary(g, "RealDiv_1", "RealDiv", Binary(g, "RealDiv_2", "RealDiv", neg_x, g.input(1), t),
                               g.input(1), t);
  auto [dx, dy] = Unbroadcast(g, gx, Binary(g, "mul", "Mul", g.grad(0), q, t));
  g.SetGrad(0, dx);
  g.SetGrad(1, dy);
  return Status();
}

// d(x-y)^2 = 2(x-y) dz, and its negative.
Status SquaredDifferenceGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string two = g.ScalarConst("scalar", t, 2.0);
  const std::string d = Binary(g, "mul_1", "Mul", Binary(g, "mul", "Mul", two, g.grad(0), t),
                               Binary(g, "sub", "Sub", g.input(0), g.input(1), t), t);
  auto [dx, dy] = Unbroadcast(g, d, Unary(g, "Neg", "Neg", d, t));
  g.SetGrad(0, dx);
  g.SetGrad(1, dy);
  return Status();
}

Status NegGrad(GradientContext& g) {
  g.SetGrad(0, Unary(g, "Neg", "Neg", g.grad(0), g.input_type(0)));
  return Status();
}

Status SquareGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string two_x = Binary(g, "Mul", "Mul", g.ScalarConst("Const", t, 2.0), g.input(0), t);
  g.SetGrad(0, Binary(g, "Mul_1", "Mul", g.grad(0), two_x, t));
  return Status();
}

// The gradient ops TensorFlow has for y = f(x): f'(x) dz from y and dz.
template <const char* kGradOp>
Status FromOutputGrad(GradientContext& g) {
  g.SetGrad(0, Binary(g, kGradOp, kGradOp, g.output(0), g.grad(0), g.input_type(0)));
  return Status();
}
constexpr char kTanhGrad[] = "TanhGrad";
constexpr char kSqrtGrad[] = "SqrtGrad";
constexpr char kRsqrtGrad[] = "RsqrtGrad";
constexpr char kReciprocalGrad[] = "ReciprocalGrad";

Status ExpGrad(GradientContext& g) {
  g.SetGrad(0, Binary(g, "mul", "Mul", g.grad(0), g.output(0), g.input_type(0)));
  return Status();
}

Status LogGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  g.SetGrad(0, Binary(g, "mul", "Mul", g.grad(0), Unary(g, "Reciprocal", "Reciprocal", g.input(0), t), t));
  return Status();
}

Status Log1pGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string one_plus_x = Binary(g, "add", "AddV2", g.ScalarConst("x", t, 1.0), g.input(0), t);
  g.SetGrad(0, Binary(g, "mul", "Mul", g.grad(0), Unary(g, "Reciprocal", "Reciprocal", one_plus_x, t), t));
  return Status();
}

Status AbsGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  g.SetGrad(0, Binary(g, "mul", "Mul", g.grad(0), Unary(g, "Sign", "Sign", g.input(0), t), t));
  return Status();
}

// C = op_a(A) op_b(B): TensorFlow's four cases.
Status MatMulGrad(GradientContext& g) {
  const bool ta = g.Attr<bool>("transpose_a");
  const bool tb = g.Attr<bool>("transpose_b");
  const DataType t = g.input_type(0);
  const std::string a = g.input(0), b = g.input(1), dc = g.grad(0);
  auto mm = [&](const char* name, const std::string& x, const std::string& y, bool tx, bool ty) {
    return g.Add(name, "MatMul", {x, y}, {T(t), BoolAttr("transpose_a", tx), BoolAttr("transpose_b", ty)});
  };
  if (!ta && !tb) {
    g.SetGrad(0, mm("MatMul", dc, b, false, true));
    g.SetGrad(1, mm("MatMul_1", a, dc, true, false));
  } else if (!ta && tb) {
    g.SetGrad(0, mm("MatMul", dc, b, false, false));
    g.SetGrad(1, mm("MatMul_1", dc, a, true, false));
  } else if (ta && !tb) {
    g.SetGrad(0, mm("MatMul", b, dc, false, true));
    g.SetGrad(1, mm("MatMul_1", a, dc, false, false));
  } else {
    g.SetGrad(0, mm("MatMul", b, dc, true, true));
    g.SetGrad(1, mm("MatMul_1", dc, a, true, true));
  }
  return Status();
}

Status AddNGrad(GradientContext& g) {
  for (int i = 0; i < g.num_inputs(); ++i) g.SetGrad(i, g.grad(0));
  return Status();
}

// The reduced axes' gradient spread back over the input's shape: dz
// reshaped to the input's rank (reduced axes of size 1), broadcast.
std::string SpreadOverReducedAxes(GradientContext& g, const std::string& input_shape) {
  const DataType t = g.input_type(0);
  if (g.Attr<bool>("keep_dims"))
    return g.Add("BroadcastTo", "BroadcastTo", {g.grad(0), input_shape}, {T(t), TypeAttr("Tidx", GR_INT32)});
  std::string axes = g.input(1);
  if (g.input_type(1) != GR_INT32)
    axes = g.Add("Cast", "Cast", {axes}, {TypeAttr("SrcT", g.input_type(1)), TypeAttr("DstT", GR_INT32),
                                          BoolAttr("Truncate", false)});
  // kept[axes mod rank] = 1, the other dims as the input's.
  const std::string rank = g.Add("Size", "Size", {input_shape}, {T(GR_INT32), TypeAttr("out_type", GR_INT32)});
  const std::string axes_mod =
      Binary(g, "mod", "FloorMod", Binary(g, "add", "AddV2", axes, rank, GR_INT32), rank, GR_INT32);
  const std::string dims = g.Add("range", "Range", {g.IntConst("range/start", {0}, true), rank,
                                                     g.IntConst("range/delta", {1}, true)},
                                 {TypeAttr("Tidx", GR_INT32)});
  const std::string ones = g.Add("Fill", "Fill", {Shape(g, "Shape", axes_mod, GR_INT32), g.IntConst("Fill/value", {1}, true)},
                                 {T(GR_INT32), TypeAttr("index_type", GR_INT32)});
  const std::string kept = g.Add("DynamicStitch", "DynamicStitch", {dims, axes_mod, input_shape, ones},
                                 {IntAttr("N", 2), T(GR_INT32)});
  return g.Add("BroadcastTo", "BroadcastTo", {Reshape(g, "Reshape", g.grad(0), kept, t), input_shape},
               {T(t), TypeAttr("Tidx", GR_INT32)});
}

Status SumGrad(GradientContext& g) {
  g.SetGrad(0, SpreadOverReducedAxes(g, Shape(g, "Shape", g.input(0), g.input_type(0))));
  return Status();
}

// The sum's gradient over the number of elements each output averaged.
Status MeanGrad(GradientContext& g) {
  const DataType t = g.input_type(0);
  const std::string in_shape = Shape(g, "Shape", g.input(0), t);
  const std::string spread = SpreadOverReducedAxes(g, in_shape);
  const std::string axis0 = g.IntConst("Const", {0});
  auto prod = [&](const char* name, const std::string& shape) {
    return g.Add(name, "Prod", {shape, axis0}, {T(GR_INT32), TypeAttr("Tidx", GR_INT32), BoolAttr("keep_dims", false)});
  };
  const std::string out_count = Binary(g, "Maximum", "Maximum", prod("Prod_1", Shape(g, "Shape_1", g.output(0), t)),
                                       g.IntConst("Maximum/y", {1}, true), GR_INT32);
  const std::string factor = Binary(g, "floordiv", "FloorDiv", prod("Prod", in_shape), out_count, GR_INT32);
  const std::string factor_t =
      g.Add("Cast", "Cast", {factor}, {TypeAttr("SrcT", GR_INT32), TypeAttr("DstT", t), BoolAttr("Truncate", false)});
  g.SetGrad(0, Binary(g, "truediv", "RealDiv", spread, factor_t, t));
  return Status();
}

REGISTER_GRADIENT("Add", AddGrad);
REGISTER_GRADIENT("AddV2", AddGrad);
REGISTER_GRADIENT("Sub", SubGrad);
REGISTER_GRADIENT("Mul", MulGrad);
REGISTER_GRADIENT("RealDiv", DivGrad);
REGISTER_GRADIENT("Div", DivGrad);
REGISTER_GRADIENT("SquaredDifference", SquaredDifferenceGrad);
REGISTER_GRADIENT("Neg", NegGrad);
REGISTER_GRADIENT("Square", SquareGrad);
REGISTER_GRADIENT("Tanh", FromOutputGrad<kTanhGrad>);
REGISTER_GRADIENT("Sqrt", FromOutputGrad<kSqrtGrad>);
REGISTER_GRADIENT("Rsqrt", FromOutputGrad<kRsqrtGrad>);
REGISTER_GRADIENT("Reciprocal", FromOutputGrad<kReciprocalGrad>);
REGISTER_GRADIENT("Exp", ExpGrad);
REGISTER_GRADIENT("Log", LogGrad);
REGISTER_GRADIENT("Log1p", Log1pGrad);
REGISTER_GRADIENT("Abs", AbsGrad);
REGISTER_GRADIENT("MatMul", MatMulGrad);
REGISTER_GRADIENT("AddN", AddNGrad);
REGISTER_GRADIENT("Sum", SumGrad);
REGISTER_GRADIENT("Mean", MeanGrad);
// Piecewise constant or integer-valued: no gradient flows (TensorFlow's
// NotDifferentiable and its None gradients).
REGISTER_NO_GRADIENT("Equal");
REGISTER_NO_GRADIENT("NotEqual");
REGISTER_NO_GRADIENT("Less");
REGISTER_NO_GRADIENT("LessEqual");
REGISTER_NO_GRADIENT("Greater");
REGISTER_NO_GRADIENT("GreaterEqual");
REGISTER_NO_GRADIENT("ArgMax");
REGISTER_NO_GRADIENT("ArgMin");
REGISTER_NO_GRADIENT("Sign");
REGISTER_NO_GRADIENT("Floor");
REGISTER_NO_GRADIENT("Ceil");
REGISTER_NO_GRADIENT("Round");
REGISTER_NO_GRADIENT("FloorDiv");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
