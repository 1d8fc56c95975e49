"""Headless runs replay, they do not regenerate.

Two halves:

* Kernel side (:func:`identify_caller`): who sent the ``%%ai`` cell. A batch runner
  (``jupyter nbconvert --execute``, ``jupyter execute``, papermill, nbclient) runs a committed
  notebook whose generated cells are already there, so ``%%ai`` asks no model and says so in
  one line; the generated cell below then runs as the next cell, once. Interactive frontends
  (JupyterLab, Notebook 7, VS Code, consoles) and terminal IPython generate as always.
* Notebook side (:func:`regenerate_notebook`): the explicit, not reproducible opposite, a
  batch run in which every ``%%ai`` asks again and its answer replaces its generated cell,
  linked exactly as the JupyterLab frontend links it (``chapyter-ext regenerate``).

How a batch run is told apart, from the execute_request the kernel is answering
(``kernel.get_parent()``): nbclient, which every batch runner above uses, sends
``allow_stdin: false`` and no request metadata; JupyterLab and Notebook 7 send
``allow_stdin: true`` and the cell's ``cellId`` in the metadata; VS Code sends both too;
jupyter console, qtconsole and ``jupyter run`` send ``allow_stdin: true``. So: a request with
neither stdin nor a cell id comes from a batch runner. Nothing depends on execution counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..contract import (
    FRONTEND_MARKER,
    METADATA_KEY,
    RETRY_MARKER,
    find_generated_index,
    is_edited,
    link_generated,
    prompt_metadata,
    read_generation_payload,
)

if TYPE_CHECKING:
    from ..redact import Redactor

#: What a ``%%ai`` cell prints in a batch run, and in JupyterLab's Run All of an up-to-date
#: prompt, instead of asking the model: the one wording (the frontend asks the kernel for it).
REPLAY_LINE = (
    "↻ replayed: no model was asked; the saved code in the cell below runs as it is "
    "(Shift+Enter on this cell alone asks again)"
)


@dataclass(frozen=True)
class Retry:
    """The executor's request to correct generated code that raised (``RETRY_MARKER``)."""

    #: 1 for the first correction.
    attempt: int
    #: The code that raised.
    code: str
    #: Its error output: ``{"ename", "evalue", "traceback": [str]}``.
    error: dict


@dataclass(frozen=True)
class Caller:
    """Who sent the cell being run."""

    #: "terminal" (IPython without a kernel), "interactive" (a person at a frontend) or
    #: "batch" (a runner executing a saved notebook, with nobody to answer).
    kind: str
    #: chapyter-ext's JupyterLab executor sent it: it puts the code below and runs it.
    frontend_runs_code: bool = False
    #: That executor asks to correct code that raised, instead of answering from scratch.
    retry: Retry | None = None
    #: That executor replays an up-to-date prompt (Run All): print the replay line, ask no
    #: model; the cell gets an execution count like any cell that ran.
    replay: bool = False

    @property
    def is_batch(self) -> bool:
        return self.kind == "batch"

    def replays(self, batch_mode: str) -> bool:
        """Whether ``%%ai`` prints :data:`REPLAY_LINE` instead of asking the model."""
        return self.replay or (self.is_batch and batch_mode != "regenerate")


def identify_caller(shell: Any) -> Caller:
    """Tell a batch run from a person, from the request being answered (see module doc)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return Caller("terminal")
    request = _parent_request(shell, kernel)
    metadata = request.get("metadata") or {}
    content = request.get("content") or {}
    marker = metadata.get(FRONTEND_MARKER)
    if isinstance(marker, dict):
        return Caller(
            "interactive",
            frontend_runs_code=True,
            retry=_read_retry(metadata.get(RETRY_MARKER)),
            replay=marker.get("replay") is True,
        )
    if metadata.get("cellId") or content.get("allow_stdin"):
        return Caller("interactive")
    return Caller("batch")


def _read_retry(value: Any) -> Retry | None:
    # Sent only by our executor, next to FRONTEND_MARKER; anything malformed is ignored.
    if not isinstance(value, dict):
        return None
    attempt, code, error = value.get("attempt"), value.get("code"), value.get("error")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        return None
    if not isinstance(code, str) or not isinstance(error, dict):
        return None
    frames = error.get("traceback")
    return Retry(
        attempt,
        code,
        {
            "ename": str(error.get("ename") or "Error"),
            "evalue": str(error.get("evalue") or ""),
            "traceback": [f for f in frames if isinstance(f, str)]
            if isinstance(frames, list)
            else [],
        },
    )


def _parent_request(shell: Any, kernel: Any) -> dict:
    # ipykernel >= 6: the execute_request of the cell being run (context-aware with
    # subshells); the shell's parent_header is the same message in older versions.
    try:
        request = kernel.get_parent("shell")
    except Exception:
        request = getattr(shell, "parent_header", None)
    return request if isinstance(request, dict) else {}


# -- headless regeneration (``chapyter-ext regenerate``) -------------------------------------


class RegenerateError(Exception):
    """A regeneration that could not finish; the notebook file is left as it was."""


@dataclass
class RegenerateReport:
    """What a regeneration did, cell by cell (1-based positions in the result)."""

    path: str
    inserted: list[int] = field(default_factory=list)
    replaced: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    kept_edited: list[int] = field(default_factory=list)
    #: One line when outputs showed a configured secret, replaced before the file was written.
    redacted: str | None = None

    def lines(self) -> list[str]:
        out = [f"{self.path}:cell {n}: kept, edited by hand" for n in self.kept_edited]
        out.append(
            f"chapyter-ext regenerate: {self.path}: {len(self.replaced)} replaced, "
            f"{len(self.inserted)} inserted, {len(self.unchanged)} unchanged, "
            f"{len(self.kept_edited)} kept (edited by hand). Not reproducible: review the diff."
        )
        if self.redacted:
            out.append(f"chapyter-ext regenerate: {self.redacted}")
        return out


def apply_generation(
    cells: list,
    prompt_index: int,
    code: str,
    provenance: dict,
    *,
    new_cell: Callable[[str, dict], Any],
) -> tuple[int, str]:
    """Put generated code under its prompt as the frontend does (``upsertGenerated``).

    Replaces the linked generated cell's code and metadata, or inserts a new code cell directly
    below the prompt, and links the prompt to it. A cell edited by hand is kept (the frontend
    asks first; a batch run cannot); the same code again keeps its provenance (no diff).
    Returns the generated cell's index and what happened: "inserted", "replaced", "unchanged"
    or "kept-edited".
    """
    prompt = cells[prompt_index]
    metadata = link_generated(provenance, prompt["id"])
    index = find_generated_index(cells, prompt_index)
    if index < 0:
        index = prompt_index + 1
        cells.insert(index, new_cell(code, {METADATA_KEY: metadata}))
        outcome = "inserted"
    else:
        existing = cells[index]
        if is_edited(existing):
            recorded = existing["metadata"][METADATA_KEY]
            existing["metadata"][METADATA_KEY] = {**recorded, "edited": True}
            return index, "kept-edited"
        recorded = existing["metadata"].get(METADATA_KEY, {})
        same = ("generated_from", "prompt_sha256", "model", "code_sha256")
        if existing.get("source") == code and all(recorded.get(k) == metadata.get(k) for k in same):
            # The same answer again: its provenance stays, so the file does not change.
            outcome = "unchanged"
        else:
            outcome = "replaced"
            existing["source"] = code
            existing["metadata"][METADATA_KEY] = metadata
        existing["outputs"] = []
        existing["execution_count"] = None
    prompt.setdefault("metadata", {})[METADATA_KEY] = prompt_metadata(cells[index]["id"])
    return index, outcome


def regenerate_notebook(
    nb: Any,
    *,
    path: str = "<notebook>",
    cwd: str | None = None,
    timeout: float = 600.0,
    kernel_name: str | None = None,
    env: dict[str, str] | None = None,
    new_cell_id: Callable[[str], str] | None = None,
    on_generated: Callable[[Any, Any], None] | None = None,
) -> RegenerateReport:
    """Execute ``nb`` in place with every ``%%ai`` asking the model again.

    The kernel gets ``CHAPYTER_REGENERATE=1``; after each prompt cell, its answer goes into the
    notebook (:func:`apply_generation`) before nbclient reaches the next cell, so the new code
    is what runs. ``new_cell_id(prompt_id)`` names inserted cells (random ids otherwise);
    ``on_generated(generated_cell, prompt_cell)`` sees each answer before it runs.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    ensure_cell_ids(nb)
    report = RegenerateReport(path)

    def new_cell(code: str, metadata: dict) -> Any:
        cell = nbformat.v4.new_code_cell(source=code, metadata=metadata)
        if new_cell_id is not None:
            cell["id"] = new_cell_id(metadata[METADATA_KEY]["generated_from"])
        return cell

    def on_cell_executed(cell: Any, cell_index: int, execute_reply: dict) -> None:
        generation = read_generation_payload(execute_reply)
        if generation is None or cell is not client.nb.cells[cell_index]:
            return
        index, outcome = apply_generation(
            client.nb.cells, cell_index, generation.code, generation.metadata, new_cell=new_cell
        )
        {
            "inserted": report.inserted,
            "replaced": report.replaced,
            "unchanged": report.unchanged,
            "kept-edited": report.kept_edited,
        }[outcome].append(index + 1)
        if on_generated is not None:
            on_generated(client.nb.cells[index], cell)

    kernel_env = dict(os.environ if env is None else env)
    kernel_env["CHAPYTER_REGENERATE"] = "1"
    # No per-cell timing metadata: it would make every run a diff.
    options: dict[str, Any] = {
        "timeout": timeout,
        "on_cell_executed": on_cell_executed,
        "record_timing": False,
    }
    if cwd is not None:
        options["resources"] = {"metadata": {"path": cwd}}
    if kernel_name:
        options["kernel_name"] = kernel_name
    client = NotebookClient(nb, **options)
    try:
        client.execute(env=kernel_env)
    except CellExecutionError as err:
        first = str(err).strip().splitlines()
        raise RegenerateError(f"a cell failed: {first[-1] if first else err}") from None
    return report


def regenerate_file(
    path: str,
    output: str | None = None,
    *,
    redactor: Redactor,
    timeout: float = 600.0,
    kernel_name: str | None = None,
) -> RegenerateReport:
    """:func:`regenerate_notebook` on a file, written atomically to ``output`` (default: in
    place; see :mod:`chapyter_ext.atomic_write`), with ``redactor``'s secrets (the keys the kernel
    is configured with) replaced in its outputs."""
    import nbformat

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:
        raise RegenerateError(f"cannot read {path}: {err}") from None
    cwd = os.path.dirname(os.path.abspath(path))
    report = regenerate_notebook(nb, path=path, cwd=cwd, timeout=timeout, kernel_name=kernel_name)
    from ..atomic_write import write_notebook

    try:
        replaced = write_notebook(nb, output or path, redactor=redactor)
    except OSError as err:  # a symlinked target is refused, a full disk...
        raise RegenerateError(f"cannot write {output or path}: {err}") from None
    report.redacted = replaced.note(output or path) if replaced else None
    return report


def ensure_cell_ids(nb: Any) -> None:
    """Give every cell of ``nb`` an id (nbformat 4.5): links are by cell id, and JupyterLab 4
    upgrades a notebook the same way."""
    from nbformat.v4.nbbase import random_cell_id

    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) < (4, 5):
        nb["nbformat_minor"] = 5
    for cell in nb.get("cells", []):
        if not cell.get("id"):
            cell["id"] = random_cell_id()
