"""Signal processing: DFT, STFT (``torch.fft``), Hann/Hamming/Blackman windows, MelWeightMatrix."""

from __future__ import annotations

import numpy as np
import torch

from onnxport import importer
from onnxport.opmath.signal import cosine_window as cosine_window_values
from onnxport.opmath.signal import mel_weight_matrix as mel_weight_matrix_values

from ... import dtypes


def _scalar(ctx, i: int, t) -> float | None:
    if t is None:
        return None
    c = ctx.const(i)
    return (np.asarray(c) if c is not None else t.detach().cpu().numpy()).reshape(-1)[0].item()


def _complex(x):
    """[..., 1] real or [..., 2] (re, im) -> a complex tensor [...] (half types widened)."""
    if x.dtype not in (torch.float32, torch.float64):
        x = x.to(torch.float32)
    if x.shape[-1] == 1:
        return torch.complex(x[..., 0], torch.zeros_like(x[..., 0]))
    return torch.view_as_complex(x.contiguous())


def _dft(ctx, x, n, axis: int, inverse: bool, onesided: bool):
    dtype = x.dtype
    z = _complex(x)
    axis = axis % z.dim()
    if inverse and onesided:  # a one-sided (Hermitian) spectrum back to a real signal
        size = n if n is not None else 2 * (z.shape[axis] - 1)
        return torch.fft.irfft(z, n=size, dim=axis).unsqueeze(-1).to(dtype)
    size = n if n is not None else z.shape[axis]
    y = (torch.fft.ifft if inverse else torch.fft.fft)(z, n=size, dim=axis)
    if onesided:
        y = y.narrow(axis, 0, size // 2 + 1)
    return torch.view_as_real(y).to(dtype)


@importer("DFT", since=20)
def dft(ctx, x, dft_length=None, axis=None, *, inverse, onesided):
    n = _scalar(ctx, 1, dft_length)
    a = _scalar(ctx, 2, axis)
    a = -2 if a is None else int(a)
    # axis counts the signal dims; the trailing (re, im) axis is never transformed
    if a < 0:
        a = x.dim() + a
    if a >= x.dim() - 1 or a < 0:
        raise ctx.error(f"DFT axis {a} is not a signal axis of a rank-{x.dim()} input")
    return _dft(ctx, x, int(n) if n is not None else None, a, bool(inverse), bool(onesided))


@importer("STFT", since=17)
def stft(ctx, signal, frame_step, window=None, frame_length=None, *, onesided):
    step = int(_scalar(ctx, 1, frame_step))
    length = _scalar(ctx, 3, frame_length)
    length = int(length) if length is not None else int(window.shape[0])
    frames = signal.unfold(1, length, step)  # [B, F, C, L]
    frames = frames.movedim(-1, 2)  # [B, F, L, C]
    if window is not None:
        frames = frames * window.to(frames.dtype).reshape(1, 1, -1, 1)
    return _dft(ctx, frames, None, 2, False, bool(onesided))


@importer("HannWindow", since=17)
@importer("HammingWindow", since=17)
@importer("BlackmanWindow", since=17)
def cosine_window(ctx, size, *, output_datatype, periodic):
    """HannWindow, HammingWindow and BlackmanWindow (:func:`onnxport.opmath.signal.cosine_window`)."""
    with ctx.raising():
        w = cosine_window_values(ctx.op_type, int(_scalar(ctx, 0, size)), periodic)
    return torch.from_numpy(w).to(dtypes.to_torch_dtype(output_datatype))


@importer("MelWeightMatrix", since=17)
def mel_weight_matrix(ctx, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *,
                      output_datatype):
    bins = int(_scalar(ctx, 0, num_mel_bins))
    n_fft = int(_scalar(ctx, 1, dft_length))
    rate = _scalar(ctx, 2, sample_rate)
    low, high = _scalar(ctx, 3, lower_edge_hertz), _scalar(ctx, 4, upper_edge_hertz)
    with ctx.raising():
        out = mel_weight_matrix_values(bins, n_fft, rate, low, high)
    return torch.from_numpy(out).to(dtypes.to_torch_dtype(output_datatype))
