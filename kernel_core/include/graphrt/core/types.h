// DataType helpers. Values are TensorFlow's (types.proto); *_REF = base + 100.
#ifndef GRAPHRT_CORE_TYPES_H_
#define GRAPHRT_CORE_TYPES_H_

#include <graphrt/c_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace graphrt {

using DataType = GR_DataType;
constexpr int kDataTypeRefOffset = 100;

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
// Accepts "float", "int32", "DT_FLOAT"...; false if unknown.
bool DataTypeFromString(std::string_view s, DataType* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_TYPES_H_
