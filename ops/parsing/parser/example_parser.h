// Parsing serialized tf.Example protos into the outputs of ParseExample,
// ParseExampleV2 and ParseSingleExample (TensorFlow's semantics), below the
// plugin ABI so that it can be tested directly (tests/ops/parsing_test.cc).
//
// Two phases, so that every large buffer is an output the caller allocates
// through the session's budgeted allocator:
//   1. Parse(): parses each Example, checks every requested feature's type
//      and size, and computes each output's shape.
//   2. Fill*(): writes the values into caller-provided buffers.
#ifndef GRAPHRT_OPS_PARSING_PARSER_EXAMPLE_PARSER_H_
#define GRAPHRT_OPS_PARSING_PARSER_EXAMPLE_PARSER_H_

#include <graphrt/sdk/sdk.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/example/example.pb.h"

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace parsing {

// A typed run of values owned elsewhere: float / int64_t, or GR_StringElem
// for GR_STRING.
struct ConstValues {
  DataType dtype = GR_FLOAT;
  const void* data = nullptr;
  int64_t count = 0;
};

// Where Fill*() writes values: `data` for float / int64 outputs; for
// strings, assign(ctx, flat index, bytes, size).
struct ValueSink {
  void* data = nullptr;
  void (*assign)(void* ctx, int64_t index, const char* bytes, uint64_t size) = nullptr;
  void* ctx = nullptr;
};

struct DenseSpec {
  std::string key;
  DataType dtype = GR_FLOAT;
  // dense_shapes[i]: dims >= 0, except that dims[0] may be -1 (variable
  // length: each example holds k blocks of dims[1:], padded to the batch's
  // largest k with default_value's one element).
  std::vector<int64_t> shape;
  // Fixed length: empty (the feature is required) or the feature's
  // elements. Variable length: exactly one element, the padding.
  ConstValues default_value;
};

struct VarSpec {  // a sparse or ragged feature
  std::string key;
  DataType dtype = GR_FLOAT;
};

struct ParseConfig {
  std::vector<DenseSpec> dense;
  std::vector<VarSpec> sparse;
  std::vector<VarSpec> ragged;
};

// Checks a config whose specs are complete (dense shapes and defaults) and
// precomputes what Parse needs; errors name the feature by index and key.
class ExampleParser {
 public:
  // `batched`: serialized is a vector (outputs get a leading batch dim) or a
  // scalar (ParseSingleExample, ParseExampleV2 on a scalar).
  static Status Create(ParseConfig config, bool batched, ExampleParser* out);

  // Runs fn(begin, end) over [0, total) units, possibly on several threads
  // (the kernel passes the session's pool); `cost` is rough ns per unit.
  using ParallelFor =
      std::function<void(int64_t total, int64_t cost, const std::function<void(int64_t, int64_t)>& fn)>;

  // Phase 1. `names` is empty or has one name per example (used only in
  // error messages, as in TensorFlow). The examples are decoded through
  // `parallel_for` when given; errors are reported for the first bad one.
  Status Parse(const std::vector<std::string_view>& serialized, const std::vector<std::string_view>& names,
               const ParallelFor& parallel_for = nullptr);

  // Output shapes after Parse.
  const std::vector<int64_t>& dense_shape(int i) const { return dense_out_[i].dims; }
  int64_t sparse_count(int i) const { return sparse_out_[i].total; }
  std::vector<int64_t> sparse_dense_shape(int i) const;
  int sparse_index_rank() const { return batched_ ? 2 : 1; }
  int64_t ragged_count(int i) const { return ragged_out_[i].total; }
  int64_t num_examples() const { return static_cast<int64_t>(examples_.size()); }

  // Phase 2: each writes exactly the number of elements its shape says.
  void FillDense(int i, const ValueSink& values) const;
  void FillSparse(int i, int64_t* indices, const ValueSink& values, int64_t* dense_shape) const;
  // row_splits has num_examples() + 1 entries (2 when not batched).
  void FillRagged(int i, const ValueSink& values, int64_t* row_splits) const;

 private:
  struct DenseOut {
    int64_t stride = 0;  // elements per example (fixed) or per block (variable length)
    bool variable_length = false;
    std::vector<int64_t> dims;
    // Per example: its feature (nullptr when missing) and element count.
    std::vector<const example::Feature*> features;
    std::vector<int64_t> counts;
  };
  struct VarOut {
    std::vector<const example::Feature*> features;
    std::vector<int64_t> counts;
    int64_t total = 0;
    int64_t max_count = 0;
  };

  std::string ExampleName(int64_t e) const;
  Status FeatureError(int64_t e, const std::string& key, const std::string& msg) const;
  Status Lookup(int64_t e, const std::string& key, DataType dtype, const example::Feature** f,
                int64_t* count) const;

  ParseConfig config_;
  bool batched_ = true;
  std::vector<example::Example> examples_;
  std::vector<std::string_view> names_;
  std::vector<DenseOut> dense_out_;
  std::vector<VarOut> sparse_out_, ragged_out_;
};

// TensorFlow's name of a parsing dtype ("float", "int64", "string").
const char* ParsingTypeName(DataType dtype);

}  // namespace parsing
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_PARSING_PARSER_EXAMPLE_PARSER_H_
