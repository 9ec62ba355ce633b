"""What only the testkit asks of a backend, apart from the production contract
(:mod:`onnxport.plugin.backend`): its own variants of the node cases and its hooks around export
samples. A backend mixes :class:`TestkitSupport` into its class where it overrides any of them;
:func:`testkit_part` gives the testkit the defaults for one that does not."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import onnx_ir as ir

from .backend import NotSupportedError

__all__ = ["TestkitSupport", "testkit_part"]


class TestkitSupport:
    """The testkit's hooks into a backend, each with a default (see the module docstring)."""

    __test__ = False  # not a pytest test class

    #: every name :meth:`case_variants` may return (expected-failure keys are reviewed against it)
    variant_names: ClassVar[tuple[str, ...]] = ()

    # -- node cases ---------------------------------------------------------------------------------
    def case_variants(self, model: Any) -> list[str]:
        """Names of the backend's own variants of a node case (``model``: its ONNX model), run
        by the testkit through :meth:`run_variant` (default: none)."""
        return []

    def variant_import_options(self, variant: str) -> dict[str, Any]:
        """The import options a case is imported with for the backend's ``variant`` (default: none)."""
        return {}

    def run_variant(self, variant: str, imported: Any, inputs: list[np.ndarray]) -> list[Any]:
        """Run an imported object on numpy inputs as the backend's ``variant`` (see
        :meth:`case_variants`) calls it; the outputs as numpy."""
        raise NotSupportedError(f"backend {getattr(self, 'name', '?')!r} has no case variant {variant!r}")

    # -- export samples -----------------------------------------------------------------------------
    def prepare_export_sample(self, sample: Any, target: str | None = None) -> tuple[Any, dict[str, Any]]:
        """The sample to trace for the export primitive of ``target`` and extra export options
        (default: as declared, no options)."""
        return sample, {}

    def check_exported_sample(self, prim: Any, sample: Any, model: ir.Model) -> None:
        """Extra checks of an exported sample (default: none); raises AssertionError."""
        return None

    def check_roundtrip(self, sample: Any, imported: Any) -> None:
        """Extra checks of import(export(sample)) (default: none); raises AssertionError."""
        return None


_DEFAULTS = TestkitSupport()


def testkit_part(backend: Any) -> TestkitSupport:
    """``backend``'s testkit hooks: the backend itself where it mixes in :class:`TestkitSupport`,
    else the defaults."""
    return backend if isinstance(backend, TestkitSupport) else _DEFAULTS
