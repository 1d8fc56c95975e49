"""chapyter_ext.context: summaries within a budget, bounded cost, and no secret ever leaving."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from chapyter_ext.context import (
    REDACTED,
    build_context,
    describe_variables,
    kernel_context,
    last_error_summary,
    summarize_dataframe,
    summarize_value,
    user_variables,
)

OPENAI_KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
GITHUB_TOKEN = "ghp_" + "Zx9" * 12
ENV_SECRET = "env-only-secret-value-8d1e"  # matches no key pattern: only the env var gives it away
PASSWORD = "hunter2-but-longer"


@pytest.fixture(scope="module")
def tall() -> pd.DataFrame:
    n = 5_000_000
    return pd.DataFrame(
        {
            "order id": np.arange(n),
            "price": np.linspace(0.0, 1.0, n),
            "city": pd.Categorical(np.tile(["Paris", "Oslo", "Lima", "Pune"], n // 4)),
        }
    )


@pytest.fixture(scope="module")
def wide() -> pd.DataFrame:
    return pd.DataFrame(np.zeros((4, 2000)), columns=[f"feature_{i}" for i in range(2000)])


def run(sh, *cells: str) -> None:
    for cell in cells:
        sh.run_cell(cell, store_history=True)


# ---------------------------------------------------------------------------------------------
# Import


def test_import_is_light():
    code = (
        "import sys, chapyter_ext.context\n"
        "heavy = {'pandas', 'numpy', 'IPython', 'inspect'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------------------------
# DataFrames


def test_dataframe_has_shape_exact_columns_dtypes_and_rows():
    df = pd.DataFrame(
        {
            "Total Sales ($)": [1.5, 2.25, 3.0, 4.0],
            "n": [1, 2, 3, 4],
            "when": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]),
            "name": ["ann", "bob", "cy", "di"],
        }
    )
    text = summarize_dataframe(df)
    assert text.startswith("DataFrame: 4 rows × 4 columns")
    for name, dtype in zip(df.columns, df.dtypes):
        assert f"{name!r} {dtype}" in text
    assert "head(3):" in text
    assert "ann" in text and "bob" in text and "cy" in text and "di" not in text
    assert "2.25" in text and "3.0" in text  # floats stay floats


def test_categorical_labels_and_many_categories():
    df = pd.DataFrame(
        {
            "grade": pd.Categorical(["b", "a", "c"], categories=["a", "b", "c"], ordered=True),
            "code": pd.Categorical([0, 1, 2], categories=list(range(30))),
        }
    )
    text = summarize_dataframe(df)
    assert "'grade' ordered category['a', 'b', 'c']" in text
    assert "'code' category (30 categories)" in text


def test_non_default_index_is_described():
    df = pd.DataFrame({"v": [1.0, 2.0]}, index=pd.date_range("2024-03-01", periods=2, name="day"))
    text = summarize_dataframe(df)
    assert "index: DatetimeIndex of 2" in text and "name 'day'" in text
    assert "2024-03-01" in text and "2024-03-02" in text


def test_tall_frame_costs_like_a_small_one(tall):
    small = tall.iloc[:50].copy()
    big_text = summarize_dataframe(tall)
    small_text = summarize_dataframe(small)
    assert big_text.startswith("DataFrame: 5,000,000 rows × 3 columns")
    assert "'order id' int64" in big_text
    assert "'city' category['Lima', 'Oslo', 'Paris', 'Pune']" in big_text
    assert len(big_text) <= 2000
    # Same text but for the row count: nothing in it depends on the data's length.
    assert big_text.replace("5,000,000", "50") == small_text
    assert calls(summarize_dataframe, tall) == pytest.approx(calls(summarize_dataframe, small), 0.1)


def test_wide_frame_is_cut_but_names_go_as_far_as_budget_allows(wide):
    text = summarize_dataframe(wide, max_columns=40, max_chars=2000)
    assert len(text) <= 2000
    assert "'feature_0' float64" in text and "'feature_39' float64" in text
    assert "'feature_40' float64" not in text
    assert "... and 1,960 more columns: 'feature_40', 'feature_41'" in text
    assert "'feature_1999'" not in text  # 2000 names cannot fit in 2000 characters
    assert "head(3), first " in text
    # A fifth as many columns: the same cost and the same length class.
    narrower = wide.iloc[:, :400]
    assert len(summarize_dataframe(narrower)) == pytest.approx(len(text), rel=0.05)
    assert calls(summarize_dataframe, wide) == pytest.approx(
        calls(summarize_dataframe, narrower), rel=0.1
    )
    roomy = summarize_dataframe(wide, max_chars=40_000)
    assert "'feature_1999'" in roomy  # with room, every name is listed


def test_dataframe_summary_never_touches_whole_data(monkeypatch, tall):
    def forbidden(*args, **kwargs):
        raise AssertionError("scans the whole frame")

    for name in ("describe", "to_string", "nunique", "memory_usage", "__repr__", "to_dict"):
        monkeypatch.setattr(pd.DataFrame, name, forbidden)
    for name in ("describe", "to_string", "nunique", "unique", "value_counts", "__repr__"):
        monkeypatch.setattr(pd.Series, name, forbidden)
    assert "5,000,000 rows" in summarize_dataframe(tall)
    assert "5,000,000 values" in summarize_value(tall["price"])


@pytest.mark.parametrize("max_chars", [0, 1, 10, 30, 60, 100, 250, 500, 1000, 2000, 5000])
def test_dataframe_summary_respects_max_chars(tall, wide, max_chars):
    assert len(summarize_dataframe(tall, max_chars=max_chars)) <= max_chars
    assert len(summarize_dataframe(wide, max_chars=max_chars)) <= max_chars
    assert len(summarize_value(tall, max_chars=max_chars)) <= max_chars


def test_odd_frames_do_not_fail():
    multi = pd.DataFrame(np.ones((2, 2)), columns=pd.MultiIndex.from_tuples([("a", 1), ("a", 2)]))
    assert "('a', 1) float64" in summarize_dataframe(multi)
    assert summarize_dataframe(pd.DataFrame()) == "DataFrame: 0 rows × 0 columns"
    dup = pd.DataFrame([[1, 2]], columns=["x", "x"])
    assert "'x' int64, 'x' int64" in summarize_dataframe(dup)


def calls(func, *args) -> int:
    """How many Python-level calls ``func(*args)`` makes: a proxy for cost that is not a clock."""
    count = Counter()

    def profile(frame, event, arg):
        count[event] += 1

    sys.setprofile(profile)
    try:
        func(*args)
    finally:
        sys.setprofile(None)
    return count["call"] + count["c_call"]


# ---------------------------------------------------------------------------------------------
# Other values


def test_series_index_and_arrays():
    s = pd.Series([1.5, 2.5, 3.5], name="price", index=pd.Index(["a", "b", "c"], name="k"))
    text = summarize_value(s)
    assert text.startswith("Series: 3 values, float64, name 'price': [1.5, 2.5, 3.5]")
    assert "index: Index of 3" in text and "name 'k'" in text
    assert summarize_value(pd.RangeIndex(10)).startswith("RangeIndex: 10 values, int64")
    big = np.arange(10_000_000).reshape(1000, 10_000)
    assert summarize_value(big) == "ndarray: shape (1000, 10000), int64: [0, 1, 2, 3, 4, 5, …]"
    # A non-contiguous view must not be copied whole to read a few values.
    assert summarize_value(big[:, ::2]).startswith("ndarray: shape (1000, 5000), int64: [0, 2, 4")
    assert summarize_value(np.float64(2.5)) == "float64: 2.5"


def test_containers_strings_and_scalars():
    assert summarize_value(list(range(1000))) == "list: 1,000 items: [0, 1, 2, 3, 4, 5, …]"
    assert summarize_value((1, "a")) == "tuple: 2 items: (1, 'a')"
    assert summarize_value({"a": 1, "b": [1, 2]}) == "dict: 2 items: {'a': 1, 'b': 2 items: [1, 2]}"
    assert summarize_value({3}) == "set: 1 item: {3}"
    assert summarize_value([]) == "list: 0 items"
    assert summarize_value("hi") == "str: 'hi'"
    long = summarize_value("word " * 10_000, max_chars=120)
    assert long.startswith("str: 50,000 chars, 'word word") and len(long) <= 120
    assert summarize_value(10**5000) == "int: <int of about 5001 digits>"
    assert summarize_value(None) == "NoneType: None"
    nested = summarize_value([[[[1]]]])
    assert nested == "list: 1 item: [1 item: [<list of 1>]]"


def test_functions_and_classes_show_signatures():
    def area(r, pi=3.14, *, unit="cm"):
        """Area of a circle."""

    area.__module__ = "__main__"

    class Shape:
        def __init__(self, sides: int, name="?"):
            pass

        def grow(self):
            pass

    Shape.__module__ = "__main__"
    assert summarize_value(area).endswith("area(r, pi=3.14, *, unit='cm') - Area of a circle.")
    text = summarize_value(Shape)
    assert text.startswith("class: ")
    assert "__init__(self, sides, name='?')" in text and "methods: grow" in text
    assert summarize_value(pd.read_csv) == "function: pandas.read_csv (imported)"


def test_objects_whose_repr_fails_or_is_huge():
    class Broken:
        def __repr__(self):
            raise RuntimeError("no")

    class Plain:
        def __init__(self):
            self.data = list(range(10**6))
            self.api_key = OPENAI_KEY

    assert summarize_value(Broken()) == "Broken: <Broken>"
    text = summarize_value(Plain())
    assert text == "Plain: Plain(data=1,000,000 items: [0, 1, 2, 3, 4, 5, …], api_key=<redacted>)"


@pytest.mark.parametrize("max_chars", [0, 3, 12, 40, 100, 300])
def test_summaries_respect_max_chars(max_chars):
    values = [
        "x" * 1000,
        list(range(100)),
        {f"k{i}": "v" * 50 for i in range(50)},
        np.arange(100),
        pd.Series(range(100)),
        summarize_value,
        10**400,
    ]
    for value in values:
        assert len(summarize_value(value, max_chars=max_chars)) <= max_chars


# ---------------------------------------------------------------------------------------------
# Secrets


def test_no_secret_in_any_output(monkeypatch, shell):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    shell.user_ns.update(
        api_key=OPENAI_KEY,
        note=f"log in with {GITHUB_TOKEN} please",
        cfg={"user": "bob", "password": PASSWORD},
        env_copy=f"the key is {ENV_SECRET}",
        headers={"Authorization": "Bearer abcdefgh12345678"},
        creds=("bob", PASSWORD),
        log_line=f"login ok with {PASSWORD}",  # only the value of `creds` gives it away
    )
    # The clipping point of a 300-character summary falls inside the secret.
    run(shell, f"banner = 'x' * 270 + '{ENV_SECRET}'", f"pw_again = '{PASSWORD}'")
    secrets = [OPENAI_KEY, GITHUB_TOKEN, ENV_SECRET, PASSWORD, "abcdefgh12345678"]
    outputs = [
        kernel_context(shell),
        kernel_context(shell, budget=400),
        json.dumps(describe_variables(shell.user_ns, shell.user_ns_hidden)),
        build_context(
            variables=user_variables(shell.user_ns),
            recent_cells=[(f"key = '{OPENAI_KEY}'", None)],
            last_error=f"ValueError: bad key {ENV_SECRET}",
            budget=3000,
        ),
        summarize_value(shell.user_ns["cfg"]),
        summarize_value(shell.user_ns["banner"]),
        summarize_value(shell.user_ns["banner"], max_chars=300),
    ]
    for out in outputs:
        for secret in secrets:
            assert secret[:6] not in out  # not whole, and not cut in half by clipping either
    context = outputs[0]
    assert "- api_key (str): <redacted>" in context
    assert "- cfg (dict): 2 items: {'user': 'bob', 'password': <redacted>}" in context
    assert "- creds (tuple): <redacted>" in context


# ---------------------------------------------------------------------------------------------
# Namespaces


def test_user_variables_order_and_skips(shell):
    run(shell, "import os\nfrom math import sqrt\na = 1", "_private = 2\nb = 2", "b = 3\nc = 'x'")
    names = [name for name, _ in user_variables(shell.user_ns, shell.user_ns_hidden)]
    assert names == ["c", "b", "a", "sqrt"]
    # A plain set hides by name; a mapping (IPython's user_ns_hidden) only if not rebound.
    assert [n for n, _ in user_variables({"a": 1, "b": 2}, {"a"})] == ["b"]
    one = object()
    assert [n for n, _ in user_variables({"a": one, "b": 2}, {"a": one, "b": 1})] == ["b"]
    for hidden in ("In", "Out", "exit", "quit", "get_ipython", "os", "_", "_i1", "open"):
        assert hidden not in names


def test_describe_variables_is_json_and_within_budget(shell, tall):
    shell.user_ns.update(df=tall, token="t0k3n-value", xs=list(range(50)))
    shell.user_ns.update({f"v{i}": "x" * 200 for i in range(30)})
    shell.user_ns.update({f"w{i}": "y" * 200 for i in range(200)})
    items = describe_variables(shell.user_ns, shell.user_ns_hidden, budget=1500)
    json.dumps(items)
    assert all({"name", "type", "summary"} <= set(item) for item in items)
    # Several times the budget (at least 24,000 characters), for the server to choose from.
    summarised = [i for i in items if i["summary"]]
    assert sum(len(i["name"]) + len(i["type"]) + len(i["summary"]) for i in summarised) <= 24_500
    assert items[0]["name"] == "w199"  # most recent first
    # Past the summaries' share, names and types only (a request may still name them).
    assert {"name": "v0", "type": "str", "summary": ""} in items
    full = {i["name"]: i for i in describe_variables(shell.user_ns, budget=100_000)}
    assert full["token"] == {"name": "token", "type": "str", "summary": REDACTED}
    assert full["df"]["type"] == "DataFrame"
    assert full["df"]["summary"].startswith("5,000,000 rows × 3 columns")
    # The facts the server picks from: columns with dtypes, labels with their shares.
    columns = {f[0]: f for f in full["df"]["facts"]}
    assert columns["'order id'"][1] == "int64"
    assert sorted(lab for lab, _ in columns["'city'"][4]) == ["Lima", "Oslo", "Paris", "Pune"]


# ---------------------------------------------------------------------------------------------
# IPython: recent cells, last error, the whole context


def test_recent_cells_skip_the_running_cell(shell):
    run(
        shell,
        "x = 41",
        "x + 1",
        "",
        "import numpy as np\ny = np.arange(3)",
        "from chapyter_ext.context import kernel_context\nctx = kernel_context(get_ipython())",
    )
    ctx = shell.user_ns["ctx"]
    cells = ctx.split("Recent cells (oldest first):\n", 1)[1]
    assert cells.index("In [1]:\nx = 41") < cells.index("In [2]:\nx + 1\nOut: int: 42")
    # The empty cell never made it into the history.
    assert "In [3]:\nimport numpy as np\ny = np.arange(3)" in cells
    assert "kernel_context(get_ipython())" not in ctx  # the cell running now
    # Names used in the newest cells come first.
    # The running cell is the request: the order is by relevance to it, then by use.
    variables = ctx.split("Variables (most relevant first):", 1)[1]
    assert variables.index("\n- y (ndarray)") < variables.index("\n- x (int): 41")

    # Called between cells, the last cell counts.
    two = kernel_context(shell, n_cells=2).split("Recent cells (oldest first):\n", 1)[1]
    assert two.startswith("In [3]:") and "In [4]:" in two and "In [2]:" not in two

    # Before all of them: the names the running cell (the request) uses.
    run(shell, "ctx = kernel_context(get_ipython())  # about x")
    variables = shell.user_ns["ctx"].split("Variables (most relevant first):", 1)[1]
    assert variables.index("\n- x (int): 41") < variables.index("\n- y (ndarray)")


def test_last_error_from_a_real_exception(shell):
    assert last_error_summary(shell) is None
    run(
        shell,
        "import pandas as pd\ndf = pd.DataFrame({'a': [1]})",
        "total = 0\ndf['missing'].sum()",
    )
    summary = last_error_summary(shell)
    assert summary.startswith("KeyError: 'missing'")
    assert "at In [2], line 2: df['missing'].sum()" in summary
    assert "raised in pandas/" in summary
    context = kernel_context(shell)
    assert context.startswith("Last error:\nKeyError: 'missing'")
    assert "In [2]:\ntotal = 0\ndf['missing'].sum()\nError: KeyError: 'missing'" in context


def test_last_error_in_a_function_and_a_syntax_error(shell):
    run(shell, "def f(x):\n    return 1 / x", "y = 1\nf(0)")
    summary = last_error_summary(shell)
    assert summary.startswith("ZeroDivisionError: division by zero")
    assert "at In [1], line 2 (called from In [2]): return 1 / x" in summary
    run(shell, "def g(:\n    pass")
    assert last_error_summary(shell).startswith("SyntaxError: invalid syntax")
    assert "at In [3], line 1: def g(:" in last_error_summary(shell)


def test_chapyter_errors_are_never_the_last_error(shell):
    # A failed %%ai raises chapyter-ext's own error: the user's code did not fail.
    run(
        shell,
        "1 / 0",
        "from chapyter_ext.magic.magics import ChapyterError\nraise ChapyterError('no')",
    )
    assert type(sys.last_value).__name__ == "ChapyterError"
    summary = last_error_summary(shell)
    assert summary.startswith("ZeroDivisionError: division by zero"), summary
    context = kernel_context(shell)
    assert context.startswith("Last error:\nZeroDivisionError")
    assert "Error: ChapyterError" not in context  # nor as the error of its cell
    assert "ChapyterError: no" not in context
    run(shell, "x = 1", "raise ChapyterError('again')")
    # Only chapyter-ext's own class counts as ours, not any class of that name.
    assert last_error_summary(shell).startswith("ZeroDivisionError")
    run(shell, "class ChapyterError(Exception): pass\nraise ChapyterError('mine')")
    assert last_error_summary(shell).startswith("ChapyterError: mine")


def test_old_errors_are_left_out(shell):
    run(shell, "1 / 0", *[f"v{i} = {i}" for i in range(6)])
    assert last_error_summary(shell).startswith("ZeroDivisionError")
    assert "Last error" not in kernel_context(shell, n_cells=5)
    assert "Last error" in kernel_context(shell, n_cells=8)


def test_budget_is_respected_for_every_size(shell, tall, wide):
    shell.user_ns.update({f"n{i}": i for i in range(400)})
    shell.user_ns.update(tall=tall, wide=wide, text="lorem ipsum " * 5000)
    run(shell, "import math\nmath.sqrt(-1)", "\n".join(f"# note {i}" for i in range(400)))
    for budget in [0, 1, 2, 10, 25, 50, 80, 120, 200, 350, 500, 800, 1500, 3000, 6000, 20_000]:
        text = kernel_context(shell, budget=budget)
        assert len(text) <= budget, budget
        if budget >= 500:
            assert text.startswith("Last error:\nValueError: math domain error")
            assert "Variables (most recent first):" in text
        if 500 <= budget <= 6000:
            assert "more variables" in text
        if budget >= 1500:
            assert "Recent cells (oldest first):" in text
        if 1500 <= budget <= 6000:
            assert "more lines)" in text
    full = kernel_context(shell, budget=6000)
    assert "- tall (DataFrame): 5,000,000 rows × 3 columns" in full
    assert "'order id' int64" in full


def test_variables_past_the_budget_are_not_summarised(shell):
    described = []

    class Probe:
        def __repr__(self):
            described.append(self)
            return "probe"

    shell.user_ns.update({f"p{i}": Probe() for i in range(5000)})
    text = kernel_context(shell, budget=1500)
    assert "- p4999 (Probe): probe" in text and "more variables: p" in text
    # About the ones that fit, not 5,000 summaries cut afterwards.
    assert 10 < len(described) < 100


def test_build_context_sections_and_notes():
    variables = [(f"v{i}", i) for i in range(200)]
    cells = [(f"step_{i} = {i}", None) for i in range(10)]
    text = build_context(variables=variables, recent_cells=cells, last_error=None, budget=1000)
    assert len(text) <= 1000
    assert text.startswith("Variables (most recent first):\n- v0 (int): 0\n- v1 (int): 1")
    assert "... (" in text and "more variables: v" in text
    assert "step_9 = 9" in text  # the newest cell is kept
    assert build_context(variables=[], recent_cells=[], last_error=None, budget=100) == ""
    # Names are not redacted piece by piece; the pass over the final text catches them.
    token_name = "ghp_" + "A1b2" * 10
    text = build_context(variables=[(token_name, 1)], recent_cells=[], last_error=None, budget=500)
    assert token_name[:8] not in text and f"- {REDACTED} (int): 1" in text
    long_error = "Traceback:\n" + "frame\n" * 2000 + "ValueError: the real message"
    text = build_context(variables=[], recent_cells=[], last_error=long_error, budget=500)
    assert text.startswith("Last error:\nTraceback:") and text.endswith("the real message")
