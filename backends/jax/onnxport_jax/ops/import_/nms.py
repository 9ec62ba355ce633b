"""NonMaxSuppression: greedy per batch and class, in descending score order.

The selection runs in JAX with fixed shapes (a ``lax.scan`` over the score-sorted boxes, vmapped over
batches and classes). The number of selected boxes is data-dependent: turning the keep mask into
``[num_selected, 3]`` indices needs concrete values, so under ``jax.jit`` the node raises the
context's DataDependentError; run the model without jit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ._static import is_static


def _corners(boxes, center_point_box: int):
    """Boxes [..., 4] -> (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2."""
    if center_point_box:
        xc, yc, w, h = (boxes[..., i] for i in range(4))
        return jnp.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], -1)
    y1, x1, y2, x2 = (boxes[..., i] for i in range(4))
    return jnp.stack([jnp.minimum(y1, y2), jnp.minimum(x1, x2), jnp.maximum(y1, y2), jnp.maximum(x1, x2)], -1)


def _iou(b):
    """Pairwise IoU of corner boxes [N, 4] -> [N, N] (0 where a box or the union is empty)."""
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    top = jnp.maximum(b[:, None, 0], b[None, :, 0])
    left = jnp.maximum(b[:, None, 1], b[None, :, 1])
    bottom = jnp.minimum(b[:, None, 2], b[None, :, 2])
    right = jnp.minimum(b[:, None, 3], b[None, :, 3])
    inter = jnp.clip(bottom - top, 0) * jnp.clip(right - left, 0)
    union = area[:, None] + area[None, :] - inter
    ok = (union > 0) & (area[:, None] > 0) & (area[None, :] > 0)
    return jnp.where(ok, inter / jnp.where(ok, union, 1), 0)


def _select(iou, scores, limit, iou_t, score_t):
    """Greedy keep mask over boxes sorted by descending score (ties: lower index first)."""
    order = jnp.argsort(-scores, stable=True)
    s = scores[order]
    m = iou[order][:, order]
    n = scores.shape[0]

    def step(carry, i):
        kept, count = carry
        ok = (s[i] > score_t) & (count < limit) & ~jnp.any(kept & (m[i] > iou_t))
        return (kept.at[i].set(ok), count + ok), None

    (kept, _), _ = lax.scan(step, (jnp.zeros(n, bool), jnp.zeros((), jnp.int64)), jnp.arange(n))
    return kept, order


def _scalar(x, default, dtype):
    return jnp.asarray(default, dtype) if x is None or np.size(x) == 0 else jnp.reshape(jnp.asarray(x), (-1,))[0].astype(dtype)


@importer("NonMaxSuppression", since=11)
def non_max_suppression(ctx, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None,
                        score_threshold=None, *, center_point_box):
    """Selected ``[batch, class, box]`` rows (int64), grouped by batch, then class, in selection order."""
    wide = jnp.float64 if boxes.dtype == jnp.float64 else jnp.float32
    limit = _scalar(max_output_boxes_per_class, 0, jnp.int64)
    iou_t = _scalar(iou_threshold, 0.0, wide)
    score_t = _scalar(score_threshold, -jnp.inf, wide)
    corners = _corners(jnp.asarray(boxes).astype(wide), center_point_box)
    iou = jax.vmap(_iou)(corners)  # [B, N, N]
    per_class = jax.vmap(_select, in_axes=(None, 0, None, None, None))  # over classes
    kept, order = jax.vmap(per_class, in_axes=(0, 0, None, None, None))(
        iou, jnp.asarray(scores).astype(wide), limit, iou_t, score_t)  # [B, C, N] each
    mask = ctx.concrete(kept, "the number of boxes NonMaxSuppression selects")
    b, c, rank = np.nonzero(mask)
    box = np.asarray(order)[b, c, rank]
    out = np.stack([b, c, box], axis=1).astype(np.int64).reshape(-1, 3)
    return out if is_static(boxes) and is_static(scores) else jnp.asarray(out)
