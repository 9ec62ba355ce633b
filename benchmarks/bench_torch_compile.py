"""torch.compile benchmark: the compiled import against the compiled native model (CPU).

A tiny BERT and GPT-2 are built here with transformers (random weights), exported with torch.onnx
and imported with onnxport. Each model is compiled with inductor (``fullgraph=True``) twice: the
native module and the imported one. Reported per model (median of N runs, one thread):

- eager: imported / native;
- compiled: imported / native (the target is at most 1.05), and each one's compile time (first call).

Not a pass/fail test; a few minutes on one core::

    python benchmarks/bench_torch_compile.py [--runs 30] [--models bert,gpt2] [--batch 4] [--seq 64]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import torch
from torch import nn

import onnxport


class Bert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import BertConfig, BertModel

        cfg = BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=256, max_position_embeddings=128, attn_implementation="eager")
        self.bert = BertModel(cfg)

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class Gpt2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(vocab_size=1000, n_embd=128, n_layer=2, n_head=4, n_positions=128, use_cache=False,
                         attn_implementation="eager")
        self.gpt = GPT2LMHeadModel(cfg)

    def forward(self, input_ids, attention_mask):
        return self.gpt(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


MODELS = {"bert": Bert, "gpt2": Gpt2}


def _median(fn, args, runs: int) -> float:
    with torch.no_grad():
        for _ in range(3):
            fn(*args)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def _first_call(fn, args) -> float:
    t = time.perf_counter()
    with torch.no_grad():
        fn(*args)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--models", default="bert,gpt2")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    opts = ap.parse_args()
    torch.set_num_threads(1)
    tmp = Path(tempfile.mkdtemp(prefix="bench_compile_"))
    print(f"{'model':6} {'eager ours/native':>18} {'compiled ours/native':>21} "
          f"{'compile s (native, ours)':>25}")
    for name in opts.models.split(","):
        torch.manual_seed(0)
        native = MODELS[name]().eval()
        ids = torch.randint(0, 1000, (opts.batch, opts.seq))
        mask = torch.ones(opts.batch, opts.seq, dtype=torch.long)
        args = (ids, mask)
        path = tmp / f"{name}.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(native, args, path, dynamo=False, input_names=["input_ids", "attention_mask"],
                              dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}},
                              opset_version=17)
        ours = onnxport.import_model(path)
        with torch.no_grad():
            torch.testing.assert_close(ours(*args), native(*args), rtol=1e-4, atol=1e-4)
        eager = _median(ours, args, opts.runs) / _median(native, args, opts.runs)
        torch._dynamo.reset()
        c_native = torch.compile(native, fullgraph=True)
        t_native = _first_call(c_native, args)
        c_ours = torch.compile(ours, fullgraph=True)
        t_ours = _first_call(c_ours, args)
        compiled = _median(c_ours, args, opts.runs) / _median(c_native, args, opts.runs)
        print(f"{name:6} {eager:18.2f} {compiled:21.2f} {t_native:12.1f} {t_ours:12.1f}")


if __name__ == "__main__":
    main()
