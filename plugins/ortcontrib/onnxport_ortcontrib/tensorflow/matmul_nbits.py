"""MatMulNBits (com.microsoft) for TensorFlow: ``A @ dequantize(B).T + bias`` with B packed 2, 4
or 8 bits per value in blocks along K. B stays packed (uint8, as the file stores it) and is
unpacked on each call."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import matmul_nbits as C
from ..cases.matmul_nbits import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import nbits_layout, nbits_shifts


def _unpack(packed, bits, rows, count):
    """uint8 (rows, bytes) -> the first ``count`` ``bits``-wide values of each row, as float32."""
    shifts = tf.constant(nbits_shifts(bits), tf.uint8)
    vals = tf.bitwise.bitwise_and(tf.bitwise.right_shift(packed[..., None], shifts), tf.constant((1 << bits) - 1, tf.uint8))
    return tf.cast(tf.reshape(vals, [rows, -1])[:, :count], tf.float32)


@importer("MatMulNBits", since=1, domain=DOMAIN, cases=C.matmul_nbits_cases())
def matmul_nbits(ctx, a, b, scales, zero_points=None, g_idx=None, bias=None, *, K, N, bits=4, block_size,
                 accuracy_level=0):
    """Each row n of the (N, K) weight is ``(q - zero_point) * scale`` per block (per column k with
    ``g_idx``: group ``g_idx[k]``); zero points default to ``2**(bits-1)``, come packed (uint8) or
    as floats. ``accuracy_level`` only lets onnxruntime lower its precision: this computes at
    the most accurate level."""
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    with ctx.raising():
        k_blocks, _ = nbits_layout(K, N, bits, block_size, tuple(b.shape))
    dtype = a.dtype
    q = _unpack(tf.reshape(b, [N, -1]), bits, N, k_blocks * block_size)
    s = tf.cast(tf.reshape(scales, [N, k_blocks]), tf.float32)
    if zero_points is None:
        zp = tf.fill([N, k_blocks], float(1 << (bits - 1)))
    else:
        zero_points = tf.convert_to_tensor(zero_points)
        if zero_points.dtype == tf.uint8:
            zp = _unpack(tf.reshape(zero_points, [N, -1]), bits, N, k_blocks)
        else:
            zp = tf.cast(tf.reshape(zero_points, [N, k_blocks]), tf.float32)
    if g_idx is not None:
        w = (q[:, :K] - tf.gather(zp, g_idx, axis=1)) * tf.gather(s, g_idx, axis=1)
    else:
        w = (tf.reshape(q, [N, k_blocks, block_size]) - zp[..., None]) * s[..., None]
        w = tf.reshape(w, [N, -1])[:, :K]
    if dtype == tf.float16:
        w = tf.cast(tf.cast(w, dtype), tf.float32)  # onnxruntime dequantizes half weights in half precision
    a32 = tf.cast(a, tf.float32)
    y = tf.tensordot(a32, w, axes=[[len(a.shape) - 1], [1]])
    if bias is not None:
        y = y + tf.cast(bias, tf.float32)
    return tf.cast(y, dtype)
