"""The keywords a kernel's callable accepts, for inline completion:
``chapyter_ext.context.signatures.accepted_keywords``, read without calling anything."""

from __future__ import annotations

import math
from typing import ClassVar

import pandas as pd
import pytest

from chapyter_ext.context.signatures import MAX_CALLEES, accepted_keywords


def positional_only(a, /, b, *, c=1):
    return a


def anything(x, **options):
    return x


class Tracker:
    """Reading any of these would run code: the reader must not."""

    ran: ClassVar[list[str]] = []

    @property
    def report(self):
        Tracker.ran.append("property")
        return print

    def __getattr__(self, name):
        Tracker.ran.append(f"__getattr__ {name}")
        return print

    def method(self, value, *, scale=1):
        return value


@pytest.fixture
def namespace() -> dict:
    sales = pd.DataFrame({"region": ["north", "south"], "revenue": [3, 5]})
    return {
        "sales": sales,
        "pd": pd,
        "math": math,
        "positional_only": positional_only,
        "anything": anything,
        "tracker": Tracker(),
        "Tracker": Tracker,
    }


def names(found: dict, callee: str) -> list[str] | None:
    value = found[callee]
    return None if value is None else value.get("names")


@pytest.mark.parametrize(
    ("callee", "takes", "rejects"),
    [
        # A method of a DataFrame, bound: `by` yes, `self` and a made-up name no.
        ("sales.sort_values", ["by", "ascending", "key"], ["by_region", "self"]),
        ("sales.groupby", ["by", "as_index"], ["column"]),
        ("pd.read_csv", ["sep", "usecols"], ["separator"]),
        # Builtins with a text signature.
        ("sorted", ["key", "reverse"], ["reversed", "iterable"]),
        # Positional-only parameters are no keywords.
        ("positional_only", ["b", "c"], ["a"]),
        ("math.floor", [], ["x"]),
        ("tracker.method", ["value", "scale"], ["self"]),
        # A method looked up on its class is not bound.
        ("Tracker.method", ["self", "value"], ["other"]),
    ],
)
def test_the_keywords_a_callee_takes(namespace, callee, takes, rejects):
    found = names(accepted_keywords(namespace, [callee]), callee)
    assert found is not None
    assert set(takes) <= set(found)
    assert not set(rejects) & set(found)


def test_kwargs_takes_anything(namespace):
    assert accepted_keywords(namespace, ["anything"]) == {"anything": {"any": True}}


@pytest.mark.parametrize(
    "callee",
    [
        "dict",  # a builtin without a signature
        "sales.revenue.fillna",  # a column through __getattr__: not looked into
        "sales.plot",  # an accessor: its __get__ is pandas' code
        "missing.name",
        "sales.no_such_method",
    ],
)
def test_unknown_is_none(namespace, callee):
    assert accepted_keywords(namespace, [callee]) == {callee: None}


def test_nothing_runs(namespace):
    Tracker.ran.clear()
    found = accepted_keywords(namespace, ["tracker.report", "tracker.made_up", "tracker.method"])
    assert found["tracker.report"] is None and found["tracker.made_up"] is None
    assert names(found, "tracker.method") == ["value", "scale"]
    assert Tracker.ran == []


def test_only_dotted_names_and_a_bound(namespace):
    found = accepted_keywords(namespace, ["sorted()", "__import__('os').system", "a..b", 3])
    assert found == {}
    many = accepted_keywords(namespace, ["sorted"] * 3 + [f"x{i}" for i in range(40)])
    assert len(many) <= MAX_CALLEES
