"""Everyday ``%%ai`` requests over several DataFrames, for ``bench_small_model.py``.

Written without looking at what the model answers: the starter's ``prices``, a
table of trips, staff, a week of weather, and a few lists, strings and a dict. Each request
has the code that sets the kernel up, the request as a user would type it, a check of the
right answer, and the variables it must leave as they were (``keep``: the request does not ask
to change them). A check accepts any reasonable way of doing it: the old variable changed when
the request asks for that, a new variable, or the value the generated cell displayed
(``_found(test)``: some new variable or the displayed result passes ``test``). Three requests
come from the issue-13 set (the test suite's short form runs them).
"""

from __future__ import annotations

from small_model_requests import Case

_PRICES = (
    "import pandas as pd\n"
    "prices = pd.DataFrame({'item': ['tea', 'cake', 'soup'], 'price': [2.5, 4.0, 6.5],"
    " 'qty': [3, 1, 2]})"
)
_TRIPS = (
    "import pandas as pd\n"
    "trips = pd.DataFrame({'city': ['Oslo', 'Rome', 'Oslo', 'Lima', 'Rome', 'Oslo'],"
    " 'km': [12.0, 30.5, 7.2, 41.0, 3.3, 18.0], 'minutes': [20, 45, 15, 60, 10, 25],"
    " 'mode': ['bike', 'car', 'bike', 'car', 'walk', 'bike']})"
)
_STAFF = (
    "import pandas as pd\n"
    "staff = pd.DataFrame({'name': ['Ada', 'Ben', 'Cy', 'Di'], 'dept': ['ops', 'dev', 'dev',"
    " 'ops'], 'salary': [5200, 6100, 5800, 4900], 'start': [2019, 2021, 2018, 2022]})"
)
_WEATHER = (
    "import pandas as pd\n"
    "weather = pd.DataFrame({'day': [1, 2, 3, 4, 5, 6, 7],"
    " 'temp': [12.5, 14.0, 9.5, 11.0, 15.5, 16.0, 13.0],"
    " 'rain': [0.0, 2.5, 8.0, 0.0, 0.0, 1.0, 4.5]})"
)
_SALES = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'city': ['Paris', 'Rome', 'Paris', 'Oslo', 'Rome'],"
    " 'price': [10.0, 20.0, 30.0, 40.0, 50.0], 'qty': [1, 2, 3, 4, 5]})"
)


def _case(name: str, setup: str, request: str, check: str, keep: tuple[str, ...] = ()) -> Case:
    return Case(name, setup, request, check, keep)


CASES: tuple[Case, ...] = (
    # -- the starter's prices --------------------------------------------------------------
    _case(
        "prices-rows",
        _PRICES,
        "rows of prices where qty > 1",
        "_found(lambda v: sorted(v['item']) == ['soup', 'tea'])",
        ("prices",),
    ),
    _case(
        "prices-mean",
        _PRICES,
        "mean of price",
        "_found(lambda v: abs(v - 13 / 3) < 1e-9)",
        ("prices",),
    ),
    _case(
        "prices-total",
        _PRICES,
        "add a column total that is price * qty",
        "list(prices['total']) == [7.5, 4.0, 13.0]",
    ),
    _case(
        "prices-sorted",
        _PRICES,
        "prices sorted by price descending",
        "_found(lambda v: list(v['item']) == ['soup', 'cake', 'tea'])",
        ("prices",),
    ),
    _case(
        "prices-max-qty", _PRICES, "largest qty in prices", "_found(lambda v: v == 3)", ("prices",)
    ),
    _case(
        "prices-drop",
        _PRICES,
        "drop the rows of prices where qty < 2",
        "sorted(prices['item']) == ['soup', 'tea'] or _found(lambda v: sorted(v['item'])"
        " == ['soup', 'tea'])",
    ),
    _case(
        "prices-items",
        _PRICES,
        "the item column of prices as a list into names",
        "names == ['tea', 'cake', 'soup']",
        ("prices",),
    ),
    # -- trips -------------------------------------------------------------------------------
    _case(
        "trips-per-city",
        _TRIPS,
        "count the trips per city",
        "_found(lambda v: dict(v) == {'Oslo': 3, 'Rome': 2, 'Lima': 1})",
        ("trips",),
    ),
    _case(
        "trips-total-km", _TRIPS, "total km of trips into total_km", "total_km == 112.0", ("trips",)
    ),
    _case(
        "trips-long",
        _TRIPS,
        "trips where km > 10",
        "_found(lambda v: len(v) == 4 and bool((v['km'] > 10).all()))",
        ("trips",),
    ),
    _case(
        "trips-mode-mean",
        _TRIPS,
        "mean minutes per mode of trips",
        "_found(lambda v: dict(v) == {'bike': 20.0, 'car': 52.5, 'walk': 10.0})",
        ("trips",),
    ),
    _case(
        "trips-speed",
        _TRIPS,
        "add a column speed to trips that is km divided by minutes",
        "list((trips['speed'] * trips['minutes']).round(6)) == list(trips['km'].round(6))",
    ),
    _case(
        "trips-head",
        _TRIPS,
        "the first 2 rows of trips",
        "_found(lambda v: list(v['city']) == ['Oslo', 'Rome'])",
        ("trips",),
    ),
    _case(
        "trips-modes",
        _TRIPS,
        "the different modes in trips",
        "_found(lambda v: sorted(v) == ['bike', 'car', 'walk'])",
        ("trips",),
    ),
    _case(
        "trips-rename",
        _TRIPS,
        "rename the column km of trips to distance",
        "any('distance' in f.columns and 'km' not in f.columns for f in _frames())",
    ),
    # -- staff -------------------------------------------------------------------------------
    _case(
        "staff-top-name",
        _STAFF,
        "name of the person in staff with the highest salary",
        "_found(lambda v: v == 'Ben' or list(v) == ['Ben'])",
        ("staff",),
    ),
    _case(
        "staff-dev-mean",
        _STAFF,
        "mean salary of the rows of staff where dept is dev",
        "_found(lambda v: v == 5950.0)",
        ("staff",),
    ),
    _case(
        "staff-by-start",
        _STAFF,
        "staff sorted by start",
        "_found(lambda v: list(v['name']) == ['Cy', 'Ada', 'Ben', 'Di'])",
        ("staff",),
    ),
    _case(
        "staff-remove",
        _STAFF,
        "remove the start column from staff",
        "any(list(f.columns) == ['name', 'dept', 'salary'] for f in _frames())",
    ),
    _case(
        "staff-raise",
        _STAFF,
        "salary of staff times 1.1 into new_salary",
        "[round(x, 6) for x in new_salary] == [5720.0, 6710.0, 6380.0, 5390.0]",
        ("staff",),
    ),
    _case("staff-rows", _STAFF, "how many rows in staff", "_found(lambda v: v == 4)", ("staff",)),
    # -- weather -----------------------------------------------------------------------------
    _case(
        "weather-min",
        _WEATHER,
        "lowest temp of weather",
        "_found(lambda v: v == 9.5)",
        ("weather",),
    ),
    _case(
        "weather-rainy",
        _WEATHER,
        "days of weather with rain > 0",
        "_found(lambda v: list(v['day'] if hasattr(v, 'columns') else v) == [2, 3, 6, 7])",
        ("weather",),
    ),
    _case(
        "weather-fill",
        "import pandas as pd\nimport numpy as np\n"
        "readings = pd.DataFrame({'hour': [1, 2, 3], 'temp': [3.5, np.nan, 4.0]})",
        "fill the missing temp values of readings with 0",
        "any(list(f['temp']) == [3.5, 0.0, 4.0] for f in _frames() if 'temp' in f)"
        " or _found(lambda v: list(v) == [3.5, 0.0, 4.0])",
    ),
    _case(
        "weather-round",
        _WEATHER,
        "temp of weather rounded to whole numbers",
        "_found(lambda v: list(v) == list(weather['temp'].round()))",
        ("weather",),
    ),
    _case(
        "weather-rain-sum",
        _WEATHER,
        "total rain of weather",
        "_found(lambda v: abs(v - 16.0) < 1e-9)",
        ("weather",),
    ),
    # -- lists, strings, a dict --------------------------------------------------------------
    _case(
        "words-longest",
        "words = ['pear', 'fig', 'banana', 'kiwi']",
        "the longest word in words",
        "_found(lambda v: v == 'banana')",
        ("words",),
    ),
    _case(
        "city-upper",
        "city = 'oslo'",
        "city in capitals",
        "_found(lambda v: v == 'OSLO')",
        ("city",),
    ),
    _case(
        "nums-ascending",
        "nums = [5, 3, 9, 1]",
        "nums in ascending order",
        "_found(lambda v: v == [1, 3, 5, 9])",
        ("nums",),
    ),
    _case(
        "ages-bob",
        "ages = {'ann': 31, 'bob': 27}",
        "the age of bob in ages",
        "_found(lambda v: v == 27)",
        ("ages",),
    ),
    # -- from the issue-13 set (the test suite's short form) -------------------------------
    _case(
        "add-column",
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})",
        "add a column c that is a + b",
        "list(df['c']) == [5, 7, 9]",
    ),
    _case("mean-into", _SALES, "mean of price into avg", "avg == 30.0", ("sales",)),
    _case(
        "sum-list",
        "values = [4, 8, 15, 16, 23, 42]",
        "sum of values into total",
        "total == 108",
        ("values",),
    ),
)

#: The short form run by the test suite: the pipeline works, not a rate.
SHORT = ("add-column", "mean-into", "sum-list")
