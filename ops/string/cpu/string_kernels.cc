// CPU kernels of the string family: StringJoin, Substr, RegexReplace,
// StaticRegexReplace, StringToNumber, AsString. Strings are read from
// GR_StringElem views and written through Api().string_assign.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>
#include <re2/re2.h>

#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

std::string_view StringAt(const TensorView& t, int64_t i) {
  const GR_StringElem& e = t.data<GR_StringElem>()[i];
  return std::string_view(e.data, e.size);
}

void Assign(TensorView* out, int64_t i, std::string_view s) {
  Api().string_assign(out->raw(), i, s.data(), s.size());
}

// Walks the flat indices of a broadcast output and yields, for each, the
// flat index into an input of (right-aligned) `in_dims`: dims of 1 or
// missing repeat.
class BroadcastIndexer {
 public:
  BroadcastIndexer(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_dims)
      : dims_(out_dims), strides_(out_dims.size(), 0), pos_(out_dims.size(), 0) {
    int64_t stride = 1;
    const size_t off = out_dims.size() - in_dims.size();
    for (size_t i = in_dims.size(); i-- > 0;) {
      strides_[off + i] = in_dims[i] == 1 ? 0 : stride;
      stride *= in_dims[i];  // within the input's own (valid) element count
    }
  }
  int64_t index() const { return index_; }
  void Next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      index_ += strides_[d];
      if (++pos_[d] < dims_[d]) return;
      index_ -= strides_[d] * pos_[d];
      pos_[d] = 0;
    }
  }

 private:
  std::vector<int64_t> dims_, strides_, pos_;
  int64_t index_ = 0;
};

// ------------------------------------------------------------ StringJoin

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("separator", &separator_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    std::vector<TensorView> in(static_cast<size_t>(n));
    std::vector<int64_t> dims;
    bool have_shape = false;
    for (int i = 0; i < n; ++i) {
      in[i] = ctx->input(i);
      if (in[i].IsScalar()) continue;
      if (!have_shape) {
        dims = in[i].dims();
        have_shape = true;
      } else {
        OP_REQUIRES(ctx, in[i].dims() == dims,
                    errors::InvalidArgument("Input shapes do not match: ", sf::ShapeString(dims), " vs. ",
                                            in[i].ShapeString()));
      }
    }
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, dims, &out));
    std::string s;
    for (int64_t k = 0; k < out.NumElements(); ++k) {
      s.clear();
      for (int i = 0; i < n; ++i) {
        if (i) s += separator_;
        s += StringAt(in[i], in[i].IsScalar() ? 0 : k);
      }
      Assign(&out, k, s);
    }
  }

 private:
  std::string separator_;
};

// ---------------------------------------------------------------- Substr

// Byte offset of the `chars`-th UTF-8 character of `s` at or after `from`
// (s.size() when the string ends first). A character starts at every byte
// that is not a continuation byte (10xxxxxx).
size_t Utf8Advance(std::string_view s, size_t from, int64_t chars) {
  size_t p = from;
  for (int64_t c = 0; c < chars && p < s.size(); ++c) {
    ++p;
    while (p < s.size() && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) ++p;
  }
  return p;
}

int64_t Utf8Length(std::string_view s) {
  int64_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

template <typename T>
class SubstrOp : public OpKernel {
 public:
  explicit SubstrOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string unit;
    OP_REQUIRES_OK(c, c->GetAttr("unit", &unit));
    OP_REQUIRES(c, unit == "BYTE" || unit == "UTF8_CHAR",
                errors::InvalidArgument("unit must be BYTE or UTF8_CHAR, got '", unit, "'"));
    utf8_ = unit == "UTF8_CHAR";
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView input = ctx->input(0), pos = ctx->input(1), len = ctx->input(2);
    OP_REQUIRES(ctx, pos.dims() == len.dims(),
                errors::InvalidArgument("pos and len should have the same shape, got: ", pos.ShapeString(), " vs. ",
                                        len.ShapeString()));
    std::vector<int64_t> dims;
    OP_REQUIRES(ctx, sf::BroadcastShapes(input.dims(), pos.dims(), &dims),
                errors::InvalidArgument("Incompatible shapes: ", input.ShapeString(), " vs. ", pos.ShapeString()));
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, dims, &out));
    BroadcastIndexer in_index(dims, input.dims()), pos_index(dims, pos.dims());
    for (int64_t k = 0; k < out.NumElements(); ++k, in_index.Next(), pos_index.Next()) {
      const std::string_view s = StringAt(input, in_index.index());
      const int64_t p = static_cast<int64_t>(pos.data<T>()[pos_index.index()]);
      const int64_t l = static_cast<int64_t>(len.data<T>()[pos_index.index()]);
      std::string_view sub;
      OP_REQUIRES_OK(ctx, utf8_ ? Utf8Substr(s, p, l, k, &sub) : ByteSubstr(s, p, l, k, &sub));
      Assign(&out, k, sub);
    }
  }

 private:
  // TensorFlow: |pos| <= length, a negative pos counts from the end, and
  // len is clipped to the end of the string (a negative len: to the end).
  static Status ByteSubstr(std::string_view s, int64_t pos, int64_t len, int64_t k, std::string_view* out) {
    const int64_t n = static_cast<int64_t>(s.size());
    if (pos > n || pos < -n) {
      return errors::InvalidArgument("pos ", pos, " out of range for string b'", s, "' at index ", k);
    }
    if (pos < 0) pos += n;
    const size_t count = len < 0 ? std::string_view::npos : static_cast<size_t>(len);
    *out = s.substr(static_cast<size_t>(pos), count);
    return Status();
  }

  // The same in characters; a negative len takes no characters.
  static Status Utf8Substr(std::string_view s, int64_t pos, int64_t len, int64_t k, std::string_view* out) {
    const int64_t n = Utf8Length(s);
    if (pos > n || pos < -n) {
      return errors::InvalidArgument("pos ", pos, " out of range for string at index ", k);
    }
    if (pos < 0) pos += n;
    const size_t begin = Utf8Advance(s, 0, pos);
    const size_t end = Utf8Advance(s, begin, len);
    *out = s.substr(begin, end - begin);
    return Status();
  }

  bool utf8_ = false;
};

// ----------------------------------------------------------- RegexReplace

Status CompilePattern(const std::string& pattern, std::unique_ptr<RE2>* out) {
  auto re = std::make_unique<RE2>(pattern, RE2::Quiet);
  if (!re->ok()) return errors::InvalidArgument("Invalid pattern: ", pattern, ", error: ", re->error());
  *out = std::move(re);
  return Status();
}

Status CompileRegex(const std::string& pattern, const std::string& rewrite, std::unique_ptr<RE2>* out) {
  std::unique_ptr<RE2> re;
  GR_RETURN_IF_ERROR_SDK(CompilePattern(pattern, &re));
  std::string error;
  if (!re->CheckRewriteString(rewrite, &error)) {
    return errors::InvalidArgument("Invalid rewrite pattern: ", rewrite, ", error: ", error);
  }
  *out = std::move(re);
  return Status();
}

void ReplaceAll(OpKernelContext* ctx, const TensorView& input, const RE2& re, const std::string& rewrite,
                bool global) {
  TensorView out;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.dims(), &out));
  std::string s;
  for (int64_t k = 0; k < input.NumElements(); ++k) {
    s.assign(StringAt(input, k));
    if (global) {
      RE2::GlobalReplace(&s, re, rewrite);
    } else {
      RE2::Replace(&s, re, rewrite);
    }
    Assign(&out, k, s);
  }
}

class RegexReplaceOp : public OpKernel {
 public:
  explicit RegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("replace_global", &global_));
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorView input = ctx->input(0), pattern = ctx->input(1), rewrite = ctx->input(2);
    OP_REQUIRES(ctx, pattern.IsScalar(),
                errors::InvalidArgument("Pattern must be scalar, but received ", pattern.ShapeString()));
    OP_REQUIRES(ctx, rewrite.IsScalar(),
                errors::InvalidArgument("Replacement rewrite must be scalar, but received ", rewrite.ShapeString()));
    const std::string rw(StringAt(rewrite, 0));
    std::unique_ptr<RE2> re;
    OP_REQUIRES_OK(ctx, CompileRegex(std::string(StringAt(pattern, 0)), rw, &re));
    ReplaceAll(ctx, input, *re, rw, global_);
  }

 private:
  bool global_ = true;
};

// The pattern is an attr: compiled once, with the kernel.
class StaticRegexReplaceOp : public OpKernel {
 public:
  explicit StaticRegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    OP_REQUIRES_OK(c, c->GetAttr("pattern", &pattern));
    OP_REQUIRES_OK(c, c->GetAttr("rewrite", &rewrite_));
    OP_REQUIRES_OK(c, c->GetAttr("replace_global", &global_));
    OP_REQUIRES_OK(c, CompileRegex(pattern, rewrite_, &re_));
  }
  void Compute(OpKernelContext* ctx) override { ReplaceAll(ctx, ctx->input(0), *re_, rewrite_, global_); }

 private:
  std::unique_ptr<RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

// ------------------------------------------------------- RegexFullMatch

void FullMatchAll(OpKernelContext* ctx, const TensorView& input, const RE2& re) {
  TensorView out;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.dims(), &out));
  bool* matched = out.data<bool>();
  for (int64_t k = 0; k < input.NumElements(); ++k) matched[k] = RE2::FullMatch(StringAt(input, k), re);
}

class RegexFullMatchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorView pattern = ctx->input(1);
    OP_REQUIRES(ctx, pattern.IsScalar(),
                errors::InvalidArgument("Pattern must be scalar, but received ", pattern.ShapeString()));
    std::unique_ptr<RE2> re;
    OP_REQUIRES_OK(ctx, CompilePattern(std::string(StringAt(pattern, 0)), &re));
    FullMatchAll(ctx, ctx->input(0), *re);
  }
};

// The pattern is an attr: compiled once, with the kernel.
class StaticRegexFullMatchOp : public OpKernel {
 public:
  explicit StaticRegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    OP_REQUIRES_OK(c, c->GetAttr("pattern", &pattern));
    OP_REQUIRES_OK(c, CompilePattern(pattern, &re_));
  }
  void Compute(OpKernelContext* ctx) override { FullMatchAll(ctx, ctx->input(0), *re_); }

 private:
  std::unique_ptr<RE2> re_;
};

// --------------------------------------------------------- StringToNumber

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// TensorFlow's safe_strto* rules: surrounding whitespace is allowed, the
// rest must be the whole number; integers must fit; floats accept inf/nan
// and overflow to +-inf (decimal only, no hex).
template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  std::string_view s = Trim(text);
  if (s.empty()) return false;
  const bool plus = s.front() == '+';
  if (plus) s.remove_prefix(1);
  if (s.empty() || s.front() == '+' || (plus && s.front() == '-')) return false;
  const char* end = s.data() + s.size();
  if constexpr (std::is_integral_v<T>) {
    T v{};
    auto r = std::from_chars(s.data(), end, v);
    if (r.ec != std::errc() || r.ptr != end) return false;
    *out = v;
  } else {
    double v = 0;
    auto r = std::from_chars(s.data(), end, v, std::chars_format::general);
    if (r.ptr != end) return false;
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars leaves v unset on overflow and underflow alike; strtod
      // gives +-HUGE_VAL or the rounded tiny value. The text is known to be
      // a plain decimal number here, so both read it the same way.
      v = std::strtod(std::string(s).c_str(), nullptr);
    } else if (r.ec != std::errc()) {
      return false;
    }
    if constexpr (std::is_same_v<T, float>) {
      // Out of float's range: +-inf (a plain cast would be undefined).
      if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max())
        v = v > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
    }
    *out = static_cast<T>(v);
  }
  return true;
}

template <typename T>
class StringToNumberOp : public OpKernel {
 public:
  explicit StringToNumberOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.dims(), &out));
    for (int64_t k = 0; k < in.NumElements(); ++k) {
      const std::string_view s = StringAt(in, k);
      OP_REQUIRES(ctx, ParseNumber(s, out.data<T>() + k),
                  errors::InvalidArgument("StringToNumberOp could not correctly convert string: ", s));
    }
  }
};

// ---------------------------------------------------------------- AsString

// TensorFlow builds a printf format from the attrs: "%" [fill width]
// ["." precision] and d / lld / f / e / g by dtype; bools are true/false.
template <typename T>
class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* c) : OpKernel(c) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    OP_REQUIRES_OK(c, c->GetAttr("precision", &precision));
    OP_REQUIRES_OK(c, c->GetAttr("scientific", &scientific));
    OP_REQUIRES_OK(c, c->GetAttr("shortest", &shortest));
    OP_REQUIRES_OK(c, c->GetAttr("width", &width));
    OP_REQUIRES_OK(c, c->GetAttr("fill", &fill));
    OP_REQUIRES(c, !(scientific && shortest),
                errors::InvalidArgument("Cannot select both scientific and shortest notation"));
    OP_REQUIRES(c, fill.size() <= 1, errors::InvalidArgument("Fill string must be one or fewer characters"));
    constexpr bool kFloat = std::is_floating_point_v<T>;
    OP_REQUIRES(c, kFloat || (!scientific && !shortest && precision <= -1),
                errors::InvalidArgument("scientific, shortest and precision apply only to floating point input"));
    // Bounded so the formatted text stays small (a width is a pad length).
    OP_REQUIRES(c, width <= 4096 && precision <= 4096,
                errors::InvalidArgument("width and precision must be at most 4096, got ", width, " and ", precision));
    format_ = "%";
    if (width > -1) {
      if (!fill.empty()) {
        const char f = fill[0];
        OP_REQUIRES(c, f == ' ' || f == '+' || f == '-' || f == '0' || f == '#',
                    errors::InvalidArgument("Fill argument not supported: \"", fill, "\""));
        format_ += f;
      }
      format_ += std::to_string(width);
    }
    if (precision > -1) {
      format_ += '.';
      format_ += std::to_string(precision);
    }
    if constexpr (kFloat) {
      format_ += shortest ? "g" : scientific ? "e" : "f";
    } else if constexpr (std::is_same_v<T, int64_t>) {
      format_ += PRId64;
    } else {
      format_ += "d";
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView in = ctx->input(0);
    TensorView out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.dims(), &out));
    std::vector<char> buf(64);
    for (int64_t k = 0; k < in.NumElements(); ++k) {
      const T v = in.data<T>()[k];
      if constexpr (std::is_same_v<T, bool>) {
        Assign(&out, k, v ? "true" : "false");
        continue;
      } else {
        for (;;) {
          int n;
          if constexpr (std::is_floating_point_v<T>) {
            n = std::snprintf(buf.data(), buf.size(), format_.c_str(), static_cast<double>(v));
          } else if constexpr (std::is_same_v<T, int64_t>) {
            n = std::snprintf(buf.data(), buf.size(), format_.c_str(), v);
          } else {
            n = std::snprintf(buf.data(), buf.size(), format_.c_str(), static_cast<int>(v));
          }
          OP_REQUIRES(ctx, n >= 0, errors::Internal("AsString: formatting failed"));
          if (static_cast<size_t>(n) < buf.size()) {
            Assign(&out, k, std::string_view(buf.data(), static_cast<size_t>(n)));
            break;
          }
          buf.resize(static_cast<size_t>(n) + 1);
        }
      }
    }
  }

 private:
  std::string format_;
};

REGISTER_KERNEL(Name("StringJoin").Device(DEVICE_CPU), StringJoinOp);
REGISTER_KERNEL(Name("Substr").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), SubstrOp<int32_t>);
REGISTER_KERNEL(Name("Substr").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), SubstrOp<int64_t>);
REGISTER_KERNEL(Name("RegexReplace").Device(DEVICE_CPU), RegexReplaceOp);
REGISTER_KERNEL(Name("StaticRegexReplace").Device(DEVICE_CPU), StaticRegexReplaceOp);
REGISTER_KERNEL(Name("RegexFullMatch").Device(DEVICE_CPU), RegexFullMatchOp);
REGISTER_KERNEL(Name("StaticRegexFullMatch").Device(DEVICE_CPU), StaticRegexFullMatchOp);
REGISTER_KERNEL(Name("StringToNumber").Device(DEVICE_CPU).TypeConstraint<float>("out_type"), StringToNumberOp<float>);
REGISTER_KERNEL(Name("StringToNumber").Device(DEVICE_CPU).TypeConstraint<double>("out_type"),
                StringToNumberOp<double>);
REGISTER_KERNEL(Name("StringToNumber").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
                StringToNumberOp<int32_t>);
REGISTER_KERNEL(Name("StringToNumber").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
                StringToNumberOp<int64_t>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<int8_t>("T"), AsStringOp<int8_t>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<int16_t>("T"), AsStringOp<int16_t>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<int32_t>("T"), AsStringOp<int32_t>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<int64_t>("T"), AsStringOp<int64_t>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<float>("T"), AsStringOp<float>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<double>("T"), AsStringOp<double>);
REGISTER_KERNEL(Name("AsString").Device(DEVICE_CPU).TypeConstraint<bool>("T"), AsStringOp<bool>);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
