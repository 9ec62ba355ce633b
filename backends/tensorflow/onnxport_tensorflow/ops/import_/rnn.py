"""RNN, GRU and LSTM on ``tf.scan`` (forward, reverse, bidirectional; sequence_lens; clip;
activations with alpha/beta; layout 0 and 1; LSTM peepholes and input_forget)."""

from __future__ import annotations

import functools

import tensorflow as tf

from onnxport import importer
from onnxport.opmath.rnn import (
    activation_specs,
    gru_cell,
    lstm_cell,
    num_directions,
    reversed_directions,
    rnn_cell,
)

from ._static import tensor


def _activation(name, alpha, beta):
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
    return fns[name]


def _activations(ctx, names, defaults, num_dirs, alphas, betas):
    with ctx.raising():
        specs = activation_specs(names, defaults, num_dirs, alphas, betas)
    return [[_activation(*spec) for spec in d] for d in specs]


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
    num_dirs = num_directions(direction)
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
    clip_to = functools.partial(_clip, clip=clip)
    for d, rev in enumerate(reversed_directions(direction)):
        bias = 0 if b is None else b[d, :hidden] + b[d, hidden:]
        cell = rnn_cell(_mm, clip_to, acts[d][0], w[d], r[d], bias)
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
    clip_to = functools.partial(_clip, clip=clip)
    H = hidden
    for d, rev in enumerate(reversed_directions(direction)):
        bd = tf.zeros((6 * H,), x.dtype) if b is None else b[d]
        wb, rb = bd[:3 * H], bd[3 * H:]
        cell = gru_cell(_mm, clip_to, *acts[d], w[d], r[d], wb, rb, H, linear_before_reset)
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
    clip_to = functools.partial(_clip, clip=clip)
    H = hidden
    for d, rev in enumerate(reversed_directions(direction)):
        bias = tf.zeros((4 * H,), x.dtype) if b is None else b[d, :4 * H] + b[d, 4 * H:]
        pd = tf.zeros((3 * H,), x.dtype) if p is None else p[d]
        cell = lstm_cell(_mm, clip_to, *acts[d], w[d], r[d], bias, pd, H, input_forget)
        y, fin = _run(ctx, cell, x, [h0[d], c0[d]], lens, rev)
        ys.append(y)
        finals.append(fin)
    return _finish(ctx, ys, finals, layout)


