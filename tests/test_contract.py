"""The notebook contract against the vectors the TypeScript side is tested against too."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from chapyter_ext import contract

VECTORS = json.loads((Path(__file__).parent / "vectors" / "contract.json").read_text("ascii"))


def ids(cases, key):
    return [repr(case[key])[:60] for case in cases]


@pytest.mark.parametrize("case", VECTORS["magic_lines"], ids=ids(VECTORS["magic_lines"], "line"))
def test_magic_line(case):
    if "options" in case:
        assert dataclasses.asdict(contract.parse_magic_line(case["line"])) == case["options"]
        return
    with pytest.raises(contract.MagicLineError) as err:
        contract.parse_magic_line(case["line"])
    message = str(err.value)
    assert case["error"] in message
    assert message.startswith(case.get("error_prefix", ""))
    assert "\n" not in message


@pytest.mark.parametrize("case", VECTORS["prompts"], ids=ids(VECTORS["prompts"], "source"))
def test_parse_prompt(case):
    parsed = contract.parse_prompt(case["source"])
    expected = case["prompt"]
    if expected is None:
        assert parsed is None
        return
    assert parsed is not None
    assert parsed.request == expected["request"]
    options = dataclasses.asdict(parsed.options) if parsed.options else None
    assert options == expected["options"]
    if expected["error"] is None:
        assert parsed.error is None
    else:
        assert expected["error"] in parsed.error
        assert parsed.model is None


@pytest.mark.parametrize("case", VECTORS["normalize_request"])
def test_normalize_request(case):
    assert contract.normalize_request(case["text"]) == case["normalized"]


@pytest.mark.parametrize("case", VECTORS["request_sha256"])
def test_request_sha256(case):
    assert contract.request_sha256(case["text"]) == case["sha256"]


@pytest.mark.parametrize("case", VECTORS["code_sha256"])
def test_code_sha256(case):
    assert contract.code_sha256(case["code"]) == case["sha256"]


@pytest.mark.parametrize("case", VECTORS["code_block_key"])
def test_code_block_key(case):
    # The key is the hash of the normalised block: the same block read by the browser's
    # Markdown lexer and by the server gets the same key.
    assert contract.code_block_key(case["code"]) == case["key"]
    assert contract.code_block_key(case["normalized"]) == case["key"]


@pytest.mark.parametrize("case", VECTORS["generated_metadata"])
def test_generated_metadata(case):
    metadata = contract.generated_metadata(**case["fields"])
    assert metadata == case["metadata"]
    assert list(metadata) == list(case["metadata"])  # the documented field order


@pytest.mark.parametrize("case", VECTORS["link_generated"])
def test_link_generated(case):
    metadata = contract.link_generated(case["provenance"], case["prompt_id"])
    assert metadata == case["metadata"]
    assert list(metadata) == list(case["metadata"])


@pytest.mark.parametrize("case", VECTORS["accepted_change"], ids=lambda c: c["name"])
def test_accepted_change(case):
    before = json.dumps(case["metadata"])
    metadata = contract.accepted_change(case["metadata"], **case["fields"])
    assert metadata == case["result"]
    assert list(metadata) == list(case["result"])  # the documented field order
    assert json.dumps(case["metadata"]) == before  # the input is left as it was
    assert contract.last_change(metadata) == case["result"]["changes"][-1]


def test_accepted_change_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown change kind"):
        contract.accepted_change(None, kind="magic", model="m", code="", request_sha256="")


@pytest.mark.parametrize("case", VECTORS["prompt_metadata"])
def test_prompt_metadata(case):
    assert contract.prompt_metadata(case["generated_id"]) == case["metadata"]


@pytest.mark.parametrize("case", VECTORS["generation_payload_item"])
def test_generation_payload_item(case):
    item = contract.generation_payload_item(case["code"], case["metadata"], run=case["run"])
    assert item == case["item"]
    assert contract.read_generation_payload({"payload": [item]}) == (
        case["code"],
        case["metadata"],
        case["run"],
    )


@pytest.mark.parametrize("case", VECTORS["read_generation_payload"])
def test_read_generation_payload(case):
    generation = contract.read_generation_payload(case["reply"])
    if case["generation"] is None:
        assert generation is None
    else:
        assert generation._asdict() == case["generation"]


@pytest.mark.parametrize("case", VECTORS["links"], ids=[c["name"] for c in VECTORS["links"]])
def test_links(case):
    cells = case["cells"]
    for prompt, generated in case["generated_index"]:
        assert contract.find_generated_index(cells, prompt) == generated
    for generated, prompt in case["prompt_index"]:
        assert contract.find_prompt_index(cells, generated) == prompt
    assert [i for i, c in enumerate(cells) if contract.is_prompt_cell(c)] == case["prompt_cells"]
    generated_cells = [i for i, c in enumerate(cells) if contract.is_generated_cell(c)]
    assert generated_cells == case["generated_cells"]
    assert [i for i in generated_cells if contract.is_edited(cells[i])] == case["edited"]
    for prompt, generated, expected in case["up_to_date"]:
        assert contract.is_up_to_date(cells[prompt], cells[generated]) is expected
    broken = [i for i in generated_cells if contract.has_syntax_error(cells[i])]
    assert broken == case["syntax_error"]


def test_vectors_hold_odd_unicode():
    # The point of the shared file: cases that once hashed two ways must stay in it.
    text = json.dumps(VECTORS)
    for escape in ("\\ud800", "\\ud83d\\ude00", "\\u00a0", "\\u2028", "\\ufeff", "\\r\\n"):
        assert escape in text


def test_importing_the_contract_is_cheap():
    import subprocess
    import sys

    code = (
        "import sys, chapyter_ext.contract; "
        "print(sorted(m for m in ('IPython', 'openai', 'tornado') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the notebook-level contract: the chat id and the stored chat --------------------------------


@pytest.mark.parametrize("case", VECTORS["notebook_ids"], ids=ids(VECTORS["notebook_ids"], "value"))
def test_notebook_id(case):
    assert contract.is_notebook_id(case["value"]) is case["valid"]


@pytest.mark.parametrize(
    "case", VECTORS["notebook_chat_info"], ids=ids(VECTORS["notebook_chat_info"], "name")
)
def test_notebook_chat_info(case):
    assert contract.notebook_chat_info(case["metadata"]) == case["info"]


@pytest.mark.parametrize("case", VECTORS["with_notebook_id"], ids=lambda c: repr(c)[:60])
def test_with_notebook_id(case):
    before = json.dumps(case["chapyter"])
    if case.get("error"):
        with pytest.raises(ValueError):
            contract.with_notebook_id(case["chapyter"], case["notebook_id"])
        return
    assert contract.with_notebook_id(case["chapyter"], case["notebook_id"]) == case["result"]
    assert json.dumps(case["chapyter"]) == before  # a new object; the old one is left alone
