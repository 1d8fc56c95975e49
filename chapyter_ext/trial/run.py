"""The kernel's side of a trial: fork, let the child (:mod:`.child`) confine itself and run
the step, read what it reports, and stop it at the time limit.

The kernel process has threads and ZeroMQ sockets; only the calling thread exists in the
child, which never touches the sockets (they are replaced before any step code runs), dies with
the kernel (``PR_SET_PDEATHSIG``) and leaves with ``os._exit``. The kernel waits in the thread
that asked (the shell's, as for any cell), reading the child's lines as they come: attempts
arrive before the child can hide them, so a child that hangs, crashes or is killed at the time
limit still leaves what it tried. Nothing of the trial reaches the kernel: no output message, no
execution count, no history, no variable; its scratch folder is removed afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any

from .attempts import Attempt
from .confine import prepare, unavailable
from .report import CRASHED, RAN, TIMEOUT, TrialReport
from .watch import EXIT_PIPE

#: Bytes of report read at most (a report is far smaller; more means a step flooding it).
MAX_REPORT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class TrialLimits:
    """A trial's budget (``Chapyter.trial_time_limit``, ``Chapyter.trial_memory_mb``)."""

    time_limit: float = 10.0
    memory_mb: int = 2048

    @classmethod
    def from_settings(cls, settings: Any) -> TrialLimits:
        return cls(float(settings.trial_time_limit), int(settings.trial_memory_mb))


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _read(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything the child writes until it closes the pipe; True if the deadline passed
    first (or the child wrote more than any report)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REPORT_BYTES:
            return b"".join(chunks), True


def _reap(pid: int) -> None:
    """Wait for the (killed) child on a daemon thread, so it never lingers as a zombie."""
    import threading

    def wait() -> None:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    threading.Thread(target=wait, name="chapyter-ext trial reaper", daemon=True).start()


def _stop(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)


def _parse(data: bytes) -> tuple[list[Attempt], dict[str, Any] | None, str]:
    """The attempts, the report line and an "unavailable" or "failed" reason, from the
    child's lines (a line that is not JSON, as from a step writing to the pipe, is skipped)."""
    attempts: list[Attempt] = []
    seen: set[str] = set()
    report: dict[str, Any] | None = None
    reason = ""
    for raw in data.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict):
            continue
        kind = line.get("type")
        if kind == "attempt" and isinstance(line.get("line"), str) and line["line"] not in seen:
            seen.add(line["line"])
            attempts.append(
                Attempt(str(line.get("kind", "")), str(line.get("target", "")), line["line"])
            )
        elif kind == "report" and report is None:
            report = line
        elif kind in ("unavailable", "failed") and not reason:
            reason = f"{kind}:{line.get('reason', '')}"
    return attempts, report, reason


def _crash_reason(status: int, limits: TrialLimits) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU:
            return f"the trial used up its {_seconds(limits.time_limit)} of CPU time"
        if number == signal.SIGSYS:
            return "the trial made a system call the confinement refuses outright"
        name = (
            signal.Signals(number).name if number in signal.Signals._value2member_map_ else number
        )
        return f"the trial crashed ({name})"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_PIPE:
        return "the trial was cut short: the step interfered with its report"
    return "the trial ended without a report"


def _warm() -> None:
    """Import here what the child needs, once: an import in the child dies with it, so it
    would cost every trial again (and copy the pages it touches)."""
    import importlib
    import sys

    for name in (
        "ast",
        "inspect",
        "linecache",
        "landlock",
        "pyseccomp",
        "IPython.core.displaypub",
        "chapyter_ext.context.summaries",
        "chapyter_ext.context.figures",
        "chapyter_ext.tracebacks",
        "chapyter_ext.trial.child",
    ):
        if name not in sys.modules:
            importlib.import_module(name)
    pandas = sys.modules.get("pandas")
    if pandas is not None and "pandas.core.util.hashing" not in sys.modules:
        from .fingerprint import fingerprint

        fingerprint(pandas.DataFrame({"a": [1]}))


def run_trial(
    shell: Any, code: str, limits: TrialLimits | None = None, *, measure: bool = False
) -> TrialReport:
    """Run ``code`` once in a confined copy of this kernel (``shell``'s) and report what it
    tried and showed; a :meth:`~.report.TrialReport.unavailable` report when trials cannot
    run here. Blocks for at most ``limits.time_limit`` (and a little more to clean up).
    ``measure``: also report the memory the child added (``timings["private_kb"]``)."""
    from . import child

    limits = limits or TrialLimits()
    why = unavailable()
    if why is not None:
        return TrialReport.unavailable(why)
    _warm()
    prepare()
    scratch = tempfile.mkdtemp(prefix="chapyter-trial-")
    read_fd, write_fd = os.pipe()
    pid = -1
    parent = os.getpid()
    started = time.monotonic()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns about fork in a threaded process: the child touches no lock
            # another thread may hold (see the module), and leaves with os._exit.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        forked = time.monotonic()
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            child.main(
                shell,
                code,
                write_fd,
                scratch,
                parent=parent,
                memory_bytes=limits.memory_mb * 1024 * 1024,
                cpu_seconds=max(1, int(limits.time_limit + 1)),
                measure=measure,
            )
        os.close(write_fd)
        write_fd = -1
        data, timed_out = _read(read_fd, started + limits.time_limit)
        # The pipe closed: the child has nothing left to do (a child that closed it early is
        # cut short all the same). Its exit frees a copy of the kernel's page tables, which
        # takes milliseconds: reaped on a thread of its own unless its status is needed.
        _stop(pid)
        if timed_out or b'"type": "report"' not in data:
            _, status = os.waitpid(pid, 0)
        else:
            status = 0
            _reap(pid)
        pid = -1
    finally:
        if write_fd >= 0:
            os.close(write_fd)
        os.close(read_fd)
        if pid > 0:  # interrupted while waiting (KeyboardInterrupt): the child goes too
            _stop(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        shutil.rmtree(scratch, ignore_errors=True)
    attempts, report, reason = _parse(data)
    if reason.startswith("unavailable:"):
        return TrialReport.unavailable(reason.split(":", 1)[1])
    if timed_out or report is None:
        trial = TrialReport(
            status=TIMEOUT if timed_out else CRASHED,
            reason=(
                f"the trial stopped after {_seconds(limits.time_limit)}"
                if timed_out
                else _crash_reason(status, limits)
            ),
            seconds=round(time.monotonic() - started, 3),
        )
        trial.attempts = attempts
        return trial
    report["status"] = RAN
    trial = TrialReport.from_dict(report)
    trial.timings.update(
        fork_ms=round((forked - started) * 1000, 2),
        total_ms=round((time.monotonic() - started) * 1000, 2),
    )
    # The hook's lines are the record; the report's own list could only add to them.
    trial.attempts = attempts + [
        a for a in trial.attempts if a.line not in {b.line for b in attempts}
    ]
    return trial
