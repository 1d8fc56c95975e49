"""A chat belongs to one notebook of one project: servers that share one history
folder (two projects of one user, two machines with one home folder) never see each other's
chats, whatever their notebooks' relative paths; a notebook id is never written into a second
file (a copy gets its own); histories written before roots still load.

The store on its own first, then two real ``jupyter server`` processes sharing one Jupyter data
folder, each serving its own project with an ``Untitled.ipynb``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import chapyter_ext
from chapyter_ext.history.store import ChatHistoryStore, ChatMessage, new_id
from chapyter_ext.testing.jupyter_process import JupyterProcess
from chapyter_ext.testing.openai_server import DEFAULT_CONTENT
from chapyter_ext.testing.sse import SSEReader

UNTITLED = "Untitled.ipynb"
ONE, TWO = "/projects/one", "/projects/two"
REPO_ROOT = Path(os.path.abspath(chapyter_ext.__file__)).parent.parent


def msg(role: str, content: str) -> ChatMessage:
    return ChatMessage(id=new_id(), role=role, content=content)


def say(store: ChatHistoryStore, notebook: str, text: str, notebook_id: str | None = None) -> str:
    chat_id = store.resolve_chat(notebook, notebook_id=notebook_id)
    store.append(notebook, chat_id, msg("user", text))
    return chat_id


def texts(view: Any) -> list[str]:
    return [m.content for m in view.messages]


# -- the store -------------------------------------------------------------------------------


def test_two_roots_sharing_a_folder_keep_their_own_chats(tmp_path):
    one = ChatHistoryStore(tmp_path, contents_root=ONE)
    say(one, UNTITLED, "about project one")  # no id: an old page, the kernel's usage
    say(one, "Other.ipynb", "one's other", notebook_id="a" * 32)
    # Started after: its index holds one's files, bound to one's places, not its own.
    two = ChatHistoryStore(tmp_path, contents_root=TWO)
    assert two.get(UNTITLED).messages == () and two.get(UNTITLED).notebook_id == ""
    assert two.get("Other.ipynb").messages == ()
    say(two, UNTITLED, "about project two")
    assert texts(two.get(UNTITLED)) == ["about project two"]
    assert texts(one.get(UNTITLED)) == ["about project one"]
    assert one.get(UNTITLED).notebook_id != two.get(UNTITLED).notebook_id
    # A restarted server reads its own back.
    assert texts(ChatHistoryStore(tmp_path, contents_root=ONE).get(UNTITLED)) == [
        "about project one"
    ]


def test_two_servers_of_one_root_share_its_chats(tmp_path):
    first = ChatHistoryStore(tmp_path, contents_root=ONE)
    second = ChatHistoryStore(tmp_path, contents_root=ONE)
    second.warm()  # its index is built before the first writes anything
    nb_id = "f" * 32
    say(first, UNTITLED, "asked in the first", notebook_id=nb_id)
    say(first, "Notes.ipynb", "no id")
    view = second.get(UNTITLED, nb_id, lambda path: True)
    assert (view.notebook_id, texts(view)) == (nb_id, ["asked in the first"])
    assert texts(second.get("Notes.ipynb")) == ["no id"]
    assert len(list(tmp_path.glob("*.json"))) == 2  # no copy, nothing marked deleted
    assert not any(json.loads(p.read_text())["deleted"] for p in tmp_path.glob("*.json"))


def test_roots_that_overlap_share_the_notebooks_they_both_serve(tmp_path):
    home = ChatHistoryStore(tmp_path, contents_root="/home/u")
    project = ChatHistoryStore(tmp_path, contents_root="/home/u/proj/")
    say(home, "proj/a.ipynb", "asked from the home server")
    assert texts(project.get("a.ipynb")) == ["asked from the home server"]


def test_a_notebook_copied_from_another_project_gets_its_own_id(tmp_path):
    one = ChatHistoryStore(tmp_path, contents_root=ONE)
    nb_id = "b" * 32
    say(one, UNTITLED, "the original's question", notebook_id=nb_id)
    two = ChatHistoryStore(tmp_path, contents_root=TWO)
    # `cp ../one/Untitled.ipynb .`: the file carries one's id, whose notebook is still live.
    copy = two.get(UNTITLED, nb_id, lambda path: pytest.fail("not a path of this root"))
    assert copy.notebook_id not in ("", nb_id) and texts(copy) == ["the original's question"]
    assert two.get(UNTITLED, nb_id).notebook_id == copy.notebook_id  # not copied twice
    say(two, UNTITLED, "only in the copy", notebook_id=nb_id)
    assert texts(one.get(UNTITLED, nb_id)) == ["the original's question"]
    assert one.get(UNTITLED, nb_id).notebook_id == nb_id


def test_a_save_as_gets_its_id_before_it_is_written(tmp_path):
    # What the pre-save hook asks (contents_events): the file at b.ipynb is about to be written
    # with a.ipynb's id while a.ipynb is still there.
    store = ChatHistoryStore(tmp_path, contents_root=ONE)
    nb_id = "c" * 32
    say(store, "a.ipynb", "question", notebook_id=nb_id)
    store.warm()
    assert store.copy_id("a.ipynb", nb_id, lambda path: True) == ""  # its own place
    assert store.copy_id("moved.ipynb", nb_id, lambda path: False) == ""  # a.ipynb is gone
    made = store.copy_id("b.ipynb", nb_id, lambda path: True)
    assert made not in ("", nb_id)
    assert store.copy_id("b.ipynb", nb_id, lambda path: True) == made  # a second save
    store.settle("b.ipynb")
    assert store.bound_id("b.ipynb") == made
    assert texts(store.get("b.ipynb", nb_id)) == ["question"]
    assert store.get("b.ipynb", nb_id).notebook_id == made
    # The copy event that follows a Duplicate finds the copy made.
    assert store.copy("a.ipynb", "b.ipynb") == made
    assert store.get("a.ipynb", nb_id).notebook_id == nb_id


def write_legacy(folder: Path, name: str, data: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(data))


def legacy_chat(text: str) -> dict[str, Any]:
    message = {"id": new_id(), "role": "user", "content": text, "status": "complete"}
    return {"c1": {"created": "", "messages": [message]}}


def test_histories_from_before_roots_load_and_are_claimed_once(tmp_path):
    # Version 2, as the old code wrote for a notebook with no id: named after its path's hash.
    old_id = hashlib.sha256(UNTITLED.encode()).hexdigest()[:40]
    write_legacy(
        tmp_path,
        old_id,
        {
            "version": 2,
            "notebook_id": old_id,
            "notebook": UNTITLED,
            "current": "c1",
            "chats": legacy_chat("from version 2"),
            "deleted": "",
            "origin": "",
        },
    )
    # Version 1: no id at all.
    v1 = hashlib.sha256(b"old.ipynb").hexdigest()[:40]
    write_legacy(
        tmp_path,
        v1,
        {"version": 1, "notebook": "old.ipynb", "current": "c1", "chats": legacy_chat("v1")},
    )
    # Version 2 with an id its notebook carries, moved while the old server was stopped.
    moved = "d" * 32
    write_legacy(
        tmp_path,
        moved,
        {
            "version": 2,
            "notebook_id": moved,
            "notebook": "was/here.ipynb",
            "current": "c1",
            "chats": legacy_chat("moved"),
        },
    )
    # Version 2 with an id, whose notebook was copied by hand while the old server ran.
    kept = "e" * 32
    write_legacy(
        tmp_path,
        kept,
        {"version": 2, "notebook_id": kept, "notebook": "kept.ipynb", "chats": legacy_chat("k")},
    )
    one = ChatHistoryStore(tmp_path, contents_root=ONE)
    copy = one.get("copy of kept.ipynb", kept, lambda path: True)  # kept.ipynb is still there
    assert copy.notebook_id not in ("", kept) and texts(copy) == ["k"]
    assert one.get("kept.ipynb", kept).notebook_id == kept
    view = one.get(UNTITLED)
    assert (view.notebook_id, texts(view)) == (old_id, ["from version 2"])
    assert texts(one.get("old.ipynb")) == ["v1"]
    view = one.get("now/here.ipynb", moved, lambda path: path != "was/here.ipynb")
    assert (view.notebook_id, texts(view)) == (moved, ["moved"])
    on_disk = json.loads((tmp_path / f"{old_id}.json").read_text())
    assert (on_disk["version"], on_disk["root"], on_disk["notebook"]) == (3, ONE, UNTITLED)
    # Another project's server finds it claimed: not its own, even at the same path...
    two = ChatHistoryStore(tmp_path, contents_root=TWO)
    assert two.get(UNTITLED).messages == () and two.get("old.ipynb").messages == ()
    # ...and its notebook that the old version saved with that same id gets a copy.
    copy = two.get(UNTITLED, old_id)
    assert copy.notebook_id not in ("", old_id) and texts(copy) == ["from version 2"]
    assert one.get(UNTITLED, old_id).notebook_id == old_id


# -- two real servers sharing one data folder ------------------------------------------------


def project_server(tmp: Path, name: str, data: Path, base_url: str) -> JupyterProcess:
    """A ``jupyter server`` on its own project folder ``tmp/<name>``, with Jupyter's data
    folder (and so the default ``history_dir``) shared with the other."""
    home = tmp / f"home-{name}"
    home.mkdir(exist_ok=True)
    config = home / "jupyter_server_config.py"
    config.write_text(
        "c.ServerApp.jpserver_extensions = {'chapyter_ext': True}\n"
        "c.ServerApp.reraise_server_extension_failures = True\n"
        f"c.Chapyter.base_url = {base_url!r}\n"
        "c.Chapyter.api_key = 'sk-test-roots'\n"
        "c.Chapyter.model = 'fake-model'\n"
        "c.Chapyter.max_retries = 0\n"
    )
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    env = {"PYTHONPATH": path, "JUPYTER_DATA_DIR": str(data)}
    return JupyterProcess(home, f"--config={config}", env=env, root=tmp / name)


def call(server: JupyterProcess, method: str, path: str, body: Any = None) -> Any:
    status, raw = server.request(method, path, body)
    assert status < 300, (status, raw[:500], server.log()[-3000:])
    return json.loads(raw) if raw else None


def chat(server: JupyterProcess, notebook: str, text: str, notebook_id: str = "") -> SSEReader:
    body = {"notebook": notebook, "message": text}
    if notebook_id:
        body["notebook_id"] = notebook_id
    reader = SSEReader()
    reader.feed(server.request("POST", "chapyter-ext/chat", body)[1])
    assert reader.first("done")["text"] == DEFAULT_CONTENT, reader.events
    return reader


def history(server: JupyterProcess, notebook: str, notebook_id: str = "") -> dict[str, Any]:
    query = f"notebook={quote(notebook)}" + (f"&notebook_id={notebook_id}" if notebook_id else "")
    return call(server, "GET", f"chapyter-ext/history?{query}")


def said(view: dict[str, Any]) -> list[str]:
    return [m["content"] for m in view["messages"] if m["role"] == "user"]


def notebook(notebook_id: str = "") -> dict[str, Any]:
    meta = {"chapyter": {"notebook_id": notebook_id}} if notebook_id else {}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": []}


def save(server: JupyterProcess, path: str, notebook_id: str = "") -> None:
    """A browser's save: the notebook as its tab holds it (PUT through the contents API)."""
    call(
        server,
        "PUT",
        f"api/contents/{quote(path)}",
        {"type": "notebook", "content": notebook(notebook_id)},
    )


def id_on_disk(server: JupyterProcess, path: str) -> str | None:
    data = json.loads((server.root / path).read_text())
    return data["metadata"].get("chapyter", {}).get("notebook_id")


def test_two_servers_sharing_a_data_folder_keep_separate_chats(tmp_path, fake):
    data = tmp_path / "data"
    one = project_server(tmp_path, "one", data, fake.base_url)
    two = project_server(tmp_path, "two", data, fake.base_url)
    with one:
        save(one, UNTITLED)
        # The page's first message gives the notebook an id and saves it with it.
        id_one = new_id()
        chat(one, UNTITLED, "about project one", id_one)
        save(one, UNTITLED, id_one)
        # A client with no id (the kernel's usage, an older page) on another notebook.
        chat(one, "Notes.ipynb", "one's notes")
        with two:  # started after: its index holds one's files
            save(two, UNTITLED)
            # The page opens the chat of two's fresh Untitled.ipynb: it has no id yet.
            fresh = history(two, UNTITLED)
            assert (fresh["notebook_id"], fresh["messages"]) == ("", [])
            assert history(two, "Notes.ipynb")["messages"] == []
            id_two = new_id()
            chat(two, UNTITLED, "about project two", id_two)
            save(two, UNTITLED)  # a save before the page put the id in: the hook does
            assert id_on_disk(two, UNTITLED) == id_two
            chat(two, "Notes.ipynb", "two's notes")

            assert said(history(one, UNTITLED, id_one)) == ["about project one"]
            assert said(history(two, UNTITLED, id_two)) == ["about project two"]
            assert said(history(one, "Notes.ipynb")) == ["one's notes"]
            assert said(history(two, "Notes.ipynb")) == ["two's notes"]
            assert id_on_disk(one, UNTITLED) == id_one

            # Duplicate in one's file browser: the copy is written with an id of its own.
            copied = call(one, "POST", "api/contents", {"copy_from": UNTITLED})["path"]
            copy_id = id_on_disk(one, copied)
            assert copy_id not in (None, id_one)
            copy = history(one, copied, copy_id)
            assert copy["notebook_id"] == copy_id and said(copy) == ["about project one"]
            # Save As (the tab writes its notebook, id and all, to a new path): the same.
            save(one, "Saved as.ipynb", id_one)
            saved_as = id_on_disk(one, "Saved as.ipynb")
            assert saved_as not in (None, id_one, copy_id)
            assert history(one, "Saved as.ipynb", id_one)["notebook_id"] == saved_as

            # `cp` from one's folder into two's: two gives it its own id and a copy.
            shutil.copy(one.root / UNTITLED, two.root / "From one.ipynb")
            carried = history(two, "From one.ipynb", id_one)
            assert carried["notebook_id"] not in ("", id_one)
            assert said(carried) == ["about project one"]
            chat(two, "From one.ipynb", "asked in two", carried["notebook_id"])
            save(two, "From one.ipynb", id_one)  # the tab saves before it took the new id
            assert id_on_disk(two, "From one.ipynb") == carried["notebook_id"]
            assert said(history(one, UNTITLED, id_one)) == ["about project one"]

    # Both kept their chats in the one shared folder, each under its own root.
    chats = data / "chapyter-ext" / "chats"
    roots = {json.loads(f.read_text())["root"] for f in chats.glob("*.json")}
    assert roots == {os.path.realpath(one.root), os.path.realpath(two.root)}
    # Restarted, each still finds only its own.
    with project_server(tmp_path, "one", data, fake.base_url) as again:
        assert said(history(again, UNTITLED, id_one)) == ["about project one"]
        assert said(history(again, "Notes.ipynb")) == ["one's notes"]
