"""Bad input, server side: bad bodies, bad Unicode, damaged history files, leaks in the stream,
notebook paths spelled two ways. Every case goes through the real server."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.testing.openai_server import Reply

NOTEBOOK = "work/bad input.ipynb"

ROUTES = [
    ("chapyter-ext", "chat"),
    ("chapyter-ext", "chat", "stop"),
    ("chapyter-ext", "history", "new"),
    ("chapyter-ext", "context"),
    ("chapyter-ext", "fix"),
]


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


# -- (1) bodies the JSON parser chokes on ------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: "/".join(r[1:]))
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (deep(100_000), 400),  # RecursionError in json.loads
        ('{"notebook": ' + deep(200) + ', "message_id": ' + deep(200) + "}", 400),  # parses
        ('{"message_id": "' + "x" * (5 * 1024 * 1024) + '"}', 413),  # larger than the bound
        ('{"notebook": "a.ipynb", "message_id": 1e999999, "x": [1, {"y": ', 400),  # truncated
    ],
    ids=["recursion", "nested", "huge", "truncated"],
)
async def test_unparseable_bodies_are_refused_on_every_route(get_json, fake, route, body, expected):
    if route == ("chapyter-ext", "chat") and expected == 413:
        expected = 400  # within what the chat admits for attached files: read, then refused
    status, data = await get_json(*route, method="POST", body=body)
    assert status == expected, data
    assert data["error"]["kind"] == "bad_request"
    assert "\n" not in data["error"]["message"]
    assert fake.requests == []


async def test_stop_with_a_nested_message_id_is_a_400(get_json):
    status, data = await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body='{"message_id": ' + deep(50) + "}"
    )
    assert (status, data["error"]["kind"]) == (400, "bad_request")


# -- (2) invalid Unicode ------------------------------------------------------------------------


async def test_lone_surrogates_are_repaired_at_the_edge(post_chat, get_json, fake):
    fake.script("fine")
    body = {
        "notebook": "odd\ud800name.ipynb",
        "message": "why \udc00 this?",
        "context": "cell: x = '\ud83d'",
    }
    response, reader = await post_chat(body)
    assert response.code == 200
    assert reader.names[-1] == "done", reader.events
    sent = "\n".join(m["content"] for m in fake.requests[-1].messages)
    assert "why \ufffd this?" in sent
    assert "x = '\ufffd'" in sent
    # GET finds the same chat with the path spelled with a lone surrogate too.
    status, view = await get_json(
        "chapyter-ext", "history", params={"notebook": "odd\ufffdname.ipynb"}
    )
    assert status == 200
    assert [m["content"] for m in view["messages"]] == ["why \ufffd this?", "fine"]


async def test_invalid_utf8_is_repaired_not_a_500(jp_fetch, get_json, fake):
    fake.script("ok")
    raw = b'{"notebook": "nb\xff.ipynb", "message": "caf\xe9 \xed\xa0\x80?"}'
    response = await jp_fetch("chapyter-ext", "chat", method="POST", body=raw, raise_error=False)
    assert response.code == 200
    assert b"event: done" in response.body
    assert "caf\ufffd" in fake.requests[-1].messages[-1]["content"]
    status, view = await get_json("chapyter-ext", "history", params={"notebook": b"nb\xff.ipynb"})
    assert status == 200 and len(view["messages"]) == 2


# -- (3) damaged history files ----------------------------------------------------------------


def good_message(i: int, role: str = "user") -> dict:
    return {"id": f"m{i}", "role": role, "content": f"message {i}", "status": "complete"}


def damaged_files(notebook: str) -> dict[str, bytes]:
    chats = {"c1": {"created": "", "messages": [good_message(1), good_message(2, "assistant")]}}

    def doc(**changes) -> dict:
        data = {
            "version": 1,
            "notebook": notebook,
            "current": "c1",
            "chats": json.loads(json.dumps(chats)),
        }
        data.update(changes)
        return data

    no_id = doc()
    no_id["chats"]["c1"]["messages"].insert(1, {"role": "user", "content": "no id"})
    wrong_types = doc()
    wrong_types["chats"]["c1"]["messages"].append({"id": 5, "role": "user", "content": "x"})
    wrong_types["chats"]["c1"]["messages"].append(
        {"id": "m9", "role": "user", "content": {"deep": [[["x"]]]}}
    )
    wrong_types["chats"]["c2"] = {"messages": {"not": "a list"}}
    wrong_types["chats"]["c3"] = ["not", "a", "chat"]
    bad_current = doc(current=7)
    utf8 = json.dumps(doc(), ensure_ascii=False).encode().replace(b"message 1", b"message \xff1")
    return {
        "message without id": json.dumps(no_id).encode(),
        "wrong types at depth": json.dumps(wrong_types).encode(),
        "current of the wrong type": json.dumps(bad_current).encode(),
        "invalid utf-8": utf8,
        "missing chats": json.dumps({"version": 1, "notebook": notebook}).encode(),
        "deep nesting": (
            b'{"version": 1, "notebook": "'
            + notebook.encode()
            + b'", "chats": '
            + deep(100_000).encode()
            + b"}"
        ),
        "half a file": json.dumps(doc()).encode()[:-40],
    }


@pytest.mark.parametrize("case", list(damaged_files(NOTEBOOK)))
async def test_damaged_history_is_salvaged_and_told_once(
    get_json, post_chat, fake, history_dir, ext_app, case
):
    path = ext_app.history.store.file_for(NOTEBOOK)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = damaged_files(NOTEBOOK)[case]
    path.write_bytes(raw)

    status, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert status == 200, view
    salvageable = case not in ("missing chats", "deep nesting", "half a file")
    contents = [m["content"] for m in view["messages"]]
    if salvageable:
        assert contents[-1] == "message 2"
        assert "no id" not in contents and "x" not in contents
    else:
        assert contents == []
    aside = [p for p in history_dir.iterdir() if ".corrupt-" in p.name]
    assert [p.read_bytes() for p in aside] == [raw]
    assert str(aside[0]) in view["notice"]
    assert "could not be read" in view["notice"]

    # Told once; the file left behind reads cleanly; chatting works.
    _, again = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert "notice" not in again and again["messages"] == view["messages"]
    fake.script("still here")
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "hello"})
    assert reader.names[-1] == "done" and "notice" not in reader.names


async def test_two_corruptions_in_one_second_keep_both_copies(
    get_json, post_chat, fake, history_dir, ext_app
):
    path = ext_app.history.store.file_for(NOTEBOOK)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"{ first damage")
    status, _ = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert status == 200
    path.write_bytes(b"{ second damage")
    # This time the chat request is the first to read it: the notice comes in the stream.
    fake.script("answer")
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "hi"})
    assert reader.names[:2] == ["start", "notice"]
    assert "could not be read" in reader.first("notice")["message"]
    assert reader.names[-1] == "done"
    copies = sorted(p.read_bytes() for p in history_dir.iterdir() if ".corrupt-" in p.name)
    assert copies == [b"{ first damage", b"{ second damage"]


# -- (4) every streamed event is redacted --------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 10, 64])
async def test_a_key_echoed_by_the_model_never_reaches_the_browser(
    post_chat, get_json, fake, secrets, chunk_size
):
    answer = f"Your key is {secrets[0]} and the header is {secrets[1]}; keep them safe."
    fake.script(Reply(content=answer, chunk_size=chunk_size))
    response, reader = await post_chat({"notebook": NOTEBOOK, "message": "what is my key?"})
    body = response.body.decode()
    for secret in secrets:
        assert secret not in body
        # Not even in two halves across token events.
        assert secret not in "".join(reader.tokens())
    expected = "Your key is <redacted> and the header is <redacted>; keep them safe."
    assert reader.first("done")["text"] == expected
    assert "".join(reader.tokens()) == expected
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert view["messages"][-1]["content"] == expected


async def test_error_events_are_redacted(post_chat, fake, secrets):
    fake.script(Reply(status=400, error=f"bad key {secrets[0]} in header {secrets[1]}"))
    response, reader = await post_chat({"notebook": NOTEBOOK, "message": "hi"})
    assert reader.names[-1] == "error"
    assert not any(secret in response.body.decode() for secret in secrets)


# -- (5) one normalisation of notebook paths for every route ------------------------------------


@pytest.mark.parametrize("spelling", ["  work/x.ipynb", "work/x.ipynb \t", "/work/./x.ipynb"])
async def test_paths_differing_by_spaces_are_one_notebook_everywhere(
    get_json, post_chat, fake, spelling
):
    fake.script("a")
    _, reader = await post_chat({"notebook": "work/x.ipynb", "message": "q"})
    chat_id = reader.first("start")["chat_id"]
    status, view = await get_json("chapyter-ext", "history", params={"notebook": spelling})
    assert (status, view["chat_id"], view["notebook"]) == (200, chat_id, "work/x.ipynb")
    status, new = await get_json(
        "chapyter-ext", "history", "new", method="POST", body={"notebook": spelling}
    )
    assert status == 200 and new["chats"] == [chat_id, new["chat_id"]]


@pytest.mark.parametrize("spelling", ["work/x.ipynb\x00", "\x00work/x.ipynb", "work/x\x01.ipynb"])
async def test_control_characters_are_refused_by_every_route(get_json, fake, spelling):
    results = [
        await get_json("chapyter-ext", "history", params={"notebook": spelling}),
        await get_json("chapyter-ext", "history", method="DELETE", params={"notebook": spelling}),
        await get_json(
            "chapyter-ext", "history", "new", method="POST", body={"notebook": spelling}
        ),
        await get_json(
            "chapyter-ext", "chat", method="POST", body={"notebook": spelling, "message": "q"}
        ),
    ]
    assert [(status, data["error"]["kind"]) for status, data in results] == [
        (400, "bad_request")
    ] * 4
    assert fake.requests == []


# -- the chat's context as a notebook snapshot ---------------------------------------------------


async def test_a_snapshot_context_is_assembled_redacted_and_repaired(
    post_chat, get_json, fake, secrets
):
    fake.script("ok")
    snapshot = {
        "path": NOTEBOOK,
        "cell_count": 2,
        "active": {"index": 1, "type": "code", "source": f"key = '{secrets[0]}'\nplot(df\ud800)"},
        "above": [{"index": 0, "type": "code", "source": "df = load('cities.csv')"}],
        "below": [],
        "selection": "",
        "last_error": None,
        "variables": None,
        "language": "python",
    }
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "q", "context": snapshot})
    assert reader.names[-1] == "done", reader.events
    sent = "\n".join(m["content"] for m in fake.requests[-1].messages)
    assert "cities.csv" in sent and "plot(df\ufffd)" in sent
    assert secrets[0] not in sent

    status, data = await get_json(
        "chapyter-ext",
        "chat",
        method="POST",
        body={"notebook": NOTEBOOK, "message": "q", "context": {"cell_count": "x"}},
    )
    assert (status, data["error"]["kind"]) == (400, "bad_request")
    assert data["error"]["message"].startswith("'context': ")


async def test_a_lone_surrogate_from_the_model_is_saved_and_sent_repaired(
    post_chat, get_json, fake
):
    fake.script(Reply(content="broken \ud800 text", chunk_size=4))
    _, reader = await post_chat({"notebook": NOTEBOOK, "message": "q"})
    assert reader.first("done")["text"] == "broken \ufffd text"
    assert "".join(reader.tokens()) == "broken \ufffd text"
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert view["messages"][-1]["content"] == "broken \ufffd text"
