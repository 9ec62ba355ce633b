"""Registry, plugins and hooks: duplicates raise, failures are loud, versions resolve via onnx.defs."""

from __future__ import annotations

import importlib.metadata
import inspect
import sys
import types

import pytest

import onnxport
from onnxport.errors import PluginError, RegistryError
from onnxport.plugin import discovery as plugins
from onnxport.plugin import hookspecs, spec
from onnxport.plugin.registry import Registry, importer


def _noop(ctx, x):
    return x


def test_duplicate_import_raises():
    reg = Registry()
    reg.add_import("b", "Relu", _noop, since=14)
    with pytest.raises(RegistryError, match="duplicate"):
        reg.add_import("b", "Relu", _noop, since=14)


def test_since_must_be_an_onnx_version():
    with pytest.raises(RegistryError, match="versions"):
        Registry().add_import("b", "Relu", _noop, since=12)


def test_version_resolution_uses_onnx_defs():
    """A model at opset 28 using an op unchanged since 13 finds the 13 primitive."""
    reg = Registry()
    reg.add_import("b", "Concat", _noop, since=13)
    assert spec.get_spec("Concat", 28).since_version == 13
    assert reg.find_import("b", "", "Concat", spec.get_spec("Concat", 28).since_version).since == 13
    assert reg.find_import("b", "", "Concat", 11) is None
    reg.add_import("b", "Concat", _noop, since=11)
    assert reg.find_import("b", "", "Concat", 12).since == 11


def test_spec_reads_onnx_defs():
    s = spec.get_spec("Conv", 28)
    assert s.since_version == spec.latest_version("Conv")
    assert s.attributes["group"].default == 1 and s.attributes["auto_pad"].default == "NOTSET"
    assert [p.name for p in s.inputs] == ["X", "W", "B"] and s.inputs[2].option == "optional"
    assert "tensor(float)" in s.type_constraints["T"]
    assert spec.get_spec("Squeeze", 11).inputs[1:] == ()  # axes was an attribute then
    assert spec.versions("Softmax") == (1, 11, 13)


def test_discover_registers_marked_functions_and_reports_import_errors(tmp_path, monkeypatch):
    pkg = tmp_path / "fakeops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text(
        "from onnxport import importer\n"
        "@importer('Relu', since=14)\n@importer('Abs', since=13)\n"
        "def f(ctx, x):\n    return x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    assert reg.discover("fakeops", backend="fake") == 2
    assert {p.op_type for p in reg.imports("fake")} == {"Relu", "Abs"}
    (pkg / "broken.py").write_text("import not_a_real_module_xyz\n")
    sys.modules.pop("fakeops", None)
    with pytest.raises(PluginError, match="fakeops.broken"):
        Registry().discover("fakeops", backend="fake2")


class _FakeEntryPoint:
    def __init__(self, name, value, loader):
        self.name, self.value, self._loader = name, value, loader

    def load(self):
        return self._loader()


def _patch_entry_points(monkeypatch, eps):
    real = importlib.metadata.entry_points

    def fake(**kw):
        if kw.get("group") == "onnxport":
            return eps
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)


def test_plugin_import_failure_names_the_plugin(monkeypatch):
    def boom():
        raise ImportError("no module named frobnitz")

    _patch_entry_points(monkeypatch, [_FakeEntryPoint("frob", "frob.plugin", boom)])
    with pytest.raises(PluginError, match="'frob'.*frobnitz"):
        plugins.make_manager()


def test_env_var_blocks_a_plugin(monkeypatch):
    def boom():
        raise AssertionError("must not be loaded")

    _patch_entry_points(monkeypatch, [_FakeEntryPoint("frob", "frob.plugin", boom)])
    monkeypatch.setenv(plugins.BLOCK_ENV, "frob")
    pm = plugins.make_manager()
    assert not pm.has_plugin("frob")


def test_plugin_registration_error_names_plugin():
    mod = types.ModuleType("badplugin")

    @onnxport.hookimpl
    def onnxport_register(registrar):
        raise ValueError("bad table")

    mod.onnxport_register = onnxport_register
    pm = plugins.make_manager(extra_plugins=[mod], entry_points=False)
    with pytest.raises(PluginError, match="bad table"):
        plugins.build_registry(pm)


def test_misspelt_hook_name_is_refused():
    mod = types.ModuleType("typoplugin")

    @onnxport.hookimpl
    def onnxport_registr(registrar):  # one letter short: pluggy would call it never
        registrar.add_import("torch", "Relu", _noop, since=14)

    mod.onnxport_registr = onnxport_registr
    with pytest.raises(PluginError, match=r"'typoplugin'.*onnxport_registr.*the hooks are onnxport_backend_for, onnxport_register"):
        plugins.make_manager(extra_plugins=[mod], entry_points=False)
    good = types.ModuleType("goodplugin")
    good.onnxport_register = onnxport.hookimpl(lambda registrar: None)
    assert plugins.make_manager(extra_plugins=[good], entry_points=False).has_plugin("goodplugin")


def test_core_defaults_register_through_the_same_hook():
    reg = onnxport.plugin.registry()
    assert "onnxport.defaults" in reg.plugins
    assert reg.adapter("", "Squeeze", 11) is not None


def test_backend_for_is_firstresult_and_installed_backend_found():
    torch = pytest.importorskip("torch")
    assert onnxport.backend_for(torch.nn.Linear(2, 2)) == "torch"
    with pytest.raises(onnxport.BackendNotFoundError):
        onnxport.backend_for(object())
    assert hookspecs.onnxport_backend_for.onnxport_spec["firstresult"] is True


@pytest.mark.parametrize("name", [n for n in dir(hookspecs) if n.startswith("onnxport_")])
def test_every_hook_is_documented(name):
    fn = getattr(hookspecs, name)
    doc = inspect.getdoc(fn) or ""
    assert len(doc) > 40, f"hook {name} needs a docstring"
    for param in inspect.signature(fn).parameters:
        assert f":param {param}:" in doc, f"hook {name} does not document {param!r}"


def test_importer_marker_is_inert_until_discovered():
    @importer("Relu", since=14)
    def relu(ctx, x):
        return x

    assert relu(None, 3) == 3
    assert callable(relu.module_builder)


def test_lazy_discovery_imports_a_backends_primitives_on_first_use(tmp_path, monkeypatch):
    pkg = tmp_path / "lazyops"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "relu.py").write_text(
        "from onnxport import importer\n@importer('Relu', since=14)\ndef f(ctx, x):\n    return x\n"
    )
    (tmp_path / "lazybe.py").write_text(
        "from onnxport.plugin.backend import Backend\n"
        "class LazyBackend(Backend):\n    name = 'lazy'\n"
        "    def import_model(self, plan, **options):\n        return plan\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in [m for m in sys.modules if m.startswith(("lazyops", "lazybe"))]:
        sys.modules.pop(m)
    reg = Registry()
    reg.add_backend("lazy", "lazybe:LazyBackend")
    assert reg.discover("lazyops", backend="lazy", lazy=True) == 0
    reg.check_backends()
    assert "lazy" in reg.backends and list(reg.backends) == ["lazy"]
    assert "lazyops.relu" not in sys.modules and "lazybe" not in sys.modules
    assert not reg.is_loaded("lazy") and not reg.backends.is_built("lazy")
    assert reg.find_import("lazy", "", "Relu", 14).source == "lazyops.relu.f"
    assert reg.is_loaded("lazy") and "lazyops.relu" in sys.modules
    assert "lazybe" not in sys.modules  # primitives and the backend object load separately
    assert reg.backends["lazy"].name == "lazy" and reg.backends.is_built("lazy")


def test_lazy_discovery_stays_loud(tmp_path, monkeypatch):
    pkg = tmp_path / "lazybroken"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text("import not_a_real_module_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    reg.discover("lazybroken", backend="ghost", lazy=True)
    with pytest.raises(RegistryError, match="'ghost' .*lazybroken"):
        reg.check_backends()  # a backend no plugin adds: refused without importing anything
    reg.add_backend("ghost", "lazybroken.nothere:Ghost")
    with pytest.raises(PluginError, match="lazybroken.bad"):
        reg.imports("ghost")
    with pytest.raises(PluginError, match="lazybroken.nothere:Ghost"):
        reg.backends["ghost"]
    reg.add_backend("dup", lambda: object())
    with pytest.raises(RegistryError, match="backend contract"):
        reg.backends["dup"]
    with pytest.raises(RegistryError, match="registered twice"):
        reg.add_backend("dup", lambda: object())


def test_first_registry_use_imports_no_framework():
    """``onnxport.plugin.registry()`` names the installed backends without importing a framework or a
    primitive module; using one backend imports that backend's primitives only."""
    import subprocess

    code = (
        "import sys, onnxport\n"
        "reg = onnxport.plugin.registry(); names = onnxport.backends()\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'tensorflow', 'keras')"
        " or '.ops.' in m]\n"
        "assert not heavy, heavy[:10]\n"
        "if 'torch' in names:\n"
        "    assert reg.find_import('torch', '', 'Relu', 14) is not None\n"
        "    assert 'onnxport_torch.ops.import_.activation' in sys.modules\n"
        "    others = [m for m in sys.modules if m.split('.')[0] in ('jax', 'tensorflow')"
        " or m.startswith(('onnxport_jax.ops', 'onnxport_tensorflow.ops', 'onnxport_jax.importer',"
        " 'onnxport_tensorflow.importer'))]\n"
        "    assert not others, others[:10]\n"
        "print('ok', names)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")
