// Op definitions of TF1's queues (TensorFlow's data_flow_ops.cc signatures,
// attrs and defaults): FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2
// and the V2 enqueue/dequeue/close/size ops on their resource handles. The
// kernels are in cpu/queue_kernels.cc; enqueue and dequeue are asynchronous
// (a full or empty queue holds no thread).
//
// Not defined: the Ref(string)-handle forms (FIFOQueue, QueueEnqueue, ...):
// their handle is a ref to a string tensor that is no variable, and the
// core gives ref outputs to variables only.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <initializer_list>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

// The handle input is a scalar (unknown shapes pass).
Status HandleInput(InferenceContext* c) {
  PartialShape unused;
  return sf::WithRank(c->input(0), 0, &unused);
}

// What every queue-making op has; `extra` adds the kind's own attrs
// between capacity and container, where TensorFlow lists them.
OpDefBuilder& QueueOp(const char* name, const char* doc, std::initializer_list<const char*> extra = {}) {
  OpDefBuilder& b = detail::AddOp(name)
                        .Output("handle: resource")
                        .Attr("component_types: list(type) >= 1")
                        .Attr("shapes: list(shape) >= 0 = []")
                        .Attr("capacity: int = -1");
  for (const char* a : extra) b.Attr(a);
  return b.Attr("container: string = ''")
      .Attr("shared_name: string = ''")
      .SetIsStateful()
      .SetShapeFn(sf::ScalarShape)
      .Doc(doc);
}

[[maybe_unused]] const OpDefBuilder& kFifo =
    QueueOp("FIFOQueueV2", "A queue that produces elements in first-in first-out order.");
[[maybe_unused]] const OpDefBuilder& kPadding =
    QueueOp("PaddingFIFOQueueV2", "A FIFO queue whose DequeueMany pads each component to the batch's largest shape.");
[[maybe_unused]] const OpDefBuilder& kRandom =
    QueueOp("RandomShuffleQueueV2", "A queue that dequeues elements in a random order.",
            {"min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"});

// A scalar output about the queue (its size, whether it is closed).
Status ScalarOfHandle(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(HandleInput(c));
  return sf::ScalarShape(c);
}

REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetShapeFn(HandleInput)
    .Doc("Enqueues a tuple of one or more tensors; blocks while the queue is full.");

REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetShapeFn(HandleInput)
    .Doc("Enqueues the tuples the components' 0th dimension slices.");

REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetShapeFn([](InferenceContext* c) {
      GR_RETURN_IF_ERROR_SDK(HandleInput(c));
      return sf::UnknownShape(c);
    })
    .Doc("Dequeues one tuple; blocks while the queue is empty.");

Status DequeueManyShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR_SDK(HandleInput(c));
  PartialShape unused;
  GR_RETURN_IF_ERROR_SDK(sf::WithRank(c->input(1), 0, &unused));
  return sf::UnknownShape(c);
}

REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetShapeFn(DequeueManyShape)
    .Doc("Dequeues n tuples, concatenated along a new 0th dimension.");

REGISTER_OP("QueueDequeueUpToV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetShapeFn(DequeueManyShape)
    .Doc("As QueueDequeueManyV2, but a closed queue hands out fewer than n.");

REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetShapeFn(HandleInput)
    .Doc("Closes the queue: later enqueues fail; dequeues fail once too few elements remain.");

REGISTER_OP("QueueIsClosedV2")
    .Input("handle: resource")
    .Output("is_closed: bool")
    .SetShapeFn(ScalarOfHandle)
    .Doc("True when the queue is closed.");

REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetShapeFn(ScalarOfHandle)
    .Doc("The number of elements in the queue.");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
