"""A backend with exactly its declared dependencies: the smoke subset the minimal tox envs
(``torch-min``, ``jax-min``, ``tensorflow-min``) run with only ``onnxport``, the testkit and
``onnxport-<framework>`` installed: light models imported and run against onnxruntime, a plain
module or function exported, the exchange into the framework, the CLI; and none of those steps
imports an optional package (Flax, transformers, onnxscript, Pillow, tqdm ...) or another
framework. The backend under test is the one ``--onnxport-backend`` names (default: every
installed one). Float32 against onnxruntime: max |d| <= 1e-4 * max(1, max |expected|)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
import pytest

import onnxport
from onnxport_testkit.light import light_inputs, light_models, randomized

#: light models of the smoke: Conv, Relu, MaxPool, Concat, Dropout, GlobalAveragePool, Softmax,
#: LRN, Gemm, Reshape between them
LIGHT = ["squeezenet", "bvlc_alexnet"]

#: optional integrations no basic import, export or CLI call may import
OPTIONAL = ["flax", "optax", "transformers", "onnxscript", "PIL", "tqdm", "selenium"]
#: the other frameworks (a backend knows no other backend)
OTHERS = {"torch": ["jax", "tensorflow", "keras"], "jax": ["torch", "tensorflow", "keras"],
          "tensorflow": ["torch", "jax", "flax"]}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        chosen = metafunc.config.getoption("--onnxport-backend") or onnxport.backends()
        metafunc.parametrize("backend", chosen)


def _close(ours: Any, expected: Any) -> None:
    ours, expected = np.asarray(ours), np.asarray(expected)
    assert ours.shape == expected.shape and ours.dtype == expected.dtype, (ours.shape, expected.shape)
    assert np.abs(ours - expected).max() <= 1e-4 * max(1.0, float(np.abs(expected).max()))


def _ort(proto: onnx.ModelProto, inputs: list[np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), inputs)})


def _numpy(backend: str, out: Any) -> np.ndarray:
    out = out[0] if isinstance(out, (tuple, list)) else out
    return np.asarray(onnxport.get_backend(backend).to_numpy(out))


# -- what each framework's user exports: a plain module or function, its inputs, its output --------
def _plain(backend: str) -> tuple[Any, tuple[Any, ...], np.ndarray]:
    if backend == "torch":
        import torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).eval()
        x = torch.randn(2, 4)
        with torch.no_grad():
            return model, (x,), model(x).numpy()
    if backend == "jax":
        import jax
        import jax.numpy as jnp

        w = jax.random.normal(jax.random.key(0), (4, 8))
        v = jax.random.normal(jax.random.key(1), (8, 3))

        def mlp(x):
            return jnp.tanh(x @ w) @ v + 1.0

        x = jax.random.normal(jax.random.key(2), (2, 4))
        return mlp, (x,), np.asarray(mlp(x))
    if backend == "tensorflow":
        import keras

        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
        return model, (x,), np.asarray(model(x))
    pytest.fail(f"no plain object of the smoke for backend {backend!r}")


def _as_numpy_inputs(args: tuple[Any, ...]) -> list[np.ndarray]:
    return [np.asarray(a.detach().numpy() if hasattr(a, "detach") else a) for a in args]


# -- the smoke ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LIGHT)
def test_light_model_matches_onnxruntime(backend: str, name: str) -> None:
    proto = randomized(onnx.load(str(light_models()[name])))  # seeded weights: no constant output
    inputs = light_inputs(proto)
    model = onnxport.import_model(proto, backend=backend)
    be = onnxport.get_backend(backend)
    _close(_numpy(backend, model(*[be.from_numpy(x) for x in inputs])), _ort(proto, inputs)[0])


def test_export_plain_object(backend: str) -> None:
    obj, args, expected = _plain(backend)
    proto = ir.serde.serialize_model(onnxport.export_model(obj, args))
    onnx.checker.check_model(proto, full_check=True)
    assert len(proto.graph.initializer) >= 2  # the weights are initializers, not folded into nodes
    _close(_ort(proto, _as_numpy_inputs(args))[0], expected)


def test_exchange_into_the_framework(backend: str) -> None:
    obj, args, expected = _plain(backend)
    model = onnxport.convert(obj, to=backend, example_inputs=args)
    be = onnxport.get_backend(backend)
    _close(_numpy(backend, model(*[be.from_numpy(x) for x in _as_numpy_inputs(args)])), expected)


def _cli(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("onnxport", path=str(Path(sys.executable).parent)) or shutil.which("onnxport")
    cmd = [exe, *args] if exe else [sys.executable, "-c", "import sys; from onnxport.tools.cli import main; "
                                    "sys.exit(main())", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_cli_info_and_convert(backend: str, tmp_path: Path) -> None:
    path = str(light_models()["squeezenet"])
    info = _cli("info", path)
    assert info.returncode == 0, info.stderr
    assert "Conv" in info.stdout and backend in info.stdout
    out = tmp_path / ("model.pt2" if backend == "torch" else "model")
    conv = _cli("convert", path, "-o", str(out), "--to", backend, "--check")
    assert conv.returncode == 0, conv.stderr
    assert out.exists()
    assert "max" in (conv.stdout + conv.stderr).lower()  # --check reports the difference to onnxruntime


_NO_OPTIONAL = """
import importlib, sys
import numpy as np, onnx, onnxport
from onnxport_testkit.light import light_inputs, light_models
from tests.smoke.test_minimal_env import _plain
def top():
    return {m.split(".")[0] for m in sys.modules}
backend = sys.argv[1]
print(" ".join(sorted(top())))  # onnxport itself
importlib.import_module(backend)  # what the framework imports at its own import (torch: tqdm) is its business
before = top()
proto = onnx.load(str(light_models()["squeezenet"]))
be = onnxport.get_backend(backend)
model = onnxport.import_model(proto, backend=backend)
model(*[be.from_numpy(x) for x in light_inputs(proto)])
obj, args, _ = _plain(backend)
onnxport.convert(obj, to=backend, example_inputs=args)
print(" ".join(sorted(top() - before)))  # what onnxport's import, export and exchange import
"""


def test_no_optional_package_imported(backend: str) -> None:
    """Importing onnxport, then (after the framework itself) importing a model, exporting a
    plain object and converting it, import no optional package and no other framework (in a
    fresh interpreter: the suite's own imports do not count)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(_NO_OPTIONAL), backend], capture_output=True,
                         text=True, timeout=600, cwd=root, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    core, used = (set(line.split()) for line in run.stdout.strip().splitlines()[-2:])
    assert "onnxport" in core and "onnxport_testkit" in core
    assert sorted(core & set(OPTIONAL + list(OTHERS))) == []
    assert f"onnxport_{backend}" in used
    assert sorted(used & set(OPTIONAL + OTHERS[backend])) == []
