#include "executor.h"

#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "core_api_internal.h"
#include "node_def_util.h"
#include "resource_mgr.h"

namespace graphrt {

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
};

namespace {

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RecordError(StepState* s, Status st) {
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->error.ok()) s->error = std::move(st);
  s->failed.store(true, std::memory_order_release);
}

class StepRunner {
 public:
  StepRunner(const std::vector<NodeItem>& items, StepState* s)
      : items_(items), s_(s), cancelled_(s->args->cancelled) {}

  // Runs `id` and, depth-first on this thread, whatever it makes ready;
  // expensive extra work goes to the pool when there is one.
  void Process(int id) {
    // Small explicit stack: no recursion, no allocation for typical fan-out.
    int stack_buf[64];
    std::vector<int> overflow;
    int top = 0;
    stack_buf[top++] = id;
    while (top > 0 || !overflow.empty()) {
      int cur;
      if (!overflow.empty()) {
        cur = overflow.back();
        overflow.pop_back();
      } else {
        cur = stack_buf[--top];
      }
      if (s_->failed.load(std::memory_order_relaxed)) continue;
      if (Cancelled()) {
        RecordError(s_, errors::Cancelled("Session has been closed."));
        continue;
      }
      const NodeItem& item = items_[cur];
      Tensor* outs = &s_->outputs[item.output_start];
      if (!RunNode(item, outs)) {
        ClearOutputs(item, outs);
        continue;
      }
      // Propagate outputs and find newly ready nodes.
      int expensive_kept = -1;
      for (const OutEdge& e : item.out) {
        if (e.dst_slot >= 0) {
          if (e.ref) s_->ref_slots[e.dst_slot] = s_->ref_outputs[item.output_start + e.src_output];
          else if (e.last_use) s_->slots[e.dst_slot] = std::move(outs[e.src_output]);
          else s_->slots[e.dst_slot] = outs[e.src_output];
        }
        if (!DecrementPending(e.dst_item)) continue;
        const NodeItem& ready = items_[e.dst_item];
        if (ready.inexpensive || s_->group == nullptr) {
          Push(stack_buf, &top, &overflow, e.dst_item);
        } else if (expensive_kept < 0) {
          expensive_kept = e.dst_item;
        } else {
          const int next = e.dst_item;
          // The task outlives this runner (a stack object): capture what it needs by value.
          s_->group->run([items = &items_, step = s_, next] { StepRunner(*items, step).Process(next); });
        }
      }
      if (expensive_kept >= 0) Push(stack_buf, &top, &overflow, expensive_kept);
      if (item.has_unconsumed_outputs) ClearOutputs(item, outs);
    }
  }

 private:
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

  static void Push(int* buf, int* top, std::vector<int>* overflow, int id) {
    if (*top < 64) buf[(*top)++] = id;
    else overflow->push_back(id);
  }

  // Reads the variables behind the node's deref'd ref inputs, as they are
  // now (after the node's control dependencies ran).
  bool ReadRefInputs(const NodeItem& item, Tensor* inputs) {
    for (int i = 0; i < item.num_inputs; ++i) {
      if (item.ref_inputs[i] == NodeItem::RefInput::kNone) continue;
      Var* v = s_->ref_slots[item.input_start + i];
      std::shared_lock<std::shared_mutex> lock(v->mu());
      // Ops that take the ref itself are checked too, as TensorFlow's
      // executor does, unless they initialize (Assign, IsVariableInitialized).
      if (!v->initialized() && !item.allows_uninitialized_input) {
        // TensorFlow names the consumer's input (the variable's node).
        RecordError(s_, errors::FailedPrecondition("Attempting to use uninitialized value ",
                                                   item.ref_input_names[i], "\n\t [[", item.error_prefix, "]]"));
        return false;
      }
      if (item.ref_inputs[i] == NodeItem::RefInput::kDeref) inputs[i] = v->value();
    }
    return true;
  }

  bool RunNode(const NodeItem& item, Tensor* outs) {
    Tensor* inputs = &s_->slots[item.input_start];
    const RunArgs& args = *s_->args;
    const int64_t start = args.stats ? NowNanos() : 0;
    if (item.has_ref_inputs && !ReadRefInputs(item, inputs)) return false;
    bool ok = true;
    switch (item.kind) {
      case NodeItem::Kind::kArg:
        outs[0] = (*args.feeds)[item.index];
        break;
      case NodeItem::Kind::kRetval:
        (*args.fetches)[item.index] = std::move(inputs[0]);
        break;
      case NodeItem::Kind::kKernel: {
        if (item.has_ref_outputs)
          for (int i = 0; i < item.num_outputs; ++i) s_->ref_outputs[item.output_start + i] = nullptr;
        GR_KernelContext ctx{KernelCall{&item, inputs, outs, s_, Status()}};
        // SDK kernels catch their own exceptions; a raw C-ABI kernel's must
        // not unwind through the executor.
        // (A bare try: wrapping the call in StatusFromExceptions' lambda
        // cost ~10 ns per node in W1.)
        try {
          item.reg->compute(item.kernel, &ctx);
        } catch (...) {
          ctx.call.status = StatusFromCurrentException("compute");
        }
        for (int i = 0; i < item.num_inputs; ++i) inputs[i] = Tensor();
        if (!ctx.call.status.ok()) {
          RecordError(s_, Status(ctx.call.status.code(), item.error_prefix + ": " + ctx.call.status.message()));
          ok = false;
          break;
        }
        for (int i = 0; i < item.num_outputs; ++i) {
          const bool set = item.has_ref_outputs && item.output_is_ref[i]
                               ? s_->ref_outputs[item.output_start + i] != nullptr
                               : outs[i].IsInitialized();
          if (!set) {
            RecordError(s_, errors::Internal(item.error_prefix, ": kernel did not set output ", i));
            ok = false;
            break;
          }
        }
        break;
      }
    }
    if (args.stats) RecordStats(item, start, outs);
    return ok;
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

  const std::vector<NodeItem>& items_;
  StepState* s_;
  const std::atomic<bool>* cancelled_;
};

}  // namespace

Status Executor::Create(const Graph& graph, const DeviceOfNode& device_of, const AllocatorOfDevice& allocator_of,
                        const KernelProvider& provider, std::unique_ptr<Executor>* out) {
  std::unique_ptr<Executor> ex(new Executor());
  std::vector<Node*> order = graph.TopologicalOrder();
  std::vector<int> item_of(graph.num_node_ids(), -1);
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
    Status s = provider(*n, device, &item.reg, &item.kernel, &item.owns_kernel);
    if (!s.ok()) return s;
    item.inexpensive = (item.reg->flags & GR_KERNEL_INEXPENSIVE) != 0;
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
  *out = std::move(ex);
  return Status::OK();
}

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
  for (size_t i = 0; i < items_.size(); ++i) s->pending[i].store(items_[i].initial_pending, std::memory_order_relaxed);

  auto run_roots = [&] {
    StepRunner runner(items_, s);
    for (int r : roots_) runner.Process(r);
  };
  if (args.num_threads > 1 && args.arena != nullptr) {
    tbb::task_group group;
    s->group = &group;
    args.arena->execute([&] {
      run_roots();
      group.wait();
    });
  } else {
    s->group = nullptr;
    run_roots();
  }
  s->group = nullptr;
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
int64_t StepIdOf(const StepState* s) { return s->args->step_id; }
int32_t NumThreadsOf(const StepState* s) { return s->args->num_threads; }
ResourceMgr* ResourcesOf(const StepState* s) { return s->args->resources; }
Var* RefInputOf(const StepState* s, const NodeItem& item, int index) {
  return s->ref_slots ? s->ref_slots[item.input_start + index] : nullptr;
}
void SetRefOutputOf(StepState* s, const NodeItem& item, int index, Var* v) {
  s->ref_outputs[item.output_start + index] = v;
}
const char* StepContainerOf(StepState* s) {
  if (!s->used_step_container.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->used_step_container.load(std::memory_order_relaxed)) {
      s->step_container = "__per_step_" + std::to_string(s->args->step_id);
      s->used_step_container.store(true, std::memory_order_release);
    }
  }
  return s->step_container.c_str();
}
}  // namespace graphrt
