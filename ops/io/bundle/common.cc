// Shared pieces of graphrt_bundle: dtypes, slice specs, OrderedCode keys,
// CRC32C, slice copies.
#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "bundle_internal.h"
#include "graphrt/shape_limits.h"

namespace graphrt {
namespace bundle {

Status MakeStatus(int code, std::string message) {
  Status s;
  s.code = code;
  s.message = std::move(message);
  return s;
}

int DTypeSize(int dtype) {
  switch (dtype) {
    case DT_BOOL: case DT_INT8: case DT_UINT8: case DT_QINT8: case DT_QUINT8:
      return 1;
    case DT_INT16: case DT_UINT16: case DT_QINT16: case DT_QUINT16: case DT_BFLOAT16: case DT_HALF:
      return 2;
    case DT_FLOAT: case DT_INT32: case DT_UINT32: case DT_QINT32:
      return 4;
    case DT_DOUBLE: case DT_INT64: case DT_UINT64: case DT_COMPLEX64:
      return 8;
    case DT_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

bool DTypeSupported(int dtype) { return dtype == DT_STRING || DTypeSize(dtype) > 0; }

std::string DTypeName(int dtype) {
  switch (dtype) {
    case DT_FLOAT: return "float";
    case DT_DOUBLE: return "double";
    case DT_INT32: return "int32";
    case DT_UINT8: return "uint8";
    case DT_INT16: return "int16";
    case DT_INT8: return "int8";
    case DT_STRING: return "string";
    case DT_COMPLEX64: return "complex64";
    case DT_INT64: return "int64";
    case DT_BOOL: return "bool";
    case DT_QINT8: return "qint8";
    case DT_QUINT8: return "quint8";
    case DT_QINT32: return "qint32";
    case DT_BFLOAT16: return "bfloat16";
    case DT_QINT16: return "qint16";
    case DT_QUINT16: return "quint16";
    case DT_UINT16: return "uint16";
    case DT_COMPLEX128: return "complex128";
    case DT_HALF: return "half";
    case 20: return "resource";
    case 21: return "variant";
    case DT_UINT32: return "uint32";
    case DT_UINT64: return "uint64";
    default: return "dtype " + std::to_string(dtype);
  }
}

std::string ShapeString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

Status NumElements(const std::vector<int64_t>& dims, const std::string& what, int64_t* n) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return MakeStatus(kInvalidArgument, what + ": rank " + std::to_string(dims.size()) + " is above " +
                                            std::to_string(kMaxRank));
  if (gr_shape_num_elements(dims.data(), static_cast<int32_t>(dims.size()), n) == GR_OK) return Status();
  return MakeStatus(kInvalidArgument, what + ": shape " + ShapeString(dims) +
                                          " has a negative dimension or more than 2^58 elements");
}

// ------------------------------------------------------------------ slices

bool TensorSlice::IsFull() const {
  for (const Extent& e : extents)
    if (!e.full()) return false;
  return true;
}

std::string TensorSlice::DebugString() const {
  if (extents.empty()) return "";
  std::string s;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (i) s += ":";
    s += extents[i].full() ? std::string("-")
                           : std::to_string(extents[i].start) + "," + std::to_string(extents[i].length);
  }
  return s;
}

namespace {
bool ParseInt64(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return false;
  uint64_t acc = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (acc > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / 10) return false;
    acc = acc * 10 + d;
  }
  *v = neg ? -static_cast<int64_t>(acc) : static_cast<int64_t>(acc);
  return true;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (;;) {
    const size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}
}  // namespace

Status ParseSlice(const std::string& spec, TensorSlice* out) {
  out->extents.clear();
  if (spec.empty()) return Status();
  for (const std::string& item : Split(spec, ':')) {
    Extent e;
    if (item == "-") {
      out->extents.push_back(e);
      continue;
    }
    const std::vector<std::string> pair = Split(item, ',');
    if (pair.size() != 2 || !ParseInt64(pair[0], &e.start) || !ParseInt64(pair[1], &e.length))
      return MakeStatus(kInvalidArgument,
                        "Expected a pair of numbers or '-' but got '" + item + "': string = " + spec);
    if (e.start < 0 || e.length <= 0)
      return MakeStatus(kInvalidArgument, "Expected non-negative start and positive length but got start = " +
                                              std::to_string(e.start) + ", length = " +
                                              std::to_string(e.length) + ": string = " + spec);
    out->extents.push_back(e);
  }
  if (out->extents.size() > static_cast<size_t>(kMaxRank))
    return MakeStatus(kInvalidArgument, "slice '" + spec + "' has more than " + std::to_string(kMaxRank) +
                                            " dimensions");
  return Status();
}

Status ParseShapeAndSlice(const std::string& spec, bool* has_shape, std::vector<int64_t>* full_dims,
                          TensorSlice* slice) {
  *has_shape = false;
  slice->extents.clear();
  if (spec.empty()) return Status();
  std::vector<std::string> items;
  for (const std::string& s : Split(spec, ' '))
    if (!s.empty()) items.push_back(s);
  if (items.size() < 2)
    return MakeStatus(kInvalidArgument, "Need least two elements in shape_and_slice specification: " + spec);
  Status s = ParseSlice(items.back(), slice);
  if (!s.ok()) return s;
  full_dims->clear();
  for (size_t i = 0; i + 1 < items.size(); ++i) {
    int64_t d = 0;
    if (!ParseInt64(items[i], &d)) return MakeStatus(kInvalidArgument, "Non numerical dimension in shape_and_slice: " + spec);
    full_dims->push_back(d);
  }
  int64_t n = 0;
  s = NumElements(*full_dims, "shape_and_slice '" + spec + "'", &n);
  if (!s.ok()) return s;
  std::vector<int64_t> sd;
  s = SliceDims(*slice, *full_dims, &sd);
  if (!s.ok()) return MakeStatus(kInvalidArgument, s.message + " (shape_and_slice '" + spec + "')");
  *has_shape = true;
  return Status();
}

Status SliceDims(const TensorSlice& slice, const std::vector<int64_t>& full_dims,
                 std::vector<int64_t>* dims) {
  if (slice.extents.empty()) {
    *dims = full_dims;
    return Status();
  }
  if (slice.extents.size() != full_dims.size())
    return MakeStatus(kInvalidArgument, "Mismatching ranks: shape = " + ShapeString(full_dims) +
                                            ", slice = " + slice.DebugString());
  dims->clear();
  for (size_t i = 0; i < full_dims.size(); ++i) {
    const Extent& e = slice.extents[i];
    if (e.full()) {
      dims->push_back(full_dims[i]);
      continue;
    }
    if (e.start < 0 || e.length < 0 || e.start > full_dims[i] || e.length > full_dims[i] - e.start)
      return MakeStatus(kInvalidArgument, "Extent in dimension " + std::to_string(i) +
                                              " out of bounds: shape = " + ShapeString(full_dims) +
                                              ", slice = " + slice.DebugString());
    dims->push_back(e.length);
  }
  return Status();
}

TensorSlice Canonical(const TensorSlice& slice, const std::vector<int64_t>& full_dims) {
  TensorSlice c;
  for (size_t i = 0; i < full_dims.size(); ++i) {
    Extent e;
    if (i < slice.extents.size() && !slice.extents[i].full()) {
      e = slice.extents[i];
    } else {
      e.start = 0;
      e.length = full_dims[i];
    }
    c.extents.push_back(e);
  }
  return c;
}

// ------------------------------------------------------------- OrderedCode

namespace {
void AppendNumIncreasing(std::string* dst, uint64_t v) {
  unsigned char buf[8];
  int n = 0;
  while (v) {
    buf[n++] = static_cast<unsigned char>(v & 0xff);
    v >>= 8;
  }
  dst->push_back(static_cast<char>(n));
  for (int i = n - 1; i >= 0; --i) dst->push_back(static_cast<char>(buf[i]));
}

void AppendString(std::string* dst, const std::string& s) {
  for (char c : s) {
    if (c == '\0') {
      dst->append("\x00\xff", 2);
    } else if (static_cast<unsigned char>(c) == 0xff) {
      dst->append("\xff\x00", 2);
    } else {
      dst->push_back(c);
    }
  }
  dst->append("\x00\x01", 2);
}

// n bytes (1..10) hold n unary header bits and a 7n-bit two's-complement
// value; the header bits are XOR-ed over the sign-extended big-endian form.
void AppendSignedNumIncreasing(std::string* dst, int64_t v) {
  const uint64_t x = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int bits = 0;
  while (bits < 64 && (x >> bits) != 0) ++bits;
  int n = 1;
  while (bits + 1 > 7 * n) ++n;  // the value plus its sign bit must fit in 7n bits
  unsigned char buf[10];
  const unsigned char sign = v < 0 ? 0xff : 0x00;
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i) buf[2 + i] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (56 - 8 * i));
  unsigned char* begin = buf + 10 - n;
  for (int bit = 0; bit < n; ++bit) begin[bit / 8] ^= static_cast<unsigned char>(0x80 >> (bit % 8));
  dst->append(reinterpret_cast<const char*>(begin), static_cast<size_t>(n));
}
}  // namespace

std::string EncodeTensorNameSlice(const std::string& name, const TensorSlice& slice, int rank) {
  std::string key;
  AppendNumIncreasing(&key, 0);
  AppendString(&key, name);
  AppendNumIncreasing(&key, static_cast<uint64_t>(rank));
  for (int i = 0; i < rank; ++i) {
    Extent e;
    if (static_cast<size_t>(i) < slice.extents.size()) e = slice.extents[i];
    AppendSignedNumIncreasing(&key, e.full() ? 0 : e.start);
    AppendSignedNumIncreasing(&key, e.full() ? -1 : e.length);
  }
  return key;
}

// ------------------------------------------------------------------ CRC32C

// ISA-L's crc32_iscsi is CRC32C without the final inversion and with an
// `int` length, hence the wrapper.
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
  uint32_t c = crc ^ 0xffffffffu;
  auto* p = reinterpret_cast<unsigned char*>(const_cast<char*>(data));
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(n, size_t{1} << 30));
    c = crc32_iscsi(p, chunk, c);
    p += chunk;
    n -= static_cast<size_t>(chunk);
  }
  return c ^ 0xffffffffu;
}
uint32_t Crc32c(const char* data, size_t n) { return Crc32cExtend(0, data, n); }
uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

// ------------------------------------------------------------- slice copies

int64_t CopySliceOverlap(const TensorValue& src, const TensorSlice& src_slice, TensorValue* dst,
                         const TensorSlice& dst_slice, const std::vector<int64_t>& full_dims) {
  const size_t rank = full_dims.size();
  const TensorSlice s = Canonical(src_slice, full_dims);
  const TensorSlice d = Canonical(dst_slice, full_dims);
  std::vector<int64_t> lo(rank), len(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = std::max(s.extents[i].start, d.extents[i].start);
    const int64_t b = std::min(s.extents[i].start + s.extents[i].length, d.extents[i].start + d.extents[i].length);
    if (b <= a) return 0;
    lo[i] = a;
    len[i] = b - a;
  }
  // Row-major strides of the source and destination slices.
  std::vector<int64_t> ss(rank, 1), ds(rank, 1);
  for (size_t i = rank; i-- > 1;) {
    ss[i - 1] = ss[i] * s.extents[i].length;
    ds[i - 1] = ds[i] * d.extents[i].length;
  }
  const int esize = DTypeSize(src.dtype);
  const int64_t run = rank ? len[rank - 1] : 1;
  int64_t copied = 0;
  std::vector<int64_t> idx(rank, 0);  // position inside the overlap, last dim stays 0
  for (;;) {
    int64_t so = 0, dof = 0;
    for (size_t i = 0; i < rank; ++i) {
      so += (lo[i] + idx[i] - s.extents[i].start) * ss[i];
      dof += (lo[i] + idx[i] - d.extents[i].start) * ds[i];
    }
    if (src.dtype == DT_STRING) {
      for (int64_t k = 0; k < run; ++k) dst->strings[static_cast<size_t>(dof + k)] = src.strings[static_cast<size_t>(so + k)];
    } else {
      std::memcpy(&dst->bytes[static_cast<size_t>(dof * esize)], &src.bytes[static_cast<size_t>(so * esize)],
                  static_cast<size_t>(run * esize));
    }
    copied += run;
    int i = static_cast<int>(rank) - 2;  // odometer over all dims but the last
    for (; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < len[static_cast<size_t>(i)]) break;
      idx[static_cast<size_t>(i)] = 0;
    }
    if (i < 0) break;
  }
  return copied;
}

}  // namespace bundle
}  // namespace graphrt
