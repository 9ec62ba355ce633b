"""NonMaxSuppression: greedy per batch and class (``tf.image.non_max_suppression``), in
descending score order; the selected count is a dynamic dim of the traced graph."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import tensor


def _corners(boxes, center_point_box: int):
    """Boxes [..., 4] -> (y1, x1, y2, x2)."""
    if center_point_box:
        xc, yc, w, h = (boxes[..., i] for i in range(4))
        return tf.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], -1)
    return boxes


def _scalar(x, default, dtype):
    if x is None or (isinstance(x, np.ndarray) and x.size == 0):
        return tf.constant(default, dtype)
    return tf.cast(tf.reshape(tensor(x), [-1])[0], dtype)


@importer("NonMaxSuppression", since=11)
def non_max_suppression(ctx, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None,
                        score_threshold=None, *, center_point_box):
    """Selected ``[batch, class, box]`` rows (int64), grouped by batch, then class, in selection order."""
    boxes, scores = tf.cast(tensor(boxes), tf.float32), tf.cast(tensor(scores), tf.float32)
    n_batch, n_class = boxes.shape[0], scores.shape[1]
    if n_batch is None or n_class is None:
        raise ctx.data_dependent("the number of batches and classes")
    limit = tf.cast(tf.minimum(_scalar(max_output_boxes_per_class, 0, tf.int64), 1 << 30), tf.int32)
    iou_t = _scalar(iou_threshold, 0.0, tf.float32)
    score_t = _scalar(score_threshold, float("-inf"), tf.float32)
    corners = _corners(boxes, center_point_box)
    rows = []
    for b in range(n_batch):
        for c in range(n_class):
            sel = tf.cast(tf.image.non_max_suppression(corners[b], scores[b, c], limit, iou_t, score_t), tf.int64)
            k = tf.shape(sel)[0]
            rows.append(tf.stack([tf.fill([k], tf.constant(b, tf.int64)), tf.fill([k], tf.constant(c, tf.int64)), sel],
                                 axis=1))
    return tf.concat(rows, axis=0) if rows else tf.zeros([0, 3], tf.int64)
