"""chapyter_ext.llm against the loopback server: real sockets, the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.config import Chapyter
from chapyter_ext.llm import (
    Endpoint,
    LLMError,
    alist_models,
    astream,
    clients,
    complete,
    list_models,
    retry,
)
from chapyter_ext.testing.jupyter_process import free_port
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply
from tests.endpoints import KEY, loopback_endpoint, run

HEADER_SECRET = "referer-SECRET-value"
USER = [{"role": "user", "content": "make a plot"}]


pytestmark = pytest.mark.usefixtures("llm_clients")


def endpoint(server: FakeOpenAIServer, **changes: Any) -> Endpoint:
    """The loopback endpoint, with a header that is a secret too."""
    return loopback_endpoint(
        server, **{"extra_headers": (("HTTP-Referer", HEADER_SECRET),), **changes}
    )


def fails(kind: str, call: Any, *args: Any, **kwargs: Any) -> LLMError:
    """Run ``call``, which must raise LLMError(kind) with a one-line message and no secrets."""
    with pytest.raises(LLMError) as caught:
        call(*args, **kwargs)
    err = caught.value
    assert err.kind == kind, str(err)
    text = str(err)
    assert text and "\n" not in text
    assert KEY not in text and HEADER_SECRET not in text and "SECRET" not in text
    # No HTML page pasted in; the only markup allowed is the redaction marker.
    assert "<" not in text.replace("<redacted>", "") and "Traceback" not in text
    return err


async def collect(ep: Endpoint, messages: list[dict] = USER) -> list[str]:
    return [piece async for piece in astream(ep, messages)]


# -- basics ------------------------------------------------------------------------------------


def test_import_does_not_load_openai() -> None:
    code = "import sys, chapyter_ext.llm; assert 'openai' not in sys.modules, 'openai imported'"
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1]
    )


def test_endpoint_from_settings_and_host() -> None:
    settings = Chapyter(
        base_url="http://user:pw@localhost:11434/v1/",
        api_key=KEY,
        model="llama3",
        timeout=5.0,
        max_retries=1,
        extra_headers={"X-B": "2", "X-A": "1"},
    )
    ep = Endpoint.from_settings(settings)
    assert ep.base_url == "http://user:pw@localhost:11434/v1"
    assert (ep.api_key, ep.model, ep.timeout, ep.max_retries) == (KEY, "llama3", 5.0, 1)
    assert ep.extra_headers == (("X-A", "1"), ("X-B", "2"))
    assert ep.host == "localhost:11434"
    assert Endpoint.from_settings(settings, model="other").model == "other"
    assert KEY not in repr(ep) and "X-A" not in repr(ep)
    assert Endpoint("https://api.openai.com/v1").host == "api.openai.com"


def test_complete_plain(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("print('plain')")
    pieces: list[str] = []
    result = complete(endpoint(fake_openai), USER, stream=False, on_token=pieces.append)
    assert result.text == "print('plain')"
    assert (result.model, result.attempts, result.finish_reason) == ("fake-model", 1, "stop")
    assert result.elapsed > 0
    assert pieces == [result.text]
    assert fake_openai.requests[-1].body.get("stream") in (None, False)


def test_complete_streamed_delivers_pieces_in_order(fake_openai: FakeOpenAIServer) -> None:
    text = "import numpy as np\nprint(np.arange(10))\n"
    fake_openai.script(Reply(content=text, chunk_size=5))
    pieces: list[str] = []
    result = complete(endpoint(fake_openai), USER, on_token=pieces.append)
    assert pieces == [text[i : i + 5] for i in range(0, len(text), 5)]
    assert result.text == text
    assert (result.attempts, result.finish_reason, result.model) == (1, "stop", "fake-model")
    assert fake_openai.requests[-1].body["stream"] is True


def test_request_carries_settings_and_headers(fake_openai: FakeOpenAIServer) -> None:
    ep = endpoint(fake_openai, model="my-model", temperature=0.7, max_tokens=99)
    messages = [{"role": "system", "content": "be brief"}, *USER]
    complete(ep, messages)
    request = fake_openai.requests[-1]
    assert request.body["model"] == "my-model"
    assert request.body["messages"] == messages
    assert (request.body["temperature"], request.body["max_tokens"]) == (0.7, 99)
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["http-referer"] == HEADER_SECRET


def test_local_server_without_key_gets_a_placeholder(fake_openai: FakeOpenAIServer) -> None:
    complete(endpoint(fake_openai, api_key=""), USER)
    assert fake_openai.requests[-1].headers["authorization"] == "Bearer no-key"


def test_openai_without_key_fails_before_any_request() -> None:
    ep = Endpoint("https://api.openai.com/v1", api_key="")
    err = fails("no_key", complete, ep, USER)
    assert "OPENAI_API_KEY" in str(err)
    fails("no_key", list_models, ep)


def test_list_models(fake_openai: FakeOpenAIServer) -> None:
    with FakeOpenAIServer(models=("llama3", "qwen2.5-coder")) as server:
        assert list_models(endpoint(server)) == ["llama3", "qwen2.5-coder"]
        assert run(alist_models(endpoint(server))) == ["llama3", "qwen2.5-coder"]


def test_clients_are_cached_per_endpoint(fake_openai: FakeOpenAIServer) -> None:
    ep = endpoint(fake_openai)
    assert clients.sync_client(ep) is clients.sync_client(endpoint(fake_openai))
    assert clients.sync_client(ep) is not clients.sync_client(
        endpoint(fake_openai, api_key="other")
    )
    complete(ep, USER)
    complete(ep, USER, stream=False)
    assert len(fake_openai.requests) == 2


def test_on_token_errors_propagate_unchanged(fake_openai: FakeOpenAIServer) -> None:
    def boom(piece: str) -> None:
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        complete(endpoint(fake_openai), USER, on_token=boom)
    assert len(fake_openai.requests) == 1  # a callback bug is not retried


# -- failures ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_401_is_auth_and_never_shows_the_key(fake_openai: FakeOpenAIServer, stream: bool) -> None:
    fake_openai.script(Reply(status=401, error=f"Incorrect API key provided: {KEY}."))
    err = fails("auth", complete, endpoint(fake_openai), USER, stream=stream)
    assert err.status == 401
    assert "401" in str(err) and fake_openai.host in str(err)
    assert "Chapyter.api_key" in str(err)
    assert len(fake_openai.requests) == 1


def test_403_is_permission(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=403, error="Project lacks access."))
    err = fails("permission", complete, endpoint(fake_openai), USER)
    assert "403" in str(err) and "Project lacks access" in str(err)


def test_404_unknown_model(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=404, error="The model `nope` does not exist."))
    err = fails("not_found", complete, endpoint(fake_openai, model="nope"), USER)
    assert err.status == 404
    assert "'nope'" in str(err) and "does not exist" in str(err)


def test_400_is_bad_request_with_the_key_scrubbed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=400, error=f"Bad field near {KEY} and {HEADER_SECRET}"))
    err = fails("bad_request", complete, endpoint(fake_openai), USER)
    assert "Bad field near <redacted> and <redacted>" in str(err) and "***" not in str(err)


def test_429_honours_retry_after_then_succeeds(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(
        Reply(status=429, error="Slow down", headers={"Retry-After": "0.2"}),
        Reply(status=429, headers={"retry-after-ms": "10"}),
        "print('finally')",
    )
    started = time.monotonic()
    result = complete(endpoint(fake_openai), USER)
    assert (result.text, result.attempts) == ("print('finally')", 3)
    assert time.monotonic() - started >= 0.2  # Retry-After was honoured
    assert [r.body["stream"] for r in fake_openai.requests] == [True] * 3


def test_429_exhausted(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.route("plot", Reply(status=429, headers={"Retry-After": "0"}))
    err = fails("rate_limit", complete, endpoint(fake_openai, max_retries=2), USER)
    assert err.status == 429
    assert "after 3 attempts" in str(err)
    assert len(fake_openai.requests) == 3


def test_429_out_of_quota_is_not_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=429, error_code="insufficient_quota", error="No quota."))
    err = fails("budget", complete, endpoint(fake_openai), USER)
    assert "budget" in str(err) and "No quota" in str(err)
    assert len(fake_openai.requests) == 1


def test_500_is_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=500, headers={"Retry-After": "0"}), "ok")
    assert complete(endpoint(fake_openai), USER, stream=False).attempts == 2


def test_5xx_exhausted_uses_backoff(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retry, "BACKOFF_BASE", 0.05)
    fake_openai.route("plot", Reply(status=503, error="Overloaded"))
    started = time.monotonic()
    err = fails("server", complete, endpoint(fake_openai, max_retries=2), USER)
    assert time.monotonic() - started >= 0.15  # 0.05 + 0.1
    assert err.status == 503 and "503" in str(err) and "after 3 attempts" in str(err)


def test_connection_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BACKOFF_BASE", 0.01)
    ep = Endpoint(f"http://127.0.0.1:{free_port()}/v1", timeout=1.0, max_retries=2)
    err = fails("connection", complete, ep, USER)
    assert "127.0.0.1" in str(err) and "after 3 attempts" in str(err)
    assert err.status is None
    fails("connection", list_models, Endpoint(ep.base_url, max_retries=0))


def test_timeout(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="late", delay=10.0))
    started = time.monotonic()
    err = fails("timeout", complete, endpoint(fake_openai, timeout=0.3), USER)
    assert time.monotonic() - started < 8  # gave up at the timeout, not after the answer
    assert "0.3 s" in str(err) and "Chapyter.timeout" in str(err)
    assert len(fake_openai.requests) == 1  # waiting again would double the user's wait
    wait_for(lambda: fake_openai.requests[0].disconnected)  # the client hung up at 0.3 s


def test_timeout_between_chunks(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="x" * 20, chunk_size=5, chunk_delay=1.0))
    pieces: list[str] = []
    fails("timeout", complete, endpoint(fake_openai, timeout=0.3), USER, on_token=pieces.append)
    assert pieces == ["xxxxx"]


def test_stream_cut_midway_is_not_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="abcdefghijklmnop", chunk_size=4, cut_after=2))
    pieces: list[str] = []
    err = fails("stream_cut", complete, endpoint(fake_openai), USER, on_token=pieces.append)
    assert pieces == ["abcd", "efgh"]
    assert "8 characters" in str(err)
    assert len(fake_openai.requests) == 1  # text already reached the caller


def test_stream_cut_before_any_text_is_retried(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retry, "BACKOFF_BASE", 0.01)
    fake_openai.script(Reply(content="never", cut_after=0), "ok")
    assert complete(endpoint(fake_openai), USER).attempts == 2


@pytest.mark.parametrize("stream", [True, False])
def test_invalid_json_is_bad_response(fake_openai: FakeOpenAIServer, stream: bool) -> None:
    fake_openai.script(Reply(raw_body='{"choices": [ broken'))
    err = fails("bad_response", complete, endpoint(fake_openai), USER, stream=stream)
    assert "base_url" in str(err)
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize("body", ["{}", "[1, 2]", '{"choices": [{"message": 3}]}'])
def test_wrong_json_shape_is_bad_response(fake_openai: FakeOpenAIServer, body: str) -> None:
    fake_openai.script(Reply(raw_body=body))
    fails("bad_response", complete, endpoint(fake_openai), USER, stream=False)


def test_html_page_is_bad_response_without_html(fake_openai: FakeOpenAIServer) -> None:
    page = "<html><body><h1>Welcome to nginx</h1></body></html>"
    fake_openai.script(*[Reply(raw_body=page, headers={"Content-Type": "text/html"})] * 2)
    fails("bad_response", complete, endpoint(fake_openai), USER, stream=False)
    fails("bad_response", complete, endpoint(fake_openai), USER, stream=True)


def test_html_error_page_keeps_the_status_only(fake_openai: FakeOpenAIServer) -> None:
    page = "<html><body><h1>502 Bad Gateway</h1><p>SECRET</p></body></html>"
    headers = {"Content-Type": "text/html", "Retry-After": "0"}
    proxy_error = Reply(status=502, raw_body=page, headers=headers)
    fake_openai.script(proxy_error, proxy_error)
    err = fails("server", complete, endpoint(fake_openai, max_retries=1), USER)
    assert "HTTP 502" in str(err)


@pytest.mark.parametrize("stream", [True, False])
def test_empty_answer(fake_openai: FakeOpenAIServer, stream: bool) -> None:
    fake_openai.script(Reply(content="  \n"))
    err = fails("empty", complete, endpoint(fake_openai), USER, stream=stream)
    assert "'fake-model'" in str(err)
    assert len(fake_openai.requests) == 1


def test_drop_is_a_connection_error_and_retried(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retry, "BACKOFF_BASE", 0.01)
    fake_openai.script(Reply(drop=True))
    fails("connection", complete, endpoint(fake_openai, max_retries=0), USER)
    fake_openai.script(Reply(drop=True), "after the drop")
    result = complete(endpoint(fake_openai), USER)
    assert (result.text, result.attempts) == ("after the drop", 2)


# -- async -------------------------------------------------------------------------------------


def test_astream_yields_deltas(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="0123456789", chunk_size=3))
    assert run(collect(endpoint(fake_openai))) == ["012", "345", "678", "9"]


def test_astream_retries_before_the_first_delta(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=429, headers={"Retry-After": "0"}), Reply(content="ok"))
    assert run(collect(endpoint(fake_openai))) == ["ok"]
    assert len(fake_openai.requests) == 2


def test_astream_error_midway(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="abcdefghij", chunk_size=2, cut_after=3))
    received: list[str] = []

    async def consume() -> None:
        async for piece in astream(endpoint(fake_openai), USER):
            received.append(piece)

    fails("stream_cut", run, consume())
    assert received == ["ab", "cd", "ef"]
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply(status=401), "auth"),
        (Reply(content=""), "empty"),
        (Reply(raw_body="nope"), "bad_response"),
        (Reply(content="late", delay=1.0), "timeout"),
    ],
)
def test_astream_failures(fake_openai: FakeOpenAIServer, reply: Reply, kind: str) -> None:
    fake_openai.script(reply)
    fails(kind, run, collect(endpoint(fake_openai, timeout=0.3)))


def test_astream_aclose_closes_the_upstream_connection(fake_openai: FakeOpenAIServer) -> None:
    total = 200
    fake_openai.script(Reply(content="x" * total, chunk_size=1, chunk_delay=0.01))

    async def take_two() -> list[str]:
        stream = astream(endpoint(fake_openai), USER)
        pieces = [await stream.__anext__(), await stream.__anext__()]
        await stream.aclose()
        return pieces

    assert run(take_two()) == ["x", "x"]
    wait_for(lambda: fake_openai.disconnects == 1)
    request = fake_openai.requests[-1]
    assert request.disconnected
    assert request.chunks_sent < 20  # the server stopped within a few chunks, not after 200


def test_astream_cancellation_closes_the_upstream_connection(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script(Reply(content="abc", chunk_size=1, chunk_delay=3.0))

    async def cancel_midway() -> None:
        first = asyncio.Event()

        async def consume() -> None:
            async for _ in astream(endpoint(fake_openai), USER):
                first.set()

        task = asyncio.ensure_future(consume())
        # Cancel once the first delta is in (the second is 3 s away); waiting on the event
        # rather than a fixed sleep keeps a slow first import of openai from flipping this.
        await asyncio.wait_for(first.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(cancel_midway())
    wait_for(lambda: fake_openai.disconnects == 1, timeout=10.0)
    assert fake_openai.requests[-1].chunks_sent == 1  # seen while waiting, before the 2nd write


def wait_for(condition: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


# -- failures that never left this process are ours -------------------------------------------


@pytest.mark.parametrize(
    ("changes", "messages", "named"),
    [
        ({}, [{"role": "user", "content": "plot \ud800 this"}], "U+D800"),
        ({"temperature": float("nan")}, USER, "temperature"),
        ({"temperature": float("inf")}, USER, "temperature"),
        ({"timeout": 0.0}, USER, "timeout"),
        ({"max_tokens": 0}, USER, "max_tokens"),
        ({"api_key": "sk-line\nbreak-0123"}, USER, "api_key"),
        ({"extra_headers": (("Bad Name", "v"),)}, USER, "extra_headers"),
    ],
)
def test_a_request_that_cannot_be_sent_is_reported_as_ours(
    fake_openai: FakeOpenAIServer, changes, messages, named
) -> None:
    ep = endpoint(fake_openai, **changes)
    with pytest.raises(LLMError) as caught:
        complete(ep, messages)
    text = str(caught.value)
    assert caught.value.kind == "bad_request" and "\n" not in text
    assert text.startswith(f"Nothing was sent to {ep.host}") and named in text, text
    assert "broken body" not in text and "Could not reach" not in text
    with pytest.raises(LLMError, match="Nothing was sent"):
        run(_drain(astream(ep, messages)))
    assert fake_openai.requests == []


async def _drain(stream: Any) -> list[str]:
    return [piece async for piece in stream]


def test_one_retry_policy_decides_every_wait() -> None:
    from chapyter_ext.llm.retry import Progress, wait_or_raise

    ep = Endpoint(base_url="http://127.0.0.1:9/v1", max_retries=2)
    busy = LLMError("server", "busy")
    assert wait_or_raise(busy, ep, 1, Progress()) == 0.5
    assert wait_or_raise(busy, ep, 2, Progress()) == 1.0
    with pytest.raises(LLMError, match="busy"):
        wait_or_raise(busy, ep, 3, Progress())  # retries used up
    told = LLMError("rate_limit", "slow")
    told.retry_after = 999.0
    assert wait_or_raise(told, ep, 1, Progress()) == 30.0  # capped
    with pytest.raises(LLMError):
        wait_or_raise(busy, ep, 1, Progress(text=["x"]))  # text reached the caller
    with pytest.raises(LLMError):
        wait_or_raise(LLMError("auth", "no"), ep, 1, Progress())  # not transient
