"""The one decision before model-written code runs, the same for every driver (the browser's
agent, the server, ``chapyter-ext agent``, ``%%ai``'s auto-run, Fix's **Accept and run**):
run it now, try it first in a confined copy of the kernel, or ask.

1. :func:`plan`: the static analysis (:func:`~.decide.analyse`) proves it harmless → **run**;
   otherwise, where a trial can be made → **trial** (also under ``ask``, for the approval
   card's preview; and for code the analysis already knows does harm, so the card can say what
   it tried); else → **ask** (``risky`` still runs code whose only reasons are ``LIKELY``
   name-based guesses, as before trials existed).
2. :func:`after_trial`: under ``risky``, a clean trial (it tried nothing, showed nothing
   remote, ran whole) of code with no ``KNOWN`` reason → **run**, guarded (the real run is held
   to what the trial showed, :mod:`chapyter_ext.trial.guard`); anything else → **ask**, listing
   what the trial saw. An unavailable trial → as step 1 without trials, with the reason told
   once.

Policies: ``never`` runs everything (no analysis beyond refusing a call of ``%ai``), ``ask``
always asks, ``risky`` as above.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .categories import MAGIC_CALL
from .decide import analyse
from .levels import KNOWN, LIKELY, UNPROVEN_LEVEL, Reason

if TYPE_CHECKING:
    from ..trial.report import TrialReport

RUN = "run"
TRIAL = "trial"
ASK = "ask"
#: The line of a call of ``%ai`` from model code: never run, whatever the policy.
MAGIC_REFUSAL = "The model's code calls %ai (it would ask the model again); not run."


@dataclass(frozen=True)
class Plan:
    """What to do first with one piece of model code (:func:`plan`)."""

    action: str
    policy: str
    #: The static analysis's reasons, strongest level first within their order.
    reasons: tuple[Reason, ...] = ()
    #: Set when the code must not run at all (it calls ``%ai``).
    refused: str = ""

    @property
    def lines(self) -> tuple[str, ...]:
        """The reasons' one-line texts (what runs without a trial leaves its name-based
        guesses out: they decided nothing)."""
        if self.action == RUN:
            return tuple(r.text for r in self.reasons if r.level != LIKELY)
        return tuple(r.text for r in self.reasons)

    @property
    def known(self) -> bool:
        """Whether the analysis names a harm (or a way to fool a trial): it always asks."""
        return any(r.level == KNOWN for r in self.reasons)


@dataclass(frozen=True)
class Consent:
    """The decision once a trial ran (or could not): run now or ask, and what to show."""

    run: bool
    #: Run with the guard armed: the trial cleared it (:mod:`chapyter_ext.trial.guard`).
    guarded: bool = False
    #: The static analysis's lines.
    reasons: tuple[str, ...] = ()
    #: What the trial saw that makes it ask ("tried to write report.csv").
    concerns: tuple[str, ...] = ()
    #: What the trial showed and changed ("prints: 42", "creates total (int: 42)").
    preview: tuple[str, ...] = ()
    #: Why no trial could be made, when none could (told once per chat).
    unavailable: str = ""

    @property
    def why(self) -> str:
        """The first line saying why it asks ("" when it runs)."""
        if self.run:
            return ""
        return next(iter(self.concerns or self.reasons), "every run waits for your review")


def plan(
    policy: str,
    code: str,
    *,
    known_functions: Iterable[str] = (),
    known_types: Mapping[str, str] | None = None,
    trials: bool = True,
    secret_names: Iterable[str] = (),
) -> Plan:
    """Step 1 (see the module); ``trials``: False when this kernel is known to have none;
    ``secret_names``: extra secret variable names (:func:`~.decide.analyse`)."""
    reasons = tuple(
        analyse(
            code,
            known_functions=known_functions,
            known_types=known_types,
            secret_names=secret_names,
        )
    )
    if any(r.category == MAGIC_CALL for r in reasons):
        return Plan(ASK, policy, reasons, refused=MAGIC_REFUSAL)
    if policy == "never":
        return Plan(RUN, policy, reasons)
    if not reasons:
        return Plan(ASK if policy == "ask" else RUN, policy, reasons)
    if trials:
        return Plan(TRIAL, policy, reasons)
    return Plan(_without_trial(policy, reasons), policy, reasons)


def _without_trial(policy: str, reasons: tuple[Reason, ...]) -> str:
    if policy == "ask" or any(r.level in (KNOWN, UNPROVEN_LEVEL) for r in reasons):
        return ASK
    return RUN if all(r.level == LIKELY for r in reasons) else ASK


def after_trial(chosen: Plan, report: TrialReport) -> Consent:
    """Step 2 (see the module): the decision once ``report`` came back for ``chosen``."""
    from ..trial.report import UNAVAILABLE

    lines = chosen.lines
    if report.status == UNAVAILABLE:
        action = _without_trial(chosen.policy, chosen.reasons)
        return Consent(run=action == RUN, reasons=lines, unavailable=report.reason)
    concerns = tuple(report.concerns())
    preview = tuple(report.preview())
    runs = chosen.policy == "risky" and not chosen.known and not concerns
    return Consent(
        run=runs,
        guarded=runs,
        reasons=() if runs else lines,
        concerns=concerns,
        preview=preview,
    )


def without_trial(chosen: Plan) -> Consent:
    """The decision for a plan that needs no trial (``RUN`` or ``ASK``)."""
    return Consent(run=chosen.action == RUN, reasons=chosen.lines)
