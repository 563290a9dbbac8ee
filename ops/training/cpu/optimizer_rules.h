// The update rules of TensorFlow's optimizer ops (tf_behaviours.md §11), one
// struct per optimizer of training/optimizer_defs.h. A rule only says what
// happens to one element: Step<C>(scalars, flags) reads the op's scalar
// inputs (in input order, converted to the compute type C) once per call,
// and step(x, g) updates x = {var, slot1, ...} (one element of each, in
// input order) with gradient element g. The kernels
// (optimizer_kernels.cc) do everything else: variables, locks, shapes,
// dtypes, sparse rows, threads.
//
// Rule members: kName (the signature's name), kVars / kScalars (counts,
// checked against the signature at registration), kComplex (also
// registered for complex64/128: the formula is plain arithmetic and sqrt,
// as TF registers them), kCost (about ns per element, for the thread
// split), optionally kRequire (a value condition per scalar input that TF's
// kernel checks).
#ifndef GRAPHRT_OPS_TRAINING_CPU_OPTIMIZER_RULES_H_
#define GRAPHRT_OPS_TRAINING_CPU_OPTIMIZER_RULES_H_

#include <algorithm>
#include <cmath>
#include <complex>

namespace graphrt {
namespace sdk {
namespace training {

// The boolean attrs some optimizers have (defaults as TF's).
struct Flags {
  bool use_nesterov = false;
  bool update_slots = true;
  bool multiply_linear_by_lr = false;
};

// What TF requires of a scalar input's value (beyond being a scalar).
enum class Require { kAny, kPositive, kNonNegative, kNonPositive };

using std::sqrt;

template <typename C>
C Sign(C x) {
  return static_cast<C>((C(0) < x) - (x < C(0)));
}

// TF's proximal step at `rate`: soft threshold by rate·l1 (only when
// l1 > 0), then shrink by 1 + rate·l2. Both sides are computed and one
// selected, so that the element loop has no branch and vectorises.
template <typename C>
C Proximal(C p, C l1, C l2, C rate) {
  const C excess = std::abs(p) - rate * l1;
  const C thresholded = Sign(p) * (excess > C(0) ? excess : C(0));
  return (l1 > C(0) ? thresholded : p) / (C(1) + rate * l2);
}

struct GradientDescentRule {
  static constexpr const char* kName = "GradientDescent";
  static constexpr int kVars = 1, kScalars = 1;
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 1;
  template <typename C>
  struct Step {
    C alpha;
    Step(const C* s, const Flags&) : alpha(s[0]) {}
    void operator()(C* x, C g) const { x[0] -= alpha * g; }
  };
};

struct ProximalGradientDescentRule {
  static constexpr const char* kName = "ProximalGradientDescent";
  static constexpr int kVars = 1, kScalars = 3;  // alpha, l1, l2
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 4;
  template <typename C>
  struct Step {
    C alpha, l1, l2;
    Step(const C* s, const Flags&) : alpha(s[0]), l1(s[1]), l2(s[2]) {}
    void operator()(C* x, C g) const { x[0] = Proximal(x[0] - alpha * g, l1, l2, alpha); }
  };
};

struct MomentumRule {
  static constexpr const char* kName = "Momentum";
  static constexpr int kVars = 2, kScalars = 2;  // lr, momentum
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 2;
  template <typename C>
  struct Step {
    C lr, momentum;
    bool nesterov;
    Step(const C* s, const Flags& f) : lr(s[0]), momentum(s[1]), nesterov(f.use_nesterov) {}
    void operator()(C* x, C g) const {
      C& var = x[0];
      C& accum = x[1];
      accum = accum * momentum + g;
      if (nesterov) var -= g * lr + accum * momentum * lr;
      else var -= accum * lr;
    }
  };
};

// TF1's Adam: bias correction folded into the step size, epsilon added
// after the sqrt and not corrected ("epsilon hat").
struct AdamRule {
  static constexpr const char* kName = "Adam";
  static constexpr int kVars = 3, kScalars = 6;  // beta1_power, beta2_power, lr, beta1, beta2, epsilon
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 6;
  template <typename C>
  struct Step {
    C lr_t, beta1, beta2, epsilon;
    bool nesterov;
    Step(const C* s, const Flags& f)
        : lr_t(s[2] * sqrt(C(1) - s[1]) / (C(1) - s[0])),
          beta1(s[3]),
          beta2(s[4]),
          epsilon(s[5]),
          nesterov(f.use_nesterov) {}
    void operator()(C* x, C g) const {
      C& var = x[0];
      C& m = x[1];
      C& v = x[2];
      m += (g - m) * (C(1) - beta1);
      v += (g * g - v) * (C(1) - beta2);
      const C num = nesterov ? m * beta1 + (C(1) - beta1) * g : m;
      var -= lr_t * num / (sqrt(v) + epsilon);
    }
  };
};

// epsilon inside the sqrt.
struct RMSPropRule {
  static constexpr const char* kName = "RMSProp";
  static constexpr int kVars = 3, kScalars = 4;  // lr, rho, momentum, epsilon
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 6;
  template <typename C>
  struct Step {
    C lr, rho, momentum, epsilon;
    Step(const C* s, const Flags&) : lr(s[0]), rho(s[1]), momentum(s[2]), epsilon(s[3]) {}
    void operator()(C* x, C g) const {
      C& var = x[0];
      C& ms = x[1];
      C& mom = x[2];
      ms += (g * g - ms) * (C(1) - rho);
      mom = mom * momentum + lr * g / sqrt(ms + epsilon);
      var -= mom;
    }
  };
};

struct CenteredRMSPropRule {
  static constexpr const char* kName = "CenteredRMSProp";
  static constexpr int kVars = 4, kScalars = 4;  // lr, rho, momentum, epsilon
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 8;
  template <typename C>
  struct Step {
    C lr, rho, momentum, epsilon;
    Step(const C* s, const Flags&) : lr(s[0]), rho(s[1]), momentum(s[2]), epsilon(s[3]) {}
    void operator()(C* x, C g) const {
      C& var = x[0];
      C& mg = x[1];
      C& ms = x[2];
      C& mom = x[3];
      ms += (g * g - ms) * (C(1) - rho);
      mg += (g - mg) * (C(1) - rho);
      mom = mom * momentum + lr * g / sqrt(ms - mg * mg + epsilon);
      var -= mom;
    }
  };
};

struct AdagradRule {
  static constexpr const char* kName = "Adagrad";
  static constexpr int kVars = 2, kScalars = 1;  // lr
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 4;
  template <typename C>
  struct Step {
    C lr;
    bool update_slots;
    Step(const C* s, const Flags& f) : lr(s[0]), update_slots(f.update_slots) {}
    void operator()(C* x, C g) const {
      x[1] = update_slots ? x[1] + g * g : x[1];  // a select, not a branch: vectorises
      x[0] -= lr * g / sqrt(x[1]);
    }
  };
};

struct AdagradV2Rule {
  static constexpr const char* kName = "AdagradV2";
  static constexpr int kVars = 2, kScalars = 2;  // lr, epsilon
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 4;
  template <typename C>
  struct Step {
    C lr, epsilon;
    bool update_slots;
    Step(const C* s, const Flags& f) : lr(s[0]), epsilon(s[1]), update_slots(f.update_slots) {}
    void operator()(C* x, C g) const {
      x[1] = update_slots ? x[1] + g * g : x[1];
      x[0] -= lr * g / (sqrt(x[1]) + epsilon);
    }
  };
};

struct ProximalAdagradRule {
  static constexpr const char* kName = "ProximalAdagrad";
  static constexpr int kVars = 2, kScalars = 3;  // lr, l1, l2
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 8;
  static constexpr Require kRequire[kScalars] = {Require::kPositive, Require::kNonNegative, Require::kNonNegative};
  template <typename C>
  struct Step {
    C lr, l1, l2;
    Step(const C* s, const Flags&) : lr(s[0]), l1(s[1]), l2(s[2]) {}
    void operator()(C* x, C g) const {
      x[1] += g * g;
      const C rate = lr / sqrt(x[1]);
      x[0] = Proximal(x[0] - rate * g, l1, l2, rate);
    }
  };
};

struct AdadeltaRule {
  static constexpr const char* kName = "Adadelta";
  static constexpr int kVars = 3, kScalars = 3;  // lr, rho, epsilon
  static constexpr bool kComplex = true;
  static constexpr int64_t kCost = 8;
  template <typename C>
  struct Step {
    C lr, rho, epsilon;
    Step(const C* s, const Flags&) : lr(s[0]), rho(s[1]), epsilon(s[2]) {}
    void operator()(C* x, C g) const {
      C& var = x[0];
      C& accum = x[1];
      C& accum_update = x[2];
      accum = accum * rho + g * g * (C(1) - rho);
      const C update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g;
      accum_update = accum_update * rho + update * update * (C(1) - rho);
      var -= update * lr;
    }
  };
};

// FTRL-proximal. lr_power = -0.5 (the default) takes sqrt instead of pow,
// as TF does. `shrinkage` (FtrlV2's l2_shrinkage) adds 2·l2_shrinkage·var
// to the gradient of the linear term; the accumulator takes the same
// shrunk gradient, as TF 1.x's kernels do (TF >= 2.3 accumulates the raw
// gradient instead: this runtime pins TF 1.x).
template <typename C>
struct FtrlStep {
  C lr, l1, l2, shrinkage, lr_power;
  bool by_lr;
  C Power(C a) const { return lr_power == C(-0.5) ? sqrt(a) : std::pow(a, -lr_power); }
  void operator()(C* x, C g) const {
    C& var = x[0];
    C& accum = x[1];
    C& linear = x[2];
    const C gs = g + C(2) * shrinkage * var;
    const C new_accum = accum + gs * gs;
    const C sigma = Power(new_accum) - Power(accum);
    // multiply_linear_by_lr: `linear` is kept multiplied by lr.
    const C l1_eff = by_lr ? l1 * lr : l1;
    linear += by_lr ? gs * lr - sigma * var : gs - sigma / lr * var;
    const C quadratic = by_lr ? Power(new_accum) + C(2) * l2 * lr : Power(new_accum) / lr + C(2) * l2;
    var = std::abs(linear) > l1_eff ? (Sign(linear) * l1_eff - linear) / quadratic : C(0);
    accum = new_accum;
  }
};

struct FtrlRule {
  static constexpr const char* kName = "Ftrl";
  static constexpr int kVars = 3, kScalars = 4;  // lr, l1, l2, lr_power
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 40;
  static constexpr Require kRequire[kScalars] = {Require::kPositive, Require::kNonNegative, Require::kNonNegative,
                                                 Require::kNonPositive};
  template <typename C>
  struct Step : FtrlStep<C> {
    Step(const C* s, const Flags& f) : FtrlStep<C>{s[0], s[1], s[2], C(0), s[3], f.multiply_linear_by_lr} {}
  };
};

struct FtrlV2Rule {
  static constexpr const char* kName = "FtrlV2";
  static constexpr int kVars = 3, kScalars = 5;  // lr, l1, l2, l2_shrinkage, lr_power
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 40;
  static constexpr Require kRequire[kScalars] = {Require::kPositive, Require::kNonNegative, Require::kNonNegative,
                                                 Require::kNonNegative, Require::kNonPositive};
  template <typename C>
  struct Step : FtrlStep<C> {
    Step(const C* s, const Flags& f) : FtrlStep<C>{s[0], s[1], s[2], s[3], s[4], f.multiply_linear_by_lr} {}
  };
};

struct AdaMaxRule {
  static constexpr const char* kName = "AdaMax";
  static constexpr int kVars = 3, kScalars = 5;  // beta1_power, lr, beta1, beta2, epsilon
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 6;
  template <typename C>
  struct Step {
    C rate, beta1, beta2, epsilon;
    Step(const C* s, const Flags&) : rate(s[1] / (C(1) - s[0])), beta1(s[2]), beta2(s[3]), epsilon(s[4]) {}
    void operator()(C* x, C g) const {
      C& var = x[0];
      C& m = x[1];
      C& v = x[2];
      m += (g - m) * (C(1) - beta1);
      v = std::max(beta2 * v, std::abs(g));
      var -= rate * m / (v + epsilon);
    }
  };
};

struct AddSignRule {
  static constexpr const char* kName = "AddSign";
  static constexpr int kVars = 2, kScalars = 4;  // lr, alpha, sign_decay, beta
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 4;
  template <typename C>
  struct Step {
    C lr, alpha, sign_decay, beta;
    Step(const C* s, const Flags&) : lr(s[0]), alpha(s[1]), sign_decay(s[2]), beta(s[3]) {}
    void operator()(C* x, C g) const {
      C& m = x[1];
      m = m * beta + g * (C(1) - beta);
      x[0] -= lr * (alpha + sign_decay * Sign(g) * Sign(m)) * g;
    }
  };
};

struct PowerSignRule {
  static constexpr const char* kName = "PowerSign";
  static constexpr int kVars = 2, kScalars = 4;  // lr, logbase, sign_decay, beta
  static constexpr bool kComplex = false;
  static constexpr int64_t kCost = 20;
  template <typename C>
  struct Step {
    C lr, logbase, sign_decay, beta;
    Step(const C* s, const Flags&) : lr(s[0]), logbase(s[1]), sign_decay(s[2]), beta(s[3]) {}
    void operator()(C* x, C g) const {
      C& m = x[1];
      m = m * beta + g * (C(1) - beta);
      x[0] -= lr * std::exp(logbase * sign_decay * Sign(g) * Sign(m)) * g;
    }
  };
};

}  // namespace training
}  // namespace sdk
}  // namespace graphrt

#endif  // GRAPHRT_OPS_TRAINING_CPU_OPTIMIZER_RULES_H_
