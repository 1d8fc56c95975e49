"""Figure digests, built IN THE KERNEL from matplotlib's Figure objects.

A model that cannot see images still learns what a step plotted: titles, axis labels and
limits, and each series' label and size, with empty and all-NaN series flagged (the classic
silent failure: a plot of nothing).

Capture: :func:`install` (run once per kernel, e.g. by a silent execute of
:data:`INSTALL_CODE`) watches every matplotlib Figure IPython displays (``plt.show()``,
``display(fig)``: a display formatter that formats nothing) and puts a ``post_execute`` callback
FIRST in IPython's list, ahead of matplotlib-inline's ``flush_figures``, which draws and closes
the figures still open when the cell ends. A ``pre_run_cell`` callback (never fired by silent
requests) forgets what an earlier cell showed. :func:`take` returns them (and forgets them):
drivers read it with a ``user_expressions`` entry (:data:`TAKE_EXPRESSION`) of the same
``execute_request`` that runs the step; the value comes back as ``application/json`` (a list of
digests; ``text/plain`` holds its Python repr). ipykernel evaluates no user expression after a
cell that raised, so a failed step has no digests (its error matters more); the next cell
starts empty, so they never leak into a later step.

This module never imports matplotlib: until the user's code has, there is nothing to digest.
Every value is JSON-safe (NaN and infinities become None).
"""

from __future__ import annotations

import math
import sys
from typing import Any

#: Run once per kernel, silently, before the first step.
INSTALL_CODE = (
    "__import__('chapyter_ext.context.figures', fromlist=['install']).install(get_ipython())"
)
#: The ``user_expressions`` entry that reads a step's digests.
TAKE_EXPRESSION = "__import__('chapyter_ext.context.figures', fromlist=['take']).take()"

MAX_FIGURES = 8
MAX_AXES = 12
MAX_SERIES = 16
_TEXT = 200

_COLLECTION_KINDS = {
    "PolyCollection": "area",
    "FillBetweenPolyCollection": "area",
    "LineCollection": "lines",
}

# Digests of the figures the running cell showed, by figure (a figure shown twice counts once).
_seen: dict[int, dict] = {}
_WATCH_MIME = "application/x-chapyter-ext-figure-watch"


class Digests(list):
    """A list of figure digests that IPython shows as ``application/json``."""

    def _repr_json_(self) -> list:
        return list(self)


def install(shell: Any) -> None:
    """Digest every figure a cell shows: when it is displayed (``plt.show()``, ``display(fig)``)
    and, for figures still open at the end, after the cell, before matplotlib-inline closes
    them. Idempotent."""
    callbacks = shell.events.callbacks
    if _capture not in callbacks["post_execute"]:
        callbacks["post_execute"].insert(0, _capture)
    # pre_run_cell fires for cells a person or the agent runs, never for silent requests
    # (a take() or an install): each step starts with nothing captured.
    if _forget not in callbacks["pre_run_cell"]:
        shell.events.register("pre_run_cell", _forget)
    formatters = shell.display_formatter.formatters
    if _WATCH_MIME not in formatters:
        formatters[_WATCH_MIME] = _watcher()


def take() -> Digests:
    """The digests of the figures the last cell showed, forgotten once taken."""
    out = Digests(_seen.values())
    _seen.clear()
    return out


def _forget(info: Any = None) -> None:
    _seen.clear()


def _remember(fig: Any) -> None:
    # Never disturb the user's cell: a digest that fails is just missing.
    if len(_seen) >= MAX_FIGURES and id(fig) not in _seen:
        return
    try:
        _seen[id(fig)] = digest(fig)
    except Exception:
        return


def _capture() -> None:
    # Figures still open when the cell ends (the inline backend draws and closes them next).
    # post_execute also fires for silent requests, after which no figure is open.
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return
    try:
        managers = helpers.Gcf.get_all_fig_managers()[:MAX_FIGURES]
    except Exception:
        return
    for manager in managers:
        _remember(manager.canvas.figure)


def _on_display(fig: Any) -> None:
    """Called by IPython's display machinery for every matplotlib Figure shown; adds nothing
    to the output (returns None), only remembers the figure's digest."""
    _remember(fig)


def _is_figure(obj: Any) -> bool:
    # By name: matplotlib is not imported here, and may never be.
    return any(
        c.__name__ == "Figure" and c.__module__ == "matplotlib.figure"
        for c in getattr(type(obj), "__mro__", ())
    )


def _watcher() -> Any:
    from IPython.core.formatters import BaseFormatter

    class FigureWatcher(BaseFormatter):
        """A display formatter that formats nothing: it sees matplotlib Figures go by.

        It looks at every object itself instead of registering a printer for ``Figure``:
        IPython's ``select_figure_formats`` (run when pyplot first loads the inline backend,
        often in the very step being digested) pops every formatter's ``Figure`` printer, ours
        too, so a registered printer would miss each ``plt.show()`` after it.
        """

        format_type = _WATCH_MIME
        print_method = "_chapyter_ext_never_"

        def __call__(self, obj: Any) -> None:
            if _is_figure(obj):
                _on_display(obj)
            return None

    return FigureWatcher()


def _str(value: Any) -> str | None:
    text = value.get_text() if hasattr(value, "get_text") else value
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip()[:_TEXT]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _label(artist: Any) -> str | None:
    label = _str(artist.get_label()) if hasattr(artist, "get_label") else None
    # matplotlib names unlabelled artists "_child0", "_nolegend_"...
    return None if label is None or label.startswith("_") else label


def _values(data: Any) -> tuple[int, int]:
    """(number of points, how many are NaN or masked); (n, 0) for non-numeric data."""
    numpy = sys.modules.get("numpy")
    try:
        n = len(data)
    except TypeError:
        return 0, 0
    if numpy is None or n == 0:
        return n, 0
    try:
        array = numpy.ma.filled(numpy.ma.asarray(data, dtype=float), numpy.nan)
    except (TypeError, ValueError):
        return n, 0  # dates, categories: counted, not checked
    return n, int(numpy.isnan(array).sum())


def _series(kind: str, label: str | None, data: Any) -> dict:
    points, nan = _values(data)
    entry: dict[str, Any] = {"kind": kind, "label": label, "points": points}
    if points == 0:
        entry["empty"] = True
    elif nan == points:
        entry["all_nan"] = True
    elif nan:
        entry["some_nan"] = nan
    return entry


def _collection(coll: Any) -> dict | None:
    name = type(coll).__name__
    if name == "PathCollection":
        offsets = coll.get_offsets()
        ys = offsets[:, 1] if getattr(offsets, "ndim", 0) == 2 else offsets
        return _series("scatter", _label(coll), ys)
    if name == "QuadMesh":
        return _series(
            "mesh", _label(coll), coll.get_array() if coll.get_array() is not None else []
        )
    kinds = {
        "PolyCollection": "area",
        "FillBetweenPolyCollection": "area",
        "LineCollection": "lines",
    }
    if name in kinds:
        return _series(kinds[name], _label(coll), coll.get_paths())
    return None


def _axes(ax: Any) -> dict:
    series: list[dict] = []
    for line in ax.get_lines():
        series.append(_series("line", _label(line), line.get_ydata()))
    for container in ax.containers:
        if type(container).__name__ == "BarContainer":
            values = getattr(container, "datavalues", None)
            if values is None:
                values = [p.get_height() for p in container.patches]
            series.append(_series("bars", _label(container), values))
    for coll in ax.collections:
        entry = _collection(coll)
        if entry is not None:
            series.append(entry)
    for image in ax.images:
        shape = getattr(image.get_array(), "shape", ())
        series.append({"kind": "image", "label": _label(image), "points": int(math.prod(shape))})
    out: dict[str, Any] = {
        "title": _str(ax.get_title()),
        "xlabel": _str(ax.get_xlabel()),
        "ylabel": _str(ax.get_ylabel()),
        "xlim": [_number(v) for v in ax.get_xlim()],
        "ylim": [_number(v) for v in ax.get_ylim()],
        "series": series[:MAX_SERIES],
    }
    for axis in ("x", "y"):
        scale = getattr(ax, f"get_{axis}scale")()
        if scale != "linear":
            out[f"{axis}scale"] = scale
    if len(series) > MAX_SERIES:
        out["more_series"] = len(series) - MAX_SERIES
    legend = ax.get_legend()
    if legend is not None:
        out["legend"] = [t for t in (_str(x) for x in legend.get_texts()) if t]
    return out


def digest(fig: Any) -> dict:
    """What ``fig`` (a matplotlib Figure) shows: its suptitle and, per visible axes, title,
    labels, limits, scales, legend and series (lines, bars, scatter, areas, images)."""
    axes = [ax for ax in fig.axes if ax.get_visible()]
    return {
        "suptitle": _str(getattr(fig, "_suptitle", None)),
        "axes": [_axes(ax) for ax in axes[:MAX_AXES]],
    }
