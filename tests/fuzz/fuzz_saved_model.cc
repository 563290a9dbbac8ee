// libFuzzer harness: bytes -> saved_model.pb -> LoadSavedModel -> every
// signature run.
//
// Input: a binary SavedModel proto. It is written as <tmp>/saved_model.pb
// (the loader reads files) and loaded with the tags of its first
// MetaGraphDef (so mutations reach past tag matching); there is no
// variables/ directory (the checkpoint reader has its own harness), so
// graphs with a saver_def fail their restore cleanly. Then each signature
// runs with no inputs (defaults where the signature has them). A failing
// Status is fine; a crash, sanitizer report, escaped exception, leak, hang
// or an allocation over the limit is not.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "graphrt/client/saved_model.h"
#include "graphrt/core/runtime.h"
#include "graphrt/proto/saved_model.pb.h"

namespace {

constexpr int64_t kSessionMemoryLimit = int64_t{256} << 20;
std::string g_dir;  // this process's scratch export directory

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphrt::Status s = graphrt::Runtime::Global().LoadDefaultPlugins();
  if (!s.ok()) {
    std::fprintf(stderr, "fuzz_saved_model: loading the standard plugins failed: %s\n", s.ToString().c_str());
    std::abort();
  }
  char tmpl[] = "/tmp/fuzz_saved_model_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  g_dir = tmpl;
  std::atexit([] {
    std::remove((g_dir + "/saved_model.pb").c_str());
    rmdir(g_dir.c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphrt::proto::SavedModel model;
  // A cheap filter: the loader parses the file itself.
  if (!model.ParseFromArray(data, static_cast<int>(size)) || model.meta_graphs_size() == 0) return 0;
  const auto& tag_list = model.meta_graphs(0).meta_info_def().tags();
  const std::set<std::string> tags(tag_list.begin(), tag_list.end());
  {
    std::ofstream f(g_dir + "/saved_model.pb", std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!f) std::abort();
  }
  graphrt::SessionOptions options;
  options.config.set_intra_op_parallelism_threads(1);
  options.config.set_inter_op_parallelism_threads(1);
  options.config.mutable_graphrt_options()->set_session_memory_limit_bytes(kSessionMemoryLimit);
  options.config.set_operation_timeout_in_ms(1000);  // a mutated loop may never end
  graphrt::SavedModelBundle bundle;
  if (!graphrt::LoadSavedModel(options, g_dir, tags, &bundle).ok()) return 0;
  for (const auto& [key, signature] : bundle.meta_graph_def.signature_def()) {
    std::vector<graphrt::Tensor> outputs;
    (void)bundle.RunSignature(key, {}, {}, &outputs);
    for (const graphrt::Tensor& t : outputs) (void)t.DebugString(4);
  }
  (void)bundle.session->Close();
  return 0;
}
