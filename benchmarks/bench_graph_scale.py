"""Graph-scale benchmark: import time of long graphs, against their size.

Chains of N ``Relu`` nodes, of N ``Add`` nodes each reading its own initializer, and N one-element
initializers read by one ``Concat``: the import time (``onnxport.import_model``, the fastest of
``--repeat`` runs after a warm-up) of N, 2N, 4N ... (``--scales``), each time's ratio to N's (2.0, 4.0 ... for an import
linear in nodes + initializers), CPU seconds per 10,000 nodes + initializers, and the time of
the first call of the imported model. Not a pass/fail test::

    .venv/bin/python benchmarks/bench_graph_scale.py [--n 10000] [--scales 1,2,4] [--backend torch]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onnxport


def chain(n: int, op: str) -> bytes:
    """``x -> op -> op ... -> y``: n nodes (Add reads a 4-element initializer of its own)."""
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        out = f"v{i}" if i < n - 1 else "y"
        if op == "Add":
            inits.append(numpy_helper.from_array(np.full((4,), i, np.float32), f"c{i}"))
            nodes.append(helper.make_node("Add", [prev, f"c{i}"], [out], name=f"n{i}"))
        else:
            nodes.append(helper.make_node(op, [prev], [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def concat(n: int) -> bytes:
    """n one-element initializers read by one Concat."""
    inits = [numpy_helper.from_array(np.array([i], np.float32), f"w{i}") for i in range(n)]
    nodes = [helper.make_node("Concat", [f"w{i}" for i in range(n)], ["c"], axis=0, name="cat"),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "concat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def _time(data: bytes, backend: str, size: int) -> tuple[float, float, float]:
    """Seconds of the import (wall clock, and this process's CPU time: steadier on a shared
    machine), and of the imported model's first call."""
    t, c = time.perf_counter(), time.process_time()
    model = onnxport.import_model(data, backend)
    t1, c1 = time.perf_counter(), time.process_time()
    x = np.ones((size,), np.float32)
    if backend == "torch":
        import torch

        model(torch.from_numpy(x))
    else:
        model(x)
    return t1 - t, c1 - c, time.perf_counter() - t1


def _best(runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The fastest wall and CPU time of repeated imports; the first call after the first import."""
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--scales", default="1,2", help="sizes as multiples of N")
    ap.add_argument("--backend", default="torch")
    ap.add_argument("--repeat", type=int, default=3, help="imports per size: the fastest counts")
    args = ap.parse_args()
    n, scales = args.n, [int(k) for k in args.scales.split(",")]
    # graph: (model of size k, its input length, its nodes + initializers)
    cases = {"Relu chain": (lambda k: chain(k, "Relu"), lambda k: 4, lambda k: k),
             "Add chain + inits": (lambda k: chain(k, "Add"), lambda k: 4, lambda k: 2 * k),
             "inits -> Concat": (concat, lambda k: k, lambda k: k + 2)}
    for make, size, _ in cases.values():
        _time(make(3), args.backend, size(3))  # warm-up: registry, first-call imports
    print(f"import into {args.backend}: wall seconds / CPU seconds (CPU ratio to N's); CPU seconds per "
          "10,000 nodes + initializers at N; N's first call (wall seconds)")
    print(f"{'graph':20} " + " ".join(f"{k * n:>20}" for k in scales) + f" {'cpu s/10k':>10} {'1st call':>9}")
    for name, (make, size, units) in cases.items():
        times = [_best([_time(data, args.backend, size(k * n)) for _ in range(args.repeat)])
                 for k in scales for data in [make(k * n)]]
        cells = " ".join(f"{t:6.2f} /{c:6.2f} ({c / times[0][1]:4.2f})" for t, c, _ in times)
        print(f"{name:20} {cells} {times[0][1] / units(n) * 10_000:10.2f} {times[0][2]:9.2f}", flush=True)


if __name__ == "__main__":
    main()
