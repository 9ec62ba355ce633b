"""The decomposition policy: which traced ATen ops are exported as they are, when the program
is decomposed to core ATen first, and the check that every op left has a primitive."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import torch
import torch.fx

from onnxport.errors import UnsupportedOpError

from .export_graph import module_stack, target_name

#: ATen ops kept whole (not decomposed) because one ONNX op expresses them.
KEEP: tuple[str, ...] = (
    "aten.linear.default",
    "aten.matmul.default",
    "aten.layer_norm.default",
    "aten.scaled_dot_product_attention.default",
    "aten.hardswish.default",
    "aten.hardsigmoid.default",
    "aten.upsample_nearest2d.vec",
    "aten.upsample_bilinear2d.vec",
    # adaptive pools: their primitives export a global or evenly dividing pool as one pooling op;
    # decomposed, a global average pool of a channels-last input is a mean plus an ``as_strided``
    # that restores the memory format (no ONNX equivalent)
    "aten.adaptive_avg_pool1d.default",
    "aten.adaptive_avg_pool2d.default",
    "aten._adaptive_avg_pool2d.default",
    "aten.adaptive_avg_pool3d.default",
    "aten._adaptive_avg_pool3d.default",
    "aten.adaptive_max_pool1d.default",
    "aten.adaptive_max_pool2d.default",
    "aten.adaptive_max_pool3d.default",
)

#: Targets the walk handles itself (tuple element access).
DRIVER_TARGETS = {"operator.getitem"}


def iter_fx(gm: torch.fx.GraphModule) -> list[tuple[torch.fx.Node, torch.fx.GraphModule]]:
    """Every node of ``gm`` and of the FX subgraphs it holds (``torch.cond`` branches)."""
    out = []
    for node in gm.graph.nodes:
        out.append((node, gm))
        if node.op == "get_attr":
            sub = getattr(gm, node.target, None)
            if isinstance(sub, torch.fx.GraphModule):
                out.extend(iter_fx(sub))
    return out


def needs_decomposition(ep: torch.export.ExportedProgram, registry: Any,
                        skip: Collection[torch.fx.Node] = ()) -> str | None:
    """Why the training IR in ``ep`` cannot be exported as it is (``None``: it can).

    It can when every op has a primitive and none writes a tensor in place (a training-mode
    batch norm updating its running stats, an in-place op on a buffer): functionalizing those
    is what ``run_decompositions`` does besides decomposing. Nodes in ``skip`` (the
    module-primitive calls) are exported otherwise and not looked at.
    """
    for node, _ in iter_fx(ep.graph_module):
        if node.op != "call_function" or node in skip:
            continue
        name = target_name(node.target)
        if name in DRIVER_TARGETS:
            continue
        schema = getattr(node.target, "_schema", None)
        if schema is not None and schema.is_mutable:
            return f"{name} writes in place"
        if registry.find_export("torch", name) is None:
            return f"{name} has no primitive"
    sig = ep.graph_signature
    if sig.buffers_to_mutate or sig.user_inputs_to_mutate:
        return "the program mutates buffers or inputs"
    return None


def decomposed_away(target: str) -> bool:
    """Whether ``run_decompositions`` replaces ``target`` (so only the training IR has it): an op
    of its table, or one it decomposes through its CompositeImplicitAutograd kernel
    (``aten.batch_norm``, ``aten.dropout`` ...)."""
    packet, _, overload = target.removeprefix("aten.").rpartition(".")
    op = getattr(getattr(torch.ops.aten, packet, None), overload, None)
    if op is None:
        return False
    if op in decomposition_table():
        return True
    return target not in KEEP and torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")


def decomposition_table() -> Any:
    """``torch.export``'s default decompositions, less the ops in :data:`KEEP`."""
    table = torch.export.default_decompositions()
    for name in KEEP:
        packet, _, overload = name.removeprefix("aten.").rpartition(".")
        op = getattr(getattr(torch.ops.aten, packet), overload)
        if op in table:
            table.pop(op)
    return table


def check_supported(ep: torch.export.ExportedProgram, registry: Any, skip: Collection[torch.fx.Node] = ()) -> None:
    """Raise one :class:`UnsupportedOpError` listing every op without a primitive, with paths
    (``skip``: nodes exported otherwise, the module-primitive calls)."""
    from .export_unsupported import UNSUPPORTED

    missing: dict[str, list[str]] = {}
    for node, _ in iter_fx(ep.graph_module):
        if node.op != "call_function" or node in skip:
            continue
        name = target_name(node.target)
        if name in DRIVER_TARGETS or registry.find_export("torch", name) is not None:
            continue
        stack = module_stack(node)
        where = stack[-1][0] if stack and stack[-1][0] else "<root module>"
        paths = missing.setdefault(name, [])
        if where not in paths:
            paths.append(where)
    if not missing:
        return
    lines = []
    for name, paths in sorted(missing.items()):
        shown = ", ".join(repr(p) for p in paths[:6]) + (" ..." if len(paths) > 6 else "")
        reason = UNSUPPORTED.get(name.rsplit(".", 1)[0]) or UNSUPPORTED.get(name)
        lines.append(f"  {name} in {shown}" + (f" ({reason})" if reason else ""))
    raise UnsupportedOpError(
        f"the torch backend cannot export {len(missing)} op(s) of this model:\n" + "\n".join(lines),
        [("torch", name, 0, paths) for name, paths in sorted(missing.items())],
    )
