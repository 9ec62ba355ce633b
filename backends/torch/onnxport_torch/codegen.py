"""The Python source of an imported graph's ``forward``, written in one pass.

``fx.GraphModule`` writes its ``forward`` with ``Graph.python_code``, which is general (type
annotations, stack-trace comments, pytree calling conventions, magic-method operators, a renaming
pass over every node) and, on a graph of 10,000 nodes, takes as long as the rest of the import's
graph building. :class:`ImportGraph` writes the same program for the nodes an import builds: one
statement per node, named after the node, each value set to ``None`` after its last use (as fx
frees it), and the same line -> node map for error messages. Anything else (another node kind or
argument type, a code generator other than fx's plain one, an option such as
``verbose``/``colored`` for ``print_readable``, fx's ``FX_GRAPH_SHOW_*`` variables) goes to fx.
"""

from __future__ import annotations

import keyword
import math
import operator
import os
from typing import Any

import torch
import torch.fx as fx
from torch.fx.graph import CodeGen, PythonCode
from torch.fx.immutable_collections import immutable_list

#: constants written with ``repr`` (their repr is Python source that rebuilds them)
_PLAIN = (bool, int, str, type(None), torch.dtype)
#: the names fx's own code may use that the program needs too
_BUILTINS = {"torch": torch, "inf": math.inf, "nan": math.nan, "NoneType": type(None), "device": torch.device}
_ENV = ("FX_GRAPH_SHOW_STRIDE", "FX_GRAPH_SHOW_DEVICE", "FX_GRAPH_SHOW_META")


class _Unsupported(Exception):
    """A node or argument this writer does not handle: fx's writer takes the graph."""


class ImportGraph(fx.Graph):
    """An ``fx.Graph`` whose ``python_code`` has a one-pass writer for the nodes an import builds."""

    def python_code(self, root_module: str, **options: Any) -> PythonCode:
        if (type(self._codegen) is CodeGen and not any(options.values())
                and not any(os.environ.get(k, "0") == "1" for k in _ENV)):
            try:
                return _write(list(self.nodes), root_module, self._codegen)
            except _Unsupported:
                pass
        return super().python_code(root_module, **options)


def _write(nodes: list[fx.Node], root: str, codegen: CodeGen) -> PythonCode:
    names = {n.name for n in nodes}
    if root in names or any(k in names for k in _BUILTINS):
        raise _Unsupported
    prefix = "_fn"
    while any(name.startswith(prefix) for name in names):
        prefix += "_"
    globals_: dict[str, Any] = dict(_BUILTINS)
    global_of: dict[int, str] = {}

    def function(f: Any) -> str:  # the global a call target is read from: _fn_<its name>
        key = id(f)
        name = global_of.get(key)
        if name is None:
            base = getattr(f, "__name__", "")
            name = f"{prefix}_{base}" if type(base) is str and base.isidentifier() else prefix
            if name in globals_:  # another callable of that name (unnamed nodes of one op)
                k = len(global_of)
                while f"{name}_{k}" in globals_:
                    k += 1
                name = f"{name}_{k}"
            global_of[key] = name
            globals_[name] = f
        return name

    def arg(a: Any) -> str:
        t = type(a)
        if t is fx.Node:
            return a.name
        if t in _PLAIN:
            return repr(a)
        if t is float:
            return repr(a) if math.isfinite(a) else ("nan" if a != a else ("inf" if a > 0 else "-inf"))
        if t is tuple:
            return f"({arg(a[0])},)" if len(a) == 1 else "(" + ", ".join([arg(x) for x in a]) + ")"
        if t is list or t is immutable_list:
            return "[" + ", ".join([arg(x) for x in a]) + "]"
        if t is slice:
            return f"slice({arg(a.start)}, {arg(a.stop)}, {arg(a.step)})"
        raise _Unsupported

    def call_args(n: fx.Node) -> str:
        parts = [arg(a) for a in n.args]
        for k, v in n.kwargs.items():
            parts.append(f"{k} = {arg(v)}")
        return ", ".join(parts)

    # the statement after which each value is dead: its last reader, or itself when unread
    frees: dict[fx.Node, list[str]] = {}
    seen: set[fx.Node] = set()
    for n in reversed(nodes):
        for i in n.all_input_nodes:
            if i not in seen:
                seen.add(i)
                frees.setdefault(n, []).append(i.name)
    free_vars: list[str] = []
    lines: list[str] = []
    index: list[int] = []
    for k, n in enumerate(nodes):
        op, name = n.op, n.name
        if op == "placeholder":
            target = n.target
            if n.args or type(target) is not str or not target.isidentifier():
                raise _Unsupported
            free_vars.append(target)
            if target != name:
                lines.append(f"{name} = {target}")
                index.append(k)
            continue
        if op == "output":
            lines.append(f"return {arg(n.args[0])}")
            index.append(k)
            continue
        if n.type is not None:
            raise _Unsupported  # an annotation fx would write
        if op == "call_function":
            target = n.target
            if target is operator.getitem and len(n.args) == 2 and not n.kwargs:
                line = f"{name} = {arg(n.args[0])}[{arg(n.args[1])}]"
            else:
                line = f"{name} = {function(target)}({call_args(n)})"
        elif op == "call_module":
            line = f"{name} = {_target(root, n.target)}({call_args(n)})"
        elif op == "get_attr":
            line = f"{name} = {_target(root, n.target)}"
        else:
            raise _Unsupported
        dead = frees.get(n)
        if not n.users:
            dead = (dead or []) + [name]
        if dead:
            line += ";  " + " = ".join(dead) + " = None"
        lines.append(line)
        index.append(k)
    prologue = codegen.gen_fn_def(free_vars, "")
    start = prologue.count("\n") + 1
    lineno_map: dict[int, int | None] = {start + i: k for i, k in enumerate(index)}
    body = "\n".join(["    " + line for line in lines]) if lines else "    pass"
    src = f"\n\n\n{prologue}\n{body}"
    try:  # fx's layout: the prologue on line 4
        return PythonCode(src, globals_, _lineno_map=lineno_map, _prologue_start=4)
    except TypeError:  # an fx without the prologue field
        return PythonCode(src, globals_, _lineno_map=lineno_map)


def _target(root: str, target: Any) -> str:
    """``self.a.b``, with ``getattr`` for a path part that is no identifier."""
    if type(target) is not str:
        raise _Unsupported
    out = root
    for part in target.split("."):
        plain = part.isidentifier() and not keyword.iskeyword(part)
        out = f"{out}.{part}" if plain else f"getattr({out}, {part!r})"
    return out


__all__ = ["ImportGraph"]
