// `graphrt`: run and inspect graphs from the command line.
//
// Every failure ends as one line "graphrt: error: <message>" on stderr and
// exit status 1 (2 for a command line we could not understand); nothing a
// file holds may crash the program or leak an exception out of main.
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli.h"

namespace {

using graphrt::cli::CliError;

struct Command {
  const char* name;
  int (*fn)(const std::vector<std::string>&);
  const char* summary;
};

const Command kCommands[] = {
    {"run", graphrt::cli::RunCommand, "run a graph with .npy feeds; print (and save) the fetched tensors"},
    {"bench", graphrt::cli::BenchCommand, "time a graph's runs (random inputs): latency percentiles, throughput"},
    {"show", graphrt::cli::ShowCommand, "show a SavedModel's tag sets and signatures (like saved_model_cli show --all)"},
    {"inspect", graphrt::cli::InspectCommand, "summarize a graph: nodes, placeholders, undefined ops"},
    {"dot", graphrt::cli::DotCommand, "print a graph in Graphviz dot format"},
    {"ops", graphrt::cli::OpsCommand, "list the registered ops with signatures, plugins and kernels"},
    {"plugins", graphrt::cli::PluginsCommand, "list the loaded plugins"},
    {"devices", graphrt::cli::DevicesCommand, "list the devices"},
    {"ckpt", graphrt::cli::CkptCommand, "list a TensorFlow checkpoint; print or export its tensors (.npy)"},
    {"events", graphrt::cli::EventsCommand, "print the steps, tags and values of TensorBoard event files"},
    {"server", graphrt::cli::ServerCommand, "serve a task of a cluster: TensorFlow's Master and Worker over gRPC"},
    {"train", graphrt::cli::TrainCommand, "run a train op in a loop: checkpoints, resume, summaries, progress"},
};

void PrintHelp() {
  std::cout << "graphrt: run and inspect dataflow graphs (TensorFlow-style GraphDefs)\n"
               "\n"
               "usage: graphrt COMMAND [ARGS] [options]\n"
               "\n"
               "commands:\n";
  for (const Command& c : kCommands) {
    std::string name = c.name;
    name.resize(10, ' ');
    std::cout << "  " << name << c.summary << "\n";
  }
  std::cout << "\n"
               "Run 'graphrt COMMAND --help' for the options of a command. Graphs are\n"
               "binary (.pb) or text (.pbtxt) GraphDefs; tensors are NumPy .npy files.\n";
}

int Main(std::vector<std::string> args) {
  if (args.empty()) {
    PrintHelp();
    throw graphrt::cli::UsageError("missing COMMAND");
  }
  // "graphrt help run" is "graphrt run --help".
  if (args[0] == "help" && args.size() > 1) args = {args[1], "--help"};
  const std::string command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    PrintHelp();
    return 0;
  }
  for (const Command& c : kCommands) {
    if (command == c.name) return c.fn(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  throw graphrt::cli::UsageError("unknown command '" + command + "' (see 'graphrt --help')");
}

}  // namespace

int main(int argc, char** argv) {
  std::string message;
  int code = graphrt::cli::kExitError;
  try {
    const int rc = Main(std::vector<std::string>(argv + 1, argv + argc));
    std::cout.flush();
    return rc;
  } catch (const CliError& e) {
    message = e.what();
    code = e.exit_code();
  } catch (const std::bad_alloc&) {
    message = "out of memory";
  } catch (const std::exception& e) {
    message = std::string("unexpected error: ") + e.what();
  } catch (...) {
    message = "unexpected error (unknown exception)";
  }
  std::cout.flush();
  std::cerr << "graphrt: error: " << graphrt::cli::OneLine(message) << std::endl;
  return code;
}
