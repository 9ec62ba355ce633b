"""Imported modules follow the device and dtype they are moved to, and compile with torch.compile.

- ``.to("meta")``: every output is a meta tensor of the eager output's shape (no tensor of the
  forward pass is made on a fixed device: constants, shape-program results, RNN initial states);
- ``.double()``: the module takes float64 where the graph says float32 and matches onnxruntime's
  float32 result within float32 tolerance (1e-4); ``.half()``/``bfloat16`` run and keep the dtype;
- ``torch.compile(fullgraph=True)`` (backend "eager": no code generation, fast) compiles with
  dynamic sizes and gives eager's numbers;
- ``import_model(device=, dtype=)`` places the weights, and refuses bad values by name;
- the first import of a model with an embedding does not load torch's compiler (fresh process).

Models: the real-model set (``test_real_models``: torchscript and dynamo exports, ViT-like
attention scaling and LSTM/GRU initial states included), the light models the onnx package
ships, the exchange set's torch sources.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import onnxport
from onnxport_testkit import exchange
from onnxport_testkit.light import light_inputs, light_models

from .test_real_models import CASES, EXPORTERS, _Exported, _ort

pytestmark = pytest.mark.slow

_TOL = 1e-4  # float64 run vs onnxruntime's float32 result


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> _Exported:
    return _Exported(tmp_path_factory.mktemp("device_models"))


def _float(args: tuple, dtype: torch.dtype) -> list[torch.Tensor]:
    return [a.to(dtype) if a.is_floating_point() else a for a in args]


def _meta_matches(model: torch.nn.Module, args: list[torch.Tensor]) -> None:
    with torch.no_grad():
        want = model(*args)
        got = model.to("meta")(*[a.to("meta") for a in args])
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        assert g.device.type == "meta" and g.shape == w.shape and g.dtype == w.dtype


# -- real models --------------------------------------------------------------------------------
@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("name", list(CASES))
def test_real_model_on_meta(exported, name, exporter):
    case = CASES[name]
    _, path = exported(name, exporter)
    _meta_matches(onnxport.import_model(path), list(case.inputs(*case.export_sizes)))


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("name", list(CASES))
def test_real_model_in_float64(exported, name, exporter):
    case = CASES[name]
    _, path = exported(name, exporter)
    model = onnxport.import_model(path).double()
    args = case.inputs(*case.export_sizes)
    with torch.no_grad():
        ours = model(*_float(args, torch.float64))
    assert ours.dtype == torch.float64
    diff = float(np.abs(ours.numpy() - _ort(path, case.names, args)).max())
    assert diff < _TOL, f"{name}: float64 vs onnxruntime float32 max abs diff {diff:.3g}"
    if any(a.is_floating_point() for a in args):  # float32 is no longer what it takes
        with pytest.raises(onnxport.InputError, match="float64"):
            model(*args)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["vit", "lstm_gru", "bert", "gpt2"])
def test_real_model_in_half_precision(exported, name, dtype):
    case = CASES[name]
    _, path = exported(name, "torchscript")
    model = onnxport.import_model(path).to(dtype)
    args = case.inputs(*case.export_sizes)
    with torch.no_grad():
        ours = model(*_float(args, dtype))
        ref = onnxport.import_model(path)(*args)
    assert ours.dtype == dtype and ours.shape == ref.shape
    assert float((ours.float() - ref).abs().max()) < 0.1 * max(1.0, float(ref.abs().max()))


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("name", list(CASES))
def test_real_model_compiles_fullgraph(exported, name, exporter):
    case = CASES[name]
    _, path = exported(name, exporter)
    model = onnxport.import_model(path)
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="eager", dynamic=True)
    for sizes in (case.export_sizes, case.other_sizes):
        args = case.inputs(*sizes)
        try:
            _ort(path, case.names, args)
        except Exception:  # noqa: BLE001 - the exporter baked this size in (test_real_models checks the refusal)
            continue
        with torch.no_grad():
            torch.testing.assert_close(compiled(*args), model(*args), rtol=1e-5, atol=1e-5)


# -- light models (the onnx package's) ---------------------------------------------------------
LIGHT = sorted(light_models())


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_on_meta_in_float64_and_compiled(name):
    proto = onnx.load(str(light_models()[name]))
    feeds = light_inputs(proto)
    model = onnxport.import_model(proto)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    ref = sess.run(None, dict(zip(names, feeds)))[0]
    with torch.no_grad():
        ours = model.double()(*[torch.from_numpy(f).double() for f in feeds])
    assert ours.dtype == torch.float64
    np.testing.assert_allclose(ours.numpy(), ref, rtol=_TOL, atol=_TOL)
    _meta_matches(model, [torch.from_numpy(f).double() for f in feeds])
    model = onnxport.import_model(proto)
    torch._dynamo.reset()
    args = [torch.from_numpy(f) for f in feeds]
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, fullgraph=True, backend="eager")(*args), model(*args),
                                   rtol=1e-5, atol=1e-5)


# -- the exchange set's torch sources -----------------------------------------------------------
@pytest.mark.parametrize("name", exchange.MODELS)
def test_exchange_model_follows_device_and_dtype_and_compiles(name):
    src = exchange.build("torch", name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = onnxport.export_model(src.obj, src.inputs)
    args = list(src.inputs)
    ref = src.run()[0]
    model = onnxport.import_model(proto)
    torch._dynamo.reset()
    # control_flow's Loop runs while a computed condition holds: a data-dependent loop, which a
    # single graph cannot hold (its If compiles, as torch.cond); there graph breaks are allowed
    fullgraph = name != "control_flow"
    with torch.no_grad():
        compiled = torch.compile(model, fullgraph=fullgraph, backend="eager")(*args)
        first = compiled[0] if isinstance(compiled, tuple) else compiled
        np.testing.assert_allclose(first.numpy(), ref, rtol=_TOL, atol=_TOL)
        out = onnxport.import_model(proto).double()(*_float(tuple(args), torch.float64))
        first = out[0] if isinstance(out, tuple) else out
    assert first.dtype == torch.float64
    np.testing.assert_allclose(first.numpy(), ref, rtol=_TOL, atol=_TOL)
    if name == "control_flow":  # its If branches on a computed value, which meta tensors do not hold
        with pytest.raises(onnxport.ConversionError, match="If"), torch.no_grad():
            model.to("meta")(*[a.to("meta") for a in args])
        return
    _meta_matches(model, args)


def test_a_copy_converts_apart_from_its_original(exported):
    _, path = exported("gpt2", "torchscript")
    model = onnxport.import_model(path)
    args = CASES["gpt2"].inputs(2, 8)
    with torch.no_grad():
        ref = model(*args)
        clone = copy.deepcopy(model).double()
        out = clone(*args)
        assert out.dtype == torch.float64
        torch.testing.assert_close(out, ref.double(), rtol=_TOL, atol=_TOL)
        torch.testing.assert_close(model(*args), ref, rtol=0, atol=0)  # the original still computes in float32


# -- import options ----------------------------------------------------------------------------
def test_import_places_weights_with_device_and_dtype(exported):
    case = CASES["vit"]
    _, path = exported("vit", "torchscript")
    model = onnxport.import_model(path, dtype="float64")
    assert {p.dtype for p in model.parameters()} == {torch.float64}
    args = case.inputs(*case.export_sizes)
    with torch.no_grad():
        assert model(*_float(args, torch.float64)).dtype == torch.float64
    meta = onnxport.import_model(path, device="meta", dtype=torch.float16)
    assert {(p.device.type, p.dtype) for p in meta.parameters()} == {("meta", torch.float16)}
    with torch.no_grad():
        out = meta(*[a.to("meta", torch.float16) for a in args])
    assert out.device.type == "meta" and out.dtype == torch.float16


@pytest.mark.parametrize("options, match", [({"device": "nowhere"}, "device"), ({"device": 3.5}, "device"),
                                            ({"dtype": "int32"}, "dtype"), ({"dtype": "floaty"}, "dtype"),
                                            ({"dtype": np.float32}, "dtype")])
def test_bad_placement_options_are_refused(exported, options, match):
    _, path = exported("vit", "torchscript")
    with pytest.raises(onnxport.InputError, match=match):
        onnxport.import_model(path, **options)


# -- cold start -------------------------------------------------------------------------------
def test_first_import_of_an_embedding_model_does_not_load_the_compiler(exported):
    _, path = exported("bert", "torchscript")
    code = ("import sys, onnxport\n"
            f"m = onnxport.import_model({str(path)!r})\n"
            "import torch\n"
            "assert isinstance(m.bert.embeddings.word_embeddings, torch.nn.Embedding)\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr
