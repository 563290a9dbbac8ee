// DirectSession: runs a graph in this process on the registered devices.
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <list>
#include <numeric>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "graphrt/core/control_flow.h"
#include "core_api_internal.h"
#include <graphrt/shape_limits.h>

#include "executor.h"
#include "executor_internal.h"
#include "memory_budget.h"
#include "resource_mgr.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "node_def_util.h"
#include "placer.h"
#include "shape_inference.h"

namespace graphrt {
namespace {

std::string CanonicalTensorName(const std::string& name, int index) { return name + ":" + std::to_string(index); }

// One cached executor. Its feeds and fetches are in the sorted order of
// the signature it was built for; each Run maps its own order onto them.
struct ExecutorsAndKeys {
  std::unique_ptr<Executor> executor;
  std::vector<DataType> feed_types;
  std::vector<std::string> feed_names;
};

// A Run's feeds, fetches and targets in sorted order: the cache key (as
// TensorFlow keys its executors), and where each sorted entry sits in the
// caller's lists, so every ordering of one signature shares one executor.
struct SortedSignature {
  std::vector<int> feeds;    // feeds[k]: the caller's index of sorted feed k
  std::vector<int> fetches;  // likewise for fetches
  std::string key;

  SortedSignature(const std::vector<std::pair<std::string, Tensor>>& inputs,
                  const std::vector<std::string>& outputs, const std::vector<std::string>& targets)
      : feeds(inputs.size()), fetches(outputs.size()) {
    std::iota(feeds.begin(), feeds.end(), 0);
    std::sort(feeds.begin(), feeds.end(), [&](int a, int b) { return inputs[a].first < inputs[b].first; });
    std::iota(fetches.begin(), fetches.end(), 0);
    std::stable_sort(fetches.begin(), fetches.end(), [&](int a, int b) { return outputs[a] < outputs[b]; });
    std::vector<const std::string*> sorted_targets;
    sorted_targets.reserve(targets.size());
    for (const std::string& t : targets) sorted_targets.push_back(&t);
    std::sort(sorted_targets.begin(), sorted_targets.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    // Names cannot contain '\0', so it separates them unambiguously.
    for (int i : feeds) key.append(inputs[i].first).push_back('\0');
    key.push_back('\1');
    for (int i : fetches) key.append(outputs[i]).push_back('\0');
    key.push_back('\1');
    for (const std::string* t : sorted_targets) key.append(*t).push_back('\0');
  }
};

constexpr int kDefaultExecutorCacheCapacity = 64;

struct SharedKernel {
  const KernelRegistration* reg = nullptr;
  void* kernel = nullptr;
};

class DirectSession final : public Session {
 public:
  explicit DirectSession(const SessionOptions& options) : options_(options) {
    const auto& c = options.config;
    int threads = std::max(c.intra_op_parallelism_threads(), c.inter_op_parallelism_threads());
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // More threads than cores only adds contention (and TBB would cap it anyway).
    if (threads <= 0 || threads > cores) threads = cores;
    num_threads_ = threads;
    if (threads > 1) arena_ = std::make_unique<tbb::task_arena>(threads);
    const int capacity = c.graphrt_options().executor_cache_capacity();
    cache_capacity_ = capacity > 0 ? static_cast<size_t>(capacity) : kDefaultExecutorCacheCapacity;
    budget_ = new MemoryBudget(SessionMemoryLimit(c));
    host_allocator_ = budget_->AllocatorFor(HostAllocator());
  }

  // Waits for Runs still in progress (a caller that destroys a session it
  // has not closed, while other threads are inside Run, breaks the contract
  // in session.h; this at least lets those Runs finish).
  ~DirectSession() override {
    Close().IgnoreError();
    cache_.clear();
    cache_index_.clear();
    budget_->ReleaseOwner();  // the budget lives on while returned tensors do
  }

  Status Create(const proto::GraphDef& def) override {
    return StatusFromExceptions("Session::Create", [&] { return CreateImpl(def); });
  }
  Status Extend(const proto::GraphDef& def) override {
    return StatusFromExceptions("Session::Extend", [&] { return ExtendImpl(def); });
  }

  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs, const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs) override {
    static const proto::RunOptions kNoOptions;
    return Run(kNoOptions, inputs, output_names, target_nodes, outputs, nullptr);
  }

  Status Run(const proto::RunOptions& run_options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& target_nodes,
             std::vector<Tensor>* outputs, proto::RunMetadata* run_metadata) override {
    // Runs that start after Close never count themselves, so Close cannot be
    // kept waiting by callers that keep calling.
    if (closed_.load()) return errors::Cancelled("Session has been closed.");
    // Counted before closed_ is read again (both sequentially consistent):
    // Close either sees this Run and waits for it, or this Run sees closed_.
    active_runs_.fetch_add(1);
    struct EndRun {
      DirectSession* self;
      ~EndRun() { self->FinishRun(); }
    } end_run{this};
    if (closed_.load()) return errors::Cancelled("Session has been closed.");
    return StatusFromExceptions("Session::Run", [&] {
      return RunImpl(run_options, inputs, output_names, target_nodes, outputs, run_metadata);
    });
  }

  // Stops new Runs, ends the Runs in progress early (their remaining nodes
  // do not run; they return CANCELLED) and waits for them to return.
  Status Close() override {
    closed_.store(true);
    {
      std::unique_lock<std::mutex> lock(run_mu_);
      runs_done_.wait(lock, [this] { return active_runs_.load() == 0; });
    }
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      cache_.clear();
      cache_index_.clear();
    }
    // No Run can start any more: the session's state goes now (variables
    // with their memory), not when the object is destroyed.
    {
      std::lock_guard<std::mutex> lock(kernel_mu_);
      for (auto& [name, k] : stateful_kernels_) k.reg->destroy(k.kernel);
      stateful_kernels_.clear();
    }
    resources_.Clear();
    return Status::OK();
  }

 private:
  void FinishRun() {
    if (active_runs_.fetch_sub(1) == 1 && closed_.load()) {
      std::lock_guard<std::mutex> lock(run_mu_);
      runs_done_.notify_all();
    }
  }

  Status CreateImpl(const proto::GraphDef& def) {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    if (graph_) return errors::AlreadyExists("Session already has a graph; use Extend() to add nodes.");
    GR_RETURN_IF_ERROR(InitDevices());
    auto g = std::make_unique<Graph>(&Runtime::Global().ops());
    GR_RETURN_IF_ERROR(ConvertGraphDefToGraph(def, g.get()));
    GR_RETURN_IF_ERROR(ValidateGraph(g.get()));
    graph_ = std::move(g);
    return Status::OK();
  }

  Status ExtendImpl(const proto::GraphDef& def) {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    if (!graph_) {
      GR_RETURN_IF_ERROR(InitDevices());
      graph_ = std::make_unique<Graph>(&Runtime::Global().ops());
    }
    // Extend atomically: work on a copy, swap in on success.
    auto g = std::make_unique<Graph>(&Runtime::Global().ops());
    CopyGraph(*graph_, g.get());
    GR_RETURN_IF_ERROR(ExtendGraph(def, g.get()));
    GR_RETURN_IF_ERROR(ValidateGraph(g.get()));
    graph_ = std::move(g);
    std::lock_guard<std::mutex> cache_lock(cache_mu_);
    cache_.clear();  // new nodes may change what a signature prunes to
    cache_index_.clear();
    return Status::OK();
  }

  Status RunImpl(const proto::RunOptions& run_options, const std::vector<std::pair<std::string, Tensor>>& inputs,
                 const std::vector<std::string>& output_names, const std::vector<std::string>& target_nodes,
                 std::vector<Tensor>* outputs, proto::RunMetadata* run_metadata) {
    if (output_names.empty() && target_nodes.empty())
      return errors::InvalidArgument("Must specify at least one target to fetch or execute.");
    const SortedSignature sig(inputs, output_names, target_nodes);
    std::shared_ptr<ExecutorsAndKeys> ek;
    GR_RETURN_IF_ERROR(GetOrCreateExecutor(sig, inputs, output_names, target_nodes, &ek));

    std::vector<Tensor> feeds;
    feeds.reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      const auto& [name, t] = inputs[sig.feeds[k]];
      if (!t.IsInitialized()) return errors::InvalidArgument("Feed '", name, "' is an uninitialized tensor");
      // A handle holds pointers only the session's own kernels make.
      if (t.dtype() == GR_RESOURCE)
        return errors::InvalidArgument("Feed '", name, "' is a resource handle; handles cannot be fed");
      // TensorShape's constructors do not check; kernels rely on the size rule.
      int64_t elements;
      if (gr_shape_num_elements(t.shape().data(), t.dims(), &elements) != GR_OK)
        return errors::InvalidArgument("Feed '", name, "' has shape ", t.shape().DebugString(),
                                       ", more than 2^58 elements or a negative dimension");
      if (t.dtype() != ek->feed_types[k])
        return errors::InvalidArgument("Feed '", name, "' has dtype ", DataTypeString(t.dtype()),
                                       " but the graph expects ", DataTypeString(ek->feed_types[k]));
      feeds.push_back(t);
    }
    std::vector<Tensor> fetched(output_names.size());
    RunArgs args;
    args.feeds = &feeds;
    args.fetches = &fetched;
    args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
    args.num_threads = num_threads_;
    args.arena = arena_.get();
    args.cancelled = &closed_;
    args.resources = &resources_;
    // TensorFlow's rule: the Run's own timeout, else the session's default.
    const int64_t timeout_ms = run_options.timeout_in_ms() > 0 ? run_options.timeout_in_ms()
                                                                : options_.config.operation_timeout_in_ms();
    if (timeout_ms > 0) args.deadline_nanos = NowNanos() + timeout_ms * 1000000;
    proto::StepStats step_stats;
    const bool trace = run_options.trace_level() != proto::RunOptions::NO_TRACE && run_metadata != nullptr;
    if (trace) args.stats = &step_stats;
    GR_RETURN_IF_ERROR(ek->executor->Run(args));
    std::vector<Tensor> results(output_names.size());
    for (size_t k = 0; k < fetched.size(); ++k) {
      const int i = sig.fetches[k];
      if (!fetched[k].IsInitialized())
        // TensorFlow's code for a dead fetch ("Retval does not have value").
        return errors::Internal("Fetch '", output_names[i], "' has no value: it is dead (on the untaken branch of a ",
                                "Switch, e.g. inside a cond) in this step");
      results[i] = std::move(fetched[k]);
    }
    if (run_metadata) {
      run_metadata->Clear();
      if (trace) *run_metadata->mutable_step_stats() = std::move(step_stats);
    }
    if (outputs) *outputs = std::move(results);
    return Status::OK();
  }

  Status InitDevices() {
    if (!devices_.empty()) return Status::OK();
    const auto& requested = options_.config.device_count();
    const std::map<std::string, int> counts(requested.begin(), requested.end());
    GR_RETURN_IF_ERROR(Runtime::Global().devices().GetDevices(counts, &devices_));
    if (devices_.empty())
      return errors::FailedPrecondition("No devices are registered: load a device plugin (the standard CPU device "
                                        "is libgraphrt_device_cpu.so)");
    return Status::OK();
  }

  // Places the whole graph (TensorFlow's default; with place_pruned_graph
  // only what a step runs is placed, per step) and infers its shapes.
  Status ValidateGraph(Graph* g) {
    // Malformed loops fail here, naming their nodes, not at the first Run.
    if (HasControlFlow(*g)) {
      FrameLayout frames;
      GR_RETURN_IF_ERROR(ComputeFrameLayout(*g, &frames));
    }
    if (!options_.config.graph_options().place_pruned_graph())
      GR_RETURN_IF_ERROR(PlaceGraph(devices_, options_.config.allow_soft_placement(), g));
    std::vector<std::vector<PartialTensorShape>> shapes;
    return InferShapes(*g, &shapes, host_allocator_);
  }

  Status GetOrCreateExecutor(const SortedSignature& sig, const std::vector<std::pair<std::string, Tensor>>& inputs,
                             const std::vector<std::string>& outputs, const std::vector<std::string>& targets,
                             std::shared_ptr<ExecutorsAndKeys>* out) {
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      auto it = cache_index_.find(sig.key);
      if (it != cache_index_.end()) {
        cache_.splice(cache_.begin(), cache_, it->second);  // most recently used first
        *out = it->second->second;
        return Status::OK();
      }
    }
    std::vector<std::string> feed_names, fetch_names;
    for (int i : sig.feeds) feed_names.push_back(inputs[i].first);
    for (int i : sig.fetches) fetch_names.push_back(outputs[i]);
    std::shared_ptr<ExecutorsAndKeys> ek;
    {
      std::lock_guard<std::mutex> lock(graph_mu_);
      if (!graph_) return errors::InvalidArgument("Session was not created with a graph before Run()!");
      GR_RETURN_IF_ERROR(BuildExecutor(feed_names, fetch_names, targets, &ek));
    }
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_index_.find(sig.key);
    if (it != cache_index_.end()) {  // another thread built it meanwhile
      *out = it->second->second;
      return Status::OK();
    }
    cache_.emplace_front(sig.key, ek);
    cache_index_.emplace(sig.key, cache_.begin());
    // Runs still using an evicted executor hold their own reference to it.
    while (cache_.size() > cache_capacity_) {
      cache_index_.erase(cache_.back().first);
      cache_.pop_back();
    }
    *out = std::move(ek);
    return Status::OK();
  }

  Status BuildExecutor(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                       const std::vector<std::string>& targets, std::shared_ptr<ExecutorsAndKeys>* out) {
    auto ek = std::make_shared<ExecutorsAndKeys>();
    Graph g(&Runtime::Global().ops());
    CopyGraph(*graph_, &g);
    auto index = g.BuildNameIndex();
    std::vector<Node*> keep;  // roots of the reverse traversal
    std::unordered_set<std::string> fed;
    std::unordered_map<std::string, Node*> arg_nodes;

    for (size_t i = 0; i < feeds.size(); ++i) {
      std::string name;
      int slot;
      bool control;
      if (!ParseTensorName(feeds[i], &name, &slot, &control) || control)
        return errors::InvalidArgument("Malformed feed name '", feeds[i], "'");
      const std::string canonical = CanonicalTensorName(name, slot);
      if (!fed.insert(canonical).second)
        return errors::InvalidArgument("Endpoint \"", canonical, "\" fed more than once.");
      auto it = index.find(name);
      if (it == index.end() || !it->second->IsOp())
        return errors::NotFound("FeedInputs: unable to find feed output ", canonical);
      Node* n = it->second;
      if (slot >= n->num_outputs())
        return errors::InvalidArgument("FeedInputs: ", canonical, " should have output index < ", n->num_outputs());
      const DataType type = BaseType(n->output_type(slot));
      proto::NodeDef d;
      d.set_name("_arg_" + name + "_" + std::to_string(slot));
      d.set_op(kArgOp);
      (*d.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
      (*d.mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
      d.set_device(n->requested_device());
      Node* arg = g.AddInternalNode(std::move(d), {}, {type});
      arg->set_assigned_device(n->assigned_device());
      std::vector<const Edge*> rewire;
      for (const Edge* e : n->out_edges())
        if (e->src_output() == slot || (e->IsControlEdge() && (n->op() == "Placeholder" || n->op() == "PlaceholderV2"))) rewire.push_back(e);
      for (const Edge* e : rewire) {
        Node* dst = e->dst();
        const int dst_input = e->dst_input();
        const bool is_control = e->IsControlEdge();
        g.RemoveEdge(e);
        if (is_control) g.AddControlEdge(arg, dst);
        else g.AddEdge(arg, 0, dst, dst_input);
      }
      g.AddControlEdge(g.source_node(), arg);
      arg_nodes[canonical] = arg;
      ek->feed_types.push_back(type);
      ek->feed_names.push_back(canonical);
    }
    for (size_t i = 0; i < fetches.size(); ++i) {
      std::string name;
      int slot;
      bool control;
      if (!ParseTensorName(fetches[i], &name, &slot, &control) || control)
        return errors::InvalidArgument("Malformed fetch name '", fetches[i], "'");
      const std::string canonical = CanonicalTensorName(name, slot);
      auto it = index.find(name);
      if (it == index.end() || !it->second->IsOp())
        return errors::NotFound("FetchOutputs node ", canonical, ": not found");
      Node* n = it->second;
      if (n->num_outputs() == 0)
        return errors::InvalidArgument(
            "Tried to fetch data for '", fetches[i], "', which produces no output.  To run to a node but not fetch "
            "any data, pass '", fetches[i], "' as an argument to the 'target_node_names' argument of the "
            "Session::Run API.");
      if (slot >= n->num_outputs())
        return errors::InvalidArgument("FetchOutputs ", canonical, ": output index too large, must be < ",
                                       n->num_outputs());
      Node* src = n;
      int src_slot = slot;
      if (auto a = arg_nodes.find(canonical); a != arg_nodes.end()) {
        // A fed tensor is fetched straight back from its _Arg.
        src = a->second;
        src_slot = 0;
      }
      const DataType type = BaseType(src->output_type(src_slot));
      proto::NodeDef d;
      d.set_name("_retval_" + name + "_" + std::to_string(slot) + "_" + std::to_string(i));
      d.set_op(kRetvalOp);
      (*d.mutable_attr())["index"].set_i(static_cast<int64_t>(i));
      (*d.mutable_attr())["T"].set_type(static_cast<proto::DataType>(type));
      Node* ret = g.AddInternalNode(std::move(d), {type}, {});
      g.AddEdge(src, src_slot, ret, 0);
      g.AddControlEdge(ret, g.sink_node());
      keep.push_back(ret);
    }
    std::string missing;
    for (const std::string& t : targets) {
      auto it = index.find(t);
      if (it == index.end() || !it->second->IsOp()) {
        missing += (missing.empty() ? "" : ", ") + t;
        continue;
      }
      keep.push_back(it->second);
      // A target's edge to the sink keeps it live through graph rewrites
      // that drop nodes nothing reads any more.
      g.AddControlEdge(it->second, g.sink_node());
    }
    if (!missing.empty()) return errors::NotFound("PruneForTargets: Some target nodes not found: ", missing);

    // Prune to what the fetches and targets need.
    std::vector<bool> live(g.num_node_ids(), false);
    std::vector<Node*> stack = keep;
    for (Node* n : keep) live[n->id()] = true;
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge* e : n->in_edges()) {
        Node* src = e->src();
        if (!src->IsOp() || live[src->id()]) continue;
        live[src->id()] = true;
        stack.push_back(src);
      }
    }
    for (Node* n : g.op_nodes())
      if (!live[n->id()]) g.RemoveNode(n);

    GR_RETURN_IF_ERROR(PlaceClientGraph(&g));

    // Rewrites: stateless nodes only waited for dropped (the core's), then
    // the device passes plugins registered (layouts, fusions, weights
    // hints). OptimizerOptions.opt_level L0 ("no optimizations") turns them
    // all off; RewriterConfig's dependency_optimization, and the
    // layout_optimizer and remapping toggles of plugin passes, set OFF, theirs.
    GraphOptimizerOptions opt;
    const proto::GraphOptions& graph_options = options_.config.graph_options();
    const proto::RewriterConfig& rewrites = graph_options.rewrite_options();
    opt.layout_optimizer = rewrites.layout_optimizer() != proto::RewriterConfig::OFF;
    opt.remapping = rewrites.remapping() != proto::RewriterConfig::OFF;
    opt.remove_control_only_nodes = rewrites.dependency_optimization() != proto::RewriterConfig::OFF;
    if (graph_options.optimizer_options().opt_level() == proto::OptimizerOptions::L0)
      opt.plugin_passes = opt.remove_control_only_nodes = false;
    GraphPassServices services;
    services.device_type = [this](const std::string& assigned_device) {
      Device* d = DeviceNamed(assigned_device);
      return d != nullptr ? d->type() : std::string();
    };
    services.kernel_available = [this](const proto::NodeDef& n, const std::string& assigned_device) {
      const KernelRegistration* reg;
      Device* d = DeviceNamed(assigned_device);
      return d != nullptr && Runtime::Global().kernels().FindKernel(n, d->type(), &reg).ok();
    };
    GR_RETURN_IF_ERROR(OptimizeGraph(opt, Runtime::Global().graph_passes().Passes(), services, &g));
    KernelProvider provider = [this](const Node& n, Device* d, const KernelRegistration** reg, void** kernel,
                                     bool* owned) { return GetKernel(n, d, reg, kernel, owned); };
    DeviceOfNode device_of = [this](const Node& n) { return DeviceNamed(n.assigned_device()); };
    AllocatorOfDevice allocator_of = [this](Device* d) { return AllocatorFor(d); };
    GR_RETURN_IF_ERROR(Executor::Create(g, device_of, allocator_of, provider, &ek->executor));
    *out = std::move(ek);
    return Status::OK();
  }

  // Assigns every node of a pruned client graph a device: op nodes not yet
  // placed by PlaceGraph; a feed's _Arg on the device of the node it
  // replaces, a fetch's _Retval on its producer's. Nodes of one step may
  // span devices as long as the tensors crossing between them need no copy
  // (host-memory devices, such as several CPU devices).
  Status PlaceClientGraph(Graph* g) {
    GR_RETURN_IF_ERROR(PlaceGraph(devices_, options_.config.allow_soft_placement(), g));
    for (Node* n : g->op_nodes()) {
      if (n->op() != kArgOp) continue;
      std::string device = n->assigned_device();
      for (const Edge* e : n->out_edges())
        if (device.empty() && e->dst()->IsOp()) device = e->dst()->assigned_device();
      n->set_assigned_device(device.empty() ? devices_.front()->name() : device);
    }
    for (Node* n : g->op_nodes()) {
      if (n->op() != kRetvalOp) continue;
      const Edge* in = n->input_edge(0);
      n->set_assigned_device(in ? in->src()->assigned_device() : devices_.front()->name());
    }
    for (Node* n : g->op_nodes()) {
      Device* dst = DeviceNamed(n->assigned_device());
      for (const Edge* e : n->in_edges()) {
        if (e->IsControlEdge() || !e->src()->IsOp()) continue;
        Device* src = DeviceNamed(e->src()->assigned_device());
        if (src != dst && !(src->host_memory() && dst->host_memory()))
          return errors::Unimplemented(NodePrefix(n->def()), ": its input from '", e->src()->name(), "' on ",
                                       src->name(), " would have to be copied to ", dst->name(),
                                       "; copies between device memories are not supported yet");
      }
    }
    return Status::OK();
  }

  Device* DeviceNamed(const std::string& name) const {
    for (Device* d : devices_)
      if (d->name() == name) return d;
    return nullptr;
  }

  // The session's view of a device's memory: host memory counts against
  // the session's budget. (Called with graph_mu_ held.)
  Allocator* AllocatorFor(Device* d) {
    if (d == nullptr || !d->host_memory()) return d ? d->allocator() : host_allocator_;
    return budget_->AllocatorFor(d->allocator());
  }

  Status CreateKernel(const Node& n, Device* device, const KernelRegistration** reg, void** kernel) {
    GR_RETURN_IF_ERROR(Runtime::Global().kernels().FindKernel(n.def(), device->type(), reg));
    GR_KernelConstruction kc{GR_Attrs{&n.def(), host_allocator_, nullptr}, &n.def(), &n.input_types(),
                             &n.output_types(), device, Status()};
    kc.attrs.error = &kc.status;
    // A raw C-ABI kernel's exception must not escape (SDK kernels catch their own).
    Status thrown = StatusFromExceptions("kernel construction", [&] {
      *kernel = (*reg)->create(&kc, (*reg)->user_data);
      return Status::OK();
    });
    if (!thrown.ok()) {
      *kernel = nullptr;
      if (kc.status.ok()) kc.status = thrown;
    }
    if (*kernel == nullptr) {
      Status s = kc.status.ok() ? errors::Internal("kernel creation failed without a message") : kc.status;
      return Status(s.code(), NodePrefix(n.def()) + ": " + s.message());
    }
    return Status::OK();
  }

  // Stateful kernels are created once per session and shared by every
  // executor, so their state survives across fetch sets.
  Status GetKernel(const Node& n, Device* device, const KernelRegistration** reg, void** kernel, bool* owned) {
    if (!n.IsStateful()) {
      *owned = true;
      return CreateKernel(n, device, reg, kernel);
    }
    *owned = false;
    std::lock_guard<std::mutex> lock(kernel_mu_);
    auto it = stateful_kernels_.find(n.name());
    if (it == stateful_kernels_.end()) {
      SharedKernel k;
      GR_RETURN_IF_ERROR(CreateKernel(n, device, &k.reg, &k.kernel));
      it = stateful_kernels_.emplace(n.name(), k).first;
    }
    *reg = it->second.reg;
    *kernel = it->second.kernel;
    return Status::OK();
  }

  SessionOptions options_;
  int num_threads_ = 1;
  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<Device*> devices_;
  std::atomic<bool> closed_{false};
  std::atomic<int64_t> next_step_id_{1};
  std::atomic<int64_t> active_runs_{0};
  std::mutex run_mu_;  // with runs_done_: Close waiting for active_runs_ == 0
  std::condition_variable runs_done_;

  MemoryBudget* budget_;      // AllocatorFor under graph_mu_
  Allocator* host_allocator_;  // attr tensors (constants) of the session's kernels

  std::mutex graph_mu_;  // graph_ and executor construction
  std::unique_ptr<Graph> graph_;

  // LRU cache of executors by SortedSignature key, most recent first.
  std::mutex cache_mu_;
  size_t cache_capacity_;
  using CacheList = std::list<std::pair<std::string, std::shared_ptr<ExecutorsAndKeys>>>;
  CacheList cache_;
  std::unordered_map<std::string, CacheList::iterator> cache_index_;

  std::mutex kernel_mu_;
  std::unordered_map<std::string, SharedKernel> stateful_kernels_;

  ResourceMgr resources_;  // variables and other state, until Close
};

class DirectSessionFactory final : public SessionFactory {
 public:
  Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* out) override {
    *out = std::make_unique<DirectSession>(options);
    return Status::OK();
  }
};

}  // namespace

void RegisterDirectSessionFactory() {
  RegisterSessionFactory("", std::make_unique<DirectSessionFactory>());
  RegisterSessionFactory("direct://", std::make_unique<DirectSessionFactory>());
}

}  // namespace graphrt
