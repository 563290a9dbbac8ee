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

// Bytes per element; 0 for types without a fixed-size element (string, variant, resource).
size_t DataTypeSize(DataType t);
// True when elements are plain bytes (memcpy-able): everything but string/variant/resource.
bool DataTypeIsPod(DataType t);
// "float", "int32", "float_ref" (TensorFlow's DataTypeString spelling).
std::string DataTypeString(DataType t);
// "DT_FLOAT", "DT_FLOAT_REF".
std::string DataTypeEnumName(DataType t);
// Accepts "float", "int32", "DT_FLOAT"...; false if unknown.
bool DataTypeFromString(std::string_view s, DataType* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_TYPES_H_
