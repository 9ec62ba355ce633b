"""Control flow: cond / switch -> If (nested for more than two branches), while_loop / fori_loop ->
Loop, scan (reverse too) -> Loop with scan outputs. Bodies are subgraphs that read outer values."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import onnx_ir as ir
from jax import lax

from onnxport import Sample, exporter

from ._samples import randn

_X = randn(3, 4)


def _branch(g, closed, operands, name: str) -> ir.Graph:
    sub = g.subgraph(name)
    outs = sub.inline(closed, operands)
    for v in outs:
        sub.output(v)
    return sub.graph()


@exporter("lax.cond", samples=[
    Sample(lambda x: lax.cond(x.sum() > 0, lambda t: jnp.sin(t) * 2, lambda t: jnp.cos(t), x), (_X,), emits=("If",)),
    Sample(lambda x: lax.cond(x.sum() < 0, lambda t: jnp.sin(t) * 2, lambda t: jnp.cos(t), x), (_X,), emits=("If",),
           name="false"),
    Sample(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda t: t * 3], x), (jnp.asarray(2, jnp.int32), _X),
           emits=("If",), name="switch"),
])
def cond(g, index, *operands, branches, **_):
    """Branch i runs where the index is i (JAX clamps the index to the branches)."""
    n = len(branches)
    if n == 1:
        return tuple(g.inline(branches[0], operands))
    nout = len(branches[0].out_avals)
    if index.dtype == ir.DataType.BOOL:
        index = g.cast(index, ir.DataType.INT32)
    idx = g.op("Clip", g.cast(index, ir.DataType.INT64), g.const(np.asarray(0, np.int64)), g.const(np.asarray(n - 1, np.int64)))

    def build(gb, first: int) -> tuple:
        """``If(idx == first, branch first, rest)``, the last pair as one If."""
        then_g = _branch(gb, branches[first + 1], operands, f"branch_{first + 1}") if first == n - 2 else None
        test = gb.op("Equal", idx, gb.const(np.asarray(first, np.int64)))
        this = _branch(gb, branches[first], operands, f"branch_{first}")
        if first == n - 2:
            outs = gb.op("If", test, then_branch=this, else_branch=then_g, outputs=nout)
        else:
            sub = gb.subgraph(f"branches_{first + 1}")
            rest = build(sub, first + 1)
            for v in rest:
                sub.output(v)
            outs = gb.op("If", test, then_branch=this, else_branch=sub.graph(), outputs=nout)
        return outs if isinstance(outs, tuple) else (outs,)

    outs = build(g, 0)
    for v, aval in zip(outs, branches[0].out_avals):
        g.converter.annotate(v, aval)
    return outs


@exporter("lax.while", samples=[
    Sample(lambda x: lax.while_loop(lambda c: c[1] < 5, lambda c: (c[0] * 1.5 + 1, c[1] + 1), (x, 0))[0], (_X,),
           emits=("Loop",)),
    Sample(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i * c, x), (_X, jnp.asarray(3, jnp.int32)),
           emits=("Loop",), name="fori_dynamic"),
    Sample(lambda x: lax.while_loop(lambda c: jnp.sum(c) < 100.0, lambda c: c * 2 + 1, x), (jnp.abs(_X),),
           emits=("Loop",), name="data_dependent"),
])
def while_(g, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Loop with no trip count: the condition is evaluated before the loop and at the end of each body."""
    cconsts = list(args[:cond_nconsts])
    bconsts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    first = g.inline(cond_jaxpr, cconsts + carry)[0]
    body = g.subgraph("loop_body")
    body.input(body.fresh("iteration"), ir.DataType.INT64, [])
    body.input(body.fresh("cond_in"), ir.DataType.BOOL, [])
    avals = body_jaxpr.in_avals[body_nconsts:]
    state = [body.sub_input("carry", a) for a in avals]
    new = body.inline(body_jaxpr, bconsts + state)
    keep = body.inline(cond_jaxpr, cconsts + list(new))[0]
    body.output(keep)
    for v in new:
        body.output(v)
    outs = g.op("Loop", None, first, *carry, body=body.graph(), outputs=len(carry))
    outs = outs if isinstance(outs, tuple) else (outs,)
    for v, a in zip(outs, avals):
        g.converter.annotate(v, a)
    return outs


def _rnn(h, x, w):
    return jnp.tanh(x @ w + h)


@exporter("lax.scan", samples=[
    Sample(lambda xs: lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(4), xs), (randn(5, 4),), emits=("Loop",)),
    Sample(lambda xs: lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(4), xs, reverse=True), (randn(5, 4),),
           emits=("Loop",), name="reverse"),
    Sample(lambda x: lax.fori_loop(0, 4, lambda i, c: c * 0.5 + i, x), (_X,), emits=("Loop",), name="fori_static"),
    Sample(lambda xs, w: lax.scan(lambda h, x: (_rnn(h, x, w),) * 2, jnp.zeros((2, 3)), xs), (randn(6, 2, 3), randn(3, 3)),
           emits=("Loop",), name="rnn"),
])
def scan(g, *args, jaxpr, length, reverse, num_consts, num_carry, **_):
    """Loop of ``length`` steps: step t reads row t of each xs (length-1-t when reversed); the ys are
    the Loop's scan outputs (put back in order when reversed)."""
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])
    body = g.subgraph("scan_body")
    it = body.input(body.fresh("iteration"), ir.DataType.INT64, [])
    cond_in = body.input(body.fresh("cond_in"), ir.DataType.BOOL, [])
    avals = jaxpr.in_avals[num_consts:num_consts + num_carry]
    state = [body.sub_input("carry", a) for a in avals]
    t = it
    if reverse:
        t = body.op("Sub", body.const(np.asarray(length - 1, np.int64)), it)
    rows = [body.op("Gather", x, t, axis=0) for x in xs]
    for row, aval in zip(rows, jaxpr.in_avals[num_consts + num_carry:]):
        g.converter.annotate(row, aval)
    outs = body.inline(jaxpr, consts + state + rows)
    body.output(body.op("Identity", cond_in))
    for v in outs:
        body.output(v)
    n_ys = len(outs) - num_carry
    res = g.op("Loop", g.const(np.asarray(length, np.int64)), g.const(np.asarray(True)), *carry,
               body=body.graph(), outputs=num_carry + n_ys)
    res = list(res) if isinstance(res, tuple) else [res]
    big = np.iinfo(np.int64).min
    for i in range(num_carry, len(res)):
        if reverse:
            res[i] = g.op("Slice", res[i], g.const(np.asarray([-1], np.int64)), g.const(np.asarray([big], np.int64)),
                          g.const(np.asarray([0], np.int64)), g.const(np.asarray([-1], np.int64)))
    for v, var in zip(res, g.eqn.outvars):
        g.converter.annotate(v, var.aval)
    return tuple(res)
