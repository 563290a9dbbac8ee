#include "graphrt/distributed/server.h"

#include <arpa/inet.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <nlohmann/json.hpp>

#include "master.h"
#include "worker.h"

namespace graphrt {
namespace distributed {

namespace {

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a;
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// "host:port" (or "[v6]:port") split at the last ':'.
Status SplitAddress(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    return errors::InvalidArgument("Could not parse port for address '", address, "': expected host:port");
  *host = address.substr(0, colon);
  try {
    size_t used = 0;
    *port = std::stoi(address.substr(colon + 1), &used);
    if (used != address.size() - colon - 1 || *port < 0 || *port > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    return errors::InvalidArgument("Could not parse port for address '", address, "'");
  }
  return Status::OK();
}

}  // namespace

struct GrpcServer::Impl {
  std::string task;
  std::string target;
  int port = 0;
  std::shared_ptr<WorkerCache> workers;
  std::shared_ptr<Worker> worker;  // the master calls it directly too
  std::shared_ptr<Master> master;  // grpc:// sessions in this process hold it too
  std::vector<std::string> local_addresses;  // where they find it
  std::unique_ptr<grpc::Server> server;
  std::mutex mu;
  std::condition_variable stopped_cv;  // also wakes the status thread
  bool stopping = false;
  bool stopped = false;
  std::thread status;  // the health line every status_seconds
};

namespace {

// "graphrt server: <task>: health: <task> at <address> incarnation <hex>
// last contact <n> s ago; ...; here: <n> master sessions, <n> worker
// sessions, <n> steps".
std::string HealthLine(GrpcServer::Impl* impl) {
  std::string line = "graphrt server: " + impl->task + ": health:";
  const int64_t now = NowSteadyNanos();
  for (const WorkerCache::TaskHealth& h : impl->workers->Health()) {
    line += " " + h.task + " at " + h.address;
    if (h.task == impl->task) {
      line += " (this task);";
      continue;
    }
    if (h.incarnation != 0) line += " incarnation " + Hex16(h.incarnation);
    line += h.last_contact_nanos == 0 ? " never contacted;"
                                      : " last contact " + std::to_string((now - h.last_contact_nanos) / 1000000000) +
                                            " s ago;";
  }
  size_t worker_sessions = 0, steps = 0;
  impl->worker->Counts(&worker_sessions, &steps);
  return line + " here: " + std::to_string(impl->master->SessionCount()) + " master sessions, " +
         std::to_string(worker_sessions) + " worker sessions, " + std::to_string(steps) + " steps";
}

}  // namespace

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Stop(); }

const std::string& GrpcServer::target() const { return impl_->target; }
int GrpcServer::port() const { return impl_->port; }
const std::string& GrpcServer::task() const { return impl_->task; }

Status GrpcServer::Create(const ServerOptions& options, std::unique_ptr<GrpcServer>* out) {
  const proto::ServerDef& def = options.server_def;
  if (!def.protocol().empty() && def.protocol() != "grpc")
    return errors::InvalidArgument("Protocol '", def.protocol(), "' is not supported; graphrt serves \"grpc\"");
  std::string job = def.job_name();
  if (job.empty() && def.cluster().job_size() == 1) job = def.cluster().job(0).name();
  const proto::JobDef* job_def = nullptr;
  for (const proto::JobDef& j : def.cluster().job())
    if (j.name() == job) job_def = &j;
  if (job_def == nullptr)
    return errors::InvalidArgument("Job \"", job, "\" was not defined in the cluster (give --job_name and a "
                                   "--cluster entry for it)");
  auto task_it = job_def->tasks().find(def.task_index());
  if (task_it == job_def->tasks().end())
    return errors::InvalidArgument("Task ", def.task_index(), " was not defined in job \"", job, "\"");
  std::string host;
  int port;
  GR_RETURN_IF_ERROR(SplitAddress(task_it->second, &host, &port));
  if (def.port() != 0) port = def.port();
  const bool tls = !options.tls.empty();
  if (!IsLoopbackHost(host) && !options.insecure && !tls)
    return Status(Code::kPermissionDenied, errors::StrCat(
        "Task ", def.task_index(), " of job \"", job, "\" is at ", task_it->second,
        ", not a loopback address: anyone who can reach a graphrt server can run any graph on it (file reads and "
        "writes included), and this server has no TLS. Give it --tls-cert, --tls-key and --tls-ca, or start it "
        "with --insecure only on a trusted network."));
  std::shared_ptr<grpc::ServerCredentials> server_credentials;
  std::shared_ptr<grpc::ChannelCredentials> channel_credentials;
  GR_RETURN_IF_ERROR(ServerCredentialsFor(options.tls, &server_credentials));
  GR_RETURN_IF_ERROR(ChannelCredentialsFor(options.tls, &channel_credentials));

  auto impl = std::make_unique<Impl>();
  impl->task = TaskName(job, def.task_index());
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  // A second server on a taken port must fail, not share it.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  // A server that may serve other hosts listens on all interfaces (the
  // cluster's name for it may resolve to any of them).
  const std::string bind = (options.insecure || tls ? std::string("0.0.0.0") : host) + ":" + std::to_string(port);
  builder.AddListeningPort(bind, server_credentials, &impl->port);

  // The cluster as this task sees it: its own address is where it listens.
  const proto::ConfigProto& config = def.default_session_config();
  std::map<std::string, std::string> addresses = TasksOf(def.cluster());
  if (port != 0) addresses[impl->task] = "localhost:" + std::to_string(port);
  impl->workers = std::make_shared<WorkerCache>(addresses, channel_credentials);
  WorkerLimits limits;
  limits.step_idle_seconds = options.step_idle_seconds;
  limits.session_idle_seconds = options.session_idle_seconds;
  impl->worker = std::make_shared<Worker>(impl->task, config, impl->workers, limits);
  impl->master = std::make_shared<Master>(impl->task, config, impl->workers, impl->worker);
  builder.RegisterService(impl->worker.get());
  builder.RegisterService(impl->master.get());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || impl->port == 0)
    return errors::Unknown("Could not start gRPC server on ", bind, " (is the port taken?)");
  if (port == 0) {
    // A free port was taken: the task reaches itself there.
    addresses[impl->task] = "localhost:" + std::to_string(impl->port);
    impl->workers->SetAddresses(addresses);
  }
  impl->target = "grpc://localhost:" + std::to_string(impl->port);
  impl->local_addresses = {"localhost:" + std::to_string(impl->port), "127.0.0.1:" + std::to_string(impl->port)};
  if (port != 0) impl->local_addresses.push_back(task_it->second);
  for (const std::string& a : impl->local_addresses) RegisterLocalMaster(a, impl->master);
  if (options.status_seconds > 0) {
    Impl* raw = impl.get();
    impl->status = std::thread([raw, period = std::chrono::seconds(options.status_seconds)] {
      std::unique_lock<std::mutex> lock(raw->mu);
      while (!raw->stopped_cv.wait_for(lock, period, [raw] { return raw->stopping; })) {
        lock.unlock();
        const std::string line = HealthLine(raw);
        std::fprintf(stderr, "%s\n", line.c_str());
        lock.lock();
      }
    });
  }
  out->reset(new GrpcServer(std::move(impl)));
  return Status::OK();
}

void GrpcServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    impl_->stopped_cv.notify_all();
  }
  if (impl_->status.joinable()) impl_->status.join();
  for (const std::string& a : impl_->local_addresses) UnregisterLocalMaster(a);
  impl_->worker->Shutdown();
  impl_->master->Shutdown();
  // Calls still running after the grace period are cancelled.
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->server->Wait();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stopped = true;
  impl_->stopped_cv.notify_all();
}

void GrpcServer::Join() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->stopped_cv.wait(lock, [&] { return impl_->stopped; });
}

Status ParseTfConfig(const std::string& text, proto::ClusterDef* cluster, std::string* job_name, int* task_index) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    return errors::InvalidArgument("TF_CONFIG is not valid JSON: ", e.what());
  }
  if (!j.is_object() || !j.contains("cluster") || !j["cluster"].is_object())
    return errors::InvalidArgument("TF_CONFIG has no \"cluster\" object");
  cluster->Clear();
  for (const auto& [name, tasks] : j["cluster"].items()) {
    proto::JobDef* job = cluster->add_job();
    job->set_name(name);
    if (tasks.is_array()) {
      int index = 0;
      for (const auto& a : tasks) {
        if (!a.is_string()) return errors::InvalidArgument("TF_CONFIG: job \"", name, "\" lists a non-string address");
        (*job->mutable_tasks())[index++] = a.get<std::string>();
      }
    } else if (tasks.is_object()) {
      for (const auto& [index, a] : tasks.items()) {
        int i;
        try {
          i = std::stoi(index);
        } catch (const std::exception&) {
          return errors::InvalidArgument("TF_CONFIG: job \"", name, "\" has task index \"", index,
                                         "\", not a number");
        }
        if (!a.is_string()) return errors::InvalidArgument("TF_CONFIG: job \"", name, "\" lists a non-string address");
        (*job->mutable_tasks())[i] = a.get<std::string>();
      }
    } else {
      return errors::InvalidArgument("TF_CONFIG: job \"", name, "\" must be a list or an object of addresses");
    }
  }
  if (j.contains("task")) {
    const auto& t = j["task"];
    if (!t.is_object()) return errors::InvalidArgument("TF_CONFIG: \"task\" must be an object");
    if (t.contains("type")) {
      if (!t["type"].is_string()) return errors::InvalidArgument("TF_CONFIG: task.type must be a string");
      *job_name = t["type"].get<std::string>();
    }
    if (t.contains("index")) {
      if (!t["index"].is_number_integer()) return errors::InvalidArgument("TF_CONFIG: task.index must be an integer");
      *task_index = t["index"].get<int>();
    }
  }
  return Status::OK();
}

Status AddJobFromFlag(const std::string& flag, proto::ClusterDef* cluster) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0)
    return errors::InvalidArgument("--cluster '", flag, "': expected job=host:port[,host:port...]");
  proto::JobDef* job = nullptr;
  for (proto::JobDef& j : *cluster->mutable_job())
    if (j.name() == flag.substr(0, eq)) job = &j;
  if (job != nullptr) return errors::InvalidArgument("--cluster: job \"", flag.substr(0, eq), "\" is given twice");
  job = cluster->add_job();
  job->set_name(flag.substr(0, eq));
  int index = 0;
  size_t start = eq + 1;
  while (start <= flag.size()) {
    size_t comma = flag.find(',', start);
    if (comma == std::string::npos) comma = flag.size();
    const std::string address = flag.substr(start, comma - start);
    if (!address.empty()) {
      std::string host;
      int port;
      GR_RETURN_IF_ERROR(SplitAddress(address, &host, &port));
      (*job->mutable_tasks())[index] = address;
    }
    ++index;
    start = comma + 1;
  }
  return Status::OK();
}

}  // namespace distributed
}  // namespace graphrt
