"""Graph-scale benchmark: import time of long graphs into torch, against their size.

Chains of N ``Relu`` nodes, of N ``Add`` nodes each reading its own initializer, and N one-element
initializers read by one ``Concat``: the import time (``onnxport.import_model``, one run after a
warm-up) of N and 2N, and the ratio, which is 2.0 for an import linear in nodes + initializers.
Not a pass/fail test::

    .venv/bin/python benchmarks/bench_graph_scale.py [--n 10000]
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


def _time(data: bytes) -> float:
    t = time.perf_counter()
    onnxport.import_model(data, "torch")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    n = ap.parse_args().n
    cases = {"Relu chain": lambda k: chain(k, "Relu"), "Add chain + inits": lambda k: chain(k, "Add"),
             "inits -> Concat": concat}
    for make in cases.values():
        _time(make(3))  # warm-up: registry, first-call imports
    print(f"{'graph':20} {'N':>7} {'s':>8} {'2N':>7} {'s':>8} {'ratio':>6} {'s per 10k':>10}")
    for name, make in cases.items():
        t1, t2 = _time(make(n)), _time(make(2 * n))
        print(f"{name:20} {n:7d} {t1:8.2f} {2 * n:7d} {t2:8.2f} {t2 / t1:6.2f} {t1 / n * 10_000:10.2f}")


if __name__ == "__main__":
    main()
