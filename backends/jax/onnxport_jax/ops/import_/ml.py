"""ai.onnx.ml: LabelEncoder, TreeEnsemble, ArrayFeatureExtractor and Binarizer.

Numeric inputs may be traced (lookups are sorted-key searches, trees a fixed number of vectorized
descent steps); string tensors exist only as host numpy values and are mapped with numpy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erfinv

from onnxport import importer
from onnxport.opmath.mlops import BRANCH_MEMBER, label_table, membership_table, plain, tree_depth

from ._static import xp

_ML = "ai.onnx.ml"


def _text(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind in "OSU"


def _label_table(ctx, attrs):
    with ctx.raising():
        return label_table(attrs)


@importer("LabelEncoder", since=4, domain=_ML)
def label_encoder(ctx, x, **attrs):
    """Map each element through keys -> values (the last repeated key wins; NaN keys match NaN)."""
    keys, values, vdtype, default = _label_table(ctx, attrs)
    to_text = vdtype.kind == "O"
    if _text(x) or to_text:  # strings exist only on the host: a numpy dictionary lookup
        host = ctx.concrete(x, "LabelEncoder's input (string outputs exist only outside jax.jit)")
        table: dict = {}
        nan_value = None
        for k, v in zip(keys, values):
            if isinstance(k, float) and k != k:
                nan_value = v
            else:
                table[k] = v

        def look(e):
            e = plain(e)
            if isinstance(e, float) and e != e and nan_value is not None:
                return nan_value
            return table.get(e, default)

        out = np.array([look(e) for e in host.reshape(-1).tolist()], dtype=vdtype).reshape(host.shape)
        return out if to_text or ctx.is_static(x) else jnp.asarray(out)
    # numeric: search the sorted unique keys (the last occurrence of a key wins)
    m = xp(x)
    kdtype = np.dtype(x.dtype)
    last = {}
    nan_value = None
    for k, v in zip(keys, values):
        if isinstance(k, float) and k != k:
            nan_value = v
        else:
            last[k] = v
    sk = np.array(sorted(last), dtype=kdtype)
    sv = np.array([last[k] for k in sorted(last)], dtype=vdtype)
    fill = np.asarray(default, dtype=vdtype)
    if sk.size:
        pos = m.clip(m.searchsorted(sk, x), 0, sk.size - 1)
        hit = m.take(sk, pos) == x
        y = m.where(hit, m.take(sv, pos), fill)
    else:
        y = m.full(x.shape, fill, dtype=vdtype)
    if nan_value is not None and kdtype.kind == "f":
        y = m.where(m.isnan(x), np.asarray(nan_value, dtype=vdtype), y)
    return y.astype(vdtype)


# -- TreeEnsemble ------------------------------------------------------------------------------
def _depth(ctx, roots, t_id, t_leaf, f_id, f_leaf) -> int:
    with ctx.raising():
        return tree_depth(roots, t_id, t_leaf, f_id, f_leaf)


def _post_transform(ctx, y, kind: int):
    if kind == 0:
        return y
    if kind == 1:
        return jax.nn.softmax(y, axis=-1)
    if kind == 2:
        return jax.nn.sigmoid(y)
    if kind == 3:  # softmax over the non-zero scores; zeros stay zero
        nz = y != 0
        e = jnp.where(nz, jnp.exp(y - jnp.max(jnp.where(nz, y, -jnp.inf), axis=-1, keepdims=True)), 0)
        tot = jnp.sum(e, axis=-1, keepdims=True)
        return jnp.where(tot > 0, e / jnp.where(tot > 0, tot, 1), 0)
    if kind == 4:
        return jnp.sqrt(2.0).astype(y.dtype) * erfinv(2 * y - 1)
    raise ctx.error(f"unknown post_transform {kind}")


@importer("TreeEnsemble", since=5, domain=_ML)
def tree_ensemble(ctx, x, *, aggregate_function, leaf_targetids, leaf_weights, membership_values, n_targets,
                  nodes_falseleafs, nodes_falsenodeids, nodes_featureids, nodes_hitrates,
                  nodes_missing_value_tracks_true, nodes_modes, nodes_splits, nodes_trueleafs,
                  nodes_truenodeids, post_transform, tree_roots):
    """Evaluate every tree by ``depth`` vectorized descent steps, then aggregate leaf weights per target."""
    x = jnp.asarray(x)
    dt = x.dtype
    modes = np.asarray(nodes_modes, np.int64).reshape(-1)
    count = modes.size
    t_id, f_id = np.asarray(nodes_truenodeids, np.int64), np.asarray(nodes_falsenodeids, np.int64)
    t_leaf, f_leaf = np.asarray(nodes_trueleafs, bool), np.asarray(nodes_falseleafs, bool)
    feats = np.asarray(nodes_featureids, np.int64)
    splits = np.asarray(nodes_splits, np.float64).reshape(-1)
    mvt = (np.asarray(nodes_missing_value_tracks_true, bool) if nodes_missing_value_tracks_true
           else np.zeros(count, bool))
    with ctx.raising():  # membership sets -> a NaN-padded [nodes, P] table (NaN rows for other nodes)
        table, rows = membership_table([int(m) for m in modes], membership_values)
    members = np.where((modes == BRANCH_MEMBER)[:, None], table[rows], np.nan)
    roots = [int(r) for r in tree_roots]
    depth = _depth(ctx, roots, t_id, t_leaf, f_id, f_leaf)

    n = x.shape[0]
    root = np.asarray(roots, np.int64)
    root_leaf = t_leaf[root] & f_leaf[root] & (t_id[root] == f_id[root])  # a one-leaf tree
    idx = jnp.broadcast_to(jnp.asarray(np.where(root_leaf, t_id[root], root)), (n, len(roots)))
    at_leaf = jnp.broadcast_to(jnp.asarray(root_leaf), (n, len(roots)))
    feats_j, splits_j, modes_j = jnp.asarray(feats), jnp.asarray(splits, dt), jnp.asarray(modes)
    members_j, mvt_j = jnp.asarray(members, dt), jnp.asarray(mvt)
    t_id_j, f_id_j, t_leaf_j, f_leaf_j = map(jnp.asarray, (t_id, f_id, t_leaf, f_leaf))
    rows = jnp.arange(n)[:, None]
    for _ in range(depth):
        node = jnp.where(at_leaf, 0, idx)
        v = x[rows, feats_j[node]]
        s = splits_j[node]
        mode = modes_j[node]
        go = jnp.select(
            [mode == 0, mode == 1, mode == 2, mode == 3, mode == 4, mode == 5],
            [v <= s, v < s, v >= s, v > s, v == s, v != s],
            jnp.any(v[..., None] == members_j[node], axis=-1),
        )
        go = go | (mvt_j[node] & jnp.isnan(v))
        nxt = jnp.where(go, t_id_j[node], f_id_j[node])
        nxt_leaf = jnp.where(go, t_leaf_j[node], f_leaf_j[node])
        idx = jnp.where(at_leaf, idx, nxt)
        at_leaf = at_leaf | nxt_leaf
    weights = jnp.asarray(np.asarray(leaf_weights).reshape(-1), dt)[idx]  # [N, trees]
    targets = jnp.asarray(np.asarray(leaf_targetids, np.int64))[idx]
    out_rows = jnp.broadcast_to(rows, targets.shape)
    if aggregate_function in (0, 1):
        y = jnp.zeros((n, n_targets), dt).at[out_rows, targets].add(weights)
        if aggregate_function == 0:
            y = y / len(roots)
    elif aggregate_function in (2, 3):
        if aggregate_function == 2:
            y = jnp.full((n, n_targets), jnp.finfo(dt).max, dt).at[out_rows, targets].min(weights)
        else:
            y = jnp.full((n, n_targets), jnp.finfo(dt).min, dt).at[out_rows, targets].max(weights)
        hit = jnp.zeros((n, n_targets), bool).at[out_rows, targets].set(True)
        y = jnp.where(hit, y, jnp.zeros((), dt))  # a target no leaf reaches scores 0
    else:
        raise ctx.error(f"unknown aggregate_function {aggregate_function}")
    return _post_transform(ctx, y, int(post_transform)).astype(dt)


# -- ArrayFeatureExtractor and Binarizer ----------------------------------------------------------
@importer("ArrayFeatureExtractor", since=1, domain=_ML)
def array_feature_extractor(ctx, x, indices):
    """Select ``indices`` (flattened) along the last axis; a 1-D input gives one row ``[1, k]``."""
    m = xp(x, indices)
    flat = m.reshape(indices, (-1,))
    y = m.take(x, flat, axis=-1)
    return m.reshape(y, (1, -1)) if x.ndim == 1 else y


@importer("Binarizer", since=1, domain=_ML)
def binarizer(ctx, x, *, threshold):
    """1 where ``x > threshold``, else 0, in the input's type."""
    m = xp(x)
    return m.where(x > np.asarray(threshold, x.dtype), np.ones((), x.dtype), np.zeros((), x.dtype))
