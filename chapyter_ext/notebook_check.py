"""``chapyter-ext check``: are the AI cells of a notebook in step with their prompts, and does
the notebook hold a secret?

Pure logic over notebooks as nbformat defines them (no kernel, no network), so it runs as a
pre-commit hook in a fraction of a second. The link rules are the notebook contract's
(``contract/``, the same as the JupyterLab frontend's ``contract/``, tested against shared
vectors): a notebook the checker calls up to date is one whose prompts JupyterLab's Run All
replays. Secrets are the redactor's (:func:`~chapyter_ext.redact.find_secrets`: key shapes,
key-like values under secret names), looked for where a committed notebook shows them: every
textual output, attachments and sources; a report names the kind and length, never the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .contract import (
    METADATA_KEY,
    NOTEBOOK_ID_KEY,
    STORED_CHAT_KEY,
    cell_source,
    chapyter_metadata,
    failed_check,
    find_generated_index,
    find_prompt_index,
    has_syntax_error,
    is_edited,
    is_generated_cell,
    is_notebook_id,
    is_prompt_cell,
    is_up_to_date,
    last_change,
    parse_prompt,
    request_sha256,
    validate_stored_chat,
)
from .notebook_numbers import number_drift
from .redact import find_secrets
from .tracebacks import strip_ansi

__all__ = [
    "Finding",
    "check_notebook",
    "check_paths",
    "check_secrets",
    "read_notebook",
    "summary_line",
]


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
    nb: Any,
    path: str = "<notebook>",
    *,
    strict: bool = False,
    orphans: bool = False,
    secrets: bool = True,
    links: bool = True,
) -> list[Finding]:
    """Every problem of one notebook, in cell order: its AI cells' (``links``) and, with
    ``secrets``, the secrets it holds (:func:`check_secrets`).

    Errors: a prompt whose ``%%ai`` line cannot be read; a prompt with no generated cell; a
    generated cell whose prompt changed (another request, or another model named on the magic
    line); a generated cell holding code that failed the syntax check when generated and was
    not fixed by hand since (a batch run would run it and fail). Warnings (errors when
    ``strict``): a generated cell edited by hand; a second copy of a prompt's generated cell; with
    ``orphans``, a generated cell whose prompt is gone; an agent's answer whose numbers,
    found in the outputs above it when it was written, are found there no more
    (:mod:`.notebook_numbers`). A change accepted through Fix, Edit with
    AI or the ``%%ai`` retry (``contract.accepted_change``) keeps the cell linked and up to date
    and is not an edit by hand. The notebook's own metadata comes first: a chat saved in it that
    does not follow the schema is an error, a malformed ``notebook_id`` a warning.
    """
    found = _link_findings(nb, path, strict, orphans) if links else []
    if links:
        soft = "error" if strict else "warning"
        for index, message in number_drift(nb):
            cell_id = nb["cells"][index].get("id")
            found.append((index, Finding(path, soft, message, index + 1, cell_id)))
    if secrets:
        found += [(f.cell - 1 if f.cell else -1, f) for f in check_secrets(nb, path)]
    found.sort(key=lambda item: item[0])  # stable: a cell's link findings first
    return [finding for _, finding in found]


def _link_findings(nb: Any, path: str, strict: bool, orphans: bool) -> list[tuple[int, Finding]]:
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
        parsed = parse_prompt(cell_source(cell))
        if parsed is not None and parsed.error is not None:
            add(index, "error", parsed.error)
        generated = find_generated_index(cells, index)
        if generated < 0:
            add(index, "error", "%%ai prompt without a generated cell: run it to generate one")
            continue
        linked[generated] = index
        if not is_up_to_date(cell, cells[generated]):
            add(generated, "error", _changed_message(cell, cells[generated], index))
        elif has_syntax_error(cells[generated]):
            reason = failed_check(chapyter_metadata(cells[generated]))
            add(
                generated,
                "error",
                f"code from cell {index + 1} failed the syntax check when generated ({reason}): "
                "fix it by hand or run the prompt again",
            )
        elif is_edited(cells[generated]):
            add(generated, soft, _edited_message(cells[generated], index))

    for index, cell in enumerate(cells):
        if not is_generated_cell(cell) or index in linked:
            continue
        meta = chapyter_metadata(cell)
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

    return [(-1, finding) for finding in _notebook_findings(nb, path, soft)] + found


#: Problems of a stored chat reported one by one; the rest are counted.
MAX_CHAT_PROBLEMS = 3


def _notebook_findings(nb: Any, path: str, soft: str) -> list[Finding]:
    """What is wrong with the notebook's own ``chapyter`` metadata: its chat id, and the chat
    saved in it (``Chapyter.save_chat_in_notebook``), checked against the contract's schema."""
    meta = (nb.get("metadata") or {}).get(METADATA_KEY)
    if not isinstance(meta, dict):
        return []
    findings = []
    if NOTEBOOK_ID_KEY in meta and not is_notebook_id(meta[NOTEBOOK_ID_KEY]):
        findings.append(
            Finding(
                path,
                soft,
                "notebook metadata chapyter.notebook_id is not 32 to 64 lower-case hex digits: "
                "the chat cannot find this notebook after a move",
            )
        )
    if STORED_CHAT_KEY in meta:
        problems = validate_stored_chat(meta[STORED_CHAT_KEY])
        for problem in problems[:MAX_CHAT_PROBLEMS]:
            findings.append(
                Finding(path, "error", f"chat saved in the notebook metadata: {problem}")
            )
        if len(problems) > MAX_CHAT_PROBLEMS:
            findings.append(
                Finding(
                    path,
                    "error",
                    f"chat saved in the notebook metadata: "
                    f"{len(problems) - MAX_CHAT_PROBLEMS} more problems",
                )
            )
    return findings


def _edited_message(generated: Any, prompt_index: int) -> str:
    # An accepted fix, edit or retry rewrote code_sha256, so only edits made after it count.
    change = last_change(chapyter_metadata(generated))
    since = (
        f"its accepted {change.get('kind')} (generated from cell {prompt_index + 1})"
        if change is not None
        else f"it was generated from cell {prompt_index + 1}"
    )
    return f"code edited by hand since {since} (regenerating would replace the edits)"


def _changed_message(prompt: Any, generated: Any, prompt_index: int) -> str:
    parsed = parse_prompt(cell_source(prompt))
    meta = chapyter_metadata(generated)
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
    paths: Iterable[str],
    *,
    strict: bool = False,
    orphans: bool = False,
    secrets: bool = True,
    links: bool = True,
) -> tuple[list[Finding], int]:
    """Check notebook files (see :func:`check_notebook`); returns the findings and how many
    notebooks were read."""
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
        findings.extend(
            check_notebook(nb, path, strict=strict, orphans=orphans, secrets=secrets, links=links)
        )
    return findings, read


def summary_line(
    findings: Sequence[Finding], notebooks: int, *, secrets: bool = True, links: bool = True
) -> str:
    """The last line of the report (``secrets``, ``links``: what was checked)."""
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors

    def count(n: int, word: str) -> str:
        return f"{n} {word}{'s' * (n != 1)}"

    if not findings:
        checked = ["AI cells up to date"] * links + ["no secrets found"] * secrets
        return f"chapyter-ext check: {count(notebooks, 'notebook')}, {', '.join(checked)}."
    return (
        f"chapyter-ext check: {count(notebooks, 'notebook')}, "
        f"{count(errors, 'error')}, {count(warnings, 'warning')}."
    )


# -- secrets a notebook holds ------------------------------------------------------------------

#: Secrets reported one by one in a cell; the rest are counted.
MAX_SECRETS_PER_CELL = 3
#: Output values nbformat stores as text (the rest, images, PDFs, audio, are base64: a secret
#: shape found in them would be chance).
_TEXT_MIME_ENDS = ("json", "+xml", "javascript", "latex", "yaml")
#: An image inlined in HTML or Markdown (``data:image/png;base64,…``): base64, not a secret.
_DATA_URI = re.compile(r"data:[\w.+/-]*;base64,[A-Za-z0-9+/=\s]*")
_ADVICE = {
    "source": "read it from the environment instead",
    "output": "clear the output",
    "attachment": "remove the attachment",
}


def check_secrets(nb: Any, path: str = "<notebook>") -> list[Finding]:
    """Secrets a notebook holds, as errors in cell order: in every output a reader sees (a
    stream's text, every textual value of a result or display, an error's name, value and
    traceback), in a cell's attachments and in its source. Each distinct secret once per cell,
    named by where it is, its kind and its length (``output 2 (stream) holds a secret (GitHub
    token: ghp_…(40 chars))``), never its value."""
    findings: list[Finding] = []
    for index, cell in enumerate(nb.get("cells") or []):
        if not isinstance(cell, dict):
            continue
        seen: set[str] = set()
        found: list[str] = []
        for where, text in _cell_texts(cell):
            for secret in find_secrets(text):
                value = text[secret.start : secret.end]
                if value not in seen:
                    seen.add(value)
                    advice = _ADVICE[where.split(" ", 1)[0]]
                    found.append(
                        f"{where} holds a secret ({secret.kind}: {secret.shown}): {advice}"
                    )
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        for message in found[:MAX_SECRETS_PER_CELL]:
            findings.append(Finding(path, "error", message, index + 1, cell_id))
        if len(found) > MAX_SECRETS_PER_CELL:
            more = f"{len(found) - MAX_SECRETS_PER_CELL} more secrets in this cell"
            findings.append(Finding(path, "error", more, index + 1, cell_id))
    return findings


def _cell_texts(cell: dict) -> Iterator[tuple[str, str]]:
    """Where a cell's text is and the text, as a reader of the file sees it."""
    yield "source", _joined(cell.get("source"))
    attachments = cell.get("attachments")
    for name, bundle in attachments.items() if isinstance(attachments, dict) else ():
        for mime, value in bundle.items() if isinstance(bundle, dict) else ():
            if _text_mime(mime):
                yield f"attachment {name} ({mime})", _value_text(value)
    outputs = cell.get("outputs")
    for n, output in enumerate(outputs if isinstance(outputs, list) else (), 1):
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "stream":
            yield f"output {n} ({output.get('name') or 'stream'})", _joined(output.get("text"))
        elif kind == "error":
            parts = [output.get("ename"), output.get("evalue"), *(output.get("traceback") or [])]
            yield (
                f"output {n} (error)",
                strip_ansi("\n".join(p for p in parts if isinstance(p, str))),
            )
        elif isinstance(output.get("data"), dict):
            for mime, value in output["data"].items():
                if _text_mime(mime):
                    yield f"output {n} ({mime})", _value_text(value)


def _text_mime(mime: Any) -> bool:
    return isinstance(mime, str) and (mime.startswith("text/") or mime.endswith(_TEXT_MIME_ENDS))


def _joined(value: Any) -> str:
    """nbformat's multi-line text (a string, or a list of strings that a secret may straddle)."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _value_text(value: Any) -> str:
    """An output's value as text: multi-line text joined, a JSON value (``{"token": "…"}``) as
    JSON; inlined images left out."""
    text = _joined(value)
    if not text and value is not None and not isinstance(value, str):
        # Read as shown: a key split by an escaped newline, a quoted value, are whole again.
        text = json.dumps(value, ensure_ascii=False).replace("\\n", "\n").replace('\\"', '"')
    return _DATA_URI.sub("data:", text) if "base64," in text else text
