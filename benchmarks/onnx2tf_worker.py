"""Measures onnx2tf on one model, in the Python environment where onnx2tf is installed.

Run by ``bench_tf_import.py`` (``--onnx2tf-python``) as a subprocess, because onnx2tf's
dependencies (tf_keras, onnx_graphsurgeon, ...) live in their own environment. Imports neither
onnxport nor onnxruntime. Reads the model and its NCHW inputs (an ``.npz``), converts with
``onnx2tf.convert`` (timed; onnx2tf first simplifies a copy of the model with ``onnxsim``
where that is installed beside it), calls the converted Keras model inside a ``tf.function`` with NHWC
inputs (the layout onnx2tf gives 4-D inputs), and writes one JSON line: convert seconds, median
latency, and the first output (``.npy``, as onnx2tf returns it) for the caller to compare::

    python onnx2tf_worker.py MODEL.onnx INPUTS.npz OUT.npy --runs 20 --warmup 3 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("inputs")
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: max(1, args.threads)])
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(max(1, args.threads))
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import onnx2tf
    import onnx2tf.onnx2tf as o2tf_main

    # onnx2tf downloads sample images for its own accuracy check whenever the inputs look like
    # images; this benchmark runs offline, so it gets a fixed local sample of that shape instead
    sample = np.random.default_rng(0).random((20, 128, 128, 3), dtype=np.float32)
    o2tf_main.download_test_image_data = lambda: sample

    feeds = np.load(args.inputs)
    inputs = [feeds[f"arr_{i}"] for i in range(len(feeds.files))]
    # onnx2tf simplifies the model with the ``onnxsim`` command of its environment, writing the
    # result over the file it was given: give it a copy, and that environment's commands
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        shutil.copyfile(args.model, path)
        t0 = time.perf_counter()
        if shutil.which("onnxsim"):  # onnx2tf's own simplify pass does not reach the graph it converts
            subprocess.run(["onnxsim", path, path], check=True, capture_output=True)
        model = onnx2tf.convert(input_onnx_file_path=path, output_folder_path=os.path.join(tmp, "out"),
                                non_verbose=os.environ.get("O2TF_VERBOSE") is None)
        convert_s = time.perf_counter() - t0
    fn = tf.function(model)
    xs = [tf.constant(np.transpose(x, (0, 2, 3, 1)) if x.ndim == 4 else x) for x in inputs]

    def call():
        return [o.numpy() for o in tf.nest.flatten(fn(*xs))]

    out = call()
    for _ in range(args.warmup):
        call()
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    np.save(args.out, out[0])
    print(json.dumps({"convert": convert_s, "latency": statistics.median(times)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
