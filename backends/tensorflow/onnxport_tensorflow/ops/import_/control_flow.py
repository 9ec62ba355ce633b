"""If, Loop and Scan. Subgraphs arrive as callables ``body(*inputs) -> list`` (outer values bound).

If: a Python ``if`` on a known condition, else ``tf.cond``. Loop: a Python loop while trip count
and condition are known (any shapes, sequences, early exit), else ``tf.while_loop`` with
``tf.TensorArray`` scan outputs and free-shape carried values. Scan: ``tf.while_loop`` over the
scan axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from onnxport import importer

from ._static import is_static, rank, tensor


def _t(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_t(e) for e in x]
    return tensor(x)


def _flag(x: Any) -> bool:
    return bool(np.asarray(x).reshape(-1)[0])


def _known(x: Any) -> bool:
    if is_static(x):
        return True
    return hasattr(x, "numpy") and tf.executing_eagerly()


def _outputs(ctx, outs: list) -> Any:
    return outs[0] if ctx.num_outputs == 1 else tuple(outs)


@importer("If", since=25)
def if_(ctx, cond, *, else_branch, then_branch):
    if _known(cond):
        return _outputs(ctx, then_branch() if _flag(np.asarray(cond)) else else_branch())
    outs = tf.cond(tf.reshape(tf.cast(cond, tf.bool), []),
                   lambda: tuple(_t(then_branch())), lambda: tuple(_t(else_branch())))
    return _outputs(ctx, list(outs))


@importer("Loop", since=25)
def loop(ctx, trip_count, cond, *v_initial, body):
    n_carried = len(v_initial)
    m = None if trip_count is None else (ctx.const(0) if ctx.const(0) is not None else trip_count)
    if (m is None or _known(m)) and (cond is None or _known(cond)):
        try:
            return _outputs(ctx, _python_loop(ctx, m, cond, list(v_initial), body, n_carried))
        except _Traced:
            pass
    return _outputs(ctx, _while_loop(ctx, m, cond, list(v_initial), body, n_carried))


class _Traced(Exception):
    """The loop condition became a runtime value: switch to ``tf.while_loop``."""


def _python_loop(ctx, m, cond, values, body, n_carried):
    """ONNX Loop semantics step by step, while the condition stays known."""
    limit = None if m is None else int(np.asarray(m).reshape(-1)[0])
    if limit is None and cond is None:
        raise ctx.error("Loop has neither a trip count nor a condition: it would never end")
    go = np.array(True) if cond is None else np.asarray(cond)
    scans: list[list] = []
    i = 0
    while limit is None or i < limit:
        if cond is not None:
            if not _known(go):
                raise _Traced()
            if not _flag(np.asarray(go)):
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
            stacked.append(np.stack(col) if all(isinstance(c, np.ndarray) for c in col)
                           else tf.stack([tensor(c) for c in col]))
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


def _while_loop(ctx, m, cond, values, body, n_carried):
    """``tf.while_loop`` on (iteration, condition, carried values, scan TensorArrays)."""
    if any(isinstance(v, (list, tuple)) for v in values):
        raise ctx.data_dependent("the Loop's sequence-typed carried values (a runtime trip count)")
    from ...dtypes import to_tf_dtype

    limit = None if m is None else tf.reshape(tf.cast(m, tf.int64), [])
    n_scan = body.num_outputs - 1 - n_carried
    arrays = [tf.TensorArray(to_tf_dtype(body.output_dtypes[1 + n_carried + k]), size=0, dynamic_size=True,
                             infer_shape=False) for k in range(n_scan)]
    carry0 = [tensor(v) for v in values]

    def keep_going(i, c, carry, tas):
        return c if limit is None else tf.logical_and(c, i < limit)

    def step(i, c, carry, tas):
        outs = body(i, c, *carry)
        new = [tf.cast(tensor(v), o.dtype) for v, o in zip(outs[1:1 + n_carried], carry)]
        nc = tf.reshape(tf.cast(outs[0], tf.bool), []) if cond is not None else tf.constant(True)
        tas = [ta.write(tf.cast(i, tf.int32), tensor(s)) for ta, s in zip(tas, outs[1 + n_carried:])]
        return i + 1, nc, new, tas

    c0 = tf.constant(True) if cond is None else tf.reshape(tf.cast(cond, tf.bool), [])
    invariants = (tf.TensorShape([]), tf.TensorShape([]), [tf.TensorShape(None) for _ in carry0],
                  [tf.TensorShape(None) for _ in arrays])
    _, _, carry, tas = tf.while_loop(keep_going, step, (tf.constant(0, tf.int64), c0, carry0, arrays),
                                     shape_invariants=invariants)
    stacked = []
    for k, ta in enumerate(tas):
        shape = body.output_shapes[1 + n_carried + k]
        if shape is not None and all(isinstance(d, int) for d in shape):
            ta_out = ta.stack()
            stacked.append(tf.reshape(ta_out, [-1, *shape]))
        else:
            stacked.append(ta.stack())
    return list(carry) + stacked


@importer("Scan", since=25)
def scan(ctx, *inputs, body, num_scan_inputs, scan_input_axes, scan_input_directions,
         scan_output_axes, scan_output_directions):
    """A ``tf.while_loop`` over the scan inputs' axes (directions and output axes as the
    attributes say)."""
    from ...dtypes import to_tf_dtype

    n_state = len(inputs) - num_scan_inputs
    states, xs = [tensor(s) for s in inputs[:n_state]], [tensor(x) for x in inputs[n_state:]]
    in_axes = list(scan_input_axes or [0] * num_scan_inputs)
    in_dirs = list(scan_input_directions or [0] * num_scan_inputs)
    seq = []
    for x, a, d in zip(xs, in_axes, in_dirs):
        r = rank(x)
        a %= r
        x = tf.transpose(x, [a] + [i for i in range(r) if i != a])
        seq.append(tf.reverse(x, [0]) if d else x)
    n = tf.shape(seq[0])[0]
    n_out = body.num_outputs - n_state
    arrays = [tf.TensorArray(to_tf_dtype(body.output_dtypes[n_state + k]), size=n) for k in range(n_out)]

    def step(i, carry, tas):
        outs = body(*carry, *[s[i] for s in seq])
        new = [tf.cast(tensor(v), c.dtype) for v, c in zip(outs[:n_state], carry)]
        tas = [ta.write(i, tensor(o)) for ta, o in zip(tas, outs[n_state:])]
        return i + 1, new, tas

    invariants = (tf.TensorShape([]), [tf.TensorShape(None) for _ in states], [tf.TensorShape(None) for _ in arrays])
    _, carry, tas = tf.while_loop(lambda i, c, t: i < n, step, (tf.constant(0), states, arrays),
                                  shape_invariants=invariants)
    out_axes = list(scan_output_axes or [0] * n_out)
    out_dirs = list(scan_output_directions or [0] * n_out)
    outs = []
    for ta, a, d in zip(tas, out_axes, out_dirs):
        y = ta.stack()
        if d:
            y = tf.reverse(y, [0])
        r = len(y.shape) if y.shape.rank is not None else None
        if r is not None and a % r:
            a %= r
            perm = list(range(1, r))
            perm.insert(a, 0)
            y = tf.transpose(y, perm)
        outs.append(y)
    return _outputs(ctx, list(carry) + outs)
