// The toy XPU plugin (examples/toy_device) below the core: its kernels and
// its device-specific behaviour, driven through the plugin ABI alone.
//
// The executor does not hand device kernels a stream yet, so the kernels
// cannot run through a Session. This test is a small stand-in for the core:
// it loads the plugin with dlopen, hands its init a GR_CoreApi of its own
// (the handful of attr / construction / context functions these kernels
// call), and runs each kernel with device inputs and a stream, as an
// asynchronous executor would: upload on the stream, compute (which only
// enqueues), download on the stream, one sync at the end. Every stream
// command runs 1 ms late, so a kernel that computed on the calling thread,
// or did not order after the uploads, would read zeros or stale bytes.
#include <dlfcn.h>
#include <graphrt/c_api.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "device_gate.h"

namespace {

// ------------------------------------------------------------ a fake core

struct Sink {
  int32_t code = GR_OK;
  std::string message;
};
GR_StatusSink* AsSink(Sink* s) { return reinterpret_cast<GR_StatusSink*>(s); }

using AttrValue = std::variant<bool, int32_t /* a type */, std::string>;
using Attrs = std::map<std::string, AttrValue>;

struct Construction {
  const Attrs* attrs;
  std::string node, op;
  void* device;
  Sink error;
};

struct DeviceTensor {
  int32_t dtype = GR_FLOAT;
  std::vector<int64_t> dims;
  void* data = nullptr;
  uint64_t bytes = 0;
};

struct Context {
  std::string node;
  void* device;
  void* stream;
  const GR_DeviceSpec* spec;
  std::vector<DeviceTensor> inputs;
  std::vector<DeviceTensor> outputs;
  std::vector<int32_t> output_types;
  std::vector<bool> owned;  // outputs allocated here (not shared with an input)
  Sink error;
};

struct Loaded {
  std::vector<GR_KernelSpec> kernels;
  const GR_DeviceSpec* device = nullptr;
  Sink registrar_error;
};
Loaded* g_loaded = nullptr;

Construction* Kc(const GR_KernelConstruction* kc) {
  return reinterpret_cast<Construction*>(const_cast<GR_KernelConstruction*>(kc));
}
Context* Ctx(const GR_KernelContext* ctx) { return reinterpret_cast<Context*>(const_cast<GR_KernelContext*>(ctx)); }
const Attrs* AttrsOf(const GR_Attrs* a) { return reinterpret_cast<const Attrs*>(a); }

template <typename T>
const T* FindAttr(const GR_Attrs* a, const char* name, int32_t* code) {
  auto it = AttrsOf(a)->find(name);
  if (it == AttrsOf(a)->end()) {
    *code = GR_NOT_FOUND;
    return nullptr;
  }
  const T* v = std::get_if<T>(&it->second);
  *code = v ? GR_OK : GR_INVALID_ARGUMENT;
  return v;
}

uint64_t ElementSize(int32_t dtype) { return dtype == GR_DOUBLE || dtype == GR_INT64 ? 8 : 4; }

void FillView(DeviceTensor& t, GR_TensorView* v) {
  v->dtype = t.dtype;
  v->rank = static_cast<int32_t>(t.dims.size());
  v->dims = t.dims.data();
  v->data = t.data;
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  v->num_elements = n;
  v->byte_size = t.bytes;
}

GR_CoreApi MakeApi() {
  GR_CoreApi a;
  std::memset(&a, 0, sizeof(a));
  a.struct_size = sizeof(a);
  a.abi_major = GR_ABI_MAJOR;
  a.abi_minor = GR_ABI_MINOR;
  a.register_op = [](GR_Registrar*, const GR_OpSpec*) -> int32_t { return GR_OK; };
  a.register_kernel = [](GR_Registrar*, const GR_KernelSpec* s) -> int32_t {
    g_loaded->kernels.push_back(*s);
    return GR_OK;
  };
  a.register_device = [](GR_Registrar*, const GR_DeviceSpec* s) -> int32_t {
    g_loaded->device = s;
    return GR_OK;
  };
  a.registrar_set_error = [](GR_Registrar*, int32_t code, const char* msg) {
    g_loaded->registrar_error = Sink{code, msg};
  };
  a.status_set = [](GR_StatusSink* s, int32_t code, const char* msg) {
    *reinterpret_cast<Sink*>(s) = Sink{code, msg ? msg : ""};
  };
  a.log = [](int32_t, const char* file, int32_t line, const char* msg) {
    ADD_FAILURE() << "plugin logged at " << file << ":" << line << ": " << msg;
  };
  a.attr_bool = [](const GR_Attrs* at, const char* name, int32_t* out) {
    int32_t code;
    if (const bool* v = FindAttr<bool>(at, name, &code)) *out = *v;
    return code;
  };
  a.attr_type = [](const GR_Attrs* at, const char* name, int32_t* out) {
    int32_t code;
    if (const int32_t* v = FindAttr<int32_t>(at, name, &code)) *out = *v;
    return code;
  };
  a.attr_string = [](const GR_Attrs* at, const char* name, const char** data, uint64_t* size) {
    int32_t code;
    if (const std::string* v = FindAttr<std::string>(at, name, &code)) {
      *data = v->data();
      *size = v->size();
    }
    return code;
  };
  // HasAttr asks for a list size or an int: answer by presence.
  a.attr_list_size = [](const GR_Attrs* at, const char* name, int32_t* count) -> int32_t {
    *count = 0;
    return AttrsOf(at)->count(name) ? GR_INVALID_ARGUMENT : GR_NOT_FOUND;
  };
  a.attr_int = [](const GR_Attrs* at, const char* name, int64_t*) -> int32_t {
    return AttrsOf(at)->count(name) ? GR_INVALID_ARGUMENT : GR_NOT_FOUND;
  };
  a.kc_attrs = [](const GR_KernelConstruction* kc) { return reinterpret_cast<const GR_Attrs*>(Kc(kc)->attrs); };
  a.kc_node_name = [](const GR_KernelConstruction* kc) { return Kc(kc)->node.c_str(); };
  a.kc_op_name = [](const GR_KernelConstruction* kc) { return Kc(kc)->op.c_str(); };
  a.kc_set_error = [](GR_KernelConstruction* kc, int32_t code, const char* msg) { Kc(kc)->error = Sink{code, msg}; };
  a.kc_device = [](const GR_KernelConstruction* kc) { return Kc(kc)->device; };
  a.ctx_num_inputs = [](const GR_KernelContext* c) { return static_cast<int32_t>(Ctx(c)->inputs.size()); };
  a.ctx_num_outputs = [](const GR_KernelContext* c) { return static_cast<int32_t>(Ctx(c)->outputs.size()); };
  a.ctx_input = [](const GR_KernelContext* c, int32_t i, GR_TensorView* v) -> int32_t {
    if (i < 0 || i >= static_cast<int32_t>(Ctx(c)->inputs.size())) return GR_OUT_OF_RANGE;
    FillView(Ctx(c)->inputs[i], v);
    return GR_OK;
  };
  a.ctx_allocate_output = [](GR_KernelContext* c, int32_t i, int32_t rank, const int64_t* dims,
                             GR_TensorView* v) -> int32_t {
    Context* x = Ctx(c);
    DeviceTensor& t = x->outputs.at(i);
    t.dtype = x->output_types.at(i);
    t.dims.assign(dims, dims + rank);
    int64_t n = 1;
    for (int64_t d : t.dims) n *= d;
    t.bytes = static_cast<uint64_t>(n) * ElementSize(t.dtype);
    t.data = x->spec->allocate(x->device, t.bytes, 64);
    x->owned.at(i) = true;
    if (t.data == nullptr) {
      x->error = Sink{GR_RESOURCE_EXHAUSTED, "out of XPU memory"};
      return GR_RESOURCE_EXHAUSTED;
    }
    FillView(t, v);
    return GR_OK;
  };
  // This core never forwards inputs: every output is fresh memory.
  a.ctx_forward_input = [](GR_KernelContext*, int32_t, int32_t, int32_t, const int64_t*, GR_TensorView*) -> int32_t {
    return 0;
  };
  a.ctx_set_output_from_input = [](GR_KernelContext* c, int32_t out, int32_t in, int32_t rank,
                                   const int64_t* dims) -> int32_t {
    Context* x = Ctx(c);
    x->outputs.at(out) = x->inputs.at(in);
    if (rank >= 0) x->outputs[out].dims.assign(dims, dims + rank);
    return GR_OK;
  };
  a.ctx_set_error = [](GR_KernelContext* c, int32_t code, const char* msg) { Ctx(c)->error = Sink{code, msg}; };
  a.ctx_node_name = [](const GR_KernelContext* c) { return Ctx(c)->node.c_str(); };
  a.ctx_device = [](const GR_KernelContext* c) { return Ctx(c)->device; };
  a.ctx_stream = [](const GR_KernelContext* c) { return Ctx(c)->stream; };
  return a;
}

// The plugin, loaded once with the fake core.
class ToyPlugin {
 public:
  static ToyPlugin& Get() {
    static ToyPlugin* p = new ToyPlugin();  // kept loaded: its threads may outlive a test's objects
    return *p;
  }
  const GR_DeviceSpec* spec() const { return loaded_.device; }
  const GR_KernelSpec* Kernel(const std::string& op) const {
    for (const GR_KernelSpec& k : loaded_.kernels)
      if (op == k.op_name) return &k;
    return nullptr;
  }
  const Loaded& loaded() const { return loaded_; }

 private:
  ToyPlugin() {
    api_ = MakeApi();
    g_loaded = &loaded_;
    handle_ = dlopen(GRAPHRT_TOY_DEVICE_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      ADD_FAILURE() << dlerror();
      return;
    }
    auto init = reinterpret_cast<int32_t (*)(GR_PluginInitArgs*)>(dlsym(handle_, GR_PLUGIN_ENTRY_SYMBOL));
    GR_PluginInitArgs args;
    std::memset(&args, 0, sizeof(args));
    args.struct_size = sizeof(args);
    args.core_abi_major = GR_ABI_MAJOR;
    args.core_abi_minor = GR_ABI_MINOR;
    args.api = &api_;
    args.registrar = nullptr;
    const int32_t rc = init(&args);
    EXPECT_EQ(rc, GR_OK) << loaded_.registrar_error.message;
  }
  GR_CoreApi api_;
  Loaded loaded_;
  void* handle_ = nullptr;
};

// One XPU device and stream, made with the environment the test sets.
class XpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("GRAPHRT_TOY_XPU_COMMAND_DELAY_US", "1000", 1);
    spec_ = ToyPlugin::Get().spec();
    ASSERT_NE(spec_, nullptr);
    Sink s;
    ASSERT_EQ(spec_->create_device(spec_->backend_state, 0, &device_, AsSink(&s)), GR_OK) << s.message;
    ASSERT_EQ(spec_->create_stream(device_, &stream_, AsSink(&s)), GR_OK) << s.message;
  }
  void TearDown() override {
    if (stream_) {
      Sink s;
      spec_->sync_stream(device_, stream_, AsSink(&s));
      spec_->destroy_stream(device_, stream_);
    }
    for (void* p : blocks_) spec_->deallocate(device_, p, 0);
    if (device_) spec_->destroy_device(device_);
  }

  // Device tensor of `values`, uploaded on the stream (host copy kept alive).
  template <typename T>
  DeviceTensor Upload(const std::vector<int64_t>& dims, const std::vector<T>& values, int32_t dtype) {
    DeviceTensor t;
    t.dtype = dtype;
    t.dims = dims;
    t.bytes = values.size() * sizeof(T);
    t.data = spec_->allocate(device_, t.bytes, 64);
    EXPECT_NE(t.data, nullptr);
    blocks_.push_back(t.data);
    auto host = std::make_shared<std::vector<uint8_t>>(t.bytes);
    if (t.bytes) std::memcpy(host->data(), values.data(), t.bytes);
    uploads_.push_back(host);
    Sink s;
    EXPECT_EQ(spec_->copy_host_to_device(device_, stream_, t.data, host->data(), t.bytes, AsSink(&s)), GR_OK)
        << s.message;
    return t;
  }
  DeviceTensor Floats(const std::vector<int64_t>& dims, const std::vector<float>& v) {
    return Upload(dims, v, GR_FLOAT);
  }

  // Creates the kernel, runs compute (which only enqueues); the outputs in
  // *outs, the error of construction or compute returned.
  Sink Run(const std::string& op, const Attrs& attrs, const std::vector<DeviceTensor>& inputs,
           const std::vector<int32_t>& output_types, std::vector<DeviceTensor>* outs, void* stream = nullptr,
           bool use_stream = true) {
    const GR_KernelSpec* k = ToyPlugin::Get().Kernel(op);
    EXPECT_NE(k, nullptr) << "no XPU kernel for " << op;
    if (k == nullptr) return Sink{GR_NOT_FOUND, op};
    EXPECT_STREQ(k->device_type, "XPU");
    Construction kc{&attrs, "node_" + op, op, device_, {}};
    void* kernel = k->create(reinterpret_cast<GR_KernelConstruction*>(&kc), k->user_data);
    if (kernel == nullptr) return kc.error;
    Context ctx{"node_" + op, device_, use_stream ? (stream ? stream : stream_) : nullptr, spec_, inputs, {}, output_types, {}, {}};
    ctx.outputs.resize(output_types.size());
    ctx.owned.assign(output_types.size(), false);
    k->compute(kernel, reinterpret_cast<GR_KernelContext*>(&ctx));
    k->destroy(kernel);
    for (size_t i = 0; i < ctx.outputs.size(); ++i)
      if (ctx.owned[i] && ctx.outputs[i].data) blocks_.push_back(ctx.outputs[i].data);
    *outs = ctx.outputs;
    return ctx.error;
  }

  template <typename T>
  std::vector<T> Download(const DeviceTensor& t) {
    std::vector<T> out(t.bytes / sizeof(T));
    Sink s;
    EXPECT_EQ(spec_->copy_device_to_host(device_, stream_, out.data(), t.data, t.bytes, AsSink(&s)), GR_OK)
        << s.message;
    EXPECT_EQ(spec_->sync_stream(device_, stream_, AsSink(&s)), GR_OK) << s.message;
    return out;
  }

  const GR_DeviceSpec* spec_ = nullptr;
  void* device_ = nullptr;
  void* stream_ = nullptr;
  std::vector<void*> blocks_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> uploads_;
};

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
}

std::vector<float> Seq(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 11) + offset;
  return v;
}

TEST(ToyPluginTest, RegistersTheXpuDeviceAndEightKernels) {
  const Loaded& l = ToyPlugin::Get().loaded();
  ASSERT_NE(l.device, nullptr);
  EXPECT_STREQ(l.device->device_type, "XPU");
  EXPECT_EQ(l.device->flags & GR_DEVICE_HOST_MEMORY, 0u) << "its memory is not host memory";
  EXPECT_EQ(l.device->device_count(l.device->backend_state), 2);
  std::vector<std::string> ops;
  for (const GR_KernelSpec& k : l.kernels) ops.push_back(k.op_name);
  EXPECT_EQ(ops, (std::vector<std::string>{"MatMul", "AddV2", "Relu", "Identity", "Cast", "BiasAdd", "Shape",
                                           "Reshape"}));
  // Shape's output and Reshape's shape are for the host (TensorFlow's GPU
  // kernels declare them so).
  const GR_KernelSpec& shape = l.kernels[6];
  ASSERT_EQ(shape.num_host_memory_args, 1);
  EXPECT_STREQ(shape.host_memory_args[0], "output");
  const GR_KernelSpec& reshape = l.kernels[7];
  ASSERT_EQ(reshape.num_host_memory_args, 1);
  EXPECT_STREQ(reshape.host_memory_args[0], "shape");
}

TEST_F(XpuTest, MatMulAllTransposes) {
  const int64_t m = 3, k = 4, n = 5;
  const std::vector<float> a = Seq(m * k, 0.5f, -1.f), b = Seq(k * n, -0.25f, 2.f);
  // Reference: a is m x k, b is k x n.
  std::vector<float> want(m * n, 0.f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) want[i * n + j] += a[i * k + p] * b[p * n + j];
  auto transpose = [](const std::vector<float>& x, int64_t rows, int64_t cols) {
    std::vector<float> t(x.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
    return t;
  };
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      DeviceTensor da = ta ? Floats({k, m}, transpose(a, m, k)) : Floats({m, k}, a);
      DeviceTensor db = tb ? Floats({n, k}, transpose(b, k, n)) : Floats({k, n}, b);
      std::vector<DeviceTensor> out;
      Sink s = Run("MatMul", {{"transpose_a", ta}, {"transpose_b", tb}, {"T", GR_FLOAT}}, {da, db}, {GR_FLOAT}, &out);
      ASSERT_EQ(s.code, GR_OK) << s.message;
      EXPECT_EQ(out[0].dims, (std::vector<int64_t>{m, n}));
      ExpectNear(Download<float>(out[0]), want, "ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    }
}

TEST_F(XpuTest, MatMulErrors) {
  std::vector<DeviceTensor> out;
  Attrs attrs{{"transpose_a", false}, {"transpose_b", false}, {"T", GR_FLOAT}};
  Sink s = Run("MatMul", attrs, {Floats({2, 3}, Seq(6, 1, 0)), Floats({2, 3}, Seq(6, 1, 0))}, {GR_FLOAT}, &out);
  EXPECT_EQ(s.code, GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]"), std::string::npos) << s.message;
  s = Run("MatMul", attrs, {Floats({6}, Seq(6, 1, 0)), Floats({6, 1}, Seq(6, 1, 0))}, {GR_FLOAT}, &out);
  EXPECT_EQ(s.code, GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("must be matrices"), std::string::npos) << s.message;
  // No stream from the executor: a clear error naming the node, no crash.
  s = Run("MatMul", attrs, {Floats({2, 3}, Seq(6, 1, 0)), Floats({3, 2}, Seq(6, 1, 0))}, {GR_FLOAT}, &out, nullptr,
          /*use_stream=*/false);
  EXPECT_EQ(s.code, GR_FAILED_PRECONDITION);
  EXPECT_NE(s.message.find("node_MatMul"), std::string::npos) << s.message;
  // An empty product: the shape is right and nothing is enqueued.
  s = Run("MatMul", attrs, {Floats({0, 3}, {}), Floats({3, 2}, Seq(6, 1, 0))}, {GR_FLOAT}, &out);
  ASSERT_EQ(s.code, GR_OK) << s.message;
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{0, 2}));
}

TEST_F(XpuTest, MatMulWithEmptyInnerDimensionIsZeros) {
  std::vector<DeviceTensor> out;
  Sink s = Run("MatMul", {{"transpose_a", false}, {"transpose_b", false}, {"T", GR_FLOAT}},
               {Floats({2, 0}, {}), Floats({0, 3}, {})}, {GR_FLOAT}, &out);
  ASSERT_EQ(s.code, GR_OK) << s.message;
  EXPECT_EQ(Download<float>(out[0]), std::vector<float>(6, 0.f));
}

TEST_F(XpuTest, AddV2SameShapeAndSingleElement) {
  const std::vector<float> x = Seq(6, 1.5f, -3.f), y = Seq(6, -0.5f, 1.f);
  std::vector<DeviceTensor> out;
  Attrs t{{"T", GR_FLOAT}};
  ASSERT_EQ(Run("AddV2", t, {Floats({2, 3}, x), Floats({2, 3}, y)}, {GR_FLOAT}, &out).code, GR_OK);
  std::vector<float> want(6);
  for (int i = 0; i < 6; ++i) want[i] = x[i] + y[i];
  ExpectNear(Download<float>(out[0]), want, "same shape");
  // scalar + [2,3], and [2,3] + [1] (broadcast to [2,3]).
  ASSERT_EQ(Run("AddV2", t, {Floats({}, {10.f}), Floats({2, 3}, x)}, {GR_FLOAT}, &out).code, GR_OK);
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) want[i] = 10.f + x[i];
  ExpectNear(Download<float>(out[0]), want, "scalar + tensor");
  ASSERT_EQ(Run("AddV2", t, {Floats({2, 3}, x), Floats({1}, {-2.f})}, {GR_FLOAT}, &out).code, GR_OK);
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) want[i] = x[i] - 2.f;
  ExpectNear(Download<float>(out[0]), want, "tensor + [1]");
}

TEST_F(XpuTest, AddV2RefusesOtherBroadcasts) {
  std::vector<DeviceTensor> out;
  Attrs t{{"T", GR_FLOAT}};
  Sink s = Run("AddV2", t, {Floats({2}, {1, 2}), Floats({3}, {1, 2, 3})}, {GR_FLOAT}, &out);
  EXPECT_EQ(s.code, GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("Incompatible shapes: [2] vs. [3]"), std::string::npos) << s.message;
  s = Run("AddV2", t, {Floats({2, 1}, {1, 2}), Floats({1, 3}, {1, 2, 3})}, {GR_FLOAT}, &out);
  EXPECT_EQ(s.code, GR_UNIMPLEMENTED) << s.message;
  // A one-element operand of higher rank would change the output's rank.
  s = Run("AddV2", t, {Floats({1, 1, 1}, {1}), Floats({3}, {1, 2, 3})}, {GR_FLOAT}, &out);
  EXPECT_EQ(s.code, GR_UNIMPLEMENTED) << s.message;
}

TEST_F(XpuTest, Relu) {
  std::vector<DeviceTensor> out;
  const float nan = std::nanf("");
  ASSERT_EQ(Run("Relu", {{"T", GR_FLOAT}}, {Floats({5}, {-2.f, -0.f, 0.f, 3.5f, nan})}, {GR_FLOAT}, &out).code, GR_OK);
  const std::vector<float> got = Download<float>(out[0]);
  EXPECT_EQ(got[0], 0.f);
  EXPECT_EQ(got[1], 0.f);
  EXPECT_EQ(got[2], 0.f);
  EXPECT_EQ(got[3], 3.5f);
  EXPECT_TRUE(std::isnan(got[4])) << "NaN propagates, as in TensorFlow";
}

TEST_F(XpuTest, IdentitySharesTheDeviceBuffer) {
  const DeviceTensor in = Upload<int32_t>({3}, {7, -8, 9}, GR_INT32);
  std::vector<DeviceTensor> out;
  ASSERT_EQ(Run("Identity", {{"T", GR_INT32}}, {in}, {GR_INT32}, &out).code, GR_OK);
  EXPECT_EQ(out[0].data, in.data);
  EXPECT_EQ(Download<int32_t>(out[0]), (std::vector<int32_t>{7, -8, 9}));
}

TEST_F(XpuTest, CastFloatInt32BothWays) {
  const float nan = std::nanf("");
  std::vector<DeviceTensor> out;
  ASSERT_EQ(Run("Cast", {{"SrcT", GR_FLOAT}, {"DstT", GR_INT32}},
                {Floats({6}, {1.7f, -1.7f, 0.f, 3e9f, -3e9f, nan})}, {GR_INT32}, &out)
                .code,
            GR_OK);
  // Truncation toward zero; NaN and out-of-range give INT32_MIN (TF on x86-64).
  EXPECT_EQ(Download<int32_t>(out[0]), (std::vector<int32_t>{1, -1, 0, INT32_MIN, INT32_MIN, INT32_MIN}));
  const DeviceTensor ints = Upload<int32_t>({2, 2}, {-5, 0, 16777217, 42}, GR_INT32);
  ASSERT_EQ(Run("Cast", {{"SrcT", GR_INT32}, {"DstT", GR_FLOAT}}, {ints}, {GR_FLOAT}, &out).code, GR_OK);
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Download<float>(out[0]), (std::vector<float>{-5.f, 0.f, 16777216.f, 42.f}));
}

TEST_F(XpuTest, BiasAddNhwcAndNchw) {
  std::vector<DeviceTensor> out;
  const std::vector<float> x = Seq(12, 1.f, 0.f);
  ASSERT_EQ(Run("BiasAdd", {{"T", GR_FLOAT}, {"data_format", std::string("NHWC")}},
                {Floats({2, 2, 3}, x), Floats({3}, {100.f, 200.f, 300.f})}, {GR_FLOAT}, &out)
                .code,
            GR_OK);
  std::vector<float> want(12);
  for (int i = 0; i < 12; ++i) want[i] = x[i] + 100.f * static_cast<float>(i % 3 + 1);
  ExpectNear(Download<float>(out[0]), want, "NHWC");
  // NCHW [1, 3, 2, 2]: channel c is elements 4c..4c+3.
  ASSERT_EQ(Run("BiasAdd", {{"T", GR_FLOAT}, {"data_format", std::string("NCHW")}},
                {Floats({1, 3, 2, 2}, x), Floats({3}, {100.f, 200.f, 300.f})}, {GR_FLOAT}, &out)
                .code,
            GR_OK);
  for (int i = 0; i < 12; ++i) want[i] = x[i] + 100.f * static_cast<float>(i / 4 + 1);
  ExpectNear(Download<float>(out[0]), want, "NCHW");
  Sink s = Run("BiasAdd", {{"T", GR_FLOAT}}, {Floats({2, 3}, Seq(6, 1, 0)), Floats({2}, {1, 2})}, {GR_FLOAT}, &out);
  EXPECT_EQ(s.code, GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("Must provide as many biases"), std::string::npos) << s.message;
}

// MatMul -> BiasAdd -> Relu -> Cast, enqueued back to back with one sync:
// each kernel sees the one before it.
TEST_F(XpuTest, KernelChainOrdersOnTheStream) {
  const std::vector<float> a = {1, -2, 3, 4, 0.5f, -6}, b = {1, 0, -1, 2, 1, 0};  // [2,3] x [3,2]
  const std::vector<float> bias = {-3.f, 1.f};
  std::vector<DeviceTensor> mm, ba, re, ca;
  ASSERT_EQ(Run("MatMul", {{"transpose_a", false}, {"transpose_b", false}, {"T", GR_FLOAT}},
                {Floats({2, 3}, a), Floats({3, 2}, b)}, {GR_FLOAT}, &mm)
                .code,
            GR_OK);
  ASSERT_EQ(Run("BiasAdd", {{"T", GR_FLOAT}}, {mm[0], Floats({2}, bias)}, {GR_FLOAT}, &ba).code, GR_OK);
  ASSERT_EQ(Run("Relu", {{"T", GR_FLOAT}}, {ba[0]}, {GR_FLOAT}, &re).code, GR_OK);
  ASSERT_EQ(Run("Cast", {{"SrcT", GR_FLOAT}, {"DstT", GR_INT32}}, {re[0]}, {GR_INT32}, &ca).code, GR_OK);
  // By hand: a*b = [[1+2+3, 0-4+0], [4-0.5-6, 0+1+0]] = [[6, -4], [-2.5, 1]];
  // + bias = [[3, -3], [-5.5, 2]]; relu = [[3, 0], [0, 2]].
  EXPECT_EQ(Download<int32_t>(ca[0]), (std::vector<int32_t>{3, 0, 0, 2}));
}

TEST_F(XpuTest, MemoryLimitFromTheEnvironment) {
  void* dev = nullptr;
  Sink s;
  setenv("GRAPHRT_TOY_XPU_MEMORY_LIMIT", "1M", 1);
  const int32_t rc = spec_->create_device(spec_->backend_state, 1, &dev, AsSink(&s));
  unsetenv("GRAPHRT_TOY_XPU_MEMORY_LIMIT");
  ASSERT_EQ(rc, GR_OK) << s.message;
  GR_DeviceMemoryInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  ASSERT_EQ(spec_->memory_info(dev, &info, AsSink(&s)), GR_OK);
  EXPECT_EQ(info.bytes_limit, 1 << 20);
  EXPECT_EQ(info.total_bytes, 1 << 20);
  EXPECT_EQ(info.bytes_in_use, 0);
  EXPECT_EQ(spec_->allocate(dev, (1 << 20) + 1, 64), nullptr);
  void* p = spec_->allocate(dev, 1000, 64);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(spec_->memory_info(dev, &info, AsSink(&s)), GR_OK);
  EXPECT_EQ(info.bytes_in_use, 1024) << "1000 bytes take sixteen 64-byte units";
  EXPECT_EQ(info.free_bytes, (1 << 20) - 1024);
  spec_->deallocate(dev, p, 1000);
  // An older reader's struct: fields past its size are left alone.
  GR_DeviceMemoryInfo old;
  std::memset(&old, 0x5A, sizeof(old));
  old.struct_size = GR_SIZE_THROUGH(GR_DeviceMemoryInfo, free_bytes);
  ASSERT_EQ(spec_->memory_info(dev, &old, AsSink(&s)), GR_OK);
  EXPECT_EQ(old.total_bytes, 1 << 20);
  int64_t untouched;
  std::memset(&untouched, 0x5A, sizeof(untouched));
  EXPECT_EQ(old.bytes_in_use, untouched);
  spec_->destroy_device(dev);
}

TEST_F(XpuTest, BadEnvironmentIsAClearError) {
  void* dev = nullptr;
  Sink s;
  setenv("GRAPHRT_TOY_XPU_MEMORY_LIMIT", "lots", 1);
  EXPECT_EQ(spec_->create_device(spec_->backend_state, 1, &dev, AsSink(&s)), GR_INVALID_ARGUMENT);
  unsetenv("GRAPHRT_TOY_XPU_MEMORY_LIMIT");
  EXPECT_NE(s.message.find("GRAPHRT_TOY_XPU_MEMORY_LIMIT='lots'"), std::string::npos) << s.message;
  setenv("GRAPHRT_TOY_XPU_COMMAND_DELAY_US", "-5", 1);
  EXPECT_EQ(spec_->create_stream(device_, &dev, AsSink(&s)), GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("GRAPHRT_TOY_XPU_COMMAND_DELAY_US='-5'"), std::string::npos) << s.message;
  setenv("GRAPHRT_TOY_XPU_COMMAND_DELAY_US", "1000", 1);
  EXPECT_EQ(spec_->create_device(spec_->backend_state, 2, &dev, AsSink(&s)), GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("XPU ordinal 2"), std::string::npos) << s.message;
}

TEST_F(XpuTest, CopiesCheckTheirPointers) {
  Sink s;
  std::vector<uint8_t> host(16);
  void* d = spec_->allocate(device_, 16, 64);
  blocks_.push_back(d);
  // Host memory is not a device destination, device memory not a host source.
  EXPECT_EQ(spec_->copy_host_to_device(device_, stream_, host.data(), host.data(), 16, AsSink(&s)),
            GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("is not in its memory"), std::string::npos) << s.message;
  EXPECT_EQ(spec_->copy_host_to_device(device_, stream_, d, d, 16, AsSink(&s)), GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("is not host memory"), std::string::npos) << s.message;
  EXPECT_EQ(spec_->copy_device_to_host(device_, stream_, host.data(), host.data(), 16, AsSink(&s)),
            GR_INVALID_ARGUMENT);
  EXPECT_EQ(spec_->copy_device_to_device(device_, stream_, d, host.data(), 16, AsSink(&s)), GR_INVALID_ARGUMENT);
  EXPECT_EQ(spec_->copy_host_to_device(device_, nullptr, d, host.data(), 16, AsSink(&s)), GR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("not a stream of this device"), std::string::npos) << s.message;
  // None of that touched the stream.
  EXPECT_EQ(spec_->stream_status(device_, stream_, AsSink(&s)), GR_OK);
}

// A failure on stream A reaches stream B through an event B waits on: B's
// later work does not run either.
TEST_F(XpuTest, EventOfFailedWorkFailsTheWaiter) {
  Sink s;
  void* small = spec_->allocate(device_, 64, 64);
  void* big = spec_->allocate(device_, 4096, 64);
  blocks_.push_back(small);
  blocks_.push_back(big);
  ASSERT_EQ(spec_->copy_device_to_device(device_, stream_, big, small, 4096, AsSink(&s)), GR_OK);
  void* event = nullptr;
  ASSERT_EQ(spec_->create_event(device_, &event, AsSink(&s)), GR_OK);
  ASSERT_EQ(spec_->record_event(device_, stream_, event, AsSink(&s)), GR_OK);
  void* other = nullptr;
  ASSERT_EQ(spec_->create_stream(device_, &other, AsSink(&s)), GR_OK);
  ASSERT_EQ(spec_->stream_wait_event(device_, other, event, AsSink(&s)), GR_OK);
  std::vector<uint8_t> host(64, 1), out(64, 9);
  ASSERT_EQ(spec_->copy_device_to_host(device_, other, out.data(), small, 64, AsSink(&s)), GR_OK);
  EXPECT_EQ(spec_->sync_stream(device_, other, AsSink(&s)), GR_INTERNAL);
  EXPECT_NE(s.message.find("illegal address"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("waited on an event"), std::string::npos) << s.message;
  EXPECT_EQ(out, std::vector<uint8_t>(64, 9)) << "work behind the wait ran";
  spec_->destroy_stream(device_, other);
  spec_->destroy_event(device_, event);
  // This stream failed first: the fixture's sync reports it; make a new one.
  EXPECT_EQ(spec_->stream_status(device_, stream_, AsSink(&s)), GR_INTERNAL);
  spec_->destroy_stream(device_, stream_);
  ASSERT_EQ(spec_->create_stream(device_, &stream_, AsSink(&s)), GR_OK);
}

// Freed memory counts as in use until the stream work queued before the
// free has run (and is not handed out again before).
TEST_F(XpuTest, DeferredFreeCountsUntilTheStreamPasses) {
  Sink s;
  GR_DeviceMemoryInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  ASSERT_EQ(spec_->memory_info(device_, &info, AsSink(&s)), GR_OK);
  const int64_t base = info.bytes_in_use;
  void* p = spec_->allocate(device_, 4096, 64);
  graphrt::testing::StreamGate gate;
  ASSERT_EQ(spec_->host_callback(device_, stream_, &graphrt::testing::StreamGate::Callback, &gate, AsSink(&s)), GR_OK);
  std::vector<uint8_t> out(4096);
  ASSERT_EQ(spec_->copy_device_to_host(device_, stream_, out.data(), p, 4096, AsSink(&s)), GR_OK);
  spec_->deallocate(device_, p, 4096);
  ASSERT_EQ(spec_->memory_info(device_, &info, AsSink(&s)), GR_OK);
  EXPECT_EQ(info.bytes_in_use, base + 4096);
  void* q = spec_->allocate(device_, 4096, 64);
  blocks_.push_back(q);
  EXPECT_NE(q, p) << "reused while a read of it is queued";
  gate.Open();
  ASSERT_EQ(spec_->sync_stream(device_, stream_, AsSink(&s)), GR_OK) << s.message;
  ASSERT_EQ(spec_->memory_info(device_, &info, AsSink(&s)), GR_OK);
  EXPECT_EQ(info.bytes_in_use, base + 4096) << "only the second block is left";
}

}  // namespace
