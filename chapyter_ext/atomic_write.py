"""Writing a user's file so that it is never half written: a temporary file beside it, then a
rename. Every writer of a notebook goes through :func:`write_notebook` (or
:func:`write_bytes` for other files), which also takes the configured secrets out of its
outputs first (:func:`chapyter_ext.redact.redact_outputs`): a notebook on disk holds none.

The rules, and why:

- The temporary file comes from :func:`tempfile.mkstemp` in the target's own folder: a name
  nobody can predict, created with ``O_CREAT | O_EXCL`` and mode 0600, so nothing planted
  there beforehand (a symbolic link to somewhere else) is ever opened; and the same folder
  means the same filesystem, so the rename is atomic.
- A target that is a symbolic link is refused (:class:`UnsafeTargetError`), neither written
  through nor replaced: following it could send the write anywhere the link's author chose,
  and replacing it would quietly turn someone's link into a copy. Pass the real path instead.
  Only the last component is checked (with ``lstat``): folders on the way are the caller's
  choice. A link planted after the check is replaced, not followed: ``rename(2)`` never
  follows the last component. A target that exists but is not a regular file is refused too.
- An existing target keeps its permission bits (the rewritten file gets them before the
  rename, through the open descriptor); a new one gets ``0o666`` less the umask, as ``open()``
  would give it. Owner and group are the writer's, as with any save by rename.
- The data is fsynced before the rename, and the folder after it: after a crash the path
  holds the old file or the new one, whole.
- On any failure, ``KeyboardInterrupt`` included, the temporary file is removed and the
  target left as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .redact import OutputRedaction, Redactor

__all__ = ["UnsafeTargetError", "check_target", "write_bytes", "write_notebook"]

# Set-id and sticky bits are not copied: a rewritten notebook has no business keeping them.
_PERMISSION_BITS = 0o777


class UnsafeTargetError(OSError):
    """The target is a symbolic link or not a regular file; ``str()`` is one line."""


def check_target(path: str | os.PathLike[str]) -> os.stat_result | None:
    """Whether ``path`` may be written: its ``lstat`` (None when it does not exist yet).

    Raises :class:`UnsafeTargetError` for a symbolic link or anything but a regular file, and
    :class:`FileNotFoundError` when its folder does not exist, so a caller can refuse before
    doing work whose result it could not save.
    """
    target = os.fspath(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"no folder {folder} to write {target} in") from None
        return None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeTargetError(
            f"{target} is a symbolic link; not written through it: pass the real path"
        )
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeTargetError(f"{target} is not a regular file")
    return st


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the file at ``path`` with ``data``, atomically (see the module's rules)."""
    target = os.fspath(path)
    existing = check_target(target)
    mode = (
        stat.S_IMODE(existing.st_mode) & _PERMISSION_BITS
        if existing is not None
        else 0o666 & ~_umask()
    )
    folder = os.path.dirname(os.path.abspath(target))
    fd, temporary = tempfile.mkstemp(
        dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".tmp"
    )
    try:
        with open(fd, "wb", closefd=True) as f:
            f.write(data)
            f.flush()
            # Through the descriptor: the name could have been swapped since mkstemp.
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        if not hasattr(os, "fchmod"):  # Windows: only the read-only bit means anything
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _fsync_folder(folder)


def write_notebook(nb: Any, path: str | os.PathLike[str], *, redactor: Redactor) -> OutputRedaction:
    """Write the notebook ``nb`` to ``path`` as :func:`nbformat.write` would, atomically, with
    ``redactor``'s secrets replaced in its outputs (in ``nb`` too); what was replaced.

    ``redactor`` is the writer's: built from the settings that hold its keys, so that what a
    step printed with them never reaches the file. The notebook is serialised first, so one
    that cannot be leaves the file untouched.
    """
    import nbformat

    from .redact import redact_outputs

    replaced = redact_outputs(nb, redactor)
    text = nbformat.writes(nb)
    if not text.endswith("\n"):
        text += "\n"
    write_bytes(path, text.encode("utf-8"))
    return replaced


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable; not every system can open a folder (Windows)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Umask:"):  # Linux 4.7 and later
                return int(line.split()[1], 8)
    # Elsewhere the only way to read it is to set it; set back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
