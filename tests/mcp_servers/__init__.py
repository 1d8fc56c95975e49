"""Real third-party MCP servers for the tests, installed by ``scripts/test.sh``: ``mcp-server-time``
(PyPI, in the test extra), ``mcp-server-sqlite`` (PyPI, in a virtual environment of its own,
``.sqlite-venv`` from ``sqlite-requirements.txt``: it needs the 1.x ``mcp`` SDK, which cannot
share an environment with the 2.x one ``mcp-server-time`` and chapyter-ext use) and
``@modelcontextprotocol/server-everything`` (npm, ``node_modules`` from the committed
``package-lock.json``). Nothing is fetched while the tests run; a server that is not installed
skips its tests outside CI and fails them in CI."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chapyter_ext.testing.jupyter_process import free_port

HERE = Path(__file__).resolve().parent
SQLITE = HERE / ".sqlite-venv" / "bin" / "mcp-server-sqlite"
EVERYTHING = (
    HERE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
INSTALL_HINT = "bash scripts/test.sh installs it (see tests/mcp_servers/__init__.py)"


def _missing(what: str) -> None:
    message = f"{what} is not installed: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def time_server() -> dict:
    """``mcp-server-time`` (stdio), in UTC."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def sqlite_server(db: Path) -> dict:
    """``mcp-server-sqlite`` (stdio) on the database file ``db``."""
    if not SQLITE.exists():
        _missing("mcp-server-sqlite")
    return {"command": str(SQLITE), "args": ["--db-path", str(db)]}


def everything_server(env: dict[str, str] | None = None) -> dict:
    """``@modelcontextprotocol/server-everything`` (stdio)."""
    node = shutil.which("node")
    if node is None or not EVERYTHING.exists():
        _missing("@modelcontextprotocol/server-everything (and node)")
    return {"command": node, "args": [str(EVERYTHING), "stdio"], "env": env or {}}


@contextlib.contextmanager
def everything_http() -> Iterator[str]:
    """``server-everything`` over streamable HTTP on a free loopback port: its URL."""
    node = shutil.which("node")
    if node is None or not EVERYTHING.exists():
        _missing("@modelcontextprotocol/server-everything (and node)")
    port = free_port()
    process = subprocess.Popen(
        [node, str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("server-everything (streamable HTTP) did not start")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
