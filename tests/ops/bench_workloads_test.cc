// The benchmark workload graphs (bench/workloads.h): well-formed, identical
// on every generation, written and read back as binary GraphDefs, importable,
// and (where the ops are registered) computing what the PyTorch models of
// ../shared/peers/torch_bench.py compute, checked against naive references
// written here from the layer definitions (plain loops, double accumulation),
// with the weights read out of the graph's Const nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../bench/workloads.h"
#include "graphrt/core/graph_def_io.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "op_test_util.h"

namespace graphrt {
namespace testing {
namespace {

using bench::Workload;

// ------------------------------------------------------------- helpers

const proto::NodeDef* FindNode(const proto::GraphDef& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

// Values and dims of a float Const (tensor_content) of the graph.
std::vector<float> ConstValues(const proto::GraphDef& g, const std::string& name, Dims* dims = nullptr) {
  const proto::NodeDef* n = FindNode(g, name);
  EXPECT_NE(n, nullptr) << name;
  if (n == nullptr) return {};
  EXPECT_EQ(n->op(), "Const");
  const proto::TensorProto& t = n->attr().at("value").tensor();
  EXPECT_EQ(t.dtype(), proto::DT_FLOAT);
  Dims d;
  for (const auto& dim : t.tensor_shape().dim()) d.push_back(dim.size());
  if (dims) *dims = d;
  std::vector<float> v(static_cast<size_t>(NumElements(d)));
  EXPECT_EQ(t.tensor_content().size(), v.size() * sizeof(float)) << name;
  if (t.tensor_content().size() == v.size() * sizeof(float))
    std::memcpy(v.data(), t.tensor_content().data(), t.tensor_content().size());
  return v;
}

// Ops of `w` missing from the loaded plugins (no OpDef or no CPU kernel).
std::vector<std::string> MissingOps(const Workload& w) {
  LoadStandardPlugins();
  std::vector<std::string> missing;
  for (const std::string& op : w.ops) {
    bool cpu = false;
    if (Runtime::Global().ops().LookUp(op) != nullptr)
      for (const KernelRegistration* k : Runtime::Global().kernels().KernelsForOp(op))
        cpu = cpu || k->device_type == "CPU";
    if (!cpu) missing.push_back(op);
  }
  return missing;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

#define SKIP_IF_OPS_MISSING(W)                                                                       \
  do {                                                                                               \
    const std::vector<std::string> _missing = MissingOps(W);                                         \
    if (!_missing.empty())                                                                           \
      GTEST_SKIP() << (W).name << " needs ops the loaded plugins do not provide: " << Join(_missing); \
  } while (0)

Tensor FloatTensor(const Dims& dims, const std::vector<float>& v) {
  Tensor t(GR_FLOAT, TensorShape(dims));
  EXPECT_EQ(static_cast<size_t>(t.NumElements()), v.size());
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

// Creates a session on `w.graph` with `threads` threads and runs it once.
Tensor RunWorkload(const Workload& w, const Feeds& feeds, int threads) {
  std::unique_ptr<Session> s = CreateSession(w.graph, threads);
  if (!s) return Tensor();
  std::vector<Tensor> out;
  Status st = s->Run(feeds, {w.fetch}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok() || out.size() != 1) return Tensor();
  EXPECT_EQ(DimsOf(out[0]), w.fetch_dims);
  return out[0];
}

void ExpectClose(const Tensor& got, const std::vector<double>& want, double rel_tol) {
  ASSERT_EQ(got.dtype(), GR_FLOAT);
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  double scale = 0;
  for (double x : want) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], rel_tol * std::max(scale, 1e-3)) << "at flat index " << i;
}

// ------------------------------------------------- naive references (NHWC)

// An activation in NHWC: dims n, h, w, c; element (b, y, x, ch).
struct Act {
  int64_t n = 0, h = 0, w = 0, c = 0;
  std::vector<double> v;
  double& at(int64_t b, int64_t y, int64_t x, int64_t ch) { return v[((b * h + y) * w + x) * c + ch]; }
  double at(int64_t b, int64_t y, int64_t x, int64_t ch) const { return v[((b * h + y) * w + x) * c + ch]; }
};

// Input from the fed tensor's values in `data_format` layout.
Act FromLayout(const std::vector<float>& x, const std::string& data_format, int64_t n, int64_t c, int64_t h,
               int64_t w) {
  Act a{n, h, w, c, std::vector<double>(static_cast<size_t>(n * h * w * c))};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx) {
          const int64_t src = data_format == "NHWC" ? ((b * h + y) * w + xx) * c + ch : ((b * c + ch) * h + y) * w + xx;
          a.at(b, y, xx, ch) = x[static_cast<size_t>(src)];
        }
  return a;
}

// Stride-1 convolution, filter HWIO [k,k,cin,cout], + bias + ReLU. SAME pads
// (k-1)/2 before (TF's rule for stride 1); VALID pads nothing.
Act ConvBiasRelu(const Act& in, const std::vector<float>& f, const Dims& fd, const std::vector<float>& bias,
                 bool same) {
  const int64_t k = fd[0], cin = fd[2], cout = fd[3];
  EXPECT_EQ(cin, in.c);
  const int64_t pad = same ? (k - 1) / 2 : 0;
  const int64_t oh = same ? in.h : in.h - k + 1, ow = same ? in.w : in.w - k + 1;
  Act out{in.n, oh, ow, cout, std::vector<double>(static_cast<size_t>(in.n * oh * ow * cout))};
  for (int64_t b = 0; b < in.n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t o = 0; o < cout; ++o) {
          double acc = bias[o];
          for (int64_t ky = 0; ky < k; ++ky)
            for (int64_t kx = 0; kx < k; ++kx) {
              const int64_t iy = y + ky - pad, ix = x + kx - pad;
              if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
              for (int64_t i = 0; i < cin; ++i)
                acc += in.at(b, iy, ix, i) * f[static_cast<size_t>(((ky * k + kx) * cin + i) * cout + o)];
            }
          out.at(b, y, x, o) = std::max(acc, 0.0);
        }
  return out;
}

// 2x2 window, stride 2, VALID (odd trailing row/column dropped).
Act MaxPool2(const Act& in) {
  Act out{in.n, in.h / 2, in.w / 2, in.c, {}};
  out.v.resize(static_cast<size_t>(out.n * out.h * out.w * out.c));
  for (int64_t b = 0; b < in.n; ++b)
    for (int64_t y = 0; y < out.h; ++y)
      for (int64_t x = 0; x < out.w; ++x)
        for (int64_t ch = 0; ch < in.c; ++ch)
          out.at(b, y, x, ch) = std::max(std::max(in.at(b, 2 * y, 2 * x, ch), in.at(b, 2 * y, 2 * x + 1, ch)),
                                         std::max(in.at(b, 2 * y + 1, 2 * x, ch), in.at(b, 2 * y + 1, 2 * x + 1, ch)));
  return out;
}

// y[r, o] = relu?(sum_i x[r, i] w[i, o] + bias[o]), rows of `in` values.
std::vector<double> DenseRef(const std::vector<double>& x, int64_t rows, const std::vector<float>& w,
                             const Dims& wd, const std::vector<float>& bias, bool relu) {
  const int64_t in = wd[0], out = wd[1];
  EXPECT_EQ(static_cast<int64_t>(x.size()), rows * in);
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias[o];
      for (int64_t i = 0; i < in; ++i) acc += x[r * in + i] * w[i * out + o];
      y[r * out + o] = relu ? std::max(acc, 0.0) : acc;
    }
  return y;
}

std::vector<double> DenseLayer(const Workload& w, const std::string& name, const std::vector<double>& x,
                               int64_t rows, bool relu) {
  Dims wd, bd;
  const std::vector<float> k = ConstValues(w.graph, name + "/kernel", &wd);
  const std::vector<float> b = ConstValues(w.graph, name + "/bias", &bd);
  return DenseRef(x, rows, k, wd, b, relu);
}

Act ConvLayer(const Workload& w, const std::string& name, const Act& x, bool same) {
  Dims fd;
  const std::vector<float> f = ConstValues(w.graph, name + "/kernel", &fd);
  const std::vector<float> b = ConstValues(w.graph, name + "/bias");
  return ConvBiasRelu(x, f, fd, b, same);
}

std::vector<double> MlpRef(const Workload& w, const std::vector<float>& x, int64_t batch) {
  std::vector<double> h(x.begin(), x.end());
  h = DenseLayer(w, "dense", h, batch, true);
  h = DenseLayer(w, "dense_1", h, batch, true);
  h = DenseLayer(w, "dense_2", h, batch, false);
  for (int64_t r = 0; r < batch; ++r) {  // softmax over each row
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < 10; ++c) mx = std::max(mx, h[r * 10 + c]);
    for (int64_t c = 0; c < 10; ++c) sum += std::exp(h[r * 10 + c] - mx);
    for (int64_t c = 0; c < 10; ++c) h[r * 10 + c] = std::exp(h[r * 10 + c] - mx) / sum;
  }
  return h;
}

std::vector<double> CnnRef(const Workload& w, const std::vector<float>& x, const std::string& fmt, int64_t batch,
                           int64_t hw) {
  Act a = FromLayout(x, fmt, batch, 3, hw, hw);
  a = MaxPool2(ConvLayer(w, "conv2d", a, true));
  a = MaxPool2(ConvLayer(w, "conv2d_1", a, true));
  std::vector<double> gap(static_cast<size_t>(batch * a.c), 0.0);  // mean over H, W
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ch = 0; ch < a.c; ++ch) {
      double s = 0;
      for (int64_t y = 0; y < a.h; ++y)
        for (int64_t xx = 0; xx < a.w; ++xx) s += a.at(b, y, xx, ch);
      gap[b * a.c + ch] = s / static_cast<double>(a.h * a.w);
    }
  return DenseLayer(w, "dense", gap, batch, false);
}

std::vector<double> LeNetRef(const Workload& w, const std::vector<float>& x, const std::string& fmt, int64_t batch) {
  Act a = FromLayout(x, fmt, batch, 1, 28, 28);
  a = MaxPool2(ConvLayer(w, "conv2d", a, true));
  a = MaxPool2(ConvLayer(w, "conv2d_1", a, false));
  EXPECT_EQ(a.h * a.w * a.c, 400);
  std::vector<double> flat(static_cast<size_t>(batch * 400));  // in the graph's layout order
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ch = 0; ch < a.c; ++ch)
      for (int64_t y = 0; y < a.h; ++y)
        for (int64_t xx = 0; xx < a.w; ++xx) {
          const int64_t j = fmt == "NHWC" ? (y * a.w + xx) * a.c + ch : (ch * a.h + y) * a.w + xx;
          flat[b * 400 + j] = a.at(b, y, xx, ch);
        }
  std::vector<double> h = DenseLayer(w, "dense", flat, batch, true);
  h = DenseLayer(w, "dense_1", h, batch, true);
  return DenseLayer(w, "dense_2", h, batch, false);
}

// The conv-net references are only exercised once Conv2D/MaxPool/Mean land;
// check them on cases worked out by hand so that they are right already.
TEST(BenchWorkloads, NaiveReferencesOnHandWorkedCases) {
  // 1x3x3x1 input 1..9 (NHWC), or the same image as NCHW (C = 1: same order).
  const std::vector<float> img = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Act a = FromLayout(img, "NHWC", 1, 1, 3, 3);
  EXPECT_EQ(a.at(0, 1, 2, 0), 6);
  // Two channels, NCHW: channel 1 is the second plane.
  const Act b = FromLayout({1, 2, 3, 4, 10, 20, 30, 40}, "NCHW", 1, 2, 2, 2);
  EXPECT_EQ(b.at(0, 1, 0, 1), 30);
  EXPECT_EQ(b.at(0, 0, 1, 0), 2);
  // 3x3 all-ones filter, SAME: sums of the 3x3 neighbourhood, minus bias 20, ReLU.
  const std::vector<float> ones(9, 1.0f);
  Act c = ConvBiasRelu(a, ones, {3, 3, 1, 1}, {-20.0f}, true);
  ASSERT_EQ(c.h, 3);
  EXPECT_EQ(c.at(0, 0, 0, 0), 0);               // 1+2+4+5-20 < 0
  EXPECT_EQ(c.at(0, 1, 1, 0), 45 - 20);         // all nine
  EXPECT_EQ(c.at(0, 2, 2, 0), 5 + 6 + 8 + 9 - 20);
  // VALID: one output; HWIO indexing with 2 output channels (second = 2x).
  std::vector<float> two(18);
  for (int i = 0; i < 9; ++i) {
    two[i * 2] = 1.0f;
    two[i * 2 + 1] = 2.0f;
  }
  c = ConvBiasRelu(a, two, {3, 3, 1, 2}, {0.0f, 1.0f}, false);
  ASSERT_EQ(c.h, 1);
  EXPECT_EQ(c.at(0, 0, 0, 0), 45);
  EXPECT_EQ(c.at(0, 0, 0, 1), 91);
  // 2x2 max pool of 3x3 drops the last row and column.
  const Act p = MaxPool2(a);
  ASSERT_EQ(p.h, 1);
  EXPECT_EQ(p.at(0, 0, 0, 0), 5);
  // Dense: [1,2] x [[1,2,3],[4,5,6]] + [0,0,-100].
  const std::vector<double> d = DenseRef({1, 2}, 1, {1, 2, 3, 4, 5, 6}, {2, 3}, {0, 0, -100}, true);
  EXPECT_EQ(d, (std::vector<double>{9, 12, 0}));
}

// ------------------------------------------------------------- structure

TEST(BenchWorkloads, GraphsAreWellFormed) {
  for (const Workload& w : bench::AllWorkloads()) {
    SCOPED_TRACE(w.name);
    std::set<std::string> names, ops;
    for (const auto& n : w.graph.node()) {
      EXPECT_TRUE(names.insert(n.name()).second) << "duplicate node " << n.name();
      ops.insert(n.op());
    }
    for (const auto& n : w.graph.node())
      for (const auto& in : n.input()) EXPECT_TRUE(names.count(in)) << n.name() << " reads unknown " << in;
    EXPECT_EQ(std::vector<std::string>(ops.begin(), ops.end()), w.ops);
    EXPECT_TRUE(names.count(w.fetch));
    // Every feed is a float Placeholder whose shape attr is the fed shape.
    for (const auto& f : w.feeds) {
      const proto::NodeDef* p = FindNode(w.graph, f.name);
      ASSERT_NE(p, nullptr) << f.name;
      EXPECT_EQ(p->op(), "Placeholder");
      EXPECT_EQ(p->attr().at("dtype").type(), proto::DT_FLOAT);
      Dims d;
      for (const auto& dim : p->attr().at("shape").shape().dim()) d.push_back(dim.size());
      EXPECT_EQ(d, f.dims);
    }
    // Only Placeholders and Consts are sources; weights are tensor_content.
    for (const auto& n : w.graph.node()) {
      if (n.input_size() == 0) {
        EXPECT_TRUE(n.op() == "Placeholder" || n.op() == "Const") << n.name();
      }
      if (n.op() == "Const" && n.attr().at("dtype").type() == proto::DT_FLOAT) ConstValues(w.graph, n.name());
    }
  }
}

TEST(BenchWorkloads, ShapesOpsAndFlopsMatchThePeers) {
  // FLOPs per batch as in torch_bench.py / bench_ort.js.
  EXPECT_EQ(bench::Mlp().flops, 2.0 * 64 * (784 * 512 + 512 * 512 + 512 * 10));
  EXPECT_EQ(bench::SmallCnn().flops, 2.0 * 8 * (64.0 * 224 * 224 * 27 + 128.0 * 112 * 112 * 576 + 128 * 1000));
  EXPECT_EQ(bench::SmallCnn("NCHW").flops, bench::SmallCnn().flops);
  EXPECT_EQ(bench::LeNet5().flops, 2.0 * 64 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 150 + 400 * 120 + 120 * 84 + 84 * 10));
  EXPECT_NEAR(bench::SmallCnn().flops / 1e9, 16.19, 0.005);
  EXPECT_NEAR(bench::LeNet5().flops / 1e6, 53.3, 0.05);
  EXPECT_NEAR(bench::Mlp().flops / 1e6, 85.6, 0.05);
  EXPECT_EQ(bench::MatMulWorkload(4096, 4096, 1024).flops, 2.0 * 4096 * 4096 * 1024);

  // Layouts and shapes of the inputs and outputs.
  EXPECT_EQ(bench::SmallCnn().feeds[0].dims, (Dims{8, 224, 224, 3}));
  EXPECT_EQ(bench::SmallCnn("NCHW").feeds[0].dims, (Dims{8, 3, 224, 224}));
  EXPECT_EQ(bench::SmallCnn().fetch_dims, (Dims{8, 1000}));
  EXPECT_EQ(bench::LeNet5().feeds[0].dims, (Dims{64, 28, 28, 1}));
  EXPECT_EQ(bench::LeNet5("NCHW").feeds[0].dims, (Dims{64, 1, 28, 28}));
  EXPECT_EQ(bench::LeNet5().fetch_dims, (Dims{64, 10}));
  EXPECT_EQ(bench::Mlp().feeds[0].dims, (Dims{64, 784}));
  const Workload mm = bench::MatMulWorkload(4096, 4096, 1024);
  ASSERT_EQ(mm.feeds.size(), 2u);
  EXPECT_EQ(mm.feeds[0].dims, (Dims{4096, 1024}));  // A[M,K]
  EXPECT_EQ(mm.feeds[1].dims, (Dims{1024, 4096}));  // B[K,N]
  EXPECT_EQ(mm.name, "W3_matmul_4096x4096x1024");

  // The TF ops a frozen TF1 graph of these models holds.
  EXPECT_EQ(bench::AddChain(3).ops, (std::vector<std::string>{"AddV2", "Placeholder"}));
  EXPECT_EQ(bench::Mlp().ops, (std::vector<std::string>{"BiasAdd", "Const", "MatMul", "Placeholder", "Relu", "Softmax"}));
  EXPECT_EQ(bench::SmallCnn().ops, (std::vector<std::string>{"BiasAdd", "Const", "Conv2D", "MatMul", "MaxPool", "Mean",
                                                             "Placeholder", "Relu"}));
  EXPECT_EQ(bench::LeNet5().ops, (std::vector<std::string>{"BiasAdd", "Const", "Conv2D", "MatMul", "MaxPool",
                                                           "Placeholder", "Relu", "Reshape"}));
  const Workload chain = bench::AddChain(1000);
  EXPECT_EQ(chain.graph.node_size(), 1002);
  EXPECT_EQ(chain.fetch, "add_999");
  // Each Add reads the previous one and the fed b.
  for (int i = 1; i < 1000; ++i) {
    const proto::NodeDef& n = chain.graph.node(i + 2);
    ASSERT_EQ(n.input_size(), 2);
    EXPECT_EQ(n.input(0), "add_" + std::to_string(i - 1));
    EXPECT_EQ(n.input(1), "b");
  }
  // Conv attrs: SAME for the padded convs, VALID for LeNet's second, HWIO filters.
  const Workload lenet = bench::LeNet5();
  EXPECT_EQ(FindNode(lenet.graph, "conv2d/Conv2D")->attr().at("padding").s(), "SAME");
  EXPECT_EQ(FindNode(lenet.graph, "conv2d_1/Conv2D")->attr().at("padding").s(), "VALID");
  Dims fd;
  ConstValues(lenet.graph, "conv2d_1/kernel", &fd);
  EXPECT_EQ(fd, (Dims{5, 5, 6, 16}));
  EXPECT_EQ(FindNode(bench::SmallCnn("NCHW").graph, "max_pooling2d/MaxPool")->attr().at("data_format").s(), "NCHW");
}

TEST(BenchWorkloads, GenerationIsDeterministicAndWeightsFollowTorchInit) {
  const auto a = bench::AllWorkloads(), b = bench::AllWorkloads();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(bench::SerializeDeterministic(a[i].graph) == bench::SerializeDeterministic(b[i].graph)) << a[i].name;
  // Other seeds give other weights.
  EXPECT_NE(ConstValues(bench::Mlp(64, 2).graph, "dense/bias"), ConstValues(bench::Mlp(64, 3).graph, "dense/bias"));
  // Both layouts of a net have the same weights.
  EXPECT_EQ(ConstValues(bench::SmallCnn().graph, "conv2d_1/kernel"),
            ConstValues(bench::SmallCnn("NCHW").graph, "conv2d_1/kernel"));
  // uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)): inside the bound, and spread
  // over it (mean ~0, variance bound^2/3).
  struct Case {
    Workload w;
    std::string name;
    double fan_in;
  };
  const std::vector<Case> cases = {{bench::Mlp(), "dense/kernel", 784},    {bench::Mlp(), "dense_2/bias", 512},
                                   {bench::SmallCnn(), "conv2d/kernel", 27}, {bench::SmallCnn(), "conv2d_1/kernel", 576},
                                   {bench::LeNet5(), "conv2d/kernel", 25},  {bench::LeNet5(), "dense_1/kernel", 120}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.w.name + " " + c.name);
    const std::vector<float> v = ConstValues(c.w.graph, c.name);
    const double bound = 1.0 / std::sqrt(c.fan_in);
    double sum = 0, sq = 0, mx = 0;
    for (float x : v) {
      sum += x;
      sq += double(x) * x;
      mx = std::max(mx, std::fabs(double(x)));
    }
    const double n = static_cast<double>(v.size());
    EXPECT_LE(mx, bound);
    EXPECT_GT(mx, 0.8 * bound);
    EXPECT_NEAR(sum / n, 0.0, 4 * bound / std::sqrt(3 * n));
    EXPECT_NEAR(sq / n, bound * bound / 3, 0.25 * bound * bound / 3);
  }
  // The peers' pattern input.
  const std::vector<float> p = bench::PatternValues(3);
  EXPECT_FLOAT_EQ(p[0], -0.5f);
  EXPECT_FLOAT_EQ(p[1], 0.419f);   // 7919 % 1000 = 919
  EXPECT_FLOAT_EQ(p[2], 0.338f);   // 15838 % 1000 = 838
}

TEST(BenchWorkloads, BinaryRoundTripAndImport) {
  LoadStandardPlugins();
  const std::string dir = ::testing::TempDir();
  for (const Workload& w : bench::AllWorkloads()) {
    SCOPED_TRACE(w.name);
    const std::string path = dir + "/bench_workloads_test_" + w.name + ".pb";
    const std::string bytes = bench::SerializeDeterministic(w.graph);
    {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      ASSERT_NE(f, nullptr) << path;
      EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
      std::fclose(f);
    }
    proto::GraphDef back;
    Status s = ReadGraphDefFromFile(path, &back);
    ASSERT_TRUE(s.ok()) << s;
    std::remove(path.c_str());
    EXPECT_TRUE(bench::SerializeDeterministic(back) == bytes);
    EXPECT_EQ(back.node_size(), w.graph.node_size());
    // Import into a session when every op is defined; otherwise the import
    // must name an op that is missing.
    std::vector<std::string> undefined;
    for (const std::string& op : w.ops)
      if (Runtime::Global().ops().LookUp(op) == nullptr) undefined.push_back(op);
    std::unique_ptr<Session> session;
    ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
    s = session->Create(back);
    if (undefined.empty()) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_FALSE(s.ok());
      bool named = false;
      for (const std::string& op : undefined) named = named || Contains(s.message(), op);
      EXPECT_TRUE(named) << s << " (missing: " << Join(undefined) << ")";
    }
  }
}

// ------------------------------------------------------------------- runs

TEST(BenchWorkloads, W1AddChainRuns) {
  for (int n : {1, 7, 1000}) {
    const Workload w = bench::AddChain(n);
    SKIP_IF_OPS_MISSING(w);
    std::mt19937 rng(11 + n);
    const std::vector<float> x = RandomValues<float>(4, &rng), b = RandomValues<float>(4, &rng);
    std::vector<float> want(x);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 4; ++j) want[j] = want[j] + b[j];  // float, in the graph's order
    for (int threads : {1, 2}) {
      SCOPED_TRACE("N=" + std::to_string(n) + " threads=" + std::to_string(threads));
      const Tensor y = RunWorkload(w, {{"x", FloatTensor({4}, x)}, {"b", FloatTensor({4}, b)}}, threads);
      ExpectValuesEq<float>(y, want);
    }
  }
}

TEST(BenchWorkloads, W2MlpMatchesNaiveForwardPass) {
  for (int64_t batch : {64, 1, 3}) {
    const Workload w = bench::Mlp(batch);
    SKIP_IF_OPS_MISSING(w);
    const std::vector<float> x = bench::PatternValues(batch * 784);
    const std::vector<double> want = MlpRef(w, x, batch);
    for (int threads : {1, 2}) {
      SCOPED_TRACE("batch=" + std::to_string(batch) + " threads=" + std::to_string(threads));
      const Tensor y = RunWorkload(w, {{"x", FloatTensor({batch, 784}, x)}}, threads);
      ExpectClose(y, want, 1e-5);
      // The softmax rows are distributions.
      for (int64_t r = 0; r < batch; ++r) {
        double s = 0;
        for (int c = 0; c < 10; ++c) s += y.data<float>()[r * 10 + c];
        EXPECT_NEAR(s, 1.0, 1e-5);
      }
    }
  }
  // Same weights whatever the batch size.
  EXPECT_EQ(ConstValues(bench::Mlp(1).graph, "dense_1/kernel"), ConstValues(bench::Mlp().graph, "dense_1/kernel"));
}

TEST(BenchWorkloads, W2WrongFeedIsAnErrorAndTheSessionStillWorks) {
  const Workload w = bench::Mlp(2);
  SKIP_IF_OPS_MISSING(w);
  std::unique_ptr<Session> s = CreateSession(w.graph, 2);
  ASSERT_NE(s, nullptr);
  std::vector<Tensor> out;
  EXPECT_ERROR(s->Run({{"x", FloatTensor({2, 783}, bench::PatternValues(2 * 783))}}, {w.fetch}, {}, &out),
               Code::kInvalidArgument, "Matrix size-incompatible", "[2,783]");
  const std::vector<float> x = bench::PatternValues(2 * 784);
  Status st = s->Run({{"x", FloatTensor({2, 784}, x)}}, {w.fetch}, {}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ExpectClose(out[0], MlpRef(w, x, 2), 1e-5);
}

TEST(BenchWorkloads, W3MatMulMatchesNaiveProduct) {
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape& sh : std::vector<Shape>{{37, 23, 19}, {256, 256, 256}, {1, 5, 300}}) {
    const Workload w = bench::MatMulWorkload(sh.m, sh.n, sh.k);
    SKIP_IF_OPS_MISSING(w);
    std::mt19937 rng(static_cast<unsigned>(sh.m * 31 + sh.n));
    const std::vector<float> a = RandomValues<float>(sh.m * sh.k, &rng), b = RandomValues<float>(sh.k * sh.n, &rng);
    std::vector<double> want(static_cast<size_t>(sh.m * sh.n));
    for (int64_t i = 0; i < sh.m; ++i)
      for (int64_t j = 0; j < sh.n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < sh.k; ++p) acc += double(a[i * sh.k + p]) * b[p * sh.n + j];
        want[i * sh.n + j] = acc;
      }
    for (int threads : {1, 2}) {
      SCOPED_TRACE(w.name + " threads=" + std::to_string(threads));
      const Tensor y = RunWorkload(w, {{"a", FloatTensor({sh.m, sh.k}, a)}, {"b", FloatTensor({sh.k, sh.n}, b)}},
                                   threads);
      ExpectClose(y, want, 1e-5);
    }
  }
}

class ConvNetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvNetTest, W4SmallCnnMatchesNaiveForwardPass) {
  const std::string fmt = GetParam();
  struct Size {
    int64_t batch, hw;
  };
  // 13: odd sizes drop the last row/column in the VALID 2x2 pools; 40: big
  // enough for the kernels' multi-threaded paths.
  for (const Size& sz : std::vector<Size>{{1, 13}, {2, 40}}) {
    const Workload w = bench::SmallCnn(fmt, sz.batch, sz.hw);
    SKIP_IF_OPS_MISSING(w);
    const std::vector<float> x = bench::PatternValues(sz.batch * 3 * sz.hw * sz.hw);
    const std::vector<double> want = CnnRef(w, x, fmt, sz.batch, sz.hw);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(fmt + " hw=" + std::to_string(sz.hw) + " threads=" + std::to_string(threads));
      const Tensor y = RunWorkload(w, {{"x", FloatTensor(w.feeds[0].dims, x)}}, threads);
      ExpectClose(y, want, 1e-4);
    }
  }
}

TEST_P(ConvNetTest, W5LeNetMatchesNaiveForwardPass) {
  const std::string fmt = GetParam();
  for (int64_t batch : {3, 64}) {
    const Workload w = bench::LeNet5(fmt, batch);
    SKIP_IF_OPS_MISSING(w);
    const std::vector<float> x = bench::PatternValues(batch * 28 * 28);
    const std::vector<double> want = LeNetRef(w, x, fmt, batch);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(fmt + " batch=" + std::to_string(batch) + " threads=" + std::to_string(threads));
      const Tensor y = RunWorkload(w, {{"x", FloatTensor(w.feeds[0].dims, x)}}, threads);
      ExpectClose(y, want, 1e-4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConvNetTest, ::testing::Values("NHWC", "NCHW"));

}  // namespace
}  // namespace testing
}  // namespace graphrt
