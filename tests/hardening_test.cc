// Hostile graphs and files, and the limits that keep a session safe from
// them. The inputs are the probe's reproducers (../shared/reliability), kept
// in the fuzz seed corpus (tests/fuzz/corpus): every one must end in a clean
// Status naming what is wrong, the process must stay small, and the session
// must keep working.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/npy.h"
#include "graphrt/core/session.h"
#include "graphrt/core/types.h"
#include "test_util.h"

namespace graphrt {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

std::string CorpusDir(const std::string& harness) {
  return std::string(GRAPHRT_SOURCE_DIR) + "/tests/fuzz/corpus/" + harness;
}

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t MaxRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

SessionOptions LimitedOptions(int64_t memory_limit, int threads = 1) {
  SessionOptions o = testing::OpTestOptions(threads);
  o.config.mutable_graphrt_options()->set_session_memory_limit_bytes(memory_limit);
  return o;
}

std::unique_ptr<Session> NewLimitedSession(int64_t memory_limit, int threads = 1) {
  std::unique_ptr<Session> s;
  EXPECT_TRUE(NewSession(LimitedOptions(memory_limit, threads), &s).ok());
  return s;
}

// Create + Run of a hostile graph: every node that nothing reads is
// fetched (or run as a target), Placeholders are fed a small tensor.
Status RunHostileGraph(const proto::GraphDef& g, Session* session) {
  GR_RETURN_IF_ERROR(session->Create(g));
  std::map<std::string, bool> read;
  for (const auto& n : g.node())
    for (const auto& in : n.input()) {
      std::string name = in[0] == '^' ? in.substr(1) : in.substr(0, in.find(':'));
      read[name] = true;
    }
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  for (const auto& n : g.node()) {
    if (n.op() == "Placeholder") feeds.emplace_back(n.name(), testing::MakeTensor<float>(GR_FLOAT, {2}, {1, 2}));
    else if (!read[n.name()]) fetches.push_back(n.name());
  }
  std::vector<Tensor> out;
  return session->Run(feeds, fetches, {}, &out);
}

class Hardening : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { testing::LoadStandardPlugins(); }
};

// Every graph reproducer of the probe (hand-written and fuzzer-found) gives
// a clean error; the process never comes near what they used to take.
TEST_F(Hardening, HostileGraphsGiveCleanErrors) {
  // What the hand-written ones must say.
  const std::map<std::string, std::pair<Code, std::string>> expected = {
      {"reliability_broadcastto_2p62.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_const_1e12_bad_alloc_escapes_Create.pbtxt", {Code::kResourceExhausted, "4000000000000 bytes"}},
      {"reliability_const_empty_vals_huge.pbtxt", {Code::kResourceExhausted, "4000000000000 bytes"}},
      {"reliability_const_2p61p1_double.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_const_2p62_float.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_const_string_2p62.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_dtype_enum_huge_const_tensor_stackoverflow.pbtxt",
       {Code::kInvalidArgument, "dtype value 53551684 is not a TensorFlow DataType"}},
      {"reliability_dtype_enum_huge_placeholder_inspect_stackoverflow.pbtxt",
       {Code::kInvalidArgument, "dtype value 10000000 is not a TensorFlow DataType"}},
      {"reliability_fill_2p61p1_double.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_fill_2p62_float.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_ubsan_const_c128_2p62.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_ubsan_const_enum_999.pbtxt", {Code::kInvalidArgument, "dtype value 999"}},
      {"reliability_ubsan_reshape_empty_huge.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_ubsan_reshape_overflow.pbtxt", {Code::kInvalidArgument, "more than 2^58 elements"}},
      {"reliability_ubsan_tensorproto_dtype_enum_out_of_range.pbtxt",
       {Code::kInvalidArgument, "dtype value 53551684"}},
      {"reliability_ubsan_tile_overflow.pbtxt", {Code::kInvalidArgument, "exceeds 2^58 elements"}},
  };
  int checked = 0, named = 0;
  for (const auto& entry : fs::directory_iterator(CorpusDir("fuzz_graph"))) {
    const std::string file = entry.path().filename().string();
    const bool hostile = file.rfind("reliability_", 0) == 0 || file.rfind("crash-", 0) == 0 ||
                         file.rfind("oom-", 0) == 0;
    if (!hostile) continue;
    SCOPED_TRACE(file);
    proto::GraphDef g;
    const std::string bytes = ReadBytes(entry.path());
    if (!g.ParseFromString(bytes)) {  // braces: ASSERT_TRUE is an if/else of its own
      ASSERT_TRUE(ParseGraphDefText(bytes, &g).ok());
    }
    std::unique_ptr<Session> s = NewLimitedSession(256 << 20);
    const Status st = RunHostileGraph(g, s.get());
    ++checked;
    // The Range at int32's limits (and the fuzzer's copies of it) is valid.
    if (file == "reliability_ubsan_range_int32_overflow.pbtxt" ||
        file == "crash-3111b046e7d96af9a77dcdd9baf36568e70b219c" ||
        file == "crash-c2d03ab41412ce1073aa4c800ce39e91424a223c") {
      EXPECT_TRUE(st.ok()) << st;  // a valid Range at int32's limits
      continue;
    }
    // zero_elem_huge_dims graphs need a fed tensor with huge dims: below.
    if (file.find("zero_elem_huge_dims") != std::string::npos) continue;
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(st.code() == Code::kInvalidArgument || st.code() == Code::kResourceExhausted) << st;
    if (st.message().find("Node '") != std::string::npos) ++named;
    auto want = expected.find(file);
    if (want != expected.end()) {
      EXPECT_EQ(st.code(), want->second.first) << st;
      EXPECT_NE(st.message().find(want->second.second), std::string::npos) << st;
      EXPECT_NE(st.message().find("Node '"), std::string::npos) << st;
    }
    // The session still runs a graph step after the failure (Extend adds one).
    if (st.code() == Code::kResourceExhausted) {
      ASSERT_TRUE(s->Extend(testing::ParseGraph(
                                "node { name: 'ok_after' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
                                " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 7 } } } }"))
                      .ok());
      std::vector<Tensor> out;
      ASSERT_TRUE(s->Run({}, {"ok_after"}, {}, &out).ok());
      EXPECT_EQ(out[0].scalar<int32_t>(), 7);
    }
  }
  EXPECT_GE(checked, 45);
  EXPECT_GE(named, 40);  // nearly all name a node (a few mutants fail to parse as one)
  // They used to take up to 16 GB; the limit was 256 MiB.
  EXPECT_LT(MaxRssBytes(), int64_t{1} << 30);
}

// The zero_elem_huge_dims graphs with their feed: an empty tensor whose
// other dims are huge. Its shape breaks the size rule, so the feed itself
// is refused, naming it.
TEST_F(Hardening, FeedsOutsideTheSizeRuleAreRefused) {
  for (const char* file : {"concat", "tile", "stridedslice", "maxpool"}) {
    SCOPED_TRACE(file);
    proto::GraphDef g;
    ASSERT_TRUE(ReadGraphDefFromFile(CorpusDir("fuzz_graph") + "/reliability_zero_elem_huge_dims_" + file + ".pbtxt", &g).ok());
    std::unique_ptr<Session> s = NewLimitedSession(256 << 20);
    if (std::string(file) == "maxpool") {  // its own Reshape to [0, 2^62, 2, 1] is refused first
      const Status st = s->Create(g);
      EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
      EXPECT_NE(st.message().find("Node 'p4' (op 'Reshape')"), std::string::npos) << st;
      continue;
    }
    ASSERT_TRUE(s->Create(g).ok());
    const Tensor huge(GR_FLOAT, TensorShape({0, int64_t{1} << 62, int64_t{1} << 62}));
    std::vector<Tensor> out;
    Status st = s->Run({{"p", huge}}, {"t"}, {}, &out);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
    EXPECT_NE(st.message().find("Feed 'p'"), std::string::npos) << st;
    // An empty feed inside the rule runs.
    st = s->Run({{"p", Tensor(GR_FLOAT, TensorShape({0, 1 << 20, 2}))}}, {"t"}, {}, &out);
    EXPECT_TRUE(st.ok()) << st;
  }
}

TEST_F(Hardening, HostileNpyFilesAreRefusedBeforeAllocating) {
  for (const char* file : {"reliability_npy_S0_2p62_segv.npy", "reliability_npy_S0_300M_elements_4.8GB_alloc.npy",
                           "reliability_npy_U0_2p62_segv.npy", "reliability_zero_dim_huge.npy",
                           "found_npy_S0_9.5M_elements_timeout.npy"}) {
    SCOPED_TRACE(file);
    Tensor t;
    const Status st = ReadNpy(CorpusDir("fuzz_npy") + "/" + file, &t);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st;
    EXPECT_NE(st.message().find(file), std::string::npos) << st;
  }
  EXPECT_LT(MaxRssBytes(), int64_t{1} << 30);
}

TEST(DataTypes, ValuesOutsideTheEnumAreRefusedWithoutRecursion) {
  DataType t;
  EXPECT_TRUE(ValidateDataType(1, false, "x", &t).ok());
  EXPECT_EQ(t, GR_FLOAT);
  EXPECT_TRUE(ValidateDataType(101, true, "x", &t).ok());
  EXPECT_EQ(t, GR_FLOAT_REF);
  struct Case {
    int64_t value;
    bool allow_ref;
    std::string message;
  } cases[] = {
      {0, false, "node 'n': dtype is DT_INVALID"},
      {24, false, "dtype DT_FLOAT8_E5M2 is not supported"},
      {133, true, "DT_FLOAT4_E2M1FN_REF is not supported"},
      {101, false, "DT_FLOAT_REF is a reference type"},
      {99, false, "dtype value 99 is not a TensorFlow DataType"},
      {1000000000, false, "dtype value 1000000000 is not a TensorFlow DataType"},
      {-5, false, "dtype value -5"},
      {int64_t{1} << 40, false, "dtype value 1099511627776"},
  };
  for (const Case& c : cases) {
    Status s = ValidateDataType(c.value, c.allow_ref, "node 'n'", &t);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.value;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
  }
  // Names of any value, in constant depth (once recursive per 100).
  EXPECT_EQ(DataTypeValueName(2000000000), "2000000000 (not a TensorFlow DataType)");
  EXPECT_EQ(DataTypeValueName(119), "DT_HALF_REF");
  EXPECT_EQ(DataTypeString(GR_HALF_REF), "half_ref");
}

std::string OneHotAndStitchGraph() {
  auto int_const = [](const std::string& name, const std::string& shape, const std::string& values) {
    return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
           "'value' value { tensor { dtype: DT_INT32 tensor_shape { " + shape + " } " + values + " } } } }";
  };
  auto float_const = [](const std::string& name, float v) {
    return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
           "'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: " +
           std::to_string(v) + " } } } }";
  };
  return int_const("idx", "dim { size: 1 }", "int_val: 1") + int_const("big_depth", "", "int_val: 2000000000") +
         int_const("depth", "", "int_val: 4") + int_const("far", "dim { size: 1 }", "int_val: 2000000000") +
         "node { name: 'on' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value {"
         " tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }"
         "node { name: 'off' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value {"
         " tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } } }" +
         float_const("data", 5) +
         "node { name: 'huge_onehot' op: 'OneHot' input: 'idx' input: 'big_depth' input: 'on' input: 'off' "
         "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'TI' value { type: DT_INT32 } } }"
         "node { name: 'onehot' op: 'OneHot' input: 'idx' input: 'depth' input: 'on' input: 'off' "
         "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'TI' value { type: DT_INT32 } } }"
         "node { name: 'huge_stitch' op: 'DynamicStitch' input: 'far' input: 'data' "
         "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 1 } } }";
}

// A graph asking for more than the session's memory limit gets
// ResourceExhausted naming the node and the sizes; the session goes on.
TEST_F(Hardening, MemoryBudgetRefusesWhatAGraphCannotHave) {
  std::unique_ptr<Session> s = NewLimitedSession(64 << 20);
  ASSERT_TRUE(s->Create(testing::ParseGraph(OneHotAndStitchGraph())).ok());
  std::vector<Tensor> out;
  for (int round = 0; round < 2; ++round) {
    Status st = s->Run({}, {"huge_onehot"}, {}, &out);
    EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
    EXPECT_NE(st.message().find("Node 'huge_onehot' (op 'OneHot')"), std::string::npos) << st;
    EXPECT_NE(st.message().find("[1,2000000000] (8000000000 bytes)"), std::string::npos) << st;
    EXPECT_NE(st.message().find("memory limit is 64.00 MiB"), std::string::npos) << st;
    st = s->Run({}, {"huge_stitch"}, {}, &out);
    EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
    EXPECT_NE(st.message().find("Node 'huge_stitch' (op 'DynamicStitch')"), std::string::npos) << st;
    EXPECT_NE(st.message().find("[2000000001] (8000000004 bytes)"), std::string::npos) << st;
    ASSERT_TRUE(s->Run({}, {"onehot"}, {}, &out).ok());
    EXPECT_EQ(testing::ToVector<float>(out[0]), (std::vector<float>{0, 1, 0, 0}));
  }
}

// A string Const declaring millions of elements: with no values they are
// empty strings (one memset, no per-element work); with one long value
// repeated (TensorFlow's rule) the copies are checked against the budget
// before any is made.
TEST_F(Hardening, StringConstsRepeatingValuesStayInTheBudget) {
  auto string_const = [](const std::string& name, int64_t n, const std::string& value) {
    return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } "
           "attr { key: 'value' value { tensor { dtype: DT_STRING tensor_shape { dim { size: " + std::to_string(n) +
           " } } " + (value.empty() ? "" : "string_val: '" + value + "' ") + "} } } }\n";
  };
  const std::string long_value(1000, 'x');
  std::unique_ptr<Session> big = NewLimitedSession(256 << 20);
  Status st = big->Create(testing::ParseGraph(string_const("big", 1000000, long_value)));
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  EXPECT_NE(st.message().find("999999 copies of a 1000-byte string (999999000 bytes)"), std::string::npos) << st;
  EXPECT_NE(st.message().find("Node 'big'"), std::string::npos) << st;
  std::unique_ptr<Session> s = NewLimitedSession(256 << 20);
  Status created = s->Create(testing::ParseGraph(string_const("empty", 5000000, "") + string_const("small", 3, "ab")));
  ASSERT_TRUE(created.ok()) << created;
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"empty"}, {}, &out).ok());
  EXPECT_EQ(out[0].NumElements(), 5000000);
  EXPECT_EQ(out[0].string_at(4999999), "");
  ASSERT_TRUE(s->Run({}, {"small"}, {}, &out).ok());
  EXPECT_EQ(out[0].string_at(0), "ab");
  EXPECT_EQ(out[0].string_at(2), "ab");
}

// The budget counts live tensors: fetched outputs hold their bytes until
// they are freed, even after the session is gone.
TEST_F(Hardening, MemoryBudgetCountsLiveTensorsOnly) {
  // 1M floats = 4 MiB per run; limit 10 MiB.
  const std::string graph =
      "node { name: 'dims' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value {"
      " tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 1048576 } } } }"
      "node { name: 'v' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value {"
      " tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }"
      "node { name: 'f' op: 'Fill' input: 'dims' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }";
  // opt_level L0: constant folding would make f a Const whose one buffer
  // every Run returns.
  SessionOptions options = LimitedOptions(10 << 20);
  options.config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(proto::OptimizerOptions::L0);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(options, &s).ok());
  ASSERT_TRUE(s->Create(testing::ParseGraph(graph)).ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(s->Run({}, {"f"}, {}, &out).ok()) << i;  // each run frees the last
  std::vector<Tensor> kept = std::move(out), second;  // 4 MiB live
  out.clear();
  ASSERT_TRUE(s->Run({}, {"f"}, {}, &second).ok());  // 8 MiB live
  Status st = s->Run({}, {"f"}, {}, &out);           // a third 4 MiB does not fit
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st;
  kept.clear();
  ASSERT_TRUE(s->Run({}, {"f"}, {}, &out).ok());
  s.reset();  // the tensors outlive the session
  EXPECT_EQ(out[0].NumElements(), 1 << 20);
  EXPECT_EQ(out[0].data<float>()[(1 << 20) - 1], 3.0f);
  EXPECT_EQ(second[0].data<float>()[0], 3.0f);
}

std::string NineConstsGraph() {
  std::string g;
  for (int i = 0; i < 9; ++i)
    g += "node { name: 'c" + std::to_string(i) + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
         "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: " + std::to_string(i) +
         " } } } }";
  return g +
         "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }"
         "node { name: 'b' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }"
         "node { name: 'd' op: 'Sub' input: 'a' input: 'b' attr { key: 'T' value { type: DT_INT32 } } }";
}

// Every ordering of one signature shares one executor, results follow the
// caller's order, and the cache is bounded: 20,000 orderings of 9 fetches
// used to keep 20,000 executors (+310 MB).
TEST_F(Hardening, ExecutorCacheIsKeyedBySortedSignatureAndBounded) {
  SessionOptions o = LimitedOptions(256 << 20);
  o.config.mutable_graphrt_options()->set_executor_cache_capacity(4);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(NewSession(o, &s).ok());
  ASSERT_TRUE(s->Create(testing::ParseGraph(NineConstsGraph())).ok());
  std::vector<std::string> names;
  for (int i = 0; i < 9; ++i) names.push_back("c" + std::to_string(i));
  std::mt19937 rng(7);
  std::vector<Tensor> out;
  const int64_t rss_before = MaxRssBytes();
  for (int round = 0; round < 20000; ++round) {
    std::shuffle(names.begin(), names.end(), rng);
    // Every fifth round a subset, so the LRU also evicts.
    const size_t n = round % 5 == 0 ? 1 + round % 9 : 9;
    std::vector<std::string> fetch(names.begin(), names.begin() + n);
    ASSERT_TRUE(s->Run({}, fetch, {}, &out).ok());
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i].scalar<int32_t>(), fetch[i][1] - '0') << fetch[i];
  }
  // (ASan's quarantine keeps freed memory resident; the bound is measured
  // in the plain build.)
  if (!kAddressSanitizer) {
    EXPECT_LT(MaxRssBytes() - rss_before, int64_t{64} << 20);
  }
  // Feeds in either order, a duplicated fetch, and fed-and-fetched tensors.
  const Tensor a = testing::MakeTensor<int32_t>(GR_INT32, {}, {10}), b = testing::MakeTensor<int32_t>(GR_INT32, {}, {3});
  ASSERT_TRUE(s->Run({{"a", a}, {"b", b}}, {"d", "b", "d"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 7);
  EXPECT_EQ(out[1].scalar<int32_t>(), 3);
  EXPECT_EQ(out[2].scalar<int32_t>(), 7);
  ASSERT_TRUE(s->Run({{"b", b}, {"a", a}}, {"b", "d"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 3);
  EXPECT_EQ(out[1].scalar<int32_t>(), 7);
}

int StressRuns() {
  const char* env = std::getenv("GRAPHRT_STRESS_RUNS");  // e.g. 10000 for the long version
  return env ? std::max(1, std::atoi(env)) : 300;
}

// Many threads on one session, bit-exact against one thread; Extend and the
// cache churn meanwhile.
TEST_F(Hardening, ConcurrentRunsAreBitExact) {
  proto::GraphDef g;
  ASSERT_TRUE(ReadGraphDefFromFile(std::string(GRAPHRT_SOURCE_DIR) + "/examples/graphs/mlp.pbtxt", &g).ok());
  std::unique_ptr<Session> s = testing::CreateSession(g, 2);
  ASSERT_NE(s, nullptr);
  auto input = [](int i) {
    return testing::MakeTensor<float>(GR_FLOAT, {2, 3}, {float(i % 7), 1.5f, -2.0f, 0.25f * i, 3.0f, float(i % 3)});
  };
  std::vector<std::vector<float>> reference;
  for (int i = 0; i < 16; ++i) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", input(i)}}, {"probs"}, {}, &out).ok());
    reference.push_back(testing::ToVector<float>(out[0]));
  }
  const int runs = StressRuns();
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<Tensor> out;
      for (int r = 0; r < runs; ++r) {
        const int i = (t * 31 + r) % 16;
        // Alternate two fetch orders of one signature.
        const bool swapped = r % 2;
        std::vector<std::string> fetch = swapped ? std::vector<std::string>{"x", "probs"}
                                                 : std::vector<std::string>{"probs", "x"};
        if (!s->Run({{"x", input(i)}}, fetch, {}, &out).ok()) {
          ++failures;
          continue;
        }
        if (testing::ToVector<float>(out[swapped ? 1 : 0]) != reference[i]) ++mismatches;
      }
    });
  for (int e = 0; e < 20; ++e) {
    const std::string name = "extra" + std::to_string(e);
    ASSERT_TRUE(s->Extend(testing::ParseGraph("node { name: '" + name + "' op: 'Identity' input: 'probs' "
                                              "attr { key: 'T' value { type: DT_FLOAT } } }"))
                    .ok());
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Close during Runs: in-progress Runs end OK or CANCELLED, Close returns
// after them, and the session can then be destroyed.
TEST_F(Hardening, CloseWaitsForRunsInProgress) {
  proto::GraphDef g;
  ASSERT_TRUE(ReadGraphDefFromFile(std::string(GRAPHRT_SOURCE_DIR) + "/examples/graphs/mlp.pbtxt", &g).ok());
  for (int trial = 0; trial < 5; ++trial) {
    std::unique_ptr<Session> s = testing::CreateSession(g, 2);
    ASSERT_NE(s, nullptr);
    std::atomic<int> other{0}, cancelled{0}, started{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        std::vector<Tensor> out;
        while (!stop.load()) {
          ++started;
          Status st = s->Run({}, {"probs"}, {}, &out);
          if (st.code() == Code::kCancelled) ++cancelled;
          else if (!st.ok()) ++other;
        }
      });
    while (started.load() < 50) std::this_thread::yield();
    ASSERT_TRUE(s->Close().ok());
    std::vector<Tensor> out;
    Status after = s->Run({}, {"probs"}, {}, &out);
    EXPECT_EQ(after.code(), Code::kCancelled);
    EXPECT_NE(after.message().find("Session has been closed."), std::string::npos);
    // Let a worker reach a Run after Close: on a loaded machine they may all
    // be descheduled until `stop`, and Close lets Runs in progress finish.
    while (cancelled.load() == 0) std::this_thread::yield();
    stop = true;
    for (auto& th : threads) th.join();
    s.reset();
    EXPECT_EQ(other.load(), 0);
    EXPECT_GT(cancelled.load(), 0);
  }
}

}  // namespace
}  // namespace graphrt
