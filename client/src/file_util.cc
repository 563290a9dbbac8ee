#include "file_util.h"

#include <fcntl.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "graphrt/core/graph_def_io.h"

namespace graphrt {
namespace client_internal {

namespace fs = std::filesystem;

bool FileExists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (b.front() == '/') return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string RandomHex() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static const char kHex[] = "0123456789abcdef";
  std::string s(32, '0');
  for (char& c : s) c = kHex[rng() & 15];
  return s;
}

namespace {

Status ErrnoError(const std::string& what, const std::string& path) {
  const int err = errno;
  const std::string msg = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return errors::NotFound(msg);
  if (err == EACCES || err == EPERM) return Status(Code::kPermissionDenied, msg);
  if (err == ENOSPC) return errors::ResourceExhausted(msg);
  return errors::Internal(msg);
}

// Keeps the first text-parse error with a 1-based position (the default
// collector prints to stderr, where a library has no business).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (!first_.empty()) return;
    std::string printable;
    for (char c : message) printable += (c >= 32 && c < 127) ? c : '?';
    first_ = errors::StrCat("line ", line + 1, ", column ", column + 1, ": ", printable);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp" + RandomHex().substr(0, 16);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", tmp);
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = ErrnoError("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status s = ErrnoError("cannot sync", tmp);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoError("cannot rename " + tmp + " to", path);
    ::unlink(tmp.c_str());
    return s;
  }
  // The rename itself is durable only once the directory is synced.
  const std::string parent = DirName(path);
  const int dfd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::OK();
}

bool ParseTextProto(const std::string& text, google::protobuf::Message* msg, std::string* error) {
  FirstErrorCollector collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  msg->Clear();
  if (parser.ParseFromString(text, msg)) return true;
  *error = collector.first().empty() ? "malformed text proto" : collector.first();
  return false;
}

Status ReadProtoFromFile(const std::string& path, google::protobuf::Message* msg) {
  std::string data;
  GR_RETURN_IF_ERROR(ReadFileToString(path, &data));
  auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  const bool text_first = ends_with(".pbtxt") || ends_with(".txt");
  FirstErrorCollector collector;
  auto parse_binary = [&] {
    // A failed attempt is reported through our Status, not protobuf's log.
    google::protobuf::LogSilencer silence;
    msg->Clear();
    // ParseFromString bounds its own allocations by the input's size; a
    // message can never be larger than the file (2 GiB protobuf limit).
    return data.size() <= static_cast<size_t>(INT32_MAX) && msg->ParseFromString(data);
  };
  auto parse_text = [&] {
    msg->Clear();
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&collector);
    return parser.ParseFromString(data, msg);
  };
  if (text_first ? (parse_text() || parse_binary()) : (parse_binary() || parse_text()))
    return Status::OK();
  msg->Clear();
  return errors::InvalidArgument("Could not parse ", path, " as a ", msg->GetTypeName(),
                                 " (neither binary nor text format; text parser: ",
                                 collector.first().empty() ? "malformed" : collector.first(), ")");
}

}  // namespace client_internal
}  // namespace graphrt
