"""End-to-end demo: ONNX models -> PyTorch, checked against references, then fine-tuned.

1. Every light model that the onnx package ships (AlexNet, DenseNet-121, Inception v1/v2,
   ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512) is loaded, imported into a
   ``torch.nn.Module`` and compared with its shipped reference output and with onnxruntime.
2. A small ResNet built here (random weights) is exported with ``torch.onnx.export``, imported,
   its head (``nn.Linear``) replaced by a fresh 4-class layer, and fine-tuned on random data.
3. A torch CNN goes through ONNX into JAX, and from JAX into TensorFlow.

It needs what the README's Use section installs: the core with onnxruntime and the three backends.
"""

from __future__ import annotations

import argparse
import collections
import io
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper
from torch import nn

import onnxport

warnings.filterwarnings("ignore", category=DeprecationWarning)

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def light_models() -> dict[str, Path]:
    """The light zoo models the onnx package ships: name -> ``light_<name>.onnx``."""
    return {p.stem.removeprefix("light_"): p for p in sorted(LIGHT_DIR.glob("light_*.onnx"))}


def light_inputs(proto: onnx.ModelProto) -> list[np.ndarray]:
    """The inputs onnx's own test feeds a light model (its shipped output is for these)."""
    inits = {i.name for i in proto.graph.initializer}
    shapes = [tuple(d.dim_value or 1 for d in x.type.tensor_type.shape.dim)
              for x in proto.graph.input if x.name not in inits]
    return [(np.arange(int(np.prod(s))).reshape(s) / int(np.prod(s))).astype(np.float32) for s in shapes]


def light_reference(path: Path) -> np.ndarray:
    """The shipped reference output of a light model."""
    return numpy_helper.to_array(onnx.load_tensor(str(path).replace(".onnx", "_output_0.pb")))


def check_light_models(names: list[str] | None) -> tuple[list[tuple], bool]:
    rows, ok = [], True
    for name, f in light_models().items():
        if names and name not in names:
            continue
        t0 = time.perf_counter()
        ir_model = onnxport.load(f)
        model = onnxport.import_model(ir_model, backend="torch")
        seconds = time.perf_counter() - t0
        inputs = light_inputs(onnx.load(str(f)))
        with torch.no_grad():
            ours = model(*[torch.from_numpy(x) for x in inputs]).numpy()
        ref = light_reference(f)
        sess = ort.InferenceSession(str(f), providers=["CPUExecutionProvider"])
        expected = sess.run(None, dict(zip([i.name for i in sess.get_inputs()], inputs)))[0]
        d_ref, d_ort = float(np.abs(ours - ref).max()), float(np.abs(ours - expected).max())
        ops = collections.Counter(n.op_type for n in ir_model.graph)
        params = sum(p.numel() for p in model.parameters())
        good = d_ref < 1e-4 and d_ort < 1e-4
        ok &= good
        rows.append((name, len(ops), sum(ops.values()), params, d_ref, d_ort, seconds, "ok" if good else "FAIL"))
    return rows, ok


class Block(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class SmallResNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.layer1 = nn.Sequential(Block(16), Block(16))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layer1(torch.relu(self.stem(x)))
        return self.fc(x.mean(dim=(2, 3)))


def fine_tune_resnet(steps: int) -> tuple[tuple, bool]:
    torch.manual_seed(0)
    native = SmallResNet().eval()
    buf = io.BytesIO()
    torch.onnx.export(native, (torch.randn(1, 3, 32, 32),), buf, dynamo=False, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    t0 = time.perf_counter()
    model = onnxport.import_model(buf.getvalue(), backend="torch")
    seconds = time.perf_counter() - t0
    x = torch.randn(32, 3, 32, 32)
    with torch.no_grad():
        diff = float((model(x) - native(x)).abs().max())
    model.fc = nn.Linear(16, 4)  # a native nn.Linear, replaced like in any torch model
    y = torch.randint(0, 4, (32,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    losses = []
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    good = diff < 1e-4 and losses[-1] < losses[0]
    return ("resnet(torch.onnx)", diff, losses[0], losses[-1], steps, seconds, "ok" if good else "FAIL"), good


def exchange_round_trip() -> tuple[tuple, bool] | None:
    """A torch CNN -> JAX -> TensorFlow through ONNX, each hop checked against the torch output;
    None when the JAX or TensorFlow backend is not installed."""
    import onnxport

    if not {"jax", "tensorflow"} <= set(onnxport.backends()):
        return None
    import jax.numpy as jnp

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 4 * 4, 5)).eval()
    x = torch.randn(2, 3, 8, 8)
    start = time.perf_counter()
    with torch.no_grad():
        ref = model(x).numpy()
    jax_model = onnxport.convert(model, to="jax", example_inputs=(x,))
    y_jax = np.asarray(jax_model(x.numpy()))
    tf_model = onnxport.convert(jax_model, to="tensorflow", example_inputs=(jnp.asarray(x.numpy()),))
    y_tf = np.asarray(tf_model(x.numpy()))
    seconds = time.perf_counter() - start
    d_jax, d_tf = float(np.abs(y_jax - ref).max()), float(np.abs(y_tf - ref).max())
    good = d_jax < 1e-4 and d_tf < 1e-4
    return ("torch -> jax -> tensorflow", d_jax, d_tf, seconds, "ok" if good else "FAIL"), good


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=None, help="light model names (default: all)")
    parser.add_argument("--steps", type=int, default=30, help="fine-tuning steps")
    args = parser.parse_args(argv)

    rows, ok = check_light_models(args.models)
    print("ONNX light models -> torch (reference: shipped output and onnxruntime)")
    print(f"{'model':>14} {'op types':>9} {'nodes':>6} {'params':>10} {'max|d| ref':>11} {'max|d| ort':>11} {'import s':>9}")
    for r in rows:
        print(f"{r[0]:>14} {r[1]:>9} {r[2]:>6} {r[3]:>10} {r[4]:>11.2e} {r[5]:>11.2e} {r[6]:>9.2f}  {r[7]}")

    row, good = fine_tune_resnet(args.steps)
    print("\nfine-tuning: head replaced by a 4-class nn.Linear, Adam on random data")
    print(f"{'model':>20} {'max|d| torch':>13} {'loss first':>11} {'loss last':>10} {'steps':>6} {'import s':>9}")
    print(f"{row[0]:>20} {row[1]:>13.2e} {row[2]:>11.4f} {row[3]:>10.4f} {row[4]:>6} {row[5]:>9.2f}  {row[6]}")
    trip = exchange_round_trip()
    if trip is None:
        print("\nexchange: the jax and tensorflow backends are not installed (pip install onnxport-jax onnxport-tensorflow)")
    else:
        row, trip_ok = trip
        good = good and trip_ok
        print("\nexchange: a torch CNN through ONNX into JAX, then from JAX into TensorFlow")
        print(f"{'route':>28} {'max|d| jax':>11} {'max|d| tf':>10} {'seconds':>8}")
        print(f"{row[0]:>28} {row[1]:>11.2e} {row[2]:>10.2e} {row[3]:>8.2f}  {row[4]}")
    return 0 if ok and good else 1


if __name__ == "__main__":
    sys.exit(main())
