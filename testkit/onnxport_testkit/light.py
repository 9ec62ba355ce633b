"""The `light_*` zoo models that the onnx package ships, with the inputs onnx's own test feeds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def light_models() -> dict[str, Path]:
    """Model name (``resnet50``) -> path of ``light_resnet50.onnx``."""
    return {p.stem.removeprefix("light_"): p for p in sorted(LIGHT_DIR.glob("light_*.onnx"))}


def light_inputs(proto: onnx.ModelProto) -> list[np.ndarray]:
    """The deterministic inputs onnx's backend test uses: ``arange(n).reshape(shape) / n``."""
    inits = {i.name for i in proto.graph.initializer}
    out = []
    for x in proto.graph.input:
        if x.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        out.append((np.arange(n).reshape(shape) / n).astype(np.float32))
    return out


def light_reference(path: Path) -> np.ndarray:
    """The shipped reference output ``light_<name>_output_0.pb`` of a light model."""
    return numpy_helper.to_array(onnx.load_tensor(str(path).replace(".onnx", "_output_0.pb")))
