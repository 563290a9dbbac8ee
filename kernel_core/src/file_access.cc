#include "file_access.h"

#include <glob.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "graphrt/c_api.h"

namespace graphrt {

namespace {

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

std::string Joined(const std::vector<std::string>& parts, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "/" + parts[i];
  return s.empty() ? "/" : s;
}

template <typename... Args>
Status PermissionDenied(const Args&... args) {
  return Status(Code::kPermissionDenied, errors::StrCat(args...));
}

bool HasWildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::string AccessWords(uint32_t access) {
  const bool r = access & GR_FILE_READ, w = access & GR_FILE_WRITE;
  return r && w ? "reading and writing" : w ? "writing" : "reading";
}

}  // namespace

Status ResolvePath(const std::string& path, std::string* resolved) {
  if (path.empty()) return errors::InvalidArgument("an empty file path");
  if (path.find('\0') != std::string::npos) return errors::InvalidArgument("a file path containing a NUL byte");
  std::string abs = path;
  if (abs[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == nullptr)
      return errors::Unavailable("cannot resolve '", path, "': no working directory (", std::strerror(errno), ")");
    abs = std::string(cwd) + "/" + abs;
  }
  const std::vector<std::string> parts = Components(abs);
  // The longest prefix that exists, resolved; the components after it do
  // not exist, so no symlink hides among them.
  size_t n = parts.size();
  std::string base;
  for (;; --n) {
    const std::string prefix = Joined(parts, n);
    if (char* real = realpath(prefix.c_str(), nullptr)) {
      base = real;
      std::free(real);
      break;
    }
    const int err = errno;
    if (err != ENOENT && err != ENOTDIR)
      return PermissionDenied("cannot resolve '", prefix, "' (in '", path, "'): ", std::strerror(err));
    struct stat st;
    if (lstat(prefix.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return PermissionDenied("'", prefix, "' (in '", path,
                                      "') is a symbolic link to a missing target; writing through it would create "
                                      "a file wherever it points");
    if (n == 0) return errors::Internal("cannot resolve '/'");
  }
  std::vector<std::string> out = Components(base);
  for (size_t i = n; i < parts.size(); ++i) {
    if (parts[i] == ".") continue;
    if (parts[i] == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    out.push_back(parts[i]);
  }
  *resolved = Joined(out, out.size());
  return Status::OK();
}

Status FileAccessPolicy::Create(const std::vector<std::string>& dirs, std::unique_ptr<FileAccessPolicy>* out) {
  out->reset();
  if (dirs.empty()) return Status::OK();
  auto policy = std::make_unique<FileAccessPolicy>();
  for (const std::string& d : dirs) {
    std::string resolved;
    GR_RETURN_IF_ERROR(
        ResolvePath(d, &resolved).WithContext("ConfigProto.graphrt_options.allowed_directories entry '" + d + "'"));
    if (std::find(policy->dirs_.begin(), policy->dirs_.end(), resolved) == policy->dirs_.end())
      policy->dirs_.push_back(resolved);
  }
  *out = std::move(policy);
  return Status::OK();
}

const FileAccessPolicy* FileAccessPolicy::DenyAll() {
  static const FileAccessPolicy* none = new FileAccessPolicy();
  return none;
}

bool FileAccessPolicy::Allows(const std::string& resolved) const {
  for (const std::string& d : dirs_)
    if (d == "/" || resolved == d || (resolved.size() > d.size() && resolved.compare(0, d.size(), d) == 0 &&
                                      resolved[d.size()] == '/'))
      return true;
  return false;
}

Status FileAccessPolicy::Denied(const std::string& path, const std::string& resolved, uint32_t access,
                                const std::string& why) const {
  std::string allowed;
  for (const std::string& d : dirs_) allowed += (allowed.empty() ? "" : ", ") + d;
  return PermissionDenied(AccessWords(access), " '", path, "'",
                                  resolved.empty() || resolved == path ? "" : " (resolved: '" + resolved + "')",
                                  " is not allowed: ", why, "; this session's ops may only touch files in [", allowed,
                                  "] (ConfigProto.graphrt_options.allowed_directories; a model loader allows the "
                                  "model's folder and the directories its caller names)");
}

Status FileAccessPolicy::Check(const std::string& path, uint32_t access) const {
  if (!(access & GR_FILE_PATTERN)) {
    std::string resolved;
    Status s = ResolvePath(path, &resolved);
    if (!s.ok()) return Denied(path, "", access, s.message());
    if (!Allows(resolved)) return Denied(path, resolved, access, "it is outside the allowed directories");
    return Status::OK();
  }
  // A pattern: its directory must be literal, and what it matches now is
  // checked file by file (a match may be a symlink leading out).
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  if (HasWildcard(dir))
    return Denied(path, "", access, "a file pattern may have wildcards only in its last component here");
  GR_RETURN_IF_ERROR(Check(dir, access & ~GR_FILE_PATTERN));
  glob_t g;
  std::memset(&g, 0, sizeof(g));
  const int rc = glob(path.c_str(), 0, nullptr, &g);
  Status s;
  if (rc == 0)
    for (size_t i = 0; i < g.gl_pathc && s.ok(); ++i) s = Check(g.gl_pathv[i], access & ~GR_FILE_PATTERN);
  globfree(&g);
  return s;
}

}  // namespace graphrt
