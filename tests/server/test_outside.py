"""Outside agents over MCP (chapyter_ext/outside, server/outside_handlers.py): the official
``mcp`` SDK client against the real Jupyter server, a stand-in page (outside_browser.py)
answering the relayed calls, through a real kernel where code runs."""

from __future__ import annotations

import os
import stat
from typing import Any

import httpx
import pytest

from chapyter_ext.server.outside_handlers import NO_TOKEN, WRONG_TOKEN
from tests.kernel_harness import Kernel

from .kernel_browser import KernelThread
from .outside_browser import NOTEBOOK, OUTSIDE, OutsideBrowser, mcp_session, text_of

SECRET_KEY = "sk-test-SECRET-MARKER-123"  # conftest's API_KEY: the server's redactor knows it


@pytest.fixture
def base(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    return f"http://127.0.0.1:{jp_http_port}{jp_base_url.rstrip('/')}/"


@pytest.fixture
def server_token(jp_auth_header: dict[str, str]) -> str:
    return jp_auth_header["Authorization"].split()[-1]


@pytest.fixture
def url(base: str) -> str:
    return f"{base}chapyter-ext/mcp"


@pytest.fixture
def kernel_and_thread():
    kernel = Kernel({"CHAPYTER_MODEL": "fake-model"})
    thread = KernelThread()
    yield kernel, thread
    thread.close()
    kernel.shutdown()


def page(base: str, auth: dict[str, str], **kwargs: Any) -> OutsideBrowser:
    return OutsideBrowser(base, auth, **kwargs)


async def test_tools_are_listed_and_a_notebook_read(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    async with page(base, jp_auth_header) as browser, mcp_session(url, server_token) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == {
            "list_notebooks",
            "read_cells",
            "list_variables",
            "describe_variable",
            "run_code",
            "edit_cell",
            "run_cell",
            "undo",
        }
        listed = await session.call_tool("list_notebooks", {})
        assert not listed.is_error and NOTEBOOK in text_of(listed)
        read = await session.call_tool("read_cells", {"notebook": NOTEBOOK})
        assert not read.is_error and "x = 6 * 7" in text_of(read)
        call = browser.calls[-1]
        assert call["client"] == "test-agent 1.0" and call["acts"] is False
        assert call["decision"] is None and call["code"] is None


async def test_a_notebook_no_page_has_open_is_answered_in_one_line(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    async with mcp_session(url, server_token) as session:
        alone = await session.call_tool("read_cells", {"notebook": NOTEBOOK})
        assert alone.is_error and "not open in JupyterLab" in text_of(alone)
        async with page(base, jp_auth_header):
            other = await session.call_tool("read_cells", {"notebook": "other.ipynb"})
            assert other.is_error and "other.ipynb is not open in JupyterLab" in text_of(other)


async def test_run_code_asks_under_ask_and_the_user_approves(
    jp_serverapp: Any,
    base: str,
    url: str,
    server_token: str,
    jp_auth_header: dict[str, str],
    kernel_and_thread: Any,
) -> None:
    kernel, thread = kernel_and_thread
    asked: list[dict[str, Any]] = []

    def approve(call: dict[str, Any]) -> bool:
        asked.append(call)
        return True

    browser = page(base, jp_auth_header, kernel=kernel, thread=thread, approve=approve)
    async with browser, mcp_session(url, server_token) as session:
        result = await session.call_tool("run_code", {"notebook": NOTEBOOK, "code": "print(6*7)"})
        assert not result.is_error, text_of(result)
        assert "42" in text_of(result)
        call = browser.calls[-1]
        assert call["decision"] == "ask" and call["code"] == "print(6*7)" and call["acts"]
        assert call["provenance"] == {
            "generated_by": "outside",
            "client": "test-agent 1.0",
            "tool": "run_code",
        }
        assert asked == [call]


@pytest.mark.chapyter_config({"Chapyter": {"agent_policy": "risky"}})
async def test_harmless_code_runs_unasked_under_risky(
    jp_serverapp: Any,
    base: str,
    url: str,
    server_token: str,
    jp_auth_header: dict[str, str],
    kernel_and_thread: Any,
) -> None:
    kernel, thread = kernel_and_thread
    browser = page(base, jp_auth_header, kernel=kernel, thread=thread, approve=lambda c: False)
    async with browser, mcp_session(url, server_token) as session:
        result = await session.call_tool(
            "run_code", {"notebook": NOTEBOOK, "code": "total = sum(range(10))\nprint(total)"}
        )
        assert not result.is_error, text_of(result)
        assert "45" in text_of(result)
        assert browser.calls[-1]["decision"] == "run"
        assert browser.outcomes[browser.calls[-1]["call_id"]] == "ran"
        # Code that writes a file is tried first, and asks: refused by the user here.
        risky = await session.call_tool(
            "run_code", {"notebook": NOTEBOOK, "code": "open('out.txt', 'w').write('x')"}
        )
        assert risky.is_error and "declined" in text_of(risky)
        assert browser.calls[-1]["decision"] in ("try", "ask")
        assert browser.outcomes[browser.calls[-1]["call_id"]] == "asked"


@pytest.mark.chapyter_config({"Chapyter": {"outside_timeout": 5}})
async def test_a_call_nobody_answers_is_refused_on_timeout(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    async def silent(call: dict[str, Any]) -> None:
        return None  # the user never answers

    async with page(base, jp_auth_header, answer=silent) as browser:
        async with mcp_session(url, server_token) as session:
            result = await session.call_tool("run_code", {"notebook": NOTEBOOK, "code": "1 + 1"})
        assert result.is_error
        assert "within 5 seconds (Chapyter.outside_timeout)" in text_of(result)
        assert browser.cancels == [{"call_id": browser.calls[-1]["call_id"], "reason": "timeout"}]


async def test_edit_cell_is_a_reviewed_diff_accepted_or_rejected(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    verdicts = [True, False]
    browser = page(base, jp_auth_header, approve=lambda call: verdicts.pop(0))
    async with browser, mcp_session(url, server_token) as session:
        args = {"notebook": NOTEBOOK, "cell_id": "cell-a", "source": "x = 7 * 6"}
        accepted = await session.call_tool("edit_cell", args)
        assert not accepted.is_error and "x = 7 * 6" in text_of(accepted)
        assert browser.calls[-1]["decision"] == "ask" and browser.calls[-1]["code"] == "x = 7 * 6"
        rejected = await session.call_tool("edit_cell", {**args, "source": "x = 0"})
        assert rejected.is_error and "rejected" in text_of(rejected)
        assert browser.cells["cell-a"] == "x = 7 * 6"


async def test_run_cell_decides_on_the_cell_source_and_undo_asks(
    jp_serverapp: Any,
    base: str,
    url: str,
    server_token: str,
    jp_auth_header: dict[str, str],
    kernel_and_thread: Any,
) -> None:
    kernel, thread = kernel_and_thread
    browser = page(base, jp_auth_header, kernel=kernel, thread=thread)
    async with browser, mcp_session(url, server_token) as session:
        ran = await session.call_tool("run_cell", {"notebook": NOTEBOOK, "cell_id": "cell-a"})
        assert not ran.is_error and "42" in text_of(ran)
        assert browser.calls[-1]["code"] == "x = 6 * 7\nprint(x)"
        undone = await session.call_tool("undo", {"notebook": NOTEBOOK})
        assert not undone.is_error and "restored" in text_of(undone)
        assert browser.calls[-1]["decision"] == "ask"


async def test_results_are_redacted(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    async def leaky(call: dict[str, Any]) -> dict[str, Any]:
        output = f"the key is {SECRET_KEY}"
        return {"status": "ok", "result": {"cells": [{"id": "c", "outputs": output}]}}

    async with page(base, jp_auth_header, answer=leaky), mcp_session(url, server_token) as s:
        read = await s.call_tool("read_cells", {"notebook": NOTEBOOK})
        assert SECRET_KEY not in text_of(read) and "<redacted>" in text_of(read)


async def test_stop_ends_a_running_call(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    import asyncio

    async def slow(call: dict[str, Any]) -> None:
        return None

    async with page(base, jp_auth_header, answer=slow) as browser:
        async with mcp_session(url, server_token) as session:
            running = asyncio.ensure_future(
                session.call_tool("run_code", {"notebook": NOTEBOOK, "code": "1"})
            )
            while not browser.calls:
                await asyncio.sleep(0.01)
            stopped = await browser.post("stop", {"client": "test-agent 1.0"})
            assert stopped.json() == {"stopped": 1}
            result = await asyncio.wait_for(running, 10)
        assert result.is_error and "Stopped by the user" in text_of(result)
        assert browser.cancels[-1]["reason"] == "stop"


@pytest.mark.chapyter_config({"Chapyter": {"agent_max_steps": 2}})
async def test_steps_are_capped_per_session(
    jp_serverapp: Any, base: str, url: str, server_token: str, jp_auth_header: dict[str, str]
) -> None:
    async with page(base, jp_auth_header), mcp_session(url, server_token) as session:
        for _ in range(2):
            assert not (await session.call_tool("list_notebooks", {})).is_error
        capped = await session.call_tool("list_notebooks", {})
        assert capped.is_error and "Chapyter.agent_max_steps" in text_of(capped)


async def test_tokens_are_made_listed_used_and_revoked(
    jp_serverapp: Any, base: str, url: str, get_json: Any, jp_auth_header: dict[str, str]
) -> None:
    status, made = await get_json(
        "chapyter-ext", "outside", "tokens", method="POST", body={"name": "my laptop"}
    )
    assert status == 201 and made["token"].startswith("chx-")
    status, listed = await get_json("chapyter-ext", "outside", "tokens")
    assert listed["tokens"][0]["name"] == "my laptop" and "token" not in listed["tokens"][0]
    from jupyter_core.paths import jupyter_data_dir

    path = os.path.join(jupyter_data_dir(), "chapyter-ext", "outside_tokens.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as f:
        assert made["token"] not in f.read()
    async with page(base, jp_auth_header), mcp_session(url, made["token"]) as session:
        assert not (await session.call_tool("list_notebooks", {})).is_error
    status, _ = await get_json("chapyter-ext", "outside", "tokens", made["id"], method="DELETE")
    assert status == 204
    assert await refusal(url, made["token"]) == (403, "forbidden", WRONG_TOKEN)


async def refusal(url: str, token: str | None) -> tuple[int, str, str]:
    """What the MCP endpoint answers an initialize with ``token``: status, kind, message."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    async with httpx.AsyncClient() as client:
        response = await client.post(url, json=body, headers=headers)
    error = response.json()["error"]
    assert "\n" not in error["message"]
    return response.status_code, error["kind"], error["message"]


async def test_no_token_or_a_wrong_one_is_refused_before_anything(
    jp_serverapp: Any, url: str, jp_auth_header: dict[str, str]
) -> None:
    assert await refusal(url, None) == (401, "unauthorized", NO_TOKEN)
    assert await refusal(url, "chx-not-a-token") == (403, "forbidden", WRONG_TOKEN)
    assert (await refusal(url, "wrong"))[0] == 403
    # Jupyter's own scheme is no bearer token either.
    async with httpx.AsyncClient() as client:
        response = await client.post(url, json={}, headers=jp_auth_header)
    assert response.status_code == 401
    # The SDK's client fails to connect, too (its error wrapped in its task groups').
    with pytest.raises(Exception, match="unhandled errors") as failed:
        async with mcp_session(url, "chx-not-a-token"):
            pass
    assert "error response" in repr(failed.value.exceptions)


@pytest.mark.chapyter_config({"Chapyter": {"mcp_server": False}})
async def test_the_mcp_server_switched_off_refuses(
    jp_serverapp: Any, url: str, server_token: str
) -> None:
    status, kind, message = await refusal(url, server_token)
    assert (status, kind) == (403, "disabled") and "Chapyter.mcp_server" in message


def test_the_contracts_examples_are_what_the_relay_sends_and_reads() -> None:
    from chapyter_ext.outside.relay import encode
    from chapyter_ext.redact import Redactor
    from chapyter_ext.testing.sse import SSEReader
    from chapyter_ext.testing.wire_shape import body_problems, event_problems

    for entry in OUTSIDE["types"]:
        for example in entry["examples"]:
            assert event_problems(OUTSIDE, entry["event"], "outside", example["data"]) == []
            reader = SSEReader()
            reader.feed(encode(entry["event"], example["data"], Redactor()))
            [(name, data, _)] = reader.events
            assert (name, data) == (entry["event"], example["data"])
    for route in OUTSIDE["routes"]:
        assert body_problems(OUTSIDE, route["route"], route["example"]) == []
    assert body_problems(OUTSIDE, "outside/result", {"call_id": "c", "status": 1}) != []
