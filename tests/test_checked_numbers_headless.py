"""Checked numbers without a browser: ``chapyter-ext agent`` (its own process, a real kernel)
records the answer's verdicts in the answer cell's provenance, and ``chapyter-ext check``
re-derives them after a replay: once the data changed, the answer is flagged in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from chapyter_ext.notebook_check import check_notebook
from chapyter_ext.notebook_numbers import answer_text, number_drift
from chapyter_ext.testing.openai_server import Reply
from tests.kernel_harness import python3_notebook
from tests.test_agent_headless import agent, run_code

QUESTION = "What is the total revenue?"
STEP = "print(f'total revenue: {sum(revenue):.2f}')"
# Correct, rounded, wrong, invented, trivial.
ANSWER = "Total revenue is 10,006.50 (about 10.0k), not 10,106.5; 4,321 orders came in 3 weeks."
EXPECTED = [
    ("10,006.50", "found"),
    ("10.0k", "found"),
    ("10,106.5", "not_found"),
    ("4,321", "not_found"),
    ("3", "trivial"),
]


@pytest.fixture(autouse=True)
def fresh(server):
    server.clear()
    server.default_reply = Reply(content="(the script ran out)")


def data_cell(revenue: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(f"revenue = {revenue}\nprint('loaded')")


def replay(path: Path) -> nbformat.NotebookNode:
    """Run the notebook top to bottom as a batch job would (nbclient, a real kernel)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    nbformat.write(nb, path)
    return nb


def check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chapyter_ext.cli", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_answer_cell_records_its_numbers_and_check_flags_them_after_the_data_changed(
    server, tmp_path
):
    path = python3_notebook(tmp_path / "sales.ipynb", [data_cell("[1200.25, 3400.5, 5405.75]")])
    server.script(Reply(tool_calls=[run_code(STEP, "sum the revenue")]), Reply(content=ANSWER))
    out = agent(server, str(path), QUESTION, "--yes", home=tmp_path / "ipython")
    assert out.returncode == 0, out.stderr

    nb = nbformat.read(path, as_version=4)
    step, answer = nb.cells[1:]
    assert step.outputs[0].text == "total revenue: 10006.50\n"
    meta = answer.metadata["chapyter"]
    assert meta["role"] == "answer"
    numbers = meta["numbers"]
    assert [(n["text"], n["status"]) for n in numbers] == EXPECTED
    label = f"cell [{step.execution_count}] output"
    assert [w["label"] for w in numbers[0]["where"]] == [label]
    text = answer_text(answer.source)
    assert text == ANSWER
    assert all(text[n["start"] : n["end"]] == n["text"] for n in numbers)
    nbformat.validate(nb)

    # Replayed on the same data: the answer still stands.
    replay(path)
    assert number_drift(nbformat.read(path, as_version=4)) == []
    same = check(path)
    assert same.returncode == 0 and "numbers" not in same.stdout, same.stdout

    # The data changed: the numbers found in the step's output are found no more.
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = data_cell("[1000.0, 2000.0]").source
    nbformat.write(nb, path)
    replayed = replay(path)
    assert replayed.cells[1].outputs[0].text == "total revenue: 3000.00\n"
    [finding] = [f for f in check_notebook(replayed, "sales.ipynb") if "numbers" in f.message]
    assert (finding.cell, finding.severity) == (3, "warning")
    assert finding.message == (
        "the answer's numbers no longer match the outputs above it: 10,006.50, 10.0k "
        "(found when it was answered, not now)"
    )
    flagged = check(path)
    lines = [line for line in flagged.stdout.splitlines() if "numbers" in line]
    assert lines == [f"{path}:cell 3 ({replayed.cells[2].id}): warning: {finding.message}"]
