#include "graphrt/core/rendezvous.h"

#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <vector>

namespace graphrt {

std::string Rendezvous::CreateKey(const std::string& src_device, uint64_t src_incarnation,
                                  const std::string& dst_device, const std::string& tensor_name, uint64_t frame_id,
                                  int64_t iter_id) {
  char incarnation[17];
  std::snprintf(incarnation, sizeof(incarnation), "%016llx", static_cast<unsigned long long>(src_incarnation));
  return src_device + ";" + incarnation + ";" + dst_device + ";" + tensor_name + ";" + std::to_string(frame_id) +
         ":" + std::to_string(iter_id);
}

namespace {

// A device that a key may name: every field of a full name present.
bool IsFullDeviceName(const std::string& s, DeviceNameParts* parts) {
  return ParseDeviceName(s, parts).ok() && parts->has_job && parts->has_replica && parts->has_task &&
         parts->has_type && parts->has_id;
}

bool IsHex(const std::string& s) {
  if (s.empty() || s.size() > 16) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool IsFrameIter(const std::string& s) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != colon && !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace

Status Rendezvous::ParseKey(const std::string& key, ParsedKey* out) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t semi = key.find(';', start);
    parts.push_back(key.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  ParsedKey k;
  if (parts.size() != 5 || !IsFullDeviceName(parts[0], &k.src) || !IsHex(parts[1]) ||
      !IsFullDeviceName(parts[2], &k.dst) || parts[3].empty() || !IsFrameIter(parts[4]))
    return errors::InvalidArgument("Invalid rendezvous key: ", key);
  k.full_key = key;
  k.src_device = parts[0];
  k.src_incarnation = std::stoull(parts[1], nullptr, 16);
  k.dst_device = parts[2];
  k.edge_name = parts[3];
  k.frame_iter = parts[4];
  *out = std::move(k);
  return Status::OK();
}

Status Rendezvous::Recv(const ParsedKey& key, Tensor* value, bool* is_dead) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status result;
  RecvAsync(key, [&](const Status& s, const Tensor& v, bool dead) {
    std::lock_guard<std::mutex> lock(mu);
    result = s;
    *value = v;
    *is_dead = dead;
    done = true;
    cv.notify_one();  // under the lock: the waiter's locals outlive this call
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return result;
}

// A key's entry: the value sent and not yet received, or the receivers
// waiting for it (never both).
struct LocalRendezvous::Item {
  bool has_value = false;
  Tensor value;
  bool is_dead = false;
  std::deque<DoneCallback> waiters;
};

LocalRendezvous::LocalRendezvous() = default;

LocalRendezvous::~LocalRendezvous() {
  StartAbort(errors::Aborted("The step's rendezvous was destroyed with receivers still waiting"));
}

Status LocalRendezvous::Send(const ParsedKey& key, const Tensor& value, bool is_dead) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    std::unique_ptr<Item>& item = table_[key.full_key];
    if (item == nullptr) item = std::make_unique<Item>();
    if (item->waiters.empty()) {
      // TensorFlow 1's LocalRendezvous: one value per key in flight.
      if (item->has_value) return errors::Aborted("Duplicated send: ", key.full_key);
      item->has_value = true;
      item->value = value;
      item->is_dead = is_dead;
      return Status::OK();
    }
    waiter = std::move(item->waiters.front());
    item->waiters.pop_front();
    if (item->waiters.empty()) table_.erase(key.full_key);
  }
  // Outside the lock: the receiver may send or receive again at once.
  waiter(Status::OK(), value, is_dead);
  return Status::OK();
}

void LocalRendezvous::RecvAsync(const ParsedKey& key, DoneCallback done) {
  Tensor value;
  bool is_dead = false;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = status_;
    if (status.ok()) {
      std::unique_ptr<Item>& item = table_[key.full_key];
      if (item == nullptr) item = std::make_unique<Item>();
      if (!item->has_value) {
        item->waiters.push_back(std::move(done));
        return;
      }
      value = std::move(item->value);
      is_dead = item->is_dead;
      table_.erase(key.full_key);
    }
  }
  done(status, status.ok() ? value : Tensor(), is_dead);
}

void LocalRendezvous::StartAbort(const Status& status) {
  std::unordered_map<std::string, std::unique_ptr<Item>> table;
  Status abort;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return;  // the first abort's status stands
    status_ = status.ok() ? errors::Aborted("Rendezvous aborted without a status") : status;
    abort = status_;
    table.swap(table_);
  }
  // Values never received are released with `table`.
  for (auto& [key, item] : table)
    for (DoneCallback& waiter : item->waiters) waiter(abort, Tensor(), false);
}

}  // namespace graphrt
