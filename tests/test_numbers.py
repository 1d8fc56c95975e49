"""Checked numbers: every vector of tests/vectors/numbers.json, the rules one at a time, and the
matcher's figures on the table (a false "found" is the one mistake it must never make)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapyter_ext.numbers import (
    FOUND,
    MAX_WHERE,
    NOT_FOUND,
    TRIVIAL,
    Seen,
    SeenIndex,
    check_numbers,
    find_numbers,
    skip_code,
)

VECTORS = json.loads((Path(__file__).parent / "vectors" / "numbers.json").read_text("utf-8"))
CASES = VECTORS["cases"]


def _verdicts(case):
    return check_numbers(case["answer"], [Seen.from_json(s) for s in case["seen"]])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_every_number_of_the_answer_gets_its_verdict(case):
    verdicts = _verdicts(case)
    got = [(v.text, v.status) for v in verdicts]
    assert got == [(e["text"], e.get("matcher", e["status"])) for e in case["expect"]]
    for verdict in verdicts:
        assert case["answer"][verdict.start : verdict.end] == verdict.text
        assert bool(verdict.where) == (verdict.status == FOUND)


def test_the_figures_on_the_table():
    false_found = false_not_found = numbers = 0
    for case in CASES:
        for verdict, expected in zip(_verdicts(case), case["expect"]):
            numbers += 1
            if verdict.status == FOUND and expected["status"] != FOUND:
                false_found += 1
            if verdict.status == NOT_FOUND and expected["status"] == FOUND:
                false_not_found += 1
    known = sum(1 for case in CASES for e in case["expect"] if "matcher" in e)
    print(
        f"\nnumbers: {len(CASES)} cases, {numbers} verdicts, "
        f"false found {false_found}, false not found {false_not_found}"
    )
    assert len(CASES) >= 80
    assert false_found == 0
    # Each miss is written down in the table as a known, conservative one.
    assert false_not_found == known


def test_the_table_covers_each_outcome_and_each_kind_of_source():
    statuses = {e["status"] for case in CASES for e in case["expect"]}
    assert statuses == {FOUND, NOT_FOUND, TRIVIAL}
    kinds = {s["kind"] for case in CASES for s in case["seen"]}
    assert kinds == {"output", "variable", "tool"}


def test_value_and_precision_of_each_format():
    text = "3.14, 1,234,567, 12.5%, $1.2k, 2.1 million, 1.2e-3, −5, 12 kg, 5 bn"
    read = {m.text: (m.value, m.step, m.percent, m.unit) for m in find_numbers(text)}
    assert read["3.14"] == (3.14, pytest.approx(0.01), False, "")
    assert read["1,234,567"] == (1234567, 1, False, "")
    assert read["12.5%"] == (12.5, pytest.approx(0.1), True, "")
    assert read["$1.2k"] == (1200, pytest.approx(100), False, "$")
    assert read["2.1 million"] == (2100000, pytest.approx(100000), False, "")
    assert read["1.2e-3"] == (pytest.approx(0.0012), pytest.approx(0.0001), False, "")
    assert read["−5"] == (-5, 1, False, "")
    assert read["12 kg"] == (12, 1, False, "kg")
    assert read["5 bn"] == (5e9, 1e9, False, "")


def test_code_is_skipped_without_moving_any_span():
    text = "x `7` y\n```\n8\n```\n1. z 9\n## 2. h"
    blanked = skip_code(text)
    assert len(blanked) == len(text)
    assert blanked.count("\n") == text.count("\n")
    assert [m.text for m in find_numbers(text)] == ["9"]
    # Outside Markdown nothing is skipped but a quoted digit ('7', `7`): a label, not a value.
    assert [m.text for m in find_numbers(text, prose=False)] == ["8", "1", "9", "2"]


def test_a_year_is_decided_by_its_words():
    assert [m.text for m in find_numbers("In 2023 we had 2023 rows")] == ["2023"]
    assert find_numbers("In 2023 we had 2023 rows")[0].start == 15
    assert find_numbers("between 2019 and 2023, March 2024, 1990s") == []
    # Outside 1900-2100 a bare four-digit integer is always a number.
    assert [m.text for m in find_numbers("in 1850 and in 2500")] == ["1850", "2500"]


def test_where_names_at_most_three_sources_with_their_line():
    seen = [Seen("output", f"cell [{i}]", "noise\nthe mean is 42.5 here\nmore") for i in range(5)]
    (verdict,) = check_numbers("The mean is 42.5.", seen)
    assert verdict.status == FOUND
    assert len(verdict.where) == MAX_WHERE
    assert [w.label for w in verdict.where] == ["cell [0]", "cell [1]", "cell [2]"]
    assert verdict.where[0].excerpt == "the mean is 42.5 here"
    data = json.loads(json.dumps(verdict.to_json()))
    assert data["where"][0] == {
        "kind": "output",
        "label": "cell [0]",
        "excerpt": data["where"][0]["excerpt"],
    }
    assert set(data) == {"text", "start", "end", "value", "status", "where"}


def test_a_long_line_is_cut_around_the_number():
    (verdict,) = check_numbers(
        "It is 77.25.", [Seen("tool", "run_cell", "x" * 500 + " 77.25 " + "y" * 500)]
    )
    excerpt = verdict.where[0].excerpt
    assert excerpt.startswith("…") and excerpt.endswith("…") and "77.25" in excerpt
    assert len(excerpt) < 80


def test_one_index_serves_several_answers():
    index = SeenIndex([Seen("variable", "df", "rows 4812, mean 0.913")])
    assert [v.status for v in check_numbers("4,812 and 0.91", index)] == [FOUND, FOUND]
    assert [v.status for v in check_numbers("4,813 and 0.92", index)] == [NOT_FOUND, NOT_FOUND]


def test_a_megabyte_of_output_and_a_long_answer():
    # Size, not speed, is checked here (timings go to benchmarks/bench_numbers.py).
    rows = "\n".join(f"{i:>7}  {i * 0.731:.4f}  {i * 1.5:,.1f}" for i in range(36000))
    assert len(rows) > 900_000
    answer = (
        " ".join(f"value {i * 0.731:.2f} and {i + 0.5}" for i in range(0, 30000, 60))
        + " and 0.12345"
    )
    verdicts = check_numbers(answer, [Seen("output", "cell [1]", rows)])
    assert len(answer) > 10_000
    assert sum(v.status == FOUND for v in verdicts) >= 500
    assert verdicts[-1].status == NOT_FOUND
