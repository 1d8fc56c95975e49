"""The decisions: why code may need approval and how sure that is (``analyse``, ``classify``),
and whether a policy (``ask``, ``risky``, ``never``) asks or holds it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .calls import Cell
from .levels import KNOWN, LIKELY, UNPROVEN_LEVEL, Reason

__all__ = [
    "KNOWN",
    "LIKELY",
    "UNPROVEN_LEVEL",
    "Reason",
    "analyse",
    "approval",
    "classify",
    "hold_reason",
    "needs_approval",
]


def analyse(
    code: str,
    *,
    known_functions: Iterable[str] = (),
    known_types: Mapping[str, str] | None = None,
    secret_names: Iterable[str] = (),
) -> list[Reason]:
    """Why ``code`` may need approval, with how sure each reason is: one per category found,
    naming the first code found in it at its strongest level, in order ([] when the code is
    proven to only compute, read and plot).

    ``known_functions``: the notebook's own functions and classes, defined by cells that ran
    (:func:`~.known.defined_functions`); calling them is allowed. ``known_types``: what the
    notebook's names hold, ``"module.QualName"`` of a value's type or ``"module:<name>"`` for a
    module (:func:`~.known.namespace_types`); a name it types is checked precisely, one it does
    not is an object of unknown type whose safe-sounding methods are ``LIKELY``.
    ``secret_names``: environment variables that hold secrets beyond those the redactor's rule
    names (``OPENAI_API_KEY``, ``*_TOKEN``...), as names or shell-style patterns
    (``MYCORP_*``); reading one, like reading any secret, is ``KNOWN``."""
    found: dict[str, Reason] = {}
    Cell.classify_into(code, found, frozenset(known_functions), known_types, secret_names)
    return list(found.values())


def classify(
    code: str,
    *,
    known_functions: Iterable[str] = (),
    known_types: Mapping[str, str] | None = None,
    secret_names: Iterable[str] = (),
) -> list[str]:
    """Why ``code`` may need approval where no trial decides: the one-line texts of
    :func:`analyse`'s reasons but the ``LIKELY`` ones (what a name-based guess allows)."""
    reasons = analyse(
        code, known_functions=known_functions, known_types=known_types, secret_names=secret_names
    )
    return [reason.text for reason in reasons if reason.level != LIKELY]


def needs_approval(policy: str, reasons: list[str]) -> bool:
    """Whether ``policy`` ("ask", "risky" or "never") asks before running code with
    ``reasons`` (from :func:`classify`)."""
    if policy == "never":
        return False
    return bool(reasons) if policy == "risky" else True


def approval(
    policy: str,
    code: str,
    *,
    known_functions: Iterable[str] = (),
    known_types: Mapping[str, str] | None = None,
    secret_names: Iterable[str] = (),
) -> tuple[bool, list[str]]:
    """``(needs_approval, reasons)`` for running ``code`` under ``policy``."""
    reasons = classify(
        code, known_functions=known_functions, known_types=known_types, secret_names=secret_names
    )
    return needs_approval(policy, reasons), reasons


def hold_reason(
    policy: str,
    code: str,
    *,
    known_functions: Iterable[str] = (),
    known_types: Mapping[str, str] | None = None,
    secret_names: Iterable[str] = (),
) -> str | None:
    """Why ``code`` written by a model must wait for the user instead of running at once under
    ``policy`` (``Chapyter.run_policy``: "never", "risky" or "ask"), as one line; None: it may
    run. ``risky`` holds what :func:`classify` cannot prove safe, naming the first cause."""
    if policy == "never":
        return None
    if policy == "ask":
        return "every answer waits for your review"
    reasons = classify(
        code, known_functions=known_functions, known_types=known_types, secret_names=secret_names
    )
    return reasons[0] if reasons else None
