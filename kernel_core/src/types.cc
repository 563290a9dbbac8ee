#include "graphrt/core/types.h"

#include <array>

namespace graphrt {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;  // TensorFlow's DataTypeString spelling
  size_t size;
};

constexpr TypeInfo kTypes[] = {
    {GR_FLOAT, "float", 4},        {GR_DOUBLE, "double", 8},       {GR_INT32, "int32", 4},
    {GR_UINT8, "uint8", 1},        {GR_INT16, "int16", 2},         {GR_INT8, "int8", 1},
    {GR_STRING, "string", 0},      {GR_COMPLEX64, "complex64", 8}, {GR_INT64, "int64", 8},
    {GR_BOOL, "bool", 1},          {GR_QINT8, "qint8", 1},         {GR_QUINT8, "quint8", 1},
    {GR_QINT32, "qint32", 4},      {GR_BFLOAT16, "bfloat16", 2},   {GR_QINT16, "qint16", 2},
    {GR_QUINT16, "quint16", 2},    {GR_UINT16, "uint16", 2},       {GR_COMPLEX128, "complex128", 16},
    {GR_HALF, "half", 2},          {GR_RESOURCE, "resource", 0},   {GR_VARIANT, "variant", 0},
    {GR_UINT32, "uint32", 4},      {GR_UINT64, "uint64", 8},
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

size_t DataTypeSize(DataType t) {
  const TypeInfo* i = Find(t);
  return i ? i->size : 0;
}

bool DataTypeIsPod(DataType t) { return DataTypeSize(t) > 0; }

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
