#include "graphrt/core/tensor.h"

#include <cstdlib>
#include <new>
#include <sstream>

#include "graphrt/proto/tensor.pb.h"

namespace graphrt {
namespace {

class AlignedHostAllocator final : public Allocator {
 public:
  const char* Name() const override { return "host"; }
  void* Allocate(size_t bytes, size_t alignment) override {
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  }
  void Deallocate(void* ptr, size_t) override { std::free(ptr); }
};

template <typename T>
void PrintValues(std::ostringstream& os, const T* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (i) os << ' ';
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>)
      os << static_cast<int>(v[i]);
    else if constexpr (std::is_same_v<T, bool>)
      os << (v[i] ? "true" : "false");
    else
      os << v[i];
  }
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) { man <<= 1; --exp; }
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float Bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Fills n elements from a typed repeated field; a short list repeats its last
// value (TensorFlow's rule), an empty one means zeros.
template <typename Dst, typename Field>
Status FillFromField(const Field& f, int64_t n, Dst* out, const char* field_name) {
  if (f.size() > n)
    return errors::InvalidArgument("TensorProto has ", f.size(), " ", field_name,
                                   " values but its shape holds only ", n);
  int64_t i = 0;
  for (; i < f.size(); ++i) out[i] = static_cast<Dst>(f.Get(static_cast<int>(i)));
  Dst last = f.size() > 0 ? static_cast<Dst>(f.Get(f.size() - 1)) : Dst();
  for (; i < n; ++i) out[i] = last;
  return Status::OK();
}

// How many values the *_val field that `dtype` reads holds.
int64_t TypedValueCount(const proto::TensorProto& p, DataType dtype) {
  switch (dtype) {
    case GR_FLOAT: return p.float_val_size();
    case GR_DOUBLE: return p.double_val_size();
    case GR_INT32: case GR_INT16: case GR_UINT16: case GR_INT8: case GR_UINT8:
    case GR_QINT8: case GR_QUINT8: case GR_QINT16: case GR_QUINT16: case GR_QINT32:
      return p.int_val_size();
    case GR_INT64: return p.int64_val_size();
    case GR_UINT32: return p.uint32_val_size();
    case GR_UINT64: return p.uint64_val_size();
    case GR_BOOL: return p.bool_val_size();
    case GR_HALF: case GR_BFLOAT16: return p.half_val_size();
    case GR_COMPLEX64: return p.scomplex_val_size();
    case GR_COMPLEX128: return p.dcomplex_val_size();
    case GR_STRING: return p.string_val_size();
    default: return 0;
  }
}

}  // namespace

Allocator* HostAllocator() {
  static AlignedHostAllocator* a = new AlignedHostAllocator();
  return a;
}

TensorBuffer* TensorBuffer::Create(Allocator* a, size_t bytes) {
  TensorBuffer* b = new TensorBuffer();
  b->allocator_ = a;
  b->size_ = bytes;
  if (bytes > 0) {
    b->data_ = a->Allocate(bytes, kTensorAlignment);
    if (b->data_ == nullptr) {
      delete b;
      return nullptr;
    }
  }
  return b;
}

void TensorBuffer::Destroy() const {
  if (owned_strings_ > 0) {
    auto* elems = static_cast<GR_StringElem*>(data_);
    for (int64_t i = 0; i < owned_strings_; ++i) std::free(elems[i].data);
  }
  if (data_) allocator_->Deallocate(data_, size_);
  delete this;
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) : Tensor(HostAllocator(), dtype, shape) {}

Tensor::Tensor(Allocator* a, DataType dtype, const TensorShape& shape) {
  if (!Allocate(a, dtype, shape, this).ok()) throw std::bad_alloc();
}

Status Tensor::Allocate(Allocator* a, DataType dtype, const TensorShape& shape, Tensor* out) {
  const size_t elem = TensorElementSize(dtype);
  if (elem == 0) return errors::InvalidArgument("cannot allocate a tensor of dtype ", DataTypeString(dtype));
  // Shapes obey the size rule (at most 2^58 elements), so this cannot wrap.
  const size_t bytes = elem * static_cast<size_t>(shape.num_elements());
  TensorBuffer* buf = TensorBuffer::Create(a, bytes);
  if (buf == nullptr)
    return errors::ResourceExhausted("OOM when allocating a ", DataTypeString(dtype), " tensor of shape ",
                                     shape.DebugString(), " (", bytes, " bytes) on ", a->Describe());
  if (dtype == GR_STRING && bytes > 0) {
    std::memset(buf->data(), 0, bytes);
    buf->set_owns_strings(shape.num_elements());
  } else if (dtype == GR_RESOURCE && bytes > 0) {
    std::memset(buf->data(), 0, bytes);  // null handles until set
  }
  *out = Tensor(dtype, shape, buf, buf->data());
  return Status::OK();
}

Tensor::Tensor(DataType dtype, const TensorShape& shape, TensorBuffer* buf, void* data)
    : dtype_(dtype), shape_(shape), buf_(buf), data_(data) {}

Tensor Tensor::StringScalar(std::string_view s) {
  Tensor t(GR_STRING, TensorShape());
  t.set_string(0, s);
  return t;
}

size_t Tensor::TotalBytes() const { return TensorElementSize(dtype_) * static_cast<size_t>(NumElements()); }

void Tensor::set_string(int64_t i, std::string_view s) {
  GR_StringElem& e = static_cast<GR_StringElem*>(data_)[i];
  std::free(e.data);
  e.data = static_cast<char*>(std::malloc(s.size() + 1));
  std::memcpy(e.data, s.data(), s.size());
  e.data[s.size()] = '\0';
  e.size = s.size();
}

Status Tensor::Reshaped(const TensorShape& shape, Tensor* out) const {
  if (shape.num_elements() != NumElements())
    return errors::InvalidArgument("cannot reshape a tensor with ", NumElements(), " elements to shape ",
                                   shape.DebugString(), " (", shape.num_elements(), " elements)");
  if (buf_) buf_->Ref();
  *out = Tensor(dtype_, shape, buf_, data_);
  return Status::OK();
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  TensorShape s = shape_;
  const int64_t row = shape_.dim_size(0) == 0 ? 0 : NumElements() / shape_.dim_size(0);
  s.set_dim(0, end - begin);
  return Range(begin * row, s);
}

Tensor Tensor::Range(int64_t offset, const TensorShape& shape) const {
  const size_t elem = TensorElementSize(dtype_);
  if (buf_) buf_->Ref();
  return Tensor(dtype_, shape, buf_, static_cast<char*>(data_) + offset * static_cast<int64_t>(elem));
}

Tensor Tensor::DeepCopy() const {
  Tensor t;
  if (!DeepCopy(HostAllocator(), &t).ok()) throw std::bad_alloc();
  return t;
}

Status Tensor::DeepCopy(Allocator* a, Tensor* out) const {
  Tensor t;
  GR_RETURN_IF_ERROR(Allocate(a, dtype_, shape_, &t));
  if (dtype_ == GR_STRING) {
    for (int64_t i = 0; i < NumElements(); ++i) t.set_string(i, string_at(i));
  } else if (TotalBytes() > 0) {
    std::memcpy(t.data_, data_, TotalBytes());
  }
  *out = std::move(t);
  return Status::OK();
}

Status ValidateTensorProto(const proto::TensorProto& p) {
  DataType dtype;
  GR_RETURN_IF_ERROR(ValidateDataType(p.dtype(), /*allow_ref=*/false, "TensorProto", &dtype));
  if (dtype != GR_STRING && !DataTypeIsPod(dtype))
    return errors::Unimplemented("TensorProto of dtype ", DataTypeString(dtype), " is not supported");
  TensorShape shape;
  GR_RETURN_IF_ERROR(TensorShape::FromProto(p.tensor_shape(), &shape).WithContext("TensorProto shape"));
  const int64_t n = shape.num_elements();
  if (!p.tensor_content().empty()) {
    if (dtype == GR_STRING) return errors::InvalidArgument("string TensorProto cannot use tensor_content");
    const size_t want = DataTypeSize(dtype) * static_cast<size_t>(n);
    if (p.tensor_content().size() != want)
      return errors::InvalidArgument("TensorProto tensor_content has ", p.tensor_content().size(),
                                     " bytes but dtype ", DataTypeString(dtype), " and shape ", shape.DebugString(),
                                     " need ", want);
    return Status::OK();
  }
  // Complex values come as (re, im) pairs.
  const int64_t per_element = dtype == GR_COMPLEX64 || dtype == GR_COMPLEX128 ? 2 : 1;
  const int64_t values = TypedValueCount(p, dtype);
  if (values > n * per_element)
    return errors::InvalidArgument("TensorProto has ", values, " values but its shape ", shape.DebugString(),
                                   " holds only ", n * per_element);
  return Status::OK();
}

Status TensorProtoPrefix(const proto::TensorProto& p, int64_t max_elements, TensorShape* shape, Tensor* prefix) {
  GR_RETURN_IF_ERROR(ValidateTensorProto(p));
  GR_RETURN_IF_ERROR(TensorShape::FromProto(p.tensor_shape(), shape));
  const DataType dtype = static_cast<DataType>(p.dtype());
  const int64_t k = std::min(shape->num_elements(), std::max<int64_t>(max_elements, 0));
  // The same proto cut to its first k elements; FromProto's rules (the last
  // value repeats) then give exactly the whole tensor's first k.
  proto::TensorProto head;
  head.set_dtype(p.dtype());
  head.mutable_tensor_shape()->add_dim()->set_size(k);
  if (!p.tensor_content().empty()) {
    head.set_tensor_content(p.tensor_content().substr(0, DataTypeSize(dtype) * static_cast<size_t>(k)));
  } else {
    const int64_t values = (dtype == GR_COMPLEX64 || dtype == GR_COMPLEX128 ? 2 : 1) * k;
    auto take = [values](const auto& from, auto* to) {
      const int m = static_cast<int>(std::min<int64_t>(from.size(), values));
      to->Reserve(m);
      for (int i = 0; i < m; ++i) *to->Add() = from.Get(i);
    };
    auto take_pod = [values](const auto& from, auto* to) {
      const int m = static_cast<int>(std::min<int64_t>(from.size(), values));
      to->Reserve(m);
      for (int i = 0; i < m; ++i) to->Add(from.Get(i));
    };
    take_pod(p.float_val(), head.mutable_float_val());
    take_pod(p.double_val(), head.mutable_double_val());
    take_pod(p.int_val(), head.mutable_int_val());
    take_pod(p.int64_val(), head.mutable_int64_val());
    take_pod(p.uint32_val(), head.mutable_uint32_val());
    take_pod(p.uint64_val(), head.mutable_uint64_val());
    take_pod(p.bool_val(), head.mutable_bool_val());
    take_pod(p.half_val(), head.mutable_half_val());
    take_pod(p.scomplex_val(), head.mutable_scomplex_val());
    take_pod(p.dcomplex_val(), head.mutable_dcomplex_val());
    take(p.string_val(), head.mutable_string_val());
  }
  return Tensor::FromProto(head, prefix);
}

Status Tensor::FromProto(const proto::TensorProto& p, Tensor* out, Allocator* a) {
  GR_RETURN_IF_ERROR(ValidateTensorProto(p));
  const DataType dtype = static_cast<DataType>(p.dtype());
  TensorShape shape;
  GR_RETURN_IF_ERROR(TensorShape::FromProto(p.tensor_shape(), &shape));
  Tensor t;
  GR_RETURN_IF_ERROR(Allocate(a, dtype, shape, &t));
  const int64_t n = shape.num_elements();
  if (!p.tensor_content().empty()) {
    if (t.TotalBytes() > 0) std::memcpy(t.data_, p.tensor_content().data(), t.TotalBytes());
    *out = std::move(t);
    return Status::OK();
  }
  Status s;
  switch (dtype) {
    case GR_FLOAT: s = FillFromField(p.float_val(), n, t.data<float>(), "float_val"); break;
    case GR_DOUBLE: s = FillFromField(p.double_val(), n, t.data<double>(), "double_val"); break;
    case GR_INT32: s = FillFromField(p.int_val(), n, t.data<int32_t>(), "int_val"); break;
    case GR_INT16: case GR_QINT16: s = FillFromField(p.int_val(), n, t.data<int16_t>(), "int_val"); break;
    case GR_UINT16: case GR_QUINT16: s = FillFromField(p.int_val(), n, t.data<uint16_t>(), "int_val"); break;
    case GR_INT8: case GR_QINT8: s = FillFromField(p.int_val(), n, t.data<int8_t>(), "int_val"); break;
    case GR_UINT8: case GR_QUINT8: s = FillFromField(p.int_val(), n, t.data<uint8_t>(), "int_val"); break;
    case GR_QINT32: s = FillFromField(p.int_val(), n, t.data<int32_t>(), "int_val"); break;
    case GR_INT64: s = FillFromField(p.int64_val(), n, t.data<int64_t>(), "int64_val"); break;
    case GR_UINT32: s = FillFromField(p.uint32_val(), n, t.data<uint32_t>(), "uint32_val"); break;
    case GR_UINT64: s = FillFromField(p.uint64_val(), n, t.data<uint64_t>(), "uint64_val"); break;
    case GR_BOOL: s = FillFromField(p.bool_val(), n, t.data<bool>(), "bool_val"); break;
    case GR_HALF: case GR_BFLOAT16: s = FillFromField(p.half_val(), n, t.data<uint16_t>(), "half_val"); break;
    case GR_COMPLEX64: s = FillFromField(p.scomplex_val(), 2 * n, t.data<float>(), "scomplex_val"); break;
    case GR_COMPLEX128: s = FillFromField(p.dcomplex_val(), 2 * n, t.data<double>(), "dcomplex_val"); break;
    case GR_STRING: {
      if (p.string_val_size() > n)
        return errors::InvalidArgument("TensorProto has ", p.string_val_size(),
                                       " string_val values but its shape holds only ", n);
      const int count = p.string_val_size();
      if (count == 0) break;  // elements start empty (Allocate zeroes them)
      // The last value repeats to fill the shape (TensorFlow's rule). Its
      // copies live outside the element array, so the allocator is asked
      // whether it could hold them before any is made: a few bytes of proto
      // cannot claim gigabytes of heap past the session's budget.
      size_t repeated = 0;
      const bool overflow =
          __builtin_mul_overflow(static_cast<size_t>(n - count), p.string_val(count - 1).size(), &repeated);
      if (overflow || repeated > 0) {
        void* probe = overflow ? nullptr : a->Allocate(repeated, kTensorAlignment);
        if (probe == nullptr)
          return errors::ResourceExhausted("OOM when allocating ", n - count, " copies of a ",
                                           p.string_val(count - 1).size(), "-byte string (", repeated,
                                           " bytes) for a string tensor of shape ", shape.DebugString(), " on ",
                                           a->Describe());
        a->Deallocate(probe, repeated);
      }
      for (int64_t i = 0; i < n; ++i) {
        const std::string& v = p.string_val(static_cast<int>(std::min<int64_t>(i, count - 1)));
        if (v.empty() && i >= count - 1) break;  // empty from here on
        t.set_string(i, v);
      }
      break;
    }
    default:
      return errors::Unimplemented("TensorProto of dtype ", DataTypeString(dtype), " is not supported");
  }
  GR_RETURN_IF_ERROR(s);
  *out = std::move(t);
  return Status::OK();
}

void Tensor::AsProtoTensorContent(proto::TensorProto* p) const {
  p->Clear();
  p->set_dtype(static_cast<proto::DataType>(dtype_));
  shape_.AsProto(p->mutable_tensor_shape());
  if (dtype_ == GR_STRING) {
    for (int64_t i = 0; i < NumElements(); ++i) p->add_string_val(std::string(string_at(i)));
  } else if (dtype_ == GR_RESOURCE) {
    for (int64_t i = 0; i < NumElements(); ++i) {
      const GR_ResourceHandle& h = data<GR_ResourceHandle>()[i];
      proto::ResourceHandleProto* r = p->add_resource_handle_val();
      if (h.container) r->set_container(h.container);
      if (h.name) r->set_name(h.name);
      if (h.type_name) r->set_maybe_type_name(h.type_name);
    }
  } else if (TotalBytes() > 0) {
    p->set_tensor_content(data_, TotalBytes());
  }
}

std::string Tensor::SummarizeValue(int64_t max_entries) const {
  std::ostringstream os;
  const int64_t n = std::min<int64_t>(NumElements(), max_entries);
  switch (dtype_) {
    case GR_FLOAT: PrintValues(os, data<float>(), n); break;
    case GR_DOUBLE: PrintValues(os, data<double>(), n); break;
    case GR_INT32: case GR_QINT32: PrintValues(os, data<int32_t>(), n); break;
    case GR_INT64: PrintValues(os, data<int64_t>(), n); break;
    case GR_INT16: case GR_QINT16: PrintValues(os, data<int16_t>(), n); break;
    case GR_UINT16: case GR_QUINT16: PrintValues(os, data<uint16_t>(), n); break;
    case GR_INT8: case GR_QINT8: PrintValues(os, data<int8_t>(), n); break;
    case GR_UINT8: case GR_QUINT8: PrintValues(os, data<uint8_t>(), n); break;
    case GR_UINT32: PrintValues(os, data<uint32_t>(), n); break;
    case GR_UINT64: PrintValues(os, data<uint64_t>(), n); break;
    case GR_BOOL: PrintValues(os, data<bool>(), n); break;
    case GR_HALF:
    case GR_BFLOAT16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t v = data<uint16_t>()[i];
        os << (i ? " " : "") << (dtype_ == GR_HALF ? HalfToFloat(v) : Bfloat16ToFloat(v));
      }
      break;
    case GR_STRING:
      for (int64_t i = 0; i < n; ++i) os << (i ? " " : "") << '"' << string_at(i) << '"';
      break;
    case GR_RESOURCE:
      for (int64_t i = 0; i < n; ++i) {
        const GR_ResourceHandle& h = data<GR_ResourceHandle>()[i];
        os << (i ? " " : "") << "<" << (h.type_name ? h.type_name : "?") << " " << (h.container ? h.container : "")
           << "/" << (h.name ? h.name : "") << ">";
      }
      break;
    default:
      os << "<" << DataTypeString(dtype_) << " values>";
      return os.str();
  }
  if (NumElements() > n) os << "...";
  return os.str();
}

std::string Tensor::DebugString(int64_t max_entries) const {
  if (!IsInitialized()) return "<uninitialized tensor>";
  return DataTypeString(dtype_) + " " + shape_.DebugString() + " [" + SummarizeValue(max_entries) + "]";
}

}  // namespace graphrt
