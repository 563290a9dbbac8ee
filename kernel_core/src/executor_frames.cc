// Steps of graphs with TensorFlow 1 control flow: frames, iterations and
// dead tensors (tf_behaviours.md §14).
//
// Every node runs in a frame: the root, or a while loop's frame, which has
// one instance per iteration of its parent frame it was entered in, and
// iterations within it. Each iteration keeps its own input slots and
// pending counts, so one node can run in several iterations at once (up to
// parallel_iterations). A dead input makes a node dead (it does not run;
// its outputs are dead) except for Merge, which takes its first live input
// and is dead only when all its data inputs are. A frame instance ends when
// its Enters have all arrived and its iterations are all done; Exits that
// never sent a live value then send a dead one to the parent.
//
// Locking: a frame instance's mutex guards its iterations (slots, counts)
// when the step runs on the pool.
// No code path holds two frame mutexes at once: Enter and Exit hand values
// across frames in separate critical sections, which is safe because the
// node still counts as outstanding in its own iteration meanwhile, so
// neither frame can end under it.
#include <deque>
#include <map>

#include "graphrt/core/control_flow.h"
#include "executor_internal.h"
#include "node_def_util.h"
#include "transfer_kernels.h"

namespace graphrt {
namespace {

struct IterationState {
  int64_t iter = 0;
  std::unique_ptr<Tensor[]> slots;
  std::unique_ptr<Var*[]> ref_slots;  // executors with refs only
  std::unique_ptr<int32_t[]> pending;
  // Per node: how many inputs arrived dead; for a Merge that took a live
  // input, -(its input index + 1).
  std::unique_ptr<int32_t[]> dead;
  int outstanding_ops = 0;     // nodes ready or running in this iteration
  int outstanding_frames = 0;  // child frame instances entered from it
};

// One value handed on later: a loop invariant (constant Enter) for every
// new iteration, or a NextIteration output waiting for an iteration slot.
struct HeldValue {
  int item;
  Tensor value;
  Var* ref = nullptr;
  bool dead = false;
};

struct FrameState {
  FrameState(const FramePlan::Frame* info, int id, FrameState* parent, IterationState* parent_iteration)
      : info(info), id(id), parent(parent), parent_iteration(parent_iteration),
        pending_enters(info->num_enters), exit_delivered(info->exits.size(), 0) {}
  ~FrameState() {
    for (auto& [key, child] : children) delete child;
    for (IterationState* it : iterations) delete it;
    for (IterationState* it : spare) delete it;
  }

  const FramePlan::Frame* info;
  const int id;
  FrameState* const parent;
  IterationState* const parent_iteration;  // alive while this frame is

  std::mutex mu;
  std::deque<IterationState*> iterations;  // oldest first
  int64_t newest = -1;                     // the newest iteration's number
  int pending_enters;
  std::vector<HeldValue> invariants;
  std::vector<HeldValue> deferred;  // for iteration newest + 1
  std::vector<uint8_t> exit_delivered;
  std::map<std::pair<int, int64_t>, FrameState*> children;  // by (frame, iteration)
  std::vector<IterationState*> spare;

  IterationState* At(int64_t iter) const { return iterations[iter - iterations.front()->iter]; }
};

// A frame's mutex, held only when the step runs on a pool: a step on one
// thread has nobody to exclude (measured: the uncontended lock pairs were
// a fifth of a scalar loop's iteration).
class FrameLock {
 public:
  FrameLock(FrameState* f, bool threaded) : mu_(threaded ? &f->mu : nullptr) {
    if (mu_) mu_->lock();
  }
  ~FrameLock() {
    if (mu_) mu_->unlock();
  }
  FrameLock(const FrameLock&) = delete;
  FrameLock& operator=(const FrameLock&) = delete;

 private:
  std::mutex* mu_;
};

struct Tagged {
  int item;
  FrameState* frame;
  IterationState* iter;
  bool dead;
};

// An iteration's ref slots.
struct IterationRefs {
  Var** inputs;
  Var** outputs;
  Var** in(const NodeItem&) const { return inputs; }
  Var** out(const NodeItem&) const { return outputs; }
};

class FrameRunner {
 public:
  FrameRunner(const std::vector<NodeItem>& items, const FramePlan& plan, bool has_refs, StepState* s)
      : items_(items), plan_(plan), has_refs_(has_refs), s_(s), threaded_(s->group != nullptr),
        out_values_(std::make_unique<Tensor[]>(plan.max_outputs)),
        out_refs_(std::make_unique<Var*[]>(plan.max_outputs)) {}

  // Runs the graph's roots in the root frame's iteration 0.
  void Start(FrameState* root, const std::vector<int>& roots) {
    IterationState* it = NewIteration(root);
    std::vector<Tagged> ready;
    for (int r : roots) {
      ++it->outstanding_ops;
      ready.push_back({r, root, it, false});
    }
    for (const Tagged& t : ready) Process(t);
  }

  // Runs `first` and, depth-first on this thread, what it makes ready;
  // expensive extra work goes to the pool when there is one.
  void Process(Tagged first) {
    std::vector<Tagged> stack{first};
    Drain(&stack);
  }

  // Hands on the outputs of an asynchronous kernel that has completed,
  // then runs what that makes ready.
  void Resume(AsyncNode* node) {
    std::vector<Tagged> ready, stack;
    if (!Complete(static_cast<TaggedAsyncNode*>(node), &ready)) return;
    Schedule(ready, &stack);
    Drain(&stack);
  }

 private:
  // An asynchronous kernel's call in a frame: where it runs, and its own
  // outputs (the runner's are reused by the next node).
  struct TaggedAsyncNode : AsyncNode {
    TaggedAsyncNode(const Tagged& t, int num_outputs)
        : tag(t), outs(std::make_unique<Tensor[]>(num_outputs)), refs(std::make_unique<Var*[]>(num_outputs)) {}
    Tagged tag;
    std::unique_ptr<Tensor[]> outs;
    std::unique_ptr<Var*[]> refs;
  };

  void Drain(std::vector<Tagged>* stack) {
    std::vector<Tagged> ready;
    while (!stack->empty()) {
      const Tagged cur = stack->back();
      stack->pop_back();
      // A failed step abandons its frames; the step's end frees them.
      if (s_->failed.load(std::memory_order_relaxed)) continue;
      const std::atomic<bool>* cancelled = s_->args->cancelled;
      if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
        RecordError(s_, errors::Cancelled("Session has been closed."));
        continue;
      }
      ready.clear();
      if (!RunTagged(cur, &ready)) continue;
      Schedule(ready, stack);
    }
  }

  // Keeps the inexpensive nodes and one expensive one for this thread.
  void Schedule(const std::vector<Tagged>& ready, std::vector<Tagged>* stack) {
    bool kept_expensive = false;
    for (const Tagged& t : ready) {
      if (items_[t.item].inexpensive || s_->group == nullptr || !kept_expensive) {
        kept_expensive |= !items_[t.item].inexpensive;
        stack->push_back(t);
      } else {
        s_->group->run([items = &items_, plan = &plan_, has_refs = has_refs_, s = s_, t] {
          FrameRunner(*items, *plan, has_refs, s).Process(t);
        });
      }
    }
  }

  // Starts an asynchronous kernel; true when it completed at once and its
  // outputs were handed on.
  [[gnu::noinline]] bool RunAsync(const Tagged& cur, std::vector<Tagged>* ready) {
    const NodeItem& item = items_[cur.item];
    const FramePlan::Item& p = plan_.items[cur.item];
    IterationState* it = cur.iter;
    auto* n = new TaggedAsyncNode(cur, item.num_outputs);
    n->item = cur.item;
    Var** ref_inputs = has_refs_ ? &it->ref_slots[p.local_input_start] : nullptr;
    NodeRunner<IterationRefs> runner(s_, IterationRefs{ref_inputs, n->refs.get()});
    switch (runner.StartAsync(item, &it->slots[p.local_input_start], n->outs.get(), n)) {
      case NodeRunner<IterationRefs>::AsyncStart::kPending:
        return false;  // the step's driver resumes it
      case NodeRunner<IterationRefs>::AsyncStart::kFailed:
        delete n;
        return false;
      case NodeRunner<IterationRefs>::AsyncStart::kDone:
        break;
    }
    return Complete(n, ready);
  }

  // Ends an asynchronous kernel's call (frees `n`); true when its outputs
  // were handed on.
  bool Complete(TaggedAsyncNode* n, std::vector<Tagged>* ready) {
    std::unique_ptr<TaggedAsyncNode> owned(n);
    const NodeItem& item = items_[n->tag.item];
    Var** ref_inputs = has_refs_ ? &n->tag.iter->ref_slots[plan_.items[n->tag.item].local_input_start] : nullptr;
    NodeRunner<IterationRefs> runner(s_, IterationRefs{ref_inputs, n->refs.get()});
    if (n->dead_output) {  // a _Recv of a dead value: its consumers are dead
      Propagate(n->tag, n->outs.get(), n->refs.get(), true, -1, ready);
      return true;
    }
    if (!runner.FinishAsync(item, n) || s_->failed.load(std::memory_order_relaxed)) return false;
    Propagate(n->tag, n->outs.get(), n->refs.get(), false, -1, ready);
    return true;
  }
  // Runs (or, dead, skips) one node and hands its outputs on.
  bool RunTagged(const Tagged& cur, std::vector<Tagged>* ready) {
    const NodeItem& item = items_[cur.item];
    const FramePlan::Item& p = plan_.items[cur.item];
    IterationState* it = cur.iter;
    Tensor* inputs = &it->slots[p.local_input_start];
    Var** ref_inputs = has_refs_ ? &it->ref_slots[p.local_input_start] : nullptr;
    Tensor* values = out_values_.get();
    Var** refs = out_refs_.get();
    // ControlTrigger is never dead.
    const bool dead = cur.dead && item.kind != NodeItem::Kind::kControlTrigger;
    int live_output = -1;  // a Switch's one live output
    NodeRunner<IterationRefs> runner(s_, IterationRefs{ref_inputs, refs});
    if (dead) {
      // Inputs that arrived live before a dead one.
      ClearInputs(item, inputs, ref_inputs);
      // Its _Recv's consumers must learn it (and not wait forever).
      if (item.is_send) [[unlikely]] SendDeadValue(item.kernel, s_);
    } else if (item.is_async) [[unlikely]] {
      return RunAsync(cur, ready);
    } else if (item.kind == NodeItem::Kind::kKernel || item.kind == NodeItem::Kind::kArg ||
               item.kind == NodeItem::Kind::kRetval) {
      if (!runner.Run(item, inputs, values)) {
        ClearOutputs(item);
        return false;
      }
    } else {
      const int64_t start = s_->args->stats ? NowNanos() : 0;
      if (item.has_ref_inputs && !runner.ReadRefInputs(item, inputs)) return false;
      int from = 0;  // the input the primitive forwards
      switch (item.kind) {
        case NodeItem::Kind::kSwitch: {
          const Tensor& pred = inputs[1];
          if (pred.dtype() != GR_BOOL || pred.dims() != 0) {
            RecordError(s_, errors::InvalidArgument(item.error_prefix, ": the predicate (input 1) must be a bool ",
                                                    "scalar, but it is ", DataTypeString(pred.dtype()), " ",
                                                    pred.shape().DebugString()));
            ClearInputs(item, inputs, ref_inputs);
            return false;
          }
          live_output = *pred.data<bool>() ? 1 : 0;
          inputs[1] = Tensor();
          break;
        }
        case NodeItem::Kind::kMerge:
          from = -it->dead[p.local] - 1;
          values[1] = plan_.merge_index[from];
          break;
        default:
          break;
      }
      if (item.kind != NodeItem::Kind::kControlTrigger) {
        const int to = live_output >= 0 ? live_output : 0;
        values[to] = std::move(inputs[from]);
        if (ref_inputs != nullptr) {
          refs[to] = ref_inputs[from];
          ref_inputs[from] = nullptr;
        }
      }
      if (s_->args->stats) runner.RecordStats(item, start, values);
    }
    Propagate(cur, values, refs, dead, live_output, ready);
    ClearOutputs(item);
    return true;
  }

  // What Propagate copied rather than moved (or nobody consumed).
  void ClearOutputs(const NodeItem& item) {
    for (int i = 0; i < item.num_outputs; ++i) {
      if (out_values_[i].IsInitialized()) out_values_[i] = Tensor();
      out_refs_[i] = nullptr;
    }
  }

  static void ClearInputs(const NodeItem& item, Tensor* inputs, Var** ref_inputs) {
    for (int i = 0; i < item.num_inputs; ++i) {
      inputs[i] = Tensor();
      if (ref_inputs != nullptr) ref_inputs[i] = nullptr;
    }
  }

  void Propagate(const Tagged& cur, Tensor* values, Var** refs, bool dead, int live_output,
                 std::vector<Tagged>* ready) {
    const NodeItem& item = items_[cur.item];
    const FramePlan::Item& p = plan_.items[cur.item];
    FrameState* f = cur.frame;
    IterationState* it = cur.iter;
    switch (item.kind) {
      case NodeItem::Kind::kEnter: {
        FrameState* child;
        {
          FrameLock lock(f, threaded_);
          child = ChildFrame(f, it, p.child_frame);
        }
        bool child_done;
        {
          FrameLock lock(child, threaded_);
          if (p.constant_enter) {
            // Visible to every iteration, present and future.
            child->invariants.push_back({cur.item, values[0], refs[0], dead});
            for (IterationState* ci : child->iterations) Deliver(item, values, refs, dead, -1, true, child, ci, ready);
          } else {
            Deliver(item, values, refs, dead, -1, false, child, child->iterations.front(), ready);
          }
          --child->pending_enters;
          child_done = CleanupIterations(child, ready);
        }
        if (child_done) FrameDone(child, ready);
        break;
      }
      case NodeItem::Kind::kExit:
        // A dead Exit says nothing yet: the loop may still end live. The
        // frame's end sends dead the Exits that never sent a value.
        if (!dead) {
          {
            FrameLock lock(f, threaded_);
            f->exit_delivered[p.exit_index] = 1;
          }
          FrameLock lock(f->parent, threaded_);
          Deliver(item, values, refs, false, -1, false, f->parent, f->parent_iteration, ready);
        }
        break;
      case NodeItem::Kind::kNextIteration: {
        if (dead) break;  // no new iteration: the loop is ending
        bool done;
        {
          FrameLock lock(f, threaded_);
          if (it->iter < f->newest) {
            Deliver(item, values, refs, false, -1, false, f, f->At(it->iter + 1), ready);
          } else if (static_cast<int>(f->iterations.size()) < f->info->parallel_iterations) {
            IterationState* next = NewIteration(f, ready);
            if (next != nullptr) Deliver(item, values, refs, false, -1, false, f, next, ready);
          } else {
            f->deferred.push_back({cur.item, std::move(values[0]), refs[0], false});
          }
          --it->outstanding_ops;
          done = CleanupIterations(f, ready);
        }
        if (done) FrameDone(f, ready);
        return;
      }
      default: {
        bool done;
        {
          FrameLock lock(f, threaded_);
          Deliver(item, values, refs, dead, live_output, false, f, it, ready);
          --it->outstanding_ops;
          done = CleanupIterations(f, ready);
        }
        if (done) FrameDone(f, ready);
        return;
      }
    }
    bool done;
    {
      FrameLock lock(f, threaded_);
      --it->outstanding_ops;
      done = CleanupIterations(f, ready);
    }
    if (done) FrameDone(f, ready);
  }

  // Hands `item`'s outputs to its consumers in iteration `it` of frame `f`
  // (f->mu held). `copy`: the values are kept (invariants) rather than
  // moved on their last use.
  void Deliver(const NodeItem& item, Tensor* values, Var** refs, bool node_dead, int live_output, bool copy,
               FrameState* f, IterationState* it, std::vector<Tagged>* ready) {
    for (const OutEdge& e : item.out) {
      const bool control = e.dst_slot < 0;
      const bool edge_dead = node_dead || (!control && live_output >= 0 && e.src_output != live_output);
      const NodeItem& dst = items_[e.dst_item];
      const FramePlan::Item& d = plan_.items[e.dst_item];
      int32_t& pending = it->pending[d.local];
      int32_t& dead = it->dead[d.local];
      const int input = control ? -1 : e.dst_slot - dst.input_start;
      if (dst.kind == NodeItem::Kind::kMerge) {
        if (control) {
          if (--pending == 0) MakeReady(e.dst_item, f, it, dead >= 0, ready);
        } else if (dead < 0) {
          // It has taken a live input: later ones are ignored, as in TensorFlow.
        } else if (!edge_dead) {
          dead = -(input + 1);
          Store(e, values, refs, copy, it, d.local_input_start + input);
          if (--pending == 0) MakeReady(e.dst_item, f, it, false, ready);
        } else if (++dead == d.merge_dead_threshold && --pending == 0) {
          MakeReady(e.dst_item, f, it, true, ready);
        }
        continue;
      }
      if (edge_dead) ++dead;
      else if (!control) Store(e, values, refs, copy, it, d.local_input_start + input);
      if (--pending == 0) MakeReady(e.dst_item, f, it, dead > 0, ready);
    }
  }

  static void Store(const OutEdge& e, Tensor* values, Var** refs, bool copy, IterationState* it, int slot) {
    if (e.ref) it->ref_slots[slot] = refs[e.src_output];
    else if (e.last_use && !copy) it->slots[slot] = std::move(values[e.src_output]);
    else it->slots[slot] = values[e.src_output];
  }

  static void MakeReady(int item, FrameState* f, IterationState* it, bool dead, std::vector<Tagged>* ready) {
    ++it->outstanding_ops;
    ready->push_back({item, f, it, dead});
  }

  // The instance of frame `frame` entered from iteration `it` of `f`
  // (f->mu held), made with its iteration 0 on first use.
  FrameState* ChildFrame(FrameState* f, IterationState* it, int frame) {
    auto [pos, added] = f->children.try_emplace({frame, it->iter}, nullptr);
    if (added) {
      pos->second = new FrameState(&plan_.frames[frame], frame, f, it);
      ++it->outstanding_frames;
      NewIteration(pos->second);
    }
    return pos->second;
  }

  // Appends iteration newest + 1 to `f` (f->mu held) and hands it the loop
  // invariants. Null when the step is ending (failed, or past its deadline).
  IterationState* NewIteration(FrameState* f, std::vector<Tagged>* ready = nullptr) {
    const int64_t deadline = s_->args->deadline_nanos;
    if (deadline != 0 && NowNanos() > deadline) {
      RecordError(s_, errors::DeadlineExceeded("The step ran past its deadline (RunOptions.timeout_in_ms) in ",
                                               "while loop frame '", f->info->name, "' at iteration ",
                                               f->newest + 1));
      return nullptr;
    }
    IterationState* it;
    const int n = static_cast<int>(f->info->items.size());
    if (!f->spare.empty()) {
      it = f->spare.back();
      f->spare.pop_back();
    } else {
      it = new IterationState;
      it->slots = std::make_unique<Tensor[]>(f->info->num_slots);
      if (has_refs_) it->ref_slots = std::make_unique<Var*[]>(f->info->num_slots);
      it->pending = std::make_unique<int32_t[]>(n);
      it->dead = std::make_unique<int32_t[]>(n);
    }
    it->iter = ++f->newest;
    std::copy(f->info->initial_pending.begin(), f->info->initial_pending.end(), it->pending.get());
    std::fill(it->dead.get(), it->dead.get() + n, 0);
    it->outstanding_ops = 0;
    it->outstanding_frames = 0;
    f->iterations.push_back(it);
    for (HeldValue& v : f->invariants)
      Deliver(items_[v.item], &v.value, &v.ref, v.dead, -1, true, f, it, ready);
    return it;
  }

  // Retires the finished iterations at the front of `f` (f->mu held),
  // starting a deferred one as each frees a slot. True when the frame
  // instance has ended (the root never does: it ends with the step).
  bool CleanupIterations(FrameState* f, std::vector<Tagged>* ready) {
    if (f->parent == nullptr) return false;
    while (!f->iterations.empty()) {
      IterationState* front = f->iterations.front();
      if (front->outstanding_ops > 0 || front->outstanding_frames > 0) break;
      if (front->iter == 0 && f->pending_enters > 0) break;
      f->iterations.pop_front();
      // Values a dead node or a Merge left behind.
      for (int i = 0; i < f->info->num_slots; ++i) front->slots[i] = Tensor();
      if (has_refs_) std::fill(front->ref_slots.get(), front->ref_slots.get() + f->info->num_slots, nullptr);
      f->spare.push_back(front);
      if (!f->deferred.empty()) {
        IterationState* next = NewIteration(f, ready);
        if (next == nullptr) return false;  // the step is ending
        for (HeldValue& v : f->deferred)
          Deliver(items_[v.item], &v.value, &v.ref, false, -1, false, f, next, ready);
        f->deferred.clear();
      }
    }
    return f->iterations.empty() && f->pending_enters == 0;
  }

  // `f` has ended: its Exits that sent nothing send dead values, and its
  // parent iteration stops waiting for it (which may end the parent too).
  void FrameDone(FrameState* f, std::vector<Tagged>* ready) {
    while (f != nullptr) {
      FrameState* parent = f->parent;
      IterationState* pit = f->parent_iteration;
      bool parent_done;
      {
        FrameLock lock(parent, threaded_);
        for (size_t x = 0; x < f->info->exits.size(); ++x)
          if (!f->exit_delivered[x])
            Deliver(items_[f->info->exits[x]], nullptr, nullptr, true, -1, false, parent, pit, ready);
        parent->children.erase({f->id, pit->iter});
        --pit->outstanding_frames;
        parent_done = CleanupIterations(parent, ready);
      }
      delete f;
      f = parent_done ? parent : nullptr;
    }
  }

  const std::vector<NodeItem>& items_;
  const FramePlan& plan_;
  const bool has_refs_;
  StepState* s_;
  const bool threaded_;
  // The running node's outputs while they are handed on (reused: a Tensor
  // array constructed per node cost more than the node).
  std::unique_ptr<Tensor[]> out_values_;
  std::unique_ptr<Var*[]> out_refs_;
};

}  // namespace

Status Executor::PlanFrames(const Graph& graph, const std::vector<int>& item_of) {
  FrameLayout layout;
  GR_RETURN_IF_ERROR(ComputeFrameLayout(graph, &layout));
  auto plan = std::make_unique<FramePlan>();
  for (const FrameLayout::Frame& lf : layout.frames) {
    FramePlan::Frame f;
    f.name = lf.name;
    f.parent = lf.parent;
    f.parallel_iterations = lf.parallel_iterations;
    plan->frames.push_back(std::move(f));
  }
  plan->items.resize(items_.size());
  std::vector<const Node*> node_of(items_.size(), nullptr);
  for (Node* n : graph.op_nodes())
    if (item_of[n->id()] >= 0) node_of[item_of[n->id()]] = n;
  int max_merge_inputs = 0;
  for (size_t i = 0; i < items_.size(); ++i) {
    const NodeItem& item = items_[i];
    const Node* n = node_of[i];
    FramePlan::Item& p = plan->items[i];
    p.frame = layout.frame_of[n->id()];
    FramePlan::Frame& frame = plan->frames[p.frame];
    p.local = static_cast<int>(frame.items.size());
    frame.items.push_back(static_cast<int>(i));
    p.local_input_start = frame.num_slots;
    frame.num_slots += item.num_inputs;
    int pending = 0, controls = 0;
    for (const Edge* e : n->in_edges()) {
      if (!e->src()->IsOp()) continue;
      ++pending;
      if (e->IsControlEdge()) ++controls;
      else if (ControlFlowOpOf(e->src()->op()) != ControlFlowOp::kNextIteration) ++p.merge_dead_threshold;
    }
    // A Merge waits for its control inputs and one live (or every dead) data input.
    frame.initial_pending.push_back(item.kind == NodeItem::Kind::kMerge ? controls + 1 : pending);
    if (item.kind == NodeItem::Kind::kMerge) max_merge_inputs = std::max(max_merge_inputs, item.num_inputs);
    if (item.kind == NodeItem::Kind::kEnter) {
      p.child_frame = layout.OutputFrame(*n);
      const proto::AttrValue* constant = FindAttr(n->def(), "is_constant");
      p.constant_enter = constant != nullptr && constant->b();
      ++plan->frames[p.child_frame].num_enters;
    } else if (item.kind == NodeItem::Kind::kExit) {
      p.exit_index = static_cast<int>(frame.exits.size());
      frame.exits.push_back(static_cast<int>(i));
    } else if (item.kind == NodeItem::Kind::kRetval && p.frame != 0) {
      const Edge* in = n->input_edge(0);
      return errors::InvalidArgument("Fetch '", in ? in->src()->name() : n->name(), "' is inside while loop frame '",
                                     frame.name, "': a step can fetch only tensors outside loops (a loop's Exit)");
    }
  }
  for (const NodeItem& item : items_) plan->max_outputs = std::max(plan->max_outputs, item.num_outputs);
  for (int k = 0; k < max_merge_inputs; ++k) plan->merge_index.push_back(Tensor::Scalar<int32_t>(GR_INT32, k));
  frames_ = std::move(plan);
  return Status::OK();
}

void Executor::RunFrames(StepState* s) {
  FrameState root(&frames_->frames[0], 0, nullptr, nullptr);
  DriveStep(
      s, [&] { FrameRunner(items_, *frames_, has_refs_, s).Start(&root, roots_); },
      [&](AsyncNode* n) { FrameRunner(items_, *frames_, has_refs_, s).Resume(n); });
  // Every asynchronous kernel has completed: `root` frees what a failed or cancelled step left: frames, iterations
  // and the tensors in their slots.
}

}  // namespace graphrt
