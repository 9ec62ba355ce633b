"""RNN, GRU, LSTM: torch's fused recurrent kernels when the attributes allow and the weights are
initializers (kept in ONNX's layout under their names, gates reordered per call); otherwise a step-by-step implementation of
every ONNX attribute (activations, clip, sequence_lens, peepholes, input_forget, layout)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from onnxport import importer

from ._modules import OnnxRecurrent

_DEFAULTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
#: default (alpha, beta) of the activations that take them
_PARAMS = {"affine": (1.0, 0.0), "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None),
           "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, None)}


def _activation(ctx, name: str, alpha, beta):
    key = name.lower()
    if key in _PARAMS:
        da, db = _PARAMS[key]
        alpha = da if alpha is None else alpha
        beta = db if beta is None else beta
    table = {
        "relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: F.leaky_relu(x, alpha),
        "thresholdedrelu": lambda x: torch.where(x > alpha, x, torch.zeros_like(x)),
        "scaledtanh": lambda x: alpha * torch.tanh(beta * x),
        "hardsigmoid": lambda x: torch.clamp(alpha * x + beta, 0, 1),
        "elu": lambda x: F.elu(x, alpha),
        "softsign": F.softsign, "softplus": F.softplus,
    }
    if key not in table:
        raise ctx.error(f"unknown recurrent activation {name!r}")
    return table[key]


def _activations(ctx, op: str, activations, alphas, betas, num_dir: int):
    names = list(activations) if activations else _DEFAULTS[op] * num_dir
    per = len(_DEFAULTS[op])
    if len(names) == per and num_dir == 2:
        names = names * 2
    alphas, betas = list(alphas or []), list(betas or [])
    fns = []
    for i, n in enumerate(names):
        fns.append(_activation(ctx, n, alphas[i] if i < len(alphas) else None, betas[i] if i < len(betas) else None))
    return [fns[d * per:(d + 1) * per] for d in range(num_dir)]


def _run_direction(op, x, w, r, b, h, c, p, lens, acts, clip, linear_before_reset, input_forget, reverse):
    """One direction over x [T, B, I]; returns Y [T, B, H], last h, last c."""
    steps = x.shape[0]
    hidden = r.shape[-1]
    gx = torch.matmul(x, w.t())  # [T, B, G*H]
    wb, rb = (b[: b.shape[0] // 2], b[b.shape[0] // 2:]) if b is not None else (None, None)
    if wb is not None:
        gx = gx + wb
    clamp = (lambda t: t.clamp(-clip, clip)) if clip is not None else (lambda t: t)
    f = acts[0]
    outs = [None] * steps
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    for t in order:
        live = None if lens is None else (t < lens).unsqueeze(-1)  # [B, 1]
        gh = torch.matmul(h, r.t())
        if rb is not None and not (op == "GRU"):
            gh = gh + rb
        if op == "RNN":
            h_new = f(clamp(gx[t] + gh))
            c_new = c
        elif op == "GRU":
            g = acts[1]
            xz, xr, xh = gx[t].split(hidden, -1)
            rbz, rbr, rbh = rb.split(hidden) if rb is not None else (0, 0, 0)
            hz, hr, hh = gh.split(hidden, -1)
            z = f(clamp(xz + hz + rbz))
            rr = f(clamp(xr + hr + rbr))
            if linear_before_reset:
                n = g(clamp(xh + rr * (hh + rbh)))
            else:
                n = g(clamp(xh + torch.matmul(rr * h, r[2 * hidden:].t()) + rbh))
            h_new = (1 - z) * n + z * h
            c_new = c
        else:
            g, hact = acts[1], acts[2]
            xi, xo, xf, xc = (gx[t] + gh).split(hidden, -1)
            pi, po, pf = p.split(hidden) if p is not None else (0, 0, 0)
            i = f(clamp(xi + pi * c))
            fg = 1 - i if input_forget else f(clamp(xf + pf * c))
            cand = g(clamp(xc))
            c_new = fg * c + i * cand
            o = f(clamp(xo + po * c_new))
            h_new = o * hact(c_new)
        if live is not None:
            h_new = torch.where(live, h_new, h)
            if c is not None:
                c_new = torch.where(live, c_new, c)
            outs[t] = torch.where(live, h_new, torch.zeros_like(h_new))
        else:
            outs[t] = h_new
        h, c = h_new, c_new
    return torch.stack(outs) if steps else x.new_zeros((0, x.shape[1], hidden)), h, c


def _recurrent(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, *,
               activation_alpha, activation_beta, activations, clip, direction, hidden_size, layout,
               linear_before_reset=0, input_forget=0):
    op = ctx.op_type
    if layout:
        x = x.transpose(0, 1)
        initial_h = initial_h.transpose(0, 1) if initial_h is not None else None
        initial_c = initial_c.transpose(0, 1) if initial_c is not None else None
    num_dir = 2 if direction == "bidirectional" else 1
    hidden = r.shape[-1]
    batch = x.shape[1]
    acts = _activations(ctx, op, activations, activation_alpha, activation_beta, num_dir)
    lens = sequence_lens.to(torch.int64) if sequence_lens is not None else None
    ys, hs, cs = [], [], []
    for d in range(num_dir):
        h0 = initial_h[d] if initial_h is not None else x.new_zeros((batch, hidden))
        c0 = None
        if op == "LSTM":
            c0 = initial_c[d] if initial_c is not None else x.new_zeros((batch, hidden))
        reverse = direction == "reverse" or d == 1
        y, h, c = _run_direction(op, x, w[d], r[d], b[d] if b is not None else None, h0, c0,
                                 p[d] if p is not None else None, lens, acts[d], clip,
                                 linear_before_reset, input_forget, reverse)
        ys.append(y)
        hs.append(h)
        cs.append(c)
    y = torch.stack(ys, dim=1)  # [T, D, B, H]
    y_h = torch.stack(hs)
    y_c = torch.stack(cs) if op == "LSTM" else None
    if layout:
        y = y.permute(2, 0, 1, 3)
        y_h = y_h.transpose(0, 1)
        y_c = y_c.transpose(0, 1) if y_c is not None else None
    outs = (y, y_h, y_c)[: ctx.num_outputs]
    return outs[0] if ctx.num_outputs == 1 else outs


@importer("RNN", since=22)
def rnn(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, **attrs):
    return _recurrent(ctx, x, w, r, b, sequence_lens, initial_h, **attrs)


@importer("GRU", since=22)
def gru(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, **attrs):
    return _recurrent(ctx, x, w, r, b, sequence_lens, initial_h, **attrs)


@importer("LSTM", since=22)
def lstm(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, **attrs):
    return _recurrent(ctx, x, w, r, b, sequence_lens, initial_h, initial_c, p, **attrs)


#: ONNX gate blocks in torch's order: LSTM iofc -> ifco(g), GRU zrh -> rzn
_TORCH_ORDER = {"RNN": [0], "GRU": [1, 0, 2], "LSTM": [0, 2, 3, 1]}


def _given(ctx, i: int) -> bool:
    return ctx.num_inputs > i and bool(ctx.weight_name(i))


def _recurrent_module(ctx, *, activation_alpha, activation_beta, activations, clip, direction, hidden_size,
                      layout, linear_before_reset=0, input_forget=0):
    op = ctx.op_type
    num_dir = 2 if direction == "bidirectional" else 1
    if direction == "reverse" or clip is not None or input_forget or activation_alpha or activation_beta:
        return None
    per = len(_DEFAULTS[op])
    names = [a.lower() for a in (activations or [])]
    if len(names) == per:
        names = names * num_dir
    if names and names[: per * num_dir] != [a.lower() for a in _DEFAULTS[op] * num_dir]:
        return None  # torch's layers have fixed activations
    if op == "GRU" and not linear_before_reset:
        return None
    if _given(ctx, 4) or (op == "LSTM" and _given(ctx, 7)):
        return None  # sequence_lens and peepholes have no torch counterpart
    if not all(ctx.is_initializer(i) for i in (1, 2)) or (_given(ctx, 3) and not ctx.is_initializer(3)):
        return None
    w, r = ctx.initializer_value(1), ctx.initializer_value(2)
    if w is None or r is None or not w.is_floating_point():
        return None
    runtime = [0]
    extra = []
    for i in (5, 6) if op == "LSTM" else (5,):
        if _given(ctx, i):
            runtime.append(i)
            extra.append(i)
    kind = "RNN_tanh" if op == "RNN" else op
    wrapper = OnnxRecurrent(kind, ctx.param(1), ctx.param(2), ctx.param(3) if _given(ctx, 3) else None,
                            order=_TORCH_ORDER[op], batch_first=bool(layout), has_h=5 in extra,
                            has_c=6 in extra, num_outputs=ctx.num_outputs,
                            tuple_out=any(ctx.output_used(i) for i in range(1, ctx.num_outputs)))
    return wrapper, runtime


rnn.module_builder(_recurrent_module)
gru.module_builder(_recurrent_module)
lstm.module_builder(_recurrent_module)
