"""POST chapyter-ext/chat: streamed replies, errors, stopping, the concurrency bound."""

from __future__ import annotations

import asyncio
import json

import pytest

from chapyter_ext.context import redact
from chapyter_ext.history.store import ChatHistoryStore
from chapyter_ext.redact import REDACTED
from chapyter_ext.server import handlers as handlers_module
from chapyter_ext.testing.openai_server import Reply

from .conftest import SSEReader

NOTEBOOK = "work/analysis.ipynb"
ANSWER = "Use df.groupby('city').mean() to average each city; then plot it."


def chat_body(message: str = "average per city?", **extra):
    return {"notebook": NOTEBOOK, "message": message, **extra}


async def test_streams_tokens_in_order(post_chat, fake, secrets):
    fake.script(Reply(content=ANSWER, chunk_size=8))
    context = (
        "active cell: df = load('cities.csv')\n"
        f"variables: df: DataFrame (3, 2); OPENAI_API_KEY = '{secrets[0]}'\n"
        f"headers: {secrets[1]}"
    )
    response, reader = await post_chat(chat_body(context=context))

    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert reader.names[0] == "start"
    assert reader.names[-1] == "done"
    assert set(reader.names[1:-1]) == {"token"}
    assert len(reader.tokens()) >= 4
    assert "".join(reader.tokens()) == ANSWER
    start, done = reader.first("start"), reader.first("done")
    assert start["model"] == "fake-model"
    assert start["chat_id"] and start["message_id"]
    usage = done.pop("usage")  # what the endpoint reported, asked for with stream_options
    assert done == {"message_id": start["message_id"], "text": ANSWER, "status": "complete"}
    assert usage["completion_tokens"] == len(ANSWER) // 4 and "cost" not in usage

    sent = fake.requests[-1]
    body = json.dumps(sent.body)
    assert sent.model == "fake-model"
    assert sent.body["stream"] is True
    assert "average per city?" in sent.messages[-1]["content"]
    sent_text = "\n".join(str(m["content"]) for m in sent.messages)
    assert redact(context, secrets=secrets) in sent_text
    assert "cities.csv" in sent_text
    for secret in secrets:
        assert secret not in body
    # The key goes where it belongs, and only there.
    assert sent.headers["authorization"] == f"Bearer {secrets[0]}"


async def test_each_token_is_flushed_as_it_comes(post_chat, fake):
    # Words, as models send them: an unfinished word is held back until it ends (it could
    # be the first half of a key), so each chunk here ends a word.
    fake.script(Reply(content="aaa " + "bbb " + "ccc " + "ddd", chunk_size=4, chunk_delay=0.3))
    _, reader = await post_chat(chat_body())
    times = {name: t for name, _, t in reversed(reader.events)}  # first arrival of each
    first_token = next(t for name, _, t in reader.events if name == "token")
    assert times["done"] - first_token > 0.6  # tokens were not held back until the end
    assert reader.chunks >= 5


async def test_history_is_sent_with_the_next_message(post_chat, fake):
    fake.script("first answer", "second answer")
    _, first = await post_chat(chat_body("first question"))
    chat_id = first.first("start")["chat_id"]
    _, second = await post_chat(chat_body("second question", chat_id=chat_id))
    assert second.first("start")["chat_id"] == chat_id
    roles = [(m["role"], m["content"]) for m in fake.requests[-1].messages[1:]]
    assert roles[:2] == [("user", "first question"), ("assistant", "first answer")]
    assert "second question" in roles[-1][1]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply(status=401), "auth"),
        (Reply(status=500), "server"),
        (Reply(content="x" * 200, chunk_size=10, cut_after=3), "stream_cut"),
    ],
    ids=["401", "500", "cut"],
)
async def test_upstream_errors_become_one_error_event(
    post_chat, get_json, fake, secrets, reply, kind
):
    fake.script(reply)
    response, reader = await post_chat(chat_body())
    assert response.code == 200
    assert reader.names[0] == "start"
    assert reader.names[-1] == "error"
    error = reader.events[-1][1]
    assert set(error) == {"kind", "message"}
    assert error["kind"] == kind
    assert "\n" not in error["message"] and error["message"]
    assert not any(secret in response.body.decode() for secret in secrets)

    # Saved as a failed reply; the server keeps serving.
    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert [m["status"] for m in history["messages"]] == ["complete", "error"]
    # ...with its reason, so the panel can still say why after a reload.
    assert history["messages"][-1]["error"] == error["message"]
    fake.script("fine again")
    _, reader = await post_chat(chat_body("again"))
    assert reader.first("done")["text"] == "fine again"


async def test_client_disconnect_closes_upstream(
    post_then_close, fake, chat_service, get_json, wait_until
):
    fake.script(Reply(content="word " * 100, chunk_size=5, chunk_delay=0.1))
    await post_then_close("chat", chat_body())  # the tab closes

    await wait_until(lambda: fake.requests and fake.requests[-1].disconnected, what="upstream")
    assert fake.requests[-1].chunks_sent < 100  # stopped long before the end
    await wait_until(lambda: chat_service.active == 0, what="slot released")
    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert [(m["role"], m["status"]) for m in history["messages"]] == [
        ("user", "complete"),
        ("assistant", "stopped"),
    ]
    assert history["messages"][1]["content"].startswith("word")


async def test_stop_by_message_id(post_chat, get_json, fake, wait_until):
    fake.script(Reply(content="word " * 100, chunk_size=5, chunk_delay=0.1))
    reader = SSEReader()
    task = asyncio.ensure_future(post_chat(chat_body(), reader=reader))
    try:
        await wait_until(lambda: len(reader.tokens()) >= 2, what="first tokens")
        message_id = reader.first("start")["message_id"]
        status, data = await get_json(
            "chapyter-ext", "chat", "stop", method="POST", body={"message_id": message_id}
        )
        assert (status, data) == (200, {"message_id": message_id, "stopped": True})
        await asyncio.wait_for(task, 10)
    finally:
        task.cancel()
    done = reader.first("done")
    assert reader.names[-1] == "done"
    assert done == {"message_id": message_id, "text": "".join(reader.tokens()), "status": "stopped"}
    assert 0 < len(done["text"]) < len("word " * 100)
    await wait_until(lambda: fake.requests[-1].disconnected, what="upstream closed")

    status, data = await get_json(
        "chapyter-ext", "chat", "stop", method="POST", body={"message_id": message_id}
    )
    assert (status, data["stopped"]) == (200, False)
    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert history["messages"][-1]["status"] == "stopped"
    assert history["messages"][-1]["content"] == done["text"]


async def test_heartbeat_while_the_model_thinks(post_chat, fake, monkeypatch):
    monkeypatch.setattr(handlers_module, "HEARTBEAT_SECONDS", 0.05)
    fake.script(Reply(content="late", delay=0.4))
    _, reader = await post_chat(chat_body())
    assert reader.comments >= 2
    assert reader.names == ["start", "token", "done"]


async def test_server_shutdown_saves_the_partial_reply(
    post_chat, fake, ext_app, history_dir, wait_until
):
    fake.script(Reply(content="word " * 100, chunk_size=5, chunk_delay=0.1))
    reader = SSEReader()
    task = asyncio.ensure_future(post_chat(chat_body(), reader=reader))
    try:
        await wait_until(lambda: reader.tokens(), what="first token")
        await ext_app.stop_extension()
        await asyncio.wait_for(task, 10)
    finally:
        task.cancel()
    assert reader.first("done")["status"] == "stopped"
    await wait_until(lambda: fake.requests[-1].disconnected, what="upstream closed")
    root = ext_app.history.store.contents_root  # a new store reads it as a restarted server
    saved = ChatHistoryStore(history_dir, contents_root=root).get(NOTEBOOK).messages
    assert [(m.role, m.status) for m in saved] == [("user", "complete"), ("assistant", "stopped")]


@pytest.mark.chapyter_config({"ChapyterExtApp": {"max_concurrent_streams": 1}})
async def test_concurrency_bound_gives_429(post_chat, get_json, fake, chat_service, wait_until):
    fake.script(Reply(content="slow " * 20, chunk_size=5, chunk_delay=0.05), "next")
    task = asyncio.ensure_future(post_chat(chat_body()))
    await wait_until(lambda: chat_service.active == 1, what="first stream")
    status, data = await get_json("chapyter-ext", "chat", method="POST", body=chat_body("2nd"))
    assert status == 429
    assert data["error"]["kind"] == "busy"
    assert "\n" not in data["error"]["message"]
    _, reader = await asyncio.wait_for(task, 10)
    assert reader.names[-1] == "done"
    # The slot is free again.
    _, reader = await post_chat(chat_body("3rd"))
    assert reader.first("done")["text"] == "next"


@pytest.mark.chapyter_config({"ChapyterExtApp": {"stream_timeout": 0.5}})
async def test_stream_timeout_stops_the_reply(post_chat, fake, wait_until):
    fake.script(Reply(content="word " * 100, chunk_size=5, chunk_delay=0.1))
    _, reader = await post_chat(chat_body())
    assert reader.names[-1] == "error"
    assert reader.events[-1][1]["kind"] == "timeout"
    await wait_until(lambda: fake.requests[-1].disconnected, what="upstream closed")


@pytest.mark.parametrize(
    ("body", "status", "kind"),
    [
        ("not json", 400, "bad_request"),
        ([1, 2], 400, "bad_request"),
        ({"notebook": NOTEBOOK}, 400, "bad_request"),
        ({"notebook": NOTEBOOK, "message": "  "}, 400, "bad_request"),
        ({"message": "hi"}, 400, "bad_request"),
        ({"notebook": "../outside.ipynb", "message": "hi"}, 400, "bad_request"),
        ({"notebook": NOTEBOOK, "message": "hi", "context": 3}, 400, "bad_request"),
        ({"notebook": NOTEBOOK, "message": "hi", "model": "nope"}, 404, "not_found"),
        ({"notebook": NOTEBOOK, "message": "hi", "chat_id": "nope"}, 404, "not_found"),
        ({"notebook": NOTEBOOK, "message": "x" * 40_000}, 400, "bad_request"),
    ],
)
async def test_bad_requests_are_json_errors(get_json, fake, body, status, kind):
    raw = body if isinstance(body, str) else json.dumps(body)
    code, data = await get_json("chapyter-ext", "chat", method="POST", body=raw)
    assert (code, data["error"]["kind"]) == (status, kind)
    assert data["error"]["message"]
    assert fake.requests == []


async def test_models_lists_the_endpoint_models(get_json, fake):
    status, data = await get_json("chapyter-ext", "models")
    assert (status, data) == (200, {"name": "fake-model", "models": ["fake-model"]})
    assert fake.requests[-1].path == "/v1/models"
    status, data = await get_json("chapyter-ext", "models", params={"name": "nope"})
    assert (status, data["error"]["kind"]) == (404, "not_found")


async def test_models_upstream_failure_is_502(get_json, fake, history_dir):
    fake.stop()  # nothing listens there any more
    status, data = await get_json("chapyter-ext", "models")
    assert status == 502
    assert data["error"]["kind"] == "connection"


@pytest.mark.chapyter_config(
    lambda fake: {
        "ChapyterExtApp": {
            "models": {
                "shared": {"model": "fake-model"},
                # Same server, spelled differently: to the extension, another host.
                "elsewhere": {
                    "model": "other-model",
                    "base_url": f"http://localhost:{fake.port}/v1",
                },
            },
        }
    }
)
async def test_named_model_on_another_url_gets_no_shared_key(post_chat, fake, secrets):
    fake.script("from shared", "from elsewhere")
    _, reader = await post_chat(chat_body(model="shared"))
    assert reader.first("start")["model"] == "shared"
    assert fake.requests[-1].headers["authorization"] == f"Bearer {secrets[0]}"
    assert fake.requests[-1].headers["x-test-secret"] == secrets[1]

    _, reader = await post_chat(chat_body(model="elsewhere"))
    assert reader.first("start")["model"] == "elsewhere"
    assert reader.first("done")["text"] == "from elsewhere"
    sent = fake.requests[-1]
    assert sent.model == "other-model"
    assert secrets[0] not in json.dumps(sent.headers)
    assert "x-test-secret" not in sent.headers


@pytest.mark.chapyter_config({"Chapyter": {"prompt_style": "small"}})
async def test_a_small_model_gets_the_short_chat_prompt_and_a_capped_answer(post_chat, fake):
    from chapyter_ext.chat.prompts import CHAT_SYSTEM_PROMPT, SMALL_CHAT_SYSTEM_PROMPT
    from chapyter_ext.profile import SMALL_CHAT_HISTORY, SMALL_CHAT_MAX_TOKENS

    fake.script("one", "two", "three")
    _, first = await post_chat(chat_body("first question"))
    chat_id = first.first("start")["chat_id"]
    await post_chat(chat_body("second question", chat_id=chat_id))
    await post_chat(chat_body("third question", chat_id=chat_id))

    sent = fake.requests[-1]
    assert sent.messages[0] == {"role": "system", "content": SMALL_CHAT_SYSTEM_PROMPT}
    assert CHAT_SYSTEM_PROMPT not in json.dumps(sent.body)
    assert sent.body["max_tokens"] == SMALL_CHAT_MAX_TOKENS
    # Only the latest earlier messages: the first question is gone.
    assert len(sent.messages) == 1 + SMALL_CHAT_HISTORY + 1
    assert "first question" not in json.dumps(sent.messages)
    assert "third question" in sent.messages[-1]["content"]


async def test_a_capable_model_keeps_the_full_chat_prompt(post_chat, fake):
    from chapyter_ext.chat.prompts import CHAT_SYSTEM_PROMPT

    fake.script("fine")
    await post_chat(chat_body("a question"))
    sent = fake.requests[-1]
    assert sent.messages[0] == {"role": "system", "content": CHAT_SYSTEM_PROMPT}
    assert sent.body["max_tokens"] == 2048


# -- secrets in what the model says ---------------------------------------------

NAMED_KEY = "sk-named-ELSEWHERE-9f8e7d6c5b4a"


def key_parts(secret: str, n: int = 8) -> list[str]:
    """Runs of ``n`` characters of ``secret`` past its "sk-"-like prefix with a digit in them."""
    core = secret.split("-", 2)[-1] if secret.startswith("sk-") else secret.split("-", 1)[1]
    return [
        core[i : i + n]
        for i in range(len(core) - n + 1)
        if any(c.isdigit() for c in core[i : i + n])
    ]


@pytest.mark.chapyter_config(
    lambda fake: {
        "ChapyterExtApp": {
            "models": {
                "shared": {"model": "fake-model"},
                "elsewhere": {"base_url": f"http://localhost:{fake.port}/v1", "api_key": NAMED_KEY},
            },
        }
    }
)
async def test_parts_of_keys_echoed_by_the_model_are_redacted_split_or_not(
    post_chat, fake, secrets, history_dir
):
    # The model "remembers" keys: the configured one without its prefix, a header value's end,
    # the other model's key: each arriving in 3-character pieces, across token boundaries.
    key, header = secrets
    answer = (
        f"Your key is {key[3:]} (ending {key[-8:]}); the header ends {header[-10:]}.\n"
        f"The other model's key ends with …{NAMED_KEY[-12:]}.\n"
        "```python\n"
        f'client = OpenAI(api_key="{REDACTED}")\n'
        "```"
    )
    fake.script(Reply(content=answer, chunk_size=3))
    _, reader = await post_chat(chat_body("what is my key?", model="shared"))
    streamed = "".join(reader.tokens())
    done = reader.first("done")["text"]
    stored = "".join(p.read_text() for p in history_dir.rglob("*.json"))
    for text in (streamed, done, stored):
        for secret in (*secrets, NAMED_KEY):
            assert not [part for part in key_parts(secret) if part in text], text
    # The marker in a code block reaches the browser as the literal marker.
    block = f'```python\nclient = OpenAI(api_key="{REDACTED}")\n```'
    assert streamed.endswith(block) and done.endswith(block)
    assert streamed == done
