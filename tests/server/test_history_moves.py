"""The history store follows its notebooks: rename, folders, copy, delete and prune, a notebook
found by the id in its metadata after a move the server did not see, and replies saved in the
chat they belong to."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest

from chapyter_ext.history.store import ChatHistoryStore, ChatMessage, new_id

A, B = "work/a.ipynb", "work/b.ipynb"
ID_A = "a" * 32


def msg(role: str, content: str, **fields) -> ChatMessage:
    return ChatMessage(id=fields.pop("id", new_id()), role=role, content=content, **fields)


@pytest.fixture
def store(tmp_path):
    return ChatHistoryStore(tmp_path / "chats")


def chat_with(store, notebook, *texts, notebook_id=None):
    chat_id = store.resolve_chat(notebook, notebook_id=notebook_id)
    for n, text in enumerate(texts):
        store.append(notebook, chat_id, msg("user" if n % 2 == 0 else "assistant", text))
    return chat_id


def contents(view):
    return [m.content for m in view.messages]


def files(store):
    return sorted(p.name for p in store.root.iterdir())


def test_first_chat_takes_the_id_the_notebook_proposes(store):
    chat_with(store, A, "q", notebook_id=ID_A)
    assert files(store) == [f"{ID_A}.json"]
    view = store.get(A)
    assert view.notebook_id == ID_A and contents(view) == ["q"]
    # Another tab proposing another id for the same notebook joins the same history.
    assert store.resolve_chat(A, notebook_id="b" * 32) == view.chat_id
    assert store.get(A, "b" * 32).notebook_id == ID_A
    # A malformed id is no id: the file gets a name of its own, from the notebook's place.
    chat_with(store, B, "q", notebook_id="../../etc/passwd")
    assert store.get(B).notebook_id == hashlib.sha256(store.place(B).encode()).hexdigest()[:40]


def test_rename_moves_the_chats_and_keeps_the_file(store):
    chat_id = chat_with(store, A, "q", "a", notebook_id=ID_A)
    assert store.rename(A, B) == 1
    assert contents(store.get(B)) == ["q", "a"] and store.get(B).chat_id == chat_id
    assert store.get(A).messages == () and store.get(A).notebook_id == ""
    assert files(store) == [f"{ID_A}.json"]  # one field rewritten, no file renamed
    # A new notebook created at the old path starts empty, with its own history.
    fresh = store.resolve_chat(A)
    assert fresh != chat_id and store.get(A).notebook_id != ID_A
    # The bindings are on disk: a new store (a server restart) reads them back.
    again = ChatHistoryStore(store.root)
    assert contents(again.get(B)) == ["q", "a"] and again.get(A).chat_id == fresh


def test_renaming_a_folder_moves_every_notebook_in_it(store):
    chat_with(store, "work/a.ipynb", "in a")
    chat_with(store, "work/sub/c.ipynb", "in c")
    chat_with(store, "workshop.ipynb", "not inside")
    assert store.rename("work", "archive/2025") == 2
    assert contents(store.get("archive/2025/a.ipynb")) == ["in a"]
    assert contents(store.get("archive/2025/sub/c.ipynb")) == ["in c"]
    assert contents(store.get("workshop.ipynb")) == ["not inside"]
    assert store.get("work/a.ipynb").messages == ()


def test_a_reply_streaming_through_a_rename_lands_in_its_chat(store):
    chat_id = chat_with(store, A, "question")
    store.rename(A, B)
    # The turn still holds the old path: the chat id finds the notebook where it is now.
    store.append(A, chat_id, msg("assistant", "answer"))
    assert contents(store.get(B)) == ["question", "answer"]
    assert store.get(A).messages == ()


def test_each_reply_follows_its_own_question(store):
    # Two tabs ask in the same chat; the second reply finishes first.
    chat_id = store.resolve_chat(A)
    store.append(A, chat_id, msg("user", "Q1"), reply_id="r1")
    store.append(A, chat_id, msg("user", "Q2"), reply_id="r2")
    store.append(A, chat_id, msg("assistant", "A2", id="r2"))
    store.append(A, chat_id, msg("assistant", "A1", id="r1"))
    assert contents(store.get(A)) == ["Q1", "A1", "Q2", "A2"]


def test_copy_gets_a_copy_under_new_ids(store):
    chat_id = chat_with(store, A, "q", "a", notebook_id=ID_A)
    copy_id = store.copy(A, B)
    copy = store.get(B)
    assert copy.notebook_id == copy_id != ID_A
    assert contents(copy) == ["q", "a"] and copy.chat_id != chat_id
    # The two go on separately.
    store.append(B, copy.chat_id, msg("user", "only in the copy"))
    assert contents(store.get(A)) == ["q", "a"]
    # The copy's file still says ID_A (it is a byte copy): that is the copy, not a move.
    assert store.get(B, ID_A).notebook_id == copy_id
    assert store.copy("none.ipynb", "other.ipynb") == ""


def test_moved_outside_the_server_the_id_finds_the_chats(store):
    chat_with(store, A, "q", notebook_id=ID_A)
    asked = []

    def exists(path):
        asked.append(path)
        return False  # `mv a.ipynb elsewhere/` in a terminal

    view = store.get("elsewhere/a.ipynb", ID_A, exists)
    assert asked == [A]
    assert (view.notebook_id, contents(view)) == (ID_A, ["q"])
    assert store.get(A).messages == ()


def test_copied_outside_the_server_the_copy_gets_a_copy(store):
    chat_with(store, A, "q", notebook_id=ID_A)
    view = store.get(B, ID_A, lambda path: True)  # `cp a.ipynb b.ipynb`
    assert view.notebook_id not in ("", ID_A) and contents(view) == ["q"]
    # Asking again does not copy again: the copy is bound to b.ipynb.
    assert store.get(B, ID_A, lambda path: True).notebook_id == view.notebook_id
    assert store.get(A, ID_A).notebook_id == ID_A
    assert len(files(store)) == 2


def test_a_tab_that_missed_a_rename_keeps_writing_to_the_renamed_notebook(store):
    chat_id = chat_with(store, A, "q", notebook_id=ID_A)
    store.rename(A, B)  # made in another tab: this one still says A
    view = store.get(A, ID_A, lambda path: path == B)
    assert (view.notebook_id, view.chat_id, contents(view)) == (ID_A, chat_id, ["q"])
    assert store.resolve_chat(A, chat_id, ID_A, lambda path: path == B) == chat_id
    assert len(files(store)) == 1  # no copy was made
    assert store.get(B).notebook_id == ID_A  # and the notebook stays where it went


def test_delete_keeps_the_chats_until_pruned_and_a_restore_finds_them(store):
    chat_with(store, A, "q", notebook_id=ID_A)
    assert store.delete(A) == 1
    assert store.get(A).messages == ()  # a new notebook at the path is not the deleted one
    data = json.loads((store.root / f"{ID_A}.json").read_text())
    assert data["deleted"].endswith("Z")
    # Restored (from git, from the trash) with its id: the chats come back.
    view = store.get(A, ID_A, lambda path: pytest.fail("no file to ask about"))
    assert contents(view) == ["q"]
    assert json.loads((store.root / f"{ID_A}.json").read_text())["deleted"] == ""


def test_prune_removes_only_what_was_deleted_long_enough_ago(store):
    chat_with(store, A, "old", notebook_id=ID_A)
    chat_with(store, B, "recent", notebook_id="b" * 32)
    chat_with(store, "kept.ipynb", "never deleted")
    store.delete(A)
    store.delete(B)
    later = datetime.now(timezone.utc) + timedelta(days=10)
    # B was deleted ten days before `later`; A's record is moved back to 31 days before it.
    path = store.root / f"{ID_A}.json"
    data = json.loads(path.read_text())
    data["deleted"] = (later - timedelta(days=31)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    path.write_text(json.dumps(data))
    store = ChatHistoryStore(store.root)  # reads the rewritten record
    assert store.prune(30 * 86400, now=later) == [ID_A]
    assert not path.exists() and (store.root / f"{'b' * 32}.json").exists()
    assert contents(store.get("kept.ipynb")) == ["never deleted"]
    assert store.prune(5 * 86400, now=later) == ["b" * 32]


def test_version_1_files_are_found_by_path_and_follow_renames(tmp_path):
    root = tmp_path / "chats"
    root.mkdir()
    legacy = hashlib.sha256(A.encode()).hexdigest()[:40]
    message = {"id": "m1", "role": "user", "content": "from before", "status": "complete"}
    (root / f"{legacy}.json").write_text(
        json.dumps(
            {
                "version": 1,
                "notebook": A,
                "current": "c1",
                "chats": {"c1": {"created": "", "messages": [message]}},
            }
        )
    )
    store = ChatHistoryStore(root)
    view = store.get(A)
    assert (view.notebook_id, contents(view)) == (legacy, ["from before"])
    store.rename(A, B)
    assert contents(store.get(B)) == ["from before"] and store.get(A).messages == ()


def test_import_gives_a_notebook_the_chats_it_carried_once(store):
    carried = [
        {"created": "2025-01-01T00:00:00.000Z", "messages": [msg("user", "old q")]},
        {
            "created": "",
            "messages": [msg("user", "key sk-LEAKED-1234567890abcdef"), msg("assistant", "a")],
        },
    ]
    store = ChatHistoryStore(store.root, secrets=["sk-LEAKED-1234567890abcdef"])
    view = store.import_chats(A, ID_A, carried, current=1, notice="came with it")
    assert view.notebook_id == ID_A and len(view.chats) == 2
    assert contents(view) == ["key <redacted>", "a"] and view.notice == "came with it"
    assert "sk-LEAKED" not in (store.root / f"{ID_A}.json").read_text()
    # This server's copy wins from now on: importing again changes nothing.
    chat_with(store, A, "new here")
    again = store.import_chats(A, ID_A, carried)
    assert again.chats == view.chats and again.notice == ""
