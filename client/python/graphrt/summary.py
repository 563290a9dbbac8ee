"""TensorFlow 1's tf.summary: summary ops (ScalarSummary, HistogramSummary,
ImageSummary, MergeSummary from the summary plugin) in the SUMMARIES
collection, and FileWriter, which writes TensorBoard event files (the
core's EventFileWriter: events.out.tfevents.<seconds>.<host>, TFRecord
framing with masked CRC32C), the graph included, so TensorBoard's Graphs
tab shows it."""

import time

from . import _graphrt
from .framework import get_default_graph
from .ops import GraphKeys, apply_op, constant, convert_to_tensor
from .proto.event_pb2 import Event, SessionLog  # noqa: F401
from .proto.summary_pb2 import Summary  # noqa: F401


def _summary_op(name, collections, build):
    g = get_default_graph()
    with g.name_scope(name) as scope:
        tag = scope[:-1]
        op = build(tag, scope)
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        g.add_to_collection(key, op)
    return op


def scalar(name, tensor, collections=None, family=None):
    """A ScalarSummary of `tensor` tagged with the summary's scope name."""
    if family:
        name = family + "/" + name
    return _summary_op(name, collections, lambda tag, scope: apply_op(
        "ScalarSummary", tags=constant(tag, name="tags"), values=convert_to_tensor(tensor), name=scope))


def histogram(name, values, collections=None, family=None):
    if family:
        name = family + "/" + name
    return _summary_op(name, collections, lambda tag, scope: apply_op(
        "HistogramSummary", tag=constant(tag, name="tag"), values=convert_to_tensor(values), name=scope))


def image(name, tensor, max_outputs=3, collections=None, family=None):
    if family:
        name = family + "/" + name
    return _summary_op(name, collections, lambda tag, scope: apply_op(
        "ImageSummary", tag=constant(tag, name="tag"), tensor=convert_to_tensor(tensor), max_images=max_outputs,
        name=scope))


def merge(inputs, collections=None, name=None):
    """One Summary of several (MergeSummary)."""
    g = get_default_graph()
    with g.name_scope(name or "Merge") as scope:
        op = apply_op("MergeSummary", inputs=[convert_to_tensor(i) for i in inputs], name=scope + "MergeSummary")
    for key in collections or []:
        g.add_to_collection(key, op)
    return op


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """Every summary of the collection merged, or None when there is none."""
    ops = get_default_graph().get_collection(key, scope)
    return merge(ops, name=name) if ops else None


class FileWriter:
    """tf.summary.FileWriter: events into logdir (the graph's first, when
    given)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        self._logdir = str(logdir)
        self._writer = _graphrt.EventFileWriter(self._logdir, filename_suffix or "")
        self._closed = False
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    def _write(self, event):
        if self._closed:
            raise RuntimeError("graphrt: the FileWriter is closed")
        if not event.wall_time:
            event.wall_time = time.time()
        self._writer.write_event(event.SerializeToString())

    def add_event(self, event):
        self._write(event)

    def add_summary(self, summary, global_step=None):
        """A serialized Summary (what a summary op's run returns) or a
        Summary proto, at step global_step."""
        event = Event(step=int(global_step or 0))
        if isinstance(summary, bytes):
            event.summary.ParseFromString(summary)
        else:
            event.summary.CopyFrom(summary)
        self._write(event)

    def add_graph(self, graph, global_step=None, graph_def=None):
        graph_def = graph_def if graph_def is not None else graph.as_graph_def()
        self._write(Event(step=int(global_step or 0), graph_def=graph_def.SerializeToString()))

    def add_session_log(self, session_log, global_step=None):
        event = Event(step=int(global_step or 0))
        event.session_log.CopyFrom(session_log)
        self._write(event)

    def flush(self):
        self._writer.flush()

    def close(self):
        if not self._closed:
            self._writer.close()
            self._closed = True

    def reopen(self):
        if self._closed:
            self._writer = _graphrt.EventFileWriter(self._logdir, "")
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
