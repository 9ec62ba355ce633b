"""A model file's large weights are read in place into JAX: bit-equal to the bytes' import, and copied."""

from __future__ import annotations

import pytest

from tests._in_place import check_file_import

pytest.importorskip("onnxport_jax")


def test_file_import_reads_weights_in_place(tmp_path):
    check_file_import(tmp_path, "jax")


def test_file_import_aligns_the_arrays_it_reads(tmp_path):
    import numpy as np
    import onnx
    import onnx_ir as ir

    from onnxport.ir import filedata
    from tests._in_place import in_place_model

    path = tmp_path / "m.onnx"
    onnx.save(in_place_model(), path, save_as_external_data=True, location="m.data", size_threshold=1024)
    tensor = ir.load(path).graph.initializers["fc.weight"].const_value
    assert filedata.readable(tensor)
    arr = filedata.read_array(tensor)
    assert arr.ctypes.data % filedata.ALIGNMENT == 0 and arr.flags.c_contiguous
    np.testing.assert_array_equal(arr, tensor.numpy())
