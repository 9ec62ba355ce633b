"""Random ops: RandomNormal(Like), RandomUniform(Like), Bernoulli, Multinomial.

A ``seed`` attribute fixes the draws (``jax.random.key(seed)``). Without one, a seed is drawn
from numpy's global generator when the op runs, i.e. once per trace: a jitted function repeats
its draws (``np.random.seed`` makes runs repeatable). The values can never equal another
runtime's draws, only their distribution.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from onnxport import importer

from ._static import np_dtype


def key(seed: float | None) -> jax.Array:
    """A PRNG key from the ``seed`` attribute, else from numpy's global generator."""
    if seed is None:
        seed = np.random.randint(0, 2**31 - 1)
    return jax.random.key(int(seed))


def _float(ctx, dtype: int | None, like) -> np.dtype:
    out = np_dtype(dtype, like.dtype if like is not None else np.float32)
    if out.kind != "f" and out.name != "bfloat16":
        raise ctx.error(f"random values need a floating-point dtype, got {out}")
    return out


def _work(dtype: np.dtype):
    # drawn in float32 at least (float64 when asked), rounded once
    return jnp.float64 if dtype == np.float64 else jnp.float32


def _normal(shape, dtype, mean, scale, seed):
    z = jax.random.normal(key(seed), tuple(int(s) for s in shape), _work(dtype))
    return (z * scale + mean).astype(dtype)


def _uniform(shape, dtype, low, high, seed):
    u = jax.random.uniform(key(seed), tuple(int(s) for s in shape), _work(dtype))
    return (u * (high - low) + low).astype(dtype)


@importer("RandomNormal", since=22)
def random_normal(ctx, *, dtype, mean, scale, seed, shape):
    return _normal(shape, _float(ctx, dtype, None), mean, scale, seed)


@importer("RandomUniform", since=22)
def random_uniform(ctx, *, dtype, high, low, seed, shape):
    return _uniform(shape, _float(ctx, dtype, None), low, high, seed)


@importer("RandomNormalLike", since=22)
def random_normal_like(ctx, x, *, dtype, mean, scale, seed):
    return _normal(x.shape, _float(ctx, dtype, x), mean, scale, seed)


@importer("RandomUniformLike", since=22)
def random_uniform_like(ctx, x, *, dtype, high, low, seed):
    return _uniform(x.shape, _float(ctx, dtype, x), low, high, seed)


@importer("Bernoulli", since=22)
def bernoulli(ctx, x, *, dtype, seed):
    """1 with probability ``x`` (elementwise), in ``dtype`` (default: the input's)."""
    out = np_dtype(dtype, x.dtype)
    u = jax.random.uniform(key(seed), x.shape, _work(np.dtype(x.dtype)))
    return (u < x).astype(out)


@importer("Multinomial", since=22)
def multinomial(ctx, x, *, dtype, sample_size, seed):
    """``sample_size`` class draws per batch row from unnormalized log-probabilities ``x``."""
    out = np_dtype(dtype, np.int32)
    draws = jax.random.categorical(key(seed), x, axis=-1, shape=(sample_size, x.shape[0]))
    return jnp.transpose(draws).astype(out)
