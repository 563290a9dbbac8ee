#!/usr/bin/python3
"""Python overhead of graphrt.Session.run against the C++ Session::Run.

Times W1_add_chain_N1 (y = x + b on float[4], x and b fed, y fetched) and
W2_mlp through the Python module the way bench/workloads_bench.cc times them
in C++ (threads=1 session, warm-up, every call timed on its own, median of at
least 20 calls and 1 s), then runs graphrt_bench_workloads on the same graphs
in the same sitting and prints both and the difference.

    PYTHONPATH=build/python bench/python_overhead.py [--build build] [--min-time 1] [--rounds 1]

Three Python figures per workload: `run` is sess.run(fetch_name, feed_dict)
(what a script does); `run_list` fetches ["y:0"] (the general fetch-structure
path); `native` calls the extension directly with the flattened names (the
binding's own cost, no Python-side fetch handling). With --rounds N the
Python and C++ figures are taken N times, alternating, and each column is
the median of its rounds (W2 moves by several percent between single runs on
a shared machine); the last column then also gives the range of the rounds'
own differences.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def median_us(fn, warmup, min_time, min_reps):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    clock = time.perf_counter_ns
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times) / 1000.0, len(times)


def sink(graph_def):
    consumed = {i.lstrip("^").split(":")[0] for n in graph_def.node for i in n.input}
    outs = [n.name for n in graph_def.node if n.name not in consumed and n.op != "Placeholder"]
    assert len(outs) == 1, outs
    return outs[0] + ":0"


def input_pattern(shape):
    # The peers' deterministic input: ((i*7919) % 1000)/1000 - 0.5.
    n = int(np.prod(shape))
    return (((np.arange(n) * 7919) % 1000) / 1000.0 - 0.5).astype(np.float32).reshape(shape)


def cpp_figure(build, name, min_time):
    exe = os.path.join(build, "bin", "graphrt_bench_workloads")
    out = subprocess.run([exe, "--only=" + name, "--threads=1", "--min_time=%g" % min_time],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"RESULT %s graphrt threads=1 .*?(?:total ([0-9.]+) us/call|([0-9.]+) ms/batch)" % name, line)
        if m:
            return float(m.group(1)) if m.group(1) else float(m.group(2)) * 1000.0
    raise RuntimeError("no RESULT line for %s in:\n%s" % (name, out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--no-cpp", action="store_true", help="skip the C++ benchmark")
    ap.add_argument("--rounds", type=int, default=1, help="alternate the Python and C++ figures N times")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import graphrt

    graphs = os.path.join(args.build, "bench", "graphs")
    cfg = graphrt.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    rows = []
    for name, fname, feeds_of in [
        ("W1_add_chain_N1", "w1_add_chain_n1.pb",
         lambda: {"x:0": np.ones(4, np.float32), "b:0": np.full(4, 1e-3, np.float32)}),
        ("W2_mlp", "w2_mlp.pb", lambda: {"x:0": input_pattern((64, 784))}),
    ]:
        path = os.path.join(graphs, fname)
        if not os.path.exists(path):
            sys.exit("%s missing: build and run graphrt_bench_workloads --write_graphs_only first" % path)
        g = graphrt.GraphDef()
        with open(path, "rb") as f:
            g.ParseFromString(f.read())
        fetch = sink(g)
        feeds = feeds_of()
        warm, reps = (50, 20) if name.startswith("W1") else (10, 20)
        py = {"run": [], "run_list": [], "native": []}
        cpp = []
        with graphrt.Session(g, config=cfg) as sess:
            impl = sess._impl
            names = [fetch]
            for _ in range(args.rounds):
                py["run"].append(median_us(lambda: sess.run(fetch, feeds), warm, args.min_time, reps)[0])
                py["run_list"].append(median_us(lambda: sess.run([fetch], feeds), warm, args.min_time, reps)[0])
                py["native"].append(
                    median_us(lambda: impl.run(feeds, names, [], None, False), warm, args.min_time, reps)[0])
                if not args.no_cpp:
                    cpp.append(cpp_figure(args.build, name, args.min_time))
        rows.append((name, cpp, py))

    print("| workload | C++ Session::Run | Python sess.run(name) | sess.run([name]) | native binding | "
          "overhead of sess.run |")
    print("|---|---|---|---|---|---|")
    for name, cpp, py in rows:
        run = statistics.median(py["run"])
        over = ""
        if cpp:
            c = statistics.median(cpp)
            over = "%+.2f us (%+.1f%%)" % (run - c, 100.0 * (run - c) / c)
            if len(cpp) > 1:
                rel = [100.0 * (p - q) / q for p, q in zip(py["run"], cpp)]
                over += "; rounds %+.1f%% to %+.1f%%" % (min(rel), max(rel))
        print("| %s | %s | %.2f us | %.2f us | %.2f us | %s |" % (
            name, "%.2f us" % statistics.median(cpp) if cpp else "-", run, statistics.median(py["run_list"]),
            statistics.median(py["native"]), over))

if __name__ == "__main__":
    main()
