"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (weights, ignore_index, reductions)."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor


def _nll(ctx, logp, target, weight, ignore_index, reduction):
    """-logp[n, target, ...] * weight[target], ignored targets contribute 0 to loss and weights."""
    if reduction not in ("none", "sum", "mean"):
        raise ctx.error(f"unknown reduction {reduction!r}")
    logp, target = tensor(logp), tf.cast(tensor(target), tf.int64)
    keep = tf.ones_like(target, tf.bool) if ignore_index is None else target != ignore_index
    safe = tf.where(keep, target, tf.zeros_like(target))
    picked = tf.experimental.numpy.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w = tf.ones_like(picked) if weight is None else tf.cast(tf.gather(weight, safe), logp.dtype)
    w = tf.where(keep, w, tf.zeros_like(w))
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return tf.reduce_sum(loss)
    return tf.reduce_sum(loss) / tf.reduce_sum(w)


@importer("NegativeLogLikelihoodLoss", since=22)
def negative_log_likelihood_loss(ctx, x, target, weight=None, *, ignore_index, reduction):
    return _nll(ctx, x, target, weight, ignore_index, reduction)


@importer("SoftmaxCrossEntropyLoss", since=13)
def softmax_cross_entropy_loss(ctx, scores, labels, weights=None, *, ignore_index, reduction):
    """Log-softmax over the class axis (1), then the NLL loss; the second output is log_prob."""
    logp = tf.nn.log_softmax(tensor(scores), axis=1)
    loss = _nll(ctx, logp, labels, weights, ignore_index, reduction)
    return (loss, logp) if ctx.num_outputs > 1 else loss
