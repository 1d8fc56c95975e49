"""A real ``jupyter server`` process with chapyter-ext, for the tests that stop and start one
and for the server benchmarks: one way to start it, wait for it, call it and stop it.

Its Jupyter config, data and runtime files live under its own ``home`` and no ``JUPYTER_*`` or
``OPENAI_*`` variable of the caller reaches it, so no user setting leaks in; it logs to a file
in ``home`` (a failed start raises with that log). Standard library only.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["JupyterProcess", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterProcess:
    """``jupyter server`` on a free loopback port with a token.

    ``options``: more command-line options (``--config=...``, ``--Chapyter.model=...``);
    ``env``: variables added to its environment (the endpoint's, for instance); ``root``: the
    folder it serves, if not ``home/root``. ``start()``
    returns once ``api/status`` answers; a second ``start()`` after ``stop()`` reuses the same
    port, token and files, as a restarted server would.
    """

    def __init__(
        self,
        home: str | Path,
        *options: str,
        env: Mapping[str, str] | None = None,
        root: str | Path | None = None,
    ) -> None:
        self.home = Path(home)
        self.root = Path(root) if root is not None else self.home / "root"
        self.options = options
        self.extra_env = dict(env or {})
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log_path = self.home / f"server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>/``"""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def pid(self) -> int:
        """The running server's process id."""
        assert self.proc is not None, "not started"
        return self.proc.pid

    @property
    def headers(self) -> dict[str, str]:
        """A JSON request's headers, with the token."""
        return {"Authorization": f"token {self.token}", "Content-Type": "application/json"}

    def start(self, timeout: float = 90) -> JupyterProcess:
        """Start the server and wait until it answers (raise with its log if it cannot)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "OPENAI_"))}
        env.update(
            JUPYTER_CONFIG_DIR=str(self.home / "config"),
            JUPYTER_DATA_DIR=str(self.home / "data"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            JUPYTER_PLATFORM_DIRS="1",
        )
        env.update(self.extra_env)
        self.root.mkdir(parents=True, exist_ok=True)
        args = [
            sys.executable, "-m", "jupyter_server", "--no-browser",
            f"--port={self.port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
            "--ServerApp.allow_root=True", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}", *self.options,
        ]  # fmt: skip
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                args,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.home,
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.request("GET", "api/status")
                return self
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("jupyter server did not start:\n" + self.log()) from None
                time.sleep(0.2)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        """One request to ``path`` (below the server's root URL): its status and whole body."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"{self.base}{path}", data=data, method=method, headers=self.headers
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def stop(self) -> None:
        """Stop the server as a user would (SIGTERM), killing it if it does not go in 20 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def log(self) -> str:
        """Everything the server has logged so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> JupyterProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
