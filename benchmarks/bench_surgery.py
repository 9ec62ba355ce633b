"""Pruning benchmark: parameters and onnxruntime latency before and after a 30% per-layer prune.

Models are built here with random weights: a ResNet-50 layout (bottleneck blocks 3-4-6-3, widths
64..2048) and a MobileNetV2 layout (inverted residuals, depthwise convolutions), exported with
torch.onnx (batch norms folded, as an eval-mode export does). For each: the float parameter count,
the median onnxruntime latency (one thread), the time ``prune_channels`` took, and the ratios.
Not a pass/fail test:

    .venv/bin/python benchmarks/bench_surgery.py [--fraction 0.3] [--runs 20] [--size 128]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
import warnings

import numpy as np
import onnx_ir as ir
import onnxruntime as ort
import torch
from torch import nn

from onnxport.edit.surgery import prune_channels, size_groups


class Bottleneck(nn.Module):
    def __init__(self, cin: int, mid: int, stride: int):
        super().__init__()
        cout = mid * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))


def resnet50() -> nn.Module:
    layers: list[nn.Module] = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                               nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, (mid, n) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        for k in range(n):
            layers.append(Bottleneck(cin, mid, 2 if (k == 0 and i > 0) else 1))
            cin = mid * 4
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000))


class Inverted(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, t: int):
        super().__init__()
        hid = cin * t
        parts: list[nn.Module] = []
        if t != 1:
            parts += [nn.Conv2d(cin, hid, 1, bias=False), nn.BatchNorm2d(hid), nn.ReLU6()]
        parts += [nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False), nn.BatchNorm2d(hid), nn.ReLU6(),
                  nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*parts)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.res else self.body(x)


def mobilenet_v2() -> nn.Module:
    layers: list[nn.Module] = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)):
        for k in range(n):
            layers.append(Inverted(cin, c, s if k == 0 else 1, t))
            cin = c
    layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6(),
               nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


def export(net: nn.Module, size: int) -> bytes:
    torch.manual_seed(0)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_var.uniform_(0.5, 2.0)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net.eval(), (torch.randn(1, 3, size, size),), buf, dynamo=False,
                          input_names=["x"], output_names=["y"], opset_version=17)
    return buf.getvalue()


def latencies(models: list[bytes], x: np.ndarray, runs: int) -> list[float]:
    """Median latency (ms) of each model; runs alternate between models so load drift hits all alike."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sessions = [ort.InferenceSession(m, opts, providers=["CPUExecutionProvider"]) for m in models]
    times: list[list[float]] = [[] for _ in sessions]
    for sess in sessions:
        sess.run(None, {"x": x})
    for _ in range(runs):
        for sess, ts in zip(sessions, times):
            t = time.perf_counter()
            sess.run(None, {"x": x})
            ts.append(time.perf_counter() - t)
    return [statistics.median(ts) * 1e3 for ts in times]


def params(model: bytes) -> int:
    m = ir.serde.deserialize_model(__import__("onnx").load_from_string(model))
    return sum(int(v.const_value.size) for v in m.graph.initializers.values()
               if v.const_value is not None and v.dtype is not None and v.dtype.is_floating_point())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fraction", type=float, default=0.3)
    ap.add_argument("--per", choices=["layer", "global"], default="layer")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--size", type=int, default=128, help="input height and width")
    ap.add_argument("--multiple-of", type=int, default=1, help="keep channel counts a multiple of this")
    args = ap.parse_args()
    x = np.random.default_rng(0).standard_normal((1, 3, args.size, args.size)).astype(np.float32)
    print(f"{args.fraction:.0%} per-{args.per} prune (channel counts multiple of {args.multiple_of}), input 1x3x{args.size}x{args.size}, onnxruntime 1 thread, "
          f"median of {args.runs} alternating runs")
    print(f"{'model':12s} {'groups':>11s} {'params before':>14s} {'after':>12s} {'ratio':>6s} "
          f"{'ms before':>10s} {'after':>8s} {'ratio':>6s} {'prune s':>8s}")
    for name, build in (("resnet50", resnet50), ("mobilenetv2", mobilenet_v2)):
        model = export(build(), args.size)
        t = time.perf_counter()
        groups = size_groups(model)
        pruned = ir.serde.serialize_model(prune_channels(model, fraction=args.fraction, per=args.per,
                                                          multiple_of=args.multiple_of))
        took = time.perf_counter() - t
        pruned_bytes = pruned.SerializeToString()
        free = sum(1 for g in groups if g.prunable)
        p0, p1 = params(model), params(pruned_bytes)
        l0, l1 = latencies([model, pruned_bytes], x, args.runs)
        print(f"{name:12s} {free:4d}/{len(groups):<6d} {p0:14,d} {p1:12,d} {p1 / p0:6.2f} "
              f"{l0:10.2f} {l1:8.2f} {l1 / l0:6.2f} {took:8.1f}")


if __name__ == "__main__":
    main()
