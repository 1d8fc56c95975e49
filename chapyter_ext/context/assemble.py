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
import itertools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ..redact import REDACTED, Redactor, is_secret_name, secret_values
from .values import (
    _clip,
    _default_chars,
    _describe,
    _join_items,
    _safe,
    _safe_middle,
    _type_label,
)


class VariableSummary(NamedTuple):
    """A variable summarised elsewhere (the kernel, for the chat): shown as it is, redacted."""

    name: str
    type: str
    summary: str


# A cell as the context shows it: source, summarised output, "In [7]" and the error it raised.
_Cell = collections.namedtuple("_Cell", "source output label error", defaults=(None,))


# The most a summary made elsewhere may take (as much as a DataFrame's summary here).
_SUMMARY_CHARS = 2000


def _variable_line(item, limit: int, r: Redactor) -> str:
    if isinstance(item, VariableSummary):
        name, label = item.name, item.type
    else:
        name, value = item
        label = _type_label(value)
    head = f"- {name} ({label}): "
    if len(head) + 4 > limit:
        return _clip(f"- {name}", limit)
    if is_secret_name(name):
        return head + REDACTED
    # Continuation lines are indented; leave room for that in multi-line summaries.
    if isinstance(item, VariableSummary):
        body = _safe(item.summary, max(8, limit - len(head) - 32), r)
    else:
        body = _describe(value, max(8, limit - len(head) - 32), r)
    return _clip(head + body.replace("\n", "\n    "), limit)


def _variable_chars(item) -> int:
    if isinstance(item, VariableSummary):
        return min(_SUMMARY_CHARS, len(item.name) + len(item.type) + len(item.summary) + 40)
    return _default_chars(item[1])


def _variables_section(variables, limit: int, r: Redactor) -> str:
    title = "Variables (most recent first):"
    if not variables or limit < len(title) + 24:
        return ""
    lines = [title]
    used = len(title)
    for i, item in enumerate(variables):
        left = len(variables) - i
        reserve = 48 if left > 1 else 0  # for the "... (K more variables)" note
        room = limit - used - 1 - reserve
        cap = min(_variable_chars(item), max(0, room))
        # A big summary may not take everything: keep room for a few more names.
        if left > 1:
            cap = min(cap, max(120, room * 2 // 3))
        if cap < 24:
            lines.append(_more_variables(variables[i:], limit - used - 1))
            break
        line = _variable_line(item, cap, r)
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _more_variables(rest, limit: int) -> str:
    head = f"... ({len(rest):,} more variables"
    names = (item[0] for item in itertools.islice(rest, limit // 3 + 1))
    return _clip(_join_items(names, len(rest), head + ": ", ")", limit), limit)


def _cell_text_block(cell: _Cell, limit: int, r: Redactor) -> str:
    head = f"{cell.label}:"
    extra = []
    if cell.output:
        extra.append(("Out: ", cell.output))
    if cell.error:
        extra.append(("Error: ", cell.error))
    out_cap = min(240, limit // 3)
    tails = [_safe(prefix + text, out_cap, r).replace("\n", "\n    ") for prefix, text in extra]
    src_cap = limit - len(head) - 1 - sum(len(t) + 1 for t in tails)
    source = _clip_lines(cell.source.rstrip(), src_cap, r)
    return _clip("\n".join([head, source, *tails]), limit)


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
        return _clip(window, limit)
    kept.append(f"# ... ({total - len(kept):,} more lines)")
    return _clip("\n".join(kept), limit)


def _cells_section(
    cells: list[_Cell], limit: int, r: Redactor, title: str = "Recent cells (oldest first):"
) -> str:
    if not cells or limit < len(title) + 30:
        return ""
    blocks: list[str] = []
    used = len(title)
    # Newest first while budgeting, so that what is dropped is the oldest.
    for i, cell in enumerate(reversed(cells)):
        left = len(cells) - i
        room = limit - used - 1 - (40 if left > 1 else 0)
        cap = room // left if left > 1 else room
        cap = max(cap, min(room, 120))  # a share too small for anything useful is no use
        if cap < 24:
            break
        block = _cell_text_block(cell, cap, r)
        blocks.append(block)
        used += len(block) + 1
    omitted = len(cells) - len(blocks)
    parts = [title]
    if omitted:
        parts.append(f"... ({omitted} earlier cells not shown)")
    parts.extend(reversed(blocks))
    return _clip("\n".join(parts), limit)


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


def _assemble(
    *,
    error: str | None,
    variables,
    cells: list[_Cell],
    budget: int,
    r: Redactor,
    header: str = "",
    focus: Sequence[tuple[str, str]] = (),
    cells_title: str = "Recent cells (oldest first):",
) -> str:
    if budget <= 0:
        return ""
    sections: list[str] = []
    remaining = budget
    if header:
        line = _safe(header, min(remaining, 300), r)
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
        text = title + _safe_middle(
            error.strip(), max(0, min(remaining, budget * 2 // 5)) - len(title), r
        )
        if len(text) > len(title):
            sections.append(text)
            remaining -= len(text) + 2
    # Cells are less important than variables, but should not be starved by them.
    cells_reserve = min(_cells_need(cells), remaining * 3 // 10) if cells else 0
    var_text = _variables_section(variables, remaining - cells_reserve, r)
    if var_text:
        sections.append(var_text)
        remaining -= len(var_text) + 2
    cell_text = _cells_section(cells, remaining, r, cells_title)
    if cell_text:
        sections.append(cell_text)
    text = r("\n\n".join(sections))
    # Redaction can lengthen text ("<redacted>" is longer than a short secret): cut to the budget.
    return _clip(text, budget)


def _cells_need(cells: list[_Cell]) -> int:
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
) -> str:
    """The text describing the kernel to the model: at most ``budget`` characters, redacted.

    Sections, in order of priority when the budget is short: ``Last error`` (up to two fifths of
    the budget, cut in the middle so both the start and the end survive), ``Variables`` in the
    order given (most recent first, each a type and a short summary; values of secret-looking
    names are ``<redacted>``; cut with ``... (K more variables: a, b, …)``), then ``Recent
    cells`` given oldest first as ``(source, output)`` (the newest kept when cut, with ``...
    (K earlier cells not shown)``). Variables may take at most seven tenths of what the error
    leaves while there are cells to show. ``redact`` is applied to every piece before it is
    clipped and to the final text, with ``secrets`` and the string values of secret-named
    variables as extra verbatim secrets.
    """
    variables = list(variables)
    r = Redactor([*secrets, *secret_values(variables)])
    cells = [_Cell(src, out, "In") for src, out in recent_cells if src and src.strip()]
    return _assemble(error=last_error, variables=variables, cells=cells, budget=budget, r=r)
