"""MCP servers as the agent's tools: the configuration, the records, and real third-party servers
(``mcp-server-time``, ``mcp-server-sqlite``, ``server-everything`` over stdio and streamable
HTTP) through the official SDK: start on first use, list, call, images, structured content,
a timeout, a server that will not start, one that dies and is restarted once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from chapyter_ext.agent.results import ToolOutput
from chapyter_ext.agent.tools.mcp import McpTool, McpToolSource, result_output, tool_name
from chapyter_ext.mcp import McpServers, load_servers, parse_servers
from chapyter_ext.mcp.config import CONFIG_FILE
from chapyter_ext.redact import Redactor
from tests.mcp_servers import everything_http, everything_server, sqlite_server, time_server


def run(coroutine):
    return asyncio.run(coroutine)


# -- configuration -------------------------------------------------------------------------------


def test_the_mcp_servers_shape_stdio_and_http_and_one_line_problems():
    servers, problems = parse_servers(
        {
            "mcpServers": {
                "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
                "docs site": {"url": "https://example.org/mcp", "headers": {"X-Key": "k" * 12}},
                "off": {"command": "x", "disabled": True},
                "both": {"command": "x", "url": "http://a/mcp"},
                "old": {"url": "http://a/sse", "type": "sse"},
                "slow": {"command": "x", "timeout": -1},
                "args": {"command": "x", "args": "--flag"},
            }
        },
        "test",
    )
    assert set(servers) == {"time", "docs_site"}
    assert servers["time"].transport == "stdio" and servers["time"].args == (
        "--local-timezone",
        "UTC",
    )
    assert servers["docs_site"].transport == "http" and servers["docs_site"].secrets() == ["k" * 12]
    # What the browser may see names no command and no header.
    assert servers["docs_site"].public() == {"name": "docs_site", "transport": "http"}
    assert len(problems) == 4 and all("\n" not in p for p in problems)
    assert any("'both'" in p and "either" in p for p in problems)
    assert any("SSE" in p for p in problems)


def test_files_of_the_jupyter_config_path_then_the_setting(tmp_path, monkeypatch):
    # Jupyter's order: the first folder of the config path wins (JUPYTER_CONFIG_PATH's first).
    user, system = tmp_path / "high", tmp_path / "low"
    for folder in (system, user):
        folder.mkdir()
    (system / CONFIG_FILE).write_text(
        json.dumps({"mcpServers": {"a": {"command": "sys-a"}, "b": {"command": "sys-b"}}})
    )
    (user / CONFIG_FILE).write_text(json.dumps({"mcpServers": {"b": {"command": "user-b"}}}))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", os.pathsep.join([str(user), str(system)]))
    servers, problems = load_servers(None)
    assert (servers["a"].command, servers["b"].command) == ("sys-a", "user-b")
    servers, _ = load_servers({"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp"}}})
    assert servers["a"].transport == "http" and servers["b"].command == "user-b"
    (user / CONFIG_FILE).write_text("{not json")
    _, problems = load_servers(None)
    assert len(problems) == 1 and "cannot be read as JSON" in problems[0]


def test_tool_names_are_namespaced_within_openai_limits():
    assert tool_name("time", "get_current_time") == "time__get_current_time"
    assert tool_name("db", "run query!") == "db__run_query_"
    assert len(tool_name("s" * 24, "t" * 80)) == 64


class _Spec:
    def __init__(self, name, read_only=None, schema=None):
        self.name = name
        self.description = f"{name} does things"
        self.title = None
        self.input_schema = schema or {"type": "object", "properties": {"x": {"type": "string"}}}

        class _Annotations:
            title = None
            read_only_hint = read_only

        self.annotations = _Annotations()


class _Server:
    name = "srv"


@pytest.mark.parametrize(
    ("policy", "read_only", "asks"),
    [
        ("ask", True, True),
        ("ask", None, True),
        ("risky", True, False),
        ("risky", False, True),
        ("risky", None, True),
        ("never", None, False),
    ],
)
def test_approval_follows_the_policy_and_the_read_only_hint(policy, read_only, asks):
    tool = McpTool(_Server(), _Spec("t", read_only))
    decision = tool.approval(policy, {"x": "1"}, set())
    assert decision.needs is asks
    assert bool(decision.reasons) is asks
    assert (tool.runs, tool.op, tool.server, tool.label) == ("server", "call", "srv", "srv · t")


def test_results_become_text_images_and_notes_within_the_budget_redacted():
    from mcp.types import (
        AudioContent,
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        TextContent,
        TextResourceContents,
    )

    secret = "tok-SECRET-0123456789abcdef"
    result = CallToolResult(
        content=[
            TextContent(type="text", text=f"first line {secret}\n" + "x" * 5000),
            ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
            AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///a.txt", text="resource text"),
            ),
        ],
        structured_content={"answer": 42},
    )
    output = result_output(result)
    assert output.images == [("image/png", "iVBORw0KGgo=")]
    assert any("audio" in note for note in output.notes)
    assert "resource text" in output.text and '"answer": 42' in output.text
    tool = McpTool(_Server(), _Spec("t", True))
    redactor = Redactor([secret])
    seen = tool.observe(output, budget=300, images=True, redactor=redactor)
    assert secret not in seen.text and "<redacted>" in seen.text
    assert "more characters cut" in seen.text and len(seen.text) < 400
    assert seen.images == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    ]
    blind = tool.observe(output, budget=300, images=False, redactor=redactor)
    assert blind.images == [] and "1 image returned, not shown" in blind.text
    failed = tool.observe(
        ToolOutput(error="timed out"), budget=300, images=False, redactor=redactor
    )
    assert failed.status == "error" and "timed out" in failed.text
    reported = tool.observe(
        ToolOutput(text="no such table", is_error=True), budget=300, images=False, redactor=redactor
    )
    assert reported.status == "error" and reported.text.startswith("The tool reported an error")


# -- real servers --------------------------------------------------------------------------------


def servers(config: dict, **kwargs) -> McpServers:
    return McpServers.from_config({"mcpServers": config}, files=[], **kwargs)


def test_time_server_tools_listed_once_and_called():
    async def scenario():
        mcp = servers({"time": time_server()})
        source = McpToolSource(mcp)
        try:
            assert mcp.public()[0]["running"] is False  # nothing starts before a turn
            found = await source.turn_tools()
            assert found.problems == []
            names = {t.name: t for t in found.tools}
            assert set(names) == {"time__get_current_time", "time__convert_time"}
            tool = names["time__get_current_time"]
            assert tool.read_only and not tool.acts
            output = await tool.call({"timezone": "Asia/Tokyo"})
            assert not output.failed
            assert json.loads(output.text)["timezone"] == "Asia/Tokyo"
            # Listed once: a second turn asks the running server nothing new.
            server = mcp.servers["time"]
            again = await source.turn_tools()
            assert [t.name for t in again.tools] == [t.name for t in found.tools]
            assert server.running and mcp.public()[0]["tools"] == [
                "get_current_time",
                "convert_time",
            ]
            bad = await tool.call({"timezone": "Mars/Olympus"})
            assert bad.is_error and "Mars/Olympus" in bad.text
        finally:
            await mcp.close()
        assert not mcp.servers["time"].running

    run(scenario())


def test_sqlite_server_writes_and_reads(tmp_path):
    db = tmp_path / "shop.db"

    async def scenario():
        mcp = servers({"shop": sqlite_server(db)})
        try:
            tools = {t.name: t for t in (await McpToolSource(mcp).turn_tools()).tools}
            assert {"shop__read_query", "shop__write_query", "shop__create_table"} <= set(tools)
            # Not marked read-only: under 'risky' a write asks.
            assert tools["shop__write_query"].approval("risky", {}, set()).needs
            create = "CREATE TABLE fruit (name TEXT, price REAL)"
            assert not (await tools["shop__create_table"].call({"query": create})).failed
            insert = "INSERT INTO fruit VALUES ('apple', 1.5), ('pear', 2.25)"
            assert not (await tools["shop__write_query"].call({"query": insert})).failed
            read = await tools["shop__read_query"].call({"query": "SELECT SUM(price) FROM fruit"})
            assert "3.75" in read.text
        finally:
            await mcp.close()

    run(scenario())


def test_everything_over_stdio_images_structured_content_and_a_timeout():
    async def scenario():
        mcp = servers({"every": everything_server()}, call_timeout=2)
        try:
            tools = {t.tool: t for t in (await McpToolSource(mcp).turn_tools()).tools}
            assert (await tools["echo"].call({"message": "hi there"})).text.endswith("hi there")
            image = await tools["get-tiny-image"].call({})
            assert image.images and image.images[0][0] == "image/png"
            summed = await tools["get-sum"].call({"a": 2, "b": 40})
            assert "42" in summed.text
            slow = await tools["trigger-long-running-operation"].call({"duration": 30, "steps": 3})
            assert slow.error and "did not answer within 2 s" in slow.error
            assert "\n" not in slow.error
        finally:
            await mcp.close()

    run(scenario())


def test_everything_over_streamable_http():
    async def scenario(url):
        mcp = servers({"web": {"url": url}})
        try:
            tools = {t.tool: t for t in (await McpToolSource(mcp).turn_tools()).tools}
            assert (await tools["echo"].call({"message": "over http"})).text.endswith("over http")
        finally:
            await mcp.close()

    with everything_http() as url:
        run(scenario(url))


def test_a_server_that_cannot_start_is_one_line_and_the_others_still_serve():
    async def scenario():
        mcp = servers(
            {
                "time": time_server(),
                "nope": {"command": "chapyter-no-such-mcp-server"},
                "crash": {
                    "command": sys.executable,
                    "args": ["-c", "import sys; sys.exit('boom: no db')"],
                },
            },
            start_timeout=20,
        )
        try:
            found = await McpToolSource(mcp).turn_tools()
            assert {t.server for t in found.tools} == {"time"}
            assert len(found.problems) == 2 and all("\n" not in p for p in found.problems)
            nope = next(p for p in found.problems if "'nope'" in p)
            assert "command not found" in nope and "not offered" in nope
            crash = next(p for p in found.problems if "'crash'" in p)
            assert "boom: no db" in crash
            # The next turn is told at once, without starting them again.
            started = time.perf_counter()
            again = await McpToolSource(mcp).turn_tools()
            assert time.perf_counter() - started < 0.5
            assert sorted(again.problems) == sorted(found.problems)
        finally:
            await mcp.close()

    run(scenario())


def _children_running(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and marker in cmdline and stat[0] != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the server's process in /proc")
def test_a_server_that_died_is_restarted_once():
    async def scenario():
        mcp = servers({"time": time_server()})
        try:
            (tool, *_) = (await McpToolSource(mcp).turn_tools()).tools
            (pid,) = _children_running("mcp_server_time")
            os.kill(pid, signal.SIGKILL)
            server = mcp.servers["time"]
            for _ in range(100):  # the pump sees the end of the stream
                if not server.running:
                    break
                await asyncio.sleep(0.05)
            assert not server.running
            output = await tool.call({"timezone": "UTC"})  # restarted on use
            assert not output.failed and _children_running("mcp_server_time") != [pid]
            (pid,) = _children_running("mcp_server_time")
            os.kill(pid, signal.SIGKILL)
            for _ in range(100):
                if not server.running:
                    break
                await asyncio.sleep(0.05)
            # A call succeeded since the restart: one more restart is allowed.
            assert not (await tool.call({"timezone": "UTC"})).failed
        finally:
            await mcp.close()
        assert _children_running("mcp_server_time") == []

    run(scenario())


def test_the_tools_are_listed_again_when_the_server_says_they_changed():
    growing = Path(__file__).parent / "mcp_servers" / "growing_server.py"

    async def scenario():
        mcp = servers({"g": {"command": sys.executable, "args": [str(growing)]}})
        source = McpToolSource(mcp)
        try:
            first = {t.tool: t for t in (await source.turn_tools()).tools}
            assert set(first) == {"grow"}
            assert (await first["grow"].call({})).text == "grown"
            for _ in range(100):  # the notification arrives on its own
                if mcp.servers["g"]._tools is None:
                    break
                await asyncio.sleep(0.02)
            again = {t.tool for t in (await source.turn_tools()).tools}
            assert again == {"grow", "added"}
        finally:
            await mcp.close()

    run(scenario())


def test_the_sdk_loads_only_when_a_server_starts():
    import subprocess

    code = (
        "import sys, chapyter_ext, chapyter_ext.server.app, chapyter_ext.agent.headless, "
        "chapyter_ext.mcp, chapyter_ext.agent.tools.mcp; "
        "from chapyter_ext.mcp import McpServers; "
        "McpServers.from_config({'mcpServers': {'t': {'command': 'x'}}}, files=[]); "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
