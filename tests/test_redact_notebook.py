"""A notebook's outputs without the configured secrets (``chapyter_ext.redact.redact_outputs``):
every kind of output, a key split over two strings or shown in part, and a notebook without
a secret left exactly as it was."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import (
    new_code_cell,
    new_markdown_cell,
    new_notebook,
    new_output,
    new_raw_cell,
)

from chapyter_ext.atomic_write import write_notebook
from chapyter_ext.redact import (
    REDACTED,
    REDACTED_MARKUP,
    CleanValues,
    Redactor,
    redact_outputs,
)

KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
HEADER = "hdr-Value-9f8e7d6c5b4a"
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "2mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
# What outputs legitimately show and the full redaction would still replace: a commit hash,
# another service's key shape, an environment-looking assignment.
ORDINARY = "commit e83c5163316f89bfbde7d9ab23ca2e25604af290 sk-other-Zz9Yy8Xx7Ww6Vv5Uu4 TOKEN=abc"


@pytest.fixture
def redactor() -> Redactor:
    return Redactor([KEY, HEADER])


def every_kind(secret: str) -> nbformat.NotebookNode:
    """One cell per output kind, each showing ``secret`` (and a cell that shows none)."""
    nb = new_notebook()
    nb.cells = [
        new_code_cell(
            "print(key)",
            id="stream",
            outputs=[new_output("stream", name="stdout", text=f"the key: {secret}\n")],
        ),
        new_code_cell(
            "key",
            id="result",
            execution_count=2,
            outputs=[
                new_output(
                    "execute_result",
                    execution_count=2,
                    data={
                        "text/plain": f"'{secret}'",
                        "text/html": f"<b>{secret}</b>",
                        "text/markdown": ["first line\n", f"key {secret}\n"],
                        "application/json": {"key": secret, "nested": [1, {"k": secret}]},
                        "image/png": PNG,
                    },
                    metadata={"note": secret},
                )
            ],
        ),
        new_code_cell(
            "display(key)",
            id="display",
            outputs=[
                new_output("display_data", data={"text/plain": secret, "image/svg+xml": secret})
            ],
        ),
        new_code_cell(
            "raise ValueError(key)",
            id="error",
            outputs=[
                new_output(
                    "error",
                    ename="ValueError",
                    evalue=secret,
                    traceback=[
                        "\x1b[0;31mValueError\x1b[0m   Traceback (most recent call last)",
                        f"----> 1 raise ValueError(\x1b[38;5;124m'{secret}'\x1b[39m)",
                        f"\x1b[0;31mValueError\x1b[0m: {secret}",
                    ],
                )
            ],
        ),
        new_code_cell(
            "print('clean')",
            id="clean",
            outputs=[new_output("stream", name="stdout", text="clean\n")],
        ),
    ]
    return nb


def strings(value) -> list[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def test_every_kind_of_output_loses_the_key_and_nothing_else(redactor):
    nb = every_kind(KEY)
    before = copy.deepcopy(nb)
    found = redact_outputs(nb, redactor)

    stream, result, display, error, clean = nb.cells
    assert stream.outputs[0].text == f"the key: {REDACTED}\n"
    data = result.outputs[0].data
    assert data["text/plain"] == f"'{REDACTED}'"
    # In markup the marker is escaped, or it would read as a tag and show nothing.
    assert data["text/html"] == f"<b>{REDACTED_MARKUP}</b>"
    assert data["text/markdown"] == ["first line\n", f"key {REDACTED_MARKUP}\n"]
    assert data["application/json"] == {"key": REDACTED, "nested": [1, {"k": REDACTED}]}
    assert data["image/png"] == PNG
    assert display.outputs[0].data == {"text/plain": REDACTED, "image/svg+xml": REDACTED_MARKUP}
    assert error.outputs[0].evalue == REDACTED
    assert error.outputs[0].traceback == [
        "\x1b[0;31mValueError\x1b[0m   Traceback (most recent call last)",
        f"----> 1 raise ValueError(\x1b[38;5;124m'{REDACTED}'\x1b[39m)",
        f"\x1b[0;31mValueError\x1b[0m: {REDACTED}",
    ]
    # Outside the output values nothing moved: sources, ids, counts, metadata (an output's
    # own metadata too), the clean cell.
    for cell, old in zip(nb.cells, before.cells):
        assert (cell.id, cell.source, cell.metadata) == (old.id, old.source, old.metadata)
        assert cell.execution_count == old.execution_count
        assert [o.get("metadata") for o in cell.outputs] == [o.get("metadata") for o in old.outputs]
    assert result.outputs[0].metadata == {"note": KEY}
    assert clean == before.cells[4]
    # Every output value that held the key holds it no more.
    for cell in nb.cells:
        for output in cell.outputs:
            values = {k: v for k, v in output.items() if k != "metadata"}
            assert not [s for s in strings(values) if KEY in s], cell.id

    # stream 1; result: plain, html, markdown, json; display 2; error: value, 2 entries
    assert (found.values, found.outputs) == (10, 4)
    assert found.cells == ["stream", "result", "display", "error"] and found.unnamed == 0
    assert bool(found)
    assert found.note("a.ipynb") == (
        "replaced a configured secret with <redacted> in 4 outputs of a.ipynb before writing it"
    )


def test_a_notebook_without_a_secret_is_left_as_it_was(redactor):
    """Not one value rewritten: the same objects, the same bytes, and what the full
    redaction would replace (hashes, other key shapes) is the user's to keep."""
    nb = every_kind(ORDINARY)
    nb.cells.append(new_markdown_cell(f"# {ORDINARY}"))
    written = nbformat.writes(nb)
    values = [id(o) for c in nb.cells for o in c.get("outputs", [])]
    found = redact_outputs(nb, redactor)
    assert not found and (found.values, found.outputs, found.cells) == (0, 0, [])
    assert nbformat.writes(nb) == written
    assert [id(o) for c in nb.cells for o in c.get("outputs", [])] == values
    assert ORDINARY in nb.cells[0].outputs[0].text


def test_a_key_split_over_two_strings_of_one_value(redactor):
    """nbformat stores multi-line text as a list of strings, split anywhere a writer chose."""
    half = len(KEY) // 2
    nb = new_notebook()
    nb.cells = [
        new_code_cell(
            id="split",
            outputs=[
                new_output(
                    "stream", name="stdout", text=["before ", KEY[:half], KEY[half:] + "\n"]
                ),
                new_output(
                    "display_data",
                    data={"text/plain": ["a\n", f"x {KEY[:half]}", f"{KEY[half:]} y\n", "b\n"]},
                ),
            ],
        )
    ]
    found = redact_outputs(nb, redactor)
    stream, display = nb.cells[0].outputs
    assert stream.text == [f"before {REDACTED}\n"]
    assert display.data["text/plain"] == ["a\n", f"x {REDACTED} y\n", "b\n"]
    assert (found.values, found.outputs) == (2, 2)


def test_a_key_split_over_two_outputs_and_shown_in_part(redactor):
    """Each half of a key printed in two calls is a part of it the redactor knows; so is the
    key without its public prefix, or its last characters."""
    half = len(KEY) // 2
    core = KEY.removeprefix("sk-proj-")
    parts = [
        KEY[:half],
        KEY[half:],
        core,
        KEY[-12:],
        HEADER.removeprefix("hdr-"),
    ]
    nb = new_notebook()
    nb.cells = [
        new_code_cell(
            id="parts",
            outputs=[new_output("stream", name="stdout", text=f"{part}\n") for part in parts],
        )
    ]
    redact_outputs(nb, redactor)
    texts = [o.text for o in nb.cells[0].outputs]
    # The public prefix may stay ("sk-proj-" is in every such key); no run of the key does.
    for text in texts:
        assert REDACTED in text
        rest = text.replace(REDACTED, "").replace("sk-proj-", "").strip()
        assert len(rest) < 8, text
    assert texts[2] == f"{REDACTED}\n"


def test_sources_attachments_and_other_cells_are_never_touched(redactor):
    nb = new_notebook(metadata={"note": KEY})
    nb.cells = [
        new_code_cell(f"key = {KEY!r}", id="code", metadata={"tags": [KEY]}),
        new_markdown_cell(
            f"The key is {KEY}",
            id="md",
            attachments={"a.txt": {"text/plain": KEY}},
        ),
        new_raw_cell(KEY, id="raw"),
    ]
    before = nbformat.writes(nb)
    assert not redact_outputs(nb, redactor)
    assert nbformat.writes(nb) == before


def test_cells_without_ids_are_counted_apart(redactor):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": "",
                "metadata": {},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": KEY}],
            }
        ]
    }
    found = redact_outputs(nb, redactor)
    assert nb["cells"][0]["outputs"][0]["text"] == REDACTED
    assert (found.cells, found.unnamed, found.outputs) == ([], 1, 1)


@pytest.mark.parametrize(
    "nb",
    [
        None,
        {},
        {"cells": "no"},
        {"cells": [None, 3, {"cell_type": "code", "outputs": None}]},
        {"cells": [{"cell_type": "code", "outputs": [None, {"output_type": "stream"}]}]},
        {"cells": [{"cell_type": "code", "outputs": [{"output_type": "error", "traceback": 5}]}]},
        {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": 1}]}]},
        {
            "cells": [
                {
                    "cell_type": "code",
                    "outputs": [
                        {"output_type": "stream", "text": [KEY, 1]},
                        {"output_type": "execute_result", "data": {"text/plain": 7, 3: KEY}},
                    ],
                }
            ]
        },
    ],
)
def test_what_is_not_shaped_as_nbformat_says_is_passed_over(nb, redactor):
    before = copy.deepcopy(nb)
    assert not redact_outputs(nb, redactor)
    assert nb == before


def test_only_the_given_secrets_count(monkeypatch):
    """The environment's secrets are not the configured ones: outputs that show them are the
    user's (the chat and the logs still redact them)."""
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "env-token-value-1234567890")
    nb = every_kind("env-token-value-1234567890")
    assert not redact_outputs(nb, Redactor([KEY]))
    assert REDACTED in Redactor([KEY])("env-token-value-1234567890")


def test_write_notebook_writes_the_outputs_redacted(tmp_path, redactor):
    nb = every_kind(KEY)
    path = tmp_path / "nb.ipynb"
    found = write_notebook(nb, path, redactor=redactor)
    text = path.read_text()
    # Only an output's own metadata still holds it: metadata is never rewritten.
    assert text.count(KEY[-12:]) == text.count(KEY) == 1 and f'"note": "{KEY}"' in text
    assert text.count(REDACTED) == 8  # the JSON value holds it twice
    assert text.count(REDACTED_MARKUP) == 3  # HTML, Markdown, SVG
    assert found.outputs == 4
    assert '"print(key)"' in text  # the sources as they were
    # A notebook without a secret: exactly what nbformat writes.
    clean = every_kind(ORDINARY)
    found = write_notebook(clean, path, redactor=redactor)
    assert not found
    assert path.read_text().rstrip("\n") == nbformat.writes(every_kind(ORDINARY)).rstrip("\n")


# ---------------------------------------------------------------------------------------------
# The vectors the page is tested against too (labextension/src/__tests__/saved-secrets.spec.ts)

VECTORS = json.loads((Path(__file__).parent / "vectors" / "saved_outputs.json").read_text("ascii"))


@pytest.mark.parametrize("case", VECTORS["outputs"], ids=lambda c: c["name"])
def test_vectors_saved_is_what_the_save_makes_of_shown(case):
    nb = {"cells": [{"cell_type": "code", "id": "c", "outputs": [copy.deepcopy(case["shown"])]}]}
    found = redact_outputs(nb, Redactor(case["secrets"]))
    assert nb["cells"][0]["outputs"][0] == case["saved"]
    assert bool(found) == (case["saved"] != case["shown"])
    for secret in case["secrets"]:
        assert secret[-10:] not in json.dumps(case["saved"])


def test_vectors_cover_every_kind_and_the_events_follow_the_schema():
    from jsonschema import ValidationError
    from jupyter_events.schema import EventSchema

    from chapyter_ext.history.contents_events import REDACTED_SCHEMA, REDACTED_SCHEMA_ID

    kinds = {c["shown"]["output_type"] for c in VECTORS["outputs"]}
    assert kinds == {"stream", "execute_result", "display_data", "error"}
    assert VECTORS["marker"] == REDACTED
    assert VECTORS["markup_marker"] == REDACTED_MARKUP
    assert VECTORS["schema_id"] == REDACTED_SCHEMA_ID
    schema = EventSchema(REDACTED_SCHEMA)
    for event in VECTORS["events"]:
        data = {k: v for k, v in event["data"].items() if k != "schema_id"}
        if event["data"]["schema_id"] != REDACTED_SCHEMA_ID:
            assert event["parsed"] is None
            continue
        if event["parsed"] is None:
            with pytest.raises(ValidationError, match=r"is a required property|minimum"):
                schema.validate(data)
        else:
            schema.validate(data)


# ---------------------------------------------------------------------------------------------
# Saving the same outputs again


class CountingRedactor:
    """A redactor that counts the values it is asked about."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.calls = 0

    def known(self, text: str, marker: str = REDACTED) -> str:
        self.calls += 1
        return self.redactor.known(text, marker)


def test_values_found_clean_are_not_checked_again_and_keys_always_are(redactor):
    long_clean = "row\n" * 300
    counting = CountingRedactor(redactor)
    clean = CleanValues(counting)  # type: ignore[arg-type]

    def notebook():
        nb = every_kind(KEY)
        nb.cells[4].outputs[0].text = long_clean  # the clean cell, long enough to be kept
        nb.cells[0].outputs[0].text = long_clean + KEY  # long, and holding the key
        return nb

    first = notebook()
    assert redact_outputs(first, clean).outputs == 4
    asked = counting.calls
    assert len(clean) == 1  # only the long clean value: short ones and keyed ones are not kept
    second = notebook()
    assert redact_outputs(second, clean).outputs == 4
    assert counting.calls - asked == asked - 1  # the long clean value was not asked about
    assert second.cells[0].outputs[0].text == long_clean + REDACTED
    assert nbformat.writes(second) == nbformat.writes(first)


def test_clean_values_start_over_past_their_limit(redactor):
    clean = CleanValues(redactor, limit=2)
    for n in range(5):
        clean.known(f"{n} " + "x" * CleanValues.MIN_CHARS)
    assert 1 <= len(clean) <= 2
    assert clean.known(KEY * 100) == REDACTED * 100
