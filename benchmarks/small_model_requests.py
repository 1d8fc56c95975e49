"""The issue-13 everyday ``%%ai`` requests for the small-model benchmark
(``bench_small_model.py --earlier``; its default set is ``small_model_everyday.py``).

Each request has the code that sets the kernel up, the request as a user would type it, and a
check: a Python expression evaluated in the kernel after the generated code ran, true when the
request was done. Checks accept any reasonable way of doing it (a new variable or the old one
changed) but never a wrong result.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One request: its name, setup code, the request, the check of the kernel after, and the
    variables it must leave as they were (``keep``)."""

    name: str
    setup: str
    request: str
    check: str
    keep: tuple[str, ...] = ()


_PEOPLE = (
    "import pandas as pd\n"
    "people = pd.DataFrame({'name': ['Ann', 'Bob', 'Cid', 'Dee', 'Eve'],"
    " 'age': [25, 34, 41, 19, 52]})"
)
_SALES = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'city': ['Paris', 'Rome', 'Paris', 'Oslo', 'Rome'],"
    " 'price': [10.0, 20.0, 30.0, 40.0, 50.0], 'qty': [1, 2, 3, 4, 5]})"
)

# Helpers the checks may use; defined in the kernel before each check. A DataFrame the generated
# cell displayed counts as much as one it stored: the user sees it either way.
# ``_before`` (the names after the setup) and ``_kept`` (copies of ``Case.keep``) are set by
# the benchmark after the setup.
CHECK_HELPERS = """\
def _frames():
    import pandas as pd
    shown = globals().get('_')  # the result the generated cell displayed
    frames = [v for k, v in globals().items()
              if isinstance(v, pd.DataFrame) and not k.startswith('_')]
    return frames + ([shown] if isinstance(shown, pd.DataFrame) else [])

def _found(test):
    # A value the generated cell stored under a new name, or displayed, passes test.
    new = [v for k, v in list(globals().items()) if not k.startswith('_') and k not in _before]
    for value in new + [globals().get('_')]:
        try:
            if bool(test(value)):
                return True
        except Exception:
            pass
    return False

def _unchanged():
    # The variables the request does not ask to change are as they were.
    for name, old in _kept.items():
        now = globals().get(name)
        same = old.equals(now) if hasattr(old, 'equals') else old == now
        if now is None or type(now) is not type(old) or not same:
            return False
    return True
"""

CASES: tuple[Case, ...] = (
    Case(
        "add-column",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})",
        "add a column c that is a + b",
        "list(df['c']) == [5, 7, 9]",
    ),
    Case(
        "mean-into",
        _SALES,
        "mean of price into avg",
        "avg == 30.0",
    ),
    Case(
        "read-csv",
        "import pandas as pd\n"
        "pd.DataFrame({'x': [1, 2], 'y': [3, 4]}).to_csv('data.csv', index=False)",
        "read data.csv into a DataFrame called data",
        "list(data.columns) == ['x', 'y'] and len(data) == 2",
    ),
    Case(
        "filter-rows",
        _PEOPLE,
        "keep the rows of people where age > 30",
        "any(sorted(f['age']) == [34, 41, 52] for f in _frames() if 'age' in f)",
    ),
    Case(
        "sort-list",
        "nums = [5, 3, 9, 1]",
        "sort nums",
        "nums == [1, 3, 5, 9] or sorted_nums == [1, 3, 5, 9]",
    ),
    Case(
        "sum-list",
        "values = [4, 8, 15, 16, 23, 42]",
        "sum of values into total",
        "total == 108",
    ),
    Case(
        "rename-column",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
        "rename column a of df to alpha",
        "any('alpha' in f.columns and 'a' not in f.columns for f in _frames())",
    ),
    Case(
        "drop-column",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': [3, 4], 'c': [5, 6]})",
        "drop the column b from df",
        "any(list(f.columns) == ['a', 'c'] for f in _frames())",
    ),
    Case(
        "drop-missing",
        "import pandas as pd\nimport numpy as np\n"
        "df = pd.DataFrame({'a': [1, np.nan, 3], 'b': [4, 5, np.nan]})",
        "drop the rows of df with missing values",
        "any(len(f) == 1 and not f.isna().any().any() for f in _frames())",
    ),
    Case(
        "squares",
        "",
        "a list squares of the squares of the numbers 1 to 10",
        "squares == [n * n for n in range(1, 11)]",
    ),
    Case(
        "lowercase",
        "title = 'Hello World'",
        "title in lowercase into lower",
        "lower == 'hello world'",
    ),
    Case(
        "sort-frame",
        _SALES,
        "sort sales by price descending",
        "any(list(f['price']) == [50.0, 40.0, 30.0, 20.0, 10.0] for f in _frames())",
    ),
    Case(
        "groupby-sum",
        _SALES,
        "total qty per city into totals",
        "dict(totals if not hasattr(totals, 'set_index') or 'city' not in totals"
        " else totals.set_index('city')['qty']) == {'Oslo': 4, 'Paris': 4, 'Rome': 7}",
    ),
    Case(
        "save-csv",
        _PEOPLE,
        "save people to people.csv",
        "__import__('pandas').read_csv('people.csv')['age'].tolist() == [25, 34, 41, 19, 52]",
    ),
    Case(
        "max-array",
        "import numpy as np\narr = np.array([3, 17, 8, 2])",
        "maximum of arr into biggest",
        "biggest == 17",
    ),
    Case(
        "row-count",
        _PEOPLE,
        "number of rows of people into n_rows",
        "n_rows == 5",
    ),
    Case(
        "dict-literal",
        "",
        "a dictionary ages mapping alice to 30 and bob to 25",
        "ages == {'alice': 30, 'bob': 25}",
    ),
    Case(
        "unique-values",
        _SALES,
        "the unique values of the city column of sales into cities",
        "sorted(cities) == ['Oslo', 'Paris', 'Rome']",
    ),
    Case(
        "function",
        "",
        "a function add that returns the sum of two numbers",
        "add(2, 3) == 5",
    ),
    Case(
        "fill-missing",
        "import pandas as pd\nimport numpy as np\n"
        "scores = pd.DataFrame({'name': ['a', 'b', 'c'], 'score': [1.0, np.nan, 3.0]})",
        "fill the missing values in the score column of scores with 0",
        "any(list(f['score']) == [1.0, 0.0, 3.0] for f in _frames() if 'score' in f)"
        " or list(_) == [1.0, 0.0, 3.0]",
    ),
)
