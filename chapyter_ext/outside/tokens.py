"""Outside-agent tokens: what an MCP client presents as ``Authorization: Bearer <token>``.

A token is made in the chat panel and shown once; only its SHA-256 is kept, in one JSON file
in the Jupyter data folder (``jupyter_data_dir()/chapyter-ext/outside_tokens.json``, mode
0600, replaced atomically), so a copy of the file opens nothing. A presented token is hashed
and compared in constant time. Tokens never reach a log, a kernel or a notebook.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from ..atomic_write import write_bytes
from ..contract.cells import utc_now_iso

__all__ = ["MAX_TOKENS", "TOKEN_PREFIX", "TokenStore", "default_token_file"]

#: What every token starts with, so a leaked one is recognisable (and redacted as a key).
TOKEN_PREFIX = "chx-"
#: The most tokens kept; one more is refused.
MAX_TOKENS = 50
MAX_NAME_CHARS = 80


def default_token_file() -> str:
    """``jupyter_data_dir()/chapyter-ext/outside_tokens.json``."""
    from jupyter_core.paths import jupyter_data_dir

    return os.path.join(jupyter_data_dir(), "chapyter-ext", "outside_tokens.json")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass
class _Entry:
    id: str
    name: str
    sha256: str
    created: str
    last_used: str | None = None

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "last_used": self.last_used,
        }


class TokenStore:
    """The tokens of this user, in one file (read on each change, so two servers agree)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or default_token_file()
        self._lock = threading.Lock()

    def _read(self) -> list[_Entry]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return []
        entries = []
        for item in data.get("tokens", []) if isinstance(data, dict) else []:
            try:
                entries.append(
                    _Entry(
                        str(item["id"]),
                        str(item["name"]),
                        str(item["sha256"]),
                        str(item["created"]),
                        item.get("last_used"),
                    )
                )
            except (KeyError, TypeError):
                continue
        return entries

    def _write(self, entries: list[_Entry]) -> None:
        folder = os.path.dirname(self.path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        # The atomic write keeps an existing file's mode: make it 0600 first.
        fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)
        data = {"tokens": [vars(entry) for entry in entries]}
        write_bytes(self.path, (json.dumps(data, indent=1) + "\n").encode("utf-8"))

    def list(self) -> list[dict[str, Any]]:
        """``[{"id", "name", "created", "last_used"}]``, never a secret."""
        with self._lock:
            return [entry.public() for entry in self._read()]

    def create(self, name: str) -> dict[str, Any]:
        """A new token: ``{"id", "name", "token"}`` (the secret, this once). ``ValueError``
        with one line for a bad name or too many tokens."""
        name = " ".join(str(name).split())
        if not name or len(name) > MAX_NAME_CHARS:
            raise ValueError(f"'name' must be 1 to {MAX_NAME_CHARS} characters.")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._lock:
            entries = self._read()
            if len(entries) >= MAX_TOKENS:
                raise ValueError(f"At most {MAX_TOKENS} tokens; revoke one first.")
            entry = _Entry(secrets.token_hex(8), name, _digest(token), utc_now_iso())
            self._write([*entries, entry])
        return {"id": entry.id, "name": entry.name, "token": token}

    def revoke(self, token_id: str) -> bool:
        """Forget a token; False when there was none with that id."""
        with self._lock:
            entries = self._read()
            kept = [entry for entry in entries if entry.id != token_id]
            if len(kept) == len(entries):
                return False
            self._write(kept)
            return True

    def check(self, token: str) -> str | None:
        """The name of the token ``token`` is, or None; compared in constant time."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        digest = _digest(token)
        with self._lock:
            entries = self._read()
            found = None
            for entry in entries:  # every entry compared: the time says nothing of which
                if hmac.compare_digest(entry.sha256, digest):
                    found = entry
            if found is None:
                return None
            now = utc_now_iso()
            # To the minute: a client's every request need not rewrite the file.
            if (found.last_used or "")[:16] != now[:16]:
                found.last_used = now
                with contextlib.suppress(OSError):
                    self._write(entries)
            return found.name
