"""``nnx.MultiHeadAttention`` during an export: one ``onnxport_nnx_attention`` primitive -> the
query / key / value projections (Einsum + bias), one ONNX Attention (opset 23 on) and the output
projection: the graph the traced projections and softmax attention are fused into. Calls it does
not handle run Flax's own ``__call__`` (see :func:`intercept`)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax.core import ShapedArray
from jax.extend.core import Primitive

from onnxport import Sample, exporter

from ...layer_state import current_opset, is_param_value, is_trace_value, made_by, remember
from ._samples import randn

attention_p = Primitive("onnxport_nnx_attention")
#: below this opset every call runs Flax's own ``__call__``
MIN_OPSET = 23


@attention_p.def_abstract_eval
def _abstract(q: Any, k: Any, v: Any, *params: Any, num_heads: int, causal: bool) -> ShapedArray:
    return ShapedArray((*q.shape[:-1], params[6].shape[-1]), q.dtype)


def layer_class() -> type:
    from flax import nnx

    return nnx.MultiHeadAttention


def function_patches() -> list[tuple[Any, str, Any]]:
    """``nnx.make_causal_mask`` notes the masks it makes during an export: such a mask is
    Attention's ``is_causal`` (its own computation is traced and left unused)."""
    import flax.nnx
    from flax.nnx.nn import attention as flax_attention

    def make(own: Any) -> Any:
        def make_causal_mask(x: Any, extra_batch_dims: int = 0, dtype: Any = jnp.float32) -> Any:
            out = own(x, extra_batch_dims=extra_batch_dims, dtype=dtype)
            if current_opset() is not None and extra_batch_dims == 0 and is_trace_value(out):
                remember("causal_mask", out)
            return out

        make_causal_mask.__wrapped__ = own  # type: ignore[attr-defined]
        return make_causal_mask

    return [(flax.nnx, "make_causal_mask", make), (flax_attention, "make_causal_mask", make)]


_CALL_DEFAULTS = {"sow_weights": False, "decode": None, "is_causal": False,
                  "out_sharding": None, "qkv_sharding": None}


def _symbolic_dims(shape: tuple[Any, ...]) -> int:
    """How many sizes of ``shape`` are symbolic."""
    return sum(not isinstance(d, (int, np.integer)) for d in shape)


def intercept(layer: Any, opset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The primitive's result, or ``NotImplemented`` (Flax's own call) unless: opset 23 or later;
    rank-3 float32 plain trace inputs of static shapes (with a symbolic size Flax's
    traced attention is not fused, and its numbers differ from Attention's in the last bit); no mask
    but one ``nnx.make_causal_mask`` made during this export, for equal query and key lengths; no
    causal flag,
    no decode cache, no sown weights, no sharding; dropout off (rate 0, or deterministic);
    Flax's default attention function, dot_generals, dtype promotion and precision, no ``dtype``;
    biases used; as many key / value heads as query heads; no query / key normalization."""
    from flax.nnx.nn import attention as flax_attention
    from flax.nnx.nn import dtypes as flax_dtypes

    if opset < MIN_OPSET or not 1 <= len(args) <= 3:
        return NotImplemented
    rest = {k: v for k, v in kwargs.items() if k not in ("deterministic", "rngs", "mask")}
    mask = kwargs.get("mask")
    if set(rest) - set(_CALL_DEFAULTS) or any(rest[k] is not _CALL_DEFAULTS[k] and rest[k] != _CALL_DEFAULTS[k]
                                              for k in rest):
        return NotImplemented
    if layer.dropout_rate > 0.0:
        det = kwargs.get("deterministic")
        if (det if det is not None else layer.deterministic) is not True:
            return NotImplemented
    if (layer.decode or layer.normalize_qk or not layer.use_bias or layer.dtype is not None
            or layer.precision is not None or layer.attention_fn is not flax_attention.dot_product_attention
            or layer.num_kv_heads != layer.num_heads
            or any(getattr(layer, a) is not None for a in ("qkv_dot_general", "out_dot_general",
                                                            "qkv_dot_general_cls", "out_dot_general_cls"))
            or any(getattr(layer, a) is not flax_dtypes.promote_dtype
                   for a in ("qkv_promote_dtype", "out_promote_dtype"))):
        return NotImplemented
    q = args[0]
    k = args[1] if len(args) > 1 and args[1] is not None else q
    v = args[2] if len(args) > 2 and args[2] is not None else k
    if len(args) > 2 and args[2] is not None and (len(args) < 2 or args[1] is None):
        return NotImplemented  # Flax refuses a value without a key: its own call says so
    for x in (q, k, v):
        if not is_trace_value(x) or x.dtype != jnp.float32 or x.ndim != 3 or _symbolic_dims(x.shape):
            return NotImplemented
    if k.shape[:2] != v.shape[:2] or q.shape[-1] != layer.in_features or k.shape[-1] != layer.in_kv_features \
            or v.shape[-1] != layer.in_kv_features:
        return NotImplemented
    causal = mask is not None
    if causal and (not made_by("causal_mask", mask) or mask.shape != (q.shape[0], 1, q.shape[1], k.shape[1])
                   or q.shape[1] != k.shape[1]):
        return NotImplemented
    heads, depth = layer.num_heads, layer.head_dim
    params = []
    for proj, n_in in ((layer.query, q.shape[-1]), (layer.key, k.shape[-1]), (layer.value, v.shape[-1])):
        params += [proj.kernel[...], proj.bias[...]]
        if params[-2].shape != (n_in, heads, depth) or params[-1].shape != (heads, depth):
            return NotImplemented
    params += [layer.out.kernel[...], layer.out.bias[...]]
    if params[-2].ndim != 3 or params[-2].shape[:2] != (heads, depth) or params[-1].shape != params[-2].shape[2:]:
        return NotImplemented
    if any(not is_param_value(p) or p.dtype != jnp.float32 for p in params):
        return NotImplemented
    return attention_p.bind(q, k, v, *params, num_heads=heads, causal=causal)


def _mha(features: int, heads: int) -> Any:
    from flax import nnx

    return nnx.MultiHeadAttention(heads, features, decode=False, rngs=nnx.Rngs(0))


def _attention_scale(depth: int) -> float:
    """Flax divides the query by ``sqrt(depth)`` in float32."""
    return float(np.float32(1.0) / np.sqrt(np.float32(depth)))


@exporter("lax.onnxport_nnx_attention", samples=lambda: [
    # one row each: the testkit makes a dim 0 over 1 symbolic, and then Flax's own call is traced
    Sample(_mha(8, 2), (randn(1, 5, 8),), emits=("Einsum", "Attention"), name="self"),
    Sample(_mha(12, 3), (randn(1, 4, 12), randn(1, 6, 12, seed=1)), emits=("Einsum", "Attention"), name="cross"),
])
def nnx_attention(g, q, k, v, qk, qb, kk, kb, vk, vb, ok, ob, *, num_heads, causal=False):
    """Per projection ``Einsum(x, kernel) + bias`` (heads split), the three flattened to
    ``(batch, length, heads * depth)`` for Attention, its result split back into heads, then the
    output Einsum over heads and depth + bias."""
    depth = g.in_aval(3).shape[-1]
    ones = np.asarray([1, 1, num_heads, depth], np.int64)

    def project(x, kernel, bias):
        y = g.op("Einsum", x, kernel, equation="abc,cde->abde")
        return g.op("Add", y, g.op("Reshape", bias, g.const(ones)))

    def flat(x, i):
        dims = [g.dim_or_none(d) for d in g.in_aval(i).shape[:2]]
        spec = np.asarray([-1 if d is None else d for d in dims] + [num_heads * depth], np.int64)
        return g.op("Reshape", x, g.initializer(g.fresh("attention_shape"), spec))

    # the projections first, then the reshapes: the node order of the fused graph (onnxruntime's
    # results depend on it in the last bit)
    qkv = [project(x, kern, b) for x, kern, b in ((q, qk, qb), (k, kk, kb), (v, vk, vb))]
    qs, ks, vs = (flat(x, i) for i, x in enumerate(qkv))
    y = g.op("Attention", qs, ks, vs, scale=_attention_scale(depth), is_causal=1 if causal else None,
             q_num_heads=num_heads, kv_num_heads=num_heads)
    dims = [g.dim_or_none(d) for d in g.in_aval(0).shape[:2]]
    y = g.op("Reshape", y, g.initializer(g.fresh("attention_shape"), np.asarray(
        [-1 if d is None else d for d in dims] + [num_heads, depth], np.int64)))
    out = g.op("Einsum", y, ok, equation="abcd,cde->abe")
    e = g.in_aval(9).shape[-1]
    return g.op("Add", out, g.op("Reshape", ob, g.const(np.asarray([1, 1, e], np.int64))))


def layer_primitive() -> Primitive:
    return attention_p
