"""What a filtered run selects: ``--onnxport-op`` terms and ``--onnxport-package``, strictly.

A term is an ONNX op (``Relu``: any domain; ``ai.onnx.ml::Binarizer`` or ``com.example::MyOp``:
that domain) or an export target (``aten.relu.default``). Every term must select a primitive of a
chosen backend, and a package filter must select at least one primitive: a typo is an error, not
a green run with nothing in it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


class SelectionError(Exception):
    """A filter that selects nothing (the plugin turns it into a pytest usage error)."""


def _norm(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def op_label(domain: str, op: str) -> str:
    """``Relu``, ``ai.onnx.ml::Binarizer``: how results and filters name an op."""
    return f"{domain}::{op}" if domain else op


class Selection:
    """The filter of one run; with no terms and no package it selects everything."""

    def __init__(self, terms: Iterable[str] = (), package: str | None = None) -> None:
        self.terms = sorted(dict.fromkeys(t.strip() for t in terms if t.strip()))
        self.package = package.strip().rstrip(".") if package else None
        self._ops: list[tuple[str | None, str]] = []
        for t in self.terms:
            if "::" in t:
                d, op = t.rsplit("::", 1)
                self._ops.append((_norm(d), op))
            else:
                self._ops.append((None, t))

    @property
    def active(self) -> bool:
        return bool(self.terms or self.package)

    # -- matching -----------------------------------------------------------------------------
    def _op_matches(self, domain: str, op: str) -> bool:
        return any(op == o and (d is None or d == domain) for d, o in self._ops)

    def _in_package(self, prim: Any) -> bool:
        src = getattr(prim, "source", "") or ""
        return self.package is None or src == self.package or src.startswith(self.package + ".")

    def import_selected(self, prim: Any) -> bool:
        """Whether an import primitive is selected."""
        if not self._in_package(prim):
            return False
        return not self.terms or self._op_matches(prim.domain, prim.op_type)

    def export_selected(self, prim: Any) -> bool:
        """Whether an export primitive is selected: by target, or by an op its samples emit."""
        if not self._in_package(prim):
            return False
        if not self.terms:
            return True
        return prim.target in self.terms or any(self._op_matches("", op) for s in prim.samples for op in s.emits)

    def case_selected(self, case: Any, package_ops: set[tuple[str, str]] | None = None) -> bool:
        """Whether a node case is selected: it uses a selected op (and one of the package's ops)."""
        if self.terms and not any(self._op_matches(d, op) for d, op in case.ops):
            return False
        if package_ops is not None and not any(o in package_ops for o in case.ops):
            return False
        return True

    def package_ops(self, reg: Any, backends: Iterable[str]) -> set[tuple[str, str]] | None:
        """The (domain, op) of the package's import primitives; None without a package filter."""
        if self.package is None:
            return None
        return {(p.domain, p.op_type) for b in backends for p in reg.imports(b) if self._in_package(p)}

    # -- strictness ------------------------------------------------------------------------------
    def validate(self, reg: Any, backends: list[str]) -> None:
        """Raise :class:`SelectionError` for a term or package that selects no primitive."""
        imports = [p for b in backends for p in reg.imports(b)]
        exports = [p for b in backends for p in reg.exports(b)]
        where = f"backend(s) {', '.join(backends)}"
        if self.package is not None:
            mine = [p for p in [*imports, *exports] if self._in_package(p)]
            if not mine:
                raise SelectionError(
                    f"--onnxport-package {self.package} selects nothing: no primitive of {where} is defined "
                    f"under {self.package!r} (is the plugin installed? `onnxport ops` lists the sources)"
                )
        for term in self.terms:
            single = Selection([term], self.package)
            if any(single.import_selected(p) for p in imports) or any(single.export_selected(p) for p in exports):
                continue
            names = {op_label(p.domain, p.op_type) for p in imports} | {p.target for p in exports}
            names |= {p.op_type for p in imports}
            close = difflib.get_close_matches(term, sorted(names), n=3, cutoff=0.7)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            scope = f" under package {self.package!r}" if self.package else ""
            raise SelectionError(
                f"--onnxport-op {term} selects nothing: no import primitive, export target or exported op "
                f"of {where}{scope} is named {term!r}{hint}"
            )
