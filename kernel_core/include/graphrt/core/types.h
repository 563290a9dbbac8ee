// DataType helpers. Values are TensorFlow's (types.proto); *_REF = base + 100.
#ifndef GRAPHRT_CORE_TYPES_H_
#define GRAPHRT_CORE_TYPES_H_

#include <graphrt/c_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "graphrt/core/status.h"

namespace graphrt {

using DataType = GR_DataType;
constexpr int kDataTypeRefOffset = 100;

// The int values graphrt holds in a DataType: TensorFlow's DT_FLOAT..DT_UINT64
// (1..23) and their _REF forms (101..123). Every dtype from outside (proto
// fields and attrs, .npy, the plugin ABI) is checked with ValidateDataType
// before it is cast, so no other value is ever stored in a DataType.
constexpr bool IsSupportedDataTypeValue(int64_t v) {
  return (v >= GR_FLOAT && v <= GR_UINT64) || (v >= GR_FLOAT_REF && v <= GR_UINT64_REF);
}
// *out = the DataType `value` names, or InvalidArgument naming `what` (a
// node, a file, a field) and the value: "not a TensorFlow DataType" for
// values outside TensorFlow's enum, "not supported" for DT_INVALID and the
// TensorFlow types graphrt lacks (float8, int4, ...). `allow_ref`: whether
// a _REF type is acceptable here (tensors never have one).
Status ValidateDataType(int64_t value, bool allow_ref, const std::string& what, DataType* out);

inline bool IsRefType(DataType t) { return static_cast<int>(t) > kDataTypeRefOffset; }
inline DataType BaseType(DataType t) {
  return IsRefType(t) ? static_cast<DataType>(static_cast<int>(t) - kDataTypeRefOffset) : t;
}
inline DataType MakeRefType(DataType t) {
  return IsRefType(t) ? t : static_cast<DataType>(static_cast<int>(t) + kDataTypeRefOffset);
}

// Bytes per element; 0 for types without a fixed-size element (string,
// variant, resource) and for ref types. Inline: it is on the per-node path.
inline size_t DataTypeSize(DataType t) {
  switch (t) {
    case GR_BOOL: case GR_INT8: case GR_UINT8: case GR_QINT8: case GR_QUINT8:
      return 1;
    case GR_INT16: case GR_UINT16: case GR_QINT16: case GR_QUINT16: case GR_BFLOAT16: case GR_HALF:
      return 2;
    case GR_FLOAT: case GR_INT32: case GR_UINT32: case GR_QINT32:
      return 4;
    case GR_DOUBLE: case GR_INT64: case GR_UINT64: case GR_COMPLEX64:
      return 8;
    case GR_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}
// True when elements are plain bytes (memcpy-able): everything but string/variant/resource.
inline bool DataTypeIsPod(DataType t) { return DataTypeSize(t) > 0; }
// "float", "int32", "float_ref" (TensorFlow's DataTypeString spelling).
std::string DataTypeString(DataType t);
// "DT_FLOAT", "DT_FLOAT_REF".
std::string DataTypeEnumName(DataType t);
// TensorFlow's enum name of any int ("DT_FLOAT8_E5M2", "DT_INVALID"), or
// "<value> (not a TensorFlow DataType)": for messages about unchecked values.
std::string DataTypeValueName(int64_t value);
// Accepts "float", "int32", "DT_FLOAT"...; false if unknown.
bool DataTypeFromString(std::string_view s, DataType* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_TYPES_H_
