"""Checkpoints (Saver, latest_checkpoint, import_meta_graph) and clusters
(ClusterSpec, Server: TensorFlow 1's tf.train.Server)."""

import os

from . import _graphrt
from . import framework
from .proto import cluster_pb2
from .proto import config_pb2
from .proto import meta_graph_pb2
from .proto import tensorflow_server_pb2


def _names(var_list):
    if var_list is None:
        return []
    if isinstance(var_list, dict):
        for key, v in var_list.items():
            name = getattr(v, "name", v).split(":")[0]
            if key != name:
                raise NotImplementedError("graphrt: Saver(var_list=dict) must save each variable under its own "
                                          "node name ('%s' != '%s')" % (key, name))
        var_list = list(var_list.values())
    return [getattr(v, "name", v).split(":")[0] for v in var_list]


class Saver:
    """Saves and restores variables (TensorFlow 1's tf.train.Saver).

    Without ``saver_def`` the save/restore nodes are added to a session's
    graph the first time the Saver is used with it (every variable, or those
    named in ``var_list``). With ``saver_def`` (from import_meta_graph) it uses
    the nodes the graph already has.
    """

    def __init__(self, var_list=None, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0, name=None,
                 sharded=False, saver_def=None, save_relative_paths=False, _meta_graph=None):
        self._var_names = _names(var_list)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name = name or ""
        self._sharded = sharded
        self._relative = save_relative_paths
        self._per_session = {}
        self._shared = None
        if saver_def is not None:
            meta = _meta_graph.SerializeToString() if _meta_graph is not None else None
            self._shared = _graphrt.Saver.from_saver_def(saver_def.SerializeToString(), meta, max_to_keep,
                                                         keep_checkpoint_every_n_hours, save_relative_paths)

    def _for(self, sess):
        if sess._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        sess._sync_graph()
        if self._shared is not None:
            return self._shared
        entry = self._per_session.get(id(sess._impl))
        if entry is None:
            saver = _graphrt.Saver.create(sess._impl, self._var_names, self._max_to_keep, self._keep_hours,
                                          self._sharded, self._name, self._relative)
            entry = self._per_session[id(sess._impl)] = (sess._impl, saver)  # holds impl: ids stay unique
            sess._fetch_cache.clear()
        return entry[1]

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint; returns its prefix (``save_path-<global_step>`` with a step)."""
        if latest_filename not in (None, "checkpoint"):
            raise NotImplementedError("graphrt: Saver.save(latest_filename=...) other than 'checkpoint'")
        step = -1
        if global_step is not None:
            if isinstance(global_step, (str, framework.Tensor)):
                name = global_step if isinstance(global_step, str) else global_step.name
                global_step = sess.run(name if ":" in name else name + ":0")
            step = int(global_step)
        return self._for(sess).save(sess._impl, os.fspath(save_path), step)

    def restore(self, sess, save_path):
        """Restores every saved variable from checkpoint prefix ``save_path``."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        self._for(sess).restore(sess._impl, os.fspath(save_path))

    @property
    def last_checkpoints(self):
        if self._shared is not None:
            return self._shared.last_checkpoints()
        return [p for _, s in self._per_session.values() for p in s.last_checkpoints()]

    def as_saver_def(self):
        from .proto import saver_pb2
        s = self._shared or (next(iter(self._per_session.values()))[1] if self._per_session else None)
        if s is None:
            raise ValueError("graphrt: this Saver has not been used with a session yet")
        d = saver_pb2.SaverDef()
        d.ParseFromString(s.saver_def())
        return d


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint prefix named by ``checkpoint_dir``/checkpoint, or None."""
    return _graphrt.latest_checkpoint(os.fspath(checkpoint_dir), latest_filename or "checkpoint")


def checkpoint_exists(checkpoint_prefix):
    return _graphrt.checkpoint_exists(os.fspath(checkpoint_prefix))


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Adds a MetaGraphDef's graph (a .meta file or a MetaGraphDef) to the
    default graph; returns a Saver over its saver_def (None when it has none)."""
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        meta = meta_graph_or_file
    else:
        meta = meta_graph_pb2.MetaGraphDef()
        meta.ParseFromString(_graphrt.read_meta_graph_def(os.fspath(meta_graph_or_file)))
    graph_def = meta.graph_def
    if clear_devices:
        for n in graph_def.node:
            n.device = ""
    framework.get_default_graph()._add_graph_def(graph_def, import_scope or "")
    if not meta.HasField("saver_def"):
        return None
    if import_scope:
        raise NotImplementedError("graphrt: import_meta_graph(import_scope=...) with a saver_def")
    return Saver(saver_def=meta.saver_def, _meta_graph=meta)


class ClusterSpec:
    """The tasks of a cluster by job (TensorFlow 1's tf.train.ClusterSpec).

    ``cluster``: a dict of job name -> list of "host:port" (task i is the
    i-th) or -> dict of task index -> "host:port" (a sparse job, with gaps),
    a ClusterDef, or another ClusterSpec."""

    def __init__(self, cluster):
        self._jobs = {}
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if isinstance(cluster, cluster_pb2.ClusterDef):
            for job in cluster.job:
                if job.name in self._jobs:
                    raise ValueError("Duplicated job name: %s" % job.name)
                self._jobs[job.name] = dict(job.tasks)
            return
        if not isinstance(cluster, dict):
            raise TypeError("ClusterSpec takes a dict, a ClusterDef or a ClusterSpec, not %s" % type(cluster).__name__)
        for name, tasks in cluster.items():
            if isinstance(tasks, (list, tuple)):
                self._jobs[name] = {i: a for i, a in enumerate(tasks)}
            elif isinstance(tasks, dict):
                for i in tasks:
                    if not isinstance(i, int):
                        raise TypeError("Task index %r of job %s is not an integer" % (i, name))
                self._jobs[name] = dict(tasks)
            else:
                raise TypeError("The tasks of job %s must be a list or a dict, not %s" % (name, type(tasks).__name__))

    @property
    def jobs(self):
        return list(self._jobs)

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name))
        return tasks[task_index]

    def job_tasks(self, job_name):
        """The addresses in task order (None where a sparse job has a gap)."""
        tasks = self._job(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def as_dict(self):
        """Each job as a list when its task indices are 0..n-1, else as a dict."""
        out = {}
        for name, tasks in self._jobs.items():
            dense = sorted(tasks) == list(range(len(tasks)))
            out[name] = [tasks[i] for i in range(len(tasks))] if dense else dict(tasks)
        return out

    def as_cluster_def(self):
        cluster = cluster_pb2.ClusterDef()
        for name in sorted(self._jobs):
            job = cluster.job.add(name=name)
            for i, address in self._jobs[name].items():
                job.tasks[i] = address
        return cluster

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __bool__(self):
        return bool(self._jobs)

    def __repr__(self):
        return "ClusterSpec(%r)" % self.as_dict()

    def _job(self, job_name):
        if job_name not in self._jobs:
            raise ValueError("No such job in cluster: %r" % job_name)
        return self._jobs[job_name]


def set_client_tls(tls_cert=None, tls_key=None, tls_ca=None):
    """Mutual TLS for this process's grpc:// sessions (PEM files, all three;
    none: plaintext). Until it is called, the files that GRAPHRT_TLS_CERT,
    GRAPHRT_TLS_KEY and GRAPHRT_TLS_CA name."""
    _graphrt.set_client_tls(tls_cert or "", tls_key or "", tls_ca or "")


class Server:
    """One task of a cluster, serving TensorFlow 1's Master and Worker on one
    gRPC port (tf.train.Server). ``server.target`` is the grpc:// target that
    ``graphrt.Session(target=...)`` takes. Unlike TensorFlow's, ``stop()``
    works: running steps end and sessions close.

    ``server_or_cluster_def``: a ClusterSpec, a dict for one, a ClusterDef or
    a ServerDef. ``job_name`` defaults to the only job; ``task_index`` to 0.

    ``tls_cert``, ``tls_key``, ``tls_ca`` (PEM files, all three or none):
    mutual TLS; only clients and tasks with a certificate the CA signed get
    in, and the server reaches the other tasks with its own. Clients in this
    process use ``set_client_tls``. Without TLS, a task whose address is not
    a loopback address needs ``insecure=True`` (anyone who reaches the port
    can run any graph, file reads and writes included)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True, insecure=False, tls_cert=None, tls_key=None, tls_ca=None):
        if isinstance(server_or_cluster_def, tensorflow_server_pb2.ServerDef):
            server_def = tensorflow_server_pb2.ServerDef()
            server_def.CopyFrom(server_or_cluster_def)
        else:
            cluster = ClusterSpec(server_or_cluster_def)
            if job_name is None:
                if len(cluster.jobs) != 1:
                    raise ValueError("Must specify an explicit `job_name`.")
                job_name = cluster.jobs[0]
            if task_index is None:
                if cluster.num_tasks(job_name) != 1:
                    raise ValueError("Must specify an explicit `task_index`.")
                task_index = cluster.task_indices(job_name)[0]
            server_def = tensorflow_server_pb2.ServerDef(cluster=cluster.as_cluster_def(), job_name=job_name,
                                                         task_index=task_index, protocol=protocol or "grpc")
        if config is not None:
            server_def.default_session_config.CopyFrom(config)
        self._server_def = server_def
        self._insecure = insecure
        self._tls = (tls_cert or "", tls_key or "", tls_ca or "")
        self._impl = None
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task server on a free port of this machine."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config, start=start)

    def start(self):
        if self._impl is None:
            self._impl = _graphrt.Server(self._server_def.SerializeToString(), self._insecure, *self._tls)

    @property
    def target(self):
        self.start()
        return self._impl.target

    @property
    def server_def(self):
        return self._server_def

    def join(self):
        """Blocks until stop() (from another thread) has stopped the server."""
        self.start()
        self._impl.join()

    def stop(self):
        if self._impl is not None:
            self._impl.stop()
