"""The chat follows its notebook through a real Jupyter server: renames, folder moves, copies
and deletes made through the contents API reach the history by jupyter_server's event bus;
moves made behind the server's back are found by the id in the notebook's metadata; a rename
during a streaming reply, and two tabs asking at once, lose nothing."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from chapyter_ext.history.contents_events import CONTENTS_SCHEMA
from chapyter_ext.testing.openai_server import Reply

NB_ID = "c0ffee" + "0" * 26


@pytest.fixture
def notebook(make_notebook):
    """A one-cell notebook, carrying ``notebook_id`` in its metadata when given."""

    def build(notebook_id: str | None = None) -> dict:
        return make_notebook({"chapyter": {"notebook_id": notebook_id}} if notebook_id else {})

    return build


@pytest.fixture
def history(get_json):
    """``await history(path, notebook_id=None)`` -> the history view."""

    async def view(path: str, notebook_id: str | None = None) -> dict:
        params = {"notebook": path}
        if notebook_id:
            params["notebook_id"] = notebook_id
        status, body = await get_json("chapyter-ext", "history", params=params)
        assert status == 200, body
        return body

    return view


def texts(view: dict) -> list[str]:
    return [m["content"] for m in view["messages"]]


async def chat(post_chat, path: str, message: str, **extra) -> None:
    _, reader = await post_chat({"notebook": path, "message": message, **extra})
    assert reader.names[-1] == "done", reader.events


async def test_the_listener_is_on_the_servers_event_bus(ext_app, jp_serverapp):
    bus = jp_serverapp.contents_manager.event_logger
    assert bus is jp_serverapp.event_logger
    assert ext_app.contents.on_event in bus._modified_listeners[CONTENTS_SCHEMA]


async def test_rename_and_folder_move_through_the_contents_api(
    contents, history, notebook, post_chat, fake, wait_until
):
    fake.script("first answer", "second answer")
    await contents("PUT", "a.ipynb", {"type": "notebook", "content": notebook()})
    await contents("POST", "", {"type": "directory"})  # "Untitled Folder"
    await contents("PATCH", "Untitled Folder", {"path": "work"})
    await contents("PUT", "work/b.ipynb", {"type": "notebook", "content": notebook()})
    await chat(post_chat, "a.ipynb", "about a")
    await chat(post_chat, "work/b.ipynb", "about b")

    await contents("PATCH", "a.ipynb", {"path": "renamed.ipynb"})
    await wait_until(lambda: True)  # let the event's task run
    renamed = await history("renamed.ipynb")
    assert texts(renamed) == ["about a", "first answer"]
    assert (await history("a.ipynb"))["messages"] == []

    # A folder rename is one event; every notebook inside follows.
    await contents("PATCH", "work", {"path": "archive"})
    moved = await history("archive/b.ipynb")
    assert texts(moved) == ["about b", "second answer"]
    assert (await history("work/b.ipynb"))["messages"] == []


async def test_copy_gets_its_own_copy_and_delete_keeps_until_pruned(
    contents, history, notebook, post_chat, fake, ext_app, history_dir
):
    fake.script("answer")
    await contents("PUT", "a.ipynb", {"type": "notebook", "content": notebook()})
    await chat(post_chat, "a.ipynb", "question")
    original = await history("a.ipynb")

    copied = await contents("POST", "", {"copy_from": "a.ipynb"})  # "a-Copy1.ipynb"
    copy = await history(copied["path"])
    assert texts(copy) == ["question", "answer"]
    assert copy["notebook_id"] != original["notebook_id"]
    assert copy["chat_id"] != original["chat_id"]

    await contents("DELETE", "a.ipynb")
    assert (await history("a.ipynb"))["messages"] == []
    kept = json.loads((history_dir / f"{original['notebook_id']}.json").read_text())
    assert kept["deleted"] and texts({"messages": kept["chats"][original["chat_id"]]["messages"]})
    store = ext_app.history.store
    assert await ext_app.history.run(store.prune, 3600.0) == []  # deleted just now: kept
    assert await ext_app.history.run(store.prune, 0.0) == [original["notebook_id"]]
    assert not (history_dir / f"{original['notebook_id']}.json").exists()
    assert texts(await history(copied["path"])) == ["question", "answer"]


async def test_moved_or_copied_behind_the_servers_back(
    contents, history, notebook, post_chat, fake, jp_root_dir
):
    fake.script("answer")
    await contents("PUT", "a.ipynb", {"type": "notebook", "content": notebook(NB_ID)})
    await chat(post_chat, "a.ipynb", "question", notebook_id=NB_ID)
    assert (await history("a.ipynb"))["notebook_id"] == NB_ID

    # `cp` in a terminal: the copy carries the same id, the original is still there.
    shutil.copy(jp_root_dir / "a.ipynb", jp_root_dir / "copy.ipynb")
    copy = await history("copy.ipynb", NB_ID)
    assert copy["notebook_id"] != NB_ID and texts(copy) == ["question", "answer"]

    # `mv` in a terminal: the contents manager no longer has a.ipynb; the chat follows.
    (jp_root_dir / "sub").mkdir()
    (jp_root_dir / "a.ipynb").rename(jp_root_dir / "sub" / "moved.ipynb")
    moved = await history("sub/moved.ipynb", NB_ID)
    assert moved["notebook_id"] == NB_ID and texts(moved) == ["question", "answer"]
    assert (await history("a.ipynb"))["messages"] == []
    # The copy is still the copy.
    assert (await history("copy.ipynb", NB_ID))["notebook_id"] == copy["notebook_id"]


async def test_a_rename_during_a_streaming_reply_loses_nothing(
    contents, history, notebook, post_chat, fake, wait_until
):
    answer = "".join(f"word{i} " for i in range(60))
    fake.script(Reply(content=answer, chunk_size=6, chunk_delay=0.03))
    await contents("PUT", "a.ipynb", {"type": "notebook", "content": notebook(NB_ID)})
    streaming = asyncio.ensure_future(
        post_chat({"notebook": "a.ipynb", "message": "write a lot", "notebook_id": NB_ID})
    )
    # Wait for the first tokens, through the reader the fixture passes back at the end: poll
    # the fake server instead, which has the request once the reply has started.
    await wait_until(lambda: fake.requests, what="the model was asked")
    await asyncio.sleep(0.2)
    assert not streaming.done()
    await contents("PATCH", "a.ipynb", {"path": "b.ipynb"})
    _, reader = await streaming
    assert reader.names[-1] == "done" and "".join(reader.tokens()) == answer
    view = await history("b.ipynb", NB_ID)
    assert texts(view) == ["write a lot", answer]
    assert view["messages"][1]["status"] == "complete"
    assert (await history("a.ipynb"))["messages"] == []


async def test_two_tabs_asking_at_once_keep_every_message_in_its_place(
    contents, history, notebook, post_chat, fake, wait_until
):
    fake.route("first question", Reply(content="first answer", chunk_size=2, chunk_delay=0.05))
    fake.route("second question", "second answer")
    await contents("PUT", "a.ipynb", {"type": "notebook", "content": notebook(NB_ID)})
    body = {"notebook": "a.ipynb", "notebook_id": NB_ID}
    first = asyncio.ensure_future(post_chat({**body, "message": "first question"}))
    await wait_until(lambda: fake.requests, what="the first question reached the model")
    # The second tab has no chat id yet either: it joins the same chat.
    _, second = await post_chat({**body, "message": "second question"})
    _, first_reader = await first
    assert first_reader.first("start")["chat_id"] == second.first("start")["chat_id"]
    view = await history("a.ipynb", NB_ID)
    assert texts(view) == ["first question", "first answer", "second question", "second answer"]


@pytest.mark.chapyter_config({"ChapyterExtApp": {"deleted_chat_retention_days": 0}})
async def test_the_server_prunes_deleted_notebooks_chats_on_its_own(
    contents, history, notebook, post_chat, fake, ext_app, history_dir, wait_until
):
    fake.script("answer", "still here")
    await contents("PUT", "gone.ipynb", {"type": "notebook", "content": notebook(NB_ID)})
    await chat(post_chat, "gone.ipynb", "question", notebook_id=NB_ID)
    await contents("PUT", "kept.ipynb", {"type": "notebook", "content": notebook()})
    await chat(post_chat, "kept.ipynb", "stays")
    await contents("DELETE", "gone.ipynb")
    file = history_dir / f"{NB_ID}.json"
    assert file.exists()
    # What the server starts once its loop runs (_start_jupyter_server_extension).
    await ext_app._start_jupyter_server_extension(None)
    try:
        await wait_until(lambda: not file.exists(), what="the deleted notebook's chats pruned")
    finally:
        ext_app._pruning.cancel()
    assert texts(await history("kept.ipynb")) == ["stays", "still here"]
