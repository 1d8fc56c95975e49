"""Echoes of what the server sent: whole and partial echoes of the context,
the system prompt and the rules are one honest line; names quoted, the notebook's own code and
text, and the conversation's own turns (an answer given twice) are not echoes."""

from __future__ import annotations

import pytest

from chapyter_ext.agent import AgentLimits, AgentLoop, Finish
from chapyter_ext.chat.prompts import CHAT_SYSTEM_PROMPT
from chapyter_ext.context.notebook import NotebookSnapshot, chat_context
from chapyter_ext.guards.answers import (
    ECHO_LINE,
    PARTIAL_ECHO_LINE,
    SMALL_PARTIAL_ECHO_LINE,
    clean_answer,
)
from chapyter_ext.guards.echo import (
    Instructions,
    context_header,
    notebook_text,
    request_instructions,
)
from chapyter_ext.messages import build_messages
from chapyter_ext.redact import Redactor
from chapyter_ext.rules import ProjectRules, RuleFile, with_rules

INTRO = "Sales of 2024, by region. We compare the regions and keep the ones above the median."
SNAPSHOT = NotebookSnapshot.parse(
    {
        "path": "work/sales.ipynb",
        "cell_count": 20,
        "active": {
            "index": 3,
            "type": "code",
            "source": "totals = sales.groupby('region')['revenue'].sum()\ntotals.plot.bar()",
        },
        "above": [
            {"index": 1, "type": "markdown", "source": INTRO},
            {"index": 2, "type": "code", "source": "import pandas as pd\nsales = load()"},
        ],
        "last_error": {
            "cell_index": 3,
            "ename": "KeyError",
            "evalue": "'revenue'",
            "traceback": [
                "Cell In[4], line 1\n----> 1 totals = sales.groupby('region')['revenue'].sum()",
                "KeyError: 'revenue'",
            ],
        },
        "variables": [
            {
                "name": "sales",
                "type": "DataFrame",
                "summary": "DataFrame 120 rows x 3 columns: region (object), Revenue "
                "(float64), qty (int64)",
            },
            {"name": "threshold", "type": "float", "summary": "1250.5"},
            {"name": "pd", "type": "module", "summary": "pandas"},
        ],
        "language": "python",
    }
)
CONTEXT = chat_context(SNAPSHOT, budget=6000, redactor=Redactor()).text
RULES = ProjectRules(
    files=(
        RuleFile(
            "AGENTS.md", "Always use polars-style method chains.\nNever print DataFrames whole."
        ),
    )
)
QUESTION = "Explain why the 4th cell failed and how to fix it."
CODE = "totals = sales.groupby('region')['Revenue'].sum()\ntotals"
ANSWER = f"The column is `Revenue`, with a capital R:\n```python\n{CODE}\n```"


def messages(history=(), question=QUESTION):
    built = build_messages(question, CONTEXT, history=list(history), system=CHAT_SYSTEM_PROMPT)
    return with_rules(built, RULES)


def sent(history=()):
    return Instructions(request_instructions(messages(history)), notebook_text(SNAPSHOT))


LINES = CONTEXT.splitlines()
#: The error's line as the context says it ("KeyError: 'revenue' (the 4th cell)").
ERROR_LINE = next(line for line in LINES if line.startswith("KeyError: 'revenue' ("))


def test_the_context_is_what_the_cases_say():
    # The cases below quote these lines: they must be the context's own.
    assert LINES[0].startswith("Notebook: sales.ipynb (20 cells; the active cell is ")
    for line in (
        "Last error:",
        "- sales (DataFrame): DataFrame 120 rows x 3 columns: region (object), Revenue "
        "(float64), qty (int64)",
        "- threshold (float): 1250.5",
        INTRO,
    ):
        assert line in CONTEXT.splitlines(), line


# (what, answer, "whole" | "partial" | None)
CASES = [
    # -- echoes, whole
    ("the whole context", f"<kernel-state>\n{CONTEXT}\n</kernel-state>", "whole"),
    (
        "the framing and the context's first lines",
        f"The current state of the notebook's kernel:\n<kernel-state>\n{LINES[0]}\n\n{LINES[2]}",
        "whole",
    ),
    # -- echoes, partial
    (
        "Explain's fenced kernel-state block, then an answer",
        "```\n<kernel-state> Notebook: sales.ipynb (20 cells; active cell is 3)\n```\n"
        "The cell reads a column that does not exist; the name is `Revenue`. Use that name.\n"
        "It will work then, and the plot shows the totals.",
        "partial",
    ),
    (
        "the same block tagged python",
        "```python\n<kernel-state>\nNotebook: sales.ipynb (20 cells; active cell is 3)\n```\n"
        "Use `Revenue`. That is all there is to it, really; run the cell again after it.",
        "partial",
    ),
    (
        "Active cell and Last error restated with a made-up traceback",
        "Active cell 4 (code):\ntotals = data.sum()\n\nLast error:\nTraceback (most recent "
        'call last):\n  File "x.py", line 9\nZeroDivisionError: division by zero\n\n'
        "Fix it by dividing by something else, then run the cell again; it should work. "
        "Nothing else in the notebook needs to change for that, as far as I can see.",
        "partial",
    ),
    (
        "both headers on one line of prose",
        "Active cell 4: `totals = ...` Last error: KeyError.\n\nThe column is `Revenue`: "
        "rename it in the cell and run the cell again, then look at the bar chart again.\n"
        "If it still fails, show me the new error.",
        "partial",
    ),
    (
        "a header as a Markdown heading",
        "### Last error:\nThe cell asks for `revenue` but the column is `Revenue`; the names of "
        "columns are case sensitive in pandas, so the lookup fails. Use `Revenue`.\n"
        "Then run the cell again.",
        "partial",
    ),
    (
        "a header in bold with the error after it",
        "**Last error:** `KeyError: 'revenue'`\n\nThe column is `Revenue`; fix the name and "
        "run the cell again. The rest of the cell is fine as it is.\nThen plot again.",
        "partial",
    ),
    (
        "the variables header",
        "Variables (most recent first):\nYou have `sales` and `threshold`; the frame has a "
        "`Revenue` column, not `revenue`, so use that in the cell and run it again.\n"
        "That should fix it.",
        "partial",
    ),
    (
        "two variable lines in a row",
        "Your data:\n- sales (DataFrame): DataFrame 120 rows x 3 columns: region (object), "
        "Revenue (float64), qty (int64)\n- threshold (float): 1250.5\n\nThe column is "
        "`Revenue`, so the cell must use that name; the rest of the cell can stay as it is. "
        "Then the bar chart will show one bar per region, as you wanted, and the error goes "
        "away. Run the cell again when it is fixed.",
        "partial",
    ),
    (
        "two lines of the system prompt",
        "Answer clearly and briefly; explain the why when it helps.\n- Do not suggest "
        "installing packages unless needed, and say so when you do.\nThe column is "
        "`Revenue`. Use it in the cell instead of `revenue`, and the cell runs; the plot then "
        "shows the totals by region. Nothing else needs to change in it.",
        "partial",
    ),
    (
        "the system prompt re-wrapped into one line",
        "Sure. When code helps, include it in fenced python blocks written for this kernel use "
        "the existing variables and the exact column names shown do not re-create data. The "
        "column is `Revenue`, so use that name in the cell and it will run.",
        "partial",
    ),
    (
        "the project rules restated",
        "Always use polars-style method chains.\nNever print DataFrames whole.\n\nThe column "
        "is `Revenue`; use that name in the cell and it will run, and the plot then shows "
        "every region with its total. Run it again after the change.",
        "partial",
    ),
    (
        "the header as a comment in code",
        "Use the right name:\n```python\n# Last error: KeyError: 'revenue'\n" + CODE + "\n```",
        "partial",
    ),
    # -- not echoes
    ("a name quoted", "`sales` has no column `revenue`; it is `Revenue`.", None),
    (
        "names and columns quoted",
        "`sales` has 120 rows and the columns `region`, `Revenue` and `qty`; `threshold` "
        "is 1250.5.",
        None,
    ),
    ("the fix repeats the active cell with one change", ANSWER, None),
    (
        "the cell quoted in an untagged block that parses",
        "Your cell:\n```\ntotals = sales.groupby('region')['revenue'].sum()\ntotals.plot.bar()"
        "\n```\nasks for `revenue`; the column is `Revenue`.",
        None,
    ),
    (
        "the active cell named in a sentence",
        "The active cell (cell 4) sums `revenue`, which `sales` does not have.\n"
        "Active cell 4 (code) fails on its first line.",
        None,
    ),
    (
        "the error's one line quoted",
        f"It raised:\n\n{ERROR_LINE}\n\nbecause the column is `Revenue`.",
        None,
    ),
    (
        "the notebook's own markdown quoted",
        f"Your notebook says: {INTRO} So the totals come first; fix the column name to "
        "`Revenue` and they will.",
        None,
    ),
    ("the user's question repeated", f"{QUESTION}\nThe column is `Revenue`, not `revenue`.", None),
    (
        "a stray closing tag is dropped, not an echo",
        "The column is `Revenue`.\n</kernel-state>",
        None,
    ),
    ("short lines", "Out: 3\n```\n```\n- x\nDone.", None),
]


@pytest.mark.parametrize(("what", "answer", "kind"), CASES, ids=[c[0] for c in CASES])
def test_echoes_whole_and_partial_and_what_is_not_one(what, answer, kind):
    echo = sent().echo(answer)
    if kind is None:
        assert echo is None, (what, echo)
        return
    assert echo is not None, what
    assert echo.whole == (kind == "whole"), (what, echo)
    text, was_echo = clean_answer(answer, sent())
    assert was_echo and text == (ECHO_LINE if kind == "whole" else PARTIAL_ECHO_LINE)


def test_a_stray_tag_is_dropped_from_a_kept_answer():
    answer = "The column is `Revenue`.\n</kernel-state>"
    assert clean_answer(answer, sent()) == ("The column is `Revenue`.", False)


def test_the_small_profile_says_so_in_its_line():
    answer = "Last error:\nThe column is `Revenue`; use that name and run the cell again now."
    assert clean_answer(answer, sent(), small=True) == (SMALL_PARTIAL_ECHO_LINE, True)


def test_an_answer_that_repeats_an_earlier_answer_of_the_chat_is_kept():
    history = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]
    assert clean_answer(ANSWER, sent(history)) == (ANSWER, False)
    # Prose repeated word for word, too: the chat's turns are not instructions.
    prose = (
        "The cell groups the sales by region and sums a column that is not there; pandas "
        "column names are case sensitive, so `revenue` and `Revenue` are two different names.\n"
        "Rename it in the cell, then run the cell again and the bar chart appears as before."
    )
    history = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": prose}]
    assert clean_answer(prose, sent(history)) == (prose, False)


def test_two_hundred_similar_exchanges_flag_nothing_after_the_first():
    answer = (
        "The column is `Revenue`, with a capital R, so the cell fails on its first line.\n"
        f"```python\n{CODE}\n```\n"
        "Run the cell again and the bar chart shows the totals by region."
    )
    history: list[dict[str, str]] = []
    kept = []
    for _ in range(200):
        text, was_echo = clean_answer(answer, sent(history))
        kept.append(not was_echo and text == answer)
        history += [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": text}]
    assert all(kept)


def test_only_the_servers_texts_count_as_instructions():
    history = [{"role": "user", "content": "old question"}, {"role": "assistant", "content": "A"}]
    texts = request_instructions(messages(history))
    assert texts[0].startswith(CHAT_SYSTEM_PROMPT.rstrip()) and "polars-style" in texts[0]
    assert texts[1] == f"<kernel-state>\n{CONTEXT}\n</kernel-state>"
    assert len(texts) == 2  # not the question, not the history


def test_every_header_of_the_chat_context_is_recognised():
    titles = [line for line in CONTEXT.splitlines() if line.endswith(":")]
    titles.append(CONTEXT.splitlines()[0])  # Notebook: ... (20 cells; ...)
    titles += [line for line in CONTEXT.splitlines() if line.startswith("Imported modules")]
    assert len(titles) >= 6, titles
    for line in titles:
        assert context_header(line), line
    assert context_header("Recent cells (oldest first):")  # %%ai's context
    assert context_header("Selected text (in cell 4):")
    assert context_header("Selected text (in the 4th cell):")
    assert context_header("Cell 3 (code, above the active cell):")


def test_the_agents_final_answer_follows_the_same_rule():
    history = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]

    def loop() -> AgentLoop:
        return AgentLoop(
            question=QUESTION,
            context=CONTEXT,
            history=history,
            tools=False,
            images=False,
            policy="ask",
            limits=AgentLimits(),
        )

    # The earlier answer again, as prose: kept.
    prose = "The column is `Revenue`, with a capital R; the cell asks for `revenue`."
    assert loop().on_reply(prose, []) == Finish(prose)
    echo = "Notebook: sales.ipynb (20 cells; active cell is 3)\nThe column is `Revenue`."
    finish = loop().on_reply(echo, [])
    assert isinstance(finish, Finish) and finish.answer == PARTIAL_ECHO_LINE
