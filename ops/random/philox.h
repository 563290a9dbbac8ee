// The counter-based generator behind TensorFlow's random ops and the ways
// its 32-bit words become values, from the published facts
// (../shared/tf_behaviours.md section 12; Random123's Philox4x32-10) so
// that graphrt reproduces TensorFlow's exact streams. Plain C++ without
// Eigen or the SDK: a kernel for any device can use it.
#ifndef GRAPHRT_OPS_RANDOM_PHILOX_H_
#define GRAPHRT_OPS_RANDOM_PHILOX_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <Random123/philox.h>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {
namespace random {

// Philox4x32-10 (the rounds are Random123's, Debian's librandom123-dev, the
// reference implementation). One call returns one "sample" of four 32-bit
// words and steps the 128-bit counter by one; Skip(n) jumps n samples ahead
// in O(1), which is what lets any thread start anywhere in the stream.
class Philox4x32 {
 public:
  using Sample = std::array<uint32_t, 4>;

  Philox4x32() = default;
  // TensorFlow's keying: key = seed (low word first), counter words 2 and 3
  // = seed2, counter words 0 and 1 start at zero.
  Philox4x32(uint64_t seed, uint64_t seed2) {
    key_[0] = static_cast<uint32_t>(seed);
    key_[1] = static_cast<uint32_t>(seed >> 32);
    counter_[2] = static_cast<uint32_t>(seed2);
    counter_[3] = static_cast<uint32_t>(seed2 >> 32);
  }

  // Advances the counter by `n` samples (128-bit addition, word 0 lowest).
  void Skip(unsigned __int128 n) {
    unsigned __int128 c = 0;
    for (int i = 3; i >= 0; --i) c = (c << 32) | counter_[i];
    c += n;
    for (int i = 0; i < 4; ++i) {
      counter_[i] = static_cast<uint32_t>(c);
      c >>= 32;
    }
  }

  Sample operator()() {
    const Rounds::ctr_type ctr = {{counter_[0], counter_[1], counter_[2], counter_[3]}};
    const Rounds::key_type key = {{key_[0], key_[1]}};
    const Rounds::ctr_type out = Rounds()(ctr, key);
    Skip(1);
    return {out.v[0], out.v[1], out.v[2], out.v[3]};
  }

  const Sample& counter() const { return counter_; }
  std::array<uint32_t, 2> key() const { return {key_[0], key_[1]}; }

 private:
  using Rounds = r123::Philox4x32_R<10>;
  std::array<uint32_t, 2> key_{0, 0};
  Sample counter_{0, 0, 0, 0};
};

// Hands out a generator's words one at a time (TensorFlow's
// SingleSampleAdapter): a fresh sample is drawn only when the last one's
// four words are used up.
class WordStream {
 public:
  explicit WordStream(Philox4x32* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == 4) {
      buf_ = (*gen_)();
      used_ = 0;
    }
    return buf_[used_++];
  }
  // Drops the next `n` words (whole samples by Skip, the rest one by one).
  void SkipWords(uint64_t n) {
    const uint64_t buffered = 4 - used_;
    if (n <= buffered) {
      used_ += static_cast<int>(n);
      return;
    }
    n -= buffered;
    used_ = 4;
    gen_->Skip(n / 4);
    for (uint64_t i = 0; i < n % 4; ++i) (*this)();
  }

 private:
  Philox4x32* gen_;
  Philox4x32::Sample buf_{};
  int used_ = 4;
};

// ------------------------------------------------- words -> uniform [0, 1)

// The low 23 bits as the mantissa of a float in [1, 2), minus 1.
inline float WordToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7FFFFFu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// 20 bits of x0 above the 32 of x1 as the mantissa of a double in [1, 2),
// minus 1.
inline double WordsToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t{1023} << 52) | (static_cast<uint64_t>(x0 & 0xFFFFFu) << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// Half and bfloat16 in [0, 1) are k/1024 and k/128 for the low 10 or 7 bits
// of a word: TensorFlow builds them as a [1, 2) mantissa minus 1, which is
// exact, so the float value here converts to exactly the same half/bfloat16.
inline float WordToHalfValue(uint32_t x) { return static_cast<float>(x & 0x3FFu) / 1024.0f; }
inline float WordToBfloat16Value(uint32_t x) { return static_cast<float>(x & 0x7Fu) / 128.0f; }

// ----------------------------------------------------------- Box-Muller

// Two standard normals from two words, exactly as TensorFlow computes them
// in float: u1 floored at 1e-7, the angle 2*pi*u2 formed in double and
// rounded to float, the radius in float, sin first then cos.
inline void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = WordToFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(WordToFloat(x1)));
  const float r = std::sqrt(-2.0f * std::log(u1));
  float s, c;
  ::sincosf(v1, &s, &c);
  *f0 = s * r;
  *f1 = c * r;
}

// The same in double from four words (two per uniform).
inline void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1) {
  double u1 = WordsToDouble(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2.0 * M_PI * WordsToDouble(x2, x3);
  const double r = std::sqrt(-2.0 * std::log(u1));
  double s, c;
  ::sincos(v1, &s, &c);
  *d0 = s * r;
  *d1 = c * r;
}

// Samples each generator is advanced per output element and Run, so that
// one Run's numbers never overlap the next Run's (TensorFlow's
// ReserveRandomOutputs(n, 256)); and the room each truncated-normal output
// group gets for its rejections.
constexpr uint64_t kReservedSamplesPerOutput = 256;

}  // namespace random
}  // namespace sdk
}  // namespace graphrt

#pragma GCC visibility pop

#endif  // GRAPHRT_OPS_RANDOM_PHILOX_H_
