"""The ai.onnx.preview.training optimizers: Momentum (standard and Nesterov), Adagrad and Adam.

Each updates n tensors at once: inputs R (learning rate), T (update count), then X_1..X_n,
G_1..G_n and the optimizer's state tensors per X; outputs the new X_1..X_n then the new states.
"""

from __future__ import annotations

import torch

from onnxport import importer

from ...context import NodeContext

_DOMAIN = "ai.onnx.preview.training"


def _groups(ctx: NodeContext, tensors: tuple[torch.Tensor, ...], per_x: int) -> list[tuple[torch.Tensor, ...]]:
    """Split the variadic inputs [X.., G.., S1.., S2..] into per-X tuples (x, g, s1, ...)."""
    if not tensors or len(tensors) % per_x:
        raise ctx.error(f"{ctx.op_type} takes {per_x} tensors per optimized input after R and T, "
                        f"got {len(tensors)}")
    n = len(tensors) // per_x
    if ctx.num_outputs != (per_x - 1) * n:
        raise ctx.error(f"{ctx.op_type} with {n} optimized inputs has {(per_x - 1) * n} outputs, "
                        f"not {ctx.num_outputs}")
    return [tuple(tensors[j * n + i] for j in range(per_x)) for i in range(n)]


def _scalar(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return t.reshape(()).to(dtype)


def _outputs(results: list[tuple[torch.Tensor, ...]]) -> tuple[torch.Tensor, ...]:
    """[(x1', s1'), (x2', s2')] -> (x1', x2', s1', s2'): all new X first, then each state."""
    return tuple(r[j] for j in range(len(results[0])) for r in results)


@importer("Momentum", since=1, domain=_DOMAIN)
def momentum(ctx: NodeContext, r: torch.Tensor, t: torch.Tensor, *tensors: torch.Tensor,
             alpha: float, beta: float, mode: str, norm_coefficient: float):
    """SGD with momentum: V' = alpha V + beta' (G + norm X), beta' = 1 on the first step (T == 0);
    X' = X - R V' (standard) or X - R (G_reg + alpha V') (nesterov)."""
    if mode not in ("standard", "nesterov"):
        raise ctx.error(f"unknown mode {mode!r} (expected 'standard' or 'nesterov')")
    results = []
    for x, g, v in _groups(ctx, tensors, 3):
        lr = _scalar(r, x.dtype)
        b = torch.where(t.reshape(()) > 0, torch.tensor(beta, dtype=x.dtype), torch.tensor(1.0, dtype=x.dtype))
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + b * g_reg
        step = v_new if mode == "standard" else g_reg + alpha * v_new
        results.append((x - lr * step, v_new))
    return _outputs(results)


@importer("Adagrad", since=1, domain=_DOMAIN)
def adagrad(ctx: NodeContext, r: torch.Tensor, t: torch.Tensor, *tensors: torch.Tensor,
            decay_factor: float, epsilon: float, norm_coefficient: float):
    """H' = H + G_reg^2; X' = X - R / (1 + T decay) * G_reg / (sqrt(H') + epsilon)."""
    results = []
    for x, g, h in _groups(ctx, tensors, 3):
        lr = _scalar(r, x.dtype) / (1 + _scalar(t, x.dtype) * decay_factor)
        g_reg = norm_coefficient * x + g
        h_new = h + g_reg * g_reg
        results.append((x - lr * g_reg / (torch.sqrt(h_new) + epsilon), h_new))
    return _outputs(results)


@importer("Adam", since=1, domain=_DOMAIN)
def adam(ctx: NodeContext, r: torch.Tensor, t: torch.Tensor, *tensors: torch.Tensor,
         alpha: float, beta: float, epsilon: float, norm_coefficient: float,
         norm_coefficient_post: float):
    """V' = alpha V + (1 - alpha) G_reg; H' = beta H + (1 - beta) G_reg^2; X' = (1 - post) *
    (X - R' V' / (sqrt(H') + epsilon)) with the bias-corrected R' = R sqrt(1 - beta^T) / (1 - alpha^T)
    when T > 0."""
    results = []
    for x, g, v, h in _groups(ctx, tensors, 4):
        steps = _scalar(t, torch.float64)
        # the bias correction in float64, then rounded once to X's type
        corrected = torch.sqrt(1 - beta ** steps) / (1 - alpha ** steps)
        factor = torch.where(steps > 0, corrected, torch.ones((), dtype=torch.float64))
        lr = (_scalar(r, torch.float64) * factor).to(x.dtype)
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + (1 - alpha) * g_reg
        h_new = beta * h + (1 - beta) * (g_reg * g_reg)
        x_new = x - lr * (v_new / (torch.sqrt(h_new) + epsilon))
        results.append(((1 - norm_coefficient_post) * x_new, v_new, h_new))
    return _outputs(results)
