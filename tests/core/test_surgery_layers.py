"""insert_layer (identity-initialised) and remove_layer (neighbours realigned) on torch.onnx exports."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_ir as ir
import pytest

from onnxport.edit.surgery import SizeAlignmentError, insert_layer, remove_layer, size_groups

from .test_surgery_prune import SHAPES, nets, run


def _x(name: str) -> np.ndarray:
    return np.random.default_rng(5).standard_normal(SHAPES[name]).astype(np.float32)


def _names(model) -> set[str]:
    proto = model if isinstance(model, onnx.ModelProto) else ir.serde.serialize_model(model)
    return {n.name for n in proto.graph.node} | {v for n in proto.graph.node for v in n.output}


@pytest.mark.parametrize(("name", "after", "layer"), [
    ("resnet", "/blocks/blocks.0/Relu_1_output_0", "conv"),
    ("resnet", "/blocks/blocks.3/Relu_output_0", "batchnorm"),
    ("mobilenet", "/blocks/blocks.1/body/body.2/Clip_output_0", "conv"),
    ("transformer", "/Relu_output_0", "linear"),
    ("transformer", "y", "linear"),
])
def test_insert_layer_keeps_outputs_and_names(name: str, after: str, layer: str) -> None:
    proto = onnx.load_from_string(nets.onnx_bytes(name, False))
    if after not in _names(proto):
        pytest.fail(f"{after!r} is not in the export: {sorted(_names(proto))[:20]}")
    x = _x(name)
    out = insert_layer(proto, after=after, layer=layer, kernel_size=3 if layer == "conv" else 1)
    onnx.checker.check_model(ir.serde.serialize_model(out), full_check=True)
    np.testing.assert_allclose(run(out, x), run(proto, x), rtol=1e-4, atol=1e-5)
    assert len(list(out.graph)) > len(proto.graph.node)
    assert _names(proto) <= _names(out) | {after}
    assert [o.name for o in out.graph.outputs] == ["y"]
    assert any(n.name == f"{after}_{layer}" for n in out.graph)


def test_insert_layer_refuses_what_it_cannot_place() -> None:
    proto = nets.onnx_bytes("resnet", False)
    with pytest.raises(SizeAlignmentError, match="a conv layer needs"):
        insert_layer(proto, after="y", layer="conv")  # [batch, classes] has no spatial axis
    with pytest.raises(SizeAlignmentError, match="layer must be one of"):
        insert_layer(proto, after="x", layer="lstm")


def test_remove_layer_with_equal_widths() -> None:
    model = nets.onnx_bytes("resnet", False)
    out = remove_layer(model, "/blocks/blocks.1/conv2/Conv", align="none")
    assert "/blocks/blocks.1/conv2/Conv" not in {n.name for n in out.graph}
    assert run(out, _x("resnet")).shape == (2, 5)
    with pytest.raises(SizeAlignmentError, match="changes axis 2"):
        remove_layer(model, "/blocks/blocks.2/conv1/Conv")


@pytest.mark.parametrize("align", ["shrink", "pad"])
def test_remove_widening_layer_realigns_neighbours(align: str) -> None:
    model = nets.onnx_bytes("mobilenet", False)
    layer = "/blocks/blocks.2/body/body.0/Conv"  # 12 -> 48 channels, inside a residual block
    with pytest.raises(SizeAlignmentError, match="maps 12 to 48 channels"):
        remove_layer(model, layer, align="none")
    out = remove_layer(model, layer, align=align)
    assert layer not in {n.name for n in out.graph}
    sizes = {g.name: g.size for g in size_groups(out)}
    expected = 12 if align == "shrink" else 48
    assert sizes["/blocks/blocks.1/body/body.6/Conv"] == expected
    assert run(out, _x("mobilenet")).shape == (2, 5)
