"""Random ops: RandomNormal(Like), RandomUniform(Like), Bernoulli, Multinomial.

A ``seed`` attribute fixes the draws (the same on every call). Without one, the node draws from
its own subkey of the call's PRNG key (``apply(..., rng=key)``; ``model(...)`` passes a fresh
key per call), so a jitted function draws new values for each new key. The values can never
equal another runtime's draws, only their distribution.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from onnxport import ImportCase, importer

from ._static import np_dtype


def _float(ctx, dtype: int | None, like) -> np.dtype:
    out = np_dtype(dtype, like.dtype if like is not None else np.float32)
    if out.kind != "f" and out.name != "bfloat16":
        raise ctx.error(f"random values need a floating-point dtype, got {out}")
    return out


def _work(dtype: np.dtype):
    # drawn in float32 at least (float64 when asked), rounded once
    return jnp.float64 if dtype == np.float64 else jnp.float32


def _normal(ctx, shape, dtype, mean, scale, seed):
    z = jax.random.normal(ctx.rng(seed), tuple(int(s) for s in shape), _work(dtype))
    return (z * scale + mean).astype(dtype)


def _uniform(ctx, shape, dtype, low, high, seed):
    u = jax.random.uniform(ctx.rng(seed), tuple(int(s) for s in shape), _work(dtype))
    return (u * (high - low) + low).astype(dtype)


@importer("RandomNormal", since=22, cases=[
    ImportCase((), {"shape": [3, 2], "mean": 0.5, "scale": 0.0}, expected=(np.full((3, 2), 0.5, np.float32),),
               name="zero_scale"),
    ImportCase((), {"shape": [2], "mean": 7.0, "scale": 0.0, "dtype": 11, "seed": 5.0},
               expected=(np.full((2,), 7.0, np.float64),), name="double_seeded"),
])
def random_normal(ctx, *, dtype, mean, scale, seed, shape):
    return _normal(ctx, shape, _float(ctx, dtype, None), mean, scale, seed)


@importer("RandomUniform", since=22, cases=[  # no official node case: a degenerate range is exact
    ImportCase((), {"shape": [3, 1], "low": 0.75, "high": 0.75, "seed": 1.0},
               expected=(np.full((3, 1), 0.75, np.float32),), name="point"),
    ImportCase((), {"shape": [2], "low": -2.0, "high": -2.0, "dtype": 10, "seed": 2.0},
               expected=(np.full((2,), -2.0, np.float16),), name="float16"),
])
def random_uniform(ctx, *, dtype, high, low, seed, shape):
    return _uniform(ctx, shape, _float(ctx, dtype, None), low, high, seed)


@importer("RandomNormalLike", since=22, cases=[  # zero scale: exact, whatever the key
    ImportCase((np.zeros((2, 2), np.int32),), {"dtype": 1, "mean": 0.25, "scale": 0.0, "seed": 1.0},
               expected=(np.full((2, 2), 0.25, np.float32),), name="from_int32"),
    ImportCase((np.zeros((3,), np.float64),), {"mean": 4.0, "scale": 0.0, "seed": 2.0},
               expected=(np.full((3,), 4.0, np.float64),), name="input_dtype"),
])
def random_normal_like(ctx, x, *, dtype, mean, scale, seed):
    return _normal(ctx, x.shape, _float(ctx, dtype, x), mean, scale, seed)


@importer("RandomUniformLike", since=22, cases=[  # a degenerate range is exact, whatever the key
    ImportCase((np.zeros((2, 3), np.float32),), {"low": 0.5, "high": 0.5, "seed": 1.0},
               expected=(np.full((2, 3), 0.5, np.float32),), name="point"),
    ImportCase((np.zeros((2,), np.int32),), {"dtype": 11, "low": -3.0, "high": -3.0},
               expected=(np.full((2,), -3.0, np.float64),), name="from_int32"),
])
def random_uniform_like(ctx, x, *, dtype, high, low, seed):
    return _uniform(ctx, x.shape, _float(ctx, dtype, x), low, high, seed)


_P = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], np.float32)


# probabilities 0 and 1 have one outcome, compared exactly; the distribution is tested in
# tests/jax/test_import_random.py (the official node cases hold numpy's draws)
@importer("Bernoulli", since=22, cases=[
    ImportCase((_P,), {"seed": 3.0}, expected=(_P,), name="certain"),
    ImportCase((_P,), {"dtype": 6, "seed": 1.0}, expected=(_P.astype(np.int32),), name="int32_out"),
])
def bernoulli(ctx, x, *, dtype, seed):
    """1 with probability ``x`` (elementwise), in ``dtype`` (default: the input's)."""
    out = np_dtype(dtype, x.dtype)
    u = jax.random.uniform(ctx.rng(seed), x.shape, _work(np.dtype(x.dtype)))
    return (u < x).astype(out)


_CERTAIN = np.array([[0.0, -np.inf, -np.inf], [-np.inf, -np.inf, 0.0]], np.float32)


@importer("Multinomial", since=22, cases=[
    ImportCase((_CERTAIN,), {"sample_size": 4}, expected=(np.array([[0] * 4, [2] * 4], np.int32),), name="certain"),
    ImportCase((_CERTAIN,), {"sample_size": 2, "dtype": 7, "seed": 2.0},
               expected=(np.array([[0, 0], [2, 2]], np.int64),), name="int64_seeded"),
])
def multinomial(ctx, x, *, dtype, sample_size, seed):
    """``sample_size`` class draws per batch row from unnormalized log-probabilities ``x``."""
    out = np_dtype(dtype, np.int32)
    draws = jax.random.categorical(ctx.rng(seed), x, axis=-1, shape=(sample_size, x.shape[0]))
    return jnp.transpose(draws).astype(out)
