// Op definitions of two array-family ops that TensorFlow 1 training graphs
// use in their gradients: BroadcastGradientArgs (reduction axes of a
// broadcasting binary op's gradient) and DynamicStitch (merges the pieces of
// partitioned data, e.g. the output shape of a reduction's gradient).
// TensorFlow's signatures and shape functions; REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "array/array_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

Status BroadcastGradientArgsShape(InferenceContext* c) {
  PartialShape unused;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &unused));
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 1, &unused));
  c->set_output(0, PartialShape::Known({-1}));
  c->set_output(1, PartialShape::Known({-1}));
  return Status();
}

Status DynamicStitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  int64_t max_index = -1;
  bool all_known = true;
  PartialShape extra = PartialShape::Unknown();  // data dims after the index dims
  for (int i = 0; i < n; ++i) {
    const PartialShape idx = c->input(i);
    const PartialShape data = c->input(n + i);
    if (idx.known_rank() && data.known_rank()) {
      if (data.rank < idx.rank) {
        return errors::InvalidArgument("data[", i, "].shape = ", sf::ShapeString(data),
                                       " does not start with indices[", i,
                                       "].shape = ", sf::ShapeString(idx));
      }
      for (int32_t d = 0; d < idx.rank; ++d) {
        int64_t m = -1;
        if (!sf::MergeDim(idx.dims[d], data.dims[d], &m).ok()) {
          return errors::InvalidArgument("data[", i, "].shape = ", sf::ShapeString(data),
                                         " does not start with indices[", i,
                                         "].shape = ", sf::ShapeString(idx));
        }
      }
      const PartialShape rest = PartialShape::Known(
          std::vector<int64_t>(data.dims.begin() + idx.rank, data.dims.end()));
      GR_RETURN_IF_ERROR_SDK(sf::Merge(extra, rest, &extra));
    }
    std::vector<int64_t> values;
    if (array::ConstIntVector(c, i, &values)) {
      for (int64_t v : values) max_index = std::max(max_index, v);
    } else {
      all_known = false;
    }
  }
  if (!extra.known_rank()) {
    c->set_output(0, PartialShape::Unknown());
    return Status();
  }
  std::vector<int64_t> out = {all_known ? max_index + 1 : -1};
  out.insert(out.end(), extra.dims.begin(), extra.dims.end());
  c->set_output(0, PartialShape::Known(out));
  return Status();
}

}  // namespace

REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastGradientArgsShape)
    .Doc("Return the reduction indices for computing gradients of s0 op s1 with broadcast.");

REGISTER_OP("DynamicStitch")
    .Input("indices: N * int32")
    .Input("data: N * T")
    .Output("merged: T")
    .Attr("N : int >= 1")
    .Attr("T : type")
    .SetShapeFn(DynamicStitchShape)
    .Doc("Interleave the values from the data tensors into a single tensor.");

}  // namespace sdk
}  // namespace graphrt
