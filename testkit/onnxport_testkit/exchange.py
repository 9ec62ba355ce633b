"""The shared model set of the cross-framework exchange (``tests/test_exchange.py``, ``tox -e cross``).

Each model is defined once per source framework (a torch ``nn.Module``, a pure JAX function of a
params dict, a Keras 3 model) and loaded with the same weights from one numpy state, so the three
sources compute the same function. :data:`NOT_EXPORTABLE` is the reviewed list of source forms a
framework cannot express or export, with the reason; everything else is expected to pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

FRAMEWORKS = ("torch", "jax", "tensorflow")
#: the distribution to install for each framework's backend
PACKAGES = {"torch": "onnxport-torch (and torch)", "jax": "onnxport-jax (and jax)",
            "tensorflow": "onnxport-tensorflow (and tensorflow-cpu)"}
MODELS = ("mlp", "cnn", "residual", "transformer", "tied_decoder", "lstm", "control_flow")
#: checks of one pair, in the order they run; a red cell names the first that failed
CHECKS = ("build", "export", "checker", "import", "outputs", "param_count", "grad_step")

#: (source framework, model) -> why that source cannot provide the model; reviewed, not skipped silently
NOT_EXPORTABLE: dict[tuple[str, str], str] = {
}

#: (source or "*", target, model, check) -> why that check of that pair fails today; reviewed. The
#: pair is reported "xfailed" with the reason (the dashboard shows it apart from green and red).
EXPECTED: dict[tuple[str, str, str, str], str] = {
}


def expected_failure(source: str, target: str, model: str, check: str) -> str | None:
    """The reviewed reason why ``check`` fails for this pair and model, or None."""
    return EXPECTED.get((source, target, model, check)) or EXPECTED.get(("*", target, model, check))


@dataclasses.dataclass
class Source:
    """A model in one source framework: the native object, its example inputs, how to run it natively."""

    model: str
    framework: str
    obj: Any
    inputs: tuple[Any, ...]
    export_options: dict[str, Any]
    param_count: int
    run: Callable[[], list[np.ndarray]]


# -- the one numpy state ------------------------------------------------------------------------
D, T, V, H = 8, 5, 11, 6  # model width, sequence length, vocabulary, LSTM hidden size


def state(model: str) -> dict[str, np.ndarray]:
    """The weights of ``model`` (Linear weights as ``(in, out)``, conv kernels as OIHW)."""
    rng = np.random.default_rng(MODELS.index(model))

    def w(*shape: int, scale: float = 0.4) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    if model == "mlp":
        return {"w1": w(6, 16), "b1": w(16), "w2": w(16, 3), "b2": w(3)}
    if model == "cnn":
        return {"c1": w(4, 3, 3, 3), "cb1": w(4), "gamma": 1 + w(4, scale=0.1), "beta": w(4, scale=0.1),
                "mean": w(4, scale=0.1), "var": (1 + np.abs(w(4))).astype(np.float32),
                "c2": w(6, 4, 3, 3), "cb2": w(6), "fw": w(6, 5), "fb": w(5)}
    if model == "residual":
        return {f"{k}{i}": w(D, D) if k.startswith("w") else w(D) for i in range(2) for k in ("wa", "ba", "wb", "bb")}
    if model == "transformer":
        return {"ln1g": 1 + w(D, scale=0.1), "ln1b": w(D, scale=0.1), "wq": w(D, D), "wk": w(D, D), "wv": w(D, D),
                "wo": w(D, D), "ln2g": 1 + w(D, scale=0.1), "ln2b": w(D, scale=0.1), "w1": w(D, 16), "b1": w(16),
                "w2": w(16, D), "b2": w(D)}
    if model == "tied_decoder":
        return {"emb": w(V, D), "wh": w(D, D), "bh": w(D)}
    if model == "lstm":  # gates i, f, g, o (torch order); one bias per gate
        return {"wx": w(3, 4 * H), "wh": w(H, 4 * H), "b": w(4 * H), "fw": w(H, 2), "fb": w(2)}
    if model == "control_flow":
        return {"wa": w(4, 4), "wb": w(4, 4), "wl": w(4, 4)}
    raise KeyError(model)


def inputs(model: str) -> tuple[np.ndarray, ...]:
    """The example inputs of ``model`` (images NCHW; the channels-last sources transpose them)."""
    rng = np.random.default_rng(100 + MODELS.index(model))
    if model == "mlp":
        return (rng.standard_normal((2, 6)).astype(np.float32),)
    if model == "cnn":
        return (rng.standard_normal((2, 3, 8, 8)).astype(np.float32),)
    if model in ("residual",):
        return (rng.standard_normal((3, D)).astype(np.float32),)
    if model == "transformer":
        return (rng.standard_normal((2, T, D)).astype(np.float32),)
    if model == "tied_decoder":
        return (rng.integers(0, V, (2, T)).astype(np.int32),)
    if model == "lstm":
        return (rng.standard_normal((2, 4, 3)).astype(np.float32),)
    if model == "control_flow":
        return (rng.standard_normal((2, 4)).astype(np.float32),)
    raise KeyError(model)


def trainable_count(model: str) -> int:
    """Trainable values of ``model``: its state less the batch-norm statistics (tied weights once)."""
    return sum(a.size for k, a in state(model).items() if k not in ("mean", "var"))


def build(framework: str, model: str) -> Source:
    """``model`` written in ``framework``, loaded with :func:`state`."""
    reason = NOT_EXPORTABLE.get((framework, model))
    if reason:
        raise NotImplementedError(reason)
    from importlib import import_module

    mod = import_module(f"onnxport_testkit.exchange_{framework}")
    return mod.build(model, state(model), inputs(model), trainable_count(model))


@dataclasses.dataclass
class PairResult:
    """One model through one exporter -> importer pair: ``status`` passed / failed / xfailed / not_run."""

    model: str
    source: str
    target: str
    status: str
    check: str = ""  # the first failing check (failed) or why it did not run (not_run)
    message: str = ""
    max_diff: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: float32 tolerance of the outputs (the three frameworks reorder sums differently)
RTOL, ATOL = 1e-4, 1e-4


def missing_backend(framework: str) -> str | None:
    """Why ``framework``'s backend cannot take part (naming the package to install), or None."""
    import importlib.util

    import onnxport

    if framework not in onnxport.backends():
        return f"backend {framework!r} is not installed: pip install {PACKAGES[framework]}"
    if importlib.util.find_spec({"tensorflow": "keras"}.get(framework, framework)) is None:
        return f"{framework} is not installed: pip install {PACKAGES[framework]}"
    return None


def run_pair(source: str, target: str, model: str) -> PairResult:
    """Export ``model`` from ``source``, check it with ``onnx.checker``, import it into ``target``,
    compare outputs, trainable counts, and take one gradient step in ``target``."""
    from importlib import import_module

    import onnx
    import onnx_ir as ir

    import onnxport

    for fw in (source, target):
        why = missing_backend(fw)
        if why:
            return PairResult(model, source, target, "not_run", "backend", why)
    if (source, model) in NOT_EXPORTABLE:
        return PairResult(model, source, target, "not_run", "source", NOT_EXPORTABLE[(source, model)])
    step = "build"
    try:
        src = build(source, model)
        expected = src.run()
        step = "export"
        exported = onnxport.export_model(src.obj, src.inputs, **src.export_options)
        step = "checker"
        proto = ir.serde.serialize_model(exported)
        onnx.checker.check_model(proto, full_check=True)
        step = "import"
        imported = onnxport.import_model(proto, backend=target)
        step = "outputs"
        ins = [np.asarray(a).astype(onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
               for a, i in zip(src.inputs, proto.graph.input)]
        got = onnxport.get_backend(target).run(imported, ins)
        if len(got) != len(expected):
            raise AssertionError(f"{len(got)} outputs, the source has {len(expected)}")
        diff = 0.0
        for e, a in zip(expected, got):
            a = np.asarray(a)
            if a.shape != e.shape:
                raise AssertionError(f"output shape {a.shape}, the source's {e.shape}")
            diff = max(diff, float(np.max(np.abs(a.astype(np.float64) - e))) if e.size else 0.0)
            np.testing.assert_allclose(a, e, rtol=RTOL, atol=ATOL)
        step = "param_count"
        helpers = import_module(f"onnxport_testkit.exchange_{target}")
        n = helpers.imported_count(imported)
        allowed = {src.param_count}
        if model == "lstm":  # an ONNX LSTM holds a separate recurrent bias: 4 * hidden more values
            allowed.add(src.param_count + 4 * H)
        if n not in allowed:
            raise AssertionError(f"{n} trainable values in {target}, the {source} model has {src.param_count}")
        step = "grad_step"
        before, after = helpers.grad_step(imported, ins)
        if not (np.isfinite(before) and np.isfinite(after)) or after == before:
            raise AssertionError(f"one SGD step left the loss at {before} -> {after}")
    except Exception as exc:  # noqa: BLE001 - the first failing check is the result
        message = f"{type(exc).__name__}: {exc}"[:2000]
        reason = expected_failure(source, target, model, step)
        if reason:
            return PairResult(model, source, target, "xfailed", step, f"{reason} ({message[:300]})")
        return PairResult(model, source, target, "failed", step, message)
    if any(expected_failure(source, target, model, c) for c in CHECKS):
        return PairResult(model, source, target, "failed", "xpassed",
                          "passed although listed in EXPECTED: remove the entry", max_diff=diff)
    return PairResult(model, source, target, "passed", max_diff=diff)
