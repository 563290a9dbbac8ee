// The device conformance suite: what every device backend must do, checked
// through the core's Device wrapper over the backend's GR_DeviceSpec.
// Backends: the CPU device of the build, the toy XPU device built from
// examples/toy_device, and any listed in GRAPHRT_CONFORMANCE_BACKENDS as
// "TYPE=/path/libplugin.so[,TYPE=/path...]" (the CUDA plugin, a vendor's).
//
// The toy device runs every copy 2 ms late (GRAPHRT_TOY_XPU_COMMAND_DELAY_US),
// so a copy that does not order on its stream reads stale data here.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "device_gate.h"
#include "graphrt/core/device.h"
#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace {

struct Backend {
  std::string type;
  std::string plugin;            // "" = one of the standard plugins
  bool enforces_limit = true;    // allocation beyond bytes_limit returns null
  bool detects_bad_copies = false;  // a copy outside its allocation fails (now or on the stream)
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.type << (b.plugin.empty() ? "" : " from " + b.plugin); }

std::vector<Backend> Backends() {
  std::vector<Backend> b = {{"CPU", "", false, false}, {"XPU", GRAPHRT_TOY_DEVICE_PLUGIN, true, true}};
  if (const char* env = std::getenv("GRAPHRT_CONFORMANCE_BACKENDS")) {
    std::string s = env;
    size_t start = 0;
    while (start < s.size()) {
      size_t comma = s.find(',', start);
      if (comma == std::string::npos) comma = s.size();
      const std::string item = s.substr(start, comma - start);
      const size_t eq = item.find('=');
      if (eq != std::string::npos && eq > 0) b.push_back({item.substr(0, eq), item.substr(eq + 1), true, false});
      start = comma + 1;
    }
  }
  return b;
}

// Slow toy streams (read when the streams are made); set before any test runs.
const bool kDelaySet = [] {
  setenv("GRAPHRT_TOY_XPU_COMMAND_DELAY_US", "2000", /*overwrite=*/0);
  return true;
}();

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 12345u;
  for (auto& b : v) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 16);
  }
  return v;
}

class DeviceConformanceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    testing::LoadStandardPlugins();
    const Backend& b = GetParam();
    if (!b.plugin.empty()) {
      bool loaded = false;
      for (const PluginInfo& p : Runtime::Global().Plugins())
        for (const std::string& t : p.devices) loaded |= t == b.type;
      if (!loaded) {
        Status s = Runtime::Global().LoadPlugin(b.plugin);
        ASSERT_TRUE(s.ok()) << s;
      }
    }
    std::vector<Device*> all;
    // Two devices where the backend has (or, host memory, can make) them.
    Status s = Runtime::Global().devices().GetDevices({{b.type, 2}}, &all);
    ASSERT_TRUE(s.ok()) << s;
    for (Device* d : all)
      if (d->type() == b.type) devices_.push_back(d);
    ASSERT_FALSE(devices_.empty()) << "no " << b.type << " device";
    dev_ = devices_[0];
    ASSERT_TRUE(dev_->CreateStream(&stream_).ok());
  }
  void TearDown() override {
    for (auto& [d, p, n] : blocks_) d->allocator()->Deallocate(p, n);
    if (dev_ && (stream_ || !dev_->host_memory())) {
      dev_->SyncStream(stream_).IgnoreError();
      dev_->DestroyStream(stream_);
    }
  }

  // Device memory freed at the end of the test.
  void* Alloc(Device* d, size_t bytes, size_t alignment = 64) {
    void* p = d->allocator()->Allocate(bytes, alignment);
    EXPECT_NE(p, nullptr) << bytes << " bytes on " << d->name();
    if (p) blocks_.push_back({d, p, bytes});
    return p;
  }
  void Free(void* p) {
    for (size_t i = 0; i < blocks_.size(); ++i)
      if (std::get<1>(blocks_[i]) == p) {
        auto [d, ptr, n] = blocks_[i];
        blocks_.erase(blocks_.begin() + i);
        d->allocator()->Deallocate(ptr, n);
        return;
      }
  }
  DeviceMemoryStats Stats(Device* d) {
    DeviceMemoryStats m;
    Status s = d->MemoryStats(&m);
    EXPECT_TRUE(s.ok()) << s;
    return m;
  }

  std::vector<Device*> devices_;
  Device* dev_ = nullptr;
  void* stream_ = nullptr;
  std::vector<std::tuple<Device*, void*, size_t>> blocks_;
};

TEST_P(DeviceConformanceTest, AllocationHonoursAlignment) {
  for (size_t alignment : {size_t{64}, size_t{128}, size_t{4096}})
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{4099}}) {
      void* p = Alloc(dev_, bytes, alignment);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << bytes << " bytes aligned to " << alignment;
    }
  // Distinct blocks, even of zero bytes.
  void* a = Alloc(dev_, 0);
  void* b = Alloc(dev_, 0);
  EXPECT_NE(a, b);
}

TEST_P(DeviceConformanceTest, MemoryStatsTrackAllocations) {
  const DeviceMemoryStats before = Stats(dev_);
  ASSERT_GE(before.bytes_in_use, 0) << "bytes_in_use must be reported";
  ASSERT_GE(before.peak_bytes_in_use, before.bytes_in_use);
  ASSERT_GT(before.bytes_limit, 0) << "bytes_limit must be reported";
  constexpr size_t kBytes = 3 << 20;
  void* p = Alloc(dev_, kBytes);
  ASSERT_NE(p, nullptr);
  const DeviceMemoryStats during = Stats(dev_);
  EXPECT_GE(during.bytes_in_use, before.bytes_in_use + static_cast<int64_t>(kBytes));
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  EXPECT_LE(during.bytes_in_use, during.bytes_limit);
  Free(p);
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  const DeviceMemoryStats after = Stats(dev_);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_GE(after.peak_bytes_in_use, during.bytes_in_use) << "the peak remembers";
}

// Host -> device -> device -> host, all enqueued before one sync.
TEST_P(DeviceConformanceTest, CopiesPreserveBytes) {
  const std::vector<size_t> sizes = {0, 1, 3, 63, 64, 65, 4097, (size_t{1} << 20) + 5};
  std::vector<std::vector<uint8_t>> in, out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    in.push_back(Pattern(sizes[i], static_cast<uint32_t>(i + 1)));
    out.push_back(std::vector<uint8_t>(sizes[i], 0xEE));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t n = sizes[i];
    void* d1 = Alloc(dev_, n);
    void* d2 = Alloc(dev_, n);
    ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, in[i].data(), d1, n).ok());
    ASSERT_TRUE(dev_->CopyDeviceToDeviceAsync(stream_, d1, d2, n).ok());
    ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, d2, out[i].data(), n).ok());
  }
  Status s = dev_->SyncStream(stream_);
  ASSERT_TRUE(s.ok()) << s;
  for (size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(out[i], in[i]) << sizes[i] << " bytes";
}

// A device-side command (a device-to-device copy standing in for a kernel)
// and the copy behind it: the second sees the first's result. Repeated
// overwrites of one buffer: each read sees the write just before it.
TEST_P(DeviceConformanceTest, StreamOrdersCommands) {
  constexpr size_t n = 10000;
  const std::vector<uint8_t> a = Pattern(n, 7), b = Pattern(n, 8);
  void* src = Alloc(dev_, n);
  void* dst = Alloc(dev_, n);
  std::vector<uint8_t> out(n);
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), src, n).ok());
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, b.data(), dst, n).ok());
  ASSERT_TRUE(dev_->CopyDeviceToDeviceAsync(stream_, src, dst, n).ok());  // the "kernel"
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, dst, out.data(), n).ok());

  std::vector<std::vector<uint8_t>> writes, reads;
  for (uint32_t i = 0; i < 6; ++i) {
    writes.push_back(Pattern(n, 100 + i));
    reads.push_back(std::vector<uint8_t>(n));
  }
  for (size_t i = 0; i < writes.size(); ++i) {
    ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, writes[i].data(), src, n).ok());
    ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, src, reads[i].data(), n).ok());
  }
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  EXPECT_EQ(out, a);
  for (size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(reads[i], writes[i]) << "write " << i;
}

// A copy behind work that has not finished does not start: nothing lands
// while the stream is held, everything after.
TEST_P(DeviceConformanceTest, CopiesWaitForEarlierWork) {
  constexpr size_t n = 3000;
  const std::vector<uint8_t> a = Pattern(n, 9);
  void* buf = Alloc(dev_, n);
  std::vector<uint8_t> out(n, 0xCD);
  testing::StreamGate gate;
  ASSERT_TRUE(dev_->HostCallback(stream_, &testing::StreamGate::Callback, &gate).ok());
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), buf, n).ok());
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, buf, out.data(), n).ok());
  if (!gate.ran_inline()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // time enough for a copy that did not wait
    EXPECT_EQ(out, std::vector<uint8_t>(n, 0xCD)) << "a copy ran before the work enqueued ahead of it";
  }
  gate.Open();
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  EXPECT_EQ(out, a);
}

// Stream B reads what stream A writes, ordered only by an event.
TEST_P(DeviceConformanceTest, EventOrdersStreams) {
  constexpr size_t n = 65536 + 3;
  const std::vector<uint8_t> a = Pattern(n, 11);
  void* buf = Alloc(dev_, n);
  void* other = nullptr;
  ASSERT_TRUE(dev_->CreateStream(&other).ok());
  void* event = nullptr;
  ASSERT_TRUE(dev_->CreateEvent(&event).ok());
  std::vector<uint8_t> out(n);
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), buf, n).ok());
  ASSERT_TRUE(dev_->RecordEvent(stream_, event).ok());
  ASSERT_TRUE(dev_->StreamWaitEvent(other, event).ok());
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(other, buf, out.data(), n).ok());
  ASSERT_TRUE(dev_->SyncStream(other).ok());
  EXPECT_EQ(out, a);
  ASSERT_TRUE(dev_->SyncEvent(event).ok());
  dev_->DestroyEvent(event);
  dev_->DestroyStream(other);
}

// Device to device across two devices: written on the first, copied on the
// second's stream after an event of the first's, read back there.
TEST_P(DeviceConformanceTest, CopiesAcrossDevices) {
  if (devices_.size() < 2) GTEST_SKIP() << "one " << GetParam().type << " device";
  Device* d1 = devices_[1];
  constexpr size_t n = (size_t{1} << 18) + 17;
  const std::vector<uint8_t> a = Pattern(n, 21);
  void* src = Alloc(dev_, n);
  void* dst = Alloc(d1, n);
  void* s1 = nullptr;
  ASSERT_TRUE(d1->CreateStream(&s1).ok());
  void* event = nullptr;
  ASSERT_TRUE(dev_->CreateEvent(&event).ok());
  std::vector<uint8_t> out(n);
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), src, n).ok());
  ASSERT_TRUE(dev_->RecordEvent(stream_, event).ok());
  ASSERT_TRUE(d1->StreamWaitEvent(s1, event).ok());
  Status s = d1->CopyDeviceToDeviceAsync(s1, src, dst, n);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(d1->CopyDeviceToHostAsync(s1, dst, out.data(), n).ok());
  ASSERT_TRUE(d1->SyncStream(s1).ok());
  EXPECT_EQ(out, a);
  dev_->DestroyEvent(event);
  d1->DestroyStream(s1);
}

// Pending while the stream is held, done after; an event never recorded is done.
TEST_P(DeviceConformanceTest, QueryEventPendingThenDone) {
  void* event = nullptr;
  ASSERT_TRUE(dev_->CreateEvent(&event).ok());
  bool done = false;
  ASSERT_TRUE(dev_->QueryEvent(event, &done).ok());
  EXPECT_TRUE(done) << "an event never recorded";
  testing::StreamGate gate;
  ASSERT_TRUE(dev_->HostCallback(stream_, &testing::StreamGate::Callback, &gate).ok());
  ASSERT_TRUE(dev_->RecordEvent(stream_, event).ok());
  ASSERT_TRUE(dev_->QueryEvent(event, &done).ok());
  // A synchronous backend finished everything already.
  EXPECT_EQ(done, gate.ran_inline());
  gate.Open();
  ASSERT_TRUE(dev_->SyncEvent(event).ok());
  ASSERT_TRUE(dev_->QueryEvent(event, &done).ok());
  EXPECT_TRUE(done);
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  dev_->DestroyEvent(event);
}

// Callbacks run after the work before them (they see a device-to-host
// copy's bytes), in the order enqueued, with the stream's status.
TEST_P(DeviceConformanceTest, HostCallbacksRunAfterPriorWorkInOrder) {
  constexpr size_t n = 4096 + 1;
  const std::vector<uint8_t> a = Pattern(n, 31);
  void* buf = Alloc(dev_, n);
  std::vector<uint8_t> out(n);
  struct Seen {
    std::mutex mu;
    std::vector<int> order;
    std::vector<Status> statuses;
    bool bytes_there = false;
    const std::vector<uint8_t>* expect = nullptr;
    const std::vector<uint8_t>* out = nullptr;
  } seen;
  seen.expect = &a;
  seen.out = &out;
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), buf, n).ok());
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, buf, out.data(), n).ok());
  for (int i = 0; i < 3; ++i) {
    Status s = dev_->HostCallback(stream_, [&seen, i](const Status& st) {
      std::lock_guard<std::mutex> lock(seen.mu);
      if (i == 0) seen.bytes_there = *seen.out == *seen.expect;
      seen.order.push_back(i);
      seen.statuses.push_back(st);
    });
    ASSERT_TRUE(s.ok()) << s;
  }
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  std::lock_guard<std::mutex> lock(seen.mu);
  EXPECT_TRUE(seen.bytes_there);
  EXPECT_EQ(seen.order, (std::vector<int>{0, 1, 2}));
  for (const Status& s : seen.statuses) EXPECT_TRUE(s.ok()) << s;
}

// A copy outside its allocation: refused at once (the stream stays usable),
// or failed on the stream, which then stays failed: later work is not done,
// and callbacks, events and syncs report the error.
TEST_P(DeviceConformanceTest, FailedCommandPoisonsStream) {
  if (!GetParam().detects_bad_copies) GTEST_SKIP() << GetParam().type << " does not check copy ranges";
  void* small = Alloc(dev_, 64);
  void* big = Alloc(dev_, 8192);
  Status enqueued = dev_->CopyDeviceToDeviceAsync(stream_, small, big, 8192);
  Status after = dev_->SyncStream(stream_);
  if (!enqueued.ok()) {  // refused synchronously
    EXPECT_TRUE(after.ok()) << after;
    EXPECT_TRUE(dev_->StreamStatus(stream_).ok());
    return;
  }
  ASSERT_FALSE(after.ok()) << "the bad copy neither refused nor failed";
  EXPECT_EQ(dev_->StreamStatus(stream_).code(), after.code());
  // Later work is skipped.
  const std::vector<uint8_t> a = Pattern(64, 41);
  std::vector<uint8_t> out(64, 0xAB);
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), small, 64).ok());
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, small, out.data(), 64).ok());
  Status seen;
  ASSERT_TRUE(dev_->HostCallback(stream_, [&seen](const Status& s) { seen = s; }).ok());
  void* event = nullptr;
  ASSERT_TRUE(dev_->CreateEvent(&event).ok());
  ASSERT_TRUE(dev_->RecordEvent(stream_, event).ok());
  EXPECT_EQ(dev_->SyncStream(stream_).code(), after.code());
  EXPECT_EQ(out, std::vector<uint8_t>(64, 0xAB)) << "work after the failure ran";
  EXPECT_EQ(seen.code(), after.code());
  EXPECT_EQ(seen.message(), after.message());
  bool done = false;
  EXPECT_EQ(dev_->QueryEvent(event, &done).code(), after.code());
  EXPECT_EQ(dev_->SyncEvent(event).code(), after.code());
  dev_->DestroyEvent(event);
  // A fresh stream works.
  void* fresh = nullptr;
  ASSERT_TRUE(dev_->CreateStream(&fresh).ok());
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(fresh, a.data(), small, 64).ok());
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(fresh, small, out.data(), 64).ok());
  EXPECT_TRUE(dev_->SyncStream(fresh).ok());
  EXPECT_EQ(out, a);
  dev_->DestroyStream(fresh);
}

// Beyond the limit: null, and the device keeps working.
TEST_P(DeviceConformanceTest, OutOfMemoryReturnsNullAndDeviceStaysUsable) {
  if (!GetParam().enforces_limit) GTEST_SKIP() << GetParam().type << " has no limit of its own";
  const DeviceMemoryStats m = Stats(dev_);
  ASSERT_GT(m.bytes_limit, 0);
  const size_t over = static_cast<size_t>(m.bytes_limit) + 1;
  void* p = dev_->allocator()->Allocate(over, 64);
  EXPECT_EQ(p, nullptr);
  if (p) dev_->allocator()->Deallocate(p, over);
  // Through the core: ResourceExhausted naming the device and the sizes.
  Tensor t;
  Status oom = Tensor::Allocate(dev_->allocator(), GR_FLOAT, TensorShape({m.bytes_limit / 4 + 1}), &t);
  EXPECT_EQ(oom.code(), Code::kResourceExhausted) << oom;
  EXPECT_NE(oom.message().find(GetParam().type + ":0 ("), std::string::npos) << oom;
  EXPECT_NE(oom.message().find(std::to_string(m.bytes_limit) + " bytes in use"), std::string::npos) << oom;
  // Two halves and a bit do not both fit.
  const size_t half = static_cast<size_t>(m.bytes_limit / 2) + 4096;
  void* first = Alloc(dev_, half);
  ASSERT_NE(first, nullptr);
  void* second = dev_->allocator()->Allocate(half, 64);
  EXPECT_EQ(second, nullptr);
  if (second) dev_->allocator()->Deallocate(second, half);
  Free(first);
  // Usable: the second half fits now, and copies work.
  void* again = Alloc(dev_, half);
  ASSERT_NE(again, nullptr);
  const std::vector<uint8_t> a = Pattern(1000, 51);
  std::vector<uint8_t> out(1000);
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), again, a.size()).ok());
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, again, out.data(), a.size()).ok());
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  EXPECT_EQ(out, a);
}

// Memory freed while a command that reads it is still queued is not handed
// out again before that command has run: the read sees the old bytes, even
// when a new allocation is written meanwhile on another stream.
TEST_P(DeviceConformanceTest, FreeWaitsForPendingWork) {
  constexpr size_t n = 8192;
  const std::vector<uint8_t> a = Pattern(n, 61), b = Pattern(n, 62);
  void* buf = Alloc(dev_, n);
  ASSERT_TRUE(dev_->CopyHostToDeviceAsync(stream_, a.data(), buf, n).ok());
  testing::StreamGate gate;
  ASSERT_TRUE(dev_->HostCallback(stream_, &testing::StreamGate::Callback, &gate).ok());
  std::vector<uint8_t> out(n);
  ASSERT_TRUE(dev_->CopyDeviceToHostAsync(stream_, buf, out.data(), n).ok());
  Free(buf);  // the read above is still queued (behind the gate)
  void* other = nullptr;
  ASSERT_TRUE(dev_->CreateStream(&other).ok());
  std::vector<void*> fresh;
  for (int i = 0; i < 4; ++i) {
    void* p = Alloc(dev_, n);
    ASSERT_NE(p, nullptr);
    if (!gate.ran_inline()) {
      const auto lo = reinterpret_cast<uintptr_t>(buf), hi = lo + n;
      const auto plo = reinterpret_cast<uintptr_t>(p), phi = plo + n;
      EXPECT_TRUE(phi <= lo || plo >= hi) << "freed memory handed out while a read of it is pending";
    }
    ASSERT_TRUE(dev_->CopyHostToDeviceAsync(other, b.data(), p, n).ok());
  }
  ASSERT_TRUE(dev_->SyncStream(other).ok());
  gate.Open();
  ASSERT_TRUE(dev_->SyncStream(stream_).ok());
  EXPECT_EQ(out, a);
  dev_->DestroyStream(other);
}

// Not a conformance case but its gate: the core refuses a backend with its
// own memory that lacks what an asynchronous executor needs, naming it.
TEST(DeviceRegistryTest, BackendWithOwnMemoryNeedsTheAbi13Functions) {
  testing::LoadStandardPlugins();
  const std::string path = std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_incomplete_device.so";
  Status s = Runtime::Global().LoadPlugin(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'HALFDONE'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("lacks query_event, host_callback, stream_status"), std::string::npos) << s;
  for (const std::string& t : Runtime::Global().devices().DeviceTypes()) EXPECT_NE(t, "HALFDONE");
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  std::string name = info.param.type;
  if (!info.param.plugin.empty()) name += "_" + std::to_string(info.index);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceConformanceTest, ::testing::ValuesIn(Backends()), BackendName);

}  // namespace
}  // namespace graphrt
