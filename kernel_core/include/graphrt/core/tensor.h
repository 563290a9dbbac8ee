// Tensor: dtype + shape + a refcounted, 64-byte aligned buffer.
#ifndef GRAPHRT_CORE_TENSOR_H_
#define GRAPHRT_CORE_TENSOR_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor_shape.h"
#include "graphrt/core/types.h"

namespace graphrt {

namespace proto {
class TensorProto;
}

constexpr size_t kTensorAlignment = 64;

// Where tensor memory comes from: the core's host heap or a device backend.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual const char* Name() const = 0;
  virtual void* Allocate(size_t bytes, size_t alignment) = 0;
  virtual void Deallocate(void* ptr, size_t bytes) = 0;
  // True when the memory is ordinary host memory.
  virtual bool IsHost() const { return true; }
  // For an out-of-memory message: the name, and any limit that refused.
  virtual std::string Describe() const { return Name(); }
};

// The core's aligned host allocator (feeds, constants parsed from protos).
Allocator* HostAllocator();

// Bytes per element as tensors store them: a GR_StringElem for strings, a
// GR_ResourceHandle for resource handles, DataTypeSize otherwise (0: no
// fixed-size element, cannot be allocated).
inline size_t TensorElementSize(DataType t) {
  if (t == GR_STRING) return sizeof(GR_StringElem);
  if (t == GR_RESOURCE) return sizeof(GR_ResourceHandle);
  return DataTypeSize(t);
}

// Intrusively refcounted storage. Created with a refcount of one.
class TensorBuffer {
 public:
  // Returns nullptr when the allocator fails. Zero bytes is valid (no data).
  static TensorBuffer* Create(Allocator* a, size_t bytes);
  void Ref() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }
  bool RefCountIsOne() const { return refs_.load(std::memory_order_acquire) == 1; }
  void* data() const { return data_; }
  size_t size() const { return size_; }
  Allocator* allocator() const { return allocator_; }
  // Elements of a string buffer are GR_StringElem that own their bytes.
  void set_owns_strings(int64_t n) { owned_strings_ = n; }

 private:
  TensorBuffer() = default;
  void Destroy() const;
  mutable std::atomic<int32_t> refs_{1};
  void* data_ = nullptr;
  size_t size_ = 0;
  Allocator* allocator_ = nullptr;
  int64_t owned_strings_ = 0;
  bool inline_data_ = false;
};

class Tensor {
 public:
  Tensor() = default;  // uninitialized: dtype DT_INVALID, no buffer
  // Host tensor. Strings start empty; POD contents are uninitialized.
  // Throws std::bad_alloc when the memory cannot be had; the core itself
  // allocates through Allocate, which answers a Status instead.
  Tensor(DataType dtype, const TensorShape& shape);
  Tensor(Allocator* a, DataType dtype, const TensorShape& shape);
  // The one way the core makes a tensor of a shape: InvalidArgument for a
  // dtype without fixed-size elements, ResourceExhausted naming the shape,
  // the bytes and the allocator when `a` refuses (an allocator with a
  // memory budget refuses past it).
  static Status Allocate(Allocator* a, DataType dtype, const TensorShape& shape, Tensor* out);
  // Adopts one reference of `buf` (which must be large enough).
  Tensor(DataType dtype, const TensorShape& shape, TensorBuffer* buf, void* data);
  Tensor(const Tensor& o) : dtype_(o.dtype_), shape_(o.shape_), buf_(o.buf_), data_(o.data_) {
    if (buf_) buf_->Ref();
  }
  Tensor(Tensor&& o) noexcept
      : dtype_(o.dtype_), shape_(std::move(o.shape_)), buf_(o.buf_), data_(o.data_) {
    o.buf_ = nullptr;
    o.data_ = nullptr;
    o.dtype_ = GR_INVALID;
  }
  Tensor& operator=(const Tensor& o) {
    if (this != &o) {
      if (o.buf_) o.buf_->Ref();
      if (buf_) buf_->Unref();
      dtype_ = o.dtype_;
      shape_ = o.shape_;
      buf_ = o.buf_;
      data_ = o.data_;
    }
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      if (buf_) buf_->Unref();
      dtype_ = o.dtype_;
      shape_ = std::move(o.shape_);
      buf_ = o.buf_;
      data_ = o.data_;
      o.buf_ = nullptr;
      o.data_ = nullptr;
      o.dtype_ = GR_INVALID;
    }
    return *this;
  }
  ~Tensor() {
    if (buf_) buf_->Unref();
  }

  // Scalar helpers for tests and tools.
  template <typename T>
  static Tensor Scalar(DataType dtype, T v) {
    Tensor t(dtype, TensorShape());
    *t.data<T>() = v;
    return t;
  }
  static Tensor StringScalar(std::string_view s);

  bool IsInitialized() const { return dtype_ != GR_INVALID; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.rank(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  size_t TotalBytes() const;
  TensorBuffer* buffer() const { return buf_; }
  bool RefCountIsOne() const { return buf_ != nullptr && buf_->RefCountIsOne(); }
  bool SharesBufferWith(const Tensor& o) const { return buf_ != nullptr && buf_ == o.buf_; }

  void* raw_data() const { return data_; }
  template <typename T>
  T* data() const { return static_cast<T*>(data_); }
  template <typename T>
  T& scalar() const { return *static_cast<T*>(data_); }

  // Strings (dtype GR_STRING).
  std::string_view string_at(int64_t i) const {
    const GR_StringElem& e = static_cast<const GR_StringElem*>(data_)[i];
    return std::string_view(e.data, e.size);
  }
  void set_string(int64_t i, std::string_view s);

  // Zero-copy: same buffer, new shape of equal element count.
  Status Reshaped(const TensorShape& shape, Tensor* out) const;
  // Zero-copy rows [begin, end) of dim 0.
  Tensor Slice(int64_t begin, int64_t end) const;
  // Zero-copy: the `shape`-d run of elements starting `offset` elements in
  // (the caller keeps it inside this tensor).
  Tensor Range(int64_t offset, const TensorShape& shape) const;
  // Deep copy into a new host tensor (throws std::bad_alloc like the
  // constructors).
  Tensor DeepCopy() const;
  // Deep copy with memory from `a`; ResourceExhausted as Allocate.
  Status DeepCopy(Allocator* a, Tensor* out) const;

  // TensorProto conversion (tensor_content or typed *_val, as TF accepts).
  // Validates first (ValidateTensorProto); the tensor's memory comes from `a`.
  static Status FromProto(const proto::TensorProto& p, Tensor* out, Allocator* a = HostAllocator());
  void AsProtoTensorContent(proto::TensorProto* p) const;
  // "float [2,3] [1 2 3 ...]" with at most max_entries values.
  std::string DebugString(int64_t max_entries = 10) const;
  std::string SummarizeValue(int64_t max_entries) const;

 private:
  DataType dtype_ = GR_INVALID;
  TensorShape shape_;
  TensorBuffer* buf_ = nullptr;
  void* data_ = nullptr;
};

// What FromProto checks before it allocates, without allocating: a dtype
// graphrt supports (not a reference type), a shape within the size rule
// (graphrt/shape_limits.h), tensor_content of exactly the shape's bytes, no
// more typed values than elements. Graph import checks every tensor attr
// with it.
Status ValidateTensorProto(const proto::TensorProto& p);

// For showing a TensorProto: `*shape` gets its shape and `*prefix` its
// first min(elements, max_elements) elements in memory order, as a 1-D
// tensor. A proto with a large shape and one value (the last value repeats)
// is a few bytes that FromProto would turn into gigabytes; this allocates
// only the prefix. Fails as FromProto would on an invalid proto.
Status TensorProtoPrefix(const proto::TensorProto& p, int64_t max_elements, TensorShape* shape, Tensor* prefix);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_TENSOR_H_
