"""The loopback OpenAI-compatible server, driven by the real ``openai`` SDK and raw HTTP."""

from __future__ import annotations

import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from chapyter_ext.testing.openai_server import DEFAULT_CONTENT, FakeOpenAIServer, Reply
from chapyter_ext.testing.sse import DONE, SSEReader

USER = [{"role": "user", "content": "say hi"}]


def sdk(server: FakeOpenAIServer, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, **kwargs)


def ask(client: openai.OpenAI, text: str = "say hi", **kwargs: Any) -> str:
    messages = [{"role": "user", "content": text}]
    answer = client.chat.completions.create(model="fake-model", messages=messages, **kwargs)
    return answer.choices[0].message.content


def control(server: FakeOpenAIServer, path: str, body: Any = None) -> tuple[int, Any]:
    """Call a /_control endpoint the way a browser test in another process would."""
    url = server.base_url.removesuffix("/v1") + path
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def raw_request(server: FakeOpenAIServer, body: dict) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request(
        "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )
    return conn.getresponse()


def read_sse(body: bytes) -> SSEReader:
    sse = SSEReader()
    sse.feed(body)
    return sse


def test_plain_completion_through_the_sdk(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("print(1)")
    answer = sdk(fake_openai).chat.completions.create(model="fake-model", messages=USER)
    assert answer.object == "chat.completion"
    assert answer.choices[0].message.content == "print(1)"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == "fake-model"


def test_streamed_completion_arrives_in_chunks(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="abcdefghij", chunk_size=4, delay=0.05))
    before = time.time()
    chunks = list(
        sdk(fake_openai).chat.completions.create(model="fake-model", messages=USER, stream=True)
    )
    # Wall-clock time of the first content chunk, for the first-token benchmark.
    assert before + 0.05 <= fake_openai.requests[-1].first_chunk_at <= time.time()
    assert [c.object for c in chunks] == ["chat.completion.chunk"] * 4
    assert [c.choices[0].delta.content for c in chunks[:3]] == ["abcd", "efgh", "ij"]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert fake_openai.requests[-1].chunks_sent == 3


def test_stream_wire_format_is_sse_ending_with_done(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="hi"))
    response = raw_request(fake_openai, {"model": "m", "messages": USER, "stream": True})
    assert response.getheader("Content-Type").startswith("text/event-stream")
    raw = response.read()
    sse = read_sse(raw)
    # Unnamed data-only events, no comments, ending with the [DONE] marker.
    assert set(sse.names) == {"message"} and sse.comments == 0 and raw.endswith(b"\n\n")
    assert sse.all("message")[-1] == DONE
    assert sse.all("message")[-2]["choices"][0]["finish_reason"] == "stop"


def test_models_list(fake_openai: FakeOpenAIServer) -> None:
    with FakeOpenAIServer(models=("a", "b")) as server:
        page = sdk(server).models.list()
    assert [m.id for m in page.data] == ["a", "b"]
    assert [m.id for m in sdk(fake_openai).models.list().data] == ["fake-model"]


def test_requests_are_recorded(fake_openai: FakeOpenAIServer) -> None:
    client = sdk(fake_openai, default_headers={"X-Title": "chapyter"})
    ask(client, "hello", temperature=0.5)
    client.models.list()
    chat, models = fake_openai.requests
    assert (chat.method, chat.path) == ("POST", "/v1/chat/completions")
    assert chat.headers["authorization"] == "Bearer sk-test"
    assert chat.headers["x-title"] == "chapyter"
    assert chat.model == "fake-model"
    assert chat.messages == [{"role": "user", "content": "hello"}]
    assert chat.body["temperature"] == 0.5
    assert (chat.source, chat.reply.content) == ("default", DEFAULT_CONTENT)
    assert (models.method, models.path, models.body, models.reply) == (
        "GET",
        "/v1/models",
        None,
        None,
    )


def test_queue_order_routes_and_default(fake_openai: FakeOpenAIServer) -> None:
    client = sdk(fake_openai)
    fake_openai.script("first", Reply(content="second"), {"content": "third"})
    fake_openai.route("plot", "a plot")
    assert ask(client, "one") == "first"
    assert ask(client, "please plot x") == "a plot"  # routes win over the queue...
    assert ask(client, "two") == "second"  # ...and do not consume it
    assert ask(client, "three") == "third"
    assert ask(client, "four") == DEFAULT_CONTENT
    assert ask(client, "plot again") == "a plot"  # routes persist
    fake_openai.route("plot", "another plot")  # the same `when` replaces the rule
    assert ask(client, "plot") == "another plot"
    assert [r.source for r in fake_openai.requests] == [
        "script",
        "route:plot",
        "script",
        "script",
        "default",
        "route:plot",
        "route:plot",
    ]


def test_routes_match_the_last_user_message_only(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.route("plot", "a plot")
    messages = [
        {"role": "user", "content": "plot"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "now a table"}]},
    ]
    answer = sdk(fake_openai).chat.completions.create(model="fake-model", messages=messages)
    assert answer.choices[0].message.content == DEFAULT_CONTENT


def test_default_reply_and_clear(fake_openai: FakeOpenAIServer) -> None:
    client = sdk(fake_openai)
    fake_openai.default_reply = Reply(content="custom default")
    fake_openai.script("queued")
    fake_openai.route("x", "routed")
    ask(client, "y")
    fake_openai.clear()
    assert (fake_openai.requests, fake_openai.pending) == ([], 0)
    assert ask(client, "x") == DEFAULT_CONTENT


def test_error_reply_uses_openai_error_shape(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(status=429, error="Slow down.", headers={"Retry-After": "7"}))
    response = raw_request(fake_openai, {"model": "m", "messages": USER, "stream": True})
    assert response.status == 429
    assert response.getheader("Retry-After") == "7"
    error = json.loads(response.read())["error"]
    assert error["message"] == "Slow down."
    assert error["code"] == "rate_limit_exceeded"
    assert set(error) == {"message", "type", "param", "code"}


def test_raw_body_is_sent_verbatim(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(raw_body="{not json"))
    response = raw_request(fake_openai, {"model": "m", "messages": USER})
    assert (response.status, response.getheader("Content-Type")) == (200, "application/json")
    assert response.read() == b"{not json"


def test_drop_closes_without_a_response(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(drop=True))
    with pytest.raises(http.client.RemoteDisconnected):
        raw_request(fake_openai, {"model": "m", "messages": USER})
    assert fake_openai.requests[-1].reply.drop


def test_cut_after_leaves_the_stream_incomplete(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="x" * 100, chunk_size=10, cut_after=3))
    response = raw_request(fake_openai, {"model": "m", "messages": USER, "stream": True})
    with pytest.raises(http.client.IncompleteRead) as caught:
        response.read()
    assert caught.value.partial.count(b"data: ") == 3
    assert fake_openai.requests[-1].chunks_sent == 3


def test_keep_alive_reuses_one_connection(fake_openai: FakeOpenAIServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake_openai.port, timeout=5)
    sockets = []
    for _ in range(3):
        conn.request("GET", "/v1/models")
        response = conn.getresponse()
        assert response.status == 200
        response.read()
        sockets.append(conn.sock)
    assert sockets[0] is sockets[1] is sockets[2]
    conn.close()


def test_delay_is_cut_short_by_stop() -> None:
    server = FakeOpenAIServer().start()
    server.script(Reply(content="late", delay=30))
    errors: list[BaseException] = []

    def call() -> None:
        try:
            ask(sdk(server, timeout=10))
        except BaseException as err:
            errors.append(err)

    thread = threading.Thread(target=call)
    thread.start()
    while not server.requests:
        time.sleep(0.005)
    started = time.monotonic()
    server.stop()
    thread.join(timeout=5)
    assert time.monotonic() - started < 2
    assert isinstance(errors[0], openai.APIConnectionError)


def test_unknown_path_is_a_404_in_openai_shape(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(openai.NotFoundError):
        sdk(fake_openai).embeddings.create(model="fake-model", input="x")


def test_control_endpoints_drive_the_server(fake_openai: FakeOpenAIServer) -> None:
    client = sdk(fake_openai)
    assert control(fake_openai, "/_control/script", {"replies": ["one", {"content": "two"}]}) == (
        200,
        {"ok": True, "pending": 2},
    )
    status, _ = control(fake_openai, "/_control/route", {"when": "plot", "reply": {"content": "p"}})
    assert status == 200
    assert control(fake_openai, "/_control/default", {"reply": "dflt"})[0] == 200
    assert [ask(client, t) for t in ("a", "plot", "b", "c")] == ["one", "p", "two", "dflt"]

    status, data = control(fake_openai, "/_control/requests")
    assert status == 200
    assert [r["body"]["messages"][-1]["content"] for r in data["requests"]] == [
        "a",
        "plot",
        "b",
        "c",
    ]
    assert data["requests"][1]["source"] == "route:plot"
    assert data["requests"][1]["reply"]["content"] == "p"
    assert all(r["path"].startswith("/v1/") for r in data["requests"])  # control calls are not

    assert control(fake_openai, "/_control/reset", {}) == (200, {"ok": True})
    assert control(fake_openai, "/_control/requests") == (200, {"requests": []})
    assert ask(client, "plot") == DEFAULT_CONTENT


def test_control_rejects_bad_input(fake_openai: FakeOpenAIServer) -> None:
    status, data = control(fake_openai, "/_control/script", {"replies": [{"colour": "red"}]})
    assert status == 400
    assert "colour" in data["error"]["message"]
    assert control(fake_openai, "/_control/route", {"reply": "x"})[0] == 400
    assert control(fake_openai, "/_control/nope", {})[0] == 404
    assert fake_openai.pending == 0


def test_cli_serves_until_sigterm(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    args = ["--port-file", str(port_file), "--model", "m1", "--model", "m2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "chapyter_ext.testing.openai_server", *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline().strip()
        port = int(port_file.read_text())
        assert line == f"listening on http://127.0.0.1:{port}/v1"
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
        assert [m.id for m in client.models.list().data] == ["m1", "m2"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_round_trip_latency(fake_openai: FakeOpenAIServer, capsys: pytest.CaptureFixture) -> None:
    """Non-streamed SDK round trips should take a few ms: a Nagle/delayed-ACK stall would show
    as ~40 ms. Timings are printed, not asserted (the machine is noisy)."""
    client = sdk(fake_openai)
    ask(client)  # warm up: connection, SDK lazy imports
    timings = []
    for _ in range(30):
        started = time.perf_counter()
        ask(client)
        timings.append((time.perf_counter() - started) * 1000)
    with capsys.disabled():
        print(
            f"\n[fake OpenAI server] non-streamed SDK round trip: median "
            f"{statistics.median(timings):.1f} ms, max {max(timings):.1f} ms over 30 calls"
        )


# -- playing an agent: tool calls --------------------------------------------------------------

RUN_CODE = {"name": "run_code", "arguments": {"code": "print(1 / 0)", "purpose": "try"}}
TOOLS = [{"type": "function", "function": {"name": "run_code", "parameters": {"type": "object"}}}]


def test_tool_calls_in_a_plain_completion(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(tool_calls=[RUN_CODE, {"name": "list_variables", "id": "call_x"}]))
    answer = sdk(fake_openai).chat.completions.create(
        model="fake-model", messages=USER, tools=TOOLS
    )
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    first, second = choice.message.tool_calls
    assert (first.type, first.function.name) == ("function", "run_code")
    assert json.loads(first.function.arguments) == RUN_CODE["arguments"]
    assert first.id.startswith("call_fake_")
    assert (second.id, second.function.name, second.function.arguments) == (
        "call_x",
        "list_variables",
        "{}",
    )
    assert fake_openai.requests[-1].body["tools"] == TOOLS  # the full body is recorded


def test_tool_calls_stream_as_openai_does(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script(Reply(content="Trying.", chunk_size=8, tool_calls=[RUN_CODE, RUN_CODE]))
    response = raw_request(
        fake_openai, {"model": "m", "messages": USER, "stream": True, "tools": TOOLS}
    )
    events = read_sse(response.read()).all("message")
    assert events[-1] == DONE
    chunks = [e["choices"][0] for e in events[:-1]]
    assert chunks[0]["delta"] == {"role": "assistant", "content": "Trying."}
    assert chunks[-1] == {"index": 0, "delta": {}, "finish_reason": "tool_calls", "logprobs": None}
    calls = [c["delta"]["tool_calls"][0] for c in chunks[1:-1]]
    assert all(list(c["delta"]) == ["tool_calls"] for c in chunks[1:-1])
    heads = [c for c in calls if "id" in c]
    assert [(h["index"], h["function"]) for h in heads] == [
        (0, {"name": "run_code", "arguments": ""}),
        (1, {"name": "run_code", "arguments": ""}),
    ]
    assert heads[0]["id"] != heads[1]["id"]
    for index in (0, 1):
        pieces = [c["function"]["arguments"] for c in calls if c["index"] == index]
        assert len(pieces) > 3 and all(len(p) <= 8 for p in pieces)  # arguments in pieces
        assert json.loads("".join(pieces)) == RUN_CODE["arguments"]


def test_tool_calls_through_the_control_api(fake_openai: FakeOpenAIServer) -> None:
    """What a browser test does: script run -> run -> answer, and a never-stopping default."""
    replies = [
        {"content": "First try.", "tool_calls": [RUN_CODE]},
        {"tool_calls": [{"name": "run_code", "arguments": '{"code": "print(2)"}'}]},
        "The value is 2.",
    ]
    assert control(fake_openai, "/_control/script", {"replies": replies})[0] == 200
    client = sdk(fake_openai)

    def call() -> Any:
        return client.chat.completions.create(model="m", messages=USER, tools=TOOLS).choices[0]

    assert call().message.tool_calls[0].function.name == "run_code"
    assert json.loads(call().message.tool_calls[0].function.arguments) == {"code": "print(2)"}
    assert call().message.content == "The value is 2."
    assert (
        control(fake_openai, "/_control/default", {"reply": {"tool_calls": [RUN_CODE]}})[0] == 200
    )
    assert [call().finish_reason for _ in range(3)] == ["tool_calls"] * 3
    data = control(fake_openai, "/_control/requests")[1]
    assert data["requests"][0]["body"]["tools"] == TOOLS
    assert data["requests"][0]["reply"]["tool_calls"] == [RUN_CODE]


def test_reject_tools_answers_400_only_to_requests_with_tools(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script(Reply(content="fenced", reject_tools=True))
    client = sdk(fake_openai)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
    assert caught.value.body["message"] == "tools are not supported"
    assert fake_openai.pending == 1  # refused, not answered: still queued
    assert ask(client) == "fenced"
    assert fake_openai.pending == 0
    fake_openai.default_reply = Reply(content="dflt", reject_tools=True)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="m", messages=USER, tools=TOOLS, stream=True)
    assert ask(client) == "dflt"


@pytest.mark.parametrize(
    "calls",
    [
        [{"arguments": {}}],
        [{"name": "run_code", "arguments": 3}],
        [{"name": "run_code", "colour": "red"}],
        ["run_code"],
    ],
)
def test_control_rejects_bad_tool_calls(fake_openai: FakeOpenAIServer, calls: list) -> None:
    status, data = control(fake_openai, "/_control/script", {"replies": [{"tool_calls": calls}]})
    assert status == 400 and "tool call" in data["error"]["message"]
    assert fake_openai.pending == 0
