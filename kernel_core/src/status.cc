#include "graphrt/core/status.h"

namespace graphrt {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kCancelled: return "CANCELLED";
    case Code::kUnknown: return "UNKNOWN";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kAlreadyExists: return "ALREADY_EXISTS";
    case Code::kPermissionDenied: return "PERMISSION_DENIED";
    case Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::kFailedPrecondition: return "FAILED_PRECONDITION";
    case Code::kAborted: return "ABORTED";
    case Code::kOutOfRange: return "OUT_OF_RANGE";
    case Code::kUnimplemented: return "UNIMPLEMENTED";
    case Code::kInternal: return "INTERNAL";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kDataLoss: return "DATA_LOSS";
    case Code::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN_CODE";
}

Status::Status(Code code, std::string message) {
  if (code != Code::kOk) rep_ = std::make_unique<Rep>(Rep{code, std::move(message)});
}

const std::string& Status::message() const {
  static const std::string* const kEmpty = new std::string();
  return rep_ ? rep_->message : *kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(rep_->code)) + ": " + rep_->message;
}

Status Status::WithContext(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(rep_->code, prefix + ": " + rep_->message);
}

std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

Status StatusFromCurrentException(const char* where) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted(where, ": out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return errors::Internal(where, ": unexpected exception: ", e.what());
  } catch (...) {
    return errors::Internal(where, ": unexpected exception of a type not derived from std::exception");
  }
}

}  // namespace graphrt
