// DirectSession: runs a graph in this process on the registered devices.
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <list>
#include <numeric>
#include <optional>
#include <random>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "graphrt/core/control_flow.h"
#include "core_api_internal.h"
#include <graphrt/shape_limits.h>

#include "client_graph.h"
#include "executor.h"
#include "executor_internal.h"
#include "graph_passes.h"
#include "graphrt/core/cluster_step.h"
#include "graphrt/core/partition.h"
#include "graphrt/core/rendezvous.h"
#include "file_access.h"
#include "memory_budget.h"
#include "resource_mgr.h"
#include "session_state.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "node_def_util.h"
#include "placer.h"
#include "shape_inference.h"
#include "transfer_kernels.h"

namespace graphrt {
namespace {

// One cached executor. Its feeds and fetches are in the sorted order of
// the signature it was built for; each Run maps its own order onto them.
struct ExecutorsAndKeys {
  std::unique_ptr<Executor> executor;
  std::vector<DataType> feed_types;
  std::vector<std::string> feed_names;
  // The sorted signature, from which the partitions are built when first
  // asked for (RunOptions.output_partition_graphs): kept as GraphDefs
  // always, they would double the memory of graphs with large constants.
  std::vector<std::string> fetch_names, targets;
  std::mutex partitions_mu;
  bool has_partitions = false;  // under partitions_mu
  std::vector<proto::GraphDef> partition_graphs;  // one per device, once has_partitions
  // _Send/_Recv pairs in the executor's graph: its steps need a rendezvous.
  int num_transfers = 0;
  // Devices with their own memory that the step's kernels enqueue work on:
  // a step ends when their compute streams have run it (TensorFlow's
  // sync_on_finish), with their errors.
  std::vector<Device*> streamed_devices;
};

// A callable: its executor, held (not looked up) by every RunCallable.
struct Callable {
  std::shared_ptr<ExecutorsAndKeys> ek;
  std::vector<int> feeds;    // feeds[k]: the caller's index of sorted feed k
  std::vector<int> fetches;  // likewise for fetches
  std::vector<std::string> feed_names, fetch_names;  // the caller's order
  proto::RunOptions run_options;
};

// A Run's feeds, fetches and targets in sorted order: the cache key (as
// TensorFlow keys its executors), and where each sorted entry sits in the
// caller's lists, so every ordering of one signature shares one executor.
struct SortedSignature {
  std::vector<int> feeds;    // feeds[k]: the caller's index of sorted feed k
  std::vector<int> fetches;  // likewise for fetches
  std::string key;

  // feed_name(i): the caller's feed i.
  template <typename FeedName>
  SortedSignature(size_t num_feeds, FeedName feed_name, const std::vector<std::string>& outputs,
                  const std::vector<std::string>& targets)
      : feeds(num_feeds), fetches(outputs.size()) {
    std::iota(feeds.begin(), feeds.end(), 0);
    std::sort(feeds.begin(), feeds.end(), [&](int a, int b) { return feed_name(a) < feed_name(b); });
    std::iota(fetches.begin(), fetches.end(), 0);
    std::stable_sort(fetches.begin(), fetches.end(), [&](int a, int b) { return outputs[a] < outputs[b]; });
    std::vector<const std::string*> sorted_targets;
    sorted_targets.reserve(targets.size());
    for (const std::string& t : targets) sorted_targets.push_back(&t);
    std::sort(sorted_targets.begin(), sorted_targets.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    // Names cannot contain '\0', so it separates them unambiguously.
    for (int i : feeds) key.append(feed_name(i)).push_back('\0');
    key.push_back('\1');
    for (int i : fetches) key.append(outputs[i]).push_back('\0');
    key.push_back('\1');
    for (const std::string* t : sorted_targets) key.append(*t).push_back('\0');
  }
};

constexpr int kDefaultExecutorCacheCapacity = 64;

class DirectSession final : public Session {
 public:
  DirectSession(const SessionOptions& options, std::unique_ptr<FileAccessPolicy> file_access)
      : options_(options), state_(options.config, std::move(file_access)) {
    const int capacity = options.config.graphrt_options().executor_cache_capacity();
    cache_capacity_ = capacity > 0 ? static_cast<size_t>(capacity) : kDefaultExecutorCacheCapacity;
  }

  // Waits for Runs still in progress (a caller that destroys a session it
  // has not closed, while other threads are inside Run, breaks the contract
  // in session.h; this at least lets those Runs finish).
  ~DirectSession() override {
    Close().IgnoreError();
    cache_.clear();
    cache_index_.clear();
  }

  Status TensorFromProto(const proto::TensorProto& p, Tensor* out) override {
    return StatusFromExceptions("Session::TensorFromProto", [&] { return Tensor::FromProto(p, out, state_.host_allocator()); });
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
    return CountedRun("Session::Run", [&] {
      return RunImpl(run_options, inputs, output_names, target_nodes, outputs, run_metadata);
    });
  }

  Status MakeCallable(const proto::CallableOptions& options, CallableHandle* out_handle) override {
    if (closed_.load()) return errors::Cancelled("Session has been closed.");
    return StatusFromExceptions("Session::MakeCallable", [&] { return MakeCallableImpl(options, out_handle); });
  }

  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feed_tensors, std::vector<Tensor>* fetch_tensors,
                     proto::RunMetadata* run_metadata) override {
    return CountedRun("Session::RunCallable", [&] {
      return RunCallableImpl(handle, feed_tensors, fetch_tensors, run_metadata);
    });
  }

  Status ReleaseCallable(CallableHandle handle) override {
    std::lock_guard<std::mutex> lock(callables_mu_);
    if (handle < 0 || handle >= next_callable_)
      return errors::InvalidArgument("No such callable handle: ", handle);
    callables_.erase(handle);  // releasing twice is harmless, as in TensorFlow
    return Status::OK();
  }

  // TensorFlow's Finalize: the graph is released; signatures already built
  // keep running, nothing new can be built or added.
  Status Finalize() override {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    finalized_ = true;
    graph_.reset();
    return Status::OK();
  }

  // Stops new Runs, ends the Runs in progress early (their remaining nodes
  // do not run; they return CANCELLED) and waits for them to return.
  Status Close() override {
    closed_.store(true);
    // Steps waiting for asynchronous kernels (a dequeue on an empty queue)
    // stop waiting.
    state_.cancellation()->Cancel();
    {
      std::unique_lock<std::mutex> lock(run_mu_);
      runs_done_.wait(lock, [this] { return active_runs_.load() == 0; });
    }
    {
      std::lock_guard<std::mutex> lock(cache_mu_);
      cache_.clear();
      cache_index_.clear();
    }
    {
      std::lock_guard<std::mutex> lock(callables_mu_);
      callables_.clear();
    }
    // No Run can start any more: the session's state goes now (variables
    // with their memory), not when the object is destroyed.
    state_.Clear();
    return Status::OK();
  }

 private:
  // Runs `step` as a Run that Close waits for.
  template <typename Step>
  Status CountedRun(const char* what, Step step) {
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
    return StatusFromExceptions(what, step);
  }

  void FinishRun() {
    if (active_runs_.fetch_sub(1) == 1 && closed_.load()) {
      std::lock_guard<std::mutex> lock(run_mu_);
      runs_done_.notify_all();
    }
  }

  // What the graph may grow to: the configured node count and the memory limit.
  GraphLimits Limits() const {
    GraphLimits l;
    const int64_t n = options_.config.graphrt_options().max_graph_nodes();
    if (n > 0) l.max_nodes = n;
    l.max_bytes = state_.memory_limit();
    l.hint = "ConfigProto.graphrt_options.max_graph_nodes raises it";
    return l;
  }

  Status CreateImpl(const proto::GraphDef& def) {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    if (finalized_) return errors::FailedPrecondition("Session has been finalized.");
    if (graph_) return errors::AlreadyExists("Session already has a graph; use Extend() to add nodes.");
    GR_RETURN_IF_ERROR(InitDevices());
    auto g = std::make_unique<Graph>(&Runtime::Global().ops());
    GR_RETURN_IF_ERROR(ConvertGraphDefToGraph(def, g.get(), Limits()));
    GR_RETURN_IF_ERROR(ValidateGraph(g.get()));
    graph_ = std::move(g);
    return Status::OK();
  }

  Status ExtendImpl(const proto::GraphDef& def) {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (closed_) return errors::Cancelled("Session has been closed.");
    if (finalized_) return errors::FailedPrecondition("Session has been finalized.");
    if (!graph_) {
      GR_RETURN_IF_ERROR(InitDevices());
      graph_ = std::make_unique<Graph>(&Runtime::Global().ops());
    }
    // Extend atomically: work on a copy, swap in on success.
    auto g = std::make_unique<Graph>(&Runtime::Global().ops());
    CopyGraph(*graph_, g.get());
    GR_RETURN_IF_ERROR(ExtendGraph(def, g.get(), Limits()));
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
    const SortedSignature sig(
        inputs.size(), [&](int i) -> const std::string& { return inputs[i].first; }, output_names, target_nodes);
    std::shared_ptr<ExecutorsAndKeys> ek;
    GR_RETURN_IF_ERROR(GetOrCreateExecutor(
        sig, [&](int i) -> const std::string& { return inputs[i].first; }, output_names, target_nodes, &ek));
    std::vector<const Tensor*> feeds(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) feeds[k] = &inputs[sig.feeds[k]].second;
    return RunExecutor(
        run_options, *ek, feeds, [&](int k) -> const std::string& { return inputs[sig.feeds[k]].first; }, sig.fetches,
        output_names, outputs, run_metadata);
  }

  Status MakeCallableImpl(const proto::CallableOptions& options, CallableHandle* out_handle) {
    if (options.tensor_connection_size() > 0 || options.feed_devices_size() > 0 || options.fetch_devices_size() > 0)
      return errors::Unimplemented("MakeCallable: CallableOptions.tensor_connection, feed_devices and fetch_devices "
                                   "are not supported yet");
    auto c = std::make_shared<Callable>();
    c->feed_names.assign(options.feed().begin(), options.feed().end());
    c->fetch_names.assign(options.fetch().begin(), options.fetch().end());
    const std::vector<std::string> targets(options.target().begin(), options.target().end());
    if (c->fetch_names.empty() && targets.empty())
      return errors::InvalidArgument("Must specify at least one target to fetch or execute.");
    auto feed_name = [&](int i) -> const std::string& { return c->feed_names[i]; };
    SortedSignature sig(c->feed_names.size(), feed_name, c->fetch_names, targets);
    GR_RETURN_IF_ERROR(GetOrCreateExecutor(sig, feed_name, c->fetch_names, targets, &c->ek));
    c->feeds = std::move(sig.feeds);
    c->fetches = std::move(sig.fetches);
    c->run_options = options.run_options();
    if (c->run_options.output_partition_graphs()) {
      // Built now, while the graph is there (Finalize releases it).
      const std::vector<proto::GraphDef>* partitions;
      GR_RETURN_IF_ERROR(PartitionGraphsOf(*c->ek, &partitions));
    }
    std::lock_guard<std::mutex> lock(callables_mu_);
    *out_handle = next_callable_++;
    callables_.emplace(*out_handle, std::move(c));
    return Status::OK();
  }

  Status RunCallableImpl(CallableHandle handle, const std::vector<Tensor>& feed_tensors,
                         std::vector<Tensor>* fetch_tensors, proto::RunMetadata* run_metadata) {
    if (fetch_tensors == nullptr) return errors::InvalidArgument("`fetch_tensors` must be provided.");
    std::shared_ptr<Callable> c;
    {
      std::lock_guard<std::mutex> lock(callables_mu_);
      if (handle < 0 || handle >= next_callable_) return errors::InvalidArgument("No such callable handle: ", handle);
      auto it = callables_.find(handle);
      if (it == callables_.end())
        return errors::InvalidArgument("Attempted to run callable after handle was released: ", handle);
      c = it->second;
    }
    if (feed_tensors.size() != c->feed_names.size())
      return errors::InvalidArgument("Invalid number of feed tensors specified: got ", feed_tensors.size(),
                                     ", expected ", c->feed_names.size(), " for callable ", handle);
    std::vector<const Tensor*> feeds(feed_tensors.size());
    for (size_t k = 0; k < feeds.size(); ++k) feeds[k] = &feed_tensors[c->feeds[k]];
    return RunExecutor(
        c->run_options, *c->ek, feeds, [&](int k) -> const std::string& { return c->feed_names[c->feeds[k]]; },
        c->fetches, c->fetch_names, fetch_tensors, run_metadata);
  }

  // Runs one step of `ek`. feeds[k] is the tensor for its sorted feed k,
  // named feed_name(k) in errors; fetches[k] is the caller's index of its
  // sorted fetch k, named fetch_names[i]; outputs follow the caller's order.
  template <typename FeedName>
  Status RunExecutor(const proto::RunOptions& run_options, ExecutorsAndKeys& ek,
                     const std::vector<const Tensor*>& sorted_feeds, FeedName feed_name,
                     const std::vector<int>& fetch_order, const std::vector<std::string>& fetch_names,
                     std::vector<Tensor>* outputs, proto::RunMetadata* run_metadata) {
    std::vector<Tensor> feeds;
    feeds.reserve(sorted_feeds.size());
    for (size_t k = 0; k < sorted_feeds.size(); ++k) {
      const std::string& name = feed_name(static_cast<int>(k));
      const Tensor& t = *sorted_feeds[k];
      if (!t.IsInitialized()) return errors::InvalidArgument("Feed '", name, "' is an uninitialized tensor");
      // A handle holds pointers only the session's own kernels make.
      if (t.dtype() == GR_RESOURCE)
        return errors::InvalidArgument("Feed '", name, "' is a resource handle; handles cannot be fed");
      // TensorShape's constructors do not check; kernels rely on the size rule.
      int64_t elements;
      if (t.dims() > TensorShape::kMaxRank)
        return errors::InvalidArgument("Feed '", name, "' has rank ", t.dims(), ", more than the ",
                                       TensorShape::kMaxRank, " dimensions a tensor may have");
      if (gr_shape_num_elements(t.shape().data(), t.dims(), &elements) != GR_OK)
        return errors::InvalidArgument("Feed '", name, "' has shape ", t.shape().DebugString(),
                                       ", more than 2^58 elements or a negative dimension");
      if (t.dtype() != ek.feed_types[k])
        return errors::InvalidArgument("Feed '", name, "' has dtype ", DataTypeString(t.dtype()),
                                       " but the graph expects ", DataTypeString(ek.feed_types[k]));
      feeds.push_back(t);
    }
    const std::vector<proto::GraphDef>* partition_graphs = nullptr;
    if (run_options.output_partition_graphs() && run_metadata != nullptr)
      GR_RETURN_IF_ERROR(PartitionGraphsOf(ek, &partition_graphs));  // before the step: it may fail
    std::vector<Tensor> fetched(fetch_names.size());
    RunArgs args;
    args.feeds = &feeds;
    args.fetches = &fetched;
    args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
    args.num_threads = state_.num_threads();
    args.arena = state_.arena();
    args.cancelled = &closed_;
    args.session_cancellation = state_.cancellation();
    args.resources = state_.resources();
    // TensorFlow's rule: the Run's own timeout, else the session's default.
    const int64_t timeout_ms = run_options.timeout_in_ms() > 0 ? run_options.timeout_in_ms()
                                                                : options_.config.operation_timeout_in_ms();
    if (timeout_ms > 0) args.deadline_nanos = NowNanos() + timeout_ms * 1000000;
    proto::StepStats step_stats;
    const bool trace = run_options.trace_level() != proto::RunOptions::NO_TRACE && run_metadata != nullptr;
    if (trace) args.stats = &step_stats;
    std::optional<LocalRendezvous> rendezvous;
    if (ek.num_transfers > 0) args.rendezvous = &rendezvous.emplace();
    args.host_allocator = state_.host_allocator();
    args.file_access = state_.file_access();
    GR_RETURN_IF_ERROR(SyncStreams(ek.streamed_devices, ek.executor->Run(args)));
    std::vector<Tensor> results(fetch_names.size());
    for (size_t k = 0; k < fetched.size(); ++k) {
      const int i = fetch_order[k];
      if (!fetched[k].IsInitialized())
        // TensorFlow's code for a dead fetch ("Retval does not have value").
        return errors::Internal("Fetch '", fetch_names[i], "' has no value: it is dead (on the untaken branch of a ",
                                "Switch, e.g. inside a cond) in this step");
      results[i] = std::move(fetched[k]);
    }
    if (run_metadata) {
      run_metadata->Clear();
      if (trace) *run_metadata->mutable_step_stats() = std::move(step_stats);
      if (partition_graphs != nullptr)
        for (const proto::GraphDef& p : *partition_graphs) *run_metadata->add_partition_graphs() = p;
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
      GR_RETURN_IF_ERROR(PlaceGraph(devices_, PlacementOptionsOf(options_.config), g));
    std::vector<std::vector<PartialTensorShape>> shapes;
    return InferShapes(*g, &shapes, state_.host_allocator());
  }

  // feed_name(i): the caller's feed i.
  template <typename FeedName>
  Status GetOrCreateExecutor(const SortedSignature& sig, FeedName feed_name, const std::vector<std::string>& outputs,
                             const std::vector<std::string>& targets, std::shared_ptr<ExecutorsAndKeys>* out) {
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
    for (int i : sig.feeds) feed_names.push_back(feed_name(i));
    for (int i : sig.fetches) fetch_names.push_back(outputs[i]);
    std::shared_ptr<ExecutorsAndKeys> ek;
    {
      std::lock_guard<std::mutex> lock(graph_mu_);
      if (finalized_) return errors::FailedPrecondition("Session has been finalized.");
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

  // A step's stages, each in its own file: the client graph (feeds,
  // fetches, targets, pruning), placement, the graph passes; then, in
  // BuildExecutor, the transfers between device memories and executor
  // construction. One executor runs all devices of a step: the partitions
  // (PartitionGraphsOf) are what a distributed target would run apart.
  Status BuildStepGraph(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                        const std::vector<std::string>& targets, Graph* g, ClientGraphFeeds* feed_info) {
    GR_RETURN_IF_ERROR(BuildClientGraph(*graph_, feeds, fetches, targets, g, feed_info));
    GR_RETURN_IF_ERROR(PlaceClientGraph(devices_, PlacementOptionsOf(options_.config), g));
    return RunGraphPasses(options_.config.graph_options(), [this](const std::string& d) { return DeviceNamed(d); },
                          g);
  }

  Status BuildExecutor(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                       const std::vector<std::string>& targets, std::shared_ptr<ExecutorsAndKeys>* out) {
    auto ek = std::make_shared<ExecutorsAndKeys>();
    Graph g(&Runtime::Global().ops());
    ClientGraphFeeds feed_info;
    GR_RETURN_IF_ERROR(BuildStepGraph(feeds, fetches, targets, &g, &feed_info));
    GR_RETURN_IF_ERROR(
        InsertStepTransfers([this](const std::string& d) { return DeviceNamed(d); }, &g, &ek->num_transfers));
    ek->feed_types = std::move(feed_info.types);
    ek->feed_names = std::move(feed_info.names);
    ek->fetch_names = fetches;
    ek->targets = targets;
    KernelProvider provider = [this](const Node& n, Device* d, const KernelRegistration** reg, void** kernel,
                                     bool* owned) { return state_.GetKernel(n, d, reg, kernel, owned); };
    DeviceOfNode device_of = [this](const Node& n) { return DeviceNamed(n.assigned_device()); };
    AllocatorOfDevice allocator_of = [this](Device* d) { return state_.AllocatorFor(d); };
    GR_RETURN_IF_ERROR(Executor::Create(g, device_of, allocator_of, provider, &ek->executor));
    ek->streamed_devices = StreamedDevices(*ek->executor);
    *out = std::move(ek);
    return Status::OK();
  }

  // The partition graphs of `ek`'s step, built (the same stages again, then
  // Partition) the first time they are asked for.
  Status PartitionGraphsOf(ExecutorsAndKeys& ek, const std::vector<proto::GraphDef>** out) {
    std::lock_guard<std::mutex> lock(ek.partitions_mu);
    if (!ek.has_partitions) {
      std::lock_guard<std::mutex> graph_lock(graph_mu_);
      if (!graph_)
        return errors::FailedPrecondition("Session has been finalized: the graph is released, and this step's "
                                          "partition graphs were not asked for before");
      Graph g(&Runtime::Global().ops());
      ClientGraphFeeds feed_info;
      GR_RETURN_IF_ERROR(BuildStepGraph(ek.feed_names, ek.fetch_names, ek.targets, &g, &feed_info));
      std::map<std::string, std::unique_ptr<Graph>> partitions;
      GR_RETURN_IF_ERROR(Partition(PartitionOptionsOf(), g, &partitions));
      for (const auto& [device, partition] : partitions)
        PartitionToGraphDef(*partition, &ek.partition_graphs.emplace_back());
      ek.has_partitions = true;
    }
    *out = &ek.partition_graphs;
    return Status::OK();
  }

  static PlacementOptions PlacementOptionsOf(const proto::ConfigProto& config) {
    PlacementOptions p;
    p.allow_soft_placement = config.allow_soft_placement();
    p.log_device_placement = config.log_device_placement();
    return p;
  }

  PartitionOptions PartitionOptionsOf() {
    return TransferPartitionOptions([this](const std::string& d) { return DeviceNamed(d); });
  }

  Device* DeviceNamed(const std::string& name) const {
    for (Device* d : devices_)
      if (d->name() == name) return d;
    return nullptr;
  }

  SessionOptions options_;
  SessionState state_;
  std::vector<Device*> devices_;
  std::atomic<bool> closed_{false};
  std::atomic<int64_t> next_step_id_{1};
  std::atomic<int64_t> active_runs_{0};
  std::mutex run_mu_;  // with runs_done_: Close waiting for active_runs_ == 0
  std::condition_variable runs_done_;

  std::mutex graph_mu_;  // graph_ and executor construction
  std::unique_ptr<Graph> graph_;
  bool finalized_ = false;  // under graph_mu_

  std::mutex callables_mu_;
  std::unordered_map<CallableHandle, std::shared_ptr<Callable>> callables_;
  CallableHandle next_callable_ = 0;  // handles below it were issued

  // LRU cache of executors by SortedSignature key, most recent first.
  std::mutex cache_mu_;
  size_t cache_capacity_;
  using CacheList = std::list<std::pair<std::string, std::shared_ptr<ExecutorsAndKeys>>>;
  CacheList cache_;
  std::unordered_map<std::string, CacheList::iterator> cache_index_;

};

class DirectSessionFactory final : public SessionFactory {
 public:
  Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* out) override {
    // The allowed directories are resolved once, now: a later symlink swap
    // of one of them does not widen the policy.
    const auto& dirs = options.config.graphrt_options().allowed_directories();
    std::unique_ptr<FileAccessPolicy> file_access;
    GR_RETURN_IF_ERROR(FileAccessPolicy::Create(std::vector<std::string>(dirs.begin(), dirs.end()), &file_access));
    *out = std::make_unique<DirectSession>(options, std::move(file_access));
    return Status::OK();
  }
};

}  // namespace

void RegisterDirectSessionFactory() {
  RegisterSessionFactory("", std::make_unique<DirectSessionFactory>());
  RegisterSessionFactory("direct://", std::make_unique<DirectSessionFactory>());
}

}  // namespace graphrt
