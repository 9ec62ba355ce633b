"""One registration mechanism: every kind of primitive goes through the registry, duplicates name
both sources and the plugin package, and what onnx.defs or the installed backends contradict is
refused when the registry is built."""

from __future__ import annotations

import types

import pytest

import onnxport
from onnxport.errors import RegistryError
from onnxport.plugin import discovery as plugins
from onnxport.plugin.backend import Backend
from onnxport.plugin.registry import Registry, module_exporter


def _noop(*args, **kwargs):
    return None


class _Module:
    pass


class _Other:
    pass


def test_module_export_primitives_are_registered_once():
    reg = Registry()
    reg.add_module_export("b", _Module, _noop)
    assert reg.find_module_export("b", _Module).fn is _noop
    assert reg.find_module_export("b", _Other) is None
    with pytest.raises(RegistryError, match=r"duplicate module export primitive for .*_Module.*plugin package tests"):
        reg.add_module_export("b", _Module, _noop)


def test_module_exporter_decorator_is_discovered(tmp_path, monkeypatch):
    pkg = tmp_path / "modops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "lrn.py").write_text(
        "from onnxport import module_exporter\n"
        "class Block:\n    pass\n"
        "@module_exporter(Block, when=lambda m, x: True)\n"
        "def block(g, m, x):\n    return x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    assert reg.discover("modops", backend="b") == 1
    (prim,) = reg.module_exports("b")
    assert prim.key == "modops.lrn.Block" and prim.when is not None
    assert module_exporter(_Module)(_noop) is _noop


def test_standard_domain_ops_and_versions_come_from_onnx_defs():
    reg = Registry()
    with pytest.raises(RegistryError, match=r"ai.onnx::Relux, which onnx.defs does not define.*plugin package tests"):
        reg.add_import("b", "Relux", _noop, since=14)
    with pytest.raises(RegistryError, match=r"ai.onnx.ml::Binarizerx"):
        reg.add_import("b", "Binarizerx", _noop, since=1, domain="ai.onnx.ml")
    with pytest.raises(RegistryError, match="versions"):
        reg.add_import("b", "Binarizer", _noop, since=2, domain="ai.onnx.ml")
    reg.add_import("b", "Anything", _noop, since=1, domain="com.example")  # custom domains: exempt
    assert reg.find_import("b", "com.example", "Anything", 1) is not None


def test_down_adapter_version_is_an_onnx_version():
    reg = Registry()
    with pytest.raises(RegistryError, match=r"Gelu below opset 19.*versions of Gelu are \[20\]"):
        reg.add_down_adapter("Gelu", 19, _noop)
    with pytest.raises(RegistryError, match="Gelux"):
        reg.add_down_adapter("Gelux", 20, _noop)


def test_duplicate_adapter_names_both_sources():
    reg = Registry()
    reg.add_adapter("Softmax", 11, _noop)
    with pytest.raises(RegistryError, match=r"duplicate adapter for Softmax from version 11: .*_noop and .*_noop"):
        reg.add_adapter("Softmax", 11, _noop)


class _Only(Backend):
    name = "only"

    def import_model(self, plan, **options):
        return None


def test_primitive_for_a_backend_not_installed_is_refused():
    mod = types.ModuleType("strayplugin")

    @onnxport.hookimpl
    def onnxport_register(registrar):
        registrar.add_backend(_Only())
        registrar.add_import("only", "Relu", _noop, since=14)
        registrar.add_import("tensorflowx", "Relu", _noop, since=14)

    mod.onnxport_register = onnxport_register
    pm = plugins.make_manager(extra_plugins=[mod], entry_points=False)
    with pytest.raises(RegistryError, match=r"not installed \(installed: only\):\n  'tensorflowx' \(plugin package tests\)"):
        plugins.build_registry(pm)


def test_installed_registry_is_consistent():
    reg = onnxport.plugin.registry()
    reg.check_backends()
    if "torch" in reg.backends:
        keys = [p.key for p in reg.module_exports("torch")]
        assert "torch.nn.modules.normalization.LocalResponseNorm" in keys


def test_layout_problems_name_the_files():
    from onnxport_testkit.meta import layout_problems

    reg = Registry()
    reg.add_import("a", "Relu", _noop, since=14)
    reg.add_import("b", "Relu", _noop, since=14)
    assert layout_problems(reg) == []
    other = types.FunctionType(_noop.__code__, {}, "other")
    other.__module__ = "pkg.ops.import_.activation"
    reg.add_import("c", "Relu", other, since=14)
    (problem,) = layout_problems(reg)
    assert "Relu lives in different files (a: test_registration.py, b: test_registration.py, c: activation.py)" in problem
