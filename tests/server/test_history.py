"""Chat history: the store on its own (atomic, bounded, secret-free) and its HTTP endpoints."""

from __future__ import annotations

import errno
import json
import os

import pytest

from chapyter_ext.chat.setup import history_for_model
from chapyter_ext.history import files as history_files
from chapyter_ext.history.store import (
    ChatHistoryStore,
    ChatMessage,
    HistoryError,
    new_id,
    normalize_notebook_path,
)

NOTEBOOK = "nb/chat.ipynb"


def msg(role: str, content: str, status: str = "complete") -> ChatMessage:
    return ChatMessage(id=new_id(), role=role, content=content, status=status)


@pytest.fixture
def store(tmp_path):
    return ChatHistoryStore(tmp_path / "chats", max_messages=5, max_chats=3)


def test_empty_notebook_has_no_chat(store):
    view = store.get(NOTEBOOK)
    assert (view.chat_id, view.messages, view.chats) == ("", (), ())
    assert not store.root.exists()  # reading creates nothing


def test_messages_survive_a_new_store(store, tmp_path):
    chat_id = store.resolve_chat(NOTEBOOK)
    store.append(NOTEBOOK, chat_id, msg("user", "q"))
    store.append(NOTEBOOK, chat_id, msg("assistant", "a", "stopped"))
    again = ChatHistoryStore(tmp_path / "chats")
    view = again.get("/nb/./chat.ipynb")  # same notebook, spelled differently
    assert view.chat_id == chat_id
    assert [(m.role, m.content, m.status) for m in view.messages] == [
        ("user", "q", "complete"),
        ("assistant", "a", "stopped"),
    ]
    stored = json.loads(store.file_for(NOTEBOOK).read_text())
    assert stored["notebook"] == NOTEBOOK
    assert store.file_for(NOTEBOOK).name != "chat.ipynb.json"  # a hash, not the path


def test_chat_keeps_the_last_messages(store):
    chat_id = store.resolve_chat(NOTEBOOK)
    for i in range(8):
        store.append(NOTEBOOK, chat_id, msg("user", str(i)))
    assert [m.content for m in store.get(NOTEBOOK).messages] == ["3", "4", "5", "6", "7"]


def test_new_chat_keeps_old_ones_up_to_the_bound(store):
    first = store.resolve_chat(NOTEBOOK)
    store.append(NOTEBOOK, first, msg("user", "old"))
    view = store.new_chat(NOTEBOOK)
    assert view.chat_id != first and view.messages == ()
    assert view.chats == (first, view.chat_id)
    assert [m.content for m in store.messages(NOTEBOOK, first)] == ["old"]
    for _ in range(3):
        view = store.new_chat(NOTEBOOK)
    assert len(view.chats) == 3 and first not in view.chats


def test_clear_one_chat_or_all(store):
    first = store.resolve_chat(NOTEBOOK)
    second = store.new_chat(NOTEBOOK).chat_id
    view = store.clear(NOTEBOOK, second)
    assert (view.chat_id, view.chats) == (first, (first,))
    with pytest.raises(HistoryError) as err:
        store.clear(NOTEBOOK, "missing")
    assert err.value.kind == "not_found"
    assert store.clear(NOTEBOOK).chats == ()
    # Nothing of the messages is left; the (empty) history keeps the notebook's id, so a chat
    # saved in the notebook's metadata is not loaded again.
    kept = json.loads(store.file_for(NOTEBOOK).read_text())
    assert (kept["chats"], kept["current"], kept["notebook"]) == ({}, "", NOTEBOOK)


def test_secrets_are_never_stored(tmp_path):
    store = ChatHistoryStore(tmp_path, secrets=("sk-SECRET-VALUE-1",))
    chat_id = store.resolve_chat(NOTEBOOK)
    stored = store.append(NOTEBOOK, chat_id, msg("user", "my key is sk-SECRET-VALUE-1, ok?"))
    assert "sk-SECRET-VALUE-1" not in stored.content
    assert "sk-SECRET-VALUE-1" not in store.file_for(NOTEBOOK).read_text()


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_failed_write_leaves_the_old_file_intact_and_says_so(store, monkeypatch, failing):
    # (tests/server/test_full_disk.py fills a real disk; this fails each step of a write.)
    chat_id = store.resolve_chat(NOTEBOOK)
    store.append(NOTEBOOK, chat_id, msg("user", "kept"))
    path = store.file_for(NOTEBOOK)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(history_files.os, failing, crash)
    stored = store.append(NOTEBOOK, chat_id, msg("assistant", "not on disk yet"))
    monkeypatch.undo()

    assert stored.content == "not on disk yet"
    assert store.take_notice(NOTEBOOK).startswith("Chat history not saved: the disk is full (")
    assert path.read_bytes() == before
    assert sorted(p.name for p in store.root.iterdir()) == [path.name]  # no temp file left
    assert [m.content for m in ChatHistoryStore(store.root).get(NOTEBOOK).messages] == ["kept"]
    # Kept in memory meanwhile, and written with the next change once the disk takes it.
    assert [m.content for m in store.get(NOTEBOOK).messages] == ["kept", "not on disk yet"]
    store.append(NOTEBOOK, chat_id, msg("user", "next"))
    again = ChatHistoryStore(store.root).get(NOTEBOOK)
    assert [m.content for m in again.messages] == ["kept", "not on disk yet", "next"]
    assert store.take_notice(NOTEBOOK) == ""


def test_agent_steps_are_kept_redacted_and_damaged_ones_dropped(store, tmp_path):
    key = "sk-test-SECRET-MARKER-999"
    store = ChatHistoryStore(tmp_path / "steps", secrets=[key])
    chat_id = store.resolve_chat(NOTEBOOK)
    step = {"step_id": "step-1", "code": f"k = '{key}'", "cell_id": "c1", "outcome": "ok"}
    turn = ChatMessage(id=new_id(), role="assistant", content="42", steps=(step,))
    stored = store.append(NOTEBOOK, chat_id, turn)
    assert stored.steps[0]["code"] == "k = '<redacted>'"
    path = store.file_for(NOTEBOOK)
    data = json.loads(path.read_text())
    message = data["chats"][chat_id]["messages"][0]
    message["steps"] = [
        message["steps"][0],
        "not a step",
        {"step_id": "step-2", "code": 5},
        {"code": "no id"},
        {"step_id": "step-3", "extra": "dropped"},
    ]
    path.write_text(json.dumps(data))
    (read,) = store.get(NOTEBOOK).messages
    assert read.content == "42"  # the message survives its damaged steps
    assert [s["step_id"] for s in read.steps] == ["step-1", "step-3"]
    # A step from before the tool registry reads with an empty tool and title.
    assert read.steps[1] == {
        "step_id": "step-3",
        "tool": "",
        "title": "",
        "code": "",
        "cell_id": "",
        "outcome": "",
    }
    assert "steps" not in msg("user", "q").to_json()
    assert ChatMessage.from_json({**msg("user", "q").to_json(), "steps": "junk"}).steps == ()


def test_unreadable_file_is_set_aside(store):
    chat_id = store.resolve_chat(NOTEBOOK)
    store.file_for(NOTEBOOK).write_text("{ half a file")
    assert store.get(NOTEBOOK).chats == ()
    assert any(".corrupt-" in p.name for p in store.root.iterdir())
    assert store.resolve_chat(NOTEBOOK) != chat_id


@pytest.mark.parametrize("path", ["", "   ", "../x.ipynb", "a/../../x.ipynb", "a\x00b", 3, None])
def test_bad_notebook_paths(path):
    with pytest.raises(HistoryError):
        normalize_notebook_path(path)


def test_history_for_model_sends_complete_pairs():
    messages = [
        msg("user", "q1"),
        msg("assistant", "a1"),
        msg("user", "q2"),
        msg("assistant", "", "error"),
        msg("user", "q3"),
        msg("assistant", "part", "stopped"),
    ]
    assert history_for_model(messages, 10) == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q3"},
        {"role": "assistant", "content": "part"},
    ]
    assert history_for_model(messages, 3) == [
        {"role": "user", "content": "q3"},
        {"role": "assistant", "content": "part"},
    ]
    assert history_for_model(messages, 0) == []


# -- over HTTP ---------------------------------------------------------------------------


async def test_history_endpoints(get_json, post_chat, fake, history_dir, secrets):
    fake.script("first reply", "second reply")
    status, empty = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert (status, empty["chat_id"], empty["messages"], empty["chats"]) == (200, "", [], [])

    _, reader = await post_chat({"notebook": NOTEBOOK, "message": f"hi {secrets[0]}"})
    start = reader.first("start")
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert view["chat_id"] == start["chat_id"]
    assert view["chats"] == [start["chat_id"]]
    user, reply = view["messages"]
    assert set(user) == {"id", "role", "content", "model", "created", "status", "error"}
    assert (user["role"], user["model"], user["status"]) == ("user", "fake-model", "complete")
    assert (reply["id"], reply["content"]) == (start["message_id"], "first reply")
    assert user["created"].endswith("Z")
    on_disk = "".join(p.read_text() for p in history_dir.iterdir())
    assert not any(secret in on_disk for secret in secrets)
    assert not any(secret in json.dumps(view) for secret in secrets)

    status, new = await get_json(
        "chapyter-ext", "history", "new", method="POST", body={"notebook": NOTEBOOK}
    )
    assert status == 200 and new["messages"] == []
    assert new["chats"] == [start["chat_id"], new["chat_id"]]
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "in the new chat"})
    assert reader.first("start")["chat_id"] == new["chat_id"]

    status, cleared = await get_json(
        "chapyter-ext", "history", method="DELETE", params={"notebook": NOTEBOOK}
    )
    assert (status, cleared["messages"], cleared["chats"]) == (200, [], [])
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert view["chats"] == []


async def test_history_needs_a_notebook(get_json):
    status, data = await get_json("chapyter-ext", "history")
    assert (status, data["error"]["kind"]) == (400, "bad_request")
    status, data = await get_json("chapyter-ext", "history", "new", method="POST", body={})
    assert (status, data["error"]["kind"]) == (400, "bad_request")


async def test_a_failed_write_is_said_and_keeps_what_was_saved(
    get_json, post_chat, monkeypatch, fake, history_dir
):
    await post_chat({"notebook": NOTEBOOK, "message": "kept"})
    (saved,) = history_dir.glob("*.json")
    before = saved.read_bytes()

    real_replace = os.replace

    def crash(src, dst, *args, **kwargs):
        # Only our history files fail: the rest of the server keeps its disk.
        if str(dst).startswith(str(history_dir)):
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(history_files.os, "replace", crash)
    status, data = await get_json(
        "chapyter-ext", "history", "new", method="POST", body={"notebook": NOTEBOOK}
    )
    monkeypatch.undo()
    assert status == 200 and data["messages"] == []
    assert data["notice"].startswith("Chat history not saved: your disk quota is used up (")
    assert saved.read_bytes() == before
