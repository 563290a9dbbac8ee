// The core's kernels for the transfer ops (_Send, _Recv; partition.h) on
// every device: they meet in the step's Rendezvous (RunArgs::rendezvous),
// and the _Recv moves the value into the receiving device's memory with the
// backends' asynchronous copies.
#ifndef GRAPHRT_CORE_SRC_TRANSFER_KERNELS_H_
#define GRAPHRT_CORE_SRC_TRANSFER_KERNELS_H_

#include <string>

#include "graphrt/core/kernel_registry.h"

namespace graphrt {

struct StepState;

// The registration a node of `op` runs with on any device when `op` is a
// transfer op; null for every other op. (Not in the kernel registry: a
// vendor's device gets transfers without registering anything.)
const KernelRegistration* TransferKernel(const std::string& op);

// The frames executor's call for a _Send whose input is dead: the _Recv's
// consumers are dead too (TensorFlow sends is_dead). Errors fail the step.
void SendDeadValue(void* send_kernel, StepState* s);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_TRANSFER_KERNELS_H_
