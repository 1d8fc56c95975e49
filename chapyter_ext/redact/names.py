"""Secrets by name: which names mark one (``is_secret_name``), the strings held under them in a
namespace (``secret_values``), and what is never one whatever its name says: a path
(``is_path``; ``PWD`` holds the secret-looking part "pwd", yet its value is in every path).
And ``REDACTED``, what every secret becomes."""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Iterable

#: What every secret becomes.
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
# Places

# An absolute path of two names or more: "/run/secrets", "~/key.json", "C:\\Users\\me" (a
# password may well start with "/", but hardly holds a second one).
ABSOLUTE_PATH = re.compile(r"(?:/[\w.@+\-]+|~|[A-Za-z]:)(?:[\\/][\w.@+\-]*)+")


def is_path(value: str) -> bool:
    """Whether ``value`` names a place on disk rather than holding a secret: an absolute path of
    two names or more, or a path (with a separator) that exists."""
    if not value or len(value) > 4096 or any(c in value for c in "\n\0"):
        return False
    if ABSOLUTE_PATH.fullmatch(value):
        return True
    if "/" not in value and os.sep not in value:
        return False
    try:
        return os.path.exists(os.path.expanduser(value))
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# Values held under secret names


def secret_values(variables: Iterable[tuple[str, object]]) -> list[str]:
    """Strings held under secret-looking names (variables, their items, their attributes).

    Each is then a verbatim secret, replaced wherever else it appears: ``creds = ("bob", pw)``
    makes ``pw`` secret in every other variable, cell and error too. Paths are not
    (``pwd = os.getcwd()``): replaced, every path shown would read ``<redacted>/data.csv``.
    """
    found: list[str] = []

    def take(value, depth=0):
        if isinstance(value, (str, bytes)):
            text = value if isinstance(value, str) else value.decode("utf-8", "replace")
            if not is_path(text):  # ``pwd = os.getcwd()``: a place, in every path shown
                found.append(text)
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
