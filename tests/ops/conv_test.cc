// The 2-d convolution ops (Conv2D, DepthwiseConv2dNative, _FusedConv2D,
// Conv2DBackpropInput, Conv2DBackpropFilter) on the CPU plugin, through
// real sessions.
//
// Expected values come from naive references in this file: plain loops
// over logical NHWC indices, index arithmetic by division, double
// accumulation; output sizes and padding worked out here from TensorFlow's
// rules. Inputs are random with fixed seeds and exactly representable in
// the dtype under test, so the references see the same numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;  // NOLINT: the op-test vocabulary

// ------------------------------------------------------------- dtypes

enum class Ty { kF32, kF64, kBF16, kI32 };

const char* TyEnum(Ty t) {
  switch (t) {
    case Ty::kF32: return "DT_FLOAT";
    case Ty::kF64: return "DT_DOUBLE";
    case Ty::kBF16: return "DT_BFLOAT16";
    case Ty::kI32: return "DT_INT32";
  }
  return "";
}
DataType TyDtype(Ty t) {
  switch (t) {
    case Ty::kF32: return GR_FLOAT;
    case Ty::kF64: return GR_DOUBLE;
    case Ty::kBF16: return GR_BFLOAT16;
    case Ty::kI32: return GR_INT32;
  }
  return GR_INVALID;
}

// bfloat16 by truncation of values that are already exact bfloat16.
uint16_t ExactBf16(double v) {
  const float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}
double FromBf16(uint16_t h) {
  const uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Random values exactly representable in `t`: small integers for int32,
// 8 significant bits for bfloat16.
std::vector<double> RandomIn(Ty t, int64_t n, std::mt19937* rng) {
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::uniform_int_distribution<int> idist(-4, 4);
  for (double& x : v) {
    if (t == Ty::kI32) {
      x = idist(*rng);
    } else if (t == Ty::kBF16) {
      x = std::ldexp(std::round(std::ldexp(dist(*rng), 6)), -6);  // <= 8 significant bits
    } else {
      x = dist(*rng);
    }
  }
  return v;
}

// ------------------------------------------------------------ layouts

// Logical activations are NHWC; `nchw` stores them as NCHW.
Dims Stored(const Dims& nhwc, bool nchw) {
  return nchw ? Dims{nhwc[0], nhwc[3], nhwc[1], nhwc[2]} : nhwc;
}

int64_t StoredIndex(const Dims& nhwc, bool nchw, int64_t n, int64_t h, int64_t w, int64_t c) {
  const int64_t H = nhwc[1], W = nhwc[2], C = nhwc[3];
  return nchw ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
}

// A tensor of dtype `t` holding logical-NHWC `v` (filters: nchw = false).
Tensor Encode(Ty t, const Dims& nhwc, const std::vector<double>& v, bool nchw) {
  Tensor out(TyDtype(t), TensorShape(Stored(nhwc, nchw)));
  const int64_t total = NumElements(nhwc);
  EXPECT_EQ(total, static_cast<int64_t>(v.size()));
  for (int64_t i = 0; i < total; ++i) {
    int64_t dst = i;
    if (nhwc.size() == 4) {
      const int64_t c = i % nhwc[3], w = i / nhwc[3] % nhwc[2];
      const int64_t h = i / (nhwc[3] * nhwc[2]) % nhwc[1], n = i / (nhwc[3] * nhwc[2] * nhwc[1]);
      dst = StoredIndex(nhwc, nchw, n, h, w, c);
    }
    switch (t) {
      case Ty::kF32: out.data<float>()[dst] = static_cast<float>(v[i]); break;
      case Ty::kF64: out.data<double>()[dst] = v[i]; break;
      case Ty::kBF16: out.data<uint16_t>()[dst] = ExactBf16(v[i]); break;
      case Ty::kI32: out.data<int32_t>()[dst] = static_cast<int32_t>(v[i]); break;
    }
  }
  return out;
}

Tensor EncodeVec(Ty t, const std::vector<double>& v) {
  return Encode(t, {static_cast<int64_t>(v.size())}, v, false);
}

// Logical-NHWC doubles of a result tensor.
std::vector<double> Decode(Ty t, const Tensor& got, const Dims& nhwc, bool nchw) {
  std::vector<double> v(static_cast<size_t>(NumElements(nhwc)));
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    int64_t src = i;
    if (nhwc.size() == 4) {
      const int64_t c = i % nhwc[3], w = i / nhwc[3] % nhwc[2];
      const int64_t h = i / (nhwc[3] * nhwc[2]) % nhwc[1], n = i / (nhwc[3] * nhwc[2] * nhwc[1]);
      src = StoredIndex(nhwc, nchw, n, h, w, c);
    }
    switch (t) {
      case Ty::kF32: v[i] = got.data<float>()[src]; break;
      case Ty::kF64: v[i] = got.data<double>()[src]; break;
      case Ty::kBF16: v[i] = FromBf16(got.data<uint16_t>()[src]); break;
      case Ty::kI32: v[i] = got.data<int32_t>()[src]; break;
    }
  }
  return v;
}

// ------------------------------------------------------------ geometry

struct Window {
  std::string padding = "VALID";
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;  // EXPLICIT only
  bool nchw = false;
};

// TensorFlow's output size and leading padding along one axis, worked out
// independently: VALID = ceil((in - eff + 1) / s), SAME = ceil(in / s)
// with the odd padding after, EXPLICIT = floor((in + pads - eff) / s) + 1.
void RefAxis(const std::string& padding, int64_t in, int64_t k, int64_t s, int64_t d,
             int64_t explicit_before, int64_t explicit_after, int64_t* out, int64_t* before) {
  const int64_t eff = (k - 1) * d + 1;
  if (padding == "VALID") {
    *out = in >= eff ? (in - eff) / s + 1 : 0;
    *before = 0;
  } else if (padding == "SAME") {
    *out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (*out - 1) * s + eff - in);
    *before = total / 2;
  } else {
    const int64_t span = in + explicit_before + explicit_after;
    *out = span >= eff ? (span - eff) / s + 1 : 0;
    *before = explicit_before;
  }
}

struct Geo {
  int64_t n, h, w, c, kh, kw, ic_per_group, oc, groups, oh, ow, top, left;
  bool depthwise;
  int64_t mult;  // depthwise channel multiplier
};

// x: [n, h, w, c] logical; filter dims as given to the op.
Geo MakeGeo(const Dims& x, const Dims& f, const Window& win, bool depthwise) {
  Geo g;
  g.n = x[0];
  g.h = x[1];
  g.w = x[2];
  g.c = x[3];
  g.kh = f[0];
  g.kw = f[1];
  g.depthwise = depthwise;
  g.mult = f[3];
  if (depthwise) {
    g.ic_per_group = 1;
    g.groups = g.c;
    g.oc = g.c * f[3];
  } else {
    g.ic_per_group = f[2];
    g.groups = g.c / f[2];
    g.oc = f[3];
  }
  RefAxis(win.padding, g.h, g.kh, win.sh, win.dh, win.pt, win.pb, &g.oh, &g.top);
  RefAxis(win.padding, g.w, g.kw, win.sw, win.dw, win.pl, win.pr, &g.ow, &g.left);
  return g;
}

// Input channel read by output channel o at filter input index i, and the
// flat filter index of (fy, fx, i, o).
int64_t InChannel(const Geo& g, int64_t o, int64_t i) {
  if (g.depthwise) return o / g.mult;
  const int64_t ocg = g.oc / g.groups;
  return (o / ocg) * g.ic_per_group + i;
}
int64_t FilterIndex(const Geo& g, int64_t fy, int64_t fx, int64_t i, int64_t o) {
  if (g.depthwise) return ((fy * g.kw + fx) * g.c + o / g.mult) * g.mult + o % g.mult;
  return ((fy * g.kw + fx) * g.ic_per_group + i) * g.oc + o;
}

// Calls fn(n, oy, ox, o, x_index, f_index) for every multiply-add of the
// convolution (window positions inside the input only).
template <typename Fn>
void ForEachTap(const Geo& g, const Window& win, Fn fn) {
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t o = 0; o < g.oc; ++o)
          for (int64_t fy = 0; fy < g.kh; ++fy)
            for (int64_t fx = 0; fx < g.kw; ++fx) {
              const int64_t iy = oy * win.sh - g.top + fy * win.dh;
              const int64_t ix = ox * win.sw - g.left + fx * win.dw;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              for (int64_t i = 0; i < g.ic_per_group; ++i) {
                const int64_t xi = ((n * g.h + iy) * g.w + ix) * g.c + InChannel(g, o, i);
                fn(n, oy, ox, o, xi, FilterIndex(g, fy, fx, i, o));
              }
            }
}

int64_t OutIndex(const Geo& g, int64_t n, int64_t oy, int64_t ox, int64_t o) {
  return ((n * g.oh + oy) * g.ow + ox) * g.oc + o;
}

// Reference values and, per element, the sum of |terms| (for tolerances).
struct Ref {
  std::vector<double> val, mag;
};

Ref RefForward(const Geo& g, const Window& win, const std::vector<double>& x,
               const std::vector<double>& f) {
  Ref r;
  r.val.assign(static_cast<size_t>(g.n * g.oh * g.ow * g.oc), 0.0);
  r.mag = r.val;
  ForEachTap(g, win, [&](int64_t n, int64_t oy, int64_t ox, int64_t o, int64_t xi, int64_t fi) {
    const int64_t k = OutIndex(g, n, oy, ox, o);
    r.val[k] += x[xi] * f[fi];
    r.mag[k] += std::fabs(x[xi] * f[fi]);
  });
  return r;
}

Ref RefBackpropInput(const Geo& g, const Window& win, const std::vector<double>& f,
                     const std::vector<double>& dy) {
  Ref r;
  r.val.assign(static_cast<size_t>(g.n * g.h * g.w * g.c), 0.0);
  r.mag = r.val;
  ForEachTap(g, win, [&](int64_t n, int64_t oy, int64_t ox, int64_t o, int64_t xi, int64_t fi) {
    const double t = f[fi] * dy[OutIndex(g, n, oy, ox, o)];
    r.val[xi] += t;
    r.mag[xi] += std::fabs(t);
  });
  return r;
}

Ref RefBackpropFilter(const Geo& g, const Window& win, const std::vector<double>& x,
                      const std::vector<double>& dy, int64_t filter_elems) {
  Ref r;
  r.val.assign(static_cast<size_t>(filter_elems), 0.0);
  r.mag = r.val;
  ForEachTap(g, win, [&](int64_t n, int64_t oy, int64_t ox, int64_t o, int64_t xi, int64_t fi) {
    const double t = x[xi] * dy[OutIndex(g, n, oy, ox, o)];
    r.val[fi] += t;
    r.mag[fi] += std::fabs(t);
  });
  return r;
}

// |got - want| within the dtype's error: exact for int32; for floats a
// multiple of the unit roundoff of the accumulation (times the sum of
// |terms|) plus, for bfloat16, one rounding of the result.
void ExpectClose(Ty t, const std::vector<double>& got, const Ref& want) {
  ASSERT_EQ(got.size(), want.val.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = 0;
    switch (t) {
      case Ty::kI32: tol = 0; break;
      case Ty::kF64: tol = 1e-12 * want.mag[i] + 1e-300; break;
      case Ty::kF32: tol = 2e-6 * want.mag[i] + 1e-30; break;
      case Ty::kBF16: tol = std::ldexp(1.0, -8) * std::fabs(want.val[i]) + 2e-5 * want.mag[i] + 1e-30; break;
    }
    ASSERT_NEAR(got[i], want.val[i], tol) << "at logical NHWC index " << i;
  }
}

// --------------------------------------------------------- graph text

std::string ListAttr(const std::string& key, const std::vector<int64_t>& v) {
  std::string s = "attr { key: \"" + key + "\" value { list { ";
  for (int64_t x : v) s += "i: " + std::to_string(x) + " ";
  return s + "} } } ";
}
std::string StrAttr(const std::string& key, const std::string& v) {
  return "attr { key: \"" + key + "\" value { s: \"" + v + "\" } } ";
}
std::string StrListAttr(const std::string& key, const std::vector<std::string>& v) {
  std::string s = "attr { key: \"" + key + "\" value { list { ";
  for (const auto& x : v) s += "s: \"" + x + "\" ";
  return s + "} } } ";
}
std::string IntAttr(const std::string& key, int64_t v) {
  return "attr { key: \"" + key + "\" value { i: " + std::to_string(v) + " } } ";
}
std::string FloatAttr(const std::string& key, float v) {
  return "attr { key: \"" + key + "\" value { f: " + FloatText(v) + " } } ";
}
std::string BoolAttr(const std::string& key, bool v) {
  return "attr { key: \"" + key + "\" value { b: " + (v ? "true" : "false") + " } } ";
}

// The window attrs in the op's data_format.
std::string WindowAttrs(const Window& win, bool with_dilations = true) {
  std::string s = StrAttr("padding", win.padding) + StrAttr("data_format", win.nchw ? "NCHW" : "NHWC");
  s += ListAttr("strides", win.nchw ? std::vector<int64_t>{1, 1, win.sh, win.sw}
                                    : std::vector<int64_t>{1, win.sh, win.sw, 1});
  if (with_dilations) {
    s += ListAttr("dilations", win.nchw ? std::vector<int64_t>{1, 1, win.dh, win.dw}
                                        : std::vector<int64_t>{1, win.dh, win.dw, 1});
  }
  if (win.padding == "EXPLICIT") {
    s += ListAttr("explicit_paddings", win.nchw
                                           ? std::vector<int64_t>{0, 0, 0, 0, win.pt, win.pb, win.pl, win.pr}
                                           : std::vector<int64_t>{0, 0, win.pt, win.pb, win.pl, win.pr, 0, 0});
  }
  return s;
}

// All 17 digits: a double Const holds exactly the reference's value.
std::string ExactText(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string Placeholder(const std::string& name, Ty t) { return PlaceholderNode(name, TyEnum(t)); }

// Runs on a fresh session of `threads` threads; fails the test on error.
std::vector<Tensor> RunWith(const std::string& g, const Feeds& feeds,
                            const std::vector<std::string>& fetches, int threads) {
  return RunOps(g, feeds, fetches, threads);
}

// --------------------------------------------------------- the sweeps

std::string DimsText(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

std::vector<Window> AllWindows(bool nchw) {
  std::vector<Window> out;
  for (const char* pad : {"VALID", "SAME", "EXPLICIT"}) {
    for (auto [sh, sw] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 2}, {2, 3}}) {
      for (auto [dh, dw] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}}) {
        Window w;
        w.padding = pad;
        w.sh = sh;
        w.sw = sw;
        w.dh = dh;
        w.dw = dw;
        w.nchw = nchw;
        if (w.padding == "EXPLICIT") {
          w.pt = 2;
          w.pb = 1;
          w.pl = 0;
          w.pr = 3;
        }
        out.push_back(w);
      }
    }
  }
  return out;
}

std::string Describe(const Window& w) {
  return w.padding + " strides " + std::to_string(w.sh) + "x" + std::to_string(w.sw) +
         " dilations " + std::to_string(w.dh) + "x" + std::to_string(w.dw) +
         (w.nchw ? " NCHW" : " NHWC");
}

// Conv2D or DepthwiseConv2dNative of x [n,h,w,c] and filter f against the
// reference, with `threads` session threads.
void CheckForward(const std::string& op, Ty t, const Dims& x_dims, const Dims& f_dims,
                  const Window& win, int threads, uint32_t seed) {
  SCOPED_TRACE(op + " " + TyEnum(t) + " " + Describe(win) + " x " + DimsText(x_dims));
  std::mt19937 rng(seed);
  const bool depthwise = op == "DepthwiseConv2dNative";
  const Geo g = MakeGeo(x_dims, f_dims, win, depthwise);
  const std::vector<double> x = RandomIn(t, NumElements(x_dims), &rng);
  const std::vector<double> f = RandomIn(t, NumElements(f_dims), &rng);
  const std::string graph = Placeholder("x", t) + Placeholder("f", t) +
                            NodeText("y", op, {"x", "f"},
                                     TypeAttr("T", TyEnum(t)) + WindowAttrs(win));
  std::vector<Tensor> out = RunWith(graph, {{"x", Encode(t, x_dims, x, win.nchw)}, {"f", Encode(t, f_dims, f, false)}},
                                    {"y"}, threads);
  ASSERT_EQ(out.size(), 1u);
  const Dims y_dims = {g.n, g.oh, g.ow, g.oc};
  ASSERT_EQ(DimsOf(out[0]), Stored(y_dims, win.nchw));
  ExpectClose(t, Decode(t, out[0], y_dims, win.nchw), RefForward(g, win, x, f));
}

// Conv2DBackpropInput / Conv2DBackpropFilter against their references.
// (DepthwiseConv2dNativeBackpropInput / ...Filter when `depthwise`.)
void CheckBackprop(bool input_grad, Ty t, const Dims& x_dims, const Dims& f_dims,
                   const Window& win, int threads, uint32_t seed, bool depthwise = false) {
  const std::string op = std::string(depthwise ? "DepthwiseConv2dNative" : "Conv2D") +
                         (input_grad ? "BackpropInput" : "BackpropFilter");
  SCOPED_TRACE(op + " " + TyEnum(t) + " " + Describe(win) + " x " + DimsText(x_dims));
  std::mt19937 rng(seed);
  const Geo g = MakeGeo(x_dims, f_dims, win, depthwise);
  const Dims y_dims = {g.n, g.oh, g.ow, g.oc};
  const std::vector<double> x = RandomIn(t, NumElements(x_dims), &rng);
  const std::vector<double> f = RandomIn(t, NumElements(f_dims), &rng);
  const std::vector<double> dy = RandomIn(t, NumElements(y_dims), &rng);
  const Dims stored_x = Stored(x_dims, win.nchw);
  std::vector<int32_t> sizes;
  for (int64_t d : input_grad ? stored_x : f_dims) sizes.push_back(static_cast<int32_t>(d));
  const std::string attrs = TypeAttr("T", TyEnum(t)) + WindowAttrs(win);
  std::string graph = ConstInt32("sizes", sizes) + Placeholder("dy", t);
  Feeds feeds = {{"dy", Encode(t, y_dims, dy, win.nchw)}};
  if (input_grad) {
    graph += Placeholder("f", t) + NodeText("g", op, {"sizes", "f", "dy"}, attrs);
    feeds.push_back({"f", Encode(t, f_dims, f, false)});
  } else {
    graph += Placeholder("x", t) + NodeText("g", op, {"x", "sizes", "dy"}, attrs);
    feeds.push_back({"x", Encode(t, x_dims, x, win.nchw)});
  }
  std::vector<Tensor> out = RunWith(graph, feeds, {"g"}, threads);
  ASSERT_EQ(out.size(), 1u);
  if (input_grad) {
    ASSERT_EQ(DimsOf(out[0]), stored_x);
    ExpectClose(t, Decode(t, out[0], x_dims, win.nchw), RefBackpropInput(g, win, f, dy));
  } else {
    ASSERT_EQ(DimsOf(out[0]), f_dims);
    ExpectClose(t, Decode(t, out[0], f_dims, false),
                RefBackpropFilter(g, win, x, dy, NumElements(f_dims)));
  }
}

// Odd sizes: 2 images of 9x8 with 3 channels, a 3x2 filter to 5 channels.
const Dims kX = {2, 9, 8, 3};
const Dims kF = {3, 2, 3, 5};

// ============================================================== Conv2D

class Conv2DSweep : public ::testing::TestWithParam<std::tuple<Ty, bool>> {};

TEST_P(Conv2DSweep, EveryPaddingStrideDilationMatchesReference) {
  const auto [t, nchw] = GetParam();
  uint32_t seed = 1;
  for (const Window& w : AllWindows(nchw)) {
    CheckForward("Conv2D", t, kX, kF, w, 2, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST_P(Conv2DSweep, GroupedMatchesReference) {
  const auto [t, nchw] = GetParam();
  uint32_t seed = 100;
  // 6 input channels, filter depth 2: 3 groups of 2 -> 2 output channels each.
  for (const Window& w : AllWindows(nchw)) {
    CheckForward("Conv2D", t, {2, 7, 9, 6}, {3, 3, 2, 6}, w, 2, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST_P(Conv2DSweep, BackpropInputMatchesReference) {
  const auto [t, nchw] = GetParam();
  uint32_t seed = 200;
  for (const Window& w : AllWindows(nchw)) {
    CheckBackprop(true, t, kX, kF, w, 2, seed++);
    if (HasFatalFailure()) return;
    CheckBackprop(true, t, {2, 7, 9, 6}, {3, 3, 2, 6}, w, 2, seed++);  // grouped
    if (HasFatalFailure()) return;
  }
}

std::string SweepName(const ::testing::TestParamInfo<std::tuple<Ty, bool>>& info) {
  static const char* const kNames[] = {"F32", "F64", "BF16", "I32"};
  return std::string(kNames[static_cast<int>(std::get<0>(info.param))]) +
         (std::get<1>(info.param) ? "_NCHW" : "_NHWC");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Conv2DSweep,
                         ::testing::Combine(::testing::Values(Ty::kF32, Ty::kF64, Ty::kBF16, Ty::kI32),
                                            ::testing::Bool()),
                         SweepName);

// TensorFlow has no int32 Conv2DBackpropFilter.
class Conv2DBackpropFilterSweep : public ::testing::TestWithParam<std::tuple<Ty, bool>> {};

TEST_P(Conv2DBackpropFilterSweep, MatchesReference) {
  const auto [t, nchw] = GetParam();
  uint32_t seed = 300;
  for (const Window& w : AllWindows(nchw)) {
    CheckBackprop(false, t, kX, kF, w, 2, seed++);
    if (HasFatalFailure()) return;
    CheckBackprop(false, t, {2, 7, 9, 6}, {3, 3, 2, 6}, w, 2, seed++);  // grouped
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Conv2DBackpropFilterSweep,
                         ::testing::Combine(::testing::Values(Ty::kF32, Ty::kF64, Ty::kBF16),
                                            ::testing::Bool()),
                         SweepName);

// =============================================== DepthwiseConv2dNative

class DepthwiseSweep : public ::testing::TestWithParam<std::tuple<Ty, bool>> {};

TEST_P(DepthwiseSweep, EveryPaddingStrideDilationMatchesReference) {
  const auto [t, nchw] = GetParam();
  uint32_t seed = 400;
  for (Window w : AllWindows(nchw)) {
    if (w.sh != w.sw) continue;  // TensorFlow's depthwise kernel needs equal strides
    CheckForward("DepthwiseConv2dNative", t, {2, 9, 8, 3}, {3, 2, 3, 2}, w, 2, seed++);
    if (HasFatalFailure()) return;
    CheckForward("DepthwiseConv2dNative", t, {1, 6, 7, 5}, {2, 3, 5, 1}, w, 1, seed++);
    if (HasFatalFailure()) return;
  }
}

TEST_P(DepthwiseSweep, BackpropsMatchReference) {
  const auto [t, nchw] = GetParam();
  uint32_t seed = 450;
  for (Window w : AllWindows(nchw)) {
    if (w.sh != w.sw) continue;
    for (bool input_grad : {true, false}) {
      CheckBackprop(input_grad, t, {2, 9, 8, 3}, {3, 2, 3, 2}, w, 2, seed++, true);
      if (HasFatalFailure()) return;
      CheckBackprop(input_grad, t, {1, 6, 7, 5}, {2, 3, 5, 1}, w, 1, seed++, true);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DepthwiseSweep,
                         ::testing::Combine(::testing::Values(Ty::kF32, Ty::kF64, Ty::kBF16),
                                            ::testing::Bool()),
                         SweepName);

// ======================================== threads, big shapes, corners

// Shapes above the split threshold: batch chunks (n >= threads), bands of
// rows (one image), uneven chunks (3 images on 2 threads); 1 and 2 threads.
const std::pair<Dims, Dims> kBigShapes[] = {
    {{4, 20, 19, 8}, {3, 3, 8, 32}}, {{1, 41, 33, 8}, {3, 3, 8, 32}}, {{3, 23, 17, 16}, {3, 3, 16, 24}}};

class ConvThreadsTest : public ::testing::TestWithParam<std::tuple<int, int, bool>> {};

TEST_P(ConvThreadsTest, BigShapes) {
  const auto [shape, threads, nchw] = GetParam();
  const auto& [x, f] = kBigShapes[shape];
  uint32_t seed = 500 + 10 * static_cast<uint32_t>(shape) + (nchw ? 5 : 0);
  Window w;
  w.padding = "SAME";
  w.nchw = nchw;
  CheckForward("Conv2D", Ty::kF32, x, f, w, threads, seed++);
  if (HasFatalFailure()) return;
  w.padding = "EXPLICIT";
  w.pt = 3;
  w.pb = 0;
  w.pl = 1;
  w.pr = 2;
  w.sh = 2;
  CheckForward("Conv2D", Ty::kF32, x, f, w, threads, seed++);
  if (HasFatalFailure()) return;
  CheckForward("Conv2D", Ty::kBF16, x, f, w, threads, seed++);
  if (HasFatalFailure()) return;
  CheckBackprop(true, Ty::kF32, x, f, w, threads, seed++);
  if (HasFatalFailure()) return;
  CheckBackprop(false, Ty::kF32, x, f, w, threads, seed++);
  if (HasFatalFailure()) return;
  CheckBackprop(false, Ty::kF64, x, f, w, threads, seed++);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvThreadsTest,
                         ::testing::Combine(::testing::Values(0, 1, 2), ::testing::Values(1, 2),
                                            ::testing::Bool()));

TEST(ConvThreadsTest2, DepthwiseAndDoubleOnTwoThreads) {
  Window w;
  w.padding = "SAME";
  CheckForward("DepthwiseConv2dNative", Ty::kF32, {1, 40, 40, 32}, {3, 3, 32, 2}, w, 2, 600);
  CheckForward("Conv2D", Ty::kF64, {4, 20, 19, 8}, {3, 3, 8, 32}, w, 2, 601);
}

// NHWC backward convolutions run on blocked copies of their activations, in
// chunks of images sized by work: shapes like W8's (3 input channels, which
// oneDNN keeps plain; channel counts that are not a multiple of the 8-wide
// blocks) in several uneven chunks of images, on 1 and 2 threads,
// strided and padded.
TEST(ConvBackpropBlockedTest, ChunkedNhwcBackpropsMatchReference) {
  const std::pair<Dims, Dims> shapes[] = {{{5, 24, 24, 12}, {3, 3, 12, 20}},  // ~6 M MACs: 3 chunks
                                          {{6, 40, 40, 3}, {3, 3, 3, 32}}};   // ~8 M MACs: 4 chunks
  uint32_t seed = 700;
  for (const auto& [x, f] : shapes) {
    for (int threads : {1, 2}) {
      Window w;
      w.padding = "SAME";
      CheckBackprop(false, Ty::kF32, x, f, w, threads, seed++);
      if (HasFatalFailure()) return;
      CheckBackprop(true, Ty::kF32, x, f, w, threads, seed++);
      if (HasFatalFailure()) return;
      w.padding = "EXPLICIT";
      w.pt = 2;
      w.pl = 1;
      w.pr = 2;
      w.sh = 2;
      CheckBackprop(false, Ty::kF32, x, f, w, threads, seed++);
      if (HasFatalFailure()) return;
      CheckBackprop(true, Ty::kF32, x, f, w, threads, seed++);
      if (HasFatalFailure()) return;
    }
  }
}

// The filter gradient sums per-chunk partials whose chunks do not depend on
// the thread count: the same bits on 1, 2 and 3 threads.
void ExpectFilterGradientSameOnAnyThreadCount(const Dims& x_dims, const Dims& f_dims, uint32_t seed) {
  std::mt19937 rng(seed);
  const Dims y_dims = {x_dims[0], x_dims[1], x_dims[2], f_dims[3]};  // SAME, stride 1
  const std::vector<double> x = RandomIn(Ty::kF32, NumElements(x_dims), &rng);
  const std::vector<double> dy = RandomIn(Ty::kF32, NumElements(y_dims), &rng);
  std::vector<int32_t> sizes(f_dims.begin(), f_dims.end());
  Window w;
  w.padding = "SAME";
  const std::string graph = ConstInt32("sizes", sizes) + Placeholder("dy", Ty::kF32) + Placeholder("x", Ty::kF32) +
                            NodeText("g", "Conv2DBackpropFilter", {"x", "sizes", "dy"},
                                     TypeAttr("T", "DT_FLOAT") + WindowAttrs(w));
  const Feeds feeds = {{"dy", Encode(Ty::kF32, y_dims, dy, false)}, {"x", Encode(Ty::kF32, x_dims, x, false)}};
  const std::vector<Tensor> one = RunWith(graph, feeds, {"g"}, 1);
  ASSERT_EQ(one.size(), 1u);
  for (int threads : {2, 3}) {
    const std::vector<Tensor> many = RunWith(graph, feeds, {"g"}, threads);
    ASSERT_EQ(many.size(), 1u);
    ASSERT_EQ(many[0].NumElements(), one[0].NumElements());
    EXPECT_EQ(std::memcmp(many[0].data<float>(), one[0].data<float>(), one[0].NumElements() * sizeof(float)), 0)
        << threads << " threads";
  }
}

TEST(ConvBackpropBlockedTest, FilterGradientIsBitwiseEqualOnAnyThreadCount) {
  ExpectFilterGradientSameOnAnyThreadCount({7, 20, 18, 16}, {3, 3, 16, 24}, 800);
}

// Long patches (3x3x32) into 64 output channels: the float filter gradient
// runs on im2col + GEMM in bands of rows (conv_kernels.cc,
// FilterGradOnGemm), bands that cross images included (13-pixel rows).
TEST(Conv2DBackpropFilterTest, LongPatchesManyChannels) {
  for (const char* padding : {"SAME", "VALID"}) {
    Window w{padding};
    CheckBackprop(false, Ty::kF32, {3, 9, 13, 32}, {3, 3, 32, 64}, w, 2, 810);
    if (HasFatalFailure()) return;
  }
  ExpectFilterGradientSameOnAnyThreadCount({9, 9, 13, 32}, {3, 3, 32, 64}, 811);
}

TEST(ConvCornersTest, EmptyBatchAndEmptyOutput) {
  Window w;
  w.padding = "SAME";
  for (Ty t : {Ty::kF32, Ty::kF64, Ty::kBF16}) {
    CheckForward("Conv2D", t, {0, 5, 5, 3}, {3, 3, 3, 4}, w, 2, 1);
    CheckForward("DepthwiseConv2dNative", t, {0, 5, 5, 3}, {3, 3, 3, 2}, w, 2, 1);
    CheckBackprop(true, t, {0, 5, 5, 3}, {3, 3, 3, 4}, w, 2, 1);
    // An empty batch gives a zero filter gradient of the filter's shape.
    CheckBackprop(false, t, {0, 5, 5, 3}, {3, 3, 3, 4}, w, 2, 1);
  }
  // VALID with the window exactly one row too tall: no output rows; the
  // input gradient is then all zeros.
  Window v;
  CheckForward("Conv2D", Ty::kF32, {2, 2, 5, 3}, {3, 3, 3, 4}, v, 2, 2);
  CheckBackprop(true, Ty::kF32, {2, 2, 5, 3}, {3, 3, 3, 4}, v, 2, 2);
  CheckBackprop(false, Ty::kF32, {2, 2, 5, 3}, {3, 3, 3, 4}, v, 2, 2);
  // 1x1 input, 1x1 filter; filter larger than the input with SAME.
  Window s;
  s.padding = "SAME";
  CheckForward("Conv2D", Ty::kF32, {1, 1, 1, 1}, {1, 1, 1, 1}, s, 1, 3);
  CheckForward("Conv2D", Ty::kF32, {2, 2, 3, 4}, {5, 5, 4, 3}, s, 2, 3);
  CheckForward("Conv2D", Ty::kF64, {2, 2, 3, 4}, {5, 5, 4, 3}, s, 2, 3);
}

// Shapes that change from Run to Run in one session, on both plans.
TEST(ConvSessionTest, ShapesChangeBetweenRuns) {
  const std::string graph =
      Placeholder("x", Ty::kF32) + Placeholder("f", Ty::kF32) +
      NodeText("y", "Conv2D", {"x", "f"}, TypeAttr("T", "DT_FLOAT") + WindowAttrs(Window{"SAME"}));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(graph), 2);
  ASSERT_NE(s, nullptr);
  std::mt19937 rng(7);
  const Dims f_dims = {3, 3, 4, 6};
  const std::vector<double> f = RandomIn(Ty::kF32, NumElements(f_dims), &rng);
  for (const Dims& x_dims : {Dims{1, 5, 6, 4}, Dims{3, 9, 4, 4}, Dims{1, 5, 6, 4}}) {
    const std::vector<double> x = RandomIn(Ty::kF32, NumElements(x_dims), &rng);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", Encode(Ty::kF32, x_dims, x, false)}, {"f", Encode(Ty::kF32, f_dims, f, false)}},
                       {"y"}, {}, &out)
                    .ok());
    Window w{"SAME"};
    const Geo g = MakeGeo(x_dims, f_dims, w, false);
    ExpectClose(Ty::kF32, Decode(Ty::kF32, out[0], {g.n, g.oh, g.ow, g.oc}, false), RefForward(g, w, x, f));
  }
}

// Conv2DBackpropInput with input_sizes of two values (height, width).
TEST(Conv2DBackpropInputTest, TwoElementInputSizes) {
  std::mt19937 rng(8);
  const Dims x_dims = {2, 6, 7, 3}, f_dims = {2, 3, 3, 4};
  Window w{"SAME"};
  w.sh = 2;
  const Geo g = MakeGeo(x_dims, f_dims, w, false);
  const Dims y_dims = {g.n, g.oh, g.ow, g.oc};
  const std::vector<double> f = RandomIn(Ty::kF32, NumElements(f_dims), &rng);
  const std::vector<double> dy = RandomIn(Ty::kF32, NumElements(y_dims), &rng);
  const std::string graph = ConstInt32("sizes", {6, 7}) + Placeholder("f", Ty::kF32) + Placeholder("dy", Ty::kF32) +
                            NodeText("g", "Conv2DBackpropInput", {"sizes", "f", "dy"},
                                     TypeAttr("T", "DT_FLOAT") + WindowAttrs(w));
  std::vector<Tensor> out = RunOps(graph, {{"f", Encode(Ty::kF32, f_dims, f, false)}, {"dy", Encode(Ty::kF32, y_dims, dy, false)}}, {"g"});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(DimsOf(out[0]), x_dims);
  ExpectClose(Ty::kF32, Decode(Ty::kF32, out[0], x_dims, false), RefBackpropInput(g, w, f, dy));
}

// The three ops agree with each other as adjoints: <conv(x, f), dy> =
// <x, dx(f, dy)> = <f, df(x, dy)> (an independent check of the references).
TEST(ConvAdjointTest, ForwardAndBackpropsAreAdjoint) {
  std::mt19937 rng(9);
  Window w{"EXPLICIT"};
  w.pt = 1;
  w.pb = 2;
  w.pl = 2;
  w.pr = 0;
  w.sh = 2;
  w.dw = 2;
  const Dims x_dims = {2, 8, 9, 4}, f_dims = {3, 2, 2, 6};
  const Geo g = MakeGeo(x_dims, f_dims, w, false);
  const Dims y_dims = {g.n, g.oh, g.ow, g.oc};
  const std::vector<double> x = RandomIn(Ty::kF64, NumElements(x_dims), &rng);
  const std::vector<double> f = RandomIn(Ty::kF64, NumElements(f_dims), &rng);
  const std::vector<double> dy = RandomIn(Ty::kF64, NumElements(y_dims), &rng);
  const std::string attrs = TypeAttr("T", "DT_DOUBLE") + WindowAttrs(w);
  const std::string graph =
      Placeholder("x", Ty::kF64) + Placeholder("f", Ty::kF64) + Placeholder("dy", Ty::kF64) +
      ConstInt32("xs", {2, 8, 9, 4}) + ConstInt32("fs", {3, 2, 2, 6}) +
      NodeText("y", "Conv2D", {"x", "f"}, attrs) +
      NodeText("dx", "Conv2DBackpropInput", {"xs", "f", "dy"}, attrs) +
      NodeText("df", "Conv2DBackpropFilter", {"x", "fs", "dy"}, attrs);
  std::vector<Tensor> out =
      RunOps(graph, {{"x", Encode(Ty::kF64, x_dims, x, false)}, {"f", Encode(Ty::kF64, f_dims, f, false)},
                     {"dy", Encode(Ty::kF64, y_dims, dy, false)}},
             {"y", "dx", "df"}, /*threads=*/2);
  ASSERT_EQ(out.size(), 3u);
  double a = 0, b = 0, c = 0;
  for (int64_t i = 0; i < NumElements(y_dims); ++i) a += out[0].data<double>()[i] * dy[i];
  for (int64_t i = 0; i < NumElements(x_dims); ++i) b += out[1].data<double>()[i] * x[i];
  for (int64_t i = 0; i < NumElements(f_dims); ++i) c += out[2].data<double>()[i] * f[i];
  EXPECT_NEAR(a, b, 1e-9 * std::fabs(a) + 1e-9);
  EXPECT_NEAR(a, c, 1e-9 * std::fabs(a) + 1e-9);
  EXPECT_GT(std::fabs(a), 1.0);  // not trivially zero
}

// ========================================================= _FusedConv2D

struct FusedCase {
  std::vector<std::string> ops;
  float alpha = 0.2f;
};

double RefAct(const std::string& act, double v, double alpha) {
  if (act == "Relu") return std::max(v, 0.0);
  if (act == "Relu6") return std::min(std::max(v, 0.0), 6.0);
  if (act == "Elu") return v < 0 ? std::expm1(v) : v;
  if (act == "LeakyRelu") return v > 0 ? v : v * alpha;
  return v;
}

void CheckFused(Ty t, const FusedCase& fc, const Dims& x_dims, const Dims& f_dims, const Window& win,
                bool const_filter, int threads, uint32_t seed) {
  std::string name;
  for (const auto& o : fc.ops) name += o + " ";
  SCOPED_TRACE("_FusedConv2D " + name + TyEnum(t) + " " + Describe(win) + (const_filter ? " const filter" : ""));
  std::mt19937 rng(seed);
  const Geo g = MakeGeo(x_dims, f_dims, win, false);
  const std::vector<double> x = RandomIn(t, NumElements(x_dims), &rng);
  const std::vector<double> f = RandomIn(t, NumElements(f_dims), &rng);
  const bool bn = fc.ops[0] == "FusedBatchNorm";
  const int num_args = bn ? 4 : 1;
  std::vector<std::vector<double>> args;
  for (int i = 0; i < num_args; ++i) {
    std::vector<double> a = RandomIn(t, g.oc, &rng);
    if (bn && i == 3) for (double& v : a) v = std::fabs(v) + 0.5;  // variance > 0
    args.push_back(a);
  }
  std::string graph = Placeholder("x", t);
  std::vector<std::string> inputs = {"x", "f"};
  Feeds feeds = {{"x", Encode(t, x_dims, x, win.nchw)}};
  if (const_filter) {
    std::vector<std::string> vals;
    for (double v : f) vals.push_back(ExactText(v));
    graph += ConstNode("f", TyEnum(t), f_dims, t == Ty::kF64 ? "double_val" : "float_val", vals);
  } else {
    graph += Placeholder("f", t);
    feeds.push_back({"f", Encode(t, f_dims, f, false)});
  }
  for (int i = 0; i < num_args; ++i) {
    const std::string an = "arg" + std::to_string(i);
    graph += Placeholder(an, t);
    inputs.push_back(an);
    feeds.push_back({an, EncodeVec(t, args[i])});
  }
  std::string attrs = TypeAttr("T", TyEnum(t)) + WindowAttrs(win) + IntAttr("num_args", num_args) +
                      StrListAttr("fused_ops", fc.ops) + FloatAttr("leakyrelu_alpha", fc.alpha) +
                      FloatAttr("epsilon", 0.001f);
  if (const_filter) attrs += BoolAttr("_weights_const", true);
  graph += NodeText("y", "_FusedConv2D", inputs, attrs);
  std::unique_ptr<Session> s = CreateSession(ParseGraph(graph), threads);
  ASSERT_NE(s, nullptr);
  Ref r = RefForward(g, win, x, f);
  const std::string act = fc.ops.size() > 1 ? fc.ops[1] : "";
  for (int64_t i = 0; i < static_cast<int64_t>(r.val.size()); ++i) {
    const int64_t o = i % g.oc;
    double v = r.val[i];
    if (bn) {
      const double scale = args[0][o] / std::sqrt(args[3][o] + static_cast<double>(0.001f));
      v = (v - args[2][o]) * scale + args[1][o];
      r.mag[i] = r.mag[i] * std::fabs(scale) + std::fabs(args[2][o] * scale) + std::fabs(args[1][o]);
    } else {
      v += args[0][o];
      r.mag[i] += std::fabs(args[0][o]);
    }
    r.val[i] = RefAct(act, v, fc.alpha);
  }
  // Several runs: a cached (constant) filter must keep giving the same result.
  for (int run = 0; run < 2; ++run) {
    std::vector<Tensor> out;
    const Status st = s->Run(feeds, {"y"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    ExpectClose(t, Decode(t, out[0], {g.n, g.oh, g.ow, g.oc}, win.nchw), r);
  }
}

class FusedSweep : public ::testing::TestWithParam<std::tuple<Ty, bool>> {};

TEST_P(FusedSweep, EveryFusionMatchesUnfusedReference) {
  const auto [t, nchw] = GetParam();
  const std::vector<FusedCase> cases = {
      {{"BiasAdd"}},          {{"BiasAdd", "Relu"}},           {{"BiasAdd", "Relu6"}},
      {{"BiasAdd", "Elu"}},   {{"BiasAdd", "LeakyRelu"}, 0.3f}, {{"FusedBatchNorm"}},
      {{"FusedBatchNorm", "Relu"}}, {{"FusedBatchNorm", "LeakyRelu"}, 0.1f}};
  uint32_t seed = 600;
  std::vector<Window> windows = AllWindows(nchw);
  for (size_t i = 0; i < cases.size(); ++i) {
    // Scale up so that Relu6 clips: values reach well above 6.
    const Window& w = windows[(i * 5) % windows.size()];
    CheckFused(t, cases[i], {2, 9, 8, 6}, {3, 2, 6, 8}, w, false, 2, seed++);
    if (HasFatalFailure()) return;
    if (t != Ty::kBF16) {
      CheckFused(t, cases[i], {2, 9, 8, 6}, {3, 2, 6, 8}, w, true, 1, seed++);
      if (HasFatalFailure()) return;
    }
  }
  // Big enough for the parallel path, constant filter.
  Window w{"SAME"};
  w.nchw = nchw;
  if (t != Ty::kBF16) CheckFused(t, {{"BiasAdd", "Relu"}}, {4, 20, 21, 8}, {3, 3, 8, 32}, w, true, 2, seed++);
  CheckFused(t, {{"BiasAdd", "Relu6"}}, {1, 41, 20, 8}, {3, 3, 8, 32}, w, false, 2, seed++);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedSweep,
                         ::testing::Combine(::testing::Values(Ty::kF32, Ty::kF64, Ty::kBF16),
                                            ::testing::Bool()),
                         SweepName);

// ============================================ few output channels (f32)

// Float convolutions with few output channels (NarrowConvApplies: below 16
// with AVX-512's blocking, fewer with AVX2's), unit stride and dilation
// along W and output rows of 12 or more run on ops/nn/cpu/narrow_conv.h
// instead of oneDNN. These shapes reach it with one and several channel
// blocks, one and two vectors of columns, partial vectors, both layouts
// (15 channels only with the AVX-512 blocking, which the ctest
// conv_test_narrow_avx512 forces); the windows with W stride or dilation
// fall back to oneDNN in the same sweep.
const std::pair<Dims, Dims> kNarrowShapes[] = {{{2, 13, 29, 1}, {5, 5, 1, 6}},
                                               {{2, 11, 17, 3}, {3, 3, 3, 9}},
                                               {{1, 9, 40, 2}, {3, 2, 2, 15}},
                                               {{2, 6, 14, 4}, {2, 3, 4, 1}}};

TEST(NarrowConvTest, EveryWindowMatchesReference) {
  uint32_t seed = 900;
  for (bool nchw : {false, true}) {
    for (const auto& [x, f] : kNarrowShapes) {
      for (const Window& w : AllWindows(nchw)) {
        CheckForward("Conv2D", Ty::kF32, x, f, w, 1 + seed % 2, seed);
        ++seed;
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(NarrowConvTest, FusedEpiloguesMatchReference) {
  const std::vector<FusedCase> cases = {
      {{"BiasAdd"}},          {{"BiasAdd", "Relu"}},           {{"BiasAdd", "Relu6"}},
      {{"BiasAdd", "Elu"}},   {{"BiasAdd", "LeakyRelu"}, 0.3f}, {{"FusedBatchNorm"}},
      {{"FusedBatchNorm", "Relu"}}, {{"FusedBatchNorm", "LeakyRelu"}, 0.1f}};
  uint32_t seed = 950;
  for (bool nchw : {false, true}) {
    Window w{"SAME"};
    w.nchw = nchw;
    for (const FusedCase& fc : cases) {
      CheckFused(Ty::kF32, fc, {2, 14, 20, 1}, {5, 5, 1, 6}, w, seed % 2 == 0, 2, seed);
      ++seed;
      if (HasFatalFailure()) return;
    }
  }
}

// The filter gradients of the same convolutions: the narrow filter
// gradient where the forward convolution is narrow, oneDNN where not.
TEST(NarrowConvTest, FilterGradientOfEveryWindowMatchesReference) {
  uint32_t seed = 1900;
  for (bool nchw : {false, true}) {
    for (const auto& [x, f] : kNarrowShapes) {
      for (const Window& w : AllWindows(nchw)) {
        CheckBackprop(false, Ty::kF32, x, f, w, 1 + seed % 2, seed);
        ++seed;
        if (HasFatalFailure()) return;
      }
    }
  }
}

// LeNet's first filter gradient: against the reference, and the same bits
// on any thread count (fixed chunks of the batch; 9 images do not divide
// into them evenly).
TEST(NarrowConvTest, LeNetFilterGradient) {
  Window w{"SAME"};
  CheckBackprop(false, Ty::kF32, {64, 28, 28, 1}, {5, 5, 1, 6}, w, 2, 1990);
  if (HasFatalFailure()) return;
  ExpectFilterGradientSameOnAnyThreadCount({9, 28, 28, 1}, {5, 5, 1, 6}, 1991);
}

// LeNet's first layer at its benchmark size, split over the pool or not.
TEST(NarrowConvTest, LeNetFirstLayerOnOneAndTwoThreads) {
  Window w{"SAME"};
  for (int threads : {1, 2}) {
    CheckFused(Ty::kF32, {{"BiasAdd", "Relu"}}, {64, 28, 28, 1}, {5, 5, 1, 6}, w, true, threads, 990);
    if (HasFatalFailure()) return;
  }
  w.padding = "VALID";
  w.sh = 2;
  w.dh = 2;
  CheckForward("Conv2D", Ty::kF32, {9, 30, 31, 3}, {3, 4, 3, 7}, w, 2, 991);
}

// A constant filter's weights are laid out once per shape; new input shapes
// in the same session still see the right filter.
TEST(FusedConvTest, ConstFilterAcrossShapes) {
  std::mt19937 rng(10);
  const Dims f_dims = {3, 3, 4, 16};
  const std::vector<double> f = RandomIn(Ty::kF32, NumElements(f_dims), &rng);
  const std::vector<double> bias = RandomIn(Ty::kF32, 16, &rng);
  std::vector<std::string> fv, bv;
  for (double v : f) fv.push_back(FloatText(static_cast<float>(v)));
  for (double v : bias) bv.push_back(FloatText(static_cast<float>(v)));
  Window w{"SAME"};
  const std::string graph =
      Placeholder("x", Ty::kF32) + ConstNode("f", "DT_FLOAT", f_dims, "float_val", fv) +
      ConstNode("b", "DT_FLOAT", {16}, "float_val", bv) +
      NodeText("y", "_FusedConv2D", {"x", "f", "b"},
               TypeAttr("T", "DT_FLOAT") + WindowAttrs(w) + IntAttr("num_args", 1) +
                   StrListAttr("fused_ops", {"BiasAdd"}) + BoolAttr("_weights_const", true));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(graph), 2);
  ASSERT_NE(s, nullptr);
  for (const Dims& x_dims : {Dims{2, 8, 8, 4}, Dims{5, 11, 7, 4}, Dims{2, 8, 8, 4}}) {
    const std::vector<double> x = RandomIn(Ty::kF32, NumElements(x_dims), &rng);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", Encode(Ty::kF32, x_dims, x, false)}}, {"y"}, {}, &out).ok());
    const Geo g = MakeGeo(x_dims, f_dims, w, false);
    Ref r = RefForward(g, w, x, f);
    for (size_t i = 0; i < r.val.size(); ++i) r.val[i] += bias[i % 16];
    ExpectClose(Ty::kF32, Decode(Ty::kF32, out[0], {g.n, g.oh, g.ow, g.oc}, false), r);
  }
}

// Several client threads Run one session at once: the kernel's plans and
// its cached constant weights are shared.
TEST(FusedConvTest, ConcurrentRunsShareOneKernel) {
  std::mt19937 rng(13);
  const Dims f_dims = {3, 3, 8, 16}, x_dims = {2, 12, 11, 8};
  const std::vector<double> f = RandomIn(Ty::kF32, NumElements(f_dims), &rng);
  std::vector<std::string> fv, bv;
  for (double v : f) fv.push_back(FloatText(static_cast<float>(v)));
  const std::vector<double> bias = RandomIn(Ty::kF32, 16, &rng);
  for (double v : bias) bv.push_back(FloatText(static_cast<float>(v)));
  Window w{"SAME"};
  const std::string graph =
      Placeholder("x", Ty::kF32) + ConstNode("f", "DT_FLOAT", f_dims, "float_val", fv) +
      ConstNode("b", "DT_FLOAT", {16}, "float_val", bv) +
      NodeText("y", "_FusedConv2D", {"x", "f", "b"},
               TypeAttr("T", "DT_FLOAT") + WindowAttrs(w) + IntAttr("num_args", 1) +
                   StrListAttr("fused_ops", {"BiasAdd", "Relu"}) + BoolAttr("_weights_const", true));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(graph), 2);
  ASSERT_NE(s, nullptr);
  std::vector<std::vector<double>> xs;
  std::vector<Ref> refs;
  const Geo g = MakeGeo(x_dims, f_dims, w, false);
  for (int i = 0; i < 4; ++i) {
    xs.push_back(RandomIn(Ty::kF32, NumElements(x_dims), &rng));
    Ref r = RefForward(g, w, xs.back(), f);
    for (size_t k = 0; k < r.val.size(); ++k) r.val[k] = std::max(0.0, r.val[k] + bias[k % 16]);
    refs.push_back(r);
  }
  std::vector<std::vector<std::vector<double>>> got(4);
  std::vector<Status> status(4);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      for (int run = 0; run < 5; ++run) {
        std::vector<Tensor> out;
        status[i] = s->Run({{"x", Encode(Ty::kF32, x_dims, xs[i], false)}}, {"y"}, {}, &out);
        if (!status[i].ok()) return;
        got[i].push_back(Decode(Ty::kF32, out[0], {g.n, g.oh, g.ow, g.oc}, false));
      }
    });
  }
  for (auto& c : clients) c.join();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(status[i].ok()) << status[i];
    for (const auto& v : got[i]) ExpectClose(Ty::kF32, v, refs[i]);
  }
}

// Without the attr a fed filter that changes between runs is re-read.
TEST(Conv2DTest, FedFilterChangesBetweenRuns) {
  Window w{"SAME"};
  const std::string graph =
      Placeholder("x", Ty::kF32) + Placeholder("f", Ty::kF32) +
      NodeText("y", "Conv2D", {"x", "f"}, TypeAttr("T", "DT_FLOAT") + WindowAttrs(w));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(graph), 2);
  ASSERT_NE(s, nullptr);
  std::mt19937 rng(11);
  const Dims x_dims = {2, 6, 6, 16}, f_dims = {3, 3, 16, 16};
  const std::vector<double> x = RandomIn(Ty::kF32, NumElements(x_dims), &rng);
  for (int run = 0; run < 3; ++run) {
    const std::vector<double> f = RandomIn(Ty::kF32, NumElements(f_dims), &rng);
    std::vector<Tensor> out;
    ASSERT_TRUE(s->Run({{"x", Encode(Ty::kF32, x_dims, x, false)}, {"f", Encode(Ty::kF32, f_dims, f, false)}},
                       {"y"}, {}, &out)
                    .ok());
    const Geo g = MakeGeo(x_dims, f_dims, w, false);
    ExpectClose(Ty::kF32, Decode(Ty::kF32, out[0], {g.n, g.oh, g.ow, g.oc}, false), RefForward(g, w, x, f));
  }
}

// =============================================================== errors

// A Conv2D graph with placeholders of unknown shape (errors come from the
// kernel) and the given attrs.
std::string ConvGraph(const std::string& op, const std::string& attrs, const std::string& t = "DT_FLOAT") {
  return PlaceholderNode("x", t) + PlaceholderNode("f", t) +
         NodeText("y", op, {"x", "f"}, TypeAttr("T", t) + attrs);
}

Feeds ConvFeeds(const Dims& x, const Dims& f) {
  return {{"x", Tensor(GR_FLOAT, TensorShape(x))}, {"f", Tensor(GR_FLOAT, TensorShape(f))}};
}

std::string Attrs(const std::string& padding, std::vector<int64_t> strides,
                  const std::string& extra = "") {
  return StrAttr("padding", padding) + ListAttr("strides", strides) + extra;
}

TEST(ConvErrorsTest, BadStrides) {
  const Feeds feeds = ConvFeeds({1, 5, 5, 2}, {3, 3, 2, 2});
  for (const char* op : {"Conv2D", "DepthwiseConv2dNative"}) {
    EXPECT_ERROR(TryRun(ConvGraph(op, Attrs("SAME", {2, 1, 1, 1})), feeds, {"y"}), Code::kInvalidArgument,
                 "Current implementation does not yet support strides in the batch and depth dimensions.");
    EXPECT_ERROR(TryRun(ConvGraph(op, Attrs("SAME", {1, 1, 1, 2})), feeds, {"y"}), Code::kInvalidArgument,
                 "strides in the batch and depth dimensions");
    EXPECT_ERROR(TryRun(ConvGraph(op, Attrs("SAME", {1, 1, 1})), feeds, {"y"}), Code::kInvalidArgument,
                 "requires the stride attribute to contain 4 values, but got: 3");
    EXPECT_ERROR(TryRun(ConvGraph(op, Attrs("SAME", {1, 0, 1, 1})), feeds, {"y"}), Code::kInvalidArgument,
                 "Row and column strides should be larger than 0.");
    EXPECT_ERROR(TryRun(ConvGraph(op, Attrs("SAME", {1, 1, 1, 1}, ListAttr("dilations", {1, 1, 1}))), feeds, {"y"}),
                 Code::kInvalidArgument, "requires the dilation attribute to contain 4 values, but got: 3");
    EXPECT_ERROR(TryRun(ConvGraph(op, Attrs("SAME", {1, 1, 1, 1}, ListAttr("dilations", {1, 1, 1, 2}))), feeds, {"y"}),
                 Code::kInvalidArgument, "dilations in the batch and depth dimensions");
  }
  EXPECT_ERROR(TryRun(ConvGraph("DepthwiseConv2dNative", Attrs("SAME", {1, 1, 2, 1})), feeds, {"y"}),
               Code::kInvalidArgument,
               "Current implementation only supports equal length strides in the row and column dimensions.");
}

// The depthwise backprops refuse unequal row and column strides as the
// forward op does.
TEST(ConvErrorsTest, DepthwiseBackpropsNeedEqualStrides) {
  const std::string attrs = TypeAttr("T", "DT_FLOAT") + Attrs("SAME", {1, 1, 2, 1});
  const Feeds input_feeds = {{"f", Tensor(GR_FLOAT, TensorShape({3, 3, 2, 1}))},
                             {"dy", Tensor(GR_FLOAT, TensorShape({1, 5, 3, 2}))}};
  EXPECT_ERROR(TryRun(ConstInt32("sizes", {1, 5, 5, 2}) + PlaceholderNode("f", "DT_FLOAT") +
                          PlaceholderNode("dy", "DT_FLOAT") +
                          NodeText("g", "DepthwiseConv2dNativeBackpropInput", {"sizes", "f", "dy"}, attrs),
                      input_feeds, {"g"}),
               Code::kInvalidArgument, "only supports equal length strides in the row and column dimensions");
  const Feeds filter_feeds = {{"x", Tensor(GR_FLOAT, TensorShape({1, 5, 5, 2}))},
                              {"dy", Tensor(GR_FLOAT, TensorShape({1, 5, 3, 2}))}};
  EXPECT_ERROR(TryRun(ConstInt32("sizes", {3, 3, 2, 1}) + PlaceholderNode("x", "DT_FLOAT") +
                          PlaceholderNode("dy", "DT_FLOAT") +
                          NodeText("g", "DepthwiseConv2dNativeBackpropFilter", {"x", "sizes", "dy"}, attrs),
                      filter_feeds, {"g"}),
               Code::kInvalidArgument, "only supports equal length strides in the row and column dimensions");
}

TEST(ConvErrorsTest, BadExplicitPaddings) {
  const Feeds feeds = ConvFeeds({1, 5, 5, 2}, {3, 3, 2, 2});
  EXPECT_ERROR(TryRun(ConvGraph("Conv2D", Attrs("EXPLICIT", {1, 1, 1, 1}, ListAttr("explicit_paddings", {0, 0, 1, 1, 1, 1}))), feeds, {"y"}),
               Code::kInvalidArgument, "explicit_paddings attribute must contain 8 values, but got: 6");
  EXPECT_ERROR(TryRun(ConvGraph("Conv2D", Attrs("EXPLICIT", {1, 1, 1, 1})), feeds, {"y"}),
               Code::kInvalidArgument, "explicit_paddings attribute must contain 8 values, but got: 0");
  EXPECT_ERROR(TryRun(ConvGraph("Conv2D", Attrs("EXPLICIT", {1, 1, 1, 1}, ListAttr("explicit_paddings", {0, 0, 1, -1, 1, 1, 0, 0}))), feeds, {"y"}),
               Code::kInvalidArgument, "All elements of explicit_paddings must be nonnegative");
  EXPECT_ERROR(TryRun(ConvGraph("Conv2D", Attrs("EXPLICIT", {1, 1, 1, 1}, ListAttr("explicit_paddings", {1, 0, 1, 1, 1, 1, 0, 0}))), feeds, {"y"}),
               Code::kInvalidArgument, "Nonzero explicit padding in the batch or depth dimensions is not supported");
  EXPECT_ERROR(TryRun(ConvGraph("Conv2D", Attrs("EXPLICIT", {1, 1, 1, 1}, StrAttr("data_format", "NCHW") + ListAttr("explicit_paddings", {0, 0, 0, 1, 1, 1, 0, 0}))), feeds, {"y"}),
               Code::kInvalidArgument, "Nonzero explicit padding in the batch or depth dimensions is not supported");
  EXPECT_ERROR(TryRun(ConvGraph("Conv2D", Attrs("SAME", {1, 1, 1, 1}, ListAttr("explicit_paddings", {0, 0, 1, 1, 1, 1, 0, 0}))), feeds, {"y"}),
               Code::kInvalidArgument, "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
}

TEST(ConvErrorsTest, WrongRanksAndDepths) {
  const std::string g = ConvGraph("Conv2D", Attrs("VALID", {1, 1, 1, 1}));
  EXPECT_ERROR(TryRun(g, ConvFeeds({5, 5, 2}, {3, 3, 2, 2}), {"y"}), Code::kInvalidArgument, "input must be 4-dimensional", "[5,5,2]");
  EXPECT_ERROR(TryRun(g, ConvFeeds({1, 5, 5, 2}, {3, 3, 2}), {"y"}), Code::kInvalidArgument, "filter must be 4-dimensional: [3,3,2]");
  EXPECT_ERROR(TryRun(g, ConvFeeds({1, 5, 5, 5}, {3, 3, 2, 2}), {"y"}), Code::kInvalidArgument,
               "input depth must be evenly divisible by filter depth: 5 vs 2");
  EXPECT_ERROR(TryRun(g, ConvFeeds({1, 5, 5, 4}, {3, 3, 2, 3}), {"y"}), Code::kInvalidArgument,
               "output depth must be evenly divisible by number of groups: 3 vs 2");
  EXPECT_ERROR(TryRun(g, ConvFeeds({1, 5, 5, 2}, {3, 0, 2, 3}), {"y"}), Code::kInvalidArgument,
               "filter must not have zero elements");
  EXPECT_ERROR(TryRun(g, ConvFeeds({1, 1, 5, 2}, {3, 3, 2, 2}), {"y"}), Code::kInvalidArgument,
               "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 3, stride: 1]");
  EXPECT_ERROR(TryRun(ConvGraph("DepthwiseConv2dNative", Attrs("VALID", {1, 1, 1, 1})), ConvFeeds({1, 5, 5, 3}, {3, 3, 4, 2}), {"y"}),
               Code::kInvalidArgument, "input and filter must have the same depth: 3 vs 4");
  // The depthwise backprops check the filter depth against the input's.
  const std::string dw_in = PlaceholderNode("s", "DT_INT32") + PlaceholderNode("f", "DT_FLOAT") +
                            PlaceholderNode("dy", "DT_FLOAT") +
                            NodeText("g", "DepthwiseConv2dNativeBackpropInput", {"s", "f", "dy"},
                                     TypeAttr("T", "DT_FLOAT") + Attrs("VALID", {1, 1, 1, 1}));
  EXPECT_ERROR(TryRun(dw_in, {{"s", MakeTensor<int32_t>(GR_INT32, {4}, {1, 5, 5, 3})},
                              {"f", Tensor(GR_FLOAT, TensorShape({3, 3, 4, 2}))},
                              {"dy", Tensor(GR_FLOAT, TensorShape({1, 3, 3, 8}))}},
                      {"g"}),
               Code::kInvalidArgument,
               "DepthwiseConv2dNativeBackpropInput: input and filter must have the same depth: 3 vs 4");
  EXPECT_ERROR(TryRun(dw_in, {{"s", MakeTensor<int32_t>(GR_INT32, {4}, {1, 5, 5, 3})},
                              {"f", Tensor(GR_FLOAT, TensorShape({3, 3, 3, 2}))},
                              {"dy", Tensor(GR_FLOAT, TensorShape({1, 3, 3, 5}))}},
                      {"g"}),
               Code::kInvalidArgument,
               "DepthwiseConv2dNativeBackpropInput: filter and out_backprop must have the same out_depth");
}

// With shapes known when the graph is loaded, the shape function reports.
TEST(ConvErrorsTest, ShapeFunctionCatchesKnownShapes) {
  auto shaped = [](const std::string& name, const Dims& d) {
    std::string shape = "attr { key: \"shape\" value { shape { ";
    for (int64_t x : d) shape += "dim { size: " + std::to_string(x) + " } ";
    return NodeText(name, "Placeholder", {}, TypeAttr("dtype", "DT_FLOAT") + shape + "} } } ");
  };
  const std::string attrs = TypeAttr("T", "DT_FLOAT") + Attrs("VALID", {1, 1, 1, 1});
  EXPECT_ERROR(TryRun(shaped("x", {1, 5, 5, 5}) + shaped("f", {3, 3, 2, 2}) + NodeText("y", "Conv2D", {"x", "f"}, attrs),
                      {}, {"y"}),
               Code::kInvalidArgument, "Depth of input (5) is not a multiple of input depth of filter (2)");
  EXPECT_ERROR(TryRun(shaped("x", {1, 5, 5, 4}) + shaped("f", {3, 3, 2, 3}) + NodeText("y", "Conv2D", {"x", "f"}, attrs),
                      {}, {"y"}),
               Code::kInvalidArgument, "Depth of output (3) is not a multiple of the number of groups (2)");
  EXPECT_ERROR(TryRun(shaped("x", {5, 5, 4}) + shaped("f", {3, 3, 4, 3}) + NodeText("y", "Conv2D", {"x", "f"}, attrs),
                      {}, {"y"}),
               Code::kInvalidArgument, "Shape must be rank 4 but is rank 3");
  EXPECT_ERROR(TryRun(shaped("x", {1, 1, 5, 4}) + shaped("f", {3, 3, 4, 3}) + NodeText("y", "Conv2D", {"x", "f"}, attrs),
                      {}, {"y"}),
               Code::kInvalidArgument, "Computed output size would be negative");
  EXPECT_ERROR(TryRun(shaped("x", {1, 5, 5, 3}) + shaped("f", {3, 3, 4, 3}) +
                          NodeText("y", "DepthwiseConv2dNative", {"x", "f"}, attrs),
                      {}, {"y"}),
               Code::kInvalidArgument, "Dimensions must be equal, but are 3 and 4");
}

TEST(ConvErrorsTest, FusedUnsupportedAndBadArgs) {
  auto fused = [](const std::vector<std::string>& ops, int num_args) {
    std::string g = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("f", "DT_FLOAT");
    std::vector<std::string> in = {"x", "f"};
    for (int i = 0; i < num_args; ++i) {
      g += PlaceholderNode("a" + std::to_string(i), "DT_FLOAT");
      in.push_back("a" + std::to_string(i));
    }
    return g + NodeText("y", "_FusedConv2D", in,
                        TypeAttr("T", "DT_FLOAT") + Attrs("SAME", {1, 1, 1, 1}) + IntAttr("num_args", num_args) +
                            StrListAttr("fused_ops", ops));
  };
  Feeds feeds = ConvFeeds({1, 4, 4, 2}, {3, 3, 2, 3});
  feeds.push_back({"a0", Tensor(GR_FLOAT, TensorShape({3}))});
  EXPECT_ERROR(TryRun(fused({"Relu"}, 1), feeds, {"y"}), Code::kUnimplemented, "Fusion is not implemented: [Relu]");
  EXPECT_ERROR(TryRun(fused({"BiasAdd", "Tanh"}, 1), feeds, {"y"}), Code::kUnimplemented,
               "Fusion is not implemented: [BiasAdd,Tanh]");
  EXPECT_ERROR(TryRun(fused({"BiasAdd", "Relu", "Relu"}, 1), feeds, {"y"}), Code::kUnimplemented,
               "Fusion is not implemented: [BiasAdd,Relu,Relu]");
  EXPECT_ERROR(TryRun(fused({}, 0), ConvFeeds({1, 4, 4, 2}, {3, 3, 2, 3}), {"y"}), Code::kUnimplemented,
               "Fusion is not implemented: []");
  Feeds two = feeds;
  two.push_back({"a1", Tensor(GR_FLOAT, TensorShape({3}))});
  EXPECT_ERROR(TryRun(fused({"BiasAdd"}, 2), two, {"y"}), Code::kInvalidArgument,
               "Fused Conv2D must have one extra argument: bias.");
  Feeds bad_bias = ConvFeeds({1, 4, 4, 2}, {3, 3, 2, 3});
  bad_bias.push_back({"a0", Tensor(GR_FLOAT, TensorShape({4}))});
  EXPECT_ERROR(TryRun(fused({"BiasAdd"}, 1), bad_bias, {"y"}), Code::kInvalidArgument,
               "bias must have the same size as the output depth: 4 vs 3");
  Feeds bias_2d = ConvFeeds({1, 4, 4, 2}, {3, 3, 2, 3});
  bias_2d.push_back({"a0", Tensor(GR_FLOAT, TensorShape({1, 3}))});
  EXPECT_ERROR(TryRun(fused({"BiasAdd"}, 1), bias_2d, {"y"}), Code::kInvalidArgument, "bias must be 1-dimensional");
}

TEST(ConvErrorsTest, BackpropShapeMismatches) {
  const std::string attrs = TypeAttr("T", "DT_FLOAT") + Attrs("VALID", {1, 1, 1, 1});
  const std::string in_graph = PlaceholderNode("s", "DT_INT32") + PlaceholderNode("f", "DT_FLOAT") +
                               PlaceholderNode("dy", "DT_FLOAT") +
                               NodeText("g", "Conv2DBackpropInput", {"s", "f", "dy"}, attrs);
  auto sizes = [](std::vector<int32_t> v) {
    return MakeTensor<int32_t>(GR_INT32, {static_cast<int64_t>(v.size())}, v);
  };
  auto t = [](const Dims& d) { return Tensor(GR_FLOAT, TensorShape(d)); };
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({1, 5, 5, 2})}, {"f", t({3, 3, 2, 4})}, {"dy", t({1, 4, 3, 4})}}, {"g"}),
               Code::kInvalidArgument,
               "Conv2DBackpropInput: Size of out_backprop doesn't match computed: actual = 4, computed = 3");
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({1, 5, 5})}, {"f", t({3, 3, 2, 4})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "requires input_sizes to contain 4 values or 2 values, but got: 3");
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({2, 5, 5, 2})}, {"f", t({3, 3, 2, 4})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropInput: input and out_backprop must have the same batch size");
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({1, 5, 5, 2})}, {"f", t({3, 3, 2, 4})}, {"dy", t({1, 3, 3, 5})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropInput: filter and out_backprop must have the same out_depth");
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({1, 5, 5, 3})}, {"f", t({3, 3, 2, 4})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropInput: input depth must be evenly divisible by filter depth");
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({1, 5, -5, 2})}, {"f", t({3, 3, 2, 4})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Dimension 2 must be >= 0");
  EXPECT_ERROR(TryRun(in_graph, {{"s", sizes({1, 5, 5, 2})}, {"f", t({3, 3, 2})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropInput: filter must be 4-dimensional");

  const std::string f_graph = PlaceholderNode("x", "DT_FLOAT") + PlaceholderNode("s", "DT_INT32") +
                              PlaceholderNode("dy", "DT_FLOAT") +
                              NodeText("g", "Conv2DBackpropFilter", {"x", "s", "dy"}, attrs);
  EXPECT_ERROR(TryRun(f_graph, {{"x", t({1, 5, 5, 2})}, {"s", sizes({3, 3, 2, 4})}, {"dy", t({1, 3, 2, 4})}}, {"g"}),
               Code::kInvalidArgument,
               "Conv2DBackpropFilter: Size of out_backprop doesn't match computed: actual = 2, computed = 3");
  EXPECT_ERROR(TryRun(f_graph, {{"x", t({1, 5, 5, 2})}, {"s", sizes({3, 3, 2, 5})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropFilter: filter and out_backprop must have the same out_depth");
  EXPECT_ERROR(TryRun(f_graph, {{"x", t({1, 5, 5})}, {"s", sizes({3, 3, 2, 4})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropFilter: input must be 4-dimensional");
  EXPECT_ERROR(TryRun(f_graph, {{"x", t({1, 5, 5, 2})}, {"s", sizes({3, 3, 4})}, {"dy", t({1, 3, 3, 4})}}, {"g"}),
               Code::kInvalidArgument, "Conv2DBackpropFilter: filter must be 4-dimensional");
}

// After a failing Run the same session runs a good feed.
TEST(ConvErrorsTest, SessionWorksAfterError) {
  const std::string graph = ConvGraph("Conv2D", TypeAttr("T", "DT_FLOAT") + Attrs("VALID", {1, 1, 1, 1}));
  std::unique_ptr<Session> s = CreateSession(ParseGraph(graph), 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run(ConvFeeds({1, 5, 5, 5}, {3, 3, 2, 2}), {"y"}, {}, &out), Code::kInvalidArgument,
               "input depth must be evenly divisible by filter depth");
  std::mt19937 rng(12);
  const Dims x_dims = {1, 5, 5, 2}, f_dims = {3, 3, 2, 2};
  const std::vector<double> x = RandomIn(Ty::kF32, NumElements(x_dims), &rng);
  const std::vector<double> f = RandomIn(Ty::kF32, NumElements(f_dims), &rng);
  const Status st = s->Run({{"x", Encode(Ty::kF32, x_dims, x, false)}, {"f", Encode(Ty::kF32, f_dims, f, false)}},
                           {"y"}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  Window w;
  const Geo g = MakeGeo(x_dims, f_dims, w, false);
  ExpectClose(Ty::kF32, Decode(Ty::kF32, out[0], {g.n, g.oh, g.ow, g.oc}, false), RefForward(g, w, x, f));
}

}  // namespace
}  // namespace graphrt
