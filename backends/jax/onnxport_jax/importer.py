"""ONNX IR -> a pure JAX function ``apply(params, *inputs)`` and its params pytree.

The importer resolves every node to its primitive once; ``apply`` then walks the graph in
topological order, calling one primitive per node. Values computed only from static shapes and
constants stay numpy (evaluated at trace time), so ``jax.jit`` sees static shapes; everything
that depends on params or inputs is a ``jax.Array`` (a tracer under ``jax.jit``/``grad``/``vmap``).
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import onnx_ir as ir

from onnxport.importing.inputs import input_spec
from onnxport.importing.layout import plan_program as plan_layout
from onnxport.importing.plan import ImportPlan, iter_graphs
from onnxport.importing.program import GraphCompiler
from onnxport.ir.filedata import readable
from onnxport.plugin.backend import Backend
from onnxport.plugin.backend_parts import PackageNative

from . import dtypes, layout
from .context import DataDependentError, Mode, NodeContext
from .export_support import ExportSupport
from .model import (  # noqa: F401  (JaxModel and the compiled-graph pieces, re-exported)
    _FOLD_LIMIT,
    _HOIST_MIN,
    _TRACER_ERRORS,
    JaxModel,
    Program,
    _Step,
    _to_jax,
    _to_numpy,
    _x64_hint,
    _x64_scope,
    is_static_result,
)
from .narrow import narrow_array
from .narrow_steps import NarrowStep, check_program
from .options import EXPORT_OPTIONS, IMPORT_OPTIONS
from .transfer import Transfer


# -- building -----------------------------------------------------------------------------------
class _Builder(GraphCompiler):
    """Resolves primitives, folds constant subgraphs and picks params for one import."""

    step_cls = _Step
    program_cls = Program
    context_cls = NodeContext
    data_dependent_error = DataDependentError
    fold_limit = _FOLD_LIMIT
    hoist_min = _HOIST_MIN

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owned: set[int] = set()  # ids of initializer arrays read into buffers of their own

    def array_from_ir(self, tensor: Any) -> np.ndarray:
        arr = dtypes.array_from_ir(tensor)  # turned into jax arrays inside the x64 scope
        if readable(tensor):  # read from its file into an (aligned) array of its own
            self.owned.add(id(arr))
        return arr


def _group(node: ir.Node) -> int:
    attr = node.attributes.get("group")
    return 1 if attr is None else int(attr.value)



def _model_needs_x64(graph: ir.Graph) -> bool:
    """Whether a value (subgraphs too) or a Cast-like ``to`` has a type JAX holds only with x64."""
    wide = dtypes.X64_TYPES  # ir.DataType is an int enum: attribute ints match it too
    for g in iter_graphs(graph):
        if any(v.dtype in wide for v in g.inputs) or any(v.dtype in wide for v in g.initializers.values()):
            return True
        for node in g:
            if any(v.dtype in wide for v in node.outputs):
                return True
            to = node.attributes.get("to")
            if to is not None and to.type == ir.AttributeType.INT and to.value in wide:
                return True
    return False


def _array(kind: str, name: str, arr: np.ndarray, narrow: bool, transfer: Transfer, owned: bool = False) -> jax.Array:
    if narrow:
        return narrow_array(kind, name, arr)
    # an array nobody else holds may be adopted without a copy (device_put aliases aligned host
    # memory on CPU); any other is copied, so that later changes to it do not reach the model
    return transfer(arr, owned)


def import_plan(plan: ImportPlan, **options: Any) -> JaxModel:
    """Build the :class:`JaxModel` for a prepared plan.

    Options: ``trainable="auto"|"all"|"none"`` (which float initializers become params),
    ``x64="auto"|True|False`` (64-bit types: ``"auto"`` runs a model that has them in its own
    ``jax.enable_x64(True)`` scope, exactly; ``False`` follows ``jax_enable_x64``, and with it off
    at import computes them in 32 bits as JAX does (:mod:`onnxport_jax.narrow`), refusing a value
    that needs 64 bits with :class:`~onnxport_jax.narrow.NeedsX64Error`), ``training=False``,
    ``seed=None`` (starts the key sequence ``model(...)`` draws per-call PRNG keys from),
    ``channels_last=True`` (run 4-D image activations NHWC inside ``apply``, see
    :mod:`onnxport_jax.layout`; inputs, outputs and params keep their ONNX shapes either way).
    """
    options = {**plan.options, **options}
    graph = plan.model.graph
    x64_opt = options.get("x64", "auto")
    wide = _model_needs_x64(graph)
    narrow = wide and x64_opt is False and not jax.config.jax_enable_x64
    needs = (wide or x64_opt is True) and not narrow
    builder = _Builder(plan, options, Mode())
    if narrow:
        builder.step_cls = NarrowStep  # folds exactly in 64 bits, narrows what runtime nodes read
    with jax.enable_x64(True) if needs or narrow else contextlib.nullcontext():
        builder.collect_initializers()
        builder.mode.training = bool(options.get("training", False))
        program = builder.compile(graph)
        if narrow:
            check_program(program, builder.static)
        if options.get("channels_last", True):
            plan_layout(plan, program, static=builder.static, params=set(builder.param_values.values()))
        else:
            program.hwio = set()
        const_values = builder.hoist(program)
        hoisted = {k: builder.static[v] for k, v in const_values.items()}
        held = set(builder.param_values.values()) | set(const_values.values())
        for v in [v for v in program.hwio if v not in held]:  # small constants: HWIO once, here
            builder.static[v] = layout.lay_out(builder.static[v])
            program.hwio.discard(v)
    with jax.enable_x64(needs) if needs or narrow else contextlib.nullcontext():
        put = Transfer()
        # each host array is dropped once its device copy exists: the peak stays near one copy
        params = {k: _array("initializer", k, a, narrow, put, id(a) in builder.owned)
                  for k in list(builder.params) if (a := builder.params.pop(k)) is not None}
        state = {k: _array("initializer", k, a, narrow, put, id(a) in builder.owned)
                 for k in list(builder.state) if (a := builder.state.pop(k)) is not None}
        consts = {k: _array("folded constant", k, a, narrow, put) for k, a in hoisted.items()}
    info = {
        "inputs": [input_spec(v) for v in graph.inputs],
        "outputs": [v.name for v in graph.outputs],
        "graph_name": graph.name,
    }
    seed = options.get("seed")
    return JaxModel(program, params, builder.param_values, builder.static, info, builder.mode, needs,
                    consts, const_values, builder.random, None if seed is None else int(seed), state,
                    narrow=narrow)


#: the testkit variant running a node case with 64-bit inputs as a JAX user with x64 off does
X64_OFF = "x64off"
#: the same, the case imported with ``x64=False``: computed in 32 bits (:mod:`onnxport_jax.narrow`)
X64_NARROW = "x64narrow"


class JaxBackend(ExportSupport, PackageNative, Backend):
    """The JAX backend: ONNX -> :class:`JaxModel` (params pytree + pure apply); JAX functions and
    Flax modules -> ONNX (:class:`~onnxport_jax.export_support.ExportSupport`)."""

    name = "jax"
    import_options = IMPORT_OPTIONS
    export_options = EXPORT_OPTIONS
    variant_names = (X64_OFF, X64_NARROW)

    @property
    def dtypes(self) -> frozenset[ir.DataType]:
        return dtypes.HELD_TYPES

    def import_model(self, plan: ImportPlan, **options: Any) -> JaxModel:
        return import_plan(plan, **options)

    def to_sequential(self, plan: ImportPlan, **options: Any) -> Any:
        from .sequential import to_sequential

        return to_sequential(plan, **options)

    def case_variants(self, model: Any) -> list[str]:
        """``x64off`` and ``x64narrow`` for a case with a 64-bit input: see :meth:`run_variant`."""
        wide = {ir.DataType.INT64, ir.DataType.UINT64, ir.DataType.DOUBLE}
        for vi in model.graph.input:
            t = vi.type
            if t.HasField("tensor_type") and ir.DataType(t.tensor_type.elem_type) in wide:
                return [X64_OFF, X64_NARROW]
        return []

    def variant_import_options(self, variant: str) -> dict[str, Any]:
        """``x64narrow`` imports with ``x64=False`` (under ``jax_enable_x64`` off)."""
        return {"x64": False} if variant == X64_NARROW else {}

    def run_variant(self, variant: str, imported: JaxModel, inputs: list[Any]) -> list[Any]:
        """``x64off``: called as a user with ``jax_enable_x64`` off calls it: the inputs made by
        ``jnp.asarray`` with x64 off (the 32-bit forms of 64-bit arrays), the model called eagerly.
        ``x64narrow``: the same on a model imported with ``x64=False`` (it computes in 32 bits);
        its 32-bit outputs come back widened to the graph's declared types, as compared."""
        if variant not in (X64_OFF, X64_NARROW):
            return super().run_variant(variant, imported, inputs)
        if variant == X64_NARROW and not imported.narrow:
            raise AssertionError("x64narrow: the case was not imported as a 32-bit model")
        def user(x: Any) -> Any:
            if isinstance(x, (list, tuple)):
                return type(x)(user(e) for e in x)
            if x is None or _has_strings(x):
                return x
            return jnp.asarray(x)

        with jax.enable_x64(False):
            out = imported(*[user(x) for x in inputs])
            outs = list(out) if isinstance(out, tuple) else [out]
            outs = [_to_numpy(o) for o in outs]
        if variant == X64_NARROW:
            outs = [_widen(o, imported.declared_output_dtype(i)) for i, o in enumerate(outs)]
        return outs

    def run(self, model: JaxModel, inputs: list[Any]) -> list[Any]:
        """Call the model on numpy inputs exactly as a user does (``model(*inputs)``: eager, a
        fresh PRNG key per call); outputs as numpy (testkit, CLI)."""
        out = model(*inputs)
        outs = list(out) if isinstance(out, tuple) else [out]
        return [_to_numpy(o) for o in outs]


def _widen(x: Any, want: np.dtype | None) -> Any:
    """A 32-bit result in the 64-bit type the graph declares for it (sequence elements too)."""
    if isinstance(x, (list, tuple)):
        return type(x)(_widen(e, want) for e in x)
    if want is None or not isinstance(x, np.ndarray) or x.dtype == want or want.itemsize != 8:
        return x
    return x.astype(want) if x.dtype.kind == want.kind else x


def _has_strings(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_has_strings(e) for e in x)
    return isinstance(x, np.ndarray) and x.dtype.kind in "OSU"

