"""A trial's report: what the step tried and what it showed, as data (JSON both ways, every
field checked and bounded when it comes back through a browser), and as the lines people read.

Two kinds of line: :meth:`TrialReport.concerns`, why the step must ask ("tried to write
report.csv", "tried to connect to api.example.com:443", "its output loads an image from
evil.example", "the trial stopped after 10 s; nothing attempted so far"); and
:meth:`TrialReport.preview`, what it would show and change ("prints: 3 rows", "creates summary
(DataFrame: 4 rows × 2 columns)", "changes df in place"). A report is **clean** when it has no
concern: the step may then run unasked, exactly as shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .attempts import Attempt

#: How a trial ended.
RAN = "ran"  # the step ran to its end (maybe raising an error of its own)
TIMEOUT = "timeout"
CRASHED = "crashed"
UNAVAILABLE = "unavailable"
STATUSES = (RAN, TIMEOUT, CRASHED, UNAVAILABLE)

#: Bounds of a report read back (a browser relays it).
MAX_ATTEMPTS = 200
MAX_LINES = 40
MAX_TEXT = 8000
MAX_LINE = 300
MAX_DISPLAYS = 20


def _text(value: Any, limit: int = MAX_LINE) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _lines(value: Any, limit: int = MAX_LINES) -> list[str]:
    if not isinstance(value, list):
        return []
    return [_text(v) for v in value[:limit] if isinstance(v, str)]


def _numbers(value: Any) -> dict[str, float]:
    if not isinstance(value, dict):
        return {}
    return {
        str(k)[:40]: float(v)
        for k, v in list(value.items())[:20]
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _bundle(value: Any) -> dict[str, Any]:
    """A mimebundle read back: MIME type -> text (or JSON), bounded."""
    if not isinstance(value, dict):
        return {}
    kept: dict[str, Any] = {}
    for mime, data in list(value.items())[:12]:
        if not isinstance(mime, str):
            continue
        if isinstance(data, str):
            kept[mime[:100]] = data[:20000]
        elif isinstance(data, (dict, list)):
            kept[mime[:100]] = data
    return kept


@dataclass
class TrialReport:
    """What one trial saw (see the module)."""

    status: str
    #: Why the trial could not run or stopped (UNAVAILABLE, TIMEOUT, CRASHED), one line.
    reason: str = ""
    seconds: float = 0.0
    attempts: list[Attempt] = field(default_factory=list)
    #: The error the step raised: ename, evalue (one line), refused (the confinement said
    #: no), memory (it ran out of the trial's memory).
    error: dict[str, Any] | None = None
    stdout: str = ""
    stderr: str = ""
    displays: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    figures: list[dict[str, Any]] = field(default_factory=list)
    #: What the step would have asked the frontend to do (``set_next_input``, ``ask_exit``).
    payloads: list[str] = field(default_factory=list)
    #: Messages to the frontend outside displays (a widget's comm).
    messages: int = 0
    asked_input: bool = False
    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    #: Where the time went (fork_ms, confine_ms, snapshot_ms, run_ms, compare_ms,
    #: total_ms) and the memory the child added (private_kb), for benchmarks.
    timings: dict[str, float] = field(default_factory=dict)

    # -- made ------------------------------------------------------------------------------

    @classmethod
    def unavailable(cls, reason: str) -> TrialReport:
        """No trial could be made here: ``reason`` says why, in one line."""
        return cls(status=UNAVAILABLE, reason=_one_line(reason, MAX_LINE))

    @classmethod
    def kernel_failed(cls, ename: str, evalue: str) -> TrialReport:
        """The kernel could not even start a trial (its user expression raised ``ename``): a
        kernel without chapyter-ext (a stock kernel on a gateway), or another failure."""
        if ename in ("ModuleNotFoundError", "ImportError"):
            return cls.unavailable("the kernel cannot import chapyter-ext")
        return cls.unavailable(f"the kernel could not run a trial ({ename}: {evalue})")

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (what the kernel answers, what the browser relays)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "seconds": self.seconds,
            "attempts": [a.as_dict() for a in self.attempts],
            "error": self.error,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "displays": self.displays,
            "result": self.result,
            "figures": self.figures,
            "payloads": self.payloads,
            "messages": self.messages,
            "asked_input": self.asked_input,
            "variables": {
                "created": self.created,
                "changed": self.changed,
                "deleted": self.deleted,
            },
            "timings": self.timings,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TrialReport:
        """A report read back from JSON, every field checked and bounded; ``ValueError`` (one
        line) when it is not a report at all."""
        if not isinstance(data, dict) or data.get("status") not in STATUSES:
            raise ValueError("'trial' must be a trial report with a known 'status'.")
        attempts: list[Attempt] = []
        listed = data.get("attempts")
        for item in listed if isinstance(listed, list) else []:
            if len(attempts) >= MAX_ATTEMPTS:
                break
            if isinstance(item, dict) and isinstance(item.get("line"), str):
                attempts.append(
                    Attempt(
                        _text(item.get("kind"), 40), _text(item.get("target")), _text(item["line"])
                    )
                )
        error = data.get("error")
        if isinstance(error, dict):
            error = {
                "ename": _text(error.get("ename"), 100),
                "evalue": _text(error.get("evalue")),
                "refused": error.get("refused") is True,
                "memory": error.get("memory") is True,
            }
        else:
            error = None
        found = data.get("variables")
        variables: dict[str, Any] = found if isinstance(found, dict) else {}
        seconds = data.get("seconds")
        messages = data.get("messages")
        shown = data.get("displays")
        displays: list[Any] = shown if isinstance(shown, list) else []
        drawn = data.get("figures")
        figures: list[Any] = drawn if isinstance(drawn, list) else []
        result = _bundle(data.get("result")) or None
        return cls(
            status=data["status"],
            reason=_text(data.get("reason")),
            seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
            attempts=attempts,
            error=error,
            stdout=_text(data.get("stdout"), MAX_TEXT),
            stderr=_text(data.get("stderr"), MAX_TEXT),
            displays=[_bundle(d) for d in displays[:MAX_DISPLAYS]],
            result=result,
            figures=[f for f in figures[:8] if isinstance(f, dict)],
            payloads=_lines(data.get("payloads"), 10),
            messages=messages if isinstance(messages, int) and messages >= 0 else 0,
            asked_input=data.get("asked_input") is True,
            created=_lines(variables.get("created")),
            changed=_lines(variables.get("changed")),
            deleted=_lines(variables.get("deleted")),
            timings=_numbers(data.get("timings")),
        )

    # -- read ------------------------------------------------------------------------------

    def remote(self) -> list[str]:
        """ "its output loads an image from evil.example", once per host and kind, for what
        the step's displays and value would fetch when rendered."""
        from ..untrusted.remote_content import bundle_remote_resources

        lines: list[str] = []
        for bundle in [*self.displays, *([self.result] if self.result else [])]:
            try:
                found = bundle_remote_resources(bundle)
            except Exception:  # an odd bundle: what cannot be read cannot be cleared
                lines.append("its output could not be checked for remote content")
                continue
            for resource in found:
                line = f"its output loads {_article(resource.kind)} from {resource.host}"
                if line not in lines:
                    lines.append(line)
        return lines[:10]

    def concerns(self) -> list[str]:
        """Why the step must ask (one line each); [] when the report is clean."""
        found: list[str] = []
        if self.status == UNAVAILABLE:
            return [f"no trial: {self.reason}" if self.reason else "no trial could be made"]
        if self.status == TIMEOUT:
            found.append(self.reason or "the trial stopped at its time limit")
        elif self.status == CRASHED:
            found.append(self.reason or "the trial crashed")
        found.extend(a.line for a in self.attempts)
        if self.status == TIMEOUT and not self.attempts:
            found[0] += "; nothing attempted so far"
        error = self.error or {}
        if error.get("memory"):
            found.append("it needed more memory than the trial allows")
        elif error.get("refused") and not self.attempts:  # else the attempt says it already
            line = f"{error.get('ename', 'Error')}: {error.get('evalue', '')}".strip()
            found.append(f"it failed on something the trial refused ({_one_line(line)})")
        if self.asked_input:
            found.append("it asks for input")
        for payload in self.payloads:
            found.append(f"it asks JupyterLab to act ({payload})")
        if self.messages:
            found.append("it opens a widget or another live connection to JupyterLab")
        found.extend(self.remote())
        return found

    @property
    def clean(self) -> bool:
        """Nothing tried, nothing remote shown, the trial whole: the step may run unasked."""
        return self.status == RAN and not self.concerns()

    def preview(self) -> list[str]:
        """What the step shows and changes, one line each (for the approval card)."""
        lines: list[str] = []
        if self.stdout.strip():
            lines.append(f"prints: {_one_line(self.stdout)}")
        if self.stderr.strip():
            lines.append(f"warns: {_one_line(self.stderr)}")
        for bundle in self.displays[:5]:
            lines.append(f"shows: {_shown(bundle)}")
        if self.result:
            lines.append(f"returns: {_shown(self.result)}")
        for digest in self.figures[:3]:
            title = digest.get("suptitle") or next(
                (a.get("title") for a in digest.get("axes", []) if a.get("title")), None
            )
            lines.append(f"draws a figure{f': {title}' if title else ''}")
        lines.extend(f"creates {line}" for line in self.created[:10])
        lines.extend(f"changes {line}" for line in self.changed[:10])
        lines.extend(f"deletes {name}" for name in self.deleted[:10])
        if self.error and not self.error.get("refused") and not self.error.get("memory"):
            lines.append(
                f"raises {self.error.get('ename')}: {_one_line(str(self.error.get('evalue')))}"
            )
        return lines


def _article(kind: str) -> str:
    words = {
        "image": "an image",
        "stylesheet": "a stylesheet",
        "font": "a font",
        "frame": "a page in a frame",
        "media": "media",
        "script": "a script",
        "refresh": "another page",
    }
    return words.get(kind, f"a resource ({kind})")


def _shown(bundle: dict[str, Any]) -> str:
    text = bundle.get("text/plain")
    kinds = [m for m in bundle if m != "text/plain"]
    first = _one_line(text if isinstance(text, str) else "", 100)
    if kinds:
        return f"{first} [{', '.join(kinds[:3])}]".strip()
    return first or "(nothing)"
