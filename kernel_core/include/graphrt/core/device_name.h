// TensorFlow's device names: "/job:J/replica:R/task:T/device:TYPE:N", the
// legacy "/cpu:0" and "/gpu:0" forms, partial specs ("/device:GPU:*",
// "/job:localhost", "CPU:1"); a missing or "*" field matches anything.
#ifndef GRAPHRT_CORE_DEVICE_NAME_H_
#define GRAPHRT_CORE_DEVICE_NAME_H_

#include <string>

#include "graphrt/core/status.h"

namespace graphrt {

struct DeviceNameParts {
  bool has_job = false;
  std::string job;
  bool has_replica = false;
  int replica = 0;
  bool has_task = false;
  int task = 0;
  bool has_type = false;
  std::string type;  // as written, except legacy "cpu"/"gpu", upper-cased
  bool has_id = false;
  int id = 0;

  // "/job:J/replica:R/task:T/device:TYPE:N" with the fields that are set.
  std::string ToString() const;
};

// Parses a full or partial device name. An empty string is the empty spec.
// InvalidArgument "Malformed device specification '<s>'" otherwise.
Status ParseDeviceName(const std::string& s, DeviceNameParts* out);

// Whether a spec's job/replica/task fields (where set) name this process:
// job "localhost", replica 0, task 0.
bool IsLocalProcess(const DeviceNameParts& spec);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_DEVICE_NAME_H_
