"""End-to-end demo: the ONNX light models that onnx ships -> PyTorch, checked, then fine-tuned.

For each model: load it, import it into a ``torch.nn.Module``, compare with the shipped
reference output and with onnxruntime, replace the last ``nn.Linear``/``nn.Conv2d`` (the head)
by a fresh 10-class layer and fine-tune it for a few steps on random data.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

import onnxport

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def dummy_inputs(proto: onnx.ModelProto) -> list[np.ndarray]:
    """The inputs onnx's own backend test feeds these models (arange / n)."""
    inits = {i.name for i in proto.graph.initializer}
    out = []
    for x in proto.graph.input:
        if x.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        out.append((np.arange(n).reshape(shape) / n).astype(np.float32))
    return out


_COMPUTE = ("conv", "gemm", "matmul")


def replace_head(model: torch.fx.GraphModule, classes: int) -> tuple[str, list[torch.nn.Parameter]]:
    """Swap the head for a fresh ``classes``-way layer; return its name and its parameters.

    The head is the last Conv/Gemm/MatMul of the graph. When the importer made it a native
    ``nn.Linear``/``nn.Conv2d`` it is replaced; otherwise (its weight is reshaped inside the graph)
    its existing parameters are fine-tuned in place.
    """
    last = None
    for node in model.graph.nodes:
        if node.op == "call_module" and isinstance(model.get_submodule(node.target), (torch.nn.Linear, torch.nn.Conv2d)):
            last = ("module", node)
        elif node.op == "call_function" and any(str(getattr(node.target, "__name__", "")).startswith(c) for c in _COMPUTE):
            last = ("function", node)
    assert last is not None, "no head found"
    kind, node = last
    if kind == "module":
        m = model.get_submodule(node.target)
        if isinstance(m, torch.nn.Linear):
            new = torch.nn.Linear(m.in_features, classes)
        else:
            new = torch.nn.Conv2d(m.in_channels, classes, m.kernel_size, m.stride, m.padding)
        model.set_submodule(node.target, new)
        return f"replaced {node.target}", list(new.parameters())
    params = []
    for arg in node.all_input_nodes:
        stack = [arg]
        while stack:
            a = stack.pop()
            if a.op == "get_attr":
                t = model.get_parameter(a.target) if a.target in dict(model.named_parameters()) else None
                if t is not None:
                    params.append(t)
            elif a.op == "call_function" and not any(str(a.target.__name__).startswith(c) for c in _COMPUTE):
                stack.extend(x for x in a.all_input_nodes if x.op == "get_attr")
    return f"tuned {node.target.__name__}", params


def drop_final_softmax(model: torch.fx.GraphModule) -> None:
    """Train on logits: the graph's last node is a Softmax; return its input instead."""
    out = next(n for n in model.graph.nodes if n.op == "output")
    last = out.args[0]
    if isinstance(last, torch.fx.Node) and str(getattr(last.target, "__name__", "")).startswith("softmax"):
        out.args = (last.args[0],)
        model.graph.eliminate_dead_code()
        model.recompile()


def fine_tune(model: torch.nn.Module, inputs: list[torch.Tensor], params: list[torch.nn.Parameter], steps: int) -> tuple[float, float]:
    for p in model.parameters():
        p.requires_grad_(False)
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=1e-3)
    torch.manual_seed(0)
    batch = [torch.rand_like(x) for x in inputs]
    target = torch.tensor([3])
    model.train()
    drop_final_softmax(model)
    losses = []
    for _ in range(steps):
        logits = model(*batch)
        logits = logits.reshape(logits.shape[0], -1)
        loss = torch.nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses[0], losses[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", nargs="*", default=None, help="light model names (default: all)")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)
    files = sorted(LIGHT.glob("light_*.onnx"))
    if args.models:
        files = [f for f in files if f.stem.removeprefix("light_") in args.models]
    rows = []
    ok = True
    for f in files:
        t0 = time.perf_counter()
        ir_model = onnxport.load(f)
        model = onnxport.import_model(ir_model, backend="torch")
        t_import = time.perf_counter() - t0
        proto = onnx.load(str(f))
        inputs = dummy_inputs(proto)
        ref = numpy_helper.to_array(onnx.load_tensor(str(f).replace(".onnx", "_output_0.pb")))
        with torch.no_grad():
            ours = model(*[torch.from_numpy(x) for x in inputs]).numpy()
        sess = ort.InferenceSession(str(f), providers=["CPUExecutionProvider"])
        feeds = dict(zip([i.name for i in sess.get_inputs()], inputs))
        ort_out = sess.run(None, feeds)[0]
        diff_ref = float(np.abs(ours - ref).max())
        diff_ort = float(np.abs(ours - ort_out).max())
        head, params = replace_head(model, 10)
        first, last = fine_tune(model, [torch.from_numpy(x) for x in inputs], params, args.steps)
        ops = collections.Counter(n.op_type for n in ir_model.graph)
        params = sum(p.numel() for p in model.parameters())
        good = diff_ref < 1e-4 and diff_ort < 1e-4 and last < first
        ok &= good
        rows.append((f.stem.removeprefix("light_"), len(ops), sum(ops.values()), params, diff_ref, diff_ort,
                     first, last, t_import, time.perf_counter() - t0, head, "ok" if good else "FAIL"))
    header = ("model", "op types", "nodes", "params", "|d| ref", "|d| ort", "loss 0", f"loss {args.steps}",
              "import s", "total s", "head", "")
    print(" ".join(f"{h:>11s}" for h in header))
    for r in rows:
        print(f"{r[0]:>11s} {r[1]:>11d} {r[2]:>11d} {r[3]:>11d} {r[4]:>11.2e} {r[5]:>11.2e} {r[6]:>11.4f} "
              f"{r[7]:>11.4f} {r[8]:>11.2f} {r[9]:>11.2f} {r[10]:>16s} {r[11]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
