"""Each number of an answer, found or not in what the turn saw (outputs, variables, tool results).

A number of the answer is found when a number of a seen text rounds to it at the answer's own
precision: ``3.14`` and ``3.1`` are found in ``3.14159``, ``3`` is not found in ``3.6``, ``1.2M``
in ``1,234,567``, ``1.23 million`` in ``1234567`` (each bound inclusive). Only the answer's
precision counts: ``3.14159`` is not found in ``3.14`` (digits the turn never saw). Integers
are exact: ``1,200`` is not found in ``1234``.

- A percent is found as written or as a fraction: ``12.5%`` in ``12.5``, ``12.5%`` or
  ``0.125``; a plain number is found in a percent as written (``12.5`` in ``12.5%``) and in a
  fraction only through a percent (``0.125`` in ``12.5%``), never by a factor of 100 otherwise
  (``0.12`` is not found in ``12``, nor ``12`` in ``0.12``).
- Signs must agree: ``−5`` and ``-5`` are found in ``-5``; ``5`` is not found in ``-5``
  (a direction in words is not read, so "fell 5%" against ``-5%`` is not found: a false "not
  found", never a false "found").
- Units and currencies are kept but not compared: ``12 kg`` is found in ``12``.
- A bare integer from 0 to 10 (no sign, decimals, percent, unit or magnitude) is ``trivial``:
  a count in prose ("3 columns") that almost any output holds (index labels, shapes), so it is
  neither vouched for nor flagged.

What "found" cannot tell: that the seen number is the same quantity (any number of any seen
text counts, an index label too). Known misses, all on the safe side: units are not converted
(``3.5 ms`` against ``0.0035 s``), a rounded integer is not read as approximate (``about
1,000`` against ``987``), a direction in words is not read (above).

Linear-ish: the seen numbers are read once into one sorted array; each answer number is a
binary search and a short walk.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .extract import NumberMention, find_numbers

__all__ = [
    "FOUND",
    "NOT_FOUND",
    "TRIVIAL",
    "NumberVerdict",
    "Seen",
    "SeenIndex",
    "Source",
    "check_numbers",
]

FOUND = "found"
NOT_FOUND = "not_found"
TRIVIAL = "trivial"
#: The sources named in a verdict, at most.
MAX_WHERE = 3
#: Values walked past in one window before giving up on more sources (the first one decides).
_MAX_WALK = 64
_EXCERPT_SIDE = 30
# Float noise: 0.1 * 3 is not 0.3.
_RELATIVE_SLACK = 1e-9


@dataclass(frozen=True)
class Seen:
    """A text the turn saw: ``kind`` is ``"output"``, ``"variable"`` or ``"tool"``."""

    kind: str
    label: str
    text: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Seen:
        """A seen text from its JSON form ``{kind, label, text}``."""
        return cls(str(data["kind"]), str(data["label"]), str(data["text"]))


@dataclass(frozen=True)
class Source:
    """Where a number was found: the seen text's kind and label, and the line around it."""

    kind: str
    label: str
    excerpt: str

    def to_json(self) -> dict[str, str]:
        """``{kind, label, excerpt}``."""
        return {"kind": self.kind, "label": self.label, "excerpt": self.excerpt}


@dataclass(frozen=True)
class NumberVerdict:
    """One number of the answer and whether the turn saw it (``where``: at most 3 sources)."""

    text: str
    start: int
    end: int
    value: float
    status: str
    where: tuple[Source, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The verdict as plain JSON values."""
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "value": self.value,
            "status": self.status,
            "where": [source.to_json() for source in self.where],
        }


def _excerpt(text: str, start: int, end: int) -> str:
    """The line around ``text[start:end]``, at most 30 characters either side, on one line."""
    left = text.rfind("\n", max(0, start - _EXCERPT_SIDE), start) + 1 or max(
        0, start - _EXCERPT_SIDE
    )
    right = text.find("\n", end, end + _EXCERPT_SIDE)
    if right < 0:
        right = min(len(text), end + _EXCERPT_SIDE)
    prefix = "…" if left > 0 and text[left - 1] != "\n" else ""
    suffix = "…" if right < len(text) and text[right] != "\n" else ""
    return prefix + " ".join(text[left:right].split()) + suffix


class SeenIndex:
    """The numbers of every seen text, read once and sorted by value."""

    def __init__(self, seen: Iterable[Seen]) -> None:
        self.sources = list(seen)
        first: dict[tuple[float, int], tuple[int, int]] = {}
        for number, source in enumerate(self.sources):
            for mention in find_numbers(source.text, prose=False):
                span = (mention.start, mention.end)
                first.setdefault((mention.value, number), span)
                if mention.percent:
                    first.setdefault((mention.value / 100, number), span)
        entries = sorted(first.items())
        self._values = [value for (value, _), _ in entries]
        self._refs = [(number, span) for (_, number), span in entries]

    def lookup(self, low: float, high: float) -> list[tuple[int, tuple[int, int]]]:
        """The first occurrence in each source (at most 3) of a value in ``[low, high]``."""
        hits: list[tuple[int, tuple[int, int]]] = []
        first = bisect_left(self._values, low)
        for i in range(first, min(first + _MAX_WALK, len(self._values))):
            if self._values[i] > high or len(hits) == MAX_WHERE:
                break
            number, span = self._refs[i]
            if all(number != seen for seen, _ in hits):
                hits.append((number, span))
        return hits

    def find(self, mention: NumberMention) -> list[tuple[int, tuple[int, int]]]:
        """Where the seen texts hold ``mention`` at its precision (its windows, in order)."""
        hits: list[tuple[int, tuple[int, int]]] = []
        windows = [(mention.value, mention.step / 2)]
        if mention.percent:
            windows.append((mention.value / 100, mention.step / 200))
        for value, half in windows:
            slack = half + abs(value) * _RELATIVE_SLACK
            low, high = value - slack, value + slack
            if value >= 0:
                low = max(low, 0.0)  # an unsigned number is not found in a negative one
            elif high > 0:
                high = 0.0
            for hit in self.lookup(low, high):
                if all(hit[0] != seen for seen, _ in hits) and len(hits) < MAX_WHERE:
                    hits.append(hit)
        return hits

    def verdict(self, mention: NumberMention) -> NumberVerdict:
        """``mention``'s verdict, with the sources that hold it."""
        if mention.bare and mention.value <= 10:
            return NumberVerdict(mention.text, mention.start, mention.end, mention.value, TRIVIAL)
        where = tuple(
            Source(
                self.sources[number].kind,
                self.sources[number].label,
                _excerpt(self.sources[number].text, *span),
            )
            for number, span in self.find(mention)
        )
        status = FOUND if where else NOT_FOUND
        return NumberVerdict(mention.text, mention.start, mention.end, mention.value, status, where)


def check_numbers(answer: str, seen: Iterable[Seen] | SeenIndex) -> list[NumberVerdict]:
    """Each number of ``answer`` (Markdown; code skipped), found or not in the ``seen`` texts.

    ``seen`` may be a :class:`SeenIndex` built once for several answers.
    """
    index = seen if isinstance(seen, SeenIndex) else SeenIndex(seen)
    return [index.verdict(mention) for mention in find_numbers(answer)]
