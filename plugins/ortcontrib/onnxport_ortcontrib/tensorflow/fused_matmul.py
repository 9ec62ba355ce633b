"""FusedMatMul (com.microsoft) for TensorFlow: ``alpha * op(A) @ op(B)``."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from .. import DOMAIN
from ..cases import fused_matmul as C
from ..cases.fused_matmul import TEST_TOLERANCES  # noqa: F401  (the testkit reads it here)
from ..opmath import fused_matmul_perm
from ._common import wide


def _matmul(a, b):
    """numpy-style matmul: broadcast batch dims, vectors promoted and squeezed."""
    ra, rb = len(a.shape), len(b.shape)
    if ra == 1:
        return tf.squeeze(_matmul(a[None, :], b), axis=-2)
    if rb == 1:
        return tf.squeeze(_matmul(a, b[:, None]), axis=-1)
    if ra != rb or (ra > 2 and a.shape[:-2] != b.shape[:-2]):
        batch = tf.broadcast_dynamic_shape(tf.shape(a)[:-2], tf.shape(b)[:-2])
        a = tf.broadcast_to(a, tf.concat([batch, tf.shape(a)[-2:]], 0))
        b = tf.broadcast_to(b, tf.concat([batch, tf.shape(b)[-2:]], 0))
    return tf.linalg.matmul(a, b)


@importer("FusedMatMul", since=1, domain=DOMAIN, cases=C.fused_matmul_cases())
def fused_matmul(ctx, a, b, *, alpha=1.0, transA=0, transB=0, transBatchA=0, transBatchB=0):
    """MatMul of A and B after their transposes (``trans*``: the last two dims; ``transBatch*``:
    dim 0 moved behind the batch dims), times ``alpha``."""
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    with ctx.raising():
        pa = fused_matmul_perm(len(a.shape), transA, transBatchA)
        pb = fused_matmul_perm(len(b.shape), transB, transBatchB)
    a2 = wide(a) if pa is None else tf.transpose(wide(a), pa)
    b2 = wide(b) if pb is None else tf.transpose(wide(b), pb)
    y = _matmul(a2, b2)
    return tf.cast(y * alpha if alpha != 1.0 else y, a.dtype)
