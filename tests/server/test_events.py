"""chapyter_ext.chat.events: the SSE wire format, and redaction of a reply that streams."""

from __future__ import annotations

import random

import pytest

from chapyter_ext.chat.events import (
    AgentDone,
    AgentStart,
    Done,
    Error,
    Heartbeat,
    Notice,
    Start,
    Step,
    StepDone,
    Token,
    TokenRedactor,
    encode,
)
from chapyter_ext.redact import Redactor
from chapyter_ext.testing.sse import SSEReader

KEY = "sk-test-SECRET-MARKER-123"
SPACED = "open sesame please"  # a verbatim secret may hold spaces


def decode(raw: bytes) -> tuple[str, dict]:
    """The one event ``raw`` holds: an ``event:`` line and one ``data:`` line."""
    assert raw.endswith(b"\n\n") and raw.count(b"\n") == 3
    sse = SSEReader()
    sse.feed(raw)
    [(name, data, _)] = sse.events
    return name, data


def test_each_event_is_one_redacted_line_pair():
    r = Redactor([KEY])
    assert decode(encode(Start("c" * 32, "f" * 32, f"model {KEY}"), r)) == (
        "start",
        {"chat_id": "c" * 32, "message_id": "f" * 32, "model": "model <redacted>"},
    )
    assert decode(encode(Token(f"a\nb {KEY}"), r)) == ("token", {"text": "a\nb <redacted>"})
    assert decode(encode(Done("1" * 32, KEY, "stopped"), r))[1]["text"] == "<redacted>"
    assert decode(encode(Error("auth", f"bad\nkey {KEY}"), r)) == (
        "error",
        {"kind": "auth", "message": "bad key <redacted>"},
    )
    assert decode(encode(Notice("kept\nas x"), r)) == ("notice", {"message": "kept as x"})
    assert encode(Heartbeat(), r) == b": keepalive\n\n"
    # A lone surrogate cannot break the stream.
    assert decode(encode(Token("a\ud800b"), r))[1]["text"] == "a\ufffdb"


def test_agent_events_redact_every_nested_string():
    r = Redactor([KEY])
    assert decode(encode(AgentStart("c" * 32, "f" * 32, "m", "ask", True, False), r)) == (
        "start",
        {
            "chat_id": "c" * 32,
            "message_id": "f" * 32,
            "model": "m",
            "policy": "ask",
            "tools": True,
            "images": False,
        },
    )
    step = Step("step-1", "run_code", title="ran code", code=f"k = '{KEY}'", reasons=(KEY,))
    name, data = decode(encode(step, r))
    assert name == "step"
    assert data == {
        "step_id": "step-1",
        "kind": "run_code",
        "op": "run_cell",
        "runs": "kernel",
        "title": "ran code",
        "code": "k = '<redacted>'",
        "needs_approval": False,
        "reasons": ["<redacted>"],
    }  # absent fields (purpose, cell) are left out
    call = Step(
        "step-2",
        "db__query",
        op="call",
        runs="server",
        title="db · query",
        server="db",
        arguments={"sql": f"select '{KEY}'", "nested": [{"k": KEY}]},
    )
    data = decode(encode(call, r))[1]
    assert data["arguments"] == {"sql": "select '<redacted>'", "nested": [{"k": "<redacted>"}]}
    done = decode(encode(StepDone("step-2", "ok", "ok", f"row: {KEY}"), r))[1]
    assert done == {
        "step_id": "step-2",
        "outcome": "ok",
        "status": "ok",
        "result": "row: <redacted>",
    }
    assert decode(encode(StepDone("step-1", f"Out: {KEY}"), r))[1]["outcome"] == "Out: <redacted>"
    steps = ({"step_id": "step-1", "code": KEY, "cell_id": "c", "outcome": "ok"},)
    name, data = decode(encode(AgentDone("1" * 32, "42", "complete", steps, ""), r))
    assert name == "done"
    assert data["steps"] == [
        {"step_id": "step-1", "code": "<redacted>", "cell_id": "c", "outcome": "ok"}
    ]
    assert data["halt"] == ""


def stream(text: str, cuts: list[int], redactor: Redactor) -> list[str]:
    tokens = TokenRedactor(redactor)
    pieces, last = [], 0
    for cut in [*cuts, len(text)]:
        pieces.append(tokens.push(text[last:cut]))
        last = cut
    pieces.append(tokens.flush())
    return pieces


@pytest.mark.parametrize("seed", range(40))
def test_a_secret_split_anywhere_never_leaves_whole_or_in_halves(seed):
    rng = random.Random(seed)
    r = Redactor([KEY, SPACED])
    text = f'Use {KEY} here, say {SPACED}; and password = "hunter22" then sk-abc{KEY}.'
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 25)))
    pieces = stream(text, cuts, r)
    out = "".join(pieces)
    for secret in (KEY, SPACED, "hunter22"):
        assert secret not in out
        for piece in pieces:  # no piece ends with a secret's beginning that the next completes
            assert not any(piece.endswith(secret[:k]) for k in range(4, len(secret)))
    assert out.startswith("Use <redacted> here, say <redacted>;")


def test_plain_words_stream_as_they_end():
    r = Redactor([KEY])
    tokens = TokenRedactor(r)
    assert tokens.push("Hello") == ""  # could still become a key
    assert tokens.push(" wor") == "Hello "
    assert tokens.push("ld!\n") == "world!\n"
    assert tokens.push("s") == ""  # the start of "sk-…"
    assert tokens.push("k-test-SECRET") == ""
    assert tokens.push("-MARKER-123 ok") == "<redacted> "
    assert tokens.flush() == "ok"
