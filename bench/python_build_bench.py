#!/usr/bin/env python3
"""Building a 10,000-op graph in Python with graphrt.compat.v1 (every op
through the TF C API: OpDef checks, attr inference, shape functions),
against describing the same 10,000 NodeDefs directly in Python protobuf in
the same run (what writing the GraphDef alone costs). Issue 29's goal: the
build within 0.5 s.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_build_bench.py [--ops N] [--repeat R]
"""

import argparse
import time

import graphrt.compat.v1 as tf
from graphrt.proto import graph_pb2


def build(n):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [4], name="x")
    start = time.perf_counter()
    for _ in range(n // 2):
        x = tf.negative(tf.identity(x))
    return time.perf_counter() - start


def describe(n):
    start = time.perf_counter()
    g = graph_pb2.GraphDef()
    prev = "x"
    for i in range(n):
        node = g.node.add()
        node.name = "n%d" % i
        node.op = "Identity" if i % 2 == 0 else "Neg"
        node.input.append(prev)
        node.attr["T"].type = 1
        prev = node.name
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops", type=int, default=10000)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    build(100)  # loads the plugins and the OpDefs
    built = sorted(build(a.ops) for _ in range(a.repeat))
    described = sorted(describe(a.ops) for _ in range(a.repeat))
    b, d = built[len(built) // 2], described[len(described) // 2]
    print("build %d ops: %.3f s (%.1f us/op, median of %d); NodeDefs alone: %.3f s; ratio %.1fx"
          % (a.ops, b, b / a.ops * 1e6, a.repeat, d, b / d))


if __name__ == "__main__":
    main()
