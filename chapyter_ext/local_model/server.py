"""Starting, sharing and stopping the llama-cpp-python server of one model file.

Nothing here imports llama_cpp, which loads a large native library: the server always runs as
a subprocess (:mod:`chapyter_ext.local_model.__main__`), started with a random API key that
only the state file (mode 0600) and this process know.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from ..llm import LLMError
from .state import (
    HOST,
    START_TIMEOUT,
    ServerState,
    file_lock,
    free_port,
    is_live,
    new_api_key,
    pid_alive,
    read_state,
    remove_state,
    state_path,
    write_state,
)

LOCAL_MODEL_NAME = "SmolLM2-135M-Instruct"
CONTEXT_TOKENS = 8192  # SmolLM2's window: room for the kernel context and a long answer
#: The environment variable that hands the API key to the server process: never its
#: command line, which every local user can read with ``ps``.
API_KEY_ENV = "CHAPYTER_EXT_LOCAL_API_KEY"
_STOP_WAIT = 5.0  # seconds between SIGTERM and SIGKILL


def is_bundled_model(model: str) -> bool:
    """Whether ``model`` names the bundled model as its llama.cpp server serves it (started
    here, or by hand with ``chapyter-ext serve-local`` behind a configured ``base_url``): the
    small-model profile and llama.cpp's grammar apply. Whether this process's own server
    answers a request is :meth:`chapyter_ext.endpoints.ModelRegistry.is_local`."""
    return model == LOCAL_MODEL_NAME


class LocalModelError(LLMError):
    """The local model server could not be found, started or reached."""

    def __init__(self, message: str) -> None:
        super().__init__("connection", message)


def server_command(model_path: str, port: int, *, watch_parent: int | None = None) -> list[str]:
    """The command that serves ``model_path`` on loopback ``port``.

    With ``watch_parent``, it runs through :mod:`chapyter_ext.local_model`, which exits when
    that process is gone and serves with the API key of ``API_KEY_ENV`` and without
    llama-cpp-python's permissive CORS; without, it is ``python -m llama_cpp.server`` itself.
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
    def api_key(self) -> str:
        """The key of the server last found ready ('' if none)."""
        return self.state.api_key if self.state else ""

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
        key = new_api_key()
        if foreground:
            proc = self._spawn(port, key, None, new_session=False)
            self._log = None
        else:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_file, "wb") as out:  # the child keeps its own copy of the fd
                proc = self._spawn(port, key, out, new_session=True)
            self._log = self.log_file
        state = ServerState(
            pid=proc.pid, port=port, model=self.model_path, started=time.time(), api_key=key
        )
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
        self, port: int, key: str, out: IO[bytes] | None, *, new_session: bool
    ) -> subprocess.Popen[bytes]:
        command = server_command(self.model_path, port, watch_parent=os.getpid())
        env = {**os.environ, API_KEY_ENV: key}
        try:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                # In the background, keep it out of the terminal's process group: a Ctrl+C
                # meant for JupyterLab (which asks before quitting) must not kill the model.
                start_new_session=new_session,
            )
        except OSError as err:
            raise LocalModelError(f"Could not start the local model server: {err}") from None

    def _claim(self) -> tuple[ServerState, bool]:
        """The server to use, starting one when the state file has no live server."""
        with file_lock(self.state_file.with_suffix(".lock")):
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
            if answers(url, state.api_key):
                return
            if time.monotonic() > deadline:
                raise LocalModelError(
                    f"The local model server on port {state.port} did not answer within "
                    f"{self.start_timeout:g} s{where}."
                )
            time.sleep(0.1)


class _ServerGone(Exception):
    """The server we meant to reuse is gone."""


def answers(url: str, api_key: str = "") -> bool:
    """Whether ``url`` answers 200 to a GET with the server's key."""
    # No proxy: the server is on loopback, whatever HTTP_PROXY says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with opener.open(request, timeout=2.0) as response:
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
