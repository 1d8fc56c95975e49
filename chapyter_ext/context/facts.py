"""The facts about one variable that a request may need, gathered once and cached.

A variable is a head line (its shape, its size) and, for tables and containers, a list of
:class:`Fact`: one per column or key, with its dtype or type, and for text columns with few
distinct values their labels (how often each occurs, near-duplicate variants flagged), for
numeric columns a sentinel value (``-999`` standing for "missing"), for text columns holding
numbers a note saying so (:mod:`.tables`; dicts and lists: :mod:`.containers`).
:mod:`.selection` then picks, per request, which facts are shown.

Cheap, whatever the data's size: a frame is read through a bounded sample of rows (evenly spaced
positions, ``df.iloc[positions]``), never a whole column; a wide frame's detail stops after the
first :data:`MAX_FACTS` columns (the rest are counted by dtype). Facts are cached per variable
name with a fingerprint that costs a few attribute reads (``id``, shape, the pandas block
manager's identity, a container's length and end items, an array's first values), so a warm
request does no work per variable but a dictionary look-up. A frame changed in place without
any of those changing (``df.iloc[0, 0] = 1``) keeps its old facts until it is rebuilt; labels
and shapes, which is what the facts are about, rarely change that way.

Facts cross the wire for the chat: :meth:`VarFacts.to_json` in the kernel
(``describe_variables``), :meth:`VarFacts.from_json` in the server.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..redact import REDACTED, Redactor, is_secret_name
from .relevance import index_words, name_words, words
from .values import (
    _default_chars,
    _describe,
    _pandas_types,
    _type_label,
)

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


# ---------------------------------------------------------------------------------------------
# The cache


class _Cache:
    """Facts by variable name, valid while the value's fingerprint and the secrets are the same."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, object, VarFacts]] = {}
        self.secrets: tuple[str, ...] = ()

    def check(self, r: Redactor) -> None:
        """Start again when the secrets changed: a new secret may be in a cached text."""
        secrets = tuple(r.secrets)
        if secrets != self.secrets:
            self.entries.clear()
            self.secrets = secrets

    def get(self, name: str, value: object, r: Redactor, *, full: bool = True) -> VarFacts:
        """The facts of ``name``; with ``full=False`` a stub (its name only) unless cached.

        A stub has ``pending`` set: :meth:`resolve` turns it into the facts when it is shown.
        """
        fp = fingerprint(value)
        entry = self.entries.get(name)
        if entry is not None and entry[0] == id(value) and entry[1] == fp:
            if full and entry[2].pending is not None:
                pass  # a stub: build the facts below
            else:
                return entry[2]
        if full:
            facts = variable_facts(name, value, r)
        else:
            facts = VarFacts(name, _type_label(value), "")
            facts.pending = value
        if len(self.entries) > 4096:
            self.entries.clear()
        self.entries[name] = (id(value), fp, facts)
        return facts

    def resolve(self, facts: VarFacts, r: Redactor) -> VarFacts:
        """The full facts for a stub (the facts themselves otherwise)."""
        if facts.pending is None:
            return facts
        return self.get(facts.name, facts.pending, r)

    def prune(self, names: set[str]) -> None:
        """Forget variables that are gone (keeps the cache as big as the namespace)."""
        if len(self.entries) > len(names) + 64:
            # list() copies the keys at once (under the GIL): the kernel's warm-up thread may
            # be filling the cache at the same time.
            for gone in [n for n in list(self.entries) if n not in names]:
                self.entries.pop(gone, None)


#: The one cache of the process (the kernel's, or the server's for ``build_context``).
CACHE = _Cache()

_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), range, frozenset)


def fingerprint(value: object) -> object:
    """A few attribute reads that change when the value changes the way summaries notice."""
    t = type(value)
    if isinstance(value, _IMMUTABLE):
        return t
    try:
        mgr = getattr(value, "_mgr", None)
        if mgr is not None:  # pandas: a new block manager for new columns, dtypes, rows
            shape = getattr(value, "shape", None)
            columns = getattr(value, "columns", None)
            return (t, shape, id(mgr), id(columns), tuple(map(id, getattr(mgr, "blocks", ()))))
        if isinstance(value, (list, dict)):
            n = len(value)
            if not n:
                return (t, 0)
            if isinstance(value, dict):
                return (t, n, id(next(iter(value.values()))), id(next(reversed(value.values()))))
            return (t, n, id(value[0]), id(value[-1]))
        shape = getattr(value, "shape", None)
        if shape is not None and not callable(shape):
            flat = getattr(value, "flat", None)
            # numpy: the first values are shown, so an edit in place must be seen.
            probe = flat[:6].tobytes() if flat is not None and hasattr(value, "tobytes") else b""
            return (t, shape, str(getattr(value, "dtype", "")), probe)
        if isinstance(value, (tuple, set)):
            return (t, len(value))
        attrs = getattr(value, "__dict__", None) if type(value).__dictoffset__ else None
        if isinstance(attrs, dict):
            return (t, len(attrs), tuple(map(id, itertools.islice(attrs.values(), 8))))
    except Exception:  # an odd object: never cached
        return object()
    return t


# ---------------------------------------------------------------------------------------------
# Building facts


def variable_facts(name: str, value: object, r: Redactor) -> VarFacts:
    """The facts of one variable (uncached); never raises."""
    label = _type_label(value)
    if is_secret_name(name):
        return VarFacts(name, label, REDACTED)
    try:
        pandas = _pandas_types()
        if pandas is not None and isinstance(value, (pandas[0], pandas[1])):
            from . import tables  # loaded once a pandas object is described

            if isinstance(value, pandas[0]):
                return tables.frame_facts(name, label, value, r)
            return tables.series_facts(name, label, value, r)
        if isinstance(value, (Mapping, list, tuple)) and len(value):
            from . import containers

            found = None
            if isinstance(value, Mapping):
                found = containers.mapping_facts(name, label, value, r)
            elif not hasattr(value, "_fields"):
                found = containers.sequence_facts(name, label, value, r)
            if found is not None:
                return found
    except Exception:  # any user object may fail in any way: the plain summary instead
        pass
    return VarFacts(name, label, _describe(value, _default_chars(value), r))


# ---------------------------------------------------------------------------------------------
# Imported modules


def module_aliases(user_ns: Mapping[str, Any], limit: int = 40) -> list[tuple[str, str]]:
    """``[(alias, module name)]`` for the modules bound in the namespace (``np`` -> numpy)."""
    import types

    out = []
    for name, value in list(user_ns.items()):
        if isinstance(value, types.ModuleType) and isinstance(name, str) and name[:1] != "_":
            out.append((name, getattr(value, "__name__", name)))
            if len(out) >= limit:
                break
    return out


# ---------------------------------------------------------------------------------------------
# The short form inline completion reads (run in the kernel after every cell: names only)

#: Characters per completion summary, and columns or keys listed in one.
COMPLETION_SUMMARY = 200
COMPLETION_ITEMS = 30


def _clip_summary(text: str) -> str:
    return text if len(text) <= COMPLETION_SUMMARY else text[: COMPLETION_SUMMARY - 1] + "…"


def _first_items(values: Any) -> str:
    return ", ".join(str(v) for _, v in zip(range(COMPLETION_ITEMS), values))


def completion_summary(value: Any) -> str:
    """What may follow ``value``'s name after a dot or a bracket, cheaply (no ``repr`` of the
    value; pandas and numpy recognised by their type's name, never imported): a DataFrame's
    columns, a dict's keys, a function's signature, a container's length."""
    import inspect

    kind = type(value).__name__
    try:
        if kind == "DataFrame" and hasattr(value, "columns"):
            shape = getattr(value, "shape", ("?", "?"))
            return _clip_summary(f"{shape[0]} rows; columns: {_first_items(value.columns)}")
        if kind == "Series" and hasattr(value, "name"):
            return _clip_summary(f"{len(value)} values, name {value.name!r}, dtype {value.dtype}")
        if kind == "ndarray":
            return _clip_summary(f"shape {value.shape}, dtype {value.dtype}")
        if isinstance(value, Mapping):
            keys = [k for _, k in zip(range(COMPLETION_ITEMS), value.keys())]
            return _clip_summary(f"{len(value)} keys: {_first_items(repr(k) for k in keys)}")
        if isinstance(value, (list, tuple, set)):
            return f"{len(value)} items"
        if isinstance(value, (int, float, bool)) or value is None:
            return repr(value)[:40]
        if isinstance(value, str):
            return f"str of {len(value)} chars"
        if inspect.isclass(value):
            return _clip_summary(f"class {value.__name__}")
        if callable(value):
            try:
                return _clip_summary(
                    f"{getattr(value, '__name__', kind)}{inspect.signature(value)}"
                )
            except (TypeError, ValueError):
                return "callable"
    except Exception:  # a value whose attributes raise: its type is enough
        return ""
    return ""
