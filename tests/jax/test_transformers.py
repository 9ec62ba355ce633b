"""The JAX backend on transformers models exported by torch.onnx (needs torch and transformers)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import onnxport  # noqa: E402


def _ort(model: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


class _Wrap(torch.nn.Module):
    """Keyword call and a single tensor output, so the exporters see a plain function."""

    def __init__(self, model, key: str):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, input_ids, attention_mask=None):
        kwargs = {} if attention_mask is None else {"attention_mask": attention_mask}
        return getattr(self.model(input_ids=input_ids, **kwargs), self.key)


@pytest.fixture(scope="module")
def bert_onnx() -> bytes:
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
    model = _Wrap(transformers.BertModel(cfg).eval(), "last_hidden_state")
    ids = torch.randint(0, 100, (2, 8))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (ids, torch.ones_like(ids)), buf, input_names=["input_ids", "attention_mask"],
                          dynamo=False, opset_version=17)
    return buf.getvalue()


@pytest.fixture(scope="module")
def gpt2_onnx() -> bytes:
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False,
                                  attn_implementation="eager", bos_token_id=0, eos_token_id=0)
    model = _Wrap(transformers.GPT2LMHeadModel(cfg).eval(), "logits")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model, (torch.randint(0, 100, (2, 8)),), input_names=["input_ids"],
                                    dynamo=True, optimize=True, verbose=False)
    return program.model_proto.SerializeToString()


def test_bert_matches_onnxruntime_jitted(bert_onnx: bytes) -> None:
    model = onnxport.import_model(bert_onnx, backend="jax")
    rng = np.random.default_rng(6)
    ids = rng.integers(0, 100, (2, 8)).astype(np.int64)
    mask = np.ones((2, 8), np.int64)
    mask[1, 5:] = 0
    ours = np.asarray(model.jit()(model.params, ids, mask))
    expected = _ort(bert_onnx, {"input_ids": ids, "attention_mask": mask})[0]
    assert ours.shape == expected.shape == (2, 8, 32)
    assert np.abs(ours - expected).max() < 1e-4
    assert any("word_embeddings" in k for k in model.params)


def test_gpt2_matches_onnxruntime_jitted(gpt2_onnx: bytes) -> None:
    model = onnxport.import_model(gpt2_onnx, backend="jax")
    ids = np.random.default_rng(7).integers(0, 100, (2, 8)).astype(np.int64)
    ours = np.asarray(model.jit()(model.params, ids))
    expected = _ort(gpt2_onnx, {"input_ids": ids})[0]
    assert ours.shape == expected.shape == (2, 8, 100)
    assert np.abs(ours - expected).max() < 1e-4


def test_gpt2_fine_tunes_with_optax(gpt2_onnx: bytes) -> None:
    optax = pytest.importorskip("optax")
    model = onnxport.import_model(gpt2_onnx, backend="jax")
    rng = np.random.default_rng(8)
    ids = rng.integers(0, 100, (2, 8)).astype(np.int64)
    targets = jnp.asarray(np.roll(ids, -1, axis=1))
    opt = optax.adam(1e-2)

    def loss_fn(params):
        logits = model.apply(params, ids)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    params = model.params
    state = opt.init(params)
    losses = []
    with model.x64_scope():
        for _ in range(15):
            params, state, loss = step(params, state)
            losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses
    assert np.isfinite(losses).all()
