"""Export chat writes next to its notebook through the server (``POST history/export``): never
through a symbolic link, never outside the server's root, never over a file the request did not
name; and every kind of step is written as it ran (run_code, read_cell, evaluate, MCP calls with
their server, tool, arguments and result), redacted."""

from __future__ import annotations

import json
import os

from chapyter_ext.agent.actions import StepRecord
from chapyter_ext.history.markdown import chat_markdown
from chapyter_ext.history.store import ChatMessage


async def export(get_json, notebook: str, **extra):
    body = {"notebook": notebook, **extra}
    return await get_json("chapyter-ext", "history", "export", method="POST", body=body)


async def test_written_next_to_the_notebook_and_replaced_only_when_named(
    get_json, post_chat, fake, jp_root_dir, secrets
):
    (jp_root_dir / "work").mkdir()
    status, error = await export(get_json, "work/a.ipynb")
    assert status == 404 and error["error"]["kind"] == "not_found"
    fake.script(f"The key is {secrets[0]}.", "Second answer.")
    await post_chat({"notebook": "work/a.ipynb", "message": "what is my key?"})

    status, saved = await export(get_json, "work/a.ipynb")
    assert status == 200, saved
    assert saved["path"] == "work/a.chat.md" and saved["written"] is True
    assert saved["exists"] is False and saved["filename"] == "a.chat.md"
    target = jp_root_dir / "work" / "a.chat.md"
    first = target.read_text()
    assert "> what is my key?" in first and "The key is <redacted>." in first
    assert not any(secret in first for secret in secrets)

    # There now: not replaced, and the answer names the file for the question to ask.
    await post_chat({"notebook": "work/a.ipynb", "message": "and then?"})
    status, asked = await export(get_json, "work/a.ipynb")
    assert status == 200 and asked["written"] is False and asked["exists"] is True
    assert asked["path"] == "work/a.chat.md" and asked["size"] == len(first.encode())
    assert asked["modified"].endswith("Z")
    _, other = await export(get_json, "work/a.ipynb", replace="work/b.chat.md")
    assert other["written"] is False and target.read_text() == first
    # Named: replaced.
    _, replaced = await export(get_json, "work/a.ipynb", replace="work/a.chat.md")
    assert replaced["written"] is True and "Second answer." in target.read_text()

    status, error = await export(get_json, "work/a.ipynb", replace=["work/a.chat.md"])
    assert status == 400 and error["error"]["kind"] == "bad_request"


async def test_a_symbolic_link_is_never_written_through(
    get_json, post_chat, fake, jp_root_dir, tmp_path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep me")
    fake.script("an answer", "another")
    await post_chat({"notebook": "l.ipynb", "message": "hi"})
    link = jp_root_dir / "l.chat.md"
    link.symlink_to(victim)

    for replace in (None, "l.chat.md"):
        status, error = await export(get_json, "l.ipynb", replace=replace)
        assert status == 403, error
        assert error["error"] == {
            "kind": "forbidden",
            "message": "l.chat.md is a symbolic link; an export never writes through a link.",
        }
        assert victim.read_text() == "keep me" and link.is_symlink()

    # A link to a file inside the root is refused the same way: nothing is written through.
    inside = jp_root_dir / "notes.md"
    inside.write_text("mine")
    link.unlink()
    link.symlink_to(inside)
    status, _ = await export(get_json, "l.ipynb", replace="l.chat.md")
    assert status == 403 and inside.read_text() == "mine"


async def test_a_folder_leading_outside_the_root_is_refused(
    get_json, post_chat, fake, jp_root_dir, tmp_path
):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (jp_root_dir / "shared").symlink_to(outside, target_is_directory=True)
    fake.script("an answer")
    await post_chat({"notebook": "shared/n.ipynb", "message": "hi"})
    status, error = await export(get_json, "shared/n.ipynb")
    assert status == 403
    assert error["error"]["message"].startswith(
        "The folder shared leads outside the server's root (a symbolic link)"
    )
    assert os.listdir(outside) == []

    # A folder inside the root reached through a link stays inside: written there.
    (jp_root_dir / "real").mkdir()
    (jp_root_dir / "alias").symlink_to(jp_root_dir / "real", target_is_directory=True)
    fake.script("inside")
    await post_chat({"notebook": "alias/m.ipynb", "message": "hi"})
    status, saved = await export(get_json, "alias/m.ipynb")
    assert status == 200 and saved["written"] is True
    assert (jp_root_dir / "real" / "m.chat.md").read_text().startswith("# Chat: m.ipynb")


def test_every_step_kind_is_written_as_it_ran():
    mcp = StepRecord(
        step_id="step-3",
        kind="time__get_current_time",
        title="time · get_current_time",
        op="call",
        server="time",
        arguments={"timezone": "Asia/Tokyo", "token": "sk-SECRET-9"},
        outcome="ok",
        shown='{"timezone": "Asia/Tokyo", "datetime": "2025-06-01T19:00:00+09:00"}',
    )
    run = StepRecord(
        step_id="step-1",
        kind="run_code",
        title="ran code",
        op="run_cell",
        code="total = sum(values)",
        cell_id="cell-9",
        outcome="done",
        shown="(nothing printed)",
    )
    read = StepRecord(
        step_id="step-2",
        kind="read_cell",
        title="read cell 3",
        op="read_cell",
        arguments={"cell": "3"},
        outcome="read cell 3",
        shown="values = [3, 1, 2]",
    )
    evaluate = StepRecord(
        step_id="step-4",
        kind="list_variables",
        title="read the variables",
        op="evaluate",
        outcome="3 variables",
        shown="values: list (3 items)",
    )
    records = [r.as_dict() for r in (run, read, mcp, evaluate)]
    # run_code keeps its old shape: its code and cell say it all.
    assert set(records[0]) == {"step_id", "tool", "title", "code", "cell_id", "outcome"}
    assert records[2]["server"] == "time" and json.loads(records[2]["arguments"]) == {
        "timezone": "Asia/Tokyo",
        "token": "sk-SECRET-9",
    }
    # Through the history's reading of a stored message, as an export reads it.
    message = ChatMessage.from_json(
        {"id": "a", "role": "assistant", "content": "It is 19:00 in Tokyo.", "steps": records}
    )
    text = chat_markdown(
        "t.ipynb",
        [message],
        lambda t: t.replace("sk-SECRET-9", "<redacted>"),
        exported="2025-06-01T10:00:00.000Z",
    )
    assert "1. ran code: done (cell `cell-9`)\n\n   ```python\n   total = sum(values)\n   ```" in (
        text
    )
    assert "(nothing printed)" not in text  # a cell's output is the notebook's
    assert (
        "2. read cell 3 (`read_cell`): read cell 3\n\n   Arguments:\n\n   ```json\n"
        '   {\n     "cell": "3"\n   }\n   ```\n\n   Result:\n\n   ```text\n'
        "   values = [3, 1, 2]\n   ```"
    ) in text
    assert (
        "3. MCP server `time` · tool `get_current_time`: ok\n\n   Arguments:\n\n   ```json\n"
        '   {\n     "timezone": "Asia/Tokyo",\n     "token": "<redacted>"\n   }\n   ```\n\n'
        "   Result:\n\n   ```text\n"
        '   {"timezone": "Asia/Tokyo", "datetime": "2025-06-01T19:00:00+09:00"}\n   ```'
    ) in text
    assert "4. read the variables (`list_variables`): 3 variables" in text
    assert "values: list (3 items)" in text
    assert "sk-SECRET" not in text and "```python\n   \n" not in text
