// The distributed runtime on loopback, against references measured in the
// same run:
// - BM_CrossTaskStep: one step whose 1-element tensor goes from the client
//   to a worker task and back through the parameter server task (feed on
//   the worker, Identity on the ps, fetched): the per-step latency of the
//   master/worker protocol. Reference: BM_LocalStep, the same graph in a
//   local session, and BM_GetStatusRpc, one RPC round trip on the same
//   loopback. (TensorFlow's step is about 1 ms; the issue's goal 250 us.)
// - BM_RecvTensor64MiB: a 64 MiB float variable on the ps read by the
//   worker (a step that moves it and computes nothing): bytes per second
//   of RecvTensor.
//   Reference: BM_LoopbackSocket64MiB, 64 MiB through a plain loopback TCP
//   socket pair.
// - BM_BetweenGraphTrainW6: W6 (bench/README.md: the W2 MLP, Adam) trained
//   by between-graph replication: its variables on a ps task, each of /1 or
//   /2 worker tasks running its own client's steps on them (asynchronous
//   SGD). Steps per second of all workers together against /0, the same
//   graph in a local session. Each step pulls the weights (2.68 MB, the
//   model's size) from the ps and pushes their gradients (as much) back.
// The servers run in this process (a task per gRPC port): every call still
// crosses loopback TCP.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "train_workloads.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/session.h"
#include "graphrt/distributed/server.h"
#include "graphrt/tensorflow/services.grpc.pb.h"

namespace graphrt {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// A ps task and a worker task in this process.
struct TwoTasks {
  std::unique_ptr<distributed::GrpcServer> ps, worker;
  TwoTasks() {
    const std::string ps_addr = "127.0.0.1:" + std::to_string(FreePort());
    const std::string worker_addr = "127.0.0.1:" + std::to_string(FreePort());
    for (auto [job, server] : {std::make_pair("ps", &ps), std::make_pair("worker", &worker)}) {
      distributed::ServerOptions o;
      distributed::AddJobFromFlag("ps=" + ps_addr, o.server_def.mutable_cluster()).IgnoreError();
      distributed::AddJobFromFlag("worker=" + worker_addr, o.server_def.mutable_cluster()).IgnoreError();
      o.server_def.set_job_name(job);
      Status s = distributed::GrpcServer::Create(o, server);
      if (!s.ok()) std::fprintf(stderr, "server: %s\n", s.ToString().c_str()), std::abort();
    }
  }
  static TwoTasks& Get() {
    static TwoTasks* t = new TwoTasks();
    return *t;
  }
};

std::unique_ptr<Session> NewSessionOn(const std::string& target, const std::string& pbtxt, bool rpc = false) {
  proto::GraphDef g;
  if (!ParseGraphDefText(pbtxt, &g).ok()) std::abort();
  SessionOptions o;
  o.target = target;
  o.config.mutable_rpc_options()->set_use_rpc_for_inprocess_master(rpc);
  std::unique_ptr<Session> s;
  if (!NewSession(o, &s).ok() || !s->Create(g).ok()) std::abort();
  return s;
}

const char kRoundTrip[] = R"pb(
  node { name: "x" op: "Placeholder" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Identity" input: "x" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "z" op: "Identity" input: "y" device: "/job:worker/task:0" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

void RunSteps(benchmark::State& state, Session* s) {
  Tensor x(GR_FLOAT, TensorShape({1}));
  x.data<float>()[0] = 1;
  std::vector<Tensor> out;
  for (auto _ : state) {
    if (!s->Run({{"x", x}}, {"z"}, {}, &out).ok()) state.SkipWithError("Run failed");
  }
}

// /0: the master calls its own task's worker directly (TensorFlow's
// LocalWorker); /1: every call over RPC, the client's to the master
// included (use_rpc_for_inprocess_master).
void BM_CrossTaskStep(benchmark::State& state) {
  auto s = NewSessionOn(TwoTasks::Get().worker->target(), kRoundTrip, state.range(0) != 0);
  RunSteps(state, s.get());
}
BENCHMARK(BM_CrossTaskStep)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

// One unary RPC to the ps task (WorkerService.GetStatus): the unit the
// step's latency is made of (its critical path crosses RunGraph's request
// and answer and two RecvTensors).
void BM_GetStatusRpc(benchmark::State& state) {
  const std::string target = TwoTasks::Get().ps->target();
  auto stub = tensorflow::WorkerService::NewStub(
      grpc::CreateChannel(target.substr(sizeof("grpc://") - 1), grpc::InsecureChannelCredentials()));
  for (auto _ : state) {
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    if (!stub->GetStatus(&ctx, req, &resp).ok()) state.SkipWithError("GetStatus failed");
  }
}
BENCHMARK(BM_GetStatusRpc)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_LocalStep(benchmark::State& state) {
  const char local[] = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Identity" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  auto s = NewSessionOn("", local);
  RunSteps(state, s.get());
}
BENCHMARK(BM_LocalStep)->UseRealTime()->Unit(benchmark::kMicrosecond);

constexpr int64_t kBigElements = int64_t{16} << 20;  // 64 MiB of float

void BM_RecvTensor64MiB(benchmark::State& state) {
  // A variable on the ps (filled once), read on the worker by an Identity
  // that the step runs as a target: the step moves the 64 MiB and computes
  // nothing.
  const std::string graph = R"pb(
    node { name: "dims" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: )pb" +
                            std::to_string(kBigElements) + R"pb( } } } }
    node { name: "one" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
    node { name: "fill" op: "Fill" input: "dims" input: "one" device: "/job:ps/task:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }
    node { name: "big" op: "VariableV2" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: )pb" +
                            std::to_string(kBigElements) + R"pb( } } } } }
    node { name: "init" op: "Assign" input: "big" input: "fill" device: "/job:ps/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "read" op: "Identity" input: "big" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  auto s = NewSessionOn(TwoTasks::Get().worker->target(), graph);
  std::vector<Tensor> out;
  if (!s->Run({}, {}, {"init"}, &out).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    if (!s->Run({}, {}, {"read"}, &out).ok()) state.SkipWithError("Run failed");
  }
  state.SetBytesProcessed(state.iterations() * kBigElements * 4);
}
BENCHMARK(BM_RecvTensor64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

// A ps task and two worker tasks in this process, for training.
struct ThreeTasks {
  std::unique_ptr<distributed::GrpcServer> ps, workers[2];
  ThreeTasks() {
    const std::string ps_addr = "127.0.0.1:" + std::to_string(FreePort());
    const std::string worker_addrs = "127.0.0.1:" + std::to_string(FreePort()) + ",127.0.0.1:" + std::to_string(FreePort());
    auto start = [&](const char* job, int task, std::unique_ptr<distributed::GrpcServer>* server) {
      distributed::ServerOptions o;
      distributed::AddJobFromFlag("ps=" + ps_addr, o.server_def.mutable_cluster()).IgnoreError();
      distributed::AddJobFromFlag("worker=" + worker_addrs, o.server_def.mutable_cluster()).IgnoreError();
      o.server_def.set_job_name(job);
      o.server_def.set_task_index(task);
      Status s = distributed::GrpcServer::Create(o, server);
      if (!s.ok()) std::fprintf(stderr, "server: %s\n", s.ToString().c_str()), std::abort();
    };
    start("ps", 0, &ps);
    start("worker", 0, &workers[0]);
    start("worker", 1, &workers[1]);
  }
  static ThreeTasks& Get() {
    static ThreeTasks* t = new ThreeTasks();
    return *t;
  }
};

void BM_BetweenGraphTrainW6(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  bench::TrainWorkload w = bench::MlpTrain();
  // Variables (weights, Adam's slots and powers, the global step) on the ps
  // (TensorFlow's replica_device_setter); the ops that read or update them
  // follow through their colocation attrs; the rest runs on each worker.
  if (workers > 0)
    for (proto::NodeDef& n : *w.graph.mutable_node())
      if (n.op() == "VariableV2") n.set_device("/job:ps/task:0");
  std::vector<std::unique_ptr<Session>> sessions;
  for (int k = 0; k < std::max(1, workers); ++k) {
    SessionOptions o;
    if (workers > 0) o.target = ThreeTasks::Get().workers[k]->target();
    std::unique_ptr<Session> s;
    Status st = NewSession(o, &s);
    if (st.ok()) st = s->Create(w.graph);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
    sessions.push_back(std::move(s));
  }
  if (!sessions[0]->Run({}, {}, {w.init}, nullptr).ok()) return state.SkipWithError("init failed");
  Tensor x(GR_FLOAT, TensorShape(w.x.dims));
  const std::vector<float> xs = bench::TrainInput(w);
  std::copy(xs.begin(), xs.end(), x.data<float>());
  Tensor labels(GR_INT32, TensorShape(w.labels.dims));
  const std::vector<int64_t> ls = bench::TrainLabels(w);
  for (size_t i = 0; i < ls.size(); ++i) labels.data<int32_t>()[i] = static_cast<int32_t>(ls[i]);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{w.x.name, x}, {w.labels.name, labels}};
  auto step = [&](Session* s) { return s->Run(feeds, {}, {w.train}, nullptr); };
  for (auto _ : state) {
    std::vector<std::thread> others;
    std::atomic<bool> failed{false};
    for (size_t k = 1; k < sessions.size(); ++k)
      others.emplace_back([&, k] { failed = failed || !step(sessions[k].get()).ok(); });
    failed = failed || !step(sessions[0].get()).ok();
    for (auto& t : others) t.join();
    if (failed) return state.SkipWithError("a training step failed");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(sessions.size()));  // steps
}
BENCHMARK(BM_BetweenGraphTrainW6)->Arg(0)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_LoopbackSocket64MiB(benchmark::State& state) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  listen(listener, 1);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a);
  int server = accept(listener, nullptr, nullptr);
  const size_t bytes = kBigElements * 4;
  std::vector<char> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    std::thread writer([&] {
      for (size_t off = 0; off < bytes;) {
        const ssize_t n = write(client, src.data() + off, bytes - off);
        if (n <= 0) return;
        off += static_cast<size_t>(n);
      }
    });
    for (size_t off = 0; off < bytes;) {
      const ssize_t n = read(server, dst.data() + off, bytes - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    writer.join();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  close(client);
  close(server);
  close(listener);
}
BENCHMARK(BM_LoopbackSocket64MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace graphrt

int main(int argc, char** argv) { return graphrt::bench::RunWithPlugins(argc, argv); }
