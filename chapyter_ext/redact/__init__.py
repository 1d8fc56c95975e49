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

Layout, bottom up: :mod:`.names` (secret names, the values held under them, paths, ``REDACTED``),
:mod:`.environment` (the environment's secrets), :mod:`.patterns` (secrets by shape and
surroundings), :mod:`.fragments` (parts of known keys), :mod:`.redactor` (:class:`Redactor`,
:func:`redact`, error lines and tracebacks), :mod:`.streams` (:class:`TokenRedactor`).
"""

from __future__ import annotations

from .environment import env_secrets
from .names import REDACTED, is_secret_name, secret_values
from .redactor import MAX_LINE, Redactor, one_line, redact, redact_traceback
from .streams import TokenRedactor, hold_secret_starts

__all__ = [
    "MAX_LINE",
    "REDACTED",
    "Redactor",
    "TokenRedactor",
    "env_secrets",
    "hold_secret_starts",
    "is_secret_name",
    "one_line",
    "redact",
    "redact_traceback",
    "secret_values",
]
