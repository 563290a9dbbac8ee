// Helpers for the op test suites (tests/ops/*_test.cc): graph text
// builders, one-shot runs, and the naive references several families share
// (numpy broadcasting, random values, value comparison).
#ifndef GRAPHRT_TESTS_OP_TEST_UTIL_H_
#define GRAPHRT_TESTS_OP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "test_util.h"

namespace graphrt {
namespace testing {

using Dims = std::vector<int64_t>;
using Feeds = std::vector<std::pair<std::string, Tensor>>;

// ------------------------------------------------------------ dtype maps

template <typename T>
struct Dt;
template <>
struct Dt<float> {
  static constexpr DataType value = GR_FLOAT;
  static constexpr const char* name = "DT_FLOAT";
};
template <>
struct Dt<double> {
  static constexpr DataType value = GR_DOUBLE;
  static constexpr const char* name = "DT_DOUBLE";
};
template <>
struct Dt<int32_t> {
  static constexpr DataType value = GR_INT32;
  static constexpr const char* name = "DT_INT32";
};
template <>
struct Dt<int64_t> {
  static constexpr DataType value = GR_INT64;
  static constexpr const char* name = "DT_INT64";
};

// ------------------------------------------------------- graph building

inline std::string TypeAttr(const std::string& key, const std::string& dt_enum) {
  return "attr { key: \"" + key + "\" value { type: " + dt_enum + " } } ";
}

inline std::string NodeText(const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs, const std::string& attrs) {
  std::string s = "node { name: \"" + name + "\" op: \"" + op + "\" ";
  for (const auto& in : inputs) s += "input: \"" + in + "\" ";
  return s + attrs + "}\n";
}

inline std::string PlaceholderNode(const std::string& name, const std::string& dt_enum) {
  return NodeText(name, "Placeholder", {}, TypeAttr("dtype", dt_enum));
}

inline std::string ShapeProto(const Dims& dims) {
  std::string s = "{ ";
  for (int64_t d : dims) s += "dim { size: " + std::to_string(d) + " } ";
  return s + "}";
}

// A Const node whose values are given as text for the `<kind>_val` field.
inline std::string ConstNode(const std::string& name, const std::string& dt_enum, const Dims& dims,
                      const std::string& val_field, const std::vector<std::string>& values) {
  std::string t = "tensor { dtype: " + dt_enum + " tensor_shape " + ShapeProto(dims) + " ";
  for (const auto& v : values) t += val_field + ": " + v + " ";
  t += "}";
  return NodeText(name, "Const", {},
                  TypeAttr("dtype", dt_enum) + "attr { key: \"value\" value { " + t + " } } ");
}

inline std::string ConstInt32(const std::string& name, const std::vector<int32_t>& values) {
  std::vector<std::string> v;
  for (int32_t x : values) v.push_back(std::to_string(x));
  return ConstNode(name, "DT_INT32", {static_cast<int64_t>(values.size())}, "int_val", v);
}

inline std::string FloatText(float f) {
  std::ostringstream os;
  os.precision(9);
  os << f;
  return os.str();
}

inline std::string ConstFloat(const std::string& name, const Dims& dims,
                       const std::vector<float>& values) {
  std::vector<std::string> v;
  for (float x : values) v.push_back(FloatText(x));
  return ConstNode(name, "DT_FLOAT", dims, "float_val", v);
}

// --------------------------------------------------------------- running

// Creates a session with `threads` threads (2 by default: the parallel
// paths of big kernels run), runs once, and fails the test on error.
inline std::vector<Tensor> RunOps(const std::string& pbtxt, const Feeds& feeds,
                           const std::vector<std::string>& fetches, int threads = 2) {
  std::vector<Tensor> out;
  std::unique_ptr<Session> s = CreateSession(testing::ParseGraph(pbtxt), threads);
  if (!s) {
    ADD_FAILURE() << "no session";
    return out;
  }
  Status st = s->Run(feeds, fetches, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

// Runs `fetch` with a software trace; `ops` gets the op type of each node
// that ran, by node name (after the optimizer's rewrites). Returns the
// fetched tensor, or an empty one on error.
inline Tensor RunTraced(Session* s, const Feeds& feeds, const std::string& fetch,
                        std::map<std::string, std::string>* ops, proto::RunMetadata* md_out = nullptr) {
  proto::RunOptions ro;
  ro.set_trace_level(proto::RunOptions::SOFTWARE_TRACE);
  proto::RunMetadata md;
  std::vector<Tensor> out;
  Status st = s->Run(ro, feeds, {fetch}, {}, &out, &md);
  EXPECT_TRUE(st.ok()) << st;
  ops->clear();
  for (const auto& dev : md.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats()) {
      const std::string& label = ns.timeline_label();  // "name = Op"
      (*ops)[ns.node_name()] = label.substr(label.find(" = ") + 3);
    }
  if (md_out) *md_out = md;
  return out.empty() ? Tensor() : out[0];
}

// The address of output 0 of each node in a traced Run
// (AllocationDescription.ptr), by node name.
inline std::map<std::string, uint64_t> TracedOutputPtrs(const proto::RunMetadata& md) {
  std::map<std::string, uint64_t> ptrs;
  for (const auto& dev : md.step_stats().dev_stats())
    for (const auto& ns : dev.node_stats())
      for (const auto& o : ns.output())
        if (o.slot() == 0) ptrs[ns.node_name()] = o.tensor_description().allocation_description().ptr();
  return ptrs;
}

// Create + Run, returning the first error.
inline Status TryRun(const std::string& pbtxt, const Feeds& feeds,
              const std::vector<std::string>& fetches) {
  std::vector<Tensor> out;
  return TryRunGraph(pbtxt, feeds, fetches, &out);
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

#define EXPECT_ERROR(STATUS, CODE, ...)                                   \
  do {                                                                    \
    const ::graphrt::Status _st = (STATUS);                               \
    EXPECT_EQ(_st.code(), (CODE)) << _st;                                 \
    for (const std::string& _sub : std::vector<std::string>{__VA_ARGS__}) \
      EXPECT_TRUE(Contains(_st.message(), _sub))                          \
          << "missing '" << _sub << "' in: " << _st.message();            \
  } while (0)

// ------------------------------------------------------------ references

inline int64_t NumElements(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

inline std::vector<int64_t> DimsOf(const Tensor& t) { return t.shape().dim_sizes(); }

// Numpy broadcasting, written out independently of the kernels.
inline Dims RefBroadcastShape(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Flat index into a tensor of `dims` for the output multi-index `idx`
// (right-aligned; broadcast dims read index 0).
inline int64_t RefSourceIndex(const Dims& dims, const Dims& idx) {
  int64_t flat = 0;
  const size_t off = idx.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t k = dims[i] == 1 ? 0 : idx[off + i];
    flat = flat * dims[i] + k;
  }
  return flat;
}

template <typename T, typename F>
std::vector<T> RefBinary(const std::vector<T>& x, const Dims& xd, const std::vector<T>& y,
                         const Dims& yd, F f, Dims* out_dims) {
  *out_dims = RefBroadcastShape(xd, yd);
  const int64_t n = NumElements(*out_dims);
  std::vector<T> out(static_cast<size_t>(n));
  Dims idx(out_dims->size());
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (size_t d = out_dims->size(); d-- > 0;) {
      idx[d] = rem % (*out_dims)[d];
      rem /= (*out_dims)[d];
    }
    out[i] = f(x[RefSourceIndex(xd, idx)], y[RefSourceIndex(yd, idx)]);
  }
  return out;
}

// `n` floats uniform in [lo, hi), from a generator seeded with `seed`.
inline std::vector<float> UniformFloats(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

// Float tensors of one shape, equal within rel * max(1, |want|) per element.
inline void ExpectCloseFloats(const Tensor& got, const Tensor& want, double rel, const std::string& what = "") {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const double w = want.data<float>()[i];
    ASSERT_NEAR(got.data<float>()[i], w, rel * std::max(1.0, std::fabs(w))) << what << " at " << i;
  }
}

template <typename T>
std::vector<T> RandomValues(int64_t n, std::mt19937* rng, bool nonzero_denominator = false) {
  std::vector<T> v(static_cast<size_t>(n));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(-10.0, 10.0);
    std::uniform_real_distribution<double> mag(0.5, 4.0);
    for (auto& x : v) {
      if (nonzero_denominator) {
        x = static_cast<T>(dist(*rng) < 0 ? -mag(*rng) : mag(*rng));
      } else {
        x = static_cast<T>(dist(*rng));
      }
    }
  } else {
    std::uniform_int_distribution<int> dist(-100, 100);
    for (auto& x : v) x = static_cast<T>(dist(*rng));
  }
  return v;
}

template <typename T>
void ExpectValuesEq(const Tensor& got, const std::vector<T>& want, double rel_tol = 0) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const T g = got.data<T>()[i];
    if constexpr (std::is_floating_point_v<T>) {
      const double tol = rel_tol * std::max(1.0, std::fabs(static_cast<double>(want[i])));
      ASSERT_NEAR(g, want[i], tol) << "at flat index " << i;
    } else {
      ASSERT_EQ(g, want[i]) << "at flat index " << i;
    }
  }
}

}  // namespace testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_OP_TEST_UTIL_H_
