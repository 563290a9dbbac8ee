// What the workload benchmarks (workloads_bench.cc, train_bench.cc) share:
// the peers' timing method, their RESULT line format, the check that a
// graph's ops are loaded, and the small file/flag helpers.
#ifndef GRAPHRT_BENCH_WORKLOAD_RUNNER_H_
#define GRAPHRT_BENCH_WORKLOAD_RUNNER_H_

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/status.h"

namespace graphrt {
namespace bench {

// Median seconds per call of the peers' method.
struct Timing {
  double median = 0;
  int reps = 0;
};

// `warmup` calls, then every call timed on its own with steady_clock, at
// least `min_reps` calls and at least `min_time` seconds (at most 100000
// calls); the median. A call returning false stops it ({} returned).
inline Timing TimeMedian(const std::function<bool()>& fn, int warmup, int min_reps, double min_time) {
  for (int i = 0; i < warmup; ++i)
    if (!fn()) return {};
  std::vector<double> t;
  t.reserve(1024);
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  while (static_cast<int>(t.size()) < min_reps ||
         (std::chrono::duration<double>(clock::now() - start).count() < min_time && t.size() < 100000)) {
    const auto t0 = clock::now();
    if (!fn()) return {};
    t.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  const double median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  return {median, static_cast<int>(n)};
}

// One line in the peers' format, which bench/run.sh and compare.py read:
//   RESULT <workload> <system> threads=<T> <value> <unit> [extra]
inline void Result(const std::string& workload, const std::string& system, int threads, double value,
                   const char* unit, const std::string& extra) {
  std::printf("RESULT %s %s threads=%d %.4g %s%s%s\n", workload.c_str(), system.c_str(), threads, value, unit,
              extra.empty() ? "" : " ", extra.c_str());
  std::fflush(stdout);
}

inline std::string Format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

// Of `ops`, those the loaded plugins do not define or have no CPU kernel for,
// each with the reason ("" when all are there).
inline std::string MissingOps(const std::vector<std::string>& ops) {
  std::string missing;
  for (const std::string& op : ops) {
    std::string why;
    if (Runtime::Global().ops().LookUp(op) == nullptr) {
      why = "op not defined";
    } else {
      bool cpu = false;
      for (const KernelRegistration* k : Runtime::Global().kernels().KernelsForOp(op))
        cpu = cpu || k->device_type == "CPU";
      if (!cpu) why = "no CPU kernel";
    }
    if (!why.empty()) missing += (missing.empty() ? "" : ", ") + op + " (" + why + ")";
  }
  return missing;
}

// "a,b,,c" -> {"a", "b", "c"}.
inline std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    if (end > start) parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

inline Status WriteFile(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return errors::InvalidArgument("cannot write ", path, ": ", std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) return errors::InvalidArgument("cannot write ", path, ": ", std::strerror(errno));
  return Status::OK();
}

}  // namespace bench
}  // namespace graphrt

#endif  // GRAPHRT_BENCH_WORKLOAD_RUNNER_H_
