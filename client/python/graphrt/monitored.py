"""TensorFlow 1's MonitoredSession, MonitoredTrainingSession, Scaffold and
the common session-run hooks, for graphs built in Python.

A MonitoredSession makes its session through a session creator (the chief's
restores the latest checkpoint of checkpoint_dir, or runs the scaffold's
init op), calls every hook around each run (their fetches ride along in
the same run), stops when a hook asks, and makes a new session and goes on
when a run fails with AbortedError or UnavailableError (a parameter server
restarted), as TensorFlow's does.
"""

import collections
import os
import time

import numpy as np

from . import errors
from . import ops as _ops
from . import session as _session
from . import train as _train
from . import training as _training
from .framework import get_default_graph


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    pass


class SessionRunContext:
    def __init__(self, original_args, session):
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    def request_stop(self):
        self._stop_requested = True

    @property
    def stop_requested(self):
        return self._stop_requested


class SessionRunHook:
    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


def _global_step_tensor():
    step = _training.get_global_step()
    if step is None:
        raise RuntimeError("Global step should be created to use this hook (tf.train.get_or_create_global_step).")
    return step


class StopAtStepHook(SessionRunHook):
    """Stops after num_steps more steps, or at global step last_step."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._step = _global_step_tensor()

    def after_create_session(self, session, coord):
        if self._num_steps is not None:
            self._last_step = int(session.run(self._step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._step)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoint_dir/model.ckpt-<step> when the session starts, every
    save_steps steps (or save_secs seconds) and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("exactly one of save_secs and save_steps must be given")
        self._dir, self._secs, self._steps = checkpoint_dir, save_secs, save_steps
        self._saver, self._scaffold = saver, scaffold
        self._path = os.path.join(checkpoint_dir, checkpoint_basename)

    def begin(self):
        os.makedirs(self._dir, exist_ok=True)  # as TensorFlow's hook does
        self._step = _global_step_tensor()
        self._last_step = None
        self._last_time = time.time()

    def _save(self, session, step):
        saver = self._saver or (self._scaffold.saver if self._scaffold else None) or _default_saver()
        saver.save(session, self._path, global_step=step)
        self._last_step, self._last_time = step, time.time()

    def after_create_session(self, session, coord):
        self._save(session, int(session.run(self._step)))

    def before_run(self, run_context):
        return SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(self._step))
        due = (self._steps is not None and step >= (self._last_step or 0) + self._steps) or \
              (self._secs is not None and time.time() - self._last_time >= self._secs)
        if due and step != self._last_step:
            self._save(run_context.session, step)

    def end(self, session):
        step = int(session.run(self._step))
        if step != self._last_step:
            self._save(session, step)


class LoggingTensorHook(SessionRunHook):
    """Prints the given tensors every every_n_iter steps."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        self._tensors = tensors if isinstance(tensors, dict) else {getattr(t, "name", t): t for t in tensors}
        self._every = every_n_iter or 1
        self._formatter = formatter
        self._count = 0

    def before_run(self, run_context):
        return SessionRunArgs(self._tensors) if self._count % self._every == 0 else None

    def after_run(self, run_context, run_values):
        if self._count % self._every == 0 and run_values.results is not None:
            values = run_values.results
            print(self._formatter(values) if self._formatter else
                  ", ".join("%s = %s" % (k, values[k]) for k in sorted(values)))
        self._count += 1


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss, self._fail = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail:
                raise NanLossDuringTrainingError
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Runs summary_op (default: merge_all) every save_steps steps and
    writes it to output_dir."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        from . import summary as _summary  # noqa: PLC0415
        self._every = save_steps or 100
        self._op = summary_op if summary_op is not None else _summary.merge_all()
        self._writer = summary_writer or (_summary.FileWriter(output_dir) if output_dir else None)

    def begin(self):
        self._step = _global_step_tensor()

    def before_run(self, run_context):
        fetches = {"step": self._step}
        if self._op is not None:
            fetches["summary"] = self._op
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        step = int(run_values.results["step"])
        if self._writer is not None and "summary" in run_values.results and step % self._every == 0:
            self._writer.add_summary(run_values.results["summary"], step)

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


def _default_saver():
    g = get_default_graph()
    savers = g.get_collection(_ops.GraphKeys.SAVERS)
    if not savers:
        g.add_to_collection(_ops.GraphKeys.SAVERS, _train.Saver(sharded=True))
        savers = g.get_collection(_ops.GraphKeys.SAVERS)
    return savers[0]


class Scaffold:
    """What a MonitoredSession needs of the graph: the init op (all
    variables' initializers by default), the local init op and the saver."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, local_init_op=None,
                 summary_op=None, saver=None, copy_from_scaffold=None):
        self._init_op, self._init_feed_dict, self._init_fn = init_op, init_feed_dict, init_fn
        self._local_init_op, self._summary_op, self._saver = local_init_op, summary_op, saver

    def finalize(self):
        if self._init_op is None:
            self._init_op = _ops.global_variables_initializer()
        if self._local_init_op is None:
            self._local_init_op = _ops.local_variables_initializer()
        if self._saver is None:
            self._saver = _default_saver()
        return self

    init_op = property(lambda self: self._init_op)
    local_init_op = property(lambda self: self._local_init_op)
    saver = property(lambda self: self._saver)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._init_fn)


class ChiefSessionCreator:
    """A session with the latest checkpoint of checkpoint_dir restored, or
    its variables initialized."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None, checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._dir, self._path = checkpoint_dir, checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        sess = _session.Session(graph=get_default_graph(), config=self._config, target=self._master)
        path = self._path or (_train.latest_checkpoint(self._dir) if self._dir else None)
        if path:
            self._scaffold.saver.restore(sess, path)
        else:
            sess.run(self._scaffold.init_op, feed_dict=self._scaffold.init_feed_dict)
            if self._scaffold.init_fn is not None:
                self._scaffold.init_fn(self._scaffold, sess)
        sess.run(self._scaffold.local_init_op)
        return sess


class MonitoredSession:
    """Runs with hooks; recovers from AbortedError and UnavailableError by
    making a new session (restored from the latest checkpoint)."""

    _RECOVERABLE = (errors.AbortedError, errors.UnavailableError)

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._creator = session_creator or ChiefSessionCreator()
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._stop = False
        self._sess = None
        self._create()

    def _create(self):
        self._sess = self._creator.create_session()
        for h in self._hooks:
            h.after_create_session(self._sess, None)

    @property
    def graph(self):
        return get_default_graph()

    def should_stop(self):
        return self._stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._stop:
            raise RuntimeError("Run called even after should_stop requested.")
        while True:
            try:
                return self._run_with_hooks(fetches, feed_dict, options, run_metadata)
            except self._RECOVERABLE:
                try:
                    self._sess.close()
                except errors.OpError:
                    pass
                self._create()

    def _run_with_hooks(self, fetches, feed_dict, options, run_metadata):
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        feeds = dict(feed_dict or {})
        hook_fetches = {}
        for i, h in enumerate(self._hooks):
            args = h.before_run(context)
            if args is None:
                continue
            if args.fetches is not None:
                hook_fetches[i] = args.fetches
            for k, v in (args.feed_dict or {}).items():
                if k in feeds:
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user.")
                feeds[k] = v
        results = self._sess.run({"caller": fetches, "hooks": hook_fetches}, feed_dict=feeds, options=options,
                                 run_metadata=run_metadata)
        for i, h in enumerate(self._hooks):
            h.after_run(context, SessionRunValues(results["hooks"].get(i), options, run_metadata))
        self._stop = self._stop or context.stop_requested
        return results["caller"]

    def close(self):
        if self._sess is not None:
            for h in self._hooks:
                h.end(self._sess)
            self._sess.close()
            self._sess = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is errors.OutOfRangeError:  # end of input: a normal stop
            exc_type = None
        self.close()
        return exc_type is None and exc is not None


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=600, save_summaries_steps=100,
                             save_summaries_secs=None, config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=None,
                             summary_dir=None):
    """TensorFlow 1's MonitoredTrainingSession for the chief: restores or
    initializes, saves checkpoints to checkpoint_dir (every
    save_checkpoint_steps, else every save_checkpoint_secs) and summaries."""
    if not is_chief:
        raise NotImplementedError("graphrt: MonitoredTrainingSession(is_chief=False) from Python")
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or []) + list(chief_only_hooks or [])
    if checkpoint_dir:
        if save_checkpoint_steps is not None or save_checkpoint_secs:
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=None if save_checkpoint_steps else
                                                 save_checkpoint_secs, save_steps=save_checkpoint_steps,
                                                 scaffold=scaffold))
        from . import summary as _summary  # noqa: PLC0415
        if save_summaries_steps and _summary.merge_all() is not None:
            all_hooks.append(SummarySaverHook(save_steps=save_summaries_steps,
                                              output_dir=summary_dir or checkpoint_dir))
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir)
    return MonitoredSession(session_creator=creator, hooks=all_hooks)
