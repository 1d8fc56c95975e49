"""A notebook's outputs without the configured secrets: what every writer of a notebook does
before the file is written (the server's save, ``chapyter-ext agent``, ``chapyter-ext
regenerate``).

What changes, and only where a secret the redactor was given shows, whole or in part
(:meth:`~.redactor.Redactor.known`): the text of stream outputs; every textual value of an
``execute_result`` or ``display_data`` (a list of strings, as nbformat stores multi-line text,
is read joined, so a key split across two of its strings is found; the strings inside JSON
values one by one); an error's name, value and each traceback entry. In markup (HTML,
Markdown, SVG) the marker is written ``&lt;redacted&gt;``, which shows as ``<redacted>``:
written plain, it would be read as an unknown tag and show nothing. Nothing else:

- not the shapes the full redaction also replaces (hashes, ids, any ``sk-…``), nor the
  environment's values: outputs legitimately show those, and the user keeps their outputs;
- not binary values (base64 images, PDFs, audio): text replaced in them would only break
  them;
- not sources, attachments or metadata: a key in the cell's own code is the user's to keep
  or remove (``chapyter-ext check`` says so).

A value with nothing to replace is left as the very object it was, so a notebook without a
secret is written byte for byte as it would be without this step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .names import REDACTED
from .redactor import Redactor

__all__ = ["REDACTED_MARKUP", "CleanValues", "OutputRedaction", "marker_for", "redact_outputs"]

#: The marker in markup, where ``<redacted>`` would be read as a tag: it shows as the marker.
REDACTED_MARKUP = "&lt;redacted&gt;"

# Output values stored as base64 (nbformat: whatever is not text or JSON).
_BINARY_TYPES = ("image/", "audio/", "video/", "font/")
_BINARY_MIMES = frozenset({"application/pdf", "application/octet-stream", "application/zip"})
_TEXT_IMAGES = frozenset({"image/svg+xml"})
# Values rendered as markup (JupyterLab's HTML, Markdown and SVG renderers).
_MARKUP_MIMES = frozenset({"text/html", "text/markdown", "image/svg+xml"})


@dataclass
class OutputRedaction:
    """What :func:`redact_outputs` replaced: counts and where, never the values."""

    #: Strings (or multi-line lists of strings) rewritten.
    values: int = 0
    #: Outputs holding at least one of them.
    outputs: int = 0
    #: The ids of the cells whose outputs changed, in notebook order (cells without one left
    #: out: see :attr:`unnamed`).
    cells: list[str] = field(default_factory=list)
    #: Cells that changed and have no id (nbformat before 4.5).
    unnamed: int = 0

    def __bool__(self) -> bool:
        return self.values > 0

    def note(self, name: str, verb: str = "writing it") -> str:
        """One line saying what was replaced in ``name``, e.g. for a command's output."""
        outputs = "1 output" if self.outputs == 1 else f"{self.outputs} outputs"
        return f"replaced a configured secret with <redacted> in {outputs} of {name} before {verb}"


class CleanValues:
    """Fingerprints of output values one redactor found nothing in, so that saving the same
    large outputs again (JupyterLab's autosave, every two minutes) checks only what changed.

    A fingerprint is the value's length and ``hash()``: Python's string hash is keyed afresh
    in every process, so no text can be made to pass for a clean one. Short values are not
    kept (checking them costs less); past ``limit`` the set starts over. One set per
    redactor: a value clean for one set of secrets is not for another.
    """

    MIN_CHARS = 512

    def __init__(self, redactor: Redactor, limit: int = 200_000) -> None:
        self.redactor = redactor
        self.limit = limit
        self._seen: set[tuple[int, int]] = set()

    def __len__(self) -> int:
        return len(self._seen)

    def known(self, text: str, marker: str = REDACTED) -> str:
        """:meth:`Redactor.known`, skipping (and remembering) values found clean."""
        if len(text) < self.MIN_CHARS:
            return self.redactor.known(text, marker)
        key = (len(text), hash(text))
        if key in self._seen:
            return text
        new = self.redactor.known(text, marker)
        if new == text:
            if len(self._seen) >= self.limit:
                self._seen.clear()
            self._seen.add(key)
        return new


def redact_outputs(nb: Any, redactor: Redactor | CleanValues) -> OutputRedaction:
    """Replace the redactor's secrets in every code cell's outputs of ``nb`` (an nbformat
    notebook, or its JSON as a dict), in place; what was replaced. A :class:`CleanValues`
    in place of the redactor skips the values it already found clean.

    Anything that is not shaped as nbformat says is passed over, never an error: this runs
    inside every save.
    """
    found = OutputRedaction()
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return found
    replace = redactor.known
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs")
        if not isinstance(outputs, list):
            continue
        changed = False
        for output in outputs:
            if isinstance(output, dict):
                values = _redact_output(output, replace)
                if values:
                    found.values += values
                    found.outputs += 1
                    changed = True
        if changed:
            cell_id = cell.get("id")
            if isinstance(cell_id, str) and cell_id:
                found.cells.append(cell_id)
            else:
                found.unnamed += 1
    return found


def marker_for(mime: str) -> str:
    """The marker a value of type ``mime`` gets: :data:`REDACTED_MARKUP` in markup."""
    if mime in _MARKUP_MIMES or mime.endswith("+xml"):
        return REDACTED_MARKUP
    return REDACTED


def _redact_output(output: dict, replace: Callable[..., str]) -> int:
    kind = output.get("output_type")
    if kind == "stream":
        return _rewrite(output, "text", _text(output.get("text"), replace))
    if kind in ("execute_result", "display_data"):
        data = output.get("data")
        if not isinstance(data, dict):
            return 0
        changed = 0
        for mime, value in list(data.items()):
            if not isinstance(mime, str) or _binary(mime):
                continue
            if _is_json_mime(mime) or isinstance(value, dict):
                changed += _rewrite(data, mime, _json(value, replace))
            else:
                changed += _rewrite(data, mime, _text(value, replace, marker_for(mime)))
        return changed
    if kind == "error":
        changed = 0
        for key in ("ename", "evalue"):
            changed += _rewrite(output, key, _text(output.get(key), replace))
        traceback = output.get("traceback")
        if isinstance(traceback, list):
            # Entries are shown one per line, never joined into one string: each on its own.
            for i, entry in enumerate(traceback):
                if isinstance(entry, str):
                    new = replace(entry)
                    if new != entry:
                        traceback[i] = new
                        changed += 1
        return changed
    return 0


def _rewrite(container: dict, key: str, new: Any) -> int:
    if new is container.get(key):
        return 0
    container[key] = new
    return 1


def _text(value: Any, replace: Callable[..., str], marker: str = REDACTED) -> Any:
    """A text value (a string, or the list of strings nbformat splits one into) redacted, or
    the very same object when nothing in it is a secret."""
    if isinstance(value, str):
        new = replace(value, marker)
        return value if new == value else new
    if isinstance(value, list) and value and all(isinstance(line, str) for line in value):
        joined = "".join(value)  # a key may straddle two strings
        new = replace(joined, marker)
        return value if new == joined else new.splitlines(True)
    return value


def _json(value: Any, replace: Callable[..., str]) -> Any:
    """A JSON value with every string in it redacted (keys too), or the same object."""
    if isinstance(value, str):
        new = replace(value)
        return value if new == value else new
    if isinstance(value, list):
        items = [_json(item, replace) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    if isinstance(value, dict):
        pairs = [(_json(k, replace), _json(v, replace)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items())):
            return value
        return dict(pairs)
    return value


def _is_json_mime(mime: str) -> bool:
    # nbformat's own rule (v4/rwbase.py): these values are JSON, never split into lines.
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


def _binary(mime: str) -> bool:
    if mime in _TEXT_IMAGES or mime.endswith("+xml"):
        return False
    return mime.startswith(_BINARY_TYPES) or mime in _BINARY_MIMES
