"""THE assembler: one text within one budget, for ``%%ai`` and for the chat alike.

Sections, in order of priority when the budget is short: a header line (the chat's notebook
and active cell), the focus blocks (the chat's selection and active cell), ``Last error`` (up to
two fifths of the budget, cut in the middle so both the start and the end survive),
``Variables`` (live values summarised here, or summaries the kernel already made for the chat),
then cells (``%%ai``'s recent cells, the chat's neighbours; the last ones kept when cut). Every
piece is redacted before it is clipped, and the whole text once more, then cut to the budget.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ..redact import Redactor, secret_values
from .fact_cache import CACHE
from .facts import VarFacts
from .relevance import PREFIX, Terms, request_terms, words
from .selection import Ranked, aliases_line, rank_variables, variables_section
from .text import clip, pandas_types, safe, safe_middle


class VariableSummary(NamedTuple):
    """A variable summarised elsewhere (the kernel, for the chat): shown as it is, redacted.

    ``detail`` holds the facts the kernel sent with it (columns, keys, labels), when it did.
    """

    name: str
    type: str
    summary: str
    detail: VarFacts | None = None


# A cell as the context shows it: source, summarised output, "In [7]" and the error it raised.
Cell = collections.namedtuple("Cell", "source output label error", defaults=(None,))


def as_facts(item) -> VarFacts:
    """A summary made elsewhere as facts (a plain head line when it came without any)."""
    if item.detail is not None:
        return item.detail
    return VarFacts(item.name, item.type, item.summary[:_SUMMARY_CHARS])


# The most a summary made elsewhere may take (as much as a DataFrame's summary here).
_SUMMARY_CHARS = 2000


def _cell_text_block(cell: Cell, limit: int, r: Redactor) -> str:
    head = f"{cell.label}:"
    extra = []
    if cell.output:
        extra.append(("Out: ", cell.output))
    if cell.error:
        extra.append(("Error: ", cell.error))
    out_cap = min(240, limit // 3)
    tails = [safe(prefix + text, out_cap, r).replace("\n", "\n    ") for prefix, text in extra]
    src_cap = limit - len(head) - 1 - sum(len(t) + 1 for t in tails)
    source = _clip_lines(cell.source.rstrip(), src_cap, r)
    return clip("\n".join([head, source, *tails]), limit)


def _clip_lines(source: str, limit: int, r: Redactor) -> str:
    """The first lines of a cell that fit, with a note on how many more there are."""
    if limit <= 0:
        return ""
    window = r(source[: limit + r.margin])
    if len(window) <= limit and len(source) <= limit + r.margin:
        return window
    lines = window.split("\n")
    total = source.count("\n") + 1
    kept: list[str] = []
    used = 0
    for line in lines:
        note = f"# ... ({total - len(kept) - 1:,} more lines)"
        if used + len(line) + 1 + len(note) > limit:
            break
        kept.append(line)
        used += len(line) + 1
    if not kept:
        return clip(window, limit)
    kept.append(f"# ... ({total - len(kept):,} more lines)")
    return clip("\n".join(kept), limit)


def _cells_section(
    cells: list[Cell],
    limit: int,
    r: Redactor,
    title: str = "Recent cells (oldest first):",
    terms: Terms | None = None,
) -> str:
    if not cells or limit < len(title) + 30:
        return ""
    # Budgeted newest first, so that what is dropped is the oldest; with a request, the newest
    # cell, then the cells whose words match it, then the others newest first.
    order = list(reversed(range(len(cells))))
    if terms and len(cells) > 1:
        relevant = {i for i in order[1:] if _cell_matches(cells[i], terms)}
        order = [order[0], *(i for i in order[1:] if i in relevant)] + [
            i for i in order[1:] if i not in relevant
        ]
    blocks: dict[int, str] = {}
    used = len(title)
    for k, index in enumerate(order):
        left = len(cells) - k
        room = limit - used - 1 - (40 if left > 1 else 0)
        cap = room // left if left > 1 else room
        cap = max(cap, min(room, 120))  # a share too small for anything useful is no use
        if cap < 24:
            break
        block = _cell_text_block(cells[index], cap, r)
        blocks[index] = block
        used += len(block) + 1
    omitted = len(cells) - len(blocks)
    parts = [title]
    if omitted:
        first = min(blocks, default=len(cells))
        earlier = all(i < first for i in range(len(cells)) if i not in blocks)
        parts.append(f"... ({omitted} {'earlier ' if earlier else ''}cells not shown)")
    parts.extend(blocks[i] for i in sorted(blocks))
    return clip("\n".join(parts), limit)


def _cell_matches(cell: Cell, terms: Terms) -> bool:
    return any(terms.match(w) >= PREFIX for w in set(words(cell.source[:4000])))


def _focus_section(focus: Sequence[tuple[str, str]], limit: int, r: Redactor) -> str:
    """Titled blocks that matter most (the chat's selection and active cell), in order."""
    blocks: list[str] = []
    used = 0
    for i, (title, text) in enumerate(focus):
        # An early block may not take everything while later ones wait.
        left = len(focus) - i
        room = limit - used - (2 if blocks else 0)
        cap = room if left == 1 else max(room // 2, min(room, 200))
        head = f"{title}:\n"
        if cap < len(head) + 16 or not text.strip():
            continue
        block = head + _clip_lines(text.rstrip(), cap - len(head), r)
        blocks.append(block)
        used += len(block) + (2 if len(blocks) > 1 else 0)
    return "\n\n".join(blocks)


def assemble(
    *,
    error: str | None,
    variables: Sequence[Ranked],
    cells: list[Cell],
    budget: int,
    r: Redactor,
    header: str = "",
    focus: Sequence[tuple[str, str]] = (),
    cells_title: str = "Recent cells (oldest first):",
    terms: Terms | None = None,
    aliases: Sequence[tuple[str, str]] = (),
) -> str:
    if budget <= 0:
        return ""
    sections: list[str] = []
    remaining = budget
    if header:
        line = safe(header, min(remaining, 300), r)
        sections.append(line)
        remaining -= len(line) + 2
    if focus:
        # The active cell and the selection: what the question is about. Up to half the budget.
        text = _focus_section(focus, min(remaining, budget // 2), r)
        if text:
            sections.append(text)
            remaining -= len(text) + 2
    if error:
        title = "Last error:\n"
        text = title + safe_middle(
            error.strip(), max(0, min(remaining, budget * 2 // 5)) - len(title), r
        )
        if len(text) > len(title):
            sections.append(text)
            remaining -= len(text) + 2
    if aliases:
        line = aliases_line(aliases, min(remaining // 4, 400))
        if line:
            sections.append(line)
            remaining -= len(line) + 2
    # Cells are less important than variables, but should not be starved by them.
    cells_reserve = min(_cells_need(cells), remaining * 3 // 10) if cells else 0
    # Focused only when something matched: a message about nothing in the kernel ("why?")
    # gets the same text as no message (the chat's preview chip shows that text).
    focused = bool(terms) and any(item.hits for item in variables)
    var_text = variables_section(
        variables,
        remaining - cells_reserve,
        r,
        terms=terms,
        focused=focused,
        resolve=resolve_facts(r),
    )
    if var_text:
        sections.append(var_text)
        remaining -= len(var_text) + 2
    cell_text = _cells_section(cells, remaining, r, cells_title, terms)
    if cell_text:
        sections.append(cell_text)
    text = r("\n\n".join(sections))
    # Redaction can lengthen text ("<redacted>" is longer than a short secret): cut to the budget.
    return clip(text, budget)


# Tables and containers among the most recent variables have their facts (columns, keys,
# labels) gathered up front, to be found by them; other variables are found by name and
# described only if shown.
_DETAILED = 1000
_FACTED = (list, tuple, dict)


def live_facts(variables: Iterable[tuple[str, object]], r: Redactor) -> list[VarFacts]:
    """Facts of live values, from the process's cache when their fingerprints still match."""
    CACHE.check(r)
    pandas = pandas_types()
    out = []
    for i, (name, value) in enumerate(variables):
        full = i < _DETAILED and (
            isinstance(value, _FACTED) or (pandas is not None and isinstance(value, pandas))
        )
        out.append(CACHE.get(name, value, r, full=full))
    CACHE.prune({vf.name for vf in out})
    return out


def resolve_facts(r: Redactor):
    """What turns a stub into its facts when the section shows it."""
    return lambda vf: CACHE.resolve(vf, r)


def rank(facts: Sequence[VarFacts], terms: Terms, used: Mapping[str, float] = {}) -> list[Ranked]:
    """The variables in the order the context shows them (see :mod:`.selection`)."""
    return rank_variables(facts, terms, used)


def _cells_need(cells: list[Cell]) -> int:
    return 30 + sum(
        len(c.source)
        + len(c.label)
        + 8
        + min(len(c.output or ""), 240)
        + min(len(c.error or ""), 240)
        for c in cells
    )


def build_context(
    *,
    variables: list[tuple[str, object]],
    recent_cells: list[tuple[str, str | None]],
    last_error: str | None,
    budget: int,
    secrets: Iterable[str] = (),
    request: str | None = None,
    aliases: Sequence[tuple[str, str]] = (),
) -> str:
    """The text describing the kernel to the model: at most ``budget`` characters, redacted.

    Sections, in order of priority when the budget is short: ``Last error`` (up to two fifths of
    the budget, cut in the middle so both the start and the end survive), ``Imported modules``
    (``aliases``: ``np = numpy``), ``Variables`` (each a type and a short summary; values of
    secret-looking names are ``<redacted>``; cut with ``... (K more variables: a, b, …)``), then
    ``Recent cells`` given oldest first as ``(source, output)`` (the newest kept when cut, with
    ``... (K earlier cells not shown)``). With a ``request``, variables come most relevant
    first (:mod:`.selection`: their names, columns, keys and labels against the request's words,
    the recent cells' and the error's), the relevant ones with their matching columns first;
    without one, in the order given. Variables may take at most seven tenths of what the error
    leaves while there are cells to show. ``redact`` is applied to every piece before it is
    clipped and to the final text, with ``secrets`` and the string values of secret-named
    variables as extra verbatim secrets.
    """
    variables = list(variables)
    r = Redactor([*secrets, *secret_values(variables)])
    cells = [Cell(src, out, "In") for src, out in recent_cells if src and src.strip()]
    terms = request_terms(request, error=last_error)
    if not request:
        terms = Terms()
    ranked = rank(live_facts(variables, r), terms)
    return assemble(
        error=last_error,
        variables=ranked,
        cells=cells,
        budget=budget,
        r=r,
        terms=terms,
        aliases=aliases,
    )
