// Status with canonical codes; the core's error currency.
#ifndef GRAPHRT_CORE_STATUS_H_
#define GRAPHRT_CORE_STATUS_H_

#include <graphrt/c_api.h>

#include <exception>
#include <memory>
#include <new>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

namespace graphrt {

enum class Code : int {
  kOk = GR_OK,
  kCancelled = GR_CANCELLED,
  kUnknown = GR_UNKNOWN,
  kInvalidArgument = GR_INVALID_ARGUMENT,
  kDeadlineExceeded = GR_DEADLINE_EXCEEDED,
  kNotFound = GR_NOT_FOUND,
  kAlreadyExists = GR_ALREADY_EXISTS,
  kPermissionDenied = GR_PERMISSION_DENIED,
  kResourceExhausted = GR_RESOURCE_EXHAUSTED,
  kFailedPrecondition = GR_FAILED_PRECONDITION,
  kAborted = GR_ABORTED,
  kOutOfRange = GR_OUT_OF_RANGE,
  kUnimplemented = GR_UNIMPLEMENTED,
  kInternal = GR_INTERNAL,
  kUnavailable = GR_UNAVAILABLE,
  kDataLoss = GR_DATA_LOSS,
  kUnauthenticated = GR_UNAUTHENTICATED,
};

const char* CodeName(Code code);

// OK is a null pointer, so passing and returning OK costs nothing.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message);
  Status(const Status& o) : rep_(o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr) {}
  Status(Status&&) noexcept = default;
  Status& operator=(const Status& o) {
    rep_ = o.rep_ ? std::make_unique<Rep>(*o.rep_) : nullptr;
    return *this;
  }
  Status& operator=(Status&&) noexcept = default;
  static Status OK() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  const std::string& message() const;
  std::string ToString() const;  // "INVALID_ARGUMENT: message"
  // Keeps the code, prefixes the message ("while loading x: ...").
  Status WithContext(const std::string& prefix) const;
  void IgnoreError() const {}

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

std::ostream& operator<<(std::ostream& os, const Status& s);

template <typename T>
class StatusOr {
 public:
  StatusOr(Status s) : status_(std::move(s)) {}  // NOLINT: implicit by design
  StatusOr(T v) : value_(std::move(v)), has_value_(true) {}  // NOLINT
  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T* operator->() { return &value_; }
  T& operator*() { return value_; }

 private:
  Status status_;
  T value_{};
  bool has_value_ = false;
};

namespace errors {
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
#define GRAPHRT_ERROR_FN(Name, CODE)                           \
  template <typename... Args>                                  \
  Status Name(const Args&... args) {                           \
    return Status(Code::CODE, ::graphrt::errors::StrCat(args...)); \
  }
GRAPHRT_ERROR_FN(Cancelled, kCancelled)
GRAPHRT_ERROR_FN(Unknown, kUnknown)
GRAPHRT_ERROR_FN(InvalidArgument, kInvalidArgument)
GRAPHRT_ERROR_FN(DeadlineExceeded, kDeadlineExceeded)
GRAPHRT_ERROR_FN(NotFound, kNotFound)
GRAPHRT_ERROR_FN(AlreadyExists, kAlreadyExists)
GRAPHRT_ERROR_FN(ResourceExhausted, kResourceExhausted)
GRAPHRT_ERROR_FN(FailedPrecondition, kFailedPrecondition)
GRAPHRT_ERROR_FN(Aborted, kAborted)
GRAPHRT_ERROR_FN(OutOfRange, kOutOfRange)
GRAPHRT_ERROR_FN(Unimplemented, kUnimplemented)
GRAPHRT_ERROR_FN(Internal, kInternal)
GRAPHRT_ERROR_FN(Unavailable, kUnavailable)
GRAPHRT_ERROR_FN(DataLoss, kDataLoss)
#undef GRAPHRT_ERROR_FN
}  // namespace errors

// Inside a catch block: the exception being handled as a Status (as below).
Status StatusFromCurrentException(const char* where);

// Runs f(), which returns a Status, and turns a C++ exception it throws into
// one, prefixed with `where`: std::bad_alloc becomes RESOURCE_EXHAUSTED,
// anything else INTERNAL. Used wherever foreign or throwing code is called
// on the way to a Status-returning API (sessions, plugin init, kernels
// without the SDK), so no exception crosses the API or the plugin ABI. The
// happy path costs nothing (table-based unwinding).
template <typename F>
Status StatusFromExceptions(const char* where, F&& f) {
  try {
    return f();
  } catch (...) {
    return StatusFromCurrentException(where);
  }
}

}  // namespace graphrt

#define GR_CONCAT_INNER_(a, b) a##b
#define GR_CONCAT_(a, b) GR_CONCAT_INNER_(a, b)

#define GR_RETURN_IF_ERROR(expr)                            \
  do {                                                      \
    ::graphrt::Status _gr_status = (expr);                  \
    if (!_gr_status.ok()) return _gr_status;                \
  } while (0)

#define GR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define GR_ASSIGN_OR_RETURN(lhs, expr) \
  GR_ASSIGN_OR_RETURN_IMPL_(GR_CONCAT_(_gr_statusor_, __LINE__), lhs, expr)

#endif  // GRAPHRT_CORE_STATUS_H_
