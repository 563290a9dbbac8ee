// CPU kernels of the random family: RandomUniform, RandomStandardNormal,
// TruncatedNormal, RandomUniformInt, RandomShuffle, Multinomial.
//
// TensorFlow's streams, reproduced (facts in tf_behaviours.md section 12):
// - each kernel owns a Philox4x32-10 keyed by (seed, seed2), or by two fresh
//   random 64-bit numbers when both are 0;
// - each execution takes a copy of it and moves the kernel's generator past
//   the samples that execution may use (N * 256 for N outputs), so
//   successive Runs continue the stream and concurrent Runs never share
//   numbers;
// - output group i (4 floats / halves / bfloat16s / int32s, or 2 doubles /
//   int64s) comes from sample i of the copy; a truncated-normal group i from
//   its own copy skipped to sample i * 256 (i * 128 for double groups of 2).
//   Every group's numbers are thus a function of its index alone, and the
//   groups are split over the session's pool with Philox skip-ahead: the
//   output is the same for any thread count.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <type_traits>
#include <vector>

#include "array/array_util.h"
#include "common/cpu/eigen.h"
#include "random/philox.h"

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;
using random::Philox4x32;
using random::WordStream;
using half = Eigen::half;
using bf16 = Eigen::bfloat16;

// ------------------------------------------------------------ seeds

uint64_t FreshSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}

// The seed handling and the generator every random kernel shares
// (TensorFlow's GuardedPhiloxRandom). The core keeps one instance per node
// and session and may run it from several Runs at once, hence the lock.
class PhiloxKernel : public OpKernel {
 public:
  explicit PhiloxKernel(OpKernelConstruction* c) : OpKernel(c) {
    int64_t seed = 0, seed2 = 0;
    // Both attrs default to 0 in the OpDef, so they are always present.
    OP_REQUIRES_OK(c, c->GetAttr("seed", &seed));
    OP_REQUIRES_OK(c, c->GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {
      // Non-deterministic: every kernel instance draws its own key.
      seed = static_cast<int64_t>(FreshSeed());
      seed2 = static_cast<int64_t>(FreshSeed());
    }
    gen_ = Philox4x32(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
  }

 protected:
  // The generator at the start of `samples` samples now reserved for the
  // caller; the kernel's generator moves past them.
  Philox4x32 Reserve(unsigned __int128 samples) {
    std::lock_guard<std::mutex> lock(mu_);
    Philox4x32 local = gen_;
    gen_.Skip(samples);
    return local;
  }
  // TensorFlow's ReserveRandomOutputs(n, 256).
  Philox4x32 ReserveOutputs(int64_t n) {
    return Reserve(static_cast<unsigned __int128>(n) * random::kReservedSamplesPerOutput);
  }

 private:
  std::mutex mu_;
  Philox4x32 gen_;
};

// The output shape from a 1-D int32/int64 shape tensor, under the size rule.
Status ReadShape(const TensorView& t, std::vector<int64_t>* dims) {
  if (t.rank() != 1 || (t.dtype() != GR_INT32 && t.dtype() != GR_INT64)) {
    return errors::InvalidArgument("shape must be a vector of {int32,int64}, got shape ", sf::ShapeString(t));
  }
  dims->resize(static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < dims->size(); ++i)
    (*dims)[i] = t.dtype() == GR_INT32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  int64_t unused;
  return NumElementsOf(*dims, &unused);
}

// ----------------------------------------------------- distributions
//
// Each maps the generator (positioned at its group's first sample) to one
// output group of kGroup values. kPerGroupSkip != 0 marks a distribution
// that draws a variable number of words: its group i then starts at sample
// i * kPerGroupSkip of the execution's stream instead of sample i.

template <typename T>
struct Uniform;
template <>
struct Uniform<float> {
  static constexpr int kGroup = 4;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 16;
  std::array<float, 4> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    return {random::WordToFloat(s[0]), random::WordToFloat(s[1]), random::WordToFloat(s[2]),
            random::WordToFloat(s[3])};
  }
};
template <>
struct Uniform<double> {
  static constexpr int kGroup = 2;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 12;
  std::array<double, 2> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    return {random::WordsToDouble(s[0], s[1]), random::WordsToDouble(s[2], s[3])};
  }
};
template <>
struct Uniform<half> {
  static constexpr int kGroup = 4;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 16;
  std::array<half, 4> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    return {half(random::WordToHalfValue(s[0])), half(random::WordToHalfValue(s[1])),
            half(random::WordToHalfValue(s[2])), half(random::WordToHalfValue(s[3]))};
  }
};
template <>
struct Uniform<bf16> {
  static constexpr int kGroup = 4;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 16;
  std::array<bf16, 4> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    return {bf16(random::WordToBfloat16Value(s[0])), bf16(random::WordToBfloat16Value(s[1])),
            bf16(random::WordToBfloat16Value(s[2])), bf16(random::WordToBfloat16Value(s[3]))};
  }
};

// Standard normals: Box-Muller on word pairs (x0,x1), (x2,x3) in float;
// half and bfloat16 are the float results rounded to nearest.
template <typename T>
struct Normal {
  static constexpr int kGroup = 4;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 80;
  std::array<T, 4> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    float f[4];
    random::BoxMullerFloat(s[0], s[1], &f[0], &f[1]);
    random::BoxMullerFloat(s[2], s[3], &f[2], &f[3]);
    return {T(f[0]), T(f[1]), T(f[2]), T(f[3])};
  }
};
template <>
struct Normal<double> {
  static constexpr int kGroup = 2;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 80;
  std::array<double, 2> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    std::array<double, 2> r;
    random::BoxMullerDouble(s[0], s[1], s[2], s[3], &r[0], &r[1]);
    return r;
  }
};

// Truncated normals: words one at a time, Box-Muller pairs, each result
// kept when |x| < 2 (sin value first), until the group is full. The 256
// samples a group owns hold 512 float pairs; running out would need
// hundreds of rejections in a row (p < 0.05 each), so, as in TensorFlow,
// the loop is not bounded by them.
template <typename T>
struct Truncated {
  static constexpr int kGroup = 4;
  static constexpr uint64_t kPerGroupSkip = random::kReservedSamplesPerOutput;  // 4 * 256 / 4
  static constexpr int64_t kCost = 100;
  std::array<T, 4> operator()(Philox4x32* g) const {
    WordStream words(g);
    std::array<T, 4> r;
    int n = 0;
    while (true) {
      const uint32_t x0 = words(), x1 = words();
      float f[2];
      random::BoxMullerFloat(x0, x1, &f[0], &f[1]);
      for (float v : f) {
        if (std::fabs(v) < 2.0f) {
          r[n++] = T(v);
          if (n == kGroup) return r;
        }
      }
    }
  }
};
template <>
struct Truncated<double> {
  static constexpr int kGroup = 2;
  static constexpr uint64_t kPerGroupSkip = random::kReservedSamplesPerOutput / 2;  // 2 * 256 / 4
  static constexpr int64_t kCost = 100;
  std::array<double, 2> operator()(Philox4x32* g) const {
    WordStream words(g);
    std::array<double, 2> r;
    int n = 0;
    while (true) {
      const uint32_t x0 = words(), x1 = words(), x2 = words(), x3 = words();
      double d[2];
      random::BoxMullerDouble(x0, x1, x2, x3, &d[0], &d[1]);
      for (double v : d) {
        if (std::fabs(v) < 2.0) {
          r[n++] = v;
          if (n == kGroup) return r;
        }
      }
    }
  }
};

// Integers in [lo, hi): lo + (word mod (hi - lo)), the range taken as
// unsigned (TensorFlow accepts the modulo bias); int64 draws two words.
template <typename T>
struct UniformInt;
template <>
struct UniformInt<int32_t> {
  static constexpr int kGroup = 4;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 20;
  int32_t lo;
  uint32_t range;
  UniformInt(int32_t l, int32_t h) : lo(l), range(static_cast<uint32_t>(h) - static_cast<uint32_t>(l)) {}
  std::array<int32_t, 4> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    std::array<int32_t, 4> r;
    for (int i = 0; i < 4; ++i) r[i] = static_cast<int32_t>(static_cast<uint32_t>(lo) + s[i] % range);
    return r;
  }
};
template <>
struct UniformInt<int64_t> {
  static constexpr int kGroup = 2;
  static constexpr uint64_t kPerGroupSkip = 0;
  static constexpr int64_t kCost = 20;
  int64_t lo;
  uint64_t range;
  UniformInt(int64_t l, int64_t h) : lo(l), range(static_cast<uint64_t>(h) - static_cast<uint64_t>(l)) {}
  std::array<int64_t, 2> operator()(Philox4x32* g) const {
    const auto s = (*g)();
    std::array<int64_t, 2> r;
    for (int i = 0; i < 2; ++i) {
      const uint64_t x = s[2 * i] | (static_cast<uint64_t>(s[2 * i + 1]) << 32);
      r[i] = static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
    }
    return r;
  }
};

// Fills n values from the execution's generator `base`, group by group,
// over the session's pool. A short last group keeps its first values.
template <typename T, typename Dist>
void FillGroups(OpKernelContext* ctx, const Philox4x32& base, const Dist& dist, T* data, int64_t n) {
  constexpr int64_t kGroup = Dist::kGroup;
  const int64_t groups = n / kGroup + (n % kGroup != 0 ? 1 : 0);
  auto work = [&](int64_t begin, int64_t end) {
    Philox4x32 gen = base;
    if constexpr (Dist::kPerGroupSkip == 0) gen.Skip(static_cast<uint64_t>(begin));
    for (int64_t g = begin; g < end; ++g) {
      if constexpr (Dist::kPerGroupSkip != 0) {
        gen = base;
        gen.Skip(static_cast<unsigned __int128>(g) * Dist::kPerGroupSkip);
      }
      const auto values = dist(&gen);
      const int64_t count = std::min<int64_t>(kGroup, n - g * kGroup);
      std::copy(values.begin(), values.begin() + count, data + g * kGroup);
    }
  };
  ctx->parallel_for(groups, Dist::kCost * kGroup, work);
}

// --------------------------------------------- RandomUniform and normals

// RandomUniform, RandomStandardNormal, TruncatedNormal: output of the
// shape given by input 0, filled from Dist.
template <typename T, typename Dist>
class PhiloxFillOp : public PhiloxKernel {
 public:
  explicit PhiloxFillOp(OpKernelConstruction* c) : PhiloxKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, ReadShape(ctx->input(0), &dims));
    TensorView out;
    if (!ctx->allocate_output(0, dims, &out).ok()) return;
    const Philox4x32 base = ReserveOutputs(out.NumElements());
    FillGroups(ctx, base, Dist(), out.data<T>(), out.NumElements());
  }
};

// --------------------------------------------------- RandomUniformInt

template <typename T>
class RandomUniformIntOp : public PhiloxKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* c) : PhiloxKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, ReadShape(ctx->input(0), &dims));
    const TensorView minval = ctx->input(1), maxval = ctx->input(2);
    OP_REQUIRES(ctx, minval.rank() == 0,
                errors::InvalidArgument("minval must be 0-D, got shape ", sf::ShapeString(minval)));
    OP_REQUIRES(ctx, maxval.rank() == 0,
                errors::InvalidArgument("maxval must be 0-D, got shape ", sf::ShapeString(maxval)));
    TensorView out;
    if (!ctx->allocate_output(0, dims, &out).ok()) return;
    // As in TensorFlow, an empty output needs no valid range and draws
    // nothing from the stream.
    if (out.NumElements() == 0) return;
    const T lo = minval.scalar<T>(), hi = maxval.scalar<T>();
    OP_REQUIRES(ctx, lo < hi, errors::InvalidArgument("Need minval < maxval, got ", lo, " >= ", hi));
    const Philox4x32 base = ReserveOutputs(out.NumElements());
    FillGroups(ctx, base, UniformInt<T>(lo, hi), out.data<T>(), out.NumElements());
  }
};

// ------------------------------------------------------- RandomShuffle

// Fisher-Yates from the front: for i = 0 .. n-2 swap i with
// i + (word mod (n - i)), one word per step (two when n needs more than 32
// bits). Returns the permutation: output row i = input row perm[i].
template <typename Index>
std::vector<Index> ShuffledIndices(Philox4x32 gen, int64_t n) {
  std::vector<Index> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = static_cast<Index>(i);
  WordStream words(&gen);
  for (int64_t i = 0; i + 1 < n; ++i) {
    uint64_t u = words();
    if constexpr (sizeof(Index) > 4) u = (u << 32) | words();
    const int64_t j = i + static_cast<int64_t>(u % static_cast<uint64_t>(n - i));
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  }
  return perm;
}

class RandomShuffleOp : public PhiloxKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* c) : PhiloxKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    // Nothing to permute (TensorFlow's test, including scalars): the input
    // itself, and no numbers are drawn.
    if (in.NumElements() <= 1 || in.dim(0) <= 1) {
      ctx->set_output_from_input(0, 0);
      return;
    }
    const bool is_string = in.dtype() == GR_STRING;
    const int elem = array::ElementSize(in.dtype());
    OP_REQUIRES(ctx, is_string || elem > 0,
                errors::Unimplemented("RandomShuffle does not support dtype ", array::DataTypeName(in.dtype())));
    const int64_t n = in.dim(0);
    TensorView out;
    if (!ctx->allocate_output(0, in.dims(), &out).ok()) return;
    if (static_cast<uint64_t>(n) <= std::numeric_limits<uint32_t>::max()) {
      // TensorFlow's ReserveSamples32(n - 1): one word per step.
      const Philox4x32 gen = Reserve((static_cast<uint64_t>(n) - 1 + 3) / 4);
      CopyRows(ctx, in, &out, ShuffledIndices<uint32_t>(gen, n), elem);
    } else {
      // Rows beyond 2^32 need 64-bit draws: two words per step.
      const Philox4x32 gen = Reserve((2 * (static_cast<uint64_t>(n) - 1) + 3) / 4);
      CopyRows(ctx, in, &out, ShuffledIndices<uint64_t>(gen, n), elem);
    }
  }

 private:
  template <typename Index>
  static void CopyRows(OpKernelContext* ctx, const TensorView& in, TensorView* out, const std::vector<Index>& perm,
                       int elem) {
    const int64_t n = in.dim(0);
    const int64_t row = in.NumElements() / n;  // elements per row
    if (in.dtype() == GR_STRING) {
      const GR_StringElem* src = in.data<GR_StringElem>();
      ctx->parallel_for(n, 40 * row, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t from = static_cast<int64_t>(perm[static_cast<size_t>(i)]) * row;
          for (int64_t k = 0; k < row; ++k)
            Api().string_assign(out->raw(), i * row + k, src[from + k].data, src[from + k].size);
        }
      });
      return;
    }
    const size_t row_bytes = static_cast<size_t>(row) * static_cast<size_t>(elem);
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    ctx->parallel_for(n, 1 + static_cast<int64_t>(row_bytes / 8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        std::memcpy(dst + static_cast<size_t>(i) * row_bytes,
                    src + static_cast<size_t>(perm[static_cast<size_t>(i)]) * row_bytes, row_bytes);
    });
  }
};

// --------------------------------------------------------- Multinomial

// Per row: the running sum of exp(logit - max finite logit) over the
// finite logits (a CDF, not normalised); each sample is the first class
// whose running sum exceeds u * total, u a uniform double from two words.
// A row whose logits are all non-finite yields num_classes, as in
// TensorFlow.
//
// Stream: the rows read one word sequence, 2 * num_samples words per row,
// row b from word 2 * num_samples * b. This is TensorFlow's stream when it
// runs the op as one shard; TensorFlow restarts the sequence at each
// shard's first row, which makes its output depend on the thread count, so
// graphrt positions every row itself (exact values were not checked against
// real TensorFlow output).
template <typename T, typename Out>
class MultinomialOp : public PhiloxKernel {
 public:
  explicit MultinomialOp(OpKernelConstruction* c) : PhiloxKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView logits = ctx->input(0), num_samples_t = ctx->input(1);
    OP_REQUIRES(ctx, logits.rank() == 2,
                errors::InvalidArgument("logits should be a matrix, got shape ", sf::ShapeString(logits)));
    OP_REQUIRES(ctx, num_samples_t.rank() == 0,
                errors::InvalidArgument("num_samples should be a scalar, got shape ",
                                        sf::ShapeString(num_samples_t)));
    const int64_t num_samples = num_samples_t.scalar<int32_t>();
    OP_REQUIRES(ctx, num_samples >= 0,
                errors::InvalidArgument("num_samples should be non-negative, got ", num_samples));
    for (int i = 0; i < 2; ++i) {
      OP_REQUIRES(ctx, logits.dim(i) <= std::numeric_limits<int32_t>::max(),
                  errors::InvalidArgument("logits.shape = ", sf::ShapeString(logits), " too large for int"));
    }
    const int64_t batch = logits.dim(0), classes = logits.dim(1);
    OP_REQUIRES(ctx, classes > 0, errors::InvalidArgument("num_classes should be positive, got ", classes));
    TensorView out;
    if (!ctx->allocate_output(0, {batch, num_samples}, &out).ok()) return;
    if (out.NumElements() == 0) return;
    // TensorFlow's reservation: num_samples rounded up to 4, times 2 (two
    // words per double), per row, each output reserving 256 samples.
    const int64_t ceil4 = (num_samples + 3) / 4 * 4;
    const Philox4x32 base = Reserve(static_cast<unsigned __int128>(batch) * static_cast<uint64_t>(ceil4 * 2) *
                                    random::kReservedSamplesPerOutput);
    const T* in = logits.data<T>();
    Out* o = out.data<Out>();
    const double log2_classes = std::log2(static_cast<double>(classes));
    const int64_t cost = 5 * (num_samples * static_cast<int64_t>(log2_classes + 1) + classes);
    ctx->parallel_for(batch, cost, [&](int64_t begin, int64_t end) {
      std::vector<double> cdf(static_cast<size_t>(classes));
      for (int64_t b = begin; b < end; ++b) {
        const T* row = in + b * classes;
        double max_logit = static_cast<double>(std::numeric_limits<T>::lowest());
        for (int64_t j = 0; j < classes; ++j) {
          const double v = static_cast<double>(row[j]);
          if (std::isfinite(v)) max_logit = std::max(max_logit, v);
        }
        double total = 0;
        for (int64_t j = 0; j < classes; ++j) {
          const double v = static_cast<double>(row[j]);
          if (std::isfinite(v)) total += std::exp(v - max_logit);
          cdf[static_cast<size_t>(j)] = total;
        }
        Philox4x32 gen = base;
        WordStream words(&gen);
        words.SkipWords(2 * static_cast<uint64_t>(num_samples) * static_cast<uint64_t>(b));
        for (int64_t s = 0; s < num_samples; ++s) {
          const uint32_t x0 = words(), x1 = words();
          const double target = random::WordsToDouble(x0, x1) * total;
          o[b * num_samples + s] =
              static_cast<Out>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin());
        }
      }
    });
  }
};

// -------------------------------------------------------- registration

#define GR_REGISTER_REAL(OP, T, DTYPE, DIST)                                                          \
  REGISTER_KERNEL(Name(OP).Device(DEVICE_CPU).TypeConstraint("dtype", {DTYPE}).HostMemory("shape"), \
                  PhiloxFillOp<T, DIST<T>>)
#define GR_REGISTER_ALL_REAL(OP, DIST)               \
  GR_REGISTER_REAL(OP, float, GR_FLOAT, DIST);       \
  GR_REGISTER_REAL(OP, double, GR_DOUBLE, DIST);     \
  GR_REGISTER_REAL(OP, half, GR_HALF, DIST);         \
  GR_REGISTER_REAL(OP, bf16, GR_BFLOAT16, DIST)

GR_REGISTER_ALL_REAL("RandomUniform", Uniform);
GR_REGISTER_ALL_REAL("RandomStandardNormal", Normal);
GR_REGISTER_ALL_REAL("TruncatedNormal", Truncated);
#undef GR_REGISTER_ALL_REAL
#undef GR_REGISTER_REAL

REGISTER_KERNEL(Name("RandomUniformInt").Device(DEVICE_CPU).TypeConstraint("Tout", {GR_INT32}),
                RandomUniformIntOp<int32_t>);
REGISTER_KERNEL(Name("RandomUniformInt").Device(DEVICE_CPU).TypeConstraint("Tout", {GR_INT64}),
                RandomUniformIntOp<int64_t>);

REGISTER_KERNEL(Name("RandomShuffle").Device(DEVICE_CPU), RandomShuffleOp);

#define GR_REGISTER_MULTINOMIAL(T, DTYPE)                                                             \
  REGISTER_KERNEL(                                                                                    \
      Name("Multinomial").Device(DEVICE_CPU).TypeConstraint("T", {DTYPE}).TypeConstraint("output_dtype", {GR_INT32}), \
      MultinomialOp<T, int32_t>);                                                                     \
  REGISTER_KERNEL(                                                                                    \
      Name("Multinomial").Device(DEVICE_CPU).TypeConstraint("T", {DTYPE}).TypeConstraint("output_dtype", {GR_INT64}), \
      MultinomialOp<T, int64_t>)
GR_REGISTER_MULTINOMIAL(float, GR_FLOAT);
GR_REGISTER_MULTINOMIAL(double, GR_DOUBLE);
GR_REGISTER_MULTINOMIAL(half, GR_HALF);
GR_REGISTER_MULTINOMIAL(bf16, GR_BFLOAT16);
#undef GR_REGISTER_MULTINOMIAL

}  // namespace
}  // namespace sdk
}  // namespace graphrt
