// Helpers the op families' gradient functions share (graphrt/sdk/gradient.h):
// the nodes TensorFlow's gradients are made of, typed for the node at hand.
#ifndef GRAPHRT_OPS_COMMON_GRADIENTS_H_
#define GRAPHRT_OPS_COMMON_GRADIENTS_H_

#include <graphrt/sdk/gradient.h>

#include <string>
#include <utility>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace grad {

inline AttrText T(DataType t) { return TypeAttr("T", t); }

inline std::string Shape(GradientContext& g, const std::string& name, const std::string& x, DataType t) {
  return g.Add(name, "Shape", {x}, {T(t), TypeAttr("out_type", GR_INT32)});
}

inline std::string Binary(GradientContext& g, const std::string& name, const char* op, const std::string& x,
                          const std::string& y, DataType t) {
  return g.Add(name, op, {x, y}, {T(t)});
}

inline std::string Unary(GradientContext& g, const std::string& name, const char* op, const std::string& x,
                         DataType t) {
  return g.Add(name, op, {x}, {T(t)});
}

inline std::string Reshape(GradientContext& g, const std::string& name, const std::string& x,
                           const std::string& shape, DataType t) {
  return g.Add(name, "Reshape", {x, shape}, {T(t), TypeAttr("Tshape", GR_INT32)});
}

inline std::string Sum(GradientContext& g, const std::string& name, const std::string& x, const std::string& axes,
                       DataType t, bool keep_dims = false) {
  return g.Add(name, "Sum", {x, axes}, {T(t), TypeAttr("Tidx", GR_INT32), BoolAttr("keep_dims", keep_dims)});
}

// The gradients of a broadcasting binary op's two inputs from gx and gy,
// each shaped like the op's output: summed over the axes the input was
// broadcast along and reshaped to the input's shape (TensorFlow's
// BroadcastGradientArgs pattern).
inline std::pair<std::string, std::string> Unbroadcast(GradientContext& g, const std::string& gx,
                                                       const std::string& gy) {
  const DataType t = g.input_type(0);
  const std::string sx = Shape(g, "Shape", g.input(0), t);
  const std::string sy = Shape(g, "Shape_1", g.input(1), g.input_type(1));
  const std::string r = g.Add("BroadcastGradientArgs", "BroadcastGradientArgs", {sx, sy}, {T(GR_INT32)});
  std::string dx, dy;
  if (!gx.empty()) dx = Reshape(g, "Reshape", Sum(g, "Sum", gx, r, t), sx, t);
  if (!gy.empty()) dy = Reshape(g, "Reshape_1", Sum(g, "Sum_1", gy, GradientContext::Out(r, 1), t), sy, t);
  return {dx, dy};
}

}  // namespace grad
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_COMMON_GRADIENTS_H_
