"""Fix and Edit with AI's **Accept and run** under ``Chapyter.run_policy``, no tornado: the
decision every driver makes (:mod:`chapyter_ext.policy.consent`), in two halves around the
browser, which alone reaches the kernel.

1. With the proposal (:func:`run_plan`): run at once, hold (one line naming the setting), or
   try first: the proposal then carries the user expression that makes the trial.
2. ``POST chapyter-ext/fix/trial`` (:func:`trial_decision`): the kernel's report comes back
   through the browser and the answer is whether the accepted code runs now (and the guard to
   arm first) or is left for the user, with what the trial saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..chat import ChatError, parse_context
from ..context.notebook import snapshot_modules, user_functions
from ..policy.consent import ASK, RUN, Plan, after_trial, plan
from ..trial.kernel import expression, trial_expression
from ..trial.report import TrialReport
from ..trial.run import TrialLimits

#: The setting named in every line that holds code back.
SETTING = "(setting: Run policy)"


def _plan(
    code: str, run_policy: str, context: Any, trials: bool, secret_names: Iterable[str]
) -> Plan:
    return plan(
        run_policy,
        code,
        known_functions=user_functions(context),
        known_types=snapshot_modules(context),
        trials=trials,
        secret_names=secret_names,
    )


def run_plan(
    code: str,
    run_policy: str,
    context: Any,
    *,
    trials: bool,
    limits: TrialLimits,
    secret_names: Iterable[str] = (),
) -> tuple[str | None, str | None]:
    """``(hold, trial)``: why **Accept and run** is not offered (one line), or the user
    expression to try the code with first; both None: it may run at once. ``secret_names``:
    ``Chapyter.secret_variables()``."""
    chosen = _plan(code, run_policy, context, trials, secret_names)
    if chosen.refused:
        return f"{chosen.refused} {SETTING}", None
    if chosen.action == RUN:
        return None, None
    if chosen.action == ASK or run_policy == "ask" or chosen.known:
        # Nothing a trial could show would make it run: it waits, saying why.
        first = next(iter(chosen.lines), "every answer waits for your review")
        return f"{first} {SETTING}", None
    return None, trial_expression(code, limits)


@dataclass(frozen=True)
class FixTrial:
    """A parsed ``POST chapyter-ext/fix/trial`` body: the accepted code and its trial."""

    code: str
    report: TrialReport
    context: Any = None

    @classmethod
    def parse(cls, body: dict[str, Any]) -> FixTrial:
        """Validate a JSON body; :class:`ChatError` (``bad_request``) names what is wrong."""
        code = body.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ChatError("bad_request", "'code' must be a non-empty string.")
        failure = body.get("failure")
        if isinstance(failure, dict):
            report = TrialReport.kernel_failed(
                str(failure.get("ename", "Error"))[:100], str(failure.get("evalue", ""))[:300]
            )
        else:
            try:
                report = TrialReport.from_dict(body.get("report"))
            except ValueError as err:
                raise ChatError("bad_request", str(err)) from None
        context = parse_context(body["context"]) if body.get("context") is not None else None
        return cls(code, report, context)


def trial_decision(
    request: FixTrial, run_policy: str, redact: Any, secret_names: Iterable[str] = ()
) -> dict[str, Any]:
    """``{"run", "guard", "why", "concerns", "preview", "unavailable"}``: whether the code
    runs now (arming ``guard`` first), else the one line saying why it waits."""
    chosen = _plan(request.code, run_policy, request.context, True, secret_names)
    if chosen.refused:
        return _answer(False, None, f"{chosen.refused} {SETTING}", (), (), "", redact)
    consent = after_trial(chosen, request.report)
    guard = expression("arm", request.code) if consent.guarded else None
    why = "" if consent.run else f"{consent.why} {SETTING}"
    return _answer(
        consent.run, guard, why, consent.concerns, consent.preview, consent.unavailable, redact
    )


def _answer(
    run: bool,
    guard: str | None,
    why: str,
    concerns: Any,
    preview: Any,
    unavailable: str,
    redact: Any,
) -> dict[str, Any]:
    return {
        "run": run,
        "guard": guard,
        "why": redact(why),
        "concerns": [redact(line) for line in concerns],
        "preview": [redact(line) for line in preview],
        "unavailable": unavailable,
    }
