"""Restore the exporting model's module hierarchy in an imported ``OnnxModule``.

Exporters leave the source model's module tree in three places, read in this order of trust:

1. initializer names: ``layer1.0.conv1.weight`` (both torch.onnx exporters keep parameter names);
2. node metadata of the dynamo exporter: ``pkg.torch.onnx.name_scopes`` = ``['', 'layer1',
   'layer1.0', 'layer1.0.conv1', 'convolution']`` (module paths, then the fx node's name) and
   ``pkg.torch.onnx.class_hierarchy`` (the classes of those modules);
3. node names of the TorchScript exporter: ``/layer1/layer1.0/conv1/Conv``.

After the graph is built, :func:`restore` moves every native layer and every weight of the module
tree to the path the source model had: a weight named like a module path keeps exactly that
``state_dict`` key; a layer whose weights are anonymous (``onnx::Conv_32`` after batch-norm
folding) goes to its node's scope; an anonymous weight read by plain functions goes under the
scope of its users. Intermediate levels become :class:`Scope` containers, indexable where the
source had integer children (``model.layer1[0].conv1``).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch
import torch.fx as fx
from torch import nn

from onnxport.errors import ConversionError
from onnxport.exporting.pipeline import CLASS_HIERARCHY_KEY, NAME_SCOPES_KEY

if TYPE_CHECKING:
    from .import_graph import ImportState
    from .module import OnnxModule

SCOPES_KEY = NAME_SCOPES_KEY
CLASSES_KEY = CLASS_HIERARCHY_KEY

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^[0-9]+$")
# "self" stays allowed: a submodule called self (BERT's attention.self) is reached as self.self in fx code
_RESERVED = set(dir(nn.Module)) | set(vars(nn.Module())) | {"graph", "code", "meta", "forward", "onnx_constants"}


class Scope(nn.Module):
    """A level of the restored hierarchy: holds the layers and weights of one source module.

    It is a namespace, not a block: the imported graph calls the layers inside it directly.
    Integer-named children are reachable by index (``scope[0]``, ``scope[-1]``) and iteration,
    as in the ``nn.Sequential``/``nn.ModuleList`` the source had.
    """

    def __init__(self, path: str = "", original_class: str | None = None) -> None:
        super().__init__()
        self.scope_path = path
        #: the source module's class, when the exporter recorded it (dynamo exporter)
        self.original_class = original_class

    def _indexed(self) -> list[str]:
        return sorted((k for k in self._modules if k.isdigit()), key=int)

    def __getitem__(self, idx: int | str) -> nn.Module:
        if isinstance(idx, str):
            if idx in self._modules:
                return self._modules[idx]  # type: ignore[return-value]
            raise KeyError(f"scope {self.scope_path!r} has no child {idx!r}")
        keys = self._indexed()
        if isinstance(idx, int) and idx < 0:
            if -idx > len(keys):
                raise IndexError(f"index {idx} out of range for scope {self.scope_path!r} ({len(keys)} items)")
            idx = int(keys[idx])
        key = str(idx)
        if key not in self._modules:
            raise IndexError(
                f"scope {self.scope_path!r} has no child {key} (children: {list(self._modules)})"
            )
        return self._modules[key]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._indexed())

    def __iter__(self) -> Iterator[nn.Module]:
        return iter(self._modules[k] for k in self._indexed())  # type: ignore[misc]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise ConversionError(
            f"scope {self.scope_path or '<root>'!r} is a namespace of the imported graph, not a "
            "callable block: call the whole model, or cut the part you need with onnxport.extract"
        )

    def extra_repr(self) -> str:
        return f"original={self.original_class}" if self.original_class else ""

    def _get_name(self) -> str:
        return "Scope"


# -- reading scopes --------------------------------------------------------------------------
def _join(scopes: list[str]) -> list[str]:
    """Absolute module paths from scope names that are absolute (``layer1.0``) or relative (``conv1``)."""
    out: list[str] = []
    current = ""
    for s in scopes:
        if not s:
            continue
        if not current or s == current or s.startswith(current + "."):
            current = s
        else:
            current = f"{current}.{s}"
        out.append(current)
    return out


def _parse_list(text: str) -> list[str] | None:
    try:
        value = ast.literal_eval(text)  # a literal only: model files are untrusted input
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(s, str) for s in value):
        return list(value)
    return None


def node_scopes(name: str | None, metadata: dict[str, str] | None) -> list[tuple[str, str | None]]:
    """The module scopes an ONNX node was exported from, outermost first: ``[(path, class)]``.

    Empty when the model carries no scope information for the node.
    """
    metadata = metadata or {}
    if SCOPES_KEY in metadata:
        scopes = _parse_list(metadata[SCOPES_KEY])
        if scopes:
            classes = _parse_list(metadata.get(CLASSES_KEY, "")) or []
            # the last entry is the fx node itself, not a module
            mods = scopes[:-1]
            paths: list[tuple[str, str | None]] = []
            current = ""
            for i, s in enumerate(mods):
                if not s:
                    continue
                current = s if (not current or s.startswith(current + ".")) else f"{current}.{s}"
                paths.append((current, classes[i] if i < len(classes) else None))
            return paths
    if name and name.startswith("/"):
        parts = [p for p in name.split("/")[1:-1] if p]
        return [(p, None) for p in _join(parts)]
    return []


def _clean(path: str) -> bool:
    """Whether ``path`` can be a module path as it is (``layer1.0.conv1.weight``)."""
    parts = path.split(".")
    return all(_IDENT.match(p) and p not in _RESERVED and not _keyword(p) and not p.startswith("_onnx") for p in parts)


def _keyword(name: str) -> bool:
    return keyword.iskeyword(name) or keyword.issoftkeyword(name)


def _sanitize(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_]", "_", name) or "_"
    if s in _RESERVED or s.isdigit() or _keyword(s):
        s = f"{s}_"
    return s


# -- placing -------------------------------------------------------------------------------
class _Tree:
    """Paths handed out so far: leaves (modules, tensors) and the scopes above them."""

    def __init__(self) -> None:
        self.leaves: dict[str, Any] = {}
        self.scopes: set[str] = set()
        self._next: dict[str, int] = {}  # base -> the next suffix to try (many claims of one base stay linear)

    def _free(self, path: str) -> bool:
        if path in self.leaves or path in self.scopes:
            return False
        parts = path.split(".")
        return not any(".".join(parts[:i]) in self.leaves for i in range(1, len(parts)))

    def claim(self, path: str, obj: Any) -> str:
        base, k = path, self._next.get(path, 1)
        while not self._free(path):
            path = f"{base}_{k}"
            k += 1
        if path != base:
            self._next[base] = k
        self.leaves[path] = obj
        parts = path.split(".")
        self.scopes.update(".".join(parts[:i]) for i in range(1, len(parts)))
        return path


def _common_scope(fx_nodes: list[fx.Node]) -> tuple[str, list[tuple[str, str | None]]]:
    """The deepest scope shared by the ONNX nodes behind ``fx_nodes`` ('' when none)."""
    chains = []
    for n in fx_nodes:
        chain = node_scopes(n.meta.get("onnx_node"), n.meta.get("onnx_metadata"))
        if not chain:
            return "", []
        chains.append(chain)
    if not chains:
        return "", []
    common = chains[0]
    for c in chains[1:]:
        k = 0
        while k < min(len(common), len(c)) and common[k][0] == c[k][0]:
            k += 1
        common = common[:k]
    return (common[-1][0] if common else ""), common


def restore(module: OnnxModule, state: ImportState, graph: fx.Graph) -> None:
    """Place the layers and weights ``graph`` reads from the import's module tree (``state.root``)
    in ``module`` (which holds none yet), at the paths of the exporting model's modules.

    Retargets ``graph`` (the caller then gives it to ``module``), builds the module tree with
    :class:`Scope` levels, and updates ``module.initializer_keys``. A model without names or scope
    information keeps its layout.
    """
    # ONNX name and kind of every tensor the import created from an initializer or constant
    names: dict[int, str] = {}
    kinds: dict[int, str] = {}
    for v, t in state.static.items():
        kind = state.kinds.get(v)
        if kind is not None and v.name:
            names.setdefault(id(t), v.name)
            kinds.setdefault(id(t), kind)

    source = state.root
    tree = _Tree()
    classes: dict[str, str] = {}
    placed: dict[str, str] = {}  # old target -> new path
    objects: dict[str, Any] = {}  # new path -> object
    modules: list[fx.Node] = [n for n in graph.nodes if n.op == "call_module"]
    attrs: list[fx.Node] = [n for n in graph.nodes if n.op == "get_attr"]

    def note_classes(chain: list[tuple[str, str | None]]) -> None:
        for p, c in chain:
            if c and p not in classes:
                classes[p] = c

    # 1. layers whose weights carry their source path (exact state_dict keys), then by scope
    pending: list[tuple[fx.Node, nn.Module]] = []
    for n in modules:
        if n.target in placed:
            continue
        mod = source.get_submodule(str(n.target))
        wanted = None
        if isinstance(mod, fx.GraphModule) and _clean(str(n.target)):
            wanted = str(n.target)  # a kept ONNX function, shared by its call sites: stays apart
        for key, t in list(mod.named_parameters()) + list(mod.named_buffers()):
            onnx_name = names.get(id(t))
            if onnx_name and onnx_name.endswith("." + key) and _clean(onnx_name):
                wanted = onnx_name[: -len(key) - 1]
                break
        scope, chain = _common_scope([n])
        note_classes(chain)
        if wanted is None:
            pending.append((n, mod))
            continue
        path = tree.claim(wanted, mod)
        placed[str(n.target)] = path
        objects[path] = mod
    # tensors named like paths, before anything anonymous takes their place
    anonymous: list[fx.Node] = []
    owned = {id(t): f"{p}.{k}" for p, m in objects.items() for k, t in
             list(m.named_parameters()) + list(m.named_buffers())}
    for n in attrs:
        if n.target in placed:
            continue
        t = _attr_tensor(source, str(n.target))
        onnx_name = names.get(id(t))
        if id(t) in owned:  # the same tensor is already a layer's weight: read it from there
            placed[str(n.target)] = owned[id(t)]
            continue
        if _is_state(t, kinds.get(id(t), "const")) and onnx_name and _clean(onnx_name):
            path = tree.claim(onnx_name, t)
            placed[str(n.target)] = path
            objects[path] = t
        else:
            anonymous.append(n)
    # 2. anonymous layers: the scope of their node
    for n, mod in pending:
        scope, _ = _common_scope([n])
        if scope and _clean(scope):
            path = tree.claim(scope, mod)
        else:
            path = tree.claim(_fallback(str(n.target)), mod)
        placed[str(n.target)] = path
        objects[path] = mod
        for key, t in list(mod.named_parameters()) + list(mod.named_buffers()):
            owned.setdefault(id(t), f"{path}.{key}")
    # 3. anonymous weights and constants: under the scope all their users share
    for n in anonymous:
        target = str(n.target)
        t = _attr_tensor(source, target)
        if id(t) in owned:
            placed[target] = owned[id(t)]
            continue
        kind = kinds.get(id(t), "const")
        onnx_name = names.get(id(t)) or target.rsplit(".", 1)[-1]
        leaf = _sanitize(onnx_name)
        if kind == "const" or not _is_state(t, kind):
            path = tree.claim(f"onnx_constants.{leaf}", t)
        else:
            scope, chain = _common_scope(list(n.users))
            note_classes(chain)
            path = tree.claim(f"{scope}.{leaf}" if scope and _clean(scope) else leaf, t)
        placed[target] = path
        objects[path] = t
        owned[id(t)] = path

    # build the tree: Scope levels, the import's objects, buffers persistent where they are state
    # registration order = first use in the graph, so state_dict() reads like the forward pass
    pos = {n: i for i, n in enumerate(graph.nodes)}
    rank: dict[str, int] = {}
    for n in modules + attrs:
        p = placed[str(n.target)]
        while p not in objects and "." in p:
            p = p.rsplit(".", 1)[0]
        rank.setdefault(p, pos[n])
    for path in sorted(objects, key=lambda p: rank.get(p, 1 << 30)):
        obj = objects[path]
        *parents, last = path.split(".")
        parent: nn.Module = module
        walked: list[str] = []
        for p in parents:
            walked.append(p)
            child = parent._modules.get(p)
            if child is None:
                child = Scope(".".join(walked), classes.get(".".join(walked)))
                parent.add_module(p, child)
            parent = child
        if isinstance(obj, nn.Module):
            parent.add_module(last, obj)
        elif isinstance(obj, nn.Parameter):
            parent.register_parameter(last, obj)
        else:
            parent.register_buffer(last, obj, persistent=_is_state(obj, kinds.get(id(obj), "const")))
    for n in modules + attrs:
        n.target = placed[str(n.target)]

    # initializer name -> state_dict key, read from where each tensor now lives
    where: dict[int, str] = {}
    for key, t in module.state_dict(keep_vars=True).items():
        where.setdefault(id(t), key)
    weights = {}
    for v, t in state.static.items():
        kind = state.kinds.get(v)
        if v.name and id(t) in where and (kind in ("param", "buffer") or (
                kind == "const" and not where[id(t)].startswith("onnx_constants."))):  # a layer's state
            weights[v.name] = where[id(t)]
    module._onnx_info["weights"] = weights


def _is_state(t, kind: str) -> bool:
    """Whether a tensor outside any layer belongs in ``state_dict()``.

    Parameters and frozen float weights do. Integer/bool tensors and scalars are settings of the
    graph (shapes, axes, indices, fill values): non-persistent buffers, so the exporting model's
    ``state_dict`` loads strictly and the keys stay those of its weights.
    """
    if kind == "param":
        return True
    return kind == "buffer" and t.is_floating_point() and t.dim() >= 1


def _attr_tensor(module: nn.Module, target: str) -> torch.Tensor:
    """The parameter or buffer a ``get_attr`` node reads (looked up once)."""
    owner_path, _, name = target.rpartition(".")
    owner = module.get_submodule(owner_path) if owner_path else module
    found = owner._parameters.get(name)
    if found is None:
        found = owner._buffers.get(name)
    return found if found is not None else module.get_buffer(target)  # get_buffer names what is missing


def _fallback(target: str) -> str:
    """A layer without scope information keeps its name, flattened to one level."""
    return _sanitize(target.replace(".", "_"))


__all__ = ["CLASSES_KEY", "SCOPES_KEY", "Scope", "node_scopes", "restore"]
