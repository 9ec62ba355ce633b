"""Import benchmark: ONNX -> TensorFlow with onnxport, against onnxruntime (and onnx2tf where
that package is installed).

For every light model the onnx package ships (inputs as onnx's own test feeds them:
``arange(n) / n``):

- convert: ``onnxport.import_model(..., backend="tensorflow")`` wall time (median of
  ``--import-runs``), and onnx2tf's conversion time where an environment with onnx2tf is given
  (``--onnx2tf-python`` or ``$ONNX2TF_PYTHON``; it runs there as a subprocess,
  ``onnx2tf_worker.py``);
- trace: the first call of the model's ``tf.function`` (trace + graph optimization);
- latency (median of ``--runs`` calls after ``--warmup`` calls): our ``tf.function`` (``serve``,
  weights read from ``tf.Variable``s), our frozen serving function (``model.frozen()``, weights
  as constants) and onnxruntime's CPU provider, timed in alternation (one call of each per round,
  so that a change in the machine's load reaches all three alike), and onnx2tf's converted model
  where it converts (in its own process, after ours);
- the largest difference of our output from onnxruntime's.

Weights: the shipped light models compute theirs in the graph (ConstantOfShape), so the import
folds them to constants, laid out and BatchNormalization-folded once, at import: Conv weights are
graph constants of the traced function (oneDNN caches their packed form), the other large ones
are held in non-trainable ``tf.Variable``s.
``--randomized`` measures the other case, weights as initializers: every float weight drawn at
random (``onnxport_testkit.light.randomized``) and imported as trainable ``tf.Variable``s, whose
layout and folding ``serve`` computes on every call (so that gradients reach them).

Threads: ``--threads 1`` (default) pins the process to one core and gives TensorFlow and
onnxruntime one intra-op and one inter-op thread. The target of the TensorFlow import issue: our
latency at most 1.3x onnxruntime's (geometric mean), convert at least 5x faster than onnx2tf.
Not a pass/fail test::

    .venv/bin/python benchmarks/bench_tf_import.py [--runs 20] [--models squeezenet,resnet50]
        [--randomized [--trainable none]] [--onnx2tf-python /path/to/onnx2tf-env/bin/python [--onnx2tf-timeout 600]]
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
    ap.add_argument("--onnx2tf-python", default=os.environ.get("ONNX2TF_PYTHON", ""),
                    help="the python of an environment with onnx2tf (default: $ONNX2TF_PYTHON; unset: no onnx2tf "
                         "columns)")
    ap.add_argument("--onnx2tf-timeout", type=int, default=600,
                    help="seconds per onnx2tf model (convert and time it); past it the model is reported as timed out")
    ap.add_argument("--trainable", default="auto", choices=("auto", "all", "none"),
                    help="the import's trainable option (none: initializers are constants, as for serving only)")
    ap.add_argument("--randomized", action="store_true",
                    help="weights as initializers drawn at random (trainable variables) instead of the shipped "
                         "ConstantOfShape generators (non-trainable constants)")
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
from onnxport_testkit.light import LIGHT_DIR, light_inputs, randomized  # noqa: E402

if ARGS is not None:
    tf.config.threading.set_intra_op_parallelism_threads(max(1, ARGS.threads))
    tf.config.threading.set_inter_op_parallelism_threads(1)


def alternating_medians(fns: dict[str, Callable[[], Any]], runs: int, warmup: int) -> dict[str, float]:
    """Median wall time of each ``fn()`` (which must block until its result is ready), the
    functions called in turn, one call each per round."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def prepare_ours(proto: onnx.ModelProto, inputs: list[np.ndarray], args) -> dict[str, Any]:
    """Import (timed), trace and freeze; the two calls to time."""
    imports = []
    for _ in range(max(1, args.import_runs)):
        t0 = time.perf_counter()
        model = onnxport.import_model(proto, backend="tensorflow", trainable=args.trainable)
        imports.append(time.perf_counter() - t0)
    xs = [tf.constant(x) for x in inputs]
    t0 = time.perf_counter()
    out = model.serve(*xs).numpy()
    trace_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    frozen = model.frozen()
    freeze_s = time.perf_counter() - t0
    return {"import": statistics.median(imports), "trace": trace_s, "out": out, "freeze": freeze_s,
            "frozen_out": frozen(*xs).numpy(), "serve_fn": lambda: model.serve(*xs).numpy(),
            "frozen_fn": lambda: frozen(*xs).numpy()}


def prepare_ort(proto: onnx.ModelProto, inputs: list[np.ndarray], args) -> dict[str, Any]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, args.threads)
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = dict(zip([i.name for i in sess.get_inputs()], inputs))
    return {"out": sess.run(None, feeds)[0], "run_fn": lambda: sess.run(None, feeds)}


def bench_onnx2tf(proto: onnx.ModelProto, inputs: list[np.ndarray], args) -> dict[str, Any] | str:
    """onnx2tf's convert time, its converted model's latency and output, or why it could not run.

    onnx2tf runs in its own Python environment (``--onnx2tf-python``), one subprocess per model
    (``onnx2tf_worker.py``), with the same thread settings, on a copy of the model written to a
    temporary folder (onnx2tf writes over the file it converts).
    """
    python = args.onnx2tf_python
    if not python:
        return "not measured: no --onnx2tf-python / ONNX2TF_PYTHON (a Python environment with onnx2tf)"
    if not os.path.exists(python):
        return f"not measured: {python} does not exist"
    import json
    import re
    import subprocess
    import tempfile

    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx2tf_worker.py")
    with tempfile.TemporaryDirectory() as tmp:
        feeds, out, path = (os.path.join(tmp, n) for n in ("inputs.npz", "out.npy", "model.onnx"))
        np.savez(feeds, *inputs)
        onnx.save(proto, path)
        cmd = [python, worker, path, feeds, out, "--runs", str(args.runs), "--warmup", str(args.warmup),
               "--threads", str(args.threads)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.onnx2tf_timeout,
                                  env={**os.environ, "PYTHONPATH": ""}, cwd=tmp)
        except subprocess.TimeoutExpired:
            return f"timed out after {args.onnx2tf_timeout} s"
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            err = [ln for ln in proc.stderr.splitlines() if re.match(r"[A-Za-z_.]*(Error|Exception)\b", ln.strip())]
            return f"failed: {err[-1].strip()[:70] if err else 'exit ' + str(proc.returncode)}"
        result = json.loads(lines[-1])
        result["out"] = np.load(out)
    return result


def _gm(xs: list[float]) -> float:
    return float(np.exp(np.mean(np.log(xs))))


def main(args) -> int:
    names = [n for n in args.models.split(",") if n]
    files = [f for f in sorted(LIGHT_DIR.glob("light_*.onnx")) if not names or f.stem.removeprefix("light_") in names]
    if not files:
        print(f"no light models found in {LIGHT_DIR}", file=sys.stderr)
        return 1
    print(f"tensorflow {tf.__version__}, onnxruntime {ort.__version__}, threads={args.threads} "
          f"(cores {sorted(os.sched_getaffinity(0))}), runs={args.runs}")
    print("ours = model.serve (trainable weights and large non-Conv constants as tf.Variables); "
          "frozen = model.frozen() (weights as constants); "
          "o2tf = onnx2tf's Keras model in a tf.function; weights: "
          + (f"random initializers (trainable={args.trainable})" if args.randomized else "the shipped ConstantOfShape generators "
             "(non-trainable constants)"))
    header = (f"{'model':<14}{'import s':>9}{'trace s':>8}{'ours ms':>9}{'frozen ms':>10}{'ort ms':>9}"
              f"{'ours/ort':>9}{'frz/ort':>8}{'o2tf ms':>9}{'o2tf/ort':>9}{'o2tf cvt s':>11}{'cvt x':>7}"
              f"{'max|d|':>9}  note")
    print(header)
    print("-" * len(header))
    ratios, frozen_ratios, o2tf_ratios, convert_ratios, notes = [], [], [], [], set()
    for f in files:
        name = f.stem.removeprefix("light_")
        proto = onnx.load(str(f))
        if args.randomized:
            proto = randomized(proto)
        inputs = light_inputs(proto)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = prepare_ours(proto, inputs, args)
            ref = prepare_ort(proto, inputs, args)
            times = alternating_medians({"latency": ours["serve_fn"], "frozen": ours["frozen_fn"],
                                         "ort": ref["run_fn"]}, args.runs, args.warmup)
        ours.update(times)
        ref["latency"] = times["ort"]
        o2tf = bench_onnx2tf(proto, inputs, args)
        ratio, fratio = ours["latency"] / ref["latency"], ours["frozen"] / ref["latency"]
        ratios.append(ratio)
        frozen_ratios.append(fratio)
        diff = max(float(np.abs(ours["out"] - ref["out"]).max()), float(np.abs(ours["frozen_out"] - ref["out"]).max()))
        note = ""
        if isinstance(o2tf, dict):
            oratio, cratio = o2tf["latency"] / ref["latency"], o2tf["convert"] / ours["import"]
            o2tf_ratios.append(oratio)
            convert_ratios.append(cratio)
            ocol = f"{o2tf['latency'] * 1e3:>9.2f}{oratio:>9.2f}{o2tf['convert']:>11.2f}{cratio:>7.1f}"
            if o2tf["out"].shape == ref["out"].shape:
                note = f"o2tf max|d| {float(np.abs(o2tf['out'] - ref['out']).max()):.1e}"
        else:
            ocol = f"{'-':>9}{'-':>9}{'-':>11}{'-':>7}"
            if o2tf.startswith("not measured"):
                notes.add(f"onnx2tf {o2tf}")
            else:
                note = f"onnx2tf: {o2tf}"
        print(f"{name:<14}{ours['import']:>9.2f}{ours['trace']:>8.2f}{ours['latency'] * 1e3:>9.2f}"
              f"{ours['frozen'] * 1e3:>10.2f}{ref['latency'] * 1e3:>9.2f}{ratio:>9.2f}{fratio:>8.2f}{ocol}"
              f"{diff:>9.1e}  {note}", flush=True)
    print()
    for n in sorted(notes):
        print(n)
    print(f"ours/onnxruntime latency (serve): geometric mean {_gm(ratios):.2f}, worst {max(ratios):.2f}; "
          f"{sum(r <= 1.3 for r in ratios)}/{len(ratios)} models within 1.3x")
    print(f"frozen/onnxruntime latency:       geometric mean {_gm(frozen_ratios):.2f}, worst {max(frozen_ratios):.2f}; "
          f"{sum(r <= 1.3 for r in frozen_ratios)}/{len(frozen_ratios)} models within 1.3x (target: 1.3x)")
    if o2tf_ratios:
        print(f"onnx2tf/onnxruntime latency:      geometric mean {_gm(o2tf_ratios):.2f} over {len(o2tf_ratios)} "
              f"models it converted")
        print(f"onnx2tf convert time / ours:      geometric mean {_gm(convert_ratios):.1f}x, least "
              f"{min(convert_ratios):.1f}x (target: at least 5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
