#include "graphrt/core/types.h"

#include <array>

namespace graphrt {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;  // TensorFlow's DataTypeString spelling
};

constexpr TypeInfo kTypes[] = {
    {GR_FLOAT, "float"},        {GR_DOUBLE, "double"},       {GR_INT32, "int32"},
    {GR_UINT8, "uint8"},        {GR_INT16, "int16"},         {GR_INT8, "int8"},
    {GR_STRING, "string"},      {GR_COMPLEX64, "complex64"}, {GR_INT64, "int64"},
    {GR_BOOL, "bool"},          {GR_QINT8, "qint8"},         {GR_QUINT8, "quint8"},
    {GR_QINT32, "qint32"},      {GR_BFLOAT16, "bfloat16"},   {GR_QINT16, "qint16"},
    {GR_QUINT16, "quint16"},    {GR_UINT16, "uint16"},       {GR_COMPLEX128, "complex128"},
    {GR_HALF, "half"},          {GR_RESOURCE, "resource"},   {GR_VARIANT, "variant"},
    {GR_UINT32, "uint32"},      {GR_UINT64, "uint64"},
};

const TypeInfo* Find(DataType t) {
  for (const TypeInfo& i : kTypes)
    if (i.type == t) return &i;
  return nullptr;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// TensorFlow's types graphrt does not implement (types.proto 24..33): named
// in messages, refused at import.
constexpr const char* kUnsupportedTfTypes[] = {
    "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz",
    "int4",        "uint4",         "int2",            "uint2",              "float4_e2m1fn",
};
constexpr int kFirstUnsupportedTfType = 24;
constexpr int kLastTfType = 33;

// TensorFlow's lower-case name of a base (non-ref) value, or nullptr.
const char* BaseName(int64_t v) {
  if (v >= GR_FLOAT && v <= GR_UINT64) return Find(static_cast<DataType>(v))->name;
  if (v >= kFirstUnsupportedTfType && v <= kLastTfType) return kUnsupportedTfTypes[v - kFirstUnsupportedTfType];
  return nullptr;
}

bool IsTfRefValue(int64_t v) { return v > kDataTypeRefOffset && v <= kDataTypeRefOffset + kLastTfType; }

}  // namespace

std::string DataTypeString(DataType t) {
  const int v = static_cast<int>(t);
  const bool ref = IsTfRefValue(v);
  const char* name = BaseName(ref ? v - kDataTypeRefOffset : v);
  if (name == nullptr) return "unknown dtype " + std::to_string(v);
  return ref ? std::string(name) + "_ref" : std::string(name);
}

std::string DataTypeValueName(int64_t value) {
  if (value == GR_INVALID) return "DT_INVALID";
  const bool ref = IsTfRefValue(value);
  const char* name = BaseName(ref ? value - kDataTypeRefOffset : value);
  if (name == nullptr) return std::to_string(value) + " (not a TensorFlow DataType)";
  return "DT_" + Upper(name) + (ref ? "_REF" : "");
}

std::string DataTypeEnumName(DataType t) { return DataTypeValueName(static_cast<int>(t)); }

Status ValidateDataType(int64_t value, bool allow_ref, const std::string& what, DataType* out) {
  if (!IsSupportedDataTypeValue(value)) {
    if (value == GR_INVALID) return errors::InvalidArgument(what, ": dtype is DT_INVALID");
    if (BaseName(IsTfRefValue(value) ? value - kDataTypeRefOffset : value) == nullptr)
      return errors::InvalidArgument(what, ": dtype value ", value, " is not a TensorFlow DataType");
    return errors::InvalidArgument(what, ": dtype ", DataTypeValueName(value), " is not supported by graphrt");
  }
  const DataType t = static_cast<DataType>(value);
  if (!allow_ref && IsRefType(t))
    return errors::InvalidArgument(what, ": dtype ", DataTypeValueName(value), " is a reference type, not allowed here");
  *out = t;
  return Status::OK();
}

bool DataTypeFromString(std::string_view s, DataType* out) {
  bool ref = false;
  std::string name(s);
  if (name.rfind("DT_", 0) == 0) {
    name = name.substr(3);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "_ref") == 0) {
    ref = true;
    name.resize(name.size() - 4);
  }
  for (const TypeInfo& i : kTypes) {
    if (name == i.name) {
      *out = ref ? MakeRefType(i.type) : i.type;
      return true;
    }
  }
  return false;
}

}  // namespace graphrt
