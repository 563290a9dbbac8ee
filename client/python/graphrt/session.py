"""graphrt.Session: TensorFlow 1's Session.run over graphrt's C++ Session."""

import collections.abc
import os

from . import _graphrt
from . import framework
from .proto import config_pb2, graph_pb2

_EMPTY_CONFIG = b""
_MAX_CACHED_FETCHES = 256


def _config_bytes(config):
    if config is None:
        return _EMPTY_CONFIG
    if isinstance(config, bytes):
        return config
    if hasattr(config, "SerializeToString"):
        return config.SerializeToString()
    raise TypeError("config must be a graphrt.ConfigProto, got %r" % (type(config),))


def _graph_to_bytes(graph):
    if isinstance(graph, bytes):
        return graph
    if isinstance(graph, framework.Graph):
        return graph._graph_def.SerializeToString()
    if isinstance(graph, graph_pb2.GraphDef):
        return graph.SerializeToString()
    if hasattr(graph, "SerializeToString"):  # another GraphDef class with the same wire format
        return graph.SerializeToString()
    raise TypeError("graph must be a path, the bytes of a GraphDef, a GraphDef or a Graph; got %r" % (type(graph),))


class _Fetches:
    """One fetch structure flattened: the unique tensor names to fetch, the
    targets to run, and how to rebuild the structure from the results."""

    __slots__ = ("names", "targets", "build")

    def __init__(self, session, fetches):
        self.names = []
        self.targets = []
        index = {}
        self.build = self._compile(session, fetches, index)

    def _tensor(self, session, name, index):
        node, _, k = name.rpartition(":")
        try:
            k = int(k)
        except ValueError:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor: the output index is not an integer"
                             % name) from None
        n = session._impl.num_outputs(node)
        if n < 0:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (The name '%s' refers to a Tensor "
                             "which does not exist. The operation, '%s', does not exist in the graph.)"
                             % (name, name, node))
        if k < 0 or k >= n:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (The name '%s' refers to a Tensor "
                             "which does not exist. The operation, '%s', exists but only has %d outputs.)"
                             % (name, name, node, n))
        canonical = "%s:%d" % (node, k)
        i = index.get(canonical)
        if i is None:
            i = index[canonical] = len(self.names)
            self.names.append(canonical)
        return lambda results: results[i]

    def _target(self, session, name):
        if session._impl.num_outputs(name) < 0:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (The name '%s' refers to an "
                             "Operation not in the graph.)" % (name, name))
        if name not in self.targets:
            self.targets.append(name)
        return lambda results: None

    def _compile(self, session, fetch, index):
        if isinstance(fetch, str):
            # TF1: "x:0" names a tensor; "x" an operation, run as a target.
            if ":" in fetch:
                return self._tensor(session, fetch, index)
            return self._target(session, fetch)
        if hasattr(fetch, "_as_graph_element"):  # a Variable: its value
            fetch = fetch._as_graph_element()
        if isinstance(fetch, framework.Tensor):
            return self._tensor(session, fetch.name, index)
        if isinstance(fetch, framework.Operation):
            return self._target(session, fetch.name)
        if isinstance(fetch, collections.abc.Mapping):
            keys = list(fetch.keys())
            parts = [self._compile(session, fetch[k], index) for k in keys]
            cls = type(fetch)

            def build_dict(results):
                items = [(k, p(results)) for k, p in zip(keys, parts)]
                try:
                    return cls(items)
                except TypeError:  # a Mapping type without the dict constructor
                    return dict(items)
            return build_dict
        if isinstance(fetch, (list, tuple)):
            parts = [self._compile(session, f, index) for f in fetch]
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):  # namedtuple
                cls = type(fetch)
                return lambda results: cls(*[p(results) for p in parts])
            if isinstance(fetch, tuple):
                return lambda results: tuple([p(results) for p in parts])
            return lambda results: [p(results) for p in parts]
        raise TypeError("Fetch argument %r has invalid type %r, must be a string or Tensor. (Can not convert a %s "
                        "into a Tensor or Operation.)" % (fetch, type(fetch), type(fetch).__name__))


class Session:
    """A session on a graph (TensorFlow 1's tf.Session).

    ``graph``: a path to a GraphDef (.pb binary or .pbtxt text), the bytes of a
    binary GraphDef, a ``graphrt.GraphDef``, or a ``graphrt.Graph``; None
    takes the default graph of graphrt.compat.v1. ``config``: a
    ``graphrt.ConfigProto``. ``target``: "" for the in-process runtime.
    The graph is fixed when the session is made (nodes added to a Graph later
    are not seen). ``run`` may be called from many threads at once.
    """

    def __init__(self, graph=None, config=None, target="", _impl=None):
        self._closed = False
        self._fetch_cache = {}
        self._graph = None
        self._graph_nodes = None
        self._library_sent = False
        self._config = _EMPTY_CONFIG
        if _impl is not None:
            self._impl = _impl
            return
        config_bytes = _config_bytes(config)
        if graph is None:
            graph = framework.get_default_graph()
        if isinstance(graph, framework.Graph):
            self._graph = graph
        self._config = config_bytes
        # How many of the Graph's nodes the C++ session has (compat.v1 scripts
        # may import nodes into the graph after making the session).
        self._graph_nodes = len(graph._graph_def.node) if isinstance(graph, framework.Graph) else None
        self._library_sent = isinstance(graph, framework.Graph) and bool(graph._graph_def.library.function)
        if isinstance(graph, (str, os.PathLike)):
            self._impl = _graphrt.Session.from_file(os.fspath(graph), config_bytes, target)
        else:
            self._impl = _graphrt.Session(_graph_to_bytes(graph), config_bytes, target)

    @property
    def graph(self):
        """The session's graph as a graphrt.Graph (names, tensors, operations)."""
        if self._graph is None:
            g = graph_pb2.GraphDef()
            g.ParseFromString(self._impl.graph_def())
            self._graph = framework.Graph(g)
        return self._graph

    @property
    def graph_def(self):
        g = graph_pb2.GraphDef()
        g.ParseFromString(self._impl.graph_def())
        return g

    def _mapper(self, fetches):
        # Flattening is cached for fetches that can be keys: names, tuples of
        # names, and lists of names (keyed apart from the equal tuple).
        t = type(fetches)
        if t is str or t is tuple:
            key = fetches
        elif t is list and all(type(f) is str for f in fetches):
            key = (list, tuple(fetches))
        else:
            return _Fetches(self, fetches)
        try:
            m = self._fetch_cache.get(key)
        except TypeError:  # a tuple holding lists or dicts
            return _Fetches(self, fetches)
        if m is None:
            m = _Fetches(self, fetches)
            if len(self._fetch_cache) >= _MAX_CACHED_FETCHES:
                self._fetch_cache.clear()
            self._fetch_cache[key] = m
        return m

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the graph: returns ``fetches`` with every tensor name replaced by
        its value (a numpy array or scalar; bytes for strings) and every
        operation name (no ':') by None, after running it.

        ``feed_dict`` maps tensor names ("x:0") or Tensors to values, converted
        to the tensor's dtype as numpy converts them. ``options`` is a
        RunOptions; ``run_metadata`` a RunMetadata filled in by the run.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._graph_nodes is not None and len(self._graph._graph_def.node) != self._graph_nodes:
            self._sync_graph()
        m = self._mapper(fetches)
        if not m.names and not m.targets:
            return m.build(())  # TF1: nothing to fetch or run, so no Run at all
        if options is not None and not isinstance(options, bytes):
            options = options.SerializeToString()
        if run_metadata is None:
            return m.build(self._impl.run(feed_dict, m.names, m.targets, options, False))
        results, metadata = self._impl.run(feed_dict, m.names, m.targets, options, True)
        run_metadata.ParseFromString(metadata)
        return m.build(results)

    def _sync_graph(self):
        # Sends the nodes added to the session's Graph since the last call.
        if self._graph_nodes is None:
            return
        nodes = self._graph._graph_def.node
        if len(nodes) == self._graph_nodes:
            return
        add = graph_pb2.GraphDef()
        add.node.extend(nodes[self._graph_nodes:])
        library = self._graph._graph_def.library
        if not self._library_sent and (library.function or library.gradient):
            add.library.CopyFrom(library)  # once: the core refuses functions defined twice
            self._library_sent = True
        self._impl.extend(add.SerializeToString())
        self._graph_nodes = len(nodes)
        self._fetch_cache.clear()

    def close(self):
        """Closes the session; Runs in progress end early, later ones raise RuntimeError."""
        if not self._closed:
            self._closed = True
            self._impl.close()

    def list_devices(self):
        return list_devices()

    def __enter__(self):
        # TensorFlow 1: a session in a with block is the default session.
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        _default_sessions.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _default_sessions and _default_sessions[-1] is self:
            _default_sessions.pop()
        self.close()

    def as_default(self):
        """A context in which this session is the default (Tensor.eval,
        Operation.run); it stays open afterwards."""
        return _AsDefault(self)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 -- nothing to report to at collection time
            pass


_default_sessions = []


class _AsDefault:
    def __init__(self, session):
        self._session = session

    def __enter__(self):
        _default_sessions.append(self._session)
        return self._session

    def __exit__(self, exc_type, exc, tb):
        if _default_sessions and _default_sessions[-1] is self._session:
            _default_sessions.pop()


def get_default_session():
    """The innermost session made default (a with block or as_default), or None."""
    return _default_sessions[-1] if _default_sessions else None


class DeviceAttributes:
    """One device: name ("/job:localhost/replica:0/task:0/device:CPU:0"), type, memory."""

    def __init__(self, name, device_type, memory_limit_bytes, description):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        self.memory_limit = memory_limit_bytes
        self.physical_device_desc = description

    def __repr__(self):
        return "_DeviceAttributes(%s, %s, %d)" % (self.name, self.device_type, self.memory_limit_bytes)


def list_devices():
    """The devices of the loaded device plugins."""
    return [DeviceAttributes(*d) for d in _graphrt.list_devices()]
