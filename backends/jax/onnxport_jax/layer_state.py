"""What a Flax layer primitive's family reads while an export traces with layers intercepted
(:mod:`onnxport_jax.layers`): the export's opset on this thread, which values intercepted layers
made, and whether a value belongs to the plain export trace."""

from __future__ import annotations

import threading
from typing import Any

#: per thread: ``opset`` (the export's, while layers are intercepted) and ``made`` (kind -> outputs)
local = threading.local()


def current_opset() -> int | None:
    """The export opset while this thread traces an export with layers intercepted, else None."""
    return getattr(local, "opset", None)


def remember(kind: str, out: Any) -> Any:
    """Note that ``out`` is the result of an intercepted ``kind`` layer (for :func:`made_by`)."""
    made = getattr(local, "made", None)
    if made is not None:
        made.setdefault(kind, []).append(out)  # kept alive: ids stay unique during the export
    return out


def made_by(kind: str, x: Any) -> bool:
    """``x`` is the result of an intercepted ``kind`` layer of this export."""
    return any(o is x for o in (getattr(local, "made", None) or {}).get(kind, ()))


def is_trace_value(x: Any) -> bool:
    """``x`` is a value of a plain jaxpr trace (not under vmap, grad or another transform)."""
    return type(x).__name__ == "DynamicJaxprTracer"


def is_param_value(x: Any) -> bool:
    """A weight as a layer primitive takes it: a plain trace value or a concrete array."""
    import jax

    return is_trace_value(x) or (isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer))
