// Op definitions of the random family, with TensorFlow's names, signatures,
// attrs and defaults (tensorflow/core/ops/random_ops.cc as restated in
// tf_behaviours.md section 12). Shared by every device plugin of the
// family, so: REGISTER_OP only, no kernels.
//
// Every op here is stateful: each execution yields new numbers, the core
// keeps one kernel (and so one generator) per node and session, and no
// graph pass may merge two identical random nodes or fold one into a
// constant.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// Output 0's shape from the 1-D shape tensor at `input` (TensorFlow's
// RandomShape / MakeShapeFromShapeTensor): exact when the tensor is a known
// constant, else as many unknown dims as it has elements, if that is known.
Status ShapeFromShapeTensor(InferenceContext* c, int input) {
  PartialShape shape_of_shape;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(input), 1, &shape_of_shape));
  TensorView t;
  if (c->input_tensor(input, &t) && (t.dtype() == GR_INT32 || t.dtype() == GR_INT64)) {
    std::vector<int64_t> dims(static_cast<size_t>(t.NumElements()));
    for (size_t i = 0; i < dims.size(); ++i)
      dims[i] = t.dtype() == GR_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
    int64_t unused;
    GR_RETURN_IF_ERROR_SDK(NumElementsOf(dims, &unused));
    c->set_output(0, PartialShape::Known(dims));
    return Status();
  }
  const int64_t rank = shape_of_shape.dims[0];
  if (rank < 0) {
    c->set_output(0, PartialShape::Unknown());
  } else {
    if (rank > 64) return errors::InvalidArgument("shape has ", rank, " dimensions; at most 64 are supported");
    c->set_output(0, PartialShape::Known(std::vector<int64_t>(static_cast<size_t>(rank), -1)));
  }
  return Status();
}

Status RandomShape(InferenceContext* c) { return ShapeFromShapeTensor(c, 0); }

Status RandomUniformIntShape(InferenceContext* c) {
  PartialShape unused;
  Status s = sf::WithRank(c->input(1), 0, &unused);
  if (!s.ok()) return errors::InvalidArgument("minval must be a scalar: ", s.message());
  s = sf::WithRank(c->input(2), 0, &unused);
  if (!s.ok()) return errors::InvalidArgument("maxval must be a scalar: ", s.message());
  return ShapeFromShapeTensor(c, 0);
}

// [batch_size, num_samples]: logits is a matrix, num_samples a scalar whose
// value fixes the second dim when it is a known constant.
Status MultinomialShape(InferenceContext* c) {
  PartialShape logits, num_samples;
  Status s = sf::WithRank(c->input(0), 2, &logits);
  if (!s.ok()) return errors::InvalidArgument("logits must be a matrix: ", s.message());
  s = sf::WithRank(c->input(1), 0, &num_samples);
  if (!s.ok()) return errors::InvalidArgument("num_samples must be a scalar: ", s.message());
  int64_t n = -1;
  TensorView t;
  if (c->input_tensor(1, &t) && t.dtype() == GR_INT32 && t.NumElements() == 1) {
    n = t.scalar<int32_t>();
    if (n < 0) return errors::InvalidArgument("num_samples should be non-negative, got ", n);
  }
  c->set_output(0, PartialShape::Known({logits.dims[0], n}));
  return Status();
}

REGISTER_OP("RandomUniform")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Uniform values in [0, 1) of the given shape.");

REGISTER_OP("RandomUniformInt")
    .Input("shape: T")
    .Input("minval: Tout")
    .Input("maxval: Tout")
    .Output("output: Tout")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("Tout: {int32, int64}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomUniformIntShape)
    .Doc("Uniform integers in [minval, maxval) of the given shape.");

REGISTER_OP("RandomStandardNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Standard normal values (mean 0, stddev 1) of the given shape.");

REGISTER_OP("TruncatedNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Standard normal values redrawn until |x| < 2, of the given shape.");

REGISTER_OP("RandomShuffle")
    .Input("value: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(sf::UnchangedShape)
    .Doc("Randomly permutes `value` along its first dimension.");

REGISTER_OP("Multinomial")
    .Input("logits: T")
    .Input("num_samples: int32")
    .Output("output: output_dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: realnumbertype")
    .Attr("output_dtype: {int32, int64} = DT_INT64")
    .SetIsStateful()
    .SetShapeFn(MultinomialShape)
    .Doc("Draws num_samples class indices per row of unnormalised log-probabilities.");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
