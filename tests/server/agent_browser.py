"""The browser's side of an agent turn, for the server tests: it posts ``agent``, reads the
``step`` events, posts a step's trial report to ``agent/trial`` when the step asks for one, and
posts each step's result (nbformat outputs) to ``agent/result``, as the frontend does after
running the cell in the notebook's kernel."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import time
import zlib
from collections.abc import Callable
from typing import Any

from chapyter_ext.testing.sse import SSEReader

NOTEBOOK = "work/agent.ipynb"
QUESTION = "What is six times seven?"
Answer = Callable[[dict[str, Any]], "dict[str, Any] | None"]
#: A trial that tried nothing and showed nothing: what a kernel reports for harmless code.
CLEAN_TRIAL: dict[str, Any] = {"status": "ran", "stdout": "", "attempts": []}


def agent_body(message: str = QUESTION, **extra: Any) -> dict[str, Any]:
    return {"notebook": NOTEBOOK, "message": message, **extra}


def run_code(code: str, purpose: str = "compute") -> dict[str, Any]:
    return {"name": "run_code", "arguments": {"code": code, "purpose": purpose}}


def stdout(text: str, count: int = 1, cell_id: str = "cell-1") -> dict[str, Any]:
    return {
        "status": "ran",
        "result": {
            "cell_id": cell_id,
            "execution_count": count,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}],
        },
    }


def error(ename: str, evalue: str, cell_id: str = "cell-0") -> dict[str, Any]:
    return {
        "status": "ran",
        "result": {
            "cell_id": cell_id,
            "execution_count": 1,
            "outputs": [
                {
                    "output_type": "error",
                    "ename": ename,
                    "evalue": evalue,
                    "traceback": [
                        "\x1b[0;31m---------------------------------------------\x1b[0m",
                        "Cell \x1b[0;32mIn[1], line 2\x1b[0m\n      1 x = 6 * 7\n----> 2 print(y)",
                        f"\x1b[0;31m{ename}\x1b[0m: {evalue}",
                    ],
                }
            ],
        },
    }


def tiny_png() -> str:
    """A valid 1x1 PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    raw += chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    return base64.b64encode(raw).decode()


def tool_messages(request: Any) -> list[str]:
    """Text the model was shown as tool results (and user messages that follow them)."""
    texts = []
    for message in request.messages:
        if message["role"] == "tool":
            content = message["content"]
            texts.append(content if isinstance(content, str) else json.dumps(content))
    return texts


class Browser:
    """Posts ``agent``, answers each ``step`` with ``answer(step)`` (None: never answers)."""

    def __init__(self, jp_fetch: Any, get_json: Any) -> None:
        self.jp_fetch = jp_fetch
        self.get_json = get_json
        self.reader = SSEReader()
        self.posted: list[tuple[int, Any]] = []
        self.task: asyncio.Future[Any] | None = None
        #: What the kernel's trial of a step gives (a report, or ``{"failure": ...}``).
        self.trial_report: Callable[[dict[str, Any]], dict[str, Any]] = lambda step: {
            "report": CLEAN_TRIAL
        }
        #: The server's decision after each trial, by step id.
        self.decisions: dict[str, dict[str, Any]] = {}

    def start(self, body: dict[str, Any]) -> None:
        self.task = asyncio.ensure_future(
            self.jp_fetch(
                "chapyter-ext",
                "agent",
                method="POST",
                body=json.dumps(body),
                streaming_callback=self.reader.feed,
                request_timeout=60,
            )
        )

    def steps(self) -> list[dict[str, Any]]:
        return self.reader.all("step")

    @property
    def message_id(self) -> str:
        return self.reader.first("start")["message_id"]

    async def post_result(self, body: dict[str, Any]) -> tuple[int, Any]:
        return await self.get_json("chapyter-ext", "agent", "result", method="POST", body=body)

    async def run(self, body: dict[str, Any], answer: Answer, timeout: float = 30) -> SSEReader:
        """The whole turn: start it, answer steps as they come, until the stream ends."""
        self.start(body)
        assert self.task is not None
        handled: set[str] = set()
        deadline = time.monotonic() + timeout
        try:
            while not self.task.done():
                for step in self.steps():
                    if step["step_id"] in handled:
                        continue
                    handled.add(step["step_id"])
                    reply = {"message_id": self.message_id, "step_id": step["step_id"]}
                    if step.get("trial"):
                        status, decision = await self.get_json(
                            "chapyter-ext",
                            "agent",
                            "trial",
                            method="POST",
                            body={**reply, **self.trial_report(step)},
                        )
                        assert status == 200, decision
                        self.decisions[step["step_id"]] = decision
                    result = answer(step)
                    if result is not None:
                        posted = await self.post_result({**reply, **result})
                        self.posted.append(posted)
                        assert posted == (200, {"ok": True})
                assert time.monotonic() < deadline, "the turn did not end"
                await asyncio.sleep(0.01)
            response = await self.task
        finally:
            self.task.cancel()
        assert response.code == 200
        return self.reader


DIGEST = {
    "suptitle": "Churn by plan",
    "axes": [{"title": "", "xlabel": "plan", "ylabel": "churn", "series": []}],
}


def figure_result(step: dict[str, Any]) -> dict[str, Any]:
    result = stdout("", 1)
    result["result"]["outputs"] = [
        {"output_type": "display_data", "data": {"text/plain": "<Figure size 640x480>"}}
    ]
    result["result"]["figures"] = [DIGEST]
    result["result"]["images"] = [tiny_png()]
    return result
