// 2-D pooling on CPU: MaxPool, MaxPoolV2, AvgPool, MaxPoolGrad and
// AvgPoolGrad, through real sessions.
//
// The reference pools with plain loops over every (n, h, w, c), works out
// TensorFlow's SAME/VALID/EXPLICIT windows by itself, and accumulates in
// double; the gradients are also checked against central finite
// differences of the naive forward pooling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "nn_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;     // NOLINT: the op-test vocabulary
using namespace ::graphrt::nn_testing;  // NOLINT

// One pooling configuration, in NHWC terms; `nchw` only changes how the
// tensors are laid out and how ksize/strides/paddings are spelled.
struct PoolCase {
  int64_t n, h, w, c;
  int64_t kh, kw, sh, sw;
  std::string padding;                   // SAME, VALID or EXPLICIT
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;  // EXPLICIT only
  bool nchw = false;

  std::string Name() const {
    return std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" +
           std::to_string(c) + " k" + std::to_string(kh) + "x" + std::to_string(kw) + " s" +
           std::to_string(sh) + "x" + std::to_string(sw) + " " + padding +
           (padding == "EXPLICIT" ? "(" + std::to_string(pt) + "," + std::to_string(pb) + "," +
                                        std::to_string(pl) + "," + std::to_string(pr) + ")"
                                  : "") +
           (nchw ? " NCHW" : " NHWC");
  }
  // Output size and padding before, worked out from TensorFlow's rules.
  void Window(int64_t in, int64_t k, int64_t s, int64_t eb, int64_t ea, int64_t* out,
              int64_t* before) const {
    if (padding == "VALID") {
      *out = (in - k) / s + 1;
      *before = 0;
    } else if (padding == "SAME") {
      *out = (in + s - 1) / s;
      *before = std::max<int64_t>((*out - 1) * s + k - in, 0) / 2;
    } else {
      *out = (in + eb + ea - k) / s + 1;
      *before = eb;
    }
  }
  int64_t oh() const { int64_t o, b; Window(h, kh, sh, pt, pb, &o, &b); return o; }
  int64_t ow() const { int64_t o, b; Window(w, kw, sw, pl, pr, &o, &b); return o; }
  int64_t top() const { int64_t o, b; Window(h, kh, sh, pt, pb, &o, &b); return b; }
  int64_t left() const { int64_t o, b; Window(w, kw, sw, pl, pr, &o, &b); return b; }

  Dims InDims() const { return nchw ? Dims{n, c, h, w} : Dims{n, h, w, c}; }
  Dims OutDims() const { return nchw ? Dims{n, c, oh(), ow()} : Dims{n, oh(), ow(), c}; }
  int64_t In(int64_t b, int64_t y, int64_t x, int64_t ch) const {
    return nchw ? ((b * c + ch) * h + y) * w + x : ((b * h + y) * w + x) * c + ch;
  }
  int64_t Out(int64_t b, int64_t y, int64_t x, int64_t ch) const {
    return nchw ? ((b * c + ch) * oh() + y) * ow() + x : ((b * oh() + y) * ow() + x) * c + ch;
  }
  std::vector<int64_t> Four(int64_t hv, int64_t wv) const {
    return nchw ? std::vector<int64_t>{1, 1, hv, wv} : std::vector<int64_t>{1, hv, wv, 1};
  }
  std::string Attrs(const std::string& dt, bool with_lists = true) const {
    std::string a = TypeAttr("T", dt) + StrAttr("padding", padding) +
                    StrAttr("data_format", nchw ? "NCHW" : "NHWC");
    if (with_lists) a += IntListAttr("ksize", Four(kh, kw)) + IntListAttr("strides", Four(sh, sw));
    if (padding == "EXPLICIT") {
      a += IntListAttr("explicit_paddings", nchw ? std::vector<int64_t>{0, 0, 0, 0, pt, pb, pl, pr}
                                                 : std::vector<int64_t>{0, 0, pt, pb, pl, pr, 0, 0});
    }
    return a;
  }
};

// Calls f(b, oy, ox, ch, y, x) for every input position of every window,
// in the window's row-major order.
template <typename F>
void ForEachTap(const PoolCase& p, F f) {
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t oy = 0; oy < p.oh(); ++oy)
        for (int64_t ox = 0; ox < p.ow(); ++ox)
          for (int64_t dy = 0; dy < p.kh; ++dy)
            for (int64_t dx = 0; dx < p.kw; ++dx) {
              const int64_t y = oy * p.sh - p.top() + dy, x = ox * p.sw - p.left() + dx;
              if (y < 0 || y >= p.h || x < 0 || x >= p.w) continue;  // padding
              f(b, oy, ox, ch, y, x);
            }
}

std::vector<double> RefMaxPool(const PoolCase& p, const std::vector<double>& in) {
  std::vector<double> out(NumElements(p.OutDims()), -std::numeric_limits<double>::infinity());
  ForEachTap(p, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch, int64_t y, int64_t x) {
    double& o = out[p.Out(b, oy, ox, ch)];
    o = std::max(o, in[p.In(b, y, x, ch)]);
  });
  return out;
}

std::vector<double> RefAvgPool(const PoolCase& p, const std::vector<double>& in) {
  std::vector<double> sum(NumElements(p.OutDims()), 0), count(sum.size(), 0);
  ForEachTap(p, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch, int64_t y, int64_t x) {
    sum[p.Out(b, oy, ox, ch)] += in[p.In(b, y, x, ch)];
    count[p.Out(b, oy, ox, ch)] += 1;
  });
  for (size_t i = 0; i < sum.size(); ++i) sum[i] /= count[i];
  return sum;
}

// Each output's gradient goes to the first maximum of its window.
std::vector<double> RefMaxPoolGrad(const PoolCase& p, const std::vector<double>& in,
                                   const std::vector<double>& grad) {
  std::vector<double> out(in.size(), 0);
  std::vector<int64_t> best(NumElements(p.OutDims()), -1);
  ForEachTap(p, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch, int64_t y, int64_t x) {
    int64_t& k = best[p.Out(b, oy, ox, ch)];
    const int64_t i = p.In(b, y, x, ch);
    if (k < 0 || in[i] > in[k]) k = i;
  });
  for (size_t o = 0; o < best.size(); ++o) out[best[o]] += grad[o];
  return out;
}

std::vector<double> RefAvgPoolGrad(const PoolCase& p, const std::vector<double>& grad) {
  std::vector<double> count(NumElements(p.OutDims()), 0);
  ForEachTap(p, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch, int64_t, int64_t) {
    count[p.Out(b, oy, ox, ch)] += 1;
  });
  std::vector<double> out(NumElements(p.InDims()), 0);
  ForEachTap(p, [&](int64_t b, int64_t oy, int64_t ox, int64_t ch, int64_t y, int64_t x) {
    out[p.In(b, y, x, ch)] += grad[p.Out(b, oy, ox, ch)] / count[p.Out(b, oy, ox, ch)];
  });
  return out;
}

// Random values rounded to T (whole numbers for integer types).
template <typename T>
std::vector<double> RandomFor(int64_t n, std::mt19937* rng) {
  std::vector<double> v = Uniform(n, -50, 50, rng);
  for (double& x : v) x = std::is_floating_point_v<T> ? double(static_cast<T>(x)) : std::round(x);
  return v;
}

template <typename T>
void CheckPoolForward(const PoolCase& p, bool max, std::mt19937* rng, int threads = 2) {
  SCOPED_TRACE((max ? "MaxPool " : "AvgPool ") + p.Name() + " " + DtName(Dt<T>::value));
  const std::vector<double> x = RandomFor<T>(NumElements(p.InDims()), rng);
  const std::vector<double> want = max ? RefMaxPool(p, x) : RefAvgPool(p, x);
  std::vector<Tensor> out =
      RunNode(max ? "MaxPool" : "AvgPool", {MakeT<T>(p.InDims(), x)}, p.Attrs(DtName(Dt<T>::value)), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), p.OutDims());
  ExpectClose<T>(out[0], want, RelTol<T>(), RelTol<T>());
}

// Every padding x format on odd sizes and several windows and strides.
std::vector<PoolCase> AllCases(bool with_explicit) {
  std::vector<PoolCase> cases;
  struct W {
    int64_t kh, kw, sh, sw;
  };
  const std::vector<W> windows = {{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 2, 2}, {3, 2, 1, 2},
                                  {2, 3, 3, 1}, {5, 4, 1, 1}, {3, 3, 1, 1}, {1, 3, 4, 2}};
  for (bool nchw : {false, true}) {
    for (const W& w : windows) {
      for (const std::string pad : {"VALID", "SAME"}) {
        PoolCase p{2, 7, 6, 3, w.kh, w.kw, w.sh, w.sw, pad};
        p.nchw = nchw;
        cases.push_back(p);
      }
      if (with_explicit && w.kh > 1 && w.kw > 1) {
        PoolCase p{2, 7, 6, 3, w.kh, w.kw, w.sh, w.sw, "EXPLICIT", 1, w.kh - 1, 0, 1};
        p.nchw = nchw;
        cases.push_back(p);
      }
    }
    // Non-square odd input, one channel and one image.
    PoolCase p{1, 9, 11, 1, 3, 3, 2, 2, "SAME"};
    p.nchw = nchw;
    cases.push_back(p);
    p.padding = "VALID";
    cases.push_back(p);
  }
  return cases;
}

TEST(MaxPoolTest, AllPaddingsFormatsAndWindows) {
  std::mt19937 rng(200);
  for (const PoolCase& p : AllCases(true)) {
    CheckPoolForward<float>(p, true, &rng);
    CheckPoolForward<double>(p, true, &rng);
  }
}

TEST(MaxPoolTest, IntegerTypes) {
  std::mt19937 rng(201);
  for (const PoolCase& p : AllCases(false)) {
    CheckPoolForward<int32_t>(p, true, &rng);
    CheckPoolForward<int64_t>(p, true, &rng);
  }
}

TEST(AvgPoolTest, AllPaddingsFormatsAndWindows) {
  std::mt19937 rng(202);
  for (const PoolCase& p : AllCases(false)) {
    CheckPoolForward<float>(p, false, &rng);
    CheckPoolForward<double>(p, false, &rng);
  }
}

// The NHWC kernel has code fixed at compile time for some channel counts
// (1, 2, 3, 4, 6, 8, 16, 32 in float) and a loop for the others; each, with
// whole 2x2 windows, clipped SAME windows and larger windows.
TEST(PoolTest, EveryChannelCountNhwc) {
  std::mt19937 rng(204);
  for (int64_t c : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 32, 33}) {
    for (const PoolCase& w : {PoolCase{2, 7, 6, c, 2, 2, 2, 2, "VALID"}, PoolCase{2, 7, 6, c, 2, 2, 2, 2, "SAME"},
                              PoolCase{2, 7, 6, c, 3, 3, 2, 2, "SAME"}, PoolCase{1, 5, 9, c, 2, 3, 1, 2, "VALID"}}) {
      CheckPoolForward<float>(w, true, &rng);
      CheckPoolForward<float>(w, false, &rng);
    }
  }
}

TEST(PoolTest, ParallelAndSingleThread) {
  std::mt19937 rng(203);
  for (bool nchw : {false, true}) {
    for (const std::string pad : {"VALID", "SAME"}) {
      PoolCase p{3, 33, 35, 16, 2, 2, 2, 2, pad};  // above the parallel threshold
      p.nchw = nchw;
      for (int threads : {2, 1}) {
        CheckPoolForward<float>(p, true, &rng, threads);
        CheckPoolForward<float>(p, false, &rng, threads);
      }
      PoolCase q{5, 20, 19, 24, 3, 3, 2, 2, pad};
      q.nchw = nchw;
      CheckPoolForward<float>(q, true, &rng);
      CheckPoolForward<double>(q, false, &rng);
    }
  }
}

TEST(AvgPoolTest, SameAveragesOnlyValidElements) {
  // 3x3 input 1..9, 2x2 window, stride 1, SAME: pads one row/column after.
  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<Tensor> out = RunNode(
      "AvgPool", {MakeT<float>({1, 3, 3, 1}, x)},
      TypeAttr("T", "DT_FLOAT") + StrAttr("padding", "SAME") + IntListAttr("ksize", {1, 2, 2, 1}) +
          IntListAttr("strides", {1, 1, 1, 1}));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), (Dims{1, 3, 3, 1}));
  ExpectClose<float>(out[0], {3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9}, 1e-6);
}

TEST(MaxPoolTest, EmptyBatchAndChannels) {
  for (const Dims& d : {Dims{0, 4, 4, 3}, Dims{2, 4, 4, 0}}) {
    std::vector<Tensor> out = RunNode("MaxPool", {MakeT<float>(d, {})},
                                      TypeAttr("T", "DT_FLOAT") + StrAttr("padding", "VALID") +
                                          IntListAttr("ksize", {1, 2, 2, 1}) + IntListAttr("strides", {1, 2, 2, 1}));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), (Dims{d[0], 2, 2, d[3]}));
  }
}

TEST(MaxPoolTest, DepthwiseMaxPooling) {
  std::mt19937 rng(204);
  for (bool nchw : {false, true}) {
    const Dims d = nchw ? Dims{2, 6, 3, 4} : Dims{2, 3, 4, 6};
    const std::vector<double> x = RandomFor<float>(NumElements(d), &rng);
    // Channels pooled in groups of 3.
    std::vector<double> want;
    const Dims od = nchw ? Dims{2, 2, 3, 4} : Dims{2, 3, 4, 2};
    for (int64_t i = 0; i < NumElements(od); ++i) {
      // (n, h, w, oc) of output index i, then the max over its 3 channels.
      int64_t n, hh, ww, oc;
      if (nchw) {
        ww = i % 4; hh = (i / 4) % 3; oc = (i / 12) % 2; n = i / 24;
      } else {
        oc = i % 2; ww = (i / 2) % 4; hh = (i / 8) % 3; n = i / 24;
      }
      double m = -1e300;
      for (int64_t j = 0; j < 3; ++j) {
        const int64_t ch = oc * 3 + j;
        m = std::max(m, x[nchw ? ((n * 6 + ch) * 3 + hh) * 4 + ww : ((n * 3 + hh) * 4 + ww) * 6 + ch]);
      }
      want.push_back(m);
    }
    const std::vector<int64_t> k = nchw ? std::vector<int64_t>{1, 3, 1, 1} : std::vector<int64_t>{1, 1, 1, 3};
    std::vector<Tensor> out =
        RunNode("MaxPool", {MakeT<float>(d, x)},
                TypeAttr("T", "DT_FLOAT") + StrAttr("padding", "VALID") + IntListAttr("ksize", k) +
                    IntListAttr("strides", k) + StrAttr("data_format", nchw ? "NCHW" : "NHWC"));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(DimsOf(out[0]), od);
    ExpectClose<float>(out[0], want, 0);
  }
}

TEST(MaxPoolV2Test, ListsFromInputs) {
  std::mt19937 rng(205);
  for (const PoolCase& p : {PoolCase{2, 7, 6, 3, 3, 2, 2, 1, "SAME"}, PoolCase{2, 7, 6, 3, 2, 2, 2, 2, "VALID"}}) {
    SCOPED_TRACE(p.Name());
    const std::vector<double> x = RandomFor<float>(NumElements(p.InDims()), &rng);
    std::vector<int32_t> k, s;
    for (int64_t v : p.Four(p.kh, p.kw)) k.push_back(static_cast<int32_t>(v));
    for (int64_t v : p.Four(p.sh, p.sw)) s.push_back(static_cast<int32_t>(v));
    const std::string g = PlaceholderNode("x", "DT_FLOAT") + ConstInt32("k", k) + ConstInt32("s", s) +
                          NodeText("mp", "MaxPoolV2", {"x", "k", "s"}, p.Attrs("DT_FLOAT", false));
    std::vector<Tensor> out = RunOps(g, {{"x:0", MakeT<float>(p.InDims(), x)}}, {"mp:0"});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(DimsOf(out[0]), p.OutDims());
    ExpectClose<float>(out[0], RefMaxPool(p, x), 0);
  }
  // ksize with 3 values.
  const std::string g = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("k", "DT_INT32") +
                        ConstInt32("s", {1, 1, 1, 1}) +
                        NodeText("mp", "MaxPoolV2", {"x", "k", "s"},
                                 TypeAttr("T", "DT_FLOAT") + StrAttr("padding", "VALID"));
  EXPECT_ERROR(TryRun(g, {{"x:0", MakeT<float>({1, 2, 2, 1}, {1, 2, 3, 4})},
                          {"k:0", MakeTensor<int32_t>(GR_INT32, {3}, {1, 2, 2})}},
                      {"mp:0"}),
               Code::kInvalidArgument, "Sliding window ksize field must specify 4 dimensions", "mp");
}

// ------------------------------------------------------------ gradients

// d/dx of sum(grad * pool(x)) by central differences of the naive pooling.
std::vector<double> NumericPoolGrad(const PoolCase& p, bool max, std::vector<double> x,
                                    const std::vector<double>& grad) {
  std::vector<double> out(x.size());
  const double h = 1e-4;
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    double f[2];
    for (int s = 0; s < 2; ++s) {
      x[i] = keep + (s ? -h : h);
      const std::vector<double> y = max ? RefMaxPool(p, x) : RefAvgPool(p, x);
      f[s] = 0;
      for (size_t o = 0; o < y.size(); ++o) f[s] += grad[o] * y[o];
    }
    x[i] = keep;
    out[i] = (f[0] - f[1]) / (2 * h);
  }
  return out;
}

template <typename T>
void CheckMaxPoolGrad(const PoolCase& p, std::mt19937* rng, bool numeric, int threads = 2) {
  SCOPED_TRACE("MaxPoolGrad " + p.Name() + " " + DtName(Dt<T>::value));
  // Distinct values (a shuffled ramp) keep finite differences away from ties.
  const int64_t n = NumElements(p.InDims());
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<double>(i) - n / 2;
  std::shuffle(x.begin(), x.end(), *rng);
  const std::vector<double> y = RefMaxPool(p, x);
  std::vector<double> g = RandomFor<T>(static_cast<int64_t>(y.size()), rng);
  std::vector<Tensor> out = RunNode(
      "MaxPoolGrad", {MakeT<T>(p.InDims(), x), MakeT<T>(p.OutDims(), y), MakeT<T>(p.OutDims(), g)},
      p.Attrs(DtName(Dt<T>::value)), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), p.InDims());
  ExpectClose<T>(out[0], RefMaxPoolGrad(p, x, g), RelTol<T>(), RelTol<T>());
  if (numeric) ExpectClose<T>(out[0], NumericPoolGrad(p, true, x, g), 1e-5, 1e-5);
}

template <typename T>
void CheckAvgPoolGrad(const PoolCase& p, std::mt19937* rng, bool numeric, int threads = 2) {
  SCOPED_TRACE("AvgPoolGrad " + p.Name() + " " + DtName(Dt<T>::value));
  const std::vector<double> x = Uniform(NumElements(p.InDims()), -1, 1, rng);
  const std::vector<double> g = RandomFor<T>(NumElements(p.OutDims()), rng);
  std::vector<int32_t> shape;
  for (int64_t d : p.InDims()) shape.push_back(static_cast<int32_t>(d));
  std::vector<Tensor> out =
      RunNode("AvgPoolGrad", {MakeTensor<int32_t>(GR_INT32, {4}, shape), MakeT<T>(p.OutDims(), g)},
              p.Attrs(DtName(Dt<T>::value)), 1, threads);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), p.InDims());
  ExpectClose<T>(out[0], RefAvgPoolGrad(p, g), RelTol<T>(), RelTol<T>());
  if (numeric) ExpectClose<T>(out[0], NumericPoolGrad(p, false, x, g), 1e-5, 1e-5);
}

TEST(MaxPoolGradTest, AllPaddingsFormatsAndWindows) {
  std::mt19937 rng(210);
  for (const PoolCase& p : AllCases(true)) {
    CheckMaxPoolGrad<float>(p, &rng, false);
    CheckMaxPoolGrad<double>(p, &rng, true);
  }
  for (const PoolCase& p : AllCases(false)) CheckMaxPoolGrad<int32_t>(p, &rng, false);
}

TEST(MaxPoolGradTest, TiesGoToTheFirstMaximum) {
  // One 3x3 window over equal values: all of the gradient to (0, 0); a
  // second max later in the window gets nothing.
  for (bool nchw : {false, true}) {
    const Dims d = nchw ? Dims{1, 1, 3, 3} : Dims{1, 3, 3, 1};
    const std::string attrs = TypeAttr("T", "DT_FLOAT") + StrAttr("padding", "VALID") +
                              StrAttr("data_format", nchw ? "NCHW" : "NHWC") +
                              IntListAttr("ksize", nchw ? std::vector<int64_t>{1, 1, 3, 3}
                                                        : std::vector<int64_t>{1, 3, 3, 1}) +
                              IntListAttr("strides", {1, 1, 1, 1});
    const Dims od = {1, 1, 1, 1};
    std::vector<Tensor> out = RunNode(
        "MaxPoolGrad", {MakeT<float>(d, std::vector<double>(9, 2.0)), MakeT<float>(od, {2}), MakeT<float>(od, {5})},
        attrs);
    ASSERT_EQ(out.size(), 1u);
    ExpectClose<float>(out[0], {5, 0, 0, 0, 0, 0, 0, 0, 0}, 0);
    out = RunNode("MaxPoolGrad",
                  {MakeT<float>(d, {0, 1, 7, 3, 7, 2, 7, 0, 1}), MakeT<float>(od, {7}), MakeT<float>(od, {5})},
                  attrs);
    ASSERT_EQ(out.size(), 1u);
    ExpectClose<float>(out[0], {0, 0, 5, 0, 0, 0, 0, 0, 0}, 0);
  }
}

// NHWC windows that tile the input (no padding, strides = window, sizes
// that divide) with 8 channels or more take a path of their own (whole
// vectors of 8 floats and a rest); windows that almost tile do not.
TEST(MaxPoolGradTest, TilingWindowsEveryChannelCount) {
  std::mt19937 rng(213);
  for (int64_t c : {8, 9, 15, 16, 17, 64}) {
    for (const PoolCase& p : {PoolCase{2, 8, 6, c, 2, 2, 2, 2, "VALID"}, PoolCase{1, 9, 6, c, 3, 3, 3, 3, "VALID"},
                              PoolCase{2, 8, 6, c, 2, 3, 2, 3, "SAME"}, PoolCase{2, 7, 6, c, 2, 2, 2, 2, "VALID"},
                              PoolCase{3, 34, 36, c, 2, 2, 2, 2, "VALID"}}) {
      for (int threads : {1, 2}) CheckMaxPoolGrad<float>(p, &rng, false, threads);
      CheckMaxPoolGrad<double>(p, &rng, false);
      CheckMaxPoolGrad<int32_t>(p, &rng, false);
      CheckMaxPoolGrad<int64_t>(p, &rng, false);
    }
  }
}

// Ties on the tiling path: 2x2 windows of equal values send each channel's
// gradient to the window's first element, in every lane of a vector.
TEST(MaxPoolGradTest, TilingWindowsTiesGoToTheFirstMaximum) {
  const PoolCase p{1, 2, 4, 9, 2, 2, 2, 2, "VALID"};
  const std::vector<double> x(NumElements(p.InDims()), 3.0);
  std::vector<double> g(NumElements(p.OutDims()));
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(i) + 1;
  std::vector<Tensor> out = RunNode("MaxPoolGrad", {MakeT<float>(p.InDims(), x), MakeT<float>(p.OutDims(), std::vector<double>(g.size(), 3.0)), MakeT<float>(p.OutDims(), g)},
                                    p.Attrs("DT_FLOAT"));
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> want(x.size(), 0.0);
  for (int64_t ox = 0; ox < 2; ++ox)
    for (int64_t ch = 0; ch < 9; ++ch) want[p.In(0, 0, 2 * ox, ch)] = g[p.Out(0, 0, ox, ch)];
  ExpectClose<float>(out[0], want, 0);
  // A -0 gradient lands as +0, as on the general path (zeros, then the
  // gradient added) and in TensorFlow's kernel.
  for (const PoolCase& q : {p, PoolCase{1, 3, 4, 9, 2, 2, 2, 2, "VALID"}}) {  // tiling, and not
    const std::vector<double> neg_zero(NumElements(q.OutDims()), -0.0);
    out = RunNode("MaxPoolGrad", {MakeT<float>(q.InDims(), std::vector<double>(NumElements(q.InDims()), 3.0)),
                                  MakeT<float>(q.OutDims(), std::vector<double>(neg_zero.size(), 3.0)),
                                  MakeT<float>(q.OutDims(), neg_zero)},
                  q.Attrs("DT_FLOAT"));
    ASSERT_EQ(out.size(), 1u);
    for (int64_t i = 0; i < out[0].NumElements(); ++i) EXPECT_FALSE(std::signbit(out[0].data<float>()[i])) << q.Name() << " " << i;
  }
}

// _MaxPoolGradReluGrad (made by the CPU optimizer from ReluGrad(MaxPoolGrad(
// x, y, g), x)) gives the bits of the two ops it replaces, on Relu outputs
// (zeros, so ties) and gradients with NaN, -0 and negative values: on the
// tiling path (8+ channels), disjoint windows (fewer channels, or not
// tiling), overlapping windows, NCHW, float and double, 1 and 2 threads.
template <typename T>
void CheckMaxPoolGradReluGrad(const PoolCase& p, std::mt19937* rng, int threads) {
  SCOPED_TRACE("_MaxPoolGradReluGrad " + p.Name() + " " + DtName(Dt<T>::value));
  std::vector<double> x = Uniform(NumElements(p.InDims()), -1, 1, rng);
  for (double& v : x) v = std::max(v, 0.0);  // a Relu's output
  const std::vector<double> y = RefMaxPool(p, x);
  std::vector<double> g = Uniform(static_cast<int64_t>(y.size()), -1, 1, rng);
  for (size_t i = 0; i < g.size(); i += 7) g[i] = -0.0;
  for (size_t i = 3; i < g.size(); i += 11) g[i] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Tensor> in = {MakeT<T>(p.InDims(), x), MakeT<T>(p.OutDims(), y), MakeT<T>(p.OutDims(), g)};
  const std::string attrs = p.Attrs(DtName(Dt<T>::value));
  const std::vector<Tensor> fused = RunNode("_MaxPoolGradReluGrad", in, attrs, 1, threads);
  const std::vector<Tensor> pooled = RunNode("MaxPoolGrad", in, attrs, 1, threads);
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(pooled.size(), 1u);
  const std::vector<Tensor> plain =
      RunNode("ReluGrad", {pooled[0], in[0]}, TypeAttr("T", DtName(Dt<T>::value)), 1, threads);
  ASSERT_EQ(plain.size(), 1u);
  ASSERT_EQ(DimsOf(fused[0]), p.InDims());
  EXPECT_EQ(std::memcmp(fused[0].raw_data(), plain[0].raw_data(), plain[0].TotalBytes()), 0);
}

TEST(MaxPoolGradReluGradTest, SameBitsAsMaxPoolGradThenReluGrad) {
  std::mt19937 rng(214);
  for (int64_t c : {3, 8, 13}) {
    for (bool nchw : {false, true}) {
      for (PoolCase p : {PoolCase{2, 8, 6, c, 2, 2, 2, 2, "VALID"}, PoolCase{2, 7, 6, c, 2, 2, 2, 2, "VALID"},
                         PoolCase{2, 7, 6, c, 3, 3, 2, 2, "SAME"}, PoolCase{2, 9, 8, c, 2, 2, 3, 3, "SAME"}}) {
        p.nchw = nchw;
        for (int threads : {1, 2}) CheckMaxPoolGradReluGrad<float>(p, &rng, threads);
        CheckMaxPoolGradReluGrad<double>(p, &rng, 2);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(AvgPoolGradTest, AllPaddingsFormatsAndWindows) {
  std::mt19937 rng(211);
  for (const PoolCase& p : AllCases(false)) {
    CheckAvgPoolGrad<float>(p, &rng, false);
    CheckAvgPoolGrad<double>(p, &rng, true);
  }
}

TEST(PoolGradTest, ParallelAndSingleThread) {
  std::mt19937 rng(212);
  for (bool nchw : {false, true}) {
    PoolCase p{3, 33, 35, 16, 3, 3, 2, 2, "SAME"};
    p.nchw = nchw;
    for (int threads : {2, 1}) {
      CheckMaxPoolGrad<float>(p, &rng, false, threads);
      CheckAvgPoolGrad<float>(p, &rng, false, threads);
    }
  }
}

// ---------------------------------------------------------------- errors

std::string PoolAttrs(const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                      const std::string& padding = "VALID") {
  return TypeAttr("T", "DT_FLOAT") + StrAttr("padding", padding) + IntListAttr("ksize", k) +
         IntListAttr("strides", s);
}

TEST(PoolErrorsTest, BadInputsAndAttrs) {
  const Tensor x4 = MakeT<float>({1, 4, 4, 1}, std::vector<double>(16, 1));
  const Tensor x3 = MakeT<float>({4, 4, 1}, std::vector<double>(16, 1));
  for (const char* op : {"MaxPool", "AvgPool"}) {
    SCOPED_TRACE(op);
    EXPECT_ERROR(TryNode(op, {x3}, PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1}), "pool"), Code::kInvalidArgument,
                 "tensor_in must be 4-dimensional", "pool");
    EXPECT_ERROR(TryNode(op, {x4}, PoolAttrs({1, 2, 2, 1, 1}, {1, 2, 2, 1}), "pool"), Code::kInvalidArgument,
                 "requires the ksize attribute to contain 4 values, but got: 5");
    EXPECT_ERROR(TryNode(op, {x4}, PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1, 1}), "pool"), Code::kInvalidArgument,
                 "requires the stride attribute to contain 4 values, but got: 5");
    EXPECT_ERROR(TryNode(op, {x4}, PoolAttrs({2, 2, 2, 1}, {1, 2, 2, 1}), "pool"), Code::kUnimplemented,
                 "Pooling is not yet supported on the batch dimension.");
    EXPECT_ERROR(TryNode(op, {x4}, PoolAttrs({1, 2, 2, 1}, {1, 0, 2, 1}), "pool"), Code::kInvalidArgument,
                 "Stride must be > 0");
  }
  EXPECT_ERROR(TryNode("AvgPool", {x4}, PoolAttrs({1, 1, 1, 2}, {1, 1, 1, 2}), "pool"), Code::kUnimplemented,
               "Non-spatial pooling is not yet supported");
  EXPECT_ERROR(TryNode("MaxPool", {x4}, PoolAttrs({1, 2, 1, 2}, {1, 1, 1, 2}), "pool"), Code::kUnimplemented,
               "exactly one of pooling across depth or pooling across width/height");
  EXPECT_ERROR(TryNode("MaxPool", {MakeT<float>({1, 2, 2, 3}, std::vector<double>(12))},
                       PoolAttrs({1, 1, 1, 2}, {1, 1, 1, 2}), "pool"),
               Code::kUnimplemented, "depth window to evenly divide the input depth");
}

TEST(PoolErrorsTest, ExplicitPaddings) {
  const Tensor x = MakeT<float>({1, 4, 4, 1}, std::vector<double>(16, 1));
  const std::string base = PoolAttrs({1, 2, 2, 1}, {1, 1, 1, 1}, "EXPLICIT");
  EXPECT_ERROR(TryNode("MaxPool", {x}, base + IntListAttr("explicit_paddings", {0, 0, 1, 1, 1, 1}), "pool"),
               Code::kInvalidArgument, "explicit_paddings attribute must contain 8 values, but got: 6");
  EXPECT_ERROR(TryNode("MaxPool", {x}, base + IntListAttr("explicit_paddings", {1, 0, 1, 1, 1, 1, 0, 0}), "pool"),
               Code::kInvalidArgument, "Nonzero explicit padding in the batch or depth dimensions");
  EXPECT_ERROR(TryNode("MaxPool", {x}, base + IntListAttr("explicit_paddings", {0, 0, -1, 1, 1, 1, 0, 0}), "pool"),
               Code::kInvalidArgument, "must be nonnegative");
  EXPECT_ERROR(TryNode("MaxPool", {x}, base + IntListAttr("explicit_paddings", {0, 0, 2, 0, 0, 0, 0, 0}), "pool"),
               Code::kInvalidArgument, "Top padding 2 needs to be smaller than the window size 2", "pool");
  EXPECT_ERROR(TryNode("MaxPool", {x},
                       PoolAttrs({1, 2, 2, 1}, {1, 1, 1, 1}, "SAME") +
                           IntListAttr("explicit_paddings", {0, 0, 1, 1, 1, 1, 0, 0}),
                       "pool"),
               Code::kInvalidArgument, "explicit_paddings attribute must be empty");
}

TEST(PoolErrorsTest, KnownShapesFailAtLoad) {
  // VALID window larger than a constant input.
  const std::string g = ConstFloat("c", {1, 2, 2, 1}, {1, 2, 3, 4}) +
                        NodeText("pool", "MaxPool", {"c"}, PoolAttrs({1, 3, 3, 1}, {1, 1, 1, 1}));
  EXPECT_ERROR(TryRun(g, {}, {"pool:0"}), Code::kInvalidArgument, "Negative dimension size");
  const std::string g2 = ConstFloat("c", {2, 2}, {1, 2, 3, 4}) +
                         NodeText("pool", "AvgPool", {"c"}, PoolAttrs({1, 1, 1, 1}, {1, 1, 1, 1}));
  EXPECT_ERROR(TryRun(g2, {}, {"pool:0"}), Code::kInvalidArgument, "Shape must be rank 4 but is rank 2");
}

TEST(PoolErrorsTest, GradientShapeMismatchesAndSessionSurvives) {
  const std::string attrs = PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1});
  const Tensor x = MakeT<float>({1, 4, 4, 1}, std::vector<double>(16, 1));
  const Tensor y = MakeT<float>({1, 2, 2, 1}, std::vector<double>(4, 1));
  const Tensor bad = MakeT<float>({1, 3, 3, 1}, std::vector<double>(9, 1));
  EXPECT_ERROR(TryNode("MaxPoolGrad", {x, bad, y}, attrs, "mpg"), Code::kInvalidArgument,
               "Expected orig_output shape to be [1,2,2,1], but got [1,3,3,1]", "mpg");
  EXPECT_ERROR(TryNode("MaxPoolGrad", {x, y, bad}, attrs, "mpg"), Code::kInvalidArgument,
               "Expected grad shape to be [1,2,2,1]");
  EXPECT_ERROR(TryNode("AvgPoolGrad", {MakeTensor<int32_t>(GR_INT32, {3}, {1, 4, 4}), y}, attrs, "apg"),
               Code::kInvalidArgument, "orig_input_shape must be 1-dimensional and 4 elements", "apg");
  EXPECT_ERROR(TryNode("AvgPoolGrad", {MakeTensor<int32_t>(GR_INT32, {4}, {1, 4, 4, 1}), bad}, attrs, "apg"),
               Code::kInvalidArgument, "Expected grad shape to be [1,2,2,1]");
  // A session that failed once runs fine with good inputs.
  std::unique_ptr<Session> s =
      CreateSession(ParseGraph(OneNodeGraph("MaxPoolGrad", {GR_FLOAT, GR_FLOAT, GR_FLOAT}, attrs)), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_FALSE(s->Run(FeedsFor({x, bad, y}), {"n:0"}, {}, &out).ok());
  ASSERT_TRUE(s->Run(FeedsFor({x, y, y}), {"n:0"}, {}, &out).ok());
  ExpectClose<float>(out[0], {1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0}, 0);
}

TEST(AvgPoolGradTest, ConstantShapeGivesStaticShape) {
  // The output shape comes from the constant orig_input_shape at load; a
  // consumer that needs rank 4 accepts it.
  const std::string g = ConstInt32("shape", {1, 4, 4, 1}) + PlaceholderNode("g", "DT_FLOAT") +
                        NodeText("apg", "AvgPoolGrad", {"shape", "g"}, PoolAttrs({1, 2, 2, 1}, {1, 2, 2, 1})) +
                        NodeText("mp", "MaxPool", {"apg"}, PoolAttrs({1, 4, 4, 1}, {1, 1, 1, 1}));
  std::vector<Tensor> out = RunOps(g, {{"g:0", MakeT<float>({1, 2, 2, 1}, {4, 8, 12, 16})}}, {"apg:0", "mp:0"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(DimsOf(out[0]), (Dims{1, 4, 4, 1}));
  ExpectClose<float>(out[1], {4}, 0);
}

}  // namespace
}  // namespace graphrt
