"""Host arrays -> JAX arrays at import, the way ``jnp.asarray`` makes them, at a fraction of its cost.

An import turns every weight into a ``jax.Array``. ``jnp.asarray`` spends most of its time per
array in Python dispatch (about 27 us on CPU; ``jax.device_put`` about 60 us), which dominates
the import of a graph with many small initializers (10,000 of them: a quarter of a second).
:class:`Transfer` makes the first array with ``jnp.asarray`` and every further small one
through XLA's device put directly, with the same placement (device, sharding, uncommitted), a
copy of the values, and the dtype JAX would give it (arrays whose dtype ``jax_enable_x64``
would change go the public way). Large arrays go the public way too: there the per-array cost
is negligible beside the data, and ``jax.device_put`` may adopt an array nobody else holds.
Should the direct call be missing or fail (another JAX version), every array goes the public way.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

try:  # JAX internals, used only as a faster form of what the public functions do
    from jax._src.core import ShapedArray as _ShapedArray
    from jax._src.lib import xla_client as _xc

    _PUT: Any = _xc.batched_device_put
except (ImportError, AttributeError):  # pragma: no cover - a JAX without them
    _ShapedArray, _PUT = None, None

#: arrays of at most this many bytes take the direct path (a copy); larger ones ``jnp.asarray``
#: (or ``jax.device_put`` for an array the import owns)
SMALL_BYTES = 1 << 16


class Transfer:
    """Makes the JAX arrays of one import: ``transfer(arr, owned)`` is ``jnp.asarray(arr)``
    (``jax.device_put(arr)`` when ``owned``: an array nobody else holds, which it may adopt
    without a copy). Call it inside the x64 scope the arrays are made in."""

    def __init__(self) -> None:
        self._target: tuple[Any, list[Any], bool] | None = None  # jnp.asarray's sharding, devices, committed
        self._direct = _PUT is not None

    def __call__(self, arr: np.ndarray, owned: bool = False) -> jax.Array:
        if (self._direct and arr.nbytes <= SMALL_BYTES and arr.flags.c_contiguous
                and jax.dtypes.canonicalize_dtype(arr.dtype) == arr.dtype):
            if self._target is None:
                ref = jnp.asarray(arr)
                self._target = (ref.sharding, list(ref.devices()), bool(ref.committed))
                return ref
            sharding, devices, committed = self._target
            try:
                return _PUT(_ShapedArray(arr.shape, arr.dtype), sharding, [arr], devices, committed=committed,
                            force_copy=True)
            except Exception:  # pragma: no cover - internals that changed: the public way from now on
                self._direct = False
        return jax.device_put(arr) if owned else jnp.asarray(arr)
