"""Declared import cases that follow from ONNX semantics alone, so every backend runs them.

An op without an official node case (and that no runtime implements at its newest version)
gets its hand-computed cases here, keyed by ``(domain, op_type, since)``, not next to one
backend's primitive: each installed backend's primitive for that op version is tested with them,
together with the cases its own decorator declares (:func:`cases_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from onnxport.plugin.registry import ImportCase

_ML = "ai.onnx.ml"
_ROI_X = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
_AVERAGE, _SUM, _MIN, _MAX = range(4)  # TreeEnsemble's aggregate_function


def _tree_reference(post: int):
    """onnx.reference's TreeEnsemble scores (it applies no post_transform), then the ONNX
    post_transform numbered as the spec numbers it (onnxruntime swaps SOFTMAX and LOGISTIC)."""

    def reference(x, **attributes):
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator

        node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=_ML, **attributes)
        graph = helper.make_graph([node], "tree", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(_ML, 5)])
        (y,) = ReferenceEvaluator(model).run(None, {"X": x})
        if post == 1:
            e = np.exp(y - y.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        return (1 / (1 + np.exp(-y))).astype(y.dtype) if post == 2 else y

    return reference


def _tree_case(post: int, aggregate: int, name: str) -> ImportCase:
    """Two small trees over 2 features and 3 targets, for the post transforms and aggregates."""
    from onnx import TensorProto, helper

    x = np.array([[0.1, 0.3], [0.9, -1.0], [0.7, 0.2], [np.nan, 0.1], [2.0, -0.2]], np.float32)
    return ImportCase((x,), reference=_tree_reference(post) if post in (1, 2) else None, attributes={
        "n_targets": 3, "aggregate_function": aggregate, "post_transform": post, "tree_roots": [0, 2],
        "nodes_modes": helper.make_tensor("m", TensorProto.UINT8, (3,), [0, 3, 2]),
        "nodes_featureids": [0, 1, 1],
        "nodes_splits": helper.make_tensor("s", TensorProto.FLOAT, (3,), [0.5, -0.25, 0.0]),
        "nodes_truenodeids": [0, 1, 2], "nodes_trueleafs": [1, 1, 1],
        "nodes_falsenodeids": [1, 2, 3], "nodes_falseleafs": [0, 1, 1],
        "nodes_missing_value_tracks_true": [1, 0, 0],
        "leaf_targetids": [0, 1, 2, 0],
        "leaf_weights": helper.make_tensor("w", TensorProto.FLOAT, (4,), [0.75, -1.5, 2.0, 0.25]),
    }, name=name)


def _max_roi_pool_loops(x, rois, pooled_shape, spatial_scale=1.0):
    """A per-bin loop reference (the Caffe/onnxruntime algorithm) for MaxRoiPool's declared cases."""
    ph_n, pw_n = pooled_shape
    out = np.zeros((len(rois), x.shape[1], ph_n, pw_n), x.dtype)
    h, w = x.shape[2:]
    for r, (b, *box) in enumerate(rois):
        sx, sy, ex, ey = (int(np.sign(v) * np.floor(abs(v) * spatial_scale + 0.5)) for v in box)
        bh, bw = max(ey - sy + 1, 1) / ph_n, max(ex - sx + 1, 1) / pw_n
        for i in range(ph_n):
            hs, he = (min(max(int(f(v)) + sy, 0), h) for f, v in ((np.floor, i * bh), (np.ceil, (i + 1) * bh)))
            for j in range(pw_n):
                ws, we = (min(max(int(f(v)) + sx, 0), w) for f, v in ((np.floor, j * bw), (np.ceil, (j + 1) * bw)))
                if he > hs and we > ws:
                    out[r, :, i, j] = x[int(b), :, hs:he, ws:we].max(axis=(1, 2))
    return (out,)


_POOL_X = np.arange(2 * 3 * 6 * 8, dtype=np.float32).reshape(2, 3, 6, 8) % 17 - 8
_POOL_ROIS = np.array([[0, 0, 0, 7, 5], [1, 1.5, 0.5, 5.5, 4.5], [0, 2, 1, 3, 2], [1, -2, -1, 9, 7],
                       [0, 9, 7, 12, 9]], np.float32)


def _label_encoder_cases() -> tuple[ImportCase, ...]:
    from onnx import TensorProto, helper

    return (
        ImportCase((np.array([[1, 7, 3], [2, 2, 9]], np.int64),),
                   {"keys_int64s": [3, 1, 2], "values_floats": [2.5, 0.5, -4.0], "default_float": 9.0},
                   name="int64_to_float"),
        ImportCase((np.array([0.5, np.nan, 2.0, -1.0], np.float32),),
                   {"keys_floats": [0.5, float("nan"), 2.0], "values_int64s": [10, 20, 30]},
                   name="float_to_int64_nan_key"),
        ImportCase((np.array([3, 4, 5, 3], np.int32),),
                   {"keys_tensor": helper.make_tensor("k", TensorProto.INT32, (2,), [3, 5]),
                    "values_tensor": helper.make_tensor("v", TensorProto.INT16, (2,), [-7, 8]),
                    "default_tensor": helper.make_tensor("d", TensorProto.INT16, (1,), [42])},
                   name="tensor_int32_to_int16"),
    )


# no official node case uses SequenceErase or ConcatFromSequence: declared cases, onnxruntime decides
_SEQ = [np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * k for k in range(3)]

#: (domain, op_type, since) -> cases every backend's primitive for it runs
SEMANTIC_CASES: Mapping[tuple[str, str, int], tuple[ImportCase, ...]] = {
    # no official node case and no runtime implements GlobalLpPool-22: small hand-computed cases
    ("", "GlobalLpPool", 22): (
        ImportCase((np.array([[[[3.0, 4.0]], [[-6.0, 8.0]]]], np.float32),), {"p": 2},
                   expected=(np.array([[[[5.0]], [[10.0]]]], np.float32),), name="p2"),
        ImportCase((np.array([[[1.0, -1.0, 2.0]]], np.float32),), {"p": 1},
                   expected=(np.array([[[4.0]]], np.float32),), name="p1_1d"),
    ),
    ("", "SequenceErase", 11): (
        ImportCase((_SEQ,), name="last"),
        ImportCase((_SEQ, np.array(0, np.int64)), name="first"),
        ImportCase((_SEQ, np.array(-2, np.int32)), name="negative"),
    ),
    # no official node case and no runtime implements MaxRoiPool-22: hand-computed cases and a
    # per-bin loop reference (the Caffe/onnxruntime algorithm), with ROIs past the border
    ("", "MaxRoiPool", 22): (
        ImportCase((_ROI_X, np.array([[0, 0, 0, 3, 3]], np.float32)), {"pooled_shape": [2, 2]},
                   expected=(np.array([[[[5.0, 7.0], [13.0, 15.0]]]], np.float32),), name="quadrants"),
        ImportCase((_ROI_X, np.array([[0, 2, 2, 6, 6]], np.float32)), {"pooled_shape": [1, 1], "spatial_scale": 0.5},
                   expected=(np.array([[[[15.0]]]], np.float32),), name="scaled"),
        ImportCase((_POOL_X, _POOL_ROIS), {"pooled_shape": [2, 3]}, reference=_max_roi_pool_loops, name="loops"),
        ImportCase((_POOL_X, _POOL_ROIS), {"pooled_shape": [3, 2], "spatial_scale": 0.5},
                   reference=_max_roi_pool_loops, name="loops_scaled"),
    ),
    # LabelEncoder-4's node cases cover string maps only: numeric keys, a NaN key, tensor attributes
    (_ML, "LabelEncoder", 4): _label_encoder_cases(),
    # TreeEnsemble's two official node cases cover one aggregate and no post transform
    (_ML, "TreeEnsemble", 5): (
        _tree_case(0, _AVERAGE, "average"),
        _tree_case(1, _SUM, "softmax"),
        _tree_case(2, _SUM, "logistic"),
        _tree_case(3, _SUM, "softmax_zero"),
        _tree_case(0, _MAX, "max"),
        _tree_case(0, _MIN, "min"),
    ),
    ("", "ConcatFromSequence", 11): (
        ImportCase((_SEQ,), {"axis": 1}, name="concat"),
        ImportCase((_SEQ,), {"axis": -1, "new_axis": 1}, name="stack_last"),
        ImportCase((_SEQ[:1],), {"axis": 0, "new_axis": 1}, name="stack_one"),
    ),
}


def cases_of(prim: Any) -> tuple[ImportCase, ...]:
    """The declared cases of an import primitive: its own, then the ONNX-semantic ones."""
    return tuple(prim.cases) + SEMANTIC_CASES.get(prim.key, ())
