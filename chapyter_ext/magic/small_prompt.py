"""``%%ai``'s small-model prompt: the short system prompt, the worked examples (the few most like
the request, over the compact kernel summary of :mod:`chapyter_ext.context.compact`), the
one-code-block grammar and the answer's length cap. The candidates are sampled by
:func:`chapyter_ext.profile.candidate_request`."""

from __future__ import annotations

import re

from ..context.compact import NO_VARIABLES, as_subscripts, compact_summary
from ..guards.request import STOP_WORDS

#: Longest answer from a small model: the grammar allows two lines, everyday requests take
#: well under this (one answer once ran to 2,047 tokens and 69 s).
SMALL_MAX_TOKENS = 128

SMALL_SYSTEM_PROMPT = """\
You write Python code for a Jupyter notebook. The variables listed exist: use them by name, \
never make up data. Answer with one short ```python code block."""

# GBNF (llama.cpp): one ```python block of 1 or 2 non-empty lines, then nothing (the grammar
# ends there, so the model stops). A line cannot start with a backtick (that closes the block)
# and holds no comment: a small model rambles on in comments, and its code after them.
CODE_GRAMMAR = r"""root ::= "```python\n" line line? "```"
line ::= [^`#\n\r] [^#\n\r]* "\n"
"""

# Worked examples of everyday requests, in the shape of the real turns (the summary as
# ``compact_summary`` writes it). The few most like the request are sent, the closest last: a
# small model mostly follows the example nearest to what it is asked.
_DF = "- {name} (DataFrame): {rows} rows × {n} columns\n    columns: {columns}"


def _frame(name: str, rows: int, columns: str) -> str:
    shown = as_subscripts(name, columns.split(", "))
    return _DF.format(name=name, rows=rows, n=columns.count("'") // 2, columns=shown)


_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        _frame("df", 4, "'x' int64, 'y' int64"),
        "add a column total that is x times y",
        "df['total'] = df['x'] * df['y']",
    ),
    (
        _frame("orders", 50, "'item' str, 'qty' int64, 'cost' float64"),
        "average cost into mean_cost",
        "mean_cost = orders['cost'].mean()",
    ),
    ("- name (str): 'Grace Hopper'", "the length of name into n", "n = len(name)"),
    (
        _frame("users", 20, "'name' str, 'height' int64"),
        "keep the rows of users where height < 150",
        "users = users[users['height'] < 150]",
    ),
    (
        "- items (list): 6 items: ['a', 'b', 'a', 'c', 'b', 'd']",
        "remove the duplicates from items",
        "items = list(dict.fromkeys(items))",
    ),
    (
        NO_VARIABLES,
        "load trips.csv into a DataFrame called trips",
        "import pandas as pd\ntrips = pd.read_csv('trips.csv')",
    ),
    (
        NO_VARIABLES,
        "a function double that returns twice a number",
        "def double(x):\n    return 2 * x",
    ),
    ("- letters (list): 3 items: ['x', 'y', 'z']", "reverse letters", "letters.reverse()"),
    (
        "- words (list): 12 items: ['to', 'be', 'or', 'not']",
        "how many items in words into count",
        "count = len(words)",
    ),
    (
        _frame("stock", 30, "'day' datetime64[ns], 'close' float64"),
        "lowest close into low",
        "low = stock['close'].min()",
    ),
    (
        _frame("visits", 100, "'country' str, 'hours' float64"),
        "mean hours per country into by_country",
        "by_country = visits.groupby('country')['hours'].mean()",
    ),
    (
        _frame("cars", 8, "'model' str, 'speed' int64, 'color' str"),
        "sort cars by speed",
        "cars = cars.sort_values('speed')",
    ),
    (
        _frame("table", 10, "'id' int64, 'note' str, 'size' float64"),
        "remove the note column from table",
        "table = table.drop(columns=['note'])",
    ),
    (
        _frame("grades", 6, "'n' str, 'g' int64"),
        "rename column g of grades to grade",
        "grades = grades.rename(columns={'g': 'grade'})",
    ),
    ("- text (str): '  some words  '", "text without the spaces at its ends", "text.strip()"),
    (
        "- line (str): 'a,b,c'",
        "replace the commas in line with semicolons into fixed",
        "fixed = line.replace(',', ';')",
    ),
    (
        _frame("cars", 8, "'model' str, 'speed' int64, 'color' str"),
        "write cars to cars.csv",
        "cars.to_csv('cars.csv', index=False)",
    ),
    (
        _frame("pets", 40, "'kind' str, 'age' int64"),
        "count each kind in pets into counts",
        "counts = pets['kind'].value_counts()",
    ),
    (
        NO_VARIABLES,
        "a set vowels of the letters a, e, i, o and u",
        "vowels = {'a', 'e', 'i', 'o', 'u'}",
    ),
    (
        "- arr (ndarray): shape (50,), float64",
        "standard deviation of arr into spread",
        "spread = arr.std()",
    ),
    (
        _frame("shop", 25, "'item' str, 'price' float64"),
        "replace the missing values in the price column of shop with the mean price",
        "shop['price'] = shop['price'].fillna(shop['price'].mean())",
    ),
    (
        _frame("log", 200, "'time' str, 'status' str"),
        "drop the rows of log where status is missing",
        "log = log.dropna(subset=['status'])",
    ),
    (
        NO_VARIABLES,
        "a list evens of the even numbers from 0 to 20",
        "evens = [n for n in range(0, 21) if n % 2 == 0]",
    ),
    (
        _frame("cars", 8, "'model' str, 'speed' int64, 'color' str"),
        "how many different colors in cars into n_colors",
        "n_colors = cars['color'].nunique()",
    ),
    (
        _frame("sales", 12, "'day' int64, 'price' float64"),
        "plot price over day",
        "sales.plot(x='day', y='price')",
    ),
    (
        _frame("df", 1000, "'a' int64, 'b' str"),
        "the first 3 rows of df",
        "df.head(3)",
    ),
)
#: Worked examples sent with each request.
N_EXAMPLES = 6

_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def _kinds(context: str | None) -> set[str]:
    """The kinds of variables a summary shows: ``DataFrame``, ``list``, ``str``, ..."""
    return set(re.findall(r"^- \S+ \(([^)]+)\)", context or "", re.MULTILINE))


def pick_examples(request: str, context: str | None) -> list[tuple[str, str, str]]:
    """The :data:`N_EXAMPLES` worked examples most like ``request`` (shared words, then the
    same kinds of variables), the most alike last."""
    words, kinds = _words(request), _kinds(context)

    def score(example: tuple[str, str, str]) -> tuple[float, int]:
        shared = len(words & _words(example[1]))
        same_kind = len(kinds & _kinds(example[0])) or (not kinds and example[0] == NO_VARIABLES)
        return (shared + 0.5 * bool(same_kind), -_EXAMPLES.index(example))

    return sorted(sorted(_EXAMPLES, key=score, reverse=True)[:N_EXAMPLES], key=score)


def _turn(context: str | None, request: str) -> str:
    return f"Variables:\n{context or NO_VARIABLES}\n\nRequest: {request}"


def build_small_messages(
    request: str, context: str | None, *, retry: tuple[str, str] | None = None
) -> list[dict]:
    """The messages for a small model: its system prompt, the worked examples as earlier
    turns, then the compact kernel summary with the request. ``retry`` is (code, error): the
    code as the model's answer, then the error with the ask for a corrected block."""
    from ..contract import normalize_request

    text = normalize_request(request)
    if not text:
        raise ValueError("The request is empty.")
    context = compact_summary(context)
    messages: list[dict] = [{"role": "system", "content": SMALL_SYSTEM_PROMPT}]
    for example_context, example_request, code in pick_examples(text, context):
        messages.append({"role": "user", "content": _turn(example_context, example_request)})
        messages.append({"role": "assistant", "content": f"```python\n{code}\n```"})
    messages.append({"role": "user", "content": _turn(context, text)})
    if retry is not None:
        code, error = retry
        messages.append({"role": "assistant", "content": f"```python\n{code}\n```"})
        messages.append(
            {"role": "user", "content": f"That raised:\n{error}\n\nWrite the corrected code."}
        )
    return messages
