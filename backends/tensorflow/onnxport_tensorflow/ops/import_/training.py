"""ai.onnx.preview.training optimizers: Momentum, Adagrad and Adam (one update step).

Variadic inputs are grouped per role: ``R, T, X_1..X_n, G_1..G_n, <state_1..state_n>...``; outputs
are ``X_new_1..X_new_n`` followed by each new state group. ``T`` may be traced: the first-step
branches use ``tf.where``.
"""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor

_DOMAIN = "ai.onnx.preview.training"


def _groups(ctx, xs, roles: int) -> list[tuple]:
    """Split the variadic inputs into ``roles`` equal groups and zip them per optimized tensor."""
    if not xs or len(xs) % roles:
        raise ctx.error(f"expected {roles} inputs per optimized tensor, got {len(xs)} inputs")
    n = len(xs) // roles
    return list(zip(*(xs[i * n:(i + 1) * n] for i in range(roles))))


def _scalar(x, dtype):
    return tf.cast(tf.reshape(tensor(x), []), dtype)


def _c(v, dtype):
    return tf.constant(v, dtype)


def _flatten(results: list[tuple]) -> tuple:
    """Per-tensor result tuples -> outputs grouped by role (all X_new, then each state)."""
    return tuple(r[i] for i in range(len(results[0])) for r in results)


@importer("Momentum", since=1, domain=_DOMAIN)
def momentum(ctx, r, t, *xs, alpha, beta, mode, norm_coefficient):
    """SGD with standard or Nesterov momentum; beta is 1 on the first step (T == 0)."""
    if mode not in ("standard", "nesterov"):
        raise ctx.error(f"unknown Momentum mode {mode!r} (one of 'standard', 'nesterov')")
    out = []
    for x, g, v in _groups(ctx, xs, 3):
        x, g, v = tensor(x), tensor(g), tensor(v)
        dt = x.dtype
        lr = _scalar(r, dt)
        b = tf.where(tf.reshape(tensor(t), []) > 0, _c(beta, dt), _c(1, dt))
        g_reg = _c(norm_coefficient, dt) * x + g
        v_new = _c(alpha, dt) * v + b * g_reg
        step = g_reg + _c(alpha, dt) * v_new if mode == "nesterov" else v_new
        out.append(((x - lr * step), v_new))
    return _flatten(out)


@importer("Adagrad", since=1, domain=_DOMAIN)
def adagrad(ctx, r, t, *xs, decay_factor, epsilon, norm_coefficient):
    """ADAGRAD with learning-rate decay ``R / (1 + T * decay_factor)``."""
    out = []
    for x, g, h in _groups(ctx, xs, 3):
        x, g, h = tensor(x), tensor(g), tensor(h)
        dt = x.dtype
        lr = _scalar(r, dt) / (1 + _scalar(t, dt) * _c(decay_factor, dt))
        g_reg = _c(norm_coefficient, dt) * x + g
        h_new = h + g_reg * g_reg
        x_new = x - lr * g_reg / (tf.sqrt(h_new) + _c(epsilon, dt))
        out.append((x_new, h_new))
    return _flatten(out)


@importer("Adam", since=1, domain=_DOMAIN)
def adam(ctx, r, t, *xs, alpha, beta, epsilon, norm_coefficient, norm_coefficient_post):
    """Adam with bias-corrected step size (for T > 0) and post-update weight decay."""
    out = []
    for x, g, v, h in _groups(ctx, xs, 4):
        x, g, v, h = tensor(x), tensor(g), tensor(v), tensor(h)
        dt = x.dtype
        wide = tf.float64 if dt == tf.float64 else tf.float32
        step_t = _scalar(t, wide)
        lr = _scalar(r, wide)
        corrected = lr * tf.sqrt(1 - _c(beta, wide) ** step_t) / (1 - _c(alpha, wide) ** step_t)
        lr = tf.cast(tf.where(step_t > 0, corrected, lr), dt)
        g_reg = _c(norm_coefficient, dt) * x + g
        v_new = _c(alpha, dt) * v + _c(1 - alpha, dt) * g_reg
        h_new = _c(beta, dt) * h + _c(1 - beta, dt) * g_reg * g_reg
        x_new = x - lr * (v_new / (tf.sqrt(h_new) + _c(epsilon, dt)))
        x_new = _c(1 - norm_coefficient_post, dt) * x_new
        out.append((x_new, v_new, h_new))
    return _flatten(out)
