"""RoiAlign (bilinear samples per bin, averaged or maxed) and MaxRoiPool."""

from __future__ import annotations

import math

import torch

from onnxport import importer

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "RoiAlign": {"float32": (2e-4, 1e-4, "the official node case's expected values are written to 4 decimals (measured |diff| 5e-5..8e-5)")},
}


def _axis_samples(start: float, size: float, bins: int, grid: int, limit: int, device):
    """Sample positions along one axis: low/high indices, their weights and validity [bins*grid]."""
    step = size / bins
    k = torch.arange(bins * grid, device=device, dtype=torch.float64)
    pos = start + (k // grid) * step + ((k % grid) + 0.5) * step / grid
    valid = (pos >= -1.0) & (pos <= limit)
    pos = pos.clamp(min=0.0)
    low = pos.floor().to(torch.int64)
    at_end = low >= limit - 1
    low = torch.where(at_end, torch.full_like(low, limit - 1), low)
    high = torch.where(at_end, low, low + 1)
    pos = torch.where(at_end, low.to(pos.dtype), pos)
    frac = pos - low
    return low, high, 1 - frac, frac, valid


@importer("RoiAlign", since=22)
def roi_align(ctx, x, rois, batch_indices, *, coordinate_transformation_mode, mode, output_height,
              output_width, sampling_ratio, spatial_scale):
    offset = 0.5 if coordinate_transformation_mode == "half_pixel" else 0.0
    h, w = x.shape[2], x.shape[3]
    outs = []
    for r in range(rois.shape[0]):
        x1, y1, x2, y2 = [float(v) * spatial_scale - offset for v in rois[r].tolist()]
        rw, rh = x2 - x1, y2 - y1
        if offset == 0.0:  # the legacy mode keeps rois at least one pixel wide
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = int(sampling_ratio) if sampling_ratio > 0 else math.ceil(rh / output_height)
        gw = int(sampling_ratio) if sampling_ratio > 0 else math.ceil(rw / output_width)
        yl, yh, wyl, wyh, vy = _axis_samples(y1, rh, output_height, gh, h, x.device)
        xl, xh, wxl, wxh, vx = _axis_samples(x1, rw, output_width, gw, w, x.device)
        img = x[int(batch_indices[r])]
        valid = (vy[:, None] & vx[None, :]).to(x.dtype)
        terms = []
        for yi, wy in ((yl, wyl), (yh, wyh)):
            for xi, wx in ((xl, wxl), (xh, wxh)):
                weight = (wy[:, None] * wx[None, :]).to(x.dtype) * valid
                terms.append(img[:, yi][:, :, xi] * weight)
        c = img.shape[0]
        if mode == "avg":
            v = sum(terms).reshape(c, output_height, gh, output_width, gw).mean(dim=(2, 4))
        elif mode == "max":
            v = torch.stack(terms).amax(0).reshape(c, output_height, gh, output_width, gw).amax(dim=(2, 4))
        else:
            raise ctx.error(f"unknown RoiAlign mode {mode!r}")
        outs.append(v)
    if not outs:
        return x.new_zeros((0, x.shape[1], output_height, output_width))
    return torch.stack(outs)


@importer("MaxRoiPool", since=22)  # declared cases: the testkit's semantic_cases
def max_roi_pool(ctx, x, rois, *, pooled_shape, spatial_scale):
    ph_n, pw_n = int(pooled_shape[0]), int(pooled_shape[1])
    h, w = x.shape[2], x.shape[3]
    outs = []
    for r in range(rois.shape[0]):
        b, x1, y1, x2, y2 = rois[r].tolist()
        # C's round (half away from zero), as Caffe and onnxruntime do; Python's round() is half-to-even
        sx, sy, ex, ey = (int(math.copysign(math.floor(abs(v) * spatial_scale + 0.5), v)) for v in (x1, y1, x2, y2))
        bin_h, bin_w = max(ey - sy + 1, 1) / ph_n, max(ex - sx + 1, 1) / pw_n
        img = x[int(b)]
        rows = []
        for ph in range(ph_n):
            hs = min(max(math.floor(ph * bin_h) + sy, 0), h)
            he = min(max(math.ceil((ph + 1) * bin_h) + sy, 0), h)
            cols = []
            for pw in range(pw_n):
                ws = min(max(math.floor(pw * bin_w) + sx, 0), w)
                we = min(max(math.ceil((pw + 1) * bin_w) + sx, 0), w)
                if he <= hs or we <= ws:
                    cols.append(img.new_zeros(img.shape[0]))
                else:
                    cols.append(img[:, hs:he, ws:we].amax(dim=(1, 2)))
            rows.append(torch.stack(cols, -1))
        outs.append(torch.stack(rows, -2))
    return torch.stack(outs) if outs else x.new_zeros((0, x.shape[1], ph_n, pw_n))
