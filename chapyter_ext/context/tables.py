"""pandas tables as facts: columns with dtypes, labels, near-duplicates, sentinels, numbers as text.

Read from a bounded sample (at most :data:`~.facts.SAMPLE_ROWS` evenly spaced rows, fewer for a
wide table, about :data:`~.facts.SAMPLE_CELLS` values in all): the text columns wherever they
are, then the first numeric ones, never a whole column. Thousands of columns cost a name and a
dtype each. Imported once a pandas object is described (pandas is never imported here).
"""

from __future__ import annotations

import collections
import itertools
import re
from typing import Any

from ..redact import Redactor, is_secret_name
from .facts import (
    KEPT_CATEGORIES,
    KEPT_LABELS,
    MAX_ANALYSED,
    MAX_FACTS,
    MAX_LABELS,
    SAMPLE_CELLS,
    SAMPLE_ROWS,
    VARIANT_LABELS,
    Fact,
    VarFacts,
    fact_words,
)
from .frames import dtype_text, index_brief, is_default_index, label_text, rows_text, series_body
from .text import safe


def _sample_positions(n: int, k: int):
    import numpy as np  # present: pandas is

    if n <= k:
        return None
    return np.linspace(0, n - 1, k).astype("int64")


def frame_facts(name: str, label: str, df, r: Redactor) -> VarFacts:

    n_rows, n_cols = df.shape
    head = f"{n_rows:,} rows × {n_cols:,} columns"
    if not is_default_index(df.index):
        head += "; index: " + index_brief(df.index, r, 160)
    shown = min(n_cols, MAX_FACTS)
    names = df.columns[:shown].tolist()
    dtypes = df.dtypes.iloc[:shown].tolist()
    # Sampled: the text columns wherever they are (labels), then the first numeric ones.
    text = [j for j, d in enumerate(dtypes) if not _is_numeric(d)][:MAX_ANALYSED]
    numeric = [j for j, d in enumerate(dtypes[:MAX_ANALYSED]) if d.kind in "iuf"]
    numeric = numeric[: MAX_ANALYSED - len(text)]
    rows = max(100, min(SAMPLE_ROWS, SAMPLE_CELLS // max(1, len(text) + len(numeric))))
    positions = _sample_positions(n_rows, rows)
    sampled = 0 if positions is None else len(positions)
    found: dict[int, tuple[tuple[tuple[str, float], ...], str]] = {}
    if numeric:
        # One block, one pass: only columns whose extreme value repeats are looked at closely.
        block = df.iloc[:, numeric] if positions is None else df.iloc[positions, numeric]
        for k, note in _sentinel_notes(block.to_numpy(dtype="float64", na_value=float("nan"))):
            found[numeric[k]] = ((), note)
    if text:
        part = df.iloc[:, text] if positions is None else df.iloc[positions, text]
        for k, j in enumerate(text):
            if not is_secret_name(str(names[j])):  # a password column's values never leave
                found[j] = _text_facts(part.iloc[:, k], dtypes[j], r)
    # Redacting thousands of names one by one costs: once together, and one by one only if
    # something in them is redacted.
    shown_names = [repr(c) for c in names]
    clean = all(len(n) <= 60 for n in shown_names) and r("\n".join(shown_names)) == "\n".join(
        shown_names
    )
    facts = []
    for j, (col, dtype) in enumerate(zip(names, dtypes)):
        labels, note = found.get(j, ((), ""))
        col_label = shown_names[j] if clean else label_text(col, r)
        facts.append(_column_fact(col_label, str(col), dtype, labels, note, sampled, r))
    kinds_rest: dict[str, int] = {}
    if n_cols > shown:
        # Counted, not described: the dtypes of a bounded slice of the rest.
        kinds = collections.Counter(str(d) for d in df.dtypes.iloc[shown : shown + 5000].tolist())
        kinds_rest = dict(kinds.most_common(5))
    tail = ""
    if n_rows and n_cols:
        tail = rows_text(df, min(2, n_rows), names[:8], not is_default_index(df.index), 400, r)
    vf = VarFacts(name, label, head, facts, noun="columns", total=n_cols, tail=tail)
    vf.rest_kinds = kinds_rest
    return vf


def _is_numeric(dtype) -> bool:
    return getattr(dtype, "kind", "O") in "iufcbmM"


def series_facts(name: str, label: str, s, r: Redactor) -> VarFacts:

    head = series_body(s, 300, r)
    positions = _sample_positions(len(s), SAMPLE_ROWS)
    sample = s if positions is None else s.iloc[positions]
    labels: tuple[tuple[str, float], ...] = ()
    note = ""
    if getattr(s.dtype, "kind", "O") in "iuf":
        block = sample.to_numpy(dtype="float64", na_value=float("nan")).reshape(-1, 1)
        note = next((text for _, text in _sentinel_notes(block)), "")
    elif not _is_numeric(s.dtype) and not is_secret_name(str(s.name or "")):
        labels, note = _text_facts(sample, s.dtype, r)
    sampled = 0 if positions is None else len(sample)
    fact = _column_fact("values", "", s.dtype, labels, note, sampled, r)
    if not fact.rich:
        return VarFacts(name, label, head)
    return VarFacts(name, label, head, [fact], noun="values")


_NUMERIC_TEXT = re.compile(r"^\s*[-+(]?\s*[$€£¥]?\s*\d[\d,. _']*(?:[eE][-+]?\d+)?\s*%?\)?\s*$")
_SENTINELS = frozenset({-1, -9, -99, -999, -9999, -99999, 99, 999, 9999, 99999, 999999})


_DTYPE_TEXT: dict[Any, str] = {}


def _dtype_str(dtype) -> str:
    # str() of a numpy dtype is slow enough to matter over thousands of columns.
    try:
        text = _DTYPE_TEXT.get(dtype)
        if text is None:
            text = _DTYPE_TEXT[dtype] = str(dtype)
        return text
    except TypeError:  # unhashable
        return str(dtype)


def _column_fact(
    label: str,
    raw_name: str,
    dtype,
    labels: tuple[tuple[str, float], ...],
    note: str,
    sampled: int,
    r: Redactor,
) -> Fact:

    kind = _dtype_str(dtype)
    text = kind
    if kind == "category" and not labels:
        text = dtype_text(dtype, r)
    words_ = fact_words(raw_name or label, labels)
    return Fact(label, kind, text, note, labels, words_, sampled if labels or note else 0)


def _text_facts(column, dtype, r: Redactor) -> tuple[tuple[tuple[str, float], ...], str]:
    values = column.tolist()
    strings = [v for v in values if isinstance(v, str)]
    if not strings:
        return (), ""
    counts = collections.Counter(strings)
    total = len(values)
    categories = getattr(dtype, "categories", None)
    note = ""
    numeric = sum(1 for s in itertools.islice(counts, 500) if _NUMERIC_TEXT.match(s))
    if numeric >= 0.9 * min(len(counts), 500) and len(strings) >= 3:
        examples = ", ".join(safe(repr(s), 24, r) for s in itertools.islice(counts, 3))
        note = f"numbers stored as text (e.g. {examples})"
    few = len(counts) <= MAX_LABELS and (len(counts) <= 15 or len(counts) * 4 <= len(strings))
    keep = KEPT_LABELS
    if categories is not None and len(categories) <= KEPT_CATEGORIES:
        few = True
        keep = KEPT_CATEGORIES  # exact and cheap: the dtype holds them
        for c in categories.tolist():
            if isinstance(c, str):
                counts.setdefault(c, 0)
    if not few:
        return (), note
    if numeric and note and len(counts) > 15:
        return (), note
    ranked = counts.most_common(keep)
    labels = tuple((safe(lab, 80, r), n / total) for lab, n in ranked)
    variants = _variants([lab for lab, _ in labels])
    if variants:
        note = (note + "; " if note else "") + variants
    return labels, note


def _norm_label(label: str) -> str:
    return re.sub(r"[\W_]+", "", label.casefold())


def _variants(labels: list[str]) -> str:
    """Labels that are probably the same thing spelt differently: case, spaces, prefixes."""
    labels = labels[:VARIANT_LABELS]
    groups: dict[str, list[str]] = {}
    for lab in labels:
        groups.setdefault(_norm_label(lab), []).append(lab)
    keys = sorted((k for k in groups if len(k) >= 2), key=len)
    # A short form that starts a longer one ("FR" / "France", "Premium" / "Premium plan").
    merged: dict[str, str] = {}
    for i, short in enumerate(keys):
        for long in keys[i + 1 :]:
            if long.startswith(short) and long not in merged and len(long) > len(short):
                merged[long] = merged.get(short, short)
    for long, short in merged.items():
        if long in groups and short in groups:
            groups[short].extend(groups.pop(long))
    found = [g for g in groups.values() if len(g) > 1]
    if not found:
        return ""
    parts = [" / ".join(repr(x) for x in g[:5]) for g in found[:6]]
    return "near-duplicate labels: " + "; ".join(parts)


def _number(v: float) -> str:
    # As code would write it (no thousands separators): the model filters on it.
    return format(v, ".6g") if not v.is_integer() else str(int(v))


def _sentinel_notes(block) -> list[tuple[int, str]]:
    """``(column, note)`` for the columns of a 2-D float sample holding a sentinel value.

    A sentinel is the column's minimum or maximum, repeated (at least 1% of the rows and 3
    times), and far outside the other values (or a usual code such as -999 outside them).
    """
    import numpy as np

    if block.size == 0 or block.shape[0] < 20:
        return []
    with np.errstate(all="ignore"):
        finite = np.isfinite(block)
        lo = np.where(finite, block, np.inf).min(axis=0)
        hi = np.where(finite, block, -np.inf).max(axis=0)
        need = max(3, block.shape[0] // 100)
        repeated = ((block == lo).sum(axis=0) >= need) | ((block == hi).sum(axis=0) >= need)
    out = []
    for k in np.flatnonzero(repeated)[:100]:
        column = block[:, k]
        note = _sentinel_note(column[np.isfinite(column)], float(lo[k]), float(hi[k]))
        if note:
            out.append((int(k), note))
    return out


def _sentinel_note(a, lo: float, hi: float) -> str:
    import numpy as np

    n = a.size
    if n < 20:
        return ""
    for v in (lo, hi):
        c = int((a == v).sum())
        if c < max(3, n // 100):
            continue
        rest = a[a != v]
        if rest.size < 2 or np.unique(rest[:200]).size < 2:
            continue
        rlo, rhi = float(rest.min()), float(rest.max())
        p1, p99 = (float(x) for x in np.percentile(rest, [1, 99]))
        spread = max(p99 - p1, abs(p99) * 1e-9, 1e-12)
        far = v < p1 - 3 * spread or v > p99 + 3 * spread
        coded = v in _SENTINELS and (v < rlo or v > rhi)
        if far or coded:
            return (
                f"{_number(v)} in {c / n:.0%} of the rows, far outside the rest "
                f"({_number(rlo)} … {_number(rhi)}): a missing-value code?"
            )
    return ""
