// Random ops: RandomUniform, RandomUniformInt, RandomStandardNormal,
// TruncatedNormal, RandomShuffle, Multinomial.
//
// Exact values: TensorFlow's published outputs (tf_behaviours.md section
// 12, reference vectors) and Random123's Philox4x32-10 known answers.
// Stream positions (which sample each output and each Run uses) are checked
// against a reference Philox written here from the published round
// description, independently of ops/random/philox.h. Seeds, stream
// continuation across Runs, concurrent Runs, thread-count independence,
// statistics with fixed seeds (bounds derived in the comments) and every
// error path are covered.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../ops/random/philox.h"
#include "graphrt/core/graph_def_io.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT

// ====================================================== reference Philox

// Philox4x32-10 as Random123 defines it: 10 rounds of two 32x32->64
// multiplies, the key bumped by the Weyl constants between rounds.
std::array<uint32_t, 4> RefPhilox(std::array<uint32_t, 4> c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    const uint64_t a = 0xD2511F53ull * c[0];
    const uint64_t b = 0xCD9E8D57ull * c[2];
    c = {uint32_t(b >> 32) ^ c[1] ^ k0, uint32_t(b), uint32_t(a >> 32) ^ c[3] ^ k1, uint32_t(a)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// Word `w` (0-3) of sample `index` of TensorFlow's stream for (seed, seed2):
// key = seed, counter = (index as the low 64 bits, seed2 as the high 64).
uint32_t RefWord(uint64_t seed, uint64_t seed2, uint64_t index, int w) {
  return RefPhilox({uint32_t(index), uint32_t(index >> 32), uint32_t(seed2), uint32_t(seed2 >> 32)}, uint32_t(seed),
                   uint32_t(seed >> 32))[w];
}

// Word `i` of the stream read one word at a time from sample `first`.
uint32_t RefSeqWord(uint64_t seed, uint64_t seed2, uint64_t first, uint64_t i) {
  return RefWord(seed, seed2, first + i / 4, static_cast<int>(i % 4));
}

double RefUniform01(uint32_t x) { return static_cast<double>(x & 0x7FFFFF) / 8388608.0; }  // 23 bits / 2^23
double RefUniform01Double(uint32_t hi, uint32_t lo) {
  return (static_cast<double>(hi & 0xFFFFF) * 4294967296.0 + lo) / 4503599627370496.0;  // 52 bits / 2^52
}
// Box-Muller in double on two float-precision uniforms.
std::pair<double, double> RefBoxMuller(uint32_t x0, uint32_t x1) {
  const double u1 = std::max(RefUniform01(x0), 1e-7);
  const double r = std::sqrt(-2.0 * std::log(u1)), v = 2.0 * M_PI * RefUniform01(x1);
  return {std::sin(v) * r, std::cos(v) * r};
}

TEST(PhiloxTest, Random123KnownAnswers) {
  // Random123's kat_vectors for philox4x32 with 10 rounds.
  struct Kat {
    std::array<uint32_t, 4> ctr;
    std::array<uint32_t, 2> key;
    std::array<uint32_t, 4> want;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    EXPECT_EQ(RefPhilox(k.ctr, k.key[0], k.key[1]), k.want);
    // The plugin's generator: key from seed, counter words 2-3 from seed2,
    // words 0-1 by skipping ahead.
    const uint64_t seed = k.key[0] | (uint64_t{k.key[1]} << 32);
    const uint64_t seed2 = k.ctr[2] | (uint64_t{k.ctr[3]} << 32);
    sdk::random::Philox4x32 g(seed, seed2);
    g.Skip(k.ctr[0] | (uint64_t{k.ctr[1]} << 32));
    EXPECT_EQ(g(), k.want);
  }
  // Skip carries across all four counter words.
  sdk::random::Philox4x32 g(0, 0xFFFFFFFFFFFFFFFFull);
  g.Skip(~uint64_t{0});
  g.Skip(1);
  EXPECT_EQ(g.counter(), (std::array<uint32_t, 4>{0, 0, 0, 0}));
}

// ========================================================= graph helpers

std::string IntAttrText(const std::string& key, int64_t v) {
  return "attr { key: \"" + key + "\" value { i: " + std::to_string(v) + " } } ";
}

std::string Seeds(int64_t seed, int64_t seed2) { return IntAttrText("seed", seed) + IntAttrText("seed2", seed2); }

std::string DtName(DataType dt) {
  switch (dt) {
    case GR_FLOAT: return "DT_FLOAT";
    case GR_DOUBLE: return "DT_DOUBLE";
    case GR_HALF: return "DT_HALF";
    case GR_BFLOAT16: return "DT_BFLOAT16";
    case GR_INT32: return "DT_INT32";
    case GR_INT64: return "DT_INT64";
    case GR_STRING: return "DT_STRING";
    case GR_UINT8: return "DT_UINT8";
    default: return "DT_INVALID";
  }
}

std::string ShapeConst(const std::string& name, const Dims& dims) {
  std::vector<int32_t> v(dims.begin(), dims.end());
  return ConstInt32(name, v);
}

// shape Const + one RandomUniform / RandomStandardNormal / TruncatedNormal.
std::string RealGraph(const std::string& op, const Dims& dims, DataType dt, int64_t seed, int64_t seed2,
                      const std::string& name = "r") {
  return ShapeConst(name + "_shape", dims) +
         NodeText(name, op, {name + "_shape"},
                  Seeds(seed, seed2) + TypeAttr("dtype", DtName(dt)) + TypeAttr("T", "DT_INT32"));
}

std::string IntGraph(const Dims& dims, DataType dt, int64_t lo, int64_t hi, int64_t seed, int64_t seed2) {
  const std::string val = dt == GR_INT32 ? "int_val" : "int64_val";
  return ShapeConst("shape", dims) + ConstNode("lo", DtName(dt), {}, val, {std::to_string(lo)}) +
         ConstNode("hi", DtName(dt), {}, val, {std::to_string(hi)}) +
         NodeText("r", "RandomUniformInt", {"shape", "lo", "hi"},
                  Seeds(seed, seed2) + TypeAttr("Tout", DtName(dt)) + TypeAttr("T", "DT_INT32"));
}

std::string ShuffleGraph(DataType dt, int64_t seed, int64_t seed2) {
  return PlaceholderNode("x", DtName(dt)) +
         NodeText("r", "RandomShuffle", {"x"}, Seeds(seed, seed2) + TypeAttr("T", DtName(dt)));
}

std::string MultinomialGraph(DataType dt, int64_t seed, int64_t seed2, DataType out = GR_INT64) {
  return PlaceholderNode("logits", DtName(dt)) + PlaceholderNode("n", "DT_INT32") +
         NodeText("r", "Multinomial", {"logits", "n"},
                  Seeds(seed, seed2) + TypeAttr("T", DtName(dt)) + TypeAttr("output_dtype", DtName(out)));
}

// Runs `fetch` `runs` times in one session; the outputs in order.
std::vector<Tensor> RunRepeatedly(const std::string& pbtxt, int runs, const Feeds& feeds = {},
                                  const std::string& fetch = "r:0", int threads = 2) {
  std::vector<Tensor> all;
  std::unique_ptr<Session> s = CreateSession(ParseGraph(pbtxt), threads);
  if (!s) return all;
  for (int i = 0; i < runs; ++i) {
    std::vector<Tensor> out;
    Status st = s->Run(feeds, {fetch}, {}, &out);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) break;
    all.push_back(out[0]);
  }
  return all;
}

Tensor RunOnce(const std::string& pbtxt, const Feeds& feeds = {}, int threads = 2) {
  std::vector<Tensor> out = RunRepeatedly(pbtxt, 1, feeds, "r:0", threads);
  return out.empty() ? Tensor() : out[0];
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0);
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype()) {
      case GR_FLOAT: v[i] = t.data<float>()[i]; break;
      case GR_DOUBLE: v[i] = t.data<double>()[i]; break;
      case GR_INT32: v[i] = t.data<int32_t>()[i]; break;
      case GR_INT64: v[i] = static_cast<double>(t.data<int64_t>()[i]); break;
      case GR_HALF: {
        // IEEE binary16 -> double (normal and subnormal values; no inf/NaN here).
        const uint16_t h = t.data<uint16_t>()[i];
        const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
        const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
        v[i] = (h & 0x8000) ? -mag : mag;
        break;
      }
      case GR_BFLOAT16: {
        const uint32_t bits = static_cast<uint32_t>(t.data<uint16_t>()[i]) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        v[i] = f;
        break;
      }
      default: ADD_FAILURE() << "dtype " << t.dtype();
    }
  }
  return v;
}

void MeanVar(const std::vector<double>& v, double* mean, double* var) {
  double s = 0, s2 = 0;
  for (double x : v) s += x;
  *mean = s / v.size();
  for (double x : v) s2 += (x - *mean) * (x - *mean);
  *var = s2 / v.size();
}

// TF1's attrs for tf.random_*(..., seed=1) without a graph seed.
constexpr int64_t kGraphSeed = 87654321;

// Whether `got` is the float32 that TensorFlow printed as `printed`: its
// shortest round-trip form, or that form cut to numpy's 8 decimals (values
// below 0.1 need more digits than 8 decimals hold).
::testing::AssertionResult IsPrinted(float got, double printed) {
  if (got == static_cast<float>(printed) || std::fabs(static_cast<double>(got) - printed) <= 5e-9)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::setprecision(10) << got << " is not " << printed;
}

// ================================================ TensorFlow's vectors

TEST(RandomUniformTest, MatchesTensorFlow) {
  const Tensor t = RunOnce(RealGraph("RandomUniform", {8}, GR_FLOAT, kGraphSeed, 1));
  ASSERT_EQ(DimsOf(t), Dims({8}));
  const std::vector<double> want = {0.2390374, 0.92039955, 0.05051243, 0.49574447,
                                    0.8355223, 0.02647042, 0.08811307, 0.4566604};
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(IsPrinted(t.data<float>()[i], want[i])) << i;
  // A [1] op's second execution starts 256 samples on (N * 256, N = 1).
  const std::vector<Tensor> runs = RunRepeatedly(RealGraph("RandomUniform", {1}, GR_FLOAT, kGraphSeed, 1), 2);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(IsPrinted(runs[0].data<float>()[0], 0.2390374));
  EXPECT_TRUE(IsPrinted(runs[1].data<float>()[0], 0.22267115));
}

TEST(RandomStandardNormalTest, MatchesTensorFlow) {
  const Tensor t = RunOnce(RealGraph("RandomStandardNormal", {10}, GR_FLOAT, kGraphSeed, 1));
  const std::vector<double> want = {-0.8113182, 1.4845988,  0.06532937, -2.4427042,  0.0992484,
                                    0.5912243,  0.59282297, -2.1229296, -0.72289723, -0.05627038};
  ASSERT_EQ(t.NumElements(), 10);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(IsPrinted(t.data<float>()[i], want[i])) << i;
}

TEST(TruncatedNormalTest, MatchesDerivedVector) {
  // Derived from TensorFlow's rules, not checked against TensorFlow itself:
  // the normals above with -2.4427042 and -2.1229296 rejected.
  const Tensor t = RunOnce(RealGraph("TruncatedNormal", {8}, GR_FLOAT, kGraphSeed, 1));
  const std::vector<double> want = {-0.8113182, 1.4845988, 0.06532937, 0.0992484,
                                    0.63969707, 1.6108712, 0.16353562, -1.5157056};
  ASSERT_EQ(t.NumElements(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(IsPrinted(t.data<float>()[i], want[i])) << i;
}

TEST(RandomUniformIntTest, MatchesDerivedVector) {
  const Tensor t = RunOnce(IntGraph({8}, GR_INT32, 0, 10, kGraphSeed, 1));
  EXPECT_EQ(ToVector<int32_t>(t), std::vector<int32_t>({7, 9, 3, 2, 7, 4, 6, 3}));
}

// ======================================= stream positions, every dtype

TEST(RandomUniformTest, StreamPositionsAllDtypes) {
  const uint64_t seed = 7, seed2 = 123456789012345ull;
  const int64_t n = 11;  // not a multiple of the group size: a short last group
  for (DataType dt : {GR_FLOAT, GR_DOUBLE, GR_HALF, GR_BFLOAT16}) {
    SCOPED_TRACE(DtName(dt));
    const std::vector<Tensor> runs = RunRepeatedly(RealGraph("RandomUniform", {n}, dt, seed, seed2), 3);
    ASSERT_EQ(runs.size(), 3u);
    for (int run = 0; run < 3; ++run) {
      const uint64_t base = static_cast<uint64_t>(run) * n * 256;  // N * 256 samples per Run
      const std::vector<double> got = AsDoubles(runs[run]);
      for (int64_t i = 0; i < n; ++i) {
        double want;
        if (dt == GR_DOUBLE) {  // two per sample: words (0,1) and (2,3)
          const uint64_t s = base + i / 2;
          const int w = static_cast<int>(i % 2) * 2;
          want = RefUniform01Double(RefWord(seed, seed2, s, w), RefWord(seed, seed2, s, w + 1));
        } else {  // four per sample, one word each, low 23/10/7 bits
          const uint32_t x = RefWord(seed, seed2, base + i / 4, static_cast<int>(i % 4));
          want = dt == GR_FLOAT ? RefUniform01(x) : dt == GR_HALF ? (x & 0x3FF) / 1024.0 : (x & 0x7F) / 128.0;
        }
        EXPECT_EQ(got[i], want) << "run " << run << " element " << i;
      }
    }
  }
}

TEST(RandomStandardNormalTest, StreamPositionsAllDtypes) {
  const uint64_t seed = 99, seed2 = 5;
  const int64_t n = 7;
  for (DataType dt : {GR_FLOAT, GR_HALF, GR_BFLOAT16}) {
    SCOPED_TRACE(DtName(dt));
    const std::vector<Tensor> runs = RunRepeatedly(RealGraph("RandomStandardNormal", {n}, dt, seed, seed2), 2);
    ASSERT_EQ(runs.size(), 2u);
    const double tol = dt == GR_FLOAT ? 1e-5 : dt == GR_HALF ? 2e-3 : 1.6e-2;  // relative rounding of the dtype
    for (int run = 0; run < 2; ++run) {
      const std::vector<double> got = AsDoubles(runs[run]);
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t s = static_cast<uint64_t>(run) * n * 256 + i / 4;
        const int pair = static_cast<int>(i % 4) / 2;
        const auto bm = RefBoxMuller(RefWord(seed, seed2, s, 2 * pair), RefWord(seed, seed2, s, 2 * pair + 1));
        const double want = i % 2 == 0 ? bm.first : bm.second;
        EXPECT_NEAR(got[i], want, tol * std::max(1.0, std::fabs(want))) << "run " << run << " element " << i;
      }
    }
  }
  // double: one Box-Muller pair per sample from four words.
  const std::vector<Tensor> runs = RunRepeatedly(RealGraph("RandomStandardNormal", {5}, GR_DOUBLE, seed, seed2), 2);
  ASSERT_EQ(runs.size(), 2u);
  for (int run = 0; run < 2; ++run) {
    for (int64_t i = 0; i < 5; ++i) {
      const uint64_t s = static_cast<uint64_t>(run) * 5 * 256 + i / 2;
      const double u1 = std::max(RefUniform01Double(RefWord(seed, seed2, s, 0), RefWord(seed, seed2, s, 1)), 1e-7);
      const double u2 = RefUniform01Double(RefWord(seed, seed2, s, 2), RefWord(seed, seed2, s, 3));
      const double r = std::sqrt(-2.0 * std::log(u1)), v = 2.0 * M_PI * u2;
      const double want = i % 2 == 0 ? std::sin(v) * r : std::cos(v) * r;
      EXPECT_NEAR(runs[run].data<double>()[i], want, 1e-12) << "run " << run << " element " << i;
    }
  }
}

// Truncated normal group g (4 floats) reads words one at a time from
// sample base + 256 g, keeping Box-Muller results with |x| < 2.
std::vector<double> RefTruncatedFloat(uint64_t seed, uint64_t seed2, uint64_t base, int64_t n) {
  std::vector<double> out;
  for (int64_t g = 0; static_cast<int64_t>(out.size()) < n; ++g) {
    std::vector<double> group;
    for (uint64_t w = 0; group.size() < 4; w += 2) {
      const uint64_t first = base + 256 * static_cast<uint64_t>(g);
      const auto bm = RefBoxMuller(RefSeqWord(seed, seed2, first, w), RefSeqWord(seed, seed2, first, w + 1));
      for (double v : {bm.first, bm.second})
        if (std::fabs(v) < 2.0 && group.size() < 4) group.push_back(v);
    }
    for (double v : group)
      if (static_cast<int64_t>(out.size()) < n) out.push_back(v);
  }
  return out;
}

TEST(TruncatedNormalTest, StreamPositions) {
  const uint64_t seed = 3, seed2 = 4;
  const int64_t n = 4001;  // 1001 groups: many contain rejections
  const std::vector<Tensor> runs = RunRepeatedly(RealGraph("TruncatedNormal", {n}, GR_FLOAT, seed, seed2), 2);
  ASSERT_EQ(runs.size(), 2u);
  for (int run = 0; run < 2; ++run) {
    const std::vector<double> want = RefTruncatedFloat(seed, seed2, static_cast<uint64_t>(run) * n * 256, n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(runs[run].data<float>()[i], want[i], 1e-5) << "run " << run << " element " << i;
  }
}

TEST(RandomUniformIntTest, StreamPositionsBothDtypes) {
  const uint64_t seed = 11, seed2 = 12;
  // int32: lo + word mod (hi - lo), the range as unsigned (it exceeds
  // INT32_MAX here).
  const int64_t lo32 = -2000000000, hi32 = 2000000000;
  std::vector<Tensor> runs = RunRepeatedly(IntGraph({6}, GR_INT32, lo32, hi32, seed, seed2), 2);
  ASSERT_EQ(runs.size(), 2u);
  for (int run = 0; run < 2; ++run)
    for (int64_t i = 0; i < 6; ++i) {
      const uint32_t x = RefWord(seed, seed2, static_cast<uint64_t>(run) * 6 * 256 + i / 4, static_cast<int>(i % 4));
      EXPECT_EQ(runs[run].data<int32_t>()[i], lo32 + static_cast<int64_t>(x % 4000000000u)) << run << " " << i;
    }
  // int64: two words per value, the first as the low half.
  const int64_t lo64 = -5, hi64 = int64_t{1} << 40;
  runs = RunRepeatedly(IntGraph({5}, GR_INT64, lo64, hi64, seed, seed2), 2);
  ASSERT_EQ(runs.size(), 2u);
  for (int run = 0; run < 2; ++run)
    for (int64_t i = 0; i < 5; ++i) {
      const uint64_t s = static_cast<uint64_t>(run) * 5 * 256 + i / 2;
      const int w = static_cast<int>(i % 2) * 2;
      const uint64_t x = RefWord(seed, seed2, s, w) | (uint64_t{RefWord(seed, seed2, s, w + 1)} << 32);
      EXPECT_EQ(runs[run].data<int64_t>()[i], lo64 + static_cast<int64_t>(x % static_cast<uint64_t>(hi64 - lo64)));
    }
  // The full int64 range minus one: hi - lo overflows int64 but not uint64.
  const Tensor t = RunOnce(IntGraph({64}, GR_INT64, INT64_MIN, INT64_MAX, seed, seed2));
  for (int64_t i = 0; i < 64; ++i) EXPECT_LT(t.data<int64_t>()[i], INT64_MAX);
}

// ================================================================ seeds

TEST(RandomSeedTest, SameSeedsSameValuesAcrossSessions) {
  for (const std::string op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    const std::string g = RealGraph(op, {3, 5}, GR_FLOAT, 42, 7);
    const std::vector<Tensor> a = RunRepeatedly(g, 2), b = RunRepeatedly(g, 2, {}, "r:0", 1);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_TRUE(SameBytes(a[0], b[0])) << op;  // a fresh session restarts the stream
    EXPECT_TRUE(SameBytes(a[1], b[1])) << op;
    EXPECT_FALSE(SameBytes(a[0], a[1])) << op;  // successive Runs continue it
    EXPECT_EQ(DimsOf(a[0]), Dims({3, 5}));
  }
}

TEST(RandomSeedTest, DifferentSeedsDiffer) {
  const Tensor base = RunOnce(RealGraph("RandomUniform", {16}, GR_FLOAT, 42, 7));
  for (auto [s1, s2] : std::vector<std::pair<int64_t, int64_t>>{{43, 7}, {42, 8}, {7, 42}, {0, 7}, {42, 0}}) {
    const Tensor other = RunOnce(RealGraph("RandomUniform", {16}, GR_FLOAT, s1, s2));
    int equal = 0;
    for (int i = 0; i < 16; ++i) equal += base.data<float>()[i] == other.data<float>()[i];
    EXPECT_LE(equal, 1) << s1 << "," << s2;  // independent streams: ties have p ~ 2^-23 each
  }
}

TEST(RandomSeedTest, ZeroSeedsAreNondeterministic) {
  // Two identical unseeded ops in one graph are not merged and differ
  // (TensorFlow's testNoCSE); a second session draws new keys.
  const std::string g = RealGraph("RandomUniform", {16}, GR_FLOAT, 0, 0, "a") +
                        RealGraph("RandomUniform", {16}, GR_FLOAT, 0, 0, "b");
  std::unique_ptr<Session> s1 = CreateSession(ParseGraph(g), 2), s2 = CreateSession(ParseGraph(g), 2);
  std::vector<Tensor> o1, o2;
  ASSERT_TRUE(s1->Run({}, {"a:0", "b:0"}, {}, &o1).ok());
  ASSERT_TRUE(s2->Run({}, {"a:0", "b:0"}, {}, &o2).ok());
  EXPECT_FALSE(SameBytes(o1[0], o1[1]));
  EXPECT_FALSE(SameBytes(o1[0], o2[0]));
  EXPECT_FALSE(SameBytes(o1[1], o2[1]));
  // A node without the attrs takes the OpDef defaults (0, 0): random too.
  const std::string no_attrs = ShapeConst("shape", {16}) +
                               NodeText("c", "RandomUniform", {"shape"}, TypeAttr("dtype", "DT_FLOAT") + TypeAttr("T", "DT_INT32"));
  std::vector<Tensor> o4, o5;
  ASSERT_TRUE(CreateSession(ParseGraph(no_attrs), 1)->Run({}, {"c:0"}, {}, &o4).ok());
  ASSERT_TRUE(CreateSession(ParseGraph(no_attrs), 1)->Run({}, {"c:0"}, {}, &o5).ok());
  EXPECT_FALSE(SameBytes(o4[0], o5[0]));
  // Seeded twins in one graph are two nodes with one stream each: equal.
  const std::string twins = RealGraph("RandomUniform", {16}, GR_FLOAT, 5, 6, "a") +
                            RealGraph("RandomUniform", {16}, GR_FLOAT, 5, 6, "b");
  std::unique_ptr<Session> s3 = CreateSession(ParseGraph(twins), 2);
  std::vector<Tensor> o3;
  ASSERT_TRUE(s3->Run({}, {"a:0", "b:0"}, {}, &o3).ok());
  EXPECT_TRUE(SameBytes(o3[0], o3[1]));
}

TEST(RandomSeedTest, StreamSurvivesOtherFetchSets) {
  // The stateful kernel is one per node and session, so a Run with another
  // fetch set (another executor) continues the same stream.
  const std::string g = RealGraph("RandomUniform", {4}, GR_FLOAT, 42, 7) + NodeText("id", "Identity", {"r"}, TypeAttr("T", "DT_FLOAT"));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 2);
  std::vector<Tensor> a, b;
  ASSERT_TRUE(s->Run({}, {"r:0"}, {}, &a).ok());
  ASSERT_TRUE(s->Run({}, {"id:0"}, {}, &b).ok());
  const std::vector<Tensor> seq = RunRepeatedly(RealGraph("RandomUniform", {4}, GR_FLOAT, 42, 7), 2);
  ASSERT_EQ(seq.size(), 2u);
  EXPECT_TRUE(SameBytes(a[0], seq[0]));
  EXPECT_TRUE(SameBytes(b[0], seq[1]));
}

TEST(RandomSeedTest, ConcurrentRunsShareOneStream) {
  // Runs from several threads each reserve their own block of the stream:
  // together they produce exactly the first 4 * 40 blocks, in some order.
  const std::string g = RealGraph("RandomUniform", {4}, GR_FLOAT, 42, 7);
  const int kThreads = 4, kRuns = 40;
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 2);
  std::vector<std::vector<float>> got(kThreads * kRuns);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        std::vector<Tensor> out;
        if (!s->Run({}, {"r:0"}, {}, &out).ok()) {
          ++failures;
          return;
        }
        got[t * kRuns + r] = ToVector<float>(out[0]);
      }
    });
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  std::vector<std::vector<float>> want;
  for (const Tensor& t : RunRepeatedly(g, kThreads * kRuns)) want.push_back(ToVector<float>(t));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

// ================================================ thread-count independence

TEST(RandomThreadsTest, SameValuesForAnyThreadCount) {
  // Big enough that the session's pool splits the work (and odd, so the
  // last group is short).
  const int64_t n = 200003;
  std::vector<std::string> graphs;
  for (const std::string op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"})
    for (DataType dt : {GR_FLOAT, GR_DOUBLE, GR_HALF, GR_BFLOAT16}) graphs.push_back(RealGraph(op, {n}, dt, 17, 18));
  graphs.push_back(IntGraph({n}, GR_INT32, -7, 1000, 17, 18));
  graphs.push_back(IntGraph({n}, GR_INT64, -7, int64_t{1} << 50, 17, 18));
  for (const std::string& g : graphs) {
    const std::vector<Tensor> one = RunRepeatedly(g, 2, {}, "r:0", 1);
    for (int threads : {2, 4}) {
      const std::vector<Tensor> many = RunRepeatedly(g, 2, {}, "r:0", threads);
      ASSERT_EQ(many.size(), 2u);
      EXPECT_TRUE(SameBytes(one[0], many[0])) << threads << " threads: " << g;
      EXPECT_TRUE(SameBytes(one[1], many[1])) << threads << " threads: " << g;
    }
  }
  // Multinomial: many rows over the pool.
  std::mt19937 rng(5);
  const Tensor logits = MakeTensor<float>(GR_FLOAT, {300, 50}, UniformFloats(300 * 50, 9, -3, 3));
  const Feeds feeds = {{"logits", logits}, {"n", MakeTensor<int32_t>(GR_INT32, {}, {37})}};
  const std::vector<Tensor> one = RunRepeatedly(MultinomialGraph(GR_FLOAT, 17, 18), 2, feeds, "r:0", 1);
  for (int threads : {2, 4}) {
    const std::vector<Tensor> many = RunRepeatedly(MultinomialGraph(GR_FLOAT, 17, 18), 2, feeds, "r:0", threads);
    ASSERT_EQ(many.size(), 2u);
    EXPECT_TRUE(SameBytes(one[0], many[0])) << threads;
    EXPECT_TRUE(SameBytes(one[1], many[1])) << threads;
  }
}

// ============================================================ statistics

// Bounds: for n independent draws the sample mean is within 5 standard
// errors (sigma / sqrt(n)) and the variance within 5 * sigma^2 *
// sqrt(2 / n) (normal approximation) of the truth; fixed seeds keep the
// test deterministic, the margins keep it meaningful.
TEST(RandomStatsTest, UniformNormalTruncated) {
  const int64_t n = 100000;
  const double se = 1.0 / std::sqrt(static_cast<double>(n));
  for (DataType dt : {GR_FLOAT, GR_DOUBLE, GR_HALF, GR_BFLOAT16}) {
    SCOPED_TRACE(DtName(dt));
    double mean, var;
    // Uniform [0, 1): mean 1/2, variance 1/12 (half/bfloat16 are k/1024 and
    // k/128: mean 1/2 - 1/2048 or 1/256, variance (1 - 1/m^2)/12).
    std::vector<double> u = AsDoubles(RunOnce(RealGraph("RandomUniform", {n}, dt, 1, 2)));
    const double m = dt == GR_HALF ? 1024 : dt == GR_BFLOAT16 ? 128 : 0;
    const double want_mean = m ? 0.5 - 0.5 / m : 0.5, want_var = m ? (1 - 1 / (m * m)) / 12 : 1.0 / 12;
    EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
    EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
    MeanVar(u, &mean, &var);
    EXPECT_NEAR(mean, want_mean, 5 * std::sqrt(want_var) * se);
    EXPECT_NEAR(var, want_var, 5 * want_var * std::sqrt(2.0) * se);
    // Standard normal: mean 0, variance 1; about 4.55% beyond |2|.
    std::vector<double> z = AsDoubles(RunOnce(RealGraph("RandomStandardNormal", {n}, dt, 1, 2)));
    MeanVar(z, &mean, &var);
    EXPECT_NEAR(mean, 0.0, 5 * se);
    EXPECT_NEAR(var, 1.0, 5 * std::sqrt(2.0) * se);
    const double beyond = std::count_if(z.begin(), z.end(), [](double x) { return std::fabs(x) >= 2; }) / double(n);
    EXPECT_NEAR(beyond, 0.0455, 5 * std::sqrt(0.0455 * 0.9545) * se);
    // Truncated at 2: |x| < 2 (half/bfloat16 may round up to exactly 2),
    // mean 0, variance 1 - 4 phi(2) / (Phi(2) - Phi(-2)) = 0.773741.
    std::vector<double> t = AsDoubles(RunOnce(RealGraph("TruncatedNormal", {n}, dt, 1, 2)));
    for (double x : t) {
      if (dt == GR_FLOAT || dt == GR_DOUBLE) {
        ASSERT_LT(std::fabs(x), 2.0);
      } else {
        ASSERT_LE(std::fabs(x), 2.0);
      }
    }
    MeanVar(t, &mean, &var);
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(0.773741) * se);
    EXPECT_NEAR(var, 0.773741, 5 * 0.773741 * std::sqrt(2.0) * se + (m ? 0.002 : 0));
  }
}

TEST(RandomStatsTest, UniformIntFrequencies) {
  // Range 10 from 32-bit words: the modulo bias is < 10 / 2^32, invisible;
  // each value's count is binomial(n, 1/10): within 5 sigma of n/10.
  const int64_t n = 100000;
  for (DataType dt : {GR_INT32, GR_INT64}) {
    const std::vector<double> v = AsDoubles(RunOnce(IntGraph({n}, dt, -3, 7, 21, 22)));
    std::map<int64_t, int64_t> counts;
    for (double x : v) ++counts[static_cast<int64_t>(x)];
    ASSERT_EQ(counts.size(), 10u);
    EXPECT_EQ(counts.begin()->first, -3);
    EXPECT_EQ(counts.rbegin()->first, 6);
    for (auto [value, c] : counts) EXPECT_NEAR(c, n / 10.0, 5 * std::sqrt(n * 0.09)) << value;
  }
}

// ========================================================= RandomShuffle

// Fisher-Yates from the front on 32-bit words read one at a time from the
// Run's first sample.
std::vector<int64_t> RefShufflePerm(uint64_t seed, uint64_t seed2, uint64_t first_sample, int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t j = i + RefSeqWord(seed, seed2, first_sample, static_cast<uint64_t>(i)) % (n - i);
    std::swap(p[i], p[j]);
  }
  return p;
}

TEST(RandomShuffleTest, PermutesFirstDimension) {
  const int64_t n = 10;
  std::vector<float> rows(n * 3);
  for (int64_t i = 0; i < n * 3; ++i) rows[i] = static_cast<float>(i);
  const Feeds feeds = {{"x", MakeTensor<float>(GR_FLOAT, {n, 3}, rows)}};
  const std::vector<Tensor> runs = RunRepeatedly(ShuffleGraph(GR_FLOAT, 31, 32), 3, feeds);
  ASSERT_EQ(runs.size(), 3u);
  for (int run = 0; run < 3; ++run) {
    ASSERT_EQ(DimsOf(runs[run]), Dims({n, 3}));
    // Each Run reserves ceil((n - 1) / 4) samples.
    const std::vector<int64_t> perm = RefShufflePerm(31, 32, static_cast<uint64_t>(run) * 3, n);
    for (int64_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(runs[run].data<float>()[i * 3 + k], perm[i] * 3 + k) << run << " " << i;
  }
  EXPECT_FALSE(SameBytes(runs[0], runs[1]));
}

TEST(RandomShuffleTest, OneDimensionalAndStrings) {
  const int64_t n = 1000;
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(i);
  const Tensor t = RunOnce(ShuffleGraph(GR_INT32, 1, 1), {{"x", MakeTensor<int32_t>(GR_INT32, {n}, v)}});
  std::vector<int32_t> got = ToVector<int32_t>(t);
  EXPECT_NE(got, v);
  const std::vector<int64_t> perm = RefShufflePerm(1, 1, 0, n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], perm[i]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, v);  // a permutation
  // Strings move whole.
  Tensor s(GR_STRING, TensorShape({5}));
  for (int i = 0; i < 5; ++i) s.set_string(i, std::string(i == 2 ? 50 : 3, static_cast<char>('a' + i)));
  const Tensor out = RunOnce(ShuffleGraph(GR_STRING, 1, 1), {{"x", s}});
  ASSERT_EQ(out.NumElements(), 5);
  const std::vector<int64_t> p5 = RefShufflePerm(1, 1, 0, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out.string_at(i), s.string_at(p5[i]));
}

TEST(RandomShuffleTest, NothingToShuffleDrawsNothing) {
  // A scalar, one row, or no elements come back unchanged and leave the
  // stream where it was.
  const std::string g = ShuffleGraph(GR_FLOAT, 31, 32);
  std::unique_ptr<Session> s = CreateSession(ParseGraph(g), 1);
  for (const Dims& d : std::vector<Dims>{{}, {1, 4}, {0}, {3, 0}}) {
    const Tensor x = MakeTensor<float>(GR_FLOAT, d, std::vector<float>(NumElements(d), 2.5f));
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", x}}, {"r:0"}, {}, &out).ok());
    EXPECT_TRUE(SameBytes(out[0], x));
  }
  std::vector<float> rows(10 * 3);
  for (int i = 0; i < 30; ++i) rows[i] = static_cast<float>(i);
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x", MakeTensor<float>(GR_FLOAT, {10, 3}, rows)}}, {"r:0"}, {}, &out).ok());
  const std::vector<int64_t> perm = RefShufflePerm(31, 32, 0, 10);  // still the first block
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(out[0].data<float>()[i * 3], perm[i] * 3);
}

TEST(RandomShuffleTest, AllPermutationsEquallyLikely) {
  // 4 elements, 2400 Runs: each of the 24 orders is binomial(2400, 1/24),
  // mean 100, sd 9.8: within 5 sd.
  std::unique_ptr<Session> s = CreateSession(ParseGraph(ShuffleGraph(GR_INT32, 77, 78)), 1);
  const Feeds feeds = {{"x", MakeTensor<int32_t>(GR_INT32, {4}, {0, 1, 2, 3})}};
  std::map<std::vector<int32_t>, int> counts;
  for (int r = 0; r < 2400; ++r) {
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run(feeds, {"r:0"}, {}, &out).ok());
    ++counts[ToVector<int32_t>(out[0])];
  }
  EXPECT_EQ(counts.size(), 24u);
  for (const auto& [perm, c] : counts) EXPECT_NEAR(c, 100, 5 * std::sqrt(2400.0 / 24 * 23 / 24));
}

// =========================================================== Multinomial

TEST(MultinomialTest, Frequencies) {
  // Probabilities 0.1..0.4 given as unnormalised logits (+ 5), a class with
  // logit -inf is never drawn. Counts per class are binomial(n, p): within
  // 5 sd.
  const int n = 20000;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {std::log(0.1f) + 5, std::log(0.2f) + 5, -inf, std::log(0.3f) + 5,
                                     std::log(0.4f) + 5};
  for (DataType dt : {GR_FLOAT, GR_DOUBLE}) {
    for (DataType out_dt : {GR_INT32, GR_INT64}) {
      Tensor l;
      if (dt == GR_FLOAT) {
        l = MakeTensor<float>(GR_FLOAT, {2, 5}, {logits[0], logits[1], logits[2], logits[3], logits[4], logits[0],
                                                  logits[1], logits[2], logits[3], logits[4]});
      } else {
        std::vector<double> d;
        for (int r = 0; r < 2; ++r)
          for (float x : logits) d.push_back(x);
        l = MakeTensor<double>(GR_DOUBLE, {2, 5}, d);
      }
      const Tensor t = RunOnce(MultinomialGraph(dt, 8, 9, out_dt),
                               {{"logits", l}, {"n", MakeTensor<int32_t>(GR_INT32, {}, {n})}});
      ASSERT_EQ(DimsOf(t), Dims({2, n}));
      EXPECT_EQ(t.dtype(), out_dt);
      const std::vector<double> v = AsDoubles(t);
      const double p[5] = {0.1, 0.2, 0, 0.3, 0.4};
      for (int row = 0; row < 2; ++row) {
        int counts[5] = {0, 0, 0, 0, 0};
        for (int s = 0; s < n; ++s) {
          const int c = static_cast<int>(v[row * n + s]);
          ASSERT_GE(c, 0);
          ASSERT_LT(c, 5);
          ++counts[c];
        }
        EXPECT_EQ(counts[2], 0);
        for (int c = 0; c < 5; ++c) EXPECT_NEAR(counts[c], n * p[c], 5 * std::sqrt(n * p[c] * (1 - p[c])) + 0.5) << c;
      }
    }
  }
}

TEST(MultinomialTest, StreamPositions) {
  // Row b, sample s: u from words 2 (b * S + s) and +1 of the Run's stream
  // (as TensorFlow draws them when the op runs as one shard), class = the
  // first whose running sum of exp(logit) exceeds u * total.
  const int64_t rows = 3, classes = 4, S = 5;
  const std::vector<float> logits = UniformFloats(rows * classes, 4, -2, 2);
  const Feeds feeds = {{"logits", MakeTensor<float>(GR_FLOAT, {rows, classes}, logits)},
                       {"n", MakeTensor<int32_t>(GR_INT32, {}, {static_cast<int32_t>(S)})}};
  const std::vector<Tensor> runs = RunRepeatedly(MultinomialGraph(GR_FLOAT, 8, 9), 2, feeds);
  ASSERT_EQ(runs.size(), 2u);
  for (int run = 0; run < 2; ++run) {
    // Each Run reserves rows * ceil4(S) * 2 outputs of 256 samples.
    const uint64_t first = static_cast<uint64_t>(run) * rows * 8 * 2 * 256;
    for (int64_t b = 0; b < rows; ++b) {
      std::vector<double> cdf;
      double total = 0;
      for (int64_t c = 0; c < classes; ++c) cdf.push_back(total += std::exp(double(logits[b * classes + c])));
      for (int64_t s = 0; s < S; ++s) {
        const uint64_t w = 2 * static_cast<uint64_t>(b * S + s);
        const double u = RefUniform01Double(RefSeqWord(8, 9, first, w), RefSeqWord(8, 9, first, w + 1));
        const int64_t want = std::upper_bound(cdf.begin(), cdf.end(), u * total) - cdf.begin();
        EXPECT_EQ(runs[run].data<int64_t>()[b * S + s], want) << run << " " << b << " " << s;
      }
    }
  }
}

TEST(MultinomialTest, EmptyOutputs) {
  for (auto [rows, n] : std::vector<std::pair<int64_t, int32_t>>{{0, 3}, {2, 0}}) {
    const Tensor t = RunOnce(MultinomialGraph(GR_FLOAT, 1, 2),
                             {{"logits", MakeTensor<float>(GR_FLOAT, {rows, 3}, std::vector<float>(rows * 3, 0.f))},
                              {"n", MakeTensor<int32_t>(GR_INT32, {}, {n})}});
    EXPECT_EQ(DimsOf(t), Dims({rows, n}));
  }
}

// ================================================================ errors

Status RunStatus(const std::string& pbtxt, const Feeds& feeds = {}) { return TryRun(pbtxt, feeds, {"r:0"}); }

TEST(RandomErrorTest, BadShapes) {
  const std::string fed = PlaceholderNode("shape", "DT_INT64") +
                          NodeText("r", "RandomUniform", {"shape"},
                                   Seeds(1, 2) + TypeAttr("dtype", "DT_FLOAT") + TypeAttr("T", "DT_INT64"));
  EXPECT_ERROR(RunStatus(fed, {{"shape", MakeTensor<int64_t>(GR_INT64, {2, 2}, {1, 2, 3, 4})}}), Code::kInvalidArgument,
               "'r'", "shape must be a vector", "[2,2]");
  EXPECT_ERROR(RunStatus(fed, {{"shape", MakeTensor<int64_t>(GR_INT64, {2}, {3, -1})}}), Code::kInvalidArgument, "'r'",
               "negative dimension");
  EXPECT_ERROR(RunStatus(fed, {{"shape", MakeTensor<int64_t>(GR_INT64, {3}, {1 << 30, 1 << 30, 1 << 30})}}),
               Code::kInvalidArgument, "'r'", "2^58");
  // Known at graph construction: the shape function says so.
  EXPECT_ERROR(RunStatus(RealGraph("TruncatedNormal", {4, -2}, GR_FLOAT, 1, 2)), Code::kInvalidArgument, "negative dimension");
  // The session still works after a failed Run.
  std::unique_ptr<Session> s = CreateSession(ParseGraph(fed), 1);
  std::vector<Tensor> out;
  EXPECT_FALSE(s->Run({{"shape", MakeTensor<int64_t>(GR_INT64, {1}, {-4})}}, {"r:0"}, {}, &out).ok());
  ASSERT_TRUE(s->Run({{"shape", MakeTensor<int64_t>(GR_INT64, {2}, {2, 3})}}, {"r:0"}, {}, &out).ok());
  EXPECT_EQ(DimsOf(out[0]), Dims({2, 3}));
  // A shape tensor of the wrong dtype is refused when the graph is built.
  const std::string float_shape = PlaceholderNode("shape", "DT_FLOAT") +
                                  NodeText("r", "RandomUniform", {"shape"},
                                           Seeds(1, 2) + TypeAttr("dtype", "DT_FLOAT") + TypeAttr("T", "DT_FLOAT"));
  EXPECT_FALSE(RunStatus(float_shape, {{"shape", MakeTensor<float>(GR_FLOAT, {1}, {2.f})}}).ok());
  // So is an output dtype the op does not allow.
  EXPECT_FALSE(RunStatus(RealGraph("RandomUniform", {2}, GR_INT32, 1, 2)).ok());
}

TEST(RandomErrorTest, UniformIntRange) {
  EXPECT_ERROR(RunStatus(IntGraph({3}, GR_INT32, 5, 5, 1, 2)), Code::kInvalidArgument, "'r'",
               "Need minval < maxval, got 5 >= 5");
  EXPECT_ERROR(RunStatus(IntGraph({3}, GR_INT64, 7, -2, 1, 2)), Code::kInvalidArgument, "Need minval < maxval, got 7 >= -2");
  // No output, no range needed (TensorFlow checks only when drawing).
  EXPECT_TRUE(RunStatus(IntGraph({0, 3}, GR_INT32, 5, 5, 1, 2)).ok());
  const std::string fed = ShapeConst("shape", {2}) + PlaceholderNode("lo", "DT_INT32") + PlaceholderNode("hi", "DT_INT32") +
                          NodeText("r", "RandomUniformInt", {"shape", "lo", "hi"},
                                   Seeds(1, 2) + TypeAttr("Tout", "DT_INT32") + TypeAttr("T", "DT_INT32"));
  EXPECT_ERROR(RunStatus(fed, {{"lo", MakeTensor<int32_t>(GR_INT32, {1}, {0})},
                               {"hi", MakeTensor<int32_t>(GR_INT32, {}, {4})}}),
               Code::kInvalidArgument, "'r'", "minval must be 0-D, got shape [1]");
  EXPECT_ERROR(RunStatus(fed, {{"lo", MakeTensor<int32_t>(GR_INT32, {}, {0})},
                               {"hi", MakeTensor<int32_t>(GR_INT32, {2}, {4, 5})}}),
               Code::kInvalidArgument, "'r'", "maxval must be 0-D, got shape [2]");
}

TEST(RandomErrorTest, Multinomial) {
  const std::string g = MultinomialGraph(GR_FLOAT, 1, 2);
  const Tensor n3 = MakeTensor<int32_t>(GR_INT32, {}, {3});
  EXPECT_ERROR(RunStatus(g, {{"logits", MakeTensor<float>(GR_FLOAT, {3}, {1, 2, 3})}, {"n", n3}}), Code::kInvalidArgument,
               "'r'", "logits should be a matrix, got shape [3]");
  EXPECT_ERROR(RunStatus(g, {{"logits", MakeTensor<float>(GR_FLOAT, {1, 1, 3}, {1, 2, 3})}, {"n", n3}}),
               Code::kInvalidArgument, "logits should be a matrix, got shape [1,1,3]");
  const Tensor logits = MakeTensor<float>(GR_FLOAT, {1, 3}, {1, 2, 3});
  EXPECT_ERROR(RunStatus(g, {{"logits", logits}, {"n", MakeTensor<int32_t>(GR_INT32, {}, {-1})}}), Code::kInvalidArgument,
               "'r'", "num_samples should be non-negative, got -1");
  EXPECT_ERROR(RunStatus(g, {{"logits", logits}, {"n", MakeTensor<int32_t>(GR_INT32, {1}, {2})}}), Code::kInvalidArgument,
               "num_samples should be a scalar");
  EXPECT_ERROR(RunStatus(g, {{"logits", MakeTensor<float>(GR_FLOAT, {2, 0}, {})}, {"n", n3}}), Code::kInvalidArgument,
               "num_classes should be positive, got 0");
}

TEST(RandomShuffleTest, OtherDtypes) {
  // The kernel moves rows by element size: 1-byte elements, and 8-byte
  // rows of a 2-D int64 tensor, permuted as the reference says.
  const Tensor u8 = MakeTensor<uint8_t>(GR_UINT8, {3}, {10, 20, 30});
  const Tensor t = RunOnce(ShuffleGraph(GR_UINT8, 4, 5), {{"x", u8}});
  const std::vector<int64_t> p3 = RefShufflePerm(4, 5, 0, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t.data<uint8_t>()[i], 10 * (p3[i] + 1));
  std::vector<int64_t> v(6 * 2);
  for (int i = 0; i < 12; ++i) v[i] = int64_t{1} << (40 + i);
  const Tensor t64 = RunOnce(ShuffleGraph(GR_INT64, 4, 5), {{"x", MakeTensor<int64_t>(GR_INT64, {6, 2}, v)}});
  const std::vector<int64_t> p6 = RefShufflePerm(4, 5, 0, 6);
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 2; ++k) EXPECT_EQ(t64.data<int64_t>()[i * 2 + k], v[p6[i] * 2 + k]);
}

// ====================================== TensorFlow's regression training graph

TEST(RandomTfGraphTest, RegressionModelRandomUniform) {
  // rust/examples/regression/model.pb initialises w with
  // random_uniform([1], -1, 1). Its Variable ops belong to another family,
  // so run the RandomUniform node as TensorFlow wrote it, with the nodes it
  // reads from.
  const std::string path = SharedPath("tf_testdata/rust/examples/regression/model.pb");
  if (path.empty()) GTEST_SKIP() << "tf_testdata not present";
  proto::GraphDef full;
  ASSERT_TRUE(ReadGraphDefFromFile(path, &full).ok());
  std::map<std::string, const proto::NodeDef*> by_name;
  for (const auto& n : full.node()) by_name[n.name()] = &n;
  ASSERT_TRUE(by_name.count("random_uniform/RandomUniform"));
  EXPECT_EQ(by_name["random_uniform/RandomUniform"]->op(), "RandomUniform");
  std::set<std::string> keep;
  std::vector<std::string> todo = {"random_uniform"};
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (!keep.insert(name).second) continue;
    ASSERT_TRUE(by_name.count(name)) << name;
    for (std::string in : by_name[name]->input()) {
      if (in[0] == '^') in = in.substr(1);
      todo.push_back(in.substr(0, in.find(':')));
    }
  }
  proto::GraphDef sub;
  *sub.mutable_versions() = full.versions();
  for (const auto& n : full.node())
    if (keep.count(n.name())) *sub.add_node() = n;
  std::unique_ptr<Session> s = CreateSession(sub, 2);
  ASSERT_TRUE(s);
  for (int run = 0; run < 3; ++run) {
    std::vector<Tensor> out;
    Status st = s->Run({}, {"random_uniform/RandomUniform:0", "random_uniform:0", "random_uniform/min:0",
                            "random_uniform/range:0"},
                       {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    ASSERT_EQ(out[0].dtype(), GR_FLOAT);
    const float u = out[0].data<float>()[0], lo = out[2].scalar<float>(), range = out[3].scalar<float>();
    EXPECT_GE(u, 0.f);
    EXPECT_LT(u, 1.f);
    EXPECT_EQ(out[1].data<float>()[0], u * range + lo);
  }
}

}  // namespace
}  // namespace graphrt
