// The plugin loader and the process-wide registries.
#include "graphrt/core/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <boost/filesystem.hpp>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>

#include "control_flow_ops.h"
#include "graphrt/core/partition.h"
#include "core_api_internal.h"
#include "graphrt/core/device.h"
#include "graphrt/core/graph_optimizer.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"

namespace graphrt {

namespace fs = boost::filesystem;

// A plugin whose init has run, with what it registered (not yet applied).
struct StagedPlugin {
  std::string path;       // for messages: the file asked for (and the build loaded)
  std::string canonical;  // the file loaded
  GR_Registrar reg;
  std::string version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
};

struct Runtime::Impl {
  OpRegistry ops;
  KernelRegistry kernels;
  DeviceRegistry devices;
  GraphPassRegistry graph_passes;
  GradientRegistry gradients;
  mutable std::mutex mu;  // serialises loads, guards plugins/libs
  std::vector<PluginInfo> plugins;
  // Every library whose init ran, loaded or not: never unloaded.
  std::vector<std::unique_ptr<boost::dll::shared_library>> libs;
  std::once_flag defaults_once;
  Status defaults_status;

  Status Open(const std::string& path, const std::vector<std::unique_ptr<StagedPlugin>>& pending,
              std::unique_ptr<StagedPlugin>* out, PluginInfo* already);
  bool KernelOpsDefined(const StagedPlugin& s) const;
  Status Commit(StagedPlugin& s, PluginInfo* loaded);
  Status LoadAll(const std::vector<std::string>& paths, PluginInfo* loaded);
};

Runtime::Runtime() : impl_(std::make_unique<Impl>()) {
  // The control-flow primitives are the executor's own: defined before any
  // plugin can claim their names.
  Status s = RegisterControlFlowOps(&impl_->ops);
  if (s.ok()) s = RegisterSendRecvOps(&impl_->ops);  // the transfers between partitions, likewise
  if (!s.ok()) std::abort();  // static specs: only a bug here fails
}
// The global runtime lives for the process; plugins stay mapped until exit.
Runtime::~Runtime() = default;

Runtime& Runtime::Global() {
  static Runtime* rt = new Runtime();
  return *rt;
}

namespace {

// ---- builds of a plugin for newer x86-64 levels
// Beside a plugin file a package may ship builds of it for newer levels of
// the x86-64 ISA, each in a subdirectory named after its level
// (plugins/x86-64-v4/libfoo.so), as glibc-hwcaps lays out libraries: the
// loader picks the build for the newest level this CPU runs, so one package
// runs on every x86-64-v3 CPU and uses AVX-512 where there is one.
struct IsaLevel {
  const char* name;
  bool (*cpu_runs)();
};

#if defined(__x86_64__)
// Each level's features as both GCC and clang name them for
// __builtin_cpu_supports (which also checks that the OS saves the AVX and
// AVX-512 registers); x86-64-v3's F16C, MOVBE and LZCNT come with AVX2 and
// BMI2 on every CPU that has those.
bool RunsV2() {
  return __builtin_cpu_supports("sse3") && __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
         __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
}
bool RunsV3() {
  return RunsV2() && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
}
bool RunsV4() {
  return RunsV3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}
// Newest first.
constexpr std::array<IsaLevel, 3> kIsaLevels{{{"x86-64-v4", RunsV4}, {"x86-64-v3", RunsV3}, {"x86-64-v2", RunsV2}}};
#else
constexpr std::array<IsaLevel, 0> kIsaLevels{};
#endif
constexpr const char* kBaselineIsa = "x86-64";

// The build of plugin file `file` to load: that of the newest level at or
// below GRAPHRT_PLUGIN_ISA (a level name, or x86-64 for the file itself)
// that this CPU runs and that exists; `file` itself when none does. `level`
// names the build's level, empty for `file`.
Status ChooseIsaBuild(const fs::path& file, fs::path* build, std::string* level) {
  *build = file;
  level->clear();
  const char* cap = std::getenv("GRAPHRT_PLUGIN_ISA");
  size_t first = 0;
  if (cap != nullptr && cap[0] != '\0') {
    if (std::string_view(cap) == kBaselineIsa) return Status::OK();
    first = kIsaLevels.size();
    for (size_t i = 0; i < kIsaLevels.size(); ++i)
      if (std::string_view(cap) == kIsaLevels[i].name) first = i;
    if (first == kIsaLevels.size()) {
      std::string known = kBaselineIsa;
      for (const IsaLevel& l : kIsaLevels) known += std::string(", ") + l.name;
      return errors::InvalidArgument("GRAPHRT_PLUGIN_ISA is '", cap, "'; expected one of: ", known);
    }
  }
  for (size_t i = first; i < kIsaLevels.size(); ++i) {
    if (!kIsaLevels[i].cpu_runs()) continue;
    boost::system::error_code ec;
    const fs::path candidate = file.parent_path() / kIsaLevels[i].name / file.filename();
    if (fs::is_regular_file(candidate, ec)) {
      *build = candidate;
      *level = kIsaLevels[i].name;
      return Status::OK();
    }
  }
  return Status::OK();
}

// Whether some node matches both kernels: same device and label, and
// every attr both constrain allows a common type.
bool KernelsOverlap(const KernelRegistration& a, const KernelRegistration& b) {
  if (a.device_type != b.device_type || a.label != b.label) return false;
  // Pairs, not structured bindings: clang 14 cannot capture a binding in a lambda.
  for (const auto& ca : a.constraints)
    for (const auto& cb : b.constraints)
      if (ca.first == cb.first && std::none_of(ca.second.begin(), ca.second.end(), [&](DataType t) {
            return std::find(cb.second.begin(), cb.second.end(), t) != cb.second.end();
          }))
        return false;
  return true;
}

// Whether `wide` matches every node `narrow` matches.
bool KernelCovers(const KernelRegistration& wide, const KernelRegistration& narrow) {
  for (const auto& cw : wide.constraints) {
    auto it = std::find_if(narrow.constraints.begin(), narrow.constraints.end(),
                           [&](const auto& c) { return c.first == cw.first; });
    if (it == narrow.constraints.end()) return false;  // narrow takes any type there
    for (DataType t : it->second)
      if (std::find(cw.second.begin(), cw.second.end(), t) == cw.second.end()) return false;
  }
  return true;
}

// What a new kernel `k` does to the loaded kernels of other plugins for its
// op (KernelRegistry::FindKernel: the highest priority wins, the earlier
// registered on a tie): "" when it overlaps none.
std::string KernelOverlapNote(const KernelRegistration& k, const std::vector<const KernelRegistration*>& loaded) {
  std::string note;
  for (const KernelRegistration* e : loaded) {
    if (e->plugin == k.plugin || !KernelsOverlap(k, *e)) continue;
    const std::string priorities = " (priority " + std::to_string(k.priority) +
                                   (k.priority > e->priority ? " > " : " <= ") + std::to_string(e->priority) + ")";
    const std::string other = "the kernel of plugin '" + e->plugin + "'";
    std::string one;
    if (k.priority > e->priority)
      one = std::string(KernelCovers(k, *e) ? "replaces " : "partly replaces ") + other + priorities;
    else if (KernelCovers(*e, k))
      one = "is never used: shadowed by " + other + priorities;
    else
      one = "is partly shadowed by " + other + priorities;
    note += (note.empty() ? "" : "; ") + one;
  }
  return note;
}

}  // namespace

// Opens `named_path` and runs its init: on success *out holds what it
// registered, not yet applied (null, with *already set, when that file is
// loaded already). A library whose init ran stays mapped whatever happens
// next: the init may have started threads or handed out pointers into its
// code, so unloading it could crash the process later.
Status Runtime::Impl::Open(const std::string& named_path, const std::vector<std::unique_ptr<StagedPlugin>>& pending,
                           std::unique_ptr<StagedPlugin>* out, PluginInfo* already) {
  out->reset();
  boost::system::error_code ec;
  fs::path p(named_path);
  if (!fs::exists(p, ec)) return errors::NotFound("plugin file '", named_path, "' not found");
  if (fs::is_directory(p, ec))
    return errors::InvalidArgument("plugin '", named_path, "' is a directory; use --plugin-dir / LoadPluginDirectory");
  fs::path build;
  std::string level;
  GR_RETURN_IF_ERROR(ChooseIsaBuild(fs::canonical(p, ec), &build, &level).WithContext("plugin '" + named_path + "'"));
  const std::string canonical = fs::canonical(build, ec).string();
  // Messages name the file asked for, and the build loaded where it is another.
  const std::string path = level.empty() ? named_path : named_path + " (its " + level + " build '" + canonical + "')";
  for (const PluginInfo& info : plugins)
    if (info.path == canonical) {  // already loaded
      *already = info;
      return Status::OK();
    }
  for (const auto& p : pending)
    if (p != nullptr && p->canonical == canonical) return Status::OK();  // another name of a file in this batch

  auto lib = std::make_unique<boost::dll::shared_library>();
  dlerror();
  lib->load(canonical, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec) {
    const char* why = dlerror();
    return errors::InvalidArgument("cannot load plugin '", path, "': ", why ? why : ec.message(),
                                   " (is it a shared library built for this platform?)");
  }
  if (!lib->has(GR_PLUGIN_ENTRY_SYMBOL))
    return errors::InvalidArgument("'", path, "' is not a graphrt plugin: it does not export '",
                                   GR_PLUGIN_ENTRY_SYMBOL,
                                   "' (declare GRAPHRT_PLUGIN(name, version) in one source file)");
  auto init = lib->get<int32_t(GR_PluginInitArgs*)>(GR_PLUGIN_ENTRY_SYMBOL);
  // From here on the library is never unloaded (a later load of the same
  // file maps the same copy again).
  libs.push_back(std::move(lib));

  auto staged = std::make_unique<StagedPlugin>();
  staged->path = path;
  staged->canonical = canonical;
  GR_Registrar& reg = staged->reg;
  reg.plugin = fs::path(canonical).stem().string();
  GR_PluginInitArgs args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  args.core_abi_major = GR_ABI_MAJOR;
  args.core_abi_minor = GR_ABI_MINOR;
  args.api = CoreApi();
  args.registrar = &reg;
  int32_t rc = GR_INTERNAL;
  // A C++ exception out of a plugin's init must not cross into the caller.
  Status thrown = StatusFromExceptions("init", [&] {
    rc = init(&args);
    return Status::OK();
  });
  if (!thrown.ok())
    return Status(thrown.code(), "plugin '" + path + "' failed to initialise: its " + thrown.message());
  if (args.plugin_abi_major != GR_ABI_MAJOR)
    return errors::FailedPrecondition("plugin '", path, "' was built for graphrt plugin ABI ", args.plugin_abi_major,
                                      ".", args.plugin_abi_minor, " but this core provides ABI ", GR_ABI_MAJOR, ".",
                                      GR_ABI_MINOR, "; rebuild the plugin against this graphrt SDK");
  if (args.plugin_name && args.plugin_name[0]) reg.plugin = args.plugin_name;
  if (rc != GR_OK) {
    Status why = reg.error.ok() ? Status(static_cast<Code>(rc), "init returned an error without a message")
                                : reg.error;
    return Status(why.code(), "plugin '" + path + "' failed to initialise: " + why.message());
  }
  for (auto& op : reg.ops) op->plugin = reg.plugin;
  for (auto& k : reg.kernels) k->plugin = reg.plugin;
  for (auto& d : reg.devices) d.second = reg.plugin;
  for (auto& gp : reg.graph_passes) gp->plugin = reg.plugin;
  for (auto& gr : reg.gradients) gr->plugin = reg.plugin;
  staged->version = args.plugin_version ? args.plugin_version : "";
  staged->abi_major = args.plugin_abi_major;
  staged->abi_minor = args.plugin_abi_minor;
  *out = std::move(staged);
  return Status::OK();
}

bool Runtime::Impl::KernelOpsDefined(const StagedPlugin& s) const {
  for (const auto& k : s.reg.kernels) {
    const bool own = std::any_of(s.reg.ops.begin(), s.reg.ops.end(),
                                 [&](const auto& op) { return op->op_def.name() == k->op; });
    if (!own && ops.LookUp(k->op) == nullptr) return false;
  }
  return true;
}

// Validates everything `s` registered against what is loaded, then applies
// it all, or nothing.
Status Runtime::Impl::Commit(StagedPlugin& s, PluginInfo* loaded) {
  GR_Registrar& reg = s.reg;
  const std::string& path = s.path;
  // A second copy of a loaded plugin (another path, same plugin) would
  // register every kernel twice.
  for (const PluginInfo& info : plugins)
    if (info.name == reg.plugin)
      return errors::AlreadyExists("plugin '", path, "' is '", reg.plugin, "', which is already loaded from '",
                                   info.path, "'; load only one copy of a plugin");
  std::set<std::string> staged_ops;
  for (const auto& op : reg.ops) staged_ops.insert(op->op_def.name());
  for (const auto& k : reg.kernels)
    if (!staged_ops.count(k->op) && ops.LookUp(k->op) == nullptr)
      return errors::FailedPrecondition("plugin '", path, "' registers a kernel for op '", k->op,
                                        "' that no loaded plugin defines; load the plugin that defines it first");
  GR_RETURN_IF_ERROR(ops.CheckAll(reg.ops).WithContext("plugin '" + path + "'"));
  GR_RETURN_IF_ERROR(devices.CheckAll(reg.devices).WithContext("plugin '" + path + "'"));
  GR_RETURN_IF_ERROR(graph_passes.CheckAll(reg.graph_passes).WithContext("plugin '" + path + "'"));
  GR_RETURN_IF_ERROR(gradients.CheckAll(reg.gradients).WithContext("plugin '" + path + "' "));

  PluginInfo info;
  info.name = reg.plugin;
  info.version = s.version;
  info.path = s.canonical;
  info.abi_major = s.abi_major;
  info.abi_minor = s.abi_minor;
  for (const auto& op : reg.ops) info.ops.push_back(op->op_def.name());
  for (const auto& k : reg.kernels) {
    info.kernels.push_back(k->op + " on " + k->device_type);
    // Say when this kernel takes over another plugin's, or will never (or
    // not always) be chosen: either is easy to do by accident and silent.
    const std::string note = KernelOverlapNote(*k, kernels.KernelsForOp(k->op));
    if (note.empty()) continue;
    info.kernels.back() += " [" + note + "]";
    std::fprintf(stderr, "W runtime.cc] plugin '%s' (%s): its kernel for op '%s' (%s) %s\n", reg.plugin.c_str(),
                 path.c_str(), k->op.c_str(), k->DebugString().c_str(), note.c_str());
  }
  for (const auto& d : reg.devices) info.devices.push_back(d.first.device_type);
  for (const auto& gp : reg.graph_passes) info.graph_passes.push_back(gp->name + " for " + gp->device_type);

  GR_RETURN_IF_ERROR(ops.AddAll(std::move(reg.ops)));
  kernels.AddAll(std::move(reg.kernels));
  devices.AddAll(std::move(reg.devices));
  graph_passes.AddAll(std::move(reg.graph_passes));
  gradients.AddAll(std::move(reg.gradients));
  if (loaded != nullptr) *loaded = info;
  plugins.push_back(std::move(info));
  return Status::OK();
}

// Each plugin's init runs once; then the plugins are committed ops first:
// a plugin whose kernels need ops that another plugin of the batch defines
// waits until that one is committed (so the order of the files does not
// matter and nothing is loaded twice). Those whose ops never appear fail
// as a single load would. Returns the first failure in `paths` order.
Status Runtime::Impl::LoadAll(const std::vector<std::string>& paths, PluginInfo* loaded) {
  std::vector<Status> results(paths.size());
  std::vector<std::unique_ptr<StagedPlugin>> staged(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    PluginInfo already;
    results[i] = Open(paths[i], staged, &staged[i], &already);
    if (results[i].ok() && staged[i] == nullptr && !already.path.empty() && loaded != nullptr) *loaded = already;
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < paths.size(); ++i)
      if (staged[i] != nullptr && KernelOpsDefined(*staged[i])) {
        results[i] = Commit(*staged[i], loaded);
        staged[i].reset();
        progress = true;
      }
  }
  for (size_t i = 0; i < paths.size(); ++i)
    if (staged[i] != nullptr) results[i] = Commit(*staged[i], loaded);  // fails: names the missing op
  for (const Status& s : results) GR_RETURN_IF_ERROR(s);
  return Status::OK();
}

Status Runtime::LoadPlugin(const std::string& path) { return LoadPlugin(path, nullptr); }

Status Runtime::LoadPlugin(const std::string& path, PluginInfo* loaded) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->LoadAll({path}, loaded);
}

namespace {

// The lib*.so files of `dir`, sorted by name.
Status PluginFilesIn(const std::string& dir, std::vector<std::string>* files) {
  boost::system::error_code ec;
  if (!fs::is_directory(dir, ec)) return errors::NotFound("plugin directory '", dir, "' not found");
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".so" && p.filename().string().rfind("lib", 0) == 0) files->push_back(p.string());
  }
  if (ec) return errors::Unavailable("cannot list plugin directory '", dir, "': ", ec.message());
  std::sort(files->begin(), files->end());
  return Status::OK();
}

}  // namespace

Status Runtime::LoadPluginDirectory(const std::string& dir) {
  std::vector<std::string> files;
  GR_RETURN_IF_ERROR(PluginFilesIn(dir, &files));
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->LoadAll(files, nullptr);
}

std::string Runtime::DefaultPluginDirectory() {
  boost::system::error_code ec;
  fs::path lib = boost::dll::this_line_location(ec).string();
  return (lib.parent_path() / GRAPHRT_PLUGIN_RELDIR).string();
}

Status Runtime::LoadDefaultPlugins() {
  std::call_once(impl_->defaults_once, [this] {
    std::vector<std::string> dirs;
    boost::system::error_code ec;
    if (fs::is_directory(DefaultPluginDirectory(), ec)) dirs.push_back(DefaultPluginDirectory());
    if (const char* env = std::getenv("GRAPHRT_PLUGIN_PATH")) {
      std::string s = env;
      size_t start = 0;
      while (start <= s.size()) {
        size_t colon = s.find(':', start);
        std::string d = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!d.empty()) dirs.push_back(d);
        if (colon == std::string::npos) break;
        start = colon + 1;
      }
    }
    // One batch: a plugin's kernels may need ops of a plugin in another
    // directory of the path.
    Status first;
    std::vector<std::string> files;
    for (const std::string& d : dirs) {
      Status s = PluginFilesIn(d, &files);
      if (!s.ok() && first.ok()) first = s;
    }
    std::lock_guard<std::mutex> lock(impl_->mu);
    Status loaded = impl_->LoadAll(files, nullptr);
    impl_->defaults_status = first.ok() ? loaded : first;
  });
  return impl_->defaults_status;
}

std::vector<PluginInfo> Runtime::Plugins() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->plugins;
}

const OpRegistry& Runtime::ops() const { return impl_->ops; }
const KernelRegistry& Runtime::kernels() const { return impl_->kernels; }
DeviceRegistry& Runtime::devices() { return impl_->devices; }
const GraphPassRegistry& Runtime::graph_passes() const { return impl_->graph_passes; }
const GradientRegistry& Runtime::gradients() const { return impl_->gradients; }

}  // namespace graphrt
