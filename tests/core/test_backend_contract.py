"""The backend contract (``onnxport.plugin.backend``), exercised the way CONTRIBUTING.md's "Add a backend"
describes it: a small numpy backend with one import and one export primitive, registered through
a plugin, imported, run, exported through the core pipeline, checked and refused when incomplete."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnx_ir as ir
import pytest

import onnxport
from onnxport import api
from onnxport.errors import BackendNotFoundError, InputError, PluginError, RegistryError
from onnxport.exporting import pipeline as export
from onnxport.exporting.builder import Builder
from onnxport.plugin import discovery as plugins
from onnxport.plugin.backend import Backend, Exporter, NotSupportedError, export_part, problems
from onnxport.plugin.registry import Registry

# -- the backend, as a contributor writes it ----------------------------------------------------------


class Traced:
    """The "framework object" of the numpy backend: a named numpy function."""

    def __init__(self, op: str, fn):
        self.op, self.fn = op, fn

    def __call__(self, *args):
        return self.fn(*args)


@onnxport.importer("Relu", since=14)
def relu(ctx, x):
    return np.maximum(x, 0).astype(x.dtype)


@onnxport.exporter("numpy.relu")
def export_relu(g: Builder, x: ir.Value) -> ir.Value:
    out = g.op("Relu", x)
    out.dtype, out.shape = x.dtype, x.shape
    return out


class NumpyBackend(Backend, Exporter):
    name = "numpy"

    def import_model(self, plan: Any, **options: Any):
        graph = plan.model.graph

        def run(*inputs):
            env = {v.name: x for v, x in zip(graph.inputs, inputs)}
            for node in graph:
                info = plan.info(node)
                out = info.primitive.fn(info, *[env[v.name] for v in node.inputs], **info.attributes)
                env[node.outputs[0].name] = out
            return [env[v.name] for v in graph.outputs]

        return run

    def run(self, imported, inputs):
        return imported(*inputs)

    def export_model(self, obj: Traced, example_inputs: Any = (), **options: Any) -> ir.Model:
        opts = export.ExportOptions.from_kwargs(options)
        g = Builder(export.choose_opset(opts.opset), name="numpy")
        xs = [g.input(f"x{i}", ir.DataType.FLOAT, list(np.shape(x))) for i, x in enumerate(example_inputs)]
        prim = onnxport.registry().find_export(self.name, f"numpy.{obj.op}")
        with g.scope(obj.op, export.scope_metadata([""], ["Traced"])):
            g.output(prim.fn(g, *xs), "y")
        return export.finish(g.model(producer="onnxport-numpy"), opts, backend=self.name, targets=[prim.target])


class Plugin:
    """The plugin module's hooks (an entry point names a module; a class works the same here)."""

    @onnxport.hookimpl
    def onnxport_register(self, registrar) -> None:
        registrar.add_backend(NumpyBackend())
        registrar.add_import("numpy", "Relu", relu, since=14)
        registrar.add_export("numpy", "numpy.relu", export_relu)

    @onnxport.hookimpl
    def onnxport_backend_for(self, obj: Any) -> str | None:
        return "numpy" if isinstance(obj, Traced) else None


@pytest.fixture
def numpy_backend(monkeypatch):
    """The process registry with the numpy plugin added (entry points off: fast, isolated)."""
    pm = plugins.make_manager([Plugin()], entry_points=False)
    reg = plugins.build_registry(pm)
    monkeypatch.setattr(plugins, "_registry", reg)
    monkeypatch.setattr(plugins, "_manager", pm)
    return reg


def _relu_model() -> onnx.ModelProto:
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


# -- the contract in use ---------------------------------------------------------------------------
def test_new_backend_imports_runs_and_checks(numpy_backend):
    assert onnxport.backends() == ["numpy"]
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    run = onnxport.import_model(_relu_model(), backend="numpy")
    np.testing.assert_array_equal(run(x)[0], np.maximum(x, 0))
    from onnxport.tools import check

    result = check.check(onnxport.load(_relu_model()), "numpy", [x])
    assert result.ok, result.summary()


def test_new_backend_exports_through_the_core_pipeline(numpy_backend):
    x = np.ones((2, 3), np.float32)
    model = onnxport.export_model(Traced("relu", lambda a: np.maximum(a, 0)), (x,), opset=17)
    assert model.opset_imports[""] == 17
    assert [n.op_type for n in model.graph] == ["Relu"]
    assert model.meta[export.targets_key("numpy")] == ["numpy.relu"]
    onnx.checker.check_model(ir.serde.serialize_model(model), full_check=True)


def test_optional_features_default_and_are_named(numpy_backend):
    be = api.get_backend("numpy")
    assert be.supports("run") and be.supports("export")
    assert not be.supports("save") and not be.supports("load") and not be.supports("to_sequential")
    assert not be.supports("from_numpy")
    assert be.expected_failures == {} and ir.DataType.FLOAT in be.dtypes
    with pytest.raises(NotSupportedError, match="'numpy' cannot save native objects"):
        be.save(object(), "out.npz")
    with pytest.raises(BackendNotFoundError, match="does not build sequential containers"):
        onnxport.to_sequential(_relu_model(), backend="numpy")
    with pytest.raises(ValueError, match="unknown backend feature"):
        be.supports("teleport")
    exp = export_part(be)
    assert exp is be and exp.run_native(len, (), {}) is None
    # the testkit's hooks are not part of the production contract: a backend without them gets the defaults
    from onnxport.plugin.testkit_support import TestkitSupport, testkit_part

    assert not isinstance(be, TestkitSupport)
    kit = testkit_part(be)
    assert kit.prepare_export_sample("s", "t") == ("s", {}) and kit.case_variants(None) == []
    assert problems(be, "numpy") == []


def test_convert_asks_the_contract_not_the_attributes(numpy_backend, tmp_path, monkeypatch):
    """``onnxport convert`` picks readers and writers by ``supports("load"/"save")``: a backend that
    names a suffix and claims a file, but saves and loads nothing, is neither."""
    from onnxport.tools import native

    monkeypatch.setattr(NumpyBackend, "can_load", lambda self, path: True)
    monkeypatch.setattr(NumpyBackend, "native_suffixes", (".npzz",))
    (tmp_path / "m.npzz").write_bytes(b"")
    with pytest.raises(BackendNotFoundError, match="no installed backend reads this file"):
        native.reader_of(tmp_path / "m.npzz")
    with pytest.raises(BackendNotFoundError, match="'numpy' cannot save native files"):
        native.writer_of(tmp_path / "out.npzz", "numpy")
    with pytest.raises(InputError, match="the suffix names no target"):
        native.writer_of(tmp_path / "out.npzz", None)


def test_import_only_backend_cannot_export(monkeypatch):
    class ImportOnly(Backend):
        name = "numpy"

        def import_model(self, plan, **options):
            return None

    class P:
        @onnxport.hookimpl
        def onnxport_register(self, registrar) -> None:
            registrar.add_backend(ImportOnly())

        @onnxport.hookimpl
        def onnxport_backend_for(self, obj: Any) -> str | None:
            return "numpy"

    pm = plugins.make_manager([P()], entry_points=False)
    monkeypatch.setattr(plugins, "_registry", plugins.build_registry(pm))
    monkeypatch.setattr(plugins, "_manager", pm)
    assert export_part(api.get_backend("numpy")) is None
    with pytest.raises(BackendNotFoundError, match="cannot export models yet"):
        onnxport.export_model(object(), ())


def test_registry_refuses_what_breaks_the_contract():
    class Duck:  # the old duck-typed shape: name and import_model, no base class
        name = "duck"

        def import_model(self, plan, **options):
            return None

    with pytest.raises(RegistryError, match=r"Duck does not meet the backend contract.*subclass it"):
        Registry().add_backend(Duck())

    class Nameless(Backend):
        name = "has space"

        def import_model(self, plan, **options):
            return None

    with pytest.raises(RegistryError, match="non-empty identifier"):
        Registry().add_backend(Nameless())

    class BadFailures(Backend):
        name = "bad"

        @property
        def expected_failures(self):
            return ["test_relu"]

        def import_model(self, plan, **options):
            return None

    assert problems(BadFailures()) == ["expected_failures must be a mapping, not list"]

    class Incomplete(Backend, Exporter):
        name = "half"

        def import_model(self, plan, **options):
            return None

    class P:
        @onnxport.hookimpl
        def onnxport_register(self, registrar) -> None:
            registrar.add_backend(Incomplete())

    with pytest.raises(PluginError, match="abstract methods? .*export_model"):
        plugins.build_registry(plugins.make_manager([P()], entry_points=False))


def test_duplicate_backend_raises():
    reg = Registry()
    reg.add_backend(NumpyBackend())
    with pytest.raises(RegistryError, match="registered twice"):
        reg.add_backend(NumpyBackend())


def test_torch_native_save_and_load(tmp_path):
    """The torch backend's optional save/load: a torch.export program that runs as the import did."""
    pytest.importorskip("onnxport_torch")
    import torch

    be = api.get_backend("torch")
    assert be.supports("save") and be.supports("load")
    imported = onnxport.import_model(_relu_model(), backend="torch")
    x = torch.linspace(-1, 1, 6).reshape(2, 3)
    be.save(imported, tmp_path / "m.pt2", (x,))
    loaded = be.load(tmp_path / "m.pt2")
    assert torch.equal(loaded(x), imported(x))


def test_the_plan_a_backend_gets_is_the_contract_s_plan():
    """Every attribute and method the contract's ImportPlanLike names is the core plan's."""
    from onnxport.plugin.backend import ImportPlanLike

    plan = onnxport.prepare(_relu_model())
    assert isinstance(plan, ImportPlanLike)
    assert plan.info(next(iter(plan.model.graph))).primitive is not None
