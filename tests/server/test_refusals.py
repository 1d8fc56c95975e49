"""A refused request leaves its connection usable, over a raw socket to the real
server: a refusal with a small body (or none) is answered once that body is read, and the next
request on the same connection is answered; a larger body is never read, and the answer says
``Connection: close`` before the server closes its side without a reset, so a client (a proxy
that reuses connections) reads the answer and opens a new connection. The same through
JupyterHub's proxy: tests/hub/test_hub_refusals.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chapyter_ext.server import handlers
from chapyter_ext.server.refusals import DRAIN_BYTES

from .raw_http import Raw, json_headers
from .test_bodies import SIXTY_MB

#: A request every test sends after the refused one: authenticated, with a body, answered 200.
GOOD = b'{"message_id": "m"}'
BAD_KERNEL = {"Authorization": "Bearer chapyter-kernel-not-a-kernel"}


async def good_request(connection: Raw, auth: dict[str, str]) -> tuple[int, Any]:
    await connection.head("POST", "chapyter-ext/chat/stop", json_headers(len(GOOD), auth))
    await connection.send(GOOD)
    status, _, body = await connection.response()
    return status, body


def chunked() -> dict[str, str]:
    return {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}


# -- a small body (or none): read, refused, and the connection goes on ----------------------------

REFUSED = [
    # (what, method, route, headers, body, status, kind); no user unless said.
    ("GET, no body", "GET", "chapyter-ext/config", {}, None, 403, "forbidden"),
    ("GET of history", "GET", "chapyter-ext/history?notebook=a.ipynb", {}, None, 403, "forbidden"),
    ("POST, a chat message", "POST", "chapyter-ext/chat", {}, b'{"message": "hi"}', 403,
     "forbidden"),
    ("POST, no body", "POST", "chapyter-ext/agent", {}, b"", 403, "forbidden"),
    ("a kernel's revoked credential", "POST", "chapyter-ext/v1/chat/completions", BAD_KERNEL,
     b'{"model": "m", "messages": []}', 403, "forbidden"),
    ("a kernel's revoked credential, GET", "GET", "chapyter-ext/v1/models", BAD_KERNEL, None, 403,
     "forbidden"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "route", "headers", "body", "status", "kind"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
async def test_after_a_refusal_the_same_connection_answers_the_next_request(
    raw, fake, jp_auth_header, method, route, headers, body, status, kind
):
    connection = await raw()
    sent = {**headers, **(json_headers(len(body)) if body is not None else {})}
    await connection.head(method, route, sent)
    if body:
        await connection.send(body)
    got, answer_headers, answer = await connection.response()
    assert (got, answer["error"]["kind"]) == (status, kind)
    assert "connection" not in answer_headers  # kept alive (HTTP/1.1's default)
    assert await good_request(connection, jp_auth_header) == (
        200,
        {"message_id": "m", "stopped": False},
    )
    assert fake.requests == []


async def test_a_small_chunked_body_of_a_refused_request_is_read_too(raw, jp_auth_header):
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat", chunked())
    for piece in (b'{"message": ', b'"hi"}', b""):
        await connection.chunk(piece)
    status, headers, body = await connection.response()
    assert (status, body["error"]["kind"], "connection" in headers) == (403, "forbidden", False)
    assert (await good_request(connection, jp_auth_header))[0] == 200


async def test_a_small_body_over_a_small_limit_is_a_413_that_keeps_the_connection(
    raw, jp_auth_header, monkeypatch
):
    monkeypatch.setattr(handlers.StopHandler, "max_body_bytes", 1000)
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat/stop", json_headers(1001, jp_auth_header))
    await connection.send(b" " * 1001)
    status, headers, body = await connection.response()
    assert (status, body["error"]["message"]) == (413, "The body is larger than 1000 bytes.")
    assert "connection" not in headers
    assert (await good_request(connection, jp_auth_header))[0] == 200


async def test_a_refused_xsrf_post_keeps_the_connection(
    raw, http_server_client, jp_serverapp, jp_base_url
):
    """jupyter_server's own 403 (a login cookie without the XSRF header), from our prepare."""
    token = jp_serverapp.identity_provider.token
    login = await http_server_client.fetch(f"{jp_base_url}chapyter-ext/config?token={token}")
    cookie = "; ".join(c.split(";", 1)[0] for c in login.headers.get_list("Set-Cookie"))
    connection = await raw()
    body = b'{"message_id": "m"}'
    await connection.head(
        "POST", "chapyter-ext/chat/stop", json_headers(len(body), {"Cookie": cookie})
    )
    await connection.send(body)
    status, headers, answer = await connection.response()
    assert status == 403 and "_xsrf" in answer["error"]["message"]
    assert "connection" not in headers
    xsrf = {"Cookie": f"{cookie}; _xsrf=ours", "X-XSRFToken": "ours"}
    assert (await good_request(connection, xsrf))[0] == 200


# -- a large body: never read, the close said, and no reset ----------------------------------------


@pytest.mark.parametrize(
    ("route", "auth", "status"),
    [
        ("chapyter-ext/chat", False, 403),
        ("chapyter-ext/v1/chat/completions", "kernel", 403),
        ("chapyter-ext/chat", True, 413),
    ],
    ids=["no user", "a kernel's revoked credential", "too large"],
)
async def test_a_large_body_is_refused_with_connection_close_and_a_clean_end(
    raw, fake, jp_auth_header, route, auth, status
):
    """The headers of a 60 MB body and its first bytes, sent at once as a proxy sends them:
    the answer says the connection closes; what the client sends meanwhile is dropped, so
    the answer is read and the server's end of the stream follows it, with no reset (closing
    a socket with unread bytes in it resets the connection, and a proxy answers 503)."""
    headers = jp_auth_header if auth is True else BAD_KERNEL if auth == "kernel" else {}
    connection = await raw()
    await connection.head("POST", route, json_headers(SIXTY_MB, headers))
    await connection.send(b"x" * (256 * 1024))  # the body goes on before the answer is read
    got, answer_headers, _ = await connection.response()
    assert got == status
    assert answer_headers["connection"] == "close"
    await connection.send(b"x" * (256 * 1024))  # and after it
    assert await connection.rest() == b""
    assert fake.requests == []


async def test_a_large_chunked_body_of_a_refused_request_is_cut_off(raw):
    """No length declared: the refusal comes once the body passes ``DRAIN_BYTES``."""
    piece = b"x" * (16 * 1024)
    connection = await raw()
    await connection.head("POST", "chapyter-ext/chat", chunked())
    answer = None
    while answer is None and connection.sent < 4 * DRAIN_BYTES:
        await connection.chunk(piece)
        try:
            answer = await connection.response(timeout=0.2)
        except asyncio.TimeoutError:
            continue
    assert answer is not None, f"no answer after {connection.sent} bytes"
    status, headers, body = answer
    assert (status, body["error"]["kind"], headers["connection"]) == (403, "forbidden", "close")
    assert connection.sent <= DRAIN_BYTES + 2 * (len(piece) + 10)
    assert await connection.closed()
