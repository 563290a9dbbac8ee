// CPU kernels of every optimizer op (training/optimizer_defs.h): one kernel
// template for the four forms (Apply / ResourceApply / SparseApply /
// ResourceSparseApply) of every rule in optimizer_rules.h.
//
// A call resolves the variable and its slots (ref inputs, or resource
// handles, each checked to name a variable of dtype T), locks them, checks
// shapes and scalars with TensorFlow's error texts, then runs the rule in
// place over every element (dense) or over the rows that `indices` names
// (sparse; a duplicated index is applied again, in order, as TF's CPU
// kernels do). Half and bfloat16 are computed in float.
//
// Locking: TensorFlow takes the variables' mutexes only when use_locking is
// true, and lets unlocked updates race. Here the update always holds every
// variable's exclusive lock, whatever use_locking says: the core's
// copy-on-write PrepareVariableUpdate may swap a variable's buffer, which a
// concurrent reader (a deref'd ref input, ReadVariableOp) must not see
// half-done. Serialised updates are one of the outcomes TF allows, and an
// uncontended lock costs far less than the update. The locks are taken in
// address order and each variable once, so the same variable passed twice,
// or two ops locking the same variables in another order, cannot deadlock.
#include <graphrt/sdk/sdk.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "state/cpu/state_util.h"
#include "training/cpu/optimizer_rules.h"
#include "training/optimizer_defs.h"

namespace graphrt {
namespace sdk {
namespace training {
namespace {

constexpr int kMaxVars = 4;  // CenteredRMSProp: var, mg, ms, mom

// The arithmetic type of a stored type: half and bfloat16 in float.
template <typename S>
struct ComputeOf {
  using type = S;
};
template <>
struct ComputeOf<Eigen::half> {
  using type = float;
};
template <>
struct ComputeOf<Eigen::bfloat16> {
  using type = float;
};

// Holds the exclusive locks of up to kMaxVars variables, each taken once,
// in address order.
class LockSet {
 public:
  LockSet(const Variable* vars, int n) {
    for (int i = 0; i < n; ++i) v_[i] = vars[i].raw();
    std::sort(v_.begin(), v_.begin() + n);
    n_ = static_cast<int>(std::unique(v_.begin(), v_.begin() + n) - v_.begin());
    for (int i = 0; i < n_; ++i) Api().variable_lock(v_[i], 1);
  }
  LockSet(const LockSet&) = delete;
  LockSet& operator=(const LockSet&) = delete;
  ~LockSet() {
    for (int i = n_ - 1; i >= 0; --i) Api().variable_unlock(v_[i], 1);
  }

 private:
  std::array<GR_Variable*, kMaxVars> v_{};
  int n_ = 0;
};

// TF's wording of a scalar input in its errors.
std::string ScalarLabel(const std::string& name) {
  if (name == "l1") return "l1 regularization strength";
  if (name == "l2") return "l2 regularization strength";
  if (name == "l2_shrinkage") return "l2 shrinkage regularization strength";
  return name;
}

const char* RequireText(Require r) {
  switch (r) {
    case Require::kPositive: return "a positive scalar";
    case Require::kNonNegative: return "a non-negative scalar";
    case Require::kNonPositive: return "a non-positive scalar";
    default: return "a scalar";
  }
}

template <typename Rule>
constexpr Require RequireOf(int k) {
  if constexpr (requires { Rule::kRequire; }) return Rule::kRequire[k];
  else return Require::kAny;
}

template <typename C>
bool Holds(Require r, C v) {
  if constexpr (state::kIsComplex<C>) {
    return true;
  } else {
    switch (r) {
      case Require::kPositive: return v > C(0);
      case Require::kNonNegative: return v >= C(0);
      case Require::kNonPositive: return v <= C(0);
      default: return true;
    }
  }
}

// Runs `step` over `count` consecutive elements of every variable from
// `offset` on, with gradient elements g[0, count). Plain loop over scalar
// copies: GCC vectorises it for float/double (with -fno-math-errno, see
// ops/CMakeLists.txt; checked with -fopt-info-vec) for every rule but
// PowerSign (exp), Ftrl (pow) and the two proximal ones (their threshold
// stays a branch). `g` is restrict: it never shares memory
// with a variable being written, since PrepareVariableUpdate copies a
// buffer that anything else (such as a gradient read from the variable)
// still holds; the variables may alias each other (one passed twice).
template <int N, typename S, typename Step>
void ApplyRun(const Step& step, S* const* vars, int64_t offset, const S* __restrict g, int64_t count) {
  using C = typename ComputeOf<S>::type;
  std::array<S*, N> p;
  for (int k = 0; k < N; ++k) p[k] = vars[k] + offset;
  for (int64_t i = 0; i < count; ++i) {
    C x[N];
    for (int k = 0; k < N; ++k) x[k] = static_cast<C>(p[k][i]);
    step(x, static_cast<C>(g[i]));
    for (int k = 0; k < N; ++k) p[k][i] = static_cast<S>(x[k]);
  }
}

template <typename Rule, bool kResource, bool kSparse>
class OptimizerOp : public OpKernel {
  static constexpr int N = Rule::kVars;
  static constexpr int K = Rule::kScalars;

 public:
  explicit OptimizerOp(OpKernelConstruction* c) : OpKernel(c), sig_(*FindOptimizerSignature(Rule::kName)) {
    OP_REQUIRES_OK(c, c->GetAttr("T", &dtype_));
    if (c->HasAttr("use_nesterov")) OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &flags_.use_nesterov));
    if (c->HasAttr("update_slots")) OP_REQUIRES_OK(c, c->GetAttr("update_slots", &flags_.update_slots));
    if (c->HasAttr("multiply_linear_by_lr"))
      OP_REQUIRES_OK(c, c->GetAttr("multiply_linear_by_lr", &flags_.multiply_linear_by_lr));
    int k = 0;
    for (int i = sig_.num_vars; i < static_cast<int>(sig_.inputs.size()); ++i)
      if (i != sig_.grad) {
        int64_scalar_[k] = IsInt64Scalar(sig_, i);
        scalar_[k++] = i;
      }
  }

  void Compute(OpKernelContext* ctx) override {
    Variable vars[N];
    for (int i = 0; i < N; ++i) OP_REQUIRES_OK(ctx, Resolve(ctx, i, &vars[i]));
    {
      LockSet locks(vars, N);
      TensorView views[N];
      for (int i = 0; i < N; ++i) {
        OP_REQUIRES(ctx, vars[i].View(&views[i]),
                    Status(GR_FAILED_PRECONDITION,
                           errors::StrCat(kResource ? "Attempting to use uninitialized variables: "
                                                    : "Attempting to use uninitialized value ",
                                          vars[i].name())));
      }
      OP_REQUIRES_OK(ctx, CheckShapes(ctx, views));
      // Writable views; a variable passed twice is prepared once.
      for (int i = 0; i < N; ++i) {
        int first = 0;
        while (vars[first].raw() != vars[i].raw()) ++first;
        if (first < i) views[i] = views[first];
        else OP_REQUIRES_OK(ctx, ctx->PrepareVariableUpdate(vars[i].raw(), &views[i]));
      }
      OP_REQUIRES_OK(ctx, Dispatch(ctx, views));
    }
    if (!kResource) OP_REQUIRES_OK(ctx, ctx->set_output_ref(0, vars[0].raw()));
  }

 private:
  int In(int i) const { return InputIndex(sig_, i, kSparse); }
  const char* GradName() const { return kSparse ? sig_.sparse_grad : sig_.inputs[sig_.grad]; }

  // The variable behind input i: the ref itself, or the variable a
  // resource handle names (of dtype T).
  Status Resolve(OpKernelContext* ctx, int i, Variable* out) {
    if constexpr (!kResource) {
      GR_Variable* v = ctx->input_ref(i);
      if (v == nullptr) return errors::Internal("input ", i, " (", sig_.inputs[i], ") is not a variable reference");
      *out = Variable::Borrow(v);
      return Status();
    } else {
      const GR_ResourceHandle* h = nullptr;
      GR_RETURN_IF_ERROR_SDK(state::VariableHandleOf(ctx, &h, i));
      Status s = ctx->LookupVariable(h->container, h->name, dtype_, false, out);
      if (s.code() == GR_NOT_FOUND)
        s = Status(GR_FAILED_PRECONDITION, errors::StrCat("Attempting to use uninitialized variables: ", h->name));
      return s;
    }
  }

  Status CheckShapes(OpKernelContext* ctx, const TensorView* views) const {
    const TensorView& var = views[0];
    for (int i = 1; i < N; ++i)
      if (!state::SameShape(var, views[i]))
        return errors::InvalidArgument("var and ", sig_.inputs[i], " do not have the same shape", var.ShapeString(),
                                       " ", views[i].ShapeString());
    for (int k = 0; k < K; ++k) {
      const TensorView s = ctx->input(In(scalar_[k]));
      if (!s.IsScalar())
        return errors::InvalidArgument(ScalarLabel(sig_.inputs[scalar_[k]]), " is not ",
                                       RequireText(RequireOf<Rule>(k)), ": ", s.ShapeString());
    }
    const TensorView grad = ctx->input(sig_.grad);
    if constexpr (!kSparse) {
      if (!state::SameShape(var, grad))
        return errors::InvalidArgument("var and ", GradName(), " do not have the same shape", var.ShapeString(), " ",
                                       grad.ShapeString());
    } else {
      const TensorView indices = ctx->input(sig_.grad + 1);
      if (var.rank() < 1) return errors::InvalidArgument("var must be at least 1 dimensional");
      if (indices.rank() != 1) return errors::InvalidArgument("indices must be one-dimensional");
      if (grad.rank() != var.rank())
        return errors::InvalidArgument("var and grad must have the same rank, got var ", var.ShapeString(),
                                       " and grad ", grad.ShapeString());
      for (int d = 1; d < var.rank(); ++d)
        if (var.dim(d) != grad.dim(d)) return errors::InvalidArgument("var and grad must match in dimension ", d);
      if (grad.dim(0) != indices.dim(0))
        return errors::InvalidArgument("grad must be the same size as indices in the first dimension.");
      int64_t inner = 0;
      GR_RETURN_IF_ERROR_SDK(NumElementsOf(var.dims_data() + 1, var.rank() - 1, &inner));
      if (inner <= 0) return errors::InvalidArgument("Inner dimension should be greater than zero.");
    }
    return Status();
  }

  Status Dispatch(OpKernelContext* ctx, const TensorView* views) {
    switch (dtype_) {
      case GR_FLOAT: return Run<float>(ctx, views);
      case GR_DOUBLE: return Run<double>(ctx, views);
      case GR_HALF: return Run<Eigen::half>(ctx, views);
      case GR_BFLOAT16: return Run<Eigen::bfloat16>(ctx, views);
      case GR_COMPLEX64:
        if constexpr (Rule::kComplex) return Run<std::complex<float>>(ctx, views);
        break;
      case GR_COMPLEX128:
        if constexpr (Rule::kComplex) return Run<std::complex<double>>(ctx, views);
        break;
      default: break;
    }
    return errors::InvalidArgument(sig_.name, " does not support dtype ", DataTypeName(dtype_));
  }

  template <typename S>
  Status Run(OpKernelContext* ctx, const TensorView* views) {
    using C = typename ComputeOf<S>::type;
    C s[K > 0 ? K : 1];
    for (int k = 0; k < K; ++k) {
      const TensorView in = ctx->input(In(scalar_[k]));
      // int64 scalars (global_step) take part in the rule as C, as TF converts them.
      s[k] = int64_scalar_[k] ? static_cast<C>(in.scalar<int64_t>()) : static_cast<C>(in.scalar<S>());
      if (!Holds(RequireOf<Rule>(k), s[k]))
        return errors::InvalidArgument(ScalarLabel(sig_.inputs[scalar_[k]]), " is not ",
                                       RequireText(RequireOf<Rule>(k)), ": ", in.ShapeString());
    }
    const typename Rule::template Step<C> step(s, flags_);
    S* p[N];
    for (int i = 0; i < N; ++i) p[i] = views[i].data<S>();
    const S* g = ctx->input(sig_.grad).data<S>();
    if constexpr (!kSparse) {
      ctx->parallel_for(views[0].NumElements(), Rule::kCost,
                        [&](int64_t b, int64_t e) { ApplyRun<N>(step, p, b, g + b, e - b); });
      return Status();
    } else {
      const TensorView indices = ctx->input(sig_.grad + 1);
      if (indices.dtype() == GR_INT32) return RunSparse<int32_t>(ctx, step, p, g, views[0], indices);
      return RunSparse<int64_t>(ctx, step, p, g, views[0], indices);
    }
  }

  // Every index is checked before anything is written. The split is over
  // the columns of a row, each thread walking all indices in order, so a
  // duplicated index still updates its row sequentially.
  template <typename Index, typename S, typename Step>
  Status RunSparse(OpKernelContext* ctx, const Step& step, S* const* p, const S* g, const TensorView& var,
                   const TensorView& indices) {
    const Index* idx = indices.data<Index>();
    const int64_t n = indices.NumElements();
    const int64_t rows = var.dim(0);
    for (int64_t i = 0; i < n; ++i)
      if (idx[i] < 0 || idx[i] >= rows)
        return errors::InvalidArgument("Index ", idx[i], " at offset ", i, " in indices is out of range");
    if (n == 0) return Status();
    const int64_t inner = var.NumElements() / rows;
    ctx->parallel_for(inner, Rule::kCost * n, [&](int64_t b, int64_t e) {
      for (int64_t i = 0; i < n; ++i) ApplyRun<N>(step, p, static_cast<int64_t>(idx[i]) * inner + b, g + i * inner + b, e - b);
    });
    return Status();
  }

  const OptimizerSignature& sig_;
  DataType dtype_ = GR_INVALID;
  Flags flags_;
  int scalar_[K > 0 ? K : 1] = {};  // signature positions of the scalar inputs
  bool int64_scalar_[K > 0 ? K : 1] = {};  // whether scalar k is int64 rather than T
};

template <typename Rule, bool kResource, bool kSparse>
void RegisterForm(const OptimizerSignature& sig) {
  std::string name = kResource ? "Resource" : "";
  name.append(kSparse ? "SparseApply" : "Apply").append(sig.name);
  std::vector<DataType> types = {GR_HALF, GR_BFLOAT16, GR_FLOAT, GR_DOUBLE};
  if (Rule::kComplex) types.insert(types.end(), {GR_COMPLEX64, GR_COMPLEX128});
  KernelDefBuilder b = Name(name.c_str()).Device(DEVICE_CPU).TypeConstraint("T", types);
  if (kSparse) b.TypeConstraint("Tindices", {GR_INT32, GR_INT64});
  detail::AddKernel<OptimizerOp<Rule, kResource, kSparse>>(std::move(b));
}

template <typename Rule>
bool RegisterRule() {
  const OptimizerSignature* sig = FindOptimizerSignature(Rule::kName);
  // A rule that disagrees with its signature is a bug in this file: refuse
  // to load rather than read the wrong inputs.
  if (sig == nullptr || sig->num_vars != Rule::kVars ||
      static_cast<int>(sig->inputs.size()) != Rule::kVars + Rule::kScalars + 1 || Rule::kVars > kMaxVars)
    std::abort();
  if (sig->ref_forms) RegisterForm<Rule, false, false>(*sig);
  RegisterForm<Rule, true, false>(*sig);
  if (sig->sparse) {
    if (sig->ref_forms) RegisterForm<Rule, false, true>(*sig);
    RegisterForm<Rule, true, true>(*sig);
  }
  return true;
}

// Every signature of optimizer_defs.h must have its rule: ops.cc defines
// an op for each.
template <typename... Rules>
bool RegisterRules() {
  if (sizeof...(Rules) != OptimizerSignatures().size()) std::abort();
  return (RegisterRule<Rules>() && ...);
}

[[maybe_unused]] const bool registered =
    RegisterRules<GradientDescentRule, ProximalGradientDescentRule, MomentumRule, KerasMomentumRule, AdamRule,
                  AdamWithAmsgradRule, RMSPropRule, CenteredRMSPropRule, AdagradRule, AdagradV2Rule,
                  ProximalAdagradRule, AdagradDARule, AdadeltaRule, FtrlRule, FtrlV2Rule, AdaMaxRule, AddSignRule,
                  PowerSignRule>();

}  // namespace
}  // namespace training
}  // namespace sdk
}  // namespace graphrt
