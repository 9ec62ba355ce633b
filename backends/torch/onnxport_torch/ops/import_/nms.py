"""NonMaxSuppression: greedy per batch and class, in descending score order."""

from __future__ import annotations

import torch

from onnxport import importer


def _corners(boxes, center_point_box: int):
    """Boxes -> (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2."""
    if center_point_box:
        xc, yc, w, h = boxes.unbind(-1)
        return torch.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], -1)
    y1, x1, y2, x2 = boxes.unbind(-1)
    return torch.stack([torch.minimum(y1, y2), torch.minimum(x1, x2), torch.maximum(y1, y2),
                        torch.maximum(x1, x2)], -1)


def _iou(b):
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    top = torch.maximum(b[:, None, 0], b[None, :, 0])
    left = torch.maximum(b[:, None, 1], b[None, :, 1])
    bottom = torch.minimum(b[:, None, 2], b[None, :, 2])
    right = torch.minimum(b[:, None, 3], b[None, :, 3])
    inter = (bottom - top).clamp(min=0) * (right - left).clamp(min=0)
    union = area[:, None] + area[None, :] - inter
    return torch.where(union > 0, inter / union, torch.zeros_like(inter))


@importer("NonMaxSuppression", since=11)
def non_max_suppression(ctx, boxes, scores, max_output_boxes_per_class=None, iou_threshold=None,
                        score_threshold=None, *, center_point_box):
    limit = int(max_output_boxes_per_class.reshape(-1)[0]) if max_output_boxes_per_class is not None else 0
    iou_t = float(iou_threshold.reshape(-1)[0]) if iou_threshold is not None else 0.0
    score_t = float(score_threshold.reshape(-1)[0]) if score_threshold is not None else None
    picked: list[list[int]] = []
    if limit > 0:
        corners = _corners(boxes.to(torch.float64), center_point_box)
        for b in range(scores.shape[0]):
            iou = _iou(corners[b])
            for c in range(scores.shape[1]):
                s = scores[b, c]
                order = torch.argsort(s, descending=True, stable=True).tolist()
                kept: list[int] = []
                for i in order:
                    if score_t is not None and not float(s[i]) > score_t:
                        break
                    if all(float(iou[i, k]) <= iou_t for k in kept):
                        kept.append(i)
                        if len(kept) == limit:
                            break
                picked.extend([b, c, i] for i in kept)
    return torch.tensor(picked, dtype=torch.int64, device=boxes.device).reshape(-1, 3)
