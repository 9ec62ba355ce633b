"""A model file's large weights are read in place into JAX: bit-equal to the bytes' import, and copied."""

from __future__ import annotations

import pytest

from tests._in_place import check_file_import

pytest.importorskip("onnxport_jax")


def test_file_import_reads_weights_in_place(tmp_path):
    check_file_import(tmp_path, "jax")
