"""The facts about one variable that a request may need (gathered and cached by
:mod:`.fact_cache`).

A variable is a head line (its shape, its size) and, for tables and containers, a list of
:class:`Fact`: one per column or key, with its dtype or type, and for text columns with few
distinct values their labels (how often each occurs, near-duplicate variants flagged), for
numeric columns a sentinel value (``-999`` standing for "missing"), for text columns holding
numbers a note saying so (:mod:`.tables`; dicts and lists: :mod:`.containers`).
:mod:`.selection` then picks, per request, which facts are shown.

Cheap, whatever the data's size: a frame is read through a bounded sample of rows (evenly spaced
positions, ``df.iloc[positions]``), never a whole column; a wide frame's detail stops after the
first :data:`MAX_FACTS` columns (the rest are counted by dtype).

Facts cross the wire for the chat: :meth:`VarFacts.to_json` in the kernel
(``describe_variables``), :meth:`VarFacts.from_json` in the server.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .relevance import index_words, name_words, words

# Columns (or keys) listed one by one (a name and a dtype: cheap); further ones are counted.
MAX_FACTS = 10_000
# Columns or keys a variable carries to the server for the chat (the rest are counted).
WIRE_FACTS = 3000
# Columns whose values are sampled for labels, sentinels and numbers stored as text.
MAX_ANALYSED = 300
# Rows sampled per frame (fewer for wide frames: about SAMPLE_CELLS values in all).
SAMPLE_ROWS = 2000
SAMPLE_CELLS = 200_000
# A text column is a label column when its sample has at most this many distinct values
# (and each occurs four times on average); near-duplicates are looked for among the first.
MAX_LABELS = 200
VARIANT_LABELS = 60
# Labels kept per column (the most frequent); all the categories of a categorical, up to more.
KEPT_LABELS = 200
KEPT_CATEGORIES = 1000


class Fact(NamedTuple):
    """A column of a table, a key of a dict, an item of a list: one line of a variable."""

    label: str  # how it is named in code: "'country'", "'sales'", "[0]"
    kind: str  # its dtype or type ("object", "float64", "DataFrame"), for the "+N more" note
    text: str  # what it is, after the label: "object", "DataFrame 1,000×5: 'a', 'b'"
    note: str = ""  # a sentinel, numbers stored as text, near-duplicate labels
    labels: tuple[tuple[str, float], ...] = ()  # (label, share of sampled rows), most common first
    words: frozenset[str] = frozenset()  # the words it is found by (its name's and its labels')
    sampled: int = 0  # rows the labels and note were read from, when not all of them

    @property
    def rich(self) -> bool:
        """Whether it needs a line of its own (labels or a note)."""
        return bool(self.labels or self.note)


class VarFacts:
    """One variable's facts: name, type, head line, facts (columns, keys), a preview."""

    __slots__ = (
        "facts",
        "head",
        "index",
        "name",
        "noun",
        "own_words",
        "pending",
        "rendered",
        "rest_kinds",
        "tail",
        "total",
        "type",
    )

    def __init__(
        self,
        name: str,
        type: str,
        head: str,
        facts: Sequence[Fact] = (),
        *,
        noun: str = "columns",
        total: int | None = None,
        tail: str = "",
    ) -> None:
        self.name = name
        self.type = type
        self.head = head
        self.facts = tuple(facts)
        self.noun = noun
        #: How many columns or keys there are in all (facts may describe the first ones only).
        self.total = len(self.facts) if total is None else total
        self.tail = tail
        self.own_words = frozenset(name_words(name))
        vocabulary = set(self.own_words)
        for fact in self.facts:
            vocabulary |= fact.words
        self.index = index_words(vocabulary)
        #: Texts already rendered, by (width, what matched): see ``selection``.
        self.rendered: dict[Any, str] = {}
        #: The dtypes of columns past those described (a wide table's rest), for the note.
        self.rest_kinds: dict[str, int] = {}
        #: The value, for a stub whose facts are built only if it is shown (see ``_Cache``).
        self.pending: object = None

    def name_words(self) -> frozenset[str]:
        """The words the variable's own name is found by."""
        return self.own_words

    def to_json(self, max_facts: int = WIRE_FACTS) -> dict[str, Any]:
        """The wire form (``describe_variables``): short keys, as the snapshot may be large.

        Past ``max_facts`` columns or keys, those with labels or a note, or of a kind other
        than the most common one (the one bool column among 5,000 floats), still go; the
        others are counted by kind (``rest_kinds``).
        """
        out: dict[str, Any] = {"head": self.head}
        rest_kinds = dict(self.rest_kinds)
        if self.facts:
            kept = list(self.facts[:max_facts])
            dropped = []
            if len(self.facts) > max_facts:
                common = collections.Counter(f.kind for f in self.facts).most_common(1)[0][0]
                for f in self.facts[max_facts:]:
                    if (f.rich or f.kind != common) and len(kept) < max_facts + 1000:
                        kept.append(f)
                    else:
                        dropped.append(f)
            out["facts"] = [
                [f.label, f.kind, f.text, f.note, [[lab, round(s, 4)] for lab, s in f.labels]]
                + ([f.sampled] if f.sampled else [])
                for f in kept
            ]
            for f in dropped:
                rest_kinds[f.kind] = rest_kinds.get(f.kind, 0) + 1
            out["noun"] = self.noun
            out["total"] = self.total
        if self.tail:
            out["tail"] = self.tail
        if rest_kinds:
            out["rest_kinds"] = dict(collections.Counter(rest_kinds).most_common(5))
        return out

    @classmethod
    def from_json(cls, name: str, type: str, summary: str, obj: Mapping[str, Any]) -> VarFacts:
        """From the wire form; anything malformed is dropped (the summary still shows)."""
        head = obj.get("head")
        raw = obj.get("facts")
        facts: list[Fact] = []
        if isinstance(raw, list):
            for item in raw[:MAX_FACTS]:
                fact = _fact_from_json(item)
                if fact is not None:
                    facts.append(fact)
        if not isinstance(head, str) or not facts:
            return cls(name, type, summary)
        noun = obj.get("noun")
        total = obj.get("total")
        tail = obj.get("tail")
        vf = cls(
            name,
            type,
            head[:2000],
            facts,
            noun=noun[:20] if isinstance(noun, str) else "columns",
            total=total if isinstance(total, int) and total >= len(facts) else None,
            tail=tail[:2000] if isinstance(tail, str) else "",
        )
        kinds = obj.get("rest_kinds")
        if isinstance(kinds, dict):
            vf.rest_kinds = {
                str(k)[:100]: v for k, v in list(kinds.items())[:5] if isinstance(v, int)
            }
        return vf


def _fact_from_json(item: Any) -> Fact | None:
    if not isinstance(item, list) or len(item) < 5:
        return None
    label, kind, text, note, labels = item[:5]
    if not all(isinstance(x, str) for x in (label, kind, text, note)):
        return None
    pairs: list[tuple[str, float]] = []
    if isinstance(labels, list):
        for pair in labels[:KEPT_CATEGORIES]:
            if (
                isinstance(pair, list)
                and len(pair) == 2
                and isinstance(pair[0], str)
                and isinstance(pair[1], (int, float))
            ):
                pairs.append((pair[0][:200], float(pair[1])))
    sampled = item[5] if len(item) > 5 and isinstance(item[5], int) else 0
    label, text, note = label[:300], text[:1000], note[:500]
    return Fact(label, kind[:100], text, note, tuple(pairs), fact_words(label, pairs), sampled)


def fact_words(label: str, labels: Sequence[tuple[str, float]] = ()) -> frozenset[str]:
    found = name_words(label.strip("'\"[]"))
    for lab, _ in labels[:KEPT_CATEGORIES]:
        found.update(words(lab))
    return frozenset(found)
