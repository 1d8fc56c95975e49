"""The small-model profile: its prompt, the checks of its candidates, the request it sends
(grammar, length cap, seeds, hotter retries) through ``%%ai`` in a real kernel against the
loopback server, and, with chapyter-ext[local] installed, the benchmark's short form against
the real bundled SmolLM2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from traitlets import TraitError

from chapyter_ext.config import Chapyter
from chapyter_ext.guards import check_candidate
from chapyter_ext.help_pointers import ENDPOINTS_HINT
from chapyter_ext.local_model import LOCAL_MODEL_NAME
from chapyter_ext.magic.prompts import SYSTEM_PROMPT
from chapyter_ext.magic.small_prompt import (
    CODE_GRAMMAR,
    SMALL_MAX_TOKENS,
    SMALL_SYSTEM_PROMPT,
    build_small_messages,
    pick_examples,
)
from chapyter_ext.profile import CANDIDATES, failed_message, uses_small_prompt
from tests.test_local_model import needs_local_model

ROOT = Path(__file__).resolve().parents[1]

# -- choosing the profile ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("style", "model", "small"),
    [
        ("auto", LOCAL_MODEL_NAME, True),
        ("auto", "gpt-4o-mini", False),
        ("small", "qwen2.5-coder:0.5b", True),
        ("full", LOCAL_MODEL_NAME, False),
    ],
)
def test_the_profile_is_chosen_per_model(style, model, small):
    assert uses_small_prompt(style, model) is small


def test_prompt_style_is_validated():
    settings = Chapyter()
    assert settings.prompt_style == "auto"
    settings.prompt_style = "SMALL"
    assert settings.prompt_style == "small"
    with pytest.raises(TraitError, match="prompt_style must be one of auto, full, small"):
        settings.prompt_style = "tiny"


# -- the prompt ----------------------------------------------------------------------------------

SUMMARY = (
    "Imported modules: pd = pandas\n\n"
    "Variables (most recent first):\n"
    "- sales (DataFrame): 5 rows × 2 columns\n"
    "    'city' str: 3 labels: 'Paris' 40%, 'Rome' 40%, 'Oslo' 20%\n"
    "    'price' float64\n"
    "    head(2):\n"
    "    city | price\n"
    "    Paris | 10.0\n"
    "    Rome | 20.0\n"
    "- n (int): 3"
)


def test_small_prompt_is_short_with_worked_examples_and_no_rows_to_echo():
    messages = build_small_messages("mean of price into avg", SUMMARY)
    assert messages[0] == {"role": "system", "content": SMALL_SYSTEM_PROMPT}
    assert len(SMALL_SYSTEM_PROMPT) < 300 < len(SYSTEM_PROMPT)
    turns = messages[1:-1]
    assert turns and [m["role"] for m in turns] == ["user", "assistant"] * (len(turns) // 2)
    assert all(m["content"].startswith("```python\n") for m in turns[1::2])
    last = messages[-1]["content"]
    assert last.endswith("Request: mean of price into avg")
    # Names, types and columns only: no sample rows or labels a small model would copy.
    assert (
        "- sales (DataFrame)" in last
        and "columns: sales['city'] str, sales['price'] float64" in last
    )
    assert "Paris" not in last and "head(" not in last and "<kernel-state>" not in last
    assert sum(len(m["content"]) for m in messages) < 2000  # the full system prompt: ~1,250


def test_the_examples_most_like_the_request_come_last():
    picked = pick_examples("sort cars by speed", "- cars (DataFrame): 8 rows")
    assert picked[-1][1] == "sort cars by speed"
    assert len(picked) == len({p[1] for p in picked})


def test_a_correction_turn_carries_the_code_and_the_error():
    messages = build_small_messages("sum of v into t", None, retry=("t = sum(w)", "NameError"))
    assert messages[-2] == {"role": "assistant", "content": "```python\nt = sum(w)\n```"}
    assert "NameError" in messages[-1]["content"]


# -- checking a candidate ------------------------------------------------------------------------


@pytest.fixture
def namespace():
    return {
        "pd": pd,
        "sales": pd.DataFrame({"city": ["Paris", "Rome"], "price": [1.0, 2.0], "qty": [1, 2]}),
        "nums": [3, 1, 2],
    }


@pytest.mark.parametrize(
    ("code", "request_text", "problem"),
    [
        ("total = sum(values)", "sum of nums into total", "undefined name(s) values"),
        ("x = sales['cost'].mean()", "mean cost into x", "sales has no column 'cost'"),
        ("x = sales.cost.mean()", "mean cost into x", "sales has no column or attribute 'cost'"),
        ("sales = sales.append({'city': 'Oslo'})", "add Oslo", "sales.append does not exist"),
        ("data = pd.read_excel_file('a.xlsx')", "read a.xlsx", "pd.read_excel_file does not"),
        ("import pandaz\nx = 1", "x", "there is no module pandaz"),
        ("# nothing\npass", "sort nums", "the code does nothing"),
        ("def f():\n    return sales.sort_values('price')", "sort sales", "only defines"),
        ("avg = sales['price'].sum()\navg2 = avg", "mean of price into mean", "not define mean"),
        ("n = len(nums)", "number of rows of sales into n", "it does not use sales"),
        ("s = sales[sales['price'] < 1]", "rows of sales where price > 1 into s", "test > 1"),
        ("s = sales.groupby('city')['price'].sum()", "qty per city into s", "column 'qty'"),
        ("s = sales.sort_values('price')", "sort sales by price descending into s", "descending"),
        ("df = pd.DataFrame({'a': [1]})", "first rows of sales", "makes up data"),
        ("x = (", "anything", "syntax error"),
        ("c = c + 1", "c", "undefined name(s) c"),
        ("c = sales['city'].lower()", "city of sales in lowercase into c", "no method 'lower'"),
        ("s = sales.fillna(0.5)", "fill the gaps of sales with 0", "not use the 0 the request"),
        (
            "d = {'Ann': 1}",
            "a dict d mapping ann to 1",
            "writes 'Ann' where the request says 'ann'",
        ),
        ("sales.to_csv('s.csv', idx=False)", "save sales", "takes no argument 'idx'"),
        # A rename maps the names the request gives, no made-up precise numbers, no
        # count where the request does not ask how many.
        (
            "s = sales.rename(columns={'city': 'qty'})",
            "rename the column city of sales to town",
            "it does not rename 'city' to 'town'",
        ),
        ("m = sales['price'].max() + 60.3427198e-5", "top price of sales", "makes up the number"),
        ("n = sales['city'].nunique()", "the different cities in sales", "it counts, where"),
        ("p = sales['price'].round(1) + ' EUR'", "price of sales in EUR", "adds text and a"),
        ("%%ai\nmore", "anything", "calls"),
    ],
)
def test_bad_candidates_are_refused_with_a_reason(namespace, code, request_text, problem):
    checked = check_candidate(code, namespace, request_text)
    assert checked.problem is not None and problem in checked.problem, checked


@pytest.mark.parametrize(
    ("code", "request_text", "expected"),
    [
        # A missing conventional import is added, not refused.
        # ... and the code ends by showing what it computed.
        ("x = np.arange(3)", "x", "import numpy as np\nx = np.arange(3)\nx"),
        ("import math\nr = math.sqrt(4)", "r", "import math\nr = math.sqrt(4)\nr"),
        # The result goes where the request says ("into avg").
        (
            "avg_price = sales['price'].mean()\navg_price",
            "mean of price into avg",
            "avg = sales['price'].mean()\navg",
        ),
        # The summary's values copied back are dropped; the rest stays.
        ("nums = [3, 1, 2]\nnums.sort()", "sort nums", "nums.sort()"),
        # The right first line, then nonsense: the first line is kept.
        ("total = sum(nums)\nprint(totl)", "sum of nums into total", "total = sum(nums)\ntotal"),
        # Working on the data is not making it up.
        (
            "sales = sales.rename(columns={'qty': 'n'})",
            "rename qty of sales to n",
            "sales = sales.rename(columns={'qty': 'n'})\nsales",
        ),
        # Not asked to change sales: the rows go to a new name, shown.
        (
            "sales = sales[sales['price'] > 1]",
            "rows of sales where price > 1",
            "sales_price_gt_1 = sales[sales['price'] > 1]\nsales_price_gt_1",
        ),
        ("def add(a, b):\n    return a + b", "a function add", "def add(a, b):\n    return a + b"),
        ("n = sales['city'].nunique()", "how many cities in sales into n", "+n"),
        ("m = round(sales['price'].mean(), 2)", "mean price of sales to 2 places into m", "+m"),
        # A slip of a variable the request names reads that variable.
        ("total = sum(num)", "sum of nums into total", "total = sum(nums)\ntotal"),
        ("s = sales[sales['price'] > 1]", "rows of sales where price > 1 into s", "+s"),
        # "1 to 10" includes 10: range(1, 11).
        ("sq = [n * n for n in range(1, 11)]", "a list sq of the squares of 1 to 10", "+sq"),
        ("sales.to_csv('s.csv', index=False)", "save sales to s.csv", None),
    ],
)
def test_good_candidates_pass_repaired(namespace, code, request_text, expected):
    checked = check_candidate(code, namespace, request_text)
    assert checked.problem is None, checked.problem
    if expected is None:
        expected = code
    elif expected.startswith("+"):
        expected = f"{code}\n{expected[1:]}"
    assert checked.code == expected


def test_the_failure_is_one_line_with_the_readme_link():
    line = failed_message("it reads undefined name(s) x")
    assert "\n" not in line
    assert line.startswith("the small local model could not write this (last try: it reads")
    assert f"configure an endpoint for harder requests ({ENDPOINTS_HINT})" in line


# -- the request through %%ai in a real kernel (loopback server) ---------------------------------


@pytest.fixture(scope="module")
def models() -> tuple[str, ...]:
    return (LOCAL_MODEL_NAME, "gpt-4o-mini")


@pytest.fixture(scope="module")
def kernel_env(kernel_env: dict[str, str]) -> dict[str, str]:
    # The model name the bundled server answers to: prompt_style 'auto' picks small.
    return {**kernel_env, "CHAPYTER_MODEL": LOCAL_MODEL_NAME}


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return (
        "%config Chapyter.timeout = 10.0\n"
        "import pandas as pd\n"
        "sales = pd.DataFrame({'city': ['Paris', 'Rome'], 'price': [1.0, 3.0]})"
    )


@pytest.fixture(autouse=False)
def fresh(server):
    server.clear()


def block(code: str) -> str:
    return f"```python\n{code}\n```"


def test_candidates_are_checked_and_retried_hotter_with_the_grammar(server, kernel, fresh):
    server.script(
        block("avg = prices.mean()"),  # undefined name
        block("avg = sales['cost'].mean()"),  # no such column
        block("avg = sales['price'].mean()"),
    )
    run = kernel.run("%%ai --no-run\nmean of price into avg", timeout=60)
    assert run.status == "ok", run.error
    assert run.next_input["text"] == "avg = sales['price'].mean()\navg"
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(bodies) == CANDIDATES
    assert [b["temperature"] for b in bodies] == [0.0, 0.6, 0.9]
    assert [b["seed"] for b in bodies] == [0, 1, 2]
    assert all(b["max_tokens"] == SMALL_MAX_TOKENS == 128 for b in bodies)
    assert all(b["grammar"] == CODE_GRAMMAR for b in bodies)
    messages = bodies[0]["messages"]
    assert messages[0]["content"] == SMALL_SYSTEM_PROMPT
    assert all(b["messages"] == messages for b in bodies)
    assert "columns: " in messages[-1]["content"]
    last = messages[-1]["content"]
    assert "sales['price'] float64" in last and "sales['city'] str" in last
    # The provenance records how the accepted candidate was asked for.
    parameters = run.next_input["chapyter"]["metadata"]["parameters"]
    assert parameters == {"temperature": 0.9, "max_tokens": SMALL_MAX_TOKENS}


def test_three_failed_candidates_are_one_line_and_nothing_is_inserted(server, kernel, fresh):
    server.script(block("x = nope"), "no code at all, sorry", block("y = (("))
    run = kernel.run("%%ai\ncount the cities into n", timeout=60)
    assert run.status == "error" and run.error["ename"] == "ChapyterError"
    assert len(run.error["traceback"]) == 1 and "\n" not in run.error["evalue"]
    assert run.error["evalue"].startswith("the small local model could not write this")
    assert ENDPOINTS_HINT in run.error["evalue"]
    assert "README.md#" not in run.error["evalue"]  # a path cannot be clicked in an output
    assert run.next_input is None
    assert len([r for r in server.requests if r.path.endswith("/chat/completions")]) == 3


def test_a_capable_model_keeps_the_full_prompt_and_no_grammar(server, kernel, fresh):
    server.script(block("avg = sales['price'].mean()"))
    kernel.run("%config Chapyter.prompt_style = 'full'")
    try:
        run = kernel.run("%%ai --no-run\nmean of price into avg", timeout=60)
    finally:
        kernel.run("%config Chapyter.prompt_style = 'auto'")
    assert run.status == "ok", run.error
    [request] = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert "grammar" not in request.body and request.body["max_tokens"] == 2048
    assert request.body["messages"][0]["content"] == SYSTEM_PROMPT


# -- the real bundled model: the benchmark's short form ----------------------------------------


@needs_local_model
def test_the_bundled_model_answers_everyday_requests_through_the_whole_pipeline(tmp_path):
    """Not a success rate (that is ``benchmarks/bench_small_model.py``): each request ends in
    code that ran or in the one-line message, and the pipeline delivers working code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path)
    out = tmp_path / "results.json"
    bench = ROOT / "benchmarks" / "bench_small_model.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--short", "--json", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())["results"]
    print(done.stdout)
    assert len(results) >= 3
    for result in results:
        if result["code"] is None:
            assert result["message"] and "\n" not in result["message"], result
        assert result["candidates"] <= CANDIDATES + 1  # + at most one correction's answer
    assert any(result["solved"] for result in results), done.stdout
