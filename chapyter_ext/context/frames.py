"""pandas specifics: DataFrame, Series and Index summaries that never touch the whole data.

Only the shape, the dtypes and ``iloc[:rows]`` (or ``iloc[:rows, :k]``) are read, so a
5,000,000-row or 2,000-column frame costs about the same as a small one (pandas itself is never
imported here: the objects come with it). A value inside a cell is described by
:func:`.values.cell_text`.
"""

from __future__ import annotations

from ..redact import REDACTED, Redactor, is_secret_name
from .text import PREVIEW_ITEMS, clip, count, join_items, per_item, safe, type_label
from .values import cell_text


def pandas_body(value, types: tuple[type, ...], limit: int, r: Redactor) -> str:
    """The summary (without the type) of a DataFrame, Series or Index: ``types`` are those."""
    frame, series, _ = types
    if isinstance(value, frame):
        return frame_body(value, max_columns=40, max_rows=3, limit=limit, r=r)
    if isinstance(value, series):
        return series_body(value, limit, r)
    return _index_body(value, limit, r)


def is_default_index(idx) -> bool:
    return (
        type(idx).__name__ == "RangeIndex"
        and getattr(idx, "start", None) == 0
        and getattr(idx, "step", None) == 1
        and idx.name is None
    )


def label_text(name, r: Redactor, limit: int = 60) -> str:
    return safe(repr(name), limit, r)


def dtype_text(dtype, r: Redactor) -> str:
    text = str(dtype)
    if text != "category":
        return text
    categories = getattr(dtype, "categories", None)
    if categories is None:
        return text
    n = len(categories)
    kind = "ordered category" if getattr(dtype, "ordered", False) else "category"
    if n > 20:
        return f"{kind} ({n:,} categories)"
    labels = [label_text(c, r, 30) for c in categories.tolist()]
    return join_items(labels, n, kind + "[", "]", 240)


def index_brief(idx, r: Redactor, limit: int) -> str:
    kind = type(idx).__name__
    if getattr(idx, "nlevels", 1) > 1:
        levels = [
            f"{label_text(name, r, 30)} {level.dtype}"
            for name, level in zip(idx.names[:8], idx.levels[:8])
        ]
        text = join_items(levels, idx.nlevels, f"{kind} of {len(idx):,} (", ")", limit)
    else:
        text = f"{kind} of {len(idx):,}, {idx.dtype}"
        if idx.name is not None:
            text += f", name {label_text(idx.name, r, 40)}"
    if len(idx) and len(text) + 12 < limit:
        first = cell_text(idx[0], 30, r)
        last = cell_text(idx[-1], 30, r)
        text += f", {first} … {last}" if len(idx) > 1 else f", {first}"
    return clip(text, limit)


def frame_body(df, *, max_columns: int, max_rows: int, limit: int, r: Redactor) -> str:
    n_rows, n_cols = df.shape
    header = f"{n_rows:,} rows × {n_cols:,} columns"
    if limit < len(header) + 16 or n_cols == 0:
        return clip(header, limit)
    lines = [header]
    remaining = limit - len(header)

    shown = min(n_cols, max(1, max_columns))
    # Whole lists are cheaper than pandas slices; past a few hundred columns the slice wins.
    names = df.columns.tolist()[:shown] if n_cols <= 256 else df.columns[:shown].tolist()
    dtypes = df.dtypes.tolist()[:shown]
    has_more = n_cols > shown
    # Column names and dtypes matter most; then the note on further columns; rows last.
    typed_cap = remaining * (3 if (has_more or max_rows > 0) else 5) // 5
    typed: list[str] = []
    used = len("\ncolumns: ")
    for name, dtype in zip(names, dtypes):
        part = f"{label_text(name, r)} {dtype_text(dtype, r)}"
        if used + len(part) + 2 > typed_cap:
            break
        typed.append(part)
        used += len(part) + 2
    if not typed:  # not even one column fits: name the first ones
        part = f"{label_text(names[0], r)} {dtype_text(dtypes[0], r)}"
        typed.append(clip(part, max(10, typed_cap - used)))
        used += len(typed[0])
    lines.append("columns: " + ", ".join(typed))
    remaining -= used
    unlisted = n_cols - len(typed)

    show_index = not is_default_index(df.index)
    if show_index and remaining > 40:
        line = "index: " + index_brief(df.index, r, min(160, remaining - 1 - 7))
        lines.append(line)
        remaining -= len(line) + 1

    note_reserve = 48 if unlisted else 0
    rows_cap = (remaining - note_reserve) // (2 if unlisted else 1)
    n = min(max_rows, n_rows)
    rows = rows_text(df, n, names[: len(typed)], show_index, rows_cap, r) if n > 0 else ""
    remaining -= len(rows) + 1 if rows else 0

    if unlisted:
        lines.append(_more_columns(df.columns, len(typed), n_cols, remaining - 1, r))
    if rows:
        lines.append(rows)
    return clip("\n".join(lines), limit)


def _more_columns(columns, start: int, total: int, limit: int, r: Redactor) -> str:
    unlisted = total - start
    head = f"... and {unlisted:,} more columns"
    if limit < len(head) + 10:
        return clip(head, limit)
    # Each name takes at least 4 characters ("'x', "), which bounds how many are worth fetching.
    fetch = min(unlisted, limit // 4 + 1)
    names = (label_text(n, r, 40) for n in columns[start : start + fetch].tolist())
    return join_items(names, unlisted, head + ": ", "", limit)


def rows_text(df, n: int, names: list, show_index: bool, cap: int, r: Redactor) -> str:
    """The first ``n`` rows of the columns ``names`` (the first ones) that fit, one a line."""
    if not names or cap < 40:
        return ""
    title = f"head({n}):"
    width = max(20, (cap - len(title)) // (n + 1) - 1)
    header_cells: list[str] = ["(index)"] if show_index else []
    length = len(header_cells[0]) if show_index else 0
    k = 0
    for name in names:
        cell = safe(str(name), 20, r)
        if k and length + len(cell) + 3 > width:
            break
        header_cells.append(cell)
        length += len(cell) + 3
        k += 1
    n_cols = df.shape[1]
    if k < n_cols:
        title = f"head({n}), first {k} of {n_cols:,} columns:"
    # Slicing rows only is several times cheaper in pandas than slicing both axes; past a few
    # hundred columns the both-axes slice wins, as it does not convert every column.
    sub = df.iloc[:n] if n_cols <= 256 else df.iloc[:n, :k]
    values = [row[:k] for row in sub.to_numpy(dtype=object).tolist()]
    index = sub.index.tolist() if show_index else None
    out = [title, clip(" | ".join(header_cells), width)]
    # A password column's values never leave, whatever they look like.
    hidden = [isinstance(name, str) and is_secret_name(name) for name in names[:k]]
    for i, row in enumerate(values):
        cells = [REDACTED if hide else cell_text(v, 20, r) for v, hide in zip(row, hidden)]
        if index is not None:
            cells.insert(0, cell_text(index[i], 24, r))
        out.append(clip(" | ".join(cells), width))
    text = "\n".join(out)
    return text if len(text) <= cap else clip(text, cap)


def series_body(s, limit: int, r: Redactor) -> str:
    text = f"{len(s):,} values, {dtype_text(s.dtype, r)}"
    if s.name is not None:
        text += f", name {label_text(s.name, r, 40)}"
    if len(s) and len(text) + 10 < limit:
        values = s.iloc[:PREVIEW_ITEMS].to_numpy(dtype=object).tolist()
        budget = limit - len(text) - 2
        per = per_item(budget, len(values))
        items = (cell_text(v, per, r) for v in values)
        text += ": " + join_items(items, len(s), "[", "]", budget)
    if not is_default_index(s.index) and len(text) + 40 < limit:
        text += "\nindex: " + index_brief(s.index, r, limit - len(text) - 8)
    return clip(text, limit)


def _index_body(idx, limit: int, r: Redactor) -> str:
    if getattr(idx, "nlevels", 1) > 1:
        return index_brief(idx, r, limit)
    text = f"{count(len(idx), 'value')}, {idx.dtype}"
    if idx.name is not None:
        text += f", name {label_text(idx.name, r, 40)}"
    if len(idx) and len(text) + 10 < limit:
        values = idx[:PREVIEW_ITEMS].tolist()
        budget = limit - len(text) - 2
        items = (cell_text(v, per_item(budget, len(values)), r) for v in values)
        text += ": " + join_items(items, len(idx), "[", "]", budget)
    return clip(text, limit)


def summarize_dataframe(
    df, *, max_columns: int = 40, max_rows: int = 3, max_chars: int = 2000
) -> str:
    """``"DataFrame: …"`` for a pandas DataFrame, at most ``max_chars`` characters, redacted.

    Shape, then the first ``max_columns`` column names exactly (``repr``) with their dtypes (and
    the labels of categoricals with at most 20 categories), then ``... and K more columns: …``
    naming further columns as far as the budget allows, the index when it is not a plain
    ``RangeIndex``, and the first ``max_rows`` rows of the columns that fit. Only the shape,
    ``dtypes`` and ``df.iloc[:max_rows, :k]`` are read, so a 5,000,000-row or 2,000-column frame
    costs about the same as a small one.
    """
    label = type_label(df)
    r = Redactor()
    try:
        body = frame_body(
            df,
            max_columns=max_columns,
            max_rows=max_rows,
            limit=max_chars - len(label) - 2,
            r=r,
        )
    except Exception:  # a broken frame subclass still gets a line
        body = "<unavailable>"
    return clip(f"{label}: {body}", max_chars)
