"""Declared options: every installed backend's import and export options are checked by the core,
in import_model, prepare, export_model, convert, to_sequential and the CLI; an unknown name or a
value outside the accepted ones is an InputError naming it and listing the accepted ones."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxport
from onnxport.plugin.backend import accepted_export_options, accepted_import_options, problems
from onnxport.plugin.options import ANY, Option, check, parse_assignments
from onnxport.tools import cli

BACKENDS = onnxport.backends()


def _relu() -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _bad_value(opt: Option) -> object | None:
    """A value ``opt`` does not accept (None where it accepts anything)."""
    for candidate in ("no-such-mode", 12345, object()):
        if not opt.allows(candidate):
            return candidate
    return None


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


def test_backends_declare_their_options(backend) -> None:
    be = onnxport.get_backend(backend)
    assert problems(be, backend) == []
    declared = accepted_import_options(be)
    assert {"keep_functions", "infer_shapes", "strict"} <= {o.name for o in declared}
    for opt in declared + accepted_export_options(be):
        assert opt.doc and opt.accepts, opt
        assert opt.allows(opt.default) or opt.name in ("params", "dynamic_shapes"), opt


def test_unknown_import_option_is_named_with_the_accepted_ones(backend) -> None:
    accepted = sorted(o.name for o in accepted_import_options(onnxport.get_backend(backend)))
    for call in (onnxport.import_model, onnxport.prepare):
        with pytest.raises(onnxport.InputError) as info:
            call(_relu(), backend=backend, no_such_option=3)
        msg = str(info.value)
        assert "'no_such_option'" in msg and backend in msg
        assert ", ".join(accepted) in msg
    with pytest.raises(onnxport.InputError, match="'quantization'"):
        onnxport.import_model(_relu(), backend=backend, quantization="no-such-mode")


def test_typo_suggests_the_option(backend) -> None:
    with pytest.raises(onnxport.InputError, match="did you mean 'infer_shapes'"):
        onnxport.import_model(_relu(), backend=backend, infer_shape=False)


def test_every_import_option_default_imports_and_a_bad_value_is_refused(backend) -> None:
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    be = onnxport.get_backend(backend)
    for opt in accepted_import_options(be):
        model = onnxport.import_model(_relu(), backend=backend, **{opt.name: opt.default})
        if be.supports("run"):
            np.testing.assert_array_equal(np.asarray(be.run(model, [x])[0]), np.maximum(x, 0))
        bad = _bad_value(opt)
        if bad is None:
            continue
        with pytest.raises(onnxport.InputError) as info:
            onnxport.import_model(_relu(), backend=backend, **{opt.name: bad})
        assert repr(opt.name) in str(info.value) and opt.accepted() in str(info.value)


def test_export_options_are_checked_before_tracing(backend) -> None:
    be = onnxport.get_backend(backend)
    declared = accepted_export_options(be)
    if not declared:
        pytest.skip(f"backend {backend} does not export")
    traced = []

    def fn(x):
        traced.append(x)
        return x

    with pytest.raises(onnxport.InputError) as info:
        onnxport.export_model(fn, (np.ones(2, np.float32),), backend=backend, optimise=False)
    assert "'optimise'" in str(info.value) and "did you mean 'optimize'" in str(info.value)
    assert ", ".join(sorted(o.name for o in declared)) in str(info.value)
    for opt in declared:
        bad = _bad_value(opt)
        if bad is not None:
            with pytest.raises(onnxport.InputError, match=repr(opt.name)):
                onnxport.export_model(fn, (np.ones(2, np.float32),), backend=backend, **{opt.name: bad})
    assert traced == []


def test_convert_checks_both_sides(backend) -> None:
    be = onnxport.get_backend(backend)
    with pytest.raises(onnxport.InputError, match="'no_such_option'"):
        onnxport.convert(_relu(), backend, no_such_option=1)
    with pytest.raises(onnxport.InputError, match="'strict'"):
        onnxport.convert(_relu(), backend, strict="sometimes")
    if accepted_export_options(be):
        native = onnxport.import_model(_relu(), backend=backend)
        x = be.from_numpy(np.ones((2, 3), np.float32))
        with pytest.raises(onnxport.InputError, match="'no_such_export_option'"):
            onnxport.convert(native, backend, (x,), export_options={"no_such_export_option": 1})


def test_cli_flags_map_onto_the_declared_options(backend, tmp_path, capsys) -> None:
    path = tmp_path / "relu.onnx"
    onnx.save(_relu(), path)
    code = cli.main(["check", str(path), "--backend", backend, "-O", "no_such_option=3"])
    err = capsys.readouterr().err
    assert code == 1 and "InputError" in err and "'no_such_option'" in err and "infer_shapes" in err
    code = cli.main(["check", str(path), "--backend", backend, "--option", "strict=maybe"])
    err = capsys.readouterr().err
    assert code == 1 and "'strict'" in err and "bool" in err
    code = cli.main(["check", str(path), "--backend", backend, "--option", "infer_shapes=false"])
    out = capsys.readouterr().out
    assert code == 0, out
    code = cli.main(["convert", str(path), "-o", str(tmp_path / "out.onnx"), "--to", backend,
                     "--export-option", "optimise=1"])
    err = capsys.readouterr().err
    if accepted_export_options(onnxport.get_backend(backend)):
        assert code == 1 and "'optimise'" in err and "did you mean 'optimize'" in err
    code = cli.main(["options", "--backend", backend])
    out = capsys.readouterr().out
    assert code == 0 and "keep_functions" in out and f"{backend} import options" in out


def test_option_values_parse_by_their_declaration() -> None:
    declared = (Option("trainable", "d", ("auto", "all", "none"), "auto"), Option("seed", "d", (int, None)),
                Option("on", "d", (bool,), True), Option("x64", "d", ("auto", True, False), "auto"),
                Option("any", "d", (ANY,)))
    got = parse_assignments(["trainable=none", "seed=7", "on=off", "x64=False", "any=text"], declared, what="opt")
    assert got == {"trainable": "none", "seed": 7, "on": False, "x64": False, "any": "text"}
    assert parse_assignments(["seed=none"], declared, what="opt") == {"seed": None}
    for bad in (["trainable=some"], ["seed=1.5"], ["on=2"], ["nope=1"], ["seed"]):
        with pytest.raises(onnxport.InputError):
            parse_assignments(bad, declared, what="opt")
    check({"on": np.bool_(True), "seed": np.int64(3)}, declared, what="opt")
    for bad_value in ({"on": 1}, {"seed": True}, {"trainable": "None"}):
        with pytest.raises(onnxport.InputError):
            check(bad_value, declared, what="opt")
