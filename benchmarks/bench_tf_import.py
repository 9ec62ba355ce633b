"""Import benchmark: ONNX -> TensorFlow with onnxport, against onnxruntime (and onnx2tf where
that package is installed).

For every light model the onnx package ships (inputs as onnx's own test feeds them:
``arange(n) / n``):

- convert: ``onnxport.import_model(..., backend="tensorflow")`` wall time (median of
  ``--import-runs``), and onnx2tf's conversion time where it is installed;
- trace: the first call of the model's ``tf.function`` (trace + graph optimization);
- latency (median of ``--runs`` calls after ``--warmup`` calls): our ``tf.function``,
  onnxruntime's CPU provider, and onnx2tf's converted model where it converts;
- the largest difference of our output from onnxruntime's.

Threads: ``--threads 1`` (default) pins the process to one core and gives TensorFlow and
onnxruntime one intra-op and one inter-op thread. The target of the TensorFlow import issue: our
latency at most 1.3x onnxruntime's (geometric mean). Not a pass/fail test::

    .venv/bin/python benchmarks/bench_tf_import.py [--runs 20] [--models squeezenet,resnet50]
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
    ap.add_argument("--threads", type=int, default=1, help="cores / intra-op threads")
    ap.add_argument("--models", default="", help="comma-separated names (default: all light models)")
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:
    cores = sorted(os.sched_getaffinity(0))[: max(1, ARGS.threads)]
    os.sched_setaffinity(0, cores)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import tensorflow as tf  # noqa: E402

import onnxport  # noqa: E402
from onnxport_testkit.light import LIGHT_DIR, light_inputs  # noqa: E402

if ARGS is not None:
    tf.config.threading.set_intra_op_parallelism_threads(max(1, ARGS.threads))
    tf.config.threading.set_inter_op_parallelism_threads(1)


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


def bench_ours(proto: onnx.ModelProto, inputs: list[np.ndarray], args) -> dict[str, Any]:
    imports = []
    for _ in range(max(1, args.import_runs)):
        t0 = time.perf_counter()
        model = onnxport.import_model(proto, backend="tensorflow")
        imports.append(time.perf_counter() - t0)
    xs = [tf.constant(x) for x in inputs]
    t0 = time.perf_counter()
    out = model.serve(*xs).numpy()
    trace_s = time.perf_counter() - t0
    latency = median_seconds(lambda: model.serve(*xs).numpy(), args.runs, args.warmup)
    return {"import": statistics.median(imports), "trace": trace_s, "latency": latency, "out": out}


def bench_ort(proto: onnx.ModelProto, inputs: list[np.ndarray], args) -> dict[str, Any]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, args.threads)
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = dict(zip([i.name for i in sess.get_inputs()], inputs))
    out = sess.run(None, feeds)[0]
    latency = median_seconds(lambda: sess.run(None, feeds), args.runs, args.warmup)
    return {"latency": latency, "out": out}


def bench_onnx2tf(path, inputs: list[np.ndarray], args) -> dict[str, Any] | str:
    """onnx2tf's converted model, or why it could not run."""
    try:
        import onnx2tf
    except ImportError:
        return "not installed"
    import tempfile

    try:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            keras_model = onnx2tf.convert(input_onnx_file_path=str(path), output_folder_path=tmp,
                                          non_verbose=True, output_signaturedefs=False)
            convert_s = time.perf_counter() - t0
            fn = tf.function(keras_model)
            xs = [tf.constant(np.transpose(x, (0, 2, 3, 1)) if x.ndim == 4 else x) for x in inputs]
            fn(*xs)
            latency = median_seconds(lambda: [o.numpy() for o in tf.nest.flatten(fn(*xs))], args.runs, args.warmup)
    except Exception as exc:  # a third-party converter: report why, keep benchmarking
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:60] if str(exc) else ''}"
    return {"convert": convert_s, "latency": latency}


def main(args) -> int:
    names = [n for n in args.models.split(",") if n]
    files = [f for f in sorted(LIGHT_DIR.glob("light_*.onnx")) if not names or f.stem.removeprefix("light_") in names]
    if not files:
        print(f"no light models found in {LIGHT_DIR}", file=sys.stderr)
        return 1
    print(f"tensorflow {tf.__version__}, onnxruntime {ort.__version__}, threads={args.threads} "
          f"(cores {sorted(os.sched_getaffinity(0))}), runs={args.runs}")
    header = (f"{'model':<14}{'import s':>9}{'trace s':>9}{'ours ms':>9}{'ort ms':>9}{'ours/ort':>9}"
              f"{'o2tf ms':>9}{'o2tf cvt s':>11}{'max|d|':>10}  note")
    print(header)
    print("-" * len(header))
    ratios, convert_ratios = [], []
    for f in files:
        name = f.stem.removeprefix("light_")
        proto = onnx.load(str(f))
        inputs = light_inputs(proto)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = bench_ours(proto, inputs, args)
            ref = bench_ort(proto, inputs, args)
            o2tf = bench_onnx2tf(f, inputs, args)
        ratio = ours["latency"] / ref["latency"]
        ratios.append(ratio)
        diff = float(np.abs(ours["out"] - ref["out"]).max())
        if isinstance(o2tf, dict):
            ocol, note = f"{o2tf['latency'] * 1e3:>9.2f}{o2tf['convert']:>11.2f}", ""
            convert_ratios.append(o2tf["convert"] / ours["import"])
        else:
            ocol, note = f"{'-':>9}{'-':>11}", f"onnx2tf: {o2tf}"
        flag = "" if ratio <= 1.3 else "  > 1.3x"
        print(f"{name:<14}{ours['import']:>9.2f}{ours['trace']:>9.2f}{ours['latency'] * 1e3:>9.2f}"
              f"{ref['latency'] * 1e3:>9.2f}{ratio:>9.2f}{ocol}{diff:>10.1e}  {note}{flag}", flush=True)
    gm = float(np.exp(np.mean(np.log(ratios))))
    print(f"\nours/onnxruntime latency: geometric mean {gm:.2f}, worst {max(ratios):.2f}; "
          f"{sum(r <= 1.3 for r in ratios)}/{len(ratios)} models within the 1.3x target")
    if convert_ratios:
        print(f"onnx2tf convert / ours: geometric mean {float(np.exp(np.mean(np.log(convert_ratios)))):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
