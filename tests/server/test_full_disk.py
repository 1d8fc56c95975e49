"""A full disk is said, not swallowed: on a really full history folder (a 256 KiB
tmpfs, filled), every message is answered, each exchange that cannot be saved is one line in
the chat, the log holds one line per kind of failure and no traceback, what was saved before
stays intact, and once there is room again everything kept in memory is written. Export chat
on that disk: the same, one line in the chat and one in the log."""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
from pathlib import Path

import pytest

from chapyter_ext.testing.openai_server import DEFAULT_CONTENT

NOTEBOOK = "full/disk.ipynb"
SIZE = "256k"


def unsaved(reason: str, folder: Path) -> str:
    """The line the chat shows (chapyter_ext/history/unsaved.py), spelled out."""
    return (
        f"Chat history not saved: {reason} ({folder}). What you see is kept in memory and "
        "written at the next change or when the server stops, if there is room then; what "
        "was saved before is intact."
    )


def run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, text=True)


@pytest.fixture
def disk(tmp_path: Path):
    """A 256 KiB tmpfs of the test's own, unmounted after the server stopped."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN); this test fills a real disk")
    try:
        run("mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", str(mount))
    except (OSError, subprocess.CalledProcessError) as err:
        detail = getattr(err, "stderr", "") or err
        pytest.skip(
            f"cannot mount a {SIZE} tmpfs here (a container without CAP_SYS_ADMIN?): {detail}"
        )
    yield mount
    try:
        run("umount", str(mount))
    except subprocess.CalledProcessError:
        run("umount", "-l", str(mount))  # something still holds it: detach now, free later


@pytest.fixture
def history_dir(disk: Path) -> Path:
    """The server's history folder, on that disk."""
    return disk / "chats"


@pytest.fixture
def jp_root_dir(disk: Path) -> Path:
    """The folder the server serves, on that disk too (Export chat writes there)."""
    root = disk / "root"
    (root / "full").mkdir(parents=True)
    return root


def fill(disk: Path) -> Path:
    """Write a file until the disk refuses another byte; the file."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        for chunk in (4096, 1):
            try:
                while True:
                    f.write(b"\0" * chunk)
            except OSError as err:
                assert err.errno == errno.ENOSPC, err
    return filler


def user_texts(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


async def ask(post_chat, text: str, notebook: str = NOTEBOOK):
    _, reader = await post_chat({"notebook": notebook, "message": text})
    assert reader.first("done")["text"] == DEFAULT_CONTENT, reader.events  # answered
    return reader


async def export(get_json, **extra):
    """Export chat, written next to the notebook by the server (``POST history/export``)."""
    body = {"notebook": NOTEBOOK, **extra}
    return await get_json("chapyter-ext", "history", "export", method="POST", body=body)


async def test_a_chat_on_a_full_data_folder_is_answered_said_and_loses_nothing_saved(
    post_chat, get_json, fake, ext_app, disk, history_dir, jp_root_dir, caplog
):
    caplog.set_level(logging.DEBUG)
    for n in range(2):
        reader = await ask(post_chat, f"saved {n}")
        assert "notice" not in reader.names
    (saved,) = history_dir.glob("*.json")
    before = saved.read_bytes()
    status, exported = await export(get_json)
    assert (status, exported["written"]) == (200, True), exported
    export_file = jp_root_dir / exported["path"]
    export_before = export_file.read_bytes()

    filler = fill(disk)
    full = unsaved("the disk is full", history_dir)
    for n in range(20):
        reader = await ask(post_chat, f"on a full disk {n}")
        # One line, after the answer and before its end: the answer still shows.
        assert reader.names.count("notice") == 1 and reader.names[-2:] == ["notice", "done"]
        assert reader.first("notice")["message"] == full
    # Meanwhile the chat goes on from memory: all of it is there, in order.
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert user_texts(view["messages"]) == [
        "saved 0",
        "saved 1",
        *(f"on a full disk {n}" for n in range(20)),
    ]
    assert len(fake.requests[-1].body["messages"]) > 20  # and the model hears it
    # A notebook's first message, the history's other routes: the same line.
    reader = await ask(post_chat, "first words", notebook="full/new.ipynb")
    assert reader.first("notice")["message"] == full
    status, view = await get_json(
        "chapyter-ext", "history", "new", method="POST", body={"notebook": "full/new.ipynb"}
    )
    assert status == 200 and view["notice"] == full
    carried = {"id": "m", "role": "user", "content": "carried"}
    stored = {"schema": 1, "chats": [{"id": "c", "messages": [carried]}]}
    status, view = await get_json(
        "chapyter-ext",
        "history",
        "import",
        method="POST",
        body={"notebook": "full/carried.ipynb", "chat": stored},
    )
    assert status == 200 and view["notice"].endswith(full)
    assert user_texts(view["messages"]) == ["carried"]

    # Export chat reads what is kept in memory; writing it is refused in one line.
    status, download = await get_json(
        "chapyter-ext", "history", "export", params={"notebook": NOTEBOOK}
    )
    assert status == 200 and "on a full disk 19" in download["markdown"]
    for _ in range(2):
        status, refused = await export(get_json, replace=exported["path"])
        assert (status, refused["error"]["message"]) == (
            400,
            f"Could not write {exported['path']}: the disk is full (No space left on device); "
            "nothing was written.",
        )

    # What was saved before is as it was; no half-written file is left.
    assert saved.read_bytes() == before
    assert sorted(p.name for p in history_dir.iterdir()) == [saved.name]
    assert export_file.read_bytes() == export_before
    assert sorted(p.name for p in export_file.parent.iterdir()) == [export_file.name]

    # Another kind of failure: the disk turns read-only.
    run("mount", "-o", "remount,ro", str(disk))
    try:
        reader = await ask(post_chat, "on a read-only disk")
        assert reader.first("notice")["message"] == unsaved(
            "the folder is on a read-only disk", history_dir
        )
    finally:
        run("mount", "-o", "remount,rw", str(disk))

    lines = [r.getMessage() for r in caplog.records]
    failures = [line for line in lines if "chat history not saved in" in line]
    assert len(failures) == 2, failures  # one line per kind, not one per failure
    assert "[ENOSPC]" in failures[0] and "[EROFS]" in failures[1]
    # (Jupyter's access log has its own line for each request, "400 POST ...".)
    exports = [line for line in lines if "export" in line and not line[:3].isdigit()]
    assert len(exports) == 1 and "chat export not written in" in exports[0], exports
    assert "[ENOSPC]" in exports[0]
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]

    # Room again: the next change writes everything kept in memory, and the log says so once.
    filler.unlink()
    reader = await ask(post_chat, "room again")
    assert "notice" not in reader.names
    (chat,) = json.loads(saved.read_text())["chats"].values()
    assert user_texts(chat["messages"]) == [
        "saved 0",
        "saved 1",
        *(f"on a full disk {n}" for n in range(20)),
        "on a read-only disk",
        "room again",
    ]
    assert [r.getMessage() for r in caplog.records].count(
        f"chapyter-ext: chat history saved again in {history_dir}"
    ) == 1
    status, exported = await export(get_json, replace=exported["path"])
    assert (status, exported["written"]) == (200, True), exported
    assert "on a full disk 19" in export_file.read_text()
    assert [r.getMessage() for r in caplog.records].count(
        f"chapyter-ext: chat exports written again in {os.path.realpath(jp_root_dir)}"
    ) == 1
    # The other notebooks' histories are written at their next change, or when the server
    # stops (what it runs then).
    assert await ext_app.history.run(ext_app.history.store.flush) == 0
    assert len(list(history_dir.glob("*.json"))) == 3
