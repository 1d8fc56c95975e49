"""Which variables, and which of their facts, a request gets: relevant first, within the budget.

Each variable is scored against the request's terms (:mod:`.relevance`): its name (worth three
times as much), its columns, keys and labels, plus a bonus when the code around the request
used it (the running cell, the recent cells, the error). The most relevant come first and may
take most of the section; the rest get a line each (a head and their first columns), then
only their names. Inside a variable the matching columns and keys come first, then the others
in order, then ``+1,987 more columns: 1,980 float64, 7 object; names mostly sensor_*``.
Labels: all of them when there are few, else the most frequent and those the request matches.

Rendering is cached on each variable's facts (by width and by what matched), so a warm request
over a hundred unchanged variables costs little more than scoring them.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from ..redact import REDACTED, Redactor, is_secret_name
from .facts import Fact, VarFacts
from .relevance import Terms, words
from .text import ELLIPSIS, clip, join_items

# A variable scoring this much is relevant: it is shown with its columns, first.
RELEVANT = 0.5
# Widths of a variable that is not relevant, by kind (a table gets its first columns).
_PLAIN_TABLE = 500
_PLAIN_VALUE = 300
# When nothing says what is relevant (no request), a table gets as much as it used to.
_UNFOCUSED_TABLE = 2000
# Labels shown in full up to this many; past it the most frequent and the matching ones.
_ALL_LABELS = 15
_TOP_LABELS = 8
_INDENT = "    "
# Past this many columns a table is wide: past its matching columns, only a few others.
_WIDE = 60
_WIDE_SHOWN = 30


class Ranked(NamedTuple):
    """A variable's facts, its score for this request, and the words of it that matched."""

    facts: VarFacts
    score: float
    hits: dict[str, float]


def rank_variables(
    variables: Sequence[VarFacts], terms: Terms, used: Mapping[str, float] = {}
) -> list[Ranked]:
    """The variables by relevance (stable: equal scores keep the order given)."""
    out = []
    for vf in variables:
        hits = terms.hits(vf.index) if terms else {}
        score = used.get(vf.name, 0.0)
        if hits:
            own = max((hits.get(w, 0.0) for w in vf.name_words()), default=0.0)
            score += 3 * own + max(hits.values()) + 0.1 * min(len(hits), 5)
        out.append(Ranked(vf, score, hits))
    out.sort(key=lambda item: -item.score)
    return out


def used_names(sources: Sequence[str], weights: Sequence[float]) -> dict[str, float]:
    """Identifiers of each source at its weight (the first source's weight wins)."""
    found: dict[str, float] = {}
    for source, weight in zip(sources, weights):
        for name in re.findall(r"[A-Za-z_]\w*", source[-20_000:]):
            if found.get(name, 0.0) < weight:
                found[name] = weight
    return found


# ---------------------------------------------------------------------------------------------
# One variable


def _fact_score(fact: Fact, hits: Mapping[str, float]) -> float:
    return max((hits.get(w, 0.0) for w in fact.words), default=0.0)


def _share(share: float) -> str:
    if share <= 0:
        return ""
    if share < 0.005:
        return " <1%"
    return f" {share:.0%}"


def _labels_text(fact: Fact, hits: Mapping[str, float], terms: Terms | None, limit: int) -> str:
    labels = fact.labels
    n = len(labels)
    if n <= _ALL_LABELS:
        chosen = list(labels)
    else:
        chosen = list(labels[:_TOP_LABELS])
        quoted = terms.quoted if terms is not None else set()
        for lab, share in labels[_TOP_LABELS:]:
            if lab.casefold().strip() in quoted or any(hits.get(w) for w in words(lab)):
                chosen.append((lab, share))
    head = f"{n:,} labels"
    if fact.sampled:
        head += f" (in {fact.sampled:,} sampled rows)"
    items = [repr(lab) + _share(share) for lab, share in chosen]
    text = join_items(items, len(items), head + ": ", "", limit)
    if len(chosen) < n and not text.endswith(ELLIPSIS):
        text += f", … (+{n - len(chosen):,} more)"
    return clip(text, limit)


def _fact_text(fact: Fact, hits, terms: Terms | None, limit: int) -> str:
    text = f"{fact.label} {fact.text}"
    if not fact.rich:
        return clip(text, limit)
    parts = []
    if fact.labels:
        room = max(40, limit - len(text) - len(fact.note) - 4)
        parts.append(_labels_text(fact, hits, terms, room))
    if fact.note:
        parts.append(fact.note)
    return clip(text + ": " + "; ".join(parts), limit)


def _pattern(names: Sequence[str]) -> str:
    """``sensor_*`` when most names share a stem before their number."""
    stems = collections.Counter(re.sub(r"\d+$", "", n.strip("'\"")) for n in names)
    if not stems:
        return ""
    stem, count = stems.most_common(1)[0]
    if stem and count >= max(3, len(names) // 2):
        return f"{stem}*"
    return ""


def _rest_note(vf: VarFacts, rest: Sequence[Fact], limit: int) -> str:
    unshown = vf.total - (len(vf.facts) - len(rest))
    kinds = collections.Counter(f.kind for f in rest)
    for kind, count in vf.rest_kinds.items():
        kinds[kind] += count
    text = f"+{unshown:,} more {vf.noun}"
    # A kind only a few have (one bool among 3,000 floats: the target) is named.
    rare = {k for k, c in kinds.items() if c <= 3 and len(rest) > 20}
    named: dict[str, list[str]] = {}
    for f in rest:
        if f.kind in rare:
            named.setdefault(f.kind, []).append(f.label)
    described = ", ".join(
        f"{c:,} {k}" + (f" ({', '.join(named[k])})" if k in named else "")
        for k, c in kinds.most_common(6 if rare else 3)
    )
    if described:
        text += ": " + described
    pattern = _pattern([f.label for f in rest[:2000]])
    if pattern:
        text += f"; names mostly {pattern}"
    if rest and len(text) + 20 < limit:
        # A few names: past them the pattern and the kinds say more per character.
        names = (f.label for f in rest[:200])
        text = join_items(names, unshown, text + "; ", "", min(limit, len(text) + 400))
    return clip(text, limit)


def render_variable(
    vf: VarFacts, cap: int, hits: Mapping[str, float], terms: Terms | None = None
) -> str:
    """One variable within ``cap`` characters: head, matching facts, the others, a preview."""
    key = (cap, tuple(sorted(hits.items())) if hits else None)
    cached = vf.rendered.get(key)
    if cached is not None:
        return cached
    text = _render(vf, cap, hits, terms)
    if len(vf.rendered) > 8:
        vf.rendered.clear()
    vf.rendered[key] = text
    return text


def _render(vf: VarFacts, cap: int, hits: Mapping[str, float], terms: Terms | None) -> str:
    head = f"- {vf.name} ({vf.type}): "
    if len(head) + 4 > cap:
        return clip(f"- {vf.name}", cap)
    if is_secret_name(vf.name):
        return head + REDACTED
    first = clip(head + vf.head.replace("\n", "\n" + _INDENT), cap)
    if not vf.facts:
        return first
    order = list(range(len(vf.facts)))
    matched: list[int] = []
    if hits:
        scores = [_fact_score(f, hits) for f in vf.facts]
        matched = sorted((i for i in order if scores[i] > 0), key=lambda i: -scores[i])
        order = [i for i in order if scores[i] <= 0]
    # A wide table: the matching columns, a few others, then the rest summarised.
    if len(vf.facts) > _WIDE:
        order = order[:_WIDE_SHOWN]
    order = matched + order
    lines = [first]
    # The first line of facts says what they are: "columns: 'a' int64, 'b' str".
    prefix = [f"{vf.noun}: "] if vf.noun in ("columns", "keys") else [""]
    used = len(first) + len(prefix[0])

    def emit(text: str) -> int:
        line = _INDENT + prefix[0] + text
        prefix[0] = ""
        lines.append(line)
        return len(line) + 1

    run: list[str] = []  # plain facts ("'a' int64") share a line
    run_len = 0
    shown: set[int] = set()
    for k, i in enumerate(order):
        fact = vf.facts[i]
        left = len(order) - k - 1 + (vf.total - len(vf.facts))
        reserve = 90 if left else 0
        room = cap - used - reserve - run_len - 1 - len(_INDENT)
        if fact.rich:
            text = _fact_text(fact, hits, terms, room)
            if len(text) < min(room, len(fact.label) + len(fact.text) + 12):
                break
            if run:
                used += emit(", ".join(run))
                run, run_len = [], 0
            used += emit(text)
        else:
            text = f"{fact.label} {fact.text}"
            if len(text) + 2 > room:
                break
            run.append(text)
            run_len += len(text) + 2
        shown.add(i)
    if run:
        used += emit(", ".join(run))
    rest = [vf.facts[i] for i in range(len(vf.facts)) if i not in shown]
    if rest or vf.total > len(vf.facts):
        note = _INDENT + _rest_note(vf, rest, cap - used - 1 - len(_INDENT))
        if len(note) > len(_INDENT) + 4:
            lines.append(note)
            used += len(note) + 1
    if vf.tail and not rest and cap - used - 1 > len(vf.tail) + 8:
        lines.append(_INDENT + vf.tail.replace("\n", "\n" + _INDENT))
    return clip("\n".join(lines), cap)


def _need(vf: VarFacts) -> int:
    """About how many characters the whole variable takes."""
    key = "need"
    known = vf.rendered.get(key)
    if known is not None:
        return int(known)
    n = len(vf.name) + len(vf.type) + len(vf.head) + 24 + len(vf.tail) + 6
    for fact in vf.facts:
        n += len(fact.label) + len(fact.text) + 2
        if fact.rich:
            n += len(_INDENT) + 40 + len(fact.note)
            n += sum(len(lab) + 8 for lab, _ in fact.labels[:_ALL_LABELS])
    if vf.facts:
        n += 100  # the room kept for the "+K more" note while facts are added
    vf.rendered[key] = str(n)
    return n


# ---------------------------------------------------------------------------------------------
# The section


def variables_section(
    ranked: Sequence[Ranked],
    limit: int,
    r: Redactor,
    *,
    terms: Terms | None = None,
    focused: bool = False,
    resolve: Callable[[VarFacts], VarFacts] | None = None,
) -> str:
    """The ``Variables`` section within ``limit``: ranked variables, then names only.

    ``resolve`` turns a stub (a variable known by name only) into its facts when it is shown.
    """
    title = "Variables (most relevant first):" if focused else "Variables (most recent first):"
    if not ranked or limit < len(title) + 24:
        return ""
    lines = [title]
    used = len(title)
    n = len(ranked)
    for i, item in enumerate(ranked):
        vf = item.facts
        if vf.pending is not None and resolve is not None:
            vf = resolve(vf)
        left = n - i
        reserve = 48 if left > 1 else 0  # for the "... (K more variables)" note
        room = limit - used - 1 - reserve
        need = _need(vf)
        if focused and item.score >= RELEVANT:
            cap = min(need, room if left == 1 else max(200, room * 3 // 4))
        else:
            table = bool(vf.facts) and vf.noun == "columns"
            plain = _PLAIN_TABLE if focused else _UNFOCUSED_TABLE
            cap = min(need, plain if table else max(_PLAIN_VALUE, min(need, 600)), room)
            if left > 1:
                cap = min(cap, max(120, room * 2 // 3))
        if cap < 24:
            lines.append(_more_variables(ranked[i:], limit - used - 1))
            break
        line = render_variable(vf, cap, item.hits if focused else {}, terms)
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _more_variables(rest: Sequence[Ranked], limit: int) -> str:
    head = f"... ({len(rest):,} more variables"
    names = (item.facts.name for item in rest[: limit // 3 + 1])
    return clip(join_items(names, len(rest), head + ": ", ")", limit), limit)


def aliases_line(aliases: Sequence[tuple[str, str]], limit: int) -> str:
    """``Imported modules: np = numpy, pd = pandas, plt = matplotlib.pyplot``."""
    if not aliases or limit < 40:
        return ""
    items = [name if name == module else f"{name} = {module}" for name, module in aliases]
    return join_items(items, len(items), "Imported modules: ", "", limit)
