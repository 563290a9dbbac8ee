"""Graphs built in Python (graphrt.ops, graphrt.compat.v1): TensorFlow 1's
names, dtypes and shapes, checked against numpy computed here."""

import os

import numpy as np
import pytest

import graphrt
import graphrt.compat.v1 as tf
from graphrt import errors


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def node_names():
    return [n.name for n in tf.get_default_graph().as_graph_def().node]


def test_linear_model_forward_matches_numpy():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    b0 = rng.standard_normal(2).astype(np.float32)
    xv = rng.standard_normal((4, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    w = tf.Variable(w0, name="w")
    b = tf.Variable(b0, name="b")
    y = tf.nn.relu(tf.matmul(x, w) + b)
    loss = tf.reduce_mean(tf.square(y - 1.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_y, got_loss = sess.run([y, loss], {x: xv})
    want_y = np.maximum(xv @ w0 + b0, 0)
    np.testing.assert_allclose(got_y, want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_loss, np.mean((want_y - 1.0) ** 2), rtol=1e-5)


def test_node_names_are_tensorflows():
    x = tf.placeholder(tf.float32, [2], name="x")
    a = x + 1.0
    b = x + 2.0
    v = tf.Variable(tf.zeros([2]), name="v")
    with tf.name_scope("layer"):
        c = tf.multiply(a, b)
    with tf.name_scope("layer"):
        d = tf.identity(c)
    s = tf.reduce_sum(d)
    assert a.name == "add:0" and b.name == "add_1:0"
    assert a.op.inputs[1].op.name == "add/y"
    assert v.name == "v:0" and v.op.type == "VariableV2"
    assert c.name == "layer/Mul:0" and d.name == "layer_1/Identity:0"
    assert s.op.name == "Sum" and s.op.inputs[1].op.name == "Const"
    names = node_names()
    for n in ("v/Assign", "v/read", "zeros"):
        assert n in names
    # Names are unique case-insensitively, and a scope ending in "/" is reopened.
    e = tf.identity(x, name="ADD")
    assert e.name == "ADD_2:0"
    with tf.name_scope("layer/"):
        f = tf.identity(x, name="again")
    assert f.name == "layer/again:0"
    # read and Assign are colocated with the variable.
    read = tf.get_default_graph().get_operation_by_name("v/read")
    assert read.get_attr("_class") == [b"loc:@v"]


def test_dtypes_follow_tensorflow_rules():
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(np.float64(1.5)).dtype == tf.float64
    assert tf.constant(np.arange(3, dtype=np.int64)).dtype == tf.int64
    assert tf.constant([True, False]).dtype == tf.bool
    assert tf.constant(2**40).dtype == tf.int64
    assert tf.constant(1, dtype=tf.float32).dtype == tf.float32
    x = tf.placeholder(tf.int32, [2])
    assert (x + 1).dtype == tf.int32
    with pytest.raises(TypeError, match="Expected int32"):
        x + 1.5  # noqa: B018 -- TensorFlow refuses a float for an int32 input
    f = tf.placeholder(tf.float32, [2])
    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op has type float32 that does not match type int32"):
        tf.add(x, f)
    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op has type int32 that does not match type float32"):
        tf.add(f, x)


def test_shapes_are_inferred_and_checked():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.constant(np.ones((3, 4), np.float32))
    y = tf.matmul(x, w)
    assert y.shape.as_list() == [None, 4]
    assert tf.reshape(tf.constant(np.zeros((2, 3), np.float32)), [3, -1]).shape == [3, 2]
    assert tf.concat([w, w], axis=0).shape == [6, 4]
    assert tf.reduce_sum(y, axis=1, keepdims=True).shape == [None, 1]
    u = tf.placeholder(tf.float32)
    assert u.shape.ndims is None
    u.set_shape([None, 5])
    assert u.shape == [None, 5]
    u.set_shape([2, None])
    assert u.shape == [2, 5]
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
        u.set_shape([2, 6])
    with pytest.raises(ValueError, match="MatMul"):
        tf.matmul(tf.constant(np.ones((2, 3), np.float32)), tf.constant(np.ones((4, 5), np.float32)))
    # The refused op is not in the graph; its name is free again.
    assert tf.matmul(x, w, name="mm").name == "mm:0"


def test_raw_ops_by_op_name_and_snake_case():
    a = tf.constant(np.array([[1, 2], [3, 4]], np.float32))
    b = tf.constant(np.array([[5, 6], [7, 8]], np.float32))
    m1 = graphrt.raw_ops.MatMul(a=a, b=b, transpose_b=True)
    m2 = graphrt.raw_ops.mat_mul(a, b, transpose_a=True, name="tmm")
    parts = graphrt.raw_ops.Unpack(value=a, num=2, axis=0)
    assert m2.name == "tmm:0" and len(parts) == 2
    with tf.Session() as sess:
        r1, r2, p = sess.run([m1, m2, parts])
    an, bn = np.array([[1, 2], [3, 4]], np.float32), np.array([[5, 6], [7, 8]], np.float32)
    np.testing.assert_array_equal(r1, an @ bn.T)
    np.testing.assert_array_equal(r2, an.T @ bn)
    np.testing.assert_array_equal(p[1], an[1])
    with pytest.raises(TypeError, match="missing required input 'b'"):
        graphrt.raw_ops.MatMul(a=a)
    with pytest.raises(TypeError, match="unexpected keyword arguments: bogus"):
        graphrt.raw_ops.MatMul(a=a, b=b, bogus=1)
    with pytest.raises(AttributeError):
        graphrt.raw_ops.NoSuchOpAtAll  # noqa: B018


def test_variables_assign_and_collections():
    v = tf.Variable([1.0, 2.0], name="v")
    frozen = tf.Variable(3, trainable=False, name="counter")
    assert [x.name for x in tf.global_variables()] == ["v:0", "counter:0"]
    assert [x.name for x in tf.trainable_variables()] == ["v:0"]
    assert v.dtype.base_dtype == tf.float32 and v.shape == [2]
    add = v.assign_add([10.0, 20.0])
    bump = frozen.assign_add(1)
    with tf.control_dependencies([bump]):
        doubled = tf.identity(frozen.value() * 2, name="doubled")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(add), [11.0, 22.0])
        np.testing.assert_array_equal(v.eval(), [11.0, 22.0])
        sess.run(doubled)
        assert sess.run(frozen) == 4  # the control dependency ran the bump once
        v.load([0.5, 0.25], sess)
        np.testing.assert_array_equal(sess.run(v), [0.5, 0.25])
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError):
            sess.run(v)  # not initialized in this session


def test_session_sees_ops_added_after_it_was_made():
    x = tf.placeholder(tf.float32, [2], name="x")
    sess = tf.Session()
    y = x * 3.0
    np.testing.assert_array_equal(sess.run(y, {x: [1, 2]}), [3, 6])
    z = tf.square(y)
    np.testing.assert_array_equal(sess.run(z, {x: [1, 2]}), [9, 36])
    sess.close()


def test_interactive_session_and_eval():
    c = tf.constant([1.0, 2.0]) * 2.0
    sess = tf.InteractiveSession()
    try:
        np.testing.assert_array_equal(c.eval(), [2.0, 4.0])
        assert tf.get_default_session() is sess
    finally:
        sess.close()
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="No default session"):
        c.eval()


def test_devices_scopes_and_graph_elements():
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.device(lambda op: "/cpu:0" if op.type == "Identity" else ""):
        b = tf.identity(a, name="b")
        c = tf.negative(a, name="c")
    assert a.device == "/cpu:0" and b.device == "/cpu:0" and c.device == ""
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("b:0") == b and g.get_operation_by_name("c") == c.op
    assert b.op.inputs == [a] and [op.name for op in a.consumers()] == ["b", "c"]
    with tf.Session() as sess:
        assert sess.run(b) == 1.0 and sess.run(c) == -1.0


def test_building_on_an_imported_graph():
    other = tf.Graph()
    with other.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        tf.multiply(x, 2.0, name="twice")
    tf.import_graph_def(other.as_graph_def(), name="m")
    g = tf.get_default_graph()
    twice = g.get_tensor_by_name("m/twice:0")
    out = twice + tf.constant([1.0, 1.0, 1.0])
    assert out.shape == [3] and out.dtype == tf.float32
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {"m/x:0": [1, 2, 3]}), [3, 5, 7])


def test_grouping_random_and_arrays():
    tf.set_random_seed(7)
    r = tf.random_uniform([1000], minval=2.0, maxval=3.0)
    n = tf.random_normal([2000], mean=5.0, stddev=0.5)
    ints = tf.random_uniform([100], minval=0, maxval=4, dtype=tf.int32)
    stacked = tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1)
    packed = tf.convert_to_tensor([tf.constant(1.0), 2.0])  # auto-stacking
    hot = tf.one_hot([0, 2], depth=3)
    with tf.Session() as sess:
        rv, nv, iv, sv, pv, hv = sess.run([r, n, ints, stacked, packed, hot])
    assert rv.min() >= 2.0 and rv.max() < 3.0 and abs(rv.mean() - 2.5) < 0.05
    assert abs(nv.mean() - 5.0) < 0.05 and abs(nv.std() - 0.5) < 0.05
    assert iv.min() >= 0 and iv.max() <= 3 and iv.dtype == np.int32
    np.testing.assert_array_equal(sv, [[1, 3], [2, 4]])
    np.testing.assert_array_equal(pv, [1.0, 2.0])
    np.testing.assert_array_equal(hv, [[1, 0, 0], [0, 0, 1]])


def test_softmax_cross_entropy_matches_numpy():
    logits = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], np.float32)
    labels = np.array([[0, 1, 0], [0.2, 0.3, 0.5]], np.float32)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 2], logits=logits)
    sig = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    with tf.Session() as sess:
        got, got_sparse, got_sig = sess.run([loss, sparse, sig])
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, -(labels * logp).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(got_sparse, -logp[[0, 1], [1, 2]], rtol=1e-5)
    want_sig = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(got_sig, want_sig, rtol=1e-5)


def test_load_op_library_returns_the_ops_as_functions():
    path = os.path.join(graphrt._graphrt.default_plugin_directory(), "libgraphrt_ops_array_cpu.so")
    lib = graphrt.load_op_library(path)
    e = lib.expand_dims(tf.constant([1, 2]), 0)
    assert e.op.type == "ExpandDims" and e.shape == [1, 2]
    assert "ExpandDims" in lib.ops


def test_a_long_graph_builds_and_runs():
    # 3,000 ops through the C graph; the value is computed by hand.
    x = tf.constant(0.0)
    for _ in range(1000):
        x = tf.identity(x + 1.0)
    with tf.Session() as sess:
        assert sess.run(x) == 1000.0
    assert len(node_names()) == 3001


def test_cond_runs_only_the_branch_taken():
    x = tf.placeholder(tf.float32, name="x")  # unknown shape: the bad reshape fails only when run
    p = tf.placeholder(tf.bool, [], name="p")
    c = tf.constant(10.0)
    y = tf.cond(p, lambda: x * 2.0 + c, lambda: tf.reshape(x, [3]) - 1.0)
    pair = tf.cond(tf.reduce_sum(x) > 0, lambda: (x, tf.constant(1)), lambda: (-x, tf.constant(0)))
    assert y.op.type == "Merge" and y.name == "cond/Merge:0"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2], p: True}), [12, 14])
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3], p: False}), [0, 1, 2])
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(y, {x: [1, 2], p: False})  # the false branch does run now, and fails
        v, flag = sess.run(pair, {x: [-1, -2]})
        np.testing.assert_array_equal(v, [1, 2])
        assert flag == 0
    with pytest.raises(ValueError, match="same type"):
        tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(1.0))


def test_while_loop_and_an_rnn_match_numpy():
    # Powers: i counts to 5 while acc doubles and adds a captured step.
    x = tf.placeholder(tf.float32, [2], name="x")
    step = tf.constant(0.5)
    i, acc = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2.0 + step), [tf.constant(0), x])
    assert acc.shape == [2] and i.dtype == tf.int32
    capped = tf.while_loop(lambda v: tf.reduce_sum(v) < 100.0, lambda v: v * 3.0, [x], maximum_iterations=2)
    # An Elman RNN over T steps: h = tanh(W h + U x_t), with a cond inside.
    rng = np.random.default_rng(2)
    T, B, D, H = 4, 3, 2, 5
    xs_v = rng.standard_normal((T, B, D)).astype(np.float32)
    W_v = rng.standard_normal((H, H)).astype(np.float32) * 0.5
    U_v = rng.standard_normal((D, H)).astype(np.float32) * 0.5
    xs = tf.placeholder(tf.float32, [T, B, D], name="xs")
    W, U = tf.constant(W_v), tf.constant(U_v)

    def cell(t, h):
        x_t = tf.gather(xs, t)
        pre = tf.matmul(h, W) + tf.matmul(x_t, U)
        h_new = tf.cond(t < 2, lambda: tf.tanh(pre), lambda: tf.nn.relu(pre))
        return t + 1, h_new
    _, h_final = tf.while_loop(lambda t, h: t < T, cell, [tf.constant(0), tf.zeros([B, H])], name="rnn")
    with tf.Session() as sess:
        got_i, got_acc = sess.run([i, acc], {x: [1, 2]})
        got_capped = sess.run(capped, {x: [1, 2]})[0]
        got_h = sess.run(h_final, {xs: xs_v})
    assert got_i == 5
    np.testing.assert_allclose(got_acc, np.array([1, 2]) * 32 + 0.5 * 31)
    np.testing.assert_allclose(got_capped, [9, 18])
    h = np.zeros((B, H), np.float32)
    for t in range(T):
        pre = h @ W_v + xs_v[t] @ U_v
        h = np.tanh(pre) if t < 2 else np.maximum(pre, 0)
    np.testing.assert_allclose(got_h, h, rtol=1e-5, atol=1e-6)
    names = [n.name for n in tf.get_default_graph().as_graph_def().node]
    assert "rnn/LoopCond" in names and "rnn/NextIteration_1" in names
    # Gradients through loops are not built yet: an error naming the node.
    with pytest.raises(errors.UnimplementedError, match="while loops and conditionals"):
        tf.gradients(tf.reduce_sum(h_final), xs)
