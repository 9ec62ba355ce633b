"""Import peak memory on real-size models: peak RSS growth during ``import_model`` of a file, x weights.

Builds three models with random weights in torch (a ResNet-50, a VGG-11 and a ViT-B/16, the
torchvision layouts written out here), exports each with ``onnxport.export_model`` and saves it
as one ``.onnx`` file. Each file is then imported in a fresh process by
``onnxport.import_model(path, backend)`` (and, for comparison, opened by an onnxruntime
``InferenceSession``); the process's peak RSS (``VmHWM``, reset just before) minus its RSS before
the import is printed as a multiple of the weights' bytes: the median of ``--runs`` processes.

The baseline is the same for every backend and for onnxruntime: the framework imported and
initialised by one import of a tiny unrelated model (``tiny``: a few hundred weights), so that
one-time runtime start-up (TensorFlow's eager context and op kernels, JAX's backend, registries,
first-call imports) is outside the measurement and the figure is the model's own cost. The
allocator's state still counts: memory freed by the warm-up is reused, and a process that has
already freed a bigger model shows less. Not a pass/fail test::

    python benchmarks/bench_import_memory.py [--models resnet50,vgg11,vit_b_16] [--backends torch]
        [--folder /tmp/onnxport-mem]   # keeps the exported files between runs
        [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

MEASURE = r"""
import gc, json, sys, time
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
kind, path = sys.argv[1], sys.argv[2]
if kind == "onnxruntime":
    import onnxruntime as ort
    ort.InferenceSession(sys.argv[3], providers=["CPUExecutionProvider"])  # warm-up, as below
    load = lambda: ort.InferenceSession(path, providers=["CPUExecutionProvider"])
else:
    import onnxport
    onnxport.import_model(sys.argv[3], kind)  # warm-up (a tiny model): registry, first-call imports
    load = lambda: onnxport.import_model(path, kind)
gc.collect()
base = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")  # resets VmHWM (the peak) to the current RSS
t = time.perf_counter()
obj = load()
seconds = time.perf_counter() - t
print(json.dumps({"peak_growth": status("VmHWM") - base, "after_growth": status("VmRSS") - base,
                  "seconds": seconds}))
"""


def resnet50():
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, cin: int, width: int, stride: int):
            super().__init__()
            cout = width * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else None)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = torch.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    layers, cin = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)], 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers), torch.randn(1, 3, 224, 224)


def vgg11():
    import torch
    from torch import nn

    layers, cin = [], 3
    for c in (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"):
        if c == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(cin, c, 3, padding=1), nn.ReLU()]
            cin = c
    layers += [nn.AdaptiveAvgPool2d(7), nn.Flatten(), nn.Linear(512 * 49, 4096), nn.ReLU(), nn.Dropout(),
               nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(), nn.Linear(4096, 1000)]
    return nn.Sequential(*layers), torch.randn(1, 3, 224, 224)


def vit_b_16():
    import torch
    from torch import nn

    dim, heads, depth = 768, 12, 12

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def forward(self, x):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).reshape(b, n, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
            att = torch.softmax(q @ k.transpose(-2, -1) * (dim // heads) ** -0.5, dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, n, dim))
            return x + self.mlp(self.ln2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, 16, 16)
            self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
            self.pos = nn.Parameter(torch.randn(1, 197, dim) * 0.02)
            self.blocks = nn.Sequential(*[Block() for _ in range(depth)])
            self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, 1000)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
            return self.head(self.ln(self.blocks(x))[:, 0])

    return ViT(), torch.randn(1, 3, 224, 224)


def tiny():
    """The warm-up model (small, so that the allocator keeps no model-sized free memory)."""
    import torch
    from torch import nn

    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.LayerNorm(64),
                         nn.Linear(64, 2), nn.GELU()), torch.randn(1, 3, 6, 6)


MODELS = {"resnet50": resnet50, "vgg11": vgg11, "vit_b_16": vit_b_16}
BUILDERS = {**MODELS, "tiny": tiny}


def build(name: str, folder: str) -> str:
    """The exported file of model ``name`` in ``folder`` (built once)."""
    path = os.path.join(folder, f"{name}.onnx")
    if not os.path.exists(path):
        import torch

        import onnxport

        torch.manual_seed(0)
        model, x = BUILDERS[name]()
        onnxport.save(onnxport.export_model(model.eval(), (x,)), path + ".tmp")
        os.replace(path + ".tmp", path)
    return path


def weight_bytes(path: str) -> int:
    import onnxport
    from onnxport.ir.io import _tensor_bytes

    return _tensor_bytes(onnxport.load(path))


def measure(kind: str, path: str, warm: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", MEASURE, kind, path, warm], capture_output=True, text=True,
                          check=False)
    if proc.returncode:
        raise SystemExit(f"{kind} on {path} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--backends", default="torch")
    ap.add_argument("--folder", default=None)
    ap.add_argument("--runs", type=int, default=1, help="fresh processes per cell (the median is printed)")
    args = ap.parse_args()
    folder = args.folder or tempfile.mkdtemp(prefix="onnxport-mem-")
    os.makedirs(folder, exist_ok=True)
    warm = build("tiny", folder)
    kinds = [k for k in args.backends.split(",") if k] + ["onnxruntime"]
    print(f"{'model':10} {'weights MB':>10} " + " ".join(f"{k + ' peak/w':>18} {'s':>6}" for k in kinds))
    for name in args.models.split(","):
        path = build(name, folder)
        w = weight_bytes(path)
        cells = []
        for kind in kinds:
            runs = sorted((measure(kind, path, warm) for _ in range(max(1, args.runs))),
                          key=lambda r: r["peak_growth"])
            r = runs[len(runs) // 2]
            cells.append(f"{r['peak_growth'] / w:18.2f} {r['seconds']:6.1f}")
        print(f"{name:10} {w / 2**20:10.1f} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
