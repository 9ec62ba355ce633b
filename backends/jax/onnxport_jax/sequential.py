"""An ONNX graph as nested JAX containers: one imported step per node, residual blocks nested.

Each step is the node's own sub-model (cut by the core's :func:`onnxport.edit.surgery.blocks.nest`)
imported as a :class:`~onnxport_jax.importer.JaxModel`. Containers hold a params pytree of their
children's params and a pure ``apply(params, x)``, so ``jax.grad``/``jax.jit`` work on the whole
stack. A weight that several steps read (one initializer) is one leaf, under ``"shared"``: its
gradient is the sum over its uses.
"""

from __future__ import annotations

from typing import Any

from onnxport.importing.plan import ImportPlan


class Identity:
    """The value itself (an empty branch: a residual shortcut)."""

    params: dict[str, Any] = {}

    def apply(self, params: dict[str, Any], x: Any) -> Any:
        return x

    def __call__(self, x: Any) -> Any:
        return x


class _Container:
    #: weights that several steps read (initializer name -> array), one leaf for all of them;
    #: ``to_sequential`` gives every container of one model the same dict
    shared: dict[str, Any] = {}

    def _children(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def params(self) -> dict[str, Any]:
        """The children's params by child name (``"0"``, ``"body"`` ...) and, under ``"shared"``,
        the weights several steps read (each once): one pytree."""
        tree = _tree(self, frozenset(self.shared))
        return {**tree, "shared": dict(self.shared)} if self.shared else tree

    def apply(self, params: dict[str, Any], x: Any) -> Any:
        """The pure function of ``params`` (a tree like :attr:`params`)."""
        return self._apply(params, x, params.get("shared", {}))

    def _apply(self, params: dict[str, Any], x: Any, shared: dict[str, Any]) -> Any:
        raise NotImplementedError

    def __call__(self, x: Any) -> Any:
        return self.apply(self.params, x)


def _tree(obj: Any, shared: frozenset[str]) -> dict[str, Any]:
    if isinstance(obj, _Container):
        return {k: _tree(c, shared) for k, c in obj._children().items()}
    return {k: v for k, v in obj.params.items() if k not in shared}


def _run(obj: Any, params: dict[str, Any], shared: dict[str, Any], *x: Any) -> Any:
    if isinstance(obj, _Container):
        return obj._apply(params, *x, shared)
    return obj.apply({**params, **shared} if shared else params, *x)


class Sequential(_Container):
    """Steps applied in order; ``seq[i]``, ``len(seq)``, ``seq.apply(seq.params, x)``."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)

    def _children(self) -> dict[str, Any]:
        return {str(i): s for i, s in enumerate(self.steps)}

    def __getitem__(self, i: int) -> Any:
        return self.steps[i]

    def __setitem__(self, i: int, step: Any) -> None:
        self.steps[i] = step

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def _apply(self, params: dict[str, Any], x: Any, shared: dict[str, Any]) -> Any:
        for i, s in enumerate(self.steps):
            x = _run(s, params[str(i)], shared, x)
        return x


class Residual(_Container):
    """``join(body(x), shortcut(x))`` in the ONNX node's operand order."""

    def __init__(self, body: Any, shortcut: Any, join: Any, body_first: bool = True) -> None:
        self.body, self.shortcut, self.join, self.body_first = body, shortcut, join, body_first

    def _children(self) -> dict[str, Any]:
        return {"body": self.body, "shortcut": self.shortcut, "join": self.join}

    def _apply(self, params: dict[str, Any], x: Any, shared: dict[str, Any]) -> Any:
        a = _run(self.body, params["body"], shared, x)
        b = _run(self.shortcut, params["shortcut"], shared, x)
        return _run(self.join, params["join"], shared, *((a, b) if self.body_first else (b, a)))


class Parallel(_Container):
    """``join(*(branch(x) for branch in branches))``."""

    def __init__(self, branches: list[Any], join: Any) -> None:
        self.branches, self.join = list(branches), join

    def _children(self) -> dict[str, Any]:
        return {**{str(i): b for i, b in enumerate(self.branches)}, "join": self.join}

    def _apply(self, params: dict[str, Any], x: Any, shared: dict[str, Any]) -> Any:
        outs = [_run(b, params[str(i)], shared, x) for i, b in enumerate(self.branches)]
        return _run(self.join, params["join"], shared, *outs)


def to_sequential(plan: ImportPlan, **options: Any) -> Sequential:
    """Nested JAX containers for a prepared model (see ``onnxport.to_sequential``)."""
    from onnxport import api
    from onnxport.edit.surgery.blocks import nest

    steps: list[Any] = []

    def step(part: Any, node: Any) -> Any:
        model = api.import_model(part, backend="jax", **options)
        steps.append(model)
        return model

    seq = nest(plan.model, step, sequential=lambda items: Sequential(*items), residual=Residual,
               parallel=Parallel, identity=Identity)
    seen: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    for model in steps:
        for key, value in model.params.items():
            if key in seen:
                shared[key] = seen[key]
            seen.setdefault(key, value)
    if shared:
        for c in _containers(seq):
            c.shared = shared
    return seq


def _containers(obj: Any) -> list[_Container]:
    if not isinstance(obj, _Container):
        return []
    return [obj, *(c for child in obj._children().values() for c in _containers(child))]


__all__ = ["Identity", "Parallel", "Residual", "Sequential", "to_sequential"]
