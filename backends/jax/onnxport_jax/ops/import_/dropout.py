"""Dropout: the identity (mask all true) unless training; the ``training_mode`` input decides,
else the call's mode (``apply(..., training=)``, else ``model.train()``/``model.eval()``).

Training draws the mask from the ``seed`` attribute when set, else from the node's subkey of
the call's PRNG key (``apply(..., rng=key)``): a new key per call gives a new mask.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import concrete


@importer("Dropout", since=22)
def dropout(ctx, x, ratio=None, training_mode=None, *, seed):
    train = ctx.training
    if training_mode is not None:
        train = bool(concrete(ctx, 2, training_mode, "training_mode").reshape(-1)[0])
    p = 0.5 if ratio is None else ratio
    c = concrete(ctx, 1, ratio, "ratio") if (ratio is not None and ctx.const(1) is not None) else None
    if not train or (c is not None and float(c) == 0.0):
        return x if ctx.num_outputs == 1 else (x, jnp.ones(x.shape, bool))
    keep = jax.random.uniform(ctx.rng(seed), x.shape, jnp.float32) >= jnp.asarray(p, jnp.float32)
    scale = 1.0 / (1.0 - jnp.asarray(p, np.float32))
    y = jnp.where(keep, x * scale.astype(x.dtype), jnp.zeros_like(x))
    return y if ctx.num_outputs == 1 else (y, keep)
