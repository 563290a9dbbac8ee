"""TensorFlow 1's tf.cond: Switch and Merge, built as TensorFlow 1 builds
them (the graphs graphrt already runs from TensorFlow's files).

Inside a branch, a tensor made outside it is read through a Switch on the
predicate (one per tensor and branch, "cond/Switch_1"), and an op with no
inputs waits for the branch's pivot ("cond/switch_t"), so that nothing of
the branch not taken runs. Gradients through cond are not built yet.
"""

from .framework import Operation, get_default_graph
from .ops import Variable, _flatten, apply_op, convert_to_tensor


class CondContext:
    """One branch of a cond while its function builds it (Graph._create_op
    asks it to route inputs)."""

    def __init__(self, graph, pred_id, pivot, branch, scope):
        self._graph = graph
        self._pred = pred_id
        self._pivot = pivot
        self._branch = branch  # 1: true, 0: false
        self._scope = scope    # "cond/" (reopened for the Switches)
        self._outer = graph._cf_context
        self._ops = set()
        self._switched = {}

    def process_inputs(self, inputs):
        return [[self._route(t) for t in arg] if isinstance(arg, list) else self._route(arg) for arg in inputs]

    def needs_pivot(self, inputs):
        """An op with no inputs runs only when the branch is taken."""
        return not inputs

    @property
    def pivot(self):
        return self._pivot

    def add_op(self, name):
        self._ops.add(name)

    def contains(self, name):
        return name in self._ops

    def _route(self, t):
        if self.contains(t.op.name) or t.op.name == self._pivot.op.name:
            return t
        switched = self._switched.get(t.name)
        if switched is not None:
            return switched
        g = self._graph
        saved = g._cf_context
        g._cf_context = self._outer  # the Switch belongs to the enclosing context
        try:
            with g.name_scope(self._scope), g.control_dependencies(None):
                op_type = "RefSwitch" if t.dtype.as_datatype_enum > 100 else "Switch"  # noqa: PLR2004
                outputs = apply_op(op_type, data=t, pred=self._pred, name="Switch")
        finally:
            g._cf_context = saved
        switched = self._switched[t.name] = outputs[self._branch]
        return switched


def _as_tensors(value, what):
    flat = list(_flatten(value)) if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in flat:
        if isinstance(v, Operation):
            raise TypeError("graphrt: cond's %s returned an Operation (%s); return tensors" % (what, v.name))
        out.append(v.value() if isinstance(v, Variable) else convert_to_tensor(v))
    return out


def _branch(g, ctx, fn, what):
    saved = g._cf_context
    g._cf_context = ctx
    try:
        result = fn()
        if result is None:
            raise ValueError("graphrt: cond's %s must return a value (it returned None)" % what)
        tensors = _as_tensors(result, what)
        # A result made outside the branch is read through its Switch too.
        tensors = [ctx.process_inputs([t])[0] for t in tensors]
    finally:
        g._cf_context = saved
    return result, tensors


def _rebuild(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, (list, tuple)):
            items = [build(x) for x in s]
            return type(s)(items) if isinstance(s, tuple) and not hasattr(s, "_fields") else \
                (type(s)(*items) if isinstance(s, tuple) else items)
        return next(it)
    return build(structure)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """tf.cond: true_fn() if pred else false_fn(), only the branch taken
    running. Both must return the same structure of tensors (of matching
    dtypes); a single tensor comes back as a tensor."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable.")
    g = get_default_graph()
    with g.name_scope(name or "cond") as scope:
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype.as_datatype_enum != 10:  # noqa: PLR2004
            raise TypeError("pred must be a bool tensor, got %s" % pred.dtype.name)
        p_false, p_true = apply_op("Switch", data=pred, pred=pred, name="Switch")
        pivot_true = apply_op("Identity", input=p_true, name="switch_t")
        pivot_false = apply_op("Identity", input=p_false, name="switch_f")
        pred_id = apply_op("Identity", input=pred, name="pred_id")
        true_result, true_tensors = _branch(g, CondContext(g, pred_id, pivot_true, 1, scope), true_fn, "true_fn")
        _, false_tensors = _branch(g, CondContext(g, pred_id, pivot_false, 0, scope), false_fn, "false_fn")
        if len(true_tensors) != len(false_tensors):
            raise ValueError("Outputs of true_fn and false_fn must have the same structure: %d vs %d tensors"
                             % (len(true_tensors), len(false_tensors)))
        merged = []
        for t, f in zip(true_tensors, false_tensors):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError("Outputs of true_fn and false_fn must have the same type: %s, %s"
                                 % (t.dtype.base_dtype.name, f.dtype.base_dtype.name))
            merged.append(apply_op("Merge", inputs=[f, t], name="Merge")[0])
    if isinstance(true_result, (list, tuple)):
        return _rebuild(true_result, merged)
    return merged[0]




# ---- while_loop ----

_LOOP_OPS = ("Enter", "Merge", "Switch", "Identity", "Exit", "NextIteration", "LoopCond")


def _scratch_graph(outer):
    """A graph the loop's cond or body is built in: a tensor of `outer` it
    reads becomes a placeholder ("captured_<k>") bound to that tensor."""
    from .framework import Graph  # noqa: PLC0415 -- framework has no import of this module
    sg = Graph()
    sg._captured = []  # (placeholder name, outer tensor)

    def capture(t):
        if t._op.graph is sg:
            return t
        if t._op.graph is not outer:
            raise ValueError("graphrt: a while_loop function read %s, a tensor of another graph" % t.name)
        for name, c in sg._captured:
            if c == t:
                return sg.get_tensor_by_name(name + ":0")
        saved = sg._capture
        sg._capture = None
        try:
            with sg.as_default(), sg.name_scope(None):
                p = apply_op("Placeholder", dtype=t.dtype.base_dtype, name="captured")
        finally:
            sg._capture = saved
        sg._captured.append((p.op.name, t))
        return p
    sg._capture = capture
    return sg


def _build(outer, fn, loop_vars):
    """fn(*placeholders of loop_vars) built in a scratch graph: (graph, the
    placeholders' names, the flat results)."""
    sg = _scratch_graph(outer)
    with sg.as_default():
        phs = [apply_op("Placeholder", dtype=v.dtype.base_dtype, shape=v.shape, name="loop_var") for v in loop_vars]
        result = fn(*phs)
        if isinstance(result, (list, tuple)):
            flat = [convert_to_tensor(r) for r in _flatten(result)]
        else:
            flat = [convert_to_tensor(result)]
    return sg, [p.op.name for p in phs], flat, result


def _copy_nodes(sg, scope, frame, bindings, pivot, taken, out):
    """sg's nodes into `out` under `scope`: placeholders in `bindings` (name
    -> tensor name) left out and read as bound; ops with no data inputs wait
    for `pivot`; Enter frames nested under `frame`. Returns {old: new}."""
    nodes = sg.as_graph_def().node  # one copy of the scratch graph
    renamed = {}
    for n in nodes:
        if n.name in bindings:
            continue
        new = scope + n.name
        k = 1
        while new in taken:
            new = "%s%s_%d" % (scope, n.name, k)
            k += 1
        taken.add(new)
        renamed[n.name] = new
    for n in nodes:
        if n.name in bindings:
            continue
        m = out.node.add()
        m.CopyFrom(n)
        m.name = renamed[n.name]
        del m.input[:]
        data_inputs = 0
        for i in n.input:
            control = i.startswith("^")
            src, _, idx = i.lstrip("^").partition(":")
            if src in bindings:
                target = bindings[src]
                m.input.append(("^" + target.split(":")[0]) if control else target)
            else:
                m.input.append(("^" if control else "") + renamed[src] + ((":" + idx) if idx else ""))
            data_inputs += 0 if control else 1
        if data_inputs == 0:
            m.input.append("^" + pivot)
        if m.op in ("Enter", "RefEnter"):
            m.attr["frame_name"].s = (frame + "/").encode() + m.attr["frame_name"].s
    return renamed


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """tf.while_loop: loop_vars = body(*loop_vars) while cond(*loop_vars),
    as TensorFlow 1's Enter / Merge / Switch / NextIteration / Exit frame
    named after the loop's name scope; tensors the functions read from
    outside enter the frame as constants. Returns the final loop_vars (one
    tensor when there is one). Loop variables keep their shapes. Gradients
    through the loop are not built yet."""
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable.")
    g = get_default_graph()
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars
    flat_vars = [v.value() if isinstance(v, Variable) else convert_to_tensor(v) for v in _flatten(structure)]
    if not flat_vars:
        raise ValueError("No loop variables provided")
    user_cond, user_body = cond, body
    n = len(flat_vars)
    if maximum_iterations is not None:
        limit = convert_to_tensor(maximum_iterations, dtype=3, name="maximum_iterations")
        flat_vars = flat_vars + [convert_to_tensor(0, dtype=3, name="iteration_counter")]

        def cond(*vs):  # noqa: F811 -- the counter bounds the user's cond
            return apply_op("LogicalAnd", x=apply_op("Less", x=vs[-1], y=limit, name="Less"),
                            y=user_cond(*_rebuild(structure, list(vs[:n]))), name="LogicalAnd")

        def body(*vs):  # noqa: F811
            out = user_body(*_rebuild(structure, list(vs[:n])))
            out = list(_flatten(out)) if isinstance(out, (list, tuple)) else [out]
            return out + [apply_op("AddV2", x=vs[-1], y=1, name="add")]
    else:
        def cond(*vs):  # noqa: F811
            return user_cond(*_rebuild(structure, list(vs)))

        def body(*vs):  # noqa: F811
            return user_body(*_rebuild(structure, list(vs)))

    from .proto import graph_pb2  # noqa: PLC0415
    with g.name_scope(name or "while") as scope:
        frame = scope[:-1]
        cond_graph, cond_phs, cond_out, _ = _build(g, cond, flat_vars)
        body_graph, body_phs, body_out, _ = _build(g, body, flat_vars)
        if len(cond_out) != 1 or cond_out[0].dtype.base_dtype.as_datatype_enum != 10:  # noqa: PLR2004
            raise TypeError("while_loop's cond must return one bool tensor")
        if len(body_out) != len(flat_vars):
            raise ValueError("while_loop's body returned %d tensors for %d loop variables"
                             % (len(body_out), len(flat_vars)))
        for v, b in zip(flat_vars, body_out):
            if v.dtype.base_dtype != b.dtype.base_dtype:
                raise TypeError("while_loop: the body changed a loop variable's dtype from %s to %s"
                                % (v.dtype.base_dtype.name, b.dtype.base_dtype.name))
        loop = graph_pb2.GraphDef()
        taken = set()

        def node(base, i, op, inputs, attrs):
            nm = scope + (base if i == 0 else "%s_%d" % (base, i))
            taken.add(nm)
            m = loop.node.add()
            m.name, m.op = nm, op
            m.input.extend(inputs)
            for k, v in attrs.items():
                m.attr[k].CopyFrom(v)
            return nm
        from .ops import _attr_value  # noqa: PLC0415
        T = lambda t: _attr_value(t.dtype.base_dtype, "type", "while_loop", "T")  # noqa: E731
        enter_attrs = {"frame_name": _attr_value(frame, "string", "Enter", "frame_name"),
                       "parallel_iterations": _attr_value(parallel_iterations, "int", "Enter", "parallel_iterations")}
        merges, identities = [], []
        for i, v in enumerate(flat_vars):
            enter = node("Enter", i, "Enter", [v.name], dict(enter_attrs, T=T(v),
                         is_constant=_attr_value(False, "bool", "Enter", "is_constant")))
            merges.append(node("Merge", i, "Merge", [enter, scope + ("NextIteration" if i == 0 else
                                                                    "NextIteration_%d" % i)],
                               {"T": T(v), "N": _attr_value(2, "int", "Merge", "N")}))
        constants = {}  # outer tensor name -> its constant Enter
        for sg in (cond_graph, body_graph):
            for ph, t in sg._captured:
                if t.name not in constants:
                    constants[t.name] = node("Enter", len(flat_vars) + len(constants), "Enter", [t.name],
                                             dict(enter_attrs, T=T(t),
                                                  is_constant=_attr_value(True, "bool", "Enter", "is_constant")))
        cond_bind = {ph: m + ":0" for ph, m in zip(cond_phs, merges)}
        cond_bind.update({ph: constants[t.name] + ":0" for ph, t in cond_graph._captured})
        taken.update(scope + b + ("" if i == 0 else "_%d" % i) for b in _LOOP_OPS for i in range(len(flat_vars)))
        taken.add(scope + "LoopCond")
        cond_names = _copy_nodes(cond_graph, scope, frame, cond_bind, merges[0], taken, loop)
        cond_result = cond_out[0]
        cond_tensor = cond_bind.get(cond_result.op.name) or "%s:%d" % (cond_names[cond_result.op.name],
                                                                       cond_result.value_index)
        loop_cond = node("LoopCond", 0, "LoopCond", [cond_tensor], {})
        for i, v in enumerate(flat_vars):
            switch = node("Switch", i, "Switch", [merges[i], loop_cond], {"T": T(v)})
            node("Exit", i, "Exit", [switch + ":0"], {"T": T(v)})
            identities.append(node("Identity", i, "Identity", [switch + ":1"], {"T": T(v)}))
        body_bind = {ph: ident + ":0" for ph, ident in zip(body_phs, identities)}
        body_bind.update({ph: constants[t.name] + ":0" for ph, t in body_graph._captured})
        body_names = _copy_nodes(body_graph, scope, frame, body_bind, identities[0], taken, loop)
        for i, (v, b) in enumerate(zip(flat_vars, body_out)):
            src = body_bind.get(b.op.name) or "%s:%d" % (body_names[b.op.name], b.value_index)
            node("NextIteration", i, "NextIteration", [src], {"T": T(v)})
    g._add_graph_def(loop, "")
    exits = []
    for i, v in enumerate(flat_vars[:n]):
        t = g.get_tensor_by_name(scope + ("Exit" if i == 0 else "Exit_%d" % i) + ":0")
        if shape_invariants is None and v.shape.ndims is not None:
            t.set_shape(v.shape.as_list())
        exits.append(t)
    if single and not return_same_structure:
        return exits[0]
    return _rebuild(structure, exits)


__all__ = ["cond", "while_loop"]
