"""Declared options: what each backend (and the core) accepts as import and export options, and
the one check that refuses an unknown name or a value outside the accepted ones.

A backend declares its options once, on its class (:attr:`onnxport.plugin.backend.Backend.import_options`,
:attr:`onnxport.plugin.backend.Exporter.export_options`), as :class:`Option` objects; the core adds its own
import options (:data:`CORE_IMPORT_OPTIONS`) and checks every call (:func:`check`) before a backend
sees it: ``import_model``, ``prepare``, ``export_model``, ``convert``, ``to_sequential`` and the CLI's
``--option NAME=VALUE`` flags (parsed by :meth:`Option.parse`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InputError

__all__ = ["ANY", "CORE_IMPORT_OPTIONS", "Option", "check", "common_export_options", "describe", "parse_assignments"]


class _Any:
    """Marker of an option that takes any value (a pytree, a callable ...)."""

    def __repr__(self) -> str:
        return "any value"


#: put in :attr:`Option.accepts`: every value is accepted
ANY = _Any()


@dataclasses.dataclass(frozen=True)
class Option:
    """One option a backend (or the core) accepts.

    :param name: the keyword (``import_model(..., name=value)``).
    :param doc: what it does, one sentence.
    :param accepts: the accepted values: types (``bool``, ``int`` ...; ``bool`` is no ``int``
        here), literal values (``"auto"``, ``None``) or :data:`ANY`.
    :param default: the value used when the option is not given (documentation and the CLI).
    """

    name: str
    doc: str
    accepts: tuple[Any, ...] = (ANY,)
    default: Any = None

    def allows(self, value: Any) -> bool:
        """Whether ``value`` is one of the accepted values."""
        for acc in self.accepts:
            if acc is ANY:
                return True
            if isinstance(acc, type):
                if acc is int and isinstance(value, bool):
                    continue
                if acc is float and isinstance(value, bool):
                    continue
                if isinstance(value, acc) or (acc is float and isinstance(value, int)):
                    return True
                if _is_numpy_scalar_of(value, acc):
                    return True
            elif value is acc or (type(value) is type(acc) and value == acc):
                return True
        return False

    def accepted(self) -> str:
        """The accepted values, as an error message lists them."""
        return " | ".join(acc.__name__ if isinstance(acc, type) else repr(acc) for acc in self.accepts)

    def parse(self, text: str) -> Any:
        """The value a command-line ``NAME=text`` gives this option; raises :class:`InputError`
        when ``text`` is none of the accepted values."""
        for acc in self.accepts:  # literal values first: trainable=none is the string
            if not isinstance(acc, type) and acc is not ANY:
                if acc is None and text.lower() in ("none", "null"):
                    return None
                if isinstance(acc, bool) and text.lower() == str(acc).lower():
                    return acc
                if str(acc) == text:
                    return acc
        for acc in self.accepts:
            if acc is bool:
                low = text.lower()
                if low in ("true", "1", "yes", "on"):
                    return True
                if low in ("false", "0", "no", "off"):
                    return False
            elif acc in (int, float):
                try:
                    return acc(text)
                except ValueError:
                    pass
            elif acc is str or acc is ANY:
                return text
        raise InputError(f"option {self.name!r} cannot be {text!r}; accepted: {self.accepted()}")


def _is_numpy_scalar_of(value: Any, acc: type) -> bool:
    import numpy as np

    if acc is bool:
        return isinstance(value, np.bool_)
    if acc is int:
        return isinstance(value, np.integer)
    if acc is float:
        return isinstance(value, (np.floating, np.integer))
    return False


#: the import options the core itself reads (every backend accepts them)
CORE_IMPORT_OPTIONS: tuple[Option, ...] = (
    Option("keep_functions", "model-local functions stay functions (None: the backend's default)",
           (bool, None), None),
    Option("infer_shapes", "run ONNX shape inference before building", (bool,), True),
    Option("strict", "shape inference errors are model errors", (bool,), True),
)


def common_export_options(*names: str) -> tuple[Option, ...]:
    """The core's export options (:class:`onnxport.exporting.pipeline.ExportOptions`) named ``names`` (all
    when none), as :class:`Option` objects an exporter includes in its declaration."""
    table = {
        "opset": Option("opset", "the default-domain opset of the exported model", (int, None), None),
        "optimize": Option("optimize", "fold constants and static shapes, drop no-ops", (bool,), True),
        "fold_batchnorm": Option("fold_batchnorm", "fold inference BatchNormalization into the Conv before it",
                                 (bool,), False),
        "functions": Option("functions", "export repeated modules / nested calls as model-local functions",
                            (bool,), False),
        "fuse": Option("fuse", "rewrite decomposed layers into the ONNX ops that name them (None: the "
                       "exporter's default)", (bool, None), None),
        "input_names": Option("input_names", "names of the graph inputs, in order", (list, tuple, None), None),
        "output_names": Option("output_names", "names of the graph outputs, in order", (list, tuple, None), None),
    }
    if not names:
        return tuple(table.values())
    return tuple(table[n] for n in names)


def check(given: Mapping[str, Any], declared: Iterable[Option], *, what: str) -> None:
    """Refuse an option ``given`` that ``declared`` does not name, or whose value it does not
    accept, with an :class:`InputError` naming it and listing the accepted ones.

    :param what: how the message names the options (``"import option of backend 'torch'"``).
    """
    table = {o.name: o for o in declared}
    for name, value in given.items():
        opt = table.get(name)
        if opt is None:
            close = difflib.get_close_matches(name, list(table), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(f"unknown {what} {name!r}{hint}; accepted: {', '.join(sorted(table)) or 'none'}")
        if not opt.allows(value):
            raise InputError(f"{what} {name!r} cannot be {value!r}; accepted: {opt.accepted()}")


def describe(declared: Iterable[Option]) -> str:
    """One line per option: ``name: accepted values (default ...) - doc``."""
    return "\n".join(f"{o.name}: {o.accepted()} (default {o.default!r}) - {o.doc}"
                     for o in sorted(declared, key=lambda o: o.name))


def parse_assignments(items: Sequence[str], declared: Iterable[Option], *, what: str) -> dict[str, Any]:
    """The options of command-line ``NAME=VALUE`` items, each value parsed by its declaration;
    an unknown name or a value none of the accepted ones is an :class:`InputError`."""
    table = {o.name: o for o in declared}
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise InputError(f"{what} {item!r} is not NAME=VALUE")
        if name not in table:
            check({name: None}, table.values(), what=what)  # the unknown-name message
        out[name] = table[name].parse(text.strip())
    check(out, table.values(), what=what)
    return out
