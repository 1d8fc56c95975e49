"""Every chapyter-ext endpoint needs the server's token, and says nothing to those without it."""

from __future__ import annotations

import json
import re

import pytest

from chapyter_ext import __version__
from chapyter_ext.server.complete_handlers import completion_handlers
from chapyter_ext.server.handlers import handlers
from chapyter_ext.server.history_handlers import history_handlers
from chapyter_ext.server.model_proxy import proxy_handlers
from chapyter_ext.server.outside_handlers import outside_handlers
from chapyter_ext.server.warm import warm_handlers

ROUTES = [
    *handlers(),
    *history_handlers(),
    *completion_handlers(),
    *proxy_handlers(),
    *warm_handlers(),
    # The MCP endpoint takes a bearer token, not Jupyter's: tests/server/test_outside.py.
    *(route for route in outside_handlers() if route[0] != "chapyter-ext/mcp"),
]

ENDPOINTS = [
    ("GET", "chapyter-ext/config", None),
    ("POST", "chapyter-ext/context", {"snapshot": {"path": "a.ipynb"}}),
    ("GET", "chapyter-ext/models", None),
    ("GET", "chapyter-ext/commands", None),
    ("POST", "chapyter-ext/chat", {"notebook": "a.ipynb", "message": "hi"}),
    ("POST", "chapyter-ext/chat/stop", {"message_id": "x"}),
    ("POST", "chapyter-ext/agent", {"notebook": "a.ipynb", "message": "hi"}),
    (
        "POST",
        "chapyter-ext/agent/result",
        {"message_id": "x", "step_id": "s1", "status": "skipped"},
    ),
    (
        "POST",
        "chapyter-ext/agent/trial",
        {"message_id": "x", "step_id": "s1", "report": {"status": "ran"}},
    ),
    (
        "POST",
        "chapyter-ext/fix",
        {
            "notebook": "a.ipynb",
            "mode": "edit",
            "cell": {"id": "c", "index": 0, "source": "x = 1"},
            "instruction": "add type hints",
        },
    ),
    ("POST", "chapyter-ext/fix/trial", {"code": "x = 1", "report": {"status": "ran"}}),
    ("GET", "chapyter-ext/history?notebook=a.ipynb", None),
    ("DELETE", "chapyter-ext/history?notebook=a.ipynb", None),
    ("POST", "chapyter-ext/history/new", {"notebook": "a.ipynb"}),
    ("GET", "chapyter-ext/history/export?notebook=a.ipynb", None),
    ("POST", "chapyter-ext/history/import", {"notebook": "a.ipynb", "chat": {}}),
    ("POST", "chapyter-ext/complete", {"prefix": "x = ", "suffix": ""}),
    # The kernels' model route (a kernel's own credential or Jupyter's token: neither here).
    ("POST", "chapyter-ext/v1/chat/completions", {"model": "fake-model", "messages": []}),
    ("POST", "chapyter-ext/v1/completions", {"model": "fake-model", "prompt": "x"}),
    ("GET", "chapyter-ext/v1/models", None),
    ("POST", "chapyter-ext/v1/warm", {}),
    ("POST", "chapyter-ext/warm", {}),
    ("GET", "chapyter-ext/outside/events?page=p", None),
    ("POST", "chapyter-ext/outside/notebooks", {"page": "p", "notebooks": []}),
    ("POST", "chapyter-ext/outside/result", {"call_id": "c", "status": "ok"}),
    ("POST", "chapyter-ext/outside/trial", {"call_id": "c", "report": {"status": "ran"}}),
    ("POST", "chapyter-ext/outside/stop", {}),
    ("GET", "chapyter-ext/outside/tokens", None),
    ("POST", "chapyter-ext/outside/tokens", {"name": "x"}),
    ("DELETE", "chapyter-ext/outside/tokens/0123abcd", None),
]


def test_every_route_is_covered_here():
    paths = {path.split("?")[0] for _, path, _ in ENDPOINTS}
    patterns = {pattern for pattern, _ in ROUTES}
    assert all(any(re.fullmatch(p, path) for path in paths) for p in patterns)
    assert all(any(re.fullmatch(p, path) for p in patterns) for path in paths)


def test_every_verb_is_authenticated(jp_serverapp):
    # The same check the server runs at startup (and warns about); empty means all covered.
    for pattern, handler in ROUTES:
        assert jp_serverapp.web_app._check_handler_auth(pattern, handler) == []


@pytest.mark.parametrize("token", [None, "wrong-token"])
@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
async def test_forbidden_without_token(
    http_server_client, jp_base_url, fake, secrets, method, path, body, token
):
    headers = {"Authorization": f"token {token}"} if token else {}
    response = await http_server_client.fetch(
        jp_base_url + path,
        method=method,
        headers=headers,
        body=json.dumps(body) if body is not None else None,
        allow_nonstandard_methods=True,
        raise_error=False,
    )
    assert response.code == 403
    text = response.body.decode()
    for leak in (*secrets, "fake-model", str(fake.port), "Traceback"):
        assert leak not in text
    assert json.loads(text)["error"]["kind"] == "forbidden"
    assert fake.requests == []  # nothing reached the model


async def test_config_lists_models_without_secrets(jp_fetch, fake, secrets):
    response = await jp_fetch("chapyter-ext", "config")
    data = json.loads(response.body)
    assert data == {
        "models": [
            {
                "name": "fake-model",
                "model": "fake-model",
                "host": f"127.0.0.1:{fake.port}",
                "tools": True,
                "images": False,
            }
        ],
        "default": "fake-model",
        "version": __version__,
        "context_budget": 6000,
        "agent": {
            "policy": "ask",
            "max_steps": 10,
            "time_limit": 300.0,
            "tools": data["agent"]["tools"],
            "mcp_servers": [],
        },
        "save_chat_in_notebook": False,
        "inline_completion": True,
        "features": {
            "chat": True,
            "agent": True,
            "inline_completion": True,
            "mcp": True,
            "mcp_server": True,
        },
        "notices": [],
    }
    assert [t["name"] for t in data["agent"]["tools"]] == [
        "run_code",
        "read_cell",
        "list_variables",
    ]
    text = response.body.decode() + json.dumps(dict(response.headers))
    for secret in secrets:
        assert secret not in text
    assert fake.base_url not in text  # the full URL could carry userinfo


@pytest.mark.chapyter_config(
    {
        "ChapyterExtApp": {
            "models": {
                "fast": {"model": "fake-model", "temperature": 0.0},
                "other-host": {"model": "llama3", "base_url": "http://localhost:9/v1"},
            },
            "default_model": "other-host",
        }
    }
)
async def test_config_with_named_models(jp_fetch, secrets):
    data = json.loads((await jp_fetch("chapyter-ext", "config")).body)
    assert data["default"] == "other-host"
    assert data["models"] == [
        {
            "name": "fast",
            "model": "fake-model",
            "host": data["models"][0]["host"],
            "tools": True,
            "images": False,
        },
        {
            "name": "other-host",
            "model": "llama3",
            "host": "localhost:9",
            "tools": True,
            "images": False,
        },
    ]
    assert not any(secret in json.dumps(data) for secret in secrets)
