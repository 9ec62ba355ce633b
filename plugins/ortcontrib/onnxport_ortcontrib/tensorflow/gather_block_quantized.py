"""GatherBlockQuantized (com.microsoft) for TensorFlow: gather rows of a blockwise-quantized
table and dequantize them. The table stays packed; only the gathered rows are unpacked."""

from __future__ import annotations

import onnx_ir as ir
import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import gather_block_quantized as C
from ..cases.gather_block_quantized import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import gather_block_layout


def _values(x, packed, bits):
    """Quantized values as float32: uint8 bytes unpacked (first value low) or the values as they are."""
    if packed and bits == 4:
        lo = tf.bitwise.bitwise_and(x, tf.constant(0xF, x.dtype))
        hi = tf.bitwise.right_shift(x, tf.constant(4, x.dtype))
        x = tf.stack((lo, hi), axis=-1)
        return tf.cast(tf.reshape(x, tf.concat([tf.shape(x)[:-2], [-1]], 0)), tf.float32)
    return tf.cast(x, tf.float32)


def _narrow(x, axis, length):
    return tf.gather(x, tf.range(length), axis=axis)


@importer("GatherBlockQuantized", since=1, domain=DOMAIN, cases=C.gather_block_quantized_cases())
def gather_block_quantized(ctx, data, indices, scales, zero_points=None, *, bits=4, block_size=128,
                           gather_axis=0, quantize_axis=1):
    """``take((q - zero_point) * scale, indices, gather_axis)``, scale and zero point per block of
    ``block_size`` along ``quantize_axis``; the default zero point is 8 (uint4 and packed uint8,
    4 bits), 128 (uint8, 8 bits) or 0 (int4)."""
    data, scales = tf.convert_to_tensor(data), tf.convert_to_tensor(scales)
    packed = ctx.input_dtype(0) == ir.DataType.UINT8
    with ctx.raising():
        ga, qa = gather_block_layout(tuple(data.shape), packed, bits, block_size, gather_axis, quantize_axis)
    indices = tf.convert_to_tensor(indices)
    flat = tf.reshape(indices, [-1])
    flat = tf.where(flat < 0, flat + tf.cast(tf.shape(data)[ga], flat.dtype), flat)
    q = _values(tf.gather(data, flat, axis=ga), packed, bits)
    s = tf.cast(tf.gather(scales, flat, axis=ga), tf.float32)
    length = tf.shape(q)[qa]
    if zero_points is None:
        zp = tf.constant(0.0 if ctx.input_dtype(0) == ir.DataType.INT4 else float(1 << (bits - 1)))
    else:
        zp = _narrow(_values(tf.gather(zero_points, flat, axis=ga), packed, bits), qa, tf.shape(s)[qa])
        zp = _narrow(tf.repeat(zp, block_size, axis=qa), qa, length)
    s = _narrow(tf.repeat(s, block_size, axis=qa), qa, length)
    y = tf.cast((q - zp) * s, scales.dtype)
    dims = tf.shape(y)
    return tf.reshape(y, tf.concat([dims[:ga], tf.shape(indices), dims[ga + 1:]], 0))
