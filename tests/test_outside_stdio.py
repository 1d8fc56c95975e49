"""``chapyter-ext mcp``, the stdio relay, driven by the official SDK's stdio client: against a
small streamable-HTTP server of the same SDK (behind a bearer token, under a base_url), and
against a real Jupyter server's ``chapyter-ext/mcp``; one-line failures for a server that is
not running, a wrong or missing token, an endpoint that is not there."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from chapyter_ext.outside.stdio import ENV_TOKEN, ENV_URL, endpoint_url
from chapyter_ext.testing.jupyter_process import JupyterProcess

TOKEN = "test-outside-token-0123456789"
HTTP_PORT = 19720
DEAD_PORT = 19721
JUPYTER_PORT = 19722


def _relay_env(token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_TOKEN, ENV_URL)}
    if token is not None:
        env[ENV_TOKEN] = token
    return env


def _relay_command(url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "chapyter_ext.cli", "mcp", "--url", url, *extra]


class _Bearer:
    """The token check a Jupyter server makes, around the SDK's app."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b'{"message": "no"}'})
                return
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def sdk_server() -> Iterator[str]:
    """An SDK streamable-HTTP server at ``/base/chapyter-ext/mcp``: its root URL."""
    import uvicorn

    app = MCPServer("fake-jupyter")

    @app.tool()
    def who(ctx: Context) -> str:
        """The client's name as the server sees it."""
        info = ctx.session.client_params.client_info
        return f"{info.name} {info.version}"

    @app.tool()
    def add(a: int, b: int) -> int:
        """a + b"""
        return a + b

    @app.tool()
    def refuse() -> str:
        """Always fails."""
        raise ToolError("the user said no")

    @app.tool()
    def protocol_error() -> str:
        """Fails at the protocol level."""
        raise MCPError(-32602, "no such notebook:\n  a.ipynb")

    web = app.streamable_http_app(streamable_http_path="/base/chapyter-ext/mcp")
    config = uvicorn.Config(_Bearer(web), host="127.0.0.1", port=HTTP_PORT, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the SDK server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{HTTP_PORT}/base/"
    server.should_exit = True
    thread.join(10)


async def _drive(url: str, token: str, calls: list[tuple[str, dict]], *extra: str) -> Any:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    command = _relay_command(url, *extra)
    params = StdioServerParameters(command=command[0], args=command[1:], env=_relay_env(token))
    info = Implementation(name="test-client", version="9.1")
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=info) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        results: list[Any] = []
        for name, args in calls:
            try:
                results.append(await session.call_tool(name, args))
            except MCPError as err:  # the relay's MCP error, kept for the test to read
                results.append(err)
    return tools, results


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_endpoint_url_joins_the_base_url_once():
    assert endpoint_url("http://h:1/") == "http://h:1/chapyter-ext/mcp"
    assert endpoint_url("http://h:1/lab/base") == "http://h:1/lab/base/chapyter-ext/mcp"
    assert endpoint_url("http://h:1/x/chapyter-ext/mcp/") == "http://h:1/x/chapyter-ext/mcp"


def test_the_relay_lists_and_calls_the_servers_tools(sdk_server):
    tools, results = asyncio.run(
        _drive(sdk_server, TOKEN, [("add", {"a": 2, "b": 40}), ("who", {}), ("refuse", {})])
    )
    assert {"add", "who", "refuse"} <= {tool.name for tool in tools.tools}
    added, who, refused = results
    assert not added.is_error and _text(added) == "42"
    # The approval card names the client that spoke to the relay.
    assert _text(who) == "test-client 9.1"
    assert refused.is_error and "the user said no" in _text(refused)


def test_a_protocol_error_comes_back_as_one_line(sdk_server):
    _, (error,) = asyncio.run(_drive(sdk_server, TOKEN, [("protocol_error", {})]))
    assert isinstance(error, MCPError) and error.code == -32602
    assert error.message == "no such notebook: a.ipynb"


def test_name_replaces_the_clients_name(sdk_server):
    _, (who,) = asyncio.run(_drive(sdk_server, TOKEN, [("who", {})], "--name", "My agent"))
    assert _text(who) == "My agent 9.1"


def _run_relay(url: str, token: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _relay_command(url),
        env=_relay_env(token),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _one_line_failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1
    assert done.stdout == ""  # stdout is the MCP channel: nothing else goes there
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("chapyter-ext mcp: ")
    return lines[0]


def test_a_wrong_token_fails_in_one_line_without_showing_it(sdk_server):
    line = _one_line_failure(_run_relay(sdk_server, "wrong-token-abcdef"))
    assert "refused the token (401)" in line and "wrong-token-abcdef" not in line


def test_no_token_no_server_no_endpoint_each_fail_in_one_line(sdk_server):
    assert "no token" in _one_line_failure(_run_relay(sdk_server, None))
    dead = _one_line_failure(_run_relay(f"http://127.0.0.1:{DEAD_PORT}/", TOKEN))
    assert "no Jupyter server answers" in dead
    # The SDK server answers 404 below another base_url (after the token check).
    missing = _one_line_failure(_run_relay(f"http://127.0.0.1:{HTTP_PORT}/other/", TOKEN))
    assert "no MCP endpoint" in missing


def test_the_token_is_never_an_argument():
    from chapyter_ext.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["mcp", "--token", "x"])


def test_the_relay_against_a_running_jupyter_server(tmp_path: Path):
    """List the tools of a real server's endpoint and make one read call it answers (no page
    is connected: it says so, in one line); a wrong token is refused before anything runs."""
    jupyter = JupyterProcess(tmp_path)
    jupyter.port = JUPYTER_PORT
    with jupyter:
        tools, (listed,) = asyncio.run(
            _drive(jupyter.base, jupyter.token, [("list_notebooks", {})])
        )
        wrong = _one_line_failure(_run_relay(jupyter.base, "not-the-token-123456"))
    names = {tool.name for tool in tools.tools}
    assert {"list_notebooks", "read_cells", "run_code", "edit_cell", "run_cell", "undo"} <= names
    assert listed.is_error and "JupyterLab" in _text(listed)
    assert "\n" not in _text(listed).strip()
    assert "refused the token" in wrong and "not-the-token-123456" not in wrong


def test_the_relay_says_when_the_endpoint_is_switched_off(tmp_path: Path):
    jupyter = JupyterProcess(tmp_path, "--Chapyter.mcp_server=False")
    jupyter.port = JUPYTER_PORT + 1
    with jupyter:
        line = _one_line_failure(_run_relay(jupyter.base, jupyter.token))
    assert "switched off" in line
