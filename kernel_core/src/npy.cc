// NumPy .npy files (format versions 1.0, 2.0 and 3.0) <-> Tensors.
//
// Layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0,
// uint32 LE for 2.0/3.0), then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n', then the raw element data.
//
// dtypes map one to one onto numpy's: float '<f4', double '<f8', half '<f2',
// int8..int64 '|i1' '<i2' '<i4' '<i8', uint8..uint64 '|u1' ... '<u8',
// bool '|b1', complex64 '<c8', complex128 '<c16'. bfloat16 and the quantized
// types have no numpy dtype and are refused rather than silently converted.
// Strings are written as fixed-width bytes '|S<n>' (n = longest element, at
// least 1; numpy pads with NULs, so trailing NULs are lost on the way back)
// and read from '|S<n>' or unicode '<U<n>' (converted to UTF-8).
// Reading also accepts big-endian data and fortran_order=True.
#include "graphrt/core/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/core/graph_def_io.h"

namespace graphrt {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr bool kHostLittleEndian = std::endian::native == std::endian::little;
// numpy aligns the start of the data to 64 bytes (so it can be mmapped).
constexpr size_t kHeaderAlignment = 64;

struct NpyType {
  DataType dtype;
  char kind;  // numpy's kind character
  int size;   // bytes per element
};

constexpr NpyType kNpyTypes[] = {
    {GR_FLOAT, 'f', 4},      {GR_DOUBLE, 'f', 8},      {GR_HALF, 'f', 2},
    {GR_INT8, 'i', 1},       {GR_INT16, 'i', 2},       {GR_INT32, 'i', 4},
    {GR_INT64, 'i', 8},      {GR_UINT8, 'u', 1},       {GR_UINT16, 'u', 2},
    {GR_UINT32, 'u', 4},     {GR_UINT64, 'u', 8},      {GR_BOOL, 'b', 1},
    {GR_COMPLEX64, 'c', 8},  {GR_COMPLEX128, 'c', 16},
};

const NpyType* FindByDtype(DataType t) {
  for (const NpyType& n : kNpyTypes)
    if (n.dtype == t) return &n;
  return nullptr;
}

const NpyType* FindByKind(char kind, int size) {
  for (const NpyType& n : kNpyTypes)
    if (n.kind == kind && n.size == size) return &n;
  return nullptr;
}

// ------------------------------------------------------------ header parse

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A parser for the small subset of Python literal syntax numpy writes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Status Parse(Header* h) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    SkipSpace();
    GR_RETURN_IF_ERROR(Expect('{'));
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key;
      GR_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      GR_RETURN_IF_ERROR(Expect(':'));
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[')
          return Error("structured (record) dtypes are not supported; save a plain array");
        GR_RETURN_IF_ERROR(ParseString(&h->descr));
        seen_descr = true;
      } else if (key == "fortran_order") {
        GR_RETURN_IF_ERROR(ParseBool(&h->fortran_order));
        seen_fortran = true;
      } else if (key == "shape") {
        GR_RETURN_IF_ERROR(ParseShape(&h->shape));
        seen_shape = true;
      } else {
        return Error("unexpected key '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') break;
      return Error("expected ',' or '}'");
    }
    ++pos_;  // '}'
    if (!seen_descr) return Error("missing key 'descr'");
    if (!seen_fortran) return Error("missing key 'fortran_order'");
    if (!seen_shape) return Error("missing key 'shape'");
    return Status::OK();
  }

 private:
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r'))
      ++pos_;
  }
  Status Error(const std::string& msg) const {
    return errors::InvalidArgument(what_, ": malformed .npy header (", msg, " at offset ", pos_,
                                   " of \"", Printable(s_), "\")");
  }
  static std::string Printable(std::string_view s) {
    std::string r;
    for (char c : s.substr(0, 200)) r += (c >= 32 && c < 127) ? c : '?';
    if (s.size() > 200) r += "...";
    return r;
  }
  Status Expect(char c) {
    if (Peek() != c) return Error(std::string("expected '") + c + "'");
    ++pos_;
    return Status::OK();
  }
  Status ParseString(std::string* out) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a quoted string");
    ++pos_;
    out->clear();
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') return Error("escapes in strings are not supported");
      *out += s_[pos_++];
    }
    if (pos_ >= s_.size()) return Error("unterminated string");
    ++pos_;
    return Status::OK();
  }
  Status ParseBool(bool* out) {
    if (s_.substr(pos_, 4) == "True") {
      *out = true;
      pos_ += 4;
    } else if (s_.substr(pos_, 5) == "False") {
      *out = false;
      pos_ += 5;
    } else {
      return Error("expected True or False");
    }
    return Status::OK();
  }
  Status ParseShape(std::vector<int64_t>* out) {
    const char open = Peek();
    if (open != '(' && open != '[') return Error("expected a shape tuple");
    const char close = open == '(' ? ')' : ']';
    ++pos_;
    out->clear();
    while (true) {
      SkipSpace();
      if (Peek() == close) break;
      if (Peek() < '0' || Peek() > '9') return Error("expected a non-negative dimension");
      int64_t d = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        const int digit = Peek() - '0';
        if (d > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return Error("dimension too large");
        d = d * 10 + digit;
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 longs: (2L, 3L)
      out->push_back(d);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == close) break;
      return Error(std::string("expected ',' or '") + close + "' in shape");
    }
    ++pos_;
    return Status::OK();
  }

  std::string_view s_;
  const std::string& what_;
  size_t pos_ = 0;
};

// What the descr says about the elements.
struct ElementFormat {
  enum Kind { kPod, kBytes, kUnicode } kind = kPod;
  DataType dtype = GR_INVALID;
  size_t itemsize = 0;     // bytes per element in the file
  size_t swap_unit = 0;    // byte-swap granularity when the file is big-endian
  bool big_endian = false;
};

Status ParseDescr(const std::string& descr, const std::string& what, ElementFormat* f) {
  auto unsupported = [&](const std::string& why) {
    return errors::InvalidArgument(what, ": unsupported .npy dtype descr '", descr, "'", why);
  };
  std::string_view d(descr);
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    order = d[0];
    d.remove_prefix(1);
  }
  if (d.empty()) return unsupported("");
  const char kind = d[0];
  d.remove_prefix(1);
  if (kind == 'O') return unsupported(" (object arrays hold pickled Python objects)");
  size_t size = 0;
  if (d.empty() || d.size() > 9) return unsupported("");
  for (char c : d) {
    if (c < '0' || c > '9') return unsupported("");
    size = size * 10 + static_cast<size_t>(c - '0');
  }
  f->big_endian = order == '>' || (order == '=' && !kHostLittleEndian);
  // numpy never writes a zero-width element ('S0' / 'U0' arrays are stored as
  // 'S1' / 'U1'); accepting one would let a few bytes of header declare any
  // number of elements that the file does not hold.
  if ((kind == 'S' || kind == 'U') && size == 0) return unsupported(" (zero-byte elements)");
  if (kind == 'S') {
    f->kind = ElementFormat::kBytes;
    f->dtype = GR_STRING;
    f->itemsize = size;
    f->swap_unit = 1;
    return Status::OK();
  }
  if (kind == 'U') {
    f->kind = ElementFormat::kUnicode;
    f->dtype = GR_STRING;
    f->itemsize = size * 4;  // UTF-32 code units
    f->swap_unit = 4;
    return Status::OK();
  }
  const NpyType* t = FindByKind(kind, static_cast<int>(size));
  if (t == nullptr) {
    if (kind == 'V') return unsupported(" (raw void data; bfloat16 and other extension dtypes "
                                        "cannot be read, save as float32)");
    if (kind == 'M' || kind == 'm') return unsupported(" (datetime/timedelta)");
    return unsupported(" (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16 S<n> U<n>)");
  }
  f->kind = ElementFormat::kPod;
  f->dtype = t->dtype;
  f->itemsize = static_cast<size_t>(t->size);
  f->swap_unit = kind == 'c' ? f->itemsize / 2 : f->itemsize;  // each of re, im
  return Status::OK();
}

uint32_t ReadLE(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void ByteSwap(char* data, size_t bytes, size_t unit) {
  if (unit <= 1) return;
  for (size_t off = 0; off + unit <= bytes; off += unit) {
    char* p = data + off;
    for (size_t i = 0, j = unit - 1; i < j; ++i, --j) std::swap(p[i], p[j]);
  }
}

// Calls fn(dst, src) for every element: dst its row-major index, src where it
// lives in a column-major (Fortran) layout of the same shape.
template <typename Fn>
void ForEachFortranElement(const std::vector<int64_t>& dims, int64_t count, Fn fn) {
  const size_t rank = dims.size();
  std::vector<int64_t> stride(rank), index(rank, 0);
  int64_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    stride[k] = s;
    s *= dims[k];
  }
  int64_t src = 0;
  for (int64_t dst = 0; dst < count; ++dst) {
    fn(dst, src);
    // Advance the row-major multi-index (last dim fastest), tracking src.
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < dims[k]) {
        src += stride[k];
        break;
      }
      src -= stride[k] * (dims[k] - 1);
      index[k] = 0;
    }
  }
}

// UTF-32 code units -> UTF-8, dropping the NUL padding at the end.
Status Utf32ToUtf8(const char* p, size_t units, bool big_endian, const std::string& what,
                   int64_t element, std::string* out) {
  out->clear();
  std::vector<uint32_t> cps(units);
  for (size_t i = 0; i < units; ++i) {
    unsigned char b[4];
    std::memcpy(b, p + 4 * i, 4);
    cps[i] = big_endian ? (uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3])
                        : ReadLE(b, 4);
  }
  while (!cps.empty() && cps.back() == 0) cps.pop_back();
  for (uint32_t c : cps) {
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      return errors::InvalidArgument(what, ": element ", element,
                                     " of the unicode array holds invalid code point ", c);
    if (c < 0x80) {
      *out += static_cast<char>(c);
    } else if (c < 0x800) {
      *out += static_cast<char>(0xC0 | (c >> 6));
      *out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      *out += static_cast<char>(0xE0 | (c >> 12));
      *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (c >> 18));
      *out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return Status::OK();
}

Status WriteStringToFile(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    return errors::InvalidArgument(path, ": cannot open for writing: ", std::strerror(errno));
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_err = errno;
  const bool closed = std::fclose(f) == 0;  // flushes: a full disk may show here
  if (!wrote || !closed)
    return errors::Unknown(path, ": error while writing: ", std::strerror(wrote ? errno : write_err));
  return Status::OK();
}

}  // namespace

Status ParseNpy(const std::string& bytes, const std::string& what, Tensor* out) {
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.empty()) return errors::InvalidArgument(what, ": file is empty, not a .npy file");
  if (bytes.size() < kMagic.size() + 2) {
    if (std::string_view(bytes).substr(0, kMagic.size()) == kMagic.substr(0, bytes.size()))
      return errors::DataLoss(what, ": truncated .npy file (", bytes.size(),
                              " bytes, shorter than the magic and version)");
    return errors::InvalidArgument(what, ": not a .npy file (bad magic; expected \"\\x93NUMPY\")");
  }
  if (std::string_view(bytes).substr(0, kMagic.size()) != kMagic)
    return errors::InvalidArgument(what, ": not a .npy file (bad magic; expected \"\\x93NUMPY\")");
  const int major = u[6], minor = u[7];
  int len_bytes;
  if (major == 1) {
    len_bytes = 2;
  } else if (major == 2 || major == 3) {
    len_bytes = 4;
  } else {
    return errors::InvalidArgument(what, ": unsupported .npy format version ", major, ".", minor,
                                   " (supported: 1.0, 2.0, 3.0)");
  }
  const size_t prefix = kMagic.size() + 2 + static_cast<size_t>(len_bytes);
  if (bytes.size() < prefix)
    return errors::DataLoss(what, ": truncated .npy header (file ends inside the header length)");
  const size_t header_len = ReadLE(u + 8, len_bytes);
  if (bytes.size() - prefix < header_len)
    return errors::DataLoss(what, ": truncated .npy header (header claims ", header_len,
                            " bytes, only ", bytes.size() - prefix, " remain)");
  // 3.0 only differs from 2.0 in allowing UTF-8 in the header; the keys and
  // values we accept are ASCII either way.
  Header h;
  GR_RETURN_IF_ERROR(
      HeaderParser(std::string_view(bytes).substr(prefix, header_len), what).Parse(&h));
  ElementFormat fmt;
  GR_RETURN_IF_ERROR(ParseDescr(h.descr, what, &fmt));

  TensorShape shape;
  {
    Status s = TensorShape::FromDims(h.shape.data(), static_cast<int>(h.shape.size()), &shape);
    if (!s.ok()) return errors::InvalidArgument(what, ": bad .npy shape: ", s.message());
  }
  // The shape obeys the size rule (at most 2^58 elements), and the data it
  // declares must be in the file: both before anything is allocated.
  const int64_t count = shape.num_elements();
  const size_t data_avail = bytes.size() - prefix - header_len;
  const bool overflow = fmt.itemsize != 0 && static_cast<uint64_t>(count) >
                                                  std::numeric_limits<uint64_t>::max() / fmt.itemsize;
  const uint64_t data_needed = overflow ? 0 : static_cast<uint64_t>(count) * fmt.itemsize;
  if (overflow || data_needed > data_avail)
    return errors::DataLoss(what, ": truncated .npy data: shape ", shape.DebugString(), " of '",
                            h.descr, "' needs ",
                            overflow ? std::string("more than 2^64") : std::to_string(data_needed),
                            " bytes, file has ", data_avail);
  if (data_needed < data_avail)
    return errors::InvalidArgument(what, ": .npy data size mismatch: shape ", shape.DebugString(),
                                   " of '", h.descr, "' needs ", data_needed, " bytes, file has ",
                                   data_avail, " (trailing data)");
  const char* src = bytes.data() + prefix + header_len;
  const bool fortran = h.fortran_order && h.shape.size() > 1;
  const bool swap = fmt.big_endian != !kHostLittleEndian;

  if (fmt.kind == ElementFormat::kPod) {
    if (DataTypeSize(fmt.dtype) != fmt.itemsize)
      return errors::Internal("npy: element size of ", DataTypeString(fmt.dtype), " is ",
                              DataTypeSize(fmt.dtype), ", expected ", fmt.itemsize);
    Tensor t;
    GR_RETURN_IF_ERROR(Tensor::Allocate(HostAllocator(), fmt.dtype, shape, &t).WithContext(what));
    char* dst = t.data<char>();
    if (data_needed > 0) {
      if (fortran) {
        const size_t n = fmt.itemsize;
        ForEachFortranElement(h.shape, count, [&](int64_t di, int64_t si) {
          std::memcpy(dst + di * n, src + si * n, n);
        });
      } else {
        std::memcpy(dst, src, data_needed);
      }
      if (swap) ByteSwap(dst, data_needed, fmt.swap_unit);
      // Any byte other than 0/1 in a C++ bool is undefined behaviour.
      if (fmt.dtype == GR_BOOL)
        for (int64_t i = 0; i < count; ++i) dst[i] = dst[i] != 0 ? 1 : 0;
    }
    *out = std::move(t);
    return Status::OK();
  }

  Tensor t;
  GR_RETURN_IF_ERROR(Tensor::Allocate(HostAllocator(), GR_STRING, shape, &t).WithContext(what));
  std::string value;
  Status status;
  auto convert = [&](int64_t di, int64_t si) {
    if (!status.ok()) return;
    const char* e = src + static_cast<size_t>(si) * fmt.itemsize;
    if (fmt.kind == ElementFormat::kBytes) {
      size_t n = fmt.itemsize;
      while (n > 0 && e[n - 1] == '\0') --n;  // numpy's padding
      t.set_string(di, std::string_view(e, n));
    } else {
      status = Utf32ToUtf8(e, fmt.itemsize / 4, fmt.big_endian, what, si, &value);
      if (status.ok()) t.set_string(di, value);
    }
  };
  if (fortran) {
    ForEachFortranElement(h.shape, count, convert);
  } else {
    for (int64_t i = 0; i < count; ++i) convert(i, i);
  }
  GR_RETURN_IF_ERROR(status);
  *out = std::move(t);
  return Status::OK();
}

Status SerializeNpy(const Tensor& t, std::string* out) {
  if (!t.IsInitialized())
    return errors::InvalidArgument("cannot write an uninitialized tensor as .npy");
  const DataType dtype = t.dtype();
  const int64_t count = t.NumElements();
  std::string descr;
  size_t itemsize = 0;
  if (dtype == GR_STRING) {
    itemsize = 1;  // numpy has no zero-width bytes dtype
    for (int64_t i = 0; i < count; ++i) itemsize = std::max(itemsize, t.string_at(i).size());
    descr = "|S" + std::to_string(itemsize);
  } else if (const NpyType* n = FindByDtype(dtype)) {
    itemsize = static_cast<size_t>(n->size);
    const char order = n->size == 1 ? '|' : (kHostLittleEndian ? '<' : '>');
    descr = std::string(1, order) + n->kind + std::to_string(n->size);
  } else {
    return errors::Unimplemented("cannot write a ", DataTypeString(dtype),
                                 " tensor as .npy: numpy has no ", DataTypeString(dtype),
                                 " dtype (cast it, e.g. to float32, first)");
  }

  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < t.dims(); ++i) {
    if (i > 0) header += ", ";
    header += std::to_string(t.dim_size(i));
  }
  header += t.dims() == 1 ? ",), }" : "), }";
  // Version 1.0 unless the header outgrows its 16-bit length (huge ranks).
  size_t prefix = kMagic.size() + 2 + 2;
  size_t padded = (prefix + header.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment *
                  kHeaderAlignment;
  int major = 1;
  if (padded - prefix > 0xFFFF) {
    major = 2;
    prefix += 2;
    padded = (prefix + header.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment *
             kHeaderAlignment;
  }
  header.append(padded - prefix - header.size() - 1, ' ');
  header += '\n';

  const size_t data_bytes = static_cast<size_t>(count) * itemsize;
  out->clear();
  out->reserve(padded + data_bytes);
  out->append(kMagic);
  out->push_back(static_cast<char>(major));
  out->push_back(0);
  const uint32_t hlen = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out->push_back(static_cast<char>(hlen >> (8 * i)));
  out->append(header);
  if (dtype == GR_STRING) {
    for (int64_t i = 0; i < count; ++i) {
      const std::string_view s = t.string_at(i);
      out->append(s);
      out->append(itemsize - s.size(), '\0');
    }
  } else if (data_bytes > 0) {
    out->append(static_cast<const char*>(t.raw_data()), data_bytes);
  }
  return Status::OK();
}

Status ReadNpy(const std::string& path, Tensor* out) {
  std::string bytes;
  GR_RETURN_IF_ERROR(ReadFileToString(path, &bytes));
  return ParseNpy(bytes, path, out);
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  std::string bytes;
  Status s = SerializeNpy(t, &bytes);
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return WriteStringToFile(path, bytes);
}

}  // namespace graphrt
