"""Undo's entry points IN THE KERNEL, read by a silent request's ``user_expressions`` (the
browser's, the headless driver's) or called by ``%%ai``: each returns a value IPython shows as
``application/json``. :func:`expression` builds the exact expression, so drivers never quote
Python themselves.

- ``take(shell, turn, step)`` -> ``{ok, why}``: snapshot the kernel before ``step`` (0-based) of
  ``turn``.
- ``preview(shell, turn, step)`` -> ``{available, why, restore, remove, cannot, line}``: what
  Undo to before that step would restore, remove and not bring back.
- ``restore(shell, turn, step)`` -> ``{ok, restored, removed, cannot, line}``: do it.
- ``release(shell, turn)`` -> ``{ok}``: drop the turn's snapshots.
"""

from __future__ import annotations

import contextlib
from typing import Any


class Answer(dict):
    """A dict IPython shows as ``application/json`` (and briefly as text)."""

    def _repr_json_(self) -> dict:
        return dict(self)

    def __repr__(self) -> str:
        return "<chapyter-ext undo answer>"


def _limits(shell: Any) -> tuple[int, int]:
    """``Chapyter.undo_turns`` and ``Chapyter.undo_memory_mb`` as this kernel has them."""
    from ..config import Chapyter

    found = [c for c in getattr(shell, "configurables", ()) if isinstance(c, Chapyter)]
    settings = found[-1] if found else Chapyter(parent=shell)
    return int(settings.undo_turns), int(settings.undo_memory_mb)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:8])
    return shown + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def _cannot_line(cannot: list[dict[str, str]]) -> str:
    return ", ".join(f"{c['name']} ({c['why']})" for c in cannot[:8]) + (
        f" and {len(cannot) - 8} more" if len(cannot) > 8 else ""
    )


def line(back: list[str], remove: list[str], cannot: list[dict[str, str]], *, done: bool) -> str:
    """One line: what Undo restores (or restored), removes and cannot bring back."""
    parts = []
    if back:
        parts.append(f"{'restored' if done else 'restores'} {_names(back)}")
    if remove:
        parts.append(f"{'removed' if done else 'removes'} {_names(remove)}")
    if cannot:
        parts.append(f"{'could not restore' if done else 'cannot restore'} {_cannot_line(cannot)}")
    if not parts:
        return "The variables are as they were: nothing to restore."
    text = "; ".join(parts)
    return f"{text[0].upper()}{text[1:]}." if done else f"Undo {text}."


def _changes(shell: Any, turn: str, step: int) -> tuple[Any, Any]:
    """The snapshot (or why there is none) and what changed since (None without one)."""
    from .store import compare, store, user_names

    frozen = store().find(str(turn), int(step))
    if isinstance(frozen, str):
        return frozen, None
    return frozen, compare(frozen.names, user_names(shell))


def take(shell: Any, turn: str, step: int) -> Answer:
    """Snapshot the kernel before ``step`` of ``turn`` (see the module)."""
    from .store import store

    try:
        why = store().take(shell, str(turn), int(step), *_limits(shell))
    except Exception as err:  # the machinery failed: no snapshot, said why
        why = f"no snapshot ({type(err).__name__}: {err})"
    return Answer(ok=why is None, why=why)


def preview(shell: Any, turn: str, step: int) -> Answer:
    """What Undo to before ``step`` of ``turn`` would do (see the module)."""
    frozen, changes = _changes(shell, turn, step)
    if changes is None:
        why = str(frozen)
        return Answer(available=False, why=why, restore=[], remove=[], cannot=[], line=why)
    back = changes.back
    try:
        answer, _ = frozen.ask({"op": "check", "names": back}, 30.0) if back else ({}, [])
    except ConnectionError as err:
        return Answer(
            available=False, why=str(err), restore=[], remove=[], cannot=[], line=str(err)
        )
    cannot = [{"name": n, "why": w} for n, w in sorted(answer.get("cannot", {}).items())]
    restore = [n for n in back if n not in answer.get("cannot", {})]
    return Answer(
        available=True,
        why=None,
        restore=restore,
        remove=changes.created,
        cannot=cannot,
        line=line(restore, changes.created, cannot, done=False),
    )


def restore(shell: Any, turn: str, step: int) -> Answer:
    """Put the user's variables back as they were before ``step`` of ``turn``."""
    from .store import store

    frozen, changes = _changes(shell, turn, step)
    if changes is None:
        why = f"Nothing restored: {frozen}."
        return Answer(ok=False, restored=[], removed=[], cannot=[], line=why)
    try:
        values, failed = store().values(frozen, changes.back) if changes.back else ({}, {})
    except KeyboardInterrupt:
        raise
    except Exception as err:  # the child is gone, or a value did not unpickle here
        said = str(err) if isinstance(err, ConnectionError) else f"{type(err).__name__}: {err}"
        return Answer(
            ok=False, restored=[], removed=[], cannot=[], line=f"Nothing restored: {said}."
        )
    namespace = shell.user_ns
    for name in changes.created:
        namespace.pop(name, None)
    namespace.update(values)
    kept = store()
    for key in [k for k in kept.frozen if k[0] == str(turn) and k[1] > int(step)]:
        kept.frozen.pop(key).release()  # states that were undone
    if values:
        # The child's pages now differ from the kernel's copy of the same values: a fresh
        # snapshot of the state it restored shares them again (and Undo stays possible).
        with contextlib.suppress(Exception):  # no new snapshot: Undo to here says why
            kept.take(shell, str(turn), int(step), *_limits(shell))
    cannot = [{"name": n, "why": w} for n, w in sorted(failed.items())]
    restored = sorted(values)
    return Answer(
        ok=True,
        restored=restored,
        removed=changes.created,
        cannot=cannot,
        line=line(restored, changes.created, cannot, done=True),
    )


def release(shell: Any, turn: str) -> Answer:
    """Drop ``turn``'s snapshots (their children end)."""
    from .store import store

    store().release(str(turn))
    return Answer(ok=True)


def expression(function: str, *args: Any) -> str:
    """The user expression calling ``function`` of this module with ``get_ipython()`` and
    ``args`` (Python literals)."""
    shown = "".join(f", {a!r}" for a in args)
    return (
        f"__import__('chapyter_ext.snapshot.kernel', fromlist=[{function!r}])"
        f".{function}(get_ipython(){shown})"
    )
