"""Secrets never leave: anything that looks like one is replaced by ``<redacted>``.

Three kinds are recognised: verbatim strings (an explicitly passed API key, the values of secret
environment variables, the values held under secret-looking names), strings shaped like keys
(``sk-…``, ``ghp_…``, JWTs, PEM blocks, long random runs) and values recognised by what surrounds
them (``Bearer …``, ``api_key = "…"``, ``user:pw@host``).

Redaction runs over every piece of text that leaves, and nearly none of it holds a secret, so the
cost is in the text that has none: each pattern runs only when the text contains the literal it
needs (checked with ``in`` on the text's UTF-8 bytes), and each pattern starts with a literal,
which is what lets Python's ``re`` skip ahead instead of trying every position.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Iterable

REDACTED = "<redacted>"

# ---------------------------------------------------------------------------------------------
# Names


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Whole name parts (after splitting on "_" and camelCase) that mark a secret.
_SECRET_PARTS = _words(
    "auth authorization bearer cookie cookies credential credentials creds jwt oauth passwd "
    "password passwords pw pwd secret secrets token"
)
# Substrings of the joined name parts that mark a secret even inside a longer word.
_SECRET_SUBSTRINGS = (
    "accesskey",
    "accesstoken",
    "apikey",
    "authtoken",
    "bearertoken",
    "credential",
    "passphrase",
    "passwd",
    "password",
    "privatekey",
    "refreshtoken",
    "secret",
    "sessiontoken",
    "webhook",
)
# "<owner>_key" is a secret for these owners; a bare "key" (a dict key, a sort key) is not.
_KEY_OWNERS = _words(
    "access account anthropic api auth aws azure client cohere deepseek encryption gemini "
    "github google groq hf huggingface license master mistral openai openrouter pinecone "
    "private replicate secret service session signing ssh stripe together xai"
)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_SPLIT = re.compile(r"[^a-z0-9]+")


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    parts = [p for p in _NAME_SPLIT.split(_CAMEL_BOUNDARY.sub("_", name[:200]).lower()) if p]
    if not parts:
        return False
    if any(p in _SECRET_PARTS for p in parts):
        return True
    joined = "".join(parts)
    if any(s in joined for s in _SECRET_SUBSTRINGS):
        return True
    if any(b in ("key", "keys") and a in _KEY_OWNERS for a, b in zip(parts, parts[1:])):
        return True
    # Upper-case ``SOMETHING_KEY`` is how configuration keys are spelled (Django's SECRET_KEY...).
    return len(parts) > 1 and parts[-1] == "key" and name.isupper()


def is_secret_name(name: str) -> bool:
    """True if a variable, key or environment variable name looks like it holds a secret.

    Names are split into parts on ``_``/``-``/``.`` and camelCase. A part such as ``token``,
    ``password``, ``pwd``, ``auth`` or ``credentials``, a joined form such as ``apikey`` or
    ``secret`` anywhere, ``<owner>_key`` for owners such as ``api``, ``private`` or ``openai``, or
    an upper-case ``X_KEY`` mark a secret. ``author``, ``tokens``, ``max_tokens``, ``tokenizer``
    and a bare ``key`` do not.
    """
    # Cached: the same names (environment, namespace) are asked about on every request.
    return isinstance(name, str) and bool(name) and _secret_name(name)


# ---------------------------------------------------------------------------------------------
# Environment

# Environment variables that are long but never secret (paths, colours, prompts).
_HARMLESS_ENV_NAMES = frozenset({"LS_COLORS", "LSCOLORS", "PS1", "PS2", "PROMPT_COMMAND"})
# A secret-named env value shorter than this would, replaced verbatim, mangle unrelated text.
_MIN_ENV_SECRET = 6
# Any other env value at least this long is treated as a possible secret unless it looks harmless.
_MIN_ENV_VALUE = 17


def _harmless_env_value(value: str) -> bool:
    """Long environment values that are plainly not secrets: paths, path lists, plain URLs."""
    if any(c.isspace() for c in value):
        return True
    if value.startswith(("/", "~", "./", "../")) or re.match(r"[A-Za-z]:[\\/]", value):
        return True
    if os.pathsep in value and all(
        p.startswith(("/", "~", ".")) or re.match(r"[A-Za-z]:[\\/]", p)
        for p in value.split(os.pathsep)
        if p
    ):
        return True
    url = re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*://([^/?#@]*)(/[^?#]*)?", value)
    if url:
        # A webhook URL carries its secret in the path; a plain endpoint has short segments.
        return all(len(seg) < 20 for seg in (url.group(2) or "").split("/"))
    return False


def _secrets_of(environ: Iterable[tuple[str, str]]) -> frozenset[str]:
    found = set()
    for name, value in environ:
        if name in _HARMLESS_ENV_NAMES or name.endswith("PATH"):
            continue
        if is_secret_name(name):
            if len(value) >= _MIN_ENV_SECRET:
                found.add(value)
        elif len(value) >= _MIN_ENV_VALUE and not _harmless_env_value(value):
            found.add(value)
    return frozenset(found)


# (the environment it was computed from, its secrets)
_env_cache: tuple[dict, frozenset[str]] = ({}, frozenset())


def env_secrets() -> frozenset[str]:
    """The values of the environment that are treated as secrets, for the environment as it is now.

    Cached against a full copy of the environment, compared whole on every call: a key or value
    changed in place (``monkeypatch.setenv``, ``%env``, ``os.environ[k] = v``) is seen at once.
    Comparing ``os.environ``'s undecoded mapping costs a microsecond or two; a fingerprint such as
    the length or the names would miss a value changed in place and leak it.
    """
    global _env_cache
    # os._Environ keeps the raw (encoded) mapping in ``_data``; fall back to decoding it all.
    data = getattr(os.environ, "_data", None)
    snapshot = data if isinstance(data, dict) else dict(os.environ)
    cached_from, cached = _env_cache
    if snapshot == cached_from:
        return cached
    copy = dict(snapshot)  # before the values are read: a change in between is seen next time
    found = _secrets_of(os.environ.items())
    _env_cache = (copy, found)
    return found


# ---------------------------------------------------------------------------------------------
# Patterns
#
# Nearly all text holds no secret, so what counts is how fast a pattern gives up. Python's ``re``
# skips ahead quickly only to a literal prefix; from a character class or an alternation it
# tries every position, about ten times slower. So each pattern starts with a literal (a word
# boundary is written as a look-behind after it: ``sk-(?<!\wsk-)`` is ``\bsk-``), or runs only
# when ``in`` (memchr) finds a character or literal it cannot match without.

# Key-shaped strings, by a text that each of them contains (checked once for the group).
_TOKENS = (
    (
        "-----",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    ),
    # OpenAI (sk-, sk-proj-), Anthropic, OpenRouter; a digit rules out "sk-learn-…"
    ("-", r"sk-(?<!\wsk-)(?=[A-Za-z_\-]{0,200}\d)[A-Za-z0-9_\-]{16,}"),
    ("-", r"glpat-(?<!\wglpat-)[A-Za-z0-9_\-]{16,}"),  # GitLab
    ("-", r"xox[abposr]-(?<!\wxox[abposr]-)[A-Za-z0-9\-]{10,}"),  # Slack
    ("A", r"A[KS]IA(?<!\wA[KS]IA)[0-9A-Z]{16}\b"),  # AWS access key id
    ("A", r"AIza(?<!\wAIza)[0-9A-Za-z_\-]{30,}"),  # Google
    ("_", r"gh[pousr]_(?<!\wgh[pousr]_)[A-Za-z0-9]{20,}"),  # GitHub
    ("_", r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{20,}"),
    ("_", r"hf_(?<!\whf_)[A-Za-z0-9]{20,}"),  # Hugging Face
    ("k_live_", r"\b[rsp]k_live_[A-Za-z0-9]{10,}"),  # Stripe
    ("k_test_", r"\b[rsp]k_test_[A-Za-z0-9]{10,}"),
    ("J", r"eyJ(?<!\weyJ)[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}"),  # JWT
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
        for gate, regex in _TOKENS:
            self.tokens.setdefault(gate, []).append(re.compile(regex))
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


def _looks_random(s: str) -> bool:
    """True for key-like runs (random base64 or hex), false for identifiers, paths and words."""
    core = s.rstrip("=")
    if len(core) < 32:
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


def _redact_patterns(text: str) -> str:
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
# Redaction

# Explicitly passed secrets (the configured API key) are replaced from this length on.
_MIN_EXPLICIT_SECRET = 4
# Longer verbatim secrets are still replaced when whole, but do not widen the clipping window.
_MAX_MARGIN_SECRET = 4096


class Redactor:
    """Redaction with a fixed set of verbatim secrets: the environment's and the caller's.

    Built once per request and called on every piece of text. ``margin`` is how far past a
    clipping point text must be redacted so that a secret straddling the point is recognised
    whole before the cut.
    """

    __slots__ = ("margin", "secrets")

    def __init__(self, secrets: Iterable[object] = ()) -> None:
        found = set(env_secrets())
        for s in secrets:
            if isinstance(s, bytes):
                s = s.decode("utf-8", "replace")
            if isinstance(s, str) and len(s) >= _MIN_EXPLICIT_SECRET and s != REDACTED:
                found.add(s)
        # Longest first, so that a secret containing another is replaced whole.
        self.secrets = sorted(found, key=len, reverse=True)
        longest = max((len(s) for s in self.secrets if len(s) <= _MAX_MARGIN_SECRET), default=0)
        self.margin = 256 + longest

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for s in self.secrets:
            if s in text:
                text = text.replace(s, REDACTED)
        if len(text) < 6:
            return text
        return _redact_patterns(text)


def redact(text: str, *, secrets: Iterable[str] = ()) -> str:
    """Replace secrets in ``text`` with ``<redacted>``.

    Replaced: every string in ``secrets`` (4+ characters); the values of environment variables
    whose names look secret (see ``is_secret_name``; 6+ characters) and of any other environment
    variable of 17+ characters that is not a path, a path list, a plain URL or text with spaces;
    strings shaped like API keys (``sk-…``, ``sk-proj-…``, ``AKIA…``, ``ghp_…``,
    ``github_pat_…``, ``glpat-…``, ``xox[abposr]-…``, ``AIza…``, ``hf_…``, Stripe keys, JWTs,
    PEM private keys); the token after ``Bearer``; the password in ``scheme://user:pw@host``;
    secret query parameters; quoted values assigned to secret-looking names (``api_key = "…"``,
    ``"password": "…"``, ``os.environ["X_TOKEN"] = "…"``); ``SECRET_NAME=value``; and long
    random-looking base64 or hex runs (32+ characters). Shorter verbatim secrets are not
    searched for, because replacing them everywhere would mangle unrelated text.
    """
    return Redactor(secrets)(text)


def secret_values(variables: Iterable[tuple[str, object]]) -> list[str]:
    """Strings held under secret-looking names (variables, their items, their attributes).

    Each is then a verbatim secret, replaced wherever else it appears: ``creds = ("bob", pw)``
    makes ``pw`` secret in every other variable, cell and error too.
    """
    found: list[str] = []

    def take(value, depth=0):
        if isinstance(value, (str, bytes)):
            found.append(value if isinstance(value, str) else value.decode("utf-8", "replace"))
        elif depth < 1 and isinstance(value, (list, tuple, set, frozenset)):
            for item in itertools.islice(value, 20):
                take(item, depth + 1)
        elif depth < 1 and isinstance(value, dict):
            for item in itertools.islice(value.values(), 20):
                take(item, depth + 1)

    for name, value in variables:
        try:
            if is_secret_name(name):
                take(value)
                continue
            attrs = value if isinstance(value, dict) else None
            # Only instances whose type gives them a __dict__ (not str, list, ndarray...): asking
            # the others would raise (and catch) an exception each time.
            if attrs is None and type(value).__dictoffset__ and not isinstance(value, type):
                attrs = getattr(value, "__dict__", None)
            if isinstance(attrs, dict):
                for k, v in itertools.islice(attrs.items(), 50):
                    if isinstance(k, str) and is_secret_name(k):
                        take(v, 1)
        except Exception:  # odd objects only lose this extra protection
            continue
    return found


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
