"""Facts about ONNX ops that the import plan, the optimizer and every backend rely on, declared
once, per op: which ops draw random values, which are never evaluated ahead of time, and which
inputs are settings or running statistics rather than weights to train.

Add a fact here (one :class:`OpFacts` entry), not in a list of a backend or a pass; the sets
below are derived from :data:`FACTS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class OpFacts:
    """What the core knows about one op beyond its schema.

    :param random: draws random values (never folded; backends give it a PRNG source).
    :param no_fold: never evaluated ahead of time (random, mode-dependent or running subgraphs).
    :param settings: input indices where a float initializer is a setting (a scale, a bound,
        a fill value), not a weight to train.
    :param statistics: input indices holding running statistics (updated by the op in training
        mode, not by gradients).
    """

    random: bool = False
    no_fold: bool = False
    settings: tuple[int, ...] = ()
    statistics: tuple[int, ...] = ()


_RANDOM = OpFacts(random=True, no_fold=True)
_SUBGRAPH = OpFacts(no_fold=True)

#: op type (default domain) -> its facts
FACTS: Mapping[str, OpFacts] = {
    "RandomNormal": _RANDOM,
    "RandomUniform": _RANDOM,
    "RandomNormalLike": _RANDOM,
    "RandomUniformLike": _RANDOM,
    "Bernoulli": _RANDOM,
    "Multinomial": _RANDOM,
    "Dropout": OpFacts(random=True, no_fold=True, settings=(1,)),
    "If": _SUBGRAPH,
    "Loop": _SUBGRAPH,
    "Scan": _SUBGRAPH,
    "SequenceMap": _SUBGRAPH,
    "Resize": OpFacts(settings=(1, 2)),
    "Upsample": OpFacts(settings=(1,)),
    "Clip": OpFacts(settings=(1, 2)),
    "Pad": OpFacts(settings=(2,)),
    "ConstantOfShape": OpFacts(settings=(0,)),
    "Range": OpFacts(settings=(0, 1, 2)),
    "BatchNormalization": OpFacts(statistics=(3, 4)),
}

#: ops that draw random values
RANDOM_OPS: frozenset[str] = frozenset(op for op, f in FACTS.items() if f.random)
#: ops never evaluated ahead of time: random, mode-dependent, or running subgraphs
NO_FOLD_OPS: frozenset[str] = frozenset(op for op, f in FACTS.items() if f.no_fold)
#: (op_type, input index) where a float initializer is a setting, not a weight to train
SETTING_INPUTS: frozenset[tuple[str, int]] = frozenset(
    (op, i) for op, f in FACTS.items() for i in f.settings
)
#: (op_type, input index) holding running statistics (BatchNormalization's mean and variance)
STATISTICS_INPUTS: frozenset[tuple[str, int]] = frozenset(
    (op, i) for op, f in FACTS.items() for i in f.statistics
)


def facts(op_type: str, domain: str = "") -> OpFacts:
    """The facts of an op (none for custom-domain ops and ops without entries)."""
    return FACTS.get(op_type, OpFacts()) if domain in ("", "ai.onnx") else OpFacts()


# -- facts an exporter writes on initializers ----------------------------------------------------
#: ``metadata_props`` key of an initializer: ``"false"`` marks state that is no weight to train
#: (batch-norm statistics, constants a function closes over beside its params, folded constants)
TRAINABLE_KEY = "onnxport.trainable"


def mark_not_trainable(value: Any) -> None:
    """Mark initializer ``value`` (an ``onnx_ir.Value``) as no trainable weight for importers."""
    value.metadata_props[TRAINABLE_KEY] = "false"


def marked_not_trainable(value: Any) -> bool:
    """Whether an exporter marked initializer ``value`` as no trainable weight."""
    return value.metadata_props.get(TRAINABLE_KEY) == "false"
