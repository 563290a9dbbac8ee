"""The real TensorFlow files of ../shared/tf_testdata (README items 1-12),
through the Python module, with the README's expected values."""

import os
import shutil

import numpy as np
import pytest

import graphrt
from graphrt import errors
from conftest import tf_file

SERVING = ("serving", "saved_model_half_plus_two_cpu", "00000123")


def test_matrix_half_plus_two():  # item 1
    with graphrt.Session(tf_file("derived", "matrix_half_plus_two.graphdef.pb")) as sess:
        x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3)
        np.testing.assert_allclose(sess.run("y:0", {"x:0": x}), 0.5 * x + 2)
        np.testing.assert_allclose(sess.run("y:0", {"x:0": np.ones((1, 3, 3))}), np.full((1, 3, 3), 2.5))


def test_half_plus_two_signatures():  # item 2
    model = graphrt.saved_model.load(tf_file(*SERVING))
    assert sorted(model.signatures) == ["classify_x_to_y", "regress_x2_to_y3", "regress_x_to_y",
                                        "regress_x_to_y2", "serving_default"]
    sig = model.signatures["serving_default"]
    assert list(sig.inputs) == ["x"] and list(sig.outputs) == ["y"]
    x = np.array([[1], [2], [5]], np.float32)
    np.testing.assert_allclose(sig(x=x)["y"], [[2.5], [3.0], [4.5]])
    # Direct runs on the restored session.
    r = model.session.run({"y": "y:0", "y2": "y2:0"}, {"x:0": x})
    np.testing.assert_allclose(r["y2"], [[3.5], [4.0], [5.5]])
    np.testing.assert_allclose(model.session.run("y3:0", {"x2:0": x}), [[3.5], [4.0], [5.5]])
    with pytest.raises(TypeError, match="no input 'z'"):
        sig(x=x, z=x)
    with pytest.raises(TypeError, match="missing input 'x'"):
        sig()
    with pytest.raises(KeyError, match="serving_default"):
        model.signatures["nope"]
    model.close()


def test_half_plus_two_wrong_tags():
    with pytest.raises(errors.NotFoundError, match="serve"):
        graphrt.saved_model.load(tf_file(*SERVING), tags=["train"])


def test_half_plus_three():  # item 3
    with graphrt.Session(tf_file("derived", "half_plus_three.graphdef.pb")) as sess:
        sess.run("init")
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [1, 2, 5]}), [3.5, 4, 5.5])
        np.testing.assert_allclose(sess.run("y2:0", {"x2:0": 4.0}), 5.0)


def test_counter_variables_and_failed_precondition():  # item 4
    with graphrt.Session(tf_file("derived", "counter.graphdef.pb")) as sess:
        with pytest.raises(errors.FailedPreconditionError) as e:
            sess.run("counter:0")
        assert e.value.error_code == errors.FAILED_PRECONDITION
        sess.run("init")
        assert sess.run("counter:0") == 0.0
        assert sess.run("incr_counter_op/AssignAdd:0") == 1.0
        assert sess.run("incr_counter_op/AssignAdd:0") == 2.0
        assert sess.run("incr_counter_by_op/AssignAdd:0", {"delta:0": 2.5}) == 4.5
        assert sess.run("reset_counter_op/Assign:0") == 0.0
        assert sess.run("counter:0") == 0.0


def test_regression_model_restore_and_train():  # item 5
    model = graphrt.saved_model.load(tf_file("rust", "test_resources", "regression-model"), tags=["train", "serve"])
    sess = model.session
    feed = {"x:0": [1, 2, 3], "y:0": [0.4, 0.5, 0.6]}
    y_hat, loss = sess.run(["y_hat:0", "Mean:0"], feed)
    np.testing.assert_allclose(y_hat, [-0.8578622, -1.7157245, -2.5735867], rtol=1e-6)
    np.testing.assert_allclose(loss, 5.5211017, rtol=1e-6)
    assert sess.run("train", feed) is None
    w, b = sess.run(["w:0", "b:0"])
    np.testing.assert_allclose(w, [4.2121615], atol=1e-5)
    np.testing.assert_allclose(b, [2.2157245], atol=1e-5)
    out = model.signatures["tensorflow/serving/regress"](x=np.array([1.0], np.float32), y=np.array([0.0], np.float32))
    np.testing.assert_allclose(out["out"], w + b, rtol=1e-6)


def test_regression_checkpoint_saver_roundtrip(tmp_path):  # item 6 + graphrt.train.Saver
    with graphrt.Session(tf_file("rust", "examples", "regression", "model.pb")) as sess:
        sess.run("init")
        x = np.linspace(-1, 1, 5).astype(np.float32)
        feed = {"x:0": x, "y:0": 0.1 * x + 0.3}
        for _ in range(201):
            sess.run("train", feed)
        w, b = sess.run(["w:0", "b:0"])
        np.testing.assert_allclose(w, [0.1], atol=1e-5)
        np.testing.assert_allclose(b, [0.3], atol=1e-5)
        saver = graphrt.train.Saver(max_to_keep=2)
        paths = [saver.save(sess, str(tmp_path / "model.ckpt"), global_step=s) for s in (1, 2, 3)]
        assert paths[-1] == str(tmp_path / "model.ckpt-3")
        assert graphrt.train.latest_checkpoint(str(tmp_path)) == paths[-1]
        assert saver.last_checkpoints == paths[1:]  # max_to_keep=2
        assert not os.path.exists(paths[0] + ".index")
    with graphrt.Session(tf_file("rust", "examples", "regression", "model.pb")) as sess2:
        sess2.run("init")
        graphrt.train.Saver().restore(sess2, graphrt.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_allclose(sess2.run("w:0"), w)
        np.testing.assert_allclose(sess2.run("b:0"), b)
        with pytest.raises(errors.NotFoundError):
            graphrt.train.Saver().restore(sess2, str(tmp_path / "missing"))
    assert graphrt.train.latest_checkpoint(str(tmp_path / "empty")) is None


def test_addition():  # item 7
    with graphrt.Session(tf_file("rust", "examples", "addition", "model.pb")) as sess:
        assert sess.run("z:0", {"x:0": 2, "y:0": 3}) == 5


def test_half_plus_two_pbtxt_restore_from_checkpoint():  # item 8
    with graphrt.Session(tf_file("derived", "half_plus_two_cpu.graphdef.pb")) as sess:
        sess.run("save/restore_all",
                 {"save/Const:0": os.path.join(tf_file(*SERVING), "variables", "variables")})
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1.0]]}), [[2.5]])


def test_const_values_pbtxt():  # item 9
    with graphrt.Session(tf_file("tensorflow", "graphdef2mlir", "const-values.pbtxt")) as sess:
        x, y, z = sess.run(["x:0", "y:0", "z:0"])
        np.testing.assert_array_equal(x, [[1, 2, 3], [4, 5, 6]])
        assert y.dtype == np.int64 and z.dtype == np.int32
        np.testing.assert_array_equal(y, [[1, 3, 2], [5, 4, 7]])


def test_tf2onnx_regression_frozen():  # item 10
    with graphrt.Session(tf_file("tf2onnx", "models", "regression", "graphdef", "frozen.pb")) as sess:
        np.testing.assert_allclose(sess.run("pred:0", {"X:0": [1]}), [1.2634872], rtol=1e-6)
        np.testing.assert_allclose(sess.run("pred:0", {"X:0": [2, 3]}), [1.4774489, 1.6914107], rtol=1e-6)


def test_fc_layers():  # item 11
    with graphrt.Session(tf_file("tf2onnx", "models", "fc-layers", "frozen.pb")) as sess:
        ramp = np.arange(1, 785, dtype=np.float32).reshape(1, 784)
        out = sess.run("output:0", {"X:0": ramp})
        np.testing.assert_allclose(out[0], [-9757.53, -2871.289, 7155.592, 1267.367, -12316.45, -3547.959,
                                            -14339.29, -4228.1, -3446.947, -13547.02], rtol=1e-4)
        out = sess.run("output:0", {"X:0": ramp / 784})
        np.testing.assert_allclose(out.sum(), -68.80664, rtol=1e-4)


def test_redundant_inputs():  # item 12
    model = graphrt.saved_model.load(tf_file("tf2onnx", "models", "saved_model_with_redundant_inputs"))
    x = np.arange(10, dtype=np.float32).reshape(1, 10)
    np.testing.assert_allclose(model.session.run("Add:0", {"Placeholder:0": x}), x + 1)


def test_saved_model_copied_dir(tmp_path):
    # The SavedModel's variables come from its own directory.
    d = tmp_path / "m"
    shutil.copytree(tf_file(*SERVING), d)
    model = graphrt.saved_model.load(str(d))
    np.testing.assert_allclose(model.signatures["serving_default"](x=np.array([[2.0]], np.float32))["y"], [[3.0]])


def test_tf2_saved_model_signatures():
    # A TensorFlow 2 SavedModel (tf.Module with resource variables; its save
    # function uses StaticRegexFullMatch). Its signatures read the values
    # of its checkpoint (tf_testdata README: w = 0.20429754, b = 0).
    model = graphrt.saved_model.load(tf_file("rust", "examples", "regression_savedmodel"))
    assert {"w", "b", "train"} <= set(model.signatures)
    np.testing.assert_allclose(model.signatures["w"]()["output"], [0.20429754], rtol=1e-7)
    np.testing.assert_allclose(model.signatures["b"]()["output"], [0.0])
    model.close()
