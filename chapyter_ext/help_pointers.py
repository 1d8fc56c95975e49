"""Where a one-line failure tells the user to look, in words: a path like
``README.md#endpoints`` cannot be clicked in a notebook's output or the chat, and the README
may not be on the user's machine at all (a pip install), so each pointer says what to do and
names the section of the docs that has more."""

from __future__ import annotations

__all__ = ["ENDPOINTS_HINT"]

#: How to get a capable model, said at the end of the bundled model's "could not" lines.
ENDPOINTS_HINT = (
    "set OPENAI_API_KEY and CHAPYTER_MODEL, or OPENAI_BASE_URL for a local server, and "
    "restart JupyterLab; the README's section Endpoints has more"
)
