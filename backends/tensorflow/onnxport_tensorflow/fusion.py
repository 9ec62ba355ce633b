"""Inference speed: a BatchNormalization folded into the Conv that alone feeds it, and frozen
serving functions.

At inference BatchNormalization is a per-channel affine map, so ``BN(conv(x, w, b))`` equals
``conv(x, w * k, (b - mean) * k + beta)`` with ``k = scale / sqrt(var + eps)``. The fused step
computes the folded weights from the variables on every call (weight-sized work, differentiable,
so gradients still reach the same variables) and saves the normalization's passes over the
activation; grappler then fuses the Conv2D with its BiasAdd (and a following Relu). In training
mode (``model.train()``, or a node with ``training_mode=1``) the two steps run as imported.

When the Conv's weight and bias and the normalization's parameters are all import-time constants
(no variable: a weight computed in the graph, as the ``light_*`` models make theirs with
ConstantOfShape), :func:`fold_constant_pairs` folds them once at import, so the call reads the
folded weight as it is; the unfolded values stay import-time constants for training mode.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx_ir as ir
import tensorflow as tf

from onnxport.errors import ConversionError

from . import layout
from .context import is_static
from .ops.import_ import conv as conv_ops


def _sole_bn(step: Any, by_node: dict[ir.Node, Any]) -> Any | None:
    """The BatchNormalization step that alone reads ``step``'s one output, when fusable."""
    out = step.outputs[0] if len(step.outputs) == 1 else None
    if out is None or out.is_graph_output():
        return None
    uses = list(out.uses())
    if len(uses) != 1:
        return None
    node, idx = uses[0].node, uses[0].idx
    bn = by_node.get(node)
    if bn is None or idx != 0 or node.op_type != "BatchNormalization" or node.domain not in ("", "ai.onnx"):
        return None
    if len(node.inputs) != 5 or any(v.uses() or v.is_graph_output() for v in node.outputs[1:]):
        return None
    if bn.subgraphs or (bn.convert is not None and any(bn.convert)) or bn.attrs.get("training_mode"):
        return None
    return bn


class ConvBatchNorm:
    """A Conv step and the BatchNormalization step reading it, run as one folded convolution."""

    __slots__ = ("conv", "bn", "node", "ctx", "scope", "inputs", "outputs", "subgraphs", "hwio", "folded")

    def __init__(self, conv: Any, bn: Any, hwio: bool = False):
        self.conv = conv
        self.bn = bn
        self.node = conv.node
        self.ctx = conv.ctx  # run-time errors name the Conv (its scope holds the fused ops)
        self.scope = conv.scope
        self.inputs = conv.inputs + [v for v in bn.inputs[1:]]
        self.outputs = bn.outputs
        self.subgraphs = []
        self.hwio = hwio  # the layout plan reads the weight spatial-major (HWIO): O is the last axis
        #: the weight and bias values folded at import (:func:`fold_constant_pairs`) and the
        #: Conv step that reads them, or None
        self.folded: tuple[ir.Value, ir.Value, Any] | None = None

    def run(self, env: Any) -> None:
        conv, bn = self.conv, self.bn
        if self.folded is not None and not bn.ctx.training:
            x = env[conv.inputs[0]]
            if conv.convert is not None:
                x = layout.convert(x, conv.convert[0])
            if not is_static(x):
                fw, fb, call = self.folded
                (y,) = call.call([x, env[fw], env[fb]], conv.attrs)
                env[bn.outputs[0]] = y
                return
        args = [env[v] if v is not None else None for v in conv.inputs]
        if conv.convert is not None:
            args = [layout.convert(a, how) for a, how in zip(args, conv.convert)]
        if bn.ctx.training or all(is_static(a) for a in args if a is not None):
            conv.run(env)
            bn.run(env)
            return
        x, w = args[0], tf.convert_to_tensor(args[1])
        b = args[2] if len(args) > 2 else None
        dt = w.dtype
        with tf.name_scope(bn.scope):
            scale, beta, mean, var = (tf.cast(env[v], dt) for v in bn.inputs[1:])
            k = scale * tf.math.rsqrt(var + tf.constant(bn.attrs["epsilon"], dt))
            w = w * (k if self.hwio else tf.reshape(k, [-1, 1, 1, 1]))
            shift = beta - mean * k if b is None else (tf.cast(b, dt) - mean) * k + beta
        (y,) = conv.call([x, w, shift], conv.attrs)
        env[bn.outputs[0]] = y


def fuse_conv_batch_norm(program: Any) -> int:
    """Replace every Conv -> BatchNormalization pair of ``program``'s own steps (not subgraphs)
    by a :class:`ConvBatchNorm`; returns how many were fused."""
    by_node = {step.node: step for step in program.steps}
    fused: dict[Any, ConvBatchNorm] = {}
    for step in program.steps:
        node = step.node
        if node.op_type != "Conv" or node.domain not in ("", "ai.onnx") or step.subgraphs:
            continue
        if len(step.inputs) < 2 or len(step.inputs[1].shape or ()) != 4:
            continue
        bn = _sole_bn(step, by_node)
        if bn is not None:
            # the layout plan (run before) names the weights it reads HWIO
            fused[step] = ConvBatchNorm(step, bn, step.inputs[1] in getattr(program, "hwio", ()))
    if not fused:
        return 0
    dropped = {f.bn for f in fused.values()}
    # the BatchNormalization runs where the Conv ran: its other inputs (weights) are computed by then
    # unless a step between them makes one; keep those pairs apart
    order = {step: i for i, step in enumerate(program.steps)}
    made_at = {v: order[s] for s in program.steps for v in s.outputs}
    for conv, f in list(fused.items()):
        if any(made_at.get(v, -1) > order[conv] for v in f.bn.inputs[1:]):
            dropped.discard(f.bn)
            del fused[conv]
    program.steps = [fused.get(s, s) for s in program.steps if s not in dropped]
    return len(fused)


def fold_constant_pairs(program: Any, static: dict[ir.Value, Any]) -> int:
    """Fold, once, every fused pair of ``program`` whose Conv weight and bias and normalization
    parameters are all import-time constants (``static`` numpy values, no variable): the folded
    weight (HWIO when the Conv runs channels last) and bias become new constants of ``static``
    that the inference call reads. Returns how many were folded."""
    count = 0
    for step in program.steps:
        if not isinstance(step, ConvBatchNorm):
            continue
        conv, bn = step.conv, step.bn
        w = conv.inputs[1]
        b = conv.inputs[2] if len(conv.inputs) > 2 else None
        consts = [static.get(v) for v in (w, b, *bn.inputs[1:]) if v is not None]
        if not all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in consts):
            continue
        w_arr = consts[0]
        if w_arr.ndim != 4 or bn.ctx.training:
            continue
        scale, beta, mean, var = (a.astype(np.float64) for a in consts[-4:])
        k = scale / np.sqrt(var + float(bn.attrs["epsilon"]))
        bias = consts[1].astype(np.float64) if b is not None else 0.0
        folded_w = (w_arr.astype(np.float64) * k.reshape(-1, 1, 1, 1)).astype(w_arr.dtype)
        folded_b = ((bias - mean) * k + beta).astype(w_arr.dtype)
        call = conv
        if conv.fn in (conv_ops.conv_nhwc, conv_ops.conv_nhwc_hwio):
            # channels last: the folded weight is laid out HWIO here, grouped or not (TF's
            # grouped and depthwise forms read it so too), and read by the HWIO form
            folded_w = layout.lay_out(folded_w)
            call = copy.copy(conv)
            call.fn = conv_ops.conv_nhwc_hwio
        fw = ir.Value(name=f"{w.name or 'conv_weight'}_bn_folded")
        fb = ir.Value(name=f"{w.name or 'conv_weight'}_bn_folded_bias")
        static[fw], static[fb] = folded_w, folded_b
        step.folded = (fw, fb, call)
        # what the inference call reads: the folded values are held (hoisted) instead of the originals
        step.inputs = [conv.inputs[0], fw, fb]
        count += 1
    return count


def frozen(model: Any) -> Callable[..., Any]:
    """``model``'s inference function with the weights' current values as graph constants.

    Called like ``model.serve`` (positional tensors; one output a tensor, several a tuple).
    TensorFlow then folds the per-call weight work (HWIO layouts, folded BatchNormalizations)
    once, and the convolution kernels cache their packed filters. Later assignments to the
    variables are not seen: freeze again after training. Needs an input signature (every graph
    input a tensor).
    """
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    if model.input_signature is None:
        raise ConversionError("frozen() needs every graph input to be a tensor (an input signature)")
    fn = convert_variables_to_constants_v2(model.serve.get_concrete_function())
    single = len(model.output_names) == 1

    def call(*inputs: Any) -> Any:
        outs = fn(*inputs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        return outs[0] if single else tuple(outs)

    call.concrete_function = fn  # type: ignore[attr-defined]
    return call
