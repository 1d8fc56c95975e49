"""What every streamed turn (a chat reply, an agent turn) shares: one asyncio task producing
typed events into a queue, the handler draining it, and one way to stop it.

Keeping the model call in its own task is what makes stopping prompt: cancelling the task
interrupts the read from the model where it waits, and the model call closes the upstream
response on the way out. The same path serves a stop request, a closed tab and a time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from .events import ChatEvent, Heartbeat, is_last
from .history import new_id


class StreamingTurn:
    """A turn's id, its event queue, its task, and stopping and waiting for it."""

    def __init__(self) -> None:
        self.message_id = new_id()
        self._queue: asyncio.Queue[ChatEvent] = asyncio.Queue()
        self._stop_reason: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        # Set while the last event is being saved and sent: a stop then would lose it.
        self._finishing = False

    def stop(self, reason: str = "stopped") -> bool:
        """Stop the turn (``reason``: stopped, disconnected, timeout/time_limit, shutdown).

        Returns whether there was anything to stop.
        """
        if self._task is None or self._task.done() or self._finishing:
            # Finishing: the last event is on its way; cancelling now would lose it.
            return False
        if self._stop_reason is None:
            self._stop_reason = reason
        self._task.cancel()
        return True

    async def wait(self) -> None:
        """Wait until the turn has finished and been saved."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def events(self, heartbeat: float = 15.0) -> AsyncIterator[ChatEvent]:
        """Typed events (:mod:`.events`), up to and including the last (``Done``/``Error``).

        When nothing happened for ``heartbeat`` seconds, ``Heartbeat()`` is yielded so the
        caller can keep idle proxies from closing the connection while the model thinks.
        """
        while True:
            try:
                event = await asyncio.wait_for(self._queue.get(), heartbeat)
            except asyncio.TimeoutError:
                yield Heartbeat()
                continue
            yield event
            if is_last(event):
                return
