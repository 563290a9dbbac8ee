"""TensorFlow 1's variable scopes and get_variable, with its initializers.

``get_variable(name, shape)`` creates "<scope>/<name>" the first time and,
where the scope allows reuse, returns it afterwards; its name depends on the
variable scope only (the name scope is reset while it is made), as in
TensorFlow 1. Initializers are callables (shape, dtype, partition_info)
that add the ops making the initial value ("<name>/Initializer/...").
"""

import contextlib
import math

import numpy as np

from . import api
from .framework import TensorShape, get_default_graph
from .ops import GraphKeys, Variable, as_dtype, constant

AUTO_REUSE = "AUTO_REUSE"


class _Scope:
    def __init__(self, name, reuse, initializer):
        self.name = name
        self.reuse = reuse
        self.initializer = initializer


def _state(graph):
    state = getattr(graph, "_var_scope_state", None)
    if state is None:
        state = graph._var_scope_state = {"stack": [_Scope("", False, None)], "vars": {}, "opened": {}}
    return state


class VariableScope:
    """What get_variable sees of the current scope (TensorFlow's
    tf.VariableScope, reduced)."""

    def __init__(self, scope):
        self._scope = scope

    @property
    def name(self):
        return self._scope.name

    @property
    def original_name_scope(self):
        return self._scope.name + "/" if self._scope.name else ""

    @property
    def reuse(self):
        return self._scope.reuse

    def reuse_variables(self):
        self._scope.reuse = True


def get_variable_scope():
    return VariableScope(_state(get_default_graph())["stack"][-1])


@contextlib.contextmanager
def variable_scope(name_or_scope=None, default_name=None, values=None, initializer=None, reuse=None, **unused):
    """Opens variable scope "<outer>/<name>" (default_name made unique when
    name_or_scope is None) and the name scope of the same name. reuse: True
    (variables must exist), AUTO_REUSE (made if missing), None (inherit)."""
    g = get_default_graph()
    state = _state(g)
    outer = state["stack"][-1]
    if isinstance(name_or_scope, VariableScope):
        full = name_or_scope.name
    elif name_or_scope is not None:
        full = (outer.name + "/" if outer.name else "") + name_or_scope
    else:
        if default_name is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        base = (outer.name + "/" if outer.name else "") + default_name
        count = state["opened"].get(base, 0)
        full = base if count == 0 else "%s_%d" % (base, count)
    state["opened"][full] = state["opened"].get(full, 0) + 1
    inherited = outer.reuse
    scope = _Scope(full, reuse if reuse is not None else inherited, initializer or outer.initializer)
    if reuse is False:
        scope.reuse = False
    state["stack"].append(scope)
    try:
        # The name scope of the same name, under the current one ("foo", or
        # "foo_1" when reopened); a VariableScope object reopens its own.
        if isinstance(name_or_scope, VariableScope):
            name_scope = name_or_scope.original_name_scope or None
        else:
            name_scope = full.rsplit("/", 1)[-1]
        with g.name_scope(name_scope):
            yield VariableScope(scope)
    finally:
        state["stack"].pop()


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=None, aggregation=None):
    """The variable "<scope>/<name>": made on first use (shape, dtype default
    float32, initializer default glorot_uniform for floats and zeros
    otherwise); reused where the scope says so, ValueError otherwise."""
    if partitioner is not None or custom_getter is not None:
        raise NotImplementedError("graphrt: get_variable(partitioner=..., custom_getter=...)")
    g = get_default_graph()
    state = _state(g)
    scope = state["stack"][-1]
    full = (scope.name + "/" if scope.name else "") + name
    existing = state["vars"].get(full)
    if existing is not None:
        if scope.reuse is False or scope.reuse is None:
            raise ValueError("Variable %s already exists, disallowed. Did you mean to set reuse=True or "
                             "reuse=tf.AUTO_REUSE in VarScope?" % full)
        if shape is not None and not TensorShape(shape).is_compatible_with(existing.shape):
            raise ValueError("Trying to share variable %s, but specified shape %s and found shape %s."
                             % (full, TensorShape(shape), existing.shape))
        if dtype is not None and as_dtype(dtype).base_dtype != existing.dtype.base_dtype:
            raise ValueError("Trying to share variable %s, but specified dtype %s and found dtype %s."
                             % (full, as_dtype(dtype).name, existing.dtype.base_dtype.name))
        return existing
    if scope.reuse is True:
        raise ValueError("Variable %s does not exist, or was not created with tf.get_variable(). Did you mean to "
                         "set reuse=tf.AUTO_REUSE in VarScope?" % full)
    dtype = as_dtype(dtype if dtype is not None else 1).base_dtype
    initializer = initializer if initializer is not None else scope.initializer
    if initializer is None:
        floating = dtype.as_datatype_enum in (1, 2, 19, 14)
        initializer = glorot_uniform_initializer() if floating else zeros_initializer()
    if not callable(initializer):  # a value (a constant or a Tensor)
        value = initializer
        init_value = value if shape is None else (lambda: constant(value, dtype=dtype, shape=shape))
    else:
        if shape is None:
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead was None." % full)
        shape_list = TensorShape(shape).as_list()
        init_value = lambda: initializer(shape_list, dtype=dtype)  # noqa: E731
    with g.name_scope(None):
        var = Variable(init_value, trainable=True if trainable is None else trainable, collections=collections,
                       validate_shape=validate_shape, name=full, dtype=dtype)
    state["vars"][full] = var
    if regularizer is not None:
        with g.name_scope(full + "/Regularizer/"):
            loss = regularizer(var.value())
        if loss is not None:
            g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return var


# ---- initializers (TensorFlow 1's tf.*_initializer) ----

def zeros_initializer(dtype=None):
    def init(shape, dtype=dtype or 1, partition_info=None):
        return api.zeros(shape, dtype=dtype)
    return init


def ones_initializer(dtype=None):
    def init(shape, dtype=dtype or 1, partition_info=None):
        return api.ones(shape, dtype=dtype)
    return init


def constant_initializer(value=0, dtype=None, verify_shape=False):
    def init(shape, dtype=dtype or 1, partition_info=None):
        return constant(value, dtype=dtype, shape=shape)
    return init


def random_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    def init(shape, dtype=dtype or 1, partition_info=None):
        return api.random_normal(shape, mean, stddev, dtype=dtype, seed=seed)
    return init


def truncated_normal_initializer(mean=0.0, stddev=1.0, seed=None, dtype=None):
    def init(shape, dtype=dtype or 1, partition_info=None):
        return api.truncated_normal(shape, mean, stddev, dtype=dtype, seed=seed)
    return init


def random_uniform_initializer(minval=0.0, maxval=None, seed=None, dtype=None):
    def init(shape, dtype=dtype or 1, partition_info=None):
        return api.random_uniform(shape, minval, 1.0 if maxval is None else maxval, dtype=dtype, seed=seed)
    return init


def _fans(shape):
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:  # noqa: PLR2004
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


def variance_scaling_initializer(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=None):
    """TensorFlow's VarianceScaling: variance scale / n (n the fan in, out
    or their mean); a truncated normal's stddev corrected by 0.8796...,
    as TensorFlow's."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError("Invalid `mode` argument:", mode)
    distribution = {"normal": "truncated_normal"}.get(distribution, distribution)

    def init(shape, dtype=dtype or 1, partition_info=None):
        fan_in, fan_out = _fans(list(shape))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[mode]
        s = scale / max(1.0, n)
        if distribution == "truncated_normal":
            return api.truncated_normal(shape, 0.0, math.sqrt(s) / 0.87962566103423978, dtype=dtype, seed=seed)
        if distribution == "untruncated_normal":
            return api.random_normal(shape, 0.0, math.sqrt(s), dtype=dtype, seed=seed)
        if distribution == "uniform":
            limit = math.sqrt(3.0 * s)
            return api.random_uniform(shape, -limit, limit, dtype=dtype, seed=seed)
        raise ValueError("Invalid `distribution` argument:", distribution)
    return init


def glorot_uniform_initializer(seed=None, dtype=None):
    return variance_scaling_initializer(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=None):
    return variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed, dtype)


initializers = type("initializers", (), {
    "zeros": staticmethod(zeros_initializer), "ones": staticmethod(ones_initializer),
    "constant": staticmethod(constant_initializer), "random_normal": staticmethod(random_normal_initializer),
    "truncated_normal": staticmethod(truncated_normal_initializer),
    "random_uniform": staticmethod(random_uniform_initializer),
    "variance_scaling": staticmethod(variance_scaling_initializer),
    "glorot_uniform": staticmethod(glorot_uniform_initializer), "glorot_normal": staticmethod(glorot_normal_initializer),
})
