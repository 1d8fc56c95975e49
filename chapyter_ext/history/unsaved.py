"""When the chat history cannot be written (a full disk, a quota, a read-only folder): what the
chat says, and what the log says.

A write that fails leaves the old file as it was (see :mod:`.files`); the store keeps
what it could not write in memory and tries again at the next change and when the server stops.
The user is told in one line of the chat, every time a change is not saved; the log gets one
line per kind of failure, not one per failed write and never a traceback (a hub's home quota
fills once and every message after fails the same way), and one line when saving works again.
An export that cannot be written (:class:`ExportReporter`) is said the same way: one line in the
chat (the route's error), one log line per kind.
"""

from __future__ import annotations

import errno
import logging
import threading

#: What each kind of failure is called in the chat; any other error reads as its own message.
_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "your disk quota is used up",
    errno.EFBIG: "a file size limit was reached",
    errno.EROFS: "the folder is on a read-only disk",
    errno.EACCES: "the folder may not be written",
    errno.EPERM: "the folder may not be written",
}


def failure_kind(err: OSError) -> str:
    """A short name for what went wrong (``ENOSPC``, ``EDQUOT``, ...; ``OSError`` if none)."""
    return errno.errorcode.get(err.errno or 0, "OSError")


def unsaved_line(err: OSError, folder: object) -> str:
    """The one line the chat shows when its history could not be written to ``folder``."""
    reason = _REASONS.get(err.errno or 0) or (err.strerror or str(err) or "it could not be written")
    return (
        f"Chat history not saved: {reason} ({folder}). What you see is kept in memory and "
        "written at the next change or when the server stops, if there is room then; what "
        "was saved before is intact."
    )


class FailureLog:
    """Logs the first failure of each kind, once, and the first success after failures."""

    #: The log's line for a failure (folder, the system's words, kind) and for a success.
    failed_line = (
        "chapyter-ext: chat history not saved in %s: %s [%s]; it is kept in memory, and "
        "failures of this kind are not logged again until a save succeeds"
    )
    saved_line = "chapyter-ext: chat history saved again in %s"

    def __init__(self, folder: object, log: logging.Logger) -> None:
        self.folder = folder
        self.log = log
        self._logged: set[str] = set()
        self._lock = threading.Lock()

    def note(self, err: OSError) -> None:
        """A write failed with ``err``: logged if it is the first of its kind."""
        kind = failure_kind(err)
        with self._lock:
            new = kind not in self._logged
            self._logged.add(kind)
        if new:
            self.log.warning(self.failed_line, self.folder, err.strerror or err, kind)

    def saved(self) -> None:
        """A write succeeded: say so once if some had failed, and log the next failure again."""
        with self._lock:
            if not self._logged:
                return
            self._logged.clear()
        self.log.info(self.saved_line, self.folder)


class UnsavedReporter(FailureLog):
    """The history's writes (in ``history_dir``)."""

    def failed(self, err: OSError) -> str:
        """A write failed with ``err``: the line for the chat (logged if new in its kind)."""
        self.note(err)
        return unsaved_line(err, self.folder)


class ExportReporter(FailureLog):
    """Export chat's writes (in the server's root); the chat's line is the route's error,
    :func:`export_line`."""

    failed_line = (
        "chapyter-ext: chat export not written in %s: %s [%s]; failures of this kind are not "
        "logged again until an export is written"
    )
    saved_line = "chapyter-ext: chat exports written again in %s"


def export_line(path: str, err: OSError) -> str:
    """The one line the chat shows when the export of a chat could not be written at ``path``."""
    words = err.strerror or str(err) or "it could not be written"
    reason = _REASONS.get(err.errno or 0)
    said = f"{reason} ({words})" if reason else words
    return f"Could not write {path}: {said}; nothing was written."
