"""Optional packages (:mod:`onnxport.optional`): a missing one is a MissingDependencyError naming
the extra to install; a plain function of numpy inputs goes to the one installed backend."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import onnxport
from onnxport.errors import MissingDependencyError, OnnxportError
from onnxport.optional import loaded, require
from onnxport.tools import check


def test_require_names_the_extra() -> None:
    with pytest.raises(MissingDependencyError, match=r"Flax layers need.*pip install 'onnxport-jax\[flax\]'") as info:
        require("no_such_package_xyz.sub", extra="onnxport-jax[flax]", feature="Flax layers")
    assert isinstance(info.value, OnnxportError) and isinstance(info.value, ImportError)


def test_require_imports_what_is_there() -> None:
    assert require("json", extra="x", feature="y") is sys.modules["json"]


def test_a_broken_installed_package_is_not_renamed(tmp_path, monkeypatch) -> None:
    """The package is there and imports something absent: the original error, not 'install it'."""
    (tmp_path / "pkg_with_missing_dep_xyz").mkdir()
    (tmp_path / "pkg_with_missing_dep_xyz" / "__init__.py").write_text("import another_absent_module_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as info:
        require("pkg_with_missing_dep_xyz", extra="x", feature="y")
    assert not isinstance(info.value, MissingDependencyError)
    assert info.value.name == "another_absent_module_xyz"


def test_loaded_never_imports() -> None:
    assert loaded("no_such_package_xyz") is None
    assert loaded("json") is sys.modules["json"]


def test_check_without_onnxruntime_names_the_extra(monkeypatch, relu_model) -> None:
    import onnx_ir as ir

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime raises ModuleNotFoundError
    with pytest.raises(MissingDependencyError, match=r"pip install 'onnxport\[check\]'"):
        check.run_onnxruntime(ir.serde.deserialize_model(relu_model), [np.ones((2, 3), np.float32)])


def test_plain_function_of_numpy_inputs_goes_to_the_one_backend() -> None:
    def double(x):
        return x * 2

    x = np.ones((2, 3), np.float32)
    installed = onnxport.backends()
    if len(installed) > 1:
        with pytest.raises(onnxport.BackendNotFoundError, match=r"several backends are installed.*pass backend="):
            onnxport.backend_for(double, (x,))
    else:
        assert onnxport.backend_for(double, (x,)) == installed[0]
    with pytest.raises(onnxport.BackendNotFoundError, match="no installed backend exports objects of type"):
        onnxport.backend_for(object(), (x,))  # not a function: nothing to trace
