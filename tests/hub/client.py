"""What a user's browser and JupyterLab do against the hub: log in with the form, open
JupyterLab, run cells over the kernel websocket with the request JupyterLab sends, stream chat
and agent replies."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import websocket

from chapyter_ext.testing.sse import SSEReader

from .harness import PASSWORD, Hub

# -- a user ------------------------------------------------------------------------------------


class User:
    """One user, as their browser and JupyterLab: a logged-in session and a token."""

    def __init__(self, hub: Hub, name: str) -> None:
        self.hub = hub
        self.name = name
        self.base = f"{hub.url}/user/{name}"
        self.browser = httpx.Client(base_url=hub.url, follow_redirects=True, timeout=60)
        self.token = ""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def log_in(self) -> None:
        """The hub's login form, as a browser fills it in; with the page's OAuth
        authenticator, the identity provider's form it sends the browser to."""
        if self.hub.oauth:
            # /hub/oauth_login redirects to the identity provider's form.
            page = self.browser.get("/hub/oauth_login")
            assert page.status_code == 200 and "/openid-connect/auth" in str(page.url), page.url
            data = {"username": self.name, "password": PASSWORD}
            # Signed in there, the browser goes back to the hub's callback, then to its server.
            response = self.browser.post(str(page.url), data=data)
        else:
            page = self.browser.get("/hub/login")
            assert page.status_code == 200, page.text
            xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
            data = {"username": self.name, "password": PASSWORD}
            if xsrf:
                data["_xsrf"] = xsrf.group(1)
            response = self.browser.post("/hub/login", data=data)
        assert response.status_code == 200, (response.status_code, response.url)
        assert "jupyterhub-session-id" in self.browser.cookies or any(
            c.name.startswith("jupyterhub-hub-login") for c in self.browser.cookies.jar
        )

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.get(f"{self.base}/{path}", headers=self.headers, timeout=60, **kwargs)

    def post(self, path: str, body: Any) -> httpx.Response:
        return httpx.post(f"{self.base}/{path}", headers=self.headers, json=body, timeout=60)

    def stream(
        self, path: str, body: Any, on_event: Callable[[str, dict[str, Any]], None] | None = None
    ) -> SSEReader:
        """POST and read the server-sent events to the end; ``on_event`` sees each as it comes."""
        sse = SSEReader()
        url = f"{self.base}/{path}"
        with httpx.stream("POST", url, headers=self.headers, json=body, timeout=180) as response:
            assert response.status_code == 200, response.read()
            for chunk in response.iter_bytes():
                for name, data in sse.parse(chunk):
                    if on_event is not None:
                        on_event(name, data)
        return sse

    def kernel(self, notebook: str) -> Kernel:
        """A session (and kernel) for ``notebook``, connected as JupyterLab connects."""
        body = {"path": notebook, "type": "notebook", "name": notebook,
                "kernel": {"name": "python3"}}  # fmt: skip
        response = self.post("api/sessions", body)
        assert response.status_code == 201, response.text
        kernel_id = response.json()["kernel"]["id"]
        return Kernel(self, kernel_id)


class Kernel:
    """A kernel over its websocket through the hub's proxy (JSON messages, as JupyterLab 4's
    default protocol without a subprotocol)."""

    def __init__(self, user: User, kernel_id: str) -> None:
        self.user = user
        self.session = uuid.uuid4().hex
        ws_base = user.base.replace("http://", "ws://", 1)
        url = f"{ws_base}/api/kernels/{kernel_id}/channels?session_id={self.session}"
        self.ws = websocket.create_connection(
            url, header=[f"Authorization: token {user.token}"], timeout=180
        )

    def close(self) -> None:
        self.ws.close()

    def execute(self, code: str, *, chapyter_frontend: bool = False) -> tuple[dict, list[dict]]:
        """Run ``code`` as JupyterLab runs a cell (``allow_stdin``, the cell's id; with
        ``chapyter_frontend`` also chapyter-ext's marker); its reply and nbformat outputs."""
        msg_id = uuid.uuid4().hex
        metadata: dict[str, Any] = {"cellId": uuid.uuid4().hex, "deletedCells": [],
                                    "recordTiming": False}  # fmt: skip
        if chapyter_frontend:
            metadata["chapyter_frontend"] = {"version": 1}
        self.ws.send(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "username": self.user.name,
                        "session": self.session,
                        "msg_type": "execute_request",
                        "version": "5.3",
                        "date": "2026-01-01T00:00:00.000Z",
                    },
                    "parent_header": {},
                    "metadata": metadata,
                    "content": {
                        "code": code,
                        "silent": False,
                        "store_history": True,
                        "user_expressions": {},
                        "allow_stdin": True,
                        "stop_on_error": True,
                    },
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        reply: dict[str, Any] | None = None
        idle = False
        outputs: list[dict[str, Any]] = []
        displays: dict[str, int] = {}
        while reply is None or not idle:
            raw = self.ws.recv()
            if isinstance(raw, bytes):
                continue  # a binary frame: a message with buffers, none of ours
            message = json.loads(raw)
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["header"]["msg_type"], message["content"]
            if message["channel"] == "shell" and kind == "execute_reply":
                reply = content
            elif kind == "status":
                idle = idle or content["execution_state"] == "idle"
            elif kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"],
                                "text": content["text"]})  # fmt: skip
            elif kind in ("execute_result", "display_data", "update_display_data"):
                shown_as = "display_data" if kind == "update_display_data" else kind
                output = {"output_type": shown_as, "data": content["data"],
                          "metadata": content.get("metadata", {})}  # fmt: skip
                if kind == "execute_result":
                    output["execution_count"] = content.get("execution_count")
                display_id = content.get("transient", {}).get("display_id")
                if display_id and display_id in displays:
                    # JupyterLab redraws the display in place: the progress line's last words.
                    outputs[displays[display_id]] = output
                elif kind != "update_display_data":
                    if display_id:
                        displays[display_id] = len(outputs)
                    outputs.append(output)
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"],
                                "evalue": content["evalue"],
                                "traceback": content["traceback"]})  # fmt: skip
        return reply, outputs


def output_text(outputs: list[dict[str, Any]]) -> str:
    """What a cell showed, as text."""
    parts = []
    for output in outputs:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
        else:
            parts.append(str(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)
