// The training workloads W6..W8 as TensorFlow-1.x training GraphDefs.
//
// Same nets as the PyTorch peer ../shared/peers/train_bench.py: W6 = W2's MLP
// 784-512-512-10 with Adam (lr 1e-3), W7 = W5's LeNet-5 and W8 = W4's small
// CNN with momentum SGD (lr 0.01, momentum 0.9); the loss is the mean softmax
// cross-entropy against integer labels. Initial weights are those of
// workloads.h (same splitmix64 seeds, same draw order), so W6's forward pass
// is W2's graph without the Softmax.
//
// The graph is the one TF 1.13's Python front end builds for
//   loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
//              labels=labels, logits=logits))
//   global_step = tf.train.get_or_create_global_step()
//   train = tf.group(tf.train.AdamOptimizer(1e-3).minimize(loss, global_step),
//                    name="train")
//   init = tf.global_variables_initializer()
// node for node, with TF's names: ref variables (VariableV2, `<v>/Assign`
// from a Const initializer `<v>/Initializer/Const`, `<v>/read`), `_class`
// colocation attrs where TF sets them, `gradients/...` as tf.gradients emits
// them under the optimizer's gate_gradients=GATE_OP (every op with two
// non-None input gradients gets a `tuple` of group_deps + control_dependency
// Identities, which is why the first layer's input gradient is computed too),
// the static-shape forms of the Mean gradients (reduce-all: Reshape + Tile by
// a Const shape + RealDiv by a Const factor; the global average pool over
// H,W: Const Shape/Size, Add/FloorMod/Range/Fill/DynamicStitch,
// Maximum/FloorDiv, Reshape, Tile, RealDiv), one Apply* op per variable in
// `<Optimizer>/update_<var>/`, Adam's beta1_power/beta2_power and their
// Mul + Assign after the Apply ops, `<Optimizer>/update` (NoOp), the
// global_step AssignAdd named after the optimizer, and the `train` NoOp.
// Conv nets are NHWC (TF's default); the global average pool is Mean over
// axes 1, 2.
//
// Header-only: bench/train_bench.cc, bench/make_train_graph.cc and
// tests/ops/train_workloads_test.cc share it.
#ifndef GRAPHRT_BENCH_TRAIN_WORKLOADS_H_
#define GRAPHRT_BENCH_TRAIN_WORKLOADS_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "workloads.h"

namespace graphrt {
namespace bench {

enum class OptimizerKind { kGradientDescent, kMomentum, kAdam };

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::kGradientDescent;
  float learning_rate = 0.01f;
  float momentum = 0.9f;  // Momentum
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // Adam (tf.train's defaults)
};

inline OptimizerSpec GradientDescent(float lr) { return {OptimizerKind::kGradientDescent, lr}; }
inline OptimizerSpec Momentum(float lr, float momentum) {
  OptimizerSpec o{OptimizerKind::kMomentum, lr};
  o.momentum = momentum;
  return o;
}
inline OptimizerSpec Adam(float lr) { return {OptimizerKind::kAdam, lr}; }

// One layer of a net, in the names tf.layers gives them.
struct LayerSpec {
  enum Kind { kDense, kConv, kMaxPool, kGlobalMean, kFlatten };
  Kind kind = kDense;
  std::string name;      // dense/conv: the scope ("dense_1"); others: the op's node name
  int64_t in = 0;        // dense: input features; conv: input channels
  int64_t out = 0;       // dense: output features; conv: output channels
  int64_t k = 0;         // conv: kernel size (stride 1)
  std::string padding;   // conv: SAME or VALID
  bool relu = false;     // dense (conv always has ReLU, as in W4/W5)
};

struct NetSpec {
  std::string name;
  std::vector<int64_t> input_dims;  // [batch, features] or NHWC
  int64_t classes = 0;
  std::vector<LayerSpec> layers;
  uint64_t seed = 0;
  OptimizerSpec optimizer;
  proto::DataType label_dtype = proto::DT_INT32;
};

// A trainable variable and the gradient tensor its Apply op consumes.
struct TrainVariable {
  std::string name;  // "dense/kernel"
  std::vector<int64_t> dims;
  std::string grad;  // "gradients/dense/MatMul_grad/tuple/control_dependency_1"
};

struct TrainWorkload {
  std::string name;  // as in the peer's RESULT lines: "W6_mlp_train"
  proto::GraphDef graph;
  FeedSpec x;                       // float input
  FeedSpec labels;                  // integer class ids in [0, classes)
  proto::DataType label_dtype = proto::DT_INT32;
  int64_t classes = 0;
  std::string loss = "Mean";        // scalar float: the batch's mean cross-entropy
  std::string logits;               // [batch, classes]
  std::string train = "train";      // target: one training step
  std::string init = "init";        // target: initialise every variable
  std::string global_step = "global_step";
  OptimizerSpec optimizer;
  std::vector<LayerSpec> layers;         // the net, input to logits
  std::vector<TrainVariable> variables;  // trainable, in creation order
  double forward_flops = 0;  // 2*MACs of the conv/dense layers (the peers' count)
  double step_flops = 0;     // 3x forward: the graph computes every layer's input and weight gradient
  std::vector<std::string> ops;  // op types the graph uses (sorted)
};

// Builds the training graph of a net as TF 1.13 would (see the file comment).
class TrainGraphBuilder : public GraphBuilder {
 public:
  TrainWorkload Build(const NetSpec& net) {
    TrainWorkload w;
    w.name = net.name;
    w.classes = net.classes;
    w.optimizer = net.optimizer;
    w.layers = net.layers;
    w.label_dtype = net.label_dtype;
    const int64_t batch = net.input_dims[0];
    w.x = {"x", net.input_dims};
    w.labels = {"labels", {batch}};
    Rng rng(net.seed);

    std::string x = Placeholder("x", net.input_dims);
    Placeholder("labels", {batch}, net.label_dtype);
    Variable("global_step", {}, proto::DT_INT64, ZerosInit("global_step", {}, proto::DT_INT64));

    // ---- forward
    std::vector<int64_t> dims = net.input_dims;
    for (const LayerSpec& l : net.layers) {
      Forward f;
      f.spec = l;
      f.in = x;
      f.in_dims = dims;
      switch (l.kind) {
        case LayerSpec::kDense: {
          f.kernel = TrainableVariable(&w, l.name + "/kernel", {l.in, l.out}, TorchDefaultInit(l.in * l.out, l.in, &rng));
          f.bias = TrainableVariable(&w, l.name + "/bias", {l.out}, TorchDefaultInit(l.out, l.in, &rng));
          f.op = MatMul(l.name + "/MatMul", x, f.kernel + "/read");
          x = BiasAdd(l.name + "/BiasAdd", f.op, f.bias + "/read", "NHWC");
          if (l.relu) x = Unary(l.name + "/Relu", "Relu", x);
          dims = {dims[0], l.out};
          w.forward_flops += 2.0 * dims[0] * l.in * l.out;
          break;
        }
        case LayerSpec::kConv: {
          const int64_t fan_in = l.in * l.k * l.k;
          f.kernel = TrainableVariable(&w, l.name + "/kernel", {l.k, l.k, l.in, l.out},
                                       TorchDefaultInit(l.k * l.k * l.in * l.out, fan_in, &rng));
          f.bias = TrainableVariable(&w, l.name + "/bias", {l.out}, TorchDefaultInit(l.out, fan_in, &rng));
          f.op = Conv2D(l.name + "/Conv2D", x, f.kernel + "/read", l.padding, "NHWC");
          f.op_def = LastNode();
          x = Unary(l.name + "/Relu", "Relu", BiasAdd(l.name + "/BiasAdd", f.op, f.bias + "/read", "NHWC"));
          const int64_t shrink = l.padding == "SAME" ? 0 : l.k - 1;
          dims = {dims[0], dims[1] - shrink, dims[2] - shrink, l.out};
          w.forward_flops += 2.0 * dims[0] * dims[1] * dims[2] * l.out * fan_in;
          break;
        }
        case LayerSpec::kMaxPool:
          x = MaxPool2x2(l.name, x, "NHWC");
          f.op_def = LastNode();
          dims = {dims[0], dims[1] / 2, dims[2] / 2, dims[3]};
          break;
        case LayerSpec::kGlobalMean:
          x = Mean(l.name, x, {1, 2}, false);
          dims = {dims[0], dims[3]};
          break;
        case LayerSpec::kFlatten:
          x = Reshape(l.name, x, {-1, static_cast<int32_t>(NumElementsOf(dims) / dims[0])});
          dims = {dims[0], NumElementsOf(dims) / dims[0]};
          break;
      }
      f.out = x;
      forward_.push_back(f);
    }
    w.logits = x;
    w.step_flops = 3 * w.forward_flops;

    // ---- loss: SparseSoftmaxCrossEntropyWithLogits (its Python wrapper's
    // name scope holds the op) and reduce_mean over the batch.
    const std::string xent = "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits";
    proto::NodeDef* xn = Node(xent, "SparseSoftmaxCrossEntropyWithLogits", {x, "labels"});
    SetType(xn, "T", proto::DT_FLOAT);
    SetType(xn, "Tlabels", net.label_dtype);
    ConstInt32("Const", {0});
    proto::NodeDef* mean = Node("Mean", "Mean", {xent, "Const"});
    SetType(mean, "T", proto::DT_FLOAT);
    SetType(mean, "Tidx", proto::DT_INT32);
    SetBool(mean, "keep_dims", false);

    // ---- gradients (tf.gradients(loss, vars), grad_ys = Fill(shape, 1)).
    ConstInt32("gradients/Shape", {});
    ConstScalar("gradients/grad_ys_0", proto::DT_FLOAT, 1.0);
    proto::NodeDef* fill = Node("gradients/Fill", "Fill", {"gradients/Shape", "gradients/grad_ys_0"});
    SetType(fill, "T", proto::DT_FLOAT);
    SetType(fill, "index_type", proto::DT_INT32);
    std::string g = MeanGradReduceAll("gradients/Mean_grad", "gradients/Fill", batch);
    g = XentGrad("gradients/" + xent + "_grad", g, xent);
    for (auto it = forward_.rbegin(); it != forward_.rend(); ++it) g = Backward(*it, g, &w);

    // ---- optimizer
    ApplyUpdates(net.optimizer, &w);
    w.graph = std::move(graph());
    w.ops.assign(ops().begin(), ops().end());
    return w;
  }

 private:
  struct Forward {
    LayerSpec spec;
    std::string in, out;              // activations before and after the layer
    std::vector<int64_t> in_dims;
    std::string kernel, bias;         // variable names (dense, conv)
    std::string op;                   // MatMul / Conv2D node
    const proto::NodeDef* op_def = nullptr;  // Conv2D / MaxPool, whose attrs the gradient op repeats
  };

  proto::NodeDef* LastNode() { return graph().mutable_node(graph().node_size() - 1); }

  static std::string OpOf(const std::string& tensor) { return tensor.substr(0, tensor.find(':')); }

  // array_ops.zeros under `<var>/Initializer/`: a Const when it has fewer than
  // 1000 elements, otherwise Fill(shape_as_tensor, Const 0) (TF keeps big
  // zeros out of the GraphDef this way). Returns the initial-value tensor.
  std::string ZerosInit(const std::string& var, const std::vector<int64_t>& dims, proto::DataType dtype,
                        const std::string& colocate = "") {
    const std::string scope = var + "/Initializer/zeros";
    const std::string loc = colocate.empty() ? var : colocate;
    if (NumElementsOf(dims) < 1000) {
      proto::NodeDef* n = Node(scope, "Const", {});
      SetType(n, "dtype", dtype);
      proto::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
      t->set_dtype(dtype);
      SetShape(t->mutable_tensor_shape(), dims);
      if (dtype == proto::DT_INT64) t->add_int64_val(0);
      else t->add_float_val(0);  // one value, splat over the shape
      SetClass(n, loc);
      return scope;
    }
    ConstInt32(scope + "/shape_as_tensor", std::vector<int32_t>(dims.begin(), dims.end()));
    SetClass(LastNode(), loc);
    ConstScalar(scope + "/Const", dtype, 0);
    SetClass(LastNode(), loc);
    proto::NodeDef* n = Node(scope, "Fill", {scope + "/shape_as_tensor", scope + "/Const"});
    SetType(n, "T", dtype);
    SetType(n, "index_type", proto::DT_INT32);
    SetClass(n, loc);
    return scope;
  }

  // VariableV2 + `<name>/Assign` (of `initial`) + `<name>/read`, all
  // colocated with `colocate` (default: the variable itself).
  void Variable(const std::string& name, const std::vector<int64_t>& dims, proto::DataType dtype,
                const std::string& initial, const std::string& colocate = "") {
    const std::string loc = colocate.empty() ? name : colocate;
    proto::NodeDef* v = Node(name, "VariableV2", {});
    SetType(v, "dtype", dtype);
    SetShape((*v->mutable_attr())["shape"].mutable_shape(), dims);
    SetString(v, "container", "");
    SetString(v, "shared_name", "");
    if (!colocate.empty()) SetClass(v, colocate);
    proto::NodeDef* a = Node(name + "/Assign", "Assign", {name, initial});
    SetType(a, "T", dtype);
    SetBool(a, "validate_shape", true);
    SetBool(a, "use_locking", true);
    SetClass(a, loc);
    initializers_.push_back(name + "/Assign");
    proto::NodeDef* r = Node(name + "/read", "Identity", {name});
    SetType(r, "T", dtype);
    SetClass(r, loc);
  }

  std::string TrainableVariable(TrainWorkload* w, const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<float>& values) {
    ConstFloat(name + "/Initializer/Const", dims, values);
    SetClass(LastNode(), name);
    Variable(name, dims, proto::DT_FLOAT, name + "/Initializer/Const");
    w->variables.push_back({name, dims, ""});
    return name;
  }

  // control_flow_ops.tuple: a group_deps NoOp on every tensor's op, and one
  // control_dependency Identity per tensor that waits for it.
  std::vector<std::string> Tuple(const std::string& scope, const std::vector<std::string>& tensors) {
    std::vector<std::string> deps;
    for (const std::string& t : tensors) deps.push_back("^" + OpOf(t));
    Node(scope + "/group_deps", "NoOp", deps);
    std::vector<std::string> out;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const std::string name = scope + "/control_dependency" + (i ? "_" + std::to_string(i) : "");
      proto::NodeDef* n = Node(name, "Identity", {tensors[i], "^" + scope + "/group_deps"});
      SetType(n, "T", proto::DT_FLOAT);
      SetClass(n, OpOf(tensors[i]));
      out.push_back(name);
    }
    return out;
  }

  // _MeanGrad of a reduce-all Mean over a [batch] vector, static shapes:
  // Reshape to [1], Tile by the Const input shape, divide by the Const count.
  std::string MeanGradReduceAll(const std::string& s, const std::string& g, int64_t batch) {
    Reshape(s + "/Reshape", g, {1});
    ConstInt32(s + "/Const", {static_cast<int32_t>(batch)});
    proto::NodeDef* tile = Node(s + "/Tile", "Tile", {s + "/Reshape", s + "/Const"});
    SetType(tile, "T", proto::DT_FLOAT);
    SetType(tile, "Tmultiples", proto::DT_INT32);
    ConstScalar(s + "/Const_1", proto::DT_FLOAT, static_cast<double>(batch));
    SetType(Node(s + "/truediv", "RealDiv", {s + "/Tile", s + "/Const_1"}), "T", proto::DT_FLOAT);
    return s + "/truediv";
  }

  // _SumGrad's general path + _MeanGrad for a Mean over `axes` (keep_dims
  // false) of a statically shaped input: math_ops.reduced_shape and
  // _safe_shape_div on Const shapes, colocated with the Shape Const.
  std::string MeanGradAxes(const std::string& s, const std::string& g, const std::string& axes_const,
                           const std::vector<int64_t>& in_dims, int64_t n_axes) {
    const std::string shape = s + "/Shape";
    ConstInt32(shape, std::vector<int32_t>(in_dims.begin(), in_dims.end()));
    auto colocated = [&](proto::NodeDef* n) {
      SetClass(n, shape);
      return n;
    };
    auto int_op = [&](const std::string& name, const std::string& op, const std::vector<std::string>& in) {
      proto::NodeDef* n = colocated(Node(name, op, in));
      SetType(n, "T", proto::DT_INT32);
      return n;
    };
    ConstScalar(s + "/Size", proto::DT_INT32, static_cast<double>(in_dims.size()));
    colocated(LastNode());
    int_op(s + "/add", "Add", {axes_const, s + "/Size"});
    int_op(s + "/mod", "FloorMod", {s + "/add", s + "/Size"});
    ConstInt32(s + "/Shape_1", {static_cast<int32_t>(n_axes)});
    colocated(LastNode());
    ConstScalar(s + "/range/start", proto::DT_INT32, 0);
    colocated(LastNode());
    ConstScalar(s + "/range/delta", proto::DT_INT32, 1);
    colocated(LastNode());
    SetType(colocated(Node(s + "/range", "Range", {s + "/range/start", s + "/Size", s + "/range/delta"})), "Tidx",
            proto::DT_INT32);
    ConstScalar(s + "/Fill/value", proto::DT_INT32, 1);
    colocated(LastNode());
    SetType(int_op(s + "/Fill", "Fill", {s + "/Shape_1", s + "/Fill/value"}), "index_type", proto::DT_INT32);
    proto::NodeDef* stitch = int_op(s + "/DynamicStitch", "DynamicStitch", {s + "/range", s + "/mod", shape, s + "/Fill"});
    (*stitch->mutable_attr())["N"].set_i(2);
    ConstScalar(s + "/Maximum/y", proto::DT_INT32, 1);
    colocated(LastNode());
    int_op(s + "/Maximum", "Maximum", {s + "/DynamicStitch", s + "/Maximum/y"});
    int_op(s + "/floordiv", "FloorDiv", {shape, s + "/Maximum"});
    proto::NodeDef* r = Node(s + "/Reshape", "Reshape", {g, s + "/DynamicStitch"});
    SetType(r, "T", proto::DT_FLOAT);
    SetType(r, "Tshape", proto::DT_INT32);
    proto::NodeDef* tile = Node(s + "/Tile", "Tile", {s + "/Reshape", s + "/floordiv"});
    SetType(tile, "T", proto::DT_FLOAT);
    SetType(tile, "Tmultiples", proto::DT_INT32);
    int64_t factor = 1;
    for (size_t i = 1; i + 1 < in_dims.size(); ++i) factor *= in_dims[i];
    ConstScalar(s + "/Const", proto::DT_FLOAT, static_cast<double>(factor));
    SetType(Node(s + "/truediv", "RealDiv", {s + "/Tile", s + "/Const"}), "T", proto::DT_FLOAT);
    return s + "/truediv";
  }

  // _SparseSoftmaxCrossEntropyWithLogitsGrad: the op's backprop output
  // (through PreventGradient) times the loss gradient expanded to [batch, 1].
  std::string XentGrad(const std::string& s, const std::string& g, const std::string& xent) {
    proto::NodeDef* p = Node(s + "/PreventGradient", "PreventGradient", {xent + ":1"});
    SetType(p, "T", proto::DT_FLOAT);
    SetString(p, "message",
              "Currently there is no way to take the second derivative of "
              "sparse_softmax_cross_entropy_with_logits due to the fused implementation's interaction with "
              "tf.gradients()");
    ConstScalar(s + "/ExpandDims/dim", proto::DT_INT32, -1);
    proto::NodeDef* e = Node(s + "/ExpandDims", "ExpandDims", {g, s + "/ExpandDims/dim"});
    SetType(e, "T", proto::DT_FLOAT);
    SetType(e, "Tdim", proto::DT_INT32);
    SetType(Node(s + "/mul", "Mul", {s + "/ExpandDims", s + "/PreventGradient"}), "T", proto::DT_FLOAT);
    return s + "/mul";
  }

  // Copies the attrs of a forward op (Conv2D, MaxPool) to its gradient op.
  static void CopyAttrs(const proto::NodeDef* from, proto::NodeDef* to) {
    for (const auto& kv : from->attr()) (*to->mutable_attr())[kv.first] = kv.second;
  }

  // Emits the gradient ops of one forward layer; returns the gradient of
  // the layer's input.
  std::string Backward(const Forward& f, std::string g, TrainWorkload* w) {
    const LayerSpec& l = f.spec;
    const std::string s = "gradients/" + l.name;
    switch (l.kind) {
      case LayerSpec::kDense:
      case LayerSpec::kConv: {
        if (l.kind == LayerSpec::kConv || l.relu) {
          proto::NodeDef* r = Node(s + "/Relu_grad/ReluGrad", "ReluGrad", {g, l.name + "/Relu"});
          SetType(r, "T", proto::DT_FLOAT);
          g = s + "/Relu_grad/ReluGrad";
        }
        proto::NodeDef* bg = Node(s + "/BiasAdd_grad/BiasAddGrad", "BiasAddGrad", {g});
        SetType(bg, "T", proto::DT_FLOAT);
        SetString(bg, "data_format", "NHWC");
        const auto bias_t = Tuple(s + "/BiasAdd_grad/tuple", {g, s + "/BiasAdd_grad/BiasAddGrad"});
        g = bias_t[0];
        std::vector<std::string> w_t;
        const std::string kread = f.kernel + "/read";
        if (l.kind == LayerSpec::kDense) {
          const std::string gs = s + "/MatMul_grad";
          MatMul(gs + "/MatMul", g, kread, false, true);
          MatMul(gs + "/MatMul_1", f.in, g, true, false);
          w_t = Tuple(gs + "/tuple", {gs + "/MatMul", gs + "/MatMul_1"});
        } else {
          const std::string gs = s + "/Conv2D_grad";
          proto::NodeDef* sn = Node(gs + "/ShapeN", "ShapeN", {f.in, kread});
          SetType(sn, "T", proto::DT_FLOAT);
          SetType(sn, "out_type", proto::DT_INT32);
          (*sn->mutable_attr())["N"].set_i(2);
          CopyAttrs(f.op_def, Node(gs + "/Conv2DBackpropInput", "Conv2DBackpropInput", {gs + "/ShapeN", kread, g}));
          CopyAttrs(f.op_def, Node(gs + "/Conv2DBackpropFilter", "Conv2DBackpropFilter", {f.in, gs + "/ShapeN:1", g}));
          w_t = Tuple(gs + "/tuple", {gs + "/Conv2DBackpropInput", gs + "/Conv2DBackpropFilter"});
        }
        SetGrad(w, f.kernel, w_t[1]);
        SetGrad(w, f.bias, bias_t[1]);
        return w_t[0];
      }
      case LayerSpec::kMaxPool: {
        CopyAttrs(f.op_def, Node(s + "_grad/MaxPoolGrad", "MaxPoolGrad", {f.in, f.out, g}));
        return s + "_grad/MaxPoolGrad";
      }
      case LayerSpec::kGlobalMean:
        return MeanGradAxes(s + "_grad", g, l.name + "/reduction_indices", f.in_dims, 2);
      case LayerSpec::kFlatten: {
        // _ReshapeGrad: back to the input's (static, hence Const) shape.
        ConstInt32(s + "_grad/Shape", std::vector<int32_t>(f.in_dims.begin(), f.in_dims.end()));
        proto::NodeDef* r = Node(s + "_grad/Reshape", "Reshape", {g, s + "_grad/Shape"});
        SetType(r, "T", proto::DT_FLOAT);
        SetType(r, "Tshape", proto::DT_INT32);
        return s + "_grad/Reshape";
      }
    }
    return g;
  }

  static void SetGrad(TrainWorkload* w, const std::string& var, const std::string& grad) {
    for (TrainVariable& v : w->variables)
      if (v.name == var) v.grad = grad;
  }

  // A zeros slot `<var>/<slot>` colocated with var.
  std::string Slot(const TrainVariable& v, const std::string& slot) {
    const std::string name = v.name + "/" + slot;
    Variable(name, v.dims, proto::DT_FLOAT, ZerosInit(name, v.dims, proto::DT_FLOAT, v.name), v.name);
    return name;
  }

  // optimizer.apply_gradients(grads_and_vars, global_step): slots first,
  // the hyper-parameter Consts, one Apply op per variable, _finish, the
  // global_step increment; then tf.group(..., name="train") and the
  // initializer group `init`.
  void ApplyUpdates(const OptimizerSpec& o, TrainWorkload* w) {
    const char* scope = o.kind == OptimizerKind::kAdam       ? "Adam"
                        : o.kind == OptimizerKind::kMomentum ? "Momentum"
                                                             : "GradientDescent";
    const std::string sc = scope;
    std::vector<std::vector<std::string>> slots(w->variables.size());
    if (o.kind == OptimizerKind::kAdam) {
      // beta1_power / beta2_power colocate with the variable first by name.
      std::string first = w->variables[0].name;
      for (const TrainVariable& v : w->variables)
        if (v.name < first) first = v.name;
      for (const auto& [name, value] : {std::pair<std::string, float>{"beta1_power", o.beta1}, {"beta2_power", o.beta2}}) {
        ConstScalar(name + "/initial_value", proto::DT_FLOAT, value);
        SetClass(LastNode(), first);
        Variable(name, {}, proto::DT_FLOAT, name + "/initial_value", first);
      }
      beta_colocation_ = first;
      for (size_t i = 0; i < w->variables.size(); ++i)
        slots[i] = {Slot(w->variables[i], "Adam"), Slot(w->variables[i], "Adam_1")};
      ConstScalar(sc + "/learning_rate", proto::DT_FLOAT, o.learning_rate);
      ConstScalar(sc + "/beta1", proto::DT_FLOAT, o.beta1);
      ConstScalar(sc + "/beta2", proto::DT_FLOAT, o.beta2);
      ConstScalar(sc + "/epsilon", proto::DT_FLOAT, o.epsilon);
    } else if (o.kind == OptimizerKind::kMomentum) {
      for (size_t i = 0; i < w->variables.size(); ++i) slots[i] = {Slot(w->variables[i], "Momentum")};
      ConstScalar(sc + "/learning_rate", proto::DT_FLOAT, o.learning_rate);
      ConstScalar(sc + "/momentum", proto::DT_FLOAT, o.momentum);
    } else {
      ConstScalar(sc + "/learning_rate", proto::DT_FLOAT, o.learning_rate);
    }

    std::vector<std::string> updates;
    for (size_t i = 0; i < w->variables.size(); ++i) {
      const TrainVariable& v = w->variables[i];
      const std::string u = sc + "/update_" + v.name + "/";
      proto::NodeDef* n = nullptr;
      if (o.kind == OptimizerKind::kAdam) {
        n = Node(u + "ApplyAdam", "ApplyAdam",
                 {v.name, slots[i][0], slots[i][1], "beta1_power/read", "beta2_power/read", sc + "/learning_rate",
                  sc + "/beta1", sc + "/beta2", sc + "/epsilon", v.grad});
        SetBool(n, "use_nesterov", false);
      } else if (o.kind == OptimizerKind::kMomentum) {
        n = Node(u + "ApplyMomentum", "ApplyMomentum",
                 {v.name, slots[i][0], sc + "/learning_rate", v.grad, sc + "/momentum"});
        SetBool(n, "use_nesterov", false);
      } else {
        n = Node(u + "ApplyGradientDescent", "ApplyGradientDescent", {v.name, sc + "/learning_rate", v.grad});
      }
      SetType(n, "T", proto::DT_FLOAT);
      SetBool(n, "use_locking", false);
      SetClass(n, v.name);
      updates.push_back(n->name());
    }

    std::vector<std::string> group;
    for (const std::string& u : updates) group.push_back("^" + u);
    if (o.kind == OptimizerKind::kAdam) {
      // _finish: beta powers times beta, after every Apply op.
      for (const auto& [mul, var, beta] : {std::tuple<std::string, std::string, std::string>{"mul", "beta1_power", "beta1"},
                                           {"mul_1", "beta2_power", "beta2"}}) {
        std::vector<std::string> in = {var + "/read", sc + "/" + beta};
        for (const std::string& u : updates) in.push_back("^" + u);
        proto::NodeDef* m = Node(sc + "/" + mul, "Mul", in);
        SetType(m, "T", proto::DT_FLOAT);
        SetClass(m, beta_colocation_);
        const std::string assign = sc + (mul == "mul" ? "/Assign" : "/Assign_1");
        proto::NodeDef* a = Node(assign, "Assign", {var, sc + "/" + mul});
        SetType(a, "T", proto::DT_FLOAT);
        SetBool(a, "validate_shape", true);
        SetBool(a, "use_locking", false);
        SetClass(a, beta_colocation_);
        group.push_back("^" + assign);
      }
    }
    Node(sc + "/update", "NoOp", group);
    ConstScalar(sc + "/value", proto::DT_INT64, 1);
    SetClass(LastNode(), "global_step");
    proto::NodeDef* inc = Node(sc, "AssignAdd", {"global_step", sc + "/value", "^" + sc + "/update"});
    SetType(inc, "T", proto::DT_INT64);
    SetBool(inc, "use_locking", false);
    SetClass(inc, "global_step");
    Node("train", "NoOp", {"^" + sc});

    std::vector<std::string> init;
    for (const std::string& a : initializers_) init.push_back("^" + a);
    Node("init", "NoOp", init);
  }

  std::vector<Forward> forward_;
  std::vector<std::string> initializers_;
  std::string beta_colocation_;
};

inline TrainWorkload BuildTrainWorkload(const NetSpec& net) { return TrainGraphBuilder().Build(net); }

// (Members set one by one: GCC's -Wmissing-field-initializers flags a
// designated initializer that leaves out a member with a default.)
inline LayerSpec DenseLayer(const std::string& name, int64_t in, int64_t out, bool relu) {
  LayerSpec l;
  l.kind = LayerSpec::kDense;
  l.name = name;
  l.in = in;
  l.out = out;
  l.relu = relu;
  return l;
}
inline LayerSpec ConvLayer(const std::string& name, int64_t k, int64_t cin, int64_t cout, const std::string& padding) {
  return {.kind = LayerSpec::kConv, .name = name, .in = cin, .out = cout, .k = k, .padding = padding};
}
inline LayerSpec OpLayer(LayerSpec::Kind kind, const std::string& name) {
  LayerSpec l;
  l.kind = kind;
  l.name = name;
  return l;
}

// W6: MLP in-hidden-hidden-classes (ReLU), default 784-512-512-10, batch
// 64, Adam(1e-3). Smaller sizes for tests.
inline TrainWorkload MlpTrain(int64_t batch = 64, int64_t in = 784, int64_t hidden = 512, int64_t classes = 10,
                              OptimizerSpec opt = Adam(1e-3f), uint64_t seed = 2) {
  NetSpec n;
  n.name = "W6_mlp_train";
  n.input_dims = {batch, in};
  n.classes = classes;
  n.layers = {DenseLayer("dense", in, hidden, true), DenseLayer("dense_1", hidden, hidden, true),
              DenseLayer("dense_2", hidden, classes, false)};
  n.seed = seed;
  n.optimizer = opt;
  return BuildTrainWorkload(n);
}

// W7: LeNet-5 of W5 (NHWC 28x28x1), batch 64, momentum SGD (0.01, 0.9).
inline TrainWorkload LeNet5Train(int64_t batch = 64, OptimizerSpec opt = Momentum(0.01f, 0.9f), uint64_t seed = 5) {
  NetSpec n;
  n.name = "W7_lenet_train";
  n.input_dims = {batch, 28, 28, 1};
  n.classes = 10;
  n.layers = {ConvLayer("conv2d", 5, 1, 6, "SAME"),
              OpLayer(LayerSpec::kMaxPool, "max_pooling2d/MaxPool"),
              ConvLayer("conv2d_1", 5, 6, 16, "VALID"),
              OpLayer(LayerSpec::kMaxPool, "max_pooling2d_1/MaxPool"),
              OpLayer(LayerSpec::kFlatten, "flatten/Reshape"),
              DenseLayer("dense", 400, 120, true),
              DenseLayer("dense_1", 120, 84, true),
              DenseLayer("dense_2", 84, 10, false)};
  n.seed = seed;
  n.optimizer = opt;
  return BuildTrainWorkload(n);
}

// W8: the small CNN of W4 (NHWC), default [8,224,224,3], conv 64 and 128
// channels, 1000 classes, momentum SGD (0.01, 0.9). Smaller sizes for tests.
inline TrainWorkload SmallCnnTrain(int64_t batch = 8, int64_t hw = 224, int64_t c1 = 64, int64_t c2 = 128,
                                   int64_t classes = 1000, OptimizerSpec opt = Momentum(0.01f, 0.9f),
                                   uint64_t seed = 4) {
  NetSpec n;
  n.name = "W8_cnn_train";
  n.input_dims = {batch, hw, hw, 3};
  n.classes = classes;
  n.layers = {ConvLayer("conv2d", 3, 3, c1, "SAME"),
              OpLayer(LayerSpec::kMaxPool, "max_pooling2d/MaxPool"),
              ConvLayer("conv2d_1", 3, c1, c2, "SAME"),
              OpLayer(LayerSpec::kMaxPool, "max_pooling2d_1/MaxPool"),
              OpLayer(LayerSpec::kGlobalMean, "global_average_pooling2d/Mean"),
              DenseLayer("dense", c2, classes, false)};
  n.seed = seed;
  n.optimizer = opt;
  return BuildTrainWorkload(n);
}

// The benchmark workloads at their benchmark sizes, in a fixed order.
inline std::vector<TrainWorkload> AllTrainWorkloads() {
  std::vector<TrainWorkload> all;
  all.push_back(MlpTrain());
  all.push_back(LeNet5Train());
  all.push_back(SmallCnnTrain());
  return all;
}

// The fixed batch the benchmark feeds: the peers' pattern for x, and label
// i = (i * 7) % classes.
inline std::vector<float> TrainInput(const TrainWorkload& w) { return PatternValues(NumElementsOf(w.x.dims)); }
inline std::vector<int64_t> TrainLabels(const TrainWorkload& w) {
  std::vector<int64_t> l(static_cast<size_t>(w.labels.dims[0]));
  for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<int64_t>(i * 7) % w.classes;
  return l;
}

}  // namespace bench
}  // namespace graphrt

#endif  // GRAPHRT_BENCH_TRAIN_WORKLOADS_H_
