"""Building graphs in Python, as TensorFlow 1's front end does.

- ``apply_op(op_type, name=None, **inputs_and_attrs)``: one operation of any
  registered op (the standard plugins' and ``load_op_library``'s), its
  inputs converted to tensors and its attrs to AttrValues from the OpDef,
  in the default graph (TensorFlow's op_def_library).
- ``raw_ops``: a function per registered op, by its name (``MatMul``,
  keyword arguments) and in snake case (``mat_mul``, positional inputs),
  generated from the OpDefs at first use.
- ``convert_to_tensor`` / ``constant`` / ``make_tensor_proto``: Python and
  numpy values as Const nodes, with TensorFlow's dtype rules (a Python float
  is float32, a Python int int32, a numpy array keeps its dtype).
- ``Variable``: TensorFlow 1's ref variable (VariableV2, its Assign
  initializer and its "read" Identity, named and colocated as TensorFlow
  names them), in the global and trainable collections.
- Tensor operators (``a + b``, ``a @ b``, ``-a``, comparisons).
"""

import keyword
import re
import threading

import numpy as np

from . import _graphrt
from . import framework
from .framework import DType, Operation, Tensor, TensorShape, get_default_graph
from .proto import attr_value_pb2, op_def_pb2, tensor_pb2, tensor_shape_pb2

_registry_lock = threading.Lock()
_op_defs = None


def _registry():
    global _op_defs
    defs = _op_defs
    if defs is None:
        with _registry_lock:
            ops = op_def_pb2.OpList()
            ops.ParseFromString(_graphrt.all_op_list())
            defs = _op_defs = {o.name: o for o in ops.op}
    return defs


def refresh_op_registry():
    """Re-reads the registered OpDefs (after a plugin was loaded)."""
    global _op_defs
    with _registry_lock:
        _op_defs = None
    raw_ops._functions.clear()


def op_def(op_type):
    od = _registry().get(op_type)
    if od is None:
        raise ValueError("Op type not registered '%s' (load its plugin with graphrt.load_op_library)" % op_type)
    return od


# ---- dtypes ----

_NAMES = {DType(e).name: e for e in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23)}
_NAMES.update({"float": 1, "double": 2, "half": 19})
_NP_TO_ENUM = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3, np.dtype(np.uint8): 4,
               np.dtype(np.int16): 5, np.dtype(np.int8): 6, np.dtype(np.complex64): 8, np.dtype(np.int64): 9,
               np.dtype(np.bool_): 10, np.dtype(np.uint16): 17, np.dtype(np.complex128): 18,
               np.dtype(np.float16): 19, np.dtype(np.uint32): 22, np.dtype(np.uint64): 23}


def as_dtype(value):
    """A DType from a DType, a DataType enum, a name ("float32"), a numpy
    dtype or type, or a Python type (float: float32, int: int32)."""
    if isinstance(value, DType):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return DType(value)
    if isinstance(value, str):
        if value not in _NAMES:
            raise TypeError("Cannot convert value %r to a TensorFlow DType." % (value,))
        return DType(_NAMES[value])
    if value is float:
        return DType(1)
    if value is int:
        return DType(3)
    if value is bool:
        return DType(10)
    if value in (str, bytes, object):
        return DType(7)
    try:
        return DType(_NP_TO_ENUM[np.dtype(value)])
    except (TypeError, KeyError):
        raise TypeError("Cannot convert value %r to a TensorFlow DType." % (value,)) from None


# ---- values as tensors ----

def _is_tensor_like(v):
    return isinstance(v, (Tensor, Variable))


def _numpy_value(values, dtype):
    """values as a numpy array with TensorFlow 1's dtype rules."""
    if dtype is not None:
        if dtype.base_dtype.as_datatype_enum == 7:
            return np.asarray(values, dtype=object)
        np_type = dtype.base_dtype.as_numpy_dtype
        if np_type is None:
            raise TypeError("graphrt: no numpy type for %s" % dtype.name)
        arr = np.asarray(values)
        if arr.dtype.kind == "f" and np.dtype(np_type).kind in "iub":
            raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.base_dtype.name, values,
                                                                            type(values).__name__))
        if arr.dtype.kind in "USO" and np.dtype(np_type).kind not in "USO":
            raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.base_dtype.name, values,
                                                                            type(values).__name__))
        return arr.astype(np_type)
    arr = np.asarray(values)
    if arr.dtype.kind in "USO":
        return np.asarray(values, dtype=object)
    if not isinstance(values, (np.ndarray, np.generic)):
        # Python numbers: float -> float32, int -> int32 when it fits.
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            if arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31):
                arr = arr.astype(np.int32)
    return arr


def make_tensor_proto(values, dtype=None, shape=None):
    """A TensorProto of ``values`` (TensorFlow's tf.make_tensor_proto): a
    list shorter than ``shape`` is completed with its last value."""
    dtype = as_dtype(dtype) if dtype is not None else None
    arr = _numpy_value(values, dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        n = int(np.prod(shape)) if shape else 1
        if arr.size == n:
            arr = arr.reshape(shape)
        elif n == 0:
            arr = np.zeros(shape, dtype=arr.dtype)
        elif 0 < arr.size < n:
            flat = arr.reshape(-1)
            arr = np.concatenate([flat, np.full(n - flat.size, flat[-1], dtype=flat.dtype)]).reshape(shape)
        else:
            raise ValueError("Too many elements provided. Needed at most %d, but received %d" % (n, arr.size))
    proto = tensor_pb2.TensorProto()
    for d in arr.shape:
        proto.tensor_shape.dim.add().size = int(d)
    if arr.dtype == object:
        proto.dtype = 7
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in arr.reshape(-1))
        return proto
    enum = dtype.base_dtype.as_datatype_enum if dtype is not None else _NP_TO_ENUM.get(arr.dtype)
    if enum is None:
        raise TypeError("graphrt: cannot make a tensor of numpy dtype %s" % arr.dtype)
    proto.dtype = enum
    proto.tensor_content = np.ascontiguousarray(arr).tobytes()
    return proto


def make_ndarray(proto):
    """The numpy value of a TensorProto."""
    shape = [d.size for d in proto.tensor_shape.dim]
    if proto.dtype == 7:
        return np.array(list(proto.string_val), dtype=object).reshape(shape)
    np_type = DType(proto.dtype).as_numpy_dtype
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype=np_type).copy().reshape(shape)
    for field in ("float_val", "double_val", "int_val", "int64_val", "bool_val", "half_val"):
        vals = list(getattr(proto, field))
        if vals:
            n = int(np.prod(shape)) if shape else 1
            arr = np.array(vals + [vals[-1]] * (n - len(vals)))
            if field == "half_val":
                arr = arr.astype(np.uint16).view(np.float16)
            return arr.astype(np_type).reshape(shape)
    return np.zeros(shape, dtype=np_type)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """tf.constant: a Const node holding ``value``."""
    proto = make_tensor_proto(value, dtype, shape)
    if verify_shape and shape is not None and list(np.shape(value)) != list(shape):
        raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(shape), np.shape(value)))
    g = get_default_graph()
    with g.name_scope(name) as scope:
        attrs = [("value", attr_value_pb2.AttrValue(tensor=proto)), ("dtype", attr_value_pb2.AttrValue(type=proto.dtype))]
        return g._create_op("Const", [], attrs, scope[:-1]).outputs[0]


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False):
    """A Tensor for ``value``: a Tensor itself (its dtype checked), a
    Variable's value (its ref with ``as_ref``), a list holding tensors
    stacked ("packed"), anything else a constant."""
    dtype = as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Variable):
        t = value._ref() if as_ref else value.value()
    elif isinstance(value, Tensor):
        t = value
    elif isinstance(value, Operation):
        raise TypeError("Can not convert an Operation into a Tensor (%s)." % value.name)
    elif isinstance(value, (list, tuple)) and value and any(_is_tensor_like(v) for v in _flatten(value)):
        return _autopack(value, dtype, name or "packed")
    else:
        if dtype is None and preferred_dtype is not None:
            try:
                return constant(value, dtype=preferred_dtype, name=name or "Const")
            except (TypeError, ValueError):
                pass
        return constant(value, dtype=dtype, name=name or "Const")
    if dtype is not None and t.dtype.base_dtype != dtype.base_dtype:
        raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                         % (dtype.base_dtype.name, t.dtype.base_dtype.name, t))
    return t


def _flatten(value):
    for v in value:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def _autopack(value, dtype, name):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        elems = [(_autopack(v, dtype, "packed") if isinstance(v, (list, tuple)) else v) for v in value]
        known = [e for e in elems if _is_tensor_like(e)]
        want = dtype if dtype is not None else convert_to_tensor(known[0]).dtype.base_dtype
        tensors = [convert_to_tensor(e, dtype=want) for e in elems]
        return apply_op("Pack", values=tensors, axis=0, name=scope)


# ---- attrs ----

def _shape_proto(shape):
    proto = tensor_shape_pb2.TensorShapeProto()
    dims = TensorShape(shape).dims
    if dims is None:
        proto.unknown_rank = True
    else:
        for d in dims:
            proto.dim.add().size = -1 if d is None else d
    return proto


def _attr_value(value, attr_type, op_type, attr_name):
    v = attr_value_pb2.AttrValue()
    if isinstance(value, attr_value_pb2.AttrValue):
        return value
    try:
        if attr_type.startswith("list("):
            inner = attr_type[5:-1]
            items = list(value)
            lst = v.list
            if inner == "string":
                lst.s.extend(i if isinstance(i, bytes) else str(i).encode() for i in items)
            elif inner == "int":
                lst.i.extend(int(i) for i in items)
            elif inner == "float":
                lst.f.extend(float(i) for i in items)
            elif inner == "bool":
                lst.b.extend(bool(i) for i in items)
            elif inner == "type":
                lst.type.extend(as_dtype(i).base_dtype.as_datatype_enum for i in items)
            elif inner == "shape":
                for i in items:
                    lst.shape.add().CopyFrom(_shape_proto(i))
            elif inner == "tensor":
                for i in items:
                    lst.tensor.add().CopyFrom(i if isinstance(i, tensor_pb2.TensorProto) else make_tensor_proto(i))
            elif inner == "func":
                for i in items:
                    lst.func.add().name = i if isinstance(i, str) else i.name
            else:
                raise TypeError("unknown list attr type %s" % attr_type)
            if not items:
                v.list.SetInParent()
        elif attr_type == "string":
            v.s = value if isinstance(value, bytes) else str(value).encode()
        elif attr_type == "int":
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError("Expected int for argument '%s' not %r." % (attr_name, value))
            v.i = int(value)
        elif attr_type == "float":
            v.f = float(value)
        elif attr_type == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError("Expected bool for argument '%s' not %r." % (attr_name, value))
            v.b = bool(value)
        elif attr_type == "type":
            v.type = as_dtype(value).base_dtype.as_datatype_enum
        elif attr_type == "shape":
            v.shape.CopyFrom(_shape_proto(value))
        elif attr_type == "tensor":
            v.tensor.CopyFrom(value if isinstance(value, tensor_pb2.TensorProto) else make_tensor_proto(value))
        elif attr_type == "func":
            v.func.name = value if isinstance(value, str) else value.name
        else:
            raise TypeError("unknown attr type %s" % attr_type)
    except (TypeError, ValueError) as e:
        raise TypeError("%s: attr '%s' (%s): %s" % (op_type, attr_name, attr_type, e)) from None
    return v


def attr_value_to_python(v):
    """An AttrValue as Python: bytes, int, float, bool, DType, TensorShape,
    numpy array, function name, or a list of them."""
    which = v.WhichOneof("value")
    if which == "s":
        return v.s
    if which in ("i", "f", "b"):
        return getattr(v, which)
    if which == "type":
        return DType(v.type)
    if which == "shape":
        return TensorShape(None if v.shape.unknown_rank else [d.size for d in v.shape.dim])
    if which == "tensor":
        return make_ndarray(v.tensor)
    if which == "func":
        return v.func.name
    if which == "placeholder":
        return v.placeholder
    if which == "list":
        lst = v.list
        if lst.s:
            return list(lst.s)
        if lst.i:
            return list(lst.i)
        if lst.f:
            return list(lst.f)
        if lst.b:
            return list(lst.b)
        if lst.type:
            return [DType(t) for t in lst.type]
        if lst.shape:
            return [TensorShape(None if s.unknown_rank else [d.size for d in s.dim]) for s in lst.shape]
        if lst.tensor:
            return [make_ndarray(t) for t in lst.tensor]
        if lst.func:
            return [f.name for f in lst.func]
        return []
    return None


# ---- operations ----

def apply_op(op_type, name=None, **keywords):
    """Adds an operation of ``op_type`` to the default graph: each input arg
    of its OpDef given by its name (a tensor, a value, or a list of them for
    a list arg), attrs by theirs (those inferred from the inputs may be left
    out). Returns its output (one), its outputs (a list, or a list per
    output arg), or the Operation when it has none. ``name`` is made unique
    under the current name scope ("x/" takes "x" exactly)."""
    od = op_def(op_type)
    g = get_default_graph()
    attr_types, defaults = _op_info(od)
    given = {}
    for a in od.attr:
        if a.name in keywords:
            given[a.name] = keywords.pop(a.name)
    values = []
    for arg in od.input_arg:
        if arg.name not in keywords:
            raise TypeError("%s missing required input '%s'" % (op_type, arg.name))
        values.append(keywords.pop(arg.name))
    if keywords:
        raise TypeError("%s got unexpected keyword arguments: %s" % (op_type, ", ".join(sorted(keywords))))
    # Type attrs known from the inputs that are tensors already, or given.
    types = {}
    set_by = {}  # type attr -> the input arg whose tensor set it
    for k, val in given.items():
        if attr_types[k] == "type":
            types[k] = as_dtype(val).base_dtype
            set_by[k] = "attr %s" % k
    for arg, val in zip(od.input_arg, values):
        is_list = bool(arg.number_attr or arg.type_list_attr)
        if is_list and not isinstance(val, (list, tuple)):
            raise TypeError("Expected list for '%s' argument to '%s' Op, not %r." % (arg.name, op_type, val))
        if arg.type_attr and arg.type_attr not in types:
            for v in (val if is_list else [val]):
                if _is_tensor_like(v):
                    types[arg.type_attr] = convert_to_tensor(v).dtype.base_dtype
                    set_by[arg.type_attr] = "argument '%s'" % arg.name
                    break
    with g.name_scope(name if name else op_type) as scope:
        inputs = []
        for arg, val in zip(od.input_arg, values):
            is_list = bool(arg.number_attr or arg.type_list_attr)
            if arg.type:
                want = DType(arg.type)
            elif arg.type_attr:
                want = types.get(arg.type_attr)
            else:
                want = None
            items = list(val) if is_list else [val]
            list_types = given.get(arg.type_list_attr) if arg.type_list_attr else None
            tensors = []
            for i, v in enumerate(items):
                d = want
                if list_types is not None and i < len(list_types):
                    d = as_dtype(list_types[i])
                preferred = defaults.get(arg.type_attr) if d is None and arg.type_attr else None
                try:
                    t = convert_to_tensor(v, dtype=d, name=arg.name, preferred_dtype=preferred, as_ref=arg.is_ref)
                except (TypeError, ValueError) as e:
                    if _is_tensor_like(v) and d is not None:
                        source = set_by.get(arg.type_attr, "argument '%s'" % arg.name)
                        raise TypeError("Input '%s' of '%s' Op has type %s that does not match type %s of %s."
                                        % (arg.name, op_type, convert_to_tensor(v).dtype.base_dtype.name, d.name,
                                           source)) from None
                    raise TypeError("%s: input '%s': %s" % (op_type, arg.name, e)) from None
                if arg.type_attr and arg.type_attr not in types:
                    types[arg.type_attr] = t.dtype.base_dtype
                    set_by[arg.type_attr] = "argument '%s'" % arg.name
                    want = types[arg.type_attr]
                tensors.append(t)
            inputs.append(tensors if is_list else tensors[0])
        attrs = [(k, _attr_value(v, attr_types[k], op_type, k)) for k, v in given.items()]
        op = g._create_op(op_type, inputs, attrs, scope[:-1])
    return _outputs_of(od, op)


_op_infos = {}


def _op_info(od):
    """({attr: type string}, {type attr: its default DType}) of an OpDef,
    kept per op (the registry's OpDefs live as long as it)."""
    info = _op_infos.get(id(od))
    if info is None or info[0] is not od:
        attr_types = {a.name: a.type for a in od.attr}
        defaults = {a.name: DType(a.default_value.type) for a in od.attr
                    if a.type == "type" and a.default_value.WhichOneof("value") == "type"}
        info = _op_infos[id(od)] = (od, attr_types, defaults)
    return info[1], info[2]


def _outputs_of(od, op):
    outs = op.outputs
    if not outs:
        return op
    if len(od.output_arg) == 1 and not (od.output_arg[0].number_attr or od.output_arg[0].type_list_attr):
        return outs[0]
    result, at = [], 0
    for arg in od.output_arg:
        if arg.number_attr:
            n = op.get_attr(arg.number_attr)
        elif arg.type_list_attr:
            n = len(op.get_attr(arg.type_list_attr))
        else:
            n = None
        if n is None:
            result.append(outs[at])
            at += 1
        else:
            result.append(outs[at:at + n])
            at += n
    return result[0] if len(result) == 1 else result


def _snake_case(name):
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i > 0:
            prev = name[i - 1]
            nxt = name[i + 1] if i + 1 < len(name) else ""
            if prev.islower() or (prev.isupper() and nxt.islower()):
                out.append("_")
        out.append(c.lower())
    s = "".join(out)
    return s + "_" if keyword.iskeyword(s) else s


class _RawOps:
    """A function per registered op: ``raw_ops.MatMul(a=..., b=...)``
    (keywords only, as TensorFlow's tf.raw_ops) and ``raw_ops.mat_mul(a, b,
    transpose_b=True)`` (inputs, then attrs, positionally too)."""

    def __init__(self):
        self._functions = {}

    def _snake_index(self):
        return {_snake_case(n): n for n in _registry()}

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        fn = self._functions.get(attr)
        if fn is not None:
            return fn
        defs = _registry()
        if attr in defs:
            fn = _keyword_function(attr)
        else:
            op_type = self._snake_index().get(attr)
            if op_type is None:
                raise AttributeError("graphrt.raw_ops has no op '%s'" % attr)
            fn = _positional_function(op_type, attr)
        self._functions[attr] = fn
        return fn

    def __dir__(self):
        return sorted(set(_registry()) | set(self._snake_index()))


def _keyword_function(op_type):
    def fn(name=None, **kwargs):
        return apply_op(op_type, name=name, **kwargs)
    fn.__name__ = op_type
    fn.__doc__ = "The %s op (keyword arguments: %s)." % (op_type, ", ".join(_arg_names(op_def(op_type))))
    return fn


def _arg_names(od):
    inferred = {a.type_attr for a in od.input_arg} | {a.number_attr for a in od.input_arg} | \
               {a.type_list_attr for a in od.input_arg}
    return [a.name for a in od.input_arg] + [a.name for a in od.attr if a.name not in inferred]


def _positional_function(op_type, py_name):
    names = _arg_names(op_def(op_type))

    def fn(*args, name=None, **kwargs):
        if len(args) > len(names):
            raise TypeError("%s() takes at most %d positional arguments (%d given)" % (py_name, len(names), len(args)))
        for n, a in zip(names, args):
            if n in kwargs:
                raise TypeError("%s() got multiple values for argument '%s'" % (py_name, n))
            kwargs[n] = a
        return apply_op(op_type, name=name, **kwargs)
    fn.__name__ = py_name
    fn.__doc__ = "The %s op: %s(%s, name=None)." % (op_type, py_name, ", ".join(names))
    return fn


raw_ops = _RawOps()


def op_library_functions(op_names):
    """{snake_case name: function} for the ops a plugin defined (what
    TensorFlow's load_op_library returns as a module)."""
    refresh_op_registry()
    return {_snake_case(n): getattr(raw_ops, _snake_case(n)) for n in op_names}


# ---- variables ----

class GraphKeys:
    """TensorFlow 1's standard collection names."""
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    GLOBAL_STEP = "global_step"
    SUMMARIES = "summaries"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    SAVERS = "savers"
    QUEUE_RUNNERS = "queue_runners"
    ASSET_FILEPATHS = "asset_filepaths"
    VARIABLES = GLOBAL_VARIABLES


class Variable:
    """TensorFlow 1's (ref) Variable: "<name>" (VariableV2), its initializer
    "<name>/Assign" from "<name>/initial_value", and "<name>/read" (the
    value other ops read), colocated with it."""

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None, aggregation=None,
                 shape=None):
        if variable_def is not None:
            raise NotImplementedError("graphrt: Variable(variable_def=...)")
        if use_resource:
            raise NotImplementedError("graphrt: resource variables (use_resource=True) are not built yet")
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        g = get_default_graph()
        with g.name_scope(name or "Variable") as scope:
            with g.control_dependencies(None):
                if callable(initial_value):
                    with g.name_scope("Initializer"):
                        initial_value = initial_value()
                init = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
                var_shape = init.shape if shape is None else TensorShape(shape)
                if validate_shape and not var_shape.is_fully_defined():
                    raise ValueError("initial_value must have a shape specified: %s" % (init,))
                self._variable = apply_op("VariableV2", shape=var_shape if validate_shape else TensorShape(None),
                                          dtype=init.dtype.base_dtype, name=scope)
                with g.colocate_with(self._variable.op):
                    self._initializer_op = apply_op("Assign", ref=self._variable, value=init,
                                                    validate_shape=validate_shape, name="Assign").op
                    self._snapshot = apply_op("Identity", input=self._variable, name="read")
        self._initial_value = init
        self._trainable = trainable
        self._graph = g
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        g.add_to_collections(collections, self)

    # What a session fetches and what ops read.
    def _as_graph_element(self):
        return self._variable

    def _ref(self):
        return self._variable

    def value(self):
        return self._snapshot

    def read_value(self):
        return apply_op("Identity", input=self._variable, name="read")

    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._graph

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self.shape

    @property
    def device(self):
        return self._variable.device

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def trainable(self):
        return self._trainable

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        out = apply_op("Assign", ref=self._variable, value=value, use_locking=use_locking, name=name or "Assign")
        return out if read_value else out.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        out = apply_op("AssignAdd", ref=self._variable, value=delta, use_locking=use_locking,
                       name=name or "AssignAdd")
        return out if read_value else out.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        out = apply_op("AssignSub", ref=self._variable, value=delta, use_locking=use_locking,
                       name=name or "AssignSub")
        return out if read_value else out.op

    def load(self, value, session=None):
        framework._session_for(session).run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def __repr__(self):
        return "<graphrt.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)


def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def no_op(name=None):
    return apply_op("NoOp", name=name or "NoOp")


def group(*inputs, name=None):
    """A NoOp that runs after every input (TensorFlow's tf.group)."""
    ops = []
    for i in _flatten(inputs):
        if hasattr(i, "_as_graph_element"):
            i = i._as_graph_element()
        ops.append(i.op if isinstance(i, Tensor) else i)
    g = get_default_graph()
    with g.control_dependencies(ops):
        return no_op(name=name or "group_deps")


def variables_initializer(var_list, name="init"):
    if not var_list:
        return no_op(name=name)
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init")


# ---- operators on tensors ----

def _binary(op_type, name):
    def forward(x, y):
        return apply_op(op_type, x=x, y=y, name=name)

    def backward(x, y):
        return apply_op(op_type, x=y, y=x, name=name)
    return forward, backward


def _truediv(x, y):
    t = convert_to_tensor(x)
    op_type = "RealDiv" if t.dtype.base_dtype.as_datatype_enum in (1, 2, 19, 14, 8, 18) else "Div"
    return apply_op(op_type, x=t, y=y, name="truediv")


def _install_operators(cls):
    for dunder, op_type, name in (("add", "AddV2", "add"), ("sub", "Sub", "sub"), ("mul", "Mul", "mul"),
                                  ("floordiv", "FloorDiv", "floordiv"), ("mod", "FloorMod", "mod"),
                                  ("pow", "Pow", "pow")):
        fwd, bwd = _binary(op_type, name)
        setattr(cls, "__%s__" % dunder, fwd)
        setattr(cls, "__r%s__" % dunder, bwd)
    cls.__truediv__ = _truediv
    cls.__rtruediv__ = lambda y, x: _truediv(x, y)
    cls.__matmul__ = lambda a, b: apply_op("MatMul", a=a, b=b, name="matmul")
    cls.__rmatmul__ = lambda b, a: apply_op("MatMul", a=a, b=b, name="matmul")
    cls.__neg__ = lambda x: apply_op("Neg", x=x, name="Neg")
    cls.__abs__ = lambda x: apply_op("Abs", x=x, name="Abs")
    cls.__lt__ = lambda x, y: apply_op("Less", x=x, y=y, name="Less")
    cls.__le__ = lambda x, y: apply_op("LessEqual", x=x, y=y, name="LessEqual")
    cls.__gt__ = lambda x, y: apply_op("Greater", x=x, y=y, name="Greater")
    cls.__ge__ = lambda x, y: apply_op("GreaterEqual", x=x, y=y, name="GreaterEqual")


_install_operators(Tensor)
_install_operators(Variable)
