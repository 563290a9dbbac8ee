// CPU kernel of Assert: a false condition fails the step with
// InvalidArgument "assertion failed: [<data 0>] [<data 1>] ...", each data
// tensor summarized to its first `summarize` elements as TensorFlow's
// Tensor::SummarizeValue prints them.
#include <graphrt/sdk/sdk.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace graphrt {
namespace sdk {
namespace {

// TensorFlow prints floats with the fewest of 6 / 9 significant digits
// (doubles 15 / 17) that read back to the same value.
std::string FloatText(double v, bool is_float) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.*g", is_float ? 6 : 15, v);
  const bool exact = is_float ? std::strtof(buf, nullptr) == static_cast<float>(v) : std::strtod(buf, nullptr) == v;
  if (!exact && !std::isnan(v)) std::snprintf(buf, sizeof(buf), "%.*g", is_float ? 9 : 17, v);
  return buf;
}

// A string element with C escapes for quotes, backslashes and control
// bytes; other bytes (UTF-8 included) as they are.
std::string EscapedText(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

// Element i of `t` as text; false for dtypes without a printed form.
bool ElementText(const TensorView& t, int64_t i, std::string* out) {
  const void* p = t.raw_data();
  switch (t.dtype()) {
    case GR_FLOAT: *out = FloatText(static_cast<const float*>(p)[i], true); return true;
    case GR_DOUBLE: *out = FloatText(static_cast<const double*>(p)[i], false); return true;
    case GR_HALF: *out = FloatText(HalfToFloat(static_cast<const uint16_t*>(p)[i]), true); return true;
    case GR_BFLOAT16: {
      const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      *out = FloatText(f, true);
      return true;
    }
    case GR_INT8: case GR_QINT8: *out = std::to_string(static_cast<const int8_t*>(p)[i]); return true;
    case GR_UINT8: case GR_QUINT8: *out = std::to_string(static_cast<const uint8_t*>(p)[i]); return true;
    case GR_INT16: case GR_QINT16: *out = std::to_string(static_cast<const int16_t*>(p)[i]); return true;
    case GR_UINT16: case GR_QUINT16: *out = std::to_string(static_cast<const uint16_t*>(p)[i]); return true;
    case GR_INT32: case GR_QINT32: *out = std::to_string(static_cast<const int32_t*>(p)[i]); return true;
    case GR_UINT32: *out = std::to_string(static_cast<const uint32_t*>(p)[i]); return true;
    case GR_INT64: *out = std::to_string(static_cast<const int64_t*>(p)[i]); return true;
    case GR_UINT64: *out = std::to_string(static_cast<const uint64_t*>(p)[i]); return true;
    case GR_BOOL: *out = static_cast<const bool*>(p)[i] ? "1" : "0"; return true;
    case GR_STRING: {
      const GR_StringElem& e = static_cast<const GR_StringElem*>(p)[i];
      *out = EscapedText(std::string_view(e.data, e.size));
      return true;
    }
    default: return false;
  }
}

// TensorFlow's layout of a summary: elements separated by spaces, each
// inner dimension (all but the outermost) in brackets, at most `limit`
// elements; a row cut short ends in "...", and so does the whole when
// elements were left out.
class Summarizer {
 public:
  Summarizer(const TensorView& t, int64_t limit) : t_(t), limit_(limit) {}

  std::string Run() {
    if (t_.rank() == 0) {
      if (limit_ > 0) Append(0);
    } else {
      Dim(0);
    }
    if (t_.NumElements() > limit_) out_ += "...";
    return out_;
  }

 private:
  void Append(int64_t i) {
    std::string s;
    if (!ElementText(t_, i, &s)) s = "?";
    out_ += s;
  }
  void Dim(int d) {
    if (next_ >= limit_) return;
    const int64_t n = t_.dim(d);
    if (d == t_.rank() - 1) {
      for (int64_t i = 0; i < n; ++i) {
        if (next_ >= limit_) {
          if (d != 0) out_ += "...";
          return;
        }
        if (i > 0) out_ += " ";
        Append(next_++);
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const bool opened = next_ < limit_;
      if (opened) out_ += "[";
      Dim(d + 1);
      if (opened) out_ += "]";
    }
  }

  const TensorView& t_;
  int64_t limit_;
  int64_t next_ = 0;
  std::string out_;
};

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("summarize", &summarize_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorView cond = ctx->input(0);
    OP_REQUIRES(ctx, cond.IsScalar(), errors::InvalidArgument("In[0] should be a scalar: ", cond.ShapeString()));
    if (*cond.data<bool>()) return;
    std::string msg = "assertion failed: ";
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      const TensorView t = ctx->input(i);
      // A negative summarize prints everything, as in TensorFlow.
      const int64_t limit = summarize_ < 0 ? t.NumElements() : std::min<int64_t>(summarize_, t.NumElements());
      msg += '[';
      msg += Summarizer(t, limit).Run();
      msg += ']';
      if (i + 1 < ctx->num_inputs()) msg += " ";
    }
    ctx->SetStatus(errors::InvalidArgument(msg));
  }

 private:
  int64_t summarize_ = 3;
};

REGISTER_KERNEL(Name("Assert").Device(DEVICE_CPU), AssertOp);

}  // namespace
}  // namespace sdk
}  // namespace graphrt
