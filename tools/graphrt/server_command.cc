// `graphrt server`: one task of a TensorFlow-style cluster (a Master and a
// Worker on one gRPC port) until SIGTERM or SIGINT.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli.h"
#include "graphrt/distributed/server.h"
#include "session_config.h"

namespace graphrt {
namespace cli {
namespace {

// SIGTERM and SIGINT reach WaitForStopSignal through a pipe: whichever
// thread the kernel delivers them to (gRPC's and the plugins' pools start
// before this command runs), the handler only writes one byte.
int g_stop_pipe[2] = {-1, -1};

void OnStopSignal(int signal) {
  const char c = static_cast<char>(signal);
  [[maybe_unused]] const ssize_t n = write(g_stop_pipe[1], &c, 1);
}

void InstallStopHandlers() {
  if (pipe(g_stop_pipe) != 0) throw CliError("server: pipe() failed");
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

int WaitForStopSignal() {
  char c = 0;
  while (read(g_stop_pipe[0], &c, 1) < 0 && errno == EINTR) {
  }
  return c;
}

}  // namespace

int ServerCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt server [--cluster JOB=HOST:PORT,... ...] [--job-name JOB] [--task-index N] [options]\n"
      "\n"
      "Serves one task of a cluster: TensorFlow 1's MasterService and WorkerService on one\n"
      "gRPC port, at TensorFlow's method paths, so that tf.Session(\"grpc://host:port\"),\n"
      "graphrt's own clients (--target, graphrt.Session) and TensorFlow's workers and\n"
      "parameter servers can use it. The cluster comes from the --cluster flags, else from\n"
      "the TF_CONFIG environment variable (as Kubeflow's TFJob, SageMaker and Vertex AI set\n"
      "it). Without a cluster it serves a one-task job \"localhost\" on --port (0: a free one).\n"
      "Prints one line once it accepts sessions; SIGTERM or SIGINT stop it (running steps\n"
      "end, sessions close) with exit status 0.\n"
      "\n"
      "Security: a graphrt server runs any graph sent to it, file reads and writes included.\n"
      "With --tls-cert, --tls-key and --tls-ca it speaks mutual TLS: only clients and tasks\n"
      "holding a certificate that the CA signed get in, and it reaches the other tasks with its\n"
      "own (give clients the same flags, or GRAPHRT_TLS_CERT, GRAPHRT_TLS_KEY, GRAPHRT_TLS_CA).\n"
      "Without TLS it refuses an address that is not a loopback address unless --insecure is given.\n";
  po::options_description visible("options");
  visible.add_options()
      ("cluster", po::value<std::vector<std::string>>()->composing()->value_name("JOB=HOST:PORT,..."),
       "a job and its tasks' addresses, in task order (repeatable, one per job)")
      ("job-name", po::value<std::string>()->value_name("JOB"), "this task's job (default: the only job)")
      ("task-index", po::value<int>()->default_value(0)->value_name("N"), "this task's index in its job")
      ("port", po::value<int>()->value_name("PORT"), "listen here instead of the cluster's port for this task")
      ("insecure", po::bool_switch(), "serve on a non-loopback address without TLS (trusted networks only)")
      ("step-idle-seconds", po::value<int64_t>()->default_value(600)->value_name("S"),
       "drop a step's transfers that no call used for S seconds (its master died mid-step); 0: never")
      ("session-idle-seconds", po::value<int64_t>()->default_value(0)->value_name("S"),
       "delete a worker session that no call used for S seconds; 0: never")
      ("status-seconds", po::value<int64_t>()->default_value(60)->value_name("S"),
       "every S seconds write a line of cluster health to stderr (each task's incarnation and last "
       "contact, this task's sessions and steps); 0: never");
  AddSessionConfigOptions(&visible);
  AddPluginOptions(&visible);
  po::variables_map vm;
  if (!ParseArgs("server", args, visible, {}, {}, usage, &vm)) return 0;
  LoadPlugins(vm);

  distributed::ServerOptions options;
  proto::ServerDef& def = options.server_def;
  std::string job;
  int task = vm["task-index"].as<int>();
  if (vm.count("cluster")) {
    for (const std::string& flag : vm["cluster"].as<std::vector<std::string>>())
      Check(distributed::AddJobFromFlag(flag, def.mutable_cluster()));
  } else if (const char* tf_config = std::getenv("TF_CONFIG")) {
    Check(distributed::ParseTfConfig(tf_config, def.mutable_cluster(), &job, &task), "TF_CONFIG");
  } else {
    (*def.mutable_cluster()->add_job()->mutable_tasks())[0] = "localhost:0";
    def.mutable_cluster()->mutable_job(0)->set_name("localhost");
  }
  if (vm.count("job-name")) job = vm["job-name"].as<std::string>();
  def.set_job_name(job);
  def.set_task_index(task);
  def.set_protocol("grpc");
  if (vm.count("port")) {
    const int port = vm["port"].as<int>();
    if (port < 0 || port > 65535) throw UsageError("--port must be 0..65535");
    // Port 0 means "the cluster's", as in ServerDef; a free port is
    // "localhost:0" in the cluster.
    def.set_port(port);
    if (port == 0)
      for (auto& j : *def.mutable_cluster()->mutable_job())
        if (j.name() == (job.empty() ? def.cluster().job(0).name() : job) && j.tasks().count(task))
          (*j.mutable_tasks())[task] = "localhost:0";
  }
  *def.mutable_default_session_config() = SessionOptionsFromArgs(vm).config;
  options.insecure = vm["insecure"].as<bool>();
  options.tls = TlsFromArgs(vm);
  options.step_idle_seconds = vm["step-idle-seconds"].as<int64_t>();
  options.session_idle_seconds = vm["session-idle-seconds"].as<int64_t>();
  options.status_seconds = vm["status-seconds"].as<int64_t>();
  if (options.status_seconds < 0) throw UsageError("--status-seconds must be 0 or more");
  if (options.step_idle_seconds < 0 || options.session_idle_seconds < 0)
    throw UsageError("--step-idle-seconds and --session-idle-seconds must be 0 or more");

  InstallStopHandlers();
  std::unique_ptr<distributed::GrpcServer> server;
  Check(distributed::GrpcServer::Create(options, &server), "starting the server");
  std::string jobs;
  for (const auto& j : def.cluster().job())
    jobs += (jobs.empty() ? "" : ", ") + j.name() + "=" + std::to_string(j.tasks_size());
  std::cout << "graphrt server: " << server->task() << " serving on " << server->target() << " (cluster: " << jobs
            << ")" << std::endl;
  const int signal = WaitForStopSignal();
  std::cerr << "graphrt server: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ": stopping" << std::endl;
  server->Stop();
  return 0;
}

}  // namespace cli
}  // namespace graphrt
