// Helpers shared by the nn op suites (tests/ops/nn_*_test.cc): one-node
// graphs fed from placeholders, attr text, tensor <-> double vectors.
#ifndef GRAPHRT_TESTS_OPS_NN_TEST_UTIL_H_
#define GRAPHRT_TESTS_OPS_NN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "op_test_util.h"

namespace graphrt {
namespace nn_testing {

using ::graphrt::testing::Dims;
using ::graphrt::testing::Feeds;

inline std::string DtName(DataType dt) {
  switch (dt) {
    case GR_FLOAT: return "DT_FLOAT";
    case GR_DOUBLE: return "DT_DOUBLE";
    case GR_INT32: return "DT_INT32";
    case GR_INT64: return "DT_INT64";
    default: return "DT_INVALID";
  }
}

inline std::string StrAttr(const std::string& key, const std::string& v) {
  return "attr { key: \"" + key + "\" value { s: \"" + v + "\" } } ";
}
inline std::string IntAttr(const std::string& key, int64_t v) {
  return "attr { key: \"" + key + "\" value { i: " + std::to_string(v) + " } } ";
}
inline std::string FloatAttr(const std::string& key, float v) {
  return "attr { key: \"" + key + "\" value { f: " + ::graphrt::testing::FloatText(v) + " } } ";
}
inline std::string BoolAttr(const std::string& key, bool v) {
  return "attr { key: \"" + key + "\" value { b: " + (v ? "true" : "false") + " } } ";
}
inline std::string IntListAttr(const std::string& key, const std::vector<int64_t>& v) {
  std::string s = "attr { key: \"" + key + "\" value { list { ";
  for (int64_t x : v) s += "i: " + std::to_string(x) + " ";
  return s + "} } } ";
}

// A graph of placeholders in0, in1, ... (dtypes of `inputs`) feeding one
// node `name` of `op` with extra attr text.
inline std::string OneNodeGraph(const std::string& op, const std::vector<DataType>& inputs,
                                const std::string& attrs, const std::string& name = "n") {
  std::string g;
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back("in" + std::to_string(i));
    g += ::graphrt::testing::PlaceholderNode(names.back(), DtName(inputs[i]));
  }
  return g + ::graphrt::testing::NodeText(name, op, names, attrs);
}

inline Feeds FeedsFor(const std::vector<Tensor>& inputs) {
  Feeds f;
  for (size_t i = 0; i < inputs.size(); ++i) f.push_back({"in" + std::to_string(i) + ":0", inputs[i]});
  return f;
}

inline std::vector<std::string> Fetches(int outputs, const std::string& name = "n") {
  std::vector<std::string> f;
  for (int i = 0; i < outputs; ++i) f.push_back(name + ":" + std::to_string(i));
  return f;
}

// Runs `op` once on `inputs` and returns its first `outputs` outputs.
inline std::vector<Tensor> RunNode(const std::string& op, const std::vector<Tensor>& inputs,
                                   const std::string& attrs, int outputs = 1, int threads = 2) {
  std::vector<DataType> dts;
  for (const Tensor& t : inputs) dts.push_back(t.dtype());
  return ::graphrt::testing::RunOps(OneNodeGraph(op, dts, attrs), FeedsFor(inputs), Fetches(outputs),
                                    threads);
}

// The first error of running `op` (node name `name`) on `inputs`.
inline Status TryNode(const std::string& op, const std::vector<Tensor>& inputs,
                      const std::string& attrs, const std::string& name = "n", int outputs = 1) {
  std::vector<DataType> dts;
  for (const Tensor& t : inputs) dts.push_back(t.dtype());
  return ::graphrt::testing::TryRun(OneNodeGraph(op, dts, attrs, name), FeedsFor(inputs),
                                    Fetches(outputs, name));
}

template <typename T>
Tensor MakeT(const Dims& d, const std::vector<double>& v) {
  std::vector<T> w(v.begin(), v.end());
  return ::graphrt::testing::MakeTensor<T>(::graphrt::testing::Dt<T>::value, d, w);
}

template <typename T>
std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.push_back(static_cast<double>(t.data<T>()[i]));
  return v;
}

// Uniform values in [lo, hi).
inline std::vector<double> Uniform(int64_t n, double lo, double hi, std::mt19937* rng) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(*rng);
  return v;
}

// |got - want| <= atol + rtol * |want| everywhere; reports the first miss.
template <typename T>
void ExpectClose(const Tensor& got, const std::vector<double>& want, double rtol, double atol = 0) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got.data<T>()[i]);
    const double tol = atol + rtol * std::fabs(want[i]);
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(g)) << "at flat index " << i << ": got " << g << ", want NaN";
      continue;
    }
    ASSERT_NEAR(g, want[i], tol) << "at flat index " << i;
  }
}

// Tolerances per dtype for values computed in T.
template <typename T>
constexpr double RelTol() {
  return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

}  // namespace nn_testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_OPS_NN_TEST_UTIL_H_
