"""dot_general (jnp.matmul, @, einsum pairs, Dense layers) -> MatMul (+ Transpose), else Einsum.
A following bias add becomes Gemm or MatMul + Add (:mod:`.arithmetic`)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import Sample, exporter

from ._samples import randint, randn

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@exporter("lax.dot_general", samples=[
    Sample(jnp.matmul, (randn(3, 4), randn(4, 5)), emits=("MatMul",)),
    Sample(jnp.matmul, (randn(2, 3, 4), randn(2, 4, 5)), emits=("MatMul",), name="batched"),
    Sample(lambda a, b: a @ b.T, (randn(3, 4), randn(5, 4)), emits=("MatMul",), name="transposed_rhs"),
    Sample(lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), (randn(2, 2, 3, 4), randn(2, 2, 5, 4)),
           emits=("MatMul",), name="attention_scores"),
    Sample(lambda q, s: jnp.einsum("bhd,bhdm->bhm", q, s), (randn(2, 3, 4), randn(2, 3, 4, 5)), emits=("MatMul",),
           name="batched_vector"),
    Sample(lambda a, b: jnp.einsum("ijk,jkl->il", a, b), (randn(3, 4, 2), randn(4, 2, 5)), emits=("Einsum",), name="einsum"),
    Sample(lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float32), (randint(-3, 3, 3, 4), randint(-3, 3, 4, 2)),
           emits=("MatMul", "Cast"), name="int_to_float"),
])
def dot_general(g, lhs, rhs, *, dimension_numbers, preferred_element_type=None, **_):
    """Batch dims leading in both, one contracted dim (last of lhs, first or last free of rhs): MatMul;
    anything else: Einsum with the same dims."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = list(lc), list(rc), list(lb), list(rb)
    out_dt = g.out_dtype()
    lhs, rhs = g.cast(lhs, out_dt), g.cast(rhs, out_dt)
    lr, rr = g.rank(lhs), g.rank(rhs)
    nb = len(lb)
    batch_ok = lb == list(range(nb)) and rb == list(range(nb))
    if batch_ok and len(lc) == 1 and lc[0] == lr - 1 and lr >= nb + 1 and rr in (nb + 1, nb + 2):
        if rr == nb + 2 and rc == [nb]:
            if lr == nb + 1:  # a vector (per batch) lhs: a 1-row matrix
                if nb == 0:
                    return g.op("MatMul", lhs, rhs)
                axis = g.const(np.asarray([-2], dtype=np.int64))
                return g.op("Squeeze", g.op("MatMul", g.op("Unsqueeze", lhs, axis), rhs), axis)
            if nb == 0 or lr == nb + 2:
                return g.op("MatMul", lhs, rhs)
        if rr == nb + 2 and rc == [nb + 1] and (nb == 0 or lr == nb + 2):
            perm = list(range(nb)) + [nb + 1, nb]
            return g.op("MatMul", lhs, g.op("Transpose", rhs, perm=perm))
        if rr == nb + 1 and rc == [nb] and lr == nb + 2 and nb == 0:
            return g.op("MatMul", lhs, rhs)
    # Einsum: letters for every dim
    lsub = list(_LETTERS[:lr])
    rsub = [None] * rr
    nxt = lr
    for a, b in zip(lb + lc, rb + rc):
        rsub[b] = lsub[a]
    for i in range(rr):
        if rsub[i] is None:
            rsub[i] = _LETTERS[nxt]
            nxt += 1
    out = [lsub[a] for a in lb]
    out += [lsub[i] for i in range(lr) if i not in lb and i not in lc]
    out += [rsub[i] for i in range(rr) if i not in rb and i not in rc]
    eq = f"{''.join(lsub)},{''.join(rsub)}->{''.join(out)}"
    return g.op("Einsum", lhs, rhs, equation=eq)
