"""Keys stay out of logs, and history outlives the server: checked in-process and in a real
``jupyter server`` process that is stopped and started again."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import chapyter_ext
from chapyter_ext.testing.openai_server import Reply
from tests.ports import free_port

NOTEBOOK = "restart/me.ipynb"
REPO_ROOT = Path(os.path.abspath(chapyter_ext.__file__)).parent.parent


class Collect(logging.Handler):
    """Keeps every formatted record, tracebacks included."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def all_logs(jp_serverapp, ext_app):
    """Every log record of the server, the extension, tornado and our modules, at DEBUG."""
    collect = Collect()
    names = ["", "tornado", "chapyter_ext", "openai", "httpx", "httpx2", "httpcore"]
    loggers = {logging.getLogger(n) for n in names} | {jp_serverapp.log, ext_app.log}
    saved = [(lg, lg.level) for lg in loggers]
    for logger in loggers:
        logger.addHandler(collect)
        logger.setLevel(logging.DEBUG)
    yield collect
    for logger, level in saved:
        logger.removeHandler(collect)
        logger.setLevel(level)


async def test_no_secret_in_any_log_line(all_logs, post_chat, get_json, fake, secrets):
    # Real servers echo a wrong key back in their error message.
    fake.script(
        "fine",
        Reply(status=401, error=f"Incorrect API key provided: {secrets[0]}."),
        Reply(status=500, error=f"upstream broke; header was {secrets[1]}"),
        Reply(content="x" * 100, chunk_size=10, cut_after=2),
    )
    for _ in range(4):
        await post_chat({"notebook": "n.ipynb", "message": "hi", "context": secrets[0]})
    await get_json("chapyter-ext", "config")
    await get_json("chapyter-ext", "models")
    await get_json("chapyter-ext", "chat", method="POST", body={"notebook": "n.ipynb"})
    fake.stop()
    await get_json("chapyter-ext", "models")

    text = "\n".join(all_logs.lines)
    assert "chapyter-ext" in text or "chapyter_ext" in text  # we did capture the server's log
    assert "401" in text  # and the failures
    for secret in secrets:
        assert secret not in text


class JupyterServer:
    """A real ``jupyter server`` process with chapyter_ext, logging to a file."""

    def __init__(self, tmp: Path, base_url: str, history_dir: Path, secrets) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.token = "restart-test-token"
        self.log_path = tmp / f"server-{self.port}.log"
        config = tmp / "jupyter_server_config.py"
        config.write_text(
            "c.ServerApp.jpserver_extensions = {'chapyter_ext': True}\n"
            "c.ServerApp.reraise_server_extension_failures = True\n"
            "c.ServerApp.log_level = 'DEBUG'\n"
            f"c.Chapyter.base_url = {base_url!r}\n"
            f"c.Chapyter.api_key = {secrets[0]!r}\n"
            f"c.Chapyter.extra_headers = {{'X-Test-Secret': {secrets[1]!r}}}\n"
            "c.Chapyter.model = 'fake-model'\n"
            "c.Chapyter.max_retries = 0\n"
            f"c.ChapyterExtApp.history_dir = {str(history_dir)!r}\n"
        )
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> JupyterServer:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "OPENAI_"))}
        env.update(
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")])),
            JUPYTER_CONFIG_DIR=str(self.tmp / "config"),
            JUPYTER_DATA_DIR=str(self.tmp / "data"),
            JUPYTER_RUNTIME_DIR=str(self.tmp / "runtime"),
            JUPYTER_PLATFORM_DIRS="1",
        )
        (self.tmp / "root").mkdir(exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "jupyter_server",
                    f"--config={self.config}",
                    "--no-browser",
                    f"--port={self.port}",
                    "--ServerApp.port_retries=0",
                    "--ServerApp.ip=127.0.0.1",
                    "--ServerApp.allow_root=True",
                    f"--IdentityProvider.token={self.token}",
                    f"--ServerApp.root_dir={self.tmp / 'root'}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.tmp,
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.request("GET", "api/status")
                return self
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("server did not start:\n" + self.log()) from None
                time.sleep(0.2)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def test_history_survives_restart_and_log_has_no_secret(tmp_path, fake, secrets):
    history_dir = tmp_path / "chats"
    fake.script(
        "the first answer",
        Reply(status=401, error=f"Incorrect API key provided: {secrets[0]}."),
    )
    first = JupyterServer(tmp_path, fake.base_url, history_dir, secrets).start()
    try:
        status, body = first.request(
            "POST", "chapyter-ext/chat", {"notebook": NOTEBOOK, "message": "remember me"}
        )
        assert status == 200 and b"event: done" in body
        status, body = first.request(
            "POST", "chapyter-ext/chat", {"notebook": NOTEBOOK, "message": "and fail"}
        )
        assert b"event: error" in body
        assert first.request("GET", "chapyter-ext/config")[0] == 200
    finally:
        first.stop()
    assert first.proc.returncode is not None

    second = JupyterServer(tmp_path, fake.base_url, history_dir, secrets).start()
    try:
        status, body = second.request("GET", f"chapyter-ext/history?notebook={NOTEBOOK}")
    finally:
        second.stop()
    assert status == 200
    view = json.loads(body)
    assert [(m["role"], m["content"], m["status"]) for m in view["messages"]] == [
        ("user", "remember me", "complete"),
        ("assistant", "the first answer", "complete"),
        ("user", "and fail", "complete"),
        ("assistant", "", "error"),
    ]

    logs = first.log() + second.log()
    assert "chapyter-ext: models fake-model@" in logs  # the extension really logged here
    for secret in secrets:
        assert secret not in logs
        assert all(secret not in p.read_text() for p in history_dir.iterdir())
