// See example_parser.h. Error texts follow TensorFlow's
// (example_proto_fast_parsing.cc), with the example's index added.
#include "parser/example_parser.h"

#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>

namespace graphrt {
namespace sdk {
namespace parsing {

namespace {

using example::Feature;

// The kind a feature holds, as a dtype; GR_INVALID when it holds none (an
// empty Feature, which counts as an empty list of any type, as in
// TensorFlow).
DataType KindOf(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kBytesList: return GR_STRING;
    case Feature::kFloatList: return GR_FLOAT;
    case Feature::kInt64List: return GR_INT64;
    default: return GR_INVALID;
  }
}

int64_t CountOf(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kBytesList: return f.bytes_list().value_size();
    case Feature::kFloatList: return f.float_list().value_size();
    case Feature::kInt64List: return f.int64_list().value_size();
    default: return 0;
  }
}

// The first bytes of a malformed input, printable.
std::string Escaped(std::string_view s, size_t limit = 64) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > limit) out += "...";
  return out;
}

// Writes `n` values of the feature `f` (dtype `dt`), starting at its value
// `from`, to sink elements [to, to + n).
void CopyFeature(const Feature& f, DataType dt, int64_t from, int64_t n, const ValueSink& sink,
                 int64_t to) {
  if (n <= 0) return;
  switch (dt) {
    case GR_FLOAT:
      std::memcpy(static_cast<float*>(sink.data) + to, f.float_list().value().data() + from,
                  static_cast<size_t>(n) * sizeof(float));
      break;
    case GR_INT64:
      std::memcpy(static_cast<int64_t*>(sink.data) + to, f.int64_list().value().data() + from,
                  static_cast<size_t>(n) * sizeof(int64_t));
      break;
    default:
      for (int64_t j = 0; j < n; ++j) {
        const std::string& v = f.bytes_list().value(static_cast<int>(from + j));
        sink.assign(sink.ctx, to + j, v.data(), v.size());
      }
  }
}

// Writes elements [from, from + n) of `v` to sink elements [to, to + n).
void CopyValues(const ConstValues& v, int64_t from, int64_t n, const ValueSink& sink, int64_t to) {
  if (n <= 0) return;
  switch (v.dtype) {
    case GR_FLOAT:
      std::memcpy(static_cast<float*>(sink.data) + to, static_cast<const float*>(v.data) + from,
                  static_cast<size_t>(n) * sizeof(float));
      break;
    case GR_INT64:
      std::memcpy(static_cast<int64_t*>(sink.data) + to, static_cast<const int64_t*>(v.data) + from,
                  static_cast<size_t>(n) * sizeof(int64_t));
      break;
    default:
      for (int64_t j = 0; j < n; ++j) {
        const GR_StringElem& e = static_cast<const GR_StringElem*>(v.data)[from + j];
        sink.assign(sink.ctx, to + j, e.data, e.size);
      }
  }
}

// Writes element 0 of `v` to sink elements [to, to + n).
void Pad(const ConstValues& v, int64_t n, const ValueSink& sink, int64_t to) {
  for (int64_t j = 0; j < n; ++j) {
    switch (v.dtype) {
      case GR_FLOAT: static_cast<float*>(sink.data)[to + j] = *static_cast<const float*>(v.data); break;
      case GR_INT64: static_cast<int64_t*>(sink.data)[to + j] = *static_cast<const int64_t*>(v.data); break;
      default: {
        const GR_StringElem& e = *static_cast<const GR_StringElem*>(v.data);
        sink.assign(sink.ctx, to + j, e.data, e.size);
      }
    }
  }
}

bool IsParsingType(DataType dt) { return dt == GR_FLOAT || dt == GR_INT64 || dt == GR_STRING; }

}  // namespace

const char* ParsingTypeName(DataType dtype) {
  switch (dtype) {
    case GR_FLOAT: return "float";
    case GR_INT64: return "int64";
    case GR_STRING: return "string";
    default: return "invalid";
  }
}

Status ExampleParser::Create(ParseConfig config, bool batched, ExampleParser* out) {
  out->dense_out_.assign(config.dense.size(), DenseOut());
  for (size_t d = 0; d < config.dense.size(); ++d) {
    const DenseSpec& spec = config.dense[d];
    DenseOut& o = out->dense_out_[d];
    if (!IsParsingType(spec.dtype)) {
      return errors::InvalidArgument("dense feature ", d, " ('", spec.key, "') has dtype ", spec.dtype,
                                     "; only float, int64 and string can be parsed");
    }
    if (spec.default_value.count > 0 && spec.default_value.dtype != spec.dtype) {
      return errors::InvalidArgument("dense_defaults[", d, "] has the wrong dtype for feature '", spec.key, "'");
    }
    o.variable_length = !spec.shape.empty() && spec.shape[0] == -1;
    const size_t first = o.variable_length ? 1 : 0;
    std::vector<int64_t> inner(spec.shape.begin() + static_cast<std::ptrdiff_t>(first), spec.shape.end());
    Status s = NumElementsOf(inner, &o.stride);
    if (!s.ok()) {
      return errors::InvalidArgument("dense_shapes[", d, "] = ", shape_fns::ShapeString(spec.shape),
                                     " is invalid: ", s.message());
    }
    if (o.variable_length) {
      if (spec.default_value.count != 1) {
        return errors::InvalidArgument(
            "dense_shapes[", d, "] is a variable length shape: ", shape_fns::ShapeString(spec.shape),
            ", therefore def_value[", d, "] must contain a single element (the padding element). But it has ",
            spec.default_value.count, " elements");
      }
    } else if (spec.default_value.count != 0 && spec.default_value.count != o.stride) {
      return errors::InvalidArgument("def_value[", d, "] has ", spec.default_value.count,
                                     " elements but dense_shapes[", d,
                                     "] == ", shape_fns::ShapeString(spec.shape), " (feature '", spec.key, "')");
    }
  }
  for (const auto* list : {&config.sparse, &config.ragged}) {
    for (size_t i = 0; i < list->size(); ++i) {
      if (!IsParsingType((*list)[i].dtype)) {
        return errors::InvalidArgument("feature '", (*list)[i].key, "' has dtype ", (*list)[i].dtype,
                                       "; only float, int64 and string can be parsed");
      }
    }
  }
  out->sparse_out_.assign(config.sparse.size(), VarOut());
  out->ragged_out_.assign(config.ragged.size(), VarOut());
  out->config_ = std::move(config);
  out->batched_ = batched;
  return Status();
}

std::string ExampleParser::ExampleName(int64_t e) const {
  return names_.empty() ? std::string("<unknown>") : std::string(names_[static_cast<size_t>(e)]);
}

Status ExampleParser::FeatureError(int64_t e, const std::string& key, const std::string& msg) const {
  return errors::InvalidArgument("Name: ", ExampleName(e), ", Key: ", key, ", Index: ", e, ".  ", msg);
}

Status ExampleParser::Lookup(int64_t e, const std::string& key, DataType dtype, const Feature** f,
                             int64_t* count) const {
  *f = nullptr;
  *count = 0;
  const example::Example& ex = examples_[static_cast<size_t>(e)];
  if (!ex.has_features()) return Status();
  const auto& map = ex.features().feature();
  auto it = map.find(key);
  if (it == map.end()) return Status();
  const DataType kind = KindOf(it->second);
  if (kind != GR_INVALID && kind != dtype) {
    return FeatureError(e, key, errors::StrCat("Data types don't match. Data type: ", ParsingTypeName(kind),
                                               " but expected type: ", ParsingTypeName(dtype)));
  }
  *f = &it->second;
  *count = CountOf(it->second);
  return Status();
}

Status ExampleParser::Parse(const std::vector<std::string_view>& serialized,
                            const std::vector<std::string_view>& names, const ParallelFor& parallel_for) {
  if (!names.empty() && names.size() != serialized.size()) {
    return errors::InvalidArgument("Expected len(names) == len(serialized), but got: ", names.size(), " vs. ",
                                   serialized.size());
  }
  if (!batched_ && serialized.size() != 1) {
    return errors::Internal("one example expected, got ", serialized.size());
  }
  names_ = names;
  const int64_t batch = static_cast<int64_t>(serialized.size());
  examples_.clear();
  examples_.resize(serialized.size());
  // protobuf parses defensively (truncation, bad tags, lengths past the
  // end all fail); it takes at most INT_MAX bytes. Each example is decoded
  // by one thread into its own slot.
  std::vector<char> parsed(serialized.size(), 0);
  uint64_t total_bytes = 0;
  for (const std::string_view& in : serialized) total_bytes += in.size();
  auto decode = [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const std::string_view in = serialized[static_cast<size_t>(e)];
      parsed[static_cast<size_t>(e)] =
          in.size() <= static_cast<size_t>(INT_MAX) &&
          examples_[static_cast<size_t>(e)].ParseFromArray(in.data(), static_cast<int>(in.size()));
    }
  };
  if (parallel_for && batch > 1) {
    // About 10 ns per serialized byte.
    parallel_for(batch, static_cast<int64_t>(std::min<uint64_t>(total_bytes / static_cast<uint64_t>(batch) * 10 + 100,
                                                                 uint64_t{1} << 40)),
                 decode);
  } else {
    decode(0, batch);
  }
  for (int64_t e = 0; e < batch; ++e) {
    if (!parsed[static_cast<size_t>(e)]) {
      return errors::InvalidArgument("Could not parse example input, value: '",
                                     Escaped(serialized[static_cast<size_t>(e)]), "' (Name: ", ExampleName(e),
                                     ", Index: ", e, ")");
    }
  }

  for (size_t d = 0; d < config_.dense.size(); ++d) {
    const DenseSpec& spec = config_.dense[d];
    DenseOut& o = dense_out_[d];
    o.features.assign(serialized.size(), nullptr);
    o.counts.assign(serialized.size(), 0);
    int64_t max_blocks = 0;
    for (int64_t e = 0; e < batch; ++e) {
      const Feature* f;
      int64_t n;
      GR_RETURN_IF_ERROR_SDK(Lookup(e, spec.key, spec.dtype, &f, &n));
      if (f == nullptr && !o.variable_length && spec.default_value.count == 0) {
        return FeatureError(e, spec.key,
                            errors::StrCat("Feature: ", spec.key, " (data type: ", ParsingTypeName(spec.dtype),
                                           ") is required but could not be found."));
      }
      if (f != nullptr && !o.variable_length && n != o.stride) {
        return FeatureError(e, spec.key,
                            errors::StrCat("Number of ", spec.dtype == GR_STRING ? "bytes" : ParsingTypeName(spec.dtype),
                                           " values != expected.  Values size: ", n,
                                           " but output shape: ", shape_fns::ShapeString(spec.shape)));
      }
      if (f != nullptr && o.variable_length) {
        // A zero-element block (a 0 in dims[1:]) admits only empty lists.
        const bool ok = o.stride == 0 ? n == 0 : n % o.stride == 0;
        if (!ok) {
          return FeatureError(
              e, spec.key,
              errors::StrCat("Number of ", spec.dtype == GR_STRING ? "bytes" : ParsingTypeName(spec.dtype),
                             " values is not a multiple of stride length. Saw ", n,
                             " values but output shape is: ", shape_fns::ShapeString(spec.shape)));
        }
        if (o.stride > 0) max_blocks = std::max(max_blocks, n / o.stride);
      }
      o.features[static_cast<size_t>(e)] = f;
      o.counts[static_cast<size_t>(e)] = n;
    }
    o.dims.clear();
    if (batched_) o.dims.push_back(batch);
    if (o.variable_length) {
      o.dims.push_back(max_blocks);
      o.dims.insert(o.dims.end(), spec.shape.begin() + 1, spec.shape.end());
    } else {
      o.dims.insert(o.dims.end(), spec.shape.begin(), spec.shape.end());
    }
    int64_t unused;
    Status s = NumElementsOf(o.dims, &unused);
    if (!s.ok()) return errors::InvalidArgument("dense feature '", spec.key, "': output ", s.message());
  }

  for (auto [specs, outs] : {std::make_pair(&config_.sparse, &sparse_out_), std::make_pair(&config_.ragged, &ragged_out_)}) {
    for (size_t i = 0; i < specs->size(); ++i) {
      const VarSpec& spec = (*specs)[i];
      VarOut& o = (*outs)[i];
      o.features.assign(serialized.size(), nullptr);
      o.counts.assign(serialized.size(), 0);
      o.total = 0;
      o.max_count = 0;
      for (int64_t e = 0; e < batch; ++e) {
        const Feature* f;
        int64_t n;
        GR_RETURN_IF_ERROR_SDK(Lookup(e, spec.key, spec.dtype, &f, &n));
        o.features[static_cast<size_t>(e)] = f;
        o.counts[static_cast<size_t>(e)] = n;
        // Counts are bounded by the inputs' bytes, so the sum cannot
        // overflow; the size rule still applies to the [total, 2] indices.
        o.total += n;
        o.max_count = std::max(o.max_count, n);
      }
      int64_t unused;
      const int64_t dims[2] = {o.total, 2};
      Status s = NumElementsOf(dims, 2, &unused);
      if (!s.ok()) return errors::InvalidArgument("feature '", spec.key, "': ", s.message());
    }
  }
  return Status();
}

std::vector<int64_t> ExampleParser::sparse_dense_shape(int i) const {
  if (batched_) return {num_examples(), sparse_out_[i].max_count};
  return {sparse_out_[i].max_count};
}

void ExampleParser::FillDense(int i, const ValueSink& sink) const {
  const DenseSpec& spec = config_.dense[i];
  const DenseOut& o = dense_out_[i];
  const int64_t batch = num_examples();
  // Elements per example in the output.
  const int64_t per_example = o.variable_length ? o.dims[batched_ ? 1 : 0] * o.stride : o.stride;
  for (int64_t e = 0; e < batch; ++e) {
    const Feature* f = o.features[static_cast<size_t>(e)];
    const int64_t n = o.counts[static_cast<size_t>(e)];
    const int64_t base = e * per_example;
    if (o.variable_length) {
      if (f != nullptr) CopyFeature(*f, spec.dtype, 0, n, sink, base);
      const int64_t filled = f != nullptr ? n : 0;
      Pad(spec.default_value, per_example - filled, sink, base + filled);
    } else if (f != nullptr) {
      CopyFeature(*f, spec.dtype, 0, n, sink, base);
    } else {
      CopyValues(spec.default_value, 0, o.stride, sink, base);
    }
  }
}

void ExampleParser::FillSparse(int i, int64_t* indices, const ValueSink& sink, int64_t* dense_shape) const {
  const VarSpec& spec = config_.sparse[i];
  const VarOut& o = sparse_out_[i];
  int64_t k = 0;
  for (int64_t e = 0; e < num_examples(); ++e) {
    const Feature* f = o.features[static_cast<size_t>(e)];
    const int64_t n = o.counts[static_cast<size_t>(e)];
    if (f == nullptr || n == 0) continue;
    CopyFeature(*f, spec.dtype, 0, n, sink, k);
    for (int64_t j = 0; j < n; ++j, ++k) {
      if (batched_) {
        indices[2 * k] = e;
        indices[2 * k + 1] = j;
      } else {
        indices[k] = j;
      }
    }
  }
  const std::vector<int64_t> shape = sparse_dense_shape(i);
  std::copy(shape.begin(), shape.end(), dense_shape);
}

void ExampleParser::FillRagged(int i, const ValueSink& sink, int64_t* row_splits) const {
  const VarSpec& spec = config_.ragged[i];
  const VarOut& o = ragged_out_[i];
  row_splits[0] = 0;
  int64_t k = 0;
  for (int64_t e = 0; e < num_examples(); ++e) {
    const Feature* f = o.features[static_cast<size_t>(e)];
    const int64_t n = o.counts[static_cast<size_t>(e)];
    if (f != nullptr) CopyFeature(*f, spec.dtype, 0, n, sink, k);
    k += n;
    row_splits[e + 1] = k;
  }
}

}  // namespace parsing
}  // namespace sdk
}  // namespace graphrt
