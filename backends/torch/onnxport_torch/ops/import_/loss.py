"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (with weights, ignore_index, reductions)."""

from __future__ import annotations

import torch

from onnxport import importer


def nll(ctx, logp, target, weight, ignore_index, reduction: str):
    """ONNX NegativeLogLikelihoodLoss of log-probabilities ``logp`` [N, C, ...]."""
    target = target.to(torch.int64)
    keep = torch.ones_like(target, dtype=torch.bool) if ignore_index is None else target != int(ignore_index)
    safe = torch.where(keep, target, torch.zeros_like(target))  # ignored labels may lie outside [0, C)
    picked = torch.gather(logp, 1, safe.unsqueeze(1)).squeeze(1)
    w = weight[safe] if weight is not None else torch.ones_like(picked)
    w = torch.where(keep, w, torch.zeros_like(w))
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    raise ctx.error(f"unknown reduction {reduction!r}")


@importer("NegativeLogLikelihoodLoss", since=22)
def negative_log_likelihood_loss(ctx, x, target, weight=None, *, ignore_index, reduction):
    return nll(ctx, x, target, weight, ignore_index, reduction)


@importer("SoftmaxCrossEntropyLoss", since=13)
def softmax_cross_entropy_loss(ctx, scores, labels, weights=None, *, ignore_index, reduction):
    logp = torch.log_softmax(scores, dim=1)
    loss = nll(ctx, logp, labels, weights, ignore_index, reduction)
    return loss if ctx.num_outputs == 1 else (loss, logp)
