"""Keys stay out of logs, and history outlives the server: checked in-process and in a real
``jupyter server`` process that is stopped and started again."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

import chapyter_ext
from chapyter_ext.testing.jupyter_process import JupyterProcess
from chapyter_ext.testing.openai_server import Reply

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


def restartable_server(tmp: Path, base_url: str, history_dir: Path, secrets) -> JupyterProcess:
    """A ``jupyter server`` whose keys come from a config file and that logs at DEBUG, so
    every line the extension could log is in its log."""
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
    # The source tree first, so the server runs this checkout's chapyter_ext.
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    return JupyterProcess(tmp, f"--config={config}", env={"PYTHONPATH": path})


def test_history_survives_restart_and_log_has_no_secret(tmp_path, fake, secrets):
    history_dir = tmp_path / "chats"
    fake.script(
        "the first answer",
        Reply(status=401, error=f"Incorrect API key provided: {secrets[0]}."),
    )
    first = restartable_server(tmp_path, fake.base_url, history_dir, secrets).start()
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

    second = restartable_server(tmp_path, fake.base_url, history_dir, secrets).start()
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
