"""Containers as facts: a dict's keys (with the columns of its DataFrames, the shapes of its
arrays), a list of records' keys with an example value, a list of frames or arrays by index."""

from __future__ import annotations

import collections
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..redact import REDACTED, Redactor, is_secret_name
from .facts import MAX_FACTS, Fact, VarFacts
from .frames import label_text
from .relevance import name_words
from .text import clip, numpy_types, pandas_types, safe, type_label
from .values import brief


def _item_text(value: Any, r: Redactor, limit: int = 240) -> tuple[str, str, list[str]]:
    """(kind, text, extra words) of a container's item: frames with their columns."""
    pandas = pandas_types()
    if pandas is not None and isinstance(value, pandas[0]):
        rows, cols = value.shape
        names = value.columns[:40].tolist()
        dtypes = value.dtypes.iloc[:40].tolist()

        parts = [f"{label_text(n, r, 40)} {d}" for n, d in zip(names, dtypes)]
        text = f"DataFrame {rows:,}×{cols:,}: " + ", ".join(parts)
        if cols > len(names):
            text += f", … (+{cols - len(names):,})"
        return "DataFrame", clip(text, limit * 2), [str(n) for n in names]
    if pandas is not None and isinstance(value, pandas[1]):
        return "Series", f"Series of {len(value):,} {value.dtype}", []
    arrays = numpy_types()
    if arrays is not None and isinstance(value, arrays[0]):
        return "ndarray", f"ndarray {tuple(value.shape)} {value.dtype}", []
    if isinstance(value, Mapping):
        keys = [str(k) for k in itertools.islice(value, 12)]
        shown = ", ".join(safe(repr(k), 30, r) for k in keys)
        more = ", …" if len(value) > len(keys) else ""
        return "dict", f"dict of {len(value):,}: keys {shown}{more}", keys
    kind = type_label(value)
    return kind, brief(value, limit, r, 1), []


def _is_structured(value: Any) -> bool:
    return not isinstance(value, (str, bytes, int, float, bool, type(None)))


def mapping_facts(name: str, label: str, value: Mapping, r: Redactor) -> VarFacts | None:
    n = len(value)
    items = list(itertools.islice(value.items(), MAX_FACTS))
    if n <= 6 and not any(_is_structured(v) for _, v in items):
        return None  # a small dict of scalars: its one-line summary says it all
    facts = []
    kinds: collections.Counter[str] = collections.Counter()
    for key, item in items:
        key_label = brief(key, 60, r, 1)
        if isinstance(key, str) and is_secret_name(key):
            facts.append(Fact(key_label, "secret", REDACTED, words=frozenset(name_words(key))))
            continue
        kind, text, extra = _item_text(item, r)
        kinds[kind] += 1
        found = name_words(str(key))
        for word in extra[:40]:
            found |= name_words(word)
        facts.append(Fact(key_label, kind, text, words=frozenset(found)))
    head = f"{n:,} keys"
    if kinds:
        common, count = kinds.most_common(1)[0]
        head += f", values: {'all' if count == len(items) else 'mostly'} {common}"
    return VarFacts(name, label, head, facts, noun="keys", total=n)


def sequence_facts(name: str, label: str, value: Sequence, r: Redactor) -> VarFacts | None:
    n = len(value)
    first = list(itertools.islice(value, 20))
    if all(isinstance(x, Mapping) for x in first):
        keys: dict[Any, Any] = {}
        for record in first:
            for k, v in itertools.islice(record.items(), 200):
                keys.setdefault(k, v)
        facts = []
        for k, v in itertools.islice(keys.items(), MAX_FACTS):
            key_label = brief(k, 60, r, 1)
            if isinstance(k, str) and is_secret_name(k):
                facts.append(Fact(key_label, "secret", REDACTED, words=frozenset(name_words(k))))
                continue
            kind = type_label(v)
            facts.append(
                Fact(
                    key_label,
                    kind,
                    f"{kind}, e.g. {brief(v, 60, r, 1)}",
                    words=frozenset(name_words(str(k))),
                )
            )
        head = f"{n:,} records (dicts)"
        return VarFacts(name, label, head, facts, noun="keys", total=len(keys))
    if any(_is_structured(x) and not isinstance(x, (list, tuple)) for x in first[:6]):
        facts = []
        for i, item in enumerate(itertools.islice(value, 100)):
            kind, text, extra = _item_text(item, r)
            found: set[str] = set()
            for word in extra[:40]:
                found |= name_words(word)
            facts.append(Fact(f"[{i}]", kind, text, words=frozenset(found)))
        return VarFacts(name, label, f"{n:,} items", facts, noun="items", total=n)
    return None
