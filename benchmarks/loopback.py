"""What the server benchmarks share: a free loopback port, a JSON POST, waiting for a URL."""

from __future__ import annotations

import json
import socket
import time
from urllib.request import Request, urlopen


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post_json(url: str, data: dict) -> None:
    """POST ``data`` as JSON (the loopback model's control API)."""
    body = json.dumps(data).encode()
    urlopen(Request(url, data=body, headers={"Content-Type": "application/json"}))


def wait_for(url: str, token: str = "", timeout: float = 90) -> None:
    """Poll ``url`` (with Jupyter's token) until it answers, or raise after ``timeout`` s."""
    deadline = time.time() + timeout
    while True:
        try:
            urlopen(Request(url, headers={"Authorization": f"token {token}"}))
            return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.3)
