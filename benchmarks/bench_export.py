"""Export benchmark: onnxport vs its tracer alone vs torch.onnx.export (dynamo=True and dynamo=False).

``tracer`` is ``torch.export.export`` alone, the floor of onnxport's torch exporter; the line
``onnxport/tracer`` prints what the core adds after tracing (walking, building, optimizing,
checking) as a share of the tracer (the target is at most 10%).

For each model: export wall time, node count (Constant nodes counted apart) of the exported graph,
and the onnxruntime latency of that graph (median of N runs, one thread). Prints the ratios
onnxport / torch.onnx, for the default export (BatchNormalization kept, weights = state_dict) and
with ``fold_batchnorm=True`` (Conv+BatchNorm folded, as both torch.onnx exporters do in eval
mode). Not a pass/fail test:

    .venv/bin/python benchmarks/bench_export.py [--runs 20] [--repeat 3] [--models resnet,bert]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
import warnings
from pathlib import Path

import onnx
import onnx_ir as ir
import onnxruntime as ort
import torch
from torch import nn

import onnxport

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.torch.test_export_models import MBConv, TinyResNet, _randomize_bn  # noqa: E402


def _models() -> dict[str, tuple[nn.Module, tuple[torch.Tensor, ...]]]:
    import transformers

    bert = transformers.BertModel(transformers.BertConfig(
        vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=128, attn_implementation="sdpa")).eval()
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128, use_cache=False,
        bos_token_id=0, eos_token_id=0, attn_implementation="eager")).eval()
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True), 2,
                                enable_nested_tensor=False).eval()
    ids = torch.randint(0, 1000, (2, 32))
    return {
        "resnet": (_randomize_bn(TinyResNet()), (torch.randn(2, 3, 64, 64),)),
        "mobilenet": (_randomize_bn(nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), MBConv(16), MBConv(16))), (torch.randn(2, 3, 64, 64),)),
        "encoder": (enc, (torch.randn(2, 32, 64),)),
        "bert": (bert, (ids,)),
        "gpt2": (gpt2, (ids,)),
        "lstm": (nn.LSTM(32, 64, num_layers=2, batch_first=True).eval(), (torch.randn(2, 16, 32),)),
    }


def _onnxport(m, args) -> onnx.ModelProto:
    return ir.serde.serialize_model(onnxport.export_model(m, args))


def _after_tracing(m, args, repeat: int) -> tuple[float, float]:
    """(tracing, the rest) of one onnxport export, the minimum of ``repeat`` runs: the time inside
    ``torch.export.export`` is measured during the same call, so machine noise between runs
    does not enter the share."""
    real = torch.export.export
    inside: list[float] = []

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            inside.append(time.perf_counter() - t)

    runs: list[tuple[float, float]] = []
    torch.export.export = timed
    try:
        for _ in range(repeat):
            inside.clear()
            t = time.perf_counter()
            onnxport.export_model(m, args)
            total = time.perf_counter() - t
            traced = sum(inside)
            runs.append((total - traced, traced))
    finally:
        torch.export.export = real
    rest, traced = min(runs, key=lambda r: r[0] / r[1])
    return traced, rest


def _onnxport_folded(m, args) -> onnx.ModelProto:
    """With ``fold_batchnorm=True``: what both torch.onnx exporters do to Conv+BatchNorm in eval."""
    return ir.serde.serialize_model(onnxport.export_model(m, args, fold_batchnorm=True))


def _tracer(m, args) -> None:
    """``torch.export.export`` alone: what onnxport's exporter starts with."""
    torch.export.export(m, args)


def _torch_onnx(dynamo: bool):
    def run(m, args) -> onnx.ModelProto:
        if dynamo:
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=18, verbose=False)
            return prog.model_proto
        buf = io.BytesIO()
        torch.onnx.export(m, args, buf, dynamo=False, opset_version=18)
        return onnx.load_from_string(buf.getvalue())

    return run


def _latency(proto: onnx.ModelProto, args, runs: int) -> float:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), args)}
    sess.run(None, feeds)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _warm_up(exporters: dict) -> None:
    """One small export per exporter first, so no row pays for first-call imports and caches."""
    m, args = nn.Sequential(nn.Linear(4, 4), nn.ReLU()).eval(), (torch.randn(2, 4),)
    for fn in exporters.values():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            fn(m, args)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--models", default="")
    ap.add_argument("--repeat", type=int, default=3, help="export runs per exporter; the minimum is printed")
    opts = ap.parse_args()
    warnings.filterwarnings("ignore")
    exporters = {"onnxport": _onnxport, "onnxport+fold": _onnxport_folded, "tracer": _tracer,
                 "dynamo": _torch_onnx(True), "torchscript": _torch_onnx(False)}
    import logging

    logging.disable(logging.WARNING)  # torch.onnx's registration warnings
    _warm_up(exporters)
    models = _models()
    chosen = [m for m in opts.models.split(",") if m] or list(models)
    print(f"{'model':10} {'exporter':14} {'export s':>9} {'nodes':>6} {'consts':>6} {'inits':>6} {'ort ms':>8}")
    for name in chosen:
        m, args = models[name]
        res = {}
        for ex_name, fn in exporters.items():
            try:
                dt = float("inf")
                for _ in range(opts.repeat):  # the minimum of a few runs: the machine's noise is one-sided
                    t = time.perf_counter()
                    # torch.onnx prints graphs on failure
                    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                        proto = fn(m, args)
                    dt = min(dt, time.perf_counter() - t)
                if proto is None:  # the tracer alone: a time, no graph
                    res[ex_name] = (dt, 0, 0, float("nan"))
                    print(f"{name:10} {ex_name:14} {dt:9.2f}")
                    continue
                n_const = sum(n.op_type == "Constant" for n in proto.graph.node)
                res[ex_name] = (dt, len(proto.graph.node) - n_const, len(proto.graph.initializer), _latency(proto, args, opts.runs))
                print(f"{name:10} {ex_name:14} {dt:9.2f} {res[ex_name][1]:6d} {n_const:6d} {res[ex_name][2]:6d} {res[ex_name][3]:8.3f}")
            except Exception as exc:  # noqa: BLE001 - a benchmark reports and goes on
                print(f"{name:10} {ex_name:14} failed: {type(exc).__name__}: {str(exc)[:100]}")
        if "onnxport" in res and "tracer" in res:
            traced, rest = _after_tracing(m, args, opts.repeat)
            print(f"{'':10} {'onnxport/tracer':26} export x{res['onnxport'][0] / res['tracer'][0]:.2f}  "
                  f"(in one export: tracing {traced:.3f} s, the core after it {rest:.3f} s = "
                  f"{rest / traced * 100:.0f}% of the tracer)")
        for mine in ("onnxport", "onnxport+fold"):
            if mine not in res:
                continue
            ours = res[mine]
            for other in ("dynamo", "torchscript"):
                if other in res:
                    o = res[other]
                    print(f"{'':10} {mine + '/' + other:26} export x{ours[0] / o[0]:.2f}  nodes x{ours[1] / max(o[1], 1):.2f}"
                          f"  ort x{ours[3] / o[3]:.2f}")


if __name__ == "__main__":
    main()
