"""The exchange model set written as Keras 3 models (see :mod:`onnxport_testkit.exchange`).
Images are channels-last here (Keras' CPU convolutions): the CNN takes the NCHW example transposed."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from .exchange import H, Source


def _dense(w, b=None):
    return keras.layers.Dense(w.shape[1], use_bias=b is not None,
                              kernel_initializer=keras.initializers.Constant(w),
                              bias_initializer=keras.initializers.Constant(b if b is not None else 0.0))


def _const(a):
    return keras.initializers.Constant(a)


def mlp(s):
    return keras.Sequential([keras.Input((6,)), _dense(s["w1"], s["b1"]), keras.layers.ReLU(), _dense(s["w2"], s["b2"])])


def cnn(s):
    return keras.Sequential([
        keras.Input((8, 8, 3)),
        keras.layers.Conv2D(4, 3, padding="same", kernel_initializer=_const(s["c1"].transpose(2, 3, 1, 0)),
                            bias_initializer=_const(s["cb1"])),
        keras.layers.BatchNormalization(epsilon=1e-5, gamma_initializer=_const(s["gamma"]),
                                        beta_initializer=_const(s["beta"]), moving_mean_initializer=_const(s["mean"]),
                                        moving_variance_initializer=_const(s["var"])),
        keras.layers.ReLU(),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(6, 3, padding="same", activation="relu",
                            kernel_initializer=_const(s["c2"].transpose(2, 3, 1, 0)), bias_initializer=_const(s["cb2"])),
        keras.layers.GlobalAveragePooling2D(),
        _dense(s["fw"], s["fb"]),
    ])


def residual(s):
    x = inp = keras.Input((s["wa0"].shape[0],))
    for i in range(2):
        x = keras.layers.Add()([x, _dense(s[f"wb{i}"], s[f"bb{i}"])(keras.layers.ReLU()(_dense(s[f"wa{i}"], s[f"ba{i}"])(x)))])
    return keras.Model(inp, x)


class Encoder(keras.Model):
    def __init__(self, s):
        super().__init__()
        self.ln1 = keras.layers.LayerNormalization(epsilon=1e-5, gamma_initializer=_const(s["ln1g"]),
                                                   beta_initializer=_const(s["ln1b"]))
        self.ln2 = keras.layers.LayerNormalization(epsilon=1e-5, gamma_initializer=_const(s["ln2g"]),
                                                   beta_initializer=_const(s["ln2b"]))
        self.q, self.k, self.v, self.o = (_dense(s[n]) for n in ("wq", "wk", "wv", "wo"))
        self.f1, self.f2 = _dense(s["w1"], s["b1"]), _dense(s["w2"], s["b2"])
        self.scale = float(np.sqrt(s["wq"].shape[0]))

    def call(self, x):
        h = self.ln1(x)
        att = tf.nn.softmax(tf.matmul(self.q(h), self.k(h), transpose_b=True) / self.scale, axis=-1)
        x = x + self.o(tf.matmul(att, self.v(h)))
        return x + self.f2(tf.nn.relu(self.f1(self.ln2(x))))


class TiedDecoder(keras.Model):
    def __init__(self, s):
        super().__init__()
        self.emb = keras.layers.Embedding(*s["emb"].shape, embeddings_initializer=_const(s["emb"]))
        self.h = _dense(s["wh"], s["bh"])

    def call(self, tokens):
        return tf.matmul(tf.tanh(self.h(self.emb(tokens))), self.emb.embeddings, transpose_b=True)


def lstm(s):
    # Keras gate order i, f, c(g), o equals the shared state's; one bias per gate
    layer = keras.layers.LSTM(H, kernel_initializer=_const(s["wx"]), recurrent_initializer=_const(s["wh"]),
                              bias_initializer=_const(s["b"]), unit_forget_bias=False)
    return keras.Sequential([keras.Input((4, 3)), layer, _dense(s["fw"], s["fb"])])


class ControlFlow(keras.Model):
    """tf.cond on the input's sum, then a tf.while_loop whose trip count depends on the data."""

    def __init__(self, s):
        super().__init__()
        self.wa, self.wb, self.wl = (self.add_weight(shape=s[k].shape, initializer=_const(s[k]), name=k)
                                     for k in ("wa", "wb", "wl"))

    def call(self, x):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.tanh(x @ self.wa), lambda: tf.sin(x @ self.wb))

        def cond(i, y):
            return tf.logical_and(i < 4, tf.reduce_sum(tf.abs(y)) < 6.0)

        def body(i, y):
            return i + 1, y + tf.tanh(y @ self.wl)

        return tf.while_loop(cond, body, (tf.constant(0), y))[1]


def build(model: str, s: dict[str, np.ndarray], ins: tuple[np.ndarray, ...], count: int) -> Source:
    m = {"mlp": mlp, "cnn": cnn, "residual": residual, "transformer": Encoder, "tied_decoder": TiedDecoder,
         "lstm": lstm, "control_flow": ControlFlow}[model](s)
    if model == "cnn":
        ins = (np.ascontiguousarray(ins[0].transpose(0, 2, 3, 1)),)
    args = tuple(tf.constant(a) for a in ins)
    m(*args)  # builds subclassed models

    def run() -> list[np.ndarray]:
        out = m(*args, training=False)
        return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]

    native = sum(int(np.prod(v.shape)) for v in m.trainable_weights)
    assert native == count, (model, native, count)
    return Source(model, "tensorflow", m, args, {}, native, run)


def imported_count(m) -> int:
    """Trainable values of an imported model."""
    return sum(int(np.prod(v.shape)) for v in m.trainable_variables)


def grad_step(m, ins: list[np.ndarray]) -> tuple[float, float]:
    """The loss (mean square of the outputs) before and after one SGD step on the trainable variables."""
    args = [tf.constant(a) for a in ins]

    def loss():
        out = m(*args)
        return tf.add_n([tf.reduce_mean(tf.cast(o, tf.float32) ** 2)
                         for o in (out if isinstance(out, (tuple, list)) else (out,))])

    with tf.GradientTape() as tape:
        before = loss()
    grads = tape.gradient(before, m.trainable_variables)
    for v, g in zip(m.trainable_variables, grads):
        if g is not None:
            v.assign_sub(0.1 * tf.convert_to_tensor(g))  # a Gather's gradient comes as IndexedSlices
    return float(before), float(loss())
