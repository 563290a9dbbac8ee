// Which build of a plugin the loader picks: the newest x86-64 level this CPU
// runs, at or below GRAPHRT_PLUGIN_ISA, among the builds beside the file.
// The probe plugin (plugins/isa_probe_plugin.cc) has an x86-64 file and
// x86-64-v3 and -v4 builds, no -v2; its kernel reports the level it was
// compiled for. The CPU's level is read from /proc/cpuinfo's flags here,
// apart from the loader's CPUID checks. Each load runs in a fresh process
// (a death test exiting with the level it saw): a process loads a plugin
// once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graphrt/core/runtime.h"
#include "test_util.h"

namespace graphrt {
namespace {

const std::string kProbe = std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/libgraphrt_test_isa_probe.so";
const std::vector<std::string> kLevelNames = {"", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};

// The x86-64 level of this CPU (1 to 4) from the kernel's feature flags.
int CpuLevel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.insert(w);
    break;
  }
  auto has = [&](std::initializer_list<const char*> names) {
    return std::all_of(names.begin(), names.end(), [&](const char* n) { return flags.count(n) > 0; });
  };
  if (!has({"pni", "ssse3", "sse4_1", "sse4_2", "popcnt"})) return 1;
  if (!has({"avx", "avx2", "fma", "bmi1", "bmi2"})) return 2;
  if (!has({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})) return 3;
  return 4;
}

// The probe build the loader should pick with GRAPHRT_PLUGIN_ISA at `cap`.
int ExpectedProbeLevel(int cap) {
  const int runs = std::min(cap, CpuLevel());
  return runs >= 4 ? 4 : runs == 3 ? 3 : 1;  // no x86-64-v2 build
}

int RunProbe() {
  std::vector<Tensor> out;
  Status s = testing::TryRunGraph("node { name: 'level' op: 'TestIsaLevel' }", {}, {"level"}, &out);
  if (!s.ok()) {
    std::cerr << "run: " << s << "\n";
    return 0;
  }
  return out[0].data<int32_t>()[0];
}

// In a death-test child: loads the probe with GRAPHRT_PLUGIN_ISA set to
// `cap` (unset for nullptr) and exits with the level of the build that ran;
// 90 if the plugin list names another file than that build, 91 if loading
// failed, 92 if what LoadPlugin reported is not that build.
[[noreturn]] void LoadProbeAndExit(const char* cap) {
  if (cap != nullptr)
    setenv("GRAPHRT_PLUGIN_ISA", cap, 1);
  else
    unsetenv("GRAPHRT_PLUGIN_ISA");
  PluginInfo loaded;
  Status s = Runtime::Global().LoadPlugin(kProbe, &loaded);
  if (!s.ok()) {
    std::cerr << "load: " << s << "\n";
    std::_Exit(91);
  }
  const int level = RunProbe();
  std::string want_path = std::string(GRAPHRT_TEST_PLUGIN_DIR) + "/";
  if (level > 1) want_path += kLevelNames[level] + "/";
  want_path += "libgraphrt_test_isa_probe.so";
  // What the load reports is the build that runs, and so is the plugin list.
  if (loaded.name != "test_isa_probe" || loaded.path != want_path ||
      loaded.ops != std::vector<std::string>{"TestIsaLevel"}) {
    std::cerr << "LoadPlugin reported " << loaded.name << " at " << loaded.path << ", expected " << want_path << "\n";
    std::_Exit(92);
  }
  for (const PluginInfo& p : Runtime::Global().Plugins())
    if (p.name == "test_isa_probe" && p.path != want_path) {
      std::cerr << "loaded " << p.path << ", expected " << want_path << "\n";
      std::_Exit(90);
    }
  std::_Exit(level);
}

class PluginIsa : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process per load
    testing::LoadStandardPlugins();
  }
};

TEST_F(PluginIsa, LoadsTheNewestBuildTheCpuRuns) {
  EXPECT_EXIT(LoadProbeAndExit(nullptr), ::testing::ExitedWithCode(ExpectedProbeLevel(4)), "");
}

TEST_F(PluginIsa, GraphrtPluginIsaCapsTheLevel) {
  for (int cap = 1; cap <= 4; ++cap) {
    SCOPED_TRACE(kLevelNames[cap]);
    EXPECT_EXIT(LoadProbeAndExit(kLevelNames[cap].c_str()), ::testing::ExitedWithCode(ExpectedProbeLevel(cap)), "");
  }
}

TEST_F(PluginIsa, UnknownLevelIsRefusedByName) {
  setenv("GRAPHRT_PLUGIN_ISA", "avx9", 1);
  Status s = Runtime::Global().LoadPlugin(kProbe);
  unsetenv("GRAPHRT_PLUGIN_ISA");
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  for (const char* part : {"libgraphrt_test_isa_probe.so", "GRAPHRT_PLUGIN_ISA", "'avx9'", "x86-64, x86-64-v4"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " not in: " << s.message();
  // Nothing was loaded; the same load without the bad setting works.
  for (const PluginInfo& p : Runtime::Global().Plugins()) EXPECT_NE(p.name, "test_isa_probe");
  ASSERT_TRUE(Runtime::Global().LoadPlugin(kProbe).ok());
  EXPECT_EQ(RunProbe(), ExpectedProbeLevel(4));
  // Loading it again loads nothing and still says which plugin the file is.
  PluginInfo again;
  ASSERT_TRUE(Runtime::Global().LoadPlugin(kProbe, &again).ok());
  EXPECT_EQ(again.name, "test_isa_probe");
  EXPECT_EQ(again.ops, std::vector<std::string>{"TestIsaLevel"});
  EXPECT_NE(again.path.find("libgraphrt_test_isa_probe.so"), std::string::npos) << again.path;
}

#ifdef GRAPHRT_ISA_BUILDS
// The standard plugins with x86-64-v4 builds (ops/CMakeLists.txt, AVX512):
// the build exists, and the loaded one is it exactly where the CPU has
// AVX-512.
TEST_F(PluginIsa, StandardPluginsLoadTheirAvx512BuildOnlyWhereTheCpuRunsIt) {
  const bool v4 = CpuLevel() >= 4 && std::getenv("GRAPHRT_PLUGIN_ISA") == nullptr;
  int checked = 0;
  for (const PluginInfo& p : Runtime::Global().Plugins()) {
    const std::string file = "lib" + std::string("graphrt_") + p.name + ".so";
    const std::string v4_build = std::string(GRAPHRT_PLUGIN_BUILD_DIR) + "/x86-64-v4/" + file;
    if (!std::ifstream(v4_build).good()) continue;
    ++checked;
    EXPECT_EQ(p.path, v4 ? v4_build : std::string(GRAPHRT_PLUGIN_BUILD_DIR) + "/" + file);
  }
  EXPECT_GE(checked, 3);  // math, nn, training at least
}
#endif

}  // namespace
}  // namespace graphrt
