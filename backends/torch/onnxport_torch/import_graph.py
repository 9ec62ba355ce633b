"""ONNX IR graph -> ``torch.fx.Graph``: the builders of one import and the state they share.

:class:`GraphBuilder` turns one (sub)graph into fx nodes: static values fold at import time,
shape computations become :class:`~onnxport_torch.runtime.ShapeProgram` calls, native layers
become submodules, every other node a :class:`~onnxport_torch.runtime.NodeFn` call.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import onnx_ir as ir
import torch
import torch.fx as fx
from torch import nn

from onnxport.errors import ConversionError, OnnxportError
from onnxport.importing.plan import ImportPlan, is_weight_use
from onnxport.ir.safety import fold_fits
from onnxport.plugin.opfacts import NO_FOLD_OPS, SETTING_INPUTS, STATISTICS_INPUTS

from .codegen import ImportGraph
from .context import Mode, NodeContext
from .runtime import SHAPE_ROOTS, NodeFn, ShapeProgram, ShapeStep, Subgraph, _linear, name_part
from .shape_values import LIST_INPUTS

#: running statistics are buffers in torch (BatchNorm updates them itself), never Parameters
#: inputs that never become trainable Parameters: settings and running statistics (buffers)
_SETTING_INPUTS = SETTING_INPUTS | STATISTICS_INPUTS
_FOLD_LIMIT = 1 << 26  # elements; larger folded constants stay runtime computations


class ImportState:
    """What all graph builders of one import share."""

    def __init__(self, plan: ImportPlan, options: dict[str, Any],
                 call_function: Callable[[GraphBuilder, ir.Node], None] | None = None):
        self.plan = plan
        #: emits a call of a kept model-local function (``onnxport_torch.functions``); None: none kept
        self.call_function = call_function
        #: compiled model-local functions: key -> (module path, number of inputs, number of outputs)
        self.functions: dict[tuple[str, str, str], tuple[str, int, int]] = {}
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
        if wanted and "." not in wanted:  # one level, the common case: no prefixes to check
            path = name_part(wanted)
            if path not in self.paths and path not in self._prefixes:
                self.paths.add(path)
                return path
        parts = [name_part(p) for p in wanted.split(".")] if wanted else ["_"]
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
        """Hold ``obj`` at ``path`` (a new, sanitized path: :meth:`unique_path`) in the build's own
        module tree, where the final module's placement reads it (``hierarchy.restore``)."""
        *mods, last = path.split(".")
        m = self.root
        for p in mods:
            child = m._modules.get(p)
            if child is None:
                child = m._modules[p] = nn.Module()
            m = child
        # the scratch tree is never seen or called: entries go straight into its tables
        if kind == "param":
            m._parameters[last] = obj
        elif kind in ("buffer", "const"):
            m._buffers[last] = obj
            if kind == "const":
                m._non_persistent_buffers_set.add(last)
        else:
            m._modules[last] = obj


class GraphBuilder:
    def __init__(self, state: ImportState, graph: ir.Graph, parent: GraphBuilder | None = None):
        self.state = state
        self.graph = graph
        self.parent = parent
        self.fx = ImportGraph()
        self.env: dict[ir.Value, fx.Node] = {}
        self.captures: list[ir.Value] = []
        self._cap_nodes: dict[ir.Value, fx.Node] = {}
        #: values of shape programs not yet needed at runtime: value -> (fn, node, output index)
        self.lazy: dict[ir.Value, tuple[NodeFn, ir.Node, int]] = {}
        #: shape programs built, with the value each computes
        self._programs: list[tuple[ShapeProgram, fx.Node]] = []
        #: Add nodes computed by a fused MatMul+Add (``linear``): node -> its fx node
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
                path = self.state.registered[v]
                node = self.fx.create_node("get_attr", path, name=path.replace(".", "_"))
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
        base = name = name_part(f"outer_{v.name or len(self.captures)}")
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
            self.env[inp] = self.fx.placeholder(unique(name_part(inp.name or f"input_{i}")))
        for i, cap in enumerate(captures):
            self._cap_nodes[cap] = self.fx.placeholder(unique(name_part(f"outer_{cap.name or i}")))
        self.captures = list(captures)
        for node in self.graph:
            self._node(node)
        outs = [self.value_node(o) for o in self.graph.outputs]
        for program, node in self._programs:
            self._ints_readers(program, node)
        return outs

    def _ints_readers(self, program: ShapeProgram, node: fx.Node) -> None:
        """Readers of a shape program's value that take it as a list of ints (``Reshape``'s shape...)
        read it from a twin program that gives Python ints: symbolic sizes when traced, nothing read
        back from a device. Other readers keep the tensor (on the roots' device)."""
        twin = None
        for user in list(node.users):
            fn = user.target
            if user.op != "call_function" or type(fn) is not NodeFn or fn.subgraphs:
                continue
            ctx = fn.ctx
            if ctx.domain not in ("", "ai.onnx"):
                continue
            args = list(user.args)
            for i, a in enumerate(args[: ctx.num_inputs]):
                if a is node and (ctx.op_type, i) in LIST_INPUTS:
                    if twin is None:
                        with self.fx.inserting_after(node):
                            twin = emit(self.fx, "call_function", program.ints_twin(), node.args)
                        twin.meta.update(node.meta)
                    args[i] = twin
            user.args = tuple(args)
        if not node.users and twin is not None:
            self.fx.erase_node(node)

    def _foldable(self, node: ir.Node) -> bool:
        if node.op_type in NO_FOLD_OPS or node.domain not in ("", "ai.onnx"):
            return False
        if node.attributes and _has_graph_attribute(node):
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
        if node.attributes and _has_graph_attribute(node):
            return False
        st = self.state
        if node.op_type in SHAPE_ROOTS:
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
        steps: list[ShapeStep] = []
        index: dict[ir.Node, int] = {}
        roots: list[ir.Value] = []

        def visit(node: ir.Node, fn: NodeFn) -> int:
            if node in index:
                return index[node]
            sources: list[tuple[str, Any] | None] = []
            for v_in in node.inputs:
                if v_in is None:
                    sources.append(None)
                elif v_in in self.lazy and node.op_type not in SHAPE_ROOTS:
                    fn_in, producer, k = self.lazy[v_in]
                    sources.append(("value", (visit(producer, fn_in), k)))
                elif node.op_type in SHAPE_ROOTS:
                    if v_in not in roots:
                        roots.append(v_in)
                    sources.append(("root", roots.index(v_in)))
                else:
                    self.weight(v_in)  # registered as before (import-time facts, same state_dict)
                    sources.append(("static", self.state.static[v_in]))
            index[node] = len(steps)
            steps.append(ShapeStep(fn, sources, len(node.outputs)))
            return index[node]

        fn, producer, k = self.lazy[v]
        j = visit(producer, fn)
        name = name_part(f"shape_{producer.op_type}_{producer.name or ''}").lower()
        program = ShapeProgram(steps, (j, k), len(roots), name, copy_out=v.is_graph_output())
        out = emit(self.fx, "call_function", program, tuple(self.value_node(r) for r in roots))
        annotate(out, producer)
        self._programs.append((program, out))  # readers that take ints get their own node (build)
        self.env[v] = out
        return out

    def _node(self, node: ir.Node) -> None:
        st = self.state
        if st.call_function is not None and (node.domain, node.op_type, node.overload) in st.plan.model.functions:
            return st.call_function(self, node)  # a kept model-local function (issue 3)
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
                out = emit(self.fx, "call_function", fn, (self.value_node(x), self.value_node(w), self.value_node(b)))
                annotate(out, node)
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
                out = emit(self.fx, "call_module", path, args)
                annotate(out, node)
                ctx._freeze()
                if any(ctx.output_used(i) for i in range(1, len(node.outputs))):
                    self._bind_outputs(node, out)
                else:
                    self.env[node.outputs[0]] = out
                return

        subgraphs = []
        cap_args: list[Any] = []
        for name, attr in node.attributes.items() if node.attributes else ():
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
        out = emit(self.fx, "call_function", fn, args)
        annotate(out, node)
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
                self.env[v] = emit(self.fx, "call_function", operator.getitem, (out, i))

    def _subgraph(self, graph: ir.Graph) -> Subgraph:
        captured = _free_values(graph)
        child = GraphBuilder(self.state, graph, self)
        outs = child.build(list(graph.inputs), captured)
        child.fx.output(tuple(outs))
        captured = child.captures  # the free values plus folded constants captured while building
        module = fx.GraphModule(called_modules(child.fx, self.state.root), child.fx, class_name="OnnxSubgraph")
        sub = Subgraph(module, len(graph.inputs), len(captured), graph.name or "subgraph")
        sub._captured = captured  # type: ignore[attr-defined]
        return sub



def called_modules(graph: fx.Graph, source: nn.Module, root: nn.Module | None = None) -> nn.Module:
    """``root`` (default: a new module) holding, at their paths in ``source`` (the build's module
    tree), the modules ``graph`` calls that ``root`` lacks: the kept model-local functions a
    subgraph or function body calls, so that its own ``GraphModule`` finds them."""
    root = nn.Module() if root is None else root
    for n in graph.nodes:
        if n.op != "call_module":
            continue
        *parents, last = str(n.target).split(".")
        m = root
        for p in parents:
            child = m._modules.get(p)
            if child is None:
                child = m._modules[p] = nn.Module()
            m = child
        if last not in m._modules:
            m._modules[last] = source.get_submodule(str(n.target))
    return root


def emit(graph: fx.Graph, op: str, target: Any, args: tuple) -> fx.Node:
    """A new fx node calling ``target`` on ``args`` (fx nodes and import-time constants).

    ``fx.Graph.create_node`` walks the arguments with pytree looking for raw SymInts, most of the
    cost of a node in a long graph; an import never passes any, so the node is created without
    arguments and then given them (fx links the argument nodes' users the same way).
    """
    # a NodeFn's name is lower-case and safe already: fx would snake-case it to itself
    node = graph.create_node(op, target, name=target.__name__ if type(target) is NodeFn else None)
    node.args = args
    return node


def annotate(fx_node: fx.Node, node: ir.Node) -> None:
    """Keep the ONNX node's identity on the fx node (name, op, metadata such as scopes)."""
    fx_node.meta["onnx_node"] = node.name
    fx_node.meta["onnx_op"] = (node.domain, node.op_type)
    if node.metadata_props:
        fx_node.meta["onnx_metadata"] = dict(node.metadata_props)


def _has_graph_attribute(node: ir.Node) -> bool:
    return any(a.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS) for a in node.attributes.values())


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



__all__ = ["GraphBuilder", "ImportState", "annotate", "emit"]
