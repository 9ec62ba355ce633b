"""ai.onnx.ml: LabelEncoder, ArrayFeatureExtractor and Binarizer (string tensors included), and
TreeEnsemble (opset 5)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from onnxport import importer
from onnxport.opmath.mlops import label_table, membership_table

from ._static import rank, tensor

_ML = "ai.onnx.ml"


def _label_table(ctx, attrs):
    with ctx.raising():
        return label_table(attrs)


@importer("LabelEncoder", since=4, domain=_ML)
def label_encoder(ctx, x, **attrs):
    """Map each element through keys -> values (the last repeated key wins; NaN keys match NaN):
    one vectorized comparison against the key list."""
    keys, values, vdtype, default = _label_table(ctx, attrs)
    x = tensor(x)
    last: dict = {}
    nan_value = None
    for k, v in zip(keys, values):
        if isinstance(k, float) and k != k:
            nan_value = v
        else:
            last[k] = v
    to_text = vdtype.kind == "O"
    vdt = tf.string if to_text else tf.as_dtype(vdtype)

    def const(vals):
        return tf.constant([str(v) for v in vals] if to_text else np.asarray(vals, vdtype), vdt)

    fill = const([default])[0]
    if last:
        ks = list(last)
        if x.dtype == tf.string:
            kt = tf.constant([str(k) for k in ks], tf.string)
        else:
            kt = tf.constant(np.asarray(ks, x.dtype.as_numpy_dtype), x.dtype)
        hit = tf.equal(x[..., None], kt)
        pos = tf.argmax(tf.cast(hit, tf.int32), axis=-1)
        y = tf.where(tf.reduce_any(hit, axis=-1), tf.gather(const([last[k] for k in ks]), pos), fill)
    else:
        y = tf.fill(tf.shape(x), fill)
    if nan_value is not None and x.dtype.is_floating:
        y = tf.where(tf.math.is_nan(x), const([nan_value])[0], y)
    return y


@importer("ArrayFeatureExtractor", since=1, domain=_ML)
def array_feature_extractor(ctx, x, indices):
    """Select ``indices`` (flattened) along the last axis; a 1-D input gives one row ``[1, k]``."""
    x = tensor(x)
    y = tf.gather(x, tf.reshape(indices, [-1]), axis=-1)
    return tf.reshape(y, [1, -1]) if rank(x) == 1 else y


@importer("Binarizer", since=1, domain=_ML)
def binarizer(ctx, x, *, threshold):
    """1 where ``x > threshold``, else 0, in the input's type."""
    x = tensor(x)
    return tf.where(x > tf.constant(threshold, x.dtype), tf.ones((), x.dtype), tf.zeros((), x.dtype))


# -- TreeEnsemble -------------------------------------------------------------------------------
_LEQ, _LT, _GTE, _GT, _EQ, _NEQ, _MEMBER = range(7)
_AVERAGE, _SUM, _MIN, _MAX = range(4)
_POST = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def _depth(ctx, roots, true_ids, true_leaf, false_ids, false_leaf) -> int:
    """The most interior nodes on any root-to-leaf path (the number of descent steps)."""
    n = len(true_ids)
    memo: dict[int, int] = {}

    def visit(i: int, seen: frozenset) -> int:
        if not 0 <= i < n:
            raise ctx.error(f"node index {i} out of range for {n} nodes")
        if i in seen:
            raise ctx.error(f"the trees have a cycle through node {i}")
        if i not in memo:
            below = [0 if leaf else visit(child, seen | {i})
                     for child, leaf in ((true_ids[i], true_leaf[i]), (false_ids[i], false_leaf[i]))]
            memo[i] = 1 + max(below)
        return memo[i]

    return max((visit(int(r), frozenset()) for r in roots), default=0)


def _post_transform(ctx, y, kind: int):
    if kind == 0:
        return y
    if kind == 1:
        return tf.nn.softmax(y, axis=-1)
    if kind == 2:
        return tf.math.sigmoid(y)
    if kind == 3:  # softmax over the non-zero scores; zero scores stay zero
        nz = tf.not_equal(y, 0)
        top = tf.reduce_max(tf.where(nz, y, tf.constant(-np.inf, y.dtype)), axis=-1, keepdims=True)
        e = tf.where(nz, tf.exp(y - top), tf.zeros_like(y))
        total = tf.reduce_sum(e, axis=-1, keepdims=True)
        return tf.where(total > 0, e / tf.where(total > 0, total, tf.ones_like(total)), e)
    if kind == 4:
        return tf.math.ndtri(y)  # sqrt(2) * erfinv(2y - 1)
    raise ctx.error(f"unknown post_transform {kind} (expected 0..4: {', '.join(_POST)})")


@importer("TreeEnsemble", since=5, domain=_ML)  # declared cases: the testkit's semantic_cases
def tree_ensemble(ctx, x, *, aggregate_function, post_transform, tree_roots, nodes_hitrates,
                  nodes_missing_value_tracks_true, nodes_modes, leaf_weights, leaf_targetids, nodes_falsenodeids,
                  n_targets, nodes_trueleafs, nodes_featureids, nodes_splits, nodes_falseleafs, nodes_truenodeids,
                  membership_values):
    """Scores [N, n_targets]: every sample descends every tree (all trees and samples in step, a
    fixed number of steps: the deepest path), the reached leaves' weights are aggregated per
    target, then post-transformed."""
    x = tensor(x)
    if rank(x) != 2:
        raise ctx.error(f"X must be [N, F], got shape {x.shape}")
    if not tree_roots or n_targets is None:
        raise ctx.error("tree_roots and n_targets are required")
    if aggregate_function not in (_AVERAGE, _SUM, _MIN, _MAX):
        raise ctx.error(f"unknown aggregate_function {aggregate_function} (expected 0..3)")
    true_ids, false_ids = [int(i) for i in nodes_truenodeids or []], [int(i) for i in nodes_falsenodeids or []]
    true_leaf, false_leaf = [bool(v) for v in nodes_trueleafs or []], [bool(v) for v in nodes_falseleafs or []]
    features = [int(f) for f in nodes_featureids or []]
    modes = [int(m) for m in np.asarray(nodes_modes).reshape(-1)] if nodes_modes is not None else []
    splits = np.asarray(nodes_splits, dtype=np.float64).reshape(-1) if nodes_splits is not None else np.zeros(0)
    n = len(true_ids)
    if not n or any(len(a) != n for a in (false_ids, true_leaf, false_leaf, features, modes)):
        raise ctx.error("the nodes_* attributes must all have one (non-zero) length")
    if any(not 0 <= m <= _MEMBER for m in modes):
        raise ctx.error(f"unknown node modes {sorted(set(modes) - set(range(7)))}")
    if len(splits) < n and any(m != _MEMBER for m in modes):
        raise ctx.error(f"{len(splits)} nodes_splits for {n} nodes")
    tracks = [bool(v) for v in (nodes_missing_value_tracks_true or [0] * n)]
    weights = np.asarray(leaf_weights, dtype=np.float64).reshape(-1)
    targets = [int(t) for t in leaf_targetids or []]
    if len(targets) != len(weights):
        raise ctx.error(f"{len(targets)} leaf_targetids but {len(weights)} leaf_weights")
    if any(not 0 <= t < n_targets for t in targets):
        raise ctx.error(f"leaf_targetids must lie in [0, {n_targets})")
    n_features = x.shape[1]
    if n_features is not None and any(not 0 <= f < n_features for f in features):
        raise ctx.error(f"nodes_featureids must lie in [0, {n_features})")
    for ids, leaf in ((true_ids, true_leaf), (false_ids, false_leaf)):
        if any(not 0 <= i < (len(weights) if is_leaf else n) for i, is_leaf in zip(ids, leaf)):
            raise ctx.error("a node's child index is out of range of the nodes or leaves")
    with ctx.raising():  # set-membership nodes: their member lists as rows of a NaN-padded table
        table, member_row = membership_table(modes, membership_values)
    steps = _depth(ctx, tree_roots, true_ids, true_leaf, false_ids, false_leaf)

    t_ids, f_ids = tf.constant(true_ids, tf.int64), tf.constant(false_ids, tf.int64)
    t_leaf, f_leaf = tf.constant(true_leaf), tf.constant(false_leaf)
    feat, mode, track = tf.constant(features, tf.int64), tf.constant(modes, tf.int64), tf.constant(tracks)
    split = tf.constant(np.resize(splits, n) if len(splits) else np.zeros(n), tf.float64)
    member_of = tf.constant(table[member_row], tf.float64)  # [nodes, width]: each node's member set
    xs = tf.cast(x, tf.float64)
    trees = len(tree_roots)
    idx = tf.tile(tf.constant([[int(r) for r in tree_roots]], tf.int64), [tf.shape(xs)[0], 1])  # [N, trees]
    leaf = tf.zeros_like(idx, tf.bool)
    for _ in range(steps):
        node = tf.where(leaf, tf.zeros_like(idx), idx)
        v = tf.gather(xs, tf.gather(feat, node), batch_dims=1)  # the feature each sample tests
        s, m = tf.gather(split, node), tf.gather(mode, node)
        is_member = tf.reduce_any(tf.equal(tf.gather(member_of, node), v[..., None]), axis=-1)
        go_true = tf.where(m == _LEQ, v <= s, tf.where(m == _LT, v < s, tf.where(
            m == _GTE, v >= s, tf.where(m == _GT, v > s, tf.where(
                m == _EQ, v == s, tf.where(m == _NEQ, v != s, is_member))))))
        go_true = go_true | (tf.gather(track, node) & tf.math.is_nan(v))
        idx = tf.where(leaf, idx, tf.where(go_true, tf.gather(t_ids, node), tf.gather(f_ids, node)))
        leaf = leaf | tf.where(go_true, tf.gather(t_leaf, node), tf.gather(f_leaf, node))
    w = tf.gather(tf.constant(weights, tf.float64), idx)  # [N, trees]
    hit = tf.one_hot(tf.gather(tf.constant(targets, tf.int64), idx), int(n_targets), on_value=True,
                     off_value=False, dtype=tf.bool)  # [N, trees, targets]
    if aggregate_function in (_SUM, _AVERAGE):
        y = tf.reduce_sum(tf.where(hit, w[..., None], tf.zeros((), tf.float64)), axis=1)
        if aggregate_function == _AVERAGE:
            y = y / trees
    else:  # a target that no reached leaf feeds scores 0 (as onnxruntime does)
        reduce, init = (tf.reduce_min, np.inf) if aggregate_function == _MIN else (tf.reduce_max, -np.inf)
        y = reduce(tf.where(hit, w[..., None], tf.constant(init, tf.float64)), axis=1)
        y = tf.where(tf.reduce_any(hit, axis=1), y, tf.zeros((), tf.float64))
    return tf.cast(_post_transform(ctx, y, int(post_transform)), x.dtype)
