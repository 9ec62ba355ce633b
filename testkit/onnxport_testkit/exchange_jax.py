"""The exchange model set written in JAX: pure functions ``fn(params, *inputs)`` of a params dict
(see :mod:`onnxport_testkit.exchange`). Batch-norm statistics are closed over, not params."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .exchange import H, Source


def mlp(p, x):
    return jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def _conv(x, w, b):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y + b[None, :, None, None]


def cnn_fn(stats):
    mean, var = jnp.asarray(stats["mean"]), jnp.asarray(stats["var"])

    def cnn(p, x):
        y = _conv(x, p["c1"], p["cb1"])
        y = (y - mean[None, :, None, None]) / jnp.sqrt(var[None, :, None, None] + 1e-5)
        y = jax.nn.relu(y * p["gamma"][None, :, None, None] + p["beta"][None, :, None, None])
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        y = jax.nn.relu(_conv(y, p["c2"], p["cb2"])).mean(axis=(2, 3))
        return y @ p["fw"] + p["fb"]

    return cnn


def residual(p, x):
    for i in range(2):
        x = x + jax.nn.relu(x @ p[f"wa{i}"] + p[f"ba{i}"]) @ p[f"wb{i}"] + p[f"bb{i}"]
    return x


def _ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def transformer(p, x):
    h = _ln(x, p["ln1g"], p["ln1b"])
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    att = jax.nn.softmax(q @ jnp.swapaxes(k, 1, 2) / float(np.sqrt(x.shape[-1])), axis=-1)
    x = x + (att @ v) @ p["wo"]
    return x + jax.nn.relu(_ln(x, p["ln2g"], p["ln2b"]) @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def tied_decoder(p, tokens):
    h = jnp.tanh(p["emb"][tokens] @ p["wh"] + p["bh"])
    return h @ p["emb"].T


def lstm(p, x):
    def step(carry, xt):
        h, c = carry
        z = xt @ p["wx"] + h @ p["wh"] + p["b"]
        i, f, g, o = (z[:, k * H:(k + 1) * H] for k in range(4))
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    # the initial state from the input, not a constant array (that would export as an initializer,
    # which importers take for a weight)
    zeros = jnp.broadcast_to(x[:, 0, :1] * 0.0, (x.shape[0], H))
    (h, _), _ = lax.scan(step, (zeros, zeros), jnp.swapaxes(x, 0, 1))
    return h @ p["fw"] + p["fb"]


def control_flow(p, x):
    y = lax.cond(x.sum() > 0, lambda x: jnp.tanh(x @ p["wa"]), lambda x: jnp.sin(x @ p["wb"]), x)

    def cond(c):
        i, y = c
        return (i < 4) & (jnp.abs(y).sum() < 6.0)

    def body(c):
        i, y = c
        return i + 1, y + jnp.tanh(y @ p["wl"])

    return lax.while_loop(cond, body, (jnp.int32(0), y))[1]


def build(model: str, s: dict[str, np.ndarray], ins: tuple[np.ndarray, ...], count: int) -> Source:
    fn = {"mlp": mlp, "residual": residual, "transformer": transformer, "tied_decoder": tied_decoder,
          "lstm": lstm, "control_flow": control_flow}.get(model) or cnn_fn(s)
    params = {k: jnp.asarray(v) for k, v in s.items() if k not in ("mean", "var")}
    args = tuple(jnp.asarray(a) for a in ins)

    def run() -> list[np.ndarray]:
        out = fn(params, *args)
        return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]

    native = sum(int(np.size(v)) for v in params.values())
    assert native == count, (model, native, count)
    return Source(model, "jax", fn, args, {"params": params}, native, run)


def imported_count(m) -> int:
    """Trainable values of an imported JaxModel."""
    return sum(int(np.size(v)) for v in m.params.values())


def grad_step(m, ins: list[np.ndarray]) -> tuple[float, float]:
    """The loss (mean square of the outputs) before and after one SGD step on ``m.params``."""
    args = [jnp.asarray(a) for a in ins]

    def loss(params):
        out = m.apply(params, *args)
        return sum((o.astype(jnp.float32) ** 2).mean() for o in (out if isinstance(out, (tuple, list)) else (out,)))

    before, grads = jax.value_and_grad(loss)(m.params)
    new = jax.tree.map(lambda p, g: p - 0.1 * g, m.params, grads)
    return float(before), float(loss(new))
