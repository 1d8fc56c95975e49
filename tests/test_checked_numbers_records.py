"""Checked numbers as the history keeps them (bounded, redacted, damaged verdicts dropped), as
the export writes them, and what of a turn's context counts as seen (and under which name)."""

from __future__ import annotations

from chapyter_ext.agent.actions import StepRecord
from chapyter_ext.agent.checked_numbers import answer_numbers, context_seen
from chapyter_ext.history.checked_numbers import MAX_NUMBERS, clean_numbers
from chapyter_ext.history.markdown import chat_markdown
from chapyter_ext.history.records import ChatMessage, redact_message

FOUND = {
    "text": "42",
    "start": 6,
    "end": 8,
    "value": 42.0,
    "status": "found",
    "where": [{"kind": "output", "label": "cell [1] output", "excerpt": "key sk-SECRET 42"}],
}
MISSING = {"text": "43", "start": 13, "end": 15, "value": 43.0, "status": "not_found", "where": []}


def test_a_message_keeps_its_numbers_through_json_and_redaction():
    message = ChatMessage("m", "assistant", "It is 42, not 43.", numbers=(FOUND, MISSING))
    again = ChatMessage.from_json(message.to_json())
    assert again.numbers == (FOUND, MISSING)
    redacted = redact_message(again, lambda text: text.replace("sk-SECRET", "<redacted>"))
    assert redacted.numbers[0]["where"][0]["excerpt"] == "key <redacted> 42"
    assert "numbers" not in ChatMessage("u", "user", "hi").to_json()


def test_damaged_verdicts_are_dropped_and_the_rest_bounded():
    damaged = [
        {**FOUND, "status": "maybe"},
        {**FOUND, "start": "6"},
        {**FOUND, "start": True},
        {**FOUND, "text": ""},
        {**FOUND, "value": float("nan"), "where": [7, {"kind": "x"}, *[FOUND["where"][0]] * 9]},
        "junk",
    ]
    [kept] = clean_numbers(damaged)
    # Only the first MAX_SOURCES places are read; the unreadable ones among them are dropped.
    assert kept["value"] == 0.0 and kept["where"] == FOUND["where"]
    assert len(clean_numbers([FOUND] * (MAX_NUMBERS + 5))) == MAX_NUMBERS
    assert clean_numbers({"text": "42"}) == ()


def test_the_export_footnotes_each_number_not_found():
    messages = [
        ChatMessage("q", "user", "What is it?"),
        ChatMessage("a", "assistant", "It is 42, not 43.", numbers=(FOUND, MISSING)),
        ChatMessage("b", "assistant", "Nothing to check."),
    ]
    text = chat_markdown("n.ipynb", messages, lambda t: t, exported="2026-01-01T00:00:00Z")
    assert (
        "It is 42, not 43.\n\n*Checked numbers: 1 found, 1 not found in this turn's outputs.*\n"
        "- `43`: not found in this turn's outputs\n" in text
    )
    assert text.count("Checked numbers") == 1


def test_the_context_is_named_by_its_parts():
    context = (
        "Notebook n.ipynb (3 cells)\n\n"
        "Variables (most recent first):\n"
        "- df (DataFrame): 100 rows x 3 columns\n    revenue mean 73.21\n"
        "- total (float): 10006.5\n\n"
        "Recent cells (oldest first):\n"
        "In [3]:\nprint(x)\n    Out: 0.4567"
    )
    parts = [(s.kind, s.label) for s in context_seen(context)]
    assert parts == [
        ("variable", "notebook context"),
        ("variable", "Variables (most recent first) (context)"),
        ("variable", "df summary"),
        ("variable", "total summary"),
        ("variable", "Recent cells (oldest first) (context)"),
        ("output", "In [3] (context)"),
    ]
    step = StepRecord("s1", "run_code", op="run_cell", execution_count=4, shown="rows: 98")
    tool = StepRecord("s2", "search", title="web · search", server="web", shown="score 0.93")
    read = StepRecord("s3", "list_variables", title="list the variables", shown="n: 5")
    verdicts = answer_numbers(
        "Mean revenue 73.2, total 10,006.5, 98 rows, score 0.9, churn 0.46, and 77.7.",
        context,
        [step, tool, read],
    )
    assert [(v["text"], v["status"], [w["label"] for w in v["where"]]) for v in verdicts] == [
        ("73.2", "found", ["df summary"]),
        ("10,006.5", "found", ["total summary"]),
        ("98", "found", ["cell [4] output"]),
        ("0.9", "found", ["web · search"]),
        ("0.46", "found", ["In [3] (context)"]),
        ("77.7", "not_found", []),
    ]
    assert answer_numbers("", context, []) == ()
