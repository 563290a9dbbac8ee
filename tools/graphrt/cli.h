// Shared pieces of the `graphrt` command-line program.
#ifndef GRAPHRT_TOOLS_GRAPHRT_CLI_H_
#define GRAPHRT_TOOLS_GRAPHRT_CLI_H_

#include <boost/program_options.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "graphrt/proto/graph.pb.h"
#include "graphrt/proto/op_def.pb.h"

namespace graphrt {
namespace cli {

namespace po = boost::program_options;

// Exit codes: 1 for failures, 2 for command lines we could not understand.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

// Thrown by commands; main() prints "graphrt: error: <what>" and exits.
class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& msg, int exit_code = kExitError)
      : std::runtime_error(msg), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class UsageError : public CliError {
 public:
  explicit UsageError(const std::string& msg) : CliError(msg, kExitUsage) {}
};

// Throws CliError with `context: message` when !s.ok().
void Check(const Status& s, const std::string& context = "");

// The subcommands: `args` are the words after the command name.
int RunCommand(const std::vector<std::string>& args);
int InspectCommand(const std::vector<std::string>& args);
int ShowCommand(const std::vector<std::string>& args);
int DotCommand(const std::vector<std::string>& args);
int OpsCommand(const std::vector<std::string>& args);
int PluginsCommand(const std::vector<std::string>& args);
int DevicesCommand(const std::vector<std::string>& args);
int CkptCommand(const std::vector<std::string>& args);  // ckpt_command.cc
int EventsCommand(const std::vector<std::string>& args);  // events_command.cc
int TrainCommand(const std::vector<std::string>& args);   // train_command.cc
int BenchCommand(const std::vector<std::string>& args);   // bench_command.cc
int ServerCommand(const std::vector<std::string>& args);  // server_command.cc

// ------------------------------------------------------ option handling

// --plugin, --plugin-dir, --no-default-plugins: shared by every command that
// needs ops or devices.
void AddPluginOptions(po::options_description* desc);
// Loads the default plugins (unless --no-default-plugins), then each
// --plugin-dir, then each --plugin.
void LoadPlugins(const po::variables_map& vm);

// Parses `args` against the `visible` options (shown by --help, which is
// added here) and the `hidden` ones that back positional arguments; turns
// every program_options complaint into a UsageError naming `command`.
// Flags may be spelled with underscores, and saved_model_cli's names work
// (--tag_set, --signature_def, --outdir, --dir).
// Returns false when --help was given, after printing `usage` and `visible`.
bool ParseArgs(const std::string& command, const std::vector<std::string>& args,
               const po::options_description& visible, const po::options_description& hidden,
               const po::positional_options_description& pos, const std::string& usage,
               po::variables_map* vm);

// ------------------------------------------------------- graph helpers

proto::GraphDef LoadGraph(const std::string& path);

// "node:3" -> ("node", 3); "node" -> ("node", 0). False for malformed names
// ("^x", "", "x:", "x:-1").
bool ParseTensorName(const std::string& name, std::string* node, int* index);

// The node named `name`, or nullptr.
const proto::NodeDef* FindNode(const proto::GraphDef& g, const std::string& name);

// The op's registered definition, or nullptr.
const proto::OpDef* LookUpOpDef(const std::string& op);

// The node an input string refers to: "x:1" -> "x", "^y" -> "y".
std::string InputNodeName(const std::string& input);

// ---------------------------------------------------------- formatting

// "Name(a: T, b: int32) -> (z: T)".
std::string OpSignature(const proto::OpDef& op);
// "T: {float, int32} = float", "N: int >= 1".
std::string AttrDefString(const proto::OpDef::AttrDef& attr);
// A compact rendering of an AttrValue (1, 2.5, "s", float, [2,3], [1, 2]).
std::string AttrValueString(const proto::AttrValue& v);
// "float" for a dtype graphrt knows, else TensorFlow's enum name or the
// bare value (files may hold any int in a dtype field).
std::string DataTypeValueString(int64_t value);

// "10.0 GiB".
std::string HumanBytes(int64_t bytes);

// "[1, 2.5, 3]", "[0, 1, ..., 9, ...]": at most `max_values` values, in
// the order they lie in memory.
std::string TensorValuesString(const Tensor& t, int64_t max_values);
// "float [2,3] [1, 2, ...]" for a TensorProto, making only the values shown
// (a few bytes of proto may describe gigabytes); "<error>" when invalid.
std::string TensorProtoString(const proto::TensorProto& p, int64_t max_values);

// Replaces newlines so an error stays one line.
std::string OneLine(std::string s);

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_CLI_H_
