#include "session_config.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "graphrt/core/graph_def_io.h"

namespace graphrt {
namespace cli {
namespace {

// protobuf's text parser reports through a collector; keep the first error.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

bool ParseConfigText(const std::string& text, proto::ConfigProto* config, std::string* error) {
  FirstError errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(text, config)) return true;
  *error = errors.first().empty() ? "malformed" : errors.first();
  return false;
}

// --config VALUE: a file holding a ConfigProto (text, or binary as
// tf.ConfigProto.SerializeToString() writes it), else the text itself, as
// `--config 'allow_soft_placement: true'`.
proto::ConfigProto ReadConfig(const std::string& value) {
  proto::ConfigProto config;
  std::string error;
  struct stat st;
  if (::stat(value.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::string bytes;
    Check(ReadFileToString(value, &bytes), "--config");
    if (ParseConfigText(bytes, &config, &error)) return config;
    config.Clear();
    if (config.ParseFromString(bytes)) return config;
    throw CliError("--config: " + value + " is neither a text nor a binary ConfigProto (text parser: " + error + ")");
  }
  if (!ParseConfigText(value, &config, &error))
    throw UsageError("--config: '" + value + "' is not a file and not a ConfigProto in text form (" + error + ")");
  return config;
}

// on|off (also true/false, 1/0) for a RewriterConfig toggle.
bool Switch(const po::variables_map& vm, const char* flag) {
  std::string v = vm[flag].as<std::string>();
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "on" || v == "true" || v == "1") return true;
  if (v == "off" || v == "false" || v == "0") return false;
  throw UsageError(std::string("--") + flag + " takes on or off, got '" + vm[flag].as<std::string>() + "'");
}

int Threads(const po::variables_map& vm, const char* flag) {
  const int n = vm[flag].as<int>();
  if (n < 0) throw UsageError(std::string("--") + flag + " must be 0 or more, got " + std::to_string(n));
  return n;
}

}  // namespace

void AddTlsOptions(po::options_description* desc) {
  desc->add_options()
      ("tls-cert", po::value<std::string>()->value_name("PEM"), "mutual TLS with the cluster: this side's certificate")
      ("tls-key", po::value<std::string>()->value_name("PEM"), "the private key of --tls-cert")
      ("tls-ca", po::value<std::string>()->value_name("PEM"),
       "the CA certificates the other side's certificate must chain to");
}

distributed::TlsFiles TlsFromArgs(const po::variables_map& vm) {
  auto file = [&](const char* flag) { return vm.count(flag) ? vm[flag].as<std::string>() : std::string(); };
  return distributed::TlsFiles{file("tls-cert"), file("tls-key"), file("tls-ca")};
}

void UseClientTls(const po::variables_map& vm) {
  const distributed::TlsFiles tls = TlsFromArgs(vm);
  if (!tls.empty()) Check(distributed::SetClientTls(tls), "TLS");
}

void AddSessionConfigOptions(po::options_description* desc) {
  // Commands that run nodes have --target NODE already; it takes grpc:// too.
  if (desc->find_nothrow("target", false) == nullptr)
    desc->add_options()("target", po::value<std::vector<std::string>>()->composing()->value_name("grpc://HOST:PORT"),
                        "run on the cluster behind that master (a `graphrt server`, or TensorFlow's) instead of in "
                        "this process");
  desc->add_options()
      ("config", po::value<std::string>()->value_name("TEXT|FILE"),
       "the session's ConfigProto: in text form (e.g. 'allow_soft_placement: true') or a file "
       "holding one (text or binary); the switches below override it")
      ("threads", po::value<int>()->value_name("N"), "intra- and inter-op threads (0 = all cores)")
      ("intra-op-threads", po::value<int>()->value_name("N"), "intra_op_parallelism_threads")
      ("inter-op-threads", po::value<int>()->value_name("N"), "inter_op_parallelism_threads")
      ("memory-limit", po::value<double>()->value_name("MIB"),
       "most MiB the session's tensors may hold at once (0 = a quarter of physical memory)")
      ("allow-soft-placement", po::bool_switch(),
       "place a node whose device does not exist or has no kernel for it on one that does")
      ("log-device-placement", po::bool_switch(), "the session writes each node's device to stderr")
      ("opt-level", po::value<std::string>()->value_name("L0|L1"),
       "optimizer_options.opt_level: L0 turns off constant folding, CSE and the device rewrites")
      ("layout-optimizer", po::value<std::string>()->value_name("on|off"),
       "rewrite_options.layout_optimizer (NCHW convolutions run in NHWC on the CPU)")
      ("remapping", po::value<std::string>()->value_name("on|off"), "rewrite_options.remapping (the fusions)")
      ("dependency-optimization", po::value<std::string>()->value_name("on|off"),
       "rewrite_options.dependency_optimization (Identity removal)")
      ("allow-dir", po::value<std::vector<std::string>>()->composing()->value_name("DIR"),
       "let the graph's file ops (SaveV2, RestoreV2, ...) touch files in DIR (repeatable). A SavedModel "
       "or SessionBundle directory may only touch its own folder and these; a graph file, given any, "
       "only these ('--allow-dir /' lifts the limit)");
  AddTlsOptions(desc);
}

bool IsSessionTarget(const std::string& target) {
  // Node names cannot hold ':', so "grpc://..." is never a node.
  return target.find("://") != std::string::npos;
}

SessionOptions SessionOptionsFromArgs(const po::variables_map& vm) {
  SessionOptions options;
  proto::ConfigProto& config = options.config;
  if (vm.count("config")) config = ReadConfig(vm["config"].as<std::string>());
  if (vm.count("target"))
    for (const std::string& t : vm["target"].as<std::vector<std::string>>()) {
      if (!IsSessionTarget(t)) continue;  // a node to run (run, bench)
      if (!options.target.empty()) throw UsageError("--target: two session targets, " + options.target + " and " + t);
      options.target = t;
    }
  if (!options.target.empty()) UseClientTls(vm);
  if (vm.count("threads")) {
    const int n = Threads(vm, "threads");
    config.set_intra_op_parallelism_threads(n);
    config.set_inter_op_parallelism_threads(n);
  }
  if (vm.count("intra-op-threads")) config.set_intra_op_parallelism_threads(Threads(vm, "intra-op-threads"));
  if (vm.count("inter-op-threads")) config.set_inter_op_parallelism_threads(Threads(vm, "inter-op-threads"));
  if (vm.count("memory-limit")) {
    const double mib = vm["memory-limit"].as<double>();
    if (!(mib >= 0) || mib > 1e12) throw UsageError("--memory-limit must be 0 or a positive number of MiB");
    config.mutable_graphrt_options()->set_session_memory_limit_bytes(static_cast<int64_t>(mib * (1 << 20)));
  }
  if (vm.count("allow-dir"))
    for (const std::string& d : vm["allow-dir"].as<std::vector<std::string>>()) {
      if (d.empty()) throw UsageError("--allow-dir needs a directory");
      config.mutable_graphrt_options()->add_allowed_directories(d);
    }
  if (vm["allow-soft-placement"].as<bool>()) config.set_allow_soft_placement(true);
  if (vm["log-device-placement"].as<bool>()) config.set_log_device_placement(true);
  proto::GraphOptions* graph = config.mutable_graph_options();
  if (vm.count("opt-level")) {
    const std::string& level = vm["opt-level"].as<std::string>();
    if (level != "L0" && level != "L1") throw UsageError("--opt-level takes L0 or L1, got '" + level + "'");
    graph->mutable_optimizer_options()->set_opt_level(level == "L0" ? proto::OptimizerOptions::L0
                                                                     : proto::OptimizerOptions::L1);
  }
  using Toggle = proto::RewriterConfig;
  auto toggle = [&](const char* flag) { return Switch(vm, flag) ? Toggle::ON : Toggle::OFF; };
  if (vm.count("layout-optimizer")) graph->mutable_rewrite_options()->set_layout_optimizer(toggle("layout-optimizer"));
  if (vm.count("remapping")) graph->mutable_rewrite_options()->set_remapping(toggle("remapping"));
  if (vm.count("dependency-optimization"))
    graph->mutable_rewrite_options()->set_dependency_optimization(toggle("dependency-optimization"));
  return options;
}

}  // namespace cli
}  // namespace graphrt
