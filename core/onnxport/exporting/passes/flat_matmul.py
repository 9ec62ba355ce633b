"""A MatMul between flattening Reshapes is one MatMul: ``Reshape(MatMul(Reshape(x, [P, K]), W), S)``.

Frameworks whose dense layer multiplies 2-D matrices only (TensorFlow's ``Tensordot``, which
Keras ``Dense`` uses on inputs of rank 3 and more) flatten the leading dims of ``x [..., K]``,
multiply by ``W [K, N]`` and restore the leading dims, computing both shapes at run time
(``Shape -> Gather -> ReduceProd -> Concat``) when a dim is symbolic. ONNX MatMul broadcasts
over leading dims, so the chain is ``MatMul(x, W)`` when the restored shape is ``x``'s leading
dims plus ``N``. That is proved from the values' shapes: every leading dim of the result equals
``x``'s (the same integer, or the same named symbolic dim), except at most one position where
both are unknown, which the element count then fixes (the result has ``P * N`` elements,
``P`` the product of ``x``'s leading dims). The flattened value need not have a known second
dim: rank 2 and read by a MatMul with ``W [K, N]``, it is ``[P, K]``. Framework-free; :func:`onnxport.exporting.passes.optimize.optimize`
applies it.
"""

from __future__ import annotations

import onnx_ir as ir


def _sole_reader(v: ir.Value, node: ir.Node) -> bool:
    uses = list(v.uses())
    return len(uses) == 1 and uses[0].node is node and not v.is_graph_output()


def _same_dim(a: object, b: object) -> bool | None:
    """True when dims ``a`` and ``b`` are provably equal, False when provably not, None unknown."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    name_a, name_b = getattr(a, "value", None), getattr(b, "value", None)
    if isinstance(name_a, str) and name_a == name_b:
        return True
    return None if not isinstance(a, int) and not isinstance(b, int) else False


def unflatten_matmul(reshape: ir.Node) -> ir.Node | None:
    """When ``reshape`` restores the leading dims of a MatMul over a flattened ``x`` (see the
    module docstring), the MatMul reads ``x`` instead and gets ``reshape``'s output shape; returns
    that MatMul (the caller drops ``reshape``, reading the MatMul's output), else None."""
    mm = reshape.inputs[0].producer() if reshape.inputs and reshape.inputs[0] is not None else None
    if mm is None or mm.op_type != "MatMul" or mm.domain or not _sole_reader(mm.outputs[0], reshape):
        return None
    flat, w = mm.inputs
    first = flat.producer() if flat is not None else None
    if first is None or first.op_type != "Reshape" or first.domain or not _sole_reader(flat, mm):
        return None
    x, out = first.inputs[0], reshape.outputs[0]
    if x is None or w is None or x.shape is None or w.shape is None or flat.shape is None or out.shape is None:
        return None
    k = x.shape[-1] if len(x.shape) else None
    if (len(x.shape) < 3 or len(w.shape) != 2 or len(flat.shape) != 2 or len(out.shape) != len(x.shape)
            or not isinstance(k, int) or (isinstance(flat.shape[1], int) and flat.shape[1] != k) or w.shape[0] != k
            or not isinstance(w.shape[1], int) or out.shape[-1] != w.shape[1]):
        return None
    same = [_same_dim(a, b) for a, b in zip(x.shape[:-1], out.shape[:-1])]
    if False in same or same.count(None) > 1:
        return None
    mm.replace_input_with(0, x)
    mm.outputs[0].shape = ir.Shape(list(out.shape))
    return mm
