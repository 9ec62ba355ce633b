"""Files that onnxruntime's transformer optimizer writes import into each backend and match
onnxruntime: a tiny BERT and GPT-2 from transformers (random weights, local configs), exported by
torch.onnx and fused offline (``opt_level=0``: the optimizer's own fusions, no runtime passes)."""

from __future__ import annotations

import collections
import io
import warnings

import numpy as np
import onnx
import pytest
import torch
import transformers
from onnxruntime.transformers import optimizer

import onnxport
from onnxport_testkit.compare import compare_outputs
from onnxport_testkit.reference import run_onnxruntime

BACKENDS = ("torch", "jax", "tensorflow")


class _Wrap(torch.nn.Module):
    """A keyword call with one tensor output, so torch.onnx sees a plain function."""

    def __init__(self, model, key: str):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        return getattr(self.model(input_ids=input_ids, attention_mask=attention_mask, **extra), self.key)


def _optimized(tmp_path_factory, name, model, args, names, model_type) -> onnx.ModelProto:
    path = tmp_path_factory.mktemp(name) / f"{name}.onnx"
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buf, input_names=names, dynamo=False, opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "seq"} for n in names})
    path.write_bytes(buf.getvalue())
    opt = optimizer.optimize_model(str(path), model_type=model_type, num_heads=2, hidden_size=32, opt_level=0,
                                   use_gpu=False)
    fused = path.with_name(f"{name}_fused.onnx")
    opt.save_model_to_file(str(fused))  # as users get the file
    return onnx.load(str(fused))


def _inputs(with_types: bool) -> list[np.ndarray]:
    gen = np.random.default_rng(0)
    ids = gen.integers(0, 100, (2, 8)).astype(np.int64)
    mask = np.ones((2, 8), np.int64)
    mask[1, 5:] = 0  # the second row is padded
    return [ids, mask] + ([(np.arange(8)[None, :] >= 4).astype(np.int64).repeat(2, 0)] if with_types else [])


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> onnx.ModelProto:
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
    ids = torch.randint(0, 100, (2, 8))
    return _optimized(tmp_path_factory, "bert", _Wrap(transformers.BertModel(cfg).eval(), "last_hidden_state"),
                      (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                      ["input_ids", "attention_mask", "token_type_ids"], "bert")


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> onnx.ModelProto:
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False,
                                  attn_implementation="eager", bos_token_id=0, eos_token_id=0)
    ids = torch.randint(0, 100, (2, 8))
    return _optimized(tmp_path_factory, "gpt2", _Wrap(transformers.GPT2LMHeadModel(cfg).eval(), "logits"),
                      (ids, torch.ones_like(ids)), ["input_ids", "attention_mask"], "gpt2")


def _contrib_ops(model: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft")


def _check(model: onnx.ModelProto, backend: str, inputs: list[np.ndarray]) -> None:
    expected = run_onnxruntime(model, inputs)
    imported = onnxport.import_model(model, backend=backend)
    actual = onnxport.get_backend(backend).run(imported, inputs)
    assert len(actual) == len(expected)
    for e, a in zip(expected, actual):
        compare_outputs(e, a, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bert_fused_by_the_transformer_optimizer(bert, backend):
    ops = _contrib_ops(bert)
    assert {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization"} <= set(ops), ops
    assert ops["Attention"] == 2
    _check(bert, backend, _inputs(with_types=True))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpt2_fused_by_the_transformer_optimizer(gpt2, backend):
    ops = _contrib_ops(gpt2)
    assert {"SkipLayerNormalization", "FastGelu"} <= set(ops), ops
    _check(gpt2, backend, _inputs(with_types=False))
