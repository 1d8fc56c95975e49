"""The bundled model never overwrites the user's data, and shows what it computed:
code offered for a request that does not ask to change a variable never re-binds it to
something derived from it (a new name instead), and ends by showing its result."""

from __future__ import annotations

import ast

import pandas as pd
import pytest

from chapyter_ext.guards import check_candidate, check_code
from chapyter_ext.guards.names import LiveNames
from chapyter_ext.guards.rebinding import (
    change_problem,
    fresh_name,
    keep_data,
    keep_data_in_answer,
    show_result,
)


@pytest.fixture
def namespace() -> dict:
    return {
        "pd": pd,
        "prices": pd.DataFrame(
            {"item": ["tea", "cake", "soup"], "price": [2.5, 4.0, 6.5], "qty": [3, 1, 2]}
        ),
        "sales": pd.DataFrame({"city": ["Paris", "Rome"], "price": [1.0, 2.0]}),
        "nums": [5, 3, 9],
        "count": 3,
        "prices_qty_gt_1": 0,  # a name that is taken: the new one must differ
    }


ROWS = "prices = prices.loc[prices['qty'] > 1]"


@pytest.mark.parametrize(
    ("code", "request_text", "expected"),
    [
        # The starter's own suggestion: a new name (not the taken one), then shown.
        (
            ROWS,
            "rows of prices where qty > 1",
            "prices_qty_gt_1_2 = " + ROWS[9:] + "\n" + "prices_qty_gt_1_2",
        ),
        # Asked explicitly: the re-binding stays (and is shown).
        (ROWS, "drop rows of prices where qty <= 1 in place", ROWS + "\nprices"),
        (ROWS, "update prices to the rows where qty > 1", ROWS + "\nprices"),
        (ROWS, "keep only the rows of prices where qty > 1", ROWS + "\nprices"),
        (ROWS, "remove the rows of prices where qty < 2", ROWS + "\nprices"),
        (ROWS, "replace prices with its rows where qty > 1", ROWS + "\nprices"),
        (ROWS, "overwrite prices with the rows where qty > 1", ROWS + "\nprices"),
        (ROWS, "change prices to its rows where qty > 1", ROWS + "\nprices"),
        (ROWS, "modify prices: rows where qty > 1", ROWS + "\nprices"),
        (ROWS, "rows of prices where qty > 1 into prices", ROWS + "\nprices"),
        # Another variable is named as the one to change: prices is not.
        (
            ROWS,
            "update sales with the rows of prices where qty > 1",
            "prices_sales_qty_gt = prices.loc[prices['qty'] > 1]\nprices_sales_qty_gt",
        ),
        # "sorted by" asks to see them so; "sort" asks to change them.
        (
            "prices = prices.sort_values('price')",
            "prices sorted by price",
            "prices_sorted_price = prices.sort_values('price')\nprices_sorted_price",
        ),
        (
            "prices = prices.sort_values('price')",
            "sort prices by price",
            "prices = prices.sort_values('price')\nprices",
        ),
        # Later statements read the new name.
        (
            "prices = prices.max()\nprices['qty'] = 1",
            "largest qty in prices",
            "prices_largest_qty = prices.max()\nprices_largest_qty['qty'] = 1\nprices_largest_qty",
        ),
        # An augmented assignment is a re-binding derived from the old value.
        ("count += 1", "count plus one", "count_plus_one = count + 1\ncount_plus_one"),
        (
            "nums = sorted(nums)",
            "nums in ascending order",
            "nums_ascending_order = sorted(nums)\nnums_ascending_order",
        ),
        # A new name, not derived from an existing one: only shown.
        (
            "revenue = prices['price'].mean()",
            "mean of revenue",
            "revenue = prices['price'].mean()\nrevenue",
        ),
        ("avg = prices['price'].mean()\navg", "mean of price into avg", None),
        # An existing name re-bound to something else is not "derived from it" (the made-up
        # data check is another rule).
        ("count = len(nums)", "how many nums into count", "count = len(nums)\ncount"),
        # Adding a column changes prices in place, as asked; the frame is shown.
        (
            "prices['total'] = prices['price'] * prices['qty']",
            "add a column total that is price * qty",
            "prices['total'] = prices['price'] * prices['qty']\nprices",
        ),
        # Nothing assigned last: nothing added.
        ("prices.head(2)", "the first 2 rows of prices", None),
        ("def f(x):\n    return x", "a function f", None),
        ("prices.to_csv('p.csv', index=False)", "save prices to p.csv", None),
        # Not plain Python: left as it is.
        ("!ls\nprices = prices.head()", "first rows of prices", None),
    ],
)
def test_the_rewrite_rule(namespace, code, request_text, expected):
    assert keep_data(code, LiveNames(namespace), request_text) == (
        code if expected is None else expected
    )


@pytest.mark.parametrize(
    ("code", "request_text", "problem"),
    [
        ("nums.sort()", "nums in ascending order", "it changes nums"),
        ("prices['qty'] = 0", "qty of prices", "it changes prices"),
        ("prices.dropna(inplace=True)", "prices without gaps", "it changes prices"),
        ("del prices['qty']", "prices without qty", "it changes prices"),
        ("nums.sort()", "sort nums", None),
        ("prices.fillna(0, inplace=True)", "fill the gaps of prices with 0", None),
        ("prices.add(1)", "prices plus 1", None),  # DataFrame.add makes a new frame
        ("x = nums.copy()\nx.sort()", "nums in order into x", None),
    ],
)
def test_changes_in_place_not_asked_for_are_refused(namespace, code, request_text, problem):
    found = change_problem(ast.parse(code), LiveNames(namespace), request_text)
    assert (found is None) if problem is None else (problem in found), found


def test_the_candidate_check_gives_a_new_name_and_shows_it(namespace):
    checked = check_candidate(ROWS, namespace, "rows of prices where qty > 1")
    assert checked.problem is None
    assert checked.code == "prices_qty_gt_1_2 = prices.loc[prices['qty'] > 1]\nprices_qty_gt_1_2"
    # The right first line kept when the second is broken still ends by showing it.
    kept = check_candidate("m = prices['price'].mean()\nprint(mm)", namespace, "mean price into m")
    assert kept == type(kept)("m = prices['price'].mean()\nm", None)
    # A change in place that is not asked for is a candidate's problem: another is asked.
    refused = check_candidate("nums.sort()", namespace, "nums in ascending order")
    assert refused.problem == "it changes nums, which the request does not ask for"


def test_fix_and_the_chat_check_are_not_rewritten(namespace):
    # Fix changes the user's own code: its re-bindings are the user's.
    assert check_candidate(ROWS, namespace, "fix it", original=ROWS + ")").code == ROWS
    # A block as shown (no request) is checked as it is.
    assert check_code(ROWS, LiveNames(namespace), small=True, as_is=True).runnable


def test_chat_answers_get_the_rule_in_each_python_block(namespace):
    answer = (
        "Here you go:\n\n```python\n" + ROWS + "\n```\n\n"
        "- and in a list:\n\n  ```\n  " + ROWS + "\n  ```\n\n```text\nprices = prices\n```"
    )
    kept = keep_data_in_answer(answer, LiveNames(namespace), "rows of prices where qty > 1")
    new = "prices_qty_gt_1_2 = prices.loc[prices['qty'] > 1]\nprices_qty_gt_1_2"
    assert kept == answer.replace(ROWS, new, 1).replace(
        "  " + ROWS, "  " + new.replace("\n", "\n  ")
    )
    assert keep_data_in_answer(answer, None, "rows") == answer


def test_new_names_are_made_from_the_request():
    assert fresh_name("prices", "rows of prices where qty > 1") == "prices_qty_gt_1"
    assert fresh_name("df", "the rows of df where x >= 2.5") == "df_x_ge_2_5"
    assert fresh_name("df", "rows of df", {"df_result"}) == "df_result_2"
    assert fresh_name("df", "données") == "df_result"


def test_show_result():
    assert show_result("a = 1") == "a = 1\na"
    assert show_result("a, b = 1, 2") == "a, b = 1, 2"
    assert show_result("df.loc[0, 'x'] = 1") == "df.loc[0, 'x'] = 1\ndf"
    assert show_result("a = 1\na") == "a = 1\na"
    assert show_result("x = (") == "x = ("
