"""graphrt.train.Server and ClusterSpec (TensorFlow 1's tf.train.Server), and
graphrt.Session on a grpc:// target: a cluster of servers in this process."""

import numpy as np
import pytest

import graphrt
import graphrt.compat.v1 as tf
from graphrt import errors
from conftest import ADD_GRAPH, graph, placeholder

X = np.array([[1, 2], [3, 4]], np.float32)
B = np.array([10, 20], np.float32)


def test_local_server_runs_a_session():
    server = tf.train.Server.create_local_server()
    assert server.target.startswith("grpc://localhost:")
    with tf.Session(server.target, graph(ADD_GRAPH)) as sess:
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": X, "b:0": B}), X + B)
        with pytest.raises(ValueError, match="does not exist"):
            sess.run("nope:0")
        with pytest.raises(errors.InvalidArgumentError):
            sess.run("y:0", {"b:0": B})  # x not fed: its Placeholder fails on the server
        # The session goes on after an error.
        np.testing.assert_array_equal(sess.run("c:0"), np.array([1.5, -2], np.float32))
    server.stop()
    server.stop()  # twice is fine


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_parameter_server_and_worker_in_one_process():
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % free_port()],
                                    "worker": ["127.0.0.1:%d" % free_port()]})
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    g = graph("\n".join([
        placeholder("x", shape=[2, 2]).replace('op: "Placeholder"', 'op: "Placeholder" device: "/job:worker/task:0"'),
        'node { name: "w" op: "Const" device: "/job:ps/task:0" attr { key: "dtype" value { type: DT_FLOAT } }'
        ' attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }'
        ' float_val: 0.5 float_val: -1 float_val: 2 float_val: 0.25 } } } }',
        'node { name: "y" op: "MatMul" input: "x" input: "w" device: "/job:ps/task:0"'
        ' attr { key: "T" value { type: DT_FLOAT } } }',
    ]))
    w = np.array([[0.5, -1], [2, 0.25]], np.float32)
    with graphrt.Session(g, target=worker.target) as sess:
        np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), X @ w)
    ps.stop()
    worker.stop()


def make_certificates(tmp_path, name):
    """A CA and a certificate it signed for localhost and 127.0.0.1 (the
    openssl command makes them); None without it."""
    import shutil
    import subprocess
    if shutil.which("openssl") is None:
        return None
    d = tmp_path / name
    d.mkdir()
    (d / "san.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *args: subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)
    run("req", "-x509", *ec, "-days", "2", "-subj", "/CN=ca", "-keyout", "ca.key", "-out", "ca.pem")
    run("req", *ec, "-subj", "/CN=localhost", "-keyout", "node.key", "-out", "node.csr")
    run("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "san.cnf", "-out", "node.pem")
    return str(d / "node.pem"), str(d / "node.key"), str(d / "ca.pem")


def test_tls_cluster_admits_only_certified_clients(tmp_path):
    trusted = make_certificates(tmp_path, "trusted")
    if trusted is None:
        pytest.skip("needs the openssl command to make certificates")
    untrusted = make_certificates(tmp_path, "untrusted")
    cert, key, ca = trusted
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % free_port()],
                                    "worker": ["127.0.0.1:%d" % free_port()]})
    ps = tf.train.Server(cluster, job_name="ps", task_index=0, tls_cert=cert, tls_key=key, tls_ca=ca)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0, tls_cert=cert, tls_key=key, tls_ca=ca)
    g = graph("\n".join([
        placeholder("x", shape=[2]).replace('op: "Placeholder"', 'op: "Placeholder" device: "/job:worker/task:0"'),
        'node { name: "y" op: "Neg" input: "x" device: "/job:ps/task:0" attr { key: "T" value { type: DT_FLOAT } } }',
    ]))
    # Over RPC even in this process: the client's own TLS is what is tested.
    config = graphrt.ConfigProto(operation_timeout_in_ms=1500)
    config.rpc_options.use_rpc_for_inprocess_master = True
    x = np.array([1.5, -2], np.float32)
    try:
        graphrt.train.set_client_tls(cert, key, ca)
        with graphrt.Session(g, config=config, target=worker.target) as sess:
            np.testing.assert_array_equal(sess.run("y:0", {"x:0": x}), -x)
        for refused in [(None, None, None), untrusted]:
            graphrt.train.set_client_tls(*refused)
            with pytest.raises((errors.UnavailableError, errors.DeadlineExceededError), match="the master at"):
                with graphrt.Session(g, config=config, target=worker.target) as sess:
                    sess.run("y:0", {"x:0": x})
        with pytest.raises(errors.InvalidArgumentError, match="missing: --tls-key --tls-ca"):
            graphrt.train.set_client_tls(cert)
    finally:
        graphrt.train.set_client_tls()
    ps.stop()
    worker.stop()


def test_cluster_spec_forms_round_trip():
    dense = tf.train.ClusterSpec({"ps": ["a:1", "b:2"], "worker": ["c:3"]})
    assert dense.jobs == ["ps", "worker"]
    assert dense.num_tasks("ps") == 2
    assert dense.task_address("ps", 1) == "b:2"
    assert tf.train.ClusterSpec(dense.as_cluster_def()) == dense
    assert dense.as_dict() == {"ps": ["a:1", "b:2"], "worker": ["c:3"]}
    sparse = tf.train.ClusterSpec({"worker": {1: "d:4", 3: "e:5"}})
    assert sparse.task_indices("worker") == [1, 3]
    assert sparse.job_tasks("worker") == [None, "d:4", None, "e:5"]
    assert sparse.as_dict() == {"worker": {1: "d:4", 3: "e:5"}}
    assert tf.train.ClusterSpec(sparse.as_cluster_def()) == sparse
    empty = tf.train.ClusterSpec({"ps": []})
    assert empty.num_tasks("ps") == 0
    assert tf.train.ClusterSpec(empty.as_cluster_def()).as_dict() == {"ps": []}
    with pytest.raises(ValueError):
        dense.task_address("chief", 0)
    with pytest.raises(TypeError):
        tf.train.ClusterSpec(["a:1"])


def test_server_errors():
    with pytest.raises(ValueError, match="job_name"):
        tf.train.Server({"ps": ["localhost:0"], "worker": ["localhost:0"]})
    with pytest.raises(errors.InvalidArgumentError, match="port"):
        tf.train.Server({"local": ["localhost"]})
    server = tf.train.Server.create_local_server()
    port = server.target.rsplit(":", 1)[1]
    with pytest.raises(errors.UnknownError):
        tf.train.Server({"local": ["127.0.0.1:" + port]})
    with pytest.raises(errors.PermissionDeniedError, match="insecure"):
        tf.train.Server({"local": ["10.1.2.3:0"]})
    server.stop()
