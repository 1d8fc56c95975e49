"""POST chapyter-ext/context: the chip shows exactly the context a chat message sends."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.testing.openai_server import Reply
from tests.snapshots import snapshot

NOTEBOOK = "work/analysis.ipynb"


async def test_context_is_what_the_chat_sends(get_json, post_chat, fake, secrets):
    snap = snapshot(
        selection="groupby",
        variables=[
            {"name": "df", "type": "DataFrame", "summary": "3 rows × 2 columns"},
            {"name": "note", "type": "str", "summary": f"'key {secrets[0]}'"},
        ],
    )
    status, preview = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": snap}
    )
    assert status == 200
    assert preview["summary"] == "analysis.ipynb · 4th cell · selection · 2 variables · last error"
    assert preview["chars"] == len(preview["text"]) > 0
    assert "Active cell, the 4th cell (code):\ndf.groupby('city').sum()" in preview["text"]
    assert "NameError: name 'plot' is not defined" in preview["text"]
    assert "\x1b" not in preview["text"]
    assert secrets[0] not in json.dumps(preview)

    fake.script(Reply(content="ok"))
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "why?", "context": snap})
    assert reader.names[-1] == "done", reader.events
    sent = "\n".join(str(m["content"]) for m in fake.requests[-1].messages)
    assert preview["text"] in sent
    assert secrets[0] not in json.dumps(fake.requests[-1].body)


@pytest.mark.chapyter_config({"Chapyter": {"context_budget": 700}})
async def test_one_budget_for_config_variables_and_text(get_json, fake):
    status, config = await get_json("chapyter-ext", "config")
    assert config["context_budget"] == 700
    many = [{"name": f"v{i}", "type": "int", "summary": str(i) * 20} for i in range(300)]
    snap = snapshot(active={"index": 3, "type": "code", "source": "x = 1\n" * 3000})
    snap["variables"] = many
    status, preview = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": snap}
    )
    assert status == 200
    assert 400 < preview["chars"] <= 700
    assert "more variables" in preview["text"]


@pytest.mark.chapyter_config({"Chapyter": {"send_context": False}})
async def test_no_text_when_the_server_sends_no_context(get_json, fake):
    status, preview = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": snapshot()}
    )
    assert status == 200
    assert (preview["text"], preview["chars"]) == ("", 0)
    assert preview["summary"].startswith("analysis.ipynb")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"snapshot": "text"},
        {"snapshot": {"cell_count": 1}},
        {"snapshot": snapshot(active={"index": -1, "type": "code", "source": ""})},
        {"snapshot": snapshot(variables=[{"type": "int"}])},
        {"snapshot": snapshot(last_error={"cell_index": 0, "ename": "E", "traceback": "x"})},
    ],
)
async def test_bad_snapshots_are_400(get_json, fake, body):
    status, data = await get_json("chapyter-ext", "context", method="POST", body=body)
    assert (status, data["error"]["kind"]) == (400, "bad_request")
    assert "\n" not in data["error"]["message"]
    assert data["error"]["message"].startswith("'snapshot': ")


@pytest.mark.chapyter_config({"Chapyter": {"context_budget": 900}})
async def test_the_message_picks_what_is_sent(get_json, post_chat, fake):
    # The kernel's facts (as describe_variables sends them): the table the message is about
    # is the oldest of many, with its labels.
    table = {
        "name": "parcels",
        "type": "DataFrame",
        "summary": "400 rows × 1 columns",
        "head": "400 rows × 1 columns",
        "facts": [["'state'", "object", "object", "", [["Shipped", 0.5], ["shipped", 0.5]]]],
        "noun": "columns",
        "total": 1,
    }
    many = [{"name": f"v{i}", "type": "int", "summary": str(i) * 20} for i in range(200)]
    snap = snapshot(variables=[*many, table])
    message = "how many parcels were shipped?"
    status, preview = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": snap, "message": message}
    )
    assert status == 200
    assert "Variables (most relevant first):\n- parcels (DataFrame)" in preview["text"]
    assert "'Shipped' 50%, 'shipped' 50%" in preview["text"]
    status, plain = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": snap}
    )
    assert "parcels (DataFrame)" not in plain["text"]

    fake.script(Reply(content="ok"))
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": message, "context": snap})
    assert reader.names[-1] == "done", reader.events
    sent = "\n".join(str(m["content"]) for m in fake.requests[-1].messages)
    assert preview["text"] in sent
