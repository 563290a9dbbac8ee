// graphrt._graphrt: the native half of the Python module. It holds sessions,
// converts feeds (to the fed tensor's dtype, as TensorFlow 1's session does
// with np.asarray) and results (numpy arrays over the result's buffer when
// nothing else holds it), runs with the GIL released, and raises
// graphrt.errors classes for failed Statuses. Fetch structures, the default
// graph and the TF1 names live in the pure-Python files beside it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graphrt/client/event_writer.h"
#include "graphrt/client/meta_graph.h"
#include "graphrt/client/saved_model.h"
#include "graphrt/client/saved_model_builder.h"
#include "graphrt/client/saver.h"
#include "graphrt/core/device.h"
#include "graphrt/core/graph.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/runtime.h"
#include "graphrt/core/session.h"
#include "graphrt/core/tensor.h"
#include "graphrt/distributed/server.h"
#include "graphrt/tf_c_api.h"

namespace py = pybind11;

namespace graphrt {
namespace python {
namespace {

// graphrt.errors._make_error(code, message) -> exception instance. Set once by
// graphrt/errors.py; kept as a raw reference that is never released, so no
// Python object is destroyed after the interpreter has gone.
PyObject* g_error_factory = nullptr;

[[noreturn]] void ThrowStatus(const Status& s) {
  if (g_error_factory == nullptr) throw std::runtime_error(s.ToString());
  py::object exc = py::reinterpret_borrow<py::object>(g_error_factory)(static_cast<int>(s.code()), s.message());
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

void Check(const Status& s) {
  if (!s.ok()) ThrowStatus(s);
}

[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// numpy's dtype for each DataType that has one (numpy has no bfloat16: it is
// fed from and fetched as float32; quantized types are their integer types,
// as their bytes are).
const char* NumpyName(DataType d) {
  switch (d) {
    case GR_FLOAT: return "float32";
    case GR_DOUBLE: return "float64";
    case GR_INT32: case GR_QINT32: return "int32";
    case GR_UINT8: case GR_QUINT8: return "uint8";
    case GR_INT16: case GR_QINT16: return "int16";
    case GR_INT8: case GR_QINT8: return "int8";
    case GR_COMPLEX64: return "complex64";
    case GR_INT64: return "int64";
    case GR_BOOL: return "bool";
    case GR_UINT16: case GR_QUINT16: return "uint16";
    case GR_COMPLEX128: return "complex128";
    case GR_HALF: return "float16";
    case GR_UINT32: return "uint32";
    case GR_UINT64: return "uint64";
    case GR_BFLOAT16: return "float32";
    case GR_STRING: return "object";
    default: return nullptr;
  }
}

constexpr int kNumDataTypes = GR_UINT64 + 1;
// Made at import, never released (see g_error_factory).
PyObject* g_dtypes[kNumDataTypes] = {};
PyObject* g_np_asarray = nullptr;
PyObject* g_np_ascontiguousarray = nullptr;

py::dtype NumpyDtype(DataType d) {
  const int i = static_cast<int>(d);
  if (i <= 0 || i >= kNumDataTypes || g_dtypes[i] == nullptr)
    Raise(PyExc_TypeError, "graphrt: tensors of type " + DataTypeString(d) + " cannot be passed to or from Python");
  return py::reinterpret_borrow<py::dtype>(g_dtypes[i]);
}

// numpy's type number, or -1 for a non-native byte order (which then goes
// through np.asarray, which swaps it; x86-64 is little-endian).
int TypeNum(const py::dtype& dt) {
  const auto* d = py::detail::array_descriptor_proxy(dt.ptr());
  return d->byteorder == '>' ? -1 : d->type_num;
}

bool IsIntegerType(DataType d) {
  switch (d) {
    case GR_INT8: case GR_INT16: case GR_INT32: case GR_INT64: case GR_UINT8: case GR_UINT16:
    case GR_UINT32: case GR_UINT64: case GR_QINT8: case GR_QUINT8: case GR_QINT16: case GR_QUINT16: case GR_QINT32:
      return true;
    default:
      return false;
  }
}

// Inclusive range of an integer type.
void IntegerRange(DataType d, long double* lo, long double* hi) {
  switch (d) {
    case GR_INT8: case GR_QINT8: *lo = INT8_MIN; *hi = INT8_MAX; return;
    case GR_UINT8: case GR_QUINT8: *lo = 0; *hi = UINT8_MAX; return;
    case GR_INT16: case GR_QINT16: *lo = INT16_MIN; *hi = INT16_MAX; return;
    case GR_UINT16: case GR_QUINT16: *lo = 0; *hi = UINT16_MAX; return;
    case GR_INT32: case GR_QINT32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case GR_UINT32: *lo = 0; *hi = UINT32_MAX; return;
    case GR_INT64: *lo = static_cast<long double>(INT64_MIN); *hi = static_cast<long double>(INT64_MAX); return;
    default: *lo = 0; *hi = static_cast<long double>(UINT64_MAX); return;
  }
}

std::string ShapeTuple(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// What the Python side needs to know of a node: its op and output types, and
// for placeholders the declared shape (feeds are checked against it).
struct NodeInfo {
  std::string op;
  std::vector<DataType> outputs;
  bool has_shape = false;  // a known-rank `shape` attr
  std::vector<int64_t> dims;  // -1: unknown
};
using NodeIndex = std::unordered_map<std::string, NodeInfo>;

Status BuildNodeIndex(const proto::GraphDef& def, NodeIndex* out) {
  Graph g(&Runtime::Global().ops());
  GR_RETURN_IF_ERROR(ConvertGraphDefToGraph(def, &g));
  for (Node* n : g.op_nodes()) {
    NodeInfo info;
    info.op = n->op();
    info.outputs = n->output_types();
    if (info.op == "Placeholder" || info.op == "PlaceholderV2" || info.op == "PlaceholderWithDefault") {
      auto it = n->def().attr().find("shape");
      // TF: in graphs before producer 22 an empty shape means "unknown",
      // not "scalar" (Placeholder's shape function).
      const bool legacy_scalar = def.versions().producer() <= 21 && it != n->def().attr().end() &&
                                 it->second.has_shape() && it->second.shape().dim_size() == 0;
      if (it != n->def().attr().end() && it->second.has_shape() && !it->second.shape().unknown_rank() &&
          !legacy_scalar) {
        info.has_shape = true;
        for (const auto& dim : it->second.shape().dim()) info.dims.push_back(dim.size() < 0 ? -1 : dim.size());
      }
    }
    (*out)[n->name()] = std::move(info);
  }
  return Status::OK();
}

std::string PartialShapeString(const NodeInfo& info) {
  std::string s = "(";
  for (size_t i = 0; i < info.dims.size(); ++i)
    s += (i ? ", " : "") + (info.dims[i] < 0 ? std::string("?") : std::to_string(info.dims[i]));
  return s + (info.dims.size() == 1 ? ",)" : ")");
}

// bfloat16 is the upper half of a float32; round to nearest even (NaN kept a NaN).
uint16_t FloatToBfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
float Bfloat16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<int64_t> ArrayDims(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

Tensor AllocateOrThrow(DataType d, const std::vector<int64_t>& dims, const std::string& name) {
  TensorShape shape;
  Check(TensorShape::FromDims(dims.data(), static_cast<int>(dims.size()), &shape)
            .WithContext("feed '" + name + "': "));
  Tensor t;
  Check(Tensor::Allocate(HostAllocator(), d, shape, &t).WithContext("feed '" + name + "': "));
  return t;
}

void SetString(Tensor* t, int64_t i, py::handle v, const std::string& name) {
  if (PyBytes_Check(v.ptr())) {
    t->set_string(i, std::string_view(PyBytes_AS_STRING(v.ptr()), PyBytes_GET_SIZE(v.ptr())));
  } else if (PyUnicode_Check(v.ptr())) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(v.ptr(), &n);
    if (s == nullptr) throw py::error_already_set();
    t->set_string(i, std::string_view(s, n));
  } else {
    Raise(PyExc_TypeError, "feed '" + name + "' is a string tensor; element " + std::to_string(i) + " is a " +
                               std::string(Py_TYPE(v.ptr())->tp_name) + ", not bytes or str");
  }
}

// A feed value as a tensor of type `d`, converted the way TF1's session
// converts it (np.asarray(value, dtype)); `info` (when a placeholder) gives
// the shape the value must be compatible with.
Tensor FeedToTensor(py::handle value, DataType d, const std::string& name, const NodeInfo& info) {
  if (d == GR_STRING) {
    if (PyBytes_Check(value.ptr()) || PyUnicode_Check(value.ptr())) {
      Tensor t = AllocateOrThrow(d, {}, name);
      SetString(&t, 0, value, name);
      return t;
    }
    py::array arr = py::reinterpret_steal<py::array>(
        PyObject_CallFunctionObjArgs(g_np_asarray, value.ptr(), g_dtypes[GR_STRING], nullptr));
    if (!arr) throw py::error_already_set();
    Tensor t = AllocateOrThrow(d, ArrayDims(arr), name);
    py::object flat = arr.attr("ravel")();
    for (int64_t i = 0; i < t.NumElements(); ++i) SetString(&t, i, flat[py::int_(i)], name);
    return t;
  }
  const py::dtype want = NumpyDtype(d);
  py::array arr;
  if (py::isinstance<py::array>(value) && TypeNum(py::reinterpret_borrow<py::array>(value).dtype()) == TypeNum(want) &&
      (py::reinterpret_borrow<py::array>(value).flags() & py::array::c_style)) {
    arr = py::reinterpret_borrow<py::array>(value);  // the common case: no conversion at all
  } else {
    if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr()) && IsIntegerType(d)) {
      // TF1 refuses a Python int that the feed's type cannot hold (numpy would wrap it).
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
      long double lo, hi;
      IntegerRange(d, &lo, &hi);
      bool fits = overflow == 0 && static_cast<long double>(v) >= lo && static_cast<long double>(v) <= hi;
      if (overflow > 0 && d == GR_UINT64) {
        unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
        fits = !PyErr_Occurred();
        PyErr_Clear();
        (void)u;
      }
      if (!fits)
        Raise(PyExc_TypeError, "Type of feed value " + py::repr(value).cast<std::string>() +
                                   " with type <class 'int'> is not compatible with Tensor type " +
                                   DataTypeString(d) + " of '" + name +
                                   "'. Try explicitly setting the type of the feed tensor to a larger type (e.g. int64).");
    }
    arr = py::reinterpret_steal<py::array>(PyObject_CallFunctionObjArgs(g_np_asarray, value.ptr(), want.ptr(), nullptr));
    if (!arr) throw py::error_already_set();
    if (!(arr.flags() & py::array::c_style)) {
      arr = py::reinterpret_steal<py::array>(PyObject_CallFunctionObjArgs(g_np_ascontiguousarray, arr.ptr(), nullptr));
      if (!arr) throw py::error_already_set();
    }
  }
  const std::vector<int64_t> dims = ArrayDims(arr);
  if (info.has_shape) {
    bool ok = dims.size() == info.dims.size();
    for (size_t i = 0; ok && i < dims.size(); ++i) ok = info.dims[i] < 0 || info.dims[i] == dims[i];
    if (!ok)
      Raise(PyExc_ValueError, "Cannot feed value of shape " + ShapeTuple(dims) + " for Tensor '" + name +
                                  "', which has shape '" + PartialShapeString(info) + "'");
  }
  Tensor t = AllocateOrThrow(d, dims, name);
  if (d == GR_BFLOAT16) {
    const float* src = static_cast<const float*>(arr.data());
    uint16_t* dst = t.data<uint16_t>();
    for (int64_t i = 0; i < t.NumElements(); ++i) dst[i] = FloatToBfloat16(src[i]);
  } else if (t.TotalBytes() > 0) {
    std::memcpy(t.raw_data(), arr.data(), t.TotalBytes());
  }
  return t;
}

// Keeps a fetched tensor alive for the numpy array that views its buffer
// (the array's .base). Its buffer protocol exposes the raw bytes, so tests
// can check that the array really is a view.
struct TensorHolder {
  Tensor tensor;
};

py::object TensorToPython(Tensor t) {
  const DataType d = t.dtype();
  const std::vector<int64_t> dims = t.shape().dim_sizes();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  if (d == GR_STRING) {
    if (t.dims() == 0) {
      std::string_view s = t.string_at(0);
      return py::bytes(s.data(), s.size());
    }
    py::array out(NumpyDtype(d), shape);
    py::object flat = out.attr("reshape")(-1);
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      std::string_view s = t.string_at(i);
      flat[py::int_(i)] = py::bytes(s.data(), s.size());
    }
    return out;
  }
  const py::dtype dt = NumpyDtype(d);
  py::array out;
  if (d == GR_BFLOAT16) {
    out = py::array(dt, shape);
    float* dst = static_cast<float*>(out.mutable_data());
    const uint16_t* src = t.data<uint16_t>();
    for (int64_t i = 0; i < t.NumElements(); ++i) dst[i] = Bfloat16ToFloat(src[i]);
  } else if (t.dims() > 0 && t.NumElements() > 0 && t.RefCountIsOne() && t.buffer()->allocator()->IsHost()) {
    // Nobody else holds the buffer (not a constant's, a variable's, or
    // another fetch's): the array views it, writably, as TF1's does.
    void* data = t.raw_data();
    py::object holder = py::cast(TensorHolder{std::move(t)});
    out = py::array(dt, shape, data, holder);
  } else {
    out = py::array(dt, shape);
    if (t.TotalBytes() > 0) std::memcpy(out.mutable_data(), t.raw_data(), t.TotalBytes());
  }
  if (out.ndim() == 0) return out[py::tuple()];  // a numpy scalar, as TF1 returns
  return out;
}

proto::ConfigProto ParseConfig(const py::bytes& config) {
  proto::ConfigProto c;
  std::string s = config;
  if (!c.ParseFromString(s)) Raise(PyExc_ValueError, "graphrt: config is not a serialized ConfigProto");
  return c;
}

// A session and the graph it runs. The C++ Session is thread-safe; the node
// index is replaced whole (under mu_) when a Saver extends the graph.
class PySession {
 public:
  PySession(std::shared_ptr<Session> s, proto::GraphDef graph) : session_(std::move(s)), graph_(std::move(graph)) {
    auto index = std::make_shared<NodeIndex>();
    Check(BuildNodeIndex(graph_, index.get()));
    index_ = std::move(index);
  }

  static std::shared_ptr<PySession> Create(proto::GraphDef graph, const py::bytes& config, const std::string& target) {
    SessionOptions opts;
    opts.target = target;
    opts.config = ParseConfig(config);
    std::unique_ptr<Session> s;
    Status st;
    {
      py::gil_scoped_release release;
      distributed::RegisterGrpcSessionFactory();  // graphrt.Session(target="grpc://...")
      st = NewSession(opts, &s);
      if (st.ok()) st = s->Create(graph);
    }
    Check(st);
    return std::make_shared<PySession>(std::shared_ptr<Session>(std::move(s)), std::move(graph));
  }

  std::shared_ptr<const NodeIndex> index() const {
    std::lock_guard<std::mutex> lock(mu_);
    return index_;
  }

  // (dtype enum, shape or None, op) of tensor "node:k"; None when it does not exist.
  py::object TensorInfo(const std::string& node, int k) const {
    auto idx = index();
    auto it = idx->find(node);
    if (it == idx->end() || k < 0 || k >= static_cast<int>(it->second.outputs.size())) return py::none();
    py::object shape = py::none();
    if (it->second.has_shape) shape = py::cast(it->second.dims);
    return py::make_tuple(static_cast<int>(it->second.outputs[k]), shape, it->second.op);
  }

  // Outputs of `node`, -1 when the graph has no such node.
  int NumOutputs(const std::string& node) const {
    auto idx = index();
    auto it = idx->find(node);
    return it == idx->end() ? -1 : static_cast<int>(it->second.outputs.size());
  }

  py::object Run(py::handle feed_dict, const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
                 py::handle options, bool want_metadata) {
    std::vector<std::pair<std::string, Tensor>> inputs;
    if (!feed_dict.is_none()) {
      auto idx = index();
      PyObject* key;
      PyObject* value;
      Py_ssize_t pos = 0;
      if (!PyDict_Check(feed_dict.ptr())) Raise(PyExc_TypeError, "feed_dict must be a dict");
      inputs.reserve(PyDict_Size(feed_dict.ptr()));
      while (PyDict_Next(feed_dict.ptr(), &pos, &key, &value)) {
        std::string name = FeedName(key);
        std::string node;
        int k = 0;
        bool control = false;
        if (!ParseTensorName(name, &node, &k, &control) || control)
          Raise(PyExc_ValueError, "Cannot interpret feed_dict key '" + name + "' as a Tensor name (expected NODE:INDEX)");
        auto it = idx->find(node);
        if (it == idx->end())
          Raise(PyExc_ValueError, "Cannot interpret feed_dict key as Tensor: The name '" + name +
                                      "' refers to a Tensor which does not exist. The operation, '" + node +
                                      "', does not exist in the graph.");
        if (k >= static_cast<int>(it->second.outputs.size()))
          Raise(PyExc_ValueError, "Cannot interpret feed_dict key as Tensor: The name '" + name +
                                      "' refers to a Tensor which does not exist. The operation, '" + node + "', exists but only has " +
                                      std::to_string(it->second.outputs.size()) + " outputs.");
        std::string canonical = node + ":" + std::to_string(k);
        static const NodeInfo kNoShape;
        inputs.emplace_back(canonical, FeedToTensor(value, BaseType(it->second.outputs[k]), canonical,
                                                    k == 0 ? it->second : kNoShape));
      }
    }
    std::vector<Tensor> outputs;
    proto::RunMetadata metadata;
    Status s;
    const bool plain = options.is_none() && !want_metadata;
    proto::RunOptions run_options;
    if (!options.is_none()) {
      std::string bytes = py::reinterpret_borrow<py::bytes>(options);
      if (!run_options.ParseFromString(bytes)) Raise(PyExc_ValueError, "graphrt: options is not a serialized RunOptions");
    }
    std::shared_ptr<Session> session = session_;
    {
      py::gil_scoped_release release;
      s = plain ? session->Run(inputs, fetches, targets, &outputs)
                : session->Run(run_options, inputs, fetches, targets, &outputs, &metadata);
      // Our copies of the feeds go before the results are looked at, so a
      // result that forwards a feed's buffer is not seen as shared.
      inputs.clear();
    }
    Check(s);
    py::list results(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) results[i] = TensorToPython(std::move(outputs[i]));
    if (!want_metadata) return results;
    return py::make_tuple(results, py::bytes(metadata.SerializeAsString()));
  }

  void Close() {
    Status s;
    {
      py::gil_scoped_release release;
      s = session_->Close();
    }
    Check(s);
  }

  // New nodes for the session's graph (compat.v1: nodes imported into the
  // session's Graph after the session was made).
  void Extend(const py::bytes& nodes) {
    proto::GraphDef add;
    if (!add.ParseFromString(std::string(nodes))) Raise(PyExc_ValueError, "graphrt: not a serialized GraphDef");
    MutateGraph([&](proto::GraphDef* g) {
      Status s;
      {
        py::gil_scoped_release release;
        s = session_->Extend(add);
      }
      Check(s);
      for (const proto::NodeDef& n : add.node()) *g->add_node() = n;
      if (add.has_library()) g->mutable_library()->MergeFrom(add.library());
    });
  }

  py::bytes GraphDefBytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return py::bytes(graph_.SerializeAsString());
  }

  Session* session() const { return session_.get(); }

  // The Saver extends the session's graph: it gets our GraphDef and we
  // re-index afterwards.
  template <typename F>
  void MutateGraph(F&& f) {
    // Taken without the GIL: the holder releases it inside f().
    std::unique_lock<std::mutex> graph_lock(graph_mu_, std::defer_lock);
    {
      py::gil_scoped_release release;
      graph_lock.lock();
    }
    proto::GraphDef g;
    {
      std::lock_guard<std::mutex> lock(mu_);
      g = graph_;
    }
    f(&g);
    auto index = std::make_shared<NodeIndex>();
    Check(BuildNodeIndex(g, index.get()));
    std::lock_guard<std::mutex> lock(mu_);
    graph_ = std::move(g);
    index_ = std::move(index);
  }

 private:
  static std::string FeedName(PyObject* key) {
    if (PyUnicode_Check(key)) {
      Py_ssize_t n = 0;
      const char* s = PyUnicode_AsUTF8AndSize(key, &n);
      if (s == nullptr) throw py::error_already_set();
      return std::string(s, n);
    }
    // graphrt.compat.v1 Tensor objects (anything with a string .name).
    py::handle h(key);
    if (py::hasattr(h, "name")) {
      py::object n = h.attr("name");
      if (py::isinstance<py::str>(n)) return n.cast<std::string>();
    }
    Raise(PyExc_TypeError, "Cannot interpret feed_dict key " + py::repr(h).cast<std::string>() +
                               " as a Tensor: expected a tensor name such as 'x:0'");
  }

  std::shared_ptr<Session> session_;
  mutable std::mutex mu_;  // graph_, index_
  std::mutex graph_mu_;    // one MutateGraph at a time
  proto::GraphDef graph_;
  std::shared_ptr<const NodeIndex> index_;
};

proto::GraphDef GraphFromBytes(const py::bytes& b) {
  proto::GraphDef g;
  std::string s = b;
  if (!g.ParseFromString(s)) Check(errors::InvalidArgument("graphrt: the bytes given are not a binary GraphDef"));
  return g;
}

class PySaver {
 public:
  std::unique_ptr<Saver> saver;
};

// tf.saved_model.builder.SavedModelBuilder's core (graphrt.saved_model).
struct PySavedModelBuilder {
  std::unique_ptr<SavedModelBuilder> builder;
};

MetaGraphExport MakeMetaGraphExport(const std::vector<std::string>& tags,
                                    const std::map<std::string, py::bytes>& signatures, const std::string& main_op,
                                    bool legacy_init_op) {
  MetaGraphExport meta;
  meta.tags = tags;
  for (const auto& [key, bytes] : signatures) {
    proto::SignatureDef sig;
    if (!sig.ParseFromString(std::string(bytes)))
      Raise(PyExc_ValueError, "graphrt: signature '" + key + "' is not a serialized SignatureDef");
    meta.signatures[key] = std::move(sig);
  }
  meta.main_op = main_op;
  meta.legacy_init_op = legacy_init_op;
  return meta;
}

SaverOptions MakeSaverOptions(const std::vector<std::string>& var_names, int max_to_keep, double keep_hours,
                              bool sharded, const std::string& name, bool save_relative_paths) {
  SaverOptions o;
  o.var_names = var_names;
  o.max_to_keep = max_to_keep;
  o.keep_checkpoint_every_n_hours = keep_hours;
  o.sharded = sharded;
  if (!name.empty()) o.name = name;
  o.save_relative_paths = save_relative_paths;
  return o;
}

// The graph a Python script builds (graphrt.framework.Graph), held as a
// TF_Graph of graphrt's TensorFlow C API, as TensorFlow >= 1.5's Python
// front end holds its graph: every operation goes through
// TF_FinishOperation (OpDef validation, attr inference, shape functions).
class PyGraphBuilder {
 public:
  PyGraphBuilder() : graph_(TF_NewGraph()), status_(TF_NewStatus()) {
    if (graph_ == nullptr || status_ == nullptr) throw std::bad_alloc();
  }
  ~PyGraphBuilder() {
    TF_DeleteGraph(graph_);
    TF_DeleteStatus(status_);
  }
  PyGraphBuilder(const PyGraphBuilder&) = delete;
  PyGraphBuilder& operator=(const PyGraphBuilder&) = delete;

  // inputs: per input arg, a (name, index) tuple (TF_AddInput) or a list of
  // them (TF_AddInputList); attrs: (name, serialized AttrValue) pairs.
  // Returns (serialized NodeDef, [output dtype enums]).
  py::tuple AddOperation(const std::string& op_type, const std::string& name, const py::list& inputs,
                         const std::vector<std::string>& control_inputs, const std::string& device,
                         const std::vector<std::pair<std::string, py::bytes>>& attrs,
                         const std::vector<std::string>& colocate_with) {
    // Names are resolved first: once described, an operation can only be
    // finished (TF_FinishOperation frees the description).
    std::vector<std::vector<TF_Output>> lists;
    std::vector<bool> is_list;
    for (const py::handle& in : inputs) {
      is_list.push_back(py::isinstance<py::list>(in));
      lists.emplace_back();
      if (is_list.back()) {
        for (const py::handle& t : in.cast<py::list>()) lists.back().push_back(Output(t));
      } else {
        lists.back().push_back(Output(in));
      }
    }
    std::vector<TF_Operation*> controls, colocations;
    for (const std::string& c : control_inputs) controls.push_back(Operation(c));
    for (const std::string& c : colocate_with) colocations.push_back(Operation(c));
    TF_OperationDescription* d = TF_NewOperation(graph_, op_type.c_str(), name.c_str());
    if (d == nullptr) throw std::bad_alloc();
    if (!device.empty()) TF_SetDevice(d, device.c_str());
    for (size_t i = 0; i < lists.size(); ++i) {
      if (is_list[i]) {
        TF_AddInputList(d, lists[i].data(), static_cast<int>(lists[i].size()));
      } else {
        TF_AddInput(d, lists[i][0]);
      }
    }
    for (TF_Operation* c : controls) TF_AddControlInput(d, c);
    for (TF_Operation* c : colocations) TF_ColocateWith(d, c);
    for (const auto& [attr, value] : attrs) {
      const std::string bytes = value;
      // No status: graphrt's TF C API then reports a bad value from
      // TF_FinishOperation, which fails without adding the operation.
      TF_SetAttrValueProto(d, attr.c_str(), bytes.data(), bytes.size(), nullptr);
    }
    TF_Operation* op = TF_FinishOperation(d, status_);
    Check(Last());
    return py::make_tuple(NodeDefOf(op), OutputTypes(op));
  }

  // TF_AddGradientsWithPrefix: ys, xs and grad_ys (or None) as (name,
  // index) pairs. Returns ([(name, index) or None per x], [(NodeDef bytes,
  // [output dtype enums]) of every node it added]).
  py::tuple AddGradients(const py::list& ys, const py::list& xs, const py::object& grad_ys,
                         const std::string& prefix) {
    std::vector<TF_Output> y, x, dx;
    for (const py::handle& t : ys) y.push_back(Output(t));
    for (const py::handle& t : xs) x.push_back(Output(t));
    if (!grad_ys.is_none())
      for (const py::handle& t : grad_ys.cast<py::list>()) dx.push_back(Output(t));
    size_t first_new = 0;
    while (TF_GraphNextOperation(graph_, &first_new) != nullptr) {
    }
    std::vector<TF_Output> dy(x.size());
    TF_AddGradientsWithPrefix(graph_, prefix.c_str(), y.data(), static_cast<int>(y.size()), x.data(),
                              static_cast<int>(x.size()), grad_ys.is_none() ? nullptr : dx.data(), status_,
                              dy.data());
    Check(Last());
    py::list grads;
    for (const TF_Output& d : dy) {
      if (d.oper == nullptr) {
        grads.append(py::none());
      } else {
        grads.append(py::make_tuple(std::string(TF_OperationName(d.oper)), d.index));
      }
    }
    py::list added;
    size_t pos = first_new;
    while (TF_Operation* op = TF_GraphNextOperation(graph_, &pos)) {
      added.append(py::make_tuple(NodeDefOf(op), OutputTypes(op)));
    }
    return py::make_tuple(grads, added);
  }

  void ImportGraphDef(const py::bytes& graph_def) {
    const std::string bytes = graph_def;
    TF_Buffer* b = TF_NewBufferFromString(bytes.data(), bytes.size());
    TF_GraphImportGraphDef(graph_, b, nullptr, status_);
    TF_DeleteBuffer(b);
    Check(Last());
  }

  // [output dtype enums] of operation `name`, or None when there is none.
  py::object OutputTypesOf(const std::string& name) {
    TF_Operation* op = TF_GraphOperationByName(graph_, name.c_str());
    if (op == nullptr) return py::none();
    return py::cast(OutputTypes(op));
  }

  // What is known of an output's shape: None (unknown rank) or a list
  // with -1 for unknown dims.
  py::object Shape(const std::string& name, int index) {
    const TF_Output out = Output(py::make_tuple(name, index));
    const int rank = TF_GraphGetTensorNumDims(graph_, out, status_);
    Check(Last());
    if (rank < 0) return py::none();
    std::vector<int64_t> dims(rank);
    TF_GraphGetTensorShape(graph_, out, dims.data(), rank, status_);
    Check(Last());
    return py::cast(dims);
  }

  void SetShape(const std::string& name, int index, const py::object& dims) {
    const TF_Output out = Output(py::make_tuple(name, index));
    std::vector<int64_t> d;
    if (!dims.is_none()) d = dims.cast<std::vector<int64_t>>();
    TF_GraphSetTensorShape(graph_, out, d.data(), dims.is_none() ? -1 : static_cast<int>(d.size()), status_);
    Check(Last());
  }

 private:
  Status Last() const {
    if (TF_GetCode(status_) == TF_OK) return Status::OK();
    return Status(static_cast<Code>(TF_GetCode(status_)), TF_Message(status_));
  }
  TF_Operation* Operation(const std::string& name) const {
    TF_Operation* op = TF_GraphOperationByName(graph_, name.c_str());
    if (op == nullptr) Check(errors::InvalidArgument("graphrt: no operation named '", name, "' in the graph"));
    return op;
  }
  TF_Output Output(const py::handle& t) const {
    const auto [name, index] = t.cast<std::pair<std::string, int>>();
    return TF_Output{Operation(name), index};
  }
  py::bytes NodeDefOf(TF_Operation* op) {
    TF_Buffer* b = TF_NewBuffer();
    TF_OperationToNodeDef(op, b, status_);
    py::bytes out(static_cast<const char*>(b->data), b->length);
    TF_DeleteBuffer(b);
    Check(Last());
    return out;
  }
  static std::vector<int> OutputTypes(TF_Operation* op) {
    std::vector<int> types(TF_OperationNumOutputs(op));
    for (int i = 0; i < static_cast<int>(types.size()); ++i) types[i] = TF_OperationOutputType(TF_Output{op, i});
    return types;
  }

  TF_Graph* graph_;
  TF_Status* status_;
};

}  // namespace

PYBIND11_MODULE(_graphrt, m) {
  m.doc() = "graphrt native module (use the graphrt package)";
  {
    py::module_ np = py::module_::import("numpy");
    for (int i = 1; i < kNumDataTypes; ++i)
      if (const char* name = NumpyName(static_cast<DataType>(i))) g_dtypes[i] = py::dtype(name).release().ptr();
    g_np_asarray = py::object(np.attr("asarray")).release().ptr();
    g_np_ascontiguousarray = py::object(np.attr("ascontiguousarray")).release().ptr();
  }

  m.def("_set_error_factory", [](py::object f) {
    Py_XDECREF(g_error_factory);
    g_error_factory = f.release().ptr();
  });
  m.def("load_default_plugins", [] {
    py::gil_scoped_release release;
    Status s = Runtime::Global().LoadDefaultPlugins();
    return s.ok() ? std::string() : s.ToString();
  });
  m.def("default_plugin_directory", &Runtime::DefaultPluginDirectory);
  m.def("load_op_library", [](const std::string& path) {
    Status s;
    PluginInfo p;
    {
      py::gil_scoped_release release;
      s = Runtime::Global().LoadPlugin(path, &p);
    }
    Check(s);
    py::dict d;
    d["name"] = p.name;
    d["version"] = p.version;
    d["path"] = p.path;
    d["ops"] = p.ops;
    d["kernels"] = p.kernels;
    d["devices"] = p.devices;
    return d;
  });
  m.def("plugins", [] {
    py::list out;
    for (const PluginInfo& p : Runtime::Global().Plugins()) out.append(py::make_tuple(p.name, p.path, p.ops));
    return out;
  });
  m.def("list_devices", [] {
    std::vector<Device*> devices;
    Check(Runtime::Global().devices().GetDevices(&devices));
    py::list out;
    for (Device* d : devices) {
      int64_t total = 0, free = 0;
      if (!d->MemoryInfo(&total, &free).ok()) total = 0;
      out.append(py::make_tuple(d->name(), d->type(), total, d->description()));
    }
    return out;
  });
  // TensorBoard event files (graphrt.summary.FileWriter): events cross as
  // serialized Event protos.
  py::class_<EventFileWriter>(m, "EventFileWriter")
      .def(py::init([](const std::string& logdir, const std::string& suffix) {
        std::unique_ptr<EventFileWriter> w;
        Check(EventFileWriter::Create(logdir, suffix, &w));
        return w;
      }))
      .def("write_event",
           [](EventFileWriter& w, const py::bytes& event) {
             proto::Event e;
             if (!e.ParseFromString(std::string(event)))
               Check(errors::InvalidArgument("graphrt: the bytes given are not a serialized Event"));
             Check(w.WriteEvent(e));
           })
      .def("flush", [](EventFileWriter& w) { Check(w.Flush()); })
      .def("close", [](EventFileWriter& w) { Check(w.Close()); })
      .def_property_readonly("filename", &EventFileWriter::filename);
  py::class_<PyGraphBuilder>(m, "GraphBuilder")
      .def(py::init<>())
      .def("add_operation", &PyGraphBuilder::AddOperation)
      .def("import_graph_def", &PyGraphBuilder::ImportGraphDef)
      .def("add_gradients", &PyGraphBuilder::AddGradients)
      .def("output_types", &PyGraphBuilder::OutputTypesOf)
      .def("shape", &PyGraphBuilder::Shape)
      .def("set_shape", &PyGraphBuilder::SetShape);
  // Every registered op's OpDef, as a serialized OpList (the standard
  // plugins loaded first).
  m.def("all_op_list", [] {
    TF_Buffer* b = TF_GetAllOpList();
    if (b == nullptr) Check(errors::Internal("graphrt: could not list the registered ops"));
    py::bytes out(static_cast<const char*>(b->data), b->length);
    TF_DeleteBuffer(b);
    return out;
  });
  // {node: (op, [output dtype enums])} of a binary GraphDef (for the
  // compat.v1 Graph's Tensor.dtype).
  m.def("graph_node_index", [](const py::bytes& graph) {
    NodeIndex index;
    Check(BuildNodeIndex(GraphFromBytes(graph), &index));
    py::dict out;
    for (const auto& [name, info] : index) {
      std::vector<int> types(info.outputs.begin(), info.outputs.end());
      out[py::str(name)] = py::make_tuple(info.op, types);
    }
    return out;
  });
  m.def("read_graph_def", [](const std::string& path) {
    proto::GraphDef g;
    Check(ReadGraphDefFromFile(path, &g));
    return py::bytes(g.SerializeAsString());
  });
  m.def("read_meta_graph_def", [](const std::string& path) {
    proto::MetaGraphDef g;
    Check(ReadMetaGraphDefFromFile(path, &g));
    return py::bytes(g.SerializeAsString());
  });
  m.def("latest_checkpoint", [](const std::string& dir, const std::string& latest_filename) -> py::object {
    std::string p = LatestCheckpoint(dir, latest_filename);
    if (p.empty()) return py::none();
    return py::str(p);
  });
  m.def("checkpoint_exists", &CheckpointExists);

  py::class_<TensorHolder>(m, "_TensorBuffer", py::buffer_protocol())
      .def_buffer([](TensorHolder& h) {
        return py::buffer_info(h.tensor.raw_data(), 1, "B", static_cast<py::ssize_t>(h.tensor.TotalBytes()));
      })
      .def_property_readonly("data_ptr", [](const TensorHolder& h) {
        return reinterpret_cast<uintptr_t>(h.tensor.raw_data());
      });

  // One task of a cluster (graphrt.train.Server): a Master and a Worker on one gRPC port.
  py::class_<distributed::GrpcServer>(m, "Server")
      .def(py::init([](const py::bytes& server_def, bool insecure, const std::string& tls_cert,
                       const std::string& tls_key, const std::string& tls_ca) {
             distributed::ServerOptions options;
             if (!options.server_def.ParseFromString(std::string(server_def)))
               throw py::value_error("server_def is not a serialized ServerDef");
             options.insecure = insecure;
             options.tls = distributed::TlsFiles{tls_cert, tls_key, tls_ca};
             std::unique_ptr<distributed::GrpcServer> server;
             Status st;
             {
               py::gil_scoped_release release;
               st = distributed::GrpcServer::Create(options, &server);
             }
             Check(st);
             return server;
           }),
           py::arg("server_def"), py::arg("insecure") = false, py::arg("tls_cert") = "", py::arg("tls_key") = "",
           py::arg("tls_ca") = "")
      .def_property_readonly("target", &distributed::GrpcServer::target)
      .def_property_readonly("port", &distributed::GrpcServer::port)
      .def_property_readonly("task", &distributed::GrpcServer::task)
      .def("stop", &distributed::GrpcServer::Stop, py::call_guard<py::gil_scoped_release>())
      .def("join", &distributed::GrpcServer::Join, py::call_guard<py::gil_scoped_release>());

  m.def("set_client_tls", [](const std::string& cert, const std::string& key, const std::string& ca) {
    Check(distributed::SetClientTls(distributed::TlsFiles{cert, key, ca}));
  });

  py::class_<PySession, std::shared_ptr<PySession>>(m, "Session")
      .def(py::init([](const py::bytes& graph, const py::bytes& config, const std::string& target) {
             return PySession::Create(GraphFromBytes(graph), config, target);
           }),
           py::arg("graph_def"), py::arg("config"), py::arg("target"))
      .def_static("from_file", [](const std::string& path, const py::bytes& config, const std::string& target) {
        proto::GraphDef g;
        Check(ReadGraphDefFromFile(path, &g));
        return PySession::Create(std::move(g), config, target);
      })
      .def("run", &PySession::Run)
      .def("close", &PySession::Close)
      .def("extend", &PySession::Extend)
      .def("tensor_info", &PySession::TensorInfo)
      .def("num_outputs", &PySession::NumOutputs)
      .def("graph_def", &PySession::GraphDefBytes);

  // A SavedModel: (session, serialized MetaGraphDef).
  m.def("load_saved_model", [](const std::string& export_dir, const std::vector<std::string>& tags,
                               const py::bytes& config, const std::vector<std::string>& allowed_dirs) {
    SessionOptions opts;
    opts.config = ParseConfig(config);
    for (const std::string& d : allowed_dirs) opts.config.mutable_graphrt_options()->add_allowed_directories(d);
    auto bundle = std::make_shared<SavedModelBundle>();
    Status st;
    {
      py::gil_scoped_release release;
      st = LoadSavedModel(opts, export_dir, std::set<std::string>(tags.begin(), tags.end()), bundle.get());
    }
    Check(st);
    std::shared_ptr<Session> s(bundle, bundle->session.get());
    auto session = std::make_shared<PySession>(std::move(s), bundle->meta_graph_def.graph_def());
    return py::make_tuple(session, py::bytes(bundle->meta_graph_def.SerializeAsString()));
  });

  py::class_<PySavedModelBuilder>(m, "SavedModelBuilder")
      .def(py::init([](const std::string& export_dir) {
        auto b = std::make_unique<PySavedModelBuilder>();
        b->builder = std::make_unique<SavedModelBuilder>(export_dir);
        return b;
      }))
      .def("add_meta_graph_and_variables",
           [](PySavedModelBuilder& self, PySession& session, const std::vector<std::string>& tags,
              const std::map<std::string, py::bytes>& signatures, const std::string& main_op, bool legacy_init_op) {
             const MetaGraphExport meta = MakeMetaGraphExport(tags, signatures, main_op, legacy_init_op);
             session.MutateGraph([&](proto::GraphDef* g) {
               Status s;
               {
                 py::gil_scoped_release release;
                 // g gets the Saver's nodes: a later Saver or builder picks other names.
                 const proto::GraphDef graph = *g;
                 s = self.builder->AddMetaGraphAndVariables(session.session(), graph, meta, nullptr, g);
               }
               Check(s);
             });
           })
      .def("add_meta_graph",
           [](PySavedModelBuilder& self, const py::bytes& graph_def, const std::vector<std::string>& tags,
              const std::map<std::string, py::bytes>& signatures, const std::string& main_op, bool legacy_init_op) {
             const MetaGraphExport meta = MakeMetaGraphExport(tags, signatures, main_op, legacy_init_op);
             Check(self.builder->AddMetaGraph(GraphFromBytes(graph_def), meta));
           })
      .def("save", [](PySavedModelBuilder& self, bool as_text) {
        py::gil_scoped_release release;
        Check(self.builder->Save(as_text));
      });
  py::class_<PySaver>(m, "Saver")
      .def_static("create",
                  [](PySession& session, const std::vector<std::string>& var_names, int max_to_keep, double keep_hours,
                     bool sharded, const std::string& name, bool save_relative_paths) {
                    auto out = std::make_unique<PySaver>();
                    session.MutateGraph([&](proto::GraphDef* g) {
                      Status s;
                      {
                        py::gil_scoped_release release;
                        s = Saver::Create(session.session(), g,
                                          MakeSaverOptions(var_names, max_to_keep, keep_hours, sharded, name,
                                                           save_relative_paths),
                                          &out->saver);
                      }
                      Check(s);
                    });
                    return out;
                  })
      .def_static("from_saver_def",
                  [](const py::bytes& saver_def, py::object meta_graph, int max_to_keep, double keep_hours,
                     bool save_relative_paths) {
                    proto::SaverDef sd;
                    if (!sd.ParseFromString(std::string(saver_def)))
                      Raise(PyExc_ValueError, "graphrt: saver_def is not a serialized SaverDef");
                    proto::MetaGraphDef mg;
                    if (!meta_graph.is_none() && !mg.ParseFromString(std::string(py::bytes(meta_graph))))
                      Raise(PyExc_ValueError, "graphrt: not a serialized MetaGraphDef");
                    auto out = std::make_unique<PySaver>();
                    Check(Saver::FromSaverDef(sd, meta_graph.is_none() ? nullptr : &mg,
                                              MakeSaverOptions({}, max_to_keep, keep_hours, false, "",
                                                               save_relative_paths),
                                              &out->saver));
                    return out;
                  })
      .def("save",
           [](PySaver& s, PySession& session, const std::string& prefix, int64_t global_step) {
             std::string path;
             Status st;
             {
               py::gil_scoped_release release;
               st = s.saver->Save(session.session(), prefix, global_step, &path);
             }
             Check(st);
             return path;
           })
      .def("restore",
           [](PySaver& s, PySession& session, const std::string& prefix) {
             Status st;
             {
               py::gil_scoped_release release;
               st = s.saver->Restore(session.session(), prefix);
             }
             Check(st);
           })
      .def("last_checkpoints", [](const PySaver& s) { return s.saver->last_checkpoints(); })
      .def("recover_last_checkpoints",
           [](PySaver& s, const std::vector<std::string>& paths) { s.saver->RecoverLastCheckpoints(paths); })
      .def("saver_def", [](const PySaver& s) { return py::bytes(s.saver->saver_def().SerializeAsString()); });
}

}  // namespace python
}  // namespace graphrt
