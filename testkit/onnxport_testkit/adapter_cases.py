"""One case per opset adapter (import, up) and down-adapter (export, down), at its ``from_version``.

Each case is a one-node model built directly from the op's schema history (``onnx.defs``), not
through onnx's version converter (which fails on about half of these forms). Its reference:

- an up case whose node version is still current at opset >= 7 runs in onnxruntime at that
  opset (the node keeps its ``from_version`` schema there; onnxruntime guarantees opset >= 7);
- an up case whose version was superseded before opset 7 has a hand-written numpy reference
  (:attr:`AdapterCase.numpy`), stated per case;
- a down case (an op written in its newest form, for an opset below the adapter's ``below``)
  compares with onnxruntime on the same node at the op's newest opset.

An adapter that refuses a form by design (Tile-1) has a case that checks the refusal instead.
:func:`every_adapter` lists what the registry holds, so a test can fail on an adapter without a
case, and :class:`RecordingRegistry` records which adapters a conversion actually ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["ADAPTER_CASES", "DOWN_CASES", "AdapterCase", "RecordingRegistry", "case_opset", "case_reference",
           "check_import", "every_adapter", "node_model"]

_rng = np.random.default_rng(18)


def _normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


X3 = _normal(2, 3, 4)
X4 = _normal(2, 3, 4, 5)
POS3 = (np.abs(_normal(2, 3, 4)) + 0.1).astype(np.float32)
BN = {"s": _normal(3), "b": _normal(3), "m": _normal(3) * 0.1, "v": (np.abs(_normal(3)) * 0.05 + 0.01).astype(np.float32)}


@dataclasses.dataclass(frozen=True)
class AdapterCase:
    """A one-node model for the adapter of ``op`` from ``version`` (up) or below ``version`` (down)."""

    name: str
    op: str
    version: int
    node: onnx.NodeProto
    inputs: dict[str, np.ndarray]
    outputs: tuple[tuple[str, int], ...] = (("y", TensorProto.FLOAT),)
    initializers: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    #: hand-written reference (inputs and initializers by name -> outputs), for versions
    #: onnxruntime cannot run; None: onnxruntime on the old model is the reference
    numpy: Callable[[dict[str, np.ndarray]], list[np.ndarray]] | None = None
    #: the adapter refuses this form: regex of the error, and no numbers are compared
    refused: str | None = None
    down: bool = False
    #: onnxruntime refuses a deprecated op at the opset that deprecates it (Scatter-11,
    #: Upsample-10): the reference is the same node at this earlier opset, whose schema has the
    #: same inputs, attributes and meaning
    reference_opset: int | None = None
    #: why the numpy reference replaces onnxruntime at an opset onnxruntime runs
    ort_differs: str = ""

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.op, self.version, "down" if self.down else "up")


def case_opset(case: AdapterCase) -> int:
    """The model opset of an up case: the smallest opset >= 7 (onnxruntime's floor) at which the
    op's schema is still ``case.version``; ``case.version`` itself when it was superseded earlier."""
    if case.down:
        return case.version - 1
    for opset in range(max(7, case.version), onnx.defs.onnx_opset_version() + 1):
        try:
            since = onnx.defs.get_schema(case.op, opset).since_version
        except onnx.defs.SchemaError:
            break
        if since == case.version:
            return opset
        if since > case.version:
            break
    return case.version


def node_model(case: AdapterCase, opset: int | None = None) -> onnx.ModelProto:
    """The case's node alone in a model at ``opset`` (default: :func:`case_opset`)."""
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
           for n, a in case.inputs.items()]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in case.outputs]
    inits = [numpy_helper.from_array(a, n) for n, a in case.initializers.items()]
    graph = helper.make_graph([case.node], case.name, ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset or case_opset(case))])
    model.ir_version = 7
    return model


def _n(op: str, inputs: list[str], outputs: list[str] | None = None, **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs or ["y"], name=f"{op.lower()}_node", **attrs)


def _bn_numpy(eps: float) -> Callable[[dict[str, np.ndarray]], list[np.ndarray]]:
    def ref(d: dict[str, np.ndarray]) -> list[np.ndarray]:
        c = (1, -1, 1, 1)
        y = (d["x"] - d["m"].reshape(c)) / np.sqrt(d["v"].reshape(c) + eps) * d["s"].reshape(c) + d["b"].reshape(c)
        return [y.astype(np.float32)]
    return ref


def _gemm_numpy(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [(0.5 * d["a"] @ d["w"].T + 2.0 * d["c"]).astype(np.float32)]


GEMM = {"a": _normal(3, 4), "w": _normal(5, 4), "c": _normal(5)}
RED = ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
       "ReduceLogSumExp", "ReduceSumSquare")


def _scan8() -> onnx.NodeProto:
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Mul", ["s2", "x"], ["y"])], "body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [4]), helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("s2", TensorProto.FLOAT, [4]), helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return _n("Scan", ["", "s0", "xs"], ["sf", "ys"], body=body, num_scan_inputs=1, directions=[1])


ADAPTER_CASES: list[AdapterCase] = [
    AdapterCase("batchnorm_1", "BatchNormalization", 1,
                _n("BatchNormalization", ["x", "s", "b", "m", "v"], consumed_inputs=[0, 0, 0, 1, 1], is_test=1,
                   epsilon=1e-3, spatial=1), {"x": X4}, initializers=BN, numpy=_bn_numpy(1e-3)),
    AdapterCase("batchnorm_6", "BatchNormalization", 6,
                _n("BatchNormalization", ["x", "s", "b", "m", "v"], is_test=1, epsilon=1e-3, spatial=1),
                {"x": X4}, initializers=BN, numpy=_bn_numpy(1e-3)),
    AdapterCase("batchnorm_7", "BatchNormalization", 7,
                _n("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3, spatial=1), {"x": X4}, initializers=BN),
    AdapterCase("batchnorm_9", "BatchNormalization", 9,
                _n("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3), {"x": X4}, initializers=BN),
    AdapterCase("cast_1_string_to", "Cast", 1, _n("Cast", ["x"], to="INT32"), {"x": X3 * 3},
                outputs=(("y", TensorProto.INT32),), numpy=lambda d: [np.trunc(d["x"]).astype(np.int32)]),
    AdapterCase("clip_6", "Clip", 6, _n("Clip", ["x"], min=-0.5, max=0.25), {"x": X3}),
    AdapterCase("concat_1_default_axis", "Concat", 1, _n("Concat", ["x", "z"]), {"x": X3, "z": X3[:, :1] + 10},
                numpy=lambda d: [np.concatenate([d["x"], d["z"]], axis=1)]),
    AdapterCase("dft_17_axis", "DFT", 17, _n("DFT", ["x"], axis=2, onesided=0), {"x": _normal(2, 3, 8, 1)}),
    AdapterCase("dropout_1", "Dropout", 1, _n("Dropout", ["x"], is_test=1, ratio=0.3), {"x": X3},
                numpy=lambda d: [d["x"]]),
    AdapterCase("dropout_6", "Dropout", 6, _n("Dropout", ["x"], is_test=1, ratio=0.3), {"x": X3},
                numpy=lambda d: [d["x"]]),
    AdapterCase("dropout_7_mask", "Dropout", 7, _n("Dropout", ["x"], ["y", "mask"], ratio=0.3), {"x": X3},
                outputs=(("y", TensorProto.FLOAT), ("mask", TensorProto.FLOAT)),
                numpy=lambda d: [d["x"], np.ones_like(d["x"])],
                ort_differs="onnxruntime's Dropout-7 kernel returns an all-zero mask in inference; the mask marks "
                            "kept elements (Dropout-12 states it: all true in inference; onnx.reference agrees)"),
    AdapterCase("dropout_10_ratio", "Dropout", 10, _n("Dropout", ["x"], ratio=0.3), {"x": X3}),
    AdapterCase("gemm_1_broadcast", "Gemm", 1, _n("Gemm", ["a", "w", "c"], broadcast=1, alpha=0.5, beta=2.0, transB=1),
                {"a": GEMM["a"]}, initializers={"w": GEMM["w"], "c": GEMM["c"]}, numpy=_gemm_numpy),
    AdapterCase("gemm_6_broadcast", "Gemm", 6, _n("Gemm", ["a", "w", "c"], broadcast=1, alpha=0.5, beta=2.0, transB=1),
                {"a": GEMM["a"]}, initializers={"w": GEMM["w"], "c": GEMM["c"]}, numpy=_gemm_numpy),
    AdapterCase("hardmax_11_axis1", "Hardmax", 11, _n("Hardmax", ["x"], axis=1), {"x": X3}),
    AdapterCase("logsoftmax_11_axis1", "LogSoftmax", 11, _n("LogSoftmax", ["x"], axis=1), {"x": X3}),
    AdapterCase("softmax_11_axis1", "Softmax", 11, _n("Softmax", ["x"], axis=1), {"x": X3}),
    AdapterCase("softmax_11_head", "Softmax", 11, _n("Softmax", ["x"], axis=1), {"x": _normal(2, 1, 5, 1)}),
    AdapterCase("pad_1_paddings", "Pad", 1, _n("Pad", ["x"], paddings=[0, 1, 1, 0, 1, 0], value=1.5), {"x": X3},
                numpy=lambda d: [np.pad(d["x"], [(0, 0), (1, 1), (1, 0)], constant_values=1.5)]),
    AdapterCase("pad_2_reflect", "Pad", 2, _n("Pad", ["x"], pads=[0, 1, 2, 0, 1, 1], mode="reflect"), {"x": X3}),
    AdapterCase("pad_2_value", "Pad", 2, _n("Pad", ["x"], pads=[0, 1, 0, 0, 2, 1], value=1.5), {"x": X3}),
    *[AdapterCase(f"{op.lower()}_13_axes", op, 13, _n(op, ["x"], axes=[1], keepdims=0), {"x": POS3}) for op in RED],
    AdapterCase("reducesum_11_axes", "ReduceSum", 11, _n("ReduceSum", ["x"], axes=[-1]), {"x": X3}),
    AdapterCase("reshape_1_shape", "Reshape", 1, _n("Reshape", ["x"], shape=[4, -1]), {"x": X3},
                numpy=lambda d: [d["x"].reshape(4, -1)]),
    AdapterCase("resize_10_nearest", "Resize", 10, _n("Resize", ["x", "sc"], mode="nearest"), {"x": X4[:1, :2]},
                initializers={"sc": np.array([1, 1, 2, 1.5], np.float32)}),
    AdapterCase("resize_10_linear", "Resize", 10, _n("Resize", ["x", "sc"], mode="linear"), {"x": X4[:1, :2]},
                initializers={"sc": np.array([1, 1, 2, 2], np.float32)}),
    AdapterCase("scan_8_batched", "Scan", 8, _scan8(), {"s0": _normal(2, 4), "xs": _normal(2, 3, 4)},
                outputs=(("sf", TensorProto.FLOAT), ("ys", TensorProto.FLOAT))),
    AdapterCase("scatter_11", "Scatter", 11, _n("Scatter", ["x", "i", "u"], axis=1), {"x": X3[0]},
                initializers={"i": np.array([[2, 0], [1, 3], [0, 0]], np.int64), "u": _normal(3, 2)},
                reference_opset=10),
    AdapterCase("slice_1_attrs", "Slice", 1, _n("Slice", ["x"], starts=[0, 1], ends=[1, 3], axes=[0, 2]), {"x": X3}),
    AdapterCase("split_11_attr", "Split", 11, _n("Split", ["x"], ["y", "z"], axis=2, split=[1, 3]), {"x": X3},
                outputs=(("y", TensorProto.FLOAT), ("z", TensorProto.FLOAT))),
    AdapterCase("squeeze_11_axes", "Squeeze", 11, _n("Squeeze", ["x"], axes=[1]), {"x": X3[:, :1]}),
    AdapterCase("tile_1", "Tile", 1, _n("Tile", ["x", "t", "a"]), {"x": X3},
                initializers={"t": np.array(2, np.int64), "a": np.array(1, np.int64)},
                # int64 tiles of a float Tile-1 break its schema (tiles: T): refused by the core's type
                # check before the adapter's own refusal of the form
                refused=r"Tile-1|op_type:Tile.*tiles.*unsupported type"),
    AdapterCase("topk_1_k", "TopK", 1, _n("TopK", ["x"], ["v", "i"], k=2, axis=1), {"x": X3},
                outputs=(("v", TensorProto.FLOAT), ("i", TensorProto.INT64))),
    AdapterCase("unsqueeze_11_axes", "Unsqueeze", 11, _n("Unsqueeze", ["x"], axes=[0, -1]), {"x": X3}),
    AdapterCase("upsample_7_scales", "Upsample", 7, _n("Upsample", ["x"], scales=[1.0, 1.0, 2.0, 3.0], mode="nearest"),
                {"x": X4[:1, :2]}),
    AdapterCase("upsample_10_linear", "Upsample", 10, _n("Upsample", ["x", "sc"], mode="linear"), {"x": X4[:1, :2]},
                initializers={"sc": np.array([1, 1, 2, 2], np.float32)}, reference_opset=9),
]

_AXES = np.array([1], np.int64)
DOWN_CASES: list[AdapterCase] = [
    AdapterCase("gelu_exact_down", "Gelu", 20, _n("Gelu", ["x"]), {"x": X3 * 2}, down=True),
    AdapterCase("gelu_tanh_down", "Gelu", 20, _n("Gelu", ["x"], approximate="tanh"), {"x": X3 * 2}, down=True),
    AdapterCase("hardswish_down", "HardSwish", 14, _n("HardSwish", ["x"]), {"x": X3 * 4}, down=True),
    AdapterCase("layernorm_last_down", "LayerNormalization", 17, _n("LayerNormalization", ["x", "s", "b"], epsilon=1e-2),
                {"x": X3 * 0.1}, initializers={"s": _normal(4), "b": _normal(4)}, down=True),
    AdapterCase("layernorm_axis1_down", "LayerNormalization", 17,
                _n("LayerNormalization", ["x", "s", "b"], axis=1, epsilon=1e-2),
                {"x": X3 * 0.1}, initializers={"s": _normal(3, 4), "b": _normal(3, 4)}, down=True),
    *[AdapterCase(f"{op.lower()}_down", op, 18, _n(op, ["x", "axes"], keepdims=0), {"x": POS3},
                  initializers={"axes": _AXES}, down=True) for op in RED],
]


def case_reference(case: AdapterCase) -> list[np.ndarray]:
    """The reference outputs of an up case: onnxruntime on the old-opset model (at
    ``reference_opset`` for a deprecated op), or its numpy reference (below opset 7, or where
    ``ort_differs`` says why)."""
    from .reference import run_onnxruntime

    if case.numpy is not None:
        assert case_opset(case) < 7 or case.ort_differs, f"{case.name}: onnxruntime runs opset {case_opset(case)}"
        return case.numpy({**case.inputs, **case.initializers})
    assert case_opset(case) >= 7, f"{case.name}: opset {case_opset(case)} needs a numpy reference"
    return run_onnxruntime(node_model(case, opset=case.reference_opset), list(case.inputs.values()))


def check_import(case: AdapterCase, backend: str) -> None:
    """Import the case's old-opset model into ``backend`` and compare with :func:`case_reference`
    (or check the refusal of a refused form)."""
    import onnxport

    from .compare import compare_outputs

    model = node_model(case)
    if case.refused:
        import re

        try:
            onnxport.import_model(model, backend=backend)
        except onnxport.OnnxportError as exc:
            assert re.search(case.refused, str(exc)), f"{case.name}: refused with {exc}"
            assert case.node.name in str(exc), f"{case.name}: the error does not name the node: {exc}"
            return
        raise AssertionError(f"{case.name}: {case.op}-{case.version} was not refused")
    expected = case_reference(case)
    module = onnxport.import_model(model, backend=backend)
    actual = onnxport.get_backend(backend).run(module, list(case.inputs.values()))
    assert len(actual) == len(expected) == len(case.outputs), f"{case.name}: {len(actual)} outputs"
    for (name, _), e, a in zip(case.outputs, expected, actual):
        compare_outputs(e, np.asarray(a), name=f"{case.name}:{name}")


def every_adapter(registry: Any) -> set[tuple[str, int, str]]:
    """``(op, from_version, "up")`` of every default-domain adapter and ``(op, below, "down")`` of
    every down-adapter the registry holds."""
    ups = {(a.op_type, a.from_version, "up") for a in registry.adapters() if a.domain == ""}
    downs = {(d.op_type, d.below, "down") for d in registry.down_adapters()}
    return ups | downs


class RecordingRegistry:
    """A registry view that records each adapter and down-adapter it hands out and that then runs."""

    def __init__(self, registry: Any):
        self._registry = registry
        self.ran: list[tuple[str, int, str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)

    def _wrap(self, key: tuple[str, int, str], fn: Callable) -> Callable:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.ran.append(key)
            return fn(*args, **kwargs)
        return recorded

    def adapter(self, domain: str, op_type: str, from_version: int) -> Any:
        found = self._registry.adapter(domain, op_type, from_version)
        if found is None:
            return None
        return dataclasses.replace(found, fn=self._wrap((op_type, from_version, "up"), found.fn))

    def down_adapters(self, op_type: str | None = None) -> list[Any]:
        return [dataclasses.replace(d, fn=self._wrap((d.op_type, d.below, "down"), d.fn))
                for d in self._registry.down_adapters(op_type)]
