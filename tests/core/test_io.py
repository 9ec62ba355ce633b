"""Loading untrusted model files: clear errors, external data only from the model's folder."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import onnxport
from onnxport.errors import ModelError, OnnxportError, UnsafeModelError

from ..conftest import make_model, tensor_info


def test_load_path_bytes_proto_agree(tmp_path, relu_model):
    path = tmp_path / "m.onnx"
    onnx.save(relu_model, path)
    for source in (path, str(path), path.read_bytes(), relu_model):
        m = onnxport.load(source)
        assert [n.op_type for n in m.graph] == ["Relu"]
        assert m.opset_imports[""] == 21


def test_save_roundtrip(tmp_path, mlp_model):
    m = onnxport.load(mlp_model)
    onnxport.save(m, tmp_path / "out.onnx")
    again = onnx.load(tmp_path / "out.onnx")
    assert {i.name for i in again.graph.initializer} == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


@pytest.mark.parametrize("cut", [1, 10, 30])
def test_truncated_file(tmp_path, mlp_model, cut):
    data = mlp_model.SerializeToString()
    path = tmp_path / "bad.onnx"
    path.write_bytes(data[: len(data) - cut])
    with pytest.raises(ModelError, match="truncated or corrupted|holds no graph"):
        onnxport.load(path)


def test_garbage_and_empty_and_missing(tmp_path):
    (tmp_path / "junk.onnx").write_bytes(b"\xff\xfe not a model at all \x00\x01")
    with pytest.raises(ModelError):
        onnxport.load(tmp_path / "junk.onnx")
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(ModelError, match="empty"):
        onnxport.load(tmp_path / "empty.onnx")
    with pytest.raises(ModelError, match="cannot read"):
        onnxport.load(tmp_path / "nope.onnx")


def _external_model(location: str) -> onnx.ModelProto:
    w = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    w.data_location = onnx.TensorProto.EXTERNAL
    w.ClearField("raw_data")
    for k, v in {"location": location, "offset": "0", "length": "16"}.items():
        e = w.external_data.add()
        e.key, e.value = k, v
    node = onnx.helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return make_model([node], [tensor_info("x", [2, 2])], [tensor_info("y", [2, 2])], [w])


def test_external_data_inside_folder_loads(tmp_path):
    (tmp_path / "weights.bin").write_bytes(np.full((2, 2), 3.0, np.float32).tobytes())
    onnx.save(_external_model("weights.bin"), tmp_path / "m.onnx")
    m = onnxport.load(tmp_path / "m.onnx")
    np.testing.assert_array_equal(m.graph.initializers["w"].const_value.numpy(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_data_escaping_folder_is_refused(tmp_path, location):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    onnx.save(_external_model(location), folder / "m.onnx")
    with pytest.raises(UnsafeModelError):
        onnxport.load(folder / "m.onnx")


def test_external_data_symlink_out_of_folder_is_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    os.symlink(tmp_path / "secret.bin", folder / "link.bin")
    onnx.save(_external_model("link.bin"), folder / "m.onnx")
    with pytest.raises(UnsafeModelError, match="outside"):
        onnxport.load(folder / "m.onnx")


def test_external_data_missing_or_short(tmp_path):
    onnx.save(_external_model("absent.bin"), tmp_path / "m.onnx")
    with pytest.raises(ModelError, match="does not exist"):
        onnxport.load(tmp_path / "m.onnx")
    (tmp_path / "short.bin").write_bytes(b"\0" * 4)
    onnx.save(_external_model("short.bin"), tmp_path / "m2.onnx")
    with pytest.raises(ModelError, match="exceeds"):
        onnxport.load(tmp_path / "m2.onnx")


def test_external_data_from_bytes_is_refused():
    with pytest.raises(UnsafeModelError, match="bytes"):
        onnxport.load(_external_model("weights.bin").SerializeToString())


def test_errors_share_one_base_class():
    for cls in (ModelError, UnsafeModelError, onnxport.UnsupportedOpError, onnxport.InputError,
                onnxport.PluginError, onnxport.RegistryError, onnxport.ConversionError):
        assert issubclass(cls, OnnxportError)
