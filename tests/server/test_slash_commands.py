"""Server slash commands: the ``chapyter_ext.slash_commands`` entry point, ``GET commands``,
and a chat request's ``command`` applied to the turn (the stored message stays as typed)."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from chapyter_ext.chat import ChatError, ChatRequest, installed_commands
from chapyter_ext.chat.commands import DESCRIBE, SlashCommand, apply_command, malformed

NOTEBOOK = "work/sales.ipynb"

PLUGIN = """
from chapyter_ext.chat import SlashCommand

def commands():
    return [
        SlashCommand(
            name="tldr",
            description="Answer in three bullets",
            template="{input}",
            instruction="Answer in exactly three bullets.",
        ),
        SlashCommand(name="describe", description="a second /describe", template="{input}"),
        SlashCommand(name="Bad Name", description="left out"),
    ]
"""


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A real installed distribution (a dist-info on sys.path) registering commands."""
    site = tmp_path / "site"
    (site / "chapyter_test_commands-0.1.dist-info").mkdir(parents=True)
    dist = site / "chapyter_test_commands-0.1.dist-info"
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: chapyter-test-commands\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("""\
            [chapyter_ext.slash_commands]
            test_commands = chapyter_test_commands:commands
            broken = chapyter_test_commands_missing:NOTHING
            """)
    )
    (site / "chapyter_test_commands.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    installed_commands.cache_clear()
    yield
    installed_commands.cache_clear()


@pytest.fixture(autouse=True)
def fresh_cache():
    installed_commands.cache_clear()
    yield
    installed_commands.cache_clear()


def test_the_builtin_describe_is_registered_by_pyprojects_entry_point():
    assert [c.name for c in installed_commands()] == ["describe"]
    assert installed_commands()[0] is DESCRIBE


def test_a_command_of_another_package_is_read_and_bad_ones_left_out(plugin_dist, caplog):
    with caplog.at_level(logging.WARNING):
        names = [c.name for c in installed_commands()]
    assert names == ["describe", "tldr"]
    assert installed_commands()[0] is DESCRIBE  # the built-in keeps its name
    logged = caplog.text
    assert "'broken' left out" in logged
    assert "already registered" in logged
    assert "'Bad Name' must be" in logged


def test_records_are_checked():
    assert malformed(DESCRIBE) == ""
    assert "is not" in malformed({"name": "x"})
    assert "{input}" in malformed(SlashCommand(name="x", description="d", template="no input"))
    assert "description" in malformed(SlashCommand(name="x", description=""))


def test_the_template_gets_what_followed_the_name():
    asked, instruction = apply_command("describe", "/describe sales")
    assert asked.startswith("Describe sales:")
    assert instruction == DESCRIBE.instruction
    assert apply_command("describe", "/describe")[0].startswith(
        "Describe the DataFrame this notebook works on:"
    )
    assert apply_command(None, "/describe sales") == ("/describe sales", "")


@pytest.mark.parametrize(
    "value, error",
    [
        ("nope", "'command': unknown slash command /nope (known: /describe)."),
        (3, "'command' must be the name of a server slash command."),
    ],
)
def test_an_unknown_command_is_a_one_line_bad_request(value, error):
    with pytest.raises(ChatError) as caught:
        ChatRequest.parse({"notebook": NOTEBOOK, "message": "/x", "command": value})
    assert caught.value.kind == "bad_request"
    assert str(caught.value) == error
    assert ChatRequest.parse({"notebook": NOTEBOOK, "message": "hi"}).command is None


async def test_get_commands_lists_the_servers_commands(get_json, plugin_dist):
    status, body = await get_json("chapyter-ext", "commands")
    assert status == 200
    assert body == {
        "commands": [
            {"name": "describe", "description": DESCRIBE.description, "args": "NAME"},
            {"name": "tldr", "description": "Answer in three bullets", "args": ""},
        ]
    }


async def test_get_commands_needs_auth(jp_fetch):
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("chapyter-ext", "commands", headers={"Authorization": ""})
    assert caught.value.code in (401, 403)


async def test_a_command_shapes_the_turn_and_the_history_keeps_what_was_typed(
    post_chat, fake, get_json
):
    fake.script("sales: 3 columns")
    body = {"notebook": NOTEBOOK, "message": "/describe sales", "command": "describe"}
    response, reader = await post_chat(body)
    assert response.code == 200 and reader.names[-1] == "done"
    sent = fake.requests[-1].messages
    assert sent[0]["role"] == "system" and sent[0]["content"].endswith(DESCRIBE.instruction)
    assert sent[-1]["content"].count("Describe sales:") == 1
    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert [m["content"] for m in history["messages"]] == ["/describe sales", "sales: 3 columns"]


async def test_an_unknown_command_sends_nothing(get_json, fake):
    body = {"notebook": NOTEBOOK, "message": "/foo", "command": "foo"}
    status, answer = await get_json("chapyter-ext", "chat", method="POST", body=body)
    assert status == 400
    error = answer["error"]
    assert error["kind"] == "bad_request" and "\n" not in error["message"]
    assert fake.requests == []
