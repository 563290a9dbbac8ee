// Helpers of the client library's tests (SavedModel, Saver).
#ifndef GRAPHRT_TESTS_CLIENT_CLIENT_TEST_UTIL_H_
#define GRAPHRT_TESTS_CLIENT_CLIENT_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "graphrt/client/meta_graph.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace testing {

// The ops of `ops` that no loaded plugin defines, comma-separated ("" when
// all are there).
inline std::string MissingOps(const std::vector<std::string>& ops) {
  LoadStandardPlugins();
  std::string missing;
  for (const std::string& op : ops)
    if (Runtime::Global().ops().LookUp(op) == nullptr) missing += (missing.empty() ? "" : ", ") + op;
  return missing;
}

// The op types of a SavedModel directory's or .meta file's graphs that are
// not registered ("" when all are, or when the file cannot be read: the test
// then reports that itself), plus those of `extra` (ops the test runs that
// the graph may not name).
inline std::string MissingModelOps(const std::string& path, const std::vector<std::string>& extra = {}) {
  std::vector<proto::GraphDef> graphs;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".meta") == 0) {
    proto::MetaGraphDef meta;
    if (ReadMetaGraphDefFromFile(path, &meta).ok()) graphs.push_back(meta.graph_def());
  } else {
    proto::SavedModel sm;
    if (ReadSavedModelFromDirectory(path, &sm).ok())
      for (const auto& m : sm.meta_graphs()) graphs.push_back(m.graph_def());
  }
  std::vector<std::string> ops = extra;
  for (const auto& g : graphs)
    for (const auto& n : g.node())
      if (std::find(ops.begin(), ops.end(), n.op()) == ops.end()) ops.push_back(n.op());
  return MissingOps(ops);
}

#define GRAPHRT_REQUIRE_MODEL_OPS(path, ...)                                                  \
  do {                                                                                        \
    const std::string _missing = ::graphrt::testing::MissingModelOps(path, {__VA_ARGS__});    \
    if (!_missing.empty()) GTEST_FAIL() << "ops not registered: " << _missing;                \
  } while (0)

// Fails a test whose model needs ops that are not registered (a plugin that
// stopped building or loading), naming them.
#define GRAPHRT_REQUIRE_OPS(...)                                                        \
  do {                                                                                  \
    const std::string _missing = ::graphrt::testing::MissingOps({__VA_ARGS__});         \
    if (!_missing.empty()) GTEST_FAIL() << "ops not registered: " << _missing;          \
  } while (0)

// ../shared/tf_testdata/<rel>; skips the test when the data is absent.
#define GRAPHRT_TESTDATA(var, rel)                                              \
  const std::string var = ::graphrt::testing::SharedPath("tf_testdata/" rel);   \
  if (var.empty()) GTEST_SKIP() << "tf_testdata/" rel " not found"

// A fresh directory under the test temp dir, removed at scope exit.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string tmpl = ::testing::TempDir() + "/graphrt_client_XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~ScopedTempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

template <typename T>
Tensor Scalar(DataType dtype, T v) {
  return Tensor::Scalar(dtype, v);
}

}  // namespace testing
}  // namespace graphrt

#endif  // GRAPHRT_TESTS_CLIENT_CLIENT_TEST_UTIL_H_
