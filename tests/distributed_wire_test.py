#!/usr/bin/env python3
"""Speaks raw MasterService and WorkerService to a `graphrt server` the way
TensorFlow's own client does: gRPC's generic calls at TensorFlow's method
paths ("/tensorflow.MasterService/RunStep"), messages from `protoc
--python_out` of graphrt's protos (TensorFlow's field numbers), answers
checked with numpy. Independent of graphrt's C++ client.

usage: distributed_wire_test.py GRAPHRT_CLI PYTHON_PROTO_DIR
Exits 77 (skipped) when Python's grpc module is missing."""
import signal
import subprocess
import sys

try:
    import grpc
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e} (Debian's python3-grpcio and python3-numpy, for /usr/bin/python3)")
    sys.exit(77)

cli, proto_dir = sys.argv[1], sys.argv[2]
sys.path.insert(0, proto_dir)
from graphrt.proto import graph_pb2, master_pb2, tensor_pb2, worker_pb2  # noqa: E402

DT_FLOAT = 1


def float_tensor(array):
    t = tensor_pb2.TensorProto()
    t.dtype = DT_FLOAT
    for d in array.shape:
        t.tensor_shape.dim.add().size = d
    t.tensor_content = np.ascontiguousarray(array, dtype="<f4").tobytes()
    return t


def to_numpy(t):
    shape = [d.size for d in t.tensor_shape.dim]
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, dtype="<f4").reshape(shape)
    return np.array(t.float_val, dtype=np.float32).reshape(shape)


def main():
    server = subprocess.Popen([cli, "server", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        target = line[line.index("grpc://"):].split()[0]
        channel = grpc.insecure_channel(target[len("grpc://"):])

        def call(service, method, request, response_type):
            stub = channel.unary_unary(f"/tensorflow.{service}/{method}",
                                       request_serializer=lambda m: m.SerializeToString(),
                                       response_deserializer=response_type.FromString)
            return stub(request, timeout=30)

        a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
        graph = graph_pb2.GraphDef()
        node = graph.node.add(name="a", op="Placeholder")
        node.attr["dtype"].type = DT_FLOAT
        node = graph.node.add(name="w", op="Const")
        node.attr["dtype"].type = DT_FLOAT
        node.attr["value"].tensor.CopyFrom(float_tensor(np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)))
        node = graph.node.add(name="b", op="MatMul", input=["a", "w"])
        node.attr["T"].type = DT_FLOAT

        created = call("MasterService", "CreateSession",
                       master_pb2.CreateSessionRequest(graph_def=graph, target=target),
                       master_pb2.CreateSessionResponse)
        assert len(created.session_handle) == 16, created
        request = master_pb2.RunStepRequest(session_handle=created.session_handle, fetch=["b:0", "a"],
                                            store_errors_in_response_body=True)
        request.feed.add(name="a", tensor=float_tensor(a))
        ran = call("MasterService", "RunStep", request, master_pb2.RunStepResponse)
        assert ran.status_code == 0, ran.status_error_message
        got = {t.name: to_numpy(t.tensor) for t in ran.tensor}
        expected = a @ np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)
        assert np.allclose(got["b:0"], expected), (got, expected)
        assert np.array_equal(got["a"], a)

        # Errors: TensorFlow's codes, in the body when asked for.
        bad = master_pb2.RunStepRequest(session_handle=created.session_handle, fetch=["nope"],
                                        store_errors_in_response_body=True)
        ran = call("MasterService", "RunStep", bad, master_pb2.RunStepResponse)
        assert ran.status_code == grpc.StatusCode.NOT_FOUND.value[0], ran
        try:
            call("MasterService", "CloseSession", master_pb2.CloseSessionRequest(session_handle="randombits"),
                 master_pb2.CloseSessionResponse)
            raise AssertionError("closing an unknown session succeeded")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.ABORTED, e

        status = call("WorkerService", "GetStatus", worker_pb2.GetStatusRequest(), worker_pb2.GetStatusResponse)
        names = [d.name for d in status.device_attributes]
        assert "/job:localhost/replica:0/task:0/device:CPU:0" in names, names
        assert all(d.incarnation != 0 for d in status.device_attributes)

        # protoc's own path for TensorFlow's service protos is not served.
        try:
            channel.unary_unary("/tensorflow.grpc.MasterService/ListDevices",
                                request_serializer=lambda m: m.SerializeToString(),
                                response_deserializer=master_pb2.ListDevicesResponse.FromString)(
                master_pb2.ListDevicesRequest(), timeout=30)
            raise AssertionError("/tensorflow.grpc.MasterService answered")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNIMPLEMENTED, e

        call("MasterService", "CloseSession", master_pb2.CloseSessionRequest(session_handle=created.session_handle),
             master_pb2.CloseSessionResponse)
        channel.close()
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)
    assert code == 0, f"server exited {code} after SIGTERM"
    print("ok: MasterService and WorkerService at TensorFlow's paths, answers match numpy")


main()
