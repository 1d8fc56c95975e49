"""Which of Python's audit events are attempts at a side effect, and how each reads.

One classifier for both places that watch code run: the confined trial, which records every
attempt it sees (:mod:`.watch`), and the guard of a step that runs unasked after a clean
trial, which stops the step at the first attempt (:mod:`.guard`). An attempt is anything that
could change the world outside the kernel's memory: writing, creating, deleting or renaming a
file; any socket, connection or name lookup; starting or signalling a process; loading native
code that is not part of an installed package; reaching into the interpreter (its objects,
audit hooks, code objects). Reads, imports from installed packages, ``compile`` and ``exec``
are not attempts.

Pure and cheap: called for every audit event while a trial or a guarded step runs, so it
imports nothing at call time and builds no objects for events it ignores.
"""

from __future__ import annotations

import functools
import os
import sys

# Bound here, so a step that replaces a builtin cannot blind the classifier (the trial reports
# the replacement itself as an attempt).
from builtins import any, bytes, getattr, int, isinstance, len, list, str, tuple, type  # noqa: UP029
from dataclasses import dataclass
from types import FrameType

#: Kinds of attempt, as the report names them (``Attempt.kind``).
WRITE = "write"
DELETE = "delete"
NETWORK = "network"
LOOKUP = "lookup"
PROCESS = "process"
SIGNAL = "signal"
NATIVE = "native"
INTERPRETER = "interpreter"
ENVIRONMENT = "environment"
BROWSER = "browser"

#: Environment variables an installed library set or unset itself (see :func:`attempt_of`).
LIBRARY_ENVIRONMENT: set[str] = set()

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: Files a write to which changes nothing (the trial's own stdout goes to /dev/null anyway).
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})

#: Event -> (kind, index of the argument naming the target, verb shown).
_FILE_EVENTS: dict[str, tuple[str, int, str]] = {
    "os.remove": (DELETE, 0, "delete"),
    "os.rmdir": (DELETE, 0, "remove the folder"),
    "shutil.rmtree": (DELETE, 0, "delete the tree"),
    "os.rename": (WRITE, 0, "rename"),
    "shutil.move": (WRITE, 0, "move"),
    "os.mkdir": (WRITE, 0, "create the folder"),
    "os.symlink": (WRITE, 1, "create the link"),
    "os.link": (WRITE, 1, "create the link"),
    "os.truncate": (WRITE, 0, "truncate"),
    "os.chmod": (WRITE, 0, "change the mode of"),
    "os.chown": (WRITE, 0, "change the owner of"),
    "os.chflags": (WRITE, 0, "change the flags of"),
    "os.utime": (WRITE, 0, "change the times of"),
    "os.setxattr": (WRITE, 0, "set attributes of"),
    "os.removexattr": (WRITE, 0, "remove attributes of"),
    "shutil.copyfile": (WRITE, 1, "copy a file to"),
    "shutil.copymode": (WRITE, 1, "copy a mode to"),
    "shutil.copystat": (WRITE, 1, "copy file times to"),
    "shutil.copytree": (WRITE, 1, "copy a tree to"),
    "shutil.chown": (WRITE, 0, "change the owner of"),
    "shutil.make_archive": (WRITE, 0, "write the archive"),
    "shutil.unpack_archive": (WRITE, 1, "unpack an archive into"),
    "sqlite3.enable_load_extension": (NATIVE, -1, "enable SQLite extensions"),
    "sqlite3.load_extension": (NATIVE, 1, "load the SQLite extension"),
}
_NETWORK_EVENTS: dict[str, tuple[str, int, str]] = {
    "socket.__new__": (NETWORK, -1, "open a network socket"),
    "socket.connect": (NETWORK, 1, "connect to"),
    "socket.bind": (NETWORK, 1, "listen on"),
    "socket.sendto": (NETWORK, 1, "send data to"),
    "socket.sendmsg": (NETWORK, 1, "send data to"),
    "socket.getaddrinfo": (LOOKUP, 0, "look up"),
    "socket.gethostbyname": (LOOKUP, 0, "look up"),
    "socket.gethostbyname_ex": (LOOKUP, 0, "look up"),
    "socket.gethostbyaddr": (LOOKUP, 0, "look up"),
    "socket.getnameinfo": (LOOKUP, 0, "look up"),
    "socket.sethostname": (NETWORK, 0, "rename the machine to"),
    "http.client.connect": (NETWORK, 1, "connect to"),
    "urllib.Request": (NETWORK, 0, "request"),
    "ftplib.connect": (NETWORK, 1, "connect to"),
    "smtplib.connect": (NETWORK, 1, "connect to"),
    "poplib.connect": (NETWORK, 1, "connect to"),
    "imaplib.open": (NETWORK, 1, "connect to"),
    "nntplib.connect": (NETWORK, 1, "connect to"),
    "telnetlib.Telnet.open": (NETWORK, 1, "connect to"),
    "webbrowser.open": (BROWSER, 0, "open a browser at"),
}
_PROCESS_EVENTS: dict[str, tuple[str, int, str]] = {
    "subprocess.Popen": (PROCESS, 0, "run"),
    "os.system": (PROCESS, 0, "run"),
    "os.exec": (PROCESS, 0, "run"),
    "os.posix_spawn": (PROCESS, 0, "run"),
    "os.spawn": (PROCESS, 1, "run"),
    "os.startfile": (PROCESS, 0, "open"),
    "pty.spawn": (PROCESS, 0, "run"),
    "os.fork": (PROCESS, -1, "start a copy of the kernel"),
    "os.forkpty": (PROCESS, -1, "start a copy of the kernel"),
    "os.kill": (SIGNAL, 0, "send a signal to process"),
    "os.killpg": (SIGNAL, 0, "send a signal to process group"),
    "signal.pthread_kill": (SIGNAL, -1, "send a signal to a thread"),
    "os.putenv": (ENVIRONMENT, 0, "set the environment variable"),
    "os.unsetenv": (ENVIRONMENT, 0, "unset the environment variable"),
}
_INTERPRETER_EVENTS: dict[str, str] = {
    "sys.addaudithook": "add an audit hook",
    "gc.get_objects": "list the interpreter's objects",
    "gc.get_referrers": "look up the interpreter's objects",
    "gc.get_referents": "look up the interpreter's objects",
    "sys._current_frames": "read every thread's frames",
    "sys.setprofile": "install a profiler",
    "sys.settrace": "install a tracer",
    "code.__new__": "build a code object",
    "ctypes.dlopen": "load native code",
    "ctypes.dlsym": "look up native code",
    "ctypes.cdata": "read raw memory",
    "ctypes.call_function": "call native code",
    "ctypes.addressof": "read raw memory",
    "ctypes.string_at": "read raw memory",
    "ctypes.wstring_at": "read raw memory",
    "ctypes.create_string_buffer": "",
}
_CODE_ATTRIBUTES = frozenset({"__code__", "__globals__", "__closure__", "__class__", "__bases__"})


@dataclass(frozen=True)
class Attempt:
    """One attempt at a side effect: its kind, what it aimed at, and one line for people."""

    kind: str
    #: The file, host, program or name it aimed at ("" when the event names none).
    target: str
    #: The line shown: "tried to write report.csv".
    line: str

    def as_dict(self) -> dict[str, str]:
        """JSON-safe form (the trial's report)."""
        return {"kind": self.kind, "target": self.target, "line": self.line}


def _text(value: object, limit: int = 120) -> str:
    """A target as text: paths and hosts as they are, tuples joined, everything bounded."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif isinstance(value, (list, tuple)):
        if len(value) == 2 and isinstance(value[1], int):  # (host, port)
            value = f"{_text(value[0])}:{value[1]}"
        else:
            value = " ".join(_text(v, limit) for v in value)
    elif not isinstance(value, str):
        value = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    flat = " ".join(str(value).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _argument(args: tuple, index: int) -> str:
    if index < 0 or index >= len(args) or args[index] is None:
        return ""
    value = args[index]
    if isinstance(value, int) and not isinstance(value, bool) and index == 0:
        return str(value)
    return _text(value)


def _is_write_open(args: tuple) -> bool:
    if len(args) < 3:
        return False
    path, mode, flags = args[0], args[1], args[2]
    if isinstance(path, int) or path is None:  # wraps an open descriptor: see the module
        return False
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _harmless_write(path: object) -> bool:
    text = _text(path)
    return text in _HARMLESS_TARGETS


#: Programs an installed library runs only to read the machine (joblib's ``lscpu``, ctypes'
#: ``ldconfig -p``), with the arguments each may take.
_PROBES = {
    "lscpu": lambda argv: True,
    "nproc": lambda argv: True,
    "getconf": lambda argv: True,
    "uname": lambda argv: True,
    "ldconfig": lambda argv: argv == ["-p"],
    "cat": lambda argv: bool(argv) and all(a.startswith(("/proc/", "/sys/")) for a in argv),
}


def _probe(args: tuple) -> bool:
    """Whether a ``subprocess.Popen`` event starts one of :data:`_PROBES` as it may."""
    argv = args[1] if len(args) > 1 else None
    if isinstance(argv, (str, bytes)) or not isinstance(argv, (list, tuple)) or not argv:
        return False
    words = [_text(a, 4096) for a in argv]
    check = _PROBES.get(os.path.basename(words[0]))
    return check is not None and check(words[1:])


def attempt_of(event: str, args: tuple) -> Attempt | None:
    """The attempt ``event`` (with its audit ``args``) stands for, or None."""
    if event == "open":
        if not _is_write_open(args) or _harmless_write(args[0]):
            return None
        target = _text(args[0])
        return Attempt(WRITE, target, f"tried to write {target}")
    if event == "subprocess.Popen" and _probe(args) and called_by_library():
        return None
    if event in ("os.putenv", "os.unsetenv") and called_by_library():
        # A library tuning its own threads at import (OPENBLAS_MAIN_FREE): noted, so that the
        # environment's comparison after a trial does not count it either.
        LIBRARY_ENVIRONMENT.add(_argument(args, 0))
        return None
    entry = _FILE_EVENTS.get(event) or _NETWORK_EVENTS.get(event) or _PROCESS_EVENTS.get(event)
    if entry is not None:
        kind, index, verb = entry
        target = _argument(args, index)
        if (
            event == "socket.__new__"
            and len(args) > 1
            and args[1] == getattr(__import__("socket"), "AF_UNIX", 1)
        ):
            verb = "open a local socket"
        line = f"tried to {verb} {target}".rstrip()
        return Attempt(kind, target, line)
    action = _INTERPRETER_EVENTS.get(event)
    if action is not None:
        # An installed library's own use (threadpoolctl's ctypes calls under scikit-learn) is
        # part of that library; the cell's own use is the attempt.
        if not action or (event != "sys.addaudithook" and called_by_library()):
            return None  # (no action: a buffer of its own, harmless by itself)
        target = _argument(args, 0) if event == "ctypes.dlopen" else ""
        kind = NATIVE if event.startswith("ctypes.") else INTERPRETER
        return Attempt(kind, target, f"tried to {action} {target}".rstrip())
    if (
        event == "object.__setattr__"
        and len(args) >= 2
        and args[1] in _CODE_ATTRIBUTES
        and not called_by_library()  # typing and pandas set __bases__ of their own classes
    ):
        owner = getattr(args[0], "__qualname__", type(args[0]).__name__)
        return Attempt(INTERPRETER, f"{owner}.{args[1]}", f"tried to replace {owner}.{args[1]}")
    return None


_SKIPPED_FRAMES = (os.path.dirname(__file__), os.sep + "ctypes" + os.sep)


def called_by_library() -> bool:
    """Whether the Python code that raised the event (past ctypes' own module and this
    package) belongs to an installed package or the standard library, not to the cell or a
    function the notebook defined."""
    frame: FrameType | None = sys._getframe(2)
    roots = installed_roots()
    while frame is not None:
        name = frame.f_code.co_filename
        if not any(part in name for part in _SKIPPED_FRAMES):
            return name.startswith(roots)
        frame = frame.f_back
    return False


def native_outside(paths: list[str]) -> list[Attempt]:
    """Native modules loaded from outside the installed packages and the standard library (a
    library in the working folder, in /tmp, in a data folder): one attempt each."""
    roots = installed_roots()
    found = []
    for path in paths:
        real = os.path.realpath(path)
        if not any(real.startswith(root) for root in roots):
            found.append(Attempt(NATIVE, path, f"tried to load native code from {_text(path)}"))
    return found


@functools.lru_cache(maxsize=1)
def installed_roots() -> tuple[str, ...]:
    """Where installed code lives: the environment's prefixes, the standard library, the
    system's library folders."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for entry in sys.path:
        if entry and ("site-packages" in entry or "dist-packages" in entry):
            roots.add(entry)
    roots.update(("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib"))
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)
