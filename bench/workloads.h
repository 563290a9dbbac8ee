// The benchmark workloads W1..W5 as TensorFlow-1.x-style frozen GraphDefs.
//
// Same workloads as the peer benchmarks in ../shared/peers (torch_bench.py,
// export_onnx.py, ort/bench_ort.js): same shapes, same layers, and weights from
// the same distribution as PyTorch's default init (uniform(-1/sqrt(fan_in),
// +1/sqrt(fan_in)) for weights and biases of Linear and Conv2d), drawn from a
// fixed-seed PRNG of our own (splitmix64), so a graph is bit-identical on
// every machine and every run.
//
// The graphs use TF ops exactly as a frozen TF1 graph does: Placeholder inputs
// (with a `shape` attr), Const weights (binary `tensor_content`), MatMul +
// BiasAdd (+ Relu) for a dense layer, Conv2D (filter HWIO) + BiasAdd + Relu,
// MaxPool, Mean over H,W for the global average pool, Reshape to flatten and
// Softmax. Conv nets come in NHWC (TF's default, our benchmark figure) and
// NCHW (the peers' layout).
//
// Header-only so that the benchmark program (bench/workloads_bench.cc) and
// the unit test (tests/ops/bench_workloads_test.cc) share one definition.
#ifndef GRAPHRT_BENCH_WORKLOADS_H_
#define GRAPHRT_BENCH_WORKLOADS_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "graphrt/proto/graph.pb.h"

namespace graphrt {
namespace bench {

// ------------------------------------------------------------------ PRNG

// splitmix64: tiny, fast, and its output is fully specified (unlike
// std::uniform_real_distribution, whose results differ between libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi): 24 random mantissa bits.
  float Uniform(float lo, float hi) {
    const float u = static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
  }

 private:
  uint64_t state_;
};

// PyTorch's default init of nn.Linear / nn.Conv2d weights and biases (both
// end up uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))).
inline std::vector<float> TorchDefaultInit(int64_t count, int64_t fan_in, Rng* rng) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = rng->Uniform(-bound, bound);
  return v;
}

inline int64_t NumElementsOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The peers' deterministic input (export_onnx.py pattern()):
// x[i] = ((i * 7919) % 1000) / 1000 - 0.5 over the flat index.
inline std::vector<float> PatternValues(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(static_cast<double>((i * 7919) % 1000) / 1000.0 - 0.5);
  return v;
}

// ----------------------------------------------------------- graph builder

// Appends TF-style nodes to a GraphDef through graphrt's protos.
class GraphBuilder {
 public:
  GraphBuilder() {
    // A TF 1.13-era producer version, as in a graph frozen by that release.
    graph_.mutable_versions()->set_producer(27);
  }

  proto::NodeDef* Node(const std::string& name, const std::string& op,
                       const std::vector<std::string>& inputs) {
    proto::NodeDef* n = graph_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const auto& in : inputs) n->add_input(in);
    ops_.insert(op);
    return n;
  }

  static void SetType(proto::NodeDef* n, const std::string& key, proto::DataType t) {
    (*n->mutable_attr())[key].set_type(t);
  }
  static void SetInts(proto::NodeDef* n, const std::string& key, const std::vector<int64_t>& v) {
    auto* list = (*n->mutable_attr())[key].mutable_list();
    for (int64_t x : v) list->add_i(x);
  }
  static void SetString(proto::NodeDef* n, const std::string& key, const std::string& s) {
    (*n->mutable_attr())[key].set_s(s);
  }
  static void SetBool(proto::NodeDef* n, const std::string& key, bool b) {
    (*n->mutable_attr())[key].set_b(b);
  }
  static void SetShape(proto::TensorShapeProto* s, const std::vector<int64_t>& dims) {
    for (int64_t d : dims) s->add_dim()->set_size(d);
  }

  static void SetClass(proto::NodeDef* n, const std::string& colocate_with) {
    (*n->mutable_attr())["_class"].mutable_list()->add_s("loc:@" + colocate_with);
  }

  std::string Placeholder(const std::string& name, const std::vector<int64_t>& dims,
                          proto::DataType dtype = proto::DT_FLOAT) {
    proto::NodeDef* n = Node(name, "Placeholder", {});
    SetType(n, "dtype", dtype);
    SetShape((*n->mutable_attr())["shape"].mutable_shape(), dims);
    return name;
  }

  // A float Const with its values in tensor_content (little-endian float32,
  // as TF writes every non-splat constant of a frozen graph).
  std::string ConstFloat(const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values) {
    proto::NodeDef* n = Node(name, "Const", {});
    SetType(n, "dtype", proto::DT_FLOAT);
    proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(proto::DT_FLOAT);
    SetShape(t->mutable_tensor_shape(), dims);
    t->set_tensor_content(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return name;
  }

  std::string ConstInt32(const std::string& name, const std::vector<int32_t>& values) {
    proto::NodeDef* n = Node(name, "Const", {});
    SetType(n, "dtype", proto::DT_INT32);
    proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(proto::DT_INT32);
    SetShape(t->mutable_tensor_shape(), {static_cast<int64_t>(values.size())});
    for (int32_t v : values) t->add_int_val(v);
    return name;
  }

  // A scalar Const (float_val / int_val / int64_val, as TF writes scalars).
  std::string ConstScalar(const std::string& name, proto::DataType dtype, double value) {
    proto::NodeDef* n = Node(name, "Const", {});
    SetType(n, "dtype", dtype);
    proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(dtype);
    t->mutable_tensor_shape();
    if (dtype == proto::DT_FLOAT) t->add_float_val(static_cast<float>(value));
    else if (dtype == proto::DT_INT64) t->add_int64_val(static_cast<int64_t>(value));
    else t->add_int_val(static_cast<int32_t>(value));
    return name;
  }

  // Single-input float op with only the T attr (Relu, Softmax, ...).
  std::string Unary(const std::string& name, const std::string& op, const std::string& x) {
    SetType(Node(name, op, {x}), "T", proto::DT_FLOAT);
    return name;
  }

  std::string AddV2(const std::string& name, const std::string& x, const std::string& y) {
    SetType(Node(name, "AddV2", {x, y}), "T", proto::DT_FLOAT);
    return name;
  }

  std::string MatMul(const std::string& name, const std::string& a, const std::string& b,
                     bool transpose_a = false, bool transpose_b = false) {
    proto::NodeDef* n = Node(name, "MatMul", {a, b});
    SetType(n, "T", proto::DT_FLOAT);
    SetBool(n, "transpose_a", transpose_a);
    SetBool(n, "transpose_b", transpose_b);
    return name;
  }

  std::string BiasAdd(const std::string& name, const std::string& x, const std::string& bias,
                      const std::string& data_format) {
    proto::NodeDef* n = Node(name, "BiasAdd", {x, bias});
    SetType(n, "T", proto::DT_FLOAT);
    SetString(n, "data_format", data_format);
    return name;
  }

  // Conv2D with TF's attrs as a TF 1.13 graph has them (no explicit_paddings,
  // which later releases added with a default).
  std::string Conv2D(const std::string& name, const std::string& x, const std::string& filter,
                     const std::string& padding, const std::string& data_format) {
    proto::NodeDef* n = Node(name, "Conv2D", {x, filter});
    SetType(n, "T", proto::DT_FLOAT);
    SetInts(n, "strides", {1, 1, 1, 1});
    SetInts(n, "dilations", {1, 1, 1, 1});
    SetString(n, "padding", padding);
    SetString(n, "data_format", data_format);
    SetBool(n, "use_cudnn_on_gpu", true);
    return name;
  }

  // 2x2 window, stride 2, VALID.
  std::string MaxPool2x2(const std::string& name, const std::string& x, const std::string& data_format) {
    proto::NodeDef* n = Node(name, "MaxPool", {x});
    SetType(n, "T", proto::DT_FLOAT);
    const std::vector<int64_t> w = data_format == "NHWC" ? std::vector<int64_t>{1, 2, 2, 1}
                                                          : std::vector<int64_t>{1, 1, 2, 2};
    SetInts(n, "ksize", w);
    SetInts(n, "strides", w);
    SetString(n, "padding", "VALID");
    SetString(n, "data_format", data_format);
    return name;
  }

  std::string Mean(const std::string& name, const std::string& x, const std::vector<int32_t>& axes,
                   bool keep_dims) {
    const std::string idx = ConstInt32(name + "/reduction_indices", axes);
    proto::NodeDef* n = Node(name, "Mean", {x, idx});
    SetType(n, "T", proto::DT_FLOAT);
    SetType(n, "Tidx", proto::DT_INT32);
    SetBool(n, "keep_dims", keep_dims);
    return name;
  }

  std::string Reshape(const std::string& name, const std::string& x, const std::vector<int32_t>& shape) {
    const std::string s = ConstInt32(name + "/shape", shape);
    proto::NodeDef* n = Node(name, "Reshape", {x, s});
    SetType(n, "T", proto::DT_FLOAT);
    SetType(n, "Tshape", proto::DT_INT32);
    return name;
  }

  // tf.layers.dense: <name>/kernel [in,out], <name>/bias [out], MatMul,
  // BiasAdd, then Relu if asked. Returns the output node.
  std::string Dense(const std::string& name, const std::string& x, int64_t in, int64_t out, bool relu,
                    Rng* rng) {
    const std::string w = ConstFloat(name + "/kernel", {in, out}, TorchDefaultInit(in * out, in, rng));
    const std::string b = ConstFloat(name + "/bias", {out}, TorchDefaultInit(out, in, rng));
    std::string y = BiasAdd(name + "/BiasAdd", MatMul(name + "/MatMul", x, w), b, "NHWC");
    if (relu) y = Unary(name + "/Relu", "Relu", y);
    return y;
  }

  // tf.layers.conv2d (stride 1) + Relu: <name>/kernel HWIO [k,k,cin,cout].
  std::string ConvRelu(const std::string& name, const std::string& x, int64_t k, int64_t cin, int64_t cout,
                       const std::string& padding, const std::string& data_format, Rng* rng) {
    const int64_t fan_in = cin * k * k;
    const std::string w =
        ConstFloat(name + "/kernel", {k, k, cin, cout}, TorchDefaultInit(k * k * cin * cout, fan_in, rng));
    const std::string b = ConstFloat(name + "/bias", {cout}, TorchDefaultInit(cout, fan_in, rng));
    const std::string c = Conv2D(name + "/Conv2D", x, w, padding, data_format);
    return Unary(name + "/Relu", "Relu", BiasAdd(name + "/BiasAdd", c, b, data_format));
  }

  proto::GraphDef& graph() { return graph_; }
  const std::set<std::string>& ops() const { return ops_; }

 private:
  proto::GraphDef graph_;
  std::set<std::string> ops_;
};

// --------------------------------------------------------------- workloads

struct FeedSpec {
  std::string name;
  std::vector<int64_t> dims;
};

struct Workload {
  std::string name;                // as in the peers' RESULT lines: "W2_mlp"
  proto::GraphDef graph;
  std::vector<FeedSpec> feeds;     // all float32
  std::string fetch;               // the one output
  std::vector<int64_t> fetch_dims;
  double flops = 0;                // per Run: 2*MACs of conv/dense layers (peers' count); 0 for W1
  std::vector<std::string> ops;    // op types the graph uses (sorted)
};

inline Workload Finish(std::string name, GraphBuilder* b, std::vector<FeedSpec> feeds, std::string fetch,
                       std::vector<int64_t> fetch_dims, double flops) {
  Workload w;
  w.name = std::move(name);
  w.graph = std::move(b->graph());
  w.feeds = std::move(feeds);
  w.fetch = std::move(fetch);
  w.fetch_dims = std::move(fetch_dims);
  w.flops = flops;
  w.ops.assign(b->ops().begin(), b->ops().end());
  return w;
}

// W1: y = x + b + b + ... (n dependent AddV2 on float[4], x and b fed, so
// nothing can be folded). Nodes add_0 .. add_{n-1}; fetch the last.
inline Workload AddChain(int n) {
  GraphBuilder b;
  std::string prev = b.Placeholder("x", {4});
  b.Placeholder("b", {4});
  for (int i = 0; i < n; ++i) prev = b.AddV2("add_" + std::to_string(i), prev, "b");
  return Finish("W1_add_chain_N" + std::to_string(n), &b, {{"x", {4}}, {"b", {4}}}, prev, {4}, 0);
}

// W2: MLP 784-512-512-10 + Softmax, batch 64 by default.
inline Workload Mlp(int64_t batch = 64, uint64_t seed = 2) {
  GraphBuilder b;
  Rng rng(seed);
  std::string x = b.Placeholder("x", {batch, 784});
  x = b.Dense("dense", x, 784, 512, true, &rng);
  x = b.Dense("dense_1", x, 512, 512, true, &rng);
  x = b.Dense("dense_2", x, 512, 10, false, &rng);
  const std::string y = b.Unary("y", "Softmax", x);
  const double flops = 2.0 * batch * (784 * 512 + 512 * 512 + 512 * 10);
  return Finish("W2_mlp", &b, {{"x", {batch, 784}}}, y, {batch, 10}, flops);
}

// W3: C[m,n] = A[m,k] . B[k,n], both operands fed.
inline Workload MatMulWorkload(int64_t m, int64_t n, int64_t k) {
  GraphBuilder b;
  b.Placeholder("a", {m, k});
  b.Placeholder("b", {k, n});
  b.MatMul("y", "a", "b");
  return Finish("W3_matmul_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k), &b,
                {{"a", {m, k}}, {"b", {k, n}}}, "y", {m, n}, 2.0 * m * n * k);
}

inline std::vector<int64_t> ImageDims(const std::string& data_format, int64_t n, int64_t c, int64_t h,
                                      int64_t w) {
  return data_format == "NHWC" ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
}

// W4: conv3x3/64 (pad 1 = SAME) + ReLU + maxpool 2x2, conv3x3/128 + ReLU +
// maxpool 2x2, global average pool (Mean over H,W), dense 128->1000.
// Default: batch 8 of 224x224x3 (the peers' [8,3,224,224] in NCHW).
inline Workload SmallCnn(const std::string& data_format = "NHWC", int64_t batch = 8, int64_t hw = 224,
                         uint64_t seed = 4) {
  GraphBuilder b;
  Rng rng(seed);
  const auto in_dims = ImageDims(data_format, batch, 3, hw, hw);
  std::string x = b.Placeholder("x", in_dims);
  x = b.ConvRelu("conv2d", x, 3, 3, 64, "SAME", data_format, &rng);
  x = b.MaxPool2x2("max_pooling2d/MaxPool", x, data_format);
  x = b.ConvRelu("conv2d_1", x, 3, 64, 128, "SAME", data_format, &rng);
  x = b.MaxPool2x2("max_pooling2d_1/MaxPool", x, data_format);
  x = b.Mean("global_average_pooling2d/Mean", x,
             data_format == "NHWC" ? std::vector<int32_t>{1, 2} : std::vector<int32_t>{2, 3}, false);
  const std::string y = b.Dense("dense", x, 128, 1000, false, &rng);
  const int64_t h2 = hw / 2;
  const double flops = 2.0 * batch * (64.0 * hw * hw * 27 + 128.0 * h2 * h2 * 576 + 128 * 1000);
  std::string name = "W4_cnn";
  if (data_format != "NHWC") name += "_nchw";
  return Finish(name, &b, {{"x", in_dims}}, y, {batch, 1000}, flops);
}

// W5: LeNet-5 with ReLU and max-pool on 28x28x1: conv5x5/6 pad 2 (SAME),
// pool, conv5x5/16 VALID, pool, flatten (Reshape to [-1, 400]), dense
// 400-120-84-10 with ReLU between. Default batch 64.
// Flatten order follows the layout (H,W,C for NHWC; C,H,W for NCHW as in
// the PyTorch model): with random weights the two are the same network up to
// a permutation of the first dense layer's rows.
inline Workload LeNet5(const std::string& data_format = "NHWC", int64_t batch = 64, uint64_t seed = 5) {
  GraphBuilder b;
  Rng rng(seed);
  const auto in_dims = ImageDims(data_format, batch, 1, 28, 28);
  std::string x = b.Placeholder("x", in_dims);
  x = b.ConvRelu("conv2d", x, 5, 1, 6, "SAME", data_format, &rng);
  x = b.MaxPool2x2("max_pooling2d/MaxPool", x, data_format);
  x = b.ConvRelu("conv2d_1", x, 5, 6, 16, "VALID", data_format, &rng);
  x = b.MaxPool2x2("max_pooling2d_1/MaxPool", x, data_format);
  x = b.Reshape("flatten/Reshape", x, {-1, 400});
  x = b.Dense("dense", x, 400, 120, true, &rng);
  x = b.Dense("dense_1", x, 120, 84, true, &rng);
  const std::string y = b.Dense("dense_2", x, 84, 10, false, &rng);
  const double flops =
      2.0 * batch * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 150 + 400 * 120 + 120 * 84 + 84 * 10);
  std::string name = "W5_lenet";
  if (data_format != "NHWC") name += "_nchw";
  return Finish(name, &b, {{"x", in_dims}}, y, {batch, 10}, flops);
}

// The binary GraphDef with map entries (attrs) in key order, so the same
// graph always gives the same bytes (plain SerializeToString does not
// promise an order for maps).
inline std::string SerializeDeterministic(const proto::GraphDef& g) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    g.SerializeToCodedStream(&out);
  }
  return bytes;
}

// Every benchmark workload at its benchmark size, in a fixed order.
inline std::vector<Workload> AllWorkloads() {
  std::vector<Workload> all;
  all.push_back(AddChain(1));
  all.push_back(AddChain(1000));
  all.push_back(Mlp());
  all.push_back(MatMulWorkload(256, 256, 256));
  all.push_back(MatMulWorkload(1024, 1024, 1024));
  all.push_back(MatMulWorkload(4096, 4096, 1024));
  all.push_back(SmallCnn("NHWC"));
  all.push_back(SmallCnn("NCHW"));
  all.push_back(LeNet5("NHWC"));
  all.push_back(LeNet5("NCHW"));
  return all;
}

}  // namespace bench
}  // namespace graphrt

#endif  // GRAPHRT_BENCH_WORKLOADS_H_
