"""The error ``%%ai`` and ``%ai`` show as one line."""

from __future__ import annotations

__all__ = ["ChapyterError"]


class ChapyterError(Exception):
    """A failure shown to the user as one line, without a traceback."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of formatting a traceback: the user sees one clear line.
        return [f"\x1b[31mchapyter-ext:\x1b[0m {self}"]
