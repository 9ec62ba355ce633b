"""The ai.onnx.ml ops on numeric tensors: Binarizer, ArrayFeatureExtractor, LabelEncoder (int and
float keys/values; torch has no string tensors) and TreeEnsemble (opset 5)."""

from __future__ import annotations

import math

import numpy as np
import torch

from onnxport import importer
from onnxport.opmath.mlops import membership_table, tree_depth

from ...context import NodeContext

_ML = "ai.onnx.ml"


# -- Binarizer, ArrayFeatureExtractor -----------------------------------------------------------
@importer("Binarizer", since=1, domain=_ML)
def binarizer(ctx: NodeContext, x: torch.Tensor, *, threshold: float) -> torch.Tensor:
    """1 where x > threshold, else 0, in x's type."""
    return (x > threshold).to(x.dtype)


@importer("ArrayFeatureExtractor", since=1, domain=_ML)
def array_feature_extractor(ctx: NodeContext, x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """x[..., indices] with the indices flattened; a 1-D x gives one row [1, len(indices)]."""
    idx = indices.reshape(-1).to(torch.int64)
    width = x.shape[-1]
    if idx.numel() and bool(((idx < 0) | (idx >= width)).any()):
        raise ctx.error(f"indices {idx.tolist()} out of range for a last axis of size {width}")
    y = torch.index_select(x, x.dim() - 1, idx)
    return y.reshape(1, -1) if x.dim() == 1 else y


# -- LabelEncoder -------------------------------------------------------------------------------
def _pick(ctx: NodeContext, kind: str, floats, ints, strings, tensor) -> np.ndarray:
    """The one keys_*/values_* attribute that is set, as a 1-D numpy array."""
    given = [(n, v) for n, v in (("floats", floats), ("int64s", ints), ("strings", strings),
                                  ("tensor", tensor)) if v is not None]
    if len(given) != 1:
        raise ctx.error(f"exactly one {kind}_* attribute must be set, got "
                        f"{[f'{kind}_{n}' for n, _ in given] or 'none'}")
    name, value = given[0]
    if name == "strings" or (name == "tensor" and np.asarray(value).dtype.kind in "OSU"):
        raise ctx.error(f"string {kind} are not supported: torch has no string tensors")
    if name == "floats":
        return np.asarray(value, dtype=np.float32)
    if name == "int64s":
        return np.asarray(value, dtype=np.int64)
    return np.asarray(value).reshape(-1)


@importer("LabelEncoder", since=4, domain=_ML)  # declared cases: the testkit's semantic_cases
def label_encoder(ctx: NodeContext, x: torch.Tensor, *, default_float: float, default_int64: int,
                  default_string: str, default_tensor, keys_floats, keys_int64s, keys_strings,
                  keys_tensor, values_floats, values_int64s, values_strings, values_tensor) -> torch.Tensor:
    """Maps each element through the keys -> values table (the last of repeated keys wins; a NaN
    key matches NaN inputs); elements without a key get the default."""
    keys = _pick(ctx, "keys", keys_floats, keys_int64s, keys_strings, keys_tensor)
    values = _pick(ctx, "values", values_floats, values_int64s, values_strings, values_tensor)
    if len(keys) != len(values):
        raise ctx.error(f"{len(keys)} keys but {len(values)} values")
    if values_tensor is not None:
        if default_tensor is not None:
            default = np.asarray(default_tensor).reshape(-1)[0]
        else:  # the spec's defaults: -1 for integers, -0.0 for floats
            default = -0.0 if values.dtype.kind == "f" else -1
    else:
        default = default_float if values_floats is not None else default_int64
    out_dtype = torch.from_numpy(values[:0].copy()).dtype

    table: dict = {}
    nan_value = None
    for k, v in zip(keys.tolist(), values.tolist()):
        if isinstance(k, float) and math.isnan(k):
            nan_value = v
        else:
            table[k] = v
    fill = torch.full(x.shape, default, dtype=out_dtype, device=x.device)
    if table:
        sorted_keys = sorted(table)
        k_t = torch.tensor(sorted_keys, device=x.device).to(x.dtype)
        v_t = torch.tensor([table[k] for k in sorted_keys], device=x.device).to(out_dtype)
        pos = torch.searchsorted(k_t, x.contiguous()).clamp(max=len(sorted_keys) - 1)
        fill = torch.where(k_t[pos] == x, v_t[pos], fill)
    if nan_value is not None and x.is_floating_point():
        fill = torch.where(torch.isnan(x), torch.tensor(nan_value, dtype=out_dtype, device=x.device), fill)
    return fill


# -- TreeEnsemble -------------------------------------------------------------------------------
_LEQ, _LT, _GTE, _GT, _EQ, _NEQ, _MEMBER = range(7)
_AVERAGE, _SUM, _MIN, _MAX = range(4)
_POST = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def _depth(ctx: NodeContext, roots, true_ids, true_leaf, false_ids, false_leaf) -> int:
    """The most interior nodes on any root-to-leaf path (the number of descent steps)."""
    with ctx.raising():
        return tree_depth(roots, true_ids, true_leaf, false_ids, false_leaf)


def _post_transform(ctx: NodeContext, y: torch.Tensor, kind: int) -> torch.Tensor:
    if kind == 0:
        return y
    if kind == 1:
        return torch.softmax(y, dim=-1)
    if kind == 2:
        return torch.sigmoid(y)
    if kind == 3:  # softmax over the non-zero scores; zero scores stay zero
        nz = y != 0
        e = torch.where(nz, torch.exp(y - y.masked_fill(~nz, -math.inf).amax(-1, keepdim=True)),
                        torch.zeros((), dtype=y.dtype))
        total = e.sum(-1, keepdim=True)
        return torch.where(total > 0, e / torch.where(total > 0, total, 1), e)
    if kind == 4:
        return torch.special.ndtri(y)  # sqrt(2) * erfinv(2y - 1)
    raise ctx.error(f"unknown post_transform {kind} (expected 0..4: {', '.join(_POST)})")


@importer("TreeEnsemble", since=5, domain=_ML)  # declared cases: the testkit's semantic_cases
def tree_ensemble(ctx: NodeContext, x: torch.Tensor, *, aggregate_function: int, post_transform: int,
                  tree_roots, nodes_hitrates, nodes_missing_value_tracks_true, nodes_modes, leaf_weights,
                  leaf_targetids, nodes_falsenodeids, n_targets, nodes_trueleafs, nodes_featureids,
                  nodes_splits, nodes_falseleafs, nodes_truenodeids, membership_values) -> torch.Tensor:
    """Scores [N, n_targets]: every sample descends every tree (all trees and samples in step), the
    reached leaves' weights are aggregated per target, then post-transformed."""
    if x.dim() != 2:
        raise ctx.error(f"X must be [N, F], got shape {tuple(x.shape)}")
    if not tree_roots or n_targets is None:
        raise ctx.error("tree_roots and n_targets are required")
    if aggregate_function not in (_AVERAGE, _SUM, _MIN, _MAX):
        raise ctx.error(f"unknown aggregate_function {aggregate_function} (expected 0..3)")
    true_ids, false_ids = list(nodes_truenodeids or []), list(nodes_falsenodeids or [])
    true_leaf, false_leaf = list(nodes_trueleafs or []), list(nodes_falseleafs or [])
    features = list(nodes_featureids or [])
    modes = [int(m) for m in np.asarray(nodes_modes).reshape(-1)] if nodes_modes is not None else []
    splits = np.asarray(nodes_splits, dtype=np.float64).reshape(-1) if nodes_splits is not None else np.zeros(0)
    n = len(true_ids)
    if not n or any(len(a) != n for a in (false_ids, true_leaf, false_leaf, features, modes)):
        raise ctx.error("the nodes_* attributes must all have one (non-zero) length")
    tracks = list(nodes_missing_value_tracks_true or [0] * n)
    weights = np.asarray(leaf_weights, dtype=np.float64).reshape(-1)
    targets = list(leaf_targetids or [])
    if len(targets) != len(weights):
        raise ctx.error(f"{len(targets)} leaf_targetids but {len(weights)} leaf_weights")
    if any(not 0 <= t < n_targets for t in targets):
        raise ctx.error(f"leaf_targetids must lie in [0, {n_targets})")
    if any(not 0 <= f < x.shape[1] for f in features):
        raise ctx.error(f"nodes_featureids must lie in [0, {x.shape[1]})")

    with ctx.raising():  # set-membership nodes: their member lists as rows of a NaN-padded table
        table, rows = membership_table(modes, membership_values)
    member_table = torch.from_numpy(table)
    member_row = rows.tolist()
    if any(not 0 <= m <= _MEMBER for m in modes):
        raise ctx.error(f"unknown node modes {sorted(set(modes) - set(range(7)))}")
    if len(splits) < n and any(m != _MEMBER for m in modes):
        raise ctx.error(f"{len(splits)} nodes_splits for {n} nodes")
    steps = _depth(ctx, tree_roots, true_ids, true_leaf, false_ids, false_leaf)

    dev = x.device

    def col(values, dtype=torch.int64):
        return torch.tensor(values, dtype=dtype, device=dev)

    t_ids, f_ids, t_leaf, f_leaf = col(true_ids), col(false_ids), col(true_leaf, torch.bool), col(false_leaf, torch.bool)
    feat, mode, track, mrow = col(features), col(modes), col(tracks, torch.bool), col(member_row)
    split = torch.from_numpy(np.resize(splits, n)).to(dev)
    member_table = member_table.to(dev)

    xs = x.to(torch.float64)
    batch, trees = x.shape[0], len(tree_roots)
    idx = col(list(tree_roots)).expand(batch, trees).clone()   # [N, trees]: current node or leaf
    leaf = torch.zeros((batch, trees), dtype=torch.bool, device=dev)
    for _ in range(steps):
        node = torch.where(leaf, 0, idx)
        v = torch.gather(xs, 1, feat[node])                    # the feature each sample tests
        s = split[node]
        m = mode[node]
        is_member = (member_table[mrow[node]] == v.unsqueeze(-1)).any(-1)
        go_true = torch.where(m == _LEQ, v <= s, torch.where(m == _LT, v < s, torch.where(
            m == _GTE, v >= s, torch.where(m == _GT, v > s, torch.where(
                m == _EQ, v == s, torch.where(m == _NEQ, v != s, is_member))))))
        go_true = go_true | (track[node] & torch.isnan(v))
        idx = torch.where(leaf, idx, torch.where(go_true, t_ids[node], f_ids[node]))
        leaf = leaf | torch.where(go_true, t_leaf[node], f_leaf[node])
    if not bool(leaf.all()):
        raise ctx.error("a tree path ends on an interior node")

    w = torch.from_numpy(weights).to(dev)[idx]                 # [N, trees]
    tid = col(targets)[idx]
    if aggregate_function in (_SUM, _AVERAGE):
        y = torch.zeros((batch, n_targets), dtype=torch.float64, device=dev).scatter_add(1, tid, w)
        if aggregate_function == _AVERAGE:
            y = y / trees
    else:
        # a target that no reached leaf feeds scores 0 (as onnxruntime does)
        y = torch.zeros((batch, n_targets), dtype=torch.float64, device=dev)
        y = y.scatter_reduce(1, tid, w, "amin" if aggregate_function == _MIN else "amax", include_self=False)
    return _post_transform(ctx, y, post_transform).to(x.dtype)
