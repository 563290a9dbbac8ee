// graphrt_bench_checkpoint: saving and restoring a checkpoint of 100 float
// variables (1 GiB in all; GRAPHRT_CKPT_BENCH_MB changes the total) against
// `dd` writing as many bytes with fsync, in the same run and directory
// (GRAPHRT_CKPT_BENCH_DIR, default /tmp). Saving fsyncs like dd's
// conv=fsync; restoring reads what was just written, so it measures the warm
// page cache plus CRC32C, not the disk.
//
//   BM_DdFsync          dd if=/dev/zero bs=1M conv=fsync: the disk's floor
//   BM_BundleSave       graphrt_bundle's BundleWriter (raw adds) + Finish
//   BM_BundleRestore    CheckpointReader::LookupInto every variable
//   BM_SaveV2Session    SaveV2 through a Session (100 fed variables)
//   BM_RestoreV2Session RestoreV2 through a Session (100 outputs)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "graphrt/bundle/bundle.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"

namespace graphrt {
namespace bench {
namespace {

constexpr int kVariables = 100;

int64_t TotalBytes() {
  const char* mb = std::getenv("GRAPHRT_CKPT_BENCH_MB");
  const int64_t n = mb ? std::atoll(mb) : 1024;
  return (n > 0 ? n : 1024) << 20;
}

std::string Dir() {
  const char* d = std::getenv("GRAPHRT_CKPT_BENCH_DIR");
  static const std::string dir = [&] {
    std::string tmpl = std::string(d ? d : "/tmp") + "/graphrt_ckpt_bench_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    return std::string(mkdtemp(buf.data()));
  }();
  return dir;
}

// The variables: kVariables float vectors summing to TotalBytes().
const std::vector<std::vector<float>>& Variables() {
  static const std::vector<std::vector<float>> vars = [] {
    std::vector<std::vector<float>> v(kVariables);
    const size_t each = static_cast<size_t>(TotalBytes() / kVariables / 4);
    for (int i = 0; i < kVariables; ++i) v[static_cast<size_t>(i)] = RandomFloats(each, 100 + i);
    return v;
  }();
  return vars;
}

std::string VarName(int i) { return "layer_" + std::to_string(i) + "/kernel"; }

void SetBytes(benchmark::State& state) {
  int64_t bytes = 0;
  for (const auto& v : Variables()) bytes += static_cast<int64_t>(v.size() * 4);
  state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_DdFsync(benchmark::State& state) {
  const std::string cmd = "dd if=/dev/zero of=" + Dir() + "/dd.bin bs=1M count=" +
                          std::to_string(TotalBytes() >> 20) + " conv=fsync status=none";
  for (auto _ : state)
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("dd failed");
  std::remove((Dir() + "/dd.bin").c_str());
  state.SetBytesProcessed(state.iterations() * TotalBytes());
}

void BM_BundleSave(benchmark::State& state) {
  const auto& vars = Variables();
  for (auto _ : state) {
    bundle::BundleWriter w(Dir() + "/bundle");
    for (int i = 0; i < kVariables; ++i) {
      const auto& v = vars[static_cast<size_t>(i)];
      w.Add(VarName(i), bundle::DT_FLOAT, {static_cast<int64_t>(v.size())}, reinterpret_cast<const char*>(v.data()),
            v.size() * 4);
    }
    const bundle::Status s = w.Finish();
    if (!s.ok()) state.SkipWithError(s.message.c_str());
  }
  SetBytes(state);
}

void BM_BundleRestore(benchmark::State& state) {
  const auto& vars = Variables();
  std::vector<std::vector<float>> out(kVariables);
  for (int i = 0; i < kVariables; ++i) out[static_cast<size_t>(i)].resize(vars[static_cast<size_t>(i)].size());
  for (auto _ : state) {
    std::unique_ptr<bundle::CheckpointReader> r;
    bundle::Status s = bundle::CheckpointReader::Open(Dir() + "/bundle", &r);
    for (int i = 0; s.ok() && i < kVariables; ++i)
      s = r->LookupInto(VarName(i), [&](const std::vector<int64_t>&, char** dst) {
        *dst = reinterpret_cast<char*>(out[static_cast<size_t>(i)].data());
        return bundle::Status();
      });
    if (!s.ok()) state.SkipWithError(s.message.c_str());
  }
  if (out[7] != vars[7]) state.SkipWithError("restored values differ");
  SetBytes(state);
}

std::string Graph(bool save) {
  std::string names, specs, types, inputs;
  for (int i = 0; i < kVariables; ++i) {
    names += "string_val: \"" + VarName(i) + "\" ";
    specs += "string_val: \"\" ";
    types += "type: DT_FLOAT ";
    if (save) inputs += "input: \"v" + std::to_string(i) + "\" ";
  }
  const std::string vec = "tensor_shape { dim { size: " + std::to_string(kVariables) + " } } ";
  std::string g =
      "node { name: \"prefix\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_STRING } } }\n"
      "node { name: \"names\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } } "
      "attr { key: \"value\" value { tensor { dtype: DT_STRING " + vec + names + "} } } }\n"
      "node { name: \"specs\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } } "
      "attr { key: \"value\" value { tensor { dtype: DT_STRING " + vec + specs + "} } } }\n";
  if (save) {
    for (int i = 0; i < kVariables; ++i)
      g += "node { name: \"v" + std::to_string(i) +
           "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
    g += "node { name: \"save\" op: \"SaveV2\" input: \"prefix\" input: \"names\" input: \"specs\" " + inputs +
         "attr { key: \"dtypes\" value { list { " + types + "} } } }\n";
  } else {
    g += "node { name: \"restore\" op: \"RestoreV2\" input: \"prefix\" input: \"names\" input: \"specs\" "
         "attr { key: \"dtypes\" value { list { " + types + "} } } }\n";
  }
  return g;
}

std::unique_ptr<Session> MakeSession(bool save) {
  proto::GraphDef g;
  Status s = ParseGraphDefText(Graph(save), &g);
  if (!s.ok()) return nullptr;
  std::unique_ptr<Session> sess;
  if (!NewSession(SessionOptions(), &sess).ok() || !sess->Create(g).ok()) return nullptr;
  return sess;
}

void BM_SaveV2Session(benchmark::State& state) {
  auto sess = MakeSession(true);
  if (!sess) return state.SkipWithError("session");
  std::vector<std::pair<std::string, Tensor>> feeds = {{"prefix", Tensor::StringScalar(Dir() + "/session")}};
  for (int i = 0; i < kVariables; ++i) {
    const auto& v = Variables()[static_cast<size_t>(i)];
    Tensor t(GR_FLOAT, TensorShape({static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), t.data<float>());
    feeds.emplace_back("v" + std::to_string(i), t);
  }
  std::vector<Tensor> out;
  for (auto _ : state) {
    const Status s = sess->Run(feeds, {}, {"save"}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  SetBytes(state);
}

void BM_RestoreV2Session(benchmark::State& state) {
  auto sess = MakeSession(false);
  if (!sess) return state.SkipWithError("session");
  std::vector<std::string> fetches;
  for (int i = 0; i < kVariables; ++i) fetches.push_back("restore:" + std::to_string(i));
  std::vector<Tensor> out;
  for (auto _ : state) {
    const Status s = sess->Run({{"prefix", Tensor::StringScalar(Dir() + "/session")}}, fetches, {}, &out);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  if (out.size() == kVariables && out[3].data<float>()[5] != Variables()[3][5]) state.SkipWithError("values differ");
  SetBytes(state);
}

BENCHMARK(BM_DdFsync)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BundleSave)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BundleRestore)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SaveV2Session)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RestoreV2Session)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace bench
}  // namespace graphrt

int main(int argc, char** argv) {
  const int rc = graphrt::bench::RunWithPlugins(argc, argv);
  std::system(("rm -rf " + graphrt::bench::Dir()).c_str());
  return rc;
}
