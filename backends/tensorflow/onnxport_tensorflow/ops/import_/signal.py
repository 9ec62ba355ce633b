"""Signal processing: DFT, STFT (``tf.signal``), Hann/Hamming/Blackman windows and MelWeightMatrix.

Signals carry a trailing axis of size 1 (real) or 2 (real, imaginary). Lengths, axes and window
sizes decide output shapes, so they must be static (constants or values computed from them).
Window and mel matrices depend only on such scalars and are built with numpy.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.signal import cosine_window as cosine_window_values
from onnxport.opmath.signal import mel_weight_matrix as mel_weight_matrix_values
from onnxport.opmath.signal import stft_frames

from ._static import concrete, np_dtype, rank, tensor

#: testkit tolerances beyond the float32 default (rtol 1e-5, atol 1e-6): op -> dtype -> (rtol, atol, reason)
TEST_TOLERANCES = {
    "DFT": {"float32": (1e-5, 5e-5, "TensorFlow's FFT sums in another order than onnxruntime: values that should be 0 come out near 1.5e-5 (measured)"),
            "float64": (1e-5, 1e-7, "TensorFlow's float64 (inverse) real FFT differs from onnxruntime by up to 4e-6 relative, 7.8e-8 absolute (measured)")},
}


def _scalar(ctx, i: int, x, what: str):
    """Scalar input ``i`` as a Python number (static), or None when absent."""
    v = concrete(ctx, i, x, what)
    return None if v is None else v.reshape(-1)[0].item()


def _to_complex(x):
    """[..., 1] real or [..., 2] (re, im) -> a complex tensor [...] (halves widened to complex64)."""
    x = tensor(x)
    wide = tf.float64 if x.dtype == tf.float64 else tf.float32
    x = tf.cast(x, wide)
    if x.shape[-1] == 1:
        return tf.complex(x[..., 0], tf.zeros_like(x[..., 0]))
    return tf.complex(x[..., 0], x[..., 1])


def _move_last(z, axis):
    r = rank(z)
    perm = [i for i in range(r) if i != axis] + [axis]
    inv = list(np.argsort(perm))
    return tf.transpose(z, perm), inv


def _fit(z, size):
    """Crop or zero-pad the last axis of ``z`` to ``size``."""
    n = z.shape[-1]
    if n > size:
        return z[..., :size]
    if n < size:
        return tf.pad(z, [[0, 0]] * (rank(z) - 1) + [[0, size - n]])
    return z


def _fft(x, n, axis, inverse, onesided):
    """The (inverse) DFT of ``x`` [..., 1|2] along ``axis``; returns [..., 2] (or [..., 1] for irfft)."""
    dtype = tensor(x).dtype
    z = _to_complex(x)
    z, inv = _move_last(z, axis)
    if inverse and onesided:  # a one-sided (Hermitian) spectrum back to a real signal
        size = n if n is not None else 2 * (z.shape[-1] - 1)
        y = tf.signal.irfft(z, fft_length=[size]) if z.dtype == tf.complex64 else \
            tf.cast(tf.signal.irfft(tf.cast(z, tf.complex64), fft_length=[size]), tf.float64)
        return tf.cast(tf.transpose(y, inv)[..., None], dtype)
    size = n if n is not None else z.shape[-1]
    z = _fit(z, size)
    y = tf.signal.ifft(z) if inverse else tf.signal.fft(z)
    if onesided:
        y = y[..., : size // 2 + 1]
    y = tf.transpose(y, inv)
    return tf.cast(tf.stack([tf.math.real(y), tf.math.imag(y)], axis=-1), dtype)


@importer("DFT", since=20)
def dft(ctx, x, dft_length=None, axis=None, *, inverse, onesided):
    """DFT along ``axis`` (default -2, counted over the whole rank; never the trailing re/im axis)."""
    n = _scalar(ctx, 1, dft_length, "dft_length")
    a = _scalar(ctx, 2, axis, "the DFT axis")
    a = -2 if a is None else int(a)
    r = rank(x)
    if a < 0:
        a += r
    if not 0 <= a < r - 1:
        raise ctx.error(f"DFT axis {a} is not a signal axis of a rank-{r} input")
    if x.shape[-1] not in (1, 2):
        raise ctx.error(f"the last axis holds (real[, imaginary]) and must be 1 or 2, got {x.shape[-1]}")
    return _fft(x, int(n) if n is not None else None, a, bool(inverse), bool(onesided))


@importer("STFT", since=17)
def stft(ctx, signal, frame_step, window=None, frame_length=None, *, onesided):
    """Frames of ``signal`` [B, L, 1|2], windowed, transformed: [B, frames, bins, 2]."""
    step = int(_scalar(ctx, 1, frame_step, "frame_step"))
    length = _scalar(ctx, 3, frame_length, "frame_length")
    with ctx.raising():
        length, idx, valid = stft_frames(int(signal.shape[1]), step, length,
                                         None if window is None else int(window.shape[0]), onesided,
                                         int(signal.shape[-1]) == 2)
    signal = tensor(signal)
    frames = tf.gather(signal, idx, axis=1)  # [B, F, W, C]
    frames = tf.where(valid[None, :, :, None], frames, tf.zeros((), signal.dtype))
    if window is not None:
        frames = frames * tf.cast(tf.reshape(tensor(window), (1, 1, -1, 1)), frames.dtype)
    return _fft(frames, length, 2, False, bool(onesided))


@importer("HannWindow", since=17)
@importer("HammingWindow", since=17)
@importer("BlackmanWindow", since=17)
def cosine_window(ctx, size, *, output_datatype, periodic):
    """HannWindow, HammingWindow and BlackmanWindow (:func:`onnxport.opmath.signal.cosine_window`)."""
    with ctx.raising():
        w = cosine_window_values(ctx.op_type, int(_scalar(ctx, 0, size, "the window size")), periodic)
    return w.astype(np_dtype(output_datatype, np.float32))


@importer("MelWeightMatrix", since=17)
def mel_weight_matrix(ctx, num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz, *,
                      output_datatype):
    """Triangular mel filters [dft_length // 2 + 1, num_mel_bins], edges evenly spaced in mel."""
    bins = int(_scalar(ctx, 0, num_mel_bins, "num_mel_bins"))
    n_fft = int(_scalar(ctx, 1, dft_length, "dft_length"))
    rate = _scalar(ctx, 2, sample_rate, "sample_rate")
    low = _scalar(ctx, 3, lower_edge_hertz, "lower_edge_hertz")
    high = _scalar(ctx, 4, upper_edge_hertz, "upper_edge_hertz")
    with ctx.raising():
        out = mel_weight_matrix_values(bins, n_fft, rate, low, high)
    return out.astype(np_dtype(output_datatype, np.float32))
