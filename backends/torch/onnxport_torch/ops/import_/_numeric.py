"""Exact integer helpers for the arithmetic, comparison and reduction primitives.

torch has only a few kernels for uint16/uint32/uint64 (no add, compare, max, shift, ...).
These helpers move such tensors to an int64 *carrier* that holds the same information,
compute there, and move the result back without loss:

- uint16/uint32 values fit in int64: the carrier is the widened value.
- uint64 values do not: the carrier is the same 64 bits viewed as int64. Add, Sub, Mul, the
  bitwise ops and left shifts give the same bits in two's complement; ordering, division and
  right shifts get dedicated helpers below.
"""

from __future__ import annotations

import torch

WIDE_UNSIGNED = frozenset({torch.uint16, torch.uint32, torch.uint64})
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
#: the signed dtype of the same width (bit views for the bitwise ops)
SAME_WIDTH_SIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def carrier(x: torch.Tensor) -> torch.Tensor:
    """The int64 carrier of a wide unsigned tensor (wrap-around arithmetic is exact); others as is."""
    if x.dtype in (torch.uint16, torch.uint32):
        return x.to(torch.int64)
    if x.dtype == torch.uint64:
        return x.view(torch.int64)
    return x


def restore(y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Back from the int64 carrier to ``dtype`` (modulo 2**bits, as unsigned arithmetic wraps)."""
    if dtype in (torch.uint16, torch.uint32):
        return y.to(dtype)
    if dtype == torch.uint64:
        return y.view(torch.uint64) if y.dtype == torch.int64 else y.to(torch.int64).view(torch.uint64)
    return y if y.dtype == dtype else y.to(dtype)


def ordered(x: torch.Tensor) -> torch.Tensor:
    """An order-preserving signed image of ``x`` (uint64: flip the top bit); others as ``carrier``."""
    if x.dtype == torch.uint64:
        return x.view(torch.int64) ^ _INT64_MIN
    return carrier(x)


def unordered(y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The inverse of ``ordered``."""
    if dtype == torch.uint64:
        return (y ^ _INT64_MIN).view(torch.uint64)
    return restore(y, dtype)


def shift_right_logical(x: torch.Tensor, n: torch.Tensor | int) -> torch.Tensor:
    """Logical right shift of int64 bit patterns by ``n`` in [0, 63]."""
    n = torch.as_tensor(n, dtype=torch.int64, device=x.device)
    once = (x >> 1) & _INT64_MAX
    rest = once >> torch.clamp(n - 1, min=0)
    return torch.where(n == 0, x, rest)


def _uge(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Unsigned ``a >= b`` on int64 bit patterns."""
    return (a ^ _INT64_MIN) >= (b ^ _INT64_MIN)


def udivmod64(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Unsigned 64-bit quotient and remainder of int64 bit patterns (divisor non-zero)."""
    a, b = torch.broadcast_tensors(a, b)
    big = b < 0  # divisor >= 2**63: quotient is 0 or 1
    q_big = _uge(a, b).to(torch.int64)
    # divisor < 2**63: halve the dividend so it is non-negative, divide, then correct once
    b_safe = torch.where(big | (b == 0), torch.ones_like(b), b)
    q = torch.div(shift_right_logical(a, 1), b_safe, rounding_mode="trunc") << 1
    r = a - q * b_safe
    fix = _uge(r, b_safe)
    q = q + fix.to(torch.int64)
    r = torch.where(fix, r - b_safe, r)
    q = torch.where(big, q_big, q)
    r = torch.where(big, a - q_big * b, r)
    if bool((b == 0).any()):
        raise ZeroDivisionError("integer division by zero")
    return q, r


def is_float(t: torch.Tensor) -> bool:
    """Whether ``t`` holds floating-point (or complex) values."""
    return t.is_floating_point() or t.is_complex()
