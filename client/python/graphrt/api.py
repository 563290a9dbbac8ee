"""TensorFlow 1's Python signatures for building graphs (tf.matmul,
tf.reduce_sum, tf.nn.relu, ...), each a thin layer over graphrt.ops.apply_op
with TensorFlow's argument names, defaults and node names.
graphrt.compat.v1 exports them under TensorFlow's names."""

import builtins
import types as _types

import numpy as np

from . import ops as _ops
from .framework import TensorShape, get_default_graph
from .ops import apply_op, as_dtype, constant, convert_to_tensor


def _t(x, dtype=None, name=None):
    return convert_to_tensor(x, dtype=dtype, name=name)


# ---- graph construction ----

def placeholder(dtype, shape=None, name=None):
    return apply_op("Placeholder", dtype=as_dtype(dtype), shape=TensorShape(shape), name=name or "Placeholder")


def placeholder_with_default(input, shape, name=None):  # noqa: A002 -- TensorFlow's argument name
    return apply_op("PlaceholderWithDefault", input=input, shape=TensorShape(shape),
                    name=name or "PlaceholderWithDefault")


def identity(input, name=None):  # noqa: A002
    return apply_op("Identity", input=input, name=name or "Identity")


def stop_gradient(input, name=None):  # noqa: A002
    return apply_op("StopGradient", input=input, name=name or "StopGradient")


def name_scope(name, default_name=None, values=None):
    """tf.name_scope (name None takes default_name)."""
    return get_default_graph().name_scope(name if name is not None else default_name)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def set_random_seed(seed):
    get_default_graph().seed = seed


def _seeds(seed):
    """(seed, seed2) of a random op, by TensorFlow 1's rule: the graph's
    seed and the op's (the graph's op count when only the graph's is set;
    87654321 when only the op's is); (0, 0), nondeterministic, when
    neither is set."""
    g = get_default_graph()
    if g.seed is not None:
        if seed is None:
            seed = len(g._graph_def.node)
        seeds = (g.seed, seed)
    elif seed is not None:
        seeds = (87654321, seed)
    else:
        return 0, 0
    return (0, 2**31 - 1) if seeds == (0, 0) else seeds


# ---- math ----

def add(x, y, name=None):
    return apply_op("AddV2", x=x, y=y, name=name or "Add")


def subtract(x, y, name=None):
    return apply_op("Sub", x=x, y=y, name=name or "Sub")


def multiply(x, y, name=None):
    return apply_op("Mul", x=x, y=y, name=name or "Mul")


def divide(x, y, name=None):
    return _ops._truediv(x, y) if name is None else apply_op("RealDiv", x=x, y=y, name=name)


def truediv(x, y, name=None):
    return divide(x, y, name)


def div(x, y, name=None):
    return apply_op("Div", x=x, y=y, name=name or "div")


def floordiv(x, y, name=None):
    return apply_op("FloorDiv", x=x, y=y, name=name or "floordiv")


def mod(x, y, name=None):
    return apply_op("FloorMod", x=x, y=y, name=name or "mod")


def pow(x, y, name=None):  # noqa: A001
    return apply_op("Pow", x=x, y=y, name=name or "Pow")


def maximum(x, y, name=None):
    return apply_op("Maximum", x=x, y=y, name=name or "Maximum")


def minimum(x, y, name=None):
    return apply_op("Minimum", x=x, y=y, name=name or "Minimum")


def squared_difference(x, y, name=None):
    return apply_op("SquaredDifference", x=x, y=y, name=name or "SquaredDifference")


def _unary(op_type):
    def fn(x, name=None):
        return apply_op(op_type, x=x, name=name or op_type)
    fn.__name__ = op_type.lower()
    return fn


negative = _unary("Neg")
square = _unary("Square")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
exp = _unary("Exp")
log = _unary("Log")
sigmoid = _unary("Sigmoid")
tanh = _unary("Tanh")
reciprocal = _unary("Reciprocal")
sign = _unary("Sign")
floor = _unary("Floor")
ceil = _unary("Ceil")
round = _unary("Round")  # noqa: A001
logical_not = _unary("LogicalNot")


def abs(x, name=None):  # noqa: A001
    return apply_op("Abs", x=x, name=name or "Abs")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, name=None):
    a = _t(a)
    rank_a = a.shape.ndims
    if rank_a is not None and rank_a > 2:  # noqa: PLR2004
        return apply_op("BatchMatMulV2", x=a, y=b, adj_x=transpose_a or adjoint_a, adj_y=transpose_b or adjoint_b,
                        name=name or "MatMul")
    return apply_op("MatMul", a=a, b=b, transpose_a=transpose_a or adjoint_a, transpose_b=transpose_b or adjoint_b,
                    name=name or "MatMul")


def add_n(inputs, name=None):
    return apply_op("AddN", inputs=list(inputs), name=name or "AddN")


def _comparison(op_type):
    def fn(x, y, name=None):
        return apply_op(op_type, x=x, y=y, name=name or op_type)
    fn.__name__ = op_type.lower()
    return fn


equal = _comparison("Equal")
not_equal = _comparison("NotEqual")
less = _comparison("Less")
less_equal = _comparison("LessEqual")
greater = _comparison("Greater")
greater_equal = _comparison("GreaterEqual")


def logical_and(x, y, name=None):
    return apply_op("LogicalAnd", x=x, y=y, name=name or "LogicalAnd")


def logical_or(x, y, name=None):
    return apply_op("LogicalOr", x=x, y=y, name=name or "LogicalOr")


def cast(x, dtype, name=None):
    x = _t(x)
    dtype = as_dtype(dtype)
    if x.dtype.base_dtype == dtype.base_dtype:
        return x
    return apply_op("Cast", x=x, DstT=dtype, name=name or "Cast")


def to_float(x, name="ToFloat"):
    return cast(x, 1, name)


def _axis_tensor(input_tensor, axis):
    if axis is None:
        rank = input_tensor.shape.ndims
        if rank is not None:
            return constant(np.arange(rank, dtype=np.int32), name="Const")
        return apply_op("Range", start=0, limit=apply_op("Rank", input=input_tensor), delta=1, name="range")
    return axis


def _reduction(op_type, default_name):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        if reduction_indices is not None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else keep_dims)
        x = _t(input_tensor)
        # The axes are made before the op's scope opens: "Const", then "Sum".
        return apply_op(op_type, input=x, reduction_indices=_axis_tensor(x, axis), keep_dims=keep,
                        name=name or default_name)
    fn.__name__ = default_name
    return fn


reduce_sum = _reduction("Sum", "Sum")
reduce_mean = _reduction("Mean", "Mean")
reduce_max = _reduction("Max", "Max")
reduce_min = _reduction("Min", "Min")
reduce_prod = _reduction("Prod", "Prod")
reduce_all = _reduction("All", "All")
reduce_any = _reduction("Any", "Any")


def argmax(input, axis=None, name=None, dimension=None, output_type=3):  # noqa: A002
    axis = dimension if axis is None else axis
    return apply_op("ArgMax", input=input, dimension=0 if axis is None else axis, output_type=output_type,
                    name=name or "ArgMax")


def argmin(input, axis=None, name=None, dimension=None, output_type=3):  # noqa: A002
    axis = dimension if axis is None else axis
    return apply_op("ArgMin", input=input, dimension=0 if axis is None else axis, output_type=output_type,
                    name=name or "ArgMin")


# ---- arrays ----

def reshape(tensor, shape, name=None):
    return apply_op("Reshape", tensor=tensor, shape=shape, name=name or "Reshape")


def transpose(a, perm=None, name="transpose", conjugate=False):
    a = _t(a)
    g = get_default_graph()
    with g.name_scope(name) as scope:
        if perm is None:
            rank = a.shape.ndims
            if rank is None:
                raise ValueError("graphrt: transpose without perm needs a known rank")
            perm = list(builtins.range(rank - 1, -1, -1))
        return apply_op("Transpose", x=a, perm=perm, name=scope)


def concat(values, axis, name="concat"):
    values = list(values)
    if len(values) == 1:
        return identity(values[0], name=name)
    return apply_op("ConcatV2", values=values, axis=axis, name=name)


def stack(values, axis=0, name="stack"):
    return apply_op("Pack", values=list(values), axis=axis, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    value = _t(value)
    if num is None:
        num = value.shape[axis]
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % value.shape)
    return apply_op("Unpack", value=value, num=num, axis=axis, name=name)


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    return apply_op("ExpandDims", input=input, dim=axis if axis is not None else dim, name=name or "ExpandDims")


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = squeeze_dims if axis is None else axis
    axis = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return apply_op("Squeeze", input=input, squeeze_dims=axis, name=name or "Squeeze")


def shape(input, name=None, out_type=3):  # noqa: A002
    return apply_op("Shape", input=input, out_type=out_type, name=name or "Shape")


def size(input, name=None, out_type=3):  # noqa: A002
    return apply_op("Size", input=input, out_type=out_type, name=name or "Size")


def rank(input, name=None):  # noqa: A002
    return apply_op("Rank", input=input, name=name or "Rank")


def fill(dims, value, name=None):
    return apply_op("Fill", dims=dims, value=value, name=name or "Fill")


def _filled(value, shape, dtype, name):
    # TensorFlow 1: a Const when the shape is known and small (under 1000
    # elements), else Fill (a GraphDef stays small).
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not any(_ops._is_tensor_like(d) for d in shape):
        if int(np.prod(shape, dtype=np.int64)) < 1000:  # noqa: PLR2004
            return constant(value, dtype=dtype, shape=shape, name=name)
    g = get_default_graph()
    with g.name_scope(name) as scope:
        return fill(_shape_value(shape), constant(value, dtype=dtype), name=scope)


def zeros(shape, dtype=1, name=None):
    return _filled(0, shape, dtype, name or "zeros")


def ones(shape, dtype=1, name=None):
    return _filled(1, shape, dtype, name or "ones")


def _shape_value(shape):
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and not any(_ops._is_tensor_like(d) for d in shape):
        return constant(np.array(shape, dtype=np.int32), name="shape")
    return shape


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    t = _t(tensor)
    if dtype is not None and as_dtype(dtype).base_dtype != t.dtype.base_dtype:
        return zeros(shape(t), dtype=dtype, name=name)
    return apply_op("ZerosLike", x=t, name=name or "zeros_like")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    t = _t(tensor)
    if dtype is not None and as_dtype(dtype).base_dtype != t.dtype.base_dtype:
        return ones(shape(t), dtype=dtype, name=name)
    return apply_op("OnesLike", x=t, name=name or "ones_like")


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    g = get_default_graph()
    with g.name_scope(name) as scope:
        if dtype is None:
            kinds = [_t(v) if _ops._is_tensor_like(v) else None for v in (start, limit, delta)]
            floaty = any(isinstance(v, float) for v in (start, limit, delta)) or \
                any(k is not None and k.dtype.base_dtype.as_datatype_enum in (1, 2) for k in kinds)
            dtype = 1 if floaty else 3
        return apply_op("Range", start=_t(start, dtype), limit=_t(limit, dtype), delta=_t(delta, dtype), name=scope)


def tile(input, multiples, name=None):  # noqa: A002
    return apply_op("Tile", input=input, multiples=multiples, name=name or "Tile")


def gather(params, indices, validate_indices=None, name=None, axis=0, batch_dims=0):
    return apply_op("GatherV2", params=params, indices=indices, axis=axis, batch_dims=batch_dims,
                    name=name or "GatherV2")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    dtype = as_dtype(dtype) if dtype is not None else as_dtype(1)
    g = get_default_graph()
    with g.name_scope(name or "one_hot") as scope:
        on = _t(1 if on_value is None else on_value, dtype, name="on_value")
        off = _t(0 if off_value is None else off_value, dtype, name="off_value")
        return apply_op("OneHot", indices=indices, depth=depth, on_value=on, off_value=off,
                        axis=-1 if axis is None else axis, name=scope)


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        return apply_op("Where", input=condition, name=name or "Where")
    return apply_op("Select", condition=condition, t=x, e=y, name=name or "Select")


# ---- random ----

def random_normal(shape, mean=0.0, stddev=1.0, dtype=1, seed=None, name=None):
    g = get_default_graph()
    with g.name_scope(name or "random_normal") as scope:
        s1, s2 = _seeds(seed)
        rnd = apply_op("RandomStandardNormal", shape=_shape_value(shape), dtype=as_dtype(dtype), seed=s1, seed2=s2,
                       name="RandomStandardNormal")
        return apply_op("AddV2", x=apply_op("Mul", x=rnd, y=_t(stddev, dtype, "stddev"), name="mul"),
                        y=_t(mean, dtype, "mean"), name=scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=1, seed=None, name=None):
    g = get_default_graph()
    with g.name_scope(name or "truncated_normal") as scope:
        s1, s2 = _seeds(seed)
        rnd = apply_op("TruncatedNormal", shape=_shape_value(shape), dtype=as_dtype(dtype), seed=s1, seed2=s2,
                       name="TruncatedNormal")
        return apply_op("AddV2", x=apply_op("Mul", x=rnd, y=_t(stddev, dtype, "stddev"), name="mul"),
                        y=_t(mean, dtype, "mean"), name=scope)


def random_uniform(shape, minval=0, maxval=None, dtype=1, seed=None, name=None):
    dtype = as_dtype(dtype)
    g = get_default_graph()
    with g.name_scope(name or "random_uniform") as scope:
        s1, s2 = _seeds(seed)
        if dtype.as_datatype_enum in (3, 9):
            if maxval is None:
                raise ValueError("Must specify maxval for integer dtype %r" % dtype)
            return apply_op("RandomUniformInt", shape=_shape_value(shape), minval=_t(minval, dtype, "min"),
                            maxval=_t(maxval, dtype, "max"), seed=s1, seed2=s2, name=scope)
        lo, hi = _t(minval, dtype, "min"), _t(1 if maxval is None else maxval, dtype, "max")
        rnd = apply_op("RandomUniform", shape=_shape_value(shape), dtype=dtype, seed=s1, seed2=s2,
                       name="RandomUniform")
        return apply_op("AddV2", x=apply_op("Mul", x=rnd, y=apply_op("Sub", x=hi, y=lo, name="sub"), name="mul"),
                        y=lo, name=scope)


# ---- state ----

def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    kwargs = {}
    if validate_shape is not None:
        kwargs["validate_shape"] = validate_shape
    if use_locking is not None:
        kwargs["use_locking"] = use_locking
    return apply_op("Assign", ref=ref, value=value, name=name or "Assign", **kwargs)


def assign_add(ref, value, use_locking=None, name=None):
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return apply_op("AssignAdd", ref=ref, value=value, name=name or "AssignAdd", **kwargs)


def assign_sub(ref, value, use_locking=None, name=None):
    kwargs = {} if use_locking is None else {"use_locking": use_locking}
    return apply_op("AssignSub", ref=ref, value=value, name=name or "AssignSub", **kwargs)


# ---- tf.nn ----

def _nn_relu(features, name=None):
    return apply_op("Relu", features=features, name=name or "Relu")


def _nn_relu6(features, name=None):
    return apply_op("Relu6", features=features, name=name or "Relu6")


def _nn_elu(features, name=None):
    return apply_op("Elu", features=features, name=name or "Elu")


def _nn_leaky_relu(features, alpha=0.2, name=None):
    return apply_op("LeakyRelu", features=features, alpha=alpha, name=name or "LeakyRelu")


def _nn_softmax(logits, axis=None, name=None, dim=None):
    axis = dim if axis is None else axis
    if axis not in (None, -1):
        raise NotImplementedError("graphrt: softmax over an axis other than the last")
    return apply_op("Softmax", logits=logits, name=name or "Softmax")


def _nn_log_softmax(logits, axis=None, name=None, dim=None):
    axis = dim if axis is None else axis
    if axis not in (None, -1):
        raise NotImplementedError("graphrt: log_softmax over an axis other than the last")
    return apply_op("LogSoftmax", logits=logits, name=name or "LogSoftmax")


def _nn_bias_add(value, bias, data_format=None, name=None):
    return apply_op("BiasAdd", value=value, bias=bias, data_format=data_format or "NHWC", name=name or "BiasAdd")


def _nn_conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
               data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    filt = filters if filter is None else filter
    return apply_op("Conv2D", input=input, filter=filt, strides=list(strides), padding=padding,
                    use_cudnn_on_gpu=use_cudnn_on_gpu, data_format=data_format, dilations=list(dilations),
                    name=name or "Conv2D")


def _nn_max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return apply_op("MaxPool", input=value if input is None else input, ksize=list(ksize), strides=list(strides),
                    padding=padding, data_format=data_format, name=name or "MaxPool")


def _nn_avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    return apply_op("AvgPool", value=value if input is None else input, ksize=list(ksize), strides=list(strides),
                    padding=padding, data_format=data_format, name=name or "AvgPool")


def _nn_l2_loss(t, name=None):
    return apply_op("L2Loss", t=t, name=name or "L2Loss")


def _nn_softmax_xent(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments (labels=..., "
                         "logits=..., ...)")
    g = get_default_graph()
    with g.name_scope(name or "softmax_cross_entropy_with_logits") as scope:
        loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", features=logits, labels=labels, name=scope)
        return loss


def _nn_sparse_softmax_xent(_sentinel=None, labels=None, logits=None, name=None):
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named arguments")
    g = get_default_graph()
    with g.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits") as scope:
        loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", features=logits, labels=labels, name=scope)
        return loss


def _nn_sigmoid_xent(_sentinel=None, labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-abs(x))), TensorFlow's stable form."""
    g = get_default_graph()
    with g.name_scope(name or "logistic_loss") as scope:
        x, z = _t(logits), _t(labels)
        relu = apply_op("Relu", features=x, name="Relu")  # max(x, 0)
        softplus = apply_op("Log1p", x=apply_op("Exp", x=apply_op("Neg", x=apply_op("Abs", x=x, name="Abs"),
                                                                  name="Neg"), name="Exp"), name="Log1p")
        return apply_op("AddV2", x=apply_op("Sub", x=relu, y=apply_op("Mul", x=x, y=z, name="mul"), name="sub"),
                        y=softplus, name=scope)


nn = _types.SimpleNamespace(
    relu=_nn_relu, relu6=_nn_relu6, elu=_nn_elu, leaky_relu=_nn_leaky_relu, sigmoid=sigmoid, tanh=tanh,
    softmax=_nn_softmax, log_softmax=_nn_log_softmax, bias_add=_nn_bias_add, conv2d=_nn_conv2d,
    max_pool=_nn_max_pool, avg_pool=_nn_avg_pool, l2_loss=_nn_l2_loss,
    softmax_cross_entropy_with_logits=_nn_softmax_xent, softmax_cross_entropy_with_logits_v2=_nn_softmax_xent,
    sparse_softmax_cross_entropy_with_logits=_nn_sparse_softmax_xent,
    sigmoid_cross_entropy_with_logits=_nn_sigmoid_xent)


__all__ = sorted(n for n in dir() if not n.startswith("_") and n not in ("np", "apply_op", "get_default_graph", "builtins"))
