"""Col2Im's index arithmetic: where every (kernel tap, block position) of the input columns
lands in the flattened image."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def col2im_targets(image: Sequence[int], block: Sequence[int], dilations: Sequence[int] | None,
                   strides: Sequence[int] | None, pads: Sequence[int] | None, length: int) -> np.ndarray:
    """Per kernel tap and block position, ``[K, L]``, the flat image index the column value
    is added to; taps that fall in the padding get ``prod(image)`` (a slot to drop).

    Raises ValueError when ``length`` is not the number of blocks the settings give.
    """
    image, block = [int(i) for i in image], [int(b) for b in block]
    nd = len(image)
    dilations = list(dilations or [1] * nd)
    strides = list(strides or [1] * nd)
    pads = list(pads or [0] * (2 * nd))
    nblocks = [(image[i] + pads[i] + pads[nd + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
               for i in range(nd)]
    if int(np.prod(nblocks)) != length:
        raise ValueError(f"input has {length} blocks, the image/block settings give {nblocks}")
    # image coordinate of every (kernel tap, block position), per spatial dim
    taps = np.meshgrid(*[np.arange(k) for k in block], indexing="ij")
    locs = np.meshgrid(*[np.arange(b) for b in nblocks], indexing="ij")
    coords = [taps[i].reshape(-1, 1) * dilations[i] + locs[i].reshape(1, -1) * strides[i] - pads[i]
              for i in range(nd)]  # each [K, L]
    valid = np.all([(cd >= 0) & (cd < image[i]) for i, cd in enumerate(coords)], axis=0)
    flat = np.ravel_multi_index([np.where(valid, cd, 0) for cd in coords], image)
    return np.where(valid, flat, int(np.prod(image)))
