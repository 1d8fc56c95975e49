"""What the server benchmarks share: a JSON POST, waiting for a URL, the loopback model in
its own process, a real ``jupyter server`` (the tests' ``JupyterProcess``), and one way to
call its routes (a JSON POST, a streamed one read with the tests' SSE reader)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.request import Request, urlopen

from chapyter_ext.testing.jupyter_process import JupyterProcess, free_port
from chapyter_ext.testing.sse import SSEReader


def post_json(url: str, data: dict) -> None:
    """POST ``data`` as JSON (the loopback model's control API)."""
    body = json.dumps(data).encode()
    urlopen(Request(url, data=body, headers={"Content-Type": "application/json"}))


def get_json(url: str) -> Any:
    """GET a JSON body (the loopback model's control API)."""
    with urlopen(url) as response:
        return json.loads(response.read())


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


@contextmanager
def fake_model(default_reply: dict[str, Any] | None = None) -> Iterator[str]:
    """The loopback OpenAI-compatible server in its own process (its threads do not compete
    with the measuring process for the GIL), answering ``default_reply`` (``Reply.to_dict()``)
    when nothing is scripted; yields its URL (without ``/v1``), stops it on the way out."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "chapyter_ext.testing.openai_server", f"--port={port}"],
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{url}/v1/models")
        if default_reply is not None:
            post_json(f"{url}/_control/default", {"reply": default_reply})
        yield url
    finally:
        process.terminate()
        process.wait(10)


@dataclass
class JupyterServer:
    """A running ``jupyter server`` with chapyter-ext."""

    #: ``http://127.0.0.1:<port>/``
    base: str
    token: str
    pid: int

    @property
    def headers(self) -> dict[str, str]:
        """A JSON request's headers, with the token."""
        return {"Authorization": f"token {self.token}", "Content-Type": "application/json"}

    async def post(self, client: Any, route: str, body: Any) -> None:
        """POST ``body`` as JSON to ``chapyter-ext/<route>`` with tornado's ``client``."""
        from tornado.httpclient import HTTPRequest

        url = f"{self.base}chapyter-ext/{route}"
        await client.fetch(HTTPRequest(url, "POST", self.headers, json.dumps(body)))

    async def stream(
        self,
        client: Any,
        route: str,
        body: Any,
        on_event: Callable[[str, Any], None] | None = None,
    ) -> SSEReader:
        """POST ``body`` to the streamed route ``chapyter-ext/<route>`` and read its events to
        the end (each stamped with its arrival time); ``on_event(name, data)`` sees each one
        as it arrives."""
        from tornado.httpclient import HTTPRequest

        sse = SSEReader()

        def on_chunk(chunk: bytes) -> None:
            for name, data in sse.parse(chunk):
                if on_event is not None:
                    on_event(name, data)

        request = HTTPRequest(
            f"{self.base}chapyter-ext/{route}",
            method="POST",
            body=json.dumps(body),
            headers=self.headers,
            streaming_callback=on_chunk,
            request_timeout=600,
        )
        await client.fetch(request)
        return sse


@contextmanager
def jupyter_server(
    model_base_url: str, *options: str, root: str | None = None
) -> Iterator[JupyterServer]:
    """A real ``jupyter server`` with chapyter-ext (``JupyterProcess``: a free loopback port,
    no user setting leaks in) talking to the OpenAI-compatible endpoint ``model_base_url``
    (model ``fake-model``), with more command-line ``options``. It serves ``root`` (a new
    temporary folder by default) and keeps its chat histories there. Stopped on the way out."""
    with tempfile.TemporaryDirectory(prefix="chapyter-bench-") as scratch:
        root = root or scratch
        env = {
            "OPENAI_BASE_URL": model_base_url,
            "OPENAI_API_KEY": "sk-bench",
            "CHAPYTER_MODEL": "fake-model",
        }
        history = f"--ChapyterExtApp.history_dir={root}/history"
        with JupyterProcess(scratch, history, *options, env=env, root=root) as server:
            yield JupyterServer(server.base, server.token, server.pid)
