"""Batch, instance, layer, group and RMS normalization, MeanVarianceNormalization,
LpNormalization and LRN."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ...layout import to_first, to_last


def _stash(x, stash_type):
    """The compute dtype: float32 (stash_type 1) for narrower floats, else the input's own."""
    if stash_type == 1 and x.dtype.size < 4:
        return tf.float32
    return x.dtype


def _per_channel(v, ndim, dtype):
    return tf.reshape(tf.cast(v, dtype), [1, -1] + [1] * (ndim - 2))


def _rank(x):
    return len(x.shape)


@importer("BatchNormalization", since=15)
def batch_normalization(ctx, x, scale, b, mean, var, *, epsilon, momentum, training_mode):
    """Inference uses the running statistics; training_mode=1 (or a model in training mode)
    uses batch statistics and returns / assigns the updated running mean and variance."""
    x = tf.convert_to_tensor(x)
    r = _rank(x)
    if not training_mode and not ctx.training:
        inv = tf.cast(scale, x.dtype) * tf.math.rsqrt(tf.cast(var, x.dtype) + tf.constant(epsilon, x.dtype))
        y = (x - _per_channel(mean, r, x.dtype)) * _per_channel(inv, r, x.dtype) + _per_channel(b, r, x.dtype)
        return y if ctx.num_outputs == 1 else (y,) + (None,) * (ctx.num_outputs - 1)
    axes = [0] + list(range(2, r))
    cdt = _stash(x, 1)
    xc = tf.cast(x, cdt)
    bm = tf.reduce_mean(xc, axis=axes)
    bv = tf.reduce_mean(tf.square(xc - _per_channel(bm, r, cdt)), axis=axes)
    y = (xc - _per_channel(bm, r, cdt)) * tf.math.rsqrt(_per_channel(bv, r, cdt) + epsilon)
    y = tf.cast(y * _per_channel(scale, r, cdt) + _per_channel(b, r, cdt), x.dtype)
    mean, var = tf.convert_to_tensor(mean), tf.convert_to_tensor(var)
    run_mean = mean * momentum + tf.cast(bm, mean.dtype) * (1 - momentum)
    run_var = var * momentum + tf.cast(bv, var.dtype) * (1 - momentum)
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
    x = tf.convert_to_tensor(x)
    dt = x.dtype
    inv = tf.cast(scale, dt) * tf.math.rsqrt(tf.cast(var, dt) + tf.constant(epsilon, dt))
    return (x - tf.cast(mean, dt)) * inv + tf.cast(b, dt)


@importer("InstanceNormalization", since=22)
def instance_normalization(ctx, x, scale, b, *, epsilon):
    x = tf.convert_to_tensor(x)
    r = _rank(x)
    axes = list(range(2, r))
    m = tf.reduce_mean(x, axis=axes, keepdims=True)
    v = tf.reduce_mean(tf.square(x - m), axis=axes, keepdims=True)
    y = (x - m) * tf.math.rsqrt(v + tf.constant(epsilon, x.dtype))
    return y * _per_channel(scale, r, x.dtype) + _per_channel(b, r, x.dtype)


@importer("LayerNormalization", since=17)
def layer_normalization(ctx, x, scale, b=None, *, axis, epsilon, stash_type):
    """Normalizes over dims ``axis..``; optional outputs Mean and InvStdDev keep reduced dims."""
    x = tf.convert_to_tensor(x)
    r = _rank(x)
    axes = list(range(axis % r, r))
    xc = tf.cast(x, _stash(x, stash_type))
    m = tf.reduce_mean(xc, axis=axes, keepdims=True)
    d = xc - m
    inv = tf.math.rsqrt(tf.reduce_mean(tf.square(d), axis=axes, keepdims=True) + tf.constant(epsilon, xc.dtype))
    y = tf.cast(d * inv, x.dtype) * tf.cast(scale, x.dtype)
    if b is not None:
        y = y + tf.cast(b, x.dtype)
    if ctx.num_outputs == 1:
        return y
    stat = tf.float32 if stash_type == 1 else x.dtype
    return (y, tf.cast(m, stat), tf.cast(inv, stat))[: ctx.num_outputs]


@importer("GroupNormalization", since=21)
def group_normalization(ctx, x, scale, bias, *, epsilon, num_groups, stash_type):
    """Statistics per (sample, group of channels); scale and bias are per channel."""
    x = tf.convert_to_tensor(x)
    r = _rank(x)
    xc = tf.cast(x, _stash(x, stash_type))
    g = tf.reshape(xc, tf.stack([tf.shape(x)[0], num_groups, -1]))
    m = tf.reduce_mean(g, axis=-1, keepdims=True)
    v = tf.reduce_mean(tf.square(g - m), axis=-1, keepdims=True)
    y = tf.cast(tf.reshape((g - m) * tf.math.rsqrt(v + tf.constant(epsilon, xc.dtype)), tf.shape(x)), x.dtype)
    return y * _per_channel(scale, r, x.dtype) + _per_channel(bias, r, x.dtype)


@importer("RMSNormalization", since=23)
def rms_normalization(ctx, x, scale, *, axis, epsilon, stash_type):
    x = tf.convert_to_tensor(x)
    r = _rank(x)
    axes = list(range(axis % r, r))
    xc = tf.cast(x, _stash(x, stash_type))
    inv = tf.math.rsqrt(tf.reduce_mean(tf.square(xc), axis=axes, keepdims=True) + tf.constant(epsilon, xc.dtype))
    return tf.cast(xc * inv, x.dtype) * tf.cast(scale, x.dtype)


@importer("MeanVarianceNormalization", since=13)
def mean_variance_normalization(ctx, x, *, axes):
    """(X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), as the ONNX function body defines."""
    x = tf.convert_to_tensor(x)
    axes = [int(a) % _rank(x) for a in axes]
    m = tf.reduce_mean(x, axis=axes, keepdims=True)
    var = tf.reduce_mean(tf.square(x), axis=axes, keepdims=True) - tf.square(m)
    return (x - m) / (tf.sqrt(var) + tf.constant(1e-9, x.dtype))


@importer("LpNormalization", since=22)
def lp_normalization(ctx, x, *, axis, p):
    """x / ||x||_p along ``axis`` (p = 1 or 2)."""
    if p not in (1, 2):
        raise ctx.error(f"p must be 1 or 2, got {p}")
    x = tf.convert_to_tensor(x)
    if p == 1:
        norm = tf.reduce_sum(tf.abs(x), axis=axis, keepdims=True)
    else:
        norm = tf.sqrt(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True))
    safe = tf.where(norm == 0, tf.ones_like(norm), norm)
    return tf.where(norm == 0, tf.zeros_like(x), x / safe)  # a zero vector stays zero


def lrn_values(x, *, alpha, beta, bias, size, axis=1):
    """LRN across the channels on ``axis`` (window [c - (size-1)//2, c + size//2])."""
    x = tf.convert_to_tensor(x)
    r = _rank(x)
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    axis %= r
    c = x.shape[axis]
    cfg = [[0, 0]] * r
    cfg[axis] = [lo, hi]
    sq = tf.pad(tf.square(x), cfg)
    s = None
    for k in range(size):
        idx = [slice(None)] * r
        idx[axis] = slice(k, k + c)
        t = sq[tuple(idx)]
        s = t if s is None else s + t
    return x / (bias + (alpha / size) * s) ** beta


@importer("LRN", since=13)
def lrn(ctx, x, *, alpha, beta, bias, size):
    """Local response normalization across channels (window [c - (size-1)//2, c + size//2])."""
    return lrn_values(x, alpha=alpha, beta=beta, bias=bias, size=size)


@lrn.channels_last
def lrn_nhwc(ctx, x, *, alpha, beta, bias, size):
    """LRN of an NHWC ``x``: TensorFlow's LRN kernel (a symmetric window, float32) where it
    applies (2-2.5x faster than the sum of shifted squares on 54x54x96, 1 core), else the sum."""
    x = tf.convert_to_tensor(x)
    if size % 2 == 1 and x.dtype == tf.float32 and x.shape.rank == 4:
        return tf.nn.local_response_normalization(x, depth_radius=(size - 1) // 2, bias=bias, alpha=alpha / size,
                                                  beta=beta)
    return lrn_values(x, alpha=alpha, beta=beta, bias=bias, size=size, axis=-1)
