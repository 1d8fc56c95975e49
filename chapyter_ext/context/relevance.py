"""How relevant a name, a column or a label is to what was asked: words, sub-words and typos.

A request rarely spells an identifier: "the premium customers' monthly spend" is about
``cust_df['plan_name'] == 'Premium plan (annual)'`` and ``monthly_spend``. So both sides are cut
into words the same way (case- and separator-insensitive: ``customerID``, ``customer_id`` and
"Customer Id" are the same two words), plurals folded, common abbreviations expanded (``qty`` is
"quantity"), and a word matches another exactly, as a prefix (``cust`` / "customers"), by a
long common start ("Norwegian" / "Norway"), or fuzzily (one typo in a long word). Words are
grouped by their first three letters, so matching a variable against a request costs a few
dictionary look-ups, not a comparison of every pair.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

# Function words that say nothing about which data is meant.
_STOP_WORDS = (
    "a an the of to in on for by with and or from at as is are be been this that these those it "
    "its into all each every which what who whose show me my our your please make give get "
    "want need let us we i you can could would should will do does did how many much than then "
    "there their them only some any per new using use based also just so if not no one two "
    "where when while like such other same each both between within without onto over under "
    "python code pandas dataframe table column columns row rows value values variable"
)
_STOP = frozenset(_STOP_WORDS.split())
# Common abbreviations in names, expanded so the request's full words find them.
_ABBREVIATIONS = {
    "addr": "address",
    "amt": "amount",
    "avg": "average",
    "cat": "category",
    "cnt": "count",
    "ctry": "country",
    "cust": "customer",
    "dept": "department",
    "desc": "description",
    "dob": "birth",
    "dt": "date",
    "emp": "employee",
    "err": "error",
    "img": "image",
    "lat": "latitude",
    "lng": "longitude",
    "lon": "longitude",
    "mgr": "manager",
    "msg": "message",
    "num": "number",
    "pct": "percent",
    "pop": "population",
    "prod": "product",
    "qty": "quantity",
    "rev": "revenue",
    "temp": "temperature",
    "ts": "timestamp",
    "tx": "transaction",
    "txn": "transaction",
    "usr": "user",
    "val": "value",
    "yr": "year",
}

_CHUNK = re.compile(r"[^\W\d_]+|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W\d_]+")
_QUOTED = re.compile(r"""["'`]([^"'`\n]{1,60})["'`]""")

# How much each kind of match is worth, relative to the word's own weight.
EXACT = 1.0
PREFIX = 0.75
FUZZY = 0.6
STEM = 0.5


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _fold(word: str) -> str:
    """Lower case, accents removed, plural folded: "Cities" -> "city", "Réunion" -> "reunion"."""
    word = word.lower()
    if not word.isascii():
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if c.isascii()) or word
    n = len(word)
    if n > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if n > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if n > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The folded words of a name, a label or a request, in order (digits are words too)."""
    out: list[str] = []
    for chunk in _CHUNK.findall(text):
        if chunk.isdigit():
            out.append(chunk)
        elif chunk.islower() or chunk.isupper():
            out.append(_fold(chunk))
        else:
            out.extend(_fold(part) for part in _CAMEL.findall(chunk))
    return out


def name_words(text: str) -> set[str]:
    """The words a name is found by: its words, their expansions, and all of them joined."""
    parts = words(text)
    found = set(parts)
    for part in parts:
        long = _ABBREVIATIONS.get(part)
        if long:
            found.add(long)
    if len(parts) > 1:
        found.add("".join(parts))
    return found


def _key(word: str) -> str:
    return word[:3]


class Terms:
    """What a request (and the code and error around it) is about: weighted folded words.

    ``weights`` maps a word to its weight; ``buckets`` groups them by their first three letters,
    the only words a candidate is compared with. ``quoted`` holds the request's quoted strings
    (labels the user spelled out).
    """

    __slots__ = ("buckets", "memo", "quoted", "weights")

    def __init__(self) -> None:
        self.weights: dict[str, float] = {}
        self.buckets: dict[str, list[str]] = {}
        self.quoted: set[str] = set()
        #: Words already matched (a fuzzy match costs a difflib comparison).
        self.memo: dict[str, float] = {}

    def add(self, text: str, weight: float) -> None:
        """Add the words of ``text`` (and each pair of neighbours joined) at ``weight``."""
        if not text:
            return
        parts = [w for w in words(text[-20_000:]) if w not in _STOP]
        joined = ["".join(pair) for pair in zip(parts, parts[1:])]
        for word in (*parts, *joined):
            if word.isdigit() and len(word) < 3:
                continue
            if self.weights.get(word, 0.0) < weight:
                if word not in self.weights:
                    self.buckets.setdefault(_key(word), []).append(word)
                self.weights[word] = weight
        for m in _QUOTED.finditer(text[-20_000:]):
            self.quoted.add(m.group(1).strip().casefold())

    def __bool__(self) -> bool:
        return bool(self.weights)

    def match(self, word: str) -> float:
        """How well one folded word matches the terms: weight × exact, prefix or fuzzy."""
        known = self.memo.get(word)
        if known is None:
            known = self.memo[word] = self._match(word)
        return known

    def _match(self, word: str) -> float:
        exact = self.weights.get(word)
        if exact is not None:
            return exact * EXACT
        best = 0.0
        if len(word) < 3:
            return best
        for term in self.buckets.get(_key(word), ()):
            weight = self.weights[term]
            if len(term) < 3:
                continue
            short, long = (term, word) if len(term) <= len(word) else (word, term)
            if long.startswith(short) and len(short) >= 3:
                score = PREFIX
            elif _common_prefix(short, long) >= max(4, len(short) * 3 // 5):
                score = STEM  # "Norwegian" / "Norway", "Swedish" / "Sweden"
            elif len(short) >= 5 and len(long) - len(short) <= 2:
                import difflib  # lazily: only a near miss needs it

                ratio = difflib.SequenceMatcher(None, short, long).ratio()
                score = FUZZY if ratio >= 0.8 else 0.0
            else:
                score = 0.0
            best = max(best, weight * score)
        return best

    def hits(self, index: dict[str, tuple[str, ...]]) -> dict[str, float]:
        """Every word of ``index`` (words grouped by :func:`index_words`) that matches."""
        found: dict[str, float] = {}
        keys = index if len(index) < len(self.buckets) else self.buckets
        for key in keys:
            if key not in self.buckets:
                continue
            for word in index.get(key, ()):
                s = self.match(word)
                if s > 0:
                    found[word] = s
        return found


def index_words(vocabulary: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Words grouped by their first three letters, for :meth:`Terms.hits`."""
    groups: dict[str, list[str]] = {}
    for word in vocabulary:
        groups.setdefault(_key(word), []).append(word)
    return {k: tuple(v) for k, v in groups.items()}


def request_terms(request: str | None, *, error: str | None = None) -> Terms:
    """The terms of a request (the same object again for the same request: see ``_terms``)."""
    return _terms(request or "", error or "")


@functools.lru_cache(maxsize=16)
def _terms(request: str, error: str) -> Terms:
    """The terms of a request, with the error's words weighing less.

    The recent code is not among them: it names every column it touches, so it would make
    everything relevant; the variables it uses get a bonus instead (``selection.used_names``).
    """
    terms = Terms()
    if request:
        terms.add(request, 1.0)
        if error:
            terms.add(error[-4000:], 0.6)
    return terms
