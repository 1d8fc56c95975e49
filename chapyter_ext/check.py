"""``chapyter-ext check``: are the AI cells of a notebook in step with their prompts?

Pure logic over notebooks as nbformat defines them (no kernel, no network), so it runs as a
pre-commit hook in a fraction of a second. The link rules are those of the JupyterLab frontend
(``labextension/src/notebook/links.ts`` and ``prompt.ts``), mirrored function by function:
a notebook the checker calls up to date is one whose prompts JupyterLab's Run All replays.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .prompts import request_sha256
from .provenance import METADATA_KEY, SCHEMA_VERSION

__all__ = [
    "Finding",
    "Prompt",
    "check_notebook",
    "check_paths",
    "code_sha256",
    "find_generated_index",
    "find_prompt_index",
    "generated_metadata",
    "is_edited",
    "is_generated_cell",
    "is_prompt_cell",
    "is_up_to_date",
    "parse_prompt",
    "prompt_metadata",
    "read_notebook",
    "summary_line",
]

# JavaScript's \s, so that trimming and splitting agree with prompt.ts character for character.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_MAGIC_LINE = re.compile(f"^%%ai(?:[{_JS_SPACE}]|$)")
_WORDS = re.compile(f"[{_JS_SPACE}]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


# -- link rules (mirrors links.ts / prompt.ts) ------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    """The parts of a ``%%ai`` cell (``IPromptCell`` in prompt.ts)."""

    flags: frozenset[str]
    model: str | None
    request: str


def _js_trim(text: str) -> str:
    return re.sub(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$", "", text)


def parse_prompt(source: str) -> Prompt | None:
    """Split a prompt cell into its magic line's options and its request, or None."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if _js_trim(line) != ""), -1)
    if first < 0 or not _MAGIC_LINE.match(lines[first]):
        return None
    words = [w for w in _WORDS.split(_js_trim(lines[first])) if w][1:]
    flags: set[str] = set()
    model: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("--model", "-m"):
            model = words[i + 1] if i + 1 < len(words) else None
            i += 1
        elif word.startswith("--model="):
            model = word[len("--model=") :]
        else:
            flags.add(word)
        i += 1
    return Prompt(frozenset(flags), model, "\n".join(lines[first + 1 :]))


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _chapyter(cell: Any) -> dict:
    value = (cell.get("metadata") or {}).get(METADATA_KEY)
    return value if isinstance(value, dict) else {}


def code_sha256(source: str) -> str:
    """sha256 of a cell's code as the frontend hashes it (UTF-8, lone surrogates as U+FFFD)."""
    return hashlib.sha256(_SURROGATE.sub("\ufffd", source).encode("utf-8")).hexdigest()


def is_prompt_cell(cell: Any) -> bool:
    """Whether a cell is a ``%%ai`` prompt cell."""
    return cell.get("cell_type") == "code" and parse_prompt(_source(cell)) is not None


def is_generated_cell(cell: Any) -> bool:
    """Whether a cell was generated (by ``%%ai`` or the chat)."""
    return _chapyter(cell).get("role") == "generated"


def find_generated_index(cells: Sequence[Any], prompt_index: int) -> int:
    """Index of the cell generated from the prompt at ``prompt_index``, or -1.

    The prompt's ``generated_cell`` id is followed only when that cell points back to the
    prompt: a copied prompt cell (new id, old link) must not take over the original's cell.
    """
    if not 0 <= prompt_index < len(cells):
        return -1
    prompt_id = cells[prompt_index].get("id")

    def points_back(cell: Any) -> bool:
        return is_generated_cell(cell) and _chapyter(cell).get("generated_from") == prompt_id

    linked = _chapyter(cells[prompt_index]).get("generated_cell")
    if isinstance(linked, str):
        for index, cell in enumerate(cells):
            if cell.get("id") == linked:
                if points_back(cell):
                    return index
                break
    return next((i for i, cell in enumerate(cells) if points_back(cell)), -1)


def find_prompt_index(cells: Sequence[Any], generated_index: int) -> int:
    """Index of the prompt a generated cell came from, or -1."""
    origin = _chapyter(cells[generated_index]).get("generated_from")
    if not isinstance(origin, str):
        return -1
    return next((i for i, c in enumerate(cells) if c.get("id") == origin and is_prompt_cell(c)), -1)


def is_edited(generated: Any) -> bool:
    """Whether a generated cell's code differs from what the model wrote."""
    recorded = _chapyter(generated).get("code_sha256")
    return isinstance(recorded, str) and recorded != code_sha256(_source(generated))


def is_up_to_date(prompt: Any, generated: Any) -> bool:
    """Same request hash, and the same model when the prompt names one."""
    parsed = parse_prompt(_source(prompt))
    meta = _chapyter(generated)
    if parsed is None or not meta:
        return False
    if meta.get("prompt_sha256") != request_sha256(parsed.request):
        return False
    return parsed.model is None or meta.get("model") == parsed.model


def prompt_metadata(generated_id: str) -> dict:
    """The ``chapyter`` metadata a prompt cell gets once linked (``promptMetadata``)."""
    return {"schema": SCHEMA_VERSION, "role": "prompt", "generated_cell": generated_id}


def generated_metadata(provenance: dict, prompt_id: str) -> dict:
    """The kernel's provenance linked to its prompt, in schema order (``generatedMetadata``)."""
    linked = ("schema", "role", "source", "generated_from")
    rest = {k: v for k, v in provenance.items() if k not in linked}
    return {
        "schema": provenance.get("schema", SCHEMA_VERSION),
        "role": provenance.get("role", "generated"),
        "source": provenance.get("source", "magic"),
        "generated_from": prompt_id,
        **rest,
    }


# -- the checker -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One line of the report: ``path:cell N (id): severity: message``."""

    path: str
    severity: str  # "error" or "warning"
    message: str
    cell: int | None = None  # 1-based position, as a person counts cells
    cell_id: str | None = None

    def __str__(self) -> str:
        where = self.path
        if self.cell is not None:
            where += f":cell {self.cell}" + (f" ({self.cell_id})" if self.cell_id else "")
        return f"{where}: {self.severity}: {self.message}"


def check_notebook(
    nb: Any, path: str = "<notebook>", *, strict: bool = False, orphans: bool = False
) -> list[Finding]:
    """Every problem of one notebook's AI cells, in cell order.

    Errors: a prompt with no generated cell; a generated cell whose prompt changed (another
    request, or another model named on the magic line). Warnings (errors when ``strict``): a
    generated cell edited by hand; a second copy of a prompt's generated cell; with
    ``orphans``, a generated cell whose prompt is gone.
    """
    cells = list(nb.get("cells", []))
    soft = "error" if strict else "warning"
    found: list[tuple[int, Finding]] = []

    def add(index: int, severity: str, message: str) -> None:
        cell = cells[index]
        found.append((index, Finding(path, severity, message, index + 1, cell.get("id"))))

    linked: dict[int, int] = {}  # generated index -> prompt index
    for index, cell in enumerate(cells):
        if not is_prompt_cell(cell):
            continue
        generated = find_generated_index(cells, index)
        if generated < 0:
            add(index, "error", "%%ai prompt without a generated cell: run it to generate one")
            continue
        linked[generated] = index
        if not is_up_to_date(cell, cells[generated]):
            add(generated, "error", _changed_message(cell, cells[generated], index))
        elif is_edited(cells[generated]):
            add(
                generated,
                soft,
                f"code edited by hand since it was generated from cell {index + 1} "
                "(regenerating would replace the edits)",
            )

    for index, cell in enumerate(cells):
        if not is_generated_cell(cell) or index in linked:
            continue
        meta = _chapyter(cell)
        if not isinstance(meta.get("generated_from"), str):
            continue  # from the chat: it has no prompt cell
        prompt = find_prompt_index(cells, index)
        if prompt >= 0:
            owner = find_generated_index(cells, prompt)
            add(
                index,
                soft,
                f"copy of a generated cell: its prompt (cell {prompt + 1}) is linked to "
                f"cell {owner + 1}, so this code runs a second time",
            )
        elif orphans:
            add(index, soft, "generated cell whose %%ai prompt is gone")

    found.sort(key=lambda item: item[0])
    return [finding for _, finding in found]


def _changed_message(prompt: Any, generated: Any, prompt_index: int) -> str:
    parsed = parse_prompt(_source(prompt))
    meta = _chapyter(generated)
    assert parsed is not None
    if meta.get("prompt_sha256") != request_sha256(parsed.request):
        return (
            f"prompt (cell {prompt_index + 1}) changed since this code was generated: "
            "run it again to regenerate"
        )
    return (
        f"prompt (cell {prompt_index + 1}) asks for model {parsed.model!r}, this code came "
        f"from {meta.get('model')!r}: run it again to regenerate"
    )


def read_notebook(path: str) -> Any:
    """A notebook as plain JSON, or through nbformat when it needs converting to v4.

    Plain JSON for v4 notebooks because importing nbformat costs seconds where jsonschema's
    format checkers are installed (rfc3987-syntax builds a grammar at import), and a
    pre-commit hook should not; the checker needs no validation, only cells and metadata.
    """
    import json

    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        if isinstance(nb, dict) and nb.get("nbformat") in (1, 2, 3):
            import nbformat

            return nbformat.read(path, as_version=4)
        raise ValueError("no list of cells")
    return nb


def check_paths(
    paths: Iterable[str], *, strict: bool = False, orphans: bool = False
) -> tuple[list[Finding], int]:
    """Check notebook files; returns the findings and how many notebooks were read."""
    findings: list[Finding] = []
    read = 0
    for path in paths:
        try:
            nb = read_notebook(path)
        except Exception as err:  # any unreadable file is one error line, not a traceback
            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            findings.append(Finding(path, "error", f"not a readable notebook: {reason}"))
            continue
        read += 1
        findings.extend(check_notebook(nb, path, strict=strict, orphans=orphans))
    return findings, read


def summary_line(findings: Sequence[Finding], notebooks: int) -> str:
    """The last line of the report."""
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors

    def count(n: int, word: str) -> str:
        return f"{n} {word}{'s' * (n != 1)}"

    if not findings:
        return f"chapyter-ext check: {count(notebooks, 'notebook')}, AI cells up to date."
    return (
        f"chapyter-ext check: {count(notebooks, 'notebook')}, "
        f"{count(errors, 'error')}, {count(warnings, 'warning')}."
    )
