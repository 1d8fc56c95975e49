"""The guard rails through the real server and the loopback model: what Fix offers, what the
chat keeps and tells the browser about each code block, what completion lets through."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.contract import code_block_key
from chapyter_ext.help_pointers import ENDPOINTS_HINT
from chapyter_ext.testing.openai_server import Reply

FAILING = {"id": "cell-9f3a-c", "index": 2, "source": "prnt(total)"}
ERROR = {
    "ename": "NameError",
    "evalue": "name 'prnt' is not defined",
    "traceback": [
        "Cell In[4], line 1\n----> 1 prnt(total)",
        "NameError: name 'prnt' is not defined",
    ],
}
SNAPSHOT = {
    "path": "work/a.ipynb",
    "cell_count": 3,
    "variables": [
        {"name": "total", "type": "int", "summary": "6"},
        {"name": "nums", "type": "list", "summary": "3 items: [1, 2, 3]"},
    ],
}
SMALL = pytest.mark.chapyter_config({"Chapyter": {"prompt_style": "small"}})


async def post_fix(get_json, **extra):
    body = {"notebook": "work/a.ipynb", "mode": "fix", "cell": FAILING, "error": ERROR}
    body.update(extra)
    status, answer = await get_json("chapyter-ext", "fix", method="POST", body=body)
    assert status == 200, answer
    return answer


# -- Fix ----------------------------------------------------------------------------------------


async def test_a_proposal_that_does_not_parse_is_not_offered(get_json, fake):
    fake.script("Cell: cell-9f3a-c\n```python\nprint(total\n```\nFixed the name.")
    answer = await post_fix(get_json, context=SNAPSHOT)
    assert answer["runnable"] is False and answer["code"] == ""
    assert answer["explanation"] == (
        "The model's proposal is not offered: it does not parse "
        "(line 1: '(' was never closed). Try again."
    )


async def test_a_proposal_that_changes_nothing_is_not_offered(get_json, fake):
    fake.script("Cell: cell-9f3a-c\n```python\nprnt(total)\n```")
    answer = await post_fix(get_json, context=SNAPSHOT)
    assert answer["runnable"] is False and "it changes nothing" in answer["explanation"]


@SMALL
async def test_small_profile_repairs_without_asking_the_model(get_json, fake):
    answer = await post_fix(get_json, context=SNAPSHOT)
    assert fake.requests == []
    assert answer["runnable"] is True and answer["code"] == "print(total)"
    assert answer["model"] == "chapyter-ext repair"
    assert answer["explanation"] == "`prnt` is not defined: `print` is the closest name."
    assert answer["hold"] is None  # not the bundled model: no review first


@SMALL
async def test_small_profile_prompt_carries_no_ids_and_each_answer_is_checked(get_json, fake):
    cell = {"id": "cell-9f3a-c", "index": 2, "source": "x = int('abc')"}
    error = {"ename": "ValueError", "evalue": "invalid literal for int() with base 10: 'abc'"}
    fake.script(
        "```python\nx = int('abc')\nprint(x)\n```",  # keeps what raised
        "```python\nx = int(abx)\n```",  # reads a name the kernel lacks
        "```python\nx = int('0')\n```",  # passes
    )
    answer = await post_fix(get_json, cell=cell, error=error, context=SNAPSHOT)
    assert len(fake.requests) == 3
    assert answer["runnable"] is True and answer["code"] == "x = int('0')"
    assert answer["model"] == "fake-model" and "small local model" in answer["explanation"]
    for sent in fake.requests:
        text = json.dumps(sent.body["messages"])
        # No id, hash or cell metadata a small model could copy into its code.
        assert "cell-9f3a-c" not in text and "Cell:" not in text and "Cell id" not in text
        assert "<kernel-state>" not in text
        assert sent.body["max_tokens"] <= 512
    assert [r.body["temperature"] for r in fake.requests] == [0.0, 0.6, 0.9]


@SMALL
async def test_small_profile_says_in_one_line_when_it_cannot(get_json, fake):
    cell = {"id": "c", "index": 0, "source": "share = total / 0"}
    error = {"ename": "ZeroDivisionError", "evalue": "division by zero"}
    fake.script("no code at all", "```python\nshare = total / 0\n```", "```python\nshare = zz\n```")
    answer = await post_fix(get_json, cell=cell, error=error, context=SNAPSHOT)
    assert answer == {
        "cell_id": "c",
        "code": "",
        "explanation": "the small local model could not write a fix for this (last try: it "
        "reads undefined name(s) zz); configure an endpoint for harder requests "
        f"({ENDPOINTS_HINT})",
        "model": "fake-model",
        "kind": "fix",
        "request_sha256": answer["request_sha256"],
        "runnable": False,
        "hold": None,
    }


@pytest.mark.chapyter_config({"Chapyter": {"run_policy": "risky"}})
async def test_a_held_proposal_names_the_setting_that_holds_it(get_json, fake):
    fake.script("Cell: cell-9f3a-c\n```python\nprint(total)\nopen('t.txt', 'w')\n```")
    answer = await post_fix(get_json, context=SNAPSHOT)
    assert answer["runnable"] is True
    assert answer["hold"] == "writes files: open('t.txt', 'w') (setting: Run policy)"


# -- chat ---------------------------------------------------------------------------------------

ECHO = (
    "The current state of the notebook's kernel:\n<kernel-state>\n"
    "Notebook: a.ipynb (3 cells)\n- total (int): 6\n```"
)


async def test_an_echo_of_the_context_is_replaced_by_one_line_and_kept_so(
    post_chat, get_json, fake
):
    fake.script(ECHO)
    body = {"notebook": "work/a.ipynb", "message": "What is total?", "context": SNAPSHOT}
    _, reader = await post_chat(body)
    done = reader.first("done")
    assert done["text"] == (
        "The model only repeated its instructions instead of answering; ask again or rephrase."
    )
    assert "checks" not in done
    _, history = await get_json("chapyter-ext", "history", params={"notebook": "work/a.ipynb"})
    assert history["messages"][-1]["content"] == done["text"]


async def test_code_blocks_carry_the_servers_verdict_in_the_stream_and_the_history(
    post_chat, get_json, fake
):
    fake.script(
        "Two ways:\n```python\nprint(total)\n```\nor\n```python\nprint(total\n```\n"
        "and an open one:\n```python\nx = 1"
    )
    body = {"notebook": "work/a.ipynb", "message": "Show total", "context": SNAPSHOT}
    _, reader = await post_chat(body)
    done = reader.first("done")
    assert done["text"].endswith("```python\nx = 1\n```")  # the open fence is closed
    assert done["checks"] == [
        {"block_id": code_block_key("print(total)"), "runnable": True, "problem": ""},
        {
            "block_id": code_block_key("print(total"),
            "runnable": False,
            "problem": "it does not parse (line 1: '(' was never closed)",
        },
        {"block_id": code_block_key("x = 1"), "runnable": True, "problem": ""},
    ]
    _, history = await get_json("chapyter-ext", "history", params={"notebook": "work/a.ipynb"})
    assert history["messages"][-1]["checks"] == done["checks"]


@SMALL
async def test_the_small_profile_checks_names_and_frames_its_context_without_a_preamble(
    post_chat, fake
):
    fake.script("Like this:\n```python\nprint(totl)\n```")
    body = {"notebook": "work/a.ipynb", "message": "Show total", "context": SNAPSHOT}
    _, reader = await post_chat(body)
    [check] = reader.first("done")["checks"]
    assert check["runnable"] is False and check["problem"] == "it reads undefined name(s) totl"
    user = fake.requests[-1].body["messages"][-1]["content"]
    assert user.startswith("<kernel-state>\n") and user.endswith("\n\nQuestion: Show total")
    assert "The current state" not in user


# -- completion ---------------------------------------------------------------------------------


async def complete(post_complete, prefix: str, suffix: str = "") -> tuple[str, list[str]]:
    body = {"prefix": prefix, "suffix": suffix, "editor": "e", "variables": []}
    response, reader = await post_complete(body)
    assert response.code == 200
    return reader.first("done")["text"], reader.tokens()


async def test_prose_is_never_suggested(post_complete, fake):
    fake.script(Reply(content="The code is complete and correct.", chunk_size=3))
    assert await complete(post_complete, "def add(a, b):\n    ") == ("", [])
    fake.script(Reply(content="```python\nYou can use the sum function\n```", chunk_size=3))
    assert await complete(post_complete, "total = sum(", ")") == ("", [])
    fake.script(Reply(content="nums)\nThis sums the list.", chunk_size=2))
    text, tokens = await complete(post_complete, "total = sum(", ")")
    assert text == "nums" and "".join(tokens) == "nums"
