"""A Python Saver overwriting its checkpoint (saver.save(sess, "model") without
a global step) killed at file steps of the save (GRAPHRT_TEST_CRASH_AT, in
the io plugin's SaveV2): the prefix always restores to the old or the new
values exactly, and the next save leaves only the checkpoint's files."""

import os
import shutil
import subprocess
import sys

import numpy as np

import graphrt
from conftest import graph

N = 4096
GRAPH = """
node { name: "w" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: %(n)d } } } } }
node { name: "s" op: "VariableV2" attr { key: "dtype" value { type: DT_STRING } }
       attr { key: "shape" value { shape { } } } }
node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "t" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
node { name: "set_w" op: "Assign" input: "w" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "set_s" op: "Assign" input: "s" input: "t" attr { key: "T" value { type: DT_STRING } } }
""" % {"n": N}

CHILD = """
import sys
import numpy as np
import graphrt
from google.protobuf import text_format
g = text_format.Parse(open(sys.argv[1]).read(), graphrt.GraphDef())
v = int(sys.argv[3])
with graphrt.Session(g) as sess:
    sess.run(["set_w", "set_s"], {"v:0": np.full(%(n)d, v + 0.5, np.float32), "t:0": "version %%d" %% v})
    graphrt.train.Saver().save(sess, sys.argv[2])
""" % {"n": N}


def start_child(tmp_path, prefix, version, crash_at):
    env = dict(os.environ, GRAPHRT_TEST_CRASH_AT=str(crash_at))
    return subprocess.Popen([sys.executable, str(tmp_path / "child.py"), str(tmp_path / "g.pbtxt"), prefix,
                             str(version)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def save(prefix, version):
    with graphrt.Session(graph(GRAPH)) as sess:
        sess.run(["set_w", "set_s"], {"v:0": np.full(N, version + 0.5, np.float32), "t:0": "version %d" % version})
        graphrt.train.Saver().save(sess, prefix)


def restored_version(prefix):
    with graphrt.Session(graph(GRAPH)) as sess:
        graphrt.train.Saver().restore(sess, prefix)
        w, s = sess.run(["w:0", "s:0"])
    version = int(s.decode().split()[1])
    np.testing.assert_array_equal(w, np.full(N, version + 0.5, np.float32))
    return version


def test_overwrite_killed_at_every_step_restores_old_or_new(tmp_path):
    (tmp_path / "g.pbtxt").write_text(GRAPH)
    (tmp_path / "child.py").write_text(CHILD)
    old = tmp_path / "old"
    old.mkdir()
    save(str(old / "model"), 1)
    # A save here has 16 file steps (bundle_test kills at every one); a
    # child at every third, a few at a time, and one past the last.
    steps = list(range(2, 23, 3)) + [40]
    rcs = {}
    for batch in range(0, len(steps), 4):
        children = {}
        for step in steps[batch:batch + 4]:
            shutil.copytree(old, tmp_path / ("run%d" % step))
            children[step] = start_child(tmp_path, str(tmp_path / ("run%d" % step) / "model"), 2, step)
        for step, child in children.items():
            rcs[step] = child.wait()
    seen = []
    for step in steps:
        d = tmp_path / ("run%d" % step)
        prefix = str(d / "model")
        version = restored_version(prefix)
        seen.append(version)
        assert rcs[step] in (0, -9), "step %d: exit %d" % (step, rcs[step])
        if rcs[step] == 0:
            assert version == 2
            continue
        save(prefix, 3)
        assert restored_version(prefix) == 3
        assert sorted(os.listdir(d)) == ["checkpoint", "model.data-00000-of-00001", "model.index", "model.meta"]
    assert rcs[steps[-1]] == 0, "the save has more steps than the test tries"
    assert 1 in seen and 2 in seen, seen
