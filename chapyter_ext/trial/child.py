"""The forked child of a trial: confine itself, take the kernel's output channels over, run
the step once as IPython would (its syntax, its last expression shown), and write what it
tried and showed to the report pipe; then leave with ``os._exit``, whatever happened, so no
``atexit`` handler, finaliser or buffered stream of the kernel ever runs in it.

Lines on the pipe, one JSON object each: ``{"type": "attempt", ...}`` as attempts happen
(:mod:`.watch`), then ``{"type": "report", ...}`` once the step ended, or ``{"type":
"unavailable", "reason": ...}`` when the child could not be confined.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import os
import time
from typing import Any, NoReturn

from . import state
from .capture import NoInput, Shows
from .confine import ConfineError, confine
from .watch import install, write_attempts, write_line

#: The file name tracebacks of the trial show for the step.
FILENAME = "<trial>"
#: Errors that say the confinement refused something the step did (not an error of its own).
_REFUSED_ERRNOS = frozenset(
    {errno.EPERM, errno.EACCES, errno.EROFS, errno.EBADF, errno.ENETUNREACH, errno.ENOSYS}
)
_REFUSED_TEXTS = (
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "readonly database",
    "unable to open database file",
    "disk i/o error",
    "bad file descriptor",
    "name resolution",
    "name or service not known",
    "nodename nor servname",
    "network is unreachable",
)


def refused(err: BaseException) -> bool:
    """Whether ``err`` (or what it wraps) is the confinement refusing the step something."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _REFUSED_ERRNOS:
            return True
        if type(current).__name__ == "gaierror":
            return True
        text = str(current).lower()
        if any(marker in text for marker in _REFUSED_TEXTS):
            return True
        current = current.__cause__ or current.__context__
    return False


def _compile_step(shell: Any, source: str) -> tuple[Any, Any, bool]:
    """The step as IPython runs it (``source``: after IPython's transforms): its body and its
    last expression (shown unless the cell ends with ``;``), compiled."""
    import linecache

    lines = source.splitlines(keepends=True)
    linecache.cache[FILENAME] = (len(source), None, lines, FILENAME)
    tree = ast.parse(source, FILENAME)
    transform = getattr(shell, "transform_ast", None)
    if transform is not None:
        tree = transform(tree) or tree
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    body = ast.Module(body=tree.body[:-1] if last else tree.body, type_ignores=[])
    expression = ast.Expression(last.value) if last is not None else None
    shown = last is not None and not source.rstrip().endswith(";")
    return (
        compile(body, FILENAME, "exec", flags=flags),
        compile(expression, FILENAME, "eval", flags=flags) if expression is not None else None,
        shown,
    )


def _call(code_object: Any, namespace: dict) -> Any:
    import inspect

    value = eval(code_object, namespace)
    if inspect.CO_COROUTINE & code_object.co_flags:  # top-level await
        import asyncio

        asyncio.events._set_running_loop(None)
        loop = asyncio.new_event_loop()
        value = loop.run_until_complete(value)
    return value


def _run(shell: Any, source: str, shows: Shows) -> dict[str, Any] | None:
    """Run the step; the error it raised as ``{ename, evalue, refused}``, or None."""
    from ..tracebacks import exception_line

    try:
        body, expression, shown = _compile_step(shell, source)
        namespace = shell.user_ns
        _call(body, namespace)
        if expression is not None:
            value = _call(expression, namespace)
            if shown and value is not None:
                shows.format_result(shell, value)
    except NoInput:
        shows.asked_input = True
        return {"ename": "NoInput", "evalue": "the step asks for input", "refused": False}
    except BaseException as err:
        return {
            "ename": type(err).__name__,
            "evalue": exception_line(err),
            "refused": refused(err),
            "memory": isinstance(err, MemoryError),
        }
    return None


def _figures(before: set[int]) -> list[dict[str, Any]]:
    """Digests of the figures the step opened (matplotlib draws them after a cell)."""
    import sys

    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    from ..context.figures import MAX_FIGURES, digest

    digests = []
    for number in pyplot.get_fignums():
        figure = pyplot.figure(number)
        if number not in before or figure.stale:
            try:
                digests.append(digest(figure))
            except Exception:
                digests.append({"suptitle": None, "axes": []})
    return digests[:MAX_FIGURES]


def _private_kb() -> float:
    """The memory the child holds of its own (pages it copied from the kernel by writing
    them, or allocated): what the trial adds to the machine's memory."""
    try:
        with open("/proc/self/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Private_Dirty:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return -1.0


def _open_figures() -> set[int]:
    import sys

    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def main(
    shell: Any,
    code: str,
    fd: int,
    scratch: str,
    *,
    parent: int,
    memory_bytes: int,
    cpu_seconds: int,
    measure: bool = False,
) -> NoReturn:
    """The child's whole life (see the module)."""
    import gc

    gc.disable()  # a collection would touch every object: copied pages for nothing
    clock = [time.perf_counter()]
    phases: dict[str, float] = {}

    def mark(name: str) -> None:
        now = time.perf_counter()
        phases[name] = round((now - clock[0]) * 1000, 2)
        clock[0] = now

    try:
        try:
            confine(scratch, {fd}, memory_bytes=memory_bytes, cpu_seconds=cpu_seconds)
        except ConfineError as err:
            write_line(
                fd, {"type": "unavailable", "reason": f"the trial could not be confined ({err})"}
            )
            os._exit(0)
        mark("confine_ms")
        import tempfile

        tempfile.tempdir = scratch
        shows = Shows()
        shows.install(shell)
        source = shell.transform_cell(code)
        before = state.take(shell, source)
        figures_before = _open_figures()
        stop_recording = install(fd)
        mark("snapshot_ms")
        started = time.monotonic()
        error = _run(shell, source, shows)
        seconds = time.monotonic() - started
        stop_recording(False)
        mark("run_ms")
        write_attempts(fd, state.session_changes(shell, before))
        changes = state.compare(shell, before)
        mark("compare_ms")
        if measure:  # reading it walks the page tables: for benchmarks only
            phases["private_kb"] = _private_kb()
        report = {
            "type": "report",
            "seconds": round(seconds, 4),
            "error": error,
            "stdout": shows.stdout.value(),
            "stderr": shows.stderr.value(),
            "stream_cut": shows.stdout.cut + shows.stderr.cut,
            "displays": shows.displays,
            "more_displays": shows.more_displays,
            "result": shows.result,
            "figures": _figures(figures_before),
            "payloads": shows.payloads,
            "messages": shows.messages,
            "asked_input": shows.asked_input,
            "timings": phases,
            "variables": {
                "created": changes.created,
                "changed": changes.changed,
                "deleted": changes.deleted,
            },
        }
        write_line(fd, report)
        # Done: the kernel stops waiting now, not once this process's memory is torn down.
        os.close(fd)
    except BaseException as err:  # the report itself failed: say so, never raise here
        with contextlib.suppress(BaseException):
            write_line(fd, {"type": "failed", "reason": f"{type(err).__name__}: {err}"[:300]})
    finally:
        os._exit(0)
