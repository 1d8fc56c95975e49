"""Every block the chat draws as code, through the real server and the loopback model: indented
blocks and list lines get verdicts in the stream, Fix finds no code in list lines, and the agent
does not run them."""

from __future__ import annotations

from typing import Any

import pytest

from chapyter_ext.contract import code_block_key
from chapyter_ext.testing.openai_server import Reply

from .agent_browser import Browser, agent_body, run_code

SNAPSHOT = {"path": "work/a.ipynb", "cell_count": 1, "variables": []}
LIST = "it is a Markdown list, not code"


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


async def test_indented_blocks_and_list_lines_get_verdicts(post_chat, get_json, fake):
    fake.script("Try:\n\n    x = (\n\nThe values:\n\n    - 12.\n    - 13.\n\nOr:\n\n    x = 1\n")
    body = {"notebook": "work/a.ipynb", "message": "Show x", "context": SNAPSHOT}
    _, reader = await post_chat(body)
    checks = reader.first("done")["checks"]
    assert checks == [
        {
            "block_id": code_block_key("x = ("),
            "runnable": False,
            "problem": "it does not parse (line 1: '(' was never closed)",
        },
        {"block_id": code_block_key("- 12.\n- 13."), "runnable": False, "problem": LIST},
        {"block_id": code_block_key("x = 1"), "runnable": True, "problem": ""},
    ]
    _, history = await get_json("chapyter-ext", "history", params={"notebook": "work/a.ipynb"})
    assert history["messages"][-1]["checks"] == checks


async def test_fix_finds_no_code_in_indented_list_lines(get_json, fake):
    fake.script("Cell: c1\n\n    - 12.\n    - 13.\n")
    body = {
        "notebook": "work/a.ipynb",
        "mode": "fix",
        "cell": {"id": "c1", "index": 0, "source": "print(y)"},
        "error": {"ename": "NameError", "evalue": "name 'y' is not defined"},
    }
    status, answer = await get_json("chapyter-ext", "fix", method="POST", body=body)
    assert status != 200
    assert "holds no code" in str(answer)


async def test_the_agent_does_not_run_list_lines(browser, fake):
    fake.script(Reply(tool_calls=[run_code("- 12.\n- 13.")]))
    reader = await browser.run(agent_body(), lambda step: pytest.fail("a step was run"))
    assert browser.steps() == []
    assert reader.first("done")["halt"] == (f"Stopped: the model's code was not run: {LIST}.")
