"""Export chat's file: the chat's Markdown written next to its notebook by the server itself,
so that what decides where it goes is here, not in whatever the contents API would follow.

The rules, and why:

- **Never through a link.** The target is refused when it is a symbolic link (wherever it
  points) or anything but a regular file: :func:`chapyter_ext.atomic_write.check_target`,
  checked when the target is chosen and again when it is written, and the write is a rename,
  which never follows a link planted in between. jupyter_server's own save would write
  through a link that points outside its root.
- **Never outside the root.** The folder the file goes in, links resolved, must lie inside
  the server's root (``ContentsManager.root_dir``, resolved too): a folder inside the root
  that is a link to elsewhere is refused. Hidden targets follow the server's ``allow_hidden``.
- **Never over a file without naming it.** A target that exists is replaced only when the
  request names it (``replace`` equal to its path), which the browser sends only after the
  user answered a dialog naming that path; the first answer says it exists and is not written.

A contents manager that keeps no files on disk (no ``root_dir``) is written through its own
``save``: no links there to follow, and the same question before replacing.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from jupyter_core.paths import is_hidden
from jupyter_core.utils import ensure_async

from ..atomic_write import UnsafeTargetError, check_target, write_bytes

__all__ = ["ExportRefused", "ExportTarget", "save_export"]


class ExportRefused(Exception):
    """The export may not be written there; ``str()`` is one line for the user."""


@dataclass(frozen=True)
class ExportTarget:
    """Where an export goes: its contents-API path, and on disk (None: the contents manager
    keeps no files on disk)."""

    path: str
    os_path: str | None
    #: Whether a file is there now; its size and modification time when known.
    exists: bool
    size: int | None = None
    modified: str = ""

    def to_json(self) -> dict[str, Any]:
        """What the browser is told of the target (to name it in the Replace dialog)."""
        data: dict[str, Any] = {"path": self.path, "exists": self.exists}
        if self.size is not None:
            data["size"] = self.size
        if self.modified:
            data["modified"] = self.modified
        return data


def _inside(folder: str, root: str) -> bool:
    return os.path.commonpath([folder, root]) == root


def disk_target(root_dir: str, path: str, allow_hidden: bool = True) -> ExportTarget:
    """The target ``path`` (a normalised contents-API path) under ``root_dir`` on disk, checked
    by the module's rules; :class:`ExportRefused` when it may not be written."""
    root = os.path.abspath(root_dir)
    os_path = os.path.join(root, *path.split("/"))
    folder = os.path.dirname(os_path)
    real_folder = os.path.realpath(folder)
    shown = posixpath.dirname(path) or "the server's root"
    if not _inside(real_folder, os.path.realpath(root)):
        raise ExportRefused(
            f"The folder {shown} leads outside the server's root (a symbolic link); an export "
            "stays inside it."
        )
    if not os.path.isdir(real_folder):
        raise ExportRefused(f"There is no folder {shown} to write {path} in.")
    if not allow_hidden and is_hidden(os_path, root):
        raise ExportRefused(f"{path} would be a hidden file, which this server does not write.")
    try:
        existing = check_target(os_path)
    except UnsafeTargetError:
        if os.path.islink(os_path):
            raise ExportRefused(
                f"{path} is a symbolic link; an export never writes through a link."
            ) from None
        raise ExportRefused(
            f"{path} is not a regular file; an export replaces only files."
        ) from None
    except FileNotFoundError:
        raise ExportRefused(f"There is no folder {shown} to write {path} in.") from None
    if existing is None:
        return ExportTarget(path, os_path, exists=False)
    modified = datetime.fromtimestamp(existing.st_mtime, timezone.utc)
    return ExportTarget(
        path,
        os_path,
        exists=True,
        size=existing.st_size,
        modified=modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def _write_on_disk(
    root_dir: str, path: str, allow_hidden: bool, data: bytes, replace: str
) -> tuple[ExportTarget, bool]:
    target = disk_target(root_dir, path, allow_hidden)
    if target.exists and replace != target.path:
        return target, False
    assert target.os_path is not None
    try:
        write_bytes(target.os_path, data)
    except UnsafeTargetError:
        # A link planted since the check: refused again, never followed.
        raise ExportRefused(f"{path} became a symbolic link; nothing was written.") from None
    return target, True


async def save_export(
    contents_manager: Any, path: str, markdown: str, replace: str | None
) -> tuple[ExportTarget, bool]:
    """Write ``markdown`` at ``path`` (a normalised contents-API path) by the module's rules:
    the target and whether it was written (False: it exists and ``replace`` does not name it).
    :class:`ExportRefused` when it may not be written there; OSError when writing failed."""
    root_dir = getattr(contents_manager, "root_dir", None)
    if isinstance(root_dir, str) and root_dir:
        allow_hidden = bool(getattr(contents_manager, "allow_hidden", True))
        return await asyncio.to_thread(
            _write_on_disk, root_dir, path, allow_hidden, markdown.encode("utf-8"), replace or ""
        )
    exists = bool(await ensure_async(contents_manager.file_exists(path)))
    target = ExportTarget(path, None, exists=exists)
    if exists and replace != path:
        return target, False
    model = {"type": "file", "format": "text", "content": markdown}
    await ensure_async(contents_manager.save(model, path))
    return target, True
