"""Framework-free parts of the ai.onnx.ml ops: LabelEncoder's key/value table and the depth of
a TreeEnsemble's trees, read from node attributes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

ML_DOMAIN = "ai.onnx.ml"


def plain(v: Any) -> Any:
    """A key or value as a hashable Python scalar (bytes decoded)."""
    return v.decode() if isinstance(v, bytes) else (v.item() if isinstance(v, np.generic) else v)


def label_table(attrs: Mapping[str, Any]) -> tuple[list[Any], list[Any], np.dtype, Any]:
    """LabelEncoder's ``(keys, values, value dtype, default)`` from its one ``keys_*`` and one
    ``values_*`` attribute (string values: numpy ``object``). Raises ValueError when the node
    does not have exactly one of each, or their lengths differ."""
    keys = [k for k in (attrs["keys_tensor"], attrs["keys_int64s"], attrs["keys_floats"], attrs["keys_strings"])
            if k is not None and len(k)]
    vals = [("tensor", attrs["values_tensor"]), ("int64", attrs["values_int64s"]),
            ("float", attrs["values_floats"]), ("string", attrs["values_strings"])]
    vals = [(kind, v) for kind, v in vals if v is not None and len(v)]
    if len(keys) != 1 or len(vals) != 1:
        raise ValueError("LabelEncoder needs exactly one keys_* and one values_* attribute")
    kind, values = vals[0]
    keys = [plain(k) for k in np.asarray(keys[0]).reshape(-1).tolist()]
    values = [plain(v) for v in np.asarray(values).reshape(-1).tolist()]
    if len(keys) != len(values):
        raise ValueError(f"LabelEncoder has {len(keys)} keys but {len(values)} values")
    if kind == "tensor":
        vdtype = np.asarray(attrs["values_tensor"]).dtype
        dflt = attrs["default_tensor"]
        if dflt is not None:
            default = plain(np.asarray(dflt).reshape(-1)[0])
        else:
            default = "_Unused" if vdtype.kind in "OSU" else (-0.0 if vdtype.kind == "f" else -1)
        if vdtype.kind in "SU":
            vdtype = np.dtype(object)
    elif kind == "int64":
        vdtype, default = np.dtype(np.int64), attrs["default_int64"]
    elif kind == "float":
        vdtype, default = np.dtype(np.float32), attrs["default_float"]
    else:
        vdtype, default = np.dtype(object), attrs["default_string"]
    return keys, values, vdtype, default


def tree_depth(roots: Sequence[int], true_ids: Sequence[int], true_leaf: Sequence[int],
               false_ids: Sequence[int], false_leaf: Sequence[int]) -> int:
    """The most interior nodes on any root-to-leaf path of a TreeEnsemble (its descent steps).

    Raises ValueError for a node index out of range or a cycle.
    """
    n = len(true_ids)
    memo: dict[int, int] = {}

    def visit(i: int, seen: frozenset) -> int:
        if not 0 <= i < n:
            raise ValueError(f"node index {i} out of range for {n} nodes")
        if i in seen:
            raise ValueError(f"the trees have a cycle through node {i}")
        if i not in memo:
            below = [0 if leaf else visit(int(child), seen | {i})
                     for child, leaf in ((true_ids[i], true_leaf[i]), (false_ids[i], false_leaf[i]))]
            memo[i] = 1 + max(below)
        return memo[i]

    return max((visit(int(r), frozenset()) for r in roots), default=0)


#: TreeEnsemble's set-membership node mode (BRANCH_MEMBER)
BRANCH_MEMBER = 6


def membership_table(modes: Sequence[int], membership_values: Any) -> tuple[np.ndarray, np.ndarray]:
    """TreeEnsemble's set-membership nodes: their NaN-delimited member lists as rows of a NaN-padded
    float64 table (at least 1 x 1), and, per node, its row (0 for other nodes).

    Raises ``ValueError`` (``with ctx.raising():`` names the node) when member nodes have no
    ``membership_values`` or the number of sets differs from the number of member nodes.
    """
    members: list[list[float]] = []
    n_member = sum(1 for m in modes if m == BRANCH_MEMBER)
    if n_member:
        if membership_values is None:
            raise ValueError("BRANCH_MEMBER nodes need membership_values")
        current: list[float] = []
        for v in np.asarray(membership_values, dtype=np.float64).reshape(-1).tolist():
            if math.isnan(v):
                members.append(current)
                current = []
            else:
                current.append(v)
        if len(members) != n_member:
            raise ValueError(f"membership_values has {len(members)} sets for {n_member} member nodes")
    table = np.full((max(len(members), 1), max((len(m) for m in members), default=1) or 1), np.nan)
    member_row = np.zeros(len(modes), np.int64)
    for row, i in enumerate(i for i, m in enumerate(modes) if m == BRANCH_MEMBER):
        table[row, :len(members[row])] = members[row]
        member_row[i] = row
    return table, member_row

