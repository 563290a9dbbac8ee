// What `graphrt run`, `graphrt bench` and `graphrt dot --placed` share: the
// options that say what to run (--feed, --fetch, --target, --init, the
// session settings, the model and plugin options), and a session made ready
// to run it: graph loaded, feeds read (or generated), names checked.
#ifndef GRAPHRT_TOOLS_GRAPHRT_RUN_SETUP_H_
#define GRAPHRT_TOOLS_GRAPHRT_RUN_SETUP_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "graphrt/core/session.h"
#include "model_source.h"
#include "session_config.h"

namespace graphrt {
namespace cli {

// --feed, --fetch, --target, --init, with `generate_inputs` --shape, then
// the session settings (AddSessionConfigOptions), the model options
// (AddModelOptions) and the plugin options.
void AddRunOptions(po::options_description* desc, bool generate_inputs);

struct PreparedRun {
  std::string graph_path;
  proto::GraphDef graph;
  std::unique_ptr<ModelSource> model;  // for SavedModels and .meta files
  std::unique_ptr<Session> session;
  std::vector<std::pair<std::string, Tensor>> inputs;  // read and generated feeds
  std::vector<std::string> fetches;        // as the user named them (or the defaults)
  std::vector<std::string> fetch_tensors;  // signature keys resolved to tensor names
  std::vector<std::string> targets;
  std::vector<std::string> inits;
  // One line per generated input: "x:0 (generated float [8,3])".
  std::vector<std::string> generated;

  // Runs the --init nodes once (with the feeds: an initializer may read a
  // placeholder); nothing without --init.
  void RunInits();
};

// Loads the GRAPH of `vm` with `options`, reads the feeds, checks every
// name and, with `generate_inputs`, makes random values for each
// Placeholder the run needs that no --feed gives (generated_inputs.h).
// Without --fetch and --target the graph's sink outputs (or a model
// signature's outputs) are fetched. Throws CliError/UsageError.
void PrepareRun(const po::variables_map& vm, const SessionOptions& options, bool generate_inputs,
                PreparedRun* out);

}  // namespace cli
}  // namespace graphrt

#endif  // GRAPHRT_TOOLS_GRAPHRT_RUN_SETUP_H_
