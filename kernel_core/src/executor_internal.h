// What the executor's two step runners share: the step's state and running
// one node. executor.cc runs graphs without control flow (one pass, every
// node once); executor_frames.cc runs TF1 loops and conds (frames,
// iterations, dead tensors).
#ifndef GRAPHRT_CORE_SRC_EXECUTOR_INTERNAL_H_
#define GRAPHRT_CORE_SRC_EXECUTOR_INTERNAL_H_

#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cancellation.h"
#include "core_api_internal.h"
#include "executor.h"
#include "resource_mgr.h"

namespace graphrt {

struct AsyncNode;

struct StepState {
  StepState(int num_slots, int num_outputs, int num_items, bool has_refs)
      : slots(new Tensor[num_slots]),
        outputs(new Tensor[num_outputs]),
        pending(new std::atomic<int>[num_items]),
        ref_slots(has_refs ? new Var*[num_slots]() : nullptr),
        ref_outputs(has_refs ? new Var*[num_outputs]() : nullptr) {}
  std::unique_ptr<Tensor[]> slots;
  // Each node's outputs while it hands them to its consumers; empty between
  // nodes, so a pooled step constructs no tensor per node.
  std::unique_ptr<Tensor[]> outputs;
  std::unique_ptr<std::atomic<int>[]> pending;
  // Variables on ref edges (only in executors with refs). Raw pointers: the
  // session's resource manager and the kernels that produced them hold
  // references for longer than any step.
  std::unique_ptr<Var*[]> ref_slots;
  std::unique_ptr<Var*[]> ref_outputs;
  // Set when a kernel asked for the step's container: its resources are
  // dropped when the step ends.
  std::atomic<bool> used_step_container{false};
  std::string step_container;
  const RunArgs* args = nullptr;
  tbb::task_group* group = nullptr;
  std::atomic<bool> failed{false};
  std::mutex mu;  // guards error and stats
  Status error;

  // Asynchronous kernels (ABI 1.3). Started and not yet handed back to the
  // step's driving thread; those done, waiting for it (under async_mu).
  std::atomic<int> async_outstanding{0};
  std::mutex async_mu;
  std::condition_variable async_cv;
  std::vector<AsyncNode*> completed;
  // The step's cancellation: fired by the first error, the deadline, or
  // (through the session's registry, joined when the first asynchronous
  // kernel starts) Session::Close.
  CancellationRegistry cancellation;
  std::atomic<bool> session_joined{false};
  int64_t session_token = -1;
};

// An asynchronous kernel's call, alive until ctx_async_done and the step's
// driver has handed its outputs on. phase: who finishes the call, the
// thread that ran compute_async (done came before it returned) or the
// driver (done came later, from anywhere).
struct AsyncNode : GR_KernelContext {
  enum : int { kRunning, kReturned, kDone };
  AsyncNode() : GR_KernelContext{KernelCall{}} {}
  virtual ~AsyncNode() = default;
  std::atomic<int> phase{kRunning};
  int64_t start = 0;  // for step stats
  int item = 0;
  // Set instead of the outputs by a _Recv whose value was sent dead (the
  // frames executor then propagates deadness).
  bool dead_output = false;
};

inline int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The step's first error wins. Runs no cancellation callback: safe where a
// caller may hold a lock that one of them takes.
inline void SetStepError(StepState* s, Status st) {
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->error.ok()) s->error = std::move(st);
  s->failed.store(true, std::memory_order_release);
}

// SetStepError, then cancels the step (kernels waiting on something stop
// waiting). Called with no lock a cancellation callback may take.
inline void RecordError(StepState* s, Status st) {
  SetStepError(s, std::move(st));
  s->cancellation.Cancel();
}

// Joins the session's cancellation (once per step, when the step first may
// wait for an asynchronous kernel), and on the way back out.
void JoinSessionCancellation(StepState* s);
// Waits until an asynchronous kernel of the step is done (moving the done
// ones to `batch`) or none is outstanding (false). Wakes at the step's
// deadline and cancels the step.
bool AwaitAsyncSlow(StepState* s, std::vector<AsyncNode*>* batch);
inline bool AwaitAsync(StepState* s, std::vector<AsyncNode*>* batch) {
  if (s->async_outstanding.load(std::memory_order_acquire) == 0) return false;
  return AwaitAsyncSlow(s, batch);
}

// Runs a step: start() on this thread (and the pool), then resume(node) for
// each asynchronous kernel as it completes, until none is outstanding. On
// the pool, resume() runs inside the arena too, so it may spawn; without a
// pool everything runs on this thread, which keeps the single-threaded
// runners' lock-free bookkeeping valid (kernels completing elsewhere only
// queue their nodes).
template <typename Start, typename Resume>
void DriveStep(StepState* s, Start&& start, Resume&& resume) {
  const RunArgs& args = *s->args;
  std::vector<AsyncNode*> batch;
  if (args.num_threads > 1 && args.arena != nullptr) {
    tbb::task_group group;
    s->group = &group;
    args.arena->execute([&] {
      start();
      group.wait();
    });
    while (AwaitAsync(s, &batch)) {
      args.arena->execute([&] {
        for (AsyncNode* n : batch) resume(n);
        group.wait();
      });
      batch.clear();
    }
  } else {
    s->group = nullptr;
    start();
    while (AwaitAsync(s, &batch)) {
      for (AsyncNode* n : batch) resume(n);
      batch.clear();
    }
  }
  s->group = nullptr;
}

// Runs one _Arg, _Retval or kernel node. `Refs` says where the node's ref
// slots are (the step's arrays, or a loop iteration's): in(item) and
// out(item) give the node's first input and output slot.
template <typename Refs>
class NodeRunner {
 public:
  NodeRunner(StepState* s, Refs refs) : s_(s), refs_(refs) {}

  [[gnu::always_inline]] bool Run(const NodeItem& item, Tensor* inputs, Tensor* outs) {
    const RunArgs& args = *s_->args;
    const int64_t start = args.stats ? NowNanos() : 0;
    if (item.has_ref_inputs) [[unlikely]] {
      if (!ReadRefInputs(item, inputs)) return false;
    }
    bool ok = true;
    switch (item.kind) {
      case NodeItem::Kind::kArg:
        outs[0] = (*args.feeds)[item.index];
        break;
      case NodeItem::Kind::kRetval:
        (*args.fetches)[item.index] = std::move(inputs[0]);
        break;
      default: {
        Var** ref_outputs = nullptr;
        if (item.has_ref_outputs) [[unlikely]]
          ref_outputs = ClearRefOutputs(item);
        GR_KernelContext ctx{
            KernelCall{&item, inputs, outs, s_, item.has_ref_inputs ? refs_.in(item) : nullptr, ref_outputs, Status()}};
        // SDK kernels catch their own exceptions; a raw C-ABI kernel's must
        // not unwind through the executor.
        // (A bare try: wrapping the call in StatusFromExceptions' lambda
        // cost ~10 ns per node in W1.)
        try {
          item.reg->compute(item.kernel, &ctx);
        } catch (...) {
          ctx.call.status = StatusFromCurrentException("compute");
        }
        ok = Finished(item, ctx.call.status, inputs, outs);
        break;
      }
    }
    if (args.stats) RecordStats(item, start, outs);
    return ok;
  }

  enum class AsyncStart { kPending, kDone, kFailed };

  // Starts an asynchronous kernel on `n` (its call: inputs, outputs, ref
  // outputs from this runner's Refs). kDone: done came before
  // compute_async returned, so the caller finishes the node now;
  // kPending: the step's driver resumes it; kFailed: it did not start.
  [[gnu::noinline]] AsyncStart StartAsync(const NodeItem& item, Tensor* inputs, Tensor* outs, AsyncNode* n) {
    n->start = s_->args->stats ? NowNanos() : 0;
    if (item.has_ref_inputs && !ReadRefInputs(item, inputs)) return AsyncStart::kFailed;
    Var** ref_outputs = item.has_ref_outputs ? ClearRefOutputs(item) : nullptr;
    n->call = KernelCall{&item, inputs, outs, s_, item.has_ref_inputs ? refs_.in(item) : nullptr, ref_outputs,
                         Status()};
    if (!s_->session_joined.load(std::memory_order_relaxed)) JoinSessionCancellation(s_);
    s_->async_outstanding.fetch_add(1, std::memory_order_relaxed);
    try {
      item.reg->compute_async(item.kernel, n);
    } catch (...) {
      // (The SDK catches for its kernels; a raw C-ABI kernel that throws
      // is taken not to have called done.)
      n->call.status = StatusFromCurrentException("compute_async");
      n->phase.store(AsyncNode::kDone, std::memory_order_relaxed);
    }
    if (n->phase.exchange(AsyncNode::kReturned, std::memory_order_acq_rel) != AsyncNode::kDone)
      return AsyncStart::kPending;
    s_->async_outstanding.fetch_sub(1, std::memory_order_relaxed);
    return AsyncStart::kDone;
  }

  // The end of an asynchronous kernel's call: as a synchronous kernel's.
  [[gnu::noinline]] bool FinishAsync(const NodeItem& item, AsyncNode* n) {
    const bool ok = Finished(item, n->call.status, n->call.inputs, n->call.outputs);
    if (s_->args->stats) RecordStats(item, n->start, n->call.outputs);
    return ok;
  }

  // Reads the variables behind the node's deref'd ref inputs, as they are
  // now (after the node's control dependencies ran). Out of line: graphs
  // without variables must not pay for it in Run's size.
  [[gnu::noinline]] bool ReadRefInputs(const NodeItem& item, Tensor* inputs) {
    Var** refs = refs_.in(item);
    for (int i = 0; i < item.num_inputs; ++i) {
      if (item.ref_inputs[i] == NodeItem::RefInput::kNone) continue;
      Var* v = refs[i];
      std::shared_lock<std::shared_mutex> lock(v->mu());
      // Ops that take the ref itself are checked too, as TensorFlow's
      // executor does, unless they initialize (Assign, IsVariableInitialized).
      if (!v->initialized() && !item.allows_uninitialized_input) {
        // TensorFlow names the consumer's input (the variable's node).
        RecordError(s_, errors::FailedPrecondition("Attempting to use uninitialized value ", item.ref_input_names[i],
                                                   "\n\t [[", item.error_prefix, "]]"));
        return false;
      }
      if (item.ref_inputs[i] == NodeItem::RefInput::kDeref) inputs[i] = v->value();
    }
    return true;
  }

  void RecordStats(const NodeItem& item, int64_t start, const Tensor* outs) {
    const int64_t end = NowNanos();
    std::lock_guard<std::mutex> lock(s_->mu);
    proto::NodeExecStats* ns = s_->args->stats->mutable_dev_stats(item.device_index)->add_node_stats();
    ns->set_node_name(item.name);
    ns->set_timeline_label(item.name + " = " + item.op);
    ns->set_scheduled_nanos(start);
    ns->set_scheduled_micros(start / 1000);
    ns->set_all_start_nanos(start);
    ns->set_all_start_micros(start / 1000);
    ns->set_op_start_rel_nanos(0);
    ns->set_op_end_rel_nanos(end - start);
    ns->set_all_end_rel_nanos(end - start);
    ns->set_op_end_rel_micros((end - start) / 1000);
    ns->set_all_end_rel_micros((end - start) / 1000);
    if (item.kind == NodeItem::Kind::kKernel && !s_->failed.load()) {
      for (int i = 0; i < item.num_outputs; ++i) {
        if (!outs[i].IsInitialized()) continue;
        proto::NodeOutput* o = ns->add_output();
        o->set_slot(i);
        proto::TensorDescription* td = o->mutable_tensor_description();
        td->set_dtype(static_cast<proto::DataType>(outs[i].dtype()));
        for (int d = 0; d < outs[i].dims(); ++d) td->mutable_shape()->add_dim()->set_size(outs[i].dim_size(d));
        td->mutable_allocation_description()->set_requested_bytes(static_cast<int64_t>(outs[i].TotalBytes()));
        td->mutable_allocation_description()->set_ptr(reinterpret_cast<uintptr_t>(outs[i].raw_data()));
      }
    }
  }

 private:
  [[gnu::noinline]] Var** ClearRefOutputs(const NodeItem& item) {
    Var** refs = refs_.out(item);
    for (int i = 0; i < item.num_outputs; ++i) refs[i] = nullptr;
    return refs;
  }

  // After a kernel's call: its inputs go; its error or a missing output
  // fails the step.
  [[gnu::always_inline]] bool Finished(const NodeItem& item, const Status& status, Tensor* inputs, Tensor* outs) {
    for (int i = 0; i < item.num_inputs; ++i) inputs[i] = Tensor();
    if (!status.ok()) {
      RecordError(s_, Status(status.code(), item.error_prefix + ": " + status.message()));
      return false;
    }
    for (int i = 0; i < item.num_outputs; ++i) {
      if (!outs[i].IsInitialized() && !(item.has_ref_outputs && RefOutputSet(item, i))) {
        RecordError(s_, errors::Internal(item.error_prefix, ": kernel did not set output ", i));
        return false;
      }
    }
    return true;
  }

  [[gnu::noinline]] bool RefOutputSet(const NodeItem& item, int i) {
    return item.output_is_ref[i] && refs_.out(item)[i] != nullptr;
  }

  StepState* s_;
  Refs refs_;
};

// The loops and conds of one executor's graph, fixed at Create: which frame
// each node runs in, and per frame what a fresh iteration starts from.
struct FramePlan {
  struct Frame {
    std::string name;  // "" for the root
    int parent = -1;
    int parallel_iterations = 10;
    std::vector<int> items;  // the items running in this frame, by local index
    int num_slots = 0;       // their inputs, one iteration's worth
    std::vector<int32_t> initial_pending;  // by local index
    int num_enters = 0;      // Enters feeding this frame
    std::vector<int> exits;  // the Exit items running in this frame
  };
  struct Item {
    int frame = 0;
    int local = 0;
    int local_input_start = 0;
    int child_frame = -1;  // Enter: the frame it feeds
    bool constant_enter = false;
    int merge_dead_threshold = 0;  // Merge: its data inputs that are not back edges
    int exit_index = -1;           // Exit: its index in the frame's exits
  };
  std::vector<Frame> frames;  // [0] is the root
  std::vector<Item> items;    // by executor item
  std::vector<Tensor> merge_index;  // Merge's value_index outputs, shared
  int max_outputs = 1;              // of any item
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_EXECUTOR_INTERNAL_H_
