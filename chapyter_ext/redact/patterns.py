"""Secrets by shape and by what surrounds them: key-shaped strings (``sk-…``, ``ghp_…``, JWTs,
PEM blocks, long random runs) and values after ``Bearer``, in ``user:pw@host``, in a secret
query parameter, or assigned to a secret-looking name (``api_key = "…"``, ``TOKEN=…``)."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from .names import REDACTED, is_path, is_secret_name

# Nearly all text holds no secret, so what counts is how fast a pattern gives up. Python's ``re``
# skips ahead quickly only to a literal prefix; from a character class or an alternation it
# tries every position, about ten times slower. So each pattern starts with a literal (a word
# boundary is written as a look-behind after it: ``sk-(?<!\wsk-)`` is ``\bsk-``), or runs only
# when ``in`` (memchr) finds a character or literal it cannot match without.


class KeyShape(NamedTuple):
    """A key format a service publishes: what it is, a text every match contains (``gate``,
    checked with ``in`` before the regex runs), the regex, and how many of a match's first
    characters are the public prefix (``sk-``, ``ghp_``; -1: a PEM block's header)."""

    kind: str
    gate: str
    regex: str
    prefix: int


#: Key-shaped strings: the one list, redacted from what leaves (``redact_patterns``) and found
#: in a notebook's outputs by ``chapyter-ext check`` (:func:`find_secrets`).
KEY_SHAPES = (
    KeyShape(
        "private key block",
        "-----",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        -1,
    ),
    # OpenAI (sk-, sk-proj-), Anthropic, OpenRouter; a digit rules out "sk-learn-…"
    KeyShape("API key", "-", r"sk-(?<!\wsk-)(?=[A-Za-z_\-]{0,200}\d)[A-Za-z0-9_\-]{16,}", 3),
    KeyShape("GitLab token", "-", r"glpat-(?<!\wglpat-)[A-Za-z0-9_\-]{16,}", 6),
    KeyShape("Slack token", "-", r"xox[abposr]-(?<!\wxox[abposr]-)[A-Za-z0-9\-]{10,}", 5),
    KeyShape("AWS access key id", "A", r"A[KS]IA(?<!\wA[KS]IA)[0-9A-Z]{16}\b", 4),
    KeyShape("Google API key", "A", r"AIza(?<!\wAIza)[0-9A-Za-z_\-]{30,}", 4),
    KeyShape("GitHub token", "_", r"gh[pousr]_(?<!\wgh[pousr]_)[A-Za-z0-9]{20,}", 4),
    KeyShape("GitHub token", "_", r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{20,}", 11),
    KeyShape("Hugging Face token", "_", r"hf_(?<!\whf_)[A-Za-z0-9]{20,}", 3),
    KeyShape("Stripe key", "k_live_", r"\b[rsp]k_live_[A-Za-z0-9]{10,}", 8),
    KeyShape("Stripe key", "k_test_", r"\b[rsp]k_test_[A-Za-z0-9]{10,}", 8),
    KeyShape(
        "JWT",
        "J",
        r"eyJ(?<!\weyJ)[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}",
        3,
    ),
)
# The characters of a long random-looking run (base64, hex), as a byte table: a text has a run
# of 32 exactly when its translation has 32 ones in a row.
_RUN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_RUN_TABLE = bytes(1 if chr(b) in _RUN_CHARS else 0 for b in range(256))
_RUN_32 = b"\x01" * 32


class _Patterns:
    """Compiled on first use: compiling all of them costs more than importing the module."""

    def __init__(self) -> None:
        self.tokens: dict[str, list[re.Pattern[str]]] = {}
        self.shapes: dict[str, list[tuple[KeyShape, re.Pattern[str]]]] = {}
        for shape in KEY_SHAPES:
            compiled = re.compile(shape.regex)
            self.tokens.setdefault(shape.gate, []).append(compiled)
            self.shapes.setdefault(shape.gate, []).append((shape, compiled))
        # "Authorization: Bearer <token>", curl -H "...", requests headers
        self.bearer = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*")
        # scheme://user:password@host (any scheme-like run before "://")
        self.userinfo = re.compile(r"://(?<=[A-Za-z0-9+.\-]://)([^\s:/@'\"]+:)[^\s@/'\"]+@")
        # ?api_key=...&token=...
        self.query = re.compile(
            r"([?&](?i:api[_-]?key|key|token|access[_-]?token|secret|password|sig|signature"
            r"|auth)=)[^&\s'\"#]+"
        )
        # The operator and quoted value of ``name = "…"``, ``"name": '…'``, ``f(name="…")``;
        # the name before it is read backwards (see ``_sub_assignments``).
        self.quoted = re.compile(r"(?:==|=|:)\s*[rRbBuU]{0,2}([\"'])([^\"'\n\s,][^\"'\n]*)\1")
        self.quoted_name = re.compile(r"\s*\]?[\"']?([A-Za-z0-9_.\-]+)")  # on reversed text
        # NAME=value in .env text and shell lines
        self.env = re.compile(r"=([^\s\"']+)")
        self.env_name = re.compile(r"([A-Z0-9_]+)")  # on reversed text
        # %env NAME value
        self.env_magic = re.compile(r"(%env\s+)([A-Za-z_]\w*)(\s+)(\S+)")
        # long random-looking runs: base64 / hex keys with no known prefix
        self.random = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{32,}={0,2}")
        # A value assigned to a name, quoted or not (``token: 9f…``, ``"api_key": "…"``),
        # for ``find_secrets`` (the name is read backwards by ``quoted_name``).
        self.assigned = re.compile(
            r"(?:==|=|:)[ \t]*(?:[rRbBuU]{1,2}(?=[\"']))?[\"']?([A-Za-z0-9+/_\-.~]{16,}=*)"
        )


@functools.lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"  # what ``\w`` and ``\b`` mean for str patterns


def _search_at_ops(value: re.Pattern[str], text: str, ops: str, pos: int):
    """``value.search(text, pos)`` for a ``value`` that starts with "=" or ":" (``ops``)."""
    while (i := ops.find("=", pos)) >= 0:
        m = value.match(text, i)
        if m is not None:
            return m
        pos = i + 1
    return None


def _sub_assignments(text, value: re.Pattern[str], name: re.Pattern[str], first: str, replace):
    r"""Replace ``<name><value>`` matches, finding each value first and its name backwards.

    Gives the matches of the forward regex ``\b(?=[first])<name chars>*<glue><value>``, but it
    tries only the text's "=" and ":" (found with ``str.find``) where the forward regex would try
    every word of the text, ten times slower. ``name`` matches the reversed text from the value's
    start: the glue, then the name's characters in group 1. ``replace(name, match)`` returns the
    replacement of the value match, or None to keep it.
    """
    n = len(text)
    rev = text[::-1]
    ops = text.replace(":", "=")  # the same positions: one ``find`` finds either operator
    out: list[str] = []
    done = pos = 0
    floor = 0  # where the last match ended: a name cannot start before it
    while (m := _search_at_ops(value, text, ops, pos)) is not None:
        run = name.match(rev, n - m.start(), n - floor)
        if run is not None:
            lo, hi = n - run.end(1), n - run.start(1)
            # The name starts at the first word boundary of the run where it can start.
            start = next(
                (
                    i
                    for i in range(lo, hi)
                    if text[i] in first and (i == 0 or not _is_word(text[i - 1]))
                ),
                None,
            )
            if start is not None:
                new = replace(text[start:hi], m)
                if new is not None:
                    out += (text[done : m.start()], new)
                    done = m.end()
                pos = floor = m.end()  # a match, even one kept, is not searched again
                continue
        pos = m.start() + 1
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


_NAME_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_ENV_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _redact_quoted(name: str, m: re.Match[str]) -> str | None:
    if not is_secret_name(name.rsplit(".", 1)[-1]):
        return None
    return f"{m.string[m.start() : m.start(2)]}{REDACTED}{m.group(1)}"


def _redact_env_assignment(name: str, m: re.Match[str]) -> str | None:
    if not is_secret_name(name) or m.group(1).startswith(REDACTED):
        return None
    return "=" + REDACTED


def _redact_env_magic(m: re.Match[str]) -> str:
    if not is_secret_name(m.group(2)):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}"


def _looks_random(s: str, minimum: int = 32) -> bool:
    """True for key-like runs (random base64 or hex) of ``minimum`` characters or more, false
    for identifiers, paths and words."""
    core = s.rstrip("=")
    if len(core) < minimum:
        return False
    digits = sum(c.isdigit() for c in core)
    if not digits:
        return False
    if all(c in "0123456789abcdefABCDEF" for c in core):
        return digits < len(core)  # hex with letters: hashes, keys; not a long number
    upper = sum(c.isupper() for c in core)
    lower = sum(c.islower() for c in core)
    letters = upper + lower
    if letters < len(core) // 2 or not 0.2 <= upper / letters <= 0.8:
        return False
    # Random base64 has short lowercase runs (~1.7 on average); camelCase words have long ones.
    runs = [len(r) for r in re.findall(r"[a-z]+", core)]
    return sum(runs) / len(runs) < 3.0 if runs else True


def _redact_random(m: re.Match[str]) -> str:
    return REDACTED if _looks_random(m.group(0)) else m.group(0)


def redact_patterns(text: str) -> str:
    p = _patterns()
    for gate, regexes in p.tokens.items():
        if gate in text:
            for regex in regexes:
                text = regex.sub(REDACTED, text)
    raw = text.encode("utf-8", "surrogatepass")
    if b"bearer" in raw.lower():
        text = p.bearer.sub(r"\1" + REDACTED, text)
    if "://" in text:
        text = p.userinfo.sub(r"://\1" + REDACTED + "@", text)
    has_eq = "=" in text
    if has_eq and ("?" in text or "&" in text):
        text = p.query.sub(r"\1" + REDACTED, text)
    if (has_eq or ":" in text) and ("'" in text or '"' in text):
        text = _sub_assignments(text, p.quoted, p.quoted_name, _NAME_FIRST, _redact_quoted)
    if has_eq:
        text = _sub_assignments(text, p.env, p.env_name, _ENV_FIRST, _redact_env_assignment)
    if "%env" in text:
        text = p.env_magic.sub(_redact_env_magic, text)
    # A replacement ("<redacted>") never makes a run: the check on the text before them holds.
    if _RUN_32 in raw.translate(_RUN_TABLE):
        text = p.random.sub(_redact_random, text)
    return text


# ---------------------------------------------------------------------------------------------
# Finding secrets without replacing them: ``chapyter-ext check`` on a notebook's outputs

#: Values under a secret-looking name are looked at from this length on (``pad_token``'s
#: ``"</s>"`` and a password's ``"hunter2"`` are not key material; a token is longer).
MIN_NAMED_SECRET = 16


class FoundSecret(NamedTuple):
    """A secret in a text (:func:`find_secrets`): what it is, where it is, and how a report
    may name it without showing it (``sk-…(51 chars)``)."""

    kind: str
    start: int
    end: int
    shown: str


def _masked(value: str, prefix: int) -> str:
    """``sk-…(51 chars)``: the public prefix (a PEM block's header) and the length only."""
    head = value[: value.find("KEY-----") + 8] if prefix < 0 else value[:prefix]
    return f"{head}…({len(value)} chars)"


_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def _random_value(value: str) -> bool:
    """A value that reads as key material: random base64 or hex (``_looks_random``), or
    lower-case letters and digits in short runs (base 36); not words, a path or a UUID (an
    id, in every other output)."""
    core = value.rstrip("=")
    if len(core) < MIN_NAMED_SECRET or is_path(core) or _UUID.fullmatch(core):
        return False
    if _looks_random(core, MIN_NAMED_SECRET):
        return True
    digits = sum(c.isdigit() for c in core)
    runs = [len(r) for r in re.findall(r"[a-z]+", core)]
    return (
        core.lower() == core
        and digits * 6 >= len(core)
        and bool(runs)
        and sum(runs) / len(runs) < 4.0
    )


def find_secrets(text: str) -> list[FoundSecret]:
    """The secrets in ``text``, in order, each once: key-shaped strings (:data:`KEY_SHAPES`),
    and values that read as key material given to a secret-looking name (``api_key = "…"``,
    ``"token": "…"``, ``PASSWORD=…``, ``?token=…``, ``Bearer …``; see
    :func:`~.names.is_secret_name`: a bare ``key`` is not one). Hex digests and UUIDs under
    other names are not secrets."""
    p = _patterns()
    found: list[FoundSecret] = []
    for gate, shapes in p.shapes.items():
        if gate in text:
            for shape, regex in shapes:
                for m in regex.finditer(text):
                    found.append(
                        FoundSecret(shape.kind, m.start(), m.end(), _masked(m[0], shape.prefix))
                    )

    def named(kind: str, start: int, value: str, shown: str) -> None:
        if _random_value(value):
            end = start + len(value)
            found.append(FoundSecret(kind, start, end, f"{shown}…({len(value)} chars)"))

    def assigned(name: str, m: re.Match[str]) -> None:
        name = name.rsplit(".", 1)[-1]
        if is_secret_name(name):
            named("key-like value", m.start(1), m[1], f"{name} = ")
        return None

    if "=" in text or ":" in text:
        _sub_assignments(text, p.assigned, p.quoted_name, _NAME_FIRST, assigned)
    if "=" in text and ("?" in text or "&" in text):
        for m in p.query.finditer(text):
            name = m[1].strip("?&=")
            named("key-like value", m.end(1), m[0][len(m[1]) :], f"{name}=")
    if "earer" in text:
        for m in p.bearer.finditer(text):
            named("bearer token", m.end(1), m[0][len(m[1]) :], "Bearer ")
    kept: list[FoundSecret] = []
    for secret in found:  # the shapes first: ``OPENAI_API_KEY=sk-…`` is one key
        if not any(k.start < secret.end and secret.start < k.end for k in kept):
            kept.append(secret)
    return sorted(kept, key=lambda s: s.start)
