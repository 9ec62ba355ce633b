"""Window settings of TF convolution and pooling ops in ONNX form (shared by conv and pool)."""

from __future__ import annotations

from typing import Any


def spatial(values: list[int], data_format: str) -> list[int]:
    """The spatial entries of a TF per-dim list ([1, h, w, 1] NHWC, [1, 1, h, w] NCHW)."""
    return list(values[1:-1]) if not data_format.startswith("NC") else list(values[2:])


def pads(g: Any, in_spatial: list[int | None], kernel: list[int], strides: list[int], dilations: list[int],
         padding: str, explicit: list[int] | None = None, data_format: str = "NHWC") -> dict[str, Any]:
    """ONNX ``pads`` (or ``auto_pad``) for TF's "SAME" / "VALID" / "EXPLICIT" padding.

    TF's SAME puts the odd unit at the end (ONNX SAME_UPPER); with static sizes the pads are
    written out, which lets the optimizer fold a preceding Pad into them."""
    nd = len(kernel)
    if padding == "VALID":
        return {"pads": [0] * 2 * nd}
    if padding == "EXPLICIT":
        pairs = [explicit[2 * i: 2 * i + 2] for i in range(len(explicit) // 2)]
        sp = pairs[1:-1] if not data_format.startswith("NC") else pairs[2:]
        return {"pads": [p[0] for p in sp] + [p[1] for p in sp]}
    if padding != "SAME":
        raise g.error(f"padding {padding!r} is not supported")
    if any(d is None for d in in_spatial):
        return {"auto_pad": "SAME_UPPER"}
    begin, end = [], []
    for size, k, s, d in zip(in_spatial, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return {"pads": begin + end}
