"""The browser's side of an agent turn against a REAL kernel, as the frontend does it: a step
with a trial is tried through a silent request (its report posted to ``agent/trial``); a step
that asks is skipped (nobody approves here); a step that may run is armed when the server says
so, then runs as a cell and its outputs go to ``agent/result``. A hook sees each step once it
was handled, so a test can check the world between steps.

The kernel is the tests' jupyter_client harness; its blocking calls run in a thread of its own
(:class:`KernelThread`), so the server (on this test's event loop) keeps answering meanwhile."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from chapyter_ext.testing.sse import SSEReader
from tests.kernel_harness import Kernel


class KernelThread:
    """One thread for every blocking call to a kernel: jupyter_client's blocking client must
    not run on the test's event loop, and ``asyncio.to_thread`` would carry that loop along
    (jupyter_core keeps it in a context variable)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1)

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(function, *args))

    def close(self) -> None:
        self._pool.shutdown(wait=True)


@dataclass
class Handled:
    """What became of one step."""

    step: dict[str, Any]
    #: The server's decision after the trial (None: no trial was asked for).
    decision: dict[str, Any] | None = None
    asked: bool = False
    ran: bool = False
    #: The cell's outputs (when it ran).
    outputs: list[dict[str, Any]] = field(default_factory=list)


def silent_value(kernel: Kernel, expression: str, timeout: float = 60) -> dict[str, Any]:
    """The kernel's ``user_expressions`` entry for ``expression``, asked silently."""
    kc = kernel.kc
    msg_id = kc.execute("", silent=True, store_history=False, user_expressions={"v": expression})
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"].get("user_expressions", {}).get("v", {})


def trial_body(entry: dict[str, Any]) -> dict[str, Any]:
    """What the frontend posts for a trial's user expression entry."""
    if entry.get("status") == "ok" and "application/json" in entry.get("data", {}):
        return {"report": entry["data"]["application/json"]}
    return {"failure": {"ename": str(entry.get("ename")), "evalue": str(entry.get("evalue"))}}


def nbformat_outputs(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """IOPub messages of a run as nbformat outputs (what the frontend posts)."""
    kept = []
    for msg in outputs:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            kept.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
        elif kind in ("display_data", "execute_result"):
            kept.append({"output_type": "display_data", "data": content["data"]})
        elif kind == "error":
            kept.append(
                {
                    "output_type": "error",
                    "ename": content["ename"],
                    "evalue": content["evalue"],
                    "traceback": content["traceback"][-3:],
                }
            )
    return kept[:200]


class KernelBrowser:
    """Plays the frontend for agent turns whose steps run in ``kernel``."""

    def __init__(self, jp_fetch: Any, get_json: Any, kernel: Kernel, thread: KernelThread) -> None:
        self.jp_fetch, self.get_json, self.kernel = jp_fetch, get_json, kernel
        self.thread = thread
        self.handled: list[Handled] = []

    async def turn(
        self,
        body: dict[str, Any],
        after: Callable[[Handled], Awaitable[None]] | None = None,
        timeout: float = 900,
    ) -> SSEReader:
        """One whole turn: every step handled as the module says, ``after`` each."""
        reader = SSEReader()
        task = asyncio.ensure_future(
            self.jp_fetch(
                "chapyter-ext",
                "agent",
                method="POST",
                body=json.dumps(body),
                streaming_callback=reader.feed,
                request_timeout=timeout,
            )
        )
        seen: set[str] = set()
        deadline = time.monotonic() + timeout
        try:
            while not task.done():
                for step in reader.all("step"):
                    if step["step_id"] in seen:
                        continue
                    seen.add(step["step_id"])
                    handled = await self._handle(reader.first("start")["message_id"], step)
                    self.handled.append(handled)
                    if after is not None:
                        await after(handled)
                assert time.monotonic() < deadline, "the turn did not end"
                await asyncio.sleep(0.01)
            response = await task
        finally:
            task.cancel()
        assert response.code == 200
        return reader

    async def _handle(self, message_id: str, step: dict[str, Any]) -> Handled:
        ids = {"message_id": message_id, "step_id": step["step_id"]}
        handled = Handled(step)
        needs = step["needs_approval"]
        guard = None
        if step.get("trial"):
            entry = await self.thread.call(silent_value, self.kernel, step["trial"])
            status, decision = await self.get_json(
                "chapyter-ext", "agent", "trial", method="POST", body={**ids, **trial_body(entry)}
            )
            assert status == 200, decision
            handled.decision = decision
            needs, guard = decision["needs_approval"], decision["guard"]
        if needs:
            handled.asked = True
            await self._post({**ids, "status": "skipped"})
            return handled
        if guard:
            armed = await self.thread.call(silent_value, self.kernel, guard)
            assert armed.get("status") == "ok", armed
        run = await self.thread.call(self.kernel.run, step["code"])
        handled.ran = True
        handled.outputs = nbformat_outputs(run.outputs)
        result = {"cell_id": f"cell-{step['step_id']}", "execution_count": 1}
        await self._post({**ids, "status": "ran", "result": {**result, "outputs": handled.outputs}})
        return handled

    async def _post(self, body: dict[str, Any]) -> None:
        status, answer = await self.get_json(
            "chapyter-ext", "agent", "result", method="POST", body=body
        )
        assert status == 200, answer
