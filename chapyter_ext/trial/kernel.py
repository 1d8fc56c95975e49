"""The trial's entry points IN THE KERNEL, read by a silent request's ``user_expressions``
(the browser's, the headless driver's): each returns a value IPython shows as
``application/json``. :func:`expression` builds the exact expression, so drivers never quote
Python themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .run import TrialLimits


class Answer(dict):
    """A dict IPython shows as ``application/json`` (and briefly as text)."""

    def _repr_json_(self) -> dict:
        return dict(self)

    def __repr__(self) -> str:
        return "<chapyter-ext trial answer>"


def trial(
    shell: Any, code: str, time_limit: float = 10.0, memory_mb: int = 2048, measure: bool = False
) -> Answer:
    """Run ``code`` in a confined copy of this kernel; its report (``TrialReport.as_dict``).
    ``measure``: with the memory the child added, for benchmarks."""
    from .report import TrialReport
    from .run import TrialLimits, run_trial

    try:
        limits = TrialLimits(float(time_limit), int(memory_mb))
        report = run_trial(shell, code, limits, measure=bool(measure))
    except KeyboardInterrupt:
        raise
    except Exception as err:  # the trial machinery itself failed: no trial, said why
        report = TrialReport.unavailable(f"the trial failed to start ({type(err).__name__}: {err})")
    return Answer(report.as_dict())


def arm(shell: Any, code: str) -> Answer:
    """Guard the next run of exactly ``code`` (:mod:`.guard`)."""
    from .guard import arm as arm_guard

    return Answer(arm_guard(shell, code))


def trial_expression(code: str, limits: TrialLimits) -> str:
    """The user expression that tries ``code`` within ``limits``."""
    return expression("trial", code, float(limits.time_limit), int(limits.memory_mb))


def expression(function: str, *args: Any) -> str:
    """The user expression calling ``function`` of this module with ``get_ipython()`` and
    ``args`` (Python literals)."""
    shown = "".join(f", {a!r}" for a in args)
    return (
        f"__import__('chapyter_ext.trial.kernel', fromlist=[{function!r}])"
        f".{function}(get_ipython(){shown})"
    )
