// The process-wide microkernel state: plugins, op/kernel registries, devices.
#ifndef GRAPHRT_CORE_RUNTIME_H_
#define GRAPHRT_CORE_RUNTIME_H_

#include <memory>
#include <string>
#include <vector>

#include "graphrt/core/status.h"

namespace graphrt {

class OpRegistry;
class KernelRegistry;
class DeviceRegistry;
class GraphPassRegistry;
class GradientRegistry;

struct PluginInfo {
  std::string name;
  std::string version;
  std::string path;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<std::string> ops;      // op names it defined
  std::vector<std::string> kernels;  // "Op on CPU"
  std::vector<std::string> devices;  // device types it provides
  std::vector<std::string> graph_passes;  // "name for CPU"
};

class Runtime {
 public:
  static Runtime& Global();

  // Loads one plugin file. Where builds of it for newer x86-64 levels lie
  // beside it (<dir>/x86-64-v4/<file>, also -v3 and -v2), loads the one for
  // the newest level this CPU runs instead; GRAPHRT_PLUGIN_ISA (a level
  // name, or x86-64 for the file itself) caps the level. A failed load
  // registers nothing; a library whose init ran stays mapped even so (its
  // init may have started threads that run its code).
  Status LoadPlugin(const std::string& path);
  // The same, and on success `*loaded` describes the plugin `path` is
  // (loaded now or before; its path is the build that was loaded, which
  // may be another file than `path`).
  Status LoadPlugin(const std::string& path, PluginInfo* loaded);
  // Loads every lib*.so in `dir`, each as LoadPlugin does, in an order that
  // needs no retry: every plugin's init runs once (by file name), then the
  // plugins are registered ops first, so a kernel-only plugin may sort
  // before the plugin defining its ops. The plugins that can load do; the
  // first failure (by file name) is returned.
  Status LoadPluginDirectory(const std::string& dir);
  // Loads, once per process, the standard plugin directory (beside the core
  // library: <libdir>/graphrt/plugins) and each directory of GRAPHRT_PLUGIN_PATH
  // (colon-separated). Later calls return the first result.
  Status LoadDefaultPlugins();
  // The default plugin directory (may not exist).
  static std::string DefaultPluginDirectory();

  std::vector<PluginInfo> Plugins() const;
  const OpRegistry& ops() const;
  const KernelRegistry& kernels() const;
  const GraphPassRegistry& graph_passes() const;
  // The ops' gradient functions (plugin ABI 1.5).
  const GradientRegistry& gradients() const;
  DeviceRegistry& devices();

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

 private:
  Runtime();
  ~Runtime();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt

#endif  // GRAPHRT_CORE_RUNTIME_H_
