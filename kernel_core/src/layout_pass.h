// The layout pass of the graph optimizer: NCHW layers on devices that prefer
// NHWC run in NHWC, with Transposes only where the graph enters and leaves
// such a chain (TensorFlow's grappler does the reverse for GPUs).
#ifndef GRAPHRT_CORE_LAYOUT_PASS_H_
#define GRAPHRT_CORE_LAYOUT_PASS_H_

#include "graphrt/core/graph.h"
#include "graphrt/core/graph_optimizer.h"

namespace graphrt {

// Converts, in topological order:
//  * Conv2D and DepthwiseConv2dNative with data_format NCHW on a device for
//    which `prefers_nhwc` holds, always;
//  * MaxPool, AvgPool, BiasAdd and FusedBatchNorm/V2/V3 (NCHW), elementwise
//    unary ops, binary ops whose other operand is converted too or a scalar
//    Const, reductions over Const axes, ConcatV2 of converted tensors along
//    a Const axis, and Pad/PadV2/MirrorPad with Const paddings, when their
//    4-d input comes out of a node converted before them or out of the
//    graph's own Transpose NHWC -> NCHW (they continue a chain; alone, two
//    Transposes would cost more than the NCHW kernel).
// A converted node keeps its name and device and gets its attrs in NHWC
// order. It reads an NCHW input through a Transpose to NHWC, or directly
// what a converted node or a Transpose NHWC -> NCHW of the graph's own was
// given. Its 4-d output reaches unconverted consumers (fetches included)
// through a Transpose back to NCHW, and converted consumers directly. Nodes
// whose NHWC form has no kernel on their device stay as they are.
// No cost model: a node that continues a chain is converted even when none
// of its consumers is, which moves a Transpose back rather than saving one,
// and when its producer is also read by an unconverted op, both outputs
// get a Transpose back where one would do.
void ConvertNchwToNhwc(const std::function<bool(const std::string& assigned_device)>& prefers_nhwc,
                       const KernelAvailableFn& kernel_available, Graph* g);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_LAYOUT_PASS_H_
