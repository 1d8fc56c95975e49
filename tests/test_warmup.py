"""The background warm-up that ``%load_ext`` starts (``chapyter_ext.magic.warmup``): what it
prepares, what it must never do (send a request, start the bundled local model), and a ``%%ai`` run
while it is still busy. Its speed is measured by ``benchmarks/bench_magic.py``, not here."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from contextlib import redirect_stdout
from types import SimpleNamespace

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from chapyter_ext.context.fact_cache import CACHE
from chapyter_ext.llm import clients
from chapyter_ext.local_model import LocalModelServer
from chapyter_ext.magic import warmup
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

ANSWER = "```python\nprint(sum(rain))\n```"


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        srv.default_reply = Reply(content=ANSWER)
        yield srv


@pytest.fixture
def shell(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-warm-up-test")
    monkeypatch.setenv("CHAPYTER_MODEL", "fake-model")
    InteractiveShell.clear_instance()
    config = Config()
    # A secret only the settings know (not the environment): the summary must be primed
    # with it, or the cache starts again at the first request.
    config.Chapyter.extra_headers = {"X-Team": "team-header-secret-4711"}
    sh = InteractiveShell.instance(config=config)
    clients.close_clients()  # the warm-up must build the client itself
    yield sh
    sh.run_line_magic("unload_ext", "chapyter_ext")
    InteractiveShell.clear_instance()


def finished() -> None:
    thread = warmup.state["thread"]
    assert thread is not None
    thread.join(timeout=60)
    assert not thread.is_alive()


def test_load_ext_warms_the_client_without_sending_anything(shell, server):
    shell.user_ns["rain"] = [763, 16, 722]
    shell.run_line_magic("load_ext", "chapyter_ext")
    finished()
    assert warmup.state["error"] is None
    assert "openai" in sys.modules
    assert any(key[0] == server.base_url for key in clients._sync_clients)
    assert server.requests == []  # nothing reached the model
    # The summary is primed with the secrets %%ai uses, so that its cache is kept.
    assert "rain" in CACHE.entries
    cached = CACHE.entries["rain"]

    with redirect_stdout(io.StringIO()):
        shell.run_cell_magic("ai", "", "total rain")
    assert len(server.requests) == 1
    assert "rain" in str(server.requests[0].body["messages"])
    assert CACHE.entries["rain"] is cached


def test_a_request_while_warming_up_is_answered(shell, server):
    shell.run_line_magic("load_ext", "chapyter_ext")
    # At once, as "Run all" does: the warm-up is still importing.
    out = io.StringIO()
    with redirect_stdout(out):
        shell.run_cell_magic("ai", "", "total rain")
    assert "print(sum(rain))" in out.getvalue()
    finished()
    assert len(server.requests) == 1


def test_the_warm_up_never_starts_the_local_model(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CHAPYTER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    started = []
    monkeypatch.setattr(LocalModelServer, "ensure", lambda self: started.append(self))
    monkeypatch.setattr("chapyter_ext.local_model.use_local_model", lambda settings: True)
    monkeypatch.setattr(
        "chapyter_ext.local_model.server_for", lambda settings: LocalModelServer("/nowhere.gguf")
    )
    InteractiveShell.clear_instance()
    sh = InteractiveShell.instance()
    try:
        sh.run_line_magic("load_ext", "chapyter_ext")
        finished()
        assert started == []
        assert warmup.state["error"] is None
    finally:
        sh.run_line_magic("unload_ext", "chapyter_ext")
        InteractiveShell.clear_instance()


def test_warm_up_can_be_turned_off():
    code = (
        "from traitlets.config import Config\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from chapyter_ext.magic import warmup\n"
        "config = Config()\n"
        "config.Chapyter.warm_up = False\n"
        "shell = InteractiveShell.instance(config=config)\n"
        "shell.run_line_magic('load_ext', 'chapyter_ext')\n"
        "print(warmup.state['thread'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None", out.stderr


def test_config_reaches_the_trait():
    config = Config()
    config.Chapyter.warm_up = False
    from chapyter_ext.config import Chapyter

    assert Chapyter(config=config).warm_up is False
    assert Chapyter().warm_up is True


def test_the_servers_sdk_load_makes_the_first_loops_http_client(monkeypatch):
    from chapyter_ext.llm import Endpoint

    monkeypatch.setattr(clients, "_spare_async_http", [])
    monkeypatch.setattr(clients, "_async_http", {})
    monkeypatch.setattr(clients, "_async_clients", clients.OrderedDict())
    monkeypatch.setattr(clients, "_sdk_load", [])
    loading = clients.load_sdk()
    assert clients.load_sdk() is loading  # once per process, whoever asks
    loading.result(timeout=60)
    assert len(clients._spare_async_http) == 1
    spare = clients._spare_async_http[0]

    async def first_request_client():
        endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", api_key="k", model="m")
        client = clients.async_client(endpoint)
        await clients.aclose_clients()
        return client

    client = asyncio.run(first_request_client())
    # The first loop took the client made ahead of time instead of making one.
    assert client._client is spare
    assert clients._spare_async_http == []


def test_the_servers_warm_up_can_be_turned_off(monkeypatch):
    from chapyter_ext.server.warm import start_warm_up

    monkeypatch.setattr(clients, "_sdk_load", [])
    assert start_warm_up(SimpleNamespace(warm_up_sdk=False)) is False
    assert clients._sdk_load == []
