#include "grpc_util.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "graphrt/core/graph_def_io.h"

namespace graphrt {
namespace distributed {

std::string Utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    // The sequence's length and its second byte's range (RFC 3629's table:
    // no overlong forms, no surrogates, nothing past U+10FFFF).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    bool valid = len > 0 && i + len <= n;
    for (size_t k = 1; valid && k < len; ++k) {
      const unsigned char b = p[i + k];
      valid = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (valid) {
      out.append(s, i, len);
      i += len;
    } else {
      out.push_back('?');
      ++i;
    }
  }
  return out;
}

Status CallError(const grpc::Status& s, const std::string& method, const std::string& task) {
  std::string message = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    message = method + " to " + task + " failed: " + message;
  return Status(static_cast<Code>(s.error_code()), message);
}

namespace {

Status ReadPem(const std::string& path, const char* flag, std::string* out) {
  Status s = ReadFileToString(path, out);  // (names the file; refuses FIFOs and devices)
  if (s.ok() && out->empty()) s = errors::InvalidArgument("'", path, "' is empty");
  if (!s.ok()) return errors::InvalidArgument("Could not read the TLS file (", flag, "): ", s.message());
  return Status::OK();
}

struct Pem {
  std::string cert, key, ca;
};

Status ReadTls(const TlsFiles& tls, Pem* pem) {
  if (tls.cert_file.empty() || tls.key_file.empty() || tls.ca_file.empty())
    return errors::InvalidArgument("TLS needs a certificate, its key and the CA that signs the other side's "
                                   "(--tls-cert, --tls-key, --tls-ca); missing: ",
                                   tls.cert_file.empty() ? "--tls-cert " : "", tls.key_file.empty() ? "--tls-key " : "",
                                   tls.ca_file.empty() ? "--tls-ca" : "");
  GR_RETURN_IF_ERROR(ReadPem(tls.cert_file, "--tls-cert", &pem->cert));
  GR_RETURN_IF_ERROR(ReadPem(tls.key_file, "--tls-key", &pem->key));
  return ReadPem(tls.ca_file, "--tls-ca", &pem->ca);
}

std::mutex client_tls_mu;
bool client_tls_set = false;                                // under client_tls_mu
std::shared_ptr<grpc::ChannelCredentials> client_credentials;  // under client_tls_mu

}  // namespace

Status ChannelCredentialsFor(const TlsFiles& tls, std::shared_ptr<grpc::ChannelCredentials>* out) {
  if (tls.empty()) {
    *out = grpc::InsecureChannelCredentials();
    return Status::OK();
  }
  Pem pem;
  GR_RETURN_IF_ERROR(ReadTls(tls, &pem));
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = pem.ca;
  options.pem_private_key = pem.key;
  options.pem_cert_chain = pem.cert;
  *out = grpc::SslCredentials(options);
  return Status::OK();
}

Status ServerCredentialsFor(const TlsFiles& tls, std::shared_ptr<grpc::ServerCredentials>* out) {
  if (tls.empty()) {
    *out = grpc::InsecureServerCredentials();
    return Status::OK();
  }
  Pem pem;
  GR_RETURN_IF_ERROR(ReadTls(tls, &pem));
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = pem.ca;
  options.pem_key_cert_pairs.push_back({pem.key, pem.cert});
  *out = grpc::SslServerCredentials(options);
  return Status::OK();
}

Status SetClientTls(const TlsFiles& tls) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  GR_RETURN_IF_ERROR(ChannelCredentialsFor(tls, &credentials));
  std::lock_guard<std::mutex> lock(client_tls_mu);
  client_credentials = std::move(credentials);
  client_tls_set = true;
  return Status::OK();
}

Status ClientCredentials(std::shared_ptr<grpc::ChannelCredentials>* out) {
  std::lock_guard<std::mutex> lock(client_tls_mu);
  if (!client_tls_set) {
    auto env = [](const char* name) {
      const char* v = std::getenv(name);
      return std::string(v ? v : "");
    };
    const TlsFiles tls{env("GRAPHRT_TLS_CERT"), env("GRAPHRT_TLS_KEY"), env("GRAPHRT_TLS_CA")};
    // Read each time until it works: a file the environment names may be
    // written after the process starts.
    Status s = ChannelCredentialsFor(tls, &client_credentials);
    if (!s.ok()) return s.WithContext("GRAPHRT_TLS_CERT, GRAPHRT_TLS_KEY, GRAPHRT_TLS_CA");
    client_tls_set = true;
  }
  *out = client_credentials;
  return Status::OK();
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(INT_MAX);
  args.SetMaxSendMessageSize(INT_MAX);
  // Reconnect soon after a task comes back (gRPC's default backoff grows
  // to 2 minutes).
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  // A stream may have this much in flight before the receiver's window
  // update (HTTP/2's default, 64 KiB, starves large tensors).
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  return grpc::CreateCustomChannel(address, credentials, args);
}

grpc::Status CallAndWait(grpc::GenericStub* stub, grpc::ClientContext* ctx, const char* method,
                         const grpc::ByteBuffer& request, grpc::ByteBuffer* response) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub->UnaryCall(ctx, method, grpc::StubOptions(), &request, response, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    status = std::move(s);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return status;
}

void SetDeadline(grpc::ClientContext* ctx, int64_t timeout_ms) {
  if (timeout_ms > 0) ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

int64_t NowSteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t DeadlineNanos(const grpc::ServerContextBase* ctx) {
  const auto deadline = ctx->deadline();
  const auto now = std::chrono::system_clock::now();
  // gRPC reports "no deadline" as a time far in the future.
  if (deadline - now > std::chrono::hours(24 * 365)) return 0;
  return NowSteadyNanos() + std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
}

std::string TaskName(const std::string& job, int task) {
  return "/job:" + job + "/replica:0/task:" + std::to_string(task);
}

std::map<std::string, std::string> TasksOf(const proto::ClusterDef& cluster) {
  std::map<std::string, std::string> out;
  for (const proto::JobDef& job : cluster.job())
    for (const auto& [index, address] : job.tasks()) out[TaskName(job.name(), index)] = address;
  return out;
}

Status WorkerCache::StubsOf(const std::string& task, Stubs** out) {
  auto it = addresses_.find(task);
  if (it == addresses_.end()) return errors::NotFound("The cluster has no task ", task);
  Stubs& stubs = stubs_[task];
  if (!stubs.channel) {
    stubs.channel = NewChannel(it->second, credentials_);
    stubs.typed = tensorflow::WorkerService::NewStub(stubs.channel);
    stubs.generic = std::make_unique<grpc::GenericStub>(stubs.channel);
  }
  *out = &stubs;
  return Status::OK();
}

Status WorkerCache::Stub(const std::string& task, tensorflow::WorkerService::Stub** out) {
  std::lock_guard<std::mutex> lock(mu_);
  Stubs* stubs;
  GR_RETURN_IF_ERROR(StubsOf(task, &stubs));
  *out = stubs->typed.get();
  return Status::OK();
}

Status WorkerCache::GenericStub(const std::string& task, grpc::GenericStub** out) {
  std::lock_guard<std::mutex> lock(mu_);
  Stubs* stubs;
  GR_RETURN_IF_ERROR(StubsOf(task, &stubs));
  *out = stubs->generic.get();
  return Status::OK();
}

std::map<std::string, std::string> WorkerCache::addresses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return addresses_;
}

void WorkerCache::SetAddresses(std::map<std::string, std::string> addresses) {
  std::lock_guard<std::mutex> lock(mu_);
  addresses_ = std::move(addresses);  // (before any call: stubs made so far stay)
}

void WorkerCache::Contacted(const std::string& task, uint64_t incarnation) {
  const int64_t now = NowSteadyNanos();
  std::lock_guard<std::mutex> lock(mu_);
  TaskHealth& h = health_[task];
  h.last_contact_nanos = now;
  if (incarnation != 0) h.incarnation = incarnation;
}

std::vector<WorkerCache::TaskHealth> WorkerCache::Health() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TaskHealth> out;
  for (const auto& [task, address] : addresses_) {
    auto it = health_.find(task);
    TaskHealth h = it != health_.end() ? it->second : TaskHealth();
    h.task = task;
    h.address = address;
    out.push_back(std::move(h));
  }
  return out;
}

BlockingCallThreads::~BlockingCallThreads() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

void BlockingCallThreads::Run(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(work));
  if (idle_ >= queue_.size()) {
    cv_.notify_one();
    return;
  }
  threads_.emplace_back([this] { Loop(); });
}

void BlockingCallThreads::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work();
    lock.lock();
  }
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string RandomHandle() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return Hex16(rng());
}

}  // namespace distributed
}  // namespace graphrt
