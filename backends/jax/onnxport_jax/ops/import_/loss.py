"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (weights, ignore_index, reductions)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from onnxport import importer


def _nll(ctx, logp, target, weight, ignore_index, reduction):
    """-logp[n, target, ...] * weight[target], ignored targets contribute 0 to loss and weights."""
    if reduction not in ("none", "sum", "mean"):
        raise ctx.error(f"unknown reduction {reduction!r}")
    target = jnp.asarray(target)
    keep = jnp.ones(target.shape, bool) if ignore_index is None else target != ignore_index
    safe = jnp.where(keep, target, 0).astype(jnp.int32)
    picked = jnp.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w = jnp.ones(target.shape, logp.dtype) if weight is None else jnp.take(weight, safe).astype(logp.dtype)
    w = jnp.where(keep, w, jnp.zeros_like(w))
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return jnp.sum(loss)
    return jnp.sum(loss) / jnp.sum(w)


@importer("NegativeLogLikelihoodLoss", since=22)
def negative_log_likelihood_loss(ctx, x, target, weight=None, *, ignore_index, reduction):
    return _nll(ctx, x, target, weight, ignore_index, reduction)


@importer("SoftmaxCrossEntropyLoss", since=13)
def softmax_cross_entropy_loss(ctx, scores, labels, weights=None, *, ignore_index, reduction):
    """Log-softmax over the class axis (1), then the NLL loss; the second output is log_prob."""
    logp = jax.nn.log_softmax(scores, axis=1)
    loss = _nll(ctx, logp, labels, weights, ignore_index, reduction)
    return (loss, logp) if ctx.num_outputs > 1 else loss
