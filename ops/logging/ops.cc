// Op definitions of the logging family (TensorFlow's signatures): Assert.
// REGISTER_OP only; the kernel is in cpu/.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Stateful, as in TensorFlow: never constant-folded or merged away.
REGISTER_OP("Assert")
    .Input("condition: bool")
    .Input("data: T")
    .Attr("T: list(type)")
    .Attr("summarize: int = 3")
    .SetIsStateful()
    .SetShapeFn(sf::NoOutputs)
    .Doc("Asserts that the given condition is true; if not, fails the step printing the data tensors.");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
