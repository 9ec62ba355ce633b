"""Framework-free numpy maths of ONNX signal ops, shared by every backend's primitives."""

from __future__ import annotations

import numpy as np


def mel_weight_matrix(num_mel_bins: int, dft_length: int, sample_rate: float,
                      lower_edge_hertz: float, upper_edge_hertz: float) -> np.ndarray:
    """ONNX MelWeightMatrix as float64 ``[dft_length // 2 + 1, num_mel_bins]``: triangular
    filters whose edges are evenly spaced on the mel scale, mapped to DFT bin indices.

    Raises ValueError when a count or the sample rate is not positive.
    """
    bins, n_fft, rate = int(num_mel_bins), int(dft_length), sample_rate
    if bins <= 0 or n_fft <= 0 or rate <= 0:
        raise ValueError("num_mel_bins, dft_length and sample_rate must be positive")
    low_mel = 2595 * np.log1p(lower_edge_hertz / 700) / np.log(10)
    high_mel = 2595 * np.log1p(upper_edge_hertz / 700) / np.log(10)
    mel = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
    hz = 700 * np.expm1(mel / 2595 * np.log(10))
    edges = (((n_fft + 1) * hz) // rate).astype(np.int64)  # filter edges as DFT bin indices
    out = np.zeros((n_fft // 2 + 1, bins), dtype=np.float64)
    for i in range(bins):
        left, center, right = edges[i], edges[i + 1], edges[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            j = np.arange(left, center + 1)
            out[j, i] = (j - left) / (center - left)
        if right > center:
            j = np.arange(center, right)
            out[j, i] = (right - j) / (right - center)
    return out


#: the cosine terms ``a_j`` of ONNX's generalized cosine windows
WINDOW_TERMS: dict[str, tuple[float, ...]] = {
    "HannWindow": (0.5, -0.5),
    "HammingWindow": (25.0 / 46.0, -(1 - 25.0 / 46.0)),
    "BlackmanWindow": (0.42, -0.5, 0.08),
}


def cosine_window(op_type: str, size: int, periodic: int) -> np.ndarray:
    """HannWindow / HammingWindow / BlackmanWindow as float64: ``sum_j a_j cos(2 pi j k / N)``
    with N = size (periodic) or size - 1 (symmetric). Raises ValueError for a negative size."""
    n = int(size)
    if n < 0:
        raise ValueError(f"window size {n} is negative")
    denom = n if periodic else n - 1
    k = np.arange(n, dtype=np.float64)
    w = np.zeros(n, dtype=np.float64)
    for j, a in enumerate(WINDOW_TERMS[op_type]):
        w += a * (np.cos(2 * np.pi * j * k / denom) if denom else 1.0)
    return w


def stft_frames(signal_length: int, step: int, frame_length: int | None, window_length: int | None,
                onesided: int, complex_input: bool) -> tuple[int, np.ndarray, np.ndarray]:
    """STFT's framing: ``(frame length, indices [frames, width], valid [frames, width])``.

    The frame length is ``frame_length``, else the window's, else the whole signal; a window
    wider than the frame reads past it (``valid`` is False there, the sample counts as 0).
    Raises ValueError for non-positive sizes, a onesided complex signal, or no whole frame.
    """
    width = window_length
    length = int(frame_length) if frame_length is not None else (width if width is not None else signal_length)
    width = width if width is not None else length
    if step <= 0 or length <= 0:
        raise ValueError(f"frame_step ({step}) and frame_length ({length}) must be positive")
    if onesided and complex_input:
        raise ValueError("onesided STFT needs a real signal")
    count = 1 + (signal_length - length) // step
    if count <= 0:
        raise ValueError(f"a signal of length {signal_length} holds no frame of length {length}")
    idx = np.arange(count)[:, None] * step + np.arange(width)[None, :]  # [F, W]
    return length, np.minimum(idx, signal_length - 1), idx < signal_length
