"""Request bodies are refused on their headers, before being read: no user is a 403,
a declared length above the route's limit a 413, a chunked body cut off as it passes it; all
over a raw socket to the real server, counting what was sent before the answer came."""

from __future__ import annotations

import asyncio

import pytest

from chapyter_ext.agent import protocol as agent_protocol
from chapyter_ext.chat import MAX_ATTACHMENTS_BODY_BYTES
from chapyter_ext.server import handlers
from chapyter_ext.server.base_handler import MAX_BODY_BYTES
from chapyter_ext.server.complete_handlers import completion_handlers
from chapyter_ext.server.refusals import LINGER_BYTES

from .raw_http import PROMPT, json_headers

SIXTY_MB = 60 * 1024 * 1024
#: The chat and agent routes also admit the base64 of the largest allowed attachments.
WITH_ATTACHMENTS = MAX_BODY_BYTES + MAX_ATTACHMENTS_BODY_BYTES
#: Every POST route, with the limit its body is held to.
POST_ROUTES = [
    ("chapyter-ext/context", MAX_BODY_BYTES),
    ("chapyter-ext/chat", WITH_ATTACHMENTS),
    ("chapyter-ext/chat/stop", MAX_BODY_BYTES),
    ("chapyter-ext/agent", WITH_ATTACHMENTS),
    ("chapyter-ext/agent/result", agent_protocol.MAX_RESULT_BODY_BYTES),
    ("chapyter-ext/agent/trial", MAX_BODY_BYTES),
    ("chapyter-ext/fix", MAX_BODY_BYTES),
    ("chapyter-ext/fix/trial", MAX_BODY_BYTES),
    ("chapyter-ext/history/new", MAX_BODY_BYTES),
    ("chapyter-ext/complete", MAX_BODY_BYTES),
    ("chapyter-ext/v1/chat/completions", MAX_BODY_BYTES),
    ("chapyter-ext/v1/completions", MAX_BODY_BYTES),
]


# -- no user: refused on the headers --------------------------------------------------------


@pytest.mark.parametrize("route", [r for r, _ in POST_ROUTES])
async def test_an_unauthenticated_60mb_post_is_refused_before_its_body(raw, fake, route):
    """Only the headers are sent: the 403 comes anyway, says the connection closes, and the
    server closes it, so it reads none of the 60 MB it was promised (it once waited for
    all of it; with ``Connection: close``, see test_refusals.py)."""
    connection = await raw()
    await connection.head("POST", route, json_headers(SIXTY_MB))
    status, headers, body = await connection.response()
    assert status == 403 and body["error"]["kind"] == "forbidden"
    assert headers["content-type"].startswith("application/json")
    assert headers["connection"] == "close"
    assert await connection.rest() == b""
    assert fake.requests == []


async def test_a_60mb_body_streamed_without_a_token_is_not_read(raw, fake):
    """Sent for real, as fast as the socket takes it: the server answers, drops at most
    ``LINGER_BYTES`` more, reads nothing after that and hangs up (``refusals.linger``), so the
    client can only push that and what the kernel's socket buffers hold."""
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat", json_headers(SIXTY_MB))
    piece = b"x" * (256 * 1024)
    refused = False
    try:
        while connection.sent < SIXTY_MB:
            await asyncio.wait_for(connection.send(piece), PROMPT)
    except (ConnectionError, asyncio.TimeoutError):
        refused = True  # reset by the server, or its buffers full and nobody reading
    assert refused
    assert connection.sent < LINGER_BYTES + 23 * 1024 * 1024, connection.sent
    assert await connection.closed()


@pytest.mark.chapyter_config({"ServerApp": {"allow_unauthenticated_access": True}})
async def test_no_user_is_refused_even_where_the_server_allows_anonymous_access(raw, fake):
    """jupyter_server then leaves the 403 to ``@authenticated`` on the verb, which would only
    run after the body: our prepare() refuses on the headers."""
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat", json_headers(SIXTY_MB))
    status, _, body = await connection.response()
    assert (status, body["error"]["kind"]) == (403, "forbidden")


async def test_a_cors_preflight_needs_no_user(http_server_client, jp_base_url):
    """``OPTIONS`` is jupyter_server's, marked ``@allow_unauthenticated``: still answered."""
    response = await http_server_client.fetch(
        f"{jp_base_url}chapyter-ext/chat",
        method="OPTIONS",
        headers={"Access-Control-Request-Headers": "content-type"},
    )
    assert response.code == 200
    assert "POST" in response.headers["Access-Control-Allow-Methods"]


# -- too large: a 413 on the headers, or as a chunked body grows ------------------------------


@pytest.mark.parametrize(("route", "limit"), POST_ROUTES)
async def test_a_declared_length_above_the_limit_is_a_413_before_the_body(
    raw, fake, jp_auth_header, route, limit
):
    connection = await raw()
    await connection.head("POST", route, json_headers(limit + 1, jp_auth_header))
    status, headers, body = await connection.response()
    assert status == 413
    assert headers["content-type"].startswith("application/json")
    assert body == {
        "error": {"kind": "bad_request", "message": f"The body is larger than {limit} bytes."}
    }
    assert headers["connection"] == "close"
    assert await connection.rest() == b""
    assert fake.requests == []


async def test_a_route_allowing_more_reads_a_body_above_the_usual_limit(get_json):
    """``agent/result`` carries PNGs: 5 MB is read and judged (no such turn), not refused."""
    body = {"message_id": "m", "step_id": "s", "status": "skipped", "pad": "x" * (5 << 20)}
    status, data = await get_json("chapyter-ext", "agent", "result", method="POST", body=body)
    assert (status, data["error"]["kind"]) == (404, "not_found")


async def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(
    raw, fake, jp_auth_header, monkeypatch
):
    """No length is declared: the 413 comes with the piece that passes the limit, and the
    server stops reading there (before, it read the whole body, then said 400)."""
    monkeypatch.setattr(handlers.StopHandler, "max_body_bytes", 1000)
    connection = await raw()
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    await connection.head("POST", "chapyter-ext/chat/stop", {**headers, **jp_auth_header})
    await connection.chunk(b'{"message_id": "')
    answer = None
    for _ in range(40):  # 10 kB in all, if nobody stops it
        await connection.chunk(b"x" * 256)
        try:
            answer = await connection.response(timeout=0.5)
            break
        except asyncio.TimeoutError:
            continue
    assert answer is not None, f"no answer after {connection.sent} bytes"
    status, headers, body = answer
    assert (status, body["error"]["kind"]) == (413, "bad_request")
    assert body["error"]["message"] == "The body is larger than 1000 bytes."
    assert headers["connection"] == "close"
    assert connection.sent <= 1000 + 2 * 270
    assert await connection.closed()


async def test_a_chunked_body_within_the_limit_is_read_whole(raw, jp_auth_header):
    connection = await raw()
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    await connection.head("POST", "chapyter-ext/chat/stop", {**headers, **jp_auth_header})
    for piece in (b'{"message', b'_id": "ab', b"c\xc3", b'\xa9"}', b""):
        await connection.chunk(piece)
    status, _, body = await connection.response()
    assert (status, body) == (200, {"message_id": "abc\u00e9", "stopped": False})


async def test_an_ordinary_body_still_works_on_every_kind_of_route(get_json):
    status, body = await get_json(
        "chapyter-ext", "history", "new", method="POST", body={"notebook": "a.ipynb"}
    )
    assert status == 200 and body["messages"] == []
    status, body = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": {"path": "a.ipynb"}}
    )
    assert status == 200 and "text" in body
    status, body = await get_json(
        "chapyter-ext", "complete", method="POST", body={"prefix": 1, "suffix": ""}
    )
    assert status == 400 and body["error"]["kind"] == "bad_request"  # read, then judged


def test_every_route_streams_its_body():
    for _, handler in handlers.handlers() + completion_handlers():
        assert getattr(handler, "_stream_request_body", False), handler


# -- the order: user, then XSRF, then size ----------------------------------------------------


async def test_xsrf_is_still_enforced_before_the_size(
    raw, http_server_client, jp_serverapp, jp_base_url
):
    """A browser session (a login cookie, no token) must send the XSRF header on a POST:
    without it, 403 even for a too-large body; with it, the size is judged (413)."""
    token = jp_serverapp.identity_provider.token
    login = await http_server_client.fetch(f"{jp_base_url}chapyter-ext/config?token={token}")
    cookie = "; ".join(c.split(";", 1)[0] for c in login.headers.get_list("Set-Cookie"))
    assert cookie, "token login set no cookie"

    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat", {**json_headers(SIXTY_MB), "Cookie": cookie})
    status, _, body = await connection.response()
    assert status == 403 and "_xsrf" in body["error"]["message"]

    xsrf = {"Cookie": f"{cookie}; _xsrf=ours", "X-XSRFToken": "ours"}
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat", {**json_headers(SIXTY_MB), **xsrf})
    status, _, body = await connection.response()
    assert status == 413

    ordinary = b'{"message_id": "m"}'
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat/stop", {**json_headers(len(ordinary)), **xsrf})
    await connection.send(ordinary)
    status, _, body = await connection.response()
    assert (status, body) == (200, {"message_id": "m", "stopped": False})
