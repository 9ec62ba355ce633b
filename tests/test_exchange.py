"""Cross-framework exchange: ``onnxport.convert(obj, to=B)`` for every exporter x importer pair.

Each source framework contributes a small shared model set (an MLP, a conv net, a residual block
with a shared weight); each is exported, imported into every target backend and run on the same
inputs. Pairs whose backend is not installed, or cannot export yet, are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import onnxport

FRAMEWORKS = ("torch", "jax", "tensorflow")


def torch_models() -> list[tuple[str, Any, tuple[Any, ...]]]:
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            return torch.relu(self.fc(torch.relu(self.fc(x))) + x)  # one weight used twice

    mlp = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).eval()
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 5)).eval()
    return [
        ("mlp", mlp, (torch.randn(2, 6),)),
        ("cnn", cnn, (torch.randn(2, 3, 8, 8),)),
        ("residual", Residual().eval(), (torch.randn(4, 8),)),
    ]


def jax_models() -> list[tuple[str, Any, tuple[Any, ...]]]:
    import jax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1, self.l2 = nnx.Linear(6, 16, rngs=rngs), nnx.Linear(16, 3, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.relu(self.l1(x)))

    class CNN(nnx.Module):  # NHWC, as Flax lays out images
        def __init__(self, rngs):
            self.conv, self.fc = nnx.Conv(3, 4, (3, 3), rngs=rngs), nnx.Linear(64, 5, rngs=rngs)

        def __call__(self, x):
            y = nnx.max_pool(nnx.relu(self.conv(x)), (2, 2), (2, 2))
            return self.fc(y.reshape(y.shape[0], -1))

    class Residual(nnx.Module):
        def __init__(self, rngs):
            self.fc = nnx.Linear(8, 8, rngs=rngs)

        def __call__(self, x):
            return nnx.relu(self.fc(nnx.relu(self.fc(x))) + x)  # one weight used twice

    key = jax.random.key(0)
    return [
        ("mlp", MLP(nnx.Rngs(0)), (jax.random.normal(key, (2, 6)),)),
        ("cnn", CNN(nnx.Rngs(1)), (jax.random.normal(key, (2, 8, 8, 3)),)),
        ("residual", Residual(nnx.Rngs(2)), (jax.random.normal(key, (4, 8)),)),
    ]


def tensorflow_models() -> list[tuple[str, Any, tuple[Any, ...]]]:
    import keras

    rng = np.random.default_rng(0)

    def rand(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype("float32")

    mlp = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
    cnn = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
                            keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(5)])
    inp = keras.Input((8,))
    fc = keras.layers.Dense(8)  # one weight used twice
    residual = keras.Model(inp, keras.activations.relu(fc(keras.activations.relu(fc(inp))) + inp))
    return [("mlp", mlp, (rand(2, 6),)), ("cnn", cnn, (rand(2, 8, 8, 3),)), ("residual", residual, (rand(4, 8),))]


#: per source framework, the model set and how to run a model natively -> numpy outputs
SOURCES: dict[str, Callable[[], list[tuple[str, Any, tuple[Any, ...]]]]] = {
    "torch": torch_models, "jax": jax_models, "tensorflow": tensorflow_models,
}


def _native(framework: str, model: Any, args: tuple[Any, ...]) -> list[np.ndarray]:
    if framework == "torch":
        import torch

        with torch.no_grad():
            out = model(*args)
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
    if framework == "jax":
        out = model(*args)
        return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]
    if framework == "tensorflow":
        out = model(*args, training=False)
        return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]
    raise NotImplementedError(framework)


def _skip_reason(src: str, dst: str) -> str | None:
    installed = onnxport.backends()
    for name in (src, dst):
        if name not in installed:
            return f"backend {name!r} is not installed"
    if src not in SOURCES:
        return f"no shared model set for source framework {src!r} yet"
    if not hasattr(onnxport.get_backend(src), "export_model"):
        return f"backend {src!r} cannot export yet (no export_model)"
    return None


@pytest.mark.parametrize("dst", FRAMEWORKS)
@pytest.mark.parametrize("src", FRAMEWORKS)
def test_exchange(src: str, dst: str) -> None:
    reason = _skip_reason(src, dst)
    if reason:
        pytest.skip(f"{src} -> {dst}: {reason}")
    target = onnxport.get_backend(dst)
    for name, model, args in SOURCES[src]():
        expected = _native(src, model, args)
        converted = onnxport.convert(model, to=dst, example_inputs=args)
        actual = target.run(converted, [np.asarray(a) for a in args])
        assert len(actual) == len(expected), name
        for e, a in zip(expected, actual):
            np.testing.assert_allclose(np.asarray(a), e, rtol=1e-4, atol=1e-5, err_msg=f"{src} -> {dst}: {name}")
