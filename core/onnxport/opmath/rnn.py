"""The framework-free parts of RNN, GRU and LSTM: activation names with their alpha/beta,
directions, and the gate layout of each cell as ONNX defines it.

The cells are written with array operators and slicing only; a backend passes its matrix
product ``mm(x, w)`` (``x @ w.T`` for an ONNX weight ``w`` of shape ``[gates * H, in]``), its
``clip(v, limit)`` (None: no clip) and its activation functions, and runs the cell over time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: activations a recurrent op may name (ONNX spells them case-insensitively)
ACTIVATIONS = ("Tanh", "Sigmoid", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
               "HardSigmoid", "Elu", "Softsign", "Softplus")
DEFAULT_ALPHA = {"LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "ScaledTanh": 1.0, "HardSigmoid": 0.2,
                 "Elu": 1.0, "Affine": 1.0}
DEFAULT_BETA = {"ScaledTanh": 1.0, "HardSigmoid": 0.5, "Affine": 0.0}

Cell = Callable[[Any, tuple], tuple]

#: the gate blocks of ONNX's LSTM weights (W, R, B), in order
LSTM_GATES = ("i", "o", "f", "c")


def num_directions(direction: str) -> int:
    return 2 if direction == "bidirectional" else 1


def reversed_directions(direction: str) -> list[bool]:
    """Per direction, whether it runs backwards in time (``forward``, ``reverse``, ``bidirectional``)."""
    return [False, True] if direction == "bidirectional" else [direction == "reverse"]


def activation_specs(names: Sequence[str] | None, defaults: Sequence[str], num_dirs: int,
                     alphas: Sequence[float] | None, betas: Sequence[float] | None
                     ) -> list[list[tuple[str, float, float]]]:
    """Per direction, the cell's activations as ``(canonical name, alpha, beta)``.

    ``names`` default to ``defaults`` for every direction; a list of one direction's length
    serves both. ``alphas``/``betas`` are consumed in order by the activations that take them,
    the others get ONNX's defaults. Raises ValueError for an unknown name.
    """
    names = list(names or list(defaults) * num_dirs)
    if len(names) == len(defaults) and num_dirs == 2:
        names = names * 2
    alphas, betas = list(alphas or []), list(betas or [])
    out = []
    for n in names:
        a = alphas.pop(0) if n in DEFAULT_ALPHA and alphas else DEFAULT_ALPHA.get(n, 0.0)
        b = betas.pop(0) if n in DEFAULT_BETA and betas else DEFAULT_BETA.get(n, 0.0)
        key = next((k for k in ACTIVATIONS if k.lower() == n.lower()), None)
        if key is None:
            raise ValueError(f"unknown recurrent activation {n!r}")
        out.append((key, a, b))
    k = len(defaults)
    return [out[d * k:(d + 1) * k] for d in range(num_dirs)]


def rnn_cell(mm: Callable, clip: Callable, f: Callable, w: Any, r: Any, bias: Any) -> Cell:
    """``h' = f(x W^T + h R^T + Wb + Rb)``; ``bias`` is ``Wb + Rb`` (or 0)."""

    def cell(xt: Any, carry: tuple) -> tuple:
        return (f(clip(mm(xt, w) + mm(carry[0], r) + bias)),)

    return cell


def gru_cell(mm: Callable, clip: Callable, f: Callable, g: Callable, w: Any, r: Any, wb: Any, rb: Any,
             hidden: int, linear_before_reset: int) -> Cell:
    """The GRU cell; gates ``z, r, h`` in that order in ``w``, ``r`` and the biases."""
    H = hidden

    def cell(xt: Any, carry: tuple) -> tuple:
        h = carry[0]
        xw = mm(xt, w) + wb
        hr = mm(h, r)
        z = f(clip(xw[:, :H] + hr[:, :H] + rb[:H]))
        rr = f(clip(xw[:, H:2 * H] + hr[:, H:2 * H] + rb[H:2 * H]))
        if linear_before_reset:
            pre = xw[:, 2 * H:] + rr * (hr[:, 2 * H:] + rb[2 * H:])
        else:
            pre = xw[:, 2 * H:] + mm(rr * h, r[2 * H:]) + rb[2 * H:]
        hh = g(clip(pre))
        return ((1 - z) * hh + z * h,)

    return cell


def lstm_cell(mm: Callable, clip: Callable, f: Callable, g: Callable, hf: Callable, w: Any, r: Any, bias: Any,
              peep: Any, hidden: int, input_forget: int) -> Cell:
    """The LSTM cell; gates ``i, o, f, c`` in that order; ``peep`` is ``[P_i, P_o, P_f]``."""
    H = hidden

    def cell(xt: Any, carry: tuple) -> tuple:
        h, c = carry
        gates = mm(xt, w) + mm(h, r) + bias  # i, o, f, c
        i = f(clip(gates[:, :H] + peep[:H] * c))
        fg = f(clip(gates[:, 2 * H:3 * H] + peep[2 * H:] * c))
        if input_forget:
            fg = 1 - i
        ct = g(clip(gates[:, 3 * H:]))
        c_new = fg * c + i * ct
        o = f(clip(gates[:, H:2 * H] + peep[H:2 * H] * c_new))
        return o * hf(c_new), c_new

    return cell
