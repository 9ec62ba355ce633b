"""A model file's large weights are read in place into TensorFlow: bit-equal to the bytes' import, and copied."""

from __future__ import annotations

import pytest

from tests._in_place import check_file_import

pytest.importorskip("onnxport_tensorflow")


def test_file_import_reads_weights_in_place(tmp_path):
    check_file_import(tmp_path, "tensorflow")


def test_large_weights_fill_their_variables_block_by_block(tmp_path, monkeypatch):
    """Weights past the block-fill size are read from the file into their variable in row blocks
    (here lowered so the 300 x 64 weight takes 4 blocks): bit-equal, and still copied."""
    import numpy as np
    import onnx

    import onnxport
    from onnxport.ir import filedata
    from onnxport_tensorflow import importer
    from tests._in_place import in_place_model

    calls = []
    real = filedata.read_row_blocks

    def small_blocks(tensor, block_bytes=16 << 20):
        calls.append(tensor.name)
        return real(tensor, block_bytes=20_000)

    monkeypatch.setattr(importer, "_BLOCK_FILL_BYTES", 1)
    monkeypatch.setattr(importer, "read_row_blocks", small_blocks)
    check_file_import(tmp_path, "tensorflow")
    assert "fc.weight" in calls
    model = in_place_model()
    path = tmp_path / "again.onnx"
    onnx.save(model, path)
    tm = onnxport.import_model(path, "tensorflow")
    want = onnx.numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "fc.weight"))
    np.testing.assert_array_equal(tm.weights["fc.weight"].numpy(), want)


def test_row_blocks_reassemble_the_tensor(tmp_path):
    import numpy as np
    import onnx
    import onnx_ir as ir

    from onnxport.ir import filedata
    from tests._in_place import in_place_model

    path = tmp_path / "m.onnx"
    onnx.save(in_place_model(), path, save_as_external_data=True, location="m.data", size_threshold=1024)
    tensor = ir.load(path).graph.initializers["fc.weight"].const_value
    blocks = [(first, rows.copy()) for first, rows in filedata.read_row_blocks(tensor, block_bytes=7 * 64 * 4)]
    assert [first for first, _ in blocks] == list(range(0, 300, 7))
    np.testing.assert_array_equal(np.concatenate([rows for _, rows in blocks]), tensor.numpy())
