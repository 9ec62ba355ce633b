"""Framework-free arithmetic the contrib ops share across torch, JAX and TensorFlow: layouts of
packed weights, permutations, head splits. Bad attributes raise ValueError (a primitive turns it
into an error naming its node with ``with ctx.raising():``)."""

from __future__ import annotations

import numpy as np


def fused_matmul_perm(rank: int, trans: int, trans_batch: int) -> list[int] | None:
    """The permutation FusedMatMul applies to an operand of ``rank`` before the product (None:
    none): ``transBatch`` moves dim 0 behind the batch dims (``[1, ..., r-2, 0, r-1]``), then
    ``trans`` swaps the last two."""
    if rank < 2:
        if trans or trans_batch:
            raise ValueError(f"transA/transB/transBatch need an operand of rank 2 or more, got rank {rank}")
        return None
    perm = list(range(rank))
    if trans_batch and rank > 2:
        perm = list(range(1, rank - 1)) + [0, rank - 1]
    if trans:
        perm[-1], perm[-2] = perm[-2], perm[-1]
    return None if perm == list(range(rank)) else perm


def nbits_layout(k: int, n: int, bits: int, block_size: int, b_shape: tuple[int, ...] | None = None) -> tuple[int, int]:
    """``(k_blocks, blob_size)`` of MatMulNBits' packed B ``(N, k_blocks, blob_size)``: each of
    N rows holds ceil(K / block_size) blocks of ``block_size`` values, ``bits`` each, packed
    little end first. Raises ValueError for a layout onnxruntime rejects or B's shape contradicts."""
    if bits not in (2, 4, 8):
        raise ValueError(f"MatMulNBits with bits={bits}: only 2, 4 and 8 are byte-aligned (onnxruntime's CPU kernels)")
    if block_size < 16 or block_size & (block_size - 1):
        raise ValueError(f"MatMulNBits block_size {block_size} must be a power of 2 and at least 16")
    if k <= 0 or n <= 0:
        raise ValueError(f"MatMulNBits needs positive K and N, got K={k}, N={n}")
    k_blocks = -(-k // block_size)
    blob = block_size * bits // 8
    if b_shape is not None and tuple(b_shape) != (n, k_blocks, blob):
        raise ValueError(f"MatMulNBits B has shape {tuple(b_shape)}, but K={k}, N={n}, bits={bits}, "
                         f"block_size={block_size} need ({n}, {k_blocks}, {blob})")
    return k_blocks, blob


def nbits_shifts(bits: int) -> np.ndarray:
    """The right shifts that take each ``bits``-wide value out of a byte, first value lowest."""
    return np.arange(0, 8, bits, dtype=np.uint8)


def pack_nbits(q: np.ndarray, bits: int) -> np.ndarray:
    """Pack unsigned ``bits``-wide values along the last axis into bytes, first value in the low
    bits (the last axis is padded with zeros to whole bytes): the inverse of the primitives'
    unpacking (test inputs, and writers of MatMulNBits weights)."""
    per = 8 // bits
    q = np.asarray(q, np.uint8)
    pad = (-q.shape[-1]) % per
    if pad:
        q = np.concatenate([q, np.zeros(q.shape[:-1] + (pad,), np.uint8)], axis=-1)
    q = q.reshape(q.shape[:-1] + (q.shape[-1] // per, per))
    return np.bitwise_or.reduce(q << nbits_shifts(bits), axis=-1).astype(np.uint8)


def rotary_heads(shape: tuple, cos_shape: tuple, num_heads: int, rotary_dim: int) -> tuple[int, int, int]:
    """``(num_heads, head_size, rotary_dim)`` of a RotaryEmbedding input: 4-D ``(B, N, S, H)`` says
    them; 3-D ``(B, S, N*H)`` needs ``num_heads`` unless the rotation covers whole heads (then
    ``head_size = 2 * cos_cache.shape[1]``)."""
    if len(shape) == 4:
        heads, head_size = int(shape[1]), int(shape[3])
    elif len(shape) == 3:
        hidden = int(shape[2])
        if num_heads:
            heads = num_heads
        else:
            if rotary_dim:
                raise ValueError("RotaryEmbedding with rotary_embedding_dim on a 3-D input needs num_heads")
            heads = hidden // (2 * int(cos_shape[1]))
        if heads <= 0 or hidden % heads:
            raise ValueError(f"RotaryEmbedding hidden size {hidden} is not a multiple of num_heads {heads}")
        head_size = hidden // heads
    else:
        raise ValueError(f"RotaryEmbedding input must be 3-D (B, S, hidden) or 4-D (B, N, S, H), got rank {len(shape)}")
    rdim = rotary_dim or head_size
    if rdim % 2 or rdim > head_size or int(cos_shape[1]) * 2 != rdim:
        raise ValueError(f"RotaryEmbedding rotary dim {rdim} must be even, at most the head size {head_size}, "
                         f"and twice cos_cache's last dim {cos_shape[1]}")
    return heads, head_size, rdim


def gather_block_layout(data_shape: tuple, packed: bool, bits: int, block_size: int, gather_axis: int,
                        quantize_axis: int) -> tuple[int, int]:
    """Normalised ``(gather_axis, quantize_axis)`` of GatherBlockQuantized; uint8 data (``packed``)
    holds ``8 // bits`` values per byte along its last axis, gathers along axis 0 and quantizes
    along the last, as onnxruntime requires."""
    rank = len(data_shape)
    if bits not in (4, 8) or (bits == 8 and not packed):
        raise ValueError(f"GatherBlockQuantized bits={bits}: 4 (uint8, int4, uint4 data) or 8 (uint8 data)")
    if block_size < 16 or block_size & (block_size - 1):
        raise ValueError(f"GatherBlockQuantized block_size {block_size} must be a power of 2 and at least 16")
    ga, qa = gather_axis % rank, quantize_axis % rank
    if packed and (ga != 0 or qa != rank - 1):
        raise ValueError("GatherBlockQuantized on uint8 data gathers along axis 0 and quantizes along the last axis")
    return ga, qa


#: DynamicQuantizeMatMul quantizes A to uint8 over this range of integers
DYNAMIC_QMAX = 255.0
