"""Random ops: RandomNormal(Like), RandomUniform(Like), Bernoulli, Multinomial.

A ``seed`` attribute gives each call the same draws (a generator seeded per call); without it,
torch's global generator is used (``torch.manual_seed`` makes runs repeatable). The values can
never equal another runtime's draws, only their distribution.
"""

from __future__ import annotations

import numpy as np
import torch

from onnxport import ImportCase, importer

from ...dtypes import to_torch_dtype

# Declared cases use settings with one possible outcome (zero spread, certain events), so the
# values can be compared exactly; the distributions are tested in tests/torch/test_import_random.py.
_P = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=np.float32)
_CERTAIN = np.array([[0.0, -np.inf, -np.inf], [-np.inf, -np.inf, 0.0]], dtype=np.float32)


def _generator(seed: float | None) -> torch.Generator | None:
    return torch.Generator().manual_seed(int(seed)) if seed is not None else None


def _float_dtype(ctx, dtype: int | None, like: torch.Tensor | None) -> torch.dtype:
    out = to_torch_dtype(dtype) if dtype is not None else (like.dtype if like is not None else torch.float32)
    if not out.is_floating_point:
        raise ctx.error(f"random values need a floating-point dtype, got {out}")
    return out


def _normal(ctx, shape, dtype, mean: float, scale: float, seed: float | None) -> torch.Tensor:
    # drawn in float32 at least (no randn kernel for every narrow type), rounded once
    work = torch.float64 if dtype == torch.float64 else torch.float32
    z = torch.randn(shape, dtype=work, generator=_generator(seed))
    return (z * scale + mean).to(dtype)


def _uniform(ctx, shape, dtype, low: float, high: float, seed: float | None) -> torch.Tensor:
    work = torch.float64 if dtype == torch.float64 else torch.float32
    u = torch.rand(shape, dtype=work, generator=_generator(seed))
    return (u * (high - low) + low).to(dtype)


@importer("RandomNormal", since=22, cases=[
    ImportCase((), {"shape": [2, 3], "mean": 1.5, "scale": 0.0}, expected=(np.full((2, 3), 1.5, np.float32),),
               name="zero_scale"),
    ImportCase((), {"shape": [4], "mean": -2.0, "scale": 0.0, "dtype": 11, "seed": 3.0},
               expected=(np.full((4,), -2.0, np.float64),), name="double_seeded"),
])
def random_normal(ctx, *, dtype: int, mean: float, scale: float, seed: float | None,
                  shape: list[int]) -> torch.Tensor:
    return _normal(ctx, shape, _float_dtype(ctx, dtype, None), mean, scale, seed)


@importer("RandomUniform", since=22, cases=[
    ImportCase((), {"shape": [3, 1], "low": 0.75, "high": 0.75}, expected=(np.full((3, 1), 0.75, np.float32),),
               name="point"),
    ImportCase((), {"shape": [2], "low": -2.0, "high": -2.0, "dtype": 10},
               expected=(np.full((2,), -2.0, np.float16),), name="float16"),
])
def random_uniform(ctx, *, dtype: int, high: float, low: float, seed: float | None,
                   shape: list[int]) -> torch.Tensor:
    return _uniform(ctx, shape, _float_dtype(ctx, dtype, None), low, high, seed)


@importer("RandomNormalLike", since=22, cases=[
    ImportCase((np.zeros((2, 2), np.int32),), {"dtype": 1, "mean": 0.25, "scale": 0.0},
               expected=(np.full((2, 2), 0.25, np.float32),), name="from_int32"),
    ImportCase((np.zeros((3,), np.float64),), {"mean": 4.0, "scale": 0.0},
               expected=(np.full((3,), 4.0, np.float64),), name="input_dtype"),
])
def random_normal_like(ctx, x: torch.Tensor, *, dtype: int | None, mean: float, scale: float,
                       seed: float | None) -> torch.Tensor:
    return _normal(ctx, x.shape, _float_dtype(ctx, dtype, x), mean, scale, seed)


@importer("RandomUniformLike", since=22, cases=[
    ImportCase((np.zeros((2, 5), np.float32),), {"low": 3.0, "high": 3.0},
               expected=(np.full((2, 5), 3.0, np.float32),), name="point"),
])
def random_uniform_like(ctx, x: torch.Tensor, *, dtype: int | None, high: float, low: float,
                        seed: float | None) -> torch.Tensor:
    return _uniform(ctx, x.shape, _float_dtype(ctx, dtype, x), low, high, seed)


@importer("Bernoulli", since=22, cases=[
    ImportCase((_P,), expected=(_P,), name="certain"),
    ImportCase((_P.astype(np.float64),), {"dtype": 7, "seed": 1.0}, expected=(_P.astype(np.int64),), name="int64_out"),
])
def bernoulli(ctx, p: torch.Tensor, *, dtype: int | None, seed: float | None) -> torch.Tensor:
    out = to_torch_dtype(dtype) if dtype is not None else p.dtype
    work = torch.float64 if p.dtype == torch.float64 else torch.float32
    u = torch.rand(p.shape, dtype=work, generator=_generator(seed))
    return (u < p.to(work)).to(out)


@importer("Multinomial", since=22, cases=[
    ImportCase((_CERTAIN,), {"sample_size": 4}, expected=(np.array([[0] * 4, [2] * 4], np.int32),), name="certain"),
    ImportCase((_CERTAIN,), {"dtype": 7, "seed": 5.0}, expected=(np.array([[0], [2]], np.int64),), name="int64"),
])
def multinomial(ctx, logits: torch.Tensor, *, dtype: int, sample_size: int,
                seed: float | None) -> torch.Tensor:
    if logits.dim() != 2:
        raise ctx.error(f"input must be 2-D (batch, classes), got shape {list(logits.shape)}")
    out = to_torch_dtype(dtype)
    if out not in (torch.int32, torch.int64):
        raise ctx.error(f"dtype must be int32 or int64, got {out}")
    probs = torch.softmax(logits.to(torch.float64), dim=-1)
    draws = torch.multinomial(probs, sample_size, replacement=True, generator=_generator(seed))
    return draws.to(out)
