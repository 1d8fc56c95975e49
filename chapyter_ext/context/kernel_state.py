"""What a live IPython kernel holds: the user's variables, recent cells and the last error.

IPython is never imported: the ``shell`` object is handed in. The last error is read from
``sys.last_exc`` and IPython's history, walking the traceback's frames without formatting them
(a ``RecursionError`` has thousands). chapyter-ext's own failures (``ChapyterError``, shown as
one line by ``%%ai``) are never the user's last error: they are skipped by class name and module,
since this package must not import the magics.
"""

from __future__ import annotations

import builtins
import re
import sys
import types
from collections.abc import Container, Iterable, Mapping

from ..redact import REDACTED, Redactor, is_secret_name, secret_values
from ..tracebacks import strip_ansi
from .assemble import Cell, assemble, live_facts, rank
from .fact_cache import module_aliases
from .relevance import Terms, request_terms
from .selection import used_names
from .summaries import completion_summary, default_chars, describe, summary_line
from .text import MISSING, safe_middle

# The builtins by name: ``getattr(builtins, name, None)`` raises (and catches) for most names.
_BUILTINS = vars(builtins)
# Names IPython puts in the user namespace for itself (the ``_``-prefixed ones are skipped anyway).
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
# Our own error (``chapyter_ext.magic.errors.ChapyterError``), matched without importing it.
_OWN_ERROR = "ChapyterError"


# Namespaces


def user_variables(user_ns: dict, hidden: Container[str] = ()) -> list[tuple[str, object]]:
    """The user's own names in ``user_ns``, most recently defined first.

    Skipped: names starting with ``_``, IPython's ``In``/``Out``/``exit``/``quit``/
    ``get_ipython``, modules, builtins under their own name, IPython's and ipykernel's helpers,
    and ``hidden`` names. When ``hidden`` is a mapping (IPython's ``shell.user_ns_hidden``), a
    hidden name the user has since rebound to another object counts as the user's, as ``%who``
    does. Order follows the namespace's insertion order, reversed.
    """
    hidden_values = hidden if isinstance(hidden, Mapping) else None
    out = []
    for name in reversed(list(user_ns)):
        if not isinstance(name, str) or name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        value = user_ns.get(name, MISSING)
        if value is MISSING:
            continue
        if hidden_values is not None:
            if hidden_values.get(name, MISSING) is value:
                continue
        elif name in hidden:
            continue
        if isinstance(value, types.ModuleType) or _BUILTINS.get(name, MISSING) is value:
            continue
        module = getattr(value, "__module__", None) if callable(value) else None
        if isinstance(module, str) and module.startswith(("IPython.", "ipykernel.")):
            continue
        out.append((name, value))
    return out


# What the chat's snapshot carries past its budget, for the server to choose from by relevance.
_WIRE_FACTOR = 4
_WIRE_MIN = 24_000
# Tables' facts may take this many times that; variables past this many are left out.
_WIRE_TABLES = 8
_WIRE_VARIABLES = 5000


def describe_variables(
    user_ns: dict, hidden: Container[str] = (), *, budget: int = 3000, secrets: Iterable[str] = ()
) -> list[dict]:
    """``[{"name", "type", "summary", ...}]`` for the user's variables, for the sidebar chat.

    Most recent first, JSON-able and redacted (values of secret-looking names are
    ``<redacted>``; see ``redact`` for the rest). ``summary`` is the summary without the type.
    Tables and containers also carry their facts (``head``, ``facts``: columns or keys with
    labels and notes, see :meth:`.facts.VarFacts.to_json`), which the server picks from by
    relevance to the message (``budget`` is the context's budget: the list carries several
    times that, so that what the message is about is among it). Summaries stop when the
    characters of names, types and summaries together reach ``4 × budget`` (at least 24,000),
    tables' facts at eight times that; past them a variable has its name and type only (an
    empty summary), up to 5,000 variables.
    The namespace's modules come last, as ``{"name": "np", "type": "module", "summary":
    "numpy"}``. Facts are cached between calls, as for ``kernel_context``.
    """
    variables = user_variables(user_ns, hidden)[:_WIRE_VARIABLES]
    r = Redactor([*secrets, *secret_values(variables)])
    limit = max(budget * _WIRE_FACTOR, _WIRE_MIN)
    out: list[dict] = []
    used = 0
    for (name, value), vf in zip(variables, live_facts(variables, r)):
        label = vf.type
        item: dict = {"name": name, "type": label, "summary": ""}
        room = limit - used - len(name) - len(label)
        if is_secret_name(name):
            item["summary"] = REDACTED
        elif vf.facts and vf.pending is None and used < limit * _WIRE_TABLES:
            # Tables and containers past the summaries' share: found by their columns too.
            item["summary"] = vf.head
            item.update(vf.to_json())
        elif room >= 16:
            item["summary"] = describe(value, min(default_chars(value), room), r)
        # Past both: the name and the type only, so that a request can still name it.
        out.append(item)
        used += len(name) + len(label) + len(item["summary"])
        used += sum(len(f[2]) + len(f[0]) + 8 * len(f[4]) for f in item.get("facts", ()))
    for alias, module in module_aliases(user_ns):
        out.append({"name": alias, "type": "module", "summary": module})
    return out


#: Names inline completion lists (the newest first).
COMPLETION_NAMES = 60


def completion_names(
    user_ns: dict, hidden: Container[str] = (), *, limit: int = COMPLETION_NAMES
) -> list[dict[str, str]]:
    """The user's names for inline completion: ``[{"name", "type", "summary"}]``, newest
    first, at most ``limit``. Run in the kernel as a silent user expression after each cell:
    the same names as the chat's (:func:`user_variables`: no IPython helpers, modules or hidden
    names), each with a short :func:`~.summaries.completion_summary`; a secret's is
    ``<redacted>``, and secret values are redacted from the others."""
    variables = user_variables(user_ns, hidden)[: max(0, limit)]
    r = Redactor(secret_values(variables))
    found: list[dict[str, str]] = []
    for name, value in variables:
        summary = REDACTED if is_secret_name(name) else r(completion_summary(value))
        found.append({"name": name, "type": type(value).__name__, "summary": summary})
    return found


# ---------------------------------------------------------------------------------------------
# IPython


def _running_count(shell) -> int | None:
    """Execution count of the cell running now, if any.

    IPython hands the running cell's ``ExecutionResult`` to the display hook for the duration of
    the cell (``run_cell`` sets ``displayhook.exec_result`` and clears it after).
    """
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else None


def _history(shell):
    hm = getattr(shell, "history_manager", None)
    ns = getattr(shell, "user_ns", None) or {}
    inputs = getattr(hm, "input_hist_raw", None)
    if inputs is None:
        inputs = ns.get("In") or []
    outputs = getattr(hm, "output_hist", None)
    if outputs is None:
        outputs = ns.get("Out") or {}
    exceptions = getattr(hm, "exceptions", None) or {}
    return inputs, outputs, exceptions


def _recent_cells(shell, n_cells: int, r: Redactor) -> list[Cell]:
    inputs, outputs, exceptions = _history(shell)
    current = _running_count(shell)
    cells: list[Cell] = []
    i = len(inputs) - 1
    stop = max(0, i - 4 * n_cells - 4)  # empty cells are skipped, but not without bound
    while i >= 1 and i > stop and len(cells) < n_cells:
        source = inputs[i]
        if i != current and isinstance(source, str) and source.strip():
            output = outputs.get(i, None) if hasattr(outputs, "get") else None
            error = exceptions.get(i)
            if _is_own_entry(error):
                error = None  # "%%ai" failed: the user's code did not
            cells.append(
                Cell(
                    source,
                    summary_line(output, 240, r) if output is not None else None,
                    f"In [{i}]",
                    f"{error.get('ename')}: {error.get('evalue')}"
                    if isinstance(error, dict)
                    else None,
                )
            )
        i -= 1
    cells.reverse()
    return cells


def _cell_frames(shell, exc: BaseException):
    """Where ``exc`` went through the user's cells.

    Returns (the cell that was running, the innermost cell frame as (count, line, source line),
    the innermost frame outside the cells as "path:line, in name"), each possibly None.
    """
    import linecache

    names = getattr(getattr(shell, "compile", None), "_filename_map", None) or {}
    if isinstance(exc, SyntaxError) and exc.filename in names:
        count = names[exc.filename]
        return count, (count, exc.lineno, (exc.text or "").strip() or None), None
    running = inner = None
    last = None
    tb = exc.__traceback__
    depth = 0
    # A RecursionError's traceback is thousands of frames: walk it without formatting any.
    while tb is not None and depth < 100_000:
        filename = tb.tb_frame.f_code.co_filename
        if filename in names:
            if running is None:
                running = names[filename]
            inner = (names[filename], tb.tb_lineno, filename)
        last = tb
        tb = tb.tb_next
        depth += 1
    cell = None
    if inner is not None:
        cell = (inner[0], inner[1], linecache.getline(inner[2], inner[1]).strip() or None)
    outside = None
    if last is not None and last.tb_frame.f_code.co_filename not in names:
        code = last.tb_frame.f_code
        path = code.co_filename.replace("\\", "/")
        if "site-packages/" in path:
            path = path.rsplit("site-packages/", 1)[1]
        elif "/" in path:
            path = "/".join(path.split("/")[-2:])
        outside = f"{path}:{last.tb_lineno}, in {code.co_name}"
    return running, cell, outside


def _format_exception(shell, exc: BaseException) -> tuple[int | None, str]:
    etype = type(exc)
    name = etype.__qualname__
    if etype.__module__ not in ("builtins", "__main__"):
        name = f"{etype.__module__}.{name}"
    try:
        message = str(exc)
    except Exception:  # an exception whose __str__ fails still has a type
        message = "<message unavailable>"
    lines = [f"{name}: {message[:2000]}" if message else name]
    running, cell, outside = _cell_frames(shell, exc)
    if cell is not None:
        count, lineno, line = cell
        where = f"In [{count}], line {lineno}"
        if running is not None and running != count:
            where += f" (called from In [{running}])"
        lines.append(f"  at {where}: {line}" if line else f"  at {where}")
    if outside:
        lines.append(f"  raised in {outside}")
    return running, "\n".join(lines)


def _format_stored(count: int, entry: dict) -> str:
    """An error from IPython's history (``history_manager.exceptions``), without the object."""
    text = f"{entry.get('ename')}: {entry.get('evalue')}"
    tb = entry.get("traceback") or []
    plain = strip_ansi("\n".join(t for t in tb if isinstance(t, str)))
    # IPython 9 prints the user's frame as "Cell In[7], line 3" then "----> 3 code".
    matches = list(re.finditer(rf"Cell In\[{count}\], line (\d+)\n(?:.*\n)*?-*> *\d+ (.*)", plain))
    if matches:
        m = matches[-1]
        text += f"\n  at In [{count}], line {m.group(1)}: {m.group(2).strip()}"
    return text


def _is_own_error(exc: object) -> bool:
    """A failure of chapyter-ext itself (a failed ``%%ai``), not of the user's code."""
    etype = type(exc)
    module = getattr(etype, "__module__", None) or ""
    return etype.__name__ == _OWN_ERROR and module.partition(".")[0] == "chapyter_ext"


def _is_own_entry(entry: object) -> bool:
    """An error IPython's history recorded for a failed ``%%ai`` (it keeps the class name only)."""
    return isinstance(entry, dict) and entry.get("ename") == _OWN_ERROR


def _last_error(shell) -> tuple[int | None, str] | None:
    exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    if _is_own_error(exc):
        exc = None  # the user's last error is the one before it, if IPython's history has it
    _, _, exceptions = _history(shell)
    stored = max(
        (k for k, e in exceptions.items() if isinstance(k, int) and not _is_own_entry(e)),
        default=None,
    )
    if isinstance(exc, BaseException):
        count, text = _format_exception(shell, exc)
        if stored is None or (count is not None and count >= stored):
            return count, text
    if stored is not None:
        entry = exceptions[stored]
        if isinstance(entry, dict):
            return stored, _format_stored(stored, entry)
    return None


def last_error_summary(shell) -> str | None:
    """The kernel's most recent error, or None: type, message, and the failing line.

    Read from ``sys.last_exc``/``sys.last_value`` (which IPython's ``showtraceback`` sets for
    every error it shows), with the user's cell and line found through the traceback frames whose
    file is one of IPython's cell files (``shell.compile._filename_map``); if IPython's history
    (``history_manager.exceptions``, IPython 9) records a later failing cell, that one is used.
    Redacted and clipped to 1,500 characters.
    """
    found = _last_error(shell)
    if found is None:
        return None
    r = Redactor(secret_values(user_variables(getattr(shell, "user_ns", {}) or {})))
    return safe_middle(found[1], 1500, r)


def kernel_context(
    shell,
    *,
    budget: int = 6000,
    n_cells: int = 5,
    secrets: Iterable[str] = (),
    request: str | None = None,
) -> str:
    """``build_context`` for a live IPython ``InteractiveShell``, chosen for ``request``.

    Variables come from ``shell.user_ns`` (hiding ``shell.user_ns_hidden``), ranked by
    relevance to ``request`` (:mod:`.selection`: the words of their names, columns, keys and
    labels against the request's, with a bonus for the names the running cell, the recent cells
    (newest first) and the last error use); without a request (and a running cell, whose text
    is the request of ``%%ai``), the names used in the running cell come first, then those of
    the recent cells, then the rest, each group most recently defined first. Recent cells are
    the last ``n_cells`` non-empty inputs of ``history_manager.input_hist_raw`` with their
    outputs and errors, skipping the cell running now. The last error is included only if it
    happened within the last ``max(n_cells, 1)`` cells (an old error is not what the user is
    asking about). The modules the namespace binds are listed in one line (``np = numpy``).
    ``secrets`` (e.g. the configured API key) are redacted on top of the usual. Each
    variable's facts are cached between calls (:data:`.fact_cache.CACHE`), so a warm call costs
    about the same whatever the data.
    """
    ns = getattr(shell, "user_ns", None) or {}
    variables = user_variables(ns, getattr(shell, "user_ns_hidden", ()) or ())
    r = Redactor([*secrets, *secret_values(variables)])
    cells = _recent_cells(shell, max(0, n_cells), r)

    # The variables the request itself names (``%%ai plot df``) matter most, then those of the
    # newest cells, then those the error names.
    sources = [cell.source for cell in reversed(cells)]
    weights = [1.0 / (2 + i) for i in range(len(sources))]
    running = _running_count(shell)
    inputs = _history(shell)[0]
    running_source = None
    if running is not None and 0 < running < len(inputs) and isinstance(inputs[running], str):
        running_source = inputs[running]
        sources.insert(0, running_source)
        weights.insert(0, 1.0)
    if request:
        sources.insert(0, request)
        weights.insert(0, 1.0)

    error = None
    found = _last_error(shell)
    if found is not None:
        count, text = found
        latest = _running_count(shell) or getattr(shell, "execution_count", None)
        if count is None or not isinstance(latest, int) or latest - count <= max(n_cells, 1):
            error = text
    if error:
        sources.append(error)
        weights.append(0.8)
    used = used_names(sources, weights)
    asked = request if request else running_source
    terms = request_terms(asked, error=error)
    if not asked:
        terms = Terms()
    ranked = rank(live_facts(variables, r), terms, used)
    return assemble(
        error=error,
        variables=ranked,
        cells=cells,
        budget=budget,
        r=r,
        terms=terms,
        aliases=module_aliases(ns),
    )
