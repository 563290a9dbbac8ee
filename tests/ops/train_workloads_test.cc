// The training graphs of bench/train_workloads.h (W6..W8): well-formed and
// reproducible, shaped as TF 1.13's tf.gradients + optimizer emit them, and
// (on small versions of each net) computing the right step: the MLP's loss,
// every gradient and the updated weights against a naive double-precision
// forward + backward written here; the conv nets' gradients against a central
// finite difference of the loss through the same graph (the variable's read
// tensor fed with a perturbed copy); the optimizers' updates against their
// documented formulas; and the loss going down over 20 steps on a fixed batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../bench/train_workloads.h"
#include "graphrt/core/kernel_registry.h"
#include "graphrt/core/op_registry.h"
#include "graphrt/core/runtime.h"
#include "op_test_util.h"

namespace graphrt {
namespace testing {
namespace {

using bench::OptimizerKind;
using bench::OptimizerSpec;
using bench::TrainVariable;
using bench::TrainWorkload;

const proto::NodeDef* FindNode(const proto::GraphDef& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

std::vector<std::string> Inputs(const proto::GraphDef& g, const std::string& name) {
  const proto::NodeDef* n = FindNode(g, name);
  EXPECT_NE(n, nullptr) << name;
  return n ? std::vector<std::string>(n->input().begin(), n->input().end()) : std::vector<std::string>{};
}

// Op types of `w` the loaded plugins lack (no OpDef or no CPU kernel).
std::string MissingOps(const TrainWorkload& w) {
  LoadStandardPlugins();
  std::string missing;
  for (const std::string& op : w.ops) {
    bool cpu = false;
    if (Runtime::Global().ops().LookUp(op) != nullptr)
      for (const KernelRegistration* k : Runtime::Global().kernels().KernelsForOp(op))
        cpu = cpu || k->device_type == "CPU";
    if (!cpu) missing += (missing.empty() ? "" : ", ") + op;
  }
  return missing;
}

#define SKIP_IF_OPS_MISSING(W)                                                                       \
  do {                                                                                               \
    const std::string _missing = MissingOps(W);                                                      \
    if (!_missing.empty()) GTEST_SKIP() << (W).name << " needs ops the plugins lack: " << _missing; \
  } while (0)

// A session on a training graph, initialised, with a fixed batch.
struct Trainer {
  const TrainWorkload& w;
  std::unique_ptr<Session> session;
  std::vector<float> x;
  std::vector<int64_t> labels;

  explicit Trainer(const TrainWorkload& wl, int threads = 1) : w(wl) {
    session = CreateSession(w.graph, threads);
    x = UniformFloats(bench::NumElementsOf(w.x.dims), 7);
    labels = bench::TrainLabels(w);
    if (session) {
      const Status s = session->Run({}, {}, {w.init}, nullptr);
      EXPECT_TRUE(s.ok()) << s;
    }
  }

  Feeds BatchFeeds() const {
    Tensor l(w.label_dtype == proto::DT_INT64 ? GR_INT64 : GR_INT32, TensorShape(w.labels.dims));
    for (size_t i = 0; i < labels.size(); ++i) {
      if (w.label_dtype == proto::DT_INT64) l.data<int64_t>()[i] = labels[i];
      else l.data<int32_t>()[i] = static_cast<int32_t>(labels[i]);
    }
    return {{"x", MakeTensor<float>(GR_FLOAT, w.x.dims, x)}, {"labels", l}};
  }

  // Runs `fetches` (and one training step when `step`).
  std::vector<Tensor> Run(const std::vector<std::string>& fetches, bool step, const Feeds& extra = {}) {
    Feeds feeds = BatchFeeds();
    feeds.insert(feeds.end(), extra.begin(), extra.end());
    std::vector<Tensor> out;
    const Status s = session->Run(feeds, fetches, step ? std::vector<std::string>{w.train} : std::vector<std::string>{},
                                  &out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  float Loss(const Feeds& extra = {}) {
    std::vector<Tensor> out = Run({w.loss}, false, extra);
    return out.empty() ? NAN : out[0].data<float>()[0];
  }

  std::map<std::string, std::vector<float>> Weights() {
    std::vector<std::string> names;
    for (const TrainVariable& v : w.variables) names.push_back(v.name + "/read");
    std::vector<Tensor> out = Run(names, false);
    std::map<std::string, std::vector<float>> m;
    for (size_t i = 0; i < out.size(); ++i) m[w.variables[i].name] = ToVector<float>(out[i]);
    return m;
  }

  // One step; returns the loss and fills `grads` (per variable) as the
  // Apply ops consumed them.
  float Step(std::map<std::string, std::vector<float>>* grads) {
    std::vector<std::string> fetches = {w.loss};
    for (const TrainVariable& v : w.variables) fetches.push_back(v.grad);
    std::vector<Tensor> out = Run(fetches, true);
    if (out.size() != fetches.size()) return NAN;
    for (size_t i = 0; i < w.variables.size(); ++i) (*grads)[w.variables[i].name] = ToVector<float>(out[i + 1]);
    return out[0].data<float>()[0];
  }
};

// ------------------------------------------------------------- the graphs

std::string OpOfTensor(const std::string& t) { return t.substr(0, t.find(':')); }

TEST(TrainWorkloads, GraphsAreReproducibleAndWellFormed) {
  for (const TrainWorkload& w : bench::AllTrainWorkloads()) {
    SCOPED_TRACE(w.name);
    const TrainWorkload again = w.name == "W6_mlp_train"     ? bench::MlpTrain()
                                : w.name == "W7_lenet_train" ? bench::LeNet5Train()
                                                             : bench::SmallCnnTrain();
    EXPECT_EQ(bench::SerializeDeterministic(w.graph), bench::SerializeDeterministic(again.graph));
    std::set<std::string> names;
    for (const auto& n : w.graph.node()) EXPECT_TRUE(names.insert(n.name()).second) << "duplicate " << n.name();
    for (const auto& n : w.graph.node())
      for (const std::string& in : n.input()) {
        std::string op = in[0] == '^' ? in.substr(1) : in.substr(0, in.find(':'));
        EXPECT_TRUE(names.count(op)) << n.name() << " reads missing " << in;
      }
    for (const TrainVariable& v : w.variables) EXPECT_TRUE(names.count(OpOfTensor(v.grad))) << v.name;
    EXPECT_EQ(w.step_flops, 3 * w.forward_flops);
  }
}

TEST(TrainWorkloads, BenchmarkSizesAndOptimizersAreThePeers) {
  const std::vector<TrainWorkload> all = bench::AllTrainWorkloads();
  ASSERT_EQ(all.size(), 3u);
  // The peers' FLOP counts of W2, W5, W4 (bench/README.md): forward only.
  EXPECT_DOUBLE_EQ(all[0].forward_flops, 2.0 * 64 * (784 * 512 + 512 * 512 + 512 * 10));
  EXPECT_DOUBLE_EQ(all[1].forward_flops, 2.0 * 64 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 150 + 400 * 120 + 120 * 84 + 84 * 10));
  EXPECT_DOUBLE_EQ(all[2].forward_flops, 2.0 * 8 * (64.0 * 224 * 224 * 27 + 128.0 * 112 * 112 * 576 + 128 * 1000));
  EXPECT_EQ(all[0].optimizer.kind, OptimizerKind::kAdam);
  EXPECT_FLOAT_EQ(all[0].optimizer.learning_rate, 1e-3f);
  for (int i : {1, 2}) {
    EXPECT_EQ(all[i].optimizer.kind, OptimizerKind::kMomentum);
    EXPECT_FLOAT_EQ(all[i].optimizer.learning_rate, 0.01f);
    EXPECT_FLOAT_EQ(all[i].optimizer.momentum, 0.9f);
  }
  EXPECT_EQ(all[0].x.dims, (Dims{64, 784}));
  EXPECT_EQ(all[1].x.dims, (Dims{64, 28, 28, 1}));
  EXPECT_EQ(all[2].x.dims, (Dims{8, 224, 224, 3}));
  EXPECT_EQ(all[2].classes, 1000);
  // Initial weights are W2's / W5's / W4's (same seeds and draw order).
  const std::vector<bench::Workload> fwd = {bench::Mlp(), bench::LeNet5(), bench::SmallCnn()};
  for (int i = 0; i < 3; ++i)
    for (const TrainVariable& v : all[i].variables) {
      const proto::NodeDef* init = FindNode(all[i].graph, v.name + "/Initializer/Const");
      const proto::NodeDef* c = FindNode(fwd[i].graph, v.name);
      ASSERT_TRUE(init && c) << v.name;
      EXPECT_EQ(init->attr().at("value").tensor().tensor_content(), c->attr().at("value").tensor().tensor_content())
          << v.name;
    }
}

TEST(TrainWorkloads, NodesAreTheOnesTfEmits) {
  const TrainWorkload w = bench::MlpTrain();
  const proto::GraphDef& g = w.graph;
  // grad_a = grad . W^T, grad_b = a^T . grad, gated by a tuple.
  const proto::NodeDef* mm = FindNode(g, "gradients/dense_1/MatMul_grad/MatMul");
  const proto::NodeDef* mm1 = FindNode(g, "gradients/dense_1/MatMul_grad/MatMul_1");
  ASSERT_TRUE(mm && mm1);
  EXPECT_FALSE(mm->attr().at("transpose_a").b());
  EXPECT_TRUE(mm->attr().at("transpose_b").b());
  EXPECT_TRUE(mm1->attr().at("transpose_a").b());
  EXPECT_EQ(Inputs(g, "gradients/dense_1/MatMul_grad/MatMul"),
            (std::vector<std::string>{"gradients/dense_1/BiasAdd_grad/tuple/control_dependency", "dense_1/kernel/read"}));
  EXPECT_EQ(Inputs(g, "gradients/dense_1/MatMul_grad/MatMul_1"),
            (std::vector<std::string>{"dense/Relu", "gradients/dense_1/BiasAdd_grad/tuple/control_dependency"}));
  EXPECT_EQ(Inputs(g, "gradients/dense_1/MatMul_grad/tuple/group_deps"),
            (std::vector<std::string>{"^gradients/dense_1/MatMul_grad/MatMul", "^gradients/dense_1/MatMul_grad/MatMul_1"}));
  EXPECT_EQ(Inputs(g, "gradients/dense_1/Relu_grad/ReluGrad"),
            (std::vector<std::string>{"gradients/dense_2/MatMul_grad/tuple/control_dependency", "dense_1/Relu"}));
  EXPECT_EQ(Inputs(g, "gradients/SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits_grad/mul"),
            (std::vector<std::string>{
                "gradients/SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits_grad/ExpandDims",
                "gradients/SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits_grad/"
                "PreventGradient"}));
  EXPECT_EQ(Inputs(g, "Adam/update_dense/kernel/ApplyAdam"),
            (std::vector<std::string>{"dense/kernel", "dense/kernel/Adam", "dense/kernel/Adam_1", "beta1_power/read",
                                      "beta2_power/read", "Adam/learning_rate", "Adam/beta1", "Adam/beta2",
                                      "Adam/epsilon", "gradients/dense/MatMul_grad/tuple/control_dependency_1"}));
  // beta1_power colocates with the first variable by name (dense/bias) and
  // is multiplied after every Apply op.
  EXPECT_EQ(FindNode(g, "beta1_power")->attr().at("_class").list().s(0), "loc:@dense/bias");
  const std::vector<std::string> mul = Inputs(g, "Adam/mul");
  EXPECT_EQ(mul.size(), 2 + w.variables.size());
  EXPECT_EQ(Inputs(g, "Adam/Assign"), (std::vector<std::string>{"beta1_power", "Adam/mul"}));
  EXPECT_EQ(Inputs(g, "Adam"), (std::vector<std::string>{"global_step", "Adam/value", "^Adam/update"}));
  EXPECT_EQ(Inputs(g, "train"), (std::vector<std::string>{"^Adam"}));
  // 6 model variables, their 12 Adam slots, the 2 beta powers, global_step.
  EXPECT_EQ(Inputs(g, "init").size(), 6u + 12u + 2u + 1u);

  // The global average pool's gradient: reduced_shape + _safe_shape_div.
  const TrainWorkload cnn = bench::SmallCnnTrain(2, 8, 4, 6, 5);
  const std::string s = "gradients/global_average_pooling2d/Mean_grad/";
  EXPECT_EQ(Inputs(cnn.graph, s + "DynamicStitch"),
            (std::vector<std::string>{s + "range", s + "mod", s + "Shape", s + "Fill"}));
  EXPECT_EQ(Inputs(cnn.graph, s + "Tile"), (std::vector<std::string>{s + "Reshape", s + "floordiv"}));
  EXPECT_EQ(FindNode(cnn.graph, s + "Const")->attr().at("value").tensor().float_val(0), 4.0f);  // 2x2 averaged
  EXPECT_EQ(Inputs(cnn.graph, "gradients/conv2d_1/Conv2D_grad/Conv2DBackpropFilter"),
            (std::vector<std::string>{"max_pooling2d/MaxPool", "gradients/conv2d_1/Conv2D_grad/ShapeN:1",
                                      "gradients/conv2d_1/BiasAdd_grad/tuple/control_dependency"}));
  EXPECT_EQ(FindNode(cnn.graph, "Momentum/update_conv2d/kernel/ApplyMomentum")->input(4), "Momentum/momentum");
}

// ------------------------------------------------------- MLP: naive reference

// Forward + backward of the MLP in double, from the weights and the batch.
struct MlpReference {
  double loss = 0;
  std::map<std::string, std::vector<double>> grads;
};

MlpReference MlpForwardBackward(const TrainWorkload& w, const std::map<std::string, std::vector<float>>& p,
                                const std::vector<float>& x, const std::vector<int64_t>& labels) {
  const std::vector<std::string> layers = {"dense", "dense_1", "dense_2"};
  const int64_t batch = w.x.dims[0];
  std::vector<std::vector<double>> acts = {std::vector<double>(x.begin(), x.end())};
  std::vector<int64_t> widths = {w.x.dims[1]};
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::vector<float>& k = p.at(layers[l] + "/kernel");
    const std::vector<float>& b = p.at(layers[l] + "/bias");
    const int64_t in = widths.back(), out = static_cast<int64_t>(b.size());
    std::vector<double> y(static_cast<size_t>(batch * out));
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t o = 0; o < out; ++o) {
        double acc = b[o];
        for (int64_t i = 0; i < in; ++i) acc += acts.back()[r * in + i] * k[i * out + o];
        y[r * out + o] = l + 1 < layers.size() ? std::max(acc, 0.0) : acc;
      }
    acts.push_back(y);
    widths.push_back(out);
  }
  MlpReference ref;
  const int64_t c = widths.back();
  std::vector<double> g(static_cast<size_t>(batch * c));  // d loss / d logits
  for (int64_t r = 0; r < batch; ++r) {
    const double* z = &acts.back()[r * c];
    const double m = *std::max_element(z, z + c);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(z[j] - m);
    ref.loss += (std::log(sum) + m - z[labels[r]]) / batch;
    for (int64_t j = 0; j < c; ++j) g[r * c + j] = (std::exp(z[j] - m) / sum - (j == labels[r])) / batch;
  }
  for (size_t l = layers.size(); l-- > 0;) {
    const int64_t in = widths[l], out = widths[l + 1];
    const std::vector<double>& a = acts[l];
    if (l + 1 < layers.size())  // ReLU: pass where the output is positive
      for (size_t i = 0; i < g.size(); ++i)
        if (acts[l + 1][i] <= 0) g[i] = 0;
    std::vector<double> gk(static_cast<size_t>(in * out)), gb(static_cast<size_t>(out)), ga(a.size());
    const std::vector<float>& k = p.at(layers[l] + "/kernel");
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t o = 0; o < out; ++o) {
        gb[o] += g[r * out + o];
        for (int64_t i = 0; i < in; ++i) {
          gk[i * out + o] += a[r * in + i] * g[r * out + o];
          ga[r * in + i] += g[r * out + o] * k[i * out + o];
        }
      }
    ref.grads[layers[l] + "/kernel"] = gk;
    ref.grads[layers[l] + "/bias"] = gb;
    g = ga;
  }
  return ref;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * std::max(scale, 1e-6)) << what << " at " << i;
}

// The optimizer's update of one variable in double (slots in `state`),
// TF's formulas (tf_behaviours.md section 11); `t` is the 1-based step.
std::vector<double> ApplyReference(const OptimizerSpec& o, const std::vector<float>& var, const std::vector<float>& grad,
                                   int t, std::vector<std::vector<double>>* state) {
  std::vector<double> v(var.begin(), var.end());
  if (state->empty()) state->assign(2, std::vector<double>(var.size(), 0.0));
  auto& m = (*state)[0];
  auto& s = (*state)[1];
  for (size_t i = 0; i < v.size(); ++i) {
    const double g = grad[i];
    switch (o.kind) {
      case OptimizerKind::kGradientDescent:
        v[i] -= o.learning_rate * g;
        break;
      case OptimizerKind::kMomentum:
        m[i] = m[i] * o.momentum + g;
        v[i] -= o.learning_rate * m[i];
        break;
      case OptimizerKind::kAdam: {
        const double b1p = std::pow(static_cast<double>(o.beta1), t), b2p = std::pow(static_cast<double>(o.beta2), t);
        const double lr_t = o.learning_rate * std::sqrt(1 - b2p) / (1 - b1p);
        m[i] += (g - m[i]) * (1 - o.beta1);
        s[i] += (g * g - s[i]) * (1 - o.beta2);
        v[i] -= lr_t * m[i] / (std::sqrt(s[i]) + o.epsilon);
        break;
      }
    }
  }
  return v;
}

const char* Name(OptimizerKind k) {
  return k == OptimizerKind::kAdam ? "Adam" : k == OptimizerKind::kMomentum ? "Momentum" : "GradientDescent";
}

// The check of one step's loss and gradients, given the weights it started
// from and the batch.
using Weights = std::map<std::string, std::vector<float>>;
using StepCheck = std::function<void(const Weights& before, const std::vector<float>& x,
                                     const std::vector<int64_t>& labels, float loss, const Weights& grads)>;

// Three steps: each step's loss and gradients through `check`, the weights
// after each step against the optimizer's formula applied to the fetched
// gradients, and global_step counting the steps.
void CheckSteps(const TrainWorkload& w, const StepCheck& check) {
  SKIP_IF_OPS_MISSING(w);
  Trainer t(w);
  ASSERT_TRUE(t.session);
  std::map<std::string, std::vector<std::vector<double>>> state;
  std::map<std::string, std::vector<float>> before = t.Weights();
  for (int step = 1; step <= 3; ++step) {
    SCOPED_TRACE(std::string(Name(w.optimizer.kind)) + " step " + std::to_string(step));
    std::map<std::string, std::vector<float>> grads;
    const float loss = t.Step(&grads);
    check(before, t.x, t.labels, loss, grads);
    const std::map<std::string, std::vector<float>> after = t.Weights();
    for (const TrainVariable& v : w.variables) {
      const std::vector<double> want = ApplyReference(w.optimizer, before[v.name], grads[v.name], step, &state[v.name]);
      ExpectNear(after.at(v.name), want, 1e-5, v.name + " after the update");
      EXPECT_NE(after.at(v.name), before[v.name]) << v.name << " did not change";
    }
    before = after;
  }
  std::vector<Tensor> gs = t.Run({w.global_step}, false);
  ASSERT_EQ(gs.size(), 1u);
  EXPECT_EQ(gs[0].data<int64_t>()[0], 3);
}

// The small MLP's loss and every gradient against the naive reference.
void CheckMlpSteps(const OptimizerSpec& opt) {
  const TrainWorkload w = bench::MlpTrain(4, 6, 5, 3, opt);
  CheckSteps(w, [&](const Weights& before, const std::vector<float>& x, const std::vector<int64_t>& labels, float loss,
                    const Weights& grads) {
    const MlpReference ref = MlpForwardBackward(w, before, x, labels);
    EXPECT_NEAR(loss, ref.loss, 1e-5 * std::max(1.0, ref.loss));
    for (const TrainVariable& v : w.variables) ExpectNear(grads.at(v.name), ref.grads.at(v.name), 1e-4, v.grad);
  });
}

TEST(TrainWorkloads, MlpStepMatchesNaiveReferenceGradientDescent) { CheckMlpSteps(bench::GradientDescent(0.5f)); }
TEST(TrainWorkloads, MlpStepMatchesNaiveReferenceMomentum) { CheckMlpSteps(bench::Momentum(0.1f, 0.9f)); }
TEST(TrainWorkloads, MlpStepMatchesNaiveReferenceAdam) { CheckMlpSteps(bench::Adam(0.01f)); }

TEST(TrainWorkloads, Int64LabelsGiveTheSameStep) {
  bench::NetSpec n;
  const TrainWorkload w32 = bench::MlpTrain(4, 6, 5, 3, bench::GradientDescent(0.5f));
  SKIP_IF_OPS_MISSING(w32);
  n.name = "mlp64";
  n.input_dims = {4, 6};
  n.classes = 3;
  n.layers = {bench::DenseLayer("dense", 6, 5, true), bench::DenseLayer("dense_1", 5, 5, true),
              bench::DenseLayer("dense_2", 5, 3, false)};
  n.seed = 2;
  n.optimizer = bench::GradientDescent(0.5f);
  n.label_dtype = proto::DT_INT64;
  const TrainWorkload w64 = bench::BuildTrainWorkload(n);
  Trainer a(w32), b(w64);
  std::map<std::string, std::vector<float>> ga, gb;
  EXPECT_EQ(a.Step(&ga), b.Step(&gb));
  EXPECT_EQ(ga, gb);
}

// ------------------------------------------ conv nets: finite differences

// The loss of a net (NHWC, stride-1 convolutions with ReLU, 2x2 max pools,
// mean over H,W, flatten, dense layers) in double, written from the layer
// definitions: the reference the finite differences run on, where a step of
// 1e-6 crosses no ReLU or max-pool kink in practice (in float through the
// graph, a step large enough to beat rounding crosses several).
double NaiveLoss(const TrainWorkload& w, const std::map<std::string, std::vector<double>>& p,
                 const std::vector<float>& input, const std::vector<int64_t>& labels) {
  std::vector<double> a(input.begin(), input.end());
  Dims d = w.x.dims;
  for (const bench::LayerSpec& l : w.layers) {
    std::vector<double> y;
    switch (l.kind) {
      case bench::LayerSpec::kDense: {
        const std::vector<double>& k = p.at(l.name + "/kernel");
        const std::vector<double>& b = p.at(l.name + "/bias");
        y.assign(static_cast<size_t>(d[0] * l.out), 0.0);
        for (int64_t r = 0; r < d[0]; ++r)
          for (int64_t o = 0; o < l.out; ++o) {
            double acc = b[o];
            for (int64_t i = 0; i < l.in; ++i) acc += a[r * l.in + i] * k[i * l.out + o];
            y[r * l.out + o] = l.relu ? std::max(acc, 0.0) : acc;
          }
        d = {d[0], l.out};
        break;
      }
      case bench::LayerSpec::kConv: {
        const std::vector<double>& k = p.at(l.name + "/kernel");
        const std::vector<double>& b = p.at(l.name + "/bias");
        const bool same = l.padding == "SAME";
        const int64_t pad = same ? (l.k - 1) / 2 : 0;
        const int64_t oh = same ? d[1] : d[1] - l.k + 1, ow = same ? d[2] : d[2] - l.k + 1;
        y.assign(static_cast<size_t>(d[0] * oh * ow * l.out), 0.0);
        for (int64_t n = 0; n < d[0]; ++n)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
              for (int64_t o = 0; o < l.out; ++o) {
                double acc = b[o];
                for (int64_t ky = 0; ky < l.k; ++ky)
                  for (int64_t kx = 0; kx < l.k; ++kx) {
                    const int64_t iy = oy + ky - pad, ix = ox + kx - pad;
                    if (iy < 0 || iy >= d[1] || ix < 0 || ix >= d[2]) continue;
                    for (int64_t i = 0; i < l.in; ++i)
                      acc += a[((n * d[1] + iy) * d[2] + ix) * l.in + i] * k[((ky * l.k + kx) * l.in + i) * l.out + o];
                  }
                y[((n * oh + oy) * ow + ox) * l.out + o] = std::max(acc, 0.0);
              }
        d = {d[0], oh, ow, l.out};
        break;
      }
      case bench::LayerSpec::kMaxPool: {
        const int64_t oh = d[1] / 2, ow = d[2] / 2, c = d[3];
        y.assign(static_cast<size_t>(d[0] * oh * ow * c), 0.0);
        for (int64_t n = 0; n < d[0]; ++n)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox)
              for (int64_t ch = 0; ch < c; ++ch) {
                double m = -INFINITY;
                for (int64_t dy = 0; dy < 2; ++dy)
                  for (int64_t dx = 0; dx < 2; ++dx)
                    m = std::max(m, a[((n * d[1] + 2 * oy + dy) * d[2] + 2 * ox + dx) * c + ch]);
                y[((n * oh + oy) * ow + ox) * c + ch] = m;
              }
        d = {d[0], oh, ow, c};
        break;
      }
      case bench::LayerSpec::kGlobalMean: {
        const int64_t hw = d[1] * d[2], c = d[3];
        y.assign(static_cast<size_t>(d[0] * c), 0.0);
        for (int64_t n = 0; n < d[0]; ++n)
          for (int64_t i = 0; i < hw; ++i)
            for (int64_t ch = 0; ch < c; ++ch) y[n * c + ch] += a[(n * hw + i) * c + ch] / hw;
        d = {d[0], c};
        break;
      }
      case bench::LayerSpec::kFlatten:  // NHWC is already row-major [n, h*w*c]
        y = a;
        d = {d[0], NumElements(d) / d[0]};
        break;
    }
    a = std::move(y);
  }
  double loss = 0;
  const int64_t c = d[1];
  for (int64_t r = 0; r < d[0]; ++r) {
    const double* z = &a[r * c];
    const double m = *std::max_element(z, z + c);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(z[j] - m);
    loss += (std::log(sum) + m - z[labels[r]]) / d[0];
  }
  return loss;
}

// Checks the loss, and the gradient of a few weights of every variable (its
// largest entries, and its first), against a central difference of
// NaiveLoss at the weights the step started from.
void CheckFiniteDifferences(const TrainWorkload& w, const std::map<std::string, std::vector<float>>& weights,
                            const std::vector<float>& x, const std::vector<int64_t>& labels, float loss,
                            const std::map<std::string, std::vector<float>>& grads) {
  std::map<std::string, std::vector<double>> p;
  for (const auto& [name, v] : weights) p[name] = std::vector<double>(v.begin(), v.end());
  EXPECT_NEAR(loss, NaiveLoss(w, p, x, labels), 1e-5);
  for (const TrainVariable& v : w.variables) {
    SCOPED_TRACE(v.name);
    const std::vector<float>& g = grads.at(v.name);
    std::vector<size_t> idx(g.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    idx.resize(std::min<size_t>(idx.size(), 3));
    idx.push_back(0);
    for (size_t i : idx) {
      const double w0 = p[v.name][i], h = 1e-6;
      p[v.name][i] = w0 + h;
      const double lp = NaiveLoss(w, p, x, labels);
      p[v.name][i] = w0 - h;
      const double lm = NaiveLoss(w, p, x, labels);
      p[v.name][i] = w0;
      const double fd = (lp - lm) / (2 * h);
      EXPECT_NEAR(g[i], fd, 1e-5 + 1e-3 * std::fabs(fd)) << "element " << i;
    }
  }
}

// Three steps, each step's loss and gradients against NaiveLoss and its
// finite differences.
void CheckConvNet(const TrainWorkload& w) {
  CheckSteps(w, [&](const Weights& before, const std::vector<float>& x, const std::vector<int64_t>& labels, float loss,
                    const Weights& grads) { CheckFiniteDifferences(w, before, x, labels, loss, grads); });
}

TEST(TrainWorkloads, LeNetGradientsMatchFiniteDifferences) {
  CheckConvNet(bench::LeNet5Train(2, bench::GradientDescent(0.05f)));
}
TEST(TrainWorkloads, SmallCnnGradientsMatchFiniteDifferences) {
  CheckConvNet(bench::SmallCnnTrain(2, 8, 4, 6, 5, bench::GradientDescent(0.05f)));
}
TEST(TrainWorkloads, LeNetMomentumStepsMatchTheFormula) { CheckConvNet(bench::LeNet5Train(2)); }
TEST(TrainWorkloads, SmallCnnMomentumStepsMatchTheFormula) { CheckConvNet(bench::SmallCnnTrain(2, 8, 4, 6, 5)); }

// ------------------------------------------------------------ training

// Twenty steps on one fixed batch bring the loss well down.
void CheckLossDecreases(const TrainWorkload& w) {
  SCOPED_TRACE(w.name);
  SKIP_IF_OPS_MISSING(w);
  Trainer t(w, 2);
  std::map<std::string, std::vector<float>> grads;
  const float first = t.Step(&grads);
  for (int i = 1; i < 20; ++i) t.Step(&grads);
  const float after = t.Loss();
  EXPECT_LT(after, 0.8f * first) << "loss " << first << " before the first step, " << after << " after 20";
}

TEST(TrainWorkloads, LossDecreasesOverTwentyStepsGradientDescent) {
  CheckLossDecreases(bench::MlpTrain(8, 20, 16, 4, bench::GradientDescent(0.5f)));
  CheckLossDecreases(bench::LeNet5Train(4, bench::GradientDescent(0.5f)));
  CheckLossDecreases(bench::SmallCnnTrain(4, 8, 4, 6, 5, bench::GradientDescent(0.5f)));
}

// With the benchmark's optimizers (Adam for W6, momentum 0.9 for W7/W8), at
// learning rates that move these small nets within 20 steps.
TEST(TrainWorkloads, LossDecreasesOverTwentyStepsAdam) {
  CheckLossDecreases(bench::MlpTrain(8, 20, 16, 4, bench::Adam(0.01f)));
}
TEST(TrainWorkloads, LossDecreasesOverTwentyStepsMomentum) {
  CheckLossDecreases(bench::LeNet5Train(4, bench::Momentum(0.05f, 0.9f)));
  CheckLossDecreases(bench::SmallCnnTrain(4, 8, 4, 6, 5, bench::Momentum(0.1f, 0.9f)));
}

// ------------------------------------------------------------ errors

TEST(TrainWorkloads, ErrorsNameTheCulpritAndLeaveTheSessionUsable) {
  const TrainWorkload w = bench::MlpTrain(4, 6, 5, 3, bench::GradientDescent(0.5f));
  SKIP_IF_OPS_MISSING(w);
  std::unique_ptr<Session> s = CreateSession(w.graph, 1);
  ASSERT_TRUE(s);
  Trainer t(w);
  Feeds feeds = t.BatchFeeds();
  // A step before init: the variables are uninitialized.
  Status st = s->Run(feeds, {w.loss}, {w.train}, nullptr);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition) << st;
  EXPECT_TRUE(Contains(st.ToString(), "uninitialized")) << st;
  ASSERT_TRUE(s->Run({}, {}, {w.init}, nullptr).ok());
  // A label outside [0, classes): the loss op says so.
  Feeds bad = t.BatchFeeds();  // fresh tensors: Tensor copies share buffers
  bad[1].second.data<int32_t>()[2] = 3;
  std::vector<Tensor> out;
  st = s->Run(bad, {w.loss}, {w.train}, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.ToString(), "SparseSoftmaxCrossEntropyWithLogits")) << st;
  // The session still trains.
  st = s->Run(feeds, {w.loss}, {w.train}, &out);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_TRUE(std::isfinite(out[0].data<float>()[0]));
}

}  // namespace
}  // namespace testing
}  // namespace graphrt
