#include "grpc_util.h"

#include <climits>
#include <cstdio>
#include <random>

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

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address) {
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
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(grpc::ClientContext* ctx, int64_t timeout_ms) {
  if (timeout_ms > 0) ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

int64_t NowSteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t DeadlineNanos(const grpc::ServerContext* ctx) {
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

Status WorkerCache::Stub(const std::string& task, tensorflow::WorkerService::Stub** out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = addresses_.find(task);
  if (it == addresses_.end()) return errors::NotFound("The cluster has no task ", task);
  auto& stub = stubs_[task];
  if (!stub) stub = tensorflow::WorkerService::NewStub(NewChannel(it->second));
  *out = stub.get();
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
