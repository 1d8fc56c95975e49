"""chapyter_ext.chat.running_turns: the one registry of running chat replies and agent turns."""

from __future__ import annotations

import asyncio

from chapyter_ext.chat.running_turns import RunningTurns


class Turn:
    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self.stopped: list[str] = []

    def stop(self, reason: str = "stopped") -> bool:
        self.stopped.append(reason)
        return True

    async def wait(self) -> None:
        await asyncio.sleep(0)


class OtherTurn(Turn):
    pass


def test_slots_are_bounded_and_freed_once():
    turns = RunningTurns(2)
    assert turns.reserve() and turns.reserve() and not turns.reserve()
    first = Turn("a")
    turns.add(first)
    turns.unreserve()  # the second request was refused after all
    assert turns.active == 1
    turns.release(first)
    turns.release(first)  # the turn's end and a failed start may both release it
    assert turns.active == 0
    assert turns.get("a", Turn) is None


def test_a_turn_is_found_by_id_and_kind_and_stopped_whatever_its_kind():
    turns = RunningTurns(4)
    chat, agent = Turn("c"), OtherTurn("g")
    for turn in (chat, agent):
        assert turns.reserve()
        turns.add(turn)
    assert turns.get("g", OtherTurn) is agent
    assert turns.get("c", OtherTurn) is None  # agent/result cannot reach a chat reply
    assert turns.get("c", Turn) is chat
    assert turns.stop("g") and agent.stopped == ["stopped"]
    assert not turns.stop("unknown")


async def test_close_stops_the_kind_asked_or_all():
    turns = RunningTurns(4)
    chat, agent = Turn("c"), OtherTurn("g")
    for turn in (chat, agent):
        turns.reserve()
        turns.add(turn)
    await turns.close(OtherTurn)
    assert (chat.stopped, agent.stopped) == ([], ["shutdown"])
    await turns.close()
    assert chat.stopped == ["shutdown"]
