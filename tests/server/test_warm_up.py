"""Cheap per user: the Jupyter server does not load the ``openai`` SDK (~30 MB) at
start, only on a hint (the chat panel shown: ``POST chapyter-ext/warm``; a kernel loading the
extension: ``POST chapyter-ext/v1/warm``) or at the first request that calls a model.

The first two tests run a real ``jupyter server`` in its own process, so that its
``sys.modules`` is its own: a config file makes it write them to a file on ``SIGUSR2``. The
memory this saves is measured by ``benchmarks/bench_idle_memory.py``, not here."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import BlockingKernelClient

from chapyter_ext.llm import clients
from chapyter_ext.testing.jupyter_process import JupyterProcess
from tests.kernel_harness import execute_request

from .conftest import eventually
from .kernel_browser import KernelThread

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "warm.ipynb"
#: Makes the server write its module names to ``{out}`` when it gets SIGUSR2 (jupyter_server
#: takes SIGUSR1 for itself).
CONFIG = """\
import json, signal, sys


def _dump_modules(*_):
    with open({out!r} + ".tmp", "w") as f:
        json.dump(sorted(sys.modules), f)
    import os
    os.replace({out!r} + ".tmp", {out!r})


signal.signal(signal.SIGUSR2, _dump_modules)
c.ServerApp.jpserver_extensions = {{"chapyter_ext": True}}
c.ServerApp.reraise_server_extension_failures = True
c.Chapyter.max_retries = 0
"""


def server(tmp: Path, fake: Any, *options: str) -> JupyterProcess:
    """A ``jupyter server`` with chapyter-ext talking to ``fake``, that dumps its modules."""
    config = tmp / "jupyter_server_config.py"
    config.write_text(CONFIG.format(out=str(tmp / "modules.json")))
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    env = {
        "PYTHONPATH": path,
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": "sk-warm-test",
        "CHAPYTER_MODEL": "fake-model",
    }
    return JupyterProcess(tmp, f"--config={config}", *options, env=env)


def modules(process: JupyterProcess, timeout: float = 30) -> set[str]:
    """The names in the server's ``sys.modules`` right now."""
    out = process.home / "modules.json"
    out.unlink(missing_ok=True)
    os.kill(process.pid, signal.SIGUSR2)
    deadline = time.monotonic() + timeout
    while not out.exists():
        assert time.monotonic() < deadline, "the server did not write its modules"
        time.sleep(0.05)
    return set(json.loads(out.read_text()))


def wait_for_module(process: JupyterProcess, name: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while name not in modules(process):
        assert time.monotonic() < deadline, f"{name} was never imported"
        time.sleep(0.2)


def chat(process: JupyterProcess) -> bytes:
    status, body = process.request(
        "POST", "chapyter-ext/chat", {"notebook": NOTEBOOK, "message": "hello"}
    )
    assert status == 200, body
    return body


def test_the_sdk_loads_when_the_page_shows_the_chat_not_at_start(tmp_path, fake):
    fake.script("hi there")
    with server(tmp_path, fake) as process:
        # What a page does as it loads, the chat panel not shown yet.
        assert process.request("GET", "chapyter-ext/config")[0] == 200
        time.sleep(1.5)  # the old warm-up had imported most of it by now
        loaded = modules(process)
        assert "chapyter_ext.server.app" in loaded  # the extension is there
        assert "openai" not in loaded
        assert not any(m.startswith("openai.") for m in loaded)

        status, body = process.request("POST", "chapyter-ext/warm", {})
        assert (status, json.loads(body)) == (200, {"warm_up": True})
        wait_for_module(process, "openai.types.chat")  # the SDK and the chunk type
        assert b"hi there" in chat(process)
        assert len(fake.requests) == 1  # the hint itself asked the model nothing


def test_without_a_hint_the_first_chat_loads_it_and_warm_up_off_ignores_hints(tmp_path, fake):
    fake.script("hi there")
    with server(tmp_path, fake, "--Chapyter.warm_up=False") as process:
        status, body = process.request("POST", "chapyter-ext/warm", {})
        assert (status, json.loads(body)) == (200, {"warm_up": False})
        time.sleep(1.0)
        assert "openai" not in modules(process)

        body = chat(process)
        assert b"event: done" in body and b"hi there" in body
        assert "openai" in modules(process)


@pytest.fixture
def no_sdk_load(monkeypatch):
    """This process's SDK load as if nothing had started it yet."""
    monkeypatch.setattr(clients, "_sdk_load", [])


@pytest.mark.usefixtures("no_sdk_load")
async def test_a_kernel_that_loads_the_extension_hints_its_server(jp_fetch, jp_serverapp):
    assert clients._sdk_load == []
    body = {"path": NOTEBOOK, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    kernel_id = json.loads(response.body)["kernel"]["id"]
    info = jp_serverapp.kernel_manager.get_kernel(kernel_id).get_connection_info()
    kc = BlockingKernelClient()
    kc.load_connection_info(info)
    thread = KernelThread()
    try:
        await thread.call(kc.start_channels)
        await thread.call(kc.wait_for_ready, 60)
        # The kernel's own warm-up thread sends the hint with the kernel's credential.
        loaded = await thread.call(
            lambda: execute_request(kc, "%load_ext chapyter_ext", allow_stdin=False)
        )
        assert loaded.status == "ok", loaded.errors
        await eventually(lambda: clients._sdk_load, timeout=30, what="the kernel's hint")
    finally:
        kc.stop_channels()
        thread.close()


@pytest.mark.usefixtures("no_sdk_load")
async def test_the_hint_needs_a_user_and_answers_at_once(jp_fetch, http_server_client, jp_base_url):
    refused = await http_server_client.fetch(
        jp_base_url + "chapyter-ext/warm", method="POST", body="{}", raise_error=False
    )
    assert refused.code == 403
    assert clients._sdk_load == []  # a stranger's hint loads nothing

    response = await jp_fetch("chapyter-ext", "warm", method="POST", body="{}")
    assert json.loads(response.body) == {"warm_up": True}
    assert len(clients._sdk_load) == 1
    await clients.sdk_loaded()  # and it does finish
    again = await jp_fetch("chapyter-ext", "v1", "warm", method="POST", body="{}")
    assert json.loads(again.body) == {"warm_up": True}
    assert len(clients._sdk_load) == 1  # once per process
