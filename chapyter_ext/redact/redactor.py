"""The one redaction: verbatim secrets (the caller's and the environment's), the parts of known
keys, then the patterns; and the error lines and logs that go out through it."""

from __future__ import annotations

from collections.abc import Iterable

from .environment import env_secrets
from .fragments import MAX_MARGIN_SECRET, key_core, needles, redact_fragments
from .names import REDACTED
from .patterns import redact_patterns

# Explicitly passed secrets (the configured API key) are replaced from this length on.
_MIN_EXPLICIT_SECRET = 4


class Redactor:
    """Redaction with a fixed set of verbatim secrets: the environment's and the caller's.

    Built once per request and called on every piece of text. ``margin`` is how far past a
    clipping point text must be redacted so that a secret straddling the point is recognised
    whole before the cut. The caller's secrets that look like keys are redacted in part too
    (see :mod:`.fragments`). :meth:`known` is the narrow form, for text the user keeps (a
    notebook's outputs): the caller's secrets only, whole and in part.
    """

    __slots__ = ("_given", "_needles", "_pieces", "margin", "secrets")

    def __init__(self, secrets: Iterable[object] = ()) -> None:
        given: set[str] = set()
        pieces: dict[str, list[tuple[str, int, int]]] = {}
        for s in secrets:
            if isinstance(s, bytes):
                s = s.decode("utf-8", "replace")
            if isinstance(s, str) and len(s) >= _MIN_EXPLICIT_SECRET and s != REDACTED:
                s = str(s)  # a settings value may be a str subclass that hides its repr
                given.add(s)
                core = key_core(s)
                if core >= 0:
                    for needle, q in needles(s, core):
                        pieces.setdefault(needle, []).append((s, q, core))
        # Longest first, so that a secret containing another is replaced whole.
        self.secrets = sorted(given | env_secrets(), key=len, reverse=True)
        self._given = sorted(given, key=len, reverse=True)
        self._pieces = pieces
        self._needles = tuple(pieces)
        longest = max((len(s) for s in self.secrets if len(s) <= MAX_MARGIN_SECRET), default=0)
        self.margin = 256 + longest

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for s in self.secrets:
            if s in text:
                text = text.replace(s, REDACTED)
        if len(text) < 6:
            return text
        # One pass in C over the needles; a hit (rare) is then looked at closely.
        if self._needles and any(map(text.__contains__, self._needles)):
            text = redact_fragments(text, self._pieces)
        return redact_patterns(text)

    def known(self, text: str, marker: str = REDACTED) -> str:
        """``text`` with the caller's secrets replaced by ``marker``, whole and in part, and
        nothing else.

        For text that is the user's own and stays theirs, a notebook's outputs: the
        environment's values and the shapes :meth:`__call__` also replaces (hashes, ids, any
        ``sk-…``) are what outputs legitimately show, and are left as they are. ``marker``:
        ``<redacted>`` as markup shows it, where the text is HTML or Markdown.
        """
        if not text:
            return text
        for s in self._given:
            if s in text:
                text = text.replace(s, marker)
        if self._needles and len(text) >= 6 and any(map(text.__contains__, self._needles)):
            text = redact_fragments(text, self._pieces, marker)
        return text


def redact(text: str, *, secrets: Iterable[str] = ()) -> str:
    """Replace secrets in ``text`` with ``<redacted>``.

    Replaced: every string in ``secrets`` (4+ characters), and any run of 8+ of its characters
    past a public prefix such as ``sk-proj-`` when it looks like a key (20+ characters without
    spaces, not a path or URL; the run holds a digit or both cases; an eighth of the key for
    keys over 64 characters); the values of environment variables whose names look secret
    (see ``is_secret_name``; 6+ characters; not a path, and never ``PWD``, ``HOME``,
    ``*_DIR``, ``*PATH`` and the like) and of any other environment variable of 17+
    characters that is not a path, a path list, a plain URL or text with spaces; strings
    shaped like API keys (``sk-…``, ``sk-proj-…``, ``AKIA…``, ``ghp_…``, ``github_pat_…``,
    ``glpat-…``, ``xox[abposr]-…``, ``AIza…``, ``hf_…``, Stripe keys, JWTs, PEM private keys);
    the token after ``Bearer``; the password in ``scheme://user:pw@host``; secret query
    parameters; quoted values assigned to secret-looking names (``api_key = "…"``,
    ``"password": "…"``, ``os.environ["X_TOKEN"] = "…"``); ``SECRET_NAME=value``; and long
    random-looking base64 or hex runs (32+ characters). Shorter verbatim secrets are not
    searched for, because replacing them everywhere would mangle unrelated text.
    """
    return Redactor(secrets)(text)


# ---------------------------------------------------------------------------------------------
# Error lines and logs

MAX_LINE = 500


def one_line(text: object, redactor: Redactor) -> str:
    """``text`` as one redacted line of at most 500 characters: an error event, a log line.

    Redacted before it is clipped, so a secret straddling the cut is still recognised whole.
    """
    line = " ".join(redactor(str(text)).split())
    return line[:MAX_LINE] or "Unknown error."


def redact_traceback(err: BaseException, redactor: Redactor) -> str:
    """The traceback of ``err`` for a log, with every secret replaced."""
    import traceback  # only ever needed on an error path

    return redactor("".join(traceback.format_exception(type(err), err, err.__traceback__)))
