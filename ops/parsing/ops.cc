// Op definitions of the parsing family (TensorFlow's signatures):
// ParseExample, ParseExampleV2, ParseSingleExample. REGISTER_OP only; the
// kernels are in cpu/.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <string>
#include <vector>

#include "parsing/parsing_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// The shapes every parse op shares once the batch dims are known
// (`batch`: [] for one example, [B] or [?] for a batch, or unknown rank).
Status SetParseOutputs(InferenceContext* c, const PartialShape& batch, int num_sparse,
                       int num_dense, int num_ragged) {
  std::vector<PartialShape> dense_shapes;
  const Status shapes_read = parsing::GetDenseShapes(c, num_dense, &dense_shapes);
  // Unreadable dense_shapes (an SDK without list(shape) attrs): the dense
  // outputs' shapes stay unknown and the kernel reports the problem.
  if (!shapes_read.ok() && shapes_read.code() != GR_UNIMPLEMENTED) return shapes_read;
  const int batch_rank = batch.known_rank() ? batch.rank : -1;
  int out = 0;
  for (int i = 0; i < num_sparse; ++i)  // indices [N, 1 + batch rank]
    c->set_output(out++, PartialShape::Known({-1, batch_rank < 0 ? -1 : 1 + batch_rank}));
  for (int i = 0; i < num_sparse; ++i) c->set_output(out++, PartialShape::Known({-1}));
  for (int i = 0; i < num_sparse; ++i)
    c->set_output(out++, PartialShape::Known({batch_rank < 0 ? -1 : 1 + batch_rank}));
  for (int i = 0; i < num_dense; ++i) {
    if (!shapes_read.ok()) {
      c->set_output(out++, PartialShape::Unknown());
      continue;
    }
    const PartialShape& s = dense_shapes[i];
    GR_RETURN_IF_ERROR_SDK(parsing::CheckDenseShape(s, i));
    if (!batch.known_rank()) {
      c->set_output(out++, PartialShape::Unknown());
      continue;
    }
    std::vector<int64_t> dims = batch.dims;
    dims.insert(dims.end(), s.dims.begin(), s.dims.end());
    c->set_output(out++, PartialShape::Known(std::move(dims)));
  }
  for (int i = 0; i < num_ragged; ++i) c->set_output(out++, PartialShape::Known({-1}));
  for (int i = 0; i < num_ragged; ++i) {
    int64_t splits = -1;
    if (batch.known_rank() && batch.rank == 0) splits = 2;
    if (batch.known_rank() && batch.rank == 1 && batch.dims[0] >= 0) splits = batch.dims[0] + 1;
    c->set_output(out++, PartialShape::Known({splits}));
  }
  return Status();
}

Status ParseExampleShape(InferenceContext* c) {
  int64_t num_sparse = 0, num_dense = 0;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("Nsparse", &num_sparse));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("Ndense", &num_dense));
  PartialShape batch;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 1, &batch));
  return SetParseOutputs(c, batch, static_cast<int>(num_sparse), static_cast<int>(num_dense), 0);
}

Status ParseExampleV2Shape(InferenceContext* c) {
  int64_t num_sparse = 0;
  std::vector<DataType> dense_types, ragged_types;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("num_sparse", &num_sparse));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("Tdense", &dense_types));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("ragged_value_types", &ragged_types));
  PartialShape batch = c->input(0);
  if (batch.known_rank() && batch.rank > 1) {
    return errors::InvalidArgument("serialized must be a scalar or a vector, but has shape ",
                                   sf::ShapeString(batch));
  }
  return SetParseOutputs(c, batch, static_cast<int>(num_sparse), static_cast<int>(dense_types.size()),
                         static_cast<int>(ragged_types.size()));
}

Status ParseSingleExampleShape(InferenceContext* c) {
  int64_t num_sparse = 0;
  std::vector<DataType> dense_types;
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("num_sparse", &num_sparse));
  GR_RETURN_IF_ERROR_SDK(c->GetAttr("Tdense", &dense_types));
  PartialShape batch;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(0), 0, &batch));
  return SetParseOutputs(c, batch, static_cast<int>(num_sparse), static_cast<int>(dense_types.size()), 0);
}

REGISTER_OP("ParseExample")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: Nsparse * string")
    .Input("dense_keys: Ndense * string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: Nsparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: Nsparse * int64")
    .Output("dense_values: Tdense")
    .Attr("Nsparse: int >= 0")
    .Attr("Ndense: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleShape)
    .Doc("Transforms a vector of serialized tf.Example protos into typed tensors.");

REGISTER_OP("ParseExampleV2")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: string")
    .Input("dense_keys: string")
    .Input("ragged_keys: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Output("ragged_values: ragged_value_types")
    .Output("ragged_row_splits: ragged_split_types")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("ragged_value_types: list({float,int64,string}) >= 0")
    .Attr("ragged_split_types: list({int32,int64}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleV2Shape)
    .Doc("Transforms a scalar or vector of serialized tf.Example protos into typed tensors.");

REGISTER_OP("ParseSingleExample")
    .Input("serialized: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_keys: list(string) >= 0")
    .Attr("dense_keys: list(string) >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseSingleExampleShape)
    .Doc("Transforms one serialized tf.Example proto into typed tensors.");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
