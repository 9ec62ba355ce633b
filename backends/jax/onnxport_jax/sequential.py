"""An ONNX graph as nested JAX containers: one imported step per node, residual blocks nested.

Each step is the node's own sub-model (cut with :func:`onnxport.edit.extract`) imported as a
:class:`~onnxport_jax.importer.JaxModel`. Containers hold a params pytree of their children's
params and a pure ``apply(params, x)``, so ``jax.grad``/``jax.jit`` work on the whole stack.
"""

from __future__ import annotations

from typing import Any

from onnxport.driver import ImportPlan


class Identity:
    """The value itself (an empty branch: a residual shortcut)."""

    params: dict[str, Any] = {}

    def apply(self, params: dict[str, Any], x: Any) -> Any:
        return x

    def __call__(self, x: Any) -> Any:
        return x


class _Container:
    def _children(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def params(self) -> dict[str, Any]:
        """The children's params by child name (``"0"``, ``"body"`` ...): one pytree."""
        return {k: c.params for k, c in self._children().items()}

    def __call__(self, x: Any) -> Any:
        return self.apply(self.params, x)


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

    def apply(self, params: dict[str, Any], x: Any) -> Any:
        for i, s in enumerate(self.steps):
            x = s.apply(params[str(i)], x)
        return x


class Residual(_Container):
    """``join(body(x), shortcut(x))`` in the ONNX node's operand order."""

    def __init__(self, body: Any, shortcut: Any, join: Any, body_first: bool = True) -> None:
        self.body, self.shortcut, self.join, self.body_first = body, shortcut, join, body_first

    def _children(self) -> dict[str, Any]:
        return {"body": self.body, "shortcut": self.shortcut, "join": self.join}

    def apply(self, params: dict[str, Any], x: Any) -> Any:
        a = self.body.apply(params["body"], x)
        b = self.shortcut.apply(params["shortcut"], x)
        return self.join.apply(params["join"], *((a, b) if self.body_first else (b, a)))


class Parallel(_Container):
    """``join(*(branch(x) for branch in branches))``."""

    def __init__(self, branches: list[Any], join: Any) -> None:
        self.branches, self.join = list(branches), join

    def _children(self) -> dict[str, Any]:
        return {**{str(i): b for i, b in enumerate(self.branches)}, "join": self.join}

    def apply(self, params: dict[str, Any], x: Any) -> Any:
        outs = [b.apply(params[str(i)], x) for i, b in enumerate(self.branches)]
        return self.join.apply(params["join"], *outs)


def to_sequential(plan: ImportPlan, **options: Any) -> Sequential:
    """Nested JAX containers for a prepared model (see ``onnxport.to_sequential``)."""
    from onnxport import api
    from onnxport.surgery.blocks import nest

    return nest(plan.model, lambda part, node: api.import_model(part, backend="jax", **options),
                sequential=lambda steps: Sequential(*steps), residual=Residual, parallel=Parallel,
                identity=Identity)


__all__ = ["Identity", "Parallel", "Residual", "Sequential", "to_sequential"]
