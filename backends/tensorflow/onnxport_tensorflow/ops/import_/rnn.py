"""RNN, GRU and LSTM on ``tf.scan`` (forward, reverse, bidirectional; sequence_lens; clip;
activations with alpha/beta; layout 0 and 1; LSTM peepholes and input_forget)."""

from __future__ import annotations

import tensorflow as tf

from onnxport import importer

from ._static import tensor

_DEFAULT_ALPHA = {"LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "ScaledTanh": 1.0, "HardSigmoid": 0.2,
                  "Elu": 1.0, "Affine": 1.0}
_DEFAULT_BETA = {"ScaledTanh": 1.0, "HardSigmoid": 0.5, "Affine": 0.0}


def _activation(ctx, name, alpha, beta):
    fns = {
        "Tanh": tf.tanh, "Sigmoid": tf.sigmoid, "Relu": tf.nn.relu,
        "Affine": lambda x: alpha * x + beta,
        "LeakyRelu": lambda x: tf.where(x >= 0, x, alpha * x),
        "ThresholdedRelu": lambda x: tf.where(x > alpha, x, tf.zeros_like(x)),
        "ScaledTanh": lambda x: alpha * tf.tanh(beta * x),
        "HardSigmoid": lambda x: tf.clip_by_value(alpha * x + beta, 0, 1),
        "Elu": lambda x: tf.where(x >= 0, x, alpha * (tf.exp(x) - 1)),
        "Softsign": lambda x: x / (1 + tf.abs(x)), "Softplus": tf.math.softplus,
    }
    key = next((k for k in fns if k.lower() == name.lower()), None)
    if key is None:
        raise ctx.error(f"unknown recurrent activation {name!r}")
    return fns[key]


def _activations(ctx, names, defaults, num_dirs, alphas, betas):
    names = list(names or defaults * num_dirs)
    if len(names) == len(defaults) and num_dirs == 2:
        names = names * 2
    alphas, betas = list(alphas or []), list(betas or [])
    out = []
    for n in names:
        a = alphas.pop(0) if n in _DEFAULT_ALPHA and alphas else _DEFAULT_ALPHA.get(n, 0.0)
        b = betas.pop(0) if n in _DEFAULT_BETA and betas else _DEFAULT_BETA.get(n, 0.0)
        out.append(_activation(ctx, n, a, b))
    k = len(defaults)
    return [out[d * k:(d + 1) * k] for d in range(num_dirs)]


def _reverse_valid(x, lens):
    """Reverse each batch entry's first lens[b] time steps (x: [T, B, ...])."""
    return tf.reverse_sequence(x, tf.cast(lens, tf.int64), seq_axis=0, batch_axis=1)


def _run(ctx, cell, x, states, lens, reverse):
    """Scan ``cell`` over time; steps past a batch entry's length keep its state, output 0."""
    if reverse:
        x = _reverse_valid(x, lens)
    steps = tf.range(tf.shape(x)[0])

    def step(acc, inp):
        carry, _ = acc
        xt, t = inp
        new = cell(xt, carry)
        live = (t < lens)[:, None]
        kept = tuple(tf.where(live, n, c) for n, c in zip(new, carry))
        return kept, tf.where(live, new[0], tf.zeros_like(new[0]))

    init = (tuple(states), tf.zeros_like(states[0]))
    finals, ys = tf.scan(step, (x, steps), initializer=init)
    final = tuple(f[-1] for f in finals)
    if reverse:
        ys = _reverse_valid(ys, lens)
    return ys, final


def _common(ctx, x, w, sequence_lens, initial, direction, layout, hidden_size, n_states):
    x = tensor(x)
    initial = [None if s is None else tf.cast(s, x.dtype) for s in initial]
    if layout:
        x = tf.transpose(x, [1, 0, 2])
        initial = [None if s is None else tf.transpose(s, [1, 0, 2]) for s in initial]
    num_dirs = 2 if direction == "bidirectional" else 1
    batch = tf.shape(x)[1]
    hidden = hidden_size or int(w.shape[1]) // n_states
    lens = (tf.fill([batch], tf.shape(x)[0]) if sequence_lens is None else tf.cast(sequence_lens, tf.int32))
    zeros = tf.zeros(tf.stack([num_dirs, batch, hidden]), x.dtype)
    initial = [zeros if s is None else s for s in initial]
    return x, num_dirs, hidden, lens, initial


def _finish(ctx, ys, finals, layout):
    """Stack directions: Y [T, D, B, H] (layout 1: [B, T, D, H]) and the last states [D, B, H]."""
    y = tf.stack(ys, axis=1)
    lasts = [tf.stack(f, axis=0) for f in zip(*finals)]
    if layout:
        y = tf.transpose(y, (2, 0, 1, 3))
        lasts = [tf.transpose(s, [1, 0, 2]) for s in lasts]
    outs = (y, *lasts)
    return outs[: ctx.num_outputs] if ctx.num_outputs > 1 else y


def _dirs(direction, num_dirs):
    return [direction == "reverse"] if num_dirs == 1 else [False, True]


def _mm(a, b):
    return tf.linalg.matmul(a, b, transpose_b=True)


def _clip(v, clip):
    return v if clip is None else tf.clip_by_value(v, -clip, clip)


@importer("RNN", since=22)
def rnn(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, *, activation_alpha, activation_beta,
        activations, clip, direction, hidden_size, layout):
    x, num_dirs, hidden, lens, (h0,) = _common(ctx, x, w, sequence_lens, [initial_h], direction, layout,
                                                hidden_size, 1)
    acts = _activations(ctx, activations, ["Tanh"], num_dirs, activation_alpha, activation_beta)
    ys, finals = [], []
    for d, rev in enumerate(_dirs(direction, num_dirs)):
        bias = 0 if b is None else b[d, :hidden] + b[d, hidden:]
        f = acts[d][0]

        def cell(xt, carry, d=d, bias=bias, f=f):
            return (f(_clip(_mm(xt, w[d]) + _mm(carry[0], r[d]) + bias, clip)),)

        y, fin = _run(ctx, cell, x, [h0[d]], lens, rev)
        ys.append(y)
        finals.append(fin)
    return _finish(ctx, ys, finals, layout)


@importer("GRU", since=22)
def gru(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, *, activation_alpha, activation_beta,
        activations, clip, direction, hidden_size, layout, linear_before_reset):
    x, num_dirs, hidden, lens, (h0,) = _common(ctx, x, w, sequence_lens, [initial_h], direction, layout,
                                                hidden_size, 3)
    acts = _activations(ctx, activations, ["Sigmoid", "Tanh"], num_dirs, activation_alpha, activation_beta)
    ys, finals = [], []
    H = hidden
    for d, rev in enumerate(_dirs(direction, num_dirs)):
        bd = tf.zeros((6 * H,), x.dtype) if b is None else b[d]
        wb, rb = bd[:3 * H], bd[3 * H:]
        f, g = acts[d]

        def cell(xt, carry, d=d, wb=wb, rb=rb, f=f, g=g):
            h = carry[0]
            xw = _mm(xt, w[d]) + wb
            hr = _mm(h, r[d])
            z = f(_clip(xw[:, :H] + hr[:, :H] + rb[:H], clip))
            rr = f(_clip(xw[:, H:2 * H] + hr[:, H:2 * H] + rb[H:2 * H], clip))
            if linear_before_reset:
                pre = xw[:, 2 * H:] + rr * (hr[:, 2 * H:] + rb[2 * H:])
            else:
                pre = xw[:, 2 * H:] + _mm(rr * h, r[d][2 * H:]) + rb[2 * H:]
            hh = g(_clip(pre, clip))
            return ((1 - z) * hh + z * h,)

        y, fin = _run(ctx, cell, x, [h0[d]], lens, rev)
        ys.append(y)
        finals.append(fin)
    return _finish(ctx, ys, finals, layout)


@importer("LSTM", since=22)
def lstm(ctx, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, *,
         activation_alpha, activation_beta, activations, clip, direction, hidden_size, input_forget, layout):
    x, num_dirs, hidden, lens, (h0, c0) = _common(ctx, x, w, sequence_lens, [initial_h, initial_c],
                                                   direction, layout, hidden_size, 4)
    acts = _activations(ctx, activations, ["Sigmoid", "Tanh", "Tanh"], num_dirs, activation_alpha,
                        activation_beta)
    ys, finals = [], []
    H = hidden
    for d, rev in enumerate(_dirs(direction, num_dirs)):
        bias = tf.zeros((4 * H,), x.dtype) if b is None else b[d, :4 * H] + b[d, 4 * H:]
        pd = tf.zeros((3 * H,), x.dtype) if p is None else p[d]
        f, g, hf = acts[d]

        def cell(xt, carry, d=d, bias=bias, pd=pd, f=f, g=g, hf=hf):
            h, c = carry
            gates = _mm(xt, w[d]) + _mm(h, r[d]) + bias  # i, o, f, c
            i = f(_clip(gates[:, :H] + pd[:H] * c, clip))
            fg = f(_clip(gates[:, 2 * H:3 * H] + pd[2 * H:] * c, clip))
            if input_forget:
                fg = 1 - i
            ct = g(_clip(gates[:, 3 * H:], clip))
            c_new = fg * c + i * ct
            o = f(_clip(gates[:, H:2 * H] + pd[H:2 * H] * c_new, clip))
            return o * hf(c_new), c_new

        y, fin = _run(ctx, cell, x, [h0[d], c0[d]], lens, rev)
        ys.append(y)
        finals.append(fin)
    return _finish(ctx, ys, finals, layout)


