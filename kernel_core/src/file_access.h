// A session's file-access policy: the directories its file-touching ops
// (checkpoints and the like, in any plugin) may read and write
// (ConfigProto.graphrt_options.allowed_directories; the model loaders set
// it to the model's folder and what their caller allows).
#ifndef GRAPHRT_CORE_SRC_FILE_ACCESS_H_
#define GRAPHRT_CORE_SRC_FILE_ACCESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/status.h"

namespace graphrt {

// `path` made absolute (against the working directory) with its longest
// existing prefix resolved by realpath (symlinks followed, so none can lead
// out unseen) and the rest, which does not exist, normalised by name ("."
// and ".." components). A dangling symlink on the way is refused (writing
// through it would create its target).
Status ResolvePath(const std::string& path, std::string* resolved);

class FileAccessPolicy {
 public:
  // Null *out (no policy: every path allowed) when `dirs` is empty; else
  // the directories, resolved now.
  static Status Create(const std::vector<std::string>& dirs, std::unique_ptr<FileAccessPolicy>* out);
  // Allows nothing (constant folding: no file may feed a folded value).
  static const FileAccessPolicy* DenyAll();

  // OK when `path` (resolved) is one of the directories or inside one.
  // `access` is GR_FILE_READ and/or GR_FILE_WRITE (for the message), with
  // GR_FILE_PATTERN when `path` is a glob pattern: then wildcards may only
  // be in its last component, and its directory and every file it matches
  // now are checked. PERMISSION_DENIED names the path, what it resolves to
  // and the allowed directories.
  Status Check(const std::string& path, uint32_t access) const;

  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  bool Allows(const std::string& resolved) const;
  Status Denied(const std::string& path, const std::string& resolved, uint32_t access, const std::string& why) const;
  std::vector<std::string> dirs_;  // resolved
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_SRC_FILE_ACCESS_H_
