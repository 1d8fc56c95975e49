"""Request-aware context: words, facts (labels, sentinels, containers), selection, the cache."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from chapyter_ext.context import REDACTED, build_context, describe_variables, kernel_context
from chapyter_ext.context.fact_cache import CACHE, variable_facts
from chapyter_ext.context.notebook import NotebookSnapshot, chat_context
from chapyter_ext.context.relevance import name_words, request_terms, words
from chapyter_ext.redact import Redactor


def run(sh, *cells: str) -> None:
    for cell in cells:
        sh.run_cell(cell, store_history=True)


def facts_text(name: str, value, request: str = "", budget: int = 6000) -> str:
    return build_context(
        variables=[(name, value)], recent_cells=[], last_error=None, budget=budget, request=request
    )


def test_words_are_case_separator_and_plural_insensitive():
    assert (
        words("customerID")
        == words("customer_id")
        == words("Customer Id")
        == [
            "customer",
            "id",
        ]
    )
    assert words("HTTPServer2") == ["http", "server", "2"]
    assert words("Cities") == ["city"]
    assert {"quantity", "qtyordered"} <= name_words("qty_ordered")
    terms = request_terms("the avarage temprature of Norwegian customers per unit")
    assert terms.match("cust") > 0  # a prefix
    assert terms.match("temperature") > 0  # a typo
    assert terms.match("norway") > 0  # a long common start
    assert terms.match("unit") == 1.0
    assert terms.match("the") == 0 and terms.match("price") == 0
    # The error's words count when there is a request, less than the request's.
    with_error = request_terms("fix it", error="KeyError: 'Revenue'")
    assert 0 < with_error.match("revenue") < 1


def test_labels_with_shares_and_near_duplicates():
    rng = np.random.default_rng(0)
    orders = pd.DataFrame(
        {
            "ship_country": rng.choice(["FR", "France ", "france", "DE", "ES"], 3000),
            "total": rng.random(3000),
        }
    )
    text = facts_text("orders", orders, "orders shipped to France")
    line = next(x for x in text.splitlines() if "'ship_country'" in x)
    assert "5 labels (in 2,000 sampled rows)" in line
    assert all(f"'{x}'" in line for x in ["FR", "France ", "france", "DE", "ES"])
    assert "near-duplicate labels: " in line and "'FR'" in line.split("near-duplicate")[1]


def test_many_labels_show_the_frequent_and_the_matching_ones():
    brands = [f"Brand {i}" for i in range(299)] + ["Acme Corp"]
    products = pd.DataFrame({"brand": pd.Categorical(np.resize(brands, 20_000))})
    asked = facts_text("products", products, "units of the Acme products")
    assert "300 labels" in asked and "'Acme Corp'" in asked and "(+" in asked
    other = facts_text("products", products, "units of the products")
    assert "300 labels" in other and "'Acme Corp'" not in other


def test_sentinels_and_numbers_stored_as_text():
    rng = np.random.default_rng(1)
    survey = pd.DataFrame(
        {
            "age": np.where(rng.random(3000) < 0.08, -999, rng.integers(18, 90, 3000)),
            "income": [f"{x:,.2f}" for x in rng.random(3000) * 9000],
            "plain": rng.normal(size=3000),
        }
    )
    text = facts_text("survey", survey, "mean age and income")
    age = next(x for x in text.splitlines() if "'age'" in x)
    assert "-999 in " in age and "far outside the rest (18 … 89)" in age
    assert "numbers stored as text" in next(x for x in text.splitlines() if "'income'" in x)
    assert "'plain' float64" in text and "outside" not in text.split("'plain'")[1][:40]


def test_wide_table_matching_columns_first_then_the_rest_summarised():
    columns = [f"sensor_{i}" for i in range(1998)] + ["ambient_humidity", "site_code"]
    wide = pd.DataFrame(np.zeros((5, 2000)), columns=columns)
    wide["flag"] = True
    text = facts_text("readings", wide, "humidity for each site")
    body = text.split("- readings (DataFrame): 5 rows × 2,001 columns\n", 1)[1]
    assert body.startswith(
        "    columns: 'ambient_humidity' float64, 'site_code' float64, 'sensor_0'"
    )
    note = next(x for x in body.splitlines() if x.lstrip().startswith("+"))
    assert "more columns: " in note and "float64" in note
    assert "1 bool ('flag')" in note and "names mostly sensor_*" in note
    assert len(text) < 2500  # not the whole budget


def test_containers_by_keys_columns_and_shapes():
    sheets = {
        "Q1 sales": pd.DataFrame({"sku": [1], "units": [2]}),
        "returns": pd.DataFrame({"sku": [1], "reason": ["x"]}),
    }
    text = facts_text("sheets", sheets, "sum the units of the quarterly sales")
    assert "- sheets (dict): 2 keys, values: all DataFrame" in text
    assert "'Q1 sales' DataFrame 1×2: 'sku' int64, 'units' int64" in text
    events = [{"user_id": i, "event_type": "click"} for i in range(50)]
    text = facts_text("events", events, "events per type")
    assert "50 records (dicts)\n    keys: " in text and "'event_type' str, e.g. 'click'" in text
    batches = [np.zeros((32, 3, 8, 8)) for _ in range(3)]
    assert "[0] ndarray (32, 3, 8, 8) float64" in facts_text("batches", batches, "stack them")
    lists = {"red": [3, 5], "blue": [9]}
    assert "'red' 2 items: [3, 5]" in facts_text("scores_by_team", lists, "best team")


def test_aliases_and_the_named_variable_in_a_large_namespace(shell):
    run(shell, "import numpy as np\nimport matplotlib.pyplot as plt\nimport json")
    shell.user_ns["invoice_lines"] = pd.DataFrame({"invoice": [1], "qty": [-1]})
    shell.user_ns.update({f"tmp_{i}": [i] * 5 for i in range(300)})
    text = kernel_context(shell, budget=2000, request="which invoices have a negative quantity?")
    assert "Imported modules: np = numpy, plt = matplotlib.pyplot, json" in text
    variables = text.split("Variables (most relevant first):\n", 1)[1]
    assert variables.startswith("- invoice_lines (DataFrame): 1 rows × 2 columns\n")
    assert "'qty' int64" in variables and "more variables: " in variables
    # Without the request, it is the oldest of 301 and the budget runs out first.
    assert "invoice_lines (DataFrame)" not in kernel_context(shell, budget=2000)


def test_password_columns_and_secret_keys_never_leave(shell):
    shell.user_ns["accounts"] = pd.DataFrame(
        {"login": ["ann", "bob"] * 10, "password": ["pa55-ann-xyz", "pa55-bob-xyz"] * 10}
    )
    shell.user_ns["service"] = {"url": "https://x", "api_token": "tok-Zq9-" + "a" * 10}
    shell.user_ns["rows"] = [{"user": "ann", "password": "pa55-row-xyz"}] * 3
    # Key-shaped labels of an innocent-looking column are redacted like any other text.
    shell.user_ns["keys_seen"] = pd.DataFrame(
        {"comment": ["sk-proj-Abc123Def456Ghi789Jkl012Mno345", "fine"] * 20}
    )
    outputs = [
        kernel_context(shell, request="how many accounts log in with a password"),
        json.dumps(describe_variables(shell.user_ns, shell.user_ns_hidden)),
    ]
    for out in outputs:
        assert "pa55-" not in out and "tok-Zq9" not in out and "sk-proj" not in out
    assert f"'api_token': {REDACTED}" in outputs[0]


def test_labels_never_scan_the_whole_column(monkeypatch):
    n = 5_000_000
    trips = pd.DataFrame(
        {"payment": np.resize(np.array(["Cash", "Card", "card "], dtype=object), n)}
    )

    def refuse(*args, **kwargs):
        raise AssertionError("a whole column was scanned")

    for method in ("value_counts", "unique", "nunique", "tolist"):
        monkeypatch.setattr(pd.Series, method, refuse)
    monkeypatch.setattr(
        pd.Series, "tolist", lambda self: refuse() if len(self) > 10_000 else [*self.to_numpy()]
    )
    facts = variable_facts("trips", trips, Redactor())
    (payment,) = facts.facts
    assert payment.sampled == 2000 and {lab for lab, _ in payment.labels} == {
        "Cash",
        "Card",
        "card ",
    }


def test_facts_are_cached_until_the_value_changes(shell):
    df = pd.DataFrame({"a": [1, 2]})
    shell.user_ns["df"] = df
    kernel_context(shell, request="the a column")
    first = CACHE.entries["df"][2]
    kernel_context(shell, request="something else")
    assert CACHE.entries["df"][2] is first  # warm: nothing rebuilt
    df["b"] = ["x", "y"]
    assert "'b' " in kernel_context(shell, request="the b column")
    assert CACHE.entries["df"][2] is not first
    shell.user_ns["df"] = pd.DataFrame({"c": [1]})
    assert "'c' int64" in kernel_context(shell, request="the c column")
    # An array's first values are shown: an edit in place is seen.
    shell.user_ns["arr"] = arr = np.zeros(5)
    assert "[0.0, 0.0" in kernel_context(shell, request="the arr values")
    arr[0] = 7
    assert "[7.0, 0.0" in kernel_context(shell, request="the arr values")


def test_chat_gets_the_same_facts_through_the_snapshot(shell):
    run(shell, "import numpy as np")
    shell.user_ns["parcels"] = pd.DataFrame(
        {"state": np.resize(["Shipped", "shipped", "SHIPPED ", "Pending"], 400)}
    )
    shell.user_ns.update({f"param_{i}": i for i in range(600)})
    variables = json.loads(json.dumps(describe_variables(shell.user_ns, shell.user_ns_hidden)))
    assert {"name": "np", "type": "module", "summary": "numpy"} in variables
    snapshot = NotebookSnapshot.parse({"path": "a.ipynb", "variables": variables})
    context = chat_context(
        snapshot, budget=3000, redactor=Redactor(), request="how many parcels were shipped?"
    )
    assert "Imported modules: np = numpy" in context.text
    assert "- parcels (DataFrame): 400 rows × 1 columns" in context.text
    assert "'Shipped'" in context.text and "near-duplicate labels" in context.text
    assert context.summary == "a.ipynb · 601 variables"
    # Malformed facts are left out; the summary still shows.
    bad = {"path": "a.ipynb", "variables": [{"name": "x", "type": "T", "summary": "s", "facts": 3}]}
    text = chat_context(NotebookSnapshot.parse(bad), budget=500, redactor=Redactor()).text
    assert "- x (T): s" in text


@pytest.mark.parametrize("budget", [0, 30, 100, 400, 1500, 6000])
def test_budget_is_respected_with_a_request(shell, budget):
    rng = np.random.default_rng(2)
    shell.user_ns["wide"] = pd.DataFrame(rng.random((3, 3000)))
    shell.user_ns["labels"] = pd.DataFrame({"c": rng.choice(["a" * 50, "b" * 50], 100)})
    shell.user_ns.update({f"v{i}": "x" * 100 for i in range(200)})
    text = kernel_context(shell, budget=budget, request="the c labels of the wide table")
    assert len(text) <= budget


def test_cells_the_request_is_about_are_kept_when_cells_are_cut():
    cells = [("rainfall = load('rain.csv')  # the monthly rainfall", None)]
    cells += [(f"step_{i} = {i}\n" + "# filler line\n" * 20, None) for i in range(8)]
    kept = build_context(
        variables=[], recent_cells=cells, last_error=None, budget=500, request="plot rainfall"
    )
    assert "rainfall = load" in kept and "step_7 = 7" in kept
    assert "cells not shown)" in kept and "earlier cells" not in kept
    plain = build_context(variables=[], recent_cells=cells, last_error=None, budget=500)
    assert "rainfall = load" not in plain and "earlier cells not shown)" in plain
