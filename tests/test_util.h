// Helpers shared by the test suites.
#ifndef GRAPHRT_TESTS_TEST_UTIL_H_
#define GRAPHRT_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/tensor.h"

namespace graphrt {
namespace testing {

// Loads the standard plugins of the build tree once per process (fails the
// test on error).
void LoadStandardPlugins();

// Text GraphDef -> proto (fails the test on a parse error).
proto::GraphDef ParseGraph(const std::string& pbtxt);

// The session options of the op tests: `threads` intra/inter-op threads
// (0: the default) and the layout pass off, so an NCHW op runs on its NCHW
// kernel rather than as NHWC between Transposes (the pass has its own tests:
// graph_optimizer_test, fusion_test's Layout*).
SessionOptions OpTestOptions(int threads = 0);

// A DirectSession with OpTestOptions(threads) created on `graph`.
std::unique_ptr<Session> CreateSession(const proto::GraphDef& graph, int threads = 1);

// Runs a one-shot session; fails the test if Create or Run fails.
std::vector<Tensor> RunGraph(const std::string& pbtxt,
                             const std::vector<std::pair<std::string, Tensor>>& feeds,
                             const std::vector<std::string>& fetches);
// Same, returning the status instead of failing.
Status TryRunGraph(const std::string& pbtxt,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches, std::vector<Tensor>* out);

template <typename T>
Tensor MakeTensor(DataType dtype, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  Tensor t(dtype, TensorShape(dims));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.NumElements());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.NumElements(); ++i)
    t.data<T>()[i] = values[i];
  return t;
}

template <typename T>
std::vector<T> ToVector(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

// A fresh directory /tmp/<stem>_XXXXXX, removed when the test program ends
// ("/nonexistent" when it cannot be made).
std::string MakeTempDir(const std::string& stem);

// The folder of shared test data (TensorFlow's files in tf_testdata/):
// $GRAPHRT_SHARED_DIR when set, else the build's GRAPHRT_SHARED_DIR
// (../shared beside the source tree unless configured otherwise).
std::string SharedDir();

// Absolute path of SharedDir()/<rel>; "" when absent (tests then
// GTEST_SKIP, which CTest reports as skipped).
std::string SharedPath(const std::string& rel);

}  // namespace testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_TEST_UTIL_H_
