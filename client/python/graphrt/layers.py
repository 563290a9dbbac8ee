"""TensorFlow 1's tf.layers (the functional forms) and graph export helpers
(tf.train.write_graph, tf.graph_util.convert_variables_to_constants).

Layers make their variables with get_variable in a variable scope named
after the layer ("dense", "dense_1", ...; "<name>/kernel", "<name>/bias"),
as TensorFlow 1's layers do, so checkpoints keep TensorFlow's names.
"""

import os

import numpy as np

from . import api
from .framework import get_default_graph
from .ops import convert_to_tensor, make_tensor_proto
from .proto import graph_pb2
from .variable_scope import _state, get_variable, glorot_uniform_initializer, variable_scope, zeros_initializer


def _layer_scope(name, default):
    """A fresh variable scope for a layer: `name`, or default made unique."""
    if name is not None:
        return variable_scope(name)
    g = get_default_graph()
    state = _state(g)
    outer = state["stack"][-1].name
    base = (outer + "/" if outer else "") + default
    used = state.setdefault("layers", {})
    k = used.get(base, 0)
    used[base] = k + 1
    return variable_scope(default if k == 0 else "%s_%d" % (default, k))


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, trainable=True, name=None, reuse=None, **unused):
    """tf.layers.dense: activation(inputs @ kernel + bias)."""
    x = convert_to_tensor(inputs)
    in_dim = x.shape[-1] if x.shape.ndims else None
    if in_dim is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
    with _layer_scope(name, "dense"):
        kernel = get_variable("kernel", [in_dim, units], dtype=x.dtype.base_dtype,
                              initializer=kernel_initializer or glorot_uniform_initializer(),
                              regularizer=kernel_regularizer, trainable=trainable)
        if x.shape.ndims == 2:  # noqa: PLR2004
            out = api.matmul(x, kernel.value(), name="MatMul")
        else:  # over the last axis: [..., in] -> [..., units]
            inner = x.shape.as_list()[1:-1]
            if any(d is None for d in inner):
                raise ValueError("graphrt: tf.layers.dense on rank > 2 needs the inner dimensions known")
            flat = api.matmul(api.reshape(x, [-1, in_dim]), kernel.value(), name="MatMul")
            out = api.reshape(flat, [-1] + inner + [units])
        if use_bias:
            bias = get_variable("bias", [units], dtype=x.dtype.base_dtype,
                                initializer=bias_initializer or zeros_initializer(), regularizer=bias_regularizer,
                                trainable=trainable)
            out = api.nn.bias_add(out, bias.value(), name="BiasAdd")
        return activation(out) if activation is not None else out


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, trainable=True, name=None, reuse=None, **unused):
    """tf.layers.conv2d on NHWC inputs."""
    if data_format != "channels_last":
        raise NotImplementedError("graphrt: tf.layers.conv2d(data_format='channels_first')")
    x = convert_to_tensor(inputs)
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    sh, sw = (strides, strides) if isinstance(strides, int) else strides
    dh, dw = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else dilation_rate
    channels = x.shape[-1]
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    with _layer_scope(name, "conv2d"):
        kernel = get_variable("kernel", [kh, kw, channels, filters], dtype=x.dtype.base_dtype,
                              initializer=kernel_initializer or glorot_uniform_initializer(),
                              regularizer=kernel_regularizer, trainable=trainable)
        out = api.nn.conv2d(x, kernel.value(), strides=[1, sh, sw, 1], padding=padding.upper(),
                            dilations=[1, dh, dw, 1], name="Conv2D")
        if use_bias:
            bias = get_variable("bias", [filters], dtype=x.dtype.base_dtype,
                                initializer=bias_initializer or zeros_initializer(), regularizer=bias_regularizer,
                                trainable=trainable)
            out = api.nn.bias_add(out, bias.value(), name="BiasAdd")
        return activation(out) if activation is not None else out


def _pool(op, inputs, pool_size, strides, padding, name, default):
    ph, pw = (pool_size, pool_size) if isinstance(pool_size, int) else pool_size
    sh, sw = (strides, strides) if isinstance(strides, int) else strides
    g = get_default_graph()
    with g.name_scope(name or default):
        return op(inputs, [1, ph, pw, 1], [1, sh, sw, 1], padding.upper())


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return _pool(api.nn.max_pool, inputs, pool_size, strides, padding, name, "max_pooling2d")


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return _pool(api.nn.avg_pool, inputs, pool_size, strides, padding, name, "average_pooling2d")


def flatten(inputs, name=None, data_format="channels_last"):
    """[batch, ...] -> [batch, product of the rest]."""
    x = convert_to_tensor(inputs)
    rest = x.shape.as_list()[1:]
    if any(d is None for d in rest):
        raise ValueError("graphrt: tf.layers.flatten needs the non-batch dimensions known, got %s" % x.shape)
    g = get_default_graph()
    with g.name_scope(name or "flatten"):
        return api.reshape(x, [-1, int(np.prod(rest))], name="Reshape")


# ---- export ----

def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """tf.train.write_graph: the GraphDef to logdir/name (text or binary);
    returns the path."""
    from google.protobuf import text_format  # noqa: PLC0415
    graph_def = graph_or_graph_def.as_graph_def() if hasattr(graph_or_graph_def, "as_graph_def") else \
        graph_or_graph_def
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        with open(path, "w") as f:
            f.write(text_format.MessageToString(graph_def))
    else:
        with open(path, "wb") as f:
            f.write(graph_def.SerializeToString())
    return path


_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def extract_sub_graph(graph_def, dest_nodes):
    """The nodes dest_nodes need (data and control inputs), in the
    GraphDef's order (tf.graph_util.extract_sub_graph)."""
    nodes = {n.name: n for n in graph_def.node}
    for d in dest_nodes:
        if d not in nodes:
            raise AssertionError("%s is not in graph" % d)
    keep, stack = set(), list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(i.lstrip("^").partition(":")[0] for i in nodes[name].input)
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """tf.graph_util.convert_variables_to_constants: the subgraph the
    outputs need, each variable it reads replaced by a Const of its value
    in `sess` (reads of resource variables by Identity)."""
    sub = extract_sub_graph(input_graph_def, output_node_names)
    variables = [n.name for n in sub.node if n.op in _VARIABLE_OPS and
                 (variable_names_whitelist is None or n.name in variable_names_whitelist) and
                 (variable_names_blacklist is None or n.name not in variable_names_blacklist)]
    # A ref variable's value is its output; a resource variable's, what a
    # ReadVariableOp of it reads.
    fetch = {}
    for v in variables:
        node = next(n for n in sub.node if n.name == v)
        if node.op == "VarHandleOp":
            readers = [n.name for n in sub.node if n.op == "ReadVariableOp" and n.input[0] == v]
            if readers:
                fetch[v] = readers[0] + ":0"
        else:
            fetch[v] = v + ":0"
    names = list(fetch)
    values = dict(zip(names, sess.run([fetch[v] for v in names]))) if names else {}
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(sub.versions)
    out.library.CopyFrom(sub.library)
    for n in sub.node:
        m = out.node.add()
        if n.name in values:
            value = np.asarray(values[n.name])
            m.name, m.op, m.device = n.name, "Const", n.device
            dtype = n.attr["dtype"].type
            m.attr["dtype"].type = dtype
            m.attr["value"].tensor.CopyFrom(make_tensor_proto(value, dtype=dtype))
        elif n.op == "ReadVariableOp" and n.input and n.input[0] in values:
            m.name, m.op, m.device = n.name, "Identity", n.device
            m.input.append(n.input[0])
            m.attr["T"].type = n.attr["dtype"].type
        else:
            m.CopyFrom(n)
    return out

