// Helpers of the array op tests (tests/ops/array_*_test.cc): one-op graphs
// over fed or constant inputs, random tensors of every dtype, and an
// element-by-element checker for data-movement ops whose naive reference
// says, for each output element, which input element it must equal.
#ifndef GRAPHRT_TESTS_OPS_ARRAY_TEST_UTIL_H_
#define GRAPHRT_TESTS_OPS_ARRAY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "op_test_util.h"

namespace graphrt {
namespace testing {
namespace array_test {

inline std::string DtEnum(DataType dt) {
  switch (dt) {
    case GR_FLOAT: return "DT_FLOAT";
    case GR_DOUBLE: return "DT_DOUBLE";
    case GR_INT32: return "DT_INT32";
    case GR_UINT8: return "DT_UINT8";
    case GR_INT16: return "DT_INT16";
    case GR_INT8: return "DT_INT8";
    case GR_STRING: return "DT_STRING";
    case GR_COMPLEX64: return "DT_COMPLEX64";
    case GR_INT64: return "DT_INT64";
    case GR_BOOL: return "DT_BOOL";
    case GR_BFLOAT16: return "DT_BFLOAT16";
    case GR_UINT16: return "DT_UINT16";
    case GR_COMPLEX128: return "DT_COMPLEX128";
    case GR_HALF: return "DT_HALF";
    case GR_UINT32: return "DT_UINT32";
    case GR_UINT64: return "DT_UINT64";
    default: return "DT_INVALID";
  }
}

inline size_t ElemSize(DataType dt) {
  switch (dt) {
    case GR_BOOL: case GR_INT8: case GR_UINT8: return 1;
    case GR_INT16: case GR_UINT16: case GR_BFLOAT16: case GR_HALF: return 2;
    case GR_FLOAT: case GR_INT32: case GR_UINT32: return 4;
    case GR_DOUBLE: case GR_INT64: case GR_UINT64: case GR_COMPLEX64: return 8;
    case GR_COMPLEX128: return 16;
    default: return 0;
  }
}

// Dtypes the data-movement kernels are checked on: every element size,
// bool and strings.
inline std::vector<DataType> MovementDtypes() {
  return {GR_FLOAT, GR_DOUBLE, GR_INT32, GR_INT64, GR_BOOL,      GR_INT8,
          GR_UINT8, GR_INT16,  GR_HALF,  GR_BFLOAT16, GR_COMPLEX128, GR_STRING};
}

inline Dims Unravel(int64_t flat, const Dims& dims) {
  Dims idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return idx;
}

inline int64_t Ravel(const Dims& idx, const Dims& dims) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + idx[d];
  return flat;
}

// A tensor of `dims` with random contents; strings are short random words.
// Distinct seeds give distinct tensors, so a misplaced element shows.
inline Tensor Random(DataType dt, const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t(dt, TensorShape(dims));
  const int64_t n = t.NumElements();
  if (dt == GR_STRING) {
    for (int64_t i = 0; i < n; ++i) {
      std::string s = "s" + std::to_string(rng() % 100000);
      if (rng() % 5 == 0) s += std::string(40, 'x');  // some heap-sized strings
      t.set_string(i, s);
    }
    return t;
  }
  unsigned char* p = static_cast<unsigned char*>(t.raw_data());
  const size_t es = ElemSize(dt);
  for (int64_t i = 0; i < n; ++i) {
    if (dt == GR_BOOL) {
      p[i] = static_cast<unsigned char>(rng() & 1);
    } else if (dt == GR_FLOAT) {
      t.data<float>()[i] = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 64.0f;
    } else if (dt == GR_DOUBLE) {
      t.data<double>()[i] = static_cast<double>(static_cast<int>(rng() % 200001) - 100000) / 128.0;
    } else {
      for (size_t b = 0; b < es; ++b) p[i * es + b] = static_cast<unsigned char>(rng());
      if (dt == GR_HALF || dt == GR_BFLOAT16) p[i * es + 1] &= 0x3f;  // finite, no NaN
    }
  }
  return t;
}

inline Tensor IntTensor(DataType dt, const Dims& dims, const std::vector<int64_t>& v) {
  Tensor t(dt, TensorShape(dims));
  EXPECT_EQ(t.NumElements(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == GR_INT32) t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    else if (dt == GR_INT64) t.data<int64_t>()[i] = v[i];
    else if (dt == GR_INT16) t.data<int16_t>()[i] = static_cast<int16_t>(v[i]);
    else if (dt == GR_INT8) t.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
    else if (dt == GR_UINT8) t.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
    else ADD_FAILURE() << "IntTensor: unsupported dtype";
  }
  return t;
}

inline Tensor Vec(const std::vector<int64_t>& v, DataType dt = GR_INT32) {
  return IntTensor(dt, {static_cast<int64_t>(v.size())}, v);
}

inline Tensor IntScalar(int64_t v, DataType dt = GR_INT32) { return IntTensor(dt, {}, {v}); }

// A string tensor of `dims` holding `v` (row-major); Str: a scalar.
inline Tensor Strings(const Dims& dims, const std::vector<std::string>& v) {
  Tensor t(GR_STRING, TensorShape(dims));
  EXPECT_EQ(t.NumElements(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.NumElements(); ++i)
    t.set_string(static_cast<int64_t>(i), v[i]);
  return t;
}
inline Tensor Str(const std::string& s) { return Strings({}, {s}); }

// Pad's and MirrorPad's paddings: a [rank, 2] matrix of before/after.
inline Tensor Paddings(const Dims& before, const Dims& after, DataType dt = GR_INT32) {
  std::vector<int64_t> v;
  for (size_t d = 0; d < before.size(); ++d) {
    v.push_back(before[d]);
    v.push_back(after[d]);
  }
  return IntTensor(dt, {static_cast<int64_t>(before.size()), 2}, v);
}

inline Tensor BoolTensor(const Dims& dims, const std::vector<bool>& v) {
  Tensor t(GR_BOOL, TensorShape(dims));
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

// Graph text of a Const node holding `t` (integer, bool, float or double).
inline std::string ConstOf(const std::string& name, const Tensor& t) {
  std::string field;
  std::vector<std::string> vals;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    switch (t.dtype()) {
      case GR_INT32: field = "int_val"; vals.push_back(std::to_string(t.data<int32_t>()[i])); break;
      case GR_INT16: field = "int_val"; vals.push_back(std::to_string(t.data<int16_t>()[i])); break;
      case GR_INT8: field = "int_val"; vals.push_back(std::to_string(t.data<int8_t>()[i])); break;
      case GR_UINT8: field = "int_val"; vals.push_back(std::to_string(t.data<uint8_t>()[i])); break;
      case GR_INT64: field = "int64_val"; vals.push_back(std::to_string(t.data<int64_t>()[i])); break;
      case GR_BOOL: field = "bool_val"; vals.push_back(t.data<bool>()[i] ? "true" : "false"); break;
      case GR_FLOAT: field = "float_val"; vals.push_back(FloatText(t.data<float>()[i])); break;
      case GR_DOUBLE: {
        std::ostringstream os;
        os.precision(17);
        os << t.data<double>()[i];
        field = "double_val";
        vals.push_back(os.str());
        break;
      }
      default: ADD_FAILURE() << "ConstOf: unsupported dtype"; break;
    }
  }
  return ConstNode(name, DtEnum(t.dtype()), t.shape().dim_sizes(), field, vals);
}

// One input of the op under test: fed through a Placeholder, or a Const
// (so that shape inference sees its value).
struct Arg {
  Tensor value;
  bool as_const = false;
};
inline Arg Fed(Tensor t) { return Arg{std::move(t), false}; }
inline Arg Konst(Tensor t) { return Arg{std::move(t), true}; }

// Graph: inputs in0..inK-1 and the node "op" of type `op` reading them in
// order; `attrs` is attr text. Feeds are appended to *feeds.
inline std::string OpGraph(const std::string& op, const std::vector<Arg>& args,
                           const std::string& attrs, Feeds* feeds) {
  std::string g;
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    names.push_back(name);
    if (args[i].as_const) {
      g += ConstOf(name, args[i].value);
    } else {
      g += PlaceholderNode(name, DtEnum(args[i].value.dtype()));
      feeds->emplace_back(name + ":0", args[i].value);
    }
  }
  return g + NodeText("op", op, names, attrs);
}

inline std::vector<std::string> OutputNames(int n) {
  std::vector<std::string> f;
  for (int i = 0; i < n; ++i) f.push_back("op:" + std::to_string(i));
  return f;
}

inline Status CreateAndRun(const std::string& pbtxt, const Feeds& feeds,
                           const std::vector<std::string>& fetches, int threads,
                           std::vector<Tensor>* out) {
  LoadStandardPlugins();
  proto::GraphDef g;
  GR_RETURN_IF_ERROR(ParseGraphDefText(pbtxt, &g));
  std::unique_ptr<Session> s;
  GR_RETURN_IF_ERROR(NewSession(OpTestOptions(threads), &s));
  GR_RETURN_IF_ERROR(s->Create(g));
  return s->Run(feeds, fetches, {}, out);
}

// Runs the op once (create + run) and returns the first error.
inline Status TryOp(const std::string& op, const std::vector<Arg>& args, const std::string& attrs,
                    int num_outputs, std::vector<Tensor>* out, int threads = 2) {
  Feeds feeds;
  const std::string g = OpGraph(op, args, attrs, &feeds);
  return CreateAndRun(g, feeds, OutputNames(num_outputs), threads, out);
}

// Runs the op and fails the test on error.
inline std::vector<Tensor> RunOp(const std::string& op, const std::vector<Arg>& args,
                                 const std::string& attrs, int num_outputs = 1, int threads = 2) {
  std::vector<Tensor> out;
  const Status s = TryOp(op, args, attrs, num_outputs, &out, threads);
  EXPECT_TRUE(s.ok()) << op << ": " << s;
  if (s.ok()) {
    EXPECT_EQ(out.size(), static_cast<size_t>(num_outputs));
  }
  return out;
}

inline std::string IntAttr(const std::string& k, int64_t v) {
  return "attr { key: \"" + k + "\" value { i: " + std::to_string(v) + " } } ";
}
inline std::string BoolAttr(const std::string& k, bool v) {
  return "attr { key: \"" + k + "\" value { b: " + (v ? "true" : "false") + " } } ";
}
inline std::string StrAttr(const std::string& k, const std::string& v) {
  return "attr { key: \"" + k + "\" value { s: \"" + v + "\" } } ";
}
inline std::string IntListAttr(const std::string& k, const std::vector<int64_t>& v) {
  std::string s = "attr { key: \"" + k + "\" value { list { ";
  for (int64_t x : v) s += "i: " + std::to_string(x) + " ";
  return s + "} } } ";
}
inline std::string TypeListAttr(const std::string& k, const std::vector<DataType>& v) {
  std::string s = "attr { key: \"" + k + "\" value { list { ";
  for (DataType x : v) s += "type: " + DtEnum(x) + " ";
  return s + "} } } ";
}
inline std::string TAttr(DataType dt, const std::string& key = "T") { return TypeAttr(key, DtEnum(dt)); }

// Where an output element comes from: (source tensor index, flat element
// index); source -1 means "no source" (the checker expects `fill`).
using Ref = std::pair<int, int64_t>;

inline bool SameElement(const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  if (a.dtype() == GR_STRING) return a.string_at(i) == b.string_at(j);
  const size_t es = ElemSize(a.dtype());
  return std::memcmp(static_cast<const char*>(a.raw_data()) + i * es,
                     static_cast<const char*>(b.raw_data()) + j * es, es) == 0;
}

inline std::string ElementText(const Tensor& t, int64_t i) {
  if (t.dtype() == GR_STRING) return "\"" + std::string(t.string_at(i)) + "\"";
  const size_t es = ElemSize(t.dtype());
  std::string s = "0x";
  const unsigned char* p = static_cast<const unsigned char*>(t.raw_data()) + i * es;
  static const char* hex = "0123456789abcdef";
  for (size_t b = es; b-- > 0;) {
    s += hex[p[b] >> 4];
    s += hex[p[b] & 15];
  }
  return s;
}

// Checks dtype, dims and every element of `out` against the reference.
inline void ExpectGathered(const Tensor& out, const Dims& want_dims,
                           const std::vector<const Tensor*>& srcs, const std::vector<Ref>& ref,
                           const Tensor* fill = nullptr, const std::string& what = "") {
  ASSERT_EQ(out.dtype(), srcs[0]->dtype()) << what;
  ASSERT_EQ(DimsOf(out), want_dims) << what;
  ASSERT_EQ(out.NumElements(), static_cast<int64_t>(ref.size())) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    const Tensor& src = ref[i].first < 0 ? *fill : *srcs[static_cast<size_t>(ref[i].first)];
    const int64_t j = ref[i].first < 0 ? 0 : ref[i].second;
    ASSERT_TRUE(SameElement(out, static_cast<int64_t>(i), src, j))
        << what << ": output element " << i << " is " << ElementText(out, static_cast<int64_t>(i))
        << ", want " << ElementText(src, j) << " (source " << ref[i].first << " element " << j
        << ")";
  }
}

}  // namespace array_test
}  // namespace testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_OPS_ARRAY_TEST_UTIL_H_
