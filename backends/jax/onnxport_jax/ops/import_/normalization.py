"""Batch, instance, layer, group and RMS normalization, MeanVarianceNormalization,
LpNormalization and LRN."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from onnxport import importer

from ...layout import to_first, to_last


def _stash(x, stash_type):
    """The compute dtype: float32 (stash_type 1) for narrower floats, else the input's own."""
    if stash_type == 1 and jnp.dtype(x.dtype).itemsize < 4:
        return jnp.float32
    return x.dtype


def _per_channel(v, ndim):
    return jnp.reshape(v, (1, -1) + (1,) * (ndim - 2))


@importer("BatchNormalization", since=15)
def batch_normalization(ctx, x, scale, b, mean, var, *, epsilon, momentum, training_mode):
    """Inference uses the running statistics; training_mode=1 uses batch statistics and
    also returns the updated running mean and variance. An inference-form node of a model in
    training mode (``model.train()``, ``apply(..., training=True)``) uses batch statistics too and
    reports the new running statistics as updates of its initializers (``ctx.update``)."""
    if not training_mode and not ctx.training:
        inv = scale * lax.rsqrt(var.astype(scale.dtype) + jnp.asarray(epsilon, scale.dtype))
        y = (x - _per_channel(mean, x.ndim).astype(x.dtype)) * _per_channel(inv, x.ndim).astype(x.dtype)
        y = y + _per_channel(b, x.ndim).astype(x.dtype)
        return y if ctx.num_outputs == 1 else (y,) + (None,) * (ctx.num_outputs - 1)
    axes = (0,) + tuple(range(2, x.ndim))
    cdt = _stash(x, 1)
    xc = x.astype(cdt)
    bm = jnp.mean(xc, axis=axes)
    bv = jnp.mean(jnp.square(xc - _per_channel(bm, x.ndim)), axis=axes)
    y = (xc - _per_channel(bm, x.ndim)) * lax.rsqrt(_per_channel(bv, x.ndim) + epsilon)
    y = (y * _per_channel(scale, x.ndim) + _per_channel(b, x.ndim)).astype(x.dtype)
    run_mean = (mean * momentum + bm.astype(mean.dtype) * (1 - momentum)).astype(mean.dtype)
    run_var = (var * momentum + bv.astype(var.dtype) * (1 - momentum)).astype(var.dtype)
    if not training_mode:
        ctx.update(3, run_mean)
        ctx.update(4, run_var)
    outs = (y, run_mean, run_var)
    return outs[: ctx.num_outputs] if ctx.num_outputs > 1 else y


@batch_normalization.channels_last
def batch_normalization_nhwc(ctx, x, scale, b, mean, var, *, epsilon, momentum, training_mode):
    """Inference BatchNormalization per channel on the last axis; in training mode the ONNX form."""
    if training_mode or ctx.training:
        y = batch_normalization(ctx, to_first(x), scale, b, mean, var, epsilon=epsilon, momentum=momentum,
                                training_mode=training_mode)
        return to_last(y if ctx.num_outputs == 1 else y[0])
    inv = scale * (var.astype(scale.dtype) + jnp.asarray(epsilon, scale.dtype)) ** -0.5
    return (x - mean.astype(x.dtype)) * inv.astype(x.dtype) + b.astype(x.dtype)


@importer("InstanceNormalization", since=22)
def instance_normalization(ctx, x, scale, b, *, epsilon):
    axes = tuple(range(2, x.ndim))
    m = jnp.mean(x, axis=axes, keepdims=True)
    v = jnp.mean(jnp.square(x - m), axis=axes, keepdims=True)
    y = (x - m) * lax.rsqrt(v + jnp.asarray(epsilon, x.dtype))
    return y * _per_channel(scale, x.ndim) + _per_channel(b, x.ndim)


@importer("LayerNormalization", since=17)
def layer_normalization(ctx, x, scale, b=None, *, axis, epsilon, stash_type):
    """Normalizes over dims ``axis..``; optional outputs Mean and InvStdDev keep reduced dims."""
    axis = axis % x.ndim
    axes = tuple(range(axis, x.ndim))
    xc = x.astype(_stash(x, stash_type))
    m = jnp.mean(xc, axis=axes, keepdims=True)
    d = xc - m
    inv = lax.rsqrt(jnp.mean(jnp.square(d), axis=axes, keepdims=True) + jnp.asarray(epsilon, xc.dtype))
    y = (d * inv).astype(x.dtype) * scale
    if b is not None:
        y = y + b
    if ctx.num_outputs == 1:
        return y
    stat = jnp.float32 if stash_type == 1 else x.dtype
    return (y, m.astype(stat), inv.astype(stat))[: ctx.num_outputs]


@importer("GroupNormalization", since=21)
def group_normalization(ctx, x, scale, bias, *, epsilon, num_groups, stash_type):
    """Statistics per (sample, group of channels); scale and bias are per channel."""
    xc = x.astype(_stash(x, stash_type))
    g = jnp.reshape(xc, (x.shape[0], num_groups, -1))
    m = jnp.mean(g, axis=-1, keepdims=True)
    v = jnp.mean(jnp.square(g - m), axis=-1, keepdims=True)
    y = jnp.reshape((g - m) * lax.rsqrt(v + jnp.asarray(epsilon, xc.dtype)), x.shape).astype(x.dtype)
    return y * _per_channel(scale, x.ndim) + _per_channel(bias, x.ndim)


@importer("RMSNormalization", since=23)
def rms_normalization(ctx, x, scale, *, axis, epsilon, stash_type):
    axes = tuple(range(axis % x.ndim, x.ndim))
    xc = x.astype(_stash(x, stash_type))
    r = lax.rsqrt(jnp.mean(jnp.square(xc), axis=axes, keepdims=True) + jnp.asarray(epsilon, xc.dtype))
    return (xc * r).astype(x.dtype) * scale


@importer("MeanVarianceNormalization", since=13)
def mean_variance_normalization(ctx, x, *, axes):
    """(X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), as the ONNX function body defines."""
    axes = tuple(int(a) % x.ndim for a in axes)
    m = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x), axis=axes, keepdims=True) - jnp.square(m)
    return (x - m) / (jnp.sqrt(var) + jnp.asarray(1e-9, x.dtype))


@importer("LpNormalization", since=22)
def lp_normalization(ctx, x, *, axis, p):
    """x / ||x||_p along ``axis`` (p = 1 or 2)."""
    if p not in (1, 2):
        raise ctx.error(f"p must be 1 or 2, got {p}")
    if p == 1:
        norm = jnp.sum(jnp.abs(x), axis=axis, keepdims=True)
    else:
        norm = jnp.sqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
    safe = jnp.where(norm == 0, jnp.ones_like(norm), norm)
    return jnp.where(norm == 0, jnp.zeros_like(x), x / safe)  # a zero vector stays zero


def lrn_values(x, *, alpha, beta, bias, size, axis=1):
    """LRN across the channels on ``axis`` (window [c - (size-1)//2, c + size//2]): a sum of
    shifted slices of the zero-padded squares (differentiable, one fused loop)."""
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    axis %= x.ndim
    c = x.shape[axis]
    cfg = [(0, 0)] * x.ndim
    cfg[axis] = (lo, hi)
    sq = jnp.pad(jnp.square(x), cfg)
    s = None
    for k in range(size):
        t = lax.slice_in_dim(sq, k, k + c, axis=axis)
        s = t if s is None else s + t
    return x / (bias + (alpha / size) * s) ** beta


@importer("LRN", since=13)
def lrn(ctx, x, *, alpha, beta, bias, size):
    """Local response normalization across channels (window [c - (size-1)//2, c + size//2])."""
    return lrn_values(x, alpha=alpha, beta=beta, bias=bias, size=size)


@lrn.channels_last
def lrn_nhwc(ctx, x, *, alpha, beta, bias, size):
    return lrn_values(x, alpha=alpha, beta=beta, bias=bias, size=size, axis=-1)
