"""POST chapyter-ext/complete: inline suggestions streamed from a real server through the
loopback model, chat or fill-in-the-middle, cancelled when the browser goes away."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from tornado.httpclient import HTTPClientError

from chapyter_ext.testing.openai_server import Reply


def body(**extra):
    return {
        "prefix": "import pandas as pd\ndf.gro",
        "suffix": "",
        "cells_above": ["df = pd.read_csv('cities.csv')"],
        "variables": [{"name": "df", "type": "DataFrame", "summary": "3x2, columns: city, temp"}],
        "language": "python",
        "editor": "cell-1",
        **extra,
    }


async def test_streams_a_clean_suggestion_through_chat(post_complete, fake, secrets):
    fake.script(Reply(content="```python\ndf.groupby('city').mean()\n```", chunk_size=4))
    response, reader = await post_complete(body())

    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert reader.names[-1] == "done" and set(reader.names[:-1]) == {"token"}
    assert len(reader.tokens()) >= 2  # it grows as it arrives
    assert "".join(reader.tokens()) == "upby('city').mean()"
    assert reader.first("done")["text"] == "upby('city').mean()"

    sent = fake.requests[-1]
    assert sent.path == "/v1/chat/completions" and sent.body["stream"] is True
    assert sent.body["max_tokens"] == 64
    text = json.dumps(sent.body)
    assert "df.gro<CURSOR>" in text
    assert "columns: city, temp" in text and "cities.csv" in text
    for secret in secrets:
        assert secret not in text
    assert sent.headers["authorization"] == f"Bearer {secrets[0]}"
    for secret in secrets:
        assert secret not in response.body.decode() if response.body else True


@pytest.mark.chapyter_config({"Chapyter": {"completion_fim": {"fake-model": True}}})
async def test_fill_in_the_middle_for_models_that_take_it(post_complete, fake):
    fake.script(Reply(content="'city'), axis=0)", chunk_size=3))
    _, reader = await post_complete(body(prefix="df.groupby(", suffix=", axis=0)\nprint(df)"))

    sent = fake.requests[-1]
    assert sent.path == "/v1/completions"
    assert sent.body["prompt"].endswith("df.groupby(")
    assert "# df: DataFrame" in sent.body["prompt"]
    assert sent.body["suffix"] == ", axis=0)\nprint(df)"
    # What duplicates the text after the cursor is not suggested.
    assert "".join(reader.tokens()) == "'city')"


async def test_typing_on_closes_the_upstream_call(post_then_close, fake, ext_app, wait_until):
    # Code as it grows shows at once (prose would be held until its line is whole).
    fake.script(Reply(content="upby([" + "'city', " * 50, chunk_size=5, chunk_delay=0.2))
    await post_then_close("complete", body())  # the browser aborts the fetch

    await wait_until(lambda: fake.requests and fake.requests[-1].disconnected, what="upstream")
    assert fake.requests[-1].chunks_sent < 50
    await wait_until(lambda: ext_app.completions.cancelled == 1, what="counted as cancelled")


async def test_a_newer_request_from_the_same_editor_cancels_the_older(
    post_complete, fake, ext_app, wait_until
):
    fake.script(Reply(content="slow", delay=5.0), Reply(content="upby('x')"))
    older = asyncio.ensure_future(post_complete(body()))
    await wait_until(lambda: len(fake.requests) == 1, what="first request upstream")
    _, reader = await post_complete(body())
    assert "".join(reader.tokens()) == "upby('x')"
    await wait_until(lambda: fake.requests[0].disconnected, what="older upstream closed")
    _, old_reader = await asyncio.wait_for(older, 10)
    assert "done" not in old_reader.names


async def test_failure_is_an_error_event_logged_once(post_complete, fake, ext_app, caplog):
    fake.script(*[Reply(status=500, error="model crashed")] * 3)
    caplog.set_level(logging.DEBUG)
    for _ in range(3):
        _, reader = await post_complete(body())
        assert reader.names == ["error"]
        assert reader.first("error")["kind"] == "server"
    warnings = [r for r in caplog.records if "Inline completion failed (" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert ext_app.completions.failing == "server"
    fake.script("upby('a')")
    _, reader = await post_complete(body())
    assert reader.first("done")["text"] == "upby('a')"
    assert ext_app.completions.failing is None


async def test_an_empty_answer_is_no_suggestion_not_a_failure(post_complete, fake, ext_app):
    fake.script(Reply(content=""))
    _, reader = await post_complete(body())
    assert reader.names == ["done"] and reader.first("done")["text"] == ""
    assert ext_app.completions.failing is None


@pytest.mark.chapyter_config({"Chapyter": {"completion_model": "nope"}})
async def test_unknown_completion_model_says_so(post_complete):
    _, reader = await post_complete(body())
    error = reader.first("error")
    assert error["kind"] == "not_found" and "completion_model" in error["message"]


async def test_bad_body_is_400(jp_fetch):
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("chapyter-ext", "complete", method="POST", body=json.dumps({"prefix": 3}))
    assert info.value.code == 400
    assert json.loads(info.value.response.body)["error"]["kind"] == "bad_request"


async def test_needs_authentication(jp_fetch, fake):
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "chapyter-ext",
            "complete",
            method="POST",
            body=json.dumps(body()),
            headers={"Authorization": ""},
        )
    assert info.value.code in (401, 403)
    assert fake.requests == []


async def test_a_bug_of_ours_is_one_error_event_and_a_logged_traceback(
    post_complete, ext_app, monkeypatch, caplog, secrets
):
    async def broken_plan():
        raise RuntimeError(f"boom {secrets[0]}")

    monkeypatch.setattr(ext_app.completions, "plan", broken_plan)
    _, reader = await post_complete(body())
    assert reader.names == ["error"]
    assert reader.first("error") == {
        "kind": "internal",
        "message": "Internal error; see the server log.",
    }
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "RuntimeError: boom" in logged and secrets[0] not in logged
