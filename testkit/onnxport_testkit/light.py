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


#: (op type, input index) -> how a seeded random value of that role is drawn
_BN_ROLES = {1: "scale", 2: "shift", 3: "mean", 4: "var"}


def _role(op_type: str, index: int) -> str:
    if op_type in ("Conv", "ConvTranspose", "Gemm", "MatMul") and index == 1:
        return "weight"
    if op_type == "BatchNormalization":
        return _BN_ROLES.get(index, "shift")
    if op_type == "Mul":  # the light models' BatchNormalization written as Mul + Add
        return "scale"
    return "shift"


def _draw(rng: np.random.Generator, role: str, shape: tuple[int, ...], op_type: str) -> np.ndarray:
    """A value of realistic scale: He-scaled weights, BatchNormalization statistics near 0 and 1."""
    if role == "weight":
        fan_in = int(np.prod(shape[1:])) if op_type != "MatMul" else int(shape[0])
        if op_type == "Gemm":
            fan_in = int(min(shape))  # transB or not: the contracted dim of a classifier is the smaller
        # He-uniform: std sqrt(2 / fan_in); uniform draws are cheap for the 100M-value classifiers
        bound = np.float32(np.sqrt(6.0 / max(fan_in, 1)))
        w = rng.random(shape, dtype=np.float32)
        w *= 2 * bound
        w -= bound
        return w
    if role in ("scale", "var"):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.1)).astype(np.float32)


def randomized(proto: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """``proto`` with every float weight drawn at random (seeded) at a realistic scale.

    The shipped weights are all 0.02, so every output is one repeated value and a wrong op can
    still match. Each ``ConstantOfShape`` weight generator becomes an initializer holding random
    values of its shape, and every float initializer is redrawn: convolution and Gemm weights
    He-scaled (std ``sqrt(2 / fan_in)``), BatchNormalization scale and variance uniform in
    [0.5, 1.5], biases and means normal with std 0.1.
    """
    model = onnx.ModelProto()
    model.CopyFrom(proto)
    graph = model.graph
    rng = np.random.default_rng(seed)
    inits = {i.name: i for i in graph.initializer}
    consumers: dict[str, tuple[str, int]] = {}
    for n in graph.node:
        for k, name in enumerate(n.input):
            consumers.setdefault(name, (n.op_type, k))
    keep = []
    for n in graph.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits:
            shape = tuple(int(d) for d in numpy_helper.to_array(inits[n.input[0]]).reshape(-1))
            op, k = consumers.get(n.output[0], ("", 0))
            arr = _draw(rng, _role(op, k), shape, op)
            graph.initializer.append(numpy_helper.from_array(arr, n.output[0]))
            if model.ir_version < 4:  # initializers are graph inputs before IR 4
                graph.input.append(onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.FLOAT, shape))
            continue
        keep.append(n)
    del graph.node[:]
    graph.node.extend(keep)
    used = {name for n in graph.node for name in n.input}
    unused = [i for i in graph.initializer if i.name not in used]
    for init in unused:  # the weight generators' shapes
        graph.initializer.remove(init)
    dropped = {i.name for i in unused}
    kept_inputs = [v for v in graph.input if v.name not in dropped]
    del graph.input[:]
    graph.input.extend(kept_inputs)
    for i, init in enumerate(list(graph.initializer)):
        if init.data_type != onnx.TensorProto.FLOAT or init.name not in consumers:
            continue
        op, k = consumers[init.name]
        shape = tuple(init.dims)
        graph.initializer[i].CopyFrom(numpy_helper.from_array(_draw(rng, _role(op, k), shape, op), init.name))
    _calibrate_logits(model)
    return model


#: ops through which a scale of their input scales their output alike (x -> c * x, c > 0)
_HOMOGENEOUS = {"Reshape", "Flatten", "Dropout", "Relu", "AveragePool", "GlobalAveragePool", "MaxPool"}


def _calibrate_logits(model: onnx.ModelProto, target_std: float = 2.0) -> None:
    """Scale the classifier feeding a final Softmax so that its logits have std ``target_std``.

    Random weights can leave logits so large that the Softmax saturates to one-hot (every error
    before it vanishes) or so small that it is flat. The Gemm or Conv producing the logits
    (through ops that commute with a positive scale) gets its weight and bias scaled once,
    measured with onnxruntime on :func:`random_inputs`.
    """
    import onnxruntime as ort

    graph = model.graph
    producers = {o: n for n in graph.node for o in n.output}
    last = producers.get(graph.output[0].name)
    if last is None or last.op_type != "Softmax":
        return
    logits = last.input[0]
    node = producers.get(logits)
    while node is not None and node.op_type in _HOMOGENEOUS:
        node = producers.get(node.input[0])
    if node is None or node.op_type not in ("Gemm", "Conv"):
        return
    graph.output.append(onnx.helper.make_value_info(logits, onnx.TypeProto()))
    data = model.SerializeToString()
    del graph.output[-1]
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    sess = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    values = sess.run([logits], dict(zip(names, random_inputs(model))))[0]
    std = float(np.std(values))
    if not np.isfinite(std) or std == 0.0:
        return
    factor = np.float32(target_std / std)
    inits = {i.name: i for i in graph.initializer}
    for name in node.input[1:3]:
        if name in inits:
            inits[name].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(inits[name]) * factor, name))


def random_inputs(proto: onnx.ModelProto, seed: int = 1) -> list[np.ndarray]:
    """Seeded inputs in [0, 1) of the model's (non-initializer) input shapes."""
    rng = np.random.default_rng(seed)
    return [rng.random(x.shape, dtype=np.float32) for x in light_inputs(proto)]
