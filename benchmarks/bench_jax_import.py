"""Import benchmark: ONNX -> JAX with onnxport, against onnxruntime and jaxonnxruntime.

For every light model the onnx package ships (``onnx/backend/test/data/light``, inputs as in
``examples/demo.py``: ``arange(n) / n``):

- import: ``onnxport.import_model(..., backend="jax")`` wall time (median of ``--import-runs``);
- compile: the first call of ``model.jit()`` (trace + XLA compile);
- latency (median of ``--runs`` calls after ``--warmup`` calls, ``block_until_ready``): our jitted
  ``JaxModel``, onnxruntime's CPU provider, and jaxonnxruntime's jitted function where that
  package is installed and converts the model;
- the largest difference of our output from onnxruntime's.

Threads: ``--threads 1`` (default) pins the process to one core, runs onnxruntime with
``intra_op_num_threads=1`` and XLA without its multi-threaded Eigen pool; ``--threads N`` pins to N
cores and gives onnxruntime N intra-op threads (XLA uses what the process may run on). The target
of the JAX import issue: our jitted latency at most 1.2x onnxruntime's. Not a pass/fail test::

    .venv/bin/python benchmarks/bench_jax_import.py [--runs 20] [--models squeezenet,resnet50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="timed calls per runtime (median)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls after the first")
    ap.add_argument("--import-runs", type=int, default=3, help="imports timed per model (median)")
    ap.add_argument("--threads", type=int, default=1, help="cores / onnxruntime intra-op threads")
    ap.add_argument("--models", default="", help="comma-separated names (default: all light models)")
    ap.add_argument("--no-jaxort", action="store_true", help="skip jaxonnxruntime")
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:
    # thread settings must be fixed before jax (XLA) starts
    cores = sorted(os.sched_getaffinity(0))[: max(1, ARGS.threads)]
    os.sched_setaffinity(0, cores)
    if ARGS.threads == 1:
        # (every token must be an --xla flag: one that is not makes XLA drop the whole variable)
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"

import jax  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

import onnxport  # noqa: E402
from onnxport_testkit.light import LIGHT_DIR, light_inputs  # noqa: E402

LIGHT = LIGHT_DIR


def dummy_inputs(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The graph inputs that are not initializers, filled as onnx's own test does (as the demo)."""
    inits = {i.name for i in proto.graph.initializer}
    names = [x.name for x in proto.graph.input if x.name not in inits]
    return dict(zip(names, light_inputs(proto)))


def median_seconds(fn: Callable[[], Any], runs: int, warmup: int) -> float:
    """Median wall time of ``fn()`` (which must block until its result is ready)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_ours(proto: onnx.ModelProto, feeds: dict[str, np.ndarray], args) -> dict[str, Any]:
    imports = []
    for _ in range(max(1, args.import_runs)):
        t0 = time.perf_counter()
        model = onnxport.import_model(proto, backend="jax")
        imports.append(time.perf_counter() - t0)
    f = model.jit()
    xs = [jax.device_put(feeds[n]) for n in model.input_names]
    params = model.params
    t0 = time.perf_counter()
    out = jax.block_until_ready(f(params, *xs))
    compile_s = time.perf_counter() - t0
    latency = median_seconds(lambda: jax.block_until_ready(f(params, *xs)), args.runs, args.warmup)
    first = out[0] if isinstance(out, tuple) else out
    return {"import": statistics.median(imports), "compile": compile_s, "latency": latency,
            "out": np.asarray(first)}


def bench_ort(proto: onnx.ModelProto, feeds: dict[str, np.ndarray], args) -> dict[str, Any]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, args.threads)
    so.inter_op_num_threads = 1
    t0 = time.perf_counter()
    sess = ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    session_s = time.perf_counter() - t0
    out = sess.run(None, feeds)[0]
    latency = median_seconds(lambda: sess.run(None, feeds), args.runs, args.warmup)
    return {"session": session_s, "latency": latency, "out": out}


def bench_jaxort(proto: onnx.ModelProto, feeds: dict[str, np.ndarray], args) -> dict[str, Any] | str:
    """jaxonnxruntime's jitted function, or why it could not run."""
    try:
        from jaxonnxruntime import call_onnx
    except ImportError:
        return "not installed"
    try:
        t0 = time.perf_counter()
        fn, params = call_onnx.call_onnx_model(proto, feeds)
        import_s = time.perf_counter() - t0
        jitted = jax.jit(fn)
        xs = {k: jax.device_put(v) for k, v in feeds.items()}
        jax.block_until_ready(jitted(params, xs))
        latency = median_seconds(lambda: jax.block_until_ready(jitted(params, xs)), args.runs, args.warmup)
    except Exception as exc:  # a third-party converter: report why, keep benchmarking
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:60] if str(exc) else ''}"
    return {"import": import_s, "latency": latency}


def main(args) -> int:
    names = [n for n in args.models.split(",") if n]
    files = [f for f in sorted(LIGHT.glob("light_*.onnx")) if not names or f.stem.removeprefix("light_") in names]
    if not files:
        print(f"no light models found in {LIGHT}", file=sys.stderr)
        return 1
    print(f"jax {jax.__version__} ({jax.default_backend()}), onnxruntime {ort.__version__}, "
          f"threads={args.threads} (cores {sorted(os.sched_getaffinity(0))}), runs={args.runs}")
    header = (f"{'model':<14}{'import s':>9}{'compile s':>10}{'ours ms':>9}{'ort ms':>9}{'ours/ort':>9}"
              f"{'jaxort ms':>10}{'jort/ort':>9}{'max|d|':>10}  note")
    print(header)
    print("-" * len(header))
    ratios = []
    for f in files:
        name = f.stem.removeprefix("light_")
        proto = onnx.load(str(f))
        feeds = dummy_inputs(proto)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = bench_ours(proto, feeds, args)
            ref = bench_ort(proto, feeds, args)
            jort = "skipped" if args.no_jaxort else bench_jaxort(proto, feeds, args)
        ratio = ours["latency"] / ref["latency"]
        ratios.append(ratio)
        diff = float(np.abs(ours["out"] - ref["out"]).max())
        if isinstance(jort, dict):
            jcol = f"{jort['latency'] * 1e3:>10.2f}{jort['latency'] / ref['latency']:>9.2f}"
            note = ""
        else:
            jcol, note = f"{'-':>10}{'-':>9}", f"jaxonnxruntime: {jort}"
        flag = "" if ratio <= 1.2 else "  > 1.2x"
        print(f"{name:<14}{ours['import']:>9.2f}{ours['compile']:>10.2f}{ours['latency'] * 1e3:>9.2f}"
              f"{ref['latency'] * 1e3:>9.2f}{ratio:>9.2f}{jcol}{diff:>10.1e}  {note}{flag}", flush=True)
    gm = float(np.exp(np.mean(np.log(ratios))))
    print(f"\nours/onnxruntime latency: geometric mean {gm:.2f}, worst {max(ratios):.2f}; "
          f"{sum(r <= 1.2 for r in ratios)}/{len(ratios)} models within the 1.2x target")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
