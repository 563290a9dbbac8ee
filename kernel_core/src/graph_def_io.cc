// Reading and writing GraphDefs as binary (.pb) or text (.pbtxt) protos.
#include "graphrt/core/graph_def_io.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace graphrt {
namespace {

// Keeps the first parse error with a 1-based position; the default collector
// would print every error to stderr, where a library has no business.
class TextErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    // Later errors are mostly consequences of the first.
    if (count_++ > 0) return;
    first_ = errors::StrCat("line ", line + 1, ", column ", column + 1, ": ", Printable(message));
  }
  std::string errors() const {
    if (count_ > 1) return errors::StrCat(first_, " (and ", count_ - 1, " more errors)");
    return first_;
  }

 private:
  // Messages quote the offending input, which may be binary.
  static std::string Printable(const std::string& s) {
    std::string out;
    for (char c : s) out += (c >= 32 && c < 127) ? c : '?';
    return out;
  }
  int count_ = 0;
  std::string first_;
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Text parse; on failure `error` holds "line L, column C: ...".
bool ParseText(const std::string& text, proto::GraphDef* out, std::string* error) {
  TextErrorCollector collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  out->Clear();
  if (parser.ParseFromString(text, out)) return true;
  *error = collector.errors();
  if (error->empty()) *error = "malformed text proto";
  return false;
}

bool ParseBinary(const std::string& bytes, proto::GraphDef* out) {
  // A failed parse is reported through our Status; protobuf would also log
  // it (e.g. "invalid UTF-8") to stderr, which for a fallback attempt on a
  // text file is pure noise.
  google::protobuf::LogSilencer silence;
  out->Clear();
  return out->ParseFromString(bytes);
}

Status OsError(const std::string& path, const char* action, int err) {
  if (err == ENOENT)
    return errors::NotFound(path, action[0] == 'r' ? ": No such file" : ": No such file or directory");
  if (err == EACCES || err == EPERM)
    return Status(Code::kPermissionDenied, errors::StrCat(path, ": Permission denied (", action, ")"));
  return errors::Unknown(path, ": error ", action, ": ", std::strerror(err));
}

}  // namespace

Status ReadFileToString(const std::string& path, std::string* out) {
  out->clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can
  // refuse it. fstat on the open file, so what is read is what was checked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return OsError(path, "reading", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return OsError(path, "reading", err);
  }
  // Only a regular file has an end: /dev/zero or /dev/urandom would be read
  // until memory or protobuf's 2 GiB limit runs out, a FIFO could block.
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return errors::InvalidArgument(path, ": is ", kind, ", not a regular file");
  }
  if (st.st_size > 0) out->reserve(static_cast<size_t>(st.st_size));
  // To the end rather than st_size bytes: a file may grow while read.
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      out->clear();
      return OsError(path, "reading", err);
    }
  }
  ::close(fd);
  return Status::OK();
}

Status ParseGraphDefText(const std::string& text, proto::GraphDef* out) {
  std::string error;
  if (!ParseText(text, out, &error))
    return errors::InvalidArgument("Could not parse text GraphDef: ", error);
  return Status::OK();
}

Status ReadGraphDefFromFile(const std::string& path, proto::GraphDef* out) {
  std::string bytes;
  GR_RETURN_IF_ERROR(ReadFileToString(path, &bytes));
  // The name only picks which format to try first: files are often misnamed
  // (.pb holding text), so the other format is always the fallback.
  const bool text_first = EndsWith(path, ".pbtxt") || EndsWith(path, ".txt");
  std::string text_error;
  if (text_first) {
    if (ParseText(bytes, out, &text_error)) return Status::OK();
    if (ParseBinary(bytes, out)) return Status::OK();
  } else {
    if (ParseBinary(bytes, out)) return Status::OK();
    if (ParseText(bytes, out, &text_error)) return Status::OK();
  }
  out->Clear();
  return errors::InvalidArgument("Could not parse '", path,
                                 "' as a binary or text GraphDef (text parser: ", text_error, ")");
}

Status WriteGraphDefToFile(const std::string& path, const proto::GraphDef& g, bool text) {
  std::string bytes;
  if (text) {
    if (!google::protobuf::TextFormat::PrintToString(g, &bytes))
      return errors::Internal("Could not print GraphDef as text for '", path, "'");
  } else if (!g.SerializeToString(&bytes)) {
    return errors::InvalidArgument("Could not serialize GraphDef for '", path,
                                   "' (larger than 2GB?)");
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return OsError(path, "writing", errno);
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_err = errno;
  // fclose flushes, so it can be where a full disk shows up.
  const bool closed = std::fclose(f) == 0;
  if (!wrote) return OsError(path, "writing", write_err);
  if (!closed) return OsError(path, "writing", errno);
  return Status::OK();
}

}  // namespace graphrt
