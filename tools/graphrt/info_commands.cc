// `graphrt ops`, `graphrt plugins`, `graphrt devices`: what the loaded
// plugins provide.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "graphrt/distributed/server.h"
#include "graphrt/core/device.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "session_config.h"

namespace graphrt {
namespace cli {
namespace {

const char kPluginNote[] =
    "\nThe standard plugins are loaded from the directory beside the core library\n"
    "(<libdir>/graphrt/plugins) and from each directory in GRAPHRT_PLUGIN_PATH.\n"
    "A plugin's build for a newer x86-64 level beside it (<dir>/x86-64-v4/<file>)\n"
    "replaces it on CPUs that run that level; GRAPHRT_PLUGIN_ISA=x86-64-v3, say,\n"
    "caps the level (x86-64: the files themselves).\n";

// Parses a command that takes only the plugin options (and maybe one
// positional word); returns false after --help.
bool ParsePluginCommand(const std::string& command, const std::vector<std::string>& args,
                        const std::string& usage, const char* positional, po::variables_map* vm) {
  po::options_description visible("options");
  AddPluginOptions(&visible);
  po::options_description hidden;
  po::positional_options_description pos;
  if (positional != nullptr) {
    hidden.add_options()(positional, po::value<std::string>());
    pos.add(positional, 1);
  }
  if (!ParseArgs(command, args, visible, hidden, pos, usage, vm)) return false;
  LoadPlugins(*vm);
  return true;
}

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

int OpsCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt ops [FILTER] [options]\n"
      "\n"
      "Lists every op the loaded plugins define (with FILTER: those whose name\n"
      "contains it): its signature, attrs, the plugin that defined it and the\n"
      "device types that have kernels for it.\n" +
      std::string(kPluginNote);
  po::variables_map vm;
  if (!ParsePluginCommand("ops", args, usage, "filter", &vm)) return 0;
  const std::string filter = vm.count("filter") ? vm["filter"].as<std::string>() : "";
  const Runtime& rt = Runtime::Global();
  int shown = 0;
  for (const OpRegistrationData* op : rt.ops().ListOps()) {
    const proto::OpDef& def = op->op_def;
    if (!filter.empty() && def.name().find(filter) == std::string::npos) continue;
    ++shown;
    std::cout << OpSignature(def) << "\n";
    if (def.attr_size() > 0) {
      std::vector<std::string> attrs;
      for (const auto& a : def.attr()) attrs.push_back(AttrDefString(a));
      std::cout << "    attrs:   " << Join(attrs, "; ") << "\n";
    }
    if (!def.summary().empty()) std::cout << "    summary: " << OneLine(def.summary()) << "\n";
    std::cout << "    plugin:  " << (op->plugin.empty() ? "(built in)" : op->plugin) << "\n";
    const std::vector<std::string> devices = rt.kernels().DeviceTypesForOp(def.name());
    std::cout << "    kernels: " << (devices.empty() ? "(none)" : Join(devices)) << "\n";
  }
  if (shown == 0 && !filter.empty()) throw CliError("no registered op name contains '" + filter + "'");
  std::cout << "(" << shown << " op" << (shown == 1 ? "" : "s") << ")\n";
  return 0;
}

int PluginsCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt plugins [options]\n"
      "\n"
      "Lists the loaded plugins: name, version, the plugin ABI version it was\n"
      "built against, its file, and how many ops, kernels and devices it adds\n"
      "(and the device graph passes it registers). A kernel that replaces another\n"
      "plugin's kernel, or that another plugin's kernel shadows, is listed with\n"
      "'! kernel OP on DEVICE [what]'.\n" +
      std::string(kPluginNote);
  po::variables_map vm;
  if (!ParsePluginCommand("plugins", args, usage, nullptr, &vm)) return 0;
  const std::vector<PluginInfo> plugins = Runtime::Global().Plugins();
  if (plugins.empty()) {
    std::cout << "no plugins loaded (standard plugin directory: "
              << Runtime::DefaultPluginDirectory() << ")\n";
    return 0;
  }
  for (const PluginInfo& p : plugins) {
    std::cout << p.name << " " << p.version << "  ABI " << p.abi_major << "." << p.abi_minor
              << "  " << p.path << "\n";
    std::cout << "    " << p.ops.size() << " ops, " << p.kernels.size() << " kernels";
    if (!p.devices.empty()) std::cout << ", devices: " << Join(p.devices);
    if (!p.graph_passes.empty()) std::cout << ", graph passes: " << Join(p.graph_passes);
    std::cout << "\n";
    // Kernels the loader marked: they replace another plugin's, or another
    // plugin's shadows them ("Relu on CPU [replaces ...]").
    for (const std::string& k : p.kernels)
      if (k.find(" [") != std::string::npos) std::cout << "    ! kernel " << k << "\n";
  }
  return 0;
}

int DevicesCommand(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: graphrt devices [--target grpc://HOST:PORT] [options]\n"
      "\n"
      "Lists the devices the loaded device plugins provide: name, type,\n"
      "description, memory, and its allocator's bytes in use, peak and limit.\n"
      "With --target, the devices of the cluster behind that master (a `graphrt\n"
      "server`, or TensorFlow's), task by task, with their incarnations: a task\n"
      "that restarted shows new ones.\n" +
      std::string(kPluginNote);
  po::options_description visible("options");
  visible.add_options()
      ("target", po::value<std::string>()->value_name("grpc://HOST:PORT"), "list a cluster's devices")
      ("timeout", po::value<int>()->default_value(10000)->value_name("MS"),
       "with --target: how long to wait for the cluster's tasks");
  AddTlsOptions(&visible);
  AddPluginOptions(&visible);
  po::variables_map vm;
  if (!ParseArgs("devices", args, visible, {}, {}, usage, &vm)) return 0;
  if (vm.count("target")) {
    UseClientTls(vm);
    std::vector<proto::DeviceAttributes> local, remote;
    Check(distributed::ListClusterDevices(vm["target"].as<std::string>(), vm["timeout"].as<int>(), &local, &remote),
          "listing the cluster's devices");
    auto print = [](const proto::DeviceAttributes& d, const char* where) {
      char incarnation[17];
      std::snprintf(incarnation, sizeof incarnation, "%016llx", static_cast<unsigned long long>(d.incarnation()));
      std::cout << d.name() << "\n    type:        " << d.device_type() << " (" << where << ")\n"
                << "    incarnation: " << incarnation << "\n";
      if (d.memory_limit() > 0) std::cout << "    memory:      " << HumanBytes(d.memory_limit()) << "\n";
      if (!d.physical_device_desc().empty())
        std::cout << "    description: " << OneLine(d.physical_device_desc()) << "\n";
    };
    for (const auto& d : local) print(d, "the master's task");
    for (const auto& d : remote) print(d, "another task");
    return 0;
  }
  LoadPlugins(vm);
  std::vector<Device*> devices;
  Check(Runtime::Global().devices().GetDevices(&devices), "creating devices");
  if (devices.empty()) {
    std::cout << "no devices (no device plugin loaded)\n";
    return 0;
  }
  for (Device* d : devices) {
    std::cout << d->name() << "\n";
    std::cout << "    type:        " << d->type() << " (plugin " << d->plugin() << ")\n";
    std::cout << "    description: " << OneLine(d->description()) << "\n";
    DeviceMemoryStats m;
    const Status s = d->MemoryStats(&m);
    auto bytes = [](int64_t n) { return n >= 0 ? HumanBytes(n) : std::string("unknown"); };
    std::cout << "    memory:      ";
    if (!s.ok()) {
      std::cout << "unknown (" << OneLine(s.message()) << ")";
    } else {
      std::cout << (m.total_bytes > 0 ? HumanBytes(m.total_bytes) : std::string("unknown")) << " total, "
                << bytes(m.free_bytes) << " free\n";
      std::cout << "    allocator:   " << bytes(m.bytes_in_use) << " in use, " << bytes(m.peak_bytes_in_use)
                << " peak, " << bytes(m.bytes_limit) << " limit";
    }
    std::cout << "\n";
  }
  return 0;
}

}  // namespace cli
}  // namespace graphrt
