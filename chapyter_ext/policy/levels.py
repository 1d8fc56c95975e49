"""How sure a reason is (its level), and the reason itself: what the trial, which runs
unproven code first in a confined fork of the kernel, decides on (:mod:`.decide` re-exports
them)."""

from __future__ import annotations

from dataclasses import dataclass

#: Allowed today by a name-based guess only (a safe-sounding method of an object of unknown
#: type, an attribute set on one): runs unasked when no trial can be made, the trial decides
#: when one can.
LIKELY = "likely"
#: Not known to be safe: the trial decides when one can be made, asks otherwise.
UNPROVEN_LEVEL = "unproven"
#: A named harm, or code that could tell a trial from the real run or tamper with it: always
#: asks.
KNOWN = "known"
#: Levels by strength: one reason per category, the strongest found (the first of those).
RANK = {LIKELY: 0, UNPROVEN_LEVEL: 1, KNOWN: 2}


@dataclass(frozen=True)
class Reason:
    """Why code may need approval: its category (one of :mod:`.categories`), one line naming
    the code (as :func:`~.decide.classify` gives it), and how sure the analysis is."""

    category: str
    text: str
    level: str
