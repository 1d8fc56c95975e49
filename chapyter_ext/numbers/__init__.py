"""Checked numbers: every number of a model's answer, found or not in what its turn saw.

When an agent turn ends, the numbers of its final answer are matched against the texts the turn
saw (cell outputs, variable summaries, tool results), allowing for the answer's rounding,
thousands separators, percentages, signs and units; a number that matches nothing is "not found
in this turn's outputs". The agent turn, the browser's marks, headless provenance and
``chapyter-ext check`` all read the verdicts from here. The rules are tested against
``tests/vectors/numbers.json``; a false "found" is the one mistake the table must not hold.

Layout: :mod:`.extract` (:func:`find_numbers`: what is a number in Markdown prose and in an
output, with its span, value and precision; what is not: dates, times, years, versions,
ordinals, list markers, identifiers, code), :mod:`.match` (:func:`check_numbers`,
:class:`SeenIndex`: the seen numbers sorted once, each answer number a binary search).
Pure: no I/O, no other module of the package.
"""

from __future__ import annotations

from .extract import NumberMention, find_numbers, skip_code
from .match import (
    FOUND,
    MAX_WHERE,
    NOT_FOUND,
    TRIVIAL,
    NumberVerdict,
    Seen,
    SeenIndex,
    Source,
    check_numbers,
)

__all__ = [
    "FOUND",
    "MAX_WHERE",
    "NOT_FOUND",
    "TRIVIAL",
    "NumberMention",
    "NumberVerdict",
    "Seen",
    "SeenIndex",
    "Source",
    "check_numbers",
    "find_numbers",
    "skip_code",
]
