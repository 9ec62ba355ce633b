"""An ONNX graph as nested Keras containers: one imported step per node, residual blocks nested.

Each step is the node's own sub-model (cut by the core's :func:`onnxport.edit.surgery.blocks.nest`)
imported as a :class:`~onnxport_tensorflow.TfModel` and wrapped as a Keras layer. A chain is a
``keras.Sequential``; a block whose branches rejoin is a :class:`Residual` (body, shortcut,
join) or a :class:`Parallel` (branches, join). An initializer that several nodes read is one
variable, shared by their steps, so ``keras.Model.fit`` trains it once.
"""

from __future__ import annotations

import re
from typing import Any

import keras

from onnxport.importing.plan import ImportPlan


class Residual(keras.layers.Layer):
    """``join(body(x), shortcut(x))`` in the ONNX node's operand order; ``shortcut`` may be ``keras.layers.Identity``."""

    def __init__(self, body: Any, shortcut: Any, join: Any, body_first: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.body, self.shortcut, self.join, self.body_first = body, shortcut, join, body_first
        self.built = True

    def call(self, x: Any) -> Any:
        a, b = self.body(x), self.shortcut(x)
        return self.join(a, b) if self.body_first else self.join(b, a)


class Parallel(keras.layers.Layer):
    """``join(*(branch(x) for branch in branches))``: multi-branch blocks, concatenations."""

    def __init__(self, branches: list[Any], join: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.branches, self.join = list(branches), join
        self.built = True

    def call(self, x: Any) -> Any:
        return self.join(*(b(x) for b in self.branches))


class _Names:
    """Unique Keras layer names from ONNX node names (sanitised: names come from the file)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, base: str) -> str:
        name = re.sub(r"[^A-Za-z0-9_]", "_", base)[:64].strip("_") or "step"
        if not name[0].isalpha():
            name = "n_" + name
        out, i = name, 1
        while out in self.seen:
            i += 1
            out = f"{name}_{i}"
        self.seen.add(out)
        return out


def to_sequential(plan: ImportPlan, **options: Any) -> keras.Sequential:
    """Nested Keras containers for a prepared model (see ``onnxport.to_sequential``)."""
    from onnxport import api
    from onnxport.edit.surgery.blocks import nest

    from .keras import OnnxLayer

    names = _Names()
    shared: dict[str, Any] = {}  # initializer name -> tf.Variable, one per name across steps
    adopted: dict[int, Any] = {}  # id(tf.Variable) -> keras.Variable, one per variable across layers

    def step(part: Any, node: Any) -> Any:
        model = api.import_model(part, backend="tensorflow", **options)
        for key, var in list(model.weights.items()):
            if key in shared and shared[key].shape == var.shape and shared[key].dtype == var.dtype:
                model.weights[key] = shared[key]
            else:
                shared.setdefault(key, var)
        return OnnxLayer(model, name=names(node.name or node.op_type), adopted=adopted)

    def sequential(steps: list[Any]) -> keras.Sequential:
        return keras.Sequential(steps, name=names("sequential"))

    return nest(
        plan.model, step, sequential=sequential,
        residual=lambda body, short, join, first: Residual(body, short, join, first, name=names("residual")),
        parallel=lambda branches, join: Parallel(branches, join, name=names("parallel")),
        identity=lambda: keras.layers.Identity(name=names("identity")),
    )


__all__ = ["Parallel", "Residual", "to_sequential"]
