// The distributed runtime, end to end on one machine: `graphrt server`
// processes on 127.0.0.1 (free ports), clients through the grpc:// Session
// and through raw MasterService calls. The behaviours are TensorFlow's own
// distributed tests' (tf_distributed_facts.md section 12), with answers
// computed by hand.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "graphrt/client/hooks.h"
#include "graphrt/client/monitored_session.h"
#include "graphrt/core/rendezvous.h"
#include "graphrt/core/session.h"
#include "graphrt/distributed/server.h"
#include "graphrt/proto/worker.pb.h"
#include "graphrt/tensorflow/services.grpc.pb.h"
#include "test_util.h"

namespace graphrt {
namespace {

using testing::MakeTensor;
using testing::ParseGraph;
using testing::ToVector;

// A port nothing listens on now (the kernel's next free one).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// A `graphrt server` child process; killed (SIGKILL) when destroyed unless
// it has exited, and when the test process dies first (a test killed at
// its timeout leaves no server behind). The signal comes when the thread
// that made it ends: make servers on the test's own thread.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& args) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    log_ = testing::MakeTempDir("distributed_test") + "/server.log";
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(126);
      dup2(out[1], 1);
      int log = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) dup2(log, 2);
      close(out[0]);
      std::vector<std::string> all = {GRAPHRT_CLI, "server"};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }

  // The ready line ("graphrt server: ... serving on grpc://localhost:P ...");
  // "" (a test failure unless `may_fail`) when the server exits first.
  std::string WaitReady(int timeout_ms = 30000, bool may_fail = false) {
    std::string line;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char c;
      if (read(out_, &c, 1) != 1) break;
      if (c == '\n') return line;
      line.push_back(c);
    }
    if (!may_fail) ADD_FAILURE() << "server did not get ready; its log:\n" << Log();
    return "";
  }
  // grpc://localhost:P from the ready line.
  std::string Target() {
    const std::string line = WaitReady();
    const size_t at = line.find("grpc://");
    if (at == std::string::npos) return "";
    return line.substr(at, line.find(' ', at) - at);
  }
  void Signal(int sig) { kill(pid_, sig); }
  // The exit status (-1 if killed by a signal).
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string Log() const {
    std::ifstream f(log_);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string log_;
};

// A cluster of `graphrt server` tasks on free loopback ports.
class Cluster {
 public:
  // jobs: {"ps", 1}, {"worker", 2} ...
  // A port FreePort chose may be taken before the server binds it (by
  // another test's server or connection): then the cluster starts again on
  // other ports.
  // `extra`: flags every task gets besides its cluster, job and index.
  explicit Cluster(const std::vector<std::pair<std::string, int>>& jobs, std::vector<std::string> extra = {})
      : extra_(std::move(extra)) {
    for (int attempt = 1;; ++attempt) {
      flags_.clear();
      ports_.clear();
      servers_.clear();
      for (const auto& [job, n] : jobs) {
        std::string flag = job + "=";
        for (int i = 0; i < n; ++i) {
          const int port = FreePort();
          ports_[job].push_back(port);
          flag += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(port);
        }
        flags_.push_back("--cluster");
        flags_.push_back(flag);
      }
      for (const auto& [job, n] : jobs)
        for (int i = 0; i < n; ++i) Start(job, i);
      bool ready = true;
      for (auto& [name, p] : servers_) ready = !p->WaitReady(30000, /*may_fail=*/attempt < 3).empty() && ready;
      if (ready || attempt == 3) return;
    }
  }
  void Start(const std::string& job, int task) {
    std::vector<std::string> args = flags_;
    args.insert(args.end(), {"--job-name", job, "--task-index", std::to_string(task)});
    args.insert(args.end(), extra_.begin(), extra_.end());
    servers_[job + std::to_string(task)] = std::make_unique<ServerProcess>(args);
  }
  // Restarts a task on its port (after Kill).
  void Restart(const std::string& job, int task) {
    Start(job, task);
    servers_[job + std::to_string(task)]->WaitReady();
  }
  ServerProcess& server(const std::string& job, int task) { return *servers_.at(job + std::to_string(task)); }
  std::string Target(const std::string& job, int task) const {
    return "grpc://127.0.0.1:" + std::to_string(ports_.at(job)[task]);
  }
  void Kill(const std::string& job, int task) {
    server(job, task).Signal(SIGKILL);
    server(job, task).Wait();
  }

 private:
  const std::vector<std::string> extra_;
  std::vector<std::string> flags_;
  std::map<std::string, std::vector<int>> ports_;
  std::map<std::string, std::unique_ptr<ServerProcess>> servers_;
};

std::unique_ptr<Session> Connect(const std::string& target, proto::ConfigProto config = {}) {
  SessionOptions options;
  options.target = target;
  options.config = std::move(config);
  std::unique_ptr<Session> s;
  Status st = NewSession(options, &s);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

// c = a (1x2) x b (2x1) = [[11]]
const char kMatMul[] = R"pb(
  node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 2 } }
                                              float_val: 1 float_val: 2 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 1 } }
                                              float_val: 3 float_val: 4 } } } }
  node { name: "c" op: "MatMul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

// x fed on the worker, through the ps, back to the worker.
const char kRoundTrip[] = R"pb(
  node { name: "x" op: "Placeholder" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Identity" input: "x" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "z" op: "Identity" input: "y" device: "/job:worker/task:0" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

// A FIFO queue "q" on `queue_task`'s CPU with its dequeue "deq" (which
// waits while the queue is empty) and "enq" of a 1 there; "out" reads the
// dequeued value on `out_task`.
std::string BlockingQueueGraph(const std::string& queue_task, const std::string& out_task) {
  const std::string on = "device: '/job:" + queue_task + "/task:0' ";
  return "node { name: 'q' op: 'FIFOQueueV2' " + on +
         "attr { key: 'component_types' value { list { type: DT_FLOAT } } } }"
         "node { name: 'deq' op: 'QueueDequeueV2' input: 'q' " + on +
         "attr { key: 'component_types' value { list { type: DT_FLOAT } } } }"
         "node { name: 'out' op: 'Identity' input: 'deq' device: '/job:" + out_task + "/task:0' "
         "attr { key: 'T' value { type: DT_FLOAT } } }"
         "node { name: 'one' op: 'Const' " + on + "attr { key: 'dtype' value { type: DT_FLOAT } } "
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }"
         "node { name: 'enq' op: 'QueueEnqueueV2' input: 'q' input: 'one' " + on +
         "attr { key: 'Tcomponents' value { list { type: DT_FLOAT } } } }";
}

class DistributedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::LoadStandardPlugins(); }
};

TEST_F(DistributedTest, CreateRunCloseManyTimesOnOneSessionObject) {
  ServerProcess server({"--port", "0"});
  const std::string target = server.Target();
  ASSERT_FALSE(target.empty());
  auto session = Connect(target);
  for (int i = 0; i < 25; ++i) {
    ASSERT_TRUE(session->Create(ParseGraph(kMatMul)).ok()) << i;
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {}, {"c"}, &out).ok());
    EXPECT_TRUE(out.empty());
    Status s = session->Run({}, {"c"}, {"b"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({11}));
    ASSERT_TRUE(session->Close().ok());
  }
}

TEST_F(DistributedTest, FetchesComeBackInTheOrderAskedAndRepeated) {
  ServerProcess server({"--port", "0"});
  auto session = Connect(server.Target());
  ASSERT_TRUE(session->Create(ParseGraph(kMatMul)).ok());
  std::vector<Tensor> out;
  Status s = session->Run({}, {"c", "a", "c", "b:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({11}));
  EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({1, 2}));
  EXPECT_EQ(ToVector<float>(out[2]), std::vector<float>({11}));
  EXPECT_EQ(ToVector<float>(out[3]), std::vector<float>({3, 4}));
  // A fed tensor is fetched as fed; unknown names are TensorFlow's NOT_FOUND.
  s = session->Run({{"a", MakeTensor<float>(GR_FLOAT, {1, 2}, {5, 6})}}, {"c", "a"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({5 * 3 + 6 * 4}));
  EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({5, 6}));
  s = session->Run({}, {"nope"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kNotFound) << s;
  // The session keeps working.
  EXPECT_TRUE(session->Run({}, {"c"}, {}, &out).ok());
}

// Raw MasterService calls, as TensorFlow's client makes them.
class MasterStub {
 public:
  explicit MasterStub(const std::string& target)
      : stub_(tensorflow::MasterService::NewStub(
            grpc::CreateChannel(target.substr(7), grpc::InsecureChannelCredentials()))) {}
  template <typename Req, typename Resp>
  grpc::Status Call(grpc::Status (tensorflow::MasterService::Stub::*m)(grpc::ClientContext*, const Req&, Resp*),
                    const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return ((*stub_).*m)(&ctx, req, resp);
  }
  tensorflow::MasterService::Stub* operator->() { return stub_.get(); }

 private:
  std::unique_ptr<tensorflow::MasterService::Stub> stub_;
};

TEST_F(DistributedTest, MasterServiceVersionsHandlesAndCodes) {
  ServerProcess server({"--port", "0"});
  MasterStub master(server.Target());
  using S = tensorflow::MasterService::Stub;
  proto::CloseSessionRequest close;
  proto::CloseSessionResponse closed;
  close.set_session_handle("randombits");
  EXPECT_EQ(master.Call(&S::CloseSession, close, &closed).error_code(), grpc::StatusCode::ABORTED);

  proto::CreateSessionRequest create;
  *create.mutable_graph_def() = ParseGraph(kMatMul);
  proto::CreateSessionResponse created;
  ASSERT_TRUE(master.Call(&S::CreateSession, create, &created).ok());
  EXPECT_EQ(created.graph_version(), 0);
  EXPECT_EQ(created.session_handle().size(), 16u);

  // Extend: each returns a larger version; the new node is then fetchable.
  proto::ExtendSessionRequest extend;
  extend.set_session_handle(created.session_handle());
  *extend.mutable_graph_def() = ParseGraph(R"pb(
    node { name: "d" op: "Mul" input: "c" input: "c" attr { key: "T" value { type: DT_FLOAT } } })pb");
  extend.set_current_graph_version(0);
  proto::ExtendSessionResponse extended;
  ASSERT_TRUE(master.Call(&S::ExtendSession, extend, &extended).ok());
  EXPECT_EQ(extended.new_graph_version(), 1);
  // The same nodes again at the current version: the names exist.
  extend.set_current_graph_version(1);
  EXPECT_EQ(master.Call(&S::ExtendSession, extend, &extended).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // A stale version: ABORTED.
  extend.set_current_graph_version(0);
  grpc::Status stale = master.Call(&S::ExtendSession, extend, &extended);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_NE(stale.error_message().find("Current version is 1 but caller expected 0"), std::string::npos);
  extend.set_session_handle("nosuchsession");
  EXPECT_EQ(master.Call(&S::ExtendSession, extend, &extended).error_code(), grpc::StatusCode::ABORTED);

  proto::RunStepRequest run;
  run.set_session_handle(created.session_handle());
  run.add_fetch("d");
  run.set_store_errors_in_response_body(true);
  proto::RunStepResponse ran;
  ASSERT_TRUE(master.Call(&S::RunStep, run, &ran).ok());
  ASSERT_EQ(ran.status_code(), 0) << ran.status_error_message();
  ASSERT_EQ(ran.tensor_size(), 1);
  EXPECT_EQ(ran.tensor(0).name(), "d");
  Tensor d;
  ASSERT_TRUE(Tensor::FromProto(ran.tensor(0).tensor(), &d).ok());
  EXPECT_EQ(ToVector<float>(d), std::vector<float>({121}));
  // An error travels in the body when asked, as the RPC's status otherwise.
  run.set_fetch(0, "missing");
  ASSERT_TRUE(master.Call(&S::RunStep, run, &ran).ok());
  EXPECT_EQ(ran.status_code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
  run.set_store_errors_in_response_body(false);
  EXPECT_EQ(master.Call(&S::RunStep, run, &ran).error_code(), grpc::StatusCode::NOT_FOUND);

  // ListDevices without a handle: this task's CPU is local.
  proto::ListDevicesRequest list;
  proto::ListDevicesResponse devices;
  ASSERT_TRUE(master.Call(&S::ListDevices, list, &devices).ok());
  ASSERT_GE(devices.local_device_size(), 1);
  EXPECT_EQ(devices.local_device(0).device_type(), "CPU");
  EXPECT_EQ(devices.local_device(0).name(), "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_NE(devices.local_device(0).incarnation(), 0u);
  EXPECT_EQ(devices.remote_device_size(), 0);

  // Reset closes every session.
  proto::ResetRequest reset;
  proto::ResetResponse reset_done;
  ASSERT_TRUE(master.Call(&S::Reset, reset, &reset_done).ok());
  close.set_session_handle(created.session_handle());
  EXPECT_EQ(master.Call(&S::CloseSession, close, &closed).error_code(), grpc::StatusCode::ABORTED);

  proto::PartialRunSetupRequest partial;
  proto::PartialRunSetupResponse partial_done;
  EXPECT_EQ(master.Call(&S::PartialRunSetup, partial, &partial_done).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(DistributedTest, ConcurrentExtendsOfOneVersionOneWins) {
  ServerProcess server({"--port", "0"});
  MasterStub master(server.Target());
  using S = tensorflow::MasterService::Stub;
  proto::CreateSessionRequest create;
  *create.mutable_graph_def() = ParseGraph(kMatMul);
  proto::CreateSessionResponse created;
  ASSERT_TRUE(master.Call(&S::CreateSession, create, &created).ok());
  std::atomic<int> ok{0}, aborted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i)
    threads.emplace_back([&, i] {
      proto::ExtendSessionRequest extend;
      extend.set_session_handle(created.session_handle());
      extend.set_current_graph_version(0);
      *extend.mutable_graph_def() = ParseGraph("node { name: 'n" + std::to_string(i) +
                                               "' op: 'Identity' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }");
      proto::ExtendSessionResponse r;
      grpc::Status s = master.Call(&S::ExtendSession, extend, &r);
      if (s.ok()) ++ok;
      if (s.error_code() == grpc::StatusCode::ABORTED) ++aborted;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(aborted.load(), 19);
}

TEST_F(DistributedTest, CallablesRunOnTheCluster) {
  ServerProcess server({"--port", "0"});
  auto session = Connect(server.Target());
  ASSERT_TRUE(session->Create(ParseGraph(kMatMul)).ok());
  proto::CallableOptions opts;
  opts.add_feed("a");
  opts.add_fetch("c");
  opts.add_fetch("a");
  Session::CallableHandle h;
  ASSERT_TRUE(session->MakeCallable(opts, &h).ok());
  std::vector<Tensor> out;
  Status s = session->RunCallable(h, {MakeTensor<float>(GR_FLOAT, {1, 2}, {1, 1})}, &out, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({7}));
  EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({1, 1}));
  ASSERT_TRUE(session->ReleaseCallable(h).ok());
  s = session->RunCallable(h, {MakeTensor<float>(GR_FLOAT, {1, 2}, {1, 1})}, &out, nullptr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("released"), std::string::npos) << s;
}

// x (fed) on the worker, A on the ps, y = A x on the ps: feeds and fetches
// cross tasks. Power iteration converges to A's largest eigenvalue, 2.
TEST_F(DistributedTest, PowerIterationAcrossTwoTasks) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto session = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(session->Create(ParseGraph(R"pb(
    node { name: "x" op: "Placeholder" device: "/job:worker/task:0"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "A" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
                                                float_val: 2 float_val: 0 float_val: 0 float_val: 1 } } } }
    node { name: "y" op: "MatMul" input: "A" input: "x" device: "/job:ps/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y2" op: "Mul" input: "y" input: "y" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb")).ok());
  std::vector<float> x = {1, 1};
  float lambda = 0;
  for (int i = 0; i < 30; ++i) {
    std::vector<Tensor> out;
    Status s = session->Run({{"x", MakeTensor<float>(GR_FLOAT, {2, 1}, x)}}, {"y", "y2"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    const std::vector<float> y = ToVector<float>(out[0]);
    const std::vector<float> y2 = ToVector<float>(out[1]);
    EXPECT_FLOAT_EQ(y2[0], y[0] * y[0]);
    lambda = (x[0] * y[0] + x[1] * y[1]) / (x[0] * x[0] + x[1] * x[1]);
    const float norm = std::sqrt(y[0] * y[0] + y[1] * y[1]);
    x = {y[0] / norm, y[1] / norm};
  }
  EXPECT_NEAR(lambda, 2.0f, 1e-4);
  EXPECT_TRUE(session->Close().ok());
}

// Large values cross tasks whole, in both directions and under gRPC's
// zero-copy path (tensor_coding.h): 8 MiB of int64 made on the ps, summed
// on the worker; the worker's fed 1 MiB of floats negated on the ps.
TEST_F(DistributedTest, LargeTensorsCrossTasksExactly) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto session = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(session->Create(ParseGraph(R"pb(
    node { name: "start" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "limit" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1048576 } } } }
    node { name: "delta" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
    node { name: "r" op: "Range" input: "start" input: "limit" input: "delta" device: "/job:ps/task:0"
           attr { key: "Tidx" value { type: DT_INT32 } } }
    node { name: "r64" op: "Cast" input: "r" device: "/job:ps/task:0"
           attr { key: "SrcT" value { type: DT_INT32 } } attr { key: "DstT" value { type: DT_INT64 } } }
    node { name: "axis" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "sum" op: "Sum" input: "r64" input: "axis" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_INT64 } } attr { key: "Tidx" value { type: DT_INT32 } } }
    node { name: "x" op: "Placeholder" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "neg" op: "Neg" input: "x" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }
  )pb")).ok());
  std::vector<float> x(1 << 18);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f;
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> out;
    Status s = session->Run({{"x", MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(x.size())}, x)}},
                            {"sum", "neg"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(ToVector<int64_t>(out[0]), std::vector<int64_t>({int64_t{1048576} * 1048575 / 2}));
    const std::vector<float> neg = ToVector<float>(out[1]);
    ASSERT_EQ(neg.size(), x.size());
    bool exact = true;
    for (size_t i = 0; i < x.size(); ++i) exact &= neg[i] == -x[i];
    EXPECT_TRUE(exact);
  }
}

// PEM files for mutual TLS, made with the openssl command: a CA and a
// certificate it signed for localhost and 127.0.0.1 (servers and clients
// share it), and the same from a second CA the servers do not trust.
struct TestCertificates {
  distributed::TlsFiles trusted, untrusted;
  bool made = false;
};

TestCertificates MakeTestCertificates() {
  TestCertificates certs;
  const std::string dir = testing::MakeTempDir("distributed_tls");
  const std::string script =
      "set -e; cd '" + dir + "'; printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.cnf; "
      "for ca in trusted untrusted; do "
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=$ca-ca "
      "-keyout $ca-ca.key -out $ca-ca.pem; "
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost "
      "-keyout $ca.key -out $ca.csr; "
      "openssl x509 -req -in $ca.csr -CA $ca-ca.pem -CAkey $ca-ca.key -CAcreateserial -days 2 "
      "-extfile san.cnf -out $ca.pem; done >/dev/null 2>&1";
  if (std::system(script.c_str()) != 0) return certs;
  certs.trusted = {dir + "/trusted.pem", dir + "/trusted.key", dir + "/trusted-ca.pem"};
  certs.untrusted = {dir + "/untrusted.pem", dir + "/untrusted.key", dir + "/untrusted-ca.pem"};
  certs.made = true;
  return certs;
}

// Two tasks that speak TLS to each other and to clients: a client with a
// certificate their CA signed runs a step across both; one without TLS,
// or with another CA's certificate, is refused; the server keeps working.
TEST_F(DistributedTest, MutualTlsAdmitsOnlyCertifiedClients) {
  const TestCertificates certs = MakeTestCertificates();
  if (!certs.made) GTEST_SKIP() << "needs the openssl command (Debian's openssl package) to make certificates";
  const distributed::TlsFiles& tls = certs.trusted;
  Cluster cluster({{"ps", 1}, {"worker", 1}},
                  {"--tls-cert", tls.cert_file, "--tls-key", tls.key_file, "--tls-ca", tls.ca_file});
  struct PlaintextAfter {
    ~PlaintextAfter() { EXPECT_TRUE(distributed::SetClientTls({}).ok()); }
  } plaintext_after;
  const proto::GraphDef g = ParseGraph(R"pb(
    node { name: "x" op: "Placeholder" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Neg" input: "x" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Square" input: "y" device: "/job:worker/task:0" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  // Refused calls wait out a short deadline; the others get a long one
  // (a loaded machine).
  auto run = [&](std::vector<Tensor>* out, int64_t timeout_ms = 20000) {
    proto::ConfigProto config;
    config.set_operation_timeout_in_ms(timeout_ms);
    auto session = Connect(cluster.Target("worker", 0), config);
    Status s = session->Create(g);
    if (s.ok()) s = session->Run({{"x", MakeTensor<float>(GR_FLOAT, {2}, {3, -4})}}, {"y", "z"}, {}, out);
    return s;
  };
  ASSERT_TRUE(distributed::SetClientTls(tls).ok());
  std::vector<Tensor> out;
  Status s = run(&out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({-3, 4}));
  EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({9, 16}));

  for (const distributed::TlsFiles& refused : {distributed::TlsFiles{}, certs.untrusted}) {
    ASSERT_TRUE(distributed::SetClientTls(refused).ok());
    s = run(&out, 700);
    // (DEADLINE_EXCEEDED once Create has waited for the master that long.)
    EXPECT_TRUE(s.code() == Code::kUnavailable || s.code() == Code::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("the master at 127.0.0.1:"), std::string::npos) << s;
  }
  ASSERT_TRUE(distributed::SetClientTls(tls).ok());
  EXPECT_TRUE(run(&out).ok());

  // The CLI's clients take the same flags: `graphrt devices --target`
  // lists the cluster with them and is refused without.
  auto cli = [&](const std::string& flags, int timeout_ms, std::string* out) {
    const std::string cmd = std::string(GRAPHRT_CLI) + " devices --timeout " + std::to_string(timeout_ms) + " --target " +
                            cluster.Target("worker", 0) + " " + flags + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out->append(buf, n);
    return pclose(p);
  };
  std::string listed, refused;
  EXPECT_EQ(cli("--tls-cert " + tls.cert_file + " --tls-key " + tls.key_file + " --tls-ca " + tls.ca_file, 20000,
                &listed),
            0)
      << listed;
  EXPECT_NE(listed.find("/job:ps/replica:0/task:0/device:CPU:0"), std::string::npos) << listed;
  EXPECT_NE(cli("", 700, &refused), 0) << refused;
  EXPECT_NE(refused.find("the master at 127.0.0.1:"), std::string::npos) << refused;

  // Unreadable or partial TLS settings are named; they change nothing.
  s = distributed::SetClientTls({tls.cert_file, "/nonexistent/key.pem", tls.ca_file});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("/nonexistent/key.pem"), std::string::npos) << s;
  s = distributed::SetClientTls({tls.cert_file, "", ""});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("--tls-key --tls-ca"), std::string::npos) << s;
  EXPECT_TRUE(run(&out).ok());
}

// With TLS a server may serve a non-loopback address (it listens on all
// interfaces); an in-process client reaches it over RPC with TLS only.
TEST_F(DistributedTest, TlsServerMayServeOtherHosts) {
  const TestCertificates certs = MakeTestCertificates();
  if (!certs.made) GTEST_SKIP() << "needs the openssl command (Debian's openssl package) to make certificates";
  struct PlaintextAfter {
    ~PlaintextAfter() { EXPECT_TRUE(distributed::SetClientTls({}).ok()); }
  } plaintext_after;
  distributed::ServerOptions options;
  (*options.server_def.mutable_cluster()->add_job()->mutable_tasks())[0] = "10.1.2.3:0";
  options.server_def.mutable_cluster()->mutable_job(0)->set_name("local");
  options.tls = certs.trusted;
  std::unique_ptr<distributed::GrpcServer> server;
  Status s = distributed::GrpcServer::Create(options, &server);
  ASSERT_TRUE(s.ok()) << s;
  proto::ConfigProto rpc;
  rpc.mutable_rpc_options()->set_use_rpc_for_inprocess_master(true);
  for (bool with_tls : {true, false}) {
    rpc.set_operation_timeout_in_ms(with_tls ? 20000 : 700);
    ASSERT_TRUE(distributed::SetClientTls(with_tls ? certs.trusted : distributed::TlsFiles{}).ok());
    auto session = Connect(server->target(), rpc);
    s = session->Create(ParseGraph(kMatMul));
    if (s.ok()) {
      std::vector<Tensor> out;
      s = session->Run({}, {"c"}, {}, &out);
      if (s.ok()) {
        EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({11}));
      }
    }
    if (with_tls) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_TRUE(s.code() == Code::kUnavailable || s.code() == Code::kDeadlineExceeded) << s;
    }
  }
  // A key file that is not there: the server does not start, and says why.
  options.tls.key_file = "/nonexistent/server.key";
  std::unique_ptr<distributed::GrpcServer> broken;
  s = distributed::GrpcServer::Create(options, &broken);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("/nonexistent/server.key"), std::string::npos) << s;
  server->Stop();
}

// TensorFlow's master checks names first (facts §12, 18th): illegal node
// and input names fail Create and Extend naming them; legal odd ones pass.
TEST_F(DistributedTest, IllegalNamesFailNamingThem) {
  ServerProcess server({"--port", "0"});
  const std::string target = server.Target();
  const std::string konst =
      " op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
      " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }";
  for (const std::string name : {"a:b", "a:0", "_a"}) {
    auto session = Connect(target);
    Status s = session->Create(ParseGraph("node { name: '" + name + "'" + konst));
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("Illegal op name '" + name + "'"), std::string::npos) << s;
  }
  for (const std::string input : {"a:first", "_a", "_a:0", "a:01"}) {
    auto session = Connect(target);
    Status s = session->Create(ParseGraph("node { name: 'a'" + konst + "node { name: 'b' op: 'Identity' input: '" +
                                          input + "' attr { key: 'T' value { type: DT_FLOAT } } }"));
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("Illegal op input name '" + input + "'"), std::string::npos) << s;
  }
  auto session = Connect(target);
  ASSERT_TRUE(session->Create(ParseGraph("node { name: 'a-b.c/d_e'" + konst)).ok());
  Status s = session->Extend(ParseGraph("node { name: '_n' op: 'Identity' input: 'a-b.c/d_e:0'"
                                        " attr { key: 'T' value { type: DT_FLOAT } } }"));
  EXPECT_NE(s.message().find("Illegal op name '_n'"), std::string::npos) << s;
  ASSERT_TRUE(session->Extend(ParseGraph("node { name: 'n' op: 'Identity' input: 'a-b.c/d_e:0'"
                                         " attr { key: 'T' value { type: DT_FLOAT } } }")).ok());
  std::vector<Tensor> out;
  s = session->Run({}, {"n"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({2}));
}

// One tensor sent to two tasks by two signatures and by one (facts §12,
// 14th): no key or name clash, each gets its value.
TEST_F(DistributedTest, OneTensorToTwoTasksWithoutClash) {
  Cluster cluster({{"ps", 1}, {"worker", 2}});
  auto session = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(session->Create(ParseGraph(R"pb(
    node { name: "a" op: "Placeholder" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "b" op: "Neg" input: "a" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "Square" input: "a" device: "/job:worker/task:1" attr { key: "T" value { type: DT_FLOAT } } }
  )pb")).ok());
  const Tensor a = MakeTensor<float>(GR_FLOAT, {2}, {3, -5});
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(session->Run({{"a", a}}, {"b"}, {}, &out).ok());
    EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({-3, 5}));
    ASSERT_TRUE(session->Run({{"a", a}}, {"c"}, {}, &out).ok());
    EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({9, 25}));
    Status s = session->Run({{"a", a}}, {"c", "b"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({9, 25}));
    EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({-3, 5}));
  }
}

// Cluster health in the servers' logs (--status-seconds): each other task
// with its incarnation once asked and its last contact, this task's counts.
TEST_F(DistributedTest, ServersLogClusterHealth) {
  Cluster cluster({{"ps", 1}, {"worker", 1}}, {"--status-seconds", "1"});
  auto session = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(session->Create(ParseGraph(kRoundTrip)).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", MakeTensor<float>(GR_FLOAT, {1}, {4})}}, {"z"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({4}));
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  const std::string worker_log = cluster.server("worker", 0).Log();
  const size_t line = worker_log.rfind("graphrt server: /job:worker/replica:0/task:0: health:");
  ASSERT_NE(line, std::string::npos) << worker_log;
  const std::string health = worker_log.substr(line, worker_log.find('\n', line) - line);
  EXPECT_NE(health.find("/job:ps/replica:0/task:0 at 127.0.0.1:"), std::string::npos) << health;
  EXPECT_NE(health.find(" incarnation "), std::string::npos) << health;
  EXPECT_NE(health.find(" s ago;"), std::string::npos) << health;
  EXPECT_NE(health.find("/job:worker/replica:0/task:0 at localhost:"), std::string::npos) << health;
  EXPECT_NE(health.find("(this task)"), std::string::npos) << health;
  EXPECT_NE(health.find("here: 1 master sessions, 1 worker sessions"), std::string::npos) << health;
  // The ps pulled the fed value from the worker: it has been in contact too.
  const std::string ps_log = cluster.server("ps", 0).Log();
  EXPECT_NE(ps_log.find("/job:worker/replica:0/task:0 at 127.0.0.1:"), std::string::npos) << ps_log;
  EXPECT_NE(ps_log.find("last contact"), std::string::npos) << ps_log;
}

// `graphrt devices --target` lists every task's devices with incarnations;
// a task that restarted shows a new one.
TEST_F(DistributedTest, DevicesCommandListsTheClusterAndItsIncarnations) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto devices = [&] {
    const std::string cmd = std::string(GRAPHRT_CLI) + " devices --target " + cluster.Target("worker", 0) + " 2>&1";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
    return out;
  };
  const std::string before = devices();
  EXPECT_NE(before.find("/job:worker/replica:0/task:0/device:CPU:0\n    type:        CPU (the master's task)"),
            std::string::npos)
      << before;
  const size_t ps = before.find("/job:ps/replica:0/task:0/device:CPU:0\n    type:        CPU (another task)");
  ASSERT_NE(ps, std::string::npos) << before;
  const std::string ps_incarnation = before.substr(before.find("incarnation: ", ps), 29);
  cluster.Kill("ps", 0);
  cluster.Restart("ps", 0);
  const std::string after = devices();
  EXPECT_EQ(after.find(ps_incarnation), std::string::npos) << ps_incarnation << "\n" << after;
}

TEST_F(DistributedTest, StringTensorMovesBetweenTasksIntact) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto session = Connect(cluster.Target("ps", 0));
  ASSERT_TRUE(session->Create(ParseGraph(R"pb(
    node { name: "s" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } }
                                                string_val: "fantasia" string_val: "\000\377 bytes" } } } }
    node { name: "t" op: "Identity" input: "s" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_STRING } } }
  )pb")).ok());
  std::vector<Tensor> out;
  Status s = session->Run({}, {"t"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out[0].NumElements(), 2);
  EXPECT_EQ(out[0].string_at(0), "fantasia");
  EXPECT_EQ(out[0].string_at(1), std::string("\0\377 bytes", 8));
}

const char kCounter[] = R"pb(
  node { name: "v" op: "VariableV2" device: "/job:ps/task:0"
         attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape {} } } }
  node { name: "zero" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }
  node { name: "one" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
  node { name: "init" op: "Assign" input: "v" input: "zero" device: "/job:ps/task:0"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "inc" op: "AssignAdd" input: "v" input: "one" device: "/job:ps/task:0"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "use_locking" value { b: true } } }
  node { name: "read" op: "Identity" input: "v" device: "/job:worker/task:0"
         attr { key: "T" value { type: DT_FLOAT } } }
)pb";

// Variables on the ps live in its resource manager: they outlive the
// sessions that made them (TensorFlow's SharedVar).
TEST_F(DistributedTest, VariablesOnTheParameterServerOutliveSessions) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  {
    auto s1 = Connect(cluster.Target("worker", 0));
    ASSERT_TRUE(s1->Create(ParseGraph(kCounter)).ok());
    Status st = s1->Run({}, {}, {"init"}, nullptr);
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_TRUE(s1->Close().ok());
  }
  for (int rep = 1; rep <= 9; ++rep) {
    auto s = Connect(cluster.Target("worker", 0));
    ASSERT_TRUE(s->Create(ParseGraph(kCounter)).ok());
    ASSERT_TRUE(s->Run({}, {}, {"inc"}, nullptr).ok());
  }
  auto s = Connect(cluster.Target("ps", 0));
  ASSERT_TRUE(s->Create(ParseGraph(kCounter)).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({9}));
}

// ListDevices on a 2-task cluster: one local device (the master's task's
// CPU), the other task's as remote; Reset with a container that does not
// exist leaves variables alone, Reset of the default container clears only
// it (TensorFlow's 5th and 24th behaviours).
TEST_F(DistributedTest, ListDevicesAndResetContainersOnTwoTasks) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  MasterStub master(cluster.Target("worker", 0));
  using S = tensorflow::MasterService::Stub;
  proto::ListDevicesResponse devices;
  ASSERT_TRUE(master.Call(&S::ListDevices, proto::ListDevicesRequest(), &devices).ok());
  ASSERT_EQ(devices.local_device_size(), 1);
  EXPECT_EQ(devices.local_device(0).device_type(), "CPU");
  EXPECT_EQ(devices.local_device(0).name(), "/job:worker/replica:0/task:0/device:CPU:0");
  ASSERT_EQ(devices.remote_device_size(), 1);
  EXPECT_EQ(devices.remote_device(0).name(), "/job:ps/replica:0/task:0/device:CPU:0");

  std::string graph = kCounter;
  graph += R"pb(
    node { name: "t" op: "VariableV2" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape {} } } attr { key: "container" value { s: "test0" } } }
    node { name: "t_init" op: "Assign" input: "t" input: "zero" device: "/job:ps/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "t_read" op: "Identity" input: "t" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } })pb";
  auto init = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(init->Create(ParseGraph(graph)).ok());
  ASSERT_TRUE(init->Run({}, {}, {"init", "t_init"}, nullptr).ok());
  auto reads = [&](Status* v, Status* t) {
    auto s = Connect(cluster.Target("worker", 0));
    ASSERT_TRUE(s->Create(ParseGraph(graph)).ok());
    std::vector<Tensor> out;
    *v = s->Run({}, {"read"}, {}, &out);
    *t = s->Run({}, {"t_read"}, {}, &out);
  };
  proto::ResetRequest reset;
  proto::ResetResponse reset_done;
  reset.add_container("nonexistent");
  ASSERT_TRUE(master.Call(&S::Reset, reset, &reset_done).ok());
  Status v, t;
  reads(&v, &t);
  EXPECT_TRUE(v.ok()) << v;
  EXPECT_TRUE(t.ok()) << t;
  reset.clear_container();  // the default container
  ASSERT_TRUE(master.Call(&S::Reset, reset, &reset_done).ok());
  reads(&v, &t);
  EXPECT_EQ(v.code(), Code::kFailedPrecondition) << v;
  EXPECT_TRUE(t.ok()) << t;
}

// isolate_session_state: an isolated session's variables are its own; a
// sharing session sees the others' (TensorFlow's 23rd behaviour).
TEST_F(DistributedTest, IsolatedSessionsDoNotSeeEachOthersVariables) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto shared = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(shared->Create(ParseGraph(kCounter)).ok());
  ASSERT_TRUE(shared->Run({}, {}, {"init"}, nullptr).ok());
  ASSERT_TRUE(shared->Run({}, {}, {"inc"}, nullptr).ok());
  proto::ConfigProto isolate;
  isolate.set_isolate_session_state(true);
  auto isolated = Connect(cluster.Target("worker", 0), isolate);
  ASSERT_TRUE(isolated->Create(ParseGraph(kCounter)).ok());
  std::vector<Tensor> out;
  Status s = isolated->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("uninitialized"), std::string::npos) << s;
  ASSERT_TRUE(isolated->Run({}, {}, {"init"}, nullptr).ok());
  ASSERT_TRUE(isolated->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({0}));
  auto sharing = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(sharing->Create(ParseGraph(kCounter)).ok());
  ASSERT_TRUE(sharing->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({1}));
}

// Between-graph replication's exact counter: two clients, each through its
// own worker's master, add 1 N times with use_locking: 2N.
TEST_F(DistributedTest, TwoClientsCountExactlyOnTheParameterServer) {
  Cluster cluster({{"ps", 1}, {"worker", 2}});
  auto init = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(init->Create(ParseGraph(kCounter)).ok());
  ASSERT_TRUE(init->Run({}, {}, {"init"}, nullptr).ok());
  constexpr int kSteps = 50;
  auto client = [&](int worker) {
    std::string graph = kCounter;
    // Each client's own worker holds its "one" and "read".
    const std::string mine = "/job:worker/task:" + std::to_string(worker);
    for (size_t at = 0; (at = graph.find("/job:worker/task:0", at)) != std::string::npos; at += mine.size())
      graph.replace(at, 18, mine);
    auto s = Connect(cluster.Target("worker", worker));
    ASSERT_TRUE(s->Create(ParseGraph(graph)).ok());
    for (int i = 0; i < kSteps; ++i) ASSERT_TRUE(s->Run({}, {}, {"inc"}, nullptr).ok());
  };
  std::thread a(client, 0), b(client, 1);
  a.join();
  b.join();
  std::vector<Tensor> out;
  ASSERT_TRUE(init->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({2 * kSteps}));
}

// Between-graph replication: a parameter server holds w, two workers each
// run their own client on the same graph and apply SGD steps to w in turn
// (y = 2.5 x, squared error). The result is the reference's (computed here
// in double) step by step.
TEST_F(DistributedTest, BetweenGraphSgdMatchesTheReference) {
  Cluster cluster({{"ps", 1}, {"worker", 2}});
  auto graph_for = [](int worker) {
    const std::string w = "/job:worker/task:" + std::to_string(worker);
    const std::string f = "attr { key: 'T' value { type: DT_FLOAT } }";
    auto scalar = [](const std::string& name, float v, const std::string& dev) {
      return "node { name: '" + name + "' op: 'Const' device: '" + dev +
             "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
             "tensor_shape {} float_val: " + std::to_string(v) + " } } } }";
    };
    return ParseGraph(
        "node { name: 'w' op: 'VariableV2' device: '/job:ps/task:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'shape' value { shape {} } } }" +
        scalar("zero", 0, "/job:ps/task:0") +
        "node { name: 'init' op: 'Assign' input: 'w' input: 'zero' device: '/job:ps/task:0' " + f + " }" +
        "node { name: 'x' op: 'Placeholder' device: '" + w + "' attr { key: 'dtype' value { type: DT_FLOAT } } }" +
        "node { name: 'y' op: 'Placeholder' device: '" + w + "' attr { key: 'dtype' value { type: DT_FLOAT } } }" +
        "node { name: 'pred' op: 'Mul' input: 'x' input: 'w' device: '" + w + "' " + f + " }" +
        "node { name: 'err' op: 'Sub' input: 'pred' input: 'y' device: '" + w + "' " + f + " }" +
        "node { name: 'ex' op: 'Mul' input: 'err' input: 'x' device: '" + w + "' " + f + " }" +
        "node { name: 'axis' op: 'Const' device: '" + w + "' attr { key: 'dtype' value { type: DT_INT32 } } "
        "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }" +
        "node { name: 'mean' op: 'Mean' input: 'ex' input: 'axis' device: '" + w + "' " + f +
        " attr { key: 'Tidx' value { type: DT_INT32 } } }" +
        scalar("two", 2, w) +
        "node { name: 'grad' op: 'Mul' input: 'mean' input: 'two' device: '" + w + "' " + f + " }" +
        scalar("lr", 0.05f, "/job:ps/task:0") +
        "node { name: 'apply' op: 'ApplyGradientDescent' input: 'w' input: 'lr' input: 'grad' "
        "device: '/job:ps/task:0' " + f + " }");
  };
  const std::vector<std::vector<float>> xs = {{1, 2, 3, 4}, {0.5f, -1, 2, 1.5f}};
  std::vector<std::unique_ptr<Session>> clients;
  for (int k = 0; k < 2; ++k) {
    clients.push_back(Connect(cluster.Target("worker", k)));
    ASSERT_TRUE(clients[k]->Create(graph_for(k)).ok());
  }
  ASSERT_TRUE(clients[0]->Run({}, {}, {"init"}, nullptr).ok());
  double w = 0;  // the reference
  for (int step = 0; step < 20; ++step) {
    const int k = step % 2;
    std::vector<float> y(xs[k].size());
    double grad = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      y[i] = 2.5f * xs[k][i];
      grad += (xs[k][i] * w - y[i]) * xs[k][i];
    }
    w -= 0.05 * 2 * grad / static_cast<double>(y.size());
    std::vector<Tensor> out;
    const int64_t n = static_cast<int64_t>(y.size());
    Status s = clients[k]->Run({{"x", MakeTensor<float>(GR_FLOAT, {n}, xs[k])}, {"y", MakeTensor<float>(GR_FLOAT, {n}, y)}},
                               {"apply"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_NEAR(ToVector<float>(out[0])[0], w, 1e-5 * std::max(1.0, std::abs(w))) << "step " << step;
  }
  EXPECT_NEAR(w, 2.5, 1e-3);
}

// In-graph replication: one client's graph has a tower on each of two
// workers (each its own half of the batch), their gradients averaged on the
// parameter server, which applies them: y = x . (1.5, -2), squared error,
// against the reference computed here in double.
TEST_F(DistributedTest, InGraphReplicationAveragesTheTowersGradients) {
  Cluster cluster({{"ps", 1}, {"worker", 2}});
  const std::string f = "attr { key: 'T' value { type: DT_FLOAT } }";
  std::string graph =
      "node { name: 'w' op: 'VariableV2' device: '/job:ps/task:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'shape' value { shape { dim { size: 2 } dim { size: 1 } } } } }"
      "node { name: 'zeros' op: 'Const' device: '/job:ps/task:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 1 } } "
      "float_val: 0 } } } }"
      "node { name: 'init' op: 'Assign' input: 'w' input: 'zeros' device: '/job:ps/task:0' " + f + " }";
  for (int k = 0; k < 2; ++k) {
    const std::string t = std::to_string(k), dev = "device: '/job:worker/task:" + t + "' ";
    graph += "node { name: 'x" + t + "' op: 'Placeholder' " + dev + "attr { key: 'dtype' value { type: DT_FLOAT } } }"
             "node { name: 'y" + t + "' op: 'Placeholder' " + dev + "attr { key: 'dtype' value { type: DT_FLOAT } } }"
             "node { name: 'pred" + t + "' op: 'MatMul' input: 'x" + t + "' input: 'w' " + dev + f + " }"
             "node { name: 'err" + t + "' op: 'Sub' input: 'pred" + t + "' input: 'y" + t + "' " + dev + f + " }"
             "node { name: 'g" + t + "' op: 'MatMul' input: 'x" + t + "' input: 'err" + t + "' " + dev + f +
             " attr { key: 'transpose_a' value { b: true } } }";
  }
  graph +=
      "node { name: 'sum' op: 'AddN' input: 'g0' input: 'g1' device: '/job:ps/task:0' " + f +
      " attr { key: 'N' value { i: 2 } } }"
      "node { name: 'scale' op: 'Const' device: '/job:ps/task:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.25 } } } }"  // 2/n, n = 4, halved
      "node { name: 'avg' op: 'Mul' input: 'sum' input: 'scale' device: '/job:ps/task:0' " + f + " }"
      "node { name: 'lr' op: 'Const' device: '/job:ps/task:0' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.1 } } } }"
      "node { name: 'apply' op: 'ApplyGradientDescent' input: 'w' input: 'lr' input: 'avg' "
      "device: '/job:ps/task:0' " + f + " }";
  auto session = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(session->Create(ParseGraph(graph)).ok());
  ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
  const double truth[2] = {1.5, -2};
  const std::vector<std::vector<float>> xs = {{1, 0, 0.5f, 1, -1, 2, 2, 1}, {0, 1, 1, 1, 1.5f, -0.5f, -2, 0.5f}};
  std::vector<std::vector<float>> ys(2);
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 4; ++i)
      ys[k].push_back(static_cast<float>(xs[k][2 * i] * truth[0] + xs[k][2 * i + 1] * truth[1]));
  double w[2] = {0, 0};
  for (int step = 0; step < 40; ++step) {
    double grad[2] = {0, 0};
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 4; ++i) {
        const double err = xs[k][2 * i] * w[0] + xs[k][2 * i + 1] * w[1] - ys[k][i];
        grad[0] += xs[k][2 * i] * err;
        grad[1] += xs[k][2 * i + 1] * err;
      }
    for (int j = 0; j < 2; ++j) w[j] -= 0.1 * 0.25 * grad[j];
    std::vector<Tensor> out;
    Status s = session->Run({{"x0", MakeTensor<float>(GR_FLOAT, {4, 2}, xs[0])},
                             {"y0", MakeTensor<float>(GR_FLOAT, {4, 1}, ys[0])},
                             {"x1", MakeTensor<float>(GR_FLOAT, {4, 2}, xs[1])},
                             {"y1", MakeTensor<float>(GR_FLOAT, {4, 1}, ys[1])}},
                            {"apply"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    const std::vector<float> got = ToVector<float>(out[0]);
    EXPECT_NEAR(got[0], w[0], 1e-4) << "step " << step;
    EXPECT_NEAR(got[1], w[1], 1e-4) << "step " << step;
  }
  EXPECT_NEAR(w[0], truth[0], 1e-2);
  EXPECT_NEAR(w[1], truth[1], 1e-2);
}

// TensorFlow's sharded Saver across tasks: each parameter server writes its
// own variables' shard (SaveV2 on its task), the last one merges the shards
// (MergeV2Checkpoints), and restore_all reads each shard back on its task.
// The merged checkpoint is an ordinary one: a local session restores it.
TEST_F(DistributedTest, ShardedSaverSavesAndRestoresAcrossTasks) {
  Cluster cluster({{"ps", 2}, {"worker", 1}});
  const std::string dir = testing::MakeTempDir("distributed_saver");
  const std::string prefix = dir + "/model.ckpt";
  auto str = [](const std::string& name, const std::string& value, const std::string& dev, bool vector = false) {
    return "node { name: '" + name + "' op: 'Const' device: '" + dev +
           "' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { tensor { dtype: DT_STRING "
           "tensor_shape { " + (vector ? "dim { size: 1 } " : "") + "} string_val: '" + value + "' } } } }";
  };
  auto i32 = [](const std::string& name, int v) {
    return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
           "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: " + std::to_string(v) + " } } } }";
  };
  const std::string f = "attr { key: 'T' value { type: DT_FLOAT } }";
  auto variables = [&](const std::string& ps0, const std::string& ps1) {
    return "node { name: 'v0' op: 'VariableV2' device: '" + ps0 + "' attr { key: 'dtype' value { type: DT_FLOAT } } "
           "attr { key: 'shape' value { shape { dim { size: 2 } } } } }"
           "node { name: 'v1' op: 'VariableV2' device: '" + ps1 + "' attr { key: 'dtype' value { type: DT_FLOAT } } "
           "attr { key: 'shape' value { shape { dim { size: 1 } dim { size: 1 } } } } }";
  };
  // The restore half of TensorFlow's sharded saver graph.
  auto restore = [&](const std::string& ps0, const std::string& ps1) {
    std::string g;
    for (int k = 0; k < 2; ++k) {
      const std::string sfx = k == 0 ? "" : "_1", dev = k == 0 ? ps0 : ps1, v = "v" + std::to_string(k);
      g += str("save/RestoreV2" + sfx + "/tensor_names", v, dev, true) +
           str("save/RestoreV2" + sfx + "/shape_and_slices", "", dev, true) +
           "node { name: 'save/RestoreV2" + sfx + "' op: 'RestoreV2' input: 'save/Const' input: 'save/RestoreV2" + sfx +
           "/tensor_names' input: 'save/RestoreV2" + sfx + "/shape_and_slices' device: '" + dev +
           "' attr { key: 'dtypes' value { list { type: DT_FLOAT } } } }"
           "node { name: 'save/Assign" + sfx + "' op: 'Assign' input: '" + v + "' input: 'save/RestoreV2" + sfx +
           "' device: '" + dev + "' " + f + " }"
           "node { name: 'save/restore_shard" + sfx + "' op: 'NoOp' input: '^save/Assign" + sfx + "' device: '" + dev +
           "' }";
    }
    return g + "node { name: 'save/restore_all' op: 'NoOp' input: '^save/restore_shard' input: '^save/restore_shard_1' }";
  };
  std::string graph = variables("/job:ps/task:0", "/job:ps/task:1") +
      "node { name: 'v0/init' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
      "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1.5 float_val: -2 } } } }"
      "node { name: 'v1/init' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
      "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } } float_val: 7 } } } }"
      "node { name: 'v0/Assign' op: 'Assign' input: 'v0' input: 'v0/init' device: '/job:ps/task:0' " + f + " }"
      "node { name: 'v1/Assign' op: 'Assign' input: 'v1' input: 'v1/init' device: '/job:ps/task:1' " + f + " }"
      "node { name: 'init' op: 'NoOp' input: '^v0/Assign' input: '^v1/Assign' }" +
      str("save/Const", prefix, "") + str("save/StringJoin/inputs_1", "_temp_6ba39e1d/part", "") +
      "node { name: 'save/StringJoin' op: 'StringJoin' input: 'save/Const' input: 'save/StringJoin/inputs_1' "
      "attr { key: 'N' value { i: 2 } } attr { key: 'separator' value { s: '' } } }" +
      i32("save/num_shards", 2);
  for (int k = 0; k < 2; ++k) {
    const std::string sfx = k == 0 ? "" : "_1", dev = "/job:ps/task:" + std::to_string(k), v = "v" + std::to_string(k);
    graph += i32("save/ShardedFilename" + sfx + "/shard", k) +
             "node { name: 'save/ShardedFilename" + sfx + "' op: 'ShardedFilename' input: 'save/StringJoin' input: "
             "'save/ShardedFilename" + sfx + "/shard' input: 'save/num_shards' device: '" + dev + "' }" +
             str("save/SaveV2" + sfx + "/tensor_names", v, dev, true) +
             str("save/SaveV2" + sfx + "/shape_and_slices", "", dev, true) +
             "node { name: 'save/SaveV2" + sfx + "' op: 'SaveV2' input: 'save/ShardedFilename" + sfx + "' input: "
             "'save/SaveV2" + sfx + "/tensor_names' input: 'save/SaveV2" + sfx + "/shape_and_slices' input: '" + v +
             "' device: '" + dev + "' attr { key: 'dtypes' value { list { type: DT_FLOAT } } } }"
             "node { name: 'save/control_dependency" + sfx + "' op: 'Identity' input: 'save/ShardedFilename" + sfx +
             "' input: '^save/SaveV2" + sfx + "' device: '" + dev + "' attr { key: 'T' value { type: DT_STRING } } }";
  }
  graph +=
      "node { name: 'save/MergeV2Checkpoints/checkpoint_prefixes' op: 'Pack' input: 'save/control_dependency' "
      "input: 'save/control_dependency_1' device: '/job:ps/task:1' attr { key: 'T' value { type: DT_STRING } } "
      "attr { key: 'N' value { i: 2 } } attr { key: 'axis' value { i: 0 } } }"
      "node { name: 'save/MergeV2Checkpoints' op: 'MergeV2Checkpoints' input: "
      "'save/MergeV2Checkpoints/checkpoint_prefixes' input: 'save/Const' device: '/job:ps/task:1' "
      "attr { key: 'delete_old_dirs' value { b: true } } }"
      "node { name: 'save/Identity' op: 'Identity' input: 'save/Const' input: '^save/MergeV2Checkpoints' "
      "attr { key: 'T' value { type: DT_STRING } } }" +
      restore("/job:ps/task:0", "/job:ps/task:1");
  auto session = Connect(cluster.Target("worker", 0));
  Status s = session->Create(ParseGraph(graph));
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
  std::vector<Tensor> out;
  s = session->Run({}, {"save/Identity"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].string_at(0), prefix);
  for (const char* file : {".index", ".data-00000-of-00002", ".data-00001-of-00002"})
    EXPECT_TRUE(std::ifstream(prefix + file).good()) << file;
  EXPECT_FALSE(std::ifstream(prefix + "_temp_6ba39e1d/part-00000-of-00002.index").good()) << "the shards' folder stays";

  // v0 overwritten, then restore_all brings back what was saved.
  const std::string change =
      "node { name: 'other0' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
      "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 0 } } } }"
      "node { name: 'clobber0' op: 'Assign' input: 'v0' input: 'other0' device: '/job:ps/task:0' " + f + " }";
  ASSERT_TRUE(session->Extend(ParseGraph(change)).ok());
  ASSERT_TRUE(session->Run({}, {"clobber0"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({0, 0}));
  s = session->Run({}, {}, {"save/restore_all"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(session->Run({}, {"v0", "v1"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({1.5f, -2}));
  EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({7}));

  // One process, no cluster: the same checkpoint restores.
  std::unique_ptr<Session> local;
  ASSERT_TRUE(NewSession(SessionOptions(), &local).ok());
  s = local->Create(ParseGraph(variables("", "") + str("save/Const", prefix, "") + restore("", "")));
  ASSERT_TRUE(s.ok()) << s;
  s = local->Run({}, {}, {"save/restore_all"}, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE(local->Run({}, {"v0", "v1"}, {}, &out).ok());
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({1.5f, -2}));
  EXPECT_EQ(ToVector<float>(out[1]), std::vector<float>({7}));
}

// MonitoredSession on a cluster (TensorFlow's recovery): its variables on a
// parameter server that is killed and restarted on its port; the next Run
// fails ABORTED, the session is re-created and restored from the latest
// checkpoint (model.ckpt-2: v = 0, step 2), and the step runs again there.
TEST_F(DistributedTest, MonitoredSessionRecoversAfterTheParameterServerRestarts) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  const std::string dir = testing::MakeTempDir("distributed_monitored");
  proto::MetaGraphDef meta;
  *meta.mutable_graph_def() = ParseGraph(R"pb(
    node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { } } } }
    node { name: "v/initial_value" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
    node { name: "v/Assign" op: "Assign" input: "v" input: "v/initial_value" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: "update" op: "AssignSub" input: "v" input: "one" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "use_locking" value { b: true } } }
  )pb");
  std::string global_step, increment;
  ASSERT_TRUE(GetOrCreateGlobalStep(&meta, nullptr, &global_step).ok());
  ASSERT_TRUE(AddGlobalStepIncrement(&meta, nullptr, global_step, &increment).ok());
  proto::NodeDef* train = meta.mutable_graph_def()->add_node();
  train->set_name("train");
  train->set_op("NoOp");
  train->add_input("^update");
  train->add_input("^" + increment);
  // The state on the ps (the ops that take its variables by reference go
  // with them).
  for (proto::NodeDef& n : *meta.mutable_graph_def()->mutable_node())
    if (n.op() == "VariableV2") n.set_device("/job:ps/task:0");

  CheckpointSaverHook::Options ckpt;
  ckpt.checkpoint_dir = dir;
  ckpt.save_steps = 2;
  ckpt.log = [](const std::string&) {};
  SessionOptions options;
  options.target = cluster.Target("worker", 0);
  options.config.set_operation_timeout_in_ms(10000);
  auto creator = std::make_unique<ChiefSessionCreator>(std::make_shared<Scaffold>(meta), options, dir);
  const ChiefSessionCreator* chief = creator.get();
  std::unique_ptr<MonitoredSession> ms;
  Status s = MonitoredSession::Create(std::move(creator), {std::make_shared<CheckpointSaverHook>(ckpt)}, &ms);
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ms->Run({}, {}, {"train"}, nullptr).ok());
  cluster.Kill("ps", 0);
  cluster.Restart("ps", 0);
  std::vector<Tensor> out;
  s = ms->Run({}, {"update:0"}, {"train"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ms->sessions_created(), 2);
  EXPECT_EQ(chief->restored_from(), dir + "/model.ckpt-2");
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({-1}));
  int64_t step = -1;
  ASSERT_TRUE(ReadInt64Scalar(ms->raw_session(), global_step + ":0", &step).ok());
  EXPECT_EQ(step, 3);
  EXPECT_TRUE(ms->Close().ok());
}

// An op failing on one task while the other waits for it: the step fails
// with the op's own message, whole even at 1 MB; the session goes on.
TEST_F(DistributedTest, ErrorOnOneTaskReachesTheClientWhole) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto session = Connect(cluster.Target("worker", 0));
  const std::string big(1 << 20, 'f');
  const std::string graph = R"pb(
    node { name: "ok" op: "Placeholder" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_BOOL } } }
    node { name: "msg" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape {} string_val: "fantasia!" } } } }
    node { name: "big" op: "Const" device: "/job:worker/task:0" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape {} string_val: ")pb" + big + R"pb(" } } } }
    node { name: "check" op: "Assert" input: "ok" input: "msg" device: "/job:worker/task:0"
           attr { key: "T" value { list { type: DT_STRING } } } }
    node { name: "check_big" op: "Assert" input: "ok" input: "big" device: "/job:worker/task:0"
           attr { key: "T" value { list { type: DT_STRING } } } }
    node { name: "x" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
    node { name: "y" op: "Identity" input: "x" input: "^check" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Identity" input: "y" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  ASSERT_TRUE(session->Create(ParseGraph(graph)).ok());
  std::vector<Tensor> out;
  Status s = session->Run({{"ok", MakeTensor<bool>(GR_BOOL, {}, {false})}}, {"z"}, {}, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("fantasia!"), std::string::npos) << s;
  s = session->Run({{"ok", MakeTensor<bool>(GR_BOOL, {}, {false})}}, {}, {"check_big"}, nullptr);
  EXPECT_NE(s.message().find(big), std::string::npos) << s.message().size();
  s = session->Run({{"ok", MakeTensor<bool>(GR_BOOL, {}, {true})}}, {"z"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({3}));
  EXPECT_TRUE(session->Close().ok());
}

// A step whose partition on one task fails while its partition on the
// other waits in a dequeue: the step fails at once with the failure's own
// message, and the waiting partition ends with it (the master cancels the
// other task's RunGraph call and that worker cancels the step, as
// TensorFlow does; the master's own partition it cancels directly), so no
// stale dequeue takes what the next step enqueues.
TEST_F(DistributedTest, AFailedStepsOtherPartitionsEndWithIt) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  proto::ConfigProto config;
  config.set_operation_timeout_in_ms(8000);
  for (const std::string queue_task : {"worker", "ps"}) {
    SCOPED_TRACE("queue on /job:" + queue_task + ", the master on /job:ps");
    const std::string failing = queue_task == "ps" ? "worker" : "ps";
    auto session = Connect(cluster.Target("ps", 0), config);
    ASSERT_TRUE(session->Create(ParseGraph(BlockingQueueGraph(queue_task, failing) + R"pb(
      node { name: "ok" op: "Placeholder" device: "/job:)pb" + failing + R"pb(/task:0"
             attr { key: "dtype" value { type: DT_BOOL } } }
      node { name: "msg" op: "Const" device: "/job:)pb" + failing + R"pb(/task:0"
             attr { key: "dtype" value { type: DT_STRING } }
             attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape {} string_val: "gave up" } } } }
      node { name: "check" op: "Assert" input: "ok" input: "msg" device: "/job:)pb" + failing + R"pb(/task:0"
             attr { key: "T" value { list { type: DT_STRING } } } }
    )pb")).ok());
    std::vector<Tensor> out;
    const auto start = std::chrono::steady_clock::now();
    Status s = session->Run({{"ok", MakeTensor<bool>(GR_BOOL, {}, {false})}}, {"out"}, {"check"}, &out);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("gave up"), std::string::npos) << s;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4)) << "the dequeue held the step";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(session->Run({}, {}, {"enq"}, &out).ok());
    s = session->Run({}, {"out"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s << " (the failed step's dequeue took the value?)";
    EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({1}));
  }
}

// Close while another thread's step waits in a dequeue: that Run ends
// CANCELLED naming Session::Close (TensorFlow's 21st behaviour), whether the
// dequeue runs on another task (a RunGraph call) or on the master's own
// (a partition the master runs directly).
TEST_F(DistributedTest, CloseCancelsAStepBlockedOnAWorker) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  for (const std::string queue_task : {"worker", "ps"}) {
    SCOPED_TRACE("queue on /job:" + queue_task);
    const std::string other = queue_task == "ps" ? "worker" : "ps";
    auto session = Connect(cluster.Target("ps", 0));
    ASSERT_TRUE(session->Create(ParseGraph(BlockingQueueGraph(queue_task, other))).ok());
    Status blocked;
    std::thread runner([&] {
      std::vector<Tensor> out;
      blocked = session->Run({}, {"out"}, {}, &out);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(session->Close().ok());
    runner.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_EQ(blocked.code(), Code::kCancelled) << blocked;
    EXPECT_NE(blocked.message().find("Session::Close"), std::string::npos) << blocked;
    // The worker is free again: a new session runs there.
    auto next = Connect(cluster.Target("ps", 0));
    ASSERT_TRUE(next->Create(ParseGraph(kCounter)).ok());
    EXPECT_TRUE(next->Run({}, {}, {"init"}, nullptr).ok());
  }
}

// A step blocked in a dequeue ends DEADLINE_EXCEEDED at its deadline
// (RunOptions.timeout_in_ms, else operation_timeout_in_ms), on the master's
// own task and on another, and the session goes on (TensorFlow's 20th).
TEST_F(DistributedTest, StepsEndAtTheirDeadline) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  for (const std::string queue_task : {"worker", "ps"}) {
    SCOPED_TRACE("queue on /job:" + queue_task);
    proto::ConfigProto config;
    config.set_operation_timeout_in_ms(400);
    auto session = Connect(cluster.Target("ps", 0), config);
    ASSERT_TRUE(session->Create(ParseGraph(BlockingQueueGraph(queue_task, queue_task))).ok());
    for (int64_t run_timeout : {int64_t{0}, int64_t{200}}) {
      proto::RunOptions options;
      options.set_timeout_in_ms(run_timeout);
      std::vector<Tensor> out;
      const auto start = std::chrono::steady_clock::now();
      Status s = session->Run(options, {}, {"deq"}, {}, &out, nullptr);
      EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
    }
    // The timed-out partition on the other task ends at the same deadline
    // by its own clock, a moment after the client hears of it (as in
    // TensorFlow): until then its dequeue could take what is enqueued.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {}, {"enq"}, &out).ok());
    Status s = session->Run({}, {"deq"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({1}));
  }
}

TEST_F(DistributedTest, DeviceFiltersLeavingOutAPinnedTaskFailAtCreate) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  proto::ConfigProto config;
  config.add_device_filters("/job:ps");
  auto session = Connect(cluster.Target("ps", 0), config);
  Status s = session->Create(ParseGraph(kCounter));
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("/job:worker/task:0"), std::string::npos) << s;
}

// A task that never starts: Create fails at the deadline naming it,
// instead of waiting forever (TensorFlow's #14489).
TEST_F(DistributedTest, CreateNamesTheTaskThatNeverAnswered) {
  const int ps = FreePort(), worker = FreePort();
  ServerProcess server({"--cluster", "ps=127.0.0.1:" + std::to_string(ps), "--cluster",
                        "worker=127.0.0.1:" + std::to_string(worker), "--job-name", "worker"});
  server.WaitReady();
  proto::ConfigProto config;
  config.set_operation_timeout_in_ms(500);
  auto session = Connect("grpc://127.0.0.1:" + std::to_string(worker), config);
  const auto start = std::chrono::steady_clock::now();
  Status s = session->Create(ParseGraph(kMatMul));
  EXPECT_EQ(s.code(), Code::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("/job:ps/replica:0/task:0"), std::string::npos) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // With device_filters leaving the missing task out, the session works.
  config.add_device_filters("/job:worker");
  auto filtered = Connect("grpc://127.0.0.1:" + std::to_string(worker), config);
  ASSERT_TRUE(filtered->Create(ParseGraph(kMatMul)).ok());
  std::vector<Tensor> out;
  EXPECT_TRUE(filtered->Run({}, {"c"}, {}, &out).ok());
}

TEST_F(DistributedTest, AMasterThatIsNotThereTimesOut) {
  proto::ConfigProto config;
  config.set_operation_timeout_in_ms(200);
  auto session = Connect("grpc://127.0.0.1:" + std::to_string(FreePort()), config);
  Status s = session->Create(ParseGraph(kMatMul));
  EXPECT_TRUE(s.code() == Code::kDeadlineExceeded || s.code() == Code::kUnavailable) << s;
  EXPECT_NE(s.message().find("master"), std::string::npos) << s;
}

// A worker killed: the next step fails UNAVAILABLE or ABORTED naming it,
// within the deadline; restarted on its port, old sessions fail ABORTED
// and a new session works.
TEST_F(DistributedTest, KilledAndRestartedWorker) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  proto::ConfigProto config;
  config.set_operation_timeout_in_ms(5000);
  auto session = Connect(cluster.Target("ps", 0), config);
  ASSERT_TRUE(session->Create(ParseGraph(kCounter)).ok());
  ASSERT_TRUE(session->Run({}, {}, {"init"}, nullptr).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  cluster.Kill("worker", 0);
  const auto start = std::chrono::steady_clock::now();
  Status s = session->Run({}, {"read"}, {}, &out);
  EXPECT_TRUE(s.code() == Code::kUnavailable || s.code() == Code::kAborted) << s;
  EXPECT_NE(s.message().find("/job:worker/replica:0/task:0"), std::string::npos) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6));
  cluster.Restart("worker", 0);
  // As in TensorFlow: UNAVAILABLE until the channel reaches the new
  // process, then ABORTED (the old session is unknown there).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do s = session->Run({}, {"read"}, {}, &out);
  while (s.code() == Code::kUnavailable && std::chrono::steady_clock::now() < until);
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  EXPECT_NE(s.message().find("/job:worker/replica:0/task:0"), std::string::npos) << s;
  EXPECT_TRUE(session->Close().ok());
  // The variable lived on the ps, which did not restart.
  auto fresh = Connect(cluster.Target("ps", 0), config);
  ASSERT_TRUE(fresh->Create(ParseGraph(kCounter)).ok());
  s = fresh->Run({}, {"read"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({0}));
}

// A parameter server SIGKILLed in the middle of a step (its partition
// blocked in a dequeue): the step fails at once UNAVAILABLE or ABORTED
// naming the task, without a deadline set; the session closes; a session
// that does not need the dead task goes on.
TEST_F(DistributedTest, TaskKilledDuringAStepFailsItNamingTheTask) {
  Cluster cluster({{"ps", 1}, {"worker", 1}});
  auto session = Connect(cluster.Target("worker", 0));
  ASSERT_TRUE(session->Create(ParseGraph(BlockingQueueGraph("ps", "worker"))).ok());
  Status blocked;
  std::thread runner([&] {
    std::vector<Tensor> out;
    blocked = session->Run({}, {"out"}, {}, &out);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto start = std::chrono::steady_clock::now();
  cluster.Kill("ps", 0);
  runner.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(blocked.code() == Code::kUnavailable || blocked.code() == Code::kAborted) << blocked;
  EXPECT_NE(blocked.message().find("/job:ps/replica:0/task:0"), std::string::npos) << blocked;
  EXPECT_TRUE(session->Close().ok());
  proto::ConfigProto worker_only;
  worker_only.add_device_filters("/job:worker");
  auto other = Connect(cluster.Target("worker", 0), worker_only);
  ASSERT_TRUE(other->Create(ParseGraph(kMatMul)).ok());
  std::vector<Tensor> out;
  Status s = other->Run({}, {"c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ToVector<float>(out[0]), std::vector<float>({11}));
}

// A worker's raw WorkerService, as a TensorFlow master calls it: its first
// device and incarnation, and partitions with a client-terminated feed and
// fetch.
struct RawWorker {
  explicit RawWorker(const std::string& target)
      : stub(tensorflow::WorkerService::NewStub(
            grpc::CreateChannel(target.substr(7), grpc::InsecureChannelCredentials()))) {
    proto::GetStatusResponse status;
    EXPECT_TRUE(Call(&tensorflow::WorkerService::Stub::GetStatus, proto::GetStatusRequest(), &status).ok());
    if (status.device_attributes_size() > 0) {
      cpu = status.device_attributes(0).name();
      incarnation = status.device_attributes(0).incarnation();
    }
  }
  template <typename Method, typename Req, typename Resp>
  grpc::Status Call(Method method, const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return ((*stub).*method)(&ctx, req, resp);
  }
  // _Recv of the client's "x:0" -> `y_node` (a node 'y' reading
  // '_recv_x_0') -> _Send of "y:0" to the client.
  proto::GraphDef XToY(const std::string& y_node) const {
    const std::string transfer =
        "attr { key: 'send_device' value { s: '" + cpu + "' } } attr { key: 'recv_device' value { s: '" + cpu +
        "' } } attr { key: 'send_device_incarnation' value { i: " + std::to_string(static_cast<int64_t>(incarnation)) +
        " } } attr { key: 'client_terminated' value { b: true } }";
    return ParseGraph("node { name: '_recv_x_0' op: '_Recv' device: '" + cpu +
                      "' attr { key: 'tensor_type' value { type: DT_FLOAT } } attr { key: 'tensor_name' value { s: "
                      "'x:0' } } " + transfer + " }" + y_node +
                      "node { name: '_send_y_0' op: '_Send' input: 'y' device: '" + cpu +
                      "' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'tensor_name' value { s: 'y:0' } } " +
                      transfer + " }");
  }
  std::string Key(const std::string& tensor) const {
    return Rendezvous::CreateKey(cpu, incarnation, cpu, tensor, 0, 0);
  }
  std::unique_ptr<tensorflow::WorkerService::Stub> stub;
  std::string cpu;
  uint64_t incarnation = 0;
};

// The WorkerService alone, as a TensorFlow master drives it: RegisterGraph
// of a partition with a client-terminated feed and fetch, RunGraph with the
// feed under its rendezvous key, step stats through Logging.
TEST_F(DistributedTest, WorkerServiceRegisterRunAndLogging) {
  ServerProcess server({"--port", "0"});
  RawWorker worker(server.Target());
  auto call = [&](auto method, const auto& req, auto* resp) { return worker.Call(method, req, resp); };
  using W = tensorflow::WorkerService::Stub;
  proto::RegisterGraphRequest reg;
  *reg.mutable_graph_def() = worker.XToY("node { name: 'y' op: 'Mul' input: '_recv_x_0' input: '_recv_x_0' device: '" +
                                         worker.cpu + "' attr { key: 'T' value { type: DT_FLOAT } } }");
  proto::RegisterGraphResponse registered;
  grpc::Status s = call(&W::RegisterGraph, reg, &registered);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(registered.graph_handle().size(), 16u);

  proto::LoggingRequest enable;
  enable.set_enable_rpc_logging(true);
  proto::LoggingResponse logged;
  ASSERT_TRUE(call(&W::Logging, enable, &logged).ok());

  proto::RunGraphRequest run;
  run.set_graph_handle(registered.graph_handle());
  run.set_step_id(77);
  proto::NamedTensorProto* feed = run.add_send();
  feed->set_name(worker.Key("x:0"));
  MakeTensor<float>(GR_FLOAT, {2}, {3, -4}).AsProtoTensorContent(feed->mutable_tensor());
  run.add_recv_key(worker.Key("y:0"));
  proto::RunGraphResponse ran;
  s = call(&W::RunGraph, run, &ran);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(ran.recv_size(), 1);
  Tensor y;
  ASSERT_TRUE(Tensor::FromProto(ran.recv(0).tensor(), &y).ok());
  EXPECT_EQ(ToVector<float>(y), std::vector<float>({9, 16}));
  proto::CleanupGraphRequest cleanup;
  cleanup.set_step_id(77);
  proto::CleanupGraphResponse cleaned;
  EXPECT_TRUE(call(&W::CleanupGraph, cleanup, &cleaned).ok());

  proto::LoggingRequest fetch;
  fetch.add_fetch_step_id(77);
  fetch.add_fetch_step_id(78);  // never ran
  ASSERT_TRUE(call(&W::Logging, fetch, &logged).ok());
  ASSERT_EQ(logged.step_size(), 1);
  EXPECT_EQ(logged.step(0).step_id(), 77);
  bool saw_mul = false;
  for (const auto& dev : logged.step(0).step_stats().dev_stats())
    for (const auto& node : dev.node_stats()) saw_mul |= node.node_name() == "y";
  EXPECT_TRUE(saw_mul) << logged.DebugString();

  // A node without a full device, and an unknown graph handle: TensorFlow's errors.
  reg.mutable_graph_def()->mutable_node(1)->set_device("/device:CPU:0");
  s = call(&W::RegisterGraph, reg, &registered);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("Missing device name"), std::string::npos) << s.error_message();
  run.set_graph_handle("ffffffffffffffff");
  s = call(&W::RunGraph, run, &ran);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_NE(s.error_message().find("Graph handle is not found"), std::string::npos) << s.error_message();
}

// The step rendezvous over the wire, as TensorFlow's rendezvous tests check
// it (facts §12, 26th): a RecvTensor that comes before the step runs gets
// the value once it is sent (here 32 KiB, which goes out zero-copy and is
// read by protobuf's generated parser); CleanupGraph ends a pending one
// ABORTED; a caller's cancel ends its own call; the worker goes on.
TEST_F(DistributedTest, RecvTensorWaitsForTheSendAndEndsAtCleanup) {
  ServerProcess server({"--port", "0"});
  RawWorker worker(server.Target());
  auto call = [&](auto method, const auto& req, auto* resp) { return worker.Call(method, req, resp); };
  using W = tensorflow::WorkerService::Stub;
  proto::RegisterGraphRequest reg;
  *reg.mutable_graph_def() = worker.XToY("node { name: 'y' op: 'Neg' input: '_recv_x_0' device: '" + worker.cpu +
                                         "' attr { key: 'T' value { type: DT_FLOAT } } }");
  proto::RegisterGraphResponse registered;
  ASSERT_TRUE(call(&W::RegisterGraph, reg, &registered).ok());

  // The pull first, on another thread; then the step.
  std::vector<float> x(8192);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 100.5f;
  proto::RecvTensorRequest pull;
  pull.set_step_id(90);
  pull.set_rendezvous_key(worker.Key("y:0"));
  proto::RecvTensorResponse pulled;
  grpc::Status pull_status;
  std::thread puller([&] { pull_status = call(&W::RecvTensor, pull, &pulled); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  proto::RunGraphRequest run;
  run.set_graph_handle(registered.graph_handle());
  run.set_step_id(90);
  proto::NamedTensorProto* feed = run.add_send();
  feed->set_name(worker.Key("x:0"));
  MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(x.size())}, x).AsProtoTensorContent(feed->mutable_tensor());
  proto::RunGraphResponse ran;
  grpc::Status s = call(&W::RunGraph, run, &ran);
  ASSERT_TRUE(s.ok()) << s.error_message();
  puller.join();
  ASSERT_TRUE(pull_status.ok()) << pull_status.error_message();
  EXPECT_FALSE(pulled.is_dead());
  EXPECT_GT(pulled.send_start_micros(), 0);
  Tensor y;
  ASSERT_TRUE(Tensor::FromProto(pulled.tensor(), &y).ok());
  std::vector<float> neg(x.size());
  for (size_t i = 0; i < x.size(); ++i) neg[i] = -x[i];
  EXPECT_EQ(ToVector<float>(y), neg);
  proto::CleanupGraphRequest cleanup;
  proto::CleanupGraphResponse cleaned;
  cleanup.set_step_id(90);
  EXPECT_TRUE(call(&W::CleanupGraph, cleanup, &cleaned).ok());

  // A pull that nothing answers: CleanupGraph of its step ends it.
  pull.set_step_id(91);
  std::thread waiter([&] { pull_status = call(&W::RecvTensor, pull, &pulled); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  cleanup.set_step_id(91);
  EXPECT_TRUE(call(&W::CleanupGraph, cleanup, &cleaned).ok());
  waiter.join();
  EXPECT_EQ(pull_status.error_code(), grpc::StatusCode::ABORTED) << pull_status.error_message();
  EXPECT_NE(pull_status.error_message().find("cleaned up"), std::string::npos) << pull_status.error_message();

  // A caller that gives up ends its own call.
  pull.set_step_id(92);
  grpc::ClientContext cancelled;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancelled.TryCancel();
  });
  s = worker.stub->RecvTensor(&cancelled, pull, &pulled);
  canceller.join();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
  proto::GetStatusResponse status;
  ASSERT_TRUE(call(&W::GetStatus, proto::GetStatusRequest(), &status).ok());
}

// A master that restarted (same master_task, new master_incarnation)
// creates its sessions anew: the worker drops the old incarnation's
// sessions, keeps those of the same incarnation and of other masters.
TEST_F(DistributedTest, SessionsOfARestartedMasterAreDropped) {
  ServerProcess server({"--port", "0"});
  RawWorker worker(server.Target());
  using W = tensorflow::WorkerService::Stub;
  auto create = [&](const std::string& handle, const std::string& master, int64_t incarnation) {
    proto::CreateWorkerSessionRequest req;
    req.set_session_handle(handle);
    req.set_master_task(master);
    req.set_master_incarnation(incarnation);
    proto::CreateWorkerSessionResponse resp;
    return worker.Call(&W::CreateWorkerSession, req, &resp);
  };
  auto registers = [&](const std::string& handle) {
    proto::RegisterGraphRequest req;
    req.set_session_handle(handle);
    req.set_create_worker_session_called(true);
    *req.mutable_graph_def() = worker.XToY("node { name: 'y' op: 'Neg' input: '_recv_x_0' device: '" + worker.cpu +
                                           "' attr { key: 'T' value { type: DT_FLOAT } } }");
    proto::RegisterGraphResponse resp;
    return worker.Call(&W::RegisterGraph, req, &resp);
  };
  const std::string master = "/job:worker/replica:0/task:0";
  ASSERT_TRUE(create("old", master, 1).ok());
  ASSERT_TRUE(create("old_too", master, 1).ok());
  ASSERT_TRUE(create("other_master", "/job:chief/replica:0/task:0", 7).ok());
  EXPECT_TRUE(registers("old").ok());
  ASSERT_TRUE(create("new", master, 2).ok());
  for (const std::string gone : {"old", "old_too"}) {
    grpc::Status s = registers(gone);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << gone;
    EXPECT_NE(s.error_message().find("Session handle is not found: " + gone), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(registers("new").ok());
  EXPECT_TRUE(registers("other_master").ok());
}

// What a dead master leaves behind goes: a step whose CleanupGraph never
// came (here: a RecvTensor for a step that never runs) and idle sessions.
TEST_F(DistributedTest, IdleStepsAndSessionsExpire) {
  ServerProcess server({"--port", "0", "--step-idle-seconds", "1", "--session-idle-seconds", "2"});
  const std::string target = server.Target();
  auto worker = tensorflow::WorkerService::NewStub(
      grpc::CreateChannel(target.substr(7), grpc::InsecureChannelCredentials()));
  proto::GetStatusResponse status;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(worker->GetStatus(&ctx, proto::GetStatusRequest(), &status).ok());
  }
  const auto& cpu = status.device_attributes(0);
  proto::RecvTensorRequest recv;
  recv.set_step_id(12345);
  recv.set_rendezvous_key(Rendezvous::CreateKey(cpu.name(), cpu.incarnation(), cpu.name(), "never_sent", 0, 0));
  proto::RecvTensorResponse value;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  const auto start = std::chrono::steady_clock::now();
  grpc::Status s = worker->RecvTensor(&ctx, recv, &value);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_NE(s.error_message().find("idle"), std::string::npos) << s.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // A stale incarnation is refused at once.
  recv.set_rendezvous_key(Rendezvous::CreateKey(cpu.name(), cpu.incarnation() ^ 1, cpu.name(), "x", 0, 0));
  grpc::ClientContext stale_ctx;
  s = worker->RecvTensor(&stale_ctx, recv, &value);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_NE(s.error_message().find("incarnation"), std::string::npos) << s.error_message();

  auto session = Connect(target);
  ASSERT_TRUE(session->Create(ParseGraph(kMatMul)).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"c"}, {}, &out).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  Status st = session->Run({}, {"c"}, {}, &out);
  EXPECT_EQ(st.code(), Code::kAborted) << st;
  EXPECT_NE(st.message().find("idle"), std::string::npos) << st;
}

TEST_F(DistributedTest, ServerStopsCleanlyOnSigterm) {
  ServerProcess server({"--port", "0"});
  auto session = Connect(server.Target());
  ASSERT_TRUE(session->Create(ParseGraph(kMatMul)).ok());
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0);
}

// A server in this process: sessions call its master directly, or over
// RPC with use_rpc_for_inprocess_master; tensors past gRPC's 4 MB default
// travel both ways.
TEST_F(DistributedTest, InProcessServerWithAndWithoutRpc) {
  distributed::ServerOptions options;
  (*options.server_def.mutable_cluster()->add_job()->mutable_tasks())[0] = "localhost:0";
  options.server_def.mutable_cluster()->mutable_job(0)->set_name("localhost");
  std::unique_ptr<distributed::GrpcServer> server;
  ASSERT_TRUE(distributed::GrpcServer::Create(options, &server).ok());
  const proto::GraphDef g = ParseGraph(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } })pb");
  std::vector<float> big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1000);
  const Tensor x = MakeTensor<float>(GR_FLOAT, {static_cast<int64_t>(big.size())}, big);
  for (bool rpc : {false, true}) {
    proto::ConfigProto config;
    config.mutable_rpc_options()->set_use_rpc_for_inprocess_master(rpc);
    auto session = Connect(server->target(), config);
    ASSERT_TRUE(session->Create(g).ok());
    std::vector<Tensor> out;
    Status s = session->Run({{"x", x}}, {"y"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    const float* y = out[0].data<float>();
    EXPECT_EQ(y[0], -0.0f);
    EXPECT_EQ(y[big.size() - 1], -static_cast<float>((big.size() - 1) % 1000));
    EXPECT_TRUE(session->Close().ok());
  }
  server->Stop();
  // A session to a stopped in-process server fails, naming the master.
  proto::ConfigProto quick;
  quick.set_operation_timeout_in_ms(300);
  auto late = Connect(server->target(), quick);
  Status s = late->Create(g);
  EXPECT_FALSE(s.ok());
}

// A 10000 x 3000 float constant (120 MB) in the graph, fetched, and fed
// back, all over real RPC (facts §12, 22nd): past protobuf's old 64 MiB
// parse limit and gRPC's 4 MB default. About 5 s here (a fetch or feed of
// the 120 MB takes 0.3-0.8 s; registering the graph that holds the constant
// copies it on its way to the worker, through the core's graph pipeline):
// opt-in, with GRAPHRT_LONG_TESTS=1.
TEST_F(DistributedTest, A120MBConstantFetchedAndFedOverRpc) {
  if (std::getenv("GRAPHRT_LONG_TESTS") == nullptr) GTEST_SKIP() << "a long test: set GRAPHRT_LONG_TESTS=1 to run it";
  distributed::ServerOptions options;
  (*options.server_def.mutable_cluster()->add_job()->mutable_tasks())[0] = "localhost:0";
  options.server_def.mutable_cluster()->mutable_job(0)->set_name("localhost");
  std::unique_ptr<distributed::GrpcServer> server;
  ASSERT_TRUE(distributed::GrpcServer::Create(options, &server).ok());
  constexpr int64_t kRows = 10000, kCols = 3000;
  std::vector<float> values(kRows * kCols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 4093) * 0.5f;
  const Tensor big = MakeTensor<float>(GR_FLOAT, {kRows, kCols}, values);
  proto::GraphDef g = ParseGraph(R"pb(
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } })pb");
  big.AsProtoTensorContent((*g.mutable_node(0)->mutable_attr())["value"].mutable_tensor());
  proto::ConfigProto config;
  config.mutable_rpc_options()->set_use_rpc_for_inprocess_master(true);
  auto session = Connect(server->target(), config);
  Status s = session->Create(g);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = session->Run({}, {"c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out[0].shape(), big.shape());
  EXPECT_EQ(std::memcmp(out[0].raw_data(), big.raw_data(), big.TotalBytes()), 0);
  s = session->Run({{"x", out[0]}}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  const float* y = out[0].data<float>();
  bool exact = true;
  for (size_t i = 0; i < values.size(); ++i) exact &= y[i] == -values[i];
  EXPECT_TRUE(exact);
  EXPECT_TRUE(session->Close().ok());
  server->Stop();
}

TEST(ClusterConfigTest, TfConfigDenseAndSparse) {
  proto::ClusterDef cluster;
  std::string job;
  int task = -1;
  ASSERT_TRUE(distributed::ParseTfConfig(R"({"cluster": {"ps": ["h0:1"], "worker": {"0": "h1:2", "3": "h2:3"}},
                                             "task": {"type": "worker", "index": 3}})",
                                         &cluster, &job, &task)
                  .ok());
  EXPECT_EQ(job, "worker");
  EXPECT_EQ(task, 3);
  ASSERT_EQ(cluster.job_size(), 2);
  EXPECT_EQ(cluster.job(0).name(), "ps");
  EXPECT_EQ(cluster.job(0).tasks().at(0), "h0:1");
  EXPECT_EQ(cluster.job(1).tasks().size(), 2u);
  EXPECT_EQ(cluster.job(1).tasks().at(3), "h2:3");
  EXPECT_EQ(distributed::ParseTfConfig("{", &cluster, &job, &task).code(), Code::kInvalidArgument);
  EXPECT_EQ(distributed::ParseTfConfig(R"({"cluster": {"ps": [1]}})", &cluster, &job, &task).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(distributed::ParseTfConfig(R"({"task": {}})", &cluster, &job, &task).code(), Code::kInvalidArgument);
}

TEST(ClusterConfigTest, ClusterFlagsAndServerErrors) {
  proto::ClusterDef cluster;
  ASSERT_TRUE(distributed::AddJobFromFlag("worker=127.0.0.1:1,,127.0.0.1:3", &cluster).ok());
  EXPECT_EQ(cluster.job(0).tasks().size(), 2u);  // a sparse job: task 1 left out
  EXPECT_EQ(cluster.job(0).tasks().at(2), "127.0.0.1:3");
  EXPECT_EQ(distributed::AddJobFromFlag("worker=h:1", &cluster).code(), Code::kInvalidArgument);  // twice
  Status s = distributed::AddJobFromFlag("ps=hostwithoutport", &cluster);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("port"), std::string::npos);

  testing::LoadStandardPlugins();
  distributed::ServerOptions options;
  (*options.server_def.mutable_cluster()->add_job()->mutable_tasks())[0] = "127.0.0.1:0";
  options.server_def.mutable_cluster()->mutable_job(0)->set_name("local");
  std::unique_ptr<distributed::GrpcServer> first, second;
  ASSERT_TRUE(distributed::GrpcServer::Create(options, &first).ok());
  EXPECT_EQ(first->task(), "/job:local/replica:0/task:0");
  (*options.server_def.mutable_cluster()->mutable_job(0)->mutable_tasks())[0] =
      "127.0.0.1:" + std::to_string(first->port());
  s = distributed::GrpcServer::Create(options, &second);
  EXPECT_EQ(s.code(), Code::kUnknown) << s;
  options.server_def.set_task_index(4);
  s = distributed::GrpcServer::Create(options, &second);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // Not a loopback address and no --insecure: refused.
  options.server_def.set_task_index(0);
  (*options.server_def.mutable_cluster()->mutable_job(0)->mutable_tasks())[0] = "10.1.2.3:0";
  s = distributed::GrpcServer::Create(options, &second);
  EXPECT_EQ(s.code(), Code::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("--insecure"), std::string::npos) << s;
  first->Stop();
}

}  // namespace
}  // namespace graphrt
