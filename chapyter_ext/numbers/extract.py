"""The numbers of a text, with their spans, the value they state and the precision they claim.

One reader for both sides of the check: the answer's Markdown (``prose=True``: code spans and
fenced blocks are skipped wholly, list markers and heading numbers are not numbers) and what the
turn saw (cell outputs, variable summaries, tool results: read as they are).

What is a number: integers and decimals, with thousands separators (``1,234,567``,
``1 234 567`` in prose only, ``1_000``), a sign (``-`` or the minus sign ``−``, attached), a
currency before or after (``$``, ``€``, ``£``, ``¥``), a percent (``12.5 %``, ``12.5%``,
``12.5 percent``), a magnitude (``1.2k``, ``3.4M``, ``5B``, ``2.1 million``, ``5 bn``),
scientific notation (``1.2e-3``, ``1.2 × 10^-3``) and a unit after it (``12 kg``, ``3.5 ms``:
kept, never compared).

What is not (each is skipped, so it is neither found nor missing): dates (``2024-03-01``,
``03/01/2024``, the day and year of ``March 3, 2024`` or ``3 March 2024``, ``2024-03``), times
(``12:30``), version strings (``3.11.2``, ``v2``, ``Python 3.11``), ordinals (``1st``),
digits inside identifiers, names or hashes (``df2``, ``x_1``, ``GPT-4``, ``4f3c2a1``,
``0xff``, ``3D``), references (``step 2``, ``cell [4]``, ``In [4]``, ``[1]``, ``#12``,
``figure 3``), paths, file names, link targets and URLs, fractions (``3/4``), comma lists
without spaces (``1,2,3``: a European decimal or a list, undecidable), a quoted digit (``'7'``)
and a year.

Years, decided here once: a bare integer from 1900 to 2100 is a year, not a number, when a
month name stands before it, when it follows ``in``, ``since``, ``during``, ``until``,
``from``, ``through``, ``before``, ``after``, ``between``, ``year``, ``FY`` or a quarter
(``Q3 2024``), when it is one end of a range of two such integers (``2019-2023``,
``2019 to 2023``), or when it names a decade (``1990s``). Anywhere else it is a number that
must be found (``a total of 2023 rows``).

Pure: no I/O, no other module of the package; linear in the text.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

__all__ = ["NumberMention", "find_numbers", "skip_code"]


class NumberMention(NamedTuple):
    """One number of a text: where it is, the value it states and the precision it claims."""

    #: The number as written, with its sign, currency, percent, magnitude and unit.
    text: str
    start: int
    end: int
    #: Signed, with the magnitude applied; a percent as written (``12.5%`` is 12.5).
    value: float
    #: The place of its last written digit (``3.14``: 0.01; ``1.2M``: 100000; ``12``: 1).
    step: float
    percent: bool = False
    #: The unit or currency written with it (``"kg"``, ``"$"``), or ``""``.
    unit: str = ""
    #: A plain unsigned integer with nothing around it (``3``, not ``3%``, ``-3`` or ``3 kg``).
    bare: bool = False
    #: Written with an explicit sign (``-5``, ``+5``, ``−5``).
    signed: bool = False


_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
)
_GROUP_SPACE = " \u00a0\u202f\u2009"
# Dates, times, versions and hex start where numbers start: matched first and skipped.
_PATTERN = (
    r"(?=[\d$€£¥.])(?<![^\W_])(?<![.,/\\#@:^'`\0])(?<![^\W_]_)(?<![^\W\d_]-)(?:(?P<skip>"
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
    r"|\d{4}/\d{1,2}/\d{1,2}"
    r"|\d{1,2}(?P<ds>[/.-])\d{1,2}(?P=ds)\d{2,4}(?!\d)"
    r"|\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"|(?:19|20)\d{2}-(?:0[1-9]|1[0-2])(?![\d-])"
    r"|0[xX][0-9a-fA-F]+"
    r"|\d+(?:\.\d+){2,}"
    r"|\d+/\d+"
    r")|(?:(?P<cur>[$€£¥])(?P<csign>[-−])?)?(?P<num>"
    r"(?P<int>\d{1,3}(?:,\d{3})+(?!\d)"
    r"{spaced}"
    r"|\d{1,3}(?:_\d{3})+(?!\d)"
    r"|\d+)(?:\.(?P<frac>\d+))?"
    r"|\.(?P<frac2>\d+))"
    r"(?:[eE](?P<exp>[-+−]?\d+))?"
    r"(?:\s?[×x*]\s?10(?:\^|\*\*)\(?(?P<exp2>[-+−]?\d+)\)?)?)"
)
# Spaces group thousands in prose only: an output's "[  1 234 567]" is three numbers.
_SPACED = rf"|\d{{1,3}}(?:[{_GROUP_SPACE}]\d{{3}})+(?![\d,])"
_NUMBER_PROSE = re.compile(_PATTERN.replace("{spaced}", _SPACED))
_NUMBER_OUTPUT = re.compile(_PATTERN.replace("{spaced}", ""))
_TAIL = re.compile(
    r"(?P<pct>\s?%|\s(?:percent|per cent|pct)\b)"
    r"|(?P<mag>k|K|M|B|bn|mn|mln|bln)(?![\w])"
    r"|\s(?P<magword>thousand|million|billion|trillion|bn|mn|mln)\b"
    r"|(?P<ord>st|nd|rd|th)\b"
    r"|(?P<sp>[ \u00a0\u202f]?)(?P<unit>°[CF]|[$€£¥]|[A-Za-zµ°]+(?:/[A-Za-zµ]+)?[²³]?)"
)
_WORD_AFTER = re.compile(r"\w+")
_MAGNITUDES = {
    "k": 1e3, "K": 1e3, "thousand": 1e3,
    "M": 1e6, "mn": 1e6, "mln": 1e6, "million": 1e6,
    "B": 1e9, "bn": 1e9, "bln": 1e9, "billion": 1e9,
    "trillion": 1e12,
}  # fmt: skip
_UNITS = frozenset(
    [
        "kg",
        "g",
        "mg",
        "µg",
        "ug",
        "t",
        "lb",
        "lbs",
        "oz",
        "km",
        "m",
        "cm",
        "mm",
        "µm",
        "um",
        "nm",
        "mi",
        "ft",
        "s",
        "sec",
        "secs",
        "ms",
        "µs",
        "us",
        "ns",
        "min",
        "mins",
        "h",
        "hr",
        "hrs",
        "d",
        "GB",
        "MB",
        "KB",
        "kB",
        "TB",
        "GiB",
        "MiB",
        "KiB",
        "bytes",
        "px",
        "pt",
        "Hz",
        "kHz",
        "MHz",
        "GHz",
        "W",
        "kW",
        "MW",
        "kWh",
        "V",
        "mV",
        "A",
        "mA",
        "L",
        "l",
        "ml",
        "mL",
        "°C",
        "°F",
        "°",
        "x",
        "×",
        "pp",
        "bp",
        "bps",
        "USD",
        "EUR",
        "GBP",
        "JPY",
        "€",
        "$",
        "£",
        "¥",
        "rpm",
        "fps",
    ]
)
_MONTH_BEFORE = re.compile(_MONTH + r"\.?,?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?$")
_MONTH_AFTER = re.compile(r"(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b")
_YEAR_WORD = re.compile(
    r"(?:\b(?:[Ii]n|[Ss]ince|[Dd]uring|[Uu]ntil|[Tt]ill|[Ff]rom|[Tt]hrough|[Bb]efore|[Aa]fter"
    r"|[Bb]etween|[Yy]ear|[Yy]ears|FY|Q[1-4]|H[12])"
    r"|(?:19|20)\d{2}\s*(?:[-–—]|to|and)\s*)\s*$"
)
_YEAR_RANGE_AFTER = re.compile(r"\s*(?:[-–—]|to|and)\s*(?:19|20)\d{2}\b")
#: Words after which a number names a thing instead of stating a value ("step 2", "cell [4]").
_REFERENCE_WORDS = frozenset({
    "step", "steps", "section", "sections", "figure", "figures", "fig.", "table", "tables",
    "cell", "cells", "line", "lines", "chapter", "chapters", "page", "pages", "item", "items",
    "part", "parts", "phase", "phases", "version", "versions", "python", "issue", "issues", "row",
    "column", "no.",
})  # fmt: skip
_NON_DIGIT = re.compile(r"\D")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(\d{1,9}[.)])(?=[ \t]|$)", re.MULTILINE)
_HEADING_NUMBER = re.compile(r"^ {0,3}#{1,6}[ \t]+(\d+(?:\.\d+)*\.?)(?=[ \t])", re.MULTILINE)
# A link's target and a bare URL: the numbers in an address are not values.
_LINK = re.compile(r"\]\(([^)\s]*)\)|(https?://[^\s)>\]]+)")
_WINDOW = 32


def _blank(chars: list[str], start: int, end: int) -> None:
    # NUL is in the numbers' lookbehind: a digit glued to skipped text is not read either.
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = "\0"


def skip_code(text: str) -> str:
    """``text`` with its fenced blocks, code spans, list markers and heading numbers blanked.

    Same length, newlines kept, so every span found in the result is a span of ``text``.
    """
    chars = list(text)
    fence = ""
    fence_start = pos = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if fence:
            stripped = bare.strip()
            if set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                _blank(chars, fence_start, pos + len(line))
                fence = ""
        else:
            opened = _FENCE.match(bare)
            if opened:
                fence, fence_start = opened.group(1), pos
        pos += len(line)
    if fence:
        _blank(chars, fence_start, len(text))
    masked = "".join(chars)
    pos = 0
    while True:
        run = _TICKS.search(masked, pos)
        if not run:
            break
        width = len(run.group())
        closing_run = re.compile(r"(?<!`)`{" + str(width) + r"}(?!`)").search(masked, run.end())
        if closing_run is None:
            pos = run.end()
            continue
        _blank(chars, run.start(), closing_run.end())
        pos = closing_run.end()
    masked = "".join(chars)
    for pattern in (_LIST_MARKER, _HEADING_NUMBER, _LINK):
        for m in pattern.finditer(masked):
            _blank(chars, m.start(m.lastindex or 0), m.end(m.lastindex or 0))
    return "".join(chars)


def _is_year(text: str, start: int, end: int, digits: str) -> bool:
    if len(digits) != 4 or not 1900 <= int(digits) <= 2100:
        return False
    before = text[max(0, start - _WINDOW) : start]
    return bool(
        _YEAR_WORD.search(before)
        or _MONTH_BEFORE.search(before)
        or _YEAR_RANGE_AFTER.match(text, end)
        or text.startswith("s", end)
        or text.startswith("'s", end)
    )


def _is_day(text: str, start: int, end: int, digits: str) -> bool:
    if len(digits) > 2 or not 1 <= int(digits) <= 31:
        return False
    return bool(
        _MONTH_BEFORE.search(text[max(0, start - _WINDOW) : start]) or _MONTH_AFTER.match(text, end)
    )


def _is_reference(text: str, start: int) -> bool:
    """Whether the word before ``start`` makes the number a reference (``In [4]`` too)."""
    head = text[max(0, start - 16) : start].rstrip()
    if not (head[-1:].isalpha() or head[-1:] in (".", "[")):
        return False
    bracket = head.endswith("[")
    if bracket:
        head = head[:-1].rstrip()
    words = head.rsplit(None, 1)
    word = words[-1].lstrip("(*_") if words else ""
    return word.lower() in _REFERENCE_WORDS or (bracket and word in ("In", "Out"))


def _sign(text: str, start: int) -> tuple[int, float]:
    """Where a sign attached before ``start`` begins, and the sign (after a digit: a range)."""
    if start and text[start - 1] in "-−+":
        before = text[start - 2] if start >= 2 else " "
        if not (before.isalnum() or before in "_)].^%"):
            return start - 1, -1.0 if text[start - 1] in "-−" else 1.0
    return start, 0.0


def find_numbers(text: str, *, prose: bool = True) -> list[NumberMention]:
    """The numbers of ``text`` in order; ``prose`` reads it as Markdown (code skipped).

    Every other rule holds for both sides: what is not a number in an answer is not indexed
    from what the turn saw either, so a year in an output cannot vouch for a count.
    """
    scan = skip_code(text) if prose else text
    found: list[NumberMention] = []
    for m in (_NUMBER_PROSE if prose else _NUMBER_OUTPUT).finditer(scan):
        skip, cur, csign, whole, frac, frac2, exp, exp2 = m.group(
            "skip", "cur", "csign", "int", "frac", "frac2", "exp", "exp2"
        )
        if skip:
            continue
        start, end = m.span()
        nxt = scan[end : end + 2]
        if nxt[:1] in (".", ",") and nxt[1:2].isdigit():
            continue  # 1,2,3 or 1.2.3 leftovers: a list or a European decimal, undecidable
        if nxt[:1] == "/" or (nxt[:1] == "]" and start and scan[start - 1] == "["):
            continue  # a path, a fraction, a footnote or citation
        if nxt[:1] == "." and nxt[1:2].isalpha():
            continue  # a file name: 2023.csv
        if scan[start - 1 : start] in (" ", "[") and _is_reference(scan, start):
            continue
        sign = 0.0
        if scan[start - 1 : start] in ("-", "−", "+"):
            start, sign = _sign(scan, start)
        if csign:
            sign = -1.0
        digits = whole or ""
        if not digits.isdigit():
            digits = _NON_DIGIT.sub("", digits)
        frac = frac or frac2 or ""
        exponent = int((exp or exp2 or "0").replace("−", "-"))
        unit, percent, magnitude = cur or "", False, 1.0
        tail = _TAIL.match(scan, end)
        if tail:
            if tail.group("ord"):
                continue
            if tail.group("pct"):
                percent, end = True, tail.end()
            elif tail.group("mag") or tail.group("magword"):
                magnitude = _MAGNITUDES[tail.group("mag") or tail.group("magword")]
                end = tail.end()
            elif tail.group("unit"):
                name = tail.group("unit")
                word = _WORD_AFTER.match(scan, tail.start("unit"))
                rest = word.group() if word else ""
                if not tail.group("sp") and rest == "s" and len(digits) == 4 and not frac:
                    continue  # the 1990s
                if name.split("/")[0].rstrip("²³") in _UNITS and rest in ("", name.split("/")[0]):
                    unit, end = unit or name, tail.end()
                elif not tail.group("sp"):
                    continue  # 3D, 5G, 12abc: glued letters that are no unit
        plain = not (frac or exponent or percent or unit or magnitude != 1.0 or sign)
        bare = plain and whole == digits
        if bare and (_is_year(scan, start, end, digits) or _is_day(scan, start, end, digits)):
            continue
        mantissa = float(f"{digits or '0'}.{frac or '0'}")
        scale = magnitude * 10.0**exponent
        value = mantissa * scale * (sign or 1.0)
        if not math.isfinite(value):
            continue
        step = 10.0 ** -len(frac) * scale
        found.append(
            NumberMention(text[start:end], start, end, value, step, percent, unit, bare, bool(sign))
        )
    return found
