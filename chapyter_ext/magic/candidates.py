"""The small model's candidate loop for ``%%ai``: up to :data:`CANDIDATES` answers, each
checked against the kernel's namespace, hotter each time; the first that passes wins.

Where the kernel can make confined trials (:mod:`chapyter_ext.trial`), a candidate that passed
the checks is also tried once in a confined copy of the kernel, and one that raised there is
refused like one that failed a check: the next is asked. The trial's report comes back with
the winner, so the consent decision reuses it instead of trying the same code twice."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..guards import check_candidate
from ..parsing import NoCodeError, extract_code
from ..profile import CANDIDATES, candidate_request, failed_message
from .small_prompt import CODE_GRAMMAR, SMALL_MAX_TOKENS

if TYPE_CHECKING:
    from ..llm import Endpoint
    from ..trial import TrialReport

__all__ = ["NoPassingCandidate", "first_passing_candidate", "kernel_trial", "raised_in_trial"]

#: Tries one candidate's code in a confined copy of the kernel.
Trial = Callable[[str], "TrialReport"]


class NoPassingCandidate(Exception):
    """No candidate passed the checks; ``str()`` is the one line to show
    (:func:`~chapyter_ext.profile.failed_message`)."""


def kernel_trial(shell: Any, settings: Any) -> Trial | None:
    """How to try a candidate in ``shell``'s kernel (``Chapyter.trials`` on), or None. Where
    no trial can be made the report says so and the candidate is taken as before."""
    if not settings.trials:
        return None
    from ..trial import TrialLimits, run_trial

    limits = TrialLimits.from_settings(settings)
    return lambda code: run_trial(shell, code, limits)


def raised_in_trial(report: TrialReport | None) -> str | None:
    """Why a tried candidate is refused: it ran and raised an error of its own (one line),
    else None. An error the confinement caused (a refused write or socket, the trial's memory
    cap), a time limit or an unavailable trial say nothing about the code being wrong."""
    if report is None:
        return None
    from ..trial import RAN

    if report.status != RAN or not report.error:
        return None
    error = report.error
    if error.get("refused") or error.get("memory"):
        return None
    name = str(error.get("ename") or "an error")
    value = " ".join(str(error.get("evalue") or "").split())[:80]
    return f"it raised {name}{': ' + value if value else ''} when tried"


def first_passing_candidate(
    endpoint: Endpoint,
    ask: Callable[[Endpoint, dict | None], Any],
    namespace: Mapping[str, Any],
    request: str,
    *,
    restart: Callable[[str], None],
    trial: Trial | None = None,
) -> tuple[str, Any, Endpoint, TrialReport | None]:
    """``(code, completion, endpoint asked, its trial's report)`` of the first candidate that
    passes (the report is None without ``trial``).

    ``ask(endpoint, extra_body)`` returns a completion (its ``text`` holds the answer);
    ``restart(note)`` is told before each later candidate why the one before failed;
    ``trial(code)`` (:func:`kernel_trial`) tries a candidate that passed the checks.
    Raises :class:`NoPassingCandidate` when none passes.
    """
    problem = ""
    for index in range(CANDIDATES):
        if index:
            restart(f"candidate {index + 1} of {CANDIDATES} ({problem})")
        asked, extra_body = candidate_request(
            endpoint, index, grammar=CODE_GRAMMAR, max_tokens=SMALL_MAX_TOKENS
        )
        # The same messages each time: told what was wrong, SmolLM2 did worse (8/20 vs 11/20).
        completion = ask(asked, extra_body)
        try:
            code = extract_code(completion.text)
        except NoCodeError:
            problem = "no code"
            continue
        candidate = check_candidate(code, namespace, request)
        if candidate.problem is not None:
            problem = candidate.problem
            continue
        report = trial(candidate.code) if trial is not None else None
        raised = raised_in_trial(report)
        if raised is None:
            return candidate.code, completion, asked, report
        problem = raised
    raise NoPassingCandidate(failed_message(problem))
