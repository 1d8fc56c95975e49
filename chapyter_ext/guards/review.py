"""Review first with the bundled model: its code is offered to read and run by hand, never to
run at once (``%%ai``'s auto-run, Fix's Accept and run, the chat's Insert and run, an agent
step run unasked), unless ``Chapyter.local_review`` is off. One decision and one line for
every feature."""

from __future__ import annotations

from typing import Any

__all__ = ["REVIEW_NOTE", "review_first"]

#: What every feature says of code held for review (the setting's name as a newcomer reads it).
REVIEW_NOTE = "waits for your review (setting: Local review)"


def review_first(settings: Any, *, local: bool) -> bool:
    """Whether code from the model must wait for the user: ``local`` (the bundled model
    answers) and ``settings.local_review`` is on."""
    return bool(local and settings.local_review)
