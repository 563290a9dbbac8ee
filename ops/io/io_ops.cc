// Op definitions of the io family: checkpoint save/restore (V2 tensor
// bundle and V1 TensorSlice files) and the filename helpers. TensorFlow's
// signatures, attrs and defaults (core/ops/io_ops.cc); REGISTER_OP only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <string>
#include <vector>

#include "graphrt/bundle/bundle.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

Status CheckRank(InferenceContext* c, int input, int rank, const char* what) {
  PartialShape s;
  Status st = sf::WithRank(c->input(input), rank, &s);
  if (!st.ok()) return errors::InvalidArgument(what, " must be ", rank == 0 ? "a scalar" : "a vector", ": ", st.message());
  return Status();
}

Status SaveV2Shape(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 0, 0, "prefix"));
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 1, 1, "tensor_names"));
  return CheckRank(c, 2, 1, "shape_and_slices");
}

// A constant shape_and_slices entry fixes the output's shape; "" or an
// unknown one leaves it to the checkpoint.
Status RestoreShapeFrom(InferenceContext* c, int spec_input, int first_output, int count) {
  TensorView v;
  const bool known = c->input_tensor(spec_input, &v) && v.dtype() == GR_STRING && v.NumElements() == count;
  for (int i = 0; i < count; ++i) {
    c->set_output(first_output + i, PartialShape::Unknown());
    if (!known) continue;
    const GR_StringElem& e = v.data<GR_StringElem>()[i];
    const std::string spec(e.data, e.size);
    bool has = false;
    std::vector<int64_t> full, dims;
    bundle::TensorSlice slice;
    bundle::Status s = bundle::ParseShapeAndSlice(spec, &has, &full, &slice);
    if (!s.ok()) return Status(s.code, s.message);
    if (has && bundle::SliceDims(slice, full, &dims).ok()) c->set_output(first_output + i, PartialShape::Known(dims));
  }
  return Status();
}

Status RestoreV2Shape(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 0, 0, "prefix"));
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 1, 1, "tensor_names"));
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 2, 1, "shape_and_slices"));
  return RestoreShapeFrom(c, 2, 0, c->num_outputs());
}

Status RestoreSliceShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 0, 0, "file_pattern"));
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 1, 0, "tensor_name"));
  GR_RETURN_IF_ERROR_SDK(CheckRank(c, 2, 0, "shape_and_slice"));
  return RestoreShapeFrom(c, 2, 0, 1);
}

REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(SaveV2Shape)
    .Doc("Saves tensors in V2 checkpoint format.");

REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(RestoreV2Shape)
    .Doc("Restores tensors from a V2 checkpoint (or a V1 one).");

REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR_SDK(CheckRank(c, 0, 1, "checkpoint_prefixes"));
      return CheckRank(c, 1, 0, "destination_prefix");
    })
    .Doc("V2 format specific: merges the metadata files of sharded checkpoints.");

REGISTER_OP("Save")
    .Input("filename: string")
    .Input("tensor_names: string")
    .Input("data: T")
    .Attr("T: list(type)")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR_SDK(CheckRank(c, 0, 0, "filename"));
      return CheckRank(c, 1, 1, "tensor_names");
    })
    .Doc("Saves the input tensors to disk (V1 checkpoint).");

REGISTER_OP("SaveSlices")
    .Input("filename: string")
    .Input("tensor_names: string")
    .Input("shapes_and_slices: string")
    .Input("data: T")
    .Attr("T: list(type)")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR_SDK(CheckRank(c, 0, 0, "filename"));
      GR_RETURN_IF_ERROR_SDK(CheckRank(c, 1, 1, "tensor_names"));
      return CheckRank(c, 2, 1, "shapes_and_slices");
    })
    .Doc("Saves input tensors slices to disk (V1 checkpoint).");

REGISTER_OP("Restore")
    .Input("file_pattern: string")
    .Input("tensor_name: string")
    .Output("tensor: dt")
    .Attr("dt: type")
    .Attr("preferred_shard: int = -1")
    .SetIsStateful()
    .SetShapeFn(sf::UnknownShape)
    .Doc("Restores a tensor from V1 checkpoint files.");

REGISTER_OP("RestoreSlice")
    .Input("file_pattern: string")
    .Input("tensor_name: string")
    .Input("shape_and_slice: string")
    .Output("tensor: dt")
    .Attr("dt: type")
    .Attr("preferred_shard: int = -1")
    .SetIsStateful()
    .SetShapeFn(RestoreSliceShape)
    .Doc("Restores a tensor from V1 checkpoint files (a slice of it).");

REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Generate a sharded filename: %s-%05d-of-%05d.");

REGISTER_OP("ShardedFilespec")
    .Input("basename: string")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Generate a glob pattern matching all sharded file names.");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
