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

}  // namespace

std::string DataTypeString(DataType t) {
  if (IsRefType(t)) return DataTypeString(BaseType(t)) + "_ref";
  const TypeInfo* i = Find(t);
  return i ? i->name : "unknown dtype " + std::to_string(static_cast<int>(t));
}

std::string DataTypeEnumName(DataType t) {
  if (IsRefType(t)) return DataTypeEnumName(BaseType(t)) + "_REF";
  if (t == GR_INVALID) return "DT_INVALID";
  const TypeInfo* i = Find(t);
  return i ? "DT_" + Upper(i->name) : "DT_UNKNOWN_" + std::to_string(static_cast<int>(t));
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
