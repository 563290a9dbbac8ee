// Copies of a 64 MiB tensor on the toy XPU device (examples/toy_device):
// host -> XPU:0, XPU:0 -> host and XPU:0 -> XPU:1, each enqueued on a stream
// and waited for, against a plain memcpy of 64 MiB measured first in the
// same run. The bar: at least 80% of memcpy's bandwidth.
//
//   build/bin/graphrt_bench_device_copy
// Each toy benchmark reports `of_memcpy`: its bandwidth / memcpy's.
//
// Also the per-op cost of a Session step on the asynchronous XPU: a chain
// of 1000 dependent AddV2 of a one-element tensor on XPU:0 (fed and fetched
// through the host), against the same chain on the CPU in the same run.
// `per_op` is the step's wall time / 1000; the bar: <= 1 us.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "graphrt/core/device.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "graphrt/proto/graph.pb.h"

namespace graphrt {
namespace {

constexpr size_t kBytes = size_t{64} << 20;
double g_memcpy_bytes_per_second = 0;  // from BM_Memcpy, which runs first

// A host buffer whose pages are already mapped (first touches are not copies).
std::vector<char> Touched(size_t n, char fill) { return std::vector<char>(n, fill); }

using Clock = std::chrono::steady_clock;

// Times `body` per iteration by hand (the copies run on other threads), and
// reports bytes per second; returns it.
template <typename Body>
double TimeCopies(benchmark::State& state, Body&& body) {
  double total = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    if (!body()) return 0;
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(seconds);
    total += seconds;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBytes));
  return total > 0 ? static_cast<double>(state.iterations()) * static_cast<double>(kBytes) / total : 0;
}

void BM_Memcpy(benchmark::State& state) {
  std::vector<char> src = Touched(kBytes, 1), dst = Touched(kBytes, 0);
  g_memcpy_bytes_per_second = TimeCopies(state, [&] {
    std::memcpy(dst.data(), src.data(), kBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
    return true;
  });
}
BENCHMARK(BM_Memcpy)->UseManualTime()->Unit(benchmark::kMillisecond);

// The two XPUs, loaded once, with no per-command delay.
std::vector<Device*> Xpus() {
  static std::vector<Device*> xpus = [] {
    unsetenv("GRAPHRT_TOY_XPU_COMMAND_DELAY_US");
    std::vector<Device*> out, all;
    Status s = Runtime::Global().LoadPluginDirectory(GRAPHRT_PLUGIN_BUILD_DIR);
    if (s.ok()) s = Runtime::Global().LoadPlugin(GRAPHRT_TOY_DEVICE_PLUGIN);
    if (s.ok()) s = Runtime::Global().devices().GetDevices(&all);
    if (!s.ok()) std::fprintf(stderr, "%s\n", s.ToString().c_str());
    for (Device* d : all)
      if (d->type() == "XPU") out.push_back(d);
    return out;
  }();
  return xpus;
}

enum Direction { kHostToDevice = 0, kDeviceToHost = 1, kDeviceToDevice = 2 };

void BM_ToyCopy(benchmark::State& state) {
  const auto dir = static_cast<Direction>(state.range(0));
  const std::vector<Device*> xpus = Xpus();
  if (xpus.size() < 2) return state.SkipWithError("the toy XPU plugin did not load");
  Device* x0 = xpus[0];
  Device* x1 = xpus[1];
  // XPU:0 -> XPU:1 runs on the destination's stream, as a consumer's would.
  Device* dev = dir == kDeviceToDevice ? x1 : x0;
  void* stream = nullptr;
  if (!dev->CreateStream(&stream).ok()) return state.SkipWithError("no stream");
  std::vector<char> host = Touched(kBytes, 3);
  void* a = x0->allocator()->Allocate(kBytes, 64);
  void* b = x1->allocator()->Allocate(kBytes, 64);
  if (!a || !b) return state.SkipWithError("out of XPU memory");
  // Map every page of both device blocks once, outside the timing.
  void* s0 = nullptr;
  void* s1 = nullptr;
  Status s = x0->CreateStream(&s0);
  if (s.ok()) s = x1->CreateStream(&s1);
  if (s.ok()) s = x0->CopyHostToDeviceAsync(s0, host.data(), a, kBytes);
  if (s.ok()) s = x1->CopyHostToDeviceAsync(s1, host.data(), b, kBytes);
  if (s.ok()) s = x0->SyncStream(s0);
  if (s.ok()) s = x1->SyncStream(s1);
  x0->DestroyStream(s0);
  x1->DestroyStream(s1);
  if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  const double bandwidth = TimeCopies(state, [&] {
    Status st;
    switch (dir) {
      case kHostToDevice: st = dev->CopyHostToDeviceAsync(stream, host.data(), a, kBytes); break;
      case kDeviceToHost: st = dev->CopyDeviceToHostAsync(stream, a, host.data(), kBytes); break;
      case kDeviceToDevice: st = dev->CopyDeviceToDeviceAsync(stream, a, b, kBytes); break;
    }
    if (st.ok()) st = dev->SyncStream(stream);
    if (!st.ok()) state.SkipWithError(st.ToString().c_str());
    return st.ok();
  });
  if (g_memcpy_bytes_per_second > 0) state.counters["of_memcpy"] = bandwidth / g_memcpy_bytes_per_second;
  dev->DestroyStream(stream);
  x0->allocator()->Deallocate(a, kBytes);
  x1->allocator()->Deallocate(b, kBytes);
}
BENCHMARK(BM_ToyCopy)
    ->ArgName("dir")  // 0: host -> XPU:0, 1: XPU:0 -> host, 2: XPU:0 -> XPU:1
    ->Arg(kHostToDevice)
    ->Arg(kDeviceToHost)
    ->Arg(kDeviceToDevice)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// x -> n0 = x + x -> n1 = n0 + x -> ... -> n999, every add on `device`.
proto::GraphDef AddChain(const std::string& device, int length) {
  proto::GraphDef g;
  proto::NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  for (int i = 0; i < length; ++i) {
    proto::NodeDef* n = g.add_node();
    n->set_name("n" + std::to_string(i));
    n->set_op("AddV2");
    n->add_input(i == 0 ? "x" : "n" + std::to_string(i - 1));
    n->add_input("x");
    n->set_device(device);
    (*n->mutable_attr())["T"].set_type(proto::DT_FLOAT);
  }
  return g;
}

void BM_OpChain(benchmark::State& state) {
  constexpr int kLength = 1000;
  const bool xpu = state.range(0) == 1;
  if (Xpus().empty()) return state.SkipWithError("the toy XPU plugin did not load");
  SessionOptions options;
  options.config.set_intra_op_parallelism_threads(1);
  options.config.set_inter_op_parallelism_threads(1);
  (*options.config.mutable_device_count())["XPU"] = 1;
  std::unique_ptr<Session> session;
  Status s = NewSession(options, &session);
  if (s.ok()) s = session->Create(AddChain(xpu ? "/device:XPU:0" : "/device:CPU:0", kLength));
  Tensor x(GR_FLOAT, TensorShape({1}));
  x.data<float>()[0] = 1.f;
  std::vector<Tensor> out;
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  const std::string fetch = "n" + std::to_string(kLength - 1);
  if (s.ok()) s = session->Run(feeds, {fetch}, {}, &out);  // builds the executor
  if (s.ok() && out[0].data<float>()[0] != kLength + 1.f) s = errors::Internal("wrong sum");
  if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  for (auto _ : state) {
    s = session->Run(feeds, {fetch}, {}, &out);
    if (!s.ok()) return state.SkipWithError(s.ToString().c_str());
  }
  // Seconds per op of wall time (printed with an SI prefix: 500n = 0.5 us).
  state.counters["per_op"] = benchmark::Counter(static_cast<double>(state.iterations()) * kLength,
                                                benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_OpChain)->ArgName("xpu")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace graphrt

BENCHMARK_MAIN();
