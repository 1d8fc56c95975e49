"""Refused requests never take a user's server "down" behind JupyterHub's proxy.

configurable-http-proxy keeps its connections to a user's server open and reuses them. A
chapyter-ext route refuses on the headers, before the body; the server used to close such a
connection without saying so, and the proxy sent the next request (the owner's included) on it:
503 "Your server appears to be down". Here, through the real hub and proxy: anonymous
requests (small bodies, none, a large one) and the owner's oversized one are answered with
their own refusal, and the owner's requests, sequential and side by side with anonymous ones,
are all answered. One user, to keep it short.

With the old refusals (the connection closed unannounced, and closed at once under a large
body), the owner's request after the first anonymous GET was the proxy's 503, and each 5 MB
refusal was a 503 itself; tests/server/test_refusals.py sees the same over a raw socket.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from .client import User
from .deploy_doc import snippet
from .harness import running, start_hub, user_env_from_doc
from .scenario import keys_for

pytestmark = pytest.mark.hub

OWNER = "alice"
#: Requests of each kind sent side by side (the proxy's pool is what is tested).
SIDE_BY_SIDE = 150
#: Above the 4 MB limit of the routes that take no attachments (chat and agent take more).
FIVE_MB = b"x" * (5 * 1024 * 1024)


def kind(response: httpx.Response) -> str | None:
    """The extension's error kind of a refusal (None: not one of its JSON errors)."""
    try:
        return response.json()["error"]["kind"]
    except (ValueError, KeyError, TypeError):
        return None


def test_refused_requests_leave_the_owners_server_answering(tmp_path: Path, fake_gateway) -> None:
    started = time.monotonic()
    env = user_env_from_doc(tmp_path / "opt-jupyter")
    # The guide's spawner; the test's shared password (no key is needed to be refused).
    config = snippet("hub-spawner", prefix=str(env), gateway_url=fake_gateway.base_url)
    keys = keys_for("refusals")
    hub = start_hub(tmp_path / "hub", env, keys=keys, snippets=config, keyed_authenticator=False)
    with running(hub.process):
        owner = User(hub, OWNER)
        owner.log_in()
        hub.start(OWNER)
        hub.wait_ready(OWNER)
        owner.token = hub.token(OWNER)
        chat = f"{owner.base}/chapyter-ext/chat"
        context = f"{owner.base}/chapyter-ext/context"
        anonymous = httpx.Client(timeout=60)
        mine = httpx.Client(headers=owner.headers, timeout=60)
        try:
            refusals = [
                ("anonymous GET", lambda: anonymous.get(f"{owner.base}/chapyter-ext/config"), 403),
                ("anonymous POST", lambda: anonymous.post(chat, json={"message": "hi"}), 403),
                ("anonymous 5 MB", lambda: anonymous.post(chat, content=FIVE_MB), 403),
                ("owner's 5 MB", lambda: mine.post(context, content=FIVE_MB), 413),
            ]
            for what, send, status in refusals:
                for _ in range(3):
                    refused = send()
                    # The server's own refusal, relayed: not the proxy's 503.
                    assert (what, refused.status_code) == (what, status), refused.text[:300]
                    assert kind(refused) in ("forbidden", "bad_request"), refused.text[:300]
                    answered = mine.get(f"{owner.base}/chapyter-ext/config")
                    assert (what, answered.status_code) == (what, 200), answered.text[:300]
            counts = side_by_side(owner)
            assert counts == {
                ("owner", 200): 2 * SIDE_BY_SIDE,
                ("anonymous GET", 403): SIDE_BY_SIDE,
                ("anonymous POST", 403): SIDE_BY_SIDE,
            }, counts
        finally:
            anonymous.close()
            mine.close()
    print(f"\n[hub] refused requests through the proxy: {time.monotonic() - started:.1f} s")


def side_by_side(owner: User) -> Counter[tuple[str, int]]:
    """The owner's requests while anonymous ones are refused, each on its own connection to
    the proxy: the proxy's pooled connections to the server carry them all."""
    counts: Counter[tuple[str, int]] = Counter()
    lock = threading.Lock()
    status = f"{owner.base}/api/status"

    def run(name: str, headers: dict[str, str], send) -> None:
        with httpx.Client(headers=headers, timeout=60) as client:
            for _ in range(SIDE_BY_SIDE):
                code = send(client).status_code
                with lock:
                    counts[(name, code)] += 1

    jobs = [
        ("owner", owner.headers, lambda c: c.get(status)),
        ("owner", owner.headers, lambda c: c.get(status)),
        ("anonymous GET", {}, lambda c: c.get(f"{owner.base}/chapyter-ext/config")),
        ("anonymous POST", {}, lambda c: c.post(f"{owner.base}/chapyter-ext/chat", json={})),
    ]
    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts
