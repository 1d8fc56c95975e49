"""The small model's candidate loop for ``%%ai``: up to :data:`CANDIDATES` answers, each
checked against the kernel's namespace, hotter each time; the first that passes wins."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..guards import check_candidate
from ..parsing import NoCodeError, extract_code
from .code_prompt import CANDIDATES, candidate_request, failed_message

if TYPE_CHECKING:
    from ..llm import Endpoint

__all__ = ["NoPassingCandidate", "first_passing_candidate"]


class NoPassingCandidate(Exception):
    """No candidate passed the checks; ``str()`` is the one line to show
    (:func:`~chapyter_ext.small_model.failed_message`)."""


def first_passing_candidate(
    endpoint: Endpoint,
    ask: Callable[[Endpoint, dict | None], Any],
    namespace: Mapping[str, Any],
    request: str,
    *,
    restart: Callable[[str], None],
) -> tuple[str, Any, Endpoint]:
    """``(code, completion, endpoint asked)`` of the first candidate that passes.

    ``ask(endpoint, extra_body)`` returns a completion (its ``text`` holds the answer);
    ``restart(note)`` is told before each later candidate why the one before failed.
    Raises :class:`NoPassingCandidate` when none passes.
    """
    problem = ""
    for index in range(CANDIDATES):
        if index:
            restart(f"candidate {index + 1} of {CANDIDATES} ({problem})")
        asked, extra_body = candidate_request(endpoint, index)
        # The same messages each time: told what was wrong, SmolLM2 did worse (8/20 vs 11/20).
        completion = ask(asked, extra_body)
        try:
            code = extract_code(completion.text)
        except NoCodeError:
            problem = "no code"
            continue
        candidate = check_candidate(code, namespace, request)
        if candidate.problem is None:
            return candidate.code, completion, asked
        problem = candidate.problem
    raise NoPassingCandidate(failed_message(problem))
