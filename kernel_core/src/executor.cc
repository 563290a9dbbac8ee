#include "executor.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "graphrt/core/control_flow.h"
#include "graphrt/core/partition.h"
#include "executor_internal.h"
#include "node_def_util.h"
#include "resource_mgr.h"

namespace graphrt {

namespace {

// A step's ref slots: one array for the whole graph.
struct StepRefs {
  StepState* s;
  Var** in(const NodeItem& item) const { return s->ref_slots.get() + item.input_start; }
  Var** out(const NodeItem& item) const { return s->ref_outputs.get() + item.output_start; }
};

NodeItem::Kind ControlFlowKind(const std::string& op) {
  switch (ControlFlowOpOf(op)) {
    case ControlFlowOp::kSwitch: return NodeItem::Kind::kSwitch;
    case ControlFlowOp::kMerge: return NodeItem::Kind::kMerge;
    case ControlFlowOp::kEnter: return NodeItem::Kind::kEnter;
    case ControlFlowOp::kExit: return NodeItem::Kind::kExit;
    case ControlFlowOp::kNextIteration: return NodeItem::Kind::kNextIteration;
    case ControlFlowOp::kLoopCond: return NodeItem::Kind::kLoopCond;
    case ControlFlowOp::kControlTrigger: return NodeItem::Kind::kControlTrigger;
    case ControlFlowOp::kNone: break;
  }
  return NodeItem::Kind::kKernel;
}

class StepRunner {
 public:
  StepRunner(const std::vector<NodeItem>& items, StepState* s)
      : items_(items), s_(s), cancelled_(s->args->cancelled), node_runner_(s, StepRefs{s}) {}

  // Runs `id` and, depth-first on this thread, whatever it makes ready;
  // expensive extra work goes to the pool when there is one.
  void Process(int id) {
    Stack stack;
    stack.Push(id);
    Drain(&stack);
  }

  // Runs the step's roots as one stack, so that an expensive node a root
  // makes ready goes to the pool while other roots wait here: independent
  // chains then run at once instead of one after the other.
  void ProcessRoots(const std::vector<int>& roots) {
    Stack stack;
    for (auto r = roots.rbegin(); r != roots.rend(); ++r) stack.Push(*r);  // roots[0] runs first
    Drain(&stack);
  }

  // Hands on the outputs of an asynchronous kernel that has completed,
  // then runs what that makes ready.
  void Resume(AsyncNode* n) {
    const NodeItem& item = items_[n->item];
    Tensor* outs = &s_->outputs[item.output_start];
    const bool ok = node_runner_.FinishAsync(item, n);
    delete n;
    if (!ok || s_->failed.load(std::memory_order_relaxed)) {
      ClearOutputs(item, outs);
      return;
    }
    Stack stack;
    Propagate(item, outs, &stack);
    Drain(&stack);
  }

 private:
  // Small explicit stack: no recursion, no allocation for typical fan-out.
  struct Stack {
    int buf[64];
    int top = 0;
    std::vector<int> overflow;
    void Push(int id) {
      if (top < 64) buf[top++] = id;
      else overflow.push_back(id);
    }
  };

  void Drain(Stack* stack) {
    while (stack->top > 0 || !stack->overflow.empty()) {
      int cur;
      if (!stack->overflow.empty()) {
        cur = stack->overflow.back();
        stack->overflow.pop_back();
      } else {
        cur = stack->buf[--stack->top];
      }
      if (s_->failed.load(std::memory_order_relaxed)) continue;
      if (Cancelled()) {
        RecordError(s_, errors::Cancelled("Session has been closed."));
        continue;
      }
      const NodeItem& item = items_[cur];
      Tensor* outs = &s_->outputs[item.output_start];
      if (item.is_async) [[unlikely]] {
        if (!RunAsync(cur)) continue;
      } else if (!node_runner_.Run(item, &s_->slots[item.input_start], outs)) {
        ClearOutputs(item, outs);
        continue;
      }
      Propagate(item, outs, stack);
    }
  }

  // Hands the node's outputs to its consumers and pushes those now ready.
  [[gnu::always_inline]] void Propagate(const NodeItem& item, Tensor* outs, Stack* stack) {
    int expensive_kept = -1;
    for (const OutEdge& e : item.out) {
      if (e.dst_slot >= 0) {
        if (e.ref) [[unlikely]] s_->ref_slots[e.dst_slot] = s_->ref_outputs[item.output_start + e.src_output];
        else if (e.last_use) s_->slots[e.dst_slot] = std::move(outs[e.src_output]);
        else s_->slots[e.dst_slot] = outs[e.src_output];
      }
      if (!DecrementPending(e.dst_item)) continue;
      const NodeItem& ready = items_[e.dst_item];
      if (ready.inexpensive || s_->group == nullptr) {
        stack->Push(e.dst_item);
      } else if (expensive_kept < 0) {
        expensive_kept = e.dst_item;
      } else {
        Spawn(e.dst_item);
      }
    }
    if (expensive_kept >= 0) {
      // Kept on this thread only when nothing else waits here; otherwise the
      // pool takes it and this thread goes on with what it holds.
      if (stack->top == 0 && stack->overflow.empty()) stack->Push(expensive_kept);
      else Spawn(expensive_kept);
    }
    if (item.has_unconsumed_outputs) ClearOutputs(item, outs);
  }

  void Spawn(int next) {
    // The task outlives this runner (a stack object): capture what it needs by value.
    s_->group->run([items = &items_, step = s_, next] { StepRunner(*items, step).Process(next); });
  }

  // Starts an asynchronous kernel (its inputs and outputs stay in the
  // step's arrays, each node running once per step). True when it
  // completed at once and its outputs are to be handed on now.
  [[gnu::noinline]] bool RunAsync(int id) {
    const NodeItem& item = items_[id];
    Tensor* outs = &s_->outputs[item.output_start];
    auto* n = new AsyncNode;
    n->item = id;
    bool ok = false;
    switch (node_runner_.StartAsync(item, &s_->slots[item.input_start], outs, n)) {
      case NodeRunner<StepRefs>::AsyncStart::kPending:
        return false;  // the driver resumes it
      case NodeRunner<StepRefs>::AsyncStart::kFailed:
        break;
      case NodeRunner<StepRefs>::AsyncStart::kDone:
        ok = node_runner_.FinishAsync(item, n);
        break;
    }
    delete n;
    if (!ok) ClearOutputs(item, outs);
    return ok;
  }

  // True when `id` became ready. A step without a pool runs on this thread
  // alone: no locked read-modify-write needed.
  bool DecrementPending(int id) {
    std::atomic<int>& p = s_->pending[id];
    if (s_->group == nullptr) {
      const int left = p.load(std::memory_order_relaxed) - 1;
      p.store(left, std::memory_order_relaxed);
      return left == 0;
    }
    return p.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }

  bool Cancelled() const { return cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed); }

  static void ClearOutputs(const NodeItem& item, Tensor* outs) {
    for (int i = 0; i < item.num_outputs; ++i)
      if (outs[i].IsInitialized()) outs[i] = Tensor();
  }

  const std::vector<NodeItem>& items_;
  StepState* s_;
  const std::atomic<bool>* cancelled_;
  NodeRunner<StepRefs> node_runner_;
};

}  // namespace

Status Executor::Create(const Graph& graph, const DeviceOfNode& device_of, const AllocatorOfDevice& allocator_of,
                        const KernelProvider& provider, std::unique_ptr<Executor>* out) {
  std::unique_ptr<Executor> ex(new Executor());
  std::vector<Node*> order = graph.TopologicalOrder();
  std::vector<int> item_of(graph.num_node_ids(), -1);
  bool has_control_flow = false;
  for (Node* n : order) {
    if (!n->IsOp()) continue;
    item_of[n->id()] = static_cast<int>(ex->items_.size());
    ex->items_.emplace_back();
    NodeItem& item = ex->items_.back();
    item.name = n->name();
    item.op = n->op();
    item.error_prefix = NodePrefix(n->def());
    item.num_inputs = n->num_inputs();
    item.num_outputs = n->num_outputs();
    item.input_types = n->input_types();
    item.output_types = n->output_types();
    for (DataType t : item.output_types) item.has_ref_outputs |= IsRefType(t);
    if (item.has_ref_outputs) {
      ex->has_refs_ = true;
      for (DataType t : item.output_types) item.output_is_ref.push_back(IsRefType(t));
    }
    item.allows_uninitialized_input = n->op_def() != nullptr && n->op_def()->allows_uninitialized_input();
    Device* device = device_of(*n);
    item.device = device;
    item.allocator = allocator_of(device);
    item.is_send = n->op() == kSendOp;
    // A _Recv for a HostMemory input of a kernel on a device with its own
    // memory delivers into host memory.
    if (n->op() == kRecvOp) {
      const proto::AttrValue* on_host = FindAttr(n->def(), kRecvOnHostAttr);
      if (on_host != nullptr && on_host->b()) item.host_outputs = 1;
    }
    auto known = std::find(ex->devices_.begin(), ex->devices_.end(), device);
    item.device_index = static_cast<int>(known - ex->devices_.begin());
    if (known == ex->devices_.end()) ex->devices_.push_back(device);
    item.input_start = ex->num_slots_;
    ex->num_slots_ += item.num_inputs;
    item.output_start = ex->num_outputs_;
    ex->num_outputs_ += item.num_outputs;
    if (n->op() == kArgOp || n->op() == kRetvalOp) {
      item.kind = n->op() == kArgOp ? NodeItem::Kind::kArg : NodeItem::Kind::kRetval;
      item.index = static_cast<int>(FindAttr(n->def(), "index")->i());
      item.inexpensive = true;
      continue;
    }
    if (const NodeItem::Kind kind = ControlFlowKind(n->op()); kind != NodeItem::Kind::kKernel) {
      // The executor runs the control-flow primitives itself.
      item.kind = kind;
      item.inexpensive = true;
      has_control_flow = true;
      continue;
    }
    Status s = provider(*n, device, &item.reg, &item.kernel, &item.owns_kernel);
    if (!s.ok()) return s;
    item.inexpensive = (item.reg->flags & GR_KERNEL_INEXPENSIVE) != 0;
    item.is_async = item.reg->compute_async != nullptr;
    if (device != nullptr && !device->host_memory() && !item.reg->host_memory_args.empty()) {
      // Shapes, sizes, indices a device kernel makes for the host: host memory.
      for (int i = 0; i < item.num_outputs; ++i) {
        if (!IsHostMemoryArg(*item.reg, *n, i, /*input=*/false)) continue;
        if (i >= 32)
          return errors::Unimplemented(item.error_prefix, ": output ", i,
                                       " is declared HostMemory; only the first 32 outputs of a device kernel can be");
        item.host_outputs |= uint32_t{1} << i;
      }
    }
  }
  for (Node* n : order) {
    if (!n->IsOp()) continue;
    NodeItem& item = ex->items_[item_of[n->id()]];
    for (const Edge* e : n->in_edges()) {
      if (e->src()->IsOp()) ++item.initial_pending;
      if (e->IsControlEdge() || !IsRefType(e->src()->output_type(e->src_output()))) continue;
      if (!item.has_ref_inputs) {
        item.has_ref_inputs = true;
        item.ref_inputs.assign(item.num_inputs, NodeItem::RefInput::kNone);
        item.ref_input_names.assign(item.num_inputs, std::string());
      }
      item.ref_input_names[e->dst_input()] = e->src()->name();
      item.ref_inputs[e->dst_input()] =
          IsRefType(item.input_types[e->dst_input()]) ? NodeItem::RefInput::kRef : NodeItem::RefInput::kDeref;
    }
    std::vector<const Edge*> outs;
    for (const Edge* e : n->out_edges())
      if (e->dst()->IsOp()) outs.push_back(e);
    // Data edges grouped by output, control edges last; the last data edge of
    // each output may move the tensor instead of copying it.
    std::stable_sort(outs.begin(), outs.end(), [](const Edge* a, const Edge* b) {
      int ka = a->IsControlEdge() ? INT32_MAX : a->src_output();
      int kb = b->IsControlEdge() ? INT32_MAX : b->src_output();
      return ka < kb;
    });
    std::vector<bool> consumed(item.num_outputs, false);
    for (const Edge* e : outs)
      if (!e->IsControlEdge()) consumed[e->src_output()] = true;
    for (bool c : consumed) item.has_unconsumed_outputs |= !c;
    for (size_t i = 0; i < outs.size(); ++i) {
      const Edge* e = outs[i];
      OutEdge oe;
      oe.src_output = e->src_output();
      oe.dst_item = item_of[e->dst()->id()];
      oe.dst_slot = e->IsControlEdge() ? -1 : ex->items_[oe.dst_item].input_start + e->dst_input();
      oe.ref = !e->IsControlEdge() && IsRefType(item.output_types[e->src_output()]);
      oe.last_use = !e->IsControlEdge() &&
                    (i + 1 == outs.size() || outs[i + 1]->IsControlEdge() || outs[i + 1]->src_output() != e->src_output());
      item.out.push_back(oe);
    }
  }
  for (size_t i = 0; i < ex->items_.size(); ++i)
    if (ex->items_[i].initial_pending == 0) ex->roots_.push_back(static_cast<int>(i));
  if (has_control_flow) GR_RETURN_IF_ERROR(ex->PlanFrames(graph, item_of));
  *out = std::move(ex);
  return Status::OK();
}

Status ConstructKernel(const Node& n, Device* device, Allocator* attr_allocator, const KernelRegistration& reg,
                       void** kernel) {
  GR_KernelConstruction kc{GR_Attrs{&n.def(), attr_allocator, nullptr}, &n.def(), &n.input_types(),
                           &n.output_types(), device, Status()};
  kc.attrs.error = &kc.status;
  Status thrown = StatusFromExceptions("kernel construction", [&] {
    *kernel = reg.create(&kc, reg.user_data);
    return Status::OK();
  });
  if (!thrown.ok()) {
    *kernel = nullptr;
    if (kc.status.ok()) kc.status = thrown;
  }
  if (*kernel != nullptr) return Status::OK();
  const Status s = kc.status.ok() ? errors::Internal("kernel creation failed without a message") : kc.status;
  return Status(s.code(), NodePrefix(n.def()) + ": " + s.message());
}

Executor::Executor() = default;

Executor::~Executor() {
  for (NodeItem& item : items_)
    if (item.owns_kernel && item.kernel) item.reg->destroy(item.kernel);
  for (StepState* s : step_pool_) delete s;
}

StepState* Executor::AcquireStep() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!step_pool_.empty()) {
      StepState* s = step_pool_.back();
      step_pool_.pop_back();
      return s;
    }
  }
  return new StepState(num_slots_, num_outputs_, static_cast<int>(items_.size()), has_refs_);
}

void Executor::ReleaseStep(StepState* s) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  step_pool_.push_back(s);
}

Status Executor::Run(const RunArgs& args) {
  if (args.stats) {
    args.stats->clear_dev_stats();
    for (Device* d : devices_) args.stats->add_dev_stats()->set_device(d->name());
  }
  StepState* s = AcquireStep();
  s->args = &args;
  s->failed.store(false, std::memory_order_relaxed);
  s->error = Status();
  if (!frames_)
    for (size_t i = 0; i < items_.size(); ++i) s->pending[i].store(items_[i].initial_pending, std::memory_order_relaxed);

  if (frames_) {
    RunFrames(s);
  } else {
    DriveStep(
        s,
        [&] {
          StepRunner(items_, s).ProcessRoots(roots_);
        },
        [&](AsyncNode* n) { StepRunner(items_, s).Resume(n); });
  }
  if (s->session_joined.load(std::memory_order_relaxed)) {
    // Waits for a Close that is cancelling this step right now.
    if (args.session_cancellation != nullptr) args.session_cancellation->Remove(s->session_token);
    s->session_joined.store(false, std::memory_order_relaxed);
  }
  // The next step starts uncancelled, without this one's callbacks.
  s->cancellation.Reset();
  if (s->used_step_container.load(std::memory_order_acquire)) {
    args.resources->Cleanup(s->step_container);
    s->used_step_container.store(false, std::memory_order_relaxed);
  }
  Status result;
  if (s->failed.load(std::memory_order_acquire)) {
    result = std::move(s->error);
    s->error = Status();
    // Nodes that never ran leave tensors in their input slots.
    for (int i = 0; i < num_slots_; ++i) s->slots[i] = Tensor();
  }
  ReleaseStep(s);
  return result;
}

}  // namespace graphrt

namespace graphrt {

namespace {
// TensorFlow's DirectSession words a Run past its timeout "Timed out waiting
// for notification".
Status DeadlineError() {
  return errors::DeadlineExceeded("Timed out waiting for notification: the step ran past its deadline ",
                                  "(RunOptions.timeout_in_ms or ConfigProto.operation_timeout_in_ms) while waiting ",
                                  "for an asynchronous kernel");
}
bool PastDeadline(const RunArgs& args) { return args.deadline_nanos != 0 && NowNanos() > args.deadline_nanos; }
}  // namespace

void JoinSessionCancellation(StepState* s) {
  if (s->session_joined.exchange(true, std::memory_order_acq_rel)) return;
  CancellationRegistry* session = s->args->session_cancellation;
  if (session == nullptr) return;
  auto cancel = [](void* arg) { RecordError(static_cast<StepState*>(arg), errors::Cancelled("Session has been closed.")); };
  if (!session->Add(cancel, s, &s->session_token)) {
    s->session_token = -1;  // Remove finds nothing
    cancel(s);
  }
}

bool AwaitAsyncSlow(StepState* s, std::vector<AsyncNode*>* batch) {
  const int64_t deadline = s->args->deadline_nanos;
  std::unique_lock<std::mutex> lock(s->async_mu);
  while (s->completed.empty()) {
    if (s->async_outstanding.load(std::memory_order_acquire) == 0) return false;
    if (deadline != 0 && !s->cancellation.cancelled()) {
      const auto when = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline));
      if (s->async_cv.wait_until(lock, when) == std::cv_status::timeout && s->completed.empty()) {
        lock.unlock();
        RecordError(s, DeadlineError());
        lock.lock();
      }
    } else {
      s->async_cv.wait(lock);
    }
  }
  batch->swap(s->completed);
  s->async_outstanding.fetch_sub(static_cast<int>(batch->size()), std::memory_order_acq_rel);
  return true;
}

void AsyncKernelDone(GR_KernelContext* ctx) {
  const KernelRegistration* reg = ctx->call.item->reg;
  if (reg == nullptr || reg->compute_async == nullptr) {
    // A synchronous kernel's context lives on the executor's stack: ignore.
    if (ctx->call.status.ok())
      ctx->call.status = errors::Internal("ctx_async_done called by a kernel without compute_async");
    return;
  }
  auto* n = static_cast<AsyncNode*>(ctx);
  // Before compute_async returned: the thread running it finishes the node.
  if (n->phase.exchange(AsyncNode::kDone, std::memory_order_acq_rel) != AsyncNode::kReturned) return;
  StepState* s = n->call.step;
  std::lock_guard<std::mutex> lock(s->async_mu);
  s->completed.push_back(n);
  // Under the lock: once it is released the step may end and its executor go.
  s->async_cv.notify_one();
}

bool StepCancelled(const StepState* s) {
  const RunArgs& args = *s->args;
  return s->cancellation.cancelled() || (args.cancelled != nullptr && args.cancelled->load()) || PastDeadline(args);
}

// Runs no callback itself: a kernel may call it holding a lock that its
// other callbacks take. (An asynchronous kernel's step has joined the
// session's cancellation before compute_async.)
bool StepOnCancel(StepState* s, void (*fn)(void*), void* arg, int64_t* token) {
  if (PastDeadline(*s->args)) {
    // The step ends with that error, not the kernel's CANCELLED; the
    // driver, waking at the deadline, cancels the rest.
    SetStepError(s, DeadlineError());
    return false;
  }
  if (StepCancelled(s)) return false;
  return s->cancellation.Add(fn, arg, token);
}

bool StepRemoveOnCancel(StepState* s, int64_t token) { return s->cancellation.Remove(token); }

int64_t StepIdOf(const StepState* s) { return s->args->step_id; }
Allocator* StepHostAllocator(const StepState* s) {
  return s->args->host_allocator != nullptr ? s->args->host_allocator : HostAllocator();
}
int32_t NumThreadsOf(const StepState* s) { return s->args->num_threads; }
ResourceMgr* ResourcesOf(const StepState* s) { return s->args->resources; }
const FileAccessPolicy* FileAccessOf(const StepState* s) { return s->args->file_access; }
const char* StepContainerOf(StepState* s) {
  if (!s->used_step_container.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->used_step_container.load(std::memory_order_relaxed)) {
      // Named after the (pooled) step state, not the step id: the core
      // interns handle strings for the life of the process, so names must
      // repeat from step to step. Steps running at once differ.
      s->step_container = "__per_step_" + std::to_string(reinterpret_cast<uintptr_t>(s));
      s->used_step_container.store(true, std::memory_order_release);
    }
  }
  return s->step_container.c_str();
}
}  // namespace graphrt
