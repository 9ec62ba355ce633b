"""Version adaptation: every node rewritten into the newest form of its op by the registered adapters."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import onnx_ir as ir

from ..errors import ConversionError, ModelError
from ..ir.walk import iter_model_graphs, node_label
from . import spec as _spec
from .registry import Registry

#: node.meta key holding the canonical (newest) schema version after adaptation
VERSION_KEY = "onnxport.version"


# -- adaptation ---------------------------------------------------------------------------
def model_opset(model: ir.Model, domain: str) -> int:
    opsets = model.opset_imports
    domain = _spec.normalize_domain(domain)
    if domain in opsets:
        return opsets[domain]
    if domain == "" and "ai.onnx" in opsets:
        return opsets["ai.onnx"]
    raise ModelError(f"the model imports no opset for domain {domain or 'ai.onnx'!r}")


@dataclasses.dataclass
class AdaptContext:
    """What an adapter may use: the model, constant creation, node replacement."""

    model: ir.Model
    graph: ir.Graph

    def constant(self, array: Any, name: str, dtype: Any = None) -> ir.Value:
        """A new Constant node (inserted at the graph's start) holding ``array``."""
        arr = np.asarray(array, dtype=dtype)
        tensor = ir.tensor(arr, name=name)
        node = ir.node("Constant", inputs=[], attributes={"value": tensor}, name=name)
        node.outputs[0].name = name
        node.outputs[0].const_value = tensor
        node.outputs[0].dtype = tensor.dtype
        node.outputs[0].shape = ir.Shape(arr.shape)
        node.meta[VERSION_KEY] = _spec.latest_version("Constant")
        self.graph.insert_before(self.graph.node(0), node) if len(self.graph) else self.graph.append(node)
        return node.outputs[0]

    def replace(self, node: ir.Node, new_nodes: list[ir.Node], outputs: list[ir.Value | None]) -> None:
        """Put ``new_nodes`` where ``node`` was; ``outputs`` take over the old outputs' uses."""
        self.graph.insert_before(node, new_nodes)
        for old, new in zip(node.outputs, outputs):
            if new is None:
                if old.uses() or old.is_graph_output():
                    raise ModelError(f"adapter dropped output {old.name!r} of {node_label(node)}, which is used")
                continue
            name = old.name
            if new.type is None:
                new.type = old.type
            if new.shape is None:
                new.shape = old.shape
            old.replace_all_uses_with(new, replace_graph_outputs=True)
            old.name = None
            new.name = name
        self.graph.remove(node, safe=True)

    def rebuild(
        self,
        node: ir.Node,
        *,
        inputs: list[ir.Value | None] | None = None,
        attributes: dict[str, Any] | None = None,
        drop: tuple[str, ...] = (),
        version: int | None = None,
        op_type: str | None = None,
    ) -> ir.Node:
        """Replace ``node`` by a copy with new inputs/attributes; names and outputs are kept."""
        attrs = {k: v for k, v in node.attributes.items() if k not in drop}
        for k, v in (attributes or {}).items():
            attrs[k] = v if isinstance(v, ir.Attr) else ir.convenience.convert_attribute(k, v)
        ins = list(node.inputs if inputs is None else inputs)
        while ins and ins[-1] is None:
            ins.pop()
        new = ir.Node(
            node.domain,
            op_type or node.op_type,
            ins,
            attributes=list(attrs.values()),
            num_outputs=len(node.outputs),
            name=node.name,
            doc_string=node.doc_string,
            metadata_props=dict(node.metadata_props),
        )
        new.meta.update(node.meta)
        if version is not None:
            new.meta[VERSION_KEY] = version
        self.replace(node, [new], list(new.outputs))
        return new


def adapt(model: ir.Model, registry: Registry, graphs: list[ir.Graph] | None = None) -> bool:
    """Rewrite every node into the newest form of its op (``node.meta[VERSION_KEY]``); whether
    an adapter ran (the graph may need sorting again). ``graphs``: the model's graphs
    (:func:`iter_model_graphs`), where the caller has them."""
    local = {(f.domain, f.name) for f in model.functions.values()}
    adapted = False
    #: (domain, op type) -> the version of its nodes when no adapter applies to them (one walk per op)
    as_is: dict[tuple[str, str], int] = {}
    for graph in list(iter_model_graphs(model)) if graphs is None else graphs:
        actx = AdaptContext(model, graph)
        for node in list(graph):
            op = (node.domain, node.op_type)
            if local and op in local:
                continue
            known = as_is.get(op)
            if known is not None:
                node.meta[VERSION_KEY] = known
                continue
            domain = _spec.normalize_domain(node.domain)
            opset = model_opset(model, domain)
            if not _spec.has_spec(node.op_type, opset, domain):
                node.meta[VERSION_KEY] = opset
                continue
            version = _spec.get_spec(node.op_type, opset, domain).since_version
            current = node
            found = False
            while True:
                adapter = registry.adapter(domain, current.op_type, version)
                if adapter is not None:
                    found = True
                if adapter is None:
                    versions = _spec.versions(current.op_type, domain)
                    later = [v for v in versions if v > version]
                    if not later:
                        break
                    version = later[0]  # no form change between these versions
                    continue
                adapted = True
                try:
                    result = adapter.fn(current, actx)
                except Exception as exc:
                    raise ConversionError(
                        f"adapting node {node_label(current)} from version {version} failed: {exc}"
                    ) from exc
                previous = current
                current = result if result is not None else current
                if current.op_type != previous.op_type or current.domain != previous.domain:
                    # rewritten into another op: continue from that op's version at this opset
                    domain = _spec.normalize_domain(current.domain)
                    first = _spec.versions(current.op_type, domain)[0]
                    version = _spec.get_spec(current.op_type, max(first, model_opset(model, domain)), domain).since_version
                    continue
                version = adapter.to_version
            current.meta[VERSION_KEY] = version
            if not found:  # no adapter for this op at this opset: its other nodes get the same version
                as_is[(node.domain, node.op_type)] = version
    return adapted
