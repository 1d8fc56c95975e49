"""Files attached to a chat message (the body's ``attachments``): read and bounded
(:func:`parse_attachments`), images made OpenAI image parts (:func:`image_parts`), tables and
text files described for the context within a budget (:func:`describe_attachments`), and what
the stored message keeps of them (:func:`attachment_notes`: name, type and size, never data).

The bounds are the browser's (``labextension/src/chat/attachmentRules.ts``): an image at most
5 MB, another file at most 20 MB, at most 10 files and 20 MB together. A table is read with
pandas when the server has it (pyarrow for Parquet, openpyxl / xlrd for Excel), imported only
when a table comes; otherwise CSV, TSV and JSON are described by their first lines and the
other formats by one line.
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..redact import Redactor, one_line

IMAGE_LIMIT = 5 * 1024 * 1024
FILE_LIMIT = 20 * 1024 * 1024
TOTAL_LIMIT = 20 * 1024 * 1024
MAX_ATTACHMENTS = 10
#: The most base64 characters the attachments of one body can hold, plus room per file for
#: its name and type: what the chat and agent routes admit beyond an ordinary body.
MAX_ATTACHMENTS_BODY_BYTES = 4 * (TOTAL_LIMIT + 2) // 3 + MAX_ATTACHMENTS * 2048
MAX_NAME_CHARS = 255
#: Rows of a table shown to the model.
SAMPLE_ROWS = 5

IMAGES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif"}
IMAGES["webp"] = "image/webp"
TABLES = {
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "json": "application/json",
    "parquet": "application/vnd.apache.parquet",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xls": "application/vnd.ms-excel",
}
TEXTS = frozenset(
    "txt md py r sql log yaml yml toml ini cfg xml html js ts sh".split()  # noqa: SIM905
)
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_NEEDS = {"parquet": "pyarrow", "xlsx": "openpyxl", "xls": "xlrd"}
_KIND_NAMES = {"parquet": "Parquet", "xlsx": "Excel", "xls": "Excel"}


class AttachmentError(ValueError):
    """An attachment refused; ``str()`` is one line naming the file or the field."""


@dataclass(frozen=True)
class Attachment:
    """One attached file, checked: ``kind`` is image, table or text; ``data`` its base64
    exactly as sent (an image goes on as it came), decoded only where it is read."""

    name: str
    type: str
    size: int
    kind: str
    data: str

    @property
    def extension(self) -> str:
        """The name's extension, lower case ("" when none)."""
        stem, dot, ext = self.name.rpartition(".")
        return ext.lower() if dot and stem else ""

    def note(self) -> dict[str, Any]:
        """What the stored message keeps: name, type and size."""
        return {"name": self.name, "type": self.type, "size": self.size}


def clean_name(value: str) -> str:
    """A file name safe to show and to save under: its last path part, without control
    characters or characters a file system refuses, no leading dots, at most 255 characters."""
    last = re.split(r"[/\\]", value)[-1]
    name = _UNSAFE_NAME.sub("_", last).strip().lstrip(".").strip()
    if len(name) > MAX_NAME_CHARS:
        stem, dot, ext = name.rpartition(".")
        keep = MAX_NAME_CHARS - len(ext) - 1
        name = f"{stem[:keep]}.{ext}" if dot and 0 < len(ext) < 16 else name[:MAX_NAME_CHARS]
    return name or "attachment"


def classify(name: str, mime: str) -> tuple[str, str] | None:
    """The kind and MIME type of a file, from its extension first (as the browser's
    ``classifyFile``); None: not a kind the chat takes."""
    stem, dot, ext = name.rpartition(".")
    ext = ext.lower() if dot and stem else ""
    mime = mime.lower().split(";")[0].strip()
    if ext in IMAGES:
        return "image", IMAGES[ext]
    if ext in TABLES:
        return "table", TABLES[ext]
    if ext in TEXTS:
        return "text", mime if mime.startswith("text/") else "text/plain"
    if not ext:
        for kind, known in (("image", IMAGES), ("table", TABLES)):
            if mime in known.values():
                return kind, mime
    return ("text", mime) if mime.startswith("text/") else None


def _decoded_size(data: str) -> int:
    return len(data) // 4 * 3 - (len(data) - len(data.rstrip("=")))


def _parse_one(index: int, item: Any) -> Attachment:
    where = f"'attachments[{index}]'"
    if not isinstance(item, dict):
        raise AttachmentError(f"{where} must be an object {{name, type, size, data}}.")
    name, mime, size, data = (item.get(k) for k in ("name", "type", "size", "data"))
    if not isinstance(name, str) or not name.strip() or len(name) > 4 * MAX_NAME_CHARS:
        raise AttachmentError(f"{where}: 'name' must be a file name.")
    if not isinstance(mime, str) or len(mime) > 255:
        raise AttachmentError(f"{where}: 'type' must be a MIME type.")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise AttachmentError(f"{where}: 'size' must be a number of bytes.")
    if not isinstance(data, str):
        raise AttachmentError(f"{where}: 'data' must be the file's bytes in base64.")
    name = clean_name(name)
    found = classify(name, mime)
    if found is None:
        raise AttachmentError(
            f'"{name}" cannot be attached: only images (PNG, JPEG, GIF, WebP), tables (CSV, '
            "TSV, JSON, Parquet, Excel) and text files can.",
        )
    kind, mime = found
    limit = IMAGE_LIMIT if kind == "image" else FILE_LIMIT
    # Sizes are checked on the base64's length, before anything is decoded.
    if len(data) % 4 or not _BASE64.fullmatch(data):
        raise AttachmentError(f'"{name}": its data is not valid base64.')
    decoded = _decoded_size(data)
    if decoded > limit:
        what = "an image" if kind == "image" else "a file"
        raise AttachmentError(f'"{name}" is too large: {what} can be at most {limit // 2**20} MB.')
    if decoded != size:
        raise AttachmentError(f'"{name}": its data is not {size} bytes long.')
    if kind == "image" and mime in _MAGIC:
        head = base64.b64decode(data[:16])
        if not head.startswith(_MAGIC[mime]):
            raise AttachmentError(f'"{name}" is not the {mime} image its name says.')
    if kind == "image" and mime == "image/webp":
        head = base64.b64decode(data[:16])
        if head[:4] != b"RIFF" or head[8:12] != b"WEBP":
            raise AttachmentError(f'"{name}" is not the image/webp image its name says.')
    return Attachment(name=name, type=mime, size=size, kind=kind, data=data)


def parse_attachments(value: Any) -> tuple[Attachment, ...]:
    """The body's ``attachments``: at most 10 files, each bounded, its base64 checked and its
    name cleaned; one-line :class:`AttachmentError` naming what is wrong."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise AttachmentError("'attachments' must be a list of files.")
    if len(value) > MAX_ATTACHMENTS:
        raise AttachmentError(
            f"'attachments': at most {MAX_ATTACHMENTS} files go with one message."
        )
    files = tuple(_parse_one(i, item) for i, item in enumerate(value))
    if sum(f.size for f in files) > TOTAL_LIMIT:
        raise AttachmentError(
            f"'attachments': the files of one message can be at most {TOTAL_LIMIT // 2**20} MB "
            "together.",
        )
    return files


def attachment_notes(files: Sequence[Attachment]) -> tuple[dict[str, Any], ...]:
    """What the stored message keeps of its files: name, type, size (no data)."""
    return tuple(f.note() for f in files)


def image_parts(files: Sequence[Attachment]) -> list[dict[str, Any]]:
    """The images among ``files`` as OpenAI ``image_url`` content parts (data URLs)."""
    return [
        {"type": "image_url", "image_url": {"url": f"data:{f.type};base64,{f.data}"}}
        for f in files
        if f.kind == "image"
    ]


def format_size(size: int) -> str:
    """A size for people: ``512 B``, ``3.4 KB``, ``12 MB`` (as the browser writes it)."""
    value, units = float(size), ("B", "KB", "MB", "GB")
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    text = f"{value:.0f}" if unit == 0 or value >= 10 else f"{value:.1f}".removesuffix(".0")
    return f"{text} {units[unit]}"


def _text_head(data: bytes, budget: int) -> str:
    text = data[: budget * 4].decode("utf-8", "replace")
    lines, used = [], 0
    for line in text.splitlines():
        if used + len(line) + 1 > budget:
            lines.append("[…]")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _read_table(file: Attachment, raw: bytes) -> Any:
    """The file as a pandas DataFrame; ImportError when pandas (or its reader) is missing."""
    pd: Any = importlib.import_module("pandas")  # heavy: only when a table comes

    ext, buffer = file.extension, io.BytesIO(raw)
    if ext in ("csv", "tsv") or file.type in ("text/csv", "text/tab-separated-values"):
        sep = "\t" if ext == "tsv" or file.type == "text/tab-separated-values" else ","
        return pd.read_csv(buffer, sep=sep)
    if ext == "json" or file.type == "application/json":
        return pd.read_json(buffer)
    if ext == "parquet" or file.type == "application/vnd.apache.parquet":
        return pd.read_parquet(buffer)
    return pd.read_excel(buffer)


def _describe_frame(frame: Any, budget: int) -> str:
    rows, cols = frame.shape
    columns = ", ".join(f"{name} ({dtype})" for name, dtype in frame.dtypes.items())
    text = f"A table of {rows} rows × {cols} columns.\nColumns: {columns}"
    if len(text) > budget:
        return text[: max(0, budget - 3)] + "[…]"
    head = frame.head(SAMPLE_ROWS).to_string(max_colwidth=40, max_cols=30)
    return f"{text}\nFirst rows:\n{_text_head(head.encode(), budget - len(text) - 13)}"


def describe_file(file: Attachment, budget: int, redactor: Redactor) -> str:
    """One attached table or text file for the model, within about ``budget`` characters
    (its rows not yet redacted: :func:`describe_attachments` redacts the whole)."""
    title = f'File "{file.name}" ({file.type}, {format_size(file.size)})'
    raw = base64.b64decode(file.data)
    if file.kind == "table":
        try:
            frame = _read_table(file, raw)
        except ImportError as err:
            missing = err.name or _NEEDS.get(file.extension, "pandas")
            if file.extension not in ("csv", "tsv", "json"):
                kind = _KIND_NAMES.get(file.extension, "table")
                return f"{title}: a {kind} file; it is not described ({missing} is not installed)."
            return f"{title}, its first lines:\n{_text_head(raw, budget - len(title) - 20)}"
        except Exception as err:  # any file the reader refuses: said, not a failed turn
            line = f"{title}: could not be read as a table ({one_line(err, redactor)})."
            if file.extension in ("csv", "tsv", "json"):
                return f"{line} Its first lines:\n{_text_head(raw, budget - len(line) - 20)}"
            return line
        return f"{title}:\n{_describe_frame(frame, budget - len(title) - 2)}"
    return f"{title}, its first lines:\n{_text_head(raw, budget - len(title) - 20)}"


def describe_attachments(files: Sequence[Attachment], budget: int, redactor: Redactor) -> str:
    """The tables and text files among ``files`` described for the model's context, each
    within an equal share of ``budget`` characters, redacted ("" when there are none)."""
    described = [f for f in files if f.kind != "image"]
    if not described or budget <= 0:
        return ""
    share = max(200, budget // len(described))
    parts = [redactor(describe_file(f, share, redactor))[:share] for f in described]
    return "Files the user attached to this message:\n\n" + "\n\n".join(parts)


async def files_context(
    files: Sequence[Attachment], budget: int, redactor: Redactor, *, share: bool
) -> str:
    """:func:`describe_attachments` off the event loop (pandas may take a while), within
    ``budget``, or half of it when the kernel's context shares it ("" when no table or
    text file came)."""
    if not any(f.kind != "image" for f in files):
        return ""
    budget = budget // 2 if share else budget
    return await asyncio.to_thread(describe_attachments, files, budget, redactor)


__all__ = [
    "FILE_LIMIT",
    "IMAGE_LIMIT",
    "MAX_ATTACHMENTS",
    "MAX_ATTACHMENTS_BODY_BYTES",
    "TOTAL_LIMIT",
    "Attachment",
    "AttachmentError",
    "attachment_notes",
    "classify",
    "clean_name",
    "describe_attachments",
    "describe_file",
    "files_context",
    "image_parts",
    "parse_attachments",
]
