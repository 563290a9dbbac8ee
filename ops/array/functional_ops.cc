// Op definitions of TensorFlow's functional control flow: If/StatelessIf,
// Case/StatelessCase, While/StatelessWhile, and ToBool. The core lowers the
// control-flow ops to Switch/Merge/Enter/Exit/NextIteration at graph import
// (kernel_core/src/functional_lowering.cc), so they have no kernels; their
// definitions are here so nodes (in graphs and in function bodies) validate
// and their outputs can be named ("if:output:0"). ToBool is the predicate
// conversion the lowering inserts; its CPU kernel is cpu/to_bool_kernel.cc.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

namespace graphrt {
namespace sdk {

namespace sf = shape_fns;

REGISTER_OP("ToBool")
    .Input("input: T")
    .Output("output: bool")
    .Attr("T: type")
    .SetShapeFn(sf::ScalarShape)
    .Doc(
        "Converts a tensor to a scalar predicate: a scalar is true iff it is non-zero (a string iff it is "
        "non-empty); a non-scalar tensor is true iff it has elements.");

// If and StatelessIf differ only in the stateful flag.
#define GR_IF_OP(name)                         \
  REGISTER_OP(name)                            \
      .Input("cond: Tcond")                    \
      .Input("input: Tin")                     \
      .Output("output: Tout")                  \
      .Attr("Tcond: type")                     \
      .Attr("Tin: list(type) >= 0")            \
      .Attr("Tout: list(type) >= 0")           \
      .Attr("then_branch: func")               \
      .Attr("else_branch: func")               \
      .Attr("output_shapes: list(shape) = []") \
      .SetShapeFn(sf::UnknownShape)            \
      .Doc("output = cond ? then_branch(input) : else_branch(input)")
GR_IF_OP("If").SetIsStateful();
GR_IF_OP("StatelessIf");
#undef GR_IF_OP

#define GR_CASE_OP(name)                       \
  REGISTER_OP(name)                            \
      .Input("branch_index: int32")            \
      .Input("input: Tin")                     \
      .Output("output: Tout")                  \
      .Attr("Tin: list(type) >= 0")            \
      .Attr("Tout: list(type) >= 0")           \
      .Attr("branches: list(func) >= 1")       \
      .Attr("output_shapes: list(shape) = []") \
      .SetShapeFn(sf::UnknownShape)            \
      .Doc("output = branches[branch_index](input); an out-of-range index runs the last branch")
GR_CASE_OP("Case").SetIsStateful();
GR_CASE_OP("StatelessCase");
#undef GR_CASE_OP

#define GR_WHILE_OP(name)                      \
  REGISTER_OP(name)                            \
      .Input("input: T")                       \
      .Output("output: T")                     \
      .Attr("T: list(type) >= 0")              \
      .Attr("cond: func")                      \
      .Attr("body: func")                      \
      .Attr("output_shapes: list(shape) = []") \
      .Attr("parallel_iterations: int = 10")   \
      .SetShapeFn(sf::UnknownShape)            \
      .Doc("output = input; while (cond(output)) { output = body(output) }")
GR_WHILE_OP("While").SetIsStateful();
GR_WHILE_OP("StatelessWhile");
#undef GR_WHILE_OP

}  // namespace sdk
}  // namespace graphrt
