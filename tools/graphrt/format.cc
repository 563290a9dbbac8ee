// Human-readable renderings of ops, attrs and tensor values.
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"
#include "graphrt/proto/tensor_shape.pb.h"

namespace graphrt {
namespace cli {
namespace {

// Shortest text that reads back as the same value ("0.1", not "0.100000001").
template <typename F>
std::string FloatString(F v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

float HalfToFloat(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(man), -24);  // zero and subnormals
  } else if (exp == 31) {
    v = man ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(man | 0x400), exp - 25);
  }
  return (h & 0x8000) ? -v : v;
}

float Bfloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 32 || c == 127) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through
    }
  }
  return out + "\"";
}

template <typename F>
std::string ComplexString(std::complex<F> c) {
  const bool minus = std::signbit(c.imag()) && !std::isnan(c.imag());
  return FloatString(c.real()) + (minus ? "-" : "+") + FloatString(std::abs(c.imag())) + "j";
}

std::string ElementString(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case GR_FLOAT: return FloatString(t.data<float>()[i]);
    case GR_DOUBLE: return FloatString(t.data<double>()[i]);
    case GR_HALF: return FloatString(HalfToFloat(t.data<uint16_t>()[i]));
    case GR_BFLOAT16: return FloatString(Bfloat16ToFloat(t.data<uint16_t>()[i]));
    case GR_INT8:
    case GR_QINT8: return std::to_string(t.data<int8_t>()[i]);
    case GR_UINT8:
    case GR_QUINT8: return std::to_string(t.data<uint8_t>()[i]);
    case GR_INT16:
    case GR_QINT16: return std::to_string(t.data<int16_t>()[i]);
    case GR_UINT16:
    case GR_QUINT16: return std::to_string(t.data<uint16_t>()[i]);
    case GR_INT32:
    case GR_QINT32: return std::to_string(t.data<int32_t>()[i]);
    case GR_UINT32: return std::to_string(t.data<uint32_t>()[i]);
    case GR_INT64: return std::to_string(t.data<int64_t>()[i]);
    case GR_UINT64: return std::to_string(t.data<uint64_t>()[i]);
    case GR_BOOL: return t.data<bool>()[i] ? "true" : "false";
    case GR_COMPLEX64: return ComplexString(t.data<std::complex<float>>()[i]);
    case GR_COMPLEX128: return ComplexString(t.data<std::complex<double>>()[i]);
    case GR_STRING: return Quoted(t.string_at(i));
    default: return "?";
  }
}

}  // namespace

std::string DataTypeValueString(int64_t value) {
  return IsSupportedDataTypeValue(value) ? DataTypeString(static_cast<DataType>(value)) : DataTypeValueName(value);
}

std::string TensorValuesString(const Tensor& t, int64_t max_values) {
  if (!t.IsInitialized()) return "<uninitialized>";
  if (t.dtype() == GR_RESOURCE || t.dtype() == GR_VARIANT)
    return "<" + DataTypeString(t.dtype()) + ">";
  const int64_t n = t.NumElements();
  const int64_t shown = n < max_values ? n : max_values;
  std::string out = "[";
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += ElementString(t, i);
  }
  if (n > shown) out += shown > 0 ? ", ..." : "...";
  return out + "]";
}

std::string TensorProtoString(const proto::TensorProto& p, int64_t max_values) {
  TensorShape shape;
  Tensor head;
  const Status s = TensorProtoPrefix(p, max_values, &shape, &head);
  if (!s.ok()) return "<" + OneLine(s.message()) + ">";
  const std::string values = TensorValuesString(head, max_values);
  // The "..." that says the tensor has more than the values shown.
  const bool more = shape.num_elements() > head.NumElements();
  return DataTypeString(head.dtype()) + " " + shape.DebugString() + " " +
         (more ? values.substr(0, values.size() - 1) + (head.NumElements() > 0 ? ", ...]" : "...]") : values);
}

std::string AttrValueString(const proto::AttrValue& v) {
  using A = proto::AttrValue;
  auto type_name = [](int t) { return DataTypeValueString(t); };
  auto shape_string = [](const proto::TensorShapeProto& p) {
    PartialTensorShape s;
    return PartialTensorShape::FromProto(p, &s).ok() ? s.DebugString() : std::string("<bad shape>");
  };
  switch (v.value_case()) {
    case A::kS: return Quoted(v.s());
    case A::kI: return std::to_string(v.i());
    case A::kF: return FloatString(v.f());
    case A::kB: return v.b() ? "true" : "false";
    case A::kType: return type_name(v.type());
    case A::kShape: return shape_string(v.shape());
    case A::kTensor: return TensorProtoString(v.tensor(), 6);
    case A::kFunc: return v.func().name();
    case A::kPlaceholder: return "$" + v.placeholder();
    case A::kList: {
      const auto& l = v.list();
      std::string out = "[";
      auto add = [&](const std::string& s) { out += (out.size() > 1 ? ", " : "") + s; };
      for (const auto& s : l.s()) add(Quoted(s));
      for (int64_t i : l.i()) add(std::to_string(i));
      for (float f : l.f()) add(FloatString(f));
      for (bool b : l.b()) add(b ? "true" : "false");
      for (int t : l.type()) add(type_name(t));
      for (const auto& s : l.shape()) add(shape_string(s));
      for (int i = 0; i < l.tensor_size(); ++i) add("<tensor>");
      for (const auto& f : l.func()) add(f.name());
      return out + "]";
    }
    case A::VALUE_NOT_SET: break;
  }
  return "<unset>";
}

std::string AttrDefString(const proto::OpDef::AttrDef& attr) {
  std::string out = attr.name() + ": ";
  const auto& allowed = attr.allowed_values();
  if (allowed.has_list() && (allowed.list().type_size() > 0 || allowed.list().s_size() > 0)) {
    // The spec syntax: "T: {float, int32}" for types, "{'SAME', 'VALID'}" for strings.
    std::string set = AttrValueString(allowed);
    out += "{" + set.substr(1, set.size() - 2) + "}";
    if (attr.type() != "type" && attr.type() != "string") out += " " + attr.type();
  } else {
    out += attr.type();
  }
  if (attr.has_minimum()) out += " >= " + std::to_string(attr.minimum());
  if (attr.has_default_value()) out += " = " + AttrValueString(attr.default_value());
  return out;
}

namespace {
std::string ArgString(const proto::OpDef::ArgDef& a) {
  std::string t;
  const std::string base =
      a.type_attr().empty() ? DataTypeValueString(a.type()) : a.type_attr();
  if (!a.number_attr().empty()) {
    t = a.number_attr() + " * " + base;
  } else if (!a.type_list_attr().empty()) {
    t = a.type_list_attr();
  } else {
    t = base;
  }
  if (a.is_ref()) t = "Ref(" + t + ")";
  return a.name() + ": " + t;
}
}  // namespace

std::string OpSignature(const proto::OpDef& op) {
  std::string out = op.name() + "(";
  for (int i = 0; i < op.input_arg_size(); ++i)
    out += (i ? ", " : "") + ArgString(op.input_arg(i));
  out += ") -> (";
  for (int i = 0; i < op.output_arg_size(); ++i)
    out += (i ? ", " : "") + ArgString(op.output_arg(i));
  return out + ")";
}

std::string HumanBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

}  // namespace cli
}  // namespace graphrt
