// TensorFlow 1's control-flow primitives (Switch, Merge, Enter, Exit,
// NextIteration, LoopCond, ControlTrigger and their Ref forms). They are
// part of the execution model, like _Arg and _Retval: the core defines
// their ops and the executor runs them itself (no kernels).
#ifndef GRAPHRT_CORE_CONTROL_FLOW_H_
#define GRAPHRT_CORE_CONTROL_FLOW_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "graphrt/core/graph.h"
#include "graphrt/core/status.h"

namespace graphrt {

enum class ControlFlowOp { kNone, kSwitch, kMerge, kEnter, kExit, kNextIteration, kLoopCond, kControlTrigger };

// Which primitive `op` names (Ref forms included); kNone for any other op.
ControlFlowOp ControlFlowOpOf(const std::string& op);

// The while-loop frames of a graph: where each node runs. Frame 0 is the
// root; an Enter runs in its input's frame and feeds frame `frame_name`; an
// Exit runs in the loop's frame and feeds the parent frame.
struct FrameLayout {
  struct Frame {
    std::string name;  // the Enters' frame_name; "" for the root
    int parent = -1;
    int parallel_iterations = 10;
  };
  std::vector<Frame> frames;
  std::vector<int> frame_of;  // by node id; -1 for _SOURCE/_SINK
  // frames' index by name, so a graph with many loops is not quadratic.
  std::unordered_map<std::string, int> frame_index;

  // The frame `n`'s outputs are in: an Enter's loop, an Exit's parent,
  // else the frame `n` runs in.
  int OutputFrame(const Node& n) const;
  // The frame an Enter's frame_name names; -1 when none has it yet.
  int FrameNamed(const std::string& name) const;
};

// Assigns every op node its frame, and checks the loops are well formed:
// a node's inputs all come from one frame, an Exit is inside a loop, a
// NextIteration feeds only Merges of its own frame, a loop's Merge has its
// back edge. Errors name the nodes.
Status ComputeFrameLayout(const Graph& g, FrameLayout* out);

// Whether `g` has any control-flow primitive (cheap; no analysis).
bool HasControlFlow(const Graph& g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_CONTROL_FLOW_H_
