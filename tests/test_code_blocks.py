"""Every block the chat draws as code goes through one guard: the blocks of an answer (fenced and
indented) against the vectors the browser's lexer is tested against too, lines of a Markdown list
never pass as code, and what Fix and the agent would run is read the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapyter_ext.agent.tools.fenced import fenced_step
from chapyter_ext.contract import code_block_key
from chapyter_ext.fix.request import FixRequest, parse_fix_answer
from chapyter_ext.guards import check_code
from chapyter_ext.guards.answers import code_block_checks
from chapyter_ext.guards.verdict import LIST_PROBLEM
from chapyter_ext.parsing import NoCodeError, extract_code
from chapyter_ext.parsing.code_blocks import answer_code_blocks, markdown_list

# The same file labextension/src/__tests__/code-blocks.spec.ts reads.
VECTORS = json.loads((Path(__file__).parent / "vectors" / "code_blocks.json").read_text("ascii"))


@pytest.mark.parametrize("vector", VECTORS["blocks"], ids=lambda v: v["name"])
def test_the_blocks_drawn_as_code_are_the_blocks_checked(vector):
    found = [{"code": b.code, "fenced": b.fenced} for b in answer_code_blocks(vector["text"])]
    assert found == vector["blocks"]


@pytest.mark.parametrize("vector", VECTORS["lists"], ids=lambda v: repr(v["code"]))
def test_markdown_list_lines_are_told_from_code(vector):
    assert markdown_list(vector["code"]) is vector["list"]


def test_the_vectors_cover_indented_blocks_lists_and_raw_pre():
    names = {v["name"] for v in VECTORS["blocks"]}
    assert "a list indented as code" in names
    assert "raw pre HTML is shown as text, never code" in names
    assert any(not b["fenced"] for v in VECTORS["blocks"] for b in v["blocks"])


def test_list_lines_that_parse_are_not_runnable_for_any_model():
    assert VECTORS["list_problem"] == LIST_PROBLEM  # the browser's words too
    verdict = check_code("- 12.\n- 13.")
    assert (verdict.runnable, verdict.problem) == (False, LIST_PROBLEM)
    assert check_code("x = -12.\nprint(x)").runnable is True


ANSWER = (
    "Here is what I found:\n\n"
    "    df = pd.read_csv('x.csv'\n\n"  # indented, does not parse
    "The values:\n\n"
    "    - 12.\n"
    "    - 13.\n\n"
    "<pre>\nprint('raw')\n</pre>\n\n"
    "And a good one:\n\n"
    "    total = 1 + 2\n"
    "    print(total)\n\n"
    "```bash\nls\n```\n"
)


def verdict(code: str, runnable: bool, problem: str = "") -> dict:
    return {"block_id": code_block_key(code), "runnable": runnable, "problem": problem}


def test_every_block_drawn_as_code_gets_a_verdict():
    assert code_block_checks(ANSWER) == [
        verdict(
            "df = pd.read_csv('x.csv'", False, "it does not parse (line 1: '(' was never closed)"
        ),
        verdict("- 12.\n- 13.", False, LIST_PROBLEM),
        verdict("total = 1 + 2\nprint(total)", True),
        verdict("ls", False, "it is marked bash, not Python"),
    ]


@pytest.mark.parametrize(
    "answer",
    ["- 12.\n- 13.", "    - 12.\n    - 13.", "The values:\n- 12.\n- 13.", "```python\n- 12.\n```"],
)
def test_what_would_run_is_never_a_list(answer):
    try:
        code = extract_code(answer)
    except NoCodeError:
        return
    assert check_code(code).runnable is False


def test_fix_reads_no_code_from_an_indented_list():
    request = FixRequest.parse(
        {
            "notebook": "a.ipynb",
            "mode": "fix",
            "cell": {"id": "c1", "index": 0, "source": "print(x)"},
            "error": {"ename": "NameError", "evalue": "name 'x' is not defined"},
        }
    )
    with pytest.raises(NoCodeError):
        parse_fix_answer("Cell: c1\n\n    - 12.\n    - 13.\n", request)


def test_the_agent_runs_only_fenced_blocks_and_checks_them():
    # An indented block is the final answer's text, never a step.
    assert fenced_step("Try this:\n\n    print(1)\n").code is None
    step = fenced_step("Values:\n```python\n- 12.\n- 13.\n```")
    assert step.code == "- 12.\n- 13." and check_code(step.code, as_is=True).runnable is False
