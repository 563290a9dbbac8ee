#!/usr/bin/python3
"""Regenerates the seed corpora under tests/fuzz/corpus/ (committed; rerun only
to refresh them). Needs numpy (Debian: python3-numpy) and protoc.

usage: tests/fuzz/make_corpus.py [SHARED_DIR]   (default: ../shared beside the repo)

fuzz_graph:        small graphs of the standard plugins' ops (below), the
                   repository's GraphDefs, the small GraphDefs of
                   SHARED_DIR/tf_testdata, every hostile graph and fuzz
                   artifact of SHARED_DIR/reliability.
fuzz_tensor_proto: the binary TensorProtos of the Const nodes of those graphs.
fuzz_npy:          handmade .npy files (every dtype, byte order, layout and
                   header version) and the hostile ones of SHARED_DIR/reliability.
fuzz_checkpoint:   the checkpoints of SHARED_DIR/tf_testdata.
fuzz_saved_model:  the saved_model.pb files of SHARED_DIR/tf_testdata.
fuzz_event_file:   handmade event files (the first event, scalar and
                   histogram summaries, a session log, a graph), framed here
                   with a CRC32C of this script's own.
"""
import hashlib
import io
import os
import shutil
import subprocess
import struct
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "..", "shared"))
CORPUS = os.path.join(REPO, "tests", "fuzz", "corpus")
MAX_SEED_BYTES = 30 * 1024  # bigger seeds slow every mutation down

# GraphDefs in tf_testdata (fuzz_saved_model takes its SavedModels).
TF_GRAPHS = [
    "derived/counter.graphdef.pb",
    "derived/half_plus_three.graphdef.pb",
    "derived/half_plus_two_cpu.graphdef.pb",
    "derived/matrix_half_plus_two.graphdef.pb",
    "derived/regression_model.graphdef.pb",
    "dl4j-test-resources/tf_graphs/examples/rnn/basicrnncell/dynamic_b1_nIn5_nOut3_ts4_relu_noIS_withTM_float/frozen_model.pb",
    "dl4j-test-resources/tf_graphs/examples/rnn/lstmcell/dynamic_b2_nIn2_nOut3_ts4_withPH_noClip_fB1_Tanh_noIS_double_noTM/frozen_model.pb",
    "dl4j-test-resources/tf_graphs/examples/simplewhile_0/frozen_model.pb",
    "dl4j-test-resources/tf_graphs/examples/simplewhile_nested/frozen_model.pb",
    "dl4j-test-resources/tf_graphs/examples/tensor_array/unstack_sz3-1_int32_dynamic_name_shape/frozen_model.pb",
    "extra_tf1/dl4j/src/main/resources/tf_graphs/examples/rnn/grucell/dynamic_b1_nIn5_nOut3_ts4_sigmoid_withIS_noTM_double/frozen_model.pb",
    "extra_tf1/dl4j/src/main/resources/tf_graphs/examples/rnn/srucell/dynamic_b1_n5-3_tanh_ts4_noIS_noTM/frozen_model.pb",
    "extra_tf1/dl4j/src/main/resources/tf_graphs/examples/simple_cond/frozen_model.pb",
    "extra_tf1/dl4j/src/main/resources/tf_graphs/examples/simpleif_0/frozen_model.pb",
    "extra_tf1/dl4j/src/main/resources/tf_graphs/examples/simplewhile_1/frozen_model.pb",
    "extra_tf1/dl4j/src/main/resources/tf_graphs/nd4j_convert/simple_graph/frozen_model.pb",
    "extra_tf1/haskell/tensorflow-mnist/data/MNIST.pb",
    "extra_tf1/openvino/src/frontends/tensorflow/tests/test_models/models_pbtxt/model_switch_merge_several_cond_flows.pbtxt",
    "openvino/model_tf1_while.pbtxt",
    "rust/examples/addition/model.pb",
    "rust/examples/regression/model.pb",
    "rust/examples/regression_checkpoint/model.pb",
    "tensorflow/graphdef2mlir/const-values.pbtxt",
    "tensorflow/grappler/function_switch.pbtxt",
    "tensorflow/grappler/loops_and_queues.pbtxt",
    "tensorflow/grappler/loops_and_resource_vars.pbtxt",
    "tensorflow/grappler/merge_without_loops.pbtxt",
    "tensorflow/grappler/nested_loop.pbtxt",
    "tensorflow/grappler/queues_and_loops.pbtxt",
    "tensorflow/grappler/while_loop.pbtxt",
    "tensorflow/grappler/while_loop_var_handle_op.pbtxt",
    "tf2onnx/models/regression/graphdef/frozen.pb",
]


def fresh(name):
    """Empties corpus/<name>/ but for found_* files: fuzzer finds committed by hand."""
    d = os.path.join(CORPUS, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith("found_"):
            os.remove(os.path.join(d, f))
    return d


def copy(src, dst_dir, name):
    if os.path.getsize(src) <= MAX_SEED_BYTES:
        shutil.copyfile(src, os.path.join(dst_dir, name))
        os.chmod(os.path.join(dst_dir, name), 0o644)


SHORTER = [  # long tf_testdata directories -> short file name prefixes
    ("extra_tf1/dl4j/src/main/resources/tf_graphs/", "dl4j/"),
    ("dl4j-test-resources/tf_graphs/", "dl4j/"),
    ("extra_tf1/openvino/src/frontends/tensorflow/tests/test_models/models_pbtxt/", "openvino/"),
    ("extra_tf1/haskell/tensorflow-mnist/data/", "haskell/"),
    ("/frozen_model.pb", ".pb"),
    ("examples/", ""),
]


def flat(path):
    for long, short in SHORTER:
        path = path.replace(long, short)
    return path.replace("/", "_")


# ------------------------------------------------ handmade op graphs
# Most tf_testdata graphs stop at Create (control flow, variables); these
# reach the kernels of the standard plugins, a few ops each, so that
# mutations start from graphs that run.
def attr(key, value):
    return "attr { key: '%s' value { %s } }" % (key, value)


def T(t="DT_FLOAT", key="T"):
    return attr(key, "type: %s" % t)


def node(name, op, inputs=(), *attrs):
    ins = "".join(" input: '%s'" % i for i in inputs)
    return "node { name: '%s' op: '%s'%s %s }" % (name, op, ins, " ".join(attrs))


def ph(name, shape, t="DT_FLOAT"):
    dims = "".join(" dim { size: %d }" % d for d in shape)
    return node(name, "Placeholder", (), attr("dtype", "type: " + t), attr("shape", "shape {%s }" % dims))


def const(name, values, shape=None, t="DT_INT32"):
    field = {"DT_INT32": "int_val", "DT_INT64": "int64_val", "DT_FLOAT": "float_val", "DT_BOOL": "bool_val"}[t]
    shape = [len(values)] if shape is None else shape
    dims = "".join(" dim { size: %d }" % d for d in shape)
    vals = "".join(" %s: %s" % (field, str(v).lower() if t == "DT_BOOL" else v) for v in values)
    return node(name, "Const", (), attr("dtype", "type: " + t),
                attr("value", "tensor { dtype: %s tensor_shape {%s }%s }" % (t, dims, vals)))


def ints(key, values):
    return attr(key, "list { %s }" % " ".join("i: %d" % v for v in values))


def chain(ops, first="x"):
    out, prev = [], first
    for i, op in enumerate(ops):
        out.append(node("u%d" % i, op, (prev,), T()))
        prev = "u%d" % i
    return out


def op_graphs():
    unary = ["Abs", "Neg", "Exp", "Log1p", "Square", "Sqrt", "Rsqrt", "Reciprocal", "Tanh", "Sigmoid", "Relu",
             "Relu6", "Elu", "Selu", "Softplus", "Sign", "Floor", "Ceil", "Round", "Erf", "Sin", "Cos", "Log",
             "Softmax", "LogSoftmax"]
    binary = ["Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum", "Pow", "SquaredDifference",
              "FloorDiv", "FloorMod"]
    g = {}
    g["unary_float"] = [ph("x", [2, 3])] + chain(unary)
    b = [ph("x", [2, 3]), ph("y", [3])]
    prev = "x"
    for i, op in enumerate(binary):
        b.append(node("b%d" % i, op, (prev, "y"), T()))
        prev = "b%d" % i
    g["binary_broadcast"] = b
    g["binary_int32"] = [ph("x", [2, 3], "DT_INT32"), ph("y", [2, 3], "DT_INT32"), const("one", [1], []),
                         node("a0", "Add", ("x", "y"), T("DT_INT32")),
                         node("a", "Add", ("a0", "one"), T("DT_INT32")),  # no zero divisors
                         node("m", "Mul", ("a", "y"), T("DT_INT32")),
                         node("d", "FloorDiv", ("m", "a"), T("DT_INT32")),
                         node("r", "FloorMod", ("d", "a"), T("DT_INT32"))]
    g["compare_select"] = [ph("x", [2, 3]), ph("y", [2, 3]),
                           node("gt", "Greater", ("x", "y"), T()), node("le", "LessEqual", ("x", "y"), T()),
                           node("eq", "Equal", ("x", "y"), T()), node("ne", "NotEqual", ("x", "y"), T()),
                           node("and", "LogicalAnd", ("gt", "le")), node("or", "LogicalOr", ("and", "eq")),
                           node("not", "LogicalNot", ("or",)), node("sel", "Select", ("not", "x", "y"), T()),
                           node("sel2", "SelectV2", ("ne", "sel", "y"), T()), node("w", "Where", ("not",), T("DT_BOOL"))]
    red = [ph("x", [2, 3, 2]), const("ax", [1]), const("axes", [0, 2]), const("ax0", [1], [])]
    for i, op in enumerate(["Sum", "Mean", "Max", "Min", "Prod"]):
        red.append(node("r%d" % i, op, ("x", "ax" if i % 2 else "axes"), T(), attr("keep_dims", "b: %s" % ("true" if i % 2 else "false"))))
    red += [node("am", "ArgMax", ("x", "ax0"), T(), attr("Tidx", "type: DT_INT32"), attr("output_type", "type: DT_INT64")),
            node("an", "ArgMin", ("x", "ax0"), T(), attr("Tidx", "type: DT_INT32"), attr("output_type", "type: DT_INT32")),
            node("cs", "Cumsum", ("x", "ax0"), T(), attr("exclusive", "b: true"), attr("reverse", "b: true"))]
    g["reductions"] = red
    g["shape_ops"] = [ph("x", [2, 3]), const("s32", [3, 2]), const("perm", [1, 0]), const("zero", [0], []),
                      const("one", [1], []), const("mult", [2, 1]), const("rax", [1]), const("pads", [1, 0, 0, 2], [2, 2]),
                      node("rs", "Reshape", ("x", "s32"), T()), node("tr", "Transpose", ("rs", "perm"), T()),
                      node("ed", "ExpandDims", ("tr", "zero"), T()), node("sq", "Squeeze", ("ed",), T(), ints("squeeze_dims", [0])),
                      node("ti", "Tile", ("sq", "mult"), T()), node("pd", "Pad", ("ti", "pads"), T()),
                      node("mp", "MirrorPad", ("x", "pads"), T(), attr("mode", "s: 'REFLECT'")),
                      node("rv", "ReverseV2", ("pd", "rax"), T()), node("sh", "Shape", ("rv",), T()),
                      const("to", [2, 2, 3]), node("bt", "BroadcastTo", ("x", "to"), T())]
    g["slicing"] = [ph("x", [4, 3]), const("b", [1, 0]), const("sz", [2, -1]), const("e", [4, 3]), const("st", [2, 1]),
                    const("axis", [0], []), const("sd", [1], []), const("ss", [1, 2], t="DT_INT64"),
                    node("sl", "Slice", ("x", "b", "sz"), T(), attr("Index", "type: DT_INT32")),
                    node("ss1", "StridedSlice", ("x", "b", "e", "st"), T(), attr("Index", "type: DT_INT32"),
                         attr("begin_mask", "i: 1"), attr("shrink_axis_mask", "i: 0")),
                    node("cc", "ConcatV2", ("sl", "ss1", "axis"), T(), attr("N", "i: 2")),
                    node("sp", "Split", ("sd", "cc"), T(), attr("num_split", "i: 3")),
                    node("spv", "SplitV", ("x", "ss", "sd"), T(), attr("num_split", "i: 2")),
                    node("pk", "Pack", ("sp", "sp:1", "sp:2"), T(), attr("N", "i: 3"), attr("axis", "i: 1")),
                    node("up", "Unpack", ("pk",), T(), attr("num", "i: 4")),
                    node("id", "IdentityN", ("up:3", "spv:1"), attr("T", "list { type: DT_FLOAT type: DT_FLOAT }"))]
    g["gather_scatter"] = [ph("x", [4, 3]), ph("i", [2], "DT_INT32"), const("axis", [1], []),
                           const("nd", [0, 1, 1, 0], [2, 2]), const("shape", [3, 3]),
                           const("upd", [1.5, 2.5], [2], "DT_FLOAT"), const("i0", [0, 2]), const("i1", [1, 3]),
                           const("depth", [4], []), const("on", [1.0], [], "DT_FLOAT"), const("off", [0.0], [], "DT_FLOAT"),
                           node("g", "GatherV2", ("x", "i", "axis"), attr("Tparams", "type: DT_FLOAT"),
                                attr("Tindices", "type: DT_INT32"), attr("Taxis", "type: DT_INT32")),
                           node("gn", "GatherNd", ("x", "nd"), attr("Tparams", "type: DT_FLOAT"), attr("Tindices", "type: DT_INT32")),
                           node("sc", "ScatterNd", ("nd", "upd", "shape"), T(), attr("Tindices", "type: DT_INT32")),
                           node("ds", "DynamicStitch", ("i0", "i1", "gn", "upd"), T(), attr("N", "i: 2")),
                           node("oh", "OneHot", ("i", "depth", "on", "off"), T(), attr("TI", "type: DT_INT32"))]
    # The array ops tf.gradients emits (ops/array/training_support_ops.cc).
    g["gradient_array"] = [ph("x", [3, 4]), ph("dy", [3, 2]), ph("l", [3], "DT_INT64"), const("perm", [1, 0]),
                           const("shp", [3, 4]), const("b", [0, 1]), const("e", [3, 4]), const("st", [1, 2]),
                           const("cd", [1], []), const("s1", [3, 2]), const("pads", [1, 0, 0, 1], [2, 2]),
                           const("si", [0, 2], [2, 1]), const("sv", [1.0, 2.0], None, "DT_FLOAT"),
                           const("dv", [0.0], [], "DT_FLOAT"), const("ax", [0], None, "DT_INT64"), const("n5", [5]),
                           node("ip", "InvertPermutation", ("perm",), T("DT_INT32")),
                           node("ga", "Gather", ("x", "perm"), attr("Tparams", "type: DT_FLOAT"),
                                attr("Tindices", "type: DT_INT32")),
                           node("co", "ConcatOffset", ("cd", "shp", "s1"), attr("N", "i: 2")),
                           node("rs", "ReverseSequence", ("x", "l"), T(), attr("seq_dim", "i: 1")),
                           node("sd", "SparseToDense", ("si", "n5", "sv", "dv"), T(), attr("Tindices", "type: DT_INT32")),
                           node("un", "Unique", ("sv",), T()),
                           node("u2", "UniqueV2", ("x", "ax"), T()),
                           node("ba", "BroadcastArgs", ("st", "s1"), T("DT_INT32")),
                           node("sg", "StridedSliceGrad", ("shp", "b", "e", "st", "dy"), T(),
                                attr("Index", "type: DT_INT32")),
                           node("mg", "MirrorPadGrad", ("x", "pads"), T(), attr("mode", "s: 'SYMMETRIC'")),
                           node("ts", "TensorScatterAdd", ("x", "si", "ga"), T(), attr("Tindices", "type: DT_INT32"))]
    g["fill_range_cast"] = [ph("n", [], "DT_INT32"), const("dims", [2, 3]), const("v", [1.5], [], "DT_FLOAT"),
                            const("start", [0], []), const("delta", [1], []),
                            node("f", "Fill", ("dims", "v"), T()),
                            node("r", "Range", ("start", "n", "delta"), attr("Tidx", "type: DT_INT32")),
                            node("c", "Cast", ("r",), attr("SrcT", "type: DT_INT32"), attr("DstT", "type: DT_HALF")),
                            node("c2", "Cast", ("c",), attr("SrcT", "type: DT_HALF"), attr("DstT", "type: DT_DOUBLE")),
                            node("z", "ZerosLike", ("f",), T()), node("o", "OnesLike", ("c2",), T("DT_DOUBLE")),
                            node("an", "AddN", ("f", "z", "f"), T(), attr("N", "i: 3")),
                            node("sz", "Size", ("an",), T()), node("rk", "Rank", ("o",), T("DT_DOUBLE"))]
    same4 = ints("strides", [1, 1, 1, 1])
    g["conv_pool"] = [ph("x", [1, 5, 5, 2]), const("w", [0.5] * 24, [2, 2, 2, 3], "DT_FLOAT"),
                      const("dw", [0.25] * 8, [2, 2, 2, 1], "DT_FLOAT"), const("bias", [0.1, 0.2, 0.3], None, "DT_FLOAT"),
                      node("cv", "Conv2D", ("x", "w"), T(), same4, attr("padding", "s: 'SAME'")),
                      node("ba", "BiasAdd", ("cv", "bias"), T()), node("re", "Relu", ("ba",), T()),
                      node("mp", "MaxPool", ("re",), T(), ints("ksize", [1, 2, 2, 1]), ints("strides", [1, 2, 2, 1]),
                           attr("padding", "s: 'VALID'")),
                      node("ap", "AvgPool", ("x",), T(), ints("ksize", [1, 3, 3, 1]), ints("strides", [1, 2, 2, 1]),
                           attr("padding", "s: 'SAME'")),
                      node("dc", "DepthwiseConv2dNative", ("x", "dw"), T(), same4, attr("padding", "s: 'VALID'")),
                      node("lrn", "LRN", ("dc",), T(), attr("depth_radius", "i: 1"))]
    g["batchnorm"] = [ph("x", [1, 2, 2, 3]), const("c", [1.0, 0.5, 2.0], None, "DT_FLOAT"),
                      node("bn", "FusedBatchNormV3", ("x", "c", "c", "c", "c"), T(), T("DT_FLOAT", "U"),
                           attr("is_training", "b: false")),
                      node("bnt", "FusedBatchNormV3", ("x", "c", "c", "c", "c"), T(), T("DT_FLOAT", "U"))]
    g["matmul"] = [ph("a", [2, 3]), ph("b", [3, 4]), ph("bb", [2, 3, 4]), const("bias", [1.0] * 4, None, "DT_FLOAT"),
                   const("lab", [1, 3], None, "DT_INT64"),
                   node("mm", "MatMul", ("a", "b"), T()),
                   node("mt", "MatMul", ("b", "a"), T(), attr("transpose_a", "b: true"), attr("transpose_b", "b: true")),
                   node("fm", "_FusedMatMul", ("a", "b", "bias"), T(), attr("num_args", "i: 1"),
                        attr("fused_ops", "list { s: 'BiasAdd' s: 'Relu' }")),
                   node("bm", "BatchMatMulV2", ("a", "bb"), T()),
                   node("xe", "SparseSoftmaxCrossEntropyWithLogits", ("fm", "lab"), T()),
                   node("ce", "SoftmaxCrossEntropyWithLogits", ("mm", "fm"), T())]
    return {name: "\n".join(nodes) + "\n" for name, nodes in g.items()}


def graph_seeds():
    d = fresh("fuzz_graph")
    for name, text in op_graphs().items():
        with open(os.path.join(d, "op_%s.pbtxt" % name), "w") as f:
            f.write(text)
    for f in ("add.pb", "add.pbtxt"):
        copy(os.path.join(REPO, "tests", "data", f), d, "data_" + f)
    copy(os.path.join(REPO, "examples", "graphs", "mlp.pbtxt"), d, "example_mlp.pbtxt")
    for p in TF_GRAPHS:
        copy(os.path.join(SHARED, "tf_testdata", p), d, "tf_" + flat(p))
    rel = os.path.join(SHARED, "reliability")
    for root, _, files in os.walk(rel):
        for f in sorted(files):
            sub = os.path.relpath(os.path.join(root, f), rel)
            if f.startswith(("crash-", "oom-")):
                copy(os.path.join(root, f), d, f)  # the names TRIAGE.txt uses
            elif f.endswith(".pbtxt"):
                copy(os.path.join(root, f), d, "reliability_" + flat(sub))
    return d


# ------------------------------------------------- TensorProtos of Consts
def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one message; bytes for length-delimited."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("unsupported wire type")
        yield num, wt, v


def tensor_protos(graph_bytes):
    # GraphDef.node = 1, NodeDef.attr = 5 (map entry: key 1, value 2),
    # AttrValue.tensor = 8.
    for num, wt, node in fields(graph_bytes):
        if num != 1 or wt != 2:
            continue
        for anum, awt, entry in fields(node):
            if anum != 5 or awt != 2:
                continue
            for enum_, ewt, value in fields(entry):
                if enum_ == 2 and ewt == 2:
                    for vnum, vwt, t in fields(value):
                        if vnum == 8 and vwt == 2:
                            yield bytes(t)


def to_binary(path):
    with open(path, "rb") as f:
        data = f.read()
    proto = ["protoc", "-I", os.path.join(REPO, "kernel_core", "proto")]
    if subprocess.run(proto + ["--decode=graphrt.proto.GraphDef", "graphrt/proto/graph.proto"],
                      input=data, capture_output=True).returncode == 0:
        return data
    r = subprocess.run(proto + ["--encode=graphrt.proto.GraphDef", "graphrt/proto/graph.proto"],
                       input=data, capture_output=True)
    return r.stdout if r.returncode == 0 else None


def tensor_proto_seeds(graph_dir):
    d = fresh("fuzz_tensor_proto")
    seen = set()
    for f in sorted(os.listdir(graph_dir)):
        g = to_binary(os.path.join(graph_dir, f))
        if g is None:
            continue
        try:
            protos = list(tensor_protos(g))
        except (ValueError, IndexError):
            continue
        for t in protos:
            h = hashlib.sha1(t).hexdigest()
            if h in seen or len(t) > 4096:
                continue
            seen.add(h)
            with open(os.path.join(d, "%s_%s.pb" % (os.path.splitext(f)[0], h[:8])), "wb") as out:
                out.write(t)


# ----------------------------------------------------------------- .npy
def npy_seeds():
    d = fresh("fuzz_npy")

    def save(name, a, version=None):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, a, version=version, allow_pickle=False)
        with open(os.path.join(d, name + ".npy"), "wb") as f:
            f.write(buf.getvalue())

    m = np.arange(6).reshape(2, 3)
    for t in ("<f4", "<f8", "<f2", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<c8", "<c16"):
        save("m2x3_" + t[1:], m.astype(t))
    save("bool", np.array([True, False, True]))
    save("big_endian_i4", np.array([1, -2, 300000], dtype=">i4"))
    save("big_endian_f8", np.array([[0.5, -1.0]], dtype=">f8"))
    save("fortran_f4", np.asfortranarray(m.astype("<f4")))
    save("scalar_f4", np.array(3.5, dtype="<f4"))
    save("empty_0x3_f4", np.zeros((0, 3), dtype="<f4"))
    save("rank5_u1", np.ones((1, 2, 1, 2, 1), dtype="|u1"))
    save("bytes_S5", np.array([b"ab", b"hello", b""], dtype="|S5"))
    save("unicode_U3", np.array(["a", "\u00e9t\u00e9", "\U0001F600"], dtype="<U3"))
    save("v2_f4", m.astype("<f4"), version=(2, 0))
    save("v3_U2", np.array(["xy"], dtype="<U2"), version=(3, 0))
    rel = os.path.join(SHARED, "reliability")
    for f in sorted(os.listdir(rel)):
        if f.endswith(".npy"):
            copy(os.path.join(rel, f), d, "reliability_" + f)
    copy(os.path.join(rel, "zero_elem_huge_dims", "zero_dim_huge.npy"), d, "reliability_zero_dim_huge.npy")


# (prefix, format) of the checkpoints in tf_testdata; fuzz_checkpoint's input
# is one format byte, then (V2) a uint32 index length, the index, the data.
TF_CHECKPOINTS = [
    ("serving/saved_model_half_plus_two_cpu/00000123/variables/variables", 2),
    ("serving/saved_model_half_plus_three/00000123/variables/variables", 2),
    ("serving/saved_model_counter/00000123/variables/variables", 2),
    ("rust/test_resources/regression-model/variables/variables", 2),
    ("rust/examples/regression_savedmodel/variables/variables", 2),
    ("tf2onnx/models/regression/checkpoint/model", 2),
    ("extra_tf1/tf2onnx/tests/models/assign/variables/variables", 2),
    ("serving/session_bundle/half_plus_two/00000123/export-00000-of-00001", 1),
    ("serving/bad_half_plus_two/00000123/export", 1),
    ("extra_tf1/haskell/tensorflow-mnist/data/MNISTBias.ckpt", 1),
]


def checkpoint_seeds():
    d = fresh("fuzz_checkpoint")
    for prefix, fmt in TF_CHECKPOINTS:
        path = os.path.join(SHARED, "tf_testdata", prefix)
        if fmt == 2:
            index = open(path + ".index", "rb").read()
            data = open(path + ".data-00000-of-00001", "rb").read()
            seed = b"\x00" + struct.pack("<I", len(index)) + index + data
        else:
            seed = b"\x01" + open(path, "rb").read()
        if len(seed) <= MAX_SEED_BYTES:
            with open(os.path.join(d, flat(prefix)), "wb") as f:
                f.write(seed)


def saved_model_seeds():
    """Every small saved_model.pb of tf_testdata (fuzz_saved_model's input)."""
    d = fresh("fuzz_saved_model")
    root = os.path.join(SHARED, "tf_testdata")
    for dirpath, _, files in sorted(os.walk(root)):
        if "saved_model.pb" in files:
            path = os.path.join(dirpath, "saved_model.pb")
            copy(path, d, flat(os.path.relpath(path, root)))


def crc32c(data):
    """CRC-32C (Castagnoli), bit by bit: seeds are small."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


def pb_varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pb_field(num, wire, payload):
    """One field: payload is an int (varint), bytes (length-delimited) or
    already-packed fixed bytes (wire types 1 and 5)."""
    key = pb_varint(num << 3 | wire)
    if wire == 0:
        return key + pb_varint(payload)
    if wire == 2:
        return key + pb_varint(len(payload)) + payload
    return key + payload


def event(wall_time, step=None, **what):
    """An Event (tf_proto_facts.md §10): wall_time #1, step #2, one of
    file_version #3, graph_def #4, summary #5, session_log #7."""
    e = pb_field(1, 1, struct.pack("<d", wall_time))
    if step is not None:
        e += pb_field(2, 0, step)
    numbers = {"file_version": 3, "graph_def": 4, "summary": 5, "session_log": 7}
    for key, value in what.items():
        e += pb_field(numbers[key], 2, value)
    return e


def summary_value(tag, simple_value=None, histo=None):
    v = pb_field(1, 2, tag.encode())
    if simple_value is not None:
        v += pb_field(2, 5, struct.pack("<f", simple_value))
    if histo is not None:  # HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5 (doubles), bucket_limit 6, bucket 7 (packed doubles)
        lo, hi, counts, limits = histo
        h = b"".join(pb_field(i + 1, 1, struct.pack("<d", x)) for i, x in
                     enumerate([lo, hi, float(sum(counts)), 0.5, 0.25]))
        h += pb_field(6, 2, b"".join(struct.pack("<d", x) for x in limits))
        h += pb_field(7, 2, b"".join(struct.pack("<d", x) for x in counts))
        v += pb_field(5, 2, h)
    return pb_field(1, 2, v)


def event_file_seeds():
    d = fresh("fuzz_event_file")
    first = event(1700000000.0, file_version=b"brain.Event:2")
    scalars = [event(1700000001.0 + i, i, summary=summary_value("loss", 2.5 / (i + 1)) +
                     summary_value("global_step/sec", 40.0)) for i in range(3)]
    histo = event(1700000005.0, 3, summary=summary_value("weights", histo=(-1.0, 2.0, [1.0, 4.0, 2.0], [-0.5, 0.5, 2.0])))
    start = event(1700000006.0, 0, session_log=pb_field(1, 0, 1))
    checkpoint = event(1700000007.0, 3, session_log=pb_field(1, 0, 3) + pb_field(2, 2, b"/tmp/model.ckpt-3"))
    graph = event(1700000008.0, graph_def=open(os.path.join(REPO, "tests", "data", "add.pb"), "rb").read())
    files = {
        "first_event": [first],
        "scalars": [first] + scalars,
        "histogram": [first, histo],
        "session_logs": [first, start, checkpoint],
        "graph": [first, graph],
    }
    for name, events in files.items():
        body = b"".join(tfrecord(e) for e in events)
        # Byte 0 even: the harness sets the CRCs; odd: the file as it is.
        for mode in (0, 1):
            with open(os.path.join(d, "%s_%d" % (name, mode)), "wb") as f:
                f.write(bytes([mode]) + body)


if __name__ == "__main__":
    graphs = graph_seeds()
    tensor_proto_seeds(graphs)
    npy_seeds()
    checkpoint_seeds()
    saved_model_seeds()
    event_file_seeds()
