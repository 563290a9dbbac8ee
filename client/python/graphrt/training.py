"""Gradients and optimizers, as TensorFlow 1's Python front end has them.

``gradients`` adds the backward graph through the TF C API
(TF_AddGradientsWithPrefix), which calls the gradient function the plugin
of each op registered (plugin ABI 1.5). The optimizers update variables
with the training plugin's Apply* ops (TensorFlow's update formulas) and
name their slots as TensorFlow does ("w/Momentum", "w/Adam", "w/Adam_1").
"""

import numpy as np

from .framework import get_default_graph
from .ops import GraphKeys, Variable, _flatten, apply_op, constant, convert_to_tensor, group


def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(_flatten(x))
    return [x]


def _reaching(graph, ys):
    """Names of the nodes some y depends on through data inputs."""
    nodes = graph._node_map()
    seen = set()
    stack = [y.op.name for y in ys]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        node = nodes.get(name)
        if node is None:
            continue
        for i in node.input:
            if not i.startswith("^"):
                stack.append(i.partition(":")[0])
    return seen


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """tf.gradients: the symbolic partial derivatives of sum(ys) (weighted by
    grad_ys) with respect to each x. An x no y depends on, or whose gradient
    is stopped on the way, gets None ("none") or zeros ("zero")."""
    if stop_gradients is not None:
        raise NotImplementedError("graphrt: gradients(stop_gradients=...); use tf.stop_gradient in the graph")
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError("Unknown value for unconnected_gradients: %r" % (unconnected_gradients,))
    g = get_default_graph()
    y_list = [convert_to_tensor(y) for y in _as_list(ys)]
    x_list = [x._ref() if isinstance(x, Variable) else convert_to_tensor(x) for x in _as_list(xs)]
    prefix = g.unique_name(name or "gradients")
    grad_list = None
    if grad_ys is not None:
        given = _as_list(grad_ys)
        if len(given) != len(y_list):
            raise ValueError("Passed %d grad_ys for %d ys" % (len(given), len(y_list)))
        # Made beside the gradients' scope, which the C API wants unused.
        grad_list = []
        for i, (y, gy) in enumerate(zip(y_list, given)):
            if gy is None:
                gy = apply_op("OnesLike", x=y, name="grad_ys_%d" % i)
            grad_list.append(convert_to_tensor(gy, dtype=y.dtype.base_dtype, name="grad_ys_%d" % i))
    reach = _reaching(g, y_list)
    connected = [i for i, x in enumerate(x_list) if x.op.name in reach]
    results = [None] * len(x_list)
    if connected:
        grads = g._add_gradients(y_list, [x_list[i] for i in connected], grad_list, prefix)
        for i, grad in zip(connected, grads):
            results[i] = grad
    if unconnected_gradients == "zero":
        for i, r in enumerate(results):
            if r is None:
                results[i] = apply_op("ZerosLike", x=x_list[i], name="zeros_like")
    return results


# ---- optimizers ----

def get_global_step(graph=None):
    g = graph or get_default_graph()
    steps = g.get_collection(GraphKeys.GLOBAL_STEP)
    if steps:
        return steps[0]
    try:
        t = g.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    return t


def create_global_step(graph=None):
    g = graph or get_default_graph()
    if get_global_step(g) is not None:
        raise ValueError("\"global_step\" already exists.")
    with g.as_default(), g.name_scope(None):
        step = Variable(np.int64(0), trainable=False, name="global_step",
                        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])
    return step


def get_or_create_global_step(graph=None):
    return get_global_step(graph) or create_global_step(graph)


class Optimizer:
    """TensorFlow 1's tf.train.Optimizer: compute_gradients, apply_gradients,
    minimize; slots per variable."""

    def __init__(self, use_locking, name):
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {variable name: slot Variable}

    def get_name(self):
        return self._name

    def compute_gradients(self, loss, var_list=None, gate_gradients=1, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        g = get_default_graph()
        if var_list is None:
            var_list = g.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=None if grad_loss is None else [grad_loss])
        return list(zip(grads, var_list))

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        if not any(gr is not None for gr, _ in grads_and_vars):
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not support "
                             "gradients, between variables %s and loss %s."
                             % ([v.name for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = [(gr, v) for gr, v in grads_and_vars if gr is not None]
        if not grads_and_vars:
            raise ValueError("No gradients provided for any variable: %s." % (grads_and_vars,))
        g = get_default_graph()
        var_list = [v for _, v in grads_and_vars]
        with g.control_dependencies(None):
            self._create_slots(var_list)
        with g.name_scope(name or self._name) as scope:
            self._hyper_tensors = {k: convert_to_tensor(v, name=k) for k, v in self._hyper_values().items()}
            updates = []
            for grad, var in grads_and_vars:
                with g.name_scope("update_" + var.op.name), g.colocate_with(var.op):
                    updates.append(self._apply_dense(grad, var))
            if global_step is None:
                return self._finish(updates, scope)  # the train op is "<name>"
            finish = self._finish(updates, "update")
            with g.control_dependencies([finish]), g.colocate_with(global_step.op):
                ref = global_step._ref() if isinstance(global_step, Variable) else global_step
                return apply_op("AssignAdd", ref=ref, value=constant(1, dtype=ref.dtype.base_dtype),
                                name=scope).op

    # What each optimizer fills in.
    def _create_slots(self, var_list):
        pass

    def _hyper_values(self):
        """{name: value} of the hyperparameters, made tensors once per
        apply_gradients ("GradientDescent/learning_rate")."""
        return {}

    def _apply_dense(self, grad, var):
        raise NotImplementedError

    def _finish(self, update_ops, name):
        return group(*update_ops, name=name)

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var.op.name)

    def get_slot_names(self):
        return sorted(self._slots)

    def _slot(self, var, slot_name, op_name, initial):
        """The slot `slot_name` of var, named "<var>/<op_name>", made with
        `initial` (a value of var's dtype and shape)."""
        g = get_default_graph()
        with g.name_scope(None), g.colocate_with(var.op):
            value = np.full(var.shape.as_list(), initial, dtype=var.dtype.base_dtype.as_numpy_dtype)
            slot = Variable(value, trainable=False, name=var.op.name + "/" + op_name)
        self._slots.setdefault(slot_name, {})[var.op.name] = slot
        return slot

    def _hyper(self, name, var):
        """Hyperparameter `name` in var's dtype."""
        t = self._hyper_tensors[name]
        if t.dtype.base_dtype == var.dtype.base_dtype:
            return t
        return apply_op("Cast", x=t, DstT=var.dtype.base_dtype, name="Cast")


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * grad (ApplyGradientDescent)."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._lr = learning_rate

    def _hyper_values(self):
        return {"learning_rate": self._lr}

    def _apply_dense(self, grad, var):
        return apply_op("ApplyGradientDescent", var=var._ref(), alpha=self._hyper("learning_rate", var),
                        delta=grad, use_locking=self._use_locking, name="ApplyGradientDescent").op


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + grad; var -= lr * accum (ApplyMomentum;
    Nesterov: var -= lr * (grad + momentum * accum))."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._lr, self._momentum, self._nesterov = learning_rate, momentum, use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "momentum", self._name, 0)

    def _hyper_values(self):
        return {"learning_rate": self._lr, "momentum": self._momentum}

    def _apply_dense(self, grad, var):
        return apply_op("ApplyMomentum", var=var._ref(), accum=self.get_slot(var, "momentum")._ref(),
                        lr=self._hyper("learning_rate", var), grad=grad, momentum=self._hyper("momentum", var), use_locking=self._use_locking,
                        use_nesterov=self._nesterov, name="ApplyMomentum").op


class AdamOptimizer(Optimizer):
    """Adam (ApplyAdam) with TensorFlow's beta1_power / beta2_power
    accumulators, updated after every step."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon
        self._beta1_power = self._beta2_power = None

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        if self._beta1_power is None:
            g = get_default_graph()
            with g.name_scope(None), g.colocate_with(first.op):
                dtype = first.dtype.base_dtype.as_numpy_dtype
                self._beta1_power = Variable(dtype(self._beta1), trainable=False, name="beta1_power")
                self._beta2_power = Variable(dtype(self._beta2), trainable=False, name="beta2_power")
        for v in var_list:
            self._slot(v, "m", self._name, 0)
            self._slot(v, "v", self._name + "_1", 0)

    def _hyper_values(self):
        return {"learning_rate": self._lr, "beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}

    def _apply_dense(self, grad, var):
        return apply_op("ApplyAdam", var=var._ref(), m=self.get_slot(var, "m")._ref(),
                        v=self.get_slot(var, "v")._ref(), beta1_power=self._beta1_power.value(),
                        beta2_power=self._beta2_power.value(), lr=self._hyper("learning_rate", var),
                        beta1=self._hyper("beta1", var), beta2=self._hyper("beta2", var),
                        epsilon=self._hyper("epsilon", var), grad=grad,
                        use_locking=self._use_locking, name="ApplyAdam").op

    def _finish(self, update_ops, name):
        g = get_default_graph()
        with g.control_dependencies(update_ops), g.colocate_with(self._beta1_power.op):
            b1 = self._beta1_power.assign(self._beta1_power.value() * self._beta1, use_locking=self._use_locking)
            b2 = self._beta2_power.assign(self._beta2_power.value() * self._beta2, use_locking=self._use_locking)
        return group(*(update_ops + [b1, b2]), name=name + "/")


class RMSPropOptimizer(Optimizer):
    """RMSProp (ApplyRMSProp): ms starts at ones, mom at zeros."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        if centered:
            raise NotImplementedError("graphrt: RMSPropOptimizer(centered=True)")
        super().__init__(use_locking, name)
        self._lr, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "rms", self._name, 1)
            self._slot(v, "momentum", self._name + "_1", 0)

    def _hyper_values(self):
        return {"learning_rate": self._lr, "decay": self._decay, "momentum": self._momentum,
                "epsilon": self._epsilon}

    def _apply_dense(self, grad, var):
        return apply_op("ApplyRMSProp", var=var._ref(), ms=self.get_slot(var, "rms")._ref(),
                        mom=self.get_slot(var, "momentum")._ref(), lr=self._hyper("learning_rate", var),
                        rho=self._hyper("decay", var), momentum=self._hyper("momentum", var),
                        epsilon=self._hyper("epsilon", var), grad=grad,
                        use_locking=self._use_locking, name="ApplyRMSProp").op


class AdagradOptimizer(Optimizer):
    """Adagrad (ApplyAdagrad): accum starts at initial_accumulator_value."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        super().__init__(use_locking, name)
        self._lr, self._initial = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accumulator", self._name, self._initial)

    def _hyper_values(self):
        return {"learning_rate": self._lr}

    def _apply_dense(self, grad, var):
        return apply_op("ApplyAdagrad", var=var._ref(), accum=self.get_slot(var, "accumulator")._ref(),
                        lr=self._hyper("learning_rate", var), grad=grad, use_locking=self._use_locking,
                        name="ApplyAdagrad").op


__all__ = ["gradients", "Optimizer", "GradientDescentOptimizer", "MomentumOptimizer",
           "AdamOptimizer", "RMSPropOptimizer", "AdagradOptimizer", "get_global_step", "create_global_step",
           "get_or_create_global_step"]
