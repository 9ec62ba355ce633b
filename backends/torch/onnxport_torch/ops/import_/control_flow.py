"""Control flow: If, Loop and Scan run their compiled subgraphs eagerly, in Python."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from onnxport import importer

Body = Callable[..., list]


def _result(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


def _truth(ctx, cond: torch.Tensor, what: str) -> bool:
    if cond.numel() != 1:
        raise ctx.error(f"{what} must hold one boolean, got shape {list(cond.shape)}")
    return bool(cond.reshape(()).item())


def _stack(ctx, i: int, items: list[torch.Tensor], axis: int = 0) -> torch.Tensor:
    """Scan output ``i``: per-iteration tensors stacked along ``axis`` (an empty one has length 0)."""
    if items:
        return torch.stack(items, dim=axis)
    shape = ctx.output_shapes[i] if i < len(ctx.output_shapes) else None
    dtype = ctx.output_torch_dtype(i) or torch.float32
    if shape is not None and all(isinstance(d, int) for d in shape[1:]):
        return torch.empty((0, *shape[1:]), dtype=dtype)
    return torch.empty((0,), dtype=dtype)


@importer("If", since=25)
def if_(ctx, cond: torch.Tensor, *, then_branch: Body, else_branch: Body) -> Any:
    if torch.compiler.is_compiling() and isinstance(cond, torch.Tensor) and cond.numel() == 1:
        # a data-dependent branch: torch.cond traces both (the compiler cannot read the value)
        outs = torch.cond(cond.reshape(()).to(torch.bool), lambda: tuple(then_branch()),
                          lambda: tuple(else_branch()), ())
        return _result(list(outs))
    branch = then_branch if _truth(ctx, cond, "cond") else else_branch
    outs = branch()
    if len(outs) != ctx.num_outputs:
        raise ctx.error(f"the branch returned {len(outs)} values for {ctx.num_outputs} outputs")
    return _result(outs)


@importer("Loop", since=25)
def loop(ctx, trip_count: torch.Tensor | None = None, cond: torch.Tensor | None = None, *carried: Any,
         body: Body) -> Any:
    n_carried = len(carried)
    n_scan = ctx.num_outputs - n_carried
    if body.num_inputs != n_carried + 2:
        raise ctx.error(f"the body takes {body.num_inputs} inputs, expected {n_carried + 2} "
                        "(iteration number, condition, loop-carried values)")
    limit = None
    if trip_count is not None:
        static = ctx.const(0)
        limit = int(static.reshape(-1)[0]) if static is not None else int(trip_count.reshape(()).item())
    keep_going = _truth(ctx, cond, "cond") if cond is not None else True
    state = list(carried)
    scans: list[list[torch.Tensor]] = [[] for _ in range(n_scan)]
    flag = torch.tensor(keep_going)
    i = 0
    while keep_going and (limit is None or i < limit):
        outs = body(torch.tensor(i, dtype=torch.int64), flag, *state)
        if len(outs) != 1 + n_carried + n_scan:
            raise ctx.error(f"the body returned {len(outs)} values, expected {1 + n_carried + n_scan}")
        flag, state = outs[0], list(outs[1:1 + n_carried])
        for acc, value in zip(scans, outs[1 + n_carried:]):
            acc.append(value)
        if cond is not None:  # without a cond input the body's condition is ignored
            keep_going = _truth(ctx, flag, "the body's condition output")
        i += 1
    return _result(state + [_stack(ctx, n_carried + k, acc) for k, acc in enumerate(scans)])


def _axes(ctx, given: list[int] | None, count: int, ranks: list[int], what: str) -> list[int]:
    axes = list(given) if given is not None else [0] * count
    if len(axes) != count:
        raise ctx.error(f"{what} has {len(axes)} entries for {count} values")
    out = []
    for a, r in zip(axes, ranks):
        b = a + r if a < 0 else a
        if not 0 <= b < r:
            raise ctx.error(f"{what} entry {a} is out of range for rank {r}")
        out.append(b)
    return out


@importer("Scan", since=25)
def scan(ctx, *inputs: torch.Tensor, body: Body, num_scan_inputs: int,
         scan_input_axes: list[int] | None, scan_input_directions: list[int] | None,
         scan_output_axes: list[int] | None, scan_output_directions: list[int] | None) -> Any:
    n_state = len(inputs) - num_scan_inputs
    if n_state < 0:
        raise ctx.error(f"num_scan_inputs={num_scan_inputs} but the node has {len(inputs)} inputs")
    n_out = ctx.num_outputs - n_state
    state, xs = list(inputs[:n_state]), inputs[n_state:]
    in_axes = _axes(ctx, scan_input_axes, num_scan_inputs, [x.dim() for x in xs], "scan_input_axes")
    in_dirs = scan_input_directions or [0] * num_scan_inputs
    out_dirs = scan_output_directions or [0] * n_out
    if len(in_dirs) != num_scan_inputs or len(out_dirs) != n_out:
        raise ctx.error("scan_input_directions / scan_output_directions have the wrong length")
    lengths = {x.shape[a] for x, a in zip(xs, in_axes)}
    if len(lengths) > 1:
        raise ctx.error(f"scan inputs have different sequence lengths {sorted(lengths)}")
    steps = lengths.pop() if lengths else 0
    scans: list[list[torch.Tensor]] = [[] for _ in range(n_out)]
    for t in range(steps):
        slices = [x.select(a, steps - 1 - t if d else t) for x, a, d in zip(xs, in_axes, in_dirs)]
        outs = body(*state, *slices)
        if len(outs) != n_state + n_out:
            raise ctx.error(f"the body returned {len(outs)} values, expected {n_state + n_out}")
        state = list(outs[:n_state])
        for acc, value in zip(scans, outs[n_state:]):
            acc.append(value)
    results = []
    for k, acc in enumerate(scans):
        if out_dirs[k]:
            acc = acc[::-1]
        if acc:
            rank = acc[0].dim() + 1
            (axis,) = _axes(ctx, [scan_output_axes[k]] if scan_output_axes else None, 1, [rank], "scan_output_axes")
            results.append(torch.stack(acc, dim=axis))
        else:
            results.append(_stack(ctx, n_state + k, acc))
    return _result(state + results)

