"""Secrets never leave: anything that looks like one is replaced by ``<redacted>``.

Three kinds are recognised: verbatim strings (an explicitly passed API key, the values of secret
environment variables, the values held under secret-looking names), strings shaped like keys
(``sk-…``, ``ghp_…``, JWTs, PEM blocks, long random runs) and values recognised by what surrounds
them (``Bearer …``, ``api_key = "…"``, ``user:pw@host``). A known key is redacted in part too
(its last 8 characters, the key without ``sk-``): see :mod:`.fragments`. Paths are never secrets
(``PWD`` holds the secret-looking part "pwd", yet its value is in every path).

Redaction runs over every piece of text that leaves, and nearly none of it holds a secret, so the
cost is in the text that has none: each pattern runs only when the text contains the literal it
needs (checked with ``in`` on the text's UTF-8 bytes), and each pattern starts with a literal,
which is what lets Python's ``re`` skip ahead instead of trying every position; the parts of a
known key are found with a few ``str.find`` calls, never a regex. :class:`TokenRedactor` is the
same policy for text that arrives in pieces (streamed replies).

What counts as a secret is decided here once and read elsewhere too: the approval analysis
(:mod:`chapyter_ext.policy`) asks before code reads a secret-named environment variable
(:func:`is_secret_env_name`) or a credentials file (:func:`is_secret_file`), and
``chapyter-ext check`` finds secrets in a notebook's outputs (:func:`find_secrets`, over
:data:`KEY_SHAPES`, the shapes the redactor replaces).

Layout, bottom up: :mod:`.names` (secret names, the values held under them, credentials files,
paths, ``REDACTED``), :mod:`.environment` (the environment's secrets, secret variable names),
:mod:`.patterns` (secrets by shape and surroundings: replaced, or found), :mod:`.fragments`
(parts of known keys), :mod:`.redactor` (:class:`Redactor`, :func:`redact`, error lines and
tracebacks), :mod:`.streams` (:class:`TokenRedactor`),
:mod:`.notebook` (:func:`redact_outputs`: a notebook's outputs before it is written).
"""

from __future__ import annotations

from typing import Any

from .environment import env_secrets, is_secret_env_name
from .names import REDACTED, is_secret_file, is_secret_name, secret_values
from .patterns import KEY_SHAPES, FoundSecret, KeyShape, find_secrets
from .redactor import MAX_LINE, Redactor, one_line, redact, redact_traceback
from .streams import TokenRedactor, hold_secret_starts

__all__ = [
    "KEY_SHAPES",
    "MAX_LINE",
    "REDACTED",
    "REDACTED_MARKUP",
    "CleanValues",
    "FoundSecret",
    "KeyShape",
    "OutputRedaction",
    "Redactor",
    "TokenRedactor",
    "env_secrets",
    "find_secrets",
    "hold_secret_starts",
    "is_secret_env_name",
    "is_secret_file",
    "is_secret_name",
    "one_line",
    "redact",
    "redact_outputs",
    "redact_traceback",
    "secret_values",
]

#: What :mod:`.notebook` gives, imported when first asked for (it needs ``dataclasses``, and
#: so ``inspect``: importing the extension stays light).
_NOTEBOOK = frozenset({"REDACTED_MARKUP", "CleanValues", "OutputRedaction", "redact_outputs"})


def __getattr__(name: str) -> Any:
    if name in _NOTEBOOK:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
