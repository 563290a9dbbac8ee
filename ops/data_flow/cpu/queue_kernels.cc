// CPU kernels of TF1's queues (TensorFlow's queue semantics and messages):
// FIFOQueueV2, PaddingFIFOQueueV2 and RandomShuffleQueueV2 make a queue in
// the session's resource manager (shared by shared_name, else private to
// the node: "_<k>_<node name>"); QueueEnqueue(Many)V2 and
// QueueDequeue(Many|UpTo)V2 are asynchronous kernels. A request the queue
// cannot serve yet (full, empty) waits in the queue's request list, holding
// no thread, until another request makes room or elements, the queue is
// closed, or its step is cancelled (Session::Close, the Run's deadline,
// another node's error). Elements are the enqueued tensors themselves
// (shared, never written); EnqueueMany's slices are copies.
//
// timeout_ms is accepted and ignored, as in TensorFlow ("not supported
// yet"): the Run's deadline bounds a wait.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <list>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "array/array_util.h"
#include "array/cpu/copy_util.h"
#include "data_flow/cpu/data_flow_util.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using data_flow::ResourceRef;
using Tuple = std::vector<Tensor>;  // one element: a tensor per component

constexpr const char* kType = "Queue";

// (The SDK's errors:: has no CANCELLED maker.)
template <typename... Args>
Status CancelledError(const Args&... args) {
  return Status(GR_CANCELLED, errors::StrCat(args...));
}

std::string TypesString(const std::vector<DataType>& types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + DataTypeName(types[i]);
  return s;
}

std::string ShapesString(const std::vector<PartialShape>& shapes) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + sf::ShapeString(shapes[i]);
  return s;
}

bool Compatible(const PartialShape& s, const std::vector<int64_t>& d) {
  if (!s.known_rank()) return true;
  if (s.rank != static_cast<int32_t>(d.size())) return false;
  for (size_t i = 0; i < d.size(); ++i)
    if (s.dims[i] >= 0 && s.dims[i] != d[i]) return false;
  return true;
}

bool SameShapes(const std::vector<PartialShape>& a, const std::vector<PartialShape>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].rank != b[i].rank || a[i].dims != b[i].dims) return false;
  return true;
}

// What a queue-making node asks for; a shared queue must match it.
struct QueueSpec {
  enum class Kind { kFifo, kPadding, kRandom };
  Kind kind = Kind::kFifo;
  std::vector<DataType> types;
  std::vector<PartialShape> shapes;  // empty: unspecified (not for kPadding)
  int64_t capacity = 0;
  int64_t min_after_dequeue = 0;  // kRandom
  int64_t seed = 0, seed2 = 0;    // kRandom

  const char* TypeName() const {
    switch (kind) {
      case Kind::kPadding: return "PaddingFIFOQueue";
      case Kind::kRandom: return "RandomShuffleQueue";
      default: return "FIFOQueue";
    }
  }
};

class Queue;

// One enqueue or dequeue waiting in a queue's request list. Owned by the
// queue while listed; whoever takes it out of the list finishes it.
struct Request {
  OpKernelContext* ctx = nullptr;
  AsyncOpKernel::DoneCallback done;
  ResourceRef<Queue> queue;
  int64_t token = -1;  // its step's cancellation callback
  bool enqueue = false;
  // Enqueue: the elements, and how many are in the queue already.
  std::vector<Tuple> elements;
  size_t next = 0;
  // Dequeue: how many it wants (single: one, without the batch dim), may
  // it take fewer once the queue is closed (UpTo), and what it has taken.
  int64_t wanted = 1;
  bool single = true;
  bool up_to = false;
  std::vector<Tuple> taken;
  Status status;
};

class Queue {
 public:
  Queue(std::string name, QueueSpec spec)
      : name_(std::move(name)), spec_(std::move(spec)), rng_(SeedOf(spec_)) {}

  const std::string& name() const { return name_; }
  const QueueSpec& spec() const { return spec_; }

  // A queue found by shared_name must be the one the node describes.
  Status Matches(const QueueSpec& want) const {
    const std::string who = errors::StrCat("Shared queue '", name_, "'");
    if (want.kind != spec_.kind)
      return errors::InvalidArgument(who, " is a ", spec_.TypeName(), ", but a ", want.TypeName(), " was requested");
    if (want.types != spec_.types)
      return errors::InvalidArgument(who, " has component types ", TypesString(spec_.types),
                                     " but requested component types were ", TypesString(want.types));
    if (!SameShapes(want.shapes, spec_.shapes))
      return errors::InvalidArgument(who, " has component shapes ", ShapesString(spec_.shapes),
                                     " but requested component shapes were ", ShapesString(want.shapes));
    if (want.capacity != spec_.capacity)
      return errors::InvalidArgument(who, " has capacity ", spec_.capacity, " but requested capacity was ",
                                     want.capacity);
    if (want.min_after_dequeue != spec_.min_after_dequeue)
      return errors::InvalidArgument(who, " has min_after_dequeue ", spec_.min_after_dequeue,
                                     " but requested min_after_dequeue was ", want.min_after_dequeue);
    return Status();
  }

  // Component `i` of an element must have a shape its spec allows.
  Status CheckElementShape(size_t i, const std::vector<int64_t>& dims) const {
    if (spec_.shapes.empty() || Compatible(spec_.shapes[i], dims)) return Status();
    return errors::InvalidArgument("Shape mismatch in tuple component ", i, ". Expected ",
                                   sf::ShapeString(spec_.shapes[i]), ", got ",
                                   sf::ShapeString(PartialShape::Known(dims)));
  }

  // Takes `r` (a new request). Serves what it can; the request waits for
  // the rest, ended early by its step's cancellation. Finishes every
  // request this completes (outside the lock).
  void Submit(Request* r) {
    std::vector<Request*> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (r->enqueue && closed_) {
        r->status = CancelledError(spec_.TypeName(), " '", name_, "' is closed.");
        finished.push_back(r);
      } else {
        (r->enqueue ? enqueues_ : dequeues_).push_back(r);
        Flush(&finished);
        if (std::find(finished.begin(), finished.end(), r) == finished.end()) Wait(r, &finished);
      }
    }
    for (Request* f : finished) Finish(f);
  }

  void Close(bool cancel_pending_enqueues) {
    std::vector<Request*> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      if (cancel_pending_enqueues) {
        for (Request* r : enqueues_) {
          r->status = CancelledError("Enqueue operation was cancelled");
          finished.push_back(r);
        }
        enqueues_.clear();
      }
      Flush(&finished);
    }
    for (Request* f : finished) Finish(f);
  }

  int64_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(elements_.size());
  }
  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  static uint64_t SeedOf(const QueueSpec& s) {
    // TensorFlow's rule: seed and seed2 both 0 means a nondeterministic seed.
    if (s.seed == 0 && s.seed2 == 0) return std::random_device()();
    return (static_cast<uint64_t>(s.seed) << 32) ^ static_cast<uint64_t>(s.seed2);
  }

  // `r` could not be served at once (mu_ held): it waits, told when its
  // step is cancelled. A step cancelled already ends it now.
  void Wait(Request* r, std::vector<Request*>* finished) {
    if (r->ctx->OnCancel(&Queue::CancelRequest, r, &r->token)) return;
    Unlist(r);
    r->status = Cancelled(r);
    finished->push_back(r);
  }

  Status Cancelled(const Request* r) const {
    return CancelledError(r->enqueue ? "Enqueue" : "Dequeue", " operation was cancelled");
  }

  // Runs on the cancelling thread. The request is the queue's while listed;
  // once someone else took it out, they finish it (after waiting for this
  // callback to return), so it is still alive here.
  static void CancelRequest(void* arg) {
    auto* r = static_cast<Request*>(arg);
    Queue* q = r->queue.get();
    std::vector<Request*> finished;
    {
      std::lock_guard<std::mutex> lock(q->mu_);
      if (!q->Unlist(r)) return;
      r->token = -1;  // this callback has run
      r->status = q->Cancelled(r);
      q->Restore(r);
      finished.push_back(r);
      q->Flush(&finished);  // what it held back may serve others
    }
    for (Request* f : finished) Finish(f);
  }

  // Takes `r` out of its request list (mu_ held); false when not there.
  bool Unlist(Request* r) {
    std::list<Request*>& list = r->enqueue ? enqueues_ : dequeues_;
    auto it = std::find(list.begin(), list.end(), r);
    if (it == list.end()) return false;
    list.erase(it);
    return true;
  }

  // A dequeue that fails puts back what it took, at the front, in order.
  void Restore(Request* r) {
    for (auto it = r->taken.rbegin(); it != r->taken.rend(); ++it) elements_.push_front(std::move(*it));
    r->taken.clear();
  }

  // Elements a dequeue may take now: a RandomShuffleQueue keeps
  // min_after_dequeue of them until it is closed.
  int64_t Available() const {
    int64_t n = static_cast<int64_t>(elements_.size());
    if (spec_.kind == QueueSpec::Kind::kRandom && !closed_) n -= spec_.min_after_dequeue;
    return std::max<int64_t>(n, 0);
  }

  Tuple TakeOne() {
    size_t at = 0;
    if (spec_.kind == QueueSpec::Kind::kRandom) {
      at = std::uniform_int_distribution<size_t>(0, elements_.size() - 1)(rng_);
      std::swap(elements_[at], elements_.back());
      Tuple t = std::move(elements_.back());
      elements_.pop_back();
      return t;
    }
    Tuple t = std::move(elements_.front());
    elements_.pop_front();
    return t;
  }

  // Serves the waiting requests in order while any makes progress (mu_
  // held); the completed ones go to `finished`.
  void Flush(std::vector<Request*>* finished) {
    bool progress = true;
    while (progress) {
      progress = false;
      while (!enqueues_.empty()) {
        Request* r = enqueues_.front();
        while (r->next < r->elements.size() && static_cast<int64_t>(elements_.size()) < spec_.capacity) {
          elements_.push_back(std::move(r->elements[r->next++]));
          progress = true;
        }
        if (r->next < r->elements.size()) break;  // full
        enqueues_.pop_front();
        finished->push_back(r);
        progress = true;
      }
      while (!dequeues_.empty()) {
        Request* r = dequeues_.front();
        for (int64_t n = std::min(r->wanted - static_cast<int64_t>(r->taken.size()), Available()); n > 0; --n) {
          r->taken.push_back(TakeOne());
          progress = true;
        }
        const int64_t missing = r->wanted - static_cast<int64_t>(r->taken.size());
        if (missing > 0) {
          // Open, or closed with enqueues that will get in: wait for them.
          if (!closed_ || !enqueues_.empty()) break;
          if (!r->up_to || r->taken.empty()) {
            r->status = errors::OutOfRange(spec_.TypeName(), " '", name_,
                                           "' is closed and has insufficient elements (requested ", missing,
                                           ", current size ", elements_.size(), ")");
            Restore(r);
          }
        }
        dequeues_.pop_front();
        finished->push_back(r);
        progress = true;
      }
    }
  }

  // Ends a request taken out of its list: its outputs or error, then done.
  static void Finish(Request* r) {
    // Waits for a cancellation callback running on another thread.
    if (r->token >= 0) r->ctx->RemoveOnCancel(r->token);
    if (r->status.ok() && !r->enqueue) r->status = r->queue->SetOutputs(r);
    if (!r->status.ok()) r->ctx->SetStatus(r->status);
    AsyncOpKernel::DoneCallback done = std::move(r->done);
    delete r;
    done();
  }

  // A dequeue's outputs: the element itself, or the batch of its taken
  // elements along a new 0th dimension (padded with zeros to the largest
  // element per dimension in a PaddingFIFOQueue).
  Status SetOutputs(Request* r) const {
    OpKernelContext* ctx = r->ctx;
    const int64_t count = static_cast<int64_t>(r->taken.size());
    for (size_t c = 0; c < spec_.types.size(); ++c) {
      if (r->single) {
        GR_RETURN_IF_ERROR_SDK(ctx->set_output(static_cast<int>(c), r->taken[0][c]));
        continue;
      }
      // The element shape: the spec's (n = 0 has no element to ask), else the
      // per-dimension maximum over the batch.
      std::vector<int64_t> elem;
      if (count == 0) {
        for (int64_t d : spec_.shapes[c].dims) elem.push_back(std::max<int64_t>(d, 0));
      } else {
        elem = r->taken[0][c].view().dims();
        for (const Tuple& t : r->taken) {
          const TensorView v = t[c].view();
          for (int d = 0; d < v.rank(); ++d) elem[d] = std::max(elem[d], v.dim(d));
        }
      }
      std::vector<int64_t> dims{count};
      dims.insert(dims.end(), elem.begin(), elem.end());
      int64_t elem_size = 0, total = 0;
      GR_RETURN_IF_ERROR_SDK(NumElementsOf(elem, &elem_size));
      GR_RETURN_IF_ERROR_SDK(NumElementsOf(dims, &total));
      TensorView out;
      GR_RETURN_IF_ERROR_SDK(ctx->allocate_output(static_cast<int>(c), dims, &out));
      const DataType dtype = spec_.types[c];
      const int es = array::ElementSize(dtype);
      bool padded = false;
      for (const Tuple& t : r->taken) padded |= t[c].view().NumElements() != elem_size;
      // Zeros where an element is smaller (a fresh string output is empty).
      if (padded && dtype != GR_STRING && total > 0) std::memset(out.raw_data(), 0, static_cast<size_t>(total * es));
      const array::Dims out_strides = array::RowMajorStrides(elem.data(), static_cast<int>(elem.size()));
      for (int64_t i = 0; i < count; ++i) {
        const TensorView v = r->taken[i][c].view();
        if (!padded) {
          array::CopyElements(dtype, es, v.raw_data(), 0, &out, i * elem_size, elem_size);
          continue;
        }
        const array::Dims in_strides = array::RowMajorStrides(v.dims_data(), v.rank());
        array::CopyBox box;
        for (int d = 0; d < v.rank(); ++d) box.Add(v.dim(d), in_strides[d], out_strides[d]);
        if (v.NumElements() > 0)
          array::StridedCopy(ctx, dtype, box, v.raw_data(), 0, array::TargetOf(&out), i * elem_size);
      }
    }
    return Status();
  }

  const std::string name_;
  const QueueSpec spec_;
  std::mutex mu_;
  bool closed_ = false;
  std::deque<Tuple> elements_;
  std::list<Request*> enqueues_, dequeues_;
  std::mt19937_64 rng_;
};

// ------------------------------------------------------------- kernels

// FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2: the queue's handle.
// The first Run makes (or, shared, finds) the queue; later Runs hand out
// the same handle (the kernel is the session's: the op is stateful).
class QueueOp : public OpKernel {
 public:
  explicit QueueOp(OpKernelConstruction* c) : OpKernel(c) {
    const std::string op = c->op();
    spec_.kind = op == "PaddingFIFOQueueV2"     ? QueueSpec::Kind::kPadding
                 : op == "RandomShuffleQueueV2" ? QueueSpec::Kind::kRandom
                                                : QueueSpec::Kind::kFifo;
    node_ = c->name();
    OP_REQUIRES_OK(c, c->GetAttr("component_types", &spec_.types));
    OP_REQUIRES_OK(c, c->GetAttr("shapes", &spec_.shapes));
    OP_REQUIRES_OK(c, c->GetAttr("capacity", &spec_.capacity));
    OP_REQUIRES_OK(c, c->GetAttr("container", &container_));
    OP_REQUIRES_OK(c, c->GetAttr("shared_name", &shared_name_));
    if (spec_.capacity < 0) spec_.capacity = std::numeric_limits<int32_t>::max();
    if (spec_.kind == QueueSpec::Kind::kPadding) {
      OP_REQUIRES(c, spec_.shapes.size() == spec_.types.size(),
                  errors::InvalidArgument("Shapes must be provided for all components, but received ",
                                          spec_.types.size(), " dtypes and ", spec_.shapes.size(), " shapes."));
      for (const PartialShape& s : spec_.shapes)
        OP_REQUIRES(c, s.known_rank(),
                    errors::InvalidArgument("PaddingFIFOQueue requires shapes of known rank, got ",
                                            sf::ShapeString(s)));
    } else {
      OP_REQUIRES(c, spec_.shapes.empty() || spec_.shapes.size() == spec_.types.size(),
                  errors::InvalidArgument("Different number of component types.  Types: ", TypesString(spec_.types),
                                          ", Shapes: ", ShapesString(spec_.shapes)));
      for (const PartialShape& s : spec_.shapes)
        OP_REQUIRES(c, s.fully_defined(),
                    errors::InvalidArgument(spec_.TypeName(), " requires fully defined shapes, got ",
                                            sf::ShapeString(s)));
    }
    for (const PartialShape& s : spec_.shapes) {
      int64_t unused = 0;
      std::vector<int64_t> known;
      for (int64_t d : s.dims) known.push_back(std::max<int64_t>(d, 0));
      OP_REQUIRES_OK(c, NumElementsOf(known, &unused));
    }
    if (spec_.kind == QueueSpec::Kind::kRandom) {
      OP_REQUIRES_OK(c, c->GetAttr("min_after_dequeue", &spec_.min_after_dequeue));
      OP_REQUIRES_OK(c, c->GetAttr("seed", &spec_.seed));
      OP_REQUIRES_OK(c, c->GetAttr("seed2", &spec_.seed2));
      OP_REQUIRES(c, spec_.min_after_dequeue >= 0,
                  errors::InvalidArgument("min_after_dequeue ", spec_.min_after_dequeue, " must be >= 0"));
      OP_REQUIRES(c, spec_.min_after_dequeue < spec_.capacity,
                  errors::InvalidArgument("min_after_dequeue ", spec_.min_after_dequeue, " must be < capacity ",
                                          spec_.capacity));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (name_.empty()) {
      std::string name = shared_name_;
      // TensorFlow's private name: "_<k>_<node>", k counting the resource
      // manager's (here: the session's) queues without a shared name.
      if (name.empty()) OP_REQUIRES_OK(ctx, PrivateName(ctx, &name));
      OP_REQUIRES_OK(ctx, FindOrMake(ctx, name));
      name_ = name;
    }
    OP_REQUIRES_OK(ctx, ctx->set_output_resource_handle(0, container_, name_, kType));
  }

 private:
  Status PrivateName(OpKernelContext* ctx, std::string* out) {
    struct Counter {
      std::atomic<int64_t> next{0};
    };
    auto make = [](void*, GR_StatusSink*) -> void* { return new Counter(); };
    ResourceRef<Counter> counter;
    const int32_t code = Api().ctx_lookup_resource(ctx->raw(), "", "__queue_private_names", "QueueNameCounter", make,
                                                   nullptr, &data_flow::DestroyObject<Counter>, counter.out());
    if (code != GR_OK) return Status(code, "naming queue " + node_ + " failed");
    *out = "_" + std::to_string(counter->next.fetch_add(1)) + "_" + node_;
    return Status();
  }

  Status FindOrMake(OpKernelContext* ctx, const std::string& name) {
    struct Make {
      const std::string* name;
      const QueueSpec* spec;
    } make{&name, &spec_};
    auto create = [](void* arg, GR_StatusSink*) -> void* {
      auto* m = static_cast<Make*>(arg);
      return new Queue(*m->name, *m->spec);
    };
    ResourceRef<Queue> queue;
    const int32_t code = Api().ctx_lookup_resource(ctx->raw(), container_.c_str(), name.c_str(), kType, create, &make,
                                                   &data_flow::DestroyObject<Queue>, queue.out());
    if (code != GR_OK) return Status(code, "making queue " + name + " failed");
    return queue->Matches(spec_);
  }

  QueueSpec spec_;
  std::string node_, container_, shared_name_;
  std::mutex mu_;
  std::string name_;  // once made
};

Status LookupQueue(OpKernelContext* ctx, ResourceRef<Queue>* queue) {
  return data_flow::LookupHandle(ctx, 0, kType, queue, nullptr, "closed sessions drop their queues");
}

Status SignatureMismatch(const std::vector<DataType>& have, const std::vector<DataType>& expected) {
  return errors::InvalidArgument("Signature mismatch, have: resource, ", TypesString(have),
                                 " expected: resource, ", TypesString(expected));
}

// Hands a prepared request to its queue; one whose preparation failed
// ends the call at once.
void Submit(Request* r, const Status& prepared) {
  if (!prepared.ok()) {
    r->ctx->SetStatus(prepared);
    AsyncOpKernel::DoneCallback done = std::move(r->done);
    delete r;
    done();
    return;
  }
  Queue* q = r->queue.get();
  q->Submit(r);
}

// QueueEnqueueV2 (one element: the inputs themselves) and
// QueueEnqueueManyV2 (the inputs' 0th-dimension slices, copied).
class EnqueueOp : public AsyncOpKernel {
 public:
  explicit EnqueueOp(OpKernelConstruction* c) : AsyncOpKernel(c), many_(std::string(c->op()) == "QueueEnqueueManyV2") {
    for (int i = 1; i < c->num_inputs(); ++i) types_.push_back(c->input_type(i));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto* r = new Request;
    r->ctx = ctx;
    r->done = std::move(done);
    r->enqueue = true;
    Submit(r, Prepare(ctx, r));
  }

 private:
  Status Prepare(OpKernelContext* ctx, Request* r) const {
    GR_RETURN_IF_ERROR_SDK(LookupQueue(ctx, &r->queue));
    const Queue& q = *r->queue.get();
    if (types_ != q.spec().types) return SignatureMismatch(types_, q.spec().types);
    const size_t n = types_.size();
    if (!many_) {
      Tuple t(n);
      for (size_t c = 0; c < n; ++c) {
        GR_RETURN_IF_ERROR_SDK(q.CheckElementShape(c, ctx->input(static_cast<int>(c) + 1).dims()));
        t[c] = ctx->input_tensor(static_cast<int>(c) + 1);
        if (!t[c].valid()) return errors::Internal("QueueEnqueueV2 could not take component ", c);
      }
      r->elements.push_back(std::move(t));
      return Status();
    }
    int64_t batch = -1;
    for (size_t c = 0; c < n; ++c) {
      const TensorView v = ctx->input(static_cast<int>(c) + 1);
      if (v.rank() == 0)
        return errors::InvalidArgument("Input tensor ", c, " must have rank at least 1 to enqueue many, got a scalar");
      if (batch < 0) batch = v.dim(0);
      if (v.dim(0) != batch)
        return errors::InvalidArgument("All input tensors must have the same size in the 0th dimension. Component 0 "
                                       "has ", batch, ", component ", c, " has ", v.dim(0));
      GR_RETURN_IF_ERROR_SDK(q.CheckElementShape(c, std::vector<int64_t>(v.dims_data() + 1, v.dims_data() + v.rank())));
      if (!array::Copyable(v.dtype())) return array::UnsupportedDtype("QueueEnqueueManyV2", v.dtype());
    }
    // Each element costs its tensors' bookkeeping even when empty: a batch of
    // empty elements is bounded by that, not by the input's (zero) bytes.
    int64_t input_elements = 0;
    for (size_t c = 0; c < n; ++c) input_elements += ctx->input(static_cast<int>(c) + 1).NumElements();
    if (input_elements == 0 && batch > (int64_t{1} << 20))
      return errors::InvalidArgument("EnqueueMany of ", batch, " empty elements: at most 2^20 are supported");
    r->elements.assign(static_cast<size_t>(batch), Tuple(n));
    for (size_t c = 0; c < n; ++c) {
      const TensorView v = ctx->input(static_cast<int>(c) + 1);
      const std::vector<int64_t> dims(v.dims_data() + 1, v.dims_data() + v.rank());
      int64_t row = 0;
      GR_RETURN_IF_ERROR_SDK(NumElementsOf(dims, &row));
      for (int64_t i = 0; i < batch; ++i) {
        Tensor slice(v.dtype(), dims);
        if (!slice.valid()) return errors::ResourceExhausted("no memory for a queue element of shape ",
                                                             sf::ShapeString(PartialShape::Known(dims)));
        TensorView dst = slice.view();
        array::CopyElements(v.dtype(), array::ElementSize(v.dtype()), v.raw_data(), i * row, &dst, 0, row);
        r->elements[static_cast<size_t>(i)][c] = std::move(slice);
      }
    }
    return Status();
  }

  const bool many_;
  std::vector<DataType> types_;
};

// QueueDequeueV2 (one element), QueueDequeueManyV2 (n, waiting for all of
// them) and QueueDequeueUpToV2 (n, or what a closed queue has left).
class DequeueOp : public AsyncOpKernel {
 public:
  explicit DequeueOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    const std::string op = c->op();
    single_ = op == "QueueDequeueV2";
    up_to_ = op == "QueueDequeueUpToV2";
    OP_REQUIRES_OK(c, c->GetAttr("component_types", &types_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto* r = new Request;
    r->ctx = ctx;
    r->done = std::move(done);
    r->single = single_;
    r->up_to = up_to_;
    Submit(r, Prepare(ctx, r));
  }

 private:
  Status Prepare(OpKernelContext* ctx, Request* r) const {
    GR_RETURN_IF_ERROR_SDK(LookupQueue(ctx, &r->queue));
    const QueueSpec& spec = r->queue->spec();
    if (types_ != spec.types) return errors::InvalidArgument(
        "Signature mismatch, have: resource expected: resource; outputs have: ", TypesString(types_),
        " expected: ", TypesString(spec.types));
    if (single_) return Status();
    const TensorView n = ctx->input(1);
    if (!n.IsScalar() || n.dtype() != GR_INT32)
      return errors::InvalidArgument("n must be an int32 scalar, got shape ", n.ShapeString());
    r->wanted = n.scalar<int32_t>();
    if (r->wanted < 0) return errors::InvalidArgument("Dequeue requested negative count: ", r->wanted);
    if (spec.shapes.empty())
      return errors::InvalidArgument(spec.TypeName(),
                                     "'s DequeueMany and DequeueUpTo require the components to have specified shapes.");
    for (DataType t : spec.types)
      if (!array::Copyable(t)) return array::UnsupportedDtype(up_to_ ? "QueueDequeueUpToV2" : "QueueDequeueManyV2", t);
    return Status();
  }

  bool single_ = true, up_to_ = false;
  std::vector<DataType> types_;
};

class QueueCloseOp : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }
  void Compute(OpKernelContext* ctx) override {
    ResourceRef<Queue> q;
    OP_REQUIRES_OK(ctx, LookupQueue(ctx, &q));
    q->Close(cancel_pending_enqueues_);
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

// QueueSizeV2 (int32) and QueueIsClosedV2 (bool).
class QueueStateOp : public OpKernel {
 public:
  explicit QueueStateOp(OpKernelConstruction* c) : OpKernel(c), size_(std::string(c->op()) == "QueueSizeV2") {}
  void Compute(OpKernelContext* ctx) override {
    ResourceRef<Queue> q;
    OP_REQUIRES_OK(ctx, LookupQueue(ctx, &q));
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, std::vector<int64_t>{}, &out));
    if (size_) *out.data<int32_t>() = static_cast<int32_t>(q->size());
    else *out.data<bool>() = q->closed();
  }

 private:
  const bool size_;
};

REGISTER_KERNEL(Name("FIFOQueueV2").Device(DEVICE_CPU), QueueOp);
REGISTER_KERNEL(Name("PaddingFIFOQueueV2").Device(DEVICE_CPU), QueueOp);
REGISTER_KERNEL(Name("RandomShuffleQueueV2").Device(DEVICE_CPU), QueueOp);
REGISTER_KERNEL(Name("QueueEnqueueV2").Device(DEVICE_CPU), EnqueueOp);
REGISTER_KERNEL(Name("QueueEnqueueManyV2").Device(DEVICE_CPU), EnqueueOp);
REGISTER_KERNEL(Name("QueueDequeueV2").Device(DEVICE_CPU), DequeueOp);
REGISTER_KERNEL(Name("QueueDequeueManyV2").Device(DEVICE_CPU), DequeueOp);
REGISTER_KERNEL(Name("QueueDequeueUpToV2").Device(DEVICE_CPU), DequeueOp);
REGISTER_KERNEL(Name("QueueCloseV2").Device(DEVICE_CPU), QueueCloseOp);
REGISTER_KERNEL(Name("QueueSizeV2").Device(DEVICE_CPU), QueueStateOp);
REGISTER_KERNEL(Name("QueueIsClosedV2").Device(DEVICE_CPU), QueueStateOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
