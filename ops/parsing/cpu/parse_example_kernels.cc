// CPU kernels of ParseExample, ParseExampleV2 and ParseSingleExample: they
// read the keys, defaults and serialized inputs, and let the shared
// ExampleParser (parser/) parse and fill outputs allocated here.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "parser/example_parser.h"
#include "parsing/parsing_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using parsing::ConstValues;
using parsing::ExampleParser;
using parsing::ParseConfig;
using parsing::ValueSink;

std::string_view StringAt(const TensorView& t, int64_t i) {
  const GR_StringElem& e = t.data<GR_StringElem>()[i];
  return std::string_view(e.data, e.size);
}

ValueSink SinkFor(TensorView* out) {
  ValueSink s;
  s.data = out->raw_data();
  s.ctx = out->raw();
  s.assign = [](void* ctx, int64_t index, const char* bytes, uint64_t size) {
    Api().string_assign(static_cast<GR_TensorView*>(ctx), index, bytes, size);
  };
  return s;
}

// What the three ops share: the attrs that describe the features, and
// parsing into the outputs (sparse indices, values, shapes, dense values,
// ragged values, ragged row splits, in TensorFlow's output order).
class ParseKernelBase : public OpKernel {
 public:
  explicit ParseKernelBase(OpKernelConstruction* c) : OpKernel(c) {}

 protected:
  // Reads and checks dense_shapes for dense_types_.size() features.
  Status ReadDenseShapes(OpKernelConstruction* c) {
    std::vector<PartialShape> shapes;
    GR_RETURN_IF_ERROR_SDK(parsing::GetDenseShapes(c, static_cast<int64_t>(dense_types_.size()), &shapes));
    dense_shapes_.clear();
    for (size_t i = 0; i < shapes.size(); ++i) {
      GR_RETURN_IF_ERROR_SDK(parsing::CheckDenseShape(shapes[i], static_cast<int>(i)));
      dense_shapes_.push_back(shapes[i].dims);
    }
    return Status();
  }

  static Status CheckCount(const char* what, size_t got, int64_t want, const char* of) {
    if (static_cast<int64_t>(got) != want) {
      return errors::InvalidArgument("len(", what, ") = ", got, " but ", of, " = ", want);
    }
    return Status();
  }

  // The config for the given keys; defaults are inputs
  // [defaults_begin, defaults_begin + num dense).
  Status MakeConfig(OpKernelContext* ctx, const std::vector<std::string>& sparse_keys,
                    const std::vector<std::string>& dense_keys, const std::vector<std::string>& ragged_keys,
                    int defaults_begin, ParseConfig* config) const {
    for (size_t i = 0; i < sparse_keys.size(); ++i) config->sparse.push_back({sparse_keys[i], sparse_types_[i]});
    for (size_t i = 0; i < ragged_keys.size(); ++i) config->ragged.push_back({ragged_keys[i], ragged_types_[i]});
    for (size_t d = 0; d < dense_keys.size(); ++d) {
      const TensorView def = ctx->input(defaults_begin + static_cast<int>(d));
      parsing::DenseSpec spec;
      spec.key = dense_keys[d];
      spec.dtype = dense_types_[d];
      spec.shape = dense_shapes_[d];
      spec.default_value = ConstValues{def.dtype(), def.raw_data(), def.NumElements()};
      const bool variable_length = !spec.shape.empty() && spec.shape[0] == -1;
      // A fixed-length default has the feature's shape (TensorFlow's check).
      if (!variable_length && def.NumElements() != 0 && def.dims() != spec.shape) {
        return errors::InvalidArgument("def_value[", d, "].shape() == ", def.ShapeString(), " != dense_shapes[", d,
                                       "] == ", sf::ShapeString(spec.shape), " (feature '", spec.key, "')");
      }
      config->dense.push_back(std::move(spec));
    }
    return Status();
  }

  void ParseInto(OpKernelContext* ctx, ParseConfig config, bool batched,
                 const std::vector<std::string_view>& serialized, const std::vector<std::string_view>& names) {
    ExampleParser parser;
    OP_REQUIRES_OK(ctx, ExampleParser::Create(std::move(config), batched, &parser));
    // Decoding many examples is worth the session's pool.
    const ExampleParser::ParallelFor parallel_for =
        [ctx](int64_t total, int64_t cost, const std::function<void(int64_t, int64_t)>& fn) {
          if (ctx->num_threads() > 1) {
            ctx->parallel_for(total, cost, fn);
          } else {
            fn(0, total);
          }
        };
    OP_REQUIRES_OK(ctx, parser.Parse(serialized, names, parallel_for));
    const int ns = static_cast<int>(sparse_types_.size());
    const int nd = static_cast<int>(dense_types_.size());
    const int nr = static_cast<int>(ragged_types_.size());
    for (int i = 0; i < ns; ++i) {
      TensorView indices, values, shape;
      const int64_t n = parser.sparse_count(i);
      const int rank = parser.sparse_index_rank();
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, {n, rank}, &indices));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(ns + i, {n}, &values));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(2 * ns + i, {static_cast<int64_t>(rank)}, &shape));
      parser.FillSparse(i, indices.data<int64_t>(), SinkFor(&values), shape.data<int64_t>());
    }
    for (int d = 0; d < nd; ++d) {
      TensorView out;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(3 * ns + d, parser.dense_shape(d), &out));
      parser.FillDense(d, SinkFor(&out));
    }
    for (int i = 0; i < nr; ++i) {
      TensorView values, splits;
      const int64_t n = parser.ragged_count(i);
      const int64_t num_splits = parser.num_examples() + 1;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(3 * ns + nd + i, {n}, &values));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(3 * ns + nd + nr + i, {num_splits}, &splits));
      if (ragged_split_types_[i] == GR_INT64) {
        parser.FillRagged(i, SinkFor(&values), splits.data<int64_t>());
        continue;
      }
      OP_REQUIRES(ctx, n <= std::numeric_limits<int32_t>::max(),
                  errors::InvalidArgument("ragged feature ", i, " has ", n,
                                          " values, too many for int32 row splits"));
      std::vector<int64_t> wide(static_cast<size_t>(num_splits));  // one per example
      parser.FillRagged(i, SinkFor(&values), wide.data());
      for (int64_t k = 0; k < num_splits; ++k) splits.data<int32_t>()[k] = static_cast<int32_t>(wide[k]);
    }
  }

  static void StringsOf(const TensorView& t, std::vector<std::string_view>* out) {
    out->clear();
    for (int64_t i = 0; i < t.NumElements(); ++i) out->push_back(StringAt(t, i));
  }

  std::vector<DataType> sparse_types_, dense_types_, ragged_types_, ragged_split_types_;
  std::vector<std::vector<int64_t>> dense_shapes_;
};

// ParseExample (V1): keys are scalar inputs; serialized is a vector.
class ParseExampleOp : public ParseKernelBase {
 public:
  explicit ParseExampleOp(OpKernelConstruction* c) : ParseKernelBase(c) {
    OP_REQUIRES_OK(c, c->GetAttr("Nsparse", &num_sparse_));
    OP_REQUIRES_OK(c, c->GetAttr("Ndense", &num_dense_));
    OP_REQUIRES_OK(c, c->GetAttr("sparse_types", &sparse_types_));
    OP_REQUIRES_OK(c, c->GetAttr("Tdense", &dense_types_));
    OP_REQUIRES_OK(c, CheckCount("sparse_types", sparse_types_.size(), num_sparse_, "Nsparse"));
    OP_REQUIRES_OK(c, CheckCount("Tdense", dense_types_.size(), num_dense_, "Ndense"));
    OP_REQUIRES_OK(c, ReadDenseShapes(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView serialized = ctx->input(0), names = ctx->input(1);
    OP_REQUIRES(ctx, serialized.rank() == 1,
                errors::InvalidArgument("Expected serialized to be a vector, got shape: ", serialized.ShapeString()));
    OP_REQUIRES(ctx, names.rank() == 1 || names.NumElements() == 0,
                errors::InvalidArgument("Expected names to be either a vector or empty, got shape: ",
                                        names.ShapeString()));
    std::vector<std::string> keys[2];
    for (int k = 0; k < 2; ++k) {
      const int64_t count = k == 0 ? num_sparse_ : num_dense_;
      const int begin = 2 + (k == 0 ? 0 : static_cast<int>(num_sparse_));
      for (int64_t i = 0; i < count; ++i) {
        const TensorView key = ctx->input(begin + static_cast<int>(i));
        OP_REQUIRES(ctx, key.rank() == 0,
                    errors::InvalidArgument("Expected ", k == 0 ? "sparse" : "dense", "_keys[", i,
                                            "] to be a scalar, got shape: ", key.ShapeString()));
        keys[k].emplace_back(StringAt(key, 0));
      }
    }
    ParseConfig config;
    OP_REQUIRES_OK(ctx, MakeConfig(ctx, keys[0], keys[1], {}, 2 + static_cast<int>(num_sparse_ + num_dense_),
                                   &config));
    std::vector<std::string_view> in, name_list;
    StringsOf(serialized, &in);
    StringsOf(names, &name_list);
    ParseInto(ctx, std::move(config), true, in, name_list);
  }

 private:
  int64_t num_sparse_ = 0, num_dense_ = 0;
};

// ParseExampleV2: keys are vector inputs; serialized is a scalar or vector;
// ragged features as flat values plus row splits.
class ParseExampleV2Op : public ParseKernelBase {
 public:
  explicit ParseExampleV2Op(OpKernelConstruction* c) : ParseKernelBase(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_sparse", &num_sparse_));
    OP_REQUIRES_OK(c, c->GetAttr("sparse_types", &sparse_types_));
    OP_REQUIRES_OK(c, c->GetAttr("Tdense", &dense_types_));
    OP_REQUIRES_OK(c, c->GetAttr("ragged_value_types", &ragged_types_));
    OP_REQUIRES_OK(c, c->GetAttr("ragged_split_types", &ragged_split_types_));
    OP_REQUIRES_OK(c, CheckCount("sparse_types", sparse_types_.size(), num_sparse_, "num_sparse"));
    OP_REQUIRES_OK(c, CheckCount("ragged_split_types", ragged_split_types_.size(),
                                 static_cast<int64_t>(ragged_types_.size()), "len(ragged_value_types)"));
    OP_REQUIRES_OK(c, ReadDenseShapes(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView serialized = ctx->input(0), names = ctx->input(1);
    OP_REQUIRES(ctx, serialized.rank() <= 1,
                errors::InvalidArgument("Expected serialized to be a scalar or vector, got shape: ",
                                        serialized.ShapeString()));
    OP_REQUIRES(ctx, names.NumElements() == 0 || names.dims() == serialized.dims(),
                errors::InvalidArgument("Expected names have the same shape as serialized: name.shape=",
                                        names.ShapeString(), ", serialized.shape=", serialized.ShapeString()));
    const char* what[3] = {"sparse_keys", "dense_keys", "ragged_keys"};
    const int64_t want[3] = {num_sparse_, static_cast<int64_t>(dense_types_.size()),
                             static_cast<int64_t>(ragged_types_.size())};
    std::vector<std::string> keys[3];
    for (int k = 0; k < 3; ++k) {
      const TensorView t = ctx->input(2 + k);
      OP_REQUIRES(ctx, t.rank() == 1 || (t.rank() == 0 && want[k] == 1),
                  errors::InvalidArgument("Expected ", what[k], " to be a vector, got shape: ", t.ShapeString()));
      OP_REQUIRES(ctx, t.NumElements() == want[k],
                  errors::InvalidArgument("Expected len(", what[k], ") to be ", want[k], ", got ", t.NumElements()));
      for (int64_t i = 0; i < t.NumElements(); ++i) keys[k].emplace_back(StringAt(t, i));
    }
    ParseConfig config;
    OP_REQUIRES_OK(ctx, MakeConfig(ctx, keys[0], keys[1], keys[2], 5, &config));
    std::vector<std::string_view> in, name_list;
    StringsOf(serialized, &in);
    StringsOf(names, &name_list);
    ParseInto(ctx, std::move(config), serialized.rank() == 1, in, name_list);
  }

 private:
  int64_t num_sparse_ = 0;
};

// ParseSingleExample: keys are attrs; serialized is a scalar.
class ParseSingleExampleOp : public ParseKernelBase {
 public:
  explicit ParseSingleExampleOp(OpKernelConstruction* c) : ParseKernelBase(c) {
    int64_t num_sparse = 0;
    OP_REQUIRES_OK(c, c->GetAttr("num_sparse", &num_sparse));
    OP_REQUIRES_OK(c, c->GetAttr("sparse_keys", &sparse_keys_));
    OP_REQUIRES_OK(c, c->GetAttr("dense_keys", &dense_keys_));
    OP_REQUIRES_OK(c, c->GetAttr("sparse_types", &sparse_types_));
    OP_REQUIRES_OK(c, c->GetAttr("Tdense", &dense_types_));
    OP_REQUIRES_OK(c, CheckCount("sparse_keys", sparse_keys_.size(), num_sparse, "num_sparse"));
    OP_REQUIRES_OK(c, CheckCount("sparse_types", sparse_types_.size(), num_sparse, "num_sparse"));
    OP_REQUIRES_OK(c, CheckCount("dense_keys", dense_keys_.size(), static_cast<int64_t>(dense_types_.size()),
                                 "len(Tdense)"));
    OP_REQUIRES_OK(c, ReadDenseShapes(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView serialized = ctx->input(0);
    OP_REQUIRES(ctx, serialized.rank() == 0,
                errors::InvalidArgument("Expected serialized to be a scalar, got shape: ", serialized.ShapeString()));
    ParseConfig config;
    OP_REQUIRES_OK(ctx, MakeConfig(ctx, sparse_keys_, dense_keys_, {}, 1, &config));
    ParseInto(ctx, std::move(config), false, {StringAt(serialized, 0)}, {});
  }

 private:
  std::vector<std::string> sparse_keys_, dense_keys_;
};

REGISTER_KERNEL(Name("ParseExample").Device(DEVICE_CPU), ParseExampleOp);
REGISTER_KERNEL(Name("ParseExampleV2").Device(DEVICE_CPU), ParseExampleV2Op);
REGISTER_KERNEL(Name("ParseSingleExample").Device(DEVICE_CPU), ParseSingleExampleOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
