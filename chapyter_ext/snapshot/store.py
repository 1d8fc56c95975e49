"""The kernel's snapshots: one forked child (:mod:`.child`) per (turn, step) taken, with a
record of the user's variables at that moment (identity, type and a cheap
:func:`~chapyter_ext.trial.fingerprint.fingerprint` each, never a copy), within the settings'
budget: the last ``Chapyter.undo_turns`` turns, and ``Chapyter.undo_memory_mb`` of the pages
the children hold that the kernel no longer shares (:func:`added_kb`, measured on a thread
after each snapshot, read at the next), oldest turns dropped first.

What changed since a snapshot is read by comparing its record with the namespace now: names
created (to remove), rebound, deleted or changed in place (to bring back from the child).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from ..trial.fingerprint import fingerprint

#: Seconds the kernel waits for a child to check names, or to write them out.
CHECK_SECONDS, DUMP_SECONDS = 30.0, 600.0


def unavailable() -> str | None:
    """Why no snapshot can be taken here, or None."""
    if not sys.platform.startswith("linux"):
        return f"snapshots need Linux (this kernel runs on {sys.platform})"
    if not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        return "this Python cannot fork or make memory files"
    return None


def user_names(shell: Any) -> dict[str, Any]:
    """The user's variables: the namespace less IPython's own names and ``_``-names."""
    hidden = getattr(shell, "user_ns_hidden", {})
    return {
        name: value
        for name, value in shell.user_ns.items()
        if isinstance(name, str) and not name.startswith("_") and name not in hidden
    }


def record(shell: Any) -> dict[str, tuple[int, type, tuple]]:
    """Each user variable's identity, type and fingerprint."""
    return {n: (id(v), type(v), fingerprint(v)) for n, v in user_names(shell).items()}


@dataclass
class Changes:
    """What changed in the namespace since a record."""

    created: list[str] = field(default_factory=list)
    rebound: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def back(self) -> list[str]:
        """The names to bring back from the snapshot."""
        return sorted({*self.rebound, *self.changed, *self.deleted})

    def as_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in vars(self).items()}


def compare(before: dict[str, tuple[int, type, tuple]], now: dict[str, Any]) -> Changes:
    found = Changes()
    for name, value in now.items():
        old = before.get(name)
        if old is None:
            found.created.append(name)
        elif old[0] != id(value) or old[1] is not type(value):
            found.rebound.append(name)
        elif old[2] != fingerprint(value) or old[2] == ("?",):
            found.changed.append(name)
    found.deleted = [name for name in before if name not in now]
    for names in (found.created, found.rebound, found.changed, found.deleted):
        names.sort()
    return found


@dataclass
class Frozen:
    """One snapshot: its child and the record of the variables when it was taken."""

    turn: str
    step: int
    pid: int
    sock: socket.socket
    names: dict[str, tuple[int, type, tuple]]
    #: What the step that followed did (filled when the next step's snapshot is taken).
    did: Changes | None = None

    def ask(self, request: dict[str, Any], seconds: float) -> tuple[dict[str, Any], list[int]]:
        from .child import receive

        self.sock.settimeout(seconds)
        try:
            self.sock.sendall(json.dumps(request).encode() + b"\n")
            answer, fds = receive(self.sock)
        except (OSError, ValueError) as err:
            raise ConnectionError(f"the snapshot's process does not answer ({err})") from None
        if "error" in answer:
            for fd in fds:
                os.close(fd)
            raise ConnectionError(f"the snapshot failed ({answer['error']})")
        return answer, fds

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        _reap(self.pid)


def _rollup(pid: int | str, fields: tuple[str, ...], path: str = "smaps_rollup") -> float:
    """The sum of ``fields`` (kB) in ``/proc/PID/<path>``; 0 where it cannot be read."""
    total = 0.0
    try:
        with open(f"/proc/{pid}/{path}") as listed:
            for line in listed:
                if line.startswith(fields):
                    total += float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return total


def added_kb(pids: list[int]) -> tuple[float, dict[int, float]]:
    """The memory the children ``pids`` add to the kernel's, in kB: the pages of memory they
    hold that the kernel no longer maps (it changed them since). Each page counts once, however
    many children share it: their proportional shares plus the kernel's, less the kernel's own
    (a child's private pages alone would miss the pages two snapshots share). Also each
    child's share. Reading a child's rollup walks its page tables: about 5 ms per GB."""
    if not pids:
        return 0.0, {}
    kinds = ("Pss_Anon:", "Pss_Shmem:")
    shares = {pid: _rollup(pid, kinds) for pid in pids}
    own = _rollup("self", kinds) - _rollup("self", ("RssAnon:", "RssShmem:"), "status")
    return max(0.0, sum(shares.values()) + own), shares


def _reap(pid: int) -> None:
    """Wait for a killed child on a daemon thread (its memory takes a while to free)."""

    def wait() -> None:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    threading.Thread(target=wait, name="chapyter-ext undo reaper", daemon=True).start()


class Store:
    """The snapshots of one kernel, oldest first."""

    def __init__(self) -> None:
        self.frozen: dict[tuple[str, int], Frozen] = {}
        #: Why a snapshot that was asked for is not there (dropped, refused).
        self.missing: dict[tuple[str, int], str] = {}
        #: The last ``%%ai`` turn whose generated cell ran, and how many have (:mod:`.ai`).
        self.last_ai: str | None = None
        self.ai_runs = 0
        #: The last measure of the snapshots' memory (kB) and each child's share.
        self._measured: tuple[float, dict[int, float]] = (0.0, {})
        self._measuring: threading.Thread | None = None

    def turns(self) -> list[str]:
        return list(dict.fromkeys(turn for turn, _ in self.frozen))

    def memory_kb(self) -> float:
        """What the snapshots add to the kernel's memory now (:func:`added_kb`)."""
        self._measured = added_kb([f.pid for f in self.frozen.values()])
        return self._measured[0]

    def measure(self) -> None:
        """Measure the snapshots' memory on a thread (a take must not wait for it)."""
        if self._measuring is not None and self._measuring.is_alive():
            return
        pids = [f.pid for f in self.frozen.values()]

        def run() -> None:
            self._measured = added_kb(pids)

        self._measuring = threading.Thread(target=run, name="chapyter-ext undo memory")
        self._measuring.daemon = True
        self._measuring.start()

    def settle(self) -> None:
        """Wait for the measure under way (tests, benchmarks)."""
        if self._measuring is not None:
            self._measuring.join(60)

    def _used_mb(self) -> float:
        """The last measure, less the shares of the snapshots dropped since."""
        total, shares = self._measured
        live = {f.pid for f in self.frozen.values()}
        gone = sum(kb for pid, kb in shares.items() if pid not in live)
        return max(0.0, total - gone) / 1024

    def take(self, shell: Any, turn: str, step: int, turns: int, budget_mb: int) -> str | None:
        """Snapshot the kernel before ``step`` of ``turn``; None, or why not (one line)."""
        key = (turn, step)
        why = unavailable()
        if why is None and turns <= 0:
            why = "Undo keeps no snapshot (Chapyter.undo_turns is 0)"
        if why is not None:
            self.missing[key] = why
            return why
        if key in self.frozen:
            self.frozen.pop(key).release()
        names = record(shell)
        previous = max((s for t, s in self.frozen if t == turn and s < step), default=None)
        if previous is not None:
            self.frozen[(turn, previous)].did = compare(
                self.frozen[(turn, previous)].names, user_names(shell)
            )
        older = [t for t in self.turns() if t != turn]
        while len(older) >= turns:  # this turn counts as one
            self.drop(older.pop(0), f"dropped: Undo keeps {turns} turns (Chapyter.undo_turns)")
        # The last measure (taken after the previous snapshot, on a thread): a step's own
        # changes count from the next snapshot on.
        used = self._used_mb()
        while used > budget_mb and older:
            self.drop(older.pop(0), "dropped to stay within Chapyter.undo_memory_mb")
            used = self._used_mb()
        if used > budget_mb:
            why = (
                f"Undo's memory budget is used up ({used:.0f} MB of {budget_mb} MB, "
                "Chapyter.undo_memory_mb): no snapshot before this step"
            )
            self.missing[key] = why
            return why
        self.frozen[key] = self._fork(shell, turn, step, names)
        self.missing.pop(key, None)
        self.measure()
        return None

    def _fork(self, shell: Any, turn: str, step: int, names: dict) -> Frozen:
        from . import child

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        others = [f.sock.fileno() for f in self.frozen.values()]
        parent = os.getpid()
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns about fork in a threaded process: the child touches no
                # lock another thread may hold (see .child), and leaves with os._exit.
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except BaseException:
            ours.close()
            theirs.close()
            raise
        if pid == 0:
            ours.close()
            child.main(shell, theirs, parent, others)
        theirs.close()
        return Frozen(turn, step, pid, ours, names)

    def drop(self, turn: str, why: str) -> None:
        for key in [k for k in self.frozen if k[0] == turn]:
            self.frozen.pop(key).release()
            self.missing[key] = why

    def release(self, turn: str) -> None:
        for key in [k for k in self.frozen if k[0] == turn]:
            self.frozen.pop(key).release()
        for key in [k for k in self.missing if k[0] == turn]:
            del self.missing[key]

    def find(self, turn: str, step: int) -> Frozen | str:
        """The snapshot before ``step`` of ``turn``, or why there is none."""
        frozen = self.frozen.get((turn, step))
        if frozen is None:
            return self.missing.get((turn, step), "no snapshot was taken before this step")
        try:
            done, _ = os.waitpid(frozen.pid, os.WNOHANG)
        except ChildProcessError:
            done = frozen.pid
        if done:
            del self.frozen[(turn, step)]
            frozen.sock.close()
            return "the snapshot's process is gone (killed by the system?)"
        return frozen

    def values(self, frozen: Frozen, names: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
        """The values of ``names`` from the snapshot, and those that could not come."""
        from . import transfer

        started = time.monotonic()
        answer, _ = frozen.ask({"op": "lend", "names": names}, DUMP_SECONDS)
        try:
            values = transfer.read_direct(frozen.pid, answer["remote"])
        except OSError:  # no direct read here (ptrace rules): through a memory file
            values = None
        finally:
            frozen.sock.sendall(b'{"op": "done"}\n')
        if values is not None:
            self.last_seconds = time.monotonic() - started
            return values, dict(answer.get("cannot", {}))
        answer, fds = frozen.ask({"op": "dump", "names": names}, DUMP_SECONDS)
        try:
            values = transfer.read(fds[0], answer["layout"]) if fds else {}
        finally:
            for fd in fds:
                os.close(fd)
        self.last_seconds = time.monotonic() - started
        return values, dict(answer.get("cannot", {}))

    def close(self) -> None:
        for frozen in self.frozen.values():
            frozen.release()
        self.frozen.clear()


_store: Store | None = None


def store() -> Store:
    """This kernel's snapshots."""
    global _store
    if _store is None:
        _store = Store()
    return _store
