// CPU kernels of the io family: SaveV2 / RestoreV2 / MergeV2Checkpoints,
// the V1 Save / SaveSlices / Restore / RestoreSlice, ShardedFilename /
// ShardedFilespec. The file formats live in graphrt_bundle (io/bundle).
#include <graphrt/sdk/sdk.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/bundle/bundle.h"

namespace graphrt {
namespace sdk {
namespace {

namespace bd = bundle;

Status FromBundle(const bd::Status& s) { return s.ok() ? Status() : Status(s.code, s.message); }

std::string StringAt(const TensorView& v, int64_t i) {
  const GR_StringElem& e = v.data<GR_StringElem>()[i];
  return std::string(e.data, e.size);
}

Status ScalarString(OpKernelContext* ctx, int input, const char* what, std::string* out) {
  const TensorView v = ctx->input(input);
  if (v.dtype() != GR_STRING || v.NumElements() != 1)
    return errors::InvalidArgument("Input ", what, " should have a single element, got shape ", v.ShapeString());
  *out = StringAt(v, 0);
  return Status();
}

Status StringVector(OpKernelContext* ctx, int input, int64_t want, const char* what, std::vector<std::string>* out) {
  const TensorView v = ctx->input(input);
  if (v.dtype() != GR_STRING || (want >= 0 && v.NumElements() != want))
    return errors::InvalidArgument("Input ", what, " should have ", want, " elements, got shape ", v.ShapeString());
  out->clear();
  for (int64_t i = 0; i < v.NumElements(); ++i) out->push_back(StringAt(v, i));
  return Status();
}

Status ToValue(const TensorView& v, const std::string& name, bd::TensorValue* out) {
  out->dtype = static_cast<int>(v.dtype());
  out->dims = v.dims();
  out->bytes.clear();
  out->strings.clear();
  if (v.dtype() == GR_STRING) {
    const GR_StringElem* e = v.data<GR_StringElem>();
    out->strings.reserve(static_cast<size_t>(v.NumElements()));
    for (int64_t i = 0; i < v.NumElements(); ++i) out->strings.emplace_back(e[i].data, e[i].size);
    return Status();
  }
  if (bd::DTypeSize(out->dtype) == 0)
    return errors::Unimplemented("tensor ", name, " has dtype ", bd::DTypeName(out->dtype),
                                 ", which cannot be saved in a checkpoint");
  out->bytes.assign(static_cast<const char*>(v.raw_data()), static_cast<size_t>(v.ByteSize()));
  return Status();
}

Status EmitValue(OpKernelContext* ctx, int index, const bd::TensorValue& t) {
  TensorView out;
  GR_RETURN_IF_ERROR_SDK(ctx->allocate_output(index, t.dims, &out));
  if (t.dtype == GR_STRING) {
    for (size_t i = 0; i < t.strings.size(); ++i)
      Api().string_assign(out.raw(), static_cast<int64_t>(i), t.strings[i].data(), t.strings[i].size());
  } else if (!t.bytes.empty()) {
    std::memcpy(out.raw_data(), t.bytes.data(), t.bytes.size());
  }
  return Status();
}

// Restores `name` (whole, or the slice `spec` names) from `reader` as `dtype`.
Status RestoreOne(bd::CheckpointReader* reader, const std::string& name, const std::string& spec, DataType dtype,
                  bd::TensorValue* out) {
  const bd::EntryInfo* e = reader->Find(name);
  if (!e) return Status(GR_NOT_FOUND, "Key " + name + " not found in checkpoint " + reader->prefix());
  if (e->dtype != static_cast<int>(dtype))
    return errors::InvalidArgument("tensor_name = ", name, "; expected dtype ", bd::DTypeName(dtype),
                                   " does not equal original dtype ", bd::DTypeName(e->dtype), " (checkpoint ",
                                   reader->prefix(), ")");
  bool has_shape = false;
  std::vector<int64_t> full;
  bd::TensorSlice slice;
  GR_RETURN_IF_ERROR_SDK(FromBundle(bd::ParseShapeAndSlice(spec, &has_shape, &full, &slice)));
  if (has_shape && full != e->dims)
    return errors::InvalidArgument("tensor ", name, ": shape_and_slice '", spec, "' describes shape ",
                                   bd::ShapeString(full), " but the checkpoint ", reader->prefix(),
                                   " holds shape ", bd::ShapeString(e->dims));
  return FromBundle(reader->LookupSlice(name, slice, out));
}

// ---------------------------------------------------------- file access

// A literal path as a glob pattern (glob(3) escapes with a backslash).
std::string GlobEscape(const std::string& path) {
  std::string s;
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') s += '\\';
    s += c;
  }
  return s;
}

// The session's file-access policy for checkpoint `prefix`: the prefix
// itself and every file named after it now (P.index, P.data-*, V1 shards,
// temporary files), any of which may be a symlink leading out.
Status CheckPrefix(OpKernelContext* ctx, const std::string& prefix, uint32_t access) {
  GR_RETURN_IF_ERROR_SDK(ctx->CheckFileAccess(prefix, access));
  return ctx->CheckFileAccess(GlobEscape(prefix) + "*", access | OpKernelContext::kFilePattern);
}

// ------------------------------------------------------------------ SaveV2

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 3;
    std::string prefix;
    std::vector<std::string> names, specs;
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 0, "prefix", &prefix));
    OP_REQUIRES_OK(ctx, StringVector(ctx, 1, n, "tensor_names", &names));
    OP_REQUIRES_OK(ctx, StringVector(ctx, 2, n, "shape_and_slices", &specs));
    OP_REQUIRES_OK(ctx, CheckPrefix(ctx, prefix, OpKernelContext::kFileWrite));
    bd::BundleWriter writer(prefix);
    for (int i = 0; i < n; ++i) {
      const std::string& name = names[static_cast<size_t>(i)];
      const TensorView in = ctx->input(3 + i);
      bool has_shape = false;
      std::vector<int64_t> full;
      bd::TensorSlice slice;
      OP_REQUIRES_OK(ctx, FromBundle(bd::ParseShapeAndSlice(specs[static_cast<size_t>(i)], &has_shape, &full, &slice)));
      if (!has_shape && bd::DTypeSize(static_cast<int>(in.dtype())) > 0) {
        // Whole fixed-size tensors go to the file straight from the input.
        OP_REQUIRES_OK(ctx, FromBundle(writer.Add(name, static_cast<int>(in.dtype()), in.dims(),
                                                  static_cast<const char*>(in.raw_data()), in.ByteSize())));
        continue;
      }
      bd::TensorValue v;
      OP_REQUIRES_OK(ctx, ToValue(in, name, &v));
      if (has_shape) {
        OP_REQUIRES_OK(ctx, FromBundle(writer.AddSlice(name, full, slice, v)));
      } else {
        OP_REQUIRES_OK(ctx, FromBundle(writer.Add(name, v)));
      }
    }
    OP_REQUIRES_OK(ctx, FromBundle(writer.Finish()));
  }
};

// --------------------------------------------------------------- RestoreV2

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtypes", &dtypes_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = static_cast<int64_t>(dtypes_.size());
    std::string prefix;
    std::vector<std::string> names, specs;
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 0, "prefix", &prefix));
    OP_REQUIRES_OK(ctx, StringVector(ctx, 1, n, "tensor_names", &names));
    OP_REQUIRES_OK(ctx, StringVector(ctx, 2, n, "shape_and_slices", &specs));
    OP_REQUIRES_OK(ctx, CheckPrefix(ctx, prefix, OpKernelContext::kFileRead));
    // The V1 fallback reads `prefix` as a file pattern.
    OP_REQUIRES_OK(ctx, ctx->CheckFileAccess(prefix, OpKernelContext::kFileRead | OpKernelContext::kFilePattern));
    // A V2 bundle if prefix.index exists, else V1 files (TensorFlow's fallback).
    std::unique_ptr<bd::CheckpointReader> reader;
    OP_REQUIRES_OK(ctx, FromBundle(bd::CheckpointReader::Open(prefix, &reader)));
    for (int64_t i = 0; i < n; ++i) {
      const std::string& name = names[static_cast<size_t>(i)];
      const DataType dt = dtypes_[static_cast<size_t>(i)];
      const bd::EntryInfo* e = reader->Find(name);
      if (e && e->dtype == static_cast<int>(dt) && specs[static_cast<size_t>(i)].empty() &&
          bd::DTypeSize(e->dtype) > 0) {
        // A whole fixed-size tensor is read straight into the output.
        const int out = static_cast<int>(i);
        OP_REQUIRES_OK(ctx, FromBundle(reader->LookupInto(
                                name, [ctx, out](const std::vector<int64_t>& dims, char** dst) {
                                  TensorView v;
                                  Status s = ctx->allocate_output(out, dims, &v);
                                  if (!s.ok()) return bd::MakeStatus(s.code(), s.message());
                                  *dst = static_cast<char*>(v.raw_data());
                                  return bd::Status();
                                })));
        continue;
      }
      bd::TensorValue v;
      OP_REQUIRES_OK(ctx, RestoreOne(reader.get(), name, specs[static_cast<size_t>(i)], dt, &v));
      OP_REQUIRES_OK(ctx, EmitValue(ctx, static_cast<int>(i), v));
    }
  }

 private:
  std::vector<DataType> dtypes_;
};

// ------------------------------------------------------ MergeV2Checkpoints

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("delete_old_dirs", &delete_old_dirs_));
    if (c->HasAttr("allow_missing_files")) c->SetStatus(c->GetAttr("allow_missing_files", &allow_missing_files_));
  }
  void Compute(OpKernelContext* ctx) override {
    std::vector<std::string> prefixes;
    std::string dest;
    OP_REQUIRES_OK(ctx, StringVector(ctx, 0, -1, "checkpoint_prefixes", &prefixes));
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 1, "destination_prefix", &dest));
    // The sources' files are moved or deleted (and, with delete_old_dirs,
    // their emptied directories removed): write access to all of them.
    for (const std::string& p : prefixes)
      OP_REQUIRES_OK(ctx, CheckPrefix(ctx, p, OpKernelContext::kFileRead | OpKernelContext::kFileWrite));
    OP_REQUIRES_OK(ctx, CheckPrefix(ctx, dest, OpKernelContext::kFileWrite));
    OP_REQUIRES_OK(ctx, FromBundle(bd::MergeBundles(prefixes, dest, delete_old_dirs_, allow_missing_files_)));
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

// ------------------------------------------------------- V1 Save / Slices

class SaveV1Op : public OpKernel {
 public:
  SaveV1Op(OpKernelConstruction* c, bool slices) : OpKernel(c), slices_(slices) {}
  void Compute(OpKernelContext* ctx) override {
    const int first = slices_ ? 3 : 2;
    const int n = ctx->num_inputs() - first;
    std::string filename;
    std::vector<std::string> names, specs;
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 0, "filename", &filename));
    OP_REQUIRES_OK(ctx, StringVector(ctx, 1, n, "tensor_names", &names));
    if (slices_) OP_REQUIRES_OK(ctx, StringVector(ctx, 2, n, "shapes_and_slices", &specs));
    OP_REQUIRES_OK(ctx, CheckPrefix(ctx, filename, OpKernelContext::kFileWrite));
    std::vector<bd::V1Item> items(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      bd::V1Item& it = items[static_cast<size_t>(i)];
      it.name = names[static_cast<size_t>(i)];
      OP_REQUIRES_OK(ctx, ToValue(ctx->input(first + i), it.name, &it.value));
      bool has_shape = false;
      if (slices_)
        OP_REQUIRES_OK(ctx, FromBundle(bd::ParseShapeAndSlice(specs[static_cast<size_t>(i)], &has_shape,
                                                              &it.full_dims, &it.slice)));
      if (!has_shape) it.full_dims = it.value.dims;
    }
    OP_REQUIRES_OK(ctx, FromBundle(bd::WriteV1Checkpoint(filename, items)));
  }

 private:
  bool slices_;
};

class SaveOp : public SaveV1Op {
 public:
  explicit SaveOp(OpKernelConstruction* c) : SaveV1Op(c, false) {}
};
class SaveSlicesOp : public SaveV1Op {
 public:
  explicit SaveSlicesOp(OpKernelConstruction* c) : SaveV1Op(c, true) {}
};

// ---------------------------------------------------- V1 Restore / Slice

class RestoreV1Op : public OpKernel {
 public:
  RestoreV1Op(OpKernelConstruction* c, bool slice) : OpKernel(c), slice_(slice) {
    c->SetStatus(c->GetAttr("dt", &dt_));
  }
  void Compute(OpKernelContext* ctx) override {
    std::string pattern, name, spec;
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 0, "file_pattern", &pattern));
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 1, "tensor_name", &name));
    if (slice_) OP_REQUIRES_OK(ctx, ScalarString(ctx, 2, "shape_and_slice", &spec));
    OP_REQUIRES_OK(ctx, ctx->CheckFileAccess(pattern, OpKernelContext::kFileRead | OpKernelContext::kFilePattern));
    std::unique_ptr<bd::CheckpointReader> reader;
    OP_REQUIRES_OK(ctx, FromBundle(bd::CheckpointReader::OpenV1(pattern, &reader)));
    bd::TensorValue v;
    OP_REQUIRES_OK(ctx, RestoreOne(reader.get(), name, spec, dt_, &v));
    OP_REQUIRES_OK(ctx, EmitValue(ctx, 0, v));
  }

 private:
  bool slice_;
  DataType dt_ = GR_INVALID;
};

class RestoreOp : public RestoreV1Op {
 public:
  explicit RestoreOp(OpKernelConstruction* c) : RestoreV1Op(c, false) {}
};
class RestoreSliceOp : public RestoreV1Op {
 public:
  explicit RestoreSliceOp(OpKernelConstruction* c) : RestoreV1Op(c, true) {}
};

// --------------------------------------------------------- file names

Status ScalarInt(OpKernelContext* ctx, int input, const char* what, int32_t* out) {
  const TensorView v = ctx->input(input);
  if (v.dtype() != GR_INT32 || v.NumElements() != 1)
    return errors::InvalidArgument("Input ", what, " should be a scalar int32, got shape ", v.ShapeString());
  *out = v.data<int32_t>()[0];
  return Status();
}

Status EmitString(OpKernelContext* ctx, const std::string& s) {
  TensorView out;
  GR_RETURN_IF_ERROR_SDK(ctx->allocate_output(0, std::vector<int64_t>{}, &out));
  Api().string_assign(out.raw(), 0, s.data(), s.size());
  return Status();
}

class ShardedFilenameOp : public OpKernel {
 public:
  explicit ShardedFilenameOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::string base;
    int32_t shard = 0, num = 0;
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 0, "basename", &base));
    OP_REQUIRES_OK(ctx, ScalarInt(ctx, 1, "shard", &shard));
    OP_REQUIRES_OK(ctx, ScalarInt(ctx, 2, "num_shards", &num));
    char buf[64];
    std::snprintf(buf, sizeof(buf), "-%05d-of-%05d", shard, num);
    OP_REQUIRES_OK(ctx, EmitString(ctx, base + buf));
  }
};

class ShardedFilespecOp : public OpKernel {
 public:
  explicit ShardedFilespecOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::string base;
    int32_t num = 0;
    OP_REQUIRES_OK(ctx, ScalarString(ctx, 0, "basename", &base));
    OP_REQUIRES_OK(ctx, ScalarInt(ctx, 1, "num_shards", &num));
    char buf[64];
    // Split literal: "??-" would be a trigraph.
    std::snprintf(buf, sizeof(buf), "-?" "????" "-of-%05d", num);
    OP_REQUIRES_OK(ctx, EmitString(ctx, base + buf));
  }
};

REGISTER_KERNEL(Name("SaveV2").Device(DEVICE_CPU), SaveV2Op);
REGISTER_KERNEL(Name("RestoreV2").Device(DEVICE_CPU), RestoreV2Op);
REGISTER_KERNEL(Name("MergeV2Checkpoints").Device(DEVICE_CPU), MergeV2CheckpointsOp);
REGISTER_KERNEL(Name("Save").Device(DEVICE_CPU), SaveOp);
REGISTER_KERNEL(Name("SaveSlices").Device(DEVICE_CPU), SaveSlicesOp);
REGISTER_KERNEL(Name("Restore").Device(DEVICE_CPU), RestoreOp);
REGISTER_KERNEL(Name("RestoreSlice").Device(DEVICE_CPU), RestoreSliceOp);
REGISTER_KERNEL(Name("ShardedFilename").Device(DEVICE_CPU).Inexpensive(), ShardedFilenameOp);
REGISTER_KERNEL(Name("ShardedFilespec").Device(DEVICE_CPU).Inexpensive(), ShardedFilespecOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
