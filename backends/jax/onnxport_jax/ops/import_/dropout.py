"""Dropout: identity (mask all true) unless training; ``training_mode`` (input) decides, else
the model's mode (``model.train()``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import concrete
from .random import key


@importer("Dropout", since=22)
def dropout(ctx, x, ratio=None, training_mode=None, *, seed):
    train = ctx.training
    if training_mode is not None:
        train = bool(concrete(ctx, 2, training_mode, "training_mode").reshape(-1)[0])
    p = 0.5 if ratio is None else ratio
    c = concrete(ctx, 1, ratio, "ratio") if (ratio is not None and ctx.const(1) is not None) else None
    if not train or (c is not None and float(c) == 0.0):
        y, mask = x, jnp.ones(x.shape, bool)
    else:
        keep = jax.random.uniform(key(seed), x.shape, jnp.float32) >= jnp.asarray(p, jnp.float32)
        scale = 1.0 / (1.0 - jnp.asarray(p, np.float32))
        y = jnp.where(keep, x * scale.astype(x.dtype), jnp.zeros_like(x))
        mask = keep
    return y if ctx.num_outputs == 1 else (y, mask)
