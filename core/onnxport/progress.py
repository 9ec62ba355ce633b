"""Progress bars for long imports, exports, saves and conversions (tqdm, on a terminal only).

A *task* is an operation of a few named stages (``load``, ``prepare``, ``build`` ...). The bar
appears only once the task has taken a second, only when stderr is a terminal (or when asked),
and never when tqdm is not installed or ``TQDM_DISABLE`` is set. Code deeper down reports its
stage with :func:`stage`, which moves the innermost running task's bar (and does nothing when no
task runs), so the pipelines need no bar argument.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

#: how long a task runs before its bar appears (seconds)
DELAY = 1.0

_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("onnxport_progress", default=None)


def on_terminal() -> bool:
    """Whether progress bars are wanted by default: stderr is a terminal and TQDM_DISABLE is unset."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)()) and not os.environ.get("TQDM_DISABLE")


def _tqdm() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional
        return None
    return tqdm


@contextlib.contextmanager
def task(desc: str, total: int | None = None, *, unit: str = "step", enabled: bool | None = None,
         delay: float | None = None) -> Iterator[Callable[..., None]]:
    """A bar for an operation of ``total`` units; yields ``step(name, n=1)``.

    ``enabled``: True shows the bar at once, False never, None (default) on a terminal after
    ``delay`` seconds (default :data:`DELAY`). A task inside a running task adds no second bar: its stages are reported to
    the outer one.
    """
    parent = _CURRENT.get()
    bar = None
    if parent is not None:
        def step(name: str, n: int = 1) -> None:
            parent(f"{desc}: {name}", 0)
    else:
        tqdm = _tqdm() if (on_terminal() if enabled is None else enabled) else None
        wait = 0.0 if enabled else (DELAY if delay is None else delay)
        start = time.monotonic()
        if tqdm is not None:
            bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B", leave=False, delay=wait,
                       file=sys.stderr)
        shown = [desc]

        def step(name: str, n: int = 1) -> None:
            if bar is None:
                return
            if n:
                bar.update(n)
            text = f"{desc}: {name}" if name else desc
            if text != shown[0]:  # a new stage: draw its name now, once the task counts as long
                shown[0] = text
                bar.set_description(text, refresh=time.monotonic() - start >= wait)
    token = _CURRENT.set(step)
    try:
        yield step
    finally:
        _CURRENT.reset(token)
        if bar is not None:
            bar.close()


def stage(name: str) -> None:
    """Report ``name`` to the innermost running task (no effect when none runs)."""
    step = _CURRENT.get()
    if step is not None:
        step(name, 0)


__all__ = ["DELAY", "on_terminal", "stage", "task"]
