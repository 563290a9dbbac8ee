"""graphrt for Python: run TensorFlow 1.x graphs, checkpoints and SavedModels.

    import graphrt, numpy as np
    with graphrt.Session("model.pb") as sess:
        y = sess.run("y:0", feed_dict={"x:0": np.ones((1, 3), np.float32)})

    model = graphrt.saved_model.load("export_dir")            # tags ["serve"]
    model.signatures["serving_default"](x=np.array([[1.0]], np.float32))

``graphrt.compat.v1`` has the session-side names of TensorFlow 1
(``import graphrt.compat.v1 as tf``: tf.Session, tf.GraphDef,
tf.import_graph_def, tf.train.import_meta_graph, tf.saved_model.loader.load,
tf.errors). Building graphs op by op (tf.placeholder, tf.matmul, ...) is out
of scope: graphs come from GraphDef files, MetaGraphs and SavedModels.

The standard op and device plugins are loaded on import (those beside
libgraphrt_core, then the directories of GRAPHRT_PLUGIN_PATH).
"""

import warnings as _warnings

from . import errors
from . import _graphrt

_graphrt._set_error_factory(errors._make_error)
_plugin_error = _graphrt.load_default_plugins()
if _plugin_error:
    _warnings.warn("graphrt: loading the standard plugins from %s failed: %s"
                   % (_graphrt.default_plugin_directory(), _plugin_error), RuntimeWarning)

from .proto.graph_pb2 import GraphDef  # noqa: E402
from .proto.node_def_pb2 import NodeDef  # noqa: E402
from .proto.config_pb2 import ConfigProto, GPUOptions, GraphOptions, RunMetadata, RunOptions  # noqa: E402
from .proto.meta_graph_pb2 import MetaGraphDef  # noqa: E402
from .framework import DType, Graph, Operation, Tensor, get_default_graph, import_graph_def  # noqa: E402
from .session import Session, list_devices  # noqa: E402
from . import saved_model  # noqa: E402
from . import train  # noqa: E402
from .ops import raw_ops  # noqa: E402

__version__ = "0.1.0"


def load_op_library(library_filename):
    """Loads a plugin (.so) with ops, kernels or devices into the runtime.

    Returns a module-like namespace, as TensorFlow's load_op_library does: a
    function per op the plugin defined, in snake case (``zero_out`` for
    ZeroOut, building the op in the default graph), and the description
    ``.name``, ``.path``, ``.ops`` (op names), ``.kernels``, ``.devices``.
    """
    import types
    from . import ops as _ops
    info = _graphrt.load_op_library(str(library_filename))
    functions = _ops.op_library_functions(info["ops"])
    clash = set(functions) & set(info)
    if clash:
        raise ValueError("graphrt: op function names %s clash with the library description's" % sorted(clash))
    return types.SimpleNamespace(**info, **functions)


__all__ = ["Session", "GraphDef", "NodeDef", "ConfigProto", "GPUOptions", "GraphOptions", "RunOptions",
           "RunMetadata", "MetaGraphDef", "Graph", "Tensor", "Operation", "DType", "get_default_graph",
           "import_graph_def", "errors", "saved_model", "train", "load_op_library", "list_devices", "raw_ops"]
