"""ONNX IR -> ``torch.fx.GraphModule``: one call per node, native layers where they fit."""

from __future__ import annotations

import functools
import keyword
import operator
import re
from typing import Any

import numpy as np
import onnx_ir as ir
import torch
import torch.fx as fx
from torch import nn

from onnxport.backend import Backend
from onnxport.driver import ImportPlan, is_weight_use, iter_graphs
from onnxport.errors import ConversionError, InputError, OnnxportError
from onnxport.inputs import CallCheck, InputSpec, bind_inputs, input_spec
from onnxport.opfacts import NO_FOLD_OPS, SETTING_INPUTS, STATISTICS_INPUTS
from onnxport.safety import GROWING_OPS, check_call, fold_fits

from . import dtypes
from .context import Mode, NodeContext
from .exporter import ExportSupport

#: running statistics are buffers in torch (BatchNorm updates them itself), never Parameters
#: inputs that never become trainable Parameters: settings and running statistics (buffers)
_SETTING_INPUTS = SETTING_INPUTS | STATISTICS_INPUTS
_FOLD_LIMIT = 1 << 26  # elements; larger folded constants stay runtime computations
_MAX_OUTPUT_BYTES = 1 << 40  # an output past this (an expanded view) cannot become a numpy array
_MODULE_ATTRS = set(dir(nn.Module)) | set(vars(nn.Module())) | {"graph", "code", "meta", "forward", "self"}


def _part(name: str) -> str:
    """A safe name part for a name from the file: only [0-9a-zA-Z_], never a keyword or a Module attribute."""
    s = re.sub(r"[^0-9a-zA-Z_]", "_", name) or "_"
    if s in _MODULE_ATTRS or keyword.iskeyword(s) or keyword.issoftkeyword(s) or s.startswith("_onnx"):
        s += "_"
    return s


class NodeFn:
    """The callable an fx node runs: one primitive with its context and attributes bound."""

    def __init__(self, fn, ctx: NodeContext, attrs: dict[str, Any], subgraphs=()):
        self.fn = fn
        self.ctx = ctx
        self.attrs = attrs
        self.subgraphs = list(subgraphs)  # (attr name, [Subgraph ...], is_list)
        base = _part(f"{ctx.op_type}_{ctx.name}" if ctx.name else ctx.op_type).lower()
        self.__name__ = self.__qualname__ = base
        self.__module__ = "onnxport_torch.ops"

    def __call__(self, *args: Any) -> Any:
        if self.subgraphs:
            return self._call_with_subgraphs(args)
        if self.ctx.op_type in GROWING_OPS:
            self._check_size(args)
        try:
            return self._bound(*args)
        except OnnxportError:
            raise
        except Exception as exc:
            raise self._failure(exc) from exc

    @property
    def attrs(self) -> dict[str, Any]:
        return self._attrs

    @attrs.setter
    def attrs(self, attrs: dict[str, Any]) -> None:
        # bound once (C-level partial): no per-call dict expansion in Python
        self._attrs = attrs
        self._bound = functools.partial(self.fn, self.ctx, **attrs)

    def _check_size(self, args: tuple) -> None:
        """Refuse, before allocating, a result larger than the memory budget."""
        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return  # symbolic values: no sizes to read
        # fake or subclassed tensors (torch.export) have no values to read: no check
        check_call(self.ctx.op_type, self.ctx.label, [a if isinstance(a, torch.Tensor) else None for a in args],
                   lambda a: a.shape, lambda a: a.detach().cpu().numpy())

    def _failure(self, exc: Exception) -> ConversionError:
        return ConversionError(
            f"node {self.ctx.label} (opset {self.ctx.opset}) failed: {type(exc).__name__}: {exc}"
        )

    def _call_with_subgraphs(self, args: tuple) -> Any:
        attrs = dict(self._attrs)
        n = self.ctx.num_inputs
        inputs, caps = args[:n], args[n:]
        pos = 0
        for name, subs, is_list in self.subgraphs:
            bound = []
            for sub in subs:
                bound.append(sub.bind(caps[pos : pos + sub.num_captures]))
                pos += sub.num_captures
            attrs[name] = bound if is_list else bound[0]
        try:
            return self.fn(self.ctx, *inputs, **attrs)
        except OnnxportError:
            raise
        except Exception as exc:
            raise self._failure(exc) from exc

    def __repr__(self) -> str:
        return f"NodeFn({self.ctx.label})"


#: ops whose output depends only on the shape of their (runtime) input: roots of shape programs
_SHAPE_ROOTS = {"Shape", "Size"}
_PROGRAM_CACHE = 16  # distinct input-shape keys remembered per shape program


class _ShapeStep:
    """One ONNX node of a shape program: its bound primitive and where its inputs come from."""

    __slots__ = ("fn", "sources", "num_outputs")

    def __init__(self, fn: NodeFn, sources: list[tuple[str, Any] | None], num_outputs: int):
        self.fn = fn
        self.sources = sources  # ("static", tensor) | ("root", index) | ("value", (step, output)) | None
        self.num_outputs = num_outputs


class ShapeProgram:
    """A static subgraph whose values depend only on the shapes of some runtime tensors.

    Shape/Size of a runtime tensor and the deterministic nodes computing on them and on constants
    (shape arithmetic, masks built from ``Range``...) are a pure function of the roots' shapes:
    the program evaluates them once per distinct tuple of root shapes and replays the result,
    so the forward pass runs one cache lookup instead of a chain of small tensor ops. Under
    tracing or compilation (torch.compile, torch.export, jit/fx tracing) it always evaluates.
    """

    def __init__(self, steps: list[_ShapeStep], output: tuple[int, int], num_roots: int, name: str,
                 copy_out: bool):
        self.steps = steps
        self.output = output
        self.num_roots = num_roots
        self.copy_out = copy_out  # a graph output: the caller owns (and may modify) the tensor
        self.cache: dict[tuple, Any] = {}
        self.__name__ = self.__qualname__ = name
        self.__module__ = "onnxport_torch.ops"

    def evaluate(self, roots: tuple) -> Any:
        results: list[Any] = []
        for step in self.steps:
            args = []
            for src in step.sources:
                if src is None:
                    args.append(None)
                elif src[0] == "static":
                    args.append(src[1])
                elif src[0] == "root":
                    args.append(roots[src[1]])
                else:
                    j, k = src[1]
                    args.append(results[j] if self.steps[j].num_outputs == 1 else results[j][k])
            results.append(step.fn(*args))
        j, k = self.output
        return results[j] if self.steps[j].num_outputs == 1 else results[j][k]

    def __call__(self, *roots: Any) -> Any:
        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            return self.evaluate(roots)
        try:
            key = tuple(r.shape for r in roots)
            out = self.cache.get(key)
        except TypeError:  # symbolic sizes (tracing) or a root that is not a tensor
            return self.evaluate(roots)
        if out is None:
            out = self.evaluate(roots)
            if len(self.cache) >= _PROGRAM_CACHE:
                del self.cache[next(iter(self.cache))]
            self.cache[key] = out
        if self.copy_out and isinstance(out, torch.Tensor):
            return out.clone()
        return out

    def __repr__(self) -> str:
        return f"ShapeProgram({self.__name__}, {len(self.steps)} nodes, {self.num_roots} roots)"


class Subgraph:
    """A compiled ONNX subgraph (If branch, Loop/Scan body): call it with its formal inputs."""

    def __init__(self, module: fx.GraphModule, num_inputs: int, num_captures: int, name: str):
        self.module = module
        self.num_inputs = num_inputs
        self.num_captures = num_captures
        self.name = name

    def bind(self, captures) -> _BoundSubgraph:
        return _BoundSubgraph(self, tuple(captures))


class _BoundSubgraph:
    __slots__ = ("sub", "captures")

    def __init__(self, sub: Subgraph, captures: tuple):
        self.sub = sub
        self.captures = captures

    @property
    def num_inputs(self) -> int:
        return self.sub.num_inputs

    def __call__(self, *inputs: Any) -> list[Any]:
        if len(inputs) != self.sub.num_inputs:
            raise ConversionError(
                f"subgraph {self.sub.name!r} takes {self.sub.num_inputs} inputs, got {len(inputs)}"
            )
        return list(self.sub.module(*inputs, *self.captures))


class OnnxModule(fx.GraphModule):
    """An imported ONNX model: a ``torch.fx.GraphModule`` whose weights are the initializers.

    Call it with the graph's inputs positionally (graph order) or by ONNX name; one output comes
    back as a tensor, several as a tuple in graph order.
    """

    def __init__(self, root: nn.Module, graph: fx.Graph, info: dict[str, Any], mode: Mode):
        super().__init__(root, graph, class_name="OnnxModule")
        self._onnx_info = info
        self._onnx_mode = mode

    def _deepcopy_init(self):
        def init(res: OnnxModule, fake_mod: nn.Module, graph: fx.Graph) -> None:
            state = fake_mod.__dict__
            OnnxModule.__init__(res, fake_mod, graph, state["_onnx_info"], state["_onnx_mode"])
            res.train(state.get("training", False))

        return init

    def __reduce__(self):
        raise ConversionError(
            "an imported OnnxModule holds compiled node functions and cannot be pickled whole; "
            "save model.state_dict() and re-import the ONNX file, or copy.deepcopy it in memory"
        )

    @property
    def onnx_input_names(self) -> list[str]:
        return [s.name for s in self._onnx_info["inputs"]]

    @property
    def onnx_output_names(self) -> list[str]:
        return list(self._onnx_info["outputs"])

    @property
    def initializer_keys(self) -> dict[str, str]:
        """ONNX initializer name -> ``state_dict`` key."""
        return dict(self._onnx_info["weights"])

    def train(self, mode: bool = True) -> OnnxModule:
        super().train(mode)
        self._onnx_mode.training = mode
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not torch.compiler.is_compiling() and not torch.jit.is_tracing():
            args = self._check_inputs(args, kwargs)
            try:
                return super().__call__(*args)
            except OnnxportError:
                raise
            except Exception as exc:
                raise _call_failure(self, args, exc) from exc
        elif kwargs:
            args = self._check_inputs(args, kwargs)
        return super().__call__(*args)

    def _check_inputs(self, args: tuple, kwargs: dict) -> tuple:
        specs: list[InputSpec] = self._onnx_info["inputs"]
        values = bind_inputs([s.name for s in specs], args, kwargs,
                             {arg: i for i, arg in enumerate(self._onnx_info["input_args"])})
        call = CallCheck()
        out = []
        for spec, v in zip(specs, values):
            name = spec.name
            if isinstance(v, np.ndarray):
                v = dtypes.from_numpy(v)
            if not spec.is_tensor:
                out.append(_other_input(name, v))
                continue
            if not isinstance(v, torch.Tensor):
                raise InputError(f"input {name!r} must be a torch.Tensor, got {type(v).__name__}")
            want = _torch_dtype(spec.dtype)
            if want is not None and v.dtype != want:
                raise InputError(f"input {name!r} must have dtype {want}, got {v.dtype} (no implicit casts)")
            call.shape(spec, v.shape)
            out.append(v)
        return tuple(out)


def _other_input(name: str, v: Any) -> Any:
    """A sequence (list of tensors) or optional (None, tensor or sequence) graph input, numpy converted."""
    if v is None or isinstance(v, torch.Tensor):
        return v
    if isinstance(v, (list, tuple)):
        items = [dtypes.from_numpy(x) if isinstance(x, np.ndarray) else x for x in v]
        for x in items:
            if not isinstance(x, torch.Tensor):
                raise InputError(f"input {name!r} is a sequence of tensors, got an item of type {type(x).__name__}")
        return items
    raise InputError(f"input {name!r} must be a tensor, a list of tensors or None, got {type(v).__name__}")


class _State:
    """What all graph builders of one import share."""

    def __init__(self, plan: ImportPlan, options: dict[str, Any]):
        self.plan = plan
        self.root = nn.Module()
        self.mode = Mode()
        self.static: dict[ir.Value, torch.Tensor] = {}
        self.from_init: set[ir.Value] = set()
        self.trainable: set[ir.Value] = set()
        self.registered: dict[ir.Value, str] = {}
        self.kinds: dict[ir.Value, str] = {}
        self.paths: set[str] = set()
        #: every proper dotted prefix of a path in ``paths`` (modules that hold them)
        self._prefixes: set[str] = set()
        self._next: dict[str, int] = {}
        self.weights: dict[str, str] = {}
        self.modules: dict[str, nn.Module] = {}
        self.options = options
        self.use_modules = options.get("modules", True)
        self.trainable_mode = options.get("trainable", "auto")

    def unique_path(self, wanted: str) -> str:
        parts = [_part(p) for p in wanted.split(".")] if wanted else ["_"]
        path = ".".join(parts)
        base, k = path, self._next.get(path, 1)
        while path in self.paths or path in self._prefixes or self._prefix_taken(path):
            path = f"{base}_{k}"
            k += 1
        self.paths.add(path)
        if path != base:
            self._next[base] = k
        parts = path.split(".")
        self._prefixes.update(".".join(parts[:i]) for i in range(1, len(parts)))
        return path

    def _prefix_taken(self, path: str) -> bool:
        parts = path.split(".")
        return any(".".join(parts[:i]) in self.paths for i in range(1, len(parts)))

    def set_attr(self, path: str, obj: Any, kind: str) -> None:
        *mods, last = path.split(".")
        m = self.root
        for p in mods:
            if not hasattr(m, p):
                m.add_module(p, nn.Module())
            m = getattr(m, p)
        if kind == "param":
            m.register_parameter(last, obj)
        elif kind == "buffer":
            m.register_buffer(last, obj, persistent=True)
        elif kind == "const":
            m.register_buffer(last, obj, persistent=False)
        else:
            m.add_module(last, obj)


class _GraphBuilder:
    def __init__(self, state: _State, graph: ir.Graph, parent: _GraphBuilder | None = None):
        self.state = state
        self.graph = graph
        self.parent = parent
        self.fx = fx.Graph()
        self.env: dict[ir.Value, fx.Node] = {}
        self.captures: list[ir.Value] = []
        self._cap_nodes: dict[ir.Value, fx.Node] = {}
        #: values of shape programs not yet needed at runtime: value -> (fn, node, output index)
        self.lazy: dict[ir.Value, tuple[NodeFn, ir.Node, int]] = {}
        #: Add nodes computed by a fused MatMul+Add (``_linear``): node -> its fx node
        self._absorbed: dict[ir.Node, fx.Node] = {}

    @property
    def root(self) -> nn.Module:
        return self.state.root

    # -- static values --------------------------------------------------------------------
    def static_value(self, v: ir.Value) -> torch.Tensor | None:
        return self.state.static.get(v)

    def is_weight(self, v: ir.Value) -> bool:
        return v in self.state.static and v in self.state.from_init

    def is_trainable(self, v: ir.Value) -> bool:
        return v in self.state.trainable

    def weight(self, v: ir.Value, register: bool = True) -> torch.Tensor:
        """The Parameter/buffer object of a static value, created once (shared by all uses).

        With ``register`` it also gets a path in the module tree (named after the initializer);
        module builders take the object unregistered and their module's path names it.
        """
        st = self.state
        if v not in st.kinds:
            tensor = st.static[v]
            if v in st.trainable:
                st.static[v] = nn.Parameter(tensor, requires_grad=True)
                st.kinds[v] = "param"
            else:
                st.kinds[v] = "buffer" if v in st.from_init and v.is_initializer() else "const"
        if register and v not in st.registered:
            kind = st.kinds[v]
            if kind == "const":
                path = st.unique_path(f"onnx_constants.{v.name or 'c'}")
            else:
                path = st.unique_path(v.name or "weight")
            st.set_attr(path, st.static[v], kind)
            st.registered[v] = path
            if kind != "const" and v.name:
                st.weights[v.name] = path
        return st.static[v]

    # -- values -> fx nodes ---------------------------------------------------------------
    def value_node(self, v: ir.Value) -> Any:
        if v in self.env:
            return self.env[v]
        if v in self.lazy:
            return self._materialize(v)
        if v in self._cap_nodes:
            return self._cap_nodes[v]
        if self.parent is None:
            if v in self.state.static:
                self.weight(v)
                node = self.fx.get_attr(self.state.registered[v])
                self.env[v] = node
                return node
            raise ConversionError(f"value {v.name!r} is used before it is computed")
        if v in self.state.static:
            # a folded constant or weight: passed in from the root module like an outer value
            return self._capture(v)
        raise ConversionError(f"value {v.name!r} is not visible in subgraph {self.graph.name!r}")

    def _capture(self, v: ir.Value) -> fx.Node:
        """A new capture placeholder for ``v`` (after the existing placeholders, in capture order)."""
        last = None
        for n in self.fx.nodes:
            if n.op != "placeholder":
                break
            last = n
        taken = {n.target for n in self.fx.nodes if n.op == "placeholder"}
        base = name = _part(f"outer_{v.name or len(self.captures)}")
        k = 1
        while name in taken:  # adapters may give several constants one name
            name, k = f"{base}_{k}", k + 1
        with self.fx.inserting_after(last) if last is not None else self.fx.inserting_before(None):
            node = self.fx.placeholder(name)
        self.captures.append(v)
        self._cap_nodes[v] = node
        return node

    # -- building -----------------------------------------------------------------------
    def build(self, formal_inputs: list[ir.Value], captures: list[ir.Value]) -> list[fx.Node]:
        taken: set[str] = set()

        def unique(name: str) -> str:  # two file names may sanitize alike ("a.b", "a_b")
            name = "v" + name if name[0].isdigit() else name  # an argument name is an identifier
            base, k = name, 1
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            taken.add(name)
            return name

        for i, inp in enumerate(formal_inputs):
            self.env[inp] = self.fx.placeholder(unique(_part(inp.name or f"input_{i}")))
        for i, cap in enumerate(captures):
            self._cap_nodes[cap] = self.fx.placeholder(unique(_part(f"outer_{cap.name or i}")))
        self.captures = list(captures)
        for node in self.graph:
            self._node(node)
        return [self.value_node(o) for o in self.graph.outputs]

    def _foldable(self, node: ir.Node) -> bool:
        if node.op_type in NO_FOLD_OPS or node.domain not in ("", "ai.onnx"):
            return False
        if any(a.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS) for a in node.attributes.values()):
            return False
        for v in node.inputs:
            if v is None:
                continue
            if v not in self.state.static or v in self.state.trainable:
                return False
        static = self.state.static
        # size-growing ops are checked before computing: a huge result stays a runtime computation
        return fold_fits(node.op_type, [None if v is None else static[v] for v in node.inputs],
                         lambda a: a.shape, lambda a: a.detach().cpu().numpy(), _FOLD_LIMIT)

    def _shape_program_node(self, node: ir.Node) -> bool:
        """Whether ``node`` depends only on runtime shapes and constants (see ``ShapeProgram``)."""
        if self.parent is not None or node.op_type in NO_FOLD_OPS or node.domain not in ("", "ai.onnx"):
            return False
        if any(a.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS) for a in node.attributes.values()):
            return False
        st = self.state
        if node.op_type in _SHAPE_ROOTS:
            return len(node.inputs) == 1 and node.inputs[0] is not None
        lazy = False
        for v in node.inputs:
            if v is None:
                continue
            if v in self.lazy:
                lazy = True
            elif v not in st.static or v in st.trainable:
                return False
            elif v in st.from_init and v.is_initializer() and st.static[v].is_floating_point() and st.static[v].dim() >= 1:
                return False  # a float weight of the model's state: stays a registered tensor
        return lazy

    def _linear_add(self, node: ir.Node) -> ir.Node | None:
        """The Add that makes ``MatMul(x, W) + b`` a linear layer (2-D weight, 1-D bias), if any."""
        st = self.state
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            return None
        x, w = node.inputs
        y = node.outputs[0]
        if x is None or w is None or x in st.static or x in self.lazy or w not in st.static or y.is_graph_output():
            return None
        wt = st.static[w]
        if wt.dim() != 2 or not wt.is_floating_point() or x.dtype != w.dtype:
            return None
        uses = list(y.uses())
        if len(uses) != 1:
            return None
        add = uses[0].node
        if add.op_type != "Add" or add.domain not in ("", "ai.onnx") or add.graph is not node.graph:
            return None
        if len(add.inputs) != 2 or len(add.outputs) != 1 or add.inputs[0] is add.inputs[1]:
            return None
        if (add.domain, add.op_type, add.overload) in st.plan.model.functions:
            return None
        b = add.inputs[1 - uses[0].idx]
        if b is None or b not in st.static:
            return None
        bt = st.static[b]
        if bt.dim() != 1 or bt.shape[0] != wt.shape[1] or bt.dtype != wt.dtype or b.dtype != w.dtype:
            return None
        return add

    def _materialize(self, v: ir.Value) -> fx.Node:
        """The fx node of a shape-program value, built on its first runtime use."""
        steps: list[_ShapeStep] = []
        index: dict[ir.Node, int] = {}
        roots: list[ir.Value] = []

        def visit(node: ir.Node, fn: NodeFn) -> int:
            if node in index:
                return index[node]
            sources: list[tuple[str, Any] | None] = []
            for v_in in node.inputs:
                if v_in is None:
                    sources.append(None)
                elif v_in in self.lazy and node.op_type not in _SHAPE_ROOTS:
                    fn_in, producer, k = self.lazy[v_in]
                    sources.append(("value", (visit(producer, fn_in), k)))
                elif node.op_type in _SHAPE_ROOTS:
                    if v_in not in roots:
                        roots.append(v_in)
                    sources.append(("root", roots.index(v_in)))
                else:
                    self.weight(v_in)  # registered as before (import-time facts, same state_dict)
                    sources.append(("static", self.state.static[v_in]))
            index[node] = len(steps)
            steps.append(_ShapeStep(fn, sources, len(node.outputs)))
            return index[node]

        fn, producer, k = self.lazy[v]
        j = visit(producer, fn)
        name = _part(f"shape_{producer.op_type}_{producer.name or ''}").lower()
        program = ShapeProgram(steps, (j, k), len(roots), name, copy_out=v.is_graph_output())
        out = self.fx.call_function(program, tuple(self.value_node(r) for r in roots))
        _annotate(out, producer)
        self.env[v] = out
        return out

    def _node(self, node: ir.Node) -> None:
        st = self.state
        if (node.domain, node.op_type, node.overload) in st.plan.model.functions:
            from .functions import call_function  # a kept model-local function (issue 3)

            return call_function(self, node)
        if node in self._absorbed:
            self.env[node.outputs[0]] = self._absorbed.pop(node)
            return
        info = st.plan.info(node)
        ctx = NodeContext(self, node, info.opset, info.version, st.mode)
        attrs = dict(info.attributes)
        prim = info.primitive

        if self._foldable(node):
            inputs = [st.static[v] if v is not None else None for v in node.inputs]
            result = NodeFn(prim.fn, ctx, attrs)(*inputs)
            outs = _as_list(result, len(node.outputs))
            # an empty optional (None) that is read stays a runtime value: static holds tensors only
            empty_used = any(t is None and ctx.output_used(i) for i, t in enumerate(outs))
            derived = any(v is not None and v in st.from_init for v in node.inputs)
            # a weight generated from initializers (the light models' ConstantOfShape(W__SHAPE))
            # is the model's weight at any size, as an initializer would be
            kept = [isinstance(t, torch.Tensor) and (t.numel() <= _FOLD_LIMIT or (
                derived and t.is_floating_point() and self._is_weight_use(v))) for v, t in zip(node.outputs, outs) if t is not None]
            if not empty_used and all(kept):
                ctx._freeze()
                for v, t in zip(node.outputs, outs):
                    if t is None:
                        continue
                    st.static[v] = t
                    if derived:
                        st.from_init.add(v)
                        if t.is_floating_point() and st.trainable_mode != "none" and self._is_weight_use(v):
                            st.trainable.add(v)
                return

        if node.op_type == "MatMul" and node.domain in ("", "ai.onnx"):
            add = self._linear_add(node)
            if add is not None:
                x, w = node.inputs
                b = add.inputs[1] if add.inputs[0] is node.outputs[0] else add.inputs[0]
                fn = NodeFn(_linear, ctx, {})
                ctx._freeze()
                out = self.fx.call_function(fn, (self.value_node(x), self.value_node(w), self.value_node(b)))
                _annotate(out, node)
                out.meta["onnx_fused"] = [add.name]
                self.env[node.outputs[0]] = out
                self._absorbed[add] = out
                return

        if self._shape_program_node(node):
            fn = NodeFn(prim.fn, ctx, attrs)
            ctx._freeze()
            for k, v in enumerate(node.outputs):
                self.lazy[v] = (fn, node, k)
            return

        if self.parent is None and st.use_modules and prim.builder is not None:
            try:
                built = prim.builder(ctx, **attrs)
            except OnnxportError:
                raise
            except Exception as exc:  # the weights' shapes do not fit the op: the node is named
                raise ConversionError(
                    f"node {ctx.label} (opset {ctx.opset}): cannot build its layer: {type(exc).__name__}: {exc}"
                ) from exc
            if built is not None:
                module, runtime = built
                path = st.unique_path(self._module_path(node, module))
                st.set_attr(path, module, "module")
                for i, v in enumerate(node.inputs):
                    if v is not None and i not in runtime and v.name and v in st.registered:
                        st.weights.setdefault(v.name, st.registered[v])
                self._record_module_weights(node, module, path)
                args = tuple(self.value_node(node.inputs[i]) for i in runtime)
                out = self.fx.call_module(path, args)
                _annotate(out, node)
                ctx._freeze()
                if any(ctx.output_used(i) for i in range(1, len(node.outputs))):
                    self._bind_outputs(node, out)
                else:
                    self.env[node.outputs[0]] = out
                return

        subgraphs = []
        cap_args: list[Any] = []
        for name, attr in node.attributes.items():
            if attr.type == ir.AttributeType.GRAPH:
                sub = self._subgraph(attr.value)
                subgraphs.append((name, [sub], False))
            elif attr.type == ir.AttributeType.GRAPHS:
                subgraphs.append((name, [self._subgraph(g) for g in attr.value], True))
        for _, subs, _ in subgraphs:
            for sub in subs:
                cap_args.extend(self.value_node(v) for v in sub._captured)
        args = tuple(self.value_node(v) if v is not None else None for v in node.inputs) + tuple(cap_args)
        fn = NodeFn(prim.fn, ctx, attrs, subgraphs)
        ctx._freeze()
        out = self.fx.call_function(fn, args)
        _annotate(out, node)
        self._bind_outputs(node, out)

    def _is_weight_use(self, v: ir.Value) -> bool:
        return is_weight_use(v, _SETTING_INPUTS)

    def _module_path(self, node: ir.Node, module: nn.Module) -> str:
        """Where a native layer lives: ``conv1`` for weights named ``conv1.weight``, else the node name."""
        owned = {id(t): k for k, t in list(module.named_parameters()) + list(module.named_buffers())}
        for v in node.inputs:
            if v is None or v not in self.state.static or not v.name:
                continue
            key = owned.get(id(self.state.static[v]))
            if key is not None and v.name.endswith("." + key) and v not in self.state.registered:
                return v.name[: -len(key) - 1]
        return node.name or node.op_type.lower()

    def _record_module_weights(self, node: ir.Node, module: nn.Module, path: str) -> None:
        by_id = {id(p): k for k, p in module.named_parameters(remove_duplicate=False)}
        by_id.update({id(b): k for k, b in module.named_buffers(remove_duplicate=False)})
        for v in node.inputs:
            if v is None or v not in self.state.static or not v.name:
                continue
            key = by_id.get(id(self.state.static[v]))
            if key is not None:
                self.state.weights.setdefault(v.name, f"{path}.{key}")
                self.state.registered.setdefault(v, f"{path}.{key}")

    def _bind_outputs(self, node: ir.Node, out: fx.Node) -> None:
        if len(node.outputs) == 1:
            self.env[node.outputs[0]] = out
            return
        for i, v in enumerate(node.outputs):
            if v.name and (v.uses() or v.is_graph_output()):
                self.env[v] = self.fx.call_function(operator.getitem, (out, i))

    def _subgraph(self, graph: ir.Graph) -> Subgraph:
        captured = _free_values(graph)
        child = _GraphBuilder(self.state, graph, self)
        outs = child.build(list(graph.inputs), captured)
        child.fx.output(tuple(outs))
        captured = child.captures  # the free values plus folded constants captured while building
        module = fx.GraphModule(nn.Module(), child.fx, class_name="OnnxSubgraph")
        sub = Subgraph(module, len(graph.inputs), len(captured), graph.name or "subgraph")
        sub._captured = captured  # type: ignore[attr-defined]
        return sub


def _linear(ctx: NodeContext, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``MatMul(x, W) + b`` with an [in, out] weight and a bias of its columns, as one GEMM."""
    if x.dim() == 0:
        raise ctx.error("MatMul needs inputs of rank >= 1, got a scalar")
    return torch.nn.functional.linear(x, w.t(), b)


class _Locate(fx.Interpreter):
    """Re-runs a failed call node by node to find the ONNX node that fails."""

    failed: fx.Node | None = None

    def run_node(self, n: fx.Node) -> Any:
        try:
            return super().run_node(n)
        except Exception:
            if self.failed is None:
                self.failed = n
            raise


def _call_failure(module: OnnxModule, args: tuple, exc: Exception) -> ConversionError:
    """A framework error at call time, as a ConversionError naming the ONNX node where it happened."""
    locate = _Locate(module)
    try:
        with torch.no_grad():
            locate.run(*args)
    except Exception:  # noqa: BLE001 - the same failure again: we only want where it happened
        pass
    n = locate.failed
    if n is not None and "onnx_node" in n.meta:
        domain, op = n.meta.get("onnx_op", ("", "?"))
        where = f"node {n.meta['onnx_node'] or '<unnamed>'!r} ({domain or 'ai.onnx'}::{op})"
    else:
        where = f"fx node {n.name!r}" if n is not None else "the model"
    return ConversionError(f"running {where} failed: {type(exc).__name__}: {exc}")


def _annotate(fx_node: fx.Node, node: ir.Node) -> None:
    """Keep the ONNX node's identity on the fx node (name, op, metadata such as scopes)."""
    fx_node.meta["onnx_node"] = node.name
    fx_node.meta["onnx_op"] = (node.domain, node.op_type)
    if node.metadata_props:
        fx_node.meta["onnx_metadata"] = dict(node.metadata_props)


def _as_list(result: Any, n: int) -> list[Any]:
    if n == 1:
        return [result]
    return list(result)


def _free_values(graph: ir.Graph) -> list[ir.Value]:
    """Values a subgraph (and its nested subgraphs) reads from outside itself, first-use order."""
    defined: set[ir.Value] = set(graph.inputs)
    free: dict[ir.Value, None] = {}

    def visit(g: ir.Graph, local: set[ir.Value]) -> None:
        local = set(local) | set(g.inputs)
        for node in g:
            for v in node.inputs:
                if v is not None and v not in local:
                    free.setdefault(v, None)
            for attr in node.attributes.values():
                subs = [attr.value] if attr.type == ir.AttributeType.GRAPH else (
                    list(attr.value) if attr.type == ir.AttributeType.GRAPHS else [])
                for sg in subs:
                    visit(sg, local)
            local.update(node.outputs)
        for o in g.outputs:
            if o not in local:
                free.setdefault(o, None)

    visit(graph, defined)
    return list(free)


def _torch_dtype(dtype: ir.DataType | None) -> torch.dtype | None:
    """The torch dtype an input of ONNX type ``dtype`` must have (None: not checked)."""
    if dtype is None:
        return None
    try:
        return dtypes.to_torch_dtype(dtype)
    except ConversionError:
        return None


def import_plan(plan: ImportPlan, **options: Any) -> OnnxModule:
    """Build the ``OnnxModule`` for a prepared plan."""
    state = _State(plan, {**plan.options, **options})
    graph = plan.model.graph
    for g in iter_graphs(graph):
        for v in g.initializers.values():
            if v.const_value is None:
                continue
            try:
                t = dtypes.tensor_from_ir(v.const_value)
            except OnnxportError as exc:
                raise ConversionError(f"initializer {v.name!r}: {exc}") from exc
            if isinstance(v.const_value, ir.ExternalTensor):
                v.const_value.release()  # unmap the file's pages now that torch holds a copy (peak memory)
            state.static[v] = t
            state.from_init.add(v)
    builder = _GraphBuilder(state, graph)
    for v in list(state.static):
        t = state.static[v]
        if t.is_floating_point() and state.trainable_mode != "none" and t.dim() >= 1 and builder._is_weight_use(v):
            state.trainable.add(v)
        elif t.is_floating_point() and state.trainable_mode == "all":
            state.trainable.add(v)
    outs = builder.build(list(graph.inputs), [])
    builder.fx.output(outs[0] if len(outs) == 1 else tuple(outs))
    info = {
        "inputs": [input_spec(v) for v in graph.inputs],
        # the sanitized, unique argument names of forward(), accepted as keywords too
        "input_args": [builder.env[v].target for v in graph.inputs],
        "outputs": [v.name for v in graph.outputs],
        "output_dtypes": [v.dtype for v in graph.outputs],
        "weights": dict(state.weights),
        "graph_name": graph.name,
    }
    module = OnnxModule(state.root, builder.fx, info, state.mode)
    if state.options.get("hierarchy", True):
        from .hierarchy import restore

        restore(module, state)  # the exporting model's module tree (issue 3)
    module.train(options.get("training", False))
    return module


class TorchBackend(Backend, ExportSupport):
    """The PyTorch backend: ONNX -> ``torch.nn.Module``; ``torch.nn.Module`` -> ONNX (ExportSupport)."""

    name = "torch"

    # -- native files (onnxport convert): see onnxport_torch.native ---------------------------------------
    native_suffixes = (".pt2", ".pt")

    def can_load(self, path: Any) -> bool:
        """Whether ``path`` is a native file or folder this backend reads."""
        from . import native

        return native.can_load(path)

    def save(self, native_obj: Any, path: Any, example_inputs: Any = ()) -> None:
        """Write ``native_obj`` as native files at ``path`` (see :mod:`onnxport_torch.native`)."""
        from . import native

        native.save(native_obj, path, example_inputs)

    def load(self, path: Any) -> Any:
        """The callable native object at ``path``."""
        return self.load_with_inputs(path)[0]

    def load_with_inputs(self, path: Any) -> tuple[Any, tuple[Any, ...]]:
        """The native object at ``path`` and example inputs to export it with."""
        from . import native

        return native.load(path)

    #: model-local functions become reusable submodules (``prepare(keep_functions=...)``)
    keep_functions = True

    @property
    def expected_failures(self) -> dict[str, str]:
        from .expected_failures import EXPECTED_FAILURES

        return EXPECTED_FAILURES

    @property
    def dtypes(self) -> frozenset[ir.DataType]:
        return dtypes.HELD_TYPES

    def import_model(self, plan: ImportPlan, **options: Any) -> OnnxModule:
        return import_plan(plan, **options)

    def to_sequential(self, plan: ImportPlan, **options: Any) -> nn.Sequential:
        from .sequential import to_sequential

        return to_sequential(plan, **options)

    def from_numpy(self, array: np.ndarray) -> torch.Tensor:
        """A torch tensor with exactly the array's values and dtype (ml_dtypes included)."""
        return dtypes.from_numpy(array)

    def to_numpy(self, tensor: torch.Tensor) -> np.ndarray:
        """A numpy array with exactly the tensor's values and dtype."""
        return dtypes.to_numpy(tensor)

    def run(self, module: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Run an imported module on numpy inputs; outputs as numpy (testkit, CLI)."""
        args = [dtypes.from_numpy(a) if isinstance(a, np.ndarray) else a for a in inputs]
        with torch.no_grad():
            out = module(*args)
        outs = list(out) if isinstance(out, tuple) else [out]
        kinds = getattr(module, "_onnx_info", {}).get("output_dtypes") or [None] * len(outs)
        names = getattr(module, "_onnx_info", {}).get("outputs") or [str(i) for i in range(len(outs))]
        result = []
        for o, k, name in zip(outs, kinds, names):
            if isinstance(o, torch.Tensor) and o.numel() * o.element_size() > _MAX_OUTPUT_BYTES:
                raise ConversionError(f"output {name!r} has shape {tuple(o.shape)}: "
                                      f"{o.numel() * o.element_size()} bytes do not fit in memory")
            try:
                result.append(_to_py(o, k))
            except (MemoryError, ValueError, RuntimeError) as exc:
                raise ConversionError(f"output {name!r} cannot be read as numpy: {exc}") from exc
        return result


def _to_py(o: Any, onnx_dtype: Any = None) -> Any:
    if isinstance(o, torch.Tensor):
        return dtypes.to_numpy(o, onnx_dtype)  # 4-bit types held widened come back as such
    if isinstance(o, (list, tuple)):
        return [_to_py(x) for x in o]
    return o
