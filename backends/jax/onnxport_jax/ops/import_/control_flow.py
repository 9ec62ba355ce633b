"""If, Loop and Scan. Subgraphs arrive as callables ``body(*inputs) -> list`` (outer values bound).

If: a Python ``if`` on a known condition, else ``lax.cond``. Loop: a Python loop when nothing is
traced (any shapes, sequences, early exit); under tracing ``lax.scan`` for a fixed trip count
without a condition; a Python loop while the values stay concrete (``jax.grad`` outside ``jit``:
reverse-differentiable); a masked ``lax.scan`` over a static trip count (at most
:data:`MASKED_SCAN_LIMIT`) with a data-dependent condition (reverse-differentiable, runs every
iteration); ``lax.while_loop`` when there are no scan outputs (forward-mode only: JAX cannot
reverse-differentiate it, so ``jax.grad`` of a jitted model with such a loop fails in JAX); a
Python (unrolled) loop while the condition stays static, else a DataDependentError naming the
node. Scan: ``lax.scan``.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from onnxport import importer

from ...context import DataDependentError
from ._static import is_tracer

#: the largest static trip count run as a masked ``lax.scan`` when the condition is data-dependent
MASKED_SCAN_LIMIT = 10_000


def _traced(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_traced(e) for e in x)
    return is_tracer(x)


def _jnp(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_jnp(e) for e in x]
    return jnp.asarray(x)


def _flag(x: Any) -> bool:
    return bool(np.asarray(x).reshape(-1)[0])


def _concrete(x: Any) -> np.ndarray | None:
    """``x``'s value when it is known now (a JVP/linearize tracer outside ``jit`` too), else None."""
    if not is_tracer(x):
        return np.asarray(x)
    value = getattr(x, "to_concrete_value", lambda: None)()
    return None if value is None else np.asarray(value)


@importer("If", since=25)
def if_(ctx, cond, *, else_branch, then_branch):
    if not _traced(cond):
        return _outputs(ctx, then_branch() if _flag(cond) else else_branch())
    try:
        outs = lax.cond(jnp.reshape(cond, ()).astype(bool),
                        lambda: tuple(_jnp(then_branch())), lambda: tuple(_jnp(else_branch())))
    except TypeError as exc:  # branches disagree in shape or type: only one can run, eagerly
        raise ctx.data_dependent(f"which branch runs (the branches' outputs differ: {exc})") from exc
    return _outputs(ctx, list(outs))


def _outputs(ctx, outs: list) -> Any:
    return outs[0] if ctx.num_outputs == 1 else tuple(outs)


@importer("Loop", since=25)
def loop(ctx, trip_count, cond, *v_initial, body):
    n_carried = len(v_initial)
    n_scan = body.num_outputs - 1 - n_carried
    m = None if trip_count is None else (ctx.const(0) if ctx.const(0) is not None else trip_count)
    traced = _traced(m) or _traced(cond) or _traced(list(v_initial))
    if not traced:
        return _outputs(ctx, _python_loop(ctx, m, cond, list(v_initial), body, n_carried))
    if cond is None and m is not None and not _traced(m):
        return _outputs(ctx, _scan_loop(ctx, int(np.asarray(m)), list(v_initial), body, n_carried))
    if _concrete(m) is not None and (cond is None or _concrete(cond) is not None):
        try:  # concrete values under autodiff (grad outside jit): a Python loop JAX can reverse
            return _outputs(ctx, _python_loop(ctx, m, cond, list(v_initial), body, n_carried))
        except DataDependentError:
            pass  # the body's condition is traced (jit): a structured loop below
    static_m = None if m is None or _traced(m) else int(np.asarray(m).reshape(-1)[0])
    if n_scan == 0 and cond is not None and static_m is not None and static_m <= MASKED_SCAN_LIMIT:
        return _outputs(ctx, _masked_scan(ctx, static_m, cond, list(v_initial), body))
    if n_scan == 0:
        return _outputs(ctx, _while_loop(ctx, m, cond, list(v_initial), body))
    return _outputs(ctx, _python_loop(ctx, m, cond, list(v_initial), body, n_carried))


def _python_loop(ctx, m, cond, values, body, n_carried):
    """ONNX Loop semantics step by step; under tracing the condition must stay static."""
    known = None if m is None else _concrete(m)
    if m is not None and known is None:
        raise ctx.data_dependent("the Loop trip count (it is traced)")
    limit = None if known is None else int(known.reshape(-1)[0])
    if limit is None and cond is None:
        raise ctx.error("Loop has neither a trip count nor a condition: it would never end")
    go = np.array(True) if cond is None else cond
    scans: list[list] = []
    i = 0
    while limit is None or i < limit:
        if cond is not None:
            flag = _concrete(go)
            if flag is None:
                raise ctx.data_dependent("the number of Loop iterations (its condition is traced)")
            if not _flag(flag):
                break
        outs = body(np.array(i, np.int64), go, *values)
        values = list(outs[1:1 + n_carried])
        scans.append(list(outs[1 + n_carried:]))
        if cond is not None:  # without a condition input the body's condition is ignored
            go = outs[0]
        i += 1
    stacked = []
    for k in range(body.num_outputs - 1 - n_carried):
        col = [s[k] for s in scans]
        if col:
            stacked.append(np.stack(col) if all(isinstance(c, np.ndarray) for c in col) else jnp.stack(col))
        else:
            stacked.append(_empty_scan(ctx, body, 1 + n_carried + k))
    return values + stacked


def _empty_scan(ctx, body, k):
    """The [0, ...] scan output of a loop that ran no iteration, from the body's declared type."""
    from ...dtypes import to_numpy_dtype

    shape, dtype = body.output_shapes[k], body.output_dtypes[k]
    if shape is None or dtype is None or not all(isinstance(d, int) for d in shape):
        raise ctx.error(f"Loop ran no iteration and body output {k} has no static shape")
    return np.zeros((0, *shape), to_numpy_dtype(dtype))


def _scan_loop(ctx, m, values, body, n_carried):
    """A fixed trip count and no condition: ``lax.scan`` over the iteration number."""
    def step(carry, i):
        outs = body(i, jnp.array(True), *carry)
        new = [jnp.asarray(v).astype(jnp.asarray(c).dtype) for v, c in zip(outs[1:1 + n_carried], carry)]
        return new, [jnp.asarray(s) for s in outs[1 + n_carried:]]

    try:
        carry, ys = lax.scan(step, _jnp(values), jnp.arange(m, dtype=jnp.int64))
    except TypeError as exc:
        raise ctx.data_dependent(f"the Loop-carried shapes (they change between iterations: {exc})") from exc
    return list(carry) + list(ys)


def _masked_scan(ctx, m, cond, values, body):
    """A static trip count and a data-dependent condition, no scan outputs: ``lax.scan`` over all
    ``m`` iterations, the carried values frozen once the condition is false (reverse-differentiable)."""
    def step(state, i):
        go, carry = state
        outs = body(i, go, *carry)
        new = [jnp.where(go, jnp.asarray(v).astype(jnp.asarray(c).dtype), c) for v, c in zip(outs[1:], carry)]
        return (go & jnp.asarray(outs[0]).reshape(()).astype(bool), new), None

    go = jnp.asarray(cond).reshape(()).astype(bool)
    try:
        (_, carry), _ = lax.scan(step, (go, _jnp(values)), jnp.arange(m, dtype=jnp.int64))
    except TypeError as exc:
        raise ctx.data_dependent(f"the Loop-carried shapes (they change between iterations: {exc})") from exc
    return list(carry)


def _while_loop(ctx, m, cond, values, body):
    """No scan outputs: ``lax.while_loop`` on (iteration, condition, carried values)."""
    limit = None if m is None else jnp.asarray(m, jnp.int64).reshape(())

    def keep_going(state):
        i, c, _ = state
        ok = c if limit is None else c & (i < limit)
        return ok

    def step(state):
        i, c, carry = state
        outs = body(i, c, *carry)
        new = [jnp.asarray(v).astype(jnp.asarray(o).dtype) for v, o in zip(outs[1:], carry)]
        nc = jnp.asarray(outs[0]).reshape(()).astype(bool) if cond is not None else jnp.array(True)
        return i + 1, nc, new

    c0 = jnp.array(True) if cond is None else jnp.asarray(cond).reshape(()).astype(bool)
    try:
        _, _, carry = lax.while_loop(keep_going, step, (jnp.array(0, jnp.int64), c0, _jnp(values)))
    except TypeError as exc:
        raise ctx.data_dependent(f"the Loop-carried shapes (they change between iterations: {exc})") from exc
    return list(carry)


@importer("Scan", since=25)
def scan(ctx, *inputs, body, num_scan_inputs, scan_input_axes, scan_input_directions,
         scan_output_axes, scan_output_directions):
    """``lax.scan`` over the scan inputs' axes (directions and output axes as the attributes say)."""
    n_state = len(inputs) - num_scan_inputs
    states, xs = list(inputs[:n_state]), list(inputs[n_state:])
    in_axes = list(scan_input_axes or [0] * num_scan_inputs)
    in_dirs = list(scan_input_directions or [0] * num_scan_inputs)
    seq = []
    for x, a, d in zip(xs, in_axes, in_dirs):
        x = jnp.moveaxis(jnp.asarray(x), a % x.ndim, 0)
        seq.append(jnp.flip(x, 0) if d else x)
    n_out = body.num_outputs - n_state

    def step(carry, slices):
        outs = body(*carry, *slices)
        new = [jnp.asarray(v).astype(jnp.asarray(c).dtype) for v, c in zip(outs[:n_state], carry)]
        return new, [jnp.asarray(o) for o in outs[n_state:]]

    carry, ys = lax.scan(step, _jnp(states), seq)
    out_axes = list(scan_output_axes or [0] * n_out)
    out_dirs = list(scan_output_directions or [0] * n_out)
    outs = []
    for y, a, d in zip(ys, out_axes, out_dirs):
        if d:
            y = jnp.flip(y, 0)
        outs.append(jnp.moveaxis(y, 0, a % y.ndim))
    return _outputs(ctx, list(carry) + outs)


