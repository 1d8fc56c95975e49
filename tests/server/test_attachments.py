"""Files attached to a chat message, end to end through a real server and the loopback model:
an image as an image part (or a one-line refusal before anything is sent), a table described in
the context, bounds and bad base64 refused in one line, the stored message without the data."""

from __future__ import annotations

import base64
import importlib.util
import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from chapyter_ext.chat import MAX_ATTACHMENTS_BODY_BYTES, ChatError, ChatRequest
from chapyter_ext.chat.attachments import (
    FILE_LIMIT,
    IMAGE_LIMIT,
    clean_name,
    describe_attachments,
    parse_attachments,
)
from chapyter_ext.redact import Redactor

NOTEBOOK = "work/sales.ipynb"
# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
CSV = b"region,units,price\nnorth,12,3.5\nsouth,7,4.25\neast,3,9.0\n"
MODELS = {"vision": {"model": "gpt-4o-mini"}, "text": {"model": "text-model"}}


def file(name: str, data: bytes, mime: str = "") -> dict[str, Any]:
    """An attachment as the browser sends it."""
    return {"name": name, "type": mime, "size": len(data), "data": base64.b64encode(data).decode()}


def body(*files: dict[str, Any], model: str = "vision", message: str = "What is this?") -> dict:
    return {"notebook": NOTEBOOK, "message": message, "model": model, "attachments": list(files)}


def parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


async def refused(jp_fetch, request: dict[str, Any]) -> str:
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("chapyter-ext", "chat", method="POST", body=json.dumps(request))
    assert caught.value.code == 400
    error = json.loads(caught.value.response.body)["error"]
    assert error["kind"] == "bad_request" and "\n" not in error["message"]
    return error["message"]


pytestmark = pytest.mark.chapyter_config({"ChapyterExtApp": {"models": MODELS}})


async def test_an_image_goes_to_a_model_that_takes_images_as_an_image_part(post_chat, fake):
    fake.script("A single pixel.")
    response, reader = await post_chat(body(file("dot.png", PNG, "image/png")))
    assert response.code == 200 and reader.names[-1] == "done"
    last = fake.requests[-1].messages[-1]
    assert last["role"] == "user"
    kinds = [p["type"] for p in parts(last)]
    assert kinds == ["text", "image_url"]
    url = parts(last)[1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert "What is this?" in parts(last)[0]["text"]


async def test_an_image_for_a_model_without_images_is_refused_in_one_line(jp_fetch, fake):
    message = await refused(jp_fetch, body(file("dot.png", PNG), model="text"))
    assert "Chapyter.image_input" in message and "'text'" in message
    assert fake.requests == []  # nothing half-sent


async def test_a_csv_is_described_in_the_context_and_stored_without_its_data(
    post_chat, fake, get_json
):
    fake.script("Three regions.")
    response, reader = await post_chat(body(file("sales.csv", CSV, "text/csv"), model="text"))
    assert response.code == 200 and reader.names[-1] == "done"
    sent = parts(fake.requests[-1].messages[-1])
    assert [p["type"] for p in sent] == ["text"]
    text = sent[0]["text"]
    assert f'File "sales.csv" (text/csv, {len(CSV)} B)' in text
    assert "A table of 3 rows × 3 columns." in text
    assert "), units (int64), price (float64)" in text  # region: str or object by pandas
    assert "north" in text and "<kernel-state>" in text
    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    question = history["messages"][0]
    assert question["attachments"] == [{"name": "sales.csv", "type": "text/csv", "size": len(CSV)}]
    stored = json.dumps(history)
    assert base64.b64encode(CSV).decode() not in stored and "north" not in stored


async def test_the_export_names_the_files_without_their_data(post_chat, fake, jp_fetch):
    fake.script("ok")
    await post_chat(body(file("sales.csv", CSV), model="text"))
    response = await jp_fetch("chapyter-ext", "history", "export", params={"notebook": NOTEBOOK})
    text = json.loads(response.body)["markdown"]
    assert f"> Attached: `sales.csv` (`text/csv`, {len(CSV)} bytes)" in text
    assert "north" not in text


@pytest.mark.parametrize(
    "attachment, words",
    [
        ({"name": "a.csv", "type": "text/csv", "size": 3, "data": "%%%="}, "not valid base64"),
        ({"name": "a.csv", "type": "text/csv", "size": 9, "data": "YWJj"}, "not 9 bytes"),
        (file("big.png", b"\x89PNG\r\n\x1a\n" + bytes(IMAGE_LIMIT)), "at most 5 MB"),
        (file("a.exe", b"MZ"), "cannot be attached"),
        (file("fake.png", b"GIF89a...."), "not the image/png image"),
    ],
)
async def test_bad_attachments_are_refused_in_one_line(jp_fetch, fake, attachment, words):
    message = await refused(jp_fetch, body(attachment))
    assert words in message
    assert fake.requests == []


async def test_too_many_files_are_refused(jp_fetch, fake):
    message = await refused(jp_fetch, body(*[file(f"{i}.txt", b"x") for i in range(11)]))
    assert message == "'attachments': at most 10 files go with one message."


def test_the_route_admits_the_largest_allowed_files_and_no_more():
    largest = 4 * (FILE_LIMIT + 2) // 3
    assert largest <= MAX_ATTACHMENTS_BODY_BYTES < largest + 64 * 1024
    with pytest.raises(ChatError, match="at most 20 MB together"):
        ChatRequest.parse(body(*[file(f"{i}.csv", bytes(FILE_LIMIT // 2 + 1)) for i in range(2)]))


def test_names_are_cleaned():
    assert clean_name("../../etc/passwd") == "passwd"
    assert clean_name("C:\\Users\\me\\data.csv") == "data.csv"
    assert clean_name(".hidden\x00.csv") == "hidden_.csv"
    assert clean_name("a" * 400 + ".csv").endswith(".csv")
    assert len(clean_name("a" * 400 + ".csv")) == 255
    assert clean_name("...") == "attachment"


def test_a_table_description_is_redacted_and_bounded():
    secret = b"name,key\nx,sk-abcdefghijklmnopqrstuvwxyz123456\n"
    files = parse_attachments([file("keys.csv", secret), file("notes.txt", b"line\n" * 9999)])
    text = describe_attachments(files, 600, Redactor())
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in text and "<redacted>" in text
    assert len(text) < 700
    assert "notes.txt" in text


def test_without_a_reader_a_parquet_file_is_one_line():
    if importlib.util.find_spec("pyarrow") or importlib.util.find_spec("fastparquet"):
        pytest.skip("this server can read Parquet")
    files = parse_attachments([file("t.parquet", b"PAR1....PAR1")])
    text = describe_attachments(files, 2000, Redactor())
    line = text.splitlines()[-1]
    assert line.startswith('File "t.parquet"') and line.endswith(
        "not described (pyarrow is not installed)."
    )
    assert text.count("\n") == 2


async def test_an_agent_turn_gets_the_image_with_the_question(jp_fetch, get_json, fake):
    from .agent_browser import Browser, agent_body

    fake.script("A single pixel.")
    request = agent_body(model="vision", attachments=[file("dot.png", PNG)], policy="never")
    await Browser(jp_fetch, get_json).run(request, lambda step: None, timeout=30)
    first = fake.requests[0].messages[-1]
    assert [p["type"] for p in parts(first)] == ["text", "image_url"]
