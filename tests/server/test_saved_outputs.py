"""A notebook saved through the server holds no configured secret: saved as JupyterLab saves it
(``PUT /api/contents/<path>``), every output showing the key or a header value holds
``<redacted>`` on disk and nothing else changes; a notebook without one is written byte for
byte; the page hears of it on Jupyter's event bus (``/api/events/subscribe``), authenticated,
with the path and a count and never the value."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nbformat
import pytest
import tornado.httpclient
import tornado.websocket

from chapyter_ext.history import contents_events
from chapyter_ext.history.contents_events import REDACTED_SCHEMA_ID
from chapyter_ext.redact import REDACTED, REDACTED_MARKUP

# tests/server/conftest.py's configured key and extra header value.
API_KEY = "sk-test-SECRET-MARKER-123"
HEADER_SECRET = "hdr-SECRET-MARKER-456"
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "2mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def notebook_with(secret: str, markup: str | None = None) -> dict[str, Any]:
    """A notebook whose outputs show ``secret`` in every place an output can, as JupyterLab
    sends it (strings), plus a list of strings splitting it in two as nbformat may store it;
    and what must never change: sources, ids, counts, metadata, a clean cell, an image.
    ``markup``: what its HTML shows instead, if not the same."""
    half = len(secret) // 2
    cells = [
        {
            "id": "stream",
            "cell_type": "code",
            "source": "print(os.environ['OPENAI_API_KEY'])",
            "metadata": {"tags": ["keep"]},
            "execution_count": 1,
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": f"key: {secret}\n"},
                {
                    "output_type": "stream",
                    "name": "stderr",
                    "text": ["warning\n", f"split {secret[:half]}", f"{secret[half:]} end\n"],
                },
            ],
        },
        {
            "id": "result",
            "cell_type": "code",
            "source": "key",
            "metadata": {},
            "execution_count": 2,
            "outputs": [
                {
                    "output_type": "execute_result",
                    "execution_count": 2,
                    "metadata": {},
                    "data": {
                        "text/plain": f"'{secret}'",
                        "text/html": f"<table><td>{markup or secret}</td></table>",
                        "application/json": {"key": secret},
                    },
                }
            ],
        },
        {
            "id": "display",
            "cell_type": "code",
            "source": "display(...)",
            "metadata": {},
            "execution_count": 3,
            "outputs": [
                {
                    "output_type": "display_data",
                    "metadata": {"image/png": {"width": 1}},
                    "data": {"text/plain": f"<Key {secret}>", "image/png": PNG},
                }
            ],
        },
        {
            "id": "error",
            "cell_type": "code",
            "source": "raise ValueError(key)",
            "metadata": {},
            "execution_count": 4,
            "outputs": [
                {
                    "output_type": "error",
                    "ename": "ValueError",
                    "evalue": secret,
                    "traceback": [
                        "\x1b[0;31mValueError\x1b[0m   Traceback (most recent call last)",
                        f"\x1b[0;31mValueError\x1b[0m: {secret}",
                    ],
                }
            ],
        },
        {
            "id": "clean",
            "cell_type": "code",
            "source": "print('hello')",
            "metadata": {},
            "execution_count": 5,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "hello\n"}],
        },
        {"id": "words", "cell_type": "markdown", "source": "# Notes", "metadata": {}},
    ]
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": cells,
    }


async def put(contents, path: str, content: dict[str, Any]) -> None:
    await contents("PUT", path, {"type": "notebook", "format": "json", "content": content})


@pytest.mark.parametrize("secret", [API_KEY, HEADER_SECRET, f"hidden {API_KEY[3:]} part"])
async def test_the_file_holds_the_marker_and_nothing_else_changes(
    contents, jp_root_dir, secret, secrets
):
    """The key, the header value, and the key without its prefix (a part the redactor knows):
    saved, the file is byte for byte the notebook written with ``<redacted>`` in their place."""
    await put(contents, "keyed.ipynb", notebook_with(secret))
    # The same notebook with the marker already in place, saved the same way: the expected file.
    shown, markup = (
        (secret.replace(API_KEY[3:], REDACTED), secret.replace(API_KEY[3:], REDACTED_MARKUP))
        if "hidden" in secret
        else (REDACTED, REDACTED_MARKUP)  # in HTML the marker is escaped, to show
    )
    expected = notebook_with(shown, markup)
    split = expected["cells"][0]["outputs"][1]
    split["text"] = "".join(split["text"])  # the marker is not split: the redacted text whole
    await put(contents, "expected.ipynb", expected)

    written = (jp_root_dir / "keyed.ipynb").read_bytes()
    assert written == (jp_root_dir / "expected.ipynb").read_bytes()
    for value in secrets:
        assert value.encode() not in written
    assert written.count(REDACTED.encode()) == 7
    assert written.count(REDACTED_MARKUP.encode()) == 1
    nb = nbformat.reads(written.decode(), as_version=4)
    assert [c.id for c in nb.cells] == ["stream", "result", "display", "error", "clean", "words"]
    assert nb.cells[0].outputs[1].text == f"warning\nsplit {shown} end\n"
    assert nb.cells[0].source == "print(os.environ['OPENAI_API_KEY'])"
    nbformat.validate(nb)
    # What the server gives back is what is on disk.
    model = await contents("GET", "keyed.ipynb")
    assert model["content"]["cells"][1]["outputs"][0]["data"]["text/plain"] == f"'{shown}'"


async def test_a_notebook_without_a_secret_saves_byte_for_byte(contents, jp_root_dir):
    """Opened and saved again as JupyterLab does (GET, then PUT of what came back): no diff."""
    nb = nbformat.from_dict(
        notebook_with("an ordinary value e83c5163316f89bfbde7d9ab23ca2e25604af290")
    )
    nb.cells[0].outputs[1].text = "warning\nsplit across\nlines\n"
    original = nbformat.writes(nb) + "\n"
    (jp_root_dir / "clean.ipynb").write_text(original)
    model = await contents("GET", "clean.ipynb")
    await put(contents, "clean.ipynb", model["content"])
    assert (jp_root_dir / "clean.ipynb").read_text() == original


async def test_the_key_in_its_own_code_is_left_to_the_user(contents, jp_root_dir):
    """Sources are not outputs: a key kept in a cell's code is ``chapyter-ext check``'s to
    report, never rewritten behind the user's back."""
    content = notebook_with("nothing")
    content["cells"][2]["source"] = f"key = {API_KEY!r}"
    content["metadata"]["note"] = API_KEY
    await put(contents, "own.ipynb", content)
    nb = nbformat.read(jp_root_dir / "own.ipynb", as_version=4)
    assert nb.cells[2].source == f"key = {API_KEY!r}" and nb.metadata["note"] == API_KEY


async def next_message(
    socket, schema_id: str, action: str | None = None, timeout: float = 10.0
) -> dict[str, Any]:
    """The next event of ``schema_id`` (and ``action``) the socket delivers; others skipped."""
    while True:
        raw = await asyncio.wait_for(socket.read_message(), timeout)
        assert raw is not None, "the events socket closed"
        message = json.loads(raw)
        if message["schema_id"] == schema_id and action in (None, message.get("action")):
            return message | {"raw": raw}


async def test_the_page_hears_where_and_how_many_never_what(
    contents, jp_ws_fetch, secrets, ext_app
):
    socket = await jp_ws_fetch("api", "events", "subscribe")
    try:
        # A clean save: the contents manager says it saved, and we say nothing.
        await put(contents, "clean.ipynb", notebook_with("nothing here"))
        saved = await next_message(socket, contents_events.CONTENTS_SCHEMA, "save")
        assert saved["path"] == "clean.ipynb"

        await contents("PUT", "work", {"type": "directory"})
        await put(contents, "work/keyed.ipynb", notebook_with(API_KEY))
        event = await next_message(socket, REDACTED_SCHEMA_ID)
        assert event["path"] == "work/keyed.ipynb"
        assert event["outputs"] == 5
        assert event["cells"] == ["stream", "result", "display", "error"]
        for value in secrets:
            assert value not in event["raw"] and value[-10:] not in event["raw"]
        assert ext_app.contents._redacted == {}  # announced once, then forgotten
    finally:
        socket.close()


async def test_the_event_socket_wants_jupyters_authentication(jp_ws_fetch):
    """Jupyter's own route: without the token there is no socket (a redirect to the login
    page, or 403), so no event reaches a page that did not log in."""
    with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
        await jp_ws_fetch(
            "api", "events", "subscribe", headers={"Authorization": "token not-the-token"}
        )
    assert refused.value.code in (302, 403)


async def test_a_failed_check_refuses_the_save(contents, jp_root_dir, monkeypatch):
    """A file written with a key in it cannot be taken back: if the check itself fails, the
    save is refused and the file stays as it was."""
    await put(contents, "kept.ipynb", notebook_with("before"))
    before = (jp_root_dir / "kept.ipynb").read_bytes()

    def broken(nb: Any, redactor: Any) -> None:
        raise MemoryError("out of memory")

    monkeypatch.setattr(contents_events, "redact_outputs", broken)
    with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
        await put(contents, "kept.ipynb", notebook_with(API_KEY))
    assert refused.value.code == 500
    assert b"could not check the outputs for secrets" in refused.value.response.body
    assert (jp_root_dir / "kept.ipynb").read_bytes() == before


async def test_the_event_names_no_cells_when_some_have_no_id_or_too_many(contents, jp_ws_fetch):
    """Then the page looks at every cell: the event stays small, and whole."""
    many = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "id": f"c{i}",
                "cell_type": "code",
                "source": "",
                "metadata": {},
                "execution_count": None,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": API_KEY}],
            }
            for i in range(contents_events.MAX_EVENT_CELLS + 1)
        ],
    }
    old = json.loads(json.dumps(many))
    old["nbformat_minor"] = 4
    old["cells"] = [{k: v for k, v in c.items() if k != "id"} for c in old["cells"][:3]]
    socket = await jp_ws_fetch("api", "events", "subscribe")
    try:
        await put(contents, "many.ipynb", many)
        event = await next_message(socket, REDACTED_SCHEMA_ID)
        assert (event["path"], event["outputs"]) == ("many.ipynb", 1001)
        assert "cells" not in event
        await put(contents, "old.ipynb", old)
        event = await next_message(socket, REDACTED_SCHEMA_ID)
        assert (event["path"], event["outputs"]) == ("old.ipynb", 3)
        assert "cells" not in event
    finally:
        socket.close()
