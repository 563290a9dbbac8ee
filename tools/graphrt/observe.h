// What the CLI shows of a traced Run: a Chrome trace-event file of its step
// stats (`run --trace`) and the device each node ran on (`run
// --log-placement`, `dot --placed`).
#ifndef GRAPHRT_TOOLS_GRAPHRT_OBSERVE_H_
#define GRAPHRT_TOOLS_GRAPHRT_OBSERVE_H_

#include <map>
#include <ostream>
#include <string>

#include "cli.h"
#include "graphrt/proto/config.pb.h"
#include "graphrt/proto/step_stats.pb.h"

namespace graphrt {
namespace cli {

// The op of a step-stats timeline label "node = Op" ("?" without one): the
// op that ran, which may be one the optimizer made (_FusedConv2D) that the
// GraphDef does not have.
std::string OpOfTimelineLabel(const std::string& label);

// The Chrome trace-event JSON (what chrome://tracing and Perfetto load) of
// `stats`: one process per device; one thread (track) per stream, i.e. per
// thread_id of the node stats (named by the device's thread_names when it
// has them), with nodes that overlap in time on one stream spread over
// extra lanes of it ("compute #2"), since a track shows one event at a
// time; one complete ("X") event per node: name = node, cat = op, times in
// microseconds from the earliest start, args = op and each output's slot,
// dtype, shape and bytes.
std::string ChromeTraceJson(const proto::StepStats& stats);
// Writes ChromeTraceJson to `path`; CliError naming the file when it cannot.
void WriteChromeTrace(const proto::StepStats& stats, const std::string& path);

// Where each node of a Run ran.
struct Placement {
  std::map<std::string, std::string> device_of;  // node -> full device name
  std::map<std::string, std::string> op_of;      // node -> op
  std::string source;  // where it came from, for the printed heading
};

// From the Run's partition graphs when the session reported them
// (RunOptions.output_partition_graphs), else from its step stats (the
// nodes the executor ran; RunOptions.trace_level FULL_TRACE).
Placement PlacementFromMetadata(const proto::RunMetadata& metadata);

// "node (Op): device" per node, in TensorFlow's log_device_placement form,
// sorted by device then node, after a heading naming the source.
void PrintPlacement(const Placement& p, std::ostream& os);

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_OBSERVE_H_
