"""Import benchmark: ONNX -> torch with onnxport, against onnxruntime, native torch and onnx2torch.

For each architecture of ``tests/torch/test_real_models.py`` (exported once with torch.onnx):

- conversion: ``onnxport.import_model`` wall time (median), next to onnxruntime's session creation
  and onnx2torch's ``convert`` where that package is installed and converts the model;
- inference latency (median of N runs, one thread everywhere): the imported module, onnxruntime,
  the source architecture run natively in torch, and onnx2torch's module;
- peak resident memory added while importing (sampled from /proc) and the Python-heap peak
  (tracemalloc), each next to the size of the model's weights.

Prints one table and the ratios; not a pass/fail test::

    .venv/bin/python benchmarks/bench_torch_import.py [--runs 30] [--models resnet,bert] [--exporters torchscript,dynamo]

The default set is the issue-3 target: BERT and GPT-2 (small and medium), a ResNet-style and a
MobileNet-style CNN; ``ours/native`` should stay within 1.05.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import onnxruntime as ort
import torch

import onnxport

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.torch.test_real_models import (  # noqa: E402
    CASES,
    BasicBlock,
    Case,
    _image,
    _randomize,
    _tokens,
)

_PAGE = os.sysconf("SC_PAGE_SIZE")


class WideResNet(torch.nn.Module):
    """ResNet-18's stages at half width (about 2.8 M parameters), for weight-bound numbers."""

    def __init__(self) -> None:
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, 32, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        chans = [32, 64, 128, 256]
        layers, cin = [], 32
        for i, c in enumerate(chans):
            layers.append(nn.Sequential(BasicBlock(cin, c, 1 if i == 0 else 2), BasicBlock(c, c, 1)))
            cin = c
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(256, 100)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class MediumBert(torch.nn.Module):
    """BERT with 4 layers of width 256 and a 8000-word vocabulary (about 5 M parameters)."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        self.bert = BertModel(BertConfig(vocab_size=8000, hidden_size=256, num_hidden_layers=4,
                                         num_attention_heads=4, intermediate_size=1024,
                                         max_position_embeddings=128, attn_implementation="eager"))

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


BENCH_CASES = dict(CASES)
BENCH_CASES["resnet_wide"] = Case(WideResNet, lambda b: _image(b, 64), (4,), (4,), ["x"], {"x": {0: "batch"}},
                                  {"do_constant_folding": False})
BENCH_CASES["bert_medium"] = Case(MediumBert, lambda b, s: tuple(t.clamp(max=7999) for t in _tokens(b, s)),
                                  (4, 64), (4, 64), ["input_ids", "attention_mask"], CASES["bert"].dynamic)

def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


class _PeakRss:
    """Peak resident set size while the block runs, sampled every millisecond."""

    def __enter__(self) -> _PeakRss:
        self.base = self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss())
            time.sleep(0.001)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())

    @property
    def added(self) -> int:
        return self.peak - self.base


def _median_time(fn: Callable[[], Any], runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _onnx2torch() -> Callable[[str], torch.nn.Module] | str:
    try:
        from onnx2torch import convert
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available here"
        return f"unavailable ({type(exc).__name__}: {exc})"
    return convert


DEFAULT_MODELS = "resnet,mobilenet,bert,gpt2,resnet_wide,bert_medium"


def _export(name: str, folder: Path, exporter: str = "torchscript") -> tuple[torch.nn.Module, Path, tuple]:
    case = BENCH_CASES[name]
    torch.manual_seed(0)
    src = _randomize(case.build()).eval()
    path = folder / f"{name}_{exporter}.onnx"
    args = case.inputs(*case.export_sizes)
    fast = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        if exporter == "dynamo":
            shapes = {k: {a: torch.export.Dim.AUTO for a in v} for k, v in case.dynamic.items()}
            torch.onnx.export(src, args, path, dynamo=True, input_names=case.names, dynamic_shapes=shapes,
                              external_data=False, verbose=False)
        else:
            torch.onnx.export(src, args, path, dynamo=False, input_names=case.names,
                              dynamic_axes=case.dynamic, opset_version=17, **case.export_kwargs)
    torch.backends.mha.set_fastpath_enabled(fast)
    return src, path, args


def bench(name: str, folder: Path, runs: int, o2t: Any, exporter: str = "torchscript") -> dict[str, Any]:
    src, path, args = _export(name, folder, exporter)
    case = BENCH_CASES[name]
    proto = onnx.load(path)
    weight_bytes = sum(onnx.numpy_helper.to_array(t).nbytes for t in proto.graph.initializer)
    data = path.read_bytes()
    label = name if exporter == "torchscript" else f"{name}/{exporter}"
    row: dict[str, Any] = {"model": label, "weights_mb": weight_bytes / 2**20}

    # conversion (after one warm-up import: plugin discovery and op specs load once per process)
    onnxport.import_model(data)
    gc.collect()
    with _PeakRss() as rss:
        tracemalloc.start()
        model = onnxport.import_model(data)
        _, heap_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    row["import_rss_mb"] = rss.added / 2**20
    row["import_heap_mb"] = heap_peak / 2**20
    row["import_s"] = _median_time(lambda: onnxport.import_model(data), max(3, runs // 10), warmup=0)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    row["ort_session_s"] = _median_time(
        lambda: ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"]), max(3, runs // 10), 0)
    sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])

    # inference
    feeds = {n: a.numpy() for n, a in zip(case.names, args)}
    with torch.no_grad():  # interleaved rounds: the machine's load drifts between the two alike
        ours, native = [], []
        for _ in range(3):
            ours.append(_median_time(lambda: model(*args), max(1, runs // 3)))
            native.append(_median_time(lambda: src(*args), max(1, runs // 3)))
        row["ours_ms"] = 1e3 * statistics.median(ours)
        row["native_ms"] = 1e3 * statistics.median(native)
    row["ort_ms"] = 1e3 * _median_time(lambda: sess.run(None, feeds), runs)

    row["o2t_s"] = row["o2t_ms"] = None
    if callable(o2t):
        try:
            row["o2t_s"] = _median_time(lambda: o2t(str(path)), 3, warmup=0)
            theirs = o2t(str(path)).eval()
            with torch.no_grad():
                row["o2t_ms"] = 1e3 * _median_time(lambda: theirs(*args), runs)
        except Exception as exc:  # noqa: BLE001 - onnx2torch lacks ops that onnxport has
            row["o2t_note"] = f"{type(exc).__name__}: {str(exc)[:80]}"
    return row


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--models", default=DEFAULT_MODELS, help=f"any of {','.join(BENCH_CASES)}")
    parser.add_argument("--exporters", default="torchscript", help="torchscript,dynamo (torch.onnx dynamo=False/True)")
    ns = parser.parse_args(argv)
    torch.set_num_threads(1)
    o2t = _onnx2torch()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for exporter in ns.exporters.split(","):
            for name in ns.models.split(","):
                rows.append(bench(name, Path(tmp), ns.runs, o2t, exporter))
                print(f"  done {name} ({exporter})", file=sys.stderr)

    print(f"torch {torch.__version__}, onnxruntime {ort.__version__}, one thread; median of {ns.runs} runs")
    if not callable(o2t):
        print(f"onnx2torch: {o2t}")
    head = (f"{'model':<24}{'weights MB':>11}{'import s':>10}{'ORT sess s':>11}{'o2t conv s':>11}"
            f"{'ours ms':>9}{'ORT ms':>8}{'native ms':>10}{'o2t ms':>8}{'RSS+ MB':>9}{'heap MB':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:<24}{r['weights_mb']:>11.2f}{r['import_s']:>10.3f}{r['ort_session_s']:>11.3f}"
              f"{_fmt(r['o2t_s'], '.3f'):>11}{r['ours_ms']:>9.2f}{r['ort_ms']:>8.2f}{r['native_ms']:>10.2f}"
              f"{_fmt(r['o2t_ms'], '.2f'):>8}{r['import_rss_mb']:>9.1f}{r['import_heap_mb']:>9.2f}")
    print("\nratios (x):")
    print(f"{'model':<24}{'import/ORT sess':>16}{'ours/ORT':>10}{'ours/native':>12}{'ours/o2t':>10}"
          f"{'RSS+/weights':>14}{'heap/weights':>14}{'within 5%':>11}")
    for r in rows:
        o2t_ratio = r["ours_ms"] / r["o2t_ms"] if r.get("o2t_ms") else None
        w = max(r["weights_mb"], 1e-9)
        print(f"{r['model']:<24}{r['import_s'] / r['ort_session_s']:>16.2f}{r['ours_ms'] / r['ort_ms']:>10.2f}"
              f"{r['ours_ms'] / r['native_ms']:>12.2f}{_fmt(o2t_ratio, '.2f'):>10}"
              f"{r['import_rss_mb'] / w:>14.2f}{r['import_heap_mb'] / w:>14.2f}"
              f"{'yes' if r['ours_ms'] <= 1.05 * r['native_ms'] else 'no':>11}")
        if r.get("o2t_note"):
            print(f"    onnx2torch on {r['model']}: {r['o2t_note']}")


if __name__ == "__main__":
    main()
