"""The JupyterLab page's side of outside agents, for the server tests: it subscribes to
``outside/events``, reports its open notebooks, and answers each ``call`` as the frontend does,
through a REAL kernel where the call reads or runs something: a ``try`` decision is tried by a
silent request (its report posted to ``outside/trial``), an ``ask`` is put to ``approve`` (the
user), an approved or unasked run is armed when the server says so, then runs, and the result
goes to ``outside/result``. ``cancel`` events are kept (a call being handled is abandoned).

Also the MCP client side: :func:`mcp_session`, the official SDK's streamable-HTTP client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from chapyter_ext.testing.wire_shape import body_problems, event_problems
from tests.kernel_harness import Kernel

from .kernel_browser import KernelThread, nbformat_outputs, silent_value, trial_body

NOTEBOOK = "work/outside.ipynb"
_ROOT = Path(__file__).resolve().parents[2]
#: The relay's wire: ``outside`` in tests/vectors/contract.json.
OUTSIDE = json.loads((_ROOT / "tests" / "vectors" / "contract.json").read_text("ascii"))["outside"]
Approve = Callable[[dict[str, Any]], "bool | Awaitable[bool]"]


@contextlib.asynccontextmanager
async def mcp_session(url: str, token: str | None, name: str = "test-agent") -> AsyncIterator[Any]:
    """An initialised ``mcp.ClientSession`` to ``url`` with ``token`` as its bearer token."""
    import mcp_types as types
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as streams,
        ClientSession(
            streams[0], streams[1], client_info=types.Implementation(name=name, version="1.0")
        ) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    """The text blocks of an MCP tool result, joined."""
    return "\n".join(block.text for block in result.content if block.type == "text")


class OutsideBrowser:
    """One subscribed page, answering calls through ``kernel`` (or ``answer``, a script)."""

    def __init__(
        self,
        base: str,
        auth: dict[str, str],
        *,
        kernel: Kernel | None = None,
        thread: KernelThread | None = None,
        approve: Approve = lambda call: True,
        answer: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]] | None = None,
        page: str = "page-1",
        notebooks: tuple[str, ...] = (NOTEBOOK,),
    ) -> None:
        self.base, self.page, self.notebooks = base, page, notebooks
        self.http = httpx.AsyncClient(headers=auth, timeout=60)
        self.kernel, self.thread = kernel, thread
        self.approve, self.answer = approve, answer
        self.calls: list[dict[str, Any]] = []
        self.cancels: list[dict[str, Any]] = []
        #: call_id -> what became of it: "ran", "asked", "refused", "not_open", ...
        self.outcomes: dict[str, str] = {}
        #: call_id -> the kernel's own time for the run (seconds).
        self.kernel_seconds: dict[str, float] = {}
        self.cells: dict[str, str] = {"cell-a": "x = 6 * 7\nprint(x)"}
        #: What an event or a body broke of the contract (checked on the way out).
        self.problems: list[str] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> OutsideBrowser:
        connected = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read(connected))
        await asyncio.wait_for(connected.wait(), 10)
        notebooks = [{"path": path, "kernel": "python3"} for path in self.notebooks]
        response = await self.post("notebooks", {"page": self.page, "notebooks": notebooks})
        assert response.status_code == 200, response.text
        return self

    async def __aexit__(self, *exc: Any) -> None:
        for task in [*self._tasks.values(), self._reader]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        await self.http.aclose()
        if exc[0] is None:
            assert self.problems == [], self.problems

    async def post(self, route: str, body: dict[str, Any]) -> httpx.Response:
        self.problems += body_problems(OUTSIDE, f"outside/{route}", body)
        return await self.http.post(f"{self.base}chapyter-ext/outside/{route}", json=body)

    async def _read(self, connected: asyncio.Event) -> None:
        url = f"{self.base}chapyter-ext/outside/events"
        async with self.http.stream("GET", url, params={"page": self.page}) as response:
            assert response.status_code == 200
            name = None
            async for line in response.aiter_lines():
                if line.startswith(": connected"):
                    connected.set()
                elif line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                    self.problems += event_problems(OUTSIDE, str(name), "outside", data)
                    if name == "call":
                        self.calls.append(data)
                        task = asyncio.ensure_future(self._handle(data))
                        self._tasks[data["call_id"]] = task
                    elif name == "cancel":
                        self.cancels.append(data)
                        task = self._tasks.get(data["call_id"])
                        if task is not None:
                            task.cancel()

    async def _result(self, call: dict[str, Any], status: str, result: Any, message: str = ""):
        self.outcomes.setdefault(call["call_id"], status if status != "ok" else "done")
        body = {"call_id": call["call_id"], "status": status, "result": result, "message": message}
        await self.post("result", body)

    async def _handle(self, call: dict[str, Any]) -> None:
        if self.answer is not None:
            body = await self.answer(call)
            if body is not None:
                await self.post("result", {"call_id": call["call_id"], **body})
            return
        tool, args = call["tool"], call["arguments"]
        if call["notebook"] and call["notebook"] not in self.notebooks:
            await self._result(call, "not_open", None)
        elif tool == "list_notebooks":
            found = [
                {"path": p, "kernel": "python3", "cells": len(self.cells)} for p in self.notebooks
            ]
            await self._result(call, "ok", {"notebooks": found})
        elif tool == "read_cells":
            cells = [
                {"id": cid, "index": i, "type": "code", "source": src, "outputs": ""}
                for i, (cid, src) in enumerate(self.cells.items())
            ]
            await self._result(call, "ok", {"cells": cells})
        elif tool in ("run_code", "run_cell"):
            await self._run(call)
        elif tool == "edit_cell":
            if await self._approved(call):
                self.cells[args["cell_id"]] = call["code"]
                await self._result(call, "ok", {"cell_id": args["cell_id"], "source": call["code"]})
            else:
                self.outcomes[call["call_id"]] = "asked"
                await self._result(call, "refused", None, "The user rejected the change.")
        elif tool == "undo":
            if await self._approved(call):
                await self._result(call, "ok", {"restored": True, "removed_cells": []})
            else:
                await self._result(call, "refused", None, "The user declined the undo.")
        else:
            await self._result(call, "error", None, f"no tool {tool}")

    async def _approved(self, call: dict[str, Any]) -> bool:
        verdict = self.approve(call)
        if asyncio.iscoroutine(verdict):
            verdict = await verdict
        return bool(verdict)

    async def _run(self, call: dict[str, Any]) -> None:
        assert self.kernel is not None and self.thread is not None
        needs, guard = call["decision"] != "run", None
        if call["decision"] == "try":
            entry = await self.thread.call(silent_value, self.kernel, call["trial"])
            response = await self.post("trial", {"call_id": call["call_id"], **trial_body(entry)})
            assert response.status_code == 200, response.text
            decision = response.json()
            needs, guard = decision["needs_approval"], decision["guard"]
        if needs and not await self._approved(call):
            self.outcomes[call["call_id"]] = "asked"
            await self._result(call, "refused", None, "The user declined to run it.")
            return
        if guard:
            await self.thread.call(silent_value, self.kernel, guard)
        started = time.perf_counter()
        run = await self.thread.call(self.kernel.run, call["code"])
        self.kernel_seconds[call["call_id"]] = time.perf_counter() - started
        outputs = nbformat_outputs(run.outputs)
        text = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
        cell = call["arguments"].get("cell_id") or f"cell-{call['call_id'][:8]}"
        result = {"cell_id": cell, "execution_count": run.reply["content"].get("execution_count")}
        self.outcomes[call["call_id"]] = "ran"
        await self._result(call, "ok", {**result, "outputs": text})
