"""Fixtures for the server extension: a real Jupyter server with chapyter_ext, talking to the
loopback OpenAI-compatible server, its streamed routes read with the tests' SSE reader."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

# The pytest-jupyter server plugin (jp_fetch, jp_serverapp, ... and its async test runner).
# pytest honours ``pytest_plugins`` only in the top-level conftest (anywhere else it fails the
# whole run from the repo root), so its fixtures and hooks are imported here instead, which
# also keeps them to this folder.
from pytest_jupyter.jupyter_server import *  # noqa: F403

from chapyter_ext.testing.openai_server import FakeOpenAIServer
from chapyter_ext.testing.sse import SSEReader

from .raw_http import Raw

API_KEY = "sk-test-SECRET-MARKER-123"
HEADER_SECRET = "hdr-SECRET-MARKER-456"
SECRETS = (API_KEY, HEADER_SECRET)


def pytest_configure(config: pytest.Config) -> None:
    """Register our marker, and fail on handlers that skip authentication."""
    config.addinivalue_line(
        "markers",
        "chapyter_config(dict or fake -> dict): server config merged into jp_server_config",
    )
    config.addinivalue_line(
        "markers",
        "mcp(tmp_path -> dict): the test server's ChapyterExtApp.mcp_servers (test_agent_mcp)",
    )
    config.addinivalue_line(
        "markers", "admin_locks: the administrator locks the model (test_kernel_access)"
    )
    # The server only warns about a handler verb without @authenticated; we make it fatal.
    config.addinivalue_line(
        "filterwarnings", "error::jupyter_server.utils.JupyterServerAuthWarning"
    )


@pytest.fixture
def secrets() -> tuple[str, ...]:
    """Values that must never appear in a response, a log line or a history file."""
    return SECRETS


@pytest.fixture
def fake(fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    """The test's loopback OpenAI-compatible server (tests/conftest.py's), the server's model."""
    return fake_openai


@pytest.fixture
def history_dir(tmp_path: Path) -> Path:
    """Where the extension keeps chat histories in this test."""
    return tmp_path / "chats"


@pytest.fixture
def jp_server_config(
    fake: FakeOpenAIServer, history_dir: Path, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """chapyter_ext enabled, auth enforced, endpoint = the fake server with a marker key."""
    config: dict[str, Any] = {
        "ServerApp": {
            # pytest-jupyter adds jupyter_server_terminals unless told not to, and its
            # websocket handler trips the very auth warning this suite turns into an error.
            "jpserver_extensions": {"chapyter_ext": True, "jupyter_server_terminals": False},
            "terminals_enabled": False,
            "allow_unauthenticated_access": False,
            # A broken extension must fail the test, not just log a warning.
            "reraise_server_extension_failures": True,
        },
        "Chapyter": {
            "base_url": fake.base_url,
            "api_key": API_KEY,
            "model": "fake-model",
            "extra_headers": {"X-Test-Secret": HEADER_SECRET},
            # Retries only slow the error tests down; llm.py has its own tests for them.
            "max_retries": 0,
            "timeout": 10.0,
        },
        "ChapyterExtApp": {"history_dir": str(history_dir)},
    }
    marker = request.node.get_closest_marker("chapyter_config")
    if marker is not None:
        extra = marker.args[0]
        if callable(extra):  # config that depends on the fake server (its port)
            extra = extra(fake)
        for section, values in extra.items():
            config.setdefault(section, {}).update(values)
    return config


@pytest.fixture
def ext_app(jp_serverapp: Any) -> Any:
    """The running ChapyterExtApp instance."""
    return jp_serverapp.extension_manager.extension_points["chapyter_ext"].app


@pytest.fixture
def chat_service(ext_app: Any) -> Any:
    """The extension's ChatService, to look at active streams."""
    return ext_app.chat


def _streamed_post(jp_fetch: Any, route: str) -> Callable[..., Awaitable[tuple[Any, SSEReader]]]:
    """``await post(body)`` -> (response, SSEReader): POST chapyter-ext/<route>, streamed."""

    async def post(body: dict[str, Any], reader: SSEReader | None = None, **kwargs: Any):
        reader = reader or SSEReader()
        response = await jp_fetch(
            "chapyter-ext",
            route,
            method="POST",
            body=json.dumps(body),
            streaming_callback=reader.feed,
            **kwargs,
        )
        return response, reader

    return post


@pytest.fixture
def post_chat(jp_fetch: Any) -> Callable[..., Awaitable[tuple[Any, SSEReader]]]:
    """``await post_chat(body)`` -> (response, SSEReader): POST chapyter-ext/chat, streamed."""
    return _streamed_post(jp_fetch, "chat")


@pytest.fixture
def post_complete(jp_fetch: Any) -> Callable[..., Awaitable[tuple[Any, SSEReader]]]:
    """``await post_complete(body)``: POST chapyter-ext/complete, streamed."""
    return _streamed_post(jp_fetch, "complete")


@pytest.fixture
def post_then_close(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: dict[str, str]
) -> Callable[..., Awaitable[None]]:
    """``await post_then_close(route, body)``: POST chapyter-ext/<route> on a raw socket, read
    until the first ``token`` event, then close the connection (a tab closed, a fetch aborted)."""
    # jp_fetch: the server accepts connections only once its HTTP client fixture exists.

    async def post(route: str, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", jp_http_port)
        head = (
            f"POST {jp_base_url}chapyter-ext/{route} HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{jp_http_port}\r\n"
            f"Authorization: {jp_auth_header['Authorization']}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n"
        )
        writer.write(head.encode() + data)
        await writer.drain()
        received = b""
        # Raw HTTP (chunked): look for the event's bytes, no SSE parse.
        while b"event: token" not in received:
            received += await asyncio.wait_for(reader.read(4096), 10)
        writer.close()

    return post


@pytest.fixture
def get_json(jp_fetch: Any) -> Callable[..., Awaitable[tuple[int, Any]]]:
    """``await get_json(*parts, method=..., body=..., params=...)`` -> (status, JSON body)."""

    async def fetch(*parts: str, **kwargs: Any) -> tuple[int, Any]:
        if isinstance(kwargs.get("body"), dict):
            kwargs["body"] = json.dumps(kwargs["body"])
        if kwargs.get("method") == "DELETE":
            kwargs.setdefault("allow_nonstandard_methods", True)
        response = await jp_fetch(*parts, raise_error=False, **kwargs)
        return response.code, json.loads(response.body or b"null")

    return fetch


@pytest.fixture
def raw(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> Any:
    """``await raw()``: a new HTTP/1.1 connection written by hand (``raw_http.Raw``), closed
    after the test. The server listens once ``http_server_client`` has started it."""
    opened: list[Raw] = []

    async def connect() -> Raw:
        connection = await Raw(jp_http_port, jp_base_url).open()
        opened.append(connection)
        return connection

    yield connect
    for connection in opened:
        connection.close()


def one_cell_notebook(metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """An nbformat 4.5 notebook of one code cell (``x = 1``) with this notebook metadata."""
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": metadata or {},
        "cells": [
            {
                "id": "c1",
                "cell_type": "code",
                "source": "x = 1",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
        ],
    }


@pytest.fixture
def make_notebook() -> Callable[..., dict[str, Any]]:
    """:func:`one_cell_notebook`, as a fixture (test modules do not import conftest)."""
    return one_cell_notebook


@pytest.fixture
def contents(jp_fetch: Any) -> Callable[..., Awaitable[Any]]:
    """``await contents(method, path, body)`` on the server's contents API -> JSON or None."""

    async def call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = await jp_fetch(
            "api",
            "contents",
            path,
            method=method,
            body=json.dumps(body) if body is not None else None,
            allow_nonstandard_methods=True,
        )
        return json.loads(response.body) if response.body else None

    return call


async def eventually(check: Callable[[], Any], timeout: float = 5.0, what: str = "") -> Any:
    """Poll ``check`` until it returns something truthy, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


@pytest.fixture
def wait_until() -> Callable[..., Awaitable[Any]]:
    """The :func:`eventually` poller, as a fixture (test modules do not import conftest)."""
    return eventually
