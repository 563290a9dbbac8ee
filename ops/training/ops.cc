// Op definitions of the training family: optimizer updates applied in place
// to variables. TensorFlow's signatures and defaults (training_ops.cc).
// So far: gradient descent, the update TF1's GradientDescentOptimizer emits.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// var, alpha (scalar), delta (var's shape) -> var's shape.
Status GradientDescentShape(InferenceContext* c) {
  PartialShape alpha;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 0, &alpha));
  PartialShape out;
  GR_RETURN_IF_ERROR_SDK(sf::Merge(c->input(0), c->input(2), &out));
  if (c->num_outputs() > 0) c->set_output(0, out);
  return Status();
}

}  // namespace

REGISTER_OP("ApplyGradientDescent")
    .Input("var: Ref(T)")
    .Input("alpha: T")
    .Input("delta: T")
    .Output("out: Ref(T)")
    .Attr("T: numbertype")
    .Attr("use_locking: bool = false")
    .SetShapeFn(GradientDescentShape);

REGISTER_OP("ResourceApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("T: numbertype")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      PartialShape alpha;
      return sf::WithRank(c->input(1), 0, &alpha);
    });

}  // namespace sdk
}  // namespace graphrt
