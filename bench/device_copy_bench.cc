// Copies of a 64 MiB tensor on the toy XPU device (examples/toy_device):
// host -> XPU:0, XPU:0 -> host and XPU:0 -> XPU:1, each enqueued on a stream
// and waited for, against a plain memcpy of 64 MiB measured first in the
// same run. The bar: at least 80% of memcpy's bandwidth.
//
//   build/bin/graphrt_bench_device_copy
// Each toy benchmark reports `of_memcpy`: its bandwidth / memcpy's.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "graphrt/core/device.h"
#include "graphrt/core/runtime.h"

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

}  // namespace
}  // namespace graphrt

BENCHMARK_MAIN();
