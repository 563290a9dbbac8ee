// graphrt plugin SDK: the familiar C++ style (REGISTER_OP, REGISTER_KERNEL,
// OpKernel) over the C ABI in graphrt/c_api.h. Header-only; a plugin built
// with any compiler and standard library links nothing of graphrt.
//
// Exactly one source file of a plugin says GRAPHRT_PLUGIN("name", "version").
//
// Everything here has hidden visibility: two plugins built against different
// SDK versions never bind to each other's inline functions or statics.
#ifndef GRAPHRT_SDK_SDK_H_
#define GRAPHRT_SDK_SDK_H_

#include <graphrt/c_api.h>
#include <graphrt/shape_limits.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#pragma GCC visibility push(hidden)

namespace graphrt {
namespace sdk {

using DataType = GR_DataType;
constexpr const char* DEVICE_CPU = "CPU";
constexpr const char* DEVICE_GPU = "GPU";

namespace detail {
// Defined by GRAPHRT_PLUGIN in the plugin's one entry-point file.
extern const GR_CoreApi* g_api;
}  // namespace detail

inline const GR_CoreApi& Api() { return *detail::g_api; }

// Whether the loaded core provides GR_CoreApi::`field` (fields appended by a
// minor ABI version are missing from an older core's table).
#define GRAPHRT_CORE_HAS(field)                                  \
  (offsetof(GR_CoreApi, field) + sizeof(GR_CoreApi::field) <= \
   ::graphrt::sdk::Api().struct_size)

// ----------------------------------------------------------------- Status

class Status {
 public:
  Status() = default;
  Status(int32_t code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  static Status OK() { return Status(); }
  bool ok() const { return code_ == GR_OK; }
  int32_t code() const { return code_; }
  const std::string& message() const { return msg_; }

 private:
  int32_t code_ = GR_OK;
  std::string msg_;
};

namespace errors {
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
#define GR_SDK_ERROR_FN(Name, CODE)                 \
  template <typename... Args>                       \
  Status Name(const Args&... args) {                \
    return Status(CODE, StrCat(args...));           \
  }
GR_SDK_ERROR_FN(InvalidArgument, GR_INVALID_ARGUMENT)
GR_SDK_ERROR_FN(NotFound, GR_NOT_FOUND)
GR_SDK_ERROR_FN(Internal, GR_INTERNAL)
GR_SDK_ERROR_FN(Unimplemented, GR_UNIMPLEMENTED)
GR_SDK_ERROR_FN(FailedPrecondition, GR_FAILED_PRECONDITION)
GR_SDK_ERROR_FN(OutOfRange, GR_OUT_OF_RANGE)
GR_SDK_ERROR_FN(ResourceExhausted, GR_RESOURCE_EXHAUSTED)
GR_SDK_ERROR_FN(Unavailable, GR_UNAVAILABLE)
#undef GR_SDK_ERROR_FN
}  // namespace errors

// ------------------------------------------------------------ sizes

// "[2,3]": dims as TensorFlow prints a shape. Appends piecewise: GCC 12
// warns (-Wrestrict, a false positive) on `"," + std::to_string(d)`.
inline std::string DimsString(const int64_t* dims, int rank) {
  std::string out = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) out += ',';
    out += std::to_string(dims[i]);
  }
  out += ']';
  return out;
}

// The element count of `dims` under graphrt's one size rule
// (graphrt/shape_limits.h): every dim >= 0 and the nonzero dims' product at
// most 2^58, so byte sizes and offsets derived from it cannot overflow.
// Kernels and shape functions call this (or MultiplyDims) instead of
// multiplying dims themselves.
inline Status NumElementsOf(const int64_t* dims, int rank, int64_t* num_elements) {
  if (gr_shape_num_elements(dims, rank, num_elements) == GR_OK) return Status();
  const std::string shape = DimsString(dims, rank);
  for (int i = 0; i < rank; ++i)
    if (dims[i] < 0) return errors::InvalidArgument("shape ", shape, " has a negative dimension");
  return errors::InvalidArgument("shape ", shape, " has more than 2^58 elements");
}
inline Status NumElementsOf(const std::vector<int64_t>& dims, int64_t* num_elements) {
  return NumElementsOf(dims.data(), static_cast<int>(dims.size()), num_elements);
}

// *out = a * b for dims (Tile's dim * multiple, a product of dims) under
// the same rule.
inline Status MultiplyDims(int64_t a, int64_t b, int64_t* out) {
  if (gr_mul_dims(a, b, out)) return Status();
  if (a < 0 || b < 0) return errors::InvalidArgument("negative dimension in ", a, " * ", b);
  return errors::InvalidArgument("dimension ", a, " * ", b, " exceeds 2^58 elements");
}

// ------------------------------------------------------------ data types

template <typename T>
struct DataTypeOf;
#define GR_SDK_DTYPE(T, V) \
  template <>              \
  struct DataTypeOf<T> {   \
    static constexpr DataType value = V; \
  };
GR_SDK_DTYPE(float, GR_FLOAT)
GR_SDK_DTYPE(double, GR_DOUBLE)
GR_SDK_DTYPE(int32_t, GR_INT32)
GR_SDK_DTYPE(int64_t, GR_INT64)
GR_SDK_DTYPE(uint8_t, GR_UINT8)
GR_SDK_DTYPE(int8_t, GR_INT8)
GR_SDK_DTYPE(int16_t, GR_INT16)
GR_SDK_DTYPE(uint16_t, GR_UINT16)
GR_SDK_DTYPE(uint32_t, GR_UINT32)
GR_SDK_DTYPE(uint64_t, GR_UINT64)
GR_SDK_DTYPE(bool, GR_BOOL)
GR_SDK_DTYPE(GR_StringElem, GR_STRING)
#undef GR_SDK_DTYPE

// TensorFlow's spelling of a dtype in messages ("float", "int32", "float_ref").
inline std::string DataTypeName(DataType t) {
  static const char* const kNames[] = {"invalid", "float",  "double",   "int32",   "uint8",   "int16",
                                       "int8",    "string", "complex64", "int64",  "bool",    "qint8",
                                       "quint8",  "qint32", "bfloat16", "qint16",  "quint16", "uint16",
                                       "complex128", "half", "resource", "variant", "uint32", "uint64"};
  constexpr int kCount = static_cast<int>(sizeof(kNames) / sizeof(kNames[0]));
  const int v = static_cast<int>(t);
  if (v >= 0 && v < kCount) return kNames[v];
  if (v > 100 && v - 100 < kCount) return std::string(kNames[v - 100]) + "_ref";
  return "dtype " + std::to_string(v);
}

// --------------------------------------------------------------- Tensors

// A view of a core-owned tensor: dtype, dims and data pointer, no ownership.
class TensorView {
 public:
  TensorView() { std::memset(&v_, 0, sizeof(v_)); v_.struct_size = sizeof(v_); }
  GR_TensorView* raw() { return &v_; }
  const GR_TensorView* raw() const { return &v_; }

  DataType dtype() const { return static_cast<DataType>(v_.dtype); }
  int rank() const { return v_.rank; }
  int64_t dim(int i) const { return v_.dims[i]; }
  const int64_t* dims_data() const { return v_.dims; }
  std::vector<int64_t> dims() const { return std::vector<int64_t>(v_.dims, v_.dims + v_.rank); }
  int64_t NumElements() const { return v_.num_elements; }
  uint64_t ByteSize() const { return v_.byte_size; }
  bool IsScalar() const { return v_.rank == 0; }
  void* raw_data() const { return v_.data; }

  template <typename T>
  T* data() const { return static_cast<T*>(v_.data); }
  template <typename T>
  const T& scalar() const { return *static_cast<const T*>(v_.data); }

  std::string ShapeString() const { return DimsString(v_.dims, v_.rank); }

 private:
  GR_TensorView v_;
};

// An owning reference to a core tensor (e.g. a Const kernel's value).
class Tensor {
 public:
  Tensor() = default;
  Tensor(DataType dtype, const std::vector<int64_t>& dims)
      : t_(Api().tensor_new(dtype, static_cast<int32_t>(dims.size()), dims.data())) {}
  explicit Tensor(GR_Tensor* adopt) : t_(adopt) {}
  Tensor(const Tensor& o) : t_(o.t_) { if (t_) Api().tensor_retain(t_); }
  Tensor(Tensor&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  Tensor& operator=(Tensor o) { std::swap(t_, o.t_); return *this; }
  ~Tensor() { if (t_) Api().tensor_release(t_); }

  bool valid() const { return t_ != nullptr; }
  GR_Tensor* raw() const { return t_; }
  TensorView view() const {
    TensorView v;
    Api().tensor_view(t_, v.raw());
    return v;
  }

 private:
  GR_Tensor* t_ = nullptr;
};

// An owning reference to a variable in the session's resource manager
// (ABI 1.2). Read or write its value only under a VariableLock.
class Variable {
 public:
  Variable() = default;
  // Takes a new reference to `v` (a borrowed pointer, e.g. a ref input).
  static Variable Borrow(GR_Variable* v) {
    if (v) Api().variable_retain(v);
    return Variable(v);
  }
  explicit Variable(GR_Variable* adopt) : v_(adopt) {}
  Variable(const Variable& o) : v_(o.v_) { if (v_) Api().variable_retain(v_); }
  Variable(Variable&& o) noexcept : v_(o.v_) { o.v_ = nullptr; }
  Variable& operator=(Variable o) { std::swap(v_, o.v_); return *this; }
  ~Variable() { if (v_) Api().variable_release(v_); }

  bool valid() const { return v_ != nullptr; }
  GR_Variable* raw() const { return v_; }
  const char* name() const { return Api().variable_name(v_); }
  DataType dtype() const { return static_cast<DataType>(Api().variable_dtype(v_)); }
  // With the lock held: whether the variable has a value, and a view of it.
  bool View(TensorView* view) const { return Api().variable_view(v_, view->raw()) != 0; }
  // With the lock held: the value (sharing its buffer), or an invalid Tensor.
  Tensor Value() const { return Tensor(Api().variable_value(v_)); }

 private:
  GR_Variable* v_ = nullptr;
};

// Holds a variable's lock for a scope: exclusive to write, shared to read.
// `enabled` false (an op's use_locking=false read path) holds nothing.
class VariableLock {
 public:
  VariableLock(GR_Variable* v, bool exclusive, bool enabled = true)
      : v_(enabled ? v : nullptr), exclusive_(exclusive) {
    if (v_) Api().variable_lock(v_, exclusive_ ? 1 : 0);
  }
  VariableLock(const VariableLock&) = delete;
  VariableLock& operator=(const VariableLock&) = delete;
  ~VariableLock() { if (v_) Api().variable_unlock(v_, exclusive_ ? 1 : 0); }

 private:
  GR_Variable* v_;
  bool exclusive_;
};

// Dims of a possibly partially known shape: rank -1 = unknown rank, dim -1 = unknown.
struct PartialShape {
  int32_t rank = -1;
  std::vector<int64_t> dims;
  static PartialShape Unknown() { return PartialShape(); }
  static PartialShape Known(std::vector<int64_t> d) {
    PartialShape s;
    s.rank = static_cast<int32_t>(d.size());
    s.dims = std::move(d);
    return s;
  }
  bool known_rank() const { return rank >= 0; }
  bool fully_defined() const {
    if (rank < 0) return false;
    for (int64_t d : dims) if (d < 0) return false;
    return true;
  }
};

// ------------------------------------------------------------------ attrs

// Attr reading shared by kernel construction and shape inference.
class AttrReader {
 public:
  explicit AttrReader(const GR_Attrs* a) : a_(a) {}

  Status Get(const char* name, int64_t* v) const { return Wrap(name, Api().attr_int(a_, name, v)); }
  Status Get(const char* name, int32_t* v) const {
    int64_t x = 0;
    Status s = Get(name, &x);
    *v = static_cast<int32_t>(x);
    return s;
  }
  Status Get(const char* name, float* v) const { return Wrap(name, Api().attr_float(a_, name, v)); }
  Status Get(const char* name, bool* v) const {
    int32_t b = 0;
    Status s = Wrap(name, Api().attr_bool(a_, name, &b));
    *v = b != 0;
    return s;
  }
  Status Get(const char* name, DataType* v) const {
    int32_t t = 0;
    Status s = Wrap(name, Api().attr_type(a_, name, &t));
    *v = static_cast<DataType>(t);
    return s;
  }
  Status Get(const char* name, std::string* v) const {
    const char* d = nullptr;
    uint64_t n = 0;
    Status s = Wrap(name, Api().attr_string(a_, name, &d, &n));
    if (s.ok()) v->assign(d, n);
    return s;
  }
  Status Get(const char* name, std::vector<int64_t>* v) const {
    const int64_t* p = nullptr;
    int32_t n = 0;
    Status s = Wrap(name, Api().attr_int_list(a_, name, &p, &n));
    if (s.ok()) v->assign(p, p + n);
    return s;
  }
  Status Get(const char* name, std::vector<int32_t>* v) const {
    std::vector<int64_t> w;
    Status s = Get(name, &w);
    v->assign(w.begin(), w.end());
    return s;
  }
  Status Get(const char* name, std::vector<float>* v) const {
    const float* p = nullptr;
    int32_t n = 0;
    Status s = Wrap(name, Api().attr_float_list(a_, name, &p, &n));
    if (s.ok()) v->assign(p, p + n);
    return s;
  }
  Status Get(const char* name, std::vector<DataType>* v) const {
    const int32_t* p = nullptr;
    int32_t n = 0;
    Status s = Wrap(name, Api().attr_type_list(a_, name, &p, &n));
    if (s.ok()) {
      v->clear();
      for (int32_t i = 0; i < n; ++i) v->push_back(static_cast<DataType>(p[i]));
    }
    return s;
  }
  Status Get(const char* name, std::vector<std::string>* v) const {
    int32_t n = 0;
    Status s = Wrap(name, Api().attr_list_size(a_, name, &n));
    if (!s.ok()) return s;
    v->clear();
    for (int32_t i = 0; i < n; ++i) {
      const char* d = nullptr;
      uint64_t len = 0;
      s = Wrap(name, Api().attr_string_list_item(a_, name, i, &d, &len));
      if (!s.ok()) return s;
      v->emplace_back(d, len);
    }
    return s;
  }
  Status Get(const char* name, PartialShape* v) const {
    int64_t dims[64];
    int32_t rank = 0;
    Status s = Wrap(name, Api().attr_shape(a_, name, &rank, dims, 64));
    if (!s.ok()) return s;
    if (rank > 64) return errors::InvalidArgument("attr '", name, "' has rank ", rank, " > 64");
    v->rank = rank;
    v->dims.assign(dims, dims + (rank > 0 ? rank : 0));
    return s;
  }
  // A list(shape) attr (ABI 1.2; Unimplemented on an older core).
  Status Get(const char* name, std::vector<PartialShape>* v) const {
    if (!GRAPHRT_CORE_HAS(attr_shape_list_item))
      return errors::Unimplemented("attr '", name, "': list(shape) attrs need a graphrt core of ABI 1.2");
    int32_t n = 0;
    Status s = Wrap(name, Api().attr_list_size(a_, name, &n));
    if (!s.ok()) return s;
    v->clear();
    for (int32_t i = 0; i < n; ++i) {
      int64_t dims[64];
      int32_t rank = 0;
      s = Wrap(name, Api().attr_shape_list_item(a_, name, i, &rank, dims, 64));
      if (!s.ok()) return s;
      if (rank > 64) return errors::InvalidArgument("attr '", name, "' item ", i, " has rank ", rank, " > 64");
      PartialShape p;
      p.rank = rank;
      p.dims.assign(dims, dims + (rank > 0 ? rank : 0));
      v->push_back(std::move(p));
    }
    return s;
  }
  Status Get(const char* name, Tensor* v) const {
    GR_Tensor* t = nullptr;
    int32_t code = Api().attr_tensor(a_, name, &t, nullptr);
    if (code != GR_OK) return Wrap(name, code);
    *v = Tensor(t);
    return Status();
  }
  bool Has(const char* name) const {
    int32_t n;
    int64_t i;
    return Api().attr_list_size(a_, name, &n) != GR_NOT_FOUND ||
           Api().attr_int(a_, name, &i) != GR_NOT_FOUND;
  }

 private:
  static Status Wrap(const char* name, int32_t code) {
    if (code == GR_OK) return Status();
    if (code == GR_NOT_FOUND) return errors::NotFound("no attr named '", name, "'");
    return Status(code, errors::StrCat("attr '", name, "' has the wrong kind or value"));
  }
  const GR_Attrs* a_;
};

// ------------------------------------------------------- shape inference

class InferenceContext {
 public:
  explicit InferenceContext(GR_ShapeContext* sc) : sc_(sc) {}
  int num_inputs() const { return Api().sc_num_inputs(sc_); }
  int num_outputs() const { return Api().sc_num_outputs(sc_); }
  PartialShape input(int i) const {
    PartialShape s;
    s.rank = Api().sc_input_rank(sc_, i);
    if (s.rank > 0) {
      s.dims.resize(s.rank);
      Api().sc_input_dims(sc_, i, s.dims.data(), s.rank);
    }
    return s;
  }
  // True and a view when input i is a known constant.
  bool input_tensor(int i, TensorView* v) const { return Api().sc_input_tensor(sc_, i, v->raw()) != 0; }
  void set_output(int i, const PartialShape& s) {
    Api().sc_set_output(sc_, i, s.rank, s.dims.data());
  }
  template <typename T>
  Status GetAttr(const char* name, T* v) const { return AttrReader(Api().sc_attrs(sc_)).Get(name, v); }
  const char* node_name() const { return Api().sc_node_name(sc_); }
  // The graph's GraphDef producer version; -1 from a core older than ABI 1.2.
  int graph_def_version() const {
    return GRAPHRT_CORE_HAS(sc_graph_def_version) ? Api().sc_graph_def_version(sc_) : -1;
  }

 private:
  GR_ShapeContext* sc_;
};

using ShapeFn = std::function<Status(InferenceContext*)>;

// --------------------------------------------------------------- kernels

class OpKernelConstruction {
 public:
  explicit OpKernelConstruction(GR_KernelConstruction* kc) : kc_(kc) {}
  template <typename T>
  Status GetAttr(const char* name, T* v) const { return AttrReader(Api().kc_attrs(kc_)).Get(name, v); }
  bool HasAttr(const char* name) const { return AttrReader(Api().kc_attrs(kc_)).Has(name); }
  const char* name() const { return Api().kc_node_name(kc_); }
  const char* op() const { return Api().kc_op_name(kc_); }
  int num_inputs() const { return Api().kc_num_inputs(kc_); }
  int num_outputs() const { return Api().kc_num_outputs(kc_); }
  DataType input_type(int i) const { return static_cast<DataType>(Api().kc_input_type(kc_, i)); }
  DataType output_type(int i) const { return static_cast<DataType>(Api().kc_output_type(kc_, i)); }
  void* device() const { return Api().kc_device(kc_); }
  void SetStatus(const Status& s) {
    if (!s.ok()) { ok_ = false; Api().kc_set_error(kc_, s.code(), s.message().c_str()); }
  }
  void CtxFailure(const Status& s) { SetStatus(s); }
  bool ok() const { return ok_; }

 private:
  GR_KernelConstruction* kc_;
  bool ok_ = true;
};

class OpKernelContext {
 public:
  explicit OpKernelContext(GR_KernelContext* ctx) : ctx_(ctx) {}
  GR_KernelContext* raw() const { return ctx_; }

  int num_inputs() const { return Api().ctx_num_inputs(ctx_); }
  int num_outputs() const { return Api().ctx_num_outputs(ctx_); }
  TensorView input(int i) const {
    TensorView v;
    Api().ctx_input(ctx_, i, v.raw());
    return v;
  }
  Status allocate_output(int i, const int64_t* dims, int rank, TensorView* out) {
    return Check(Api().ctx_allocate_output(ctx_, i, rank, dims, out->raw()));
  }
  Status allocate_output(int i, const std::vector<int64_t>& dims, TensorView* out) {
    return allocate_output(i, dims.data(), static_cast<int>(dims.size()), out);
  }
  Status forward_input_or_allocate_output(int in, int out_index, const int64_t* dims, int rank,
                                          TensorView* out, bool* forwarded = nullptr) {
    int32_t fwd = 0;
    Status s = Check(Api().ctx_forward_input_or_allocate_output(ctx_, in, out_index, rank, dims,
                                                                out->raw(), &fwd));
    if (forwarded) *forwarded = fwd != 0;
    return s;
  }
  // Output `out_index` of `dims` in place of the first of `candidates`
  // whose buffer can be reused (as above), else newly allocated.
  // *forwarded_from: that input, or -1. A core older than ABI 1.1 is only
  // asked for the first candidate.
  Status forward_input_or_allocate_output(const int* candidates, int count, int out_index,
                                          const int64_t* dims, int rank, TensorView* out,
                                          int* forwarded_from = nullptr) {
    if (forwarded_from) *forwarded_from = -1;
    if (!GRAPHRT_CORE_HAS(ctx_forward_input)) {
      bool fwd = false;
      Status s = forward_input_or_allocate_output(count > 0 ? candidates[0] : -1, out_index, dims, rank, out, &fwd);
      if (fwd && forwarded_from) *forwarded_from = candidates[0];
      return s;
    }
    for (int i = 0; i < count; ++i) {
      if (Api().ctx_forward_input(ctx_, candidates[i], out_index, rank, dims, out->raw())) {
        if (forwarded_from) *forwarded_from = candidates[i];
        return Status();
      }
    }
    return allocate_output(out_index, dims, rank, out);
  }
  Status forward_input_or_allocate_output(std::initializer_list<int> candidates, int out_index,
                                          const int64_t* dims, int rank, TensorView* out,
                                          int* forwarded_from = nullptr) {
    return forward_input_or_allocate_output(candidates.begin(), static_cast<int>(candidates.size()), out_index,
                                            dims, rank, out, forwarded_from);
  }
  // Zero-copy: output shares the input's buffer (optionally reshaped).
  Status set_output_from_input(int out, int in) { return Check(Api().ctx_set_output_from_input(ctx_, out, in, -1, nullptr)); }
  Status set_output_from_input(int out, int in, const std::vector<int64_t>& dims) {
    return Check(Api().ctx_set_output_from_input(ctx_, out, in, static_cast<int32_t>(dims.size()), dims.data()));
  }
  // Zero-copy: output `out` is the `dims`-shaped run of input `in`'s
  // elements that starts `offset` elements in. False when the core cannot
  // share it (an unaligned start, a reference input, a core older than ABI
  // 1.1): the kernel copies instead, unless !ok() (a run outside the input).
  bool set_output_from_input_range(int out, int in, int64_t offset, const int64_t* dims, int rank) {
    if (!GRAPHRT_CORE_HAS(ctx_set_output_from_input_range)) return false;
    const int32_t code = Api().ctx_set_output_from_input_range(ctx_, out, in, offset, rank, dims);
    if (code != GR_OK && code != GR_UNAVAILABLE) ok_ = false;
    return code == GR_OK;
  }
  Status set_output(int out, const Tensor& t) { return Check(Api().ctx_set_output_tensor(ctx_, out, t.raw())); }

  // ---- State (ABI 1.2; each returns Unimplemented on an older core).
  // Input `i` as a tensor reference sharing its buffer (not for ref inputs).
  Tensor input_tensor(int i) {
    if (!HasState()) return Tensor();
    return Tensor(Api().ctx_input_tensor(ctx_, i));
  }
  // The variable behind ref input `i` (borrowed for this call).
  GR_Variable* input_ref(int i) {
    if (!HasState()) return nullptr;
    GR_Variable* v = Api().ctx_input_ref(ctx_, i);
    if (v == nullptr) ok_ = false;
    return v;
  }
  Status set_output_ref(int i, GR_Variable* v) {
    if (!HasState()) return StateMissing();
    return Check(Api().ctx_set_output_ref(ctx_, i, v));
  }
  // Looks up container/name (empty container: the session's default),
  // creating it uninitialized with `dtype` when `create` and absent.
  Status LookupVariable(const std::string& container, const std::string& name, DataType dtype, bool create,
                        Variable* out) {
    if (!HasState()) return StateMissing();
    GR_Variable* v = nullptr;
    const int32_t code = Api().ctx_lookup_variable(ctx_, container.c_str(), name.c_str(), dtype, create ? 1 : 0, &v);
    // NOT_FOUND is the kernel's to word or ignore: the core recorded nothing.
    if (code == GR_NOT_FOUND) return Status(GR_NOT_FOUND, "variable " + name + " does not exist");
    Status s = Check(code);
    if (s.ok()) *out = Variable(v);
    return s;
  }
  // With the exclusive lock held: the variable's value becomes `value`.
  Status AssignVariable(GR_Variable* v, const Tensor& value) {
    if (!HasState()) return StateMissing();
    return Check(Api().ctx_variable_assign(ctx_, v, value.raw()));
  }
  // With the exclusive lock held: the value, writable in place.
  Status PrepareVariableUpdate(GR_Variable* v, TensorView* view) {
    if (!HasState()) return StateMissing();
    return Check(Api().ctx_variable_prepare_update(ctx_, v, view->raw()));
  }
  // With the exclusive lock held: a fresh uninitialized value of `dims`.
  Status AllocateVariable(GR_Variable* v, const std::vector<int64_t>& dims, TensorView* view) {
    if (!HasState()) return StateMissing();
    return Check(Api().ctx_variable_allocate(ctx_, v, static_cast<int32_t>(dims.size()), dims.data(),
                                             view ? view->raw() : nullptr));
  }
  Status set_output_resource_handle(int i, const std::string& container, const std::string& name,
                                    const char* type_name) {
    if (!HasState()) return StateMissing();
    return Check(Api().ctx_set_output_resource_handle(ctx_, i, container.c_str(), name.c_str(), type_name));
  }
  // The container of this step's per-step resources.
  const char* step_container() const { return HasState() ? Api().ctx_step_container(ctx_) : ""; }
  Status DeleteResource(const std::string& container, const std::string& name, const char* type_name) {
    if (!HasState()) return StateMissing();
    const int32_t code = Api().ctx_delete_resource(ctx_, container.c_str(), name.c_str(), type_name);
    if (code == GR_NOT_FOUND) return Status(GR_NOT_FOUND, "resource " + name + " does not exist");
    return Check(code);
  }

  void SetStatus(const Status& s) {
    if (!s.ok()) { ok_ = false; Api().ctx_set_error(ctx_, s.code(), s.message().c_str()); }
  }
  void CtxFailure(const Status& s) { SetStatus(s); }
  bool ok() const { return ok_; }
  const char* node_name() const { return Api().ctx_node_name(ctx_); }
  void* device() const { return Api().ctx_device(ctx_); }
  void* stream() const { return Api().ctx_stream(ctx_); }
  int64_t step_id() const { return Api().ctx_step_id(ctx_); }
  int num_threads() const { return Api().ctx_num_threads(ctx_); }

  // Cancellation (ABI 1.3; an older core never cancels). A kernel that waits
  // for something asks to be told when the step is cancelled: OnCancel is
  // false (and fn is not kept) when it is cancelled already; RemoveOnCancel
  // is false when fn has run.
  bool cancelled() const { return GRAPHRT_CORE_HAS(ctx_cancelled) && Api().ctx_cancelled(ctx_) != 0; }
  bool OnCancel(void (*fn)(void*), void* arg, int64_t* token) {
    *token = -1;
    if (!GRAPHRT_CORE_HAS(ctx_on_cancel)) return true;
    return Api().ctx_on_cancel(ctx_, fn, arg, token) == GR_OK;
  }
  bool RemoveOnCancel(int64_t token) {
    return token < 0 || !GRAPHRT_CORE_HAS(ctx_remove_on_cancel) || Api().ctx_remove_on_cancel(ctx_, token) != 0;
  }

  // Runs fn(begin, end) over [0, total) on the session's pool and waits.
  // fn may be an lvalue or an rvalue; it is called from several threads.
  template <typename Fn>
  void parallel_for(int64_t total, int64_t cost_per_unit, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    Api().ctx_parallel_for(
        ctx_, total, cost_per_unit,
        [](void* arg, int64_t b, int64_t e) { (*static_cast<F*>(arg))(b, e); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  Status Check(int32_t code) {
    // The core has already recorded the error with its message.
    if (code != GR_OK) ok_ = false;
    return code == GR_OK ? Status() : Status(code, "see step status");
  }
  static bool HasState() { return GRAPHRT_CORE_HAS(ctx_delete_resource); }
  static Status StateMissing() {
    return Status(GR_UNIMPLEMENTED, "this kernel needs variables and resources (graphrt ABI 1.2); the core is older");
  }
  GR_KernelContext* ctx_;
  bool ok_ = true;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction*) {}
  virtual ~OpKernel() = default;
  virtual void Compute(OpKernelContext* ctx) = 0;
};

// A kernel that completes later (ABI 1.3): ComputeAsync starts the work and
// returns; `done` is called exactly once, from any thread, when the outputs
// are set or the error recorded, and ctx must not be used after it. A
// ComputeAsync that throws must not have called done (the SDK records the
// error and calls it).
class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;
  // The core never calls it: an asynchronous kernel registers compute_async only.
  void Compute(OpKernelContext*) final {}
};

#define OP_REQUIRES(CTX, COND, STATUS) \
  do {                                 \
    if (!(COND)) {                     \
      (CTX)->CtxFailure(STATUS);       \
      return;                          \
    }                                  \
  } while (0)

#define OP_REQUIRES_OK(CTX, EXPR)                    \
  do {                                               \
    ::graphrt::sdk::Status _gr_s = (EXPR);           \
    if (!_gr_s.ok()) {                               \
      (CTX)->CtxFailure(_gr_s);                      \
      return;                                        \
    }                                                \
  } while (0)

#define GR_RETURN_IF_ERROR_SDK(EXPR)                 \
  do {                                               \
    ::graphrt::sdk::Status _gr_s = (EXPR);           \
    if (!_gr_s.ok()) return _gr_s;                   \
  } while (0)

// ---------------------------------------------------------- registration

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name) : name_(std::move(name)) {}
  OpDefBuilder& Input(std::string s) { inputs_.push_back(std::move(s)); return *this; }
  OpDefBuilder& Output(std::string s) { outputs_.push_back(std::move(s)); return *this; }
  OpDefBuilder& Attr(std::string s) { attrs_.push_back(std::move(s)); return *this; }
  OpDefBuilder& SetIsStateful() { flags_ |= GR_OP_STATEFUL; return *this; }
  OpDefBuilder& SetIsCommutative() { flags_ |= GR_OP_COMMUTATIVE; return *this; }
  OpDefBuilder& SetIsAggregate() { flags_ |= GR_OP_AGGREGATE; return *this; }
  OpDefBuilder& SetAllowsUninitializedInput() { flags_ |= GR_OP_ALLOWS_UNINITIALIZED_INPUT; return *this; }
  OpDefBuilder& Doc(std::string s) { summary_ = std::move(s); return *this; }
  OpDefBuilder& SetShapeFn(ShapeFn fn) { shape_fn_ = std::move(fn); return *this; }

  // Fills `spec`; pointers stay valid as long as this builder (plugin lifetime).
  void ToSpec(GR_OpSpec* spec) {
    in_ptrs_ = Ptrs(inputs_);
    out_ptrs_ = Ptrs(outputs_);
    attr_ptrs_ = Ptrs(attrs_);
    std::memset(spec, 0, sizeof(*spec));
    spec->struct_size = sizeof(*spec);
    spec->name = name_.c_str();
    spec->inputs = in_ptrs_.data();
    spec->num_inputs = static_cast<int32_t>(in_ptrs_.size());
    spec->outputs = out_ptrs_.data();
    spec->num_outputs = static_cast<int32_t>(out_ptrs_.size());
    spec->attrs = attr_ptrs_.data();
    spec->num_attrs = static_cast<int32_t>(attr_ptrs_.size());
    spec->flags = flags_;
    spec->summary = summary_.c_str();
    if (shape_fn_) {
      spec->shape_fn = &OpDefBuilder::ShapeTrampoline;
      spec->shape_fn_user_data = this;
    }
  }

 private:
  static std::vector<const char*> Ptrs(const std::vector<std::string>& v) {
    std::vector<const char*> p;
    for (const auto& s : v) p.push_back(s.c_str());
    return p;
  }
  static int32_t ShapeTrampoline(GR_ShapeContext* sc, void* self) {
    InferenceContext c(sc);
    try {
      Status s = static_cast<OpDefBuilder*>(self)->shape_fn_(&c);
      if (!s.ok()) Api().sc_set_error(sc, s.code(), s.message().c_str());
      return s.code();
    } catch (const std::exception& e) {
      Api().sc_set_error(sc, GR_INTERNAL, e.what());
    } catch (...) {
      Api().sc_set_error(sc, GR_INTERNAL, "unknown exception in shape function");
    }
    return GR_INTERNAL;
  }

  std::string name_;
  std::vector<std::string> inputs_, outputs_, attrs_;
  std::vector<const char*> in_ptrs_, out_ptrs_, attr_ptrs_;
  uint32_t flags_ = 0;
  std::string summary_;
  ShapeFn shape_fn_;
};

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) : op_(std::move(op)) {}
  KernelDefBuilder& Device(const char* d) { device_ = d; return *this; }
  template <typename T>
  KernelDefBuilder& TypeConstraint(const char* attr) { return TypeConstraint(attr, {DataTypeOf<T>::value}); }
  KernelDefBuilder& TypeConstraint(const char* attr, std::initializer_list<DataType> types) {
    constraints_.push_back({attr, std::vector<int32_t>(types.begin(), types.end())});
    return *this;
  }
  KernelDefBuilder& TypeConstraint(const char* attr, const std::vector<DataType>& types) {
    constraints_.push_back({attr, std::vector<int32_t>(types.begin(), types.end())});
    return *this;
  }
  KernelDefBuilder& HostMemory(std::string arg) { host_memory_.push_back(std::move(arg)); return *this; }
  KernelDefBuilder& Label(std::string l) { label_ = std::move(l); return *this; }
  KernelDefBuilder& Priority(int32_t p) { priority_ = p; return *this; }
  // Hint: the kernel is so cheap that dispatching it to a pool costs more.
  KernelDefBuilder& Inexpensive() { flags_ |= GR_KERNEL_INEXPENSIVE; return *this; }

  using Factory = OpKernel* (*)(OpKernelConstruction*);
  void SetFactory(Factory f, bool async) {
    factory_ = f;
    async_ = async;
  }
  bool async() const { return async_; }

  void ToSpec(GR_KernelSpec* spec) {
    c_constraints_.clear();
    for (const auto& c : constraints_) {
      GR_TypeConstraint tc;
      tc.struct_size = sizeof(tc);
      tc.attr_name = c.first.c_str();
      tc.allowed = c.second.data();
      tc.num_allowed = static_cast<int32_t>(c.second.size());
      c_constraints_.push_back(tc);
    }
    host_ptrs_.clear();
    for (const auto& h : host_memory_) host_ptrs_.push_back(h.c_str());
    std::memset(spec, 0, sizeof(*spec));
    spec->struct_size = sizeof(*spec);
    spec->op_name = op_.c_str();
    spec->device_type = device_.c_str();
    spec->constraints = c_constraints_.data();
    spec->num_constraints = static_cast<int32_t>(c_constraints_.size());
    spec->host_memory_args = host_ptrs_.data();
    spec->num_host_memory_args = static_cast<int32_t>(host_ptrs_.size());
    spec->label = label_.empty() ? nullptr : label_.c_str();
    spec->priority = priority_;
    spec->flags = flags_;
    spec->user_data = this;
    spec->create = &KernelDefBuilder::CreateTrampoline;
    if (async_) spec->compute_async = &KernelDefBuilder::ComputeAsyncTrampoline;
    else spec->compute = &KernelDefBuilder::ComputeTrampoline;
    spec->destroy = &KernelDefBuilder::DestroyTrampoline;
  }

 private:
  static void* CreateTrampoline(GR_KernelConstruction* kc, void* self) {
    OpKernelConstruction c(kc);
    try {
      OpKernel* k = static_cast<KernelDefBuilder*>(self)->factory_(&c);
      if (!c.ok()) {
        delete k;
        return nullptr;
      }
      return k;
    } catch (const std::exception& e) {
      Api().kc_set_error(kc, GR_INTERNAL, errors::StrCat("exception in kernel constructor: ", e.what()).c_str());
    } catch (...) {
      Api().kc_set_error(kc, GR_INTERNAL, "unknown exception in kernel constructor");
    }
    return nullptr;
  }
  static void ComputeTrampoline(void* kernel, GR_KernelContext* ctx) {
    OpKernelContext c(ctx);
    try {
      static_cast<OpKernel*>(kernel)->Compute(&c);
    } catch (const std::exception& e) {
      Api().ctx_set_error(ctx, GR_INTERNAL, errors::StrCat("exception in kernel: ", e.what()).c_str());
    } catch (...) {
      Api().ctx_set_error(ctx, GR_INTERNAL, "unknown exception in kernel");
    }
  }
  static void ComputeAsyncTrampoline(void* kernel, GR_KernelContext* ctx) {
    // The wrapper lives until done: the kernel may use it from another thread.
    auto* c = new OpKernelContext(ctx);
    auto done = [c, ctx] {
      delete c;
      Api().ctx_async_done(ctx);
    };
    try {
      static_cast<AsyncOpKernel*>(kernel)->ComputeAsync(c, done);
      return;
    } catch (const std::exception& e) {
      Api().ctx_set_error(ctx, GR_INTERNAL, errors::StrCat("exception in kernel: ", e.what()).c_str());
    } catch (...) {
      Api().ctx_set_error(ctx, GR_INTERNAL, "unknown exception in kernel");
    }
    done();
  }
  static void DestroyTrampoline(void* kernel) { delete static_cast<OpKernel*>(kernel); }

  std::string op_, device_ = DEVICE_CPU;
  std::vector<std::pair<std::string, std::vector<int32_t>>> constraints_;
  std::vector<GR_TypeConstraint> c_constraints_;
  std::vector<std::string> host_memory_;
  std::vector<const char*> host_ptrs_;
  std::string label_;
  int32_t priority_ = 0;
  uint32_t flags_ = 0;
  Factory factory_ = nullptr;
  bool async_ = false;
};

inline KernelDefBuilder Name(const char* op) { return KernelDefBuilder(op); }

namespace detail {

struct PluginRegistry {
  std::deque<OpDefBuilder> ops;
  std::deque<KernelDefBuilder> kernels;
  std::vector<const GR_DeviceSpec*> devices;
  // Registrations of other SDK headers (graph_pass.h), run after the above.
  std::vector<int32_t (*)(GR_PluginInitArgs*)> init_hooks;
};
// Defined by GRAPHRT_PLUGIN (one per plugin, hidden).
PluginRegistry& GetPluginRegistry();

inline OpDefBuilder& AddOp(const char* name) {
  return GetPluginRegistry().ops.emplace_back(name);
}

template <typename Kernel>
OpKernel* MakeKernel(OpKernelConstruction* c) { return new Kernel(c); }

template <typename Kernel>
bool AddKernel(KernelDefBuilder b) {
  b.SetFactory(&MakeKernel<Kernel>, std::is_base_of_v<AsyncOpKernel, Kernel>);
  GetPluginRegistry().kernels.push_back(std::move(b));
  return true;
}

inline bool AddDevice(const GR_DeviceSpec* spec) {
  GetPluginRegistry().devices.push_back(spec);
  return true;
}

inline int32_t PluginInit(GR_PluginInitArgs* args, const char* name, const char* version) {
  args->plugin_abi_major = GR_ABI_MAJOR;
  args->plugin_abi_minor = GR_ABI_MINOR;
  args->plugin_name = name;
  args->plugin_version = version;
  if (args->core_abi_major != GR_ABI_MAJOR) return GR_FAILED_PRECONDITION;
  g_api = args->api;
  PluginRegistry& r = GetPluginRegistry();
  for (OpDefBuilder& b : r.ops) {
    GR_OpSpec spec;
    b.ToSpec(&spec);
    int32_t code = g_api->register_op(args->registrar, &spec);
    if (code != GR_OK) return code;
  }
  for (KernelDefBuilder& b : r.kernels) {
    if (b.async() && !GRAPHRT_CORE_HAS(ctx_async_done)) {
      g_api->registrar_set_error(args->registrar, GR_FAILED_PRECONDITION,
                                 "the plugin has asynchronous kernels, which need graphrt ABI 1.3; the core is older");
      return GR_FAILED_PRECONDITION;
    }
    GR_KernelSpec spec;
    b.ToSpec(&spec);
    int32_t code = g_api->register_kernel(args->registrar, &spec);
    if (code != GR_OK) return code;
  }
  for (const GR_DeviceSpec* d : r.devices) {
    int32_t code = g_api->register_device(args->registrar, d);
    if (code != GR_OK) return code;
  }
  for (auto hook : r.init_hooks) {
    int32_t code = hook(args);
    if (code != GR_OK) return code;
  }
  return GR_OK;
}

}  // namespace detail

}  // namespace sdk
}  // namespace graphrt

#define GR_SDK_CONCAT_INNER(a, b) a##b
#define GR_SDK_CONCAT(a, b) GR_SDK_CONCAT_INNER(a, b)
#define GR_SDK_UNIQUE(prefix) GR_SDK_CONCAT(prefix, __COUNTER__)

#define REGISTER_OP(name)                                                   \
  [[maybe_unused]] static ::graphrt::sdk::OpDefBuilder& GR_SDK_UNIQUE(gr_op_) = \
      ::graphrt::sdk::detail::AddOp(name)

// REGISTER_KERNEL(Name("Op").Device(DEVICE_CPU).TypeConstraint<float>("T"), KernelClass)
#define REGISTER_KERNEL(builder, ...)                                  \
  [[maybe_unused]] static const bool GR_SDK_UNIQUE(gr_kernel_) =       \
      ::graphrt::sdk::detail::AddKernel<__VA_ARGS__>(builder)

// REGISTER_DEVICE_BACKEND(&kMySpec) with a GR_DeviceSpec of static storage.
#define REGISTER_DEVICE_BACKEND(spec_ptr)                         \
  [[maybe_unused]] static const bool GR_SDK_UNIQUE(gr_device_) = \
      ::graphrt::sdk::detail::AddDevice(spec_ptr)

// Exactly once per plugin: defines the plugin's registry and its entry point.
#define GRAPHRT_PLUGIN(name, version)                                                 \
  namespace graphrt {                                                                 \
  namespace sdk {                                                                     \
  namespace detail {                                                                  \
  const GR_CoreApi* g_api = nullptr;                                                  \
  PluginRegistry& GetPluginRegistry() {                                               \
    static PluginRegistry registry;                                                   \
    return registry;                                                                  \
  }                                                                                   \
  }                                                                                   \
  }                                                                                   \
  }                                                                                   \
  extern "C" __attribute__((visibility("default"))) int32_t graphrt_plugin_init(      \
      GR_PluginInitArgs* args) {                                                      \
    return ::graphrt::sdk::detail::PluginInit(args, name, version);                   \
  }

#pragma GCC visibility pop

#endif  // GRAPHRT_SDK_SDK_H_
