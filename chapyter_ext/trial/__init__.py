"""Confined trial runs: model-written code that the static analysis cannot prove harmless runs
first in a confined copy of the kernel, which already holds every variable, and the step runs
for real unasked only if that trial tried nothing.

How (Linux): the kernel forks (copy-on-write, no copy of any data); the child confines itself
(Landlock: no write outside a scratch folder; seccomp: no socket, no program, no other
process; rlimits; no capability; every inherited descriptor neutralised, :mod:`.confine`),
takes the kernel's output channels over (:mod:`.capture`), records every attempt at a side
effect through a Python audit hook the moment it is made (:mod:`.attempts`, :mod:`.watch`),
runs the step once as IPython would, and reports what it tried and showed: output, displays,
figures, variables created, changed or deleted, state it changed for later cells
(:mod:`.state`, :mod:`.fingerprint`). The kernel reads the report, stops the child at the time
limit, and keeps nothing of it (:mod:`.run`). A step cleared by its trial then runs under a
guard that stops any attempt the trial did not show (:mod:`.guard`).

Entry points: :func:`run_trial` in the kernel (``%%ai``), :mod:`.kernel`'s user expressions
for drivers outside it (the browser, the headless CLI), :class:`TrialReport` for everyone who
reads a report. Where trials cannot run (not Linux, no Landlock, no libseccomp, a kernel
without chapyter-ext) the report says why in one line and the policy falls back to the
static analysis alone.
"""

from __future__ import annotations

from .attempts import Attempt
from .report import CRASHED, RAN, TIMEOUT, UNAVAILABLE, TrialReport
from .run import TrialLimits, run_trial

__all__ = [
    "CRASHED",
    "RAN",
    "TIMEOUT",
    "UNAVAILABLE",
    "Attempt",
    "TrialLimits",
    "TrialReport",
    "run_trial",
]
