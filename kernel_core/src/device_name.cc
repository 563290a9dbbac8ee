#include "graphrt/core/device_name.h"

#include <cctype>

namespace graphrt {
namespace {

// A non-negative decimal of at most 9 digits (no overflow of int).
bool ParseIndex(const std::string& s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  *out = std::stoi(s);
  return true;
}

// TensorFlow's rule for a job name or device type: a letter, then letters,
// digits and underscores.
bool IsName(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// "N" or "*" into (has, value).
bool ParseIdField(const std::string& s, bool* has, int* value) {
  if (s == "*") {
    *has = false;
    return true;
  }
  *has = true;
  return ParseIndex(s, value);
}

}  // namespace

Status ParseDeviceName(const std::string& s, DeviceNameParts* out) {
  *out = DeviceNameParts();
  if (s.empty() || s == "/") return Status::OK();
  auto malformed = [&] { return errors::InvalidArgument("Malformed device specification '", s, "'"); };
  // "CPU:0" and "/device:CPU:0" alike: every part is "/key:value".
  const std::string rest = s[0] == '/' ? s : "/" + s;
  size_t pos = 0;
  while (pos < rest.size()) {
    if (rest[pos] != '/') return malformed();
    const size_t next = rest.find('/', pos + 1);
    const std::string part = rest.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    pos = next == std::string::npos ? rest.size() : next;
    const size_t c = part.find(':');
    if (c == std::string::npos) return malformed();
    const std::string key = part.substr(0, c), val = part.substr(c + 1);
    if (key == "job") {
      if (val == "*") continue;
      if (!IsName(val)) return malformed();
      out->has_job = true;
      out->job = val;
    } else if (key == "replica") {
      if (!ParseIdField(val, &out->has_replica, &out->replica)) return malformed();
    } else if (key == "task") {
      if (!ParseIdField(val, &out->has_task, &out->task)) return malformed();
    } else if (key == "device") {
      // "device:TYPE:N", "device:TYPE:*", "device:TYPE", "device:*"
      const size_t c2 = val.find(':');
      const std::string type = val.substr(0, c2);
      if (type != "*") {
        if (!IsName(type)) return malformed();
        out->has_type = true;
        out->type = type;
        // TensorFlow accepts lower-case names for its own two types.
        if (type == "cpu" || type == "gpu") out->type = type == "cpu" ? "CPU" : "GPU";
      }
      if (c2 != std::string::npos && !ParseIdField(val.substr(c2 + 1), &out->has_id, &out->id)) return malformed();
    } else if (key == "cpu" || key == "gpu" || key == "CPU" || key == "GPU") {
      // Legacy "/cpu:0", "/gpu:*".
      out->has_type = true;
      out->type = key == "cpu" || key == "CPU" ? "CPU" : "GPU";
      if (!ParseIdField(val, &out->has_id, &out->id)) return malformed();
    } else {
      return malformed();
    }
  }
  return Status::OK();
}

std::string DeviceNameParts::ToString() const {
  std::string s;
  if (has_job) s += "/job:" + job;
  if (has_replica) s += "/replica:" + std::to_string(replica);
  if (has_task) s += "/task:" + std::to_string(task);
  if (has_type) s += "/device:" + type + ":" + (has_id ? std::to_string(id) : "*");
  return s;
}

bool IsLocalProcess(const DeviceNameParts& spec) {
  return (!spec.has_job || spec.job == "localhost") && (!spec.has_replica || spec.replica == 0) &&
         (!spec.has_task || spec.task == 0);
}

}  // namespace graphrt
