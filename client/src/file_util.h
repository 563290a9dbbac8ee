// File helpers of the client library (not installed).
#ifndef GRAPHRT_CLIENT_SRC_FILE_UTIL_H_
#define GRAPHRT_CLIENT_SRC_FILE_UTIL_H_

#include <string>

#include "graphrt/core/status.h"

namespace google::protobuf {
class Message;
}

namespace graphrt {
namespace client_internal {

bool FileExists(const std::string& path);
bool IsDirectory(const std::string& path);
std::string JoinPath(const std::string& a, const std::string& b);
std::string DirName(const std::string& path);
std::string BaseName(const std::string& path);
// 32 random hex digits (temporary names, TF's "_temp_<uuid>").
std::string RandomHex();

// Writes `contents` to `path` crash-safely: a temporary file in the same
// directory, fsync, rename over `path`, fsync of the directory.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Text-format parse that reports its first error ("line L, column C: ...")
// in *error instead of logging it.
bool ParseTextProto(const std::string& text, google::protobuf::Message* msg, std::string* error);

// Reads a binary or text proto: binary first unless `path` ends in .pbtxt or
// .txt, then the other format. Errors name the file and the message type.
Status ReadProtoFromFile(const std::string& path, google::protobuf::Message* msg);

}  // namespace client_internal
}  // namespace graphrt

#endif  // GRAPHRT_CLIENT_SRC_FILE_UTIL_H_
