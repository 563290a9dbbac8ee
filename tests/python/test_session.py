"""graphrt.Session: fetch structures, feed conversion, zero-copy results,
errors, threads, close / with."""

import collections
import os
import threading

import numpy as np
import pytest

import graphrt
from graphrt import errors
from conftest import ADD_GRAPH, graph

X = np.array([[1, 2], [3, 4]], np.float32)
B = np.array([10, 20], np.float32)
Y = X + B


def feeds(x=X, b=B):
    return {"x:0": x, "b:0": b}


# ---- graphs given as path, bytes, GraphDef

def test_graph_as_bytes_path_and_graphdef(tmp_path):
    g = graph(ADD_GRAPH)
    path = tmp_path / "g.pb"
    path.write_bytes(g.SerializeToString())
    for source in (g, g.SerializeToString(), str(path), path):
        with graphrt.Session(source) as sess:
            np.testing.assert_array_equal(sess.run("y:0", feeds()), Y)


def test_graphdef_parse_and_serialize_round_trip():
    g = graph(ADD_GRAPH)
    h = graphrt.GraphDef()
    h.ParseFromString(g.SerializeToString())
    assert [n.name for n in h.node] == [n.name for n in g.node]


def test_bad_graph_bytes_and_missing_file():
    with pytest.raises(errors.InvalidArgumentError, match="not a binary GraphDef"):
        graphrt.Session(b"\xff\xff\xff not a graph")
    with pytest.raises(errors.OpError, match="nonexistent.pb"):
        graphrt.Session("/nonexistent.pb")


def test_unknown_op_names_node():
    g = graph('node { name: "bad" op: "NoSuchOpAnywhere" }')
    with pytest.raises(errors.OpError) as e:
        graphrt.Session(g)
    assert "NoSuchOpAnywhere" in e.value.message


# ---- fetch structures (TF1)

def test_fetch_structures(add_session):
    sess = add_session
    Point = collections.namedtuple("Point", ["a", "b"])
    r = sess.run({"sum": "y:0", "pair": ("y:0", ["c:0"]), "pt": Point("c:0", "y:0"), "op": "n"}, feeds())
    assert set(r) == {"sum", "pair", "pt", "op"}
    np.testing.assert_array_equal(r["sum"], Y)
    assert isinstance(r["pair"], tuple) and isinstance(r["pair"][1], list)
    np.testing.assert_array_equal(r["pair"][1][0], [1.5, -2])
    assert isinstance(r["pt"], Point)
    np.testing.assert_array_equal(r["pt"].b, Y)
    assert r["op"] is None
    od = sess.run(collections.OrderedDict([("z", "c:0"), ("a", "c:0")]))
    assert isinstance(od, collections.OrderedDict) and list(od) == ["z", "a"]
    assert sess.run([]) == []
    assert sess.run(()) == ()


def test_op_name_is_a_target_returning_none(add_session):
    # TF1: a name without ':' is an operation: it runs, and its value is None.
    assert add_session.run("n") is None
    assert add_session.run(["c", "c:0"], {})[0] is None


def test_same_fetch_twice_is_one_value(add_session):
    a, b = add_session.run(["y:0", "y:0"], feeds())
    assert a is b


def test_bad_fetches(add_session):
    with pytest.raises(TypeError, match="invalid type"):
        add_session.run(None)
    with pytest.raises(TypeError, match="invalid type"):
        add_session.run(["y:0", 3.5])
    with pytest.raises(ValueError, match="does not exist"):
        add_session.run("nope:0")
    with pytest.raises(ValueError, match="only has 1 outputs"):
        add_session.run("y:1")
    with pytest.raises(ValueError, match="not in the graph"):
        add_session.run("nope")


def test_fetch_cache_does_not_mix_structures(add_session):
    r1 = add_session.run(("c:0", "c:0"))
    r2 = add_session.run(("c:0",))
    assert len(r1) == 2 and len(r2) == 1


# ---- feeds

def test_feed_conversions(add_session):
    sess = add_session
    # Python lists and ints/floats; float64 numpy cast to the placeholder's float32.
    r = sess.run("y:0", {"x:0": [[1, 2], [3, 4]], "b:0": np.array([10.0, 20.0])})
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, Y)
    # int64 numpy -> float32, and feeding by node name ("b" = "b:0").
    r = sess.run("y:0", {"x:0": np.array([[1, 2], [3, 4]], np.int64), "b": B})
    np.testing.assert_array_equal(r, Y)
    # float -> int8 truncates, as np.asarray(v, dtype=int8) does.
    assert sess.run("i8_id:0", {"i8:0": 3.9}) == 3
    assert sess.run("i8_id:0", {"i8:0": -128}) == -128
    assert sess.run("d_id:0", {"d:0": 0.1}) == 0.1
    np.testing.assert_array_equal(sess.run("flag_not:0", {"flag:0": [True, 0, 1]}), [False, True, False])
    h = sess.run("h_id:0", {"h:0": [0.5, 2.0]})
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h, [0.5, 2.0])


def test_non_contiguous_feed(add_session):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)[:, ::2]  # strided view
    np.testing.assert_array_equal(add_session.run("y:0", {"x:0": x, "b:0": B}), x + B)


def test_string_feeds(add_session):
    sess = add_session
    assert sess.run("s_id:0", {"s:0": b"bytes"}) == b"bytes"
    assert sess.run("s_id:0", {"s:0": "h\u00e9"}) == "h\u00e9".encode()
    r = sess.run("s_id:0", {"s:0": [[b"a", "b"], [b"", b"\x00z"]]})
    assert r.dtype == object and r.shape == (2, 2)
    assert r.tolist() == [[b"a", b"b"], [b"", b"\x00z"]]
    r = sess.run("s_id:0", {"s:0": np.array(["x", "yy"])})
    assert r.tolist() == [b"x", b"yy"]
    with pytest.raises(TypeError, match="not bytes or str"):
        sess.run("s_id:0", {"s:0": [b"a", 3]})


def test_int_that_does_not_fit_is_refused(add_session):
    with pytest.raises(TypeError, match="not compatible with Tensor type int8"):
        add_session.run("i8_id:0", {"i8:0": 300})


def test_feed_shape_must_match_placeholder(add_session):
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor 'x:0', which has shape '\(\?, 2\)'"):
        add_session.run("y:0", {"x:0": [1, 2, 3], "b:0": B})


def test_bad_feed_keys_and_values(add_session):
    with pytest.raises(ValueError, match="does not exist"):
        add_session.run("y:0", {"nope:0": 1.0})
    with pytest.raises(ValueError, match="only has 1 outputs"):
        add_session.run("y:0", {"x:3": X})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
        add_session.run("y:0", {3: X})
    with pytest.raises(ValueError):  # numpy: a string is not a float
        add_session.run("y:0", {"x:0": [["a", "b"]], "b:0": B})


def test_missing_feed_is_invalid_argument_naming_the_node(add_session):
    with pytest.raises(errors.InvalidArgumentError) as e:
        add_session.run("y:0", {"x:0": X})
    assert e.value.node_name == "b"
    assert e.value.op_type == "Placeholder"
    assert e.value.error_code == errors.INVALID_ARGUMENT
    assert "must feed" in e.value.message
    # The session still works afterwards.
    np.testing.assert_array_equal(add_session.run("y:0", feeds()), Y)


# ---- results

def test_scalars_come_back_as_numpy_scalars(add_session):
    r = add_session.run("d_id:0", {"d:0": 2.5})
    assert type(r) is np.float64 and r == 2.5


def test_results_are_zero_copy_views_of_the_tensor(add_session):
    r = add_session.run("y:0", feeds())
    assert isinstance(r.base, graphrt._graphrt._TensorBuffer)
    assert r.base.data_ptr == r.ctypes.data
    assert np.shares_memory(r, np.asarray(r.base))
    assert r.flags.writeable
    r[0, 0] = 7  # ours to write: nobody else holds the buffer
    np.testing.assert_array_equal(add_session.run("y:0", feeds()), Y)


def test_shared_buffers_are_copied(add_session):
    # A Const's value stays held by the graph: the result is a copy, and
    # writing to it does not change the constant.
    c = add_session.run("c:0")
    assert not isinstance(c.base, graphrt._graphrt._TensorBuffer)
    c[0] = 100
    np.testing.assert_array_equal(add_session.run("c:0"), [1.5, -2])


def test_results_outlive_the_session():
    sess = graphrt.Session(graph(ADD_GRAPH))
    r = sess.run("y:0", feeds())
    sess.close()
    del sess
    np.testing.assert_array_equal(r, Y)


# ---- options and metadata

def test_run_options_and_metadata(add_session):
    opts = graphrt.RunOptions(trace_level=graphrt.RunOptions.FULL_TRACE)
    md = graphrt.RunMetadata()
    r = add_session.run("y:0", feeds(), options=opts, run_metadata=md)
    np.testing.assert_array_equal(r, Y)
    assert md.step_stats.dev_stats, "FULL_TRACE gives step stats"
    names = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    assert "y" in names


def test_config_proto():
    cfg = graphrt.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    cfg.gpu_options.allow_growth = True
    with graphrt.Session(graph(ADD_GRAPH), config=cfg) as sess:
        np.testing.assert_array_equal(sess.run("y:0", feeds()), Y)


# ---- close and with

def test_close_and_with():
    with graphrt.Session(graph(ADD_GRAPH)) as sess:
        sess.run("c:0")
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run("c:0")
    sess.close()  # twice is fine
    s2 = graphrt.Session(graph(ADD_GRAPH))
    s2.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        s2.run("y:0", feeds())


# ---- threads

def test_many_threads_one_session(add_session):
    results = {}
    failures = []

    def work(t):
        try:
            for i in range(50):
                x = np.full((3, 2), t * 100 + i, np.float32)
                r = add_session.run({"y": "y:0"}, {"x:0": x, "b:0": B})["y"]
                if not np.array_equal(r, x + B):
                    failures.append((t, i, r))
            results[t] = True
        except Exception as e:  # noqa: BLE001 -- reported below
            failures.append((t, e))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert len(results) == 8


def test_gil_released_during_run(add_session):
    # While one thread is inside Run another can hold and use the GIL: with
    # 4 threads running, a counter thread keeps counting.
    stop = threading.Event()
    count = [0]

    def counter():
        while not stop.is_set():
            count[0] += 1

    def runner():
        for _ in range(200):
            add_session.run("y:0", feeds())

    c = threading.Thread(target=counter)
    c.start()
    rs = [threading.Thread(target=runner) for _ in range(4)]
    for r in rs:
        r.start()
    for r in rs:
        r.join()
    stop.set()
    c.join()
    assert count[0] > 0


# ---- errors: every code maps to its class

ALL_ERRORS = [
    (errors.CANCELLED, errors.CancelledError), (errors.UNKNOWN, errors.UnknownError),
    (errors.INVALID_ARGUMENT, errors.InvalidArgumentError),
    (errors.DEADLINE_EXCEEDED, errors.DeadlineExceededError), (errors.NOT_FOUND, errors.NotFoundError),
    (errors.ALREADY_EXISTS, errors.AlreadyExistsError), (errors.PERMISSION_DENIED, errors.PermissionDeniedError),
    (errors.RESOURCE_EXHAUSTED, errors.ResourceExhaustedError),
    (errors.FAILED_PRECONDITION, errors.FailedPreconditionError), (errors.ABORTED, errors.AbortedError),
    (errors.OUT_OF_RANGE, errors.OutOfRangeError), (errors.UNIMPLEMENTED, errors.UnimplementedError),
    (errors.INTERNAL, errors.InternalError), (errors.UNAVAILABLE, errors.UnavailableError),
    (errors.DATA_LOSS, errors.DataLossError), (errors.UNAUTHENTICATED, errors.UnauthenticatedError),
]


@pytest.mark.parametrize("code,cls", ALL_ERRORS)
def test_every_code_maps_to_its_class(code, cls):
    e = errors._make_error(code, "Node 'n1' (op 'Foo'): went wrong")
    assert type(e) is cls and isinstance(e, errors.OpError)
    assert e.error_code == code
    assert errors.exception_type_from_error_code(code) is cls
    assert errors.error_code_from_exception_type(cls) == code
    assert e.message == "Node 'n1' (op 'Foo'): went wrong" == str(e)
    assert e.node_name == "n1" and e.op_type == "Foo"
    # TF's constructor signature.
    assert cls(None, None, "m").message == "m"


def test_error_without_node():
    e = errors._make_error(errors.NOT_FOUND, "file x not found")
    assert e.node_name is None and e.op_type is None


def test_native_errors_use_the_classes(tmp_path):
    with pytest.raises(errors.NotFoundError):
        graphrt.saved_model.load(str(tmp_path / "no_model"))
    with pytest.raises(errors.NotFoundError):
        graphrt.load_op_library(str(tmp_path / "libnothing.so"))


def test_load_op_library_describes_the_plugin():
    # The array plugin, loaded on import, named by a relative path: described
    # all the same (on an AVX-512 CPU the build loaded is another file).
    path = os.path.relpath(os.path.join(graphrt._graphrt.default_plugin_directory(), "libgraphrt_ops_array_cpu.so"))
    lib = graphrt.load_op_library(path)
    assert lib.name == "ops_array_cpu"
    assert "ExpandDims" in lib.ops and "ConcatV2" in lib.ops and "MatMul" not in lib.ops
    assert os.path.basename(lib.path) == "libgraphrt_ops_array_cpu.so"
    assert any(k.startswith("ExpandDims on CPU") for k in lib.kernels)


def test_list_devices():
    devs = graphrt.list_devices()
    assert any(d.device_type == "CPU" and d.name.endswith("device:CPU:0") for d in devs)


def test_plugins_loaded_on_import():
    names = [p[0] for p in graphrt._graphrt.plugins()]
    assert names, "standard plugins are loaded on import"


def test_cached_list_and_tuple_fetches_keep_their_types(add_session):
    for _ in range(2):  # the second time from the cache
        assert isinstance(add_session.run(["c:0", "c"]), list)
        assert isinstance(add_session.run(("c:0", "c")), tuple)
        assert add_session.run(["c:0", "c"])[1] is None


def test_big_endian_feed_is_converted(add_session):
    x = np.array([[1, 2], [3, 4]], ">f4")
    np.testing.assert_array_equal(add_session.run("y:0", {"x:0": x, "b:0": B.astype(">f8")}), Y)


def _save_model(export_dir, target):
    """A SavedModel whose legacy init op saves 1.5 to `target` (V1 Save)."""
    os.makedirs(export_dir)
    with open(os.path.join(export_dir, "saved_model.pbtxt"), "w") as f:
        f.write("""saved_model_schema_version: 1
meta_graphs { meta_info_def { tags: "serve" } graph_def {
  node { name: "val" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1.5 } } } }
  node { name: "names" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "v" } } } }
  node { name: "where" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "%s" } } } }
  node { name: "init" op: "Save" input: "where" input: "names" input: "val" attr { key: "T" value { list { type: DT_FLOAT } } } }
  versions { producer: 27 } }
 collection_def { key: "legacy_init_op" value { node_list { value: "init" } } }
 signature_def { key: "serving_default" value { method_name: "tensorflow/serving/predict" outputs { key: "y" value { name: "val:0" dtype: DT_FLOAT } } } } }
""" % target)


def test_saved_model_load_is_confined_to_the_model_and_allowed_dirs(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = str(outside / "by_init_op")
    _save_model(str(tmp_path / "model"), target)
    with pytest.raises(errors.PermissionDeniedError) as e:
        graphrt.saved_model.load(str(tmp_path / "model"))
    assert "Node 'init' (op 'Save')" in e.value.message and target in e.value.message
    assert str((tmp_path / "model").resolve()) in e.value.message
    assert not os.path.exists(target)
    model = graphrt.saved_model.load(str(tmp_path / "model"), allowed_dirs=[outside])
    assert os.path.getsize(target) > 0
    np.testing.assert_array_equal(model.signatures["serving_default"]()["y"], [1.5])
    model.close()
