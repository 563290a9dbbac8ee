"""TensorFlow 1's names, so that a TF1 script runs with its import changed
to ``import graphrt.compat.v1 as tf``.

Covered: Session (TF1's argument order; a default session in a with block),
InteractiveSession, GraphDef / ConfigProto / RunOptions / RunMetadata,
Graph, import_graph_def, get_default_graph, reset_default_graph; building
graphs: placeholder, constant, Variable, the initializers, name_scope,
device, control_dependencies, colocate_with, collections and GraphKeys, the
math, array, random and tf.nn functions of graphrt.api, Tensor operators,
raw_ops (every registered op); train.Saver / import_meta_graph /
latest_checkpoint, saved_model.loader.load (and tag / signature constants),
errors, gfile.GFile, the dtype names; gradients and the optimizers,
variable_scope / get_variable and the initializers, cond and while_loop,
tf.layers, tf.summary with FileWriter, graph_util.convert_variables_to_constants.
MonitoredTrainingSession with the common hooks, SavedModel writing.
Not yet: gradients through cond and while_loop, eager execution.
"""

import os as _os
import types as _types

from .. import errors
from ..framework import (DType, Graph, Operation, Tensor, as_dtype, get_default_graph,  # noqa: F401
                         import_graph_def, reset_default_graph)
from ..proto.config_pb2 import ConfigProto, GPUOptions, GraphOptions, RunMetadata, RunOptions  # noqa: F401
from ..proto.graph_pb2 import GraphDef  # noqa: F401
from ..proto.node_def_pb2 import NodeDef  # noqa: F401
from ..proto.meta_graph_pb2 import MetaGraphDef, SignatureDef, TensorInfo  # noqa: F401
from .. import saved_model as _sm
from .. import train as _train
from ..session import Session as _Session
from ..session import get_default_session  # noqa: F401
from ..session import list_devices as _list_devices
from ..framework import TensorShape  # noqa: F401
from ..ops import (GraphKeys, Variable, constant, convert_to_tensor, global_variables,  # noqa: F401
                   global_variables_initializer, group, local_variables, local_variables_initializer,
                   make_ndarray, make_tensor_proto, no_op, raw_ops, trainable_variables, variables_initializer)
from ..ops import as_dtype as _as_dtype  # noqa: F401
from ..api import *  # noqa: F401,F403 -- TensorFlow 1's function names
from ..api import nn  # noqa: F401
from .. import training as _training
from ..variable_scope import (AUTO_REUSE, VariableScope, constant_initializer, get_variable,  # noqa: F401
                              get_variable_scope, glorot_normal_initializer, glorot_uniform_initializer,
                              initializers, ones_initializer, random_normal_initializer,
                              random_uniform_initializer, truncated_normal_initializer,
                              variable_scope, variance_scaling_initializer, zeros_initializer)
from ..training import gradients  # noqa: F401
from ..control_flow import cond, while_loop  # noqa: F401
from .. import layers as _layers
from .. import monitored as _monitored
from .. import summary  # noqa: F401 -- tf.summary

initialize_all_variables = global_variables_initializer
initialize_variables = variables_initializer


class Session(_Session):
    """tf.compat.v1.Session(target='', graph=None, config=None)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(graph=graph, config=config, target=target)


class InteractiveSession(Session):
    """A Session that makes itself the default on creation (for eval/run
    without a with block), until it is closed."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default = self.as_default()
        self._default.__enter__()

    def close(self):
        if getattr(self, "_default", None) is not None:
            self._default.__exit__(None, None, None)
            self._default = None
        super().close()


def disable_v2_behavior():
    """Nothing to do: graphrt is always graph mode."""


disable_eager_execution = disable_v2_behavior

float16, float32, float64 = as_dtype(19), as_dtype(1), as_dtype(2)
int8, int16, int32, int64 = as_dtype(6), as_dtype(5), as_dtype(3), as_dtype(9)
uint8, uint16, uint32, uint64 = as_dtype(4), as_dtype(17), as_dtype(22), as_dtype(23)
bool, string, complex64, complex128 = as_dtype(10), as_dtype(7), as_dtype(8), as_dtype(18)  # noqa: A001


def _loader_load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads a SavedModel into ``sess`` (its graph is replaced by the model's,
    its variables restored); returns the MetaGraphDef."""
    if import_scope:
        raise NotImplementedError("graphrt: saved_model.loader.load(import_scope=...)")
    impl, meta = _sm._load(export_dir, tags, sess._config)
    old = sess._impl
    sess._impl = impl
    sess._fetch_cache.clear()
    graph = sess._graph
    if graph is not None and len(graph._graph_def.node) == 0:
        graph._add_graph_def(meta.graph_def, "")  # so get_default_graph() sees the model too
        sess._graph_nodes = len(graph._graph_def.node)
    else:
        sess._graph = Graph(meta.graph_def)
        sess._graph_nodes = None
    old.close()
    return meta


def _gfile_open(name, mode="r"):
    return open(name, mode)


gfile = _types.SimpleNamespace(GFile=_gfile_open, Open=_gfile_open, Exists=_os.path.exists,
                               exists=_os.path.exists, ListDirectory=_os.listdir, IsDirectory=_os.path.isdir,
                               Glob=lambda p: sorted(__import__("glob").glob(p)))

train = _types.SimpleNamespace(Saver=_train.Saver, latest_checkpoint=_train.latest_checkpoint,
                               import_meta_graph=_train.import_meta_graph,
                               checkpoint_exists=_train.checkpoint_exists, Server=_train.Server,
                               ClusterSpec=_train.ClusterSpec,
                               Optimizer=_training.Optimizer,
                               GradientDescentOptimizer=_training.GradientDescentOptimizer,
                               MomentumOptimizer=_training.MomentumOptimizer,
                               AdamOptimizer=_training.AdamOptimizer, RMSPropOptimizer=_training.RMSPropOptimizer,
                               AdagradOptimizer=_training.AdagradOptimizer,
                               get_global_step=_training.get_global_step,
                               create_global_step=_training.create_global_step,
                               get_or_create_global_step=_training.get_or_create_global_step,
                               write_graph=_layers.write_graph,
                               MonitoredTrainingSession=_monitored.MonitoredTrainingSession,
                               MonitoredSession=_monitored.MonitoredSession, Scaffold=_monitored.Scaffold,
                               ChiefSessionCreator=_monitored.ChiefSessionCreator,
                               SessionRunHook=_monitored.SessionRunHook, SessionRunArgs=_monitored.SessionRunArgs,
                               StopAtStepHook=_monitored.StopAtStepHook,
                               CheckpointSaverHook=_monitored.CheckpointSaverHook,
                               LoggingTensorHook=_monitored.LoggingTensorHook, NanTensorHook=_monitored.NanTensorHook,
                               SummarySaverHook=_monitored.SummarySaverHook,
                               NanLossDuringTrainingError=_monitored.NanLossDuringTrainingError)

layers = _types.SimpleNamespace(dense=_layers.dense, conv2d=_layers.conv2d, max_pooling2d=_layers.max_pooling2d,
                                average_pooling2d=_layers.average_pooling2d, flatten=_layers.flatten)
graph_util = _types.SimpleNamespace(convert_variables_to_constants=_layers.convert_variables_to_constants,
                                    extract_sub_graph=_layers.extract_sub_graph)

saved_model = _types.SimpleNamespace(
    loader=_types.SimpleNamespace(load=_loader_load, maybe_saved_model_directory=_sm.contains_saved_model),
    load=_loader_load,
    simple_save=_sm.simple_save,
    builder=_types.SimpleNamespace(SavedModelBuilder=_sm.SavedModelBuilder),
    Builder=_sm.SavedModelBuilder,
    utils=_types.SimpleNamespace(build_tensor_info=_sm.build_tensor_info),
    build_tensor_info=_sm.build_tensor_info,
    signature_def_utils=_types.SimpleNamespace(predict_signature_def=_sm.predict_signature_def,
                                               build_signature_def=_sm.build_signature_def),
    predict_signature_def=_sm.predict_signature_def,
    contains_saved_model=_sm.contains_saved_model,
    tag_constants=_types.SimpleNamespace(SERVING="serve", TRAINING="train", GPU="gpu", TPU="tpu"),
    signature_constants=_types.SimpleNamespace(
        DEFAULT_SERVING_SIGNATURE_DEF_KEY="serving_default", PREDICT_METHOD_NAME="tensorflow/serving/predict",
        CLASSIFY_METHOD_NAME="tensorflow/serving/classify", REGRESS_METHOD_NAME="tensorflow/serving/regress",
        PREDICT_INPUTS="inputs", PREDICT_OUTPUTS="outputs"),
)

config = _types.SimpleNamespace(list_physical_devices=lambda device_type=None: [
    d for d in _list_devices() if device_type is None or d.device_type == device_type])
