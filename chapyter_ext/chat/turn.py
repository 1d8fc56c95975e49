"""What every streamed turn (a chat reply, an agent turn) shares: one asyncio task producing
typed events into a queue, the handler draining it, one way to stop it, and one way it ends
(saved in the history, its slot released, its last event sent).

Keeping the model call in its own task is what makes stopping prompt: cancelling the task
interrupts the read from the model where it waits, and the model call closes the upstream
response on the way out. The same path serves a stop request, a closed tab and a time limit.
A turn subclass writes only what differs: :meth:`StreamingTurn._produce` (the work), and how a
stop, the saved message and the last event read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ..history import ChatMessage, HistoryError, new_id, repair_text, utc_now
from ..llm import LLMError
from ..llm.usage import UsageMeter
from ..redact import Redactor, one_line, redact_traceback
from .events import ChatEvent, Done, Error, Heartbeat, Notice, is_last


def _save_reply(
    store: Any, notebook: str, chat_id: str, reply: ChatMessage
) -> tuple[ChatMessage, str]:
    """On the history thread, one hop: save the reply, and take what the user must be told
    about the notebook's history now (its question or the reply could not be written)."""
    stored = store.append(notebook, chat_id, reply)
    return stored, store.take_notice(notebook)


class TurnHost(Protocol):
    """What a turn needs of the service that runs it."""

    redact: Redactor
    log: Any
    history: Any

    @property
    def prices(self) -> dict[str, Any]:
        """The administrator's prices per model (``Chapyter.prices``), as they are now."""


@dataclass
class TurnEnd:
    """How a turn ended: ``status`` (complete, stopped, error), the text saved and sent, the
    halt line of an agent turn, and the error (``{"kind", "message"}``) of a failed one."""

    status: str = "complete"
    text: str = ""
    halt: str = ""
    error: dict[str, str] | None = None


class StreamingTurn:
    """A turn's id, its event queue, its task, and stopping, waiting for and ending it."""

    #: How logs name the turn ("Chat reply", "Agent turn").
    noun: ClassVar[str] = "Turn"

    def __init__(self, host: TurnHost, *, notebook: str, chat_id: str, model_name: str) -> None:
        self.host = host
        self.notebook = notebook
        self.chat_id = chat_id
        self.model_name = model_name
        self.message_id = new_id()
        #: Told to the user right after ``start`` (e.g. that part of the history was damaged).
        self.notice = ""
        #: The tokens (and cost) of every model call of the turn; a subclass names the model
        #: sent (prices are per model).
        self.usage = UsageMeter(host.prices, model_name)
        self._queue: asyncio.Queue[ChatEvent] = asyncio.Queue()
        self._stop_reason: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        # Set while the last event is being saved and sent: a stop then would lose it.
        self._finishing = False
        #: The verdicts of the answer's code blocks (``guards.answers.code_block_checks``),
        #: once the turn ended: saved with the reply and sent with its last event.
        self.checks: tuple[dict[str, Any], ...] = ()
        #: An agent answer's checked numbers, set by ``_guarded``: saved with the reply.
        self.numbers: tuple[dict[str, Any], ...] = ()

    # -- what a turn kind writes ---------------------------------------------------------------

    def _start_event(self) -> ChatEvent:
        """The first event."""
        raise NotImplementedError

    async def _produce(self) -> TurnEnd:
        """The turn's work; how it ended when nothing interrupted it."""
        raise NotImplementedError

    def _partial(self) -> str:
        """The text so far (what a stop or a failure keeps)."""
        return ""

    def _on_stop(self, end: TurnEnd) -> None:
        """Our own stop (``self._stop_reason``) interrupted the work: adjust ``end``."""

    def _before_save(self) -> None:
        """The turn is ending: let go of what it waits for, flush what it holds back."""

    def _steps(self) -> tuple[dict[str, Any], ...]:
        """What ran (agent turns), saved with the reply."""
        return ()

    def _plan(self) -> tuple[dict[str, Any], ...]:
        """The plan the turn proposed or followed (``{text, status, note}``), saved with it."""
        return ()

    def _guarded(self, text: str) -> tuple[str, tuple[dict[str, Any], ...]]:
        """The answer as it is kept and shown (the guard rails cleaned it) and the verdicts of
        its code blocks."""
        return text, ()

    def _last_event(self, end: TurnEnd, text: str, steps: tuple[dict[str, Any], ...]) -> ChatEvent:
        """The last event of a turn that did not fail."""
        return Done(
            self.message_id, text, end.status, self.usage.as_dict(), checks=self.checks or None
        )

    def _release(self) -> None:
        """Free the turn's slot."""
        raise NotImplementedError

    # -- the shared life -----------------------------------------------------------------------

    def start(self, timeout: float, reason: str) -> None:
        """Begin the turn; ``timeout`` seconds (0: none) bound all of it, then it stops with
        ``reason``."""
        loop = asyncio.get_running_loop()
        self._queue.put_nowait(self._start_event())
        if self.notice:
            self._queue.put_nowait(Notice(self.notice))
        name = f"chapyter-{self.noun.split()[0].lower()}-{self.message_id}"
        self._task = loop.create_task(self._run(), name=name)
        if timeout > 0:
            self._timer = loop.call_later(timeout, self.stop, reason)

    async def _run(self) -> None:
        host = self.host
        end = TurnEnd()
        try:
            end = await self._produce()
        except asyncio.CancelledError:
            end = TurnEnd("stopped", self._partial())
            self._on_stop(end)
            if self._stop_reason is None:
                # Cancelled from outside (the loop is going away): save, then carry on.
                self._stop_reason = "cancelled"
                await self._finish(end)
                raise
            # Our own stop() was handled here; on 3.11+ tell the task so, or later awaits
            # that rely on the cancel count (asyncio.timeout) would misbehave.
            task = asyncio.current_task()
            if task is not None and hasattr(task, "uncancel"):
                task.uncancel()
        except LLMError as err:
            error = {"kind": err.kind, "message": one_line(err, host.redact)}
            end = TurnEnd("error", self._partial(), error=error)
            host.log.warning(
                "%s %s failed (%s): %s", self.noun, self.message_id, err.kind, error["message"]
            )
        except Exception as err:
            error = {"kind": "internal", "message": "Internal error; see the server log."}
            end = TurnEnd("error", self._partial(), error=error)
            host.log.error(
                "%s %s failed:\n%s",
                self.noun,
                self.message_id,
                redact_traceback(err, host.redact),
            )
        await self._finish(end)

    async def _finish(self, end: TurnEnd) -> None:
        """Save the reply (whatever there is of it), release the slot, send the last event."""
        self._finishing = True
        host = self.host
        if self._timer is not None:
            self._timer.cancel()
        self._before_save()
        # A model may send lone surrogates (JSON escapes): stored and sent as U+FFFD.
        text = repair_text(host.redact(end.text))
        text, self.checks = self._guarded(text)
        steps = self._steps()
        reply = ChatMessage(
            id=self.message_id,
            role="assistant",
            content=text,
            model=self.model_name,
            created=utc_now(),
            status=end.status,
            error=end.error["message"] if end.error else "",
            steps=steps,
            usage=self.usage.as_dict(),
            checks=self.checks,
            plan=self._plan(),
            numbers=self.numbers,
        )
        history = host.history
        notice = ""
        try:
            stored, notice = await history.run(
                _save_reply, history.store, self.notebook, self.chat_id, reply
            )
            steps = tuple(stored.steps) if stored is not None else steps
        except HistoryError:
            # The chat was cleared while the reply streamed: nothing left to add it to.
            host.log.debug("Chat %s is gone; %s not saved.", self.chat_id, self.message_id)
        except Exception as err:
            host.log.error(
                "Could not save %s %s:\n%s",
                self.noun.lower(),
                self.message_id,
                redact_traceback(err, host.redact),
            )
        finally:
            self._release()
        if notice:  # e.g. the disk is full: the answer shows, and the chat says it is not kept
            self._queue.put_nowait(Notice(notice))
        if end.error is not None:
            self._queue.put_nowait(Error(end.error["kind"], end.error["message"]))
        else:
            self._queue.put_nowait(self._last_event(end, text, steps))
        host.log.debug(
            "%s %s %s (%s, %d chars, %d steps)",
            self.noun,
            self.message_id,
            end.status,
            self._stop_reason or end.halt or "finished",
            len(text),
            len(steps),
        )

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
