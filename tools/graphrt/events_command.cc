// `graphrt events`: print the events of TensorBoard event files (one line
// per summary value: step, kind, tag, value), to check a training run by
// hand. Reads through libgraphrt_client's ReadEventFile.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "graphrt/client/event_writer.h"
#include "graphrt/core/types.h"

namespace graphrt {
namespace cli {

namespace {

namespace fs = std::filesystem;

std::string Number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

const char* SessionStatusName(proto::SessionLog::SessionStatus s) {
  switch (s) {
    case proto::SessionLog::START: return "START";
    case proto::SessionLog::STOP: return "STOP";
    case proto::SessionLog::CHECKPOINT: return "CHECKPOINT";
    default: return "STATUS_UNSPECIFIED";
  }
}

// One line per summary value; `tag` filters (empty: all).
void PrintSummary(const std::string& prefix, const proto::Summary& summary, const std::string& tag,
                  int64_t max_values) {
  for (const proto::Summary::Value& v : summary.value()) {
    const std::string& name = v.tag().empty() ? v.node_name() : v.tag();
    if (!tag.empty() && name != tag) continue;
    std::cout << prefix;
    switch (v.value_case()) {
      case proto::Summary::Value::kSimpleValue: std::cout << "scalar  " << name << " = " << Number(v.simple_value()); break;
      case proto::Summary::Value::kHisto: {
        const proto::HistogramProto& h = v.histo();
        std::cout << "histogram  " << name << "  num " << Number(h.num());
        if (h.num() > 0)
          std::cout << " min " << Number(h.min()) << " max " << Number(h.max()) << " mean " << Number(h.sum() / h.num());
        break;
      }
      case proto::Summary::Value::kTensor:
        std::cout << "tensor  " << name << " = " << TensorProtoString(v.tensor(), max_values);
        break;
      case proto::Summary::Value::kImage:
        std::cout << "image  " << name << "  " << v.image().width() << "x" << v.image().height() << " colorspace "
                  << v.image().colorspace() << ", " << v.image().encoded_image_string().size() << " bytes";
        break;
      case proto::Summary::Value::kAudio:
        std::cout << "audio  " << name << "  " << v.audio().length_frames() << " frames x " << v.audio().num_channels()
                  << " channels at " << Number(v.audio().sample_rate()) << " Hz";
        break;
      default: std::cout << "value  " << name << "  (no value)"; break;
    }
    std::cout << "\n";
  }
}

void PrintEvents(const std::string& path, const std::string& tag, int64_t max_values) {
  std::vector<proto::Event> events;
  Check(ReadEventFile(path, &events), "events");
  std::cout << "file: " << path << " (" << events.size() << " events)\n";
  for (const proto::Event& e : events) {
    const std::string prefix = "step " + std::to_string(e.step()) + "  ";
    if (e.what_case() == proto::Event::kSummary) {
      PrintSummary(prefix, e.summary(), tag, max_values);
      continue;
    }
    if (!tag.empty()) continue;
    std::cout << prefix;
    switch (e.what_case()) {
      case proto::Event::kFileVersion: std::cout << "file_version  " << e.file_version(); break;
      case proto::Event::kGraphDef: std::cout << "graph_def  " << e.graph_def().size() << " bytes"; break;
      case proto::Event::kMetaGraphDef: std::cout << "meta_graph_def  " << e.meta_graph_def().size() << " bytes"; break;
      case proto::Event::kSessionLog:
        std::cout << "session_log  " << SessionStatusName(e.session_log().status());
        if (!e.session_log().checkpoint_path().empty()) std::cout << " " << e.session_log().checkpoint_path();
        if (!e.session_log().msg().empty()) std::cout << " " << e.session_log().msg();
        break;
      case proto::Event::kTaggedRunMetadata:
        std::cout << "run_metadata  " << e.tagged_run_metadata().tag() << "  "
                  << e.tagged_run_metadata().run_metadata().size() << " bytes";
        break;
      case proto::Event::kLogMessage: std::cout << "log_message  " << e.log_message().message(); break;
      default: std::cout << "event"; break;
    }
    std::cout << "\n";
  }
}

}  // namespace

int EventsCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt events PATH [--tag TAG]\n"
      "\n"
      "Prints the events of a TensorBoard event file, or of every\n"
      "events.out.tfevents.* file in the directory PATH (in name order): one\n"
      "line per summary value -- step, kind, tag and value (scalars; histogram\n"
      "count, min, max, mean; tensors) -- and one per other event (file_version,\n"
      "graph_def, session_log, ...). With --tag, only the summary values of\n"
      "that tag (or TensorSummary node name).\n"
      "\n"
      "examples:\n"
      "  graphrt events train/events.out.tfevents.1500000000.myhost\n"
      "  graphrt events train/ --tag loss\n";
  po::options_description visible("options");
  visible.add_options()("tag", po::value<std::string>()->default_value(""), "print only the values of this tag")(
      "max-values", po::value<int64_t>()->default_value(10), "print at most this many values of a tensor");
  po::options_description hidden;
  hidden.add_options()("path", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("path", 1);
  po::variables_map vm;
  if (!ParseArgs("events", args, visible, hidden, pos, usage, &vm)) return 0;
  if (!vm.count("path")) throw UsageError("events: missing PATH (see 'graphrt events --help')");
  const std::string path = vm["path"].as<std::string>();
  const int64_t max_values = vm["max-values"].as<int64_t>();
  if (max_values < 0) throw UsageError("events: --max-values must be >= 0");
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name.find("tfevents") != std::string::npos) files.push_back(entry.path().string());
    }
    if (ec) throw CliError("events: cannot list " + path + ": " + ec.message());
    if (files.empty()) throw CliError("events: no events.out.tfevents.* file in " + path);
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  for (const std::string& f : files) PrintEvents(f, vm["tag"].as<std::string>(), max_values);
  return 0;
}

}  // namespace cli
}  // namespace graphrt
