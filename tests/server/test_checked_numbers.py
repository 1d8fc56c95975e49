"""Checked numbers through the real server: an agent turn's final answer, each of its numbers
found or not in what the turn saw (the cell output the browser posted back, the variable
summaries of the context), on ``done``, in the history and in the export."""

from __future__ import annotations

from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply

from .agent_browser import NOTEBOOK, Browser, agent_body, run_code, stdout

PRINTED = "rows: 1234567\nmean churn: 0.4567\n"
SUMMARY = {"name": "df", "type": "DataFrame", "summary": "100 rows x 3 columns; revenue mean 73.21"}
# Correct, rounded, wrong, invented, from the variable summary, trivial.
ANSWER = (
    "There are 1,234,567 rows; mean churn is 0.46, or 0.47 by the old rule, "
    "and 98,765 customers left. Mean revenue is 73.2 over 3 columns."
)
EXPECTED = [
    ("1,234,567", "found", ["cell [7] output"]),
    ("0.46", "found", ["cell [7] output"]),
    ("0.47", "not_found", []),
    ("98,765", "not_found", []),
    ("73.2", "found", ["df summary"]),
    ("3", "trivial", []),
]


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


def verdicts(numbers: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    return [(n["text"], n["status"], [w["label"] for w in n["where"]]) for n in numbers]


async def test_the_answers_numbers_are_checked_sent_kept_and_exported(
    browser, fake, get_json, jp_root_dir
):
    fake.script(Reply(tool_calls=[run_code("print(summary)")]), Reply(content=ANSWER))
    context = {"path": NOTEBOOK, "cell_count": 1, "variables": [SUMMARY]}
    reader = await browser.run(
        agent_body(policy="never", context=context), lambda step: stdout(PRINTED, count=7)
    )
    done = reader.first("done")
    assert done["text"] == ANSWER
    assert verdicts(done["numbers"]) == EXPECTED
    for number in done["numbers"]:
        assert ANSWER[number["start"] : number["end"]] == number["text"]
    found = done["numbers"][0]["where"][0]
    assert found["kind"] == "output" and "1234567" in found["excerpt"]
    assert done["numbers"][4]["where"][0]["kind"] == "variable"

    _, history = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    user, assistant = history["messages"]
    assert verdicts(assistant["numbers"]) == EXPECTED
    assert "numbers" not in user

    (jp_root_dir / "work").mkdir(exist_ok=True)
    status, saved = await get_json(
        "chapyter-ext", "history", "export", method="POST", body={"notebook": NOTEBOOK}
    )
    assert status == 200, saved
    text = (jp_root_dir / saved["path"]).read_text()
    note = text.split(ANSWER, 1)[1]
    assert "*Checked numbers: 3 found, 2 not found in this turn's outputs.*" in note
    assert "- `0.47`: not found in this turn's outputs" in note
    assert "- `98,765`: not found in this turn's outputs" in note
    assert "`1,234,567`" not in note


@pytest.mark.chapyter_config({"Chapyter": {"agent_max_steps": 2}})
async def test_a_turn_without_a_final_answer_checks_nothing(browser, fake):
    fake.script(*[Reply(tool_calls=[run_code(f"print({n})")]) for n in range(4)])
    reader = await browser.run(agent_body(policy="never"), lambda step: stdout("12345\n"))
    done = reader.first("done")
    assert done["halt"] and "numbers" not in done


async def test_an_answer_with_only_trivial_numbers_or_none(browser, fake, get_json):
    fake.script("Done in 2 steps.")
    reader = await browser.run(agent_body(policy="never"), lambda step: None)
    assert verdicts(reader.first("done")["numbers"]) == [("2", "trivial", [])]
