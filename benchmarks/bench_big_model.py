"""A model past protobuf's 2 GB limit: export, save (external data), load, import; time and peak memory.

Builds 8 x Linear(8192, 8192) in torch (2.1 GB of float32 weights), exports it with
``onnxport.export_model``, saves it with ``onnxport.save`` (external data is written
automatically past 2 GB), then imports the file with ``onnxport.import_model`` in a fresh
process. Prints times and peak RSS growth as a multiple of the weights' size. Needs ~6 GB RAM
and ~4.5 GB of disk; run it alone::

    python benchmarks/bench_big_model.py [--layers 8] [--width 8192] [--folder /tmp/big]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

STAGE = r"""
import json, os, sys, time, threading
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
peak = [0]
def watch():
    while True:
        peak[0] = max(peak[0], rss()); time.sleep(0.005)
import torch, onnxport, onnxport_torch  # noqa: F401 - start-up is not charged to the stage
onnxport.get_backend("torch")
stage, folder, layers, width = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
path = os.path.join(folder, "big.onnx")
if stage == "export":
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)]).eval()
    x = torch.randn(1, width)
threading.Thread(target=watch, daemon=True).start()
time.sleep(0.05)
base = rss()
t0 = time.perf_counter()
out = {}
if stage == "export":
    ir_model = onnxport.export_model(model, (x,))
    out["export_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    onnxport.save(ir_model, path)
    out["save_s"] = time.perf_counter() - t1
    with torch.no_grad():
        torch.save(model(x), os.path.join(folder, "expected.pt"))
else:
    module = onnxport.import_model(path)
    out["import_s"] = time.perf_counter() - t0
    time.sleep(0.05)
    out["peak_growth"] = peak[0] - base  # before the reference model below takes its own memory
    x = torch.randn(1, width)
    torch.manual_seed(0)
    ref = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)]).eval()
    with torch.no_grad():
        out["max_abs_diff"] = float((module(torch.ones(1, width)) - ref(torch.ones(1, width))).abs().max())
time.sleep(0.05)
out.setdefault("peak_growth", peak[0] - base)
print(json.dumps(out))
"""


def _stage(stage: str, folder: str, layers: int, width: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", STAGE, stage, folder, str(layers), str(width)],
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{stage} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--width", type=int, default=8192)
    parser.add_argument("--folder", default=None)
    args = parser.parse_args()
    weights = args.layers * (args.width * args.width + args.width) * 4
    folder = args.folder or tempfile.mkdtemp(prefix="onnxport-big-")
    os.makedirs(folder, exist_ok=True)
    try:
        exp = _stage("export", folder, args.layers, args.width)
        files = {f: os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)}
        imp = _stage("import", folder, args.layers, args.width)
        import onnxruntime as ort  # noqa: F401 - checked below only if installed

        print(f"weights: {weights / 2**30:.2f} GiB in {args.layers} x Linear({args.width}, {args.width})")
        print(f"files: {files}")
        print(f"export: {exp['export_s']:.1f} s, peak RSS growth {exp['peak_growth'] / weights:.2f} x weights")
        print(f"save:   {exp['save_s']:.1f} s (external data beside the model)")
        print(f"import: {imp['import_s']:.1f} s, peak RSS growth {imp['peak_growth'] / weights:.2f} x weights")
        print(f"imported vs torch: max |diff| = {imp['max_abs_diff']:.2e}")
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    threading.stack_size()
    t = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - t:.0f} s")
