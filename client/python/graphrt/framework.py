"""Graphs as graphrt's Python side sees them.

``Graph`` holds a GraphDef (imported with ``import_graph_def``, read from a
.meta file, or built op by op) and hands out ``Tensor`` / ``Operation``
handles by name. Operations built in Python (graphrt.ops, the
graphrt.compat.v1 functions) go through a graph of graphrt's TensorFlow C
API beside it, as TensorFlow >= 1.5 builds its graphs: the op's OpDef
validates them, attrs are inferred from the inputs and the op's shape
function gives each output's shape. The GraphDef gets the finished NodeDef,
so sessions see what was built on their next run.
"""

import contextlib
import threading

import numpy as np

from . import _graphrt
from .proto import graph_pb2, node_def_pb2

# DataType enum values (TensorFlow's types.proto) -> (name, numpy type or None).
_DTYPES = {
    1: ("float32", np.float32), 2: ("float64", np.float64), 3: ("int32", np.int32),
    4: ("uint8", np.uint8), 5: ("int16", np.int16), 6: ("int8", np.int8),
    7: ("string", object), 8: ("complex64", np.complex64), 9: ("int64", np.int64),
    10: ("bool", np.bool_), 11: ("qint8", np.int8), 12: ("quint8", np.uint8),
    13: ("qint32", np.int32), 14: ("bfloat16", None), 15: ("qint16", np.int16),
    16: ("quint16", np.uint16), 17: ("uint16", np.uint16), 18: ("complex128", np.complex128),
    19: ("float16", np.float16), 20: ("resource", None), 21: ("variant", None),
    22: ("uint32", np.uint32), 23: ("uint64", np.uint64),
}


class DType:
    """A tensor element type (TensorFlow's tf.DType, reduced)."""

    def __init__(self, enum):
        self._enum = enum
        base = enum - 100 if enum > 100 else enum
        self._name, self._np = _DTYPES.get(base, ("invalid", None))
        if enum > 100:
            self._name += "_ref"

    @property
    def name(self):
        return self._name

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def as_numpy_dtype(self):
        return self._np

    @property
    def base_dtype(self):
        return DType(self._enum - 100) if self._enum > 100 else self

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._enum == other._enum
        if isinstance(other, int):
            return self._enum == other
        return NotImplemented

    def __hash__(self):
        return hash(self._enum)

    def __repr__(self):
        return "tf.%s" % self._name


def as_dtype(enum):
    return DType(enum)


class Operation:
    """A node of a Graph, by name (fetching it runs it as a target)."""

    def __init__(self, graph, node_def):
        self._graph = graph
        self._node_def = node_def

    @property
    def name(self):
        return self._node_def.name

    @property
    def type(self):
        return self._node_def.op

    @property
    def node_def(self):
        return self._node_def

    @property
    def graph(self):
        return self._graph

    @property
    def outputs(self):
        return [Tensor(self, i) for i in range(len(self._graph._output_types(self.name)))]

    @property
    def inputs(self):
        out = []
        for i in self._node_def.input:
            if i.startswith("^"):
                continue
            name, _, k = i.partition(":")
            out.append(Tensor(self._graph.get_operation_by_name(name), int(k) if k else 0))
        return out

    @property
    def control_inputs(self):
        return [self._graph.get_operation_by_name(i[1:]) for i in self._node_def.input if i.startswith("^")]

    @property
    def device(self):
        return self._node_def.device

    def get_attr(self, name):
        from . import ops as _ops  # noqa: PLC0415 -- ops imports this module
        if name not in self._node_def.attr:
            raise ValueError("Operation '%s' has no attr named '%s'." % (self.name, name))
        return _ops.attr_value_to_python(self._node_def.attr[name])

    def run(self, feed_dict=None, session=None):
        """Runs the operation in ``session`` (default: the default session)."""
        _session_for(session).run(self, feed_dict=feed_dict)

    def __hash__(self):
        return hash((id(self._graph), self.name))

    def __eq__(self, other):
        return isinstance(other, Operation) and other._graph is self._graph and other.name == self.name

    def __repr__(self):
        return "<graphrt Operation '%s' type=%s>" % (self.name, self.type)


class Tensor:
    """Output ``value_index`` of an Operation; fetch it or feed it by object or name."""

    def __init__(self, op, value_index):
        self._op = op
        self._value_index = value_index

    @property
    def op(self):
        return self._op

    @property
    def name(self):
        return "%s:%d" % (self._op.name, self._value_index)

    @property
    def value_index(self):
        return self._value_index

    @property
    def graph(self):
        return self._op.graph

    @property
    def dtype(self):
        return DType(self._op.graph._output_types(self._op.name)[self._value_index])

    @property
    def shape(self):
        """What is known of the shape (TensorShape): inferred by the op's shape
        function for built graphs, a placeholder's declared shape otherwise."""
        return TensorShape(self._op.graph._tensor_shape(self._op.name, self._value_index, self._op.node_def))

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Merges ``shape`` into what is known (ValueError when they disagree)."""
        self._op.graph._set_tensor_shape(self._op.name, self._value_index, TensorShape(shape).as_list())

    @property
    def device(self):
        return self._op.device

    def eval(self, feed_dict=None, session=None):
        """The tensor's value in ``session`` (default: the default session)."""
        return _session_for(session).run(self, feed_dict=feed_dict)

    def consumers(self):
        prefix = self.name
        short = self._op.name if self._value_index == 0 else None
        return [op for op in self.graph.get_operations()
                if any(i == prefix or i == short for i in op.node_def.input)]

    def __hash__(self):
        return hash((id(self._op.graph), self.name))

    def __eq__(self, other):
        # Identity of the graph element, as TensorFlow 1's Tensor.__eq__.
        return isinstance(other, Tensor) and other._op.graph is self._op.graph and other.name == self.name

    def __repr__(self):
        return "<graphrt Tensor '%s' dtype=%s>" % (self.name, self.dtype.name)


class _OpStub:
    """What a device function sees of the operation being made (its type
    and name; TensorFlow passes the NodeDef-backed op)."""

    def __init__(self, op_type, name):
        self.type = op_type
        self.name = name
        self.node_def = node_def_pb2.NodeDef(name=name, op=op_type)


class TensorShape:
    """A possibly partial shape (TensorFlow's tf.TensorShape, reduced): None
    for an unknown rank, None entries for unknown dimensions."""

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        elif dims is not None and not isinstance(dims, (list, tuple)):
            dims = [dims]
        self._dims = None if dims is None else [None if d is None or int(d) < 0 else int(d) for d in dims]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_compatible_with(self, other):
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, i):
        if self._dims is None:
            return None
        return self._dims[i]

    def __eq__(self, other):
        try:
            other = TensorShape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(None if self._dims is None else tuple(self._dims))

    def __repr__(self):
        return "TensorShape(%r)" % (self._dims,)

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        return "(%s)" % ", ".join("?" if d is None else str(d) for d in self._dims) if len(self._dims) != 1 else \
            "(%s,)" % ("?" if self._dims[0] is None else self._dims[0])


def _session_for(session):
    if session is not None:
        return session
    from . import session as _session  # noqa: PLC0415 -- session imports this module
    default = _session.get_default_session()
    if default is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. Use "
                         "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    return default


class Graph:
    """A GraphDef that names its nodes; the default graph of graphrt.compat.v1."""

    def __init__(self, graph_def=None):
        self._graph_def = graph_pb2.GraphDef()
        if graph_def is not None:
            self._graph_def.CopyFrom(graph_def)
        self._nodes = None
        self._types = None
        self._lock = threading.RLock()
        # Built op by op (see the module's doc): the C API graph, made on the
        # first built op; the output dtypes of built ops; names in use
        # (lower case, TensorFlow's rule) with their counts.
        self._builder = None
        self._built_types = {}
        self._names_in_use = None
        self._name_stack = ""
        self._device_stack = []
        self._control_stack = []
        self._colocation_stack = []
        self._collections = {}
        self._seed = None
        self._last_id = 0
        # The branch of a cond being built (graphrt.control_flow), or None;
        # for a while_loop's scratch graph, what maps another graph's
        # tensors to placeholders.
        self._cf_context = None
        self._capture = None

    def as_graph_def(self):
        g = graph_pb2.GraphDef()
        g.CopyFrom(self._graph_def)
        return g

    def _changed(self):
        self._nodes = None
        self._types = None

    def _node_map(self):
        nodes = self._nodes
        if nodes is None:
            nodes = {n.name: n for n in self._graph_def.node}
            self._nodes = nodes
        return nodes

    def _output_types(self, name):
        built = self._built_types.get(name)
        if built is not None:
            return built
        types = self._types
        if types is None:
            types = _graphrt.graph_node_index(self._graph_def.SerializeToString())
            self._types = types
        return types[name][1]

    def get_operation_by_name(self, name):
        node = self._node_map().get(name)
        if node is None:
            raise KeyError("The name '%s' refers to an Operation not in the graph." % name)
        return Operation(self, node)

    def get_tensor_by_name(self, name):
        if ":" not in name:
            raise ValueError("The name '%s' looks like an (invalid) Operation name, not a Tensor. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\"." % name)
        op_name, _, index = name.rpartition(":")
        op = self.get_operation_by_name(op_name)
        i = int(index)
        if i >= len(self._output_types(op_name)):
            raise KeyError("The name '%s' refers to a Tensor which does not exist. The operation, '%s', "
                           "exists but only has %d outputs." % (name, op_name, len(self._output_types(op_name))))
        return Tensor(op, i)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if isinstance(obj, (Tensor, Operation)):
            return obj
        if ":" in obj and allow_tensor:
            return self.get_tensor_by_name(obj)
        if allow_operation:
            return self.get_operation_by_name(obj)
        raise ValueError("Can not convert %r to a Tensor" % (obj,))

    def get_operations(self):
        return [Operation(self, n) for n in self._graph_def.node]

    @contextlib.contextmanager
    def as_default(self):
        _default_stack.append(self)
        try:
            yield self
        finally:
            _default_stack.remove(self)

    # ---- building (graphrt.ops calls these) ----

    def _cgraph(self):
        """The C API graph beside the GraphDef (made, with what the GraphDef
        has, on first use)."""
        if self._builder is None:
            from . import errors as _errors  # noqa: PLC0415
            builder = _graphrt.GraphBuilder()
            if len(self._graph_def.node):
                try:
                    builder.import_graph_def(self._graph_def.SerializeToString())
                except _errors.OpError as e:
                    raise ValueError("graphrt: the graph's imported nodes cannot be built upon: %s" % e.message) \
                        from None
            self._builder = builder
        return self._builder

    def _mark_names(self):
        if self._names_in_use is None:
            used = {}
            for n in self._graph_def.node:
                used[n.name.lower()] = 1
                parts = n.name.lower().split("/")
                for k in range(1, len(parts)):
                    used.setdefault("/".join(parts[:k]), 1)
            self._names_in_use = used
        return self._names_in_use

    def unique_name(self, name, mark_as_used=True):
        """``name`` under the current name scope, made unique as TensorFlow 1
        does ("add", "add_1", ...; case-insensitively)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        used = self._mark_names()
        key = name.lower()
        i = used.get(key, 0)
        if mark_as_used:
            used[key] = i + 1
        if i > 0:
            base = key
            while key in used:
                key = "%s_%d" % (base, i)
                i += 1
            if mark_as_used:
                used[key] = 1
            name = "%s_%d" % (name, i - 1)
        return name

    def get_name_scope(self):
        return self._name_stack

    def _create_op(self, op_type, inputs, attrs, name, device=None):
        """Adds an operation: ``inputs`` per input arg a Tensor or a list of
        them, ``attrs`` (name, AttrValue) pairs, ``name`` final (unique).
        Returns the Operation."""
        from . import errors as _errors  # noqa: PLC0415
        with self._lock:
            if self._capture is not None:
                inputs = [[self._capture(t) for t in arg] if isinstance(arg, list) else self._capture(arg)
                          for arg in inputs]
            ctx = self._cf_context
            if ctx is not None:
                inputs = ctx.process_inputs(inputs)
            c_inputs = []
            for arg in inputs:
                if isinstance(arg, list):
                    c_inputs.append([(t._op.name, t._value_index) for t in arg])
                else:
                    c_inputs.append((arg._op.name, arg._value_index))
            controls = []
            input_ops = {t._op.name for arg in inputs for t in (arg if isinstance(arg, list) else [arg])}
            for deps in self._control_stack:
                if deps is None:
                    controls = []
                    continue
                for d in deps:
                    if d.name not in input_ops and d.name not in controls:
                        controls.append(d.name)
            if device is None:
                device = ""
                for d in self._device_stack:  # the innermost wins
                    device = (d(_OpStub(op_type, name)) or "") if callable(d) else d
            if ctx is not None and ctx.needs_pivot(inputs) and ctx.pivot.op.name not in controls:
                controls.append(ctx.pivot.op.name)
            colocate = [self._colocation_stack[-1].name] if self._colocation_stack else []
            try:
                node_bytes, types = self._cgraph().add_operation(
                    op_type, name, c_inputs, controls, device or "",
                    [(k, v.SerializeToString()) for k, v in attrs], colocate)
            except _errors.InvalidArgumentError as e:
                raise ValueError(e.message) from None
            except _errors.NotFoundError as e:
                raise ValueError(e.message) from None
            node = self._graph_def.node.add()
            node.ParseFromString(node_bytes)
            if self._nodes is not None:
                self._nodes[name] = node
            self._built_types[name] = types
            self._mark_names()[name.lower()] = max(self._names_in_use.get(name.lower(), 0), 1)
            if ctx is not None:
                ctx.add_op(name)
            return Operation(self, node)

    def _add_gradients(self, ys, xs, grad_ys, prefix):
        """TF_AddGradientsWithPrefix on the C graph; the nodes it added join
        the GraphDef. Returns a Tensor or None per x."""
        from . import errors as _errors  # noqa: PLC0415
        with self._lock:
            pairs = lambda ts: [(t._op.name, t._value_index) for t in ts]  # noqa: E731
            try:
                grads, added = self._cgraph().add_gradients(
                    pairs(ys), pairs(xs), None if grad_ys is None else pairs(grad_ys), prefix)
            except _errors.InvalidArgumentError as e:
                raise ValueError(e.message) from None
            except _errors.NotFoundError as e:
                raise LookupError(e.message) from None
            used = self._mark_names()
            for node_bytes, types in added:
                node = self._graph_def.node.add()
                node.ParseFromString(node_bytes)
                if self._nodes is not None:
                    self._nodes[node.name] = node
                self._built_types[node.name] = types
                used[node.name.lower()] = max(used.get(node.name.lower(), 0), 1)
            return [None if g is None else Tensor(self.get_operation_by_name(g[0]), g[1]) for g in grads]

    def _tensor_shape(self, op_name, index, node_def):
        if self._builder is not None and op_name in self._built_types:
            return self._builder.shape(op_name, index)
        attr = node_def.attr
        if index == 0 and "shape" in attr and not attr["shape"].shape.unknown_rank:
            return [d.size if d.size >= 0 else None for d in attr["shape"].shape.dim]
        if self._builder is not None:
            try:
                return self._builder.shape(op_name, index)
            except Exception:  # noqa: BLE001 -- not in the C graph: unknown
                return None
        return None

    def _set_tensor_shape(self, op_name, index, dims):
        from . import errors as _errors  # noqa: PLC0415
        try:
            self._cgraph().set_shape(op_name, index, [-1 if d is None else d for d in dims])
        except _errors.InvalidArgumentError as e:
            raise ValueError(e.message) from None

    # ---- collections ----

    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for n in ([names] if isinstance(names, str) else names):
            self.add_to_collection(n, value)

    def get_collection(self, name, scope=None):
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        import re  # noqa: PLC0415
        pattern = re.compile(scope)
        return [v for v in items if hasattr(v, "name") and pattern.match(v.name)]

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    # ---- scopes ----

    @contextlib.contextmanager
    def name_scope(self, name):
        """TensorFlow 1's graph.name_scope: "a" opens a unique scope under
        the current one; "a/" reopens exactly that scope; "" or None the root."""
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        self._device_stack.append(device_name_or_function or "")
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops made inside run after ``control_inputs`` (None clears the
        enclosing ones)."""
        if control_inputs is None:
            deps = None
        else:
            deps = []
            for c in control_inputs:
                if hasattr(c, "_as_graph_element"):
                    c = c._as_graph_element()
                if isinstance(c, Tensor):
                    c = c.op
                if not isinstance(c, Operation):
                    raise TypeError("Can not convert a %s into a Tensor or Operation." % type(c).__name__)
                deps.append(c)
        self._control_stack.append(deps)
        try:
            yield
        finally:
            self._control_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        if hasattr(op, "_as_graph_element"):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        self._colocation_stack.append(op)
        try:
            yield
        finally:
            self._colocation_stack.pop()

    def _add_graph_def(self, graph_def, prefix):
        existing = self._node_map()
        new_nodes = []
        for n in graph_def.node:
            m = node_def_pb2.NodeDef()
            m.CopyFrom(n)
            if prefix:
                m.name = prefix + "/" + n.name
                del m.input[:]
                for inp in n.input:
                    m.input.append("^" + prefix + "/" + inp[1:] if inp.startswith("^") else prefix + "/" + inp)
                if "_class" in m.attr:
                    scoped = [b"loc:@" + prefix.encode() + b"/" + v[5:] if v.startswith(b"loc:@") else v
                              for v in m.attr["_class"].list.s]
                    del m.attr["_class"].list.s[:]
                    m.attr["_class"].list.s.extend(scoped)
            if m.name in existing:
                raise ValueError("import_graph_def: a node named '%s' is already in the graph" % m.name)
            new_nodes.append(m)
        if self._builder is not None and new_nodes:
            from . import errors as _errors  # noqa: PLC0415
            add = graph_pb2.GraphDef()
            add.node.extend(new_nodes)
            if graph_def.HasField("library"):
                add.library.CopyFrom(graph_def.library)
            try:
                self._builder.import_graph_def(add.SerializeToString())
            except _errors.OpError as e:
                raise ValueError(e.message) from None
        self._graph_def.node.extend(new_nodes)
        if graph_def.HasField("library"):
            self._graph_def.library.MergeFrom(graph_def.library)
        if graph_def.HasField("versions") and not self._graph_def.HasField("versions"):
            self._graph_def.versions.CopyFrom(graph_def.versions)
        self._changed()
        self._names_in_use = None


_default_graph = Graph()
_default_stack = []


def get_default_graph():
    return _default_stack[-1] if _default_stack else _default_graph


def reset_default_graph():
    global _default_graph
    if _default_stack:
        raise AssertionError("Do not use reset_default_graph() inside a graph.as_default() block.")
    _default_graph = Graph()


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Adds graph_def's nodes to the default graph, under the scope ``name``
    ("import" when None, none when ""). ``input_map`` is not supported."""
    if input_map:
        raise NotImplementedError("graphrt: import_graph_def(input_map=...) is not supported")
    if isinstance(graph_def, bytes):
        g = graph_pb2.GraphDef()
        g.ParseFromString(graph_def)
        graph_def = g
    prefix = "import" if name is None else name.rstrip("/")
    graph = get_default_graph()
    graph._add_graph_def(graph_def, prefix)
    if return_elements is None:
        return None
    scoped = (lambda s: prefix + "/" + s) if prefix else (lambda s: s)
    return [graph.as_graph_element(scoped(e)) for e in return_elements]
