"""Loading TensorFlow 1 SavedModels and calling their signatures.

    model = graphrt.saved_model.load("/models/half_plus_two/00000123")
    out = model.signatures["serving_default"](x=np.array([[1.0]], np.float32))
    out["y"]  # array([[2.5]], dtype=float32)
"""

import collections.abc
import os

from . import _graphrt
from . import framework
from .proto import meta_graph_pb2
from .session import Session, _config_bytes

SERVING = "serve"
TRAINING = "train"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


class TensorInfo:
    """A signature input or output: tensor name, dtype, shape (None: unknown rank)."""

    def __init__(self, info):
        self.name = info.name
        self.dtype = framework.DType(info.dtype)
        self.shape = (None if info.tensor_shape.unknown_rank
                      else [d.size if d.size >= 0 else None for d in info.tensor_shape.dim])

    def __repr__(self):
        return "TensorInfo(name=%r, dtype=%s, shape=%r)" % (self.name, self.dtype.name, self.shape)


class Signature:
    """A callable signature: ``sig(**inputs)`` -> {output key: value}."""

    def __init__(self, session, key, signature_def):
        self._session = session
        self.key = key
        self.method_name = signature_def.method_name
        self.inputs = {k: TensorInfo(v) for k, v in sorted(signature_def.inputs.items())}
        self.outputs = {k: TensorInfo(v) for k, v in sorted(signature_def.outputs.items())}
        self._fetches = {k: v.name for k, v in self.outputs.items()}

    def __call__(self, **inputs):
        unknown = sorted(set(inputs) - set(self.inputs))
        if unknown:
            raise TypeError("signature '%s' has no input %s; its inputs are %s"
                            % (self.key, ", ".join(repr(u) for u in unknown), sorted(self.inputs)))
        missing = sorted(set(self.inputs) - set(inputs))
        if missing:
            raise TypeError("signature '%s' is missing input %s" % (self.key, ", ".join(repr(m) for m in missing)))
        feeds = {self.inputs[k].name: v for k, v in inputs.items()}
        return self._session.run(self._fetches, feed_dict=feeds)

    def __repr__(self):
        return "<graphrt Signature '%s' inputs=%s outputs=%s>" % (self.key, list(self.inputs), list(self.outputs))


class _Signatures(collections.abc.Mapping):
    def __init__(self, session, meta_graph_def):
        self._defs = meta_graph_def.signature_def
        self._session = session
        self._cache = {}

    def __getitem__(self, key):
        if key not in self._cache:
            if key not in self._defs:
                raise KeyError("no signature '%s' in the SavedModel; it has %s" % (key, sorted(self._defs)))
            self._cache[key] = Signature(self._session, key, self._defs[key])
        return self._cache[key]

    def __iter__(self):
        return iter(sorted(self._defs))

    def __len__(self):
        return len(self._defs)


class SavedModel:
    """A loaded SavedModel: ``session`` (its variables restored, its init op
    run), ``meta_graph_def`` and the callable ``signatures``."""

    def __init__(self, session, meta_graph_def, export_dir):
        self.session = session
        self.meta_graph_def = meta_graph_def
        self.export_dir = export_dir
        self.signatures = _Signatures(session, meta_graph_def)

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _load(export_dir, tags, config, allowed_dirs=()):
    if isinstance(tags, str):
        tags = [tags]
    if isinstance(allowed_dirs, (str, bytes)) or hasattr(allowed_dirs, "__fspath__"):
        allowed_dirs = [allowed_dirs]
    impl, meta_bytes = _graphrt.load_saved_model(str(export_dir), list(tags), _config_bytes(config),
                                                 [os.fsdecode(d) for d in allowed_dirs])
    meta = meta_graph_pb2.MetaGraphDef()
    meta.ParseFromString(meta_bytes)
    return impl, meta


def load(export_dir, tags=(SERVING,), config=None, allowed_dirs=()):
    """Loads the MetaGraphDef of ``export_dir`` tagged exactly ``tags``.

    Loading runs the model's ops (restore, init op), and a graph is a
    program: its file ops (SaveV2, RestoreV2, ...) may touch files only in
    ``export_dir`` and in ``allowed_dirs`` (and those of
    ``config.graphrt_options.allowed_directories``); others raise
    ``PermissionDeniedError`` naming the node and path. ``allowed_dirs=["/"]``
    lifts the limit."""
    impl, meta = _load(export_dir, tags, config, allowed_dirs)
    return SavedModel(Session(_impl=impl), meta, str(export_dir))


def contains_saved_model(export_dir):
    import os
    return os.path.exists(os.path.join(export_dir, "saved_model.pb")) or \
        os.path.exists(os.path.join(export_dir, "saved_model.pbtxt"))


# ---- writing (TensorFlow 1's SavedModelBuilder and simple_save) ----

def build_tensor_info(tensor):
    """tf.saved_model.utils.build_tensor_info: a tensor's name, dtype and shape."""
    info = meta_graph_pb2.TensorInfo(name=tensor.name, dtype=tensor.dtype.base_dtype.as_datatype_enum)
    dims = tensor.shape.dims
    if dims is None:
        info.tensor_shape.unknown_rank = True
    else:
        for d in dims:
            info.tensor_shape.dim.add().size = -1 if d is None else d
    return info


def build_signature_def(inputs=None, outputs=None, method_name=None):
    sig = meta_graph_pb2.SignatureDef(method_name=method_name or "")
    for k, v in (inputs or {}).items():
        sig.inputs[k].CopyFrom(v)
    for k, v in (outputs or {}).items():
        sig.outputs[k].CopyFrom(v)
    return sig


def predict_signature_def(inputs, outputs):
    """A "tensorflow/serving/predict" signature of named tensors."""
    if not inputs or not outputs:
        raise ValueError("Prediction inputs and outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               "tensorflow/serving/predict")


class SavedModelBuilder:
    """tf.saved_model.builder.SavedModelBuilder: the session's graph and
    variables (saved by a sharded Saver the core adds), signatures, a main
    op; written into place by save()."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        self._impl = _graphrt.SavedModelBuilder(self._export_dir)

    @staticmethod
    def _op_name(op):
        if op is None:
            return ""
        return op.name if not hasattr(op, "op") else op.op.name

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        if assets_collection:
            raise NotImplementedError("graphrt: SavedModelBuilder(assets_collection=...) from Python")
        sess._sync_graph()
        sigs = {k: v.SerializeToString() for k, v in (signature_def_map or {}).items()}
        op = main_op if main_op is not None else legacy_init_op
        self._impl.add_meta_graph_and_variables(sess._impl, list(tags), sigs, self._op_name(op),
                                                main_op is None and legacy_init_op is not None)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        sigs = {k: v.SerializeToString() for k, v in (signature_def_map or {}).items()}
        op = main_op if main_op is not None else legacy_init_op
        graph = framework.get_default_graph().as_graph_def().SerializeToString()
        self._impl.add_meta_graph(graph, list(tags), sigs, self._op_name(op),
                                  main_op is None and legacy_init_op is not None)

    def save(self, as_text=False):
        self._impl.save(as_text)
        return self._export_dir.encode()


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """tf.saved_model.simple_save: a "serve" SavedModel with one predict
    signature, "serving_default"."""
    b = SavedModelBuilder(export_dir)
    b.add_meta_graph_and_variables(session, [SERVING],
                                   {DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs, outputs)},
                                   legacy_init_op=legacy_init_op)
    b.save()
