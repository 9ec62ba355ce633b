"""The framework-free part of an import, stage by stage: CPU seconds of parsing and checking the
proto (``io.load_proto``), building the IR model (``deserialize``) and ``driver.prepare`` (of which
shape inference), on the graphs of :mod:`bench_graph_scale`. Each figure is the least of
``--repeats`` runs (this process's CPU time, cyclic GC paused as ``import_model`` does; no
profiler, which would inflate the Python-heavy stages). Not a pass/fail test::

    .venv/bin/python benchmarks/bench_import_core.py [--n 10000] [--repeats 7] [--backend torch]

Run it on two checkouts (``PYTHONPATH=<other>/core``) to compare them.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import onnx_ir as ir
from bench_graph_scale import chain, concat

import onnxport
from onnxport.importing import plan as driver
from onnxport.ir import io as _io
from onnxport.plugin.discovery import registry

#: what io.load deserializes with (onnx-ir's own on a checkout from before the short path)
_deserialize = getattr(_io, "_deserialize", ir.serde)

STAGES = ("load_proto", "deserialize", "prepare", "infer_shapes")


def _timed(owner: Any, name: str, key: str, spent: dict[str, float]) -> Callable[[], None]:
    """Wrap ``owner.name`` to add its CPU seconds to ``spent[key]``; returns the undo."""
    fn = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.process_time() - start

    setattr(owner, name, wrapper)
    return lambda: setattr(owner, name, fn)


def measure(data: bytes, backend: str, repeats: int) -> dict[str, float]:
    """Least CPU seconds of each stage and of the whole core part over ``repeats`` imports of ``data``."""
    spent: dict[str, float] = {}
    undo = [_timed(_io, "load_proto", "load_proto", spent), _timed(_deserialize, "deserialize_model", "deserialize", spent),
            _timed(driver, "prepare", "prepare", spent), _timed(driver, "infer_shapes", "infer_shapes", spent)]
    best: dict[str, float] = {}
    reg = registry()
    try:
        for _ in range(repeats):
            spent.clear()
            gc.disable()
            start = time.process_time()
            driver.prepare(_io.load(data, in_place=True, keep_source=True), backend, reg)
            spent["core"] = time.process_time() - start
            gc.enable()
            for key, value in spent.items():
                best[key] = min(best.get(key, value), value)
    finally:
        gc.enable()
        for u in undo:
            u()
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--backend", default="torch", help="whose primitives check_supported asks for")
    args = ap.parse_args()
    onnxport.get_backend(args.backend)
    cases = {"Relu chain": chain(args.n, "Relu"), "Add chain + inits": chain(args.n, "Add"),
             "inits -> Concat": concat(args.n)}
    print(f"core of an import of {args.n} nodes/initializers: CPU seconds, least of {args.repeats} "
          f"({onnxport.__file__})")
    print(f"{'graph':20} " + " ".join(f"{k:>13}" for k in (*STAGES, "core")))
    for name, data in cases.items():
        best = measure(data, args.backend, args.repeats)
        print(f"{name:20} " + " ".join(f"{best.get(k, float('nan')):13.3f}" for k in (*STAGES, "core")), flush=True)


if __name__ == "__main__":
    main()
