// `graphrt run --trace`: step stats as a Chrome trace-event file. The
// format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
// (a JSON object with "traceEvents": "M" metadata events name processes and
// threads, "X" complete events carry ts and dur in microseconds, "C"
// counter events a device memory's bytes in use).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "graphrt/core/types.h"
#include "observe.h"

namespace graphrt {
namespace cli {
namespace {

// Insertion order kept, so the file reads in the order it was built.
using Json = nlohmann::ordered_json;

Json Metadata(const char* name, int pid, int tid, const char* key, Json value) {
  Json e = {{"name", name}, {"ph", "M"}, {"pid", pid}};
  if (tid >= 0) e["tid"] = tid;
  e["args"] = {{key, std::move(value)}};
  return e;
}

Json Outputs(const proto::NodeExecStats& ns) {
  Json outputs = Json::array();
  for (const proto::NodeOutput& o : ns.output()) {
    const proto::TensorDescription& td = o.tensor_description();
    Json shape = Json::array();
    for (const auto& d : td.shape().dim()) shape.push_back(d.size());
    outputs.push_back({{"slot", o.slot()},
                       {"dtype", DataTypeValueString(td.dtype())},
                       {"shape", std::move(shape)},
                       {"bytes", td.allocation_description().requested_bytes()}});
  }
  return outputs;
}

int64_t DurationNanos(const proto::NodeExecStats& ns) {
  return ns.all_end_rel_nanos() != 0 ? ns.all_end_rel_nanos() : ns.op_end_rel_nanos();
}

}  // namespace

std::string OpOfTimelineLabel(const std::string& label) {
  const size_t eq = label.rfind(" = ");
  return eq == std::string::npos ? "?" : label.substr(eq + 3);
}

std::string ChromeTraceJson(const proto::StepStats& stats) {
  // Times count from the Run's first node, so the numbers stay small and
  // the trace starts at 0.
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const proto::DeviceStepStats& dev : stats.dev_stats())
    for (const proto::NodeExecStats& ns : dev.node_stats()) origin = std::min(origin, ns.all_start_nanos());
  if (origin == std::numeric_limits<int64_t>::max()) origin = 0;

  Json events = Json::array();
  for (int pid = 0; pid < stats.dev_stats_size(); ++pid) {
    const proto::DeviceStepStats& dev = stats.dev_stats(pid);
    events.push_back(Metadata("process_name", pid, -1, "name", dev.device()));
    events.push_back(Metadata("process_sort_index", pid, -1, "sort_index", pid));
    // Streams in thread_id order; within one, nodes by start time.
    std::map<uint32_t, std::vector<const proto::NodeExecStats*>> by_stream;
    for (const proto::NodeExecStats& ns : dev.node_stats()) by_stream[ns.thread_id()].push_back(&ns);
    int next_tid = 0;
    for (auto& [stream, nodes] : by_stream) {
      std::stable_sort(nodes.begin(), nodes.end(), [](const auto* a, const auto* b) {
        return a->all_start_nanos() < b->all_start_nanos();
      });
      // Greedy interval partitioning: each node goes to the first lane free
      // at its start, so lanes never hold overlapping events.
      std::vector<int64_t> lane_end;
      std::vector<int> lane_of;
      for (const proto::NodeExecStats* ns : nodes) {
        const int64_t start = ns->all_start_nanos();
        size_t lane = 0;
        while (lane < lane_end.size() && lane_end[lane] > start) ++lane;
        if (lane == lane_end.size()) lane_end.push_back(start);
        lane_end[lane] = std::max(lane_end[lane], start + DurationNanos(*ns));
        lane_of.push_back(static_cast<int>(lane));
      }
      auto named = dev.thread_names().find(stream);
      const std::string name = named != dev.thread_names().end() ? named->second
                               : stream == 0                     ? std::string("compute")
                                                                 : "stream " + std::to_string(stream);
      for (size_t lane = 0; lane < lane_end.size(); ++lane) {
        const int tid = next_tid + static_cast<int>(lane);
        events.push_back(Metadata("thread_name", pid, tid, "name",
                                  lane == 0 ? name : name + " #" + std::to_string(lane + 1)));
        events.push_back(Metadata("thread_sort_index", pid, tid, "sort_index", tid));
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        const proto::NodeExecStats& ns = *nodes[i];
        const std::string op = OpOfTimelineLabel(ns.timeline_label());
        events.push_back({{"name", ns.node_name()},
                          {"cat", op},
                          {"ph", "X"},
                          {"ts", static_cast<double>(ns.all_start_nanos() - origin) / 1e3},
                          {"dur", static_cast<double>(DurationNanos(ns)) / 1e3},
                          {"pid", pid},
                          {"tid", next_tid + lane_of[i]},
                          {"args", {{"op", op}, {"outputs", Outputs(ns)}}}});
        // A device memory's use after the node: a counter track per device.
        for (const proto::AllocatorMemoryUsed& m : ns.memory())
          if (m.allocator_bytes_in_use() > 0)
            events.push_back({{"name", "memory in use"},
                              {"ph", "C"},
                              {"ts", static_cast<double>(ns.all_start_nanos() + DurationNanos(ns) - origin) / 1e3},
                              {"pid", pid},
                              {"args", {{"bytes", m.allocator_bytes_in_use()}}}});
      }
      next_tid += static_cast<int>(lane_end.size());
    }
  }
  const Json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  // Names come from files: replace bytes that are not UTF-8 rather than throw.
  return trace.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void WriteChromeTrace(const proto::StepStats& stats, const std::string& path) {
  const std::string text = ChromeTraceJson(stats);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (f) f.close();
  if (!f) throw CliError("--trace " + path + ": cannot write: " + std::strerror(errno));
}

}  // namespace cli
}  // namespace graphrt
