"""What the model sees of a step that ran: its outputs as text within a budget, and its figures.

:func:`observe` turns a :class:`~chapyter_ext.agent.results.StepResult` into OpenAI content parts:
one text part (stdout and stderr, the ``text/plain`` of results and displays, the error's name,
message and only the traceback frames of the user's own code, ANSI codes stripped, redacted, trimmed
to the budget), then, when the model accepts images, one image part per figure; otherwise the
figures' text digests (built in the kernel by :mod:`chapyter_ext.context.figures`, redacted here
like the outputs: both drivers' results pass this one place) are in the text. :func:`outcome` is the
one line the chat shows for the step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..redact import Redactor
from ..tracebacks import error_line, error_text, multiline_text, strip_ansi

if TYPE_CHECKING:
    from .results import StepResult

#: At most this many figures are sent as images for one step.
MAX_IMAGES = 4
_OUTCOME_CHARS = 160


def _carriage_returns(text: str) -> str:
    """What a terminal shows of progress bars: of each line, what follows its last ``\\r``."""
    if "\r" not in text:
        return text
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.replace("\r\n", "\n").split("\n"))


def _figure_line(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.4g}"
    return "?" if value is None else repr(value) if isinstance(value, str) else str(value)


def describe_figure(digest: dict, number: int) -> str:
    """A figure digest (:func:`chapyter_ext.context.figures.digest`) as a few lines of text."""
    title = digest.get("suptitle")
    axes = [a for a in digest.get("axes") or [] if isinstance(a, dict)]
    head = f"Figure {number}" + (f" {title!r}" if title else "")
    lines = [f"{head}: {len(axes)} axes" if len(axes) != 1 else head]
    for i, ax in enumerate(axes, 1):
        bits = []
        if ax.get("title"):
            bits.append(f"title {ax['title']!r}")
        for axis in ("x", "y"):
            label, lim = ax.get(f"{axis}label"), ax.get(f"{axis}lim")
            part = f"{axis} {label!r}" if label else f"{axis} (no label)"
            if isinstance(lim, list) and len(lim) == 2:
                part += f" from {_figure_line(lim[0])} to {_figure_line(lim[1])}"
            if ax.get(f"{axis}scale") not in (None, "linear"):
                part += f" ({ax[f'{axis}scale']} scale)"
            bits.append(part)
        if ax.get("legend"):
            bits.append("legend: " + ", ".join(str(x) for x in ax["legend"]))
        prefix = f"  axes {i}: " if len(axes) > 1 else "  "
        lines.append(prefix + "; ".join(bits))
        for s in ax.get("series") or []:
            label = f" {s['label']!r}" if s.get("label") else ""
            flag = " EMPTY" if s.get("empty") else " ALL NaN" if s.get("all_nan") else ""
            if s.get("some_nan") and not flag:
                flag = f" ({s['some_nan']} NaN)"
            lines.append(
                f"    {s.get('kind', 'series')}{label}: {s.get('points', '?')} points{flag}"
            )
        if ax.get("more_series"):
            lines.append(f"    … {ax['more_series']} more series")
    return "\n".join(lines)


def _images(result: StepResult) -> list[str]:
    if result.images:
        return result.images
    return [
        multiline_text(o["data"]["image/png"]).replace("\n", "")
        for o in result.outputs
        if o.get("output_type") in ("display_data", "execute_result")
        and isinstance(o.get("data"), dict)
        and "image/png" in o["data"]
    ]


def _sections(result: StepResult, redact: Redactor, room: int) -> list[str]:
    """Each output as text, clipped before redaction to what could ever be shown."""
    out: list[str] = []
    last_stream: str | None = None
    for output in result.outputs:
        kind = output.get("output_type")
        if kind == "stream":
            name = output.get("name", "stdout")
            text = _carriage_returns(strip_ansi(multiline_text(output.get("text"))))
            if last_stream == name and out:
                out[-1] += text
            else:
                out.append(f"[{name}]\n{text}" if name == "stderr" else text)
            last_stream = name
            continue
        last_stream = None
        if kind in ("execute_result", "display_data", "update_display_data"):
            data = output.get("data")
            data = data if isinstance(data, dict) else {}
            plain = strip_ansi(multiline_text(data.get("text/plain")))
            if "image/png" in data or "image/svg+xml" in data:
                continue  # a figure: an image part or its digest, below
            if plain:
                count = output.get("execution_count")
                out.append(f"Out[{count}]:\n{plain}" if kind == "execute_result" else plain)
        elif kind == "error":
            out.append(error_text(output))
    clipped = []
    for text in out:
        text = text.rstrip("\n")
        if len(text) > room:
            text = text[: room // 2] + "\n" + text[-room // 2 :]
        clipped.append(redact(text))
    return clipped


def _trim(text: str, budget: int) -> str:
    """``text`` within ``budget`` characters: its start and its end (errors come last)."""
    if len(text) <= budget:
        return text
    marker = f"\n… [{len(text) - budget} characters cut] …\n"
    keep = max(0, budget - len(marker))
    head = keep * 2 // 5
    return text[:head] + marker + text[len(text) - (keep - head) :]


def observe(
    result: StepResult, *, budget: int = 4000, images: bool, redactor: Redactor | None = None
) -> list[dict]:
    """The OpenAI content parts for ``result``: a text part, then image parts when ``images``."""
    redact = redactor if redactor is not None else Redactor()
    if result.error:
        text = f"The code could not be run: {redact(result.error)}"
        return [{"type": "text", "text": _trim(text, budget)}]
    sections = _sections(result, redact, budget + redact.margin)
    pngs = _images(result)[:MAX_IMAGES] if images else []
    if pngs:
        n = len(pngs)
        sections.append(
            f"[{n} figure{'s' if n != 1 else ''}: attached as image{'s' if n != 1 else ''}]"
        )
    elif result.figures:
        # Titles, labels and legends are the user's text (or a model's): redacted like outputs.
        digests = "\n".join(describe_figure(d, i) for i, d in enumerate(result.figures, 1) if d)
        sections.append(redact(digests[: budget + redact.margin]))
    elif _images(result):
        sections.append("[a figure was shown; no description of it is available]")
    body = "\n".join(s for s in sections if s.strip()) or "(the cell ran without output)"
    count = result.execution_count
    head = f"Ran as cell [{count}].\n" if count is not None else ""
    parts: list[dict] = [{"type": "text", "text": _trim(head + body, budget)}]
    parts.extend(
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}} for png in pngs
    )
    return parts


def outcome(result: StepResult, redactor: Redactor | None = None) -> str:
    """One line saying how a step went: the error, the value, what it printed, figures."""
    redact = redactor if redactor is not None else Redactor()
    if result.error:
        line = f"could not run: {result.error}"
    else:
        errors = [o for o in result.outputs if o.get("output_type") == "error"]
        if errors:
            e = errors[-1]
            line = error_line({"ename": e.get("ename", "Error"), "evalue": e.get("evalue", "")})
            line = line.split("\n")[0]
        else:
            line = _success_line(result)
    line = " ".join(redact(line[: _OUTCOME_CHARS * 4]).split())
    return line if len(line) <= _OUTCOME_CHARS else line[: _OUTCOME_CHARS - 1] + "…"


def _success_line(result: StepResult) -> str:
    bits = []
    values = [
        strip_ansi(multiline_text(o.get("data", {}).get("text/plain")))
        for o in result.outputs
        if o.get("output_type") == "execute_result" and isinstance(o.get("data"), dict)
    ]
    if values and values[-1].strip():
        first = values[-1].strip().split("\n")
        more = f" (+{len(first) - 1} lines)" if len(first) > 1 else ""
        bits.append(f"Out: {first[0].strip()}{more}")
    shown = [
        o["data"]
        for o in result.outputs
        if o.get("output_type") == "display_data"
        and isinstance(o.get("data"), dict)
        and not any(k.startswith("image/") for k in o["data"])
    ]
    if shown:
        line = strip_ansi(multiline_text(shown[0].get("text/plain"))).strip().split("\n")[0]
        bits.append(f"displayed {line.strip()}" if len(shown) == 1 else f"{len(shown)} displays")
    printed = "".join(
        multiline_text(o.get("text")) for o in result.outputs if o.get("output_type") == "stream"
    )
    if printed.strip():
        lines = printed.strip().split("\n")
        bits.append(
            f"printed {strip_ansi(lines[0]).strip()}"
            if len(lines) == 1
            else f"printed {len(lines)} lines"
        )
    figures = len(result.figures) or len(_images(result))
    if figures:
        bits.append(f"{figures} figure{'s' if figures != 1 else ''}")
    return "; ".join(bits) or "ran, no output"
