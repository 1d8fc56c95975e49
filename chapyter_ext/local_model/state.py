"""The local model server's shared state file, its liveness checks, ports and API key.

One server per model file is shared by the Jupyter server and its kernels through a small JSON
file (pid, port, model, API key) in Jupyter's runtime directory, readable by its owner only
(mode 0600, like Jupyter's own connection files): the key is what keeps other local users and
web pages off the model.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import secrets
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
START_TIMEOUT = 120.0  # seconds for the server to load the model and answer GET /v1/models


@dataclass(frozen=True)
class ServerState:
    """A running (or starting) local model server, as recorded in the state file."""

    pid: int
    port: int
    model: str
    started: float
    #: The bearer token the server demands; empty for a server started without one.
    api_key: str = field(default="", repr=False)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the server."""
        return f"http://{HOST}:{self.port}/v1"


def new_api_key() -> str:
    """A fresh random key for a server we start."""
    return "chapyter-local-" + secrets.token_urlsafe(24)


def runtime_dir() -> Path:
    """Jupyter's runtime directory (shared by the server and its kernels)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def state_path(model_path: str, directory: Path | None = None) -> Path:
    """The state file of the server for ``model_path``: one per model file."""
    digest = hashlib.sha256(os.path.abspath(model_path).encode()).hexdigest()[:12]
    return (directory or runtime_dir()) / f"chapyter-ext-local-{digest}.json"


def read_state(path: Path) -> ServerState | None:
    """The recorded server, or None if the file is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerState(
            pid=int(data["pid"]),
            port=int(data["port"]),
            model=str(data["model"]),
            started=float(data["started"]),
            api_key=str(data.get("api_key") or ""),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _make_private_dir(directory: Path) -> None:
    if not directory.exists():
        directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            directory.chmod(0o700)


def write_state(path: Path, state: ServerState) -> None:
    """Record ``state`` atomically (readers never see half a file), readable by us only."""
    _make_private_dir(path.parent)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    # Created 0600 from the start: the key is never readable by others, not even briefly.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(dataclasses.asdict(state), handle)
    os.replace(tmp, path)


def remove_state(path: Path, pid: int) -> None:
    """Delete the state file if it still describes the server ``pid``."""
    state = read_state(path)
    if state is not None and state.pid == pid:
        with contextlib.suppress(OSError):
            path.unlink()


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (on Windows: assumed, the port check decides)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill(pid, 0) would terminate it there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    # An exited process nobody has reaped yet (its parent died too) is a zombie: not alive.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc (macOS): trust kill()
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def port_open(port: int, host: str = HOST, timeout: float = 0.2) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def is_live(state: ServerState, *, start_timeout: float = START_TIMEOUT) -> bool:
    """The recorded server still runs: its process exists and it listens, or is still loading.

    The port alone is not enough (another program may have it), nor the pid alone (pids are
    reused); a server younger than ``start_timeout`` may not listen yet while it loads.
    """
    if not pid_alive(state.pid):
        return False
    return port_open(state.port) or time.time() - state.started < start_timeout


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (POSIX), so two processes never both start a server."""
    try:
        import fcntl
    except ImportError:  # Windows: a rare double start costs memory, not correctness
        yield
        return
    _make_private_dir(path.parent)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
