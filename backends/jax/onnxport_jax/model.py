"""The compiled graph and the imported model: :class:`JaxModel` (a params pytree and a pure apply).

:mod:`onnxport_jax.importer` builds it; the exporter reads it (exporting an imported model)
without importing the importer.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import onnx_ir as ir

from onnxport.errors import ConversionError, InputError
from onnxport.importing.inputs import CallCheck, InputSpec, bind_inputs
from onnxport.importing.narrow import narrow_dtype
from onnxport.importing.program import Env, Step
from onnxport.importing.program import Program as _CoreProgram

from . import dtypes, layout
from .context import CALL, CallState, Mode, is_static
from .narrow import narrow_input
from .narrow import scope as narrow_scope

_FOLD_LIMIT = 1 << 28  # elements; larger folded constants stay runtime computations
#: folded constants of at least this many elements that feed runtime nodes are passed to the
#: compiled function as arguments (``model.consts``) instead of being embedded in its HLO,
#: where they slow compilation and where XLA rewrites uniform ones into per-call broadcasts
_HOIST_MIN = 1 << 12
#: what JAX raises when a traced value is used where a concrete one is needed
_TRACER_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerBoolConversionError,
)


# -- compiled graphs -------------------------------------------------------------------------
def _to_numpy(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_to_numpy(e) for e in x]
    return np.asarray(x)


def _to_jax(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_to_jax(e) for e in x]
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype != object:
        return jnp.asarray(x)
    return x


class _Step(Step):
    """A node run with JAX values: folded under ``jax.ensure_compile_time_eval``."""

    __slots__ = ()
    tracer_errors = _TRACER_ERRORS
    is_static = staticmethod(is_static)
    convert_value = staticmethod(layout.convert)

    def fold(self, args: list[Any], attrs: dict[str, Any]) -> list[Any]:
        # computed from static shapes/constants: evaluate now, keep it numpy (static under jit)
        with jax.ensure_compile_time_eval():
            outs = self.call(args, attrs)
        return [_to_numpy(o) if is_static_result(o) else o for o in outs]


def is_static_result(x: Any) -> bool:
    """Whether a result computed under ``ensure_compile_time_eval`` is concrete."""
    if x is None or isinstance(x, (np.ndarray, np.generic)):
        return True
    if isinstance(x, (list, tuple)):
        return all(is_static_result(e) for e in x)
    return isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer)


class Program(_CoreProgram):
    """A compiled ONNX graph whose layout conversions are JAX transposes."""

    convert_value = staticmethod(layout.convert)


def _np_dtype(dtype: ir.DataType | None) -> np.dtype | None:
    """The numpy dtype an input of ONNX type ``dtype`` must have (None: not checked)."""
    if dtype is None:
        return None
    if dtype == ir.DataType.STRING:
        return np.dtype(object)
    try:
        return dtypes.to_numpy_dtype(dtype)
    except ConversionError:
        return None


# -- the model --------------------------------------------------------------------------------
class JaxModel:
    """An imported ONNX model: a params pytree and a pure ``apply(params, *inputs)``.

    ``params`` maps trainable initializer names (float weights) to ``jax.Array`` leaves; a
    shared initializer is one leaf. ``state`` maps the initializers that are no weights but
    change in training (BatchNormalization's running mean and variance) to their arrays: differentiate
    and optimize ``params``, pass ``state=`` to ``apply`` (default: :attr:`state`).
    ``model(*inputs)`` is ``model.apply(model.params, *inputs)``.
    Inputs go positionally in graph order or by ONNX name; one output comes back as an array,
    several as a tuple in graph order. ``apply`` works under ``jax.jit``, ``grad`` and ``vmap``.
    """

    def __init__(self, program: Program, params: dict[str, jax.Array], param_values: dict[str, ir.Value],
                 static: dict[ir.Value, Any], info: dict[str, Any], mode: Mode, x64: bool,
                 consts: dict[str, jax.Array] | None = None, const_values: dict[str, ir.Value] | None = None,
                 random: bool = False, seed: int | None = None, state: dict[str, jax.Array] | None = None,
                 narrow: bool = False):
        self._program = program
        self._narrow = narrow
        self.params: dict[str, jax.Array] = params
        #: non-trainable state (running statistics), updated by ``model(...)`` in training mode
        self.state: dict[str, jax.Array] = dict(state or {})
        #: large constants computed at import time, passed to compiled code as arguments
        self.consts: dict[str, jax.Array] = dict(consts or {})
        self._const_values = dict(const_values or {})
        self._param_values = param_values
        self._param_dtypes = {k: np.dtype(v.dtype) for k, v in {**self.state, **params}.items()}
        self._static = static
        self._info = info
        self._mode = mode
        self._x64 = x64
        self._random = random
        self._seed = seed
        self._key: jax.Array | None = None
        self._param_key = {v: k for k, v in param_values.items()}
        self._const_key = {v: k for k, v in self._const_values.items()}
        self._layout_cache: dict[str, tuple[Any, Any]] = {}

    # -- facts --------------------------------------------------------------------------
    @property
    def input_names(self) -> list[str]:
        return [s.name for s in self._info["inputs"]]

    @property
    def output_names(self) -> list[str]:
        return list(self._info["outputs"])

    @property
    def needs_x64(self) -> bool:
        """Whether the model holds 64-bit values (applied inside ``jax.enable_x64(True)``)."""
        return self._x64

    def declared_output_dtype(self, i: int) -> np.dtype | None:
        """The numpy dtype the graph declares for output ``i`` (a sequence's element type)."""
        t = self._program.graph.outputs[i].type
        elem = getattr(getattr(t, "elem_type", None), "dtype", None) if t is not None else None
        return _np_dtype(getattr(t, "dtype", None) if elem is None else elem)

    @property
    def narrow(self) -> bool:
        """Whether the model computes its 64-bit types in 32 bits (imported with ``x64=False``
        while ``jax_enable_x64`` was off): see :mod:`onnxport_jax.narrow`."""
        return self._narrow

    @property
    def training(self) -> bool:
        return self._mode.training

    @property
    def has_random_ops(self) -> bool:
        """Whether the graph holds Dropout or random ops (which take ``rng`` when unseeded)."""
        return self._random

    def train(self, mode: bool = True) -> JaxModel:
        """Training behaviour: Dropout drops, BatchNormalization normalizes with batch statistics
        (and ``model(...)`` updates the running statistics in :attr:`state`). Read when ``apply``
        is traced: ``model.jit()`` and ``model(...)`` follow it; a ``jax.jit(model.apply)``
        traced before the switch does not (pass ``training=`` as a static argument instead)."""
        self._mode.training = mode
        return self

    def eval(self) -> JaxModel:
        """Inference behaviour (the default after import): Dropout is the identity,
        BatchNormalization uses the running statistics."""
        return self.train(False)

    def seed(self, seed: int) -> JaxModel:
        """Restart the key sequence ``model(...)`` draws its per-call PRNG keys from."""
        self._seed, self._key = int(seed), None
        return self

    def next_key(self) -> jax.Array:
        """The next PRNG key of the model's own sequence (``import_model(..., seed=n)``, else
        seeded from numpy's global generator): what ``model(...)`` passes as ``rng``."""
        if self._key is None:
            seed = self._seed if self._seed is not None else int(np.random.randint(0, 2**31 - 1))
            self._key = jax.random.key(seed)
        self._key, sub = jax.random.split(self._key)
        return sub

    def x64_scope(self) -> contextlib.AbstractContextManager:
        """``jax.enable_x64(True)`` if the model holds 64-bit values, else a no-op (the caller's
        own setting is remembered: with it off, 64-bit inputs may come in their 32-bit form);
        ``jax.enable_x64(False)`` for a model that computes in 32 bits (:attr:`narrow`)."""
        if self._narrow:
            return narrow_scope()
        return _x64_scope() if self._x64 else contextlib.nullcontext()

    # -- running ------------------------------------------------------------------------
    def __call__(self, *inputs: Any, **named: Any) -> Any:
        """Run eagerly with :attr:`params`: a fresh PRNG key per call (:meth:`next_key`) and, in
        training mode, the new BatchNormalization running statistics stored in :attr:`state`."""
        rng = self.next_key() if self._random else None
        with self.x64_scope():
            out, updates = self._apply(self.params, self._bind_inputs(inputs, named), (), self.consts,
                                       rng, None, True, self.laid_out(self.params), self.state)
        if updates:
            self.state = {**self.state, **updates}
        return out

    def apply(self, params: dict[str, Any], *inputs: Any, rng: Any = None, training: bool | None = None,
              return_updates: bool = False, consts: dict[str, Any] | None = None,
              state: dict[str, Any] | None = None, **named: Any) -> Any:
        """Run the graph with ``params`` (a dict like :attr:`params`) on the graph inputs.

        ``rng``: a PRNG key (``jax.random.key``) for Dropout and unseeded random ops; each node
        draws from its own subkey of it, so a new key gives new draws and the same key the same
        ones (ops with a ``seed`` attribute ignore it). ``training``: True/False overrides the
        model's mode (a static value: ``jax.jit(model.apply, static_argnames="training")``).
        ``return_updates``: also return ``{state name: new value}`` for the running statistics
        that BatchNormalization computes in training mode. ``consts``: :attr:`consts` passed in
        (so that jitted code receives them as arguments; default: closed over). ``state``: a dict
        like :attr:`state` (default: :attr:`state`, closed over).
        """
        return self._apply(params, self._bind_inputs(inputs, named), (), consts, rng, training,
                           return_updates, None, state)

    def jit(self, **jit_kwargs: Any) -> Callable[..., Any]:
        """A jitted ``apply``, run with 64-bit types enabled where the model needs them:
        ``f = model.jit(); f(params, *inputs, rng=key, state=...)``. It takes :attr:`consts` and
        the state (default: :attr:`state` as it is at the call) as arguments and retraces when
        the model's train/eval mode (or ``training=``) changes."""
        jitted = jax.jit(self._jit_target, static_argnums=(5, 6), **jit_kwargs)

        def call(params: dict[str, Any], *inputs: Any, rng: Any = None, training: bool | None = None,
                 return_updates: bool = False, state: dict[str, Any] | None = None, **named: Any) -> Any:
            mode = self.training if training is None else bool(training)
            state = self.state if state is None else state
            with self.x64_scope():
                return jitted(params, self.consts, inputs, named, rng, mode, bool(return_updates),
                              self.laid_out(params, self.consts), state)

        return call

    def _jit_target(self, params: dict[str, Any], consts: dict[str, Any], inputs: tuple, named: dict,
                    rng: Any, training: bool, return_updates: bool, laid_out: dict[str, Any],
                    state: dict[str, Any]) -> Any:
        return self._apply(params, self._bind_inputs(inputs, named), (), consts, rng, training, return_updates,
                           laid_out, state)

    def laid_out(self, params: dict[str, Any], consts: dict[str, Any] | None = None) -> dict[str, Any]:
        """The params and consts that Convs read spatial-major (:mod:`onnxport_jax.layout`),
        transposed once per array: a params dict used again (inference, or an optimizer step that
        left a weight alone) costs no relayout; under a transformation (tracers) nothing is cached."""
        consts = self.consts if consts is None else consts
        out: dict[str, Any] = {}
        for v in self._program.hwio:
            kind, key = ("param", self._param_key[v]) if v in self._param_key else ("const", self._const_key[v])
            src = (params if kind == "param" else consts).get(key)
            if src is None and kind == "param":
                src = self.state.get(key)
            if src is None:
                continue  # _run names what is missing
            name = f"{kind}:{key}"
            hit = self._layout_cache.get(name)
            if hit is not None and hit[0] is src:
                out[name] = hit[1]
                continue
            out[name] = layout.lay_out(src)
            if isinstance(src, jax.Array) and not isinstance(src, jax.core.Tracer):
                self._layout_cache[name] = (src, out[name])
        return out

    def _apply(self, params: dict[str, Any], inputs: list[Any], keep_static: tuple[int, ...],
               consts: dict[str, Any] | None = None, rng: Any = None, training: bool | None = None,
               return_updates: bool = False, laid_out: dict[str, Any] | None = None,
               state: dict[str, Any] | None = None) -> Any:
        params = {**(self.state if state is None else state), **params}  # one env: weights and state
        if isinstance(training, jax.core.Tracer) or isinstance(return_updates, jax.core.Tracer):
            raise InputError("training= and return_updates= decide the traced graph: mark them static "
                             "(jax.jit(model.apply, static_argnames=('training', 'return_updates'))) "
                             "or use model.jit() / model.train()")
        state = CallState(rng, None if training is None else bool(training))
        token = CALL.set(state)
        try:
            out = self._run(params, inputs, keep_static, self.consts if consts is None else consts, laid_out)
        finally:
            CALL.reset(token)
        return (out, state.updates) if return_updates else out

    def _run(self, params: dict[str, Any], inputs: list[Any], keep_static: tuple[int, ...],
             consts: dict[str, Any], laid_out: dict[str, Any] | None = None) -> Any:
        caller = _CALLER_X64.get()  # the caller's setting, before the model's own scope
        narrow_ok = self._narrow or not (jax.config.jax_enable_x64 if caller is None else caller)
        with self.x64_scope():
            env = Env(self._static)
            hwio = self._program.hwio
            for key, v in self._const_values.items():
                if key not in consts:
                    raise InputError(f"consts lack {key!r}; pass model.consts")
                c = consts[key]
                if v in hwio:
                    c = laid_out["const:" + key] if laid_out is not None else layout.lay_out(c)
                env[v] = c
            missing = [k for k in self._param_values if k not in params]
            if missing:
                where = "state" if all(k in self.state for k in missing) else "params"
                raise InputError(f"{where} lack {missing[:5]}{' ...' if len(missing) > 5 else ''}")
            for key, v in self._param_values.items():
                p = params[key]
                want = self._param_dtypes[key]
                if getattr(p, "dtype", want) != want:
                    raise InputError(
                        f"param {key!r} has dtype {p.dtype}, expected {want}"
                        + _x64_hint(want, p.dtype)
                    )
                if v in hwio:
                    hit = laid_out.get("param:" + key) if laid_out is not None else None
                    p = hit if hit is not None else layout.lay_out(p)
                env[v] = p
            call = CallCheck()
            for i, (spec, v, x) in enumerate(zip(self._info["inputs"], self._program.inputs, inputs)):
                env[v] = x if i in keep_static else self._check_input(spec, x, call, narrow_ok, v)
            outs = self._program.run(env)
            outs = [_to_jax(o) for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _bind_inputs(self, args: tuple, kwargs: dict) -> list[Any]:
        return bind_inputs([s.name for s in self._info["inputs"]], args, kwargs)

    def _check_input(self, spec: InputSpec, x: Any, call: CallCheck, narrow_ok: bool = False,
                     value: ir.Value | None = None) -> Any:
        """The input as a JAX array of the graph's type. With ``narrow_ok`` (the caller runs with
        ``jax_enable_x64`` off, so every 64-bit array it makes is 32-bit) the 32-bit form of a
        64-bit input is accepted and widened exactly; the model computes in its own 64-bit scope."""
        name = spec.name
        if self._narrow:
            return self._check_narrow_input(spec, x, call, value)
        if not spec.is_tensor:
            x = _to_jax(x)
            elem = getattr(getattr(getattr(value, "type", None), "elem_type", None), "dtype", None)
            want = _np_dtype(elem) if narrow_ok and elem is not None else None
            if want is not None and want.kind in "iuf" and want.itemsize == 8 and isinstance(x, (list, tuple)):
                x = type(x)(e.astype(want) if getattr(e, "dtype", None) is not None and e.dtype.itemsize == 4
                            and e.dtype.kind == want.kind else e for e in x)  # a sequence's 32-bit forms
            return x
        want = _np_dtype(spec.dtype)
        if want is not None and want.kind == "O":
            return np.asarray(x)  # strings stay numpy
        got = getattr(x, "dtype", None)
        if (narrow_ok and want is not None and got is not None and np.dtype(want).itemsize == 8
                and np.dtype(got).itemsize == 4 and np.dtype(want).kind == np.dtype(got).kind):
            x = jnp.asarray(x).astype(want)
        if isinstance(x, (np.ndarray, np.generic)):
            if want is not None and x.dtype != want:
                raise InputError(f"input {name!r} must have dtype {want}, got {x.dtype} (no implicit casts)")
            x = jnp.asarray(x)
        elif not isinstance(x, jax.Array):
            raise InputError(f"input {name!r} must be a jax.Array or numpy array, got {type(x).__name__}")
        if want is not None and x.dtype != want:
            raise InputError(
                f"input {name!r} must have dtype {want}, got {x.dtype} (no implicit casts)"
                + _x64_hint(want, x.dtype)
            )
        call.shape(spec, x.shape)
        return x

    def _check_narrow_input(self, spec: InputSpec, x: Any, call: CallCheck, value: ir.Value | None) -> Any:
        """An input of a model computing in 32 bits: a 64-bit array narrowed if its values fit."""
        if not spec.is_tensor:
            elem = getattr(getattr(getattr(value, "type", None), "elem_type", None), "dtype", None)
            want = _np_dtype(elem)
            if isinstance(x, (list, tuple)):
                return type(x)(_to_jax(narrow_input(spec.name, want, e)) for e in x)
            return _to_jax(x)
        want = _np_dtype(spec.dtype)
        if want is not None and want.kind == "O":
            return np.asarray(x)  # strings stay numpy
        x = narrow_input(spec.name, want, x)
        small = None if want is None else narrow_dtype(want)
        if isinstance(x, (np.ndarray, np.generic)):
            if small is not None and x.dtype != small:
                raise InputError(f"input {spec.name!r} must have dtype {want} (run as {small}), got "
                                 f"{x.dtype} (no implicit casts)")
            x = jnp.asarray(x)
        elif not isinstance(x, jax.Array):
            raise InputError(f"input {spec.name!r} must be a jax.Array or numpy array, got {type(x).__name__}")
        if small is not None and x.dtype != small:
            raise InputError(f"input {spec.name!r} must have dtype {want} (run as {small}), got {x.dtype} "
                             "(no implicit casts)")
        call.shape(spec, x.shape)
        return x

    def __repr__(self) -> str:
        n = sum(int(np.size(p)) for p in self.params.values())
        return (f"JaxModel(inputs={self.input_names}, outputs={self.output_names}, "
                f"params={len(self.params)} arrays / {n} values)")


#: ``jax_enable_x64`` as the caller had it when a model's 64-bit scope was entered (None: outside)
_CALLER_X64: contextvars.ContextVar[bool | None] = contextvars.ContextVar("onnxport_jax_caller_x64", default=None)


@contextlib.contextmanager
def _x64_scope():
    token = _CALLER_X64.set(_CALLER_X64.get() if _CALLER_X64.get() is not None else bool(jax.config.jax_enable_x64))
    try:
        with jax.enable_x64(True):
            yield
    finally:
        _CALLER_X64.reset(token)


def _x64_hint(want: np.dtype, got: np.dtype) -> str:
    if np.dtype(want).itemsize == 8 and np.dtype(got).itemsize == 4:
        return (": JAX truncated a 64-bit value because jax_enable_x64 is off; call the jitted "
                "function inside `with jax.enable_x64(True):` or use model.jit()")
    return ""
