"""The chat's notebook context: a snapshot the browser takes, assembled here like ``%%ai``'s.

The browser only collects (``labextension/src/common/notebookSnapshot.ts``): the active cell and
its neighbours, the selected text, the last error shown in the outputs and the kernel's
variables, read through the notebook's own kernel connection with ``describe_variables``. The
server validates that snapshot (:meth:`NotebookSnapshot.parse`) and turns it into text with the
same assembler and the same budget (``Chapyter.context_budget``) as ``%%ai``
(:func:`chat_context`). The chip in the panel shows exactly that text and its summary.

Snapshot JSON (unknown keys are ignored; every size is bounded, longer text is cut)::

    {"path": str, "cell_count": int,
     "active": {"index": int, "type": str, "source": str, "prompt"?: int | null} | null,
     "above": [cell, ...], "below": [cell, ...], "selection": str,
     "last_error": {"cell_index": int, "cell_prompt"?: int | null, "ename": str, "evalue": str,
                    "traceback": [str]} | null,
     "variables": [{"name": str, "type": str, "summary": str,
                    "head"?, "facts"?, "noun"?, "total"?, "tail"?, "rest_kinds"?}] | null,
     "language": str}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..redact import Redactor
from ..tracebacks import error_line, strip_ansi
from .assemble import Cell, VariableSummary, as_facts, assemble, rank
from .cell_names import cell_name
from .facts import VarFacts
from .relevance import Terms, request_terms
from .selection import used_names

# Bounds of a snapshot: far above what the budget can use, far below a denial of service.
MAX_SOURCE = 100_000
MAX_NEIGHBOURS = 20
MAX_VARIABLES = 5000
MAX_TRACEBACK_LINES = 200
MAX_NAME = 500
MAX_SUMMARY = 10_000
MAX_PATH = 4096
MAX_INDEX = 10_000_000

# chapyter-ext's own failures (a failed ``%%ai``) are not the notebook's last error.
OWN_ERROR_NAMES = frozenset({"ChapyterError"})


@dataclass(frozen=True)
class CellSnapshot:
    """A cell: its position (from 0), its type ("code", "markdown", "raw"), its source, and
    the execution count JupyterLab shows beside it when no other cell shows the same."""

    index: int
    type: str
    source: str
    prompt: int | None = None

    @property
    def name(self) -> str:
        """The cell as JupyterLab shows it: "cell [4]", else "the 5th cell" (:mod:`.cell_names`)."""
        return cell_name(self.index + 1, self.prompt)


@dataclass(frozen=True)
class ErrorSnapshot:
    """The error shown by the cell run last: where, what, and its traceback lines."""

    cell_index: int
    ename: str
    evalue: str
    traceback: tuple[str, ...] = ()
    #: That cell's own execution count, as :attr:`CellSnapshot.prompt`.
    cell_prompt: int | None = None


@dataclass(frozen=True)
class NotebookSnapshot:
    """What the browser saw of a notebook and its kernel; see the module's docstring."""

    path: str
    cell_count: int = 0
    active: CellSnapshot | None = None
    above: tuple[CellSnapshot, ...] = ()
    below: tuple[CellSnapshot, ...] = ()
    selection: str = ""
    last_error: ErrorSnapshot | None = None
    #: None when the kernel could not tell (not Python, no chapyter_ext, busy).
    variables: tuple[VariableSummary, ...] | None = None
    language: str = ""

    @classmethod
    def parse(cls, obj: Any) -> NotebookSnapshot:
        """Validate a snapshot decoded from JSON; ``ValueError`` with one line when it is bad.

        Wrong types, negative positions and a missing ``path`` are errors; text longer than
        the bounds is cut and lists longer than them are shortened (what is cut could never
        fit in a context budget anyway). An error named ``ChapyterError`` is dropped.
        """
        if not isinstance(obj, dict):
            raise ValueError("the snapshot must be an object")
        path = _text(obj, "path", MAX_PATH, required=True)
        if not path.strip():
            raise ValueError("'path' must be the notebook's path")
        error = _error(obj.get("last_error"))
        if error is not None and error.ename in OWN_ERROR_NAMES:
            error = None
        variables = obj.get("variables")
        return cls(
            path=path,
            cell_count=_index(obj, "cell_count"),
            active=None if obj.get("active") is None else _cell(obj["active"], "active"),
            above=_cells(obj, "above"),
            below=_cells(obj, "below"),
            selection=_text(obj, "selection", MAX_SOURCE),
            last_error=error,
            variables=None if variables is None else _variables(variables),
            language=_text(obj, "language", 100),
        )


@dataclass(frozen=True)
class ChatContext:
    """The context a chat message sends: its text, the chip's summary, and its length."""

    text: str
    summary: str
    chars: int

    def to_json(self) -> dict[str, Any]:
        """The body of ``POST chapyter-ext/context``."""
        return {"text": self.text, "summary": self.summary, "chars": self.chars}


def chat_context(
    snapshot: NotebookSnapshot, *, budget: int, redactor: Redactor, request: str | None = None
) -> ChatContext:
    """The text a chat message sends for ``snapshot``: at most ``budget`` characters, redacted.

    Assembled like ``%%ai``'s context (:mod:`.assemble`): a line naming the notebook and the
    active cell, the selected text and the active cell, the last error (its message and the
    end of its traceback, colours removed), the imported modules (``np = numpy``), the
    kernel's variables as the kernel summarised them (most relevant to ``request``, the
    message, first, with their matching columns, keys and labels: :mod:`.selection`; the
    active cell's and the neighbours' code and the error count too), then the neighbouring
    cells. ``summary`` is the chip, e.g. "data.ipynb · 4th cell · 12 variables · last error".
    """
    active = snapshot.active
    header = f"Notebook: {_basename(snapshot.path)} ({_plural(snapshot.cell_count, 'cell')}"
    # Cells are named as JupyterLab shows them, as the UI and Explain's question name them.
    header += f"; the active cell is {active.name})" if active else ")"
    focus: list[tuple[str, str]] = []
    if active is not None:
        if snapshot.selection.strip():
            focus.append((f"Selected text (in {active.name})", snapshot.selection))
        focus.append((f"Active cell, {active.name} ({active.type})", active.source))
    cells = [
        Cell(
            cell.source,
            None,
            f"{_capital(cell.name)} ({cell.type}, {where} the active cell)",
        )
        for where, group in (("above", snapshot.above), ("below", snapshot.below))
        for cell in group
        if cell.source.strip()
    ]
    error = _error_text(snapshot.last_error)
    variables = [v for v in snapshot.variables or () if v.type != "module"]
    aliases = [(v.name, v.summary) for v in snapshot.variables or () if v.type == "module"]
    code = [text for _, text in focus] + [c.source for c in cells]
    terms = request_terms(request, error=error)
    if not request:
        terms = Terms()
    used = used_names(code[:1] + ([error] if error else []), [1.0, 0.8])
    text = assemble(
        error=error,
        variables=rank([as_facts(v) for v in variables], terms, used),
        cells=cells,
        budget=budget,
        r=redactor,
        header=header,
        focus=focus,
        cells_title="Neighbouring cells:",
        terms=terms,
        aliases=aliases,
    )
    return ChatContext(text=text, summary=_summary(snapshot), chars=len(text))


def _summary(snapshot: NotebookSnapshot) -> str:
    parts = [_basename(snapshot.path)]
    if snapshot.active is not None:
        # As JupyterLab shows it: "cell [15]", else "4th cell".
        parts.append(snapshot.active.name.removeprefix("the "))
    if snapshot.selection.strip():
        parts.append("selection")
    if snapshot.variables is not None:
        count = sum(1 for v in snapshot.variables if v.type != "module")
        parts.append(_plural(count, "variable"))
    if snapshot.last_error is not None:
        parts.append("last error")
    return " · ".join(parts)


def _error_text(error: ErrorSnapshot | None) -> str | None:
    if error is None:
        return None
    head = error_line({"ename": error.ename, "evalue": error.evalue})
    head += f" ({cell_name(error.cell_index + 1, error.cell_prompt)})"
    # The whole traceback as the browser sent it (at most MAX_TRACEBACK_LINES): the assembler
    # keeps its start and its end, the message and where it was raised.
    trace = strip_ansi("\n".join(error.traceback)).strip()
    return f"{head}\n{trace}" if trace else head


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or path


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


# ---------------------------------------------------------------------------------------------
# Validation


def _text(obj: dict, key: str, limit: int, *, required: bool = False, where: str = "") -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"'{where}{key}' must be a string")
    return value[:limit]


def _index(obj: dict, key: str, where: str = "") -> int:
    value = obj.get(key, 0)
    # JSON has no int type of its own: 3.0 is a position, 3.5 and true are not.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INDEX:
        raise ValueError(f"'{where}{key}' must be a whole number from 0 to {MAX_INDEX}")
    return value


def _prompt(obj: dict, key: str, where: str) -> int | None:
    # Optional (older browsers send none): null or absent is "not its own count".
    return None if obj.get(key) is None else _index(obj, key, where)


def _cell(value: Any, where: str) -> CellSnapshot:
    if not isinstance(value, dict):
        raise ValueError(f"'{where}' must be a cell object")
    prefix = f"{where}."
    return CellSnapshot(
        index=_index(value, "index", prefix),
        type=_text(value, "type", 20, where=prefix) or "code",
        source=_text(value, "source", MAX_SOURCE, where=prefix),
        prompt=_prompt(value, "prompt", prefix),
    )


def _cells(obj: dict, key: str) -> tuple[CellSnapshot, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"'{key}' must be a list of cells")
    # The nearest neighbours are kept: the last ones above, the first ones below.
    kept = value[-MAX_NEIGHBOURS:] if key == "above" else value[:MAX_NEIGHBOURS]
    return tuple(_cell(cell, f"{key}[]") for cell in kept)


def _error(value: Any) -> ErrorSnapshot | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("'last_error' must be an object or null")
    trace = value.get("traceback")
    if trace is None:
        trace = []
    if not isinstance(trace, list) or not all(isinstance(t, str) for t in trace):
        raise ValueError("'last_error.traceback' must be a list of strings")
    # The end of a traceback is where the news is.
    lines = tuple(t[-MAX_SUMMARY:] for t in trace[-MAX_TRACEBACK_LINES:])
    return ErrorSnapshot(
        cell_index=_index(value, "cell_index", "last_error."),
        ename=_text(value, "ename", MAX_NAME, where="last_error.") or "Error",
        evalue=_text(value, "evalue", MAX_SUMMARY, where="last_error."),
        traceback=lines,
        cell_prompt=_prompt(value, "cell_prompt", "last_error."),
    )


def _variables(value: Any) -> tuple[VariableSummary, ...]:
    if not isinstance(value, list):
        raise ValueError("'variables' must be a list or null")
    out = []
    for item in value[:MAX_VARIABLES]:
        if not isinstance(item, dict):
            raise ValueError("'variables[]' must be objects with name, type and summary")
        name = _text(item, "name", MAX_NAME, required=True, where="variables[].")
        kind = _text(item, "type", MAX_NAME, where="variables[].")
        summary = _text(item, "summary", MAX_SUMMARY, where="variables[].")
        # The facts (columns, keys, labels) are optional: anything malformed is left out.
        detail = VarFacts.from_json(name, kind, summary, item) if "facts" in item else None
        out.append(VariableSummary(name=name, type=kind, summary=summary, detail=detail))
    return tuple(out)


def user_functions(context: Any) -> frozenset[str]:
    """The functions and classes a snapshot's kernel holds that the user's own cells defined
    (module ``__main__``, not imported): a cell the user ran made them, so the run policy lets
    model code call them unasked. Not a snapshot, or no variables: none."""
    if not isinstance(context, NotebookSnapshot) or context.variables is None:
        return frozenset()
    return frozenset(
        v.name
        for v in context.variables
        if v.type in ("function", "class") and not v.summary.endswith("(imported)")
    )


def snapshot_modules(context: Any) -> dict[str, str]:
    """The modules a snapshot's kernel holds under a name (``np`` -> ``"module:numpy"``), for
    the code analysis: an attribute set on one is a change of the session. Not a snapshot, or
    no variables: none."""
    if not isinstance(context, NotebookSnapshot) or context.variables is None:
        return {}
    return {
        v.name: f"module:{v.summary.split()[0]}"
        for v in context.variables
        if v.type == "module" and v.summary.strip()
    }
