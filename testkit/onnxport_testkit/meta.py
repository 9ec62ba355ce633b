"""Meta-checks: every primitive has cases, every hook is documented, every expected failure is reviewed."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from typing import Any

from onnxport.plugin.registry import ImportPrimitive

from .cases import NodeCase
from .semantic_cases import cases_of

#: variants a failure key may name after a node case: ``test_abs[float16]``
_CASE_VARIANT = re.compile(r"^(random|float64|float16|int32|int64|dynbatch|roundtrip|opset\d+)$")


def primitive_label(prim: Any) -> str:
    """``torch import ai.onnx::Relu since 14`` / ``torch export aten.relu.default``."""
    if isinstance(prim, ImportPrimitive):
        return f"{prim.backend} import {prim.domain or 'ai.onnx'}::{prim.op_type} since {prim.since}"
    return f"{prim.backend} export {prim.target}"


def cases_for_import(prim: Any, registry: Any, cases: Iterable[NodeCase]) -> tuple[list[str], str]:
    """Names of the cases that exercise an import primitive, and why there are none (if so).

    A node case exercises a primitive when it uses the op, every op of the case is registered
    in the backend, and the model's version of the op resolves to this primitive (after the
    core adapts it to the newest form). Declared ``ImportCase``\\ s always count.
    """
    from onnxport.plugin import spec

    from .runner import backend_object, failure_table, missing_ops

    # a case listed as an expected failure (as a whole) tests nothing: it does not count
    listed = set(failure_table(backend_object(prim.backend)))
    names = [f"declared[{c.name or i}]" for i, c in enumerate(cases_of(prim))]
    try:
        newest = spec.latest_version(prim.op_type, prim.domain)
    except Exception:  # noqa: BLE001 - a custom op: only declared cases can test it
        newest = 10**6
    resolved = registry.find_import(prim.backend, prim.domain, prim.op_type, newest)
    if resolved is not prim and resolved is not None and resolved.key != prim.key:
        return names, f"shadowed by the newer primitive since {resolved.since} ({resolved.source})"
    skipped = failing = 0
    for case in cases:
        if (prim.domain, prim.op_type) not in case.ops:
            continue
        if missing_ops(prim.backend, case.ops):
            skipped += 1
            continue
        if case.name in listed:
            failing += 1
            continue
        names.append(case.name)
    why = ""
    if not names:
        why = (
            f"{skipped} node case(s) use the op but also use ops the backend lacks"
            if skipped
            else f"its {failing} node case(s) are all listed as expected failures"
            if failing
            else "no official node case uses this op and it declares no ImportCase"
        )
    return names, why


def check_primitive_has_cases(prim: Any, registry: Any, cases: Iterable[NodeCase]) -> None:
    """Fail, naming the primitive, when nothing tests it."""
    if isinstance(prim, ImportPrimitive):
        names, why = cases_for_import(prim, registry, cases)
        if not names:
            raise AssertionError(
                f"{primitive_label(prim)} ({prim.source}) has no test case: {why}. Declare "
                "cases=[ImportCase(...)] in its @importer, or register the ops its node cases need."
            )
    elif not prim.samples:
        raise AssertionError(
            f"{primitive_label(prim)} ({prim.source}) declares no samples: "
            "add samples=[Sample(fn, args, emits=[...])] to its @exporter"
        )


def hook_problems(hookspecs_module: Any) -> dict[str, list[str]]:
    """Per hook of a hookspecs module, what its docstring fails to document (empty when fine)."""
    project = getattr(hookspecs_module, "PROJECT", "onnxport")
    out: dict[str, list[str]] = {}
    for name, fn in vars(hookspecs_module).items():
        if not callable(fn) or not hasattr(fn, f"{project}_spec"):
            continue
        doc = inspect.getdoc(fn) or ""
        problems = []
        if len(doc.strip()) < 20:
            problems.append("no docstring saying what the hook is for")
        for param in inspect.signature(fn).parameters:
            if f":param {param}:" not in doc:
                problems.append(f"argument {param!r} is not documented (':param {param}:')")
        out[name] = problems
    return out


#: what a reason that holds on some machines only names: (what it is, pattern); searched in the
#: reason made lower-case and Unicode-normalised (NFKC)
MACHINE_TERMS: tuple[tuple[str, str], ...] = (
    ("a CPU vector extension", r"\b(avx|sse|ssse|neon|sve|amx|vnni|altivec|vsx|simd|f16c|fma[34]?)"
                               r"(?:[-_ ]?(?:\d+|vl|bw|dq|bf16|fp16|f|cd|er|pf|vnni|ifma|vbmi\d?|int8|tile))*\b"),
    ("a CPU architecture or vendor", r"\b(x86(?:[-_]64)?|amd64|aarch64|arm(?:64|v\d+)?|intel|amd|apple silicon|"
                                     r"risc-?v|power(?:pc|9|10)|ppc64(?:le)?)\b"),
    ("a kernel library that is picked per machine", r"\b(one[-_ ]?dnn|mkl(?:[-_ ]?dnn)?|dnnl|openblas|blis|"
                                                   r"accelerate framework|xnnpack|eigen threadpool)\b"),
    ("a switch of the CPU kernels", r"(aten_cpu_capability|tf_enable_onednn_opts|xla_cpu_\w+|xla_flags|"
                                    r"cpu[-_ ]?capabilit(?:y|ies)|max[-_ ]?isa)"),
    ("the machine the case ran on", r"\b(this|that|the test|the ci|our|my|some|other|older|newer|another|a different|"
                                    r"one|every|each|such|most|many|few|which|whose|whichever|the same)"
                                    r"(?: \w+)? (machines?|cpus?|hosts?|hardware|processors?|computers?|boxes|"
                                    r"platforms?|runners?|chips?)\b"),
    ("a measurement on one machine", r"\b(measured|observed|seen|happens|occurs|fails|passes) (?:\w+ )?"
                                     r"(on|with|under) (?!onnxruntime|the reference|numpy)"
                                     r"(\w+ )?(machines?|cpus?|hosts?|hardware|processors?|ci|laptops?|runners?)\b"),
    ("a measurement", r"\b(measured|empirically|in practice|on my machine|locally)\b"),
    ("the CPU as a condition", r"\bcpus?\b(?! execution provider)(?!executionprovider)"),
    ("the machine as a condition", r"\bmachines?\b(?! epsilon)(?! precision)(?!-readable)"),
    ("a kernel choice", r"\b(vectori[sz]ed|vector|simd|scalar|fast|slow|other|another|a different|which|whichever)"
                        r" (?:\w+ )?(kernel|code ?path|implementation)s?\b(?! for \w+ (?:inputs|dtypes?))|"
                        r"\bkernel (?:is |gets )?(?:selected|chosen|picked|dispatched)|\bdispatch(?:es|ed)? (?:to|on)\b"),
    ("a failure on some runs only", r"\b(flaky|flakes|intermittent(?:ly)?|sometimes|non-?deterministic(?:ally)?|"
                                    r"on some runs|timing|race)\b"),
)


def machine_conditions(reason: str) -> list[str]:
    """What in ``reason`` makes it hold on some machines or runs only (a CPU feature, a kernel
    library or switch, "measured on this machine", a kernel choice, flakiness): empty when nothing."""
    import unicodedata

    text = unicodedata.normalize("NFKC", reason).lower()
    text = re.sub(r"\s+", " ", text)
    found = []
    for what, pattern in MACHINE_TERMS:
        m = re.search(pattern, text)
        if m is not None:
            found.append(f"{what} ({m.group(0)!r})")
    # spelled apart ("A V X-512", "one.DNN"): the unambiguous names with every separator dropped
    m = re.search(r"avx|onednn|mkldnn|atencpucapabilit|tfenableonednn|xlacpu", re.sub(r"[^a-z0-9]", "", text))
    if m is not None and not found:
        found.append(f"a CPU feature or kernel switch ({m.group(0)!r}, spelled apart)")
    return found


def machine_condition_problems(table: dict[str, str], where: str = "") -> list[str]:
    """Entries of an expected-failure (or skip) list whose reason names a machine condition:
    such a failure holds on some machines only, so the list would be red on the others. The
    primitive must compute the ONNX answer itself on every machine instead."""
    out = []
    for key, reason in table.items():
        terms = machine_conditions(reason) if isinstance(reason, str) else []
        if terms:
            out.append(f"{where}{key!r}: the reason names {', '.join(terms)}; an expected failure must hold on "
                       "every machine: make the primitive compute the ONNX answer whatever kernel the CPU gets")
    return out


def expected_failure_problems(
    table: dict[str, str], case_names: set[str], export_targets: dict[str, list[str]],
    declared: dict[str, list[str]] | None = None, backend_variants: tuple[str, ...] = (),
) -> list[str]:
    """What is wrong with a backend's expected-failure list: empty reasons, unknown names, reasons
    that hold on some machines only (:func:`machine_conditions`).

    Keys are exact: a node case name, optionally with ``[variant]``; ``export:<target>``,
    optionally with ``[sample]`` (its name or index, ``-roundtrip`` for the round trip, ``-opsetN``
    for the export at opset N); or a
    declared import case, ``[domain::]Op[case]`` (``declared``: op label -> its case names).
    ``backend_variants``: the backend's own case variants (:attr:`onnxport.plugin.backend.Backend.variant_names`).
    """
    declared = declared or {}
    problems = machine_condition_problems(table)
    for key, reason in table.items():
        if not isinstance(reason, str) or not reason.strip():
            problems.append(f"{key!r}: the reason is empty")
            continue
        from .runner import failure_mode

        how, why = failure_mode(reason)
        if how is None:
            problems.append(f"{key!r}: the reason does not say how the case fails: start it with "
                            "'[mismatch] ' or '[ExceptionClassName] '")
        m = re.fullmatch(r"(?P<name>[^\[\]]+)(\[(?P<variant>[^\[\]]+)\])?", key)
        if m is None:
            problems.append(f"{key!r}: not a case name or 'case[variant]'")
            continue
        name, variant = m.group("name"), m.group("variant")
        if name.startswith("export:"):
            target = name[len("export:"):]
            if target not in export_targets:
                problems.append(f"{key!r}: no export primitive {target!r} is registered")
            elif variant is not None:
                base = re.sub(r"-(roundtrip|opset\d+)$", "", variant)
                if base not in export_targets[target]:
                    problems.append(f"{key!r}: {target!r} has no sample {base!r} ({export_targets[target]})")
            continue
        if name in declared and name not in case_names:
            if variant not in declared[name]:
                problems.append(f"{key!r}: {name} declares no case {variant!r} ({declared[name]})")
            continue
        if name not in case_names:
            problems.append(f"{key!r}: no official ONNX node case is named {name!r} (exact names only)")
        if variant is not None and not _CASE_VARIANT.match(variant) and variant not in backend_variants:
            problems.append(f"{key!r}: unknown variant {variant!r}")
    return problems


def layout_problems(registry: Any) -> list[str]:
    """Ops that two installed backends implement in files of different names (the same op family
    has the same file name in every backend, so a new backend copies a map)."""
    where: dict[tuple[str, str], dict[str, str]] = {}
    for prim in registry.imports():
        module = getattr(prim.fn, "__module__", "") or ""
        where.setdefault((prim.domain, prim.op_type), {})[prim.backend] = module.rsplit(".", 1)[-1]
    out = []
    for (domain, op), files in sorted(where.items()):
        if len(set(files.values())) > 1:
            shown = ", ".join(f"{b}: {f}.py" for b, f in sorted(files.items()))
            out.append(f"{domain + '::' if domain else ''}{op} lives in different files ({shown})")
    return out
