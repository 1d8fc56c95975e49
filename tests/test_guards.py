"""The guard rails (``chapyter_ext.guards``): one verdict for model code, the kernel's names
live or from the chat's snapshot, cheap repairs of a failing cell, answers that echo their
prompt, unmatched fences, code blocks' verdicts, and completion's code-or-nothing."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from chapyter_ext.chat import parse_context
from chapyter_ext.complete.suggestions import SuggestionGuard, reads_as_prose
from chapyter_ext.context import describe_variables
from chapyter_ext.contract import code_block_key
from chapyter_ext.guards import (
    LiveNames,
    SnapshotNames,
    check_code,
    repairs,
    snapshot_names,
)
from chapyter_ext.guards.answers import (
    ECHO_LINE,
    SMALL_ECHO_LINE,
    balance_fences,
    clean_answer,
    code_block_checks,
    echoed,
)
from chapyter_ext.tracebacks import failing_line

NAMESPACE = {
    "total": 6,
    "nums": [1, 2, 3],
    "prices": {"apple": 1.5, "pear": 2.0},
    "sales": pd.DataFrame({"city": ["Oslo", "Lima"], "price": [10.0, 20.0]}),
    "pd": pd,
}


def live() -> LiveNames:
    return LiveNames(dict(NAMESPACE))


def snap() -> SnapshotNames:
    """The same kernel as the server sees it: through the browser's snapshot."""
    body = {"path": "a.ipynb", "variables": describe_variables(dict(NAMESPACE))}
    return snapshot_names(parse_context(body))


BOTH = pytest.mark.parametrize("names", [live, snap], ids=["live", "snapshot"])


def err(ename: str, evalue: str, line: int | None = None) -> dict:
    trace = [f"\x1b[36mCell In[7], line {line}\x1b[0m\n----> {line} x"] if line else []
    return {"ename": ename, "evalue": evalue, "traceback": trace}


# -- the names ----------------------------------------------------------------------------------


@BOTH
def test_both_readings_of_the_kernel_agree(names):
    n = names()
    assert "total" in n and "sales" in n and "nope" not in n
    assert n.columns("sales") == {"city", "price"}
    assert n.is_module("pd") and n.module("pd") is pd
    assert n.value_type("nums") is list and n.value_type("sales") is pd.DataFrame
    assert n.keys("prices") == {"apple", "pear"} and n.length("nums") == 3
    assert n.is_data("sales") and not n.is_data("pd")


def test_a_snapshot_that_knows_nothing_reports_nothing_missing():
    unknown = snapshot_names(parse_context({"path": "a.ipynb", "variables": None}))
    assert "anything" in unknown and not unknown.has("anything")
    assert check_code("print(anything)", unknown, small=True).runnable
    # IPython's own names and hidden ones are never listed: not missing either.
    assert "display" in snap() and "_private" in snap()


def test_a_module_named_by_the_notebook_is_never_imported_here():
    body = {
        "path": "a.ipynb",
        "variables": [{"name": "m", "type": "module", "summary": "evil_module_xyz"}],
    }
    names = snapshot_names(parse_context(body))
    assert names.is_module("m") and names.module("m") is None
    assert "evil_module_xyz" not in sys.modules


# -- the verdict --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("print(sum(x)", "it does not parse (line 1: '(' was never closed)"),
        ("%%ai\nplot it", "it calls %ai itself"),
        ("   ", "there is no code"),
    ],
)
def test_any_model_code_must_parse(code, problem):
    verdict = check_code(code)
    assert not verdict.runnable and verdict.problem == problem


def test_ipython_syntax_parses():
    assert check_code("%timeit sum(nums)\n!ls\nnums?").runnable


@BOTH
def test_code_is_judged_as_it_would_run(names):
    # Never a shortened version: a block or a step runs whole (the %%ai candidate check may
    # take a good first line, the verdict may not).
    verdict = check_code("x = total\nprint(zz)", names(), small=True)
    assert not verdict.runnable and verdict.problem == "it reads undefined name(s) zz"
    # What the checks would repair is fine for a proposal shown as a diff, not as is.
    assert check_code("m = np.mean(nums)", names(), small=True).code.startswith("import numpy")
    as_is = check_code("m = np.mean(nums)", names(), small=True, as_is=True)
    assert (as_is.runnable, as_is.problem) == (False, "it needs import numpy as np first")
    made_up = check_code("nums = [0, 1]\nprint(nums)", names(), small=True, as_is=True)
    assert made_up.problem == "it replaces data with made-up values"


def test_a_change_must_change_something():
    assert check_code("x = 1  \n\n", original="x = 1").problem == "it changes nothing"


@BOTH
@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("print(totl)", "it reads undefined name(s) totl"),
        ("sales['prise'].mean()", "sales has no column 'prise'"),
        ("half = nums / 2", "nums is a list: it has no /"),
        ("print('total: ' + total)", "it adds text and a number"),
        ("print(sum(total))", "total is a number: sum() needs a sequence"),
        ("sales.groupy('city')", "sales.groupy does not exist"),
    ],
)
def test_the_small_profile_reads_the_kernel(names, code, problem):
    assert check_code(code, names(), small=True).problem == problem
    assert check_code(code, names()).runnable  # any other model: only the syntax


@BOTH
@pytest.mark.parametrize(
    ("original", "code", "problem"),
    [
        ("print(total)", "print(6)", "it no longer uses total"),
        ("avg = sales['price'].mean()", "print(sales['price'].mean())", "it no longer sets avg"),
        (
            "sales['x'] = sales['price'] * 2",
            "print(sales['price'] * 2)",
            "it no longer sets sales['x']",
        ),
        ("print(total)", "nums = sorted(nums)\nprint(total)", "it overwrites nums"),
    ],
)
def test_a_change_keeps_what_the_cell_was_about(names, original, code, problem):
    assert check_code(code, names(), small=True, original=original).problem == problem


@pytest.mark.parametrize(
    ("original", "code", "error", "problem"),
    [
        # The statement that raised comes back unchanged, nothing new before it.
        ("x = int('abc')", "x = int('abc')\nprint(x)", err("ValueError", "v", 1), "keeps"),
        ("x = int('abc')", "x = int('abc') * 3", err("ValueError", "v", 1), "keeps"),
        ("a = 1\nb = a / 0", "a = 1\nb = a / 0\nprint(b)", err("ZeroDivisionError", "z"), "keeps"),
        # More than the error needs.
        ("a = 1\nb = totl", "a = 2\nb = total", err("NameError", "n", 2), "more than"),
        ("b = totl", "b = total\nprint(b)", err("NameError", "n", 1), "more than"),
        ("b = totl", "b = sum(x for x in nums if x > 1)", err("NameError", "n", 1), "rewrites"),
        ("s = sum(nums", "s = sum(nums)\nprint(s)", err("SyntaxError", "s", 1), "more than"),
        # An import before it is a fix, not the same code.
        ("m = np.mean(nums)", "import numpy as np\nm = np.mean(nums)", err("NameError", "n"), ""),
        ("b = totl", "b = total", err("NameError", "n", 1), ""),
    ],
)
def test_a_fix_changes_what_raised_and_only_that(original, code, error, problem):
    verdict = check_code(code, live(), small=True, original=original, error=error)
    if problem:
        assert problem in verdict.problem and not verdict.runnable
    else:
        assert verdict.runnable, verdict.problem


def test_the_failing_line_is_read_from_the_first_cell_frame():
    frames = ["\x1b[31m---\x1b[0m", "\x1b[36mCell\x1b[39m \x1b[32mIn[3]\x1b[39m, line 2\n"]
    assert failing_line({"traceback": frames}) == 2
    assert failing_line({"traceback": ["File /lib/x.py, line 9"]}) is None


# -- repairs ------------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize(
    ("source", "ename", "evalue", "fixed"),
    [
        ("prnt(total)", "NameError", "name 'prnt' is not defined", "print(total)"),
        ("print(totl)", "NameError", "name 'totl' is not defined", "print(total)"),
        ("sales['prise'].mean()", "KeyError", "'prise'", "sales['price'].mean()"),
        ("sales['City'].unique()", "KeyError", "'City'", "sales['city'].unique()"),
        ("p = prices['aple']", "KeyError", "'aple'", "p = prices['apple']"),
        (
            "sales.groupy('city').sum()",
            "AttributeError",
            "'DataFrame' object has no attribute 'groupy'",
            "sales.groupby('city').sum()",
        ),
        (
            "nums.apend(4)",
            "AttributeError",
            "'list' object has no attribute 'apend'",
            "nums.append(4)",
        ),
        ("last = nums[3]", "IndexError", "list index out of range", "last = nums[-1]"),
        (
            "for i in range(len(nums) + 1):\n    print(nums[i])",
            "IndexError",
            "list index out of range",
            "for i in range(len(nums)):\n    print(nums[i])",
        ),
        ("s = sum(nums", "SyntaxError", "'(' was never closed", "s = sum(nums)"),
        (
            "for n in nums\n    print(n)",
            "SyntaxError",
            "expected ':'",
            "for n in nums:\n    print(n)",
        ),
        ('print("hi)', "SyntaxError", "unterminated string literal", 'print("hi")'),
        (
            "print('t: ' + total)",
            "TypeError",
            'can only concatenate str (not "int") to str',
            "print('t: ' + str(total))",
        ),
        (
            "m = np.mean(nums)",
            "NameError",
            "name 'np' is not defined",
            "import numpy as np\nm = np.mean(nums)",
        ),
        ("import pandsa", "ModuleNotFoundError", "No module named 'pandsa'", "import pandas"),
    ],
)
def test_cheap_repairs_of_common_slips(names, source, ename, evalue, fixed):
    found = repairs(source, {"ename": ename, "evalue": evalue}, names())
    assert found and found[0].code == fixed
    assert found[0].explanation.endswith(".") and "\n" not in found[0].explanation
    verdict = check_code(found[0].code, names(), small=True, original=source)
    assert verdict.runnable, verdict.problem


@pytest.mark.parametrize(
    ("source", "ename", "evalue"),
    [
        ("share = total / 0", "ZeroDivisionError", "division by zero"),
        ("x = zzzzzz", "NameError", "name 'zzzzzz' is not defined"),  # nothing close
        ("sales['qty']", "KeyError", "'qty'"),
    ],
)
def test_no_repair_is_a_guess(source, ename, evalue):
    assert repairs(source, {"ename": ename, "evalue": evalue}, live()) == []


# -- answers ------------------------------------------------------------------------------------

# What SmolLM2-135M answered to "Explain why cell 5 failed" with the full chat framing.
ECHO = (
    "The current state of the notebook's kernel:\n<kernel-state>\n"
    "Notebook: Start here.ipynb (8 cells; the active cell is cell 5)\n\n"
    "Active cell 5 (code):\nprnt(total)\n```"
)
SENT = [
    "You help with a Jupyter notebook.",
    "The current state of the notebook's kernel:\n<kernel-state>\n"
    "Notebook: Start here.ipynb (8 cells; the active cell is cell 5)\n\nActive cell 5 (code):\n"
    "prnt(total)\n</kernel-state>\n\nRequest:\nExplain why cell 5 failed",
]


def test_an_echo_of_the_context_is_one_honest_line():
    assert echoed(ECHO, SENT)
    assert clean_answer(ECHO, SENT) == (ECHO_LINE, True)
    assert clean_answer(ECHO, SENT, small=True) == (SMALL_ECHO_LINE, True)
    copied = (
        "Notebook: Start here.ipynb (8 cells; the active cell is cell 5)\nActive cell 5 (code):"
    )
    assert echoed(copied, SENT)


@pytest.mark.parametrize(
    "answer",
    [
        "`prnt` is not defined: use `print(total)`.",
        # Quoting the user's code in a block is not an echo.
        "The cell calls a name that does not exist:\n```python\nprnt(total)\n```\nUse print.",
        "Active cell 5 (code) calls prnt, which is not defined; use print.",
    ],
)
def test_real_answers_are_kept(answer):
    assert not echoed(answer, SENT)
    assert clean_answer(answer, SENT) == (answer, False)


def test_scaffold_lines_are_dropped_from_an_answer():
    answer = "The total is 6, read from the variables.\nIt is an int.\n</kernel-state>"
    text, was_echo = clean_answer(answer, SENT)
    assert (text, was_echo) == ("The total is 6, read from the variables.\nIt is an int.", False)


@pytest.mark.parametrize(
    ("text", "balanced"),
    [
        ("Try:\n```python\nx = 1", "Try:\n```python\nx = 1\n```"),
        ("Try:\n  ~~~~\n  x = 1\n", "Try:\n  ~~~~\n  x = 1\n  ~~~~"),
        ("The answer.\n```", "The answer."),
        ("The answer.\n```python\n\n", "The answer."),
        ("Done:\n```python\nx = 1\n```", "Done:\n```python\nx = 1\n```"),
    ],
)
def test_unmatched_fences_are_closed_or_dropped(text, balanced):
    assert balance_fences(text) == balanced


def test_code_blocks_carry_verdicts_keyed_as_the_browser_keys_them():
    text = (
        "Use one of these:\n```python\nprint(total)\n```\n"
        "- in a list:\n  ```python\n  print(totl)\n  ```\n"
        "```bash\nls\n```\n```\nsales['price'].mean()\n```\n"
        "```python\nnp.mean(nums)\n```"
    )
    checks = code_block_checks(text, live(), small=True)
    assert checks == [
        {"block_id": code_block_key("print(total)"), "runnable": True, "problem": ""},
        {
            "block_id": code_block_key("print(totl)"),
            "runnable": False,
            "problem": "it reads undefined name(s) totl",
        },
        {
            "block_id": code_block_key("ls"),
            "runnable": False,
            "problem": "it is marked bash, not Python",
        },
        {"block_id": code_block_key("sales['price'].mean()"), "runnable": True, "problem": ""},
        {
            "block_id": code_block_key("np.mean(nums)"),
            "runnable": False,
            "problem": "it needs import numpy as np first",
        },
    ]
    # Any other model: only the syntax.
    assert [c["runnable"] for c in code_block_checks("```python\nprint(x\n```")] == [False]
    assert [c["runnable"] for c in code_block_checks(text)] == [True, True, False, True, True]


# -- completion ---------------------------------------------------------------------------------


def suggest(prefix: str, raw: str, *, suffix: str = "", small: bool = False) -> tuple[str, list]:
    guard = SuggestionGuard(prefix, suffix, names=live(), small=small)
    pieces = [guard.push(raw[i : i + 3]) for i in range(0, len(raw), 3)] + [guard.finish()]
    shown = [p for p in pieces if p]
    return "".join(shown), shown


@pytest.mark.parametrize(
    ("line", "prose"),
    [
        ("The code is complete and correct.", True),
        ("You can use the `sum()` function", True),
        ("This will print the total", True),
        ("x is not None", False),
        ("return a + b", False),
        ("print('You can use the sum')", False),  # text inside a string is not prose
        ("for n in nums if n > 1", False),
    ],
)
def test_what_reads_as_a_sentence(line, prose):
    assert reads_as_prose(line) is prose


@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize(
    ("prefix", "suffix", "raw", "shown"),
    [
        ("def add(a, b):\n    ", "", "The code is complete and correct.", ""),
        ("total = sum(", ")", "You can use the `sum()` function:\n```", ""),
        ("x = 1\nprint(x)\n", "", "# Output: 1", ""),
        ("total = sum(", ")", "nums", "nums"),
        ("def add(a, b):\n    ", "", "return a + b", "return a + b"),
        ("x = ", "", "[n * 2 for n in nums]", "[n * 2 for n in nums]"),
        ("# compute the", "", " mean of the prices", " mean of the prices"),
        ("s = 'hello ", "'", "world, this is text", "world, this is text"),
        ("x = 1\n", "", "y = 2\ny = = 3\nz = 4", "y = 2"),  # a line that breaks the cell ends it
    ],
)
def test_completion_suggests_code_or_nothing(prefix, suffix, raw, shown, small):
    assert suggest(prefix, raw, suffix=suffix, small=small)[0] == shown


def test_the_small_profile_also_checks_names_and_drops_made_up_comments():
    assert suggest("print(", "df_with_nums([1, 2]))", small=True)[0] == ""
    assert suggest("print(", "df_with_nums([1, 2]))")[0] == "df_with_nums([1, 2]))"
    assert suggest("nums.", "apend(4)", small=True)[0] == ""
    assert suggest("nums.", "append(4)", small=True)[0] == "append(4)"
    assert suggest("x = ", "total  # Output: 6", small=True)[0] == "total"


def test_a_capable_model_code_shows_as_it_grows_prose_only_whole():
    text, pieces = suggest("df = sales.", "groupby('city')['price'].mean()")
    assert text == "groupby('city')['price'].mean()" and len(pieces) > 2
    _, pieces = suggest("x = ", "You can use the")
    assert pieces == []
    # The small model's lines show only once whole.
    _, pieces = suggest("x = ", "sum(nums) + total", small=True)
    assert pieces == ["sum(nums) + total"]
