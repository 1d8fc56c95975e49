"""THE registry of running turns, chat replies and agent turns alike: their slots (at most
``max_concurrent`` at once), finding one by its reply's id, stopping one, stopping them all.

The chat service owns it; the agent service reaches its own turns through it (the turn's type
tells them apart), so a Stop, the concurrency cap and shutdown see one list, not two copies.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, TypeVar


class RunningTurn(Protocol):
    """What the registry needs of a running turn to track, stop and wait for it."""

    message_id: str

    def stop(self, reason: str = "stopped") -> bool: ...

    async def wait(self) -> None: ...


TurnT = TypeVar("TurnT", bound=RunningTurn)


class RunningTurns:
    """The running turns by their reply's id, and the slots they (and turns about to start)
    hold."""

    def __init__(self, max_concurrent: int) -> None:
        self.max_concurrent = max(1, int(max_concurrent))
        self._turns: dict[str, RunningTurn] = {}
        self._reserved = 0

    @property
    def active(self) -> int:
        """How many turns are running or about to."""
        return self._reserved

    def reserve(self) -> bool:
        """Take a slot for a turn about to start; False when all are taken. Check and take
        happen with no await in between, so two requests can't both pass."""
        if self._reserved >= self.max_concurrent:
            return False
        self._reserved += 1
        return True

    def unreserve(self) -> None:
        """Give back a slot whose turn never started (a refused request)."""
        self._reserved -= 1

    def add(self, turn: RunningTurn) -> None:
        """Track a turn on the slot :meth:`reserve` took, until :meth:`release`."""
        self._turns[turn.message_id] = turn

    def release(self, turn: RunningTurn) -> None:
        """The turn is over: forget it and free its slot (once, however often it is called)."""
        if self._turns.pop(turn.message_id, None) is not None:
            self._reserved -= 1

    def get(self, message_id: str, kind: type[TurnT]) -> TurnT | None:
        """The running turn of that id if it is a ``kind``, else None."""
        turn = self._turns.get(message_id)
        return turn if isinstance(turn, kind) else None

    def stop(self, message_id: str, reason: str = "stopped") -> bool:
        """Stop the turn of that id, whatever its kind; whether one was running."""
        turn = self._turns.get(message_id)
        return turn.stop(reason) if turn is not None else False

    async def close(self, kind: type[RunningTurn] | None = None, timeout: float = 10) -> None:
        """Stop every turn (of ``kind``, or all) with reason ``shutdown`` and wait for them."""
        turns = [t for t in self._turns.values() if kind is None or isinstance(t, kind)]
        for turn in turns:
            turn.stop("shutdown")
        if turns:
            await asyncio.wait([asyncio.ensure_future(t.wait()) for t in turns], timeout=timeout)
