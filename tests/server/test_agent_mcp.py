"""Agent turns with MCP servers through the real Jupyter server: the loopback model calls the
tools of real third-party servers (``mcp-server-time``, ``server-everything``,
``mcp-server-sqlite``), the approval follows the policy and the read-only hint, results come
back redacted, and a server that cannot start is one notice line, never a hung turn."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply
from tests.mcp_servers import everything_server, sqlite_server, time_server

from .agent_browser import NOTEBOOK, Browser, agent_body, tool_messages

ENV_SECRET = "mcp-env-SECRET-7d1e0c9b5a"
MCP_DOC = Path(__file__).resolve().parents[2] / "docs" / "tools-and-mcp.md"


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def approve(step: dict[str, Any]) -> dict[str, Any]:
    return {"status": "approved"} if step["needs_approval"] else None  # type: ignore[return-value]


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], request: Any, tmp_path: Path
) -> dict[str, Any]:
    """The server's config with ``c.ChapyterExtApp.mcp_servers`` from the test's ``mcp``
    marker (a function of the test's temporary folder)."""
    marker = request.node.get_closest_marker("mcp")
    if marker is not None:
        servers = marker.args[0](tmp_path)
        jp_server_config.setdefault("ChapyterExtApp", {})["mcp_servers"] = {"mcpServers": servers}
    return jp_server_config


def _time_and_everything(tmp_path: Path) -> dict[str, Any]:
    return {"time": time_server(), "every": everything_server({"MY_TOKEN": ENV_SECRET})}


@pytest.mark.mcp.with_args(_time_and_everything)
async def test_ask_asks_for_every_mcp_call_with_its_arguments_and_the_model_gets_the_result(
    browser, fake, get_json
):
    fake.script(
        Reply(
            content="Checking the clock.",
            tool_calls=[call("time__get_current_time", {"timezone": "Asia/Tokyo"})],
        ),
        Reply(tool_calls=[call("every__get-sum", {"a": 40, "b": 2})]),
        Reply(content="In Tokyo it is now that time, and 40 + 2 = 42."),
    )
    reader = await browser.run(agent_body(policy="ask"), approve, timeout=60)
    first, second = browser.steps()
    assert (first["kind"], first["op"], first["runs"]) == (
        "time__get_current_time",
        "call",
        "server",
    )
    assert second["kind"] == "every__get-sum" and second["needs_approval"] is True
    assert first["server"] == "time" and first["title"] == "time · get_current_time"
    assert first["arguments"] == {"timezone": "Asia/Tokyo"}
    assert first["needs_approval"] is True and first["reasons"]  # 'ask': every call asks
    assert "code" not in first and "expression" not in first
    done = reader.all("step_done")
    assert [d["status"] for d in done] == ["ok", "ok"]
    assert json.loads(done[0]["result"])["timezone"] == "Asia/Tokyo"
    assert "42" in done[1]["result"]
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    names = [t["function"]["name"] for t in requests[0].body["tools"]]
    assert names[:3] == ["run_code", "read_cell", "list_variables"]
    assert "time__get_current_time" in names and "every__echo" in names
    assert "MCP servers" in requests[0].messages[0]["content"]
    assert "Asia/Tokyo" in tool_messages(requests[1])[0]
    assert "42" in tool_messages(requests[2])[-1]
    final = reader.first("done")
    assert final["status"] == "complete"
    assert [s["tool"] for s in final["steps"]] == ["time__get_current_time", "every__get-sum"]
    assert final["steps"][0]["title"] == "time · get_current_time"
    # The history keeps each call's server, arguments and result, and the export writes them.
    assert final["steps"][0]["server"] == "time"
    assert json.loads(final["steps"][0]["arguments"]) == {"timezone": "Asia/Tokyo"}
    assert json.loads(final["steps"][0]["result"])["timezone"] == "Asia/Tokyo"
    _, exported = await get_json("chapyter-ext", "history", "export", params={"notebook": NOTEBOOK})
    markdown = exported["markdown"]
    assert "1. MCP server `time` · tool `get_current_time`: " in markdown
    assert (
        '"timezone": "Asia/Tokyo"' in markdown
        and "2. MCP server `every` · tool `get-sum`" in markdown
    )
    assert "```python" not in markdown
    _, config = await get_json("chapyter-ext", "config")
    servers = {s["name"]: s for s in config["agent"]["mcp_servers"]}
    assert servers["time"]["running"] and "get_current_time" in servers["time"]["tools"]
    assert "node" not in json.dumps(config) and ENV_SECRET not in json.dumps(config)


@pytest.mark.mcp.with_args(_time_and_everything)
async def test_risky_runs_read_only_tools_unasked_and_secrets_in_results_are_redacted(
    browser, fake
):
    fake.script(
        Reply(tool_calls=[call("every__get-env", {})]),
        Reply(content="The server's environment holds a token; I will not repeat it."),
    )
    reader = await browser.run(agent_body(policy="risky"), lambda step: None, timeout=60)
    (step,) = browser.steps()
    assert step["needs_approval"] is False  # server-everything marks get-env read-only
    done = reader.first("step_done")
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    seen = "\n".join(tool_messages(requests[1]))
    assert "MY_TOKEN" in seen and ENV_SECRET not in seen and "<redacted>" in seen
    assert ENV_SECRET not in json.dumps(reader.events)
    assert done["status"] == "ok"


def _sqlite(tmp_path: Path) -> dict[str, Any]:
    return {"shop": sqlite_server(tmp_path / "shop.db")}


@pytest.mark.mcp.with_args(_sqlite)
async def test_risky_asks_for_a_write_and_skip_tells_the_model(browser, fake):
    fake.script(
        Reply(tool_calls=[call("shop__create_table", {"query": "CREATE TABLE t (x INT)"})]),
        Reply(content="I did not create the table."),
    )
    reader = await browser.run(
        agent_body(policy="risky"), lambda step: {"status": "skipped"}, timeout=60
    )
    (step,) = browser.steps()
    assert step["needs_approval"] is True
    assert any("read-only" in r for r in step["reasons"])
    assert step["arguments"] == {"query": "CREATE TABLE t (x INT)"}
    assert reader.first("step_done")["status"] == "skipped"
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    assert "skipped" in tool_messages(requests[1])[0]


def _broken(tmp_path: Path) -> dict[str, Any]:
    return {
        "time": time_server(),
        "gone": {"command": "chapyter-no-such-mcp-server-xyz"},
    }


@pytest.mark.mcp.with_args(_broken)
async def test_a_server_that_cannot_start_is_one_notice_and_the_agent_is_told(browser, fake):
    fake.script(Reply(content="Only the time server is there."))
    reader = await browser.run(agent_body(), lambda step: None, timeout=60)
    notices = [d["message"] for d in reader.all("notice")]
    assert len(notices) == 1 and "'gone'" in notices[0] and "\n" not in notices[0]
    assert "command not found" in notices[0]
    request = next(r for r in fake.requests if r.path == "/v1/chat/completions")
    names = [t["function"]["name"] for t in request.body["tools"]]
    assert "time__convert_time" in names and not any(n.startswith("gone__") for n in names)
    assert "'gone'" in request.messages[0]["content"]  # the agent is told
    assert reader.first("done")["status"] == "complete"


def _documented_example(tmp_path: Path | None = None) -> dict[str, Any]:
    """The ``mcpServers`` example of docs/tools-and-mcp.md, as written (its command on PATH)."""
    text = MCP_DOC.read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\s*\"mcpServers\".*?)\n```", text, re.S)
    assert block, "docs/tools-and-mcp.md has no mcpServers example"
    return json.loads(block.group(1))["mcpServers"]


@pytest.fixture
def venv_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test environment's scripts (mcp-server-time) on PATH, as an installed one has."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.mcp.with_args(_documented_example)
async def test_the_documented_example_works(venv_on_path, browser, fake):
    servers = _documented_example()
    (name,) = servers
    fake.script(
        Reply(tool_calls=[call(f"{name}__get_current_time", {"timezone": "Europe/Paris"})]),
        Reply(content="It is that time in Paris."),
    )
    reader = await browser.run(agent_body(policy="risky"), lambda step: None, timeout=60)
    done = reader.first("step_done")
    assert done["status"] == "ok" and "Europe/Paris" in done["result"]


@pytest.mark.chapyter_config({"Chapyter": {"image_input": "on"}})
@pytest.mark.mcp.with_args(lambda tmp_path: {"every": everything_server()})
async def test_an_mcp_image_reaches_a_model_that_takes_images_as_an_image_part(browser, fake):
    fake.script(
        Reply(tool_calls=[call("every__get-tiny-image", {})]),
        Reply(content="A tiny image."),
    )
    await browser.run(agent_body(policy="never"), lambda step: None, timeout=60)
    requests = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    parts = [
        part
        for message in requests[1].messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
    ]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,iVBOR")
