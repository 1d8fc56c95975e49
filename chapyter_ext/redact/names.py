"""Secrets by name: which names mark one (``is_secret_name``), the strings held under them in a
namespace (``secret_values``), the files that hold credentials (``is_secret_file``), and what
is never one whatever its name says: a path (``is_path``; ``PWD`` holds the secret-looking part
"pwd", yet its value is in every path). And ``REDACTED``, what every secret becomes."""

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
# Files that hold secrets

# Files and folders that hold credentials, as whole parts of a path: dotenv files, netrc, git's,
# pip's and databases' stored passwords, SSH keys, the folders of cloud, cluster and container
# logins (and a pair of parts: ``~/.config/gcloud``, mounted ``/run/secrets``).
_SECRET_PATH_PARTS = _words(
    ".env .envrc .netrc _netrc .git-credentials .pypirc .pgpass .my.cnf .npmrc .s3cfg .boto "
    ".dockercfg .databrickscfg .vault-token .password-store .ssh .aws .azure .gnupg .kube "
    ".docker .kaggle id_rsa id_dsa id_ecdsa id_ed25519 id_ecdsa_sk id_ed25519_sk"
)
_SECRET_PAIRS = {
    ".config": _words("gcloud gh hub rclone"),
    "huggingface": _words("token tokens stored_token stored_tokens"),
    "run": _words("secrets"),
}
# Key stores and dotenv files by their extension; ``.env.local`` but not a committed template.
_SECRET_EXTENSIONS = (".env", ".p12", ".pfx", ".jks", ".keystore", ".key")
_TEMPLATES = _words("example sample template dist default defaults")
_FILE_NAME = re.compile(r"[\w.-]+")
# A file named for what it holds (``credentials.json``, ``token.pickle``, ``secrets.toml``,
# ``client_secret_….json``, ``passwords.txt``): a secret name before the first dot, with the
# extension of a configuration, text or key file (a table, ``passwords.csv``, is data).
_NAMED_FILE = re.compile(
    r"([\w-]+)(?:\.[\w-]+)*\.(?:json|toml|ya?ml|ini|cfg|conf|txt|pem|pickle|pkl)"
)


def is_secret_file(path: str) -> bool:
    """Whether ``path`` (a path as code spells it, or a part of one; NUL stands for a part
    known only at run time) names a file or folder that holds credentials: ``.env``,
    ``~/.aws/credentials``, ``~/.ssh/id_rsa``, ``.netrc``, ``~/.config/gcloud``,
    ``~/.kube/config``, ``~/.docker/config.json``, ``.git-credentials``, ``.pypirc``,
    ``credentials.json``... Not ``.env.example`` (a committed template), nor text that only
    mentions one ("put it in .env")."""
    # Every name above has a dot, a separator or "id_"/"_netrc" in it: most strings have none.
    if len(path) > 4096 or not (
        "." in path or "/" in path or "\x00" in path or "\\" in path or "_" in path[:3]
    ):
        return False
    parts = path.replace("\\", "/").replace("\x00", "/").split("/")
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if part in _SECRET_PATH_PARTS:
            return True
        pair = _SECRET_PAIRS.get(part)
        if pair is not None and i < last and parts[i + 1] in pair:
            return True
        if "." in part and _FILE_NAME.fullmatch(part) and _secret_file_name(part, i == last):
            return True
    return False


def _secret_file_name(name: str, last: bool) -> bool:
    if name.startswith(".env."):
        return not _TEMPLATES.intersection(name[5:].split("."))
    if name.endswith(_SECRET_EXTENSIONS) or (
        name.startswith(("service_account", "service-account")) and name.endswith(".json")
    ):
        return True
    named = _NAMED_FILE.fullmatch(name) if last else None
    return named is not None and is_secret_name(named.group(1))


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
