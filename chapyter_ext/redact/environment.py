"""The environment's secrets: which variables are secret by name (``is_secret_env_name``, also
the approval analysis's rule for code that reads one), the values of those, and of any other
long variable that is not a path, a path list or a plain URL; cached against the environment
as it is now, so a value changed in place is seen at once."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable

from .names import is_path, is_secret_name

# Environment variables that are long but never secret (paths, colours, prompts, the model's
# name: it is in every generated cell's provenance).
_HARMLESS_ENV_NAMES = frozenset(
    {
        "LS_COLORS", "LSCOLORS", "PS1", "PS2", "PROMPT_COMMAND",
        "CHAPYTER_MODEL", "CHAPYTER_SERVER_MODEL",
    }
)  # fmt: skip
# Variables that hold where things are, never a secret whatever their names say ("PWD" is the
# secret part "pwd"): their values are in every path, which would all read "<redacted>/data.csv".
_PATH_ENV_NAMES = frozenset(
    {"PWD", "OLDPWD", "HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "TMPDIR", "SHELL"}
)
_PATH_ENV_SUFFIXES = ("PATH", "_DIR", "_DIRS", "_HOME")
# A secret-named env value shorter than this would, replaced verbatim, mangle unrelated text.
_MIN_ENV_SECRET = 6
# Any other env value at least this long is treated as a possible secret unless it looks harmless.
_MIN_ENV_VALUE = 17


def _place_env_name(name: str) -> bool:
    """A variable that holds where things are or how the shell looks, whatever its name says."""
    return (
        name in _HARMLESS_ENV_NAMES or name in _PATH_ENV_NAMES or name.endswith(_PATH_ENV_SUFFIXES)
    )


def is_secret_env_name(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether environment variable ``name`` holds a secret by its name: a secret-looking name
    (:func:`~.names.is_secret_name`: ``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``) or
    one of ``extra`` (names, or shell-style patterns such as ``MYCORP_*``), but never a
    variable that says where things are (``PWD``, ``HOME``, ``*_DIR``, ``*PATH``)."""
    if not isinstance(name, str) or not name or _place_env_name(name):
        return False
    return is_secret_name(name) or any(fnmatch.fnmatchcase(name, p) for p in extra)


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
        if _place_env_name(name):
            continue
        if is_secret_env_name(name):
            # SECRETS_DIR=/run/secrets, GOOGLE_APPLICATION_CREDENTIALS=~/key.json: where a
            # secret is, not the secret.
            if len(value) >= _MIN_ENV_SECRET and not is_path(value):
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
