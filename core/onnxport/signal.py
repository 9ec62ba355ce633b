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
