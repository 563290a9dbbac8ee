// The image family through real sessions: ResizeBilinear,
// ResizeNearestNeighbor, their gradients, CropAndResize and
// NonMaxSuppressionV2/V3/V4.
//
// Hand-computed cases (several are TensorFlow's own kernel-test cases)
// pin the coordinate rules of each align_corners / half_pixel_centers
// combination; naive references below (written from TensorFlow's documented
// formulas, one output pixel at a time) check random inputs; the gradients
// are checked against the references' adjoints and the identity
// <resize(x), g> = <x, resize_grad(g)>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/core/session.h"
#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"
#include "image_test_util.h"
#include "nn_test_util.h"
#include "op_test_util.h"

namespace graphrt {
namespace {

using namespace ::graphrt::testing;     // NOLINT: the op-test vocabulary
using namespace ::graphrt::nn_testing;  // NOLINT
using namespace ::graphrt::image_testing;  // NOLINT

// ------------------------------------------------------------- references

// The three coordinate conventions of the resize ops.
struct Mode {
  bool align_corners, half_pixel_centers;
  std::string Name() const { return align_corners ? "align_corners" : half_pixel_centers ? "half_pixel" : "legacy"; }
  std::string Attrs() const {
    return BoolAttr("align_corners", align_corners) + BoolAttr("half_pixel_centers", half_pixel_centers);
  }
};
const Mode kModes[] = {{false, false}, {true, false}, {false, true}};

// TensorFlow's scale, computed in float as it does.
float RefScale(int64_t in, int64_t out, bool align) {
  if (align && out > 1) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return static_cast<float>(in) / static_cast<float>(out);
}

// One input pixel and its weight in an output pixel.
struct Tap {
  int64_t y, x;
  double w;
};

// The input taps of output pixel (oy, ox) of a bilinear resize from ih x iw:
// sample point p = o * s (or (o + 0.5) * s - 0.5), neighbours floor(p) and
// floor(p) + 1 clamped into the image, weight by distance.
std::vector<Tap> BilinearTaps(int64_t oy, int64_t ox, int64_t ih, int64_t iw, int64_t oh, int64_t ow, Mode m) {
  auto axis = [&](int64_t o, int64_t in, int64_t out, int64_t* i0, int64_t* i1, double* frac) {
    const double s = RefScale(in, out, m.align_corners);
    const double p = m.half_pixel_centers ? (o + 0.5) * s - 0.5 : o * s;
    const double f = std::floor(p);
    *frac = p - f;
    *i0 = std::clamp<int64_t>(static_cast<int64_t>(f), 0, in - 1);
    *i1 = std::clamp<int64_t>(static_cast<int64_t>(f) + 1, 0, in - 1);
  };
  int64_t y0, y1, x0, x1;
  double fy, fx;
  axis(oy, ih, oh, &y0, &y1, &fy);
  axis(ox, iw, ow, &x0, &x1, &fx);
  return {{y0, x0, (1 - fy) * (1 - fx)}, {y0, x1, (1 - fy) * fx}, {y1, x0, fy * (1 - fx)}, {y1, x1, fy * fx}};
}

// The one input pixel of output pixel (oy, ox) of a nearest-neighbour resize:
// floor(o * s), round(o * s) with align_corners, floor((o + 0.5) * s) with
// half-pixel centres; the position in float, as TensorFlow has it.
std::vector<Tap> NearestTaps(int64_t oy, int64_t ox, int64_t ih, int64_t iw, int64_t oh, int64_t ow, Mode m) {
  auto axis = [&](int64_t o, int64_t in, int64_t out) {
    const float s = RefScale(in, out, m.align_corners);
    const float p = m.half_pixel_centers ? (static_cast<float>(o) + 0.5f) * s : static_cast<float>(o) * s;
    const float r = m.align_corners ? std::round(p) : std::floor(p);
    return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
  };
  return {{axis(oy, ih, oh), axis(ox, iw, ow), 1.0}};
}

using TapsFn = std::vector<Tap> (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, Mode);

// Calls f(resized index, image index, weight) for every tap of a resize of
// `batch` images of ih x iw x c to oh x ow.
template <typename F>
void ForEachTap(TapsFn taps, int64_t batch, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t c, Mode m, F f) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (const Tap& t : taps(oy, ox, ih, iw, oh, ow, m))
          for (int64_t ch = 0; ch < c; ++ch)
            f(((b * oh + oy) * ow + ox) * c + ch, ((b * ih + t.y) * iw + t.x) * c + ch, t.w);
}

// Forward: out[b, oy, ox, c] = sum of w * in[b, y, x, c] over the taps.
std::vector<double> RefResize(TapsFn taps, const std::vector<double>& in, const Dims& d, int64_t oh, int64_t ow,
                              Mode m) {
  std::vector<double> out(static_cast<size_t>(d[0] * oh * ow * d[3]), 0.0);
  ForEachTap(taps, d[0], d[1], d[2], oh, ow, d[3], m, [&](int64_t o, int64_t i, double w) { out[o] += w * in[i]; });
  return out;
}

// Adjoint: each gradient pixel goes back to its taps with their weights.
std::vector<double> RefResizeGrad(TapsFn taps, const std::vector<double>& grad, const Dims& gd, int64_t ih,
                                  int64_t iw, Mode m) {
  std::vector<double> out(static_cast<size_t>(gd[0] * ih * iw * gd[3]), 0.0);
  ForEachTap(taps, gd[0], ih, iw, gd[1], gd[2], gd[3], m, [&](int64_t o, int64_t i, double w) { out[i] += w * grad[o]; });
  return out;
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

std::vector<double> RandomInts(int64_t n, std::mt19937* rng, int lo = 0, int hi = 100) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = d(*rng);
  return v;
}

// ---------------------------------------------------- ResizeBilinear

const std::vector<double> k2x2 = {1, 2, 3, 4};

std::vector<Tensor> Resize(const std::string& op, const Tensor& images, int64_t h, int64_t w, Mode m,
                           DataType t = GR_FLOAT) {
  return OpRun{op, TypeAttr("T", DtEnum(t)) + m.Attrs(), {images, Size(h, w)}}.Run();
}

TEST(ResizeBilinearTest, HandComputed2x2) {
  // Legacy: samples at 0, 0.5, 1, 1.5 (clamped to the last row/column).
  ExpectValues(Resize("ResizeBilinear", Floats({1, 2, 2, 1}, k2x2), 4, 4, {false, false})[0], {1, 4, 4, 1},
               {1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4});
  // align_corners: scale (2-1)/(3-1), samples at 0, 0.5, 1.
  ExpectValues(Resize("ResizeBilinear", Floats({1, 2, 2, 1}, k2x2), 3, 3, {true, false})[0], {1, 3, 3, 1},
               {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  // Half-pixel centres: samples at -0.25, 0.25, 0.75, 1.25 (clamped).
  ExpectValues(Resize("ResizeBilinear", Floats({1, 2, 2, 1}, k2x2), 4, 4, {false, true})[0], {1, 4, 4, 1},
               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  // Downsizing 2x2 -> 1x1: legacy takes the corner, half-pixel the centre.
  ExpectValues(Resize("ResizeBilinear", Floats({1, 2, 2, 1}, k2x2), 1, 1, {false, false})[0], {1, 1, 1, 1}, {1});
  ExpectValues(Resize("ResizeBilinear", Floats({1, 2, 2, 1}, k2x2), 1, 1, {false, true})[0], {1, 1, 1, 1}, {2.5});
  ExpectValues(Resize("ResizeBilinear", Floats({1, 2, 2, 1}, k2x2), 1, 1, {true, false})[0], {1, 1, 1, 1}, {1});
}

TEST(ResizeBilinearTest, RandomAgainstReferenceEveryMode) {
  std::mt19937 rng(7);
  const Dims d = {2, 5, 7, 3};
  const std::vector<double> x = Uniform(NumElements(d), -2, 2, &rng);
  for (const Mode m : kModes) {
    for (const auto& [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{9, 11}, {3, 4}, {1, 1}, {5, 7}, {1, 13}}) {
      SCOPED_TRACE(m.Name() + " to " + std::to_string(oh) + "x" + std::to_string(ow));
      ExpectValues(Resize("ResizeBilinear", Floats(d, x), oh, ow, m)[0], {2, oh, ow, 3},
                   RefResize(BilinearTaps, x, d, oh, ow, m), 1e-5);
    }
  }
}

TEST(ResizeBilinearTest, EveryInputTypeGivesFloat) {
  std::mt19937 rng(3);
  const Dims d = {1, 3, 4, 2};
  const std::vector<double> x = RandomInts(NumElements(d), &rng);  // exact in every type
  const std::vector<double> want = RefResize(BilinearTaps, x, d, 5, 3, {false, true});
  for (DataType t : {GR_UINT8, GR_INT8, GR_INT16, GR_UINT16, GR_INT32, GR_INT64, GR_DOUBLE, GR_FLOAT}) {
    SCOPED_TRACE(DtEnum(t));
    ExpectValues(Resize("ResizeBilinear", TensorOf(t, d, x), 5, 3, {false, true}, t)[0], {1, 5, 3, 2}, want, 1e-5);
  }
  for (DataType t : {GR_HALF, GR_BFLOAT16}) {
    SCOPED_TRACE(DtEnum(t));
    OpRun r{"ResizeBilinear", TypeAttr("T", DtEnum(t)) + Mode{false, true}.Attrs(), {Floats(d, x), Size(5, 3)}};
    r.cast_inputs[0] = t;
    ExpectValues(r.Run()[0], {1, 5, 3, 2}, want, 1e-5);
  }
}

// --------------------------------------------- ResizeNearestNeighbor

TEST(ResizeNearestNeighborTest, HandComputedRounding) {
  const Dims in = {1, 2, 2, 1};
  // Legacy: floor(o * 0.5).
  ExpectValues(Resize("ResizeNearestNeighbor", Floats(in, k2x2), 4, 4, {false, false})[0], {1, 4, 4, 1},
               {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // align_corners: round(o * 0.5) rounds 0.5 away from zero.
  ExpectValues(Resize("ResizeNearestNeighbor", Floats(in, k2x2), 3, 3, {true, false})[0], {1, 3, 3, 1},
               {1, 2, 2, 3, 4, 4, 3, 4, 4});
  // Legacy 2x2 -> 3x3: floor(o * 2/3) = 0, 0, 1.
  ExpectValues(Resize("ResizeNearestNeighbor", Floats(in, k2x2), 3, 3, {false, false})[0], {1, 3, 3, 1},
               {1, 1, 2, 1, 1, 2, 3, 3, 4});
  // Half-pixel 2x2 -> 3x3: floor((o + 0.5) * 2/3) = 0, 1, 1.
  ExpectValues(Resize("ResizeNearestNeighbor", Floats(in, k2x2), 3, 3, {false, true})[0], {1, 3, 3, 1},
               {1, 2, 2, 3, 4, 4, 3, 4, 4});
  const std::vector<double> k3x3 = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  // 3x3 -> 2x2: legacy floor(o * 1.5) = 0, 1; half-pixel floor((o + 0.5) * 1.5) = 0, 2;
  // align_corners round(o * 2) = 0, 2.
  ExpectValues(Resize("ResizeNearestNeighbor", Floats({1, 3, 3, 1}, k3x3), 2, 2, {false, false})[0], {1, 2, 2, 1},
               {1, 2, 4, 5});
  ExpectValues(Resize("ResizeNearestNeighbor", Floats({1, 3, 3, 1}, k3x3), 2, 2, {false, true})[0], {1, 2, 2, 1},
               {1, 3, 7, 9});
  ExpectValues(Resize("ResizeNearestNeighbor", Floats({1, 3, 3, 1}, k3x3), 2, 2, {true, false})[0], {1, 2, 2, 1},
               {1, 3, 7, 9});
}

TEST(ResizeNearestNeighborTest, RandomAgainstReferenceEveryModeAndType) {
  std::mt19937 rng(11);
  const Dims d = {2, 6, 5, 3};
  const std::vector<double> x = RandomInts(NumElements(d), &rng);
  for (const Mode m : kModes) {
    for (const auto& [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{13, 9}, {4, 3}, {1, 1}, {6, 5}, {11, 2}}) {
      SCOPED_TRACE(m.Name() + " to " + std::to_string(oh) + "x" + std::to_string(ow));
      const std::vector<double> want = RefResize(NearestTaps, x, d, oh, ow, m);
      for (DataType t : {GR_FLOAT, GR_DOUBLE, GR_UINT8, GR_INT8, GR_INT16, GR_UINT16, GR_INT32, GR_INT64}) {
        SCOPED_TRACE(DtEnum(t));
        const Tensor out = Resize("ResizeNearestNeighbor", TensorOf(t, d, x), oh, ow, m, t)[0];
        ASSERT_EQ(out.dtype(), t);
        ExpectValues(out, {2, oh, ow, 3}, want, 0);
      }
    }
  }
  for (DataType t : {GR_HALF, GR_BFLOAT16}) {
    SCOPED_TRACE(DtEnum(t));
    OpRun r{"ResizeNearestNeighbor", TypeAttr("T", DtEnum(t)) + kModes[2].Attrs(), {Floats(d, x), Size(7, 4)}};
    r.cast_inputs[0] = t;
    r.outputs = {t};
    ExpectValues(r.Run()[0], {2, 7, 4, 3}, RefResize(NearestTaps, x, d, 7, 4, kModes[2]), 0);
  }
}

// --------------------------------------------------- forward errors

TEST(ResizeTest, Errors) {
  for (const std::string op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    SCOPED_TRACE(op);
    const std::string t = TypeAttr("T", "DT_FLOAT");
    const Tensor img = Floats({1, 2, 2, 1}, k2x2);
    EXPECT_ERROR((OpRun{op, t + Mode{true, true}.Attrs(), {img, Size(3, 3)}}.Try()), Code::kInvalidArgument,
                 "If half_pixel_centers is True, align_corners must be False.", "'n'");
    EXPECT_ERROR((OpRun{op, t, {Floats({2, 2, 1}, k2x2), Size(3, 3)}}.Try()), Code::kInvalidArgument,
                 "input must be 4-dimensional[2,2,1]");
    EXPECT_ERROR((OpRun{op, t, {Floats({1, 2, 2, 0}, {}), Size(3, 3)}}.Try()), Code::kInvalidArgument,
                 "image must have at least one channel");
    EXPECT_ERROR((OpRun{op, t, {Floats({1, 0, 2, 1}, {}), Size(3, 3)}}.Try()), Code::kInvalidArgument,
                 "input image must be of non-zero size");
    EXPECT_ERROR((OpRun{op, t, {img, Ints({1, 2}, {3, 3})}}.Try()), Code::kInvalidArgument,
                 "shape_t must be 1-dimensional[1,2]");
    EXPECT_ERROR((OpRun{op, t, {img, Ints({3}, {3, 3, 3})}}.Try()), Code::kInvalidArgument,
                 "shape_t must have two elements[3]");
    EXPECT_ERROR((OpRun{op, t, {img, Size(0, 3)}}.Try()), Code::kInvalidArgument, "output dimensions must be positive");
    EXPECT_ERROR((OpRun{op, t, {img, Size(3, -1)}}.Try()), Code::kInvalidArgument,
                 "output dimensions must be positive");
    // An output past graphrt's size limit is refused before anything is allocated.
    EXPECT_ERROR((OpRun{op, t, {Floats({1, 1, 1, 1}, {1}), Size(2147483647, 2147483647)}}.Try()),
                 Code::kInvalidArgument, "more than 2^58 elements");
    // A batch of zero images resizes to an empty batch.
    EXPECT_EQ(DimsOf(OpRun{op, t, {Floats({0, 2, 2, 1}, {}), Size(3, 5)}}.Run()[0]), (Dims{0, 3, 5, 1}));
  }
}

// Shape functions: the rank and size checks at graph construction, and the
// inferred shape (seen through an Add whose broadcast must then fail).
TEST(ResizeTest, ShapeFunction) {
  auto shaped = [](const std::string& name, const Dims& dims) {
    std::string shape = "attr { key: \"shape\" value { shape { ";
    for (int64_t d : dims) shape += "dim { size: " + std::to_string(d) + " } ";
    return NodeText(name, "Placeholder", {}, TypeAttr("dtype", "DT_FLOAT") + shape + "} } } ");
  };
  const std::string attrs = TypeAttr("T", "DT_FLOAT");
  EXPECT_ERROR(TryRun(shaped("x", {2, 2, 1}) + ConstInt32("s", {3, 3}) + NodeText("r", "ResizeBilinear", {"x", "s"}, attrs),
                      {}, {"r"}),
               Code::kInvalidArgument, "Shape must be rank 4 but is rank 3");
  EXPECT_ERROR(TryRun(shaped("x", {1, 2, 2, 1}) + ConstInt32("s", {3, 3, 3}) +
                          NodeText("r", "ResizeNearestNeighbor", {"x", "s"}, attrs),
                      {}, {"r"}),
               Code::kInvalidArgument, "Dimension must be 2 but is 3");
  EXPECT_ERROR(TryRun(shaped("x", {2, 5, 5, 3}) + ConstInt32("s", {4, 6}) +
                          NodeText("r", "ResizeBilinear", {"x", "s"}, attrs) + shaped("y", {2, 5, 5, 3}) +
                          NodeText("sum", "Add", {"r", "y"}, attrs),
                      {}, {"sum"}),
               Code::kInvalidArgument, "[2,4,6,3]");
}

// ------------------------------------------------------- gradients

TEST(ResizeBilinearGradTest, HandComputed) {
  // Legacy 2x2 -> 4x4 (taps as in HandComputed2x2) with a gradient of ones:
  // each input pixel collects the weights it contributed.
  // Rows/cols sample 0, 0.5, 1, 1.5 -> weights to index 0: 1 + .5 = 1.5,
  // to index 1: .5 + 1 + 1 = 2.5; products per pixel.
  OpRun r{"ResizeBilinearGrad", TypeAttr("T", "DT_FLOAT"),
          {Floats({1, 4, 4, 1}, std::vector<double>(16, 1.0)), Floats({1, 2, 2, 1}, k2x2)}};
  ExpectValues(r.Run()[0], {1, 2, 2, 1}, {1.5 * 1.5, 1.5 * 2.5, 2.5 * 1.5, 2.5 * 2.5});
  // Half-pixel 2x2 -> 1x1 samples the centre: a quarter to each pixel.
  OpRun h{"ResizeBilinearGrad", TypeAttr("T", "DT_FLOAT") + Mode{false, true}.Attrs(),
          {Floats({1, 1, 1, 1}, {8}), Floats({1, 2, 2, 1}, k2x2)}};
  ExpectValues(h.Run()[0], {1, 2, 2, 1}, {2, 2, 2, 2});
}

TEST(ResizeBilinearGradTest, AdjointOfForwardEveryMode) {
  std::mt19937 rng(5);
  const Dims xd = {2, 5, 6, 3};
  const std::vector<double> x = Uniform(NumElements(xd), -1, 1, &rng);
  for (const Mode m : kModes) {
    for (const auto& [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{9, 13}, {3, 2}, {1, 1}, {5, 6}}) {
      SCOPED_TRACE(m.Name() + " to " + std::to_string(oh) + "x" + std::to_string(ow));
      const Dims gd = {2, oh, ow, 3};
      const std::vector<double> g = Uniform(NumElements(gd), -1, 1, &rng);
      const std::vector<double> y = ValuesOf(Resize("ResizeBilinear", Floats(xd, x), oh, ow, m)[0]);
      const Tensor gx = OpRun{"ResizeBilinearGrad", TypeAttr("T", "DT_FLOAT") + m.Attrs(),
                              {Floats(gd, g), Floats(xd, x)}}
                            .Run()[0];
      ExpectValues(gx, xd, RefResizeGrad(BilinearTaps, g, gd, 5, 6, m), 1e-5);
      // <resize(x), g> = <x, grad(g)>
      EXPECT_NEAR(Dot(y, g), Dot(x, ValuesOf(gx)), 1e-4 * std::max(1.0, std::fabs(Dot(y, g))));
    }
  }
}

TEST(ResizeBilinearGradTest, OutputTypes) {
  std::mt19937 rng(9);
  const Dims gd = {1, 4, 3, 2}, xd = {1, 3, 5, 2};
  const std::vector<double> g = Uniform(NumElements(gd), -1, 1, &rng);
  const std::vector<double> want = RefResizeGrad(BilinearTaps, g, gd, 3, 5, kModes[0]);
  OpRun d{"ResizeBilinearGrad", TypeAttr("T", "DT_DOUBLE"), {Floats(gd, g), TensorOf(GR_DOUBLE, xd, std::vector<double>(30, 0))}};
  d.outputs = {GR_DOUBLE};
  const Tensor out = d.Run()[0];
  ASSERT_EQ(out.dtype(), GR_DOUBLE);
  ExpectValues(out, xd, want, 1e-5);
  for (DataType t : {GR_HALF, GR_BFLOAT16}) {
    SCOPED_TRACE(DtEnum(t));
    OpRun r{"ResizeBilinearGrad", TypeAttr("T", DtEnum(t)), {Floats(gd, g), Floats(xd, std::vector<double>(30, 0))}};
    r.cast_inputs[1] = t;
    r.outputs = {t};
    ExpectValues(r.Run()[0], xd, want, t == GR_HALF ? 2e-3 : 1e-2);
  }
}

TEST(ResizeBilinearGradTest, Errors) {
  const std::string t = TypeAttr("T", "DT_FLOAT");
  const Tensor g = Floats({1, 2, 2, 1}, k2x2), x = Floats({1, 3, 3, 1}, std::vector<double>(9, 0));
  EXPECT_ERROR((OpRun{"ResizeBilinearGrad", t + Mode{true, true}.Attrs(), {g, x}}.Try()), Code::kInvalidArgument,
               "If half_pixel_centers is True, align_corners must be False.");
  EXPECT_ERROR((OpRun{"ResizeBilinearGrad", t, {Floats({2, 2}, k2x2), x}}.Try()), Code::kInvalidArgument,
               "input_grad must be 4-dimensional[2,2]");
  EXPECT_ERROR((OpRun{"ResizeBilinearGrad", t, {Floats({1, 0, 2, 1}, {}), x}}.Try()), Code::kInvalidArgument,
               "resized dimensions must be positive");
  EXPECT_ERROR((OpRun{"ResizeBilinearGrad", t, {g, Floats({3, 3}, std::vector<double>(9, 0))}}.Try()),
               Code::kInvalidArgument, "original_image must be 4-dimensional[3,3]");
  EXPECT_ERROR((OpRun{"ResizeBilinearGrad", t, {g, Floats({1, 3, 0, 1}, {})}}.Try()), Code::kInvalidArgument,
               "original dimensions must be positive");
}

TEST(ResizeNearestNeighborGradTest, HandComputed) {
  // Legacy 2x2 -> 4x4 maps each 2x2 block to one pixel: the block sums.
  std::vector<double> g(16);
  std::iota(g.begin(), g.end(), 1.0);
  OpRun r{"ResizeNearestNeighborGrad", TypeAttr("T", "DT_FLOAT"), {Floats({1, 4, 4, 1}, g), Size(2, 2)}};
  ExpectValues(r.Run()[0], {1, 2, 2, 1}, {1 + 2 + 5 + 6, 3 + 4 + 7 + 8, 9 + 10 + 13 + 14, 11 + 12 + 15 + 16});
  // align_corners 3x3 -> 2x2 (forward picks rows/cols 0, 1, 1).
  OpRun a{"ResizeNearestNeighborGrad", TypeAttr("T", "DT_FLOAT") + kModes[1].Attrs(),
          {Floats({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), Size(2, 2)}};
  ExpectValues(a.Run()[0], {1, 2, 2, 1}, {1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9});
  // Integer gradients wrap as two's complement: 3 * 100 in uint8 is 44.
  OpRun u{"ResizeNearestNeighborGrad", TypeAttr("T", "DT_UINT8"), {TensorOf(GR_UINT8, {1, 1, 3, 1}, {100, 100, 100}), Size(1, 1)}};
  u.outputs = {GR_UINT8};
  ExpectValues(u.Run()[0], {1, 1, 1, 1}, {44}, 0);
}

TEST(ResizeNearestNeighborGradTest, AdjointOfForwardEveryModeAndType) {
  std::mt19937 rng(13);
  const Dims xd = {2, 6, 5, 2};
  // TensorFlow lets the gradient take both attrs (the forward op refuses them).
  std::vector<Mode> modes(std::begin(kModes), std::end(kModes));
  modes.push_back({true, true});
  for (const Mode m : modes) {
    for (const auto& [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{13, 9}, {4, 3}, {1, 1}, {6, 5}}) {
      SCOPED_TRACE(m.Name() + (m.half_pixel_centers && m.align_corners ? "+half_pixel" : "") + " to " +
                   std::to_string(oh) + "x" + std::to_string(ow));
      const Dims gd = {2, oh, ow, 2};
      const std::vector<double> g = RandomInts(NumElements(gd), &rng, -5, 5);
      const std::vector<double> want = RefResizeGrad(NearestTaps, g, gd, 6, 5, m);
      for (DataType t : {GR_FLOAT, GR_DOUBLE, GR_INT32, GR_INT8}) {
        SCOPED_TRACE(DtEnum(t));
        OpRun r{"ResizeNearestNeighborGrad", TypeAttr("T", DtEnum(t)) + m.Attrs(), {TensorOf(t, gd, g), Size(6, 5)}};
        r.outputs = {t};
        const Tensor gx = r.Run()[0];
        ExpectValues(gx, xd, want, 0);
        if (!m.align_corners || !m.half_pixel_centers) {
          const std::vector<double> x = RandomInts(NumElements(xd), &rng, -5, 5);
          const std::vector<double> y = ValuesOf(Resize("ResizeNearestNeighbor", Floats(xd, x), oh, ow, m)[0]);
          EXPECT_EQ(Dot(y, g), Dot(x, ValuesOf(gx)));  // small integers: exact
        }
      }
      for (DataType t : {GR_HALF, GR_BFLOAT16}) {
        SCOPED_TRACE(DtEnum(t));
        OpRun r{"ResizeNearestNeighborGrad", TypeAttr("T", DtEnum(t)) + m.Attrs(), {Floats(gd, g), Size(6, 5)}};
        r.cast_inputs[0] = t;
        r.outputs = {t};
        ExpectValues(r.Run()[0], xd, want, 0);
      }
    }
  }
}

TEST(ResizeNearestNeighborGradTest, Errors) {
  const std::string t = TypeAttr("T", "DT_FLOAT");
  const Tensor g = Floats({1, 2, 2, 1}, k2x2);
  EXPECT_ERROR((OpRun{"ResizeNearestNeighborGrad", t, {Floats({2, 2}, k2x2), Size(1, 1)}}.Try()),
               Code::kInvalidArgument, "input must be 4-dimensional[2,2]");
  EXPECT_ERROR((OpRun{"ResizeNearestNeighborGrad", t, {g, Ints({2, 1}, {1, 1})}}.Try()), Code::kInvalidArgument,
               "shape_t must be 1-dimensional[2,1]");
  EXPECT_ERROR((OpRun{"ResizeNearestNeighborGrad", t, {g, Ints({1}, {1})}}.Try()), Code::kInvalidArgument,
               "shape_t must have two elements[1]");
  EXPECT_ERROR((OpRun{"ResizeNearestNeighborGrad", t, {g, Size(1, 0)}}.Try()), Code::kInvalidArgument,
               "shape_t's elements must be positive");
  // An empty gradient gives zeros of the original size.
  ExpectValues(OpRun{"ResizeNearestNeighborGrad", t, {Floats({1, 0, 2, 1}, {}), Size(2, 2)}}.Run()[0], {1, 2, 2, 1},
               {0, 0, 0, 0});
}

// Outputs above the pool's split size (common/cpu/parallel.h: 32K
// elements) run in parallel row blocks; the results are the same.
TEST(ResizeTest, LargeRunsSplitOverThePool) {
  std::mt19937 rng(29);
  const Dims xd = {2, 30, 40, 8};
  const std::vector<double> x = RandomInts(NumElements(xd), &rng, -20, 20);
  const Mode m = kModes[2];
  ExpectValues(Resize("ResizeBilinear", Floats(xd, x), 57, 43, m)[0], {2, 57, 43, 8},
               RefResize(BilinearTaps, x, xd, 57, 43, m), 1e-4);  // float lerps of values up to 20
  ExpectValues(Resize("ResizeNearestNeighbor", Floats(xd, x), 57, 43, m)[0], {2, 57, 43, 8},
               RefResize(NearestTaps, x, xd, 57, 43, m), 0);
  const Dims gd = {2, 57, 43, 8};
  const std::vector<double> g = RandomInts(NumElements(gd), &rng, -20, 20);
  ExpectValues(OpRun("ResizeBilinearGrad", TypeAttr("T", "DT_FLOAT") + m.Attrs(), {Floats(gd, g), Floats(xd, x)}).Run()[0],
               xd, RefResizeGrad(BilinearTaps, g, gd, 30, 40, m), 1e-4);
  ExpectValues(OpRun("ResizeNearestNeighborGrad", TypeAttr("T", "DT_FLOAT") + m.Attrs(), {Floats(gd, g), Size(30, 40)})
                   .Run()[0],
               xd, RefResizeGrad(NearestTaps, g, gd, 30, 40, m), 0);
}

// ------------------------------------------------------ CropAndResize

std::string CropAttrs(const std::string& method = "bilinear", float extrapolation = 0, DataType t = GR_FLOAT) {
  return TypeAttr("T", DtEnum(t)) + StrAttr("method", method) + FloatAttr("extrapolation_value", extrapolation);
}

Tensor Crop(const Tensor& image, const Dims& bd, const std::vector<double>& boxes, const std::vector<double>& ind,
            int64_t h, int64_t w, const std::string& attrs) {
  return OpRun{"CropAndResize", attrs,
               {image, Floats(bd, boxes), Ints({static_cast<int64_t>(ind.size())}, ind), Size(h, w)}}
      .Run()[0];
}

TEST(CropAndResizeTest, HandComputed) {
  const Tensor img = Floats({1, 2, 2, 1}, k2x2);
  // The whole image at 3x3 samples rows/cols 0, 0.5, 1.
  ExpectValues(Crop(img, {1, 4}, {0, 0, 1, 1}, {0}, 3, 3, CropAttrs()), {1, 3, 3, 1}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  // A 1x1 crop samples the box centre.
  ExpectValues(Crop(img, {1, 4}, {0, 0, 1, 1}, {0}, 1, 1, CropAttrs()), {1, 1, 1, 1}, {2.5});
  ExpectValues(Crop(img, {1, 4}, {0, 0, 0, 1}, {0}, 1, 2, CropAttrs()), {1, 1, 2, 1}, {1, 2});
  // y1 > y2 and x1 > x2 flip the crop.
  ExpectValues(Crop(img, {1, 4}, {1, 1, 0, 0}, {0}, 2, 2, CropAttrs()), {1, 2, 2, 1}, {4, 3, 2, 1});
  // Positions outside the image take extrapolation_value: rows/cols at -1, 0, 1.
  ExpectValues(Crop(img, {1, 4}, {-1, -1, 1, 1}, {0}, 3, 3, CropAttrs("bilinear", 9)), {1, 3, 3, 1},
               {9, 9, 9, 9, 1, 2, 9, 3, 4});
  // Nearest rounds 0.5 away from zero.
  ExpectValues(Crop(img, {1, 4}, {0, 0, 1, 1}, {0}, 3, 3, CropAttrs("nearest")), {1, 3, 3, 1},
               {1, 2, 2, 3, 4, 4, 3, 4, 4});
  // box_ind picks the image of the batch; channels carry through.
  const Tensor two = Floats({2, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70, 8, 80});
  ExpectValues(Crop(two, {2, 4}, {0, 0, 1, 1, 0, 0, 0, 0}, {1, 0}, 1, 1, CropAttrs()), {2, 1, 1, 2},
               {6.5, 65, 1, 10});
  // No boxes: an empty result.
  EXPECT_EQ(DimsOf(Crop(img, {0, 4}, {}, {}, 3, 3, CropAttrs())), (Dims{0, 3, 3, 1}));
}

// Naive crop, one output value at a time: TensorFlow's documented mapping.
std::vector<double> RefCrop(const std::vector<double>& img, const Dims& d, const std::vector<double>& boxes,
                            const std::vector<double>& ind, int64_t ch, int64_t cw, bool bilinear, double extrap) {
  const int64_t H = d[1], W = d[2], C = d[3];
  const int64_t n = static_cast<int64_t>(ind.size());
  std::vector<double> out;
  for (int64_t b = 0; b < n; ++b) {
    const double y1 = boxes[4 * b], x1 = boxes[4 * b + 1], y2 = boxes[4 * b + 2], x2 = boxes[4 * b + 3];
    // The sample position in float, as TensorFlow documents and computes it
    // (nearest's rounding depends on the last bit).
    auto pos = [](int64_t i, int64_t crop, int64_t size, double lo_d, double hi_d) -> double {
      const float lo = static_cast<float>(lo_d), hi = static_cast<float>(hi_d);
      const float span = static_cast<float>(size - 1);
      if (crop == 1) return static_cast<float>(0.5 * (lo + hi) * span);
      const float step = (hi - lo) * span / static_cast<float>(crop - 1);
      return lo * span + static_cast<float>(i) * step;
    };
    auto at = [&](int64_t y, int64_t x, int64_t c) {
      return img[((static_cast<int64_t>(ind[b]) * H + y) * W + x) * C + c];
    };
    for (int64_t i = 0; i < ch; ++i)
      for (int64_t j = 0; j < cw; ++j)
        for (int64_t c = 0; c < C; ++c) {
          const double py = pos(i, ch, H, y1, y2), px = pos(j, cw, W, x1, x2);
          if (py < 0 || py > H - 1 || px < 0 || px > W - 1) {
            out.push_back(extrap);
          } else if (!bilinear) {
            out.push_back(at(std::lround(py), std::lround(px), c));
          } else {
            const int64_t y0 = static_cast<int64_t>(std::floor(py)), x0 = static_cast<int64_t>(std::floor(px));
            const int64_t yb = std::min(y0 + 1, H - 1), xr = std::min(x0 + 1, W - 1);
            const double fy = py - y0, fx = px - x0;
            out.push_back((1 - fy) * ((1 - fx) * at(y0, x0, c) + fx * at(y0, xr, c)) +
                          fy * ((1 - fx) * at(yb, x0, c) + fx * at(yb, xr, c)));
          }
        }
  }
  return out;
}

TEST(CropAndResizeTest, RandomAgainstReference) {
  std::mt19937 rng(17);
  const Dims d = {3, 7, 9, 2};
  const std::vector<double> img = RandomInts(NumElements(d), &rng);
  // Boxes inside, partly outside and flipped.
  std::uniform_int_distribution<int> coord(-16, 80);
  const int64_t n = 12;
  std::vector<double> boxes, ind;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) boxes.push_back(coord(rng) / 64.0);
    ind.push_back(static_cast<double>(i % 3));
  }
  for (const std::string method : {"bilinear", "nearest"}) {
    for (const auto& [ch, cw] : std::vector<std::pair<int64_t, int64_t>>{{5, 4}, {1, 6}, {8, 1}, {1, 1}}) {
      SCOPED_TRACE(method + " " + std::to_string(ch) + "x" + std::to_string(cw));
      const std::vector<double> want = RefCrop(img, d, boxes, ind, ch, cw, method == "bilinear", -3);
      for (DataType t : {GR_FLOAT, GR_UINT8, GR_INT16, GR_INT64, GR_DOUBLE}) {
        SCOPED_TRACE(DtEnum(t));
        ExpectValues(Crop(TensorOf(t, d, img), {n, 4}, boxes, ind, ch, cw, CropAttrs(method, -3, t)), {n, ch, cw, 2},
                     want, 1e-4);
      }
      OpRun r{"CropAndResize", CropAttrs(method, -3, GR_HALF),
              {Floats(d, img), Floats({n, 4}, boxes), Ints({n}, ind), Size(ch, cw)}};
      r.cast_inputs[0] = GR_HALF;
      ExpectValues(r.Run()[0], {n, ch, cw, 2}, want, 1e-4);
    }
  }
}

TEST(CropAndResizeTest, Errors) {
  const Tensor img = Floats({1, 2, 2, 1}, k2x2);
  auto run = [&](const Tensor& image, const Tensor& boxes, const Tensor& ind, const Tensor& size,
                 const std::string& attrs = CropAttrs()) {
    return OpRun{"CropAndResize", attrs, {image, boxes, ind, size}}.Try();
  };
  const Tensor box = Floats({1, 4}, {0, 0, 1, 1}), ind0 = Ints({1}, {0});
  EXPECT_ERROR(run(Floats({2, 2}, k2x2), box, ind0, Size(2, 2)), Code::kInvalidArgument, "input image must be 4-D[2,2]");
  EXPECT_ERROR(run(Floats({1, 0, 2, 1}, {}), box, ind0, Size(2, 2)), Code::kInvalidArgument,
               "image dimensions must be positive");
  EXPECT_ERROR(run(img, Floats({4}, {0, 0, 1, 1}), ind0, Size(2, 2)), Code::kInvalidArgument, "boxes must be 2-D, got: [4]");
  EXPECT_ERROR(run(img, box, Ints({1, 1}, {0}), Size(2, 2)), Code::kInvalidArgument,
               "box_indices must be rank 1 but is shape [1,1]");
  EXPECT_ERROR(run(img, Floats({1, 3}, {0, 0, 1}), ind0, Size(2, 2)), Code::kInvalidArgument, "boxes must have 4 columns");
  EXPECT_ERROR(run(img, box, Ints({2}, {0, 0}), Size(2, 2)), Code::kInvalidArgument, "box_index has incompatible shape");
  EXPECT_ERROR(run(img, box, ind0, Ints({3}, {2, 2, 2})), Code::kInvalidArgument, "crop_size must have two elements[3]");
  EXPECT_ERROR(run(img, box, ind0, Ints({1, 2}, {2, 2})), Code::kInvalidArgument, "crop_size must be 1-D[1,2]");
  EXPECT_ERROR(run(img, box, ind0, Size(0, 2)), Code::kInvalidArgument, "crop dimensions must be positive");
  EXPECT_ERROR(run(img, box, Ints({1}, {1}), Size(2, 2)), Code::kOutOfRange,
               "box_index has values outside [0, batch_size)", "'n'");
  EXPECT_ERROR(run(img, box, Ints({1}, {-1}), Size(2, 2)), Code::kOutOfRange,
               "box_index has values outside [0, batch_size)");
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_ERROR(run(img, Floats({1, 4}, {0, bad, 1, 1}), ind0, Size(2, 2)), Code::kInvalidArgument,
                 "Boxes contains at least one element that is not finite");
  }
  EXPECT_ERROR(run(img, box, ind0, Size(2, 2), CropAttrs("bicubic")), Code::kInvalidArgument, "method", "bicubic");
}

// --------------------------------------- CropAndResize's gradients

std::string GradImageAttrs(const std::string& method = "bilinear", DataType t = GR_FLOAT) {
  return TypeAttr("T", DtEnum(t)) + StrAttr("method", method);
}

Tensor GradImage(const Tensor& grads, const Dims& bd, const std::vector<double>& boxes,
                 const std::vector<double>& ind, const Dims& image, const std::string& method = "bilinear",
                 DataType t = GR_FLOAT) {
  std::vector<double> size(image.begin(), image.end());
  OpRun r{"CropAndResizeGradImage", GradImageAttrs(method, t),
          {grads, Floats(bd, boxes), Ints({static_cast<int64_t>(ind.size())}, ind), Ints({4}, size)},
          {t}};
  return r.Run()[0];
}

Tensor GradBoxes(const Tensor& grads, const Tensor& image, const Dims& bd, const std::vector<double>& boxes,
                 const std::vector<double>& ind) {
  return OpRun{"CropAndResizeGradBoxes", TypeAttr("T", DtEnum(image.dtype())) + StrAttr("method", "bilinear"),
               {grads, image, Floats(bd, boxes), Ints({static_cast<int64_t>(ind.size())}, ind)}}
      .Run()[0];
}

TEST(CropAndResizeGradTest, ImageHandComputed) {
  // The whole 2x2 image at 3x3 samples rows/cols 0, 0.5, 1: each pixel gets
  // 1 + 2 * 0.5 + 0.25 of an all-ones gradient.
  ExpectValues(GradImage(Floats({1, 3, 3, 1}, std::vector<double>(9, 1)), {1, 4}, {0, 0, 1, 1}, {0}, {1, 2, 2, 1}),
               {1, 2, 2, 1}, {2.25, 2.25, 2.25, 2.25});
  // A 1x1 crop at the centre splits its gradient in four; nearest sends it
  // to the pixel the centre rounds to (half away from zero: (1, 1)).
  ExpectValues(GradImage(Floats({1, 1, 1, 1}, {8}), {1, 4}, {0, 0, 1, 1}, {0}, {1, 2, 2, 1}), {1, 2, 2, 1},
               {2, 2, 2, 2});
  ExpectValues(GradImage(Floats({1, 1, 1, 1}, {8}), {1, 4}, {0, 0, 1, 1}, {0}, {1, 2, 2, 1}, "nearest"), {1, 2, 2, 1},
               {0, 0, 0, 8});
  // Positions outside the image add nothing; box_ind picks the image.
  ExpectValues(GradImage(Floats({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), {1, 4}, {-1, -1, 1, 1}, {1}, {2, 2, 2, 1}),
               {2, 2, 2, 1}, {0, 0, 0, 0, 5, 6, 8, 9});
}

// The image gradient is the adjoint of the crop in the image:
// <crop(image), g> = <image, grad_image(g)> for any image and g.
TEST(CropAndResizeGradTest, ImageGradientIsTheCropsAdjoint) {
  std::mt19937 rng(31);
  const Dims d = {3, 7, 9, 5};
  std::uniform_int_distribution<int> coord(-16, 80);
  const int64_t n = 10;
  std::vector<double> boxes, ind;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) boxes.push_back(coord(rng) / 64.0);
    ind.push_back(static_cast<double>((i * 2) % 3));
  }
  const std::vector<double> img = Uniform(NumElements(d), -1, 1, &rng);
  for (const std::string method : {"bilinear", "nearest"}) {
    for (const auto& [ch, cw] : std::vector<std::pair<int64_t, int64_t>>{{5, 4}, {1, 6}, {8, 1}, {1, 1}}) {
      SCOPED_TRACE(method + " " + std::to_string(ch) + "x" + std::to_string(cw));
      const Dims gd = {n, ch, cw, 5};
      const std::vector<double> g = Uniform(NumElements(gd), -1, 1, &rng);
      const double crop_side = Dot(ValuesOf(Crop(Floats(d, img), {n, 4}, boxes, ind, ch, cw, CropAttrs(method))), g);
      for (DataType t : {GR_FLOAT, GR_DOUBLE}) {
        const double image_side = Dot(img, ValuesOf(GradImage(Floats(gd, g), {n, 4}, boxes, ind, d, method, t)));
        EXPECT_NEAR(image_side, crop_side, 1e-4 * std::max(1.0, std::fabs(crop_side))) << DtEnum(t);
      }
      const double half_side = Dot(img, ValuesOf(GradImage(Floats(gd, g), {n, 4}, boxes, ind, d, method, GR_HALF)));
      EXPECT_NEAR(half_side, crop_side, 1e-2 * std::max(1.0, std::fabs(crop_side)));
    }
  }
}

// The boxes' gradient against central differences of the crop: on an
// image that is linear in (y, x) everywhere (bilinear interpolation is
// exact there, so any box inside the image is far from a kink), and on a
// random image with boxes whose samples stay off pixel boundaries.
TEST(CropAndResizeGradTest, BoxesGradientMatchesCentralDifferences) {
  std::mt19937 rng(37);
  auto check = [&](const Dims& d, const std::vector<double>& img, const std::vector<double>& boxes, int64_t ch,
                   int64_t cw, double tol) {
    SCOPED_TRACE(std::to_string(ch) + "x" + std::to_string(cw));
    const int64_t n = static_cast<int64_t>(boxes.size()) / 4;
    std::vector<double> ind(static_cast<size_t>(n), 0.0);
    const Dims gd = {n, ch, cw, d[3]};
    const std::vector<double> g = Uniform(NumElements(gd), -1, 1, &rng);
    const std::vector<double> got = ValuesOf(GradBoxes(Floats(gd, g), Floats(d, img), {n, 4}, boxes, ind));
    ASSERT_EQ(got.size(), boxes.size());
    const double eps = 1e-3;
    for (size_t i = 0; i < boxes.size(); ++i) {
      std::vector<double> plus = boxes, minus = boxes;
      plus[i] += eps;
      minus[i] -= eps;
      const double fp = Dot(ValuesOf(Crop(Floats(d, img), {n, 4}, plus, ind, ch, cw, CropAttrs())), g);
      const double fm = Dot(ValuesOf(Crop(Floats(d, img), {n, 4}, minus, ind, ch, cw, CropAttrs())), g);
      EXPECT_NEAR(got[i], (fp - fm) / (2 * eps), tol * std::max(1.0, std::fabs(got[i]))) << "box coordinate " << i;
    }
  };
  // f(y, x) = 1 + 0.5 x + 2 y - 0.25 c per channel c.
  const Dims linear = {1, 6, 8, 2};
  std::vector<double> img;
  for (int64_t y = 0; y < 6; ++y)
    for (int64_t x = 0; x < 8; ++x)
      for (int64_t c = 0; c < 2; ++c) img.push_back(1 + 0.5 * x + 2 * y - 0.25 * c);
  // No sample on a whole pixel position, where the slope is taken as zero
  // (floor = ceil, as TensorFlow's kernel does). The second box flipped.
  const std::vector<double> inside = {0.1, 0.2, 0.78, 0.9, 0.7, 0.6, 0.15, 0.05};
  for (const auto& [ch, cw] : std::vector<std::pair<int64_t, int64_t>>{{4, 5}, {1, 3}, {3, 1}, {1, 1}})
    check(linear, img, inside, ch, cw, 2e-3);
  // A random 5x5 image: a 3x3 crop of rows 0.4, 1.6, 2.8 and columns 0.48,
  // 1.68, 2.88 (and the same box flipped, and a one-row crop at 1.6).
  const Dims random = {1, 5, 5, 3};
  const std::vector<double> noise = Uniform(NumElements(random), -1, 1, &rng);
  check(random, noise, {0.1, 0.12, 0.7, 0.72, 0.7, 0.72, 0.1, 0.12}, 3, 3, 5e-3);
  check(random, noise, {0.1, 0.12, 0.7, 0.72}, 1, 3, 5e-3);
}

TEST(CropAndResizeGradTest, Errors) {
  const Tensor g = Floats({1, 2, 2, 1}, {1, 2, 3, 4});
  const Tensor box = Floats({1, 4}, {0, 0, 1, 1}), ind0 = Ints({1}, {0});
  auto image_grad = [&](const Tensor& grads, const Tensor& boxes, const Tensor& ind, const Tensor& size) {
    return OpRun{"CropAndResizeGradImage", GradImageAttrs(), {grads, boxes, ind, size}}.Try();
  };
  const Tensor size = Ints({4}, {1, 3, 3, 1});
  EXPECT_ERROR(image_grad(Floats({2, 2}, {1, 2, 3, 4}), box, ind0, size), Code::kInvalidArgument, "grads image must be 4-D");
  EXPECT_ERROR(image_grad(g, Floats({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}), Ints({2}, {0, 0}), size),
               Code::kInvalidArgument, "boxes and grads have incompatible shape");
  EXPECT_ERROR(image_grad(g, box, ind0, Ints({4}, {1, 3, 3, 2})), Code::kInvalidArgument,
               "image_size and grads are incompatible");
  EXPECT_ERROR(image_grad(g, box, ind0, Ints({3}, {1, 3, 3})), Code::kInvalidArgument, "image_size must be 1-D with 4 elements");
  EXPECT_ERROR(image_grad(g, box, ind0, Ints({4}, {1, 0, 3, 1})), Code::kInvalidArgument,
               "image dimensions must be positive");
  EXPECT_ERROR(image_grad(g, box, Ints({1}, {1}), size), Code::kOutOfRange, "box_index has values outside [0, batch_size)",
               "'n'");
  EXPECT_ERROR(image_grad(g, Floats({1, 4}, {0, std::nan(""), 1, 1}), ind0, size), Code::kInvalidArgument,
               "Boxes contains at least one element that is not finite");
  EXPECT_ERROR((OpRun{"CropAndResizeGradImage", GradImageAttrs("area"), {g, box, ind0, size}}.Try()),
               Code::kInvalidArgument, "method", "area");
  auto boxes_grad = [&](const Tensor& grads, const Tensor& image, const Tensor& boxes, const Tensor& ind) {
    return OpRun{"CropAndResizeGradBoxes", TypeAttr("T", "DT_FLOAT") + StrAttr("method", "bilinear"),
                 {grads, image, boxes, ind}}
        .Try();
  };
  const Tensor img = Floats({1, 3, 3, 1}, std::vector<double>(9, 1));
  EXPECT_ERROR(boxes_grad(g, Floats({3, 3}, std::vector<double>(9, 1)), box, ind0), Code::kInvalidArgument,
               "input image must be 4-D");
  EXPECT_ERROR(boxes_grad(g, Floats({1, 3, 3, 2}, std::vector<double>(18, 1)), box, ind0), Code::kInvalidArgument,
               "image_size and grads are incompatible");
  EXPECT_ERROR(boxes_grad(g, img, box, Ints({1}, {-1})), Code::kOutOfRange, "box_index has values outside [0, batch_size)");
  // The op definition allows bilinear only.
  EXPECT_ERROR((OpRun{"CropAndResizeGradBoxes", TypeAttr("T", "DT_FLOAT") + StrAttr("method", "nearest"),
                      {g, img, box, ind0}}
                    .Try()),
               Code::kInvalidArgument, "method", "nearest");
  // The session goes on.
  ExpectValues(GradBoxes(g, img, {1, 4}, {0, 0, 1, 1}, {0}), {1, 4}, {0, 0, 0, 0});
}

// ------------------------------------------------------ NonMaxSuppression

// TensorFlow's kernel-test boxes: two clusters of three and a far box.
const std::vector<double> kBoxes = {0, 0,  1, 1,     0, 0.1, 1, 1.1,  0, -0.1, 1, 0.9,
                                    0, 10, 1, 11,    0, 10.1, 1, 11.1, 0, 100, 1, 101};
const std::vector<double> kScores = {0.9, 0.75, 0.6, 0.95, 0.5, 0.3};

// The indices V2/V3/V4 select (V3/V4 with `score_threshold`; V4 also
// returns valid_outputs).
std::vector<Tensor> Nms(int version, const std::vector<double>& boxes, const std::vector<double>& scores,
                        int max_output, double iou, double score_threshold = -1e30, bool pad = false,
                        DataType t = GR_FLOAT) {
  const int64_t n = static_cast<int64_t>(scores.size());
  OpRun r{"NonMaxSuppressionV" + std::to_string(version), TypeAttr("T", DtEnum(t)) + TypeAttr("T_threshold", DtEnum(t)),
          {Floats({n, 4}, boxes), Floats({n}, scores), Ints({}, {static_cast<double>(max_output)}), Floats({}, {iou})}};
  if (version >= 3) r.inputs.push_back(Floats({}, {score_threshold}));
  if (version == 4) {
    r.attrs += BoolAttr("pad_to_max_output_size", pad);
    r.outputs = {GR_INT32, GR_INT32};
  } else {
    r.outputs = {GR_INT32};
  }
  if (t != GR_FLOAT)
    for (int i : {0, 1, 3, 4})
      if (i < static_cast<int>(r.inputs.size())) r.cast_inputs[i] = t;
  return r.Run();
}

std::vector<double> Indices(const Tensor& t) { return ValuesOf(t); }

TEST(NonMaxSuppressionTest, TensorFlowCases) {
  for (int v : {2, 3, 4}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(Indices(Nms(v, kBoxes, kScores, 3, 0.5)[0]), (std::vector<double>{3, 0, 5}));
    EXPECT_EQ(Indices(Nms(v, kBoxes, kScores, 2, 0.5)[0]), (std::vector<double>{3, 0}));
    EXPECT_EQ(Indices(Nms(v, kBoxes, kScores, 30, 0.5)[0]), (std::vector<double>{3, 0, 5}));
    EXPECT_EQ(Indices(Nms(v, kBoxes, kScores, 0, 0.5)[0]), (std::vector<double>{}));
    // Flipped corners give the same boxes.
    const std::vector<double> flipped = {1, 1,  0, 0,     0, 0.1, 1, 1.1,  0, 0.9, 1, -0.1,
                                         0, 10, 1, 11,    1, 10.1, 0, 11.1, 1, 101, 0, 100};
    EXPECT_EQ(Indices(Nms(v, flipped, kScores, 3, 0.5)[0]), (std::vector<double>{3, 0, 5}));
    // One box; identical boxes (only the first survives); no boxes.
    EXPECT_EQ(Indices(Nms(v, {0, 0, 1, 1}, {0.9}, 3, 0.5)[0]), (std::vector<double>{0}));
    std::vector<double> same;
    for (int i = 0; i < 10; ++i) same.insert(same.end(), {0, 0, 1, 1});
    EXPECT_EQ(Indices(Nms(v, same, std::vector<double>(10, 0.9), 3, 0.5)[0]), (std::vector<double>{0}));
    EXPECT_EQ(Indices(Nms(v, {}, {}, 3, 0.5)[0]), (std::vector<double>{}));
    // iou_threshold 1 suppresses nothing but exact copies... and not even those:
    // IoU 1 is not above 1.
    EXPECT_EQ(Indices(Nms(v, kBoxes, kScores, 6, 1.0)[0]), (std::vector<double>{3, 0, 1, 2, 4, 5}));
    // Zero-area boxes overlap nothing.
    EXPECT_EQ(Indices(Nms(v, {0, 0, 0, 1, 0, 0, 0, 1}, {0.5, 0.6}, 3, 0)[0]), (std::vector<double>{1, 0}));
  }
  // Equal scores: the lower index first.
  EXPECT_EQ(Indices(Nms(2, {0, 0, 1, 1, 5, 5, 6, 6, 0, 0, 1, 1.05}, {0.5, 0.5, 0.5}, 3, 0.5)[0]),
            (std::vector<double>{0, 1}));
}

TEST(NonMaxSuppressionTest, ScoreThresholdIsStrict) {
  // Above 0.4: boxes 3, 0, 1, 2, 4; 1 and 2 fall to 0, 4 to 3.
  EXPECT_EQ(Indices(Nms(3, kBoxes, kScores, 6, 0.5, 0.4)[0]), (std::vector<double>{3, 0}));
  // A score equal to the threshold is out.
  EXPECT_EQ(Indices(Nms(3, kBoxes, kScores, 6, 0.5, 0.3)[0]), (std::vector<double>{3, 0}));
  EXPECT_EQ(Indices(Nms(3, kBoxes, kScores, 6, 0.5, 0.29)[0]), (std::vector<double>{3, 0, 5}));
  EXPECT_EQ(Indices(Nms(4, kBoxes, kScores, 6, 0.5, 0.95)[0]), (std::vector<double>{}));
}

TEST(NonMaxSuppressionTest, V4PadsAndCounts) {
  std::vector<Tensor> out = Nms(4, kBoxes, kScores, 5, 0.5, -1e30, true);
  EXPECT_EQ(Indices(out[0]), (std::vector<double>{3, 0, 5, 0, 0}));
  EXPECT_EQ(DimsOf(out[1]), Dims{});
  EXPECT_EQ(Indices(out[1]), (std::vector<double>{3}));
  out = Nms(4, kBoxes, kScores, 2, 0.5, 0.4, false);
  EXPECT_EQ(Indices(out[0]), (std::vector<double>{3, 0}));
  EXPECT_EQ(Indices(out[1]), (std::vector<double>{2}));
  out = Nms(4, kBoxes, kScores, 0, 0.5, 0.0, true);
  EXPECT_EQ(Indices(out[0]), (std::vector<double>{}));
  EXPECT_EQ(Indices(out[1]), (std::vector<double>{0}));
}

TEST(NonMaxSuppressionTest, HalfInputs) {
  for (int v : {2, 3, 4}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(Indices(Nms(v, kBoxes, kScores, 3, 0.5, -1000, false, GR_HALF)[0]), (std::vector<double>{3, 0, 5}));
  }
  EXPECT_EQ(Indices(Nms(3, kBoxes, kScores, 6, 0.5, 0.4, false, GR_HALF)[0]), (std::vector<double>{3, 0}));
}

// Greedy NMS written out: order by (score desc, index asc), keep a box when
// its IoU with every kept box is at most the threshold.
std::vector<double> RefNms(const std::vector<double>& boxes, const std::vector<double>& scores, int max_output,
                           double iou_threshold, double score_threshold) {
  auto iou = [&](int i, int j) {
    auto lo = [&](int b, int k) { return std::min(boxes[4 * b + k], boxes[4 * b + k + 2]); };
    auto hi = [&](int b, int k) { return std::max(boxes[4 * b + k], boxes[4 * b + k + 2]); };
    const double ai = (hi(i, 0) - lo(i, 0)) * (hi(i, 1) - lo(i, 1));
    const double aj = (hi(j, 0) - lo(j, 0)) * (hi(j, 1) - lo(j, 1));
    if (ai <= 0 || aj <= 0) return 0.0;
    const double h = std::max(0.0, std::min(hi(i, 0), hi(j, 0)) - std::max(lo(i, 0), lo(j, 0)));
    const double w = std::max(0.0, std::min(hi(i, 1), hi(j, 1)) - std::max(lo(i, 1), lo(j, 1)));
    return h * w / (ai + aj - h * w);
  };
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  std::vector<double> kept;
  for (int i : order) {
    if (static_cast<int>(kept.size()) == max_output) break;
    if (!(scores[i] > score_threshold)) continue;
    bool keep = true;
    for (double k : kept) keep = keep && iou(i, static_cast<int>(k)) <= iou_threshold;
    if (keep) kept.push_back(i);
  }
  return kept;
}

TEST(NonMaxSuppressionTest, RandomAgainstReference) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> pos(0, 10), size(0.5, 4), score(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 40;
    std::vector<double> boxes, scores;
    for (int i = 0; i < n; ++i) {
      // Float-exact values, so that the reference sees the kernel's inputs.
      const float y = pos(rng), x = pos(rng), h = size(rng), w = size(rng);
      if (i % 3 == 0) {
        boxes.insert(boxes.end(), {y + h, x + w, y, x});  // flipped corners
      } else {
        boxes.insert(boxes.end(), {y, x, y + h, x + w});
      }
      scores.push_back(score(rng));
    }
    for (double iou : {0.0, 0.3, 0.7}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " iou " + std::to_string(iou));
      std::vector<double> fboxes;
      for (double b : boxes) fboxes.push_back(static_cast<float>(b));
      EXPECT_EQ(Indices(Nms(3, fboxes, scores, 15, iou, 0.2)[0]), RefNms(fboxes, scores, 15, iou, 0.2));
    }
  }
}

TEST(NonMaxSuppressionTest, Errors) {
  const std::string v3 = "NonMaxSuppressionV3";
  auto run = [&](const std::string& op, std::vector<Tensor> in) {
    return OpRun(op, "", std::move(in), {GR_INT32}).Try();
  };
  const Tensor boxes = Floats({2, 4}, {0, 0, 1, 1, 0, 0, 2, 2}), scores = Floats({2}, {0.5, 0.6});
  const Tensor three = Ints({}, {3}), half = Floats({}, {0.5}), zero = Floats({}, {0});
  EXPECT_ERROR(run(v3, {boxes, scores, three, Floats({}, {1.5}), zero}), Code::kInvalidArgument,
               "iou_threshold must be in [0, 1]", "'n'");
  EXPECT_ERROR(run("NonMaxSuppressionV2", {boxes, scores, three, Floats({}, {-0.1})}), Code::kInvalidArgument,
               "iou_threshold must be in [0, 1]");
  EXPECT_ERROR(run(v3, {boxes, scores, Ints({1}, {3}), half, zero}), Code::kInvalidArgument,
               "max_output_size must be 0-D, got shape [1]");
  EXPECT_ERROR(run(v3, {boxes, scores, three, Floats({1}, {0.5}), zero}), Code::kInvalidArgument,
               "iou_threshold must be 0-D, got shape [1]");
  EXPECT_ERROR(run(v3, {boxes, scores, three, half, Floats({1}, {0})}), Code::kInvalidArgument,
               "score_threshold must be 0-D, got shape [1]");
  EXPECT_ERROR(run(v3, {Floats({8}, {0, 0, 1, 1, 0, 0, 2, 2}), scores, three, half, zero}), Code::kInvalidArgument,
               "boxes must be 2-D[8]");
  EXPECT_ERROR(run(v3, {Floats({2, 3}, {0, 0, 1, 1, 0, 0}), scores, three, half, zero}), Code::kInvalidArgument,
               "boxes must have 4 columns");
  EXPECT_ERROR(run(v3, {boxes, Floats({2, 1}, {0.5, 0.6}), three, half, zero}), Code::kInvalidArgument,
               "scores must be 1-D[2,1]");
  EXPECT_ERROR(run(v3, {boxes, Floats({3}, {0.5, 0.6, 0.7}), three, half, zero}), Code::kInvalidArgument,
               "scores has incompatible shape");
  EXPECT_ERROR(run(v3, {boxes, scores, Ints({}, {-1}), half, zero}), Code::kInvalidArgument,
               "output size must be non-negative");
  // The shape function: boxes [n,4] and scores [n] must agree.
  auto shaped = [](const std::string& name, const Dims& dims) {
    std::string shape = "attr { key: \"shape\" value { shape { ";
    for (int64_t d : dims) shape += "dim { size: " + std::to_string(d) + " } ";
    return NodeText(name, "Placeholder", {}, TypeAttr("dtype", "DT_FLOAT") + shape + "} } } ");
  };
  EXPECT_ERROR(TryRun(shaped("b", {3, 4}) + shaped("s", {2}) + ConstNode("m", "DT_INT32", {}, "int_val", {"3"}) + shaped("i", {}) +
                          shaped("t", {}) + NodeText("nms", v3, {"b", "s", "m", "i", "t"}, ""),
                      {}, {"nms"}),
               Code::kInvalidArgument, "Dimensions must be equal, but are 3 and 2");
}

}  // namespace
}  // namespace graphrt
