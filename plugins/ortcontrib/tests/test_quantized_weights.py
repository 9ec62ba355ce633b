"""MatMulNBits and GatherBlockQuantized weights stored as initializers, as the model builder
writes them, import into each backend and match onnxruntime; the MatMulNBits weight stays packed
(uint8, the file's bytes) in the imported object: it is unpacked per call, not expanded to float
at import."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnxport_ortcontrib.opmath import pack_nbits

import onnxport
from onnxport_testkit.compare import compare_outputs
from onnxport_testkit.reference import run_onnxruntime

BACKENDS = ("torch", "jax", "tensorflow")
N, K, BLOCK = 64, 128, 32


def _model() -> tuple[onnx.ModelProto, np.ndarray]:
    """Embedding rows (GatherBlockQuantized) -> a 4-bit linear layer (MatMulNBits)."""
    g = np.random.default_rng(0)
    kb = K // BLOCK
    table = pack_nbits(g.integers(0, 16, (50, K)), 4)
    table_scales = (g.random((50, kb)) * 0.1 + 0.01).astype(np.float32)
    b = pack_nbits(g.integers(0, 16, (N, kb, BLOCK)), 4)
    scales = (g.random(N * kb) * 0.1 + 0.01).astype(np.float32)
    zp = pack_nbits(g.integers(0, 16, (N, kb)), 4).reshape(-1)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(table, "embed.qweight"), (table_scales, "embed.scales"), (b, "proj.qweight"),
              (scales, "proj.scales"), (zp, "proj.qzeros")]]
    nodes = [
        helper.make_node("GatherBlockQuantized", ["embed.qweight", "ids", "embed.scales"], ["h"],
                         domain="com.microsoft", block_size=BLOCK, quantize_axis=1),
        helper.make_node("MatMulNBits", ["h", "proj.qweight", "proj.scales", "proj.qzeros"], ["y"],
                         domain="com.microsoft", K=K, N=N, bits=4, block_size=BLOCK),
    ]
    graph = helper.make_graph(nodes, "quantized", [helper.make_tensor_value_info("ids", onnx.TensorProto.INT64,
                                                                                 ["batch", "seq"])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", "seq", N])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    return model, g.integers(0, 50, (2, 5)).astype(np.int64)


def _held_uint8(backend: str, imported) -> dict[str, tuple[int, ...]]:
    """The uint8 arrays the imported object holds, by name, with their shapes."""
    if backend == "torch":
        held = dict(imported.named_buffers()) | dict(imported.named_parameters())
    elif backend == "jax":
        held = {**imported.params, **imported.consts}
    else:
        held = {v.name.split(":")[0]: v for v in imported.variables}
    def name_of(dtype) -> str:  # numpy / tf dtypes have .name; torch.uint8 prints as "torch.uint8"
        return getattr(dtype, "name", None) or str(dtype).rsplit(".", 1)[-1]

    return {name: tuple(v.shape) for name, v in held.items() if name_of(v.dtype) == "uint8"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_quantized_weights_stay_packed(backend):
    model, ids = _model()
    expected = run_onnxruntime(model, [ids])
    imported = onnxport.import_model(model, backend=backend)
    actual = onnxport.get_backend(backend).run(imported, [ids])
    compare_outputs(expected[0], actual[0], rtol=1e-4, atol=1e-4)
    held = _held_uint8(backend, imported)
    # the linear layer's packed weight is the object's own uint8 state (a torch buffer, a JAX
    # constant, a tf.Variable); no float copy of it exists
    assert (N, K // BLOCK, BLOCK // 2) in held.values(), held
