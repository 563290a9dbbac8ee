#include "test_util.h"

#include <boost/filesystem.hpp>
#include <oneapi/tbb/global_control.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"

namespace graphrt {
namespace testing {

namespace {

// Joins oneTBB's worker threads at exit, before LeakSanitizer's exit-time
// check (registered at start-up, so it runs after this): LSan's tracer
// crashes ("Tracer caught signal 11") when it scans a worker that is still
// exiting.
void JoinPoolWorkersAtExit() {
  static oneapi::tbb::task_scheduler_handle* handle = new oneapi::tbb::task_scheduler_handle(oneapi::tbb::attach{});
  std::atexit([] { oneapi::tbb::finalize(*handle, std::nothrow); });
}

}  // namespace

void LoadStandardPlugins() {
  static const bool joined = (JoinPoolWorkersAtExit(), true);
  (void)joined;
  static Status status = Runtime::Global().LoadPluginDirectory(GRAPHRT_PLUGIN_BUILD_DIR);
  ASSERT_TRUE(status.ok()) << status;
}

proto::GraphDef ParseGraph(const std::string& pbtxt) {
  proto::GraphDef g;
  Status s = ParseGraphDefText(pbtxt, &g);
  EXPECT_TRUE(s.ok()) << s;
  return g;
}

SessionOptions OpTestOptions(int threads) {
  SessionOptions opts;
  opts.config.set_intra_op_parallelism_threads(threads);
  opts.config.set_inter_op_parallelism_threads(threads);
  opts.config.mutable_graph_options()->mutable_rewrite_options()->set_layout_optimizer(proto::RewriterConfig::OFF);
  return opts;
}

std::unique_ptr<Session> CreateSession(const proto::GraphDef& graph, int threads) {
  LoadStandardPlugins();
  std::unique_ptr<Session> s;
  Status st = NewSession(OpTestOptions(threads), &s);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return nullptr;
  st = s->Create(graph);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

Status TryRunGraph(const std::string& pbtxt, const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches, std::vector<Tensor>* out) {
  LoadStandardPlugins();
  proto::GraphDef g;
  GR_RETURN_IF_ERROR(ParseGraphDefText(pbtxt, &g));
  std::unique_ptr<Session> s;
  GR_RETURN_IF_ERROR(NewSession(OpTestOptions(), &s));
  GR_RETURN_IF_ERROR(s->Create(g));
  return s->Run(feeds, fetches, {}, out);
}

std::vector<Tensor> RunGraph(const std::string& pbtxt, const std::vector<std::pair<std::string, Tensor>>& feeds,
                             const std::vector<std::string>& fetches) {
  std::vector<Tensor> out;
  Status s = TryRunGraph(pbtxt, feeds, fetches, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

std::string SharedDir() {
  const char* env = std::getenv("GRAPHRT_SHARED_DIR");
  return env != nullptr && env[0] != '\0' ? env : GRAPHRT_SHARED_DIR;
}

std::string SharedPath(const std::string& rel) {
  boost::system::error_code ec;
  boost::filesystem::path p = boost::filesystem::path(SharedDir()) / rel;
  if (!boost::filesystem::exists(p, ec)) return "";
  return boost::filesystem::canonical(p, ec).string();
}

// Directories made by MakeTempDir, removed when the program ends.
class TempDirs : public ::testing::Environment {
 public:
  static std::vector<std::string>& dirs() {
    static std::vector<std::string> d;
    return d;
  }
  void TearDown() override {
    for (const std::string& d : dirs()) std::filesystem::remove_all(d);
  }
};

std::string MakeTempDir(const std::string& stem) {
  static const bool registered = (::testing::AddGlobalTestEnvironment(new TempDirs), true);
  (void)registered;
  std::string tmpl = "/tmp/" + stem + "_XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "/nonexistent";
  TempDirs::dirs().push_back(tmpl);
  return tmpl;
}

}  // namespace testing
}  // namespace graphrt
