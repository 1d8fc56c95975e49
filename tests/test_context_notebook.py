"""chapyter_ext.context.notebook: the chat's snapshot, validated and assembled within one budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chapyter_ext.context.cell_names import cell_name
from chapyter_ext.context.notebook import (
    MAX_SOURCE,
    MAX_VARIABLES,
    ChatContext,
    NotebookSnapshot,
    chat_context,
)
from chapyter_ext.redact import Redactor
from tests.snapshots import snapshot

VECTORS = Path(__file__).parent / "vectors"
SERVER_KEY = "sk-test-SERVERKEY-0123456789abcdef"


def assemble(obj: dict, budget: int = 6000, secrets=()) -> ChatContext:
    return chat_context(NotebookSnapshot.parse(obj), budget=budget, redactor=Redactor(secrets))


def test_import_is_light():
    code = (
        "import sys, chapyter_ext.context.notebook\n"
        "heavy = {'pandas', 'numpy', 'IPython', 'tornado'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_text_and_chip_in_priority_order():
    context = assemble(snapshot(selection="groupby"))
    text = context.text
    assert text.startswith("Notebook: analysis.ipynb (6 cells; the active cell is the 4th cell)")
    assert "Selected text (in the 4th cell):\ngroupby" in text
    assert "Active cell, the 4th cell (code):\ndf.groupby('city').sum()" in text
    assert "Last error:\nNameError: name 'plot' is not defined (the 5th cell)" in text
    assert "\x1b" not in text
    assert "- df (DataFrame): 3 rows × 2 columns\n    columns: city, rain" in text
    assert "- API_KEY (str): <redacted>" in text
    assert "The 3rd cell (markdown, above the active cell):\n## Rain per city" in text
    assert "The 5th cell (code, below the active cell):\nplot(df)" in text
    order = ["Selected text", "Active cell", "Last error", "Variables", "Neighbouring cells"]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    assert context.summary == "analysis.ipynb · 4th cell · selection · 2 variables · last error"
    assert context.chars == len(text)
    assert context.to_json() == {"text": text, "summary": context.summary, "chars": len(text)}


def test_cells_are_named_as_jupyterlab_shows_them():
    # The count the browser sends as the cell's own: "cell [7]", as the UI and Explain say.
    obj = snapshot()
    obj["active"] = {**obj["active"], "prompt": 7}
    obj["below"] = [{**cell, "prompt": 8} for cell in obj["below"]]
    obj["last_error"] = {**obj["last_error"], "cell_prompt": 8}
    context = assemble(obj)
    header = "Notebook: analysis.ipynb (6 cells; the active cell is cell [7])"
    assert context.text.startswith(header)
    assert "Active cell, cell [7] (code):" in context.text
    assert "Cell [8] (code, below the active cell):" in context.text
    assert "NameError: name 'plot' is not defined (cell [8])" in context.text
    assert context.summary.startswith("analysis.ipynb · cell [7] · ")
    with pytest.raises(ValueError, match=r"active\.prompt"):
        NotebookSnapshot.parse({**obj, "active": {**obj["active"], "prompt": "7"}})


def test_cell_names_match_the_browser():
    vectors = json.loads((VECTORS / "cell_names.json").read_text(encoding="utf-8"))
    for notebook in vectors["notebooks"]:
        names = [cell_name(i + 1, prompt) for i, prompt in enumerate(notebook["prompts"])]
        assert names == notebook["names"]


def test_chip_leaves_out_what_is_unknown():
    context = assemble(snapshot(active=None, variables=None, last_error=None))
    assert context.summary == "analysis.ipynb"
    assert context.text.startswith("Notebook: analysis.ipynb (6 cells)")
    one = assemble(snapshot(variables=[{"name": "x", "type": "int", "summary": "1"}]))
    assert one.summary == "analysis.ipynb · 4th cell · 1 variable · last error"


def test_chapyter_errors_are_not_the_last_error():
    own = {"cell_index": 3, "ename": "ChapyterError", "evalue": "model down", "traceback": []}
    context = assemble(snapshot(last_error=own))
    assert "last error" not in context.summary
    assert "Last error" not in context.text and "model down" not in context.text


@pytest.mark.parametrize("budget", [0, 1, 30, 100, 300, 1000, 3000, 6000, 20_000])
def test_budget_is_respected(budget):
    big = snapshot(
        selection="x = 1\n" * 500,
        active={"index": 3, "type": "code", "source": "x = 1\n" * 20_000},
        variables=[{"name": f"v{i}", "type": "int", "summary": str(i) * 30} for i in range(400)],
        last_error={
            "cell_index": 1,
            "ename": "ValueError",
            "evalue": "bad " * 1000,
            "traceback": ["frame\n" * 50] * 100,
        },
        above=[{"index": i, "type": "code", "source": f"y{i} = 2\n" * 300} for i in range(3)],
    )
    context = assemble(big, budget)
    assert context.chars == len(context.text) <= budget
    if budget >= 3000:
        assert "Active cell, the 4th cell" in context.text
        assert "more lines" in context.text
        assert "more variables" in context.text


def test_secrets_never_leave():
    obj = snapshot(
        selection=f"key = '{SERVER_KEY}'",
        active={"index": 0, "type": "code", "source": "token = 'ghp_" + "Zx9" * 12 + "'"},
        variables=[{"name": "note", "type": "str", "summary": f"'use {SERVER_KEY}'"}],
        last_error={"cell_index": 0, "ename": "E", "evalue": SERVER_KEY, "traceback": []},
    )
    text = assemble(obj, secrets=[SERVER_KEY]).text
    assert SERVER_KEY not in text
    assert "ghp_" not in text
    assert "<redacted>" in text


def test_bounds_cut_instead_of_failing():
    parsed = NotebookSnapshot.parse(
        snapshot(
            active={"index": 0, "type": "code", "source": "a" * (MAX_SOURCE + 50)},
            variables=[
                {"name": f"v{i}", "type": "int", "summary": "1"} for i in range(MAX_VARIABLES + 50)
            ],
            above=[{"index": i, "type": "code", "source": str(i)} for i in range(50)],
            cell_count=7.0,
            extra_key="ignored",
        )
    )
    assert len(parsed.active.source) == MAX_SOURCE
    assert len(parsed.variables) == MAX_VARIABLES
    assert [c.index for c in parsed.above][-1] == 49  # the nearest neighbours are kept
    assert parsed.cell_count == 7


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ("text", "the snapshot must be an object"),
        ({}, "'path' must be a string"),
        ({"path": "  "}, "'path' must be the notebook's path"),
        ({"path": "a", "cell_count": -1}, "'cell_count' must be a whole number"),
        ({"path": "a", "cell_count": True}, "'cell_count' must be a whole number"),
        ({"path": "a", "active": "x"}, "'active' must be a cell object"),
        ({"path": "a", "active": {"index": 1.5}}, "'active.index' must be a whole number"),
        ({"path": "a", "above": {}}, "'above' must be a list of cells"),
        ({"path": "a", "below": [{"index": 0, "source": 3}]}, "'below[].source' must be"),
        ({"path": "a", "variables": "x"}, "'variables' must be a list or null"),
        ({"path": "a", "variables": [{"type": "int"}]}, "'variables[].name' must be"),
        ({"path": "a", "last_error": []}, "'last_error' must be an object or null"),
        ({"path": "a", "last_error": {"traceback": [1]}}, "'last_error.traceback' must be"),
        ({"path": "a", "selection": 5}, "'selection' must be a string"),
    ],
)
def test_bad_snapshots_say_what_is_wrong_in_one_line(obj, message):
    with pytest.raises(ValueError) as caught:
        NotebookSnapshot.parse(obj)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
