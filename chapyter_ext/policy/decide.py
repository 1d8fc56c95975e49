"""The decisions: why code may need approval (``classify``), and whether a policy (``ask``,
``risky``, ``never``) asks or holds it."""

from __future__ import annotations

from collections.abc import Iterable

from .calls import Cell


def classify(code: str, *, known_functions: Iterable[str] = ()) -> list[str]:
    """Why ``code`` may need approval: one line per category found, naming the first code
    found in it, in order ([] when the code is proven to only compute, read and plot).
    ``known_functions``: the notebook's own functions and classes, defined by cells that ran
    (:func:`defined_functions`); calling them is allowed."""
    found: dict[str, str] = {}
    Cell.classify_into(code, found, frozenset(known_functions))
    return list(found.values())


def needs_approval(policy: str, reasons: list[str]) -> bool:
    """Whether ``policy`` ("ask", "risky" or "never") asks before running code with
    ``reasons`` (from :func:`classify`)."""
    if policy == "never":
        return False
    return bool(reasons) if policy == "risky" else True


def approval(
    policy: str, code: str, *, known_functions: Iterable[str] = ()
) -> tuple[bool, list[str]]:
    """``(needs_approval, reasons)`` for running ``code`` under ``policy``."""
    reasons = classify(code, known_functions=known_functions)
    return needs_approval(policy, reasons), reasons


def hold_reason(policy: str, code: str, *, known_functions: Iterable[str] = ()) -> str | None:
    """Why ``code`` written by a model must wait for the user instead of running at once under
    ``policy`` (``Chapyter.run_policy``: "never", "risky" or "ask"), as one line; None: it may
    run. ``risky`` holds what :func:`classify` cannot prove safe, naming the first cause."""
    if policy == "never":
        return None
    if policy == "ask":
        return "every answer waits for your review"
    reasons = classify(code, known_functions=known_functions)
    return reasons[0] if reasons else None
