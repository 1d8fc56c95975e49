"""The relay between outside agents' tool calls and the JupyterLab pages that carry them out.

The server never runs code and its kernel may be remote: each call goes, as a ``call`` event
on ``GET chapyter-ext/outside/events``, to a page that has the notebook open (pages report
their open notebooks with ``POST outside/notebooks``). The call then waits on a future for
the page's ``POST outside/result`` (an acting call that must be tried first posts its trial
report to ``outside/trial`` on the way, and is answered the agent's decision). A call with no
answer within ``Chapyter.outside_timeout`` seconds, stopped by the user (``outside/stop``) or
whose client went away is cancelled: a ``cancel`` event tells the page, and the client gets a
one-line refusal. No page has the notebook open: the call answers so at once (we never open
a notebook ourselves).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..chat import ChatError
from ..redact import Redactor

__all__ = ["KEEPALIVE", "Answer", "Call", "Page", "Relay", "not_open_line"]

KEEPALIVE = b": keepalive\n\n"
#: The most notebooks one page may report.
MAX_NOTEBOOKS = 200
MAX_PAGES = 20
RESULT_STATUSES = ("ok", "refused", "error", "not_open")


def not_open_line(notebook: str) -> str:
    """The one line of a call for a notebook no page has open."""
    if not notebook:
        return "No JupyterLab page is connected: open JupyterLab with chapyter-ext first."
    return (
        f"The notebook {notebook} is not open in JupyterLab: open it there first "
        "(chapyter-ext never opens a notebook itself)."
    )


@dataclass
class Answer:
    """What became of one call: the page's result, or why there is none."""

    status: str
    result: dict[str, Any] | None = None
    message: str = ""


@dataclass
class Call:
    """One tool call waiting for a page."""

    call_id: str
    event: dict[str, Any]
    client: str
    page: Page
    future: asyncio.Future[Answer]
    #: The server's decision inputs for the trial (``outside/trial`` answers with them).
    decide_trial: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    trial_open: bool = False
    #: ``(MCP session id, JSON-RPC request id)`` of the client's request, when known.
    origin: tuple[str, str] | None = None


@dataclass
class Page:
    """One JupyterLab page subscribed to the events."""

    page_id: str
    queue: asyncio.Queue[bytes] = field(default_factory=asyncio.Queue)
    #: ``{path: kernel}`` of the notebooks it has open.
    notebooks: dict[str, str] = field(default_factory=dict)


def encode(name: str, data: dict[str, Any], redact: Redactor) -> bytes:
    """One event as SSE bytes, every string but the ids redacted."""

    def clean(value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return value if key.endswith("_id") else redact(value)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v, k) for k, v in value.items()}
        return value

    text = json.dumps(clean(data), ensure_ascii=False)
    return f"event: {name}\ndata: {text}\n\n".encode("utf-8", "replace")


class Relay:
    """The connected pages and the calls waiting for them (one per server)."""

    def __init__(self, redact: Redactor) -> None:
        self.redact = redact
        self.pages: dict[str, Page] = {}
        self.calls: dict[str, Call] = {}

    # -- pages -----------------------------------------------------------------------------

    def connect(self, page_id: str) -> Page:
        """A page subscribed; the same id again replaces its earlier stream."""
        old = self.pages.pop(page_id, None)
        if old is None and len(self.pages) >= MAX_PAGES:
            raise ChatError("busy", f"At most {MAX_PAGES} pages may subscribe at once.")
        page = Page(page_id, notebooks=old.notebooks if old is not None else {})
        self.pages[page_id] = page
        return page

    def disconnect(self, page: Page) -> None:
        """The page's stream closed: its calls can no longer be answered."""
        if self.pages.get(page.page_id) is page:
            del self.pages[page.page_id]
        for call in list(self.calls.values()):
            if call.page is page:
                self.finish(call, Answer("error", None, "The JupyterLab page went away."))

    async def events(self, page: Page, heartbeat: float) -> AsyncIterator[bytes]:
        """The page's events, a keepalive when nothing happened for ``heartbeat`` seconds."""
        while True:
            try:
                yield await asyncio.wait_for(page.queue.get(), heartbeat)
            except asyncio.TimeoutError:
                yield KEEPALIVE

    def report(self, page_id: str, notebooks: Any) -> None:
        """``POST outside/notebooks``: what the page has open now."""
        page = self.pages.get(page_id)
        if page is None:
            raise ChatError("not_found", "No subscribed page with that id.")
        if not isinstance(notebooks, list) or len(notebooks) > MAX_NOTEBOOKS:
            raise ChatError(
                "bad_request", f"'notebooks' must be a list of at most {MAX_NOTEBOOKS}."
            )
        found: dict[str, str] = {}
        for item in notebooks:
            path = item.get("path") if isinstance(item, dict) else None
            kernel = item.get("kernel") if isinstance(item, dict) else None
            if not isinstance(path, str) or not path or len(path) > 4096:
                raise ChatError("bad_request", "Each of 'notebooks' needs a 'path' string.")
            found[path] = kernel if isinstance(kernel, str) else ""
        page.notebooks = found

    def page_for(self, notebook: str) -> Page | None:
        """The page that answers a call for ``notebook`` ("": any page), the latest first."""
        for page in reversed(list(self.pages.values())):
            if not notebook or notebook in page.notebooks:
                return page
        return None

    # -- calls -----------------------------------------------------------------------------

    def send(self, page: Page, event: dict[str, Any], client: str, **extra: Any) -> Call:
        """Send a ``call`` event to ``page``; the call waits in :attr:`calls`."""
        call_id = secrets.token_hex(16)
        event = {"call_id": call_id, **event}
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        call = Call(call_id, event, client, page, future, **extra)
        self.calls[call_id] = call
        page.queue.put_nowait(encode("call", event, self.redact))
        return call

    def finish(self, call: Call, answer: Answer, cancel: str | None = None) -> None:
        """End a call with ``answer``; ``cancel``: tell its page why (timeout, Stop, ...)."""
        self.calls.pop(call.call_id, None)
        if not call.future.done():
            call.future.set_result(answer)
        if cancel is not None:
            data = {"call_id": call.call_id, "reason": cancel}
            call.page.queue.put_nowait(encode("cancel", data, self.redact))

    def _call(self, call_id: Any) -> Call:
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            raise ChatError("not_found", "No outside call with that call_id is waiting.")
        return call

    def result(self, body: dict[str, Any]) -> None:
        """``POST outside/result``: a page's answer to a call."""
        call = self._call(body.get("call_id"))
        status = body.get("status")
        if status not in RESULT_STATUSES:
            raise ChatError("bad_request", f"'status' must be one of {', '.join(RESULT_STATUSES)}.")
        result = body.get("result")
        if result is not None and not isinstance(result, dict):
            raise ChatError("bad_request", "'result' must be an object or null.")
        message = body.get("message", "")
        if not isinstance(message, str):
            raise ChatError("bad_request", "'message' must be a string.")
        self.finish(call, Answer(status, result, message[:2000]))

    def trial(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST outside/trial``: a call's trial report; the decision (``policy.consent``)."""
        call = self._call(body.get("call_id"))
        if call.decide_trial is None or not call.trial_open:
            raise ChatError("not_found", "That outside call is not waiting for a trial.")
        decision = call.decide_trial(body)  # a bad report is a 400 and may be sent again
        call.trial_open = False
        return decision

    def client_gone(self, origin: tuple[str, str]) -> None:
        """The HTTP request that made a call closed before its answer: cancel the call."""
        for call in list(self.calls.values()):
            if call.origin == origin:
                self.finish(call, Answer("refused", None, "The client went away."), "client")

    def stop(self, client: str | None = None) -> int:
        """``POST outside/stop``: end the running calls (of ``client`` only, if named)."""
        stopped = 0
        for call in list(self.calls.values()):
            if client is None or call.client == client:
                message = "Stopped by the user in JupyterLab."
                self.finish(call, Answer("refused", None, message), cancel="stop")
                stopped += 1
        return stopped

    async def wait(self, call: Call, timeout: float) -> Answer:
        """The page's answer, or a refusal after ``timeout`` seconds (the page is told)."""
        try:
            return await asyncio.wait_for(asyncio.shield(call.future), timeout)
        except asyncio.TimeoutError:
            line = (
                f"No answer from JupyterLab within {timeout:g} seconds "
                "(Chapyter.outside_timeout): not done."
            )
            self.finish(call, Answer("refused", None, line), cancel="timeout")
            return call.future.result()
        except asyncio.CancelledError:
            self.finish(call, Answer("refused", None, "The client went away."), cancel="client")
            raise

    def close(self) -> None:
        """The server stops: every waiting call ends."""
        for call in list(self.calls.values()):
            self.finish(call, Answer("error", None, "The Jupyter server is stopping."), "stop")
