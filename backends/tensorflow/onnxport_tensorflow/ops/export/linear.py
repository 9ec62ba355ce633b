"""MatMul, BatchMatMulV2/BatchMatMul, Einsum -> MatMul, Einsum (Transposes for TF's adjoint flags)."""

from __future__ import annotations

import keras
import tensorflow as tf

from onnxport import Sample, exporter

from ._samples import fn, rand

_W = rand(4, 2, 3)


def _swap_last(g, x):
    rank = g.rank(x)
    return g.op("Transpose", x, perm=list(range(rank - 2)) + [rank - 1, rank - 2])


@exporter(
    "MatMul",
    samples=[Sample(keras.layers.Dense(4, use_bias=False), (rand(3, 5),), emits=("MatMul",), name="dense"),
             Sample(fn(lambda a, b: tf.matmul(a, b, transpose_b=True)), (rand(3, 5), rand(4, 5)),
                    emits=("MatMul", "Transpose"), name="transposed"),
             Sample(fn(lambda a, b: tf.matmul(a, b, transpose_a=True)), (rand(3, 4), rand(3, 5)),
                    emits=("MatMul", "Transpose"), name="transposed_a")],
)
def matmul(g, a, b):
    if g.attr("transpose_a", False):
        a = _swap_last(g, a)
    if g.attr("transpose_b", False):
        b = _swap_last(g, b)
    return g.op("MatMul", a, b)


@exporter(
    "BatchMatMulV2", "BatchMatMulV3", "BatchMatMul",
    samples=[Sample(fn(lambda a, b: tf.matmul(a, b)), (rand(2, 3, 4), rand(4, 5)), emits=("MatMul",), name="bcast"),
             Sample(fn(lambda a, b: tf.matmul(a, b, adjoint_b=True)), (rand(2, 3, 4), rand(2, 5, 4)),
                    emits=("MatMul",), name="adjoint")],
)
def batch_matmul(g, a, b):
    if g.attr("adj_x", False):
        a = _swap_last(g, a)
    if g.attr("adj_y", False):
        b = _swap_last(g, b)
    return g.op("MatMul", a, b)


@exporter(
    "Einsum",
    samples=[Sample(fn(lambda a, b: tf.einsum("bij,bjk->bik", a, b)), (rand(2, 3, 4), rand(2, 4, 5)),
                    emits=("Einsum",), name="bmm"),
             Sample(fn(lambda a: tf.einsum("abc,cde->abde", a, _W)), (rand(2, 3, 4),), emits=("Einsum",),
                    name="projection")],
)
def einsum(g, *operands):
    return g.op("Einsum", *operands, equation=g.attr("equation").replace(" ", ""))
