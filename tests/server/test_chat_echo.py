"""Echoes through the real server and the loopback model: a partial echo of
the context is one honest line, streamed or not, and so kept; the same answer given twice in a
chat is an answer both times."""

from __future__ import annotations

import pytest

from chapyter_ext.guards.answers import PARTIAL_ECHO_LINE, SMALL_PARTIAL_ECHO_LINE
from chapyter_ext.testing.openai_server import Reply

SNAPSHOT = {
    "path": "work/a.ipynb",
    "cell_count": 20,
    "active": {"index": 2, "type": "code", "source": "total = sum(nums) / count"},
    "last_error": {
        "cell_index": 2,
        "ename": "NameError",
        "evalue": "name 'count' is not defined",
        "traceback": ["NameError: name 'count' is not defined"],
    },
    "variables": [{"name": "nums", "type": "list", "summary": "3 items: [1, 2, 3]"}],
}
EXPLAIN = "Explain why the 3rd cell failed and how to fix it."
PARTIAL = (
    "```\n<kernel-state>\nNotebook: a.ipynb (20 cells; active cell is 3)\n```\n"
    "The name `count` is never defined; use `len(nums)` instead and run the cell again."
)
ANSWER = "Use the length of the list:\n```python\ntotal = sum(nums) / len(nums)\ntotal\n```"


async def ask(post_chat, message, chat_id=None):
    body = {"notebook": "work/a.ipynb", "message": message, "context": SNAPSHOT}
    if chat_id:
        body["chat_id"] = chat_id
    _, reader = await post_chat(body)
    return reader.first("start")["chat_id"], reader.first("done")["text"]


async def test_a_partial_echo_streamed_in_small_pieces_is_one_line_and_kept_so(
    post_chat, get_json, fake
):
    fake.script(Reply(PARTIAL, chunk_size=3))
    _, text = await ask(post_chat, EXPLAIN)
    assert text == PARTIAL_ECHO_LINE
    _, history = await get_json("chapyter-ext", "history", params={"notebook": "work/a.ipynb"})
    assert history["messages"][-1]["content"] == PARTIAL_ECHO_LINE


@pytest.mark.chapyter_config({"Chapyter": {"prompt_style": "small"}})
async def test_the_small_profile_says_so(post_chat, fake):
    fake.script(
        "Last error:\nThe name `count` is never defined in the notebook; use `len(nums)` for "
        "the number of items, then run the cell again."
    )
    _, text = await ask(post_chat, EXPLAIN)
    assert text == SMALL_PARTIAL_ECHO_LINE


async def test_the_same_answer_to_the_same_question_is_kept_each_time(post_chat, fake):
    fake.script(ANSWER, ANSWER, ANSWER)
    chat_id, first = await ask(post_chat, "How do I fix total?")
    for _ in range(2):
        _, again = await ask(post_chat, "How do I fix total?", chat_id)
        assert again == first == ANSWER
    # The model did see the earlier answers: they were in the conversation, not instructions.
    assert ANSWER in [m["content"] for m in fake.requests[-1].body["messages"]]
