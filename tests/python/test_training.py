"""Gradients (the plugins' gradient functions through TF_AddGradients) and
the optimizers, checked against central differences and numpy versions of
TensorFlow's update formulas computed here."""

import numpy as np
import pytest

import graphrt
import graphrt.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def check_gradient(build, inputs, dtype=np.float64, h=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """d/dx sum(build(*xs) * w) by tf.gradients against central differences,
    for every float input; w is random, so every output element counts."""
    rng = np.random.default_rng(seed)
    tf.reset_default_graph()
    phs = [tf.placeholder(v.dtype, v.shape, name="x%d" % i) for i, v in enumerate(inputs)]
    y = build(*phs)
    y_shape = y.shape.as_list()
    w = rng.standard_normal(y_shape).astype(y.dtype.as_numpy_dtype)
    loss = tf.reduce_sum(y * w)
    wrt = [i for i, v in enumerate(inputs) if v.dtype.kind == "f"]
    grads = tf.gradients(loss, [phs[i] for i in wrt])
    with tf.Session() as sess:
        feed = {p: v for p, v in zip(phs, inputs)}
        got = sess.run(grads, feed)
        for k, i in enumerate(wrt):
            want = np.zeros_like(inputs[i], dtype=np.float64)
            for idx in np.ndindex(*inputs[i].shape):
                plus, minus = inputs[i].copy(), inputs[i].copy()
                plus[idx] += h
                minus[idx] -= h
                lp = sess.run(loss, {**feed, phs[i]: plus})
                lm = sess.run(loss, {**feed, phs[i]: minus})
                want[idx] = (float(lp) - float(lm)) / (2 * h)
            np.testing.assert_allclose(got[k], want, rtol=rtol, atol=atol,
                                       err_msg="d/d input %d of %s" % (i, y.op.type))


def rand(*shape, seed=1, dtype=np.float64, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


F32 = dict(dtype=np.float32, h=1e-2, rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("op", [tf.add, tf.subtract, tf.multiply, tf.divide, tf.squared_difference])
def test_broadcasting_binary_ops(op):
    a, b = rand(2, 3, seed=1), rand(3, seed=2, low=0.5, high=2.0)
    check_gradient(op, [a, b])
    check_gradient(op, [b, a + 3.0])  # the other operand broadcast


@pytest.mark.parametrize("fn,low", [(tf.negative, -1), (tf.square, -1), (tf.tanh, -1), (tf.sqrt, 0.5),
                                    (tf.rsqrt, 0.5), (tf.reciprocal, 0.5), (tf.exp, -1), (tf.log, 0.5),
                                    (lambda x: tf.raw_ops.Log1p(x=x), 0.5), (tf.abs, 0.2), (tf.sigmoid, -2),
                                    (tf.nn.relu, 0.1), (tf.nn.relu6, 0.1), (tf.nn.elu, -1),
                                    (lambda x: tf.nn.leaky_relu(x, alpha=0.3), -1), (tf.identity, -1)])
def test_unary_ops(fn, low):
    x = rand(2, 3, seed=3, low=low, high=low + 2.0)
    if fn in (tf.nn.relu, tf.nn.relu6, tf.abs):
        x = np.where(np.arange(6).reshape(2, 3) % 2 == 0, x, -x)  # both sides of the kink, away from it
    check_gradient(fn, [x])


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_all_transposes(ta, tb):
    a = rand(3, 2, seed=4) if ta else rand(2, 3, seed=4)
    b = rand(4, 3, seed=5) if tb else rand(3, 4, seed=5)
    check_gradient(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [a, b])


@pytest.mark.parametrize("axis,keep", [(None, False), (0, False), (1, True), (-1, False), ([0, 2], False),
                                       ([0, -1], True)])
def test_reductions(axis, keep):
    x = rand(2, 3, 2, seed=6)
    check_gradient(lambda t: tf.reduce_sum(t, axis=axis, keepdims=keep), [x])
    check_gradient(lambda t: tf.reduce_mean(t, axis=axis, keepdims=keep), [x])


def test_array_ops():
    x = rand(2, 3, seed=7)
    check_gradient(lambda t: tf.reshape(t, [3, 2]), [x])
    check_gradient(lambda t: tf.expand_dims(t, 1), [x])
    check_gradient(lambda t: tf.squeeze(tf.expand_dims(t, 0), [0]), [x])
    check_gradient(lambda t: tf.transpose(t), [x])
    check_gradient(lambda t: tf.transpose(tf.reshape(t, [1, 2, 3]), [2, 0, 1]), [x])
    check_gradient(lambda a, b: tf.concat([a, b], axis=1), [x, rand(2, 2, seed=8)])
    check_gradient(lambda a, b: tf.concat([a, b], axis=-2), [x, rand(1, 3, seed=8)])
    check_gradient(lambda a, b: tf.stack([a, b], axis=1), [x, rand(2, 3, seed=9)])
    check_gradient(lambda t: tf.unstack(t, axis=1)[1] * 2.0 + tf.unstack(t, axis=1)[2], [x])
    check_gradient(lambda a, b, c: tf.add_n([a, b, c]), [x, rand(2, 3, seed=10), rand(2, 3, seed=11)])
    check_gradient(lambda t: tf.raw_ops.BroadcastTo(input=t, shape=[4, 2, 3]), [x])
    check_gradient(lambda t: tf.cast(tf.cast(t, tf.float32), tf.float64), [x], h=1e-3, rtol=1e-3, atol=1e-4)
    cond = np.array([[True, False, True], [False, True, True]])
    check_gradient(lambda a, b: tf.where(tf.constant(cond), a, b), [x, rand(2, 3, seed=12)])
    check_gradient(lambda a, b: tf.raw_ops.IdentityN(input=[a, b])[1] * 3.0, [x, rand(2, 2, seed=13)])


def test_nn_ops():
    logits = rand(2, 4, seed=14)
    check_gradient(tf.nn.softmax, [logits])
    check_gradient(tf.nn.log_softmax, [logits])
    check_gradient(lambda v, b: tf.nn.bias_add(v, b), [rand(2, 3, seed=15), rand(3, seed=16)])
    check_gradient(tf.nn.l2_loss, [rand(2, 3, seed=17)])
    labels = np.array([[0.2, 0.3, 0.4, 0.1], [0.0, 1.0, 0.0, 0.0]])
    check_gradient(lambda z, lab: tf.nn.softmax_cross_entropy_with_logits_v2(labels=lab, logits=z),
                   [logits, labels])
    check_gradient(lambda z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[3, 1], logits=z), [logits])


def test_convolution_and_pooling():
    image = rand(1, 4, 4, 2, seed=18, dtype=np.float32)
    kernel = rand(2, 2, 2, 3, seed=19, dtype=np.float32)
    for padding in ("SAME", "VALID"):
        check_gradient(lambda x, k: tf.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding=padding), [image, kernel],
                       **F32)
    check_gradient(lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [image], **F32)
    # Max pooling away from ties: distinct values.
    distinct = (np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) * 0.37) % 5.0
    check_gradient(lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [distinct], **F32)


def test_unconnected_and_stopped_gradients():
    x = tf.placeholder(tf.float32, [2], name="x")
    z = tf.placeholder(tf.float32, [2], name="z")
    y = tf.reduce_sum(x * 2.0 + tf.stop_gradient(x * z))
    gx, gz = tf.gradients(y, [x, z])
    assert gz is None  # only through stop_gradient
    other = tf.placeholder(tf.float32, [2], name="other")
    assert tf.gradients(y, other) == [None]
    zeros = tf.gradients(y, [other], unconnected_gradients="zero")[0]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(gx, {x: [1, 2], z: [3, 4]}), [2, 2])
        np.testing.assert_array_equal(sess.run(zeros, {other: [5, 6]}), [0, 0])
    # grad_ys weights the ys; several ys add up.
    y2 = x * x
    g = tf.gradients([y2, x * 3.0], x, grad_ys=[tf.constant([1.0, 10.0]), None])[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1.0, 2.0]}), [2 * 1 + 3, 10 * 4 + 3])


def test_errors_name_the_node():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.raw_ops.Cumsum(x=x, axis=0, name="running")
    with pytest.raises(LookupError, match="No gradient defined for operation 'running' \\(op type: Cumsum\\)"):
        tf.gradients(tf.reduce_sum(y), x)
    # The graph keeps working: nothing half-built was left behind.
    g = tf.gradients(tf.reduce_sum(x * x), x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1, 2, 3]}), [2, 4, 6])
    names = [n.name for n in tf.get_default_graph().as_graph_def().node]
    assert not any(n.startswith("gradients/running_grad") for n in names)


# ---- optimizers against numpy ----

def regression_data():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.25).astype(np.float32)
    return x, y


def train_linear(optimizer, steps=5):
    x_data, y_data = regression_data()
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(np.full((3, 1), 0.1, np.float32), name="w")
    b = tf.Variable(np.zeros(1, np.float32), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.get_or_create_global_step()
    train = optimizer.minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train, {x: x_data, y: y_data})
        return sess.run([w, b, step]), optimizer


def numpy_linear(update, steps=5):
    x, y = (a.astype(np.float64) for a in regression_data())
    params = [np.full((3, 1), 0.1), np.zeros(1)]
    state = [{} for _ in params]
    for t in range(1, steps + 1):
        r = x @ params[0] + params[1] - y
        grads = [2 * x.T @ r / len(x), np.array([2 * r.mean()])]
        for p, g, s in zip(params, grads, state):
            update(p, g, s, t)
    return params


def test_gradient_descent_matches_numpy():
    (w, b, step), _ = train_linear(tf.train.GradientDescentOptimizer(0.1))

    def sgd(p, g, s, t):
        p -= 0.1 * g
    want = numpy_linear(sgd)
    np.testing.assert_allclose(w, want[0], rtol=1e-5)
    np.testing.assert_allclose(b, want[1], rtol=1e-5, atol=1e-6)
    assert step == 5


def test_momentum_matches_numpy():
    (w, b, _), opt = train_linear(tf.train.MomentumOptimizer(0.05, 0.9))

    def momentum(p, g, s, t):
        s["a"] = 0.9 * s.get("a", 0) + g
        p -= 0.05 * s["a"]
    want = numpy_linear(momentum)
    np.testing.assert_allclose(w, want[0], rtol=1e-5)
    assert opt.get_slot_names() == ["momentum"]
    names = [n.name for n in tf.get_default_graph().as_graph_def().node]
    assert "w/Momentum" in names and "b/Momentum" in names


def test_adam_matches_numpy():
    (w, b, _), _ = train_linear(tf.train.AdamOptimizer(0.01))

    def adam(p, g, s, t):
        s["m"] = 0.9 * s.get("m", 0) + 0.1 * g
        s["v"] = 0.999 * s.get("v", 0) + 0.001 * g * g
        lr = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        p -= lr * s["m"] / (np.sqrt(s["v"]) + 1e-8)
    want = numpy_linear(adam)
    np.testing.assert_allclose(w, want[0], rtol=1e-4)
    np.testing.assert_allclose(b, want[1], rtol=1e-4, atol=1e-6)
    names = [n.name for n in tf.get_default_graph().as_graph_def().node]
    for n in ("w/Adam", "w/Adam_1", "beta1_power", "beta2_power", "Adam/update_w/ApplyAdam"):
        assert n in names, n


def test_rmsprop_and_adagrad_match_numpy():
    (w, _, _), _ = train_linear(tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5))

    def rmsprop(p, g, s, t):
        s["ms"] = 0.9 * s.get("ms", 1.0) + 0.1 * g * g
        s["mom"] = 0.5 * s.get("mom", 0) + 0.01 * g / np.sqrt(s["ms"] + 1e-10)
        p -= s["mom"]
    np.testing.assert_allclose(w, numpy_linear(rmsprop)[0], rtol=1e-4)
    tf.reset_default_graph()
    (w, _, _), _ = train_linear(tf.train.AdagradOptimizer(0.1))

    def adagrad(p, g, s, t):
        s["acc"] = s.get("acc", 0.1) + g * g
        p -= 0.1 * g / np.sqrt(s["acc"])
    np.testing.assert_allclose(w, numpy_linear(adagrad)[0], rtol=1e-4)


def test_softmax_classifier_learns():
    # MNIST-style: a softmax layer on generated, separable data.
    rng = np.random.default_rng(3)
    centers = rng.standard_normal((4, 8)) * 3
    labels = rng.integers(0, 4, 256)
    data = (centers[labels] + rng.standard_normal((256, 8))).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 8])
    y = tf.placeholder(tf.int32, [None])
    hidden = tf.nn.relu(tf.matmul(x, tf.Variable(rng.standard_normal((8, 16)).astype(np.float32) * 0.3)) +
                        tf.Variable(np.zeros(16, np.float32)))
    logits = tf.matmul(hidden, tf.Variable(rng.standard_normal((16, 4)).astype(np.float32) * 0.3))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32), y), tf.float32))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: data, y: labels})
        for _ in range(60):
            sess.run(train, {x: data, y: labels})
        last, acc = sess.run([loss, accuracy], {x: data, y: labels})
    assert last < first / 4 and acc > 0.95, (first, last, acc)


def test_variable_scope_and_get_variable():
    with tf.variable_scope("layer1"):
        w = tf.get_variable("w", [3, 4], initializer=tf.constant_initializer(0.5))
        b = tf.get_variable("b", [4], initializer=tf.zeros_initializer())
        h = tf.identity(w, name="h")
    assert w.name == "layer1/w:0" and b.name == "layer1/b:0" and h.name == "layer1/h:0"
    with pytest.raises(ValueError, match="Variable layer1/w already exists, disallowed"):
        with tf.variable_scope("layer1"):
            tf.get_variable("w", [3, 4])
    with tf.variable_scope("layer1", reuse=True):
        assert tf.get_variable("w") is w
        with pytest.raises(ValueError, match="Variable layer1/missing does not exist"):
            tf.get_variable("missing", [1])
        with pytest.raises(ValueError, match="specified shape"):
            tf.get_variable("w", [2, 2])
    with tf.variable_scope("layer1", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("w") is w
        made = tf.get_variable("made", [2], initializer=tf.ones_initializer())
    assert made.name == "layer1/made:0"
    # The default initializer is glorot_uniform: limit sqrt(6 / (fan_in + fan_out)).
    tf.set_random_seed(1)
    with tf.variable_scope("big"):
        g = tf.get_variable("g", [200, 300])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(w), np.full((3, 4), 0.5, np.float32))
        gv = sess.run(g)
    limit = np.sqrt(6.0 / 500)
    assert np.abs(gv).max() <= limit and np.abs(gv).max() > 0.9 * limit
    assert abs(gv.std() - limit / np.sqrt(3)) < 0.01
    names = [n.name for n in tf.get_default_graph().as_graph_def().node]
    assert any(n.startswith("big/g/Initializer/") for n in names)


def test_dense_network_with_get_variable_trains():
    # A two-layer network written with variable scopes, as TF1 tutorials do.
    rng = np.random.default_rng(11)
    x_data = rng.standard_normal((64, 4)).astype(np.float32)
    y_data = (np.sin(x_data.sum(axis=1, keepdims=True))).astype(np.float32)

    def dense(x, units, name, activation=None):
        with tf.variable_scope(name):
            w = tf.get_variable("kernel", [x.shape[1], units])
            b = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
            out = tf.nn.bias_add(tf.matmul(x, w), b)
            return activation(out) if activation else out

    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    pred = dense(dense(x, 16, "hidden", tf.nn.tanh), 1, "out")
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    assert sorted(v.name for v in tf.trainable_variables()) == [
        "hidden/bias:0", "hidden/kernel:0", "out/bias:0", "out/kernel:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: x_data, y: y_data})
        for _ in range(150):
            sess.run(train, {x: x_data, y: y_data})
        last = sess.run(loss, {x: x_data, y: y_data})
    assert last < first / 5, (first, last)


def test_saver_round_trips_a_built_graph(tmp_path):
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.Variable(np.array([[1.0], [2.0]], np.float32), name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    saver = tf.train.Saver()
    feed = {x: np.array([[1.0, 1.0]], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        trained = sess.run(w)
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    # dloss/dw = 2 (x.w) x^T = 2 * 3 * [1, 1]: w - 0.01 * 6.
    np.testing.assert_allclose(trained, [[0.94], [1.94]], rtol=1e-6)
    with tf.Session() as sess:
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), trained)
    assert tf.train.latest_checkpoint(str(tmp_path)) == path


def test_cnn_with_layers_trains_and_freezes(tmp_path):
    # MNIST-style CNN on generated 8x8 images: a bright quadrant is the class.
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 4, 128)
    images = rng.uniform(0, 0.3, (128, 8, 8, 1)).astype(np.float32)
    for k, lab in enumerate(labels):
        r, c = divmod(int(lab), 2)
        images[k, r * 4:(r + 1) * 4, c * 4:(c + 1) * 4, 0] += 0.7
    tf.set_random_seed(5)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    y = tf.placeholder(tf.int32, [None], name="labels")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.flatten(h)
    logits = tf.layers.dense(h, 4, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    assert sorted(v.name for v in tf.trainable_variables()) == [
        "conv2d/bias:0", "conv2d/kernel:0", "logits/bias:0", "logits/kernel:0"]
    assert h.shape == [None, 64]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: images, y: labels})
        for _ in range(40):
            sess.run(train, {x: images, y: labels})
        last, want = sess.run([loss, probs], {x: images, y: labels})
        frozen = tf.graph_util.convert_variables_to_constants(sess, tf.get_default_graph().as_graph_def(),
                                                             ["probs"])
    assert last < first / 3, (first, last)
    assert (want.argmax(axis=1) == labels).mean() > 0.95
    # The frozen graph: no variable left, same answers in a fresh session.
    ops = {n.op for n in frozen.node}
    assert "VariableV2" not in ops and "Assign" not in ops and "ApplyAdam" not in ops
    path = tf.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    with tf.Session(graph=path) as sess:
        got = sess.run("probs:0", {"images:0": images})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def read_events(logdir):
    """The Events of the one event file in logdir (TFRecord framing: length,
    its CRC, data, its CRC; the CRCs are the writer's business here)."""
    import glob
    import struct
    from graphrt.proto import event_pb2
    files = glob.glob(str(logdir) + "/events.out.tfevents.*")
    assert len(files) == 1, files
    data = open(files[0], "rb").read()
    events, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<Q", data, at)
        event = event_pb2.Event()
        event.ParseFromString(data[at + 12:at + 12 + n])
        events.append(event)
        at += 12 + n + 4
    return events


def test_summaries_and_file_writer(tmp_path):
    x = tf.placeholder(tf.float32, [4], name="x")
    loss = tf.reduce_mean(tf.square(x), name="loss_value")
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("x", x)  # tagged "x_1": the scope "x" is the placeholder's (as in TensorFlow)
    merged = tf.summary.merge_all()
    assert merged.op.type == "MergeSummary"
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path), sess.graph) as writer:
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: [step, 1, 2, 3]}), global_step=step)
    events = read_events(tmp_path)
    assert events[0].file_version == "brain.Event:2"
    graph = tf.GraphDef()
    graph.ParseFromString(events[1].graph_def)
    assert "loss_value" in [n.name for n in graph.node]
    scalars = [(e.step, v.simple_value) for e in events[2:] for v in e.summary.value if v.tag == "loss"]
    assert scalars == [(s, pytest.approx(np.mean(np.square([s, 1, 2, 3])))) for s in range(3)]
    hist = [v.histo for e in events[2:] for v in e.summary.value if v.tag == "x_1"]
    assert len(hist) == 3 and hist[2].min == 1 and hist[2].max == 3 and hist[2].num == 4


def test_simple_save_and_builder_round_trip(tmp_path):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0], [-1.0]], np.float32), name="w")
    y = tf.matmul(x, w, name="y")
    loss = tf.reduce_sum(tf.square(y - 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {x: np.array([[1.0, 2.0]], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)
        want = sess.run(y, feed)
        tf.saved_model.simple_save(sess, str(tmp_path / "simple"), inputs={"x": x}, outputs={"y": y})
        b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "built"))
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"in": x}, {"out": y})
        b.add_meta_graph_and_variables(sess, ["serve", "extra"], {"predict": sig})
        b.save()
    # Loaded without the building graph: the trained weights and the signature.
    model = graphrt.saved_model.load(str(tmp_path / "simple"))
    got = model.signatures["serving_default"](x=feed[x])["y"]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    built = graphrt.saved_model.load(str(tmp_path / "built"), tags=["serve", "extra"])
    np.testing.assert_allclose(built.signatures["predict"](**{"in": feed[x]})["out"], want, rtol=1e-6)
    with pytest.raises(graphrt.errors.AlreadyExistsError):
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, str(tmp_path / "simple"), inputs={"x": x}, outputs={"y": y})


def build_regression():
    x_data, y_data = regression_data()
    x = tf.constant(x_data)
    y = tf.constant(y_data)
    w = tf.Variable(np.full((3, 1), 0.1, np.float32), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
    return w, loss, step, train


def test_monitored_training_session_stops_and_resumes(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    # Reference: 30 steps in one session.
    w, _, _, train = build_regression()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(30):
            sess.run(train)
        want = sess.run(w)
    # 20 steps, saving every 10; then a new graph resumes to 30.
    tf.reset_default_graph()
    w, loss, step, train = build_regression()
    seen = []

    class Count(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(step)

        def after_run(self, run_context, run_values):
            seen.append(int(run_values.results))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=10,
                                           hooks=[tf.train.StopAtStepHook(last_step=20), Count()]) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert seen == list(range(20))
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-20")
    tf.reset_default_graph()
    w, loss, step, train = build_regression()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=10,
                                           hooks=[tf.train.StopAtStepHook(last_step=30),
                                                  tf.train.NanTensorHook(loss)]) as sess:
        assert sess.run(step) == 20  # restored
        while not sess.should_stop():
            sess.run(train)
        with pytest.raises(RuntimeError, match="should_stop"):
            sess.run(train)  # as TensorFlow: no run after the stop
    last = tf.train.latest_checkpoint(ckpt)
    assert last.endswith("model.ckpt-30")
    with tf.Session() as plain:
        tf.train.Saver().restore(plain, last)
        got, final_step = plain.run([w, step])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert final_step == 30
    # A NaN loss stops training with TensorFlow's error.
    tf.reset_default_graph()
    bad = tf.Variable(1.0) * np.float32(np.nan)
    tf.train.get_or_create_global_step()
    with pytest.raises(tf.train.NanLossDuringTrainingError):
        with tf.train.MonitoredTrainingSession(hooks=[tf.train.NanTensorHook(bad)]) as sess:
            sess.run(bad)
