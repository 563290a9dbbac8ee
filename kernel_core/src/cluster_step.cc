#include "graphrt/core/cluster_step.h"

#include <random>
#include <unordered_map>
#include <unordered_set>

#include "cancellation.h"
#include "client_graph.h"
#include "executor.h"
#include "graph_passes.h"
#include "graphrt/core/control_flow.h"
#include "graphrt/core/device_name.h"
#include "graphrt/core/partition.h"
#include "graphrt/core/runtime.h"
#include "node_def_util.h"
#include "placer.h"
#include "session_state.h"
#include "shape_inference.h"

namespace graphrt {

// graph.cc: ConvertGraphDefToGraph for a graph a master partitioned, whose
// added nodes have TensorFlow's internal names ("_send_x_0", "_recv_y_0").
Status ConvertPartitionGraphDef(const proto::GraphDef& def, Graph* g, const GraphLimits& limits);

uint64_t DeviceIncarnation(const std::string& device_name) {
  static const uint64_t process_seed = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  const uint64_t incarnation = std::hash<std::string>{}(device_name) ^ process_seed;
  return incarnation != 0 ? incarnation : 1;  // 0 means "unknown" on the wire
}

namespace {

bool IsFullName(const DeviceNameParts& p) {
  return p.has_job && p.has_replica && p.has_task && p.has_type && p.has_id;
}

std::string TaskName(const DeviceNameParts& p) {
  return "/job:" + p.job + "/replica:" + std::to_string(p.replica) + "/task:" + std::to_string(p.task);
}

// This process's devices, read once per use.
class LocalDevices {
 public:
  LocalDevices() { Runtime::Global().devices().GetDevices(&devices_).IgnoreError(); }
  // The device of `type` with index `id` (with id < 0: of any index, the
  // lowest first); null if none.
  Device* Find(const std::string& type, int id = -1) const {
    Device* any = nullptr;
    for (Device* d : devices_) {
      if (d->type() != type) continue;
      if (d->ordinal() == id) return d;
      if (any == nullptr) any = d;
    }
    return id < 0 ? any : nullptr;
  }

 private:
  std::vector<Device*> devices_;
};

Status PlacementDevicesOf(const std::vector<ClusterDevice>& devices, const LocalDevices& local_devices,
                          std::vector<PlacementDevice>* out) {
  out->clear();
  for (const ClusterDevice& c : devices) {
    PlacementDevice p;
    p.name = c.name;
    GR_RETURN_IF_ERROR(ParseDeviceName(c.name, &p.parts));
    if (!IsFullName(p.parts)) return errors::InvalidArgument("Cluster device '", c.name, "' is not a full device name");
    p.type = c.type;
    p.id = p.parts.id;
    // What this process's backend of the type says (the cluster runs the
    // same plugins); a type this process lacks is assumed to have its own.
    Device* local = local_devices.Find(c.type);
    p.host_memory = local != nullptr && local->host_memory();
    out->push_back(std::move(p));
  }
  if (out->empty()) return errors::FailedPrecondition("The cluster has no devices");
  return Status::OK();
}

PlacementOptions ClusterPlacementOptions(const proto::ConfigProto& config) {
  PlacementOptions p;
  p.allow_soft_placement = config.allow_soft_placement();
  p.log_device_placement = config.log_device_placement();
  p.cluster = true;
  return p;
}

// A name not yet in `names`: `base`, else base_1, base_2, ...
std::string UniqueName(const std::string& base, std::unordered_set<std::string>* names) {
  std::string name = base;
  for (int i = 1; !names->insert(name).second; ++i) name = base + "_" + std::to_string(i);
  return name;
}

// Replaces the client graph's _Arg and _Retval nodes with TensorFlow's
// client-terminated transfers (subgraph.cc's feeds and fetches): the value
// of feed k is sent into the rendezvous of its partition's step by the
// master, fetch k is received from it.
Status TerminateFeedsAndFetches(const std::vector<std::string>& feed_names, const std::vector<std::string>& fetches,
                                const std::function<uint64_t(const std::string&)>& incarnation_of, Graph* g,
                                ClusterStep* out) {
  std::unordered_set<std::string> names;
  for (const Node* n : g->op_nodes()) names.insert(n->name());
  out->feeds.resize(feed_names.size());
  out->fetches.resize(fetches.size());
  for (Node* n : g->op_nodes()) {
    const bool arg = n->op() == kArgOp;
    if (!arg && n->op() != kRetvalOp) continue;
    const int64_t index = FindAttr(n->def(), "index")->i();
    const proto::DataType type = FindAttr(n->def(), "T")->type();
    const std::string device = n->assigned_device();  // n is removed below
    const std::string& tensor_name = arg ? feed_names[index] : fetches[index];
    const uint64_t incarnation = incarnation_of(device);
    proto::NodeDef d;
    std::string node;
    int slot = 0;
    bool is_control;
    ParseTensorName(tensor_name, &node, &slot, &is_control);
    d.set_name(UniqueName((arg ? "_recv_" : "_send_") + node + "_" + std::to_string(slot), &names));
    d.set_op(arg ? kRecvOp : kSendOp);
    d.set_device(device);
    auto& attr = *d.mutable_attr();
    attr[arg ? "tensor_type" : "T"].set_type(type);
    attr["tensor_name"].set_s(tensor_name);
    attr["send_device"].set_s(device);
    attr["send_device_incarnation"].set_i(static_cast<int64_t>(incarnation));
    attr["recv_device"].set_s(device);
    attr["client_terminated"].set_b(true);
    Node* t;
    GR_RETURN_IF_ERROR(g->AddNode(std::move(d), &t));
    t->set_assigned_device(device);
    if (arg) {
      std::vector<std::tuple<Node*, int, bool>> consumers;  // dst, input, control
      for (const Edge* e : n->out_edges()) consumers.emplace_back(e->dst(), e->dst_input(), e->IsControlEdge());
      for (const auto& [dst, input, control] : consumers) {
        if (control)
          g->AddControlEdge(t, dst);
        else
          g->AddEdge(t, 0, dst, input);
      }
      g->AddControlEdge(g->source_node(), t);
    } else {
      const Edge* in = n->input_edge(0);
      if (in == nullptr) return errors::Internal("Fetch '", tensor_name, "' has no input in the client graph");
      g->AddEdge(in->src(), in->src_output(), t, 0);
      g->AddControlEdge(t, g->sink_node());
    }
    g->RemoveNode(n);
    std::string task;
    GR_RETURN_IF_ERROR(TaskOfDevice(device, &task));
    ClusterStep::Endpoint& e = arg ? out->feeds[index] : out->fetches[index];
    e.task = task;
    e.key = Rendezvous::CreateKey(device, incarnation, device, tensor_name, 0, 0);
  }
  return Status::OK();
}

}  // namespace

Status TaskOfDevice(const std::string& device_name, std::string* task) {
  DeviceNameParts p;
  GR_RETURN_IF_ERROR(ParseDeviceName(device_name, &p));
  if (!IsFullName(p))
    return errors::InvalidArgument("'", device_name, "' is not a full device name (/job:J/replica:R/task:T/device:TYPE:N)");
  *task = TaskName(p);
  return Status::OK();
}

Status PlaceOnCluster(const std::vector<ClusterDevice>& devices, const proto::ConfigProto& config, Graph* g) {
  if (HasControlFlow(*g)) {  // malformed loops fail here, naming their nodes
    FrameLayout frames;
    GR_RETURN_IF_ERROR(ComputeFrameLayout(*g, &frames));
  }
  std::vector<PlacementDevice> placement;
  GR_RETURN_IF_ERROR(PlacementDevicesOf(devices, LocalDevices(), &placement));
  GR_RETURN_IF_ERROR(PlaceGraph(placement, ClusterPlacementOptions(config), g));
  std::vector<std::vector<PartialTensorShape>> shapes;
  return InferShapes(*g, &shapes, HostAllocator());
}

Status BuildClusterStep(const Graph& full, const std::vector<ClusterDevice>& devices, const proto::ConfigProto& config,
                        const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                        const std::vector<std::string>& targets, ClusterStep* out) {
  *out = ClusterStep();
  const LocalDevices local_devices;
  std::vector<PlacementDevice> placement;
  GR_RETURN_IF_ERROR(PlacementDevicesOf(devices, local_devices, &placement));
  Graph g(&Runtime::Global().ops());
  ClientGraphFeeds feed_info;
  GR_RETURN_IF_ERROR(BuildClientGraph(full, feeds, fetches, targets, &g, &feed_info));
  GR_RETURN_IF_ERROR(PlaceClientGraph(placement, ClusterPlacementOptions(config), &g));
  // The passes ask a device for its type and kernels: this process's
  // device of the same type answers for a remote one.
  std::unordered_map<std::string, Device*> local_for;
  for (const ClusterDevice& d : devices) local_for[d.name] = local_devices.Find(d.type);
  GR_RETURN_IF_ERROR(RunGraphPasses(
      config.graph_options(),
      [&](const std::string& name) {
        auto it = local_for.find(name);
        return it == local_for.end() ? nullptr : it->second;
      },
      &g));
  std::unordered_map<std::string, uint64_t> incarnation;
  for (const ClusterDevice& d : devices) incarnation[d.name] = d.incarnation;
  auto incarnation_of = [&](const std::string& device) {
    auto it = incarnation.find(device);
    return it == incarnation.end() ? uint64_t{0} : it->second;
  };
  GR_RETURN_IF_ERROR(TerminateFeedsAndFetches(feed_info.names, fetches, incarnation_of, &g, out));
  out->feed_types = std::move(feed_info.types);

  PartitionOptions options;
  options.get_incarnation = incarnation_of;
  options.node_to_loc = [](const Node& n) {
    std::string task;
    return TaskOfDevice(n.assigned_device(), &task).ok() ? task : n.assigned_device();
  };
  // HostMemory args matter only between devices of one task: the worker's
  // own transfers (WorkerGraph) handle them.
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  GR_RETURN_IF_ERROR(Partition(options, g, &partitions));
  for (const auto& [task, partition] : partitions) PartitionToGraphDef(*partition, &out->partitions[task]);
  return Status::OK();
}

// ---- The worker's side.

SharedResources::SharedResources() : resources_(std::make_shared<ResourceMgr>()) {}
SharedResources::~SharedResources() = default;

void SharedResources::Cleanup(const std::vector<std::string>& containers) {
  if (containers.empty()) resources_->Cleanup(ResourceMgr::kDefaultContainer);
  for (const std::string& c : containers) resources_->Cleanup(c);
}

WorkerState::WorkerState(const proto::ConfigProto& config, SharedResources* shared) {
  const auto& dirs = config.graphrt_options().allowed_directories();
  std::unique_ptr<FileAccessPolicy> file_access;
  // Directories that do not resolve allow nothing rather than everything.
  if (!FileAccessPolicy::Create(std::vector<std::string>(dirs.begin(), dirs.end()), &file_access).ok())
    FileAccessPolicy::Create({"/nonexistent/graphrt-no-access"}, &file_access).IgnoreError();
  state_ = std::make_unique<SessionState>(config, std::move(file_access),
                                          shared != nullptr ? shared->resources_ : nullptr);
}

WorkerState::~WorkerState() = default;

void WorkerState::Cancel() { state_->cancellation()->Cancel(); }

namespace cluster_internal {
struct WorkerGraphImpl {
  std::shared_ptr<WorkerState> state;
  std::unique_ptr<Executor> executor;
  std::vector<Device*> streamed_devices;
};
}  // namespace cluster_internal

WorkerGraph::WorkerGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorkerGraph::~WorkerGraph() = default;

Status WorkerGraph::Create(const proto::GraphDef& def, const std::string& task, std::shared_ptr<WorkerState> state,
                           std::unique_ptr<WorkerGraph>* out) {
  return StatusFromExceptions("RegisterGraph", [&]() -> Status {
    auto g = std::make_unique<Graph>(&Runtime::Global().ops());
    GR_RETURN_IF_ERROR(ConvertPartitionGraphDef(def, g.get(), GraphLimits()));
    // The devices the master named, on this process: same type and index.
    const LocalDevices local_devices;
    std::unordered_map<std::string, Device*> device_named;
    for (Node* n : g->op_nodes()) {
      DeviceNameParts p;
      Status parsed = ParseDeviceName(n->requested_device(), &p);
      if (!parsed.ok() || !IsFullName(p))
        return errors::InvalidArgument("Missing device name in: ", NodePrefix(n->def()), " has device '",
                                       n->requested_device(), "'; a registered graph's nodes need full device names");
      if (TaskName(p) != task)
        return errors::InvalidArgument(NodePrefix(n->def()), ": its device '", n->requested_device(),
                                       "' is not on this worker (", task, ")");
      const std::string name = p.ToString();
      Device*& d = device_named[name];
      if (d == nullptr) d = local_devices.Find(p.type, p.id);
      if (d == nullptr)
        return errors::InvalidArgument(NodePrefix(n->def()), ": this worker (", task, ") has no device ", p.type,
                                       ":", p.id);
      n->set_assigned_device(name);
    }
    // Where each _Recv's value comes from: another task's value arrives in
    // host memory (RecvTensor); this task's device is named by its local
    // name for the kernel, which copies from it.
    for (Node* n : g->op_nodes()) {
      if (n->op() != kRecvOp) continue;
      const proto::AttrValue* send = FindAttr(n->def(), "send_device");
      DeviceNameParts p;
      if (send == nullptr || !ParseDeviceName(send->s(), &p).ok() || !IsFullName(p)) continue;
      proto::AttrValue v;
      if (TaskName(p) != task) {
        v.set_b(true);
        n->SetInternalAttr(kSendFromHostAttr, v);
      } else if (Device* local = local_devices.Find(p.type, p.id)) {
        v.set_s(local->name());
        n->SetInternalAttr(kSendDeviceLocalAttr, v);
      }
    }
    auto device_of_name = [&](const std::string& name) -> Device* {
      auto it = device_named.find(name);
      return it == device_named.end() ? nullptr : it->second;
    };
    int num_transfers = 0;
    GR_RETURN_IF_ERROR(InsertStepTransfers(device_of_name, g.get(), &num_transfers));
    auto impl = std::make_unique<Impl>();
    impl->state = std::move(state);
    SessionState* s = impl->state->state_.get();
    KernelProvider provider = [s](const Node& n, Device* d, const KernelRegistration** reg, void** kernel,
                                  bool* owned) { return s->GetKernel(n, d, reg, kernel, owned); };
    DeviceOfNode device_of = [&](const Node& n) { return device_of_name(n.assigned_device()); };
    AllocatorOfDevice allocator_of = [s](Device* d) { return s->AllocatorFor(d); };
    GR_RETURN_IF_ERROR(Executor::Create(*g, device_of, allocator_of, provider, &impl->executor));
    impl->streamed_devices = StreamedDevices(*impl->executor);
    out->reset(new WorkerGraph(std::move(impl)));
    return Status::OK();
  });
}

StepCancellation::StepCancellation() : registry_(std::make_unique<CancellationRegistry>()) {}
StepCancellation::~StepCancellation() = default;
void StepCancellation::Cancel() { registry_->Cancel(); }

Status WorkerGraph::Run(const StepArgs& step) {
  if (step.rendezvous == nullptr) return errors::InvalidArgument("WorkerGraph::Run needs a rendezvous");
  SessionState* s = impl_->state->state_.get();
  std::vector<Tensor> no_feeds, no_fetches;
  RunArgs args;
  args.feeds = &no_feeds;
  args.fetches = &no_fetches;
  args.step_id = step.step_id;
  args.num_threads = s->num_threads();
  args.arena = s->arena();
  args.cancelled = step.cancelled;
  args.session_cancellation = s->cancellation();
  // A step that can be cancelled alone waits on its own registry, which the
  // session's cancels too.
  int64_t chained = -1;
  if (step.cancellation != nullptr) {
    CancellationRegistry* own = step.cancellation->registry_.get();
    if (!s->cancellation()->Add([](void* r) { static_cast<CancellationRegistry*>(r)->Cancel(); }, own, &chained)) {
      chained = -1;
      own->Cancel();  // the session is being deleted
    }
    args.session_cancellation = own;
  }
  struct Unchain {
    CancellationRegistry* session;
    int64_t token;
    ~Unchain() {
      if (token >= 0) session->Remove(token);
    }
  } unchain{s->cancellation(), chained};
  args.resources = s->resources();
  args.deadline_nanos = step.deadline_nanos;
  args.stats = step.stats;
  args.rendezvous = step.rendezvous;
  args.host_allocator = s->host_allocator();
  args.file_access = s->file_access();
  return SyncStreams(impl_->streamed_devices,
                     StatusFromExceptions("RunGraph", [&] { return impl_->executor->Run(args); }));
}

}  // namespace graphrt
